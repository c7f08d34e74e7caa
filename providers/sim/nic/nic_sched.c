/* SPDX-License-Identifier: BSD-2-Clause
 * Who may move virtual time: the threads of the program that share a world.
 *
 * Time moves only inside the fabric: a poll that finds nothing runs the next
 * instant (on a shared world, until something appears for a thread or
 * NIC_POLL_HORIZON_NS more have passed); a blocking wait runs the world
 * until what it waits for happens or its deadline passes in virtual time.
 * With several threads the rule is that of SimGrid's maestro: the clock
 * advances only while no thread is running the program, that is while
 * every thread that uses the world is blocked in a wait, has just polled
 * and found nothing, or has stayed away from the fabric while the kernel
 * had it asleep — for NIC_ABSENT_MS of real time, or NIC_BLOCKED_US when
 * it sleeps waiting for another party (a socket, a pipe) — and is then
 * out of time until it calls again; one that computes keeps its place for
 * up to NIC_COMPUTING_MS, or NIC_SPIN_US once seen to wait by reading in a
 * loop memory the NIC writes (the NIC's writes into a process's memory are
 * news for it, as completions are). Threads that never called in cannot be seen;
 * before a wait lets the clock jump over a stretch with nothing scheduled,
 * a new one gets NIC_ABSENT_MS to show up, once. A run stops as soon as any waiting
 * thread's condition holds, so every thread resumes at the instant its
 * event happened. Single-threaded programs never wait for real and are
 * deterministic; multi-threaded ones are too, as long as no thread computes
 * for long between its calls into the fabric.
 *
 * Threads get an entry the first time they enter; entries are found by
 * thread id, so a new thread that reuses an exited thread's id reuses its
 * entry. Everything here runs with the world lock held.
 */
#define _GNU_SOURCE /* sched_getcpu */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <traces/tr_event.h>
#include <traces/tr_mark.h>

#include "nic_internal.h"
#include "nic_kernel.h"

void nic_sched_init(struct nic_world *world)
{
	struct timespec now;

	/* Different for every world ever made here or elsewhere (the
	 * kernel's clock: the program's may read virtual time). */
	nic_kernel_clock(CLOCK_REALTIME, &now);
	world->version.identity =
		((uint64_t)now.tv_sec * 1000000000u + now.tv_nsec) ^
		((uint64_t)getpid() << 40) ^ (uintptr_t)world;

	world->activity = 0;
	world->threads = NULL;
	world->driver = NULL;
}

_Static_assert(_Alignof(struct nic_thread) == FS_MEM_LINE,
	       "entries begin a line (fs_mem_calloc_line)");

static void entry_free(struct nic_world *world, struct nic_thread *t)
{
	fs_mem_free_line(world->arena, t);
}

void nic_sched_fini(struct nic_world *world)
{
	while (world->threads) {
		struct nic_thread *t = world->threads;

		world->threads = t->next;
		entry_free(world, t);
	}
}

static void tell(struct nic_world *world, struct nic_proc *p,
		 enum tr_event_kind kind);
static void drain_calls(struct nic_world *world);

/* Polls in a row that make a thread idle (see poll_streak). */
#define NIC_IDLE_STREAK 2

/* A poller that has seen everything for its process, in a polling loop. */
static bool idle_poller(const struct nic_thread *t)
{
	/* The streak may be written by its thread without the lock
	 * (nic_sched_idle_unlocked). */
	return t->state == NIC_THREAD_POLLING &&
	       __atomic_load_n(&t->poll_streak, __ATOMIC_RELAXED) >=
		       NIC_IDLE_STREAK &&
	       t->acked == t->proc->signals.value;
}

/* Thread ids are only unique within a process: entries are found by both. */
static bool is_me(const struct nic_thread *t, pid_t pid, pthread_t me)
{
	return t->pid == pid && pthread_equal(t->id, me);
}

/* A thread's entry as when it first came in. */
static void init_entry(struct nic_world *world, struct nic_thread *t,
		       pid_t pid, pthread_t me)
{
	struct nic_thread *next = t->next;

	if (t->out_running)
		world->out_running--;
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = (pid_t)syscall(SYS_gettid);
	t->proc = nic_proc_self(world);
	t->id = me;
	t->next = next;
}

static struct nic_thread *lookup(struct nic_world *world)
{
	pthread_t me = pthread_self();
	pid_t pid = nic_self_pid();
	struct nic_thread *t;

	for (t = world->threads; t; t = t->next)
		if (is_me(t, pid, me)) {
			/* glibc gives a new thread the id of one joined
			 * before: that one's entry (its kernel id, state and
			 * silence) is not this thread's. */
			if (t->tid != (pid_t)syscall(SYS_gettid)) {
				/* The ended thread's trip out of time, told,
				 * ends here: its AWAY must not stand alone in
				 * the trace. */
				if (t->state == NIC_THREAD_ABSENT &&
				    t->away_told)
					tell(world, t->proc, TR_EVENT_BACK);
				init_entry(world, t, pid, me);
			}
			return t;
		}
	t = fs_mem_calloc_line(world->arena, sizeof(*t));
	if (!t)
		abort(); /* a thread the scheduler cannot see would break time */
	init_entry(world, t, pid, me);
	t->next = world->threads;
	world->threads = t;
	return t;
}

/* The calling thread's entry, remembered by the thread itself: an entry
 * found by pthread id alone may be an ended thread's whose id glibc gave
 * to this one. */
/* Bumped when this process's entries are freed (it leaves a world): a
 * thread's remembered entry from before is gone, even in a world of the
 * same identity attached again. */
static uint64_t entries_freed;

static struct nic_thread *thread_self(struct nic_world *world)
{
	static __thread uint64_t mine_in; /* the world's identity */
	static __thread uint64_t mine_gen;
	static __thread struct nic_thread *mine;

	/* The identity, not the address: a new world may reuse a freed
	 * one's memory, and with it the address of this thread's old
	 * entry. A forked child inherits the forking thread's memory: the
	 * entry must be this process's. */
	if (mine && mine_in == world->version.identity &&
	    mine_gen == __atomic_load_n(&entries_freed, __ATOMIC_RELAXED) &&
	    is_me(mine, nic_self_pid(), pthread_self()))
		return mine;
	mine = lookup(world);
	mine_in = world->version.identity;
	mine_gen = __atomic_load_n(&entries_freed, __ATOMIC_RELAXED);
	return mine;
}

/* The real monotonic clock (under `fabsim run --virtual-clock` the
 * program's clock_gettime reads virtual time). */
static void real_now(struct timespec *ts)
{
	nic_kernel_clock(CLOCK_MONOTONIC, ts);
}

static long us_between(const struct timespec *from, const struct timespec *to)
{
	return (long)(to->tv_sec - from->tv_sec) * 1000000 +
	       (to->tv_nsec - from->tv_nsec) / 1000;
}

