/* SPDX-License-Identifier: BSD-2-Clause
 * Wait sets (fi_poll(3)): CQs, counters and EQs opened with FI_WAIT_SET
 * share the set's wait object; fi_wait blocks until one of them has
 * something to read (timeouts in virtual time, as every wait of sim's).
 * With FI_WAIT_FD the members signal the set's one descriptor, which
 * fi_trywait on the set prepares, as it does a member's own (sim_fabric.c).
 */
#include <stdlib.h>

#include <fabsim/fi_stubs.h>

#include "sim.h"

static bool set_ready(void *ctx)
{
	return sim_fid_has_events(&((struct sim_wait *)ctx)->wait_fid.fid);
}

static int wait_wait(struct fid_wait *fid, int timeout)
{
	struct sim_wait *ws = container_of(fid, struct sim_wait, wait_fid);
	struct sim_world *world = ws->fabric->world;
	int ret;

	sim_lock(world);
	ret = sim_progress_wait(world, set_ready, ws, timeout);
	sim_unlock(world);
	return ret ? -FI_ETIMEDOUT : 0;
}

static int wait_control(struct fid *fid, int command, void *arg)
{
	struct sim_wait *ws = container_of(fid, struct sim_wait, wait_fid.fid);

	return sim_waitfd_control(ws->wait_fd, ws->wait_obj, command, arg);
}

static int wait_close(struct fid *fid)
{
	struct sim_wait *ws = container_of(fid, struct sim_wait, wait_fid.fid);
	struct sim_world *world = ws->fabric->world;

	sim_lock(world);
	if (ws->count) {
		sim_unlock(world);
		FI_WARN(&sim_prov, FI_LOG_FABRIC, "fi_close(wait set): %zu "
			"CQ(s), counter(s) or EQ(s) still use it\n", ws->count);
		return -FI_EBUSY;
	}
	ws->fabric->children--;
	sim_waitfd_forget(world, ws->wait_fd);
	sim_unlock(world);
	sim_waitfd_close(ws->wait_fd);
	free(ws->members);
	free(ws);
	return 0;
}

static struct fi_ops wait_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = wait_close,
	.bind = fabsim_no_bind,
	.control = wait_control,
	.ops_open = fabsim_no_ops_open,
	.tostr = fabsim_no_tostr,
	.ops_set = fabsim_no_ops_set,
};

static struct fi_ops_wait wait_ops = {
	.size = sizeof(struct fi_ops_wait),
	.wait = wait_wait,
};

int sim_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
		  struct fid_wait **out)
{
	struct sim_fabric *fab = container_of(fabric, struct sim_fabric,
					      fabric_fid);
	struct sim_wait *ws;
	int ret;

	if (!attr || !out)
		return -FI_EINVAL;
	if (attr->flags)
		return -FI_EBADFLAGS;
	if (attr->wait_obj != FI_WAIT_UNSPEC && attr->wait_obj != FI_WAIT_FD) {
		FI_WARN(&sim_prov, FI_LOG_FABRIC, "fi_wait_open: wait object "
			"%d not supported (FI_WAIT_UNSPEC or FD)\n",
			(int)attr->wait_obj);
		return -FI_ENOSYS;
	}
	ws = calloc(1, sizeof(*ws));
	if (!ws)
		return -FI_ENOMEM;
	ws->fabric = fab;
	ws->wait_obj = attr->wait_obj;
	ret = sim_waitfd_open(fab->world, attr->wait_obj, &ws->wait_fd);
	if (ret) {
		free(ws);
		return ret;
	}
	ws->wait_fid.fid.fclass = FI_CLASS_WAIT;
	ws->wait_fid.fid.ops = &wait_fi_ops;
	ws->wait_fid.ops = &wait_ops;
	sim_lock(fab->world);
	fab->children++;
	sim_unlock(fab->world);
	*out = &ws->wait_fid;
	return 0;
}

int sim_wait_join(struct sim_world *world, struct fid_wait *set,
		  struct fid *member, struct fid_wait **joined, int *fd)
{
	struct sim_wait *ws;

	if (!set || set->fid.fclass != FI_CLASS_WAIT) {
		FI_WARN(&sim_prov, FI_LOG_FABRIC, "FI_WAIT_SET without a wait "
			"set (wait_set)\n");
		return -FI_EINVAL;
	}
	ws = container_of(set, struct sim_wait, wait_fid);
	if (ws->fabric->world != world) {
		FI_WARN(&sim_prov, FI_LOG_FABRIC, "the wait set belongs to "
			"another fabric\n");
		return -FI_EINVAL;
	}
	if (ws->count == ws->cap) {
		size_t cap = ws->cap ? 2 * ws->cap : 4;
		struct fid **more = realloc(ws->members, cap * sizeof(*more));

		if (!more)
			return -FI_ENOMEM;
		ws->members = more;
		ws->cap = cap;
	}
	ws->members[ws->count++] = member;
	*joined = set;
	*fd = ws->wait_fd;
	return 0;
}

void sim_wait_drain(struct fid_wait *set, int fd)
{
	/* The set's descriptor announces every member: a member read empty
	 * leaves it readable while another still has something. */
	if (set && sim_fid_has_events(&set->fid))
		return;
	sim_waitfd_drain(fd);
}

void sim_wait_leave(struct fid_wait **set, struct fid *member, int *fd)
{
	struct sim_wait *ws;

	if (!*set)
		return;
	ws = container_of(*set, struct sim_wait, wait_fid);
	for (size_t i = 0; i < ws->count; i++)
		if (ws->members[i] == member) {
			ws->members[i] = ws->members[--ws->count];
			break;
		}
	*set = NULL;
	*fd = -1;
}
