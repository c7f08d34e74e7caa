/* SPDX-License-Identifier: BSD-2-Clause
 * fid_ep for FI_EP_MSG (fi_endpoint(3), fi_cm(3)): an rdma_cm id and its
 * reliable-connected queue pair.
 *
 * Active side: fi_endpoint makes an id on a private event channel;
 * fi_enable binds it to the domain's device address and creates the queue
 * pair; fi_connect resolves the peer's address and route on the private
 * channel, moves the id to the EQ and sends the request. Passive side: the
 * id comes with the FI_CONNREQ (its info's handle) and is already on the
 * listener's EQ; fi_accept answers it. FI_CONNECTED, FI_SHUTDOWN and
 * connection errors come from the EQ (vrb_eq.c). */
#include <errno.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <fabsim/fi_stubs.h>
#include <fabsim/util.h>

#include "verbs.h"

enum { VRB_RESOLVE_MS = 2000 };

/* ---- Binding -------------------------------------------------------------------------- */

static int bind_cq(struct vrb_ep *ep, struct vrb_cq *cq, uint64_t flags)
{
	if (flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
		return -FI_EBADFLAGS;
	if (!(flags & (FI_TRANSMIT | FI_RECV)))
		return -FI_EINVAL;
	if (((flags & FI_TRANSMIT) && ep->tx_cq) ||
	    ((flags & FI_RECV) && ep->rx_cq))
		return -FI_EINVAL;
	if (cq->domain != ep->domain)
		return -FI_EDOMAIN;
	pthread_mutex_lock(&cq->lock);
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
	pthread_mutex_unlock(&cq->lock);
	return 0;
}

static int bind_eq(struct vrb_ep *ep, struct vrb_eq *eq)
{
	int ret = 0;

	if (ep->eq)
		return -FI_EINVAL;
	/* An accepted id is on its listener's channel: move it if this EQ
	 * is another. An active id stays on its private channel until
	 * fi_connect has resolved the peer. */
	if (ep->passive && ep->id->channel != eq->channel)
		ret = vrb_eq_adopt(eq, ep->id, &ep->own_channel);
	if (ret)
		return ret;
	ep->eq = eq;
	vrb_eq_ref(eq);
	return 0;
}

static int ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct vrb_ep *ep = container_of(fid, struct vrb_ep, ep_fid.fid);
	int ret;

	if (!bfid)
		return -FI_EINVAL;
	pthread_mutex_lock(&ep->lock);
	if (ep->state != VRB_EP_IDLE) {
		ret = -FI_EOPBADSTATE;
	} else {
		switch (bfid->fclass) {
		case FI_CLASS_CQ:
			ret = bind_cq(ep, container_of(bfid, struct vrb_cq,
						       cq_fid.fid), flags);
			break;
		case FI_CLASS_EQ:
			ret = bind_eq(ep, container_of(bfid, struct vrb_eq,
						       eq_fid.fid));
			break;
		case FI_CLASS_CNTR:
		case FI_CLASS_SRX_CTX:
		case FI_CLASS_STX_CTX:
			ret = -FI_ENOSYS;
			break;
		default:
			ret = -FI_EINVAL;
			break;
		}
	}
	pthread_mutex_unlock(&ep->lock);
	if (ret)
		FI_WARN(&vrb_prov, FI_LOG_EP_CTRL, "fi_ep_bind(class %zu): %s\n",
			bfid->fclass, fi_strerror(-ret));
	return ret;
}

/* ---- Enabling ----------------------------------------------------------------------------- */

static int bind_local(struct vrb_ep *ep)
{
	if (ep->bound)
		return 0;
	if (vrb_lib.bind_addr(ep->id, (struct sockaddr *)&ep->src)) {
		FI_WARN(&vrb_prov, FI_LOG_EP_CTRL, "rdma_bind_addr(%s:%u): %s\n",
			inet_ntoa(ep->src.sin_addr), ntohs(ep->src.sin_port),
			strerror(errno));
		return errno == EADDRINUSE ? -FI_EADDRINUSE : -FI_EADDRNOTAVAIL;
	}
	ep->bound = true;
	return 0;
}

