/* SPDX-License-Identifier: BSD-2-Clause
 * rdma_cm ids: binding to a device's IPv4 address and a port, address and
 * route resolution (answered at once: every simulated host is one hop
 * away on the fabric), listening, the QP rdma_cm manages, devices, names
 * and options. Connections are cm_conn.c's. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "cm.h"

const struct sv_private_ops *cm_sv;
struct cm_id *cm_ids;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_err;
static struct ibv_context **ctxs;
static int nctx;

/* ---- Devices ----------------------------------------------------------------- */

static void init(void)
{
	struct ibv_device **list;
	int n = 0;

	cm_sv = fabsim_sv_private();
	if (cm_sv->version != SV_PRIVATE_VERSION) {
		init_err = -ELIBBAD;
		return;
	}
	init_err = cm_sv->init();
	if (init_err)
		return;
	list = ibv_get_device_list(&n);
	ctxs = calloc((size_t)n + 1, sizeof(*ctxs));
	if (!list || !ctxs) {
		init_err = -ENOMEM;
		return;
	}
	for (int i = 0; i < n; i++) {
		struct nic *nic;

		ctxs[i] = ibv_open_device(list[i]);
		if (!ctxs[i]) {
			init_err = -errno;
			break;
		}
		cm_sv->device_addr(list[i], &nic, NULL, NULL);
		cm_sv->lock();
		cm_sv->set_mad_handler(nic, cm_on_mad, (void *)(intptr_t)i);
		cm_sv->unlock();
		nctx = i + 1;
	}
	ibv_free_device_list(list);
}

int cm_init(void)
{
	pthread_once(&init_once, init);
	return init_err;
}

struct ibv_context *cm_context(int dev)
{
	return dev >= 0 && dev < nctx ? ctxs[dev] : NULL;
}

int cm_device_count(void)
{
	return nctx;
}

struct in_addr cm_device_ip(int dev)
{
	struct in_addr ip = { 0 };

	if (dev >= 0 && dev < nctx)
		cm_sv->device_addr(ctxs[dev]->device, NULL, NULL, &ip);
	return ip;
}

static int device_of_ip(struct in_addr ip)
{
	for (int i = 0; i < nctx; i++)
		if (cm_device_ip(i).s_addr == ip.s_addr)
			return i;
	return -1;
}

struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **list;
	int ret = cm_init();

	if (ret) {
		errno = -ret;
		return NULL;
	}
	list = calloc((size_t)nctx + 1, sizeof(*list));
	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(list, ctxs, (size_t)nctx * sizeof(*list));
	if (num_devices)
		*num_devices = nctx;
	return list;
}

void rdma_free_devices(struct ibv_context **list)
{
	free(list); /* the contexts live as long as the process */
}

/* ---- Ids ------------------------------------------------------------------------ */

static struct cm_id *cm_of(struct rdma_cm_id *id)
{
	return SV_CONTAINER_OF(id, struct cm_id, id);
}

static int fail(int err)
{
	errno = err;
	return -1;
}

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
		   void *context, enum rdma_port_space ps)
{
	struct cm_id *c;
	int ret = cm_init();

	if (ret)
		return fail(-ret);
	if (!id)
		return fail(EINVAL);
	if (ps == RDMA_PS_IPOIB)
		return fail(EOPNOTSUPP); /* not simulated */
	if (ps != RDMA_PS_TCP && ps != RDMA_PS_IB && ps != RDMA_PS_UDP)
		return fail(EINVAL); /* no port space, as the kernel says */
	c = calloc(1, sizeof(*c));
	if (!c)
		return fail(ENOMEM);
	if (!channel) {
		/* Synchronous use: the id's own channel. */
		channel = rdma_create_event_channel();
		if (!channel) {
			free(c);
			return -1;
		}
		c->own_channel = SV_CONTAINER_OF(channel, struct cm_channel, ch);
		c->sync = true;
	}
	c->channel = SV_CONTAINER_OF(channel, struct cm_channel, ch);
	c->dev = -1;
	c->retry_count = c->rnr_retry_count = 7;
	c->id.channel = channel;
	c->id.context = context;
	c->id.ps = ps;
	c->id.qp_type = ps == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC;
	c->id.route.addr.src_sin.sin_family = AF_INET;
	c->id.route.addr.dst_sin.sin_family = AF_INET;
	cm_sv->lock();
	c->next = cm_ids;
	cm_ids = c;
	cm_sv->unlock();
	*id = &c->id;
	return 0;
}

