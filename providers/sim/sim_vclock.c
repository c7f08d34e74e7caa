/* SPDX-License-Identifier: BSD-2-Clause
 * The program's clocks on virtual time: when `fabsim run --virtual-clock`
 * preloads libfabsim_vclock.so, the first simulated fabric the process
 * opens becomes the clocks' source (tools/vclock/vclock.c). Without the
 * preload, nothing happens. */
#include <dlfcn.h>

#include "sim.h"

typedef int (*attach_fn)(uint64_t (*now_ns)(void *ctx), void *ctx);
typedef void (*detach_fn)(void *ctx);

static uint64_t world_now(void *ctx)
{
	/* Read without the lock: the clocks may be read while a thread of
	 * the program holds it, and a torn read cannot happen on 64 bits. */
	return nic_world_now(((struct sim_world *)ctx)->nic);
}

void sim_vclock_attach(struct sim_world *world)
{
	attach_fn attach = (attach_fn)dlsym(RTLD_DEFAULT,
					    "fabsim_vclock_attach");

	if (attach && !attach(world_now, world))
		FI_INFO(&sim_prov, FI_LOG_FABRIC, "the program's clocks now "
			"read virtual time (fabric %s)\n", world->name);
}

void sim_vclock_detach(struct sim_world *world)
{
	detach_fn detach = (detach_fn)dlsym(RTLD_DEFAULT,
					    "fabsim_vclock_detach");

	if (detach)
		detach(world);
}
