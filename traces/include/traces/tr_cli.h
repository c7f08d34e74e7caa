/* SPDX-License-Identifier: BSD-2-Clause
 * The trace command line, as a function so that `fabsim trace ...` and the stand-alone
 * `fabsim_trace` binary share it:
 *   summary FILE [--json]   what the trace holds (tr_summary.h)
 *   check FILE              its problems, one per line (tr_check.h); exit status 1 if any */
#ifndef TR_CLI_H
#define TR_CLI_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* argv[0] is the command's name ("trace" or "fabsim_trace"), argv[1] the subcommand. Returns the
 * exit status: 0 success / clean, 1 problems found or the file unreadable, 2 usage error. */
int tr_cli_main(int argc, char **argv, FILE *out, FILE *err);

#ifdef __cplusplus
}
#endif

#endif
