/* SPDX-License-Identifier: BSD-2-Clause
 * The world's lock, and how the pollers of a shared world spin around it.
 *
 * Every step of the model runs with the lock held. In one process it is a
 * plain mutex. A world that several processes share has one of its own
 * that any process can take (and take from a process that died holding
 * it), and its pollers never block on it: a poll is one turn of the
 * program's busy loop around fi_cq_read, and one that can find nothing new
 * should cost no more than a look at a cache line. So every hold ends by telling whether it may let a thread of
 * another process go on (the world's version moves: work or completions
 * for that process, or one of the holder's threads became idle or left),
 * and a thread whose last poll found nothing and changed nothing takes the
 * lock again only when the version or its own process's signals have moved
 * — or now and then, since real time moves without anyone holding the
 * lock (threads that stay away are taken out of time). A process's own
 * posts and reads move nothing for the others: they cannot go on before
 * its threads poll again.
 */
#define _GNU_SOURCE /* sched_getcpu */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "arena/working_set.h"
#include "nic_internal.h"
#include "nic_kernel.h"

static void begin_turn(struct nic_world *world);

/* What this thread's last hold left it knowing, and how long it has spun. */
static __thread struct {
	uint64_t        identity; /* of the world to look at later (0: none) */
	uint64_t        version;
	const struct nic_proc *proc; /* its process's entry (set with
				      * identity or idle_in) ... */
	uint64_t        signals;     /* ... and its signals then */
	uint64_t        idle_in;  /* the world it left as an idle poller */
	uint64_t        idled;    /* the world's, when its last hold began */
	/* Its entry, when its last hold left it one poll short of idle
	 * (world->short_of_idle), in world `short_in`. */
	struct nic_thread *short_of_idle;
	uint64_t        short_in;
	unsigned        skips;    /* polls that did not look */
	unsigned        misses;   /* polls in a row that did not lock */
	/* Real time since its polls got nowhere: they did not lock, or
	 * locked and found nothing they could run ({0}: they got somewhere
	 * last time). */
	struct timespec fruitless_since;
	/* Real time of its last look ({0}: it got somewhere since), and
	 * whether the next poll must look whatever changed: rules of real
	 * time (a thread silent for so long is taken out of time) move
	 * nothing a poller watches. */
	struct timespec looked_at;
	bool            look_now;
	bool            yield_due; /* once the lock it holds is let go */
} poller;

/* The lock is ours: pollers may look (and see on which CPU we run: one on
 * the same CPU had better give it to us), and this thread's turn may
 * begin (begin_turn). */
void nic_world_held(struct nic_world *world)
{
	if (!world->version.shared)
		return; /* no pollers that spin around the lock */
	poller.idled = __atomic_load_n(&world->version.idled, __ATOMIC_ACQUIRE);
	__atomic_store_n(&world->holder_cpu, sched_getcpu(), __ATOMIC_RELAXED);
	begin_turn(world);
}

/* A hint: the holder runs on this thread's CPU, so it cannot go on while
 * this thread spins. */
static bool holder_here(const struct nic_world *world)
{
	return __atomic_load_n(&world->holder, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&world->holder_cpu, __ATOMIC_RELAXED) ==
		       sched_getcpu();
}

/* A shared world's lock is a word that names its holder (pid << 32 |
 * tid), not a robust process-shared mutex: glibc's robust unlock is an
 * atomic exchange, whose fence waits for every store of the hold that
 * missed the cache (~0.45 µs per transfer across processes, BENCHMARKS.md),
 * and it keeps a list inside the mutex. The word is released with a plain
 * store; a holder that is gone is found by its name, where the robust
 * mutex said EOWNERDEAD. */

/* This thread's name for the word (0: not known yet, or forked since). */
static __thread uint64_t my_name;

static uint64_t me(void)
{
	if (!my_name)
		my_name = (uint64_t)(uint32_t)nic_self_pid() << 32 |
			  (uint32_t)syscall(SYS_gettid);
	return my_name;
}

