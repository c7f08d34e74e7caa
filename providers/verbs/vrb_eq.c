/* SPDX-License-Identifier: BSD-2-Clause
 * fid_eq over an rdma_cm event channel (fi_eq(3), fi_cm(3)).
 *
 * Connection events are taken from the channel when the application reads
 * and become FI_CONNREQ, FI_CONNECTED and FI_SHUTDOWN entries, or error
 * entries (a reject carries the peer's private data as err_data).
 * Resolution steps and events for requests nobody accepted yet are the
 * provider's business and never reach the queue. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fabsim/fi_stubs.h>

#include "verbs.h"

/* ---- The queue ------------------------------------------------------------------- */

static struct vrb_eq_entry *entry_new(uint32_t event, size_t len)
{
	struct vrb_eq_entry *e = calloc(1, sizeof(*e) + len);

	if (e) {
		e->event = event;
		e->len = len;
	}
	return e;
}

static void enqueue(struct vrb_eq *eq, struct vrb_eq_entry *e)
{
	e->next = NULL;
	if (eq->tail)
		eq->tail->next = e;
	else
		eq->head = e;
	eq->tail = e;
}

static struct vrb_eq_entry *dequeue(struct vrb_eq *eq)
{
	struct vrb_eq_entry *e = eq->head;

	eq->head = e->next;
	if (!eq->head)
		eq->tail = NULL;
	return e;
}

static void entry_free(struct vrb_eq_entry *e)
{
	/* A FI_CONNREQ nobody read still owns its info. */
	if (e && !e->error && e->event == FI_CONNREQ) {
		struct fi_eq_cm_entry *cm = (struct fi_eq_cm_entry *)e->buf;

		fi_freeinfo(cm->info);
	}
	free(e);
}

/* ---- From rdma_cm events -------------------------------------------------------------- */

static void set_sockaddr(void **field, size_t *len, const struct sockaddr *sa)
{
	size_t n = vrb_sockaddr_len(sa);

	free(*field);
	*field = NULL;
	*len = 0;
	if (n && (*field = malloc(n))) {
		memcpy(*field, sa, n);
		*len = n;
	}
}

static struct vrb_eq_entry *cm_entry(uint32_t event, struct fid *fid,
				     struct fi_info *info,
				     const struct rdma_conn_param *conn)
{
	const uint8_t *data;
	size_t len = conn ? vrb_cm_unpack(conn->private_data,
					  conn->private_data_len, &data) : 0;
	struct vrb_eq_entry *e = entry_new(event,
					   sizeof(struct fi_eq_cm_entry) + len);
	struct fi_eq_cm_entry *cm;

	if (!e)
		return NULL;
	cm = (struct fi_eq_cm_entry *)e->buf;
	cm->fid = fid;
	cm->info = info;
	if (len)
		memcpy(cm->data, data, len);
	return e;
}

static struct vrb_eq_entry *connreq(struct rdma_cm_event *ev)
{
	struct vrb_pep *pep = ev->listen_id->context;
	struct vrb_connreq *req = calloc(1, sizeof(*req));
	struct fi_info *info = fi_dupinfo(pep->info);
	struct vrb_eq_entry *e;

	if (!req || !info) {
		free(req);
		fi_freeinfo(info);
		return NULL;
	}
	req->handle.fclass = FI_CLASS_CONNREQ;
	req->id = ev->id;
	ev->id->context = &req->handle;
	set_sockaddr(&info->src_addr, &info->src_addrlen,
		     rdma_get_local_addr(ev->id));
	set_sockaddr(&info->dest_addr, &info->dest_addrlen,
		     rdma_get_peer_addr(ev->id));
	info->handle = &req->handle;
	e = cm_entry(FI_CONNREQ, &pep->pep_fid.fid, info, &ev->param.conn);
	if (!e) {
		fi_freeinfo(info);
		vrb_lib.reject(ev->id, NULL, 0);
		vrb_lib.destroy_id(ev->id);
		free(req);
	}
	return e;
}

