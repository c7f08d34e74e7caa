/* SPDX-License-Identifier: BSD-2-Clause
 * The matching rules of fi_getinfo(3): hints against what a provider offers. */
#ifndef FABSIM_INFO_MATCH_H
#define FABSIM_INFO_MATCH_H

#include <stddef.h>
#include <rdma/fabric.h>

/* Validates the arguments of fi_getinfo that do not depend on a provider.
 * Returns 0, or -FI_EBADFLAGS / -FI_EINVAL / -FI_ENOSYS and writes why. */
int fabsim_hints_check(uint32_t version, const char *node, const char *service,
		       uint64_t flags, const struct fi_info *hints,
		       char *why, size_t why_len);

/* Matches one offered entry (see fabsim/core.h for what its fields mean)
 * against the hints. On a match returns 0 and *out, a new fi_info narrowed to
 * what was asked; otherwise -FI_ENODATA and the first reason in `why`, or
 * -FI_ENOMEM. hints may be NULL. */
int fabsim_info_match(uint32_t version, const struct fi_info *offer,
		      const struct fi_info *hints, struct fi_info **out,
		      char *why, size_t why_len);

/* Capability groups of fi_getinfo(3). */
#define FABSIM_PRIMARY_CAPS                                              \
	(FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | FI_MULTICAST |        \
	 FI_NAMED_RX_CTX | FI_DIRECTED_RECV | FI_VARIABLE_MSG | FI_HMEM | \
	 FI_COLLECTIVE)
#define FABSIM_CAP_MODIFIERS                                             \
	(FI_READ | FI_WRITE | FI_RECV | FI_SEND | FI_REMOTE_READ |       \
	 FI_REMOTE_WRITE)
#define FABSIM_SECONDARY_CAPS                                            \
	(FI_MULTI_RECV | FI_SOURCE | FI_RMA_EVENT | FI_SHARED_AV |       \
	 FI_TRIGGER | FI_FENCE | FI_LOCAL_COMM | FI_REMOTE_COMM |        \
	 FI_SOURCE_ERR | FI_RMA_PMEM | FI_AV_USER_ID | FI_PEER)
#define FABSIM_ALL_CAPS \
	(FABSIM_PRIMARY_CAPS | FABSIM_CAP_MODIFIERS | FABSIM_SECONDARY_CAPS)

#define FABSIM_ALL_MODES                                                 \
	(FI_CONTEXT | FI_MSG_PREFIX | FI_ASYNC_IOV | FI_RX_CQ_DATA |     \
	 FI_LOCAL_MR | FI_NOTIFY_FLAGS_ONLY | FI_RESTRICTED_COMP |       \
	 FI_CONTEXT2 | FI_BUFFERED_RECV)

/* The FI_MR_* bits that FI_MR_BASIC stands for since API 1.5. */
#define FABSIM_MR_BASIC_BITS \
	(FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY)

#endif
