/* SPDX-License-Identifier: BSD-2-Clause
 * Cost of an allocation and a free: glibc malloc, a private arena, a shared arena.
 *
 *   bazel run -c opt //arena:bench_arena -- [--iters N] [--runs N]
 *
 * Prints ns per alloc+free pair (best of --runs) for fixed small sizes, for a mixed
 * workload (4096 live blocks, each step frees one at random and allocates a new one of a
 * random size: 70% up to 256 B, 25% up to 4 KiB, 5% up to 64 KiB) and for two threads
 * doing 64-byte pairs at once on the same allocator.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arena/arena.h"

typedef struct backend {
	const char *name;
	fs_arena *arena; /* NULL: glibc */
} backend;

#define MIXED_SLOTS 4096u

static long iters = 2000000;
static int runs = 3;
static void *volatile sink;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Calls go through these so that the compiler cannot pair and remove malloc and free. */
static void *(*volatile do_alloc)(fs_arena *, size_t) = fs_mem_alloc;
static void (*volatile do_free)(fs_arena *, void *) = fs_mem_free;

static double pairs(fs_arena *a, size_t size, long n)
{
	double t0 = now_ns();

	for (long i = 0; i < n; i++) {
		char *p = do_alloc(a, size);

		p[0] = (char)i;
		sink = p;
		do_free(a, p);
	}
	return (now_ns() - t0) / (double)n;
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static size_t mixed_size(uint64_t *s)
{
	uint64_t r = rng_next(s) % 100;

	if (r < 70)
		return 1 + rng_next(s) % 256;
	if (r < 95)
		return 257 + rng_next(s) % 3840;
	return 4097 + rng_next(s) % 61440;
}

static uint32_t *mix_slot;
static uint32_t *mix_size;

static double mixed(fs_arena *a, long n)
{
	void **live = calloc(MIXED_SLOTS, sizeof(*live));
	double t0, t;

	for (unsigned i = 0; i < MIXED_SLOTS; i++)
		live[i] = do_alloc(a, mix_size[i]);
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		uint32_t k = mix_slot[i];
		char *p;

		do_free(a, live[k]);
		p = do_alloc(a, mix_size[i]);
		p[0] = (char)i;
		live[k] = p;
	}
	t = (now_ns() - t0) / (double)n;
	for (unsigned i = 0; i < MIXED_SLOTS; i++)
		do_free(a, live[i]);
	free(live);
	return t;
}

struct thread_arg {
	fs_arena *arena;
	long n;
	double ns;
};

static void *thread_pairs(void *p)
{
	struct thread_arg *arg = p;

	arg->ns = pairs(arg->arena, 64, arg->n);
	return NULL;
}

/* Wall-clock ns per pair, counting the pairs of both threads. */
static double two_threads(fs_arena *a, long n)
{
	struct thread_arg args[2] = {{a, n, 0}, {a, n, 0}};
	pthread_t t[2];
	double t0 = now_ns();

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, thread_pairs, &args[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return (now_ns() - t0) / (double)(2 * n);
}

static double best(double (*fn)(fs_arena *, long), fs_arena *a, long n)
{
	double b = 1e30;

	for (int r = 0; r < runs; r++) {
		double t = fn(a, n);

		if (t < b)
			b = t;
	}
	return b;
}

static double best_pairs(fs_arena *a, size_t size, long n)
{
	double b = 1e30;

	for (int r = 0; r < runs; r++) {
		double t = pairs(a, size, n);

		if (t < b)
			b = t;
	}
	return b;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = {16, 64, 256, 1024, 4096};
	char name[64], err[256];
	backend be[3] = {{"glibc malloc", NULL}, {"private arena", NULL}, {"shared arena", NULL}};
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
			iters = atol(argv[++i]);
		} else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
			runs = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: %s [--iters N] [--runs N]\n", argv[0]);
			return 2;
		}
	}
	if (iters < 1 || runs < 1) {
		fprintf(stderr, "--iters and --runs must be at least 1\n");
		return 2;
	}
	snprintf(name, sizeof(name), "/fabsim-bench-arena-%d", (int)getpid());
	be[1].arena = fs_arena_private(1ULL << 30);
	rc = fs_arena_create(name, 1ULL << 30, &be[2].arena, err, sizeof(err));
	if (!be[1].arena || rc) {
		fprintf(stderr, "bench_arena: %s\n", rc ? err : "private arena: no memory");
		return 1;
	}
	fs_arena_unlink(name); /* the mapping stays; nothing left behind if we are killed */

	mix_slot = malloc((size_t)iters * sizeof(*mix_slot));
	mix_size = malloc(((size_t)iters + MIXED_SLOTS) * sizeof(*mix_size));
	if (!mix_slot || !mix_size)
		return 1;
	for (long i = 0; i < iters; i++)
		mix_slot[i] = (uint32_t)(rng_next(&seed) % MIXED_SLOTS);
	for (long i = 0; i < iters + (long)MIXED_SLOTS; i++)
		mix_size[i] = (uint32_t)mixed_size(&seed);

	printf("ns per alloc+free pair, best of %d runs of %ld pairs\n\n", runs, iters);
	printf("| workload | glibc malloc | private arena | shared arena |\n");
	printf("|---|---|---|---|\n");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		printf("| %zu B, alloc then free |", sizes[s]);
		for (int b = 0; b < 3; b++)
			printf(" %.1f |", best_pairs(be[b].arena, sizes[s], iters));
		printf("\n");
	}
	printf("| mixed, 4096 live |");
	for (int b = 0; b < 3; b++)
		printf(" %.1f |", best(mixed, be[b].arena, iters));
	printf("\n| 64 B, 2 threads at once |");
	for (int b = 0; b < 3; b++)
		printf(" %.1f |", best(two_threads, be[b].arena, iters / 2));
	printf("\n");
	for (int b = 1; b < 3; b++) {
		if (fs_arena_used(be[b].arena) != 0)
			fprintf(stderr, "bench_arena: %s still has %zu bytes in use\n", be[b].name,
				fs_arena_used(be[b].arena));
		fs_arena_detach(be[b].arena);
	}
	free(mix_slot);
	free(mix_size);
	return 0;
}
