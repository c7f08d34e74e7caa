/* SPDX-License-Identifier: BSD-2-Clause
 * The trace reader: libpcap reads the file; this layer numbers the frames, knows where each one
 * sits in the file, turns marker frames into marks on the frame after them and parses the rest.
 * libpcap reports a damaged file (cut record, impossible length) as an error string; it is passed
 * on with the frame number and byte offset it concerns. */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytes.h"
#include "traces/tr_trace.h"

#define PCAP_MAGIC_US 0xa1b2c3d4u
#define PCAP_MAGIC_NS 0xa1b23c4du
#define PCAPNG_MAGIC 0x0a0d0d0au
#define PCAP_FILE_HLEN 24
#define PCAP_REC_HLEN 16
#define PCAPNG_EPB_DATA 28 /* block type, length, interface, timestamp x2, caplen, len */

struct tr_reader {
	pcap_t *pcap;
	FILE *f;        /* owned by pcap */
	char name[256];
	bool pcapng;
	bool nano;
	bool swapped;
	uint32_t linktype;
	int dlt;
	uint64_t frames;
	int64_t pos;    /* file position after the last record read, -1 unknown */
	bool pending;   /* a marker is waiting for its frame */
	tr_mark mark;
	uint64_t mark_frame;
	uint64_t cut_marker; /* the file ended after this marker's frame */
};

static int linktype_of_dlt(int dlt, uint32_t *out)
{
	switch (dlt) {
	case DLT_EN10MB:
		*out = TR_LINKTYPE_ETHERNET;
		return 0;
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
		*out = TR_LINKTYPE_RAW;
		return 0;
	case DLT_LINUX_SLL:
		*out = TR_LINKTYPE_LINUX_SLL;
		return 0;
#ifdef DLT_LINUX_SLL2
	case DLT_LINUX_SLL2:
		*out = TR_LINKTYPE_LINUX_SLL2;
		return 0;
#endif
	case DLT_ERF:
		*out = TR_LINKTYPE_ERF;
		return 0;
	case DLT_INFINIBAND:
		*out = TR_LINKTYPE_INFINIBAND;
		return 0;
	default:
		return -EINVAL;
	}
}

/* Reads the magic ourselves: libpcap's "unknown file format" does not say what it saw. */
static int sniff(tr_reader *r, tr_error *err)
{
	uint8_t m[4];
	size_t n = fread(m, 1, sizeof(m), r->f);
	uint32_t le, be;

	if (n < sizeof(m) && ferror(r->f))
		return tr_error_set(err, -EIO, "%s: %s", r->name, strerror(errno));
	if (n < sizeof(m))
		return tr_error_set(err, -EINVAL,
				    "%s: byte offset 0: file of %zu bytes is too short for a capture "
				    "file header", r->name, n);
	if (fseek(r->f, 0, SEEK_SET) != 0)
		return tr_error_set(err, -EINVAL, "%s: cannot rewind (not a regular file?)",
				    r->name);
	le = rd32le(m);
	be = rd32(m);
	if (le == PCAP_MAGIC_US || le == PCAP_MAGIC_NS || be == PCAP_MAGIC_US ||
	    be == PCAP_MAGIC_NS) {
		r->nano = le == PCAP_MAGIC_NS || be == PCAP_MAGIC_NS;
		return 0;
	}
	if (le == PCAPNG_MAGIC) {
		r->pcapng = true;
		return 0;
	}
	return tr_error_set(err, -EINVAL,
			    "%s: byte offset 0: magic %02x %02x %02x %02x is neither pcap (a1b2c3d4 "
			    "or a1b23c4d, either byte order) nor pcapng (0a0d0d0a)", r->name, m[0],
			    m[1], m[2], m[3]);
}

