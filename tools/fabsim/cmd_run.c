/* SPDX-License-Identifier: BSD-2-Clause
 * `fabsim run [OPTIONS] [--] PROGRAM [ARGS]`: runs an unmodified libfabric
 * program on the sim provider. It points the dynamic linker at fabsim's
 * libfabric.so.1 (the one this tool runs on), selects the provider, passes
 * the simulation settings as FI_SIM_* variables, and with --virtual-clock
 * preloads libfabsim_vclock.so so that the program's own clocks read
 * virtual time. Then it becomes the program (exec). With --verbs the
 * program gets the verbs face's libibverbs.so.1 and librdmacm.so.1 (the
 * same simulated NIC under rdma-core's API) and libfabric's verbs
 * provider. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rdma/fabric.h>

#include "netmodel/nm_config.h"
#include "tools/fabsimd/fabsimd.h"

#include "commands.h"
#include "sim_settings.h"

#define VCLOCK_LIB "libfabsim_vclock.so"
/* The verbs face: PREFIX/lib/fabsim-verbs once installed, the build's
 * providers/sim_verbs beside tools/ in a build tree. */
#define FACE_DIR "fabsim-verbs"
#define FACE_BUILD_DIR "../providers/sim_verbs"

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
		"Runs PROGRAM on fabsim's libfabric, provider sim. Options take "
		"their value\nas the next argument or after '=' (--seed=5).\n\n"
		"  --preset NAME     network preset (fabsim model --help lists "
		"them)\n"
		"  --config FILE     JSON network configuration\n"
		"  --seed N          seed of the simulation's randomness\n"
		"  --loss RATE       packet loss rate on every link, 0..1\n"
		"  --fabric NAME     join the shared fabric NAME: processes run "
		"with the\n"
		"                    same NAME share one simulated network "
		"(fabsim fabric);\n"
		"                    without it each process is a network of "
		"its own\n"
		"  --node N          with --fabric: this process is host N; "
		"needed unless a\n"
		"                    launcher gives each process its rank "
		"(mpirun, srun:\n"
		"                    OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, "
		"SLURM_PROCID)\n"
		"  --nodes N         with --fabric: the clock starts once N "
		"processes joined\n"
		"                    (or, with a warning, after 2 s of real "
		"time: a process that\n"
		"                    joins later finds the clock run on "
		"without it); not for\n"
		"                    programs whose server opens the device "
		"before it listens\n"
		"                    out of band (fi_pingpong, ibv_rc_pingpong): "
		"its first costs\n"
		"                    would wait for a client that cannot "
		"connect yet\n"
		"  --pcap FILE       record the simulated wire into FILE (on a "
		"shared fabric,\n"
		"                    the process that starts it decides; the "
		"others are told)\n"
		"  --virtual-clock   the program's clock_gettime/gettimeofday "
		"read virtual time,\n"
		"                    and its sleeps (nanosleep, usleep, sleep) "
		"pass virtual time;\n"
		"                    without it, waits' timeouts (virtual) "
		"and the program's\n"
		"                    clock (real) disagree: a wait for nothing "
		"ends at once\n"
		"  --verbs           PROGRAM uses verbs or rdma_cm: it gets the "
		"simulated NIC's\n"
		"                    libibverbs.so.1 and librdmacm.so.1 "
		"(libfabric programs: the\n"
		"                    verbs provider over them)\n");
	return 2;
}

/* Options given on the command line (bits of passed[]). */
static unsigned given;

/* The option `variable` was given by on this command line, or NULL (the
 * environment's, or not set). */
static const char *option_of(const char *variable)
{
	for (size_t k = 0; k < sizeof(passed) / sizeof(passed[0]); k++)
		if ((given & 1u << k) && !strcmp(passed[k].variable, variable))
			return passed[k].option;
	return NULL;
}

#define FROM_ENV " (environment): "

/* The library names a bad setting by its variable, "FI_SIM_SEED
 * (environment): ..."; one this command set from an option is named by that
 * option too. */
static void tell_bad_setting(const char *msg)
{
	const char *tail = strstr(msg, FROM_ENV), *option;
	char variable[64];

	if (tail && (size_t)(tail - msg) < sizeof(variable)) {
		snprintf(variable, sizeof(variable), "%.*s", (int)(tail - msg),
			 msg);
		if ((option = option_of(variable))) {
			fprintf(stderr, "fabsim run: %s (%s): %s\n", option,
				variable, tail + strlen(FROM_ENV));
			return;
		}
	}
	fprintf(stderr, "fabsim run: %s\n", msg);
}

/* How the user set `variable`: the option this command took it from, or
 * the variable itself (from the environment). */
