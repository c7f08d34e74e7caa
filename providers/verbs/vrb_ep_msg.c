/* SPDX-License-Identifier: BSD-2-Clause
 * fi_ops_msg (fi_msg(3)): sends and receives on the connection. Remote CQ
 * data rides in the send's immediate data. */
#include "verbs.h"

#define SEND_FLAGS                                                        \
	(FI_REMOTE_CQ_DATA | FI_COMPLETION | FI_MORE | FI_INJECT |        \
	 FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | \
	 FI_FENCE)
#define RECV_FLAGS (FI_COMPLETION | FI_MORE)

static ssize_t send_common(struct vrb_ep *ep, const struct iovec *iov,
			   void **desc, size_t count, void *context,
			   uint64_t data, uint64_t flags, bool inject_call)
{
	struct vrb_send s = {
		.kind = VRB_OP_SEND,
		.opcode = IBV_WR_SEND,
		.iov = iov,
		.desc = desc,
		.count = count,
		.context = context,
		.flags = flags,
		.data = data,
		.inject_call = inject_call,
	};

	if (flags & ~SEND_FLAGS)
		return -FI_EBADFLAGS;
	return vrb_post_send(ep, &s);
}

static uint64_t tx_flags(struct vrb_ep *ep)
{
	return ep->tx_op_flags & SEND_FLAGS & ~FI_REMOTE_CQ_DATA;
}

static ssize_t msg_send(struct fid_ep *fid, const void *buf, size_t len,
			void *desc, fi_addr_t dest, void *context)
{
	struct iovec iov = { (void *)buf, len };
	struct vrb_ep *ep = vrb_ep_of(fid);

	return send_common(ep, &iov, &desc, 1, context, 0, tx_flags(ep), false);
}

static ssize_t msg_sendv(struct fid_ep *fid, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t dest,
			 void *context)
{
	struct vrb_ep *ep = vrb_ep_of(fid);

	return send_common(ep, iov, desc, count, context, 0, tx_flags(ep),
			   false);
}

static ssize_t msg_sendmsg(struct fid_ep *fid, const struct fi_msg *msg,
			   uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return send_common(vrb_ep_of(fid), msg->msg_iov, msg->desc,
			   msg->iov_count, msg->context, msg->data, flags,
			   false);
}

static ssize_t msg_senddata(struct fid_ep *fid, const void *buf, size_t len,
			    void *desc, uint64_t data, fi_addr_t dest,
			    void *context)
{
	struct iovec iov = { (void *)buf, len };
	struct vrb_ep *ep = vrb_ep_of(fid);

	return send_common(ep, &iov, &desc, 1, context, data,
			   tx_flags(ep) | FI_REMOTE_CQ_DATA, false);
}

static ssize_t msg_inject(struct fid_ep *fid, const void *buf, size_t len,
			  fi_addr_t dest)
{
	struct iovec iov = { (void *)buf, len };

	return send_common(vrb_ep_of(fid), &iov, NULL, 1, NULL, 0, FI_INJECT,
			   true);
}

static ssize_t msg_injectdata(struct fid_ep *fid, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest)
{
	struct iovec iov = { (void *)buf, len };

	return send_common(vrb_ep_of(fid), &iov, NULL, 1, NULL, data,
			   FI_INJECT | FI_REMOTE_CQ_DATA, true);
}

static ssize_t msg_recv(struct fid_ep *fid, void *buf, size_t len, void *desc,
			fi_addr_t src, void *context)
{
	struct iovec iov = { buf, len };
	struct vrb_ep *ep = vrb_ep_of(fid);

	return vrb_post_recv(ep, &iov, &desc, 1, context,
			     ep->rx_op_flags & RECV_FLAGS);
}

static ssize_t msg_recvv(struct fid_ep *fid, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src,
			 void *context)
{
	struct vrb_ep *ep = vrb_ep_of(fid);

	return vrb_post_recv(ep, iov, desc, count, context,
			     ep->rx_op_flags & RECV_FLAGS);
}

static ssize_t msg_recvmsg(struct fid_ep *fid, const struct fi_msg *msg,
			   uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	if (flags & ~RECV_FLAGS)
		return -FI_EBADFLAGS;
	return vrb_post_recv(vrb_ep_of(fid), msg->msg_iov, msg->desc,
			     msg->iov_count, msg->context, flags);
}

struct fi_ops_msg vrb_msg_ops = {
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
