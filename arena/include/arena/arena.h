/* SPDX-License-Identifier: BSD-2-Clause
 * Memory that several processes map at one address.
 *
 * The simulated fabric shared by several processes (providers/sim/
 * MULTIPROCESS.md) keeps its pointer-linked state — the network model, the
 * NICs — in one segment that every attached process maps at the same
 * virtual address, so a pointer stored by one process is valid in all.
 * An arena is that segment plus an allocator inside it.
 *
 * The handle is the mapped base itself: an fs_arena pointer has the same
 * value in every process and may be stored in shared structures.
 *
 * A NULL arena means "ordinary process memory": fs_mem_* then call
 * malloc/calloc/realloc/free, so code written against fs_mem_* runs
 * unchanged in a single process.
 */
#ifndef FABSIM_ARENA_H
#define FABSIM_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fs_arena fs_arena;

/* Creates the named segment (shm_open name, e.g. "/fabsim-1000-demo"),
 * reserves capacity bytes of address space for it (pages are touched only
 * when used) and maps it at an address chosen so that other processes can
 * map it there too. Fails with -EEXIST if the name exists. On error, a
 * message naming the problem is written to err (errlen bytes).
 *
 * The address: a 1 GiB-aligned slot in [0x200000000000, 0x500000000000)
 * derived from a hash of the name (the same name gives the same address),
 * or the next of 8 candidates if that range is taken here (-EADDRINUSE when
 * all are). capacity is rounded up to the page size and must be at most
 * 1 TiB (-EINVAL otherwise). Pages are reserved as the allocator reaches
 * them, so a full /dev/shm makes allocations return NULL, not SIGBUS. */
int fs_arena_create(const char *name, size_t capacity, fs_arena **out,
		    char *err, size_t errlen);

/* Maps an existing segment at the address its creator chose. -ENOENT if
 * there is none; -EADDRINUSE (with a message saying which range) if that
 * range is taken in this process; -EPROTO if it is not an arena. Attach once
 * per process: the arena's own mapping also takes the range, and a fork()ed
 * child already has the mapping. A segment whose header is not written yet
 * (its creator is still creating it) is waited for, up to a second. */
int fs_arena_attach(const char *name, fs_arena **out, char *err,
		    size_t errlen);

/* An arena in this process's private memory (for tests and single-process
 * use of arena-aware code). NULL if the memory cannot be reserved. */
fs_arena *fs_arena_private(size_t capacity);

/* Unmaps, in this process only (the segment lives on until unlinked and
 * unmapped everywhere). NULL is a no-op. */
void fs_arena_detach(fs_arena *arena);
/* Removes the name; 0 or -errno. */
int fs_arena_unlink(const char *name);

/* Allocation inside the arena, 16-byte aligned, safe from several threads
 * and processes at once. NULL when the arena is full or broken. The
 * allocator has its own lock: allocating while holding fs_arena_lock is
 * fine. realloc keeps the block when it can (shrinking, or growing into a
 * free neighbour); realloc(ptr, 0) frees and returns NULL as glibc's does;
 * on failure the old block is unchanged. free(NULL) is a no-op. Freeing (or
 * reallocating) anything but a live block of this arena — a double free, a
 * pointer from elsewhere — prints a message naming the pointer and aborts:
 * going on would corrupt state other processes share. In a broken arena,
 * free does nothing. */
void *fs_arena_alloc(fs_arena *arena, size_t size);
void *fs_arena_calloc(fs_arena *arena, size_t count, size_t size);
void *fs_arena_realloc(fs_arena *arena, void *ptr, size_t size);
void fs_arena_free(fs_arena *arena, void *ptr);
bool fs_arena_contains(const fs_arena *arena, const void *ptr);

/* Bytes handed out and not freed (the sum of the sizes asked for); bytes of
 * the segment in use by the allocator, from the base to the highest block
 * (header and per-block overhead included; the size of a fresh arena once
 * everything is freed). */
size_t fs_arena_used(const fs_arena *arena);
size_t fs_arena_footprint(const fs_arena *arena);

