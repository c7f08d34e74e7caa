/* SPDX-License-Identifier: BSD-2-Clause
 * The processes that share a world, and the calls the NIC makes into the
 * layer above.
 *
 * A world may live in memory that several processes map (MULTIPROCESS.md):
 * any of them runs the model's events, but the glue it calls back — CQs,
 * connection managers, timers — lives in the process that created the QP,
 * opened the NIC or scheduled the timer, behind pointers only that process
 * can follow. So every call into the glue goes to its owner: at once when
 * the owner is the process running the event (always, in a single process),
 * otherwise as a record on the owner's list, which the owner drains the next
 * time one of its threads enters the world — as a program learns of a real
 * NIC's work when it reads the NIC's queues. Records keep the order of the
 * events that made them.
 */
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netmodel/nm_code.h>

#include "nic_internal.h"
#include "nic_kernel.h"

enum nic_call_kind {
	NIC_CALL_DONE,  /* a completion for a QP */
	NIC_CALL_FATAL, /* an RC QP failed */
	NIC_CALL_MAD,   /* a management datagram for a NIC's handler */
	NIC_CALL_TIMER, /* a timer of the glue fired */
	NIC_CALL_COPY,  /* received bytes for the owner's memory */
};

struct nic_call {
	enum nic_call_kind kind;
	struct nic_call   *next;
	/* The part of the world whose events made it: its owner's NIC's,
	 * where it goes back when it is done. */
	struct nic_part   *part;
	union {
		struct {
			struct nic_qp        *qp;
			enum nic_pending_kind which;
			struct nic_completion c;
		} done;
		struct {
			struct nic_qp  *qp;
			enum nic_status why;
		} fatal;
		struct {
			struct nic *nic;
			uint32_t    src_host;
			size_t      len;
			uint8_t     data[NIC_MAD_MAX];
		} mad;
		struct nic_timer *timer;
		struct {
			struct nic_qp *qp;
			void          *dst;
			size_t         len;
			uint8_t       *data; /* `small`, or in the world's memory */
			uint8_t        small[NIC_MAD_MAX - 32];
		} copy;
	} u;
};

/* What a call that is not a MAD or a copy touches. */
#define CALL_HOT_BYTES (offsetof(struct nic_call, u.done) + sizeof(((struct nic_call *)0)->u.done))

/* A timer of the glue: runs fn(ctx) in the owner's process. */
struct nic_timer {
	struct nic_proc  *owner;
	nm_engine        *engine; /* its host's */
	struct nic_part  *part;   /* ... and its part of the world */
	nm_code           fn;  /* nm_event_fn, in the library */
	void             *ctx; /* the owner's */
	nm_event_id       id;  /* the engine event, also the glue's handle */
	struct nic_timer *next;
};

/* ---- This process ------------------------------------------------------------ */

pid_t nic_cached_pid;

/* In a forked child: what the parent's thread knew is not the child's. */
static void forget_pid(void)
{
	nic_cached_pid = 0;
	nic_world_forget_poller();
}

static void watch_forks(void)
{
	pthread_atfork(NULL, NULL, forget_pid);
}

pid_t nic_find_self_pid(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, watch_forks);
	nic_cached_pid = getpid();
	return nic_cached_pid;
}

struct nic_proc *nic_proc_of(struct nic_world *world, pid_t pid)
{
	struct nic_proc *p;

	for (p = world->procs; p; p = p->next) {
		fs_touch_span(p, sizeof(*p));
		if (p->pid == pid)
			return p;
	}
	p = fs_mem_calloc(world->arena, 1, sizeof(*p));
	if (!p)
		abort(); /* a process the world cannot name would lose calls */
	p->pid = pid;
	p->next = world->procs;
	world->procs = p;
	world->proc_count++;
	world->stir = true; /* a start may have waited for it */
	return p;
}

