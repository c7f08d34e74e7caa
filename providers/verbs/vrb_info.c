/* SPDX-License-Identifier: BSD-2-Clause
 * What the verbs provider offers to fi_getinfo: one FI_EP_MSG entry per
 * device, for its first active port, with the attributes the device and
 * port report (vrb_attr.c turns them into fi_info fields).
 *
 * Addressing is IPv4 through rdma_cm, as libfabric's verbs provider does:
 * a device's address is the IPv4 address in its RoCEv2 GID table, or, on
 * InfiniBand, the IPoIB interface address rdma_cm binds to it. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

/* ---- Was verbs asked for? ------------------------------------------------------ */

static bool names_verbs(const char *list)
{
	return list && list[0] != '^' && strstr(list, VRB_PROV_NAME);
}

static bool asked_for(const struct fi_info *hints)
{
	return names_verbs(getenv("FI_PROVIDER")) ||
	       (hints && hints->fabric_attr &&
		names_verbs(hints->fabric_attr->prov_name));
}

/* ---- Inline size, probed once per device ------------------------------------------ */

static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static struct probed {
	char           name[IBV_SYSFS_NAME_MAX];
	uint32_t       inline_max;
	struct probed *next;
} *probed;

/* The largest inline send a device accepts: verbs has no query for it,
 * so create queue pairs asking for less and less until one is made. */
static uint32_t probe_inline(struct ibv_context *ctx)
{
	static const uint32_t tries[] = { VRB_INLINE_PROBE, 128, 64, 32, 16 };
	struct ibv_pd *pd = vrb_lib.alloc_pd(ctx);
	struct ibv_cq *cq = vrb_lib.create_cq(ctx, 2, NULL, NULL, 0);
	uint32_t found = 0;

	for (size_t i = 0; pd && cq && i < sizeof(tries) / sizeof(tries[0]);
	     i++) {
		struct ibv_qp_init_attr attr = {
			.send_cq = cq,
			.recv_cq = cq,
			.cap = { 1, 1, 1, 1, tries[i] },
			.qp_type = IBV_QPT_RC,
		};
		struct ibv_qp *qp = vrb_lib.create_qp(pd, &attr);

		if (qp) {
			found = attr.cap.max_inline_data;
			vrb_lib.destroy_qp(qp);
			break;
		}
	}
	if (cq)
		vrb_lib.destroy_cq(cq);
	if (pd)
		vrb_lib.dealloc_pd(pd);
	return found;
}

static uint32_t inline_of(struct ibv_context *ctx, const char *name)
{
	struct probed *p;
	uint32_t value;

	pthread_mutex_lock(&probe_lock);
	for (p = probed; p && strcmp(p->name, name); p = p->next)
		;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (p) {
			snprintf(p->name, sizeof(p->name), "%s", name);
			p->inline_max = probe_inline(ctx);
			p->next = probed;
			probed = p;
		}
	}
	value = p ? p->inline_max : 0;
	pthread_mutex_unlock(&probe_lock);
	return value;
}

/* ---- Devices --------------------------------------------------------------------------- */

struct vrb_found {
	struct vrb_device_desc desc;
	char                   name[IBV_SYSFS_NAME_MAX];
	struct in_addr         ip;
	bool                   has_ip;
};

/* InfiniBand: the IPoIB interface rdma_cm binds to this device. */
static bool ipoib_address(const char *name, struct in_addr *out)
{
	struct ifaddrs *ifs, *i;
	bool found = false;

	if (getifaddrs(&ifs))
		return false;
	for (i = ifs; i && !found; i = i->ifa_next) {
		struct rdma_cm_id *id;

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		if (vrb_lib.create_id(NULL, &id, NULL, RDMA_PS_TCP))
			continue;
		if (!vrb_lib.bind_addr(id, i->ifa_addr) && id->verbs &&
		    !strcmp(vrb_lib.get_device_name(id->verbs->device), name)) {
			*out = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
			found = true;
		}
		vrb_lib.destroy_id(id);
	}
	freeifaddrs(ifs);
	return found;
}

static bool ipv4_gid(struct ibv_context *ctx, uint8_t port, int table,
		     struct in_addr *out)
{
	for (int i = 0; i < table; i++) {
		union ibv_gid gid;

		if (!vrb_lib.query_gid(ctx, port, i, &gid) &&
		    vrb_gid_ipv4(&gid, out))
			return true;
	}
	return false;
}

