/* SPDX-License-Identifier: BSD-2-Clause
 * fi_ops_rma (fi_rma(3)): RDMA read and write to one remote segment
 * (rma_iov_limit 1). A write with remote CQ data is an RDMA write with
 * immediate data, which consumes a receive at the target (FI_RX_CQ_DATA). */
#include "verbs.h"

#define RMA_FLAGS                                                         \
	(FI_REMOTE_CQ_DATA | FI_COMPLETION | FI_MORE | FI_INJECT |        \
	 FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | \
	 FI_FENCE)

static ssize_t rma_common(struct vrb_ep *ep, bool write,
			  const struct iovec *iov, void **desc, size_t count,
			  uint64_t addr, uint64_t key, void *context,
			  uint64_t data, uint64_t flags, bool inject_call)
{
	struct vrb_send s = {
		.kind = write ? VRB_OP_WRITE : VRB_OP_READ,
		.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
		.iov = iov,
		.desc = desc,
		.count = count,
		.context = context,
		.flags = flags,
		.data = data,
		.remote_addr = addr,
		.rkey = (uint32_t)key,
		.inject_call = inject_call,
	};

	if (flags & ~RMA_FLAGS)
		return -FI_EBADFLAGS;
	if (!write && (flags & (FI_INJECT | FI_REMOTE_CQ_DATA)))
		return -FI_EINVAL;
	if (key > UINT32_MAX) {
		FI_WARN(&vrb_prov, FI_LOG_EP_DATA, "remote key %#llx: verbs "
			"keys are 32 bits\n", (unsigned long long)key);
		return -FI_EINVAL;
	}
	return vrb_post_send(ep, &s);
}

static uint64_t def_flags(struct vrb_ep *ep)
{
	return ep->tx_op_flags & RMA_FLAGS & ~FI_REMOTE_CQ_DATA;
}

static ssize_t rma_msg(struct vrb_ep *ep, bool write,
		       const struct fi_msg_rma *msg, uint64_t flags)
{
	if (!msg || msg->rma_iov_count != 1 || !msg->rma_iov) {
		FI_WARN(&vrb_prov, FI_LOG_EP_DATA, "fi_%smsg: one remote "
			"segment expected (rma_iov_limit 1)\n",
			write ? "write" : "read");
		return -FI_EINVAL;
	}
	return rma_common(ep, write, msg->msg_iov, msg->desc, msg->iov_count,
			  msg->rma_iov[0].addr, msg->rma_iov[0].key,
			  msg->context, msg->data, flags, false);
}

static ssize_t rma_read(struct fid_ep *fid, void *buf, size_t len, void *desc,
			fi_addr_t src, uint64_t addr, uint64_t key,
			void *context)
{
	struct iovec iov = { buf, len };
	struct vrb_ep *ep = vrb_ep_of(fid);

	return rma_common(ep, false, &iov, &desc, 1, addr, key, context, 0,
			  def_flags(ep) & ~FI_INJECT, false);
}

static ssize_t rma_readv(struct fid_ep *fid, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src,
			 uint64_t addr, uint64_t key, void *context)
{
	struct vrb_ep *ep = vrb_ep_of(fid);

	return rma_common(ep, false, iov, desc, count, addr, key, context, 0,
			  def_flags(ep) & ~FI_INJECT, false);
}

static ssize_t rma_readmsg(struct fid_ep *fid, const struct fi_msg_rma *msg,
			   uint64_t flags)
{
	return rma_msg(vrb_ep_of(fid), false, msg, flags);
}

static ssize_t rma_write(struct fid_ep *fid, const void *buf, size_t len,
			 void *desc, fi_addr_t dest, uint64_t addr,
			 uint64_t key, void *context)
{
	struct iovec iov = { (void *)buf, len };
	struct vrb_ep *ep = vrb_ep_of(fid);

	return rma_common(ep, true, &iov, &desc, 1, addr, key, context, 0,
			  def_flags(ep), false);
}

static ssize_t rma_writev(struct fid_ep *fid, const struct iovec *iov,
			  void **desc, size_t count, fi_addr_t dest,
			  uint64_t addr, uint64_t key, void *context)
{
	struct vrb_ep *ep = vrb_ep_of(fid);

	return rma_common(ep, true, iov, desc, count, addr, key, context, 0,
			  def_flags(ep), false);
}

static ssize_t rma_writemsg(struct fid_ep *fid, const struct fi_msg_rma *msg,
			    uint64_t flags)
{
	return rma_msg(vrb_ep_of(fid), true, msg, flags);
}

static ssize_t rma_writedata(struct fid_ep *fid, const void *buf, size_t len,
			     void *desc, uint64_t data, fi_addr_t dest,
			     uint64_t addr, uint64_t key, void *context)
{
	struct iovec iov = { (void *)buf, len };
	struct vrb_ep *ep = vrb_ep_of(fid);

	return rma_common(ep, true, &iov, &desc, 1, addr, key, context, data,
			  def_flags(ep) | FI_REMOTE_CQ_DATA, false);
}

static ssize_t rma_inject(struct fid_ep *fid, const void *buf, size_t len,
			  fi_addr_t dest, uint64_t addr, uint64_t key)
{
	struct iovec iov = { (void *)buf, len };

	return rma_common(vrb_ep_of(fid), true, &iov, NULL, 1, addr, key, NULL,
			  0, FI_INJECT, true);
}

static ssize_t rma_injectdata(struct fid_ep *fid, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest, uint64_t addr,
			      uint64_t key)
{
	struct iovec iov = { (void *)buf, len };

	return rma_common(vrb_ep_of(fid), true, &iov, NULL, 1, addr, key, NULL,
			  data, FI_INJECT | FI_REMOTE_CQ_DATA, true);
}

struct fi_ops_rma vrb_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = rma_read,
	.readv = rma_readv,
	.readmsg = rma_readmsg,
	.write = rma_write,
	.writev = rma_writev,
	.writemsg = rma_writemsg,
	.inject = rma_inject,
	.writedata = rma_writedata,
	.injectdata = rma_injectdata,
};
