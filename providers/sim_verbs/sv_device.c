/* SPDX-License-Identifier: BSD-2-Clause
 * Devices and contexts: what ibv_devices and ibv_devinfo show. A device
 * looks like a RoCE NIC: an Ethernet port with the link's MTU and rate
 * from the active preset, a link-local GID and an IPv4-mapped RoCEv2 GID,
 * and the NIC model's limits. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv.h"

/* ---- Device list --------------------------------------------------------------- */

struct ibv_device **ibv_get_device_list(int *num_devices)
{
	unsigned n = sv_world_init() ? 0 : sv_world.ndev;
	struct ibv_device **list = calloc(n + 1, sizeof(*list));

	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	for (unsigned i = 0; i < n; i++)
		list[i] = &sv_world.devs[i].dev;
	if (num_devices)
		*num_devices = (int)n;
	return list;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	return sv_device_of(device)->guid;
}

int ibv_get_device_index(struct ibv_device *device)
{
	return (int)sv_device_of(device)->index;
}

/* ---- Attributes ------------------------------------------------------------------- */

static void fill_device_attr(const struct sv_device *d,
			     struct ibv_device_attr *a)
{
	const nm_config *cfg = &sv_world.cfg;

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "fabsim %s", cfg->preset);
	a->node_guid = d->guid;
	a->sys_image_guid = d->guid;
	a->max_mr_size = UINT64_MAX;
	a->page_size_cap = cfg->mr.page_size;
	a->vendor_id = 0;
	a->vendor_part_id = 0;
	a->hw_ver = 0;
	a->max_qp = NIC_QPN_MAX - NIC_QPN_BASE + 1;
	a->max_qp_wr = SV_MAX_QP_WR;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN |
			      IBV_DEVICE_SYS_IMAGE_GUID |
			      IBV_DEVICE_PORT_ACTIVE_EVENT;
	a->max_sge = SV_MAX_SGE;
	a->max_sge_rd = SV_MAX_SGE;
	a->max_cq = SV_MAX_CQ;
	a->max_cqe = SV_MAX_CQE;
	a->max_mr = cfg->mr.max_regions && cfg->mr.max_regions < INT32_MAX ?
			    (int)cfg->mr.max_regions : INT32_MAX;
	a->max_pd = SV_MAX_PD;
	a->max_srq = SV_MAX_CQ;
	a->max_srq_wr = SV_MAX_QP_WR;
	a->max_srq_sge = SV_MAX_SGE;
	a->max_qp_rd_atom = SV_MAX_RD_ATOM;
	a->max_res_rd_atom = SV_MAX_RD_ATOM * a->max_qp;
	a->max_qp_init_rd_atom = SV_MAX_RD_ATOM;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_pkeys = 1;
	a->max_ah = INT32_MAX; /* address handles are not counted */
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
}

int ibv_query_device(struct ibv_context *context,
		     struct ibv_device_attr *device_attr)
{
	fill_device_attr(sv_ctx(context)->dev, device_attr);
	return 0;
}

static int query_device_ex(struct ibv_context *context,
			   const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex full;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	memset(&full, 0, sizeof(full));
	fill_device_attr(sv_ctx(context)->dev, &full.orig_attr);
	full.phys_port_cnt_ex = 1;
	memcpy(attr, &full, attr_size < sizeof(full) ? attr_size : sizeof(full));
	return 0;
}

static enum ibv_mtu mtu_enum(uint32_t bytes)
{
	return bytes >= 4096 ? IBV_MTU_4096 : bytes >= 2048 ? IBV_MTU_2048 :
	       bytes >= 1024 ? IBV_MTU_1024 : bytes >= 512 ? IBV_MTU_512 :
							   IBV_MTU_256;
}

/* The IB width and per-lane speed whose product is the link's rate (or
 * the largest one below it). */
static void rate(uint64_t bps, uint8_t *width, uint8_t *speed)
{
	static const struct { uint8_t code; unsigned lanes; } widths[] = {
		{ 2, 4 }, { 1, 1 }, { 16, 2 }, { 4, 8 }, { 8, 12 },
	};
	static const struct { uint8_t code; uint64_t mbps; } speeds[] = {
		{ 1, 2500 }, { 2, 5000 }, { 4, 10000 }, { 16, 14000 },
		{ 32, 25000 }, { 64, 50000 }, { 128, 100000 }, { 0, 0 },
	};
	uint64_t mbps = bps / 1000000, best = 0;

	*width = 1;
	*speed = 1;
	for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
		for (size_t s = 0; speeds[s].code; s++) {
			uint64_t r = speeds[s].mbps * widths[w].lanes;

			if (r <= mbps && r > best) {
				best = r;
				*width = widths[w].code;
				*speed = speeds[s].code;
			}
		}
	}
}

int sv_query_port(struct ibv_context *ctx, uint8_t port,
		  struct ibv_port_attr *attr, size_t len)
{
	struct ibv_port_attr a;

	if (port != 1)
		return EINVAL;
	memset(&a, 0, sizeof(a));
	a.state = IBV_PORT_ACTIVE;
	a.max_mtu = IBV_MTU_4096;
	a.active_mtu = mtu_enum(sv_world.cfg.link.mtu_bytes);
	a.gid_tbl_len = SV_GID_TABLE;
	a.port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	a.max_msg_sz = SV_MAX_MSG_SIZE;
	a.pkey_tbl_len = 1;
	a.max_vl_num = 1;
	rate(sv_world.cfg.link.bandwidth_bps, &a.active_width, &a.active_speed);
	a.phys_state = 5; /* LinkUp */
	a.link_layer = IBV_LINK_LAYER_ETHERNET;
	memcpy(attr, &a, len < sizeof(a) ? len : sizeof(a));
	return 0;
}

