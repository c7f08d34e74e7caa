/* SPDX-License-Identifier: BSD-2-Clause
 * Queue pairs: reliable-connected, unreliable-connected and
 * unreliable-datagram ones over the NIC model's RC, UC and UD queue pairs.
 *
 * States follow verbs: RESET -> INIT (receives may be posted) -> RTR (RC:
 * the peer's GID and QP number connect the NIC's QP) -> RTS (sends may be
 * posted); ERR from any state, by the application or when a request fails
 * (the NIC flushes everything posted, as a device does). A UD QP's
 * transitions take the attributes the kernel asks of them (a Q_Key at
 * INIT, a send PSN at RTS) and no others.
 *
 * What the NIC model does differently from an IB device, and what the face
 * does about it:
 *  - a connection's timers and retry counts are its attributes' (timeout,
 *    retry_cnt, rnr_retry, min_rnr_timer) once set, the fabric's before
 *    (FI_SIM_* transport parameters, as for rdma_cm's connections);
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sv.h"

static enum ibv_wc_status wc_status(enum nic_status st)
{
	switch (st) {
	case NIC_OK: return IBV_WC_SUCCESS;
	case NIC_LOC_PROT_ERR: return IBV_WC_LOC_PROT_ERR;
	case NIC_REM_ACCESS_ERR: return IBV_WC_REM_ACCESS_ERR;
	case NIC_REM_INV_REQ_ERR: return IBV_WC_REM_INV_REQ_ERR;
	case NIC_REM_OP_ERR: return IBV_WC_REM_OP_ERR;
	case NIC_RETRY_EXC_ERR: return IBV_WC_RETRY_EXC_ERR;
	case NIC_RNR_RETRY_EXC_ERR: return IBV_WC_RNR_RETRY_EXC_ERR;
	case NIC_WR_FLUSH_ERR: return IBV_WC_WR_FLUSH_ERR;
	case NIC_TRUNCATED: return IBV_WC_LOC_LEN_ERR;
	default: return IBV_WC_GENERAL_ERR;
	}
}

/* ---- Request records ------------------------------------------------------------ */

void sv_wr_unlink(struct sv_wr *w)
{
	struct sv_qp *qp = w->qp;
	struct sv_wr **head = w->srq ? &w->srq->recvs :
			      w->recv ? &qp->recvs : &qp->sends;
	struct sv_wr **tail = w->srq ? &w->srq->recvs_tail :
			      w->recv ? &qp->recvs_tail : NULL;

	if (w->prev)
		w->prev->next = w->next;
	else
		*head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else if (tail)
		*tail = w->prev;
}

static void wc_init(struct ibv_wc *wc, const struct sv_qp *qp,
		    const struct sv_wr *w, enum ibv_wc_status status)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = w->wr_id;
	wc->status = status;
	wc->opcode = w->opcode;
	wc->byte_len = w->byte_len;
	wc->qp_num = qp->qp.qp_num;
}

void sv_qp_local_error(struct sv_qp *qp, struct sv_wr *w,
		       enum ibv_wc_status status)
{
	struct ibv_wc wc;

	wc_init(&wc, qp, w, status);
	wc.vendor_err = status;
	sv_cq_push(w->recv ? qp->rcq : qp->scq, &wc, true, NULL);
	free(w);
	qp->qp.state = IBV_QPS_ERR;
	nic_qp_set_error(qp->nqp);
}

/* ---- The NIC's callbacks --------------------------------------------------------------- */

/* The first packet a connected QP receives while in RTR raises the
 * affiliated asynchronous event IBV_EVENT_COMM_EST (IBA chapter 11): a
 * program that waits for its peer's first message before it moves to RTS
 * learns of it so. */
