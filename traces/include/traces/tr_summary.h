/* SPDX-License-Identifier: BSD-2-Clause
 * `trace summary`: what a trace contains, per QP flow and in total — packets per opcode,
 * messages reassembled from FIRST/MIDDLE/LAST, bytes, goodput, retransmissions, PSN gaps, NAKs by
 * kind, drops and their reasons, and the latency of READ responses, atomic responses and ACKs.
 * A flow is one direction of a QP: source address and UDP port -> destination address and QP
 * (native InfiniBand: source LID -> destination LID and QP). */
#ifndef TR_SUMMARY_H
#define TR_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

#include "traces/tr_error.h"
#include "traces/tr_mark.h"
#include "traces/tr_opcode.h"
#include "traces/tr_trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tr_nak_kind {
	TR_NAKK_PSN_SEQUENCE = 0,
	TR_NAKK_RNR,
	TR_NAKK_INVALID_REQUEST,
	TR_NAKK_REMOTE_ACCESS,
	TR_NAKK_REMOTE_OPERATIONAL,
	TR_NAKK_OTHER, /* invalid RD request, reserved codes */
	TR_NAKK_KINDS
} tr_nak_kind;

typedef enum tr_msg_kind {
	TR_MSG_SEND = 0,
	TR_MSG_WRITE,
	TR_MSG_READ,   /* reassembled from the READ responses */
	TR_MSG_ATOMIC, /* compare-and-swap and fetch-and-add requests, and fabsim atomics
			* (tr_atomichdr.h): their operand bytes */
	TR_MSG_KINDS
} tr_msg_kind;

typedef enum tr_lat_kind {
	TR_LAT_READ = 0, /* READ request -> first response packet */
	TR_LAT_ATOMIC,   /* atomic request -> atomic ACK */
	TR_LAT_ACK,      /* data packet -> the ACK carrying its PSN */
	TR_LAT_KINDS
} tr_lat_kind;

typedef struct tr_msg_stats {
	uint64_t count;
	uint64_t bytes;
	uint64_t min_bytes;
	uint64_t max_bytes;
} tr_msg_stats;

typedef struct tr_latency {
	uint64_t count;
	uint64_t min_ns, max_ns, p50_ns, p99_ns;
	double mean_ns;
} tr_latency;

typedef struct tr_flow_summary {
	char src[64];              /* "192.168.70.6:72" */
	char dst[64];              /* "192.168.70.4" */
	uint32_t dest_qp;
	uint8_t transport;         /* tr_transport of its first packet */
	uint64_t packets;
	uint64_t bytes;            /* frame lengths on the wire */
	uint64_t payload_bytes;    /* payload of every packet, retransmissions included */
	uint64_t unique_payload_bytes; /* payload of each PSN once */
	uint64_t first_ns, last_ns;
	double goodput_bps;        /* unique payload bits / (last - first); 0 for one instant */
	uint64_t ops[TR_OP_KINDS]; /* packets per operation */
	tr_msg_stats messages[TR_MSG_KINDS];
	uint64_t tagged_messages;  /* SENDs carrying a fabsim tag header */
	uint64_t incomplete_messages;
	uint64_t retransmissions;  /* packets whose PSN this flow had sent before */
	uint64_t psn_gaps;         /* jumps forward over PSNs never seen */
	uint64_t dropped, corrupted, duplicated;
	uint64_t reordered;        /* marked so, or a PSN never seen arriving after a later one */
	uint64_t naks[TR_NAKK_KINDS];
} tr_flow_summary;

typedef struct tr_summary {
	char file[256];
	char format[32];
	uint32_t linktype;
	uint64_t frames;        /* records in the file */
	uint64_t packets;       /* IB transport packets */
	uint64_t markers;       /* fabsim marker frames */
	uint64_t other;         /* frames of other protocols, skipped */
	uint64_t malformed;     /* frames that could not be parsed (see trace check) */
	struct {
		const char *what;
		uint64_t count;
	} other_kinds[32];      /* what the skipped frames were (every kind the parser names) */
	unsigned n_other_kinds;
	uint64_t bytes;         /* wire bytes of the IB packets */
	uint64_t payload_bytes;
	uint64_t first_ns, last_ns;
	uint64_t opcode_packets[256];
	uint64_t opcode_bytes[256];
	uint64_t truncated;     /* captured without their tail: ICRC not checked */
	uint64_t icrc_bad;      /* ICRC mismatches on frames not marked corrupted */
	uint64_t vcrc_bad;
	uint64_t retransmissions;
	uint64_t psn_gaps;
	uint64_t dropped, corrupted, duplicated, reordered, marked_retransmits;
	uint64_t duplicate_captures; /* the same frame recorded twice by the capture (same bytes,
				      * same time), not a copy on the wire: no part in the analysis */
	uint64_t drop_reasons[TR_REASON_KINDS];
	uint64_t naks[TR_NAKK_KINDS];
	tr_msg_stats messages[TR_MSG_KINDS];
	uint64_t tagged_messages;
	tr_latency latency[TR_LAT_KINDS];
	uint64_t problems;      /* what `trace check` would report */
	size_t n_flows;
	tr_flow_summary *flows; /* by first appearance */
} tr_summary;

/* Reads path to the end and summarises it. Returns 0, or a negative errno when the file could
 * not be opened or read to the end (err says where); *out then holds what was read before the
 * error (NULL only when nothing could be read). Free with tr_summary_free. */
int tr_summary_file(const char *path, tr_summary **out, tr_error *err);

/* Same over an open reader (which stays open). */
int tr_summary_reader(tr_reader *r, const char *name, tr_summary **out, tr_error *err);

void tr_summary_free(tr_summary *s);

/* The aligned tables `fabsim trace summary` prints. */
void tr_summary_print(const tr_summary *s, FILE *out);

/* The same as JSON (one object, see README.md); -ENOMEM or -EIO. `error`,
 * when not NULL, is why the file could not be read to its end, in an
 * "error" member; s may then be NULL (a file not read at all), and the
 * object holds only the error. */
int tr_summary_print_json(const tr_summary *s, const char *error, FILE *out,
			  tr_error *err);

/* The JSON text, malloc'd (free it), or NULL when out of memory. */
char *tr_summary_json(const tr_summary *s);

const char *tr_nak_kind_name(tr_nak_kind k);
const char *tr_msg_kind_name(tr_msg_kind k);
const char *tr_lat_kind_name(tr_lat_kind k);

#ifdef __cplusplus
}
#endif

#endif
