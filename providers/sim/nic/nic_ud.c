/* SPDX-License-Identifier: BSD-2-Clause
 * Unreliable datagrams: one packet per message, no acknowledgement, no
 * retransmission — what the network loses is lost (FI_EP_DGRAM). A send
 * completes once the NIC has the data; a datagram that finds no posted
 * receive is dropped, as a UD queue pair does. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nic_internal.h"

struct ud_send {
	struct nic_qp   *qp;
	struct nic_swqe *wqe;
	nm_event_id      event;
};

/* The NIC reads the payload from its owner's memory when it sends. */
static void gather(const struct nic *nic, const struct nic_wr *wr,
		   uint8_t *out)
{
	for (size_t i = 0; i < wr->sge_count; i++) {
		if (wr->sge[i].len)
			nic_dma_read(nic, out, wr->sge[i].addr,
				     wr->sge[i].len);
		out += wr->sge[i].len;
	}
}

/* The NIC fetched the request: the datagram goes on the wire. */
static void ud_ready(nm_engine *engine, void *ctx, uint64_t arg)
{
	struct nic_swqe *w = ctx;
	struct nic_qp *qp = w->flow->qp;
	struct nic_pkt *pkt = nic_pkt_alloc(qp->nic->part, true);
	struct nic_completion c = {
		.cookie = w->wr.wr_id,
		.status = NIC_OK,
		.opcode = NIC_WR_SEND,
		.len = w->len,
		.source = w->wr.peer,
	};

	pkt->opcode = (w->wr.flags & NIC_WR_IMM) ? NIC_OP_UD_SEND_ONLY_IMM
						   : NIC_OP_UD_SEND_ONLY;
	pkt->src.host = qp->nic->host;
	pkt->src.qpn = qp->qpn;
	pkt->src_qp_gen = qp->gen;
	pkt->dst = w->wr.peer;
	pkt->qkey = (w->wr.flags & NIC_WR_QKEY) ? w->wr.qkey : qp->qkey;
	if (w->wr.flags & NIC_WR_SOLICITED)
		pkt->flags |= NIC_PKT_SOLICITED;
	/* A UD QP numbers its packets too (IBA 9.7.6.1.1), though nobody
	 * acknowledges them. */
	pkt->psn = qp->ud_psn;
	qp->ud_psn = (qp->ud_psn + 1) & 0xffffff;
	pkt->imm = w->wr.imm;
	gather(qp->nic, &w->wr, pkt->owned);
	pkt->payload_len = (uint32_t)w->len;
	nic_tx_raw(qp->nic, pkt);
	for (size_t i = 0; i < w->wr.sge_count; i++)
		if (w->wr.sge[i].mr)
			w->wr.sge[i].mr->busy--;
	nic_complete_later(qp, NIC_PENDING_SEND, &c, 0);
	/* The flow only held the request until now. */
	w->flow->sq_head = w->next;
	if (!w->flow->sq_head)
		w->flow->sq_tail = NULL;
	nic_wqe_put(qp->nic->part, w);
}

int nic_ud_post(struct nic_qp *qp, struct nic_swqe *w)
{
	struct nic_flow *flow = w->flow;

	if (w->len > qp->nic->world->mtu)
		return -EMSGSIZE;
	for (size_t i = 0; i < w->wr.sge_count; i++)
		if (w->wr.sge[i].mr)
			w->wr.sge[i].mr->busy++;
	/* The flow's queue keeps requests in order until the NIC takes
	 * them, and lets nic_qp_destroy cancel what is pending. */
	w->next = NULL;
	if (flow->sq_tail)
		flow->sq_tail->next = w;
	else
		flow->sq_head = w;
	flow->sq_tail = w;
	if (nic_schedule(qp->nic, qp->nic->world->send_overhead_ns, ud_ready,
			 w, 0, &w->ready_event))
		abort();
	return 0;
}

void nic_ud_receive(struct nic_qp *qp, struct nic_pkt *pkt)
{
	struct nic_rmatch *m;

	if (pkt->qkey != qp->qkey) {
		/* IBA 10.2.4: a datagram whose Q_Key differs is dropped. */
		qp->nic->part->stats.ud_bad_qkey++;
		return;
	}
	m = nic_match_take_posted(qp, pkt->src);
	if (!m) {
		qp->nic->part->stats.ud_no_buffer++;
		return;
	}
	if (nic_match_bad_key(m)) {
		nic_match_fail_taken(qp, m, NIC_LOC_PROT_ERR);
		nic_qp_fail(qp, NIC_LOC_PROT_ERR);
		return;
	}
	m->source = pkt->src;
	nic_match_place(qp, m, 0, pkt->payload, pkt->payload_len);
	nic_match_finish(qp, m, pkt->payload_len, nic_msg_end_flags(pkt),
			 pkt->imm);
}
