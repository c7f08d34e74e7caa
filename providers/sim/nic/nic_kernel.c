/* SPDX-License-Identifier: BSD-2-Clause
 * What the kernel says about threads and processes, from /proc.
 */
#define _GNU_SOURCE
#include "nic_kernel.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_reader)(clockid_t id, struct timespec *ts);

/* The C library's own clock_gettime, found in the C library itself: the
 * global one may be libfabsim_vclock.so's (LD_PRELOAD). A system call
 * costs ~120 ns on a virtual machine, and pollers read the clock often. */
static clock_reader libc_clock;

__attribute__((constructor)) static void find_libc_clock(void)
{
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	if (!libc)
		return;
	libc_clock = (clock_reader)dlsym(libc, "clock_gettime");
	dlclose(libc);
}

void nic_kernel_clock(clockid_t id, struct timespec *ts)
{
	if (!libc_clock || libc_clock(id, ts))
		syscall(SYS_clock_gettime, id, ts);
}

/* Reads a small /proc file into buf (NUL-terminated); -errno when it
 * cannot. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	return n;
}

/* "pid (comm) S ...": the state follows the last ')'. */
static char state_in(const char *path)
{
	char buf[512];
	const char *state;
	ssize_t n = read_small(path, buf, sizeof(buf));

	if (n == -ENOENT || n == -ESRCH)
		return '-';
	if (n <= 0)
		return '?';
	state = strrchr(buf, ')');
	return state && state[1] == ' ' ? state[2] : '?';
}

char nic_kernel_thread_state(pid_t pid, pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid,
		 (int)tid);
	return state_in(path);
}

/* The call a thread is blocked in, from /proc/<pid>/task/<tid>/syscall
 * ("running", or its number, six arguments, the stack and program
 * pointers, in hex): false when it runs, is in none, or the file cannot be
 * read (another process's, where ptrace is restricted). */
struct blocking_call {
	long      nr;
	uintptr_t arg[6];
};

static bool blocking_call(pid_t pid, pid_t tid, struct blocking_call *call)
{
	char path[64], buf[256], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid,
		 (int)tid);
	if (read_small(path, buf, sizeof(buf)) <= 0 || buf[0] < '0' ||
	    buf[0] > '9')
		return false;
	call->nr = strtol(buf, &p, 10);
	for (int i = 0; i < 6; i++)
		call->arg[i] = (uintptr_t)strtoull(p, &p, 16);
	return true;
}

/* A descriptor that another party writes: a socket, a pipe or FIFO, an
 * eventfd. Not a timer or signal descriptor (those are clocks), a
 * terminal, or a file. */
/* What descriptor `fd` of `pid` names ("socket:[123]", "pipe:[45]", a
 * path): false when it cannot be read. */
static bool fd_target(pid_t pid, unsigned long fd, char *target, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd/%lu", (int)pid, fd);
	n = readlink(path, target, len - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	return true;
}

static bool fed_by_another_party(pid_t pid, uintptr_t fd)
{
	static const char *const kinds[] = {
		"socket:", "pipe:", "anon_inode:[eventfd]",
	};
	char target[64];

	if (!fd_target(pid, fd, target, sizeof(target)))
		return false;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strncmp(target, kinds[i], strlen(kinds[i])))
			return true;
	return false;
}

/* An int argument as the kernel passed it (the file shows the register). */
static int int_arg(uintptr_t arg)
{
	return (int)(uint32_t)arg;
}

/* A futex wait with no time limit (FUTEX_WAIT or FUTEX_WAIT_BITSET: what
 * glibc's mutexes, condition variables and semaphores sleep in). */
static bool futex_waits(const struct blocking_call *c,
			struct nic_futex_wait *futex)
{
	int cmd = int_arg(c->arg[1]) & FUTEX_CMD_MASK;

	if ((cmd != FUTEX_WAIT && cmd != FUTEX_WAIT_BITSET) || c->arg[3])
		return false;
	futex->word = c->arg[0];
	futex->value = (uint32_t)c->arg[2];
	return true;
}

/* A call that waits, with no time limit, for something another party does.
 * A finite timeout makes it a sleep (an event loop's tick, poll(NULL, 0,
 * ms), select() as a sleep): those keep the longer rule, as nanosleep. */
static bool waits_for_another_party(pid_t pid, const struct blocking_call *c,
				    struct nic_futex_wait *futex)
{
	switch (c->nr) {
	case SYS_futex:
		return futex_waits(c, futex);
	case SYS_read:
	case SYS_readv:
		return fed_by_another_party(pid, c->arg[0]);
	case SYS_recvfrom:
	case SYS_recvmsg:
	case SYS_recvmmsg:
	case SYS_accept4:
#ifdef SYS_accept /* not on every architecture */
	case SYS_accept:
#endif
		return true;
#ifdef SYS_poll
	case SYS_poll: /* fds, nfds, timeout in ms */
		return c->arg[1] && int_arg(c->arg[2]) < 0;
#endif
	case SYS_ppoll: /* fds, nfds, timeout (NULL: none) */
		return c->arg[1] && !c->arg[2];
#ifdef SYS_select
	case SYS_select: /* nfds, sets, timeout (NULL: none) */
		return c->arg[0] && !c->arg[4];
#endif
	case SYS_pselect6:
		return c->arg[0] && !c->arg[4];
#ifdef SYS_epoll_wait
	case SYS_epoll_wait: /* epfd, events, max, timeout in ms */
#endif
	case SYS_epoll_pwait:
		return int_arg(c->arg[3]) < 0;
	default:
		return false;
	}
}

