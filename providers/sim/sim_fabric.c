/* SPDX-License-Identifier: BSD-2-Clause
 * fid_fabric of the sim provider: one simulated fabric with its network
 * model configuration. */
#include <stdlib.h>
#include <string.h>

#include <fabsim/fi_stubs.h>

#include "sim.h"

struct sim_fabric {
	struct fid_fabric fabric;
	nm_config         cfg;
};

static int sim_fabric_close(struct fid *fid)
{
	free(container_of(fid, struct sim_fabric, fabric.fid));
	return 0;
}

static struct fi_ops sim_fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = sim_fabric_close,
	.bind = fabsim_no_bind,
	.control = fabsim_no_control,
	.ops_open = fabsim_no_ops_open,
	.tostr = fabsim_no_tostr,
	.ops_set = fabsim_no_ops_set,
};

static struct fi_ops_fabric sim_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = fabsim_no_domain,
	.passive_ep = fabsim_no_passive_ep,
	.eq_open = fabsim_no_eq_open,
	.wait_open = fabsim_no_wait_open,
	.trywait = fabsim_no_trywait,
	.domain2 = fabsim_no_domain2,
};

int sim_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context)
{
	struct sim_fabric *fab;
	int ret;

	if (strcmp(attr->name, SIM_FABRIC_NAME)) {
		FI_WARN(&sim_prov, FI_LOG_FABRIC,
			"fabric \"%s\" unknown; sim offers \"%s\"\n",
			attr->name, SIM_FABRIC_NAME);
		return -FI_ENODATA;
	}
	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	ret = sim_config_load(&fab->cfg);
	if (ret) {
		free(fab);
		return ret;
	}
	fab->fabric.fid.fclass = FI_CLASS_FABRIC;
	fab->fabric.fid.context = context;
	fab->fabric.fid.ops = &sim_fabric_fi_ops;
	fab->fabric.ops = &sim_fabric_ops;
	fab->fabric.api_version = attr->api_version;
	*fabric = &fab->fabric;
	return 0;
}
