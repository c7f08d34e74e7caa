/* SPDX-License-Identifier: BSD-2-Clause
 * Receive matching, as a NIC with tag-matching offload does it.
 *
 * Untagged and tagged receives wait in two posted lists; an incoming send
 * takes the first posted receive that accepts its source (and tag, under
 * the ignore mask). A send nobody waits for goes to the unexpected queue,
 * bounded by transport.unexpected_bytes; when that is full the sender is
 * told "receiver not ready" and retries, unless receives wait that the
 * message does not match (unexpected_full). A new receive looks in the
 * unexpected queue first. PEEK, CLAIM and DISCARD work on the unexpected
 * queue (fi_tagged(3)). A multi-receive buffer takes whole messages one
 * after another: each is staged until complete, then copied in at the next
 * free offset, so messages from several peers never interleave.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nic_internal.h"

/* ---- Lists ---------------------------------------------------------------------- */

static void list_append(struct nic_rmatch_list *l, struct nic_rmatch *m)
{
	m->next = NULL;
	if (l->tail)
		l->tail->next = m;
	else
		l->head = m;
	l->tail = m;
}

static void list_push_front(struct nic_rmatch_list *l, struct nic_rmatch *m)
{
	m->next = l->head;
	l->head = m;
	if (!l->tail)
		l->tail = m;
}

static bool list_remove(struct nic_rmatch_list *l, struct nic_rmatch *m)
{
	struct nic_rmatch *prev = NULL;

	for (struct nic_rmatch *cur = l->head; cur; prev = cur, cur = cur->next) {
		if (cur != m)
			continue;
		if (prev)
			prev->next = cur->next;
		else
			l->head = cur->next;
		if (l->tail == cur)
			l->tail = prev;
		cur->next = NULL;
		return true;
	}
	return false;
}

static struct nic_rmatch_list *posted_list(struct nic_qp *qp, bool tagged)
{
	return tagged ? &qp->rq->posted_tag : &qp->rq->posted_msg;
}

/* ---- Matching rules --------------------------------------------------------------- */

static bool source_ok(struct nic_peer want, struct nic_peer got)
{
	return (want.host == UINT32_MAX && want.qpn == UINT32_MAX) ||
	       (want.host == got.host && want.qpn == got.qpn);
}

static bool accepts(const struct nic_recv *r, struct nic_peer src,
		    bool tagged, uint64_t tag)
{
	if (!source_ok(r->source, src))
		return false;
	return !tagged || ((r->tag ^ tag) & ~r->ignore) == 0;
}

static size_t capacity_of(const struct nic_recv *r)
{
	size_t cap = 0;

	for (size_t i = 0; i < r->sge_count; i++)
		cap += r->sge[i].len;
	return cap;
}

/* ---- Buffers ------------------------------------------------------------------------- */

static void copy_into_sges(struct nic_qp *qp, const struct nic_recv *r,
			   size_t offset, const uint8_t *data, size_t len)
{
	for (size_t i = 0; i < r->sge_count && len; i++) {
		size_t sl = r->sge[i].len;

		if (offset >= sl) {
			offset -= sl;
			continue;
		}
		size_t n = sl - offset < len ? sl - offset : len;

		nic_dma_deliver(qp, (uint8_t *)r->sge[i].addr + offset, data,
				n);
		data += n;
		len -= n;
		offset = 0;
	}
}

static bool grow(struct nic_matcher *mt, struct nic_rmatch *m, size_t need)
{
	if (need <= m->data_cap)
		return true;
	size_t cap = m->data_cap ? m->data_cap : 256;

	while (cap < need)
		cap *= 2;
	uint8_t *data = fs_mem_realloc(mt->arena, m->data, cap);

	if (!data)
		return false;
	mt->unexpected_bytes += cap - m->data_cap;
	m->data = data;
	m->data_cap = cap;
	return true;
}

/* Records of posted receives and arrived messages are kept for the next
 * ones: a program posts a receive per message, and on a shared world the
 * arena's allocator takes a process-shared lock. */
