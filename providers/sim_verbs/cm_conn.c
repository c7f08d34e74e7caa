/* SPDX-License-Identifier: BSD-2-Clause
 * Connections as rdma_cm makes them on RoCE: IB CM MADs on the simulated
 * wire (QP1 of the simulated NICs, encoded by the sim provider's codec,
 * sim_cm_mad.c), timed and lossy like any packet, resent until answered.
 *
 * Active side (rdma_connect):
 *   ROUTE_RESOLVED --REQ--> REQ_SENT --REP: QP to RTS, send RTU--> ESTABLISHED
 *     (the program's own QP: --REP--> REP_RCVD (CONNECT_RESPONSE), the
 *      program moves its QP, rdma_establish: send RTU --> ESTABLISHED)
 *                              |--REJ--> (REJECTED)   |--retries out--> (UNREACHABLE)
 * Passive side (rdma_listen):
 *   REQ --> a new id, REQ_RCVD (CONNECT_REQUEST on the listener's channel)
 *     rdma_accept: QP to RTS --REP--> REP_SENT --RTU--> ESTABLISHED
 *     rdma_reject, or rdma_destroy_id before the RTU: --REJ--> IDLE
 *     (an established requester that gets it: QP to ERR, REJECTED)
 * Either side (rdma_disconnect, rdma_destroy_id of a connected id):
 *   QP to ERR --DREQ--> DREQ_SENT --DREP--> DISCONNECTED
 *   <--DREQ-- QP to ERR, send DREP --> DISCONNECTED
 * Resent requests are answered again, never acted on twice.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cm.h"

/* The same CM timing as the sim provider's: resend every 100 us of
 * virtual time, give up after 15 resends. */
#define CM_TIMEOUT_NS (100 * NM_NS_PER_US)
#define CM_RETRIES 15

/* Connections gone from this side, for the MADs of theirs still on the
 * wire: a resent REQ of a rejected connection gets the same REJ again, and
 * is never taken for a new request (IB CM's time-wait). */
#define CM_TOMBSTONES 64
static struct cm_tombstone {
	bool     used;
	int      dev;
	uint32_t host, remote_comm_id;
	bool     has_reply;
	uint8_t  reply[CM_MAD_SIZE];
} tombstones[CM_TOMBSTONES];
static unsigned next_tombstone;

static struct cm_tombstone *tombstone_of(int dev, uint32_t host,
					 uint32_t remote_id)
{
	for (unsigned i = 0; i < CM_TOMBSTONES; i++) {
		struct cm_tombstone *t = &tombstones[i];

		if (t->used && t->dev == dev && t->host == host &&
		    t->remote_comm_id == remote_id)
			return t;
	}
	return NULL;
}

static void device_of(int dev, struct nic **nic, uint32_t *host)
{
	cm_sv->device_addr(cm_context(dev)->device, nic, host, NULL);
}

/* ---- Sending ------------------------------------------------------------------ */

static void timer_stop(struct cm_id *c)
{
	if (c->timer_armed) {
		cm_sv->cancel(c->timer);
		c->timer_armed = false;
	}
}


static void on_timeout(nm_engine *engine, void *ctx, uint64_t arg);

static void timer_start(struct cm_id *c, nm_time_ns wait)
{
	uint32_t host;

	device_of(c->dev, NULL, &host);
	timer_stop(c);
	if (!cm_sv->schedule(host, wait, on_timeout, c, &c->timer))
		c->timer_armed = true;
}

void cm_addr_query(struct cm_id *c, int timeout_ms)
{
	c->state = CM_ADDR_QUERY;
	timer_start(c, (nm_time_ns)(timeout_ms > 0 ? timeout_ms : 1) *
			       NM_NS_PER_MS);
}

/* Sends m for c; a request (reliable) is remembered and resent until its
 * answer comes. */
