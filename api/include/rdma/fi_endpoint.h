/* SPDX-License-Identifier: BSD-2-Clause
 * fabsim — libfabric 1.x compatible API. Written from fi_endpoint(3) and
 * fi_msg(3).
 *
 * Endpoints and the message (send/receive) interface. struct fid_ep carries
 * one ops table per interface; the data-path wrappers below compile into the
 * application and index those tables directly, which is why the table
 * layouts and the order of fid_ep's members are fixed by libfabric 1.17.
 */
#ifndef FI_ENDPOINT_H
#define FI_ENDPOINT_H

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Message descriptor (fi_msg(3)) -------------------------------------- */

struct fi_msg {
	const struct iovec *msg_iov;
	void              **desc;       /* one MR descriptor per iov entry */
	size_t              iov_count;
	fi_addr_t           addr;
	void               *context;
	uint64_t            data;       /* with FI_REMOTE_CQ_DATA */
};

/* ---- Endpoint options (fi_getopt / fi_setopt) ---------------------------- */

/* Option levels. */
enum {
	FI_OPT_ENDPOINT,
};

/* Options at FI_OPT_ENDPOINT, with the type optval points to. */
enum {
	FI_OPT_MIN_MULTI_RECV,      /* size_t */
	FI_OPT_CM_DATA_SIZE,        /* size_t */
	FI_OPT_BUFFERED_MIN,        /* size_t */
	FI_OPT_BUFFERED_LIMIT,      /* size_t */
	FI_OPT_SEND_BUF_SIZE,       /* size_t */
	FI_OPT_RECV_BUF_SIZE,       /* size_t */
	FI_OPT_TX_SIZE,             /* size_t */
	FI_OPT_RX_SIZE,             /* size_t */
	FI_OPT_FI_HMEM_P2P,         /* int, one of FI_HMEM_P2P_* */
	FI_OPT_XPU_TRIGGER,         /* struct fi_trigger_xpu */
};

/* Values of FI_OPT_FI_HMEM_P2P: may, must, should or must not the provider
 * move device memory peer to peer. */
enum {
	FI_HMEM_P2P_ENABLED,        /* default */
	FI_HMEM_P2P_REQUIRED,
	FI_HMEM_P2P_PREFERRED,
	FI_HMEM_P2P_DISABLED,
};

/* ---- Ops tables ---------------------------------------------------------- */

struct fi_ops_ep {
	size_t size;
	ssize_t (*cancel)(fid_t fid, void *context);
	int (*getopt)(fid_t fid, int level, int optname, void *optval,
		      size_t *optlen);
	int (*setopt)(fid_t fid, int level, int optname, const void *optval,
		      size_t optlen);
	int (*tx_ctx)(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		      struct fid_ep **tx_ep, void *context);
	int (*rx_ctx)(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		      struct fid_ep **rx_ep, void *context);
	ssize_t (*rx_size_left)(struct fid_ep *ep);
	ssize_t (*tx_size_left)(struct fid_ep *ep);
};

struct fi_ops_msg {
	size_t size;
	ssize_t (*recv)(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src_addr, void *context);
	ssize_t (*recvv)(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src_addr,
			 void *context);
	ssize_t (*recvmsg)(struct fid_ep *ep, const struct fi_msg *msg,
			   uint64_t flags);
	ssize_t (*send)(struct fid_ep *ep, const void *buf, size_t len,
			void *desc, fi_addr_t dest_addr, void *context);
	ssize_t (*sendv)(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t dest_addr,
			 void *context);
	ssize_t (*sendmsg)(struct fid_ep *ep, const struct fi_msg *msg,
			   uint64_t flags);
	ssize_t (*inject)(struct fid_ep *ep, const void *buf, size_t len,
			  fi_addr_t dest_addr);
	ssize_t (*senddata)(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, uint64_t data, fi_addr_t dest_addr,
			    void *context);
	ssize_t (*injectdata)(struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest_addr);
};

