/* SPDX-License-Identifier: BSD-2-Clause
 * Connection management for FI_EP_MSG (fi_cm(3)) as InfiniBand CM does it,
 * with its MADs on the simulated wire (timed, lossy, visible in traces).
 *
 * Active side (fi_connect):
 *   IDLE --REQ--> REQ_SENT --REP/send RTU--> ESTABLISHED   (FI_CONNECTED)
 *                     |--REJ-->        IDLE              (FI_ECONNREFUSED)
 *                     |--retries out--> IDLE              (FI_ETIMEDOUT)
 * Passive side (listener):
 *   REQ --> REQ_RCVD (FI_CONNREQ on the listener's EQ)
 *     fi_accept: --REP--> REP_SENT --RTU--> ESTABLISHED    (FI_CONNECTED)
 *     fi_reject, or the endpoint closed before the RTU: --REJ--> REJECTED
 *     (kept a while to answer resent REQs; an established requester that
 *     gets it: FI_SHUTDOWN)
 * Either side (fi_shutdown, or the QP failing):
 *   ESTABLISHED --DREQ--> DREQ_SENT --DREP--> DISCONNECTED (FI_SHUTDOWN)
 *   ESTABLISHED <--DREQ-- (send DREP)          DISCONNECTED (FI_SHUTDOWN)
 * REQ, REP and DREQ are resent every cm timeout until answered or the
 * retries run out; duplicates are answered again, never acted on twice.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <fabsim/fi_stubs.h>

#include "shared/shared_world.h"
#include "sim.h"
#include "sim_cm_mad.h"

enum conn_state {
	CONN_IDLE,
	CONN_REQ_SENT,
	CONN_REQ_RCVD,
	CONN_REP_SENT,
	CONN_ESTABLISHED,
	CONN_DREQ_SENT,
	CONN_DISCONNECTED,
	CONN_REJECTED,     /* remembered a while, to answer resent REQs */
};

/* The simulated wire's CM timing: resend every 100 us, give up after 15. */
#define CM_TIMEOUT_NS (100 * NM_NS_PER_US)
#define CM_RETRIES 15
/* A refused connection is remembered, to answer its resent REQs with the
 * same REJ, for as long as the requester may resend: its whole budget,
 * after the MRA's wait it may have been told to take first. */
#define CM_REJECTED_KEEP_NS                          \
	(cm_iba_time_ns(CM_MRA_SERVICE_TIMEOUT) + \
	 CM_TIMEOUT_NS * (CM_RETRIES + 2))

struct sim_conn {
	struct fid          connreq;   /* FI_CLASS_CONNREQ handle */
	struct sim_world   *world;
	enum conn_state     state;
	struct nic         *nic;       /* our host's NIC (referenced) */
	uint32_t            local_id, remote_id;
	uint32_t            remote_host;
	uint32_t            remote_qpn;
	struct sim_ep      *ep;
	struct sim_pep     *pep;       /* passive side, until accepted */
	uint8_t             last_mad[CM_MAD_SIZE]; /* resent on timeout */
	uint32_t            retries;
	nm_event_id         timer;
	struct sockaddr_in  peer_addr;
	struct sockaddr_in  local_addr; /* accepting side: the listener's */
	bool                shutdown_reported;
	struct sim_conn    *next;
};

static struct fi_ops connreq_ops = {
	.size = sizeof(struct fi_ops),
	.close = fabsim_no_close,
	.bind = fabsim_no_bind,
	.control = fabsim_no_control,
	.ops_open = fabsim_no_ops_open,
	.tostr = fabsim_no_tostr,
	.ops_set = fabsim_no_ops_set,
};

const char *sim_cm_reason_str(int reason)
{
	switch (reason) {
	case CM_REJ_TIMEOUT: return "connection manager timeout";
	case CM_REJ_INVALID_SERVICE_ID:
		return "no listener on that port (REJ: invalid service ID)";
	case CM_REJ_STALE_CONN: return "stale connection";
	case CM_REJ_CONSUMER: return "rejected by the peer (REJ: consumer)";
	default: return "connection error";
	}
}

/* ---- Addresses ------------------------------------------------------------------- */

static bool simulated_ip(struct in_addr ip)
{
	return (ntohl(ip.s_addr) >> 24) == 10;
}

/* The listener on `port` of `host` (NIC_HOST_ANY: of any host, for
 * addresses outside the simulated network such as loopback). */
