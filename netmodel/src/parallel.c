/* A conservative parallel simulation (nm_parallel.h): partitions, their inboxes and promises.
 *
 * An inbox is a stack that senders push on with a compare-and-swap and its partition takes whole
 * with an exchange (so no pop ever races a push). A sender pushes first and lowers the receiver's
 * promise second; a partition that publishes its promise reads it, takes in its inbox, and
 * replaces it only if no sender lowered it meanwhile: a message is always either in the heap the
 * promise was computed from, or counted by the sender's lowering.
 */
#include "netmodel/nm_parallel.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "engine_internal.h"
#include "netmodel/nm_code.h"

#define CACHE_LINE 64

typedef struct parallel_message {
	struct parallel_message *next;
	nm_time_ns at;
	uint64_t order; /* the sender's place (nm_engine_reserve_order) */
	nm_code fn;     /* nm_event_fn */
	void *ctx;
	uint64_t arg;
} parallel_message;

/* What others read and write sits on a line of its own (a sender writes both); the rest is the
 * runner's. */
typedef struct partition {
	_Alignas(CACHE_LINE) nm_time_ns promise;
	parallel_message *inbox;
	_Alignas(CACHE_LINE) nm_engine *engine;
	bool acting;
	/* During a run, the last time it may reach: what its own sends do to the others' promises
	 * lowers it (an answer to one may come back 2 lookaheads after the event that sent it). */
	nm_time_ns reach;
	/* Taken in but not yet in the heap (it could not grow): tried again at the next take-in. */
	parallel_message *unplaced;
	uint64_t late; /* messages for a time already run past (a broken promise) */
	/* Messages taken in, kept for this partition's own sends: the arena's allocator takes a
	 * lock that every process would pass around. */
	parallel_message *spare;
	uint32_t spare_count;
} partition;

struct nm_parallel {
	fs_arena *arena;
	uint32_t count;
	nm_time_ns lookahead;
	void *parts_memory;
	partition *parts; /* in parts_memory, on a line boundary */
};

static nm_time_ns plus_lookahead(const nm_parallel *par, nm_time_ns t)
{
	return t >= NM_TIME_NEVER - par->lookahead ? NM_TIME_NEVER : t + par->lookahead;
}

int nm_parallel_create_in(fs_arena *arena, uint32_t partitions, nm_time_ns lookahead,
			  nm_parallel **out)
{
	nm_parallel *par;

	if (partitions == 0 || lookahead == 0 || lookahead == NM_TIME_NEVER)
		return -EINVAL;
	par = fs_mem_calloc(arena, 1, sizeof(*par));
	if (!par)
		return -ENOMEM;
	par->arena = arena;
	par->count = partitions;
	par->lookahead = lookahead;
	/* An allocation is aligned to 16 only: a partition's lines must not be shared. */
	par->parts_memory = fs_mem_calloc(arena, partitions + 1, sizeof(partition));
	if (!par->parts_memory) {
		fs_mem_free(arena, par);
		return -ENOMEM;
	}
	par->parts = (partition *)(((uintptr_t)par->parts_memory + CACHE_LINE - 1) &
				   ~(uintptr_t)(CACHE_LINE - 1));
	for (uint32_t p = 0; p < partitions; p++) {
		partition *part = &par->parts[p];

		if (nm_engine_create_in(arena, &part->engine) != 0) {
			par->count = p;
			nm_parallel_destroy(par);
			return -ENOMEM;
		}
		nm_engine_set_sequence_space(part->engine, p, partitions);
		part->promise = lookahead; /* nothing scheduled yet; its clock is 0 */
	}
	*out = par;
	return 0;
}

/* Spares kept per partition at most; more go back to the arena. */
#define SPARE_MAX 64

static parallel_message *new_message(nm_parallel *par, partition *part)
{
	parallel_message *m = part->spare;

	if (!m)
		return fs_mem_alloc(par->arena, sizeof(*m));
	part->spare = m->next;
	part->spare_count--;
	return m;
}

static void done_with(nm_parallel *par, partition *part, parallel_message *m)
{
	if (part->spare_count == SPARE_MAX) {
		fs_mem_free(par->arena, m);
		return;
	}
	m->next = part->spare;
	part->spare = m;
	part->spare_count++;
}

