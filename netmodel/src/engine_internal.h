/* The engine's layout, private to netmodel: engine.c, and the network's hot paths, which read
 * the clock inline (forward.c). See nm_engine.h for what the engine does. */
#ifndef NM_ENGINE_INTERNAL_H
#define NM_ENGINE_INTERNAL_H

#include <stddef.h>

#include "netmodel/nm_code.h"
#include "netmodel/nm_engine.h"

/* An event's order: its priority above, its sequence number below. */
#define SEQ_BITS 40

/* The place with `order`'s sequence number and another priority. */
static inline uint64_t order_with_priority(uint64_t order, uint32_t priority)
{
	return (uint64_t)priority << SEQ_BITS | (order & ((UINT64_C(1) << SEQ_BITS) - 1));
}

typedef struct heap_entry {
	uint64_t order;
	nm_time_ns time;
	uint32_t slot;
} heap_entry;

/* fn == 0 marks a cancelled record still referenced by the heap; free records are chained
 * through next_free. The generation changes each time a record is freed, which invalidates ids.
 * Handlers are kept as nm_code so that any process mapping the engine can run them. */
typedef struct event_record {
	nm_code fn;
	void *ctx;
	uint64_t arg;
	uint32_t generation;
	uint32_t next_free;
} event_record;

struct nm_engine {
	/* What events write, on the engine's first line (it begins one): the processes of a shared
	 * model take that line from each other at every turn (arena/working_set.h). */
	_Alignas(64) nm_time_ns now;
	/* The highest place (order) run at `now`; UINT64_MAX once every event due by `now` has run
	 * (a run that ended past them, or the clock set to a deadline). */
	uint64_t reached;
	/* The place (order) of the event running, or of the last one run. */
	uint64_t running;
	uint64_t next_seq;
	uint64_t events_run;
	/* No more than records: each entry has its own (uint32_t slots). */
	uint32_t heap_len;
	uint32_t cancelled; /* cancelled records still in the heap */
	uint32_t free_head;
	uint32_t record_cap;
	heap_entry *heap;

	event_record *records;
	size_t heap_cap;
	uint64_t seq_stride; /* 1, or the engine count of a parallel simulation (nm_parallel.h) */
	fs_arena *arena;
	nm_code observer; /* nm_engine_observer_fn */
	void *observer_ctx;
};
_Static_assert(offsetof(struct nm_engine, heap) < 64, "what events write shares the first line");

static inline nm_time_ns engine_now(const nm_engine *engine)
{
	return engine->now;
}

/* The place of the event running: its handler may give what it starts that place (the network
 * does, for a packet that finds its egress port idle, forward.c). */
static inline uint64_t engine_running_order(const nm_engine *engine)
{
	return engine->running;
}

/* nm_engine_reached, inline. */
static inline bool engine_reached(const nm_engine *engine, nm_time_ns at, uint64_t order)
{
	return at < engine->now || (at == engine->now && order <= engine->reached);
}

#endif
