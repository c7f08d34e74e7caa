/* Building the network from a configuration, per-port settings, link state, queries. The packet
 * state machine itself is in forward.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "netmodel/nm_cost.h"
#include "netmodel/nm_link.h"
#include "netmodel/nm_prng.h"
#include "network_internal.h"

/* Children of the seed in the random-stream tree (nm_prng.h). */
enum stream_root {
	STREAM_IMPAIRMENT = 1,
};

static void apply_link_params(nm_network *net, egress_port *p, const nm_link_params *link)
{
	p->bandwidth_bps = link->bandwidth_bps;
	p->latency_ns = link->latency_ns;
	p->mtu_bytes = link->mtu_bytes;
	p->header_bytes = link->header_bytes;
	p->arrive_delay_ns = link->latency_ns + (p->peer_is_switch ? net->cfg.sw.latency_ns : 0);
	p->cached_bytes = 0;
	p->cached_ser_ns = 0;
}

static void init_port(nm_network *net, uint32_t id)
{
	const nm_topology_port *tp = &net->topo.ports[id];
	egress_port *p = &net->ports[id];
	memset(p, 0, sizeof(*p));
	p->node = tp->node;
	p->peer_port = tp->peer_port;
	p->peer_node = net->topo.ports[tp->peer_port].node;
	p->link = tp->link;
	p->owner_is_switch = net->topo.nodes[p->node].kind == NM_NODE_SWITCH;
	p->peer_is_switch = net->topo.nodes[p->peer_node].kind == NM_NODE_SWITCH;
	p->queue_head = p->queue_tail = NO_INDEX;
	p->in_service = NO_INDEX;
	p->waiter_head = p->waiter_tail = p->next_waiter = NO_INDEX;
	p->up = true;
	p->priority = id; /* a host's port: its host's id (topology.h's numbering) */
	if (credit_mode(net) && p->peer_is_switch)
		p->credits = net->cfg.sw.buffer_bytes;
	apply_link_params(net, p, &net->cfg.link);
}

/* Credit mode: a packet bigger than the switch's buffer for its link would wait for ever. */
static int check_fits_credits(const nm_network *net, const nm_link_params *link, nm_error *err)
{
	uint64_t largest = (uint64_t)link->mtu_bytes + link->header_bytes + NM_PACKET_MAX_EXTRA_BYTES;

	if (credit_mode(net) && net->cfg.sw.buffer_bytes < largest)
		return nm_error_set(err, -EINVAL,
				    "switch.buffer_bytes: %" PRIu64 " is below the largest packet, %" PRIu64
				    " B, which would never get credits (allowed: 0, or at least that)",
				    net->cfg.sw.buffer_bytes, largest);
	return 0;
}

/* The host whose partition port `id` belongs to (nm_network_create_parallel): its own host's
 * for a host's port, the host below for a switch's port towards one, and between the switches of
 * a fat tree the first host under the leaf at either end. */
static uint32_t port_host(const nm_network *net, uint32_t id)
{
	const egress_port *p = &net->ports[id];
	uint32_t hosts = net->topo.params.hosts;
	uint32_t leaf;

	if (p->node < hosts)
		return p->node;
	if (p->peer_node < hosts)
		return p->peer_node;
	leaf = p->peer_node < hosts + hosts / net->topo.params.hosts_per_leaf ? p->peer_node
									      : p->node;
	return (leaf - hosts) * net->topo.params.hosts_per_leaf;
}

/* Creates the impairment state of a port on first need. */
static int port_impair(nm_network *net, uint32_t id, impair_state **out, nm_error *err)
{
	egress_port *p = &net->ports[id];
	if (!p->impair) {
		impair_state *state = fs_mem_alloc(net->arena, sizeof(*state));
		if (!state)
			return nm_error_set(err, -ENOMEM, "impairments: out of memory");
		uint64_t path[] = {STREAM_IMPAIRMENT, id};
		int rc = impair_state_init(state, net->arena, &net->cfg.impair,
					   nm_prng_key_path(net->cfg.seed, path, 2), err);
		if (rc) {
			fs_mem_free(net->arena, state);
			return rc;
		}
		p->impair = state;
	}
	*out = p->impair;
	return 0;
}

