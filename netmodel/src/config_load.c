/* The load order (preset < JSON < environment), the environment front end and the cross-field
 * checks. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"
#include "netmodel/nm_preset.h"

#define ENV_PREFIX "FI_SIM_"
#define ENV_NAME_MAX 96

const char *nm_env_from_envp(void *envp, const char *name)
{
	size_t len = strlen(name);
	for (char **entry = envp; entry && *entry; entry++)
		if (strncmp(*entry, name, len) == 0 && (*entry)[len] == '=')
			return *entry + len + 1;
	return NULL;
}

const char *nm_env_getenv(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

void nm_config_env_name(const char *key, char *buf, size_t buflen)
{
	size_t used = (size_t)snprintf(buf, buflen, "%s", ENV_PREFIX);
	for (const char *c = key; *c && used + 1 < buflen; c++, used++) {
		char ch = *c == '.' ? '_' : *c;
		buf[used] = (ch >= 'a' && ch <= 'z') ? (char)(ch - 'a' + 'A') : ch;
	}
	if (used < buflen)
		buf[used] = '\0';
}

const char *nm_config_key_from_env(const char *env_name)
{
	size_t count;
	const key_spec *table = config_key_table(&count);
	for (size_t i = 0; i < count; i++) {
		char name[ENV_NAME_MAX];
		nm_config_env_name(table[i].info.key, name, sizeof(name));
		if (strcmp(name, env_name) == 0)
			return table[i].info.key;
	}
	return NULL;
}

/* An error of a value, prefixed with where the value came from; rc passed through. */
static int came_from(int rc, nm_error *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int came_from(int rc, nm_error *err, const char *fmt, ...)
{
	char where[NM_ERROR_MSG_MAX / 2];
	size_t wl, ml;
	va_list ap;

	if (!err)
		return rc;
	va_start(ap, fmt);
	vsnprintf(where, sizeof(where) - 2, fmt, ap);
	va_end(ap);
	strcat(where, ": ");
	wl = strlen(where);
	ml = strnlen(err->msg, sizeof(err->msg) - 1);
	if (wl + ml >= sizeof(err->msg))
		ml = sizeof(err->msg) - 1 - wl;
	memmove(err->msg + wl, err->msg, ml);
	memcpy(err->msg, where, wl);
	err->msg[wl + ml] = '\0';
	return rc;
}

int nm_config_apply_env(nm_config *cfg, nm_env_lookup_fn lookup, void *env_ctx, nm_error *err)
{
	size_t count;
	const key_spec *table = config_key_table(&count);
	for (size_t i = 0; i < count; i++) {
		if (table[i].kind == KEY_PRESET)
			continue;
		char name[ENV_NAME_MAX];
		nm_config_env_name(table[i].info.key, name, sizeof(name));
		const char *value = lookup(env_ctx, name);
		if (!value)
			continue;
		int rc = config_set_text(cfg, &table[i], value, err);
		if (rc)
			/* Say where the value came from: the user set a variable, not a key. */
			return came_from(rc, err, "%s (environment)", name);
	}
	return 0;
}

static int load(nm_config *cfg, const char *json_text, const char *json_path,
		const char *const *foreign, nm_env_lookup_fn lookup, void *env_ctx, nm_error *err)
{
	struct json_t *root = NULL;
	int rc = 0;
	if ((json_text && *json_text) || json_path)
		rc = config_json_parse(json_path ? NULL : json_text, json_path, &root, err);
	if (rc)
		return rc;

	char env_name[ENV_NAME_MAX];
	nm_config_env_name("preset", env_name, sizeof(env_name));
	const char *preset = lookup ? lookup(env_ctx, env_name) : NULL;
	const char *json_preset = NULL;
	/* A file's values are named with its path (a caller that passes text names it). */
	bool env_preset = preset != NULL;
	if (root)
		rc = config_json_preset(root, &json_preset, err);
	/* The file's preset is checked even when the environment's wins: a
	 * bad value is an error wherever it is. */
	if (!rc && json_preset && preset)
		rc = nm_preset_load(cfg, json_preset, err);
	if (rc && json_path)
		return came_from(rc, err, "config file %s", json_path);
	if (!preset)
		preset = json_preset ? json_preset : NM_PRESET_DEFAULT;
	if (!rc)
		rc = nm_preset_load(cfg, preset, err);
	if (rc && env_preset)
		rc = came_from(rc, err, "%s (environment)", env_name);
	else if (rc && json_path)
		rc = came_from(rc, err, "config file %s", json_path);
	if (!rc && root) {
		rc = config_json_apply(cfg, root, foreign, err);
		if (rc && json_path)
			rc = came_from(rc, err, "config file %s", json_path);
	}
	if (root)
		config_json_free(root);
	if (!rc && lookup)
		rc = nm_config_apply_env(cfg, lookup, env_ctx, err);
	if (!rc)
		rc = nm_config_check(cfg, err);
	return rc;
}

int nm_config_load(nm_config *cfg, const char *json_path, nm_env_lookup_fn lookup, void *env_ctx,
		   nm_error *err)
{
	return load(cfg, NULL, json_path, NULL, lookup, env_ctx, err);
}

int nm_config_load_sharing(nm_config *cfg, const char *json_path, const char *const *foreign,
			   nm_env_lookup_fn lookup, void *env_ctx, nm_error *err)
{
	return load(cfg, NULL, json_path, foreign, lookup, env_ctx, err);
}

int nm_config_load_text(nm_config *cfg, const char *json_text, nm_env_lookup_fn lookup,
			void *env_ctx, nm_error *err)
{
	return load(cfg, json_text, NULL, NULL, lookup, env_ctx, err);
}

static uint32_t link_count(const nm_topology_params *t)
{
	switch (t->kind) {
	case NM_TOPO_PAIR:
		return 1;
	case NM_TOPO_STAR:
		return t->hosts;
	case NM_TOPO_FATTREE:
		return t->hosts + t->hosts / t->hosts_per_leaf * t->uplinks_per_leaf;
	}
	return 0;
}

int nm_config_check(const nm_config *cfg, nm_error *err)
{
	int rc = nm_topology_params_check(&cfg->topology, err);
	if (rc || (rc = nm_impair_params_check(&cfg->impair, err)))
		return rc;
	if (cfg->link.mtu_bytes == 0)
		return nm_error_set(err, -EINVAL, "link.mtu: 0 is out of range (allowed: 64 to 65536)");
	uint64_t packet = (uint64_t)cfg->link.mtu_bytes + cfg->link.header_bytes;
	if (cfg->sw.buffer_bytes && cfg->sw.buffer_bytes < packet)
		return nm_error_set(err, -EINVAL,
				    "switch.buffer_bytes: %" PRIu64 " is smaller than one packet "
				    "(allowed: 0 for unlimited or >= link.mtu + link.header_bytes = %" PRIu64 ")",
				    cfg->sw.buffer_bytes, packet);
	if (cfg->impair.reorder_rate > 0 && cfg->impair.reorder_delay_ns == 0)
		return nm_error_set(err, -EINVAL,
				    "loss.reorder_rate: %g has no effect with loss.reorder_delay_ns 0 "
				    "(allowed: set a delay, or rate 0)",
				    cfg->impair.reorder_rate);
	if (cfg->mr.page_size == 0 || (cfg->mr.page_size & (cfg->mr.page_size - 1)))
		return nm_error_set(err, -EINVAL,
				    "mr.page_size: %" PRIu64 " is out of range (allowed: a power of two)",
				    cfg->mr.page_size);
	uint32_t links = link_count(&cfg->topology);
	for (uint32_t i = 0; i < cfg->fault_count; i++)
		if (cfg->faults[i].link >= links)
			return nm_error_set(err, -EINVAL,
					    "faults.link_down[%" PRIu32 "].link: %" PRIu32
					    " does not exist (allowed: 0 to %" PRIu32 " for this topology)",
					    i, cfg->faults[i].link, links - 1);
	return 0;
}
