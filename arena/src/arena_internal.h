/* SPDX-License-Identifier: BSD-2-Clause
 * The arena's header (at offset 0 of the segment) and what the files of src/ share.
 * Not a public header.
 *
 * Segment layout:
 *
 *   [0, ARENA_HEAP_START)        struct fs_arena (this header)
 *   [ARENA_HEAP_START, top)      chunks, allocated or free, back to back
 *   [top, capacity)              the unused tail; allocation bumps `top`
 *   [0, committed)               pages already reserved (see arena_commit)
 *
 * Every pointer stored in the header or in chunks is an absolute address: the
 * segment is mapped at the same address in every process.
 */
#ifndef FS_ARENA_INTERNAL_H
#define FS_ARENA_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena/arena.h"

#define ARENA_MAGIC 0x31414e4552415346ULL /* "FSARENA1" little-endian */
#define ARENA_VERSION 2u

/* Shared segments live in [ARENA_REGION_LO, ARENA_REGION_HI), aligned to ARENA_SLOT. On
 * x86-64 glibc and the kernel place the program, heap, mmap area and stack far from here
 * (near 0x55.. and 0x7f..), and AddressSanitizer's shadow ends below 0x100080000000 and its
 * heap starts at 0x600000000000. */
#if defined(__SANITIZE_THREAD__)
/* ThreadSanitizer keeps that range for its shadow and forbids mappings there; its
 * application memory on x86-64 starts with the low 512 GiB, above the program. */
#define ARENA_REGION_LO 0x001000000000ULL
#define ARENA_REGION_HI 0x007000000000ULL
#else
#define ARENA_REGION_LO 0x200000000000ULL
#define ARENA_REGION_HI 0x500000000000ULL
#endif
#define ARENA_SLOT (1ULL << 30)
#define ARENA_ADDRESS_TRIES 8
#define ARENA_MAX_CAPACITY (1ULL << 40)

/* Chunks: 16-byte header (size | flags, requested bytes), payload 16-byte aligned. */
#define CHUNK_HDR 16u
#define CHUNK_MIN 32u
#define CHUNK_ALIGN 16u
#define CHUNK_INUSE 1u
#define CHUNK_PREV_INUSE 2u
#define CHUNK_FLAGS 15u

/* Bins: exact sizes every 16 bytes below SMALL_LIMIT, then four bins per power of two. */
#define SMALL_LIMIT 1024u
#define NBINS 256u
#define BIN_WORDS (NBINS / 64u)

/* Pages are reserved (MADV_POPULATE_WRITE) this many bytes ahead of `top`. */
#define COMMIT_STEP (1ULL << 20)

typedef struct arena_chunk {
	uint64_t head; /* size | CHUNK_INUSE | CHUNK_PREV_INUSE */
	union {
		uint64_t req;             /* in use: bytes the caller asked for */
		struct arena_chunk *next; /* free: the bin's doubly linked list */
	};
	struct arena_chunk *prev; /* free only (in use, the payload starts here) */
	/* A free chunk repeats its size in its last 8 bytes (the footer), read by the chunk
	 * after it to coalesce backwards. In a 32-byte free chunk the footer is at offset 24,
	 * clear of head, next and prev. */
} arena_chunk;

struct fs_arena {
	uint64_t magic; /* written last, with release order, by the creator */
	uint32_t version;
	uint32_t header_size; /* sizeof(struct fs_arena), a layout check */
	uint64_t base;        /* the address every process maps the segment at */
	uint64_t capacity;    /* bytes, the size of the shm object */
	uint32_t shared;      /* 1: shm segment; 0: fs_arena_private */
	int broken;           /* __atomic; set when a lock holder died */
	uint64_t root;        /* __atomic; fs_arena_root */
	/* fs_arena_set_label: the text, then its length (release order;
	 * 0: none yet), read by fs_arena_label without mapping the segment. */
	uint32_t label_len; /* before the text: a reader's copy gets it first */
	char label[FS_ARENA_LABEL_MAX];

	pthread_mutex_t alloc_lock; /* guards everything below */
	pthread_mutex_t user_lock;  /* fs_arena_lock; independent of the allocator's */

	uint64_t top;       /* offset of the unused tail */
	uint64_t committed; /* offset up to which pages are reserved */
	uint64_t used;      /* sum of `req` over live chunks; __atomic reads */
	uint64_t footprint; /* == top, kept for lock-free reads */
	int populate_off;   /* the kernel has no MADV_POPULATE_WRITE */
	uint64_t bitmap[BIN_WORDS];
	arena_chunk *bins[NBINS];
};

#define ARENA_HEAP_START ((sizeof(struct fs_arena) + 63u) & ~(size_t)63u)

/* alloc.c: sets up the allocator state of a freshly mapped, zeroed header. */
void arena_alloc_init(fs_arena *a);

/* lock.c */
int arena_mutex_init(pthread_mutex_t *m, bool shared);
/* Locks a robust mutex of the arena: 0; -EOWNERDEAD (held, arena marked broken); -EIO. */
int arena_mutex_lock(fs_arena *a, pthread_mutex_t *m);
void arena_mark_broken(fs_arena *a);

static inline bool arena_is_broken(const fs_arena *a)
{
	return __atomic_load_n(&a->broken, __ATOMIC_ACQUIRE) != 0;
}

#endif
