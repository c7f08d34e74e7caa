/* SPDX-License-Identifier: BSD-2-Clause
 * fi_ops_atomic (fi_atomic(3)) with what a verbs device has: one 64-bit
 * element per call.
 *
 *   fi_compare_atomic FI_CSWAP       IBV_WR_ATOMIC_CMP_AND_SWP
 *   fi_fetch_atomic   FI_SUM         IBV_WR_ATOMIC_FETCH_AND_ADD
 *   fi_fetch_atomic   FI_ATOMIC_READ fetch-and-add of zero
 *   fi_atomic         FI_SUM         fetch-and-add into the endpoint's scratch
 *   fi_atomic         FI_ATOMIC_WRITE an 8-byte RDMA write
 *
 * The result buffer of a fetch or compare needs a descriptor like any
 * buffer the device writes into. */
#include <string.h>

#include "verbs.h"

#define ATOMIC_FLAGS                                                      \
	(FI_COMPLETION | FI_MORE | FI_INJECT | FI_INJECT_COMPLETE |       \
	 FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | FI_FENCE)

enum atomic_kind { PLAIN, FETCH, COMPARE };

static int valid(enum fi_datatype datatype, enum fi_op op,
		 enum atomic_kind kind, size_t *count)
{
	struct fi_atomic_attr attr;
	uint64_t flags = kind == FETCH ? FI_FETCH_ATOMIC :
			 kind == COMPARE ? FI_COMPARE_ATOMIC : 0;
	int ret = vrb_query_atomic(NULL, datatype, op, &attr, flags);

	if (!ret && count)
		*count = attr.count;
	return ret;
}

static uint64_t operand(const void *p)
{
	uint64_t v = 0;

	if (p)
		memcpy(&v, p, sizeof(v));
	return v;
}

static ssize_t atomic_common(struct vrb_ep *ep, enum atomic_kind kind,
			     const struct fi_msg_atomic *msg,
			     const struct fi_ioc *compare,
			     const struct fi_ioc *result, void *result_desc,
			     uint64_t flags, bool inject_call)
{
	struct vrb_send s = {
		.context = msg->context,
		.flags = flags,
		.inject_call = inject_call,
	};
	struct iovec iov;
	void *desc;
	int ret;

	if (flags & ~ATOMIC_FLAGS)
		return -FI_EBADFLAGS;
	ret = valid(msg->datatype, msg->op, kind, NULL);
	if (ret) {
		FI_WARN(&vrb_prov, FI_LOG_EP_DATA, "atomic op %d on datatype %d "
			"not supported by verbs (64-bit CSWAP, SUM, READ, "
			"WRITE)\n", (int)msg->op, (int)msg->datatype);
		return ret;
	}
	if (msg->iov_count == 1 && msg->msg_iov && msg->msg_iov[0].count > 1) {
		FI_WARN(&vrb_prov, FI_LOG_EP_DATA, "atomic: %zu elements; a "
			"verbs atomic takes one (fi_atomicvalid's count)\n",
			msg->msg_iov[0].count);
		return -FI_EMSGSIZE;
	}
	if (msg->iov_count != 1 || msg->rma_iov_count != 1 || !msg->msg_iov ||
	    !msg->rma_iov || msg->msg_iov[0].count != 1 ||
	    msg->rma_iov[0].count != 1 ||
	    (kind != PLAIN && (!result || result->count != 1 ||
			       !result->addr)) ||
	    (kind == COMPARE && (!compare || compare->count != 1 ||
				 !compare->addr)) ||
	    (!msg->msg_iov[0].addr && msg->op != FI_ATOMIC_READ)) {
		FI_WARN(&vrb_prov, FI_LOG_EP_DATA, "atomic: one 64-bit element "
			"expected (and its result and compare buffers)\n");
		return -FI_EINVAL;
	}
	if (msg->rma_iov[0].key > UINT32_MAX)
		return -FI_EINVAL;
	s.remote_addr = msg->rma_iov[0].addr;
	s.rkey = (uint32_t)msg->rma_iov[0].key;
	s.count = 1;
	s.iov = &iov;
	s.desc = &desc;
	iov.iov_len = sizeof(uint64_t);
	if (kind == PLAIN && msg->op == FI_ATOMIC_WRITE) {
		s.kind = VRB_OP_ATOMIC_WRITE;
		s.opcode = IBV_WR_RDMA_WRITE;
		iov.iov_base = msg->msg_iov[0].addr;
		desc = msg->desc ? msg->desc[0] : NULL;
		return vrb_post_send(ep, &s);
	}
	/* Fetch-and-add and compare-swap carry their operands in the
	 * request; the old value lands in the local buffer. */
	s.flags &= ~FI_INJECT;
	if (kind == PLAIN) {
		s.kind = VRB_OP_ATOMIC_WRITE;
		iov.iov_base = &ep->scratch;
		desc = &ep->scratch_desc;
		if (!ep->scratch_desc.mr)
			return -FI_EOPBADSTATE;
	} else {
		s.kind = VRB_OP_ATOMIC_FETCH;
		iov.iov_base = result->addr;
		desc = result_desc;
	}
	if (kind == COMPARE) {
		s.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		s.compare_add = operand(compare->addr);
		s.swap = operand(msg->msg_iov[0].addr);
	} else {
		s.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		s.compare_add = msg->op == FI_ATOMIC_READ ?
					0 : operand(msg->msg_iov[0].addr);
	}
	return vrb_post_send(ep, &s);
}

