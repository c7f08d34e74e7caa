/* SPDX-License-Identifier: BSD-2-Clause
 * The libfabric "getting started" walkthrough, completed with the steps it
 * leaves implicit: a server listens, a client connects, the client sends a
 * message, the server receives it, both shut down and close everything.
 *
 *   walkthrough -s [PORT]          server
 *   walkthrough -c HOST [PORT]     client
 *   walkthrough                    both, as two threads of one process
 *
 * It uses only the public API (any provider with FI_EP_MSG works); with
 * fabsim's library it runs on the simulated NIC. `fabsim demo` runs it too
 * (built with WALKTHROUGH_NO_MAIN, it calls walkthrough()). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#define MESSAGE "Hello from the client"
#define BUF_SIZE 64
#define TIMEOUT_MS 10000
#define MAX_POLLS 100000000L /* a bound, not an expectation */

#define CHECK(call)                                                      \
	do {                                                             \
		int ret_ = (int)(call);                                  \
		if (ret_) {                                              \
			fprintf(stderr, "%s: %s (%d)\n", #call,          \
				fi_strerror(-ret_), ret_);               \
			return ret_;                                     \
		}                                                        \
	} while (0)

struct role {
	const char *node;    /* NULL: server */
	const char *port;
	int         status;
};

/* In the two-thread mode the client waits until the server listens. */
static pthread_mutex_t listen_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t listen_cond = PTHREAD_COND_INITIALIZER;
static int listen_done;

static void announce_listening(void)
{
	pthread_mutex_lock(&listen_lock);
	listen_done = 1;
	pthread_cond_broadcast(&listen_cond);
	pthread_mutex_unlock(&listen_lock);
}

/* Everything one side opens, closed in reverse. */
struct side {
	struct fi_info    *info;
	struct fid_fabric *fabric;
	struct fid_eq     *eq;
	struct fid_pep    *pep;
	struct fid_domain *domain;
	struct fid_ep     *ep;
	struct fid_cq     *cq;
	struct fid_mr     *mr;
	char               buf[BUF_SIZE];
};

static int get_info(const struct role *r, struct fi_info **info)
{
	struct fi_info *hints = fi_allocinfo();
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	/* The server names its local port; the client the server's. */
	ret = fi_getinfo(FI_VERSION(1, 11), r->node, r->port,
			 r->node ? 0 : FI_SOURCE, hints, info);
	fi_freeinfo(hints);
	return ret;
}

static int wait_event(struct side *s, uint32_t expected,
		      struct fi_eq_cm_entry *entry, size_t len)
{
	uint32_t event;
	ssize_t rd = fi_eq_sread(s->eq, &event, entry, len, TIMEOUT_MS, 0);

	if (rd == -FI_EAVAIL) {
		struct fi_eq_err_entry err = { 0 };

		fi_eq_readerr(s->eq, &err, 0);
		fprintf(stderr, "event queue error: %s\n", fi_strerror(err.err));
		return -err.err;
	}
	if (rd < 0) {
		fprintf(stderr, "fi_eq_sread: %s\n", fi_strerror((int)-rd));
		return (int)rd;
	}
	if (event != expected) {
		fprintf(stderr, "unexpected event %u (wanted %u)\n", event,
			expected);
		return -FI_EOTHER;
	}
	return 0;
}

/* Domain, CQ, endpoint, and a registered buffer for info. */
static int open_endpoint(struct side *s, struct fi_info *info)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG,
				      .wait_obj = FI_WAIT_UNSPEC };

	CHECK(fi_domain(s->fabric, info, &s->domain, NULL));
	CHECK(fi_cq_open(s->domain, &cq_attr, &s->cq, NULL));
	CHECK(fi_endpoint(s->domain, info, &s->ep, NULL));
	CHECK(fi_ep_bind(s->ep, &s->eq->fid, 0));
	CHECK(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
	CHECK(fi_mr_reg(s->domain, s->buf, sizeof(s->buf), FI_SEND | FI_RECV,
			0, 0, 0, &s->mr, NULL));
	/* fi_endpoint(3): an endpoint takes no transfers until enabled;
	 * the server posts its receive before accepting. */
	CHECK(fi_enable(s->ep));
	return 0;
}

/* Polls the CQ, as the walkthrough does, until one completion arrives. */
static int wait_completion(struct side *s)
{
	struct fi_cq_msg_entry entry;
	ssize_t rd;
	long polls = 0;

	do {
		rd = fi_cq_read(s->cq, &entry, 1);
	} while (rd == -FI_EAGAIN && ++polls < MAX_POLLS);
	if (rd == -FI_EAVAIL) {
		struct fi_cq_err_entry err = { 0 };

		fi_cq_readerr(s->cq, &err, 0);
		fprintf(stderr, "completion error: %s\n",
			fi_cq_strerror(s->cq, err.prov_errno, err.err_data,
				       NULL, 0));
		return -err.err;
	}
	return rd == 1 ? 0 : (int)rd;
}

