/* SPDX-License-Identifier: BSD-2-Clause
 * Shared receive queues over the NIC model's (nic_srq): receives that the
 * RC queue pairs created on the SRQ take in the order posted; each
 * completion comes on the CQ of the QP that took it, with its qp_num.
 *
 * Where the face differs from a device: a receive with a bad local key
 * fails its post (EINVAL) instead of failing the QP that takes it; the
 * limit event (ibv_modify_srq with IBV_SRQ_LIMIT) is raised when a taken
 * receive completes and fewer than the limit are left, not the instant
 * the NIC takes it; the queue cannot be resized (IBV_SRQ_MAX_WR: EINVAL,
 * as many devices answer).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sv.h"

struct ibv_srq *ibv_create_srq(struct ibv_pd *ibpd,
			       struct ibv_srq_init_attr *init)
{
	struct sv_pd *pd = SV_CONTAINER_OF(ibpd, struct sv_pd, pd);
	struct sv_srq *srq;
	int ret;

	if (!init || !init->attr.max_wr || init->attr.max_wr > SV_MAX_QP_WR ||
	    init->attr.max_sge > SV_MAX_SGE) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	sv->lock();
	ret = nic_srq_create(pd->ctx->dev->nic, &srq->nsrq);
	if (!ret)
		pd->refs++;
	sv->unlock();
	if (ret) {
		free(srq);
		errno = -ret;
		return NULL;
	}
	srq->pd = pd;
	srq->attr.max_wr = init->attr.max_wr;
	srq->attr.max_sge = init->attr.max_sge ? init->attr.max_sge : 1;
	init->attr = srq->attr;
	srq->srq.context = ibpd->context;
	srq->srq.srq_context = init->srq_context;
	srq->srq.pd = ibpd;
	pthread_mutex_init(&srq->srq.mutex, NULL);
	pthread_cond_init(&srq->srq.cond, NULL);
	return &srq->srq;
}

int ibv_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		   int mask)
{
	struct sv_srq *srq = SV_CONTAINER_OF(ibsrq, struct sv_srq, srq);
	int ret = 0;

	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	if (mask & IBV_SRQ_MAX_WR)
		return EINVAL; /* no resizing */
	sv->lock();
	if ((mask & IBV_SRQ_LIMIT) && attr->srq_limit > srq->attr.max_wr) {
		ret = EINVAL;
	} else if (mask & IBV_SRQ_LIMIT) {
		srq->attr.srq_limit = attr->srq_limit;
		srq->armed = attr->srq_limit > 0;
	}
	sv->unlock();
	return ret;
}

int ibv_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct sv_srq *srq = SV_CONTAINER_OF(ibsrq, struct sv_srq, srq);

	sv->lock();
	*attr = srq->attr;
	if (!srq->armed)
		attr->srq_limit = 0;
	sv->unlock();
	return 0;
}

int ibv_destroy_srq(struct ibv_srq *ibsrq)
{
	struct sv_srq *srq = SV_CONTAINER_OF(ibsrq, struct sv_srq, srq);

	sv->lock();
	if (srq->refs || nic_srq_destroy(srq->nsrq)) {
		sv->unlock();
		return EBUSY;
	}
	srq->pd->refs--;
	sv->unlock();
	while (srq->recvs) {
		struct sv_wr *w = srq->recvs;

		srq->recvs = w->next;
		free(w);
	}
	pthread_mutex_destroy(&ibsrq->mutex);
	pthread_cond_destroy(&ibsrq->cond);
	free(srq);
	return 0;
}

void sv_srq_taken(struct sv_srq *srq)
{
	struct ibv_async_event ev = {
		.element.srq = &srq->srq,
		.event_type = IBV_EVENT_SRQ_LIMIT_REACHED,
	};

	srq->recv_count--;
	if (srq->armed && srq->recv_count < srq->attr.srq_limit) {
		srq->armed = false;
		sv_async_push(sv_ctx(srq->srq.context), &ev);
	}
}

static int post_one(struct sv_srq *srq, const struct ibv_recv_wr *wr)
{
	struct nic_recv r;
	struct sv_wr *w;
	bool keys_ok;
	int ret;

	if (srq->recv_count >= srq->attr.max_wr)
		return ENOMEM;
	w = sv_recv_prepare(srq->pd, wr, srq->attr.max_sge, &r, &keys_ok, &ret);
	if (!w)
		return ret;
	if (!keys_ok) {
		free(w);
		return EINVAL;
	}
	w->srq = srq;
	ret = nic_srq_post_recv(srq->nsrq, &r);
	if (ret) {
		free(w);
		return ret == -ENOMEM ? ENOMEM : EINVAL;
	}
	w->prev = srq->recvs_tail;
	if (w->prev)
		w->prev->next = w;
	else
		srq->recvs = w;
	srq->recvs_tail = w;
	srq->recv_count++;
	return 0;
}

int sv_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad)
{
	struct sv_srq *srq = SV_CONTAINER_OF(ibsrq, struct sv_srq, srq);
	int ret = 0;

	sv->lock();
	for (; wr; wr = wr->next) {
		ret = post_one(srq, wr);
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
