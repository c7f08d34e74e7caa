/* SPDX-License-Identifier: BSD-2-Clause */
#include "fuzz_entry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traces/tr_mark.h"
#include "traces/tr_packet.h"
#include "traces/tr_summary.h"
#include "traces/tr_taghdr.h"
#include "traces/tr_trace.h"

static const uint32_t linktypes[] = {
	TR_LINKTYPE_ETHERNET,   TR_LINKTYPE_RAW,        TR_LINKTYPE_LINUX_SLL,
	TR_LINKTYPE_LINUX_SLL2, TR_LINKTYPE_ERF,        TR_LINKTYPE_INFINIBAND,
};

/* The bytes as one frame, whole and as if the capture had cut it. */
static void frames(const uint8_t *data, uint32_t n)
{
	tr_packet p;
	tr_error err;
	tr_mark m;
	tr_taghdr t;
	const char *what;

	for (size_t i = 0; i < sizeof(linktypes) / sizeof(linktypes[0]); i++) {
		tr_packet_parse(&p, data, n, n, linktypes[i], &what, &err);
		tr_packet_parse(&p, data, n / 2, n, linktypes[i], &what, &err);
		tr_packet_parse(&p, data, n, n + 1000, linktypes[i], &what, &err);
	}
	if (tr_mark_frame_parse(data, n, &m, &err) > 0)
		tr_mark_matches(&m, data, n, n, &err);
	tr_taghdr_decode(data, n, &t, &err);
}

int tr_fuzz_one(const uint8_t *data, size_t size)
{
	tr_summary *s = NULL;
	tr_reader *r;
	tr_error err;
	FILE *f;
	int records = 0;

	frames(data, size > 0xFFFF ? 0xFFFF : (uint32_t)size);
	if (size == 0)
		return 0;
	/* fmemopen wants a writable buffer only for writing; "rb" never writes. */
	f = fmemopen((void *)data, size, "rb");
	if (!f)
		return 0;
	if (tr_reader_fopen(&r, f, "fuzz", &err))
		return 0;
	tr_summary_reader(r, "fuzz", &s, &err);
	if (s) {
		char *json = tr_summary_json(s);
		FILE *null = fopen("/dev/null", "w");

		if (null) {
			tr_summary_print(s, null);
			fclose(null);
		}
		records = (int)s->frames;
		free(json);
		tr_summary_free(s);
	}
	tr_reader_close(r);
	return records;
}
