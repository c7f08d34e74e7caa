/* SPDX-License-Identifier: BSD-2-Clause
 * The analyzer's front: counts every record, finds its flow, hands packets to the request or
 * response side, and at the end turns samples and flows into the summary. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_internal.h"

void tr_analyzer_init(tr_analyzer *a, tr_summary *s, tr_problem_fn fn, void *ctx)
{
	memset(a, 0, sizeof(*a));
	a->s = s;
	a->problem = fn;
	a->ctx = ctx;
}

void tr_analyzer_problem(tr_analyzer *a, const char *msg)
{
	a->s->problems++;
	if (a->problem)
		a->problem(a->ctx, msg);
}

static void format_problem(char *msg, size_t len, const tr_record *rec, uint32_t at,
			   const char *fmt, va_list ap)
{
	char what[400];

	vsnprintf(what, sizeof(what), fmt, ap);
	if (rec->offset >= 0)
		snprintf(msg, len, "frame %llu (byte offset %lld): %s",
			 (unsigned long long)rec->frame, (long long)(rec->offset + at), what);
	else
		snprintf(msg, len, "frame %llu (byte %u of the frame): %s",
			 (unsigned long long)rec->frame, at, what);
}

void tr_an_problem(tr_analyzer *a, const tr_record *rec, uint32_t at, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	format_problem(msg, sizeof(msg), rec, at, fmt, ap);
	va_end(ap);
	tr_analyzer_problem(a, msg);
}

void tr_an_problem_if_marked(tr_analyzer *a, const tr_record *rec, uint32_t at,
			     const char *fmt, ...)
{
	char msg[512], *copy, **held;
	va_list ap;

	va_start(ap, fmt);
	format_problem(msg, sizeof(msg), rec, at, fmt, ap);
	va_end(ap);
	if (a->s->markers) {
		tr_analyzer_problem(a, msg);
		return;
	}
	if (a->n_held == a->cap_held) {
		size_t cap = a->cap_held ? a->cap_held * 2 : 16;

		held = realloc(a->held, cap * sizeof(*held));
		if (!held) {
			a->oom = -ENOMEM;
			return;
		}
		a->held = held;
		a->cap_held = cap;
	}
	copy = strdup(msg);
	if (!copy) {
		a->oom = -ENOMEM;
		return;
	}
	a->held[a->n_held++] = copy;
}

/* The trace has marks: it is fabsim's, and what was held is reported, in its order. */
static void report_held(tr_analyzer *a)
{
	for (size_t i = 0; i < a->n_held; i++) {
		tr_analyzer_problem(a, a->held[i]);
		free(a->held[i]);
	}
	a->n_held = 0;
}

