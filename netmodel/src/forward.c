/* The packet state machine: queueing at a port, transmission, impairments on the link, arrival
 * at a switch (routing, buffer, ECN) or at the destination host. A port's events are scheduled
 * with the port's id as their engine priority (a host's port has its host's id), a delivery with
 * its host's, and an arrival at a switch with the id of the port that sent it, so that the
 * arrivals of one instant at a switch are taken in the order of their senders however their
 * events were scheduled (at the start of a coasting packet, at the tx_done of another): the
 * numbering makes that the order of the sending nodes' ids, hosts first. */
#include <errno.h>
#include <stdlib.h>

#include "engine_internal.h"
#include "netmodel/nm_link.h"
#include "network_internal.h"

static void tx_done_event(nm_engine *engine, void *ctx, uint64_t arg);
static void coast_end_event(nm_engine *engine, void *ctx, uint64_t arg);
static void arrive_switch_event(nm_engine *engine, void *ctx, uint64_t arg);
static void deliver_event(nm_engine *engine, void *ctx, uint64_t arg);
static void credit_event(nm_engine *engine, void *ctx, uint64_t arg);

void emit_trace(nm_network *net, const nm_engine *engine, nm_trace_kind kind,
		nm_drop_reason reason, uint32_t node, uint32_t port, const nm_packet *pkt)
{
	nm_trace_record rec = {
		.time = engine_now(engine),
		.kind = kind,
		.reason = reason,
		.node = node,
		.port = port,
		.packet = pkt,
	};
	NM_CODE_AS(nm_trace_fn, net->trace)(net->trace_ctx, &rec);
}

static bool pause_mode(const nm_network *net)
{
	return net->cfg.sw.flow_control == NM_FLOW_CONTROL_PAUSE;
}

bool credit_mode(const nm_network *net)
{
	return net->cfg.sw.flow_control == NM_FLOW_CONTROL_CREDIT && net->cfg.sw.buffer_bytes;
}

static bool traced(const nm_network *net, nm_trace_kind kind)
{
	return net->trace && (net->trace_mask >> kind & 1u);
}

#define TRACE(net, engine, kind, reason, node, port, pkt)                                 \
	do {                                                                               \
		if (traced((net), (kind)))                                                 \
			emit_trace((net), (engine), (kind), (reason), (node), (port), (pkt)); \
	} while (0)

/* ---- packet pool ----
 * A partition's free slots are an fs_cache made of indices (arena/depot.h): the list in use, a
 * batch held back, and whole batches to and from the depot that partitions share. */

/* A new chunk for partition `part`'s free list. Its place in the directory is claimed with an
 * atomic count: another partition may be growing the pool too. */
static int grow_pool(nm_network *net, network_part *part)
{
	packet_slot *chunk = fs_mem_alloc(net->arena, PACKET_CHUNK_SIZE * sizeof(*chunk));
	if (!chunk)
		return -ENOMEM;
	uint32_t c = __atomic_fetch_add(&net->chunk_count, 1, __ATOMIC_RELAXED);
	if (c >= PACKET_CHUNKS_MAX) {
		__atomic_fetch_sub(&net->chunk_count, 1, __ATOMIC_RELAXED);
		fs_mem_free(net->arena, chunk);
		return -ENOMEM;
	}
	uint32_t base = c << PACKET_CHUNK_BITS;
	for (uint32_t i = 0; i < PACKET_CHUNK_SIZE; i++)
		chunk[i].next = (i + 1 < PACKET_CHUNK_SIZE) ? base + i + 1 : part->free_packet;
	net->chunks[c] = chunk;
	part->free_packet = base;
	part->free_count += PACKET_CHUNK_SIZE;
	return 0;
}