/* Real time the clock waits for a thread out of time running to come back
 * after the first news for its process since it went out (memory the NIC
 * wrote, a completion another thread takes in). One that comes back soon
 * after news (the first, or any later: cmtime's main thread waits for its
 * event thread to have taken in a hundred events; within NIC_SPIN_LEARN_US,
 * a busy machine may keep it from its CPU), twice in a row, is taken for a
 * thread that reads memory in a loop (t->spins); its reaction takes
 * microseconds. Once could be a thread that computes and happens to end
 * while one-sided writes stream in. One that comes back on its own, with no
 * news for NIC_SPIN_UNLEARN_US, computes, and is not taken for a spinner
 * any more. */
#define NIC_LANDING_HOLD_US 1000
#define NIC_SPIN_EVIDENCE 2
#define NIC_SPIN_LEARN_US 10000
#define NIC_SPIN_UNLEARN_US 100000

static bool within_hold_of(const struct timespec *news, struct timespec *real)
{
	if (!news->tv_sec)
		return false;
	if (!real->tv_sec)
		real_now(real);
	return us_between(news, real) < NIC_LANDING_HOLD_US;
}

/* A thread that was out of time calls in again (called_in), or is brought
 * back by another (a descriptor it waits on became readable). */
static void back_in_time(struct nic_world *world, struct nic_thread *t,
			 bool called_in)
{
	if (t->out_running) {
		struct timespec real = { 0 };

		if (called_in) {
			long since = LONG_MAX; /* no news since it went out */

			if (t->news_last.tv_sec) {
				real_now(&real);
				since = us_between(&t->news_last, &real);
			}

			/* A busy machine may keep a spinner from its CPU
			 * for a while: it learns within NIC_SPIN_LEARN_US
			 * and unlearns only past NIC_SPIN_UNLEARN_US. */
			if (since < NIC_SPIN_LEARN_US &&
			    t->spin_evidence < NIC_SPIN_EVIDENCE)
				t->spin_evidence++;
			else if (since >= NIC_SPIN_UNLEARN_US)
				t->spin_evidence = 0;
			t->spins = t->spin_evidence >= NIC_SPIN_EVIDENCE;
		}
		t->out_running = false;
		world->out_running--;
	}
	t->away_untold = false;
	t->away_told = false;
}

void nic_sched_enter(struct nic_world *world)
{
	struct nic_thread *t = thread_self(world);

	/* A call after a poll in the same hold: that poll was not the last
	 * thing the hold did (leave_poll). */
	if (world->short_of_idle)
		world->short_of_idle = NULL;
	t->calls++;
	t->was_polling = t->state == NIC_THREAD_POLLING;
	t->entered_idle = idle_poller(t) && !nic_proc_has_calls(t->proc);
	if (t->state == NIC_THREAD_ABSENT) {
		if (t->away_told)
			tell(world, t->proc, TR_EVENT_BACK);
		back_in_time(world, t, true);
	}
	t->state = NIC_THREAD_RUNNING;
	/* What other processes' runs left for us arrives now. */
	if (nic_proc_has_calls(t->proc))
		drain_calls(world);
}

/* Kernel ids of the threads of p the fabric knows (at most `room`). */
static size_t known_threads(const struct nic_world *world,
			    const struct nic_proc *p, pid_t *known, size_t room)
{
	size_t count = 0;

	for (const struct nic_thread *t = world->threads; t; t = t->next)
		if (t->pid == p->pid && t->tid && count < room)
			known[count++] = t->tid;
	return count;
}

/* Whether a clock jump should wait NIC_ABSENT_MS for threads of the
 * process that have not called in yet (a new one on its way in). Each
 * gets that once: a thread that never uses the fabric (a runtime's
 * helper, a sanitizer's) must not cost it at every jump — 250 ms of real
 * time per memory registration. Threads are told apart by their kernel
 * ids, which grow: one newer than the last that had its time is new (a
 * count of threads cannot tell a worker started after another one ended
 * from the one before it). */
static bool unseen_need_time(const struct nic_world *world,
			     struct nic_proc *p)
{
	pid_t known[64];
	size_t count = known_threads(world, p, known, 64);
	pid_t newest = nic_kernel_newest_other_thread(p->pid, known, count);

	if (newest <= p->unseen_graced_upto)
		return false;
	p->unseen_graced_upto = newest;
	return true;
}

/* Real time a thread may stay out of the fabric and still hold the clock. */
#define NIC_ABSENT_MS 250
/* How often a thread held back by a running one looks again: often enough
 * to find it blocked outside the fabric soon after NIC_BLOCKED_US (a
 * program whose threads hand work to each other through a semaphore pays
 * that at every hand-over: rping, 200 round trips, 14.5 s with 10 ms, 4.9 s
 * with 1 ms), seldom enough to cost nothing. */
#define NIC_HELD_BACK_MS 1
/* How often a wait looks again while others are away or nothing is due. */
#define NIC_SLICE_MS 10
/* Real time a wait gives absent threads when nothing is left to simulate. */
#define NIC_IDLE_WAIT_MS 1000
/* Real time a wait with nothing due gives another process that is away
 * from the fabric (e.g. exchanging addresses out of band) to come back,
 * before the clock jumps without it. */
#define NIC_AWAY_GRACE_MS 1000

/* Futex operations on `activity`: private to the process unless other
 * processes map the world. */
static int activity_op(const struct nic_world *world, int op)
{
	return world->arena ? op : op | FUTEX_PRIVATE_FLAG;
}

/* Lock held, or by a thread that becomes idle without it
 * (nic_sched_idle_unlocked): the count and the word are atomic. */
static void wake_all(struct nic_world *world)
{
	if (!__atomic_load_n(&world->sleepers, __ATOMIC_SEQ_CST))
		return;
	__atomic_add_fetch(&world->activity, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &world->activity,
		activity_op(world, FUTEX_WAKE), INT_MAX, NULL, NULL, 0);
}

/* A thread of proc out of time while running may be reading in a loop a
 * flag or buffer that this news changes (memory the NIC wrote; a variable
 * another thread of its process sets when it takes in a completion or a
 * connection event, as cmtime's main thread waits on its event thread):
 * the run stops here, and the clock waits a moment for it (others_idle). */
static void news_for_spinners(struct nic_world *world, struct nic_proc *proc)
{
	struct timespec real = { 0 };

	/* The clock waits for the first news since it went out only: one
	 * that did not come back for it is computing, or waits for more. */
	for (struct nic_thread *t = world->threads; t; t = t->next) {
		if (t->proc != proc || !t->out_running)
			continue;
		if (!real.tv_sec)
			real_now(&real);
		t->news_last = real;
		if (!t->news_at.tv_sec) {
			t->news_at = real;
			world->landing_stop = true;
		}
	}
}

void nic_sched_posted_to(struct nic_world *world, struct nic_proc *proc)
{
	fs_touch_span(proc, sizeof(*proc));
	world->signals++;
	/* Spinning pollers of the process read it without the lock. */
	__atomic_store_n(&proc->signals.value, proc->signals.value + 1,
			 __ATOMIC_RELAXED);
	/* The holder's own pollers watch its process's signals; another
	 * process's watch the version. */
	if (proc->pid != nic_self_pid())
		world->stir = true;
	wake_all(world);
	if (world->out_running)
		news_for_spinners(world, proc);
}

