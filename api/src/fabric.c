/* SPDX-License-Identifier: BSD-2-Clause
 * fi_fabric(3), fi_open and fi_version: the entry points that hand over to a
 * provider after discovery. */
#include <string.h>

#include "core_private.h"

uint32_t fi_version(void)
{
	return FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
}

int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		  void *context)
{
	struct fi_provider *prov;
	int ret;

	if (!attr || !fabric) {
		FI_WARN(&fabsim_core_prov, FI_LOG_CORE,
			"fi_fabric: attr and fabric must not be NULL\n");
		return -FI_EINVAL;
	}
	if (!attr->prov_name || !attr->name) {
		FI_WARN(&fabsim_core_prov, FI_LOG_CORE,
			"fi_fabric: attr needs prov_name and name, as "
			"fi_getinfo returns them\n");
		return -FI_EINVAL;
	}
	fabsim_core_init();
	prov = fabsim_provider_find(attr->prov_name);
	if (!prov) {
		FI_WARN(&fabsim_core_prov, FI_LOG_CORE,
			"fi_fabric: no provider named \"%s\"\n",
			attr->prov_name);
		return -FI_ENODATA;
	}
	ret = prov->fabric(attr, fabric, context);
	if (!ret && !(*fabric)->api_version)
		(*fabric)->api_version = attr->api_version;
	return ret;
}

int fi_open(uint32_t version, const char *name, void *attr, size_t attr_len,
	    uint64_t flags, struct fid **fid, void *context)
{
	FI_INFO(&fabsim_core_prov, FI_LOG_CORE,
		"fi_open: no core object named \"%s\"\n", name ? name : "(null)");
	return -FI_ENOSYS;
}
