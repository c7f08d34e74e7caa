/* SPDX-License-Identifier: BSD-2-Clause
 * Completion queues and completion channels.
 *
 * A CQ is a ring of struct ibv_wc filled by the NIC's callbacks. Polling
 * an empty CQ lets the simulation run the events of the next instant.
 * ibv_req_notify_cq arms the CQ for one event on its channel, delivered
 * with the next completion; ibv_get_cq_event waits for it (running the
 * simulation). A full CQ is overrun: the completion is lost and the
 * context gets IBV_EVENT_CQ_ERR once, as on a device, where the CQ is
 * then in error. ibv_resize_cq gives the ring a new size that holds
 * what is unpolled. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "sv.h"

/* ---- Channels ---------------------------------------------------------------- */

static bool channel_ready(struct sv_waitable *w)
{
	return SV_CONTAINER_OF(w, struct sv_channel, w)->head != NULL;
}

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct sv_channel *ch = calloc(1, sizeof(*ch));
	int ret;

	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	ch->w.watched = true;
	ret = sv->waitable_init(&ch->w, channel_ready);
	if (ret) {
		free(ch);
		errno = -ret;
		return NULL;
	}
	ch->ch.context = context;
	ch->ch.fd = ch->w.fd;
	ch->ch.refcnt = 0;
	return &ch->ch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct sv_channel *ch = SV_CONTAINER_OF(channel, struct sv_channel, ch);

	sv->lock();
	if (channel->refcnt) {
		sv->unlock();
		return EBUSY;
	}
	sv->unlock();
	if (sv->waitable_fini(&ch->w))
		free(ch);
	return 0;
}

static void queue_event(struct sv_cq *cq)
{
	struct sv_channel *ch = cq->channel;

	if (cq->event_queued)
		return;
	cq->event_queued = true;
	cq->next_event = NULL;
	if (ch->tail)
		ch->tail->next_event = cq;
	else
		ch->head = cq;
	ch->tail = cq;
	sv->waitable_update(&ch->w);
}

static void unqueue_event(struct sv_cq *cq)
{
	struct sv_channel *ch = cq->channel;
	struct sv_cq **p = &ch->head, *prev = NULL;

	if (!cq->event_queued)
		return;
	while (*p != cq) {
		prev = *p;
		p = &(*p)->next_event;
	}
	*p = cq->next_event;
	if (ch->tail == cq)
		ch->tail = prev;
	cq->event_queued = false;
	sv->waitable_update(&ch->w);
}

static bool nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_NONBLOCK);
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
		     void **cq_context)
{
	struct sv_channel *ch = SV_CONTAINER_OF(channel, struct sv_channel, ch);
	struct sv_cq *got;
	int ret;

	sv->lock();
	ret = sv->wait_event(&ch->w, !nonblocking(channel->fd));
	if (ret) {
		sv->unlock();
		errno = -ret;
		return -1;
	}
	got = ch->head;
	unqueue_event(got);
	*cq = &got->cq;
	*cq_context = got->cq.cq_context;
	sv->unlock();
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/* ---- CQs ---------------------------------------------------------------------------- */

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe,
			     void *cq_context, struct ibv_comp_channel *channel,
			     int comp_vector)
{
	struct sv_cq *cq = sv_cq_new(context, cqe, cq_context, channel,
				     comp_vector);

	return cq ? &cq->cq : NULL;
}

struct sv_cq *sv_cq_new(struct ibv_context *context, int cqe,
			void *cq_context, struct ibv_comp_channel *channel,
			int comp_vector)
{
	struct sv_context *c = sv_ctx(context);
	struct sv_cq *cq;

	if (cqe < 1 || cqe > SV_MAX_CQE || comp_vector != 0) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (cq)
		cq->ring = calloc((size_t)cqe, sizeof(*cq->ring));
	if (!cq || !cq->ring) {
		if (cq)
			free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->size = (size_t)cqe;
	cq->channel = channel ? SV_CONTAINER_OF(channel, struct sv_channel, ch)
			      : NULL;
	cq->cq.context = context;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.cqe = cqe;
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	sv->lock();
	if (channel)
		channel->refcnt++;
	c->refs++;
	sv->unlock();
	return cq;
}

int ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct sv_cq *cq = SV_CONTAINER_OF(ibcq, struct sv_cq, cq);

	sv->lock();
	if (cq->refs) {
		sv->unlock();
		return EBUSY; /* queue pairs still use it */
	}
	if (cq->channel) {
		unqueue_event(cq);
		cq->channel->ch.refcnt--;
	}
	sv_ctx(ibcq->context)->refs--;
	sv->unlock();
	pthread_mutex_destroy(&ibcq->mutex);
	pthread_cond_destroy(&ibcq->cond);
	free(cq->ring);
	free(cq);
	return 0;
}

int ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct sv_cq *cq = SV_CONTAINER_OF(ibcq, struct sv_cq, cq);
	struct sv_cqe *ring;

	if (cqe < 1 || cqe > SV_MAX_CQE)
		return EINVAL;
	ring = calloc((size_t)cqe, sizeof(*ring));
	if (!ring)
		return ENOMEM;
	sv->lock();
	if ((size_t)cqe < cq->count) {
		sv->unlock();
		free(ring);
		return EINVAL; /* the unpolled entries would not fit */
	}
	for (size_t i = 0; i < cq->count; i++)
		ring[i] = cq->ring[(cq->head + i) % cq->size];
	free(cq->ring);
	cq->ring = ring;
	cq->head = 0;
	cq->size = (size_t)cqe;
	ibcq->cqe = cqe;
	sv->unlock();
	return 0;
}

static void give_back(const struct sv_cq_slots *slots)
{
	if (!slots || !slots->qp)
		return;
	slots->qp->send_count -= slots->sends;
	slots->qp->recv_count -= slots->recvs;
}

void sv_cq_forget_qp(struct sv_cq *cq, const struct sv_qp *qp)
{
	size_t kept = 0;

	/* As mlx5 cleans its CQs of a QP that is destroyed or reset: its
	 * entries go, the others keep their order. */
	for (size_t i = 0; i < cq->count; i++) {
		struct sv_cqe *e = &cq->ring[(cq->head + i) % cq->size];

		if (e->slots.qp == qp || e->wc.qp_num == qp->qp.qp_num)
			continue;
		if (kept != i)
			cq->ring[(cq->head + kept) % cq->size] = *e;
		kept++;
	}
	__atomic_store_n(&cq->count, kept, __ATOMIC_RELAXED);
}

void sv_cq_push(struct sv_cq *cq, const struct ibv_wc *wc, bool solicited,
		const struct sv_cq_slots *slots)
{
	struct sv_cqe *e;

	if (cq->count == cq->size) {
		struct ibv_async_event ev = {
			.element.cq = &cq->cq,
			.event_type = IBV_EVENT_CQ_ERR,
		};

		if (!cq->overrun)
			sv_async_push(sv_ctx(cq->cq.context), &ev);
		cq->overrun = true;
		give_back(slots); /* lost: nobody will read it */
		return;
	}
	e = &cq->ring[(cq->head + cq->count) % cq->size];
	e->wc = *wc;
	e->slots = slots ? *slots : (struct sv_cq_slots){ 0 };
	/* Read without the lock by sv_poll_cq. */
	__atomic_store_n(&cq->count, cq->count + 1, __ATOMIC_RELAXED);
	if (cq->armed && cq->channel &&
	    (!cq->solicited_only || solicited || wc->status != IBV_WC_SUCCESS)) {
		cq->armed = false;
		queue_event(cq);
	}
	/* A thread polling this CQ has something to read: it gets to read
	 * it before the clock moves on (nic_sched.c). */
	sv->posted();
}

int sv_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct sv_cq *cq = SV_CONTAINER_OF(ibcq, struct sv_cq, cq);
	int n = 0;

	if (num_entries < 0)
		return -1;
	/* Completions already here are read at once; an empty CQ is a poll,
	 * which on a shared fabric need not always take the lock. */
	if (__atomic_load_n(&cq->count, __ATOMIC_RELAXED))
		sv->lock();
	else if (!sv_poll_lock())
		return 0;
	if (!cq->count)
		sv_poll_instant();
	while (n < num_entries && cq->count) {
		wc[n++] = cq->ring[cq->head].wc;
		give_back(&cq->ring[cq->head].slots);
		cq->head = (cq->head + 1) % cq->size;
		__atomic_store_n(&cq->count, cq->count - 1, __ATOMIC_RELAXED);
	}
	sv->unlock();
	return n;
}

int sv_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct sv_cq *cq = SV_CONTAINER_OF(ibcq, struct sv_cq, cq);

	/* With no channel there is nothing to deliver the event to: the
	 * arm is accepted and changes nothing, as mlx5's. */
	if (!cq->channel)
		return 0;
	sv->lock();
	cq->armed = true;
	cq->solicited_only = solicited_only;
	sv->unlock();
	return 0;
}
