/* SPDX-License-Identifier: BSD-2-Clause
 * fabsim — libfabric 1.x compatible API. Written from fi_peer(3),
 * fi_provider(3) and fi_provider(7).
 *
 * Extensions outside the core API: exporting and importing fids between
 * providers or libraries, the peer provider structures (shared AV, AV set,
 * CQ, domain, EQ, receive context, peer transfers), and importing a memory
 * monitor or a logging back end. fi_peer(3) calls these developmental; they
 * still must match libfabric 1.17 byte for byte, since the other side of an
 * import may be code compiled against libfabric's headers.
 */
#ifndef FI_EXT_H
#define FI_EXT_H

#include <stdbool.h>
#include <rdma/fabric.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_endpoint.h>
#include <rdma/providers/fi_prov.h>
#include <rdma/providers/fi_log.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Provider-specific values -------------------------------------------- */

/* Each provider owns a 12-bit code placed at bits 16..27; its own values
 * (options, errors, names) are the negated code plus a small index. */
#define FI_PROV_SPECIFIC_EFA (0xefa << 16)
#define FI_PROV_SPECIFIC_TCP (0x7cb << 16)

/* Endpoint options with negative names belong to one provider. */
enum {
	FI_OPT_EFA_RNR_RETRY = -FI_PROV_SPECIFIC_EFA,
};

/* ---- Exporting and importing fids (fi_peer(3)) --------------------------- */

/* Argument of fi_control(FI_EXPORT_FID). */
struct fi_fid_export {
	struct fid **fid;
	uint64_t     flags;
	void        *context;
};

/* fi_peer(3) reserves this for future use. */
static inline int fi_export_fid(struct fid *fid, uint64_t flags,
				struct fid **expfid, void *context)
{
	struct fi_fid_export exp;

	exp.fid = expfid;
	exp.flags = flags;
	exp.context = context;
	return fi_control(fid, FI_EXPORT_FID, &exp);
}

/* Hands an object owned by the caller to the object fid (e.g. a memory
 * monitor to the MR cache); it is a bind underneath. */
static inline int fi_import_fid(struct fid *fid, struct fid *expfid,
				uint64_t flags)
{
	return fid->ops->bind(fid, expfid, flags);
}

/* ---- Memory monitor import ----------------------------------------------- */

/* A monitor supplied by the application or a library: open the "mr_cache"
 * fid with fi_open and import this into it. */
struct fid_mem_monitor;

struct fi_ops_mem_monitor {
	size_t size;
	int (*start)(struct fid_mem_monitor *monitor);
	void (*stop)(struct fid_mem_monitor *monitor);
	int (*subscribe)(struct fid_mem_monitor *monitor, const void *addr,
			 size_t len);
	void (*unsubscribe)(struct fid_mem_monitor *monitor, const void *addr,
			    size_t len);
	bool (*valid)(struct fid_mem_monitor *monitor, const void *addr,
		      size_t len);
};

/* Filled in on import, for the monitor to call when a range it was asked
 * to watch (subscribe) is no longer valid. */
struct fi_ops_mem_notify {
	size_t size;
	void (*notify)(struct fid_mem_monitor *monitor, const void *addr,
		       size_t len);
};

struct fid_mem_monitor {
	struct fid                 fid;
	struct fi_ops_mem_monitor *export_ops;
	struct fi_ops_mem_notify  *import_ops;
};

/* ---- Peer AV and AV set -------------------------------------------------- */

struct fid_peer_av;

struct fi_ops_av_owner {
	size_t size;
	int (*query)(struct fid_peer_av *av, struct fi_av_attr *attr);
	fi_addr_t (*ep_addr)(struct fid_peer_av *av, struct fid_ep *ep);
};

struct fid_peer_av {
	struct fid              fid;
	struct fi_ops_av_owner *owner_ops;
};

/* Passed as the context of fi_av_open with FI_PEER. libfabric 1.17 spells
 * the member's type struct fi_peer_av (fi_peer(3) says fid_peer_av); the
 * spelling is kept so that code written against 1.17 compiles unchanged. */
struct fi_peer_av_context {
	size_t             size;
	struct fi_peer_av *av;
};

struct fid_peer_av_set;

struct fi_ops_av_set_owner {
	size_t size;
	int (*members)(struct fid_peer_av_set *av, fi_addr_t *addr,
		       size_t *count);
};

struct fid_peer_av_set {
	struct fid                  fid;
	struct fi_ops_av_set_owner *owner_ops;
};

/* Same spelling note as fi_peer_av_context. */
struct fi_peer_av_set_context {
	size_t                 size;
	struct fi_peer_av_set *av_set;
};

/* ---- Peer CQ, domain and EQ ---------------------------------------------- */

struct fid_peer_cq;

/* The owner's side of a shared CQ: the peer writes its completions here. */
struct fi_ops_cq_owner {
	size_t size;
	ssize_t (*write)(struct fid_peer_cq *cq, void *context, uint64_t flags,
			 size_t len, void *buf, uint64_t data, uint64_t tag,
			 fi_addr_t src);
	ssize_t (*writeerr)(struct fid_peer_cq *cq,
			    const struct fi_cq_err_entry *err_entry);
};

struct fid_peer_cq {
	struct fid              fid;
	struct fi_ops_cq_owner *owner_ops;
};

