/* SPDX-License-Identifier: BSD-2-Clause
 * A thread's working set in shared memory (arena/working_set.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "arena/working_set.h"

_Static_assert(FS_WORKING_SET_OBJECTS < FS_WORKING_SET_UNKEPT, "an object's place fits a byte");

fs_working_set *fs_working_set_current;

/* Made on a thread's first turn, not kept in thread-local storage: every
 * thread of a program would carry its 6 KiB, fabric or not. */
static __thread fs_working_set *mine;
static pthread_key_t mine_key;
static pthread_once_t mine_once = PTHREAD_ONCE_INIT;

/* At the thread's end. Another key's destructor may still take a lock:
 * it then makes a new set, freed in a later round. */
static void forget_mine(void *ws)
{
	fs_working_set_pause();
	mine = NULL;
	free(ws);
}

/* A forked child has one thread: the set being noted into may be another
 * thread's of the parent, whose TCB a new thread of the child may reuse. */
static void child_notes_nothing(void)
{
	fs_working_set_current = NULL;
}

static void make_key(void)
{
	(void)pthread_key_create(&mine_key, forget_mine);
	(void)pthread_atfork(NULL, NULL, child_notes_nothing);
}

fs_working_set *fs_working_set_mine(void)
{
	if (mine)
		return mine;
	pthread_once(&mine_once, make_key);
	mine = calloc(1, sizeof(*mine));
	if (!mine)
		return NULL;
	mine->owner = fs_self_thread();
	mine->tag = 1;
	/* Freed when the thread ends (kept if the key could not be made:
	 * a few KiB per thread). */
	(void)pthread_setspecific(mine_key, mine);
	return mine;
}

bool fs_working_set_begin_turn(fs_working_set *ws)
{
	/* Read prefetches, not write ones: a line the other process only
	 * reads stays in its cache as well, instead of being taken from it. */
	for (uint32_t i = 0; i < ws->count; i++) {
		uintptr_t line = ws->objects[i] & ~(uintptr_t)(FS_LINE - 1);
		uintptr_t end = line + (ws->objects[i] % FS_LINE + 1) * FS_LINE;

		for (; line < end; line += FS_LINE)
			__builtin_prefetch((const void *)line, 0, 3);
	}
	ws->noting_turn = ws->count == 0 || ++ws->served >= FS_WORKING_SET_REFRESH;
	if (!ws->noting_turn)
		return false;
	ws->served = 0;
	ws->count = 0;
	if (++ws->tag == FS_WORKING_SET_TAGS) {
		memset(ws->seen, 0, sizeof(ws->seen));
		ws->tag = 1;
	}
	return true;
}
