/* SPDX-License-Identifier: BSD-2-Clause
 * bench_record: what recording a trace costs, per packet and per byte.
 *   bazel run -c opt //traces:bench_record -- [--packets N] [--dir DIR]
 * For payloads of 0 (an ACK), 256, 1024 and 4096 bytes it measures
 *   build   tr_packet_build (headers + ICRC over the payload), frame in memory;
 *   write   tr_trace_write_packet of a built frame into a pcap file, full frames and headers only
 *           (snap length 128), and with a drop marker in front of every frame;
 *   read    tr_summary_file over the file just written (reader, parser, analyzer).
 * Times are wall-clock over N packets (best of 3 runs), on the page cache (the file is not
 * fsync'ed): the cost a simulation pays, not the disk's.
 *   bazel run -c opt //traces:bench_record -- --flows N [--dir DIR]
 * instead reads a trace of N flows of one 256-byte SEND each (another QP each) and prints the
 * memory the summary took per flow (the growth of the peak resident size).
 *   bazel run -c opt //traces:bench_record -- --qps N [--dir DIR]
 * reads a trace of N QPs between two hosts, a READ and its response each, whose ports name no QP
 * (each response flow finds its request flow once): time per QP. */
#include <sys/resource.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "traces/tr_packet.h"
#include "traces/tr_summary.h"
#include "traces/tr_trace.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static tr_packet packet(uint32_t payload_len, const uint8_t *payload)
{
	tr_packet p;

	tr_packet_init(&p);
	p.opcode = payload_len ? 0x04 : 0x11; /* SEND_ONLY, or an ACK */
	p.dest_qp = 0x22;
	p.udp_sport = tr_udp_sport_for_qp(0x11);
	p.aeth.syndrome = TR_AETH_SYNDROME_ACK;
	p.ip_src[0] = 10;
	p.ip_src[3] = 1;
	p.ip_dst[0] = 10;
	p.ip_dst[3] = 2;
	p.payload = payload;
	p.payload_len = payload_len;
	return p;
}

static double bench_build(uint32_t len, const uint8_t *payload, uint8_t *buf, long n)
{
	double best = 1e9;

	for (int run = 0; run < 3; run++) {
		tr_packet p = packet(len, payload);
		double t0 = now_s();
		for (long i = 0; i < n; i++) {
			p.psn = (uint32_t)i & TR_PSN_MASK;
			if (tr_packet_build(&p, buf, TR_FRAME_MAX, NULL) < 0)
				return -1;
		}
		double t = (now_s() - t0) / (double)n;
		best = t < best ? t : best;
	}
	return best;
}

/* Seconds per packet, and the file size through *size. */
static double bench_write(const char *path, const uint8_t *frame, uint32_t len, uint32_t snap,
			  uint32_t flags, long n, long *size)
{
	double best = 1e9;
	tr_where where = { TR_REASON_LOSS, 1, 2, 3 };

	for (int run = 0; run < 3; run++) {
		tr_writer *w;
		tr_error err;

		if (tr_writer_open(&w, path, snap, &err)) {
			fprintf(stderr, "bench_record: %s\n", err.msg);
			exit(1);
		}
		double t0 = now_s();
		for (long i = 0; i < n; i++)
			tr_trace_write_packet(w, (uint64_t)i * 100, frame, len, flags, &where, NULL);
		if (tr_writer_close(w, &err)) {
			fprintf(stderr, "bench_record: %s\n", err.msg);
			exit(1);
		}
		double t = (now_s() - t0) / (double)n;
		best = t < best ? t : best;
	}
	FILE *f = fopen(path, "rb");
	if (f) {
		fseek(f, 0, SEEK_END);
		*size = ftell(f);
		fclose(f);
	}
	return best;
}

static double bench_read(const char *path, long n)
{
	tr_summary *s;
	tr_error err;
	double t0 = now_s();

	if (tr_summary_file(path, &s, &err)) {
		fprintf(stderr, "bench_record: %s\n", err.msg);
		exit(1);
	}
	double t = (now_s() - t0) / (double)n;
	tr_summary_free(s);
	return t;
}

