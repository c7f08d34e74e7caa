/* JSON front end of the configuration: parsed by jansson, flattened to dotted keys, each value
 * handed to the typed setters of config_keys.c. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_internal.h"

#define KEY_MAX 128

/* The value as the user wrote it, for messages. */
static void show_json(const json_t *value, char *buf, size_t len)
{
	char *text = json_dumps(value, JSON_ENCODE_ANY | JSON_COMPACT);
	snprintf(buf, len, "%.100s", text ? text : "?");
	free(text);
}

/* A real with no fraction (jansson reads 1e15 as a real). */
static bool whole(double v)
{
	return isfinite(v) && v == floor(v);
}

static int get_member_uint(const json_t *obj, const char *name, const char *where, bool required,
			   uint64_t *out, nm_error *err)
{
	const json_t *v = json_object_get(obj, name);
	if (!v) {
		if (required)
			return nm_error_set(err, -EINVAL, "%s: missing \"%s\" (allowed: integer >= 0)",
					    where, name);
		return 1;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		char shown[128];
		show_json(v, shown, sizeof(shown));
		return nm_error_set(err, -EINVAL, "%s.%s: %s is not a non-negative integer", where, name,
				    shown);
	}
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int check_members(const json_t *obj, const char *where, const char *const *allowed,
			 const char *allowed_text, nm_error *err)
{
	const char *name;
	const json_t *v;
	json_object_foreach((json_t *)obj, name, v) {
		bool known = false;
		for (int i = 0; allowed[i]; i++)
			known = known || strcmp(allowed[i], name) == 0;
		if (!known)
			return nm_error_set(err, -EINVAL, "%s: unknown key \"%s\" (allowed: %s)", where,
					    name, allowed_text);
	}
	return 0;
}

/* `form`: an entry as the JSON file writes it (the environment's text form, in the key's
 * "allowed", is not one). */
static int list_entry(const key_spec *spec, const json_t *list, size_t i, const char *form,
		      char *where, size_t where_len, nm_error *err)
{
	const json_t *item = json_array_get(list, i);
	snprintf(where, where_len, "%s[%zu]", spec->info.key, i);
	if (!json_is_object(item)) {
		char shown[128];
		show_json(item, shown, sizeof(shown));
		return nm_error_set(err, -EINVAL, "%s: %s is not an object (allowed: %s)", where, shown,
				    form);
	}
	return 0;
}

static int set_drop_list(nm_config *cfg, const key_spec *spec, const json_t *list, nm_error *err)
{
	static const char *const members[] = {"flow", "nth", NULL};
	nm_scripted_drop drops[NM_CONFIG_MAX_DROPS];
	size_t n = json_array_size(list);
	if (n > NM_CONFIG_MAX_DROPS)
		return config_set_drops(cfg, drops, n, err); /* reports the limit */
	for (size_t i = 0; i < n; i++) {
		char where[KEY_MAX];
		int rc = list_entry(spec, list, i, "{\"flow\": F, \"nth\": N}", where,
				    sizeof(where), err);
		const json_t *item = json_array_get(list, i);
		if (rc || (rc = check_members(item, where, members, "flow, nth", err)) ||
		    (rc = get_member_uint(item, "flow", where, true, &drops[i].flow, err)) ||
		    (rc = get_member_uint(item, "nth", where, true, &drops[i].nth, err)))
			return rc;
	}
	return config_set_drops(cfg, drops, n, err);
}

static int set_fault_list(nm_config *cfg, const key_spec *spec, const json_t *list, nm_error *err)
{
	static const char *const members[] = {"link", "down_ns", "up_ns", NULL};
	nm_link_fault faults[NM_CONFIG_MAX_FAULTS];
	size_t n = json_array_size(list);
	if (n > NM_CONFIG_MAX_FAULTS)
		return config_set_faults(cfg, faults, n, err);
	for (size_t i = 0; i < n; i++) {
		char where[KEY_MAX];
		uint64_t link = 0;
		int rc = list_entry(spec, list, i,
				    "{\"link\": L, \"down_ns\": T[, \"up_ns\": T2]}", where,
				    sizeof(where), err);
		const json_t *item = json_array_get(list, i);
		if (rc || (rc = check_members(item, where, members, "link, down_ns, up_ns", err)) ||
		    (rc = get_member_uint(item, "link", where, true, &link, err)) ||
		    (rc = get_member_uint(item, "down_ns", where, true, &faults[i].down_at, err)))
			return rc;
		if (link > UINT32_MAX)
			return nm_error_set(err, -EINVAL, "%s.link: %" PRIu64 " is out of range", where,
					    link);
		faults[i].link = (uint32_t)link;
		rc = get_member_uint(item, "up_ns", where, false, &faults[i].up_at, err);
		if (rc < 0)
			return rc;
		if (rc == 1)
			faults[i].up_at = NM_TIME_NEVER;
	}
	return config_set_faults(cfg, faults, n, err);
}

static int set_leaf(nm_config *cfg, const key_spec *spec, const json_t *value, nm_error *err)
{
	char shown[128];
	show_json(value, shown, sizeof(shown));
	switch (spec->kind) {
	case KEY_PRESET:
		return 0; /* consumed by nm_config_load */
	case KEY_UINT:
	case KEY_POW2:
	case KEY_REAL:
	case KEY_GBPS:
		if (json_is_integer(value)) {
			if (json_integer_value(value) < 0)
				return nm_error_set(err, -EINVAL, "%s: %s is negative (allowed: %s)",
						    spec->info.key, shown, spec->info.allowed);
			return config_set_uint(cfg, spec, (uint64_t)json_integer_value(value), shown,
					       err);
		}
		/* 1e15, as the allowed range is written, is a whole number too. */
		if (json_is_real(value) && spec->kind != KEY_REAL && spec->kind != KEY_GBPS &&
		    whole(json_real_value(value))) {
			if (json_real_value(value) < 0)
				return nm_error_set(err, -EINVAL, "%s: %s is negative (allowed: %s)",
						    spec->info.key, shown, spec->info.allowed);
			if (json_real_value(value) >= 18446744073709551616.0)
				return nm_error_set(err, -EINVAL, "%s: %s is out of range (allowed: %s)",
						    spec->info.key, shown, spec->info.allowed);
			return config_set_uint(cfg, spec, (uint64_t)json_real_value(value), shown,
					       err);
		}
		if (json_is_real(value) && (spec->kind == KEY_REAL || spec->kind == KEY_GBPS)) {
			if (json_real_value(value) < 0)
				return nm_error_set(err, -EINVAL, "%s: %s is negative (allowed: %s)",
						    spec->info.key, shown, spec->info.allowed);
			return config_set_real(cfg, spec, json_real_value(value), shown, err);
		}
		return config_type_error(spec, shown, err);
	case KEY_ENUM:
		if (!json_is_string(value))
			return config_type_error(spec, shown, err);
		return config_set_enum(cfg, spec, json_string_value(value), err);
	case KEY_DROP_LIST:
		if (!json_is_array(value))
			return config_type_error(spec, shown, err);
		return set_drop_list(cfg, spec, value, err);
	case KEY_FAULT_LIST:
		if (!json_is_array(value))
			return config_type_error(spec, shown, err);
		return set_fault_list(cfg, spec, value, err);
	}
	return -EINVAL;
}

/* Lists the names allowed under `prefix` ("" or "link."): leaf keys and section names, each
 * once, in table order, for an unknown-key message. */
static void keys_under(const char *prefix, char *buf, size_t len)
{
	size_t count, used = 0, plen = strlen(prefix);
	const key_spec *table = config_key_table(&count);
	buf[0] = '\0';
	for (size_t i = 0; i < count && used < len; i++) {
		const char *key = table[i].info.key;
		if (strncmp(key, prefix, plen) != 0)
			continue;
		const char *rest = key + plen;
		const char *dot = strchr(rest, '.');
		int name_len = dot ? (int)(dot - rest) : (int)strlen(rest);
		char name[KEY_MAX];
		snprintf(name, sizeof(name), "%.*s", name_len, rest);
		/* Sections repeat for each of their keys; list the first only. */
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++) {
			const char *other = table[j].info.key;
			seen = strncmp(other, prefix, plen) == 0 &&
			       strncmp(other + plen, name, (size_t)name_len) == 0 &&
			       (other[plen + name_len] == '.' || other[plen + name_len] == '\0');
		}
		if (!seen)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
	}
}

