/* What the tests and arena_child (another program) share through an arena's root pointer.
 * C and C++. */
#ifndef ARENA_TESTS_SHARED_DEMO_H
#define ARENA_TESTS_SHARED_DEMO_H

#include <stdint.h>

#define DEMO_PARENT_MSG "written by the creator"

struct shared_demo {
	char msg[64];       /* written by the creator */
	char *child_block;  /* allocated and filled by a child, in the arena */
	int64_t child_pid;
	uint64_t child_base; /* the address the child mapped the arena at */
};

#endif
