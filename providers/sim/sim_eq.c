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

static void drain_fd(struct sim_eq *eq)
{
	if (fabsim_eventq_empty(&eq->q))
		sim_wait_drain(eq->wait_set, eq->wait_fd);
}

static int pushed(struct sim_eq *eq, int ret)
{
	if (!ret) {
		sim_progress_ready(eq->fabric->world, eq->wait_fd);
	}
	return ret;
}

void sim_eq_forget(struct sim_eq *eq, fid_t fid)
{
	if (fabsim_eventq_drop_fid(&eq->q, fid))
		drain_fd(eq);
}

int sim_eq_push(struct sim_eq *eq, uint32_t event, const void *buf,
		size_t len)
{
	return pushed(eq, fabsim_eventq_push(&eq->q, event, buf, len));
}

int sim_eq_push_error(struct sim_eq *eq, fid_t fid, void *context, int err,
		      int prov_errno, uint64_t data, const void *err_data,
		      size_t err_data_len)
{
	struct fi_eq_err_entry e = {
		.fid = fid,
		.context = context,
		.data = data,
		.err = err,
		.prov_errno = prov_errno,
	};

	return pushed(eq, fabsim_eventq_push_error(&eq->q, &e, err_data,
						   err_data_len));
}

static ssize_t take(struct sim_eq *eq, uint32_t *event, void *buf, size_t len,
		    uint64_t flags)
{
	ssize_t ret = fabsim_eventq_read(&eq->q, event, buf, len, flags);

	drain_fd(eq);
	return ret;
}

static ssize_t eq_read(struct fid_eq *fid, uint32_t *event, void *buf,
		       size_t len, uint64_t flags)
{
	struct sim_eq *eq = container_of(fid, struct sim_eq, eq_fid);
	ssize_t ret;

	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	sim_lock(eq->fabric->world);
	if (fabsim_eventq_empty(&eq->q))
		sim_progress_poll(eq->fabric->world);
	ret = take(eq, event, buf, len, flags);
	sim_unlock(eq->fabric->world);
	return ret;
}

static bool eq_ready(void *ctx)
{
	return !fabsim_eventq_empty(&((struct sim_eq *)ctx)->q);
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
	ssize_t ret;

	if (!buf)
		return -FI_EINVAL;
	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	sim_lock(eq->fabric->world);
	ret = fabsim_eventq_readerr(&eq->q, buf, flags,
				    eq->fabric->fabric_fid.api_version);
	drain_fd(eq);
	sim_unlock(eq->fabric->world);
	return ret;
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
	ret = sim_eq_push(eq, event, buf, len);
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
	fabsim_eventq_fini(&eq->q);
	sim_wait_leave(&eq->wait_set, &eq->eq_fid.fid, &eq->wait_fd);
	sim_waitfd_forget(world, eq->wait_fd);
	sim_unlock(world);
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
	int ret;

	if (!attr || !out)
		return -FI_EINVAL;
	if (attr->flags & ~FI_WRITE)
		return -FI_EBADFLAGS;
	switch (attr->wait_obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
	case FI_WAIT_SET:
	case FI_WAIT_YIELD:
		break;
	default:
		return -FI_ENOSYS;
	}
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	eq->fabric = fab;
	eq->attr = *attr;
	fabsim_eventq_init(&eq->q);
	ret = sim_waitfd_open(fab->world, attr->wait_obj, &eq->wait_fd);
	if (ret) {
		free(eq);
		return ret;
	}
	eq->eq_fid.fid.fclass = FI_CLASS_EQ;
	eq->eq_fid.fid.context = context;
	eq->eq_fid.fid.ops = &eq_fi_ops;
	eq->eq_fid.ops = &eq_ops;
	sim_lock(fab->world);
	if (attr->wait_obj == FI_WAIT_SET) {
		ret = sim_wait_join(fab->world, attr->wait_set, &eq->eq_fid.fid,
				    &eq->wait_set, &eq->wait_fd);
		if (ret) {
			sim_unlock(fab->world);
			fabsim_eventq_fini(&eq->q);
			free(eq);
			return ret;
		}
	}
	fab->children++;
	sim_unlock(fab->world);
	*out = &eq->eq_fid;
	return 0;
}
