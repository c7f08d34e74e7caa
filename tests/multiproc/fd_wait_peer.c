/* SPDX-License-Identifier: BSD-2-Clause
 * One side of a ping-pong over a shared simulated fabric in which the
 * receiving side waits for its messages as fi_cq(3) and fi_poll(3) allow a
 * program to: blocked in poll() on its CQ's wait descriptor (FI_WAIT_FD,
 * fi_control FI_GETWAIT), after fi_trywait said it may block. A plain
 * libfabric program, started once per side as its own process:
 *
 *   FI_PROVIDER=sim FI_SIM_FABRIC=NAME FI_SIM_NODE=i \
 *       fd_wait_peer SOCKET ROUNDS SIZE
 *
 * SOCKET is the number of a connected stream socket to the other side (the
 * out-of-band channel real programs have): the sides exchange their
 * endpoint addresses over it, and the receiver (node 1) tells the sender
 * (node 0) each time it is about to block in poll() for the message of a
 * round. The sender sends a round's message only then, so every message
 * arrives while the receiver is blocked outside the fabric: only the other
 * process's run of the model can deliver it, and the receiver's descriptor
 * must become readable all the same. The receiver answers each message
 * with its bytes reversed; the sender checks them.
 *
 * The receiver fails (exit status 1) when a poll() sees nothing for
 * FD_WAIT_POLL_MS although the message is on its way, the sender when
 * the answer does not come in FD_WAIT_ROUND_MS; both print one line at the
 * end:
 *   node I: ok, R rounds, B blocked, T ns
 * B being the receiver's poll() calls that blocked and were woken.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext_fabsim.h>

#include "tests/multiproc/peer_util.h"

/* Real time a receiver's poll() may see nothing while its message is sent. */
#define FD_WAIT_POLL_MS 5000
/* Real time the sender waits for the answer of one round. */
#define FD_WAIT_ROUND_MS 10000
/* The last word on the out-of-band socket. */
#define FD_WAIT_BYE UINT32_MAX

static int node;

#define CHECK(call) PEER_CHECK(node, call)

static void fail(const char *what)
{
	peer_fail(node, what);
}

static void send_all(int sock, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(sock, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fail("the out-of-band socket failed");
		p += n;
		len -= (size_t)n;
	}
}

static void recv_all(int sock, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = recv(sock, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fail("the out-of-band socket closed");
		p += n;
		len -= (size_t)n;
	}
}

/* A notice the receiver sent, if one is there (the sender polls its CQ
 * meanwhile): true and *round set, or false. */
static bool notice(int sock, uint32_t *round)
{
	ssize_t n = recv(sock, round, sizeof(*round), MSG_DONTWAIT | MSG_PEEK);

	if (n < (ssize_t)sizeof(*round)) {
		if (n == 0)
			fail("the receiver went away");
		return false;
	}
	recv_all(sock, round, sizeof(*round));
	return true;
}

static long ms_since(const struct timespec *from)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)(now.tv_sec - from->tv_sec) * 1000 +
	       (now.tv_nsec - from->tv_nsec) / 1000000;
}

static uint8_t pattern(uint32_t round, size_t i)
{
	return (uint8_t)(round * 37 + i * 11 + 5);
}

static void cq_failed(struct fid_cq *cq, ssize_t n)
{
	peer_cq_failed(node, cq, n, "fi_cq_read");
}

struct side {
	struct fid_fabric *fabric;
	struct fid_cq     *cq;
	struct fid_ep     *ep;
	fi_addr_t          peer;
	int                sock;
	int                fd;      /* the CQ's wait descriptor */
	uint8_t           *sendbuf, *recvbuf;
	size_t             size;
	long               sends;   /* send completions still to come */
	long               blocked; /* poll() calls that blocked, then woke */
};

