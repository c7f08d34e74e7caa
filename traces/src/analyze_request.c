/* SPDX-License-Identifier: BSD-2-Clause
 * The request side of a flow: the PSN sequence (new, resent, or jumping over PSNs never seen) and
 * the reassembly of SEND and RDMA WRITE messages from their FIRST/MIDDLE/LAST packets. Only the
 * first transmission of a PSN builds messages; a resend replays what was already counted. */
#include <stdlib.h>

#include "analyze_internal.h"

/* PSNs a READ of dma_len bytes may consume at most: one per response packet, at the smallest
 * path MTU (256). */
static uint32_t read_span(uint32_t dma_len)
{
	uint32_t n = dma_len / 256 + (dma_len % 256 != 0);

	return n ? n : 1;
}

/* How far the next request may jump after READ request p. A snap length may have cut its RETH:
 * the READ may then have used any number of PSNs, and no jump after it is a gap. */
static uint32_t read_slack(const tr_packet *p)
{
	if (!(p->hdrs_captured & TR_HDR_BIT(TR_HDR_RETH)))
		return TR_PSN_MASK >> 1;
	return read_span(p->reth.dma_len) - 1;
}

/* Doubles f's ring, each entry going to its place in the larger one; false when out of memory
 * (the ring stays as it was). */
static bool grow_sent(tr_flow *f)
{
	uint32_t cap = f->sent_cap * 2;
	tr_sent *ring = calloc(cap, sizeof(*ring));

	if (!ring)
		return false;
	for (uint32_t i = 0; i < f->sent_cap; i++)
		if (f->sent[i].kind)
			ring[f->sent[i].psn & (cap - 1)] = f->sent[i];
	free(f->sent);
	f->sent = ring;
	f->sent_cap = cap;
	return true;
}

static void remember(tr_flow *f, const tr_record *rec, uint8_t kind)
{
	uint32_t psn = rec->pkt.psn;
	tr_sent *e;

	if (!f->sent) {
		f->sent = calloc(TR_SENT_FIRST, sizeof(*f->sent));
		if (!f->sent)
			return;
		f->sent_cap = TR_SENT_FIRST;
	}
	e = &f->sent[psn & (f->sent_cap - 1)];
	if (e->kind && e->psn == psn) {
		/* Sent again: the request's latency runs from its first transmission, and is
		 * measured once; it can be answered once one copy was not dropped. */
		e->dropped = e->dropped && (rec->mark.flags & TR_DROPPED);
		return;
	}
	for (;;) {
		int32_t reach;

		e = &f->sent[psn & (f->sent_cap - 1)];
		reach = tr_psn_diff(e->psn, psn);
		if (reach < 0)
			reach = -reach;
		/* What a full ring would still hold is kept. */
		if (!e->kind || e->psn == psn || f->sent_cap == TR_SENT_RING ||
		    reach >= (int32_t)TR_SENT_RING || !grow_sent(f))
			break;
	}
	e->psn = rec->pkt.psn;
	e->kind = kind;
	e->dropped = rec->mark.flags & TR_DROPPED;
	e->answered = false;
	e->ts_ns = rec->ts_ns;
}

/* A PSN behind the newest that the flow never sent (within the reach of its ring) arrives late:
 * reordered on the way to the capture, not sent again. d is its distance from f->req_next. */
static bool arrives_late(const tr_flow *f, uint32_t psn, int32_t d)
{
	const tr_sent *e;

	if (!f->sent || -d > (int32_t)TR_SENT_RING)
		return false; /* too far back to tell: a resend, as before the ring */
	e = &f->sent[psn & (f->sent_cap - 1)];
	return !(e->kind && e->psn == psn);
}

/* A resend is legitimate after a NAK, after a timeout (the PSN was not yet acknowledged) or when
 * the trace says so; resending acknowledged data is not, when the requester got the ACK. Only a
 * fabsim trace (it has marker frames, before or after) says so: it marks every packet sent again.
 * A capture taken anywhere else than at the requester sees ACKs that may be lost after it, and
 * the requester then rightly sends again what the capture saw acknowledged. */
static void resent(tr_analyzer *a, tr_flow *f, const tr_record *rec)
{
	const tr_packet *p = &rec->pkt;

	f->sum.retransmissions++;
	a->s->retransmissions++;
	if (p->op->transport == TR_TRANSPORT_UC) {
		tr_an_problem(a, rec, p->bth_off + 9,
			      "PSN %u goes back (newest was %u) on a UC flow, which never resends",
			      p->psn, (f->req_next - 1) & TR_PSN_MASK);
		return;
	}
	if (!(rec->mark.flags & TR_RETRANSMIT) && !f->nak_seen && f->acked &&
	    tr_psn_diff(f->acked_psn, p->psn) <= 0)
		tr_an_problem_if_marked(a, rec, p->bth_off + 9,
			      "PSN %u sent again although acknowledged (ACKs reached PSN %u) and "
			      "no NAK came back", p->psn, f->acked_psn);
	f->nak_seen = false;
}

static void open_msg(tr_flow *f, const tr_packet *p)
{
	f->req.state = TR_MSTATE_OPEN;
	f->req.op = p->op->op;
	f->req.bytes = p->payload_len;
	f->req.tagged = p->flags & TR_PKT_TAGHDR;
	f->req.has_dma = p->hdrs_captured & TR_HDR_BIT(TR_HDR_RETH); /* not if cut off */
	f->req.dma_len = p->reth.dma_len;
}

