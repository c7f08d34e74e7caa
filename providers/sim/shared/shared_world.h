/* SPDX-License-Identifier: BSD-2-Clause
 * A NIC world shared by several processes (providers/sim/MULTIPROCESS.md),
 * for both faces of the simulated NIC (the sim provider, the verbs face).
 *
 * A process attaches to the fabric's coordinator (tools/fabsimd, started on
 * demand) as the node its environment names, then maps the fabric's arena,
 * creating it — and the world inside it — if it is the first. Errors are
 * negative errno values with a message naming the problem in err.
 */
#ifndef FABSIM_SHARED_WORLD_H
#define FABSIM_SHARED_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "providers/sim/nic/nic.h"

struct shared_world;

/* FI_SIM_FABRIC, when set and not empty: the shared fabric to join. */
const char *shared_world_fabric(void);
/* Checks the settings only a shared fabric reads (FI_SIM_SHARED_MEMORY_MB):
 * 0, or -EINVAL with err saying why. */
int shared_world_check_settings(char *err, size_t errlen);

/* Attaches to `fabric`. cfg and transport build the world if this process
 * is the first; record (NULL: none) starts recording then. A process that
 * finds the world already built gets its creator's settings (a note says
 * so in *note when they differ from cfg, or when it asked for recording
 * that is not on). */
int shared_world_attach(const char *fabric, nm_config *cfg,
			const struct nic_transport_params *transport,
			const struct nic_record_params *record,
			struct shared_world **out, struct nic_world **world,
			char *err, size_t errlen, char *note, size_t notelen);

/* This process's node: the host its NIC sits on. */
uint32_t shared_world_node(const struct shared_world *sw);
/* The node's environment variable or launcher variable it came from. */
const char *shared_world_node_source(const struct shared_world *sw);
int shared_world_coordinator(const struct shared_world *sw);

/* Leaves: the others go on with the world; the last one out completes the
 * trace files (an error there is reported in err, the leave happens). */
int shared_world_detach(struct shared_world *sw, struct nic_world *world,
			char *err, size_t errlen);
/* Leaves as the process exits, while other threads of it may still wait
 * inside the world (a verbs program's event threads): the world stays
 * mapped, and any of them that wakes waits for the process's end instead
 * of running it (nic_world_depart). */
int shared_world_depart(struct shared_world *sw, struct nic_world *world,
			char *err, size_t errlen);

#endif
