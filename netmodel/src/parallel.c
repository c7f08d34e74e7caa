/* A conservative parallel simulation (nm_parallel.h): partitions, their inboxes and promises.
 *
 * Each partition has a mailbox that others write to: a lock, its inbox and its promise. A sender
 * takes the receiver's lock, pushes its message and lowers the receiver's promise to what the
 * message allows; the partition takes its inbox in and raises its promise under the same lock,
 * so a message is always either in the heap the promise was computed from, or counted by the
 * lowering. Every raise of a promise moves the epoch after it: a partition reads the others'
 * promises between two reads of the epoch and reads them again if it moved, so that it never
 * combines one partition's promise from before a chain of sends with another's from after it.
 * (The lock is held for a few stores; a holder found dead, a process killed in there, has its
 * lock taken over: a sender lowers before it pushes, so one that dies leaves a promise too low.)
 */
#define _GNU_SOURCE /* syscall */
#include "netmodel/nm_parallel.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

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

typedef struct partition {
	/* The mailbox: what others write. */
	_Alignas(CACHE_LINE) uint64_t lock; /* its holder (pid << 32 | tid), 0 when free */
	parallel_message *inbox;
	nm_time_ns promise;
	/* The runner's. */
	_Alignas(CACHE_LINE) nm_engine *engine;
	bool acting;
	/* When its program, waiting, may act of itself (its deadline): counted in the promise. */
	nm_time_ns wake;
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
	uint64_t *epoch;  /* in parts_memory too, on a line of its own */
};

static nm_time_ns plus_lookahead(const nm_parallel *par, nm_time_ns t)
{
	return t >= NM_TIME_NEVER - par->lookahead ? NM_TIME_NEVER : t + par->lookahead;
}

static nm_time_ns minus_lookahead(const nm_parallel *par, nm_time_ns t)
{
	return t == NM_TIME_NEVER ? NM_TIME_NEVER : t < par->lookahead ? 0 : t - par->lookahead;
}

/* ---- the mailbox's lock ---- */

static __thread uint64_t lock_name; /* 0: not known yet, or forked since */
static pthread_once_t fork_watch = PTHREAD_ONCE_INIT;

static void forget_lock_name(void)
{
	lock_name = 0;
}

static void watch_forks(void)
{
	pthread_atfork(NULL, NULL, forget_lock_name);
}

static uint64_t me(void)
{
	if (!lock_name) {
		pthread_once(&fork_watch, watch_forks);
		lock_name = (uint64_t)(uint32_t)getpid() << 32 | (uint32_t)syscall(SYS_gettid);
	}
	return lock_name;
}

/* Turns a locker spins on a held mailbox before it gives its CPU away (the holder may be waiting
 * for one), and before it looks whether the holder is alive. */
#define HOLDER_YIELD_SPINS 128
#define HOLDER_CHECK_SPINS 65536

/* The holding thread is gone (its process, or itself). Processes in another PID namespace are not
 * seen: the fabric's processes share one. */
static bool holder_dead(uint64_t holder)
{
	return syscall(SYS_tgkill, (pid_t)(holder >> 32), (pid_t)(uint32_t)holder, 0) == -1 &&
	       errno == ESRCH;
}

