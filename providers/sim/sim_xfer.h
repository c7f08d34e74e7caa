/* SPDX-License-Identifier: BSD-2-Clause
 * One description of a data transfer for every API variant (send, tsend,
 * write, atomic, ... in their plain, v, msg, data and inject forms): each
 * ops-table entry fills one and calls sim_xfer_post / sim_recv_post. */
#ifndef FABSIM_SIM_XFER_H
#define FABSIM_SIM_XFER_H

#include <fabsim/entry.h>

#include "sim.h"

/* Marks the fi_inject* calls, which write no completion on success (a
 * provider-specific bit: fi_getinfo(3) leaves bits 60-63 to providers). */
#define SIM_INJECT_CALL (1ULL << 63)

struct sim_xfer {
	enum nic_wr_opcode       opcode;
	const struct iovec      *iov;
	void                   **desc;
	size_t                   iov_count;
	fi_addr_t                addr;
	const struct fi_rma_iov *rma;
	size_t                   rma_count;
	void                    *context;
	uint64_t                 data;
	uint64_t                 tag;
	uint64_t                 flags;      /* FI_* op flags */
	uint64_t                 comp_flags; /* what its completion says */
	/* atomics */
	enum fi_datatype         datatype;
	enum fi_op               atomic_op;
	size_t                   count;
	const void              *operand;  /* count values; NULL for reads */
	const void              *compare;  /* count values, compare ops */
	const struct iovec      *compare_iov;  /* as given: checked only */
	void                   **compare_desc;
	size_t                   compare_count;
	const struct iovec      *result;   /* where fetched values land */
	void                   **result_desc;
	size_t                   result_count;
};

struct sim_recv_req {
	const struct iovec *iov;
	void              **desc;
	size_t              iov_count;
	fi_addr_t           addr;
	void               *context;
	uint64_t            tag;
	uint64_t            ignore;
	uint64_t            flags;
	bool                tagged;
};

ssize_t sim_xfer_post(struct sim_ep *ep, const struct sim_xfer *x);
ssize_t sim_recv_post(struct sim_ep *ep, const struct sim_recv_req *r);

/* The NIC's callbacks for an endpoint. */
extern const struct nic_qp_ops sim_ep_nic_ops;

static inline struct sim_ep *sim_ep_of(struct fid_ep *ep)
{
	return container_of(ep, struct sim_ep, ep_fid);
}

/* The endpoint's default flags (fabsim_op_flags_fn). */
uint64_t sim_ep_op_flags(struct fid_ep *ep, uint64_t which);

#endif
