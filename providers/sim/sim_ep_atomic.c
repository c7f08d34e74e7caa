/* SPDX-License-Identifier: BSD-2-Clause
 * fi_ops_atomic (fi_atomic(3)). A call carries up to fi_atomicvalid's count
 * elements, in up to 4 local segments (operand, compare and result each) and
 * up to 4 target segments; a single 64-bit sum or compare-swap travels as a
 * RoCE atomic, the rest as fabsim atomic requests, one per target segment. */
#include <string.h>

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

/* One side of an atomic as the caller gave it: fi_ioc segments. */
struct ioc_list {
	const struct fi_ioc *ioc;
	void               **desc;
	size_t               count;
};

/* Elements in the list, or 0 when it is malformed. */
static size_t ioc_elements(const struct ioc_list *l, bool null_ok)
{
	size_t n = 0;

	if (!l->count || l->count > SIM_IOV_LIMIT || !l->ioc)
		return 0;
	for (size_t i = 0; i < l->count; i++) {
		if (!l->ioc[i].addr && l->ioc[i].count && !null_ok)
			return 0;
		n += l->ioc[i].count;
	}
	return n;
}

/* The list as byte ranges; gathered into `flat` when it has several
 * segments (the NIC takes operand and compare values in one piece). */
static const void *as_bytes(const struct ioc_list *l, size_t size,
			    struct iovec *iov, uint8_t *flat)
{
	uint8_t *p = flat;

	for (size_t i = 0; i < l->count; i++) {
		iov[i].iov_base = l->ioc[i].addr;
		iov[i].iov_len = l->ioc[i].count * size;
		if (l->count > 1 && iov[i].iov_len) {
			memcpy(p, iov[i].iov_base, iov[i].iov_len);
			p += iov[i].iov_len;
		}
	}
	return l->count > 1 ? flat : l->ioc[0].addr;
}

static ssize_t refuse(ssize_t err, const char *why)
{
	FI_WARN(&sim_prov, FI_LOG_EP_DATA, "atomic: %s\n", why);
	return err;
}

static ssize_t atomic_common(struct sim_ep *ep, enum atomic_kind kind,
			     const struct fi_msg_atomic *msg,
			     const struct ioc_list *compare,
			     const struct ioc_list *result, uint64_t flags)
{
	size_t size = nic_atomic_size(msg->datatype);
	ssize_t max = valid_count(ep, msg->datatype, msg->op, kind);
	struct ioc_list operand = { msg->msg_iov, msg->desc, msg->iov_count };
	struct iovec iov[SIM_IOV_LIMIT], cmp_iov[SIM_IOV_LIMIT],
		res_iov[SIM_IOV_LIMIT];
	struct fi_rma_iov rma[SIM_RMA_IOV_LIMIT];
	uint8_t flat[NIC_ATOMIC_MAX_BYTES], flat_cmp[NIC_ATOMIC_MAX_BYTES];
	bool reading = msg->op == FI_ATOMIC_READ;
	size_t count, targets = 0;
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
	};

	if (flags & ~(ATOMIC_FLAGS | SIM_INJECT_CALL))
		return -FI_EBADFLAGS;
	if (max < 0)
		return max;
	count = ioc_elements(&operand, reading);
	if (!count)
		return refuse(-FI_EINVAL, "1 to 4 operand segments expected");
	if (count > (size_t)max)
		return refuse(-FI_EMSGSIZE, "more elements than "
			      "fi_atomicvalid allows");
	if (!msg->rma_iov_count || msg->rma_iov_count > SIM_RMA_IOV_LIMIT ||
	    !msg->rma_iov)
		return refuse(-FI_EINVAL, "1 to 4 target segments expected");
	for (size_t i = 0; i < msg->rma_iov_count; i++) {
		rma[i].addr = msg->rma_iov[i].addr;
		rma[i].len = msg->rma_iov[i].count * size;
		rma[i].key = msg->rma_iov[i].key;
		targets += msg->rma_iov[i].count;
	}
	if (targets != count)
		return refuse(-FI_EINVAL, "target and operand element counts "
			      "differ");
	if (kind != PLAIN && ioc_elements(result, false) != count)
		return refuse(-FI_EINVAL, "result buffers must hold one "
			      "element per operand element");
	if (kind == COMPARE && ioc_elements(compare, false) != count)
		return refuse(-FI_EINVAL, "compare buffers must hold one "
			      "element per operand element");
	x.operand = as_bytes(&operand, size, iov, flat);
	x.iov = iov;
	x.desc = operand.desc;
	x.iov_count = x.operand ? operand.count : 0;
	if (!x.operand)
		x.desc = NULL;
	x.rma = rma;
	x.rma_count = msg->rma_iov_count;
	x.count = count;
	if (kind == COMPARE) {
		x.compare = as_bytes(compare, size, cmp_iov, flat_cmp);
		x.compare_iov = cmp_iov;
		x.compare_desc = compare->desc;
		x.compare_count = compare->count;
	}
	if (kind != PLAIN) {
		for (size_t i = 0; i < result->count; i++) {
			res_iov[i].iov_base = result->ioc[i].addr;
			res_iov[i].iov_len = result->ioc[i].count * size;
		}
		x.result = res_iov;
		x.result_desc = result->desc;
		x.result_count = result->count;
	}
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

