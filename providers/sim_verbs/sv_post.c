/* SPDX-License-Identifier: BSD-2-Clause
 * ibv_post_send and ibv_post_recv: verbs work requests to the NIC model's.
 *
 * Checked here, as a device's driver and hardware do: queue state and
 * depth, SGE count and inline size (the post fails, *bad_wr names the
 * request); local keys: the region must exist on this device, belong to
 * the QP's protection domain, cover the buffer, and allow local writes
 * where the NIC writes (receives, read and atomic results). A bad local
 * key is found by the "device": the post succeeds and the request
 * completes with IBV_WC_LOC_PROT_ERR, which puts the QP in the error
 * state — a send's at once, a receive's when a message lands in it (the
 * sender then hears a remote operational error). Remote keys and bounds
 * are the NIC model's to check.
 *
 * UD: a send names its destination by address handle, QP number and Q_Key
 * (one whose high bit is set stands for the QP's own, IBA 10.2.4) and
 * fits in one packet; a receive's first 40 bytes are for the GRH, so the
 * NIC is given what follows them. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_atomic.h>

#include "sv.h"

bool sv_lkey_ok(struct sv_pd *pd, const struct ibv_sge *sge,
		bool device_writes, struct nic_mr **out)
{
	struct sv_mr *mr;
	uintptr_t start, end, rstart, rend;

	*out = NULL;
	if (!sge->length)
		return true;
	mr = sv_mr_find(pd->ctx->dev, sge->lkey);
	if (!mr || mr->pd != pd)
		return false;
	if (device_writes && !(mr->access & IBV_ACCESS_LOCAL_WRITE))
		return false;
	start = (uintptr_t)sge->addr;
	end = start + sge->length;
	rstart = (uintptr_t)mr->mr.addr;
	rend = rstart + mr->mr.length;
	if (end < start || start < rstart || end > rend)
		return false;
	*out = mr->nmr;
	return true;
}

static void link_send(struct sv_qp *qp, struct sv_wr *w)
{
	w->next = qp->sends;
	if (w->next)
		w->next->prev = w;
	qp->sends = w;
	qp->send_count++;
}

static void link_recv(struct sv_qp *qp, struct sv_wr *w)
{
	w->prev = qp->recvs_tail;
	if (w->prev)
		w->prev->next = w;
	else
		qp->recvs = w;
	qp->recvs_tail = w;
	qp->recv_count++;
}

/* Records a request that fails its local checks and completes it with
 * `status` (the post itself succeeds). */
static int fail_local(struct sv_qp *qp, struct sv_wr *w,
		      enum ibv_wc_status status)
{
	sv_qp_local_error(qp, w, status);
	return 0;
}

static int send_opcode(enum ibv_wr_opcode op, enum nic_wr_opcode *nic,
		       enum ibv_wc_opcode *wc)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		*nic = NIC_WR_SEND;
		*wc = IBV_WC_SEND;
		return 0;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		*nic = NIC_WR_WRITE;
		*wc = IBV_WC_RDMA_WRITE;
		return 0;
	case IBV_WR_RDMA_READ:
		*nic = NIC_WR_READ;
		*wc = IBV_WC_RDMA_READ;
		return 0;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		*nic = NIC_WR_COMPARE_ATOMIC;
		*wc = IBV_WC_COMP_SWAP;
		return 0;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		*nic = NIC_WR_FETCH_ATOMIC;
		*wc = IBV_WC_FETCH_ADD;
		return 0;
	default:
		return EINVAL; /* memory windows, invalidation, TSO, ... */
	}
}

/* UD: where a send goes; EINVAL for what a datagram cannot be. */
static int ud_address(const struct ibv_send_wr *wr, struct nic_wr *nw)
{
	const struct sv_ah *ah;

	if ((wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM) ||
	    !wr->wr.ud.ah)
		return EINVAL;
	ah = SV_CONTAINER_OF(wr->wr.ud.ah, struct sv_ah, ah);
	nw->peer.host = ah->host;
	nw->peer.qpn = wr->wr.ud.remote_qpn & 0xffffff;
	if (!(wr->wr.ud.remote_qkey & 0x80000000u)) {
		nw->flags |= NIC_WR_QKEY;
		nw->qkey = wr->wr.ud.remote_qkey;
	}
	return 0;
}