static struct nic_rmatch *rmatch_new(struct nic_matcher *mt)
{
	struct nic_rmatch *m = mt->spare;

	if (!m)
		return fs_mem_calloc(mt->arena, 1, sizeof(*m));
	mt->spare = m->next;
	fs_touch_span(m, sizeof(*m));
	memset(m, 0, sizeof(*m));
	return m;
}

static void rmatch_free(struct nic_matcher *mt, struct nic_rmatch *m)
{
	m->next = mt->spare;
	mt->spare = m;
}

static void free_held(struct nic_matcher *mt, struct nic_rmatch *m)
{
	mt->unexpected_bytes -= m->data_cap;
	fs_mem_free(mt->arena, m->data);
	rmatch_free(mt, m);
}

/* ---- Completions -------------------------------------------------------------------- */

uint32_t nic_msg_end_flags(const struct nic_pkt *last)
{
	return (nic_op_has_imm(last->opcode) ? NIC_CQ_IMM : 0) |
	       ((last->flags & NIC_PKT_SOLICITED) ? NIC_CQ_SOLICITED : 0);
}

static void complete(struct nic_qp *qp, const struct nic_rmatch *msg,
		     uint64_t cookie, void *buf, size_t len, size_t olen,
		     uint32_t extra_flags)
{
	struct nic_completion c = {
		.cookie = cookie,
		.status = olen ? NIC_TRUNCATED : NIC_OK,
		.flags = extra_flags,
		.len = len,
		.olen = olen,
		.buf = buf,
		.tag = msg->tag,
		.imm = msg->imm,
		.source = msg->source,
	};

	if (msg->tagged)
		c.flags |= NIC_CQ_TAGGED;
	c.flags |= msg->end_flags;
	nic_complete_later(qp, NIC_PENDING_RECV, &c,
			   qp->nic->world->recv_overhead_ns);
}

static void *first_buf(const struct nic_recv *r)
{
	return r->sge_count ? r->sge[0].addr : NULL;
}

/* A complete held message goes into posted receive r; both are used up
 * (r is freed unless it is a multi-receive buffer). */
static void deliver_held(struct nic_qp *qp, struct nic_rmatch *held,
			 struct nic_rmatch *r);

/* A full multi-receive buffer is freed once its last message is in. */
static void multi_settle(struct nic_qp *qp, struct nic_rmatch *multi)
{
	if (multi->released && !multi->busy) {
		list_remove(&qp->rq->draining, multi);
		rmatch_free(qp->rq, multi);
	}
}

/* Copies a whole staged message into its multi-receive buffer at the next
 * free offset. */
static void land_in_multi(struct nic_qp *qp, struct nic_rmatch *msg,
			  struct nic_rmatch *multi)
{
	size_t room = multi->capacity - multi->used;
	size_t len = msg->len < room ? msg->len : room;
	uint8_t *buf = (uint8_t *)first_buf(&multi->recv) + multi->used;

	if (len)
		copy_into_sges(qp, &multi->recv, multi->used, msg->data, len);
	multi->used += len;
	multi->busy--;
	if (!multi->released &&
	    multi->capacity - multi->used < multi->recv.min_free) {
		multi->released = true;
		list_remove(posted_list(qp, multi->recv.flags & NIC_RECV_TAGGED),
			    multi);
		list_append(&qp->rq->draining, multi);
	}
	complete(qp, msg, multi->recv.cookie, buf, len, msg->len - len,
		 multi->released && !multi->busy ? NIC_CQ_MULTI_RECV_DONE : 0);
}

/* A complete held message goes into posted receive r, which is used up
 * (and freed) unless it is a multi-receive buffer. */
static void deliver_held(struct nic_qp *qp, struct nic_rmatch *held,
			 struct nic_rmatch *r)
{
	if (r->recv.flags & NIC_RECV_MULTI) {
		r->busy++;
		land_in_multi(qp, held, r);
		return;
	}
	size_t len = held->len < r->capacity ? held->len : r->capacity;

