/* SPDX-License-Identifier: BSD-2-Clause
 * The requester: turns posted work requests into packets, keeps a window of
 * unacknowledged PSNs per peer, and retransmits (go-back-N) on a sequence
 * NAK, a lost response, or an ACK timeout.
 *
 * PSN space of one flow (unwrapped 32-bit here, 24-bit on the wire):
 *
 *     acked_psn          send_psn            next_psn
 *   ----|------------------|-------------------|------->
 *   done | sent, unacked   | posted, not sent  | future
 *
 * A send or write takes one PSN per packet; a read takes one per response
 * packet (its request carries the first); an atomic takes one. Packets are
 * built from the work request whenever they are (re)sent, so nothing but
 * the request is kept.
 *
 * A flow fails as a whole when the retry budget is spent: every request on
 * it completes with NIC_RETRY_EXC_ERR and the flow starts a new epoch, whose
 * packets the peer recognises as a fresh start.
 *
 * A UC flow (unreliable connected) builds the same packets in the UC
 * transport, asks for no ACK and keeps no window: a request completes once
 * its last packet is built, each packet carrying its own copy of the data.
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_domain.h>

#include "nic_internal.h"

static struct nic_world *flow_world(const struct nic_flow *flow)
{
	return flow->qp->nic->world;
}

static struct nic_part *flow_part(const struct nic_flow *flow)
{
	return flow->qp->nic->part;
}

static nm_engine *flow_engine(const struct nic_flow *flow)
{
	return flow->qp->nic->engine;
}

static uint32_t mtu_of(const struct nic_flow *flow)
{
	return flow->qp->mtu;
}

static uint32_t packets_for(uint64_t bytes, uint32_t mtu)
{
	return bytes ? (uint32_t)((bytes + mtu - 1) / mtu) : 1;
}

/* Real RoCE atomics exist for one 64-bit compare-swap or fetch-add; every
 * other atomic travels in a single SEND with the fabsim header. A sum that
 * returns nothing does too: the target counts it as a write, a fetch-add
 * as a read (fi_endpoint(3), FI_REMOTE_WRITE and FI_REMOTE_READ), and a
 * fetch-add on the wire cannot say that its result is not wanted. */
static bool is_native_atomic(const struct nic_wr *wr)
{
	const struct nic_atomic *a = &wr->atomic;

	if (a->count != 1 || wr->rma_count != 1 ||
	    (a->datatype != FI_UINT64 && a->datatype != FI_INT64))
		return false;
	if (wr->opcode == NIC_WR_COMPARE_ATOMIC)
		return a->op == FI_CSWAP;
	return wr->opcode == NIC_WR_FETCH_ATOMIC && a->op == FI_SUM;
}

_Static_assert(NIC_MAX_SGE <= NIC_ATOMIC_DEPTH,
	       "an atomic request's packets fit in the atomic depth");

static bool is_atomic(const struct nic_swqe *w)
{
	return w->wr.opcode == NIC_WR_ATOMIC ||
	       w->wr.opcode == NIC_WR_FETCH_ATOMIC ||
	       w->wr.opcode == NIC_WR_COMPARE_ATOMIC;
}

/* Operations whose completion waits for a response rather than an ACK. */
static bool wants_response(const struct nic_swqe *w)
{
	return w->wr.opcode == NIC_WR_READ || is_atomic(w);
}

static uint32_t packets_of_wqe(const struct nic_flow *flow,
			     const struct nic_swqe *w)
{
	uint32_t mtu = mtu_of(flow), n = 0;

	switch (w->wr.opcode) {
	case NIC_WR_SEND: {
		uint64_t bytes = w->len;

		if (w->wr.flags & NIC_WR_TAGGED)
			bytes += NIC_TAG_HDR_WIRE;
		return packets_for(bytes, mtu);
	}
	case NIC_WR_WRITE:
	case NIC_WR_READ:
		for (size_t i = 0; i < w->wr.rma_count; i++)
			n += packets_for(w->wr.rma[i].len, mtu);
		return n;
	default:
		/* An atomic: one request per target segment. */
		return w->wr.rma_count ? (uint32_t)w->wr.rma_count : 1;
	}
}

/* ---- Work request bookkeeping -------------------------------------------------- */

/* Bytes of operand before target segment `seg` of an atomic. */
static size_t atomic_offset(const struct nic_wr *wr, size_t seg)
{
	size_t off = 0;

	for (size_t i = 0; i < seg; i++)
		off += wr->rma[i].len;
	return off;
}

