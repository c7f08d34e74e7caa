/* SPDX-License-Identifier: BSD-2-Clause
 * Data transfers: checks an application's request the way a NIC's driver
 * would, hands it to the simulated NIC, and turns the NIC's completions
 * into CQ entries and counter updates (fi_cq(3), fi_cntr(3)).
 *
 * Every failure is either an error return (a malformed call: bad address,
 * too many buffers, a full queue) or an error completion (what the NIC
 * finds: an unregistered buffer under FI_MR_LOCAL, a bad remote key,
 * truncation, retry exhaustion) with err, prov_errno and a message from
 * fi_cq_strerror.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "sim_xfer.h"

/* ---- Operation records ---------------------------------------------------------- */

struct sim_op *sim_op_get(struct sim_ep *ep, bool tx)
{
	struct sim_op **list = tx ? &ep->free_tx : &ep->free_rx;
	struct sim_op *op = *list;

	if (!op)
		return NULL;
	*list = op->next_free;
	op->next_free = NULL;
	op->in_use = true;
	if (tx)
		ep->tx_inflight++;
	else
		ep->rx_inflight++;
	return op;
}

void sim_op_put(struct sim_op *op, bool tx)
{
	struct sim_ep *ep = op->ep;
	struct sim_op **list = tx ? &ep->free_tx : &ep->free_rx;

	op->in_use = false;
	op->next_free = *list;
	*list = op;
	if (tx)
		ep->tx_inflight--;
	else
		ep->rx_inflight--;
}

/* ---- Transmit ------------------------------------------------------------------------ */

static struct sim_cntr *tx_counter(struct sim_ep *ep, uint64_t comp_flags)
{
	if (comp_flags & FI_READ)
		return ep->cntr_read;
	if (comp_flags & FI_WRITE)
		return ep->cntr_write;
	return ep->cntr_send;
}

/* Local buffers must be registered when the domain says FI_MR_LOCAL. Any
 * descriptor given is checked: a wrong one is the application's error. */
static bool fill_sges(struct sim_ep *ep, const struct iovec *iov, void **desc,
		      size_t count, struct nic_sge *sge, bool *local_ok)
{
	bool need = ep->domain->mr_mode & FI_MR_LOCAL;

	*local_ok = true;
	for (size_t i = 0; i < count; i++) {
		void *d = desc ? desc[i] : NULL;
		struct nic_mr *mr = d ? sim_mr_of_desc(ep->domain, d) : NULL;

		sge[i].addr = iov[i].iov_base;
		sge[i].len = iov[i].iov_len;
		sge[i].mr = mr;
		if (!iov[i].iov_len)
			continue;
		if (!iov[i].iov_base)
			return false;
		if ((need || d) &&
		    (!mr || !nic_mr_covers(mr, iov[i].iov_base, iov[i].iov_len)))
			*local_ok = false;
	}
	return true;
}

static bool report_tx(const struct sim_ep *ep, const struct sim_xfer *x)
{
	/* fi_msg(3): the inject calls write no entry on success; FI_INJECT
	 * as a flag only frees the buffer early. */
	if (x->flags & SIM_INJECT_CALL)
		return false;
	return !ep->tx_selective || (x->flags & FI_COMPLETION);
}

/* fi_getinfo(3): FI_SEND, FI_RECV "indicate that the user requires an
 * endpoint capable of" sending, receiving; with neither given, both are. */
static bool can(const struct sim_ep *ep, uint64_t direction)
{
	return (ep->caps & direction) || !(ep->caps & (FI_SEND | FI_RECV));
}