/* Walks an object; `prefix` is "" at the top or "section." below. */
static bool is_foreign(const char *const *foreign, const char *name)
{
	for (; foreign && *foreign; foreign++)
		if (!strcmp(*foreign, name))
			return true;
	return false;
}

/* `foreign`: top-level keys the caller reads itself (NULL: none). */
static int apply_object(nm_config *cfg, const json_t *obj, const char *prefix,
			const char *const *foreign, nm_error *err)
{
	const char *name;
	const json_t *value;
	json_object_foreach((json_t *)obj, name, value) {
		char key[KEY_MAX];
		if (!prefix[0] && is_foreign(foreign, name))
			continue;
		snprintf(key, sizeof(key), "%s%s", prefix, name);
		const key_spec *spec = config_find_key(key);
		if (spec) {
			int rc = set_leaf(cfg, spec, value, err);
			if (rc)
				return rc;
			continue;
		}
		char section[KEY_MAX + 1];
		snprintf(section, sizeof(section), "%s.", key);
		char known[512];
		keys_under(section, known, sizeof(known));
		if (known[0] && json_is_object(value)) {
			int rc = apply_object(cfg, value, section, NULL, err);
			if (rc)
				return rc;
			continue;
		}
		if (known[0]) {
			char shown[128];
			show_json(value, shown, sizeof(shown));
			return nm_error_set(err, -EINVAL,
					    "%s: %s has the wrong type (allowed: an object with %s)", key,
					    shown, known);
		}
		keys_under(prefix, known, sizeof(known));
		for (const char *const *f = foreign; !prefix[0] && f && *f; f++) {
			size_t used = strlen(known);
			snprintf(known + used, sizeof(known) - used, ", %s", *f);
		}
		return nm_error_set(err, -EINVAL, "unknown key \"%s\" (allowed%s%.*s: %s)", key,
				    prefix[0] ? " in " : " at top level", (int)(prefix[0] ? strlen(prefix) - 1 : 0),
				    prefix, known);
	}
	return 0;
}

