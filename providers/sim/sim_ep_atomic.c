/* SPDX-License-Identifier: BSD-2-Clause
 * fi_ops_atomic (fi_atomic(3)). Each call carries one contiguous operand
 * of up to fi_atomicvalid's count elements; 64-bit sums and compare-swaps
 * travel as RoCE atomics, the rest as the fabsim atomic request. */
#include "sim_xfer.h"

#define ATOMIC_FLAGS                                                      \
	(FI_COMPLETION | FI_MORE | FI_INJECT | FI_INJECT_COMPLETE |       \
	 FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | FI_FENCE)

enum atomic_kind { PLAIN, FETCH, COMPARE };

static ssize_t valid_count(struct sim_ep *ep, enum fi_datatype datatype,
			   enum fi_op op, enum atomic_kind kind)
{
	struct fi_atomic_attr attr;
	uint64_t flags = kind == FETCH ? FI_FETCH_ATOMIC :
			 kind == COMPARE ? FI_COMPARE_ATOMIC : 0;
	int ret = fi_query_atomic(&ep->domain->domain_fid, datatype, op, &attr,
				  flags);

	return ret ? ret : (ssize_t)attr.count;
}

static ssize_t atomic_common(struct sim_ep *ep, enum atomic_kind kind,
			     const struct fi_msg_atomic *msg,
			     const struct fi_ioc *compare, void *compare_desc,
			     struct fi_ioc *result, void *result_desc,
			     uint64_t flags)
{
	size_t size = nic_atomic_size(msg->datatype);
	ssize_t max = valid_count(ep, msg->datatype, msg->op, kind);
	size_t count = msg->iov_count ? msg->msg_iov[0].count : 0;
	struct iovec iov;
	struct fi_rma_iov rma;
	struct sim_xfer x = {
		.opcode = kind == FETCH ? NIC_WR_FETCH_ATOMIC :
			  kind == COMPARE ? NIC_WR_COMPARE_ATOMIC :
					    NIC_WR_ATOMIC,
		.addr = msg->addr,
		.context = msg->context,
		.flags = flags,
		.comp_flags = FI_ATOMIC | (kind == PLAIN ? FI_WRITE : FI_READ),
		.datatype = msg->datatype,
		.atomic_op = msg->op,
		.compare_desc = compare_desc,
		.result_desc = result_desc,
	};

	if (flags & ~(ATOMIC_FLAGS | SIM_INJECT_CALL))
		return -FI_EBADFLAGS;
	if (max < 0)
		return max;
	if (msg->iov_count != 1 || msg->rma_iov_count != 1 || !msg->msg_iov ||
	    !msg->rma_iov || !count || count > (size_t)max ||
	    msg->rma_iov[0].count != count ||
	    (kind != PLAIN && (!result || result->count != count)) ||
	    (kind == COMPARE && (!compare || compare->count != count)) ||
	    (!msg->msg_iov[0].addr && msg->op != FI_ATOMIC_READ)) {
		FI_WARN(&sim_prov, FI_LOG_EP_DATA, "atomic: one operand of 1 "
			"to %zd elements expected (and matching result and "
			"compare buffers)\n", max);
		return -FI_EINVAL;
	}
	iov.iov_base = msg->msg_iov[0].addr;
	iov.iov_len = count * size;
	rma.addr = msg->rma_iov[0].addr;
	rma.len = count * size;
	rma.key = msg->rma_iov[0].key;
	x.iov = &iov;
	x.desc = msg->desc;
	x.iov_count = iov.iov_base ? 1 : 0;
	x.rma = &rma;
	x.rma_count = 1;
	x.count = count;
	x.compare = compare ? compare->addr : NULL;
	x.result = result ? result->addr : NULL;
	return sim_xfer_post(ep, &x);
}

static struct fi_msg_atomic one(const struct fi_ioc *ioc, void **desc,
				fi_addr_t dest, const struct fi_rma_ioc *rma,
				enum fi_datatype datatype, enum fi_op op,
				void *context)
{
	struct fi_msg_atomic m = {
		.msg_iov = ioc,
		.desc = desc,
		.iov_count = 1,
		.addr = dest,
		.rma_iov = rma,
		.rma_iov_count = 1,
		.datatype = datatype,
		.op = op,
		.context = context,
	};
	return m;
}

