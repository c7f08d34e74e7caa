/* Event engine: a 4-ary min-heap of (time, priority, sequence, record) over a pool of event
 * records. The heap holds the ordering key inline so comparisons never touch the pool; the pool
 * holds what to run. See nm_engine.h for the ordering rule and the cancellation scheme. */
#include "engine_internal.h"

#include "arena/working_set.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HEAP_ARITY 4
/* The heap's root and the two levels below it. */
#define HEAP_TOP_ENTRIES (1 + HEAP_ARITY + HEAP_ARITY * HEAP_ARITY)
_Static_assert(NM_ENGINE_PRIORITY_MAX == (UINT32_C(1) << (64 - 40)) - 1, "priority bits");
#define NO_SLOT UINT32_MAX
/* A sweep costs O(n) and comes once cancelled records outnumber live ones, so O(1) per cancel;
 * below this many they stay where they are. Few: each one left deepens every push and pop, and
 * its record and heap slot are more lines for the next process to take (a ping-pong's far
 * retransmission timers kept ~1000 in a heap of ~1000 at 1024; at 32, ~16 dead among ~2 live,
 * and transfers across processes took 2.25 us against 2.10 at 4, BENCHMARKS.md). */
#define SWEEP_MIN_CANCELLED 4

/* The ordering key is (time, order) with order = priority << SEQ_BITS | sequence (SEQ_BITS:
 * engine_internal.h), so that one
 * 128-bit compare (branch-free on x86-64) decides; the limits this implies are checked when
 * scheduling. */
#define SEQ_LIMIT (UINT64_C(1) << SEQ_BITS)


static inline unsigned __int128 entry_key(const heap_entry *e)
{
	return ((unsigned __int128)e->time << 64) | e->order;
}


static inline nm_event_id make_id(uint32_t slot, uint32_t generation)
{
	return ((uint64_t)generation << 32) | slot;
}

static inline int entry_before(const heap_entry *a, const heap_entry *b)
{
	return entry_key(a) < entry_key(b);
}

void nm_code_anchor(void)
{
}

int nm_engine_create(nm_engine **out)
{
	return nm_engine_create_in(NULL, out);
}

int nm_engine_create_in(fs_arena *arena, nm_engine **out)
{
	nm_engine *engine = fs_mem_calloc_line(arena, sizeof(*engine));
	if (!engine)
		return -ENOMEM;
	engine->arena = arena;
	engine->free_head = NO_SLOT;
	/* From 1: no place is 0, which stands for "nothing run yet at this instant". */
	engine->next_seq = 1;
	engine->seq_stride = 1;
	*out = engine;
	return 0;
}

void nm_engine_destroy(nm_engine *engine)
{
	if (!engine)
		return;
	fs_arena *arena = engine->arena;

	fs_mem_free(arena, engine->heap);
	fs_mem_free(arena, engine->records);
	fs_mem_free_line(arena, engine);
}

fs_arena *nm_engine_arena(const nm_engine *engine)
{
	return engine->arena;
}

nm_time_ns nm_engine_now(const nm_engine *engine)
{
	return engine->now;
}

static int grow_records(nm_engine *engine)
{
	uint32_t old_cap = engine->record_cap;
	if (old_cap >= UINT32_MAX / 2)
		return -ENOMEM;
	uint32_t new_cap = old_cap ? old_cap * 2 : 256;
	event_record *records = fs_mem_realloc(engine->arena, engine->records, (size_t)new_cap * sizeof(*records));
	if (!records)
		return -ENOMEM;
	/* Chain the new records in increasing order so allocation order is reproducible. */
	for (uint32_t i = old_cap; i < new_cap; i++) {
		records[i].fn = 0;
		records[i].generation = 1;
		records[i].next_free = (i + 1 < new_cap) ? i + 1 : engine->free_head;
	}
	engine->free_head = old_cap;
	engine->records = records;
	engine->record_cap = new_cap;
	return 0;
}

static int grow_heap(nm_engine *engine)
{
	size_t new_cap = engine->heap_cap ? engine->heap_cap * 2 : 256;
	heap_entry *heap = fs_mem_realloc(engine->arena, engine->heap, new_cap * sizeof(*heap));
	if (!heap)
		return -ENOMEM;
	engine->heap = heap;
	engine->heap_cap = new_cap;
	return 0;
}

static void free_record(nm_engine *engine, uint32_t slot)
{
	event_record *rec = &engine->records[slot];
	rec->fn = 0;
	rec->generation++;
	if (rec->generation == 0) /* keep ids non-zero after wrap-around */
		rec->generation = 1;
	rec->next_free = engine->free_head;
	engine->free_head = slot;
}

static void sift_up(heap_entry *heap, size_t pos, heap_entry item)
{
	while (pos > 0) {
		size_t parent = (pos - 1) / HEAP_ARITY;
		if (!entry_before(&item, &heap[parent]))
			break;
		heap[pos] = heap[parent];
		pos = parent;
	}
	heap[pos] = item;
}

