/* SPDX-License-Identifier: BSD-2-Clause
 * The data-transfer calls of fi_msg(3), fi_tagged(3), fi_rma(3) and
 * fi_atomic(3), written once for every provider.
 *
 * Each call family has short forms (fi_send, fi_sendv, fi_senddata,
 * fi_inject, ...) that the man pages define as the msg form (fi_sendmsg)
 * with some arguments fixed: one buffer, no data, the endpoint's default
 * operation flags (fi_endpoint(3) FI_SETOPSFLAG), FI_INJECT. A provider
 * implements one post per direction, which takes everything; a table of the
 * family's entry points (FABSIM_MSG_ENTRY_POINTS, ...) turns each call into
 * that post. The table is the first member of a descriptor, so that an entry
 * point finds the provider's post from the endpoint's ops pointer.
 *
 *	struct fabsim_msg_ops my_msg_ops = {
 *		.ops = FABSIM_MSG_ENTRY_POINTS,
 *		.send = my_send, .recv = my_recv, .op_flags = my_op_flags,
 *		.send_flags = ..., .recv_flags = ...,
 *	};
 *	ep->ep_fid.msg = &my_msg_ops.ops;
 *
 * What the posts are told:
 * - flags: those of the msg form as the caller gave them; for a short form,
 *   the endpoint's default flags restricted to `send_flags` (or
 *   `recv_flags`, `rma_flags`, ...), with FI_REMOTE_CQ_DATA only for the
 *   ...data forms and FI_INJECT for the inject forms. The post checks them
 *   (-FI_EBADFLAGS for what it does not take).
 * - inject_call: the call was fi_inject, fi_injectdata, fi_inject_write,
 *   fi_inject_writedata or fi_inject_atomic, which generate no completion
 *   whatever the flags (FI_INJECT given to a msg form does not mean that).
 * - a msg form called with a NULL message gets -FI_EINVAL here.
 *
 * A layer that wraps an endpoint (as libfabric's hooks do) calls these
 * with the provider's own fid_ep, whose ops pointers are the descriptors'
 * tables; a copy of a table would not lead back to its descriptor.
 */
#ifndef FABSIM_ENTRY_H
#define FABSIM_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The descriptor (struct fabsim_msg_ops, ...) whose `ops` member an
 * endpoint's ops pointer `table` points to. */
#define FABSIM_ENTRY_DESCRIPTOR(type, table) \
	((const type *)((const char *)(table) - offsetof(type, ops)))

/* The endpoint's default operation flags: `which` is FI_TRANSMIT or
 * FI_RECV. */
typedef uint64_t (*fabsim_op_flags_fn)(struct fid_ep *ep, uint64_t which);

/* ---- fi_msg(3) ----------------------------------------------------------------- */

struct fabsim_msg_ops {
	struct fi_ops_msg ops; /* FABSIM_MSG_ENTRY_POINTS */
	ssize_t (*send)(struct fid_ep *ep, const struct fi_msg *msg,
			uint64_t flags, bool inject_call);
	ssize_t (*recv)(struct fid_ep *ep, const struct fi_msg *msg,
			uint64_t flags);
	fabsim_op_flags_fn op_flags;
	uint64_t send_flags; /* of the defaults, those a send takes */
	uint64_t recv_flags;
};

ssize_t fabsim_msg_recv(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src, void *context);
ssize_t fabsim_msg_recvv(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src,
			 void *context);
ssize_t fabsim_msg_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
			   uint64_t flags);
ssize_t fabsim_msg_send(struct fid_ep *ep, const void *buf, size_t len,
			void *desc, fi_addr_t dest, void *context);
ssize_t fabsim_msg_sendv(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t dest,
			 void *context);
ssize_t fabsim_msg_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
			   uint64_t flags);
ssize_t fabsim_msg_inject(struct fid_ep *ep, const void *buf, size_t len,
			  fi_addr_t dest);