static int post_one_send(struct sv_qp *qp, const struct ibv_send_wr *wr)
{
	struct nic_wr nw;
	struct sv_wr *w;
	bool is_inline = wr->send_flags & IBV_SEND_INLINE;
	bool atomic = wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		      wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
	bool device_writes = wr->opcode == IBV_WR_RDMA_READ || atomic;
	enum nic_wr_opcode nic_op;
	enum ibv_wc_opcode wc_op;
	uint64_t total = 0;
	int ret;

	if (qp->qp.state != IBV_QPS_RTS && qp->qp.state != IBV_QPS_ERR)
		return EINVAL;
	if (qp->send_count >= qp->cap.max_send_wr)
		return ENOMEM;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->cap.max_send_sge ||
	    (wr->num_sge && !wr->sg_list))
		return EINVAL;
	ret = send_opcode(wr->opcode, &nic_op, &wc_op);
	if (ret)
		return ret;
	memset(&nw, 0, sizeof(nw));
	if (qp->qp.qp_type == IBV_QPT_UD && (ret = ud_address(wr, &nw)))
		return ret;
	for (int i = 0; i < wr->num_sge; i++)
		total += wr->sg_list[i].length;
	if (is_inline && !atomic && wr->opcode != IBV_WR_RDMA_READ &&
	    total > qp->cap.max_inline_data)
		return EINVAL;
	if (total > SV_MAX_MSG_SIZE)
		return EINVAL;

	w = calloc(1, sizeof(*w));
	if (!w)
		return ENOMEM;
	w->wr_id = wr->wr_id;
	w->qp = qp;
	w->opcode = wc_op;
	w->byte_len = (uint32_t)total;
	w->signaled = (wr->send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all;

	nw.wr_id = (uintptr_t)w;
	nw.opcode = nic_op;
	if (w->signaled)
		nw.flags |= NIC_WR_SIGNALED;
	if (wr->send_flags & IBV_SEND_FENCE)
		nw.flags |= NIC_WR_FENCE;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		nw.flags |= NIC_WR_SOLICITED;
	if (wr->opcode == IBV_WR_SEND_WITH_IMM ||
	    wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
		nw.flags |= NIC_WR_IMM;
		nw.imm = ntohl(wr->imm_data);
	}

	if (atomic) {
		struct nic_mr *mr;

		if (wr->num_sge != 1 || wr->sg_list[0].length != 8)
			return fail_local(qp, w, IBV_WC_LOC_QP_OP_ERR);
		if (!sv_lkey_ok(qp->pd, &wr->sg_list[0], true, &mr))
			return fail_local(qp, w, IBV_WC_LOC_PROT_ERR);
		w->byte_len = 8;
		nw.atomic.datatype = FI_UINT64;
		nw.atomic.count = 1;
		nw.atomic.result[0].addr = (void *)(uintptr_t)wr->sg_list[0].addr;
		nw.atomic.result[0].len = 8;
		nw.atomic.result[0].mr = mr;
		nw.atomic.result_count = 1;
		if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
			nw.atomic.op = FI_CSWAP;
			w->operand = wr->wr.atomic.swap;
			w->compare = wr->wr.atomic.compare_add;
			nw.atomic.compare = &w->compare;
		} else {
			nw.atomic.op = FI_SUM;
			w->operand = wr->wr.atomic.compare_add;
		}
		nw.atomic.operand = &w->operand;
		nw.rma_count = 1;
		nw.rma[0].addr = wr->wr.atomic.remote_addr;
		nw.rma[0].len = 8;
		nw.rma[0].key = wr->wr.atomic.rkey;
	} else {
		nw.sge_count = (size_t)wr->num_sge;
		for (int i = 0; i < wr->num_sge; i++) {
			const struct ibv_sge *s = &wr->sg_list[i];

			nw.sge[i].addr = (void *)(uintptr_t)s->addr;
			nw.sge[i].len = s->length;
			if (is_inline && wr->opcode != IBV_WR_RDMA_READ)
				continue; /* copied now: no key involved */
			if (!sv_lkey_ok(qp->pd, s, device_writes, &nw.sge[i].mr))
				return fail_local(qp, w, IBV_WC_LOC_PROT_ERR);
		}
		if (is_inline && wr->opcode != IBV_WR_RDMA_READ)
			nw.flags |= NIC_WR_INLINE;
		if (nic_op == NIC_WR_WRITE || nic_op == NIC_WR_READ) {
			nw.rma_count = 1;
			nw.rma[0].addr = wr->wr.rdma.remote_addr;
			nw.rma[0].len = total;
			nw.rma[0].key = wr->wr.rdma.rkey;
		}
	}
	link_send(qp, w);
	ret = nic_post_send(qp->nqp, &nw);
	if (ret) {
		sv_wr_unlink(w);
		qp->send_count--;
		free(w);
		return ret == -ENOMEM ? ENOMEM : EINVAL;
	}
	return 0;
}

