/* SPDX-License-Identifier: BSD-2-Clause
 * Trace files through libpcap.
 *
 * Writer: nanosecond pcap (magic a1b23c4d), link type Ethernet, with a snap length so that big
 * runs can keep headers only; every record carries the frame's full original length. Marks
 * (drops, corruption, retransmissions...) go in as marker frames (tr_mark.h).
 *
 * Reader: pcap with either magic (µs or ns) in either byte order, and pcapng, as libpcap reads
 * them; link types Ethernet (with VLAN tags), Linux cooked (v1, v2), raw IP, ERF (type 21
 * InfiniBand and type 2 Ethernet) and InfiniBand (247). Each frame comes back as a record: a
 * parsed IB packet, a frame of another protocol (counted, described), a marker, or a malformed
 * frame with the reason; problems name the frame number and the byte offset in the file. */
#ifndef TR_TRACE_H
#define TR_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "traces/tr_error.h"
#include "traces/tr_event.h"
#include "traces/tr_mark.h"
#include "traces/tr_packet.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TR_SNAPLEN_FULL 262144u   /* libpcap's largest: whole frames */
#define TR_SNAPLEN_HEADERS 128u   /* every header of any opcode, tag header included */
#define TR_FRAME_MAX 65600u       /* the largest frame the builder can make */

/* ---- writing ---- */

typedef struct tr_writer tr_writer;

typedef struct tr_writer_stats {
	uint64_t frames;        /* packet records, markers excluded */
	uint64_t markers;
	uint64_t frame_bytes;   /* original lengths of the packet records */
	uint64_t written_bytes; /* bytes captured into the file (records and headers) */
} tr_writer_stats;

/* Creates (truncates) path. snaplen: bytes kept of each frame, TR_SNAPLEN_HEADERS up to
 * TR_SNAPLEN_FULL (0 means full). */
int tr_writer_open(tr_writer **out, const char *path, uint32_t snaplen, tr_error *err);

/* A file several writers (in several processes) append to, one at a time — each holding a lock
 * of its own while it writes: the first writer into an empty or new file writes the header, each
 * record goes at the end of the file as it is then and is flushed at once. -EIO when the file
 * holds something that is not a nanosecond Ethernet pcap. */
int tr_writer_open_shared(tr_writer **out, const char *path, uint32_t snaplen, tr_error *err);

/* Same on an open stream, which the writer then owns (tr_writer_close closes it). */
int tr_writer_fopen(tr_writer **out, FILE *f, uint32_t snaplen, tr_error *err);

/* Records one frame at ts_ns (nanoseconds since the epoch of the run). flags: 0 or tr_mark_flag
 * bits, which add a marker frame just before it; where (may be NULL) says where it happened.
 * A dropped packet is recorded once, at the point and time of its loss. */
int tr_trace_write_packet(tr_writer *w, uint64_t ts_ns, const void *frame, uint32_t len,
			  uint32_t flags, const tr_where *where, tr_error *err);

/* Builds p (tr_packet_build) into the writer's buffer and records it. */
int tr_trace_write_built(tr_writer *w, uint64_t ts_ns, const tr_packet *p, uint32_t flags,
			 const tr_where *where, tr_error *err);

void tr_writer_get_stats(const tr_writer *w, tr_writer_stats *out);

/* Flushes and closes; -EIO with a message if any write failed. Frees w even then. */
int tr_writer_close(tr_writer *w, tr_error *err);
/* Pushes what is buffered to the file: -EIO when that fails (disk full). */
int tr_writer_flush(tr_writer *w, tr_error *err);

/* ---- reading ---- */

typedef struct tr_reader tr_reader;

typedef enum tr_record_kind {
	TR_REC_PACKET = 0,    /* an IB transport packet: rec->pkt */
	TR_REC_OTHER = 1,     /* another protocol (rec->what says which); skipped by the tools */
	TR_REC_MARKER = 2,    /* a marker frame: rec->mark; it applies to the next record */
	TR_REC_MALFORMED = 3, /* not parseable: rec->problem says why */
} tr_record_kind;

typedef struct tr_record {
	uint64_t frame;      /* 1-based frame number in the file */
	int64_t offset;      /* byte offset of the frame's data in the file, -1 when unknown */
	uint64_t ts_ns;
	uint32_t caplen;
	uint32_t wirelen;    /* the record's original length */
	const uint8_t *data; /* valid until the next tr_reader_next */
	tr_record_kind kind;
	const char *what;    /* TR_REC_OTHER: "ARP", "TCP", "fabsim event"... */
	tr_event event;      /* what == "fabsim event": the event (tr_event.h) */
	/* For a marker: its content. For any other record: the mark the marker before it carried
	 * (flags 0 when there was none). */
	tr_mark mark;
	/* Non-empty when the reader found something wrong with this frame: always for
	 * TR_REC_MALFORMED, and e.g. a marker that does not match the frame it precedes. Messages
	 * start with "frame N (byte offset X)". */
	tr_error problem;
	tr_packet pkt;       /* TR_REC_PACKET */
} tr_record;

typedef struct tr_reader_info {
	const char *format;  /* "pcap", "pcap (nanosecond)", "pcapng" */
	bool swapped;        /* written on a machine of the other byte order */
	uint32_t linktype;   /* TR_LINKTYPE_* the frames are parsed as */
	int dlt;             /* libpcap's DLT value */
	uint32_t snaplen;
} tr_reader_info;

int tr_reader_open(tr_reader **out, const char *path, tr_error *err);

/* Same on an open stream (a regular file or fmemopen), which the reader then owns; name is used in
 * messages. */
int tr_reader_fopen(tr_reader **out, FILE *f, const char *name, tr_error *err);

/* The next record: 1 (rec filled), 0 at the end of the file, or a negative errno when the file
 * cannot be read further (truncated record, impossible length): err then says which frame and
 * byte offset. A file that ends with a marker (one cut in pieces, say) ends all the same: see
 * tr_reader_cut_marker. */
int tr_reader_next(tr_reader *r, tr_record *rec, tr_error *err);

/* At the end of the file: the frame number of a marker with no frame after it, or 0. */
uint64_t tr_reader_cut_marker(const tr_reader *r);

void tr_reader_get_info(const tr_reader *r, tr_reader_info *out);

void tr_reader_close(tr_reader *r);

#ifdef __cplusplus
}
#endif

#endif
