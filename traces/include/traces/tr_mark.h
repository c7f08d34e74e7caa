/* SPDX-License-Identifier: BSD-2-Clause
 * Marks on recorded packets: dropped (and where), corrupted, retransmitted, duplicated,
 * reordered. A mark travels as a marker frame written just before the frame it describes, with
 * the same timestamp, so the file stays a plain pcap that any tool reads (README.md, "Drops").
 *
 * Marker frame: Ethernet (MAC addresses copied from the described frame), EtherType 0x88B5
 * (IEEE 802 "local experimental"), then 46 bytes in network byte order:
 *   0  u32 magic   0x46534D4B ("FSMK")
 *   4  u8  version 1
 *   5  u8  reason  tr_mark_reason
 *   6  u16 flags   tr_mark_flag bits
 *   8  u32 node    where it happened (0xFFFFFFFF: not known)
 *  12  u32 port    global port id (0xFFFFFFFF: not known)
 *  16  u32 link    link id (0xFFFFFFFF: not known)
 *  20  u32 length  wire length of the described frame
 *  24  u32 hash    FNV-1a (32-bit) of the described frame's first min(length, 60) bytes
 *  28  18 bytes of zeros (the Ethernet minimum) */
#ifndef TR_MARK_H
#define TR_MARK_H

#include <stdint.h>

#include "traces/tr_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TR_MARK_ETHERTYPE 0x88B5u
#define TR_MARK_MAGIC 0x46534D4Bu
#define TR_MARK_VERSION 1u
#define TR_MARK_FRAME_LEN 60u
#define TR_MARK_HASHED 60u
#define TR_WHERE_UNKNOWN 0xFFFFFFFFu

typedef enum tr_mark_flag {
	TR_DROPPED = 1u << 0,    /* lost at `where`: recorded at the point and time of loss */
	TR_CORRUPTED = 1u << 1,  /* damaged at `where`: the frame is recorded as damaged */
	TR_RETRANSMIT = 1u << 2, /* sent again by the requester (after a NAK or a timeout) */
	TR_DUPLICATE = 1u << 3,  /* a copy made by the network */
	TR_REORDERED = 1u << 4,  /* held back by the network and delivered out of order */
	TR_MARK_ALL = 0x1f
} tr_mark_flag;

/* Numbered as the network model's drop reasons plus one (0 = not given). */
typedef enum tr_mark_reason {
	TR_REASON_NONE = 0,
	TR_REASON_LOSS = 1,      /* random (Bernoulli) loss */
	TR_REASON_BURST = 2,     /* burst loss (Gilbert-Elliott) */
	TR_REASON_SCRIPTED = 3,  /* a scripted "drop the nth packet" */
	TR_REASON_LINK_DOWN = 4, /* sent on a link that was down */
	TR_REASON_BUFFER = 5,    /* tail drop at a full queue */
	TR_REASON_TIMEOUT = 6,   /* retransmission after the transport timer fired */
	TR_REASON_NAK = 7,       /* retransmission after a NAK */
	TR_REASON_KINDS
} tr_mark_reason;

typedef struct tr_where {
	uint8_t reason; /* tr_mark_reason */
	uint32_t node;
	uint32_t port;
	uint32_t link;
} tr_where;

typedef struct tr_mark {
	uint16_t flags; /* tr_mark_flag bits; 0 = no mark */
	tr_where where;
	uint32_t covered_len;  /* from the marker frame: the described frame's wire length */
	uint32_t covered_hash; /* and its hash */
} tr_mark;

/* Writes the marker frame for `flags`/`where` describing frame[0..len) into out. where may be NULL
 * (all unknown). */
void tr_mark_frame_build(uint8_t out[TR_MARK_FRAME_LEN], uint16_t flags, const tr_where *where,
			 const uint8_t *frame, uint32_t caplen, uint32_t len);

/* Reads an Ethernet frame as a marker: 1 (and *m filled) when it is one, 0 when it is not (other
 * EtherType or magic), -EINVAL with a message when it claims to be one but is damaged. */
int tr_mark_frame_parse(const uint8_t *frame, uint32_t caplen, tr_mark *m, tr_error *err);

/* Whether the marker m describes frame[0..caplen) of wire length len; when it does not, -EINVAL
 * and a message. */
int tr_mark_matches(const tr_mark *m, const uint8_t *frame, uint32_t caplen, uint32_t len,
		    tr_error *err);

const char *tr_mark_reason_name(uint8_t reason);

/* "dropped,retransmit": the names of the flags, comma-separated, into buf. */
const char *tr_mark_flags_str(uint16_t flags, char *buf, unsigned size);

#ifdef __cplusplus
}
#endif

#endif
