/* The packet state machine: queueing at a port, transmission, impairments on the link, arrival
 * at a switch (routing, buffer, ECN) or at the destination host. A port's events are scheduled
 * with the port's id as their engine priority (a host's port has its host's id), a delivery with
 * its host's, and an arrival at a switch with the id of the port that sent it, so that the
 * arrivals of one instant at a switch are taken in the order of their senders however their
 * events were scheduled (at the start of a coasting packet, at the tx_done of another): the
 * numbering makes that the order of the sending nodes' ids, hosts first. A packet that finds the
 * port it leaves a switch by idle keeps its arrival's place, priority and sequence, for its end
 * there and its arrival beyond (end_place): that place is known before it arrives, which lets it
 * pass through with no event at the switch ("Passing through"), and it comes from the sender's
 * sequence space alone, so a partitioned network orders it as one engine does. */
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

/* Whether the callback wants records of `kind` at `node` (a host, or a switch). */
static bool traced(const nm_network *net, nm_trace_kind kind, uint32_t node)
{
	uint32_t mask = node < net->topo.params.hosts ? net->trace_mask : net->switch_trace_mask;

	return net->trace && (mask >> kind & 1u);
}

#define TRACE(net, engine, kind, reason, node, port, pkt)                                 \
	do {                                                                               \
		if (traced((net), (kind), (node)))                                         \
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
	       !traced(net, NM_TRACE_TX_END, p->node) &&
	       arrival_partition(net, p, pkt) == p->partition;
}

/* The coasting packet's tx_done would have run by now. */
static bool coast_over(const egress_port *p)
{
	return p->coast_ready && engine_reached(p->engine, p->busy_until, p->end_order);
}

static void ahead_arrived(egress_port *p);
static bool ahead_due(const egress_port *p);
static void recall_ahead(nm_network *net, egress_port *p);
static void recall_launch(nm_network *net, egress_port *p);

/* The port as it is now, for what looks at it without changing it: a packet it waits for that
 * has arrived is there (passing through, below); a coasting port whose packet's end has come is
 * idle, as after its tx_done. */
static void look(egress_port *p)
{
	if (p->state == PORT_AHEAD && ahead_due(p))
		ahead_arrived(p);
	if (p->state != PORT_COASTING || !coast_over(p))
		return;
	p->queued_bytes -= p->in_service_bytes;
	p->in_service = NO_INDEX;
	p->state = PORT_IDLE;
}

/* The port as it is now, for what changes it: a packet it waits for that has not arrived yet
 * arrives as an event of its own instead. */