/* The v calls name one target address for all their elements. */
static size_t total_count(const struct fi_ioc *iov, size_t count)
{
	size_t n = 0;

	for (size_t i = 0; iov && i < count; i++)
		n += iov[i].count;
	return n;
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

	return atomic_common(ep, PLAIN, &m, NULL, NULL, default_flags(ep));
}

static ssize_t atomic_writev(struct fid_ep *fid, const struct fi_ioc *iov,
			     void **desc, size_t count, fi_addr_t dest,
			     uint64_t addr, uint64_t key,
			     enum fi_datatype datatype, enum fi_op op,
			     void *context)
{
	struct fi_rma_ioc rma = { addr, total_count(iov, count), key };
	struct fi_msg_atomic m = one(iov, desc, dest, &rma, datatype, op,
				     context);
	struct sim_ep *ep = sim_ep_of(fid);

	m.iov_count = count;
	return atomic_common(ep, PLAIN, &m, NULL, NULL, default_flags(ep));
}

static ssize_t atomic_writemsg(struct fid_ep *fid,
			       const struct fi_msg_atomic *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return atomic_common(sim_ep_of(fid), PLAIN, msg, NULL, NULL, flags);
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
	return atomic_common(sim_ep_of(fid), PLAIN, &m, NULL, NULL,
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
	struct ioc_list results = { &res, &result_desc, 1 };
	struct sim_ep *ep = sim_ep_of(fid);

	return atomic_common(ep, FETCH, &m, NULL, &results, default_flags(ep));
}

static ssize_t atomic_readwritev(struct fid_ep *fid, const struct fi_ioc *iov,
				 void **desc, size_t count,
				 struct fi_ioc *resultv, void **result_desc,
				 size_t result_count, fi_addr_t dest,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context)
{
	struct fi_rma_ioc rma = { addr, total_count(iov, count), key };
	struct fi_msg_atomic m = one(iov, desc, dest, &rma, datatype, op,
				     context);
	struct ioc_list results = { resultv, result_desc, result_count };
	struct sim_ep *ep = sim_ep_of(fid);

	m.iov_count = count;
	return atomic_common(ep, FETCH, &m, NULL, &results, default_flags(ep));
}

static ssize_t atomic_readwritemsg(struct fid_ep *fid,
				   const struct fi_msg_atomic *msg,
				   struct fi_ioc *resultv, void **result_desc,
				   size_t result_count, uint64_t flags)
{
	struct ioc_list results = { resultv, result_desc, result_count };

	if (!msg)
		return -FI_EINVAL;
	return atomic_common(sim_ep_of(fid), FETCH, msg, NULL, &results,
			     flags);
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
	struct ioc_list compares = { &cmp, &compare_desc, 1 };
	struct ioc_list results = { &res, &result_desc, 1 };
	struct sim_ep *ep = sim_ep_of(fid);

	return atomic_common(ep, COMPARE, &m, &compares, &results,
			     default_flags(ep));
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
	struct fi_rma_ioc rma = { addr, total_count(iov, count), key };
	struct fi_msg_atomic m = one(iov, desc, dest, &rma, datatype, op,
				     context);
	struct ioc_list compares = { comparev, compare_desc, compare_count };
	struct ioc_list results = { resultv, result_desc, result_count };
	struct sim_ep *ep = sim_ep_of(fid);

	m.iov_count = count;
	return atomic_common(ep, COMPARE, &m, &compares, &results,
			     default_flags(ep));
}

static ssize_t atomic_compwritemsg(struct fid_ep *fid,
				   const struct fi_msg_atomic *msg,
				   const struct fi_ioc *comparev,
				   void **compare_desc, size_t compare_count,
				   struct fi_ioc *resultv, void **result_desc,
				   size_t result_count, uint64_t flags)
{
	struct ioc_list compares = { comparev, compare_desc, compare_count };
	struct ioc_list results = { resultv, result_desc, result_count };

	if (!msg)
		return -FI_EINVAL;
	return atomic_common(sim_ep_of(fid), COMPARE, msg, &compares, &results,
			     flags);
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
