/* SPDX-License-Identifier: BSD-2-Clause
 * Work requests: every data-transfer call ends here.
 *
 * Credits. A verbs send queue holds tx_size requests; a slot frees only
 * when the device reports the completion of that request or of a later
 * signaled one. Requests whose success the application does not want to
 * hear of (fi_inject*, selective completion) are posted unsignaled, and
 * every tx_size/2-th of them signaled with a silent record, so that the
 * queue never fills with requests nobody will retire.
 *
 * Local buffers are named by their region's lkey (the descriptor is the
 * struct vrb_mr); a missing or wrong descriptor is the device's to find,
 * and it reports IBV_WC_LOC_PROT_ERR as a completion error. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

enum { VRB_MAX_SGE = 32 };

static uint32_t lkey_of(void **desc, size_t i)
{
	struct vrb_mr *mr = desc ? desc[i] : NULL;

	return mr ? mr->mr->lkey : 0;
}

static int fill_sges(const struct iovec *iov, void **desc, size_t count,
		     struct ibv_sge *sge, size_t *total)
{
	*total = 0;
	for (size_t i = 0; i < count; i++) {
		if (iov[i].iov_len > UINT32_MAX)
			return -FI_EMSGSIZE;
		sge[i].addr = (uintptr_t)iov[i].iov_base;
		sge[i].length = (uint32_t)iov[i].iov_len;
		sge[i].lkey = lkey_of(desc, i);
		*total += iov[i].iov_len;
	}
	return 0;
}

static enum ibv_wr_opcode with_imm(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND: return IBV_WR_SEND_WITH_IMM;
	case IBV_WR_RDMA_WRITE: return IBV_WR_RDMA_WRITE_WITH_IMM;
	default: return op;
	}
}

static int post_errno(int err)
{
	/* ENOMEM: the send queue is full (another thread raced us). */
	return err == ENOMEM ? -FI_EAGAIN : -FI_EINVAL;
}

