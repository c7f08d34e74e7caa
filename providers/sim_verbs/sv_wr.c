/* SPDX-License-Identifier: BSD-2-Clause
 * Extended QPs and their work-request API (ibv_create_qp_ex with send ops
 * flags, ibv_qp_to_qp_ex, ibv_wr_*): between ibv_wr_start and
 * ibv_wr_complete the calls build a list of work requests, which
 * ibv_wr_complete posts as ibv_post_send would (the same checks, the
 * first error returned, nothing after it posted); ibv_wr_abort drops it.
 * Inline data is copied when it is set. Operations the face does not
 * simulate (memory windows, invalidation, TSO, XRC, atomic write) make the
 * list fail with EOPNOTSUPP.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sv.h"

/* One work request being built, with room for its scatter list. */
struct sv_wr_item {
	struct ibv_send_wr  wr;
	struct ibv_sge      sge[SV_MAX_SGE];
	uint8_t             inline_data[SV_MAX_INLINE];
	struct sv_wr_item  *next;
};

static struct sv_qp *qp_of(struct ibv_qp_ex *qpx)
{
	return SV_CONTAINER_OF(qpx, struct sv_qp, qpx);
}

static void drop_items(struct sv_qp *qp)
{
	while (qp->wr_items) {
		struct sv_wr_item *i = qp->wr_items;

		qp->wr_items = i->next;
		free(i);
	}
	qp->wr_last = NULL;
}

/* A new request, with the id and flags the program set on the QP. */
static struct ibv_send_wr *add(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op)
{
	struct sv_qp *qp = qp_of(qpx);
	struct sv_wr_item *i = calloc(1, sizeof(*i));

	if (!i) {
		qp->wr_err = ENOMEM;
		return NULL;
	}
	i->wr.wr_id = qpx->wr_id;
	i->wr.send_flags = qpx->wr_flags;
	i->wr.opcode = op;
	i->wr.sg_list = i->sge;
	if (qp->wr_last) {
		qp->wr_last->next = i;
		qp->wr_last->wr.next = &i->wr;
	} else {
		qp->wr_items = i;
	}
	qp->wr_last = i;
	return &i->wr;
}

/* The request the data and address calls apply to: the last one. */
static struct sv_wr_item *current(struct ibv_qp_ex *qpx)
{
	struct sv_qp *qp = qp_of(qpx);

	if (!qp->wr_last && !qp->wr_err)
		qp->wr_err = EINVAL; /* no operation started */
	return qp->wr_last;
}

static void unsupported(struct ibv_qp_ex *qpx)
{
	qp_of(qpx)->wr_err = EOPNOTSUPP;
}

/* ---- Operations ------------------------------------------------------------------------ */

static void wr_send(struct ibv_qp_ex *qpx)
{
	add(qpx, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct ibv_send_wr *wr = add(qpx, IBV_WR_SEND_WITH_IMM);

	if (wr)
		wr->imm_data = imm;
}

static void rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op, uint32_t rkey,
		 uint64_t addr, __be32 imm)
{
	struct ibv_send_wr *wr = add(qpx, op);

	if (!wr)
		return;
	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = addr;
	wr->imm_data = imm;
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	rdma(qpx, IBV_WR_RDMA_WRITE, rkey, addr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t addr, __be32 imm)
{
	rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	rdma(qpx, IBV_WR_RDMA_READ, rkey, addr, 0);
}

static void atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op, uint32_t rkey,
		   uint64_t addr, uint64_t compare_add, uint64_t swap)
{
	struct ibv_send_wr *wr = add(qpx, op);

	if (!wr)
		return;
	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.remote_addr = addr;
	wr->wr.atomic.compare_add = compare_add;
	wr->wr.atomic.swap = swap;
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t addr, uint64_t compare, uint64_t swap)
{
	atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare, swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				uint64_t addr, uint64_t add_value)
{
	atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add_value, 0);
}

static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *info)
{
	unsupported(qpx);
}

static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	unsupported(qpx);
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	unsupported(qpx);
}

static void wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz,
			uint16_t mss)
{
	unsupported(qpx);
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t srqn)
{
	unsupported(qpx);
}

static void wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
			    const void *value)
{
	unsupported(qpx);
}

