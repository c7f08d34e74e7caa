/* Structures shared by the network's files: network.c (building, settings, queries) and
 * forward.c (the packet state machine). Not a public header. */
#ifndef NM_NETWORK_INTERNAL_H
#define NM_NETWORK_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "arena/depot.h"
#include "arena/working_set.h"

#include "impair_state.h"
#include "netmodel/nm_code.h"
#include "netmodel/nm_config.h"
#include "netmodel/nm_engine.h"
#include "netmodel/nm_network.h"
#include "netmodel/nm_parallel.h"
#include "netmodel/nm_topology.h"

#define NO_INDEX UINT32_MAX

/* Packets live in fixed-size chunks so a packet's address never changes while it is in flight,
 * even when the pool grows inside a callback. The directory of chunks has a fixed size, so that
 * the partitions of a parallel network can grow the pool while others read it. */
#define PACKET_CHUNK_BITS 12
#define PACKET_CHUNK_SIZE (UINT32_C(1) << PACKET_CHUNK_BITS)
#define PACKET_CHUNKS_MAX (UINT32_C(1) << 13)

typedef struct packet_slot {
	nm_packet pkt;
	uint32_t next;          /* next in a port queue, or in the free list */
	uint32_t ingress_port;  /* port it last arrived through (its peer transmitted it) */
	uint32_t reserved_port; /* pause mode: the egress port holding space for it, or NO_INDEX */
	uint32_t unused;
} packet_slot;

/* A transmitter's state machine:
 *   IDLE   --packet queued, room downstream-->  BUSY    (tx_done scheduled)
 *   IDLE   --packet queued, no room downstream--> PAUSED (on the downstream port's waiter list)
 *   PAUSED --room freed downstream-->           BUSY
 *   BUSY   --tx_done-->                         IDLE, then tries the next packet at once.
 * A packet with nothing to decide at its end (nothing queued behind it, no impairment, its link
 * up, nobody waiting for room here) skips tx_done (forward.c, "Coasting"):
 *   IDLE   --such a packet starts-->            COASTING (its arrival downstream scheduled, the
 *                                                 place of its tx_done reserved)
 *   COASTING --looked at once that place is reached--> IDLE
 *   COASTING --needed then (a packet queued behind, a port waiting for room)-->
 *              COASTING with coast_end scheduled in that place, which does what tx_done does
 *   COASTING --its link, link parameters, impairments or the traced kinds change before-->
 *              BUSY (tx_done scheduled in that place).
 * A switch's port towards a host that a packet on its way will find idle, with nothing else on
 * its way here, waits for it (forward.c, "Passing through"):
 *   IDLE   --such a packet is launched towards the switch-->
 *              AHEAD (its delivery scheduled; the place of its arrival kept)
 *   AHEAD  --looked at once that place is reached-->       COASTING, as the arrival left it
 *   AHEAD  --needed before-->                              IDLE, the arrival scheduled there
 *   AHEAD  --the port sending the packet stops coasting it--> IDLE (its tx_done launches it
 *              again). */
typedef enum port_state {
	PORT_IDLE = 0,
	PORT_BUSY = 1,
	PORT_PAUSED = 2,
	PORT_COASTING = 3,
	PORT_AHEAD = 4,
} port_state;

typedef struct port {
	/* Wiring and parameters. */
	uint32_t node;
	uint32_t peer_node;
	uint32_t peer_port;
	uint32_t link;
	bool owner_is_switch;  /* buffer limit, tail drop and ECN apply to switch egress only */
	bool peer_is_switch;
	bool up; /* its link, in this direction */
	/* Where its events run: its partition (nm_network_create_parallel; 0 otherwise) and
	 * that partition's engine. */
	uint32_t partition;
	nm_engine *engine;
	uint64_t bandwidth_bps;
	nm_time_ns latency_ns;
	nm_time_ns arrive_delay_ns; /* latency + the peer switch's forwarding latency */
	uint32_t mtu_bytes;
	uint32_t header_bytes;
	uint32_t cached_bytes; /* last size serialized, to skip the division for MTU-sized trains */
	/* The engine priority of its events and of the arrivals it sends: its id. A host's one
	 * port has its host's id, so a host's events and its port's share one; a switch's ports
	 * each have their own, so that those of a switch split between partitions never meet in
	 * one partition's order. */
	uint32_t priority;
	nm_time_ns cached_ser_ns;

	/* Transmitter. */
	port_state state;
	uint32_t queue_head;
	uint32_t queue_tail;
	uint32_t in_service;
	uint64_t queued_bytes;   /* queue + packet being sent */
	union {
		/* Pause mode: space promised to packets on their way here. */
		uint64_t reserved_bytes;
		/* Credit mode, a port into a switch: bytes of the switch's buffer for this link
		 * it may still fill. */
		uint64_t credits;
	};
	uint32_t waiter_head;    /* pause mode: ports waiting for space here, FIFO */
	uint32_t waiter_tail;
	uint32_t next_waiter;

	/* BUSY, COASTING, AHEAD: the packet in service, its size and when its last bit leaves. */
	uint32_t in_service_bytes;
	nm_time_ns busy_until;
	/* COASTING, AHEAD: the place its tx_done would have had, its arrival downstream, and the
	 * event that ends its service when one is needed (else NM_EVENT_NONE). Until its start has
	 * been traced (coast_ready), none of them is there yet; end_wanted: the end event is
	 * needed. */
	uint64_t end_order;
	nm_event_id coast_arrival;
	nm_event_id coast_end;
	bool coast_ready;
	bool end_wanted;
	/* AHEAD: whether the packet's bytes are held here for it (pause mode), and when and in
	 * what place it arrives. */
	bool ahead_reserved;
	nm_time_ns ahead_at;
	uint64_t ahead_order;
	/* Arrivals scheduled that will leave through this port (a network on one engine): it
	 * may wait for a packet only when none is. */
	uint32_t inbound;

	impair_state *impair; /* NULL when this direction has no impairment */
	nm_port_stats stats;
} egress_port;

