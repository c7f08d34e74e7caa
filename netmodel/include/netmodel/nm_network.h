/* The packet-level network: hosts, links, switches and their queues on one nm_engine.
 *
 * Life of a packet. nm_network_inject puts it at the tail of its source host's egress queue (hosts
 * have unbounded queues: pacing is the NIC model's business). A port sends its queue in FIFO
 * order, one packet at a time: serialization takes nm_serialization_ns(bytes, bandwidth). When the
 * last bit leaves, the link direction's impairments decide the packet's fate; a surviving packet
 * arrives latency_ns later. At a switch it is forwarded after the switch latency into the FIFO of
 * the egress port chosen by nm_topology_route (tail drop or pause when the buffer is full, ECN mark
 * above the threshold). At the destination host the delivery callback gets it.
 *
 * Events have as engine priority the id of the port where they happen (a host's port has its
 * host's id), a delivery its host's id, an arrival at a switch the id of the port that sent it;
 * simultaneous events are ordered by that, then by scheduling order (nm_engine.h).
 *
 * Packets live in a pool that grows with the number in flight and is reused; the memory of the
 * model is O(nodes + ports + packets in flight + flows seen by impaired links).
 */
#ifndef NM_NETWORK_H
#define NM_NETWORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netmodel/nm_config.h"
#include "netmodel/nm_engine.h"
#include "netmodel/nm_error.h"
#include "netmodel/nm_impair.h"
#include "netmodel/nm_packet.h"
#include "netmodel/nm_parallel.h"
#include "netmodel/nm_path.h"
#include "netmodel/nm_time.h"
#include "netmodel/nm_topology.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nm_network nm_network;

typedef enum nm_drop_reason {
	NM_DROP_LOSS = 0,      /* Bernoulli loss */
	NM_DROP_BURST = 1,     /* Gilbert-Elliott burst */
	NM_DROP_SCRIPTED = 2,  /* "drop the nth packet of flow f" */
	NM_DROP_LINK_DOWN = 3, /* sent while the link was down */
	NM_DROP_BUFFER = 4,    /* tail drop at a full egress queue */
	NM_DROP_REASON_COUNT
} nm_drop_reason;

/* Trace records: what happened to which packet, where and when. */
typedef enum nm_trace_kind {
	NM_TRACE_INJECT = 0,   /* accepted by nm_network_inject; port = host's egress */
	NM_TRACE_TX_START = 1, /* first bit leaves `port` */
	NM_TRACE_TX_END = 2,   /* last bit left `port` and the packet survived its impairments */
	NM_TRACE_DROP = 3,     /* lost at `port` (reason set) */
	NM_TRACE_ENQUEUE = 4,  /* joined the queue of switch egress `port` (flags show ECN marks) */
	NM_TRACE_DELIVER = 5,  /* handed to the delivery callback at host `node` */
	NM_TRACE_PAUSE = 6,    /* `port` stopped: the next hop's queue is full (pause mode) */
	NM_TRACE_RESUME = 7,   /* `port` restarted */
	NM_TRACE_DUPLICATE = 8 /* `packet` is a copy just made at `port` */
} nm_trace_kind;

typedef struct nm_trace_record {
	nm_time_ns time;
	nm_trace_kind kind;
	nm_drop_reason reason; /* NM_TRACE_DROP only */
	uint32_t node;
	uint32_t port;            /* global port id, UINT32_MAX when not applicable */
	const nm_packet *packet;  /* NULL for PAUSE / RESUME */
} nm_trace_record;

typedef void (*nm_trace_fn)(void *ctx, const nm_trace_record *record);

/* Called when a packet reaches its destination host. The record is valid during the call only. */
typedef void (*nm_deliver_fn)(void *ctx, const nm_packet *packet);

/* Builds the topology of cfg with cfg's link, switch, impairment and NIC parameters on `engine`
 * (which the network does not own), scripted drops at the source hosts and the link faults as
 * scheduled events. Returns 0, -EINVAL (message says why) or -ENOMEM. */
int nm_network_create(nm_engine *engine, const nm_config *cfg, nm_network **out, nm_error *err);

/* The same network on the partitions of a parallel simulation (nm_parallel.h), in the arena of
 * its engines. Host h's events run in partition host_partitions[h] (NULL: h modulo the number
 * of partitions), and so do those of the switch port towards it; a port between two switches
 * goes with the first host under the leaf at either end. A packet for another partition is sent
 * there with its arrival at the next hop, so every hop that may cross must be at least the
 * lookahead long (nm_network_least_crossing_ns; -EINVAL otherwise, as for pause flow control,
 * which looks at the next hop's buffer at once, and for two hosts without a switch,
 * NM_TOPO_PAIR; credits, which come back over a link, are partitioned, and then every link's
 * direction out of a switch must be at least the lookahead long).
 * Every partition runs what it would run in a network on one engine, in the same order: its
 * trace records are those of its ports and hosts, in the order one engine gives them.
 *
 * In such a network: inject a packet from its source host's partition, in one of its events or
 * while its program acts (nm_parallel.h); schedule link changes (each direction then changes in
 * its own partition), and set ports, impairments and the trace callback, before running; the trace and delivery callbacks are
 * called from every partition's runner, at once; nm_network_engine is NULL, and the stats'
 * peak_in_flight is what is in flight now. A packet bound for another partition never coasts
 * (forward.c): its arrival, once sent, cannot be taken back. */
