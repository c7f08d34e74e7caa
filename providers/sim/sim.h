/* SPDX-License-Identifier: BSD-2-Clause
 * The sim provider's libfabric glue: fid objects and ops tables over the
 * simulated NIC (nic/). One file per object type:
 *
 *   sim_prov.c    descriptor, parameters, configuration
 *   sim_info.c    what fi_getinfo offers
 *   sim_world.c   the process's simulated fabrics (one world per name)
 *   sim_fabric.c  fid_fabric
 *   sim_domain.c  fid_domain (one simulated NIC each)
 *   sim_mr.c      fid_mr
 *   sim_av.c      fid_av
 *   sim_cq.c      fid_cq
 *   sim_cntr.c    fid_cntr
 *   sim_ep.c      fid_ep: binding, enabling, names, options
 *   sim_ep_msg.c, sim_ep_tagged.c, sim_ep_rma.c, sim_ep_atomic.c
 *                 the data-transfer ops tables
 *   sim_progress.c where virtual time moves: polls and blocking waits
 *   sim_vclock.c  the program's clocks on virtual time (fabsim run)
 *   sim_waitfd.c  the eventfd behind FI_WAIT_FD (CQs, EQs, counters)
 *   sim_ext.c     the fabsim_ops_v1 extension (fi_open_ops)
 *
 * Locking: every object belongs to one world; each entry point takes the
 * world lock, and the NIC's callbacks run with it held.
 */
#ifndef FABSIM_SIM_H
#define FABSIM_SIM_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <fabsim/entry.h>
#include <fabsim/eventq.h>
#include <netmodel/nm_config.h>

#include "nic/nic.h"
#include "sim_ptrset.h"

#define SIM_PROV_NAME    "sim"
#define SIM_PROV_VERSION FI_VERSION(0, 1)
#define SIM_API_VERSION  FI_VERSION(1, 17)
#define SIM_FABRIC_NAME  "fabsim"
#define SIM_DOMAIN_NAME  "sim0"

/* Limits the endpoints advertise (sim_info.c) and enforce. */
enum {
	SIM_TX_SIZE = 4096,
	SIM_RX_SIZE = 4096,
	SIM_INJECT_SIZE = NIC_INLINE_MAX,
	SIM_IOV_LIMIT = NIC_MAX_SGE,
	SIM_RMA_IOV_LIMIT = NIC_MAX_SGE,
	SIM_CQ_DATA_SIZE = 4,
	SIM_MR_KEY_SIZE = 4,
	SIM_CQ_DEFAULT_SIZE = 4096,
	SIM_CQ_MAX_SIZE = 1 << 20,
	SIM_EP_CNT = 1024,
	SIM_CQ_CNT = 1024,
	SIM_CNTR_CNT = 1024,
	SIM_MIN_MULTI_RECV = 64,
};
#define SIM_MAX_MSG_SIZE ((size_t)1 << 31)

extern struct fi_provider sim_prov;

/* ---- Configuration (sim_prov.c) ------------------------------------------ */

/* The model and transport parameters in force: FI_SIM_CONFIG (JSON), then
 * FI_SIM_* variables, over the preset. Rejects unknown FI_SIM_* names. Logs
 * the reason and returns -FI_EINVAL when something is wrong. */
int sim_config_load(nm_config *cfg, struct nic_transport_params *transport);

/* Recording (FI_SIM_PCAP*, or the JSON keys pcap, pcap_per_node,
 * pcap_snaplen, pcap_log): strings malloc'd, path NULL when off. */
struct sim_record_config {
	char     *path;
	char     *log_path;
	bool      per_node;
	uint32_t  snaplen;
};

/* sim_config_load, and the recording settings (record may be NULL). */
int sim_config_load_all(nm_config *cfg, struct nic_transport_params *transport,
			struct sim_record_config *record);
void sim_record_config_free(struct sim_record_config *record);