struct nic_proc *nic_proc_self(struct nic_world *world)
{
	pid_t me = nic_self_pid();
	struct nic_proc *p = world->procs;

	/* A single process: the first entry is it. */
	if (p && p->pid == me && !p->gone)
		return p;
	p = nic_proc_of(world, me);
	/* Back after leaving (a program may close its fabric and open it
	 * again). */
	p->gone = false;
	return p;
}

static void unlink_timer(struct nic_world *world, struct nic_timer *timer);
static bool any_call(const struct nic_call *call, const void *what);
static void drop_call(struct nic_world *world, struct nic_call *call);

static void queue_call(struct nic_world *world, struct nic_proc *owner,
		       struct nic_call *call)
{
	if (owner->gone) {
		/* Its process left without closing everything. */
		drop_call(world, call);
		return;
	}
	call->next = NULL;
	if (owner->calls_tail)
		owner->calls_tail->next = call;
	else /* read without the lock by the owner's pollers */
		__atomic_store_n(&owner->calls, call, __ATOMIC_RELEASE);
	owner->calls_tail = call;
	/* A thread of the owner may be polling or waiting: let it look. */
	nic_sched_posted_to(world, owner);
}

#define CALL_LINK offsetof(struct nic_call, next)

/* Records are kept for the next calls: every completion of another process
 * makes one, and the allocator is shared by every process. */
static void release_call(struct nic_call *call)
{
	struct nic_part *part = call->part;

	fs_cache_put(&part->calls, NIC_DEPOT(part->world, calls), CALL_LINK,
		     call);
}

static void free_copy(struct nic_world *world, struct nic_call *call)
{
	if (call->u.copy.data != call->u.copy.small)
		fs_mem_free(world->arena, call->u.copy.data);
}

/* Frees a call that will not run. */
static void drop_call(struct nic_world *world, struct nic_call *call)
{
	if (call->kind == NIC_CALL_TIMER) {
		unlink_timer(world, call->u.timer);
		fs_mem_free(world->arena, call->u.timer);
	}
	if (call->kind == NIC_CALL_COPY)
		free_copy(world, call);
	release_call(call);
}

static struct nic_call *new_call(struct nic_part *part,
				 enum nic_call_kind kind)
{
	struct nic_call *call = fs_cache_get(
		&part->calls, NIC_DEPOT(part->world, calls), CALL_LINK);

	if (!call)
		call = fs_mem_alloc(part->world->arena, sizeof(*call));
	if (!call)
		abort(); /* a completion must not be lost */
	fs_touch_span(call, CALL_HOT_BYTES);
	call->kind = kind;
	call->next = NULL;
	call->part = part;
	return call;
}

/* ---- Calls ------------------------------------------------------------------- */

static void run_done(struct nic_qp *qp, enum nic_pending_kind which,
		     const struct nic_completion *c)
{
	switch (which) {
	case NIC_PENDING_SEND:
		qp->ops->send_done(qp->ctx, c);
		break;
	case NIC_PENDING_RECV:
		qp->ops->recv_done(qp->ctx, c);
		break;
	case NIC_PENDING_REMOTE:
		qp->ops->remote_done(qp->ctx, c);
		break;
	}
}

void nic_call_done(struct nic_qp *qp, enum nic_pending_kind which,
		   const struct nic_completion *c)
{
	struct nic_world *world = qp->nic->world;
	struct nic_call *call;

	if (nic_proc_is_self(qp->owner)) {
		run_done(qp, which, c);
		return;
	}
	call = new_call(qp->nic->part, NIC_CALL_DONE);
	call->u.done.qp = qp;
	call->u.done.which = which;
	call->u.done.c = *c;
	queue_call(world, qp->owner, call);
}

