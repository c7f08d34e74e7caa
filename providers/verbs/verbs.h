/* SPDX-License-Identifier: BSD-2-Clause
 * The verbs provider: libfabric FI_EP_MSG endpoints over rdma-core's
 * reliable-connected queue pairs, with librdmacm for connections. One file
 * per object type:
 *
 *   vrb_prov.c      descriptor, loading rdma-core, the no-device answer
 *   vrb_info.c      discovery: one fi_info per device's active port
 *   vrb_fabric.c    fid_fabric (and fi_trywait)
 *   vrb_domain.c    fid_domain: device context and protection domain
 *   vrb_mr.c        fid_mr over ibv_reg_mr
 *   vrb_cq.c        fid_cq over ibv_cq and a completion channel
 *   vrb_eq.c        fid_eq over an rdma_cm event channel
 *   vrb_pep.c       fid_pep: listening rdma_cm id
 *   vrb_ep.c        fid_ep: queue pair, binding, connection management
 *   vrb_post.c      building and posting work requests, queue credits
 *   vrb_ep_msg.c, vrb_ep_rma.c, vrb_ep_atomic.c   data-transfer ops tables
 *   vrb_stubs.c     -FI_ENOSYS entries for tables the core has no stubs for
 *
 * The translations between verbs and libfabric that need no device live in
 * vrb_translate.h and are unit-tested; vrb_lib.h loads rdma-core.
 *
 * Locking: each CQ, EQ and endpoint has its own mutex; a CQ's lock is taken
 * inside an endpoint's, never the other way round.
 */
#ifndef FABSIM_VERBS_H
#define FABSIM_VERBS_H

#include <pthread.h>
#include <stdbool.h>

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

#include "vrb_lib.h"
#include "vrb_translate.h"

#define VRB_PROV_NAME    "verbs"
#define VRB_PROV_VERSION FI_VERSION(0, 1)
#define VRB_API_VERSION  FI_VERSION(1, 17)

/* Sizes an application gets when it asks for none. */
enum {
	VRB_DEF_QUEUE = 1024,
	VRB_DEF_CQ_SIZE = 4096,
	VRB_CQ_BATCH = 16,   /* work completions polled at once */
	VRB_INLINE_PROBE = 256,
};

extern struct fi_provider vrb_prov;

/* rdma-core, once loaded (vrb_prov.c). */
extern struct vrb_lib vrb_lib;
/* Loads it once; 0, or -FI_ENODATA after logging why (the one line a
 * machine without rdma-core gets). */
int vrb_load(bool asked_for);

/* fi_verbs(7)'s runtime parameters (vrb_params.c): defined at load; an
 * offer lowered to the sizes they set; whether a device is the one
 * FI_VERBS_DEVICE_NAME names (any, when it is not set). */
void vrb_params_define(void);
void vrb_params_apply(struct fi_info *info);
bool vrb_params_device_wanted(const char *name);

int vrb_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info);

/* ---- Objects ---------------------------------------------------------------------- */

struct vrb_fabric {
	struct fid_fabric fabric_fid;
	pthread_mutex_t   lock;
	int               refs;       /* domains, EQs, passive endpoints */
};

struct vrb_domain {
	struct fid_domain   domain_fid;
	struct ibv_device_attr dev;
	struct vrb_fabric  *fabric;
	struct fi_info     *info;
	struct ibv_context **cm_devices; /* rdma_get_devices: owns ctx */
	struct ibv_context *ctx;
	struct ibv_pd      *pd;
	uint32_t            inline_max;
	int                 refs;
	pthread_mutex_t     lock;
};

struct vrb_mr {
	struct fid_mr      mr_fid;
	struct vrb_domain *domain;
	struct ibv_mr     *mr;
};

/* What the provider remembers of a posted request until it completes:
 * named by the work request's wr_id. Owned by the CQ the completion will
 * land in, so that it outlives the endpoint. */
struct vrb_op {
	struct vrb_op_info info;
	bool               silent;   /* success is not reported */
	uint64_t           sq_pos;   /* send queue: position, for credits */
	struct vrb_op     *next_free;
};

struct vrb_ep;