static void close_msg(tr_analyzer *a, tr_flow *f, const tr_record *rec)
{
	const tr_packet *p = &rec->pkt;
	uint8_t kind = f->req.op == TR_OP_WRITE ? TR_MSG_WRITE : TR_MSG_SEND;

	if (f->req.has_dma && f->req.bytes != f->req.dma_len)
		tr_an_problem(a, rec, p->bth_off,
			      "RDMA WRITE message of %llu bytes ends here, its first packet's RETH "
			      "announced %u", (unsigned long long)f->req.bytes, f->req.dma_len);
	tr_an_message_done(a, f, kind, f->req.bytes, f->req.tagged);
	f->req.state = TR_MSTATE_NONE;
}

/* FIRST/MIDDLE/LAST/ONLY must follow each other as the IBA says: one message at a time per QP. */
static void reassemble(tr_analyzer *a, tr_flow *f, const tr_record *rec)
{
	const tr_packet *p = &rec->pkt;
	const tr_opcode_info *op = p->op;
	bool open = f->req.state == TR_MSTATE_OPEN;

	bool fabsim_atomic = p->flags & TR_PKT_ATOMICHDR;

	if ((op->op != TR_OP_SEND && op->op != TR_OP_WRITE) || fabsim_atomic) {
		if (open) {
			tr_an_problem(a, rec, p->bth_off, "%s inside an open %s message", op->name,
				      tr_op_name(f->req.op));
			f->sum.incomplete_messages++;
		}
		f->req.state = TR_MSTATE_NONE;
		if (op->op == TR_OP_COMPARE_SWAP || op->op == TR_OP_FETCH_ADD)
			tr_an_message_done(a, f, TR_MSG_ATOMIC, 8, false);
		else if (fabsim_atomic) /* operands, without the compare values */
			tr_an_message_done(a, f, TR_MSG_ATOMIC,
					   (p->atomic_hdr.flags & TR_ATOMIC_F_COMPARE) ?
						   p->payload_len / 2 : p->payload_len,
					   false);
		return;
	}
	switch (op->pos) {
	case TR_POS_FIRST:
	case TR_POS_ONLY:
		if (open) {
			tr_an_problem(a, rec, p->bth_off, "%s while a %s message is still open",
				      op->name, tr_op_name(f->req.op));
			f->sum.incomplete_messages++;
		}
		open_msg(f, p);
		if (op->pos == TR_POS_ONLY)
			close_msg(a, f, rec);
		return;
	case TR_POS_MIDDLE:
	case TR_POS_LAST:
		if (f->req.state == TR_MSTATE_UNKNOWN)
			return; /* the message began before the capture or a gap */
		if (!open || f->req.op != op->op) {
			tr_an_problem(a, rec, p->bth_off, "%s without a %s FIRST before it",
				      op->name, tr_op_name(op->op));
			f->req.state = TR_MSTATE_UNKNOWN;
			return;
		}
		f->req.bytes += p->payload_len;
		if (op->pos == TR_POS_LAST)
			close_msg(a, f, rec);
		return;
	}
}

/* A request that arrives after a later PSN: its data is new, and it counts. The messages around it
 * were taken without it, so only one it makes alone (an ONLY, a READ, an atomic) is counted, as
 * after a gap; the newer message in progress is left as it was. */
static void reordered(tr_analyzer *a, tr_flow *f, const tr_record *rec)
{
	tr_msg_progress newer = f->req;

	if (!(rec->mark.flags & TR_REORDERED)) { /* else counted with the marks */
		f->sum.reordered++;
		a->s->reordered++;
	}
	f->sum.unique_payload_bytes += rec->pkt.payload_len;
	f->req.state = TR_MSTATE_UNKNOWN;
	reassemble(a, f, rec);
	f->req = newer;
}

void tr_an_request(tr_analyzer *a, tr_flow *f, const tr_record *rec)
{
	const tr_packet *p = &rec->pkt;
	uint8_t transport = p->op->transport;
	bool sequenced = transport == TR_TRANSPORT_RC || transport == TR_TRANSPORT_UC;
	bool fresh = true, late = false;
	uint8_t kind = p->op->op == TR_OP_READ_REQUEST ? TR_SENT_READ
		       : p->op->op == TR_OP_COMPARE_SWAP || p->op->op == TR_OP_FETCH_ADD ||
				       (p->flags & TR_PKT_ATOMICHDR)
			       ? TR_SENT_ATOMIC
			       : TR_SENT_DATA;

	if (sequenced && f->req_seen) {
		int32_t d = tr_psn_diff(f->req_next, p->psn);

		if (d < 0 && !(rec->mark.flags & TR_RETRANSMIT) && arrives_late(f, p->psn, d)) {
			late = true;
		} else if (d < 0) {
			fresh = false;
			resent(a, f, rec);
		} else if (d > 0 && (uint32_t)d > f->req_slack) {
			f->sum.psn_gaps++;
			a->s->psn_gaps++;
			tr_an_problem(a, rec, p->bth_off + 9,
				      "PSN gap: expected PSN %u, got %u (%d PSN%s never seen)",
				      f->req_next, p->psn, d, d == 1 ? "" : "s");
			f->req.state = TR_MSTATE_UNKNOWN;
		}
	}
	if (sequenced)
		remember(f, rec, kind);
	if (transport == TR_TRANSPORT_RC && f->sum.transport == TR_TRANSPORT_RC && f->sent)
		tr_an_unpaired_add(a, f);
	if (!fresh)
		return;
	if (late) {
		reordered(a, f, rec);
		return;
	}
	if (sequenced) {
		f->req_seen = true;
		f->req_next = (p->psn + 1) & TR_PSN_MASK;
		f->req_slack = kind != TR_SENT_READ ? 0 : read_slack(p);
	}
	f->sum.unique_payload_bytes += p->payload_len;
	if (transport == TR_TRANSPORT_UD)
		tr_an_message_done(a, f, TR_MSG_SEND, p->payload_len, p->flags & TR_PKT_TAGHDR);
	else
		reassemble(a, f, rec);
}