/* One completion if there is one: 1 for a receive, 0 for a send or none. */
static int take(struct side *s)
{
	struct fi_cq_msg_entry e;
	ssize_t n = fi_cq_read(s->cq, &e, 1);

	if (n == -FI_EAGAIN)
		return 0;
	if (n < 0)
		cq_failed(s->cq, n);
	if (e.flags & FI_RECV) {
		if (e.len != s->size)
			fail("a message of the wrong length");
		return 1;
	}
	s->sends--;
	return 0;
}

/* The receiver's wait for the message of `round`: read the CQ; when it is
 * empty and fi_trywait allows, tell the sender and block in poll(). */
static void receive_blocking(struct side *s, uint32_t round)
{
	struct fid *fids[1] = { &s->cq->fid };

	for (;;) {
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		int n, ret;

		if (take(s))
			return;
		ret = fi_trywait(s->fabric, fids, 1);
		if (ret == -FI_EAGAIN)
			continue;
		CHECK(ret);
		send_all(s->sock, &round, sizeof(round));
		do
			n = poll(&p, 1, FD_WAIT_POLL_MS);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			fail("poll() failed");
		if (n == 0) {
			char why[160];

			snprintf(why, sizeof(why), "round %" PRIu32 ": the CQ's "
				 "wait descriptor did not become readable in "
				 "%d ms although the message was sent",
				 round, FD_WAIT_POLL_MS);
			fail(why);
		}
		s->blocked++;
	}
}

/* The sender's wait for the answer: polling the CQ. */
static void receive_polling(struct side *s, uint32_t round)
{
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!take(s))
		if (ms_since(&start) > FD_WAIT_ROUND_MS) {
			char why[96];

			snprintf(why, sizeof(why), "round %" PRIu32 ": no answer "
				 "in %d ms", round, FD_WAIT_ROUND_MS);
			fail(why);
		}
}

static void send_msg(struct side *s)
{
	for (;;) {
		ssize_t ret = fi_send(s->ep, s->sendbuf, s->size, NULL, s->peer,
				      NULL);

		if (ret == 0)
			break;
		if (ret != -FI_EAGAIN)
			CHECK(ret);
		take(s);
	}
	s->sends++;
}

static void post_recv(struct side *s)
{
	CHECK(fi_recv(s->ep, s->recvbuf, s->size, NULL, s->peer, NULL));
}

static void sender(struct side *s, uint32_t rounds)
{
	for (uint32_t r = 0; r < rounds; r++) {
		struct timespec start;
		uint32_t told;

		post_recv(s);
		/* The receiver is blocked in poll() once it says so. */
		clock_gettime(CLOCK_MONOTONIC, &start);
		for (;;) {
			if (notice(s->sock, &told) && told == r)
				break;
			take(s); /* completions of earlier sends */
			if (ms_since(&start) > FD_WAIT_ROUND_MS)
				fail("the receiver never said it blocks");
		}
		for (size_t i = 0; i < s->size; i++)
			s->sendbuf[i] = pattern(r, i);
		send_msg(s);
		receive_polling(s, r);
		for (size_t i = 0; i < s->size; i++)
			if (s->recvbuf[i] != pattern(r, s->size - 1 - i))
				fail("an answer arrived damaged");
	}
	while (s->sends > 0)
		take(s);
}

static void receiver(struct side *s, uint32_t rounds)
{
	post_recv(s);
	for (uint32_t r = 0; r < rounds; r++) {
		receive_blocking(s, r);
		for (size_t i = 0; i < s->size; i++) {
			if (s->recvbuf[i] != pattern(r, i))
				fail("a message arrived damaged");
			s->sendbuf[s->size - 1 - i] = s->recvbuf[i];
		}
		if (r + 1 < rounds)
			post_recv(s);
		send_msg(s);
	}
	while (s->sends > 0)
		take(s);
}

