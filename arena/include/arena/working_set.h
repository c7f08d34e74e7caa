/* SPDX-License-Identifier: BSD-2-Clause
 * A thread's working set in shared memory: the objects its last turn
 * touched, fetched all at once when its next turn begins.
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
 * fetches overlap (BENCHMARKS.md, "Working sets").
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
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FS_LINE 64
/* Objects a turn notes at most (a turn of fi_pingpong's notes ~60); the
 * objects beyond are fetched as they are touched. */
#define FS_WORKING_SET_OBJECTS 192
/* Lines of one object fetched at most: a note keeps its count below the
 * address of its first line. */
#define FS_WORKING_SET_SPAN 64
/* A direct-mapped table of the objects noted this turn, so that an object
 * touched again is not noted again: its first line, with the turn's tag in
 * the bits below. Two objects that share a slot may each be noted twice. */
#define FS_WORKING_SET_SEEN 512
#define FS_WORKING_SET_TAGS 64 /* tags 1..63 */

typedef struct fs_working_set {
	uint32_t count; /* objects noted this turn */
	uint32_t tag;   /* this turn's */
	/* An object's first line, with its number of lines less one. */
	uintptr_t objects[FS_WORKING_SET_OBJECTS];
	uintptr_t seen[FS_WORKING_SET_SEEN];
} fs_working_set;

/* Who notes, and into which set: the thread that holds a shared model's
 * lock. A process-wide pair rather than a thread-local pointer: a library
 * that a program loads with dlopen (Open MPI's transports) may find no
 * static TLS left for initial-exec variables, and any other thread-local
 * costs a call per note. Another thread that runs model code meanwhile (a
 * world of its own) reads a thread that is not its own and notes nothing. */
struct fs_noting {
	fs_working_set *ws; /* NULL: nobody notes */
	uintptr_t thread;   /* fs_self_thread() of the one that does */
};
extern struct fs_noting fs_noting;

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

/* Begins a turn: asks for every line of the objects the last turn noted,
 * then forgets them. */
void fs_working_set_fetch(fs_working_set *ws);

/* The calling thread notes into `ws` from now on, until
 * fs_working_set_pause. Only one thread of a process notes at a time (the
 * holder of the model's lock). */
static inline void fs_working_set_resume(fs_working_set *ws)
{
	__atomic_store_n(&fs_noting.thread, fs_self_thread(), __ATOMIC_RELAXED);
	__atomic_store_n(&fs_noting.ws, ws, __ATOMIC_RELEASE);
}

static inline void fs_working_set_pause(void)
{
	__atomic_store_n(&fs_noting.ws, NULL, __ATOMIC_RELAXED);
}

/* The set the calling thread notes into, or NULL. */
static inline fs_working_set *fs_working_set_noting(void)
{
	fs_working_set *ws = __atomic_load_n(&fs_noting.ws, __ATOMIC_ACQUIRE);

	if (__builtin_expect(ws == NULL, 1) ||
	    __atomic_load_n(&fs_noting.thread, __ATOMIC_RELAXED) != fs_self_thread())
		return NULL;
	return ws;
}

/* Notes the object at [p, p + len) (len 0 counts as 1), once a turn: an
 * object is known by its first line. */
static inline void fs_touch_span(const void *p, size_t len)
{
	fs_working_set *ws = fs_working_set_noting();

	if (!ws)
		return;
	uintptr_t first = (uintptr_t)p & ~(uintptr_t)(FS_LINE - 1);
	uintptr_t *seen = &ws->seen[first / FS_LINE % FS_WORKING_SET_SEEN];

	if (*seen == (first | ws->tag))
		return;
	*seen = first | ws->tag;
	if (ws->count < FS_WORKING_SET_OBJECTS) {
		size_t lines = ((uintptr_t)p + (len ? len : 1) - 1 - first) / FS_LINE + 1;

		ws->objects[ws->count++] =
			first | (lines < FS_WORKING_SET_SPAN ? lines - 1 : FS_WORKING_SET_SPAN - 1);
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
