/* SPDX-License-Identifier: BSD-2-Clause
 * Work completions as CQ entries (fi_cq(3)).
 *
 * A successful completion's opcode says what happened; a failed one's does
 * not (verbs leaves it undefined), so the flags of a failure come from what
 * the provider recorded when it posted the request. Immediate data travels
 * in network byte order in verbs and as a host-order value in libfabric. */
#include <arpa/inet.h>
#include <string.h>

#include <rdma/fi_errno.h>

#include <fabsim/util.h>

#include "vrb_translate.h"

uint64_t vrb_op_flags(enum vrb_op_kind kind)
{
	switch (kind) {
	case VRB_OP_SEND: return FI_SEND | FI_MSG;
	case VRB_OP_WRITE: return FI_RMA | FI_WRITE;
	case VRB_OP_READ: return FI_RMA | FI_READ;
	case VRB_OP_ATOMIC_WRITE: return FI_ATOMIC | FI_WRITE;
	case VRB_OP_ATOMIC_FETCH: return FI_ATOMIC | FI_READ;
	case VRB_OP_RECV: return FI_RECV | FI_MSG;
	default: return 0;
	}
}

static enum vrb_op_kind kind_of(const struct ibv_wc *wc,
				const struct vrb_op_info *op)
{
	if (op)
		return (enum vrb_op_kind)op->kind;
	if (!vrb_wr_id_is_record(wc->wr_id) &&
	    vrb_wr_id_kind(wc->wr_id) < VRB_OP_KIND_MAX)
		return vrb_wr_id_kind(wc->wr_id);
	return 0;
}

void vrb_wc_to_cqe(const struct ibv_wc *wc, const struct vrb_op_info *op,
		   struct vrb_cqe *out)
{
	enum vrb_op_kind kind = kind_of(wc, op);

	memset(out, 0, sizeof(*out));
	out->op_context = op ? op->context : NULL;
	out->flags = vrb_op_flags(kind);
	if (wc->opcode & IBV_WC_RECV) {
		out->len = wc->byte_len;
		if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
			/* An RDMA write with immediate data consumed this
			 * receive (FI_RX_CQ_DATA): nothing landed in it. */
			out->flags = FI_RMA | FI_REMOTE_WRITE;
		} else {
			out->flags = FI_RECV | FI_MSG;
			out->buf = op ? op->buf : NULL;
		}
		if (wc->wc_flags & IBV_WC_WITH_IMM) {
			out->flags |= FI_REMOTE_CQ_DATA;
			out->data = ntohl(wc->imm_data);
		}
	}
}

void vrb_wc_to_err(const struct ibv_wc *wc, const struct vrb_op_info *op,
		   struct fi_cq_err_entry *out)
{
	enum vrb_op_kind kind = kind_of(wc, op);

	memset(out, 0, sizeof(*out));
	out->op_context = op ? op->context : NULL;
	out->flags = vrb_op_flags(kind);
	if (kind == VRB_OP_RECV) {
		out->buf = op ? op->buf : NULL;
		if (op && wc->status == IBV_WC_LOC_LEN_ERR) {
			out->len = wc->byte_len < op->len ? wc->byte_len : op->len;
			out->olen = wc->byte_len > op->len ?
					    wc->byte_len - op->len : 0;
		}
	}
	out->err = vrb_status_errno(wc->status, kind == VRB_OP_RECV);
	if (!out->err)
		out->err = FI_EIO; /* not an error completion: a caller bug */
	out->prov_errno = (int)wc->status;
}

void vrb_cqe_write(enum fi_cq_format format, const struct vrb_cqe *e,
		   void *out)
{
	struct fi_cq_tagged_entry full = {
		.op_context = e->op_context,
		.flags = e->flags,
		.len = e->len,
		.buf = e->buf,
		.data = e->data,
		.tag = e->tag,
	};

	fabsim_cq_entry_write(format, &full, out);
}