void tr_an_sample(tr_analyzer *a, tr_lat_kind k, uint64_t ns)
{
	tr_samples *s = &a->lat[k];

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		uint64_t *v = realloc(s->v, cap * sizeof(*v));

		if (!v) {
			a->oom = -ENOMEM;
			return;
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = ns;
}

void tr_an_message_done(tr_analyzer *a, tr_flow *f, uint8_t kind, uint64_t bytes, bool tagged)
{
	tr_msg_stats *m[2] = { &f->sum.messages[kind], &a->s->messages[kind] };

	for (int i = 0; i < 2; i++) {
		if (!m[i]->count || bytes < m[i]->min_bytes)
			m[i]->min_bytes = bytes;
		if (bytes > m[i]->max_bytes)
			m[i]->max_bytes = bytes;
		m[i]->count++;
		m[i]->bytes += bytes;
	}
	if (tagged) {
		f->sum.tagged_messages++;
		a->s->tagged_messages++;
	}
}

static tr_flow *flow_of(tr_analyzer *a, const tr_packet *p)
{
	tr_flow_key k;
	tr_flow *f;

	tr_flow_key_of(p, &k);
	f = tr_flow_find(&a->flows, &k);
	if (f)
		return f;
	f = calloc(1, sizeof(*f));
	if (f)
		f->key = k;
	if (!f || tr_flow_insert(&a->flows, f)) {
		free(f);
		a->oom = -ENOMEM;
		return NULL;
	}
	f->sum.dest_qp = p->dest_qp;
	f->req.state = TR_MSTATE_UNKNOWN;
	f->resp.state = TR_MSTATE_UNKNOWN;
	return f;
}

static void count_other(tr_summary *s, const char *what)
{
	unsigned i;

	what = what ? what : "unknown";
	for (i = 0; i < s->n_other_kinds; i++) {
		if (!strcmp(s->other_kinds[i].what, what)) {
			s->other_kinds[i].count++;
			return;
		}
	}
	if (i < sizeof(s->other_kinds) / sizeof(s->other_kinds[0])) {
		s->other_kinds[i].what = what;
		s->other_kinds[i].count = 1;
		s->n_other_kinds++;
	}
}

static void count_marks(tr_analyzer *a, tr_flow *f, const tr_mark *m)
{
	tr_summary *s = a->s;

	if (m->flags & TR_DROPPED) {
		s->dropped++;
		f->sum.dropped++;
		s->drop_reasons[m->where.reason < TR_REASON_KINDS ? m->where.reason : 0]++;
	}
	if (m->flags & TR_CORRUPTED) {
		s->corrupted++;
		f->sum.corrupted++;
	}
	if (m->flags & TR_DUPLICATE) {
		s->duplicated++;
		f->sum.duplicated++;
	}
	if (m->flags & TR_REORDERED) {
		s->reordered++;
		f->sum.reordered++;
	}
	if (m->flags & TR_RETRANSMIT)
		s->marked_retransmits++;
}

/* A packet whose CRCs fail and that no mark explains (fabsim marks the ones
 * it corrupts, inverting only their ICRC): any of its fields may be wrong,
 * its PSN among them, and its receiver drops it. It takes no part in its
 * flow's sequence, messages or latencies; check reports it. */
static bool damaged(const tr_record *rec)
{
	const tr_packet *p = &rec->pkt;

	if (rec->mark.flags & TR_CORRUPTED)
		return false;
	return (p->icrc_captured && p->icrc_stored != p->icrc_computed) ||
	       (p->vcrc_captured && p->vcrc_stored != p->vcrc_computed);
}

/* A frame the capture recorded twice — the same bytes at the same time, as `mergecap` of a file
 * with itself makes — is no copy on the wire (fabsim marks those TR_DUPLICATE): it is one packet,
 * and only the first takes part in the analysis. The packets of the current timestamp are kept
 * as fingerprints (FNV-1a over the captured bytes, and both lengths): frames sharing a time are
 * few, and a 64-bit hash will not make two of them one. */
static bool capture_copy(tr_analyzer *a, const tr_record *rec)
{
	struct tr_frame_print fp = { 14695981039346656037ull, rec->caplen, rec->wirelen };

	for (uint32_t i = 0; i < rec->caplen; i++)
		fp.hash = (fp.hash ^ rec->data[i]) * 1099511628211ull;
	if (rec->ts_ns != a->same_ts_ns) {
		a->same_ts_ns = rec->ts_ns;
		a->n_same = 0;
	}
	for (unsigned i = 0; i < a->n_same; i++)
		if (a->same[i].hash == fp.hash && a->same[i].caplen == fp.caplen &&
		    a->same[i].wirelen == fp.wirelen)
			return true;
	if (a->n_same < sizeof(a->same) / sizeof(a->same[0]))
		a->same[a->n_same++] = fp;
	return false;
}

static void packet(tr_analyzer *a, const tr_record *rec)
{
	const tr_packet *p = &rec->pkt;
	tr_summary *s = a->s;
	tr_flow *f = flow_of(a, p);
	uint32_t payload = tr_packet_data_len(p);

	if (!f)
		return;
	if (!s->packets || rec->ts_ns < s->first_ns)
		s->first_ns = rec->ts_ns;
	if (rec->ts_ns > s->last_ns)
		s->last_ns = rec->ts_ns;
	s->packets++;
	s->bytes += p->wirelen;
	s->payload_bytes += payload;
	s->opcode_packets[p->opcode]++;
	s->opcode_bytes[p->opcode] += p->wirelen;
	if (p->flags & TR_PKT_TRUNCATED)
		s->truncated++;

	/* The earliest and latest times, as for the whole file: a fabsim
	 * trace records a lost packet at its loss, before packets that left
	 * earlier arrive, so times need not grow from frame to frame. */
	if (!f->sum.packets || rec->ts_ns < f->sum.first_ns)
		f->sum.first_ns = rec->ts_ns;
	if (rec->ts_ns > f->sum.last_ns)
		f->sum.last_ns = rec->ts_ns;
	f->sum.packets++;
	f->sum.bytes += p->wirelen;
	f->sum.payload_bytes += payload;
	if (p->op) {
		f->sum.ops[p->op->op]++;
		if (!f->transport_set) {
			f->sum.transport = p->op->transport;
			f->transport_set = true;
		}
	}
	if (!(rec->mark.flags & TR_DUPLICATE) && capture_copy(a, rec)) {
		s->duplicate_captures++;
		return; /* its checks and its place in the flow are the first one's */
	}
	count_marks(a, f, &rec->mark);
	tr_an_check_packet(a, f, rec);
	if (!p->op || (rec->mark.flags & TR_DUPLICATE) || damaged(rec))
		return;
	if (tr_op_is_response(p->op->op))
		tr_an_response(a, f, rec);
	else if (p->op->op != TR_OP_CNP)
		tr_an_request(a, f, rec);
}

int tr_analyzer_record(tr_analyzer *a, const tr_record *rec)
{
	tr_summary *s = a->s;

	s->frames++;
	if (rec->problem.msg[0])
		tr_analyzer_problem(a, rec->problem.msg);
	switch (rec->kind) {
	case TR_REC_PACKET:
		packet(a, rec);
		break;
	case TR_REC_OTHER:
		s->other++;
		count_other(s, rec->what);
		break;
	case TR_REC_MARKER:
		s->markers++;
		report_held(a);
		break;
	case TR_REC_MALFORMED:
		s->malformed++;
		break;
	}
	return a->oom;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static void latency(tr_samples *smp, tr_latency *out)
{
	double sum = 0;

	memset(out, 0, sizeof(*out));
	if (!smp->n)
		return;
	qsort(smp->v, smp->n, sizeof(*smp->v), cmp_u64);
	for (size_t i = 0; i < smp->n; i++)
		sum += (double)smp->v[i];
	out->count = smp->n;
	out->min_ns = smp->v[0];
	out->max_ns = smp->v[smp->n - 1];
	/* Nearest rank: the smallest sample with at least p% of the samples at or below it. */
	out->p50_ns = smp->v[(smp->n * 50 + 99) / 100 - 1];
	out->p99_ns = smp->v[(smp->n * 99 + 99) / 100 - 1];
	out->mean_ns = sum / (double)smp->n;
}

int tr_analyzer_finish(tr_analyzer *a)
{
	tr_summary *s = a->s;

	for (int k = 0; k < TR_LAT_KINDS; k++)
		latency(&a->lat[k], &s->latency[k]);
	s->n_flows = 0;
	s->flows = calloc(a->flows.count ? a->flows.count : 1, sizeof(*s->flows));
	if (!s->flows)
		return -ENOMEM;
	for (size_t i = 0; i < a->flows.count; i++) {
		tr_flow *f = a->flows.flows[i];
		tr_flow_summary *fs = &s->flows[i];
		uint64_t dur = f->sum.last_ns - f->sum.first_ns;

		*fs = f->sum;
		tr_flow_addr_str(&f->key, true, fs->src, sizeof(fs->src));
		tr_flow_addr_str(&f->key, false, fs->dst, sizeof(fs->dst));
		fs->goodput_bps = dur ? (double)fs->unique_payload_bytes * 8e9 / (double)dur : 0;
		fs->incomplete_messages += f->req.state == TR_MSTATE_OPEN;
		s->n_flows++;
	}
	return a->oom;
}

void tr_analyzer_free(tr_analyzer *a)
{
	for (size_t i = 0; i < a->flows.count; i++) {
		free(a->flows.flows[i]->sent);
		free(a->flows.flows[i]);
	}
	tr_flow_table_free(&a->flows);
	free(a->pairs);
	for (int k = 0; k < TR_LAT_KINDS; k++)
		free(a->lat[k].v);
	for (size_t i = 0; i < a->n_held; i++)
		free(a->held[i]); /* a foreign capture's: no fault there */
	free(a->held);
	memset(a, 0, sizeof(*a));
}
