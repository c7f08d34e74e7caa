/* SPDX-License-Identifier: BSD-2-Clause
 * The short forms of fi_atomic(3) as its msg forms (fabsim/entry.h). */
#include <fabsim/entry.h>

#include <rdma/fi_errno.h>

static const struct fabsim_atomic_ops *atomic_ops(struct fid_ep *ep)
{
	return FABSIM_ENTRY_DESCRIPTOR(struct fabsim_atomic_ops, ep->atomic);
}

static uint64_t defaults(struct fid_ep *ep)
{
	const struct fabsim_atomic_ops *a = atomic_ops(ep);

	return a->op_flags(ep, FI_TRANSMIT) & a->atomic_flags;
}

/* The elements of the local buffers: the v forms name one target address
 * for all of them. */
static size_t total_count(const struct fi_ioc *iov, size_t count)
{
	size_t n = 0;

	for (size_t i = 0; iov && i < count; i++)
		n += iov[i].count;
	return n;
}

static ssize_t post(struct fid_ep *ep, enum fabsim_atomic_kind kind,
		    const struct fi_ioc *iov, void **desc, size_t count,
		    fi_addr_t dest, uint64_t addr, uint64_t key,
		    enum fi_datatype datatype, enum fi_op op, void *context,
		    const struct fabsim_ioc_list *compare,
		    const struct fabsim_ioc_list *result, uint64_t flags,
		    bool inject_call)
{
	struct fi_rma_ioc target = { addr, total_count(iov, count), key };
	struct fi_msg_atomic msg = {
		.msg_iov = iov,
		.desc = desc,
		.iov_count = count,
		.addr = dest,
		.rma_iov = &target,
		.rma_iov_count = 1,
		.datatype = datatype,
		.op = op,
		.context = context,
	};

	return atomic_ops(ep)->post(ep, kind, &msg, compare, result, flags,
				    inject_call);
}

ssize_t fabsim_atomic_write(struct fid_ep *ep, const void *buf, size_t count,
			    void *desc, fi_addr_t dest, uint64_t addr,
			    uint64_t key, enum fi_datatype datatype,
			    enum fi_op op, void *context)
{
	struct fi_ioc ioc = { (void *)buf, count };

	return post(ep, FABSIM_ATOMIC_WRITE, &ioc, &desc, 1, dest, addr, key,
		    datatype, op, context, NULL, NULL, defaults(ep), false);
}

ssize_t fabsim_atomic_writev(struct fid_ep *ep, const struct fi_ioc *iov,
			     void **desc, size_t count, fi_addr_t dest,
			     uint64_t addr, uint64_t key,
			     enum fi_datatype datatype, enum fi_op op,
			     void *context)
{
	return post(ep, FABSIM_ATOMIC_WRITE, iov, desc, count, dest, addr, key,
		    datatype, op, context, NULL, NULL, defaults(ep), false);
}

ssize_t fabsim_atomic_writemsg(struct fid_ep *ep,
			       const struct fi_msg_atomic *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return atomic_ops(ep)->post(ep, FABSIM_ATOMIC_WRITE, msg, NULL, NULL,
				    flags, false);
}

ssize_t fabsim_atomic_inject(struct fid_ep *ep, const void *buf, size_t count,
			     fi_addr_t dest, uint64_t addr, uint64_t key,
			     enum fi_datatype datatype, enum fi_op op)
{
	struct fi_ioc ioc = { (void *)buf, count };

	return post(ep, FABSIM_ATOMIC_WRITE, &ioc, NULL, 1, dest, addr, key,
		    datatype, op, NULL, NULL, NULL, FI_INJECT, true);
}

ssize_t fabsim_atomic_readwrite(struct fid_ep *ep, const void *buf,
				size_t count, void *desc, void *result,
				void *result_desc, fi_addr_t dest,
				uint64_t addr, uint64_t key,
				enum fi_datatype datatype, enum fi_op op,
				void *context)
{
	struct fi_ioc ioc = { (void *)buf, count };
	struct fi_ioc res = { result, count };
	struct fabsim_ioc_list results = { &res, &result_desc, 1 };

	return post(ep, FABSIM_ATOMIC_FETCH, &ioc, &desc, 1, dest, addr, key,
		    datatype, op, context, NULL, &results, defaults(ep), false);
}

