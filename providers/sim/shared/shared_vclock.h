/* SPDX-License-Identifier: BSD-2-Clause
 * The program's clocks on virtual time, for both faces of the simulated
 * NIC: when `fabsim run --virtual-clock` preloads libfabsim_vclock.so
 * (tools/vclock/vclock.c), the first world a process opens becomes its
 * clocks' source. Without the preload, nothing happens. */
#ifndef FABSIM_SHARED_VCLOCK_H
#define FABSIM_SHARED_VCLOCK_H

#include <stdbool.h>

#include "providers/sim/nic/nic.h"

/* True when world's clock is now the program's (owner names the
 * attachment for the detach). */
bool shared_vclock_attach(struct nic_world *world, const void *owner);
void shared_vclock_detach(const void *owner);

#endif