static struct vrb_eq_entry *error_entry(struct fid *fid, int err,
					const struct rdma_cm_event *ev)
{
	const uint8_t *data = NULL;
	size_t len = ev->event == RDMA_CM_EVENT_REJECTED ?
			     vrb_cm_unpack(ev->param.conn.private_data,
					   ev->param.conn.private_data_len,
					   &data) : 0;
	struct vrb_eq_entry *e = entry_new(0, len);

	if (!e)
		return NULL;
	e->error = true;
	e->err.fid = fid;
	e->err.context = fid->context;
	e->err.err = err;
	e->err.prov_errno = vrb_cm_prov_errno(ev->event, ev->status);
	if (len)
		memcpy(e->buf, data, len);
	return e;
}

/* One rdma_cm event: what it changes, and what the application sees. */
static struct vrb_eq_entry *translate(struct rdma_cm_event *ev)
{
	struct fid *fid = ev->id ? ev->id->context : NULL;
	struct vrb_ep *ep = NULL;
	uint32_t event;
	int err;
	enum vrb_cm_action action = vrb_cm_translate(ev->event, ev->status,
						     &event, &err);

	if (action == VRB_CM_IGNORE)
		return NULL;
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return connreq(ev);
	/* Requests not yet accepted, and ids being torn down, are ours. */
	if (!fid || fid->fclass != FI_CLASS_EP)
		return NULL;
	ep = container_of(fid, struct vrb_ep, ep_fid.fid);
	vrb_ep_cm_event(ep, ev->event);
	if (action == VRB_CM_ERROR)
		return error_entry(fid, err, ev);
	if (event == FI_CONNECTED)
		return cm_entry(FI_CONNECTED, fid, NULL, &ev->param.conn);
	return cm_entry(FI_SHUTDOWN, fid, NULL, NULL);
}

/* Moves what the channel has into the queue (lock held). */
static void drain(struct vrb_eq *eq)
{
	struct rdma_cm_event *ev;

	while (!vrb_lib.get_cm_event(eq->channel, &ev)) {
		struct vrb_eq_entry *e = translate(ev);

		vrb_lib.ack_cm_event(ev);
		if (e)
			enqueue(eq, e);
	}
}

/* ---- Reading ----------------------------------------------------------------------------- */

static size_t min_size(uint32_t event)
{
	return event == FI_CONNREQ || event == FI_CONNECTED ?
		       sizeof(struct fi_eq_cm_entry) : sizeof(struct fi_eq_entry);
}

static ssize_t eq_read(struct fid_eq *fid, uint32_t *event, void *buf,
		       size_t len, uint64_t flags)
{
	struct vrb_eq *eq = container_of(fid, struct vrb_eq, eq_fid);
	struct vrb_eq_entry *e;
	ssize_t ret;

	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&eq->lock);
	drain(eq);
	e = eq->head;
	if (!e) {
		ret = -FI_EAGAIN;
	} else if (e->error) {
		ret = -FI_EAVAIL;
	} else if (len < min_size(e->event) || (len && !buf)) {
		ret = -FI_ETOOSMALL;
	} else {
		ret = (ssize_t)(len < e->len ? len : e->len);
		memcpy(buf, e->buf, (size_t)ret);
		if (event)
			*event = e->event;
		if (!(flags & FI_PEEK))
			free(dequeue(eq)); /* the info is the reader's now */
	}
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static ssize_t eq_readerr(struct fid_eq *fid, struct fi_eq_err_entry *buf,
			  uint64_t flags)
{
	struct vrb_eq *eq = container_of(fid, struct vrb_eq, eq_fid);
	struct vrb_eq_entry *e;
	void *user_data;
	size_t user_size;

	if (!buf)
		return -FI_EINVAL;
	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&eq->lock);
	drain(eq);
	e = eq->head;
	if (!e || !e->error) {
		pthread_mutex_unlock(&eq->lock);
		return -FI_EAGAIN;
	}
	if (!(flags & FI_PEEK)) {
		dequeue(eq);
		entry_free(eq->err_reported);
		eq->err_reported = e;
	}
	user_data = buf->err_data;
	user_size = buf->err_data_size;
	*buf = e->err;
	buf->err_data = e->len ? e->buf : NULL;
	buf->err_data_size = e->len;
	/* Since API 1.5 the reader may bring its own err_data buffer. */
	if (FI_VERSION_GE(eq->fabric->fabric_fid.api_version,
			  FI_VERSION(1, 5)) && user_data && user_size) {
		size_t n = user_size < e->len ? user_size : e->len;

		memcpy(user_data, e->buf, n);
		buf->err_data = user_data;
		buf->err_data_size = n;
	}
	pthread_mutex_unlock(&eq->lock);
	return sizeof(*buf);
}

