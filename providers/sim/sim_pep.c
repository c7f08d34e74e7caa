/* SPDX-License-Identifier: BSD-2-Clause
 * fid_pep: passive endpoints (fi_endpoint(3), fi_cm(3)): a listener on a
 * port; connection requests arrive on its EQ as FI_CONNREQ. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <fabsim/fi_stubs.h>
#include <fabsim/util.h>

#include "sim.h"

static int pep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct sim_pep *pep = container_of(fid, struct sim_pep, pep_fid.fid);
	int ret = 0;

	if (!bfid || bfid->fclass != FI_CLASS_EQ)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	sim_lock(pep->fabric->world);
	if (pep->eq) {
		ret = -FI_EINVAL;
	} else {
		pep->eq = container_of(bfid, struct sim_eq, eq_fid.fid);
		pep->eq->refs++;
	}
	sim_unlock(pep->fabric->world);
	return ret;
}

static int pep_close(struct fid *fid)
{
	struct sim_pep *pep = container_of(fid, struct sim_pep, pep_fid.fid);
	struct sim_world *world = pep->fabric->world;

	sim_lock(world);
	sim_cm_unlisten(pep);
	if (pep->eq) {
		sim_eq_forget(pep->eq, &pep->pep_fid.fid);
		pep->eq->refs--;
	}
	pep->fabric->children--; /* a PEP counts as a child of the fabric */
	sim_unlock(world);
	fi_freeinfo(pep->info);
	free(pep);
	return 0;
}

static int pep_listen(struct fid_pep *fid)
{
	struct sim_pep *pep = container_of(fid, struct sim_pep, pep_fid);
	int ret;

	if (!pep->eq) {
		FI_WARN(&sim_prov, FI_LOG_EP_CTRL,
			"fi_listen: bind an EQ to the passive endpoint first\n");
		return -FI_ENOEQ;
	}
	sim_lock(pep->fabric->world);
	ret = pep->listening ? 0 : sim_cm_listen(pep);
	sim_unlock(pep->fabric->world);
	return ret;
}

static int pep_reject(struct fid_pep *fid, fid_t handle, const void *param,
		      size_t len)
{
	struct sim_pep *pep = container_of(fid, struct sim_pep, pep_fid);
	int ret;

	if (!handle || len > SIM_CM_DATA_SIZE || (len && !param))
		return -FI_EINVAL;
	sim_lock(pep->fabric->world);
	ret = sim_cm_reject(pep, handle, param, len);
	sim_unlock(pep->fabric->world);
	return ret;
}

static int pep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct sim_pep *pep = container_of(fid, struct sim_pep, pep_fid.fid);
	struct sockaddr_in sin = { .sin_family = AF_INET };
	size_t given;

	if (!addrlen)
		return -FI_EINVAL;
	sim_lock(pep->fabric->world);
	if (pep->nic)
		sin.sin_addr = nic_ipv4(pep->nic);
	else if (pep->info->src_addr)
		sin.sin_addr = ((struct sockaddr_in *)pep->info->src_addr)->sin_addr;
	sin.sin_port = htons(pep->port);
	sim_unlock(pep->fabric->world);
	given = *addrlen;
	*addrlen = sizeof(sin);
	if (given < sizeof(sin) || !addr)
		return -FI_ETOOSMALL;
	memcpy(addr, &sin, sizeof(sin));
	return 0;
}

static int pep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct sim_pep *pep = container_of(fid, struct sim_pep, pep_fid.fid);
	const struct sockaddr_in *sin = addr;

	if (!addr || addrlen < sizeof(*sin) || sin->sin_family != AF_INET)
		return -FI_EINVAL;
	if (pep->listening)
		return -FI_EOPBADSTATE;
	pep->port = ntohs(sin->sin_port);
	return 0;
}

static int pep_getopt(fid_t fid, int level, int optname, void *optval,
		      size_t *optlen)
{
	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	if (optname != FI_OPT_CM_DATA_SIZE)
		return -FI_ENOPROTOOPT;
	if (!optval || !optlen)
		return -FI_ETOOSMALL;
	return fabsim_getopt_size(optval, optlen, SIM_CM_DATA_SIZE);
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

static struct fi_ops_ep pep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = fabsim_no_cancel,
	.getopt = pep_getopt,
	.setopt = fabsim_no_setopt,
	.tx_ctx = fabsim_no_tx_ctx,
	.rx_ctx = fabsim_no_rx_ctx,
	.rx_size_left = fabsim_no_size_left,
	.tx_size_left = fabsim_no_size_left,
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

int sim_pep_open(struct fid_fabric *fabric, struct fi_info *info,
		 struct fid_pep **out, void *context)
{
	struct sim_fabric *fab = container_of(fabric, struct sim_fabric, fabric_fid);
	struct sim_pep *pep;

	if (!info || !out)
		return -FI_EINVAL;
	if (!info->ep_attr || info->ep_attr->type != FI_EP_MSG) {
		FI_WARN(&sim_prov, FI_LOG_EP_CTRL, "fi_passive_ep: only "
			"FI_EP_MSG endpoints listen\n");
		return -FI_EINVAL;
	}
	if (info->src_addr && (info->addr_format != FI_SOCKADDR_IN ||
			       info->src_addrlen < sizeof(struct sockaddr_in)))
		return -FI_EINVAL;
	pep = calloc(1, sizeof(*pep));
	if (!pep)
		return -FI_ENOMEM;
	pep->info = fi_dupinfo(info);
	if (!pep->info) {
		free(pep);
		return -FI_ENOMEM;
	}
	pep->fabric = fab;
	if (info->src_addr)
		pep->port = ntohs(((struct sockaddr_in *)info->src_addr)->sin_port);
	pep->pep_fid.fid.fclass = FI_CLASS_PEP;
	pep->pep_fid.fid.context = context;
	pep->pep_fid.fid.ops = &pep_fi_ops;
	pep->pep_fid.ops = &pep_ops;
	pep->pep_fid.cm = &pep_cm_ops;
	sim_lock(fab->world);
	fab->children++;
	sim_unlock(fab->world);
	*out = &pep->pep_fid;
	return 0;
}
