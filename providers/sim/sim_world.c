/* SPDX-License-Identifier: BSD-2-Clause
 * The simulated fabrics of this process. Every fi_fabric call on the same
 * fabric name shares one world (one clock, one network), so that a program
 * — or a test — can open several domains and have them talk.
 *
 * A world shared with other processes gets a waker (shared/shared_waker.h)
 * once it has an object with a wait descriptor: a thread that waits inside
 * the fabric, so that what other processes' runs of the model bring this
 * one (completions, connection events, timers) is taken in while the
 * program is blocked in poll() on the descriptor, and makes it readable.
 * It stops when the fabric is closed, or when the process exits. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/shared_waker.h"
#include "shared/shared_world.h"
#include "sim.h"

static pthread_mutex_t worlds_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_world *worlds;

/* ---- The waker ------------------------------------------------------------------ */

/* A thread of this process waits in the fabric for something that is there
 * (the waker's drain brought it): the waker holds the clock for it. */
static bool waiter_ready(void *arg)
{
	const struct sim_world *world = arg;

	for (const struct sim_waiter *w = world->waiters; w; w = w->next)
		if (w->ready && w->ready(w->ctx))
			return true;
	return false;
}

/* A thread may be blocked on descriptors since fi_trywait, and the world
 * has work to run again: it must come back (sim_waitfd.c says why). */
static bool blocked_with_work(void *arg)
{
	struct sim_world *world = arg;
	nm_time_ns when;

	return sim_waitfd_armed(world) && nic_world_next_event(world->nic, &when);
}

static void bring_back(void *arg)
{
	struct sim_world *world = arg;

	if (blocked_with_work(world))
		sim_waitfd_fire(world);
}

static const struct shared_waker_ops waker_ops = {
	.ready = blocked_with_work,
	.woke = bring_back,
	.held = waiter_ready,
};

/* One process: what the model does, it does in this process, and an
 * object that gets something makes its descriptor readable at once. But a
 * thread blocked on descriptors since fi_trywait does not move the clock,
 * and the others may all be away (one posted and went to wait on a
 * semaphore): while descriptors are armed, the waker waits in the fabric,
 * which runs the model until one of them is readable (sim_progress_ready
 * disarms them). */
static bool fds_armed(void *arg)
{
	return sim_waitfd_armed(arg);
}

static bool fds_answered(void *arg)
{
	return !sim_waitfd_armed(arg);
}

static const struct shared_waker_ops private_waker_ops = {
	.ready = fds_answered,
	.needed = fds_armed,
};

/* worlds_lock held. */
static void waker_stop(struct sim_world *world)
{
	struct shared_waker *waker = world->waker;

	if (!waker)
		return;
	sim_lock(world);
	world->waker = NULL;
	sim_unlock(world);
	shared_waker_stop(waker);
}

/* A program that ends without closing its fabric: its waker must not be
 * inside the world (holding its lock) when the process goes. */
static void stop_wakers(void)
{
	pthread_mutex_lock(&worlds_lock);
	for (struct sim_world *w = worlds; w; w = w->next)
		waker_stop(w);
	pthread_mutex_unlock(&worlds_lock);
}

static void watch_exit(void)
{
	atexit(stop_wakers);
}

/* A program that ends without closing its fabric: what was written of its
 * trace so far reaches the disk as the process exits (records the recorder
 * still holds back in its queues are lost), but it would not hear that the
 * disk was full: it is told here. */
static void report_unwritten_trace(void)
{
	nm_error err;

	if (nic_record_flush_process(&err))
		FI_WARN(&sim_prov, FI_LOG_FABRIC, "at exit: %s\n", err.msg);
}

static void watch_trace_exit(void)
{
	atexit(report_unwritten_trace);
}

static void report_trace_at_exit(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, watch_trace_exit);
}

int sim_world_watch_fds(struct sim_world *world)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct shared_waker *waker;
	int ret = 0;

	pthread_mutex_lock(&worlds_lock);
	if (!world->waker) {
		ret = shared_waker_start(world->nic,
					 world->shared ? &waker_ops :
							 &private_waker_ops,
					 world, &waker);
		if (ret) {
			FI_WARN(&sim_prov, FI_LOG_FABRIC,
				"fabric %s: cannot start the thread that wakes "
				"wait descriptors: %s\n",
				world->name, strerror(-ret));
		} else {
			sim_lock(world);
			world->waker = waker;
			sim_unlock(world);
			pthread_once(&once, watch_exit);
		}
	}
	pthread_mutex_unlock(&worlds_lock);
	return ret ? sim_errno(ret) : 0;
}

/* ---- Worlds ------------------------------------------------------------------------- */

