/* SPDX-License-Identifier: BSD-2-Clause
 * The program's clocks on virtual time: when `fabsim run --virtual-clock`
 * preloads libfabsim_vclock.so, the first simulated fabric the process
 * opens becomes the clocks' source (shared/shared_vclock.h). Without the
 * preload, nothing happens. */
#include "shared/shared_vclock.h"
#include "sim.h"

void sim_vclock_attach(struct sim_world *world)
{
	if (shared_vclock_attach(world->nic, world))
		FI_INFO(&sim_prov, FI_LOG_FABRIC, "the program's clocks now "
			"read virtual time (fabric %s)\n", world->name);
}

void sim_vclock_detach(struct sim_world *world)
{
	shared_vclock_detach(world);
}
