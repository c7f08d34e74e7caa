/* SPDX-License-Identifier: BSD-2-Clause
 * The packet codec: one struct that holds every field of a RoCEv2 or native InfiniBand frame,
 * a parser that fills it from captured bytes and a builder that writes a RoCEv2 frame from it.
 * Both walk the opcode table (tr_opcode.h); neither knows anything of libfabric.
 *
 * RoCEv2 frame: Ethernet [802.1Q/802.1ad tags] IPv4|IPv6 UDP(4791) BTH ext-headers payload pad
 * ICRC, possibly inside a tunnel (GRE, ERSPAN, VXLAN) the parser takes it out of. Native IB frame: LRH [GRH] BTH ext-headers payload pad ICRC VCRC. */
#ifndef TR_PACKET_H
#define TR_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "traces/tr_atomichdr.h"
#include "traces/tr_error.h"
#include "traces/tr_opcode.h"
#include "traces/tr_taghdr.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TR_ROCE_PORT 4791u
#define TR_ROCE_SPORT_MIN 0xC000u
#define TR_MAX_VLANS 2
#define TR_QPN_MAX 0xFFFFFFu
#define TR_PSN_MASK 0xFFFFFFu

/* pcap link types the parser reads (numbers as in the pcap file header). */
enum tr_linktype {
	TR_LINKTYPE_NULL_BYTES = 0, /* not a link type: "frame starts at the IP header" (tests) */
	TR_LINKTYPE_ETHERNET = 1,
	TR_LINKTYPE_RAW = 101,      /* raw IPv4/IPv6 */
	TR_LINKTYPE_LINUX_SLL = 113,
	TR_LINKTYPE_ERF = 197,
	TR_LINKTYPE_INFINIBAND = 247,
	TR_LINKTYPE_LINUX_SLL2 = 276,
};

enum tr_packet_flag {
	TR_PKT_ROCE = 1u << 0,      /* Ethernet/IP/UDP 4791 */
	TR_PKT_NATIVE_IB = 1u << 1, /* LRH first */
	TR_PKT_GRH = 1u << 2,       /* native IB with a GRH */
	TR_PKT_TAGHDR = 1u << 3,    /* payload starts with a fabsim tag header (tr_taghdr.h) */
	TR_PKT_TRUNCATED = 1u << 4, /* captured bytes end before the frame does */
	TR_PKT_ERF = 1u << 5,       /* came wrapped in an ERF record */
	TR_PKT_ATOMICHDR = 1u << 6, /* payload starts with a fabsim atomic header (tr_atomichdr.h):
				     * a request in a SEND_ONLY, a response in a READ_RESPONSE_ONLY */
	TR_PKT_TUNNEL = 1u << 7,    /* taken out of GRE (ERSPAN, bridging) or VXLAN: the Ethernet, IP
				     * and UDP fields and offsets are the inner frame's */
};

/* What the parser made of a frame. */
typedef enum tr_parse_result {
	TR_PARSE_OK = 0,        /* an IB transport packet; every field below is valid */
	TR_PARSE_NOT_IB = 1,    /* a frame of another protocol (ARP, TCP, other UDP, raw IB...) */
} tr_parse_result;

