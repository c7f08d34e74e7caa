/* SPDX-License-Identifier: BSD-2-Clause */
#include "bench_pair.h"

#include <string.h>
#include <time.h>

double bench_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void bench_pair_open(struct bench_pair *p)
{
	struct fi_info *hints = fi_allocinfo();
	char name[2][64];

	memset(p, 0, sizeof(*p));
	hints->caps = FI_MSG;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup("sim");
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &p->info));
	fi_freeinfo(hints);
	CHECK(fi_fabric(p->info->fabric_attr, &p->fab, NULL));
	for (int i = 0; i < 2; i++) {
		struct bench_node *n = &p->n[i];
		struct fi_av_attr av = { .type = FI_AV_TABLE };
		struct fi_cq_attr cq = { .format = FI_CQ_FORMAT_CONTEXT,
					 .size = 8192 };
		size_t len = sizeof(name[i]);

		CHECK(fi_domain(p->fab, p->info, &n->dom, NULL));
		CHECK(fi_av_open(n->dom, &av, &n->av, NULL));
		CHECK(fi_cq_open(n->dom, &cq, &n->cq, NULL));
		CHECK(fi_endpoint(n->dom, p->info, &n->ep, NULL));
		CHECK(fi_ep_bind(n->ep, &n->av->fid, 0));
		CHECK(fi_ep_bind(n->ep, &n->cq->fid, FI_TRANSMIT | FI_RECV));
		CHECK(fi_enable(n->ep));
		CHECK(fi_getname(&n->ep->fid, name[i], &len));
	}
	for (int i = 0; i < 2; i++)
		if (fi_av_insert(p->n[i].av, name[1 - i], 1, &p->n[i].peer, 0,
				 NULL) != 1)
			exit(1);
	p->sbuf = malloc(BENCH_BUF);
	p->rbuf = malloc(BENCH_BUF);
	if (!p->sbuf || !p->rbuf)
		exit(1);
	memset(p->sbuf, 0xa5, BENCH_BUF);
	memset(p->rbuf, 0, BENCH_BUF);
	CHECK(fi_mr_reg(p->n[0].dom, p->sbuf, BENCH_BUF, FI_SEND, 0, 0, 0,
			&p->smr, NULL));
	CHECK(fi_mr_reg(p->n[1].dom, p->rbuf, BENCH_BUF, FI_RECV, 0, 0, 0,
			&p->rmr, NULL));
}

void bench_pair_close(struct bench_pair *p)
{
	fi_close(&p->smr->fid);
	fi_close(&p->rmr->fid);
	for (int i = 0; i < 2; i++) {
		fi_close(&p->n[i].ep->fid);
		fi_close(&p->n[i].cq->fid);
		fi_close(&p->n[i].av->fid);
		fi_close(&p->n[i].dom->fid);
	}
	fi_close(&p->fab->fid);
	fi_freeinfo(p->info);
	free(p->sbuf);
	free(p->rbuf);
}

static void reap(struct bench_pair *p, long want)
{
	struct fi_cq_entry e[64];

	while (want > 0) {
		for (int i = 0; i < 2; i++) {
			ssize_t r = fi_cq_read(p->n[i].cq, e, 64);

			if (r > 0)
				want -= r;
			else if (r != -FI_EAGAIN)
				exit(2);
		}
	}
}

double bench_pair_run(struct bench_pair *p, size_t size, long count,
		      int batch)
{
	static struct fi_context2 ctx[2 * 4096];
	void *sdesc = fi_mr_desc(p->smr), *rdesc = fi_mr_desc(p->rmr);
	double t0 = bench_now_s();

	for (long done = 0; done < count; done += batch) {
		for (int b = 0; b < batch; b++)
			CHECK(fi_recv(p->n[1].ep, p->rbuf, size, rdesc,
				      FI_ADDR_UNSPEC, &ctx[b]));
		for (int b = 0; b < batch; b++)
			CHECK(fi_send(p->n[0].ep, p->sbuf, size, sdesc,
				      p->n[0].peer, &ctx[batch + b]));
		reap(p, 2L * batch);
	}
	return bench_now_s() - t0;
}
