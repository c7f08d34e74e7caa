/* SPDX-License-Identifier: BSD-2-Clause
 * fi_ops_rma (fi_rma(3)): RDMA reads and writes, with remote CQ data. */
#include "sim_xfer.h"

#define RMA_FLAGS                                                         \
	(FI_REMOTE_CQ_DATA | FI_COMPLETION | FI_MORE | FI_INJECT |        \
	 FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | \
	 FI_FENCE)

static ssize_t rma_common(struct sim_ep *ep, enum nic_wr_opcode opcode,
			  const struct iovec *iov, void **desc, size_t count,
			  fi_addr_t addr, const struct fi_rma_iov *rma,
			  size_t rma_count, void *context, uint64_t data,
			  uint64_t flags)
{
	struct sim_xfer x = {
		.opcode = opcode,
		.iov = iov,
		.desc = desc,
		.iov_count = count,
		.addr = addr,
		.rma = rma,
		.rma_count = rma_count,
		.context = context,
		.data = data,
		.flags = flags,
		.comp_flags = FI_RMA | (opcode == NIC_WR_READ ? FI_READ : FI_WRITE),
	};

	if (flags & ~(RMA_FLAGS | SIM_INJECT_CALL))
		return -FI_EBADFLAGS;
	if (opcode == NIC_WR_READ && (flags & (FI_INJECT | FI_REMOTE_CQ_DATA)))
		return -FI_EBADFLAGS;
	return sim_xfer_post(ep, &x);
}

/* A single remote segment covering the local buffers. */
static struct fi_rma_iov one_segment(const struct iovec *iov, size_t count,
				     uint64_t addr, uint64_t key)
{
	struct fi_rma_iov r = { .addr = addr, .len = 0, .key = key };

	for (size_t i = 0; i < count; i++)
		r.len += iov[i].iov_len;
	return r;
}

static uint64_t default_flags(struct sim_ep *ep)
{
	return ep->tx_op_flags & RMA_FLAGS & ~FI_REMOTE_CQ_DATA;
}

static ssize_t rma_read(struct fid_ep *fid, void *buf, size_t len, void *desc,
			fi_addr_t src, uint64_t addr, uint64_t key,
			void *context)
{
	struct iovec iov = { buf, len };
	struct fi_rma_iov r = one_segment(&iov, 1, addr, key);
	struct sim_ep *ep = sim_ep_of(fid);

	return rma_common(ep, NIC_WR_READ, &iov, &desc, 1, src, &r, 1, context,
			  0, default_flags(ep) & ~FI_INJECT);
}

static ssize_t rma_readv(struct fid_ep *fid, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src,
			 uint64_t addr, uint64_t key, void *context)
{
	struct fi_rma_iov r = one_segment(iov, count, addr, key);
	struct sim_ep *ep = sim_ep_of(fid);

	return rma_common(ep, NIC_WR_READ, iov, desc, count, src, &r, 1,
			  context, 0, default_flags(ep) & ~FI_INJECT);
}

static ssize_t rma_readmsg(struct fid_ep *fid, const struct fi_msg_rma *msg,
			   uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return rma_common(sim_ep_of(fid), NIC_WR_READ, msg->msg_iov, msg->desc,
			  msg->iov_count, msg->addr, msg->rma_iov,
			  msg->rma_iov_count, msg->context, 0, flags);
}

static ssize_t rma_write(struct fid_ep *fid, const void *buf, size_t len,
			 void *desc, fi_addr_t dest, uint64_t addr,
			 uint64_t key, void *context)
{
	struct iovec iov = { (void *)buf, len };
	struct fi_rma_iov r = one_segment(&iov, 1, addr, key);
	struct sim_ep *ep = sim_ep_of(fid);

	return rma_common(ep, NIC_WR_WRITE, &iov, &desc, 1, dest, &r, 1,
			  context, 0, default_flags(ep));
}

static ssize_t rma_writev(struct fid_ep *fid, const struct iovec *iov,
			  void **desc, size_t count, fi_addr_t dest,
			  uint64_t addr, uint64_t key, void *context)
{
	struct fi_rma_iov r = one_segment(iov, count, addr, key);
	struct sim_ep *ep = sim_ep_of(fid);

	return rma_common(ep, NIC_WR_WRITE, iov, desc, count, dest, &r, 1,
			  context, 0, default_flags(ep));
}

static ssize_t rma_writemsg(struct fid_ep *fid, const struct fi_msg_rma *msg,
			    uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return rma_common(sim_ep_of(fid), NIC_WR_WRITE, msg->msg_iov,
			  msg->desc, msg->iov_count, msg->addr, msg->rma_iov,
			  msg->rma_iov_count, msg->context, msg->data, flags);
}

static ssize_t rma_inject(struct fid_ep *fid, const void *buf, size_t len,
			  fi_addr_t dest, uint64_t addr, uint64_t key)
{
	struct iovec iov = { (void *)buf, len };
	struct fi_rma_iov r = one_segment(&iov, 1, addr, key);

	return rma_common(sim_ep_of(fid), NIC_WR_WRITE, &iov, NULL, 1, dest, &r,
			  1, NULL, 0, FI_INJECT | SIM_INJECT_CALL);
}

static ssize_t rma_writedata(struct fid_ep *fid, const void *buf, size_t len,
			     void *desc, uint64_t data, fi_addr_t dest,
			     uint64_t addr, uint64_t key, void *context)
{
	struct iovec iov = { (void *)buf, len };
	struct fi_rma_iov r = one_segment(&iov, 1, addr, key);
	struct sim_ep *ep = sim_ep_of(fid);

	return rma_common(ep, NIC_WR_WRITE, &iov, &desc, 1, dest, &r, 1,
			  context, data, default_flags(ep) | FI_REMOTE_CQ_DATA);
}

static ssize_t rma_injectdata(struct fid_ep *fid, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest, uint64_t addr,
			      uint64_t key)
{
	struct iovec iov = { (void *)buf, len };
	struct fi_rma_iov r = one_segment(&iov, 1, addr, key);

	return rma_common(sim_ep_of(fid), NIC_WR_WRITE, &iov, NULL, 1, dest, &r,
			  1, NULL, data, FI_INJECT | FI_REMOTE_CQ_DATA | SIM_INJECT_CALL);
}

struct fi_ops_rma sim_rma_ops = {
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
