/* SPDX-License-Identifier: BSD-2-Clause
 * The responder: what a NIC does with each packet that reaches it.
 *
 * Requests are taken strictly in PSN order per peer. A packet ahead of the
 * expected PSN draws one sequence NAK per gap and is dropped; one behind it
 * is a duplicate: it is acknowledged again (reads are answered again,
 * atomics replay their recorded result), never applied twice. A send that
 * finds no receive buffer and no room in the unexpected queue draws an RNR
 * NAK and is retried by the sender. A request that fails its protection
 * checks draws a fatal NAK naming its PSN, and its PSNs are stepped over so
 * that later requests go on.
 *
 * UC (unreliable connected) packets draw no answer at all: a gap in their
 * PSNs drops the message it breaks (its receive goes back first in line)
 * until the next message starts; a send that finds no receive, and a write
 * that fails its checks, are dropped whole.
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_domain.h>

#include "nic_internal.h"

/* ---- Replies ------------------------------------------------------------------ */

static struct nic_pkt *reply(struct nic_qp *qp, const struct nic_pkt *req,
			     bool owns_payload)
{
	struct nic_pkt *pkt = nic_pkt_alloc(qp->nic->part, owns_payload);

	pkt->src.host = qp->nic->host;
	pkt->src.qpn = qp->qpn;
	pkt->src_qp_gen = qp->gen;
	pkt->dst = req->src;
	pkt->epoch = req->epoch;
	return pkt;
}

static void send_ack(struct nic_qp *qp, struct nic_flow *flow,
		     const struct nic_pkt *req, uint32_t psn, uint8_t syndrome)
{
	struct nic_pkt *pkt = reply(qp, req, false);

	pkt->opcode = NIC_OP_ACK;
	pkt->psn = psn;
	pkt->aeth_syndrome = syndrome;
	pkt->aeth_msn = flow->msn;
	nic_flow_reply(flow, pkt);
}

static void nak(struct nic_qp *qp, struct nic_flow *flow,
		const struct nic_pkt *req, uint32_t psn, uint8_t syndrome)
{
	struct nic_stats *stats = &qp->nic->part->stats;

	if (syndrome == NIC_AETH_NAK_SEQ)
		stats->seq_naks++;
	else if ((syndrome & 0xe0) == NIC_AETH_RNR_NAK)
		stats->rnr_naks++;
	send_ack(qp, flow, req, psn, syndrome);
}

/* A request refused for good (its key, bounds or rights; an operation the
 * target cannot do): NAKed. On a reliable connection the responder then
 * goes to the error state, as an RC responder does, so that what the
 * requester sent after it (already on the wire, and flushed on its side
 * when the NAK arrives) is not carried out here. */
static void refuse(struct nic_qp *qp, struct nic_flow *flow,
		   const struct nic_pkt *req, uint8_t syndrome)
{
	nak(qp, flow, req, req->psn, syndrome);
	if (qp->type == NIC_QP_RC && !qp->in_error)
		qp->failed_as_responder = true;
	if (qp->type == NIC_QP_RC)
		nic_qp_fail(qp, syndrome == NIC_AETH_NAK_REM_ACCESS ?
					NIC_REM_ACCESS_ERR :
				syndrome == NIC_AETH_NAK_REM_OP ?
					NIC_REM_OP_ERR :
					NIC_REM_INV_REQ_ERR);
}

static uint32_t packets_for(uint64_t bytes, uint32_t mtu)
{
	return bytes ? (uint32_t)((bytes + mtu - 1) / mtu) : 1;
}

/* ---- Reads -------------------------------------------------------------------- */

/* False when the read is refused. */
static bool answer_read(struct nic_qp *qp, struct nic_flow *flow,
			const struct nic_pkt *req)
{
	struct nic_read_job *job;
	uint8_t *src;

	if (nic_mr_check_remote(qp, req->reth_key, req->reth_va,
				req->reth_len, NIC_ACCESS_REMOTE_READ,
				&src) != NIC_OK) {
		refuse(qp, flow, req, NIC_AETH_NAK_REM_ACCESS);
		return false;
	}
	job = fs_mem_calloc(qp->nic->world->arena, 1, sizeof(*job));
	if (!job)
		abort();
	job->epoch = req->epoch;
	job->psn = req->psn;
	job->msn = flow->msn;
	job->src = src;
	job->len = req->reth_len;
	if (flow->reads_tail)
		flow->reads_tail->next = job;
	else
		flow->reads = job;
	flow->reads_tail = job;
	nic_flow_wants_tx(flow);
	return true;
}

