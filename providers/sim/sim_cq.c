/* SPDX-License-Identifier: BSD-2-Clause
 * fid_cq: completion queues (fi_cq(3)) in every format.
 *
 * attr.size is a minimum (fi_cq(3)). With resource management on, an
 * operation reserves its entry when it is posted (sim_cq_reserve), and a
 * queue whose entries and reservations would exceed its size grows: a
 * post failing with -FI_EAGAIN for want of room for completions that have
 * not happened yet deadlocks programs that post receives their own later
 * sends will answer (Open MPI opens its CQ with 100 entries). Unsolicited
 * entries (remote CQ data) grow it too, up to SIM_CQ_GROWTH times its
 * size; past that the queue is overrun, reported as an FI_EOVERRUN error
 * entry. Reading an empty queue lets simulated time move by one instant;
 * sread waits in simulated time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fabsim/fi_stubs.h>
#include <fabsim/util.h>

#include "sim.h"

static void format_entry(const struct sim_cq *cq, const struct sim_cqe *e,
			 void *out)
{
	struct fi_cq_tagged_entry full = {
		.op_context = e->op_context,
		.flags = e->flags,
		.len = e->len,
		.buf = e->buf,
		.data = e->data,
		.tag = e->tag,
	};

	fabsim_cq_entry_write(cq->attr.format, &full, out);
}

/* ---- Wait object ------------------------------------------------------------------- */

static void wait_signal(struct sim_cq *cq)
{
	sim_progress_ready(cq->domain->world, cq->wait_fd);
}

static void wait_drain(struct sim_cq *cq)
{
	if (!cq->count && !cq->errs)
		sim_wait_drain(cq->wait_set, cq->wait_fd);
}

/* ---- Filling (called by endpoints, lock held) ---------------------------------------- */

/* How far unsolicited entries may grow a queue, in times its size. */
#define SIM_CQ_GROWTH 64

/* Doubles the ring, its entries in order from its start; false when out
 * of memory. */
static bool grow(struct sim_cq *cq)
{
	struct sim_cqe *ring = calloc(2 * cq->size, sizeof(*ring));

	if (!ring)
		return false;
	for (size_t i = 0; i < cq->count; i++)
		ring[i] = cq->ring[(cq->head + i) % cq->size];
	free(cq->ring);
	cq->ring = ring;
	cq->head = 0;
	cq->size *= 2;
	return true;
}

int sim_cq_reserve(struct sim_cq *cq)
{
	if (cq->count + cq->reserved >= cq->size && !grow(cq))
		return -FI_EAGAIN;
	cq->reserved++;
	return 0;
}

void sim_cq_unreserve(struct sim_cq *cq)
{
	cq->reserved--;
}

static void push_err_entry(struct sim_cq *cq, struct sim_cq_err *err)
{
	err->after = cq->pushed;
	err->next = NULL;
	if (cq->errs_tail)
		cq->errs_tail->next = err;
	else /* read without the lock by cq_readfrom */
		__atomic_store_n(&cq->errs, err, __ATOMIC_RELAXED);
	cq->errs_tail = err;
	wait_signal(cq);
}

void sim_cq_push_error(struct sim_cq *cq, const struct sim_cqe *e, int err,
		       int prov_errno, size_t olen, bool reserved,
		       const struct sockaddr_in *src_addr)
{
	struct sim_cq_err *entry = calloc(1, sizeof(*entry));

	if (reserved)
		cq->reserved--;
	if (!entry)
		abort(); /* an error must not be lost */
	entry->entry.op_context = e->op_context;
	entry->entry.flags = e->flags;
	entry->entry.len = e->len;
	entry->entry.buf = e->buf;
	entry->entry.data = e->data;
	entry->entry.tag = e->tag;
	entry->entry.olen = olen;
	entry->entry.err = err;
	entry->entry.prov_errno = prov_errno;
	if (src_addr) {
		entry->src_addr = *src_addr;
		entry->entry.err_data = &entry->src_addr;
		entry->entry.err_data_size = sizeof(entry->src_addr);
	}
	push_err_entry(cq, entry);
}

