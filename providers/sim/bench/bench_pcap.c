/* SPDX-License-Identifier: BSD-2-Clause
 * bazel run -c opt //providers/sim/bench:bench_pcap [-- small_count large_count dir]
 *
 * What recording (FI_SIM_PCAP) costs a simulation: the same run as
 * bench_msg (two nodes in one process, `ideal` preset, fi_send/fi_recv on
 * FI_EP_RDM) three times — recording off, whole frames, headers only
 * (snap length 128) — with the wall time of each phase and the size of the
 * file. Phases: 8-byte messages (a SEND and an ACK each), then 1 MiB
 * messages (256 packets of 4 KiB each).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "bench_pair.h"

struct result {
	double small_s, large_s, close_s;
	long long bytes;
};

/* One whole run: fabric open, both phases, fabric closed (the file is
 * complete then). */
static struct result one_run(long small, long large, const char *pcap,
			     const char *snaplen)
{
	struct bench_pair p;
	struct result res = { 0 };
	struct stat st;
	double t;

	if (pcap)
		setenv("FI_SIM_PCAP", pcap, 1);
	else
		unsetenv("FI_SIM_PCAP");
	if (snaplen)
		setenv("FI_SIM_PCAP_SNAPLEN", snaplen, 1);
	else
		unsetenv("FI_SIM_PCAP_SNAPLEN");
	bench_pair_open(&p);
	res.small_s = bench_pair_run(&p, 8, small, 256);
	res.large_s = bench_pair_run(&p, BENCH_BUF, large, 16);
	t = bench_now_s();
	bench_pair_close(&p);
	res.close_s = bench_now_s() - t;
	if (pcap && !stat(pcap, &st))
		res.bytes = (long long)st.st_size;
	return res;
}

int main(int argc, char **argv)
{
	long small = argc > 1 ? atol(argv[1]) : 200000;
	long large = argc > 2 ? atol(argv[2]) : 500;
	const char *dir = argc > 3 ? argv[3] : "/tmp";
	char path[4096];
	static const struct {
		const char *name;
		int record;
		const char *snaplen;
	} modes[] = {
		{ "off", 0, NULL },
		{ "full frames", 1, NULL },
		{ "headers only (128)", 1, "128" },
	};

	setenv("FI_SIM_PRESET", "ideal", 0);
	snprintf(path, sizeof(path), "%s/bench_pcap.pcap", dir);
	one_run(small / 10 + 1, large / 10 + 1, NULL, NULL); /* warm up */
	printf("%ld 8-byte messages, %ld 1 MiB messages; file %s\n", small,
	       large, path);
	printf("%-20s %12s %12s %12s %10s %14s\n", "recording", "8 B: ns/msg",
	       "1 MiB: GB/s", "1 MiB: s", "close: s", "file bytes");
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct result r = one_run(small, large,
					  modes[m].record ? path : NULL,
					  modes[m].snaplen);

		printf("%-20s %12.0f %12.2f %12.3f %10.3f %14lld\n",
		       modes[m].name, r.small_s * 1e9 / small,
		       large * (double)BENCH_BUF / r.large_s / 1e9, r.large_s,
		       r.close_s, r.bytes);
		fflush(stdout);
	}
	remove(path);
	return 0;
}