int nm_network_create_parallel(nm_parallel *par, const uint32_t *host_partitions,
			       const nm_config *cfg, nm_network **out, nm_error *err);
/* The least time between an event and one it causes in another partition, were the network
 * partitioned: a lookahead it allows. A packet reaches the next switch after its link and the
 * switch's forwarding (it is delivered to a host in that host's own partition); credits come back
 * from a switch over the link alone. NM_TIME_NEVER when nothing can cross (a pair of hosts). */
nm_time_ns nm_network_least_crossing_ns(const nm_network *net);
/* The partition host `host`'s events run in (0 for a network on one engine; UINT32_MAX for
 * no such host). */
uint32_t nm_network_host_partition(const nm_network *net, uint32_t host);
/* The partition port `port`'s events run in, and its trace records come from (UINT32_MAX for no
 * such port). */
uint32_t nm_network_port_partition(const nm_network *net, uint32_t port);

void nm_network_destroy(nm_network *net);

void nm_network_set_deliver(nm_network *net, nm_deliver_fn fn, void *ctx);
void nm_network_set_trace(nm_network *net, nm_trace_fn fn, void *ctx);
/* Which records the trace callback gets: bit (1u << kind) per nm_trace_kind (all by default,
 * and again after each nm_network_set_trace). Skipping unwanted kinds saves a call per event. */
void nm_network_set_trace_mask(nm_network *net, uint32_t mask);
/* The same for records at switches (node: a switch), after nm_network_set_trace_mask, which
 * sets both. A packet that crosses a switch where neither its queueing nor its start is wanted
 * (NM_TRACE_ENQUEUE, NM_TRACE_TX_START), and finds the port it leaves through idle, crosses it
 * with no event there: what happens, and when, is the same. */
void nm_network_set_switch_trace_mask(nm_network *net, uint32_t mask);

/* Copies *packet into the network at its src host, now. -EINVAL: src/dst not distinct hosts;
 * -EMSGSIZE: bytes above the source link's mtu + header_bytes +
 * NM_PACKET_MAX_EXTRA_BYTES; -ENOMEM. (A 0-byte packet is
 * allowed: it is what a 0-byte message becomes on a link without framing, as in "ideal".) */
int nm_network_inject(nm_network *net, const nm_packet *packet);

nm_engine *nm_network_engine(const nm_network *net);
/* The arena the network lives in (its engine's), NULL for process memory. */
fs_arena *nm_network_arena(const nm_network *net);
const nm_topology *nm_network_topology(const nm_network *net);
const nm_config *nm_network_config(const nm_network *net);

/* Per-port overrides after creation (port is a global port id: one link direction). */
int nm_network_set_port_link(nm_network *net, uint32_t port, const nm_link_params *link,
			     nm_error *err);
int nm_network_set_port_impairments(nm_network *net, uint32_t port,
				    const nm_impair_params *params, nm_error *err);
/* Drop the nth (from 1) packet of `flow` that finishes transmission at `port`. */
int nm_network_add_scripted_drop(nm_network *net, uint32_t port, uint64_t flow, uint64_t nth);

/* Link state, both directions. Changing it now, or at a future time through the engine. */
int nm_network_set_link_up(nm_network *net, uint32_t link, bool up);
int nm_network_schedule_link_state(nm_network *net, uint32_t link, nm_time_ns at, bool up);
bool nm_network_link_is_up(const nm_network *net, uint32_t link);

/* The route a packet of `flow` from src to dst takes, with each hop's parameters. */
int nm_network_path(const nm_network *net, uint32_t src, uint32_t dst, uint64_t flow,
		    nm_path *out);

/* Closed-form latency of an isolated message: post at the source to completion at the
 * destination = nic send overhead + nm_path_message_wire_ns + nic receive overhead. Returns
 * NM_TIME_NEVER for invalid hosts. */
nm_time_ns nm_network_message_latency_ns(const nm_network *net, uint32_t src, uint32_t dst,
					 uint64_t flow, uint64_t payload_bytes);

typedef struct nm_network_stats {
	uint64_t injected;
	uint64_t delivered;
	uint64_t duplicated;
	uint64_t corrupted;
	uint64_t ecn_marked;
	uint64_t dropped[NM_DROP_REASON_COUNT];
	uint64_t in_flight;      /* packets held by the model now */
	uint64_t peak_in_flight;
} nm_network_stats;

typedef struct nm_port_stats {
	uint64_t tx_packets; /* transmissions completed (including ones then lost on the link) */
	uint64_t tx_bytes;
	uint64_t dropped;    /* at this port, any reason */
	uint64_t ecn_marked;
	uint64_t queued_bytes; /* now, including the packet being sent */
	uint64_t peak_queued_bytes;
	uint64_t pauses;
} nm_port_stats;

void nm_network_stats_get(const nm_network *net, nm_network_stats *out);
int nm_network_port_stats_get(const nm_network *net, uint32_t port, nm_port_stats *out);

/* Bytes held by the network's own arrays (packet pool, ports, flow tables), for accounting. */
size_t nm_network_memory_bytes(const nm_network *net);

/* Notes in the calling thread's working set (arena/working_set.h) what
 * every run touches: the partitions' free lists and counters. Each event
 * notes its packet and port. */
void nm_network_note(const nm_network *net);

#ifdef __cplusplus
}
#endif

#endif
