/* SPDX-License-Identifier: BSD-2-Clause
 * What the sim provider offers to fi_getinfo. The core applies the hints
 * (see fabsim/core.h for how these entries are read).
 *
 * Two reliable-datagram entries differ only in memory registration: the
 * first asks for the modes of a verbs NIC (local descriptors, virtual
 * addresses, allocated memory, provider keys) and is chosen by programs that
 * support them; the second serves programs that support none, as providers
 * with an internal registration cache do.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <fabsim/core.h>

#include "sim.h"

#define SIM_CAPS_PRIMARY                                                 \
	(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_DIRECTED_RECV)
#define SIM_CAPS_MODIFIERS                                               \
	(FI_READ | FI_WRITE | FI_SEND | FI_RECV | FI_REMOTE_READ |       \
	 FI_REMOTE_WRITE)
#define SIM_CAPS_SECONDARY                                               \
	(FI_MULTI_RECV | FI_SOURCE | FI_SOURCE_ERR | FI_RMA_EVENT |      \
	 FI_LOCAL_COMM | FI_REMOTE_COMM)
#define SIM_CAPS (SIM_CAPS_PRIMARY | SIM_CAPS_MODIFIERS | SIM_CAPS_SECONDARY)

#define SIM_TX_CAPS                                                     \
	(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE |     \
	 FI_SEND)
#define SIM_RX_CAPS                                                     \
	(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_RECV |                \
	 FI_REMOTE_READ | FI_REMOTE_WRITE | FI_DIRECTED_RECV |              \
	 FI_MULTI_RECV | FI_SOURCE | FI_SOURCE_ERR | FI_RMA_EVENT)

#define SIM_STRICT_MR_MODE \
	(FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY)

/* What each endpoint type can do on this NIC. */
struct ep_profile {
	enum fi_ep_type type;
	uint32_t        protocol;
	uint64_t        caps;
	uint64_t        tx_caps, rx_caps;
	bool            ordered;   /* reliable: message ordering guaranteed */
};

static const struct ep_profile profiles[] = {
	{ FI_EP_RDM, FI_PROTO_UNSPEC, SIM_CAPS, SIM_TX_CAPS, SIM_RX_CAPS, true },
	{ FI_EP_MSG, FI_PROTO_RDMA_CM_IB_RC,
	  FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | SIM_CAPS_MODIFIERS |
		  FI_MULTI_RECV | FI_RMA_EVENT | FI_LOCAL_COMM | FI_REMOTE_COMM,
	  SIM_TX_CAPS,
	  FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_RECV | FI_REMOTE_READ |
		  FI_REMOTE_WRITE | FI_MULTI_RECV | FI_RMA_EVENT,
	  true },
	{ FI_EP_DGRAM, FI_PROTO_IB_UD,
	  FI_MSG | FI_SEND | FI_RECV | FI_SOURCE | FI_LOCAL_COMM |
		  FI_REMOTE_COMM,
	  FI_MSG | FI_SEND, FI_MSG | FI_RECV | FI_SOURCE, false },
};

int sim_info_check_open(const struct fi_info *info, const char *call)
{
	const struct fi_ep_attr *e = info->ep_attr;
	char why[256];
	int ret;

	/* Values their types do not have: the application's error. */
	ret = fabsim_info_check_values(info, why, sizeof(why));
	if (ret) {
		FI_WARN(&sim_prov, FI_LOG_CORE, "%s: %s\n", call, why);
		return ret;
	}
	if (!e)
		return 0;
	/* What fi_getinfo would not have offered. */
	for (size_t i = 0; i < count_of(profiles); i++) {
		uint64_t extra;

		if (profiles[i].type != e->type)
			continue;
		extra = info->caps & ~profiles[i].caps;
		if (extra) {
			FI_WARN(&sim_prov, FI_LOG_CORE, "%s: caps 0x%llx are "
				"not offered for this endpoint type\n", call,
				(unsigned long long)extra);
			return -FI_ENODATA;
		}
	}
	if (e->tx_ctx_cnt > 1 || e->rx_ctx_cnt > 1) {
		FI_WARN(&sim_prov, FI_LOG_CORE, "%s: %zu transmit and %zu "
			"receive contexts asked; the endpoint has one of "
			"each (tx_ctx_cnt, rx_ctx_cnt 1)\n", call,
			e->tx_ctx_cnt, e->rx_ctx_cnt);
		return -FI_ENODATA;
	}
	return 0;
}

