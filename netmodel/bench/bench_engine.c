/* Engine and network throughput benchmark.
 *
 *   bazel run -c opt //netmodel:bench_engine -- [--hosts N] [--messages N] [--max-bytes N]
 *                                               [--load F] [--seed N]
 *
 * Phase 1 (throughput): N hosts on a 2:1 fat-tree (32 hosts per leaf, 16 spines) of the default
 * preset exchange M messages of uniform random size 1..max-bytes to uniform random peers; every
 * host posts with exponential gaps so that it offers `load` of its link rate. Reports engine
 * events per wall-clock second, simulated time, peak packets in flight and peak RSS.
 *
 * Phase 2 (memory): a fresh model gets K MTU-sized packets injected at time 0 for growing K,
 * so all K are in flight at once; reports the model's own bytes per in-flight packet and the
 * process's peak RSS, to show memory grows linearly with packets in flight. */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "netmodel/nm_config.h"
#include "netmodel/nm_engine.h"
#include "netmodel/nm_message.h"
#include "netmodel/nm_network.h"
#include "netmodel/nm_preset.h"
#include "netmodel/nm_prng.h"

typedef struct options {
	uint32_t hosts;
	uint64_t messages;
	uint64_t max_bytes;
	double load;
	uint64_t seed;
} options;

/* Per-host message generator: posts, then sleeps an exponential gap. */
typedef struct workload {
	nm_msglayer *layer;
	nm_engine *engine;
	const options *opt;
	nm_prng *streams; /* one per host: a host's sequence does not depend on the others */
	double mean_gap_ns;
	uint64_t posted;
	uint64_t completed;
	double latency_sum_ns;
} workload;

static double wall_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long peak_rss_kib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void post_next(nm_engine *engine, void *ctx, uint64_t host)
{
	workload *w = ctx;
	if (w->posted >= w->opt->messages)
		return;
	nm_prng *rng = &w->streams[host];
	uint32_t hosts = w->opt->hosts;
	uint32_t dst = (uint32_t)((host + 1 + nm_prng_below(rng, hosts - 1)) % hosts);
	uint64_t bytes = 1 + nm_prng_below(rng, w->opt->max_bytes);
	uint64_t flow = (host << 32) | w->posted;
	if (nm_message_send(w->layer, (uint32_t)host, dst, flow, bytes, w->posted) != 0) {
		fprintf(stderr, "bench: nm_message_send failed\n");
		exit(1);
	}
	w->posted++;
	double gap = -log(1.0 - nm_prng_unit(rng)) * w->mean_gap_ns;
	nm_engine_schedule_after(engine, (nm_time_ns)gap + 1, (uint32_t)host, post_next, w, host,
				 NULL);
}

static void on_done(void *ctx, const nm_message_info *info)
{
	workload *w = ctx;
	w->completed++;
	w->latency_sum_ns += (double)(info->completed_at - info->posted_at);
}

static nm_config bench_config(const options *opt)
{
	nm_config cfg;
	nm_error err;
	if (nm_preset_load(&cfg, NM_PRESET_DEFAULT, &err)) {
		fprintf(stderr, "bench: %s\n", err.msg);
		exit(1);
	}
	cfg.seed = opt->seed;
	cfg.topology.kind = NM_TOPO_FATTREE;
	cfg.topology.hosts = opt->hosts;
	cfg.topology.hosts_per_leaf = 32;
	cfg.topology.uplinks_per_leaf = 16;
	return cfg;
}