/* Scatters original values, `offset` bytes into an atomic's result, over
 * its result buffers. */
static void land_result(const struct nic *nic, const struct nic_atomic *a,
			size_t offset, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < a->result_count && len; i++) {
		size_t room = a->result[i].len, n;

		if (offset >= room) {
			offset -= room;
			continue;
		}
		n = room - offset < len ? room - offset : len;
		nic_dma_write(nic, (uint8_t *)a->result[i].addr + offset, p, n);
		offset = 0;
		p += n;
		len -= n;
	}
}

static void mr_hold(struct nic_swqe *w, int delta)
{
	for (size_t i = 0; i < w->wr.sge_count; i++)
		if (w->wr.sge[i].mr) {
			fs_touch(w->wr.sge[i].mr);
			w->wr.sge[i].mr->busy += delta;
		}
	for (size_t i = 0; is_atomic(w) && i < w->wr.atomic.result_count; i++)
		if (w->wr.atomic.result[i].mr)
			w->wr.atomic.result[i].mr->busy += delta;
}

static void complete_wqe(struct nic_flow *flow, struct nic_swqe *w,
			 enum nic_status status)
{
	struct nic_completion c = {
		.cookie = w->wr.wr_id,
		.status = status,
		.opcode = w->wr.opcode,
		.len = w->len,
		.source = flow->peer,
	};

	mr_hold(w, -1);
	if (w->atomics_sent) {
		/* Room for atomics that waited for their turn. */
		flow->atomics_out -= w->atomics_sent;
		w->atomics_sent = 0;
		nic_flow_wants_tx(flow);
	}
	nic_complete_later(flow->qp, NIC_PENDING_SEND, &c,
			   flow_world(flow)->recv_overhead_ns);
}

static struct nic_swqe *pop_head(struct nic_flow *flow)
{
	struct nic_swqe *w = flow->sq_head;

	if (flow->cursor == w)
		flow->cursor = NULL;
	flow->sq_head = w->next;
	if (!flow->sq_head)
		flow->sq_tail = NULL;
	return w;
}

/* The request holding PSN p (p in [acked_psn, next_psn)). Lookups walk
 * forward from the last one found, so sending a long queue costs O(1) per
 * packet. */
static struct nic_swqe *wqe_of(struct nic_flow *flow, uint32_t p)
{
	struct nic_swqe *w = flow->cursor;

	if (!w || (int32_t)(p - w->psn_first) < 0)
		w = flow->sq_head;
	for (; w; w = w->next) {
		if (p - w->psn_first < w->psn_count) {
			flow->cursor = w;
			return w;
		}
	}
	return NULL;
}

/* ---- Timer -------------------------------------------------------------------------- */

static void on_timer(nm_engine *engine, void *ctx, uint64_t arg);

static void timer_cancel(struct nic_flow *flow)
{
	if (flow->timer != NM_EVENT_NONE) {
		nm_engine_cancel(flow_engine(flow), flow->timer);
		flow->timer = NM_EVENT_NONE;
	}
	flow->timer_due = NM_TIME_NEVER;
}

/* (Re)starts the timer. Most calls only push the deadline later: the event
 * already scheduled then just moves itself when it fires, which spares the
 * engine a cancel and a schedule per ACK. */
static void timer_arm(struct nic_flow *flow, nm_time_ns delay)
{
	nm_time_ns due = nm_engine_now(flow_engine(flow)) + delay;

	flow->timer_due = due;
	if (flow->timer != NM_EVENT_NONE && flow->timer_at <= due)
		return;
	if (flow->timer != NM_EVENT_NONE)
		nm_engine_cancel(flow_engine(flow), flow->timer);
	flow->timer_at = due;
	nic_schedule(flow->qp->nic, delay, on_timer, flow, 0, &flow->timer);
}

/* ---- Building packets ------------------------------------------------------------------ */

/* Points pkt at bytes [offset, offset+len) of the request's local data,
 * copying when they straddle buffers. */