/* What a partition of the network keeps besides its ports (one, for a network on one engine):
 * each on lines of its own. */
typedef struct network_part {
	_Alignas(64) nm_engine *engine;
	/* Its free packet slots (forward.c): the list in use, and a batch held back. A
	 * partitioned network balances them through the depot: packets are freed where they
	 * arrive, mostly not where they were taken. */
	uint32_t free_packet, free_count;
	uint32_t spare_packet, spare_count;
	/* Its share: summed by nm_network_stats_get (in_flight wraps: packets freed here were
	 * often taken elsewhere). */
	nm_network_stats stats;
} network_part;

struct nm_network {
	fs_arena *arena; /* the engine's */
	nm_engine *engine; /* NULL for a partitioned network */
	nm_parallel *par;  /* NULL for a network on one engine */
	uint32_t part_count;
	void *parts_memory;
	network_part *parts; /* [part_count], in parts_memory on a line boundary */
	nm_config cfg;
	nm_topology topo;
	egress_port *ports;

	packet_slot **chunks; /* [PACKET_CHUNKS_MAX] */
	uint32_t chunk_count;
	fs_depot *depot; /* partitioned: batches of free slots (arena/depot.h), else NULL */

	nm_code deliver; /* nm_deliver_fn */
	void *deliver_ctx;
	nm_code trace; /* nm_trace_fn */
	void *trace_ctx;
	uint32_t trace_mask; /* bit per nm_trace_kind the callback wants */
	uint32_t switch_trace_mask; /* the same, of records at a switch */

	/* Every port infinitely fast, no latency, no impairment, every link
	 * up: a packet arrives the instant it is sent (forward.c). */
	bool instant;
};

static inline packet_slot *packet_at(const nm_network *net, uint32_t index)
{
	return &net->chunks[index >> PACKET_CHUNK_BITS][index & (PACKET_CHUNK_SIZE - 1)];
}

/* What an event of the network touches, noted once per event in a shared
 * model's working set (arena/working_set.h): the packet, and the port. */
static inline void note_hop(const packet_slot *slot, const egress_port *p)
{
	if (slot)
		fs_touch_span(slot, sizeof(*slot));
	if (p)
		fs_touch_span(p, sizeof(*p));
}

/* The partition where host `host`'s events run. */
static inline uint32_t host_partition(const nm_network *net, uint32_t host)
{
	return net->ports[net->topo.nodes[host].first_port].partition;
}

/* forward.c */
/* Credit flow control with a finite buffer: ports into a switch hold credits for it. */
bool credit_mode(const nm_network *net);
int packet_alloc(nm_network *net, uint32_t part, uint32_t *index_out);
void packet_free(nm_network *net, uint32_t part, uint32_t index);
void port_try_start(nm_network *net, uint32_t port_id);
void port_enqueue(nm_network *net, uint32_t port_id, uint32_t index);
void emit_trace(nm_network *net, const nm_engine *engine, nm_trace_kind kind,
		nm_drop_reason reason, uint32_t node, uint32_t port, const nm_packet *pkt);
void link_state_event(nm_engine *engine, void *ctx, uint64_t arg);
/* A partitioned network's link changes one direction at a time, each in its port's partition:
 * arg = port << 1 | up. */
void port_state_event(nm_engine *engine, void *ctx, uint64_t arg);
/* The port's coasting packet (if any) goes back to ending with tx_done: what decides its fate
 * then (the link, the impairments, the traced kinds) is changing. */
void port_stop_coasting(nm_network *net, uint32_t port_id);
/* Ports that wait for a packet taken back or brought up to now (the kinds traced change). */
void ports_settle_ahead(nm_network *net);
/* What the port's counters say now (a coasting packet counts once its last bit has left). */
void port_stats_now(const nm_network *net, uint32_t port_id, nm_port_stats *out);
void instant_send(nm_network *net, uint32_t index);
/* network.c: recomputes net->instant after a change of links or ports. */
void network_refresh_instant(nm_network *net);

#endif
