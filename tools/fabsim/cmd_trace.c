/* SPDX-License-Identifier: BSD-2-Clause
 * `fabsim trace summary|check FILE`: the trace tools (traces/). */
#include <traces/tr_cli.h>

#include "commands.h"

int cmd_trace(int argc, char **argv, FILE *out)
{
	/* Its messages name the command as the user typed it. */
	char name[] = "fabsim trace";
	char *saved = argv[0];
	int ret;

	argv[0] = name;
	ret = tr_cli_main(argc, argv, out, stderr);
	argv[0] = saved;
	return ret;
}
