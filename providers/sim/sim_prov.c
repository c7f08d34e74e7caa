/* SPDX-License-Identifier: BSD-2-Clause
 * The sim provider's descriptor, parameters and configuration.
 *
 * Parameters: every key of the network model (FI_SIM_LINK_MTU, FI_SIM_SEED,
 * ... — netmodel/README.md has the table), FI_SIM_CONFIG (a JSON file they
 * may also come from) and the NIC's transport settings below. fi_info -e
 * lists them all. An FI_SIM_* variable that is none of these is rejected:
 * a misspelt setting must not be ignored.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

/* The provider's own parameters (the model's come from netmodel). */
enum param_kind { P_CONFIG, P_BOOL, P_NS, P_COUNT, P_RETRY, P_BYTES };

static const struct sim_param {
	const char *name;
	enum param_kind kind;
	size_t offset; /* in struct nic_transport_params */
	const char *help;
} sim_params[] = {
	{ "config", P_CONFIG, 0,
	  "JSON file with the network model: a preset and overrides" },
	{ "mr_strict", P_BOOL, 0,
	  "serve only programs that register local buffers "
	  "(FI_MR_LOCAL|VIRT_ADDR|ALLOCATED|PROV_KEY), as a bare verbs NIC "
	  "does (default: no)" },
	{ "ack_timeout_ns", P_NS,
	  offsetof(struct nic_transport_params, ack_timeout_ns),
	  "no acknowledgement for this long: retransmit (default 100000)" },
	{ "retry_count", P_COUNT,
	  offsetof(struct nic_transport_params, retry_count),
	  "timeouts without progress before operations fail with "
	  "FI_ETIMEDOUT (default 7)" },
	{ "rnr_timeout_ns", P_NS,
	  offsetof(struct nic_transport_params, rnr_timeout_ns),
	  "wait before retrying a receiver-not-ready peer (default 10000)" },
	{ "rnr_retry", P_RETRY,
	  offsetof(struct nic_transport_params, rnr_retry),
	  "receiver-not-ready retries before FI_ENORX; -1: for ever "
	  "(default -1)" },
	{ "window_packets", P_COUNT,
	  offsetof(struct nic_transport_params, window_packets),
	  "unacknowledged packets per peer (default 128)" },
	{ "unexpected_bytes", P_BYTES,
	  offsetof(struct nic_transport_params, unexpected_bytes),
	  "buffer for messages that arrive before their receive "
	  "(default 67108864)" },
};

static void param_upper(const char *name, char *buf, size_t len)
{
	size_t i = 0;

	for (; name[i] && i + 1 < len; i++)
		buf[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ?
					name[i] - 'a' + 'A' : name[i]);
	buf[i] = '\0';
}

/* FI_SIM_<name> is ours (or the model's): known names only. */
static bool known_variable(const char *env_name)
{
	const char *rest = env_name + strlen("FI_SIM_");
	char upper[64];

	if (nm_config_key_from_env(env_name))
		return true;
	for (size_t i = 0; i < count_of(sim_params); i++) {
		param_upper(sim_params[i].name, upper, sizeof(upper));
		if (!strcmp(rest, upper))
			return true;
	}
	return false;
}

static int check_variables(void)
{
	extern char **environ;

	for (char **e = environ; *e; e++) {
		char name[128];
		const char *eq = strchr(*e, '=');
		size_t len = eq ? (size_t)(eq - *e) : strlen(*e);

		if (strncmp(*e, "FI_SIM_", 7) || len >= sizeof(name))
			continue;
		memcpy(name, *e, len);
		name[len] = '\0';
		if (!known_variable(name)) {
			FI_WARN(&sim_prov, FI_LOG_CORE,
				"%s is not a sim parameter (fi_info -e lists "
				"them)\n", name);
			return -FI_EINVAL;
		}
	}
	return 0;
}