static uint64_t default_flags(struct sim_ep *ep)
{
	return ep->tx_op_flags & ATOMIC_FLAGS;
}

static ssize_t atomic_write(struct fid_ep *fid, const void *buf, size_t count,
			    void *desc, fi_addr_t dest, uint64_t addr,
			    uint64_t key, enum fi_datatype datatype,
			    enum fi_op op, void *context)
{
	struct fi_ioc ioc = { (void *)buf, count };
	struct fi_rma_ioc rma = { addr, count, key };
	struct fi_msg_atomic m = one(&ioc, &desc, dest, &rma, datatype, op,
				     context);
	struct sim_ep *ep = sim_ep_of(fid);

	return atomic_common(ep, PLAIN, &m, NULL, NULL, NULL, NULL,
			     default_flags(ep));
}

static ssize_t atomic_writev(struct fid_ep *fid, const struct fi_ioc *iov,
			     void **desc, size_t count, fi_addr_t dest,
			     uint64_t addr, uint64_t key,
			     enum fi_datatype datatype, enum fi_op op,
			     void *context)
{
	struct fi_rma_ioc rma = { addr, iov && count ? iov[0].count : 0, key };
	struct fi_msg_atomic m = one(iov, desc, dest, &rma, datatype, op,
				     context);
	struct sim_ep *ep = sim_ep_of(fid);

	m.iov_count = count;
	return atomic_common(ep, PLAIN, &m, NULL, NULL, NULL, NULL,
			     default_flags(ep));
}

static ssize_t atomic_writemsg(struct fid_ep *fid,
			       const struct fi_msg_atomic *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return atomic_common(sim_ep_of(fid), PLAIN, msg, NULL, NULL, NULL, NULL,
			     flags);
}

static ssize_t atomic_inject(struct fid_ep *fid, const void *buf,
			     size_t count, fi_addr_t dest, uint64_t addr,
			     uint64_t key, enum fi_datatype datatype,
			     enum fi_op op)
{
	struct fi_ioc ioc = { (void *)buf, count };
	struct fi_rma_ioc rma = { addr, count, key };
	struct fi_msg_atomic m = one(&ioc, NULL, dest, &rma, datatype, op,
				     NULL);

	if (count * nic_atomic_size(datatype) > SIM_INJECT_SIZE)
		return -FI_EMSGSIZE;
	return atomic_common(sim_ep_of(fid), PLAIN, &m, NULL, NULL, NULL, NULL,
			     FI_INJECT | SIM_INJECT_CALL);
}

static ssize_t atomic_readwrite(struct fid_ep *fid, const void *buf,
				size_t count, void *desc, void *result,
				void *result_desc, fi_addr_t dest,
				uint64_t addr, uint64_t key,
				enum fi_datatype datatype, enum fi_op op,
				void *context)
{
	struct fi_ioc ioc = { (void *)buf, count };
	struct fi_ioc res = { result, count };
	struct fi_rma_ioc rma = { addr, count, key };
	struct fi_msg_atomic m = one(&ioc, &desc, dest, &rma, datatype, op,
				     context);
	struct sim_ep *ep = sim_ep_of(fid);

	return atomic_common(ep, FETCH, &m, NULL, NULL, &res, result_desc,
			     default_flags(ep));
}

static ssize_t atomic_readwritev(struct fid_ep *fid, const struct fi_ioc *iov,
				 void **desc, size_t count,
				 struct fi_ioc *resultv, void **result_desc,
				 size_t result_count, fi_addr_t dest,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context)
{
	struct fi_rma_ioc rma = { addr, iov && count ? iov[0].count : 0, key };
	struct fi_msg_atomic m = one(iov, desc, dest, &rma, datatype, op,
				     context);
	struct sim_ep *ep = sim_ep_of(fid);

	m.iov_count = count;
	if (result_count != 1)
		return -FI_EINVAL;
	return atomic_common(ep, FETCH, &m, NULL, NULL, resultv,
			     result_desc ? result_desc[0] : NULL,
			     default_flags(ep));
}

