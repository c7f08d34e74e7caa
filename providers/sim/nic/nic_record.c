/* SPDX-License-Identifier: BSD-2-Clause
 * Recording: what the simulated NICs put on the wire, as RoCEv2 frames in
 * nanosecond pcap files (the trace library, ../../../traces).
 *
 * Frames. Each packet handed to the network is built into its frame at once
 * (nic_record_transmit: its payload may point into the sender's buffers,
 * valid now) and the frame is kept with the packet record, shared by the
 * copies the network makes. Addresses: host h is IPv4 10.0.0.h+1 (as
 * nic_ipv4_of_host says) and MAC 02:00 followed by those four bytes (a
 * locally administered unicast address); UDP 4791 from source port
 * tr_udp_sport_for_qp(source QP). The fabsim headers the NIC accounts for
 * (tag, atomic request, atomic response) are written where the NIC puts them.
 *
 * Records. A file holds its records in the order packets left their senders
 * (NM_TRACE_TX_START at the sending host's port), each stamped with that
 * virtual time, except:
 *   - a packet lost in the network is recorded once, marked TR_DROPPED, with
 *     the time, reason, node, port and link of its loss (so its timestamp may
 *     be later than the frames after it: its place says when it left);
 *   - a copy the network made is recorded where it was made, TR_DUPLICATE;
 *   - a retransmission (NIC_PKT_RETRANSMIT) is marked TR_RETRANSMIT;
 *   - a packet that arrived damaged is recorded damaged (ICRC inverted) and
 *     marked TR_CORRUPTED; one held back by the network, TR_REORDERED.
 * A record waits in its file's queue until the packet's fate is known (it
 * was delivered or dropped); the queue is written in order as its head is
 * settled, and whatever is left when recording stops is written as sent.
 *
 * Per node, host h's file holds what h sent (as above), what reached h (at
 * the time it arrived, marked as it arrived) and what was lost on its way to
 * h (with the time and place of the loss, in the place it would have had
 * among the arrivals from its sender: after the packets that left before
 * it), in the order these happened.
 *
 * Nothing depends on the host running the simulation (no wall clock, no
 * pointer values, no hash order): the same run gives the same bytes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <traces/tr_trace.h>

#include "nic_internal.h"

struct nic_rec_frame {
	fs_arena *arena;     /* where it lives (the world's) */
	uint32_t refs;
	uint32_t len;        /* on the wire */
	uint32_t caplen;     /* bytes held: min(len, snap length) */
	uint32_t src_host, dst_host;
	bool     retransmit;
	char    *log;        /* the NIC's view of the packet (log line tail) */
	uint8_t  data[];
};

struct rec_entry {
	struct nic_rec_frame *frame;
	uint64_t ts;
	uint32_t flags;      /* tr_mark_flag */
	tr_where where;
	bool     settled;
};

struct rec_file {
	char             *path;
	uint32_t          host;       /* NIC_HOST_ANY: the whole fabric */
	struct rec_entry *ring;
	uint64_t          head, tail; /* ids of the records waiting */
	uint64_t          cap;        /* a power of two */
	uint64_t          frames;     /* pcap frames written, markers included */
};

/* Per node: the packets from one host to another, in the order they left,
 * while earlier ones are still in flight; a lost one goes into the
 * receiver's file once everything that left before it has arrived or been
 * lost too. */
enum { PEND_FLYING, PEND_ARRIVED, PEND_LOST };

struct rec_pend {
	uint8_t               state;
	struct nic_rec_frame *frame; /* PEND_LOST */
	uint64_t              ts;
	uint32_t              flags;
	tr_where              where;
};

struct rec_pair {
	uint64_t         key;        /* src << 32 | dst */
	struct rec_pend *ring;
	uint64_t         head, tail, cap;
};

/* A copy the network made, in flight, and its record (whole fabric). */
struct rec_copy {
	const nm_packet *np;
	uint64_t         id;
};

struct nic_recorder {
	struct nic_world  *world;
	fs_arena          *arena;     /* the world's: the state may be shared */
	bool               shared;    /* files written by several processes */
	bool               per_node;
	uint32_t           snaplen;
	struct rec_file   *all;
	struct rec_file  **hosts;     /* per node, by host id */
	bool              *host_failed;
	char              *base;      /* per node: path without ".pcap" */
	char              *log_path;  /* NULL: no log */
	struct rec_copy   *copies;
	size_t             ncopies, capcopies;
	struct rec_pair  **pairs;     /* per node: open hash by key */
	size_t             npairs, cappairs;
	uint8_t           *scratch;   /* TR_FRAME_MAX */
	nm_error           error;     /* the first failure */
};

static void fail(struct nic_recorder *rec, int code, const char *what,
		 const char *msg)
{
	if (!rec->error.code)
		nm_error_set(&rec->error, code, "recording: %s: %s", what, msg);
}

static char *rec_strdup(struct nic_recorder *rec, const char *s)
{
	size_t n = strlen(s) + 1;
	char *copy = fs_mem_alloc(rec->arena, n);

	if (copy)
		memcpy(copy, s, n);
	return copy;
}

/* ---- This process's handles ------------------------------------------------------
 * The recorder's state lives with the world, which several processes may
 * share; the files are written through handles of the process that writes,
 * opened as it first writes (files several processes append to, one at a
 * time under the world's lock: tr_writer_open_shared). */

struct local_handle {
	const struct nic_recorder *rec;
	const struct rec_file     *file; /* NULL: the log */
	tr_writer                 *w;
	FILE                      *log;
	struct local_handle       *next;
};

static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static struct local_handle *handles;

static struct local_handle *handle_find(const struct nic_recorder *rec,
					const struct rec_file *file)
{
	for (struct local_handle *h = handles; h; h = h->next)
		if (h->rec == rec && h->file == file)
			return h;
	return NULL;
}