typedef struct tr_packet {
	uint32_t flags;      /* tr_packet_flag */
	uint32_t linktype;   /* what the bytes were parsed as */
	uint32_t caplen;     /* bytes present */
	uint32_t wirelen;    /* bytes of the frame on the wire (ERF: its wire length) */

	/* Ethernet */
	uint8_t eth_dst[6];
	uint8_t eth_src[6];
	uint16_t ethertype;  /* after any VLAN tags */
	uint8_t vlan_count;  /* tags kept: the parser walks any number, keeps the outermost two */
	uint16_t vlan_tpid[TR_MAX_VLANS]; /* 0x8100, 0x88a8 or 0x9100 */
	uint16_t vlan_tci[TR_MAX_VLANS];  /* PCP 3 bits, DEI 1, VID 12 */

	/* IP: version 4 uses the first 4 bytes of the address arrays */
	uint8_t ip_version;
	uint8_t ip_src[16];
	uint8_t ip_dst[16];
	uint8_t ip_tos;        /* IPv4 TOS / IPv6 traffic class (DSCP + ECN) */
	uint8_t ip_ttl;        /* IPv4 TTL / IPv6 hop limit */
	uint32_t ip_flow_label;
	uint16_t ip_id;
	bool ip_df;
	uint16_t ip_len;       /* IPv4 total length / IPv6 payload length, as stored */
	uint16_t ip_csum;      /* IPv4 header checksum as stored */
	bool ip_csum_ok;       /* IPv4: stored == computed; IPv6: true */
	uint16_t udp_sport;
	uint16_t udp_dport;
	uint16_t udp_len;
	uint16_t udp_csum;

	/* native InfiniBand */
	struct {
		uint8_t vl, lver, sl, lnh;
		uint16_t dlid, slid;
		uint16_t pktlen;   /* 4-byte words from LRH to ICRC */
	} lrh;
	struct {
		uint8_t ipver, tclass, nxthdr, hoplmt;
		uint32_t flow_label;
		uint16_t paylen;
		uint8_t sgid[16], dgid[16];
	} grh;
	uint8_t erf_type;

	/* BTH */
	uint8_t opcode;
	const tr_opcode_info *op; /* NULL when the opcode is unknown */
	bool se;
	bool migreq;
	uint8_t padcnt;
	uint8_t tver;
	uint16_t pkey;
	uint8_t bth_resv8a;  /* byte 4: FECN 0x80, BECN 0x40, reserved */
	uint32_t dest_qp;
	bool ack_req;
	uint32_t psn;

	/* Extended headers: valid when hdrs_captured has their bit — op->hdrs, less those a snap
	 * length cut off (TR_PKT_TRUNCATED is then set too) */
	uint16_t hdrs_captured;
	struct {
		uint64_t va;
		uint32_t rkey;
		uint32_t dma_len;
	} reth;
	struct {
		uint8_t syndrome;
		uint32_t msn;
	} aeth;
	struct {
		uint64_t va;
		uint32_t rkey;
		uint64_t swap_add;
		uint64_t compare;
	} atomic;
	uint64_t atomic_ack_orig;
	uint32_t immdt;
	uint32_t ieth_rkey;
	struct {
		uint32_t qkey;
		uint32_t src_qp;
	} deth;

	/* Payload: the user data, after the tag header when TR_PKT_TAGHDR is set (or the atomic
	 * header when TR_PKT_ATOMICHDR is). payload_len is its length on the wire; the capture may
	 * hold fewer bytes (payload_caplen). */
	tr_taghdr tag;
	tr_atomichdr atomic_hdr;
	const uint8_t *payload;
	uint32_t payload_len;
	uint32_t payload_caplen;

	/* Integrity: the stored values are read when captured, the computed ones when everything
	 * they cover was captured. */
	bool icrc_captured;
	uint32_t icrc_stored;
	uint32_t icrc_computed;
	bool vcrc_captured;
	uint16_t vcrc_stored;
	uint16_t vcrc_computed;

	/* Offsets into the frame. */
	uint32_t l3_off;      /* IP header or LRH; the inner one of a tunnel */
	uint32_t udp_off;     /* RoCEv2: the UDP header, after any IPv6 extension headers */
	uint32_t bth_off;
	uint32_t payload_off; /* start of the wire payload (the tag header, if any) */
	uint32_t icrc_off;
} tr_packet;

/* Bytes after the transport headers: the fabsim headers (tag, atomic) and the user data. */
static inline uint32_t tr_packet_data_len(const tr_packet *p)
{
	return p->payload_len + ((p->flags & TR_PKT_TAGHDR) ? p->tag.len : 0) +
	       ((p->flags & TR_PKT_ATOMICHDR) ? p->atomic_hdr.len : 0);
}

/* Fills p with what a RoCEv2 frame of the simulator has by default: IPv4, TTL 64, DF, P_Key
 * 0xFFFF, UDP destination 4791, source port TR_ROCE_SPORT_MIN, opcode RC SEND_ONLY. */
void tr_packet_init(tr_packet *p);