static int check_tx(struct sim_ep *ep, const struct sim_xfer *x)
{
	size_t len = 0;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (x->opcode == NIC_WR_SEND && !can(ep, FI_SEND)) {
		FI_WARN(&sim_prov, FI_LOG_EP_DATA, "a send on an endpoint "
			"opened without FI_SEND\n");
		return -FI_EOPNOTSUPP;
	}
	if (!ep->tx_cq && !ep->cntr_send && !ep->cntr_write && !ep->cntr_read)
		return -FI_ENOCQ;
	if (ep->type == FI_EP_DGRAM && x->opcode != NIC_WR_SEND)
		return -FI_EOPNOTSUPP;
	if (x->iov_count > SIM_IOV_LIMIT || x->rma_count > SIM_RMA_IOV_LIMIT ||
	    (x->iov_count && !x->iov) || (x->rma_count && !x->rma))
		return -FI_EINVAL;
	for (size_t i = 0; i < x->iov_count; i++)
		len += x->iov[i].iov_len;
	if (len > SIM_MAX_MSG_SIZE)
		return -FI_EMSGSIZE;
	/* fi_msg(3): valid transfers go up to the endpoint's max_msg_size,
	 * one MTU for a datagram: refused before anything else about it
	 * (its buffer, sized to that limit, may not cover it either). */
	if (ep->type == FI_EP_DGRAM) {
		uint32_t mtu = nic_world_mtu(ep->domain->world->nic);

		if (len > mtu) {
			FI_WARN(&sim_prov, FI_LOG_EP_DATA, "a datagram of %zu "
				"bytes: max_msg_size is %u (the MTU)\n", len,
				mtu);
			return -FI_EMSGSIZE;
		}
	}
	if ((x->flags & FI_INJECT) && len > SIM_INJECT_SIZE)
		return -FI_EMSGSIZE;
	if (x->opcode == NIC_WR_WRITE || x->opcode == NIC_WR_READ) {
		size_t rlen = 0;

		for (size_t i = 0; i < x->rma_count; i++)
			rlen += x->rma[i].len;
		if (!x->rma_count || rlen != len)
			return -FI_EINVAL;
	}
	return 0;
}

/* False when a compare or result buffer is missing; *local_ok as for
 * fill_sges, over every buffer of the atomic. */
static bool fill_atomic(struct sim_ep *ep, const struct sim_xfer *x,
			struct nic_wr *wr, bool *local_ok)
{
	struct nic_sge scratch[SIM_IOV_LIMIT];
	bool ok;

	if (x->compare_count > SIM_IOV_LIMIT || x->result_count > SIM_IOV_LIMIT)
		return false;
	if (!fill_sges(ep, x->compare_iov, x->compare_desc, x->compare_count,
		       scratch, &ok))
		return false;
	*local_ok &= ok;
	if (!fill_sges(ep, x->result, x->result_desc, x->result_count,
		       wr->atomic.result, &ok))
		return false;
	*local_ok &= ok;
	wr->atomic.datatype = x->datatype;
	wr->atomic.op = x->atomic_op;
	wr->atomic.count = x->count;
	wr->atomic.operand = x->operand;
	wr->atomic.compare = x->compare;
	wr->atomic.result_count = x->result_count;
	return true;
}

/* The NIC reports a local protection error like any other completion. */
static void fail_now(struct sim_ep *ep, struct sim_op *op, enum nic_status st)
{
	struct nic_completion c = {
		.cookie = (uintptr_t)op,
		.status = st,
	};

	sim_ep_nic_ops.send_done(ep, &c);
}

/* fi_msg(3): -FI_EAGAIN asks the application to progress the provider and
 * try again. A thread that retries without reading a CQ waits for the
 * fabric all the same (another thread reads them): the refused post is a
 * poll, which lets time move while every thread only waits like this.
 * When it could not (another thread of the program runs), the retrying
 * thread lets that one have its CPU: they may share one, and a thread that
 * retries at once would spin out its time slice while the other waits. */
static ssize_t try_again(struct sim_world *world)
{
	bool moved = sim_progress_poll(world);

	sim_unlock(world);
	nic_world_give_way(world->nic);
	if (!moved)
		sched_yield();
	return -FI_EAGAIN;
}