static void send_msg(struct cm_id *c, struct cm_msg *m, bool reliable)
{
	struct nic *nic;
	uint32_t host;

	device_of(c->dev, &nic, &host);
	m->local_comm_id = c->local_comm_id;
	m->remote_comm_id = c->remote_comm_id;
	m->tid = (uint64_t)host << 32 | c->local_comm_id;
	if (cm_encode(m, c->last_mad))
		return;
	cm_sv->send_mad(nic, c->remote_host, c->last_mad, CM_MAD_SIZE);
	if (reliable) {
		c->retries = 0;
		timer_start(c, CM_TIMEOUT_NS);
	}
}

/* An answer nobody needs to remember (REJ to a stranger, DREP). */
static void send_reply(struct nic *nic, uint32_t host, uint32_t dst,
		       uint16_t attr, uint32_t local_id, uint32_t remote_id,
		       uint16_t reason)
{
	struct cm_msg m = {
		.attr = attr,
		.local_comm_id = local_id,
		.remote_comm_id = remote_id,
		.reason = reason,
		.tid = (uint64_t)host << 32 | local_id,
	};
	uint8_t mad[CM_MAD_SIZE];

	if (!cm_encode(&m, mad))
		cm_sv->send_mad(nic, dst, mad, CM_MAD_SIZE);
}

static void disconnected_quietly(struct cm_id *c)
{
	timer_stop(c);
	c->state = CM_DISCONNECTED;
	if (c->id.qp)
		cm_sv->qp_error(c->id.qp);
}

static void disconnected(struct cm_id *c)
{
	disconnected_quietly(c);
	if (!c->disconnect_reported) {
		c->disconnect_reported = true;
		cm_event_push(c, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, NULL, 0,
			      0, 0);
	}
}

static void on_timeout(nm_engine *engine, void *ctx, uint64_t arg)
{
	struct cm_id *c = ctx;
	struct nic *nic;

	c->timer_armed = false;
	if (c->state == CM_ADDR_QUERY) {
		c->state = CM_IDLE;
		cm_event_push(c, RDMA_CM_EVENT_ADDR_ERROR, -ETIMEDOUT, NULL,
			      NULL, 0, 0, 0);
		return;
	}
	if (++c->retries > CM_RETRIES) {
		switch (c->state) {
		case CM_REQ_SENT:
			c->state = CM_IDLE;
			cm_event_push(c, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT,
				      NULL, NULL, 0, 0, 0);
			break;
		case CM_REP_SENT:
			c->state = CM_IDLE;
			cm_event_push(c, RDMA_CM_EVENT_CONNECT_ERROR, -ETIMEDOUT,
				      NULL, NULL, 0, 0, 0);
			break;
		case CM_DREQ_SENT:
			disconnected(c); /* the peer is gone: all the same */
			break;
		default:
			break;
		}
		return;
	}
	device_of(c->dev, &nic, NULL);
	cm_sv->send_mad(nic, c->remote_host, c->last_mad, CM_MAD_SIZE);
	timer_start(c, CM_TIMEOUT_NS);
}

/* ---- The application's calls ---------------------------------------------------------- */

static int fail(int err)
{
	errno = err;
	return -1;
}

static struct cm_id *cm_of(struct rdma_cm_id *id)
{
	return SV_CONTAINER_OF(id, struct cm_id, id);
}

static size_t data_len(const struct rdma_conn_param *p, uint16_t attr)
{
	return p && p->private_data ? p->private_data_len : 0;
}

static int fill_data(struct cm_msg *m, const void *data, size_t len)
{
	if (len > cm_max_data(m->attr))
		return EINVAL;
	if (len)
		memcpy(m->data, data, len);
	m->data_len = len;
	return 0;
}

/* A UD port space's ids "connect" by service ID resolution. */
static bool is_ud(const struct cm_id *c)
{
	return c->id.ps == RDMA_PS_UDP;
}

/* The QP a connection is for: rdma_cm's (rdma_create_qp), or the
 * program's own, named by conn_param->qp_num (rdma_connect(3)); 0 when
 * neither (QP numbers start above it). */
static uint32_t qp_num_for(const struct cm_id *c,
			   const struct rdma_conn_param *conn_param)
{
	if (c->id.qp)
		return c->id.qp->qp_num;
	return conn_param && !is_ud(c) ? conn_param->qp_num : 0;
}