void sim_cq_push(struct sim_cq *cq, const struct sim_cqe *e, bool reserved)
{
	if (reserved) {
		cq->reserved--;
	} else if (cq->count + cq->reserved >= cq->size &&
		   (cq->size >= SIM_CQ_GROWTH * cq->attr.size || !grow(cq))) {
		/* Unsolicited and no room: the queue is overrun. */
		FI_WARN_SPARSE(&sim_prov, FI_LOG_CQ,
			       "CQ of %zu entries overrun: a completion is "
			       "lost\n", cq->size);
		sim_cq_push_error(cq, e, FI_EOVERRUN, 0, 0, false, NULL);
		return;
	}
	cq->ring[(cq->head + cq->count) % cq->size] = *e;
	cq->pushed++;
	/* Read without the lock by cq_readfrom. */
	__atomic_store_n(&cq->count, cq->count + 1, __ATOMIC_RELAXED);
	if (cq->count == 1)
		wait_signal(cq);
}

/* ---- Reading -------------------------------------------------------------------------- */

/* Successes to read before the first error entry (all of them if none). */
static size_t ahead_of_error(const struct sim_cq *cq)
{
	uint64_t ahead;

	if (!cq->errs)
		return cq->count;
	ahead = cq->errs->after - cq->taken;
	return ahead < cq->count ? (size_t)ahead : cq->count;
}

/* What a read finds: -FI_EAVAIL when the topmost entry is an error,
 * -FI_EAGAIN when there is nothing, else how many successes it may take. */
static ssize_t readable(const struct sim_cq *cq)
{
	size_t ahead = ahead_of_error(cq);

	if (ahead)
		return (ssize_t)ahead;
	return cq->errs ? -FI_EAVAIL : -FI_EAGAIN;
}

static ssize_t take(struct sim_cq *cq, void *buf, size_t count,
		    fi_addr_t *src_addr)
{
	size_t ahead = ahead_of_error(cq);
	size_t n = count < ahead ? count : ahead;
	size_t esize = fabsim_cq_entry_size(cq->attr.format);

	for (size_t i = 0; i < n; i++) {
		const struct sim_cqe *e = &cq->ring[cq->head];

		format_entry(cq, e, (char *)buf + i * esize);
		if (src_addr)
			src_addr[i] = e->src;
		cq->head = (cq->head + 1) % cq->size;
	}
	__atomic_store_n(&cq->count, cq->count - n, __ATOMIC_RELAXED);
	cq->taken += n;
	wait_drain(cq);
	return (ssize_t)n;
}

static ssize_t cq_readfrom(struct fid_cq *fid, void *buf, size_t count,
			   fi_addr_t *src_addr)
{
	struct sim_cq *cq = container_of(fid, struct sim_cq, cq_fid);
	struct sim_world *world = cq->domain->world;
	ssize_t ret;

	if (count && !buf)
		return -FI_EINVAL;
	/* Entries already here are read at once; an empty queue is a poll. */
	if (__atomic_load_n(&cq->count, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&cq->errs, __ATOMIC_RELAXED))
		sim_lock(world);
	else if (!sim_poll_lock(world))
		return -FI_EAGAIN;
	if (!cq->count && !cq->errs)
		sim_progress_poll(world);
	ret = readable(cq);
	if (ret > 0)
		ret = take(cq, buf, count, src_addr);
	sim_unlock(world);
	if (ret == -FI_EAGAIN)
		nic_world_give_way(world->nic);
	return ret;
}

static ssize_t cq_read(struct fid_cq *fid, void *buf, size_t count)
{
	return cq_readfrom(fid, buf, count, NULL);
}

