/* SPDX-License-Identifier: BSD-2-Clause */
#include <string.h>
#include <strings.h>

#include "core_private.h"

static bool list_contains(const char *list, const char *name)
{
	size_t name_len = strlen(name);

	while (*list) {
		size_t len = strcspn(list, ",");

		if (len == name_len && !strncasecmp(list, name, len))
			return true;
		list += len;
		if (*list == ',')
			list++;
	}
	return false;
}

bool fabsim_name_list_match(const char *list, const char *name)
{
	if (!list || !*list)
		return true;
	if (!name)
		return false;
	if (*list == '^')
		return !list_contains(list + 1, name);
	return list_contains(list, name);
}
