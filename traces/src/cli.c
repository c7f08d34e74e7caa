/* SPDX-License-Identifier: BSD-2-Clause */
#include "traces/tr_cli.h"

#include <stdbool.h>
#include <string.h>

#include "traces/tr_check.h"
#include "traces/tr_summary.h"

static void usage(const char *name, FILE *err)
{
	fprintf(err,
		"usage: %s summary FILE [--json]   per-QP flows, opcodes, messages, NAKs, latency\n"
		"       %s check FILE              ICRC, PSN order, lengths; exit 1 on problems\n"
		"FILE: pcap (us or ns, either byte order) or pcapng; Ethernet (VLAN), IPv4/IPv6,\n"
		"Linux cooked, raw IP, ERF type 21 InfiniBand. See traces/README.md.\n",
		name, name);
}

/* `--help` or `-h` after a subcommand: its usage, on out. */
static bool asks_help(int argc, char **argv)
{
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	return false;
}

static int summary(const char *name, int argc, char **argv, FILE *out, FILE *err)
{
	const char *path = NULL;
	bool json = false;
	tr_summary *s;
	tr_error e;
	int ret;

	bool options = true;

	for (int i = 2; i < argc; i++) {
		if (options && !strcmp(argv[i], "--")) {
			options = false;
		} else if (options && !strcmp(argv[i], "--json")) {
			json = true;
		} else if (options && argv[i][0] == '-' && argv[i][1]) {
			fprintf(err, "%s summary: unknown option %s\n", name, argv[i]);
			return 2;
		} else if (path) {
			fprintf(err, "%s summary: one FILE only (got %s and %s)\n", name, path,
				argv[i]);
			return 2;
		} else {
			path = argv[i];
		}
	}
	if (!path) {
		usage(name, err);
		return 2;
	}
	ret = tr_summary_file(path, &s, &e);
	if (ret)
		fprintf(err, "%s summary: %s\n", name, e.msg);
	if (json) {
		/* A JSON reader gets the reason too, and an object even for a
		 * file it could not read at all. */
		tr_error we;

		if (tr_summary_print_json(s, ret ? e.msg : NULL, out, &we)) {
			fprintf(err, "%s summary: %s\n", name, we.msg);
			ret = -1;
		}
	} else if (s) {
		tr_summary_print(s, out);
	}
	tr_summary_free(s);
	return ret ? 1 : 0;
}

static int check(const char *name, int argc, char **argv, FILE *out, FILE *err)
{
	tr_check_result res = { 0 };
	int ret;

	if (argc < 3) {
		fprintf(err, "%s check: no FILE given\n", name);
		usage(name, err);
		return 2;
	}
	if (argv[2][0] == '-' && argv[2][1]) {
		fprintf(err, "%s check: unknown option %s (check takes a FILE only)\n", name,
			argv[2]);
		return 2;
	}
	if (argc > 3) {
		fprintf(err, "%s check: one FILE only (got %s and %s)\n", name, argv[2], argv[3]);
		return 2;
	}
	ret = tr_check_file(argv[2], out, &res);
	fprintf(ret ? err : out, "%s: %llu frames, %llu IB packets, %llu problem%s\n", argv[2],
		(unsigned long long)res.frames, (unsigned long long)res.packets,
		(unsigned long long)res.problems, res.problems == 1 ? "" : "s");
	return ret;
}

int tr_cli_main(int argc, char **argv, FILE *out, FILE *err)
{
	const char *name = argc > 0 && argv[0] ? argv[0] : "trace";

	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		usage(name, argc < 2 ? err : out);
		return argc < 2 ? 2 : 0;
	}
	if ((!strcmp(argv[1], "summary") || !strcmp(argv[1], "check")) &&
	    asks_help(argc, argv)) {
		usage(name, out);
		return 0;
	}
	if (!strcmp(argv[1], "summary"))
		return summary(name, argc, argv, out, err);
	if (!strcmp(argv[1], "check"))
		return check(name, argc, argv, out, err);
	fprintf(err, "%s: unknown subcommand '%s'\n", name, argv[1]);
	usage(name, err);
	return 2;
}
