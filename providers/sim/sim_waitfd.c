/* SPDX-License-Identifier: BSD-2-Clause
 * The file descriptor behind FI_WAIT_FD, shared by CQs, EQs and counters:
 * an eventfd that is readable while the object has something to read, so
 * that a program may poll(2) it after fi_trywait (fi_control FI_GETWAIT).
 *
 * On a shared fabric, the process's waker (sim_world.c) takes in what other
 * processes' runs of the model bring its objects, which makes their
 * descriptors readable. It also brings back a thread blocked on them as
 * soon as the world has work to run again after fi_trywait let it block:
 * such a thread counts as a poller that has seen everything for its
 * process (sim_progress_settle), and the first thing that arrives for the
 * process — received bytes whose completion comes an instant later, say —
 * makes it hold the clock until it calls in (nic_sched.c), which it would
 * only do when the completion is there: a wait of NIC_ABSENT_MS, then out
 * of time, for every message. Back in the fabric, its next fi_trywait runs
 * the world until its objects have something or nothing is left. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "sim.h"

int sim_waitfd_open(struct sim_world *world, enum fi_wait_obj wait_obj,
		    int *fd)
{
	int ret;

	*fd = -1;
	if (wait_obj != FI_WAIT_FD)
		return 0;
	*fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (*fd < 0)
		return -FI_ENOMEM;
	ret = sim_world_watch_fds(world);
	if (ret) {
		close(*fd);
		*fd = -1;
	}
	return ret;
}

void sim_waitfd_close(int fd)
{
	if (fd >= 0)
		close(fd);
}

void sim_waitfd_signal(int fd)
{
	uint64_t one = 1;

	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
		/* Saturated: readable already. */
	}
}

void sim_waitfd_drain(int fd)
{
	uint64_t value;

	if (fd >= 0 && read(fd, &value, sizeof(value)) < 0) {
		/* Not readable: drained already (it does not block). */
	}
}

int sim_waitfd_control(int fd, enum fi_wait_obj wait_obj, int command,
		       void *arg)
{
	switch (command) {
	case FI_GETWAIT:
		if (fd < 0)
			return -FI_ENODATA;
		*(int *)arg = fd;
		return 0;
	case FI_GETWAITOBJ:
		*(enum fi_wait_obj *)arg = wait_obj;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

/* ---- Descriptors a thread may be blocked on ------------------------------------- */

void sim_waitfd_arm(struct sim_world *world, int fd)
{
	pthread_t me = pthread_self();

	if (fd < 0)
		return;
	for (size_t i = 0; i < world->armed_count; i++)
		if (world->armed[i].fd == fd &&
		    pthread_equal(world->armed[i].by, me))
			return;
	if (world->armed_count == world->armed_cap) {
		size_t cap = world->armed_cap ? 2 * world->armed_cap : 8;
		struct sim_armed *more =
			realloc(world->armed, cap * sizeof(*more));

		if (!more)
			return; /* its thread is taken out of time instead */
		world->armed = more;
		world->armed_cap = cap;
	}
	world->armed[world->armed_count++] = (struct sim_armed){ fd, me };
}

/* Drops the entries `drop` says to. */
static void disarm_where(struct sim_world *world,
			 bool (*drop)(const struct sim_armed *, const void *),
			 const void *arg)
{
	for (size_t i = 0; i < world->armed_count;)
		if (drop(&world->armed[i], arg))
			world->armed[i] = world->armed[--world->armed_count];
		else
			i++;
}

static bool is_fd(const struct sim_armed *a, const void *fd)
{
	return a->fd == *(const int *)fd;
}

static bool armed_by_caller(const struct sim_armed *a, const void *unused)
{
	(void)unused;
	return pthread_equal(a->by, pthread_self());
}

void sim_waitfd_forget(struct sim_world *world, int fd)
{
	disarm_where(world, is_fd, &fd);
}

void sim_waitfd_caller_back(struct sim_world *world)
{
	disarm_where(world, armed_by_caller, NULL);
}

bool sim_waitfd_armed(const struct sim_world *world)
{
	return world->armed_count > 0;
}

void sim_waitfd_fire(struct sim_world *world)
{
	for (size_t i = 0; i < world->armed_count; i++)
		sim_waitfd_signal(world->armed[i].fd);
	world->armed_count = 0;
	/* A thread blocked on one of them for long is out of time: until it
	 * calls in, time must not run on without it. */
	nic_sched_rouse(world->nic);
}
