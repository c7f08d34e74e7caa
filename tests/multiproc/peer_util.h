/* SPDX-License-Identifier: BSD-2-Clause
 * What the test peers (mp_peer, fd_wait_peer) print when something fails,
 * and how they end: exit status 2 for a libfabric call that failed, 1 for
 * a wrong result or a failed completion. Every line names the peer's node. */
#ifndef FABSIM_TESTS_MULTIPROC_PEER_UTIL_H
#define FABSIM_TESTS_MULTIPROC_PEER_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#define PEER_CHECK(node, call)                                               \
	do {                                                                 \
		int ret_ = (int)(call);                                      \
		if (ret_ < 0) {                                              \
			fprintf(stderr, "node %d: %s: %s\n", (node), #call,  \
				fi_strerror(-ret_));                         \
			exit(2);                                             \
		}                                                            \
	} while (0)

static inline void peer_fail(int node, const char *what)
{
	fprintf(stderr, "node %d: %s\n", node, what);
	exit(1);
}

/* A CQ read (`how`: the call) that returned n < 0, with the error entry
 * when there is one. */
static inline void peer_cq_failed(int node, struct fid_cq *cq, ssize_t n,
				  const char *how)
{
	struct fi_cq_err_entry err = { 0 };

	if (n == -FI_EAVAIL && fi_cq_readerr(cq, &err, 0) == 1)
		fprintf(stderr, "node %d: completion error: %s (%s)\n", node,
			fi_strerror(err.err),
			fi_cq_strerror(cq, err.prov_errno, err.err_data, NULL,
				       0));
	else
		fprintf(stderr, "node %d: %s: %s\n", node, how,
			fi_strerror((int)-n));
	exit(1);
}

#endif
