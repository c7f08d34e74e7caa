/* SPDX-License-Identifier: BSD-2-Clause
 * Where virtual time moves, and who may move it.
 *
 * Time moves only inside the fabric: a poll that finds nothing runs the next
 * instant; a blocking wait runs the world until what it waits for happens or
 * its timeout passes in virtual time. With several threads the rule is that
 * of SimGrid's maestro: the clock advances only while no thread is running
 * the program, that is while every thread that uses the world is blocked in
 * a wait, has just polled and found nothing, or has stayed away from the
 * fabric for SIM_ABSENT_MS of real time (it is then out of time until it
 * calls again). Threads that never called in cannot be seen; before a wait
 * lets the clock jump over a stretch with nothing scheduled, they get
 * SIM_ABSENT_MS to show up. A run stops as soon as any waiting thread's condition holds,
 * so every thread resumes at the virtual instant its event happened.
 *
 * Single-threaded programs never wait for real and are deterministic;
 * multi-threaded ones are too, as long as no thread computes for long
 * between its calls into the fabric.
 */
#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"

/* Real time a thread may stay out of the fabric and still hold the clock. */
#define SIM_ABSENT_MS 250
/* How often a thread held back by a running one looks again. */
#define SIM_SLICE_MS 10
/* Real time a wait gives absent threads when nothing is left to simulate. */
#define SIM_IDLE_WAIT_MS 1000

/* The real monotonic clock, from the kernel: under `fabsim run
 * --virtual-clock` the program's clock_gettime reads virtual time. */
static void real_now(struct timespec *ts)
{
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, ts);
}

static void wake_all(struct sim_world *world)
{
	if (world->sleepers)
		pthread_cond_broadcast(&world->activity);
}

void sim_progress_posted(struct sim_world *world)
{
	world->signals++;
	wake_all(world);
}

static long ms_between(const struct timespec *from, const struct timespec *to)
{
	return (long)(to->tv_sec - from->tv_sec) * 1000 +
	       (to->tv_nsec - from->tv_nsec) / 1000000;
}