ssize_t fabsim_atomic_readwritev(struct fid_ep *ep, const struct fi_ioc *iov,
				 void **desc, size_t count,
				 struct fi_ioc *resultv, void **result_desc,
				 size_t result_count, fi_addr_t dest,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context)
{
	struct fabsim_ioc_list results = { resultv, result_desc, result_count };

	return post(ep, FABSIM_ATOMIC_FETCH, iov, desc, count, dest, addr, key,
		    datatype, op, context, NULL, &results, defaults(ep), false);
}

ssize_t fabsim_atomic_readwritemsg(struct fid_ep *ep,
				   const struct fi_msg_atomic *msg,
				   struct fi_ioc *resultv, void **result_desc,
				   size_t result_count, uint64_t flags)
{
	struct fabsim_ioc_list results = { resultv, result_desc, result_count };

	if (!msg)
		return -FI_EINVAL;
	return atomic_ops(ep)->post(ep, FABSIM_ATOMIC_FETCH, msg, NULL,
				    &results, flags, false);
}

ssize_t fabsim_atomic_compwrite(struct fid_ep *ep, const void *buf,
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
	struct fabsim_ioc_list compares = { &cmp, &compare_desc, 1 };
	struct fabsim_ioc_list results = { &res, &result_desc, 1 };

	return post(ep, FABSIM_ATOMIC_COMPARE, &ioc, &desc, 1, dest, addr, key,
		    datatype, op, context, &compares, &results, defaults(ep),
		    false);
}

ssize_t fabsim_atomic_compwritev(struct fid_ep *ep, const struct fi_ioc *iov,
				 void **desc, size_t count,
				 const struct fi_ioc *comparev,
				 void **compare_desc, size_t compare_count,
				 struct fi_ioc *resultv, void **result_desc,
				 size_t result_count, fi_addr_t dest,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context)
{
	struct fabsim_ioc_list compares = { comparev, compare_desc,
					    compare_count };
	struct fabsim_ioc_list results = { resultv, result_desc, result_count };

	return post(ep, FABSIM_ATOMIC_COMPARE, iov, desc, count, dest, addr,
		    key, datatype, op, context, &compares, &results,
		    defaults(ep), false);
}

ssize_t fabsim_atomic_compwritemsg(struct fid_ep *ep,
				   const struct fi_msg_atomic *msg,
				   const struct fi_ioc *comparev,
				   void **compare_desc, size_t compare_count,
				   struct fi_ioc *resultv, void **result_desc,
				   size_t result_count, uint64_t flags)
{
	struct fabsim_ioc_list compares = { comparev, compare_desc,
					    compare_count };
	struct fabsim_ioc_list results = { resultv, result_desc, result_count };

	if (!msg)
		return -FI_EINVAL;
	return atomic_ops(ep)->post(ep, FABSIM_ATOMIC_COMPARE, msg, &compares,
				    &results, flags, false);
}

int fabsim_atomic_writevalid(struct fid_ep *ep, enum fi_datatype datatype,
			     enum fi_op op, size_t *count)
{
	return atomic_ops(ep)->valid(ep, FABSIM_ATOMIC_WRITE, datatype, op,
				     count);
}

int fabsim_atomic_readwritevalid(struct fid_ep *ep, enum fi_datatype datatype,
				 enum fi_op op, size_t *count)
{
	return atomic_ops(ep)->valid(ep, FABSIM_ATOMIC_FETCH, datatype, op,
				     count);
}

int fabsim_atomic_compwritevalid(struct fid_ep *ep, enum fi_datatype datatype,
				 enum fi_op op, size_t *count)
{
	return atomic_ops(ep)->valid(ep, FABSIM_ATOMIC_COMPARE, datatype, op,
				     count);
}