void nic_sched_posted(struct nic_world *world)
{
	nic_sched_posted_to(world, nic_proc_self(world));
}

/* Memory the NIC wrote is news for the process, as a completion is: a
 * thread that polled and then reads a buffer in a loop for what a peer
 * writes there (perftest's ib_write_lat) is idle only until then, and
 * comes back at this instant. */
void nic_sched_landed(struct nic_world *world, struct nic_proc *proc)
{
	nic_sched_posted_to(world, proc ? proc : nic_proc_self(world));
}

static long ms_between(const struct timespec *from, const struct timespec *to)
{
	return (long)(to->tv_sec - from->tv_sec) * 1000 +
	       (to->tv_nsec - from->tv_nsec) / 1000000;
}

/* Real time a waiting thread of a shared world watches `activity` before
 * it sleeps in the kernel. What it waits for is usually a few events
 * another process runs on the other CPU; waking a thread asleep in a
 * futex costs tens of microseconds on a virtual machine (an idle virtual
 * CPU is woken through the hypervisor), which ibv_rc_pingpong -e paid
 * twice per round trip. Short: every waiting thread spins (a verbs
 * program's event thread and waker too), and longer spins took the CPU
 * from the one thread that had work (`ibv_rc_pingpong -e -s 64` across two
 * processes, µs per iteration: no spin 63–91, 5–30 µs 23–27, 50 µs
 * 24–64, 200 µs 88–117). */
#define NIC_WAKE_SPIN_US 10

static bool spin_for_activity(const struct nic_world *world, uint32_t seen)
{
	struct timespec from, now;

	if (!world->arena)
		return false; /* one process: the waker is a thread of ours */
	real_now(&from);
	for (unsigned i = 1;; i++) {
		if (__atomic_load_n(&world->activity, __ATOMIC_ACQUIRE) != seen ||
		    nic_world_idled_since_hold(world))
			return true;
		nic_cpu_relax();
		if (i % 64)
			continue;
		real_now(&now);
		if ((now.tv_sec - from.tv_sec) * 1000000 +
			    (now.tv_nsec - from.tv_nsec) / 1000 >=
		    NIC_WAKE_SPIN_US)
			return false;
		sched_yield(); /* the one we wait for may need this CPU */
	}
}

/* Lock held (and held again on return). False when the real-time wait
 * ran out with no wake-up. A wake-up between the unlock and the wait is
 * not lost: the word has moved, and the wait returns at once. */
static bool sleep_real(struct nic_world *world, int ms)
{
	/* A relative timeout: FUTEX_WAIT measures it on the monotonic clock,
	 * which the wall clock does not move. */
	struct timespec span = { ms / 1000, (long)(ms % 1000) * 1000000 };
	uint32_t seen = world->activity;
	long ret;

	/* Read without the lock (nic_sched_idle_unlocked). */
	__atomic_add_fetch(&world->sleepers, 1, __ATOMIC_SEQ_CST);
	nic_world_unlock(world);
	if (spin_for_activity(world, seen)) {
		nic_world_lock(world);
		__atomic_sub_fetch(&world->sleepers, 1, __ATOMIC_RELAXED);
		return true;
	}
	ret = syscall(SYS_futex, &world->activity,
		      activity_op(world, FUTEX_WAIT), seen, &span, NULL, 0);
	bool timed_out = ret == -1 && errno == ETIMEDOUT;

	nic_world_lock(world);
	__atomic_sub_fetch(&world->sleepers, 1, __ATOMIC_RELAXED);
	return !timed_out;
}

static void set_running(struct nic_thread *t)
{
	/* Leaving a wait is activity: the absence clock restarts. */
	t->calls++;
	t->state = NIC_THREAD_RUNNING;
}

/* Whether a waiting thread's condition holds. Another process's condition
 * cannot be evaluated here (it reads that process's memory): that thread
 * is woken when calls wait for its process, and looks itself. */
static bool wait_ready(const struct nic_thread *t)
{
	if (t->pid != nic_self_pid())
		return t->ready_now || nic_proc_has_calls(t->proc);
	return t->ready && t->ready(t->ctx);
}

/* What this process's hold took in or ran (calls other processes' runs
 * left for it, events of its own run) may be what another of its threads
 * waits for: that thread is about to run. Other processes cannot call its
 * condition, and saw no calls waiting for it: it is marked, so that they
 * do not move time before it has run (rnr_peer's waker thread takes in a
 * connection request; the thread in rdma_get_request, slow to get a CPU
 * on a busy machine, found the client gone through all its resends). */
static bool mark_waiters_ready(struct nic_world *world)
{
	pid_t pid = nic_self_pid();
	bool marked = false;

	if (!world->arena)
		return false; /* one process: every look calls the condition */
	for (struct nic_thread *t = world->threads; t; t = t->next)
		if (t->pid == pid && t->state == NIC_THREAD_WAITING &&
		    !t->ready_now && t->ready && t->ready(t->ctx)) {
			t->ready_now = true;
			marked = true;
		}
	return marked;
}

static void drain_calls(struct nic_world *world)
{
	nic_proc_drain(world);
	if (mark_waiters_ready(world))
		wake_all(world);
}

static bool wait_over(const struct nic_thread *t, nm_time_ns now)
{
	return wait_ready(t) || now >= t->deadline;
}

/* Real time a thread the kernel says is running or ready to run keeps its
 * place in time although it does not call in: it is computing (or waiting
 * for a CPU of a busy machine), not blocked outside the fabric, and a busy
 * machine must not change what a run computes. Past this, it is taken out
 * of time all the same (a thread that spins on a flag another one sets must
 * not hang them both). */
#define NIC_COMPUTING_MS 2000

static bool thread_exited(const struct nic_thread *t)
{
	char state;

	if (!t->tid)
		return false;
	state = nic_kernel_thread_state(t->pid, t->tid);
	return state == '-' || state == 'Z' || state == 'X';
}

static bool kernel_running(const struct nic_thread *t)
{
	return t->tid && nic_kernel_thread_state(t->pid, t->tid) == 'R';
}

/* Real time a thread seen to wait by reading memory in a loop (t->spins)
 * keeps its place in time while the kernel has it running and it does not
 * call in; past that it is out of time until news for its process (memory
 * the NIC wrote, a completion) or its call. Every wait of such
 * a thread costs this much real time: ib_write_lat's 1000 iterations took
 * 2 s of real time each when it was held as long as a computing one. */
#define NIC_SPIN_US 200

static bool computing(const struct nic_thread *t, long silent_ms)
{
	if (!t->tid || silent_ms >= NIC_COMPUTING_MS)
		return false;
	return nic_kernel_thread_state(t->pid, t->tid) == 'R';
}

