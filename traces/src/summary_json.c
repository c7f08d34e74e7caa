/* SPDX-License-Identifier: BSD-2-Clause
 * The summary as JSON (jansson), for programs. Keys are stable; README.md lists them. */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "traces/tr_summary.h"

/* Every allocation of the tree can fail; one that did makes the whole
 * summary fail rather than print without what it would have held. */
static void set(bool *bad, json_t *obj, const char *key, json_t *value)
{
	if (!obj) {
		json_decref(value);
		*bad = true;
	} else if (!value || json_object_set_new(obj, key, value)) {
		*bad = true; /* json_object_set_new let go of value */
	}
}

static void append(bool *bad, json_t *array, json_t *value)
{
	if (!array) {
		json_decref(value);
		*bad = true;
	} else if (!value || json_array_append_new(array, value)) {
		*bad = true;
	}
}

/* The length of the well-formed UTF-8 sequence at c (at most avail bytes),
 * or 0: no overlong forms, surrogates or code points past U+10FFFF. */
static size_t utf8_sequence(const unsigned char *c, size_t avail)
{
	size_t len = c[0] < 0x80 ? 1 : c[0] >= 0xc2 && c[0] <= 0xdf ? 2 :
		     c[0] >= 0xe0 && c[0] <= 0xef ? 3 : c[0] >= 0xf0 && c[0] <= 0xf4 ? 4 : 0;

	if (!len || len > avail)
		return 0;
	for (size_t k = 1; k < len; k++)
		if ((c[k] & 0xc0) != 0x80)
			return 0;
	if ((c[0] == 0xe0 && c[1] < 0xa0) || (c[0] == 0xed && c[1] >= 0xa0) ||
	    (c[0] == 0xf0 && c[1] < 0x90) || (c[0] == 0xf4 && c[1] >= 0x90))
		return 0;
	return len;
}

/* A JSON string of text that may not be UTF-8 (a file name is bytes): each
 * byte that does not start a well-formed sequence becomes U+FFFD. */
static json_t *utf8_string(const char *text)
{
	size_t len = strlen(text), n = 0;
	char *buf = malloc(3 * len + 1);
	json_t *s;

	if (!buf)
		return NULL;
	for (size_t i = 0; i < len;) {
		size_t seq = utf8_sequence((const unsigned char *)text + i, len - i);

		if (seq) {
			memcpy(buf + n, text + i, seq);
			n += seq;
			i += seq;
		} else {
			memcpy(buf + n, "\xef\xbf\xbd", 3); /* U+FFFD */
			n += 3;
			i++;
		}
	}
	s = json_stringn(buf, n);
	free(buf);
	return s;
}

static json_t *msg_stats(const tr_msg_stats *m, bool *bad)
{
	json_t *o = json_object();

	for (int k = 0; k < TR_MSG_KINDS; k++) {
		set(bad, o, tr_msg_kind_name(k),
				    json_pack("{sIsIsIsI}", "count", (json_int_t)m[k].count,
					      "bytes", (json_int_t)m[k].bytes, "min_bytes",
					      (json_int_t)m[k].min_bytes, "max_bytes",
					      (json_int_t)m[k].max_bytes));
	}
	return o;
}

static json_t *naks(const uint64_t *n, bool *bad)
{
	json_t *o = json_object();

	for (int k = 0; k < TR_NAKK_KINDS; k++)
		set(bad, o, tr_nak_kind_name(k), json_integer((json_int_t)n[k]));
	return o;
}