/* The inode of the socket behind descriptor `fd` of `pid`, or 0. */
static unsigned long socket_inode(pid_t pid, unsigned long fd)
{
	char target[64];
	unsigned long inode;

	if (!fd_target(pid, fd, target, sizeof(target)))
		return 0;
	return sscanf(target, "socket:[%lu]", &inode) == 1 ? inode : 0;
}

/* In the TCP tables `pid` sees (IPv4, then IPv6): the endpoints of the
 * connection whose socket is `inode` (want != 0), or the inode of the one
 * whose endpoints are `local`-`remote` (want == 0). */
static unsigned long tcp_lookup(pid_t pid, unsigned long want, char *local,
				char *remote, size_t len)
{
	static const char *const tables[] = { "tcp", "tcp6" };
	unsigned long found = 0;

	for (size_t t = 0; t < 2 && !found; t++) {
		char path[64], line[512], l[64], r[64];
		unsigned long inode;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)pid,
			 tables[t]);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (!found && fgets(line, sizeof(line), f)) {
			if (sscanf(line, " %*[^:]: %63s %63s %*s %*s %*s %*s "
				   "%*s %*s %lu", l, r, &inode) != 3)
				continue;
			if (want && inode == want) {
				snprintf(local, len, "%s", l);
				snprintf(remote, len, "%s", r);
				found = inode;
			} else if (!want && !strcmp(l, local) &&
				   !strcmp(r, remote)) {
				found = inode;
			}
		}
		fclose(f);
	}
	return found;
}

static bool has_socket(pid_t pid, unsigned long inode)
{
	char path[64];
	struct dirent *e;
	bool found = false;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while (!found && (e = readdir(dir))) {
		char *end;
		unsigned long fd = strtoul(e->d_name, &end, 10);

		found = !*end && e->d_name[0] && socket_inode(pid, fd) == inode;
	}
	closedir(dir);
	return found;
}

static bool accepting(const struct blocking_call *call)
{
	return call->nr == SYS_accept4
#ifdef SYS_accept
	       || call->nr == SYS_accept
#endif
		;
}

bool nic_kernel_waits_out_of_band(pid_t pid, pid_t tid, pid_t other)
{
	struct blocking_call call;
	char local[64], remote[64];
	unsigned long mine, theirs;

	if (!blocking_call(pid, tid, &call) ||
	    !(mine = socket_inode(pid, call.arg[0])) ||
	    !tcp_lookup(pid, mine, local, remote, sizeof(local)))
		return false;
	if (accepting(&call))
		return nic_kernel_thread_state(pid, tid) == 'S';
	if (call.nr != SYS_read && call.nr != SYS_readv &&
	    call.nr != SYS_recvfrom && call.nr != SYS_recvmsg)
		return false;
	/* The other end: the connection seen from the other side. */
	theirs = tcp_lookup(pid, 0, remote, local, sizeof(local));
	return theirs && has_socket(other, theirs) &&
	       nic_kernel_thread_state(pid, tid) == 'S';
}

bool nic_kernel_blocked_on_another_party(pid_t pid, pid_t tid,
					 struct nic_futex_wait *futex)
{
	struct blocking_call call;

	futex->word = 0;
	/* Both must say so: a thread that wakes between the two reads is
	 * not taken for blocked. */
	return blocking_call(pid, tid, &call) &&
	       waits_for_another_party(pid, &call, futex) &&
	       nic_kernel_thread_state(pid, tid) == 'S';
}

bool nic_kernel_asleep_on_futex(pid_t pid, pid_t tid, uintptr_t *word)
{
	struct blocking_call call;
	int cmd;

	if (!blocking_call(pid, tid, &call) || call.nr != SYS_futex)
		return false;
	cmd = int_arg(call.arg[1]) & FUTEX_CMD_MASK;
	if (cmd != FUTEX_WAIT && cmd != FUTEX_WAIT_BITSET)
		return false;
	*word = call.arg[0];
	return true;
}

/* Bytes of process `pid` at `addr` (false, errno set, when it cannot be
 * read). */
static bool read_theirs(pid_t pid, uintptr_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)addr, len };

	return addr && process_vm_readv(pid, &local, 1, &remote, 1, 0) ==
			       (ssize_t)len;
}

/* A sleep's length in microseconds, read from the sleeper: a timespec
 * (units_per_us 1000) or a timeval (1): both are seconds and a count of
 * smaller units, in two longs. -1 when it cannot be read. */
