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
 * A partition's promise is its next event (or its program's deadline) plus L, or, while its
 * program acts at the partition's clock (a thread that computes and will post), its clock plus L.
 * An acting partition's clock stands still, as the single engine's does while a thread computes.
 * A send is refused when it would break the sender's own promise. Promises change under a lock
 * of the partition's mailbox, and are read between two reads of an epoch that every raise moves,
 * so that a partition never combines promises from before and after a chain of sends.
 *
 * Determinism. Each partition runs its events in (time, priority, sequence) order; sequence
 * numbers of different partitions never coincide (nm_engine_set_sequence_space), and an event
 * sent keeps the sender's. Which events a partition runs before its safe time does not depend on
 * when the others ran theirs, so every partition runs the same events in the same order, run after
 * run, however the threads or processes are scheduled. Only where a run stops (BLOCKED) depends on
 * that, and the clock then stays at the last event run; and where a program that comes back
 * (nm_parallel_act) joins.
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

typedef enum nm_parallel_result {
	NM_PARALLEL_SATISFIED = 0, /* p's program acts from now on (its condition holds) */
	NM_PARALLEL_DEADLINE = 1,  /* the clock reached the deadline first; p's program acts */
	NM_PARALLEL_BLOCKED = 2,   /* not safe yet: the others must go on first */
	NM_PARALLEL_IDLE = 3,      /* nothing is left anywhere and no deadline: nothing can change */
} nm_parallel_result;

/* Acting and waiting. A partition's program (whatever drives it from outside the model: a
 * program's threads) either acts, at the partition's clock, which then stands still, or waits
 * in nm_parallel_run or nm_parallel_wait until an event or its deadline. A partition starts
 * acting at time 0. Its promise is its clock plus the lookahead while it acts; while it waits,
 * its next event or deadline, whichever comes first, plus the lookahead.
 *
 * By p's runner: its program acts again without a reason from the model (it comes back from
 * elsewhere). It can act only at what it promised minus the lookahead, or later: the events
 * before that run first, and the clock moves there. NM_PARALLEL_SATISFIED: it acts, at
 * nm_engine_now; NM_PARALLEL_BLOCKED: the others must go on first, call again; NM_PARALLEL_IDLE:
 * p promised nothing (no event, no deadline) and the others may be anywhere: it cannot act (a
 * partition whose program may come back keeps a deadline). */
nm_parallel_result nm_parallel_act(nm_parallel *par, uint32_t p);

/* By p's runner, and only while no other partition runs or acts at the same time (the caller
 * holds a lock that every runner takes): p's program acts again although it may have promised
 * nothing (no event, no deadline; nm_parallel_act answers IDLE then). It joins at the latest
 * clock of all the partitions, once its own events before that have run: no partition's clock
 * is past another's promise, so nothing that ran anywhere is before what it may send from there.
 * A partition that promised something joins where nm_parallel_act would. NM_PARALLEL_SATISFIED,
 * or NM_PARALLEL_BLOCKED when a partition ran at the same time after all. */
nm_parallel_result nm_parallel_rejoin(nm_parallel *par, uint32_t p);

/* Whether p's program acts (it has not waited since it last acted). */
bool nm_parallel_acting(const nm_parallel *par, uint32_t p);

/* The partition other than p whose promise is the least: the one p's safe time waits for (the
 * first of those that tie; p itself when it is the only one). */
uint32_t nm_parallel_holder(const nm_parallel *par, uint32_t p);

/* What partition q promised: it sends nothing due earlier (NM_TIME_NEVER: nothing at all). */
nm_time_ns nm_parallel_promise(const nm_parallel *par, uint32_t q);

/* Whether events sent to p wait in its inbox: what a run of p would take in first. */
bool nm_parallel_has_mail(const nm_parallel *par, uint32_t p);

/* By p's runner: its program stops acting and waits until `deadline` (NM_TIME_NEVER: for
 * events only) without running anything now. A deadline before what p promised minus the
 * lookahead counts as that. */
void nm_parallel_wait(nm_parallel *par, uint32_t p, nm_time_ns deadline);

/* The least promise of the partitions other than p (NM_TIME_NEVER: none will send anything). */
nm_time_ns nm_parallel_safe_until(const nm_parallel *par, uint32_t p);

/* Events p was sent for a time it had already run past (a promise broken by a bug), run as soon
 * as taken in rather than lost: 0 unless something is wrong. */
uint64_t nm_parallel_late(const nm_parallel *par, uint32_t p);

/* By p's runner: its program waits (as nm_parallel_wait) until pred(ctx) holds (pred may be
 * NULL), or the deadline; meanwhile p's inbox is taken in and its events run, one at a time, as
 * far as the others allow. NM_PARALLEL_SATISFIED and NM_PARALLEL_DEADLINE: p acts from now on
 * (a predicate that held on entry to a partition that acted: at once; to one that waited: where
 * nm_parallel_act would join, and IDLE when it promised nothing). NM_PARALLEL_BLOCKED: the next
 * event or the deadline is not safe yet, call again. On return p's promise is published. */
nm_parallel_result nm_parallel_run(nm_parallel *par, uint32_t p, nm_engine_pred_fn pred,
				   void *ctx, nm_time_ns deadline);

#ifdef __cplusplus
}
#endif

#endif
