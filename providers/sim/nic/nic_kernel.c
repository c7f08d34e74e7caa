/* SPDX-License-Identifier: BSD-2-Clause
 * What the kernel says about threads and processes, from /proc.
 */
#define _GNU_SOURCE
#include "nic_kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* The number of the call a thread is blocked in, from
 * /proc/<pid>/task/<tid>/syscall ("running", or the number and the
 * arguments); -1 when it runs, is in none, or the file cannot be read. */
static long blocking_call(pid_t pid, pid_t tid)
{
	char path[64], buf[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid,
		 (int)tid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	return buf[0] >= '0' && buf[0] <= '9' ? strtol(buf, NULL, 10) : -1;
}

static bool waits_for_another_party(long call)
{
	switch (call) {
	case SYS_read:
	case SYS_readv:
	case SYS_recvfrom:
	case SYS_recvmsg:
	case SYS_recvmmsg:
	case SYS_ppoll:
	case SYS_pselect6:
	case SYS_epoll_pwait:
	case SYS_accept4:
	case SYS_waitid:
	case SYS_wait4:
#ifdef SYS_poll /* not on every architecture */
	case SYS_poll:
#endif
#ifdef SYS_select
	case SYS_select:
#endif
#ifdef SYS_epoll_wait
	case SYS_epoll_wait:
#endif
#ifdef SYS_accept
	case SYS_accept:
#endif
		return true;
	default:
		return false;
	}
}

bool nic_kernel_blocked_on_another_party(pid_t pid, pid_t tid)
{
	/* Both must say so: a thread that wakes between the two reads is
	 * not taken for blocked. */
	return waits_for_another_party(blocking_call(pid, tid)) &&
	       nic_kernel_thread_state(pid, tid) == 'S';
}

bool nic_kernel_process_gone(pid_t pid)
{
	char path[32], state;

	if (kill(pid, 0) && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	state = state_in(path);
	return state == '-' || state == 'Z' || state == 'X';
}

long nic_kernel_process_threads(void)
{
	char buf[1024];
	long n = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "Threads: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}
