/* SPDX-License-Identifier: BSD-2-Clause
 * fabsim: the project's command line. `fabsim help` lists the commands. */
#include <stdio.h>
#include <string.h>

#include <rdma/fabric.h>

#include "commands.h"

static const struct fabsim_command commands[] = {
	{ "demo", "", "a tour: providers, the model, a program, traffic and its trace",
	  cmd_demo },
	{ "fabric", "start|stop|status [NAME]",
	  "a shared fabric's coordinator: start, stop, who is attached",
	  cmd_fabric },
	{ "info", "", "providers and their parameters, through libfabric",
	  cmd_info },
	{ "model", "[--preset NAME]",
	  "the network model in force and its latency/bandwidth per size",
	  cmd_model },
	{ "run", "[OPTIONS] [--] PROGRAM [ARGS]",
	  "runs a libfabric program on the simulated NIC (run --help)",
	  cmd_run },
	{ "trace", "summary FILE [--json] | check FILE",
	  "what a pcap trace holds (ours or a real capture); its problems",
	  cmd_trace },
};

static int usage(FILE *out)
{
	fprintf(out, "usage: fabsim COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-6s %-36s %s\n", commands[i].name,
			commands[i].args, commands[i].summary);
	fprintf(out, "\nThe model reads FI_SIM_* variables and FI_SIM_CONFIG "
		     "(see `fabsim info`).\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("fabsim: libfabric API %d.%d\n", FI_MAJOR_VERSION,
		       FI_MINOR_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1, stdout);
	fprintf(stderr, "fabsim: unknown command \"%s\"\n\n", argv[1]);
	return usage(stderr);
}