/* FI_SIM_MR_STRICT: refuse programs that do not register local buffers. */
bool sim_mr_strict(void);

int sim_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info);

/* ---- Worlds (sim_world.c) ---------------------------------------------------- */

struct sim_pep;
struct sim_conn;
struct shared_waker;

/* A thread of this process in a wait of the fabric (shared worlds): what
 * it waits for. */
struct sim_waiter {
	bool             (*ready)(void *ctx);
	void              *ctx;
	struct sim_waiter *next;
};

/* One simulated fabric shared by everything this process opens on it. */
struct sim_world {
	char              name[64];
	int               refs;
	struct nic_world *nic;
	/* Connection management (sim_cm.c) */
	struct sim_pep   *listeners;
	struct sim_conn  *conns;
	struct nic_transport_params transport;
	struct shared_world *shared; /* shared with other processes */
	/* Shared: the thread that takes in what other processes leave for
	 * this one, once it has wait descriptors (sim_world.c); the
	 * threads in a wait (sim_progress.c). Lock held. */
	struct shared_waker *waker;
	struct sim_waiter   *waiters;
	/* Shared: descriptors a thread may be blocked on since fi_trywait
	 * said it could block (sim_waitfd.c). Lock held. */
	struct sim_armed {
		int       fd;
		pthread_t by; /* the thread that fi_trywait let block */
	}                   *armed;
	size_t               armed_count, armed_cap;
	struct sim_world *next;
};

/* A world shared with other processes (providers/sim/shared). */
struct shared_world;

int sim_world_get(const char *name, struct sim_world **out);
/* -FI_EIO when the world's trace could not be written. */
int sim_world_put(struct sim_world *world);

/* Takes the world lock; the calling thread counts as running the program
 * (nic_sched.c) until it waits. */
void sim_lock(struct sim_world *world);
void sim_unlock(struct sim_world *world);
/* For a poll that finds nothing to do when the lock is busy: takes it and
 * returns true, or returns false (shared fabrics, lock held elsewhere). */
bool sim_poll_lock(struct sim_world *world);

/* An object of the world got a wait descriptor: on a shared fabric, the
 * process's waker (providers/sim/shared/shared_waker.h) now runs, so that
 * what other processes' runs bring it makes its descriptor readable while
 * the program is blocked on it. Lock not held. */
int sim_world_watch_fds(struct sim_world *world);

/* FI_WAIT_FD objects (sim_waitfd.c): fd is -1 for other wait objects. */
int sim_waitfd_open(struct sim_world *world, enum fi_wait_obj wait_obj,
		    int *fd);
void sim_waitfd_close(int fd);
void sim_waitfd_signal(int fd);
void sim_waitfd_drain(int fd);
int sim_waitfd_control(int fd, enum fi_wait_obj wait_obj, int command,
		       void *arg);
/* Lock held. fi_trywait let a thread block on fd (-1: none). Shared
 * fabrics: it becomes readable as soon as the world has work to run again
 * (sim_waitfd_fire, from the waker), so that the thread comes back into
 * the fabric. One process: the waker runs the world until an armed one
 * becomes readable (sim_waitfd_forget). */
void sim_waitfd_arm(struct sim_world *world, int fd);
/* One process: the calling thread is back in the fabric, so not blocked on
 * what it armed (a poll() with a timeout that ran out, say). */
void sim_waitfd_caller_back(struct sim_world *world);
/* fd is armed no more: it is closing (it must not be written any more),
 * or, in one process, it became readable (only it: other threads may be
 * blocked on others). */
void sim_waitfd_forget(struct sim_world *world, int fd);
/* Whether an armed descriptor waits for the world's next work. */
bool sim_waitfd_armed(const struct sim_world *world);
/* Makes the armed descriptors readable and forgets them. */
void sim_waitfd_fire(struct sim_world *world);

/* The program's clocks on virtual time (sim_vclock.c). */
void sim_vclock_attach(struct sim_world *world);
void sim_vclock_detach(struct sim_world *world);


