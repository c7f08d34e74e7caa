/* SPDX-License-Identifier: BSD-2-Clause
 * Transmit arbitration: which packet the NIC puts on its port next.
 *
 * A NIC does not dump whole messages into its egress queue: it keeps the
 * port busy with at most NIC_TX_SLOTS packets waiting, and picks the next
 * one from the flows that have something to send, round robin. Within a
 * flow, replies (ACK/NAK, atomic answers) go first, then read responses,
 * then new or retransmitted requests. The network tells us when the port
 * starts each packet (nic_tx_port_started), which frees a slot. Keeping the
 * queue short is what lets a go-back-N retransmission replace what it
 * resends instead of queueing behind it, and lets flows share the link.
 */
#include <stdlib.h>

#include "nic_internal.h"

/* One packet on the wire and one ready behind it keep the port busy with
 * no gap between packets. */
#define NIC_TX_SLOTS 1

static void txq_remove(struct nic *nic, struct nic_flow *flow)
{
	if (flow->txq_prev)
		flow->txq_prev->txq_next = flow->txq_next;
	else
		nic->txq_head = flow->txq_next;
	if (flow->txq_next)
		flow->txq_next->txq_prev = flow->txq_prev;
	else
		nic->txq_tail = flow->txq_prev;
	flow->txq_prev = flow->txq_next = NULL;
	flow->in_txq = false;
}

static void txq_append(struct nic *nic, struct nic_flow *flow)
{
	flow->txq_next = NULL;
	flow->txq_prev = nic->txq_tail;
	if (nic->txq_tail)
		nic->txq_tail->txq_next = flow;
	else
		nic->txq_head = flow;
	nic->txq_tail = flow;
	flow->in_txq = true;
}

static struct nic_pkt *next_packet(struct nic_flow *flow)
{
	struct nic_pkt *pkt = flow->replies;

	if (pkt) {
		flow->replies = pkt->next_free;
		if (!flow->replies)
			flow->replies_tail = NULL;
		pkt->next_free = NULL;
		return pkt;
	}
	pkt = nic_resp_next_read(flow);
	return pkt ? pkt : nic_req_next(flow);
}

static void send_now(struct nic *nic, struct nic_pkt *pkt)
{
	if (pkt->dst.host != nic->host)
		nic->port_queued++;
	nic_pkt_transmit(nic, pkt);
}

static void kick(struct nic *nic)
{
	if (nic->dead)
		return; /* a powered-off host sends nothing */
	while (nic->port_queued < NIC_TX_SLOTS && nic->raw_head) {
		struct nic_pkt *pkt = nic->raw_head;

		nic->raw_head = pkt->next_free;
		if (!nic->raw_head)
			nic->raw_tail = NULL;
		pkt->next_free = NULL;
		send_now(nic, pkt);
	}
	while (nic->port_queued < NIC_TX_SLOTS && nic->txq_head) {
		struct nic_flow *flow = nic->txq_head;
		struct nic_pkt *pkt;

		txq_remove(nic, flow);
		pkt = next_packet(flow);
		if (!pkt)
			continue; /* nothing it may send now */
		txq_append(nic, flow); /* it may have more: round robin */
		send_now(nic, pkt);
	}
}

void nic_flow_wants_tx(struct nic_flow *flow)
{
	struct nic *nic = flow->qp->nic;

	if (!flow->in_txq)
		txq_append(nic, flow);
	kick(nic);
}

void nic_flow_reply(struct nic_flow *flow, struct nic_pkt *pkt)
{
	pkt->next_free = NULL;
	if (flow->replies_tail)
		flow->replies_tail->next_free = pkt;
	else
		flow->replies = pkt;
	flow->replies_tail = pkt;
	nic_flow_wants_tx(flow);
}

void nic_tx_raw(struct nic *nic, struct nic_pkt *pkt)
{
	pkt->next_free = NULL;
	if (nic->raw_tail)
		nic->raw_tail->next_free = pkt;
	else
		nic->raw_head = pkt;
	nic->raw_tail = pkt;
	kick(nic);
}

void nic_tx_port_started(struct nic *nic)
{
	if (nic->port_queued)
		nic->port_queued--;
	kick(nic);
}

void nic_flow_tx_release(struct nic_flow *flow)
{
	struct nic_world *world = flow->qp->nic->world;

	if (flow->in_txq)
		txq_remove(flow->qp->nic, flow);
	while (flow->replies) {
		struct nic_pkt *pkt = flow->replies;

		flow->replies = pkt->next_free;
		nic_pkt_put(flow->qp->nic->part, pkt);
	}
	flow->replies_tail = NULL;
	while (flow->reads) {
		struct nic_read_job *job = flow->reads;

		flow->reads = job->next;
		nic_read_ahead_release(flow->qp->nic->part, &job->ahead);
		fs_mem_free(world->arena, job);
	}
	flow->reads_tail = NULL;
}