static int read_transport(struct nic_transport_params *tp)
{
	for (size_t i = 0; i < count_of(sim_params); i++) {
		const struct sim_param *p = &sim_params[i];
		void *field = (char *)tp + p->offset;
		size_t v = 0;
		int iv = 0, ret;

		if (p->kind == P_CONFIG || p->kind == P_BOOL)
			continue;
		if (p->kind == P_RETRY) {
			ret = fi_param_get_int(&sim_prov, p->name, &iv);
			if (!ret)
				*(int32_t *)field = iv < 0 ? -1 : iv;
		} else {
			ret = fi_param_get_size_t(&sim_prov, p->name, &v);
			if (!ret && p->kind == P_NS)
				*(nm_time_ns *)field = v;
			else if (!ret && p->kind == P_COUNT) {
				if (!v || v > UINT32_MAX) {
					FI_WARN(&sim_prov, FI_LOG_CORE,
						"FI_SIM_%s=%zu: must be 1 to "
						"%u\n", p->name, v, UINT32_MAX);
					return -FI_EINVAL;
				}
				*(uint32_t *)field = (uint32_t)v;
			} else if (!ret) {
				*(size_t *)field = v;
			}
		}
		if (ret && ret != -FI_ENODATA)
			return -FI_EINVAL; /* fi_param_get logged why */
	}
	return 0;
}

int sim_config_load(nm_config *cfg, struct nic_transport_params *transport)
{
	struct nic_transport_params tp;
	char *json_path = NULL;
	nm_error err;
	int ret;

	ret = check_variables();
	if (ret)
		return ret;
	fi_param_get_str(&sim_prov, "config", &json_path);
	ret = nm_config_load(cfg, json_path, nm_env_getenv, NULL, &err);
	if (ret) {
		FI_WARN(&sim_prov, FI_LOG_CORE, "configuration rejected: %s\n",
			err.msg);
		return ret == -ENOMEM ? -FI_ENOMEM : -FI_EINVAL;
	}
	nic_transport_defaults(&tp);
	ret = read_transport(&tp);
	if (ret)
		return ret;
	if (transport)
		*transport = tp;
	return 0;
}

/* The parameter name of a dotted model key: "link.mtu" -> "link_mtu". */
static void model_param_name(const char *key, char *buf, size_t len)
{
	snprintf(buf, len, "%s", key);
	for (char *c = buf; *c; c++)
		if (*c == '.')
			*c = '_';
}

static void define_params(void)
{
	for (size_t i = 0; i < count_of(sim_params); i++)
		fi_param_define(&sim_prov, sim_params[i].name,
				sim_params[i].kind == P_CONFIG ? FI_PARAM_STRING :
				sim_params[i].kind == P_BOOL   ? FI_PARAM_BOOL :
				sim_params[i].kind == P_RETRY  ? FI_PARAM_INT :
								 FI_PARAM_SIZE_T,
				"%s%s", sim_params[i].help,
				sim_params[i].kind == P_CONFIG ?
					" (default: none; built-in preset "
					NM_PRESET_DEFAULT ")" : "");
	for (size_t i = 0; i < nm_config_key_count(); i++) {
		const nm_config_key_info *key = nm_config_key(i);
		char name[64];

		model_param_name(key->key, name, sizeof(name));
		fi_param_define(&sim_prov, name, FI_PARAM_STRING,
				"%s (%s: %s)", key->help, key->type,
				key->allowed);
	}
}

bool sim_mr_strict(void)
{
	int strict = 0;

	fi_param_get_bool(&sim_prov, "mr_strict", &strict);
	return strict;
}

int sim_errno(int neg_errno)
{
	switch (neg_errno) {
	case 0: return 0;
	case -ENOMEM: return -FI_ENOMEM;
	case -ENOSPC: return -FI_ENOSPC;
	case -EEXIST: return -FI_ENOKEY;
	case -EBUSY: return -FI_EBUSY;
	case -ENOENT: return -FI_ENOENT;
	case -EADDRINUSE: return -FI_EADDRINUSE;
	case -ENOTCONN: return -FI_ENOTCONN;
	case -EMSGSIZE: return -FI_EMSGSIZE;
	default: return -FI_EINVAL;
	}
}

static struct fi_provider *sim_ini(void)
{
	define_params();
	return &sim_prov;
}
FABSIM_PROVIDER_INI(sim_ini)