void nic_call_copy(struct nic_qp *qp, void *dst, const void *src, size_t len)
{
	struct nic_world *world = qp->nic->world;
	struct nic_call *call = new_call(qp->nic->part, NIC_CALL_COPY);

	call->u.copy.data = len <= sizeof(call->u.copy.small) ?
				    call->u.copy.small :
				    fs_mem_alloc(world->arena, len);
	if (!call->u.copy.data)
		abort(); /* received bytes must not be lost */
	memcpy(call->u.copy.data, src, len);
	call->u.copy.qp = qp;
	call->u.copy.dst = dst;
	call->u.copy.len = len;
	queue_call(world, qp->owner, call);
}

void nic_call_fatal(struct nic_qp *qp, enum nic_status why)
{
	struct nic_world *world = qp->nic->world;
	struct nic_call *call;

	/* The ops are the owner's, at its addresses: looked at only there. */
	if (nic_proc_is_self(qp->owner)) {
		if (qp->ops->qp_fatal)
			qp->ops->qp_fatal(qp->ctx, why);
		return;
	}
	call = new_call(qp->nic->part, NIC_CALL_FATAL);
	call->u.fatal.qp = qp;
	call->u.fatal.why = why;
	queue_call(world, qp->owner, call);
}

void nic_call_mad(struct nic *nic, uint32_t src_host, const void *mad,
		  size_t len)
{
	struct nic_call *call;

	if (!nic->mad_fn || !nic->mad_owner)
		return;
	if (nic_proc_is_self(nic->mad_owner)) {
		nic->mad_fn(nic->mad_ctx, nic, src_host, mad, len);
		return;
	}
	call = new_call(nic->part, NIC_CALL_MAD);
	call->u.mad.nic = nic;
	call->u.mad.src_host = src_host;
	call->u.mad.len = len < NIC_MAD_MAX ? len : NIC_MAD_MAX;
	memcpy(call->u.mad.data, mad, call->u.mad.len);
	queue_call(nic->world, nic->mad_owner, call);
}

/* ---- Timers of the glue ---------------------------------------------------------- */

static void unlink_timer(struct nic_world *world, struct nic_timer *timer)
{
	struct nic_timer **p = &world->timers;

	while (*p && *p != timer)
		p = &(*p)->next;
	if (*p)
		*p = timer->next;
}

static void run_timer(struct nic_world *world, struct nic_timer *timer)
{
	nm_event_fn fn = NM_CODE_AS(nm_event_fn, timer->fn);
	void *ctx = timer->ctx;
	nm_engine *engine = timer->engine;

	unlink_timer(world, timer);
	fs_mem_free(world->arena, timer);
	fn(engine, ctx, 0);
}

static void timer_fired(nm_engine *engine, void *ctx, uint64_t arg)
{
	struct nic_timer *timer = ctx;
	struct nic_world *world = (struct nic_world *)(uintptr_t)arg;
	struct nic_call *call;

	(void)engine;
	if (nic_proc_is_self(timer->owner)) {
		run_timer(world, timer);
		return;
	}
	call = new_call(timer->part, NIC_CALL_TIMER);
	call->u.timer = timer;
	queue_call(world, timer->owner, call);
}

int nic_world_schedule(struct nic_world *world, uint32_t host,
		       nm_time_ns delay, nm_event_fn fn, void *ctx,
		       nm_event_id *id)
{
	struct nic_timer *timer = fs_mem_calloc(world->arena, 1, sizeof(*timer));
	int ret;

	if (!timer)
		return -ENOMEM;
	timer->owner = nic_proc_self(world);
	timer->engine = nic_world_engine_of(world, host);
	timer->part = nic_part_of_host(world, host);
	timer->fn = NM_CODE(fn);
	timer->ctx = ctx;
	ret = nm_engine_schedule_after(timer->engine, delay, host, timer_fired,
				       timer, (uintptr_t)world, &timer->id);
	if (ret) {
		fs_mem_free(world->arena, timer);
		return ret;
	}
	timer->next = world->timers;
	world->timers = timer;
	if (id)
		*id = timer->id;
	return 0;
}