static const char *named(const char *variable, char *buf, size_t len)
{
	const char *option = option_of(variable);

	if (option)
		return option;
	snprintf(buf, len, "%s (environment)", variable);
	return buf;
}

/* What the provider checks only as it loads (its transport and recording
 * settings, FI_SIM_MR_STRICT, ...) is asked of it here: the sim provider
 * refuses them in fi_getinfo with a warning saying why, which the program
 * would otherwise print only once it runs, failing with "No data
 * available". */
static int provider_accepts_settings(void)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	int ret;

	if (!hints || !(hints->fabric_attr->prov_name = strdup("sim"))) {
		fi_freeinfo(hints);
		return 0; /* out of memory: the program will find out */
	}
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	fi_freeinfo(info);
	if (ret != -FI_ENODATA && ret != -FI_EINVAL)
		return 0;
	fprintf(stderr, "fabsim run: the sim provider refuses these settings "
		"(its warning above says why)\n");
	return 2;
}

/* The settings are the library's to read, but a bad one is told here, before
 * the program starts: a server would otherwise wait for its first client
 * before its library found out. 0, or 2 with the problem said. */
static int check_settings(void)
{
	const char *fabric = getenv("FI_SIM_FABRIC"), *nodes, *pcap;
	char why[256], dir[PATH_MAX], name[64];
	nm_config cfg;
	nm_error err;
	uint32_t node;
	const char *source;
	char *end;

	if (sim_settings_load(&cfg, nm_env_getenv, NULL, &err)) {
		tell_bad_setting(err.msg);
		return 2;
	}
	if (fabric && *fabric) {
		if (fabsimd_check_name(fabric, why, sizeof(why))) {
			fprintf(stderr, "fabsim run: %s: %s\n",
				named("FI_SIM_FABRIC", name, sizeof(name)), why);
			return 2;
		}
		int ret = fabsimd_node_identity(&node, &source, why,
						sizeof(why));

		if (ret && ret != -ENOENT) {
			fprintf(stderr, "fabsim run: %s: %s\n",
				named("FI_SIM_NODE", name, sizeof(name)), why);
			return 2;
		}
		if (!ret && node >= cfg.topology.hosts) {
			if (!strcmp(source, "FI_SIM_NODE"))
				source = named(source, name, sizeof(name));
			fprintf(stderr, "fabsim run: node %u (from %s) is "
				"outside the topology's %u hosts (0 to %u)\n",
				node, source, cfg.topology.hosts,
				cfg.topology.hosts - 1);
			return 2;
		}
	}
	nodes = getenv("FI_SIM_NODES");
	if (nodes && *nodes &&
	    (strtoul(nodes, &end, 10) - 1 >= FABSIMD_MEMBERS_MAX || *end)) {
		fprintf(stderr, "fabsim run: %s %s: a process count is "
			"1 to %d\n", named("FI_SIM_NODES", name, sizeof(name)),
			nodes, FABSIMD_MEMBERS_MAX);
		return 2;
	}
	static const char *const per_fabric[] = { "FI_SIM_NODE",
						  "FI_SIM_NODES" };
	for (size_t i = 0; i < sizeof(per_fabric) / sizeof(per_fabric[0]); i++) {
		const char *set = getenv(per_fabric[i]);
		const char *option = option_of(per_fabric[i]);

		if (set && *set && !(fabric && *fabric)) {
			/* Without a shared fabric nothing reads it. */
			if (option)
				fprintf(stderr, "fabsim run: %s (%s=%s) needs "
					"--fabric\n", option, per_fabric[i],
					set);
			else
				fprintf(stderr, "fabsim run: %s=%s (environment) "
					"needs --fabric\n", per_fabric[i], set);
			return 2;
		}
	}
	pcap = getenv("FI_SIM_PCAP");
	if (pcap && *pcap) {
		struct stat st;

		const char *per_node = getenv("FI_SIM_PCAP_PER_NODE");

		/* One file per node is PREFIX.<host>.pcap: any prefix will do. */
		if (!(per_node && *per_node) && !stat(pcap, &st) &&
		    S_ISDIR(st.st_mode)) {
			fprintf(stderr, "fabsim run: %s %s: is a directory, "
				"not a file name\n",
				named("FI_SIM_PCAP", name, sizeof(name)), pcap);
			return 2;
		}
		snprintf(dir, sizeof(dir), "%s", pcap);
		if (access(dirname(dir), W_OK | X_OK)) {
			fprintf(stderr, "fabsim run: %s %s: cannot write in "
				"its directory: %m\n",
				named("FI_SIM_PCAP", name, sizeof(name)), pcap);
			return 2;
		}
	}
	return provider_accepts_settings();
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

/* `name` in `in_lib` under libdir once installed, or in `in_build` under
 * this tool's own directory in a build tree; the path to it in out. */
static bool find_beside(const char *libdir, const char *in_lib,
			const char *in_build, const char *name, char *out,
			size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	snprintf(out, len, "%s/%s%s%s", libdir, in_lib, *in_lib ? "/" : "",
		 name);
	if (!access(out, R_OK))
		return true;
	if (n <= 0)
		return false;
	exe[n] = '\0';
	snprintf(out, len, "%s/%s%s%s", dirname(exe), in_build,
		 *in_build ? "/" : "", name);
	return !access(out, R_OK);
}

/* Files the library opens once the program runs, named as the user named
 * them: from this directory, whatever directory the program is in by then
 * (one that changes directory first would not find a relative one). 0, or
 * 1 with the problem said. */
static int absolute_paths(void)
{
	static const char *const files[] = {
		"FI_SIM_CONFIG", "FI_SIM_PCAP", "FI_SIM_PCAP_LOG",
	};
	char cwd[PATH_MAX], *abs;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		const char *path = getenv(files[i]);

		if (!path || !*path || *path == '/')
			continue;
		if (!getcwd(cwd, sizeof(cwd)) ||
		    asprintf(&abs, "%s/%s", cwd, path) < 0) {
			fprintf(stderr, "fabsim run: %s: cannot make it "
				"absolute: %m\n", path);
			return 1;
		}
		setenv(files[i], abs, 1);
		free(abs);
	}
	return 0;
}

