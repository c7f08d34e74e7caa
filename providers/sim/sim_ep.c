/* SPDX-License-Identifier: BSD-2-Clause
 * fid_ep for reliable-datagram endpoints (fi_endpoint(3)): creation,
 * binding to AV/CQ/counters, enabling, names, options, cancel, close.
 * The data-transfer ops tables are in sim_ep_msg.c and its siblings. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <fabsim/fi_stubs.h>
#include <fabsim/util.h>

#include "sim_xfer.h"

/* ---- Binding --------------------------------------------------------------------- */

static int bind_cq(struct sim_ep *ep, struct sim_cq *cq, uint64_t flags)
{
	if (flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
		return -FI_EBADFLAGS;
	if (!(flags & (FI_TRANSMIT | FI_RECV)))
		return -FI_EINVAL;
	if (((flags & FI_TRANSMIT) && ep->tx_cq) ||
	    ((flags & FI_RECV) && ep->rx_cq))
		return -FI_EINVAL; /* one CQ per direction */
	if (flags & FI_TRANSMIT) {
		ep->tx_cq = cq;
		ep->tx_selective = flags & FI_SELECTIVE_COMPLETION;
		cq->refs++;
	}
	if (flags & FI_RECV) {
		ep->rx_cq = cq;
		ep->rx_selective = flags & FI_SELECTIVE_COMPLETION;
		cq->refs++;
	}
	return 0;
}

static int bind_cntr(struct sim_ep *ep, struct sim_cntr *cntr, uint64_t flags)
{
	struct {
		uint64_t flag;
		struct sim_cntr **slot;
	} slots[] = {
		{ FI_SEND, &ep->cntr_send },
		{ FI_RECV, &ep->cntr_recv },
		{ FI_READ, &ep->cntr_read },
		{ FI_WRITE, &ep->cntr_write },
		{ FI_REMOTE_READ, &ep->cntr_rem_read },
		{ FI_REMOTE_WRITE, &ep->cntr_rem_write },
	};
	uint64_t all = FI_SEND | FI_RECV | FI_READ | FI_WRITE |
		       FI_REMOTE_READ | FI_REMOTE_WRITE;

	if (!flags || (flags & ~all))
		return -FI_EBADFLAGS;
	if ((flags & (FI_REMOTE_READ | FI_REMOTE_WRITE)) &&
	    !(ep->caps & FI_RMA_EVENT)) {
		FI_WARN(&sim_prov, FI_LOG_EP_CTRL, "binding a counter for "
			"remote events needs the FI_RMA_EVENT capability\n");
		return -FI_EINVAL;
	}
	for (size_t i = 0; i < count_of(slots); i++) {
		if (!(flags & slots[i].flag))
			continue;
		if (*slots[i].slot)
			(*slots[i].slot)->refs--;
		*slots[i].slot = cntr;
		cntr->refs++;
	}
	return 0;
}

static int ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct sim_ep *ep = container_of(fid, struct sim_ep, ep_fid.fid);
	struct sim_world *world = ep->domain->world;
	int ret = 0;

	if (!bfid)
		return -FI_EINVAL;
	sim_lock(world);
	if (ep->enabled) {
		ret = -FI_EOPBADSTATE;
		goto out;
	}
	switch (bfid->fclass) {
	case FI_CLASS_AV: {
		struct sim_av *av = container_of(bfid, struct sim_av, av_fid.fid);

		if (ep->av || flags) {
			ret = ep->av ? -FI_EINVAL : -FI_EBADFLAGS;
			break;
		}
		if (av->domain != ep->domain) {
			ret = -FI_EDOMAIN;
			break;
		}
		ep->av = av;
		av->refs++;
		break;
	}
	case FI_CLASS_CQ: {
		struct sim_cq *cq = container_of(bfid, struct sim_cq, cq_fid.fid);

		ret = cq->domain != ep->domain ? -FI_EDOMAIN :
						 bind_cq(ep, cq, flags);
		break;
	}
	case FI_CLASS_CNTR: {
		struct sim_cntr *c = container_of(bfid, struct sim_cntr, cntr_fid.fid);

		ret = c->domain != ep->domain ? -FI_EDOMAIN :
						bind_cntr(ep, c, flags);
		break;
	}
	case FI_CLASS_EQ: {
		struct sim_eq *eq = container_of(bfid, struct sim_eq, eq_fid.fid);

		/* An EQ of another fabric hears nothing of this one's. */
		if (ep->eq || eq->fabric != ep->domain->fabric) {
			ret = -FI_EINVAL;
			break;
		}
		ep->eq = eq;
		eq->refs++;
		break;
	}
	default:
		ret = -FI_EINVAL;
		break;
	}
out:
	sim_unlock(world);
	if (ret)
		FI_WARN(&sim_prov, FI_LOG_EP_CTRL,
			"fi_ep_bind(class %zu, flags %#llx): %s\n", bfid->fclass,
			(unsigned long long)flags, fi_strerror(-ret));
	return ret;
}

