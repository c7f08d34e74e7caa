/* SPDX-License-Identifier: BSD-2-Clause
 * Queue pairs: numbering, per-peer flows, posting, and the completions the
 * NIC hands back to the glue after its CQE latency. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_errno.h>

#include "nic_internal.h"

/* ---- Completions not yet delivered ------------------------------------------ */

struct nic_pending {
	struct nic_qp         *qp;
	enum nic_pending_kind  kind;
	struct nic_completion  c;
	nm_event_id            event;
	struct nic_pending    *prev, *next;
};

/* ---- Recycled records ------------------------------------------------------- */

#define WQE_LINK offsetof(struct nic_swqe, next)
#define PENDING_LINK offsetof(struct nic_pending, next)

_Static_assert(offsetof(struct nic_swqe, wr) == 0,
	       "a request's wr comes first: nic_wqe_get clears what follows");

struct nic_swqe *nic_wqe_get(struct nic_part *part, size_t extra)
{
	struct nic_world *world = part->world;
	struct nic_swqe *w =
		extra ? NULL :
			fs_cache_get(&part->wqes, NIC_DEPOT(world, wqes),
				     WQE_LINK);

	if (w) {
		/* Its request is the caller's to fill (nic_post_send takes
		 * only the parts a request uses). */
		nic_wqe_touched(w);
		memset((char *)w + sizeof(w->wr), 0, sizeof(*w) - sizeof(w->wr));
	} else {
		w = fs_mem_calloc(world->arena, 1, sizeof(*w) + extra);
		if (!w)
			return NULL;
	}
	w->recycled = !extra;
	return w;
}

void nic_wqe_put(struct nic_part *part, struct nic_swqe *w)
{
	nic_read_ahead_release(part, &w->ahead);
	if (!w->recycled) {
		fs_mem_free(part->world->arena, w);
		return;
	}
	fs_cache_put(&part->wqes, NIC_DEPOT(part->world, wqes), WQE_LINK, w);
}

static struct nic_pending *pending_get(struct nic_part *part)
{
	struct nic_pending *p = fs_cache_get(
		&part->pendings, NIC_DEPOT(part->world, pendings), PENDING_LINK);

	if (!p)
		return fs_mem_alloc(part->world->arena, sizeof(*p));
	fs_touch_span(p, sizeof(*p));
	return p;
}

static void pending_put(struct nic_part *part, struct nic_pending *p)
{
	fs_cache_put(&part->pendings, NIC_DEPOT(part->world, pendings),
		     PENDING_LINK, p);
}

void nic_recycled_free(struct nic_world *world)
{
	for (uint32_t i = 0; i < world->part_count; i++) {
		struct nic_part *part = &world->parts[i];

		fs_cache_drain(&part->wqes, WQE_LINK, nic_free_record, world->arena);
		fs_cache_drain(&part->pendings, PENDING_LINK, nic_free_record,
			       world->arena);
		nic_read_ahead_free_all(part);
	}
	if (world->depots) {
		fs_depot_drain(&world->depots->wqes, WQE_LINK, nic_free_record,
			       world->arena);
		fs_depot_drain(&world->depots->pendings, PENDING_LINK,
			       nic_free_record, world->arena);
	}
}

static void unlink_pending(struct nic_qp *qp, struct nic_pending *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else
		qp->pending = p->next;
	if (p->next)
		p->next->prev = p->prev;
}

static void deliver_pending(nm_engine *engine, void *ctx, uint64_t arg)
{
	struct nic_pending *p = (struct nic_pending *)(uintptr_t)arg;
	struct nic_qp *qp = p->qp;

	unlink_pending(qp, p);
	p->c.time = nm_engine_now(engine);
	if (p->kind == NIC_PENDING_SEND)
		qp->outstanding--;
	nic_call_done(qp, p->kind, &p->c);
	pending_put(qp->nic->part, p);
}

void nic_complete_later(struct nic_qp *qp, enum nic_pending_kind kind,
			const struct nic_completion *c, nm_time_ns delay)
{
	struct nic_pending *p = pending_get(qp->nic->part);
	nm_time_ns now = nm_engine_now(qp->nic->engine);

	if (!p)
		abort(); /* a completion must not be lost */
	/* What a QP's failure flushes comes after the completions already
	 * on their way, the failed request's own among them, as a NIC writes
	 * the error ahead of the flushes it causes. */
	if (c->status == NIC_WR_FLUSH_ERR && qp->pending &&
	    qp->pending_until > now + delay)
		delay = qp->pending_until - now;
	if (!qp->pending || qp->pending_until < now + delay)
		qp->pending_until = now + delay;
	p->qp = qp;
	p->kind = kind;
	p->c = *c;
	p->prev = NULL;
	p->next = qp->pending;
	if (qp->pending)
		qp->pending->prev = p;
	qp->pending = p;
	if (nic_schedule(qp->nic, delay, deliver_pending, NULL,
			 (uintptr_t)p, &p->event))
		abort();
}

