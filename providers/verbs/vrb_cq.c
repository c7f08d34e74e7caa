/* SPDX-License-Identifier: BSD-2-Clause
 * fid_cq over an ibv_cq (fi_cq(3)), in every format.
 *
 * Work completions are polled in batches into a backlog and handed out in
 * order; an error completion stops reading (-FI_EAVAIL) until
 * fi_cq_readerr takes it. Each completion names the provider's record of
 * its request (vrb_post.c), which the CQ owns: an endpoint may close with
 * requests in flight, and their completions are then dropped here. Blocking
 * reads wait on a completion channel. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <fabsim/fi_stubs.h>
#include <fabsim/util.h>

#include "verbs.h"

enum { OPS_PER_CHUNK = 64 };

/* ---- Operation records ----------------------------------------------------------- */

struct vrb_op *vrb_cq_op_get(struct vrb_cq *cq)
{
	struct vrb_op *op;

	pthread_mutex_lock(&cq->lock);
	if (!cq->free_ops) {
		void **chunks = realloc(cq->chunks, (cq->chunk_count + 1) *
						    sizeof(*chunks));
		struct vrb_op *fresh = calloc(OPS_PER_CHUNK, sizeof(*fresh));

		if (chunks)
			cq->chunks = chunks;
		if (!chunks || !fresh) {
			free(fresh);
			pthread_mutex_unlock(&cq->lock);
			return NULL;
		}
		cq->chunks[cq->chunk_count++] = fresh;
		for (int i = 0; i < OPS_PER_CHUNK; i++) {
			fresh[i].next_free = cq->free_ops;
			cq->free_ops = &fresh[i];
		}
	}
	op = cq->free_ops;
	cq->free_ops = op->next_free;
	pthread_mutex_unlock(&cq->lock);
	memset(op, 0, sizeof(*op));
	return op;
}

static void op_put_locked(struct vrb_cq *cq, struct vrb_op *op)
{
	op->next_free = cq->free_ops;
	cq->free_ops = op;
}

void vrb_cq_op_put(struct vrb_cq *cq, struct vrb_op *op)
{
	pthread_mutex_lock(&cq->lock);
	op_put_locked(cq, op);
	pthread_mutex_unlock(&cq->lock);
}

/* ---- Endpoints ------------------------------------------------------------------------ */

int vrb_cq_attach(struct vrb_cq *cq, struct vrb_ep *ep)
{
	int ret = 0;

	pthread_mutex_lock(&cq->lock);
	if (cq->ep_count == cq->ep_cap) {
		size_t cap = cq->ep_cap ? cq->ep_cap * 2 : 8;
		struct vrb_ep **eps = realloc(cq->eps, cap * sizeof(*eps));

		if (eps) {
			cq->eps = eps;
			cq->ep_cap = cap;
		} else {
			ret = -FI_ENOMEM;
		}
	}
	if (!ret)
		cq->eps[cq->ep_count++] = ep;
	pthread_mutex_unlock(&cq->lock);
	return ret;
}

void vrb_cq_detach(struct vrb_cq *cq, struct vrb_ep *ep)
{
	pthread_mutex_lock(&cq->lock);
	for (size_t i = 0; i < cq->ep_count; i++) {
		if (cq->eps[i] == ep) {
			cq->eps[i] = cq->eps[--cq->ep_count];
			break;
		}
	}
	pthread_mutex_unlock(&cq->lock);
}

static struct vrb_ep *ep_of(struct vrb_cq *cq, uint32_t qp_num)
{
	for (size_t i = 0; i < cq->ep_count; i++)
		if (cq->eps[i]->qp_num == qp_num)
			return cq->eps[i];
	return NULL;
}

/* ---- Taking completions from the device ----------------------------------------------- */

/* Consumes the completion events the channel has (a CQ is re-armed only
 * when it runs dry, so they are few). */
static void drain_events(struct vrb_cq *cq)
{
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (!cq->channel)
		return;
	while (!vrb_lib.get_cq_event(cq->channel, &ev_cq, &ev_ctx))
		cq->events++;
	if (cq->events) {
		vrb_lib.ack_cq_events(cq->cq, cq->events);
		cq->events = 0;
	}
}