/* Drops the calls on `proc`'s list that `drop` selects. */
static void purge_calls(struct nic_world *world, struct nic_proc *proc,
			bool (*drop)(const struct nic_call *, const void *),
			const void *what)
{
	struct nic_call **p = &proc->calls, *last = NULL;

	while (*p) {
		struct nic_call *call = *p;

		if (drop(call, what)) {
			__atomic_store_n(p, call->next, __ATOMIC_RELAXED);
			drop_call(world, call);
		} else {
			last = call;
			p = &call->next;
		}
	}
	proc->calls_tail = last;
}

static bool is_timer(const struct nic_call *call, const void *what)
{
	return call->kind == NIC_CALL_TIMER && call->u.timer->id ==
					       *(const nm_event_id *)what;
}

void nic_world_cancel(struct nic_world *world, nm_event_id id)
{
	struct nic_timer *timer;

	for (timer = world->timers; timer; timer = timer->next)
		if (timer->id == id)
			break;
	if (!timer)
		return; /* ran already */
	if (nm_engine_cancel(timer->engine, id) == 0) {
		unlink_timer(world, timer);
		fs_mem_free(world->arena, timer);
		return;
	}
	/* Fired, waiting on its owner's list. */
	purge_calls(world, timer->owner, is_timer, &id);
}

/* ---- The owner's side ---------------------------------------------------------------- */

void nic_proc_drain(struct nic_world *world)
{
	struct nic_proc *self = nic_proc_self(world);

	fs_touch_span(self, sizeof(*self));
	while (self->calls) {
		struct nic_call *call = self->calls;

		fs_touch_span(call, CALL_HOT_BYTES);
		__atomic_store_n(&self->calls, call->next, __ATOMIC_RELAXED);
		if (!self->calls)
			self->calls_tail = NULL;
		switch (call->kind) {
		case NIC_CALL_DONE:
			run_done(call->u.done.qp, call->u.done.which,
				 &call->u.done.c);
			break;
		case NIC_CALL_FATAL:
			if (call->u.fatal.qp->ops->qp_fatal)
				call->u.fatal.qp->ops->qp_fatal(
					call->u.fatal.qp->ctx,
					call->u.fatal.why);
			break;
		case NIC_CALL_MAD: {
			struct nic *nic = call->u.mad.nic;

			if (nic->mad_fn)
				nic->mad_fn(nic->mad_ctx, nic,
					    call->u.mad.src_host,
					    call->u.mad.data, call->u.mad.len);
			break;
		}
		case NIC_CALL_TIMER:
			run_timer(world, call->u.timer);
			break;
		case NIC_CALL_COPY:
			memcpy(call->u.copy.dst, call->u.copy.data,
			       call->u.copy.len);
			free_copy(world, call);
			break;
		}
		release_call(call);
	}
}

void nic_proc_leave(struct nic_world *world)
{
	struct nic_proc *self = nic_proc_self(world);

	purge_calls(world, self, any_call, NULL);
	self->gone = true;
}

size_t nic_world_members(struct nic_world *world, struct nic_member *out,
			 size_t max)
{
	pid_t me = nic_self_pid();
	size_t n = 0;

	for (struct nic_proc *p = world->procs; p; p = p->next) {
		if (p->pid == me || p->gone)
			continue;
		for (uint32_t h = 0; h < world->host_count; h++) {
			const struct nic *nic = world->hosts[h];

			if (!nic || nic->owner != p || nic->dead)
				continue;
			if (n < max)
				out[n] = (struct nic_member){ p->pid, h };
			n++;
			break;
		}
	}
	return n;
}

bool nic_world_others_present(struct nic_world *world)
{
	pid_t me = nic_self_pid();

	/* A zombie (killed, its parent has not reaped it) is gone. */
	for (struct nic_proc *p = world->procs; p; p = p->next)
		if (p->pid != me && !p->gone && !nic_kernel_process_gone(p->pid))
			return true;
	return false;
}