static struct nic_pkt *data_packet(struct nic_flow *flow,
				   struct nic_swqe *w, size_t offset,
				   size_t len)
{
	struct nic_world *world = flow_world(flow);
	const struct nic_sge *sge = w->wr.sge;
	size_t i = 0, skip = offset;
	struct nic_pkt *pkt;

	if (len == 0)
		return nic_pkt_alloc(flow_part(flow), false);
	while (skip >= sge[i].len) {
		skip -= sge[i].len;
		i++;
	}
	if (sge[i].len - skip >= len && !nic_world_shared(world) &&
	    flow->qp->type != NIC_QP_UC) {
		pkt = nic_pkt_alloc(flow_part(flow), false);
		pkt->payload = (const uint8_t *)sge[i].addr + skip;
		pkt->payload_len = (uint32_t)len;
		return pkt;
	}
	pkt = nic_pkt_alloc(flow_part(flow), true);
	for (size_t done = 0; done < len; i++, skip = 0) {
		size_t n = sge[i].len - skip;

		if (n > len - done)
			n = len - done;
		nic_dma_read_ahead(flow->qp->nic, &w->ahead, pkt->owned + done,
				   (const uint8_t *)sge[i].addr + skip, n,
				   sge[i].len - skip);
		done += n;
	}
	/* Its last bytes read: the buffer goes (a retransmission reads
	 * again). */
	if (offset + len == w->len)
		nic_read_ahead_release(flow_part(flow), &w->ahead);
	pkt->payload_len = (uint32_t)len;
	return pkt;
}

static enum nic_pos position(uint32_t index, uint32_t count)
{
	if (count == 1)
		return NIC_POS_ONLY;
	if (index == 0)
		return NIC_POS_FIRST;
	return index + 1 == count ? NIC_POS_LAST : NIC_POS_MIDDLE;
}

int nic_op_for(int write, enum nic_pos pos, int imm)
{
	static const int send[] = { NIC_OP_SEND_FIRST, NIC_OP_SEND_MIDDLE,
				    NIC_OP_SEND_LAST, NIC_OP_SEND_ONLY };
	static const int rdma[] = { NIC_OP_WRITE_FIRST, NIC_OP_WRITE_MIDDLE,
				    NIC_OP_WRITE_LAST, NIC_OP_WRITE_ONLY };
	int op = write ? rdma[pos] : send[pos];

	if (imm && (pos == NIC_POS_LAST || pos == NIC_POS_ONLY))
		op += 1; /* each *_IMM opcode follows its plain one */
	return op;
}

static struct nic_pkt *build_send(struct nic_flow *flow, struct nic_swqe *w,
				  uint32_t index)
{
	uint32_t mtu = mtu_of(flow);
	bool tagged = w->wr.flags & NIC_WR_TAGGED;
	size_t hdr = tagged ? NIC_TAG_HDR_WIRE : 0;
	/* The header takes the front of the first packet. */
	size_t start = index ? (size_t)index * mtu - hdr : 0;
	size_t room = index ? mtu : mtu - hdr;
	size_t len = w->len - start < room ? w->len - start : room;
	struct nic_pkt *pkt = data_packet(flow, w, start, len);
	enum nic_pos pos = position(index, w->psn_count);

	pkt->opcode = nic_op_for(0, pos, w->wr.flags & NIC_WR_IMM);
	if (nic_op_is_last(pkt->opcode) && (w->wr.flags & NIC_WR_SOLICITED))
		pkt->flags |= NIC_PKT_SOLICITED;
	if (index == 0 && tagged) {
		pkt->flags |= NIC_PKT_FABSIM_HDR;
		pkt->fabsim.kind = NIC_FABSIM_TAGGED_SEND;
		pkt->fabsim.tag = w->wr.tag;
		/* TR_TAG_F_CQ_DATA: the message brings remote CQ data. */
		pkt->fabsim.tag_flags = (w->wr.flags & NIC_WR_IMM) ? 1 : 0;
	}
	return pkt;
}

/* Segment of an RDMA request holding packet `index`, and the packet's place
 * in it. */
static size_t rma_locate(const struct nic_swqe *w, uint32_t mtu,
			 uint32_t index, uint32_t *in_seg, size_t *local_off)
{
	size_t seg = 0, off = 0;

	for (; seg < w->wr.rma_count; seg++) {
		uint32_t n = packets_for(w->wr.rma[seg].len, mtu);

		if (index < n)
			break;
		index -= n;
		off += w->wr.rma[seg].len;
	}
	*in_seg = index;
	*local_off = off;
	return seg;
}