static void close_side(struct side *s)
{
	if (s->mr)
		fi_close(&s->mr->fid);
	if (s->ep)
		fi_close(&s->ep->fid);
	if (s->cq)
		fi_close(&s->cq->fid);
	if (s->domain)
		fi_close(&s->domain->fid);
	if (s->pep)
		fi_close(&s->pep->fid);
	if (s->eq)
		fi_close(&s->eq->fid);
	if (s->fabric)
		fi_close(&s->fabric->fid);
	fi_freeinfo(s->info);
}

static int serve(struct side *s, const struct role *r)
{
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	uint8_t ev[sizeof(struct fi_eq_cm_entry) + 64];
	struct fi_eq_cm_entry *entry = (void *)ev;
	struct fi_context ctx;
	struct fi_info *req;

	CHECK(get_info(r, &s->info));
	CHECK(fi_fabric(s->info->fabric_attr, &s->fabric, NULL));
	CHECK(fi_eq_open(s->fabric, &eq_attr, &s->eq, NULL));
	CHECK(fi_passive_ep(s->fabric, s->info, &s->pep, NULL));
	CHECK(fi_pep_bind(s->pep, &s->eq->fid, 0));
	CHECK(fi_listen(s->pep));
	printf("server: listening on port %s\n", r->port);
	fflush(stdout);
	announce_listening();

	CHECK(wait_event(s, FI_CONNREQ, entry, sizeof(ev)));
	req = entry->info;
	CHECK(open_endpoint(s, req));
	CHECK(fi_recv(s->ep, s->buf, sizeof(s->buf), fi_mr_desc(s->mr), 0,
		      &ctx));
	CHECK(fi_accept(s->ep, NULL, 0));
	fi_freeinfo(req);
	CHECK(wait_event(s, FI_CONNECTED, entry, sizeof(ev)));
	printf("server: connected\n");

	CHECK(wait_completion(s));
	printf("server: received \"%s\"\n", s->buf);
	CHECK(wait_event(s, FI_SHUTDOWN, entry, sizeof(ev)));
	printf("server: client disconnected\n");
	return strcmp(s->buf, MESSAGE) ? -FI_EIO : 0;
}

static int connect_and_send(struct side *s, const struct role *r)
{
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	uint8_t ev[sizeof(struct fi_eq_cm_entry) + 64];
	struct fi_eq_cm_entry *entry = (void *)ev;
	struct fi_context ctx;

	CHECK(get_info(r, &s->info));
	CHECK(fi_fabric(s->info->fabric_attr, &s->fabric, NULL));
	CHECK(fi_eq_open(s->fabric, &eq_attr, &s->eq, NULL));
	CHECK(open_endpoint(s, s->info));
	CHECK(fi_connect(s->ep, s->info->dest_addr, NULL, 0));
	CHECK(wait_event(s, FI_CONNECTED, entry, sizeof(ev)));
	printf("client: connected\n");

	strcpy(s->buf, MESSAGE);
	CHECK(fi_send(s->ep, s->buf, sizeof(MESSAGE), fi_mr_desc(s->mr), 0,
		      &ctx));
	CHECK(wait_completion(s));
	printf("client: sent \"%s\"\n", s->buf);
	CHECK(fi_shutdown(s->ep, 0));
	return 0;
}

static void *run_role(void *arg)
{
	struct role *r = arg;
	struct side s = { 0 };

	r->status = r->node ? connect_and_send(&s, r) : serve(&s, r);
	if (!r->node)
		announce_listening(); /* even on failure: do not hang */
	close_side(&s);
	return NULL;
}

int walkthrough(int argc, char **argv)
{
	struct role server = { NULL, "7471", 0 }, client = { "127.0.0.1", "7471", 0 };
	pthread_t st;

	if (argc > 1 && !strcmp(argv[1], "-s")) {
		if (argc > 2)
			server.port = argv[2];
		run_role(&server);
		return server.status ? 1 : 0;
	}
	if (argc > 2 && !strcmp(argv[1], "-c")) {
		client.node = argv[2];
		if (argc > 3)
			client.port = argv[3];
		run_role(&client);
		return client.status ? 1 : 0;
	}
	if (argc > 1) {
		fprintf(stderr, "usage: %s [-s [PORT] | -c HOST [PORT]]\n",
			argv[0]);
		return 2;
	}
	/* Both: the server must listen before the client connects. */
	pthread_create(&st, NULL, run_role, &server);
	pthread_mutex_lock(&listen_lock);
	while (!listen_done)
		pthread_cond_wait(&listen_cond, &listen_lock);
	pthread_mutex_unlock(&listen_lock);
	run_role(&client);
	pthread_join(st, NULL);
	printf("walkthrough: %s\n",
	       !server.status && !client.status ? "OK" : "FAILED");
	return server.status || client.status;
}

#ifndef WALKTHROUGH_NO_MAIN
int main(int argc, char **argv)
{
	return walkthrough(argc, argv);
}
#endif
