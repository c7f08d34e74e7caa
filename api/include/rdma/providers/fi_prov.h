/* SPDX-License-Identifier: BSD-2-Clause
 * fabsim — libfabric 1.x compatible provider interface.
 *
 * A provider is a descriptor: its name and version, a getinfo that lists what
 * it offers, a fabric constructor and a cleanup hook. The core knows providers
 * only through this structure.
 */
#ifndef FI_PROV_H
#define FI_PROV_H

#include <rdma/fabric.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A provider built as a separate library is named lib<name>-fi.so and
 * exports fi_prov_ini() (declared with FI_EXT_INI). */
#define FI_LIB_EXTENSION "fi"
#define FI_LIB_SUFFIX    FI_LIB_EXTENSION ".so"

#define FI_EXT_INI \
	__attribute__((visibility("default"), EXTERNALLY_VISIBLE)) \
	struct fi_provider *fi_prov_ini(void)

struct fi_provider {
	uint32_t          version;    /* provider's own version */
	uint32_t          fi_version; /* API version it implements */
	struct fi_context context;    /* reserved for the core */
	const char       *name;
	int (*getinfo)(uint32_t version, const char *node, const char *service,
		       uint64_t flags, const struct fi_info *hints,
		       struct fi_info **info);
	int (*fabric)(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		      void *context);
	void (*cleanup)(void);
};

/* Declares FI_<PROV>_<NAME> (upper-cased) for fi_getparams and fi_info -e. */
int fi_param_define(const struct fi_provider *provider, const char *param_name,
		    enum fi_param_type type, const char *help_string_fmt, ...);

/* Reads a defined parameter from the environment into *value (char **, int *,
 * int * or size_t * by type). Returns -FI_ENODATA when it is not set. */
int fi_param_get(struct fi_provider *provider, const char *param_name,
		 void *value);

static inline int fi_param_get_str(struct fi_provider *provider,
				   const char *param_name, char **value)
{
	return fi_param_get(provider, param_name, value);
}

static inline int fi_param_get_int(struct fi_provider *provider,
				   const char *param_name, int *value)
{
	return fi_param_get(provider, param_name, value);
}

static inline int fi_param_get_bool(struct fi_provider *provider,
				    const char *param_name, int *value)
{
	return fi_param_get(provider, param_name, value);
}

static inline int fi_param_get_size_t(struct fi_provider *provider,
				      const char *param_name, size_t *value)
{
	return fi_param_get(provider, param_name, value);
}

#ifdef __cplusplus
}
#endif

#endif /* FI_PROV_H */
