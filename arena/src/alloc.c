/* SPDX-License-Identifier: BSD-2-Clause
 * The allocator inside an arena.
 *
 * Chunks sit back to back from ARENA_HEAP_START to `top`, each with a 16-byte header
 * (size | INUSE | PREV_INUSE, then the requested size); free chunks repeat their size in
 * their last 8 bytes so that the chunk after them can find their start. Freeing coalesces
 * with free neighbours at once, and a free chunk that reaches `top` gives its bytes back to
 * the unused tail, so after everything is freed the footprint is the header alone.
 *
 * Free chunks are kept in bins: one per exact size every 16 bytes below 1 KiB (a pop is
 * O(1) with no search), then four bins per power of two. A bitmap of non-empty bins finds
 * the smallest bin that can serve a request; a larger chunk is split and its remainder
 * binned. Lists are LIFO and there is no per-thread cache, so the same sequence of calls on
 * a fresh arena gives the same offsets.
 *
 * Everything runs under the arena's alloc_lock (robust, process-shared). Invalid frees
 * (a pointer outside the arena, not at a chunk, or already free) print a message naming
 * the pointer and abort(): continuing would corrupt state other processes share.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "arena_internal.h"

#define BIN_SEARCH_LIMIT 8 /* chunks looked at in a range bin before going up a bin */

static inline uint64_t chunk_size(const arena_chunk *c)
{
	return c->head & ~(uint64_t)CHUNK_FLAGS;
}

static inline arena_chunk *chunk_at(const void *p, uint64_t off)
{
	return (arena_chunk *)((char *)p + off);
}

static inline void *chunk_payload(arena_chunk *c)
{
	return (char *)c + CHUNK_HDR;
}

static inline arena_chunk *payload_chunk(const void *p)
{
	return (arena_chunk *)((char *)p - CHUNK_HDR);
}

static inline void chunk_set_footer(arena_chunk *c, uint64_t size)
{
	*(uint64_t *)((char *)c + size - 8) = size;
}

static inline char *arena_top(fs_arena *a)
{
	return (char *)a + a->top;
}

/* Chunk size for a request of n bytes; 0 if it cannot exist. */
static inline uint64_t request_chunk(size_t n)
{
	uint64_t s;

	if (n > ARENA_MAX_CAPACITY)
		return 0;
	s = ((uint64_t)n + CHUNK_HDR + CHUNK_ALIGN - 1) & ~(uint64_t)(CHUNK_ALIGN - 1);
	return s < CHUNK_MIN ? CHUNK_MIN : s;
}

static inline unsigned bin_index(uint64_t size)
{
	unsigned p;

	if (size < SMALL_LIMIT)
		return (unsigned)(size / CHUNK_ALIGN) - 2u;
	p = 63u - (unsigned)__builtin_clzll(size);
	return 62u + (p - 10u) * 4u + (unsigned)((size >> (p - 2u)) & 3u);
}

static void bin_insert(fs_arena *a, arena_chunk *c, uint64_t size)
{
	unsigned i = bin_index(size);

	c->prev = NULL;
	c->next = a->bins[i];
	if (c->next)
		c->next->prev = c;
	a->bins[i] = c;
	a->bitmap[i / 64u] |= 1ULL << (i % 64u);
}

static void bin_remove(fs_arena *a, arena_chunk *c, uint64_t size)
{
	unsigned i = bin_index(size);

	if (c->prev)
		c->prev->next = c->next;
	else
		a->bins[i] = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (!a->bins[i])
		a->bitmap[i / 64u] &= ~(1ULL << (i % 64u));
}

/* First non-empty bin at or above i; NBINS if none. */
static unsigned bin_find(const fs_arena *a, unsigned i)
{
	unsigned w = i / 64u;
	uint64_t bits;

	if (i >= NBINS)
		return NBINS;
	bits = a->bitmap[w] & (~0ULL << (i % 64u));
	for (;;) {
		if (bits)
			return w * 64u + (unsigned)__builtin_ctzll(bits);
		if (++w == BIN_WORDS)
			return NBINS;
		bits = a->bitmap[w];
	}
}

