/* SPDX-License-Identifier: BSD-2-Clause
 * fi_getinfo(3): asks every selected provider what it offers and keeps what
 * matches the hints (info_match.c). Also the current-ABI fi_dupinfo and
 * fi_freeinfo. */
#include <stdlib.h>
#include <string.h>

#include "core_private.h"
#include "info_alloc.h"
#include "info_match.h"

struct fi_info *fi_dupinfo(const struct fi_info *info)
{
	return fabsim_dupinfo(info);
}

void fi_freeinfo(struct fi_info *info)
{
	fabsim_freeinfo(info);
}

static int stamp_provider(struct fi_info *info, const struct fi_provider *prov)
{
	char *name = strdup(prov->name);

	if (!name)
		return -FI_ENOMEM;
	free(info->fabric_attr->prov_name);
	info->fabric_attr->prov_name = name;
	info->fabric_attr->prov_version = prov->version;
	return 0;
}

/* FI_PROV_ATTR_ONLY: one entry of defaults per provider, usable or not. */
static int provider_stub(const struct fi_provider *prov, uint32_t version,
			 struct fi_info ***tail)
{
	struct fi_info *info = fabsim_dupinfo(NULL);

	if (!info)
		return -FI_ENOMEM;
	if (stamp_provider(info, prov)) {
		fabsim_freeinfo(info);
		return -FI_ENOMEM;
	}
	info->fabric_attr->api_version = version;
	**tail = info;
	*tail = &info->next;
	return 0;
}

/* Appends the provider's matching entries at *tail. */
static int ask_provider(struct fi_provider *prov, uint32_t version,
			const char *node, const char *service, uint64_t flags,
			const struct fi_info *hints, struct fi_info ***tail)
{
	struct fi_info *offers = NULL, *offer, *match;
	char why[256];
	int ret;

	ret = prov->getinfo(version, node, service, flags, hints, &offers);
	if (ret) {
		FI_INFO(&fabsim_core_prov, FI_LOG_CORE,
			"provider %s offers nothing here: %s\n", prov->name,
			fi_strerror(-ret));
		return ret == -FI_ENOMEM ? ret : 0;
	}
	for (offer = offers; offer; offer = offer->next) {
		ret = fabsim_info_match(version, offer, hints, &match, why,
					sizeof(why));
		if (ret == -FI_ENODATA) {
			FI_INFO(&fabsim_core_prov, FI_LOG_CORE,
				"%s entry skipped: %s\n", prov->name, why);
			continue;
		}
		if (!ret)
			ret = stamp_provider(match, prov);
		if (ret) {
			fabsim_freeinfo(offers);
			return ret;
		}
		**tail = match;
		*tail = &match->next;
	}
	fabsim_freeinfo(offers);
	return 0;
}

int fi_getinfo(uint32_t version, const char *node, const char *service,
	       uint64_t flags, const struct fi_info *hints,
	       struct fi_info **info)
{
	struct fi_info *head = NULL, **tail = &head;
	const char *prov_filter = NULL;
	char why[256];
	int ret;

	if (!info) {
		FI_WARN(&fabsim_core_prov, FI_LOG_CORE,
			"fi_getinfo: info must not be NULL\n");
		return -FI_EINVAL;
	}
	*info = NULL;
	fabsim_core_init();
	ret = fabsim_hints_check(version, node, service, flags, hints, why,
				 sizeof(why));
	if (ret) {
		FI_WARN(&fabsim_core_prov, FI_LOG_CORE, "fi_getinfo: %s\n",
			why);
		return ret;
	}
	if (hints && hints->fabric_attr)
		prov_filter = hints->fabric_attr->prov_name;

	for (size_t i = 0; i < fabsim_provider_count() && !ret; i++) {
		struct fi_provider *prov = fabsim_provider_at(i);

		if (!fabsim_name_list_match(prov_filter, prov->name))
			continue;
		if (prov->fi_version < version) {
			FI_INFO(&fabsim_core_prov, FI_LOG_CORE,
				"provider %s implements API %u.%u only\n",
				prov->name, FI_MAJOR(prov->fi_version),
				FI_MINOR(prov->fi_version));
			continue;
		}
		if (flags & FI_PROV_ATTR_ONLY)
			ret = provider_stub(prov, version, &tail);
		else
			ret = ask_provider(prov, version, node, service, flags,
					   hints, &tail);
	}
	if (ret) {
		fabsim_freeinfo(head);
		return ret;
	}
	if (!head)
		return -FI_ENODATA;
	*info = head;
	return 0;
}