static void throughput_phase(const options *opt)
{
	nm_config cfg = bench_config(opt);
	nm_engine *engine;
	nm_network *net;
	nm_msglayer *layer;
	nm_error err;
	if (nm_engine_create(&engine) || nm_network_create(engine, &cfg, &net, &err)) {
		fprintf(stderr, "bench: %s\n", err.msg);
		exit(1);
	}
	workload w = {.engine = engine, .opt = opt};
	nm_msglayer_create(net, on_done, &w, &layer);
	w.layer = layer;
	w.streams = calloc(opt->hosts, sizeof(*w.streams));
	/* Offered load per host: mean message bits / gap = load * link rate. */
	double mean_bits = (double)(opt->max_bytes + 1) / 2 * 8;
	w.mean_gap_ns = mean_bits / (opt->load * (double)cfg.link.bandwidth_bps) * 1e9;
	for (uint32_t h = 0; h < opt->hosts; h++) {
		nm_prng_seed(&w.streams[h], nm_prng_key(opt->seed, h));
		nm_engine_schedule(engine, 0, h, post_next, &w, h, NULL);
	}

	double start = wall_seconds();
	nm_engine_run_until(engine, NM_TIME_NEVER);
	double elapsed = wall_seconds() - start;

	uint64_t events = nm_engine_events_run(engine);
	nm_network_stats st;
	nm_network_stats_get(net, &st);
	printf("throughput: %u hosts, fat-tree 32 hosts/leaf, 16 uplinks (2:1), preset %s\n",
	       opt->hosts, cfg.preset);
	printf("  messages            %" PRIu64 " posted, %" PRIu64 " completed, mean latency %.0f ns\n",
	       w.posted, w.completed, w.completed ? w.latency_sum_ns / w.completed : 0.0);
	printf("  packets             %" PRIu64 " delivered, peak in flight %" PRIu64 "\n",
	       st.delivered, st.peak_in_flight);
	printf("  simulated time      %.3f ms\n", nm_engine_now(engine) / 1e6);
	printf("  events              %" PRIu64 " in %.3f s wall\n", events, elapsed);
	printf("  events/s            %.2f M\n", events / elapsed / 1e6);
	size_t model = nm_engine_memory_bytes(engine) + nm_network_memory_bytes(net);
	printf("  model arrays        %.1f MiB at their peak (%.0f B per peak in-flight packet, "
	       "fixed part included)\n",
	       model / 1048576.0, (double)model / (double)st.peak_in_flight);
	printf("  peak RSS            %.1f MiB\n", peak_rss_kib() / 1024.0);

	nm_msglayer_destroy(layer);
	nm_network_destroy(net);
	nm_engine_destroy(engine);
	free(w.streams);
}

/* Injects `count` packets at time 0 spread over all host pairs and measures the memory held. */
static void memory_point(const options *opt, uint64_t count)
{
	nm_config cfg = bench_config(opt);
	cfg.sw.buffer_bytes = 0; /* keep every packet: this measures holding them */
	nm_engine *engine;
	nm_network *net;
	nm_error err;
	if (nm_engine_create(&engine) || nm_network_create(engine, &cfg, &net, &err)) {
		fprintf(stderr, "bench: %s\n", err.msg);
		exit(1);
	}
	size_t base = nm_engine_memory_bytes(engine) + nm_network_memory_bytes(net);
	uint32_t bytes = cfg.link.mtu_bytes + cfg.link.header_bytes;
	for (uint64_t i = 0; i < count; i++) {
		uint32_t src = (uint32_t)(i % opt->hosts);
		nm_packet pkt = {.flow = i, .user_id = i, .bytes = bytes, .src = src,
				 .dst = (src + 1 + (uint32_t)(i / opt->hosts) % (opt->hosts - 1)) % opt->hosts};
		if (nm_network_inject(net, &pkt)) {
			fprintf(stderr, "bench: inject failed\n");
			exit(1);
		}
	}
	/* One instant: every host port starts its first packet; all others wait in queues. */
	nm_engine_run_next_instant(engine);
	nm_network_stats st;
	nm_network_stats_get(net, &st);
	size_t used = nm_engine_memory_bytes(engine) + nm_network_memory_bytes(net);
	printf("  %9" PRIu64 " in flight: model %8.1f MiB = %5.1f B/packet; process peak RSS %7.1f MiB\n",
	       st.in_flight, (used - base) / 1048576.0, (double)(used - base) / st.in_flight,
	       peak_rss_kib() / 1024.0);
	/* Destroying with packets in flight is allowed: the pool owns them. */
	nm_network_destroy(net);
	nm_engine_destroy(engine);
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [--hosts N (multiple of 32)] [--messages N] [--max-bytes N] [--load F] "
		"[--seed N]\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	options opt = {.hosts = 1024, .messages = 1000000, .max_bytes = 16384, .load = 0.4,
		       .seed = 1};
	static const struct option long_opts[] = {
		{"hosts", required_argument, NULL, 'h'},
		{"messages", required_argument, NULL, 'm'},
		{"max-bytes", required_argument, NULL, 'b'},
		{"load", required_argument, NULL, 'l'},
		{"seed", required_argument, NULL, 's'},
		{NULL, 0, NULL, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h': opt.hosts = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'm': opt.messages = strtoull(optarg, NULL, 10); break;
		case 'b': opt.max_bytes = strtoull(optarg, NULL, 10); break;
		case 'l': opt.load = strtod(optarg, NULL); break;
		case 's': opt.seed = strtoull(optarg, NULL, 10); break;
		default: usage(argv[0]);
		}
	}
	if (opt.hosts < 64 || opt.hosts % 32 || opt.max_bytes == 0 || !(opt.load > 0))
		usage(argv[0]);

	throughput_phase(&opt);
	printf("memory: packets injected at once into a fresh model\n");
	for (uint64_t k = 250000; k <= 2000000; k *= 2)
		memory_point(&opt, k);
	return 0;
}
