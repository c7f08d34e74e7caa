/* SPDX-License-Identifier: BSD-2-Clause
 * fid_fabric: the parent of domains, EQs and passive endpoints. */
#include <stdlib.h>
#include <string.h>

#include <fabsim/fi_stubs.h>

#include "verbs.h"

static int fabric_close(struct fid *fid)
{
	struct vrb_fabric *fab =
		container_of(fid, struct vrb_fabric, fabric_fid.fid);

	pthread_mutex_lock(&fab->lock);
	if (fab->refs) {
		pthread_mutex_unlock(&fab->lock);
		FI_WARN(&vrb_prov, FI_LOG_FABRIC, "fi_close(fabric): %d "
			"domain(s), EQ(s) or passive endpoint(s) still open\n",
			fab->refs);
		return -FI_EBUSY;
	}
	pthread_mutex_unlock(&fab->lock);
	pthread_mutex_destroy(&fab->lock);
	free(fab);
	return 0;
}

/* fi_trywait(3): arms every CQ and checks every EQ; 0 means the
 * application may block on their file descriptors. */
static int fabric_trywait(struct fid_fabric *fabric, struct fid **fids,
			  int count)
{
	if (count < 0 || (count && !fids))
		return -FI_EINVAL;
	for (int i = 0; i < count; i++) {
		int ret;

		switch (fids[i]->fclass) {
		case FI_CLASS_CQ:
			ret = vrb_cq_trywait(container_of(fids[i],
				struct vrb_cq, cq_fid.fid));
			break;
		case FI_CLASS_EQ:
			ret = vrb_eq_trywait(container_of(fids[i],
				struct vrb_eq, eq_fid.fid));
			break;
		default:
			return -FI_EINVAL;
		}
		if (ret)
			return ret;
	}
	return 0;
}

static struct fi_ops fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = fabric_close,
	.bind = fabsim_no_bind,
	.control = fabsim_no_control,
	.ops_open = fabsim_no_ops_open,
	.tostr = fabsim_no_tostr,
	.ops_set = fabsim_no_ops_set,
};

static struct fi_ops_fabric fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = vrb_domain_open,
	.passive_ep = vrb_pep_open,
	.eq_open = vrb_eq_open,
	.wait_open = fabsim_no_wait_open,
	.trywait = fabric_trywait,
	.domain2 = fabsim_no_domain2,
};

int vrb_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context)
{
	struct vrb_fabric *fab;
	int ret = vrb_load(true);

	if (ret)
		return ret;
	if (!attr->name || strncmp(attr->name, "IB-0x", 5)) {
		FI_WARN(&vrb_prov, FI_LOG_FABRIC, "fabric \"%s\" unknown: verbs "
			"fabrics are named IB-0x<GID subnet prefix>, as "
			"fi_getinfo lists them\n", attr->name ? attr->name : "");
		return -FI_ENODATA;
	}
	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	pthread_mutex_init(&fab->lock, NULL);
	fab->fabric_fid.fid.fclass = FI_CLASS_FABRIC;
	fab->fabric_fid.fid.context = context;
	fab->fabric_fid.fid.ops = &fabric_fi_ops;
	fab->fabric_fid.ops = &fabric_ops;
	fab->fabric_fid.api_version = attr->api_version;
	*fabric = &fab->fabric_fid;
	return 0;
}