/* ---- Control ------------------------------------------------------------------------ */

static int ep_enable(struct sim_ep *ep)
{
	if (ep->enabled)
		return 0;
	if (ep->type != FI_EP_MSG && !ep->av) {
		FI_WARN(&sim_prov, FI_LOG_EP_CTRL, "fi_enable: a connectionless "
			"endpoint needs an AV bound first\n");
		return -FI_ENOAV;
	}
	if ((ep->caps & (FI_SEND | FI_READ | FI_WRITE)) && !ep->tx_cq &&
	    !ep->cntr_send && !ep->cntr_read && !ep->cntr_write) {
		FI_WARN(&sim_prov, FI_LOG_EP_CTRL, "fi_enable: no CQ or counter "
			"bound for transmit completions\n");
		return -FI_ENOCQ;
	}
	if ((ep->caps & FI_RECV) && !ep->rx_cq && !ep->cntr_recv) {
		FI_WARN(&sim_prov, FI_LOG_EP_CTRL, "fi_enable: no CQ or counter "
			"bound for receive completions\n");
		return -FI_ENOCQ;
	}
	ep->enabled = true;
	return 0;
}

static int ep_control(struct fid *fid, int command, void *arg)
{
	struct sim_ep *ep = container_of(fid, struct sim_ep, ep_fid.fid);
	struct fi_alias *alias;
	uint64_t *flags = arg;
	int ret = 0;

	sim_lock(ep->domain->world);
	switch (command) {
	case FI_ENABLE:
		ret = ep_enable(ep);
		break;
	case FI_GETOPSFLAG:
	case FI_SETOPSFLAG:
		ret = fabsim_ep_opsflag(command, flags, &ep->tx_op_flags,
					&ep->rx_op_flags);
		break;
	case FI_ALIAS:
		alias = arg;
		(void)alias;
		ret = -FI_ENOSYS;
		break;
	default:
		ret = -FI_ENOSYS;
		break;
	}
	sim_unlock(ep->domain->world);
	return ret;
}

/* ---- Names -------------------------------------------------------------------------- */

static int ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct sim_ep *ep = container_of(fid, struct sim_ep, ep_fid.fid);
	struct sockaddr_in sin;
	struct nic_peer me = { nic_host(ep->domain->nic), nic_qp_num(ep->qp) };
	size_t given;

	if (!addrlen)
		return -FI_EINVAL;
	sim_lock(ep->domain->world);
	if (ep->type != FI_EP_MSG || sim_cm_local_addr(ep, &sin))
		sim_addr_of_peer(ep->domain->world, me, &sin);
	sim_unlock(ep->domain->world);
	given = *addrlen;
	*addrlen = sizeof(sin);
	if (given < sizeof(sin) || !addr)
		return -FI_ETOOSMALL;
	memcpy(addr, &sin, sizeof(sin));
	return 0;
}

/* An endpoint's address is its NIC's IP and its queue pair number as the
 * port: a program may choose the port (any free number from 256 to 65535)
 * before the endpoint is enabled. Lock held; 0 or a fabric error, which
 * the log explains as `who`'s. */
static int take_port(struct sim_ep *ep, uint16_t port, const char *who)
{
	int ret = nic_qp_renumber(ep->qp, port);

	if (ret == -EADDRINUSE)
		FI_WARN(&sim_prov, FI_LOG_EP_CTRL, "%s: port %u is taken by "
			"another endpoint\n", who, port);
	else if (ret == -EINVAL)
		FI_WARN(&sim_prov, FI_LOG_EP_CTRL, "%s: port %u is below 256: "
			"an endpoint's port is its queue pair number (256 to "
			"65535)\n", who, port);
	return sim_errno(ret);
}

