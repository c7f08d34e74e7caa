/* SPDX-License-Identifier: BSD-2-Clause
 * Poll sets (fi_poll(3)): one call that progresses the domain and says
 * which of its CQs have something to read and which counters moved since
 * the last fi_poll. A CQ or counter in a set stays open until it leaves it
 * (fi_close says -FI_EBUSY meanwhile), as when an endpoint is bound to it.
 */
#include <stdlib.h>

#include <fabsim/fi_stubs.h>

#include "sim.h"

struct sim_poll_member {
	struct fid             *fid;    /* a CQ or a counter of the domain */
	uint64_t                value;  /* a counter's, when last polled */
	uint64_t                errors;
	struct sim_poll_member *next;
};

struct sim_poll {
	struct fid_poll         poll_fid;
	struct sim_domain      *domain;
	struct sim_poll_member *members;
};

static int *refs_of(struct fid *fid)
{
	switch (fid->fclass) {
	case FI_CLASS_CQ:
		return &container_of(fid, struct sim_cq, cq_fid.fid)->refs;
	case FI_CLASS_CNTR:
		return &container_of(fid, struct sim_cntr, cntr_fid.fid)->refs;
	default:
		return NULL;
	}
}

static struct sim_domain *domain_of(struct fid *fid)
{
	return fid->fclass == FI_CLASS_CQ ?
		       container_of(fid, struct sim_cq, cq_fid.fid)->domain :
		       container_of(fid, struct sim_cntr, cntr_fid.fid)->domain;
}

/* What fi_poll reports of a member, taking in a counter's new values. */
static bool has_news(struct sim_poll_member *m)
{
	struct sim_cq *cq;
	struct sim_cntr *cntr;
	bool moved;

	if (m->fid->fclass == FI_CLASS_CQ) {
		cq = container_of(m->fid, struct sim_cq, cq_fid.fid);
		return cq->count || cq->errs;
	}
	cntr = container_of(m->fid, struct sim_cntr, cntr_fid.fid);
	moved = cntr->value != m->value || cntr->errors != m->errors;
	m->value = cntr->value;
	m->errors = cntr->errors;
	return moved;
}

static int poll_poll(struct fid_poll *fid, void **context, int count)
{
	struct sim_poll *ps = container_of(fid, struct sim_poll, poll_fid);
	struct sim_world *world = ps->domain->world;
	int n = 0;

	if (count < 0 || (count && !context))
		return -FI_EINVAL;
	sim_lock(world);
	sim_progress_poll(world);
	for (struct sim_poll_member *m = ps->members; m && n < count;
	     m = m->next)
		if (has_news(m))
			context[n++] = m->fid->context;
	sim_unlock(world);
	return n;
}

static int poll_add(struct fid_poll *fid, struct fid *event_fid,
		    uint64_t flags)
{
	struct sim_poll *ps = container_of(fid, struct sim_poll, poll_fid);
	int *refs = event_fid ? refs_of(event_fid) : NULL;
	struct sim_poll_member *m;

	if (flags)
		return -FI_EBADFLAGS;
	if (!refs || domain_of(event_fid) != ps->domain) {
		FI_WARN(&sim_prov, FI_LOG_DOMAIN, "fi_poll_add: not a CQ or a "
			"counter of the poll set's domain\n");
		return -FI_EINVAL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -FI_ENOMEM;
	m->fid = event_fid;
	sim_lock(ps->domain->world);
	for (struct sim_poll_member *o = ps->members; o; o = o->next)
		if (o->fid == event_fid) {
			sim_unlock(ps->domain->world);
			free(m);
			return -FI_EALREADY;
		}
	if (event_fid->fclass == FI_CLASS_CNTR)
		has_news(m); /* counts moves from now on */
	(*refs)++;
	m->next = ps->members;
	ps->members = m;
	sim_unlock(ps->domain->world);
	return 0;
}

static int poll_del(struct fid_poll *fid, struct fid *event_fid,
		    uint64_t flags)
{
	struct sim_poll *ps = container_of(fid, struct sim_poll, poll_fid);
	struct sim_poll_member **p, *m;

	if (flags)
		return -FI_EBADFLAGS;
	sim_lock(ps->domain->world);
	for (p = &ps->members; *p && (*p)->fid != event_fid; p = &(*p)->next)
		;
	m = *p;
	if (m) {
		*p = m->next;
		(*refs_of(event_fid))--;
	}
	sim_unlock(ps->domain->world);
	if (!m)
		return -FI_EINVAL;
	free(m);
	return 0;
}

static int poll_close(struct fid *fid)
{
	struct sim_poll *ps = container_of(fid, struct sim_poll, poll_fid.fid);
	struct sim_world *world = ps->domain->world;

	sim_lock(world);
	while (ps->members) {
		struct sim_poll_member *m = ps->members;

		ps->members = m->next;
		(*refs_of(m->fid))--;
		free(m);
	}
	ps->domain->refs--;
	sim_unlock(world);
	free(ps);
	return 0;
}

static struct fi_ops poll_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = poll_close,
	.bind = fabsim_no_bind,
	.control = fabsim_no_control,
	.ops_open = fabsim_no_ops_open,
	.tostr = fabsim_no_tostr,
	.ops_set = fabsim_no_ops_set,
};

static struct fi_ops_poll poll_ops = {
	.size = sizeof(struct fi_ops_poll),
	.poll = poll_poll,
	.poll_add = poll_add,
	.poll_del = poll_del,
};

int sim_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		  struct fid_poll **out)
{
	struct sim_domain *dom = container_of(domain, struct sim_domain,
					      domain_fid);
	struct sim_poll *ps;

	if (!out || (attr && attr->flags))
		return -FI_EINVAL;
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -FI_ENOMEM;
	ps->domain = dom;
	ps->poll_fid.fid.fclass = FI_CLASS_POLL;
	ps->poll_fid.fid.ops = &poll_fi_ops;
	ps->poll_fid.ops = &poll_ops;
	sim_lock(dom->world);
	dom->refs++;
	sim_unlock(dom->world);
	*out = &ps->poll_fid;
	return 0;
}