static struct fi_info *offer(const nm_config *cfg, const struct ep_profile *p,
			     int mr_mode)
{
	struct fi_info *info = fi_allocinfo();
	size_t max_msg = p->type == FI_EP_DGRAM ? cfg->link.mtu_bytes
						 : SIM_MAX_MSG_SIZE;
	uint64_t order = FI_ORDER_SAS | FI_ORDER_SAW | FI_ORDER_SAR |
			 FI_ORDER_RAW | FI_ORDER_RAR | FI_ORDER_WAW |
			 FI_ORDER_WAS | FI_ORDER_RAS | FI_ORDER_WAR;

	if (!info)
		return NULL;
	info->caps = p->caps;
	info->mode = 0;
	info->addr_format = FI_SOCKADDR_IN;

	info->tx_attr->caps = p->tx_caps;
	/* The flags an application may make defaults: the core matches
	 * hints against them and returns only what the hints asked for. */
	info->tx_attr->op_flags = FI_COMPLETION | FI_INJECT |
				  FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE |
				  (p->ordered ? FI_DELIVERY_COMPLETE | FI_FENCE : 0);
	info->tx_attr->msg_order = p->ordered ? order : FI_ORDER_NONE;
	/* Completions follow posting order per peer, not across peers. */
	info->tx_attr->comp_order = FI_ORDER_NONE;
	info->tx_attr->inject_size = SIM_INJECT_SIZE;
	info->tx_attr->size = SIM_TX_SIZE;
	info->tx_attr->iov_limit = SIM_IOV_LIMIT;
	info->tx_attr->rma_iov_limit = p->type == FI_EP_DGRAM ? 0
							       : SIM_RMA_IOV_LIMIT;

	info->rx_attr->caps = p->rx_caps;
	info->rx_attr->op_flags = FI_COMPLETION |
				  (p->type == FI_EP_DGRAM ? 0 : FI_MULTI_RECV);
	info->rx_attr->msg_order = info->tx_attr->msg_order;
	info->rx_attr->comp_order = FI_ORDER_NONE;
	info->rx_attr->size = SIM_RX_SIZE;
	info->rx_attr->iov_limit = SIM_IOV_LIMIT;

	info->ep_attr->type = p->type;
	info->ep_attr->protocol = p->protocol;
	info->ep_attr->protocol_version = 1;
	info->ep_attr->max_msg_size = max_msg;
	if (p->ordered) {
		info->ep_attr->max_order_raw_size = max_msg;
		info->ep_attr->max_order_war_size = max_msg;
		info->ep_attr->max_order_waw_size = max_msg;
	}
	if (p->caps & FI_TAGGED)
		info->ep_attr->mem_tag_format = 0xaaaaaaaaaaaaaaaaULL;
	info->ep_attr->tx_ctx_cnt = 1;
	info->ep_attr->rx_ctx_cnt = 1;

	info->domain_attr->name = strdup(SIM_DOMAIN_NAME);
	info->domain_attr->threading = FI_THREAD_SAFE;
	info->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	info->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	info->domain_attr->resource_mgmt = FI_RM_ENABLED;
	info->domain_attr->av_type = FI_AV_UNSPEC;
	info->domain_attr->mr_mode = mr_mode;
	info->domain_attr->mr_key_size = SIM_MR_KEY_SIZE;
	info->domain_attr->cq_data_size = SIM_CQ_DATA_SIZE;
	/* An error entry's err_data: the source address (FI_SOURCE_ERR) of
	 * a CQ's, a REJ's private data in a connection's refusal on an EQ. */
	info->domain_attr->max_err_data = p->type == FI_EP_MSG ?
						  SIM_CM_DATA_SIZE :
						  sizeof(struct sockaddr_in);
	info->domain_attr->cq_cnt = SIM_CQ_CNT;
	info->domain_attr->ep_cnt = SIM_EP_CNT;
	info->domain_attr->tx_ctx_cnt = 1;
	info->domain_attr->rx_ctx_cnt = 1;
	info->domain_attr->max_ep_tx_ctx = 1;
	info->domain_attr->max_ep_rx_ctx = 1;
	info->domain_attr->cntr_cnt = SIM_CNTR_CNT;
	info->domain_attr->mr_iov_limit = 1;
	info->domain_attr->caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
	info->domain_attr->mr_cnt = cfg->mr.max_regions ? cfg->mr.max_regions
							 : SIZE_MAX;

	info->fabric_attr->name = strdup(SIM_FABRIC_NAME);
	if (!info->domain_attr->name || !info->fabric_attr->name) {
		fi_freeinfo(info);
		return NULL;
	}
	return info;
}

/* node/service to an IPv4 address; only this machine's resolver is asked. */
static int resolve(const char *node, const char *service, uint64_t flags,
		   struct sockaddr_in **out)
{
	struct addrinfo hints = { .ai_family = AF_INET };
	struct addrinfo *res = NULL;
	int ret;