/* ---- Flows ------------------------------------------------------------------------- */

static size_t flow_slot(struct nic_peer peer, size_t slots)
{
	uint64_t h = ((uint64_t)peer.host << 32 | peer.qpn) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 20) & (slots - 1);
}

static int flows_grow(struct nic_qp *qp)
{
	size_t slots = qp->flow_slots ? qp->flow_slots * 2 : 16;
	struct nic_flow **fresh = fs_mem_calloc(qp->nic->world->arena, slots, sizeof(*fresh));

	if (!fresh)
		return -ENOMEM;
	for (size_t i = 0; i < qp->flow_slots; i++) {
		struct nic_flow *f = qp->flows[i], *next;

		for (; f; f = next) {
			size_t s = flow_slot(f->peer, slots);

			next = f->hash_next;
			f->hash_next = fresh[s];
			fresh[s] = f;
		}
	}
	fs_mem_free(qp->nic->world->arena, qp->flows);
	qp->flows = fresh;
	qp->flow_slots = slots;
	return 0;
}

void nic_flow_start_psns(struct nic_flow *f)
{
	f->next_psn = f->send_psn = f->acked_psn = f->high_psn =
		f->ackreq_psn = f->qp->sq_psn;
	f->epsn = f->qp->rq_psn;
}

struct nic_flow *nic_flow_get(struct nic_qp *qp, struct nic_peer peer,
			      bool create)
{
	struct nic_flow *f = NULL;
	size_t s;

	if (qp->flow_slots) {
		fs_touch(&qp->flows[flow_slot(peer, qp->flow_slots)]);
		for (f = qp->flows[flow_slot(peer, qp->flow_slots)]; f;
		     f = f->hash_next) {
			fs_touch_span(f, offsetof(struct nic_flow, atomic_replay));
			if (f->peer.host == peer.host && f->peer.qpn == peer.qpn)
				return f;
		}
	}
	if (!create)
		return NULL;
	if ((qp->flow_count + 1) * 2 > qp->flow_slots && flows_grow(qp))
		return NULL;
	f = fs_mem_calloc(qp->nic->world->arena, 1, sizeof(*f));
	if (!f)
		return NULL;
	f->peer = peer;
	f->qp = qp;
	f->rnr_retries = qp->tp.rnr_retry;
	nic_flow_start_psns(f);
	s = flow_slot(peer, qp->flow_slots);
	f->hash_next = qp->flows[s];
	qp->flows[s] = f;
	qp->flow_count++;
	return f;
}

/* ---- Queue pairs ------------------------------------------------------------------- */

static int qpn_alloc(struct nic *nic, struct nic_qp *qp)
{
	struct nic_qp_table *t = &nic->qps;
	uint32_t limit = NIC_QPN_MAX - NIC_QPN_BASE + 1;

	for (uint32_t tries = 0; tries < limit; tries++) {
		uint32_t i = (t->next + tries) % limit;

		if (i >= t->count) {
			uint32_t count = t->count ? t->count * 2 : 16;
			struct nic_qp **slots;

			if (count > limit)
				count = limit;
			slots = fs_mem_realloc(nic->world->arena, t->slots, count * sizeof(*slots));
			if (!slots)
				return -ENOMEM;
			memset(slots + t->count, 0,
			       (count - t->count) * sizeof(*slots));
			t->slots = slots;
			t->count = count;
		}
		if (!t->slots[i]) {
			t->slots[i] = qp;
			t->next = i + 1;
			qp->qpn = NIC_QPN_BASE + i;
			return 0;
		}
	}
	return -ENOSPC;
}

int nic_qp_create(struct nic *nic, enum nic_qp_type type,
		  const struct nic_qp_ops *ops, void *ctx,
		  struct nic_qp **out)
{
	struct nic_qp *qp = fs_mem_calloc(nic->world->arena, 1, sizeof(*qp));
	int ret;