static int refill(struct vrb_cq *cq)
{
	int n;

	if (cq->count)
		return (int)cq->count;
	n = ibv_poll_cq(cq->cq, VRB_CQ_BATCH, cq->backlog);
	if (n < 0) {
		FI_WARN(&vrb_prov, FI_LOG_CQ, "ibv_poll_cq failed (%d)\n", n);
		return n;
	}
	cq->head = 0;
	cq->count = (size_t)n;
	return n;
}

static void pop(struct vrb_cq *cq)
{
	cq->head++;
	cq->count--;
}

/* Retires the head completion's request: credits back to its endpoint,
 * its record back to the pool. Returns the endpoint (NULL: it is closed
 * and the completion is dropped) and copies out what the record said;
 * *known says whether there was one (an unsignaled request has its
 * context kept by position, when it had one). */
static struct vrb_ep *retire(struct vrb_cq *cq, const struct ibv_wc *wc,
			     struct vrb_op_info *info, bool *silent,
			     bool *known)
{
	struct vrb_ep *ep = ep_of(cq, wc->qp_num);
	struct vrb_op *op = vrb_wr_id_is_record(wc->wr_id) ?
				    (struct vrb_op *)(uintptr_t)wc->wr_id : NULL;

	void **ring = ep ? __atomic_load_n(&ep->unsignaled_ctx,
					   __ATOMIC_ACQUIRE) : NULL;

	*silent = false;
	*known = op != NULL;
	if (!op && wc->wr_id && ring) {
		memset(info, 0, sizeof(*info));
		info->kind = (uint8_t)vrb_wr_id_kind(wc->wr_id);
		info->context = ring[vrb_wr_id_sq_pos(wc->wr_id) % ep->tx_size];
		*known = true;
	}
	if (!op)
		return ep;
	*info = op->info;
	*silent = op->silent;
	if (ep) {
		if (op->info.kind == VRB_OP_RECV)
			vrb_ep_rx_done(ep);
		else
			vrb_ep_tx_done(ep, op->sq_pos);
	}
	op_put_locked(cq, op);
	return ep;
}

static ssize_t cq_readfrom(struct fid_cq *fid, void *buf, size_t count,
			   fi_addr_t *src_addr)
{
	struct vrb_cq *cq = container_of(fid, struct vrb_cq, cq_fid);
	size_t esize = fabsim_cq_entry_size(cq->attr.format), n = 0;
	ssize_t ret;

	if (count && !buf)
		return -FI_EINVAL;
	pthread_mutex_lock(&cq->lock);
	drain_events(cq);
	while (n < count) {
		const struct ibv_wc *wc;
		struct vrb_op_info info;
		struct vrb_cqe e;
		bool silent, known;

		if (refill(cq) <= 0)
			break;
		wc = &cq->backlog[cq->head];
		if (wc->status != IBV_WC_SUCCESS) {
			/* A closed endpoint's failures are nobody's. */
			if (ep_of(cq, wc->qp_num))
				break;
			retire(cq, wc, &info, &silent, &known);
			pop(cq);
			continue;
		}
		if (!retire(cq, wc, &info, &silent, &known) || silent) {
			pop(cq);
			continue;
		}
		vrb_wc_to_cqe(wc, known ? &info : NULL, &e);
		vrb_cqe_write(cq->attr.format, &e, (char *)buf + n * esize);
		if (src_addr)
			src_addr[n] = FI_ADDR_NOTAVAIL;
		pop(cq);
		n++;
	}
	if (n)
		ret = (ssize_t)n;
	else if (cq->count)
		ret = -FI_EAVAIL;
	else
		ret = -FI_EAGAIN;
	pthread_mutex_unlock(&cq->lock);
	return ret;
}

static ssize_t cq_read(struct fid_cq *fid, void *buf, size_t count)
{
	return cq_readfrom(fid, buf, count, NULL);
}