	if (len)
		copy_into_sges(qp, &r->recv, 0, held->data, len);
	complete(qp, held, r->recv.cookie, first_buf(&r->recv), len,
		 held->len - len, 0);
	rmatch_free(qp->rq, r);
}

/* ---- Incoming messages ------------------------------------------------------------------ */

/* How far past its budget the unexpected queue goes while receives wait. */
#define NIC_UNEXPECTED_STRETCH 4

/* The unexpected queue takes no more. A message refused while the program
 * waits in a receive it does not match would block, for ever, the message
 * that receive waits for behind it on the same flow (MPI_Recv of a later
 * tag after 64 MiB of earlier sends): while receives are posted it is
 * taken beyond the budget, as a NIC whose tag-matching buffer is exhausted
 * hands messages to the host's software rather than stall — up to
 * NIC_UNEXPECTED_STRETCH times the budget (memory is not endless: the
 * sender then waits, receiver not ready, and the program is told once). */
static bool unexpected_full(struct nic_qp *qp)
{
	struct nic_matcher *mt = qp->rq;
	struct nic_world *world = qp->nic->world;
	size_t budget = world->transport.unexpected_bytes;

	if (mt->unexpected_bytes < budget)
		return false;
	if (!mt->posted_msg.head && !mt->posted_tag.head)
		return true;
	if (mt->unexpected_bytes < NIC_UNEXPECTED_STRETCH * budget ||
	    (budget == 0 && mt->unexpected_bytes == 0))
		return false;
	if (!world->unexpected_told) {
		world->unexpected_told = true;
		fprintf(stderr, "fabsim: host %u: %zu bytes of messages no "
				"receive matched wait, %d times the unexpected "
				"budget (transport unexpected_bytes, "
				"FI_SIM_UNEXPECTED_BYTES); later messages wait "
				"for receives (receiver not ready)\n",
			nic_host(qp->nic), mt->unexpected_bytes,
			NIC_UNEXPECTED_STRETCH);
	}
	return true;
}

struct nic_rmatch *nic_match_incoming(struct nic_qp *qp, struct nic_peer src,
				      bool tagged, uint64_t tag)
{
	struct nic_matcher *mt = qp->rq;
	struct nic_rmatch_list *list = posted_list(qp, tagged);
	struct nic_rmatch *m;

	for (m = list->head; m; m = m->next)
		if (!m->released && accepts(&m->recv, src, tagged, tag))
			break;
	if (m)
		fs_touch_span(m, sizeof(*m));
	if (m && !(m->recv.flags & NIC_RECV_MULTI)) {
		list_remove(list, m);
	} else {
		struct nic_rmatch *target = m;

		/* A shared receive queue keeps no unexpected messages: the
		 * sender is told the receiver is not ready. */
		if (!target && (qp->srq || unexpected_full(qp)))
			return NULL;
		m = rmatch_new(qp->rq);
		if (!m)
			return NULL;
		if (target) {
			m->kind = NIC_RM_STAGING;
			m->bound = target;
			target->busy++;
		} else {
			m->kind = NIC_RM_UNEXPECTED;
			list_append(&mt->unexpected, m);
		}
	}
	m->source = src;
	m->tag = tag;
	m->tagged = tagged;
	m->truncated = 0;
	return m;
}

void nic_match_place(struct nic_qp *qp, struct nic_rmatch *m, size_t offset,
		     const void *data, size_t len)
{
	if (m->kind == NIC_RM_POSTED) {
		size_t fit = offset >= m->capacity ? 0 :
			     m->capacity - offset < len ? m->capacity - offset : len;

		copy_into_sges(qp, &m->recv, offset, data, fit);
		m->truncated += len - fit;
		return;
	}
	if (!len)
		return;
	/* The queue's budget was checked when the message started; a message
	 * the host cannot hold at all is cut short. */
	if (!grow(qp->rq, m, offset + len)) {
		m->truncated += len;
		return;
	}
	memcpy(m->data + offset, data, len);
	if (offset + len > m->len)
		m->len = offset + len;
}

