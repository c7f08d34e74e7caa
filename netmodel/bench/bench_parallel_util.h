/* What the parallel simulation's benchmarks share: the wall clock, and a partition's runner. */
#ifndef NETMODEL_BENCH_PARALLEL_UTIL_H
#define NETMODEL_BENCH_PARALLEL_UTIL_H

#include <sched.h>
#include <time.h>

#include "netmodel/nm_parallel.h"

static inline double bench_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Runs partition p, its program waiting for nothing, until nothing is left anywhere. */
static inline void bench_run_partition(nm_parallel *par, uint32_t p)
{
	nm_parallel_wait(par, p, NM_TIME_NEVER);
	for (unsigned spins = 1;
	     nm_parallel_run(par, p, NULL, NULL, NM_TIME_NEVER) != NM_PARALLEL_IDLE; spins++) {
		__builtin_ia32_pause(); /* fewer reads of the lines the other is about to write */
		if (spins % 4096 == 0)
			sched_yield(); /* in case both share a CPU */
	}
}

#endif
