/* SPDX-License-Identifier: BSD-2-Clause
 * fid_fabric: a handle on one simulated fabric (a world). */
#include <stdlib.h>
#include <string.h>

#include <fabsim/fi_stubs.h>

#include "shared/shared_waker.h"
#include "sim.h"

static int fabric_close(struct fid *fid)
{
	struct sim_fabric *fab = container_of(fid, struct sim_fabric, fabric_fid.fid);

	if (fab->domains || fab->children) {
		FI_WARN(&sim_prov, FI_LOG_FABRIC,
			"fi_close(fabric): %d domain(s) and %d EQ(s), passive "
			"endpoint(s) or wait set(s) still open\n", fab->domains,
			fab->children);
		return -FI_EBUSY;
	}
	struct sim_world *world = fab->world;

	free(fab);
	/* Closed all the same: the error says the trace is not whole. */
	return sim_world_put(world);
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
	.wait_open = sim_wait_open,
	.trywait = fabric_trywait,
	.domain2 = fabsim_no_domain2,
};

struct trywait_set {
	struct fid **fids;
	int          count;
};

/* fi_poll(3): "events queued on the fabric descriptor" — what the
 * application has not read yet: entries of a CQ, events of an EQ, and for a
 * counter a change of its value or error value since the application last
 * read it (fi_cntr_read, fi_cntr_readerr). */
bool sim_fid_has_events(struct fid *fid)
{
	switch (fid->fclass) {
	case FI_CLASS_WAIT: {
		struct sim_wait *ws = container_of(fid, struct sim_wait,
						   wait_fid.fid);

		for (size_t i = 0; i < ws->count; i++)
			if (sim_fid_has_events(ws->members[i]))
				return true;
		return false;
	}
	case FI_CLASS_CQ: {
		struct sim_cq *cq = container_of(fid, struct sim_cq, cq_fid.fid);

		return cq->count || cq->errs;
	}
	case FI_CLASS_EQ: {
		struct sim_eq *eq = container_of(fid, struct sim_eq, eq_fid.fid);

		return !fabsim_eventq_empty(&eq->q);
	}
	case FI_CLASS_CNTR:
		return sim_cntr_unread(container_of(fid, struct sim_cntr,
						    cntr_fid.fid));
	default:
		return false;
	}
}

static int wait_fd(struct fid *fid)
{
	switch (fid->fclass) {
	case FI_CLASS_CQ:
		return container_of(fid, struct sim_cq, cq_fid.fid)->wait_fd;
	case FI_CLASS_EQ:
		return container_of(fid, struct sim_eq, eq_fid.fid)->wait_fd;
	case FI_CLASS_CNTR:
		return container_of(fid, struct sim_cntr, cntr_fid.fid)->wait_fd;
	case FI_CLASS_WAIT:
		return container_of(fid, struct sim_wait, wait_fid.fid)->wait_fd;
	default:
		return -1;
	}
}

static bool any_ready(void *ctx)
{
	const struct trywait_set *set = ctx;

	for (int i = 0; i < set->count; i++)
		if (sim_fid_has_events(set->fids[i]))
			return true;
	return false;
}

/* The caller may block on the descriptors of the set now: none of its
 * objects has anything to read. A counter's descriptor is made unreadable
 * (a change it signalled has been read since), to become readable at the
 * next change; CQ and EQ descriptors are unreadable once emptied by reads.
 * Shared fabrics: every descriptor is made unreadable (a wake-up that found
 * nothing is over) and armed: the world's next work makes them readable
 * again (sim_waitfd.c). */
static void prepare_block(struct sim_world *world,
			  const struct trywait_set *set)
{
	for (int i = 0; i < set->count; i++) {
		struct fid *fid = set->fids[i];
		int fd = wait_fd(fid);

		if (world->shared || fid->fclass == FI_CLASS_CNTR)
			sim_waitfd_drain(fd);
		if (world->waker)
			sim_waitfd_arm(world, fd);
	}
	/* One process: the waker now has descriptors to answer. */
	if (!world->shared && world->waker && sim_waitfd_armed(world))
		shared_waker_kick(world->waker);
}

static int fabric_trywait(struct fid_fabric *fabric, struct fid **fids,
			  int count)
{
	struct sim_fabric *fab = container_of(fabric, struct sim_fabric, fabric_fid);
	struct trywait_set set = { fids, count };
	bool ready;

	if (count < 0 || (count && !fids))
		return -FI_EINVAL;
	/* fi_poll(3): event queues, completion queues, counters and wait
	 * sets may be passed. */
	for (int i = 0; i < count; i++) {
		size_t fclass = fids[i] ? fids[i]->fclass : FI_CLASS_UNSPEC;

		if (fclass != FI_CLASS_CQ && fclass != FI_CLASS_EQ &&
		    fclass != FI_CLASS_CNTR && fclass != FI_CLASS_WAIT) {
			FI_WARN(&sim_prov, FI_LOG_FABRIC,
				"fi_trywait: descriptor %d is not a CQ, EQ, "
				"counter or wait set (%s, class %zu)\n", i,
				fids[i] ? "fid" : "NULL", fclass);
			return -FI_EINVAL;
		}
	}
	sim_lock(fab->world);
	ready = sim_progress_settle(fab->world, any_ready, &set);
	if (!ready)
		prepare_block(fab->world, &set);
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
