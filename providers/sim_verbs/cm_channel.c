/* SPDX-License-Identifier: BSD-2-Clause
 * rdma_cm event channels. An event is queued on its id's channel when the
 * connection manager (cm_conn.c) or a resolution step produces it; the
 * channel's fd is readable while one is queued or the simulation has work,
 * and rdma_get_cm_event runs the simulation until one is there. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "cm.h"

static bool channel_ready(struct sv_waitable *w)
{
	return SV_CONTAINER_OF(w, struct cm_channel, w)->head != NULL;
}

struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct cm_channel *ch;
	int ret = cm_init();

	if (ret) {
		errno = -ret;
		return NULL;
	}
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	ch->w.watched = true;
	ret = cm_sv->waitable_init(&ch->w, channel_ready);
	if (ret) {
		free(ch);
		errno = -ret;
		return NULL;
	}
	ch->ch.fd = ch->w.fd;
	return &ch->ch;
}

void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct cm_channel *ch = SV_CONTAINER_OF(channel, struct cm_channel, ch);

	cm_sv->lock();
	while (ch->head) {
		struct cm_event *e = ch->head;

		ch->head = e->next;
		free(e);
	}
	cm_sv->unlock();
	if (cm_sv->waitable_fini(&ch->w))
		free(ch);
}

void cm_event_push(struct cm_id *id, enum rdma_cm_event_type type,
		   int status, struct cm_id *listener,
		   const void *data, size_t len, uint8_t responder_resources,
		   uint8_t initiator_depth)
{
	struct cm_channel *ch = id->channel;
	struct cm_event *e = calloc(1, sizeof(*e));

	if (!e)
		abort(); /* an event must not be lost */
	if (len > sizeof(e->data))
		len = sizeof(e->data);
	e->ev.id = &id->id;
	e->ev.listen_id = listener ? &listener->id : NULL;
	e->ev.event = type;
	e->ev.status = status;
	if (len)
		memcpy(e->data, data, len);
	e->ev.param.conn.private_data = len ? e->data : NULL;
	e->ev.param.conn.private_data_len = (uint8_t)len;
	/* rdma_get_cm_event(3): what the peer gave, each depth as the other
	 * side of it (the peer's initiator depth is what we answer), and the
	 * peer's QP number. */
	e->ev.param.conn.responder_resources = responder_resources;
	e->ev.param.conn.initiator_depth = initiator_depth;
	e->ev.param.conn.retry_count = id->retry_count;
	e->ev.param.conn.rnr_retry_count = id->rnr_retry_count;
	e->ev.param.conn.qp_num = id->remote_qpn;
	if (ch->tail)
		ch->tail->next = e;
	else
		ch->head = e;
	ch->tail = e;
	/* Readers get to see it before the clock moves on (nic_sched.c);
	 * posted() also updates every readable file descriptor. */
	cm_sv->posted();
}

void cm_event_push_ud(struct cm_id *id, enum rdma_cm_event_type type,
		      int status, struct cm_id *listener, const void *data,
		      size_t len, const struct ibv_ah_attr *ah, uint32_t qpn,
		      uint32_t qkey)
{
	struct rdma_cm_event *ev;

	cm_event_push(id, type, status, listener, data, len, 0, 0);
	ev = &id->channel->tail->ev;
	memset(&ev->param, 0, sizeof(ev->param));
	ev->param.ud.private_data = len ? SV_CONTAINER_OF(ev, struct cm_event,
							  ev)->data : NULL;
	ev->param.ud.private_data_len = (uint8_t)(len > CM_MAD_SIZE ?
						  CM_MAD_SIZE : len);
	if (ah)
		ev->param.ud.ah_attr = *ah;
	ev->param.ud.qp_num = qpn;
	ev->param.ud.qkey = qkey;
}

static void unlink_events(struct cm_channel *ch, struct cm_id *id,
			  struct cm_channel *to)
{
	struct cm_event **p = &ch->head, *prev = NULL;

