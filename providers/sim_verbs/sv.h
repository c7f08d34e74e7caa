/* SPDX-License-Identifier: BSD-2-Clause
 * The verbs face of the simulated NIC: libibverbs' API (rdma-core's ABI,
 * built against its installed <infiniband/verbs.h>) over the NIC model of
 * the sim provider (providers/sim/nic). A user-space, deterministic
 * soft-RoCE: each device is a simulated RoCE NIC on one host of the
 * configured topology. One file per object:
 *
 *   sv_world.c   the process's simulated fabric, devices, virtual time,
 *                file descriptors that wake applications
 *   sv_device.c  device list, contexts, device/port/GID queries
 *   sv_mr.c      protection domains and memory regions
 *   sv_cq.c      completion channels, CQs, polling and events
 *   sv_qp.c      queue pairs: states, attributes, the NIC's callbacks
 *   sv_post.c    ibv_post_send / ibv_post_recv: work requests to the NIC
 *   sv_ah.c      address handles, GIDs to hosts, the GRH of a datagram
 *   sv_srq.c     shared receive queues
 *   sv_wr.c      extended QPs and the work-request API (ibv_wr_*)
 *   sv_async.c   asynchronous events
 *   sv_misc.c    strings, rates, sysfs, fork, and what is not simulated
 *
 * Locking: every entry point takes the world lock (the NIC model's); the
 * NIC calls back with it held.
 */
#ifndef FABSIM_SV_H
#define FABSIM_SV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include <netmodel/nm_config.h>

#include "providers/sim/nic/nic.h"
#include "sv_private.h"

/* What a simulated device offers (ibv_query_device). */
enum {
	SV_MAX_QP_WR = 16384,
	SV_MAX_CQE = (1 << 20) - 1,
	SV_MAX_CQ = 1 << 16,
	SV_MAX_PD = 1 << 16,
	SV_MAX_SGE = NIC_MAX_SGE,
	SV_MAX_INLINE = NIC_INLINE_MAX,
	SV_MAX_RD_ATOM = NIC_ATOMIC_DEPTH,
	SV_GID_TABLE = 2,    /* link-local, then the IPv4-mapped RoCEv2 GID */
};
#define SV_MAX_MSG_SIZE (1u << 31)
#define SV_DEVICE_PREFIX "fabsim"
#define SV_SYSFS_PREFIX "/sys/class/infiniband/"
/* rnr_retry 7: retry for ever (IBA). */
#define SV_RNR_FOREVER 7

/* ---- World (sv_world.c) ------------------------------------------------- */

struct sv_device {
	struct ibv_device  dev;        /* what applications see; first */
	unsigned           index;
	struct nic        *nic;
	uint32_t           host;
	struct in_addr     ip;
	__be64             guid;
	/* Memory regions of every context on the device, by key. */
	struct sv_mr     **mrs;
	size_t             mr_slots, mr_count;
	size_t             mr_used;    /* live and deleted slots */
};

struct sv_world {
	int                init_err;   /* 0, or why there are no devices */
	char               init_why[256];
	struct nic_world  *nic;
	nm_config          cfg;
	struct sv_device  *devs;
	unsigned           ndev;
	struct sv_waitable *waitables;
	struct shared_world *shared;   /* FI_SIM_FABRIC: one node of a shared
					* fabric, this process's device */
	struct shared_waker *waker;    /* shared: see sv_world.c */
};

extern struct sv_world sv_world;
/* The private interface (sv_private.h), for this library's own files. */
extern const struct sv_private_ops *const sv;

/* Builds the world on first use: 0, or -errno (sv_world.init_why says
 * why, and has been printed once). */
int sv_world_init(void);
struct sv_device *sv_device_of(struct ibv_device *dev);
/* Runs the events of the next instant (an empty poll); lock held. */
void sv_poll_instant(void);
/* Releases the lock after a post refused for want of room (ENOMEM): the
 * refusal is a poll, as the sim provider's (sim_xfer.c), since the program
 * will likely post again without reading its CQ, or while another thread
 * reads it, and the clock must move meanwhile; then a thread asleep on the
 * lock, or sharing this CPU, goes first. */
void sv_unlock_refused(void);
/* The world lock for an empty poll: false when the poll need not look
 * (nic_world_poll_lock: on a shared fabric, nothing can have changed for
 * this thread, or another process holds it). */
bool sv_poll_lock(void);

/* ---- Contexts (sv_device.c) ---------------------------------------------- */

struct sv_context {
	struct verbs_context vctx;     /* .context is the ibv_context */
	struct sv_device    *dev;
	struct sv_waitable   async;    /* async_fd */
	struct sv_async_event *async_head, *async_tail;
	int                  refs;     /* PDs, CQs, channels */
};