ssize_t sim_xfer_post(struct sim_ep *ep, const struct sim_xfer *x)
{
	struct sim_world *world = ep->domain->world;
	struct nic_wr wr = { 0 };
	struct sim_op *op;
	bool local_ok;
	ssize_t ret = check_tx(ep, x);

	if (ret)
		return ret;
	sim_lock(world);
	if (ep->type != FI_EP_MSG && sim_av_peer(ep->av, x->addr, &wr.peer)) {
		sim_unlock(world);
		FI_WARN(&sim_prov, FI_LOG_EP_DATA, "destination fi_addr %llu "
			"is not in the AV\n", (unsigned long long)x->addr);
		return -FI_EINVAL;
	}
	op = sim_op_get(ep, true);
	if (!op)
		return try_again(world);
	op->context = x->context;
	op->flags = x->comp_flags;
	op->report = report_tx(ep, x);
	op->len = 0;
	op->buf = NULL;
	op->reserved = op->report && ep->tx_cq;
	if (op->reserved && sim_cq_reserve(ep->tx_cq)) {
		sim_op_put(op, true);
		return try_again(world);
	}
	wr.wr_id = (uintptr_t)op;
	wr.opcode = x->opcode;
	wr.sge_count = x->iov_count;
	if (!fill_sges(ep, x->iov, x->desc, x->iov_count, wr.sge, &local_ok) ||
	    (x->opcode >= NIC_WR_ATOMIC && !fill_atomic(ep, x, &wr, &local_ok))) {
		if (op->reserved)
			sim_cq_unreserve(ep->tx_cq);
		sim_op_put(op, true);
		sim_unlock(world);
		return -FI_EINVAL;
	}
	if (x->flags & FI_INJECT)
		wr.flags |= NIC_WR_INLINE;
	if (x->flags & FI_REMOTE_CQ_DATA) {
		wr.flags |= NIC_WR_IMM;
		wr.imm = (uint32_t)x->data;
	}
	if (x->comp_flags & FI_TAGGED) {
		wr.flags |= NIC_WR_TAGGED;
		wr.tag = x->tag;
	}
	if (x->flags & FI_FENCE)
		wr.flags |= NIC_WR_FENCE;
	for (size_t i = 0; i < x->rma_count; i++) {
		wr.rma[i].addr = x->rma[i].addr;
		wr.rma[i].len = x->rma[i].len;
		wr.rma[i].key = x->rma[i].key;
	}
	wr.rma_count = x->rma_count;
	if (!local_ok && !(x->flags & FI_INJECT))
		fail_now(ep, op, NIC_LOC_PROT_ERR);
	else if ((ret = nic_post_send(ep->qp, &wr))) {
		if (op->reserved)
			sim_cq_unreserve(ep->tx_cq);
		sim_op_put(op, true);
		ret = sim_errno(ret);
		if (ret == -FI_EAGAIN)
			return try_again(world);
	}
	if (!ret)
		sim_progress_posted(world);
	sim_unlock(world);
	return ret;
}

/* ---- Receive ------------------------------------------------------------------------------ */

static bool report_rx(const struct sim_ep *ep, uint64_t flags)
{
	return !ep->rx_selective || (flags & FI_COMPLETION);
}

