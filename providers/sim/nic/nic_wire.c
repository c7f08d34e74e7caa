/* SPDX-License-Identifier: BSD-2-Clause
 * Packets on the simulated wire: their records, their size on the wire, and
 * the way out (the network, or the NIC's own loopback). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "nic_internal.h"

/* The model's link.header_bytes already counts the framing every packet has
 * (up to and including BTH and ICRC); these are the extended headers of
 * each opcode (IBA 9.3), which only some packets carry. */
enum { RETH = 16, AETH = 4, ATOMIC_ETH = 28, ATOMIC_ACK_ETH = 8, IMM = 4,
       DETH = 8 };

uint32_t nic_pkt_header_bytes(const struct nic_pkt *pkt)
{
	uint32_t h = 0;
	int op = nic_op_rc(pkt->opcode);

	switch (op) {
	case NIC_OP_WRITE_FIRST:
	case NIC_OP_WRITE_ONLY:
	case NIC_OP_READ_REQUEST:
		h += RETH;
		break;
	case NIC_OP_WRITE_ONLY_IMM:
		h += RETH + IMM;
		break;
	case NIC_OP_READ_RESP_FIRST:
	case NIC_OP_READ_RESP_LAST:
	case NIC_OP_READ_RESP_ONLY:
	case NIC_OP_ACK:
		h += AETH;
		break;
	case NIC_OP_ATOMIC_ACK:
		h += AETH + ATOMIC_ACK_ETH;
		break;
	case NIC_OP_COMPARE_SWAP:
	case NIC_OP_FETCH_ADD:
		h += ATOMIC_ETH;
		break;
	case NIC_OP_UD_SEND_ONLY:
		h += DETH;
		break;
	case NIC_OP_UD_SEND_ONLY_IMM:
		h += DETH + IMM;
		break;
	default:
		break;
	}
	if (nic_op_has_imm(op) && op != NIC_OP_WRITE_ONLY_IMM &&
	    op != NIC_OP_UD_SEND_ONLY_IMM)
		h += IMM;
	return h;
}

uint32_t nic_pkt_fabsim_bytes(const struct nic_pkt *pkt)
{
	if (!(pkt->flags & NIC_PKT_FABSIM_HDR))
		return 0;
	switch (pkt->fabsim.kind) {
	case NIC_FABSIM_TAGGED_SEND:
		return NIC_TAG_HDR_WIRE;
	case NIC_FABSIM_ATOMIC:
		return NIC_ATOMIC_HDR_WIRE;
	case NIC_FABSIM_ATOMIC_RESP:
		return NIC_ATOMIC_RESP_HDR_WIRE;
	default:
		return 0;
	}
}

/* Clears a packet record with vector stores. gcc turns memset (and a plain
 * loop) of this size into rep stos, whose start-up cost on AMD Zen was a
 * sixth of an 8-byte message's whole simulation; the empty asm keeps the
 * loop a loop. */
static inline void zero_record(void *record, size_t bytes)
{
	typedef uint64_t vec __attribute__((vector_size(16), may_alias));
	vec *v = record;

	_Static_assert(sizeof(struct nic_pkt) % sizeof(vec) == 0, "whole vectors");
	for (size_t i = 0; i < bytes / sizeof(vec); i++) {
		v[i] = (vec){ 0 };
		__asm__("" : : "r"(v));
	}
}

#define PKT_LINK offsetof(struct nic_pkt, next_free)

/* Records with an MTU of payload, and those without, are kept apart. */
static fs_cache *pkt_cache(struct nic_part *part, bool owns_payload,
			   fs_depot **depot)
{
	*depot = owns_payload ? NIC_DEPOT(part->world, owned_pkts) :
				NIC_DEPOT(part->world, pkts);
	return owns_payload ? &part->owned_pkts : &part->pkts;
}

struct nic_pkt *nic_pkt_alloc(struct nic_part *part, bool owns_payload)
{
	struct nic_world *world = part->world;
	fs_depot *depot;
	fs_cache *cache = pkt_cache(part, owns_payload, &depot);
	struct nic_pkt *pkt = fs_cache_get(cache, depot, PKT_LINK);

