/* SPDX-License-Identifier: BSD-2-Clause
 * The summary as JSON (jansson), for programs. Keys are stable; README.md lists them. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>

#include "traces/tr_summary.h"

static json_t *msg_stats(const tr_msg_stats *m)
{
	json_t *o = json_object();

	for (int k = 0; k < TR_MSG_KINDS; k++) {
		json_object_set_new(o, tr_msg_kind_name(k),
				    json_pack("{sIsIsIsI}", "count", (json_int_t)m[k].count,
					      "bytes", (json_int_t)m[k].bytes, "min_bytes",
					      (json_int_t)m[k].min_bytes, "max_bytes",
					      (json_int_t)m[k].max_bytes));
	}
	return o;
}

static json_t *naks(const uint64_t *n)
{
	json_t *o = json_object();

	for (int k = 0; k < TR_NAKK_KINDS; k++)
		json_object_set_new(o, tr_nak_kind_name(k), json_integer((json_int_t)n[k]));
	return o;
}

static json_t *flow(const tr_flow_summary *f)
{
	json_t *ops = json_object();
	json_t *o;

	for (int k = 0; k < TR_OP_KINDS; k++)
		if (f->ops[k])
			json_object_set_new(ops, tr_op_name(k), json_integer((json_int_t)f->ops[k]));
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
	if (!o)
		return NULL;
	json_object_set_new(o, "incomplete_messages", json_integer((json_int_t)f->incomplete_messages));
	json_object_set_new(o, "ops", ops);
	json_object_set_new(o, "messages", msg_stats(f->messages));
	json_object_set_new(o, "naks", naks(f->naks));
	return o;
}

static json_t *build(const tr_summary *s)
{
	json_t *root = json_object(), *other = json_object(), *ops = json_array(),
	       *flows = json_array(), *lat = json_object(), *reasons = json_object();

	for (unsigned i = 0; i < s->n_other_kinds; i++)
		json_object_set_new(other, s->other_kinds[i].what,
				    json_integer((json_int_t)s->other_kinds[i].count));
	for (unsigned op = 0; op < 256; op++) {
		if (!s->opcode_packets[op])
			continue;
		json_array_append_new(ops, json_pack("{sIsssIsI}", "opcode", (json_int_t)op,
						     "name", tr_opcode_name((uint8_t)op), "packets",
						     (json_int_t)s->opcode_packets[op], "bytes",
						     (json_int_t)s->opcode_bytes[op]));
	}
	for (size_t i = 0; i < s->n_flows; i++)
		json_array_append_new(flows, flow(&s->flows[i]));
	for (int k = 0; k < TR_LAT_KINDS; k++) {
		const tr_latency *l = &s->latency[k];

		json_object_set_new(lat, tr_lat_kind_name(k),
				    json_pack("{sIsIsIsIsIsf}", "count", (json_int_t)l->count,
					      "min_ns", (json_int_t)l->min_ns, "p50_ns",
					      (json_int_t)l->p50_ns, "p99_ns", (json_int_t)l->p99_ns,
					      "max_ns", (json_int_t)l->max_ns, "mean_ns", l->mean_ns));
	}
	for (int r = 1; r < TR_REASON_KINDS; r++)
		json_object_set_new(reasons, tr_mark_reason_name((uint8_t)r),
				    json_integer((json_int_t)s->drop_reasons[r]));

	json_object_set_new(root, "file", json_string(s->file));
	json_object_set_new(root, "format", json_string(s->format));
	json_object_set_new(root, "linktype", json_integer(s->linktype));
	json_object_set_new(root, "frames", json_integer((json_int_t)s->frames));
	json_object_set_new(root, "packets", json_integer((json_int_t)s->packets));
	json_object_set_new(root, "markers", json_integer((json_int_t)s->markers));
	json_object_set_new(root, "other", json_integer((json_int_t)s->other));
	json_object_set_new(root, "other_kinds", other);
	json_object_set_new(root, "malformed", json_integer((json_int_t)s->malformed));
	json_object_set_new(root, "bytes", json_integer((json_int_t)s->bytes));
	json_object_set_new(root, "payload_bytes", json_integer((json_int_t)s->payload_bytes));
	json_object_set_new(root, "first_ns", json_integer((json_int_t)s->first_ns));
	json_object_set_new(root, "last_ns", json_integer((json_int_t)s->last_ns));
	json_object_set_new(root, "opcodes", ops);
	json_object_set_new(root, "truncated", json_integer((json_int_t)s->truncated));
	json_object_set_new(root, "icrc_errors", json_integer((json_int_t)s->icrc_bad));
	json_object_set_new(root, "vcrc_errors", json_integer((json_int_t)s->vcrc_bad));
	json_object_set_new(root, "retransmissions", json_integer((json_int_t)s->retransmissions));
	json_object_set_new(root, "marked_retransmits",
			    json_integer((json_int_t)s->marked_retransmits));
	json_object_set_new(root, "psn_gaps", json_integer((json_int_t)s->psn_gaps));
	json_object_set_new(root, "dropped", json_integer((json_int_t)s->dropped));
	json_object_set_new(root, "drop_reasons", reasons);
	json_object_set_new(root, "corrupted", json_integer((json_int_t)s->corrupted));
	json_object_set_new(root, "duplicated", json_integer((json_int_t)s->duplicated));
	json_object_set_new(root, "reordered", json_integer((json_int_t)s->reordered));
	json_object_set_new(root, "naks", naks(s->naks));
	json_object_set_new(root, "messages", msg_stats(s->messages));
	json_object_set_new(root, "tagged_messages", json_integer((json_int_t)s->tagged_messages));
	json_object_set_new(root, "latency", lat);
	json_object_set_new(root, "problems", json_integer((json_int_t)s->problems));
	json_object_set_new(root, "flows", flows);
	return root;
}

char *tr_summary_json(const tr_summary *s)
{
	json_t *root = build(s);
	char *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;

	json_decref(root);
	return text;
}

int tr_summary_print_json(const tr_summary *s, const char *error, FILE *out,
			  tr_error *err)
{
	json_t *root = s ? build(s) : json_object();
	char *text = NULL;

	if (root && error &&
	    json_object_set_new(root, "error", json_string(error)) != 0) {
		json_decref(root);
		root = NULL;
	}
	if (root)
		text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);

	if (!text)
		return tr_error_set(err, -ENOMEM, "out of memory for the JSON summary");
	if (fprintf(out, "%s\n", text) < 0) {
		free(text);
		return tr_error_set(err, -EIO, "cannot write the JSON summary");
	}
	free(text);
	return 0;
}