int cm_id_new_locked(struct cm_id *listener, struct rdma_cm_id **out)
{
	struct cm_id *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->channel = listener->channel;
	c->dev = -1;
	c->retry_count = c->rnr_retry_count = 7;
	c->id.channel = listener->id.channel;
	c->id.context = listener->id.context;
	c->id.ps = listener->id.ps;
	c->id.qp_type = listener->id.qp_type;
	c->id.route.addr.src_sin.sin_family = AF_INET;
	c->id.route.addr.dst_sin.sin_family = AF_INET;
	c->next = cm_ids;
	cm_ids = c;
	*out = &c->id;
	return 0;
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct cm_id *c = cm_of(id), **p;

	cm_sv->lock();
	if (c->state == CM_LISTEN)
		cm_conn_drop_requests(c);
	cm_conn_teardown(c);
	for (struct cm_id *o = cm_ids; o; o = o->next)
		if (o->listener == c)
			o->listener = NULL;
	cm_events_drop(c);
	for (p = &cm_ids; *p != c; p = &(*p)->next)
		;
	*p = c->next;
	cm_sv->unlock();
	cm_sync_forget(c);
	if (c->own_channel)
		rdma_destroy_event_channel(&c->own_channel->ch);
	free(c);
	return 0;
}

int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct cm_id *c = cm_of(id);
	struct cm_channel *from, *own;

	if (!channel) {
		/* Synchronous from now on, on a channel of its own. */
		if (c->sync)
			return 0;
		channel = rdma_create_event_channel();
		if (!channel)
			return -1;
		cm_sv->lock();
		c->own_channel = SV_CONTAINER_OF(channel, struct cm_channel, ch);
		c->sync = true;
		cm_sv->unlock();
	} else if (c->sync) {
		/* The application's channel: its events are the application's
		 * to read, and the one the id kept is let go. */
		cm_sync_forget(c);
		c->sync = false;
	}
	cm_sv->lock();
	from = c->channel;
	c->channel = SV_CONTAINER_OF(channel, struct cm_channel, ch);
	id->channel = channel;
	if (from != c->channel)
		cm_events_move(c, from);
	own = c->own_channel != c->channel ? c->own_channel : NULL;
	if (own)
		c->own_channel = NULL;
	cm_sv->unlock();
	if (own)
		rdma_destroy_event_channel(&own->ch);
	return 0;
}

/* ---- Addresses ----------------------------------------------------------------------- */

/* Whether another id of self's port space holds the port (each port space
 * has its own ports, as in the kernel's rdma_cm). */
static bool port_taken(struct in_addr ip, uint16_t port, const struct cm_id *self)
{
	for (const struct cm_id *o = cm_ids; o; o = o->next) {
		const struct sockaddr_in *s = &o->id.route.addr.src_sin;

		if (o == self || !o->bound || o->id.ps != self->id.ps ||
		    ntohs(s->sin_port) != port)
			continue;
		if (s->sin_addr.s_addr == ip.s_addr ||
		    s->sin_addr.s_addr == htonl(INADDR_ANY) ||
		    ip.s_addr == htonl(INADDR_ANY))
			return true;
	}
	return false;
}

static uint16_t ephemeral(struct in_addr ip, const struct cm_id *self)
{
	static uint16_t next = 49152;

	for (int tries = 0; tries < 16384; tries++) {
		uint16_t port = next;

		next = next == 65535 ? 49152 : next + 1;
		if (!port_taken(ip, port, self))
			return port;
	}
	return 0;
}