static int handle_add(const struct nic_recorder *rec,
		      const struct rec_file *file, tr_writer *w, FILE *log)
{
	struct local_handle *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->rec = rec;
	h->file = file;
	h->w = w;
	h->log = log;
	pthread_mutex_lock(&handles_lock);
	h->next = handles;
	handles = h;
	pthread_mutex_unlock(&handles_lock);
	return 0;
}

static tr_writer *writer_of(struct nic_recorder *rec, struct rec_file *f)
{
	struct local_handle *h;
	tr_writer *w = NULL;
	tr_error terr;
	int ret;

	pthread_mutex_lock(&handles_lock);
	h = handle_find(rec, f);
	pthread_mutex_unlock(&handles_lock);
	if (h)
		return h->w;
	ret = tr_writer_open_shared(&w, f->path, rec->snaplen, &terr);
	if (ret || handle_add(rec, f, w, NULL)) {
		fail(rec, ret ? ret : -ENOMEM, "a trace", ret ? terr.msg :
			  "out of memory");
		tr_writer_close(w, NULL);
		return NULL;
	}
	return w;
}

/* The log as this process writes it: every process of a shared world
 * appends to the one file, a line at a time (lines are written with the
 * world's lock held, so they stay in order). */
static FILE *open_log(const char *path)
{
	FILE *log = fopen(path, "a");

	if (log)
		setvbuf(log, NULL, _IOLBF, 0);
	return log;
}

static FILE *log_of(struct nic_recorder *rec)
{
	struct local_handle *h;
	FILE *log;

	pthread_mutex_lock(&handles_lock);
	h = handle_find(rec, NULL);
	pthread_mutex_unlock(&handles_lock);
	if (h)
		return h->log;
	log = open_log(rec->log_path);
	if (!log || handle_add(rec, NULL, NULL, log)) {
		fail(rec, -EIO, "the log", strerror(errno));
		if (log)
			fclose(log);
		return NULL;
	}
	return log;
}

/* Closes this process's handles on `file` of rec (every one: file NULL
 * and all true). */
static void handles_close(struct nic_recorder *rec, const struct rec_file *file,
			  bool all)
{
	struct local_handle **p, *h;

	pthread_mutex_lock(&handles_lock);
	for (p = &handles; (h = *p);) {
		if (h->rec != rec || (!all && h->file != file)) {
			p = &h->next;
			continue;
		}
		*p = h->next;
		if (h->w) {
			tr_error terr;

			if (tr_writer_close(h->w, &terr))
				fail(rec, -EIO, "closing a trace", terr.msg);
		}
		if (h->log && fclose(h->log))
			fail(rec, -EIO, "the log", strerror(errno));
		free(h);
	}
	pthread_mutex_unlock(&handles_lock);
}

int nic_record_flush_process(nm_error *err)
{
	int ret = 0;

	pthread_mutex_lock(&handles_lock);
	for (struct local_handle *h = handles; h && !ret; h = h->next) {
		tr_error terr;

		if (h->w && tr_writer_flush(h->w, &terr))
			ret = nm_error_set(err, -EIO, "recording: %s",
					   terr.msg);
		else if (h->log && fflush(h->log))
			ret = nm_error_set(err, -EIO, "recording: the log: %s",
					   strerror(errno));
		else if (h->rec->error.code)
			ret = (*err = h->rec->error, h->rec->error.code);
	}
	pthread_mutex_unlock(&handles_lock);
	return ret;
}

/* ---- Frames ------------------------------------------------------------------- */

void nic_rec_frame_put(struct nic_rec_frame *frame)
{
	if (frame && --frame->refs == 0) {
		fs_mem_free(frame->arena, frame->log);
		fs_mem_free(frame->arena, frame);
	}
}

static struct nic_rec_frame *frame_get(struct nic_rec_frame *frame)
{
	frame->refs++;
	return frame;
}

static void mac_of(uint8_t mac[6], struct in_addr ip)
{
	mac[0] = 0x02; /* locally administered, unicast */
	mac[1] = 0x00;
	memcpy(mac + 2, &ip.s_addr, 4);
}

/* The packet as the wire carries it. */
static void to_wire(const struct nic_world *world, const struct nic_pkt *pkt,
		    tr_packet *p)
{
	struct in_addr src = nic_ipv4_of_host(world, pkt->src.host);
	struct in_addr dst = nic_ipv4_of_host(world, pkt->dst.host);
	const struct nic_fabsim_hdr *h = &pkt->fabsim;

	tr_packet_init(p);
	mac_of(p->eth_src, src);
	mac_of(p->eth_dst, dst);
	memcpy(p->ip_src, &src.s_addr, 4);
	memcpy(p->ip_dst, &dst.s_addr, 4);
	p->udp_sport = tr_udp_sport_for_qp(pkt->src.qpn);
	p->opcode = pkt->opcode;
	p->op = tr_opcode(pkt->opcode);
	p->dest_qp = pkt->dst.qpn;
	p->psn = nic_psn_wire(pkt->psn);
	p->ack_req = pkt->flags & NIC_PKT_ACKREQ;
	p->se = pkt->flags & NIC_PKT_SOLICITED;
	p->reth.va = pkt->reth_va;
	p->reth.rkey = pkt->reth_key;
	p->reth.dma_len = pkt->reth_len;
	p->atomic.va = pkt->reth_va;
	p->atomic.rkey = pkt->reth_key;
	p->atomic.swap_add = pkt->atomic_swap;
	p->atomic.compare = pkt->atomic_cmp;
	p->aeth.syndrome = pkt->aeth_syndrome;
	p->aeth.msn = pkt->aeth_msn & NIC_PSN_MASK;
	p->atomic_ack_orig = pkt->atomic_orig;
	p->immdt = pkt->imm;
	p->deth.qkey = pkt->qkey;
	p->deth.src_qp = pkt->src.qpn;
	p->payload = pkt->payload;
	p->payload_len = pkt->payload_len;
	if (!(pkt->flags & NIC_PKT_FABSIM_HDR))
		return;
	if (h->kind == NIC_FABSIM_TAGGED_SEND) {
		p->flags |= TR_PKT_TAGHDR;
		p->tag.tag = h->tag;
		p->tag.flags = h->tag_flags;
		p->tag.len = TR_TAG_LEN;
	} else if (h->kind == NIC_FABSIM_ATOMIC ||
		   h->kind == NIC_FABSIM_ATOMIC_RESP) {
		p->flags |= TR_PKT_ATOMICHDR;
		p->atomic_hdr.response = h->kind == NIC_FABSIM_ATOMIC_RESP;
		p->atomic_hdr.flags =
			(h->atomic_fetch ? TR_ATOMIC_F_FETCH : 0) |
			(h->atomic_compare ? TR_ATOMIC_F_COMPARE : 0);
		p->atomic_hdr.op = h->atomic_op;
		p->atomic_hdr.datatype = h->atomic_datatype;
		p->atomic_hdr.count = (uint16_t)h->count;
		p->atomic_hdr.va = h->addr;
		p->atomic_hdr.rkey = (uint32_t)h->key;
		p->atomic_hdr.len = (uint16_t)tr_atomichdr_len(&p->atomic_hdr);
	}
}