static struct nic_pkt *build_write(struct nic_flow *flow, struct nic_swqe *w,
				   uint32_t index)
{
	uint32_t mtu = mtu_of(flow), in_seg;
	size_t off, seg = rma_locate(w, mtu, index, &in_seg, &off);
	const struct nic_rma_seg *r = &w->wr.rma[seg];
	uint32_t count = packets_for(r->len, mtu);
	size_t start = (size_t)in_seg * mtu;
	size_t len = r->len - start < mtu ? r->len - start : mtu;
	struct nic_pkt *pkt = data_packet(flow, w, off + start, len);
	enum nic_pos pos = position(in_seg, count);
	bool last_seg = seg + 1 == w->wr.rma_count;

	pkt->opcode = nic_op_for(1, pos, last_seg && (w->wr.flags & NIC_WR_IMM));
	if (last_seg && nic_op_is_last(pkt->opcode))
		pkt->flags |= NIC_PKT_OP_END;
	/* SE means something on a write's last packet only with immediate
	 * data, which takes a receive. */
	if (nic_op_has_imm(pkt->opcode) && (w->wr.flags & NIC_WR_SOLICITED))
		pkt->flags |= NIC_PKT_SOLICITED;
	if (pos == NIC_POS_FIRST || pos == NIC_POS_ONLY) {
		pkt->reth_va = r->addr;
		pkt->reth_key = (uint32_t)r->key;
		pkt->reth_len = (uint32_t)r->len;
	}
	return pkt;
}

/* A read request for what is still missing of the segment holding
 * response `index`. */
static struct nic_pkt *build_read(struct nic_flow *flow, struct nic_swqe *w,
				  uint32_t index)
{
	uint32_t mtu = mtu_of(flow), in_seg;
	size_t off, seg = rma_locate(w, mtu, index, &in_seg, &off);
	const struct nic_rma_seg *r = &w->wr.rma[seg];
	size_t done = (size_t)in_seg * mtu;
	struct nic_pkt *pkt = nic_pkt_alloc(flow_part(flow), false);

	pkt->opcode = NIC_OP_READ_REQUEST;
	if (seg + 1 == w->wr.rma_count)
		pkt->flags |= NIC_PKT_OP_END;
	pkt->reth_va = r->addr + done;
	pkt->reth_key = (uint32_t)r->key;
	pkt->reth_len = (uint32_t)(r->len - done);
	return pkt;
}

/* The request for target segment `index` of an atomic. */
static struct nic_pkt *build_atomic(struct nic_flow *flow, struct nic_swqe *w,
				    uint32_t index)
{
	const struct nic_atomic *a = &w->wr.atomic;
	const struct nic_rma_seg *seg = &w->wr.rma[index];
	size_t off = atomic_offset(&w->wr, index), size = seg->len;
	const uint8_t *operand = a->operand, *compare = a->compare;
	struct nic_pkt *pkt;
	uint8_t end = index + 1 == w->wr.rma_count ? NIC_PKT_OP_END : 0;

	if (is_native_atomic(&w->wr)) {
		pkt = nic_pkt_alloc(flow_part(flow), false);
		pkt->opcode = w->wr.opcode == NIC_WR_COMPARE_ATOMIC ?
				      NIC_OP_COMPARE_SWAP : NIC_OP_FETCH_ADD;
		pkt->flags |= end;
		pkt->reth_va = w->wr.rma[0].addr;
		pkt->reth_key = (uint32_t)w->wr.rma[0].key;
		memcpy(&pkt->atomic_swap, a->operand, 8);
		if (a->compare)
			memcpy(&pkt->atomic_cmp, a->compare, 8);
		return pkt;
	}
	pkt = nic_pkt_alloc(flow_part(flow), true);
	pkt->opcode = NIC_OP_SEND_ONLY;
	pkt->flags |= NIC_PKT_FABSIM_HDR | end;
	pkt->fabsim.kind = NIC_FABSIM_ATOMIC;
	pkt->fabsim.atomic_op = (uint8_t)a->op;
	pkt->fabsim.atomic_datatype = (uint8_t)a->datatype;
	pkt->fabsim.atomic_fetch = w->wr.opcode != NIC_WR_ATOMIC;
	pkt->fabsim.atomic_compare = compare != NULL;
	pkt->fabsim.count = (uint32_t)(size / nic_atomic_size(a->datatype));
	pkt->fabsim.addr = seg->addr;
	pkt->fabsim.key = seg->key;
	if (operand && size)
		memcpy(pkt->owned, operand + off, size);
	if (compare && size)
		memcpy(pkt->owned + size, compare + off, size);
	pkt->payload_len = (uint32_t)(compare ? 2 * size : size);
	return pkt;
}