static void settle(nm_network *net, egress_port *p)
{
	look(p);
	if (p->state == PORT_AHEAD)
		recall_ahead(net, p);
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
	recall_launch(net, p);
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
	egress_port arrived;

	if (p->state == PORT_AHEAD && ahead_due(p)) {
		arrived = *p;
		ahead_arrived(&arrived);
		p = &arrived;
	}
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

static bool has_room(const nm_network *net, egress_port *p, uint64_t bytes)
{
	uint64_t limit = buffer_limit(net, p);
	look(p);
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
static bool pass_through(nm_network *net, const egress_port *p, uint32_t index, nm_time_ns at,
			 uint64_t order, nm_event_id *delivery);

static void coast(egress_port *p)
{
	p->state = PORT_COASTING;
	p->coast_ready = false;
	p->end_wanted = false;
	p->coast_end = NM_EVENT_NONE;
	p->stats.tx_packets++;
	p->stats.tx_bytes += p->in_service_bytes;
}

/* The place of the end of a packet that starts on p now: the place of the arrival that brought
 * it, when it starts at that arrival (it keeps it: see "Passing through"); else one taken now,
 * with p's priority. Cannot fail once the engine's arrays hold the peak number of events; if
 * memory runs out the packet would be stuck, so abort loudly rather than corrupt the run. */
static uint64_t end_place(egress_port *p, uint64_t arrival)
{
	uint64_t order;

	if (arrival != NO_ORDER)
		return arrival;
	if (nm_engine_reserve_order(p->engine, p->priority, &order))
		abort();
	return order;
}

/* The place of the arrival downstream of a packet whose transmission on p ended in place
 * end_order: that place with the arrival's priority, unless the packet kept the place of its
 * arrival at p's switch (end_place), which it keeps further. A kept place has the priority of a
 * port earlier on the packet's path, never p's own: routes do not come back to a port. */
static uint64_t arrival_place(const egress_port *p, uint64_t end_order, uint32_t priority)
{
	if (end_order >> SEQ_BITS != p->priority)
		return end_order;
	return order_with_priority(end_order, priority);
}

/* After the packet's start was traced: its arrival, and its end's place. */
static void coast_on(nm_network *net, uint32_t port_id, uint32_t index, uint64_t arrival)
{
	egress_port *p = &net->ports[port_id];
	p->end_order = end_place(p, arrival);
	p->coast_arrival = launch(net, p, index, p->busy_until, 0, p->end_order);
	p->coast_ready = true;
	if (p->end_wanted)
		schedule_coast_end(net, port_id);
}

/* ---- Passing through ----
 * A packet on its way to a switch may find the port it leaves through, towards its host, idle
 * and with nothing else on its way there, with nothing to decide or record at the switch (no
 * impairment on that port, its link up, no record of the switch's wanted: only a network on one
 * engine, without credits). It would then coast from its arrival on, so its arrival needs no
 * event: when it is launched towards the switch, its delivery is scheduled, and the port waits
 * for it (AHEAD), keeping its arrival's place. Whoever looks at the port once that place is
 * reached finds it as the arrival would have left it; whoever needs it before (another arrival
 * first, a change of its link, impairments or traced kinds, a port waiting for room there) takes
 * the delivery back, and the arrival runs as an event, in its place. A port that stops coasting
 * the packet takes it back too: its tx_done launches the packet again. The end of a packet that
 * starts at its arrival takes the arrival's place (end_place), with or without an event for the
 * arrival, so passing through changes nothing in what happens or when (coasting_random_test
 * compares it with the event-per-step machine). Half the events of a packet crossing a quiet
 * switch. */

/* The switch port a packet that p sends (to a switch) leaves that switch by. */
static uint32_t next_egress(const nm_network *net, const egress_port *p, const packet_slot *slot)
{
	return slot->reserved_port != NO_INDEX ? slot->reserved_port
					       : route_at(net, p->peer_node, &slot->pkt);
}

/* The packet the AHEAD port waits for has arrived by now. */
static bool ahead_due(const egress_port *p)
{
	return engine_reached(p->engine, p->ahead_at, p->ahead_order);
}

/* The AHEAD port waits no more: the delivery scheduled for its packet is cancelled, the space
 * held for the packet goes back on the packet's books, and the port is idle. The packet. */
static packet_slot *take_back_delivery(nm_network *net, egress_port *p)
{
	packet_slot *slot = packet_at(net, p->in_service);

	nm_engine_cancel(p->engine, p->coast_arrival);
	if (p->ahead_reserved)
		slot->reserved_port = (uint32_t)(p - net->ports);
	p->state = PORT_IDLE;
	p->in_service = NO_INDEX;
	p->coast_arrival = NM_EVENT_NONE;
	return slot;
}

/* The port as the arrival of the packet it waited for left it: queued, and coasting. */
static void ahead_arrived(egress_port *p)
{
	if (p->ahead_reserved)
		p->reserved_bytes -= p->in_service_bytes;
	p->queued_bytes += p->in_service_bytes;
	if (p->in_service_bytes > p->stats.peak_queued_bytes)
		p->stats.peak_queued_bytes = p->in_service_bytes;
	coast(p);
	p->coast_ready = true;
}

/* Needed before the packet it waits for arrives: that arrival runs as an event, in its place. */
static void recall_ahead(nm_network *net, egress_port *p)
{
	uint32_t index = p->in_service;
	packet_slot *slot = take_back_delivery(net, p);
	egress_port *sender = &net->ports[net->ports[slot->ingress_port].peer_port];
	nm_event_id arrival;

	p->inbound++;
	if (nm_engine_schedule_ordered(p->engine, p->ahead_at, p->ahead_order, arrive_switch_event,
				       net, index, &arrival))
		abort();
	/* What the sender takes back if it stops coasting the packet. */
	if (sender->state == PORT_COASTING && sender->in_service == index)
		sender->coast_arrival = arrival;
}

/* Port p stops coasting its packet before the end: its arrival, or its delivery through the
 * port that waits for it, is taken back. */
static void recall_launch(nm_network *net, egress_port *p)
{
	if (p->peer_is_switch && !net->par) {
		egress_port *e = &net->ports[next_egress(net, p, packet_at(net, p->in_service))];

		look(e); /* an AHEAD port still waiting names a packet in flight */
		if (e->state == PORT_AHEAD && e->in_service == p->in_service) {
			take_back_delivery(net, e);
			return;
		}
		e->inbound--;
	}
	nm_engine_cancel(p->engine, p->coast_arrival);
}

/* Packet `index`, which p launches to arrive at its switch at `at` in place `order`, passes
 * through if it may: true, with its delivery's event. */
static bool pass_through(nm_network *net, const egress_port *p, uint32_t index, nm_time_ns at,
			 uint64_t order, nm_event_id *delivery)
{
	packet_slot *slot = packet_at(net, index);
	uint32_t egress_id = next_egress(net, p, slot);
	egress_port *e = &net->ports[egress_id];
	uint32_t bytes = slot->pkt.bytes;
	bool reserved = slot->reserved_port == egress_id;

	look(e);
	if (e->state != PORT_IDLE || e->inbound || e->peer_is_switch || credit_mode(net) ||
	    !may_coast(net, e, &slot->pkt) || traced(net, NM_TRACE_ENQUEUE, e->node) ||
	    traced(net, NM_TRACE_TX_START, e->node) || (!reserved && !has_room(net, e, bytes)))
		return false;
	/* Idle and empty when it arrives: below any ECN threshold, and it starts at once. */
	nm_time_ns done = at + port_serialization(e, bytes);
	if (done == at)
		return false; /* a zero-time transmission does not coast */
	note_hop(NULL, e);
	e->end_order = order; /* kept, and by its delivery too (arrival_place) */
	if (nm_engine_schedule_ordered(e->engine, done + e->arrive_delay_ns, order, deliver_event,
				       net, index, delivery))
		abort();
	e->state = PORT_AHEAD;
	e->in_service = index;
	e->in_service_bytes = bytes;
	e->busy_until = done;
	e->coast_arrival = *delivery;
	e->coast_end = NM_EVENT_NONE;
	e->ahead_at = at;
	e->ahead_order = order;
	e->ahead_reserved = reserved;
	if (reserved)
		slot->reserved_port = NO_INDEX; /* on the port's books until it arrives */
	return true;
}

void ports_settle_ahead(nm_network *net)
{
	for (uint32_t id = 0; id < net->topo.port_count; id++)
		if (net->ports[id].state == PORT_AHEAD)
			settle(net, &net->ports[id]);
}

/* Starts the port's next packet if it may. `arrival`: the place of the arrival that queued that
 * packet on an idle port, at this instant (NO_ORDER otherwise). */
static void start(nm_network *net, uint32_t port_id, uint64_t arrival)
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
		coast_on(net, port_id, index, arrival);
		return;
	}
	/* (A zero-time transmission's place may count as reached already: it gets a plain one.) */
	p->end_order = end_place(p, arrival);
	if (engine_reached(p->engine, done, p->end_order) ?
		    nm_engine_schedule(p->engine, done, p->priority, tx_done_event, net, port_id, NULL) :
		    nm_engine_schedule_ordered(p->engine, done, p->end_order, tx_done_event, net,
					       port_id, NULL))
		abort();
}

