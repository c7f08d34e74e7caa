/* SPDX-License-Identifier: BSD-2-Clause
 * The analyzer behind `trace summary` and `trace check`: it takes the reader's records one by one,
 * keeps per-flow state (PSN sequences, open messages, requests awaiting their response) and
 * fills a tr_summary. Every rule a trace can break is decided here, once; `check` prints the
 * problems, `summary` counts them. */
#ifndef TR_ANALYZE_H
#define TR_ANALYZE_H

#include "flow.h"
#include "traces/tr_summary.h"
#include "traces/tr_trace.h"

/* msg: "frame N (byte offset X): what", without a newline. */
typedef void (*tr_problem_fn)(void *ctx, const char *msg);

typedef struct tr_samples {
	uint64_t *v;
	size_t n, cap;
} tr_samples;

/* The RC flows between two hosts (one direction) that sent requests and are not paired with a
 * response flow yet, in the order of their first request: where a response of an unpaired flow
 * looks for its request flow, whatever the number of flows elsewhere (analyze_response.c). */
typedef struct tr_hostpair {
	tr_flow_key hosts; /* family, source and destination; family 0: free slot */
	tr_flow *head, *tail;
} tr_hostpair;

typedef struct tr_analyzer {
	tr_summary *s;
	tr_flow_table flows;
	tr_hostpair *pairs; /* open addressing, npairs a power of two */
	size_t npairs, pairs_used;
	tr_samples lat[TR_LAT_KINDS];
	tr_problem_fn problem;
	void *ctx;
	int oom; /* -ENOMEM once an allocation failed: the result is then incomplete */
	/* Fingerprints of the packets recorded at the latest timestamp, to tell a frame the capture
	 * recorded twice (capture_copy in analyze.c). */
	/* Problems that hold only in a fabsim trace, seen before the trace
	 * showed a mark (tr_an_problem_if_marked). */
	char **held;
	size_t n_held, cap_held;
	uint64_t same_ts_ns;
	unsigned n_same;
	struct tr_frame_print {
		uint64_t hash;
		uint32_t caplen, wirelen;
	} same[64];
} tr_analyzer;

void tr_analyzer_init(tr_analyzer *a, tr_summary *s, tr_problem_fn fn, void *ctx);

/* Accounts for one record; -ENOMEM. */
int tr_analyzer_record(tr_analyzer *a, const tr_record *rec);

/* Reports a problem that is not tied to a record (e.g. the reader's fatal error). */
void tr_analyzer_problem(tr_analyzer *a, const char *msg);

/* Completes s: latency figures, per-flow summaries. -ENOMEM. */
int tr_analyzer_finish(tr_analyzer *a);

void tr_analyzer_free(tr_analyzer *a);

#endif