static struct nic_pkt *build_psn(struct nic_flow *flow, uint32_t psn,
				 bool retransmit)
{
	struct nic_swqe *w = wqe_of(flow, psn);
	uint32_t index = psn - w->psn_first;
	const struct nic_transport_params *tp = &flow->qp->tp;
	struct nic_pkt *pkt;

	switch (w->wr.opcode) {
	case NIC_WR_SEND:
		pkt = build_send(flow, w, index);
		break;
	case NIC_WR_WRITE:
		pkt = build_write(flow, w, index);
		break;
	case NIC_WR_READ:
		pkt = build_read(flow, w, index);
		break;
	default:
		pkt = build_atomic(flow, w, index);
		break;
	}
	pkt->psn = psn;
	pkt->epoch = flow->epoch;
	pkt->src.host = flow->qp->nic->host;
	pkt->src.qpn = flow->qp->qpn;
	pkt->src_qp_gen = flow->qp->gen;
	pkt->dst = flow->peer;
	pkt->imm = w->wr.imm;
	if (flow->qp->type == NIC_QP_UC)
		pkt->opcode += NIC_OP_UC;
	else if (nic_op_is_last(pkt->opcode) ||
		 (index + 1) % tp->ack_every == 0)
		pkt->flags |= NIC_PKT_ACKREQ;
	if (retransmit)
		pkt->flags |= NIC_PKT_RETRANSMIT;
	return pkt;
}

/* A read puts all its PSNs in flight with one request. */
static uint32_t psns_covered(const struct nic_flow *flow, uint32_t psn)
{
	struct nic_swqe *w = wqe_of((struct nic_flow *)flow, psn);

	if (w->wr.opcode != NIC_WR_READ)
		return 1;
	uint32_t in_seg, mtu = mtu_of(flow);
	size_t off, seg = rma_locate(w, mtu, psn - w->psn_first, &in_seg, &off);

	return packets_for(w->wr.rma[seg].len, mtu) - in_seg;
}

/* UC: the packet just built was the last of its request, which is done. */
static void uc_sent(struct nic_flow *flow)
{
	struct nic_swqe *w = flow->sq_head;

	flow->acked_psn = flow->send_psn;
	if (flow->send_psn != w->psn_first + w->psn_count)
		return;
	complete_wqe(flow, pop_head(flow), NIC_OK);
	nic_wqe_put(flow_part(flow), w);
}

struct nic_pkt *nic_req_next(struct nic_flow *flow)
{
	const struct nic_transport_params *tp = &flow->qp->tp;
	struct nic_swqe *w;
	struct nic_pkt *pkt;

	if (flow->rnr_waiting || flow->send_psn == flow->next_psn ||
	    flow->send_psn - flow->acked_psn >= tp->window_packets)
		return NULL;
	w = wqe_of(flow, flow->send_psn);
	if (!w->ready)
		return NULL;
	/* A fenced request waits for everything before it. */
	if ((w->wr.flags & NIC_WR_FENCE) && flow->acked_psn != w->psn_first)
		return NULL;
	bool first_time = (int32_t)(flow->send_psn - flow->high_psn) >= 0;

	/* A new atomic packet waits while NIC_ATOMIC_DEPTH are unanswered:
	 * the responder remembers no more results to answer a retransmitted
	 * one with (nic_resp.c), and would have to run it twice. */
	if (first_time && is_atomic(w)) {
		if (flow->atomics_out >= NIC_ATOMIC_DEPTH)
			return NULL;
		flow->atomics_out++;
		w->atomics_sent++;
	}
	pkt = build_psn(flow, flow->send_psn, !first_time);
	flow->send_psn += psns_covered(flow, flow->send_psn);
	if (flow->qp->type == NIC_QP_UC) {
		uc_sent(flow);
		return pkt;
	}
	if ((int32_t)(flow->send_psn - flow->high_psn) > 0)
		flow->high_psn = flow->send_psn;
	/* A read or atomic request asks for its response. */
	if ((pkt->flags & NIC_PKT_ACKREQ) || wants_response(w))
		flow->ackreq_psn = flow->send_psn;
	if (flow->timer == NM_EVENT_NONE)
		timer_arm(flow, tp->ack_timeout_ns);
	return pkt;
}

/* Lets the transmit scheduler know there may be something to send. */
static void pump(struct nic_flow *flow)
{
	nic_flow_wants_tx(flow);
}