static struct sim_pep *listener_on(struct sim_world *world, uint32_t host,
				   uint16_t port)
{
	for (struct sim_pep *p = world->listeners; p; p = p->next)
		if (p->port == port &&
		    (host == NIC_HOST_ANY || nic_host(p->nic) == host))
			return p;
	return NULL;
}

uint32_t sim_host_of_addr(struct sim_world *world,
			  const struct sockaddr_in *addr)
{
	struct sim_pep *pep;

	if (simulated_ip(addr->sin_addr))
		return nic_world_host_of_ipv4(world->nic, addr->sin_addr);
	pep = listener_on(world, NIC_HOST_ANY, ntohs(addr->sin_port));
	return pep && pep->nic ? nic_host(pep->nic) : NIC_HOST_ANY;
}

/* ---- Connections ------------------------------------------------------------------- */

static struct sim_conn *conn_new(struct sim_world *world, struct nic *nic)
{
	struct sim_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->connreq.fclass = FI_CLASS_CONNREQ;
	c->connreq.ops = &connreq_ops;
	c->world = world;
	c->nic = nic;
	c->local_id = nic_cm_comm_id(nic);
	c->timer = NM_EVENT_NONE;
	c->next = world->conns;
	world->conns = c;
	return c;
}

static struct sim_conn *conn_find(struct sim_world *world, struct nic *nic,
				  uint32_t local_id)
{
	for (struct sim_conn *c = world->conns; c; c = c->next)
		if (c->nic == nic && c->local_id == local_id)
			return c;
	return NULL;
}

static void conn_timer_stop(struct sim_conn *c)
{
	if (c->timer != NM_EVENT_NONE) {
		nic_world_cancel(c->world->nic, c->timer);
		c->timer = NM_EVENT_NONE;
	}
}

static void conn_free(struct sim_conn *c)
{
	struct sim_conn **p = &c->world->conns;

	conn_timer_stop(c);
	while (*p != c)
		p = &(*p)->next;
	*p = c->next;
	if (c->ep)
		c->ep->conn = NULL;
	free(c);
}

/* IB CM private data has a fixed size on the wire. As libfabric's verbs
 * provider does, its first byte says how many bytes the application gave,
 * so that events carry exactly those. */
static int encode_framed(struct cm_msg *m, uint8_t *mad)
{
	size_t len = m->data_len;

	if (len + 1 > cm_max_data(m->attr))
		return -1;
	memmove(m->data + 1, m->data, len);
	m->data[0] = (uint8_t)len;
	m->data_len = len + 1;
	return cm_encode(m, mad);
}

static void unframe(struct cm_msg *m)
{
	size_t len = m->data_len ? m->data[0] : 0;

	if (len + 1 > m->data_len)
		len = m->data_len ? m->data_len - 1 : 0;
	if (m->data_len)
		memmove(m->data, m->data + 1, len);
	m->data_len = len;
}

/* ---- Sending ------------------------------------------------------------------------ */

static void on_timeout(nm_engine *engine, void *ctx, uint64_t arg);

static void send_msg(struct sim_conn *c, struct cm_msg *m, bool reliable)
{
	m->local_comm_id = c->local_id;
	m->remote_comm_id = c->remote_id;
	m->tid = ((uint64_t)nic_host(c->nic) << 32) | c->local_id;
	if (encode_framed(m, c->last_mad))
		return;
	nic_send_mad(c->nic, c->remote_host, c->last_mad, CM_MAD_SIZE);
	if (reliable) {
		conn_timer_stop(c);
		c->retries = 0;
		nic_world_schedule(c->world->nic, nic_host(c->nic),
				   CM_TIMEOUT_NS, on_timeout, c, &c->timer);
	}
}

/* A reply that need not be remembered (REJ, DREP, duplicates). */
static void send_reply(struct nic *nic, uint32_t host, uint16_t attr,
		       uint32_t local_id, uint32_t remote_id, uint16_t reason,
		       const void *data, size_t len)
{
	struct cm_msg m = {
		.attr = attr,
		.local_comm_id = local_id,
		.remote_comm_id = remote_id,
		.reason = reason,
		.tid = ((uint64_t)nic_host(nic) << 32) | local_id,
		.data_len = len,
	};
	uint8_t mad[CM_MAD_SIZE];

	if (len)
		memcpy(m.data, data, len);
	if (!encode_framed(&m, mad))
		nic_send_mad(nic, host, mad, CM_MAD_SIZE);
}

