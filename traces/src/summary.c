/* SPDX-License-Identifier: BSD-2-Clause
 * tr_summary_*: read a trace to the end through the analyzer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"

static int run(tr_reader *r, const char *name, tr_summary *s, tr_error *err)
{
	tr_analyzer a;
	tr_reader_info info;
	tr_record *rec = malloc(sizeof(*rec));
	int ret;

	if (!rec)
		return tr_error_set(err, -ENOMEM, "out of memory");
	tr_reader_get_info(r, &info);
	snprintf(s->file, sizeof(s->file), "%s", name ? name : "trace");
	snprintf(s->format, sizeof(s->format), "%s", info.format);
	s->linktype = info.linktype;
	tr_analyzer_init(&a, s, NULL, NULL);
	while ((ret = tr_reader_next(r, rec, err)) > 0) {
		if (tr_analyzer_record(&a, rec)) {
			ret = tr_error_set(err, -ENOMEM, "out of memory after frame %llu",
					   (unsigned long long)rec->frame);
			break;
		}
	}
	if (ret < 0)
		s->problems++;
	if (tr_analyzer_finish(&a) && ret >= 0)
		ret = tr_error_set(err, -ENOMEM, "out of memory");
	tr_analyzer_free(&a);
	free(rec);
	return ret < 0 ? ret : 0;
}

int tr_summary_reader(tr_reader *r, const char *name, tr_summary **out, tr_error *err)
{
	tr_summary *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return tr_error_set(err, -ENOMEM, "out of memory");
	*out = s;
	return run(r, name, s, err);
}

int tr_summary_file(const char *path, tr_summary **out, tr_error *err)
{
	tr_reader *r;
	int ret;

	*out = NULL;
	ret = tr_reader_open(&r, path, err);
	if (ret)
		return ret;
	ret = tr_summary_reader(r, path, out, err);
	tr_reader_close(r);
	return ret;
}

void tr_summary_free(tr_summary *s)
{
	if (!s)
		return;
	free(s->flows);
	free(s);
}

const char *tr_nak_kind_name(tr_nak_kind k)
{
	static const char *const name[TR_NAKK_KINDS] = {
		[TR_NAKK_PSN_SEQUENCE] = "psn_sequence_error",
		[TR_NAKK_RNR] = "rnr",
		[TR_NAKK_INVALID_REQUEST] = "invalid_request",
		[TR_NAKK_REMOTE_ACCESS] = "remote_access_error",
		[TR_NAKK_REMOTE_OPERATIONAL] = "remote_operational_error",
		[TR_NAKK_OTHER] = "other",
	};
	return (unsigned)k < TR_NAKK_KINDS ? name[k] : "unknown";
}

const char *tr_msg_kind_name(tr_msg_kind k)
{
	static const char *const name[TR_MSG_KINDS] = { "send", "write", "read", "atomic" };
	return (unsigned)k < TR_MSG_KINDS ? name[k] : "unknown";
}

const char *tr_lat_kind_name(tr_lat_kind k)
{
	static const char *const name[TR_LAT_KINDS] = { "read_response", "atomic_response",
							"ack" };
	return (unsigned)k < TR_LAT_KINDS ? name[k] : "unknown";
}
