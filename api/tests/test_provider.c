/* SPDX-License-Identifier: BSD-2-Clause */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <fabsim/core.h>
#include <fabsim/fi_stubs.h>

#include "test_provider.h"

struct testprov_call testprov_last_call;
static int fail_with;

void testprov_fail_with(int err)
{
	fail_with = err;
}

static struct fi_info *offer(enum fi_ep_type type, uint64_t caps,
			     uint64_t mode, int mr_mode, const char *fabric,
			     const char *domain, uint32_t addr_format)
{
	struct fi_info *info = fi_allocinfo();

	info->caps = caps;
	info->mode = mode;
	info->addr_format = addr_format;
	if (addr_format == FI_SOCKADDR_IN) {
		struct sockaddr_in *sin = calloc(1, sizeof(*sin));

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(0x0a000001); /* 10.0.0.1 */
		info->src_addr = sin;
		info->src_addrlen = sizeof(*sin);
	}
	info->tx_attr->caps = caps & ~(FI_RECV | FI_REMOTE_READ |
				       FI_REMOTE_WRITE | FI_MULTI_RECV);
	info->tx_attr->op_flags = FI_INJECT | FI_COMPLETION |
				  FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE |
				  FI_DELIVERY_COMPLETE;
	info->tx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_RAW | FI_ORDER_WAW;
	info->tx_attr->inject_size = TESTPROV_INJECT_SIZE;
	info->tx_attr->size = TESTPROV_TX_SIZE;
	info->tx_attr->iov_limit = 4;
	info->tx_attr->rma_iov_limit = 1;
	info->rx_attr->caps = caps & ~(FI_SEND | FI_READ | FI_WRITE);
	info->rx_attr->op_flags = FI_COMPLETION | FI_MULTI_RECV;
	info->rx_attr->msg_order = FI_ORDER_SAS;
	info->rx_attr->size = 512;
	info->rx_attr->iov_limit = 4;
	info->ep_attr->type = type;
	info->ep_attr->protocol = FI_PROTO_UNSPEC;
	info->ep_attr->max_msg_size = TESTPROV_MAX_MSG;
	info->ep_attr->tx_ctx_cnt = 1;
	info->ep_attr->rx_ctx_cnt = 1;
	info->domain_attr->name = strdup(domain);
	info->domain_attr->threading = FI_THREAD_SAFE;
	info->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	info->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	info->domain_attr->resource_mgmt = FI_RM_ENABLED;
	info->domain_attr->av_type = FI_AV_UNSPEC;
	info->domain_attr->mr_mode = mr_mode;
	info->domain_attr->mr_key_size = 4;
	info->domain_attr->cq_data_size = 4;
	info->domain_attr->cq_cnt = 64;
	info->domain_attr->ep_cnt = 128;
	info->domain_attr->tx_ctx_cnt = 1;
	info->domain_attr->rx_ctx_cnt = 1;
	info->domain_attr->max_ep_tx_ctx = 1;
	info->domain_attr->max_ep_rx_ctx = 1;
	info->domain_attr->cntr_cnt = 32;
	info->domain_attr->mr_iov_limit = 1;
	info->domain_attr->mr_cnt = 1024;
	info->domain_attr->caps = caps & (FI_LOCAL_COMM | FI_REMOTE_COMM);
	info->fabric_attr->name = strdup(fabric);
	return info;
}

static int testprov_getinfo(uint32_t version, const char *node,
			    const char *service, uint64_t flags,
			    const struct fi_info *hints, struct fi_info **info)
{
	struct fi_info *o[4];

	testprov_last_call.calls++;
	testprov_last_call.node = node;
	testprov_last_call.service = service;
	testprov_last_call.flags = flags;
	if (fail_with)
		return fail_with;

	o[0] = offer(FI_EP_RDM, TESTPROV_CAPS, FI_CONTEXT, TESTPROV_STRICT_MR,
		     "testfab", "test0", FI_SOCKADDR_IN);
	o[1] = offer(FI_EP_RDM, TESTPROV_CAPS, 0, 0, "testfab", "test0",
		     FI_SOCKADDR_IN);
	o[2] = offer(FI_EP_MSG,
		     FI_MSG | FI_RMA | FI_SEND | FI_RECV | FI_READ | FI_WRITE |
			     FI_REMOTE_READ | FI_REMOTE_WRITE,
		     0, 0, "testfab", "test0", FI_SOCKADDR_IN);
	o[2]->domain_attr->data_progress = FI_PROGRESS_AUTO;
	o[2]->domain_attr->control_progress = FI_PROGRESS_AUTO;
	o[3] = offer(FI_EP_DGRAM, FI_MSG | FI_SEND | FI_RECV, 0, 0, "testfab",
		     "test1", FI_ADDR_STR);
	o[3]->domain_attr->threading = FI_THREAD_DOMAIN;
	o[3]->domain_attr->av_type = FI_AV_TABLE;
	for (int i = 0; i < 3; i++)
		o[i]->next = o[i + 1];
	*info = o[0];
	return 0;
}

static int testprov_fabric(struct fi_fabric_attr *attr,
			   struct fid_fabric **fabric, void *context)
{
	return -FI_ENOSYS;
}

static struct fi_provider testprov = {
	.version = FI_VERSION(3, 1),
	.fi_version = FI_VERSION(1, 17),
	.name = "testprov",
	.getinfo = testprov_getinfo,
	.fabric = testprov_fabric,
};

struct fi_provider *testprov_provider(void)
{
	return &testprov;
}

static struct fi_provider *testprov_ini(void)
{
	fi_param_define(&testprov, "depth", FI_PARAM_INT,
			"queue depth for tests (default: %d)", 8);
	fi_param_define(&testprov, "verbose", FI_PARAM_BOOL, "talk more");
	fi_param_define(&testprov, "limit", FI_PARAM_SIZE_T, "a size");
	fi_param_define(&testprov, "label", FI_PARAM_STRING, "a name");
	return &testprov;
}
FABSIM_PROVIDER_INI(testprov_ini)

static int oldprov_getinfo(uint32_t version, const char *node,
			   const char *service, uint64_t flags,
			   const struct fi_info *hints, struct fi_info **info)
{
	*info = offer(FI_EP_RDM, FI_MSG | FI_SEND | FI_RECV, 0, 0, "oldfab",
		      "old0", FI_SOCKADDR_IN);
	return 0;
}

static struct fi_provider oldprov = {
	.version = FI_VERSION(1, 0),
	.fi_version = FI_VERSION(1, 5),
	.name = "oldprov",
	.getinfo = oldprov_getinfo,
	.fabric = testprov_fabric,
};

static struct fi_provider *oldprov_ini(void)
{
	return &oldprov;
}
FABSIM_PROVIDER_INI(oldprov_ini)
