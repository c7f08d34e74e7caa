/* SPDX-License-Identifier: BSD-2-Clause
 * `fabsim model`: the network model in force (preset, FI_SIM_CONFIG and
 * FI_SIM_* overrides, exactly as the sim provider loads them) and what it
 * predicts for an isolated message between two hosts. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <netmodel/nm_config.h>
#include <netmodel/nm_engine.h>
#include <netmodel/nm_network.h>
#include <netmodel/nm_preset.h>

#include "commands.h"
#include "sim_settings.h"

static const char *preset_override;

/* The sim provider's loader reads the same variables; a --preset option
 * stands in front of FI_SIM_PRESET. */
static const char *model_env(void *ctx, const char *name)
{
	if (preset_override && !strcmp(name, "FI_SIM_PRESET"))
		return preset_override;
	return getenv(name);
}

static void print_topology(FILE *out, const nm_topology_params *t)
{
	switch (t->kind) {
	case NM_TOPO_PAIR:
		fprintf(out, "  topology pair: 2 hosts, one link\n");
		break;
	case NM_TOPO_STAR:
		fprintf(out, "  topology star: %" PRIu32 " hosts on one switch\n",
			t->hosts);
		break;
	case NM_TOPO_FATTREE:
		fprintf(out, "  topology fat-tree: %" PRIu32 " hosts, %" PRIu32
			" per leaf, %" PRIu32 " uplinks per leaf\n", t->hosts,
			t->hosts_per_leaf, t->uplinks_per_leaf);
		break;
	}
}

/* Every impairment in force, or "none". */
static void print_impairments(FILE *out, const nm_config *cfg)
{
	const nm_impair_params *im = &cfg->impair;
	const char *sep = " ";

	fprintf(out, "  loss    ");
	if (!nm_impair_params_active(im) && !cfg->drop_count &&
	    !cfg->fault_count) {
		fprintf(out, " none\n");
		return;
	}
	if (cfg->drop_count) {
		fprintf(out, "%sscripted drops %zu", sep, (size_t)cfg->drop_count);
		sep = "; ";
	}
	if (cfg->fault_count) {
		fprintf(out, "%slink faults %zu", sep,
			(size_t)cfg->fault_count);
		sep = "; ";
	}
	if (im->loss_rate) {
		fprintf(out, "%s%g per packet per link", sep, im->loss_rate);
		sep = "; ";
	}
	if (im->burst_loss_rate) {
		fprintf(out, "%sbursts %g (mean %g packets)", sep,
			im->burst_loss_rate, im->burst_mean_length);
		sep = "; ";
	}
	if (im->corrupt_rate) {
		fprintf(out, "%scorruption %g", sep, im->corrupt_rate);
		sep = "; ";
	}
	if (im->duplicate_rate) {
		fprintf(out, "%sduplicates %g", sep, im->duplicate_rate);
		sep = "; ";
	}
	if (im->reorder_rate)
		fprintf(out, "%sreordering %g (held %" PRIu64 " ns)", sep,
			im->reorder_rate, (uint64_t)im->reorder_delay_ns);
	fprintf(out, "\n");
}

static void print_config(FILE *out, const nm_config *cfg)
{
	fprintf(out, "network model: preset %s, seed %" PRIu64 "\n",
		cfg->preset, cfg->seed);
	print_topology(out, &cfg->topology);
	if (cfg->link.bandwidth_bps)
		fprintf(out, "  links    %g Gb/s, %" PRIu64 " ns, MTU %u B, "
			"%u B headers per packet\n",
			cfg->link.bandwidth_bps / 1e9,
			(uint64_t)cfg->link.latency_ns, cfg->link.mtu_bytes,
			cfg->link.header_bytes);
	else
		fprintf(out, "  links    unlimited bandwidth, %" PRIu64
			" ns, MTU %u B\n", (uint64_t)cfg->link.latency_ns,
			cfg->link.mtu_bytes);
	fprintf(out, "  switches %" PRIu64 " ns forwarding\n",
		(uint64_t)cfg->sw.latency_ns);
	fprintf(out, "  NIC      %" PRIu64 " ns send, %" PRIu64
		" ns receive, %" PRIu64 " ns DMA\n",
		(uint64_t)cfg->nic.tx_delay_ns, (uint64_t)cfg->nic.rx_delay_ns,
		(uint64_t)cfg->nic.dma_latency_ns);
	print_impairments(out, cfg);
}

static void print_table(FILE *out, const nm_network *net)
{
	fprintf(out, "\n  %10s  %12s  %12s\n", "bytes", "latency us",
		"Gb/s");
	for (uint64_t size = 1; size <= (16u << 20); size *= 4) {
		nm_time_ns ns = nm_network_message_latency_ns(net, 0, 1, 0, size);

		if (ns)
			fprintf(out, "  %10" PRIu64 "  %12.3f  %12.2f\n", size,
				ns / 1e3, size * 8.0 / ns);
		else /* no time at all: no rate to speak of */
			fprintf(out, "  %10" PRIu64 "  %12.3f  %12s\n", size,
				0.0, "unlimited");
	}
}

static int usage(FILE *to, int rc)
{
	size_t n;
	const char *const *names = nm_preset_names(&n);

	fprintf(to, "usage: fabsim model [--preset NAME]\n\npresets:");
	for (size_t i = 0; i < n; i++)
		fprintf(to, " %s%s", names[i],
			strcmp(names[i], NM_PRESET_DEFAULT) ? "" :
							      " (default)");
	fprintf(to, "\n");
	return rc;
}

int cmd_model(int argc, char **argv, FILE *out)
{
	static const struct option opts[] = {
		{ "preset", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	nm_config cfg;
	nm_engine *engine = NULL;
	nm_network *net = NULL;
	nm_error err;
	int opt;

	char name[] = "fabsim model"; /* getopt's messages begin with it */

	argv[0] = name;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "p:h", opts, NULL)) != -1) {
		if (opt == 'h')
			return usage(out, 0);
		if (opt != 'p')
			return usage(stderr, 2);
		preset_override = optarg;
	}
	if (optind < argc) {
		fprintf(stderr, "fabsim model: unexpected argument \"%s\" "
			"(a preset is given with --preset)\n", argv[optind]);
		return usage(stderr, 2);
	}
	if (sim_settings_load(&cfg, model_env, NULL, &err)) {
		fprintf(stderr, "fabsim model: %s\n", err.msg);
		return 1;
	}
	print_config(out, &cfg);
	if (nm_engine_create(&engine) ||
	    nm_network_create(engine, &cfg, &net, &err)) {
		fprintf(stderr, "fabsim model: %s\n", err.msg);
		nm_engine_destroy(engine);
		return 1;
	}
	fprintf(out, "\nan isolated message, host 0 to host 1 (post to "
		     "completion):");
	print_table(out, net);
	nm_network_destroy(net);
	nm_engine_destroy(engine);
	return 0;
}
