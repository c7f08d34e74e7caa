/* A verbs program whose exit handler, registered before its first verbs
 * call, tears its objects down: on a shared fabric it must still find the
 * fabric there (the face leaves it only after every exit handler), and
 * exit. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <infiniband/verbs.h>

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;

static void cleanup(void)
{
	if (!qp)
		return; /* main failed: it said why */
	if (ibv_destroy_qp(qp) || ibv_destroy_cq(cq) || ibv_dealloc_pd(pd) ||
	    ibv_close_device(ctx)) {
		fprintf(stderr, "cleanup failed\n");
		_exit(1);
	}
	printf("cleaned up\n");
	fflush(stdout);
}

int main(void)
{
	struct ibv_device **list;
	struct ibv_qp_init_attr init = { 0 };
	int n = 0;

	atexit(cleanup);
	list = ibv_get_device_list(&n);
	if (!list || n < 1) {
		fprintf(stderr, "no device\n");
		return 1;
	}
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = ctx ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	if (!pd || !cq) {
		fprintf(stderr, "cannot set up\n");
		return 1;
	}
	init.send_cq = cq;
	init.recv_cq = cq;
	init.cap.max_send_wr = init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	init.qp_type = IBV_QPT_RC;
	qp = ibv_create_qp(pd, &init);
	if (!qp) {
		fprintf(stderr, "cannot create a QP\n");
		return 1;
	}
	return 0;
}