/* The NIC has fetched the request (after its send overhead): its packets
 * may go. */
static void on_ready(nm_engine *engine, void *ctx, uint64_t arg)
{
	struct nic_swqe *w = ctx;

	w->ready = true;
	w->ready_event = NM_EVENT_NONE;
	pump(w->flow);
}

void nic_req_post(struct nic_flow *flow, struct nic_swqe *w)
{
	struct nic_world *world = flow_world(flow);

	w->flow = flow;
	w->atomics_sent = 0;
	w->psn_first = flow->next_psn;
	w->psn_count = packets_of_wqe(flow, w);
	flow->next_psn += w->psn_count;
	mr_hold(w, +1);
	if (flow->sq_tail)
		flow->sq_tail->next = w;
	else
		flow->sq_head = w;
	flow->sq_tail = w;
	if (nic_schedule(flow->qp->nic, world->send_overhead_ns, on_ready, w,
			 0, &w->ready_event))
		abort();
}

/* ---- Progress ------------------------------------------------------------------------------ */

/* Completes requests fully below `psn` (ACKed sends and writes). A read or
 * atomic in the way stops it: those complete only with their response. */
static void retire_acked(struct nic_flow *flow, uint32_t psn)
{
	struct nic_swqe *w;

	while ((w = nic_wqe_touched(flow->sq_head)) && !wants_response(w) &&
	       (int32_t)(psn - (w->psn_first + w->psn_count)) >= 0) {
		flow->acked_psn = w->psn_first + w->psn_count;
		complete_wqe(flow, pop_head(flow), NIC_OK);
		nic_wqe_put(flow_part(flow), w);
	}
	/* Part of a long message. */
	if (w && !wants_response(w) && (int32_t)(psn - flow->acked_psn) > 0)
		flow->acked_psn = psn;
	/* Acknowledged packets need not be sent again. */
	if ((int32_t)(flow->send_psn - flow->acked_psn) < 0)
		flow->send_psn = flow->acked_psn;
}

static void progress_made(struct nic_flow *flow)
{
	const struct nic_transport_params *tp = &flow->qp->tp;

	/* A receiver-not-ready wait ends only with its own timer: an ACK or
	 * NAK for packets sent before it must not cancel that. */
	if (flow->rnr_waiting)
		return;
	flow->retries = 0;
	flow->rnr_retries = tp->rnr_retry;
	if (flow->send_psn == flow->acked_psn)
		timer_cancel(flow);
	else
		timer_arm(flow, tp->ack_timeout_ns);
}

static void go_back(struct nic_flow *flow, uint32_t psn)
{
	if ((int32_t)(psn - flow->acked_psn) < 0)
		psn = flow->acked_psn;
	flow->ackreq_psn = psn; /* what is sent again must ask again */
	/* Never skip into the middle of a read: ask again from its start of
	 * what is missing, which psn already is. */
	flow->send_psn = psn;
	pump(flow);
}

/* Renumbers the flow from its first PSN in a new epoch: after a failure
 * the peer sees the next packet as a fresh start. */
static void new_epoch(struct nic_flow *flow)
{
	uint32_t psn = flow->qp->sq_psn;

	flow->epoch++;
	flow->cursor = NULL;
	flow->gap_asked = false;
	/* What was sent in the old epoch gets no answer: the requests go
	 * again from the start, their atomics counted again as they do. */
	flow->atomics_out = 0;
	for (struct nic_swqe *w = flow->sq_head; w; w = w->next) {
		w->psn_first = psn;
		w->atomics_sent = 0;
		psn += w->psn_count;
	}
	flow->acked_psn = flow->send_psn = flow->high_psn = flow->qp->sq_psn;
	flow->next_psn = psn;
}

static void fail_head(struct nic_flow *flow, enum nic_status status)
{
	struct nic_swqe *w = pop_head(flow);

	if (w->ready_event != NM_EVENT_NONE)
		nm_engine_cancel(flow_engine(flow), w->ready_event);

	complete_wqe(flow, w, status);
	nic_wqe_put(flow_part(flow), w);
}

void nic_req_flush(struct nic_flow *flow)
{
	while (flow->sq_head)
		fail_head(flow, NIC_WR_FLUSH_ERR);
	timer_cancel(flow);
	flow->rnr_waiting = false;
	nic_flow_tx_release(flow);
	new_epoch(flow);
}

/* A reliable-datagram peer that cannot be reached fails alone; a
 * connected QP goes into the error state, taking everything with it. */
