/* SPDX-License-Identifier: BSD-2-Clause
 * The provider extension "fabsim_ops_v1", opened on a domain with
 * fi_open_ops(): virtual time, the seed, statistics and fault injection
 * while a program runs. Declared for programs in <rdma/fi_ext_fabsim.h>. */
#include <string.h>

#include <rdma/fi_ext_fabsim.h>

#include "sim.h"

static struct sim_domain *domain_of(struct fid *fid)
{
	return container_of(fid, struct sim_domain, domain_fid.fid);
}

static uint64_t ext_now_ns(struct fid *fid)
{
	struct sim_domain *dom = domain_of(fid);
	uint64_t now;

	sim_lock(dom->world);
	now = nic_world_now(dom->world->nic);
	sim_unlock(dom->world);
	return now;
}

static uint64_t ext_seed(struct fid *fid)
{
	/* The world's: on a shared fabric, its creator's. */
	return nic_world_config(domain_of(fid)->world->nic)->seed;
}

static int ext_stats(struct fid *fid, struct fabsim_stats *out)
{
	struct sim_domain *dom = domain_of(fid);
	struct nic_stats st;

	if (!out)
		return -FI_EINVAL;
	sim_lock(dom->world);
	nic_world_stats(dom->world->nic, &st);
	sim_unlock(dom->world);
	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	out->packets_sent = st.packets_sent;
	out->bytes_sent = st.bytes_sent;
	out->packets_received = st.packets_received;
	out->packets_dropped = st.packets_dropped;
	out->packets_corrupted = st.packets_corrupted;
	out->retransmits = st.retransmits;
	out->timeouts = st.timeouts;
	out->seq_naks = st.seq_naks;
	out->rnr_naks = st.rnr_naks;
	out->duplicates = st.duplicates;
	out->retry_exhausted = st.retry_exhausted;
	return 0;
}

static uint32_t ext_host(struct fid *fid)
{
	return nic_host(domain_of(fid)->nic);
}

static int ext_set_link(struct fid *fid, uint32_t link, int up)
{
	struct sim_domain *dom = domain_of(fid);
	int ret;

	sim_lock(dom->world);
	ret = nic_world_set_link(dom->world->nic, link, up != 0);
	sim_unlock(dom->world);
	return ret ? -FI_EINVAL : 0;
}

static int ext_set_loss(struct fid *fid, double rate)
{
	struct sim_domain *dom = domain_of(fid);
	int ret;

	if (!(rate >= 0.0 && rate <= 1.0))
		return -FI_EINVAL;
	sim_lock(dom->world);
	ret = nic_world_set_loss(dom->world->nic, rate);
	sim_unlock(dom->world);
	return ret ? -FI_EINVAL : 0;
}

static int ext_advance(struct fid *fid, uint64_t ns)
{
	struct sim_domain *dom = domain_of(fid);

	sim_lock(dom->world);
	sim_progress_sleep(dom->world, ns);
	sim_unlock(dom->world);
	return 0;
}

static struct fabsim_ops_v1 ext_ops = {
	.size = sizeof(struct fabsim_ops_v1),
	.now_ns = ext_now_ns,
	.seed = ext_seed,
	.stats = ext_stats,
	.host = ext_host,
	.set_link = ext_set_link,
	.set_loss = ext_set_loss,
	.advance = ext_advance,
};

int sim_domain_ops_open(struct fid *fid, const char *name, uint64_t flags,
			void **ops, void *context)
{
	if (!name || !ops)
		return -FI_EINVAL;
	if (strcmp(name, FABSIM_OPS_V1))
		return -FI_ENOSYS;
	if (flags)
		return -FI_EBADFLAGS;
	*ops = &ext_ops;
	return 0;
}
