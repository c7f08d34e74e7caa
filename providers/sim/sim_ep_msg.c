/* SPDX-License-Identifier: BSD-2-Clause
 * fi_ops_msg (fi_msg(3)): untagged sends and receives. */
#include "sim_xfer.h"

#define MSG_SEND_FLAGS                                                    \
	(FI_REMOTE_CQ_DATA | FI_COMPLETION | FI_MORE | FI_INJECT |        \
	 FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | \
	 FI_FENCE)
#define MSG_RECV_FLAGS (FI_COMPLETION | FI_MORE | FI_MULTI_RECV)

static ssize_t send_common(struct sim_ep *ep, const struct iovec *iov,
			   void **desc, size_t count, fi_addr_t dest,
			   void *context, uint64_t data, uint64_t flags)
{
	struct sim_xfer x = {
		.opcode = NIC_WR_SEND,
		.iov = iov,
		.desc = desc,
		.iov_count = count,
		.addr = dest,
		.context = context,
		.data = data,
		.flags = flags,
		.comp_flags = FI_SEND | FI_MSG,
	};

	if (flags & ~(MSG_SEND_FLAGS | SIM_INJECT_CALL))
		return -FI_EBADFLAGS;
	return sim_xfer_post(ep, &x);
}

static ssize_t msg_send(struct fid_ep *fid, const void *buf, size_t len,
			void *desc, fi_addr_t dest, void *context)
{
	struct iovec iov = { (void *)buf, len };
	struct sim_ep *ep = sim_ep_of(fid);

	return send_common(ep, &iov, &desc, 1, dest, context, 0,
			   ep->tx_op_flags & MSG_SEND_FLAGS & ~FI_REMOTE_CQ_DATA);
}

static ssize_t msg_sendv(struct fid_ep *fid, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t dest,
			 void *context)
{
	struct sim_ep *ep = sim_ep_of(fid);

	return send_common(ep, iov, desc, count, dest, context, 0,
			   ep->tx_op_flags & MSG_SEND_FLAGS & ~FI_REMOTE_CQ_DATA);
}

static ssize_t msg_sendmsg(struct fid_ep *fid, const struct fi_msg *msg,
			   uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return send_common(sim_ep_of(fid), msg->msg_iov, msg->desc,
			   msg->iov_count, msg->addr, msg->context, msg->data,
			   flags);
}

static ssize_t msg_senddata(struct fid_ep *fid, const void *buf, size_t len,
			    void *desc, uint64_t data, fi_addr_t dest,
			    void *context)
{
	struct iovec iov = { (void *)buf, len };
	struct sim_ep *ep = sim_ep_of(fid);

	return send_common(ep, &iov, &desc, 1, dest, context, data,
			   (ep->tx_op_flags & MSG_SEND_FLAGS) | FI_REMOTE_CQ_DATA);
}

static ssize_t msg_inject(struct fid_ep *fid, const void *buf, size_t len,
			  fi_addr_t dest)
{
	struct iovec iov = { (void *)buf, len };

	return send_common(sim_ep_of(fid), &iov, NULL, 1, dest, NULL, 0,
			   FI_INJECT | SIM_INJECT_CALL);
}

static ssize_t msg_injectdata(struct fid_ep *fid, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest)
{
	struct iovec iov = { (void *)buf, len };

	return send_common(sim_ep_of(fid), &iov, NULL, 1, dest, NULL, data,
			   FI_INJECT | FI_REMOTE_CQ_DATA | SIM_INJECT_CALL);
}

static ssize_t recv_common(struct sim_ep *ep, const struct iovec *iov,
			   void **desc, size_t count, fi_addr_t src,
			   void *context, uint64_t flags)
{
	struct sim_recv_req r = {
		.iov = iov,
		.desc = desc,
		.iov_count = count,
		.addr = src,
		.context = context,
		.flags = flags,
	};

	if (flags & ~MSG_RECV_FLAGS)
		return -FI_EBADFLAGS;
	if ((flags & FI_MULTI_RECV) && !(ep->caps & FI_MULTI_RECV))
		return -FI_EBADFLAGS;
	return sim_recv_post(ep, &r);
}

static ssize_t msg_recv(struct fid_ep *fid, void *buf, size_t len, void *desc,
			fi_addr_t src, void *context)
{
	struct iovec iov = { buf, len };
	struct sim_ep *ep = sim_ep_of(fid);

	return recv_common(ep, &iov, &desc, 1, src, context,
			   ep->rx_op_flags & MSG_RECV_FLAGS);
}

static ssize_t msg_recvv(struct fid_ep *fid, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src,
			 void *context)
{
	struct sim_ep *ep = sim_ep_of(fid);

	return recv_common(ep, iov, desc, count, src, context,
			   ep->rx_op_flags & MSG_RECV_FLAGS);
}

static ssize_t msg_recvmsg(struct fid_ep *fid, const struct fi_msg *msg,
			   uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return recv_common(sim_ep_of(fid), msg->msg_iov, msg->desc,
			   msg->iov_count, msg->addr, msg->context, flags);
}

struct fi_ops_msg sim_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = msg_recv,
	.recvv = msg_recvv,
	.recvmsg = msg_recvmsg,
	.send = msg_send,
	.sendv = msg_sendv,
	.sendmsg = msg_sendmsg,
	.inject = msg_inject,
	.senddata = msg_senddata,
	.injectdata = msg_injectdata,
};