/* ---- Objects --------------------------------------------------------------------- */

struct sim_fabric {
	struct fid_fabric  fabric_fid;
	struct sim_world  *world;
	int                domains;
	int                children; /* EQs and passive endpoints */
};

struct sim_eq {
	struct fid_eq        eq_fid;
	struct sim_fabric   *fabric;
	struct fi_eq_attr    attr;
	struct fabsim_eventq q;
	int                  refs;         /* objects bound */
	int                  wait_fd;      /* its own, or its wait set's */
	struct fid_wait     *wait_set;     /* FI_WAIT_SET */
};

/* A passive endpoint: a listener on a port of one simulated host. */
struct sim_pep {
	struct fid_pep     pep_fid;
	struct sim_fabric *fabric;
	struct fi_info    *info;
	struct sim_eq     *eq;
	struct nic        *nic;      /* while listening */
	uint16_t           port;
	bool               listening;
	struct sim_pep    *next;     /* in world->listeners */
};

struct sim_domain {
	struct fid_domain  domain_fid;
	struct sim_fabric *fabric;
	struct sim_world  *world;
	struct nic        *nic;
	struct fi_info    *info;     /* as opened */
	int                mr_mode;
	int                refs;     /* child objects */
	struct sim_ptrset  mrs;      /* live sim_mr, to check descriptors */
	struct sim_mr     *counted;  /* those with counters bound */
	struct sim_eq     *eq;       /* default EQ of its endpoints */
	bool               async_mr; /* FI_REG_MR: registrations report there */
};

struct sim_mr {
	struct fid_mr      mr_fid;
	struct sim_domain *domain;
	struct nic_mr     *nic_mr;
	uint64_t           access;
	uint64_t           base;     /* the registered buffer's address */
	bool               enabled;
	struct sim_ep     *bound_ep; /* FI_MR_ENDPOINT */
	nm_event_id        reported; /* FI_REG_MR: its FI_MR_COMPLETE */
	/* Counters bound with fi_mr_bind: remote writes and atomics that
	 * change it, remote reads of it (sim_xfer.c, on_remote_done). */
	struct sim_cntr   *cntr_rem_write, *cntr_rem_read;
	struct sim_mr     *next_counted; /* dom->counted */
};

struct sim_av_entry {
	struct sockaddr_in addr;
	struct nic_peer    peer;
	bool               valid;
};

struct sim_av {
	struct fid_av        av_fid;
	struct sim_domain   *domain;
	enum fi_av_type      type;
	struct sim_av_entry *entries;
	size_t               count;
	size_t               cap;
	size_t               free_hint; /* no free index below it */
	/* Reverse map for FI_SOURCE: peer -> fi_addr (open addressing). */
	size_t              *by_peer;
	size_t               by_peer_slots;
	size_t               by_peer_used;
	int                  refs;
	bool                 events;    /* FI_EVENT: inserts complete on eq */
	struct sim_eq       *eq;
};

/* A completion as the CQ keeps it, whatever its format. */
struct sim_cqe {
	void      *op_context;
	uint64_t   flags;
	size_t     len;
	void      *buf;
	uint64_t   data;
	uint64_t   tag;
	fi_addr_t  src;
};

struct sim_cq_err {
	struct fi_cq_err_entry entry;
	struct sockaddr_in     src_addr; /* err_data for FI_SOURCE_ERR */
	uint64_t               after;    /* the CQ's successes before it */
	struct sim_cq_err     *next;
};