/* A short text the creator may leave in the segment's header for those who
 * find the segment later without attaching it (where it came from: a
 * cleaner can tell a crashed run's memory by it). At most
 * FS_ARENA_LABEL_MAX - 1 bytes: -ENAMETOOLONG otherwise, -EINVAL for NULL
 * or a private arena, -EBUSY once a label is set. fs_arena_label copies the
 * label of the segment `name` into buf (len bytes, NUL-terminated) and
 * returns its length: 0 when it has none (not yet), -ENOENT when there is
 * no such segment, -EPROTO when it is not an arena of this version,
 * -ENAMETOOLONG when buf is too small, or another -errno. */
#define FS_ARENA_LABEL_MAX 1024
int fs_arena_set_label(fs_arena *arena, const char *label);
int fs_arena_label(const char *name, char *buf, size_t len);

/* One pointer the creator publishes for those who attach (the root of the
 * shared state). */
void *fs_arena_root(const fs_arena *arena);
void fs_arena_set_root(fs_arena *arena, void *root);

/* The arena's process-shared, robust lock for the caller's own shared
 * state. Returns 0; -EOWNERDEAD once if its holder died holding it (the
 * caller now holds it and must unlock it; the arena is marked broken);
 * -EIO when the arena is broken (also when it broke because a process died
 * inside the allocator) or became broken while we waited; -EINVAL for a
 * NULL arena. Not recursive. */
int fs_arena_lock(fs_arena *arena);
void fs_arena_unlock(fs_arena *arena);
bool fs_arena_broken(const fs_arena *arena);

/* Allocation that follows the arena when there is one, the C library when
 * arena is NULL. */
static inline void *fs_mem_alloc(fs_arena *arena, size_t size);
static inline void *fs_mem_calloc(fs_arena *arena, size_t count, size_t size);
static inline void *fs_mem_realloc(fs_arena *arena, void *ptr, size_t size);
static inline void fs_mem_free(fs_arena *arena, void *ptr);
/* Zeroed memory for an object that begins a cache line (FS_MEM_LINE
 * bytes): state that processes write in turn, whose fields every turn
 * writes are laid out to share one line. Blocks are only 16-byte aligned:
 * the object sits inside a larger one, which fs_mem_free_line finds from
 * the word before it. NULL when there is no memory. */
#define FS_MEM_LINE 64
static inline void *fs_mem_calloc_line(fs_arena *arena, size_t size);
static inline void fs_mem_free_line(fs_arena *arena, void *obj);

#ifdef __cplusplus
}
#endif

#include <stdlib.h>

static inline void *fs_mem_alloc(fs_arena *arena, size_t size)
{
	return arena ? fs_arena_alloc(arena, size) : malloc(size);
}

static inline void *fs_mem_calloc(fs_arena *arena, size_t count, size_t size)
{
	return arena ? fs_arena_calloc(arena, count, size) : calloc(count, size);
}

static inline void *fs_mem_realloc(fs_arena *arena, void *ptr, size_t size)
{
	return arena ? fs_arena_realloc(arena, ptr, size) : realloc(ptr, size);
}

static inline void fs_mem_free(fs_arena *arena, void *ptr)
{
	if (arena)
		fs_arena_free(arena, ptr);
	else
		free(ptr);
}

static inline void *fs_mem_calloc_line(fs_arena *arena, size_t size)
{
	char *block;
	uintptr_t obj;

	if (size > SIZE_MAX - FS_MEM_LINE)
		return NULL;
	block = (char *)fs_mem_calloc(arena, 1, size + FS_MEM_LINE);
	if (!block)
		return NULL;
	/* At least a word past the block's start (it is 16-byte aligned,
	 * so at most FS_MEM_LINE past it): room for its address. */
	obj = ((uintptr_t)block + sizeof(void *) + FS_MEM_LINE - 1) &
	      ~(uintptr_t)(FS_MEM_LINE - 1);
	((void **)obj)[-1] = block;
	return (void *)obj;
}

static inline void fs_mem_free_line(fs_arena *arena, void *obj)
{
	if (obj)
		fs_mem_free(arena, ((void **)obj)[-1]);
}

#endif