void nic_match_complete_write(struct nic_qp *qp, struct nic_rmatch *m,
			      size_t len, uint32_t end_flags, uint32_t imm,
			      uint64_t key)
{
	struct nic_completion c = {
		.cookie = m->recv.cookie,
		.status = NIC_OK,
		.flags = end_flags | NIC_CQ_REMOTE_WRITE,
		.len = len,
		.imm = imm,
		.source = m->source,
		.key = key,
	};

	rmatch_free(qp->rq, m);
	nic_complete_later(qp, NIC_PENDING_RECV, &c,
			   qp->nic->world->recv_overhead_ns);
}

void nic_match_finish(struct nic_qp *qp, struct nic_rmatch *m, size_t msg_len,
		      uint32_t end_flags, uint32_t imm)
{
	m->end_flags = end_flags;
	m->imm = imm;
	switch (m->kind) {
	case NIC_RM_POSTED: {
		size_t len = msg_len - m->truncated;

		complete(qp, m, m->recv.cookie, first_buf(&m->recv), len,
			 m->truncated, 0);
		rmatch_free(qp->rq, m);
		break;
	}
	case NIC_RM_STAGING:
		m->len = msg_len;
		land_in_multi(qp, m, m->bound);
		multi_settle(qp, m->bound);
		free_held(qp->rq, m);
		break;
	case NIC_RM_UNEXPECTED:
		m->len = msg_len;
		m->complete = true;
		if (m->bound) {
			struct nic_rmatch *r = m->bound;

			list_remove(&qp->rq->unexpected, m);
			deliver_held(qp, m, r);
			free_held(qp->rq, m);
		}
		break;
	}
}

void nic_match_drop(struct nic_qp *qp, struct nic_rmatch *m)
{
	switch (m->kind) {
	case NIC_RM_POSTED:
		rmatch_free(qp->rq, m);
		break;
	case NIC_RM_STAGING:
		m->bound->busy--;
		multi_settle(qp, m->bound);
		free_held(qp->rq, m);
		break;
	case NIC_RM_UNEXPECTED:
		break; /* the unexpected queue owns it */
	}
}

void nic_match_abandon(struct nic_qp *qp, struct nic_rmatch *m)
{
	switch (m->kind) {
	case NIC_RM_POSTED:
		/* It goes back where it was: first in line. */
		m->truncated = 0;
		list_push_front(posted_list(qp, m->recv.flags & NIC_RECV_TAGGED), m);
		break;
	case NIC_RM_STAGING:
		m->bound->busy--;
		multi_settle(qp, m->bound);
		free_held(qp->rq, m);
		break;
	case NIC_RM_UNEXPECTED:
		list_remove(&qp->rq->unexpected, m);
		if (m->bound) {
			struct nic_rmatch *r = m->bound;

			list_push_front(posted_list(qp, r->recv.flags & NIC_RECV_TAGGED), r);
		}
		free_held(qp->rq, m);
		break;
	}
}

/* ---- Posting ---------------------------------------------------------------------------- */

static struct nic_rmatch *find_unexpected(struct nic_qp *qp,
					  const struct nic_recv *r)
{
	bool tagged = r->flags & NIC_RECV_TAGGED;

	for (struct nic_rmatch *u = qp->rq->unexpected.head; u; u = u->next) {
		if (u->bound || u->tagged != tagged)
			continue;
		if (r->flags & NIC_RECV_CLAIM && !(r->flags & NIC_RECV_PEEK)) {
			if (u->claim_id == r->claim_id)
				return u;
			continue;
		}
		if (u->claim_id || !accepts(r, u->source, tagged, u->tag))
			continue;
		/* PEEK reports only what has fully arrived. */
		if ((r->flags & NIC_RECV_PEEK) && !u->complete)
			continue;
		return u;
	}
	return NULL;
}

static void peek_reply(struct nic_qp *qp, const struct nic_recv *r,
		       struct nic_rmatch *u)
{
	struct nic_completion c = {
		.cookie = r->cookie,
		.status = u ? NIC_OK : NIC_WR_FLUSH_ERR,
		.flags = NIC_CQ_PEEK,
	};