static bool refill(nm_network *net, network_part *part)
{
	fs_depot_batch batch;

	if (part->spare_packet != NO_INDEX) {
		part->free_packet = part->spare_packet;
		part->free_count = part->spare_count;
		part->spare_packet = NO_INDEX;
		part->spare_count = 0;
		return true;
	}
	if (!net->depot || !fs_depot_take(net->depot, &batch))
		return false;
	part->free_packet = (uint32_t)batch.head;
	part->free_count = batch.count;
	return true;
}

/* The list in use is full: the spare goes to the depot, the list becomes the spare. */
static void spill(nm_network *net, network_part *part)
{
	if (part->spare_packet != NO_INDEX &&
	    fs_depot_put(net->depot, (fs_depot_batch){part->spare_packet, part->spare_count}) == 0) {
		part->spare_packet = NO_INDEX;
		part->spare_count = 0;
	}
	if (part->spare_packet == NO_INDEX) { /* else the depot is out of memory: the list grows */
		part->spare_packet = part->free_packet;
		part->spare_count = part->free_count;
		part->free_packet = NO_INDEX;
		part->free_count = 0;
	}
}

int packet_alloc(nm_network *net, uint32_t part_index, uint32_t *index_out)
{
	network_part *part = &net->parts[part_index];
	if (part->free_packet == NO_INDEX && !refill(net, part) && grow_pool(net, part))
		return -ENOMEM;
	uint32_t index = part->free_packet;
	packet_slot *slot = packet_at(net, index);
	part->free_packet = slot->next;
	part->free_count--;
	slot->next = NO_INDEX;
	slot->reserved_port = NO_INDEX;
	slot->ingress_port = NO_INDEX;
	if (++part->stats.in_flight > part->stats.peak_in_flight)
		part->stats.peak_in_flight = part->stats.in_flight;
	*index_out = index;
	return 0;
}

/* On partition `part_index`'s free list, wherever the packet was taken. */
void packet_free(nm_network *net, uint32_t part_index, uint32_t index)
{
	network_part *part = &net->parts[part_index];
	if (net->depot && part->free_count >= FS_CACHE_BATCH)
		spill(net, part);
	packet_at(net, index)->next = part->free_packet;
	part->free_packet = index;
	part->free_count++;
	part->stats.in_flight--;
}

/* ---- Coasting ----
 * Most packets of a quiet network start on an idle port with nothing queued behind them, and
 * nothing is left to decide when their last bit leaves: no impairment, the link up, nobody
 * waiting for room at the port. Such a packet's arrival downstream is scheduled when it starts,
 * and the port stays busy until busy_until without a tx_done event (half the events of a packet
 * crossing a switch). The tx_done it would have had keeps its place in the engine's order all
 * the same (end_order, reserved when the packet starts): from that place on, whoever looks at the
 * port finds it idle (settle); when something needs the port there (a packet queued behind, a
 * port waiting for room), a coast_end event runs in that very place. If the link, the port's link
 * parameters, its impairments or the traced kinds change before it, the packet goes back to
 * ending with a tx_done, in that place. The arrival takes the sequence number of that place,
 * as it does after a tx_done (launch). So what happens, and when, is what the event-per-step
 * machine does (coasting_test.cc compares them). */

/* Global id of the egress port `pkt` leaves switch `node` through. */
static uint32_t route_at(const nm_network *net, uint32_t node, const nm_packet *pkt)
{
	uint32_t local = nm_topology_route(&net->topo, node, pkt->flow, pkt->src, pkt->dst);
	return net->topo.nodes[node].first_port + local;
}

/* The partition where `pkt`, sent through p, arrives: at a host, that host's; at a switch, that
 * of the egress port it will leave through, where its arrival is decided. */
static uint32_t arrival_partition(const nm_network *net, const egress_port *p,
				  const nm_packet *pkt)
{
	if (!net->par)
		return 0;
	return p->peer_is_switch ? net->ports[route_at(net, p->peer_node, pkt)].partition
				 : host_partition(net, p->peer_node);
}

/* Besides what the section says: some latency to the next hop (a packet arriving at the very
 * instant its last bit leaves could arrive before its end's place), and an arrival in the same
 * partition (one sent to another cannot be taken back if the port stops coasting). */
