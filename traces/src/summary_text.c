/* SPDX-License-Identifier: BSD-2-Clause
 * The summary as aligned tables, for people. Every figure is also in the JSON form. */
#include <inttypes.h>
#include <string.h>

#include "traces/tr_summary.h"

static const char *linktype_name(uint32_t lt)
{
	switch (lt) {
	case TR_LINKTYPE_ETHERNET:
		return "Ethernet";
	case TR_LINKTYPE_RAW:
		return "raw IP";
	case TR_LINKTYPE_LINUX_SLL:
		return "Linux cooked";
	case TR_LINKTYPE_LINUX_SLL2:
		return "Linux cooked v2";
	case TR_LINKTYPE_ERF:
		return "ERF";
	case TR_LINKTYPE_INFINIBAND:
		return "InfiniBand";
	default:
		return "unknown";
	}
}

static const char *rate(double bps, char *buf, size_t size)
{
	static const char *const unit[] = { "b/s", "kb/s", "Mb/s", "Gb/s", "Tb/s" };
	unsigned u = 0;

	while (bps >= 1000 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		bps /= 1000;
		u++;
	}
	snprintf(buf, size, "%.3g %s", bps, unit[u]);
	return buf;
}

/* Takes a double: a mean can exceed what a uint64_t holds when timestamps are absurd. */
static const char *duration(double ns, char *buf, size_t size)
{
	if (ns >= 1e9)
		snprintf(buf, size, "%.3f s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, size, "%.3f ms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buf, size, "%.3f us", ns / 1e3);
	else
		snprintf(buf, size, "%.0f ns", ns);
	return buf;
}

static void header(const tr_summary *s, FILE *out)
{
	char d[32];

	fprintf(out, "trace     %s (%s, %s)\n", s->file, s->format, linktype_name(s->linktype));
	fprintf(out, "frames    %" PRIu64 ": %" PRIu64 " IB packets, %" PRIu64 " markers, %" PRIu64
		     " other, %" PRIu64 " malformed\n",
		s->frames, s->packets, s->markers, s->other, s->malformed);
	if (s->n_other_kinds) {
		fprintf(out, "other     ");
		for (unsigned i = 0; i < s->n_other_kinds; i++)
			fprintf(out, "%s%s %" PRIu64, i ? ", " : "", s->other_kinds[i].what,
				s->other_kinds[i].count);
		fprintf(out, "\n");
	}
	fprintf(out, "bytes     %" PRIu64 " on the wire, %" PRIu64 " payload\n", s->bytes,
		s->payload_bytes);
	fprintf(out, "duration  %s\n", duration((double)(s->last_ns - s->first_ns), d, sizeof(d)));
}

static void opcodes(const tr_summary *s, FILE *out)
{
	fprintf(out, "\n%-6s  %-34s %10s %12s\n", "opcode", "name", "packets", "bytes");
	for (unsigned op = 0; op < 256; op++) {
		if (!s->opcode_packets[op])
			continue;
		fprintf(out, "0x%02x    %-34s %10" PRIu64 " %12" PRIu64 "\n", op,
			tr_opcode_name((uint8_t)op), s->opcode_packets[op], s->opcode_bytes[op]);
	}
}

static uint64_t flow_messages(const tr_flow_summary *f)
{
	uint64_t n = 0;

	for (int k = 0; k < TR_MSG_KINDS; k++)
		n += f->messages[k].count;
	return n;
}

static uint64_t flow_naks(const tr_flow_summary *f)
{
	uint64_t n = 0;

	for (int k = 0; k < TR_NAKK_KINDS; k++)
		n += f->naks[k];
	return n;
}

