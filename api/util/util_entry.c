/* SPDX-License-Identifier: BSD-2-Clause
 * The short forms of fi_msg(3), fi_tagged(3) and fi_rma(3) as their msg
 * forms (fabsim/entry.h). */
#include <fabsim/entry.h>

#include <rdma/fi_errno.h>

/* ---- fi_msg(3) ------------------------------------------------------------------- */

static const struct fabsim_msg_ops *msg_ops(struct fid_ep *ep)
{
	return FABSIM_ENTRY_DESCRIPTOR(struct fabsim_msg_ops, ep->msg);
}

static uint64_t msg_send_defaults(struct fid_ep *ep)
{
	const struct fabsim_msg_ops *m = msg_ops(ep);

	return m->op_flags(ep, FI_TRANSMIT) & m->send_flags;
}

static ssize_t msg_send(struct fid_ep *ep, const struct iovec *iov,
			void **desc, size_t count, fi_addr_t dest,
			void *context, uint64_t data, uint64_t flags,
			bool inject_call)
{
	struct fi_msg msg = {
		.msg_iov = iov,
		.desc = desc,
		.iov_count = count,
		.addr = dest,
		.context = context,
		.data = data,
	};

	return msg_ops(ep)->send(ep, &msg, flags, inject_call);
}

static ssize_t msg_recv(struct fid_ep *ep, const struct iovec *iov,
			void **desc, size_t count, fi_addr_t src,
			void *context)
{
	const struct fabsim_msg_ops *m = msg_ops(ep);
	struct fi_msg msg = {
		.msg_iov = iov,
		.desc = desc,
		.iov_count = count,
		.addr = src,
		.context = context,
	};

	return m->recv(ep, &msg, m->op_flags(ep, FI_RECV) & m->recv_flags);
}

ssize_t fabsim_msg_recv(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src, void *context)
{
	struct iovec iov = { buf, len };

	return msg_recv(ep, &iov, &desc, 1, src, context);
}

ssize_t fabsim_msg_recvv(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src,
			 void *context)
{
	return msg_recv(ep, iov, desc, count, src, context);
}

ssize_t fabsim_msg_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
			   uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return msg_ops(ep)->recv(ep, msg, flags);
}

ssize_t fabsim_msg_send(struct fid_ep *ep, const void *buf, size_t len,
			void *desc, fi_addr_t dest, void *context)
{
	struct iovec iov = { (void *)buf, len };

	return msg_send(ep, &iov, &desc, 1, dest, context, 0,
			msg_send_defaults(ep) & ~FI_REMOTE_CQ_DATA, false);
}

ssize_t fabsim_msg_sendv(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t dest,
			 void *context)
{
	return msg_send(ep, iov, desc, count, dest, context, 0,
			msg_send_defaults(ep) & ~FI_REMOTE_CQ_DATA, false);
}

ssize_t fabsim_msg_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
			   uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return msg_ops(ep)->send(ep, msg, flags, false);
}

ssize_t fabsim_msg_inject(struct fid_ep *ep, const void *buf, size_t len,
			  fi_addr_t dest)
{
	struct iovec iov = { (void *)buf, len };

	return msg_send(ep, &iov, NULL, 1, dest, NULL, 0, FI_INJECT, true);
}

ssize_t fabsim_msg_senddata(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, uint64_t data, fi_addr_t dest,
			    void *context)
{
	struct iovec iov = { (void *)buf, len };

	return msg_send(ep, &iov, &desc, 1, dest, context, data,
			msg_send_defaults(ep) | FI_REMOTE_CQ_DATA, false);
}

ssize_t fabsim_msg_injectdata(struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest)
{
	struct iovec iov = { (void *)buf, len };

	return msg_send(ep, &iov, NULL, 1, dest, NULL, data,
			FI_INJECT | FI_REMOTE_CQ_DATA, true);
}

/* ---- fi_tagged(3) ----------------------------------------------------------------- */

static const struct fabsim_tagged_ops *tagged_ops(struct fid_ep *ep)
{
	return FABSIM_ENTRY_DESCRIPTOR(struct fabsim_tagged_ops, ep->tagged);
}

