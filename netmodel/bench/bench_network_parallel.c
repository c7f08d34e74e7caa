/* A packet ping-pong between two hosts through a switch, the network partitioned between two
 * processes (nm_network_create_parallel), against the same network on one engine in one process.
 *
 *   bazel run -c opt //netmodel:bench_network_parallel -- [round_trips] [preset] [drop|credit]
 *
 * A preset whose switch pauses gets credits instead (NM_FLOW_CONTROL_CREDIT: pause cannot be
 * partitioned), so that each packet's credits also go back to its sender. Host h runs in partition h % 2, so hosts 0 and 1 in one each. Each host answers each packet it is delivered with one of the same size, as two programs
 * ping-ponging do, without a NIC: what the network's part of a transfer costs in wall-clock time
 * when each host's events run on its own CPU (every packet crosses once), and when one process
 * runs them all. Prints ns per one-way packet, best of three rounds.
 */
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arena/arena.h"
#include "netmodel/nm_config.h"
#include "netmodel/nm_network.h"
#include "netmodel/nm_parallel.h"
#include "netmodel/bench/bench_parallel_util.h"
#include "netmodel/nm_preset.h"

struct pingpong {
	nm_network *net;
	uint64_t packets; /* one-way packets to send in all */
	uint64_t delivered[2][8]; /* per host, each on a line of its own */
};

static void deliver(void *ctx, const nm_packet *pkt)
{
	struct pingpong *pp = ctx;
	nm_packet reply = *pkt;

	if (++pp->delivered[pkt->dst][0] * 2 > pp->packets)
		return;
	reply.src = pkt->dst;
	reply.dst = pkt->src;
	if (nm_network_inject(pp->net, &reply) != 0) {
		fprintf(stderr, "bench_network_parallel: inject failed\n");
		exit(1);
	}
}

static void first(nm_engine *engine, void *ctx, uint64_t arg)
{
	struct pingpong *pp = ctx;
	nm_packet pkt = {.bytes = 64, .src = 0, .dst = 1, .flow = 1};

	(void)engine, (void)arg;
	if (nm_network_inject(pp->net, &pkt) != 0)
		exit(1);
}

static nm_time_ns least_hop(const nm_config *cfg)
{
	return cfg->link.latency_ns; /* a switch's port to a host; towards the switch adds its own */
}

static double across_processes(fs_arena *arena, const nm_config *cfg, uint64_t packets)
{
	struct pingpong *pp = fs_mem_calloc(arena, 1, sizeof(*pp));
	nm_parallel *par;
	nm_error err;
	pid_t child;
	int status;
	double t;

	if (!pp || nm_parallel_create_in(arena, 2, least_hop(cfg), &par) != 0 ||
	    nm_network_create_parallel(par, NULL, cfg, &pp->net, &err) != 0) {
		fprintf(stderr, "bench_network_parallel: %s\n", pp ? err.msg : "out of memory");
		exit(1);
	}
	pp->packets = packets;
	nm_network_set_deliver(pp->net, deliver, pp);
	nm_engine_schedule(nm_parallel_engine(par, 0), 0, 0, first, pp, 0, NULL);
	t = bench_seconds();
	child = fork();
	if (child < 0) {
		perror("bench_network_parallel: fork");
		exit(1);
	}
	if (child == 0) {
		bench_run_partition(par, 1);
		_exit(0);
	}
	bench_run_partition(par, 0);
	waitpid(child, &status, 0);
	t = bench_seconds() - t;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    pp->delivered[0][0] + pp->delivered[1][0] < packets) {
		fprintf(stderr, "bench_network_parallel: the ping-pong did not finish\n");
		exit(1);
	}
	nm_network_destroy(pp->net);
	nm_parallel_destroy(par);
	fs_mem_free(arena, pp);
	return t / packets;
}

static double in_one_process(const nm_config *cfg, uint64_t packets)
{
	struct pingpong pp = {.packets = packets};
	nm_engine *engine;
	nm_error err;
	double t;

	if (nm_engine_create(&engine) != 0 ||
	    nm_network_create(engine, cfg, &pp.net, &err) != 0) {
		fprintf(stderr, "bench_network_parallel: %s\n", err.msg);
		exit(1);
	}
	nm_network_set_deliver(pp.net, deliver, &pp);
	nm_engine_schedule(engine, 0, 0, first, &pp, 0, NULL);
	t = bench_seconds();
	nm_engine_run_until(engine, NM_TIME_NEVER);
	t = bench_seconds() - t;
	nm_network_destroy(pp.net);
	nm_engine_destroy(engine);
	return t / packets;
}

int main(int argc, char **argv)
{
	uint64_t round_trips = argc > 1 ? strtoull(argv[1], NULL, 10) : 500000;
	const char *preset = argc > 2 ? argv[2] : "roce-100g";
	char name[64], msg[256];
	double best_across = 1e9, best_one = 1e9;
	fs_arena *arena;
	nm_config cfg;
	nm_error err;

	if (round_trips == 0 || nm_preset_load(&cfg, preset, &err) != 0) {
		fprintf(stderr,
			"usage: bench_network_parallel [round_trips > 0] [preset] [drop|credit]%s%s\n",
			round_trips ? ": " : "", round_trips ? err.msg : "");
		return 2;
	}
	/* Pause flow control cannot be partitioned: credits are its partitionable kin. */
	if (cfg.sw.flow_control == NM_FLOW_CONTROL_PAUSE)
		cfg.sw.flow_control = NM_FLOW_CONTROL_CREDIT;
	if (argc > 3 && nm_config_set(&cfg, "switch.flow_control", argv[3], &err) != 0) {
		fprintf(stderr, "bench_network_parallel: %s\n", err.msg);
		return 2;
	}
	snprintf(name, sizeof(name), "/fabsim-bench-netpar-%d", (int)getpid());
	if (fs_arena_create(name, (size_t)1 << 30, &arena, msg, sizeof(msg)) != 0) {
		fprintf(stderr, "bench_network_parallel: %s\n", msg);
		return 1;
	}
	fs_arena_unlink(name);
	for (int round = 0; round < 3; round++) {
		double a = across_processes(arena, &cfg, 2 * round_trips);
		double o = in_one_process(&cfg, 2 * round_trips);

		if (a < best_across)
			best_across = a;
		if (o < best_one)
			best_one = o;
	}
	printf("%" PRIu64 " round trips of 64 B between two hosts of '%s' (flow control: %s), best "
	       "of 3 rounds:\n", round_trips, preset,
	       cfg.sw.flow_control == NM_FLOW_CONTROL_CREDIT ? "credit" : "drop");
	printf("  partitioned, two processes: %.0f ns per packet\n", best_across * 1e9);
	printf("  one engine, one process:    %.0f ns per packet\n", best_one * 1e9);
	fs_arena_detach(arena);
	return 0;
}
