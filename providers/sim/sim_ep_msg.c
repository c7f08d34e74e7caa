/* SPDX-License-Identifier: BSD-2-Clause
 * fi_ops_msg (fi_msg(3)): untagged sends and receives. */
#include "sim_xfer.h"

#define MSG_SEND_FLAGS                                                    \
	(FI_REMOTE_CQ_DATA | FI_COMPLETION | FI_MORE | FI_INJECT |        \
	 FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | \
	 FI_FENCE)
#define MSG_RECV_FLAGS (FI_COMPLETION | FI_MORE | FI_MULTI_RECV)

static ssize_t msg_send(struct fid_ep *fid, const struct fi_msg *msg,
			uint64_t flags, bool inject_call)
{
	struct sim_xfer x = {
		.opcode = NIC_WR_SEND,
		.iov = msg->msg_iov,
		.desc = msg->desc,
		.iov_count = msg->iov_count,
		.addr = msg->addr,
		.context = msg->context,
		.data = msg->data,
		.flags = flags | (inject_call ? SIM_INJECT_CALL : 0),
		.comp_flags = FI_SEND | FI_MSG,
	};

	if (flags & ~MSG_SEND_FLAGS)
		return -FI_EBADFLAGS;
	return sim_xfer_post(sim_ep_of(fid), &x);
}

static ssize_t msg_recv(struct fid_ep *fid, const struct fi_msg *msg,
			uint64_t flags)
{
	struct sim_ep *ep = sim_ep_of(fid);
	struct sim_recv_req r = {
		.iov = msg->msg_iov,
		.desc = msg->desc,
		.iov_count = msg->iov_count,
		.addr = msg->addr,
		.context = msg->context,
		.flags = flags,
	};

	if (flags & ~MSG_RECV_FLAGS)
		return -FI_EBADFLAGS;
	if ((flags & FI_MULTI_RECV) && !(ep->caps & FI_MULTI_RECV))
		return -FI_EBADFLAGS;
	return sim_recv_post(ep, &r);
}

struct fabsim_msg_ops sim_msg_ops = {
	.ops = FABSIM_MSG_ENTRY_POINTS,
	.send = msg_send,
	.recv = msg_recv,
	.op_flags = sim_ep_op_flags,
	.send_flags = MSG_SEND_FLAGS,
	.recv_flags = MSG_RECV_FLAGS,
};
