/* SPDX-License-Identifier: BSD-2-Clause
 * What the kernel says about the threads and processes that share a world
 * (from /proc): the scheduler's rules for taking a thread out of virtual
 * time read it (nic_sched.c). Same-user processes; where a file cannot be
 * read, the answers are the cautious ones ('?', false, 0).
 */
#ifndef FABSIM_NIC_KERNEL_H
#define FABSIM_NIC_KERNEL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel's clock `id`, read as the C library reads it (through the
 * vDSO, no system call): not through the program's clock_gettime, which
 * `fabsim run --virtual-clock` makes read virtual time. */
void nic_kernel_clock(clockid_t id, struct timespec *ts);

/* The one-letter state of thread `tid` of process `pid` (R running or
 * runnable, S sleeping, D in uninterruptible wait, Z zombie...); '?' when
 * it cannot be read, '-' when it is gone. */
char nic_kernel_thread_state(pid_t pid, pid_t tid);

/* What a thread asleep in a futex wait waits on: the word (an address in
 * its process) and the value the word held when it went to sleep. A
 * thread that wakes it changes the word first. */
struct nic_futex_wait {
	uintptr_t word; /* 0: not a futex wait */
	uint32_t  value;
};

/* The thread is asleep in a call that waits, with no time limit, for
 * another party: reading a socket, a pipe or an eventfd, receiving,
 * accepting, polling descriptors without a timeout, waiting on a futex (a
 * mutex, a condition variable, a semaphore: *futex says which). Not a sleep
 * (nor a poll, select or futex wait with a timeout, nor a timer
 * descriptor), not a file or a terminal, not a child. */
bool nic_kernel_blocked_on_another_party(pid_t pid, pid_t tid,
					 struct nic_futex_wait *futex);

/* The thread is in a futex wait (asleep, or about to be: the call is
 * read, not the state), with or without a time limit, on the word at
 * *word (an address in process `pid`). */
bool nic_kernel_asleep_on_futex(pid_t pid, pid_t tid, uintptr_t *word);

/* The thread is asleep in an out-of-band exchange that waits for another
 * process to act first: reading a TCP connection whose other end is a
 * socket of process `other` (only `other` can send what it waits for), or
 * accepting connections on a TCP socket (a server waiting for its client).
 * False when any of it cannot be read (another process's descriptors,
 * where ptrace is restricted). */
bool nic_kernel_waits_out_of_band(pid_t pid, pid_t tid, pid_t other);

/* The thread is asleep in a short nap: a relative nanosleep or
 * clock_nanosleep, or a poll, select or epoll wait with a timeout, of at
 * most `max_us` microseconds. False when the call or its length cannot be
 * read (another process's memory, where ptrace is restricted). */
bool nic_kernel_napping(pid_t pid, pid_t tid, long max_us);

/* The futex word of a thread of this process still holds what it held
 * when the thread went to sleep on it (false too when its memory is gone,
 * and so is the wait; true when the system refuses the read: it tells
 * nothing then). */
bool nic_kernel_futex_unchanged(const struct nic_futex_wait *futex);

/* The process has ended (a zombie too: its parent has not reaped it). */
bool nic_kernel_process_gone(pid_t pid);

/* The thread of process `pid` with the highest id among those that are
 * none of known[0..count) (the kernel hands out ids in increasing order
 * until they wrap at pid_max), or 0 when there is none (or the process's
 * threads cannot be listed). */
pid_t nic_kernel_newest_other_thread(pid_t pid, const pid_t *known,
				     size_t count);

/* A thread of process `pid` that the kernel says is running or runnable
 * (R) and is none of known[0..count): its id, or 0 when there is none (or
 * the process's threads cannot be listed). */
pid_t nic_kernel_other_thread_running(pid_t pid, const pid_t *known,
				      size_t count);

#ifdef __cplusplus
}
#endif

#endif
