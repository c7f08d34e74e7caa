/* SPDX-License-Identifier: BSD-2-Clause
 * Extended CQs (ibv_create_cq_ex) and their polling API: ibv_start_poll,
 * ibv_next_poll, ibv_end_poll and the ibv_wc_read_* calls. The same ring
 * as a plain CQ (ibv_poll_cq works on it too): each start or next takes
 * one completion off it, as ibv_poll_cq would, and the reads look at that
 * one. No lock is held between start and end, so the program may post in
 * between, as it may on a device. The standard fields are offered;
 * timestamps, VLANs, flow tags and tag matching are not (EOPNOTSUPP).
 */
#include <errno.h>
#include <string.h>

#include "sv.h"

static struct sv_cq *cq_of(struct ibv_cq_ex *cqx)
{
	return SV_CONTAINER_OF(cqx, struct sv_cq, cqx);
}

/* The next completion into cq->current: 0, or ENOENT when there is none
 * (the empty read lets time move, as an empty ibv_poll_cq does). */
static int take(struct ibv_cq_ex *cqx)
{
	struct sv_cq *cq = cq_of(cqx);

	if (sv_poll_cq(&cq->cq, 1, &cq->current) != 1)
		return ENOENT;
	cqx->wr_id = cq->current.wr_id;
	cqx->status = cq->current.status;
	return 0;
}

static int start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	if (attr && attr->comp_mask)
		return EINVAL;
	return take(cqx);
}

static int next_poll(struct ibv_cq_ex *cqx)
{
	return take(cqx);
}

static void end_poll(struct ibv_cq_ex *cqx)
{
	(void)cqx;
}

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *cqx)
{
	return cq_of(cqx)->current.opcode;
}

static uint32_t read_vendor_err(struct ibv_cq_ex *cqx)
{
	return cq_of(cqx)->current.vendor_err;
}

static uint32_t read_byte_len(struct ibv_cq_ex *cqx)
{
	return cq_of(cqx)->current.byte_len;
}

static __be32 read_imm_data(struct ibv_cq_ex *cqx)
{
	return cq_of(cqx)->current.imm_data;
}

static uint32_t read_qp_num(struct ibv_cq_ex *cqx)
{
	return cq_of(cqx)->current.qp_num;
}

static uint32_t read_src_qp(struct ibv_cq_ex *cqx)
{
	return cq_of(cqx)->current.src_qp;
}

static unsigned int read_wc_flags(struct ibv_cq_ex *cqx)
{
	return cq_of(cqx)->current.wc_flags;
}

static uint32_t read_slid(struct ibv_cq_ex *cqx)
{
	return cq_of(cqx)->current.slid;
}

static uint8_t read_sl(struct ibv_cq_ex *cqx)
{
	return cq_of(cqx)->current.sl;
}

static uint8_t read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return cq_of(cqx)->current.dlid_path_bits;
}

enum {
	SUPPORTED_WC_FLAGS = IBV_WC_STANDARD_FLAGS,
	SUPPORTED_COMP_MASK = IBV_CQ_INIT_ATTR_MASK_FLAGS,
	SUPPORTED_FLAGS = IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
};

struct ibv_cq_ex *sv_create_cq_ex(struct ibv_context *context,
				  struct ibv_cq_init_attr_ex *attr)
{
	struct sv_cq *cq;
	struct ibv_cq_ex *cqx;

	if (!attr || (attr->comp_mask & ~(uint32_t)SUPPORTED_COMP_MASK)) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->wc_flags & ~(uint64_t)SUPPORTED_WC_FLAGS) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)SUPPORTED_FLAGS))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	cq = sv_cq_new(context, (int)attr->cqe, attr->cq_context,
		       attr->channel, (int)attr->comp_vector);
	if (!cq)
		return NULL;
	cqx = &cq->cqx;
	cqx->comp_mask = 0;
	cqx->start_poll = start_poll;
	cqx->next_poll = next_poll;
	cqx->end_poll = end_poll;
	cqx->read_opcode = read_opcode;
	cqx->read_vendor_err = read_vendor_err;
	cqx->read_byte_len = read_byte_len;
	cqx->read_imm_data = read_imm_data;
	cqx->read_qp_num = read_qp_num;
	cqx->read_src_qp = read_src_qp;
	cqx->read_wc_flags = read_wc_flags;
	cqx->read_slid = read_slid;
	cqx->read_sl = read_sl;
	cqx->read_dlid_path_bits = read_dlid_path_bits;
	return cqx;
}