int tr_reader_fopen(tr_reader **out, FILE *f, const char *name, tr_error *err)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	tr_reader *r;
	int ret;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r) {
		fclose(f);
		return tr_error_set(err, -ENOMEM, "out of memory for a trace reader");
	}
	r->f = f;
	snprintf(r->name, sizeof(r->name), "%s", name ? name : "trace");
	ret = sniff(r, err);
	if (ret)
		goto fail;
	r->pcap = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (!r->pcap) {
		ret = tr_error_set(err, -EINVAL, "%s: byte offset 0: %s", r->name, errbuf);
		goto fail;
	}
	r->dlt = pcap_datalink(r->pcap);
	if (linktype_of_dlt(r->dlt, &r->linktype)) {
		const char *dn = pcap_datalink_val_to_name(r->dlt);

		ret = tr_error_set(err, -EINVAL,
				   "%s: link type %d (%s) is not one fabsim reads (Ethernet, Linux "
				   "cooked, raw IP, ERF, InfiniBand)", r->name, r->dlt,
				   dn ? dn : "unnamed");
		pcap_close(r->pcap);
		free(r);
		return ret;
	}
	r->swapped = pcap_is_swapped(r->pcap);
	r->pos = ftell(f);
	*out = r;
	return 0;
fail:
	fclose(f);
	free(r);
	return ret;
}

