/* SPDX-License-Identifier: BSD-2-Clause
 * fi_ops_tagged (fi_tagged(3)): tagged sends and receives, with PEEK,
 * CLAIM and DISCARD on messages that arrived before their receive. */
#include "sim_xfer.h"

#define TAG_SEND_FLAGS                                                    \
	(FI_REMOTE_CQ_DATA | FI_COMPLETION | FI_MORE | FI_INJECT |        \
	 FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | \
	 FI_FENCE)
#define TAG_RECV_FLAGS                                                    \
	(FI_COMPLETION | FI_MORE | FI_PEEK | FI_CLAIM | FI_DISCARD)

static ssize_t tsend_common(struct sim_ep *ep, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t dest,
			    uint64_t tag, void *context, uint64_t data,
			    uint64_t flags)
{
	struct sim_xfer x = {
		.opcode = NIC_WR_SEND,
		.iov = iov,
		.desc = desc,
		.iov_count = count,
		.addr = dest,
		.context = context,
		.data = data,
		.tag = tag,
		.flags = flags,
		.comp_flags = FI_SEND | FI_TAGGED,
	};

	if (flags & ~(TAG_SEND_FLAGS | SIM_INJECT_CALL))
		return -FI_EBADFLAGS;
	return sim_xfer_post(ep, &x);
}

static ssize_t tagged_send(struct fid_ep *fid, const void *buf, size_t len,
			   void *desc, fi_addr_t dest, uint64_t tag,
			   void *context)
{
	struct iovec iov = { (void *)buf, len };
	struct sim_ep *ep = sim_ep_of(fid);

	return tsend_common(ep, &iov, &desc, 1, dest, tag, context, 0,
			    ep->tx_op_flags & TAG_SEND_FLAGS & ~FI_REMOTE_CQ_DATA);
}

static ssize_t tagged_sendv(struct fid_ep *fid, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t dest,
			    uint64_t tag, void *context)
{
	struct sim_ep *ep = sim_ep_of(fid);

	return tsend_common(ep, iov, desc, count, dest, tag, context, 0,
			    ep->tx_op_flags & TAG_SEND_FLAGS & ~FI_REMOTE_CQ_DATA);
}

static ssize_t tagged_sendmsg(struct fid_ep *fid,
			      const struct fi_msg_tagged *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return tsend_common(sim_ep_of(fid), msg->msg_iov, msg->desc,
			    msg->iov_count, msg->addr, msg->tag, msg->context,
			    msg->data, flags);
}

static ssize_t tagged_senddata(struct fid_ep *fid, const void *buf,
			       size_t len, void *desc, uint64_t data,
			       fi_addr_t dest, uint64_t tag, void *context)
{
	struct iovec iov = { (void *)buf, len };
	struct sim_ep *ep = sim_ep_of(fid);

	return tsend_common(ep, &iov, &desc, 1, dest, tag, context, data,
			    (ep->tx_op_flags & TAG_SEND_FLAGS) | FI_REMOTE_CQ_DATA);
}

static ssize_t tagged_inject(struct fid_ep *fid, const void *buf, size_t len,
			     fi_addr_t dest, uint64_t tag)
{
	struct iovec iov = { (void *)buf, len };

	return tsend_common(sim_ep_of(fid), &iov, NULL, 1, dest, tag, NULL, 0,
			    FI_INJECT | SIM_INJECT_CALL);
}

static ssize_t tagged_injectdata(struct fid_ep *fid, const void *buf,
				 size_t len, uint64_t data, fi_addr_t dest,
				 uint64_t tag)
{
	struct iovec iov = { (void *)buf, len };

	return tsend_common(sim_ep_of(fid), &iov, NULL, 1, dest, tag, NULL,
			    data, FI_INJECT | FI_REMOTE_CQ_DATA | SIM_INJECT_CALL);
}

static ssize_t trecv_common(struct sim_ep *ep, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t src,
			    uint64_t tag, uint64_t ignore, void *context,
			    uint64_t flags)
{
	struct sim_recv_req r = {
		.iov = iov,
		.desc = desc,
		.iov_count = count,
		.addr = src,
		.context = context,
		.tag = tag,
		.ignore = ignore,
		.flags = flags,
		.tagged = true,
	};

	if (flags & ~TAG_RECV_FLAGS)
		return -FI_EBADFLAGS;
	/* fi_tagged(3): DISCARD goes with PEEK or CLAIM. */
	if ((flags & FI_DISCARD) && !(flags & (FI_PEEK | FI_CLAIM)))
		return -FI_EINVAL;
	return sim_recv_post(ep, &r);
}

static ssize_t tagged_recv(struct fid_ep *fid, void *buf, size_t len,
			   void *desc, fi_addr_t src, uint64_t tag,
			   uint64_t ignore, void *context)
{
	struct iovec iov = { buf, len };
	struct sim_ep *ep = sim_ep_of(fid);

	return trecv_common(ep, &iov, &desc, 1, src, tag, ignore, context,
			    ep->rx_op_flags & FI_COMPLETION);
}

static ssize_t tagged_recvv(struct fid_ep *fid, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t src,
			    uint64_t tag, uint64_t ignore, void *context)
{
	struct sim_ep *ep = sim_ep_of(fid);

	return trecv_common(ep, iov, desc, count, src, tag, ignore, context,
			    ep->rx_op_flags & FI_COMPLETION);
}

static ssize_t tagged_recvmsg(struct fid_ep *fid,
			      const struct fi_msg_tagged *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return trecv_common(sim_ep_of(fid), msg->msg_iov, msg->desc,
			    msg->iov_count, msg->addr, msg->tag, msg->ignore,
			    msg->context, flags);
}

struct fi_ops_tagged sim_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = tagged_recv,
	.recvv = tagged_recvv,
	.recvmsg = tagged_recvmsg,
	.send = tagged_send,
	.sendv = tagged_sendv,
	.sendmsg = tagged_sendmsg,
	.inject = tagged_inject,
	.senddata = tagged_senddata,
	.injectdata = tagged_injectdata,
};