/* 0 with *f filled, or -FI_ENODATA (logged) when the device cannot
 * serve: unopenable, no active port. */
static int describe(struct ibv_device *dev, struct vrb_found *f)
{
	struct vrb_device_desc *d = &f->desc;
	struct ibv_context *ctx;
	int ret = -FI_ENODATA;

	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", vrb_lib.get_device_name(dev));
	d->name = f->name;
	ctx = vrb_lib.open_device(dev);
	if (!ctx) {
		FI_INFO(&vrb_prov, FI_LOG_CORE, "%s: cannot open the device\n",
			f->name);
		return ret;
	}
	if (vrb_lib.query_device(ctx, &d->dev)) {
		FI_INFO(&vrb_prov, FI_LOG_CORE, "%s: ibv_query_device failed\n",
			f->name);
		goto out;
	}
	for (uint8_t p = 1; p <= d->dev.phys_port_cnt; p++) {
		if (!vrb_query_port(&vrb_lib, ctx, p, &d->port) &&
		    d->port.state == IBV_PORT_ACTIVE) {
			d->port_num = p;
			break;
		}
	}
	if (!d->port_num) {
		FI_INFO(&vrb_prov, FI_LOG_CORE, "%s: no active port\n",
			f->name);
		goto out;
	}
	if (vrb_lib.query_gid(ctx, d->port_num, 0, &d->gid0))
		memset(&d->gid0, 0, sizeof(d->gid0));
	f->has_ip = ipv4_gid(ctx, d->port_num, d->port.gid_tbl_len, &f->ip) ||
		    ipoib_address(f->name, &f->ip);
	d->inline_max = inline_of(ctx, f->name);
	ret = 0;
out:
	vrb_lib.close_device(ctx);
	return ret;
}

/* ---- Addresses ----------------------------------------------------------------------------- */

static int resolve(const char *node, const char *service, uint64_t flags,
		   bool passive, struct sockaddr_in *out)
{
	struct addrinfo hints = { .ai_family = AF_INET };
	struct addrinfo *res = NULL;
	int ret;

	if (flags & FI_NUMERICHOST)
		hints.ai_flags |= AI_NUMERICHOST;
	if (passive)
		hints.ai_flags |= AI_PASSIVE;
	ret = getaddrinfo(node, service, &hints, &res);
	if (ret) {
		FI_INFO(&vrb_prov, FI_LOG_CORE, "cannot resolve %s:%s: %s\n",
			node ? node : "", service ? service : "",
			gai_strerror(ret));
		return -FI_ENODATA;
	}
	memcpy(out, res->ai_addr, sizeof(*out));
	freeaddrinfo(res);
	return 0;
}

/* Where the application wants to be and to go. */
struct wanted {
	bool               src_set, dest_set;
	struct sockaddr_in src, dest;
};

static int wanted_addresses(const char *node, const char *service,
			    uint64_t flags, const struct fi_info *hints,
			    struct wanted *w)
{
	int ret = 0;

	memset(w, 0, sizeof(*w));
	if (hints && hints->addr_format != FI_FORMAT_UNSPEC &&
	    hints->addr_format != FI_SOCKADDR_IN &&
	    hints->addr_format != FI_SOCKADDR) {
		FI_INFO(&vrb_prov, FI_LOG_CORE, "only IPv4 addresses "
			"(FI_SOCKADDR_IN) are supported\n");
		return -FI_ENODATA;
	}
	if (hints && hints->src_addr) {
		if (hints->src_addrlen < sizeof(w->src) ||
		    ((struct sockaddr *)hints->src_addr)->sa_family != AF_INET)
			return -FI_ENODATA;
		memcpy(&w->src, hints->src_addr, sizeof(w->src));
		w->src_set = true;
	}
	if (hints && hints->dest_addr) {
		if (hints->dest_addrlen < sizeof(w->dest) ||
		    ((struct sockaddr *)hints->dest_addr)->sa_family != AF_INET)
			return -FI_ENODATA;
		memcpy(&w->dest, hints->dest_addr, sizeof(w->dest));
		w->dest_set = true;
	}
	if (!node && !service)
		return 0;
	if ((flags & FI_SOURCE) || !node) {
		ret = resolve(node, service, flags, true, &w->src);
		w->src_set = !ret;
	} else {
		ret = resolve(node, service, flags, false, &w->dest);
		w->dest_set = !ret;
	}
	return ret;
}