static json_t *flow(const tr_flow_summary *f, bool *bad)
{
	json_t *ops = json_object();
	json_t *o;

	for (int k = 0; k < TR_OP_KINDS; k++)
		if (f->ops[k])
			set(bad, ops, tr_op_name(k), json_integer((json_int_t)f->ops[k]));
	o = json_pack("{sssssIsssIsIsIsIsIsIsIsfsIsIsIsIsIsI}", "src", f->src, "dst", f->dst,
		      "dest_qp", (json_int_t)f->dest_qp, "transport",
		      tr_transport_name(f->transport), "packets", (json_int_t)f->packets, "bytes",
		      (json_int_t)f->bytes, "payload_bytes", (json_int_t)f->payload_bytes,
		      "unique_payload_bytes", (json_int_t)f->unique_payload_bytes, "first_ns",
		      (json_int_t)f->first_ns, "last_ns", (json_int_t)f->last_ns, "duration_ns",
		      (json_int_t)(f->last_ns - f->first_ns), "goodput_bps", f->goodput_bps,
		      "retransmissions", (json_int_t)f->retransmissions, "psn_gaps",
		      (json_int_t)f->psn_gaps, "dropped", (json_int_t)f->dropped, "corrupted",
		      (json_int_t)f->corrupted, "duplicated", (json_int_t)f->duplicated,
		      "tagged_messages", (json_int_t)f->tagged_messages);
	if (!o) {
		json_decref(ops);
		*bad = true;
		return NULL;
	}
	set(bad, o, "reordered", json_integer((json_int_t)f->reordered));
	set(bad, o, "incomplete_messages", json_integer((json_int_t)f->incomplete_messages));
	set(bad, o, "ops", ops);
	set(bad, o, "messages", msg_stats(f->messages, bad));
	set(bad, o, "naks", naks(f->naks, bad));
	return o;
}

/* The summary's tree; its flows too when with_flows (else the caller
 * writes them one at a time: a capture may hold hundreds of thousands). */
static json_t *build(const tr_summary *s, bool with_flows, bool *bad)
{
	json_t *root = json_object(), *other = json_object(), *ops = json_array(),
	       *flows = json_array(), *lat = json_object(), *reasons = json_object();

	for (unsigned i = 0; i < s->n_other_kinds; i++)
		set(bad, other, s->other_kinds[i].what,
				    json_integer((json_int_t)s->other_kinds[i].count));
	for (unsigned op = 0; op < 256; op++) {
		if (!s->opcode_packets[op])
			continue;
		append(bad, ops, json_pack("{sIsssIsI}", "opcode", (json_int_t)op,
						     "name", tr_opcode_name((uint8_t)op), "packets",
						     (json_int_t)s->opcode_packets[op], "bytes",
						     (json_int_t)s->opcode_bytes[op]));
	}
	for (size_t i = 0; with_flows && i < s->n_flows; i++)
		append(bad, flows, flow(&s->flows[i], bad));
	for (int k = 0; k < TR_LAT_KINDS; k++) {
		const tr_latency *l = &s->latency[k];

		set(bad, lat, tr_lat_kind_name(k),
				    json_pack("{sIsIsIsIsIsf}", "count", (json_int_t)l->count,
					      "min_ns", (json_int_t)l->min_ns, "p50_ns",
					      (json_int_t)l->p50_ns, "p99_ns", (json_int_t)l->p99_ns,
					      "max_ns", (json_int_t)l->max_ns, "mean_ns", l->mean_ns));
	}
	for (int r = 1; r < TR_REASON_KINDS; r++)
		set(bad, reasons, tr_mark_reason_name((uint8_t)r),
				    json_integer((json_int_t)s->drop_reasons[r]));

	set(bad, root, "file", utf8_string(s->file));
	set(bad, root, "format", json_string(s->format));
	set(bad, root, "linktype", json_integer(s->linktype));
	set(bad, root, "frames", json_integer((json_int_t)s->frames));
	set(bad, root, "packets", json_integer((json_int_t)s->packets));
	set(bad, root, "markers", json_integer((json_int_t)s->markers));
	set(bad, root, "other", json_integer((json_int_t)s->other));
	set(bad, root, "other_kinds", other);
	set(bad, root, "malformed", json_integer((json_int_t)s->malformed));
	set(bad, root, "bytes", json_integer((json_int_t)s->bytes));
	set(bad, root, "payload_bytes", json_integer((json_int_t)s->payload_bytes));
	set(bad, root, "first_ns", json_integer((json_int_t)s->first_ns));
	set(bad, root, "last_ns", json_integer((json_int_t)s->last_ns));
	set(bad, root, "opcodes", ops);
	set(bad, root, "truncated", json_integer((json_int_t)s->truncated));
	set(bad, root, "icrc_errors", json_integer((json_int_t)s->icrc_bad));
	set(bad, root, "vcrc_errors", json_integer((json_int_t)s->vcrc_bad));
	set(bad, root, "retransmissions", json_integer((json_int_t)s->retransmissions));
	set(bad, root, "marked_retransmits",
			    json_integer((json_int_t)s->marked_retransmits));
	set(bad, root, "psn_gaps", json_integer((json_int_t)s->psn_gaps));
	set(bad, root, "dropped", json_integer((json_int_t)s->dropped));
	set(bad, root, "drop_reasons", reasons);
	set(bad, root, "corrupted", json_integer((json_int_t)s->corrupted));
	set(bad, root, "duplicated", json_integer((json_int_t)s->duplicated));
	set(bad, root, "duplicate_captures", json_integer((json_int_t)s->duplicate_captures));
	set(bad, root, "reordered", json_integer((json_int_t)s->reordered));
	set(bad, root, "naks", naks(s->naks, bad));
	set(bad, root, "messages", msg_stats(s->messages, bad));
	set(bad, root, "tagged_messages", json_integer((json_int_t)s->tagged_messages));
	set(bad, root, "latency", lat);
	set(bad, root, "problems", json_integer((json_int_t)s->problems));
	if (with_flows)
		set(bad, root, "flows", flows);
	else
		json_decref(flows);
	return root;
}