/* Real time a silent thread keeps its place in time while the kernel has
 * it asleep in a call that waits, with no time limit, for another party —
 * reading a socket, a pipe or an eventfd, polling descriptors without a
 * timeout, a futex (a mutex, a condition variable, a semaphore) —
 * (nic_kernel.h). What it waits for is something another process or thread
 * does, and that may be just what the others wait for in turn: Debian's
 * fi_pingpong waits on its control socket for a peer that needs the clock
 * to move before it writes (its send completion), so every size of
 * `fi_pingpong -S all` used to cost NIC_ABSENT_MS; rping's main thread
 * waits on a semaphore for its completion thread, which waits in the
 * fabric, at every step. Sleeps (nanosleep, a poll, select or futex wait
 * with a timeout, a timer descriptor) and the world's own lock keep the
 * longer rule: a program that sleeps between two posts must not see the
 * clock run on meanwhile, nor one that waits a moment for the fabric. A
 * thread of this process asleep on a futex comes back into time as soon as
 * its word changes or the kernel wakes it (futex_woken): the thread that
 * wakes it does both before it calls into the fabric again, so such a
 * thread leaves time at once (rping's hand-offs cost 2 ms each, ~24 ms per
 * round trip, before stop 21). Other waits keep the grace: what ends them
 * may be a thread the fabric does not know (Open MPI's PMIx thread), and
 * the clock stays while it answers within the grace. */
#define NIC_BLOCKED_US 2000

/* A nap no longer than NIC_NAP_US, in a thread silent for NIC_NAPS_MS, was
 * not its first: it looks for something in a loop and naps in between
 * (fabtests' fi_unexpected_msg retries its out-of-band connect() every
 * 100 us, 100 times, while its peer needs the clock to move before it
 * listens). Such a thread is taken out of time as one that reads memory
 * in a loop is (out_running): news for its process stops the run, and the
 * clock waits NIC_LANDING_HOLD_US for it to come back at that instant —
 * hence at most half of that. Longer sleeps keep the longer rule. */
#define NIC_NAP_US 500
#define NIC_NAPS_MS 2

static bool napping(const struct nic_thread *t)
{
	return t->tid && nic_kernel_napping(t->pid, t->tid, NIC_NAP_US);
}

static bool within(uintptr_t word, const void *p, size_t len)
{
	return word >= (uintptr_t)p && word < (uintptr_t)p + len;
}

/* A futex word of the world's lock: a half of world->holder (a shared
 * world's, mapped at the same address in every process), or one inside
 * world->lock (a world of one process: a pthread mutex, whose waiters
 * sleep on a word of it). A thread asleep on it is entering the fabric. */
static bool world_lock_word(const struct nic_world *world, uintptr_t word)
{
	return within(word, &world->holder, sizeof(world->holder)) ||
	       within(word, &world->lock, sizeof(world->lock));
}

static bool blocked_elsewhere(const struct nic_world *world,
			      struct nic_thread *t)
{
	if (!t->tid ||
	    !nic_kernel_blocked_on_another_party(t->pid, t->tid, &t->futex))
		return false;
	return !world_lock_word(world, t->futex.word);
}

/* Running, or asleep on the world's lock: on its way in. It naps on the
 * lock (nic_lock.c, wait_shared: a futex wait with a time limit) and runs
 * between naps, so the call is read before the state: a nap that ends
 * between the two reads leaves it running. */
static bool on_its_way_in(const struct nic_world *world,
			  const struct nic_thread *t)
{
	uintptr_t word;

	if (nic_kernel_asleep_on_futex(t->pid, t->tid, &word) &&
	    world_lock_word(world, word))
		return true;
	return nic_kernel_thread_state(t->pid, t->tid) == 'R';
}

/* An absent thread of this process that was asleep on a futex and is
 * being woken: another thread changed its word, or the kernel has already
 * made it runnable (and it may have put the word back: a semaphore's
 * count goes up in sem_post and down again in the woken sem_wait). It
 * acts at this instant. */
static bool futex_woken(struct nic_thread *t, bool polling)
{
	if (!t->futex.word)
		return false;
	if (!nic_kernel_futex_unchanged(&t->futex))
		return true;
	/* The kernel's word on it is a /proc read, dearer than the word's:
	 * a busy poller asks only every so many looks (a thread that waits
	 * in pthread_join is looked at on every poll of its workers). */
	if (polling && ++t->silent_looks % 16)
		return false;
	return nic_kernel_thread_state(t->pid, t->tid) == 'R';
}

/* An absent thread the kernel has made runnable (what it waited for
 * outside the fabric happened, e.g. a peer wrote to its socket) is about to
 * call in: time waits for it, so that it comes back at the instant its
 * waker left the fabric, whatever the kernel's wake-up takes. So does one
 * that has called in and sleeps on the world's lock, held by the thread
 * that looks (fi_pingpong's server, back from its control socket under a
 * busy machine's load, came back microseconds late). Not for longer than a
 * thread that computes keeps its place. (Threads of this process that a
 * descriptor wakes are brought back by nic_sched_rouse().) */
static bool waking(const struct nic_world *world, struct nic_thread *t,
		   struct timespec *real)
{
	if (!t->tid)
		return false;
	if (!on_its_way_in(world, t)) {
		t->woke_at.tv_sec = 0;
		return false;
	}
	if (!real->tv_sec)
		real_now(real);
	if (!t->woke_at.tv_sec)
		t->woke_at = *real;
	return ms_between(&t->woke_at, real) < NIC_COMPUTING_MS;
}

/* Real time the clock waits for the processes a shared fabric expects. */
#define NIC_JOIN_WAIT_MS 2000

void nic_world_expect_processes(struct nic_world *world, uint32_t count)
{
	if (count > world->procs_expected)
		world->procs_expected = count;
}

/* Still waiting for expected processes to join. */
static bool joining(struct nic_world *world)
{
	struct timespec real;

	if (world->proc_count >= world->procs_expected)
		return false;
	real_now(&real);
	if (!world->join_wait_since.tv_sec)
		world->join_wait_since = real;
	if (ms_between(&world->join_wait_since, &real) < NIC_JOIN_WAIT_MS)
		return true;
	fprintf(stderr, "fabsim: %u of the %u processes the shared fabric "
			"expects joined in %d s; its clock starts without "
			"the others\n",
		world->proc_count, world->procs_expected,
		NIC_JOIN_WAIT_MS / 1000);
	world->procs_expected = 0;
	return false;
}

/* The host a process's NIC sits on (TR_WHERE_UNKNOWN: none). */
static uint32_t node_of(const struct nic_world *world, const struct nic_proc *p)
{
	for (uint32_t h = 0; h < world->host_count; h++)
		if (world->hosts[h] && world->hosts[h]->owner == p)
			return h;
	return TR_WHERE_UNKNOWN;
}

/* Times a process's going out of time and coming back are told on
 * standard error; the trace has every one. A program that waits out of
 * band at every step (rping's threads) would fill the log. */
#define NIC_AWAY_TOLD 3

static const char *const event_text[TR_EVENT_KINDS] = {
	[TR_EVENT_AWAY] = "is blocked outside the fabric: out of virtual time",
	[TR_EVENT_BACK] = "called in again: back in virtual time",
	[TR_EVENT_DIED] = "ended without leaving the fabric: its hosts are off "
			  "the network",
};

static void record(struct nic_world *world, const struct nic_proc *p,
		   enum tr_event_kind kind)
{
	/* The trace holds no process id: it would differ from run to run. */
	tr_event ev = { .kind = (uint8_t)kind, .node = node_of(world, p) };