ssize_t sim_recv_post(struct sim_ep *ep, const struct sim_recv_req *r)
{
	struct sim_world *world = ep->domain->world;
	struct nic_recv recv = { 0 };
	struct sim_op *op;
	bool local_ok;
	ssize_t ret = 0;

	/* fi_endpoint(3): endpoints "must transition into an enabled state
	 * before accepting data transfer operations, including posting of
	 * receive buffers" (fi_cm(3)'s "anytime" means before connecting). */
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!can(ep, FI_RECV)) {
		FI_WARN(&sim_prov, FI_LOG_EP_DATA, "a receive on an endpoint "
			"opened without FI_RECV\n");
		return -FI_EOPNOTSUPP;
	}
	/* Its completion would have nowhere to go (fi_endpoint(3): an
	 * endpoint must be bound to report its operations' completions). */
	if (!ep->rx_cq && !ep->cntr_recv)
		return -FI_ENOCQ;
	if (r->iov_count > SIM_IOV_LIMIT || (r->iov_count && !r->iov))
		return -FI_EINVAL;
	if ((r->flags & FI_CLAIM) && !r->context)
		return -FI_EINVAL;
	sim_lock(world);
	recv.source = NIC_ANY_SOURCE;
	if ((ep->caps & FI_DIRECTED_RECV) && ep->type != FI_EP_MSG &&
	    r->addr != FI_ADDR_UNSPEC &&
	    sim_av_peer(ep->av, r->addr, &recv.source)) {
		sim_unlock(world);
		return -FI_EINVAL;
	}
	op = sim_op_get(ep, false);
	if (!op)
		return try_again(world);
	op->context = r->context;
	op->flags = FI_RECV | (r->tagged ? FI_TAGGED : FI_MSG);
	op->report = report_rx(ep, r->flags);
	op->multi = r->flags & FI_MULTI_RECV;
	/* PEEK answers always, and errors need room too. */
	op->reserved = ep->rx_cq != NULL;
	if (op->reserved && sim_cq_reserve(ep->rx_cq)) {
		sim_op_put(op, false);
		return try_again(world);
	}
	recv.cookie = (uintptr_t)op;
	recv.tag = r->tag;
	op->tag = r->tag;
	recv.ignore = r->ignore;
	recv.sge_count = r->iov_count;
	if (!fill_sges(ep, r->iov, r->desc, r->iov_count, recv.sge, &local_ok) ||
	    !local_ok) {
		/* A receive into unregistered memory would fault the NIC:
		 * refuse it before anything lands. */
		if (op->reserved)
			sim_cq_unreserve(ep->rx_cq);
		sim_op_put(op, false);
		sim_unlock(world);
		FI_WARN(&sim_prov, FI_LOG_EP_DATA, "receive buffer not covered "
			"by a registered region (FI_MR_LOCAL)\n");
		return -FI_EINVAL;
	}
	if (r->tagged)
		recv.flags |= NIC_RECV_TAGGED;
	if (r->flags & FI_MULTI_RECV) {
		recv.flags |= NIC_RECV_MULTI;
		recv.min_free = ep->min_multi_recv;
	}
	if (r->flags & FI_PEEK)
		recv.flags |= NIC_RECV_PEEK;
	if (r->flags & FI_CLAIM) {
		recv.flags |= NIC_RECV_CLAIM;
		if (!(r->flags & FI_PEEK))
			recv.claim_id = (uint64_t)(uintptr_t)
				((struct fi_context *)r->context)->internal[0];
	}
	if (r->flags & FI_DISCARD)
		recv.flags |= NIC_RECV_DISCARD;
	ret = nic_post_recv(ep->qp, &recv);
	if (ret) {
		if (op->reserved)
			sim_cq_unreserve(ep->rx_cq);
		sim_op_put(op, false);
		ret = ret == -ENOENT ? -FI_ENOMSG : sim_errno(ret);
	} else {
		sim_progress_posted(world);
	}
	sim_unlock(world);
	return ret;
}

/* ---- Completions from the NIC ----------------------------------------------------------- */

static void on_send_done(void *ctx, const struct nic_completion *c)
{
	struct sim_ep *ep = ctx;
	struct sim_op *op = (struct sim_op *)(uintptr_t)c->cookie;
	struct sim_cqe e = {
		.op_context = op->context,
		.flags = op->flags,
		.src = FI_ADDR_NOTAVAIL,
	};
	struct sim_cntr *cntr = tx_counter(ep, op->flags);

	if (c->status == NIC_OK) {
		if (op->report && ep->tx_cq)
			sim_cq_push(ep->tx_cq, &e, op->reserved);
		sim_cntr_inc(cntr);
	} else {
		if (ep->tx_cq)
			sim_cq_push_error(ep->tx_cq, &e,
					  nic_status_errno(c->status),
					  c->status, 0, op->reserved, NULL);
		sim_cntr_inc_err(cntr);
	}
	sim_op_put(op, true);
}

static fi_addr_t source_of(struct sim_ep *ep, struct nic_peer peer)
{
	if (!(ep->caps & FI_SOURCE))
		return FI_ADDR_NOTAVAIL;
	return sim_av_addr_of(ep->av, peer);
}

