/* SPDX-License-Identifier: BSD-2-Clause
 * fi_ops_msg (fi_msg(3)): sends and receives on the connection. Remote CQ
 * data rides in the send's immediate data. */
#include "verbs.h"

#define SEND_FLAGS                                                        \
	(FI_REMOTE_CQ_DATA | FI_COMPLETION | FI_MORE | FI_INJECT |        \
	 FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | \
	 FI_FENCE)
#define RECV_FLAGS (FI_COMPLETION | FI_MORE)

/* The peer is the connection's: msg->addr is not looked at. */
static ssize_t msg_send(struct fid_ep *fid, const struct fi_msg *msg,
			uint64_t flags, bool inject_call)
{
	struct vrb_send s = {
		.kind = VRB_OP_SEND,
		.opcode = IBV_WR_SEND,
		.iov = msg->msg_iov,
		.desc = msg->desc,
		.count = msg->iov_count,
		.context = msg->context,
		.flags = flags,
		.data = msg->data,
		.inject_call = inject_call,
	};

	if (flags & ~SEND_FLAGS)
		return -FI_EBADFLAGS;
	return vrb_post_send(vrb_ep_of(fid), &s);
}

static ssize_t msg_recv(struct fid_ep *fid, const struct fi_msg *msg,
			uint64_t flags)
{
	if (flags & ~RECV_FLAGS)
		return -FI_EBADFLAGS;
	return vrb_post_recv(vrb_ep_of(fid), msg->msg_iov, msg->desc,
			     msg->iov_count, msg->context, flags);
}

struct fabsim_msg_ops vrb_msg_ops = {
	.ops = FABSIM_MSG_ENTRY_POINTS,
	.send = msg_send,
	.recv = msg_recv,
	.op_flags = vrb_ep_op_flags,
	.send_flags = SEND_FLAGS,
	.recv_flags = RECV_FLAGS,
};