static bool may_coast(const nm_network *net, const egress_port *p, const nm_packet *pkt)
{
	return p->arrive_delay_ns > 0 && p->queue_head == NO_INDEX &&
	       p->waiter_head == NO_INDEX && !p->impair && p->up &&
	       !traced(net, NM_TRACE_TX_END) && arrival_partition(net, p, pkt) == p->partition;
}

/* The coasting packet's tx_done would have run by now. */
static bool coast_over(const egress_port *p)
{
	return p->coast_ready && engine_reached(p->engine, p->busy_until, p->end_order);
}

/* A coasting port whose packet's end has come is idle, as after its tx_done. */
static void settle(nm_network *net, egress_port *p)
{
	if (p->state != PORT_COASTING || !coast_over(p))
		return;
	p->queued_bytes -= p->in_service_bytes;
	p->in_service = NO_INDEX;
	p->state = PORT_IDLE;
}

static void schedule_coast_end(nm_network *net, uint32_t port_id)
{
	egress_port *p = &net->ports[port_id];
	if (nm_engine_schedule_ordered(p->engine, p->busy_until, p->end_order, coast_end_event,
				       net, port_id, &p->coast_end))
		abort(); /* see port_try_start */
}

/* Something needs the coasting port at the end of its packet (nothing, if that has come). */
static void need_coast_end(nm_network *net, uint32_t port_id)
{
	egress_port *p = &net->ports[port_id];
	settle(net, p);
	if (p->state != PORT_COASTING || p->coast_end != NM_EVENT_NONE)
		return;
	if (!p->coast_ready)
		p->end_wanted = true; /* its place is taken once its trace has run */
	else
		schedule_coast_end(net, port_id);
}

void port_stop_coasting(nm_network *net, uint32_t port_id)
{
	egress_port *p = &net->ports[port_id];
	settle(net, p);
	if (p->state != PORT_COASTING)
		return;
	p->stats.tx_packets--;
	p->stats.tx_bytes -= p->in_service_bytes;
	p->state = PORT_BUSY;
	if (!p->coast_ready)
		return; /* its start (port_try_start) schedules the tx_done */
	nm_engine_cancel(p->engine, p->coast_arrival);
	if (p->coast_end != NM_EVENT_NONE) {
		nm_engine_cancel(p->engine, p->coast_end);
		p->coast_end = NM_EVENT_NONE;
	}
	if (nm_engine_schedule_ordered(p->engine, p->busy_until, p->end_order, tx_done_event, net,
				       port_id, NULL))
		abort();
}

/* A packet whose last bit leaves at this instant has left, for everything that looks at the
 * port at this instant: whether its tx_done has run yet or not (it may run after an arrival of
 * the same instant), or it coasts. */
static bool leaving(const egress_port *p)
{
	return (p->state == PORT_BUSY || p->state == PORT_COASTING) &&
	       p->busy_until <= engine_now(p->engine);
}

static uint64_t queued_now(const egress_port *p)
{
	return p->queued_bytes - (leaving(p) ? p->in_service_bytes : 0);
}

void port_stats_now(const nm_network *net, uint32_t port_id, nm_port_stats *out)
{
	const egress_port *p = &net->ports[port_id];
	*out = p->stats;
	out->queued_bytes = queued_now(p);
	/* A transmission counts once complete; a coasting one was counted when it started. */
	if (p->state == PORT_COASTING && !leaving(p)) {
		out->tx_packets--;
		out->tx_bytes -= p->in_service_bytes;
	} else if (p->state == PORT_BUSY && leaving(p)) {
		out->tx_packets++;
		out->tx_bytes += p->in_service_bytes;
	}
}

/* ---- buffers and pause ---- */

/* Credit mode counts the buffer per link into the switch, at the transmitter (its credits). */
static uint64_t buffer_limit(const nm_network *net, const egress_port *p)
{
	return p->owner_is_switch && !credit_mode(net) ? net->cfg.sw.buffer_bytes : 0;
}

