/* SPDX-License-Identifier: BSD-2-Clause
 * bazel run -c opt //providers/sim/bench:bench_msg [-- small_count large_count]
 *
 * Wall-clock cost of simulated messages through the libfabric API on the
 * sim provider, two nodes in one process, `ideal` preset:
 *   - 8-byte messages: post (send + receive), delivery, both completions;
 *   - 1 MiB messages: throughput, next to memcpy of the same buffers
 *     measured in the same run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#define CHECK(call)                                                       \
	do {                                                              \
		int ret_ = (int)(call);                                   \
		if (ret_) {                                               \
			fprintf(stderr, "%s: %s\n", #call,                \
				fi_strerror(-ret_));                      \
			exit(1);                                          \
		}                                                         \
	} while (0)

struct node {
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t peer;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void open_nodes(struct fi_info *info, struct fid_fabric *fab,
		       struct node *n)
{
	char name[2][64];

	for (int i = 0; i < 2; i++) {
		struct fi_av_attr av = { .type = FI_AV_TABLE };
		struct fi_cq_attr cq = { .format = FI_CQ_FORMAT_CONTEXT,
					 .size = 8192 };
		size_t len = sizeof(name[i]);

		CHECK(fi_domain(fab, info, &n[i].dom, NULL));
		CHECK(fi_av_open(n[i].dom, &av, &n[i].av, NULL));
		CHECK(fi_cq_open(n[i].dom, &cq, &n[i].cq, NULL));
		CHECK(fi_endpoint(n[i].dom, info, &n[i].ep, NULL));
		CHECK(fi_ep_bind(n[i].ep, &n[i].av->fid, 0));
		CHECK(fi_ep_bind(n[i].ep, &n[i].cq->fid, FI_TRANSMIT | FI_RECV));
		CHECK(fi_enable(n[i].ep));
		CHECK(fi_getname(&n[i].ep->fid, name[i], &len));
	}
	for (int i = 0; i < 2; i++)
		if (fi_av_insert(n[i].av, name[1 - i], 1, &n[i].peer, 0, NULL) != 1)
			exit(1);
}

static void reap(struct node *n, long want)
{
	struct fi_cq_entry e[64];

	while (want > 0) {
		for (int i = 0; i < 2; i++) {
			ssize_t r = fi_cq_read(n[i].cq, e, 64);

			if (r > 0)
				want -= r;
			else if (r != -FI_EAGAIN)
				exit(2);
		}
	}
}

/* Sends `count` messages of `size` bytes in batches of `batch`; returns the
 * wall seconds. */
static double run(struct node *n, size_t size, long count, int batch,
		  char *sbuf, char *rbuf, void *sdesc, void *rdesc)
{
	static struct fi_context2 ctx[2 * 4096];
	double t0 = now_s();

	for (long done = 0; done < count; done += batch) {
		for (int b = 0; b < batch; b++)
			CHECK(fi_recv(n[1].ep, rbuf, size, rdesc, FI_ADDR_UNSPEC,
				      &ctx[b]));
		for (int b = 0; b < batch; b++)
			CHECK(fi_send(n[0].ep, sbuf, size, sdesc, n[0].peer,
				      &ctx[batch + b]));
		reap(n, 2L * batch);
	}
	return now_s() - t0;
}

int main(int argc, char **argv)
{
	long small = argc > 1 ? atol(argv[1]) : 1000000;
	long large = argc > 2 ? atol(argv[2]) : 2000;
	size_t big = 1 << 20;
	struct fi_info *hints = fi_allocinfo(), *info;
	struct fid_fabric *fab;
	struct fid_mr *smr, *rmr;
	struct node n[2];
	char *sbuf = malloc(big), *rbuf = malloc(big);
	double t, copy_t;

	setenv("FI_SIM_PRESET", "ideal", 0);
	hints->caps = FI_MSG;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup("sim");
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
	CHECK(fi_fabric(info->fabric_attr, &fab, NULL));
	open_nodes(info, fab, n);
	memset(sbuf, 1, big);
	memset(rbuf, 0, big);
	CHECK(fi_mr_reg(n[0].dom, sbuf, big, FI_SEND, 0, 0, 0, &smr, NULL));
	CHECK(fi_mr_reg(n[1].dom, rbuf, big, FI_RECV, 0, 0, 0, &rmr, NULL));

	run(n, 8, 10000, 256, sbuf, rbuf, fi_mr_desc(smr), fi_mr_desc(rmr));
	t = run(n, 8, small, 256, sbuf, rbuf, fi_mr_desc(smr), fi_mr_desc(rmr));
	printf("8-byte messages: %ld in %.3f s: %.0f ns per message "
	       "(post send+recv, delivery, 2 completions)\n",
	       small, t, t * 1e9 / small);

	t = run(n, big, large, 16, sbuf, rbuf, fi_mr_desc(smr), fi_mr_desc(rmr));
	copy_t = now_s();
	for (long i = 0; i < large; i++) {
		memcpy(rbuf, sbuf, big);
		__asm__ volatile("" : : "r"(rbuf) : "memory");
	}
	copy_t = now_s() - copy_t;
	printf("1 MiB messages: %ld in %.3f s: %.2f GB/s; memcpy of the same "
	       "buffers %.2f GB/s; ratio %.2f\n", large, t,
	       large * (double)big / t / 1e9,
	       large * (double)big / copy_t / 1e9, copy_t / t);

	fi_close(&smr->fid);
	fi_close(&rmr->fid);
	for (int i = 0; i < 2; i++) {
		fi_close(&n[i].ep->fid);
		fi_close(&n[i].cq->fid);
		fi_close(&n[i].av->fid);
		fi_close(&n[i].dom->fid);
	}
	fi_close(&fab->fid);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	free(sbuf);
	free(rbuf);
	return 0;
}