static void sift_down(heap_entry *heap, size_t len, size_t pos, heap_entry item)
{
	unsigned __int128 item_key = entry_key(&item);
	for (;;) {
		size_t first = pos * HEAP_ARITY + 1;
		if (first >= len)
			break;
		size_t last = first + HEAP_ARITY < len ? first + HEAP_ARITY : len;
		size_t best = first;
		unsigned __int128 best_key = entry_key(&heap[first]);
		for (size_t c = first + 1; c < last; c++) {
			unsigned __int128 key = entry_key(&heap[c]);
			best = key < best_key ? c : best;
			best_key = key < best_key ? key : best_key;
		}
		if (best_key >= item_key)
			break;
		heap[pos] = heap[best];
		pos = best;
	}
	heap[pos] = item;
}

static heap_entry heap_pop(nm_engine *engine)
{
	heap_entry top = engine->heap[0];
	engine->heap_len--;
	if (engine->heap_len > 0)
		sift_down(engine->heap, engine->heap_len, 0, engine->heap[engine->heap_len]);
	return top;
}

static int push(nm_engine *engine, nm_time_ns at, uint64_t order, nm_event_fn fn,
		void *ctx, uint64_t arg, nm_event_id *id_out)
{
	if (engine->free_head == NO_SLOT && grow_records(engine) != 0)
		return -ENOMEM;
	if (engine->heap_len == engine->heap_cap && grow_heap(engine) != 0)
		return -ENOMEM;

	uint32_t slot = engine->free_head;
	event_record *rec = &engine->records[slot];
	engine->free_head = rec->next_free;
	rec->fn = NM_CODE(fn);
	rec->ctx = ctx;
	rec->arg = arg;

	heap_entry item = {
		.order = order,
		.time = at,
		.slot = slot,
	};
	sift_up(engine->heap, engine->heap_len++, item);
	if (id_out)
		*id_out = make_id(slot, rec->generation);
	return 0;
}

/* The next place for `priority` (checked by the caller), or -EOVERFLOW. */
static int take_order(nm_engine *engine, uint32_t priority, uint64_t *order_out)
{
	if (engine->next_seq >= SEQ_LIMIT)
		return -EOVERFLOW;
	*order_out = ((uint64_t)priority << SEQ_BITS) | engine->next_seq;
	engine->next_seq += engine->seq_stride;
	return 0;
}

int nm_engine_schedule(nm_engine *engine, nm_time_ns at, uint32_t priority, nm_event_fn fn,
		void *ctx, uint64_t arg, nm_event_id *id_out)
{
	uint64_t order;

	if (!fn || at < engine->now || priority > NM_ENGINE_PRIORITY_MAX)
		return -EINVAL;
	if (take_order(engine, priority, &order) != 0)
		return -EOVERFLOW;
	return push(engine, at, order, fn, ctx, arg, id_out);
}

int nm_engine_reserve_order(nm_engine *engine, uint32_t priority, uint64_t *order_out)
{
	if (priority > NM_ENGINE_PRIORITY_MAX)
		return -EINVAL;
	return take_order(engine, priority, order_out);
}

int nm_engine_set_sequence_space(nm_engine *engine, uint32_t index, uint32_t count)
{
	if (count == 0 || index >= count || engine->next_seq != 1)
		return -EINVAL;
	engine->next_seq = index + 1;
	engine->seq_stride = count;
	return 0;
}

bool nm_engine_reached(const nm_engine *engine, nm_time_ns at, uint64_t order)
{
	return engine_reached(engine, at, order);
}

int nm_engine_schedule_ordered(nm_engine *engine, nm_time_ns at, uint64_t order, nm_event_fn fn,
			       void *ctx, uint64_t arg, nm_event_id *id_out)
{
	if (!fn || nm_engine_reached(engine, at, order))
		return -EINVAL;
	return push(engine, at, order, fn, ctx, arg, id_out);
}

int nm_engine_schedule_after(nm_engine *engine, nm_time_ns delay, uint32_t priority,
			     nm_event_fn fn, void *ctx, uint64_t arg, nm_event_id *id_out)
{
	if (delay > NM_TIME_NEVER - engine->now)
		return -EOVERFLOW;
	return nm_engine_schedule(engine, engine->now + delay, priority, fn, ctx, arg, id_out);
}

/* Removes every cancelled entry and rebuilds the heap bottom-up: O(n). */
static void sweep_cancelled(nm_engine *engine)
{
	size_t kept = 0;
	for (size_t i = 0; i < engine->heap_len; i++) {
		heap_entry e = engine->heap[i];
		if (engine->records[e.slot].fn)
			engine->heap[kept++] = e;
		else
			free_record(engine, e.slot);
	}
	engine->heap_len = kept;
	engine->cancelled = 0;
	for (size_t i = kept / HEAP_ARITY + 1; i-- > 0;)
		if (i < kept)
			sift_down(engine->heap, kept, i, engine->heap[i]);
}