static bool has_room(const nm_network *net, const egress_port *p, uint64_t bytes)
{
	uint64_t limit = buffer_limit(net, p);
	return limit == 0 || queued_now(p) + p->reserved_bytes + bytes <= limit;
}

static void add_waiter(nm_network *net, uint32_t target_id, uint32_t waiter_id)
{
	egress_port *target = &net->ports[target_id];
	net->ports[waiter_id].next_waiter = NO_INDEX;
	if (target->waiter_tail == NO_INDEX)
		target->waiter_head = waiter_id;
	else
		net->ports[target->waiter_tail].next_waiter = waiter_id;
	target->waiter_tail = waiter_id;
	need_coast_end(net, target_id); /* room frees when its packet has left */
}

/* Space was freed at `target_id`: restart waiting transmitters in the order they paused, as long
 * as the packet at the head of each fits (the first that does not keeps its place). */
static void wake_waiters(nm_network *net, uint32_t target_id)
{
	egress_port *target = &net->ports[target_id];
	while (target->waiter_head != NO_INDEX) {
		uint32_t waiter_id = target->waiter_head;
		egress_port *waiter = &net->ports[waiter_id];
		const packet_slot *head = packet_at(net, waiter->queue_head);
		if (!has_room(net, target, head->pkt.bytes))
			return;
		target->waiter_head = waiter->next_waiter;
		if (target->waiter_head == NO_INDEX)
			target->waiter_tail = NO_INDEX;
		waiter->state = PORT_IDLE;
		TRACE(net, waiter->engine, NM_TRACE_RESUME, 0, waiter->node, waiter_id, NULL);
		port_try_start(net, waiter_id);
	}
}

static void release_reservation(nm_network *net, packet_slot *slot)
{
	if (slot->reserved_port == NO_INDEX)
		return;
	uint32_t target = slot->reserved_port;
	net->ports[target].reserved_bytes -= slot->pkt.bytes;
	slot->reserved_port = NO_INDEX;
	wake_waiters(net, target);
}

/* ---- credits ---- */

/* A packet of `bytes` leaves switch port e's buffer at `left`, having come in through the link
 * whose switch side is `ingress_id`: its credits go back to the transmitter at the other end,
 * one link latency later (in its partition). The event has e's priority, which no event of the
 * transmitter's own has. */
static void return_credits(nm_network *net, const egress_port *e, uint32_t ingress_id,
			   uint32_t bytes, nm_time_ns left)
{
	const egress_port *ingress = &net->ports[ingress_id];
	uint32_t upstream_id = ingress->peer_port;
	const egress_port *upstream = &net->ports[upstream_id];
	nm_time_ns at = left + ingress->latency_ns;
	uint64_t arg = (uint64_t)upstream_id << 32 | bytes;

	if (upstream->partition != e->partition ?
		    nm_parallel_send(net->par, e->partition, upstream->partition, at, e->priority,
				     credit_event, net, arg) :
		    nm_engine_schedule(e->engine, at, e->priority, credit_event, net, arg, NULL))
		abort(); /* credits must not be lost: the link would stall for good */
}

/* Credits spent on a packet that never reached the switch (lost on the way): back at once. */
static void refund_credits(nm_network *net, egress_port *p, uint32_t bytes)
{
	if (credit_mode(net) && p->peer_is_switch)
		p->credits += bytes;
}

/* ---- transmitter ---- */

static nm_time_ns port_serialization(egress_port *p, uint32_t bytes)
{
	if (bytes != p->cached_bytes) {
		p->cached_bytes = bytes;
		p->cached_ser_ns = nm_serialization_ns(bytes, p->bandwidth_bps);
	}
	return p->cached_ser_ns;
}

/* No place to take an arrival's sequence number from (a duplicate). */
#define NO_ORDER UINT64_MAX

