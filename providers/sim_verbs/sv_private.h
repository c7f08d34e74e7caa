/* SPDX-License-Identifier: BSD-2-Clause
 * What the verbs face's librdmacm needs of its libibverbs beyond the verbs
 * API: the world lock, virtual time, management datagrams and file
 * descriptors that wake the application. libibverbs.so.1 exports one
 * function for it, fabsim_sv_private, under its own symbol version
 * (FABSIM_SV_PRIVATE_1), as rdma-core gives its providers IBVERBS_PRIVATE.
 */
#ifndef FABSIM_SV_PRIVATE_H
#define FABSIM_SV_PRIVATE_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "providers/sim/nic/nic.h"

#define SV_CONTAINER_OF(ptr, type, field) \
	((type *)((char *)(ptr) - offsetof(type, field)))

/* A file descriptor an application polls (completion channel, async fd,
 * rdma_cm event channel). It is readable while an event is queued or the
 * simulation has something left to run: an application that waits on it
 * then calls back into the library, which is where virtual time moves. */
struct sv_waitable {
	int                 fd;        /* eventfd */
	/* Set before waitable_init: a program may wait for it in poll()
	 * (channels), which on a shared fabric needs the process's waker. An
	 * async fd is read through ibv_get_async_event, which waits inside
	 * the fabric. */
	bool                watched;
	bool                signalled;
	/* The queued event has been written since it came (an edge for a
	 * program that waits with EPOLLET). */
	bool                event_told;
	/* Threads waiting for it inside the fabric (wait_event), and whether
	 * it was destroyed under them: they then wait for ever, as a thread
	 * blocked in read() on a descriptor closed under it does, and the
	 * memory it lives in stays. */
	int                 waiters;
	bool                closed;
	bool              (*ready)(struct sv_waitable *w); /* event queued */
	struct sv_waitable *prev, *next;
};

#define SV_PRIVATE_VERSION 2

struct sv_private_ops {
	uint32_t version;
	void (*lock)(void);
	void (*unlock)(void);
	/* 0, or -errno when the simulated fabric could not be built. */
	int (*init)(void);
	/* Registers w (makes its eventfd); 0 or -errno. Lock not held. */
	int (*waitable_init)(struct sv_waitable *w,
			     bool (*ready)(struct sv_waitable *w));
	/* True when what holds w may be freed; false when a thread still
	 * waits on it (the memory must stay). */
	bool (*waitable_fini)(struct sv_waitable *w);
	/* An event was queued on w or taken from it (lock held). */
	void (*waitable_update)(struct sv_waitable *w);
	/* Lock held. Non-blocking: runs the events of the next instant, as an
	 * empty poll does; 0 when w then has an event, else -EAGAIN.
	 * Blocking: runs the simulation until w has one (0); when nothing is
	 * left to run, waits for another thread to post work. */
	int (*wait_event)(struct sv_waitable *w, bool blocking);
	/* Work was posted (lock held). */
	void (*posted)(void);
	/* Devices: by IPv4 address (NULL: none), and what one is. */
	struct ibv_device *(*device_by_ip)(struct in_addr ip);
	bool (*device_addr)(struct ibv_device *dev, struct nic **nic,
			    uint32_t *host, struct in_addr *ip);
	uint32_t (*host_of_ip)(struct in_addr ip);     /* NIC_HOST_ANY */
	/* Management datagrams and timers (lock held). */
	int (*send_mad)(struct nic *nic, uint32_t host, const void *mad,
			size_t len);
	void (*set_mad_handler)(struct nic *nic, nic_mad_fn fn, void *ctx);
	int (*schedule)(uint32_t host, nm_time_ns delay, nm_event_fn fn,
			void *ctx, nm_event_id *id);
	void (*cancel)(nm_event_id id);
	/* What rdma_cm does to a QP when a connection is made or broken,
	 * with the lock held (the verbs calls take it): RTR then RTS toward
	 * the peer's host and QP number; the error state. 0 or an errno. */
	int (*qp_connect)(struct ibv_qp *qp, uint32_t host, uint32_t qpn,
			  uint8_t retry_count, uint8_t rnr_retry,
			  uint8_t rd_atomic, uint8_t dest_rd_atomic);
	void (*qp_error)(struct ibv_qp *qp);
};

const struct sv_private_ops *fabsim_sv_private(void);

#endif