struct nic_pkt *nic_resp_next_read(struct nic_flow *flow)
{
	struct nic_read_job *job = flow->reads;
	struct nic_qp *qp = flow->qp;
	uint32_t mtu = qp->mtu, count;
	uint32_t i;
	size_t len;
	struct nic_pkt *pkt;

	if (!job)
		return NULL;
	count = packets_for(job->len, mtu);
	i = (uint32_t)(job->sent / mtu);
	len = job->len - job->sent < mtu ? job->len - job->sent : mtu;
	pkt = nic_pkt_alloc(qp->nic->part, true);
	pkt->src.host = qp->nic->host;
	pkt->src.qpn = qp->qpn;
	pkt->src_qp_gen = qp->gen;
	pkt->dst = flow->peer;
	pkt->epoch = job->epoch;
	pkt->opcode = count == 1 ? NIC_OP_READ_RESP_ONLY :
		      i == 0 ? NIC_OP_READ_RESP_FIRST :
		      i + 1 == count ? NIC_OP_READ_RESP_LAST :
				       NIC_OP_READ_RESP_MIDDLE;
	pkt->psn = job->psn + i;
	pkt->aeth_syndrome = NIC_AETH_ACK;
	pkt->aeth_msn = job->msn;
	/* The NIC reads target memory as it sends. */
	if (len)
		nic_dma_read_ahead(flow->qp->nic, &job->ahead, pkt->owned,
				   job->src + job->sent, len,
				   job->len - job->sent);
	pkt->payload_len = (uint32_t)len;
	job->sent += len;
	if (job->sent >= job->len) {
		flow->reads = job->next;
		if (!flow->reads)
			flow->reads_tail = NULL;
		nic_read_ahead_release(flow->qp->nic->part, &job->ahead);
		fs_mem_free(flow->qp->nic->world->arena, job);
	}
	return pkt;
}

/* ---- Atomics ------------------------------------------------------------------- */

/* Records the answer to an atomic so that a retransmitted request (whose
 * answer was lost) gets the same one instead of applying it twice. */
static void remember(struct nic_flow *flow, uint32_t psn, const void *data,
		     uint32_t len)
{
	struct nic_atomic_replay *r = &flow->atomic_replay[flow->replay_next];

	flow->replay_next = (flow->replay_next + 1) %
			    NIC_ARRAY_LEN(flow->atomic_replay);
	uint8_t *buf = fs_mem_realloc(flow->qp->nic->world->arena, r->data, len ? len : 1);

	if (!buf) {
		r->valid = false;
		return;
	}
	memcpy(buf, data, len);
	r->data = buf;
	r->len = len;
	r->psn = psn;
	r->valid = true;
}

static const struct nic_atomic_replay *recall(const struct nic_flow *flow,
					      uint32_t psn)
{
	for (size_t i = 0; i < NIC_ARRAY_LEN(flow->atomic_replay); i++) {
		const struct nic_atomic_replay *r = &flow->atomic_replay[i];

		if (r->valid && r->psn == psn)
			return r;
	}
	return NULL;
}

/* A peer's atomic changed our memory: the glue hears of it, as a read when
 * it fetched or compared (fi_endpoint(3): FI_REMOTE_READ counts "atomic
 * fetch, or atomic compare" operations), otherwise as a write. */
static void touched_by_atomic(struct nic_qp *qp, const struct nic_pkt *req,
			      uint64_t key, size_t len, bool fetched)
{
	if (!(req->flags & NIC_PKT_OP_END))
		return; /* the operation counts at its last segment */
	struct nic_completion c = {
		.flags = NIC_CQ_REMOTE_ATOMIC | (fetched ? NIC_CQ_REMOTE_READ : 0),
		.len = len,
		.source = req->src,
		.key = key,
	};

	nic_complete_later(qp, NIC_PENDING_REMOTE, &c,
			   qp->nic->world->recv_overhead_ns);
}