static uint64_t tagged_send_defaults(struct fid_ep *ep)
{
	const struct fabsim_tagged_ops *t = tagged_ops(ep);

	return t->op_flags(ep, FI_TRANSMIT) & t->send_flags;
}

static ssize_t tagged_send(struct fid_ep *ep, const struct iovec *iov,
			   void **desc, size_t count, fi_addr_t dest,
			   uint64_t tag, void *context, uint64_t data,
			   uint64_t flags, bool inject_call)
{
	struct fi_msg_tagged msg = {
		.msg_iov = iov,
		.desc = desc,
		.iov_count = count,
		.addr = dest,
		.tag = tag,
		.context = context,
		.data = data,
	};

	return tagged_ops(ep)->send(ep, &msg, flags, inject_call);
}

static ssize_t tagged_recv(struct fid_ep *ep, const struct iovec *iov,
			   void **desc, size_t count, fi_addr_t src,
			   uint64_t tag, uint64_t ignore, void *context)
{
	const struct fabsim_tagged_ops *t = tagged_ops(ep);
	struct fi_msg_tagged msg = {
		.msg_iov = iov,
		.desc = desc,
		.iov_count = count,
		.addr = src,
		.tag = tag,
		.ignore = ignore,
		.context = context,
	};

	return t->recv(ep, &msg, t->op_flags(ep, FI_RECV) & t->recv_flags);
}

ssize_t fabsim_tagged_recv(struct fid_ep *ep, void *buf, size_t len,
			   void *desc, fi_addr_t src, uint64_t tag,
			   uint64_t ignore, void *context)
{
	struct iovec iov = { buf, len };

	return tagged_recv(ep, &iov, &desc, 1, src, tag, ignore, context);
}

ssize_t fabsim_tagged_recvv(struct fid_ep *ep, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t src,
			    uint64_t tag, uint64_t ignore, void *context)
{
	return tagged_recv(ep, iov, desc, count, src, tag, ignore, context);
}

ssize_t fabsim_tagged_recvmsg(struct fid_ep *ep,
			      const struct fi_msg_tagged *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return tagged_ops(ep)->recv(ep, msg, flags);
}

ssize_t fabsim_tagged_send(struct fid_ep *ep, const void *buf, size_t len,
			   void *desc, fi_addr_t dest, uint64_t tag,
			   void *context)
{
	struct iovec iov = { (void *)buf, len };

	return tagged_send(ep, &iov, &desc, 1, dest, tag, context, 0,
			   tagged_send_defaults(ep) & ~FI_REMOTE_CQ_DATA,
			   false);
}

ssize_t fabsim_tagged_sendv(struct fid_ep *ep, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t dest,
			    uint64_t tag, void *context)
{
	return tagged_send(ep, iov, desc, count, dest, tag, context, 0,
			   tagged_send_defaults(ep) & ~FI_REMOTE_CQ_DATA,
			   false);
}

ssize_t fabsim_tagged_sendmsg(struct fid_ep *ep,
			      const struct fi_msg_tagged *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return tagged_ops(ep)->send(ep, msg, flags, false);
}

ssize_t fabsim_tagged_inject(struct fid_ep *ep, const void *buf, size_t len,
			     fi_addr_t dest, uint64_t tag)
{
	struct iovec iov = { (void *)buf, len };

	return tagged_send(ep, &iov, NULL, 1, dest, tag, NULL, 0, FI_INJECT,
			   true);
}

ssize_t fabsim_tagged_senddata(struct fid_ep *ep, const void *buf,
			       size_t len, void *desc, uint64_t data,
			       fi_addr_t dest, uint64_t tag, void *context)
{
	struct iovec iov = { (void *)buf, len };

	return tagged_send(ep, &iov, &desc, 1, dest, tag, context, data,
			   tagged_send_defaults(ep) | FI_REMOTE_CQ_DATA, false);
}

ssize_t fabsim_tagged_injectdata(struct fid_ep *ep, const void *buf,
				 size_t len, uint64_t data, fi_addr_t dest,
				 uint64_t tag)
{
	struct iovec iov = { (void *)buf, len };

	return tagged_send(ep, &iov, NULL, 1, dest, tag, NULL, data,
			   FI_INJECT | FI_REMOTE_CQ_DATA, true);
}