static int create_qp(struct vrb_ep *ep)
{
	struct vrb_cq *scq = vrb_ep_scq(ep);
	struct vrb_cq *rcq = vrb_ep_rcq(ep);
	struct ibv_qp_init_attr attr = {
		.qp_context = ep,
		.send_cq = scq->cq,
		.recv_cq = rcq->cq,
		.cap = {
			.max_send_wr = (uint32_t)ep->tx_size,
			.max_recv_wr = (uint32_t)ep->rx_size,
			.max_send_sge = (uint32_t)ep->info->tx_attr->iov_limit,
			.max_recv_sge = (uint32_t)ep->info->rx_attr->iov_limit,
			.max_inline_data = (uint32_t)ep->inject_size,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
	};

	if (ep->id->verbs != ep->domain->ctx) {
		FI_WARN(&vrb_prov, FI_LOG_EP_CTRL, "fi_enable: the endpoint's "
			"address is on another device than domain %s\n",
			ep->domain->info->domain_attr->name);
		return -FI_EINVAL;
	}
	if (vrb_lib.cm_create_qp(ep->id, ep->domain->pd, &attr)) {
		FI_WARN(&vrb_prov, FI_LOG_EP_CTRL, "rdma_create_qp(%zu/%zu "
			"entries, inline %zu): %s\n", ep->tx_size, ep->rx_size,
			ep->inject_size, strerror(errno));
		return errno == ENOMEM ? -FI_ENOMEM : -FI_EINVAL;
	}
	ep->qp_num = ep->id->qp->qp_num;
	/* The device may give more room than asked for. */
	ep->inject_size = attr.cap.max_inline_data;
	return 0;
}

static int ep_enable(struct vrb_ep *ep)
{
	int ret;

	if (ep->state != VRB_EP_IDLE)
		return 0;
	if (!ep->tx_cq && !ep->rx_cq) {
		FI_WARN(&vrb_prov, FI_LOG_EP_CTRL, "fi_enable: bind a CQ "
			"first\n");
		return -FI_ENOCQ;
	}
	if (!ep->eq) {
		FI_WARN(&vrb_prov, FI_LOG_EP_CTRL, "fi_enable: bind an EQ "
			"first (connection events arrive there)\n");
		return -FI_ENOEQ;
	}
	ret = bind_local(ep);
	if (!ret)
		ret = create_qp(ep);
	if (ret)
		return ret;
	if (ep->tx_cq && (ret = vrb_cq_attach(ep->tx_cq, ep)))
		goto fail;
	if (ep->rx_cq && ep->rx_cq != ep->tx_cq &&
	    (ret = vrb_cq_attach(ep->rx_cq, ep)))
		goto fail;
	if (ep->info->caps & FI_ATOMIC) {
		ep->scratch_desc.mr = vrb_lib.reg_mr(ep->domain->pd,
						     &ep->scratch,
						     sizeof(ep->scratch),
						     IBV_ACCESS_LOCAL_WRITE);
		if (!ep->scratch_desc.mr) {
			ret = -FI_ENOMEM;
			goto fail;
		}
	}
	ep->state = VRB_EP_ENABLED;
	return 0;
fail:
	if (ep->tx_cq)
		vrb_cq_detach(ep->tx_cq, ep);
	if (ep->rx_cq)
		vrb_cq_detach(ep->rx_cq, ep);
	if (ep->id->qp)
		vrb_lib.cm_destroy_qp(ep->id);
	return ret;
}

static int ep_control(struct fid *fid, int command, void *arg)
{
	struct vrb_ep *ep = container_of(fid, struct vrb_ep, ep_fid.fid);
	uint64_t *flags = arg;
	int ret = 0;

	pthread_mutex_lock(&ep->lock);
	switch (command) {
	case FI_ENABLE:
		ret = ep_enable(ep);
		break;
	case FI_GETOPSFLAG:
	case FI_SETOPSFLAG:
		ret = fabsim_ep_opsflag(command, flags, &ep->tx_op_flags,
					&ep->rx_op_flags);
		break;
	default:
		ret = -FI_ENOSYS;
		break;
	}
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

/* ---- Connection management ------------------------------------------------------------------- */

static uint8_t rd_atom(int device_max)
{
	return (uint8_t)(device_max < 0 ? 0 : device_max > 16 ? 16 : device_max);
}

static void conn_param(struct vrb_ep *ep, const uint8_t *data, uint8_t len,
		       struct rdma_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	p->private_data = data;
	p->private_data_len = len;
	/* Reads and atomics in flight, each way, as the device allows. */
	p->responder_resources = rd_atom(ep->domain->dev.max_qp_rd_atom);
	p->initiator_depth = rd_atom(ep->domain->dev.max_qp_init_rd_atom);
	p->retry_count = 7;
	p->rnr_retry_count = 7; /* resource management: retry for ever */
}

static int resolve(struct vrb_ep *ep, const struct sockaddr *dest)
{
	int ret;

	if (ep->resolved)
		return 0;
	if (vrb_lib.resolve_addr(ep->id, NULL, (struct sockaddr *)dest,
				 VRB_RESOLVE_MS)) {
		FI_WARN(&vrb_prov, FI_LOG_EP_CTRL, "rdma_resolve_addr: %s\n",
			strerror(errno));
		return -FI_EHOSTUNREACH;
	}
	ret = vrb_wait_cm_event(ep->own_channel, ep->id,
				RDMA_CM_EVENT_ADDR_RESOLVED);
	if (ret)
		return ret;
	if (vrb_lib.resolve_route(ep->id, VRB_RESOLVE_MS)) {
		FI_WARN(&vrb_prov, FI_LOG_EP_CTRL, "rdma_resolve_route: %s\n",
			strerror(errno));
		return -FI_EHOSTUNREACH;
	}
	ret = vrb_wait_cm_event(ep->own_channel, ep->id,
				RDMA_CM_EVENT_ROUTE_RESOLVED);
	if (!ret)
		ep->resolved = true;
	return ret;
}

static int ep_connect(struct fid_ep *fid, const void *addr, const void *param,
		      size_t paramlen)
{
	struct vrb_ep *ep = vrb_ep_of(fid);
	const struct sockaddr *dest = addr ? addr : ep->info->dest_addr;
	struct rdma_conn_param p;
	uint8_t data[VRB_CM_REQ_DATA], len;
	int ret;

	if (ep->passive || !dest || !vrb_sockaddr_len(dest))
		return -FI_EINVAL;
	ret = vrb_cm_pack(param, paramlen, sizeof(data), data, &len);
	if (ret)
		return ret;
	pthread_mutex_lock(&ep->lock);
	ret = ep_enable(ep);
	if (!ret && ep->state != VRB_EP_ENABLED)
		ret = -FI_EOPBADSTATE;
	if (!ret)
		ret = resolve(ep, dest);
	if (!ret)
		ret = vrb_eq_adopt(ep->eq, ep->id, &ep->own_channel);
	if (!ret) {
		conn_param(ep, data, len, &p);
		if (vrb_lib.connect(ep->id, &p)) {
			FI_WARN(&vrb_prov, FI_LOG_EP_CTRL, "rdma_connect: %s\n",
				strerror(errno));
			ret = -FI_ECONNREFUSED;
		}
	}
	if (!ret)
		ep->state = VRB_EP_CONNECTING;
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

static int ep_accept(struct fid_ep *fid, const void *param, size_t paramlen)
{
	struct vrb_ep *ep = vrb_ep_of(fid);
	struct rdma_conn_param p;
	uint8_t data[VRB_CM_REP_DATA], len;
	int ret;

	if (!ep->passive)
		return -FI_EINVAL;
	ret = vrb_cm_pack(param, paramlen, sizeof(data), data, &len);
	if (ret)
		return ret;
	pthread_mutex_lock(&ep->lock);
	ret = ep_enable(ep);
	if (!ret && ep->state != VRB_EP_ENABLED)
		ret = -FI_EOPBADSTATE;
	if (!ret) {
		conn_param(ep, data, len, &p);
		if (vrb_lib.accept(ep->id, &p)) {
			FI_WARN(&vrb_prov, FI_LOG_EP_CTRL, "rdma_accept: %s\n",
				strerror(errno));
			ret = -FI_ECONNABORTED;
		}
	}
	if (!ret)
		ep->state = VRB_EP_CONNECTING;
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

static int ep_shutdown(struct fid_ep *fid, uint64_t flags)
{
	struct vrb_ep *ep = vrb_ep_of(fid);
	int ret = 0;

	if (flags)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&ep->lock);
	if (ep->state == VRB_EP_CONNECTED || ep->state == VRB_EP_CONNECTING) {
		if (vrb_lib.disconnect(ep->id))
			ret = -FI_EINVAL;
		else
			ep->state = VRB_EP_SHUTDOWN;
	}
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

void vrb_ep_cm_event(struct vrb_ep *ep, enum rdma_cm_event_type event)
{
	pthread_mutex_lock(&ep->lock);
	if (event == RDMA_CM_EVENT_ESTABLISHED)
		ep->state = VRB_EP_CONNECTED;
	else if (ep->state != VRB_EP_IDLE)
		ep->state = VRB_EP_SHUTDOWN;
	pthread_mutex_unlock(&ep->lock);
}

static int copy_addr(const struct sockaddr *sa, void *addr, size_t *addrlen)
{
	size_t len = vrb_sockaddr_len(sa), given;

	if (!addrlen)
		return -FI_EINVAL;
	if (!len)
		return -FI_EADDRNOTAVAIL;
	given = *addrlen;
	*addrlen = len;
	if (!addr || given < len)
		return -FI_ETOOSMALL;
	memcpy(addr, sa, len);
	return 0;
}

static int ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct vrb_ep *ep = container_of(fid, struct vrb_ep, ep_fid.fid);

	if (!ep->bound && !ep->passive)
		return copy_addr((struct sockaddr *)&ep->src, addr, addrlen);
	return copy_addr(rdma_get_local_addr(ep->id), addr, addrlen);
}

static int ep_getpeer(struct fid_ep *fid, void *addr, size_t *addrlen)
{
	struct vrb_ep *ep = vrb_ep_of(fid);

	if (!ep->resolved)
		return -FI_ENOTCONN;
	return copy_addr(rdma_get_peer_addr(ep->id), addr, addrlen);
}

static int ep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct vrb_ep *ep = container_of(fid, struct vrb_ep, ep_fid.fid);
	int ret = 0;

	if (!addr || addrlen < sizeof(ep->src) ||
	    ((struct sockaddr *)addr)->sa_family != AF_INET)
		return -FI_EINVAL;
	pthread_mutex_lock(&ep->lock);
	if (ep->bound || ep->passive)
		ret = -FI_EOPBADSTATE;
	else
		memcpy(&ep->src, addr, sizeof(ep->src));
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

/* ---- Options and queue room ------------------------------------------------------------------- */

static int ep_getopt(fid_t fid, int level, int optname, void *optval,
		     size_t *optlen)
{
	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	if (!optval || !optlen)
		return -FI_EINVAL;
	switch (optname) {
	case FI_OPT_CM_DATA_SIZE:
		return fabsim_getopt_size(optval, optlen, VRB_CM_DATA_SIZE);
	default:
		return -FI_ENOPROTOOPT;
	}
}

static ssize_t ep_tx_size_left(struct fid_ep *fid)
{
	struct vrb_ep *ep = vrb_ep_of(fid);
	uint64_t used;

	if (ep->state == VRB_EP_IDLE)
		return -FI_EOPBADSTATE;
	used = ep->sq_posted - __atomic_load_n(&ep->sq_done, __ATOMIC_ACQUIRE);
	return (ssize_t)(ep->tx_size - used);
}

static ssize_t ep_rx_size_left(struct fid_ep *fid)
{
	struct vrb_ep *ep = vrb_ep_of(fid);

	if (ep->state == VRB_EP_IDLE)
		return -FI_EOPBADSTATE;
	return (ssize_t)(ep->rx_size -
			 __atomic_load_n(&ep->rx_posted, __ATOMIC_ACQUIRE));
}

/* ---- Close ------------------------------------------------------------------------------------- */

static void unref_cq(struct vrb_cq *cq)
{
	if (!cq)
		return;
	pthread_mutex_lock(&cq->lock);
	cq->refs--;
	pthread_mutex_unlock(&cq->lock);
}

static int ep_close(struct fid *fid)
{
	struct vrb_ep *ep = container_of(fid, struct vrb_ep, ep_fid.fid);
	struct vrb_domain *dom = ep->domain;

	/* From here on, completions of its requests are dropped. */
	if (ep->tx_cq)
		vrb_cq_detach(ep->tx_cq, ep);
	if (ep->rx_cq)
		vrb_cq_detach(ep->rx_cq, ep);
	if (ep->id) {
		if (ep->id->qp)
			vrb_lib.cm_destroy_qp(ep->id);
		vrb_lib.destroy_id(ep->id);
	}
	if (ep->own_channel)
		vrb_lib.destroy_event_channel(ep->own_channel);
	if (ep->scratch_desc.mr)
		vrb_lib.dereg_mr(ep->scratch_desc.mr);
	unref_cq(ep->tx_cq);
	unref_cq(ep->rx_cq);
	if (ep->eq)
		vrb_eq_unref(ep->eq);
	pthread_mutex_lock(&dom->lock);
	dom->refs--;
	pthread_mutex_unlock(&dom->lock);
	pthread_mutex_destroy(&ep->lock);
	fi_freeinfo(ep->info);
	free(ep->unsignaled_ctx);
	free(ep);
	return 0;
}

uint64_t vrb_ep_op_flags(struct fid_ep *fid, uint64_t which)
{
	struct vrb_ep *ep = vrb_ep_of(fid);

	return which == FI_RECV ? ep->rx_op_flags : ep->tx_op_flags;
}

/* ---- Tables and construction ------------------------------------------------------------------- */

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
	.cancel = vrb_no_cancel,
	.getopt = ep_getopt,
	.setopt = vrb_no_setopt,
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

static int check_info(struct vrb_domain *dom, const struct fi_info *info)
{
	const struct fi_info *d = dom->info;

	if (!info->ep_attr || !info->tx_attr || !info->rx_attr)
		return -FI_EINVAL;
	if (info->ep_attr->type != FI_EP_MSG) {
		FI_WARN(&vrb_prov, FI_LOG_EP_CTRL, "fi_endpoint: type %s not "
			"offered (FI_EP_MSG is)\n",
			fi_tostr(&info->ep_attr->type, FI_TYPE_EP_TYPE));
		return -FI_ENOSYS;
	}
	if (info->tx_attr->size > (size_t)dom->dev.max_qp_wr ||
	    info->rx_attr->size > (size_t)dom->dev.max_qp_wr ||
	    info->tx_attr->iov_limit > (size_t)dom->dev.max_sge ||
	    info->rx_attr->iov_limit > (size_t)dom->dev.max_sge ||
	    info->tx_attr->inject_size > d->tx_attr->inject_size) {
		FI_WARN(&vrb_prov, FI_LOG_EP_CTRL, "fi_endpoint: queue sizes, "
			"iov limits or inject size beyond the device's\n");
		return -FI_EINVAL;
	}
	return 0;
}

/* The passive side: the id of a connection request becomes ours. */
static int take_connreq(struct vrb_ep *ep, struct fid *handle)
{
	struct vrb_connreq *req;

	if (handle->fclass != FI_CLASS_CONNREQ)
		return -FI_EINVAL;
	req = container_of(handle, struct vrb_connreq, handle);
	if (req->id->verbs != ep->domain->ctx) {
		FI_WARN(&vrb_prov, FI_LOG_EP_CTRL, "fi_endpoint: the request "
			"came in on another device than domain %s\n",
			ep->domain->info->domain_attr->name);
		return -FI_EINVAL;
	}
	ep->id = req->id;
	ep->id->context = &ep->ep_fid.fid;
	ep->passive = ep->bound = ep->resolved = true;
	free(req);
	return 0;
}

/* The active side: an id of our own, bound at fi_enable to the address
 * chosen by then (the info's, fi_setname's, or the device's). */
static int new_id(struct vrb_ep *ep, const struct fi_info *info)
{
	const struct fi_info *d = ep->domain->info;
	const struct sockaddr_in *src = info->src_addr ? info->src_addr :
							 d->src_addr;

	if (src && src->sin_family == AF_INET)
		ep->src = *src;
	else
		ep->src.sin_family = AF_INET;
	ep->own_channel = vrb_lib.create_event_channel();
	if (!ep->own_channel ||
	    vrb_lib.create_id(ep->own_channel, &ep->id, &ep->ep_fid.fid,
			      RDMA_PS_TCP)) {
		FI_WARN(&vrb_prov, FI_LOG_EP_CTRL, "fi_endpoint: %s\n",
			strerror(errno));
		return -FI_ENOMEM;
	}
	return 0;
}

static size_t or_default(size_t asked, int device_max, size_t dflt)
{
	size_t max = device_max > 0 ? (size_t)device_max : dflt;

	if (asked)
		return asked;
	return dflt < max ? dflt : max;
}

int vrb_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **out, void *context)
{
	struct vrb_domain *dom =
		container_of(domain, struct vrb_domain, domain_fid);
	struct vrb_ep *ep;
	int ret;

	if (!info || !out)
		return -FI_EINVAL;
	ret = check_info(dom, info);
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
	ep->domain = dom;
	pthread_mutex_init(&ep->lock, NULL);
	ep->tx_size = or_default(info->tx_attr->size, dom->dev.max_qp_wr,
				 VRB_DEF_QUEUE);
	ep->rx_size = or_default(info->rx_attr->size, dom->dev.max_qp_wr,
				 VRB_DEF_QUEUE);
	if (!ep->info->tx_attr->iov_limit)
		ep->info->tx_attr->iov_limit = 1;
	if (!ep->info->rx_attr->iov_limit)
		ep->info->rx_attr->iov_limit = 1;
	ep->inject_size = info->tx_attr->inject_size;
	ep->tx_op_flags = info->tx_attr->op_flags;
	ep->rx_op_flags = info->rx_attr->op_flags;
	ret = info->handle ? take_connreq(ep, info->handle) :
			     new_id(ep, info);
	if (ret) {
		if (ep->own_channel)
			vrb_lib.destroy_event_channel(ep->own_channel);
		pthread_mutex_destroy(&ep->lock);
		fi_freeinfo(ep->info);
		free(ep);
		return ret;
	}
	ep->ep_fid.fid.fclass = FI_CLASS_EP;
	ep->ep_fid.fid.context = context;
	ep->ep_fid.fid.ops = &ep_fi_ops;
	ep->ep_fid.ops = &ep_ops;
	ep->ep_fid.cm = &ep_cm_ops;
	ep->ep_fid.msg = &vrb_msg_ops.ops;
	ep->ep_fid.rma = &vrb_rma_ops.ops;
	ep->ep_fid.atomic = &vrb_atomic_ops.ops;
	ep->ep_fid.tagged = &vrb_no_tagged_ops;
	ep->ep_fid.collective = &fabsim_no_collective_ops;
	pthread_mutex_lock(&dom->lock);
	dom->refs++;
	pthread_mutex_unlock(&dom->lock);
	*out = &ep->ep_fid;
	return 0;
}
