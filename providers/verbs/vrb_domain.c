/* SPDX-License-Identifier: BSD-2-Clause
 * fid_domain: one device (the context rdma_cm uses for it) and a
 * protection domain. Atomics are what verbs has: one 64-bit compare-swap
 * or fetch-add, plus 64-bit reads and writes done as RDMA. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <fabsim/fi_stubs.h>

#include "verbs.h"

struct ibv_context *vrb_cm_device(const char *name,
				  struct ibv_context ***list)
{
	int count = 0;

	*list = vrb_lib.get_devices(&count);
	for (int i = 0; *list && i < count; i++)
		if (!strcmp(vrb_lib.get_device_name((*list)[i]->device), name))
			return (*list)[i];
	if (*list)
		vrb_lib.free_devices(*list);
	*list = NULL;
	return NULL;
}

static int domain_close(struct fid *fid)
{
	struct vrb_domain *dom =
		container_of(fid, struct vrb_domain, domain_fid.fid);

	pthread_mutex_lock(&dom->lock);
	if (dom->refs) {
		pthread_mutex_unlock(&dom->lock);
		FI_WARN(&vrb_prov, FI_LOG_DOMAIN, "fi_close(domain %s): %d "
			"object(s) still open on it\n",
			dom->info->domain_attr->name, dom->refs);
		return -FI_EBUSY;
	}
	pthread_mutex_unlock(&dom->lock);
	if (vrb_lib.dealloc_pd(dom->pd))
		FI_WARN(&vrb_prov, FI_LOG_DOMAIN, "ibv_dealloc_pd failed\n");
	vrb_lib.free_devices(dom->cm_devices);
	pthread_mutex_lock(&dom->fabric->lock);
	dom->fabric->refs--;
	pthread_mutex_unlock(&dom->fabric->lock);
	pthread_mutex_destroy(&dom->lock);
	fi_freeinfo(dom->info);
	free(dom);
	return 0;
}

int vrb_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
		     enum fi_op op, struct fi_atomic_attr *attr, uint64_t flags)
{
	bool compare = flags & FI_COMPARE_ATOMIC;
	bool fetch = flags & FI_FETCH_ATOMIC;
	bool ok;

	if (!attr)
		return -FI_EINVAL;
	if ((flags & ~(FI_COMPARE_ATOMIC | FI_FETCH_ATOMIC)) ||
	    (compare && fetch))
		return -FI_EBADFLAGS;
	if (datatype != FI_UINT64 && datatype != FI_INT64)
		return -FI_EOPNOTSUPP;
	if (compare)
		ok = op == FI_CSWAP;
	else if (fetch)
		ok = op == FI_SUM || op == FI_ATOMIC_READ;
	else
		ok = op == FI_SUM || op == FI_ATOMIC_WRITE;
	if (!ok)
		return -FI_EOPNOTSUPP;
	attr->size = sizeof(uint64_t);
	attr->count = 1;
	return 0;
}

static struct fi_ops domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = domain_close,
	.bind = fabsim_no_bind,
	.control = fabsim_no_control,
	.ops_open = fabsim_no_ops_open,
	.tostr = fabsim_no_tostr,
	.ops_set = fabsim_no_ops_set,
};

static struct fi_ops_domain domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = vrb_no_av_open,
	.cq_open = vrb_cq_open,
	.endpoint = vrb_ep_open,
	.scalable_ep = fabsim_no_scalable_ep,
	.cntr_open = vrb_no_cntr_open,
	.poll_open = fabsim_no_poll_open,
	.stx_ctx = fabsim_no_stx_ctx,
	.srx_ctx = fabsim_no_srx_ctx,
	.query_atomic = vrb_query_atomic,
	.query_collective = fabsim_no_query_collective,
	.endpoint2 = fabsim_no_endpoint2,
};

static struct fi_ops_mr domain_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = vrb_mr_reg,
	.regv = vrb_mr_regv,
	.regattr = vrb_mr_regattr,
};

int vrb_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context)
{
	struct vrb_fabric *fab =
		container_of(fabric, struct vrb_fabric, fabric_fid);
	int mr_mode = info ? vrb_effective_mr_mode(info) : 0;
	struct vrb_domain *dom;

	if (!info || !domain || !info->domain_attr ||
	    !info->domain_attr->name)
		return -FI_EINVAL;
	if ((mr_mode & VRB_MR_MODE) != VRB_MR_MODE) {
		FI_WARN(&vrb_prov, FI_LOG_DOMAIN, "fi_domain: mr_mode %#x; a "
			"verbs device needs FI_MR_LOCAL, FI_MR_VIRT_ADDR, "
			"FI_MR_ALLOCATED and FI_MR_PROV_KEY\n", mr_mode);
		return -FI_EINVAL;
	}
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -FI_ENOMEM;
	dom->info = fi_dupinfo(info);
	dom->ctx = vrb_cm_device(info->domain_attr->name, &dom->cm_devices);
	if (!dom->info || !dom->ctx) {
		if (dom->info && !dom->ctx)
			FI_WARN(&vrb_prov, FI_LOG_DOMAIN, "fi_domain: no device "
				"named \"%s\" (fi_getinfo lists them)\n",
				info->domain_attr->name);
		fi_freeinfo(dom->info);
		free(dom);
		return -FI_ENODEV;
	}
	if (vrb_lib.query_device(dom->ctx, &dom->dev))
		memset(&dom->dev, 0, sizeof(dom->dev));
	dom->pd = vrb_lib.alloc_pd(dom->ctx);
	if (!dom->pd) {
		FI_WARN(&vrb_prov, FI_LOG_DOMAIN, "ibv_alloc_pd on %s: %s\n",
			info->domain_attr->name, strerror(errno));
		vrb_lib.free_devices(dom->cm_devices);
		fi_freeinfo(dom->info);
		free(dom);
		return -FI_ENOMEM;
	}
	dom->inline_max = info->tx_attr ? info->tx_attr->inject_size : 0;
	pthread_mutex_init(&dom->lock, NULL);
	dom->fabric = fab;
	pthread_mutex_lock(&fab->lock);
	fab->refs++;
	pthread_mutex_unlock(&fab->lock);
	dom->domain_fid.fid.fclass = FI_CLASS_DOMAIN;
	dom->domain_fid.fid.context = context;
	dom->domain_fid.fid.ops = &domain_fi_ops;
	dom->domain_fid.ops = &domain_ops;
	dom->domain_fid.mr = &domain_mr_ops;
	*domain = &dom->domain_fid;
	return 0;
}
