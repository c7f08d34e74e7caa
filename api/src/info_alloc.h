/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef FABSIM_INFO_ALLOC_H
#define FABSIM_INFO_ALLOC_H

#include <rdma/fabric.h>

/* Deep copy of one fi_info (next is not followed; the copy's next is NULL).
 * NULL makes an empty fi_info with every attribute structure allocated. */
struct fi_info *fabsim_dupinfo(const struct fi_info *info);

/* Frees a whole list. */
void fabsim_freeinfo(struct fi_info *info);

#endif