ssize_t vrb_post_send(struct vrb_ep *ep, const struct vrb_send *s)
{
	struct ibv_sge sge[VRB_MAX_SGE];
	struct ibv_send_wr wr = { 0 }, *bad;
	struct vrb_op *op = NULL;
	size_t total;
	bool signaled;
	ssize_t ret;

	if (!ep->id || !ep->id->qp)
		return -FI_EOPBADSTATE;
	if (s->count > ep->info->tx_attr->iov_limit || s->count > VRB_MAX_SGE ||
	    (s->count && !s->iov))
		return -FI_EINVAL;
	/* Remote CQ data rides immediate data, which takes a receive at the
	 * target: only a program that accepted FI_RX_CQ_DATA was offered it
	 * (cq_data_size 0 otherwise). */
	if ((s->flags & FI_REMOTE_CQ_DATA) &&
	    !ep->info->domain_attr->cq_data_size) {
		FI_WARN(&vrb_prov, FI_LOG_EP_DATA, "remote CQ data: the "
			"domain's cq_data_size is 0 (the program did not "
			"accept the FI_RX_CQ_DATA mode)\n");
		return -FI_EINVAL;
	}
	ret = fill_sges(s->iov, s->desc, s->count, sge, &total);
	if (ret)
		return ret;
	if (total > ep->info->ep_attr->max_msg_size)
		return -FI_EMSGSIZE;
	if ((s->flags & FI_INJECT) && total > ep->inject_size)
		return -FI_EMSGSIZE;
	/* No transmit CQ: nobody hears of successes (errors still land in
	 * the receive CQ, which the queue pair uses for both). */
	signaled = ep->tx_cq && !s->inject_call &&
		   (!ep->tx_selective || (s->flags & FI_COMPLETION));

	pthread_mutex_lock(&ep->lock);
	if (ep->sq_posted - __atomic_load_n(&ep->sq_done, __ATOMIC_ACQUIRE) >=
	    ep->tx_size) {
		pthread_mutex_unlock(&ep->lock);
		return -FI_EAGAIN;
	}
	if (signaled || ep->unsignaled + 1 >= (ep->tx_size + 1) / 2) {
		op = vrb_cq_op_get(vrb_ep_scq(ep));
		if (!op) {
			pthread_mutex_unlock(&ep->lock);
			return -FI_ENOMEM;
		}
		op->info.context = s->context;
		op->info.kind = (uint8_t)s->kind;
		op->silent = !signaled;
		op->sq_pos = ep->sq_posted + 1;
		wr.wr_id = (uintptr_t)op;
		wr.send_flags |= IBV_SEND_SIGNALED;
	} else {
		uint64_t pos = ep->sq_posted + 1;

		void **ring = ep->unsignaled_ctx;

		if (s->context && !ring) {
			/* Read by the CQ's readers, not under our lock. */
			ring = calloc(ep->tx_size, sizeof(*ring));
			__atomic_store_n(&ep->unsignaled_ctx, ring,
					 __ATOMIC_RELEASE);
		}
		if (ring)
			ring[pos % ep->tx_size] = s->context;
		wr.wr_id = vrb_wr_id_unsignaled(s->kind, pos);
	}
	wr.sg_list = s->count ? sge : NULL;
	wr.num_sge = (int)s->count;
	wr.opcode = s->opcode;
	if (s->flags & FI_REMOTE_CQ_DATA) {
		wr.opcode = with_imm(s->opcode);
		wr.imm_data = htonl((uint32_t)s->data);
	}
	if (s->flags & FI_INJECT)
		wr.send_flags |= IBV_SEND_INLINE;
	if (s->flags & FI_FENCE)
		wr.send_flags |= IBV_SEND_FENCE;
	switch (s->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_READ:
		wr.wr.rdma.remote_addr = s->remote_addr;
		wr.wr.rdma.rkey = s->rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wr.wr.atomic.remote_addr = s->remote_addr;
		wr.wr.atomic.rkey = s->rkey;
		wr.wr.atomic.compare_add = s->compare_add;
		wr.wr.atomic.swap = s->swap;
		break;
	default:
		break;
	}
	ret = ibv_post_send(ep->id->qp, &wr, &bad);
	if (ret) {
		FI_DBG(&vrb_prov, FI_LOG_EP_DATA, "ibv_post_send: %s\n",
		       strerror((int)ret));
		if (op)
			vrb_cq_op_put(vrb_ep_scq(ep), op);
		ret = post_errno((int)ret);
	} else {
		ep->sq_posted++;
		ep->unsignaled = op ? 0 : ep->unsignaled + 1;
	}
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

ssize_t vrb_post_recv(struct vrb_ep *ep, const struct iovec *iov,
		      void **desc, size_t count, void *context,
		      uint64_t flags)
{
	struct ibv_sge sge[VRB_MAX_SGE];
	struct ibv_recv_wr wr = { 0 }, *bad;
	struct vrb_op *op;
	size_t total;
	ssize_t ret;

	if (!ep->id || !ep->id->qp)
		return -FI_EOPBADSTATE;
	if (count > ep->info->rx_attr->iov_limit || count > VRB_MAX_SGE ||
	    (count && !iov))
		return -FI_EINVAL;
	ret = fill_sges(iov, desc, count, sge, &total);
	if (ret)
		return ret;
	pthread_mutex_lock(&ep->lock);
	if (__atomic_load_n(&ep->rx_posted, __ATOMIC_ACQUIRE) >= ep->rx_size) {
		pthread_mutex_unlock(&ep->lock);
		return -FI_EAGAIN;
	}
	op = vrb_cq_op_get(vrb_ep_rcq(ep));
	if (!op) {
		pthread_mutex_unlock(&ep->lock);
		return -FI_ENOMEM;
	}
	op->info.context = context;
	op->info.kind = VRB_OP_RECV;
	op->info.buf = count ? iov[0].iov_base : NULL;
	op->info.len = total;
	op->silent = ep->rx_selective && !(flags & FI_COMPLETION);
	wr.wr_id = (uintptr_t)op;
	wr.sg_list = count ? sge : NULL;
	wr.num_sge = (int)count;
	ret = ibv_post_recv(ep->id->qp, &wr, &bad);
	if (ret) {
		vrb_cq_op_put(vrb_ep_rcq(ep), op);
		ret = post_errno((int)ret);
	} else {
		__atomic_add_fetch(&ep->rx_posted, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

void vrb_ep_tx_done(struct vrb_ep *ep, uint64_t sq_pos)
{
	uint64_t cur = __atomic_load_n(&ep->sq_done, __ATOMIC_RELAXED);

	/* Completions come in order; an unsignaled request's error (no
	 * position) never moves the mark back. */
	while (cur < sq_pos &&
	       !__atomic_compare_exchange_n(&ep->sq_done, &cur, sq_pos, false,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

void vrb_ep_rx_done(struct vrb_ep *ep)
{
	__atomic_sub_fetch(&ep->rx_posted, 1, __ATOMIC_RELEASE);
}