static ssize_t cq_readerr(struct fid_cq *fid, struct fi_cq_err_entry *buf,
			  uint64_t flags)
{
	struct sim_cq *cq = container_of(fid, struct sim_cq, cq_fid);
	struct sim_world *world = cq->domain->world;
	struct sim_cq_err *err;
	void *user_data;
	size_t user_size;

	if (!buf)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	sim_lock(world);
	err = cq->errs;
	if (!err) {
		sim_unlock(world);
		return -FI_EAGAIN;
	}
	__atomic_store_n(&cq->errs, err->next, __ATOMIC_RELAXED);
	if (!cq->errs)
		cq->errs_tail = NULL;
	free(cq->err_reported);
	cq->err_reported = err;
	wait_drain(cq);
	sim_unlock(world);

	/* Since API 1.5 a caller may supply its own err_data buffer. */
	user_data = buf->err_data;
	user_size = buf->err_data_size;
	*buf = err->entry;
	if (FI_VERSION_GE(cq->domain->fabric->fabric_fid.api_version,
			  FI_VERSION(1, 5)) && user_size && user_data) {
		size_t n = user_size < err->entry.err_data_size ?
				   user_size : err->entry.err_data_size;

		if (n) /* err_data may be NULL: memcpy must not see it */
			memcpy(user_data, err->entry.err_data, n);
		buf->err_data = user_data;
		buf->err_data_size = n;
	}
	return 1;
}

struct sread_wait {
	struct sim_cq *cq;
	size_t         threshold;
	uint64_t       signals; /* the CQ's that no sread has taken */
};

static bool sread_ready(void *ctx)
{
	struct sread_wait *w = ctx;

	return w->cq->count >= w->threshold || w->cq->errs ||
	       w->cq->signals != w->signals;
}

static ssize_t cq_sreadfrom(struct fid_cq *fid, void *buf, size_t count,
			    fi_addr_t *src_addr, const void *cond, int timeout)
{
	struct sim_cq *cq = container_of(fid, struct sim_cq, cq_fid);
	struct sim_world *world = cq->domain->world;
	struct sread_wait w = { .cq = cq, .threshold = 1 };
	ssize_t ret;

	if (cq->attr.wait_obj == FI_WAIT_NONE)
		return -FI_EINVAL; /* fi_cq(3): no wait object, no sread */
	if (count && !buf)
		return -FI_EINVAL;
	if (cond && cq->attr.wait_cond == FI_CQ_COND_THRESHOLD)
		w.threshold = *(const size_t *)cond;
	if (w.threshold > count)
		w.threshold = count;
	if (!w.threshold)
		w.threshold = 1;
	sim_lock(world);
	/* A signal that came while no thread waited ends the next wait, as
	 * the wait object stays signalled until a wait takes it (fabtests'
	 * cq_test: fi_cq_signal, then fi_cq_sread returns at once). */
	w.signals = cq->signals_taken;
	ret = sim_progress_wait(world, sread_ready, &w, timeout);
	cq->signals_taken = cq->signals;
	if (!ret) {
		/* -FI_EAGAIN: nothing, unblocked by fi_cq_signal. */
		ret = readable(cq);
		if (ret > 0)
			ret = take(cq, buf, count, src_addr);
	}
	sim_unlock(world);
	return ret;
}

static ssize_t cq_sread(struct fid_cq *fid, void *buf, size_t count,
			const void *cond, int timeout)
{
	return cq_sreadfrom(fid, buf, count, NULL, cond, timeout);
}

static int cq_signal(struct fid_cq *fid)
{
	struct sim_cq *cq = container_of(fid, struct sim_cq, cq_fid);

	sim_lock(cq->domain->world);
	cq->signals++;
	wait_signal(cq);
	sim_unlock(cq->domain->world);
	return 0;
}

static const char *cq_strerror(struct fid_cq *fid, int prov_errno,
			       const void *err_data, char *buf, size_t len)
{
	const char *text = prov_errno ? nic_status_str(prov_errno)
				      : "no provider detail";

	if (buf && len) {
		snprintf(buf, len, "%s", text);
		return buf;
	}
	return text;
}

/* ---- Object -------------------------------------------------------------------------------- */

static int cq_control(struct fid *fid, int command, void *arg)
{
	struct sim_cq *cq = container_of(fid, struct sim_cq, cq_fid.fid);

	return sim_waitfd_control(cq->wait_fd, cq->attr.wait_obj, command, arg);
}