struct sim_cq {
	struct fid_cq      cq_fid;
	struct sim_domain *domain;
	struct fi_cq_attr  attr;
	struct sim_cqe    *ring;
	size_t             size;
	size_t             head, count;
	size_t             reserved;  /* slots promised to posted operations */
	struct sim_cq_err *errs, *errs_tail;
	struct sim_cq_err *err_reported; /* owned until the next readerr */
	bool               overrun;
	int                refs;      /* endpoints bound */
	int                wait_fd;   /* eventfd (its wait set's), or -1 */
	struct fid_wait   *wait_set;  /* FI_WAIT_SET */
	uint64_t           signals;   /* fi_cq_signal calls: they end sreads */
	uint64_t           signals_taken; /* ... up to the last sread's end */
	/* Successes ever pushed and taken: an error entry is read in its
	 * place among them (fi_cq(3): -FI_EAVAIL when it is the topmost). */
	uint64_t           pushed, taken;
};

struct sim_cntr {
	struct fid_cntr    cntr_fid;
	struct sim_domain *domain;
	struct fi_cntr_attr attr;
	uint64_t           value;
	uint64_t           errors;
	/* What the application last read (fi_cntr_read, fi_cntr_readerr):
	 * fi_trywait reports a change since then as an event queued. */
	uint64_t           value_read;
	uint64_t           errors_read;
	int                refs;
	int                wait_fd;   /* its own, or its wait set's */
	struct fid_wait   *wait_set;  /* FI_WAIT_SET */
};

/* fi_trywait: the counter changed since the application last read it. */
bool sim_cntr_unread(const struct sim_cntr *cntr);

/* What the endpoint remembers about one operation until it completes. */
struct sim_op {
	void          *context;
	uint64_t       flags;    /* completion flags (FI_SEND|FI_MSG ...) */
	bool           report;   /* write a CQ entry on success */
	bool           reserved; /* holds a slot in its CQ */
	bool           multi;    /* a multi-receive buffer */
	bool           in_use;
	size_t         len;
	void          *buf;
	uint64_t       tag;      /* a receive's tag, as posted */
	struct sim_ep *ep;
	struct sim_op *next_free;
};

struct sim_ep {
	struct fid_ep      ep_fid;
	struct sim_domain *domain;
	struct fi_info    *info;
	enum fi_ep_type    type;
	uint64_t           caps;
	struct sim_eq     *eq;       /* connected endpoints */
	struct sim_conn   *conn;     /* its connection, if any */
	bool               dialled;  /* fi_connect was called: once only */
	struct nic_qp     *qp;
	struct sim_av     *av;
	struct sim_cq     *tx_cq, *rx_cq;
	bool               tx_selective, rx_selective;
	struct sim_cntr   *cntr_send, *cntr_recv, *cntr_read, *cntr_write;
	struct sim_cntr   *cntr_rem_read, *cntr_rem_write;
	uint64_t           tx_op_flags, rx_op_flags;
	bool               enabled;
	size_t             min_multi_recv;
	int                hmem_p2p;  /* FI_OPT_FI_HMEM_P2P, as set */
	/* Operation records: tx_size + rx_size of them; none left means the
	 * queue is full (-FI_EAGAIN). */
	struct sim_op     *ops;
	struct sim_op     *free_tx, *free_rx;
	size_t             tx_inflight, rx_inflight;
};

/* ---- Constructors (ops tables live with their objects) ------------------------------- */

int sim_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context);
int sim_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context);
int sim_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
	       uint64_t offset, uint64_t requested_key, uint64_t flags,
	       struct fid_mr **mr, void *context);
int sim_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		uint64_t access, uint64_t offset, uint64_t requested_key,
		uint64_t flags, struct fid_mr **mr, void *context);
/* FI_MAP_RAW_MR on a domain: a raw key of fi_mr_raw_attr back to a key. */
int sim_mr_map_raw(struct fi_mr_map_raw *map);
/* fi_domain, fi_endpoint: an info holding what fi_getinfo would refuse or not
 * offer (an enum out of range: -FI_EINVAL; caps or contexts this NIC does
 * not have: -FI_ENODATA), told with a warning naming `call`. */
int sim_info_check_open(const struct fi_info *info, const char *call);
int sim_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		   uint64_t flags, struct fid_mr **mr);
int sim_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **av, void *context);
int sim_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq, void *context);
int sim_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		  struct fid_poll **out);