int cmd_run(int argc, char **argv, FILE *out)
{
	char libdir[PATH_MAX], vclock[PATH_MAX + 64], face[PATH_MAX + 64];
	bool virtual_clock = false, verbs = false;
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
		if (!strcmp(argv[i], "--verbs")) {
			verbs = true;
			continue;
		}
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return usage(out) == 2 ? 0 : 0;
		/* --seed 5, or --seed=5 */
		const char *eq = strchr(argv[i], '=');
		size_t len = eq ? (size_t)(eq - argv[i]) : strlen(argv[i]);
		const char *value;

		for (k = 0; k < sizeof(passed) / sizeof(passed[0]); k++)
			if (strlen(passed[k].option) == len &&
			    !strncmp(argv[i], passed[k].option, len))
				break;
		if (k == sizeof(passed) / sizeof(passed[0]) ||
		    (!eq && i + 1 >= argc)) {
			fprintf(stderr, "fabsim run: %.*s: %s\n", (int)len,
				argv[i],
				k == sizeof(passed) / sizeof(passed[0]) ?
					"unknown option" : "needs a value");
			return usage(stderr);
		}
		value = eq ? eq + 1 : argv[++i];
		if (!*value) {
			fprintf(stderr, "fabsim run: %s: needs a value (it was "
				"empty)\n", passed[k].option);
			return usage(stderr);
		}
		setenv(passed[k].variable, value, 1);
		given |= 1u << k;
	}
	if (absolute_paths())
		return 1;
	if (i >= argc) {
		fprintf(stderr, "fabsim run: no program given\n");
		return usage(stderr);
	}
	if (check_settings())
		return 2;
	if (!library_dir(libdir, sizeof(libdir))) {
		fprintf(stderr, "fabsim run: cannot find fabsim's "
			"libfabric.so.1\n");
		return 1;
	}
	prepend_path("LD_LIBRARY_PATH", libdir);
	setenv("FI_PROVIDER", verbs ? "verbs" : "sim", 1);
	if (verbs) {
		if (!find_beside(libdir, FACE_DIR, FACE_BUILD_DIR,
				 "libibverbs.so.1", face, sizeof(face))) {
			fprintf(stderr, "fabsim run: the verbs face "
				"(libibverbs.so.1) is not in %s/%s\n", libdir,
				FACE_DIR);
			return 1;
		}
		prepend_path("LD_LIBRARY_PATH", dirname(face));
	}
	if (virtual_clock) {
		if (!find_beside(libdir, "", ".", VCLOCK_LIB, vclock,
				 sizeof(vclock))) {
			fprintf(stderr, "fabsim run: %s not found beside %s\n",
				VCLOCK_LIB, libdir);
			return 1;
		}
		prepend_path("LD_PRELOAD", vclock);
	}
	fflush(out);
	execvp(argv[i], argv + i);
	fprintf(stderr, "fabsim run: %s: %m\n", argv[i]);
	/* As a shell says it: found but not runnable, or not found. */
	return errno == ENOENT || errno == ENOTDIR ? 127 : 126;
}