int sim_world_get(const char *name, struct sim_world **out)
{
	struct nic_transport_params transport;
	struct sim_record_config record = { 0 };
	struct sim_world *w;
	nm_config cfg;
	nm_error err;
	int ret = 0;

	/* On a shared fabric, every fabric this process opens is that one. */
	if (shared_world_fabric())
		name = shared_world_fabric();
	pthread_mutex_lock(&worlds_lock);
	for (w = worlds; w; w = w->next)
		if (!strcmp(w->name, name))
			break;
	if (w) {
		w->refs++;
		goto out;
	}
	ret = sim_config_load_all(&cfg, &transport, &record);
	if (ret)
		goto out;
	w = calloc(1, sizeof(*w));
	if (!w) {
		ret = -FI_ENOMEM;
		goto out;
	}
	if (shared_world_fabric()) {
		struct nic_record_params rp = {
			.path = record.path,
			.per_node = record.per_node,
			.snaplen = record.snaplen,
			.log_path = record.log_path,
		};
		/* A note may name two files (this process's and the fabric's). */
		char why[1024], note[2 * PATH_MAX + 512];

		ret = shared_world_attach(name, &cfg, &transport, &rp,
					  &w->shared, &w->nic, why, sizeof(why),
					  note, sizeof(note));
		if (ret) {
			FI_WARN(&sim_prov, FI_LOG_FABRIC,
				"shared fabric %s: %s\n", name, why);
			free(w);
			ret = ret == -EADDRINUSE ? -FI_EADDRINUSE :
						   sim_errno(ret);
			goto out;
		}
		/* The process asked for something it does not get: told
		 * whatever the log level. */
		if (note[0])
			fprintf(stderr, "fabsim: shared fabric %s: %s\n", name,
				note);
		FI_INFO(&sim_prov, FI_LOG_FABRIC,
			"shared fabric %s: node %u (from %s), coordinator "
			"pid %d\n",
			name, shared_world_node(w->shared),
			shared_world_node_source(w->shared),
			shared_world_coordinator(w->shared));
		goto named;
	}
	ret = nic_world_create(&cfg, &transport, &w->nic, &err);
	if (ret) {
		FI_WARN(&sim_prov, FI_LOG_FABRIC, "cannot build the network: %s\n",
			err.msg);
		free(w);
		ret = sim_errno(ret);
		goto out;
	}
	if (record.path) {
		struct nic_record_params rp = {
			.path = record.path,
			.per_node = record.per_node,
			.snaplen = record.snaplen,
			.log_path = record.log_path,
		};

		ret = nic_world_record(w->nic, &rp, &err);
		if (ret) {
			FI_WARN(&sim_prov, FI_LOG_FABRIC, "FI_SIM_PCAP=%s: %s\n",
				record.path, err.msg);
			nic_world_destroy(w->nic);
			free(w);
			ret = sim_errno(ret);
			goto out;
		}
		FI_INFO(&sim_prov, FI_LOG_FABRIC, "fabric %s: recording to %s%s\n",
			name, record.path, record.per_node ? " (per node)" : "");
		report_trace_at_exit();
	}
named:
	snprintf(w->name, sizeof(w->name), "%s", name);
	w->refs = 1;
	w->next = worlds;
	worlds = w;
	sim_vclock_attach(w);
	FI_INFO(&sim_prov, FI_LOG_FABRIC,
		"fabric %s: preset %s, %u hosts, seed %llu\n", name, cfg.preset,
		cfg.topology.hosts, (unsigned long long)cfg.seed);
out:
	pthread_mutex_unlock(&worlds_lock);
	sim_record_config_free(&record);
	if (!ret)
		*out = w;
	return ret;
}

/* Lets the world go: the others of a shared one go on with it (the last
 * one out completes its trace files); a world of this process ends, and
 * its trace files are complete. -FI_EIO when writing them failed. */
static int world_end(struct sim_world *world)
{
	char why[256];
	nm_error err;
	int ret = 0;

	sim_cm_end(world);
	if (world->shared) {
		if (shared_world_detach(world->shared, world->nic, why,
					sizeof(why)))
			FI_WARN(&sim_prov, FI_LOG_FABRIC, "fabric %s: %s\n",
				world->name, why);
		return 0;
	}
	if (nic_world_record_stop(world->nic, &err)) {
		FI_WARN(&sim_prov, FI_LOG_FABRIC, "fabric %s: %s\n",
			world->name, err.msg);
		ret = -FI_EIO;
	}
	nic_world_destroy(world->nic);
	return ret;
}

int sim_world_put(struct sim_world *world)
{
	int ret = 0;

	pthread_mutex_lock(&worlds_lock);
	if (--world->refs == 0) {
		struct sim_world **p = &worlds;

		while (*p != world)
			p = &(*p)->next;
		*p = world->next;
		sim_vclock_detach(world);
		waker_stop(world);
		ret = world_end(world);
		free(world->armed);
		free(world);
	}
	pthread_mutex_unlock(&worlds_lock);
	return ret;
}

/* One process: a thread that armed descriptors and calls in again is not
 * blocked on them any more, and its waker must not keep moving the clock
 * for them. */
static void entered(struct sim_world *world)
{
	nic_sched_enter(world->nic);
	if (world->armed_count && !world->shared)
		sim_waitfd_caller_back(world);
}

void sim_lock(struct sim_world *world)
{
	nic_world_lock(world->nic);
	entered(world);
}

bool sim_poll_lock(struct sim_world *world)
{
	if (!nic_world_poll_lock(world->nic))
		return false;
	entered(world);
	return true;
}

void sim_unlock(struct sim_world *world)
{
	nic_world_unlock(world->nic);
}
