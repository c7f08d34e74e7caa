/* SPDX-License-Identifier: BSD-2-Clause
 * A thread's working set in shared memory (arena/working_set.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "arena/working_set.h"

struct fs_noting fs_noting;

/* Made on a thread's first turn, not kept in thread-local storage: every
 * thread of a program would carry its 5 KiB, fabric or not. */
static __thread fs_working_set *mine;
static pthread_key_t mine_key;
static pthread_once_t mine_once = PTHREAD_ONCE_INIT;

static void forget_mine(void *ws)
{
	if (fs_working_set_noting() == ws)
		fs_working_set_pause();
	free(ws);
}

static void make_key(void)
{
	(void)pthread_key_create(&mine_key, forget_mine);
}

fs_working_set *fs_working_set_mine(void)
{
	if (mine)
		return mine;
	pthread_once(&mine_once, make_key);
	mine = calloc(1, sizeof(*mine));
	if (!mine)
		return NULL;
	mine->tag = 1;
	/* Freed when the thread ends (a set made before the key failed to
	 * exist is kept: a hint's memory, once per thread). */
	(void)pthread_setspecific(mine_key, mine);
	return mine;
}

void fs_working_set_fetch(fs_working_set *ws)
{
	/* Read prefetches, not write ones: a line the other process only
	 * reads stays in its cache as well, instead of being taken from it. */
	for (uint32_t i = 0; i < ws->count; i++) {
		uintptr_t line = ws->objects[i] & ~(uintptr_t)(FS_LINE - 1);
		uintptr_t end = line + (ws->objects[i] % FS_LINE + 1) * FS_LINE;

		for (; line < end; line += FS_LINE)
			__builtin_prefetch((const void *)line, 0, 3);
	}
	ws->count = 0;
	if (++ws->tag == FS_WORKING_SET_TAGS) {
		memset(ws->seen, 0, sizeof(ws->seen));
		ws->tag = 1;
	}
}