/* ---- fi_rma(3) --------------------------------------------------------------------- */

static const struct fabsim_rma_ops *rma_ops(struct fid_ep *ep)
{
	return FABSIM_ENTRY_DESCRIPTOR(struct fabsim_rma_ops, ep->rma);
}

static uint64_t rma_defaults(struct fid_ep *ep)
{
	const struct fabsim_rma_ops *r = rma_ops(ep);

	return r->op_flags(ep, FI_TRANSMIT) & r->rma_flags &
	       ~FI_REMOTE_CQ_DATA;
}

/* One remote segment as long as the local buffers. */
static ssize_t rma_post(struct fid_ep *ep, bool write,
			const struct iovec *iov, void **desc, size_t count,
			fi_addr_t peer, uint64_t addr, uint64_t key,
			void *context, uint64_t data, uint64_t flags,
			bool inject_call)
{
	struct fi_rma_iov segment = { .addr = addr, .len = 0, .key = key };
	struct fi_msg_rma msg = {
		.msg_iov = iov,
		.desc = desc,
		.iov_count = count,
		.addr = peer,
		.rma_iov = &segment,
		.rma_iov_count = 1,
		.context = context,
		.data = data,
	};

	for (size_t i = 0; iov && i < count; i++)
		segment.len += iov[i].iov_len;
	return rma_ops(ep)->post(ep, write, &msg, flags, inject_call);
}

ssize_t fabsim_rma_read(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src, uint64_t addr, uint64_t key,
			void *context)
{
	struct iovec iov = { buf, len };

	return rma_post(ep, false, &iov, &desc, 1, src, addr, key, context, 0,
			rma_defaults(ep) & ~FI_INJECT, false);
}

ssize_t fabsim_rma_readv(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src,
			 uint64_t addr, uint64_t key, void *context)
{
	return rma_post(ep, false, iov, desc, count, src, addr, key, context,
			0, rma_defaults(ep) & ~FI_INJECT, false);
}

ssize_t fabsim_rma_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			   uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return rma_ops(ep)->post(ep, false, msg, flags, false);
}

ssize_t fabsim_rma_write(struct fid_ep *ep, const void *buf, size_t len,
			 void *desc, fi_addr_t dest, uint64_t addr,
			 uint64_t key, void *context)
{
	struct iovec iov = { (void *)buf, len };

	return rma_post(ep, true, &iov, &desc, 1, dest, addr, key, context, 0,
			rma_defaults(ep), false);
}

ssize_t fabsim_rma_writev(struct fid_ep *ep, const struct iovec *iov,
			  void **desc, size_t count, fi_addr_t dest,
			  uint64_t addr, uint64_t key, void *context)
{
	return rma_post(ep, true, iov, desc, count, dest, addr, key, context,
			0, rma_defaults(ep), false);
}

ssize_t fabsim_rma_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			    uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return rma_ops(ep)->post(ep, true, msg, flags, false);
}

ssize_t fabsim_rma_inject(struct fid_ep *ep, const void *buf, size_t len,
			  fi_addr_t dest, uint64_t addr, uint64_t key)
{
	struct iovec iov = { (void *)buf, len };

	return rma_post(ep, true, &iov, NULL, 1, dest, addr, key, NULL, 0,
			FI_INJECT, true);
}

ssize_t fabsim_rma_writedata(struct fid_ep *ep, const void *buf, size_t len,
			     void *desc, uint64_t data, fi_addr_t dest,
			     uint64_t addr, uint64_t key, void *context)
{
	struct iovec iov = { (void *)buf, len };

	return rma_post(ep, true, &iov, &desc, 1, dest, addr, key, context,
			data, rma_defaults(ep) | FI_REMOTE_CQ_DATA, false);
}

ssize_t fabsim_rma_injectdata(struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest, uint64_t addr,
			      uint64_t key)
{
	struct iovec iov = { (void *)buf, len };

	return rma_post(ep, true, &iov, NULL, 1, dest, addr, key, NULL, data,
			FI_INJECT | FI_REMOTE_CQ_DATA, true);
}
