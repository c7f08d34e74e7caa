/* SPDX-License-Identifier: BSD-2-Clause
 * fid_mr: memory registration with ibv_reg_mr. The descriptor is the
 * region (its lkey goes into every local SGE); the key is the rkey. Keys
 * are the device's (FI_MR_PROV_KEY) and remote addresses are virtual
 * addresses (FI_MR_VIRT_ADDR). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <fabsim/fi_stubs.h>

#include "verbs.h"

static int mr_close(struct fid *fid)
{
	struct vrb_mr *mr = container_of(fid, struct vrb_mr, mr_fid.fid);
	struct vrb_domain *dom = mr->domain;
	int ret = vrb_lib.dereg_mr(mr->mr);

	if (ret) {
		FI_WARN(&vrb_prov, FI_LOG_MR, "fi_close(mr key %#x): "
			"ibv_dereg_mr: %s\n", (unsigned)mr->mr_fid.key,
			strerror(ret));
		return ret == EBUSY ? -FI_EBUSY : -FI_EINVAL;
	}
	pthread_mutex_lock(&dom->lock);
	dom->refs--;
	pthread_mutex_unlock(&dom->lock);
	free(mr);
	return 0;
}

static struct fi_ops mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mr_close,
	.bind = fabsim_no_bind,
	.control = fabsim_no_control,
	.ops_open = fabsim_no_ops_open,
	.tostr = fabsim_no_tostr,
	.ops_set = fabsim_no_ops_set,
};

static int errno_to_fi(int err)
{
	switch (err) {
	case ENOMEM: return -FI_ENOMEM;
	case ENOSPC: return -FI_ENOSPC;
	case EACCES:
	case EPERM: return -FI_EACCES;
	case EFAULT: return -FI_EFAULT;
	default: return -FI_EINVAL;
	}
}

static int register_region(struct vrb_domain *dom, const struct iovec *iov,
			   size_t count, uint64_t access, uint64_t flags,
			   struct fid_mr **out, void *context)
{
	struct vrb_mr *mr;
	int err;

	if (count != 1 || !iov) {
		FI_WARN(&vrb_prov, FI_LOG_MR, "fi_mr_reg: %zu buffers given; "
			"a verbs region is one buffer (mr_iov_limit 1)\n",
			count);
		return -FI_EINVAL;
	}
	if (flags) {
		FI_WARN(&vrb_prov, FI_LOG_MR, "fi_mr_reg: flags %#llx not "
			"supported\n", (unsigned long long)flags);
		return -FI_EBADFLAGS;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	mr->mr = vrb_lib.reg_mr(dom->pd, iov[0].iov_base, iov[0].iov_len,
				vrb_ibv_access(access));
	if (!mr->mr) {
		err = errno;
		FI_WARN(&vrb_prov, FI_LOG_MR, "fi_mr_reg(%p, %zu bytes, access "
			"%#llx): ibv_reg_mr: %s\n", iov[0].iov_base,
			iov[0].iov_len, (unsigned long long)access,
			strerror(err));
		free(mr);
		return errno_to_fi(err);
	}
	mr->domain = dom;
	mr->mr_fid.fid.fclass = FI_CLASS_MR;
	mr->mr_fid.fid.context = context;
	mr->mr_fid.fid.ops = &mr_fi_ops;
	mr->mr_fid.mem_desc = mr;
	mr->mr_fid.key = mr->mr->rkey;
	pthread_mutex_lock(&dom->lock);
	dom->refs++;
	pthread_mutex_unlock(&dom->lock);
	*out = &mr->mr_fid;
	return 0;
}

static struct vrb_domain *domain_of(struct fid *fid)
{
	return fid && fid->fclass == FI_CLASS_DOMAIN ?
		       container_of(fid, struct vrb_domain, domain_fid.fid) :
		       NULL;
}

int vrb_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
	       uint64_t offset, uint64_t requested_key, uint64_t flags,
	       struct fid_mr **mr, void *context)
{
	struct iovec iov = { (void *)buf, len };
	struct vrb_domain *dom = domain_of(fid);

	if (!dom || !mr)
		return -FI_EINVAL;
	return register_region(dom, &iov, 1, access, flags, mr, context);
}

int vrb_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		uint64_t access, uint64_t offset, uint64_t requested_key,
		uint64_t flags, struct fid_mr **mr, void *context)
{
	struct vrb_domain *dom = domain_of(fid);

	if (!dom || !mr)
		return -FI_EINVAL;
	return register_region(dom, iov, count, access, flags, mr, context);
}

int vrb_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		   uint64_t flags, struct fid_mr **mr)
{
	struct vrb_domain *dom = domain_of(fid);

	if (!dom || !attr || !mr)
		return -FI_EINVAL;
	if (attr->iface != FI_HMEM_SYSTEM) {
		FI_WARN(&vrb_prov, FI_LOG_MR, "fi_mr_regattr: only host memory "
			"(FI_HMEM_SYSTEM) is supported\n");
		return -FI_EOPNOTSUPP;
	}
	return register_region(dom, attr->mr_iov, attr->iov_count,
			       attr->access, flags, mr, attr->context);
}
