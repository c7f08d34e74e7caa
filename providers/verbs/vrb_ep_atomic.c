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

static int valid(enum fi_datatype datatype, enum fi_op op,
		 enum fabsim_atomic_kind kind, size_t *count)
{
	struct fi_atomic_attr attr;
	uint64_t flags = kind == FABSIM_ATOMIC_FETCH ? FI_FETCH_ATOMIC :
			 kind == FABSIM_ATOMIC_COMPARE ? FI_COMPARE_ATOMIC : 0;
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

static ssize_t atomic_common(struct vrb_ep *ep, enum fabsim_atomic_kind kind,
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
	    (kind != FABSIM_ATOMIC_WRITE && (!result || result->count != 1 ||
			       !result->addr)) ||
	    (kind == FABSIM_ATOMIC_COMPARE && (!compare || compare->count != 1 ||
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
	if (kind == FABSIM_ATOMIC_WRITE && msg->op == FI_ATOMIC_WRITE) {
		s.kind = VRB_OP_ATOMIC_WRITE;
		s.opcode = IBV_WR_RDMA_WRITE;
		iov.iov_base = msg->msg_iov[0].addr;
		desc = msg->desc ? msg->desc[0] : NULL;
		return vrb_post_send(ep, &s);
	}
	/* Fetch-and-add and compare-swap carry their operands in the
	 * request; the old value lands in the local buffer. */
	s.flags &= ~FI_INJECT;
	if (kind == FABSIM_ATOMIC_WRITE) {
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
	if (kind == FABSIM_ATOMIC_COMPARE) {
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

static ssize_t atomic_post(struct fid_ep *fid, enum fabsim_atomic_kind kind,
			   const struct fi_msg_atomic *msg,
			   const struct fabsim_ioc_list *compare,
			   const struct fabsim_ioc_list *result, uint64_t flags,
			   bool inject_call)
{
	const struct fi_ioc *cmp = NULL, *res = NULL;
	void *res_desc = NULL;

	if (kind != FABSIM_ATOMIC_WRITE) {
		if (!result || result->count != 1)
			return -FI_EINVAL;
		res = result->ioc;
		res_desc = result->desc ? result->desc[0] : NULL;
	}
	if (kind == FABSIM_ATOMIC_COMPARE) {
		if (!compare || compare->count != 1)
			return -FI_EINVAL;
		cmp = compare->ioc;
	}
	return atomic_common(vrb_ep_of(fid), kind, msg, cmp, res, res_desc,
			     flags, inject_call);
}

static int atomic_valid(struct fid_ep *fid, enum fabsim_atomic_kind kind,
			enum fi_datatype datatype, enum fi_op op,
			size_t *count)
{
	(void)fid;
	return valid(datatype, op, kind, count);
}

struct fabsim_atomic_ops vrb_atomic_ops = {
	.ops = FABSIM_ATOMIC_ENTRY_POINTS,
	.post = atomic_post,
	.valid = atomic_valid,
	.op_flags = vrb_ep_op_flags,
	.atomic_flags = ATOMIC_FLAGS,
};
