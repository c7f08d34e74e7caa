/* SPDX-License-Identifier: BSD-2-Clause
 * fabsim_trace: the trace tools on their own; `fabsim trace` runs the same tr_cli_main. */
#include <stdio.h>

#include "traces/tr_cli.h"

int main(int argc, char **argv)
{
	return tr_cli_main(argc, argv, stdout, stderr);
}