/* rdma_connect(3), rdma_accept(3): this side's RDMA read and atomic
 * depths, at most the device's (RDMA_MAX_RESP_RES and RDMA_MAX_INIT_DEPTH,
 * or no parameters: the device's); EINVAL past them, as librdmacm. */
static int take_depths(struct cm_id *c, const struct rdma_conn_param *p)
{
	struct ibv_device_attr dev;
	int ret = ibv_query_device(c->id.verbs, &dev);

	if (ret)
		return ret;
	c->responder_resources = (uint8_t)dev.max_qp_rd_atom;
	c->initiator_depth = (uint8_t)dev.max_qp_init_rd_atom;
	if (!p)
		return 0;
	if (p->responder_resources != RDMA_MAX_RESP_RES) {
		if (p->responder_resources > dev.max_qp_rd_atom)
			return EINVAL;
		c->responder_resources = p->responder_resources;
	}
	if (p->initiator_depth != RDMA_MAX_INIT_DEPTH) {
		if (p->initiator_depth > dev.max_qp_init_rd_atom)
			return EINVAL;
		c->initiator_depth = p->initiator_depth;
	}
	return 0;
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct cm_id *c = cm_of(id);
	struct cm_msg m = { .attr = is_ud(c) ? CM_ATTR_SIDR_REQ : CM_ATTR_REQ };
	uint32_t qpn = qp_num_for(c, conn_param);
	struct nic *nic;
	int ret;

	if (!qpn)
		return fail(EINVAL);
	ret = fill_data(&m, conn_param ? conn_param->private_data : NULL,
			data_len(conn_param, m.attr));
	if (!ret && !is_ud(c))
		ret = take_depths(c, conn_param);
	if (ret)
		return fail(ret);
	cm_sv->lock();
	if (c->state != CM_ROUTE_RESOLVED) {
		cm_sv->unlock();
		return fail(EINVAL);
	}
	c->remote_host = cm_sv->host_of_ip(c->peer_ip);
	device_of(c->dev, &nic, NULL);
	c->local_comm_id = nic_cm_comm_id(nic);
	c->remote_comm_id = 0;
	c->disconnect_reported = false;
	m.service_id = cm_service_id_ps(id->ps,
					ntohs(id->route.addr.dst_sin.sin_port));
	m.qpn = qpn;
	m.src_ip = id->route.addr.src_sin.sin_addr;
	m.dst_ip = c->peer_ip;
	m.src_port = ntohs(id->route.addr.src_sin.sin_port);
	/* librdmacm: 7 and 7 when the program gives no parameters. */
	c->retry_count = conn_param ? conn_param->retry_count & 7 : 7;
	m.retry_count = c->retry_count;
	m.rnr_retry_count = conn_param ? conn_param->rnr_retry_count & 7 : 7;
	m.responder_resources = c->responder_resources;
	m.initiator_depth = c->initiator_depth;
	c->state = CM_REQ_SENT;
	send_msg(c, &m, true);
	cm_sv->posted();
	cm_sv->unlock();
	return cm_sync_complete(c);
}

/* The SIDR_REP that answers c's request (lock held): the QP and Q_Key
 * to send to, or a status saying why not. Remembered, for a resent
 * request. */
static void sidr_reply(struct cm_id *c, struct cm_msg *m, uint8_t status)
{
	m->attr = CM_ATTR_SIDR_REP;
	m->reason = status;
	m->service_id = cm_service_id_ps(c->id.ps,
					 ntohs(c->id.route.addr.src_sin.sin_port));
	if (status == CM_SIDR_SUCCESS) {
		m->qpn = c->id.qp->qp_num;
		m->qkey = RDMA_UDP_QKEY;
	}
	/* A UD "connection" is done once answered: nothing to tear down. */
	c->state = status == CM_SIDR_SUCCESS ? CM_ESTABLISHED : CM_IDLE;
	c->rejected = true; /* the answer is kept for a resent request */
	send_msg(c, m, false);
}

