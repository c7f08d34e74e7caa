/* SPDX-License-Identifier: BSD-2-Clause
 * fid_eq: event queues (fi_eq(3)). Connection events (FI_CONNREQ,
 * FI_CONNECTED, FI_SHUTDOWN) and their errors arrive here in the order they
 * happen; an empty read lets simulated time move by one instant, sread
 * waits in simulated time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fabsim/fi_stubs.h>

#include "sim.h"

struct sim_eq_event {
	uint32_t             event;
	bool                 is_error;
	struct fi_eq_err_entry err;   /* is_error */
	struct fi_info      *info;    /* FI_CONNREQ: handed to the reader */
	size_t               len;     /* bytes of buf */
	struct sim_eq_event *next;
	uint8_t              buf[];
};

static void drain_fd(struct sim_eq *eq)
{
	if (!eq->head)
		sim_waitfd_drain(eq->wait_fd);
}

static void append(struct sim_eq *eq, struct sim_eq_event *ev)
{
	ev->next = NULL;
	if (eq->tail)
		eq->tail->next = ev;
	else
		eq->head = ev;
	eq->tail = ev;
	sim_waitfd_signal(eq->wait_fd);
	sim_progress_posted(eq->fabric->world);
}

int sim_eq_push(struct sim_eq *eq, uint32_t event, const void *buf,
		size_t len, struct fi_info *info)
{
	struct sim_eq_event *ev = calloc(1, sizeof(*ev) + len);

	if (!ev)
		return -FI_ENOMEM;
	ev->event = event;
	ev->info = info;
	ev->len = len;
	if (len)
		memcpy(ev->buf, buf, len);
	append(eq, ev);
	return 0;
}

int sim_eq_push_error(struct sim_eq *eq, fid_t fid, void *context, int err,
		      int prov_errno, uint64_t data, const void *err_data,
		      size_t err_data_len)
{
	struct sim_eq_event *ev = calloc(1, sizeof(*ev) + err_data_len);

	if (!ev)
		return -FI_ENOMEM;
	ev->is_error = true;
	ev->err.fid = fid;
	ev->err.context = context;
	ev->err.data = data;
	ev->err.err = err;
	ev->err.prov_errno = prov_errno;
	ev->len = err_data_len;
	if (err_data_len) {
		memcpy(ev->buf, err_data, err_data_len);
		ev->err.err_data = ev->buf;
		ev->err.err_data_size = err_data_len;
	}
	append(eq, ev);
	return 0;
}

static struct sim_eq_event *pop(struct sim_eq *eq)
{
	struct sim_eq_event *ev = eq->head;

	eq->head = ev->next;
	if (!eq->head)
		eq->tail = NULL;
	drain_fd(eq);
	return ev;
}

static ssize_t take(struct sim_eq *eq, uint32_t *event, void *buf, size_t len,
		    uint64_t flags)
{
	struct sim_eq_event *ev = eq->head;
	size_t n = ev->len;

	if (ev->is_error)
		return -FI_EAVAIL;
	if (len < ev->len || (ev->len && !buf))
		return -FI_ETOOSMALL;
	if (event)
		*event = ev->event;
	if (ev->len)
		memcpy(buf, ev->buf, ev->len);
	/* A connection request's fi_info goes to whoever reads it. */
	if (ev->info)
		((struct fi_eq_cm_entry *)buf)->info = ev->info;
	if (!(flags & FI_PEEK)) {
		pop(eq);
		free(ev);
	}
	return (ssize_t)n;
}

static ssize_t eq_read(struct fid_eq *fid, uint32_t *event, void *buf,
		       size_t len, uint64_t flags)
{
	struct sim_eq *eq = container_of(fid, struct sim_eq, eq_fid);
	ssize_t ret;

	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	sim_lock(eq->fabric->world);
	if (!eq->head)
		sim_progress_poll(eq->fabric->world);
	ret = eq->head ? take(eq, event, buf, len, flags) : -FI_EAGAIN;
	sim_unlock(eq->fabric->world);
	return ret;
}

static bool eq_ready(void *ctx)
{
	return ((struct sim_eq *)ctx)->head != NULL;
}