static int ep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct sim_ep *ep = container_of(fid, struct sim_ep, ep_fid.fid);
	const struct sockaddr_in *sin = addr;
	struct in_addr mine = nic_ipv4(ep->domain->nic);
	int ret;

	if (!addr || addrlen < sizeof(*sin) || sin->sin_family != AF_INET)
		return -FI_EINVAL;
	if (sin->sin_addr.s_addr != htonl(INADDR_ANY) &&
	    sin->sin_addr.s_addr != mine.s_addr) {
		FI_WARN(&sim_prov, FI_LOG_EP_CTRL, "fi_setname: the address "
			"must be this NIC's (%s) or INADDR_ANY\n",
			inet_ntoa(mine));
		return -FI_EADDRNOTAVAIL;
	}
	sim_lock(ep->domain->world);
	if (ep->enabled)
		ret = -FI_EOPBADSTATE;
	else if (!sin->sin_port)
		ret = 0;
	else
		ret = take_port(ep, ntohs(sin->sin_port), "fi_setname");
	sim_unlock(ep->domain->world);
	return ret;
}

/* ---- Connections (FI_EP_MSG) ---------------------------------------------------------- */

static int msg_ep_of(fid_t fid, struct sim_ep **out)
{
	struct sim_ep *ep = container_of(fid, struct sim_ep, ep_fid.fid);

	if (ep->type != FI_EP_MSG)
		return -FI_EOPNOTSUPP;
	*out = ep;
	return 0;
}

/* An endpoint with no EQ of its own reports to its domain's (lock held). */
static bool use_domain_eq(struct sim_ep *ep)
{
	if (!ep->eq && ep->domain->eq) {
		ep->eq = ep->domain->eq;
		ep->eq->refs++;
	}
	return ep->eq != NULL;
}

static int ep_connect(struct fid_ep *fid, const void *addr, const void *param,
		      size_t paramlen)
{
	const struct sockaddr_in *sin = addr;
	struct sim_ep *ep;
	int ret = msg_ep_of(&fid->fid, &ep);

	if (ret)
		return ret;
	/* No address: the one fi_getinfo gave the endpoint's info (as the
	 * verbs and tcp providers take it). */
	if (!sin && ep->info->dest_addrlen == sizeof(*sin))
		sin = ep->info->dest_addr;
	if (!sin || sin->sin_family != AF_INET ||
	    paramlen > SIM_CM_DATA_SIZE || (paramlen && !param))
		return -FI_EINVAL;
	sim_lock(ep->domain->world);
	if (!use_domain_eq(ep)) {
		sim_unlock(ep->domain->world);
		FI_WARN(&sim_prov, FI_LOG_EP_CTRL, "fi_connect: bind an EQ to "
			"the endpoint (or its domain) first\n");
		return -FI_ENOEQ;
	}
	ret = ep_enable(ep);
	if (!ret)
		ret = sim_cm_connect(ep, sin, param, paramlen);
	sim_unlock(ep->domain->world);
	return ret;
}

static int ep_accept(struct fid_ep *fid, const void *param, size_t paramlen)
{
	struct sim_ep *ep;
	int ret = msg_ep_of(&fid->fid, &ep);

	if (ret)
		return ret;
	if (paramlen > SIM_CM_DATA_SIZE || (paramlen && !param))
		return -FI_EINVAL;
	sim_lock(ep->domain->world);
	if (!use_domain_eq(ep)) {
		sim_unlock(ep->domain->world);
		return -FI_ENOEQ;
	}
	ret = ep_enable(ep);
	if (!ret)
		ret = sim_cm_accept(ep, param, paramlen);
	sim_unlock(ep->domain->world);
	return ret;
}

static int ep_shutdown(struct fid_ep *fid, uint64_t flags)
{
	struct sim_ep *ep;
	int ret = msg_ep_of(&fid->fid, &ep);

	if (ret)
		return ret;
	if (flags)
		return -FI_EBADFLAGS;
	sim_lock(ep->domain->world);
	ret = sim_cm_shutdown(ep);
	sim_unlock(ep->domain->world);
	return ret;
}