static inline struct sv_context *sv_ctx(struct ibv_context *ctx)
{
	return SV_CONTAINER_OF(verbs_get_ctx(ctx), struct sv_context, vctx);
}

int sv_query_port(struct ibv_context *ctx, uint8_t port,
		  struct ibv_port_attr *attr, size_t len);
void sv_fill_gid(const struct sv_device *d, int index, union ibv_gid *gid);

/* ---- PDs and MRs (sv_mr.c) ------------------------------------------------------ */

struct sv_pd {
	struct ibv_pd      pd;
	struct sv_context *ctx;
	int                refs;     /* MRs and QPs */
	uint32_t           id;       /* the NIC's protection domain tag */
};

/* The NIC's remote access bits (NIC_ACCESS_REMOTE_*) of verbs' access
 * flags. */
uint32_t sv_remote_access(int access);

struct sv_mr {
	struct ibv_mr    mr;
	struct sv_pd    *pd;
	struct nic_mr   *nmr;
	int              access;     /* IBV_ACCESS_* */
	uint64_t         iova;       /* the address peers name addr by */
};

/* The region a local key names on this device, or NULL. */
struct sv_mr *sv_mr_find(struct sv_device *d, uint32_t lkey);

/* ---- CQs and channels (sv_cq.c) ------------------------------------------------- */

struct sv_channel {
	struct ibv_comp_channel ch;
	struct sv_waitable      w;
	struct sv_cq           *head, *tail; /* CQs with an event */
};

/* What reading a completion gives back to its QP, as a device frees queue
 * entries when their completions are polled: the send queue slots of its
 * request and of the unsignaled ones completed before it, or its receive
 * queue slot. */
struct sv_cq_slots {
	struct sv_qp *qp; /* NULL: none, or the QP is gone or was reset */
	uint32_t      sends, recvs;
};

struct sv_cqe {
	struct ibv_wc      wc;
	struct sv_cq_slots slots;
};

struct sv_cq {
	union {             /* the extended CQ begins as the plain one */
		struct ibv_cq    cq;
		struct ibv_cq_ex cqx;
	};
	struct ibv_wc       current;   /* ibv_start_poll's, ibv_next_poll's */
	struct sv_channel  *channel;
	struct sv_cqe      *ring;
	size_t              size, head, count;
	bool                armed, solicited_only;
	bool                event_queued;
	bool                overrun;   /* IBV_EVENT_CQ_ERR given */
	struct sv_cq       *next_event;
	int                 refs;      /* QPs */
};

/* A CQ of cqe entries; NULL with errno set (EINVAL, ENOMEM). */
struct sv_cq *sv_cq_new(struct ibv_context *context, int cqe,
			void *cq_context, struct ibv_comp_channel *channel,
			int comp_vector);
/* The context's poll_cq and req_notify_cq. */
int sv_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int sv_req_notify_cq(struct ibv_cq *cq, int solicited_only);
/* ibv_create_cq_ex (sv_cq_ex.c). */
struct ibv_cq_ex *sv_create_cq_ex(struct ibv_context *context,
				  struct ibv_cq_init_attr_ex *attr);

/* A completion for the application (lock held). solicited: it may wake a
 * CQ armed for solicited completions only; slots (or NULL): what its
 * reading frees. */
void sv_cq_push(struct sv_cq *cq, const struct ibv_wc *wc, bool solicited,
		const struct sv_cq_slots *slots);
/* The QP is going, or reset: its entries leave cq, as a verbs device
 * cleans them (lock held). */
void sv_cq_forget_qp(struct sv_cq *cq, const struct sv_qp *qp);

/* ---- QPs (sv_qp.c, sv_post.c) ------------------------------------------------------ */

/* Where the 40 bytes of a datagram's GRH go: the start of a UD receive's
 * scatter list (the NIC places the payload after them). */
struct sv_grh_room {
	struct {
		void    *addr;
		uint32_t len;
	} sge[SV_MAX_SGE];
	int count;
	bool short_list; /* fewer than 40 bytes in all */
};

/* A posted work request, until its completion. */
struct sv_wr {
	uint64_t       wr_id;
	struct sv_qp  *qp;
	enum ibv_wc_opcode opcode;
	uint32_t       byte_len;
	bool           signaled;
	bool           recv;
	uint64_t       operand, compare; /* atomics */
	struct sv_grh_room grh;   /* UD receives */
	struct sv_srq *srq;       /* a receive posted to an SRQ */
	struct sv_wr  *prev, *next;
};

