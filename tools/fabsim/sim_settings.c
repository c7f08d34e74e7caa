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

/* The top-level keys of the JSON file that are the provider's: the
 * parameters whose help names them as such. */
#define PROVIDER_KEYS_MAX 16

struct provider_keys {
	char        names[PROVIDER_KEYS_MAX][64];
	const char *list[PROVIDER_KEYS_MAX + 1]; /* NULL-ended */
};

static void find_provider_keys(const struct fi_param *params, int count,
			       struct provider_keys *k)
{
	size_t n = 0;

	for (int i = 0; i < count && n < PROVIDER_KEYS_MAX; i++) {
		char *key = k->names[n];

		if (strncmp(params[i].name, "FI_SIM_", 7))
			continue;
		snprintf(key, sizeof(k->names[n]), "%s", params[i].name + 7);
		for (char *c = key; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		if (provider_key(params, count, key))
			k->list[n++] = key;
	}
	k->list[n] = NULL;
}

int sim_settings_load(nm_config *cfg, nm_env_lookup_fn lookup, void *ctx,
		      nm_error *err)
{
	const char *path = getenv("FI_SIM_CONFIG");
	struct fi_param *params = NULL;
	struct provider_keys keys;
	int count = 0, ret;

	if (fi_getparams(&params, &count))
		return nm_error_set(err, -ENOMEM, "cannot list the library's "
				    "parameters (fi_getparams)");
	ret = check_variables(params, count, err);
	find_provider_keys(params, count, &keys);
	fi_freeparams(params);
	if (ret)
		return ret;
	return nm_config_load_sharing(cfg, path && *path ? path : NULL,
				      keys.list, lookup, ctx, err);
}