	if (!qp)
		return -ENOMEM;
	qp->nic = nic;
	qp->type = type;
	qp->ops = ops;
	qp->ctx = ctx;
	qp->owner = nic_proc_self(nic->world);
	qp->matcher.arena = nic->world->arena;
	qp->rq = &qp->matcher;
	qp->gen = ++nic->qp_gen;
	qp->qkey = NIC_DGRAM_QKEY;
	qp->remote_access = NIC_ACCESS_REMOTE_READ | NIC_ACCESS_REMOTE_WRITE |
			    NIC_ACCESS_REMOTE_ATOMIC;
	qp->mtu = nic->world->mtu;
	qp->tp = nic->world->transport;
	ret = qpn_alloc(nic, qp);
	if (ret) {
		fs_mem_free(nic->world->arena, qp);
		return ret;
	}
	*out = qp;
	return 0;
}

void nic_qp_destroy(struct nic_qp *qp)
{
	struct nic_world *world = qp->nic->world;
	fs_arena *arena = world->arena;

	while (qp->pending) {
		struct nic_pending *p = qp->pending;

		nm_engine_cancel(qp->nic->engine, p->event);
		unlink_pending(qp, p);
		pending_put(qp->nic->part, p);
	}
	for (size_t i = 0; i < qp->flow_slots; i++) {
		struct nic_flow *f = qp->flows[i], *next;

		for (; f; f = next) {
			next = f->hash_next;
			nic_req_flow_release(f);
			/* A receive of an SRQ half filled goes back to it:
			 * another QP takes it. */
			if (f->rx.active && f->rx.kind == 0 && qp->srq)
				nic_match_abandon(qp, f->rx.match);
			else if (f->rx.active && f->rx.kind == 0)
				nic_match_drop(qp, f->rx.match);
			for (size_t r = 0; r < NIC_ARRAY_LEN(f->atomic_replay); r++)
				fs_mem_free(arena, f->atomic_replay[r].data);
			fs_mem_free(arena, f);
		}
	}
	fs_mem_free(arena, qp->flows);
	nic_match_release(&qp->matcher);
	if (qp->srq)
		qp->srq->users--;
	nic_proc_forget_qp(qp);
	qp->nic->qps.slots[qp->qpn - NIC_QPN_BASE] = NULL;
	fs_mem_free(arena, qp);
}

int nic_qp_renumber(struct nic_qp *qp, uint32_t qpn)
{
	struct nic_qp_table *t = &qp->nic->qps;
	uint32_t i = qpn - NIC_QPN_BASE;

	if (qpn == qp->qpn)
		return 0;
	if (qpn < NIC_QPN_BASE || qpn > NIC_QPN_MAX || qp->flow_count)
		return -EINVAL;
	if (i >= t->count) {
		uint32_t count = t->count ? t->count : 16;
		struct nic_qp **slots;

		while (count <= i)
			count *= 2;
		if (count > NIC_QPN_MAX - NIC_QPN_BASE + 1)
			count = NIC_QPN_MAX - NIC_QPN_BASE + 1;
		slots = fs_mem_realloc(qp->nic->world->arena, t->slots, count * sizeof(*slots));
		if (!slots)
			return -ENOMEM;
		memset(slots + t->count, 0, (count - t->count) * sizeof(*slots));
		t->slots = slots;
		t->count = count;
	}
	if (t->slots[i])
		return -EADDRINUSE;
	t->slots[qp->qpn - NIC_QPN_BASE] = NULL;
	t->slots[i] = qp;
	qp->qpn = qpn;
	return 0;
}

uint32_t nic_qp_num(const struct nic_qp *qp)
{
	return qp->qpn;
}

struct nic *nic_qp_nic(const struct nic_qp *qp)
{
	return qp->nic;
}

size_t nic_qp_outstanding(const struct nic_qp *qp)
{
	return qp->outstanding;
}

int nic_qp_connect(struct nic_qp *qp, struct nic_peer peer)
{
	if (!nic_qp_connected_type(qp))
		return -EINVAL;
	qp->rc_peer = peer;
	qp->rc_connected = true;
	return 0;
}

int nic_qp_set_psn(struct nic_qp *qp, unsigned which, uint32_t psn)
{
	struct nic_flow *f;

	if (!nic_qp_connected_type(qp) || psn > NIC_PSN_MASK)
		return -EINVAL;
	/* A flow made already (RTR takes in the peer's first requests
	 * while this side waits for RTS) moves only a side that has not
	 * been used. */
	f = qp->rc_connected ? nic_flow_get(qp, qp->rc_peer, false) : NULL;
	if (which & NIC_PSN_SQ) {
		if (f && !f->sq_head && f->next_psn == qp->sq_psn &&
		    f->high_psn == qp->sq_psn)
			f->next_psn = f->send_psn = f->acked_psn = f->high_psn =
				f->ackreq_psn = psn;
		qp->sq_psn = psn;
	}
	if (which & NIC_PSN_RQ) {
		if (f && f->epsn == qp->rq_psn)
			f->epsn = psn;
		qp->rq_psn = psn;
	}
	return 0;
}