/* A wait set (sim_wait.c) and what its members share. */
struct sim_wait {
	struct fid_wait     wait_fid;
	struct sim_fabric  *fabric;
	enum fi_wait_obj    wait_obj;  /* FI_WAIT_UNSPEC or FI_WAIT_FD */
	int                 wait_fd;   /* the members' descriptor, or -1 */
	struct fid        **members;   /* CQs, counters, EQs */
	size_t              count, cap;
};

int sim_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
		  struct fid_wait **out);
/* A CQ, counter or EQ opened with FI_WAIT_SET joins `set` (lock held):
 * *joined is then the set and *fd the descriptor it signals. 0, or
 * -FI_EINVAL for no set or one of another fabric. */
int sim_wait_join(struct sim_world *world, struct fid_wait *set,
		  struct fid *member, struct fid_wait **joined, int *fd);
/* It leaves the set it joined, if any (lock held): *set becomes NULL and
 * *fd, which was the set's, -1. */
void sim_wait_leave(struct fid_wait **set, struct fid *member, int *fd);
/* Makes a member's descriptor `fd` unreadable, the member having been read
 * empty; a set's (set non-NULL) only when no member has anything left. */
void sim_wait_drain(struct fid_wait *set, int fd);
/* Something to read: a CQ's entries, an EQ's events, a counter's change
 * since it was last read, a wait set member's any of these. */
bool sim_fid_has_events(struct fid *fid);
int sim_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		  struct fid_cntr **cntr, void *context);
int sim_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep, void *context);
int sim_domain_ops_open(struct fid *fid, const char *name, uint64_t flags,
			void **ops, void *context);
int sim_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq, void *context);
int sim_pep_open(struct fid_fabric *fabric, struct fi_info *info,
		 struct fid_pep **pep, void *context);

/* EQ events, lock held. CM events (FI_CONNREQ, FI_CONNECTED) pass a
 * struct fi_eq_cm_entry followed by the private data; the info of a
 * FI_CONNREQ goes to the reader (fabsim/eventq.h). */
/* An object of the EQ's is closed: its queued events go (a reader would
 * otherwise get a fid that is freed). Lock held. */
void sim_eq_forget(struct sim_eq *eq, fid_t fid);
int sim_eq_push(struct sim_eq *eq, uint32_t event, const void *buf,
		size_t len);
int sim_eq_push_error(struct sim_eq *eq, fid_t fid, void *context, int err,
		      int prov_errno, uint64_t data, const void *err_data,
		      size_t err_data_len);

/* ---- Connection management (sim_cm.c) ---------------------------------------- */

/* Largest private data a connect/accept/reject carries: what rdma_cm
 * leaves after its own header in a REQ, less the length byte. */
#define SIM_CM_DATA_SIZE 55

/* The host an application's address names: a simulated IP (10.0.0.x) is
 * that host; any other (loopback, this machine's, unspecified) names
 * whoever listens on that port here, as on one machine. NIC_HOST_ANY when
 * nobody does. */
uint32_t sim_host_of_addr(struct sim_world *world,
			  const struct sockaddr_in *addr);

/* Every host's connection manager answers requests, listener or not. */
void sim_cm_serve(struct sim_world *world, struct nic *nic);
int sim_cm_listen(struct sim_pep *pep);
void sim_cm_unlisten(struct sim_pep *pep);
int sim_cm_connect(struct sim_ep *ep, const struct sockaddr_in *dest,
		   const void *param, size_t len);
int sim_cm_accept(struct sim_ep *ep, const void *param, size_t len);
int sim_cm_reject(struct sim_pep *pep, fid_t handle, const void *param,
		  size_t len);