/* False when the real-time wait ran out with no wake-up. */
static bool sleep_real(struct sim_world *world, int ms)
{
	struct timespec until;
	int ret;

	real_now(&until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	world->sleepers++;
	ret = pthread_cond_timedwait(&world->activity,
				     nic_world_mutex(world->nic), &until);
	world->sleepers--;
	return ret != ETIMEDOUT;
}

static void set_running(struct sim_thread *t)
{
	/* Leaving a wait is activity: the absence clock restarts. */
	t->calls++;
	t->state = SIM_THREAD_RUNNING;
}

static bool wait_over(const struct sim_thread *t, nm_time_ns now)
{
	return (t->ready && t->ready(t->ctx)) || now >= t->deadline;
}

/* True when no thread but `self` runs the program. Running threads silent
 * for SIM_ABSENT_MS are taken out of time here. */
static bool others_idle(struct sim_world *world, struct sim_thread *self)
{
	nm_time_ns now = nic_world_now(world->nic);
	struct timespec real = { 0 };
	bool idle = true;

	for (struct sim_thread *t = world->threads; t; t = t->next) {
		if (t == self)
			continue;
		switch (t->state) {
		case SIM_THREAD_POLLING:
		case SIM_THREAD_ABSENT:
			break;
		case SIM_THREAD_WAITING:
			/* About to wake: it runs at this instant. */
			if (wait_over(t, now))
				idle = false;
			break;
		case SIM_THREAD_RUNNING:
			if (!real.tv_sec)
				real_now(&real);
			if (t->calls != t->calls_seen) {
				t->calls_seen = t->calls;
				t->seen_at = real;
				idle = false;
			} else if (ms_between(&t->seen_at, &real) >=
				   SIM_ABSENT_MS) {
				t->state = SIM_THREAD_ABSENT;
				FI_INFO(&sim_prov, FI_LOG_CORE,
					"a thread stayed out of the fabric "
					"for %d ms: virtual time goes on "
					"without it\n", SIM_ABSENT_MS);
			} else {
				idle = false;
			}
			break;
		}
	}
	return idle;
}

struct run_watch {
	struct sim_world *world;
	uint64_t          signals;
	bool              pollers;
};

static bool someone_can_go(void *arg)
{
	const struct run_watch *w = arg;

	if (w->pollers && w->world->signals != w->signals)
		return true;
	for (struct sim_thread *t = w->world->threads; t; t = t->next)
		if (t->state == SIM_THREAD_WAITING && t->ready &&
		    t->ready(t->ctx))
			return true;
	return false;
}

/* Runs the world for every thread that waits, up to `limit` at most: until
 * one of them can go on, or the earliest of their deadlines. */
static nm_run_result advance(struct sim_world *world, nm_time_ns limit)
{
	struct run_watch watch = { world, world->signals, false };
	nm_run_result r;

	for (struct sim_thread *t = world->threads; t; t = t->next) {
		if (t->state == SIM_THREAD_WAITING && t->deadline < limit)
			limit = t->deadline;
		watch.pollers |= t->state == SIM_THREAD_POLLING;
	}
	r = nic_world_run_until(world->nic, someone_can_go, &watch, limit);
	/* Pollers may have something to read now: let them look before
	 * time moves on. */
	if (watch.pollers && world->signals != watch.signals)
		for (struct sim_thread *t = world->threads; t; t = t->next)
			if (t->state == SIM_THREAD_POLLING)
				set_running(t);
	wake_all(world);
	return r;
}

void sim_progress_poll(struct sim_world *world)
{
	struct sim_thread *self = sim_thread_self(world);
	nm_time_ns next;

	self->state = SIM_THREAD_POLLING;
	if (world->threads == self && !self->next) {
		/* The only thread: nobody to wait for or to stop for. */
		nic_world_run_instant(world->nic);
		return;
	}
	wake_all(world); /* waiters held back by this thread may go on */
	if (!others_idle(world, self) ||
	    !nic_world_next_event(world->nic, &next))
		return;
	advance(world, next);
}

/* True when the next run would only move the clock: no event is due before
 * the earliest deadline of the threads that wait. */
static bool nothing_due(struct sim_world *world)
{
	nm_time_ns next, limit = NM_TIME_NEVER;

	if (!nic_world_next_event(world->nic, &next))
		return true;
	for (struct sim_thread *t = world->threads; t; t = t->next)
		if (t->state == SIM_THREAD_WAITING && t->deadline < limit)
			limit = t->deadline;
	return next > limit;
}

enum wait_end { WAIT_READY, WAIT_TIMEOUT, WAIT_IDLE };

/* Blocks the calling thread (lock held) until ready(ctx), `deadline`, or —
 * when `settle` — nothing left to simulate. */
static enum wait_end wait_as_thread(struct sim_world *world,
				    bool (*ready)(void *ctx), void *ctx,
				    nm_time_ns deadline, bool settle)
{
	struct sim_thread *self = sim_thread_self(world);
	struct timespec idle_since = { 0 }, real;
	bool unseen_had_time = false;
	enum wait_end end;

	self->state = SIM_THREAD_WAITING;
	self->ready = ready;
	self->ctx = ctx;
	self->deadline = deadline;
	wake_all(world);
	for (;;) {
		if (ready && ready(ctx)) {
			end = WAIT_READY;
			break;
		}
		if (nic_world_now(world->nic) >= deadline) {
			end = WAIT_TIMEOUT;
			break;
		}
		if (!others_idle(world, self)) {
			sleep_real(world, SIM_SLICE_MS);
			continue;
		}
		if (!unseen_had_time && nothing_due(world) &&
		    sim_threads_unseen(world)) {
			unseen_had_time = true;
			sleep_real(world, SIM_ABSENT_MS);
			continue;
		}
		if (advance(world, NM_TIME_NEVER) != NM_RUN_IDLE) {
			idle_since.tv_sec = 0;
			continue;
		}
		/* Every thread waits and nothing is left to simulate: only a
		 * thread that is out of time can still change anything. */
		if (settle) {
			end = WAIT_IDLE;
			break;
		}
		real_now(&real);
		if (!idle_since.tv_sec)
			idle_since = real;
		else if (ms_between(&idle_since, &real) >= SIM_IDLE_WAIT_MS) {
			FI_WARN(&sim_prov, FI_LOG_CQ,
				"a wait with no timeout found nothing left to "
				"simulate and no other thread posted work for "
				"%d ms: giving up (-FI_EAGAIN)\n",
				SIM_IDLE_WAIT_MS);
			end = WAIT_TIMEOUT;
			break;
		}
		sleep_real(world, SIM_SLICE_MS);
	}
	self->ready = NULL;
	set_running(self);
	return end;
}

int sim_progress_wait(struct sim_world *world, bool (*ready)(void *ctx),
		      void *ctx, int timeout_ms)
{
	nm_time_ns deadline = NM_TIME_NEVER;

	if (timeout_ms >= 0)
		deadline = nic_world_now(world->nic) +
			   (nm_time_ns)timeout_ms * NM_NS_PER_MS;
	return wait_as_thread(world, ready, ctx, deadline, false) ==
	       WAIT_READY ? 0 : -FI_EAGAIN;
}

void sim_progress_sleep(struct sim_world *world, nm_time_ns ns)
{
	nm_time_ns now = nic_world_now(world->nic);

	wait_as_thread(world, NULL, NULL,
		       ns > NM_TIME_NEVER - 1 - now ? NM_TIME_NEVER - 1 : now + ns,
		       false);
}

bool sim_progress_settle(struct sim_world *world, bool (*ready)(void *ctx),
			 void *ctx)
{
	return wait_as_thread(world, ready, ctx, NM_TIME_NEVER, true) ==
	       WAIT_READY;
}