/* Lock held. */
static int bind_locked(struct cm_id *c, struct in_addr ip, uint16_t port)
{
	int dev = -1;

	if (ip.s_addr != htonl(INADDR_ANY)) {
		dev = device_of_ip(ip);
		if (dev < 0)
			return EADDRNOTAVAIL;
	}
	if (!port) {
		port = ephemeral(ip, c);
		if (!port)
			return EADDRINUSE;
	} else if (port_taken(ip, port, c)) {
		return EADDRINUSE;
	}
	c->id.route.addr.src_sin.sin_family = AF_INET;
	c->id.route.addr.src_sin.sin_addr = ip;
	c->id.route.addr.src_sin.sin_port = htons(port);
	c->bound = true;
	c->dev = dev;
	c->id.verbs = cm_context(dev);
	c->id.port_num = dev >= 0 ? 1 : 0;
	return 0;
}

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct cm_id *c = cm_of(id);
	const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;
	int ret;

	if (!addr)
		return fail(EINVAL);
	if (addr->sa_family != AF_INET)
		return fail(EAFNOSUPPORT); /* IPv4 only */
	cm_sv->lock();
	ret = c->bound ? EINVAL : bind_locked(c, sin->sin_addr,
					      ntohs(sin->sin_port));
	cm_sv->unlock();
	return ret ? fail(ret) : 0;
}

/* This host: 127/8, and the wildcard, which the kernel resolves to a
 * local device too. */
static bool is_loopback(struct in_addr ip)
{
	return (ntohl(ip.s_addr) >> 24) == 127 || ip.s_addr == INADDR_ANY;
}

/* The simulated network's addresses (10.0.0.<host + 1>), which the
 * devices' routes reach. */
static bool on_the_fabric(struct in_addr ip)
{
	return (ntohl(ip.s_addr) >> 24) == 10;
}

void cm_gid_of(struct in_addr ip, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = gid->raw[11] = 0xff;
	memcpy(gid->raw + 12, &ip.s_addr, 4);
}

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr,
		      struct sockaddr *dst_addr, int timeout_ms)
{
	struct cm_id *c = cm_of(id);
	const struct sockaddr_in *dst = (const struct sockaddr_in *)dst_addr;
	int ret = 0;

	if (!dst_addr || dst_addr->sa_family != AF_INET ||
	    (src_addr && src_addr->sa_family != AF_INET))
		return fail(EAFNOSUPPORT);
	/* No route: the kernel fails the call itself. */
	if (!is_loopback(dst->sin_addr) && !on_the_fabric(dst->sin_addr))
		return fail(ENETUNREACH);
	cm_sv->lock();
	if (!c->bound && src_addr) {
		const struct sockaddr_in *src = (const void *)src_addr;

		ret = bind_locked(c, src->sin_addr, ntohs(src->sin_port));
	}
	if (!ret && (!c->bound || c->dev < 0)) {
		/* The local device: the destination's own when it is here
		 * (loopback), else the first. */
		int dev = is_loopback(dst->sin_addr) ? 0 :
			  device_of_ip(dst->sin_addr);
		struct sockaddr_in *src = &c->id.route.addr.src_sin;

		if (dev < 0)
			dev = 0;
		if (dev >= nctx) {
			ret = ENODEV;
		} else if (!c->bound) {
			ret = bind_locked(c, cm_device_ip(dev), 0);
		} else {
			c->dev = dev;
			src->sin_addr = cm_device_ip(dev);
			c->id.verbs = cm_context(dev);
			c->id.port_num = 1;
		}
	}
	if (!ret) {
		/* A loopback destination is this host: the id's own NIC, as
		 * rdma_cm resolves 127.0.0.1 to a local device. */
		c->peer_ip = is_loopback(dst->sin_addr) ?
				     c->id.route.addr.src_sin.sin_addr :
				     dst->sin_addr;
		c->id.route.addr.dst_sin = *dst;
		cm_gid_of(c->id.route.addr.src_sin.sin_addr,
		       &c->id.route.addr.addr.ibaddr.sgid);
		cm_gid_of(c->peer_ip, &c->id.route.addr.addr.ibaddr.dgid);
		c->id.route.addr.addr.ibaddr.pkey = htons(0xffff);
		if (cm_sv->host_of_ip(c->peer_ip) == NIC_HOST_ANY) {
			cm_addr_query(c, timeout_ms);
		} else {
			c->state = CM_ADDR_RESOLVED;
			cm_event_push(c, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL,
				      NULL, 0, 0, 0);
		}
	}
	cm_sv->unlock();
	return ret ? fail(ret) : cm_sync_complete(c);
}

