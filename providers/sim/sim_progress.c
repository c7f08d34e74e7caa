/* SPDX-License-Identifier: BSD-2-Clause
 * Where virtual time moves, for the libfabric calls: polls, blocking waits
 * with their timeouts, costs paid by the caller. Who may move it when the
 * program has several threads is the NIC world's business (nic_sched.c).
 *
 * On a shared fabric, a thread's wait is listed in its world while it lasts:
 * when another thread of the process (the waker, sim_world.c) takes in what
 * another process left and so satisfies it, only this process can tell, and
 * the waker holds the clock until the waiting thread has gone on. */
#include "shared/shared_waker.h"
#include "sim.h"

static void waiter_add(struct sim_world *world, struct sim_waiter *w,
		       bool (*ready)(void *ctx), void *ctx)
{
	if (!world->shared)
		return;
	w->ready = ready;
	w->ctx = ctx;
	w->next = world->waiters;
	world->waiters = w;
}

static void waiter_remove(struct sim_world *world, struct sim_waiter *w)
{
	struct sim_waiter **p = &world->waiters;

	if (!world->shared)
		return;
	while (*p != w)
		p = &(*p)->next;
	*p = w->next;
	if (world->waker)
		shared_waker_kick(world->waker);
}

bool sim_progress_poll(struct sim_world *world)
{
	return nic_sched_poll(world->nic);
}

void sim_progress_ready(struct sim_world *world, int fd)
{
	sim_waitfd_signal(fd);
	/* One process: a blocked thread's descriptor is readable, it is
	 * answered (its waker may step out). */
	if (!world->shared && fd >= 0)
		sim_waitfd_forget(world, fd);
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
	struct sim_waiter me;
	enum nic_wait_end end;
	bool told = false;

	if (timeout_ms >= 0)
		deadline = nic_world_now(world->nic) +
			   (nm_time_ns)timeout_ms * NM_NS_PER_MS;
	waiter_add(world, &me, ready, ctx);
	/* A wait with no timeout waits for as long as it takes (fi_cq(3),
	 * fi_cntr(3), fi_eq(3)): another thread or process may post at any
	 * time, as on a real NIC; a program that waits for what nobody will
	 * ever send hangs there too, and is told so once. */
	while ((end = nic_sched_wait(world->nic, ready, ctx, deadline,
				     false)) == NIC_WAIT_STUCK) {
		if (told)
			continue;
		FI_WARN(&sim_prov, FI_LOG_CQ,
			"a wait with no timeout found nothing left to simulate "
			"and nothing posted for a second; still waiting\n");
		told = true;
	}
	waiter_remove(world, &me);
	return end == NIC_WAIT_READY ? 0 : -FI_EAGAIN;
}

void sim_progress_sleep(struct sim_world *world, nm_time_ns ns)
{
	nic_sched_sleep(world->nic, ns);
}

bool sim_progress_settle(struct sim_world *world, bool (*ready)(void *ctx),
			 void *ctx)
{
	struct sim_waiter me;
	bool done;

	waiter_add(world, &me, ready, ctx);
	done = nic_sched_wait(world->nic, ready, ctx, NM_TIME_NEVER, true) ==
	       NIC_WAIT_READY;
	waiter_remove(world, &me);
	/* Nothing is left to simulate and nothing is there: the caller is
	 * about to block on its descriptors. It counts from now on as a
	 * poller that has seen everything for its process —
	 * idle for the clock until something arrives for it, then holding it
	 * until it calls in (nic_sched.c) — rather than as a thread that runs
	 * the program, which would hold the clock, for every thread and
	 * process, until it is taken out of time. (Nothing is scheduled:
	 * this poll runs nothing.) */
	if (!done)
		nic_sched_poll_blocking(world->nic);
	return done;
}