int nic_qp_set_timing(struct nic_qp *qp, const struct nic_qp_timing *t,
		      unsigned which)
{
	if (!nic_qp_connected_type(qp))
		return -EINVAL;
	if (which & NIC_TIMING_ACK_TIMEOUT)
		qp->tp.ack_timeout_ns = t->ack_timeout_ns;
	if (which & NIC_TIMING_RETRY)
		qp->tp.retry_count = t->retry_count;
	if (which & NIC_TIMING_RNR_RETRY)
		qp->tp.rnr_retry = t->rnr_retry;
	if (which & NIC_TIMING_RNR_TIMER)
		qp->tp.rnr_timeout_ns = t->rnr_timer_ns;
	return 0;
}

void nic_qp_imm_takes_receive(struct nic_qp *qp)
{
	qp->imm_takes_receive = true;
}

void nic_qp_nak_long_messages(struct nic_qp *qp)
{
	qp->nak_long_messages = true;
}

int nic_qp_set_mtu(struct nic_qp *qp, uint32_t bytes)
{
	if (bytes < 256 || (bytes & (bytes - 1)) || qp->flow_count)
		return -EINVAL;
	qp->mtu = bytes < qp->nic->world->mtu ? bytes : qp->nic->world->mtu;
	return 0;
}

int nic_qp_set_qkey(struct nic_qp *qp, uint32_t qkey)
{
	if (qp->type != NIC_QP_UD)
		return -EINVAL;
	qp->qkey = qkey;
	return 0;
}

static size_t sge_total(const struct nic_wr *wr)
{
	size_t len = 0;

	for (size_t i = 0; i < wr->sge_count; i++)
		len += wr->sge[i].len;
	return len;
}

static bool is_atomic_wr(const struct nic_wr *wr)
{
	return wr->opcode == NIC_WR_ATOMIC ||
	       wr->opcode == NIC_WR_FETCH_ATOMIC ||
	       wr->opcode == NIC_WR_COMPARE_ATOMIC;
}

/* Bytes of operand and compare values an atomic carries. */
static size_t atomic_value_bytes(const struct nic_wr *wr)
{
	size_t size;

	if (!is_atomic_wr(wr))
		return 0;
	size = nic_atomic_size(wr->atomic.datatype) * wr->atomic.count;
	return (wr->atomic.operand ? size : 0) +
	       (wr->atomic.compare ? size : 0);
}

static int check_wr(const struct nic_qp *qp, const struct nic_wr *wr)
{
	if (is_atomic_wr(wr)) {
		size_t size = nic_atomic_size(wr->atomic.datatype), total = 0;

		if (wr->atomic.result_count > NIC_MAX_SGE ||
		    size * wr->atomic.count > NIC_ATOMIC_MAX_BYTES)
			return -EMSGSIZE;
		/* Each target segment holds whole elements. */
		for (size_t i = 0; i < wr->rma_count && i < NIC_MAX_SGE; i++) {
			if (!size || !wr->rma[i].len || wr->rma[i].len % size)
				return -EINVAL;
			total += wr->rma[i].len;
		}
		if (!wr->rma_count || total != size * wr->atomic.count)
			return -EINVAL;
	}
	if (wr->sge_count > NIC_MAX_SGE || wr->rma_count > NIC_MAX_SGE)
		return -EINVAL;
	if ((wr->flags & NIC_WR_INLINE) && sge_total(wr) > NIC_INLINE_MAX)
		return -EINVAL;
	if ((wr->opcode == NIC_WR_WRITE || wr->opcode == NIC_WR_READ) &&
	    !wr->rma_count)
		return -EINVAL;
	/* A QP in error flushes what is posted, connected or not. */
	if (nic_qp_connected_type(qp) && !qp->rc_connected && !qp->in_error)
		return -ENOTCONN;
	/* Unreliable connections carry sends and writes only. */
	if (qp->type == NIC_QP_UC && wr->opcode != NIC_WR_SEND &&
	    wr->opcode != NIC_WR_WRITE)
		return -EINVAL;
	return 0;
}

