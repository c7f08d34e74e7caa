/* SPDX-License-Identifier: BSD-2-Clause
 * bazel run -c opt //providers/sim/bench:line_handover [-- ROUND_TRIPS]
 *
 * How long one cache line takes to go from one process to another on this
 * machine: two processes pass a counter back and forth through a shared
 * page, each spinning until the other has written it. The figure is half a
 * round trip.
 *
 * Why it is here: a shared fabric's processes hand the model's state over
 * through the cache at every transfer, so sim's figures across processes
 * scale with this one. On a virtual machine it changes with where the
 * hypervisor puts the two virtual CPUs (hyperthreads of one core, or cores
 * far apart), for minutes at a time; pingpong_compare prints it next to
 * its table so that each run says which machine it measured.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/* Waits until *turn is `want`, then writes `next`. */
static void pass(long *turn, long want, long next)
{
	while (__atomic_load_n(turn, __ATOMIC_ACQUIRE) != want)
		cpu_relax();
	__atomic_store_n(turn, next, __ATOMIC_RELEASE);
}

int main(int argc, char **argv)
{
	long trips = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
	struct timespec start, end;
	long *turn;
	pid_t child;
	int status;
	double ns;

	if (trips <= 0) {
		fprintf(stderr, "usage: %s [ROUND_TRIPS > 0]\n", argv[0]);
		return 2;
	}
	turn = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (turn == MAP_FAILED) {
		fprintf(stderr, "mmap: %s\n", strerror(errno));
		return 1;
	}
	*turn = 0;
	child = fork();
	if (child < 0) {
		fprintf(stderr, "fork: %s\n", strerror(errno));
		return 1;
	}
	if (child == 0) {
		for (long i = 0; i < trips; i++)
			pass(turn, 2 * i + 1, 2 * i + 2);
		_exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (long i = 0; i < trips; i++) {
		__atomic_store_n(turn, 2 * i + 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(turn, __ATOMIC_ACQUIRE) != 2 * i + 2)
			cpu_relax();
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "the second process failed\n");
		return 1;
	}
	ns = ((double)(end.tv_sec - start.tv_sec) * 1e9 +
	      (double)(end.tv_nsec - start.tv_nsec)) / (2.0 * (double)trips);
	printf("cache-line hand-over between two processes: %.1f ns "
	       "(%ld round trips)\n", ns, trips);
	return 0;
}