static int setup_impairments(nm_network *net, nm_error *err)
{
	impair_state *state;
	int rc;
	if (nm_impair_params_active(&net->cfg.impair))
		for (uint32_t id = 0; id < net->topo.port_count; id++)
			if ((rc = port_impair(net, id, &state, err)))
				return rc;
	/* Config drops name the nth packet of a flow as it leaves its source host. */
	for (uint32_t i = 0; i < net->cfg.drop_count; i++) {
		for (uint32_t host = 0; host < net->topo.params.hosts; host++) {
			uint32_t id = net->topo.nodes[host].first_port;
			if ((rc = port_impair(net, id, &state, err)))
				return rc;
			if (impair_add_rule(state, net->cfg.drops[i].flow, net->cfg.drops[i].nth))
				return nm_error_set(err, -ENOMEM, "loss.drop: out of memory");
		}
	}
	return 0;
}

static int setup_faults(nm_network *net, nm_error *err)
{
	for (uint32_t i = 0; i < net->cfg.fault_count; i++) {
		const nm_link_fault *f = &net->cfg.faults[i];
		if (f->link >= net->topo.link_count)
			return nm_error_set(err, -EINVAL,
					    "faults.link_down: link %" PRIu32
					    " does not exist (allowed: 0 to %" PRIu32 ")",
					    f->link, net->topo.link_count - 1);
		int rc = nm_network_schedule_link_state(net, f->link, f->down_at, false);
		if (!rc && f->up_at != NM_TIME_NEVER)
			rc = nm_network_schedule_link_state(net, f->link, f->up_at, true);
		if (rc)
			return nm_error_set(err, rc,
					    "faults.link_down: link %" PRIu32 " at %" PRIu64
					    " ns cannot be scheduled (in the past?)",
					    f->link, f->down_at);
	}
	return 0;
}

/* Partition 0 alone, or the partitions of `par` with host h in partition
 * host_partition[h] (NULL: h % the number of partitions). */
static int place_ports(nm_network *net, const uint32_t *host_partitions, nm_error *err)
{
	for (uint32_t id = 0; id < net->topo.port_count; id++) {
		egress_port *p = &net->ports[id];
		uint32_t host = port_host(net, id);

		p->partition = !net->par ? 0
			: host_partitions ? host_partitions[host] : host % net->part_count;
		if (p->partition >= net->part_count)
			return nm_error_set(err, -EINVAL,
					    "network: host %" PRIu32 " is given partition %" PRIu32
					    " (allowed: 0 to %" PRIu32 ")",
					    host, p->partition, net->part_count - 1);
		p->engine = net->parts[p->partition].engine;
	}
	return 0;
}

/* The least time from an event of port p's partition to one it causes in another, over p's
 * direction of its link: a port into a switch hands its packets to the switch's egress port,
 * wherever that runs, after the link and the switch's forwarding (a port towards a host delivers
 * in that host's partition, its own); in credit mode a switch's port carries the credits of the
 * packets that came in over its link back to their transmitter, after the link alone. */
static nm_time_ns crossing_hop_ns(const nm_network *net, const egress_port *p,
				  nm_time_ns latency_ns)
{
	nm_time_ns hop = NM_TIME_NEVER;

	if (p->peer_is_switch)
		hop = latency_ns + net->cfg.sw.latency_ns;
	if (credit_mode(net) && p->owner_is_switch && latency_ns < hop)
		hop = latency_ns;
	return hop;
}

nm_time_ns nm_network_least_crossing_ns(const nm_network *net)
{
	nm_time_ns least = NM_TIME_NEVER;

	for (uint32_t id = 0; id < net->topo.port_count; id++) {
		nm_time_ns hop = crossing_hop_ns(net, &net->ports[id], net->ports[id].latency_ns);

		if (hop < least)
			least = hop;
	}
	return least;
}