/* The compatibility entry (rdma-core's inline ibv_query_port calls the
 * context's query_port instead): the layout up to port_cap_flags2. */
int(ibv_query_port)(struct ibv_context *context, uint8_t port_num,
		    struct _compat_ibv_port_attr *port_attr)
{
	return sv_query_port(context, port_num, (struct ibv_port_attr *)port_attr,
			     offsetof(struct ibv_port_attr, port_cap_flags2));
}

void sv_fill_gid(const struct sv_device *d, int index, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (index == 0) {
		gid->raw[0] = 0xfe;
		gid->raw[1] = 0x80;
		memcpy(gid->raw + 8, &d->guid, 8);
	} else {
		gid->raw[10] = gid->raw[11] = 0xff;
		memcpy(gid->raw + 12, &d->ip.s_addr, 4);
	}
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
		  union ibv_gid *gid)
{
	if (port_num != 1 || index < 0 || index >= SV_GID_TABLE) {
		errno = EINVAL;
		return -1;
	}
	sv_fill_gid(sv_ctx(context)->dev, index, gid);
	return 0;
}

/* Declared in rdma-core's driver.h (not installed): RoCE v2 in sysfs terms
 * is 1. */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, uint32_t *type);
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, uint32_t *type)
{
	if (port_num != 1 || index >= SV_GID_TABLE)
		return EINVAL;
	*type = 1;
	return 0;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
		      uint32_t gid_index, struct ibv_gid_entry *entry,
		      uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e = { 0 };

	if (flags || port_num != 1 || gid_index >= SV_GID_TABLE)
		return EINVAL;
	sv_fill_gid(sv_ctx(context)->dev, (int)gid_index, &e.gid);
	e.gid_index = gid_index;
	e.port_num = port_num;
	e.gid_type = IBV_GID_TYPE_ROCE_V2;
	memcpy(entry, &e, entry_size < sizeof(e) ? entry_size : sizeof(e));
	return 0;
}

ssize_t _ibv_query_gid_table(struct ibv_context *context,
			     struct ibv_gid_entry *entries, size_t max_entries,
			     uint32_t flags, size_t entry_size)
{
	size_t n = 0;

	/* ibv_query_gid_table(3): the array must hold every valid entry,
	 * else the call fails. */
	if (flags || entry_size < sizeof(*entries) || max_entries < SV_GID_TABLE)
		return -EINVAL;
	for (; n < SV_GID_TABLE; n++)
		_ibv_query_gid_ex(context, 1, (uint32_t)n,
				  (struct ibv_gid_entry *)((char *)entries +
							   n * entry_size),
				  0, entry_size);
	return (ssize_t)n;
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
		   __be16 *pkey)
{
	if (port_num != 1 || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htons(0xffff);
	return 0;
}

int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num,
		       __be16 pkey)
{
	return port_num == 1 && (ntohs(pkey) & 0x7fff) == 0x7fff ? 0 : -ENOENT;
}

/* ---- Contexts ------------------------------------------------------------------------ */

static struct ibv_mw *no_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	errno = EOPNOTSUPP;
	return NULL;
}

static int no_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		      struct ibv_mw_bind *bind)
{
	return EOPNOTSUPP;
}

static int no_dealloc_mw(struct ibv_mw *mw)
{
	return EOPNOTSUPP;
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct sv_context *c;
	struct ibv_context *ctx;
	int ret;

	if (sv_world_init()) {
		errno = ENODEV;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->dev = sv_device_of(device);
	ret = sv->waitable_init(&c->async, sv_async_ready);
	if (ret) {
		free(c);
		errno = -ret;
		return NULL;
	}
	c->vctx.sz = sizeof(c->vctx);
	c->vctx.query_port = sv_query_port;
	c->vctx.query_device_ex = query_device_ex;
	c->vctx.create_qp_ex = sv_create_qp_ex;
	c->vctx.create_cq_ex = sv_create_cq_ex;
	ctx = &c->vctx.context;
	ctx->device = device;
	ctx->ops.poll_cq = sv_poll_cq;
	ctx->ops.req_notify_cq = sv_req_notify_cq;
	ctx->ops.post_send = sv_post_send;
	ctx->ops.post_recv = sv_post_recv;
	ctx->ops.post_srq_recv = sv_post_srq_recv;
	ctx->ops.alloc_mw = no_alloc_mw;
	ctx->ops.bind_mw = no_bind_mw;
	ctx->ops.dealloc_mw = no_dealloc_mw;
	ctx->cmd_fd = -1;
	ctx->async_fd = c->async.fd;
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	return ctx;
}

int ibv_close_device(struct ibv_context *context)
{
	struct sv_context *c = sv_ctx(context);

	sv->lock();
	while (c->async_head) {
		struct sv_async_event *e = c->async_head;

		c->async_head = e->next;
		free(e);
	}
	sv->unlock();
	if (sv->waitable_fini(&c->async)) {
		pthread_mutex_destroy(&context->mutex);
		free(c);
	}
	return 0;
}
