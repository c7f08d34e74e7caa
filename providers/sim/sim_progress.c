/* SPDX-License-Identifier: BSD-2-Clause
 * Where virtual time moves, for the libfabric calls: polls, blocking waits
 * with their timeouts, costs paid by the caller. Who may move it when the
 * program has several threads is the NIC world's business (nic_sched.c). */
#include "sim.h"

void sim_progress_poll(struct sim_world *world)
{
	nic_sched_poll(world->nic);
}

void sim_progress_ready(struct sim_world *world, int fd)
{
	sim_waitfd_signal(fd);
	/* A thread blocked in poll() on it wakes: until it calls in, time
	 * must not run on without it. */
	if (fd >= 0)
		nic_sched_rouse(world->nic);
	sim_progress_posted(world);
}

void sim_progress_posted(struct sim_world *world)
{
	nic_sched_posted(world->nic);
}

int sim_progress_wait(struct sim_world *world, bool (*ready)(void *ctx),
		      void *ctx, int timeout_ms)
{
	nm_time_ns deadline = NM_TIME_NEVER;
	enum nic_wait_end end;

	if (timeout_ms >= 0)
		deadline = nic_world_now(world->nic) +
			   (nm_time_ns)timeout_ms * NM_NS_PER_MS;
	end = nic_sched_wait(world->nic, ready, ctx, deadline, false);
	if (end == NIC_WAIT_STUCK)
		FI_WARN(&sim_prov, FI_LOG_CQ,
			"a wait with no timeout found nothing left to simulate "
			"and no other thread posted work for a second: giving "
			"up (-FI_EAGAIN)\n");
	return end == NIC_WAIT_READY ? 0 : -FI_EAGAIN;
}

void sim_progress_sleep(struct sim_world *world, nm_time_ns ns)
{
	nic_sched_sleep(world->nic, ns);
}

bool sim_progress_settle(struct sim_world *world, bool (*ready)(void *ctx),
			 void *ctx)
{
	return nic_sched_wait(world->nic, ready, ctx, NM_TIME_NEVER, true) ==
	       NIC_WAIT_READY;
}
