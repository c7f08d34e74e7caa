/* SPDX-License-Identifier: BSD-2-Clause
 * The world: one simulated fabric's clock, network and NICs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nic_internal.h"

void nic_transport_defaults(struct nic_transport_params *p)
{
	p->ack_timeout_ns = 100 * NM_NS_PER_US;
	p->retry_count = 7;
	p->rnr_timeout_ns = 10 * NM_NS_PER_US;
	p->rnr_retry = -1; /* resource management enabled: retry for ever */
	p->window_packets = 128;
	p->ack_every = 32;
	p->unexpected_bytes = 64u << 20;
}

/* Bytes of a packet's payload noted in the working set. */
#define PAYLOAD_NOTED 256

static void deliver(void *ctx, const nm_packet *np)
{
	struct nic_world *world = ctx;
	struct nic_pkt *pkt = np->user_ptr;
	struct nic *nic = np->dst < world->host_count ? world->hosts[np->dst]
						       : NULL;
	struct nic_part *part = nic_part_of_host(world, np->dst);

	/* The working set (arena/working_set.h): what a packet's arrival
	 * reads and writes, and the start of its payload (a long one's is
	 * read in order, which the CPU's own prefetchers follow). */
	nic_pkt_touched(pkt);
	if (pkt->payload_len)
		fs_touch_span(pkt->payload, pkt->payload_len < PAYLOAD_NOTED ? pkt->payload_len
									   : PAYLOAD_NOTED);
	if (nic)
		fs_touch_span(nic, sizeof(*nic));
	fs_touch_span(part, sizeof(*part));
	if (np->flags & NM_PKT_CORRUPTED) {
		part->stats.packets_corrupted++;
	} else if (nic && !nic->dead) {
		part->stats.packets_received++;
		nic_resp_receive(nic, pkt);
	}
	nic_pkt_put(part, pkt);
}

/* The network copies and loses packets; the NIC's packet records are
 * shared by reference and freed when the last copy is gone. */
static void track(void *ctx, const nm_trace_record *rec)
{
	struct nic_world *world = ctx;
	struct nic_pkt *pkt = rec->packet ? rec->packet->user_ptr : NULL;

	/* Recording first: the packet record is still whole. */
	if (world->rec)
		nic_record_track(world->rec, rec);
	switch (rec->kind) {
	case NM_TRACE_TX_START:
		/* Our port took a packet: the NIC may hand it the next. */
		if (rec->node < world->host_count && world->hosts[rec->node])
			nic_tx_port_started(world->hosts[rec->node]);
		break;
	case NM_TRACE_DUPLICATE:
		pkt->refs++;
		break;
	case NM_TRACE_DROP: {
		struct nic_part *part = nic_part_of_port(world, rec->port);

		part->stats.packets_dropped++;
		nic_pkt_put(part, pkt);
		break;
	}
	default:
		break;
	}
}

/* The network's records track wants: its hosts' packets leaving (the next may go), losses and
 * copies anywhere (the NIC's packet records), and deliveries while recording. None of the
 * switches' queueing or starts: a packet crosses a quiet switch with no event there. */
void nic_world_trace_kinds(struct nic_world *world)
{
	uint32_t anywhere = 1u << NM_TRACE_DROP | 1u << NM_TRACE_DUPLICATE;

	nm_network_set_trace_mask(world->net, anywhere | 1u << NM_TRACE_TX_START |
					      (world->rec ? 1u << NM_TRACE_DELIVER : 0));
	nm_network_set_switch_trace_mask(world->net, anywhere);
}

int nic_world_create(const nm_config *cfg,
		     const struct nic_transport_params *transport,
		     struct nic_world **out, nm_error *err)
{
	return nic_world_create_in(NULL, cfg, transport, out, err);
}

/* Parts on lines of their own; depots only where there are several. */
/* Every depot of a world, for what is done to each alike. */
#define DEPOT_KINDS 5
static size_t depots_of(struct nic_depots *d, fs_depot *all[DEPOT_KINDS])
{
	all[0] = &d->pkts;
	all[1] = &d->owned_pkts;
	all[2] = &d->wqes;
	all[3] = &d->pendings;
	all[4] = &d->calls;
	return DEPOT_KINDS;
}