static void heard_peer(struct sv_qp *qp)
{
	struct ibv_async_event ev = {
		.element.qp = &qp->qp,
		.event_type = IBV_EVENT_COMM_EST,
	};

	if (qp->heard_peer || qp->qp.qp_type == IBV_QPT_UD)
		return;
	qp->heard_peer = true;
	if (qp->qp.state == IBV_QPS_RTR)
		sv_async_push(qp->pd->ctx, &ev);
}

static void on_send_done(void *ctx, const struct nic_completion *c)
{
	struct sv_qp *qp = ctx;
	struct sv_wr *w = (struct sv_wr *)(uintptr_t)c->cookie;
	struct ibv_wc wc;

	wc_init(&wc, qp, w, wc_status(c->status));
	wc.vendor_err = c->status;
	/* Failures are reported whether the request was signaled or not. The
	 * request's slot, and those of the unsignaled ones before it, are
	 * free once its completion is read. */
	if (c->status != NIC_OK || w->signaled) {
		struct sv_cq_slots slots = { qp, 1 + qp->sends_unreleased, 0 };

		qp->sends_unreleased = 0;
		sv_cq_push(qp->scq, &wc, false, &slots);
	} else {
		qp->sends_unreleased++;
	}
	sv_wr_unlink(w);
	free(w);
}

/* A datagram came in (UD): its GRH goes before it, and counts in its
 * length. One that does not fit fails only its receive. */
static void ud_received(struct sv_qp *qp, const struct sv_wr *w,
			const struct nic_completion *c, struct ibv_wc *wc)
{
	struct sv_device *dev = qp->pd->ctx->dev;

	if (c->status != NIC_OK && c->status != NIC_TRUNCATED)
		return;
	if (c->status == NIC_TRUNCATED || w->grh.short_list) {
		wc->status = IBV_WC_LOC_LEN_ERR;
		wc->vendor_err = NIC_TRUNCATED;
		return;
	}
	sv_grh_write(&w->grh, nic_ipv4_of_host(sv_world.nic, c->source.host),
		     dev->ip, c->len, c->flags & NIC_CQ_IMM);
	wc->byte_len += SV_GRH_BYTES;
	wc->wc_flags |= IBV_WC_GRH;
}

static void on_recv_done(void *ctx, const struct nic_completion *c)
{
	struct sv_qp *qp = ctx;
	struct sv_wr *w = (struct sv_wr *)(uintptr_t)c->cookie;
	struct sv_cq_slots slots = { 0 };
	struct ibv_wc wc;

	sv_wr_unlink(w);
	if (w->srq)
		sv_srq_taken(w->srq);
	if (c->status == NIC_OK)
		heard_peer(qp);
	wc_init(&wc, qp, w, wc_status(c->status));
	wc.vendor_err = c->status == NIC_OK ? 0 : c->status;
	/* On a truncation, the whole message's length (what fitted and what
	 * did not), which a device may report and the provider can use. */
	wc.byte_len = (uint32_t)(c->len + c->olen);
	wc.src_qp = c->source.qpn;
	/* A receive an RDMA write with immediate data took: its length. */
	if (c->flags & NIC_CQ_REMOTE_WRITE)
		wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	if (c->flags & NIC_CQ_IMM) {
		wc.wc_flags |= IBV_WC_WITH_IMM;
		wc.imm_data = htonl(c->imm);
	}
	if (qp->qp.qp_type == IBV_QPT_UD)
		ud_received(qp, w, c, &wc);
	/* A QP's own receive slot is free once its completion is read. */
	slots.qp = w->srq ? NULL : qp;
	slots.recvs = 1;
	sv_cq_push(qp->rcq, &wc, c->flags & NIC_CQ_SOLICITED, &slots);
	free(w);
	if (c->status == NIC_TRUNCATED && qp->qp.qp_type != IBV_QPT_UD) {
		/* A local length error is fatal to an RC queue pair. */
		qp->qp.state = IBV_QPS_ERR;
		nic_qp_set_error(qp->nqp);
	}
}

