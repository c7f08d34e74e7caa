/* SPDX-License-Identifier: BSD-2-Clause
 * The sim provider's libfabric glue: shared declarations.
 *
 * Layout of providers/sim: sim_prov.c (descriptor, parameters), sim_info.c
 * (what fi_getinfo offers), sim_fabric.c (fid_fabric), and one file per
 * further object type as they arrive. The NIC model lives apart, in nic/.
 */
#ifndef FABSIM_SIM_H
#define FABSIM_SIM_H

#include <rdma/fabric.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <netmodel/nm_config.h>

#define SIM_PROV_NAME    "sim"
#define SIM_PROV_VERSION FI_VERSION(0, 1)
#define SIM_API_VERSION  FI_VERSION(1, 17)
#define SIM_FABRIC_NAME  "fabsim"
#define SIM_DOMAIN_NAME  "sim0"

extern struct fi_provider sim_prov;

/* The model configuration in force: FI_SIM_CONFIG (a JSON file), then the
 * FI_SIM_* variables, over the preset. Logs the reason and returns
 * -FI_EINVAL when a value is bad. */
int sim_config_load(nm_config *cfg);

int sim_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info);

int sim_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context);

#endif
