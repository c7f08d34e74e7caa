/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef FABSIM_NIC_H
#define FABSIM_NIC_H

#include <rdma/fabric.h>

/* A fid_nic owned by an fi_info, with its device, bus and link attributes
 * allocated (and zeroed). fi_close on it frees it. */
struct fid_nic *fabsim_nic_alloc(void);

/* Deep copy of any fid_nic's attributes; prov_attr is not copied (the core
 * cannot know its size), the copy's is NULL. */
struct fid_nic *fabsim_nic_dup(const struct fid_nic *nic);

void fabsim_nic_free(struct fid_nic *nic);

#endif
