/* SPDX-License-Identifier: BSD-2-Clause
 * What every provider does the same way, from the man pages: CQ entry
 * formats, the checks of fi_cq_open's attributes, the default operation
 * flags of endpoints. Providers link //api:provider_util. */
#ifndef FABSIM_UTIL_H
#define FABSIM_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fi_provider;

/* fi_cq(3): bytes of one entry of `format`, 0 for an unknown format. */
size_t fabsim_cq_entry_size(enum fi_cq_format format);

/* Writes `e` as an entry of `format`: each format is a prefix of
 * struct fi_cq_tagged_entry. */
void fabsim_cq_entry_write(enum fi_cq_format format,
			   const struct fi_cq_tagged_entry *e, void *out);

/* The checks of fi_cq_open(3) every provider makes: flags outside
 * `flags_allowed` (-FI_EBADFLAGS), the format (FI_CQ_FORMAT_UNSPEC becomes
 * FI_CQ_FORMAT_CONTEXT), the wait objects fabsim's providers implement
 * (none, unspecified, fd; others -FI_ENOSYS) and the wait condition. The
 * message names the problem, through `prov`'s log. */
int fabsim_cq_check_attr(const struct fi_provider *prov,
			 struct fi_cq_attr *attr, uint64_t flags_allowed);

/* fi_control(FI_GETOPSFLAG / FI_SETOPSFLAG) on an endpoint's default
 * transmit and receive flags (fi_endpoint(3)); -FI_ENOSYS for any other
 * command, so that the caller handles the rest. */
int fabsim_ep_opsflag(int command, uint64_t *flags, uint64_t *tx_op_flags,
		      uint64_t *rx_op_flags);

/* fi_getopt(3) of a size_t option: `value` into optval, its size into
 * *optlen; -FI_ETOOSMALL when *optlen cannot hold it. optval and optlen
 * must not be NULL. */
int fabsim_getopt_size(void *optval, size_t *optlen, size_t value);

#ifdef __cplusplus
}
#endif

#endif