static void flows(const tr_summary *s, FILE *out)
{
	char g[32];

	fprintf(out, "\n%-3s %-26s %-18s %-8s %-3s %8s %11s %11s %6s %11s %5s %5s %5s %5s\n", "#",
		"source", "destination", "dest QP", "", "packets", "bytes", "payload", "msgs",
		"goodput", "retx", "gaps", "drops", "naks");
	for (size_t i = 0; i < s->n_flows; i++) {
		const tr_flow_summary *f = &s->flows[i];

		fprintf(out, "%-3zu %-26s %-18s 0x%06x %-3s %8" PRIu64 " %11" PRIu64 " %11" PRIu64
			     " %6" PRIu64 " %11s %5" PRIu64 " %5" PRIu64 " %5" PRIu64 " %5" PRIu64 "\n",
			i + 1, f->src, f->dst, f->dest_qp, tr_transport_name(f->transport),
			f->packets, f->bytes, f->unique_payload_bytes, flow_messages(f),
			f->goodput_bps > 0 ? rate(f->goodput_bps, g, sizeof(g)) : "-",
			f->retransmissions, f->psn_gaps, f->dropped, flow_naks(f));
	}
}

static void messages(const tr_summary *s, FILE *out)
{
	fprintf(out, "\n%-8s %10s %14s %10s %10s\n", "message", "count", "bytes", "min", "max");
	for (int k = 0; k < TR_MSG_KINDS; k++) {
		const tr_msg_stats *m = &s->messages[k];

		if (!m->count)
			continue;
		fprintf(out, "%-8s %10" PRIu64 " %14" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n",
			tr_msg_kind_name(k), m->count, m->bytes, m->min_bytes, m->max_bytes);
	}
	if (s->tagged_messages)
		fprintf(out, "tagged   %10" PRIu64 "\n", s->tagged_messages);
}

static void events(const tr_summary *s, FILE *out)
{
	fprintf(out, "\nretransmissions %" PRIu64 " (marked %" PRIu64 "), PSN gaps %" PRIu64
		     ", dropped %" PRIu64 ", corrupted %" PRIu64 ", duplicated %" PRIu64
		     ", reordered %" PRIu64 "\n",
		s->retransmissions, s->marked_retransmits, s->psn_gaps, s->dropped, s->corrupted,
		s->duplicated, s->reordered);
	if (s->duplicate_captures)
		fprintf(out, "frames the capture recorded twice (same bytes, same time): %" PRIu64
			     ", left out of the analysis\n", s->duplicate_captures);
	if (s->dropped) {
		fprintf(out, "drops by reason:");
		for (int r = 0; r < TR_REASON_KINDS; r++)
			if (s->drop_reasons[r])
				fprintf(out, " %s %" PRIu64, tr_mark_reason_name((uint8_t)r),
					s->drop_reasons[r]);
		fprintf(out, "\n");
	}
	fprintf(out, "NAKs:");
	for (int k = 0; k < TR_NAKK_KINDS; k++)
		fprintf(out, " %s %" PRIu64, tr_nak_kind_name(k), s->naks[k]);
	fprintf(out, "\nICRC errors %" PRIu64 ", VCRC errors %" PRIu64 ", truncated (not checked) %"
		     PRIu64 ", problems %" PRIu64 "%s\n",
		s->icrc_bad, s->vcrc_bad, s->truncated, s->problems,
		s->problems ? " (see: trace check)" : "");
}

static void latencies(const tr_summary *s, FILE *out)
{
	char a[5][32];
	bool any = false;

	for (int k = 0; k < TR_LAT_KINDS; k++)
		any |= s->latency[k].count > 0;
	if (!any)
		return;
	fprintf(out, "\n%-16s %8s %12s %12s %12s %12s %12s\n", "latency", "count", "min", "p50",
		"mean", "p99", "max");
	for (int k = 0; k < TR_LAT_KINDS; k++) {
		const tr_latency *l = &s->latency[k];

		if (!l->count)
			continue;
		fprintf(out, "%-16s %8" PRIu64 " %12s %12s %12s %12s %12s\n", tr_lat_kind_name(k),
			l->count, duration((double)l->min_ns, a[0], 32),
			duration((double)l->p50_ns, a[1], 32), duration(l->mean_ns, a[2], 32),
			duration((double)l->p99_ns, a[3], 32), duration((double)l->max_ns, a[4], 32));
	}
}

void tr_summary_print(const tr_summary *s, FILE *out)
{
	header(s, out);
	if (s->packets) {
		opcodes(s, out);
		flows(s, out);
		messages(s, out);
	}
	events(s, out);
	latencies(s, out);
}