/* Reserves the pages below offset `end`, so that running out of /dev/shm (or of memory)
 * makes an allocation fail instead of raising SIGBUS on first touch. */
static bool arena_commit(fs_arena *a, uint64_t end)
{
	uint64_t target;

	if (end <= a->committed)
		return true;
	target = (end + COMMIT_STEP - 1) & ~(COMMIT_STEP - 1);
	if (target > a->capacity)
		target = a->capacity;
	if (!a->populate_off &&
	    madvise((char *)a + a->committed, target - a->committed, MADV_POPULATE_WRITE) != 0) {
		if (errno != EINVAL)
			return false;
		a->populate_off = 1; /* kernel before 5.14: pages come on first touch */
	}
	a->committed = target;
	return true;
}

static inline void set_top(fs_arena *a, uint64_t top)
{
	a->top = top;
	__atomic_store_n(&a->footprint, top, __ATOMIC_RELAXED);
}

static inline void add_used(fs_arena *a, int64_t delta)
{
	__atomic_store_n(&a->used, a->used + (uint64_t)delta, __ATOMIC_RELAXED);
}

/* Marks the chunk after c (if any) as following an in-use or a free chunk. */
static inline void next_prev_inuse(fs_arena *a, arena_chunk *c, uint64_t size, bool inuse)
{
	arena_chunk *n = chunk_at(c, size);

	if ((char *)n == arena_top(a))
		return;
	if (inuse)
		n->head |= CHUNK_PREV_INUSE;
	else
		n->head &= ~(uint64_t)CHUNK_PREV_INUSE;
}

/* Makes the free chunk c (already out of its bin, of size csize) an in-use chunk of size s,
 * binning what is left over. */
static void chunk_take(fs_arena *a, arena_chunk *c, uint64_t csize, uint64_t s)
{
	uint64_t prev_flag = c->head & CHUNK_PREV_INUSE;

	if (csize - s >= CHUNK_MIN) {
		arena_chunk *r = chunk_at(c, s);
		uint64_t rsize = csize - s;

		r->head = rsize | CHUNK_PREV_INUSE;
		chunk_set_footer(r, rsize);
		bin_insert(a, r, rsize);
		/* The chunk after r already says "previous free". */
		c->head = s | CHUNK_INUSE | prev_flag;
	} else {
		c->head = csize | CHUNK_INUSE | prev_flag;
		next_prev_inuse(a, c, csize, true);
	}
}

/* Takes the free chunk c out of its bin to serve s bytes. */
static arena_chunk *bin_take(fs_arena *a, arena_chunk *c, uint64_t s)
{
	uint64_t csize = chunk_size(c);

	bin_remove(a, c, csize);
	chunk_take(a, c, csize, s);
	return c;
}

static arena_chunk *alloc_locked(fs_arena *a, uint64_t s)
{
	unsigned i = bin_index(s);
	arena_chunk *c = a->bins[i];

	if (s < SMALL_LIMIT) {
		if (c) { /* exact size: the fast path */
			bin_remove(a, c, s);
			c->head |= CHUNK_INUSE;
			next_prev_inuse(a, c, s, true);
			return c;
		}
	} else {
		for (int n = 0; c && n < BIN_SEARCH_LIMIT; c = c->next, n++) {
			if (chunk_size(c) >= s)
				return bin_take(a, c, s);
		}
	}
	i = bin_find(a, i + 1u);
	if (i < NBINS)
		return bin_take(a, a->bins[i], s);
	/* From the unused tail. The chunk before top is always in use. */
	if (a->capacity - a->top < s || !arena_commit(a, a->top + s))
		return NULL;
	c = chunk_at(a, a->top);
	c->head = s | CHUNK_INUSE | CHUNK_PREV_INUSE;
	set_top(a, a->top + s);
	return c;
}