/* A request posted to a QP in error completes at once, flushed. */
static void flush_now(struct nic_qp *qp, const struct nic_wr *wr)
{
	struct nic_completion c = {
		.cookie = wr->wr_id,
		.status = NIC_WR_FLUSH_ERR,
		.opcode = wr->opcode,
	};

	qp->outstanding++;
	nic_complete_later(qp, NIC_PENDING_SEND, &c, 0);
}

/* The request owns its operand and compare values from now on. */
static void keep_atomic_values(struct nic_swqe *wqe)
{
	struct nic_atomic *a = &wqe->wr.atomic;
	size_t size = nic_atomic_size(a->datatype) * a->count;
	uint8_t *p = wqe->atomic_values;

	if (a->operand) {
		memcpy(p, a->operand, size);
		a->operand = p;
		p += size;
	}
	if (a->compare) {
		memcpy(p, a->compare, size);
		a->compare = p;
	}
}

/* On a shared world a small send's bytes are taken at the post, by the
 * poster, as inline data: whichever process builds the packet then finds
 * them in the world's memory rather than reading the poster's (a system
 * call per packet, ~1 µs). A NIC may read a send's buffer at any time
 * before the send completes. */
static bool stage_at_post(const struct nic_qp *qp, const struct nic_wr *wr)
{
	return nic_world_shared(qp->nic->world) &&
	       (wr->opcode == NIC_WR_SEND || wr->opcode == NIC_WR_WRITE) &&
	       sge_total(wr) <= NIC_INLINE_MAX;
}

/* Copies what the NIC reads of a request (checked by check_wr): a whole
 * nic_wr is eight cache lines, of which a small send uses three. The
 * atomic part of another request is left as the record had it: only
 * atomics read it (build_atomic, land_result, mr_hold). */
static void wr_take(struct nic_wr *dst, const struct nic_wr *src)
{
	memcpy(dst, src, offsetof(struct nic_wr, sge));
	memcpy(dst->sge, src->sge, src->sge_count * sizeof(src->sge[0]));
	dst->rma_count = src->rma_count;
	memcpy(dst->rma, src->rma, src->rma_count * sizeof(src->rma[0]));
	if (is_atomic_wr(src))
		dst->atomic = src->atomic;
}

int nic_post_send(struct nic_qp *qp, const struct nic_wr *wr)
{
	struct nic_peer peer = nic_qp_connected_type(qp) ? qp->rc_peer : wr->peer;
	struct nic_swqe *wqe;
	struct nic_flow *flow;
	int ret = check_wr(qp, wr);

	if (ret)
		return ret;
	if (qp->in_error) {
		flush_now(qp, wr);
		return 0;
	}
	if (qp->type == NIC_QP_UD && wr->opcode != NIC_WR_SEND)
		return -EINVAL;
	flow = nic_flow_get(qp, peer, true);
	wqe = nic_wqe_get(qp->nic->part, atomic_value_bytes(wr));
	if (!flow || !wqe) {
		if (wqe)
			nic_wqe_put(qp->nic->part, wqe);
		return -ENOMEM;
	}
	wr_take(&wqe->wr, wr);
	wqe->wr.peer = peer;
	wqe->len = sge_total(wr);
	if ((wr->flags & NIC_WR_INLINE) || stage_at_post(qp, wr)) {
		/* The caller's buffers may be reused as soon as we return. */
		uint8_t *p = wqe->wr.inline_data;

		for (size_t i = 0; i < wr->sge_count; i++) {
			if (wr->sge[i].len)
				memcpy(p, wr->sge[i].addr, wr->sge[i].len);
			p += wr->sge[i].len;
		}
		wqe->wr.sge_count = 1;
		wqe->wr.sge[0].addr = wqe->wr.inline_data;
		wqe->wr.sge[0].len = wqe->len;
		wqe->wr.sge[0].mr = NULL;
	}
	if (is_atomic_wr(wr))
		keep_atomic_values(wqe);
	qp->outstanding++;
	if (qp->type == NIC_QP_UD) {
		wqe->flow = flow;
		ret = nic_ud_post(qp, wqe);
		if (ret) {
			qp->outstanding--;
			nic_wqe_put(qp->nic->part, wqe);
		}
		return ret;
	}
	nic_req_post(flow, wqe);
	return 0;
}

