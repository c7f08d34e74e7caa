/* SPDX-License-Identifier: BSD-2-Clause
 * fid_domain: one simulated NIC, attached to the next free host of the
 * fabric's topology. Queries about atomics answer from the NIC model. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <fabsim/fi_stubs.h>

#include "shared/shared_world.h"
#include "sim.h"

static int domain_close(struct fid *fid)
{
	struct sim_domain *dom = container_of(fid, struct sim_domain, domain_fid.fid);
	struct sim_world *world = dom->world;

	sim_lock(world);
	if (dom->refs) {
		sim_unlock(world);
		FI_WARN(&sim_prov, FI_LOG_DOMAIN,
			"fi_close(domain): %d object(s) still open on it\n",
			dom->refs);
		return -FI_EBUSY;
	}
	nic_close(dom->nic);
	if (dom->eq)
		dom->eq->refs--;
	dom->fabric->domains--;
	sim_unlock(world);
	sim_ptrset_free(&dom->mrs);
	fi_freeinfo(dom->info);
	free(dom);
	return 0;
}

/* fi_query_atomic(3): what fi_atomicvalid and friends report. */
static int domain_query_atomic(struct fid_domain *domain,
			       enum fi_datatype datatype, enum fi_op op,
			       struct fi_atomic_attr *attr, uint64_t flags)
{
	struct sim_domain *dom = container_of(domain, struct sim_domain, domain_fid);
	bool compare = flags & FI_COMPARE_ATOMIC;
	bool fetch = flags & FI_FETCH_ATOMIC;
	bool is_compare_op = op >= FI_CSWAP && op <= FI_MSWAP;

	if (!attr)
		return -FI_EINVAL;
	if ((flags & ~(FI_COMPARE_ATOMIC | FI_FETCH_ATOMIC | FI_TAGGED)) ||
	    (compare && fetch))
		return -FI_EBADFLAGS;
	/* Compare ops only through fi_compare_atomic; reads only fetch. */
	if (compare != is_compare_op || (op == FI_ATOMIC_READ && !fetch) ||
	    !nic_atomic_supported(datatype, op))
		return -FI_EOPNOTSUPP;
	attr->size = nic_atomic_size(datatype);
	attr->count = nic_atomic_max_count(dom->world->nic, datatype, compare);
	return 0;
}

/* fi_domain(3): an EQ bound to a domain is the default EQ of its
 * endpoints' control events; with FI_REG_MR, registrations complete
 * asynchronously through it. */
static int domain_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct sim_domain *dom = container_of(fid, struct sim_domain,
					      domain_fid.fid);
	struct sim_eq *eq;

	if (flags & ~FI_REG_MR)
		return -FI_EBADFLAGS;
	if (!bfid || bfid->fclass != FI_CLASS_EQ)
		return -FI_EINVAL;
	eq = container_of(bfid, struct sim_eq, eq_fid.fid);
	if (eq->fabric != dom->fabric)
		return -FI_EINVAL;
	sim_lock(dom->world);
	if (dom->eq) {
		sim_unlock(dom->world);
		FI_WARN(&sim_prov, FI_LOG_DOMAIN,
			"fi_domain_bind: an EQ is bound already\n");
		return -FI_EINVAL;
	}
	dom->eq = eq;
	dom->async_mr = flags & FI_REG_MR;
	eq->refs++;
	sim_unlock(dom->world);
	return 0;
}

/* fi_mr(3): raw keys, which every region has (FI_MR_RAW is not asked):
 * mapped here, and a mapped key holds nothing to release. */
static int domain_control(struct fid *fid, int command, void *arg)
{
	switch (command) {
	case FI_MAP_RAW_MR:
		return sim_mr_map_raw(arg);
	case FI_UNMAP_KEY:
		return arg ? 0 : -FI_EINVAL;
	default:
		return -FI_ENOSYS;
	}
}

static struct fi_ops domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = domain_close,
	.bind = domain_bind,
	.control = domain_control,
	.ops_open = sim_domain_ops_open,
	.tostr = fabsim_no_tostr,
	.ops_set = fabsim_no_ops_set,
};