	/* A number is a port: getaddrinfo takes 99999 as 34463. */
	if (service && *service && strspn(service, "0123456789") ==
	    strlen(service) && strtoul(service, NULL, 10) > 65535) {
		FI_WARN(&sim_prov, FI_LOG_CORE, "service %s: a port is 0 to "
			"65535\n", service);
		return -FI_ENODATA;
	}
	if (flags & FI_NUMERICHOST)
		hints.ai_flags |= AI_NUMERICHOST;
	if (!node)
		hints.ai_flags |= AI_PASSIVE;
	ret = getaddrinfo(node, service, &hints, &res);
	if (ret) {
		FI_WARN(&sim_prov, FI_LOG_CORE, "cannot resolve %s:%s: %s\n",
			node ? node : "", service ? service : "",
			gai_strerror(ret));
		return -FI_ENODATA;
	}
	*out = malloc(sizeof(**out));
	if (*out)
		memcpy(*out, res->ai_addr, sizeof(**out));
	freeaddrinfo(res);
	return *out ? 0 : -FI_ENOMEM;
}

static int set_addresses(struct fi_info *info, const char *node,
			 const char *service, uint64_t flags)
{
	struct sockaddr_in *sin;
	int ret;

	if (!node && !service)
		return 0;
	ret = resolve(node, service, flags, &sin);
	if (ret)
		return ret;
	if ((flags & FI_SOURCE) || !node) {
		info->src_addr = sin;
		info->src_addrlen = sizeof(*sin);
	} else {
		info->dest_addr = sin;
		info->dest_addrlen = sizeof(*sin);
	}
	return 0;
}

/* An IPv4 address from the hints, copied (other formats are not ours). */
static int copy_hinted(void **to, size_t *to_len, const void *addr,
		       size_t len)
{
	const struct sockaddr_in *sin = addr;

	if (*to || !addr || len != sizeof(*sin) || sin->sin_family != AF_INET)
		return 0;
	*to = malloc(sizeof(*sin));
	if (!*to)
		return -FI_ENOMEM;
	memcpy(*to, sin, sizeof(*sin));
	*to_len = sizeof(*sin);
	return 0;
}

/* fi_getinfo(3): the hints' source address is used unless FI_SOURCE is
 * set, their destination address when node and service are NULL or
 * FI_SOURCE is set; node and service, where given, come first. */
static int hinted_addresses(struct fi_info *info, const char *node,
			    const char *service, uint64_t flags,
			    const struct fi_info *hints)
{
	int ret = 0;

	if (!hints)
		return 0;
	if (!(flags & FI_SOURCE))
		ret = copy_hinted(&info->src_addr, &info->src_addrlen,
				  hints->src_addr, hints->src_addrlen);
	if (!ret && ((!node && !service) || (flags & FI_SOURCE)))
		ret = copy_hinted(&info->dest_addr, &info->dest_addrlen,
				  hints->dest_addr, hints->dest_addrlen);
	return ret;
}

/* fi_getinfo(3): "On output a provider shall return an address" as the
 * source. One that neither node, service nor hints name is any of this
 * process's NICs, port any: the wildcard, which opens an endpoint on a
 * NIC of its own (a domain picks its host by a source address on the
 * fabric, 10.0.0.0/8; sim_domain.c). */
static int any_source(struct fi_info *info)
{
	struct sockaddr_in *sin;

	if (info->src_addr)
		return 0;
	sin = calloc(1, sizeof(*sin));
	if (!sin)
		return -FI_ENOMEM;
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_ANY);
	info->src_addr = sin;
	info->src_addrlen = sizeof(*sin);
	return 0;
}

/* Each endpoint type, first with the registration modes of a verbs NIC,
 * then (unless FI_SIM_MR_STRICT) without any. */
int sim_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info)
{
	struct fi_info *head = NULL, **tail = &head;
	nm_config cfg;
	int ret;

	ret = sim_config_load(&cfg, NULL);
	if (ret)
		return ret;
	for (size_t i = 0; i < count_of(profiles) && !ret; i++) {
		for (int relaxed = 0; relaxed < 2 && !ret; relaxed++) {
			struct fi_info *o;

			if (relaxed && sim_mr_strict())
				continue;
			o = offer(&cfg, &profiles[i],
				  relaxed ? 0 : SIM_STRICT_MR_MODE);
			if (!o) {
				ret = -FI_ENOMEM;
				break;
			}
			*tail = o;
			tail = &o->next;
			ret = set_addresses(o, node, service, flags);
			if (!ret)
				ret = hinted_addresses(o, node, service, flags,
						       hints);
			if (!ret)
				ret = any_source(o);
		}
	}
	if (ret) {
		fi_freeinfo(head);
		return ret;
	}
	*info = head;
	return 0;
}
