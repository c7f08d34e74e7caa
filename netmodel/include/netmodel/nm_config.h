/* The model's whole configuration and its one loader.
 *
 * Precedence, lowest to highest: the preset, then the JSON file, then FI_SIM_* environment
 * variables. The preset itself is chosen the same way: FI_SIM_PRESET, else the JSON "preset" key,
 * else NM_PRESET_DEFAULT (nm_preset.h).
 *
 * Keys are dotted names ("link.bandwidth_gbps"); in JSON they nest ({"link": {"bandwidth_gbps":
 * 25}}), in the environment they are FI_SIM_ + the name upper-cased with '.' -> '_'
 * (FI_SIM_LINK_BANDWIDTH_GBPS). The full table is in netmodel/README.md and in nm_config_key().
 * Every bad value is rejected with -EINVAL and a message naming the key, the value and what is
 * allowed; nothing is silently ignored or clamped.
 *
 * Environment variables are read through a lookup callback, so tests and the libfabric provider
 * pass their own view of the environment (nm_env_from_envp for an envp array, nm_env_getenv for
 * the process environment). The provider owns the FI_SIM_ namespace: this loader reads only its
 * own keys, and nm_config_key_from_env tells the provider which names are netmodel's.
 */
#ifndef NM_CONFIG_H
#define NM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netmodel/nm_cost.h"
#include "netmodel/nm_error.h"
#include "netmodel/nm_impair.h"
#include "netmodel/nm_link.h"
#include "netmodel/nm_switch.h"
#include "netmodel/nm_time.h"
#include "netmodel/nm_topology.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NM_CONFIG_NAME_MAX 32
#define NM_CONFIG_MAX_DROPS 64
#define NM_CONFIG_MAX_FAULTS 64

/* "Drop the nth packet of this flow as it leaves its source host" (nth counts from 1). */
typedef struct nm_scripted_drop {
	uint64_t flow;
	uint64_t nth;
} nm_scripted_drop;

/* Link `link` is down (both directions) from down_at until up_at (NM_TIME_NEVER: stays down). */
typedef struct nm_link_fault {
	uint32_t link;
	nm_time_ns down_at;
	nm_time_ns up_at;
} nm_link_fault;

typedef struct nm_config {
	char preset[NM_CONFIG_NAME_MAX]; /* name of the preset this started from */
	uint64_t seed;
	nm_topology_params topology;
	nm_link_params link;       /* every link */
	nm_switch_params sw;       /* every switch */
	nm_impair_params impair;   /* every link direction */
	nm_nic_params nic;         /* every host */
	nm_mr_params mr;
	uint32_t drop_count;
	nm_scripted_drop drops[NM_CONFIG_MAX_DROPS];
	uint32_t fault_count;
	nm_link_fault faults[NM_CONFIG_MAX_FAULTS];
} nm_config;

/* Returns the value of environment variable `name`, or NULL when unset. */
typedef const char *(*nm_env_lookup_fn)(void *ctx, const char *name);

/* Lookup in a NULL-terminated "NAME=value" array; ctx is that array (char **). */
const char *nm_env_from_envp(void *envp, const char *name);
/* Lookup in the process environment (getenv); ctx is ignored. */
const char *nm_env_getenv(void *ctx, const char *name);

/* Whether path names a JSON file one may read: 0, or -errno with err saying why (missing,
 * unreadable, a directory, a pipe or a device). Looked at without opening it: opening a pipe
 * nobody writes to would wait for ever. Every reader of the file asks this first. */
int nm_config_file_usable(const char *path, nm_error *err);

/* The whole load: preset, then JSON file (json_path may be NULL), then environment (lookup may be
 * NULL), then nm_config_check. On error *cfg is unspecified. */
int nm_config_load(nm_config *cfg, const char *json_path, nm_env_lookup_fn lookup, void *env_ctx,
		   nm_error *err);

/* Same, for a file that also holds keys of its caller's: the top-level keys in `foreign`
 * (NULL-terminated) are left to the caller, and named among the allowed ones when a key is
 * unknown. */
int nm_config_load_sharing(nm_config *cfg, const char *json_path, const char *const *foreign,
			   nm_env_lookup_fn lookup, void *env_ctx, nm_error *err);

/* Same, with the JSON given as text (NULL or "" for none). */
int nm_config_load_text(nm_config *cfg, const char *json_text, nm_env_lookup_fn lookup,
			void *env_ctx, nm_error *err);

/* The steps, for callers that compose differently. Each applies overrides onto *cfg. The JSON
 * steps ignore a "preset" key (nm_config_load has already used it). */
int nm_config_apply_json_text(nm_config *cfg, const char *json_text, nm_error *err);
int nm_config_apply_json_file(nm_config *cfg, const char *path, nm_error *err);
int nm_config_apply_env(nm_config *cfg, nm_env_lookup_fn lookup, void *env_ctx, nm_error *err);
/* Sets one key from its text form, as the environment does (key is dotted: "link.mtu"). */
int nm_config_set(nm_config *cfg, const char *key, const char *value, nm_error *err);

/* Cross-field checks (topology shape, buffer >= largest packet, burst rate reachable, fault
 * links exist, ...). */
int nm_config_check(const nm_config *cfg, nm_error *err);

/* Description of one key, for documentation and `fi_info -e`. */
typedef struct nm_config_key_info {
	const char *key;     /* dotted name */
	const char *type;    /* "uint", "number", "probability", "enum", "list", "string" */
	const char *allowed; /* human-readable range or set */
	const char *help;
} nm_config_key_info;

/* The keys, in table order: nm_config_key(i) for i < nm_config_key_count(); NULL past the end. */
size_t nm_config_key_count(void);
const nm_config_key_info *nm_config_key(size_t index);

/* Writes the FI_SIM_ variable name of a dotted key into buf. */
void nm_config_env_name(const char *key, char *buf, size_t buflen);

/* If env_name (e.g. "FI_SIM_LINK_MTU") is one of netmodel's, returns its dotted key; else NULL. */
const char *nm_config_key_from_env(const char *env_name);

#ifdef __cplusplus
}
#endif

#endif