static long peak_rss_kb(void)
{
	struct rusage u;

	return getrusage(RUSAGE_SELF, &u) ? 0 : u.ru_maxrss;
}

/* A trace of `flows` one-packet flows, read back: memory per flow. */
static int bench_flows(const char *path, long flows, const uint8_t *payload, uint8_t *buf)
{
	tr_where where = { TR_REASON_LOSS, 1, 2, 3 };
	tr_packet p = packet(256, payload);
	tr_writer *w;
	tr_error err;

	if (tr_writer_open(&w, path, 0, &err)) {
		fprintf(stderr, "bench_record: %s\n", err.msg);
		return 1;
	}
	for (long i = 0; i < flows; i++) {
		int len;

		p.dest_qp = (uint32_t)(0x100 + i) & 0xffffff;
		p.udp_sport = tr_udp_sport_for_qp((uint32_t)(0x200 + i) & 0x3fff);
		p.ip_src[1] = (uint8_t)(i >> 14);
		len = tr_packet_build(&p, buf, TR_FRAME_MAX, NULL);
		if (len < 0)
			return 1;
		tr_trace_write_packet(w, (uint64_t)i * 100, buf, (uint32_t)len, 0, &where, NULL);
	}
	if (tr_writer_close(w, &err)) {
		fprintf(stderr, "bench_record: %s\n", err.msg);
		return 1;
	}
	long before = peak_rss_kb();
	double t = bench_read(path, flows);
	long after = peak_rss_kb();
	printf("bench_record: %ld flows of one SEND: read + summary %.1f ns/packet, "
	       "peak resident size +%ld KiB, %.0f bytes per flow\n",
	       flows, t * 1e9, after - before, (double)(after - before) * 1024 / (double)flows);
	/* `trace summary --json` of it: what the JSON adds on top. */
	tr_summary *s;
	FILE *devnull = fopen("/dev/null", "w");

	if (!devnull || tr_summary_file(path, &s, &err))
		return 1;
	before = peak_rss_kb();
	t = now_s();
	if (tr_summary_print_json(s, NULL, devnull, &err))
		return 1;
	t = (now_s() - t) / (double)flows;
	after = peak_rss_kb();
	tr_summary_free(s);
	fclose(devnull);
	unlink(path);
	printf("bench_record: its JSON summary %.1f ns/flow, peak resident size +%ld KiB, "
	       "%.0f bytes per flow\n",
	       t * 1e9, after - before, (double)(after - before) * 1024 / (double)flows);
	return 0;
}

/* A trace of `qps` QPs between two hosts, a READ request and its one-packet
 * response each, whose UDP ports name no QP (as mlx5's and rxe's do): each
 * response flow looks for its request flow once. Time per QP. */
static int bench_qps(const char *path, long qps, const uint8_t *payload, uint8_t *buf)
{
	tr_writer *w;
	tr_error err;

	if (tr_writer_open(&w, path, 0, &err)) {
		fprintf(stderr, "bench_record: %s\n", err.msg);
		return 1;
	}
	for (long q = 0; q < qps; q++) {
		tr_packet r = packet(0, payload), a = packet(64, payload);
		int len;

		r.opcode = 0x0C; /* RC RDMA READ request */
		r.dest_qp = (uint32_t)(0x100000 + q) & 0xffffff;
		r.psn = (uint32_t)(q * 37) & 0xffffff;
		r.udp_sport = (uint16_t)(0xC000 + q % 0x4000);
		r.ack_req = true;
		r.reth.va = 0x1000;
		r.reth.rkey = 7;
		r.reth.dma_len = 64;
		len = tr_packet_build(&r, buf, TR_FRAME_MAX, NULL);
		if (len < 0)
			return 1;
		tr_trace_write_packet(w, (uint64_t)q * 200, buf, (uint32_t)len, 0, NULL, NULL);
		a.opcode = 0x10; /* RC RDMA READ response only */
		memcpy(a.ip_src, r.ip_dst, 4);
		memcpy(a.ip_dst, r.ip_src, 4);
		a.dest_qp = (uint32_t)(0x1000 + q) & 0xffffff;
		a.psn = r.psn;
		a.udp_sport = (uint16_t)(0xC000 + (q * 13 + 5) % 0x4000);
		len = tr_packet_build(&a, buf, TR_FRAME_MAX, NULL);
		if (len < 0)
			return 1;
		tr_trace_write_packet(w, (uint64_t)q * 200 + 100, buf, (uint32_t)len, 0, NULL,
				      NULL);
	}
	if (tr_writer_close(w, &err)) {
		fprintf(stderr, "bench_record: %s\n", err.msg);
		return 1;
	}
	double t = bench_read(path, qps);

	unlink(path);
	printf("bench_record: %ld QPs of one READ each, ports naming no QP: read + summary "
	       "%.1f ns/QP\n", qps, t * 1e9);
	return 0;
}

