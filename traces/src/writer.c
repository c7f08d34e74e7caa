/* SPDX-License-Identifier: BSD-2-Clause
 * The pcap writer. libpcap writes the file header and records; with nanosecond precision its
 * tv_usec field carries nanoseconds. Nothing in the file depends on the host (no wall-clock time,
 * no time zone), so the same packets give the same bytes. */
#include <errno.h>
#include <stdbool.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include "traces/tr_trace.h"

/* stdio's default buffer makes one write(2) per 4 KiB; a simulation records millions of frames. */
#define WRITE_BUFFER (1u << 20)

struct tr_writer {
	pcap_t *dead;
	pcap_dumper_t *dumper;
	char *vbuf;     /* the stream's buffer, when the writer opened the stream */
	bool shared;    /* other writers append to the file too */
	uint32_t snaplen;
	tr_writer_stats stats;
	uint8_t buf[TR_FRAME_MAX]; /* tr_trace_write_built builds here */
};

static int check_snaplen(uint32_t *snaplen, tr_error *err)
{
	if (*snaplen == 0)
		*snaplen = TR_SNAPLEN_FULL;
	if (*snaplen < TR_SNAPLEN_HEADERS || *snaplen > TR_SNAPLEN_FULL)
		return tr_error_set(err, -EINVAL,
				    "snap length %u is outside %u (headers only) .. %u (full frames)",
				    *snaplen, TR_SNAPLEN_HEADERS, TR_SNAPLEN_FULL);
	return 0;
}

static int create(tr_writer **out, uint32_t snaplen, tr_error *err)
{
	tr_writer *w;
	int ret = check_snaplen(&snaplen, err);

	*out = NULL;
	if (ret)
		return ret;
	w = calloc(1, sizeof(*w));
	if (!w)
		return tr_error_set(err, -ENOMEM, "out of memory for a trace writer");
	w->snaplen = snaplen;
	w->dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, (int)snaplen,
						       PCAP_TSTAMP_PRECISION_NANO);
	if (!w->dead) {
		free(w);
		return tr_error_set(err, -ENOMEM, "libpcap could not create a capture handle");
	}
	*out = w;
	return 0;
}

static void destroy(tr_writer *w)
{
	if (w->dead)
		pcap_close(w->dead);
	free(w->vbuf);
	free(w);
}

int tr_writer_open(tr_writer **out, const char *path, uint32_t snaplen, tr_error *err)
{
	tr_writer *w;
	FILE *f;
	int ret = create(&w, snaplen, err);

	*out = NULL;
	if (ret)
		return ret;
	f = fopen(path, "wb");
	if (!f) {
		ret = tr_error_set(err, -errno, "cannot create trace %s: %s", path, strerror(errno));
		destroy(w);
		return ret;
	}
	w->vbuf = malloc(WRITE_BUFFER);
	if (w->vbuf)
		setvbuf(f, w->vbuf, _IOFBF, WRITE_BUFFER);
	w->dumper = pcap_dump_fopen(w->dead, f);
	if (!w->dumper) {
		ret = tr_error_set(err, -EIO, "cannot write to trace %s: %s", path,
				   pcap_geterr(w->dead));
		fclose(f);
		destroy(w);
		return ret;
	}
	*out = w;
	return 0;
}

int tr_writer_open_shared(tr_writer **out, const char *path, uint32_t snaplen, tr_error *err)
{
	tr_writer *w;
	int ret = create(&w, snaplen, err);

	*out = NULL;
	if (ret)
		return ret;
	/* libpcap writes the header into an empty file and checks it in another one. */
	w->dumper = pcap_dump_open_append(w->dead, path);
	if (!w->dumper) {
		ret = tr_error_set(err, -EIO, "cannot append to trace %s: %s", path,
				   pcap_geterr(w->dead));
		destroy(w);
		return ret;
	}
	w->shared = true;
	if (fflush(pcap_dump_file(w->dumper)) != 0) {
		ret = tr_error_set(err, -EIO, "cannot write to trace %s: %s", path, strerror(errno));
		pcap_dump_close(w->dumper);
		destroy(w);
		return ret;
	}
	*out = w;
	return 0;
}