static int cq_close(struct fid *fid)
{
	struct sim_cq *cq = container_of(fid, struct sim_cq, cq_fid.fid);
	struct sim_domain *dom = cq->domain;

	sim_lock(dom->world);
	if (cq->refs) {
		sim_unlock(dom->world);
		FI_WARN(&sim_prov, FI_LOG_CQ,
			"fi_close(cq): %d endpoint(s) or poll set(s) still "
			"bound\n", cq->refs);
		return -FI_EBUSY;
	}
	dom->refs--;
	sim_wait_leave(&cq->wait_set, &cq->cq_fid.fid, &cq->wait_fd);
	sim_waitfd_forget(dom->world, cq->wait_fd);
	sim_unlock(dom->world);
	while (cq->errs) {
		struct sim_cq_err *next = cq->errs->next;

		free(cq->errs);
		cq->errs = next;
	}
	free(cq->err_reported);
	sim_waitfd_close(cq->wait_fd);
	free(cq->ring);
	free(cq);
	return 0;
}

static struct fi_ops cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cq_close,
	.bind = fabsim_no_bind,
	.control = cq_control,
	.ops_open = fabsim_no_ops_open,
	.tostr = fabsim_no_tostr,
	.ops_set = fabsim_no_ops_set,
};

static struct fi_ops_cq cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = cq_read,
	.readfrom = cq_readfrom,
	.readerr = cq_readerr,
	.sread = cq_sread,
	.sreadfrom = cq_sreadfrom,
	.signal = cq_signal,
	.strerror = cq_strerror,
};

static int check_attr(struct fi_cq_attr *attr)
{
	/* A wait set is checked when the CQ joins it. FI_WAIT_YIELD waits
	 * with no object, as the others do here: in virtual time (fi_cq(3):
	 * "allows usage of fi_cq_sread and fi_cq_sreadfrom through a spin"). */
	struct fi_cq_attr plain = *attr;
	int ret;

	if (attr->wait_obj == FI_WAIT_SET || attr->wait_obj == FI_WAIT_YIELD)
		plain.wait_obj = FI_WAIT_UNSPEC;
	ret = fabsim_cq_check_attr(&sim_prov, &plain, FI_AFFINITY);
	attr->format = plain.format;

	if (!ret && attr->size > SIM_CQ_MAX_SIZE) {
		FI_WARN(&sim_prov, FI_LOG_CQ, "fi_cq_open: size %zu above the "
			"NIC's %d entries\n", attr->size, SIM_CQ_MAX_SIZE);
		return -FI_EINVAL;
	}
	return ret;
}

int sim_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **out, void *context)
{
	struct sim_domain *dom = container_of(domain, struct sim_domain, domain_fid);
	struct sim_cq *cq;
	int ret;

	if (!attr || !out)
		return -FI_EINVAL;
	ret = check_attr(attr);
	if (ret)
		return ret;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	cq->domain = dom;
	cq->attr = *attr;
	cq->size = attr->size ? attr->size : SIM_CQ_DEFAULT_SIZE;
	cq->attr.size = cq->size; /* what it was opened with, as it grows */
	cq->ring = calloc(cq->size, sizeof(*cq->ring));
	ret = cq->ring ? sim_waitfd_open(dom->world, attr->wait_obj,
					 &cq->wait_fd) :
			 -FI_ENOMEM;
	if (ret) {
		free(cq->ring);
		free(cq);
		return ret;
	}
	cq->cq_fid.fid.fclass = FI_CLASS_CQ;
	cq->cq_fid.fid.context = context;
	cq->cq_fid.fid.ops = &cq_fi_ops;
	cq->cq_fid.ops = &cq_ops;
	sim_lock(dom->world);
	if (attr->wait_obj == FI_WAIT_SET) {
		ret = sim_wait_join(dom->world, attr->wait_set,
				    &cq->cq_fid.fid, &cq->wait_set,
				    &cq->wait_fd);
		if (ret) {
			sim_unlock(dom->world);
			free(cq->ring);
			free(cq);
			return ret;
		}
	}
	dom->refs++;
	sim_unlock(dom->world);
	*out = &cq->cq_fid;
	return 0;
}