/* Writes with immediate data come as receives (nic_qp_imm_takes_receive);
 * RMA without it leaves nothing for the program. */
static void on_remote_done(void *ctx, const struct nic_completion *c)
{
	(void)c;
	heard_peer(ctx);
}

static void on_qp_fatal(void *ctx, enum nic_status why)
{
	struct sv_qp *qp = ctx;

	qp->qp.state = IBV_QPS_ERR;
	/* A responder that refused a peer's request reports it as an
	 * affiliated asynchronous error (IBA 11.6.3.1); a requester's
	 * failures are in its completions. */
	if (nic_qp_failed_as_responder(qp->nqp)) {
		struct ibv_async_event ev = {
			.element.qp = &qp->qp,
			.event_type = why == NIC_REM_ACCESS_ERR ?
					      IBV_EVENT_QP_ACCESS_ERR :
				      why == NIC_REM_INV_REQ_ERR ?
					      IBV_EVENT_QP_REQ_ERR :
					      IBV_EVENT_QP_FATAL,
		};

		sv_async_push(qp->pd->ctx, &ev);
	}
	if (qp->srq) {
		/* It will take no more of the SRQ's receives: what a program
		 * waits for before it destroys such a QP. */
		struct ibv_async_event ev = {
			.element.qp = &qp->qp,
			.event_type = IBV_EVENT_QP_LAST_WQE_REACHED,
		};

		sv_async_push(qp->pd->ctx, &ev);
	}
}

const struct nic_qp_ops sv_qp_nic_ops = {
	.send_done = on_send_done,
	.recv_done = on_recv_done,
	.remote_done = on_remote_done,
	.qp_fatal = on_qp_fatal,
};

/* ---- Creation and destruction ------------------------------------------------------------------ */

static bool cap_ok(const struct ibv_qp_cap *cap)
{
	return cap->max_send_wr <= SV_MAX_QP_WR &&
	       cap->max_recv_wr <= SV_MAX_QP_WR &&
	       cap->max_send_sge <= SV_MAX_SGE &&
	       cap->max_recv_sge <= SV_MAX_SGE &&
	       cap->max_inline_data <= SV_MAX_INLINE;
}

/* ibv_create_qp(3): the QP gets at least what it asked for. Its inline room
 * is, as in a NIC's send WQE, at least the room of its gather entries (a
 * program may ask for none and still send a few bytes inline). */
static void grant(struct ibv_qp_cap *cap)
{
	uint32_t room = cap->max_send_sge * (uint32_t)sizeof(struct ibv_sge);

	if (room > SV_MAX_INLINE)
		room = SV_MAX_INLINE;
	if (cap->max_inline_data < room)
		cap->max_inline_data = room;
}

static enum nic_qp_type nic_type_of(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_UD: return NIC_QP_UD;
	case IBV_QPT_UC: return NIC_QP_UC;
	default: return NIC_QP_RC;
	}
}

/* The NIC's side of a QP (lock held): 0 or -errno. */
static int make_nic_qp(struct sv_qp *qp, enum ibv_qp_type type,
		       struct nic_qp **out)
{
	int ret = nic_qp_create(qp->pd->ctx->dev->nic, nic_type_of(type),
				&sv_qp_nic_ops, qp, out);

	if (!ret && qp->srq && (ret = nic_qp_use_srq(*out, qp->srq->nsrq)))
		nic_qp_destroy(*out);
	if (!ret) {
		/* Remote operations only as qp_access_flags enables them
		 * (none until INIT sets them), through its own PD's regions. */
		nic_qp_set_pd(*out, qp->pd->id);
		nic_qp_set_remote_access(*out, 0);
	}
	if (!ret && type == IBV_QPT_RC)
		nic_qp_nak_long_messages(*out);
	/* A write with immediate data takes a receive, as in verbs. */
	if (!ret && type != IBV_QPT_UD)
		nic_qp_imm_takes_receive(*out);
	return ret;
}