static int create_parts(struct nic_world *world, uint32_t count)
{
	world->parts_memory = fs_mem_calloc(world->arena, count + 1,
					    sizeof(struct nic_part));
	if (!world->parts_memory)
		return -ENOMEM;
	world->parts = (struct nic_part *)(((uintptr_t)world->parts_memory +
					   63) & ~(uintptr_t)63);
	world->part_count = count;
	for (uint32_t i = 0; i < count; i++)
		world->parts[i].world = world;
	if (count == 1)
		return 0;
	world->depots = fs_mem_calloc(world->arena, 1, sizeof(*world->depots));
	if (!world->depots)
		return -ENOMEM;
	fs_depot *all[DEPOT_KINDS];
	for (size_t i = 0; i < depots_of(world->depots, all); i++) {
		int ret = fs_depot_init(all[i], world->arena);

		if (ret)
			return ret;
	}
	return 0;
}

static void free_parts(struct nic_world *world)
{
	if (world->depots) {
		fs_depot *all[DEPOT_KINDS];

		for (size_t i = 0; i < depots_of(world->depots, all); i++)
			fs_depot_fini(all[i]);
		fs_mem_free(world->arena, world->depots);
		world->depots = NULL;
	}
	fs_mem_free(world->arena, world->parts_memory);
	world->parts_memory = NULL;
	world->parts = NULL;
	world->part_count = 0;
}

int nic_world_create_in(fs_arena *arena, const nm_config *cfg,
			const struct nic_transport_params *transport,
			struct nic_world **out, nm_error *err)
{
	return nic_world_create_parts(arena, cfg, transport, NIC_PARTS_ONE, out,
				      err);
}

int nic_world_create_parts(fs_arena *arena, const nm_config *cfg,
			   const struct nic_transport_params *transport,
			   enum nic_world_parts parts, struct nic_world **out,
			   nm_error *err)
{
	struct nic_world *world;
	int ret;

	if (parts != NIC_PARTS_ONE && parts != NIC_PARTS_PER_HOST)
		return nm_error_set(err, -EINVAL,
				    "nic world: no such way to keep parts (%d)",
				    (int)parts);
	/* On a line of its own: its fields that every hold writes share as
	 * few lines as they can (struct nic_world). */
	_Static_assert(_Alignof(struct nic_world) == FS_MEM_LINE,
		       "the world begins a line");
	world = fs_mem_calloc_line(arena, sizeof(*world));
	if (!world)
		return -ENOMEM;
	world->arena = arena;
	world->version.shared = arena != NULL;
	world->cfg = *cfg;
	world->transport = *transport;
	/* A shared world's lock is world->holder (nic_lock.c). */
	if (!arena)
		pthread_mutex_init(&world->lock, NULL);
	nic_sched_init(world);
	ret = nm_engine_create_in(arena, &world->engine);
	if (!ret)
		ret = nm_network_create(world->engine, cfg, &world->net, err);
	if (ret)
		goto fail;
	world->host_count = cfg->topology.hosts;
	world->hosts = fs_mem_calloc(arena, world->host_count,
				     sizeof(*world->hosts));
	world->cm_comm_ids = fs_mem_calloc(arena, world->host_count,
					   sizeof(*world->cm_comm_ids));
	if (!world->hosts || !world->cm_comm_ids) {
		ret = -ENOMEM;
		goto fail;
	}
	if ((ret = create_parts(world, parts == NIC_PARTS_PER_HOST ?
					       world->host_count : 1)))
		goto fail;
	world->mtu = cfg->link.mtu_bytes;
	world->send_overhead_ns = nm_nic_send_overhead_ns(&cfg->nic);
	world->recv_overhead_ns = nm_nic_recv_overhead_ns(&cfg->nic);
	nm_network_set_deliver(world->net, deliver, world);
	nm_network_set_trace(world->net, track, world);
	nic_world_trace_kinds(world);
	*out = world;
	return 0;
fail:
	nic_world_destroy(world);
	return ret;
}

static void free_all_packets(struct nic_world *world, struct nic_pkt *pkt)
{
	while (pkt) {
		struct nic_pkt *next = pkt->alloc_next;

		nic_rec_frame_put(pkt->rec_frame);
		fs_mem_free(world->arena, pkt);
		pkt = next;
	}
}