ssize_t fabsim_msg_senddata(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, uint64_t data, fi_addr_t dest,
			    void *context);
ssize_t fabsim_msg_injectdata(struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest);

#define FABSIM_MSG_ENTRY_POINTS                                           \
	{                                                                 \
		.size = sizeof(struct fi_ops_msg),                        \
		.recv = fabsim_msg_recv, .recvv = fabsim_msg_recvv,       \
		.recvmsg = fabsim_msg_recvmsg, .send = fabsim_msg_send,   \
		.sendv = fabsim_msg_sendv, .sendmsg = fabsim_msg_sendmsg, \
		.inject = fabsim_msg_inject,                              \
		.senddata = fabsim_msg_senddata,                          \
		.injectdata = fabsim_msg_injectdata,                      \
	}

/* ---- fi_tagged(3) ---------------------------------------------------------------- */

struct fabsim_tagged_ops {
	struct fi_ops_tagged ops; /* FABSIM_TAGGED_ENTRY_POINTS */
	ssize_t (*send)(struct fid_ep *ep, const struct fi_msg_tagged *msg,
			uint64_t flags, bool inject_call);
	ssize_t (*recv)(struct fid_ep *ep, const struct fi_msg_tagged *msg,
			uint64_t flags);
	fabsim_op_flags_fn op_flags;
	uint64_t send_flags;
	uint64_t recv_flags;
};

ssize_t fabsim_tagged_recv(struct fid_ep *ep, void *buf, size_t len,
			   void *desc, fi_addr_t src, uint64_t tag,
			   uint64_t ignore, void *context);
ssize_t fabsim_tagged_recvv(struct fid_ep *ep, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t src,
			    uint64_t tag, uint64_t ignore, void *context);
ssize_t fabsim_tagged_recvmsg(struct fid_ep *ep,
			      const struct fi_msg_tagged *msg, uint64_t flags);
ssize_t fabsim_tagged_send(struct fid_ep *ep, const void *buf, size_t len,
			   void *desc, fi_addr_t dest, uint64_t tag,
			   void *context);
ssize_t fabsim_tagged_sendv(struct fid_ep *ep, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t dest,
			    uint64_t tag, void *context);
ssize_t fabsim_tagged_sendmsg(struct fid_ep *ep,
			      const struct fi_msg_tagged *msg, uint64_t flags);
ssize_t fabsim_tagged_inject(struct fid_ep *ep, const void *buf, size_t len,
			     fi_addr_t dest, uint64_t tag);
ssize_t fabsim_tagged_senddata(struct fid_ep *ep, const void *buf,
			       size_t len, void *desc, uint64_t data,
			       fi_addr_t dest, uint64_t tag, void *context);
ssize_t fabsim_tagged_injectdata(struct fid_ep *ep, const void *buf,
				 size_t len, uint64_t data, fi_addr_t dest,
				 uint64_t tag);

#define FABSIM_TAGGED_ENTRY_POINTS                                        \
	{                                                                 \
		.size = sizeof(struct fi_ops_tagged),                     \
		.recv = fabsim_tagged_recv, .recvv = fabsim_tagged_recvv, \
		.recvmsg = fabsim_tagged_recvmsg,                         \
		.send = fabsim_tagged_send, .sendv = fabsim_tagged_sendv, \
		.sendmsg = fabsim_tagged_sendmsg,                         \
		.inject = fabsim_tagged_inject,                           \
		.senddata = fabsim_tagged_senddata,                       \
		.injectdata = fabsim_tagged_injectdata,                   \
	}

/* ---- fi_rma(3) ------------------------------------------------------------------- */

