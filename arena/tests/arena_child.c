/* A separate program for the arena tests: attaches to an arena by name, as an unrelated
 * process of the multi-process fabric would, and acts on it.
 *
 *   arena_child attach NAME    check the creator's message at the root, allocate a block,
 *                              write to it and publish it in the root; print the base
 *   arena_child lockdie NAME   take fs_arena_lock and exit without releasing it
 *
 * Exit status: 0 done; 2 usage; 3 attach failed; 4 wrong shared content; 5 lock or
 * allocation failed. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "arena/arena.h"
#include "shared_demo.h"

int main(int argc, char **argv)
{
	char err[512];
	fs_arena *a;
	struct shared_demo *demo;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: arena_child attach|lockdie NAME\n");
		return 2;
	}
	rc = fs_arena_attach(argv[2], &a, err, sizeof(err));
	if (rc) {
		printf("attach %d %s\n", rc, err);
		return 3;
	}
	printf("base %p\n", (void *)a);
	fflush(stdout);
	if (strcmp(argv[1], "lockdie") == 0) {
		if (fs_arena_lock(a) != 0)
			return 5;
		_exit(0); /* holding the lock */
	}
	if (strcmp(argv[1], "attach") != 0)
		return 2;
	demo = fs_arena_root(a);
	if (!demo || !fs_arena_contains(a, demo) || strcmp(demo->msg, DEMO_PARENT_MSG) != 0)
		return 4;
	demo->child_block = fs_arena_alloc(a, 100);
	if (!demo->child_block)
		return 5;
	snprintf(demo->child_block, 100, "child %d", (int)getpid());
	demo->child_pid = getpid();
	demo->child_base = (uint64_t)(uintptr_t)a;
	fs_arena_detach(a);
	return 0;
}
