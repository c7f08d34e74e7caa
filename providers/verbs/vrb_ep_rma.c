/* SPDX-License-Identifier: BSD-2-Clause
 * fi_ops_rma (fi_rma(3)): RDMA read and write to one remote segment
 * (rma_iov_limit 1). A write with remote CQ data is an RDMA write with
 * immediate data, which consumes a receive at the target (FI_RX_CQ_DATA). */
#include "verbs.h"

#define RMA_FLAGS                                                         \
	(FI_REMOTE_CQ_DATA | FI_COMPLETION | FI_MORE | FI_INJECT |        \
	 FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | \
	 FI_FENCE)

static ssize_t rma_post(struct fid_ep *fid, bool write,
			const struct fi_msg_rma *msg, uint64_t flags,
			bool inject_call)
{
	struct vrb_send s = {
		.kind = write ? VRB_OP_WRITE : VRB_OP_READ,
		.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
		.iov = msg->msg_iov,
		.desc = msg->desc,
		.count = msg->iov_count,
		.context = msg->context,
		.flags = flags,
		.data = msg->data,
		.inject_call = inject_call,
	};

	if (msg->rma_iov_count != 1 || !msg->rma_iov) {
		FI_WARN(&vrb_prov, FI_LOG_EP_DATA, "fi_%smsg: one remote "
			"segment expected (rma_iov_limit 1)\n",
			write ? "write" : "read");
		return -FI_EINVAL;
	}
	if (flags & ~RMA_FLAGS)
		return -FI_EBADFLAGS;
	if (!write && (flags & (FI_INJECT | FI_REMOTE_CQ_DATA)))
		return -FI_EINVAL;
	if (msg->rma_iov[0].key > UINT32_MAX) {
		FI_WARN(&vrb_prov, FI_LOG_EP_DATA, "remote key %#llx: verbs "
			"keys are 32 bits\n",
			(unsigned long long)msg->rma_iov[0].key);
		return -FI_EINVAL;
	}
	s.remote_addr = msg->rma_iov[0].addr;
	s.rkey = (uint32_t)msg->rma_iov[0].key;
	return vrb_post_send(vrb_ep_of(fid), &s);
}

struct fabsim_rma_ops vrb_rma_ops = {
	.ops = FABSIM_RMA_ENTRY_POINTS,
	.post = rma_post,
	.op_flags = vrb_ep_op_flags,
	.rma_flags = RMA_FLAGS,
};
