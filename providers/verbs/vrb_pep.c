/* SPDX-License-Identifier: BSD-2-Clause
 * fid_pep: a listening rdma_cm id (fi_cm(3) fi_listen, fi_reject). Its
 * connection requests arrive on the EQ it is bound to as FI_CONNREQ. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <fabsim/fi_stubs.h>
#include <fabsim/util.h>

#include "verbs.h"

static int pep_bind_addr(struct vrb_pep *pep, const struct sockaddr *sa)
{
	struct sockaddr_in any = { .sin_family = AF_INET };

	if (vrb_lib.bind_addr(pep->id, (struct sockaddr *)(sa ? sa : (void *)&any))) {
		FI_WARN(&vrb_prov, FI_LOG_EP_CTRL, "rdma_bind_addr: %s\n",
			strerror(errno));
		return errno == EADDRINUSE ? -FI_EADDRINUSE :
		       errno == EADDRNOTAVAIL ? -FI_EADDRNOTAVAIL : -FI_EINVAL;
	}
	pep->bound = true;
	return 0;
}

static int pep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct vrb_pep *pep = container_of(fid, struct vrb_pep, pep_fid.fid);
	struct vrb_eq *eq;
	int ret;

	if (!bfid || bfid->fclass != FI_CLASS_EQ)
		return -FI_EINVAL;
	if (pep->eq)
		return -FI_EINVAL;
	eq = container_of(bfid, struct vrb_eq, eq_fid.fid);
	ret = vrb_eq_adopt(eq, pep->id, &pep->own_channel);
	if (ret)
		return ret;
	pep->eq = eq;
	vrb_eq_ref(eq);
	return 0;
}

static int pep_listen(struct fid_pep *fid)
{
	struct vrb_pep *pep = container_of(fid, struct vrb_pep, pep_fid);
	int ret;

	if (!pep->eq) {
		FI_WARN(&vrb_prov, FI_LOG_EP_CTRL, "fi_listen: bind an EQ "
			"first (connection requests arrive there)\n");
		return -FI_ENOEQ;
	}
	if (!pep->bound) {
		ret = pep_bind_addr(pep, NULL);
		if (ret)
			return ret;
	}
	if (vrb_lib.listen(pep->id, 128)) {
		FI_WARN(&vrb_prov, FI_LOG_EP_CTRL, "rdma_listen: %s\n",
			strerror(errno));
		return -FI_EINVAL;
	}
	return 0;
}

static int pep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct vrb_pep *pep = container_of(fid, struct vrb_pep, pep_fid.fid);
	struct sockaddr *sa = rdma_get_local_addr(pep->id);
	size_t len = vrb_sockaddr_len(sa), given;

	if (!addrlen)
		return -FI_EINVAL;
	if (!len)
		len = sizeof(struct sockaddr_in); /* not bound: all zero */
	given = *addrlen;
	*addrlen = len;
	if (!addr || given < len)
		return -FI_ETOOSMALL;
	memcpy(addr, sa, len);
	return 0;
}

static int pep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct vrb_pep *pep = container_of(fid, struct vrb_pep, pep_fid.fid);

	if (!addr || addrlen < sizeof(struct sockaddr_in) ||
	    vrb_sockaddr_len(addr) > addrlen)
		return -FI_EINVAL;
	if (pep->bound)
		return -FI_EOPBADSTATE;
	return pep_bind_addr(pep, addr);
}

static int pep_reject(struct fid_pep *fid, fid_t handle, const void *param,
		      size_t paramlen)
{
	struct vrb_connreq *req;
	uint8_t data[VRB_CM_REJ_DATA];
	uint8_t len;
	int ret;

	if (!handle || handle->fclass != FI_CLASS_CONNREQ)
		return -FI_EINVAL;
	ret = vrb_cm_pack(param, paramlen, sizeof(data), data, &len);
	if (ret)
		return ret;
	req = container_of(handle, struct vrb_connreq, handle);
	ret = vrb_lib.reject(req->id, data, len) ? -FI_EINVAL : 0;
	vrb_lib.destroy_id(req->id);
	free(req);
	return ret;
}