static nm_event_id launch(nm_network *net, const egress_port *p, uint32_t index, nm_time_ns left,
			  nm_time_ns extra_delay, uint64_t end_order);

static void coast(egress_port *p)
{
	p->state = PORT_COASTING;
	p->coast_ready = false;
	p->end_wanted = false;
	p->coast_end = NM_EVENT_NONE;
	p->stats.tx_packets++;
	p->stats.tx_bytes += p->in_service_bytes;
}

/* After the packet's start was traced: its arrival, and its end's place. */
static void coast_on(nm_network *net, uint32_t port_id, uint32_t index)
{
	egress_port *p = &net->ports[port_id];
	if (nm_engine_reserve_order(p->engine, p->priority, &p->end_order))
		abort();
	p->coast_arrival = launch(net, p, index, p->busy_until, 0, p->end_order);
	p->coast_ready = true;
	if (p->end_wanted)
		schedule_coast_end(net, port_id);
}

void port_try_start(nm_network *net, uint32_t port_id)
{
	egress_port *p = &net->ports[port_id];
	settle(net, p);
	if (p->state == PORT_COASTING) {
		/* The packet queued behind starts when the coasting one has left. */
		if (p->queue_head != NO_INDEX)
			need_coast_end(net, port_id);
		return;
	}
	if (p->state != PORT_IDLE || p->queue_head == NO_INDEX)
		return;
	uint32_t index = p->queue_head;
	packet_slot *slot = packet_at(net, index);

	if (pause_mode(net) && p->peer_is_switch) {
		uint32_t target = route_at(net, p->peer_node, &slot->pkt);
		if (!has_room(net, &net->ports[target], slot->pkt.bytes)) {
			p->state = PORT_PAUSED;
			p->stats.pauses++;
			add_waiter(net, target, port_id);
			TRACE(net, p->engine, NM_TRACE_PAUSE, 0, p->node, port_id, NULL);
			return;
		}
		net->ports[target].reserved_bytes += slot->pkt.bytes;
		slot->reserved_port = target;
	}
	if (credit_mode(net) && p->peer_is_switch) {
		if (p->credits < slot->pkt.bytes) {
			p->state = PORT_PAUSED; /* until credits come back (credit_event) */
			p->stats.pauses++;
			TRACE(net, p->engine, NM_TRACE_PAUSE, 0, p->node, port_id, NULL);
			return;
		}
		p->credits -= slot->pkt.bytes;
	}

	p->queue_head = slot->next;
	if (p->queue_head == NO_INDEX)
		p->queue_tail = NO_INDEX;
	else /* it will be needed when this one is done; packets in long queues are cold */
		__builtin_prefetch(packet_at(net, p->queue_head));
	p->in_service = index;
	p->in_service_bytes = slot->pkt.bytes;
	nm_time_ns now = engine_now(p->engine);
	nm_time_ns done = now + port_serialization(p, slot->pkt.bytes);
	p->busy_until = done;
	/* It leaves the switch's buffer with its last bit, whatever its fate on the link. */
	if (p->owner_is_switch && credit_mode(net) && slot->ingress_port != NO_INDEX)
		return_credits(net, p, slot->ingress_port, slot->pkt.bytes, done);
	/* The state is set before the trace: its callback may send more through this port. */
	bool coasting = done > now && may_coast(net, p, &slot->pkt);
	if (coasting)
		coast(p);
	else
		p->state = PORT_BUSY;
	TRACE(net, p->engine, NM_TRACE_TX_START, 0, p->node, port_id, &slot->pkt);
	/* Unless the trace changed what decides its end (port_stop_coasting). */
	if (p->state == PORT_COASTING) {
		coast_on(net, port_id, index);
		return;
	}
	/* Cannot fail once the engine's arrays hold the peak number of events; if memory runs out
	 * the packet would be stuck, so abort loudly rather than corrupt the run. (A zero-time
	 * transmission's place may count as reached already: it gets a plain one.) */
	if (nm_engine_reserve_order(p->engine, p->priority, &p->end_order))
		abort();
	if (engine_reached(p->engine, done, p->end_order) ?
		    nm_engine_schedule(p->engine, done, p->priority, tx_done_event, net, port_id, NULL) :
		    nm_engine_schedule_ordered(p->engine, done, p->end_order, tx_done_event, net,
					       port_id, NULL))
		abort();
}