/* Frees the in-use chunk c: coalesces with free neighbours, returns to top or to a bin. */
static void free_locked(fs_arena *a, arena_chunk *c)
{
	uint64_t size = chunk_size(c);
	arena_chunk *n;

	if (!(c->head & CHUNK_PREV_INUSE)) {
		uint64_t psize = *(uint64_t *)((char *)c - 8);
		arena_chunk *p = (arena_chunk *)((char *)c - psize);

		bin_remove(a, p, psize);
		c = p;
		size += psize;
	}
	n = chunk_at(c, size);
	if ((char *)n == arena_top(a)) {
		set_top(a, (uint64_t)((char *)c - (char *)a));
		return;
	}
	if (n->head & CHUNK_INUSE) {
		n->head &= ~(uint64_t)CHUNK_PREV_INUSE;
	} else {
		uint64_t nsize = chunk_size(n);

		bin_remove(a, n, nsize);
		size += nsize;
	}
	c->head = size | CHUNK_PREV_INUSE;
	chunk_set_footer(c, size);
	bin_insert(a, c, size);
}

void arena_alloc_init(fs_arena *a)
{
	memset(a->bitmap, 0, sizeof(a->bitmap));
	memset(a->bins, 0, sizeof(a->bins));
	a->used = 0;
	set_top(a, ARENA_HEAP_START);
	a->committed = 0;
	a->populate_off = 0;
}

/* Takes the allocator lock; false (arena broken) if it cannot. */
static inline bool lock_alloc(fs_arena *a)
{
	int rc;

	if (arena_is_broken(a))
		return false;
	rc = arena_mutex_lock(a, &a->alloc_lock);
	if (rc == 0)
		return true;
	if (rc == -EOWNERDEAD)
		pthread_mutex_unlock(&a->alloc_lock);
	return false;
}

static inline void unlock_alloc(fs_arena *a)
{
	pthread_mutex_unlock(&a->alloc_lock);
}

static void bad_pointer(const fs_arena *a, const void *ptr, const char *fn, const char *why)
{
	fprintf(stderr, "%s: %p %s (arena %p, %llu bytes); aborting\n", fn, ptr, why,
		(const void *)a, a ? (unsigned long long)a->capacity : 0ULL);
	fflush(stderr);
	abort();
}

/* The chunk of a live block, or abort() with a message. Called with the lock held; it is
 * released before aborting so that other processes carry on. */
static arena_chunk *live_chunk(fs_arena *a, void *ptr, const char *fn)
{
	uintptr_t p = (uintptr_t)ptr;
	uintptr_t lo = (uintptr_t)a + ARENA_HEAP_START + CHUNK_HDR;
	uintptr_t hi = (uintptr_t)a + a->top;
	arena_chunk *c;
	uint64_t size;
	const char *why = NULL;

	if (p < lo || p >= hi || (p & (CHUNK_ALIGN - 1))) {
		why = "is not a block of this arena";
	} else {
		c = payload_chunk(ptr);
		size = chunk_size(c);
		if (!(c->head & CHUNK_INUSE))
			why = "is already free (double free?) or not a block start";
		else if (size < CHUNK_MIN || size > hi - (uintptr_t)c || c->req > size - CHUNK_HDR)
			why = "has a damaged header (a write before the block?)";
		else
			return c;
	}
	unlock_alloc(a);
	bad_pointer(a, ptr, fn, why);
	return NULL;
}

void *fs_arena_alloc(fs_arena *arena, size_t size)
{
	uint64_t s = request_chunk(size);
	arena_chunk *c;

	if (!arena || !s || !lock_alloc(arena))
		return NULL;
	c = alloc_locked(arena, s);
	if (c) {
		c->req = size;
		add_used(arena, (int64_t)size);
	}
	unlock_alloc(arena);
	return c ? chunk_payload(c) : NULL;
}