int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct cm_id *c = cm_of(id);
	struct cm_msg m = { .attr = is_ud(c) ? CM_ATTR_SIDR_REP : CM_ATTR_REP };
	uint32_t qpn = qp_num_for(c, conn_param);
	int ret;

	if (!qpn)
		return fail(EINVAL);
	ret = fill_data(&m, conn_param ? conn_param->private_data : NULL,
			data_len(conn_param, m.attr));
	if (!ret && !is_ud(c))
		ret = take_depths(c, conn_param);
	if (ret)
		return fail(ret);
	cm_sv->lock();
	if (c->state != CM_REQ_RCVD) {
		cm_sv->unlock();
		return fail(EINVAL);
	}
	if (is_ud(c)) {
		/* No event follows on this side. */
		sidr_reply(c, &m, CM_SIDR_SUCCESS);
		cm_sv->posted();
		cm_sv->unlock();
		return 0;
	}
	/* The program's own QP it has moved to RTR itself (rdma_init_qp_attr). */
	ret = id->qp ? cm_sv->qp_connect(id->qp, c->remote_host,
					 c->remote_qpn, c->retry_count,
					 c->rnr_retry_count, c->initiator_depth,
					 c->responder_resources) :
		       0;
	if (!ret) {
		m.qpn = qpn;
		m.responder_resources = c->responder_resources;
		m.initiator_depth = c->initiator_depth;
		m.rnr_retry_count = conn_param ? conn_param->rnr_retry_count & 7
					       : 7;
		c->state = CM_REP_SENT;
		send_msg(c, &m, true);
		cm_sv->posted();
	}
	cm_sv->unlock();
	return ret ? fail(ret) : cm_sync_complete(c);
}

int rdma_reject(struct rdma_cm_id *id, const void *private_data,
		uint8_t private_data_len)
{
	struct cm_id *c = cm_of(id);
	struct cm_msg m = { .attr = CM_ATTR_REJ, .reason = CM_REJ_CONSUMER };
	int ret = fill_data(&m, private_data, private_data ? private_data_len : 0);

	if (ret)
		return fail(ret);
	cm_sv->lock();
	if (c->state != CM_REQ_RCVD) {
		cm_sv->unlock();
		return fail(EINVAL);
	}
	if (is_ud(c)) {
		sidr_reply(c, &m, CM_SIDR_REJECT);
		cm_sv->posted();
		cm_sv->unlock();
		return 0;
	}
	c->state = CM_IDLE;
	c->rejected = true;
	send_msg(c, &m, false);
	cm_sv->posted();
	cm_sv->unlock();
	return 0;
}

/* Lock held. */
static void start_disconnect(struct cm_id *c)
{
	struct cm_msg m = { .attr = CM_ATTR_DREQ, .qpn = c->remote_qpn };

	if (c->id.qp)
		cm_sv->qp_error(c->id.qp);
	c->state = CM_DREQ_SENT;
	send_msg(c, &m, true);
}

int rdma_establish(struct rdma_cm_id *id)
{
	struct cm_id *c = cm_of(id);
	struct cm_msg rtu = { .attr = CM_ATTR_RTU };

	cm_sv->lock();
	if (c->state != CM_REP_RCVD) {
		cm_sv->unlock();
		return fail(EINVAL);
	}
	c->state = CM_ESTABLISHED;
	send_msg(c, &rtu, false);
	cm_sv->posted();
	cm_sv->unlock();
	return 0;
}

/* rdma_init_qp_attr(3): what the program's own QP needs for the state it
 * asks (qp_attr->qp_state), from what the connection has learnt. */