	if (u) {
		c.len = u->len;
		c.tag = u->tag;
		c.imm = u->imm;
		c.source = u->source;
		c.claim_id = u->claim_id;
		if (u->tagged)
			c.flags |= NIC_CQ_TAGGED;
		c.flags |= u->end_flags & NIC_CQ_IMM;
	}
	/* The search takes the NIC a moment, as a receive's completion
	 * does: a program that peeks in a loop until a message is there
	 * (fabtests' rdm_tagged_peek) must let the clock move, or the
	 * message never comes. */
	nm_time_ns cost = qp->nic->world->recv_overhead_ns;

	nic_complete_later(qp, NIC_PENDING_RECV, &c, cost ? cost : 1);
}

/* PEEK, PEEK|CLAIM, PEEK|DISCARD, CLAIM and CLAIM|DISCARD. */
static int post_search(struct nic_qp *qp, const struct nic_recv *r)
{
	struct nic_matcher *mt = qp->rq;
	struct nic_rmatch *u = find_unexpected(qp, r);

	if (r->flags & NIC_RECV_PEEK) {
		if (u && (r->flags & NIC_RECV_CLAIM))
			u->claim_id = ++mt->next_claim_id;
		peek_reply(qp, r, u);
		if (u && (r->flags & NIC_RECV_DISCARD)) {
			list_remove(&mt->unexpected, u);
			free_held(mt, u);
		}
		return 0;
	}
	if (!u)
		return -ENOENT; /* nothing was claimed under that id */
	list_remove(&mt->unexpected, u);
	if (r->flags & NIC_RECV_DISCARD) {
		complete(qp, u, r->cookie, NULL, 0, 0, 0);
		free_held(mt, u);
		return 0;
	}
	struct nic_rmatch *posted = rmatch_new(qp->rq);

	if (!posted)
		return -ENOMEM;
	posted->recv = *r;
	posted->capacity = capacity_of(r);
	deliver_held(qp, u, posted);
	free_held(mt, u);
	return 0;
}

int nic_match_post(struct nic_qp *qp, const struct nic_recv *r)
{
	struct nic_matcher *mt = qp->rq;
	struct nic_rmatch *posted, *u;

	if (r->flags & (NIC_RECV_PEEK | NIC_RECV_CLAIM))
		return post_search(qp, r);
	posted = rmatch_new(qp->rq);
	if (!posted)
		return -ENOMEM;
	posted->kind = NIC_RM_POSTED;
	posted->recv = *r;
	posted->capacity = capacity_of(r);
	/* Messages that came first are taken first. */
	while ((u = find_unexpected(qp, r))) {
		if (!u->complete) {
			/* The rest lands directly once it arrives. A
			 * multi-receive buffer waits for whole messages. */
			if (r->flags & NIC_RECV_MULTI)
				break;
			u->bound = posted;
			return 0;
		}
		list_remove(&mt->unexpected, u);
		if (r->flags & NIC_RECV_MULTI) {
			posted->busy++;
			land_in_multi(qp, u, posted);
			free_held(mt, u);
			if (posted->released) {
				/* Filled by what was waiting already. */
				list_remove(&mt->draining, posted);
				rmatch_free(qp->rq, posted);
				return 0;
			}
			continue;
		}
		deliver_held(qp, u, posted);
		free_held(mt, u);
		return 0;
	}
	list_append(posted_list(qp, r->flags & NIC_RECV_TAGGED), posted);
	return 0;
}

int nic_match_append(struct nic_matcher *mt, const struct nic_recv *r)
{
	struct nic_rmatch *posted = rmatch_new(mt);

	if (!posted)
		return -ENOMEM;
	posted->kind = NIC_RM_POSTED;
	posted->recv = *r;
	posted->capacity = capacity_of(r);
	list_append(&mt->posted_msg, posted);
	return 0;
}