static void forget_rejected(nm_engine *engine, void *ctx, uint64_t arg)
{
	struct sim_conn *c = ctx;

	(void)engine;
	(void)arg;
	c->timer = NM_EVENT_NONE;
	conn_free(c);
}

/* Refuses a request (REJ, consumer): by fi_reject, or as the kernel's CM
 * does for one the application lets go unanswered (its endpoint or its
 * listener closed), so that the requester hears at once rather than after
 * the MRA's wait. */
static void refuse(struct sim_conn *c, const void *data, size_t len)
{
	struct cm_msg rej = {
		.attr = CM_ATTR_REJ,
		.reason = CM_REJ_CONSUMER,
		.data_len = len,
	};

	if (len)
		memcpy(rej.data, data, len);
	send_msg(c, &rej, false);
	c->state = CONN_REJECTED;
	c->pep = NULL;
	if (c->ep)
		c->ep->conn = NULL;
	c->ep = NULL;
	conn_timer_stop(c);
	nic_world_schedule(c->world->nic, nic_host(c->nic),
			   CM_REJECTED_KEEP_NS, forget_rejected, c, &c->timer);
}

/* ---- Events ------------------------------------------------------------------------- */

static void push_cm_event(struct sim_eq *eq, uint32_t event, fid_t fid,
			  struct fi_info *info, const void *data, size_t len)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + SIM_CM_DATA_SIZE];
	struct fi_eq_cm_entry *e = (struct fi_eq_cm_entry *)buf;

	if (len > SIM_CM_DATA_SIZE)
		len = SIM_CM_DATA_SIZE;
	e->fid = fid;
	e->info = info;
	if (len)
		memcpy(e->data, data, len);
	if (sim_eq_push(eq, event, buf, sizeof(*e) + len))
		fi_freeinfo(info);
}

/* fi_eq(3): "Shutdown notification uses struct fi_eq_cm_entry". */
static void report_shutdown(struct sim_conn *c)
{
	if (c->shutdown_reported || !c->ep || !c->ep->eq)
		return;
	c->shutdown_reported = true;
	push_cm_event(c->ep->eq, FI_SHUTDOWN, &c->ep->ep_fid.fid, NULL, NULL,
		      0);
}

static void report_error(struct sim_conn *c, int err, int reason,
			 const void *data, size_t len)
{
	if (c->ep && c->ep->eq)
		sim_eq_push_error(c->ep->eq, &c->ep->ep_fid.fid,
				  c->ep->ep_fid.fid.context, err, reason, 0,
				  data, len);
}

static void on_timeout(nm_engine *engine, void *ctx, uint64_t arg)
{
	struct sim_conn *c = ctx;

	c->timer = NM_EVENT_NONE;
	if (++c->retries > CM_RETRIES) {
		switch (c->state) {
		case CONN_REQ_SENT:
		case CONN_REP_SENT:
			report_error(c, FI_ETIMEDOUT, CM_REJ_TIMEOUT, NULL, 0);
			c->state = CONN_IDLE;
			conn_free(c);
			break;
		case CONN_DREQ_SENT:
			/* The peer is gone: disconnected all the same. */
			c->state = CONN_DISCONNECTED;
			report_shutdown(c);
			break;
		default:
			break;
		}
		return;
	}
	nic_send_mad(c->nic, c->remote_host, c->last_mad, CM_MAD_SIZE);
	nic_world_schedule(c->world->nic, nic_host(c->nic), CM_TIMEOUT_NS,
			   on_timeout, c, &c->timer);
}

/* ---- Receiving ------------------------------------------------------------------------ */

static struct sim_conn *find_by_remote(struct sim_world *world,
				       struct nic *nic, uint32_t host,
				       uint32_t remote_id)
{
	for (struct sim_conn *c = world->conns; c; c = c->next)
		if (c->nic == nic && c->remote_host == host &&
		    c->remote_id == remote_id)
			return c;
	return NULL;
}

/* As rdma_cm does, the request is acknowledged (MRA) as it goes to the
 * application: the requester then waits the MRA's service timeout rather
 * than its response timeout, and fi_accept may come after a while
 * (registering memory, say). A resent REQ gets it again. */
static void acknowledge_req(struct sim_conn *c)
{
	struct cm_msg mra = {
		.attr = CM_ATTR_MRA,
		.mraed = CM_MRAED_REQ,
		.service_timeout = CM_MRA_SERVICE_TIMEOUT,
	};

	send_msg(c, &mra, false);
}