/* The log line's description of a packet, from the NIC's own fields (not
 * from the frame): what a test compares the decoded trace with. */
static char *describe(struct nic_recorder *rec, const struct nic_pkt *pkt)
{
	char buf[512];
	size_t n = 0;
	uint8_t op = (uint8_t)nic_op_rc(pkt->opcode);
	const struct nic_fabsim_hdr *h = &pkt->fabsim;

#define ADD(...)                                                              \
	do {                                                                  \
		if (n < sizeof(buf))                                          \
			n += (size_t)snprintf(buf + n, sizeof(buf) - n,       \
					      __VA_ARGS__);                   \
	} while (0)
	ADD("src=%u:%u dst=%u:%u op=%u psn=%u ackreq=%d", pkt->src.host,
	    pkt->src.qpn, pkt->dst.host, pkt->dst.qpn, pkt->opcode,
	    nic_psn_wire(pkt->psn),
	    (pkt->flags & NIC_PKT_ACKREQ) ? 1 : 0);
	if (op == NIC_OP_WRITE_FIRST || op == NIC_OP_WRITE_ONLY ||
	    op == NIC_OP_WRITE_ONLY_IMM || op == NIC_OP_READ_REQUEST)
		ADD(" reth=0x%" PRIx64 "/0x%x/%u", pkt->reth_va, pkt->reth_key,
		    pkt->reth_len);
	if (op == NIC_OP_COMPARE_SWAP || op == NIC_OP_FETCH_ADD)
		ADD(" atomic=0x%" PRIx64 "/0x%x/%" PRIu64 "/%" PRIu64,
		    pkt->reth_va, pkt->reth_key, pkt->atomic_swap,
		    pkt->atomic_cmp);
	if (op == NIC_OP_ACK || op == NIC_OP_ATOMIC_ACK ||
	    op == NIC_OP_READ_RESP_FIRST || op == NIC_OP_READ_RESP_LAST ||
	    op == NIC_OP_READ_RESP_ONLY)
		ADD(" aeth=%u/%u", pkt->aeth_syndrome,
		    pkt->aeth_msn & NIC_PSN_MASK);
	if (op == NIC_OP_ATOMIC_ACK)
		ADD(" ackorig=%" PRIu64, pkt->atomic_orig);
	if (nic_op_has_imm(op))
		ADD(" imm=0x%08x", pkt->imm);
	if (op == NIC_OP_UD_SEND_ONLY || op == NIC_OP_UD_SEND_ONLY_IMM)
		ADD(" deth=0x%x/%u", pkt->qkey, pkt->src.qpn);
	ADD(" len=%u", pkt->payload_len + nic_pkt_fabsim_bytes(pkt));
	if (pkt->flags & NIC_PKT_FABSIM_HDR) {
		if (h->kind == NIC_FABSIM_TAGGED_SEND)
			ADD(" tag=0x%" PRIx64 "/%u", h->tag, h->tag_flags);
		else if (h->kind == NIC_FABSIM_ATOMIC)
			ADD(" fsat=%u/%u/%u/%u/0x%" PRIx64 "/0x%x", h->atomic_op,
			    h->atomic_datatype, h->count,
			    h->atomic_fetch | h->atomic_compare << 1, h->addr,
			    (uint32_t)h->key);
		else if (h->kind == NIC_FABSIM_ATOMIC_RESP)
			ADD(" fsar=%u/%u/%u/%u", h->atomic_op,
			    h->atomic_datatype, h->count, h->atomic_fetch);
	}
#undef ADD
	return rec_strdup(rec, buf);
}

