/* SPDX-License-Identifier: BSD-2-Clause
 * A process's waker on a shared fabric (shared_waker.h says what it is
 * for): a thread that waits inside the fabric, so that what other processes
 * leave for this one is taken in and the descriptors the program may be
 * blocked on become readable. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "shared_waker.h"

#include "providers/sim/nic/nic_kernel.h"

struct shared_waker {
	struct nic_world       *world;
	struct shared_waker_ops ops;
	void                   *arg;
	pthread_t               thread;
	pid_t                   pid;    /* the process it runs in */
	bool                    stop;   /* world lock */
	pthread_mutex_t         mutex;  /* kicks */
	pthread_cond_t          kicked;
	uint64_t                kicks;
};

/* Real time the waker gives a thread it holds the clock for before it
 * looks again (a kick ends the wait sooner). */
#define SHARED_WAKER_LOOK_MS 1

static void enter(struct nic_world *world)
{
	nic_world_lock(world);
	nic_sched_enter(world);
}

static bool held(struct shared_waker *w)
{
	return w->ops.held && w->ops.held(w->arg);
}

static bool waker_ready(void *arg)
{
	struct shared_waker *w = arg;

	return w->stop || (w->ops.ready && w->ops.ready(w->arg)) || held(w);
}

/* The kernel's monotonic clock, `ms` from now: under `fabsim run
 * --virtual-clock` the program's clock_gettime reads virtual time. */
static void real_deadline(struct timespec *ts, long ms)
{
	nic_kernel_clock(CLOCK_MONOTONIC, ts);
	ts->tv_nsec += ms * 1000000L;
	while (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* Lock held. A thread of the process waits for something that is there:
 * the waker, out of its wait, counts as running (the clock stays) until
 * that thread has gone on. */
static void hold(struct shared_waker *w)
{
	while (!w->stop && held(w)) {
		struct timespec until;
		uint64_t seen;

		pthread_mutex_lock(&w->mutex);
		seen = w->kicks;
		pthread_mutex_unlock(&w->mutex);
		nic_world_unlock(w->world);
		real_deadline(&until, SHARED_WAKER_LOOK_MS);
		pthread_mutex_lock(&w->mutex);
		while (w->kicks == seen &&
		       pthread_cond_timedwait(&w->kicked, &w->mutex, &until) !=
			       ETIMEDOUT)
			;
		pthread_mutex_unlock(&w->mutex);
		enter(w->world);
	}
}

/* Lock held (and held again on return). Out of the fabric until `needed`
 * holds or the waker stops. */
static void step_out_until_needed(struct shared_waker *w)
{
	while (!w->stop && !w->ops.needed(w->arg)) {
		uint64_t seen;

		nic_sched_step_out(w->world);
		/* Kicks come with the world lock held: none is lost between
		 * this read and the wait. */
		pthread_mutex_lock(&w->mutex);
		seen = w->kicks;
		pthread_mutex_unlock(&w->mutex);
		nic_world_unlock(w->world);
		pthread_mutex_lock(&w->mutex);
		while (w->kicks == seen)
			pthread_cond_wait(&w->kicked, &w->mutex);
		pthread_mutex_unlock(&w->mutex);
		enter(w->world);
	}
}

static void *waker_main(void *arg)
{
	struct shared_waker *w = arg;

	enter(w->world);
	while (!w->stop) {
		if (w->ops.needed && !w->ops.needed(w->arg)) {
			step_out_until_needed(w);
			continue;
		}
		nic_sched_wait(w->world, waker_ready, w, NM_TIME_NEVER, false);
		if (w->ops.woke)
			w->ops.woke(w->arg);
		hold(w);
	}
	nic_world_unlock(w->world);
	return NULL;
}

int shared_waker_start(struct nic_world *world,
		       const struct shared_waker_ops *ops, void *arg,
		       struct shared_waker **out)
{
	struct shared_waker *w = calloc(1, sizeof(*w));
	pthread_condattr_t attr;
	sigset_t all, old;
	int ret;

	if (!w)
		return -ENOMEM;
	w->world = world;
	w->ops = *ops;
	w->arg = arg;
	w->pid = getpid();
	pthread_mutex_init(&w->mutex, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->kicked, &attr);
	pthread_condattr_destroy(&attr);
	/* The program's signals go to the program's threads: one that waits
	 * in poll() for SIGALRM, say, must get its EINTR. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&w->thread, NULL, waker_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		pthread_cond_destroy(&w->kicked);
		pthread_mutex_destroy(&w->mutex);
		free(w);
		return -ret;
	}
	*out = w;
	return 0;
}

void shared_waker_kick(struct shared_waker *w)
{
	pthread_mutex_lock(&w->mutex);
	w->kicks++;
	pthread_cond_broadcast(&w->kicked);
	pthread_mutex_unlock(&w->mutex);
}

void shared_waker_stop(struct shared_waker *w)
{
	if (!w)
		return;
	if (w->pid != getpid()) {
		/* A child forked after the waker started: the thread is its
		 * parent's, which stops it. */
		free(w);
		return;
	}
	enter(w->world);
	w->stop = true;
	nic_sched_posted(w->world);
	nic_world_unlock(w->world);
	shared_waker_kick(w);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->kicked);
	pthread_mutex_destroy(&w->mutex);
	free(w);
}