int tr_writer_fopen(tr_writer **out, FILE *f, uint32_t snaplen, tr_error *err)
{
	tr_writer *w;
	int ret = create(&w, snaplen, err);

	*out = NULL;
	if (ret) {
		fclose(f);
		return ret;
	}
	w->dumper = pcap_dump_fopen(w->dead, f);
	if (!w->dumper) {
		ret = tr_error_set(err, -EIO, "cannot write a trace header: %s",
				   pcap_geterr(w->dead));
		fclose(f);
		destroy(w);
		return ret;
	}
	*out = w;
	return 0;
}

static void dump(tr_writer *w, uint64_t ts_ns, const uint8_t *frame, uint32_t len)
{
	struct pcap_pkthdr h;

	h.ts.tv_sec = (time_t)(ts_ns / 1000000000u);
	h.ts.tv_usec = (suseconds_t)(ts_ns % 1000000000u);
	h.caplen = len < w->snaplen ? len : w->snaplen;
	h.len = len;
	/* Another writer may have appended since: write at the end. */
	if (w->shared)
		fseek(pcap_dump_file(w->dumper), 0, SEEK_END);
	pcap_dump((u_char *)w->dumper, &h, frame);
	w->stats.written_bytes += 16u + h.caplen;
}

int tr_trace_write_packet(tr_writer *w, uint64_t ts_ns, const void *frame, uint32_t len,
			  uint32_t flags, const tr_where *where, tr_error *err)
{
	if (flags & ~(uint32_t)TR_MARK_ALL)
		return tr_error_set(err, -EINVAL, "mark flags 0x%x (known: 0x%x)", flags,
				    TR_MARK_ALL);
	if (len < 14 || len > TR_FRAME_MAX)
		return tr_error_set(err, -EINVAL, "frame of %u bytes (14..%u)", len, TR_FRAME_MAX);
	if (flags) {
		uint8_t marker[TR_MARK_FRAME_LEN];

		tr_mark_frame_build(marker, (uint16_t)flags, where, frame, len, len);
		dump(w, ts_ns, marker, sizeof(marker));
		w->stats.markers++;
	}
	dump(w, ts_ns, frame, len);
	w->stats.frames++;
	w->stats.frame_bytes += len;
	/* What a shared file's next writer finds must be whole. */
	if (w->shared && pcap_dump_flush(w->dumper) != 0)
		return tr_error_set(err, -EIO, "writing the trace failed (disk full?)");
	return 0;
}

int tr_trace_write_built(tr_writer *w, uint64_t ts_ns, const tr_packet *p, uint32_t flags,
			 const tr_where *where, tr_error *err)
{
	int len = tr_packet_build(p, w->buf, sizeof(w->buf), err);

	if (len < 0)
		return len;
	return tr_trace_write_packet(w, ts_ns, w->buf, (uint32_t)len, flags, where, err);
}

void tr_writer_get_stats(const tr_writer *w, tr_writer_stats *out)
{
	*out = w->stats;
	out->written_bytes += 24; /* the file header */
}

int tr_writer_flush(tr_writer *w, tr_error *err)
{
	if (w && w->dumper && pcap_dump_flush(w->dumper) != 0)
		return tr_error_set(err, -EIO, "writing the trace failed (disk full?)");
	return 0;
}

int tr_writer_close(tr_writer *w, tr_error *err)
{
	int ret = 0;

	if (!w)
		return 0;
	if (w->dumper) {
		if (pcap_dump_flush(w->dumper) != 0 || ferror(pcap_dump_file(w->dumper)))
			ret = tr_error_set(err, -EIO, "writing the trace failed (disk full?)");
		pcap_dump_close(w->dumper);
	}
	destroy(w);
	return ret;
}