void port_enqueue(nm_network *net, uint32_t port_id, uint32_t index)
{
	egress_port *p = &net->ports[port_id];
	packet_slot *slot = packet_at(net, index);
	slot->next = NO_INDEX;
	if (p->queue_tail == NO_INDEX)
		p->queue_head = index;
	else
		packet_at(net, p->queue_tail)->next = index;
	p->queue_tail = index;
	p->queued_bytes += slot->pkt.bytes;
	uint64_t queued = queued_now(p);
	if (queued > p->stats.peak_queued_bytes)
		p->stats.peak_queued_bytes = queued;
	port_try_start(net, port_id);
}

static void drop_packet(nm_network *net, uint32_t port_id, uint32_t index, nm_drop_reason reason)
{
	packet_slot *slot = packet_at(net, index);
	egress_port *p = &net->ports[port_id];
	net->parts[p->partition].stats.dropped[reason]++;
	p->stats.dropped++;
	TRACE(net, p->engine, NM_TRACE_DROP, reason, p->node, port_id, &slot->pkt);
	release_reservation(net, slot);
	packet_free(net, p->partition, index);
}

/* Sends a surviving packet, whose last bit left at `left`, across the link: it arrives after the
 * link latency (plus the peer switch's forwarding latency, folded into the same event) plus any
 * reordering hold. Its event takes the sequence number of the end of its transmission
 * (end_order), whether that end had an event or coasted: among the events of the instant it
 * arrives at, it has the same place either way. */
static nm_event_id launch(nm_network *net, const egress_port *p, uint32_t index, nm_time_ns left,
			  nm_time_ns extra_delay, uint64_t end_order)
{
	packet_slot *slot = packet_at(net, index);
	slot->ingress_port = p->peer_port;
	nm_time_ns at = left + p->arrive_delay_ns + extra_delay;
	uint32_t priority = p->peer_is_switch ? p->priority : p->peer_node;
	nm_event_fn fn = p->peer_is_switch ? arrive_switch_event : deliver_event;
	uint64_t order = end_order == NO_ORDER ? 0 : order_with_priority(end_order, priority);
	uint32_t there = arrival_partition(net, p, &slot->pkt);
	nm_event_id id = NM_EVENT_NONE;
	if (there != p->partition) {
		/* The network's latency is the lookahead: this cannot come too soon. */
		if (end_order == NO_ORDER ?
			    nm_parallel_send(net->par, p->partition, there, at, priority, fn, net,
					     index) :
			    nm_parallel_send_ordered(net->par, p->partition, there, at, order, fn,
						     net, index))
			abort();
		return id;
	}
	if (end_order == NO_ORDER || engine_reached(p->engine, at, order) ?
		    nm_engine_schedule(p->engine, at, priority, fn, net, index, &id) :
		    nm_engine_schedule_ordered(p->engine, at, order, fn, net, index, &id))
		abort();
	return id;
}

/* A copy made by the duplication impairment. In pause mode it needs space of its own at the
 * next switch; when there is none it is lost to the buffer, as the original would have been. */