/* Every other host's connection manager hears that host `gone` has gone:
 * an empty datagram from it (nic.h), through the lists of calls, since a
 * death is found in the middle of other things. */
static void tell_host_gone(struct nic_world *world, uint32_t gone)
{
	for (uint32_t h = 0; h < world->host_count; h++) {
		struct nic *nic = world->hosts[h];
		struct nic_call *call;

		if (!nic || nic->dead || !nic->mad_fn || !nic->mad_owner ||
		    nic->mad_owner->gone)
			continue;
		call = new_call(nic->part, NIC_CALL_MAD);
		call->u.mad.nic = nic;
		call->u.mad.src_host = gone;
		call->u.mad.len = 0;
		queue_call(world, nic->mad_owner, call);
	}
}

/* What host `gone` was in the middle of sending to the live hosts will
 * never end: the receives it landed in are flushed (their owners take the
 * error in, as any completion). */
static void abandon_partial_messages(struct nic_world *world, uint32_t gone)
{
	for (uint32_t h = 0; h < world->host_count; h++) {
		struct nic *nic = world->hosts[h];

		if (!nic || nic->dead)
			continue;
		for (uint32_t i = 0; i < nic->qps.count; i++)
			if (nic->qps.slots[i])
				nic_qp_abandon_partial(nic->qps.slots[i], gone);
	}
}

void nic_proc_died(struct nic_world *world, struct nic_proc *proc)
{
	purge_calls(world, proc, any_call, NULL);
	proc->gone = true;
	/* Its NICs leave the network as a host that lost power: what is sent
	 * to them is lost, they send nothing; their peers find out the way
	 * real peers do, by timeouts. Connections made by a connection
	 * manager end at once, as its kernel would end them. */
	for (uint32_t h = 0; h < world->host_count; h++)
		if (world->hosts[h] && world->hosts[h]->owner == proc)
			world->hosts[h]->dead = true;
	for (uint32_t h = 0; h < world->host_count; h++)
		if (world->hosts[h] && world->hosts[h]->owner == proc) {
			tell_host_gone(world, h);
			abandon_partial_messages(world, h);
		}
}

static bool is_for_qp(const struct nic_call *call, const void *qp)
{
	return (call->kind == NIC_CALL_DONE && call->u.done.qp == qp) ||
	       (call->kind == NIC_CALL_FATAL && call->u.fatal.qp == qp) ||
	       (call->kind == NIC_CALL_COPY && call->u.copy.qp == qp);
}

void nic_proc_forget_qp(struct nic_qp *qp)
{
	purge_calls(qp->nic->world, qp->owner, is_for_qp, qp);
}

static bool is_for_nic(const struct nic_call *call, const void *nic)
{
	return call->kind == NIC_CALL_MAD && call->u.mad.nic == nic;
}

void nic_proc_forget_nic(struct nic *nic)
{
	if (nic->mad_owner)
		purge_calls(nic->world, nic->mad_owner, is_for_nic, nic);
}

static bool any_call(const struct nic_call *call, const void *what)
{
	(void)call;
	(void)what;
	return true;
}

void nic_procs_free(struct nic_world *world)
{
	while (world->procs) {
		struct nic_proc *p = world->procs;
		world->procs = p->next;
		purge_calls(world, p, any_call, NULL);
		fs_mem_free(world->arena, p);
	}
	while (world->timers) {
		struct nic_timer *t = world->timers;

		world->timers = t->next;
		fs_mem_free(world->arena, t);
	}
	for (uint32_t i = 0; i < world->part_count; i++)
		fs_cache_drain(&world->parts[i].calls, CALL_LINK, nic_free_record,
			       world->arena);
	if (world->depots)
		fs_depot_drain(&world->depots->calls, CALL_LINK, nic_free_record,
			       world->arena);
}
