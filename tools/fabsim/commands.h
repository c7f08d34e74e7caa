/* SPDX-License-Identifier: BSD-2-Clause
 * The fabsim command line: one function per subcommand. */
#ifndef FABSIM_TOOL_COMMANDS_H
#define FABSIM_TOOL_COMMANDS_H

#include <stdio.h>

struct fabsim_command {
	const char *name;
	const char *args;    /* synopsis of the arguments */
	const char *summary;
	int (*run)(int argc, char **argv, FILE *out);
};

int cmd_info(int argc, char **argv, FILE *out);
int cmd_model(int argc, char **argv, FILE *out);
int cmd_demo(int argc, char **argv, FILE *out);
int cmd_trace(int argc, char **argv, FILE *out);
int cmd_run(int argc, char **argv, FILE *out);
int cmd_fabric(int argc, char **argv, FILE *out);

/* The demo's traffic step (demo_traffic.c). */
int demo_traffic(FILE *out);

#endif