struct vrb_cq {
	struct fid_cq            cq_fid;
	struct vrb_domain       *domain;
	struct fi_cq_attr        attr;
	struct ibv_comp_channel *channel;
	int                      signal_fd; /* fi_cq_signal wakes sread */
	struct ibv_cq           *cq;
	pthread_mutex_t          lock;
	/* Completions taken from the device, not yet handed out: reading
	 * stops in front of an error until fi_cq_readerr takes it. */
	struct ibv_wc            backlog[VRB_CQ_BATCH];
	size_t                   head, count;
	unsigned int             events; /* completion events to acknowledge */
	/* Endpoints whose completions land here, by queue pair number. */
	struct vrb_ep          **eps;
	size_t                   ep_count, ep_cap;
	struct vrb_op           *free_ops;
	void                   **chunks;  /* op records, freed at close */
	size_t                   chunk_count;
	int                      refs;
};

struct vrb_eq {
	struct fid_eq              eq_fid;
	struct vrb_fabric         *fabric;
	struct fi_eq_attr          attr;
	struct rdma_event_channel *channel;
	/* The wait descriptor (FI_GETWAIT): an epoll set of the channel's
	 * descriptor and wake_fd, an eventfd fi_eq_write signals. */
	int                        epfd;
	int                        wake_fd;
	pthread_mutex_t            lock;
	struct fabsim_eventq       q;
	int                        refs; /* bound endpoints: vrb_eq_ref() */
};

/* A connection request waiting for fi_accept or fi_reject: the handle of
 * the fi_info a FI_CONNREQ event carries. */
struct vrb_connreq {
	struct fid          handle;
	struct rdma_cm_id  *id;
};

struct vrb_pep {
	struct fid_pep             pep_fid;
	struct vrb_fabric         *fabric;
	struct fi_info            *info;
	struct rdma_cm_id         *id;
	struct rdma_event_channel *own_channel;
	struct vrb_eq             *eq;
	bool                       bound;
};

enum vrb_ep_state {
	VRB_EP_IDLE,
	VRB_EP_ENABLED,
	VRB_EP_CONNECTING,
	VRB_EP_CONNECTED,
	VRB_EP_SHUTDOWN,
};

struct vrb_ep {
	struct fid_ep              ep_fid;
	struct vrb_domain         *domain;
	struct fi_info            *info;
	struct rdma_cm_id         *id;
	struct rdma_event_channel *own_channel; /* until bound to an EQ */
	struct vrb_eq             *eq;
	struct vrb_cq             *tx_cq, *rx_cq;
	bool                       tx_selective, rx_selective;
	uint64_t                   tx_op_flags, rx_op_flags;
	enum vrb_ep_state          state;
	bool                       passive;     /* made from a FI_CONNREQ */
	bool                       bound;       /* local address chosen */
	bool                       resolved;    /* route to the peer known */
	struct sockaddr_in         src;         /* until bound */
	uint32_t                   qp_num;
	pthread_mutex_t            lock;
	/* Queue credits (fi_endpoint(3) FI_RM_ENABLED: -FI_EAGAIN when full). */
	size_t                     tx_size, rx_size, inject_size;
	uint64_t                   sq_posted;   /* requests posted */
	uint64_t                   sq_done;     /* of those, retired */
	uint32_t                   unsignaled;  /* in a row since a signaled one */
	/* The contexts of unsignaled requests (selective completion), by
	 * queue position modulo tx_size: one that fails names its
	 * operation. Made at the first such request. */
	void                     **unsignaled_ctx;
	size_t                     rx_posted;
	/* Target of plain fi_atomic sums (the device returns the old value). */
	uint64_t                   scratch;
	struct vrb_mr              scratch_desc; /* .mr: its region */
};

/* ---- Constructors --------------------------------------------------------------------- */

int vrb_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context);
int vrb_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context);
int vrb_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
	       uint64_t offset, uint64_t requested_key, uint64_t flags,
	       struct fid_mr **mr, void *context);
int vrb_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		uint64_t access, uint64_t offset, uint64_t requested_key,
		uint64_t flags, struct fid_mr **mr, void *context);
int vrb_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		   uint64_t flags, struct fid_mr **mr);
int vrb_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq, void *context);
int vrb_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq, void *context);
int vrb_pep_open(struct fid_fabric *fabric, struct fi_info *info,
		 struct fid_pep **pep, void *context);
int vrb_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep, void *context);

extern struct fabsim_msg_ops vrb_msg_ops;
extern struct fabsim_rma_ops vrb_rma_ops;
extern struct fabsim_atomic_ops vrb_atomic_ops;

/* ---- Local -FI_ENOSYS entries (vrb_stubs.c) ---------------------------------------------- */

extern struct fi_ops_tagged vrb_no_tagged_ops;
int vrb_no_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		   struct fid_av **av, void *context);
int vrb_no_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		     struct fid_cntr **cntr, void *context);
ssize_t vrb_no_cancel(fid_t fid, void *context);
int vrb_no_setopt(fid_t fid, int level, int optname, const void *optval,
		  size_t optlen);
