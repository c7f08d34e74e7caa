/* SPDX-License-Identifier: BSD-2-Clause
 * A process's waker on a shared fabric, for both faces of the simulated NIC
 * (the sim provider's FI_WAIT_FD objects, the verbs face's descriptors).
 *
 * A program may wait for the NIC's work outside the fabric: blocked in
 * poll()/epoll() on a descriptor a face gave it. In one process, whatever
 * makes the descriptor readable runs in the process itself. On a shared
 * fabric another process may run the event that brings this one a
 * completion, a connection event or a timer: it can only leave the call on
 * this process's list (nic/nic_proc.c), drained when one of the process's
 * threads enters the world. The waker is a thread of the process that waits
 * inside the fabric for exactly that: its wait drains the list, the face's
 * glue runs and makes its descriptors readable.
 *
 * For the clock the waker is a thread that waits (nic_sched.c): idle, like
 * any thread blocked in a wait that is not over. A wait of another thread
 * of the process whose condition the waker's drain satisfied cannot be seen
 * from other processes (they only see whether calls wait for the process):
 * while one is there, the waker leaves its wait and holds the clock, as a
 * running thread, until that thread has gone on (the face says when, with
 * `held` and shared_waker_kick), so that time does not run on without it.
 */
#ifndef FABSIM_SHARED_WAKER_H
#define FABSIM_SHARED_WAKER_H

#include <stdbool.h>

#include "providers/sim/nic/nic.h"

struct shared_waker;

/* What the face does with the waker; every hook runs with the world lock
 * held, in the waker's thread, and may be NULL. */
struct shared_waker_ops {
	/* The waker's wait is over for the face (besides the drain). */
	bool (*ready)(void *arg);
	/* After each wait: the face brings its descriptors up to date. */
	void (*woke)(void *arg);
	/* A thread of the process waits in the fabric for something that is
	 * there already: the waker holds the clock until it is false. */
	bool (*held)(void *arg);
	/* The waker has something to wait for (NULL: always). While it has
	 * not, it steps out of the fabric (nic_sched_step_out) and sleeps
	 * until kicked: in a world of one process, a waker that waited would
	 * move the clock between the program's own polls. */
	bool (*needed)(void *arg);
};

/* Starts the waker of `world` (a shared one) with the face's hooks. The
 * calling thread must not hold the world lock. Negative errno on failure. */
int shared_waker_start(struct nic_world *world,
		       const struct shared_waker_ops *ops, void *arg,
		       struct shared_waker **out);

/* A thread that `held` named has gone on, or `needed` may have become true
 * (world lock held or not). */
void shared_waker_kick(struct shared_waker *w);

/* Stops the waker, joins its thread and frees it (NULL: nothing; in a
 * child forked after it started, only frees it). The calling thread must
 * not hold the world lock. */
void shared_waker_stop(struct shared_waker *w);

#endif
