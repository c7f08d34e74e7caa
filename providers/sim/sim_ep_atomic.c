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

static ssize_t valid_count(struct sim_ep *ep, enum fi_datatype datatype,
			   enum fi_op op, enum fabsim_atomic_kind kind)
{
	struct fi_atomic_attr attr;
	uint64_t flags = kind == FABSIM_ATOMIC_FETCH ? FI_FETCH_ATOMIC :
			 kind == FABSIM_ATOMIC_COMPARE ? FI_COMPARE_ATOMIC : 0;
	int ret = fi_query_atomic(&ep->domain->domain_fid, datatype, op, &attr,
				  flags);

	return ret ? ret : (ssize_t)attr.count;
}

/* Elements in the list, or 0 when it is malformed. */
static size_t ioc_elements(const struct fabsim_ioc_list *l, bool null_ok)
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
static const void *as_bytes(const struct fabsim_ioc_list *l, size_t size,
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

static ssize_t atomic_post(struct fid_ep *fid, enum fabsim_atomic_kind kind,
			   const struct fi_msg_atomic *msg,
			   const struct fabsim_ioc_list *compare,
			   const struct fabsim_ioc_list *result, uint64_t flags,
			   bool inject_call)
{
	struct sim_ep *ep = sim_ep_of(fid);
	size_t size = nic_atomic_size(msg->datatype);
	ssize_t max = valid_count(ep, msg->datatype, msg->op, kind);
	struct fabsim_ioc_list operand = { msg->msg_iov, msg->desc, msg->iov_count };
	struct iovec iov[SIM_IOV_LIMIT], cmp_iov[SIM_IOV_LIMIT],
		res_iov[SIM_IOV_LIMIT];
	struct fi_rma_iov rma[SIM_RMA_IOV_LIMIT];
	uint8_t flat[NIC_ATOMIC_MAX_BYTES], flat_cmp[NIC_ATOMIC_MAX_BYTES];
	bool reading = msg->op == FI_ATOMIC_READ;
	size_t count, targets = 0;
	struct sim_xfer x = {
		.opcode = kind == FABSIM_ATOMIC_FETCH ? NIC_WR_FETCH_ATOMIC :
			  kind == FABSIM_ATOMIC_COMPARE ? NIC_WR_COMPARE_ATOMIC :
					    NIC_WR_ATOMIC,
		.addr = msg->addr,
		.context = msg->context,
		.flags = flags | (inject_call ? SIM_INJECT_CALL : 0),
		.comp_flags = FI_ATOMIC |
			      (kind == FABSIM_ATOMIC_WRITE ? FI_WRITE : FI_READ),
		.datatype = msg->datatype,
		.atomic_op = msg->op,
	};

	/* fi_inject_atomic: the size first, whatever else is wrong. */
	if (inject_call && msg->iov_count == 1 && msg->msg_iov &&
	    msg->msg_iov[0].count * size > SIM_INJECT_SIZE)
		return -FI_EMSGSIZE;
	if (flags & ~ATOMIC_FLAGS)
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
	if (kind != FABSIM_ATOMIC_WRITE && ioc_elements(result, false) != count)
		return refuse(-FI_EINVAL, "result buffers must hold one "
			      "element per operand element");
	if (kind == FABSIM_ATOMIC_COMPARE && ioc_elements(compare, false) != count)
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
	if (kind == FABSIM_ATOMIC_COMPARE) {
		x.compare = as_bytes(compare, size, cmp_iov, flat_cmp);
		x.compare_iov = cmp_iov;
		x.compare_desc = compare->desc;
		x.compare_count = compare->count;
	}
	if (kind != FABSIM_ATOMIC_WRITE) {
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

static int atomic_valid(struct fid_ep *fid, enum fabsim_atomic_kind kind,
			enum fi_datatype datatype, enum fi_op op,
			size_t *count)
{
	ssize_t n = valid_count(sim_ep_of(fid), datatype, op, kind);

	if (n < 0)
		return (int)n;
	if (count)
		*count = (size_t)n;
	return 0;
}

struct fabsim_atomic_ops sim_atomic_ops = {
	.ops = FABSIM_ATOMIC_ENTRY_POINTS,
	.post = atomic_post,
	.valid = atomic_valid,
	.op_flags = sim_ep_op_flags,
	.atomic_flags = ATOMIC_FLAGS,
};
