/* SPDX-License-Identifier: BSD-2-Clause
 * fid_fabric: a handle on one simulated fabric (a world). */
#include <stdlib.h>
#include <string.h>

#include <fabsim/fi_stubs.h>

#include "sim.h"

static int fabric_close(struct fid *fid)
{
	struct sim_fabric *fab = container_of(fid, struct sim_fabric, fabric_fid.fid);

	if (fab->domains || fab->children) {
		FI_WARN(&sim_prov, FI_LOG_FABRIC,
			"fi_close(fabric): %d domain(s) and %d EQ(s) or passive "
			"endpoint(s) still open\n", fab->domains, fab->children);
		return -FI_EBUSY;
	}
	sim_world_put(fab->world);
	free(fab);
	return 0;
}

/* fi_trywait(3): 0 when the application may block on the wait objects,
 * -FI_EAGAIN when something is (or becomes) ready first. Simulated time
 * moves here: nothing else could move it while the application sleeps. */
static int fabric_trywait(struct fid_fabric *fabric, struct fid **fids,
			  int count);

static struct fi_ops fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = fabric_close,
	.bind = fabsim_no_bind,
	.control = fabsim_no_control,
	.ops_open = fabsim_no_ops_open,
	.tostr = fabsim_no_tostr,
	.ops_set = fabsim_no_ops_set,
};

static struct fi_ops_fabric fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = sim_domain_open,
	.passive_ep = sim_pep_open,
	.eq_open = sim_eq_open,
	.wait_open = fabsim_no_wait_open,
	.trywait = fabric_trywait,
	.domain2 = fabsim_no_domain2,
};

struct trywait_set {
	struct fid **fids;
	int          count;
};

static bool any_ready(void *ctx)
{
	const struct trywait_set *set = ctx;

	for (int i = 0; i < set->count; i++) {
		struct fid *fid = set->fids[i];

		if (fid->fclass == FI_CLASS_CQ) {
			struct sim_cq *cq = container_of(fid, struct sim_cq,
							 cq_fid.fid);

			if (cq->count || cq->errs)
				return true;
		} else if (fid->fclass == FI_CLASS_CNTR) {
			/* Counters wait on thresholds the application keeps:
			 * it must poll them. */
			return true;
		}
	}
	return false;
}

/* Shared fabrics: the caller may block on the descriptors of the set now.
 * Those of objects with nothing to read are made unreadable (a wake-up
 * that found nothing is over) and armed: the world's next work makes them
 * readable again (sim_waitfd.c). */
static void arm(struct sim_world *world, const struct trywait_set *set)
{
	for (int i = 0; i < set->count; i++) {
		struct fid *fid = set->fids[i];
		int fd = -1;

		if (fid->fclass == FI_CLASS_CQ) {
			struct sim_cq *cq = container_of(fid, struct sim_cq,
							 cq_fid.fid);

			fd = cq->wait_fd;
			if (!cq->count && !cq->errs)
				sim_waitfd_drain(fd);
		} else if (fid->fclass == FI_CLASS_EQ) {
			struct sim_eq *eq = container_of(fid, struct sim_eq,
							 eq_fid.fid);

			fd = eq->wait_fd;
			if (fabsim_eventq_empty(&eq->q))
				sim_waitfd_drain(fd);
		}
		sim_waitfd_arm(world, fd);
	}
}

static int fabric_trywait(struct fid_fabric *fabric, struct fid **fids,
			  int count)
{
	struct sim_fabric *fab = container_of(fabric, struct sim_fabric, fabric_fid);
	struct trywait_set set = { fids, count };
	bool ready;

	if (count < 0 || (count && !fids))
		return -FI_EINVAL;
	sim_lock(fab->world);
	ready = sim_progress_settle(fab->world, any_ready, &set);
	if (!ready && fab->world->shared)
		arm(fab->world, &set);
	sim_unlock(fab->world);
	return ready ? -FI_EAGAIN : 0;
}

int sim_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context)
{
	struct sim_fabric *fab;
	int ret;

	if (strcmp(attr->name, SIM_FABRIC_NAME)) {
		FI_WARN(&sim_prov, FI_LOG_FABRIC,
			"fabric \"%s\" unknown; sim offers \"%s\"\n",
			attr->name, SIM_FABRIC_NAME);
		return -FI_ENODATA;
	}
	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	ret = sim_world_get(attr->name, &fab->world);
	if (ret) {
		free(fab);
		return ret;
	}
	fab->fabric_fid.fid.fclass = FI_CLASS_FABRIC;
	fab->fabric_fid.fid.context = context;
	fab->fabric_fid.fid.ops = &fabric_fi_ops;
	fab->fabric_fid.ops = &fabric_ops;
	fab->fabric_fid.api_version = attr->api_version;
	*fabric = &fab->fabric_fid;
	return 0;
}