struct sv_srq {
	struct ibv_srq       srq;
	struct sv_pd        *pd;
	struct nic_srq      *nsrq;
	struct sv_wr        *recvs, *recvs_tail; /* outstanding */
	uint32_t             recv_count;
	struct ibv_srq_attr  attr;     /* max_wr, max_sge, srq_limit */
	bool                 armed;    /* srq_limit set: the event is due */
	int                  refs;     /* QPs */
};

struct sv_wr_item;

struct sv_qp {
	union {
		struct ibv_qp    qp;
		struct ibv_qp_ex qpx;    /* its first member is qp */
	};
	bool                 extended; /* made with send ops flags */
	struct sv_wr_item   *wr_items, *wr_last; /* ibv_wr_* being built */
	int                  wr_err;
	struct sv_pd        *pd;
	struct sv_srq       *srq;      /* receives come from it */
	struct sv_cq        *scq, *rcq;
	struct nic_qp       *nqp;
	struct ibv_qp_cap    cap;
	int                  sq_sig_all;
	struct ibv_qp_attr   attr;     /* what modify_qp set, for query_qp */
	struct sv_wr        *sends, *recvs, *recvs_tail; /* outstanding */
	uint32_t             send_count, recv_count; /* slots held */
	/* Unsignaled sends completed since the last signaled one: their
	 * slots go back with the next completion read (sv_cq_slots). */
	uint32_t             sends_unreleased;
	bool                 heard_peer; /* a packet came: COMM_EST is said */
};

extern const struct nic_qp_ops sv_qp_nic_ops;

int sv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		 struct ibv_send_wr **bad);
/* ibv_create_qp_ex (verbs_context.create_qp_ex), and the work requests an
 * extended QP was building when it goes (sv_wr.c). */
struct ibv_qp *sv_create_qp_ex(struct ibv_context *context,
			       struct ibv_qp_init_attr_ex *attr);
void sv_wr_drop(struct sv_qp *qp);
int sv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		 struct ibv_recv_wr **bad);

/* Completes a request at once, with a local error, and puts the QP in the
 * error state as verbs does (lock held). */
void sv_qp_local_error(struct sv_qp *qp, struct sv_wr *w,
		       enum ibv_wc_status status);
void sv_wr_unlink(struct sv_wr *w);
/* A receive posted to an SRQ was taken (lock held): may raise
 * IBV_EVENT_SRQ_LIMIT_REACHED. */
void sv_srq_taken(struct sv_srq *srq);
int sv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad);
/* A receive's record and NIC form (sv_post.c), for a QP's receive queue
 * or an SRQ: NULL with *err (EINVAL: a scatter list longer than max_sge
 * or missing; ENOMEM); *keys_ok says whether every local key holds. */
struct sv_wr *sv_recv_prepare(struct sv_pd *pd, const struct ibv_recv_wr *wr,
			       uint32_t max_sge, struct nic_recv *r,
			       bool *keys_ok, int *err);
/* Whether sge's local key names a region of pd that covers it (and lets
 * the device write there if it must); its NIC region to *out. */
bool sv_lkey_ok(struct sv_pd *pd, const struct ibv_sge *sge,
		bool device_writes, struct nic_mr **out);
/* For rdma_cm (sv_private.h), lock held. */
int sv_qp_connect_locked(struct ibv_qp *qp, uint32_t host, uint32_t qpn,
			 uint8_t retry_count, uint8_t rnr_retry,
			 uint8_t rd_atomic, uint8_t dest_rd_atomic);
void sv_qp_error_locked(struct ibv_qp *qp);

/* ---- Address handles and GRHs (sv_ah.c) ---------------------------------------------- */

#define SV_GRH_BYTES 40

struct sv_ah {
	struct ibv_ah      ah;
	struct sv_pd      *pd;
	uint32_t           host;  /* the destination's host on the fabric */
};

/* The host a RoCE address vector names (an IPv4-mapped GID, or a device's
 * link-local GID), or NIC_HOST_ANY. */
uint32_t sv_host_of_ah(const struct ibv_ah_attr *ah);
/* Writes a received datagram's GRH (RoCEv2 over IPv4: 20 bytes of zeros,
 * then the packet's IPv4 header) where room says. */
void sv_grh_write(const struct sv_grh_room *room, struct in_addr src,
		  struct in_addr dst, size_t payload, bool imm);

/* ---- Async events (sv_async.c) ------------------------------------------------------ */

struct sv_async_event {
	struct ibv_async_event ev;
	struct sv_async_event *next;
};

void sv_async_push(struct sv_context *ctx, const struct ibv_async_event *ev);
bool sv_async_ready(struct sv_waitable *w);

#endif