static long duration_us(pid_t pid, uintptr_t addr, long units_per_us)
{
	long pair[2]; /* seconds, then nanoseconds or microseconds */

	_Static_assert(sizeof(struct timespec) == sizeof(pair) &&
			       sizeof(struct timeval) == sizeof(pair),
		       "timespec and timeval are two longs");
	if (!read_theirs(pid, addr, pair, sizeof(pair)) || pair[0] < 0 ||
	    pair[0] > 1000000)
		return -1;
	return pair[0] * 1000000 + pair[1] / units_per_us;
}

static long ms_us(int ms)
{
	return ms < 0 ? -1 : ms * 1000L;
}

/* How long the call sleeps at most, in microseconds; -1 when it is no
 * nap (no time limit, a sleep until an instant, another call) or the
 * length cannot be read. */
static long nap_us(pid_t pid, const struct blocking_call *c)
{
	switch (c->nr) {
	case SYS_nanosleep: /* request, remainder */
		return duration_us(pid, c->arg[0], 1000);
	case SYS_clock_nanosleep: /* clock, flags, request, remainder */
		if (int_arg(c->arg[1]) & TIMER_ABSTIME)
			return -1;
		return duration_us(pid, c->arg[2], 1000);
#ifdef SYS_poll
	case SYS_poll: /* fds, nfds, timeout in ms */
		return ms_us(int_arg(c->arg[2]));
#endif
	case SYS_ppoll: /* fds, nfds, timeout (NULL: none) */
		return c->arg[2] ? duration_us(pid, c->arg[2], 1000) : -1;
#ifdef SYS_select
	case SYS_select: /* nfds, sets, timeout (NULL: none) */
		return c->arg[4] ? duration_us(pid, c->arg[4], 1) : -1;
#endif
	case SYS_pselect6:
		return c->arg[4] ? duration_us(pid, c->arg[4], 1000) : -1;
#ifdef SYS_epoll_wait
	case SYS_epoll_wait: /* epfd, events, max, timeout in ms */
#endif
	case SYS_epoll_pwait:
		return ms_us(int_arg(c->arg[3]));
	default:
		return -1;
	}
}

bool nic_kernel_napping(pid_t pid, pid_t tid, long max_us)
{
	struct blocking_call call;
	long us;

	if (!blocking_call(pid, tid, &call))
		return false;
	us = nap_us(pid, &call);
	return us >= 0 && us <= max_us &&
	       nic_kernel_thread_state(pid, tid) == 'S';
}

bool nic_kernel_futex_unchanged(const struct nic_futex_wait *futex)
{
	uint32_t now;

	/* Not a plain load: the word may live in memory freed since (a
	 * condition variable on a stack), and then the wait is over. A read
	 * the system refuses (ENOSYS, EPERM under a filter) tells nothing. */
	if (!read_theirs(getpid(), futex->word, &now, sizeof(now)))
		return errno != EFAULT;
	return now == futex->value;
}

static bool listed(pid_t tid, const pid_t *known, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (known[i] == tid)
			return true;
	return false;
}

/* Calls pick(pid, tid, arg) for each thread of `pid` that is none of
 * known[0..count), until it returns a nonzero id, which is returned (0:
 * none, or the threads cannot be listed). */
static pid_t each_other_thread(pid_t pid, const pid_t *known, size_t count,
			       pid_t (*pick)(pid_t pid, pid_t tid, void *arg),
			       void *arg)
{
	char path[32];
	struct dirent *e;
	pid_t found = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while (!found && (e = readdir(dir))) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);

		if (*end || tid <= 0 || listed((pid_t)tid, known, count))
			continue;
		found = pick(pid, (pid_t)tid, arg);
	}
	closedir(dir);
	return found;
}

static pid_t live_thread(pid_t pid, pid_t tid, void *arg)
{
	char state = nic_kernel_thread_state(pid, tid);

	(void)arg;
	return state != '-' && state != 'Z' && state != 'X' ? tid : 0;
}

bool nic_kernel_process_gone(pid_t pid)
{
	char path[32], state;

	if (kill(pid, 0) && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	state = state_in(path);
	if (state == '-' || state == 'X')
		return true;
	/* A zombie main thread: the process ended, unless its main thread
	 * alone did (pthread_exit) and others run on. */
	return state == 'Z' && !each_other_thread(pid, &pid, 1, live_thread,
						  NULL);
}

static pid_t keep_newest(pid_t pid, pid_t tid, void *arg)
{
	pid_t *newest = arg;

	(void)pid;
	if (tid > *newest)
		*newest = tid;
	return 0; /* look at them all */
}

pid_t nic_kernel_newest_other_thread(pid_t pid, const pid_t *known,
				     size_t count)
{
	pid_t newest = 0;

	each_other_thread(pid, known, count, keep_newest, &newest);
	return newest;
}

static pid_t if_running(pid_t pid, pid_t tid, void *arg)
{
	(void)arg;
	return nic_kernel_thread_state(pid, tid) == 'R' ? tid : 0;
}

pid_t nic_kernel_other_thread_running(pid_t pid, const pid_t *known,
				      size_t count)
{
	return each_other_thread(pid, known, count, if_running, NULL);
}
