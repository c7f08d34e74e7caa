/* SPDX-License-Identifier: BSD-2-Clause
 * Event queue entries (fabsim/eventq.h). */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

#include <fabsim/eventq.h>

struct fabsim_eventq_entry {
	uint32_t                    event;
	bool                        error;
	struct fi_eq_err_entry      err;
	size_t                      len; /* bytes of buf: the event, or err_data */
	struct fabsim_eventq_entry *next;
	uint8_t                     buf[];
};

void fabsim_eventq_init(struct fabsim_eventq *q)
{
	q->head = q->tail = q->err_reported = NULL;
}

static void entry_free(struct fabsim_eventq_entry *e)
{
	/* A connection request nobody read still owns its info. */
	if (e && !e->error && e->event == FI_CONNREQ &&
	    e->len >= sizeof(struct fi_eq_cm_entry))
		fi_freeinfo(((struct fi_eq_cm_entry *)e->buf)->info);
	free(e);
}

static struct fabsim_eventq_entry *pop(struct fabsim_eventq *q)
{
	struct fabsim_eventq_entry *e = q->head;

	q->head = e->next;
	if (!q->head)
		q->tail = NULL;
	return e;
}

void fabsim_eventq_fini(struct fabsim_eventq *q)
{
	while (q->head)
		entry_free(pop(q));
	free(q->err_reported);
	q->err_reported = NULL;
}

bool fabsim_eventq_empty(const struct fabsim_eventq *q)
{
	return !q->head;
}

static fid_t fid_of(const struct fabsim_eventq_entry *e)
{
	if (e->error)
		return e->err.fid;
	/* Every event's structure begins with the fid it concerns. */
	return e->len >= sizeof(fid_t) ? ((const struct fi_eq_entry *)e->buf)->fid
				       : NULL;
}

size_t fabsim_eventq_drop_fid(struct fabsim_eventq *q, fid_t fid)
{
	struct fabsim_eventq_entry **p = &q->head, *last = NULL;
	size_t dropped = 0;

	while (*p) {
		struct fabsim_eventq_entry *e = *p;

		if (fid_of(e) == fid) {
			*p = e->next;
			entry_free(e);
			dropped++;
		} else {
			last = e;
			p = &e->next;
		}
	}
	q->tail = last;
	return dropped;
}

static int append(struct fabsim_eventq *q, struct fabsim_eventq_entry *e)
{
	e->next = NULL;
	if (q->tail)
		q->tail->next = e;
	else
		q->head = e;
	q->tail = e;
	return 0;
}

int fabsim_eventq_push(struct fabsim_eventq *q, uint32_t event,
		       const void *buf, size_t len)
{
	struct fabsim_eventq_entry *e = calloc(1, sizeof(*e) + len);

	if (!e)
		return -FI_ENOMEM;
	e->event = event;
	e->len = len;
	if (len)
		memcpy(e->buf, buf, len);
	return append(q, e);
}

int fabsim_eventq_push_error(struct fabsim_eventq *q,
			     const struct fi_eq_err_entry *err,
			     const void *err_data, size_t len)
{
	struct fabsim_eventq_entry *e = calloc(1, sizeof(*e) + len);

	if (!e)
		return -FI_ENOMEM;
	e->error = true;
	e->err = *err;
	e->len = len;
	e->err.err_data = NULL;
	e->err.err_data_size = 0;
	if (len) {
		memcpy(e->buf, err_data, len);
		e->err.err_data = e->buf;
		e->err.err_data_size = len;
	}
	return append(q, e);
}

ssize_t fabsim_eventq_read(struct fabsim_eventq *q, uint32_t *event,
			   void *buf, size_t len, uint64_t flags)
{
	struct fabsim_eventq_entry *e = q->head;
	size_t n;

	if (!e)
		return -FI_EAGAIN;
	if (e->error)
		return -FI_EAVAIL;
	n = e->len;
	if (len < e->len || (e->len && !buf))
		return -FI_ETOOSMALL;
	if (event)
		*event = e->event;
	if (e->len)
		memcpy(buf, e->buf, e->len);
	if (!(flags & FI_PEEK))
		free(pop(q)); /* a connection request's info is the reader's */
	return (ssize_t)n;
}

ssize_t fabsim_eventq_readerr(struct fabsim_eventq *q,
			      struct fi_eq_err_entry *buf, uint64_t flags,
			      uint32_t api_version)
{
	struct fabsim_eventq_entry *e = q->head;
	void *user_data = buf->err_data;
	size_t user_size = buf->err_data_size;

	if (!e || !e->error)
		return -FI_EAGAIN;
	if (!(flags & FI_PEEK)) {
		pop(q);
		free(q->err_reported);
		q->err_reported = e; /* its err_data lives until the next */
	}
	*buf = e->err;
	if (FI_VERSION_GE(api_version, FI_VERSION(1, 5)) && user_data &&
	    user_size) {
		size_t n = user_size < e->len ? user_size : e->len;

		memcpy(user_data, e->buf, n);
		buf->err_data = user_data;
		buf->err_data_size = n;
	}
	return sizeof(*buf);
}