/* What the NIC and the face hold for a QP goes, without completions (lock
 * held): destroying it, or moving it to the reset state. A command to the
 * NIC, which takes the fixed time of one (a registration's, mr.base_ns):
 * the wire moves on meanwhile, and what was already on its way to the QP
 * arrives and is acknowledged, as on a device, where a program's teardown
 * comes long after its last completion. */
static void forget_nic_qp(struct sv_qp *qp)
{
	nic_sched_sleep(sv_world.nic, sv_world.cfg.mr.base_ns);
	nic_qp_destroy(qp->nqp);
	qp->nqp = NULL;
	while (qp->sends) {
		struct sv_wr *w = qp->sends;

		qp->sends = w->next;
		free(w);
	}
	while (qp->recvs) {
		struct sv_wr *w = qp->recvs;

		qp->recvs = w->next;
		free(w);
	}
	sv_wr_drop(qp);
	sv_cq_forget_qp(qp->scq, qp);
	sv_cq_forget_qp(qp->rcq, qp);
	qp->send_count = 0;
	qp->recv_count = 0;
	qp->sends_unreleased = 0;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *ibpd,
			     struct ibv_qp_init_attr *init)
{
	struct sv_pd *pd = SV_CONTAINER_OF(ibpd, struct sv_pd, pd);
	struct sv_qp *qp;
	int ret;

	if ((init->qp_type != IBV_QPT_RC && init->qp_type != IBV_QPT_UC &&
	     init->qp_type != IBV_QPT_UD) ||
	    (init->srq && init->qp_type == IBV_QPT_UD)) {
		/* Raw packet, XRC and datagrams from a shared receive queue
		 * are not simulated by this face yet. */
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!init->send_cq || !init->recv_cq || !cap_ok(&init->cap)) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	qp->pd = pd;
	qp->scq = SV_CONTAINER_OF(init->send_cq, struct sv_cq, cq);
	qp->rcq = SV_CONTAINER_OF(init->recv_cq, struct sv_cq, cq);
	qp->cap = init->cap;
	grant(&qp->cap);
	qp->sq_sig_all = init->sq_sig_all;
	if (init->srq) {
		/* The SRQ's limits stand for the QP's receive queue. */
		qp->srq = SV_CONTAINER_OF(init->srq, struct sv_srq, srq);
		qp->cap.max_recv_wr = 0;
		qp->cap.max_recv_sge = 0;
	}
	sv->lock();
	ret = make_nic_qp(qp, init->qp_type, &qp->nqp);
	if (!ret) {
		pd->refs++;
		qp->scq->refs++;
		qp->rcq->refs++;
		if (qp->srq)
			qp->srq->refs++;
	}
	sv->unlock();
	if (ret) {
		free(qp);
		errno = ret == -ENOSPC ? ENOMEM : -ret;
		return NULL;
	}
	qp->qp.context = ibpd->context;
	qp->qp.qp_context = init->qp_context;
	qp->qp.pd = ibpd;
	qp->qp.send_cq = init->send_cq;
	qp->qp.recv_cq = init->recv_cq;
	qp->qp.srq = init->srq;
	qp->qp.qp_num = nic_qp_num(qp->nqp);
	qp->qp.handle = qp->qp.qp_num;
	qp->qp.state = IBV_QPS_RESET;
	qp->qp.qp_type = init->qp_type;
	init->cap = qp->cap;
	pthread_mutex_init(&qp->qp.mutex, NULL);
	pthread_cond_init(&qp->qp.cond, NULL);
	return &qp->qp;
}

int ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct sv_qp *qp = SV_CONTAINER_OF(ibqp, struct sv_qp, qp);

	sv->lock();
	if (qp->nqp)
		forget_nic_qp(qp);
	qp->pd->refs--;
	qp->scq->refs--;
	qp->rcq->refs--;
	if (qp->srq)
		qp->srq->refs--;
	sv->unlock();
	pthread_mutex_destroy(&ibqp->mutex);
	pthread_cond_destroy(&ibqp->cond);
	free(qp);
	return 0;
}