static ssize_t cq_readerr(struct fid_cq *fid, struct fi_cq_err_entry *buf,
			  uint64_t flags)
{
	struct vrb_cq *cq = container_of(fid, struct vrb_cq, cq_fid);
	struct fi_cq_err_entry entry;
	ssize_t ret = -FI_EAGAIN;

	if (!buf)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&cq->lock);
	drain_events(cq);
	while (refill(cq) > 0) {
		const struct ibv_wc *wc = &cq->backlog[cq->head];
		struct vrb_op_info info;
		bool silent, known;

		if (wc->status == IBV_WC_SUCCESS)
			break;
		if (!retire(cq, wc, &info, &silent, &known)) {
			pop(cq);
			continue;
		}
		vrb_wc_to_err(wc, known ? &info : NULL, &entry);
		pop(cq);
		ret = 1;
		break;
	}
	pthread_mutex_unlock(&cq->lock);
	if (ret == 1) {
		/* No error data: the verbs status is prov_errno. */
		*buf = entry;
	}
	return ret;
}

/* ---- Waiting ------------------------------------------------------------------------------ */

static int arm(struct vrb_cq *cq)
{
	int ret;

	pthread_mutex_lock(&cq->lock);
	ret = ibv_req_notify_cq(cq->cq, 0);
	pthread_mutex_unlock(&cq->lock);
	return ret ? -FI_EIO : 0;
}

int vrb_cq_trywait(struct vrb_cq *cq)
{
	int ret;

	if (!cq->channel)
		return -FI_EINVAL;
	ret = arm(cq);
	if (ret)
		return ret;
	pthread_mutex_lock(&cq->lock);
	drain_events(cq);
	ret = refill(cq) > 0 ? -FI_EAGAIN : 0;
	pthread_mutex_unlock(&cq->lock);
	return ret;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static ssize_t cq_sreadfrom(struct fid_cq *fid, void *buf, size_t count,
			    fi_addr_t *src_addr, const void *cond, int timeout)
{
	struct vrb_cq *cq = container_of(fid, struct vrb_cq, cq_fid);
	int64_t deadline = timeout < 0 ? -1 : now_ms() + timeout;

	if (!cq->channel)
		return -FI_EINVAL; /* fi_cq(3): no wait object, no sread */
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = cq->channel->fd, .events = POLLIN },
			{ .fd = cq->signal_fd, .events = POLLIN },
		};
		ssize_t ret = cq_readfrom(fid, buf, count, src_addr);
		uint64_t v;
		int wait_ms;

		if (ret != -FI_EAGAIN)
			return ret;
		ret = arm(cq);
		if (!ret)
			ret = cq_readfrom(fid, buf, count, src_addr);
		if (ret != -FI_EAGAIN)
			return ret;
		wait_ms = deadline < 0 ? -1 : (int)(deadline - now_ms());
		if (deadline >= 0 && wait_ms <= 0)
			return -FI_EAGAIN;
		if (poll(p, 2, wait_ms) == 0)
			return -FI_EAGAIN;
		if ((p[1].revents & POLLIN) &&
		    read(cq->signal_fd, &v, sizeof(v)) == sizeof(v))
			return -FI_EAGAIN; /* fi_cq_signal */
	}
}

static ssize_t cq_sread(struct fid_cq *fid, void *buf, size_t count,
			const void *cond, int timeout)
{
	return cq_sreadfrom(fid, buf, count, NULL, cond, timeout);
}

static int cq_signal(struct fid_cq *fid)
{
	struct vrb_cq *cq = container_of(fid, struct vrb_cq, cq_fid);
	uint64_t one = 1;

	if (cq->signal_fd < 0)
		return -FI_ENOSYS; /* no wait object: nobody can be blocked */
	return write(cq->signal_fd, &one, sizeof(one)) == sizeof(one) ?
		       0 : -FI_EIO;
}

static const char *cq_strerror(struct fid_cq *fid, int prov_errno,
			       const void *err_data, char *buf, size_t len)
{
	const char *text = vrb_status_str(prov_errno);

	if (buf && len) {
		snprintf(buf, len, "%s", text);
		return buf;
	}
	return text;
}

/* ---- Object ------------------------------------------------------------------------------- */