static void on_recv_done(void *ctx, const struct nic_completion *c)
{
	struct sim_ep *ep = ctx;
	struct sim_op *op = (struct sim_op *)(uintptr_t)c->cookie;
	/* A multi-receive buffer keeps its record until it is released. */
	bool last = !op->multi || (c->flags & NIC_CQ_MULTI_RECV_DONE) ||
		    c->status == NIC_WR_FLUSH_ERR;
	bool reserved = op->reserved;
	struct sim_cqe e = {
		.op_context = op->context,
		.flags = op->flags,
		.len = c->len,
		.buf = c->buf,
		.data = c->imm,
		/* Flushed (cancelled, or its endpoint gone): no message
		 * landed, and the entry names the receive's own tag. */
		.tag = c->status == NIC_WR_FLUSH_ERR ? op->tag : c->tag,
		.src = source_of(ep, c->source),
	};

	if (c->flags & NIC_CQ_IMM)
		e.flags |= FI_REMOTE_CQ_DATA;
	if (c->flags & NIC_CQ_MULTI_RECV_DONE)
		e.flags |= FI_MULTI_RECV;
	if (c->flags & NIC_CQ_PEEK) {
		e.buf = NULL;
		if (c->status == NIC_OK && c->claim_id)
			((struct fi_context *)op->context)->internal[0] =
				(void *)(uintptr_t)c->claim_id;
	}
	if (c->status == NIC_OK && e.src == FI_ADDR_NOTAVAIL &&
	    (ep->caps & FI_SOURCE_ERR) && ep->rx_cq) {
		struct sockaddr_in raw;

		sim_addr_of_peer(ep->domain->world, c->source, &raw);
		sim_cq_push_error(ep->rx_cq, &e, FI_EADDRNOTAVAIL, 0, 0,
				  reserved, &raw);
	} else if (c->status == NIC_OK) {
		if (op->report && ep->rx_cq)
			sim_cq_push(ep->rx_cq, &e, reserved);
		else if (reserved)
			sim_cq_unreserve(ep->rx_cq);
		sim_cntr_inc(ep->cntr_recv);
	} else {
		int err = (c->flags & NIC_CQ_PEEK) &&
				  c->status == NIC_WR_FLUSH_ERR ?
				  FI_ENOMSG :
				  nic_status_errno(c->status);

		if (ep->rx_cq)
			sim_cq_push_error(ep->rx_cq, &e, err, c->status,
					  c->olen, reserved, NULL);
		sim_cntr_inc_err(ep->cntr_recv);
	}
	op->reserved = false;
	if (last)
		sim_op_put(op, false);
	else if (ep->rx_cq)
		op->reserved = sim_cq_reserve(ep->rx_cq) == 0;
}

static void on_remote_done(void *ctx, const struct nic_completion *c)
{
	struct sim_ep *ep = ctx;
	struct sim_mr *mr = ep->domain->counted ?
				    sim_mr_counted(ep->domain, c->key) :
				    NULL;

	if (c->flags & NIC_CQ_REMOTE_READ) {
		sim_cntr_inc(ep->cntr_rem_read);
		/* A fetching atomic reads, and changes, the region. */
		if (mr && !(c->flags & NIC_CQ_REMOTE_ATOMIC))
			sim_cntr_inc(mr->cntr_rem_read);
		else if (mr)
			sim_cntr_inc(mr->cntr_rem_write);
		return;
	}
	sim_cntr_inc(ep->cntr_rem_write);
	if (mr)
		sim_cntr_inc(mr->cntr_rem_write);
	if ((c->flags & NIC_CQ_IMM) && ep->rx_cq) {
		struct sim_cqe e = {
			.flags = FI_REMOTE_CQ_DATA | FI_RMA | FI_REMOTE_WRITE,
			.len = c->len,
			.data = c->imm,
			.src = source_of(ep, c->source),
		};

		sim_cq_push(ep->rx_cq, &e, false);
	}
}

static void on_qp_fatal(void *ctx, enum nic_status why)
{
	sim_cm_qp_fatal(ctx);
}

const struct nic_qp_ops sim_ep_nic_ops = {
	.send_done = on_send_done,
	.recv_done = on_recv_done,
	.remote_done = on_remote_done,
	.qp_fatal = on_qp_fatal,
};
