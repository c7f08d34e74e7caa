/* SPDX-License-Identifier: BSD-2-Clause
 * fabsim's provider extension: what a program (or a test) can ask the
 * simulated fabric while it runs.
 *
 *   struct fabsim_ops_v1 *sim;
 *   fi_open_ops(&domain->fid, FABSIM_OPS_V1, 0, (void **)&sim, NULL);
 *   uint64_t t = sim->now_ns(&domain->fid);
 *
 * Every function takes the domain's fid.
 */
#ifndef FI_EXT_FABSIM_H
#define FI_EXT_FABSIM_H

#include <stdint.h>

#include <rdma/fabric.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FABSIM_OPS_V1 "fabsim_ops_v1"

struct fabsim_stats {
	size_t   size;              /* sizeof(struct fabsim_stats) */
	uint64_t packets_sent;      /* data, ACK and response packets */
	uint64_t bytes_sent;        /* their bytes on the wire */
	uint64_t packets_received;
	uint64_t packets_dropped;   /* lost in the network */
	uint64_t packets_corrupted; /* arrived damaged, discarded */
	uint64_t retransmits;
	uint64_t timeouts;
	uint64_t seq_naks;
	uint64_t rnr_naks;          /* receiver-not-ready events */
	uint64_t duplicates;
	uint64_t retry_exhausted;
};

struct fabsim_ops_v1 {
	size_t size;
	/* Virtual time of the fabric, in nanoseconds. */
	uint64_t (*now_ns)(struct fid *domain);
	/* The seed every random stream derives from. */
	uint64_t (*seed)(struct fid *domain);
	/* Counters of the whole fabric since it was opened. */
	int (*stats)(struct fid *domain, struct fabsim_stats *out);
	/* The topology host this domain's NIC sits on. */
	uint32_t (*host)(struct fid *domain);
	/* Fault injection: a link (topology numbering) down or up now. */
	int (*set_link)(struct fid *domain, uint32_t link, int up);
	/* Fault injection: Bernoulli loss on every link from now on. */
	int (*set_loss)(struct fid *domain, double rate);
	/* Let virtual time pass (as a busy program would). */
	int (*advance)(struct fid *domain, uint64_t ns);
};

#ifdef __cplusplus
}
#endif

#endif /* FI_EXT_FABSIM_H */
