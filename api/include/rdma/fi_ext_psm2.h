/* SPDX-License-Identifier: BSD-2-Clause
 * fabsim — libfabric 1.x compatible API. Written from fi_psm2(7).
 *
 * The psm2 provider's public extension. fabsim has no psm2 provider; the
 * header exists so that programs that include it still build.
 */
#ifndef FI_EXT_PSM2_H
#define FI_EXT_PSM2_H

#include <rdma/fabric.h>

#ifdef __cplusplus
extern "C" {
#endif

/* fi_set_val / fi_get_val name on a domain: notify peers on close. */
#define FI_PSM2_DISCONNECT (1U | FI_PROV_SPECIFIC)

#ifdef __cplusplus
}
#endif

#endif /* FI_EXT_PSM2_H */