static int check_lookahead(const nm_network *net, uint32_t id, nm_time_ns latency_ns,
			   nm_error *err)
{
	nm_time_ns hop = crossing_hop_ns(net, &net->ports[id], latency_ns);
	nm_time_ns lookahead = nm_parallel_lookahead(net->par);

	if (hop < lookahead)
		return nm_error_set(err, -EINVAL,
				    "link.latency: %" PRIu64 " ns to the next hop (port %" PRIu32
				    ") is below the lookahead, %" PRIu64 " ns",
				    hop, id, lookahead);
	return 0;
}

/* What a partitioned network needs of its configuration: every hop at least a lookahead long
 * (an arrival is sent to another partition when its packet starts or ends), no pause flow
 * control (a port reads the next hop's room at the instant it starts), and a switch between
 * hosts. */
static int check_partitionable(const nm_network *net, nm_error *err)
{
	int rc;

	if (net->cfg.sw.flow_control == NM_FLOW_CONTROL_PAUSE)
		return nm_error_set(err, -EINVAL,
				    "switch.flow_control: pause cannot be partitioned (allowed: drop, credit)");
	/* A delivery has its host's priority: sent from the other host's partition, it would meet
	 * the host's own events of its instant in another order than on one engine. */
	if (net->topo.params.kind == NM_TOPO_PAIR && net->part_count > 1)
		return nm_error_set(err, -EINVAL,
				    "topology.kind: pair cannot be partitioned (allowed: star, fattree)");
	for (uint32_t id = 0; id < net->topo.port_count; id++)
		if ((rc = check_lookahead(net, id, net->ports[id].latency_ns, err)))
			return rc;
	return 0;
}

static int create(nm_engine *engine, nm_parallel *par, const uint32_t *host_partitions,
		  const nm_config *cfg, nm_network **out, nm_error *err)
{
	int rc = nm_config_check(cfg, err);
	if (rc)
		return rc;
	fs_arena *arena = nm_engine_arena(engine ? engine : nm_parallel_engine(par, 0));
	nm_network *net = fs_mem_calloc(arena, 1, sizeof(*net));
	if (!net)
		return nm_error_set(err, -ENOMEM, "network: out of memory");
	net->arena = arena;
	net->engine = engine;
	net->par = par;
	net->part_count = par ? nm_parallel_count(par) : 1;
	net->cfg = *cfg;
	if ((rc = nm_topology_init_in(&net->topo, arena, &cfg->topology, err)))
		goto fail;
	net->ports = fs_mem_calloc(arena, net->topo.port_count, sizeof(*net->ports));
	net->chunks = fs_mem_calloc(arena, PACKET_CHUNKS_MAX, sizeof(*net->chunks));
	net->parts_memory = fs_mem_calloc(arena, net->part_count + 1, sizeof(network_part));
	if (!net->ports || !net->chunks || !net->parts_memory) {
		rc = nm_error_set(err, -ENOMEM, "network: out of memory");
		goto fail;
	}
	net->parts = (network_part *)(((uintptr_t)net->parts_memory + 63) & ~(uintptr_t)63);
	for (uint32_t i = 0; i < net->part_count; i++) {
		net->parts[i].engine = par ? nm_parallel_engine(par, i) : engine;
		net->parts[i].free_packet = NO_INDEX;
		net->parts[i].spare_packet = NO_INDEX;
	}
	if (par && net->part_count > 1) {
		net->depot = fs_mem_calloc(arena, 1, sizeof(*net->depot));
		if (!net->depot || (rc = fs_depot_init(net->depot, arena))) {
			fs_mem_free(arena, net->depot);
			net->depot = NULL;
			rc = nm_error_set(err, rc ? rc : -ENOMEM, "network: out of memory");
			goto fail;
		}
	}
	for (uint32_t id = 0; id < net->topo.port_count; id++)
		init_port(net, id);
	if ((rc = place_ports(net, host_partitions, err)) ||
	    (rc = check_fits_credits(net, &cfg->link, err)) ||
	    (par && (rc = check_partitionable(net, err))) ||
	    (rc = setup_impairments(net, err)) || (rc = setup_faults(net, err)))
		goto fail;
	network_refresh_instant(net);
	*out = net;
	return 0;
fail:
	nm_network_destroy(net);
	return rc;
}

int nm_network_create(nm_engine *engine, const nm_config *cfg, nm_network **out, nm_error *err)
{
	return create(engine, NULL, NULL, cfg, out, err);
}

