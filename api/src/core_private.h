/* SPDX-License-Identifier: BSD-2-Clause
 * Internals shared by the core's own files. */
#ifndef FABSIM_CORE_PRIVATE_H
#define FABSIM_CORE_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>

#include <fabsim/core.h>

/* Runs once, on the first API call: defines the core parameters, calls every
 * registered provider's init, and applies FI_PROVIDER. */
void fabsim_core_init(void);

/* The providers in use after FI_PROVIDER filtering, in a fixed order (by
 * name), valid after fabsim_core_init(). */
size_t fabsim_provider_count(void);
struct fi_provider *fabsim_provider_at(size_t i);
struct fi_provider *fabsim_provider_find(const char *name);

/* FI_PROVIDER syntax: NULL or "" matches everything, "a,b" matches the names
 * listed, "^a,b" matches every name not listed. Case-insensitive. */
bool fabsim_name_list_match(const char *list, const char *name);

/* Logging configuration, read from the environment once. */
void fabsim_log_init(void);

#endif