	if (!world->rec)
		return;
	snprintf(ev.text, sizeof(ev.text), "its process %s", event_text[kind]);
	nic_record_event(world->rec, &ev, nic_world_now(world));
}

/* The clock is about to move: the trips out of time it moves during go
 * into the trace. One during which it stood still changed nothing anyone
 * saw, and is left out, with its return: whether a process was found
 * blocked for long enough depends on real time, and the trace must not. */
static void record_absences(struct nic_world *world)
{
	for (struct nic_proc *p = world->procs; p && world->aways_unrecorded;
	     p = p->next)
		for (; p->aways_unrecorded; p->aways_unrecorded--) {
			record(world, p, TR_EVENT_AWAY);
			world->aways_unrecorded--;
		}
}

/* A process of a shared world went out of time, came back or died: the
 * log (standard error) says so, and the trace when it matters (above). */
static void tell(struct nic_world *world, struct nic_proc *p,
		 enum tr_event_kind kind)
{
	uint32_t node = node_of(world, p);
	char who[64];

	if (node == TR_WHERE_UNKNOWN) /* its NICs closed, or none opened */
		snprintf(who, sizeof(who), "process %d (no NIC open)",
			 (int)p->pid);
	else
		snprintf(who, sizeof(who), "node %u (process %d)", node,
			 (int)p->pid);
	if (kind == TR_EVENT_AWAY)
		p->times_away++;
	if (kind == TR_EVENT_DIED || p->times_away <= NIC_AWAY_TOLD)
		fprintf(stderr, "fabsim: at %llu ns, %s: %s%s\n",
			(unsigned long long)nic_world_now(world), who,
			event_text[kind],
			kind == TR_EVENT_BACK &&
					p->times_away == NIC_AWAY_TOLD ?
				" (further times are not told here)" :
				"");
	switch (kind) {
	case TR_EVENT_AWAY:
		p->aways_unrecorded++;
		world->aways_unrecorded++;
		break;
	case TR_EVENT_BACK:
		if (p->aways_unrecorded) {
			p->aways_unrecorded--;
			world->aways_unrecorded--;
		} else {
			record(world, p, kind);
		}
		break;
	default:
		world->aways_unrecorded -= p->aways_unrecorded;
		p->aways_unrecorded = 0;
		record(world, p, kind);
		break;
	}
}

/* How often the other processes of a shared world are checked for life. */
#define NIC_PEER_CHECK_MS 100

/* A process that died without leaving: its threads stop holding the clock,
 * its NICs go off the network (the fabric goes on). */
/* Removes the entries of process `pid`'s threads. */
/* Forgets the threads of process `pid`, or (pid 0) those that have
 * exited. */
static void forget_threads(struct nic_world *world, pid_t pid)
{
	for (struct nic_thread **p = &world->threads; *p;) {
		struct nic_thread *t = *p;

		if (pid ? t->pid != pid : !t->exited) {
			p = &t->next;
			continue;
		}
		*p = t->next;
		if (t->out_running)
			world->out_running--;
		if (world->driver == t)
			world->driver = NULL;
		entry_free(world, t);
	}
}

static void bury(struct nic_world *world, struct nic_proc *p)
{
	tell(world, p, TR_EVENT_DIED);
	world->sched_changes++;
	nic_proc_died(world, p);
	forget_threads(world, p->pid);
}

bool nic_proc_bury_if_dead(struct nic_world *world, struct nic_proc *p)
{
	if (p->gone || p->pid == nic_self_pid() ||
	    !nic_kernel_process_gone(p->pid))
		return false;
	bury(world, p);
	return true;
}

static void bury_the_dead(struct nic_world *world)
{
	for (struct nic_proc *p = world->procs; p; p = p->next)
		nic_proc_bury_if_dead(world, p);
}

/* Looks for processes that died, every NIC_PEER_CHECK_MS of real time. */
static void bury_dead_now_and_then(struct nic_world *world)
{
	struct timespec real;

	real_now(&real);
	if (world->peers_checked.tv_sec &&
	    ms_between(&world->peers_checked, &real) < NIC_PEER_CHECK_MS)
		return;
	world->peers_checked = real;
	bury_the_dead(world);
}

/* The same, reading the clock at one look in 64 only. */
static void bury_dead_processes(struct nic_world *world)
{
	if (++world->looks % 64 == 0)
		bury_dead_now_and_then(world);
}

/* The thread's silence, if it is silent, is timed from the next look. */
static void restart_silence(struct nic_thread *t)
{
	t->calls_seen = t->calls;
	t->seen_at.tv_sec = 0;
	t->silent_looks = 0;
}

/* A thread that is not waiting in the fabric: busy (false), or silent long
 * enough, and blocked outside the fabric, to be taken out of time (true;
 * its state becomes NIC_THREAD_ABSENT). *real caches the clock. */
static bool running_idle(struct nic_world *world, struct nic_thread *t,
			 bool polling, struct timespec *real)
{
	bool out_running = false;
	long silent_us, silent_ms;

	/* Calls since we last looked: it is busy in the fabric, no need to
	 * read the clock. Its silence is timed from the first look that finds
	 * none. */
	if (t->calls != t->calls_seen) {
		restart_silence(t);
		return false;
	}
	/* Most silences are short: a busy poller reads the clock only every
	 * so many looks — but at every look that real time brought about, and
	 * at every look at a thread that waits by reading memory, whose
	 * silence is cut short (NIC_SPIN_US). */
	if (polling && !world->timed_look && !t->spins &&
	    ++t->silent_looks % 64)
		return false;
	if (!real->tv_sec)
		real_now(real);
	if (!t->seen_at.tv_sec) {
		t->seen_at = *real;
		return false;
	}
	silent_us = us_between(&t->seen_at, real);
	silent_ms = silent_us / 1000;
	if (t->spins && silent_us >= NIC_SPIN_US && kernel_running(t)) {
		out_running = true;
	} else if (silent_us < NIC_BLOCKED_US) {
		/* One of this process asleep on a futex leaves at once: it
		 * comes back at the instant its word changes (futex_woken). */
		if (t->pid != nic_self_pid() || !blocked_elsewhere(world, t) ||
		    !t->futex.word)
			return false;
	} else if (silent_ms < NIC_ABSENT_MS) {
		if (silent_ms >= NIC_NAPS_MS && napping(t)) {
			out_running = true;
		} else if (!blocked_elsewhere(world, t)) {
			if (!thread_exited(t))
				return false;
			/* A thread that posts and ends (a worker, a signaller)
			 * will never call in again: it holds nothing. */
			t->exited = true;
			world->threads_exited = true;
			world->sched_changes++;
			return true;
		}
	} else if (computing(t, silent_ms)) {
		return false;
	} else if (!(out_running = kernel_running(t))) {
		/* Looked at past NIC_ABSENT_MS too, for what it waits on
		 * (t->futex): its own process needs that to see it woken,
		 * whichever process takes it out of time. */
		blocked_elsewhere(world, t);
	}
	t->state = NIC_THREAD_ABSENT;
	t->woke_at.tv_sec = 0;
	if (out_running) {
		t->out_running = true;
		t->news_at.tv_sec = t->news_last.tv_sec = 0;
		t->futex.word = 0;
		world->out_running++;
	}
	/* A spinner's trips out of time are its way of waiting: they move
	 * nothing it sees (it comes back at the instant its memory is
	 * written), and are not told. */
	t->away_untold = out_running && t->spins;
	world->sched_changes++;
	world->threads_out_of_time++;
	t->away_told = t->pid != nic_self_pid() && !t->away_untold;
	if (t->away_told)
		tell(world, t->proc, TR_EVENT_AWAY);
	return true;
}

