/* SPDX-License-Identifier: BSD-2-Clause
 * Name tables for every constant fi_tostr prints. Flag tables are in bit
 * order; a table lists each value once. */
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_trigger.h>
#include <rdma/providers/fi_log.h>

#include <fabsim/names.h>

#define N(constant) { (uint64_t)(constant), #constant }
#define TABLE(var, array) \
	const struct fabsim_name_table var = { array, count_of(array) }

static const struct fabsim_name caps[] = {
	N(FI_MSG), N(FI_RMA), N(FI_TAGGED), N(FI_ATOMIC), N(FI_MULTICAST),
	N(FI_COLLECTIVE), N(FI_READ), N(FI_WRITE), N(FI_RECV), N(FI_SEND),
	N(FI_REMOTE_READ), N(FI_REMOTE_WRITE), N(FI_MULTI_RECV),
	N(FI_REMOTE_CQ_DATA), N(FI_TRIGGER), N(FI_FENCE), N(FI_AV_USER_ID),
	N(FI_PEER), N(FI_HMEM), N(FI_VARIABLE_MSG), N(FI_RMA_PMEM),
	N(FI_SOURCE_ERR), N(FI_LOCAL_COMM), N(FI_REMOTE_COMM),
	N(FI_SHARED_AV), N(FI_RMA_EVENT), N(FI_SOURCE), N(FI_NAMED_RX_CTX),
	N(FI_DIRECTED_RECV),
};
TABLE(fabsim_caps_names, caps);

static const struct fabsim_name op_flags[] = {
	N(FI_MULTI_RECV), N(FI_REMOTE_CQ_DATA), N(FI_MORE), N(FI_PEEK),
	N(FI_TRIGGER), N(FI_FENCE), N(FI_PRIORITY), N(FI_COMPLETION),
	N(FI_INJECT), N(FI_INJECT_COMPLETE), N(FI_TRANSMIT_COMPLETE),
	N(FI_DELIVERY_COMPLETE), N(FI_AFFINITY), N(FI_COMMIT_COMPLETE),
	N(FI_MATCH_COMPLETE), N(FI_PEER_TRANSFER), N(FI_XPU_TRIGGER),
	N(FI_CLAIM) /* == FI_DIRECTED_RECV's bit */, N(FI_DISCARD),
};
TABLE(fabsim_op_flag_names, op_flags);

static const struct fabsim_name modes[] = {
	N(FI_BUFFERED_RECV), N(FI_CONTEXT2), N(FI_RESTRICTED_COMP),
	N(FI_NOTIFY_FLAGS_ONLY), N(FI_LOCAL_MR), N(FI_RX_CQ_DATA),
	N(FI_ASYNC_IOV), N(FI_MSG_PREFIX), N(FI_CONTEXT),
};
TABLE(fabsim_mode_names, modes);

static const struct fabsim_name orders[] = {
	N(FI_ORDER_RAR), N(FI_ORDER_RAW), N(FI_ORDER_RAS), N(FI_ORDER_WAR),
	N(FI_ORDER_WAW), N(FI_ORDER_WAS), N(FI_ORDER_SAR), N(FI_ORDER_SAW),
	N(FI_ORDER_SAS), N(FI_ORDER_DATA), N(FI_ORDER_RMA_RAR),
	N(FI_ORDER_RMA_RAW), N(FI_ORDER_RMA_WAR), N(FI_ORDER_RMA_WAW),
	N(FI_ORDER_ATOMIC_RAR), N(FI_ORDER_ATOMIC_RAW),
	N(FI_ORDER_ATOMIC_WAR), N(FI_ORDER_ATOMIC_WAW),
};
TABLE(fabsim_order_names, orders);

static const struct fabsim_name cq_flags[] = {
	N(FI_MSG), N(FI_RMA), N(FI_TAGGED), N(FI_ATOMIC), N(FI_MULTICAST),
	N(FI_COLLECTIVE), N(FI_READ), N(FI_WRITE), N(FI_RECV), N(FI_SEND),
	N(FI_REMOTE_READ), N(FI_REMOTE_WRITE), N(FI_MULTI_RECV),
	N(FI_REMOTE_CQ_DATA), N(FI_MORE), N(FI_CLAIM),
};
TABLE(fabsim_cq_flag_names, cq_flags);

static const struct fabsim_name mr_modes[] = {
	N(FI_MR_BASIC), N(FI_MR_SCALABLE), N(FI_MR_LOCAL), N(FI_MR_RAW),
	N(FI_MR_VIRT_ADDR), N(FI_MR_ALLOCATED), N(FI_MR_PROV_KEY),
	N(FI_MR_MMU_NOTIFY), N(FI_MR_RMA_EVENT), N(FI_MR_ENDPOINT),
	N(FI_MR_HMEM), N(FI_MR_COLLECTIVE),
};
TABLE(fabsim_mr_mode_names, mr_modes);

