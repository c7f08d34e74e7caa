/* SPDX-License-Identifier: BSD-2-Clause */
#include <dlfcn.h>
#include <sched.h>
#include <stdint.h>

#include "shared_vclock.h"

typedef int (*attach_fn)(uint64_t (*now_ns)(void *ctx),
			 bool (*spend_ns)(void *ctx, uint64_t ns), void *ctx);
typedef void (*detach_fn)(void *ctx);
typedef void (*set_sleep_fn)(bool (*sleep_ns)(void *ctx, uint64_t ns));

/* One attachment at a time (libfabsim_vclock.so takes one source). */
static struct nic_world *attached;
static const void *attached_owner;

static uint64_t world_now(void *ctx)
{
	/* Read without the lock: the clocks may be read while a thread of
	 * the program holds it, and a torn read cannot happen on 64 bits. */
	(void)ctx;
	return nic_world_now(attached);
}

/* A thread that reads the clock in a loop waits in the fabric for time to
 * pass. Not while the lock is held, by another thread or by this one (a
 * reading from inside a call into the fabric, or from a signal handler
 * that interrupted one): that reading returns the clock as it is. */
static bool world_spend(void *ctx, uint64_t ns)
{
	struct nic_world *world = attached;

	(void)ctx;
	if (!world || !nic_world_trylock(world))
		return false;
	nic_sched_enter(world);
	nic_sched_spend(world, ns);
	nic_world_unlock(world);
	return true;
}

/* A thread that sleeps (nanosleep, usleep, sleep) lets that much virtual
 * time pass, in the fabric, as a thread of a real machine lets time pass:
 * what the program measures around the sleep is the sleep, and a program
 * that paces itself with sleeps does so in virtual time. The lock is
 * waited for a while (holds are short); one it cannot get, as when this
 * very thread holds it, leaves the sleep to real time. */
#define SLEEP_LOCK_TRIES 1000

static bool world_sleep(void *ctx, uint64_t ns)
{
	struct nic_world *world = attached;
	int tries = 0;

	(void)ctx;
	if (!world)
		return false;
	while (!nic_world_trylock(world)) {
		if (++tries == SLEEP_LOCK_TRIES)
			return false;
		sched_yield();
	}
	nic_sched_enter(world);
	nic_sched_sleep(world, ns);
	nic_world_unlock(world);
	return true;
}

bool shared_vclock_attach(struct nic_world *world, const void *owner)
{
	attach_fn attach = (attach_fn)dlsym(RTLD_DEFAULT,
					    "fabsim_vclock_attach");

	if (!attach || attached)
		return false;
	attached = world;
	attached_owner = owner;
	if (attach(world_now, world_spend, (void *)owner)) {
		attached = NULL;
		attached_owner = NULL;
		return false;
	}
	/* A libfabsim_vclock.so of the same build also takes sleeps. */
	set_sleep_fn set_sleep = (set_sleep_fn)dlsym(RTLD_DEFAULT,
						     "fabsim_vclock_set_sleep");
	if (set_sleep)
		set_sleep(world_sleep);
	return true;
}

void shared_vclock_detach(const void *owner)
{
	detach_fn detach = (detach_fn)dlsym(RTLD_DEFAULT,
					    "fabsim_vclock_detach");

	if (!detach || !attached || attached_owner != owner)
		return;
	/* It reads the clock a last time: the world must still be there. */
	detach((void *)owner);
	attached = NULL;
	attached_owner = NULL;
}