static void fail_all(struct nic_flow *flow, enum nic_status status)
{
	flow_part(flow)->stats.retry_exhausted++;
	if (flow->sq_head)
		fail_head(flow, status);
	if (flow->qp->type == NIC_QP_RC) {
		nic_qp_fail(flow->qp, status);
		return;
	}
	while (flow->sq_head)
		fail_head(flow, status);
	timer_cancel(flow);
	flow->rnr_waiting = false;
	new_epoch(flow);
}

static void on_timer(nm_engine *engine, void *ctx, uint64_t arg)
{
	struct nic_flow *flow = ctx;
	const struct nic_transport_params *tp = &flow->qp->tp;
	nm_time_ns now = nm_engine_now(engine);

	flow->timer = NM_EVENT_NONE;
	if (now < flow->timer_due) {
		/* The deadline moved while we waited. */
		flow->timer_at = flow->timer_due;
		nic_schedule(flow->qp->nic, flow->timer_due - now, on_timer,
			     flow, 0, &flow->timer);
		return;
	}
	if (flow->rnr_waiting) {
		flow->rnr_waiting = false;
		go_back(flow, flow->acked_psn);
		return;
	}
	if (flow->send_psn == flow->acked_psn)
		return;
	/* Nothing sent since the last acknowledgement asks for one (every
	 * request's last packet does, every ack_every-th, and every read and
	 * atomic request): the packets that will are still queued, taking
	 * turns on a busy port with other flows', and nothing is late yet. */
	if ((int32_t)(flow->ackreq_psn - flow->acked_psn) <= 0) {
		timer_arm(flow, tp->ack_timeout_ns);
		return;
	}
	flow_part(flow)->stats.timeouts++;
	if (++flow->retries > tp->retry_count) {
		fail_all(flow, NIC_RETRY_EXC_ERR);
		return;
	}
	timer_arm(flow, tp->ack_timeout_ns);
	flow->gap_asked = false;
	go_back(flow, flow->acked_psn);
}

void nic_req_on_ack(struct nic_flow *flow, const struct nic_pkt *pkt)
{
	uint8_t syndrome = pkt->aeth_syndrome;
	uint32_t before = flow->acked_psn;

	/* ACKs of packets sent before a go-back still count; PSNs never sent
	 * cannot be acknowledged. */
	if ((int32_t)(pkt->psn - flow->acked_psn) < -1 ||
	    (int32_t)(pkt->psn - flow->high_psn) >= 0)
		return;

	if (syndrome == NIC_AETH_ACK) {
		retire_acked(flow, pkt->psn + 1);
		/* An ACK past an unanswered read means its response was lost. */
		if (flow->sq_head && wants_response(flow->sq_head) &&
		    (int32_t)(pkt->psn - flow->sq_head->psn_first) >= 0)
			go_back(flow, flow->acked_psn);
	} else if (syndrome == NIC_AETH_NAK_SEQ) {
		/* pkt->psn is what the responder expects next. */
		retire_acked(flow, pkt->psn);
		go_back(flow, pkt->psn);
	} else if ((syndrome & 0xe0) == NIC_AETH_RNR_NAK) {
		retire_acked(flow, pkt->psn);
		if (flow->rnr_retries == 0) {
			fail_head(flow, NIC_RNR_RETRY_EXC_ERR);
			if (flow->qp->type == NIC_QP_RC) {
				nic_qp_fail(flow->qp, NIC_RNR_RETRY_EXC_ERR);
				return;
			}
			new_epoch(flow);
			pump(flow);
			return;
		}
		if (flow->rnr_retries > 0)
			flow->rnr_retries--;
		flow->rnr_waiting = true;
		flow->send_psn = flow->acked_psn;
		/* As long as the responder's NAK says. */
		timer_arm(flow, nic_rnr_timer_ns(syndrome & 0x1f));
		return;
	} else {
		/* A fatal NAK names the failed request; the responder has
		 * already stepped over its PSNs. */
		enum nic_status status =
			syndrome == NIC_AETH_NAK_REM_ACCESS ? NIC_REM_ACCESS_ERR :
			syndrome == NIC_AETH_NAK_INV_REQ ? NIC_REM_INV_REQ_ERR :
							   NIC_REM_OP_ERR;

		retire_acked(flow, pkt->psn);
		/* It may name a later packet of the request (a send longer
		 * than its receive is found at its last). */
		if (flow->sq_head &&
		    pkt->psn - flow->sq_head->psn_first < flow->sq_head->psn_count) {
			struct nic_swqe *w = flow->sq_head;

			flow->acked_psn = w->psn_first + w->psn_count;
			if ((int32_t)(flow->send_psn - flow->acked_psn) < 0)
				flow->send_psn = flow->acked_psn;
			fail_head(flow, status);
			if (flow->qp->type == NIC_QP_RC) {
				nic_qp_fail(flow->qp, status);
				return;
			}
		}
	}
	if (flow->acked_psn != before || syndrome != NIC_AETH_ACK)
		progress_made(flow);
	pump(flow);
}

