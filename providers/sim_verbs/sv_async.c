/* SPDX-License-Identifier: BSD-2-Clause
 * Asynchronous events (ibv_get_async_event): a context's queue, its
 * async_fd readable while one is queued. The face raises IBV_EVENT_CQ_ERR
 * when a CQ overruns. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>

#include "sv.h"

bool sv_async_ready(struct sv_waitable *w)
{
	return SV_CONTAINER_OF(w, struct sv_context, async)->async_head != NULL;
}

void sv_async_push(struct sv_context *ctx, const struct ibv_async_event *ev)
{
	struct sv_async_event *e = calloc(1, sizeof(*e));

	if (!e)
		return; /* the event is lost, as when the kernel's queue is full */
	e->ev = *ev;
	if (ctx->async_tail)
		ctx->async_tail->next = e;
	else
		ctx->async_head = e;
	ctx->async_tail = e;
	sv->posted();
}

int ibv_get_async_event(struct ibv_context *context,
			struct ibv_async_event *event)
{
	struct sv_context *c = sv_ctx(context);
	int fl = fcntl(context->async_fd, F_GETFL);
	struct sv_async_event *e;
	int ret;

	sv->lock();
	ret = sv->wait_event(&c->async, !(fl >= 0 && (fl & O_NONBLOCK)));
	if (ret) {
		sv->unlock();
		errno = -ret;
		return -1;
	}
	e = c->async_head;
	c->async_head = e->next;
	if (!c->async_head)
		c->async_tail = NULL;
	sv->waitable_update(&c->async);
	sv->unlock();
	*event = e->ev;
	free(e);
	return 0;
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	/* Nothing waits for acknowledgements here: objects are destroyed
	 * when the application says so. */
}