static void got_req(struct sim_world *world, struct nic *nic, uint32_t host,
		    const struct cm_msg *m)
{
	uint16_t port = cm_service_port(m->service_id);
	struct sim_pep *pep = listener_on(world, nic_host(nic), port);
	struct sim_conn *c = find_by_remote(world, nic, host, m->local_comm_id);
	struct fi_info *info;

	if (c) {
		/* A resent REQ: answer again if we already did (an MRA while
		 * the application has not answered). */
		if (c->state == CONN_REQ_RCVD || c->state == CONN_REP_SENT ||
		    c->state == CONN_REJECTED)
			nic_send_mad(nic, host, c->last_mad, CM_MAD_SIZE);
		return;
	}
	if (!pep || !pep->listening || pep->nic != nic || !pep->eq) {
		send_reply(nic, host, CM_ATTR_REJ, 0, m->local_comm_id,
			   CM_REJ_INVALID_SERVICE_ID, NULL, 0);
		return;
	}
	c = conn_new(world, nic);
	info = fi_dupinfo(pep->info);
	if (!c || !info) {
		if (c)
			conn_free(c);
		fi_freeinfo(info);
		return; /* the connector retries */
	}
	c->state = CONN_REQ_RCVD;
	c->remote_id = m->local_comm_id;
	c->remote_host = host;
	c->remote_qpn = m->qpn;
	c->pep = pep;
	sim_addr_of_peer(world, (struct nic_peer){ host, m->src_port },
			 &c->peer_addr);
	/* The accepted endpoint is named as the listener, as an accepted
	 * TCP socket or rdma_cm id is. */
	c->local_addr.sin_family = AF_INET;
	c->local_addr.sin_addr = nic_ipv4(nic);
	c->local_addr.sin_port = htons(pep->port);
	free(info->dest_addr);
	info->dest_addr = malloc(sizeof(c->peer_addr));
	if (info->dest_addr) {
		memcpy(info->dest_addr, &c->peer_addr, sizeof(c->peer_addr));
		info->dest_addrlen = sizeof(c->peer_addr);
	}
	info->handle = &c->connreq;
	push_cm_event(pep->eq, FI_CONNREQ, &pep->pep_fid.fid, info, m->data,
		      m->data_len);
	acknowledge_req(c);
}

static void got_rep(struct sim_conn *c, const struct cm_msg *m)
{
	struct cm_msg rtu = { .attr = CM_ATTR_RTU };

	if (c->state == CONN_ESTABLISHED) {
		/* Our RTU was lost: say it again. */
		send_reply(c->nic, c->remote_host, CM_ATTR_RTU, c->local_id,
			   c->remote_id, 0, NULL, 0);
		return;
	}
	if (c->state != CONN_REQ_SENT)
		return;
	conn_timer_stop(c);
	c->remote_id = m->local_comm_id;
	c->remote_qpn = m->qpn;
	nic_qp_connect(c->ep->qp, (struct nic_peer){ c->remote_host, m->qpn });
	c->state = CONN_ESTABLISHED;
	send_msg(c, &rtu, false);
	push_cm_event(c->ep->eq, FI_CONNECTED, &c->ep->ep_fid.fid, NULL,
		      m->data, m->data_len);
}

/* The peer has our request and will answer: wait as long as its MRA says
 * (plus our own response timeout) before asking again. */
static void got_mra(struct sim_conn *c, const struct cm_msg *m)
{
	if (c->state != CONN_REQ_SENT || m->mraed != CM_MRAED_REQ)
		return;
	conn_timer_stop(c);
	nic_world_schedule(c->world->nic, nic_host(c->nic),
			   cm_iba_time_ns(m->service_timeout) + CM_TIMEOUT_NS,
			   on_timeout, c, &c->timer);
}

static void got_rtu(struct sim_conn *c)
{
	if (c->state != CONN_REP_SENT)
		return;
	conn_timer_stop(c);
	c->state = CONN_ESTABLISHED;
	push_cm_event(c->ep->eq, FI_CONNECTED, &c->ep->ep_fid.fid, NULL, NULL,
		      0);
}

