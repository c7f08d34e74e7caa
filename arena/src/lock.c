/* SPDX-License-Identifier: BSD-2-Clause
 * The arena's robust, process-shared locks and the broken flag.
 *
 * A process that dies holding one of the arena's mutexes may have left the state it guarded
 * half-changed. The next locker gets EOWNERDEAD from the C library; we make the mutex usable
 * again (pthread_mutex_consistent) but mark the whole arena broken: from then on every lock
 * returns -EIO and every allocation NULL, in every process, instead of running on corrupt
 * state.
 */
#include <errno.h>
#include <pthread.h>

#include "arena_internal.h"

int arena_mutex_init(pthread_mutex_t *m, bool shared)
{
	pthread_mutexattr_t attr;
	int rc = pthread_mutexattr_init(&attr);

	if (rc)
		return -rc;
	rc = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	if (!rc)
		rc = pthread_mutexattr_setpshared(&attr, shared ? PTHREAD_PROCESS_SHARED
								: PTHREAD_PROCESS_PRIVATE);
	if (!rc)
		rc = pthread_mutex_init(m, &attr);
	pthread_mutexattr_destroy(&attr);
	return -rc;
}

void arena_mark_broken(fs_arena *a)
{
	__atomic_store_n(&a->broken, 1, __ATOMIC_RELEASE);
}

int arena_mutex_lock(fs_arena *a, pthread_mutex_t *m)
{
	int rc = pthread_mutex_lock(m);

	if (rc == 0) {
		/* Broken while we waited (another process got EOWNERDEAD on the other lock). */
		if (arena_is_broken(a)) {
			pthread_mutex_unlock(m);
			return -EIO;
		}
		return 0;
	}
	if (rc == EOWNERDEAD) {
		arena_mark_broken(a);
		pthread_mutex_consistent(m);
		return -EOWNERDEAD;
	}
	/* ENOTRECOVERABLE, or a mutex that is not one. */
	arena_mark_broken(a);
	return -EIO;
}

int fs_arena_lock(fs_arena *arena)
{
	if (!arena)
		return -EINVAL;
	if (arena_is_broken(arena))
		return -EIO;
	return arena_mutex_lock(arena, &arena->user_lock);
}

void fs_arena_unlock(fs_arena *arena)
{
	if (arena)
		pthread_mutex_unlock(&arena->user_lock);
}

bool fs_arena_broken(const fs_arena *arena)
{
	return arena && arena_is_broken(arena);
}
