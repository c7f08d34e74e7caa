/* SPDX-License-Identifier: BSD-2-Clause
 * Two simulated nodes in one process, each an RDM endpoint on the sim
 * provider with a CQ and an AV holding the other, and a 1 MiB registered
 * buffer each: what the sim benchmarks time. */
#ifndef FABSIM_BENCH_PAIR_H
#define FABSIM_BENCH_PAIR_H

#include <stdio.h>
#include <stdlib.h>

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

#define BENCH_BUF (1 << 20)

struct bench_node {
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t peer;
};

struct bench_pair {
	struct fi_info *info;
	struct fid_fabric *fab;
	struct bench_node n[2];
	char *sbuf, *rbuf;         /* node 0 sends from, node 1 receives in */
	struct fid_mr *smr, *rmr;
};

double bench_now_s(void);

/* Opens the fabric (FI_SIM_* settings as the environment has them). */
void bench_pair_open(struct bench_pair *p);
void bench_pair_close(struct bench_pair *p);

/* Node 0 sends `count` messages of `size` bytes to node 1, `batch` at a
 * time, each with its receive posted first; returns the wall seconds. */
double bench_pair_run(struct bench_pair *p, size_t size, long count,
		      int batch);

#endif