/* ---- Addresses and data ----------------------------------------------------------------- */

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
			   uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct sv_wr_item *i = current(qpx);

	if (!i)
		return;
	i->wr.wr.ud.ah = ah;
	i->wr.wr.ud.remote_qpn = remote_qpn;
	i->wr.wr.ud.remote_qkey = remote_qkey;
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
			    const struct ibv_sge *sg_list)
{
	struct sv_wr_item *i = current(qpx);

	if (!i)
		return;
	if (num_sge > SV_MAX_SGE) {
		qp_of(qpx)->wr_err = EINVAL;
		return;
	}
	memcpy(i->sge, sg_list, num_sge * sizeof(*sg_list));
	i->wr.num_sge = (int)num_sge;
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
		       uint32_t length)
{
	struct ibv_sge sge = { addr, length, lkey };

	wr_set_sge_list(qpx, 1, &sge);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
				    const struct ibv_data_buf *bufs)
{
	struct sv_wr_item *i = current(qpx);
	size_t len = 0;

	if (!i)
		return;
	for (size_t b = 0; b < num_buf; b++) {
		if (bufs[b].length > sizeof(i->inline_data) - len) {
			qp_of(qpx)->wr_err = EINVAL; /* more than inline holds */
			return;
		}
		memcpy(i->inline_data + len, bufs[b].addr, bufs[b].length);
		len += bufs[b].length;
	}
	i->sge[0].addr = (uintptr_t)i->inline_data;
	i->sge[0].length = (uint32_t)len;
	i->sge[0].lkey = 0;
	i->wr.num_sge = 1;
	i->wr.send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf buf = { addr, length };

	wr_set_inline_data_list(qpx, 1, &buf);
}

/* ---- The list ---------------------------------------------------------------------------- */

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct sv_qp *qp = qp_of(qpx);

	drop_items(qp);
	qp->wr_err = 0;
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct sv_qp *qp = qp_of(qpx);
	struct ibv_send_wr *bad = NULL;
	int ret = qp->wr_err;

	if (!ret && qp->wr_items)
		ret = sv_post_send(&qp->qp, &qp->wr_items->wr, &bad);
	drop_items(qp);
	qp->wr_err = 0;
	return ret;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	struct sv_qp *qp = qp_of(qpx);

	drop_items(qp);
	qp->wr_err = 0;
}

/* ---- Creation ------------------------------------------------------------------------------- */

enum {
	SUPPORTED_SEND_OPS = IBV_QP_EX_WITH_RDMA_WRITE |
			     IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			     IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			     IBV_QP_EX_WITH_RDMA_READ |
			     IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			     IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
	SUPPORTED_MASK = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
};

static void set_ops(struct ibv_qp_ex *qpx)
{
	qpx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = wr_atomic_fetch_add;
	qpx->wr_bind_mw = wr_bind_mw;
	qpx->wr_local_inv = wr_local_inv;
	qpx->wr_rdma_read = wr_rdma_read;
	qpx->wr_rdma_write = wr_rdma_write;
	qpx->wr_rdma_write_imm = wr_rdma_write_imm;
	qpx->wr_send = wr_send;
	qpx->wr_send_imm = wr_send_imm;
	qpx->wr_send_inv = wr_send_inv;
	qpx->wr_send_tso = wr_send_tso;
	qpx->wr_set_ud_addr = wr_set_ud_addr;
	qpx->wr_set_xrc_srqn = wr_set_xrc_srqn;
	qpx->wr_set_inline_data = wr_set_inline_data;
	qpx->wr_set_inline_data_list = wr_set_inline_data_list;
	qpx->wr_set_sge = wr_set_sge;
	qpx->wr_set_sge_list = wr_set_sge_list;
	qpx->wr_start = wr_start;
	qpx->wr_complete = wr_complete;
	qpx->wr_abort = wr_abort;
	qpx->wr_atomic_write = wr_atomic_write;
}

struct ibv_qp *sv_create_qp_ex(struct ibv_context *context,
			       struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp *ibqp;
	struct sv_qp *qp;

	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & ~SUPPORTED_MASK) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	     (attr->send_ops_flags & ~(uint64_t)SUPPORTED_SEND_OPS))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* Its first fields are ibv_qp_init_attr's (as verbs.h casts it). */
	ibqp = ibv_create_qp(attr->pd, (struct ibv_qp_init_attr *)attr);
	if (!ibqp || !(attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return ibqp;
	qp = SV_CONTAINER_OF(ibqp, struct sv_qp, qp);
	set_ops(&qp->qpx);
	qp->extended = true;
	return ibqp;
}

struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *ibqp)
{
	struct sv_qp *qp = SV_CONTAINER_OF(ibqp, struct sv_qp, qp);

	if (!qp->extended) {
		/* Made without send ops flags: no work-request API. */
		errno = EOPNOTSUPP;
		return NULL;
	}
	return &qp->qpx;
}

void sv_wr_drop(struct sv_qp *qp)
{
	drop_items(qp);
}