static void read_land(struct nic_flow *flow, struct nic_swqe *w,
		      const struct nic_pkt *pkt)
{
	uint32_t mtu = mtu_of(flow), in_seg;
	size_t off, seg = rma_locate(w, mtu, pkt->psn - w->psn_first, &in_seg,
				     &off);
	size_t at = off + (size_t)in_seg * mtu, len = pkt->payload_len;
	const uint8_t *src = pkt->payload;

	(void)seg;
	for (size_t i = 0; i < w->wr.sge_count && len; i++) {
		size_t sl = w->wr.sge[i].len;

		if (at >= sl) {
			at -= sl;
			continue;
		}
		size_t n = sl - at < len ? sl - at : len;

		nic_dma_write(flow->qp->nic, (uint8_t *)w->wr.sge[i].addr + at,
			      src, n);
		src += n;
		len -= n;
		at = 0;
	}
}

void nic_req_on_response(struct nic_flow *flow, const struct nic_pkt *pkt)
{
	struct nic_swqe *w;

	/* A response acknowledges every request before it. */
	retire_acked(flow, pkt->psn);
	w = flow->sq_head;
	if (pkt->psn != flow->acked_psn || !w || !wants_response(w)) {
		/* A response was lost: ask again from it, once. The responses
		 * still coming behind the loss would each ask again, and every
		 * request draws a whole train of responses: a long read on a
		 * lossy path would feed on itself. A lost re-request is the
		 * timer's business. */
		if ((int32_t)(pkt->psn - flow->acked_psn) > 0 &&
		    !(flow->gap_asked && flow->gap_psn == flow->acked_psn)) {
			flow->gap_asked = true;
			flow->gap_psn = flow->acked_psn;
			go_back(flow, flow->acked_psn);
		}
		return;
	}
	if (pkt->aeth_syndrome != NIC_AETH_ACK && pkt->opcode != NIC_OP_READ_RESP_MIDDLE) {
		uint8_t s = pkt->aeth_syndrome;

		enum nic_status st = s == NIC_AETH_NAK_REM_ACCESS ?
					     NIC_REM_ACCESS_ERR : NIC_REM_OP_ERR;

		flow->acked_psn = w->psn_first + w->psn_count;
		fail_head(flow, st);
		if (flow->qp->type == NIC_QP_RC) {
			nic_qp_fail(flow->qp, st);
			return;
		}
		progress_made(flow);
		pump(flow);
		return;
	}
	if (w->wr.opcode == NIC_WR_READ) {
		read_land(flow, w, pkt);
	} else if (pkt->opcode == NIC_OP_ATOMIC_ACK) {
		land_result(flow->qp->nic, &w->wr.atomic, 0, &pkt->atomic_orig,
			    8);
	} else {
		land_result(flow->qp->nic, &w->wr.atomic,
			    atomic_offset(&w->wr, pkt->psn - w->psn_first),
			    pkt->payload, pkt->payload_len);
	}
	flow->acked_psn++;
	if (flow->acked_psn == w->psn_first + w->psn_count) {
		nic_sched_landed(flow_world(flow), flow->qp->nic->owner);
		complete_wqe(flow, pop_head(flow), NIC_OK);
		nic_wqe_put(flow_part(flow), w);
		retire_acked(flow, flow->acked_psn);
	}
	progress_made(flow);
	pump(flow);
}

void nic_req_flow_release(struct nic_flow *flow)
{
	timer_cancel(flow);
	nic_flow_tx_release(flow);
	while (flow->sq_head) {
		struct nic_swqe *w = pop_head(flow);

		if (w->ready_event != NM_EVENT_NONE)
			nm_engine_cancel(flow_engine(flow),
					 w->ready_event);
		mr_hold(w, -1);
		nic_wqe_put(flow_part(flow), w);
	}
}