static const struct fabsim_name ep_types[] = {
	N(FI_EP_UNSPEC), N(FI_EP_MSG), N(FI_EP_DGRAM), N(FI_EP_RDM),
	N(FI_EP_SOCK_STREAM), N(FI_EP_SOCK_DGRAM),
};
TABLE(fabsim_ep_type_names, ep_types);

static const struct fabsim_name addr_formats[] = {
	N(FI_FORMAT_UNSPEC), N(FI_SOCKADDR), N(FI_SOCKADDR_IN),
	N(FI_SOCKADDR_IN6), N(FI_SOCKADDR_IB), N(FI_ADDR_PSMX),
	N(FI_ADDR_GNI), N(FI_ADDR_BGQ), N(FI_ADDR_MLX), N(FI_ADDR_STR),
	N(FI_ADDR_PSMX2), N(FI_ADDR_IB_UD), N(FI_ADDR_EFA), N(FI_ADDR_PSMX3),
	N(FI_ADDR_OPX), N(FI_ADDR_CXI),
};
TABLE(fabsim_addr_format_names, addr_formats);

static const struct fabsim_name threading[] = {
	N(FI_THREAD_UNSPEC), N(FI_THREAD_SAFE), N(FI_THREAD_FID),
	N(FI_THREAD_DOMAIN), N(FI_THREAD_COMPLETION), N(FI_THREAD_ENDPOINT),
};
TABLE(fabsim_threading_names, threading);

static const struct fabsim_name progress[] = {
	N(FI_PROGRESS_UNSPEC), N(FI_PROGRESS_AUTO), N(FI_PROGRESS_MANUAL),
};
TABLE(fabsim_progress_names, progress);

static const struct fabsim_name rm[] = {
	N(FI_RM_UNSPEC), N(FI_RM_DISABLED), N(FI_RM_ENABLED),
};
TABLE(fabsim_rm_names, rm);

static const struct fabsim_name protocols[] = {
	N(FI_PROTO_UNSPEC), N(FI_PROTO_RDMA_CM_IB_RC), N(FI_PROTO_IWARP),
	N(FI_PROTO_IB_UD), N(FI_PROTO_PSMX), N(FI_PROTO_UDP),
	N(FI_PROTO_SOCK_TCP), N(FI_PROTO_MXM), N(FI_PROTO_IWARP_RDM),
	N(FI_PROTO_IB_RDM), N(FI_PROTO_GNI), N(FI_PROTO_RXM), N(FI_PROTO_RXD),
	N(FI_PROTO_MLX), N(FI_PROTO_NETWORKDIRECT), N(FI_PROTO_PSMX2),
	N(FI_PROTO_SHM), N(FI_PROTO_MRAIL), N(FI_PROTO_RSTREAM),
	N(FI_PROTO_RDMA_CM_IB_XRC), N(FI_PROTO_EFA), N(FI_PROTO_PSMX3),
	N(FI_PROTO_RXM_TCP), N(FI_PROTO_OPX), N(FI_PROTO_CXI),
	N(FI_PROTO_XNET),
};
TABLE(fabsim_protocol_names, protocols);

static const struct fabsim_name av_types[] = {
	N(FI_AV_UNSPEC), N(FI_AV_MAP), N(FI_AV_TABLE),
};
TABLE(fabsim_av_type_names, av_types);

static const struct fabsim_name datatypes[] = {
	N(FI_INT8), N(FI_UINT8), N(FI_INT16), N(FI_UINT16), N(FI_INT32),
	N(FI_UINT32), N(FI_INT64), N(FI_UINT64), N(FI_FLOAT), N(FI_DOUBLE),
	N(FI_FLOAT_COMPLEX), N(FI_DOUBLE_COMPLEX), N(FI_LONG_DOUBLE),
	N(FI_LONG_DOUBLE_COMPLEX), N(FI_INT128), N(FI_UINT128), N(FI_VOID),
};
TABLE(fabsim_datatype_names, datatypes);

static const struct fabsim_name atomic_ops[] = {
	N(FI_MIN), N(FI_MAX), N(FI_SUM), N(FI_PROD), N(FI_LOR), N(FI_LAND),
	N(FI_BOR), N(FI_BAND), N(FI_LXOR), N(FI_BXOR), N(FI_ATOMIC_READ),
	N(FI_ATOMIC_WRITE), N(FI_CSWAP), N(FI_CSWAP_NE), N(FI_CSWAP_LE),
	N(FI_CSWAP_LT), N(FI_CSWAP_GE), N(FI_CSWAP_GT), N(FI_MSWAP),
	N(FI_NOOP),
};
TABLE(fabsim_atomic_op_names, atomic_ops);

