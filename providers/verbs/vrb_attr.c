/* SPDX-License-Identifier: BSD-2-Clause
 * Device and port attributes as an FI_EP_MSG offer (fi_getinfo(3)). Sizes
 * and limits are the device's maxima: the core narrows them to the hints
 * (fabsim/core.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_errno.h>

#include "vrb_translate.h"

#define VRB_DOMAIN_CAPS (FI_LOCAL_COMM | FI_REMOTE_COMM)
#define VRB_MSG_CAPS                                                        \
	(FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_SEND | FI_RECV |         \
	 FI_REMOTE_READ | FI_REMOTE_WRITE | VRB_DOMAIN_CAPS)
#define VRB_TX_CAPS (FI_MSG | FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_SEND)
#define VRB_RX_CAPS                                                         \
	(FI_MSG | FI_RMA | FI_ATOMIC | FI_RECV | FI_REMOTE_READ |           \
	 FI_REMOTE_WRITE)
/* A reliable connection delivers and places in order. */
#define VRB_MSG_ORDER                                                       \
	(FI_ORDER_RAR | FI_ORDER_RAW | FI_ORDER_RAS | FI_ORDER_WAR |        \
	 FI_ORDER_WAW | FI_ORDER_WAS | FI_ORDER_SAR | FI_ORDER_SAW |        \
	 FI_ORDER_SAS)

uint32_t vrb_mtu_bytes(enum ibv_mtu mtu)
{
	switch (mtu) {
	case IBV_MTU_256: return 256;
	case IBV_MTU_512: return 512;
	case IBV_MTU_1024: return 1024;
	case IBV_MTU_2048: return 2048;
	case IBV_MTU_4096: return 4096;
	default: return 0;
	}
}

void vrb_fabric_name(const union ibv_gid *gid, char *buf, size_t len)
{
	uint64_t prefix = 0;

	for (int i = 0; i < 8; i++)
		prefix = prefix << 8 | gid->raw[i];
	snprintf(buf, len, "IB-0x%016llx", (unsigned long long)prefix);
}

bool vrb_gid_ipv4(const union ibv_gid *gid, struct in_addr *out)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0,
					    0, 0, 0xff, 0xff };

	if (memcmp(gid->raw, mapped, sizeof(mapped)))
		return false;
	memcpy(&out->s_addr, gid->raw + 12, 4);
	return true;
}

static size_t clamp_int(int v)
{
	return v > 0 ? (size_t)v : 0;
}

int vrb_msg_info_fill(const struct vrb_device_desc *d, bool cq_data,
		      struct fi_info *info)
{
	const struct ibv_device_attr *dev = &d->dev;
	bool atomics = dev->atomic_cap != IBV_ATOMIC_NONE;
	size_t max_msg = d->port.max_msg_sz;
	char fabric[32];

	info->caps = VRB_MSG_CAPS | (atomics ? FI_ATOMIC : 0);
	info->mode = cq_data ? FI_RX_CQ_DATA : 0;
	info->addr_format = FI_SOCKADDR_IN;

	info->tx_attr->caps = VRB_TX_CAPS & (atomics ? ~0ULL : ~FI_ATOMIC);
	info->tx_attr->mode = 0;
	info->tx_attr->op_flags = FI_COMPLETION | FI_INJECT |
				  FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE |
				  FI_DELIVERY_COMPLETE | FI_FENCE;
	info->tx_attr->msg_order = VRB_MSG_ORDER;
	info->tx_attr->comp_order = FI_ORDER_STRICT;
	info->tx_attr->inject_size = d->inline_max;
	info->tx_attr->size = clamp_int(dev->max_qp_wr);
	info->tx_attr->iov_limit = clamp_int(dev->max_sge);
	info->tx_attr->rma_iov_limit = 1;

	info->rx_attr->caps = VRB_RX_CAPS & (atomics ? ~0ULL : ~FI_ATOMIC);
	info->rx_attr->mode = info->mode;
	info->rx_attr->op_flags = FI_COMPLETION;
	info->rx_attr->msg_order = VRB_MSG_ORDER;
	info->rx_attr->comp_order = FI_ORDER_STRICT | FI_ORDER_DATA;
	info->rx_attr->total_buffered_recv = 0;
	info->rx_attr->size = clamp_int(dev->max_qp_wr);
	info->rx_attr->iov_limit = clamp_int(dev->max_sge);

	info->ep_attr->type = FI_EP_MSG;
	info->ep_attr->protocol = FI_PROTO_RDMA_CM_IB_RC;
	info->ep_attr->protocol_version = 1;
	info->ep_attr->max_msg_size = max_msg;
	info->ep_attr->msg_prefix_size = 0;
	info->ep_attr->max_order_raw_size = max_msg;
	info->ep_attr->max_order_war_size = max_msg;
	info->ep_attr->max_order_waw_size = max_msg;
	info->ep_attr->mem_tag_format = 0;
	info->ep_attr->tx_ctx_cnt = 1;
	info->ep_attr->rx_ctx_cnt = 1;

	info->domain_attr->threading = FI_THREAD_SAFE;
	/* The device moves data and connections on its own. */
	info->domain_attr->control_progress = FI_PROGRESS_AUTO;
	info->domain_attr->data_progress = FI_PROGRESS_AUTO;
	info->domain_attr->resource_mgmt = FI_RM_ENABLED;
	info->domain_attr->av_type = FI_AV_UNSPEC;
	info->domain_attr->mr_mode = VRB_MR_MODE;
	info->domain_attr->mr_key_size = sizeof(uint32_t);   /* rkey */
	info->domain_attr->cq_data_size = cq_data ? sizeof(uint32_t) : 0;
	info->domain_attr->cq_cnt = clamp_int(dev->max_cq);
	info->domain_attr->ep_cnt = clamp_int(dev->max_qp);
	info->domain_attr->tx_ctx_cnt = clamp_int(dev->max_qp);
	info->domain_attr->rx_ctx_cnt = clamp_int(dev->max_qp);
	info->domain_attr->max_ep_tx_ctx = 1;
	info->domain_attr->max_ep_rx_ctx = 1;
	info->domain_attr->cntr_cnt = 0;
	info->domain_attr->mr_iov_limit = 1;
	info->domain_attr->mr_cnt = clamp_int(dev->max_mr);
	info->domain_attr->caps = VRB_DOMAIN_CAPS;
	/* An EQ error carries the peer's reject data (at most 255 bytes). */
	info->domain_attr->max_err_data = 255;

	vrb_fabric_name(&d->gid0, fabric, sizeof(fabric));
	free(info->domain_attr->name);
	free(info->fabric_attr->name);
	info->domain_attr->name = strdup(d->name);
	info->fabric_attr->name = strdup(fabric);
	if (!info->domain_attr->name || !info->fabric_attr->name)
		return -FI_ENOMEM;
	return 0;
}