int main(int argc, char **argv)
{
	long n = 200000, flows = 0, qps = 0;
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	static const uint32_t sizes[] = { 0, 256, 1024, 4096 };
	uint8_t *payload = malloc(4096), *buf = malloc(TR_FRAME_MAX);
	char path[512];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--packets") && i + 1 < argc) {
			n = atol(argv[++i]);
		} else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
			dir = argv[++i];
		} else if (!strcmp(argv[i], "--flows") && i + 1 < argc) {
			flows = atol(argv[++i]);
		} else if (!strcmp(argv[i], "--qps") && i + 1 < argc) {
			qps = atol(argv[++i]);
		} else {
			fprintf(stderr, "usage: bench_record [--packets N | --flows N | --qps N] "
					"[--dir DIR]\n");
			return 2;
		}
	}
	if (!payload || !buf || n <= 0 || flows < 0 || qps < 0)
		return 1;
	for (int i = 0; i < 4096; i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	snprintf(path, sizeof(path), "%s/bench_record_%d.pcap", dir, (int)getpid());
	if (flows)
		return bench_flows(path, flows, payload, buf);
	if (qps)
		return bench_qps(path, qps, payload, buf);

	printf("bench_record: %ld packets per case, best of 3, file %s\n\n", n, path);
	printf("%-8s %-7s %-22s %10s %10s %12s %12s\n", "payload", "frame", "case", "ns/packet",
	       "ns/byte", "Mpackets/s", "file MB");
	for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint32_t plen = sizes[k];
		tr_packet p = packet(plen, payload);
		int flen = tr_packet_build(&p, buf, TR_FRAME_MAX, NULL);
		double t;
		long size = 0;

		if (flen < 0)
			return 1;
		t = bench_build(plen, payload, buf, n);
		printf("%-8u %-7d %-22s %10.1f %10.3f %12.2f %12s\n", plen, flen, "build (codec + ICRC)",
		       t * 1e9, t * 1e9 / flen, 1e-6 / t, "-");
		tr_packet_build(&p, buf, TR_FRAME_MAX, NULL);
		struct {
			const char *name;
			uint32_t snap, flags;
		} cases[] = {
			{ "write full frames", 0, 0 },
			{ "write headers (128)", TR_SNAPLEN_HEADERS, 0 },
			{ "write full + marker", 0, TR_DROPPED },
		};
		for (unsigned c = 0; c < 3; c++) {
			t = bench_write(path, buf, (uint32_t)flen, cases[c].snap, cases[c].flags, n,
					&size);
			printf("%-8u %-7d %-22s %10.1f %10.3f %12.2f %12.1f\n", plen, flen,
			       cases[c].name, t * 1e9, t * 1e9 / flen, 1e-6 / t, (double)size / 1e6);
		}
		bench_write(path, buf, (uint32_t)flen, 0, 0, n, &size);
		t = bench_read(path, n);
		printf("%-8u %-7d %-22s %10.1f %10.3f %12.2f %12.1f\n\n", plen, flen,
		       "read + summary", t * 1e9, t * 1e9 / flen, 1e-6 / t, (double)size / 1e6);
	}
	unlink(path);
	free(payload);
	free(buf);
	return 0;
}