static const struct fabsim_name eq_events[] = {
	N(FI_NOTIFY), N(FI_CONNREQ), N(FI_CONNECTED), N(FI_SHUTDOWN),
	N(FI_MR_COMPLETE), N(FI_AV_COMPLETE), N(FI_JOIN_COMPLETE),
};
TABLE(fabsim_eq_event_names, eq_events);

static const struct fabsim_name op_types[] = {
	N(FI_OP_RECV), N(FI_OP_SEND), N(FI_OP_TRECV), N(FI_OP_TSEND),
	N(FI_OP_READ), N(FI_OP_WRITE), N(FI_OP_ATOMIC), N(FI_OP_FETCH_ATOMIC),
	N(FI_OP_COMPARE_ATOMIC), N(FI_OP_CNTR_SET), N(FI_OP_CNTR_ADD),
};
TABLE(fabsim_op_type_names, op_types);

static const struct fabsim_name collective_ops[] = {
	N(FI_BARRIER), N(FI_BROADCAST), N(FI_ALLTOALL), N(FI_ALLREDUCE),
	N(FI_ALLGATHER), N(FI_REDUCE_SCATTER), N(FI_REDUCE), N(FI_SCATTER),
	N(FI_GATHER),
};
TABLE(fabsim_collective_op_names, collective_ops);

static const struct fabsim_name hmem_ifaces[] = {
	N(FI_HMEM_SYSTEM), N(FI_HMEM_CUDA), N(FI_HMEM_ROCR), N(FI_HMEM_ZE),
	N(FI_HMEM_NEURON), N(FI_HMEM_SYNAPSEAI),
};
TABLE(fabsim_hmem_iface_names, hmem_ifaces);

static const struct fabsim_name cq_formats[] = {
	N(FI_CQ_FORMAT_UNSPEC), N(FI_CQ_FORMAT_CONTEXT), N(FI_CQ_FORMAT_MSG),
	N(FI_CQ_FORMAT_DATA), N(FI_CQ_FORMAT_TAGGED),
};
TABLE(fabsim_cq_format_names, cq_formats);

/* Log names are the words FI_LOG_LEVEL and FI_LOG_SUBSYS accept. */
static const struct fabsim_name log_levels[] = {
	{ FI_LOG_WARN, "warn" }, { FI_LOG_TRACE, "trace" },
	{ FI_LOG_INFO, "info" }, { FI_LOG_DEBUG, "debug" },
};
TABLE(fabsim_log_level_names, log_levels);

static const struct fabsim_name log_subsys[] = {
	{ FI_LOG_CORE, "core" },       { FI_LOG_FABRIC, "fabric" },
	{ FI_LOG_DOMAIN, "domain" },   { FI_LOG_EP_CTRL, "ep_ctrl" },
	{ FI_LOG_EP_DATA, "ep_data" }, { FI_LOG_AV, "av" },
	{ FI_LOG_CQ, "cq" },           { FI_LOG_EQ, "eq" },
	{ FI_LOG_MR, "mr" },           { FI_LOG_CNTR, "cntr" },
};
TABLE(fabsim_log_subsys_names, log_subsys);

static const struct fabsim_name fclasses[] = {
	N(FI_CLASS_UNSPEC), N(FI_CLASS_FABRIC), N(FI_CLASS_DOMAIN),
	N(FI_CLASS_EP), N(FI_CLASS_SEP), N(FI_CLASS_RX_CTX),
	N(FI_CLASS_SRX_CTX), N(FI_CLASS_TX_CTX), N(FI_CLASS_STX_CTX),
	N(FI_CLASS_PEP), N(FI_CLASS_INTERFACE), N(FI_CLASS_AV),
	N(FI_CLASS_MR), N(FI_CLASS_EQ), N(FI_CLASS_CQ), N(FI_CLASS_CNTR),
	N(FI_CLASS_WAIT), N(FI_CLASS_POLL), N(FI_CLASS_CONNREQ),
	N(FI_CLASS_MC), N(FI_CLASS_NIC), N(FI_CLASS_AV_SET),
	N(FI_CLASS_MR_CACHE), N(FI_CLASS_MEM_MONITOR), N(FI_CLASS_PEER_CQ),
	N(FI_CLASS_PEER_SRX), N(FI_CLASS_LOG), N(FI_CLASS_PEER_AV),
	N(FI_CLASS_PEER_AV_SET),
};
TABLE(fabsim_fclass_names, fclasses);

const char *fabsim_name_of(const struct fabsim_name_table *table,
			   uint64_t value)
{
	for (size_t i = 0; i < table->count; i++)
		if (table->entries[i].value == value)
			return table->entries[i].name;
	return NULL;
}

int fabsim_value_of(const struct fabsim_name_table *table, const char *name,
		    uint64_t *value)
{
	for (size_t i = 0; name && i < table->count; i++) {
		if (!strcmp(table->entries[i].name, name)) {
			*value = table->entries[i].value;
			return 0;
		}
	}
	return -1;
}
