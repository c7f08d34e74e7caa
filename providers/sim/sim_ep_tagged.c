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

static ssize_t tagged_send(struct fid_ep *fid, const struct fi_msg_tagged *msg,
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
		.tag = msg->tag,
		.flags = flags | (inject_call ? SIM_INJECT_CALL : 0),
		.comp_flags = FI_SEND | FI_TAGGED,
	};

	if (flags & ~TAG_SEND_FLAGS)
		return -FI_EBADFLAGS;
	return sim_xfer_post(sim_ep_of(fid), &x);
}

static ssize_t tagged_recv(struct fid_ep *fid, const struct fi_msg_tagged *msg,
			   uint64_t flags)
{
	struct sim_recv_req r = {
		.iov = msg->msg_iov,
		.desc = msg->desc,
		.iov_count = msg->iov_count,
		.addr = msg->addr,
		.context = msg->context,
		.tag = msg->tag,
		.ignore = msg->ignore,
		.flags = flags,
		.tagged = true,
	};

	if (flags & ~TAG_RECV_FLAGS)
		return -FI_EBADFLAGS;
	/* fi_tagged(3): DISCARD goes with PEEK or CLAIM. */
	if ((flags & FI_DISCARD) && !(flags & (FI_PEEK | FI_CLAIM)))
		return -FI_EINVAL;
	return sim_recv_post(sim_ep_of(fid), &r);
}

struct fabsim_tagged_ops sim_tagged_ops = {
	.ops = FABSIM_TAGGED_ENTRY_POINTS,
	.send = tagged_send,
	.recv = tagged_recv,
	.op_flags = sim_ep_op_flags,
	.send_flags = TAG_SEND_FLAGS,
	/* PEEK, CLAIM and DISCARD only where the caller says so. */
	.recv_flags = FI_COMPLETION,
};
