/* SPDX-License-Identifier: BSD-2-Clause
 * The sim provider's descriptor, parameters and configuration.
 *
 * Parameters: every key of the network model (FI_SIM_LINK_MTU, FI_SIM_SEED,
 * ... — netmodel/README.md has the table), FI_SIM_CONFIG (a JSON file they
 * may also come from), the NIC's transport settings and the recording
 * settings below. fi_info -e lists them all. An FI_SIM_* variable that is
 * none of these is rejected: a misspelt setting must not be ignored.
 *
 * Recording (FI_SIM_PCAP, FI_SIM_PCAP_PER_NODE, FI_SIM_PCAP_SNAPLEN,
 * FI_SIM_PCAP_LOG) may also come from the JSON file, as top-level keys
 * "pcap", "pcap_per_node", "pcap_snaplen" and "pcap_log"; the variables win.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fabsim/core.h>
#include <netmodel/nm_preset.h>

#include "shared/shared_world.h"
#include "sim.h"

struct fi_provider sim_prov = {
	.version = SIM_PROV_VERSION,
	.fi_version = SIM_API_VERSION,
	.name = SIM_PROV_NAME,
	.getinfo = sim_getinfo,
	.fabric = sim_fabric_open,
};

/* The provider's own parameters (the model's come from netmodel). */
enum param_kind { P_CONFIG, P_BOOL, P_NS, P_NS_POSITIVE, P_COUNT, P_RETRY,
		  P_BYTES, P_STRING, P_SNAPLEN };

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
	{ "ack_timeout_ns", P_NS_POSITIVE,
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
	/* "also the JSON key \"...\"" in a help text is what tells `fabsim
	 * model` and `fabsim run` that the key is ours, not the model's
	 * (tools/fabsim/sim_settings.c): keep the words. */
	{ "pcap", P_STRING, 0,
	  "record everything the simulated NICs put on the wire into this "
	  "pcap file: RoCEv2 frames, virtual time in nanoseconds, drops and "
	  "retransmissions marked (traces/README.md); also the JSON key "
	  "\"pcap\" (default: none)" },
	{ "pcap_per_node", P_BOOL, 0,
	  "with FI_SIM_PCAP: one file per host instead, FI_SIM_PCAP less a "
	  "final .pcap then .<host>.pcap, with what the host sent and "
	  "received; also the JSON key \"pcap_per_node\" (default: no)" },
	{ "pcap_snaplen", P_SNAPLEN, 0,
	  "with FI_SIM_PCAP: bytes kept of each frame, 0 for whole frames or "
	  "128 (every header) to 262144; also the JSON key "
	  "\"pcap_snaplen\" (default 0)" },
	{ "pcap_log", P_STRING, 0,
	  "with FI_SIM_PCAP: also this text file, one line per frame "
	  "recorded, the NIC's own view of the packet; also the JSON key "
	  "\"pcap_log\" (default: none)" },
	{ "fabric", P_STRING, 0,
	  "join the simulated fabric of this name shared by the user's "
	  "processes (started on demand; `fabsim fabric status` shows it) "
	  "instead of a private one (default: none)" },
	{ "node", P_STRING, 0,
	  "with FI_SIM_FABRIC: the host this process is on the shared fabric; "
	  "else the launcher's rank (OMPI_COMM_WORLD_RANK, PMI_RANK, "
	  "PMIX_RANK, SLURM_PROCID) (default: none)" },
	{ "nodes", P_STRING, 0,
	  "with FI_SIM_FABRIC: processes the shared fabric waits for before "
	  "its clock starts, so that results do not depend on who started "
	  "first; else the launcher's job size (OMPI_COMM_WORLD_SIZE, "
	  "PMI_SIZE, PMIX_SIZE, SLURM_NTASKS) (default: none)" },
	{ "shared_memory_mb", P_STRING, 0,
	  "with FI_SIM_FABRIC: address space the shared fabric reserves, in "
	  "MiB; pages are used as touched (default 1024)" },
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
		char upper[64];

		if (p->kind == P_CONFIG || p->kind == P_BOOL ||
		    p->kind == P_STRING || p->kind == P_SNAPLEN)
			continue;
		param_upper(p->name, upper, sizeof(upper));
		if (p->kind == P_RETRY) {
			ret = fi_param_get_int(&sim_prov, p->name, &iv);
			if (!ret)
				*(int32_t *)field = iv < 0 ? -1 : iv;
		} else {
			ret = fi_param_get_size_t(&sim_prov, p->name, &v);
			if (!ret && p->kind == P_NS_POSITIVE && !v) {
				/* No time to wait for an ACK: every send
				 * would time out. */
				FI_WARN(&sim_prov, FI_LOG_CORE,
					"FI_SIM_%s=0: must be at least 1\n",
					upper);
				return -FI_EINVAL;
			}
			if (!ret && (p->kind == P_NS || p->kind == P_NS_POSITIVE))
				*(nm_time_ns *)field = v;
			else if (!ret && p->kind == P_COUNT) {
				if (!v || v > UINT32_MAX) {
					FI_WARN(&sim_prov, FI_LOG_CORE,
						"FI_SIM_%s=%zu: must be 1 to "
						"%u\n", upper, v, UINT32_MAX);
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

/* ---- Recording settings ------------------------------------------------------ */

/* The file's keys that are the provider's, not the model's (NULL-ended, for
 * nm_config_load_sharing). */
static const char *const pcap_keys[] = { "pcap", "pcap_per_node", "pcap_snaplen",
					 "pcap_log", NULL };

void sim_record_config_free(struct sim_record_config *rc)
{
	free(rc->path);
	free(rc->log_path);
	memset(rc, 0, sizeof(*rc));
}

static int snaplen_ok(uint64_t v)
{
	return v == 0 || (v >= 128 && v <= 262144);
}

static int set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = v && v[0] ? strdup(v) : NULL;
	return v && v[0] && !*dst ? -FI_ENOMEM : 0;
}

/* Reads the recording keys of the JSON file (one that cannot be read, or is
 * not JSON: the model's loader says what is wrong with it). */
static int json_record(const char *path, struct sim_record_config *rc)
{
	json_error_t jerr;
	json_t *root;
	nm_error unusable;
	int ret = 0;

	if (nm_config_file_usable(path, &unusable))
		return 0;
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return 0;
	if (!json_is_object(root)) {
		json_decref(root);
		return 0;
	}
	for (size_t i = 0; pcap_keys[i] && !ret; i++) {
		json_t *v = json_object_get(root, pcap_keys[i]);
		char *shown;

		if (!v)
			continue;
		if (i == 0 || i == 3) {
			if (json_is_string(v))
				ret = set_str(i ? &rc->log_path : &rc->path,
					      json_string_value(v));
			else
				ret = -FI_EINVAL;
		} else if (i == 1) {
			if (json_is_boolean(v))
				rc->per_node = json_is_true(v);
			else
				ret = -FI_EINVAL;
		} else {
			if (json_is_integer(v) && json_integer_value(v) >= 0 &&
			    snaplen_ok((uint64_t)json_integer_value(v)))
				rc->snaplen = (uint32_t)json_integer_value(v);
			else
				ret = -FI_EINVAL;
		}
		if (ret == -FI_EINVAL) {
			shown = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
			FI_WARN(&sim_prov, FI_LOG_CORE,
				"config file %s: \"%s\": %s is not %s\n", path,
				pcap_keys[i], shown ? shown : "?",
				i == 0 || i == 3 ? "a string (a file name)" :
				i == 1 ? "true or false" :
				"0 (whole frames) or 128 (headers only) to 262144");
			free(shown);
		}
	}
	json_decref(root);
	return ret;
}

/* The variables, over what the JSON file said. */
static int env_record(struct sim_record_config *rc)
{
	char *str = NULL;
	int on = 0, ret;
	size_t v;

	ret = fi_param_get_str(&sim_prov, "pcap", &str);
	if (!ret && set_str(&rc->path, str))
		return -FI_ENOMEM;
	ret = fi_param_get_str(&sim_prov, "pcap_log", &str);
	if (!ret && set_str(&rc->log_path, str))
		return -FI_ENOMEM;
	ret = fi_param_get_bool(&sim_prov, "pcap_per_node", &on);
	if (ret && ret != -FI_ENODATA)
		return -FI_EINVAL; /* fi_param_get logged why */
	if (!ret)
		rc->per_node = on;
	ret = fi_param_get_size_t(&sim_prov, "pcap_snaplen", &v);
	if (ret && ret != -FI_ENODATA)
		return -FI_EINVAL;
	if (!ret) {
		if (!snaplen_ok(v)) {
			FI_WARN(&sim_prov, FI_LOG_CORE,
				"FI_SIM_PCAP_SNAPLEN=%zu: must be 0 (whole frames) "
				"or 128 (headers only) to 262144\n", v);
			return -FI_EINVAL;
		}
		rc->snaplen = (uint32_t)v;
	}
	return 0;
}

int sim_config_load_all(nm_config *cfg, struct nic_transport_params *transport,
			struct sim_record_config *record)
{
	struct sim_record_config rc = { 0 };
	struct nic_transport_params tp;
	char *json_path = NULL;
	nm_error err;
	int ret, strict;

	ret = check_variables();
	if (ret)
		return ret;
	fi_param_get_str(&sim_prov, "config", &json_path);
	if (json_path) {
		ret = json_record(json_path, &rc);
		if (ret)
			goto out;
	}
	ret = nm_config_load_sharing(cfg, json_path, pcap_keys, nm_env_getenv,
				     NULL, &err);
	if (ret) {
		FI_WARN(&sim_prov, FI_LOG_CORE, "configuration rejected: %s\n",
			err.msg);
		ret = ret == -ENOMEM ? -FI_ENOMEM : -FI_EINVAL;
		goto out;
	}
	if (fi_param_get_bool(&sim_prov, "mr_strict", &strict) == -FI_EINVAL) {
		ret = -FI_EINVAL; /* fi_param_get logged why */
		goto out;
	}
	char why[256];

	if (shared_world_check_settings(why, sizeof(why))) {
		FI_WARN(&sim_prov, FI_LOG_CORE, "%s\n", why);
		ret = -FI_EINVAL;
		goto out;
	}
	nic_transport_defaults(&tp);
	ret = read_transport(&tp);
	if (ret)
		goto out;
	ret = env_record(&rc);
	if (ret)
		goto out;
	/* On a shared fabric the process that starts it decides what is
	 * recorded, with its own settings: a script that exports the same
	 * ones for every process (FI_SIM_PCAP for one only) is not wrong. */
	if (!rc.path && (rc.log_path || rc.per_node || rc.snaplen) &&
	    !shared_world_fabric()) {
		FI_WARN(&sim_prov, FI_LOG_CORE,
			"%s is set but FI_SIM_PCAP (or \"pcap\" in the config "
			"file) is not: nothing would be recorded\n",
			rc.log_path ? "FI_SIM_PCAP_LOG" :
			rc.per_node ? "FI_SIM_PCAP_PER_NODE" :
				      "FI_SIM_PCAP_SNAPLEN");
		ret = -FI_EINVAL;
		goto out;
	}
	if (transport)
		*transport = tp;
	if (record) {
		*record = rc;
		memset(&rc, 0, sizeof(rc));
	}
out:
	sim_record_config_free(&rc);
	return ret;
}

int sim_config_load(nm_config *cfg, struct nic_transport_params *transport)
{
	return sim_config_load_all(cfg, transport, NULL);
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
				sim_params[i].kind == P_STRING ? FI_PARAM_STRING :
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
	case -EFAULT: return -FI_EFAULT;
	default: return -FI_EINVAL;
	}
}

static struct fi_provider *sim_ini(void)
{
	define_params();
	return &sim_prov;
}
FABSIM_PROVIDER_INI(sim_ini)