static void got_rej(struct sim_conn *c, const struct cm_msg *m)
{
	if (c->state == CONN_ESTABLISHED) {
		/* The acceptor let its endpoint go before our RTU reached
		 * it: the connection we took for made is gone. */
		if (c->ep)
			nic_qp_set_error(c->ep->qp);
		c->state = CONN_DISCONNECTED;
		report_shutdown(c);
		return;
	}
	if (c->state != CONN_REQ_SENT && c->state != CONN_REP_SENT)
		return;
	report_error(c, FI_ECONNREFUSED, m->reason, m->data, m->data_len);
	conn_free(c);
}

static void got_dreq(struct sim_world *world, struct nic *nic, uint32_t host,
		     const struct cm_msg *m)
{
	struct sim_conn *c = conn_find(world, nic, m->remote_comm_id);

	/* Answer even for a connection we no longer know: the peer waits. */
	send_reply(nic, host, CM_ATTR_DREP, m->remote_comm_id,
		   m->local_comm_id, 0, NULL, 0);
	/* A refused one (closed before the RTU) is already over. */
	if (!c || c->remote_host != host || c->state == CONN_REJECTED)
		return;
	if (c->ep)
		nic_qp_set_error(c->ep->qp);
	conn_timer_stop(c);
	c->state = CONN_DISCONNECTED;
	report_shutdown(c);
}

static void got_drep(struct sim_conn *c)
{
	if (c->state != CONN_DREQ_SENT)
		return;
	conn_timer_stop(c);
	c->state = CONN_DISCONNECTED;
	report_shutdown(c);
}

/* The process behind `host` ended without closing its connections: its
 * kernel would have disconnected them (DREQ), and so they end. */
static void host_gone(struct sim_world *world, struct nic *nic, uint32_t host)
{
	for (struct sim_conn *c = world->conns; c; c = c->next) {
		if (c->nic != nic || c->remote_host != host ||
		    (c->state != CONN_ESTABLISHED &&
		     c->state != CONN_DREQ_SENT))
			continue;
		if (c->ep)
			nic_qp_set_error(c->ep->qp);
		conn_timer_stop(c);
		c->state = CONN_DISCONNECTED;
		report_shutdown(c);
	}
}

static void on_mad(void *ctx, struct nic *nic, uint32_t host, const void *mad,
		   size_t len)
{
	struct sim_world *world = ctx;
	struct sim_conn *c;
	struct cm_msg m;

	if (!len) {
		host_gone(world, nic, host);
		return;
	}
	if (cm_decode(mad, len, &m))
		return;
	unframe(&m);
	if (m.attr == CM_ATTR_REQ) {
		got_req(world, nic, host, &m);
		return;
	}
	if (m.attr == CM_ATTR_DREQ) {
		got_dreq(world, nic, host, &m);
		return;
	}
	c = conn_find(world, nic, m.remote_comm_id);
	if (!c || c->remote_host != host)
		return;
	switch (m.attr) {
	case CM_ATTR_MRA: got_mra(c, &m); break;
	case CM_ATTR_REP: got_rep(c, &m); break;
	case CM_ATTR_RTU: got_rtu(c); break;
	case CM_ATTR_REJ: got_rej(c, &m); break;
	case CM_ATTR_DREP: got_drep(c); break;
	default: break;
	}
}

static void watch(struct sim_world *world, struct nic *nic)
{
	nic_set_mad_handler(nic, on_mad, world);
}

void sim_cm_serve(struct sim_world *world, struct nic *nic)
{
	watch(world, nic);
}

/* ---- The calls -------------------------------------------------------------------------- */

int sim_cm_listen(struct sim_pep *pep)
{
	struct sim_world *world = pep->fabric->world;
	const struct sockaddr_in *src = pep->info->src_addr;
	uint32_t host = NIC_HOST_ANY;
	nm_error err;
	int ret;

	if (world->shared)
		host = shared_world_node(world->shared);
	else if (src && simulated_ip(src->sin_addr))
		host = nic_world_host_of_ipv4(world->nic, src->sin_addr);
	ret = nic_open(world->nic, host, &pep->nic, &err);
	if (ret) {
		FI_WARN(&sim_prov, FI_LOG_EP_CTRL, "fi_listen: %s\n", err.msg);
		return sim_errno(ret);
	}
	host = nic_host(pep->nic);
	if (!pep->port) {
		/* An ephemeral port, as bind(0) would pick. */
		for (uint32_t p = 0xc000; p <= 0xffff && !pep->port; p++)
			if (!listener_on(world, host, (uint16_t)p))
				pep->port = (uint16_t)p;
	} else if (listener_on(world, host, pep->port)) {
		FI_WARN(&sim_prov, FI_LOG_EP_CTRL,
			"fi_listen: port %u of host %u already has a "
			"listener\n", pep->port, host);
		nic_close(pep->nic);
		pep->nic = NULL;
		return -FI_EADDRINUSE;
	}
	watch(world, pep->nic);
	pep->next = world->listeners;
	world->listeners = pep;
	pep->listening = true;
	return 0;
}