static void native_atomic(struct nic_qp *qp, struct nic_flow *flow,
			  const struct nic_pkt *req, bool replay)
{
	struct nic_pkt *pkt;
	uint64_t orig = 0;
	uint8_t *dst;

	if (replay) {
		const struct nic_atomic_replay *r = recall(flow, req->psn);

		if (!r)
			return; /* too old to answer: the sender will time out */
		memcpy(&orig, r->data, 8);
	} else {
		enum nic_status st = nic_mr_check_remote(
			qp, req->reth_key, req->reth_va, 8,
			NIC_ACCESS_REMOTE_ATOMIC, &dst);

		if (st != NIC_OK) {
			refuse(qp, flow, req, NIC_AETH_NAK_REM_ACCESS);
			return;
		}
		/* A misaligned atomic is an invalid request, not an access
		 * error (the IBA's class C; rxe answers it the same way). */
		if ((uintptr_t)dst & 7) {
			refuse(qp, flow, req, NIC_AETH_NAK_INV_REQ);
			return;
		}
		nic_dma_read(qp->nic, &orig, dst, 8);
		uint64_t value = req->opcode == NIC_OP_FETCH_ADD ?
					 orig + req->atomic_swap :
				 orig == req->atomic_cmp ? req->atomic_swap : orig;
		nic_dma_write(qp->nic, dst, &value, 8);
		nic_sched_landed(qp->nic->world, qp->nic->owner);
		remember(flow, req->psn, &orig, 8);
		touched_by_atomic(qp, req, req->reth_key, 8, true);
	}
	pkt = reply(qp, req, false);
	pkt->opcode = NIC_OP_ATOMIC_ACK;
	pkt->psn = req->psn;
	pkt->aeth_syndrome = NIC_AETH_ACK;
	pkt->aeth_msn = flow->msn;
	pkt->atomic_orig = orig;
	nic_flow_reply(flow, pkt);
}

static void atomic_answer(struct nic_qp *qp, struct nic_flow *flow,
			  const struct nic_pkt *req, const void *data,
			  uint32_t len)
{
	struct nic_pkt *pkt = reply(qp, req, true);

	/* The result rides a read response, as the value a fetch returns,
	 * after the fabsim atomic response header. */
	pkt->opcode = NIC_OP_READ_RESP_ONLY;
	pkt->flags |= NIC_PKT_FABSIM_HDR;
	pkt->fabsim = req->fabsim;
	pkt->fabsim.kind = NIC_FABSIM_ATOMIC_RESP;
	pkt->fabsim.atomic_fetch = len != 0;
	pkt->fabsim.atomic_compare = 0;
	pkt->psn = req->psn;
	pkt->aeth_syndrome = NIC_AETH_ACK;
	pkt->aeth_msn = flow->msn;
	if (len)
		memcpy(pkt->owned, data, len);
	pkt->payload_len = len;
	nic_flow_reply(flow, pkt);
}