int tr_reader_open(tr_reader **out, const char *path, tr_error *err)
{
	struct stat st;
	FILE *f;

	*out = NULL;
	/* Looked at before it is opened: opening a pipe nobody writes to would wait for ever,
	 * and a reader that seeks cannot read one anyway. */
	if (stat(path, &st) != 0)
		return tr_error_set(err, -errno, "cannot open %s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return tr_error_set(err, -EISDIR, "cannot open %s: it is a directory", path);
	if (!S_ISREG(st.st_mode))
		return tr_error_set(err, -EINVAL,
				    "cannot read %s: not a regular file (a pipe or a device); the "
				    "reader seeks, so save the capture to a file first", path);
	f = fopen(path, "rb");
	if (!f)
		return tr_error_set(err, -errno, "cannot open %s: %s", path, strerror(errno));
	return tr_reader_fopen(out, f, path, err);
}

/* Where the record just read keeps its frame bytes. pcap records are back to back; a pcapng
 * block's length is repeated in its last 4 bytes, read from the file without disturbing the
 * stream libpcap reads. */
static int64_t data_offset(tr_reader *r, int64_t before, int64_t after)
{
	uint8_t tail[4];
	int fd;

	if (!r->pcapng)
		return before < 0 ? -1 : before + PCAP_REC_HLEN;
	fd = fileno(r->f);
	if (after < 4 || fd < 0 || pread(fd, tail, 4, after - 4) != 4)
		return -1;
	uint32_t total = r->swapped ? rd32(tail) : rd32le(tail);
	return (int64_t)total <= after ? after - total + PCAPNG_EPB_DATA : -1;
}

/* libpcap hands pcapng timestamps over as seconds that may not fit nanoseconds in 64 bits; such a
 * file is damaged, and its times saturate rather than wrap around. A pcap record's seconds are an
 * unsigned 32-bit field, which libpcap reads as signed: from 2038 on they come out negative. */
static uint64_t timestamp_ns(const tr_reader *r, const struct pcap_pkthdr *h)
{
	uint64_t sec = (uint64_t)h->ts.tv_sec, ns;

	if (!r->pcapng && h->ts.tv_sec < 0 && h->ts.tv_sec >= INT32_MIN)
		sec = (uint32_t)h->ts.tv_sec;
	else if (h->ts.tv_sec < 0)
		return 0;
	if (h->ts.tv_usec < 0)
		return 0;
	if (sec > UINT64_MAX / 1000000000u ||
	    __builtin_add_overflow(sec * 1000000000u, (uint64_t)h->ts.tv_usec, &ns))
		return UINT64_MAX;
	return ns;
}

static void where_str(char *buf, size_t size, uint64_t frame, int64_t offset)
{
	if (offset >= 0)
		snprintf(buf, size, "frame %llu (byte offset %lld)", (unsigned long long)frame,
			 (long long)offset);
	else
		snprintf(buf, size, "frame %llu", (unsigned long long)frame);
}

static void classify(tr_reader *r, tr_record *rec)
{
	char at[64];
	int ret;

	where_str(at, sizeof(at), rec->frame, rec->offset);
	if (r->linktype == TR_LINKTYPE_ETHERNET) {
		ret = tr_mark_frame_parse(rec->data, rec->caplen, &rec->mark, &rec->problem);
		if (ret != 0) {
			rec->kind = ret > 0 ? TR_REC_MARKER : TR_REC_MALFORMED;
			if (ret < 0)
				tr_error_prefix(&rec->problem, "%s: marker", at);
			return;
		}
		ret = tr_event_frame_parse(rec->data, rec->caplen, rec->wirelen, &rec->event,
					   &rec->problem);
		if (ret != 0) {
			rec->kind = ret > 0 ? TR_REC_OTHER : TR_REC_MALFORMED;
			rec->what = "fabsim event";
			if (ret < 0)
				tr_error_prefix(&rec->problem, "%s: event", at);
			return;
		}
	}
	ret = tr_packet_parse(&rec->pkt, rec->data, rec->caplen, rec->wirelen, r->linktype,
			      &rec->what, &rec->problem);
	if (ret < 0) {
		rec->kind = TR_REC_MALFORMED;
		tr_error_prefix(&rec->problem, "%s", at);
	} else {
		rec->kind = ret == TR_PARSE_OK ? TR_REC_PACKET : TR_REC_OTHER;
	}
}

/* A marker describes the next frame; the pair is checked so a mark is never attached to a frame
 * it was not written for. */
static void apply_mark(tr_reader *r, tr_record *rec)
{
	char at[64];
	tr_error mismatch;
	tr_mark m;

	if (rec->kind == TR_REC_MARKER) {
		m = rec->mark;
		if (r->pending) {
			where_str(at, sizeof(at), rec->frame, rec->offset);
			tr_error_set(&rec->problem, -EINVAL,
				     "%s: marker follows the marker of frame %llu, which thus "
				     "describes no frame", at, (unsigned long long)r->mark_frame);
		}
		r->pending = true;
		r->mark = m;
		r->mark_frame = rec->frame;
		return;
	}
	if (!r->pending) {
		memset(&rec->mark, 0, sizeof(rec->mark));
		return;
	}
	r->pending = false;
	/* A marker that does not describe this frame (the file was cut or
	 * spliced) marks nothing: a drop must never land on another packet. */
	if (tr_mark_matches(&r->mark, rec->data, rec->caplen, rec->wirelen, &mismatch)) {
		memset(&rec->mark, 0, sizeof(rec->mark));
		if (!rec->problem.msg[0]) {
			rec->problem = mismatch;
			where_str(at, sizeof(at), rec->frame, rec->offset);
			tr_error_prefix(&rec->problem, "%s", at);
		}
		return;
	}
	rec->mark = r->mark;
}

uint64_t tr_reader_cut_marker(const tr_reader *r)
{
	return r->cut_marker;
}

int tr_reader_next(tr_reader *r, tr_record *rec, tr_error *err)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	int64_t before = r->pos, after;
	char at[64];
	int ret;

	ret = pcap_next_ex(r->pcap, &h, &data);
	if (ret == PCAP_ERROR_BREAK) {
		if (r->pending) {
			r->pending = false;
			r->cut_marker = r->mark_frame;
		}
		return 0;
	}
	if (ret != 1) {
		where_str(at, sizeof(at), r->frames + 1, before);
		return tr_error_set(err, -EINVAL, "%s: %s%s: %s", r->name, at,
				    before >= 0 ? " (record start)" : "", pcap_geterr(r->pcap));
	}
	after = ftell(r->f);
	r->pos = after;
	memset(rec, 0, offsetof(tr_record, pkt));
	rec->frame = ++r->frames;
	rec->offset = data_offset(r, before, after);
	rec->ts_ns = timestamp_ns(r, h);
	rec->caplen = h->caplen;
	rec->wirelen = h->len;
	rec->data = data;
	classify(r, rec);
	apply_mark(r, rec);
	return 1;
}

void tr_reader_get_info(const tr_reader *r, tr_reader_info *out)
{
	out->format = r->pcapng ? "pcapng" : r->nano ? "pcap (nanosecond)" : "pcap";
	out->swapped = r->swapped;
	out->linktype = r->linktype;
	out->dlt = r->dlt;
	out->snaplen = (uint32_t)pcap_snapshot(r->pcap);
}

void tr_reader_close(tr_reader *r)
{
	if (!r)
		return;
	pcap_close(r->pcap); /* closes r->f */
	free(r);
}