static void launch_duplicate(nm_network *net, uint32_t port_id, const packet_slot *original)
{
	egress_port *p = &net->ports[port_id];
	uint32_t index;
	if (packet_alloc(net, p->partition, &index))
		abort();
	packet_slot *copy = packet_at(net, index);
	copy->pkt = original->pkt;
	copy->pkt.flags |= NM_PKT_DUPLICATE;
	net->parts[p->partition].stats.duplicated++;
	TRACE(net, p->engine, NM_TRACE_DUPLICATE, 0, p->node, port_id, &copy->pkt);
	if (credit_mode(net) && p->peer_is_switch) {
		if (p->credits < copy->pkt.bytes) {
			drop_packet(net, port_id, index, NM_DROP_BUFFER);
			return;
		}
		p->credits -= copy->pkt.bytes;
	}
	if (original->reserved_port != NO_INDEX) {
		egress_port *target = &net->ports[original->reserved_port];
		if (!has_room(net, target, copy->pkt.bytes)) {
			drop_packet(net, port_id, index, NM_DROP_BUFFER);
			return;
		}
		target->reserved_bytes += copy->pkt.bytes;
		copy->reserved_port = original->reserved_port;
	}
	launch(net, p, index, engine_now(p->engine), 0, NO_ORDER);
}

/* The port's packet has left (tx_done, coast_end): ports paused on room here may go, then its
 * next packet. */
static void port_freed(nm_network *net, uint32_t port_id)
{
	if (net->ports[port_id].waiter_head != NO_INDEX)
		wake_waiters(net, port_id);
	port_try_start(net, port_id);
}

static void tx_done_event(nm_engine *engine, void *ctx, uint64_t arg)
{
	nm_network *net = ctx;
	uint32_t port_id = (uint32_t)arg;
	egress_port *p = &net->ports[port_id];
	uint32_t index = p->in_service;
	packet_slot *slot = packet_at(net, index);
	uint64_t end_order = p->end_order;
	note_hop(slot, p);

	p->in_service = NO_INDEX;
	p->state = PORT_IDLE;
	p->queued_bytes -= slot->pkt.bytes;
	p->stats.tx_packets++;
	p->stats.tx_bytes += slot->pkt.bytes;

	/* The packet's fate first: what the wake-ups below trigger (their traces' callbacks) must
	 * not change it, as they could not change a coasting packet's. */
	impair_verdict verdict = {0};
	if (!p->up) {
		verdict.drop = true;
		verdict.reason = NM_DROP_LINK_DOWN;
	} else if (p->impair && impair_decide(p->impair, slot->pkt.flow, &verdict)) {
		abort(); /* out of memory for a flow record */
	}

	if (verdict.drop) {
		refund_credits(net, p, slot->pkt.bytes);
		drop_packet(net, port_id, index, verdict.reason);
	} else {
		if (verdict.corrupt && !(slot->pkt.flags & NM_PKT_CORRUPTED)) {
			slot->pkt.flags |= NM_PKT_CORRUPTED;
			net->parts[p->partition].stats.corrupted++;
		}
		if (verdict.extra_delay)
			slot->pkt.flags |= NM_PKT_DELAYED;
		TRACE(net, engine, NM_TRACE_TX_END, 0, p->node, port_id, &slot->pkt);
		launch(net, p, index, engine_now(engine), verdict.extra_delay, end_order);
		if (verdict.duplicate)
			launch_duplicate(net, port_id, slot);
	}
	port_freed(net, port_id);
}

static void coast_end_event(nm_engine *engine, void *ctx, uint64_t arg)
{
	nm_network *net = ctx;
	uint32_t port_id = (uint32_t)arg;
	egress_port *p = &net->ports[port_id];

	note_hop(NULL, p);
	p->coast_end = NM_EVENT_NONE;
	settle(net, p);
	port_freed(net, port_id);
	(void)engine;
}