static struct fi_ops_domain domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = sim_av_open,
	.cq_open = sim_cq_open,
	.endpoint = sim_ep_open,
	.scalable_ep = fabsim_no_scalable_ep,
	.cntr_open = sim_cntr_open,
	.poll_open = sim_poll_open,
	.stx_ctx = fabsim_no_stx_ctx,
	.srx_ctx = fabsim_no_srx_ctx,
	.query_atomic = domain_query_atomic,
	.query_collective = fabsim_no_query_collective,
	.endpoint2 = fabsim_no_endpoint2,
};

static struct fi_ops_mr domain_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = sim_mr_reg,
	.regv = sim_mr_regv,
	.regattr = sim_mr_regattr,
};

/* The registration rules in force, as FI_MR_* bits, whatever API version
 * asked: FI_MR_BASIC is the bits it stands for, FI_LOCAL_MR is FI_MR_LOCAL. */
static int effective_mr_mode(const struct fi_info *info)
{
	int mode = info->domain_attr ? info->domain_attr->mr_mode : 0;

	if (mode == FI_MR_BASIC)
		mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	else if (mode == FI_MR_SCALABLE)
		mode = 0;
	if (info->mode & FI_LOCAL_MR)
		mode |= FI_MR_LOCAL;
	return mode;
}

/* Which simulated host the domain's NIC is: the host of the connection
 * request or listener it answers, the host its source address names, or
 * the next free one (each such domain is a new node). */
static uint32_t host_for(struct sim_world *world, const struct fi_info *info)
{
	const struct sockaddr_in *src = info->src_addr;

	if (world->shared)
		return shared_world_node(world->shared);
	if (info->handle)
		return sim_cm_handle_host(info->handle);
	if (src && info->addr_format == FI_SOCKADDR_IN &&
	    info->src_addrlen >= sizeof(*src) &&
	    (ntohl(src->sin_addr.s_addr) >> 24) == 10)
		return nic_world_host_of_ipv4(world->nic, src->sin_addr);
	return NIC_HOST_ANY;
}

int sim_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context)
{
	struct sim_fabric *fab = container_of(fabric, struct sim_fabric, fabric_fid);
	struct sim_domain *dom;
	nm_error err;
	int ret;

	if (!info || !domain)
		return -FI_EINVAL;
	ret = sim_info_check_open(info, "fi_domain");
	if (ret)
		return ret;
	if (info->domain_attr && info->domain_attr->name &&
	    strcmp(info->domain_attr->name, SIM_DOMAIN_NAME)) {
		FI_WARN(&sim_prov, FI_LOG_DOMAIN,
			"domain \"%s\" unknown; sim offers \"%s\"\n",
			info->domain_attr->name, SIM_DOMAIN_NAME);
		return -FI_EINVAL;
	}
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -FI_ENOMEM;
	dom->info = fi_dupinfo(info);
	if (!dom->info) {
		free(dom);
		return -FI_ENOMEM;
	}
	dom->fabric = fab;
	dom->world = fab->world;
	dom->mr_mode = effective_mr_mode(info);
	sim_lock(dom->world);
	ret = nic_open(dom->world->nic, host_for(dom->world, info), &dom->nic,
		       &err);
	if (!ret) {
		fab->domains++;
		sim_cm_serve(dom->world, dom->nic);
	}
	sim_unlock(dom->world);
	if (ret) {
		FI_WARN(&sim_prov, FI_LOG_DOMAIN, "fi_domain: %s\n", err.msg);
		fi_freeinfo(dom->info);
		free(dom);
		return ret == -ENOSPC ? -FI_ENOSPC : sim_errno(ret);
	}
	dom->domain_fid.fid.fclass = FI_CLASS_DOMAIN;
	dom->domain_fid.fid.context = context;
	dom->domain_fid.fid.ops = &domain_fi_ops;
	dom->domain_fid.ops = &domain_ops;
	dom->domain_fid.mr = &domain_mr_ops;
	*domain = &dom->domain_fid;
	return 0;
}