int nm_engine_cancel(nm_engine *engine, nm_event_id id)
{
	uint32_t slot = (uint32_t)id;
	uint32_t generation = (uint32_t)(id >> 32);
	if (id == NM_EVENT_NONE || slot >= engine->record_cap)
		return -ENOENT;
	event_record *rec = &engine->records[slot];
	if (rec->generation != generation || !rec->fn)
		return -ENOENT;
	rec->fn = 0;
	engine->cancelled++;
	size_t live = engine->heap_len - engine->cancelled;
	if (engine->cancelled >= SWEEP_MIN_CANCELLED && engine->cancelled > live)
		sweep_cancelled(engine);
	return 0;
}

/* Pops cancelled entries off the top; true when a live event is then on top. */
static bool settle_top(nm_engine *engine)
{
	while (engine->heap_len > 0) {
		uint32_t slot = engine->heap[0].slot;
		if (engine->records[slot].fn)
			return true;
		heap_pop(engine);
		free_record(engine, slot);
		engine->cancelled--;
	}
	return false;
}

/* Runs the live event on top of the heap (settle_top must have returned true). */
static void run_top(nm_engine *engine)
{
	heap_entry top = heap_pop(engine);
	event_record *rec = &engine->records[top.slot];
	fs_touch(rec);
	if (rec->ctx)
		fs_touch(rec->ctx);
	nm_event_fn fn = NM_CODE_AS(nm_event_fn, rec->fn);
	void *ctx = rec->ctx;
	uint64_t arg = rec->arg;
	/* Free first: the handler may schedule and reuse this record. */
	free_record(engine, top.slot);
	if (top.time != engine->now)
		engine->reached = 0;
	engine->now = top.time;
	if (top.order > engine->reached)
		engine->reached = top.order;
	engine->running = top.order;
	engine->events_run++;
	if (engine->observer) {
		nm_engine_observer_fn observer = NM_CODE_AS(nm_engine_observer_fn, engine->observer);

		observer(engine->observer_ctx, top.time, (uint32_t)(top.order >> SEQ_BITS), fn, arg);
	}
	fn(engine, ctx, arg);
}

uint64_t nm_engine_run_until(nm_engine *engine, nm_time_ns end)
{
	uint64_t before = engine->events_run;
	while (settle_top(engine) && engine->heap[0].time <= end)
		run_top(engine);
	if (end != NM_TIME_NEVER && end > engine->now)
		engine->now = end;
	if (end >= engine->now) /* everything due by now has run */
		engine->reached = UINT64_MAX;
	return engine->events_run - before;
}

uint64_t nm_engine_run_next_instant(nm_engine *engine)
{
	if (!settle_top(engine))
		return 0;
	nm_time_ns instant = engine->heap[0].time;
	uint64_t before = engine->events_run;
	while (settle_top(engine) && engine->heap[0].time == instant)
		run_top(engine);
	engine->reached = UINT64_MAX;
	return engine->events_run - before;
}

nm_run_result nm_engine_run_within(nm_engine *engine, nm_engine_pred_fn pred, void *ctx,
				   const nm_time_ns *limit)
{
	for (;;) {
		if (pred && pred(ctx))
			return NM_RUN_SATISFIED;
		if (!settle_top(engine) || engine->heap[0].time > *limit)
			return NM_RUN_IDLE;
		run_top(engine);
	}
}

nm_run_result nm_engine_run_until_pred(nm_engine *engine, nm_engine_pred_fn pred, void *ctx,
				       nm_time_ns deadline)
{
	if (nm_engine_run_within(engine, pred, ctx, &deadline) == NM_RUN_SATISFIED)
		return NM_RUN_SATISFIED;
	/* Nothing is due by the deadline (or at all). */
	if (deadline != NM_TIME_NEVER && deadline > engine->now)
		engine->now = deadline;
	if (!settle_top(engine) || engine->heap[0].time > engine->now)
		engine->reached = UINT64_MAX;
	return deadline == NM_TIME_NEVER ? NM_RUN_IDLE : NM_RUN_DEADLINE;
}

size_t nm_engine_pending(const nm_engine *engine)
{
	return engine->heap_len - engine->cancelled;
}

bool nm_engine_next_time(nm_engine *engine, nm_time_ns *time_out)
{
	if (!settle_top(engine))
		return false;
	*time_out = engine->heap[0].time;
	return true;
}

uint64_t nm_engine_events_run(const nm_engine *engine)
{
	return engine->events_run;
}

void nm_engine_note(const nm_engine *engine)
{
	size_t top = engine->heap_len < HEAP_TOP_ENTRIES ? engine->heap_len : HEAP_TOP_ENTRIES;

	fs_touch_span(engine, sizeof(*engine));
	if (top)
		fs_touch_span(engine->heap, top * sizeof(*engine->heap));
}

size_t nm_engine_memory_bytes(const nm_engine *engine)
{
	return sizeof(*engine) + engine->heap_cap * sizeof(heap_entry) +
	       (size_t)engine->record_cap * sizeof(event_record);
}

void nm_engine_set_observer(nm_engine *engine, nm_engine_observer_fn fn, void *ctx)
{
	engine->observer = NM_CODE(fn);
	engine->observer_ctx = ctx;
}