/* Generic atomics (any op and datatype, up to one packet of elements). */
static void fabsim_atomic(struct nic_qp *qp, struct nic_flow *flow,
			  const struct nic_pkt *req, bool replay)
{
	const struct nic_fabsim_hdr *h = &req->fabsim;
	size_t size = nic_atomic_size(h->atomic_datatype) * h->count;
	bool compare = h->atomic_op >= FI_CSWAP && h->atomic_op <= FI_MSWAP;
	_Alignas(16) uint8_t result[NIC_ATOMIC_MAX_BYTES];
	enum nic_status st;
	uint32_t len;
	uint8_t *dst;

	if (replay) {
		const struct nic_atomic_replay *r = recall(flow, req->psn);

		if (r)
			atomic_answer(qp, flow, req, r->data, r->len);
		return;
	}
	st = size && size <= NIC_ATOMIC_MAX_BYTES &&
			     size * (compare ? 2 : 1) == req->payload_len ?
		     nic_mr_check_remote(qp, h->key, h->addr, size,
					 NIC_ACCESS_REMOTE_ATOMIC, &dst) :
		     NIC_REM_INV_REQ_ERR;
	if (st == NIC_OK) {
		_Alignas(16) uint8_t target[NIC_ATOMIC_MAX_BYTES];

		/* Read, compute, write back: target memory may be another
		 * process's. */
		nic_dma_read(qp->nic, target, dst, size);
		if (nic_atomic_apply(h->atomic_datatype, h->atomic_op,
				     h->count, target, req->payload,
				     compare ? (const uint8_t *)req->payload +
						       size :
					       NULL,
				     result)) {
			nic_dma_write(qp->nic, dst, target, size);
			nic_sched_landed(qp->nic->world, qp->nic->owner);
		} else {
			st = NIC_REM_INV_REQ_ERR;
		}
	}
	if (st != NIC_OK) {
		refuse(qp, flow, req,
		       st == NIC_REM_ACCESS_ERR ? NIC_AETH_NAK_REM_ACCESS
						: NIC_AETH_NAK_INV_REQ);
		return;
	}
	len = h->atomic_fetch ? (uint32_t)size : 0;
	remember(flow, req->psn, result, len);
	atomic_answer(qp, flow, req, result, len);
	touched_by_atomic(qp, req, h->key, size,
			  h->atomic_fetch || h->atomic_compare);
}

/* ---- Sends -------------------------------------------------------------------------- */

static void abort_rx(struct nic_qp *qp, struct nic_flow *flow)
{
	if (flow->rx.active && flow->rx.kind == 0 && flow->rx.match)
		nic_match_abandon(qp, flow->rx.match);
	memset(&flow->rx, 0, sizeof(flow->rx));
}

enum send_result { SEND_OK, SEND_NO_BUFFER, SEND_TOO_LONG, SEND_BAD_KEY };

/* SEND_NO_BUFFER: the caller NAKs receiver-not-ready; SEND_TOO_LONG: the
 * message did not fit its receive, on a QP that NAKs that; SEND_BAD_KEY:
 * the receive it took has buffers the device rejects (failed here). */
static enum send_result send_packet(struct nic_qp *qp, struct nic_flow *flow,
				    const struct nic_pkt *pkt)
{
	struct nic_rx_msg *rx = &flow->rx;

	if (nic_op_is_first(pkt->opcode)) {
		bool tagged = (pkt->flags & NIC_PKT_FABSIM_HDR) &&
			      pkt->fabsim.kind == NIC_FABSIM_TAGGED_SEND;

		abort_rx(qp, flow);
		rx->match = nic_match_incoming(qp, pkt->src, tagged,
					       pkt->fabsim.tag);
		if (!rx->match)
			return SEND_NO_BUFFER;
		if (nic_match_bad_key(rx->match)) {
			nic_match_fail_taken(qp, rx->match, NIC_LOC_PROT_ERR);
			memset(rx, 0, sizeof(*rx));
			return SEND_BAD_KEY;
		}
		rx->active = true;
		rx->kind = 0;
		rx->offset = 0;
	} else if (!rx->active || rx->kind != 0) {
		return SEND_OK; /* the start was stepped over: nothing to place */
	} else if (nic_match_bad_key(rx->match)) {
		/* Its region was deregistered while the message landed. */
		nic_match_fail_taken(qp, rx->match, NIC_LOC_PROT_ERR);
		memset(rx, 0, sizeof(*rx));
		return SEND_BAD_KEY;
	}
	nic_match_place(qp, rx->match, rx->offset, pkt->payload,
			pkt->payload_len);
	rx->offset += pkt->payload_len;
	if (nic_op_is_last(pkt->opcode)) {
		bool too_long = qp->nak_long_messages &&
				rx->match->kind == NIC_RM_POSTED &&
				rx->match->truncated;

		nic_match_finish(qp, rx->match, rx->offset,
				 nic_msg_end_flags(pkt), pkt->imm);
		memset(rx, 0, sizeof(*rx));
		flow->msn++;
		if (too_long)
			return SEND_TOO_LONG;
	}
	return SEND_OK;
}

/* ---- Writes ------------------------------------------------------------------------- */

/* false: the write failed its checks (the caller NAKs). */
enum write_result { WRITE_OK, WRITE_REFUSED, WRITE_NO_RECEIVE };

