/* SPDX-License-Identifier: BSD-2-Clause
 * fi_verbs(7)'s runtime parameters that shape what fi_getinfo offers: the
 * default sizes and limits (never more than the device has), and which
 * device. Unset, an offer is the device's own. */
#include <string.h>

#include "verbs.h"

static const struct {
	const char *name;
	const char *help;
} size_params[] = {
	{ "tx_size", "Default maximum tx context size (default: the device's)" },
	{ "rx_size", "Default maximum rx context size (default: the device's)" },
	{ "tx_iov_limit", "Default maximum tx iov_limit (default: the device's)" },
	{ "rx_iov_limit", "Default maximum rx iov_limit (default: the device's)" },
	{ "inline_size", "Default maximum inline size (default: the device's)" },
};

void vrb_params_define(void)
{
	for (size_t i = 0; i < sizeof(size_params) / sizeof(size_params[0]); i++)
		fi_param_define(&vrb_prov, size_params[i].name, FI_PARAM_SIZE_T,
				"%s", size_params[i].help);
	fi_param_define(&vrb_prov, "device_name", FI_PARAM_STRING,
			"Specify a specific verbs device to use by name");
}

/* *field lowered to the parameter `name`, when it is set. */
static void lower_to(const char *name, size_t *field)
{
	size_t v;

	if (!fi_param_get_size_t(&vrb_prov, name, &v) && v < *field)
		*field = v;
}

void vrb_params_apply(struct fi_info *info)
{
	lower_to("tx_size", &info->tx_attr->size);
	lower_to("rx_size", &info->rx_attr->size);
	lower_to("tx_iov_limit", &info->tx_attr->iov_limit);
	lower_to("rx_iov_limit", &info->rx_attr->iov_limit);
	lower_to("inline_size", &info->tx_attr->inject_size);
}

bool vrb_params_device_wanted(const char *name)
{
	char *wanted = NULL;

	return fi_param_get_str(&vrb_prov, "device_name", &wanted) || !wanted ||
	       !*wanted || !strcmp(wanted, name);
}