int nic_match_cancel(struct nic_qp *qp, uint64_t cookie)
{
	struct nic_rmatch_list *lists[] = { &qp->rq->posted_msg,
					    &qp->rq->posted_tag };

	for (size_t i = 0; i < 2; i++) {
		for (struct nic_rmatch *m = lists[i]->head; m; m = m->next) {
			if (m->recv.cookie != cookie || m->busy)
				continue;
			struct nic_completion c = {
				.cookie = cookie,
				.status = NIC_WR_FLUSH_ERR,
			};

			list_remove(lists[i], m);
			rmatch_free(qp->rq, m);
			nic_complete_later(qp, NIC_PENDING_RECV, &c, 0);
			return 0;
		}
	}
	return -ENOENT;
}

static void free_list(struct nic_matcher *mt, struct nic_rmatch_list *l)
{
	struct nic_rmatch *m = l->head, *next;

	for (; m; m = next) {
		next = m->next;
		free_held(mt, m);
	}
	l->head = l->tail = NULL;
}

/* The region is going: a receive posted on it finds its key gone when a
 * message lands in it, as on a device, where the key is checked then. */
void nic_match_revoke_recv(struct nic_rmatch *m, const struct nic_mr *mr)
{
	for (size_t i = 0; i < m->recv.sge_count; i++)
		if (m->recv.sge[i].mr == mr) {
			m->recv.sge[i].mr = NULL;
			m->recv.flags |= NIC_RECV_BAD_KEY;
		}
}

void nic_match_revoke_mr(struct nic_matcher *mt, const struct nic_mr *mr)
{
	struct nic_rmatch_list *lists[] = { &mt->posted_msg, &mt->posted_tag };

	for (size_t l = 0; l < NIC_ARRAY_LEN(lists); l++)
		for (struct nic_rmatch *m = lists[l]->head; m; m = m->next)
			nic_match_revoke_recv(m, mr);
}

void nic_match_release(struct nic_matcher *mt)
{
	free_list(mt, &mt->posted_msg);
	free_list(mt, &mt->posted_tag);
	free_list(mt, &mt->unexpected);
	free_list(mt, &mt->draining);
	while (mt->spare) {
		struct nic_rmatch *m = mt->spare;

		mt->spare = m->next;
		fs_mem_free(mt->arena, m);
	}
}

struct nic_rmatch *nic_match_take_posted(struct nic_qp *qp,
					 struct nic_peer src)
{
	struct nic_rmatch_list *list = posted_list(qp, false);

	for (struct nic_rmatch *m = list->head; m; m = m->next) {
		if (m->released || (m->recv.flags & NIC_RECV_MULTI) ||
		    !accepts(&m->recv, src, false, 0))
			continue;
		list_remove(list, m);
		m->source = src;
		m->tagged = false;
		m->truncated = 0;
		return m;
	}
	return NULL;
}

void nic_match_flush_taken(struct nic_qp *qp, struct nic_rmatch *m)
{
	nic_match_fail_taken(qp, m, NIC_WR_FLUSH_ERR);
}

void nic_match_fail_taken(struct nic_qp *qp, struct nic_rmatch *m,
			  enum nic_status status)
{
	struct nic_completion c = {
		.cookie = m->recv.cookie,
		.status = status,
	};

	if (m->kind != NIC_RM_POSTED) {
		nic_match_drop(qp, m);
		return;
	}
	rmatch_free(qp->rq, m);
	nic_complete_later(qp, NIC_PENDING_RECV, &c, 0);
}

void nic_match_flush(struct nic_qp *qp)
{
	struct nic_rmatch_list *lists[] = { &qp->rq->posted_msg,
					    &qp->rq->posted_tag };

	for (size_t i = 0; i < 2; i++) {
		while (lists[i]->head) {
			struct nic_rmatch *m = lists[i]->head;
			struct nic_completion c = {
				.cookie = m->recv.cookie,
				.status = NIC_WR_FLUSH_ERR,
			};

			list_remove(lists[i], m);
			if (m->busy) {
				/* Messages still landing finish it. */
				m->released = true;
				list_append(&qp->rq->draining, m);
				continue;
			}
			rmatch_free(qp->rq, m);
			nic_complete_later(qp, NIC_PENDING_RECV, &c, 0);
		}
	}
}