static int pep_getopt(fid_t fid, int level, int optname, void *optval,
		      size_t *optlen)
{
	if (level != FI_OPT_ENDPOINT || optname != FI_OPT_CM_DATA_SIZE)
		return -FI_ENOPROTOOPT;
	if (!optval || !optlen)
		return -FI_ETOOSMALL;
	return fabsim_getopt_size(optval, optlen, VRB_CM_DATA_SIZE);
}

static int pep_close(struct fid *fid)
{
	struct vrb_pep *pep = container_of(fid, struct vrb_pep, pep_fid.fid);

	vrb_lib.destroy_id(pep->id);
	if (pep->own_channel)
		vrb_lib.destroy_event_channel(pep->own_channel);
	if (pep->eq)
		vrb_eq_unref(pep->eq);
	pthread_mutex_lock(&pep->fabric->lock);
	pep->fabric->refs--;
	pthread_mutex_unlock(&pep->fabric->lock);
	fi_freeinfo(pep->info);
	free(pep);
	return 0;
}

static struct fi_ops pep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = pep_close,
	.bind = pep_bind,
	.control = fabsim_no_control,
	.ops_open = fabsim_no_ops_open,
	.tostr = fabsim_no_tostr,
	.ops_set = fabsim_no_ops_set,
};

static struct fi_ops_ep pep_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = vrb_no_cancel,
	.getopt = pep_getopt,
	.setopt = vrb_no_setopt,
	.tx_ctx = fabsim_no_tx_ctx,
	.rx_ctx = fabsim_no_rx_ctx,
	.rx_size_left = vrb_no_size_left,
	.tx_size_left = vrb_no_size_left,
};

static struct fi_ops_cm pep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = pep_setname,
	.getname = pep_getname,
	.getpeer = fabsim_no_getpeer,
	.connect = fabsim_no_connect,
	.listen = pep_listen,
	.accept = fabsim_no_accept,
	.reject = pep_reject,
	.shutdown = fabsim_no_shutdown,
	.join = fabsim_no_join,
};

int vrb_pep_open(struct fid_fabric *fabric, struct fi_info *info,
		 struct fid_pep **out, void *context)
{
	struct vrb_fabric *fab =
		container_of(fabric, struct vrb_fabric, fabric_fid);
	struct vrb_pep *pep;
	int ret;

	if (!info || !out || !info->ep_attr ||
	    info->ep_attr->type != FI_EP_MSG)
		return -FI_EINVAL;
	pep = calloc(1, sizeof(*pep));
	if (!pep)
		return -FI_ENOMEM;
	pep->info = fi_dupinfo(info);
	pep->own_channel = vrb_lib.create_event_channel();
	if (!pep->info || !pep->own_channel ||
	    vrb_lib.create_id(pep->own_channel, &pep->id, &pep->pep_fid.fid,
			      RDMA_PS_TCP)) {
		FI_WARN(&vrb_prov, FI_LOG_EP_CTRL, "fi_passive_ep: %s\n",
			strerror(errno));
		ret = -FI_ENOMEM;
		goto fail;
	}
	pep->fabric = fab;
	if (info->src_addr) {
		ret = pep_bind_addr(pep, info->src_addr);
		if (ret)
			goto fail;
	}
	pep->pep_fid.fid.fclass = FI_CLASS_PEP;
	pep->pep_fid.fid.context = context;
	pep->pep_fid.fid.ops = &pep_fi_ops;
	pep->pep_fid.ops = &pep_ep_ops;
	pep->pep_fid.cm = &pep_cm_ops;
	pthread_mutex_lock(&fab->lock);
	fab->refs++;
	pthread_mutex_unlock(&fab->lock);
	*out = &pep->pep_fid;
	return 0;
fail:
	if (pep->id)
		vrb_lib.destroy_id(pep->id);
	if (pep->own_channel)
		vrb_lib.destroy_event_channel(pep->own_channel);
	fi_freeinfo(pep->info);
	free(pep);
	return ret;
}
