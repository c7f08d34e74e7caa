/* SPDX-License-Identifier: BSD-2-Clause
 * fi_dupinfo, fi_allocinfo (through fi_dupinfo(NULL)) and fi_freeinfo.
 *
 * A duplicate owns everything it points to — attribute structures, names,
 * addresses, auth keys, NIC attributes — except info->handle, which
 * fi_getinfo(3) says both calls ignore: it is copied as a plain pointer.
 */
#include <stdlib.h>
#include <string.h>

#include "info_alloc.h"
#include "nic.h"

static void *dup_bytes(const void *src, size_t len)
{
	void *dst;

	if (!src || !len)
		return NULL;
	dst = malloc(len);
	if (dst)
		memcpy(dst, src, len);
	return dst;
}

/* Copies a string field; false only when allocation failed. */
static int dup_str(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 1;
	*dst = strdup(src);
	return *dst != NULL;
}

/* Copies an optional byte buffer; false only when allocation failed. */
static int dup_buf(void **dst, const void *src, size_t len)
{
	*dst = dup_bytes(src, len);
	return *dst != NULL || !src || !len;
}

static void free_attrs(struct fi_info *info)
{
	if (info->ep_attr)
		free(info->ep_attr->auth_key);
	if (info->domain_attr) {
		free(info->domain_attr->name);
		free(info->domain_attr->auth_key);
	}
	if (info->fabric_attr) {
		free(info->fabric_attr->name);
		free(info->fabric_attr->prov_name);
	}
	free(info->tx_attr);
	free(info->rx_attr);
	free(info->ep_attr);
	free(info->domain_attr);
	free(info->fabric_attr);
	free(info->src_addr);
	free(info->dest_addr);
	/* The NIC may be a provider's object: its own close frees it. */
	if (info->nic)
		fi_close(&info->nic->fid);
}

static struct fi_info *alloc_empty(void)
{
	struct fi_info *info = calloc(1, sizeof(*info));

	if (!info)
		return NULL;
	info->tx_attr = calloc(1, sizeof(*info->tx_attr));
	info->rx_attr = calloc(1, sizeof(*info->rx_attr));
	info->ep_attr = calloc(1, sizeof(*info->ep_attr));
	info->domain_attr = calloc(1, sizeof(*info->domain_attr));
	info->fabric_attr = calloc(1, sizeof(*info->fabric_attr));
	if (!info->tx_attr || !info->rx_attr || !info->ep_attr ||
	    !info->domain_attr || !info->fabric_attr) {
		free_attrs(info);
		free(info);
		return NULL;
	}
	return info;
}

/* Fills dup's owned fields from src; dup already holds shallow copies. */
static int copy_owned(struct fi_info *dup, const struct fi_info *src)
{
	int ok = 1;

	ok &= dup_buf(&dup->src_addr, src->src_addr, src->src_addrlen);
	ok &= dup_buf(&dup->dest_addr, src->dest_addr, src->dest_addrlen);
	if (src->ep_attr) {
		*dup->ep_attr = *src->ep_attr;
		ok &= dup_buf((void **)&dup->ep_attr->auth_key,
			      src->ep_attr->auth_key,
			      src->ep_attr->auth_key_size);
	}
	if (src->domain_attr) {
		*dup->domain_attr = *src->domain_attr;
		ok &= dup_str(&dup->domain_attr->name, src->domain_attr->name);
		ok &= dup_buf((void **)&dup->domain_attr->auth_key,
			      src->domain_attr->auth_key,
			      src->domain_attr->auth_key_size);
	}
	if (src->fabric_attr) {
		*dup->fabric_attr = *src->fabric_attr;
		ok &= dup_str(&dup->fabric_attr->name, src->fabric_attr->name);
		ok &= dup_str(&dup->fabric_attr->prov_name,
			      src->fabric_attr->prov_name);
	}
	if (src->nic) {
		dup->nic = fabsim_nic_dup(src->nic);
		ok &= dup->nic != NULL;
	}
	return ok;
}

struct fi_info *fabsim_dupinfo(const struct fi_info *info)
{
	struct fi_info *dup = alloc_empty();

	if (!dup || !info)
		return dup;

	dup->caps = info->caps;
	dup->mode = info->mode;
	dup->addr_format = info->addr_format;
	dup->src_addrlen = info->src_addr ? info->src_addrlen : 0;
	dup->dest_addrlen = info->dest_addr ? info->dest_addrlen : 0;
	dup->handle = info->handle;
	if (info->tx_attr)
		*dup->tx_attr = *info->tx_attr;
	if (info->rx_attr)
		*dup->rx_attr = *info->rx_attr;

	if (!copy_owned(dup, info)) {
		fabsim_freeinfo(dup);
		return NULL;
	}
	return dup;
}

void fabsim_freeinfo(struct fi_info *info)
{
	while (info) {
		struct fi_info *next = info->next;

		free_attrs(info);
		free(info);
		info = next;
	}
}