void nic_record_transmit(struct nic_recorder *rec, struct nic_pkt *pkt)
{
	struct nic_rec_frame *frame;
	tr_packet p;
	tr_error err;
	size_t len;
	uint32_t caplen;
	int built;

	to_wire(rec->world, pkt, &p);
	len = tr_packet_frame_len(&p);
	if (!len) {
		char what[32];

		snprintf(what, sizeof(what), "opcode 0x%02x", pkt->opcode);
		fail(rec, -EINVAL, what, "not in the opcode table");
		return;
	}
	caplen = len < rec->snaplen ? (uint32_t)len : rec->snaplen;
	frame = fs_mem_alloc(rec->arena, sizeof(*frame) + caplen);
	if (!frame) {
		fail(rec, -ENOMEM, "a frame", "out of memory");
		return;
	}
	/* Whole frames are built in place, cut ones up to the cut (their
	 * ICRC is not computed); one cut inside its ICRC is built whole. */
	if (caplen == len)
		built = tr_packet_build(&p, frame->data, len, &err);
	else if (len > caplen + 4)
		built = tr_packet_build_prefix(&p, frame->data, caplen, caplen,
					       &err);
	else
		built = tr_packet_build(&p, rec->scratch, TR_FRAME_MAX, &err);
	if (built < 0) {
		fail(rec, built, "building a frame", err.msg);
		fs_mem_free(rec->arena, frame);
		return;
	}
	if (caplen != len && len <= caplen + 4)
		memcpy(frame->data, rec->scratch, caplen);
	frame->arena = rec->arena;
	frame->refs = 1;
	frame->len = (uint32_t)len;
	frame->caplen = caplen;
	frame->src_host = pkt->src.host;
	frame->dst_host = pkt->dst.host;
	frame->retransmit = pkt->flags & NIC_PKT_RETRANSMIT;
	frame->log = rec->log_path ? describe(rec, pkt) : NULL;
	pkt->rec_frame = frame;
}

/* A copy with the ICRC damaged, as a corrupted packet arrives. */
static struct nic_rec_frame *damaged(struct nic_recorder *rec,
				     struct nic_rec_frame *frame)
{
	struct nic_rec_frame *d = fs_mem_alloc(rec->arena,
					       sizeof(*d) + frame->caplen);

	if (!d) {
		fail(rec, -ENOMEM, "a frame", "out of memory");
		return frame_get(frame);
	}
	memcpy(d, frame, sizeof(*d) + frame->caplen);
	d->refs = 1;
	d->log = frame->log ? rec_strdup(rec, frame->log) : NULL;
	if (d->caplen == d->len)
		for (uint32_t i = d->len - 4; i < d->len; i++)
			d->data[i] = (uint8_t)~d->data[i];
	return d;
}

/* ---- Files -------------------------------------------------------------------- */

static struct rec_file *file_open(struct nic_recorder *rec, const char *path,
				  uint32_t host, nm_error *err)
{
	struct rec_file *f = fs_mem_calloc(rec->arena, 1, sizeof(*f));
	tr_writer *w = NULL;
	tr_error terr;
	int ret;

	if (!f)
		return NULL;
	f->host = host;
	f->cap = 64;
	f->ring = fs_mem_calloc(rec->arena, f->cap, sizeof(*f->ring));
	f->path = rec_strdup(rec, path);
	if (!f->ring || !f->path)
		ret = tr_error_set(&terr, -ENOMEM, "out of memory");
	else if (!rec->shared)
		ret = tr_writer_open(&w, path, rec->snaplen, &terr);
	else if (truncate(path, 0) && errno != ENOENT)
		ret = tr_error_set(&terr, -errno, "cannot create trace %s: %s",
				   path, strerror(errno));
	else
		ret = tr_writer_open_shared(&w, path, rec->snaplen, &terr);
	if (!ret && handle_add(rec, f, w, NULL))
		ret = tr_error_set(&terr, -ENOMEM, "out of memory");
	if (ret) {
		nm_error_set(err, ret, "recording: %s", terr.msg);
		tr_writer_close(w, NULL);
		fs_mem_free(rec->arena, f->ring);
		fs_mem_free(rec->arena, f->path);
		fs_mem_free(rec->arena, f);
		return NULL;
	}
	return f;
}

static void write_entry(struct nic_recorder *rec, struct rec_file *f,
			struct rec_entry *e)
{
	tr_writer *w = writer_of(rec, f);
	FILE *log = rec->log_path ? log_of(rec) : NULL;
	tr_error err;
	int ret;

	ret = w ? tr_trace_write_packet(w, e->ts, e->frame->data,
					e->frame->len, e->flags,
					e->flags ? &e->where : NULL, &err) :
		  -EIO;
	if (ret) {
		if (w)
			fail(rec, ret, "writing a frame", err.msg);
	} else {
		f->frames += e->flags ? 2 : 1;
		if (log) {
			char flags[64] = "-", host[16] = "fabric";

			if (e->flags)
				tr_mark_flags_str((uint16_t)e->flags, flags,
						  sizeof(flags));
			if (f->host != NIC_HOST_ANY)
				snprintf(host, sizeof(host), "%u", f->host);
			fprintf(log, "file=%s frame=%" PRIu64 " t=%" PRIu64
				" mark=%s", host, f->frames, e->ts, flags);
			if (e->flags)
				fprintf(log, " where=%d/%d/%d/%u",
					(int)e->where.node, (int)e->where.port,
					(int)e->where.link, e->where.reason);
			fprintf(log, " %s\n",
				e->frame->log ? e->frame->log : "?");
			/* The next line may come from another process. */
			if (rec->shared)
				fflush(log);
		}
	}
	nic_rec_frame_put(e->frame);
	e->frame = NULL;
}

/* Writes the records at the head of the queue whose fate is known. */
static void pump(struct nic_recorder *rec, struct rec_file *f)
{
	while (f->head != f->tail) {
		struct rec_entry *e = &f->ring[f->head & (f->cap - 1)];

		if (!e->settled)
			return;
		write_entry(rec, f, e);
		f->head++;
	}
}

