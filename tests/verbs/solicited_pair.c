/* Two simulated NICs of one process (FABSIM_VERBS_DEVICES=2), an RC queue
 * pair on each, connected to each other; the first sends one message
 * without IBV_SEND_SOLICITED, then one with it, each received. With
 * FI_SIM_PCAP the wire shows the SE bit on the second only
 * (solicited_trace_test.sh). Prints "ok" and exits 0 when both arrived.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

struct side {
	struct ibv_context *ctx;
	struct ibv_pd      *pd;
	struct ibv_cq      *cq;
	struct ibv_qp      *qp;
	struct ibv_mr      *mr;
	union ibv_gid       gid;
	char                buf[64];
};

static void die(const char *what)
{
	fprintf(stderr, "solicited_pair: %s (%s)\n", what, strerror(errno));
	exit(1);
}

static void open_side(struct side *s, struct ibv_device *dev)
{
	struct ibv_qp_init_attr init = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	if (!(s->ctx = ibv_open_device(dev)) ||
	    !(s->pd = ibv_alloc_pd(s->ctx)) ||
	    !(s->cq = ibv_create_cq(s->ctx, 8, NULL, NULL, 0)))
		die("cannot open a device");
	init.send_cq = init.recv_cq = s->cq;
	if (!(s->qp = ibv_create_qp(s->pd, &init)) ||
	    !(s->mr = ibv_reg_mr(s->pd, s->buf, sizeof(s->buf),
				 IBV_ACCESS_LOCAL_WRITE)) ||
	    ibv_query_gid(s->ctx, 1, 1, &s->gid))
		die("cannot make a QP");
}

static void connect_to(struct side *s, const struct side *peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
	};

	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("RTS");
}

static void wait_one(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	for (long i = 0; i < 1000000; i++) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			die("ibv_poll_cq");
		if (n == 1) {
			if (wc.status != IBV_WC_SUCCESS) {
				fprintf(stderr, "solicited_pair: %s\n",
					ibv_wc_status_str(wc.status));
				exit(1);
			}
			return;
		}
	}
	die("no completion");
}

/* Sends one message from a to b, with `flags`, and sees it received. */
static void exchange(struct side *a, struct side *b, unsigned flags)
{
	struct ibv_sge rsge = { (uintptr_t)b->buf, sizeof(b->buf),
				b->mr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_sge ssge = { (uintptr_t)a->buf, 8, a->mr->lkey };
	struct ibv_send_wr swr = {
		.sg_list = &ssge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | flags,
	}, *sbad;

	if (ibv_post_recv(b->qp, &rwr, &rbad) ||
	    ibv_post_send(a->qp, &swr, &sbad))
		die("post");
	wait_one(a->cq);
	wait_one(b->cq);
}

int main(void)
{
	struct side a = { 0 }, b = { 0 };
	struct ibv_device **list;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (!list || n < 2)
		die("need two devices (FABSIM_VERBS_DEVICES=2)");
	open_side(&a, list[0]);
	open_side(&b, list[1]);
	connect_to(&a, &b);
	connect_to(&b, &a);
	exchange(&a, &b, 0);
	exchange(&a, &b, IBV_SEND_SOLICITED);
	printf("ok\n");
	return 0;
}