/* WRITE_REFUSED: the write failed its checks (the caller NAKs);
 * WRITE_NO_RECEIVE: its immediate data needs a receive and none is
 * posted (the caller NAKs receiver-not-ready, before this packet's data
 * is placed: the sender sends it again). */
static enum write_result write_packet(struct nic_qp *qp,
				      struct nic_flow *flow,
				      const struct nic_pkt *pkt)
{
	struct nic_rx_msg *rx = &flow->rx;
	bool last = nic_op_is_last(pkt->opcode);
	struct nic_rmatch *recv = NULL;

	if (nic_op_is_first(pkt->opcode)) {
		abort_rx(qp, flow);
		if (nic_mr_check_remote(qp, pkt->reth_key, pkt->reth_va,
					pkt->reth_len, NIC_ACCESS_REMOTE_WRITE,
					&rx->write_dst) != NIC_OK)
			return WRITE_REFUSED;
		rx->active = true;
		rx->kind = 1;
		rx->offset = 0;
		rx->total = pkt->reth_len;
		rx->key = pkt->reth_key;
	} else if (!rx->active || rx->kind != 1) {
		return WRITE_OK;
	}
	if (pkt->payload_len > rx->total - rx->offset)
		return WRITE_REFUSED; /* more data than the RETH announced */
	if (last && nic_op_has_imm(pkt->opcode) && qp->imm_takes_receive &&
	    !(recv = nic_match_take_posted(qp, pkt->src)))
		return WRITE_NO_RECEIVE;
	if (pkt->payload_len)
		nic_dma_write(qp->nic, rx->write_dst + rx->offset,
			      pkt->payload, pkt->payload_len);
	rx->offset += pkt->payload_len;
	if (!last)
		return WRITE_OK;
	nic_sched_landed(qp->nic->world, qp->nic->owner);
	if (recv) {
		nic_match_complete_write(qp, recv, rx->offset,
					 nic_msg_end_flags(pkt), pkt->imm,
					 rx->key);
	} else if (pkt->flags & NIC_PKT_OP_END) {
		struct nic_completion c = {
			.flags = NIC_CQ_REMOTE_WRITE,
			.len = rx->offset,
			.source = pkt->src,
			.key = rx->key,
		};

		if (nic_op_has_imm(pkt->opcode)) {
			c.flags |= NIC_CQ_IMM;
			c.imm = pkt->imm;
		}
		nic_complete_later(qp, NIC_PENDING_REMOTE, &c,
				   qp->nic->world->recv_overhead_ns);
	}
	memset(rx, 0, sizeof(*rx));
	flow->msn++;
	return WRITE_OK;
}

/* ---- Dispatch ------------------------------------------------------------------------- */

static bool is_response(uint8_t op)
{
	return op == NIC_OP_ACK || op == NIC_OP_ATOMIC_ACK ||
	       nic_op_is_read_resp(op);
}

/* How many PSNs a request occupies, to step over a failed one (both ends
 * of a connection use the same path MTU). */
static uint32_t request_span(const struct nic_qp *qp,
			     const struct nic_pkt *pkt)
{
	if (pkt->opcode == NIC_OP_READ_REQUEST ||
	    pkt->opcode == NIC_OP_WRITE_FIRST)
		return packets_for(pkt->reth_len, qp->mtu);
	return 1;
}

/* A sender whose QP is gone (or replaced) has freed the memory its
 * packets point into. */
static bool sender_alive(const struct nic_world *world,
			 const struct nic_pkt *pkt)
{
	struct nic *src = pkt->src.host < world->host_count ?
				  world->hosts[pkt->src.host] : NULL;
	struct nic_qp *qp = src ? nic_find_qp(src, pkt->src.qpn) : NULL;

	return qp && qp->gen == pkt->src_qp_gen;
}