int nic_post_recv(struct nic_qp *qp, const struct nic_recv *recv)
{
	if (recv->sge_count > NIC_MAX_SGE || qp->srq)
		return -EINVAL;
	if (qp->in_error) {
		struct nic_completion c = {
			.cookie = recv->cookie,
			.status = NIC_WR_FLUSH_ERR,
		};

		nic_complete_later(qp, NIC_PENDING_RECV, &c, 0);
		return 0;
	}
	return nic_match_post(qp, recv);
}

/* The receive a message of flow f was landing in is flushed (an SRQ's as
 * well: the QP had taken it), and the flow takes no more of that message. */
static void flush_landing(struct nic_qp *qp, struct nic_flow *f)
{
	if (f->rx.active && f->rx.kind == 0 && f->rx.match) {
		nic_match_flush_taken(qp, f->rx.match);
		memset(&f->rx, 0, sizeof(f->rx));
	}
}

void nic_qp_abandon_partial(struct nic_qp *qp, uint32_t host)
{
	for (size_t i = 0; i < qp->flow_slots; i++)
		for (struct nic_flow *f = qp->flows[i]; f; f = f->hash_next)
			if (f->peer.host == host)
				flush_landing(qp, f);
}

void nic_qp_fail(struct nic_qp *qp, enum nic_status why)
{
	if (qp->in_error)
		return;
	qp->in_error = true;
	for (size_t i = 0; i < qp->flow_slots; i++)
		for (struct nic_flow *f = qp->flows[i]; f; f = f->hash_next) {
			nic_req_flush(f);
			flush_landing(qp, f);
		}
	/* A shared receive queue's other receives stay for its other QPs. */
	if (!qp->srq)
		nic_match_flush(qp);
	nic_call_fatal(qp, why);
}

void nic_qp_set_error(struct nic_qp *qp)
{
	nic_qp_fail(qp, NIC_WR_FLUSH_ERR);
}

bool nic_qp_in_error(const struct nic_qp *qp)
{
	return qp->in_error;
}

bool nic_qp_failed_as_responder(const struct nic_qp *qp)
{
	return qp->failed_as_responder;
}

int nic_cancel_recv(struct nic_qp *qp, uint64_t cookie)
{
	return nic_match_cancel(qp, cookie);
}

const char *nic_status_str(enum nic_status status)
{
	static const char *const text[NIC_STATUS_COUNT] = {
		[NIC_OK] = "success",
		[NIC_LOC_PROT_ERR] = "local protection error: a buffer is not "
				     "covered by a registered region with the "
				     "needed access",
		[NIC_REM_ACCESS_ERR] = "remote access error: the target "
				       "rejected the key, the address range or "
				       "the access rights",
		[NIC_REM_INV_REQ_ERR] = "remote invalid request: the target "
					"could not parse the request",
		[NIC_REM_OP_ERR] = "remote operation error: the target could "
				   "not complete the operation",
		[NIC_RETRY_EXC_ERR] = "transport retry counter exceeded: no "
				      "acknowledgement from the peer",
		[NIC_RNR_RETRY_EXC_ERR] = "receiver-not-ready retry counter "
					  "exceeded: the peer posted no "
					  "receive buffer",
		[NIC_WR_FLUSH_ERR] = "operation flushed (cancelled or the "
				     "endpoint is in error)",
		[NIC_TRUNCATED] = "message truncated: the receive buffer is "
				  "too small",
	};

	return (unsigned)status < NIC_STATUS_COUNT ? text[status] : "unknown";
}

int nic_status_errno(enum nic_status status)
{
	switch (status) {
	case NIC_OK: return 0;
	case NIC_LOC_PROT_ERR: return FI_EACCES;
	case NIC_REM_ACCESS_ERR: return FI_EACCES;
	case NIC_REM_INV_REQ_ERR: return FI_EINVAL;
	case NIC_REM_OP_ERR: return FI_EREMOTEIO;
	case NIC_RETRY_EXC_ERR: return FI_ETIMEDOUT;
	case NIC_RNR_RETRY_EXC_ERR: return FI_ENORX;
	case NIC_WR_FLUSH_ERR: return FI_ECANCELED;
	case NIC_TRUNCATED: return FI_ETRUNC;
	default: return FI_EIO;
	}
}

void nic_qp_set_remote_access(struct nic_qp *qp, uint32_t access)
{
	qp->remote_access = access & (NIC_ACCESS_REMOTE_READ |
				      NIC_ACCESS_REMOTE_WRITE |
				      NIC_ACCESS_REMOTE_ATOMIC);
}

void nic_qp_set_pd(struct nic_qp *qp, uint32_t pd)
{
	qp->pd = pd;
}