/* True when no thread but `self` runs the program. Running threads silent
 * for NIC_ABSENT_MS are taken out of time here. */
static bool others_idle(struct nic_world *world, struct nic_thread *self,
			bool polling)
{
	nm_time_ns now = nic_world_now(world);
	struct timespec real = { 0 };
	bool idle = true, wake = false;

	if (world->proc_count > 1)
		bury_dead_processes(world);
	if (joining(world))
		return false;

	for (struct nic_thread *t = world->threads; t; t = t->next) {
		fs_touch_span(t, sizeof(*t));
		if (t == self)
			continue;
		switch (t->state) {
		case NIC_THREAD_POLLING:
			/* A poller is idle only if it polls in a loop (one
			 * poll between other calls is a look in the middle of
			 * a call) and its last poll saw the latest work or
			 * completion for its process: one that polled and
			 * then went to do something else (wait on a
			 * descriptor, talk out of band) must not let time run
			 * on past what it would have seen. Until it polls
			 * again it is judged as a running thread. What other
			 * processes post changes nothing it can see. */
			if (!idle_poller(t) &&
			    !running_idle(world, t, polling, &real))
				idle = false;
			break;
		case NIC_THREAD_ABSENT:
			if (t->out_running) {
				/* The kernel has had it running all along:
				 * that says nothing about its coming back. Its
				 * process's first news since it went out (memory
				 * the NIC wrote, a completion) may be what it
				 * reads in a loop: the clock waits a moment. */
				if (within_hold_of(&t->news_at, &real))
					idle = false;
			} else if (t->pid != nic_self_pid()) {
				if (waking(world, t, &real))
					idle = false;
			} else if (futex_woken(t, polling)) {
				back_in_time(world, t, false);
				t->state = NIC_THREAD_RUNNING;
				t->futex.word = 0;
				restart_silence(t);
				idle = false;
			}
			break;
		case NIC_THREAD_WAITING:
			/* About to wake: it runs at this instant. One of this
			 * process is marked so for the others, which cannot
			 * call its condition (mark_waiters_ready). */
			if (wait_over(t, now)) {
				idle = false;
				if (t->pid == nic_self_pid() && world->arena &&
				    !t->ready_now) {
					t->ready_now = true;
					wake = true;
				}
			}
			break;
		case NIC_THREAD_RUNNING:
			if (!running_idle(world, t, polling, &real))
				idle = false;
			break;
		}
	}
	if (wake)
		wake_all(world);
	if (world->threads_exited) {
		world->threads_exited = false;
		forget_threads(world, 0);
		/* A thread may have ended with its process (killed): its NICs
		 * must leave the network before time moves on, or they would
		 * still take in and acknowledge what peers send it. */
		if (world->proc_count > 1)
			bury_the_dead(world);
	}
	return idle;
}

/* Virtual time a poll of a shared world may run past the next instant,
 * while nothing appears for any thread: long enough for a message to cross
 * the network and come back in one poll (each poll of another process is a
 * hand-over of the model's state between CPUs), short enough that a thread
 * busy between its polls sees the clock move in steps no longer than this
 * (a protocol's retry timers do not all run out in one poll). In one
 * process a poll runs one instant. */
#define NIC_POLL_HORIZON_NS (10 * NM_NS_PER_US)

/* The clock's next move is a jump: nothing is due within a poll's horizon. */
static bool jump_ahead(struct nic_world *world)
{
	nm_time_ns next;

	return !nic_world_next_event(world, &next) ||
	       next > nic_world_now(world) + NIC_POLL_HORIZON_NS;
}

/* A thread of p that the kernel says is running or runnable and that has
 * never called in (nor is one of p's known outsiders): its id, or 0. */
static pid_t unseen_runner(const struct nic_world *world,
			   const struct nic_proc *p)
{
	pid_t known[64 + NIC_OUTSIDERS];
	size_t count = 0;

	for (int i = 0; i < NIC_OUTSIDERS; i++)
		known[count++] = p->outsiders[i];
	count += known_threads(world, p, known + count, 64);
	return nic_kernel_other_thread_running(p->pid, known, count);
}

/* A thread of a process that shares the world, running but not yet seen
 * in the fabric, holds back a jump of the clock for up to NIC_COMPUTING_MS
 * of real time, as a computing thread that has called in would: a new
 * thread on its way in. rping's persistent server starts one to accept
 * each connection; its client, told by the server's MRA to wait 68 s
 * before asking again, jumped there and through its 15 resends (the
 * connection unreachable) whenever that thread took more than a couple of
 * milliseconds to call in. One that runs that long without calling in is
 * not on its way: it holds no more (p->outsiders). */
static bool unseen_thread_running(struct nic_world *world)
{
	nm_time_ns now = nic_world_now(world);
	bool held = false;

	if (world->proc_count < 2 || !jump_ahead(world))
		return false;
	for (struct nic_proc *p = world->procs; p; p = p->next) {
		struct timespec real;
		pid_t tid;

		if (p->gone || !(tid = unseen_runner(world, p)))
			continue;
		real_now(&real);
		if (!world->unseen_since.tv_sec || world->unseen_at != now) {
			world->unseen_since = real;
			world->unseen_at = now;
		}
		if (ms_between(&world->unseen_since, &real) < NIC_COMPUTING_MS)
			held = true;
		else
			p->outsiders[p->outsiders_found++ % NIC_OUTSIDERS] = tid;
	}
	return held;
}

/* Events a run of the model for waiting threads goes through before it
 * looks for dead processes. A run ends when something appears for a
 * thread, but events may come for ever with nothing for anyone: a send
 * retried without limit against a receiver that is not ready — one whose
 * process has died, and whose connections end, and host goes quiet, only
 * once the death is found. Counted in events, not real time, so that a
 * busy machine does not change where runs stop. */
#define NIC_RUN_LONG_EVENTS (1u << 20)

struct run_watch {
	struct nic_world *world;
	uint64_t          signals;
	bool              pollers;
	unsigned          turns;
	/* A wait of this process that may give a new thread its time to
	 * show up: the run stops before the clock jumps (unseen_need_time). */
	struct nic_proc  *grace_for;
	bool              unseen_new;
};