int main(int argc, char **argv)
{
	struct fi_info *hints, *info;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fabsim_ops_v1 *sim;
	struct side s = { 0 };
	const char *env = getenv("FI_SIM_NODE");
	char me[64], them[64];
	size_t len = sizeof(me);
	uint32_t rounds;
	enum fi_wait_obj obj;

	if (argc != 4 || !env)
		fail("usage: FI_SIM_NODE=i fd_wait_peer SOCKET ROUNDS SIZE");
	node = atoi(env);
	s.sock = atoi(argv[1]);
	rounds = (uint32_t)atoi(argv[2]);
	s.size = (size_t)atol(argv[3]);
	if ((node != 0 && node != 1) || rounds < 1 || s.size < 1)
		fail("bad arguments");

	hints = fi_allocinfo();
	hints->caps = FI_MSG;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup("sim");
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
	fi_freeinfo(hints);
	CHECK(fi_fabric(info->fabric_attr, &s.fabric, NULL));
	CHECK(fi_domain(s.fabric, info, &domain, NULL));
	CHECK(fi_av_open(domain, &(struct fi_av_attr){ .type = FI_AV_TABLE },
			 &av, NULL));
	CHECK(fi_cq_open(domain,
			 &(struct fi_cq_attr){ .format = FI_CQ_FORMAT_MSG,
					       .size = 64,
					       .wait_obj = FI_WAIT_FD },
			 &s.cq, NULL));
	CHECK(fi_control(&s.cq->fid, FI_GETWAITOBJ, &obj));
	if (obj != FI_WAIT_FD)
		fail("the CQ's wait object is not a descriptor");
	CHECK(fi_control(&s.cq->fid, FI_GETWAIT, &s.fd));
	CHECK(fi_endpoint(domain, info, &s.ep, NULL));
	CHECK(fi_ep_bind(s.ep, &av->fid, 0));
	CHECK(fi_ep_bind(s.ep, &s.cq->fid, FI_TRANSMIT | FI_RECV));
	CHECK(fi_enable(s.ep));
	CHECK(fi_open_ops(&domain->fid, FABSIM_OPS_V1, 0, (void **)&sim, NULL));

	/* Addresses, out of band. */
	CHECK(fi_getname(&s.ep->fid, me, &len));
	if (len > sizeof(me))
		fail("an endpoint name longer than expected");
	send_all(s.sock, &len, sizeof(len));
	send_all(s.sock, me, len);
	recv_all(s.sock, &len, sizeof(len));
	if (len > sizeof(them))
		fail("the peer's name is too long");
	recv_all(s.sock, them, len);
	if (fi_av_insert(av, them, 1, &s.peer, 0, NULL) != 1)
		fail("fi_av_insert");

	s.sendbuf = malloc(s.size);
	s.recvbuf = malloc(s.size);
	if (!s.sendbuf || !s.recvbuf)
		fail("out of memory");
	if (node == 0)
		sender(&s, rounds);
	else
		receiver(&s, rounds);

	printf("node %d: ok, %" PRIu32 " rounds, %ld blocked, %" PRIu64
	       " ns\n", node, rounds, s.blocked, sim->now_ns(&domain->fid));
	fflush(stdout);

	/* As programs end with a barrier: nobody closes its NIC while the
	 * peer may still need it to acknowledge. The sender skips the
	 * notices it did not need. */
	if (node == 0) {
		uint32_t word;

		do
			recv_all(s.sock, &word, sizeof(word));
		while (word != FD_WAIT_BYE);
		send_all(s.sock, &word, sizeof(word));
	} else {
		uint32_t word = FD_WAIT_BYE;

		send_all(s.sock, &word, sizeof(word));
		recv_all(s.sock, &word, sizeof(word));
	}
	CHECK(fi_close(&s.ep->fid));
	CHECK(fi_close(&s.cq->fid));
	CHECK(fi_close(&av->fid));
	CHECK(fi_close(&domain->fid));
	CHECK(fi_close(&s.fabric->fid));
	fi_freeinfo(info);
	free(s.sendbuf);
	free(s.recvbuf);
	close(s.sock);
	return 0;
}