void sim_cm_unlisten(struct sim_pep *pep)
{
	struct sim_world *world = pep->fabric->world;
	struct sim_pep **p = &world->listeners;

	if (!pep->listening)
		return;
	while (*p != pep)
		p = &(*p)->next;
	*p = pep->next;
	/* Requests no endpoint has taken are refused with their listener;
	 * one an endpoint has may still be accepted (its handle is its own,
	 * as a connection request's rdma_cm id is). */
	for (struct sim_conn *c = world->conns, *next; c; c = next) {
		next = c->next;
		if (c->pep == pep && c->state == CONN_REQ_RCVD && !c->ep)
			refuse(c, NULL, 0);
		else if (c->pep == pep)
			c->pep = NULL;
	}
	pep->listening = false;
	nic_close(pep->nic);
	pep->nic = NULL;
}

int sim_cm_connect(struct sim_ep *ep, const struct sockaddr_in *dest,
		   const void *param, size_t len)
{
	struct sim_world *world = ep->domain->world;
	struct cm_msg req = { .attr = CM_ATTR_REQ, .retry_count = 7,
			      .responder_resources = 1, .initiator_depth = 1,
			      .rnr_retry_count = 7 };
	uint32_t host;
	struct sim_conn *c;

	if (ep->conn)
		return ep->conn->state == CONN_ESTABLISHED ? -FI_EISCONN
							   : -FI_EALREADY;
	if (ep->dialled) {
		/* Even after a refusal: a new attempt needs a new endpoint. */
		FI_WARN(&sim_prov, FI_LOG_EP_CTRL, "fi_connect: \"may only be "
			"called on an endpoint once in its lifetime\" "
			"(fi_cm(3))\n");
		return -FI_EINVAL;
	}
	host = sim_host_of_addr(world, dest);
	c = conn_new(world, ep->domain->nic);
	if (!c)
		return -FI_ENOMEM;
	ep->dialled = true;
	c->ep = ep;
	ep->conn = c;
	watch(world, ep->domain->nic);
	if (host == NIC_HOST_ANY) {
		/* No such host, nobody listening: refused, as a TCP RST. */
		report_error(c, FI_ECONNREFUSED, CM_REJ_INVALID_SERVICE_ID,
			     NULL, 0);
		conn_free(c);
		return 0;
	}
	c->state = CONN_REQ_SENT;
	c->remote_host = host;
	/* The peer is what was dialled, as getpeername(2) says after a
	 * TCP connect. */
	c->peer_addr = *dest;
	req.service_id = cm_service_id(ntohs(dest->sin_port));
	req.qpn = nic_qp_num(ep->qp);
	req.src_ip = nic_ipv4(ep->domain->nic);
	req.dst_ip = nic_ipv4_of_host(world->nic, host);
	req.src_port = (uint16_t)nic_qp_num(ep->qp);
	req.data_len = len;
	if (len)
		memcpy(req.data, param, len);
	send_msg(c, &req, true);
	return 0;
}

int sim_cm_attach(struct sim_ep *ep, fid_t handle)
{
	struct sim_conn *c = container_of(handle, struct sim_conn, connreq);

	if (handle->fclass != FI_CLASS_CONNREQ || c->ep)
		return -FI_EINVAL;
	if (c->state != CONN_REQ_RCVD) {
		FI_WARN(&sim_prov, FI_LOG_EP_CTRL, "fi_endpoint: the connection "
			"request was already refused (fi_reject, or its "
			"listener closed)\n");
		return -FI_EINVAL;
	}
	c->ep = ep;
	ep->conn = c;
	return 0;
}

uint32_t sim_cm_handle_host(fid_t handle)
{
	if (handle->fclass == FI_CLASS_CONNREQ)
		return nic_host(container_of(handle, struct sim_conn, connreq)->nic);
	if (handle->fclass == FI_CLASS_PEP) {
		struct sim_pep *pep = container_of(handle, struct sim_pep,
						   pep_fid.fid);

		return pep->nic ? nic_host(pep->nic) : NIC_HOST_ANY;
	}
	return NIC_HOST_ANY;
}