void *fs_arena_calloc(fs_arena *arena, size_t count, size_t size)
{
	size_t total;
	void *p;

	if (__builtin_mul_overflow(count, size, &total))
		return NULL;
	p = fs_arena_alloc(arena, total);
	if (p)
		memset(p, 0, total);
	return p;
}

void fs_arena_free(fs_arena *arena, void *ptr)
{
	arena_chunk *c;

	if (!ptr)
		return;
	if (!arena)
		bad_pointer(arena, ptr, "fs_arena_free", "freed in a NULL arena");
	if (!fs_arena_contains(arena, ptr))
		bad_pointer(arena, ptr, "fs_arena_free", "is outside the arena");
	if (!lock_alloc(arena))
		return; /* broken: leave the state alone */
	c = live_chunk(arena, ptr, "fs_arena_free");
	add_used(arena, -(int64_t)c->req);
	free_locked(arena, c);
	unlock_alloc(arena);
}

/* Resizes c in place to s bytes if it can (shrinking, or growing into a free neighbour or
 * the unused tail). */
static bool resize_in_place(fs_arena *a, arena_chunk *c, uint64_t s)
{
	uint64_t csize = chunk_size(c);
	uint64_t prev_flag = c->head & CHUNK_PREV_INUSE;
	arena_chunk *n = chunk_at(c, csize);

	if (s <= csize) {
		if (csize - s >= CHUNK_MIN) {
			arena_chunk *r = chunk_at(c, s);

			c->head = s | CHUNK_INUSE | prev_flag;
			r->head = (csize - s) | CHUNK_INUSE | CHUNK_PREV_INUSE;
			free_locked(a, r);
		}
		return true;
	}
	if ((char *)n == arena_top(a)) {
		if (a->capacity - a->top < s - csize || !arena_commit(a, a->top + (s - csize)))
			return false;
		set_top(a, a->top + (s - csize));
		c->head = s | CHUNK_INUSE | prev_flag;
		return true;
	}
	if (!(n->head & CHUNK_INUSE) && csize + chunk_size(n) >= s) {
		uint64_t nsize = chunk_size(n);

		bin_remove(a, n, nsize);
		/* c + n is one free-looking span of csize + nsize after an in-use chunk. */
		c->head = (csize + nsize) | prev_flag;
		chunk_take(a, c, csize + nsize, s);
		return true;
	}
	return false;
}

void *fs_arena_realloc(fs_arena *arena, void *ptr, size_t size)
{
	uint64_t s;
	arena_chunk *c, *nc;

	if (!ptr)
		return fs_arena_alloc(arena, size);
	if (size == 0) { /* as glibc's realloc: free, NULL */
		fs_arena_free(arena, ptr);
		return NULL;
	}
	if (!arena)
		bad_pointer(arena, ptr, "fs_arena_realloc", "resized in a NULL arena");
	if (!fs_arena_contains(arena, ptr))
		bad_pointer(arena, ptr, "fs_arena_realloc", "is outside the arena");
	s = request_chunk(size);
	if (!s || !lock_alloc(arena))
		return NULL;
	c = live_chunk(arena, ptr, "fs_arena_realloc");
	if (resize_in_place(arena, c, s)) {
		add_used(arena, (int64_t)size - (int64_t)c->req);
		c->req = size;
		unlock_alloc(arena);
		return ptr;
	}
	nc = alloc_locked(arena, s);
	if (nc) {
		memcpy(chunk_payload(nc), ptr, c->req < size ? c->req : size);
		nc->req = size;
		add_used(arena, (int64_t)size - (int64_t)c->req);
		free_locked(arena, c);
	}
	unlock_alloc(arena);
	return nc ? chunk_payload(nc) : NULL;
}

size_t fs_arena_used(const fs_arena *arena)
{
	return arena ? (size_t)__atomic_load_n(&arena->used, __ATOMIC_RELAXED) : 0;
}

size_t fs_arena_footprint(const fs_arena *arena)
{
	return arena ? (size_t)__atomic_load_n(&arena->footprint, __ATOMIC_RELAXED) : 0;
}