/* ---- Attributes and states -------------------------------------------------------------------- */

/* To the reset state (lock held): everything posted goes without
 * completions and the attributes are forgotten; the QP keeps its number
 * (the NIC's QP is made anew under it). */
static int reset(struct sv_qp *qp)
{
	struct nic_qp *fresh;
	int ret = make_nic_qp(qp, qp->qp.qp_type, &fresh);

	if (ret)
		return ret == -ENOSPC ? ENOMEM : -ret;
	forget_nic_qp(qp);
	qp->nqp = fresh;
	/* Its number is free since the old one went, under the lock. */
	if (nic_qp_renumber(fresh, qp->qp.qp_num))
		abort();
	memset(&qp->attr, 0, sizeof(qp->attr));
	qp->heard_peer = false;
	return 0;
}

/* Values the attributes' fields can hold (ibv_modify_qp(3): retry counts
 * of 3 bits, timers of 5) or that the device grants (ibv_query_device's
 * max_qp_rd_atom, max_qp_init_rd_atom): EINVAL past them, as devices
 * refuse them (rxe and mlx5 do the read depths). */
static bool attr_values_ok(const struct ibv_qp_attr *a, int mask)
{
	return !((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7) &&
	       !((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7) &&
	       !((mask & IBV_QP_TIMEOUT) && a->timeout > 31) &&
	       !((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31) &&
	       !((mask & IBV_QP_MAX_QP_RD_ATOMIC) &&
		 a->max_rd_atomic > SV_MAX_RD_ATOM) &&
	       !((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
		 a->max_dest_rd_atomic > SV_MAX_RD_ATOM);
}

static bool transition_ok(enum ibv_qp_state from, enum ibv_qp_state to)
{
	switch (to) {
	case IBV_QPS_RESET: return true; /* from any state (IBA 10.3.1) */
	case IBV_QPS_INIT: return from == IBV_QPS_RESET || from == IBV_QPS_INIT;
	case IBV_QPS_RTR: return from == IBV_QPS_INIT;
	case IBV_QPS_RTS: return from == IBV_QPS_RTR || from == IBV_QPS_RTS;
	case IBV_QPS_ERR: return true;
	default: return false;
	}
}

/* What a UD QP's transition requires and allows besides its state (the
 * kernel's table, after IBA 11.2.4.2): EINVAL when the mask differs. */
static int ud_attrs_ok(enum ibv_qp_state from, enum ibv_qp_state to,
		       int mask)
{
	int req = 0, opt = 0;

	mask &= ~(IBV_QP_STATE | IBV_QP_CUR_STATE);
	if (from == IBV_QPS_RESET && to == IBV_QPS_INIT)
		req = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
	else if (from == IBV_QPS_INIT && to == IBV_QPS_INIT)
		opt = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
	else if (from == IBV_QPS_INIT && to == IBV_QPS_RTR)
		opt = IBV_QP_PKEY_INDEX | IBV_QP_QKEY;
	else if (from == IBV_QPS_RTR && to == IBV_QPS_RTS)
		req = IBV_QP_SQ_PSN, opt = IBV_QP_QKEY;
	else if (from == IBV_QPS_RTS && to == IBV_QPS_RTS)
		opt = IBV_QP_QKEY;
	return (mask & req) == req && !(mask & ~(req | opt)) ? 0 : EINVAL;
}

/* What an RC or UC QP's transition requires and allows besides its state
 * (the kernel's table, after IBA 11.2.4.2): EINVAL when the mask differs,
 * as a device says. */
static int connected_attrs_ok(bool rc, enum ibv_qp_state from,
			      enum ibv_qp_state to, int mask)
{
	const int rc_only = rc ? IBV_QP_MAX_DEST_RD_ATOMIC |
					 IBV_QP_MIN_RNR_TIMER : 0;
	int req = 0, opt = 0;

	mask &= ~(IBV_QP_STATE | IBV_QP_CUR_STATE);
	if (from == IBV_QPS_RESET && to == IBV_QPS_INIT)
		req = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	else if (from == IBV_QPS_INIT && to == IBV_QPS_INIT)
		opt = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	else if (from == IBV_QPS_INIT && to == IBV_QPS_RTR) {
		req = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		      IBV_QP_RQ_PSN | rc_only;
		opt = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
		      IBV_QP_PKEY_INDEX;
	} else if (from == IBV_QPS_RTR && to == IBV_QPS_RTS) {
		req = IBV_QP_SQ_PSN |
		      (rc ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC :
			    0);
		opt = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
		      IBV_QP_PATH_MIG_STATE | (rc ? IBV_QP_MIN_RNR_TIMER : 0);
	} else if (from == IBV_QPS_RTS && to == IBV_QPS_RTS) {
		opt = IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
		      IBV_QP_PATH_MIG_STATE | (rc ? IBV_QP_MIN_RNR_TIMER : 0);
	} else {
		return 0; /* to the error or reset state: nothing else */
	}
	return (mask & req) == req && !(mask & ~(req | opt)) ? 0 : EINVAL;
}

/* RC and UC: what a transition does to the NIC's QP. */
static int rc_transition(struct sv_qp *qp, enum ibv_qp_state from,
			 enum ibv_qp_state to, const struct ibv_qp_attr *attr,
			 int mask)
{
	if (to != IBV_QPS_RTR || from != IBV_QPS_INIT)
		return 0;
	if ((mask & (IBV_QP_AV | IBV_QP_DEST_QPN)) !=
	    (IBV_QP_AV | IBV_QP_DEST_QPN))
		return EINVAL;
	struct nic_peer peer = {
		.host = sv_host_of_ah(&attr->ah_attr),
		.qpn = attr->dest_qp_num,
	};

	if (peer.host == NIC_HOST_ANY)
		return EINVAL; /* no route to that GID */
	if ((mask & IBV_QP_PATH_MTU) &&
	    (attr->path_mtu < IBV_MTU_256 || attr->path_mtu > IBV_MTU_4096 ||
	     nic_qp_set_mtu(qp->nqp, 128u << attr->path_mtu)))
		return EINVAL;
	return -nic_qp_connect(qp->nqp, peer);
}

/* RC and UC: the timers and retry counts the attributes set (IBA 9.7.6):
 * a local ACK timeout of 4.096 us << timeout (0: none), retry counts
 * (rnr_retry 7: for ever), the receiver-not-ready wait this QP asks for. */
static void set_timing(struct sv_qp *qp, const struct ibv_qp_attr *attr,
		       int mask)
{
	struct nic_qp_timing t = {
		.ack_timeout_ns = attr->timeout ?
			(nm_time_ns)4096 << (attr->timeout & 31) : NM_TIME_NEVER / 2,
		.retry_count = attr->retry_cnt & 7,
		.rnr_retry = (attr->rnr_retry & 7) == SV_RNR_FOREVER ? -1 :
			     attr->rnr_retry & 7,
		.rnr_timer_ns = nic_rnr_timer_ns(attr->min_rnr_timer),
	};
	unsigned which = ((mask & IBV_QP_TIMEOUT) ? NIC_TIMING_ACK_TIMEOUT : 0) |
			 ((mask & IBV_QP_RETRY_CNT) ? NIC_TIMING_RETRY : 0) |
			 ((mask & IBV_QP_RNR_RETRY) ? NIC_TIMING_RNR_RETRY : 0) |
			 ((mask & IBV_QP_MIN_RNR_TIMER) ? NIC_TIMING_RNR_TIMER : 0);

	if (which)
		nic_qp_set_timing(qp->nqp, &t, which);
}

/* RC and UC: the PSN the first request carries (sq_psn, set for RTS) and
 * the one the responder expects first (rq_psn, set for RTR). A program
 * that gets them wrong sees what a NIC does: its requests taken for
 * duplicates, or refused out of sequence. */
static void set_psns(struct sv_qp *qp, const struct ibv_qp_attr *attr,
		     int mask)
{
	if (mask & IBV_QP_SQ_PSN)
		nic_qp_set_psn(qp->nqp, NIC_PSN_SQ, attr->sq_psn & 0xffffff);
	if (mask & IBV_QP_RQ_PSN)
		nic_qp_set_psn(qp->nqp, NIC_PSN_RQ, attr->rq_psn & 0xffffff);
}

/* UD: the Q_Key is the only attribute the NIC's QP takes. */
static int ud_transition(struct sv_qp *qp, enum ibv_qp_state from,
			 enum ibv_qp_state to, const struct ibv_qp_attr *attr,
			 int mask)
{
	int ret = ud_attrs_ok(from, to, mask);

	if (!ret && (mask & IBV_QP_QKEY))
		ret = -nic_qp_set_qkey(qp->nqp, attr->qkey);
	return ret;
}

static void keep_attrs(struct sv_qp *qp, const struct ibv_qp_attr *a,
		       int mask)
{
	struct ibv_qp_attr *k = &qp->attr;

	if (mask & IBV_QP_ACCESS_FLAGS)
		k->qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_PKEY_INDEX)
		k->pkey_index = a->pkey_index;
	if (mask & IBV_QP_PORT)
		k->port_num = a->port_num;
	if (mask & IBV_QP_QKEY)
		k->qkey = a->qkey;
	if (mask & IBV_QP_AV)
		k->ah_attr = a->ah_attr;
	if (mask & IBV_QP_PATH_MTU)
		k->path_mtu = a->path_mtu;
	if (mask & IBV_QP_TIMEOUT)
		k->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		k->retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		k->rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_RQ_PSN)
		k->rq_psn = a->rq_psn;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		k->max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		k->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_SQ_PSN)
		k->sq_psn = a->sq_psn;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		k->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_DEST_QPN)
		k->dest_qp_num = a->dest_qp_num;
}

