/* SPDX-License-Identifier: BSD-2-Clause
 * Synchronous rdma_cm (rdma_cma(7)): an id made with a NULL channel gets a
 * channel of its own, and each call that leads to an event — resolving an
 * address or a route, connecting, accepting, disconnecting — waits for it
 * and fails with its status. The event stays in id->event until the next
 * such call. On top of that, the endpoint helpers of rdma_verbs.h:
 * rdma_create_ep, rdma_get_request and rdma_destroy_ep, and what
 * rdma_create_qp provides when given no PD or no CQs (a default PD per
 * device; CQs with completion channels, in id->send_cq and id->recv_cq).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cm.h"

/* ---- Waiting for the event ------------------------------------------------------------- */

void cm_sync_forget(struct cm_id *c)
{
	if (c->sync && c->id.event) {
		rdma_ack_cm_event(c->id.event);
		c->id.event = NULL;
	}
}

/* The errno a synchronous call returns for the event it waited for. */
static int event_errno(const struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		return ECONNREFUSED;
	if (ev->status)
		return ev->status < 0 ? -ev->status : ev->status;
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		return EHOSTUNREACH;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		return ECONNRESET;
	default:
		return 0;
	}
}

int cm_sync_complete(struct cm_id *c)
{
	struct rdma_cm_event *ev;
	int err;

	if (!c->sync)
		return 0;
	cm_sync_forget(c);
	if (rdma_get_cm_event(c->id.channel, &ev))
		return -1;
	c->id.event = ev;
	err = event_errno(ev);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* ---- Default PDs and CQs ----------------------------------------------------------------- */

/* One per device, for the process's life (as rdma_cm keeps its own). */
static struct {
	struct ibv_context *ctx;
	struct ibv_pd      *pd;
} default_pds[16];

struct ibv_pd *cm_default_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd = NULL;
	size_t i;

	cm_sv->lock();
	for (i = 0; i < sizeof(default_pds) / sizeof(default_pds[0]); i++)
		if (default_pds[i].ctx == ctx || !default_pds[i].ctx)
			break;
	if (i < sizeof(default_pds) / sizeof(default_pds[0]))
		pd = default_pds[i].pd;
	cm_sv->unlock();
	if (pd)
		return pd;
	if (i == sizeof(default_pds) / sizeof(default_pds[0])) {
		errno = ENOMEM;
		return NULL;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		return NULL;
	cm_sv->lock();
	/* Another thread may have taken a slot meanwhile, for this device or
	 * another: look again. */
	for (i = 0; i < sizeof(default_pds) / sizeof(default_pds[0]); i++)
		if (default_pds[i].ctx == ctx || !default_pds[i].ctx)
			break;
	if (i < sizeof(default_pds) / sizeof(default_pds[0]) &&
	    !default_pds[i].ctx) {
		default_pds[i].ctx = ctx;
		default_pds[i].pd = pd;
		cm_sv->unlock();
		return pd;
	}
	struct ibv_pd *other = i < sizeof(default_pds) / sizeof(default_pds[0]) ?
				       default_pds[i].pd : NULL;

	cm_sv->unlock();
	ibv_dealloc_pd(pd);
	if (!other)
		errno = ENOMEM;
	return other;
}

/* Its context is the id: rdma_verbs.h's rdma_get_*_comp check it. */
static struct ibv_cq *cq_with_channel(struct rdma_cm_id *id, uint32_t depth,
				      struct ibv_comp_channel **channel)
{
	struct ibv_cq *cq;

	*channel = ibv_create_comp_channel(id->verbs);
	if (!*channel)
		return NULL;
	cq = ibv_create_cq(id->verbs, depth ? (int)depth : 1, id, *channel, 0);
	if (!cq) {
		ibv_destroy_comp_channel(*channel);
		*channel = NULL;
	}
	return cq;
}

int cm_qp_cqs(struct cm_id *c, struct ibv_qp_init_attr *init)
{
	struct rdma_cm_id *id = &c->id;

	if (!init->recv_cq) {
		id->recv_cq = cq_with_channel(id, init->cap.max_recv_wr,
					      &id->recv_cq_channel);
		if (!id->recv_cq)
			return -1;
		init->recv_cq = id->recv_cq;
		c->own_cqs = true;
	}
	if (!init->send_cq) {
		id->send_cq = cq_with_channel(id, init->cap.max_send_wr,
					      &id->send_cq_channel);
		if (!id->send_cq) {
			cm_qp_cqs_free(c);
			return -1;
		}
		init->send_cq = id->send_cq;
		c->own_cqs = true;
	}
	return 0;
}

void cm_qp_cqs_free(struct cm_id *c)
{
	struct rdma_cm_id *id = &c->id;

	if (!c->own_cqs)
		return;
	if (id->send_cq && ibv_destroy_cq(id->send_cq) == 0)
		id->send_cq = NULL;
	if (id->send_cq_channel &&
	    ibv_destroy_comp_channel(id->send_cq_channel) == 0)
		id->send_cq_channel = NULL;
	if (id->recv_cq && ibv_destroy_cq(id->recv_cq) == 0)
		id->recv_cq = NULL;
	if (id->recv_cq_channel &&
	    ibv_destroy_comp_channel(id->recv_cq_channel) == 0)
		id->recv_cq_channel = NULL;
	c->own_cqs = false;
}

/* ---- Endpoints --------------------------------------------------------------------------- */

int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res,
		   struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cmid;
	struct cm_id *c;

	if (!id || !res) {
		errno = EINVAL;
		return -1;
	}
	if (rdma_create_id(NULL, &cmid, NULL, res->ai_port_space))
		return -1;
	/* The QP is of the kind the address information names. */
	if (qp_init_attr && res->ai_qp_type)
		qp_init_attr->qp_type = res->ai_qp_type;
	c = SV_CONTAINER_OF(cmid, struct cm_id, id);
	if (res->ai_flags & RAI_PASSIVE) {
		if (rdma_bind_addr(cmid, res->ai_src_addr))
			goto fail;
		if (qp_init_attr) {
			/* Each request rdma_get_request hands out gets one. */
			c->ep_attr = *qp_init_attr;
			c->ep_pd = pd;
			c->has_ep_attr = true;
		}
	} else {
		if (rdma_resolve_addr(cmid, res->ai_src_addr, res->ai_dst_addr,
				      2000) ||
		    rdma_resolve_route(cmid, 2000))
			goto fail;
		if (qp_init_attr && rdma_create_qp(cmid, pd, qp_init_attr))
			goto fail;
	}
	*id = cmid;
	return 0;
fail: {
	int err = errno;

	rdma_destroy_id(cmid);
	errno = err;
	return -1;
}
}

void rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (!id)
		return;
	if (id->qp)
		rdma_destroy_qp(id);
	rdma_destroy_id(id);
}

int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct cm_id *l = SV_CONTAINER_OF(listen, struct cm_id, id);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *req;
	struct ibv_qp_init_attr attr;

	if (!l->sync || !id) {
		errno = EINVAL; /* for ids made with rdma_create_ep */
		return -1;
	}
	cm_sync_forget(l);
	if (rdma_get_cm_event(listen->channel, &ev))
		return -1;
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST || ev->status) {
		int err = ev->status ? (ev->status < 0 ? -ev->status : ev->status)
				     : EINVAL;

		rdma_ack_cm_event(ev);
		errno = err;
		return -1;
	}
	req = ev->id;
	if (rdma_migrate_id(req, NULL))
		goto fail;
	if (l->has_ep_attr) {
		attr = l->ep_attr;
		if (rdma_create_qp(req, l->ep_pd, &attr))
			goto fail;
	}
	/* The request's event stays with its id, as rdma_cm keeps it. */
	req->event = ev;
	*id = req;
	return 0;
fail: {
	int err = errno;

	rdma_reject(req, NULL, 0);
	rdma_ack_cm_event(ev);
	rdma_destroy_id(req);
	errno = err;
	return -1;
}
}