int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr,
		      int *qp_attr_mask)
{
	struct cm_id *c = cm_of(id);
	enum ibv_qp_state want = qp_attr->qp_state;
	int ret = 0;

	cm_sv->lock();
	memset(qp_attr, 0, sizeof(*qp_attr));
	qp_attr->qp_state = want;
	switch (want) {
	case IBV_QPS_INIT:
		qp_attr->port_num = 1;
		/* The kernel's: reads and atomics too when the connection
		 * has responder resources (ours always has one). */
		qp_attr->qp_access_flags = IBV_ACCESS_REMOTE_READ |
					   IBV_ACCESS_REMOTE_WRITE |
					   IBV_ACCESS_REMOTE_ATOMIC;
		*qp_attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
		break;
	case IBV_QPS_RTR:
		if (!c->remote_qpn) {
			ret = EINVAL; /* no peer yet */
			break;
		}
		qp_attr->path_mtu = IBV_MTU_4096;
		qp_attr->dest_qp_num = c->remote_qpn;
		qp_attr->max_dest_rd_atomic = c->responder_resources;
		qp_attr->min_rnr_timer = 12;
		qp_attr->ah_attr.is_global = 1;
		qp_attr->ah_attr.port_num = 1;
		qp_attr->ah_attr.grh.sgid_index = 1;
		qp_attr->ah_attr.grh.hop_limit = 64;
		/* A requester's peer is where its route goes (its own NIC
		 * for a loopback address); a request's, where it came from. */
		cm_gid_of(c->passive ? id->route.addr.dst_sin.sin_addr :
				       c->peer_ip,
			  &qp_attr->ah_attr.grh.dgid);
		*qp_attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER;
		break;
	case IBV_QPS_RTS:
		qp_attr->timeout = 14;
		qp_attr->retry_cnt = c->retry_count;
		qp_attr->rnr_retry = c->rnr_retry_count;
		qp_attr->max_rd_atomic = c->initiator_depth;
		*qp_attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				IBV_QP_MAX_QP_RD_ATOMIC;
		break;
	default:
		ret = EINVAL;
		break;
	}
	cm_sv->unlock();
	return ret ? fail(ret) : 0;
}

int rdma_disconnect(struct rdma_cm_id *id)
{
	struct cm_id *c = cm_of(id);
	int ret = 0;

	if (is_ud(c))
		return fail(EINVAL); /* datagrams are not connected */
	cm_sv->lock();
	switch (c->state) {
	case CM_ESTABLISHED:
	case CM_REP_SENT:
		start_disconnect(c);
		cm_sv->posted();
		break;
	case CM_DREQ_SENT:
		break;
	case CM_DISCONNECTED:
		/* A synchronous id takes the peer's disconnection, if it has
		 * not yet; there is nothing else to wait for. */
		if (!cm_event_queued(c)) {
			cm_sv->unlock();
			return 0;
		}
		break;
	default:
		ret = EINVAL;
		break;
	}
	cm_sv->unlock();
	return ret ? fail(ret) : cm_sync_complete(c);
}

/* A request the application let go without an answer is refused, as the
 * kernel's CM does when such an id is destroyed: the requester hears at
 * once rather than after its MRA's wait. */
static void refuse(struct cm_id *c)
{
	struct cm_msg m = { .attr = CM_ATTR_REJ, .reason = CM_REJ_CONSUMER };

	if (is_ud(c)) {
		sidr_reply(c, &m, CM_SIDR_REJECT);
		return;
	}
	send_msg(c, &m, false);
	c->rejected = true;
}

void cm_conn_teardown(struct cm_id *c)
{
	/* Unanswered, or accepted and not yet confirmed (RTU): refused, as
	 * the kernel's CM does. */
	if (c->state == CM_REQ_RCVD ||
	    (!is_ud(c) &&
	     (c->state == CM_REP_SENT || c->state == CM_REP_RCVD)))
		refuse(c);
	else if (!is_ud(c) && c->state == CM_ESTABLISHED) {
		/* Tell the peer once; nobody is left to hear its answer. */
		struct cm_msg m = { .attr = CM_ATTR_DREQ, .qpn = c->remote_qpn };

		send_msg(c, &m, false);
	}
	timer_stop(c);
	if (c->remote_comm_id && c->dev >= 0) {
		struct cm_tombstone *t = &tombstones[next_tombstone++ %
						     CM_TOMBSTONES];

		t->used = true;
		t->dev = c->dev;
		t->host = c->remote_host;
		t->remote_comm_id = c->remote_comm_id;
		t->has_reply = c->rejected;
		if (c->rejected)
			memcpy(t->reply, c->last_mad, CM_MAD_SIZE);
	}
	c->state = CM_IDLE;
}