	while (*p) {
		struct cm_event *e = *p;

		if (e->ev.id != &id->id) {
			prev = e;
			p = &e->next;
			continue;
		}
		*p = e->next;
		if (ch->tail == e)
			ch->tail = prev;
		e->next = NULL;
		if (!to) {
			free(e);
			continue;
		}
		if (to->tail)
			to->tail->next = e;
		else
			to->head = e;
		to->tail = e;
	}
	cm_sv->waitable_update(&ch->w);
	if (to)
		cm_sv->waitable_update(&to->w);
}

bool cm_event_queued(const struct cm_id *id)
{
	for (const struct cm_event *e = id->channel->head; e; e = e->next)
		if (e->ev.id == &id->id)
			return true;
	return false;
}

void cm_events_drop(struct cm_id *id)
{
	unlink_events(id->channel, id, NULL);
}

void cm_events_move(struct cm_id *id, struct cm_channel *from)
{
	unlink_events(from, id, id->channel);
}

static bool nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_NONBLOCK);
}

int rdma_get_cm_event(struct rdma_event_channel *channel,
		      struct rdma_cm_event **event)
{
	struct cm_channel *ch = SV_CONTAINER_OF(channel, struct cm_channel, ch);
	struct cm_event *e;
	int ret;

	if (!event) {
		errno = EINVAL;
		return -1;
	}
	cm_sv->lock();
	ret = cm_sv->wait_event(&ch->w, !nonblocking(channel->fd));
	if (ret) {
		cm_sv->unlock();
		errno = -ret;
		return -1;
	}
	e = ch->head;
	ch->head = e->next;
	if (!ch->head)
		ch->tail = NULL;
	cm_sv->waitable_update(&ch->w);
	cm_sv->unlock();
	e->next = NULL;
	*event = &e->ev;
	return 0;
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	if (!event) {
		errno = EINVAL;
		return -1;
	}
	free(SV_CONTAINER_OF(event, struct cm_event, ev));
	return 0;
}

const char *rdma_event_str(enum rdma_cm_event_type event)
{
	switch (event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED: return "RDMA_CM_EVENT_ADDR_RESOLVED";
	case RDMA_CM_EVENT_ADDR_ERROR: return "RDMA_CM_EVENT_ADDR_ERROR";
	case RDMA_CM_EVENT_ROUTE_RESOLVED: return "RDMA_CM_EVENT_ROUTE_RESOLVED";
	case RDMA_CM_EVENT_ROUTE_ERROR: return "RDMA_CM_EVENT_ROUTE_ERROR";
	case RDMA_CM_EVENT_CONNECT_REQUEST: return "RDMA_CM_EVENT_CONNECT_REQUEST";
	case RDMA_CM_EVENT_CONNECT_RESPONSE: return "RDMA_CM_EVENT_CONNECT_RESPONSE";
	case RDMA_CM_EVENT_CONNECT_ERROR: return "RDMA_CM_EVENT_CONNECT_ERROR";
	case RDMA_CM_EVENT_UNREACHABLE: return "RDMA_CM_EVENT_UNREACHABLE";
	case RDMA_CM_EVENT_REJECTED: return "RDMA_CM_EVENT_REJECTED";
	case RDMA_CM_EVENT_ESTABLISHED: return "RDMA_CM_EVENT_ESTABLISHED";
	case RDMA_CM_EVENT_DISCONNECTED: return "RDMA_CM_EVENT_DISCONNECTED";
	case RDMA_CM_EVENT_DEVICE_REMOVAL: return "RDMA_CM_EVENT_DEVICE_REMOVAL";
	case RDMA_CM_EVENT_MULTICAST_JOIN: return "RDMA_CM_EVENT_MULTICAST_JOIN";
	case RDMA_CM_EVENT_MULTICAST_ERROR: return "RDMA_CM_EVENT_MULTICAST_ERROR";
	case RDMA_CM_EVENT_ADDR_CHANGE: return "RDMA_CM_EVENT_ADDR_CHANGE";
	case RDMA_CM_EVENT_TIMEWAIT_EXIT: return "RDMA_CM_EVENT_TIMEWAIT_EXIT";
	default: return "UNKNOWN EVENT";
	}
}