int sim_cm_accept(struct sim_ep *ep, const void *param, size_t len)
{
	struct sim_conn *c = ep->conn;
	struct cm_msg rep = { .attr = CM_ATTR_REP, .rnr_retry_count = 7,
			      .responder_resources = 1, .initiator_depth = 1 };

	if (!c || c->state != CONN_REQ_RCVD)
		return -FI_EOPBADSTATE;
	if (c->nic != ep->domain->nic) {
		FI_WARN(&sim_prov, FI_LOG_EP_CTRL, "fi_accept: the endpoint's "
			"domain is host %u, the request came to host %u (its "
			"listener's): in one process every domain is a host of "
			"its own; open the endpoint on a domain opened with the "
			"request's info (fi_domain with it), or give the "
			"listener that domain's address\n",
			nic_host(ep->domain->nic), nic_host(c->nic));
		return -FI_EINVAL;
	}
	nic_qp_connect(ep->qp, (struct nic_peer){ c->remote_host, c->remote_qpn });
	c->pep = NULL;
	c->state = CONN_REP_SENT;
	rep.qpn = nic_qp_num(ep->qp);
	rep.data_len = len;
	if (len)
		memcpy(rep.data, param, len);
	send_msg(c, &rep, true);
	return 0;
}

int sim_cm_reject(struct sim_pep *pep, fid_t handle, const void *param,
		  size_t len)
{
	struct sim_conn *c = container_of(handle, struct sim_conn, connreq);

	if (handle->fclass != FI_CLASS_CONNREQ || c->state != CONN_REQ_RCVD ||
	    c->ep)
		return -FI_EINVAL;
	refuse(c, param, len);
	return 0;
}

int sim_cm_shutdown(struct sim_ep *ep)
{
	struct sim_conn *c = ep->conn;
	struct cm_msg dreq = { .attr = CM_ATTR_DREQ };

	if (!c || c->state != CONN_ESTABLISHED)
		return -FI_ENOTCONN;
	nic_qp_set_error(ep->qp);
	/* fi_cm(3): canceled completions are written before fi_shutdown
	 * returns; the flush is due at this instant. */
	nic_world_run_until(ep->domain->world->nic, NULL, NULL,
			    nic_world_now(ep->domain->world->nic));
	c->state = CONN_DREQ_SENT;
	dreq.qpn = c->remote_qpn;
	send_msg(c, &dreq, true);
	return 0;
}

void sim_cm_qp_fatal(struct sim_ep *ep)
{
	struct sim_conn *c = ep->conn;

	if (!c || c->state != CONN_ESTABLISHED)
		return;
	c->state = CONN_DISCONNECTED;
	report_shutdown(c);
}

void sim_cm_release(struct sim_ep *ep)
{
	struct sim_conn *c = ep->conn;

	if (!c)
		return;
	/* Let go unanswered, or accepted but not yet confirmed (RTU): the
	 * kernel's CM refuses both when the id is destroyed. */
	if (c->state == CONN_REQ_RCVD || c->state == CONN_REP_SENT) {
		refuse(c, NULL, 0);
		return;
	}
	if (c->state == CONN_ESTABLISHED) {
		/* Closing a connected endpoint disconnects it. */
		send_reply(c->nic, c->remote_host, CM_ATTR_DREQ, c->local_id,
			   c->remote_id, 0, NULL, 0);
	}
	c->ep = NULL;
	conn_free(c);
}

int sim_cm_local_addr(struct sim_ep *ep, struct sockaddr_in *out)
{
	if (!ep->conn || !ep->conn->local_addr.sin_family)
		return -FI_ENOTCONN;
	*out = ep->conn->local_addr;
	return 0;
}

int sim_cm_peer_addr(struct sim_ep *ep, struct sockaddr_in *out)
{
	if (!ep->conn || ep->conn->state != CONN_ESTABLISHED)
		return -FI_ENOTCONN;
	*out = ep->conn->peer_addr;
	return 0;
}

void sim_cm_end(struct sim_world *world)
{
	/* Refused connections kept for resent requests. */
	if (!world->conns)
		return;
	sim_lock(world);
	while (world->conns)
		conn_free(world->conns);
	sim_unlock(world);
}