static int ep_getpeer(struct fid_ep *fid, void *addr, size_t *addrlen)
{
	struct sockaddr_in sin;
	struct sim_ep *ep;
	size_t given;
	int ret = msg_ep_of(&fid->fid, &ep);

	if (ret)
		return ret;
	if (!addrlen)
		return -FI_EINVAL;
	sim_lock(ep->domain->world);
	ret = sim_cm_peer_addr(ep, &sin);
	sim_unlock(ep->domain->world);
	if (ret)
		return ret;
	given = *addrlen;
	*addrlen = sizeof(sin);
	if (given < sizeof(sin) || !addr)
		return -FI_ETOOSMALL;
	memcpy(addr, &sin, sizeof(sin));
	return 0;
}

/* ---- Options, cancel, queue room -------------------------------------------------------- */

static int ep_getopt(fid_t fid, int level, int optname, void *optval,
		     size_t *optlen)
{
	struct sim_ep *ep = container_of(fid, struct sim_ep, ep_fid.fid);

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	if (!optval || !optlen)
		return -FI_EINVAL;
	switch (optname) {
	case FI_OPT_MIN_MULTI_RECV:
		return fabsim_getopt_size(optval, optlen, ep->min_multi_recv);
	case FI_OPT_CM_DATA_SIZE:
		return fabsim_getopt_size(optval, optlen,
					  ep->type == FI_EP_MSG ?
						  SIM_CM_DATA_SIZE : 0);
	case FI_OPT_FI_HMEM_P2P:
		if (*optlen < sizeof(int)) {
			*optlen = sizeof(int);
			return -FI_ETOOSMALL;
		}
		*(int *)optval = ep->hmem_p2p;
		*optlen = sizeof(int);
		return 0;
	default:
		return -FI_ENOPROTOOPT;
	}
}

/* fi_endpoint(3): how FI_HMEM transfers use peer to peer. The simulated NIC
 * has no device memory, so no transfer could be done that way: REQUIRED is
 * a mode that "cannot be supported"; the others change nothing. */
static int set_hmem_p2p(struct sim_ep *ep, const void *optval, size_t optlen)
{
	int mode;

	if (!optval || optlen != sizeof(int))
		return -FI_EINVAL;
	mode = *(const int *)optval;
	switch (mode) {
	case FI_HMEM_P2P_ENABLED:
	case FI_HMEM_P2P_PREFERRED:
	case FI_HMEM_P2P_DISABLED:
		ep->hmem_p2p = mode;
		return 0;
	case FI_HMEM_P2P_REQUIRED:
		return -FI_EOPNOTSUPP;
	default:
		return -FI_EINVAL;
	}
}

static int ep_setopt(fid_t fid, int level, int optname, const void *optval,
		     size_t optlen)
{
	struct sim_ep *ep = container_of(fid, struct sim_ep, ep_fid.fid);

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	if (optname == FI_OPT_FI_HMEM_P2P)
		return set_hmem_p2p(ep, optval, optlen);
	if (optname != FI_OPT_MIN_MULTI_RECV)
		return -FI_ENOPROTOOPT;
	if (!optval || optlen != sizeof(size_t))
		return -FI_EINVAL;
	ep->min_multi_recv = *(const size_t *)optval;
	return 0;
}

static ssize_t ep_cancel(fid_t fid, void *context)
{
	struct sim_ep *ep = container_of(fid, struct sim_ep, ep_fid.fid);
	size_t total = ep->info->tx_attr->size + ep->info->rx_attr->size;
	ssize_t ret = -FI_ENOENT;

	sim_lock(ep->domain->world);
	/* Only posted receives can be cancelled: sends are on the wire. */
	for (size_t i = ep->info->tx_attr->size; i < total; i++) {
		struct sim_op *op = &ep->ops[i];

		if (op->in_use && op->context == context &&
		    !nic_cancel_recv(ep->qp, (uintptr_t)op)) {
			ret = 0;
			break;
		}
	}
	sim_unlock(ep->domain->world);
	return ret;
}

static ssize_t ep_rx_size_left(struct fid_ep *fid)
{
	struct sim_ep *ep = sim_ep_of(fid);

	return ep->enabled ? (ssize_t)(ep->info->rx_attr->size - ep->rx_inflight)
			   : -FI_EOPBADSTATE;
}