int nm_network_create_parallel(nm_parallel *par, const uint32_t *host_partitions,
			       const nm_config *cfg, nm_network **out, nm_error *err)
{
	return create(NULL, par, host_partitions, cfg, out, err);
}

uint32_t nm_network_host_partition(const nm_network *net, uint32_t host)
{
	return host < net->topo.params.hosts ? host_partition(net, host) : UINT32_MAX;
}

uint32_t nm_network_port_partition(const nm_network *net, uint32_t port)
{
	return port < net->topo.port_count ? net->ports[port].partition : UINT32_MAX;
}

void nm_network_destroy(nm_network *net)
{
	if (!net)
		return;
	if (net->ports) {
		for (uint32_t id = 0; id < net->topo.port_count; id++) {
			if (net->ports[id].impair) {
				impair_state_release(net->ports[id].impair);
				fs_mem_free(net->arena, net->ports[id].impair);
			}
		}
	}
	fs_arena *arena = net->arena;

	if (net->chunks)
		for (uint32_t c = 0; c < net->chunk_count; c++)
			fs_mem_free(arena, net->chunks[c]);
	fs_mem_free(arena, net->chunks);
	if (net->depot) /* its batches are slots of the chunks */
		fs_depot_fini(net->depot);
	fs_mem_free(arena, net->depot);
	fs_mem_free(arena, net->ports);
	fs_mem_free(arena, net->parts_memory);
	nm_topology_release(&net->topo);
	fs_mem_free(arena, net);
}

void nm_network_set_deliver(nm_network *net, nm_deliver_fn fn, void *ctx)
{
	net->deliver = NM_CODE(fn);
	net->deliver_ctx = ctx;
}

/* The kinds traced changed: a packet that passes through a switch has no records there, and one
 * that coasts no end of its own to trace (forward.c). */
static void traces_changed(nm_network *net)
{
	ports_settle_ahead(net);
	if (!net->trace ||
	    !((net->trace_mask | net->switch_trace_mask) >> NM_TRACE_TX_END & 1u))
		return;
	for (uint32_t id = 0; id < net->topo.port_count; id++)
		port_stop_coasting(net, id);
}

void nm_network_set_trace(nm_network *net, nm_trace_fn fn, void *ctx)
{
	net->trace = NM_CODE(fn);
	net->trace_ctx = ctx;
	net->trace_mask = net->switch_trace_mask = UINT32_MAX;
	traces_changed(net);
}

nm_engine *nm_network_engine(const nm_network *net)
{
	return net->engine;
}

fs_arena *nm_network_arena(const nm_network *net)
{
	return net->arena;
}

const nm_topology *nm_network_topology(const nm_network *net)
{
	return &net->topo;
}

const nm_config *nm_network_config(const nm_network *net)
{
	return &net->cfg;
}

static bool is_host(const nm_network *net, uint32_t node)
{
	return node < net->topo.params.hosts;
}

int nm_network_inject(nm_network *net, const nm_packet *packet)
{
	if (!is_host(net, packet->src) || !is_host(net, packet->dst) || packet->src == packet->dst)
		return -EINVAL;
	uint32_t port_id = net->topo.nodes[packet->src].first_port;
	const egress_port *p = &net->ports[port_id];
	if (packet->bytes > (uint64_t)p->mtu_bytes + p->header_bytes + NM_PACKET_MAX_EXTRA_BYTES)
		return -EMSGSIZE;
	uint32_t index;
	if (packet_alloc(net, p->partition, &index))
		return -ENOMEM;
	packet_slot *slot = packet_at(net, index);
	note_hop(slot, p);
	slot->pkt = *packet;
	slot->pkt.injected_at = nm_engine_now(p->engine);
	net->parts[p->partition].stats.injected++;
	if (net->trace && (net->trace_mask >> NM_TRACE_INJECT & 1u))
		emit_trace(net, p->engine, NM_TRACE_INJECT, 0, packet->src, port_id, &slot->pkt);
	if (net->instant)
		instant_send(net, index);
	else
		port_enqueue(net, port_id, index);
	return 0;
}