int nm_config_file_usable(const char *path, nm_error *err)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		int e = errno;

		return nm_error_set(err, -e, "config file %s: cannot be opened: %s", path,
				    strerror(e));
	}
	if (!S_ISREG(st.st_mode))
		return nm_error_set(err, -EINVAL,
				    "config file %s: is a %s, not a JSON file", path,
				    S_ISDIR(st.st_mode)    ? "directory" :
				    S_ISFIFO(st.st_mode)   ? "pipe" :
				    S_ISSOCK(st.st_mode)   ? "socket" : "device");
	if (access(path, R_OK) != 0) {
		int e = errno;

		return nm_error_set(err, -e, "config file %s: cannot be opened: %s", path,
				    strerror(e));
	}
	return 0;
}

int config_json_parse(const char *json_text, const char *path, struct json_t **root_out,
		      nm_error *err)
{
	json_error_t jerr;
	json_t *root;
	int ret;

	if (!json_text && (ret = nm_config_file_usable(path, err)))
		return ret;
	root = json_text ? json_loads(json_text, JSON_REJECT_DUPLICATES, &jerr)
			 : json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		return nm_error_set(err, -EINVAL, "config %s%s: line %d, column %d: %s",
				    json_text ? "JSON" : "file ", json_text ? "" : path, jerr.line,
				    jerr.column, jerr.text);
	}
	if (!json_is_object(root)) {
		char shown[128];
		show_json(root, shown, sizeof(shown));
		json_decref(root);
		return nm_error_set(err, -EINVAL, "config JSON: %s is not an object", shown);
	}
	*root_out = root;
	return 0;
}

void config_json_free(struct json_t *root)
{
	json_decref(root);
}

int config_json_preset(const struct json_t *root, const char **name, nm_error *err)
{
	const json_t *preset = json_object_get(root, "preset");
	*name = NULL;
	if (!preset)
		return 0;
	if (!json_is_string(preset)) {
		char shown[128];
		show_json(preset, shown, sizeof(shown));
		return nm_error_set(err, -EINVAL,
				    "preset: %s has the wrong type (allowed: string ideal, roce-25g, "
				    "roce-100g, ib-hdr-200g, ib-ndr-400g)",
				    shown);
	}
	*name = json_string_value(preset);
	return 0;
}

int config_json_apply(nm_config *cfg, const struct json_t *root, const char *const *foreign,
		      nm_error *err)
{
	return apply_object(cfg, root, "", foreign, err);
}

static int apply_parsed(nm_config *cfg, const char *json_text, const char *path, nm_error *err)
{
	json_t *root;
	int rc = config_json_parse(json_text, path, &root, err);
	if (rc)
		return rc;
	rc = config_json_apply(cfg, root, NULL, err);
	json_decref(root);
	return rc;
}

int nm_config_apply_json_text(nm_config *cfg, const char *json_text, nm_error *err)
{
	return apply_parsed(cfg, json_text, NULL, err);
}

int nm_config_apply_json_file(nm_config *cfg, const char *path, nm_error *err)
{
	return apply_parsed(cfg, NULL, path, err);
}
