/* SPDX-License-Identifier: BSD-2-Clause
 * Free objects kept per partition, balanced through a shared depot.
 *
 * A simulation split into partitions (netmodel's nm_parallel) runs each
 * partition in its own thread or process. What one allocates another often
 * frees: a packet is built by its sender and freed where it arrives. A free
 * list per partition then fills where traffic ends and stays empty where it
 * starts, and a one-way stream grows its sender's memory without bound. A
 * single shared list would be correct but would pass its cache line between
 * the partitions at every allocation.
 *
 * So, as magazines in Bonwick and Adams's allocator: each partition keeps a
 * cache of free objects (fs_cache: a list being filled or emptied, and one
 * full batch held back), and whole batches of FS_CACHE_BATCH objects go to
 * and come from a depot the partitions share, under a lock taken once per
 * batch. Objects are linked through a pointer field of their own (`link`:
 * its offset in the object). A batch is an opaque 64-bit handle (its first
 * object) and a count: index-linked objects (netmodel's packet slots) can
 * use the depot with a cache of their own.
 *
 * The depot's lock is a robust process-shared mutex: a holder that dies
 * leaves the depot consistent (a batch being pushed is lost, nothing else).
 * Neither a cache nor a depot is safe for two threads at once except
 * through the depot's own calls.
 */
#ifndef FABSIM_ARENA_DEPOT_H
#define FABSIM_ARENA_DEPOT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena/arena.h"
#include "arena/working_set.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fs_depot_batch {
	uint64_t head;
	uint32_t count;
} fs_depot_batch;

typedef struct fs_depot {
	pthread_mutex_t lock;
	fs_arena *arena; /* where its array lives (NULL: malloc) */
	fs_depot_batch *batches;
	uint32_t count, cap;
} fs_depot;

/* 0 or -errno (the mutex). The depot may live in an arena several processes map. */
int fs_depot_init(fs_depot *depot, fs_arena *arena);
/* Frees the array (not the objects: take the batches first). */
void fs_depot_fini(fs_depot *depot);
/* Leaves a batch: 0, or -ENOMEM (the caller keeps it). */
int fs_depot_put(fs_depot *depot, fs_depot_batch batch);
/* Takes the batch left last: false when there is none. */
bool fs_depot_take(fs_depot *depot, fs_depot_batch *out);

/* Objects a cache passes to the depot at a time. */
#define FS_CACHE_BATCH 64u

typedef struct fs_cache {
	void *loaded;          /* what gets and puts use */
	uint32_t loaded_count;
	void *spare;           /* a full batch held back, or NULL */
	uint32_t spare_count;
} fs_cache;

static inline void **fs_cache_link(void *obj, size_t link)
{
	return (void **)((char *)obj + link);
}

/* The slow paths: refills `loaded` from the spare or the depot (false: both empty), and makes
 * room in it (the spare goes to the depot, `loaded` becomes the spare). */
bool fs_cache_refill(fs_cache *cache, fs_depot *depot);
void fs_cache_spill(fs_cache *cache, fs_depot *depot);

/* A free object, or NULL: none here or in the depot (allocate one). A NULL depot: the cache
 * is all there is, and grows as it must (one partition). */
static inline void *fs_cache_get(fs_cache *cache, fs_depot *depot, size_t link)
{
	if (!cache->loaded && !fs_cache_refill(cache, depot))
		return NULL;
	void *obj = cache->loaded;
	fs_touch((char *)obj + link);
	cache->loaded = *fs_cache_link(obj, link);
	cache->loaded_count--;
	return obj;
}

static inline void fs_cache_put(fs_cache *cache, fs_depot *depot, size_t link, void *obj)
{
	if (depot && cache->loaded_count >= FS_CACHE_BATCH)
		fs_cache_spill(cache, depot);
	*fs_cache_link(obj, link) = cache->loaded;
	cache->loaded = obj;
	cache->loaded_count++;
}

/* Objects cached, and each of them to fn (teardown: fn frees them; the cache is emptied). */
uint64_t fs_cache_count(const fs_cache *cache);
void fs_cache_drain(fs_cache *cache, size_t link, void (*fn)(void *ctx, void *obj), void *ctx);
/* Every batch of a depot of pointer-linked objects, emptied the same way. */
void fs_depot_drain(fs_depot *depot, size_t link, void (*fn)(void *ctx, void *obj), void *ctx);

#ifdef __cplusplus
}
#endif

#endif