void nic_world_destroy(struct nic_world *world)
{
	if (!world)
		return;
	nic_record_close(world->rec, NULL);
	world->rec = NULL;
	/* Packet records still in the network are freed with the rest. */
	if (world->net)
		nm_network_destroy(world->net);
	if (world->engine)
		nm_engine_destroy(world->engine);
	for (uint32_t i = 0; i < world->part_count; i++)
		free_all_packets(world, world->parts[i].all_pkts);
	nic_recycled_free(world);
	nic_procs_free(world);
	free_parts(world);
	fs_mem_free(world->arena, world->hosts);
	fs_mem_free(world->arena, world->cm_comm_ids);
	nic_sched_fini(world);
	if (!world->version.shared)
		pthread_mutex_destroy(&world->lock);
	fs_mem_free_line(world->arena, world);
}

void nic_world_leave(struct nic_world *world)
{
	nic_proc_leave(world);
	nic_sched_leave(world);
}

bool nic_world_broken(const struct nic_world *world)
{
	return world->broken;
}

uint32_t nic_world_host_count(const struct nic_world *world)
{
	return world->host_count;
}

uint32_t nic_world_mtu(const struct nic_world *world)
{
	return world->mtu;
}

nm_time_ns nic_world_now(const struct nic_world *world)
{
	return nm_engine_now(world->engine);
}

const nm_config *nic_world_config(const struct nic_world *world)
{
	return &world->cfg;
}

bool nic_world_run_instant(struct nic_world *world)
{
	return nm_engine_run_next_instant(world->engine) > 0;
}

nm_run_result nic_world_run_until(struct nic_world *world,
				  bool (*pred)(void *ctx), void *ctx,
				  nm_time_ns deadline)
{
	if (!pred) {
		nm_engine_run_until(world->engine, deadline);
		return deadline == NM_TIME_NEVER ? NM_RUN_IDLE : NM_RUN_DEADLINE;
	}
	return nm_engine_run_until_pred(world->engine, pred, ctx, deadline);
}

void nic_world_advance(struct nic_world *world, nm_time_ns ns)
{
	nm_time_ns now = nm_engine_now(world->engine);

	nm_engine_run_until(world->engine,
			    ns > NM_TIME_NEVER - now ? NM_TIME_NEVER : now + ns);
}

void nic_world_stats(const struct nic_world *world, struct nic_stats *out)
{
	enum { FIELDS = sizeof(*out) / sizeof(uint64_t) };
	uint64_t sum[FIELDS] = { 0 };

	_Static_assert(sizeof(*out) % sizeof(uint64_t) == 0, "counters only");
	for (uint32_t i = 0; i < world->part_count; i++) {
		uint64_t part[FIELDS];

		memcpy(part, &world->parts[i].stats, sizeof(part));
		for (size_t f = 0; f < FIELDS; f++)
			sum[f] += part[f];
	}
	memcpy(out, sum, sizeof(*out));
	out->threads_out_of_time += world->threads_out_of_time;
	out->pollers_moved += __atomic_load_n(&world->pollers_moved, __ATOMIC_RELAXED);
}

/* One engine for every host; a partitioned world (MULTIPROCESS.md) will
 * give each host its partition's. */
nm_engine *nic_world_engine_of(const struct nic_world *world, uint32_t host)
{
	(void)host;
	return world->engine;
}

int nic_schedule(struct nic *nic, nm_time_ns delay, nm_event_fn fn, void *ctx,
		 uint64_t arg, nm_event_id *id)
{
	return nm_engine_schedule_after(nic->engine, delay, nic->host, fn, ctx,
					arg, id);
}

int nic_world_set_link(struct nic_world *world, uint32_t link, bool up)
{
	return nm_network_set_link_up(world->net, link, up);
}

int nic_world_set_loss(struct nic_world *world, double rate)
{
	const nm_topology *topo = nm_network_topology(world->net);
	nm_impair_params params = world->cfg.impair;
	nm_error err;

	params.loss_rate = rate;
	for (uint32_t port = 0; port < topo->port_count; port++) {
		int ret = nm_network_set_port_impairments(world->net, port,
							  &params, &err);
		if (ret)
			return ret;
	}
	world->cfg.impair = params;
	return 0;
}

bool nic_world_next_event(struct nic_world *world, nm_time_ns *when)
{
	return nm_engine_next_time(world->engine, when);
}