void port_try_start(nm_network *net, uint32_t port_id)
{
	start(net, port_id, NO_ORDER);
}

/* Queues packet `index` at the port; `arrival`: the place of its arrival there (NO_ORDER for a
 * packet sent by a host). */
static void enqueue(nm_network *net, uint32_t port_id, uint32_t index, uint64_t arrival)
{
	egress_port *p = &net->ports[port_id];
	packet_slot *slot = packet_at(net, index);
	settle(net, p);
	if (p->state != PORT_IDLE || p->queue_head != NO_INDEX)
		arrival = NO_ORDER; /* it will not start at its arrival */
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
	start(net, port_id, arrival);
}

void port_enqueue(nm_network *net, uint32_t port_id, uint32_t index)
{
	enqueue(net, port_id, index, NO_ORDER);
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
	uint64_t order = end_order == NO_ORDER ? 0 : arrival_place(p, end_order, priority);
	uint32_t there = arrival_partition(net, p, &slot->pkt);
	nm_event_id id = NM_EVENT_NONE;
	if (p->peer_is_switch && !net->par) {
		if (end_order != NO_ORDER && !engine_reached(p->engine, at, order) &&
		    pass_through(net, p, index, at, order, &id))
			return id;
		net->ports[next_egress(net, p, slot)].inbound++;
	}
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
 * next switch (`reserved`: where the original had its own when it left, else NO_INDEX); when
 * there is none it is lost to the buffer, as the original would have been. */
static void launch_duplicate(nm_network *net, uint32_t port_id, const packet_slot *original,
			     uint32_t reserved)
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
	if (reserved != NO_INDEX) {
		egress_port *target = &net->ports[reserved];
		if (!has_room(net, target, copy->pkt.bytes)) {
			drop_packet(net, port_id, index, NM_DROP_BUFFER);
			return;
		}
		target->reserved_bytes += copy->pkt.bytes;
		copy->reserved_port = reserved;
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
		/* Its own launch may pass its space over to the port it is bound for (pass_through). */
		uint32_t reserved = slot->reserved_port;
		launch(net, p, index, engine_now(engine), verdict.extra_delay, end_order);
		if (verdict.duplicate)
			launch_duplicate(net, port_id, slot, reserved);
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
	uint64_t place = engine_running_order(engine); /* before any trace callback */
	uint32_t egress_id;
	egress_port *egress;
	if (slot->reserved_port != NO_INDEX) {
		/* Pause mode: routed, and space set aside, when the upstream port started sending. */
		egress_id = slot->reserved_port;
		egress = &net->ports[egress_id];
		if (!net->par)
			egress->inbound--;
		settle(net, egress);
		egress->reserved_bytes -= slot->pkt.bytes;
		slot->reserved_port = NO_INDEX;
	} else {
		egress_id = route_at(net, net->ports[slot->ingress_port].node, &slot->pkt);
		egress = &net->ports[egress_id];
		note_hop(NULL, &net->ports[slot->ingress_port]);
		if (!net->par)
			egress->inbound--;
		settle(net, egress);
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
	enqueue(net, egress_id, index, place);
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