static bool someone_can_go(void *arg)
{
	struct run_watch *w = arg;
	struct nic_world *world = w->world;

	if (w->pollers && world->signals != w->signals)
		return true;
	if (world->landing_stop) {
		world->landing_stop = false;
		return true;
	}
	for (struct nic_thread *t = world->threads; t; t = t->next)
		if (t->state == NIC_THREAD_WAITING && wait_ready(t))
			return true;
	if (world->aways_unrecorded) {
		nm_time_ns next;

		if (nic_world_next_event(world, &next) &&
		    next > nic_world_now(world))
			record_absences(world);
	}
	if (unseen_thread_running(world))
		return true;
	/* Once per run: a thread cannot be born while the world's lock is
	 * held, and the look reads /proc. */
	if (w->grace_for && jump_ahead(world)) {
		struct nic_proc *p = w->grace_for;

		w->grace_for = NULL;
		if (unseen_need_time(world, p)) {
			w->unseen_new = true;
			return true;
		}
	}
	if (++w->turns % NIC_RUN_LONG_EVENTS == 0 && world->proc_count > 1) {
		uint64_t changes = world->sched_changes;

		bury_dead_now_and_then(world);
		return world->sched_changes != changes;
	}
	return false;
}

/* Runs the world for every thread that waits, up to `limit` at most: until
 * one of them can go on, or the earliest of their deadlines; with
 * `grace_for`, until the clock would jump while that process has a thread
 * that has not called in yet and has not had its time to (*unseen_new). */
static nm_run_result advance(struct nic_world *world, nm_time_ns limit,
			     struct nic_proc *grace_for, bool *unseen_new)
{
	struct run_watch watch = { .world = world, .signals = world->signals,
				   .grace_for = grace_for };
	nm_run_result r;

	if (world->landing_stop) /* what a run before left is seen */
		world->landing_stop = false;

	for (struct nic_thread *t = world->threads; t; t = t->next) {
		if (t->state == NIC_THREAD_WAITING && t->deadline < limit)
			limit = t->deadline;
		watch.pollers |= t->state == NIC_THREAD_POLLING;
	}
	if (world->aways_unrecorded && limit > nic_world_now(world) &&
	    limit != NM_TIME_NEVER) {
		nm_time_ns next;

		/* Nothing due before the limit: the clock jumps to it. */
		if (!nic_world_next_event(world, &next) || next > limit)
			record_absences(world);
	}
	r = nic_world_run_until(world, someone_can_go, &watch, limit);
	mark_waiters_ready(world);
	if (unseen_new)
		*unseen_new = watch.unseen_new;
	/* Pollers may have something to read now: let them look before
	 * time moves on. */
	if (watch.pollers && world->signals != watch.signals)
		for (struct nic_thread *t = world->threads; t; t = t->next)
			if (t->state == NIC_THREAD_POLLING &&
			    t->acked != t->proc->signals.value)
				set_running(t);
	wake_all(world);
	return r;
}

/* When every thread of a shared world polls, any of them may move time;
 * one that keeps polling moves it for all, so that the model's state stays
 * in one CPU's cache rather than going back and forth between processes.
 * Another takes over when the driver has not called in since it last
 * looked; a thread that has just posted runs its own work at once. Which
 * thread runs an instant changes nothing in what happens. */
static bool another_drives(struct nic_world *world, struct nic_thread *self)
{
	const struct nic_thread *d = world->driver;

	if (!world->arena || !d || d == self ||
	    self->poll_streak < NIC_IDLE_STREAK ||
	    d->state != NIC_THREAD_POLLING ||
	    d->calls == self->driver_calls)
		return false;
	self->driver_calls = d->calls;
	return true;
}

/* A poller that leaves idle, having entered busy, may let others move
 * time; what its run signalled to them stirs them itself. An idle poller
 * need not look again before the world's version or its process's signals
 * move, whether it became idle in this poll or before (a thread that is
 * not yet idle must, to become idle), when its poll found nothing to run,
 * or ran the model until a poller of another process had news: that one
 * is busy until it polls again, and its next poll that leaves it idle, or
 * its run, moves the version. Looking before would only take the lock
 * from it (a ping-pong's receiver found the lock held by the sender's
 * look, ~400 ns per transfer). */
static void leave_poll(struct nic_world *world, struct nic_thread *self,
		       bool found_nothing, bool others_busy)
{
	bool idle = idle_poller(self);

	if (idle && !self->entered_idle)
		world->stir = true;
	bool nothing_to_find = found_nothing || others_busy;

	world->found_nothing = found_nothing && idle;
	world->look_later = nothing_to_find && idle;
	world->left_polling = idle;
	/* Its next poll, if nothing moves before, would only make it idle:
	 * it may do that without the lock (nic_lock.c). */
	if (!idle && nothing_to_find && world->arena &&
	    self->poll_streak == NIC_IDLE_STREAK - 1 &&
	    self->acked == self->proc->signals.value &&
	    !nic_proc_has_calls(self->proc))
		world->short_of_idle = self;
}

/* The second poll in a row of a thread whose first found nothing it could
 * run, or ran the model until another process's poller had news, with
 * nothing moved since (nic_lock.c checks: the version, its process's
 * signals and calls): under the lock it would only count the poll and
 * move the version, and take the lock from the process that has the news
 * (a ping-pong's receiver waited ~400 ns per transfer for it). The streak
 * is its own to write; the other fields idle_poller reads are as its last
 * hold left them. `idled` moves, not the version: a holder bumps that
 * without an atomic instruction, and would lose this bump. Holders read
 * `idled` when their hold begins, so one that looked at this thread
 * before it became idle looks again (nic_lock.c, unchanged), and a waiter
 * about to sleep is woken (spin_for_activity, or wake_all). */
uint64_t nic_sched_idle_unlocked(struct nic_world *world,
				 struct nic_thread *t)
{
	uint64_t idled;

	__atomic_store_n(&t->poll_streak, NIC_IDLE_STREAK, __ATOMIC_RELAXED);
	idled = __atomic_add_fetch(&world->version.idled, 1, __ATOMIC_SEQ_CST);
	wake_all(world);
	return idled;
}

/* A poller of another process has news it has not seen: the run that
 * brought it made it running (advance). */
static bool news_for_another_poller(const struct nic_world *world,
				    const struct nic_thread *self)
{
	for (const struct nic_thread *t = world->threads; t; t = t->next)
		if (t->proc != self->proc && t->state == NIC_THREAD_RUNNING &&
		    t->acked != t->proc->signals.value)
			return true;
	return false;
}

/* True when the poll ran the model (time may have moved). */
static bool poll_world(struct nic_world *world, bool blocking)
{
	struct nic_thread *self = thread_self(world);
	nm_time_ns next;

	self->state = NIC_THREAD_POLLING;
	self->acked = self->proc->signals.value;
	self->poll_streak = self->was_polling ? self->poll_streak + 1 : 1;
	if (blocking && self->poll_streak < NIC_IDLE_STREAK)
		self->poll_streak = NIC_IDLE_STREAK;
	if (world->threads == self && !self->next && !joining(world)) {
		/* The only thread: nobody to wait for or to stop for. */
		return nic_world_run_instant(world);
	}
	wake_all(world); /* waiters held back by this thread may go on */
	if (!others_idle(world, self, true) ||
	    !nic_world_next_event(world, &next) ||
	    another_drives(world, self) || unseen_thread_running(world)) {
		leave_poll(world, self, true, false);
		return false;
	}
	if (world->driver != self)
		world->driver = self;
	advance(world, world->arena ? next + NIC_POLL_HORIZON_NS : next, NULL,
		NULL);
	leave_poll(world, self, false, news_for_another_poller(world, self));
	return true;
}

