/* SPDX-License-Identifier: BSD-2-Clause
 * The verbs provider's descriptor, and rdma-core loaded once per process.
 *
 * Without rdma-core, or with it but without a device, fi_getinfo gets
 * -FI_ENODATA from this provider and the log gets one line saying which:
 * at warning level when the application asked for verbs (FI_PROVIDER or
 * hints->fabric_attr->prov_name), else at info level, so that programs
 * using another provider are not told about RDMA hardware they never
 * wanted. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <fabsim/core.h>

#include "verbs.h"

static void vrb_cleanup(void);

struct fi_provider vrb_prov = {
	.version = VRB_PROV_VERSION,
	.fi_version = VRB_API_VERSION,
	.name = VRB_PROV_NAME,
	.getinfo = vrb_getinfo,
	.fabric = vrb_fabric_open,
	.cleanup = vrb_cleanup,
};

struct vrb_lib vrb_lib;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_ret;
static char load_why[512];

static void load(void)
{
	char *ibverbs = NULL, *rdmacm = NULL;

	fi_param_get_str(&vrb_prov, "ibverbs_lib", &ibverbs);
	fi_param_get_str(&vrb_prov, "rdmacm_lib", &rdmacm);
	load_ret = vrb_lib_load(&vrb_lib, ibverbs ? ibverbs : VRB_IBVERBS_SONAME,
				rdmacm ? rdmacm : VRB_RDMACM_SONAME, load_why,
				sizeof(load_why));
}

int vrb_load(bool asked_for)
{
	pthread_once(&load_once, load);
	if (load_ret) {
		if (asked_for)
			FI_WARN(&vrb_prov, FI_LOG_CORE,
				"no verbs provider: %s\n", load_why);
		else
			FI_INFO(&vrb_prov, FI_LOG_CORE,
				"no verbs provider: %s\n", load_why);
	}
	return load_ret;
}

static void vrb_cleanup(void)
{
	if (!load_ret && vrb_lib.ibverbs)
		vrb_lib_unload(&vrb_lib);
}

static struct fi_provider *vrb_ini(void)
{
	fi_param_define(&vrb_prov, "ibverbs_lib", FI_PARAM_STRING,
			"libibverbs to load (default: %s, found the way the "
			"dynamic loader finds libraries)", VRB_IBVERBS_SONAME);
	fi_param_define(&vrb_prov, "rdmacm_lib", FI_PARAM_STRING,
			"librdmacm to load (default: %s)", VRB_RDMACM_SONAME);
	vrb_params_define();
	return &vrb_prov;
}
FABSIM_PROVIDER_INI(vrb_ini)