int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask)
{
	struct sv_qp *qp = SV_CONTAINER_OF(ibqp, struct sv_qp, qp);
	enum ibv_qp_state from, to;
	int ret = 0;

	sv->lock();
	from = ibqp->state;
	to = (attr_mask & IBV_QP_STATE) ? attr->qp_state : from;
	if ((attr_mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != from)
		ret = EINVAL;
	else if ((attr_mask & IBV_QP_STATE) && !transition_ok(from, to))
		ret = EINVAL;
	else if ((attr_mask & IBV_QP_PORT) && attr->port_num != 1)
		ret = EINVAL;
	else if (!attr_values_ok(attr, attr_mask))
		ret = EINVAL;
	else if ((attr_mask & IBV_QP_PKEY_INDEX) && attr->pkey_index >= 1)
		ret = EINVAL; /* one P_Key in the table */
	else if ((attr_mask & IBV_QP_AV) && attr->ah_attr.is_global &&
		 attr->ah_attr.grh.sgid_index >= SV_GID_TABLE)
		ret = EINVAL; /* no such GID: the kernel finds none */
	else if (to == IBV_QPS_RESET)
		ret = from == IBV_QPS_RESET ? 0 : reset(qp);
	else if (to != IBV_QPS_ERR)
		ret = ibqp->qp_type == IBV_QPT_UD ?
			      ud_transition(qp, from, to, attr, attr_mask) :
		      connected_attrs_ok(ibqp->qp_type == IBV_QPT_RC, from, to,
					 attr_mask) ?:
			      rc_transition(qp, from, to, attr, attr_mask);
	if (!ret) {
		if (ibqp->qp_type != IBV_QPT_UD) {
			set_timing(qp, attr, attr_mask);
			set_psns(qp, attr, attr_mask);
		}
		if (ibqp->qp_type != IBV_QPT_UD &&
		    (attr_mask & IBV_QP_ACCESS_FLAGS))
			nic_qp_set_remote_access(
				qp->nqp, sv_remote_access(attr->qp_access_flags));
		keep_attrs(qp, attr, attr_mask);
		ibqp->state = to;
		if (to == IBV_QPS_ERR && from != IBV_QPS_ERR) {
			nic_qp_set_error(qp->nqp);
			/* Its flushes are the world's work: a program that
			 * waits for them in poll() on a channel must come in. */
			sv->posted();
		}
	}
	sv->unlock();
	return ret;
}

int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init)
{
	struct sv_qp *qp = SV_CONTAINER_OF(ibqp, struct sv_qp, qp);

	sv->lock();
	*attr = qp->attr;
	attr->qp_state = ibqp->state;
	attr->cur_qp_state = ibqp->state;
	attr->cap = qp->cap;
	attr->sq_draining = 0;
	if (init) {
		memset(init, 0, sizeof(*init));
		init->qp_context = ibqp->qp_context;
		init->send_cq = ibqp->send_cq;
		init->recv_cq = ibqp->recv_cq;
		init->srq = ibqp->srq;
		init->cap = qp->cap;
		init->qp_type = ibqp->qp_type;
		init->sq_sig_all = qp->sq_sig_all;
	}
	sv->unlock();
	return 0;
}