bool nic_sched_poll(struct nic_world *world)
{
	return poll_world(world, false);
}

void nic_sched_poll_blocking(struct nic_world *world)
{
	poll_world(world, true);
}

/* A thread of another process is out of time: what it will post could
 * still change what happens before our deadline. Not one that reads a
 * connection of ours or accepts connections (an out-of-band exchange): it
 * waits for this process to act first, and waiting for it would only hold
 * both for the grace (fi_pingpong's server reads its control socket, and
 * ibv_rc_pingpong's accepts its client, while the client registers memory,
 * which takes virtual time: 1 s of real time per run). */
static bool other_process_away(const struct nic_world *world)
{
	pid_t pid = nic_self_pid();

	for (const struct nic_thread *t = world->threads; t; t = t->next)
		if (t->pid != pid && t->state == NIC_THREAD_ABSENT &&
		    !(t->tid && nic_kernel_waits_out_of_band(t->pid, t->tid, pid)))
			return true;
	return false;
}

/* True when the next run would only move the clock: no event is due before
 * the earliest deadline of the threads that wait. */
static bool nothing_due(struct nic_world *world)
{
	nm_time_ns next, limit = NM_TIME_NEVER;

	if (!nic_world_next_event(world, &next))
		return true;
	for (struct nic_thread *t = world->threads; t; t = t->next)
		if (t->state == NIC_THREAD_WAITING && t->deadline < limit)
			limit = t->deadline;
	return next > limit;
}

/* Blocks the calling thread (lock held) until ready(ctx), `deadline`, or —
 * when `settle` — nothing left to simulate; with `grace`, a jump of the
 * clock waits a while for processes away from the fabric. */
static enum nic_wait_end wait_for(struct nic_world *world,
				  bool (*ready)(void *ctx), void *ctx,
				  nm_time_ns deadline, bool settle, bool grace)
{
	struct nic_thread *self = thread_self(world);
	struct timespec idle_since = { 0 }, away_since = { 0 }, real;
	bool unseen_had_time = false, unseen_new = false;
	enum nic_wait_end end;

	self->state = NIC_THREAD_WAITING;
	world->stir = true; /* it no longer holds the clock */
	self->ready = ready;
	self->ctx = ctx;
	self->deadline = deadline;
	wake_all(world);
	for (;;) {
		if (nic_proc_has_calls(self->proc))
			drain_calls(world);
		if (ready && ready(ctx)) {
			end = NIC_WAIT_READY;
			break;
		}
		self->ready_now = false; /* another thread took it first */
		if (nic_world_now(world) >= deadline) {
			end = NIC_WAIT_TIMEOUT;
			break;
		}
		if (!others_idle(world, self, false) ||
		    unseen_thread_running(world)) {
			sleep_real(world, NIC_HELD_BACK_MS);
			continue;
		}
		/* The clock is about to jump (nothing due before the deadline,
		 * or not within a poll's horizon: a run, below, stops there
		 * for the same look). */
		if (grace && !unseen_had_time &&
		    (nothing_due(world) || jump_ahead(world)) &&
		    unseen_need_time(world, self->proc))
			unseen_new = true;
		if (unseen_new) {
			unseen_had_time = true;
			unseen_new = false;
			sleep_real(world, NIC_ABSENT_MS);
			continue;
		}
		if (grace && nothing_due(world) && other_process_away(world)) {
			real_now(&real);
			if (!away_since.tv_sec)
				away_since = real;
			if (ms_between(&away_since, &real) < NIC_AWAY_GRACE_MS) {
				sleep_real(world, NIC_SLICE_MS);
				continue;
			}
		}
		if (advance(world, NM_TIME_NEVER,
			    grace && !unseen_had_time ? self->proc : NULL,
			    &unseen_new) != NM_RUN_IDLE) {
			idle_since.tv_sec = 0;
			continue;
		}
		/* Every thread waits and nothing is left to simulate: only a
		 * thread that is out of time can still change anything. */
		if (settle) {
			end = NIC_WAIT_IDLE;
			break;
		}
		real_now(&real);
		if (!idle_since.tv_sec)
			idle_since = real;
		else if (ms_between(&idle_since, &real) >= NIC_IDLE_WAIT_MS) {
			end = NIC_WAIT_STUCK;
			break;
		}
		sleep_real(world, NIC_SLICE_MS);
	}
	self->ready = NULL;
	self->ready_now = false;
	set_running(self);
	return end;
}

enum nic_wait_end nic_sched_wait(struct nic_world *world,
				   bool (*ready)(void *ctx), void *ctx,
				   nm_time_ns deadline, bool settle)
{
	return wait_for(world, ready, ctx, deadline, settle, true);
}

static nm_time_ns after(struct nic_world *world, nm_time_ns ns)
{
	nm_time_ns now = nic_world_now(world);

	return ns > NM_TIME_NEVER - 1 - now ? NM_TIME_NEVER - 1 : now + ns;
}

void nic_sched_sleep(struct nic_world *world, nm_time_ns ns)
{
	wait_for(world, NULL, NULL, after(world, ns), false, true);
}

struct news_since {
	const struct nic_proc *proc;
	uint64_t               seen;
};

static bool news_for_process(void *ctx)
{
	const struct news_since *n = ctx;

	return __atomic_load_n(&n->proc->signals.value, __ATOMIC_RELAXED) !=
	       n->seen;
}

/* Over as soon as something appears for the process, as a poll would see
 * it: the thread may be reading the clock between polls of a CQ. */
void nic_sched_spend(struct nic_world *world, nm_time_ns ns)
{
	struct nic_thread *self = thread_self(world);
	struct news_since news = { self->proc, self->proc->signals.value };

	wait_for(world, news_for_process, &news, after(world, ns), false,
		 false);
}

void nic_sched_step_out(struct nic_world *world)
{
	struct nic_thread *self = thread_self(world);

	if (self->state == NIC_THREAD_ABSENT)
		return;
	self->state = NIC_THREAD_ABSENT;
	self->futex.word = 0; /* nothing brings it back but its own call */
	self->away_untold = true;
	world->stir = true; /* it no longer holds the clock */
	wake_all(world);
}

void nic_sched_rouse(struct nic_world *world)
{
	pid_t pid = nic_self_pid();

	for (struct nic_thread *t = world->threads; t; t = t->next)
		/* Not one away quietly (stepped out) nor one taken out while
		 * the kernel had it running: it is blocked on no descriptor. */
		if (t->pid == pid && t->state == NIC_THREAD_ABSENT &&
		    !t->away_untold && !t->out_running) {
			back_in_time(world, t, false);
			t->state = NIC_THREAD_RUNNING;
			restart_silence(t);
		}
}

void nic_sched_leave(struct nic_world *world)
{
	forget_threads(world, nic_self_pid());
	__atomic_add_fetch(&entries_freed, 1, __ATOMIC_RELAXED);
	world->stir = true;
	wake_all(world); /* nobody waits for this process any more */
}