static ssize_t atomic_readwritemsg(struct fid_ep *fid,
				   const struct fi_msg_atomic *msg,
				   struct fi_ioc *resultv, void **result_desc,
				   size_t result_count, uint64_t flags)
{
	if (!msg || result_count != 1)
		return -FI_EINVAL;
	return atomic_common(sim_ep_of(fid), FETCH, msg, NULL, NULL, resultv,
			     result_desc ? result_desc[0] : NULL, flags);
}

static ssize_t atomic_compwrite(struct fid_ep *fid, const void *buf,
				size_t count, void *desc, const void *compare,
				void *compare_desc, void *result,
				void *result_desc, fi_addr_t dest,
				uint64_t addr, uint64_t key,
				enum fi_datatype datatype, enum fi_op op,
				void *context)
{
	struct fi_ioc ioc = { (void *)buf, count };
	struct fi_ioc cmp = { (void *)compare, count };
	struct fi_ioc res = { result, count };
	struct fi_rma_ioc rma = { addr, count, key };
	struct fi_msg_atomic m = one(&ioc, &desc, dest, &rma, datatype, op,
				     context);
	struct sim_ep *ep = sim_ep_of(fid);

	return atomic_common(ep, COMPARE, &m, &cmp, compare_desc, &res,
			     result_desc, default_flags(ep));
}

static ssize_t atomic_compwritev(struct fid_ep *fid, const struct fi_ioc *iov,
				 void **desc, size_t count,
				 const struct fi_ioc *comparev,
				 void **compare_desc, size_t compare_count,
				 struct fi_ioc *resultv, void **result_desc,
				 size_t result_count, fi_addr_t dest,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context)
{
	struct fi_rma_ioc rma = { addr, iov && count ? iov[0].count : 0, key };
	struct fi_msg_atomic m = one(iov, desc, dest, &rma, datatype, op,
				     context);
	struct sim_ep *ep = sim_ep_of(fid);

	m.iov_count = count;
	if (compare_count != 1 || result_count != 1)
		return -FI_EINVAL;
	return atomic_common(ep, COMPARE, &m, comparev,
			     compare_desc ? compare_desc[0] : NULL, resultv,
			     result_desc ? result_desc[0] : NULL,
			     default_flags(ep));
}

static ssize_t atomic_compwritemsg(struct fid_ep *fid,
				   const struct fi_msg_atomic *msg,
				   const struct fi_ioc *comparev,
				   void **compare_desc, size_t compare_count,
				   struct fi_ioc *resultv, void **result_desc,
				   size_t result_count, uint64_t flags)
{
	if (!msg || compare_count != 1 || result_count != 1)
		return -FI_EINVAL;
	return atomic_common(sim_ep_of(fid), COMPARE, msg, comparev,
			     compare_desc ? compare_desc[0] : NULL, resultv,
			     result_desc ? result_desc[0] : NULL, flags);
}

static int valid_as(struct fid_ep *fid, enum fi_datatype datatype,
		    enum fi_op op, size_t *count, enum atomic_kind kind)
{
	ssize_t n = valid_count(sim_ep_of(fid), datatype, op, kind);

	if (n < 0)
		return (int)n;
	if (count)
		*count = (size_t)n;
	return 0;
}

static int atomic_writevalid(struct fid_ep *fid, enum fi_datatype datatype,
			     enum fi_op op, size_t *count)
{
	return valid_as(fid, datatype, op, count, PLAIN);
}

static int atomic_readwritevalid(struct fid_ep *fid, enum fi_datatype datatype,
				 enum fi_op op, size_t *count)
{
	return valid_as(fid, datatype, op, count, FETCH);
}

static int atomic_compwritevalid(struct fid_ep *fid, enum fi_datatype datatype,
				 enum fi_op op, size_t *count)
{
	return valid_as(fid, datatype, op, count, COMPARE);
}

struct fi_ops_atomic sim_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = atomic_write,
	.writev = atomic_writev,
	.writemsg = atomic_writemsg,
	.inject = atomic_inject,
	.readwrite = atomic_readwrite,
	.readwritev = atomic_readwritev,
	.readwritemsg = atomic_readwritemsg,
	.compwrite = atomic_compwrite,
	.compwritev = atomic_compwritev,
	.compwritemsg = atomic_compwritemsg,
	.writevalid = atomic_writevalid,
	.readwritevalid = atomic_readwritevalid,
	.compwritevalid = atomic_compwritevalid,
};
