/* SPDX-License-Identifier: BSD-2-Clause
 * One side of an FI_EP_MSG connection over a shared simulated fabric whose
 * client is killed while the connection is idle:
 *
 *   FI_PROVIDER=sim FI_SIM_FABRIC=NAME FI_SIM_NODE=0 msg_peer server PORT
 *   FI_PROVIDER=sim FI_SIM_FABRIC=NAME FI_SIM_NODE=1 msg_peer holder PORT
 *
 * The server (node 0, 10.0.0.1) accepts one connection and waits on its EQ
 * with no timeout; it exits 0 when the next event is FI_SHUTDOWN on that
 * endpoint (fi_cm(3)), as a peer's kernel would cause by disconnecting the
 * connections of a killed process. The holder connects, says "connected"
 * and sleeps until killed.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

static int node;

#define CHECK(call)                                                      \
	do {                                                             \
		int ret_ = (int)(call);                                  \
		if (ret_) {                                              \
			fprintf(stderr, "node %d: %s: %s\n", node, #call,  \
				fi_strerror(-ret_));                     \
			exit(1);                                         \
		}                                                        \
	} while (0)

struct side {
	struct fi_info   *info;
	struct fid_fabric *fabric;
	struct fid_eq    *eq;
	struct fid_domain *domain;
	struct fid_cq    *cq;
	struct fid_ep    *ep;
};

static void open_side(struct side *s, const char *port, bool server)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };

	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG;
	hints->addr_format = FI_SOCKADDR_IN;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	CHECK(fi_getinfo(FI_VERSION(1, 17), "10.0.0.1", port,
			 server ? FI_SOURCE : 0, hints, &s->info));
	fi_freeinfo(hints);
	CHECK(fi_fabric(s->info->fabric_attr, &s->fabric, NULL));
	CHECK(fi_eq_open(s->fabric, &eq_attr, &s->eq, NULL));
}

/* The endpoint for `info`, bound and enabled. */
static void endpoint(struct side *s, struct fi_info *info)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG,
				      .wait_obj = FI_WAIT_UNSPEC };

	CHECK(fi_domain(s->fabric, info, &s->domain, NULL));
	CHECK(fi_cq_open(s->domain, &cq_attr, &s->cq, NULL));
	CHECK(fi_endpoint(s->domain, info, &s->ep, NULL));
	CHECK(fi_ep_bind(s->ep, &s->eq->fid, 0));
	CHECK(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
	CHECK(fi_enable(s->ep));
}

static uint32_t next_event(struct side *s, struct fi_eq_cm_entry *e)
{
	uint32_t event = 0;
	ssize_t ret = fi_eq_sread(s->eq, &event, e, sizeof(*e), -1, 0);

	if (ret < 0) {
		fprintf(stderr, "node %d: fi_eq_sread: %s\n", node,
			fi_strerror((int)-ret));
		exit(1);
	}
	return event;
}

static int server(const char *port)
{
	struct side s = { 0 };
	struct fid_pep *pep;
	struct fi_eq_cm_entry e;

	open_side(&s, port, true);
	CHECK(fi_passive_ep(s.fabric, s.info, &pep, NULL));
	CHECK(fi_pep_bind(pep, &s.eq->fid, 0));
	CHECK(fi_listen(pep));
	if (next_event(&s, &e) != FI_CONNREQ)
		return 1;
	endpoint(&s, e.info);
	CHECK(fi_accept(s.ep, NULL, 0));
	fi_freeinfo(e.info);
	if (next_event(&s, &e) != FI_CONNECTED)
		return 1;
	printf("server: connected\n");
	fflush(stdout);
	if (next_event(&s, &e) != FI_SHUTDOWN || e.fid != &s.ep->fid) {
		printf("server: not a shutdown of the connection\n");
		return 1;
	}
	printf("server: shutdown\n");
	return 0;
}

static int holder(const char *port)
{
	struct side s = { 0 };
	struct fi_eq_cm_entry e;

	open_side(&s, port, false);
	endpoint(&s, s.info);
	CHECK(fi_connect(s.ep, s.info->dest_addr, NULL, 0));
	if (next_event(&s, &e) != FI_CONNECTED)
		return 1;
	printf("connected\n");
	fflush(stdout);
	for (;;)
		sleep(60);
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	node = atoi(getenv("FI_SIM_NODE") ? getenv("FI_SIM_NODE") : "0");
	return !strcmp(argv[1], "server") ? server(argv[2]) : holder(argv[2]);
}