static void duplicate(struct nic_qp *qp, struct nic_flow *flow,
		      const struct nic_pkt *pkt)
{
	qp->nic->part->stats.duplicates++;
	if (pkt->opcode == NIC_OP_READ_REQUEST) {
		answer_read(qp, flow, pkt);
	} else if (pkt->opcode == NIC_OP_COMPARE_SWAP ||
		   pkt->opcode == NIC_OP_FETCH_ADD) {
		native_atomic(qp, flow, pkt, true);
	} else if (pkt->flags & NIC_PKT_FABSIM_HDR &&
		   pkt->fabsim.kind == NIC_FABSIM_ATOMIC) {
		fabsim_atomic(qp, flow, pkt, true);
	} else if (pkt->flags & NIC_PKT_ACKREQ) {
		send_ack(qp, flow, pkt, flow->epsn - 1, NIC_AETH_ACK);
	}
}

static void request(struct nic_qp *qp, struct nic_flow *flow,
		    struct nic_pkt *pkt)
{
	struct nic_world *world = qp->nic->world;
	bool ok = true;

	if (pkt->opcode == NIC_OP_READ_REQUEST) {
		struct nic_completion c = { .flags = NIC_CQ_REMOTE_READ,
					    .len = pkt->reth_len,
					    .source = pkt->src,
					    .key = pkt->reth_key };
		bool answered = answer_read(qp, flow, pkt);

		flow->epsn += request_span(qp, pkt);
		/* Only what was read counts at the target (fi_cntr(3)), an
		 * operation once, at its last segment. */
		if (answered && (pkt->flags & NIC_PKT_OP_END))
			nic_complete_later(qp, NIC_PENDING_REMOTE, &c,
					   world->recv_overhead_ns);
		return;
	}
	if (pkt->opcode == NIC_OP_COMPARE_SWAP ||
	    pkt->opcode == NIC_OP_FETCH_ADD) {
		native_atomic(qp, flow, pkt, false);
		flow->epsn++;
		return;
	}
	if ((pkt->flags & NIC_PKT_FABSIM_HDR) &&
	    pkt->fabsim.kind == NIC_FABSIM_ATOMIC) {
		fabsim_atomic(qp, flow, pkt, false);
		flow->epsn++;
		return;
	}
	if (nic_op_is_send(pkt->opcode)) {
		switch (send_packet(qp, flow, pkt)) {
		case SEND_NO_BUFFER:
			nak(qp, flow, pkt, pkt->psn, NIC_AETH_RNR_NAK |
			    nic_rnr_timer_code(qp->tp.rnr_timeout_ns));
			return; /* epsn stays: the sender retries this PSN */
		case SEND_TOO_LONG:
			/* IBA 9.9.2: the requester's error as well. */
			nak(qp, flow, pkt, pkt->psn, NIC_AETH_NAK_INV_REQ);
			flow->epsn = pkt->psn + 1;
			return;
		case SEND_BAD_KEY:
			/* The responder's own failure: the requester hears a
			 * remote operational error, and both QPs fail. */
			refuse(qp, flow, pkt, NIC_AETH_NAK_REM_OP);
			return;
		case SEND_OK:
			break;
		}
	} else if (nic_op_is_write(pkt->opcode)) {
		enum write_result w = write_packet(qp, flow, pkt);

		if (w == WRITE_NO_RECEIVE) {
			nak(qp, flow, pkt, pkt->psn, NIC_AETH_RNR_NAK |
			    nic_rnr_timer_code(qp->tp.rnr_timeout_ns));
			return;
		}
		ok = w == WRITE_OK;
	}
	if (!ok) {
		refuse(qp, flow, pkt, NIC_AETH_NAK_REM_ACCESS);
		flow->epsn = pkt->psn + request_span(qp, pkt);
		memset(&flow->rx, 0, sizeof(flow->rx));
		return;
	}
	flow->epsn++;
	if (pkt->flags & NIC_PKT_ACKREQ)
		send_ack(qp, flow, pkt, pkt->psn, NIC_AETH_ACK);
}