void cm_conn_drop_requests(struct cm_id *listener)
{
	struct cm_id **p = &cm_ids;

	while (*p) {
		struct cm_id *o = *p;

		if (o->listener != listener || o->state != CM_REQ_RCVD ||
		    !cm_event_queued(o)) {
			p = &o->next;
			continue;
		}
		/* Nobody took it: refused, as by a closed listener. */
		cm_conn_teardown(o);
		cm_events_drop(o);
		*p = o->next;
		free(o);
	}
}

/* ---- Receiving ---------------------------------------------------------------------- */

static struct cm_id *find_local(int dev, uint32_t local_id)
{
	for (struct cm_id *c = cm_ids; c; c = c->next)
		if (c->dev == dev && c->local_comm_id == local_id &&
		    c->state != CM_IDLE && c->state != CM_LISTEN)
			return c;
	return NULL;
}

static struct cm_id *find_remote(int dev, uint32_t host, uint32_t remote_id)
{
	for (struct cm_id *c = cm_ids; c; c = c->next)
		if (c->passive && c->dev == dev && c->remote_host == host &&
		    c->remote_comm_id == remote_id)
			return c;
	return NULL;
}

/* The listener of a service: its port space and port, on this device or
 * on every device. */
static struct cm_id *listener_for(int dev, uint64_t service_id)
{
	uint16_t ps = cm_service_ps(service_id);
	uint16_t port = cm_service_port(service_id);

	for (struct cm_id *c = cm_ids; c; c = c->next) {
		const struct sockaddr_in *s = &c->id.route.addr.src_sin;

		if (c->state == CM_LISTEN && c->id.ps == ps &&
		    ntohs(s->sin_port) == port &&
		    (c->dev == dev || (c->dev < 0 &&
				       s->sin_addr.s_addr == htonl(INADDR_ANY))))
			return c;
	}
	return NULL;
}

/* rdma_cm acknowledges a connection request (MRA) as it hands it to the
 * application: the requester then waits the MRA's service timeout rather
 * than its response timeout, and the application may take its time
 * (registering memory, say) to accept. A resent REQ gets it again. */
static void acknowledge_req(struct cm_id *c)
{
	struct cm_msg mra = {
		.attr = CM_ATTR_MRA,
		.mraed = CM_MRAED_REQ,
		.service_timeout = CM_MRA_SERVICE_TIMEOUT,
	};

	send_msg(c, &mra, false);
}

