/* SPDX-License-Identifier: BSD-2-Clause
 * `fabsim trace summary|check FILE`: the trace tools (traces/). */
#include <traces/tr_cli.h>

#include "commands.h"

int cmd_trace(int argc, char **argv, FILE *out)
{
	return tr_cli_main(argc, argv, out, stderr);
}