static void free_messages(nm_parallel *par, parallel_message *m)
{
	while (m) {
		parallel_message *next = m->next;

		fs_mem_free(par->arena, m);
		m = next;
	}
}

void nm_parallel_destroy(nm_parallel *par)
{
	if (!par)
		return;
	for (uint32_t p = 0; p < par->count; p++) {
		free_messages(par, par->parts[p].inbox);
		free_messages(par, par->parts[p].unplaced);
		free_messages(par, par->parts[p].spare);
		nm_engine_destroy(par->parts[p].engine);
	}
	fs_mem_free(par->arena, par->parts_memory);
	fs_mem_free(par->arena, par);
}

uint32_t nm_parallel_count(const nm_parallel *par)
{
	return par->count;
}

nm_time_ns nm_parallel_lookahead(const nm_parallel *par)
{
	return par->lookahead;
}

nm_engine *nm_parallel_engine(nm_parallel *par, uint32_t p)
{
	return p < par->count ? par->parts[p].engine : NULL;
}

static void lower_promise(partition *part, nm_time_ns to)
{
	nm_time_ns seen = __atomic_load_n(&part->promise, __ATOMIC_RELAXED);

	while (to < seen && !__atomic_compare_exchange_n(&part->promise, &seen, to, false,
							   __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

/* Checks what any send must keep; 0 or -EINVAL. */
static int check_send(const nm_parallel *par, uint32_t from, uint32_t to, nm_time_ns at,
		      nm_event_fn fn)
{
	const partition *sender;

	if (from >= par->count || to >= par->count || from == to || !fn)
		return -EINVAL;
	sender = &par->parts[from];
	if (at < plus_lookahead(par, engine_now(sender->engine)) ||
	    at < __atomic_load_n(&sender->promise, __ATOMIC_RELAXED))
		return -EINVAL;
	return 0;
}

static int send_in_place(nm_parallel *par, uint32_t from, uint32_t to, nm_time_ns at,
			 uint64_t order, nm_event_fn fn, void *ctx, uint64_t arg)
{
	partition *sender = &par->parts[from];
	partition *receiver = &par->parts[to];
	parallel_message *m = new_message(par, sender);

	if (!m)
		return -ENOMEM;
	*m = (parallel_message){
		.at = at, .order = order, .fn = NM_CODE(fn), .ctx = ctx, .arg = arg,
	};
	m->next = __atomic_load_n(&receiver->inbox, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&receiver->inbox, &m->next, m, false,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	lower_promise(receiver, plus_lookahead(par, at));
	if (plus_lookahead(par, at) - 1 < sender->reach)
		sender->reach = plus_lookahead(par, at) - 1;
	return 0;
}

int nm_parallel_send(nm_parallel *par, uint32_t from, uint32_t to, nm_time_ns at,
		     uint32_t priority, nm_event_fn fn, void *ctx, uint64_t arg)
{
	uint64_t order;
	int rc = check_send(par, from, to, at, fn);

	if (rc == 0)
		rc = nm_engine_reserve_order(par->parts[from].engine, priority, &order);
	return rc ? rc : send_in_place(par, from, to, at, order, fn, ctx, arg);
}

int nm_parallel_send_ordered(nm_parallel *par, uint32_t from, uint32_t to, nm_time_ns at,
			     uint64_t order, nm_event_fn fn, void *ctx, uint64_t arg)
{
	int rc = check_send(par, from, to, at, fn);

	return rc ? rc : send_in_place(par, from, to, at, order, fn, ctx, arg);
}

/* Puts what came in (and what could not be placed before) on the heap. */
static void take_in(nm_parallel *par, partition *part)
{
	parallel_message *m = part->unplaced;

	part->unplaced = NULL;
	if (__atomic_load_n(&part->inbox, __ATOMIC_RELAXED)) {
		parallel_message *tail = __atomic_exchange_n(&part->inbox, NULL, __ATOMIC_ACQUIRE);

		while (tail) {
			parallel_message *next = tail->next;

			tail->next = m;
			m = tail;
			tail = next;
		}
	}
	while (m) {
		parallel_message *next = m->next;
		nm_event_fn fn = NM_CODE_AS(nm_event_fn, m->fn);
		int rc;

		if (nm_engine_reached(part->engine, m->at, m->order)) {
			/* Cannot happen while every promise is kept: run it now, and count it. */
			part->late++;
			rc = nm_engine_schedule(part->engine, engine_now(part->engine),
						(uint32_t)(m->order >> SEQ_BITS), fn, m->ctx, m->arg,
						NULL);
		} else {
			rc = nm_engine_schedule_ordered(part->engine, m->at, m->order, fn, m->ctx,
							m->arg, NULL);
		}
		if (rc != 0) {
			m->next = part->unplaced;
			part->unplaced = m;
		} else {
			done_with(par, part, m);
		}
		m = next;
	}
}

/* The earliest time p might act or run an event at. */
static nm_time_ns earliest(partition *part)
{
	nm_time_ns t = NM_TIME_NEVER;

	if (part->acting)
		return engine_now(part->engine);
	nm_engine_next_time(part->engine, &t);
	for (const parallel_message *m = part->unplaced; m; m = m->next)
		if (m->at < t)
			t = m->at;
	return t;
}

static void publish(nm_parallel *par, partition *part)
{
	nm_time_ns seen, promise;

	do {
		seen = __atomic_load_n(&part->promise, __ATOMIC_ACQUIRE);
		take_in(par, part);
		promise = plus_lookahead(par, earliest(part));
		if (promise == seen)
			return; /* a store would only take the line from those who read it */
	} while (!__atomic_compare_exchange_n(&part->promise, &seen, promise, false,
					      __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

nm_time_ns nm_parallel_set_acting(nm_parallel *par, uint32_t p, bool acting)
{
	partition *part = &par->parts[p];
	nm_engine *engine = part->engine;

	if (acting && !part->acting) {
		nm_time_ns promised = __atomic_load_n(&part->promise, __ATOMIC_ACQUIRE);

		/* Others may have run up to what p promised: it joins there. No event of p is
		 * due before it (the promise counted them all). */
		if (promised != NM_TIME_NEVER && promised - par->lookahead > engine_now(engine))
			engine->now = promised - par->lookahead, engine->reached = 0;
	}
	part->acting = acting;
	publish(par, part);
	return engine_now(engine);
}

uint64_t nm_parallel_late(const nm_parallel *par, uint32_t p)
{
	return par->parts[p].late;
}

nm_time_ns nm_parallel_safe_until(const nm_parallel *par, uint32_t p)
{
	nm_time_ns safe = NM_TIME_NEVER;

	for (uint32_t q = 0; q < par->count; q++) {
		nm_time_ns promise;

		if (q == p)
			continue;
		promise = __atomic_load_n(&par->parts[q].promise, __ATOMIC_ACQUIRE);
		if (promise < safe)
			safe = promise;
	}
	return safe;
}

nm_parallel_result nm_parallel_run(nm_parallel *par, uint32_t p, nm_engine_pred_fn pred,
				   void *ctx, nm_time_ns deadline)
{
	partition *part = &par->parts[p];
	nm_engine *engine = part->engine;

	for (;;) {
		/* Read before taking in: a sender pushes before it raises its own promise. */
		nm_time_ns safe = nm_parallel_safe_until(par, p);

		part->reach = part->acting ? engine_now(engine)
			: safe == NM_TIME_NEVER ? NM_TIME_NEVER : safe - 1;
		if (deadline < part->reach)
			part->reach = deadline;
		take_in(par, part);
		if (nm_engine_run_within(engine, pred, ctx, &part->reach) == NM_RUN_SATISFIED) {
			part->acting = true;
			publish(par, part);
			return NM_PARALLEL_SATISFIED;
		}
		if (__atomic_load_n(&part->inbox, __ATOMIC_RELAXED))
			continue; /* something came for a time that may be safe */
		if (deadline != NM_TIME_NEVER && deadline <= part->reach) {
			if (deadline > engine_now(engine))
				nm_engine_run_until(engine, deadline); /* nothing is due by then */
			publish(par, part);
			return NM_PARALLEL_DEADLINE;
		}
		publish(par, part);
		if (earliest(part) != NM_TIME_NEVER || deadline != NM_TIME_NEVER)
			return NM_PARALLEL_BLOCKED;
		/* Read again: another may have acted and sent since the first look. */
		return nm_parallel_safe_until(par, p) == NM_TIME_NEVER &&
				       !__atomic_load_n(&part->inbox, __ATOMIC_ACQUIRE) ?
			       NM_PARALLEL_IDLE :
			       NM_PARALLEL_BLOCKED;
	}
}