/* The half of the word that holds the tid: what a sleeper waits on. */
static uint32_t *holder_tid_word(struct nic_world *world)
{
	return (uint32_t *)&world->holder +
	       (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
}

/* A thread's holds since another thread or process last held the lock are
 * its turn: much of what it touches then was written on another CPU. The
 * objects a recent turn noted are fetched at once, and now and then a turn
 * notes them anew (arena/working_set.h). */
static void begin_turn(struct nic_world *world)
{
	fs_working_set *ws = fs_working_set_mine();

	if (!ws)
		return;
	if (world->last_holder == (uint32_t)me()) {
		if (ws->noting_turn)
			fs_working_set_resume(ws);
		return;
	}
	world->last_holder = (uint32_t)me();
	if (!fs_working_set_begin_turn(ws))
		return;
	fs_working_set_resume(ws);
	/* What every turn touches, for the turns the set serves: the world's
	 * fields that holds read and write (the lock's, the scheduler's, the
	 * handles), the engine, the network's free records and counters. The
	 * NIC's parts and the processes' entries are noted where they are
	 * used (nic_proc_self may make an entry). */
	fs_touch_span(world, offsetof(struct nic_world, cfg));
	nm_engine_note(world->engine);
	nm_network_note(world->net);
}

static bool take_free(struct nic_world *world)
{
	uint64_t free_word = 0;

	return __atomic_compare_exchange_n(&world->holder, &free_word, me(),
					   false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

/* The holding thread itself, not its process: a process whose main
 * thread ended (pthread_exit) is a zombie to /proc while its other
 * threads run. */
static bool holder_gone(uint64_t holder)
{
	char state = nic_kernel_thread_state((pid_t)(holder >> 32),
					     (pid_t)(uint32_t)holder);

	return state == '-' || state == 'Z' || state == 'X';
}

/* The lock of a holder that is gone (it died in the middle of a step). */
static bool take_abandoned(struct nic_world *world)
{
	uint64_t holder = __atomic_load_n(&world->holder, __ATOMIC_RELAXED);

	if (!holder || !holder_gone(holder) ||
	    !__atomic_compare_exchange_n(&world->holder, &holder, me(), false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return false;
	nic_world_owner_died(world);
	return true;
}

/* The lock itself (a shared world's word, or the mutex). */
static bool try_take(struct nic_world *world)
{
	if (world->version.shared ? !take_free(world)
				  : pthread_mutex_trylock(&world->lock) != 0)
		return false;
	nic_world_held(world);
	return true;
}

static bool trylock_or_take_abandoned(struct nic_world *world)
{
	if (try_take(world))
		return true;
	if (!take_abandoned(world))
		return false;
	nic_world_held(world);
	return true;
}

/* A sleeper on a shared world's lock looks again after this long: the
 * release does not fence, so it may miss that a sleeper came, and a holder
 * may be gone. */
#define NIC_LOCK_NAP_NS 1000000

/* One fewer sleeper, never below none: a sleeper killed in its sleep
 * never takes itself off the count, and a release that wakes nobody does
 * it (a live sleeper so left out wakes at its next nap's end). */
static void waiters_down(struct nic_world *world, uint32_t seen)
{
	while (seen && !__atomic_compare_exchange_n(&world->lock_waiters, &seen,
						   seen - 1, false,
						   __ATOMIC_RELAXED,
						   __ATOMIC_RELAXED))
		;
}

static void wait_shared(struct nic_world *world)
{
	bool napped_out = true; /* look for a dead holder at once */

	__atomic_add_fetch(&world->lock_waiters, 1, __ATOMIC_SEQ_CST);
	while (!(napped_out ? trylock_or_take_abandoned(world)
			    : try_take(world))) {
		uint64_t holder = __atomic_load_n(&world->holder,
						  __ATOMIC_RELAXED);
		struct timespec nap = {0, NIC_LOCK_NAP_NS};

		napped_out = holder &&
			     syscall(SYS_futex, holder_tid_word(world),
				     FUTEX_WAIT, (uint32_t)holder, &nap, NULL,
				     0) && errno == ETIMEDOUT;
	}
	waiters_down(world, __atomic_load_n(&world->lock_waiters,
					    __ATOMIC_RELAXED));
}

static void release(struct nic_world *world)
{
	uint32_t waiters;

	if (!world->version.shared) {
		pthread_mutex_unlock(&world->lock);
		return;
	}
	__atomic_store_n(&world->holder, 0, __ATOMIC_RELEASE);
	waiters = __atomic_load_n(&world->lock_waiters, __ATOMIC_RELAXED);
	if (waiters && !syscall(SYS_futex, holder_tid_word(world), FUTEX_WAKE,
				1, NULL, NULL, 0))
		waiters_down(world, waiters);
}

static bool trylock(struct nic_world *world)
{
	/* Look before trying: a failed try still claims the cache line
	 * that the holder is using. */
	if (__atomic_load_n(&world->holder, __ATOMIC_RELAXED))
		return false;
	return try_take(world);
}

/* Turns a waiting process spends on a held lock before it sleeps: the
 * holder of a shared world is usually another process running a few
 * events on the other CPU, and a futex sleep and wake-up costs more. */
#define NIC_LOCK_SPINS 2000

/* The world this process left on its way out (nic_world_depart). */
static struct nic_world *departed;

void nic_world_depart(struct nic_world *world)
{
	__atomic_store_n(&departed, world, __ATOMIC_RELEASE);
}

/* Lock just taken: a thread of a process that has left the world must not
 * run it (it would be killed at the process's end, perhaps holding the
 * lock, which breaks the world for everyone). */
static void unless_departed(struct nic_world *world)
{
	if (__builtin_expect(__atomic_load_n(&departed, __ATOMIC_ACQUIRE) !=
			     world, 1))
		return;
	release(world);
	for (;;)
		pause();
}

static void lock_private(struct nic_world *world)
{
	/* Uncontended, the common case: no count to keep. */
	if (pthread_mutex_trylock(&world->lock) != 0) {
		__atomic_add_fetch(&world->lock_waiters, 1, __ATOMIC_RELAXED);
		pthread_mutex_lock(&world->lock);
		__atomic_sub_fetch(&world->lock_waiters, 1, __ATOMIC_RELAXED);
	}
	nic_world_held(world);
}

void nic_world_lock(struct nic_world *world)
{
	if (!world->version.shared) {
		lock_private(world);
		return;
	}
	for (int i = 0; i < NIC_LOCK_SPINS; i++) {
		if (trylock(world)) {
			unless_departed(world);
			return;
		}
		/* The holder may be waiting for this CPU. */
		if (holder_here(world) || i % 64 == 63)
			sched_yield();
		else
			nic_cpu_relax();
	}
	wait_shared(world);
	unless_departed(world);
}

bool nic_world_trylock(struct nic_world *world)
{
	if (!trylock(world))
		return false;
	unless_departed(world);
	return true;
}

/* Turns a thread that gives way waits at most: a sleeper's wake-up takes
 * microseconds, and the waiter may be away for other reasons. */
#define NIC_GIVE_WAY_TURNS 64

void nic_world_give_way(struct nic_world *world)
{
	for (int i = 0; i < NIC_GIVE_WAY_TURNS &&
			__atomic_load_n(&world->lock_waiters, __ATOMIC_RELAXED);
	     i++)
		sched_yield();
}

void nic_world_owner_died(struct nic_world *world)
{
	/* A process died in the middle of a step: the state may be half
	 * changed. The world is marked so (nic_world_broken) and goes on:
	 * nothing refuses a broken world yet (MULTIPROCESS.md). */
	world->broken = true;
}

/* Polls skipped in a row before one looks anyway. */
#define NIC_QUIET_SKIPS 256
/* Real time after which a poller that gets nowhere looks again: the clock
 * may wait for a thread until it has been silent for so long (200 us for
 * one that waits by reading memory, nic_sched.c), and a look is what finds
 * that out. Counted in polls alone, that look came every few
 * milliseconds. */
#define NIC_LOOK_AGAIN_US 25
/* Real time a poller spins without getting anywhere before it gives its
 * CPU away: the thread that has work may be waiting for this very CPU. */
#define NIC_SPIN_YIELD_US 20
/* Pauses per poll that did not look: the holder may run on a hyperthread
 * of the same core, which every turn of a spinner's loop slows down (8
 * measured faster than 1 and than 32, fi_pingpong across processes). */
#define NIC_MISS_PAUSES 8

static bool still_fruitless(bool looked);
static void give_cpu_away(struct nic_world *world);

static void publish(struct nic_world *world)
{
	bool nothing = nm_engine_pending(world->engine) == 0;

	if (world->version.nothing_scheduled != nothing)
		__atomic_store_n(&world->version.nothing_scheduled, nothing,
				 __ATOMIC_RELAXED);
	bool changes = world->sched_changes != world->published_changes;

	/* A poll that found nothing it could run got nowhere:
	 * with more processes than CPUs, one that locks every few
	 * microseconds must still give its CPU away to the thread the clock
	 * waits for (runnable, but behind this one), not only one that
	 * spins on a held lock. */
	if (world->found_nothing) {
		poller.yield_due = still_fruitless(true);
	} else {
		poller.fruitless_since = (struct timespec){ 0 };
		poller.looked_at = (struct timespec){ 0 };
	}
	if (world->timed_look)
		world->timed_look = false;
	poller.identity = world->look_later ? world->version.identity : 0;
	poller.idle_in = world->left_polling ? world->version.identity : 0;
	poller.short_of_idle = world->short_of_idle;
	poller.short_in = world->short_of_idle ? world->version.identity : 0;
	if (world->stir || changes)
		__atomic_store_n(&world->version.value,
				 world->version.value + 1, __ATOMIC_RELEASE);
	if (changes)
		world->published_changes = world->sched_changes;
	poller.version = world->version.value;
	if (poller.identity || poller.idle_in || poller.short_in) {
		poller.proc = nic_proc_self(world);
		poller.signals = poller.proc->signals.value;
	}
	/* Written only when set: holds that change nothing leave the
	 * line alone. */
	if (world->stir || world->look_later || world->left_polling)
		world->stir = world->look_later = world->found_nothing =
			world->left_polling = false;
	if (world->short_of_idle)
		world->short_of_idle = NULL;
}

void nic_world_letting_go(struct nic_world *world)
{
	if (!world->version.shared)
		return;
	publish(world);
	fs_working_set_pause();
}

void nic_world_forget_poller(void)
{
	memset(&poller, 0, sizeof(poller));
	my_name = 0;
}

void nic_world_unlock(struct nic_world *world)
{
	nic_world_letting_go(world);
	release(world);
	/* Not before: the thread it gives its CPU to may need the lock. */
	if (poller.yield_due) {
		poller.yield_due = false;
		give_cpu_away(world);
	}
}

/* This thread's last poll found nothing, and no hold since may have
 * changed that. */
static bool unchanged(const struct nic_world *world)
{
	return !poller.look_now && poller.identity == world->version.identity &&
	       __atomic_load_n(&world->version.value, __ATOMIC_ACQUIRE) ==
		       poller.version &&
	       !nic_world_idled_since_hold(world) &&
	       __atomic_load_n(&poller.proc->signals.value, __ATOMIC_RELAXED) ==
		       poller.signals &&
	       ++poller.skips % NIC_QUIET_SKIPS != 0;
}

bool nic_world_idled_since_hold(const struct nic_world *world)
{
	return __atomic_load_n(&world->version.idled, __ATOMIC_ACQUIRE) !=
	       poller.idled;
}

/* This thread's last hold left it one poll short of idle, with nothing
 * that poll could find (nic_sched.c, leave_poll), and nothing has moved
 * since: no hold that may let it go on (the version), nothing for its
 * process. The poll is made without the lock (nic_sched_idle_unlocked),
 * and the thread then looks again only when something moves. */
static bool idle_without_lock(struct nic_world *world)
{
	struct nic_thread *t = poller.short_of_idle;

	if (!t || poller.short_in != world->version.identity)
		return false;
	poller.short_of_idle = NULL;
	/* What its last poll saw (t->acked, its own to write) is still all
	 * there is for its process: holders check the same. */
	if (__atomic_load_n(&world->version.value, __ATOMIC_ACQUIRE) !=
		    poller.version ||
	    __atomic_load_n(&t->proc->signals.value, __ATOMIC_RELAXED) !=
		    t->acked ||
	    __atomic_load_n(&t->proc->calls, __ATOMIC_ACQUIRE))
		return false;
	/* Its own bump is no news for it; one made by another thread since
	 * its hold began is (that thread may be the driver, waiting for it:
	 * whichever became idle last, the other looks again). */
	uint64_t idled = nic_sched_idle_unlocked(world, t);

	if (idled == poller.idled + 1)
		poller.idled = idled;
	poller.identity = poller.idle_in = world->version.identity;
	return true;
}

/* This thread is an idle poller (its last hold left it one: a thread
 * that posted must poll before it counts as idle), nothing waits to be
 * called back in this process and nothing is scheduled: a poll could only
 * find what another thread posts. */
static bool nothing_for_me(const struct nic_world *world)
{
	/* The process's entry, remembered at that hold: entries are never
	 * freed while the world lives. */
	return poller.idle_in == world->version.identity &&
	       !__atomic_load_n(&poller.proc->calls, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&world->version.nothing_scheduled,
			       __ATOMIC_RELAXED);
}

static long us_between(const struct timespec *from, const struct timespec *to)
{
	return (long)(to->tv_sec - from->tv_sec) * 1000000 +
	       (to->tv_nsec - from->tv_nsec) / 1000;
}

static bool unset(const struct timespec *ts)
{
	return !ts->tv_sec && !ts->tv_nsec;
}

/* This thread's poll got nowhere again (`looked`: it took the lock to find
 * that): past NIC_SPIN_YIELD_US of that it is time to give its CPU away
 * (true), past NIC_LOOK_AGAIN_US since its last look its next poll looks.
 * The real clock is the kernel's: under `fabsim run --virtual-clock` the
 * program's reads virtual time. */
static bool still_fruitless(bool looked)
{
	struct timespec now;
	bool yield = false;

	nic_kernel_clock(CLOCK_MONOTONIC, &now);
	if (unset(&poller.fruitless_since)) {
		poller.fruitless_since = now;
	} else if (us_between(&poller.fruitless_since, &now) >=
		   NIC_SPIN_YIELD_US) {
		yield = true;
		poller.fruitless_since = now;
	}
	if (looked || unset(&poller.looked_at))
		poller.looked_at = now;
	else if (us_between(&poller.looked_at, &now) >= NIC_LOOK_AGAIN_US)
		poller.look_now = true;
	return yield;
}

/* A yield that comes back this late let another thread run on this CPU. */
#define NIC_SHARED_YIELD_US 5
/* Real time after a poller of the world moved to another CPU during which
 * none moves: the thread it shared its CPU with finds the same just after. */
#define NIC_RESEAT_EVERY_MS 10

static uint64_t ns_of(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

/* Its affinity mask, and the same without `cpu`: false when that leaves
 * no CPU to move to (pinned, or a mask larger than cpu_set_t). */
static bool other_cpus(int cpu, cpu_set_t *mine, cpu_set_t *others)
{
	if (cpu < 0 || sched_getaffinity(0, sizeof(*mine), mine))
		return false;
	*others = *mine;
	CPU_CLR(cpu, others);
	return CPU_COUNT(others) > 0;
}

/* The CPU goes to whichever thread may need it: the one the clock waits
 * for may be runnable on this very CPU. When it is (the yield came back
 * late, and another thread took the lock on this CPU meanwhile), the
 * poller moves to another CPU of its affinity mask, which it keeps (the
 * kernel moves a running thread that its mask excludes at once): two
 * processes that poll each other and share a CPU, the other one idle,
 * would otherwise take turns through yields for as long as the kernel
 * judges them too cache-hot to move (~30 ms seen here, at ~25 us a
 * transfer instead of ~1.5: a fi_pingpong started next to its peer), and
 * a wake-up from a sleep may put the sleeper back on the busy CPU. One
 * moves, not both (reseated_ns), and only one that can. */
static void give_cpu_away(struct nic_world *world)
{
	struct timespec before, after;
	cpu_set_t mine, others;
	uint64_t last, now;
	int cpu;

	nic_kernel_clock(CLOCK_MONOTONIC, &before);
	sched_yield();
	nic_kernel_clock(CLOCK_MONOTONIC, &after);
	/* Another thread ran here meanwhile, and took the lock here last. */
	if (us_between(&before, &after) < NIC_SHARED_YIELD_US ||
	    __atomic_load_n(&world->last_holder, __ATOMIC_RELAXED) == (uint32_t)me() ||
	    __atomic_load_n(&world->holder_cpu, __ATOMIC_RELAXED) != (cpu = sched_getcpu()) ||
	    !other_cpus(cpu, &mine, &others))
		return;
	now = ns_of(&after);
	last = __atomic_load_n(&world->reseated_ns, __ATOMIC_RELAXED);
	if ((last && (int64_t)(now - last) < (int64_t)NIC_RESEAT_EVERY_MS * 1000000) ||
	    !__atomic_compare_exchange_n(&world->reseated_ns, &last, now, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED) ||
	    sched_setaffinity(0, sizeof(others), &others))
		return;
	/* Its own mask again (this fails only if its cpuset changed
	 * meanwhile; the kernel then keeps what that allows). */
	(void)sched_setaffinity(0, sizeof(mine), &mine);
	__atomic_add_fetch(&world->pollers_moved, 1, __ATOMIC_RELAXED);
}

/* A poll that did not take the lock. */
static void missed(struct nic_world *world)
{
	for (int r = 0; r < NIC_MISS_PAUSES; r++)
		nic_cpu_relax();
	if (poller.misses++ % 64)
		return;
	/* Not at every miss: it reads the lock's cache line. */
	if (holder_here(world) || still_fruitless(false))
		give_cpu_away(world);
}

/* Polls that find the lock held, in a row, before one tries it all the
 * same: its holder may have died in the middle of a step. */
#define NIC_STALE_LOCK_MISSES 4096

bool nic_world_poll_lock(struct nic_world *world)
{
	if (!world->version.shared) {
		nic_world_lock(world);
		return true;
	}
	if (poller.misses % NIC_STALE_LOCK_MISSES == NIC_STALE_LOCK_MISSES - 1 &&
	    __atomic_load_n(&world->holder, __ATOMIC_RELAXED) &&
	    trylock_or_take_abandoned(world)) {
		unless_departed(world);
		poller.misses = 0;
		return true;
	}
	/* Held: what the holder is changing is not worth a look yet, and
	 * reading it would only slow the holder down. */
	if (idle_without_lock(world) || unchanged(world) ||
	    __atomic_load_n(&world->holder, __ATOMIC_RELAXED) ||
	    nothing_for_me(world) || !trylock(world)) {
		missed(world);
		return false;
	}
	unless_departed(world);
	poller.misses = 0;
	if (poller.look_now) {
		world->timed_look = true;
		poller.look_now = false;
	}
	return true;
}