char *tr_summary_json(const tr_summary *s)
{
	bool bad = false;
	json_t *root = build(s, true, &bad);
	char *text = root && !bad ?
			     json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER) :
			     NULL;

	json_decref(root);
	return text;
}

/* text, each line after the first indented by `by` spaces. */
static int print_indented(FILE *out, const char *text, int by)
{
	for (const char *c = text; *c; c++)
		if (fputc(*c, out) == EOF || (*c == '\n' && fprintf(out, "%*s", by, "") < 0))
			return -1;
	return 0;
}

/* The flows as the members of the "flows" array that closes the object,
 * one built, written and freed at a time. */
static int print_flows(const tr_summary *s, FILE *out, tr_error *err)
{
	if (fprintf(out, ",\n  \"flows\": [") < 0)
		goto io;
	for (size_t i = 0; i < s->n_flows; i++) {
		bool bad = false;
		json_t *f = flow(&s->flows[i], &bad);
		char *text = f && !bad ? json_dumps(f, JSON_INDENT(2) | JSON_PRESERVE_ORDER)
				       : NULL;
		int ret;

		json_decref(f);
		if (!text)
			return tr_error_set(err, -ENOMEM, "out of memory for the JSON summary");
		ret = fprintf(out, "%s\n    ", i ? "," : "") < 0 ? -1 : print_indented(out, text, 4);
		free(text);
		if (ret)
			goto io;
	}
	if (fprintf(out, s->n_flows ? "\n  ]" : "]") < 0)
		goto io;
	return 0;
io:
	return tr_error_set(err, -EIO, "cannot write the JSON summary");
}

int tr_summary_print_json(const tr_summary *s, const char *error, FILE *out,
			  tr_error *err)
{
	bool bad = false;
	json_t *root = s ? build(s, false, &bad) : json_object();
	char *text = NULL;
	size_t len;
	int ret = 0;

	if (error)
		set(&bad, root, "error", utf8_string(error));
	if (root && !bad)
		text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (!text)
		return tr_error_set(err, -ENOMEM, "out of memory for the JSON summary");
	/* The object without its flows ends "\n}": they go in before that. */
	len = strlen(text);
	if (s && len >= 2 && !strcmp(text + len - 2, "\n}")) {
		text[len - 2] = '\0';
		if (fprintf(out, "%s", text) < 0)
			ret = tr_error_set(err, -EIO, "cannot write the JSON summary");
		if (!ret)
			ret = print_flows(s, out, err);
		if (!ret && fprintf(out, "\n}\n") < 0)
			ret = tr_error_set(err, -EIO, "cannot write the JSON summary");
	} else if (fprintf(out, "%s\n", text) < 0) {
		ret = tr_error_set(err, -EIO, "cannot write the JSON summary");
	}
	free(text);
	return ret;
}