/* Queues a record; its id, or UINT64_MAX when out of memory. */
static uint64_t push(struct nic_recorder *rec, struct rec_file *f,
		     struct nic_rec_frame *frame, uint64_t ts, uint32_t flags,
		     const tr_where *where, bool settled)
{
	struct rec_entry *e;

	if (f->tail - f->head == f->cap) {
		uint64_t cap = f->cap * 2;
		struct rec_entry *ring = fs_mem_calloc(rec->arena, cap,
						       sizeof(*ring));

		if (!ring) {
			fail(rec, -ENOMEM, "the record queue", "out of memory");
			return UINT64_MAX;
		}
		for (uint64_t id = f->head; id != f->tail; id++)
			ring[id & (cap - 1)] = f->ring[id & (f->cap - 1)];
		fs_mem_free(rec->arena, f->ring);
		f->ring = ring;
		f->cap = cap;
	}
	e = &f->ring[f->tail & (f->cap - 1)];
	e->frame = frame_get(frame);
	e->ts = ts;
	e->flags = flags;
	e->where = where ? *where :
			   (tr_where){ TR_REASON_NONE, TR_WHERE_UNKNOWN,
				       TR_WHERE_UNKNOWN, TR_WHERE_UNKNOWN };
	e->settled = settled;
	return f->tail++;
}

static struct rec_entry *entry(struct rec_file *f, uint64_t id)
{
	if (id - f->head >= f->tail - f->head)
		return NULL;
	return &f->ring[id & (f->cap - 1)];
}

/* The file a host's records go to (opened on first use, per node). */
static struct rec_file *host_file(struct nic_recorder *rec, uint32_t host)
{
	nm_error err;

	if (!rec->per_node)
		return rec->all;
	if (host >= rec->world->host_count || rec->host_failed[host])
		return NULL;
	if (!rec->hosts[host] && nic_record_host(rec, host, &err)) {
		if (!rec->error.code)
			rec->error = err;
		return NULL;
	}
	return rec->hosts[host];
}

int nic_record_host(struct nic_recorder *rec, uint32_t host, nm_error *err)
{
	char *path;
	size_t len;

	if (!rec->per_node || host >= rec->world->host_count ||
	    rec->hosts[host])
		return 0;
	len = strlen(rec->base) + 32;
	path = malloc(len);
	if (!path)
		return nm_error_set(err, -ENOMEM, "recording: out of memory");
	snprintf(path, len, "%s.%u.pcap", rec->base, host);
	rec->hosts[host] = file_open(rec, path, host, err);
	free(path);
	if (!rec->hosts[host]) {
		rec->host_failed[host] = true;
		return err && err->code ? err->code : -ENOMEM;
	}
	return 0;
}

/* ---- Per node: losses in their place among the arrivals ------------------------------- */

static uint64_t pair_hash(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return key;
}

static struct rec_pair *pair_get(struct nic_recorder *rec, uint32_t src,
				 uint32_t dst)
{
	uint64_t key = (uint64_t)src << 32 | dst;
	size_t i;

	if (rec->npairs * 2 >= rec->cappairs) {
		size_t cap = rec->cappairs ? rec->cappairs * 2 : 64;
		struct rec_pair **t = fs_mem_calloc(rec->arena, cap, sizeof(*t));

		if (!t) {
			fail(rec, -ENOMEM, "flows", "out of memory");
			return NULL;
		}
		for (size_t k = 0; k < rec->cappairs; k++) {
			struct rec_pair *q = rec->pairs[k];

			if (!q)
				continue;
			for (i = pair_hash(q->key) & (cap - 1); t[i];
			     i = (i + 1) & (cap - 1))
				;
			t[i] = q;
		}
		fs_mem_free(rec->arena, rec->pairs);
		rec->pairs = t;
		rec->cappairs = cap;
	}
	for (i = pair_hash(key) & (rec->cappairs - 1); rec->pairs[i];
	     i = (i + 1) & (rec->cappairs - 1))
		if (rec->pairs[i]->key == key)
			return rec->pairs[i];
	rec->pairs[i] = fs_mem_calloc(rec->arena, 1, sizeof(**rec->pairs));
	if (!rec->pairs[i]) {
		fail(rec, -ENOMEM, "flows", "out of memory");
		return NULL;
	}
	rec->pairs[i]->key = key;
	rec->npairs++;
	return rec->pairs[i];
}

/* A packet left src for dst: its place; UINT64_MAX when out of memory. */
static uint64_t pair_depart(struct nic_recorder *rec, struct rec_pair *q)
{
	if (q->tail - q->head == q->cap) {
		uint64_t cap = q->cap ? q->cap * 2 : 16;
		struct rec_pend *ring = fs_mem_calloc(rec->arena, cap,
						      sizeof(*ring));

		if (!ring) {
			fail(rec, -ENOMEM, "flows", "out of memory");
			return UINT64_MAX;
		}
		for (uint64_t id = q->head; id != q->tail; id++)
			ring[id & (cap - 1)] = q->ring[id & (q->cap - 1)];
		fs_mem_free(rec->arena, q->ring);
		q->ring = ring;
		q->cap = cap;
	}
	q->ring[q->tail & (q->cap - 1)] = (struct rec_pend){ .state = PEND_FLYING };
	return q->tail++;
}

static struct rec_file *host_file(struct nic_recorder *rec, uint32_t host);
static uint64_t push(struct nic_recorder *rec, struct rec_file *f,
		     struct nic_rec_frame *frame, uint64_t ts, uint32_t flags,
		     const tr_where *where, bool settled);
static void pump(struct nic_recorder *rec, struct rec_file *f);

/* Writes the losses at the head of the pair into the receiver's file, up to
 * the first packet still in flight. */