static ssize_t ep_tx_size_left(struct fid_ep *fid)
{
	struct sim_ep *ep = sim_ep_of(fid);

	return ep->enabled ? (ssize_t)(ep->info->tx_attr->size - ep->tx_inflight)
			   : -FI_EOPBADSTATE;
}

/* ---- Close ---------------------------------------------------------------------------------- */

static void unref_cntr(struct sim_cntr *c)
{
	if (c)
		c->refs--;
}

static int ep_close(struct fid *fid)
{
	struct sim_ep *ep = container_of(fid, struct sim_ep, ep_fid.fid);
	struct sim_domain *dom = ep->domain;

	sim_lock(dom->world);
	sim_cm_release(ep);
	/* fi_endpoint(3): closing discards outstanding operations. */
	nic_qp_destroy(ep->qp);
	if (ep->eq) {
		sim_eq_forget(ep->eq, &ep->ep_fid.fid);
		ep->eq->refs--;
	}
	if (ep->av)
		ep->av->refs--;
	if (ep->tx_cq)
		ep->tx_cq->refs--;
	if (ep->rx_cq)
		ep->rx_cq->refs--;
	unref_cntr(ep->cntr_send);
	unref_cntr(ep->cntr_recv);
	unref_cntr(ep->cntr_read);
	unref_cntr(ep->cntr_write);
	unref_cntr(ep->cntr_rem_read);
	unref_cntr(ep->cntr_rem_write);
	/* Reservations of operations that will never complete. */
	for (size_t i = 0; i < ep->info->tx_attr->size + ep->info->rx_attr->size;
	     i++) {
		struct sim_op *op = &ep->ops[i];
		struct sim_cq *cq = i < ep->info->tx_attr->size ? ep->tx_cq
								: ep->rx_cq;

		if (op->reserved && cq)
			sim_cq_unreserve(cq);
	}
	dom->refs--;
	sim_unlock(dom->world);
	fi_freeinfo(ep->info);
	free(ep->ops);
	free(ep);
	return 0;
}

uint64_t sim_ep_op_flags(struct fid_ep *fid, uint64_t which)
{
	struct sim_ep *ep = sim_ep_of(fid);

	return which == FI_RECV ? ep->rx_op_flags : ep->tx_op_flags;
}

/* ---- Tables and construction ---------------------------------------------------------------- */

static struct fi_ops ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = ep_close,
	.bind = ep_bind,
	.control = ep_control,
	.ops_open = fabsim_no_ops_open,
	.tostr = fabsim_no_tostr,
	.ops_set = fabsim_no_ops_set,
};

static struct fi_ops_ep ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = ep_cancel,
	.getopt = ep_getopt,
	.setopt = ep_setopt,
	.tx_ctx = fabsim_no_tx_ctx,
	.rx_ctx = fabsim_no_rx_ctx,
	.rx_size_left = ep_rx_size_left,
	.tx_size_left = ep_tx_size_left,
};

static struct fi_ops_cm ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = ep_setname,
	.getname = ep_getname,
	.getpeer = ep_getpeer,
	.connect = ep_connect,
	.listen = fabsim_no_listen,
	.accept = ep_accept,
	.reject = fabsim_no_reject,
	.shutdown = ep_shutdown,
	.join = fabsim_no_join,
};

static int check_ep_info(const struct fi_info *info)
{
	if (!info->ep_attr || !info->tx_attr || !info->rx_attr)
		return -FI_EINVAL;
	switch (info->ep_attr->type) {
	case FI_EP_RDM:
	case FI_EP_MSG:
	case FI_EP_DGRAM:
		break;
	default:
		FI_WARN(&sim_prov, FI_LOG_EP_CTRL, "fi_endpoint: type %d not "
			"offered here (RDM, MSG and DGRAM are)\n",
			(int)info->ep_attr->type);
		return -FI_ENOSYS;
	}
	if (info->tx_attr->size > SIM_TX_SIZE || info->rx_attr->size > SIM_RX_SIZE ||
	    info->tx_attr->iov_limit > SIM_IOV_LIMIT ||
	    info->rx_attr->iov_limit > SIM_IOV_LIMIT ||
	    info->tx_attr->inject_size > SIM_INJECT_SIZE)
		return -FI_EINVAL;
	return sim_info_check_open(info, "fi_endpoint");
}

