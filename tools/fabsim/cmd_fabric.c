/* SPDX-License-Identifier: BSD-2-Clause
 * `fabsim fabric start|stop|status [NAME]`: the coordinator of a shared
 * fabric (tools/fabsimd/README.md). NAME defaults to $FI_SIM_FABRIC, else
 * "default". */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabsimd/fabsimd.h"

#include "commands.h"

static int usage(FILE *out)
{
	fprintf(out,
		"usage: fabsim fabric start|stop|status [NAME]\n\n"
		"  start   starts the fabric's coordinator; it stays until "
		"stopped\n"
		"  stop    ends the coordinator; processes still attached are "
		"told,\n"
		"          but run on with the fabric's memory until they end\n"
		"  status  the coordinator and the attached processes\n\n"
		"NAME: $FI_SIM_FABRIC, else \"%s\"; 1 to %d letters, digits, "
		"'.', '_' and '-',\nnot starting with '.' or '-'. Files: "
		"$FABSIM_RUNTIME_DIR, else $XDG_RUNTIME_DIR/fabsim,\nelse "
		"/tmp/fabsim-<uid>.\n",
		FABSIMD_DEFAULT_FABRIC, FABSIMD_FABRIC_MAX);
	return 2;
}

static void seconds(char *buf, size_t len, uint64_t ms)
{
	if (ms < 60000)
		snprintf(buf, len, "%.1f s", (double)ms / 1000);
	else if (ms < 3600000)
		snprintf(buf, len, "%llu min %02llu s",
			 (unsigned long long)(ms / 60000),
			 (unsigned long long)(ms / 1000 % 60));
	else
		snprintf(buf, len, "%llu h %02llu min",
			 (unsigned long long)(ms / 3600000),
			 (unsigned long long)(ms / 60000 % 60));
}

static int by_node(const void *a, const void *b)
{
	uint32_t x = ((const struct fabsimd_member_status *)a)->node;
	uint32_t y = ((const struct fabsimd_member_status *)b)->node;

	return (x > y) - (x < y);
}

static int status(const char *fabric, FILE *out)
{
	static struct fabsimd_status st; /* 12 KiB: off the stack */
	char err[256], up[32], dir[PATH_MAX];
	int rc = fabsimd_status(fabric, &st, err, sizeof(err));

	if (rc) {
		fprintf(stderr, "fabsim fabric status: %s\n", err);
		return 1;
	}
	/* In the coordinator's order, members that join fill the places of
	 * those that left. */
	qsort(st.members, st.count, sizeof(st.members[0]), by_node);
	seconds(up, sizeof(up), st.uptime_ms);
	fprintf(out, "fabric %s: coordinator pid %d, %s, up %s, %zu member%s\n",
		fabric, (int)st.pid,
		st.persistent ? "persistent (until `fabsim fabric stop`)" :
				"on demand (ends with its last member)",
		up, st.count, st.count == 1 ? "" : "s");
	if (st.count)
		fprintf(out, "  %-10s %-8s %-20s %s\n", "node", "pid",
			"program", "attached for");
	for (size_t i = 0; i < st.count; i++) {
		seconds(up, sizeof(up), st.members[i].attached_ms);
		fprintf(out, "  %-10u %-8d %-20s %s\n", st.members[i].node,
			(int)st.members[i].pid, st.members[i].prog, up);
	}
	if (!fabsimd_runtime_dir(dir, sizeof(dir), NULL, 0))
		fprintf(out, "files: %s/%s.{sock,log}\n", dir, fabric);
	return 0;
}

static int start(const char *fabric, FILE *out)
{
	char err[256];
	pid_t pid = -1;
	int rc = fabsimd_start(fabric, true, &pid, err, sizeof(err));

	if (rc < 0) {
		fprintf(stderr, "fabsim fabric start: %s\n", err);
		return 1;
	}
	if (rc == 1)
		fprintf(out, "fabric %s is already running (coordinator pid "
			"%d); it stays until `fabsim fabric stop %s`\n",
			fabric, (int)pid, fabric);
	else
		fprintf(out, "fabric %s started: coordinator pid %d, stays "
			"until `fabsim fabric stop %s`\n", fabric, (int)pid,
			fabric);
	return 0;
}

static int stop(const char *fabric, FILE *out)
{
	char err[256];
	pid_t pid = -1;
	int rc = fabsimd_stop(fabric, &pid, err, sizeof(err));

	if (rc < 0) {
		fprintf(stderr, "fabsim fabric stop: %s\n", err);
		return 1;
	}
	fprintf(out, "fabric %s stopped: coordinator pid %d ended, %d "
		"member%s told\n", fabric, (int)pid, rc, rc == 1 ? "" : "s");
	return 0;
}

int cmd_fabric(int argc, char **argv, FILE *out)
{
	const char *fabric;
	char err[256];

	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help"))
		return usage(out) == 2 ? 0 : 0;
	if (argc > 3) {
		fprintf(stderr, "fabsim fabric %s: too many arguments (\"%s\")"
			"\n", argv[1], argv[3]);
		return usage(stderr);
	}
	fabric = argc == 3 ? argv[2] : fabsimd_default_fabric();
	if (fabsimd_check_name(fabric, err, sizeof(err))) {
		fprintf(stderr, "fabsim fabric %s: %s\n", argv[1], err);
		return 2;
	}
	if (!strcmp(argv[1], "status"))
		return status(fabric, out);
	if (!strcmp(argv[1], "start"))
		return start(fabric, out);
	if (!strcmp(argv[1], "stop"))
		return stop(fabric, out);
	fprintf(stderr, "fabsim fabric: unknown action \"%s\"\n", argv[1]);
	return usage(stderr);
}