struct fabsim_rma_ops {
	struct fi_ops_rma ops; /* FABSIM_RMA_ENTRY_POINTS */
	/* A read (write false) or a write. The short forms name one remote
	 * segment, as long as their local buffers together. */
	ssize_t (*post)(struct fid_ep *ep, bool write,
			const struct fi_msg_rma *msg, uint64_t flags,
			bool inject_call);
	fabsim_op_flags_fn op_flags;
	/* Of the defaults, those an RMA takes (FI_INJECT never for a
	 * read). */
	uint64_t rma_flags;
};

ssize_t fabsim_rma_read(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src, uint64_t addr, uint64_t key,
			void *context);
ssize_t fabsim_rma_readv(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src,
			 uint64_t addr, uint64_t key, void *context);
ssize_t fabsim_rma_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			   uint64_t flags);
ssize_t fabsim_rma_write(struct fid_ep *ep, const void *buf, size_t len,
			 void *desc, fi_addr_t dest, uint64_t addr,
			 uint64_t key, void *context);
ssize_t fabsim_rma_writev(struct fid_ep *ep, const struct iovec *iov,
			  void **desc, size_t count, fi_addr_t dest,
			  uint64_t addr, uint64_t key, void *context);
ssize_t fabsim_rma_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			    uint64_t flags);
ssize_t fabsim_rma_inject(struct fid_ep *ep, const void *buf, size_t len,
			  fi_addr_t dest, uint64_t addr, uint64_t key);
ssize_t fabsim_rma_writedata(struct fid_ep *ep, const void *buf, size_t len,
			     void *desc, uint64_t data, fi_addr_t dest,
			     uint64_t addr, uint64_t key, void *context);
ssize_t fabsim_rma_injectdata(struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest, uint64_t addr,
			      uint64_t key);

#define FABSIM_RMA_ENTRY_POINTS                                         \
	{                                                               \
		.size = sizeof(struct fi_ops_rma),                      \
		.read = fabsim_rma_read, .readv = fabsim_rma_readv,     \
		.readmsg = fabsim_rma_readmsg,                          \
		.write = fabsim_rma_write, .writev = fabsim_rma_writev, \
		.writemsg = fabsim_rma_writemsg,                        \
		.inject = fabsim_rma_inject,                            \
		.writedata = fabsim_rma_writedata,                      \
		.injectdata = fabsim_rma_injectdata,                    \
	}

/* ---- fi_atomic(3) ---------------------------------------------------------------- */

enum fabsim_atomic_kind {
	FABSIM_ATOMIC_WRITE,   /* fi_atomic */
	FABSIM_ATOMIC_FETCH,   /* fi_fetch_atomic */
	FABSIM_ATOMIC_COMPARE, /* fi_compare_atomic */
};

/* Compare or result buffers of a fetch or compare call. */
struct fabsim_ioc_list {
	const struct fi_ioc *ioc;
	void               **desc;
	size_t               count;
};

struct fabsim_atomic_ops {
	struct fi_ops_atomic ops; /* FABSIM_ATOMIC_ENTRY_POINTS */
	/* compare: COMPARE only; result: FETCH and COMPARE. The short
	 * forms name one remote segment of as many elements as their local
	 * buffers together. */
	ssize_t (*post)(struct fid_ep *ep, enum fabsim_atomic_kind kind,
			const struct fi_msg_atomic *msg,
			const struct fabsim_ioc_list *compare,
			const struct fabsim_ioc_list *result, uint64_t flags,
			bool inject_call);
	/* fi_atomicvalid and its kin: the elements one call takes, or a
	 * negative error. */
	int (*valid)(struct fid_ep *ep, enum fabsim_atomic_kind kind,
		     enum fi_datatype datatype, enum fi_op op, size_t *count);
	fabsim_op_flags_fn op_flags;
	uint64_t atomic_flags; /* of the defaults, those an atomic takes */
};

ssize_t fabsim_atomic_write(struct fid_ep *ep, const void *buf, size_t count,
			    void *desc, fi_addr_t dest, uint64_t addr,
			    uint64_t key, enum fi_datatype datatype,
			    enum fi_op op, void *context);