static void got_req(int dev, struct nic *nic, uint32_t host,
		    const struct cm_msg *m)
{
	bool ud = m->attr == CM_ATTR_SIDR_REQ;
	uint16_t port = cm_service_port(m->service_id);
	struct cm_id *c = find_remote(dev, host, m->local_comm_id), *lst;
	struct rdma_cm_id *id;
	uint32_t me;

	if (c) {
		/* A resent REQ: answer again if we already did (an MRA while
		 * the application has not answered). */
		if (c->state == CM_REP_SENT || c->rejected ||
		    (c->state == CM_REQ_RCVD && !ud))
			cm_sv->send_mad(nic, host, c->last_mad, CM_MAD_SIZE);
		return;
	}
	struct cm_tombstone *t = tombstone_of(dev, host, m->local_comm_id);

	if (t) {
		if (t->has_reply)
			cm_sv->send_mad(nic, host, t->reply, CM_MAD_SIZE);
		return;
	}
	device_of(dev, NULL, &me);
	lst = listener_for(dev, m->service_id);
	if (!lst || m->dst_ip.s_addr != cm_device_ip(dev).s_addr) {
		if (ud)
			send_reply(nic, me, host, CM_ATTR_SIDR_REP, 0,
				   m->local_comm_id, CM_SIDR_UNSUPPORTED);
		else
			send_reply(nic, me, host, CM_ATTR_REJ, 0,
				   m->local_comm_id, CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	/* A new id for the request, on the listener's channel. */
	if (cm_id_new_locked(lst, &id))
		return;
	c = SV_CONTAINER_OF(id, struct cm_id, id);
	c->dev = dev;
	id->verbs = cm_context(dev);
	id->port_num = 1;
	id->route.addr.src_sin.sin_addr = m->dst_ip;
	id->route.addr.src_sin.sin_port = htons(port);
	id->route.addr.dst_sin.sin_addr = m->src_ip;
	id->route.addr.dst_sin.sin_port = htons(m->src_port);
	c->state = CM_REQ_RCVD;
	c->passive = true;
	c->local_comm_id = nic_cm_comm_id(nic);
	c->remote_comm_id = m->local_comm_id;
	c->remote_host = host;
	c->remote_qpn = m->qpn;
	c->retry_count = m->retry_count;
	c->rnr_retry_count = m->rnr_retry_count;
	c->peer_responder_resources = m->responder_resources;
	c->peer_initiator_depth = m->initiator_depth;
	/* Until rdma_accept says otherwise: what the requester asked. */
	c->responder_resources = m->initiator_depth;
	c->initiator_depth = m->responder_resources;
	c->listener = lst;
	if (ud)
		cm_event_push_ud(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0, lst,
				 m->data, m->data_len, NULL, 0, 0);
	else {
		cm_event_push(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0, lst, m->data,
			      m->data_len, m->initiator_depth,
			      m->responder_resources);
		acknowledge_req(c);
	}
}

/* The answer to our SIDR_REQ: where to send our datagrams. */
static void got_sidr_rep(struct cm_id *c, const struct cm_msg *m)
{
	struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1 };

	if (c->state != CM_REQ_SENT)
		return;
	timer_stop(c);
	if (m->reason != CM_SIDR_SUCCESS) {
		c->state = CM_IDLE;
		cm_event_push_ud(c, RDMA_CM_EVENT_UNREACHABLE, m->reason, NULL,
				 m->data, m->data_len, NULL, 0, 0);
		return;
	}
	c->state = CM_ESTABLISHED;
	c->remote_qpn = m->qpn;
	ah.grh.dgid = c->id.route.addr.addr.ibaddr.dgid;
	ah.grh.sgid_index = 1;
	ah.grh.hop_limit = 64;
	cm_event_push_ud(c, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, m->data,
			 m->data_len, &ah, m->qpn, m->qkey);
}

/* The peer has our request and will answer: wait for it as long as the
 * MRA says (plus our own response timeout) before asking again. */
static void got_mra(struct cm_id *c, const struct cm_msg *m)
{
	if (c->state != CM_REQ_SENT || m->mraed != CM_MRAED_REQ)
		return;
	timer_start(c, cm_iba_time_ns(m->service_timeout) + CM_TIMEOUT_NS);
}

static void got_rep(struct cm_id *c, const struct cm_msg *m)
{
	struct cm_msg rtu = { .attr = CM_ATTR_RTU };

	if (c->state == CM_ESTABLISHED) {
		send_msg(c, &rtu, false); /* our RTU was lost */
		return;
	}
	if (c->state == CM_REP_RCVD)
		return; /* the program has not called rdma_establish yet */
	if (c->state != CM_REQ_SENT)
		return;
	timer_stop(c);
	c->remote_comm_id = m->local_comm_id;
	c->remote_qpn = m->qpn;
	c->rnr_retry_count = m->rnr_retry_count;
	c->peer_responder_resources = m->responder_resources;
	c->peer_initiator_depth = m->initiator_depth;
	if (!c->id.qp) {
		/* The program moves its own QP, then calls rdma_establish. */
		c->state = CM_REP_RCVD;
		cm_event_push(c, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, NULL,
			      m->data, m->data_len, m->initiator_depth,
			      m->responder_resources);
		return;
	}
	if (cm_sv->qp_connect(c->id.qp, c->remote_host, m->qpn, c->retry_count,
			      c->rnr_retry_count, c->initiator_depth,
			      c->responder_resources)) {
		struct cm_msg rej = { .attr = CM_ATTR_REJ,
				      .reason = CM_REJ_CONSUMER };

		send_msg(c, &rej, false);
		c->state = CM_IDLE;
		cm_event_push(c, RDMA_CM_EVENT_CONNECT_ERROR, -EINVAL, NULL,
			      NULL, 0, 0, 0);
		return;
	}
	c->state = CM_ESTABLISHED;
	send_msg(c, &rtu, false);
	cm_event_push(c, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, m->data,
		      m->data_len, m->initiator_depth, m->responder_resources);
}

static void got_rtu(struct cm_id *c)
{
	if (c->state != CM_REP_SENT)
		return;
	timer_stop(c);
	c->state = CM_ESTABLISHED;
	cm_event_push(c, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, NULL, 0,
		      c->peer_initiator_depth, c->peer_responder_resources);
}

static void got_rej(struct cm_id *c, const struct cm_msg *m)
{
	if (c->state == CM_ESTABLISHED) {
		/* The acceptor destroyed its id before our RTU reached it:
		 * as the kernel's CM, the QP goes to error and the id hears
		 * REJECTED; it will not hear DISCONNECTED as well. */
		disconnected_quietly(c);
		c->disconnect_reported = true;
		cm_event_push(c, RDMA_CM_EVENT_REJECTED, m->reason, NULL,
			      m->data, m->data_len, 0, 0);
		return;
	}
	if (c->state != CM_REQ_SENT && c->state != CM_REP_SENT)
		return;
	timer_stop(c);
	c->state = CM_IDLE;
	/* librdmacm moves the id's QP to the error state as it hands out
	 * REJECTED (rdma_get_cm_event): receives posted before rdma_connect
	 * come back flushed. */
	if (c->id.qp)
		cm_sv->qp_error(c->id.qp);
	cm_event_push(c, RDMA_CM_EVENT_REJECTED, m->reason, NULL, m->data,
		      m->data_len, 0, 0);
}

static void got_dreq(int dev, struct nic *nic, uint32_t host,
		     const struct cm_msg *m)
{
	struct cm_id *c = find_local(dev, m->remote_comm_id);
	uint32_t me;

	device_of(dev, NULL, &me);
	/* Answer even a connection we no longer know: the peer waits. */
	send_reply(nic, me, host, CM_ATTR_DREP, m->remote_comm_id,
		   m->local_comm_id, 0);
	if (!c || c->remote_host != host)
		return;
	if (c->state == CM_ESTABLISHED || c->state == CM_REP_SENT ||
	    c->state == CM_DREQ_SENT)
		disconnected(c);
}

static void got_drep(struct cm_id *c)
{
	if (c->state == CM_DREQ_SENT)
		disconnected(c);
}

/* The process behind `host` ended without closing its connections: as its
 * kernel would have disconnected them (DREQ), they end. */
static void host_gone(int dev, uint32_t host)
{
	for (struct cm_id *c = cm_ids; c; c = c->next)
		if (c->dev == dev && c->remote_host == host && !is_ud(c) &&
		    (c->state == CM_ESTABLISHED || c->state == CM_REP_SENT ||
		     c->state == CM_DREQ_SENT))
			disconnected(c);
}

void cm_on_mad(void *ctx, struct nic *nic, uint32_t src_host,
	       const void *mad, size_t len)
{
	int dev = (int)(intptr_t)ctx;
	struct cm_msg m;
	struct cm_id *c;

	if (!len) {
		host_gone(dev, src_host);
		return;
	}
	if (cm_decode(mad, len, &m))
		return; /* not a CM MAD we understand: dropped */
	if (m.attr == CM_ATTR_REQ || m.attr == CM_ATTR_SIDR_REQ) {
		got_req(dev, nic, src_host, &m);
		return;
	}
	if (m.attr == CM_ATTR_DREQ) {
		got_dreq(dev, nic, src_host, &m);
		return;
	}
	c = find_local(dev, m.remote_comm_id);
	if (!c || c->remote_host != src_host)
		return;
	switch (m.attr) {
	case CM_ATTR_MRA:
		got_mra(c, &m);
		break;
	case CM_ATTR_REP:
		got_rep(c, &m);
		break;
	case CM_ATTR_RTU:
		got_rtu(c);
		break;
	case CM_ATTR_REJ:
		got_rej(c, &m);
		break;
	case CM_ATTR_DREP:
		got_drep(c);
		break;
	case CM_ATTR_SIDR_REP:
		got_sidr_rep(c, &m);
		break;
	default:
		break;
	}
}