static ssize_t eq_sread(struct fid_eq *fid, uint32_t *event, void *buf,
			size_t len, int timeout, uint64_t flags)
{
	struct sim_eq *eq = container_of(fid, struct sim_eq, eq_fid);
	ssize_t ret;

	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	if (eq->attr.wait_obj == FI_WAIT_NONE)
		return -FI_EINVAL;
	sim_lock(eq->fabric->world);
	ret = sim_progress_wait(eq->fabric->world, eq_ready, eq, timeout);
	if (!ret)
		ret = take(eq, event, buf, len, flags);
	sim_unlock(eq->fabric->world);
	return ret;
}

static ssize_t eq_readerr(struct fid_eq *fid, struct fi_eq_err_entry *buf,
			  uint64_t flags)
{
	struct sim_eq *eq = container_of(fid, struct sim_eq, eq_fid);
	struct sim_eq_event *ev;
	void *user_data;
	size_t user_size;

	if (!buf)
		return -FI_EINVAL;
	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	sim_lock(eq->fabric->world);
	ev = eq->head;
	if (!ev || !ev->is_error) {
		sim_unlock(eq->fabric->world);
		return -FI_EAGAIN;
	}
	if (!(flags & FI_PEEK)) {
		pop(eq);
		free(eq->err_reported);
		eq->err_reported = ev; /* err_data lives until the next read */
	}
	sim_unlock(eq->fabric->world);
	user_data = buf->err_data;
	user_size = buf->err_data_size;
	*buf = ev->err;
	if (user_data && user_size && ev->len) {
		size_t n = user_size < ev->len ? user_size : ev->len;

		memcpy(user_data, ev->buf, n);
		buf->err_data = user_data;
		buf->err_data_size = n;
	}
	return sizeof(*buf);
}

static ssize_t eq_write(struct fid_eq *fid, uint32_t event, const void *buf,
			size_t len, uint64_t flags)
{
	struct sim_eq *eq = container_of(fid, struct sim_eq, eq_fid);
	int ret;

	if (!(eq->attr.flags & FI_WRITE))
		return -FI_EINVAL; /* fi_eq(3): needs FI_WRITE at open */
	if (flags)
		return -FI_EBADFLAGS;
	if (len && !buf)
		return -FI_EINVAL;
	sim_lock(eq->fabric->world);
	ret = sim_eq_push(eq, event, buf, len, NULL);
	sim_unlock(eq->fabric->world);
	return ret ? ret : (ssize_t)len;
}

static const char *eq_strerror(struct fid_eq *fid, int prov_errno,
			       const void *err_data, char *buf, size_t len)
{
	const char *text = prov_errno ? sim_cm_reason_str(prov_errno)
				      : "no provider detail";

	if (buf && len) {
		snprintf(buf, len, "%s", text);
		return buf;
	}
	return text;
}

static int eq_control(struct fid *fid, int command, void *arg)
{
	struct sim_eq *eq = container_of(fid, struct sim_eq, eq_fid.fid);

	return sim_waitfd_control(eq->wait_fd, eq->attr.wait_obj, command, arg);
}

static int eq_close(struct fid *fid)
{
	struct sim_eq *eq = container_of(fid, struct sim_eq, eq_fid.fid);
	struct sim_world *world = eq->fabric->world;

	sim_lock(world);
	if (eq->refs) {
		sim_unlock(world);
		FI_WARN(&sim_prov, FI_LOG_EQ, "fi_close(eq): %d object(s) still "
			"bound\n", eq->refs);
		return -FI_EBUSY;
	}
	eq->fabric->children--;
	while (eq->head) {
		struct sim_eq_event *ev = pop(eq);

		fi_freeinfo(ev->info);
		free(ev);
	}
	sim_unlock(world);
	free(eq->err_reported);
	sim_waitfd_close(eq->wait_fd);
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

int sim_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **out, void *context)
{
	struct sim_fabric *fab = container_of(fabric, struct sim_fabric, fabric_fid);
	struct sim_eq *eq;

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
	eq->fabric = fab;
	eq->attr = *attr;
	if (sim_waitfd_open(attr->wait_obj, &eq->wait_fd)) {
		free(eq);
		return -FI_ENOMEM;
	}
	eq->eq_fid.fid.fclass = FI_CLASS_EQ;
	eq->eq_fid.fid.context = context;
	eq->eq_fid.fid.ops = &eq_fi_ops;
	eq->eq_fid.ops = &eq_ops;
	sim_lock(fab->world);
	fab->children++;
	sim_unlock(fab->world);
	*out = &eq->eq_fid;
	return 0;
}