	if (!pkt) {
		size_t extra = owns_payload ? world->mtu : 0;

		pkt = fs_mem_alloc(world->arena, sizeof(*pkt) + extra);
		if (!pkt)
			abort(); /* the model cannot lose a packet record */
		pkt->alloc_next = part->all_pkts;
		part->all_pkts = pkt;
	}
	nic_pkt_touched(pkt);
	fs_touch_span(part, sizeof(*part));
	struct nic_pkt *keep = pkt->alloc_next;

	zero_record(pkt, sizeof(*pkt));
	pkt->alloc_next = keep;
	pkt->refs = 1;
	if (owns_payload) {
		pkt->flags = NIC_PKT_OWNS_PAYLOAD;
		pkt->payload = pkt->owned;
	}
	return pkt;
}

void nic_pkt_put(struct nic_part *part, struct nic_pkt *pkt)
{
	fs_depot *depot;
	fs_cache *cache;

	if (--pkt->refs)
		return;
	if (pkt->rec_frame) {
		nic_rec_frame_put(pkt->rec_frame);
		pkt->rec_frame = NULL;
	}
	cache = pkt_cache(part, pkt->flags & NIC_PKT_OWNS_PAYLOAD, &depot);
	fs_cache_put(cache, depot, PKT_LINK, pkt);
}

/* A NIC talking to itself never reaches the wire: the packet turns around
 * inside the NIC after one DMA. */
static void loopback_arrive(nm_engine *engine, void *ctx, uint64_t arg)
{
	struct nic *nic = ctx;
	struct nic_pkt *pkt = (struct nic_pkt *)(uintptr_t)arg;

	nic->part->stats.packets_received++;
	nic_resp_receive(nic, pkt);
	nic_pkt_put(nic->part, pkt);
}

void nic_pkt_transmit(struct nic *nic, struct nic_pkt *pkt)
{
	struct nic_world *world = nic->world;
	nm_packet np = { 0 };

	/* The fabsim header travels as payload, as the trace shows it. */
	pkt->wire_bytes = pkt->payload_len + nic_pkt_header_bytes(pkt) +
			  world->cfg.link.header_bytes + nic_pkt_fabsim_bytes(pkt);
	nic->part->stats.packets_sent++;
	nic->part->stats.bytes_sent += pkt->wire_bytes;
	if (pkt->flags & NIC_PKT_RETRANSMIT)
		nic->part->stats.retransmits++;

	if (pkt->dst.host == nic->host) {
		if (nic_schedule(nic, world->cfg.nic.dma_latency_ns,
				 loopback_arrive, nic, (uintptr_t)pkt, NULL))
			nic_pkt_put(nic->part, pkt);
		return;
	}
	if (world->rec)
		nic_record_transmit(world->rec, pkt);
	/* One flow per queue-pair pair keeps ECMP from reordering it. */
	np.flow = ((uint64_t)pkt->src.qpn << 40) ^ ((uint64_t)pkt->dst.host << 20) ^
		  pkt->dst.qpn ^ ((uint64_t)pkt->src.host << 52);
	np.user_ptr = pkt;
	np.bytes = pkt->wire_bytes;
	np.src = nic->host;
	np.dst = pkt->dst.host;
	if (nm_network_inject(world->net, &np))
		nic_pkt_put(nic->part, pkt);
}

/* IBA table 45, in microseconds (code 0 is the longest). */
static const uint32_t rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

nm_time_ns nic_rnr_timer_ns(uint32_t code)
{
	return (nm_time_ns)rnr_us[code & 31] * NM_NS_PER_US;
}

uint32_t nic_rnr_timer_code(nm_time_ns ns)
{
	for (uint32_t code = 1; code < 32; code++)
		if ((nm_time_ns)rnr_us[code] * NM_NS_PER_US >= ns)
			return code;
	return 0; /* longer than any: the longest */
}