static void mailbox_lock(partition *part)
{
	uint64_t name = me();

	for (unsigned spins = 1;; spins++) {
		uint64_t holder = 0;

		if (__atomic_compare_exchange_n(&part->lock, &holder, name, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		__builtin_ia32_pause();
		if (spins % HOLDER_YIELD_SPINS == 0)
			sched_yield();
		if (spins % HOLDER_CHECK_SPINS == 0 && holder_dead(holder) &&
		    __atomic_compare_exchange_n(&part->lock, &holder, name, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
	}
}

static void mailbox_unlock(partition *part)
{
	__atomic_store_n(&part->lock, 0, __ATOMIC_RELEASE);
}

/* A sender lowers a promise (under its mailbox's lock). */
static void lower_promise(partition *part, nm_time_ns promise)
{
	__atomic_store_n(&part->promise, promise, __ATOMIC_RELEASE);
}

/* Its partition raises a promise (under its mailbox's lock): the epoch moves first. Only a raise
 * can mislead a reader: with none during a read of every promise, each value read was at most
 * what its partition could still send at, and what a chain of sends starting there can bring is
 * later still. A reader that sees the raised value then sees the epoch moved when it reads it
 * again, unless it read it after the move the first time, and then it also saw everything the
 * raiser did before (its sends' lowerings). */
static void raise_promise(nm_parallel *par, partition *part, nm_time_ns promise)
{
	__atomic_add_fetch(par->epoch, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&part->promise, promise, __ATOMIC_RELEASE);
}

/* ---- life ---- */

int nm_parallel_create_in(fs_arena *arena, uint32_t partitions, nm_time_ns lookahead,
			  nm_parallel **out)
{
	nm_parallel *par;
	uintptr_t line;

	if (partitions == 0 || lookahead == 0 || lookahead == NM_TIME_NEVER)
		return -EINVAL;
	par = fs_mem_calloc(arena, 1, sizeof(*par));
	if (!par)
		return -ENOMEM;
	par->arena = arena;
	par->count = partitions;
	par->lookahead = lookahead;
	/* An allocation is aligned to 16 only: the partitions' and the epoch's lines must not be
	 * shared. */
	par->parts_memory = fs_mem_calloc(arena, partitions + 2, sizeof(partition));
	if (!par->parts_memory) {
		fs_mem_free(arena, par);
		return -ENOMEM;
	}
	line = ((uintptr_t)par->parts_memory + CACHE_LINE - 1) & ~(uintptr_t)(CACHE_LINE - 1);
	par->epoch = (uint64_t *)line;
	par->parts = (partition *)(line + sizeof(partition));
	for (uint32_t p = 0; p < partitions; p++) {
		partition *part = &par->parts[p];

		if (nm_engine_create_in(arena, &part->engine) != 0) {
			par->count = p;
			nm_parallel_destroy(par);
			return -ENOMEM;
		}
		nm_engine_set_sequence_space(part->engine, p, partitions);
		/* Its program is there at time 0, and may act at once. */
		part->acting = true;
		part->wake = NM_TIME_NEVER;
		part->promise = lookahead;
	}
	*out = par;
	return 0;
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

uint64_t nm_parallel_late(const nm_parallel *par, uint32_t p)
{
	return __atomic_load_n(&par->parts[p].late, __ATOMIC_RELAXED);
}

/* ---- messages ---- */

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

/* Checks what any send must keep; 0 or -EINVAL. */
static int check_send(const nm_parallel *par, uint32_t from, uint32_t to, nm_time_ns at,
		      nm_event_fn fn)
{
	const partition *sender;

	if (from >= par->count || to >= par->count || from == to || !fn)
		return -EINVAL;
	sender = &par->parts[from];
	if (at < plus_lookahead(par, engine_now(sender->engine)) ||
	    at < __atomic_load_n(&sender->promise, __ATOMIC_ACQUIRE))
		return -EINVAL;
	return 0;
}

static int send_in_place(nm_parallel *par, uint32_t from, uint32_t to, nm_time_ns at,
			 uint64_t order, nm_event_fn fn, void *ctx, uint64_t arg)
{
	partition *sender = &par->parts[from];
	partition *receiver = &par->parts[to];
	parallel_message *m = new_message(par, sender);
	nm_time_ns allows = plus_lookahead(par, at);

	if (!m)
		return -ENOMEM;
	*m = (parallel_message){
		.at = at, .order = order, .fn = NM_CODE(fn), .ctx = ctx, .arg = arg,
	};
	mailbox_lock(receiver);
	/* Lowered first: a sender that dies in between leaves a promise too low, not too high. */
	if (allows < receiver->promise)
		lower_promise(receiver, allows);
	m->next = receiver->inbox;
	__atomic_store_n(&receiver->inbox, m, __ATOMIC_RELEASE);
	mailbox_unlock(receiver);
	if (allows - 1 < sender->reach)
		sender->reach = allows - 1;
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

/* Puts messages (and what could not be placed before) on the heap. */
static void place_list(nm_parallel *par, partition *part, parallel_message *m)
{
	while (m) {
		parallel_message *next = m->next;
		nm_event_fn fn = NM_CODE_AS(nm_event_fn, m->fn);
		int rc;

		if (nm_engine_reached(part->engine, m->at, m->order)) {
			/* Cannot happen while every promise is kept: run it now, and count it. */
			__atomic_add_fetch(&part->late, 1, __ATOMIC_RELAXED);
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

/* In any order: each message has a place of its own. */
static void place(nm_parallel *par, partition *part, parallel_message *taken)
{
	parallel_message *unplaced = part->unplaced;

	part->unplaced = NULL;
	place_list(par, part, unplaced);
	place_list(par, part, taken);
}

/* The inbox, emptied: with the mailbox's lock held. */
static parallel_message *take_inbox(partition *part)
{
	parallel_message *taken = part->inbox;

	__atomic_store_n(&part->inbox, NULL, __ATOMIC_RELAXED);
	return taken;
}

/* Takes in what came (under the mailbox's lock when there is anything). */
static void take_in(nm_parallel *par, partition *part)
{
	parallel_message *taken = NULL;

	if (__atomic_load_n(&part->inbox, __ATOMIC_ACQUIRE)) {
		mailbox_lock(part);
		taken = take_inbox(part);
		mailbox_unlock(part);
	}
	if (taken || part->unplaced)
		place(par, part, taken);
}

/* ---- promises ---- */

static nm_time_ns earliest_message(const parallel_message *m, nm_time_ns t)
{
	for (; m; m = m->next)
		if (m->at < t)
			t = m->at;
	return t;
}

/* p's next event, or message not yet on its heap (NM_TIME_NEVER: none). */
static nm_time_ns next_due(partition *part)
{
	nm_time_ns next;

	if (!nm_engine_next_time(part->engine, &next))
		next = NM_TIME_NEVER;
	return earliest_message(part->unplaced, next);
}

/* The earliest time p might act or run an event at, with messages `taken` still to place. */
static nm_time_ns earliest_with(partition *part, const parallel_message *taken)
{
	nm_time_ns t;

	if (part->acting)
		return engine_now(part->engine);
	t = next_due(part);
	if (part->wake < t)
		t = part->wake;
	return earliest_message(taken, t);
}

static nm_time_ns earliest(partition *part)
{
	return earliest_with(part, NULL);
}

/* The promise p can make now, stored if it changed: under the lock, with the inbox taken in. */
static void publish(nm_parallel *par, partition *part)
{
	parallel_message *taken;
	nm_time_ns promise;

	take_in(par, part);
	promise = plus_lookahead(par, earliest(part));
	if (promise == __atomic_load_n(&part->promise, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&part->inbox, __ATOMIC_ACQUIRE))
		return; /* a store would only take the line from those who read it */
	mailbox_lock(part);
	taken = take_inbox(part); /* what came since: a lowering counted it, now the promise */
	promise = plus_lookahead(par, earliest_with(part, taken));
	if (promise != part->promise)
		raise_promise(par, part, promise); /* never lower than what it had promised */
	mailbox_unlock(part);
	place(par, part, taken); /* not under the lock: the heap may grow */
}

nm_time_ns nm_parallel_safe_until(const nm_parallel *par, uint32_t p)
{
	for (;;) {
		uint64_t epoch = __atomic_load_n(par->epoch, __ATOMIC_ACQUIRE);
		nm_time_ns safe = NM_TIME_NEVER;

		for (uint32_t q = 0; q < par->count; q++) {
			nm_time_ns promise;

			if (q == p)
				continue;
			promise = __atomic_load_n(&par->parts[q].promise, __ATOMIC_ACQUIRE);
			if (promise < safe)
				safe = promise;
		}
		if (__atomic_load_n(par->epoch, __ATOMIC_ACQUIRE) == epoch)
			return safe;
	}
}

/* ---- acting and waiting ---- */

/* p's program acts from now on, at its clock: valid only when p promised nothing later than
 * the clock plus the lookahead. */
static void start_acting(nm_parallel *par, partition *part)
{
	part->acting = true;
	publish(par, part);
}

/* Runs p's events due by `limit` (pred: until it holds). The limit is lowered by p's own
 * sends, and never goes past what the others allow. */
static nm_run_result run_upto(nm_parallel *par, uint32_t p, nm_engine_pred_fn pred, void *ctx,
			      nm_time_ns limit)
{
	partition *part = &par->parts[p];
	/* Read before taking in: a sender pushes before its own promise may rise. */
	nm_time_ns safe = nm_parallel_safe_until(par, p);

	part->reach = safe == NM_TIME_NEVER ? NM_TIME_NEVER : safe - 1;
	if (limit < part->reach)
		part->reach = limit;
	if (safe == 0)
		return NM_RUN_IDLE; /* nothing is safe yet */
	take_in(par, part);
	return nm_engine_run_within(part->engine, pred, ctx, &part->reach);
}

/* Whether p has nothing due before `t`: neither an event nor a message, nor one still to come. */
static bool nothing_before(nm_parallel *par, uint32_t p, nm_time_ns t)
{
	partition *part = &par->parts[p];

	take_in(par, part);
	return next_due(part) >= t && nm_parallel_safe_until(par, p) >= t &&
	       !__atomic_load_n(&part->inbox, __ATOMIC_ACQUIRE);
}

/* p's program acts at `at`, or at its clock if that is later, once everything before has run. */
static nm_parallel_result act_at(nm_parallel *par, uint32_t p, nm_time_ns at)
{
	partition *part = &par->parts[p];
	nm_engine *engine = part->engine;

	if (at > engine_now(engine)) {
		run_upto(par, p, NULL, NULL, at - 1);
		if (!nothing_before(par, p, at))
			return NM_PARALLEL_BLOCKED;
		/* Nothing at `at` has run: sequence numbers start at 1, so no place is 0. */
		engine->now = at;
		engine->reached = 0;
	}
	start_acting(par, part);
	return NM_PARALLEL_SATISFIED;
}

/* p's program acts at the earliest time it may: its clock, or what it promised minus the
 * lookahead once everything before that has run. */
static nm_parallel_result join(nm_parallel *par, uint32_t p)
{
	nm_time_ns promise = __atomic_load_n(&par->parts[p].promise, __ATOMIC_ACQUIRE);

	if (promise == NM_TIME_NEVER)
		return NM_PARALLEL_IDLE; /* the others may be anywhere */
	return act_at(par, p, minus_lookahead(par, promise));
}

nm_parallel_result nm_parallel_rejoin(nm_parallel *par, uint32_t p)
{
	nm_time_ns at = 0;

	if (par->parts[p].acting)
		return NM_PARALLEL_SATISFIED;
	if (__atomic_load_n(&par->parts[p].promise, __ATOMIC_ACQUIRE) != NM_TIME_NEVER)
		return join(par, p);
	for (uint32_t q = 0; q < par->count; q++)
		if (engine_now(par->parts[q].engine) > at)
			at = engine_now(par->parts[q].engine);
	return act_at(par, p, at);
}

bool nm_parallel_acting(const nm_parallel *par, uint32_t p)
{
	return par->parts[p].acting;
}

uint32_t nm_parallel_holder(const nm_parallel *par, uint32_t p)
{
	uint32_t holder = p;
	nm_time_ns least = NM_TIME_NEVER;

	for (uint32_t q = 0; q < par->count; q++) {
		nm_time_ns promise = __atomic_load_n(&par->parts[q].promise, __ATOMIC_ACQUIRE);

		if (q != p && (holder == p || promise < least)) {
			holder = q;
			least = promise;
		}
	}
	return holder;
}

nm_time_ns nm_parallel_promise(const nm_parallel *par, uint32_t q)
{
	return __atomic_load_n(&par->parts[q].promise, __ATOMIC_ACQUIRE);
}

bool nm_parallel_has_mail(const nm_parallel *par, uint32_t p)
{
	return __atomic_load_n(&par->parts[p].inbox, __ATOMIC_ACQUIRE) != NULL;
}

nm_parallel_result nm_parallel_act(nm_parallel *par, uint32_t p)
{
	if (par->parts[p].acting)
		return NM_PARALLEL_SATISFIED;
	return join(par, p);
}

/* A deadline before what p promised counts as that: its program cannot act earlier. */
static void start_waiting(nm_parallel *par, partition *part, nm_time_ns deadline)
{
	nm_time_ns floor = minus_lookahead(par, __atomic_load_n(&part->promise, __ATOMIC_ACQUIRE));

	part->acting = false;
	part->wake = deadline < floor ? floor : deadline;
	if (plus_lookahead(par, part->wake) == NM_TIME_NEVER)
		part->wake = NM_TIME_NEVER; /* as good as never: it could not be promised */
	publish(par, part);
}

void nm_parallel_wait(nm_parallel *par, uint32_t p, nm_time_ns deadline)
{
	start_waiting(par, &par->parts[p], deadline);
}

nm_parallel_result nm_parallel_run(nm_parallel *par, uint32_t p, nm_engine_pred_fn pred,
				   void *ctx, nm_time_ns deadline)
{
	partition *part = &par->parts[p];
	nm_engine *engine = part->engine;

	if (part->acting && pred && pred(ctx))
		return NM_PARALLEL_SATISFIED; /* found at once: it goes on acting */
	start_waiting(par, part, deadline);
	for (;;) {
		nm_run_result ran = run_upto(par, p, pred, ctx, part->wake);

		if (ran == NM_RUN_SATISFIED) {
			/* Its condition held before the clock reached what it promised (it held
			 * on entry): it acts there. */
			if (plus_lookahead(par, engine_now(engine)) <
			    __atomic_load_n(&part->promise, __ATOMIC_ACQUIRE))
				return join(par, p); /* IDLE: it promised nothing, cannot act */
			start_acting(par, part);
			return NM_PARALLEL_SATISFIED;
		}
		if (__atomic_load_n(&part->inbox, __ATOMIC_ACQUIRE))
			continue; /* something came for a time that may be safe */
		if (part->wake != NM_TIME_NEVER && part->wake <= part->reach) {
			/* Everything due by the deadline has run. */
			if (part->wake > engine_now(engine))
				nm_engine_run_until(engine, part->wake);
			start_acting(par, part);
			return NM_PARALLEL_DEADLINE;
		}
		publish(par, part);
		if (earliest(part) != NM_TIME_NEVER)
			return NM_PARALLEL_BLOCKED;
		/* Read again: another may have acted and sent since the first look. */
		return nm_parallel_safe_until(par, p) == NM_TIME_NEVER &&
				       !__atomic_load_n(&part->inbox, __ATOMIC_ACQUIRE) ?
			       NM_PARALLEL_IDLE :
			       NM_PARALLEL_BLOCKED;
	}
}
