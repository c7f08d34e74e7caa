/* SPDX-License-Identifier: BSD-2-Clause
 * fid_eq over an rdma_cm event channel (fi_eq(3), fi_cm(3)).
 *
 * Connection events are taken from the channel when the application reads
 * and become FI_CONNREQ, FI_CONNECTED and FI_SHUTDOWN entries, or error
 * entries (a reject carries the peer's private data as err_data).
 * Resolution steps and events for requests nobody accepted yet are the
 * provider's business and never reach the queue. The wait descriptor is an
 * epoll set of the channel's and of an eventfd that fi_eq_write signals:
 * an application's own event wakes a thread blocked on the EQ too. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <fabsim/fi_stubs.h>

#include "verbs.h"

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

/* Queues a CM event: its struct fi_eq_cm_entry and private data. */
static int push_cm(struct vrb_eq *eq, uint32_t event, struct fid *fid,
		   struct fi_info *info, const struct rdma_conn_param *conn)
{
	const uint8_t *data;
	size_t len = conn ? vrb_cm_unpack(conn->private_data,
					  conn->private_data_len, &data) : 0;
	uint8_t raw[sizeof(struct fi_eq_cm_entry) + 256];
	struct fi_eq_cm_entry *cm = (struct fi_eq_cm_entry *)raw;

	if (len > sizeof(raw) - sizeof(*cm))
		len = sizeof(raw) - sizeof(*cm);
	cm->fid = fid;
	cm->info = info;
	if (len)
		memcpy(cm->data, data, len);
	return fabsim_eventq_push(&eq->q, event, raw, sizeof(*cm) + len);
}

static void connreq(struct vrb_eq *eq, struct rdma_cm_event *ev)
{
	struct vrb_pep *pep = ev->listen_id->context;
	struct vrb_connreq *req = calloc(1, sizeof(*req));
	struct fi_info *info = fi_dupinfo(pep->info);

	if (!req || !info) {
		free(req);
		fi_freeinfo(info);
		return;
	}
	req->handle.fclass = FI_CLASS_CONNREQ;
	req->id = ev->id;
	ev->id->context = &req->handle;
	set_sockaddr(&info->src_addr, &info->src_addrlen,
		     rdma_get_local_addr(ev->id));
	set_sockaddr(&info->dest_addr, &info->dest_addrlen,
		     rdma_get_peer_addr(ev->id));
	info->handle = &req->handle;
	if (push_cm(eq, FI_CONNREQ, &pep->pep_fid.fid, info, &ev->param.conn)) {
		fi_freeinfo(info);
		vrb_lib.reject(ev->id, NULL, 0);
		vrb_lib.destroy_id(ev->id);
		free(req);
	}
}

static void push_error(struct vrb_eq *eq, struct fid *fid, int err,
		       const struct rdma_cm_event *ev)
{
	const uint8_t *data = NULL;
	size_t len = ev->event == RDMA_CM_EVENT_REJECTED ?
			     vrb_cm_unpack(ev->param.conn.private_data,
					   ev->param.conn.private_data_len,
					   &data) : 0;
	struct fi_eq_err_entry e = {
		.fid = fid,
		.context = fid->context,
		.err = err,
		.prov_errno = vrb_cm_prov_errno(ev->event, ev->status),
	};

	fabsim_eventq_push_error(&eq->q, &e, data, len);
}

/* One rdma_cm event: what it changes, and what the application sees. */
static void translate(struct vrb_eq *eq, struct rdma_cm_event *ev)
{
	struct fid *fid = ev->id ? ev->id->context : NULL;
	struct vrb_ep *ep = NULL;
	uint32_t event;
	int err;
	enum vrb_cm_action action = vrb_cm_translate(ev->event, ev->status,
						     &event, &err);

	if (action == VRB_CM_IGNORE)
		return;
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		connreq(eq, ev);
		return;
	}
	/* Requests not yet accepted, and ids being torn down, are ours. */
	if (!fid || fid->fclass != FI_CLASS_EP)
		return;
	ep = container_of(fid, struct vrb_ep, ep_fid.fid);
	vrb_ep_cm_event(ep, ev->event);
	if (action == VRB_CM_ERROR)
		push_error(eq, fid, err, ev);
	else if (event == FI_CONNECTED)
		push_cm(eq, FI_CONNECTED, fid, NULL, &ev->param.conn);
	else
		push_cm(eq, FI_SHUTDOWN, fid, NULL, NULL);
}

/* Moves what the channel has into the queue (lock held). */
static void drain(struct vrb_eq *eq)
{
	struct rdma_cm_event *ev;

	while (!vrb_lib.get_cm_event(eq->channel, &ev)) {
		translate(eq, ev);
		vrb_lib.ack_cm_event(ev);
	}
}

