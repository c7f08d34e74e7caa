/* SPDX-License-Identifier: BSD-2-Clause
 * A thread's working set in shared memory: the objects of a shared model
 * that a recent turn of it touched, fetched all at once when its next turn
 * begins (the set itself is the thread's own memory).
 *
 * Processes that share a model in an arena take turns at it (the sim NIC's
 * world lock). Much of what a turn touches was written last by the other
 * process's turn, on another CPU: each first touch waits for a cache line
 * to come from there (~50 ns on the machines measured), and the model's
 * code chases pointers, so those waits come one after the other. A turn
 * touches much the same objects as the thread's last one (the same queue
 * pairs and ports, the engine's first slots, records taken from the same
 * free lists), so the thread notes the objects it touches, and when its
 * next turn begins it asks for all of their lines before it reads any: the
 * fetches overlap (BENCHMARKS.md, "Working sets"). Noting costs more than
 * fetching (a hash look per touch: ~2,000 instructions of a ping-pong's
 * turn of ~14,000), and turns touch much the same objects, so one turn in
 * FS_WORKING_SET_REFRESH notes and the turns after it fetch what it noted.
 *
 * Notes are hints. An object noted by mistake costs prefetches that fetch
 * nothing useful (a prefetch never faults); one not noted is fetched when
 * it is touched, as without a working set. A thread reads and writes only
 * its own set, and fs_touch notes only between fs_working_set_resume and
 * fs_working_set_pause (a shared model's holds): anywhere else it costs a
 * load and a branch.
 */
#ifndef FABSIM_ARENA_WORKING_SET_H
#define FABSIM_ARENA_WORKING_SET_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FS_LINE 64
/* Objects a set holds at most (a turn of fi_pingpong's notes ~60); the
 * objects beyond are fetched as they are touched. */
#define FS_WORKING_SET_OBJECTS 192
/* Lines of one object fetched at most: a note keeps its number of lines,
 * less one, in the low 6 bits of its first line's address. */
#define FS_WORKING_SET_SPAN 64
/* A direct-mapped table of the objects in the set, so that an object
 * touched again is not noted again (only widened, if touched more widely):
 * its first line, with the noting turn's tag in the low bits, and where it
 * is in `objects`. Two objects that share a slot may each be noted twice. */
#define FS_WORKING_SET_SEEN 512
#define FS_WORKING_SET_TAGS 64 /* tags 1..63 */
#define FS_WORKING_SET_UNKEPT UINT8_MAX /* seen, but past FS_WORKING_SET_OBJECTS */

/* One turn in this many notes the set anew; the turns after it fetch what
 * it noted. Odd, so that a thread whose turns alternate between two kinds
 * does not always note in the same kind. A set noted in a turn unlike the
 * others serves as long: what it lacks is fetched when touched. */
#define FS_WORKING_SET_REFRESH 17

typedef struct fs_working_set {
	uintptr_t owner; /* fs_self_thread() of the thread whose set it is */
	uint32_t count;  /* objects in the set */
	uint32_t tag;    /* the noting turn's */
	uint32_t served; /* turns that fetched it since it was noted */
	bool noting_turn; /* this turn notes the set anew */
	/* An object's first line, with its number of lines less one. */
	uintptr_t objects[FS_WORKING_SET_OBJECTS];
	uintptr_t seen[FS_WORKING_SET_SEEN];
	uint8_t seen_at[FS_WORKING_SET_SEEN];
} fs_working_set;

/* The set being noted into, by its owner (the thread that holds a shared
 * model's lock), or NULL. Process-wide rather than a thread-local pointer:
 * a library that a program loads with dlopen (Open MPI's transports) may
 * find no static TLS left for initial-exec variables, and any other
 * thread-local costs a call per note. Another thread that runs model code
 * meanwhile (a world of its own) finds a set that is not its own and notes
 * nothing. */
extern fs_working_set *fs_working_set_current;

/* The calling thread's pointer (its TCB), read without a call. */
static inline uintptr_t fs_self_thread(void)
{
	uintptr_t tp;
#if defined(__x86_64__)
	__asm__("mov %%fs:0, %0" : "=r"(tp));
#elif defined(__aarch64__)
	__asm__("mrs %0, tpidr_el0" : "=r"(tp));
#else
	tp = (uintptr_t)pthread_self();
#endif
	return tp;
}

/* The calling thread's set, made empty on its first call (NULL: no memory
 * for it; the thread then notes nothing). */
fs_working_set *fs_working_set_mine(void);

/* Begins a turn of the calling thread: asks for every line of the objects
 * in its set. When the set is empty, or has served FS_WORKING_SET_REFRESH
 * turns, empties it and returns true: this turn notes it anew
 * (ws->noting_turn; the caller resumes noting). Otherwise returns false and
 * the set stays as it is: the caller notes nothing this turn. */
__attribute__((warn_unused_result)) bool fs_working_set_begin_turn(fs_working_set *ws);

/* Notes into `ws`, the calling thread's own set, from now on. One set is
 * noted into at a time in a process: the last resumed. */
static inline void fs_working_set_resume(fs_working_set *ws)
{
	__atomic_store_n(&fs_working_set_current, ws, __ATOMIC_RELEASE);
}

/* The set the calling thread notes into, or NULL. */
static inline fs_working_set *fs_working_set_noting(void)
{
	fs_working_set *ws = __atomic_load_n(&fs_working_set_current, __ATOMIC_ACQUIRE);

	if (__builtin_expect(ws == NULL, 1) || ws->owner != fs_self_thread())
		return NULL;
	return ws;
}

/* The calling thread stops noting (another thread's set, resumed before
 * this looks, stays). A plain store, not a compare-and-swap: a locked
 * instruction waits for every store of the turn that missed the cache
 * (~4% of a ping-pong's time, BENCHMARKS.md), and the pause comes at every
 * release. A set resumed by another thread between the look and the store
 * only loses that turn's notes: they are hints. */
static inline void fs_working_set_pause(void)
{
	if (fs_working_set_noting())
		__atomic_store_n(&fs_working_set_current, NULL, __ATOMIC_RELAXED);
}

/* Notes the object at [p, p + len) (len 0 counts as 1), once a turn: an
 * object is known by its first line. */
static inline void fs_touch_span(const void *p, size_t len)
{
	fs_working_set *ws = fs_working_set_noting();

	if (!ws)
		return;
	uintptr_t first = (uintptr_t)p & ~(uintptr_t)(FS_LINE - 1);
	size_t slot = first / FS_LINE % FS_WORKING_SET_SEEN;
	size_t lines = ((uintptr_t)p + (len ? len : 1) - 1 - first) / FS_LINE + 1;
	uintptr_t kept = first | (lines < FS_WORKING_SET_SPAN ? lines - 1 : FS_WORKING_SET_SPAN - 1);

	if (ws->seen[slot] == (first | ws->tag)) {
		uint8_t at = ws->seen_at[slot];

		if (at != FS_WORKING_SET_UNKEPT && ws->objects[at] < kept)
			ws->objects[at] = kept;
		return;
	}
	ws->seen[slot] = first | ws->tag;
	if (ws->count < FS_WORKING_SET_OBJECTS) {
		ws->seen_at[slot] = (uint8_t)ws->count;
		ws->objects[ws->count++] = kept;
	} else {
		ws->seen_at[slot] = FS_WORKING_SET_UNKEPT;
	}
}

/* Notes the line that holds `p`. */
static inline void fs_touch(const void *p)
{
	fs_touch_span(p, 1);
}

#ifdef __cplusplus
}
#endif

#endif
