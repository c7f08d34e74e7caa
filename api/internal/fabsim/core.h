/* SPDX-License-Identifier: BSD-2-Clause
 * fabsim core, as seen by providers built into libfabric.so.1.
 *
 * A provider registers an init function, exactly like the fi_prov_ini() entry
 * point of a separately built provider. The core calls every init function
 * once, on the first API call, after its own parameters are defined; then
 * fi_getinfo asks each provider what it offers and matches that against the
 * application's hints itself (see info_match.h), so providers never repeat
 * the matching rules.
 */
#ifndef FABSIM_CORE_H
#define FABSIM_CORE_H

#include <rdma/fabric.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fi_provider *(*fabsim_provider_ini_fn)(void);

/* Adds a built-in provider. Safe to call from a constructor, before main(). */
void fabsim_provider_register(fabsim_provider_ini_fn ini);

/* Registers `ini` when the library is loaded. The target holding this line
 * must be linked with alwayslink = True, or the linker drops it. */
#define FABSIM_PROVIDER_INI(ini)                                           \
	__attribute__((constructor)) static void fabsim_register_##ini(void) \
	{                                                                  \
		fabsim_provider_register(ini);                             \
	}

/* The core's own identity for logging and parameters ("core"). */
extern struct fi_provider fabsim_core_prov;

/* fi_domain, fi_endpoint: whether `info` holds only values its types have
 * (what fi_getinfo refuses as hints: an enum out of range -FI_EINVAL, an
 * undefined capability bit -FI_EBADFLAGS, ...): 0, or that error with `why`
 * saying which. */
int fabsim_info_check_values(const struct fi_info *info, char *why,
			     size_t why_len);

/*
 * What a provider's getinfo returns, and how the core reads it.
 *
 * A provider lists each configuration it can offer for the given node,
 * service and flags, with its best defaults. The core then applies the
 * hints of fi_getinfo(3) to every entry and keeps the ones that match,
 * narrowed to what was asked. Some fields of an offered entry mean "what the
 * provider can do" rather than a default:
 *   caps (all levels)        every capability the provider supports
 *   mode                     modes the provider requires of the application
 *   domain_attr->mr_mode     FI_MR_* bits the provider requires
 *   tx_attr/rx_attr op_flags every op flag the provider accepts as a default
 *   msg_order, comp_order    every ordering it guarantees
 *   av_type FI_AV_UNSPEC     either AV type is fine
 *   threading, progress      the strongest level it provides
 *   sizes and limits         maxima
 */

#ifdef __cplusplus
}
#endif

#endif /* FABSIM_CORE_H */
