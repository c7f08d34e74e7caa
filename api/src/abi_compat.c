/* SPDX-License-Identifier: BSD-2-Clause
 * Entry points for programs built against libfabric before ABI FABRIC_1.3.
 *
 * Older ABIs had shorter attribute structures (fields were only ever
 * appended), and fi_info had no nic before FABRIC_1.2. An old program's
 * structures are read only up to their old size; what we return is the
 * current layout, whose prefix is the old one. Only libfabric.so.1 links
 * this file: the .symver names need the version script.
 */
#include <string.h>

#include <rdma/fabric.h>

#include "info_alloc.h"

/* How long each structure was in an old ABI. */
struct abi_layout {
	size_t info;
	size_t tx_attr;
	size_t rx_attr;
	size_t ep_attr;
	size_t domain_attr;
	size_t fabric_attr;
};

static const struct abi_layout abi_1_0 = {
	.info = offsetof(struct fi_info, nic),
	.tx_attr = offsetof(struct fi_tx_attr, tclass),
	.rx_attr = sizeof(struct fi_rx_attr),
	.ep_attr = offsetof(struct fi_ep_attr, auth_key_size),
	.domain_attr = offsetof(struct fi_domain_attr, cntr_cnt),
	.fabric_attr = offsetof(struct fi_fabric_attr, api_version),
};

static const struct abi_layout abi_1_1 = {
	.info = offsetof(struct fi_info, nic),
	.tx_attr = offsetof(struct fi_tx_attr, tclass),
	.rx_attr = sizeof(struct fi_rx_attr),
	.ep_attr = sizeof(struct fi_ep_attr),
	.domain_attr = offsetof(struct fi_domain_attr, tclass),
	.fabric_attr = sizeof(struct fi_fabric_attr),
};

static const struct abi_layout abi_1_2 = {
	.info = sizeof(struct fi_info),
	.tx_attr = offsetof(struct fi_tx_attr, tclass),
	.rx_attr = sizeof(struct fi_rx_attr),
	.ep_attr = sizeof(struct fi_ep_attr),
	.domain_attr = offsetof(struct fi_domain_attr, tclass),
	.fabric_attr = sizeof(struct fi_fabric_attr),
};

/* Holds a current-layout view of an old fi_info, pointing at zero-extended
 * copies of its attribute structures; nothing here is owned. */
struct upgraded {
	struct fi_info        info;
	struct fi_tx_attr     tx;
	struct fi_rx_attr     rx;
	struct fi_ep_attr     ep;
	struct fi_domain_attr domain;
	struct fi_fabric_attr fabric;
};

#define UPGRADE_ATTR(up, old, field, store, size)                     \
	do {                                                          \
		if ((old)->field) {                                   \
			memcpy(&(up)->store, (old)->field, size);     \
			(up)->info.field = &(up)->store;              \
		}                                                     \
	} while (0)

static void upgrade(struct upgraded *up, const struct fi_info *old,
		    const struct abi_layout *abi)
{
	memset(up, 0, sizeof(*up));
	memcpy(&up->info, old, abi->info);
	up->info.next = NULL;
	UPGRADE_ATTR(up, old, tx_attr, tx, abi->tx_attr);
	UPGRADE_ATTR(up, old, rx_attr, rx, abi->rx_attr);
	UPGRADE_ATTR(up, old, ep_attr, ep, abi->ep_attr);
	UPGRADE_ATTR(up, old, domain_attr, domain, abi->domain_attr);
	UPGRADE_ATTR(up, old, fabric_attr, fabric, abi->fabric_attr);
}

static struct fi_info *dupinfo_old(const struct fi_info *old,
				   const struct abi_layout *abi)
{
	struct upgraded up;

	if (!old)
		return fabsim_dupinfo(NULL);
	upgrade(&up, old, abi);
	return fabsim_dupinfo(&up.info);
}

static int getinfo_old(uint32_t version, const char *node, const char *service,
		       uint64_t flags, const struct fi_info *old_hints,
		       struct fi_info **info, const struct abi_layout *abi)
{
	struct upgraded up;

	if (!old_hints)
		return fi_getinfo(version, node, service, flags, NULL, info);
	upgrade(&up, old_hints, abi);
	return fi_getinfo(version, node, service, flags, &up.info, info);
}

#define OLD_ABI(ver, tag)                                                    \
	struct fi_info *fabsim_dupinfo_##tag(const struct fi_info *info);    \
	struct fi_info *fabsim_dupinfo_##tag(const struct fi_info *info)     \
	{                                                                    \
		return dupinfo_old(info, &abi_##tag);                        \
	}                                                                    \
	void fabsim_freeinfo_##tag(struct fi_info *info);                    \
	void fabsim_freeinfo_##tag(struct fi_info *info)                     \
	{                                                                    \
		fabsim_freeinfo(info);                                       \
	}                                                                    \
	int fabsim_getinfo_##tag(uint32_t version, const char *node,         \
				 const char *service, uint64_t flags,        \
				 const struct fi_info *hints,                \
				 struct fi_info **info);                     \
	int fabsim_getinfo_##tag(uint32_t version, const char *node,         \
				 const char *service, uint64_t flags,        \
				 const struct fi_info *hints,                \
				 struct fi_info **info)                      \
	{                                                                    \
		return getinfo_old(version, node, service, flags, hints,     \
				   info, &abi_##tag);                        \
	}                                                                    \
	__asm__(".symver fabsim_dupinfo_" #tag ",fi_dupinfo@FABRIC_" ver);   \
	__asm__(".symver fabsim_freeinfo_" #tag ",fi_freeinfo@FABRIC_" ver); \
	__asm__(".symver fabsim_getinfo_" #tag ",fi_getinfo@FABRIC_" ver);

OLD_ABI("1.0", 1_0)
OLD_ABI("1.1", 1_1)
OLD_ABI("1.2", 1_2)

/* FABRIC_1.0's fi_fabric_attr had no api_version: such programs asked for
 * an API between 1.0 and 1.4, and are treated as 1.0. */
int fabsim_fabric_1_0(const struct fi_fabric_attr *old,
		      struct fid_fabric **fabric, void *context);
int fabsim_fabric_1_0(const struct fi_fabric_attr *old,
		      struct fid_fabric **fabric, void *context)
{
	struct fi_fabric_attr attr = { 0 };

	if (!old)
		return -FI_EINVAL;
	memcpy(&attr, old, abi_1_0.fabric_attr);
	attr.api_version = FI_VERSION(1, 0);
	return fi_fabric(&attr, fabric, context);
}
__asm__(".symver fabsim_fabric_1_0,fi_fabric@FABRIC_1.0");
