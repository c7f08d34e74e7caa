/* SPDX-License-Identifier: BSD-2-Clause
 * fid_nic objects (fi_nic(3)) that the core allocates for fi_info lists. */
#include <stdlib.h>
#include <string.h>

#include <fabsim/fi_stubs.h>
#include "nic.h"

static int nic_close(struct fid *fid)
{
	fabsim_nic_free(container_of(fid, struct fid_nic, fid));
	return 0;
}

static struct fi_ops nic_ops = {
	.size = sizeof(struct fi_ops),
	.close = nic_close,
	.bind = fabsim_no_bind,
	.control = fabsim_no_control,
	.ops_open = fabsim_no_ops_open,
	.tostr = fabsim_no_tostr,
	.ops_set = fabsim_no_ops_set,
};

struct fid_nic *fabsim_nic_alloc(void)
{
	struct fid_nic *nic = calloc(1, sizeof(*nic));

	if (!nic)
		return NULL;
	nic->fid.fclass = FI_CLASS_NIC;
	nic->fid.ops = &nic_ops;
	nic->device_attr = calloc(1, sizeof(*nic->device_attr));
	nic->bus_attr = calloc(1, sizeof(*nic->bus_attr));
	nic->link_attr = calloc(1, sizeof(*nic->link_attr));
	if (!nic->device_attr || !nic->bus_attr || !nic->link_attr) {
		fabsim_nic_free(nic);
		return NULL;
	}
	return nic;
}

static int copy_str(char **dst, const char *src)
{
	*dst = src ? strdup(src) : NULL;
	return !src || *dst;
}

struct fid_nic *fabsim_nic_dup(const struct fid_nic *nic)
{
	struct fid_nic *dup = fabsim_nic_alloc();
	struct fi_device_attr *dev;
	struct fi_link_attr *link;
	int ok = 1;

	if (!dup)
		return NULL;
	dup->fid.context = nic->fid.context;
	if (nic->device_attr) {
		dev = nic->device_attr;
		ok &= copy_str(&dup->device_attr->name, dev->name);
		ok &= copy_str(&dup->device_attr->device_id, dev->device_id);
		ok &= copy_str(&dup->device_attr->device_version,
			       dev->device_version);
		ok &= copy_str(&dup->device_attr->vendor_id, dev->vendor_id);
		ok &= copy_str(&dup->device_attr->driver, dev->driver);
		ok &= copy_str(&dup->device_attr->firmware, dev->firmware);
	}
	if (nic->bus_attr)
		*dup->bus_attr = *nic->bus_attr;
	if (nic->link_attr) {
		link = nic->link_attr;
		*dup->link_attr = *link;
		ok &= copy_str(&dup->link_attr->address, link->address);
		ok &= copy_str(&dup->link_attr->network_type,
			       link->network_type);
	}
	if (!ok) {
		fabsim_nic_free(dup);
		return NULL;
	}
	return dup;
}

void fabsim_nic_free(struct fid_nic *nic)
{
	if (!nic)
		return;
	if (nic->device_attr) {
		free(nic->device_attr->name);
		free(nic->device_attr->device_id);
		free(nic->device_attr->device_version);
		free(nic->device_attr->vendor_id);
		free(nic->device_attr->driver);
		free(nic->device_attr->firmware);
	}
	if (nic->link_attr) {
		free(nic->link_attr->address);
		free(nic->link_attr->network_type);
	}
	free(nic->device_attr);
	free(nic->bus_attr);
	free(nic->link_attr);
	free(nic);
}