int nm_network_set_port_link(nm_network *net, uint32_t port_id, const nm_link_params *link,
			     nm_error *err)
{
	if (port_id >= net->topo.port_count)
		return nm_error_set(err, -EINVAL, "port %" PRIu32 " does not exist (allowed: 0 to %" PRIu32 ")",
				    port_id, net->topo.port_count - 1);
	if (link->mtu_bytes == 0)
		return nm_error_set(err, -EINVAL, "link.mtu: 0 is out of range (allowed: >= 1)");
	egress_port *p = &net->ports[port_id];
	int rc = check_fits_credits(net, link, err);
	if (rc || (net->par && (rc = check_lookahead(net, port_id, link->latency_ns, err))))
		return rc;
	port_stop_coasting(net, port_id); /* its arrival used the old latency */
	apply_link_params(net, p, link);
	network_refresh_instant(net);
	return 0;
}

int nm_network_set_port_impairments(nm_network *net, uint32_t port_id,
				    const nm_impair_params *params, nm_error *err)
{
	if (port_id >= net->topo.port_count)
		return nm_error_set(err, -EINVAL, "port %" PRIu32 " does not exist (allowed: 0 to %" PRIu32 ")",
				    port_id, net->topo.port_count - 1);
	impair_state *state;
	port_stop_coasting(net, port_id); /* its fate is decided at its end */
	int rc = port_impair(net, port_id, &state, err);
	if (rc)
		return rc;
	/* Keep the flow records and scripted rules; only the rates change. */
	impair_state fresh;
	if ((rc = impair_state_init(&fresh, net->arena, params, state->key, err)))
		return rc;
	fresh.flows = state->flows;
	fresh.flow_cap = state->flow_cap;
	fresh.flow_count = state->flow_count;
	fresh.rules = state->rules;
	fresh.rule_count = state->rule_count;
	fresh.rule_cap = state->rule_cap;
	*state = fresh;
	network_refresh_instant(net);
	return 0;
}

int nm_network_add_scripted_drop(nm_network *net, uint32_t port_id, uint64_t flow, uint64_t nth)
{
	if (port_id >= net->topo.port_count || nth == 0)
		return -EINVAL;
	impair_state *state;
	port_stop_coasting(net, port_id);
	int rc = port_impair(net, port_id, &state, NULL);

	network_refresh_instant(net);
	return rc ? rc : impair_add_rule(state, flow, nth);
}

int nm_network_set_link_up(nm_network *net, uint32_t link, bool up)
{
	if (link >= net->topo.link_count)
		return -EINVAL;
	for (int side = 0; side < 2; side++) {
		uint32_t port_id = net->topo.link_ports[2 * link + side];

		port_stop_coasting(net, port_id);
		net->ports[port_id].up = up;
	}
	network_refresh_instant(net);
	return 0;
}

void network_refresh_instant(nm_network *net)
{
	bool instant = true;

	for (uint32_t id = 0; instant && id < net->topo.port_count; id++) {
		const egress_port *p = &net->ports[id];

		instant = p->bandwidth_bps == NM_BANDWIDTH_INFINITE &&
			  p->arrive_delay_ns == 0 && !p->impair && p->up;
	}
	net->instant = instant && !net->par;
}

int nm_network_schedule_link_state(nm_network *net, uint32_t link, nm_time_ns at, bool up)
{
	if (link >= net->topo.link_count)
		return -EINVAL;
	if (net->par) {
		for (int side = 0; side < 2; side++) {
			uint32_t port_id = net->topo.link_ports[2 * link + side];
			const egress_port *p = &net->ports[port_id];
			int rc = nm_engine_schedule(p->engine, at, p->priority, port_state_event, net,
						    ((uint64_t)port_id << 1) | (up ? 1 : 0), NULL);
			if (rc)
				return rc;
		}
		return 0;
	}
	uint32_t node = net->topo.ports[net->topo.link_ports[2 * link]].node;
	return nm_engine_schedule(net->engine, at, node, link_state_event, net,
				  ((uint64_t)link << 1) | (up ? 1 : 0), NULL);
}

bool nm_network_link_is_up(const nm_network *net, uint32_t link)
{
	return link < net->topo.link_count && net->ports[net->topo.link_ports[2 * link]].up &&
	       net->ports[net->topo.link_ports[2 * link + 1]].up;
}