/* Parses one frame captured with `linktype` (TR_LINKTYPE_*). Returns TR_PARSE_OK,
 * TR_PARSE_NOT_IB (with a short description of the frame in `what`, e.g. "ARP" or "TCP", when
 * what != NULL) or -EINVAL with a message naming the byte offset in the frame and the field that
 * is wrong. Frames cut short by the capture (caplen < wirelen) parse as long as their BTH is
 * present; TR_PKT_TRUNCATED is then set, the ICRC is not checked and the extended headers cut off
 * are missing from hdrs_captured. p->payload points into buf. */
int tr_packet_parse(tr_packet *p, const uint8_t *buf, uint32_t caplen, uint32_t wirelen,
		    uint32_t linktype, const char **what, tr_error *err);

/* Bytes tr_packet_build will write for p. */
size_t tr_packet_frame_len(const tr_packet *p);

/* Writes a RoCEv2 frame from p into buf (cap bytes): Ethernet, p->vlan_count tags, IPv4 (DF,
 * header checksum) or IPv6, UDP (checksum 0 over IPv4; over IPv6, where 0 is not allowed, the real
 * checksum — the ICRC masks the field either way), BTH with the PadCnt the payload needs, the
 * extended headers of p->opcode, the tag header when TR_PKT_TAGHDR is set (or the atomic header,
 * request or response, when TR_PKT_ATOMICHDR is), the payload, the pad and the ICRC. Returns the
 * frame length, or -EINVAL (unknown opcode, destination QP 0, destination QP 1 other than for a
 * UD SEND (management datagrams to the GSI),
 * source port below 0xC000, QP/PSN wider than 24 bits, payload on an opcode that has none...)
 * or -ENOSPC (buf too small), with a message. */
int tr_packet_build(const tr_packet *p, uint8_t *buf, size_t cap, tr_error *err);

/* The first `limit` bytes of the frame tr_packet_build would write (the whole frame when it is
 * shorter), for a capture with that snap length: when the ICRC lies beyond the limit it is not
 * computed, nor is the rest of the payload copied. Returns the whole frame's length, or the
 * errors of tr_packet_build. cap must hold `limit` bytes, or the whole frame when the limit cuts
 * into its ICRC or the frame is IPv6 (then it is built whole). */
int tr_packet_build_prefix(const tr_packet *p, uint8_t *buf, size_t cap, uint32_t limit,
			   tr_error *err);

/* The UDP source port the simulator gives a QP: stable per QP, always >= 0xC000 (a low port
 * makes tshark try another protocol first, see WIRE.md). */
static inline uint16_t tr_udp_sport_for_qp(uint32_t qpn)
{
	return (uint16_t)(TR_ROCE_SPORT_MIN | (qpn & 0x3FFFu));
}

/* AETH syndrome: bits 6..5 say ACK / RNR NAK / NAK, bits 4..0 the credit, timer or NAK code. */
typedef enum tr_aeth_kind {
	TR_AETH_ACK = 0,
	TR_AETH_RNR_NAK = 1,
	TR_AETH_RESERVED = 2,
	TR_AETH_NAK = 3,
} tr_aeth_kind;

enum tr_nak_code {
	TR_NAK_PSN_SEQ_ERROR = 0,
	TR_NAK_INVALID_REQUEST = 1,
	TR_NAK_REMOTE_ACCESS = 2,
	TR_NAK_REMOTE_OPERATIONAL = 3,
	TR_NAK_INVALID_RD_REQUEST = 4,
};

static inline tr_aeth_kind tr_aeth_kind_of(uint8_t syndrome)
{
	return (tr_aeth_kind)((syndrome >> 5) & 0x3);
}

#define TR_AETH_SYNDROME_ACK 0x1Fu /* ACK with credit count 31 (no flow-control limit) */

/* Signed distance from PSN a to PSN b modulo 2^24, in -2^23..2^23-1: > 0 when b is after a. */
static inline int32_t tr_psn_diff(uint32_t a, uint32_t b)
{
	uint32_t d = (b - a) & TR_PSN_MASK;
	return d & 0x800000u ? (int32_t)d - 0x1000000 : (int32_t)d;
}

#ifdef __cplusplus
}
#endif

#endif