/* A UC packet in PSN order, or the first of a message after a gap. */
static void uc_request(struct nic_qp *qp, struct nic_flow *flow,
		       const struct nic_pkt *pkt)
{
	struct nic_stats *stats = &qp->nic->part->stats;
	bool first = nic_op_is_first(pkt->opcode);

	if ((int32_t)(pkt->psn - flow->epsn) < 0)
		return; /* a copy the network made: UC never sends again */
	if (pkt->psn != flow->epsn) {
		/* Packets were lost: what they belonged to is. */
		if (flow->rx.active)
			stats->uc_dropped++;
		abort_rx(qp, flow);
	}
	flow->epsn = pkt->psn + 1;
	if (!first && !flow->rx.active)
		return; /* the rest of a message already dropped */
	if (nic_op_is_send(pkt->opcode)) {
		enum send_result r = send_packet(qp, flow, pkt);

		if (r == SEND_BAD_KEY)
			nic_qp_fail(qp, NIC_LOC_PROT_ERR); /* nobody to tell */
		if (r == SEND_OK)
			return;
	} else if (write_packet(qp, flow, pkt) == WRITE_OK) {
		return;
	}
	stats->uc_dropped++;
	memset(&flow->rx, 0, sizeof(flow->rx));
}

void nic_resp_receive(struct nic *nic, struct nic_pkt *pkt)
{
	struct nic_qp *qp = nic_find_qp(nic, pkt->dst.qpn);
	struct nic_flow *flow;

	if (pkt->dst.qpn == 1) {
		/* General services: the connection manager's MADs. */
		if (pkt->qkey == NIC_GSI_QKEY &&
		    pkt->opcode == NIC_OP_UD_SEND_ONLY)
			nic_call_mad(nic, pkt->src.host, pkt->payload,
				     pkt->payload_len);
		return;
	}
	if (!qp)
		return; /* no such queue pair: dropped, as silently as a NIC */
	if (qp->type == NIC_QP_UD) {
		if (pkt->opcode == NIC_OP_UD_SEND_ONLY ||
		    pkt->opcode == NIC_OP_UD_SEND_ONLY_IMM)
			nic_ud_receive(qp, pkt);
		return;
	}
	if (qp->in_error)
		return;
	if (nic_qp_connected_type(qp) &&
	    (pkt->src.host != qp->rc_peer.host || pkt->src.qpn != qp->rc_peer.qpn))
		return;
	/* A transport the QP is not of (a UC peer of an RC QP, or the
	 * reverse): dropped, as a NIC does. */
	if ((qp->type == NIC_QP_UC) != ((pkt->opcode & 0xe0) == NIC_OP_UC))
		return;
	if (qp->type == NIC_QP_UC) {
		flow = nic_flow_get(qp, pkt->src, true);
		if (flow)
			uc_request(qp, flow, pkt);
		return;
	}
	if (is_response(pkt->opcode)) {
		flow = nic_flow_get(qp, pkt->src, false);
		if (!flow || pkt->epoch != flow->epoch)
			return;
		if (pkt->opcode == NIC_OP_ACK)
			nic_req_on_ack(flow, pkt);
		else
			nic_req_on_response(flow, pkt);
		return;
	}
	flow = nic_flow_get(qp, pkt->src, true);
	if (!flow)
		return;
	if (pkt->epoch != flow->resp_epoch) {
		if ((int32_t)(pkt->epoch - flow->resp_epoch) < 0)
			return; /* from before the peer's last failure */
		/* The peer gave up on its old requests: start over. PSNs
		 * start from the first again, so the old atomics' results must not
		 * answer new requests of the same PSNs. */
		abort_rx(qp, flow);
		flow->resp_epoch = pkt->epoch;
		flow->epsn = qp->rq_psn;
		flow->nak_sent = false;
		for (size_t i = 0; i < NIC_ARRAY_LEN(flow->atomic_replay); i++)
			flow->atomic_replay[i].valid = false;
	}
	if ((int32_t)(pkt->psn - flow->epsn) > 0) {
		if (!flow->nak_sent) {
			flow->nak_sent = true;
			nak(qp, flow, pkt, flow->epsn, NIC_AETH_NAK_SEQ);
		}
		return;
	}
	if ((int32_t)(pkt->psn - flow->epsn) < 0) {
		duplicate(qp, flow, pkt);
		return;
	}
	if (pkt->payload_len && !(pkt->flags & NIC_PKT_OWNS_PAYLOAD) &&
	    !sender_alive(nic->world, pkt))
		return;
	flow->nak_sent = false;
	request(qp, flow, pkt);
}
