/* SPDX-License-Identifier: BSD-2-Clause
 * The network model as the sim provider would load it (sim_settings.c). */
#ifndef FABSIM_TOOL_SIM_SETTINGS_H
#define FABSIM_TOOL_SIM_SETTINGS_H

#include <errno.h>

#include <netmodel/nm_config.h>

/* FI_SIM_CONFIG, then the variables through lookup, as the provider
 * loads them: its own JSON keys left to it, any FI_SIM_* variable that
 * is no parameter of the library refused. 0 or a negative errno, err
 * saying why. */
int sim_settings_load(nm_config *cfg, nm_env_lookup_fn lookup, void *ctx,
		      nm_error *err);

#endif