int nm_network_path(const nm_network *net, uint32_t src, uint32_t dst, uint64_t flow,
		    nm_path *out)
{
	if (!is_host(net, src) || !is_host(net, dst) || src == dst)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->mtu_bytes = UINT32_MAX;
	uint32_t node = src;
	while (node != dst) {
		if (out->hop_count == NM_TOPOLOGY_MAX_HOPS)
			return -ELOOP; /* cannot happen with the built-in topologies */
		uint32_t local = nm_topology_route(&net->topo, node, flow, src, dst);
		uint32_t port_id = net->topo.nodes[node].first_port + local;
		const egress_port *p = &net->ports[port_id];
		out->hops[out->hop_count++] = (nm_path_hop){
			.port = port_id,
			.bandwidth_bps = p->bandwidth_bps,
			.latency_ns = p->latency_ns,
			.forward_ns = p->arrive_delay_ns - p->latency_ns,
		};
		if (p->mtu_bytes < out->mtu_bytes)
			out->mtu_bytes = p->mtu_bytes;
		if (p->header_bytes > out->header_bytes)
			out->header_bytes = p->header_bytes;
		node = p->peer_node;
	}
	return 0;
}

nm_time_ns nm_network_message_latency_ns(const nm_network *net, uint32_t src, uint32_t dst,
					 uint64_t flow, uint64_t payload_bytes)
{
	nm_path path;
	if (nm_network_path(net, src, dst, flow, &path))
		return NM_TIME_NEVER;
	return nm_nic_send_overhead_ns(&net->cfg.nic) + nm_path_message_wire_ns(&path, payload_bytes) +
	       nm_nic_recv_overhead_ns(&net->cfg.nic);
}

void nm_network_stats_get(const nm_network *net, nm_network_stats *out)
{
	*out = net->parts[0].stats;
	if (!net->par)
		return;
	for (uint32_t i = 1; i < net->part_count; i++) {
		const nm_network_stats *s = &net->parts[i].stats;

		out->injected += s->injected;
		out->delivered += s->delivered;
		out->duplicated += s->duplicated;
		out->corrupted += s->corrupted;
		out->ecn_marked += s->ecn_marked;
		for (int r = 0; r < NM_DROP_REASON_COUNT; r++)
			out->dropped[r] += s->dropped[r];
		out->in_flight += s->in_flight; /* wraps back: see network_part */
	}
	out->peak_in_flight = out->in_flight; /* not kept across partitions (nm_network.h) */
}

int nm_network_port_stats_get(const nm_network *net, uint32_t port_id, nm_port_stats *out)
{
	if (port_id >= net->topo.port_count)
		return -EINVAL;
	port_stats_now(net, port_id, out);
	return 0;
}

void nm_network_note(const nm_network *net)
{
	fs_touch_span(net->parts, net->part_count * sizeof(*net->parts));
}

size_t nm_network_memory_bytes(const nm_network *net)
{
	size_t bytes = sizeof(*net) + (net->part_count + 1) * sizeof(network_part) +
		       PACKET_CHUNKS_MAX * sizeof(*net->chunks) +
		       net->topo.port_count * (sizeof(egress_port) + sizeof(nm_topology_port)) +
		       net->topo.node_count * sizeof(nm_topology_node) +
		       (size_t)net->chunk_count * PACKET_CHUNK_SIZE * sizeof(packet_slot);
	for (uint32_t id = 0; id < net->topo.port_count; id++)
		if (net->ports[id].impair)
			bytes += sizeof(impair_state) + impair_memory_bytes(net->ports[id].impair);
	if (net->depot)
		bytes += sizeof(*net->depot) + (size_t)net->depot->cap * sizeof(fs_depot_batch);
	return bytes;
}

void nm_network_set_trace_mask(nm_network *net, uint32_t mask)
{
	net->trace_mask = net->switch_trace_mask = mask;
	traces_changed(net);
}

void nm_network_set_switch_trace_mask(nm_network *net, uint32_t mask)
{
	net->switch_trace_mask = mask;
	traces_changed(net);
}
