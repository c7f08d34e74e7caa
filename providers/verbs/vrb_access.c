/* SPDX-License-Identifier: BSD-2-Clause
 * Registration rights and modes (fi_mr(3) on a verbs device). */
#include "vrb_translate.h"

#define FI_ALL_ACCESS                                                      \
	(FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ |         \
	 FI_REMOTE_WRITE)

int vrb_ibv_access(uint64_t fi_access)
{
	int access = 0;

	if (!(fi_access & FI_ALL_ACCESS))
		fi_access |= FI_ALL_ACCESS;
	/* Buffers the device writes into: receives, read results, atomic
	 * results. Sending from a buffer needs no right beyond the region. */
	if (fi_access & (FI_RECV | FI_READ))
		access |= IBV_ACCESS_LOCAL_WRITE;
	if (fi_access & FI_REMOTE_READ)
		access |= IBV_ACCESS_REMOTE_READ;
	/* A target of remote writes is also a target of atomics (fi_atomic(3)
	 * asks for FI_REMOTE_WRITE), and verbs wants local write access with
	 * either. */
	if (fi_access & FI_REMOTE_WRITE)
		access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC |
			  IBV_ACCESS_LOCAL_WRITE;
	return access;
}

int vrb_effective_mr_mode(const struct fi_info *info)
{
	int mode = info->domain_attr ? info->domain_attr->mr_mode : 0;

	if (mode == FI_MR_BASIC)
		mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	else if (mode == FI_MR_SCALABLE)
		mode = 0;
	if (info->mode & FI_LOCAL_MR)
		mode |= FI_MR_LOCAL;
	return mode;
}
