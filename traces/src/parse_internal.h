/* SPDX-License-Identifier: BSD-2-Clause
 * The parser's stages. Each stage reads one layer, fills its part of the tr_packet and hands the
 * rest of the frame to the next; all share the return convention of tr_packet_parse. */
#ifndef TR_PARSE_INTERNAL_H
#define TR_PARSE_INTERNAL_H

#include "traces/tr_packet.h"

/* The frame being parsed: bytes present and where the frame ends on the wire. */
typedef struct tr_frame {
	const uint8_t *buf;
	uint32_t caplen;
	uint32_t wirelen;
	const char **what; /* where to describe a frame that is not IB */
	tr_error *err;
	unsigned depth;    /* tunnels this frame is inside */
} tr_frame;

/* Returns TR_PARSE_NOT_IB after storing `what` for the caller's count of skipped frames. */
int tr_parse_not_ib(const tr_frame *f, const char *what);

/* 0 when bytes [.., end) are captured; otherwise -EINVAL naming `what` at byte `at` and saying
 * whether the capture cut the frame short or the frame itself is too short. */
int tr_parse_need(const tr_frame *f, uint32_t end, uint32_t at, const char *what);

/* Link layers: each finds the start of the IP header (or LRH) and calls the next stage. */
int tr_parse_ethernet(tr_packet *p, const tr_frame *f, uint32_t off);
int tr_parse_sll(tr_packet *p, const tr_frame *f, uint32_t off, bool v2);
int tr_parse_erf(tr_packet *p, const tr_frame *f);

/* IPv4/IPv6 + UDP at off; ethertype 0 means "guess from the version nibble" (raw IP). */
int tr_parse_ip(tr_packet *p, const tr_frame *f, uint32_t off, uint16_t ethertype);

/* Tunnels (parse_tunnel.c): the GRE header or the VXLAN header at off, in an IP packet that ends
 * at end; the frame inside is parsed with offsets from the start of the captured one. */
int tr_parse_gre(tr_packet *p, const tr_frame *f, uint32_t off, uint32_t end);
int tr_parse_vxlan(tr_packet *p, const tr_frame *f, uint32_t off, uint32_t end);

/* LRH [GRH] at off; wire_end is where the frame ends on the wire (VCRC included). */
int tr_parse_lrh(tr_packet *p, const tr_frame *f, uint32_t off, uint32_t wire_end);

/* BTH at bth_off up to end (the byte after the ICRC): extended headers, payload, pad, ICRC. */
int tr_parse_transport(tr_packet *p, const tr_frame *f, uint32_t bth_off, uint32_t end);

#endif
