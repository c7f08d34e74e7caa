/* SPDX-License-Identifier: BSD-2-Clause
 * `fabsim demo`: what the README's first command shows. It grows with the
 * project; today: the providers and parameters libfabric.so.1 offers, the
 * network model on the default preset next to a faster one, the
 * getting-started walkthrough (examples/walkthrough.c) on the simulated
 * NIC, and four nodes exchanging traffic with loss, recorded to a pcap
 * (demo_traffic.c). */
#include <stdlib.h>
#include <string.h>

#include "commands.h"

/* examples/walkthrough.c, built without its main(). */
int walkthrough(int argc, char **argv);

/* The steps, in order; the first that fails ends the tour. */
static int demo_steps(FILE *out)
{
	char *model_args[] = { "model", NULL, NULL, NULL };
	char preset_flag[] = "--preset";
	char preset_name[] = "ib-ndr-400g";
	int ret;

	fprintf(out, "== fabsim demo ==\n\n-- 1. providers (fabsim info) --\n");
	ret = cmd_info(1, (char *[]){ "info", NULL }, out);
	if (ret)
		return ret;
	fprintf(out, "\n-- 2. the network model in force (fabsim model) --\n");
	ret = cmd_model(1, model_args, out);
	if (ret)
		return ret;
	fprintf(out, "\n-- 3. the same on InfiniBand NDR (fabsim model "
		     "--preset ib-ndr-400g) --\n");
	model_args[1] = preset_flag;
	model_args[2] = preset_name;
	ret = cmd_model(3, model_args, out);
	if (ret)
		return ret;
	fprintf(out, "\n-- 4. a libfabric program on the simulated NIC: the "
		     "getting-started walkthrough (examples/walkthrough.c), "
		     "server and client on two threads --\n");
	fflush(out);
	setenv("FI_PROVIDER", "sim", 0);
	ret = walkthrough(1, (char *[]){ "walkthrough", NULL });
	fflush(stdout);
	if (ret)
		return ret;
	fprintf(out, "\n-- 5. four nodes on the simulated network, through "
		     "libfabric: latency per size, then all-to-all traffic "
		     "with 1%% loss, recorded --\n");
	ret = demo_traffic(out);
	fprintf(out, "\nTry: FI_SIM_PRESET=roce-25g fabsim demo, fabsim run "
		     "--virtual-clock -- YOUR_PROGRAM, or fi_info -v with "
		     "LD_LIBRARY_PATH pointing at fabsim's lib (README.md).\n");
	return ret;
}

int cmd_demo(int argc, char **argv, FILE *out)
{
	int ret;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fprintf(out, "usage: fabsim demo\n\nA tour on built-in "
			"defaults: the providers, the network model, a\n"
			"libfabric program on the simulated NIC, then four "
			"nodes exchanging traffic\nwith loss, recorded as a "
			"pcap trace. FI_SIM_* variables change the model.\n");
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "fabsim demo: unexpected argument \"%s\" "
			"(usage: fabsim demo)\n", argv[1]);
		return 2;
	}
	ret = demo_steps(out);
	/* An exit status, not an errno a step may have returned. */
	return ret < 0 ? 1 : ret;
}
