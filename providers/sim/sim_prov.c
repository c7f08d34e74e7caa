/* SPDX-License-Identifier: BSD-2-Clause
 * The sim provider's descriptor and parameters.
 *
 * Parameters: every key of the network model (FI_SIM_LINK_MTU, FI_SIM_SEED,
 * ... — netmodel/README.md has the table) plus FI_SIM_CONFIG, the JSON file
 * they may also come from. fi_info -e lists them all.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <fabsim/core.h>
#include <netmodel/nm_preset.h>

#include "sim.h"

struct fi_provider sim_prov = {
	.version = SIM_PROV_VERSION,
	.fi_version = SIM_API_VERSION,
	.name = SIM_PROV_NAME,
	.getinfo = sim_getinfo,
	.fabric = sim_fabric_open,
};

int sim_config_load(nm_config *cfg)
{
	char *json_path = NULL;
	nm_error err;
	int ret;

	fi_param_get_str(&sim_prov, "config", &json_path);
	ret = nm_config_load(cfg, json_path, nm_env_getenv, NULL, &err);
	if (ret) {
		FI_WARN(&sim_prov, FI_LOG_CORE, "configuration rejected: %s\n",
			err.msg);
		return ret == -ENOMEM ? -FI_ENOMEM : -FI_EINVAL;
	}
	return 0;
}

/* The parameter name of a dotted model key: "link.mtu" -> "link_mtu". */
static void param_name(const char *key, char *buf, size_t len)
{
	snprintf(buf, len, "%s", key);
	for (char *c = buf; *c; c++)
		if (*c == '.')
			*c = '_';
}

static void define_params(void)
{
	fi_param_define(&sim_prov, "config", FI_PARAM_STRING,
			"JSON file with the network model: a preset and "
			"overrides (default: none; built-in preset %s)",
			NM_PRESET_DEFAULT);
	for (size_t i = 0; i < nm_config_key_count(); i++) {
		const nm_config_key_info *key = nm_config_key(i);
		char name[64];

		param_name(key->key, name, sizeof(name));
		fi_param_define(&sim_prov, name, FI_PARAM_STRING,
				"%s (%s: %s)", key->help, key->type,
				key->allowed);
	}
}

static struct fi_provider *sim_ini(void)
{
	define_params();
	return &sim_prov;
}
FABSIM_PROVIDER_INI(sim_ini)