static void pair_advance(struct nic_recorder *rec, struct rec_pair *q)
{
	struct rec_file *receiver = NULL;

	while (q->head != q->tail) {
		struct rec_pend *p = &q->ring[q->head & (q->cap - 1)];

		if (p->state == PEND_FLYING)
			break;
		if (p->state == PEND_LOST) {
			if (!receiver)
				receiver = host_file(rec, (uint32_t)q->key);
			if (receiver)
				push(rec, receiver, p->frame, p->ts, p->flags,
				     &p->where, true);
			nic_rec_frame_put(p->frame);
			p->frame = NULL;
		}
		q->head++;
	}
	if (receiver)
		pump(rec, receiver);
}

/* The pair's packet `id` arrived, or was lost (frame, ts, flags, where). */
static void pair_settle(struct nic_recorder *rec, struct nic_rec_frame *frame,
			uint64_t id, bool lost, uint64_t ts, uint32_t flags,
			const tr_where *where)
{
	struct rec_pair *q = pair_get(rec, frame->src_host, frame->dst_host);
	struct rec_pend *p;

	if (!q || id - q->head >= q->tail - q->head)
		return;
	p = &q->ring[id & (q->cap - 1)];
	if (lost) {
		p->state = PEND_LOST;
		p->frame = frame_get(frame);
		p->ts = ts;
		p->flags = flags;
		p->where = *where;
	} else {
		p->state = PEND_ARRIVED;
	}
	pair_advance(rec, q);
}