static int set_addr(void **field, size_t *len, const struct sockaddr_in *sin)
{
	free(*field);
	*field = malloc(sizeof(*sin));
	if (!*field)
		return -FI_ENOMEM;
	memcpy(*field, sin, sizeof(*sin));
	*len = sizeof(*sin);
	return 0;
}

static int offer(const struct vrb_found *f, const struct wanted *w,
		 bool cq_data, struct fi_info **out)
{
	struct fi_info *info = fi_allocinfo();
	struct sockaddr_in src = { .sin_family = AF_INET, .sin_addr = f->ip };
	int ret;

	if (!info)
		return -FI_ENOMEM;
	ret = vrb_msg_info_fill(&f->desc, cq_data, info);
	if (!ret)
		vrb_params_apply(info);
	if (w->src_set)
		src.sin_port = w->src.sin_port;
	if (!ret)
		ret = set_addr(&info->src_addr, &info->src_addrlen, &src);
	if (!ret && w->dest_set)
		ret = set_addr(&info->dest_addr, &info->dest_addrlen, &w->dest);
	if (ret) {
		fi_freeinfo(info);
		return ret;
	}
	*out = info;
	return 0;
}

/* FI_RX_CQ_DATA is required only from programs that want remote CQ data
 * (they must post a receive for each RDMA write with data); others get
 * an entry without it. */
static bool wants_cq_data(const struct fi_info *hints)
{
	if (!hints)
		return true;
	return (hints->mode & FI_RX_CQ_DATA) ||
	       (hints->rx_attr && (hints->rx_attr->mode & FI_RX_CQ_DATA));
}

int vrb_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info)
{
	struct fi_info *head = NULL, **tail = &head;
	struct ibv_device **devs;
	struct wanted w;
	int count = 0, usable = 0, ret;

	ret = vrb_load(asked_for(hints));
	if (ret)
		return ret;
	if (hints && hints->ep_attr && hints->ep_attr->type != FI_EP_UNSPEC &&
	    hints->ep_attr->type != FI_EP_MSG)
		return -FI_ENODATA;
	ret = wanted_addresses(node, service, flags, hints, &w);
	if (ret)
		return ret;
	devs = vrb_lib.get_device_list(&count);
	if (!devs || !count) {
		if (asked_for(hints))
			FI_WARN(&vrb_prov, FI_LOG_CORE, "no verbs provider: "
				"no RDMA device found (ibv_get_device_list "
				"returned none)\n");
		else
			FI_INFO(&vrb_prov, FI_LOG_CORE, "no verbs provider: "
				"no RDMA device found\n");
		if (devs)
			vrb_lib.free_device_list(devs);
		return -FI_ENODATA;
	}
	for (int i = 0; i < count && !ret; i++) {
		struct vrb_found f;

		if (describe(devs[i], &f) || !vrb_params_device_wanted(f.name))
			continue;
		if (!f.has_ip) {
			FI_INFO(&vrb_prov, FI_LOG_CORE, "%s: no IPv4 address "
				"(RoCEv2 GID or IPoIB interface); rdma_cm cannot "
				"reach it\n", f.name);
			continue;
		}
		usable++;
		if (w.src_set && w.src.sin_addr.s_addr != htonl(INADDR_ANY) &&
		    w.src.sin_addr.s_addr != f.ip.s_addr)
			continue;
		ret = offer(&f, &w, wants_cq_data(hints), tail);
		if (!ret)
			tail = &(*tail)->next;
	}
	vrb_lib.free_device_list(devs);
	if (ret) {
		fi_freeinfo(head);
		return ret;
	}
	if (!head) {
		if (usable)
			FI_INFO(&vrb_prov, FI_LOG_CORE, "no verbs device has the "
				"address asked for\n");
		else if (asked_for(hints))
			FI_WARN(&vrb_prov, FI_LOG_CORE, "no verbs provider: "
				"%d RDMA device(s), none usable (see FI_LOG_LEVEL="
				"info)\n", count);
		else
			FI_INFO(&vrb_prov, FI_LOG_CORE, "no verbs provider: "
				"%d RDMA device(s), none usable\n", count);
		return -FI_ENODATA;
	}
	*info = head;
	return 0;
}