/* Defined by fi_cm.h, fi_rma.h, fi_tagged.h, fi_atomic.h, fi_collective.h. */
struct fi_ops_cm;
struct fi_ops_rma;
struct fi_ops_tagged;
struct fi_ops_atomic;
struct fi_ops_collective;

/* One table per interface. Only the interfaces the endpoint was opened
 * with (caps) are meant to be called. */
struct fid_ep {
	struct fid                fid;
	struct fi_ops_ep         *ops;
	struct fi_ops_cm         *cm;
	struct fi_ops_msg        *msg;
	struct fi_ops_rma        *rma;
	struct fi_ops_tagged     *tagged;
	struct fi_ops_atomic     *atomic;
	struct fi_ops_collective *collective;
};

/* Passive endpoints only listen; they share fid_ep's leading members so the
 * cm wrappers work on both. */
struct fid_pep {
	struct fid        fid;
	struct fi_ops_ep *ops;
	struct fi_ops_cm *cm;
};

struct fid_stx {
	struct fid        fid;
	struct fi_ops_ep *ops;
};

/* ---- Creating and configuring endpoints ---------------------------------- */

static inline int fi_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
				struct fid_pep **pep, void *context)
{
	return fabric->ops->passive_ep(fabric, info, pep, context);
}

static inline int fi_endpoint(struct fid_domain *domain, struct fi_info *info,
			      struct fid_ep **ep, void *context)
{
	return domain->ops->endpoint(domain, info, ep, context);
}

/* Without flags this is fi_endpoint, which every provider has. */
static inline int fi_endpoint2(struct fid_domain *domain, struct fi_info *info,
			       struct fid_ep **ep, uint64_t flags,
			       void *context)
{
	if (!flags)
		return fi_endpoint(domain, info, ep, context);
	if (!FI_CHECK_OP(domain->ops, struct fi_ops_domain, endpoint2))
		return -FI_ENOSYS;
	return domain->ops->endpoint2(domain, info, ep, flags, context);
}

static inline int fi_scalable_ep(struct fid_domain *domain,
				 struct fi_info *info, struct fid_ep **sep,
				 void *context)
{
	return domain->ops->scalable_ep(domain, info, sep, context);
}

static inline int fi_ep_bind(struct fid_ep *ep, struct fid *bfid,
			     uint64_t flags)
{
	return ep->fid.ops->bind(&ep->fid, bfid, flags);
}

static inline int fi_pep_bind(struct fid_pep *pep, struct fid *bfid,
			      uint64_t flags)
{
	return pep->fid.ops->bind(&pep->fid, bfid, flags);
}

static inline int fi_scalable_ep_bind(struct fid_ep *sep, struct fid *bfid,
				      uint64_t flags)
{
	return sep->fid.ops->bind(&sep->fid, bfid, flags);
}

static inline int fi_enable(struct fid_ep *ep)
{
	return ep->fid.ops->control(&ep->fid, FI_ENABLE, NULL);
}

/* The next three take a bare fid but need the endpoint's ops: the fid is
 * the first member of struct fid_ep. */
static inline ssize_t fi_cancel(fid_t fid, void *context)
{
	struct fid_ep *ep = container_of(fid, struct fid_ep, fid);

	return ep->ops->cancel(fid, context);
}

static inline int fi_setopt(fid_t fid, int level, int optname,
			    const void *optval, size_t optlen)
{
	struct fid_ep *ep = container_of(fid, struct fid_ep, fid);

	return ep->ops->setopt(fid, level, optname, optval, optlen);
}

static inline int fi_getopt(fid_t fid, int level, int optname, void *optval,
			    size_t *optlen)
{
	struct fid_ep *ep = container_of(fid, struct fid_ep, fid);

	return ep->ops->getopt(fid, level, optname, optval, optlen);
}

