/* SPDX-License-Identifier: BSD-2-Clause
 * tr_check_file: the analyzer with its problems printed. */
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "traces/tr_check.h"

static void print_problem(void *ctx, const char *msg)
{
	FILE *out = ctx;

	if (out)
		fprintf(out, "%s\n", msg);
}

int tr_check_file(const char *path, FILE *out, tr_check_result *res)
{
	tr_summary *s = calloc(1, sizeof(*s));
	tr_record *rec = malloc(sizeof(*rec));
	tr_reader *r = NULL;
	tr_analyzer a;
	tr_error err;
	int ret = -1;

	if (!s || !rec) {
		print_problem(out, "out of memory");
		goto done;
	}
	tr_analyzer_init(&a, s, print_problem, out);
	if (tr_reader_open(&r, path, &err)) {
		tr_analyzer_problem(&a, err.msg);
	} else {
		while ((ret = tr_reader_next(r, rec, &err)) > 0)
			if (tr_analyzer_record(&a, rec)) {
				tr_analyzer_problem(&a, "out of memory");
				break;
			}
		if (ret < 0)
			tr_analyzer_problem(&a, err.msg);
		/* A capture cut after a marker: what it marks is not there. */
		if (ret == 0 && tr_reader_cut_marker(r)) {
			char msg[160];

			snprintf(msg, sizeof(msg), "frame %llu: marker at the end of the file, "
				 "with no frame after it (the file was cut)",
				 (unsigned long long)tr_reader_cut_marker(r));
			tr_analyzer_problem(&a, msg);
		}
		tr_reader_close(r);
		/* No RoCE or InfiniBand packet: nothing was checked, and a clean
		 * verdict would say otherwise — frames of other traffic (or a
		 * wrong link type), or none at all (a capture that caught
		 * nothing). A file cut before its first frame already said so. */
		if (s->frames && !s->packets) {
			char msg[128];

			snprintf(msg, sizeof(msg), "none of its %llu frames is a RoCE or "
				 "InfiniBand packet: nothing was checked",
				 (unsigned long long)s->frames);
			tr_analyzer_problem(&a, msg);
		} else if (!s->frames && ret == 0) {
			tr_analyzer_problem(&a, "the file holds no frame: nothing was checked");
		}
	}
	tr_analyzer_finish(&a);
	tr_analyzer_free(&a);
	if (res) {
		res->frames = s->frames;
		res->packets = s->packets;
		res->problems = s->problems;
	}
	ret = s->problems ? 1 : 0;
done:
	if (s)
		free(s->flows);
	free(s);
	free(rec);
	return ret < 0 ? 1 : ret;
}
