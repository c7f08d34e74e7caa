/* SPDX-License-Identifier: BSD-2-Clause
 * The depot of free batches and the caches' slow paths (include/arena/depot.h).
 */
#include <errno.h>

#include "arena/depot.h"
#include "arena_internal.h"

int fs_depot_init(fs_depot *depot, fs_arena *arena)
{
	*depot = (fs_depot){.arena = arena};
	/* Shared even without an arena: partitions may be threads. */
	return arena_mutex_init(&depot->lock, true);
}

void fs_depot_fini(fs_depot *depot)
{
	pthread_mutex_destroy(&depot->lock);
	fs_mem_free(depot->arena, depot->batches);
	depot->batches = NULL;
	depot->count = depot->cap = 0;
}

/* A holder that died left the depot consistent: a batch is stored before the count that
 * makes it visible, and taken by lowering the count (a holder that dies in between loses that
 * one batch, nothing else). */
static void depot_lock(fs_depot *depot)
{
	if (pthread_mutex_lock(&depot->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&depot->lock);
}

int fs_depot_put(fs_depot *depot, fs_depot_batch batch)
{
	int rc = 0;

	depot_lock(depot);
	if (depot->count == depot->cap) {
		uint32_t cap = depot->cap ? 2 * depot->cap : 16;
		fs_depot_batch *grown =
			cap > depot->cap ? fs_mem_realloc(depot->arena, depot->batches,
							  (size_t)cap * sizeof(*grown)) :
					   NULL; /* 2^32 batches: out of room */
		if (grown) {
			depot->batches = grown;
			depot->cap = cap;
		} else {
			rc = -ENOMEM;
		}
	}
	if (!rc) {
		depot->batches[depot->count] = batch;
		__atomic_store_n(&depot->count, depot->count + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&depot->lock);
	return rc;
}

bool fs_depot_take(fs_depot *depot, fs_depot_batch *out)
{
	/* Most refills of a partition that frees as much as it takes find nothing: no lock then. */
	if (!__atomic_load_n(&depot->count, __ATOMIC_ACQUIRE))
		return false;
	bool found = false;
	depot_lock(depot);
	if (depot->count) {
		*out = depot->batches[depot->count - 1];
		__atomic_store_n(&depot->count, depot->count - 1, __ATOMIC_RELEASE);
		found = true;
	}
	pthread_mutex_unlock(&depot->lock);
	return found;
}

bool fs_cache_refill(fs_cache *cache, fs_depot *depot)
{
	if (cache->spare) {
		cache->loaded = cache->spare;
		cache->loaded_count = cache->spare_count;
		cache->spare = NULL;
		cache->spare_count = 0;
		return true;
	}
	fs_depot_batch batch;
	if (!depot || !fs_depot_take(depot, &batch))
		return false;
	cache->loaded = (void *)(uintptr_t)batch.head;
	cache->loaded_count = batch.count;
	return true;
}

void fs_cache_spill(fs_cache *cache, fs_depot *depot)
{
	if (cache->spare &&
	    fs_depot_put(depot, (fs_depot_batch){(uintptr_t)cache->spare, cache->spare_count}) == 0) {
		cache->spare = NULL;
		cache->spare_count = 0;
	}
	/* With the depot out of memory, `loaded` grows instead: nothing is lost. */
	if (!cache->spare) {
		cache->spare = cache->loaded;
		cache->spare_count = cache->loaded_count;
		cache->loaded = NULL;
		cache->loaded_count = 0;
	}
}

uint64_t fs_cache_count(const fs_cache *cache)
{
	return (uint64_t)cache->loaded_count + cache->spare_count;
}

static void drain_list(void *obj, size_t link, void (*fn)(void *ctx, void *obj), void *ctx)
{
	while (obj) {
		void *next = *fs_cache_link(obj, link);
		fn(ctx, obj);
		obj = next;
	}
}

void fs_cache_drain(fs_cache *cache, size_t link, void (*fn)(void *ctx, void *obj), void *ctx)
{
	drain_list(cache->loaded, link, fn, ctx);
	drain_list(cache->spare, link, fn, ctx);
	*cache = (fs_cache){0};
}

void fs_depot_drain(fs_depot *depot, size_t link, void (*fn)(void *ctx, void *obj), void *ctx)
{
	fs_depot_batch batch;

	while (fs_depot_take(depot, &batch))
		drain_list((void *)(uintptr_t)batch.head, link, fn, ctx);
}
