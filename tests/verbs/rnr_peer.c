/* SPDX-License-Identifier: BSD-2-Clause
 * One side of a connection whose server's send finds no receive posted:
 *   rnr_peer server PORT   accepts, sends 8 bytes, expects the send to fail
 *                          with RNR_RETRY_EXC_ERR, then disconnects;
 *   rnr_peer client PORT   connects with rnr_retry_count 0 (the server's QP
 *                          takes it from the REQ), posts no receive, and
 *                          waits for the server's DISCONNECTED.
 * Either process may run the model when the server's QP fails: the failure
 * must reach the server's own process whichever does (two_process_test).
 *   rnr_peer holder PORT   connects with unlimited RNR retries, posts no
 *                          receive, says "connected" and sleeps until
 *                          killed;
 *   rnr_peer survivor PORT the server of a holder: once the holder is
 *                          killed, its send is not retried for ever: the
 *                          connection ends (WR_FLUSH_ERR), or, when the
 *                          dead host's silence is seen first, its retries
 *                          run out (RETRY_EXC_ERR) — death is found in
 *                          real time;
 *   rnr_peer watcher PORT  the server of a holder that sends nothing: once
 *                          the holder is killed, its connection hears
 *                          DISCONNECTED, as from the kernel of a killed
 *                          process.
 * Exit status 0 when the side saw what it should. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

static struct rdma_cm_id *endpoint(const char *port, int passive)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};
	struct rdma_cm_id *id = NULL;

	hints.ai_flags = passive ? RAI_PASSIVE : 0;
	if (rdma_getaddrinfo("10.0.0.1", port, &hints, &res)) {
		perror("rdma_getaddrinfo");
		return NULL;
	}
	if (rdma_create_ep(&id, res, NULL, &attr)) {
		perror("rdma_create_ep");
		id = NULL;
	}
	rdma_freeaddrinfo(res);
	return id;
}

/* The server side of one connection on PORT (NULL on failure). */
static struct rdma_cm_id *accepted(const char *port,
				   struct rdma_cm_id **listener)
{
	struct rdma_cm_id *id;

	*listener = endpoint(port, 1);
	if (!*listener || rdma_listen(*listener, 1) ||
	    rdma_get_request(*listener, &id) || rdma_accept(id, NULL)) {
		perror("accept");
		return NULL;
	}
	return id;
}

/* Waits for id's next rdma_cm event: 0 when it is DISCONNECTED. */
static int disconnected(const char *who, struct rdma_cm_id *id)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;
	int ret;

	if (!ch || rdma_migrate_id(id, ch) || rdma_get_cm_event(ch, &ev)) {
		perror("event");
		return 1;
	}
	printf("%s: %s\n", who, rdma_event_str(ev->event));
	ret = ev->event == RDMA_CM_EVENT_DISCONNECTED ? 0 : 1;
	rdma_ack_cm_event(ev);
	return ret;
}

static int server(const char *port, enum ibv_wc_status want,
		  enum ibv_wc_status or_else)
{
	struct rdma_cm_id *listener, *id = accepted(port, &listener);
	static char buf[8] = "no room";
	struct ibv_mr *mr;
	struct ibv_wc wc;

	if (!id)
		return 1;
	mr = rdma_reg_msgs(id, buf, sizeof(buf));
	if (!mr || rdma_post_send(id, NULL, buf, sizeof(buf), mr, 0) ||
	    rdma_get_send_comp(id, &wc) != 1) {
		perror("server: send");
		return 1;
	}
	printf("server: send: %s\n", ibv_wc_status_str(wc.status));
	rdma_disconnect(id);
	rdma_dereg_mr(mr);
	rdma_destroy_ep(id);
	rdma_destroy_ep(listener);
	return wc.status == want || wc.status == or_else ? 0 : 1;
}

static int watcher(const char *port)
{
	struct rdma_cm_id *listener, *id = accepted(port, &listener);

	return id ? disconnected("watcher", id) : 1;
}

static int client(const char *port, bool hold)
{
	struct rdma_cm_id *id = endpoint(port, 0);
	struct rdma_conn_param param = { .retry_count = 7,
					 .rnr_retry_count = hold ? 7 : 0 };
	int ret;

	if (!id || rdma_connect(id, &param)) {
		perror("client: rdma_connect");
		return 1;
	}
	if (hold) {
		printf("connected\n");
		fflush(stdout);
		for (;;)
			sleep(60);
	}
	ret = disconnected("client", id);
	rdma_destroy_ep(id);
	return ret;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	if (!strcmp(argv[1], "server"))
		return server(argv[2], IBV_WC_RNR_RETRY_EXC_ERR,
			      IBV_WC_RNR_RETRY_EXC_ERR);
	if (!strcmp(argv[1], "survivor"))
		return server(argv[2], IBV_WC_WR_FLUSH_ERR,
			      IBV_WC_RETRY_EXC_ERR);
	if (!strcmp(argv[1], "watcher"))
		return watcher(argv[2]);
	return client(argv[2], !strcmp(argv[1], "holder"));
}
