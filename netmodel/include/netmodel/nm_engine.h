/* The deterministic discrete-event engine: one virtual clock and its queue of pending events.
 *
 * Ordering rule. Events run in increasing (time, priority, sequence):
 *   - time      virtual nanoseconds at which the event is due;
 *   - priority  a caller-given number up to NM_ENGINE_PRIORITY_MAX, lower first; the network
 *               model passes the id of the node where the event happens, so simultaneous events
 *               are ordered by node id;
 *   - sequence  a per-engine counter, from 1, incremented on every schedule call: among equal
 *               (time, priority) the event scheduled first runs first. It has 40 bits: an engine
 *               runs at most 2^40 - 1 (~1.1e12) schedule calls, then refuses with -EOVERFLOW.
 * Nothing else (pointer values, hash order, threads, the host clock) takes part, so the same
 * sequence of calls gives the same run on every machine.
 *
 * The clock only moves inside the nm_engine_run_* functions. An event never runs before the
 * current time: scheduling in the past is an error. Handlers may schedule and cancel freely.
 *
 * Cost: the queue is a 4-ary heap of 24-byte entries on an array; event records live in a pool
 * with a free list, so the hot path does no allocation once the arrays have grown to the peak
 * number of pending events. Scheduling and running are O(log n). Cancel is O(1): the record is
 * marked and dropped when it reaches the top of the heap, or by an O(n) sweep once cancelled
 * records outnumber live ones, so memory stays within twice the live events.
 *
 * An engine is single-threaded; several engines may coexist (no global state).
 *
 * Memory. An engine created in an arena keeps all its memory there (so that several processes
 * mapping the arena can run it, MULTIPROCESS.md); the networks and message layers built on it
 * follow it into the same arena.
 */
#ifndef NM_ENGINE_H
#define NM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena/arena.h"
#include "netmodel/nm_time.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nm_engine nm_engine;

/* Priorities and the sequence number share one 64-bit word of the heap key. */
#define NM_ENGINE_PRIORITY_MAX ((UINT32_C(1) << 24) - 1)

/* Names one scheduled event for nm_engine_cancel. Never NM_EVENT_NONE for a scheduled event;
 * an id stays invalid once its event has run or been cancelled (records carry a generation). */
typedef uint64_t nm_event_id;
#define NM_EVENT_NONE UINT64_C(0)

/* An event handler. `arg` is the 64-bit value given when scheduling. */
typedef void (*nm_event_fn)(nm_engine *engine, void *ctx, uint64_t arg);

/* Called just before each event runs (for logs and debugging); may be NULL. */
typedef void (*nm_engine_observer_fn)(void *ctx, nm_time_ns time, uint32_t priority,
				      nm_event_fn fn, uint64_t arg);

/* Returns 0 and a new engine at time 0, or -ENOMEM. */
int nm_engine_create(nm_engine **out);
/* The same in `arena` (NULL: process memory, as nm_engine_create). */
int nm_engine_create_in(fs_arena *arena, nm_engine **out);
/* The arena the engine lives in, NULL for process memory. */
fs_arena *nm_engine_arena(const nm_engine *engine);
void nm_engine_destroy(nm_engine *engine);

nm_time_ns nm_engine_now(const nm_engine *engine);

/* Schedules fn(engine, ctx, arg) at absolute time `at` (>= now). Returns 0, -EINVAL (at < now,
 * fn NULL or priority above NM_ENGINE_PRIORITY_MAX), -EOVERFLOW (sequence numbers exhausted) or
 * -ENOMEM. id_out may be NULL. */
int nm_engine_schedule(nm_engine *engine, nm_time_ns at, uint32_t priority, nm_event_fn fn,
		       void *ctx, uint64_t arg, nm_event_id *id_out);

/* Same, at now + delay (-EOVERFLOW when that passes NM_TIME_NEVER). */
int nm_engine_schedule_after(nm_engine *engine, nm_time_ns delay, uint32_t priority,
			     nm_event_fn fn, void *ctx, uint64_t arg, nm_event_id *id_out);

/* Cancels a pending event. Returns 0, or -ENOENT when the id has already run or been cancelled
 * or never existed. */