/* rdma_cm's transitions (sv_private.h), lock held. */
int sv_qp_connect_locked(struct ibv_qp *ibqp, uint32_t host, uint32_t qpn,
			 uint8_t retry_count, uint8_t rnr_retry,
			 uint8_t rd_atomic, uint8_t dest_rd_atomic)
{
	struct sv_qp *qp = SV_CONTAINER_OF(ibqp, struct sv_qp, qp);
	struct nic_peer peer = { host, qpn };
	struct in_addr ip = nic_ipv4_of_host(sv_world.nic, host);
	int ret;

	if (ibqp->state != IBV_QPS_INIT)
		return EINVAL;
	ret = -nic_qp_connect(qp->nqp, peer);
	if (ret)
		return ret;
	qp->attr.dest_qp_num = qpn;
	qp->attr.path_mtu = IBV_MTU_4096;
	qp->attr.ah_attr.is_global = 1;
	qp->attr.ah_attr.port_num = 1;
	qp->attr.ah_attr.grh.sgid_index = 1;
	memset(&qp->attr.ah_attr.grh.dgid, 0, sizeof(qp->attr.ah_attr.grh.dgid));
	qp->attr.ah_attr.grh.dgid.raw[10] = 0xff;
	qp->attr.ah_attr.grh.dgid.raw[11] = 0xff;
	memcpy(&qp->attr.ah_attr.grh.dgid.raw[12], &ip.s_addr, 4);
	qp->attr.retry_cnt = retry_count;
	qp->attr.rnr_retry = rnr_retry;
	qp->attr.max_rd_atomic = rd_atomic;
	qp->attr.max_dest_rd_atomic = dest_rd_atomic;
	set_timing(qp, &qp->attr, IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY);
	ibqp->state = IBV_QPS_RTS;
	return 0;
}

void sv_qp_error_locked(struct ibv_qp *ibqp)
{
	struct sv_qp *qp = SV_CONTAINER_OF(ibqp, struct sv_qp, qp);

	if (ibqp->state == IBV_QPS_ERR)
		return;
	ibqp->state = IBV_QPS_ERR;
	nic_qp_set_error(qp->nqp);
}

int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op,
			       uint32_t flags)
{
	/* An RC queue pair of the NIC model places data in order. */
	return 1;
}
