/* SPDX-License-Identifier: BSD-2-Clause
 * Both sides of a connection whose programs wait in poll() on O_NONBLOCK
 * descriptors, as event loops do, and count the wake-ups that find nothing
 * (poll() said readable, the get call said EAGAIN):
 *   quiet_channel server PORT  accepts on 10.0.0.1:PORT (its rdma_cm
 *                              channel), then waits on its completion
 *                              channel for a 1 MiB message;
 *   quiet_channel client PORT  connects (its rdma_cm channel) and sends it.
 * A descriptor is readable when an event is there (librdmacm, libibverbs):
 * exit status 0 when fewer than QUIET_MAX wake-ups found nothing. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#define MSG_BYTES (1 << 20)
/* A few are a race with another process's run; thousands are a spin. */
#define QUIET_MAX 10

static unsigned empty_wakeups;

static void die(const char *what)
{
	fprintf(stderr, "quiet_channel: %s (%s)\n", what, strerror(errno));
	exit(1);
}

static void nonblocking(int fd)
{
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK))
		die("fcntl");
}

static void wait_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, 20000) != 1)
		die("poll: nothing within 20 s");
}

/* The channel's next event, which must be `want`; its id. */
static struct rdma_cm_id *cm_event(struct rdma_event_channel *ch,
				   enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	for (;;) {
		wait_readable(ch->fd);
		if (!rdma_get_cm_event(ch, &ev))
			break;
		if (errno != EAGAIN)
			die("rdma_get_cm_event");
		empty_wakeups++;
	}
	if (ev->event != want) {
		fprintf(stderr, "quiet_channel: %s, expected %s\n",
			rdma_event_str(ev->event), rdma_event_str(want));
		exit(1);
	}
	id = ev->id;
	rdma_ack_cm_event(ev);
	return id;
}

static struct ibv_mr *queue_pair(struct rdma_cm_id *id,
				 struct ibv_comp_channel *cc)
{
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 2, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct ibv_pd *pd = ibv_alloc_pd(id->verbs);
	struct ibv_mr *mr;

	attr.send_cq = attr.recv_cq = ibv_create_cq(id->verbs, 4, NULL, cc, 0);
	if (!pd || !attr.send_cq || rdma_create_qp(id, pd, &attr))
		die("queue pair");
	mr = ibv_reg_mr(pd, calloc(1, MSG_BYTES), MSG_BYTES,
			IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr");
	return mr;
}

static void server(struct rdma_event_channel *ch, struct sockaddr_in *a)
{
	struct ibv_comp_channel *cc;
	struct rdma_cm_id *listener, *id;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	void *ctx;

	if (rdma_create_id(ch, &listener, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listener, (struct sockaddr *)a) ||
	    rdma_listen(listener, 1))
		die("listen");
	id = cm_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	if (!(cc = ibv_create_comp_channel(id->verbs)))
		die("ibv_create_comp_channel");
	nonblocking(cc->fd);
	mr = queue_pair(id, cc);
	struct ibv_sge sge = { (uintptr_t)mr->addr, MSG_BYTES, mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(id->qp, &wr, &bad) ||
	    ibv_req_notify_cq(id->qp->recv_cq, 0) || rdma_accept(id, NULL))
		die("accept");
	cm_event(ch, RDMA_CM_EVENT_ESTABLISHED);
	for (;;) {
		wait_readable(cc->fd);
		if (!ibv_get_cq_event(cc, &cq, &ctx))
			break;
		if (errno != EAGAIN)
			die("ibv_get_cq_event");
		empty_wakeups++;
	}
	ibv_ack_cq_events(cq, 1);
	if (ibv_poll_cq(cq, 1, &wc) != 1 || wc.status != IBV_WC_SUCCESS ||
	    wc.byte_len != MSG_BYTES)
		die("the message");
}

static void client(struct rdma_event_channel *ch, struct sockaddr_in *a)
{
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	int n;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)a, 2000))
		die("resolve");
	cm_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (rdma_resolve_route(id, 2000))
		die("rdma_resolve_route");
	cm_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
	mr = queue_pair(id, NULL);
	if (rdma_connect(id, NULL))
		die("rdma_connect");
	cm_event(ch, RDMA_CM_EVENT_ESTABLISHED);
	struct ibv_sge sge = { (uintptr_t)mr->addr, MSG_BYTES, mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;

	if (ibv_post_send(id->qp, &wr, &bad))
		die("ibv_post_send");
	while (!(n = ibv_poll_cq(id->qp->send_cq, 1, &wc)))
		;
	if (n != 1 || wc.status != IBV_WC_SUCCESS)
		die("the send");
}

int main(int argc, char **argv)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in a = { .sin_family = AF_INET };

	if (argc != 3 || (strcmp(argv[1], "server") && strcmp(argv[1], "client")))
		die("usage: quiet_channel server|client PORT");
	if (!ch)
		die("rdma_create_event_channel");
	nonblocking(ch->fd);
	a.sin_port = htons((uint16_t)atoi(argv[2]));
	a.sin_addr.s_addr = htonl(0x0a000001); /* 10.0.0.1 */
	if (!strcmp(argv[1], "server"))
		server(ch, &a);
	else
		client(ch, &a);
	printf("%s: %u wake-ups found nothing\n", argv[1], empty_wakeups);
	return empty_wakeups < QUIET_MAX ? 0 : 1;
}