ssize_t vrb_no_size_left(struct fid_ep *ep);

/* ---- Posting (vrb_post.c) ------------------------------------------------------------------ */

/* One send-queue request, whatever API call made it. */
struct vrb_send {
	enum vrb_op_kind     kind;
	enum ibv_wr_opcode   opcode;
	const struct iovec  *iov;
	void               **desc;
	size_t               count;
	void                *context;
	uint64_t             flags;       /* FI_INJECT, FI_COMPLETION, ... */
	uint64_t             data;        /* FI_REMOTE_CQ_DATA */
	uint64_t             remote_addr;
	uint32_t             rkey;
	uint64_t             compare_add; /* atomics */
	uint64_t             swap;
	bool                 inject_call; /* fi_inject*: no completion ever */
};

ssize_t vrb_post_send(struct vrb_ep *ep, const struct vrb_send *s);
ssize_t vrb_post_recv(struct vrb_ep *ep, const struct iovec *iov,
		      void **desc, size_t count, void *context,
		      uint64_t flags);

static inline struct vrb_ep *vrb_ep_of(struct fid_ep *ep)
{
	return container_of(ep, struct vrb_ep, ep_fid);
}

/* The endpoint's default flags (fabsim_op_flags_fn). */
uint64_t vrb_ep_op_flags(struct fid_ep *ep, uint64_t which);

/* The CQs the queue pair's send and receive completions land in: an
 * endpoint bound to one CQ only uses it for both (vrb_ep.c). */
static inline struct vrb_cq *vrb_ep_scq(const struct vrb_ep *ep)
{
	return ep->tx_cq ? ep->tx_cq : ep->rx_cq;
}

static inline struct vrb_cq *vrb_ep_rcq(const struct vrb_ep *ep)
{
	return ep->rx_cq ? ep->rx_cq : ep->tx_cq;
}
int vrb_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
		     enum fi_op op, struct fi_atomic_attr *attr,
		     uint64_t flags);

/* ---- Shared helpers ----------------------------------------------------------------------- */

/* The device context named `name` among rdma_cm's (the contexts its ids
 * use); *list must be released with rdma_free_devices. */
struct ibv_context *vrb_cm_device(const char *name,
				  struct ibv_context ***list);

/* CQ: operation records and the endpoints whose completions it takes. */
struct vrb_op *vrb_cq_op_get(struct vrb_cq *cq);
void vrb_cq_op_put(struct vrb_cq *cq, struct vrb_op *op);
int vrb_cq_attach(struct vrb_cq *cq, struct vrb_ep *ep);
void vrb_cq_detach(struct vrb_cq *cq, struct vrb_ep *ep);
/* Completions poll the CQ; fi_trywait arms it. 0 or -FI_EAGAIN. */
int vrb_cq_trywait(struct vrb_cq *cq);
int vrb_eq_trywait(struct vrb_eq *eq);

/* Endpoints and passive endpoints bound to the EQ (fi_close refuses a bound
 * one). A counter of its own, without the EQ's lock: binding happens under
 * the endpoint's lock, and reading the EQ takes an endpoint's lock under
 * the EQ's (a connection event), so the EQ's lock must not be taken inside
 * an endpoint's. */
void vrb_eq_ref(struct vrb_eq *eq);
void vrb_eq_unref(struct vrb_eq *eq);

/* EQ: moves an id's events to the EQ; queues an event (copied). */
int vrb_eq_adopt(struct vrb_eq *eq, struct rdma_cm_id *id,
		 struct rdma_event_channel **own_channel);
/* Waits for one event on a private channel (address and route resolution
 * before an EQ is involved): 0, or -FI_E* with the event's failure. */
int vrb_wait_cm_event(struct rdma_event_channel *ch, struct rdma_cm_id *id,
		      enum rdma_cm_event_type want);

/* Endpoint events from the EQ (vrb_ep.c). */
void vrb_ep_cm_event(struct vrb_ep *ep, enum rdma_cm_event_type event);

/* Credits: called by the CQ as completions retire requests. */
void vrb_ep_tx_done(struct vrb_ep *ep, uint64_t sq_pos);
void vrb_ep_rx_done(struct vrb_ep *ep);

/* A sockaddr's size, or 0 for a family the provider does not speak. */
size_t vrb_sockaddr_len(const struct sockaddr *sa);

#endif
