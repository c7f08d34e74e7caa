/* SPDX-License-Identifier: BSD-2-Clause
 * The provider registry: built-in providers register an init function from a
 * constructor; the core initialises them on first use. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core_private.h"

enum { MAX_PROVIDERS = 32 };

static fabsim_provider_ini_fn registered[MAX_PROVIDERS];
static size_t registered_count;
static size_t registered_overflow;

static struct fi_provider *active[MAX_PROVIDERS];
static size_t active_count;

struct fi_provider fabsim_core_prov = {
	.version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
	.fi_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
	.name = "core",
};

void fabsim_provider_register(fabsim_provider_ini_fn ini)
{
	/* Constructors run before main, on one thread. */
	if (registered_count == MAX_PROVIDERS) {
		registered_overflow++;
		return;
	}
	registered[registered_count++] = ini;
}

static int by_name(const void *a, const void *b)
{
	const struct fi_provider *pa = *(struct fi_provider *const *)a;
	const struct fi_provider *pb = *(struct fi_provider *const *)b;

	return strcasecmp(pa->name, pb->name);
}

static void define_core_params(void)
{
	fi_param_define(&fabsim_core_prov, "provider", FI_PARAM_STRING,
			"Only use the listed providers: a comma-separated list, "
			"or ^list to exclude (default: all available)");
	fi_param_define(&fabsim_core_prov, "log_level", FI_PARAM_STRING,
			"Most verbose level to log: warn, trace, info, debug "
			"(default: warn)");
	fi_param_define(&fabsim_core_prov, "log_prov", FI_PARAM_STRING,
			"Log only these providers: a list, or ^list to exclude "
			"(default: all)");
	fi_param_define(&fabsim_core_prov, "log_subsys", FI_PARAM_STRING,
			"Log only these subsystems (core, fabric, domain, "
			"ep_ctrl, ep_data, av, cq, eq, mr, cntr): a list, or "
			"^list to exclude (default: all)");
}

static void init_providers(void)
{
	char *filter = NULL;

	fi_param_get_str(&fabsim_core_prov, "provider", &filter);
	for (size_t i = 0; i < registered_count; i++) {
		struct fi_provider *prov = registered[i]();

		if (!prov || !prov->name || !prov->getinfo || !prov->fabric) {
			FI_WARN(&fabsim_core_prov, FI_LOG_CORE,
				"built-in provider #%zu did not initialise; "
				"skipped\n", i);
			continue;
		}
		if (!fabsim_name_list_match(filter, prov->name)) {
			FI_INFO(&fabsim_core_prov, FI_LOG_CORE,
				"provider %s excluded by FI_PROVIDER=%s\n",
				prov->name, filter);
			continue;
		}
		active[active_count++] = prov;
	}
	qsort(active, active_count, sizeof(active[0]), by_name);
	if (registered_overflow)
		FI_WARN(&fabsim_core_prov, FI_LOG_CORE,
			"%zu providers over the limit of %d were ignored\n",
			registered_overflow, MAX_PROVIDERS);
}

static void core_init_once(void)
{
	fabsim_log_init();
	define_core_params();
	init_providers();
}

void fabsim_core_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, core_init_once);
}

size_t fabsim_provider_count(void)
{
	return active_count;
}

struct fi_provider *fabsim_provider_at(size_t i)
{
	return i < active_count ? active[i] : NULL;
}

struct fi_provider *fabsim_provider_find(const char *name)
{
	for (size_t i = 0; name && i < active_count; i++)
		if (!strcasecmp(active[i]->name, name))
			return active[i];
	return NULL;
}

__attribute__((destructor)) static void core_fini(void)
{
	for (size_t i = 0; i < active_count; i++)
		if (active[i]->cleanup)
			active[i]->cleanup();
}
