/* SPDX-License-Identifier: BSD-2-Clause
 * `fabsim run [OPTIONS] [--] PROGRAM [ARGS]`: runs an unmodified libfabric
 * program on the sim provider. It points the dynamic linker at fabsim's
 * libfabric.so.1 (the one this tool runs on), selects the provider, passes
 * the simulation settings as FI_SIM_* variables, and with --virtual-clock
 * preloads libfabsim_vclock.so so that the program's own clocks read
 * virtual time. Then it becomes the program (exec). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>

#include "commands.h"

#define VCLOCK_LIB "libfabsim_vclock.so"

/* Options that become FI_SIM_* variables. */
static const struct {
	const char *option;
	const char *variable;
} passed[] = {
	{ "--preset", "FI_SIM_PRESET" },
	{ "--config", "FI_SIM_CONFIG" },
	{ "--seed", "FI_SIM_SEED" },
	{ "--loss", "FI_SIM_LOSS_RATE" },
	{ "--fabric", "FI_SIM_FABRIC" },
	{ "--node", "FI_SIM_NODE" },
	{ "--nodes", "FI_SIM_NODES" },
	{ "--pcap", "FI_SIM_PCAP" },
};

static int usage(FILE *out)
{
	fprintf(out,
		"usage: fabsim run [OPTIONS] [--] PROGRAM [ARGS]\n\n"
		"Runs PROGRAM on fabsim's libfabric, provider sim.\n\n"
		"  --preset NAME     network preset (fabsim model lists them)\n"
		"  --config FILE     JSON network configuration\n"
		"  --seed N          seed of the simulation's randomness\n"
		"  --loss RATE       packet loss rate on every link, 0..1\n"
		"  --fabric NAME     join the shared fabric NAME: processes run "
		"with the\n"
		"                    same NAME share one simulated network "
		"(fabsim fabric)\n"
		"  --node N          with --fabric: this process is host N\n"
		"  --nodes N         with --fabric: the clock starts once N "
		"processes joined\n"
		"  --pcap FILE       record the simulated wire into FILE\n"
		"  --virtual-clock   the program's clock_gettime/gettimeofday "
		"read virtual time\n");
	return 2;
}

/* The directory of the libfabric.so.1 this tool itself runs on. */
static bool library_dir(char *dir, size_t len)
{
	Dl_info where;
	char path[PATH_MAX];

	if (!dladdr((void *)fi_getinfo, &where) || !where.dli_fname ||
	    !realpath(where.dli_fname, path))
		return false;
	snprintf(dir, len, "%s", dirname(path));
	return true;
}

static void prepend_path(const char *variable, const char *dir)
{
	const char *old = getenv(variable);
	char *value;

	if (asprintf(&value, "%s%s%s", dir, old && *old ? ":" : "",
		     old ? old : "") < 0)
		return;
	setenv(variable, value, 1);
	free(value);
}

/* libfabsim_vclock.so: beside libfabric.so.1 once installed, beside this
 * tool in a build tree. */
static bool find_vclock(const char *libdir, char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *dirs[2] = { libdir, NULL };

	if (n > 0) {
		exe[n] = '\0';
		dirs[1] = dirname(exe);
	}
	for (int i = 0; i < 2; i++) {
		if (!dirs[i])
			continue;
		snprintf(out, len, "%s/%s", dirs[i], VCLOCK_LIB);
		if (!access(out, R_OK))
			return true;
	}
	return false;
}

int cmd_run(int argc, char **argv, FILE *out)
{
	char libdir[PATH_MAX], vclock[PATH_MAX + 32];
	bool virtual_clock = false;
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		size_t k;

		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "--virtual-clock")) {
			virtual_clock = true;
			continue;
		}
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return usage(out) == 2 ? 0 : 0;
		for (k = 0; k < sizeof(passed) / sizeof(passed[0]); k++)
			if (!strcmp(argv[i], passed[k].option))
				break;
		if (k == sizeof(passed) / sizeof(passed[0]) || i + 1 >= argc) {
			fprintf(stderr, "fabsim run: %s: %s\n", argv[i],
				k == sizeof(passed) / sizeof(passed[0]) ?
					"unknown option" : "needs a value");
			return usage(stderr);
		}
		setenv(passed[k].variable, argv[++i], 1);
	}
	if (i >= argc) {
		fprintf(stderr, "fabsim run: no program given\n");
		return usage(stderr);
	}
	if (!library_dir(libdir, sizeof(libdir))) {
		fprintf(stderr, "fabsim run: cannot find fabsim's "
			"libfabric.so.1\n");
		return 1;
	}
	prepend_path("LD_LIBRARY_PATH", libdir);
	setenv("FI_PROVIDER", "sim", 1);
	if (virtual_clock) {
		if (!find_vclock(libdir, vclock, sizeof(vclock))) {
			fprintf(stderr, "fabsim run: %s not found beside %s\n",
				VCLOCK_LIB, libdir);
			return 1;
		}
		prepend_path("LD_PRELOAD", vclock);
	}
	fflush(out);
	execvp(argv[i], argv + i);
	fprintf(stderr, "fabsim run: %s: %m\n", argv[i]);
	return 127;
}
