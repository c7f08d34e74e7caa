/* SPDX-License-Identifier: BSD-2-Clause
 * The network model as the sim provider would load it, for `fabsim model`
 * and `fabsim run`'s check before the program starts.
 *
 * The provider takes more than the model: its own parameters (FI_SIM_PCAP,
 * FI_SIM_FABRIC, ...), some of them also top-level keys of the JSON file
 * ("pcap", ...), and refuses any other FI_SIM_* variable. Which ones exist
 * is asked of the library (fi_getparams), so that this file lists none of
 * them; the provider checks their values when it loads. */
#include <ctype.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>

#include "sim_settings.h"

extern char **environ;

/* FI_SIM_<upper(key)> */
static void env_name_of(const char *key, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "FI_SIM_%s", key);

	for (size_t i = 0; i < n && i < len; i++)
		buf[i] = (char)toupper((unsigned char)buf[i]);
}

static bool is_param(const struct fi_param *params, int count,
		     const char *name)
{
	for (int i = 0; i < count; i++)
		if (!strcmp(params[i].name, name))
			return true;
	return false;
}

/* A top-level JSON key that the provider takes itself, not the model: its
 * parameter's help says so ("also the JSON key \"pcap\""). */
static bool provider_key(const struct fi_param *params, int count,
			 const char *key)
{
	char name[128], phrase[160];

	env_name_of(key, name, sizeof(name));
	snprintf(phrase, sizeof(phrase), "JSON key \"%s\"", key);
	for (int i = 0; i < count; i++)
		if (!strcmp(params[i].name, name))
			return params[i].help_string &&
			       strstr(params[i].help_string, phrase);
	return false;
}

static int check_variables(const struct fi_param *params, int count,
			   nm_error *err)
{
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
		char name[128];

		if (strncmp(*e, "FI_SIM_", 7) || len >= sizeof(name))
			continue;
		memcpy(name, *e, len);
		name[len] = '\0';
		if (!is_param(params, count, name))
			return nm_error_set(err, -EINVAL, "%s is not a sim "
					    "parameter (fabsim info lists "
					    "them)", name);
	}
	return 0;
}

/* The JSON file without the provider's own keys: *text is NULL when it has
 * none of them (or is not a JSON object: the model's loader says why). */
static int model_part(const char *path, const struct fi_param *params,
		      int count, char **text)
{
	json_error_t jerr;
	json_t *root;
	const char *key;
	json_t *value;
	void *tmp;
	bool taken = false;
	nm_error unusable;

	*text = NULL;
	if (nm_config_file_usable(path, &unusable))
		return 0;
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!root || !json_is_object(root)) {
		json_decref(root);
		return 0;
	}
	json_object_foreach_safe(root, tmp, key, value) {
		if (provider_key(params, count, key)) {
			json_object_del(root, key);
			taken = true;
		}
	}
	if (taken && !(*text = json_dumps(root, JSON_COMPACT))) {
		json_decref(root);
		return -ENOMEM;
	}
	json_decref(root);
	return 0;
}

int sim_settings_load(nm_config *cfg, nm_env_lookup_fn lookup, void *ctx,
		      nm_error *err)
{
	const char *path = getenv("FI_SIM_CONFIG");
	struct fi_param *params = NULL;
	char *text = NULL;
	int count = 0, ret;

	if (fi_getparams(&params, &count))
		return nm_error_set(err, -ENOMEM, "cannot list the library's "
				    "parameters (fi_getparams)");
	ret = check_variables(params, count, err);
	if (!ret && path && *path)
		ret = model_part(path, params, count, &text);
	fi_freeparams(params);
	if (ret)
		return ret == -ENOMEM ? nm_error_set(err, ret, "out of memory")
				      : ret;
	bool as_text = text != NULL;

	ret = text ? nm_config_load_text(cfg, text, lookup, ctx, err)
		   : nm_config_load(cfg, path && *path ? path : NULL, lookup,
				    ctx, err);
	free(text);
	/* The model's part of the file, given as text: named here (an error
	 * of the environment's values names its variable already). */
	if (ret && as_text && err && strncmp(err->msg, "FI_SIM_", 7)) {
		char msg[sizeof(err->msg)];

		snprintf(msg, sizeof(msg), "%s", err->msg);
		nm_error_set(err, ret, "config file %s: %s", path, msg);
	}
	return ret;
}