int nm_engine_cancel(nm_engine *engine, nm_event_id id);

/* Reserved places. An event that may never need to be scheduled (one whose work can be done by
 * whoever looks first) can still have the place in the order that scheduling it now would have
 * given it: *order_out takes the sequence number now, with `priority`. Returns 0, -EINVAL
 * (priority too high) or -EOVERFLOW. */
int nm_engine_reserve_order(nm_engine *engine, uint32_t priority, uint64_t *order_out);

/* Schedules fn at `at` in a reserved place: it runs where an event scheduled when the place was
 * reserved would run. Returns 0, -EINVAL (fn NULL, or that place has been reached:
 * nm_engine_reached) or -ENOMEM. A place is meant for a later instant than the one it was
 * reserved at: at that one, places below the event running count as reached. */
int nm_engine_schedule_ordered(nm_engine *engine, nm_time_ns at, uint64_t order, nm_event_fn fn,
			       void *ctx, uint64_t arg, nm_event_id *id_out);

/* Engine `index` of `count` that run one simulation together (nm_parallel.h): its sequence
 * numbers are index + 1, index + 1 + count, index + 1 + 2 * count, ..., so that no two engines
 * give out the same one and events that one sends another keep a place of their own. Only
 * before the first schedule or reservation; -EINVAL otherwise, or when index >= count. */
int nm_engine_set_sequence_space(nm_engine *engine, uint32_t index, uint32_t count);

/* Whether an event at `at` in place `order` would have run by now (the one running counts). */
bool nm_engine_reached(const nm_engine *engine, nm_time_ns at, uint64_t order);

/* Runs every event due at or before `end`, then sets the clock to `end` (virtual time passes even
 * when nothing happens). With end == NM_TIME_NEVER it runs until no event is left and leaves the
 * clock at the last event's time. Returns the number of events run. */
uint64_t nm_engine_run_until(nm_engine *engine, nm_time_ns end);

/* Runs all events of the next instant: the earliest pending time, including events that handlers
 * add for that same time. Returns the number run (0: nothing was pending, clock unchanged). */
uint64_t nm_engine_run_next_instant(nm_engine *engine);

typedef bool (*nm_engine_pred_fn)(void *ctx);

typedef enum nm_run_result {
	NM_RUN_SATISFIED = 0, /* the predicate became true */
	NM_RUN_DEADLINE = 1,  /* the deadline passed first; the clock is at the deadline */
	NM_RUN_IDLE = 2,      /* no event left and no finite deadline: nothing can change */
} nm_run_result;

/* Runs events one at a time until pred(ctx) is true (checked first, then after every event) or
 * the next event is due after `deadline`. On NM_RUN_DEADLINE the clock is set to the deadline,
 * which is how a timed wait lets virtual time pass. */
nm_run_result nm_engine_run_until_pred(nm_engine *engine, nm_engine_pred_fn pred, void *ctx,
				       nm_time_ns deadline);

/* Runs events one at a time while pred(ctx) is false (pred may be NULL: never true) and the next
 * event is due at or before *limit, read before each event (a handler may lower it). Unlike
 * nm_engine_run_until_pred the clock stays at the last event run: NM_RUN_IDLE here says only
 * that nothing more is due by *limit. */
nm_run_result nm_engine_run_within(nm_engine *engine, nm_engine_pred_fn pred, void *ctx,
				   const nm_time_ns *limit);

/* Number of events scheduled and neither run nor cancelled. */
size_t nm_engine_pending(const nm_engine *engine);

/* Time of the earliest pending event; false when none. */
bool nm_engine_next_time(nm_engine *engine, nm_time_ns *time_out);

/* Total events run since creation (the benchmark's numerator). */
uint64_t nm_engine_events_run(const nm_engine *engine);

/* Notes in the calling thread's working set (arena/working_set.h) what
 * every run touches: the engine and the top levels of its queue. Each
 * event run notes its own record and context. */
void nm_engine_note(const nm_engine *engine);

/* Bytes held by the engine's arrays (queue + records), for memory accounting. */
size_t nm_engine_memory_bytes(const nm_engine *engine);

void nm_engine_set_observer(nm_engine *engine, nm_engine_observer_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
