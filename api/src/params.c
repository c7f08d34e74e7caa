/* SPDX-License-Identifier: BSD-2-Clause
 * Configuration parameters (fi_getparams(3), fi_param_define/fi_param_get).
 *
 * A parameter is an environment variable FI_<PROV>_<NAME>, upper-cased; the
 * core's own parameters are plain FI_<NAME>. Values are read from the
 * environment each time they are asked for, so a test can change them.
 */
#define _GNU_SOURCE /* vasprintf */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core_private.h"

struct param_def {
	const struct fi_provider *prov;
	char                     *env_name;
	enum fi_param_type        type;
	char                     *help;
	struct param_def         *next;
};

static struct param_def *params_head, **params_tail = &params_head;
static int params_count;
static pthread_mutex_t params_lock = PTHREAD_MUTEX_INITIALIZER;

static char *env_name_of(const struct fi_provider *prov, const char *name)
{
	const char *prefix = prov == &fabsim_core_prov ? "" : prov->name;
	size_t len = 3 + strlen(prefix) + 1 + strlen(name) + 1;
	char *env = malloc(len);

	if (!env)
		return NULL;
	if (*prefix)
		snprintf(env, len, "FI_%s_%s", prefix, name);
	else
		snprintf(env, len, "FI_%s", name);
	for (char *c = env; *c; c++)
		*c = (char)(*c == '-' ? '_' : toupper((unsigned char)*c));
	return env;
}

static struct param_def *find_locked(const char *env_name)
{
	for (struct param_def *p = params_head; p; p = p->next)
		if (!strcmp(p->env_name, env_name))
			return p;
	return NULL;
}

int fi_param_define(const struct fi_provider *provider, const char *param_name,
		    enum fi_param_type type, const char *help_string_fmt, ...)
{
	struct param_def *def;
	va_list ap;
	int ret = 0;

	if (!provider || !provider->name || !param_name || !*param_name ||
	    type < FI_PARAM_STRING || type > FI_PARAM_SIZE_T)
		return -FI_EINVAL;
	def = calloc(1, sizeof(*def));
	if (!def)
		return -FI_ENOMEM;
	def->prov = provider;
	def->type = type;
	def->env_name = env_name_of(provider, param_name);
	if (help_string_fmt) {
		va_start(ap, help_string_fmt);
		if (vasprintf(&def->help, help_string_fmt, ap) < 0)
			def->help = NULL;
		va_end(ap);
	}
	if (!def->env_name || (help_string_fmt && !def->help)) {
		free(def->env_name);
		free(def->help);
		free(def);
		return -FI_ENOMEM;
	}

	pthread_mutex_lock(&params_lock);
	if (find_locked(def->env_name)) {
		ret = -FI_EALREADY;
	} else {
		*params_tail = def;
		params_tail = &def->next;
		params_count++;
	}
	pthread_mutex_unlock(&params_lock);

	if (ret) {
		FI_INFO(provider, FI_LOG_CORE, "parameter %s already defined\n",
			def->env_name);
		free(def->env_name);
		free(def->help);
		free(def);
	}
	return ret;
}

/* Accepts the spellings fi_info -e advertises for booleans. */
static int parse_bool(const char *s, int *out)
{
	static const char *const truths[] = { "1", "on", "true", "yes", "y" };
	static const char *const lies[] = { "0", "off", "false", "no", "n" };

	for (size_t i = 0; i < count_of(truths); i++) {
		if (!strcasecmp(s, truths[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(s, lies[i])) {
			*out = 0;
			return 0;
		}
	}
	return -FI_EINVAL;
}

static int parse_value(const struct param_def *def, const char *str,
		       void *value)
{
	char *end;
	long long num;
	unsigned long long unum;

	switch (def->type) {
	case FI_PARAM_STRING:
		*(char **)value = (char *)str;
		return 0;
	case FI_PARAM_BOOL:
		return parse_bool(str, (int *)value);
	case FI_PARAM_INT:
		errno = 0;
		num = strtoll(str, &end, 0);
		if (errno || end == str || *end || num < INT32_MIN ||
		    num > INT32_MAX)
			return -FI_EINVAL;
		*(int *)value = (int)num;
		return 0;
	case FI_PARAM_SIZE_T:
		errno = 0;
		unum = strtoull(str, &end, 0);
		if (errno || end == str || *end || strchr(str, '-'))
			return -FI_EINVAL;
		*(size_t *)value = (size_t)unum;
		return 0;
	}
	return -FI_EINVAL;
}

static const char *type_words(enum fi_param_type type)
{
	switch (type) {
	case FI_PARAM_STRING: return "a string";
	case FI_PARAM_INT: return "an integer";
	case FI_PARAM_BOOL: return "a boolean (0/1, on/off, true/false, yes/no)";
	case FI_PARAM_SIZE_T: return "a non-negative integer";
	}
	return "?";
}

int fi_param_get(struct fi_provider *provider, const char *param_name,
		 void *value)
{
	struct param_def *def;
	char *env_name;
	const char *str;
	int ret;

	if (!provider || !provider->name || !param_name || !value)
		return -FI_EINVAL;
	env_name = env_name_of(provider, param_name);
	if (!env_name)
		return -FI_ENOMEM;

	pthread_mutex_lock(&params_lock);
	def = find_locked(env_name);
	pthread_mutex_unlock(&params_lock);

	if (!def) {
		FI_WARN(provider, FI_LOG_CORE,
			"%s was read but never defined with fi_param_define\n",
			env_name);
		free(env_name);
		return -FI_ENOENT;
	}
	str = getenv(env_name);
	if (!str) {
		FI_INFO(provider, FI_LOG_CORE, "variable %s=<not set>\n",
			env_name);
		free(env_name);
		return -FI_ENODATA;
	}
	ret = parse_value(def, str, value);
	if (ret)
		FI_WARN(provider, FI_LOG_CORE,
			"%s=\"%s\": the value must be %s\n", env_name,
			str, type_words(def->type));
	else
		FI_INFO(provider, FI_LOG_CORE, "read %s=%s\n", env_name, str);
	free(env_name);
	return ret;
}

int fi_getparams(struct fi_param **params, int *count)
{
	struct fi_param *list;
	struct param_def *def;
	int i = 0;

	if (!params || !count)
		return -FI_EINVAL;
	fabsim_core_init();

	pthread_mutex_lock(&params_lock);
	list = calloc((size_t)params_count + 1, sizeof(*list));
	for (def = params_head; list && def; def = def->next, i++) {
		const char *value = getenv(def->env_name);

		list[i].name = strdup(def->env_name);
		list[i].type = def->type;
		list[i].help_string = strdup(def->help ? def->help : "");
		list[i].value = value ? strdup(value) : NULL;
		if (!list[i].name || !list[i].help_string ||
		    (value && !list[i].value)) {
			/* Keep the array NULL-terminated for fi_freeparams. */
			free((char *)list[i].name);
			free((char *)list[i].help_string);
			free((char *)list[i].value);
			memset(&list[i], 0, sizeof(list[i]));
			break;
		}
	}
	pthread_mutex_unlock(&params_lock);

	if (!list)
		return -FI_ENOMEM;
	if (def) {
		fi_freeparams(list);
		return -FI_ENOMEM;
	}
	*params = list;
	*count = i;
	return 0;
}

void fi_freeparams(struct fi_param *params)
{
	if (!params)
		return;
	/* The array ends with an entry whose name is NULL. */
	for (struct fi_param *p = params; p->name; p++) {
		free((char *)p->name);
		free((char *)p->help_string);
		free((char *)p->value);
	}
	free(params);
}