static inline int fi_ep_alias(struct fid_ep *ep, struct fid_ep **alias_ep,
			      uint64_t flags)
{
	struct fid *fid;
	int ret;

	ret = fi_alias(&ep->fid, &fid, flags);
	if (!ret)
		*alias_ep = container_of(fid, struct fid_ep, fid);
	return ret;
}

static inline int fi_tx_context(struct fid_ep *ep, int idx,
				struct fi_tx_attr *attr,
				struct fid_ep **tx_ep, void *context)
{
	return ep->ops->tx_ctx(ep, idx, attr, tx_ep, context);
}

static inline int fi_rx_context(struct fid_ep *ep, int idx,
				struct fi_rx_attr *attr,
				struct fid_ep **rx_ep, void *context)
{
	return ep->ops->rx_ctx(ep, idx, attr, rx_ep, context);
}

/* Deprecated: a lower bound on how many operations can still be posted
 * before one returns -FI_EAGAIN. */
static inline FI_DEPRECATED_FUNC ssize_t fi_rx_size_left(struct fid_ep *ep)
{
	return ep->ops->rx_size_left(ep);
}

static inline FI_DEPRECATED_FUNC ssize_t fi_tx_size_left(struct fid_ep *ep)
{
	return ep->ops->tx_size_left(ep);
}

static inline int fi_stx_context(struct fid_domain *domain,
				 struct fi_tx_attr *attr,
				 struct fid_stx **stx, void *context)
{
	return domain->ops->stx_ctx(domain, attr, stx, context);
}

static inline int fi_srx_context(struct fid_domain *domain,
				 struct fi_rx_attr *attr,
				 struct fid_ep **rx_ep, void *context)
{
	return domain->ops->srx_ctx(domain, attr, rx_ep, context);
}

/* ---- Messages (fi_msg(3)) ------------------------------------------------ */

static inline ssize_t fi_recv(struct fid_ep *ep, void *buf, size_t len,
			      void *desc, fi_addr_t src_addr, void *context)
{
	return ep->msg->recv(ep, buf, len, desc, src_addr, context);
}

static inline ssize_t fi_recvv(struct fid_ep *ep, const struct iovec *iov,
			       void **desc, size_t count, fi_addr_t src_addr,
			       void *context)
{
	return ep->msg->recvv(ep, iov, desc, count, src_addr, context);
}

static inline ssize_t fi_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
				 uint64_t flags)
{
	return ep->msg->recvmsg(ep, msg, flags);
}

static inline ssize_t fi_send(struct fid_ep *ep, const void *buf, size_t len,
			      void *desc, fi_addr_t dest_addr, void *context)
{
	return ep->msg->send(ep, buf, len, desc, dest_addr, context);
}

static inline ssize_t fi_sendv(struct fid_ep *ep, const struct iovec *iov,
			       void **desc, size_t count, fi_addr_t dest_addr,
			       void *context)
{
	return ep->msg->sendv(ep, iov, desc, count, dest_addr, context);
}

static inline ssize_t fi_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
				 uint64_t flags)
{
	return ep->msg->sendmsg(ep, msg, flags);
}

/* The buffer is reusable on return, and a successful transfer writes no CQ
 * entry. */
static inline ssize_t fi_inject(struct fid_ep *ep, const void *buf, size_t len,
				fi_addr_t dest_addr)
{
	return ep->msg->inject(ep, buf, len, dest_addr);
}

static inline ssize_t fi_senddata(struct fid_ep *ep, const void *buf,
				  size_t len, void *desc, uint64_t data,
				  fi_addr_t dest_addr, void *context)
{
	return ep->msg->senddata(ep, buf, len, desc, data, dest_addr, context);
}

static inline ssize_t fi_injectdata(struct fid_ep *ep, const void *buf,
				    size_t len, uint64_t data,
				    fi_addr_t dest_addr)
{
	return ep->msg->injectdata(ep, buf, len, data, dest_addr);
}

#ifdef __cplusplus
}
#endif

#endif /* FI_ENDPOINT_H */
