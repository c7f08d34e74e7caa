/* SPDX-License-Identifier: BSD-2-Clause
 * bazel run -c opt //providers/sim/bench:bench_msg [-- small_count large_count]
 *
 * Wall-clock cost of simulated messages through the libfabric API on the
 * sim provider, two nodes in one process, `ideal` preset:
 *   - 8-byte messages: post (send + receive), delivery, both completions;
 *     256 in flight at a time, then one at a time (a ping-pong's pattern:
 *     every step of the model is waited for);
 *   - 1 MiB messages: throughput, next to memcpy of the same buffers
 *     measured in the same run.
 */
#include <string.h>

#include "bench_pair.h"

int main(int argc, char **argv)
{
	long small = argc > 1 ? atol(argv[1]) : 1000000;
	long large = argc > 2 ? atol(argv[2]) : 2000;
	struct bench_pair p;
	double t, copy_t;

	setenv("FI_SIM_PRESET", "ideal", 0);
	bench_pair_open(&p);
	bench_pair_run(&p, 8, 10000, 256); /* warm up */
	t = bench_pair_run(&p, 8, small, 256);
	printf("8-byte messages: %ld in %.3f s: %.0f ns per message "
	       "(post send+recv, delivery, 2 completions)\n",
	       small, t, t * 1e9 / small);
	t = bench_pair_run(&p, 8, small / 4, 1);
	printf("8-byte messages one at a time: %ld in %.3f s: %.0f ns per "
	       "message\n", small / 4, t, t * 1e9 / (small / 4));

	t = bench_pair_run(&p, BENCH_BUF, large, 16);
	copy_t = bench_now_s();
	for (long i = 0; i < large; i++) {
		memcpy(p.rbuf, p.sbuf, BENCH_BUF);
		__asm__ volatile("" : : "r"(p.rbuf) : "memory");
	}
	copy_t = bench_now_s() - copy_t;
	printf("1 MiB messages: %ld in %.3f s: %.2f GB/s; memcpy of the same "
	       "buffers %.2f GB/s; ratio %.2f\n", large, t,
	       large * (double)BENCH_BUF / t / 1e9,
	       large * (double)BENCH_BUF / copy_t / 1e9, copy_t / t);
	bench_pair_close(&p);
	return 0;
}
