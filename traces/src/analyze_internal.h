/* SPDX-License-Identifier: BSD-2-Clause
 * What the analyzer keeps per flow, and its stages: packet checks, the request side (PSN sequence,
 * message reassembly) and the response side (ACK/NAK, READ responses, latencies). */
#ifndef TR_ANALYZE_INTERNAL_H
#define TR_ANALYZE_INTERNAL_H

#include "analyze.h"

/* Requests remembered per flow so that a response can be matched to what it answers, and a PSN
 * arriving late told from one sent again (RC and UC). PSNs are
 * sequential, so a ring indexed by PSN keeps the most recent TR_SENT_RING of them. It starts
 * small and doubles when a PSN would push out one still within that reach: a capture of many
 * short flows (one request each) costs a few hundred bytes a flow, not 16 KiB. */
#define TR_SENT_RING 1024u
#define TR_SENT_FIRST 8u

enum tr_sent_kind { TR_SENT_DATA = 1, TR_SENT_READ, TR_SENT_ATOMIC };

typedef struct tr_sent {
	uint32_t psn;
	uint8_t kind;     /* tr_sent_kind; 0 = empty */
	bool dropped;     /* no copy reached the responder yet: no response can be its */
	bool answered;    /* its first response was measured */
	uint64_t ts_ns;   /* its first transmission */
} tr_sent;

/* Where a flow is between FIRST and LAST. */
enum tr_msg_state {
	TR_MSTATE_NONE = 0, /* between messages */
	TR_MSTATE_OPEN,     /* after FIRST or MIDDLE */
	TR_MSTATE_UNKNOWN,  /* start of the capture or after a gap: anything may come */
	TR_MSTATE_REPLAY,   /* READ responses: one answered in full, sent again */
};

typedef struct tr_msg_progress {
	int state;          /* tr_msg_state */
	uint8_t op;         /* tr_op of the open message */
	uint64_t bytes;
	bool tagged;
	bool has_dma;
	uint32_t dma_len;   /* RDMA WRITE: what the RETH announced */
	uint32_t next_psn;  /* READ responses: the PSN the next one must carry */
	bool has_done;      /* READ responses: a message was completed, ... */
	uint32_t done_psn;  /* ... its last PSN */
} tr_msg_progress;

struct tr_flow {
	tr_flow_key key;    /* first: the flow table reads it */
	tr_flow_summary sum;
	bool transport_set;

	/* requests this flow sends */
	bool req_seen;
	uint32_t req_next;  /* one past the newest PSN sent */
	uint32_t req_slack; /* a READ request may be followed by a jump over its response PSNs */
	tr_msg_progress req;
	bool acked;
	uint32_t acked_psn; /* every PSN up to this one is acknowledged */
	bool nak_seen;      /* a NAK came back since the last retransmission */
	uint32_t pmtu;      /* payload of its FIRST/MIDDLE packets */
	tr_sent *sent;      /* sent_cap entries (a power of two up to TR_SENT_RING), allocated with
			     * the first RC or UC request */
	uint32_t sent_cap;

	/* responses this flow sends */
	tr_msg_progress resp;
	tr_flow *peer;      /* the request flow these responses answer, NULL until it is certain */
	tr_flow *answered_by; /* for a request flow: the response flow paired with it */
	bool unpaired_listed; /* in its host pair's list (tr_hostpair) */
	tr_flow *unpaired_prev, *unpaired_next;
};

/* Reports a problem about rec at byte `at` of its frame. */
void tr_an_problem(tr_analyzer *a, const tr_record *rec, uint32_t at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The same for a rule that only a fabsim trace (one with marks) must keep: reported at once in
 * one, held until the first mark otherwise, and dropped if none comes. */
void tr_an_problem_if_marked(tr_analyzer *a, const tr_record *rec, uint32_t at,
			     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Header, length and integrity rules of one packet. */
void tr_an_check_packet(tr_analyzer *a, tr_flow *f, const tr_record *rec);

/* A request (SEND, WRITE, READ request, atomic) on flow f. */
void tr_an_request(tr_analyzer *a, tr_flow *f, const tr_record *rec);

/* Lists f, an RC flow that just sent a request, among the candidates of its host pair for a
 * response flow to pair with (once; not when already paired). */
void tr_an_unpaired_add(tr_analyzer *a, tr_flow *f);

/* A response (READ response, ACK/NAK, atomic ACK) on flow f. */
void tr_an_response(tr_analyzer *a, tr_flow *f, const tr_record *rec);

void tr_an_message_done(tr_analyzer *a, tr_flow *f, uint8_t kind, uint64_t bytes, bool tagged);

void tr_an_sample(tr_analyzer *a, tr_lat_kind k, uint64_t ns);

#endif