int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct cm_id *c = cm_of(id);
	int ret = 0;

	cm_sv->lock();
	if (c->state != CM_ADDR_RESOLVED) {
		ret = EINVAL;
	} else {
		c->state = CM_ROUTE_RESOLVED;
		cm_event_push(c, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, NULL,
			      0, 0, 0);
	}
	cm_sv->unlock();
	return ret ? fail(ret) : cm_sync_complete(c);
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct cm_id *c = cm_of(id);
	int ret = 0;

	cm_sv->lock();
	if (!c->bound)
		ret = bind_locked(c, (struct in_addr){ htonl(INADDR_ANY) }, 0);
	if (!ret && c->state != CM_IDLE && c->state != CM_LISTEN)
		ret = EINVAL;
	if (!ret)
		c->state = CM_LISTEN;
	cm_sv->unlock();
	return ret ? fail(ret) : 0;
}

__be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return id->route.addr.src_sin.sin_port;
}

__be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return id->route.addr.dst_sin.sin_port;
}

/* ---- The QP ------------------------------------------------------------------------------ */

static bool qp_type_ud(enum ibv_qp_type type)
{
	return type == IBV_QPT_UD;
}

/* A UD QP goes straight to RTS with rdma_cm's Q_Key, as rdma_cm takes it:
 * nothing is left to connect. */
static int ready_ud(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = RDMA_UDP_QKEY,
	};
	int ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | IBV_QP_QKEY);

	attr.qp_state = IBV_QPS_RTR;
	if (!ret)
		ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	if (!ret)
		ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
	return ret;
}

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
		   struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	struct cm_id *c = cm_of(id);
	struct ibv_qp_init_attr init;
	struct ibv_qp *qp;
	int ret;

	if (!id->verbs || id->qp || !qp_init_attr)
		return fail(EINVAL);
	/* No PD: the device's default one, as rdma_cm does. */
	if (!pd && !(pd = cm_default_pd(id->verbs)))
		return -1;
	if (pd->context != id->verbs)
		return fail(EINVAL);
	init = *qp_init_attr;
	if (cm_qp_cqs(c, &init))
		return -1;
	qp = ibv_create_qp(pd, &init);
	if (!qp) {
		cm_qp_cqs_free(c);
		return -1;
	}
	qp_init_attr->cap = init.cap;
	ret = qp_type_ud(init.qp_type) ? ready_ud(qp) :
	      ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret) {
		ibv_destroy_qp(qp);
		cm_qp_cqs_free(c);
		return fail(ret);
	}
	id->qp = qp;
	id->pd = pd;
	return 0;
}

void rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (id->qp && !ibv_destroy_qp(id->qp)) {
		id->qp = NULL;
		cm_qp_cqs_free(cm_of(id));
	}
}

/* ---- Options and the rest ----------------------------------------------------------------- */

