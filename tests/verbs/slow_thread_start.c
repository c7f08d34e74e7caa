/* SPDX-License-Identifier: BSD-2-Clause
 * LD_PRELOAD shim: every thread the program creates computes for
 * SLOW_THREAD_START_MS (default 100) of real time before it starts, as a
 * new thread does that waits for a CPU of a busy machine. Run under it, a
 * program that hands work to a new thread (rping's persistent server
 * accepts each connection in one) has a thread running that has not yet
 * called into the fabric while its peer waits.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct start {
	void *(*fn)(void *);
	void *arg;
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *late_start(void *p)
{
	struct start s = *(struct start *)p;
	const char *ms = getenv("SLOW_THREAD_START_MS");
	long long until = now_ns() + (ms ? atoll(ms) : 100) * 1000000LL;

	free(p);
	while (now_ns() < until)
		; /* running, not asleep: the kernel says R */
	return s.fn(s.arg);
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *,
			   void *(*)(void *), void *);
	struct start *s = malloc(sizeof(*s));
	int ret;

	if (!real)
		real = dlsym(RTLD_NEXT, "pthread_create");
	if (!s || !real) {
		free(s);
		return EAGAIN;
	}
	s->fn = fn;
	s->arg = arg;
	ret = real(thread, attr, late_start, s);
	if (ret)
		free(s);
	return ret;
}
