/* What one crossing between two partitions of a parallel simulation costs (nm_parallel.h).
 *
 *   bazel run -c opt //netmodel:bench_parallel -- [crossings] [local_events]
 *
 * Two processes share an arena; each runs one partition. An event at one runs `local_events`
 * events of its own (a stand-in for a NIC's and a port's work), then sends the next to the other
 * one lookahead later, which does the same: a ping-pong in which every step crosses CPUs, the
 * pattern of a transfer between two programs. Prints the wall-clock time per crossing (best of
 * three rounds) and, for comparison, the same chain with both partitions run by one process in
 * turn (no crossing of CPUs). The difference is what the design pays to hand a step to another
 * CPU: an inbox entry and a promise.
 */
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arena/arena.h"
#include "netmodel/nm_parallel.h"
#include "netmodel/bench/bench_parallel_util.h"

#define LOOKAHEAD 1000

struct chain {
	nm_parallel *par;
	uint64_t crossings; /* to make */
	uint32_t local_events;
	uint64_t done[2][8]; /* steps run at each partition, each on a line of its own */
};

static void local(nm_engine *engine, void *ctx, uint64_t arg)
{
	(void)engine, (void)ctx, (void)arg;
}

static void step(nm_engine *engine, void *ctx, uint64_t p)
{
	struct chain *c = ctx;
	nm_time_ns now = nm_engine_now(engine);

	if (++c->done[p][0] > c->crossings / 2)
		return;
	for (uint32_t i = 0; i < c->local_events; i++)
		nm_engine_schedule(engine, now + i, (uint32_t)p, local, c, 0, NULL);
	if (nm_parallel_send(c->par, (uint32_t)p, (uint32_t)!p, now + LOOKAHEAD, (uint32_t)!p,
			     step, c, !p) != 0) {
		fprintf(stderr, "bench_parallel: a send was refused\n");
		exit(1);
	}
}

static struct chain *new_chain(fs_arena *arena, uint64_t crossings, uint32_t local_events)
{
	struct chain *c = fs_mem_calloc(arena, 1, sizeof(*c));

	if (!c || nm_parallel_create_in(arena, 2, LOOKAHEAD, &c->par) != 0) {
		fprintf(stderr, "bench_parallel: out of memory\n");
		exit(1);
	}
	c->crossings = crossings;
	c->local_events = local_events;
	nm_engine_schedule(nm_parallel_engine(c->par, 0), 0, 0, step, c, 0, NULL);
	return c;
}

static double across_processes(fs_arena *arena, uint64_t crossings, uint32_t local_events)
{
	struct chain *c = new_chain(arena, crossings, local_events);
	pid_t child;
	double t = bench_seconds();
	int status;

	child = fork();
	if (child < 0) {
		perror("bench_parallel: fork");
		exit(1);
	}
	if (child == 0) {
		bench_run_partition(c->par, 1);
		_exit(0);
	}
	bench_run_partition(c->par, 0);
	waitpid(child, &status, 0);
	t = bench_seconds() - t;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    c->done[0][0] + c->done[1][0] < crossings) {
		fprintf(stderr, "bench_parallel: the chain did not finish\n");
		exit(1);
	}
	nm_parallel_destroy(c->par);
	fs_mem_free(arena, c);
	return t / crossings;
}

static double in_one_process(fs_arena *arena, uint64_t crossings, uint32_t local_events)
{
	struct chain *c = new_chain(arena, crossings, local_events);
	double t = bench_seconds();
	int idle = 0;

	nm_parallel_wait(c->par, 0, NM_TIME_NEVER);
	nm_parallel_wait(c->par, 1, NM_TIME_NEVER);
	while (idle < 2) {
		idle = 0;
		for (uint32_t p = 0; p < 2; p++)
			idle += nm_parallel_run(c->par, p, NULL, NULL, NM_TIME_NEVER) ==
				NM_PARALLEL_IDLE;
	}
	t = bench_seconds() - t;
	nm_parallel_destroy(c->par);
	fs_mem_free(arena, c);
	return t / crossings;
}

int main(int argc, char **argv)
{
	uint64_t crossings = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	uint32_t local_events = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 3;
	char name[64], err[256];
	fs_arena *arena;
	double best_across = 1e9, best_one = 1e9;

	if (crossings == 0) {
		fprintf(stderr, "usage: bench_parallel [crossings > 0] [local_events]\n");
		return 2;
	}
	snprintf(name, sizeof(name), "/fabsim-bench-parallel-%d", (int)getpid());
	if (fs_arena_create(name, (size_t)1 << 30, &arena, err, sizeof(err)) != 0) {
		fprintf(stderr, "bench_parallel: %s\n", err);
		return 1;
	}
	fs_arena_unlink(name);
	for (int round = 0; round < 3; round++) {
		double a = across_processes(arena, crossings, local_events);
		double o = in_one_process(arena, crossings, local_events);

		if (a < best_across)
			best_across = a;
		if (o < best_one)
			best_one = o;
	}
	printf("%" PRIu64 " crossings, %u local events per step, best of 3 rounds:\n", crossings,
	       local_events);
	printf("  two processes: %.0f ns per crossing\n", best_across * 1e9);
	printf("  one process:   %.0f ns per step\n", best_one * 1e9);
	fs_arena_detach(arena);
	return 0;
}