static int pair_cmp(const void *a, const void *b)
{
	const struct rec_pair *x = *(struct rec_pair *const *)a;
	const struct rec_pair *y = *(struct rec_pair *const *)b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* Recording stops: losses still waiting for earlier packets go in now, in
 * the order of their hosts (nothing else is coming). */
static void pairs_flush(struct nic_recorder *rec)
{
	struct rec_pair **all = calloc(rec->npairs + 1, sizeof(*all));
	size_t n = 0;

	for (size_t k = 0; all && k < rec->cappairs; k++)
		if (rec->pairs[k])
			all[n++] = rec->pairs[k];
	if (n)
		qsort(all, n, sizeof(*all), pair_cmp);
	for (size_t k = 0; k < n; k++) {
		struct rec_pair *q = all[k];

		/* In flight at the end: never arrived, never lost. */
		for (uint64_t id = q->head; id != q->tail; id++)
			if (q->ring[id & (q->cap - 1)].state == PEND_FLYING)
				q->ring[id & (q->cap - 1)].state = PEND_ARRIVED;
		pair_advance(rec, q);
	}
	for (size_t k = 0; k < rec->cappairs; k++) {
		struct rec_pair *q = rec->pairs[k];

		if (!q)
			continue;
		for (uint64_t id = q->head; id != q->tail; id++)
			nic_rec_frame_put(q->ring[id & (q->cap - 1)].frame);
		fs_mem_free(rec->arena, q->ring);
		fs_mem_free(rec->arena, q);
	}
	free(all);
	fs_mem_free(rec->arena, rec->pairs);
	rec->pairs = NULL;
	rec->cappairs = rec->npairs = 0;
}

/* ---- What the network did ---------------------------------------------------------- */

static uint64_t take_copy(struct nic_recorder *rec, const nm_packet *np)
{
	for (size_t i = 0; i < rec->ncopies; i++) {
		if (rec->copies[i].np == np) {
			uint64_t id = rec->copies[i].id;

			rec->copies[i] = rec->copies[--rec->ncopies];
			return id;
		}
	}
	return UINT64_MAX;
}

static void add_copy(struct nic_recorder *rec, const nm_packet *np,
		     uint64_t id)
{
	if (rec->ncopies == rec->capcopies) {
		size_t cap = rec->capcopies ? rec->capcopies * 2 : 16;
		struct rec_copy *c = fs_mem_realloc(rec->arena, rec->copies,
						    cap * sizeof(*c));

		if (!c) {
			fail(rec, -ENOMEM, "copies", "out of memory");
			return;
		}
		rec->copies = c;
		rec->capcopies = cap;
	}
	rec->copies[rec->ncopies++] = (struct rec_copy){ np, id };
}

/* Settles a queued record: its fate (flags, and where/when for a loss). */
static void settle(struct nic_recorder *rec, struct rec_file *f, uint64_t id,
		   uint32_t flags, const tr_where *where, uint64_t ts,
		   struct nic_rec_frame *frame)
{
	struct rec_entry *e = f ? entry(f, id) : NULL;

	if (!e)
		return;
	e->flags |= flags;
	if (where)
		e->where = *where;
	if (ts != UINT64_MAX)
		e->ts = ts;
	if (frame) {
		nic_rec_frame_put(e->frame);
		e->frame = frame;
	}
	e->settled = true;
	pump(rec, f);
}

void nic_record_track(struct nic_recorder *rec, const nm_trace_record *tr)
{
	const nm_packet *np = tr->packet;
	struct nic_pkt *pkt = np ? np->user_ptr : NULL;
	struct nic_rec_frame *frame = pkt ? pkt->rec_frame : NULL;
	bool copy = np && (np->flags & NM_PKT_DUPLICATE);
	const nm_topology *topo = nm_network_topology(rec->world->net);
	struct rec_file *sender, *receiver;
	uint64_t id;

	if (!frame)
		return;
	sender = host_file(rec, frame->src_host);
	switch (tr->kind) {
	case NM_TRACE_TX_START:
		/* The first bit leaves the sending host. */
		if (tr->node != np->src || copy || !sender)
			return;
		id = push(rec, sender, frame, tr->time,
			  frame->retransmit ? TR_RETRANSMIT : 0,
			  &(tr_where){ TR_REASON_NONE, frame->src_host,
				       tr->port, topo->ports[tr->port].link },
			  false);
		pkt->rec_sent = id + 1;
		if (rec->per_node) {
			struct rec_pair *q = pair_get(rec, frame->src_host,
						      frame->dst_host);

			pkt->rec_pair = q ? pair_depart(rec, q) + 1 : 0;
		}
		return;
	case NM_TRACE_DUPLICATE:
		if (rec->per_node)
			return;
		id = push(rec, rec->all, frame, tr->time, TR_DUPLICATE,
			  &(tr_where){ TR_REASON_NONE, tr->node, tr->port,
				       topo->ports[tr->port].link },
			  false);
		if (id != UINT64_MAX)
			add_copy(rec, np, id);
		return;
	case NM_TRACE_DROP: {
		tr_where where = { (uint8_t)(tr->reason + 1), tr->node, tr->port,
				   topo->ports[tr->port].link };

		id = copy ? take_copy(rec, np) : pkt->rec_sent - 1;
		if (!copy)
			pkt->rec_sent = 0;
		if (!rec->per_node) {
			settle(rec, rec->all, id, TR_DROPPED, &where, tr->time,
			       NULL);
			return;
		}
		if (!copy) {
			settle(rec, sender, id, TR_DROPPED, &where, tr->time,
			       NULL);
			/* The receiver hears of it in its place. */
			pair_settle(rec, frame, pkt->rec_pair - 1, true,
				    tr->time, TR_DROPPED |
				    (frame->retransmit ? TR_RETRANSMIT : 0),
				    &where);
			pkt->rec_pair = 0;
			return;
		}
		receiver = host_file(rec, frame->dst_host);
		if (receiver) {
			push(rec, receiver, frame, tr->time,
			     TR_DROPPED | TR_DUPLICATE, &where, true);
			pump(rec, receiver);
		}
		return;
	}
	case NM_TRACE_DELIVER: {
		bool corrupt = np->flags & NM_PKT_CORRUPTED;
		uint32_t marks = (corrupt ? TR_CORRUPTED : 0) |
				 ((np->flags & NM_PKT_DELAYED) ? TR_REORDERED : 0);
		tr_where where = { TR_REASON_NONE, tr->node, TR_WHERE_UNKNOWN,
				   TR_WHERE_UNKNOWN };

		id = copy ? take_copy(rec, np) : pkt->rec_sent - 1;
		if (!copy)
			pkt->rec_sent = 0;
		if (!rec->per_node) {
			settle(rec, rec->all, id, marks, marks ? &where : NULL,
			       UINT64_MAX, corrupt ? damaged(rec, frame) : NULL);
			return;
		}
		/* The sender saw it leave intact. */
		if (!copy)
			settle(rec, sender, id, 0, NULL, UINT64_MAX, NULL);
		receiver = host_file(rec, frame->dst_host);
		if (receiver) {
			struct nic_rec_frame *got = corrupt ? damaged(rec, frame)
							    : frame;

			marks |= copy ? TR_DUPLICATE :
				 frame->retransmit ? TR_RETRANSMIT : 0;
			push(rec, receiver, got, tr->time, marks, &where, true);
			if (corrupt)
				nic_rec_frame_put(got);
			pump(rec, receiver);
		}
		if (!copy) {
			pair_settle(rec, frame, pkt->rec_pair - 1, false, 0, 0,
				    NULL);
			pkt->rec_pair = 0;
		}
		return;
	}
	default:
		return;
	}
}

/* ---- Starting and stopping --------------------------------------------------------- */

int nic_world_record(struct nic_world *world,
		     const struct nic_record_params *params, nm_error *err)
{
	struct nic_recorder *rec;
	uint32_t snaplen = params->snaplen ? params->snaplen : TR_SNAPLEN_FULL;
	size_t len;

	if (world->rec)
		return nm_error_set(err, -EBUSY, "recording: already on");
	if (!params->path || !params->path[0])
		return nm_error_set(err, -EINVAL, "recording: no file given");
	if (snaplen < TR_SNAPLEN_HEADERS || snaplen > TR_SNAPLEN_FULL)
		return nm_error_set(err, -EINVAL,
				    "recording: snap length %u is outside %u "
				    "(headers only) .. %u (0: full frames)",
				    params->snaplen, TR_SNAPLEN_HEADERS,
				    TR_SNAPLEN_FULL);
	rec = fs_mem_calloc(world->arena, 1, sizeof(*rec));
	if (!rec)
		return nm_error_set(err, -ENOMEM, "recording: out of memory");
	rec->world = world;
	rec->arena = world->arena;
	/* A world in an arena may be run by several processes. */
	rec->shared = world->arena != NULL;
	rec->per_node = params->per_node;
	rec->snaplen = snaplen;
	rec->scratch = fs_mem_alloc(rec->arena, TR_FRAME_MAX);
	rec->hosts = fs_mem_calloc(rec->arena, world->host_count,
				   sizeof(*rec->hosts));
	rec->host_failed = fs_mem_calloc(rec->arena, world->host_count,
					 sizeof(*rec->host_failed));
	len = strlen(params->path);
	rec->base = rec_strdup(rec, params->path);
	if (!rec->scratch || !rec->hosts || !rec->host_failed || !rec->base) {
		nic_record_close(rec, NULL);
		return nm_error_set(err, -ENOMEM, "recording: out of memory");
	}
	/* Per node: "run.pcap" (or "run") gives run.0.pcap, run.1.pcap ... */
	if (len > 5 && !strcmp(rec->base + len - 5, ".pcap"))
		rec->base[len - 5] = '\0';
	if (!params->per_node) {
		rec->all = file_open(rec, params->path, NIC_HOST_ANY, err);
		if (!rec->all) {
			nic_record_close(rec, NULL);
			return err && err->code ? err->code : -ENOMEM;
		}
	} else {
		/* Hosts' files open as their NICs do: the folder must take
		 * them. */
		char *dir = strdup(rec->base);
		char *slash = dir ? strrchr(dir, '/') : NULL;
		const char *where = !slash ? "." : slash == dir ? "/" : dir;

		if (slash && slash != dir)
			*slash = '\0';
		if (!dir || access(where, W_OK)) {
			int e = dir ? errno : ENOMEM;

			nm_error_set(err, -e, "recording: cannot create traces "
				     "%s.<host>.pcap: %s", rec->base, strerror(e));
			free(dir);
			nic_record_close(rec, NULL);
			return -e;
		}
		free(dir);
		for (uint32_t h = 0; h < world->host_count; h++)
			if (world->hosts[h] && nic_record_host(rec, h, err)) {
				int ret = err && err->code ? err->code : -EIO;

				nic_record_close(rec, NULL);
				return ret;
			}
	}
	if (params->log_path && params->log_path[0]) {
		/* Emptied, then appended to like the other processes do. */
		FILE *log = fopen(params->log_path, "w");

		if (log) {
			fclose(log);
			log = open_log(params->log_path);
		}

		rec->log_path = rec_strdup(rec, params->log_path);
		if (!log || !rec->log_path || handle_add(rec, NULL, NULL, log)) {
			int e = log ? ENOMEM : errno;

			if (log)
				fclose(log);
			nm_error_set(err, -e, "recording: cannot create log %s: %s",
				     params->log_path, strerror(e));
			nic_record_close(rec, NULL);
			return -e;
		}
	}
	world->rec = rec;
	nic_world_trace_kinds(world);
	return 0;
}

static int close_file(struct nic_recorder *rec, struct rec_file *f)
{
	int ret;

	if (!f)
		return 0;
	/* What is still in flight left its sender: write it as sent. */
	for (; f->head != f->tail; f->head++)
		write_entry(rec, f, &f->ring[f->head & (f->cap - 1)]);
	handles_close(rec, f, false);
	ret = rec->error.code;
	fs_mem_free(rec->arena, f->ring);
	fs_mem_free(rec->arena, f->path);
	fs_mem_free(rec->arena, f);
	return ret;
}

int nic_record_close(struct nic_recorder *rec, nm_error *err)
{
	int ret;

	if (!rec)
		return 0;
	pairs_flush(rec);
	close_file(rec, rec->all);
	for (uint32_t h = 0; rec->hosts && h < rec->world->host_count; h++)
		close_file(rec, rec->hosts[h]);
	handles_close(rec, NULL, true);
	ret = rec->error.code;
	if (ret && err)
		*err = rec->error;
	fs_mem_free(rec->arena, rec->copies);
	fs_mem_free(rec->arena, rec->hosts);
	fs_mem_free(rec->arena, rec->host_failed);
	fs_mem_free(rec->arena, rec->base);
	fs_mem_free(rec->arena, rec->log_path);
	fs_mem_free(rec->arena, rec->scratch);
	fs_mem_free(rec->arena, rec);
	return ret;
}

void nic_record_event(struct nic_recorder *rec, const tr_event *ev,
		      nm_time_ns ts)
{
	uint8_t data[TR_EVENT_FRAME_MAX];
	uint32_t len = tr_event_frame_build(data, ev);
	struct nic_rec_frame *frame;
	struct rec_file *f;
	char log[192];

	f = rec->per_node ? host_file(rec, ev->node) : rec->all;
	if (!f)
		return;
	frame = fs_mem_alloc(rec->arena, sizeof(*frame) + len);
	if (!frame) {
		fail(rec, -ENOMEM, "an event frame", "out of memory");
		return;
	}
	memcpy(frame->data, data, len);
	frame->arena = rec->arena;
	frame->refs = 1;
	frame->len = len;
	frame->caplen = len < rec->snaplen ? len : rec->snaplen;
	frame->src_host = frame->dst_host = ev->node;
	frame->retransmit = false;
	snprintf(log, sizeof(log), "event=%s node=%u pid=%u %s",
		 tr_event_kind_name(ev->kind), ev->node, ev->pid, ev->text);
	frame->log = rec->log_path ? rec_strdup(rec, log) : NULL;
	/* In its place among the packets that left before it. */
	push(rec, f, frame, ts, 0, NULL, true);
	nic_rec_frame_put(frame);
	pump(rec, f);
}

bool nic_world_recording(const struct nic_world *world)
{
	return world->rec != NULL;
}

bool nic_world_records_as(const struct nic_world *world,
			  const struct nic_record_params *params)
{
	const struct nic_recorder *rec = world->rec;

	if (!rec || rec->per_node != params->per_node)
		return false;
	if (rec->all)
		return !strcmp(rec->all->path, params->path);
	/* Per node, the base is the path less ".pcap". */
	size_t len = strlen(rec->base);

	return !strncmp(rec->base, params->path, len) &&
	       (!params->path[len] || !strcmp(params->path + len, ".pcap"));
}

void nic_world_record_where(const struct nic_world *world, char *buf,
			    size_t len)
{
	const struct nic_recorder *rec = world->rec;

	if (!rec)
		snprintf(buf, len, "nowhere");
	else if (rec->all)
		snprintf(buf, len, "%s", rec->all->path);
	else
		snprintf(buf, len, "%s.<host>.pcap", rec->base);
}

void nic_world_record_leave(struct nic_world *world)
{
	if (world->rec)
		handles_close(world->rec, NULL, true);
}

int nic_world_record_stop(struct nic_world *world, nm_error *err)
{
	struct nic_recorder *rec = world->rec;

	if (!rec)
		return 0;
	world->rec = NULL;
	nic_world_trace_kinds(world);
	return nic_record_close(rec, err);
}

int nic_world_record_error(const struct nic_world *world, nm_error *err)
{
	if (!world->rec || !world->rec->error.code)
		return 0;
	if (err)
		*err = world->rec->error;
	return world->rec->error.code;
}
