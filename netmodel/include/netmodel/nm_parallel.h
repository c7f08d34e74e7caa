/* A conservative parallel simulation: several engines (partitions) that run at once, each in its
 * own thread or process, and send each other events through inboxes in shared memory.
 *
 * Why. When several processes share one engine, its state (the heap, the packets, the ports)
 * moves between their CPUs' caches at every turn, and that costs more than the events themselves
 * (BENCHMARKS.md, providers/sim/MULTIPROCESS.md). Here each partition keeps its own state and only
 * the events one sends another cross.
 *
 * The rule that makes it safe is the lookahead L > 0: an event that one partition sends another
 * is due at least L after the sender's clock (in a network, L is the least latency of a link
 * between them). Each partition publishes a promise: it will send nothing due before that time.
 * A partition may run its events due before the least promise of the others (its safe time), since
 * nothing due earlier can still come to it; the earliest of all can always go on, since L > 0.
 *
 * A partition's promise is its next event plus L, or, while something outside the model may act
 * there at the partition's clock (a program's thread that computes and will post: "acting"), its
 * clock plus L. An acting partition's clock stands still, as the single engine's does while a
 * thread computes. A send is refused when it would break the sender's own promise.
 *
 * Determinism. Each partition runs its events in (time, priority, sequence) order; sequence
 * numbers of different partitions never coincide (nm_engine_set_sequence_space), and an event
 * sent keeps the sender's. Which events a partition runs before its safe time does not depend on
 * when the others ran theirs, so every partition runs the same events in the same order, run after
 * run, however the threads or processes are scheduled. Only where a run stops (BLOCKED) depends on
 * that, and the clock then stays at the last event run.
 *
 * Memory. Everything lives in the arena given at creation, so that every process mapping it can
 * run its partition; event handlers are kept as nm_code.
 */
#ifndef NM_PARALLEL_H
#define NM_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

#include "arena/arena.h"
#include "netmodel/nm_engine.h"
#include "netmodel/nm_time.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nm_parallel nm_parallel;

/* `partitions` engines (at least 1) at time 0, in `arena` (NULL: process memory, for threads).
 * Returns 0, -EINVAL (no partitions, lookahead 0 or NM_TIME_NEVER) or -ENOMEM. */
int nm_parallel_create_in(fs_arena *arena, uint32_t partitions, nm_time_ns lookahead,
			  nm_parallel **out);
/* Frees the engines and any events still in their inboxes. */
void nm_parallel_destroy(nm_parallel *par);

uint32_t nm_parallel_count(const nm_parallel *par);
nm_time_ns nm_parallel_lookahead(const nm_parallel *par);

/* Partition p's engine: its own events are scheduled there as on any engine, by p's runner. */
nm_engine *nm_parallel_engine(nm_parallel *par, uint32_t p);

/* From partition `from` (called by its runner, from one of its events or while it acts): an
 * event fn(engine of `to`, ctx, arg) at `at` in partition `to` (another one), with `priority`.
 * Returns 0; -EINVAL when `at` is before from's clock plus the lookahead, or before its promise,
 * when fn is NULL, to == from, or a partition or the priority is out of range; -EOVERFLOW
 * (sequence numbers exhausted); -ENOMEM. */
int nm_parallel_send(nm_parallel *par, uint32_t from, uint32_t to, nm_time_ns at,
		     uint32_t priority, nm_event_fn fn, void *ctx, uint64_t arg);

/* The same in a place `order` that `from` reserved on its own engine (nm_engine_reserve_order):
 * the event runs where one scheduled there when the place was taken would run. */
int nm_parallel_send_ordered(nm_parallel *par, uint32_t from, uint32_t to, nm_time_ns at,
			     uint64_t order, nm_event_fn fn, void *ctx, uint64_t arg);

/* Whether something outside the model may act at p now (its clock), by p's runner. Turned on,
 * the clock first moves up to the earliest time p still promised the others minus the lookahead
 * (a program that comes back from elsewhere joins where the others may already be), and the
 * promise becomes the clock plus the lookahead. Turned off, the promise becomes p's next event
 * plus the lookahead. Returns p's clock. */
nm_time_ns nm_parallel_set_acting(nm_parallel *par, uint32_t p, bool acting);

/* The least promise of the partitions other than p (NM_TIME_NEVER: none will send anything). */
nm_time_ns nm_parallel_safe_until(const nm_parallel *par, uint32_t p);

/* Events p was sent for a time it had already run past (a promise broken by a bug), run as soon
 * as taken in rather than lost: 0 unless something is wrong. */
uint64_t nm_parallel_late(const nm_parallel *par, uint32_t p);

typedef enum nm_parallel_result {
	NM_PARALLEL_SATISFIED = 0, /* pred became true: p is acting from now on */
	NM_PARALLEL_DEADLINE = 1,  /* the clock reached the deadline first */
	NM_PARALLEL_BLOCKED = 2,   /* the next event (or deadline) is not safe yet: others must go on */
	NM_PARALLEL_IDLE = 3,      /* nothing is left anywhere and no deadline: nothing can change */
} nm_parallel_result;

/* By p's runner: takes in p's inbox and runs its events one at a time until pred(ctx) is true
 * (pred may be NULL), the deadline passes (NM_TIME_NEVER: none) or the next event is not safe.
 * While p acts only events due at its clock run. On return p's promise is published. */
nm_parallel_result nm_parallel_run(nm_parallel *par, uint32_t p, nm_engine_pred_fn pred,
				   void *ctx, nm_time_ns deadline);

#ifdef __cplusplus
}
#endif

#endif