/* Context of fi_cq_open with FI_PEER. */
struct fi_peer_cq_context {
	size_t              size;
	struct fid_peer_cq *cq;
};

/* Context of fi_domain2 with FI_PEER. */
struct fi_peer_domain_context {
	size_t             size;
	struct fid_domain *domain;
};

/* Context of fi_eq_open with FI_PEER. */
struct fi_peer_eq_context {
	size_t         size;
	struct fid_eq *eq;
};

/* ---- Peer shared receive context ----------------------------------------- */

struct fid_peer_srx;

/* One receive, handed between owner and peer. next and prev come first so
 * that the owner can keep entries on its own doubly linked lists. */
struct fi_peer_rx_entry {
	struct fi_peer_rx_entry *next;
	struct fi_peer_rx_entry *prev;
	struct fid_peer_srx     *srx;
	fi_addr_t                addr;
	size_t                   size;
	uint64_t                 tag;
	uint64_t                 flags;
	void                    *context;
	size_t                   count;
	void                   **desc;
	void                    *peer_context;
	void                    *owner_context;
	struct iovec            *iov;
};

/* Called by the peer: find (or queue) the receive for an incoming message. */
struct fi_ops_srx_owner {
	size_t size;
	int (*get_msg)(struct fid_peer_srx *srx, fi_addr_t addr, size_t size,
		       struct fi_peer_rx_entry **entry);
	int (*get_tag)(struct fid_peer_srx *srx, fi_addr_t addr, uint64_t tag,
		       struct fi_peer_rx_entry **entry);
	int (*queue_msg)(struct fi_peer_rx_entry *entry);
	int (*queue_tag)(struct fi_peer_rx_entry *entry);
	void (*free_entry)(struct fi_peer_rx_entry *entry);
};

/* Called by the owner: a queued message now has a buffer, or is dropped. */
struct fi_ops_srx_peer {
	size_t size;
	int (*start_msg)(struct fi_peer_rx_entry *entry);
	int (*start_tag)(struct fi_peer_rx_entry *entry);
	int (*discard_msg)(struct fi_peer_rx_entry *entry);
	int (*discard_tag)(struct fi_peer_rx_entry *entry);
};

struct fid_peer_srx {
	struct fid_ep            ep_fid;
	struct fi_ops_srx_owner *owner_ops;
	struct fi_ops_srx_peer  *peer_ops;
};

/* Context of fi_srx_context with FI_PEER. */
struct fi_peer_srx_context {
	size_t               size;
	struct fid_peer_srx *srx;
};

/* ---- Peer transfers (FI_PEER_TRANSFER) ----------------------------------- */

struct fi_peer_transfer_context;

/* Set by the peer: how the owner reports completion of peer transfers. */
struct fi_ops_transfer_peer {
	size_t size;
	ssize_t (*complete)(struct fid_ep *ep, struct fi_cq_tagged_entry *buf,
			    fi_addr_t *src_addr);
	ssize_t (*comperr)(struct fid_ep *ep, struct fi_cq_err_entry *buf);
};

/* Context of fi_endpoint2 with FI_PEER_TRANSFER. */
struct fi_peer_transfer_context {
	size_t                       size;
	struct fi_info              *info;
	struct fid_ep               *ep;
	struct fi_ops_transfer_peer *peer_ops;
};

/* ---- Logging import ------------------------------------------------------ */

/* flags bit of the enabled/ready callbacks below: FI_LOG_PROV filters this
 * provider out. */
#define FI_LOG_PROV_FILTERED (1ULL << 0)

/* A logging back end supplied by the application replaces the built-in
 * stderr logger: open the "logging" fid and import this. */
struct fi_ops_log {
	size_t size;
	int (*enabled)(const struct fi_provider *prov, enum fi_log_level level,
		       enum fi_log_subsys subsys, uint64_t flags);
	int (*ready)(const struct fi_provider *prov, enum fi_log_level level,
		     enum fi_log_subsys subsys, uint64_t flags,
		     uint64_t *showtime);
	void (*log)(const struct fi_provider *prov, enum fi_log_level level,
		    enum fi_log_subsys subsys, const char *func, int line,
		    const char *msg);
};

struct fid_logging {
	struct fid         fid;
	struct fi_ops_log *ops;
};

/* Opens the named core object, imports fid into it, and drops the opened
 * handle again: the import outlives it. */
static inline int fi_import(uint32_t version, const char *name, void *attr,
			    size_t attr_len, uint64_t flags, struct fid *fid,
			    void *context)
{
	struct fid *open_fid;
	int ret;

	ret = fi_open(version, name, attr, attr_len, flags, &open_fid, context);
	if (ret != FI_SUCCESS)
		return ret;

	ret = fi_import_fid(open_fid, fid, flags);
	fi_close(open_fid);
	return ret;
}

/* The caller fills log_fid->ops with its callbacks; class and table size
 * are set here. */
static inline int fi_import_log(uint32_t version, uint64_t flags,
				struct fid_logging *log_fid)
{
	log_fid->fid.fclass = FI_CLASS_LOG;
	log_fid->ops->size = sizeof(struct fi_ops_log);

	return fi_import(version, "logging", NULL, 0, flags, &log_fid->fid,
			 log_fid);
}

#ifdef __cplusplus
}
#endif

#endif /* FI_EXT_H */