ssize_t fabsim_atomic_writev(struct fid_ep *ep, const struct fi_ioc *iov,
			     void **desc, size_t count, fi_addr_t dest,
			     uint64_t addr, uint64_t key,
			     enum fi_datatype datatype, enum fi_op op,
			     void *context);
ssize_t fabsim_atomic_writemsg(struct fid_ep *ep,
			       const struct fi_msg_atomic *msg, uint64_t flags);
ssize_t fabsim_atomic_inject(struct fid_ep *ep, const void *buf, size_t count,
			     fi_addr_t dest, uint64_t addr, uint64_t key,
			     enum fi_datatype datatype, enum fi_op op);
ssize_t fabsim_atomic_readwrite(struct fid_ep *ep, const void *buf,
				size_t count, void *desc, void *result,
				void *result_desc, fi_addr_t dest,
				uint64_t addr, uint64_t key,
				enum fi_datatype datatype, enum fi_op op,
				void *context);
ssize_t fabsim_atomic_readwritev(struct fid_ep *ep, const struct fi_ioc *iov,
				 void **desc, size_t count,
				 struct fi_ioc *resultv, void **result_desc,
				 size_t result_count, fi_addr_t dest,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context);
ssize_t fabsim_atomic_readwritemsg(struct fid_ep *ep,
				   const struct fi_msg_atomic *msg,
				   struct fi_ioc *resultv, void **result_desc,
				   size_t result_count, uint64_t flags);
ssize_t fabsim_atomic_compwrite(struct fid_ep *ep, const void *buf,
				size_t count, void *desc, const void *compare,
				void *compare_desc, void *result,
				void *result_desc, fi_addr_t dest,
				uint64_t addr, uint64_t key,
				enum fi_datatype datatype, enum fi_op op,
				void *context);
ssize_t fabsim_atomic_compwritev(struct fid_ep *ep, const struct fi_ioc *iov,
				 void **desc, size_t count,
				 const struct fi_ioc *comparev,
				 void **compare_desc, size_t compare_count,
				 struct fi_ioc *resultv, void **result_desc,
				 size_t result_count, fi_addr_t dest,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context);
ssize_t fabsim_atomic_compwritemsg(struct fid_ep *ep,
				   const struct fi_msg_atomic *msg,
				   const struct fi_ioc *comparev,
				   void **compare_desc, size_t compare_count,
				   struct fi_ioc *resultv, void **result_desc,
				   size_t result_count, uint64_t flags);
int fabsim_atomic_writevalid(struct fid_ep *ep, enum fi_datatype datatype,
			     enum fi_op op, size_t *count);
int fabsim_atomic_readwritevalid(struct fid_ep *ep, enum fi_datatype datatype,
				 enum fi_op op, size_t *count);
int fabsim_atomic_compwritevalid(struct fid_ep *ep, enum fi_datatype datatype,
				 enum fi_op op, size_t *count);

#define FABSIM_ATOMIC_ENTRY_POINTS                                \
	{                                                         \
		.size = sizeof(struct fi_ops_atomic),             \
		.write = fabsim_atomic_write,                     \
		.writev = fabsim_atomic_writev,                   \
		.writemsg = fabsim_atomic_writemsg,               \
		.inject = fabsim_atomic_inject,                   \
		.readwrite = fabsim_atomic_readwrite,             \
		.readwritev = fabsim_atomic_readwritev,           \
		.readwritemsg = fabsim_atomic_readwritemsg,       \
		.compwrite = fabsim_atomic_compwrite,             \
		.compwritev = fabsim_atomic_compwritev,           \
		.compwritemsg = fabsim_atomic_compwritemsg,       \
		.writevalid = fabsim_atomic_writevalid,           \
		.readwritevalid = fabsim_atomic_readwritevalid,   \
		.compwritevalid = fabsim_atomic_compwritevalid,   \
	}

#ifdef __cplusplus
}
#endif

#endif