static enum nic_qp_type qp_type_of(enum fi_ep_type type)
{
	switch (type) {
	case FI_EP_MSG: return NIC_QP_RC;
	case FI_EP_DGRAM: return NIC_QP_UD;
	default: return NIC_QP_RD;
	}
}

/* A connectionless endpoint takes the port of the source address it was
 * asked for (fi_getinfo(3): FI_SOURCE's node and service are "the local
 * source address to associate with an endpoint"), so that peers reach it
 * by that address; none, or port 0: the next free one. Lock held. */
static int take_source_port(struct sim_ep *ep, const struct fi_info *info)
{
	const struct sockaddr_in *src = info->src_addr;

	if (!src || info->src_addrlen < sizeof(*src) ||
	    src->sin_family != AF_INET || !src->sin_port)
		return 0;
	return take_port(ep, ntohs(src->sin_port),
			 "fi_endpoint (the source address)");
}

int sim_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **out, void *context)
{
	struct sim_domain *dom = container_of(domain, struct sim_domain, domain_fid);
	struct sim_ep *ep;
	size_t total;
	int ret;

	if (!info || !out)
		return -FI_EINVAL;
	ret = check_ep_info(info);
	if (ret)
		return ret;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->info = fi_dupinfo(info);
	if (!ep->info) {
		free(ep);
		return -FI_ENOMEM;
	}
	if (!ep->info->tx_attr->size)
		ep->info->tx_attr->size = SIM_TX_SIZE;
	if (!ep->info->rx_attr->size)
		ep->info->rx_attr->size = SIM_RX_SIZE;
	total = ep->info->tx_attr->size + ep->info->rx_attr->size;
	ep->ops = calloc(total, sizeof(*ep->ops));
	if (!ep->ops) {
		fi_freeinfo(ep->info);
		free(ep);
		return -FI_ENOMEM;
	}
	for (size_t i = 0; i < total; i++) {
		struct sim_op **list = i < ep->info->tx_attr->size ?
					       &ep->free_tx : &ep->free_rx;

		ep->ops[i].ep = ep;
		ep->ops[i].next_free = *list;
		*list = &ep->ops[i];
	}
	ep->domain = dom;
	ep->caps = info->caps ? info->caps : dom->info->caps;
	ep->tx_op_flags = info->tx_attr->op_flags;
	ep->rx_op_flags = info->rx_attr->op_flags;
	ep->min_multi_recv = SIM_MIN_MULTI_RECV;
	ep->hmem_p2p = FI_HMEM_P2P_ENABLED;
	ep->type = info->ep_attr->type;
	sim_lock(dom->world);
	ret = nic_qp_create(dom->nic, qp_type_of(ep->type), &sim_ep_nic_ops, ep,
			    &ep->qp);
	if (!ret && ep->type != FI_EP_MSG) {
		ret = take_source_port(ep, info);
		if (ret)
			nic_qp_destroy(ep->qp);
	}
	if (!ret && info->handle && info->handle->fclass == FI_CLASS_CONNREQ) {
		ret = sim_cm_attach(ep, info->handle);
		if (ret)
			nic_qp_destroy(ep->qp);
	}
	if (!ret)
		dom->refs++;
	sim_unlock(dom->world);
	if (ret) {
		free(ep->ops);
		fi_freeinfo(ep->info);
		free(ep);
		return sim_errno(ret);
	}
	ep->ep_fid.fid.fclass = FI_CLASS_EP;
	ep->ep_fid.fid.context = context;
	ep->ep_fid.fid.ops = &ep_fi_ops;
	ep->ep_fid.ops = &ep_ops;
	ep->ep_fid.cm = &ep_cm_ops;
	ep->ep_fid.msg = &sim_msg_ops.ops;
	ep->ep_fid.rma = &sim_rma_ops.ops;
	ep->ep_fid.tagged = &sim_tagged_ops.ops;
	ep->ep_fid.atomic = &sim_atomic_ops.ops;
	ep->ep_fid.collective = &fabsim_no_collective_ops;
	*out = &ep->ep_fid;
	return 0;
}