int rdma_set_option(struct rdma_cm_id *id, int level, int optname,
		    void *optval, size_t optlen)
{
	if (level == RDMA_OPTION_ID &&
	    (optname == RDMA_OPTION_ID_TOS || optname == RDMA_OPTION_ID_REUSEADDR ||
	     optname == RDMA_OPTION_ID_AFONLY ||
	     optname == RDMA_OPTION_ID_ACK_TIMEOUT))
		return 0; /* accepted; the simulation has no use for them */
	return fail(ENOSYS);
}

int rdma_getaddrinfo(const char *node, const char *service,
		     const struct rdma_addrinfo *hints,
		     struct rdma_addrinfo **res)
{
	struct addrinfo h = { .ai_family = AF_INET }, *ai = NULL;
	struct rdma_addrinfo *r;
	bool passive = hints && (hints->ai_flags & RAI_PASSIVE);
	struct sockaddr_in *sin;

	if (!res)
		return fail(EINVAL);
	if (hints && (hints->ai_flags & RAI_NUMERICHOST))
		h.ai_flags |= AI_NUMERICHOST;
	if (passive)
		h.ai_flags |= AI_PASSIVE;
	if (getaddrinfo(node, service, &h, &ai))
		return fail(EADDRNOTAVAIL);
	r = calloc(1, sizeof(*r));
	sin = calloc(1, sizeof(*sin));
	if (!r || !sin) {
		free(r);
		free(sin);
		freeaddrinfo(ai);
		return fail(ENOMEM);
	}
	memcpy(sin, ai->ai_addr, sizeof(*sin));
	freeaddrinfo(ai);
	r->ai_flags = hints ? hints->ai_flags : 0;
	r->ai_family = AF_INET;
	/* The port space and QP type asked for (a UD one gets UD QPs), else
	 * a reliable connection, as rdma_cm gives. */
	r->ai_port_space = hints && hints->ai_port_space ? hints->ai_port_space :
				  hints && hints->ai_qp_type == IBV_QPT_UD ?
				  RDMA_PS_UDP : RDMA_PS_TCP;
	r->ai_qp_type = hints && hints->ai_qp_type ? hints->ai_qp_type :
			r->ai_port_space == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC;
	if (passive) {
		r->ai_src_addr = (struct sockaddr *)sin;
		r->ai_src_len = sizeof(*sin);
	} else {
		r->ai_dst_addr = (struct sockaddr *)sin;
		r->ai_dst_len = sizeof(*sin);
		/* The source the caller asks for comes back, to bind to when
		 * resolving (ucmatose -b): a wrong one fails there. */
		if (hints && hints->ai_src_addr && hints->ai_src_len) {
			r->ai_src_addr = malloc(hints->ai_src_len);
			if (!r->ai_src_addr) {
				rdma_freeaddrinfo(r);
				return fail(ENOMEM);
			}
			memcpy(r->ai_src_addr, hints->ai_src_addr,
			       hints->ai_src_len);
			r->ai_src_len = hints->ai_src_len;
		}
	}
	*res = r;
	return 0;
}

void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *next = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res);
		res = next;
	}
}

/* Not simulated: extended QP creation, shared receive queues on ids,
 * multicast and ECE. They fail with ENOSYS. */
int rdma_create_qp_ex(struct rdma_cm_id *id,
		      struct ibv_qp_init_attr_ex *qp_init_attr)
{
	return fail(ENOSYS);
}

int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
		    struct ibv_srq_init_attr *attr)
{
	return fail(ENOSYS);
}

int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	return fail(ENOSYS);
}

void rdma_destroy_srq(struct rdma_cm_id *id)
{
}

int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	return fail(ENOSYS);
}

int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr,
			void *context)
{
	return fail(ENOSYS);
}

int rdma_join_multicast_ex(struct rdma_cm_id *id,
			   struct rdma_cm_join_mc_attr_ex *mc_join_attr,
			   void *context)
{
	return fail(ENOSYS);
}

int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	return fail(ENOSYS);
}

int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	return fail(ENOSYS);
}

int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	return fail(ENOSYS);
}

int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data,
		    uint8_t private_data_len)
{
	return fail(ENOSYS);
}