/* Last bit in plus forwarding latency: route, then tail drop / ECN, then the egress FIFO. */
static void arrive_switch_event(nm_engine *engine, void *ctx, uint64_t arg)
{
	nm_network *net = ctx;
	uint32_t index = (uint32_t)arg;
	packet_slot *slot = packet_at(net, index);
	uint32_t egress_id;
	egress_port *egress;
	if (slot->reserved_port != NO_INDEX) {
		/* Pause mode: routed, and space set aside, when the upstream port started sending. */
		egress_id = slot->reserved_port;
		egress = &net->ports[egress_id];
		egress->reserved_bytes -= slot->pkt.bytes;
		slot->reserved_port = NO_INDEX;
	} else {
		egress_id = route_at(net, net->ports[slot->ingress_port].node, &slot->pkt);
		egress = &net->ports[egress_id];
		note_hop(NULL, &net->ports[slot->ingress_port]);
		if (!has_room(net, egress, slot->pkt.bytes)) {
			drop_packet(net, egress_id, index, NM_DROP_BUFFER);
			return;
		}
	}
	note_hop(slot, egress);
	uint64_t ecn = net->cfg.sw.ecn_threshold_bytes;
	if (ecn && queued_now(egress) >= ecn) {
		slot->pkt.flags |= NM_PKT_ECN;
		egress->stats.ecn_marked++;
		net->parts[egress->partition].stats.ecn_marked++;
	}
	TRACE(net, engine, NM_TRACE_ENQUEUE, 0, egress->node, egress_id, &slot->pkt);
	port_enqueue(net, egress_id, index);
}

static void deliver_event(nm_engine *engine, void *ctx, uint64_t arg)
{
	nm_network *net = ctx;
	uint32_t index = (uint32_t)arg;
	packet_slot *slot = packet_at(net, index);
	note_hop(slot, NULL);
	uint32_t here = host_partition(net, slot->pkt.dst);
	net->parts[here].stats.delivered++;
	TRACE(net, engine, NM_TRACE_DELIVER, 0, slot->pkt.dst, NO_INDEX, &slot->pkt);
	if (net->deliver)
		NM_CODE_AS(nm_deliver_fn, net->deliver)(net->deliver_ctx, &slot->pkt);
	packet_free(net, here, index);
}

static void credit_event(nm_engine *engine, void *ctx, uint64_t arg)
{
	nm_network *net = ctx;
	uint32_t port_id = (uint32_t)(arg >> 32);
	egress_port *p = &net->ports[port_id];

	note_hop(NULL, p);
	p->credits += (uint32_t)arg;
	if (p->state == PORT_PAUSED) {
		p->state = PORT_IDLE;
		TRACE(net, engine, NM_TRACE_RESUME, 0, p->node, port_id, NULL);
		port_try_start(net, port_id);
	}
}

/* An ideal network delivers at the instant of sending, so one event stands
 * for the hops: the host port starts and ends the packet (the traces the
 * sender paces itself by), then it is delivered. The times are those of
 * the hop by hop path; switch-side records and stats are not kept. */
static void instant_event(nm_engine *engine, void *ctx, uint64_t arg)
{
	nm_network *net = ctx;
	uint32_t index = (uint32_t)arg;
	packet_slot *slot = packet_at(net, index);
	uint32_t port_id = net->topo.nodes[slot->pkt.src].first_port;
	egress_port *p = &net->ports[port_id];

	p->stats.tx_packets++;
	p->stats.tx_bytes += slot->pkt.bytes;
	TRACE(net, engine, NM_TRACE_TX_START, 0, p->node, port_id, &slot->pkt);
	TRACE(net, engine, NM_TRACE_TX_END, 0, p->node, port_id, &slot->pkt);
	deliver_event(engine, ctx, arg);
}

void instant_send(nm_network *net, uint32_t index)
{
	const packet_slot *slot = packet_at(net, index);

	if (nm_engine_schedule(net->engine, nm_engine_now(net->engine), slot->pkt.src,
			       instant_event, net, index, NULL))
		abort();
}

void link_state_event(nm_engine *engine, void *ctx, uint64_t arg)
{
	nm_network_set_link_up(ctx, (uint32_t)(arg >> 1), arg & 1);
	(void)engine;
}

void port_state_event(nm_engine *engine, void *ctx, uint64_t arg)
{
	nm_network *net = ctx;
	uint32_t port_id = (uint32_t)(arg >> 1);

	port_stop_coasting(net, port_id);
	net->ports[port_id].up = arg & 1;
	(void)engine;
}