static ssize_t eq_write(struct fid_eq *fid, uint32_t event, const void *buf,
			size_t len, uint64_t flags)
{
	struct vrb_eq *eq = container_of(fid, struct vrb_eq, eq_fid);
	struct vrb_eq_entry *e;

	if (!buf || len < sizeof(struct fi_eq_entry))
		return -FI_EINVAL;
	if (flags & ~FI_EVENT)
		return -FI_EBADFLAGS;
	e = entry_new(event, len);
	if (!e)
		return -FI_ENOMEM;
	memcpy(e->buf, buf, len);
	pthread_mutex_lock(&eq->lock);
	enqueue(eq, e);
	pthread_mutex_unlock(&eq->lock);
	return (ssize_t)len;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static ssize_t eq_sread(struct fid_eq *fid, uint32_t *event, void *buf,
			size_t len, int timeout, uint64_t flags)
{
	struct vrb_eq *eq = container_of(fid, struct vrb_eq, eq_fid);
	int64_t deadline = timeout < 0 ? -1 : now_ms() + timeout;

	for (;;) {
		struct pollfd p = { .fd = eq->channel->fd, .events = POLLIN };
		ssize_t ret = eq_read(fid, event, buf, len, flags);
		int wait_ms;

		if (ret != -FI_EAGAIN)
			return ret;
		wait_ms = deadline < 0 ? -1 : (int)(deadline - now_ms());
		if (deadline >= 0 && wait_ms <= 0)
			return -FI_EAGAIN;
		if (poll(&p, 1, wait_ms) == 0)
			return -FI_EAGAIN;
	}
}

static const char *eq_strerror(struct fid_eq *fid, int prov_errno,
			       const void *err_data, char *buf, size_t len)
{
	return vrb_cm_strerror(prov_errno, buf, len);
}

int vrb_eq_trywait(struct vrb_eq *eq)
{
	int ret;

	pthread_mutex_lock(&eq->lock);
	drain(eq);
	ret = eq->head ? -FI_EAGAIN : 0;
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

/* ---- Ids and private channels ---------------------------------------------------------------- */

int vrb_eq_adopt(struct vrb_eq *eq, struct rdma_cm_id *id,
		 struct rdma_event_channel **own_channel)
{
	if (vrb_lib.migrate_id(id, eq->channel)) {
		FI_WARN(&vrb_prov, FI_LOG_EQ, "rdma_migrate_id: %s\n",
			strerror(errno));
		return -FI_EINVAL;
	}
	if (*own_channel) {
		vrb_lib.destroy_event_channel(*own_channel);
		*own_channel = NULL;
	}
	return 0;
}

int vrb_wait_cm_event(struct rdma_event_channel *ch, struct rdma_cm_id *id,
		      enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;
	int ret;

	for (;;) {
		if (vrb_lib.get_cm_event(ch, &ev))
			return -FI_EIO;
		if (ev->id != id) {
			vrb_lib.ack_cm_event(ev);
			continue;
		}
		if (ev->event == want) {
			ret = 0;
		} else {
			uint32_t unused;
			int err = FI_EIO;

			vrb_cm_translate(ev->event, ev->status, &unused, &err);
			FI_WARN(&vrb_prov, FI_LOG_EP_CTRL, "%s\n",
				vrb_cm_strerror(vrb_cm_prov_errno(ev->event,
								  ev->status),
						NULL, 0));
			ret = -err;
		}
		vrb_lib.ack_cm_event(ev);
		return ret;
	}
}

size_t vrb_sockaddr_len(const struct sockaddr *sa)
{
	if (!sa)
		return 0;
	switch (sa->sa_family) {
	case AF_INET: return sizeof(struct sockaddr_in);
	case AF_INET6: return sizeof(struct sockaddr_in6);
	default: return 0;
	}
}

/* ---- Object ------------------------------------------------------------------------------------- */

static int eq_control(struct fid *fid, int command, void *arg)
{
	struct vrb_eq *eq = container_of(fid, struct vrb_eq, eq_fid.fid);

	switch (command) {
	case FI_GETWAIT:
		if (!arg)
			return -FI_EINVAL;
		*(int *)arg = eq->channel->fd;
		return 0;
	case FI_GETWAITOBJ:
		if (!arg)
			return -FI_EINVAL;
		*(enum fi_wait_obj *)arg = FI_WAIT_FD;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

static int eq_close(struct fid *fid)
{
	struct vrb_eq *eq = container_of(fid, struct vrb_eq, eq_fid.fid);

	pthread_mutex_lock(&eq->lock);
	if (eq->refs) {
		pthread_mutex_unlock(&eq->lock);
		FI_WARN(&vrb_prov, FI_LOG_EQ, "fi_close(eq): %d endpoint(s) "
			"still bound\n", eq->refs);
		return -FI_EBUSY;
	}
	drain(eq);
	while (eq->head)
		entry_free(dequeue(eq));
	entry_free(eq->err_reported);
	pthread_mutex_unlock(&eq->lock);
	vrb_lib.destroy_event_channel(eq->channel);
	pthread_mutex_destroy(&eq->lock);
	pthread_mutex_lock(&eq->fabric->lock);
	eq->fabric->refs--;
	pthread_mutex_unlock(&eq->fabric->lock);
	free(eq);
	return 0;
}

static struct fi_ops eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = eq_close,
	.bind = fabsim_no_bind,
	.control = eq_control,
	.ops_open = fabsim_no_ops_open,
	.tostr = fabsim_no_tostr,
	.ops_set = fabsim_no_ops_set,
};

static struct fi_ops_eq eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = eq_read,
	.readerr = eq_readerr,
	.write = eq_write,
	.sread = eq_sread,
	.strerror = eq_strerror,
};

int vrb_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **out, void *context)
{
	struct vrb_fabric *fab =
		container_of(fabric, struct vrb_fabric, fabric_fid);
	struct vrb_eq *eq;

	if (!attr || !out)
		return -FI_EINVAL;
	if (attr->flags & ~FI_WRITE)
		return -FI_EBADFLAGS;
	switch (attr->wait_obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
		break;
	default:
		return -FI_ENOSYS;
	}
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	eq->channel = vrb_lib.create_event_channel();
	if (!eq->channel ||
	    fcntl(eq->channel->fd, F_SETFL,
		  fcntl(eq->channel->fd, F_GETFL) | O_NONBLOCK)) {
		FI_WARN(&vrb_prov, FI_LOG_EQ, "fi_eq_open: "
			"rdma_create_event_channel: %s\n", strerror(errno));
		if (eq->channel)
			vrb_lib.destroy_event_channel(eq->channel);
		free(eq);
		return -FI_ENODEV;
	}
	eq->attr = *attr;
	eq->fabric = fab;
	pthread_mutex_init(&eq->lock, NULL);
	eq->eq_fid.fid.fclass = FI_CLASS_EQ;
	eq->eq_fid.fid.context = context;
	eq->eq_fid.fid.ops = &eq_fi_ops;
	eq->eq_fid.ops = &eq_ops;
	pthread_mutex_lock(&fab->lock);
	fab->refs++;
	pthread_mutex_unlock(&fab->lock);
	*out = &eq->eq_fid;
	return 0;
}