/* Lock held: an empty queue takes back what fi_eq_write signalled, so
 * that the descriptor is readable again only for the next event. Passes
 * ret through. */
static ssize_t settled(struct vrb_eq *eq, ssize_t ret)
{
	uint64_t count;

	if (fabsim_eventq_empty(&eq->q) &&
	    read(eq->wake_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		FI_WARN(&vrb_prov, FI_LOG_EQ, "read(eventfd): %s\n",
			strerror(errno));
	return ret;
}

/* ---- Reading ----------------------------------------------------------------------------- */

static ssize_t eq_read(struct fid_eq *fid, uint32_t *event, void *buf,
		       size_t len, uint64_t flags)
{
	struct vrb_eq *eq = container_of(fid, struct vrb_eq, eq_fid);
	ssize_t ret;

	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&eq->lock);
	drain(eq);
	ret = settled(eq, fabsim_eventq_read(&eq->q, event, buf, len, flags));
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static ssize_t eq_readerr(struct fid_eq *fid, struct fi_eq_err_entry *buf,
			  uint64_t flags)
{
	struct vrb_eq *eq = container_of(fid, struct vrb_eq, eq_fid);
	ssize_t ret;

	if (!buf)
		return -FI_EINVAL;
	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&eq->lock);
	drain(eq);
	ret = settled(eq, fabsim_eventq_readerr(&eq->q, buf, flags,
				    eq->fabric->fabric_fid.api_version));
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static ssize_t eq_write(struct fid_eq *fid, uint32_t event, const void *buf,
			size_t len, uint64_t flags)
{
	struct vrb_eq *eq = container_of(fid, struct vrb_eq, eq_fid);
	int ret;

	if (!buf || len < sizeof(struct fi_eq_entry))
		return -FI_EINVAL;
	if (flags & ~FI_EVENT)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&eq->lock);
	ret = fabsim_eventq_push(&eq->q, event, buf, len);
	if (!ret && write(eq->wake_fd, &(uint64_t){ 1 }, sizeof(uint64_t)) < 0)
		FI_WARN(&vrb_prov, FI_LOG_EQ, "write(eventfd): %s\n",
			strerror(errno));
	pthread_mutex_unlock(&eq->lock);
	return ret ? ret : (ssize_t)len;
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
		struct pollfd p = { .fd = eq->epfd, .events = POLLIN };
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
	ret = settled(eq, fabsim_eventq_empty(&eq->q) ? 0 : -FI_EAGAIN);
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

/* ---- Ids and private channels ---------------------------------------------------------------- */

void vrb_eq_ref(struct vrb_eq *eq)
{
	__atomic_add_fetch(&eq->refs, 1, __ATOMIC_RELAXED);
}

void vrb_eq_unref(struct vrb_eq *eq)
{
	__atomic_sub_fetch(&eq->refs, 1, __ATOMIC_RELAXED);
}

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
		*(int *)arg = eq->epfd;
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

	int bound = __atomic_load_n(&eq->refs, __ATOMIC_RELAXED);

	if (bound) {
		FI_WARN(&vrb_prov, FI_LOG_EQ, "fi_close(eq): %d endpoint(s) "
			"still bound\n", bound);
		return -FI_EBUSY;
	}
	pthread_mutex_lock(&eq->lock);
	drain(eq);
	fabsim_eventq_fini(&eq->q);
	pthread_mutex_unlock(&eq->lock);
	vrb_lib.destroy_event_channel(eq->channel);
	close(eq->epfd);
	close(eq->wake_fd);
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

/* The epoll set of the channel's descriptor and the eventfd; -1 with
 * errno set and nothing left open on failure. */
static int wait_set(struct vrb_eq *eq)
{
	struct epoll_event in = { .events = EPOLLIN };
	int saved;

	eq->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	eq->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (eq->wake_fd >= 0 && eq->epfd >= 0 &&
	    !epoll_ctl(eq->epfd, EPOLL_CTL_ADD, eq->channel->fd, &in) &&
	    !epoll_ctl(eq->epfd, EPOLL_CTL_ADD, eq->wake_fd, &in))
		return 0;
	saved = errno;
	if (eq->wake_fd >= 0)
		close(eq->wake_fd);
	if (eq->epfd >= 0)
		close(eq->epfd);
	errno = saved;
	return -1;
}

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
	fabsim_eventq_init(&eq->q);
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
	if (wait_set(eq)) {
		FI_WARN(&vrb_prov, FI_LOG_EQ, "fi_eq_open: the wait "
			"descriptor: %s\n", strerror(errno));
		vrb_lib.destroy_event_channel(eq->channel);
		free(eq);
		return -FI_ENOMEM;
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