int sim_cm_shutdown(struct sim_ep *ep);
/* The endpoint is going away: tell the peer, forget the connection. */
void sim_cm_release(struct sim_ep *ep);
/* fi_endpoint with info->handle naming a connection request. */
int sim_cm_attach(struct sim_ep *ep, fid_t handle);
/* The host a connection request or passive endpoint lives on. */
uint32_t sim_cm_handle_host(fid_t handle);
/* The connected peer's address. */
int sim_cm_peer_addr(struct sim_ep *ep, struct sockaddr_in *out);
/* An accepted endpoint's own name: its listener's address. */
int sim_cm_local_addr(struct sim_ep *ep, struct sockaddr_in *out);
/* The RC queue pair failed (retry exhaustion): the connection is gone. */
void sim_cm_qp_fatal(struct sim_ep *ep);
/* The world ends: what the CM still keeps goes. */
void sim_cm_end(struct sim_world *world);
const char *sim_cm_reason_str(int reason);

extern struct fabsim_msg_ops sim_msg_ops;
extern struct fabsim_tagged_ops sim_tagged_ops;
extern struct fabsim_rma_ops sim_rma_ops;
extern struct fabsim_atomic_ops sim_atomic_ops;

/* ---- Shared helpers ---------------------------------------------------------------------- */

/* AV: the peer an fi_addr names, and back. */
int sim_av_peer(struct sim_av *av, fi_addr_t addr, struct nic_peer *peer);
fi_addr_t sim_av_addr_of(struct sim_av *av, struct nic_peer peer);
void sim_addr_of_peer(struct sim_world *world, struct nic_peer peer,
		      struct sockaddr_in *out);

/* CQ: room for a completion, and its delivery. */
int sim_cq_reserve(struct sim_cq *cq);
void sim_cq_unreserve(struct sim_cq *cq);
void sim_cq_push(struct sim_cq *cq, const struct sim_cqe *e, bool reserved);
void sim_cq_push_error(struct sim_cq *cq, const struct sim_cqe *e, int err,
		       int prov_errno, size_t olen, bool reserved,
		       const struct sockaddr_in *src_addr);

void sim_cntr_inc(struct sim_cntr *cntr);
void sim_cntr_inc_err(struct sim_cntr *cntr);

/* MR: the NIC region behind a descriptor (NULL if none / invalid). */
struct nic_mr *sim_mr_of_desc(struct sim_domain *domain, void *desc);
/* The region of key `key` if counters are bound to it (lock held). */
struct sim_mr *sim_mr_counted(struct sim_domain *domain, uint64_t key);

/* Endpoint operation records. */
struct sim_op *sim_op_get(struct sim_ep *ep, bool tx);
void sim_op_put(struct sim_op *op, bool tx);

/* Virtual time (sim_progress.c); all called with the lock held. */
/* A poll found nothing: run the next instant if no thread is running
 * (true when it ran). */
bool sim_progress_poll(struct sim_world *world);
/* Blocks the caller until ready(ctx) or `timeout_ms` of virtual time
 * (negative: no limit). Returns 0, or -FI_EAGAIN on timeout. */
int sim_progress_wait(struct sim_world *world, bool (*ready)(void *ctx),
		      void *ctx, int timeout_ms);
/* Blocks the caller for `ns` of virtual time (a cost it pays). */
void sim_progress_sleep(struct sim_world *world, nm_time_ns ns);
/* fi_trywait: runs until ready(ctx) (true) or nothing is left (false);
 * then, on a shared fabric, the caller (about to block on a descriptor)
 * counts as a poller that has seen everything for its process. */
bool sim_progress_settle(struct sim_world *world, bool (*ready)(void *ctx),
			 void *ctx);
/* Work was posted or a completion written: wake threads that wait. */
/* An object (CQ, counter, EQ) with wait descriptor fd (-1: none) has
 * something new to read: the descriptor turns readable, waiters may go on. */
void sim_progress_ready(struct sim_world *world, int fd);
void sim_progress_posted(struct sim_world *world);

/* Converts a negative errno from the NIC or netmodel to -FI_E*. */
int sim_errno(int neg_errno);

#endif
