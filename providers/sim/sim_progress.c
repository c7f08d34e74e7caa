/* SPDX-License-Identifier: BSD-2-Clause
 * Where virtual time moves. An application that finds nothing to read lets
 * the simulation run the events of the next instant (sim_progress_poll);
 * one that blocks lets it run until what it waits for happens or its
 * timeout passes in simulated time (sim_progress_wait). When nothing is
 * left to simulate, only another thread of the program can change
 * anything: a wait then blocks for real, briefly, for that thread. */
#include <errno.h>
#include <time.h>

#include "sim.h"

/* How long (wall time) a wait with nothing left to simulate gives other
 * threads to post something before it reports -FI_EAGAIN. */
#define SIM_IDLE_WAIT_MS 1000

void sim_progress_poll(struct sim_world *world)
{
	nic_world_run_instant(world->nic);
}

void sim_progress_posted(struct sim_world *world)
{
	pthread_cond_broadcast(&world->activity);
}

static bool idle_wait(struct sim_world *world)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += SIM_IDLE_WAIT_MS / 1000;
	until.tv_nsec += (long)(SIM_IDLE_WAIT_MS % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	return pthread_cond_timedwait(&world->activity,
				      nic_world_mutex(world->nic),
				      &until) != ETIMEDOUT;
}

int sim_progress_wait(struct sim_world *world, bool (*ready)(void *ctx),
		      void *ctx, int timeout_ms)
{
	nm_time_ns now = nic_world_now(world->nic);
	nm_time_ns deadline = timeout_ms < 0 ? NM_TIME_NEVER :
			      now + (nm_time_ns)timeout_ms * NM_NS_PER_MS;

	for (;;) {
		nm_run_result r = nic_world_run_until(world->nic, ready, ctx,
						      deadline);

		if (r == NM_RUN_SATISFIED)
			return 0;
		if (r == NM_RUN_DEADLINE)
			return -FI_EAGAIN;
		/* Idle with no deadline: only another thread can help. */
		if (!idle_wait(world)) {
			FI_WARN(&sim_prov, FI_LOG_CQ,
				"a wait with no timeout found nothing left to "
				"simulate and no other thread posted work for "
				"%d ms: giving up (-FI_EAGAIN)\n",
				SIM_IDLE_WAIT_MS);
			return -FI_EAGAIN;
		}
	}
}