static struct fi_msg_atomic one(const struct fi_ioc *ioc, void **desc,
				const struct fi_rma_ioc *rma,
				enum fi_datatype datatype, enum fi_op op,
				void *context)
{
	struct fi_msg_atomic m = {
		.msg_iov = ioc,
		.desc = desc,
		.iov_count = 1,
		.rma_iov = rma,
		.rma_iov_count = 1,
		.datatype = datatype,
		.op = op,
		.context = context,
	};
	return m;
}

static uint64_t def_flags(struct vrb_ep *ep)
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
	struct fi_msg_atomic m = one(&ioc, &desc, &rma, datatype, op, context);
	struct vrb_ep *ep = vrb_ep_of(fid);

	return atomic_common(ep, PLAIN, &m, NULL, NULL, NULL, def_flags(ep),
			     false);
}

static ssize_t atomic_writev(struct fid_ep *fid, const struct fi_ioc *iov,
			     void **desc, size_t count, fi_addr_t dest,
			     uint64_t addr, uint64_t key,
			     enum fi_datatype datatype, enum fi_op op,
			     void *context)
{
	struct fi_rma_ioc rma = { addr, iov && count ? iov[0].count : 0, key };
	struct fi_msg_atomic m = one(iov, desc, &rma, datatype, op, context);
	struct vrb_ep *ep = vrb_ep_of(fid);

	m.iov_count = count;
	return atomic_common(ep, PLAIN, &m, NULL, NULL, NULL, def_flags(ep),
			     false);
}

static ssize_t atomic_writemsg(struct fid_ep *fid,
			       const struct fi_msg_atomic *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return atomic_common(vrb_ep_of(fid), PLAIN, msg, NULL, NULL, NULL,
			     flags, false);
}

static ssize_t atomic_inject(struct fid_ep *fid, const void *buf, size_t count,
			     fi_addr_t dest, uint64_t addr, uint64_t key,
			     enum fi_datatype datatype, enum fi_op op)
{
	struct fi_ioc ioc = { (void *)buf, count };
	struct fi_rma_ioc rma = { addr, count, key };
	struct fi_msg_atomic m = one(&ioc, NULL, &rma, datatype, op, NULL);

	return atomic_common(vrb_ep_of(fid), PLAIN, &m, NULL, NULL, NULL,
			     FI_INJECT, true);
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
	struct fi_msg_atomic m = one(&ioc, &desc, &rma, datatype, op, context);
	struct vrb_ep *ep = vrb_ep_of(fid);

	return atomic_common(ep, FETCH, &m, NULL, &res, result_desc,
			     def_flags(ep), false);
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
	struct fi_msg_atomic m = one(iov, desc, &rma, datatype, op, context);
	struct vrb_ep *ep = vrb_ep_of(fid);

	m.iov_count = count;
	if (result_count != 1)
		return -FI_EINVAL;
	return atomic_common(ep, FETCH, &m, NULL, resultv,
			     result_desc ? result_desc[0] : NULL,
			     def_flags(ep), false);
}

static ssize_t atomic_readwritemsg(struct fid_ep *fid,
				   const struct fi_msg_atomic *msg,
				   struct fi_ioc *resultv, void **result_desc,
				   size_t result_count, uint64_t flags)
{
	if (!msg || result_count != 1)
		return -FI_EINVAL;
	return atomic_common(vrb_ep_of(fid), FETCH, msg, NULL, resultv,
			     result_desc ? result_desc[0] : NULL, flags, false);
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
	struct fi_msg_atomic m = one(&ioc, &desc, &rma, datatype, op, context);
	struct vrb_ep *ep = vrb_ep_of(fid);

	return atomic_common(ep, COMPARE, &m, &cmp, &res, result_desc,
			     def_flags(ep), false);
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
	struct fi_msg_atomic m = one(iov, desc, &rma, datatype, op, context);
	struct vrb_ep *ep = vrb_ep_of(fid);

	m.iov_count = count;
	if (compare_count != 1 || result_count != 1)
		return -FI_EINVAL;
	return atomic_common(ep, COMPARE, &m, comparev, resultv,
			     result_desc ? result_desc[0] : NULL,
			     def_flags(ep), false);
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
	return atomic_common(vrb_ep_of(fid), COMPARE, msg, comparev, resultv,
			     result_desc ? result_desc[0] : NULL, flags, false);
}

static int atomic_writevalid(struct fid_ep *ep, enum fi_datatype datatype,
			     enum fi_op op, size_t *count)
{
	return valid(datatype, op, PLAIN, count);
}

static int atomic_readwritevalid(struct fid_ep *ep, enum fi_datatype datatype,
				 enum fi_op op, size_t *count)
{
	return valid(datatype, op, FETCH, count);
}

static int atomic_compwritevalid(struct fid_ep *ep, enum fi_datatype datatype,
				 enum fi_op op, size_t *count)
{
	return valid(datatype, op, COMPARE, count);
}

struct fi_ops_atomic vrb_atomic_ops = {
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