static int cq_control(struct fid *fid, int command, void *arg)
{
	struct vrb_cq *cq = container_of(fid, struct vrb_cq, cq_fid.fid);

	switch (command) {
	case FI_GETWAIT:
		if (!cq->channel || !arg)
			return -FI_ENODATA;
		*(int *)arg = cq->channel->fd;
		return 0;
	case FI_GETWAITOBJ:
		if (!arg)
			return -FI_EINVAL;
		*(enum fi_wait_obj *)arg = cq->channel ? FI_WAIT_FD :
							 FI_WAIT_NONE;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

static int cq_close(struct fid *fid)
{
	struct vrb_cq *cq = container_of(fid, struct vrb_cq, cq_fid.fid);
	struct vrb_domain *dom = cq->domain;
	int ret;

	pthread_mutex_lock(&cq->lock);
	if (cq->refs) {
		pthread_mutex_unlock(&cq->lock);
		FI_WARN(&vrb_prov, FI_LOG_CQ, "fi_close(cq): %d endpoint(s) "
			"still bound\n", cq->refs);
		return -FI_EBUSY;
	}
	drain_events(cq);
	pthread_mutex_unlock(&cq->lock);
	ret = vrb_lib.destroy_cq(cq->cq);
	if (ret) {
		FI_WARN(&vrb_prov, FI_LOG_CQ, "ibv_destroy_cq: %s\n",
			strerror(ret));
		return -FI_EBUSY;
	}
	if (cq->channel)
		vrb_lib.destroy_comp_channel(cq->channel);
	if (cq->signal_fd >= 0)
		close(cq->signal_fd);
	for (size_t i = 0; i < cq->chunk_count; i++)
		free(cq->chunks[i]);
	free(cq->chunks);
	free(cq->eps);
	pthread_mutex_destroy(&cq->lock);
	pthread_mutex_lock(&dom->lock);
	dom->refs--;
	pthread_mutex_unlock(&dom->lock);
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


int vrb_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **out, void *context)
{
	struct vrb_domain *dom =
		container_of(domain, struct vrb_domain, domain_fid);
	struct vrb_cq *cq;
	int size, ret;

	if (!attr || !out)
		return -FI_EINVAL;
	ret = fabsim_cq_check_attr(&vrb_prov, attr, 0);
	if (ret)
		return ret;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	cq->domain = dom;
	cq->attr = *attr;
	cq->signal_fd = -1;
	size = attr->size ? (int)attr->size : VRB_DEF_CQ_SIZE;
	if (attr->wait_obj != FI_WAIT_NONE) {
		cq->signal_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (cq->signal_fd < 0) {
			ret = -FI_ENOMEM;
			goto fail;
		}
		cq->channel = vrb_lib.create_comp_channel(dom->ctx);
		if (!cq->channel ||
		    fcntl(cq->channel->fd, F_SETFL,
			  fcntl(cq->channel->fd, F_GETFL) | O_NONBLOCK)) {
			FI_WARN(&vrb_prov, FI_LOG_CQ, "fi_cq_open: no completion "
				"channel: %s\n", strerror(errno));
			ret = -FI_ENOMEM;
			goto fail;
		}
	}
	cq->cq = vrb_lib.create_cq(dom->ctx, size, cq, cq->channel, 0);
	if (!cq->cq) {
		FI_WARN(&vrb_prov, FI_LOG_CQ, "fi_cq_open: ibv_create_cq(%d "
			"entries): %s\n", size, strerror(errno));
		ret = errno == EINVAL ? -FI_EINVAL : -FI_ENOMEM;
		goto fail;
	}
	pthread_mutex_init(&cq->lock, NULL);
	cq->cq_fid.fid.fclass = FI_CLASS_CQ;
	cq->cq_fid.fid.context = context;
	cq->cq_fid.fid.ops = &cq_fi_ops;
	cq->cq_fid.ops = &cq_ops;
	pthread_mutex_lock(&dom->lock);
	dom->refs++;
	pthread_mutex_unlock(&dom->lock);
	*out = &cq->cq_fid;
	return 0;
fail:
	if (cq->channel)
		vrb_lib.destroy_comp_channel(cq->channel);
	if (cq->signal_fd >= 0)
		close(cq->signal_fd);
	free(cq);
	return ret;
}
