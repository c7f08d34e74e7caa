/* SPDX-License-Identifier: BSD-2-Clause
 * The threads of the program that call into a world. Each gets an entry the
 * first time it takes the world lock; the entry says what the thread is doing
 * as far as the fabric can tell (sim_progress.c decides from that whether
 * virtual time may move). Entries are found by thread id, so a new thread
 * that reuses an exited thread's id reuses its entry: the table grows with
 * the number of threads alive at once, not with every thread ever made. */
#include <stdio.h>
#include <stdlib.h>

#include "sim.h"

void sim_threads_init(struct sim_world *world)
{
	world->threads = NULL;
	world->last_thread = NULL;
}

void sim_threads_fini(struct sim_world *world)
{
	while (world->threads) {
		struct sim_thread *t = world->threads;

		world->threads = t->next;
		free(t);
	}
}

static struct sim_thread *lookup(struct sim_world *world)
{
	pthread_t me = pthread_self();
	struct sim_thread *t;

	for (t = world->threads; t; t = t->next)
		if (pthread_equal(t->id, me))
			return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		abort(); /* a thread the scheduler cannot see would break time */
	t->id = me;
	t->next = world->threads;
	world->threads = t;
	return t;
}

/* Called with the world lock held, so the one-entry cache of the last
 * caller needs no thread-local storage: a program's calls come mostly from
 * one thread at a time. */
struct sim_thread *sim_thread_self(struct sim_world *world)
{
	struct sim_thread *t = world->last_thread;

	if (!t || !pthread_equal(t->id, pthread_self())) {
		t = lookup(world);
		world->last_thread = t;
	}
	return t;
}

void sim_thread_enter(struct sim_world *world)
{
	struct sim_thread *t = sim_thread_self(world);

	t->calls++;
	t->state = SIM_THREAD_RUNNING;
}

/* Threads of the process, from /proc (0 when unknown). */
static long process_threads(void)
{
	char buf[1024];
	long n = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "Threads: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

bool sim_threads_unseen(const struct sim_world *world)
{
	long known = 0;

	for (const struct sim_thread *t = world->threads; t; t = t->next)
		known++;
	return process_threads() > known;
}