int sv_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		 struct ibv_send_wr **bad)
{
	struct sv_qp *qp = SV_CONTAINER_OF(ibqp, struct sv_qp, qp);
	int ret = 0;

	sv->lock();
	for (; wr; wr = wr->next) {
		ret = post_one_send(qp, wr);
		if (ret) {
			*bad = wr;
			break;
		}
	}
	sv->posted();
	if (ret == ENOMEM)
		sv_unlock_refused();
	else
		sv->unlock();
	return ret;
}

/* UD: the scatter list after the GRH's 40 bytes goes to the NIC; room
 * remembers where the GRH goes. */
static size_t skip_grh(struct nic_recv *r, struct sv_grh_room *room)
{
	size_t skip = SV_GRH_BYTES, out = 0;

	for (size_t i = 0; i < r->sge_count; i++) {
		struct nic_sge s = r->sge[i];
		size_t n = s.len < skip ? s.len : skip;

		if (n) {
			room->sge[room->count].addr = s.addr;
			room->sge[room->count].len = (uint32_t)n;
			room->count++;
		}
		skip -= n;
		s.addr = (char *)s.addr + n;
		s.len -= n;
		if (s.len)
			r->sge[out++] = s;
	}
	room->short_list = skip > 0;
	return out;
}

struct sv_wr *sv_recv_prepare(struct sv_pd *pd, const struct ibv_recv_wr *wr,
			       uint32_t max_sge, struct nic_recv *r,
			       bool *keys_ok, int *err)
{
	struct sv_wr *w;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge ||
	    (wr->num_sge && !wr->sg_list)) {
		*err = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		*err = ENOMEM;
		return NULL;
	}
	w->wr_id = wr->wr_id;
	w->recv = true;
	w->opcode = IBV_WC_RECV;
	memset(r, 0, sizeof(*r));
	r->cookie = (uintptr_t)w;
	r->source = NIC_ANY_SOURCE;
	r->sge_count = (size_t)wr->num_sge;
	*keys_ok = true;
	for (int i = 0; i < wr->num_sge; i++) {
		const struct ibv_sge *s = &wr->sg_list[i];

		r->sge[i].addr = (void *)(uintptr_t)s->addr;
		r->sge[i].len = s->length;
		if (!sv_lkey_ok(pd, s, true, &r->sge[i].mr))
			*keys_ok = false;
	}
	return w;
}

static int post_one_recv(struct sv_qp *qp, const struct ibv_recv_wr *wr)
{
	struct nic_recv r;
	struct sv_wr *w;
	bool keys_ok;
	int ret;

	if (qp->qp.state == IBV_QPS_RESET || qp->srq)
		return EINVAL;
	if (qp->recv_count >= qp->cap.max_recv_wr)
		return ENOMEM;
	w = sv_recv_prepare(qp->pd, wr, qp->cap.max_recv_sge, &r, &keys_ok,
			    &ret);
	if (!w)
		return ret;
	w->qp = qp;
	/* The device finds a receive's bad key when a message lands in it. */
	if (!keys_ok)
		r.flags |= NIC_RECV_BAD_KEY;
	if (qp->qp.qp_type == IBV_QPT_UD)
		r.sge_count = skip_grh(&r, &w->grh);
	link_recv(qp, w);
	ret = nic_post_recv(qp->nqp, &r);
	if (ret) {
		sv_wr_unlink(w);
		qp->recv_count--;
		free(w);
		return ret == -ENOMEM ? ENOMEM : EINVAL;
	}
	return 0;
}

int sv_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		 struct ibv_recv_wr **bad)
{
	struct sv_qp *qp = SV_CONTAINER_OF(ibqp, struct sv_qp, qp);
	int ret = 0;

	sv->lock();
	for (; wr; wr = wr->next) {
		ret = post_one_recv(qp, wr);
		if (ret) {
			*bad = wr;
			break;
		}
	}
	sv->posted();
	if (ret == ENOMEM)
		sv_unlock_refused();
	else
		sv->unlock();
	return ret;
}
