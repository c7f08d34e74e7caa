/* SPDX-License-Identifier: BSD-2-Clause
 * `fabsim info`: what libfabric.so.1 offers — providers, their entries and
 * the parameters that configure them — asked through the public API only. */
#include <stdbool.h>
#include <string.h>

#include <rdma/fabric.h>

#include "commands.h"

/* Lists what the provider offers; false when it offers nothing here. */
static bool list_entries(FILE *out, const char *prov_name)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	int ret;

	hints->fabric_attr->prov_name = strdup(prov_name);
	hints->mode = ~0ULL;
	hints->domain_attr->mr_mode = ~(FI_MR_BASIC | FI_MR_SCALABLE);
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	if (ret) {
		fprintf(out, "    not usable here: %s\n", fi_strerror(-ret));
	}
	for (struct fi_info *cur = info; cur; cur = cur->next) {
		char type[32], caps[512], mr[128];

		fi_tostr_r(type, sizeof(type), &cur->ep_attr->type,
			   FI_TYPE_EP_TYPE);
		fi_tostr_r(caps, sizeof(caps), &cur->caps, FI_TYPE_CAPS);
		fi_tostr_r(mr, sizeof(mr), &cur->domain_attr->mr_mode,
			   FI_TYPE_MR_MODE);
		fprintf(out, "    %s on %s/%s, mr_mode [%s]\n      caps %s\n",
			type, cur->fabric_attr->name, cur->domain_attr->name,
			mr, caps);
	}
	fi_freeinfo(info);
	fi_freeinfo(hints);
	return ret == 0;
}

static void list_params(FILE *out)
{
	struct fi_param *params;
	int count;

	if (fi_getparams(&params, &count))
		return;
	fprintf(out, "\nparameters (environment variables):\n");
	for (int i = 0; i < count; i++)
		fprintf(out, "  %-28s %s%s%s\n", params[i].name,
			params[i].help_string,
			params[i].value ? " = " : "",
			params[i].value ? params[i].value : "");
	fi_freeparams(params);
}

int cmd_info(int argc, char **argv, FILE *out)
{
	struct fi_info *provs = NULL;
	int ret;

	bool sim_usable = true;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fprintf(out, "usage: fabsim info\n\nLists the providers of "
			"fabsim's libfabric.so.1, what each offers here, and\n"
			"the parameters (FI_* variables) that configure them, "
			"with the values set.\nExit status 1 when the sim "
			"provider refuses the settings in force.\n");
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "fabsim info: unexpected argument \"%s\" "
			"(usage: fabsim info)\n", argv[1]);
		return 2;
	}
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, FI_PROV_ATTR_ONLY,
			 NULL, &provs);
	if (ret) {
		fprintf(stderr, "fabsim info: no providers: %s\n",
			fi_strerror(-ret));
		return 1;
	}
	fprintf(out, "libfabric API %d.%d (fabsim), providers:\n",
		FI_MAJOR_VERSION, FI_MINOR_VERSION);
	for (struct fi_info *p = provs; p; p = p->next) {
		fprintf(out, "  %s %u.%u\n", p->fabric_attr->prov_name,
			FI_MAJOR(p->fabric_attr->prov_version),
			FI_MINOR(p->fabric_attr->prov_version));
		/* A NIC-less machine has no verbs devices; the simulated NIC
		 * is always there, unless the settings are refused. */
		if (!list_entries(out, p->fabric_attr->prov_name) &&
		    !strcmp(p->fabric_attr->prov_name, "sim"))
			sim_usable = false;
	}
	fi_freeinfo(provs);
	list_params(out);
	if (!sim_usable) {
		fprintf(stderr, "fabsim info: the sim provider refuses these "
			"settings (its warning above says why)\n");
		return 1;
	}
	return 0;
}
