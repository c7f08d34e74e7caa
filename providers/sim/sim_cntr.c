/* SPDX-License-Identifier: BSD-2-Clause
 * fid_cntr: completion counters (fi_cntr(3)). fi_cntr_wait lets simulated
 * time run until the threshold is reached or the timeout passes. */
#include <stdlib.h>

#include <fabsim/fi_stubs.h>

#include "sim.h"

static void notify(struct sim_cntr *cntr)
{
	sim_progress_ready(cntr->domain->world, cntr->wait_fd);
}

void sim_cntr_inc(struct sim_cntr *cntr)
{
	if (cntr) {
		cntr->value++;
		notify(cntr);
	}
}

void sim_cntr_inc_err(struct sim_cntr *cntr)
{
	if (cntr) {
		cntr->errors++;
		notify(cntr);
	}
}

bool sim_cntr_unread(const struct sim_cntr *cntr)
{
	return cntr->value != cntr->value_read ||
	       cntr->errors != cntr->errors_read;
}

static uint64_t cntr_read(struct fid_cntr *fid)
{
	struct sim_cntr *cntr = container_of(fid, struct sim_cntr, cntr_fid);
	uint64_t v;

	sim_lock(cntr->domain->world);
	sim_progress_poll(cntr->domain->world);
	v = cntr->value;
	cntr->value_read = v;
	sim_unlock(cntr->domain->world);
	return v;
}

static uint64_t cntr_readerr(struct fid_cntr *fid)
{
	struct sim_cntr *cntr = container_of(fid, struct sim_cntr, cntr_fid);
	uint64_t v;

	sim_lock(cntr->domain->world);
	v = cntr->errors;
	cntr->errors_read = v;
	sim_unlock(cntr->domain->world);
	return v;
}

#define CNTR_SETTER(name, field, expr)                                        \
	static int name(struct fid_cntr *fid, uint64_t value)                 \
	{                                                                     \
		struct sim_cntr *cntr =                                       \
			container_of(fid, struct sim_cntr, cntr_fid);         \
		sim_lock(cntr->domain->world);                                \
		cntr->field = expr;                                           \
		notify(cntr);                                                 \
		sim_unlock(cntr->domain->world);                              \
		return 0;                                                     \
	}

CNTR_SETTER(cntr_add, value, cntr->value + value)
CNTR_SETTER(cntr_set, value, value)
CNTR_SETTER(cntr_adderr, errors, cntr->errors + value)
CNTR_SETTER(cntr_seterr, errors, value)

struct cntr_wait {
	struct sim_cntr *cntr;
	uint64_t         threshold;
	uint64_t         errors_at_start;
};

static bool cntr_reached(void *ctx)
{
	struct cntr_wait *w = ctx;

	return w->cntr->value >= w->threshold ||
	       w->cntr->errors != w->errors_at_start;
}

static int cntr_wait(struct fid_cntr *fid, uint64_t threshold, int timeout)
{
	struct sim_cntr *cntr = container_of(fid, struct sim_cntr, cntr_fid);
	struct cntr_wait w = { cntr, threshold, 0 };
	int ret;

	if (cntr->attr.wait_obj == FI_WAIT_NONE)
		return -FI_EINVAL;
	sim_lock(cntr->domain->world);
	w.errors_at_start = cntr->errors;
	ret = sim_progress_wait(cntr->domain->world, cntr_reached, &w, timeout);
	/* fi_cntr(3): an error while waiting ends the wait with -FI_EAVAIL. */
	if (!ret && cntr->value < threshold)
		ret = -FI_EAVAIL;
	sim_unlock(cntr->domain->world);
	return ret == -FI_EAGAIN ? -FI_ETIMEDOUT : ret;
}

static int cntr_control(struct fid *fid, int command, void *arg)
{
	struct sim_cntr *cntr = container_of(fid, struct sim_cntr, cntr_fid.fid);

	return sim_waitfd_control(cntr->wait_fd, cntr->attr.wait_obj, command,
				  arg);
}

static int cntr_close(struct fid *fid)
{
	struct sim_cntr *cntr = container_of(fid, struct sim_cntr, cntr_fid.fid);
	struct sim_domain *dom = cntr->domain;

	sim_lock(dom->world);
	if (cntr->refs) {
		sim_unlock(dom->world);
		FI_WARN(&sim_prov, FI_LOG_CNTR,
			"fi_close(cntr): %d endpoint(s) or poll set(s) still "
			"bound\n",
			cntr->refs);
		return -FI_EBUSY;
	}
	dom->refs--;
	sim_wait_leave(&cntr->wait_set, &cntr->cntr_fid.fid, &cntr->wait_fd);
	sim_waitfd_forget(dom->world, cntr->wait_fd);
	sim_unlock(dom->world);
	sim_waitfd_close(cntr->wait_fd);
	free(cntr);
	return 0;
}

static struct fi_ops cntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cntr_close,
	.bind = fabsim_no_bind,
	.control = cntr_control,
	.ops_open = fabsim_no_ops_open,
	.tostr = fabsim_no_tostr,
	.ops_set = fabsim_no_ops_set,
};

static struct fi_ops_cntr cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = cntr_read,
	.readerr = cntr_readerr,
	.add = cntr_add,
	.set = cntr_set,
	.wait = cntr_wait,
	.adderr = cntr_adderr,
	.seterr = cntr_seterr,
};

int sim_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		  struct fid_cntr **out, void *context)
{
	struct sim_domain *dom = container_of(domain, struct sim_domain, domain_fid);
	struct fi_cntr_attr defaults = { .events = FI_CNTR_EVENTS_COMP,
					 .wait_obj = FI_WAIT_UNSPEC };
	struct sim_cntr *cntr;
	int ret;

	if (!out)
		return -FI_EINVAL;
	if (!attr)
		attr = &defaults;
	if (attr->flags)
		return -FI_EBADFLAGS; /* none defined (fi_cntr(3)), as fi_cq_open */
	if (attr->events != FI_CNTR_EVENTS_COMP)
		return -FI_EINVAL;
	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
	    attr->wait_obj != FI_WAIT_FD && attr->wait_obj != FI_WAIT_SET &&
	    attr->wait_obj != FI_WAIT_YIELD)
		return -FI_ENOSYS;
	cntr = calloc(1, sizeof(*cntr));
	if (!cntr)
		return -FI_ENOMEM;
	cntr->domain = dom;
	cntr->attr = *attr;
	ret = sim_waitfd_open(dom->world, attr->wait_obj, &cntr->wait_fd);
	if (ret) {
		free(cntr);
		return ret;
	}
	cntr->cntr_fid.fid.fclass = FI_CLASS_CNTR;
	cntr->cntr_fid.fid.context = context;
	cntr->cntr_fid.fid.ops = &cntr_fi_ops;
	cntr->cntr_fid.ops = &cntr_ops;
	sim_lock(dom->world);
	if (attr->wait_obj == FI_WAIT_SET) {
		ret = sim_wait_join(dom->world, attr->wait_set,
				    &cntr->cntr_fid.fid, &cntr->wait_set,
				    &cntr->wait_fd);
		if (ret) {
			sim_unlock(dom->world);
			free(cntr);
			return ret;
		}
	}
	dom->refs++;
	sim_unlock(dom->world);
	*out = &cntr->cntr_fid;
	return 0;
}
