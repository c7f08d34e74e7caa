/* SPDX-License-Identifier: BSD-2-Clause
 * fi_ops_rma (fi_rma(3)): RDMA reads and writes, with remote CQ data. */
#include "sim_xfer.h"

#define RMA_FLAGS                                                         \
	(FI_REMOTE_CQ_DATA | FI_COMPLETION | FI_MORE | FI_INJECT |        \
	 FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | \
	 FI_FENCE)

static ssize_t rma_post(struct fid_ep *fid, bool write,
			const struct fi_msg_rma *msg, uint64_t flags,
			bool inject_call)
{
	struct sim_xfer x = {
		.opcode = write ? NIC_WR_WRITE : NIC_WR_READ,
		.iov = msg->msg_iov,
		.desc = msg->desc,
		.iov_count = msg->iov_count,
		.addr = msg->addr,
		.rma = msg->rma_iov,
		.rma_count = msg->rma_iov_count,
		.context = msg->context,
		.data = write ? msg->data : 0,
		.flags = flags | (inject_call ? SIM_INJECT_CALL : 0),
		.comp_flags = FI_RMA | (write ? FI_WRITE : FI_READ),
	};

	if (flags & ~RMA_FLAGS)
		return -FI_EBADFLAGS;
	if (!write && (flags & (FI_INJECT | FI_REMOTE_CQ_DATA)))
		return -FI_EBADFLAGS;
	return sim_xfer_post(sim_ep_of(fid), &x);
}

struct fabsim_rma_ops sim_rma_ops = {
	.ops = FABSIM_RMA_ENTRY_POINTS,
	.post = rma_post,
	.op_flags = sim_ep_op_flags,
	.rma_flags = RMA_FLAGS,
};
