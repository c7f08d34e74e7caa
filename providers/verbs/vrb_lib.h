/* SPDX-License-Identifier: BSD-2-Clause
 * rdma-core, loaded at run time.
 *
 * libfabric.so.1 does not link libibverbs or librdmacm: the verbs provider
 * opens them with dlopen on the first fi_getinfo. A machine without
 * rdma-core, or with it but without a device, then gets a clean "no verbs
 * device" (-FI_ENODATA) instead of a library that fails to load, and users
 * of the sim provider carry no dependency on RDMA packages.
 *
 * Only the functions libibverbs and librdmacm export are called through
 * this table. The data path (ibv_post_send, ibv_post_recv, ibv_poll_cq,
 * ibv_req_notify_cq) is rdma-core's inline functions, which call the
 * device's context ops directly.
 */
#ifndef FABSIM_VRB_LIB_H
#define FABSIM_VRB_LIB_H

#include <stddef.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#ifdef __cplusplus
extern "C" {
#endif

/* field, exported symbol */
#define VRB_IBVERBS_FUNCS(X)                                      \
	X(get_device_list, ibv_get_device_list)                   \
	X(free_device_list, ibv_free_device_list)                 \
	X(get_device_name, ibv_get_device_name)                   \
	X(open_device, ibv_open_device)                           \
	X(close_device, ibv_close_device)                         \
	X(query_device, ibv_query_device)                         \
	X(query_port_compat, ibv_query_port)                      \
	X(query_gid, ibv_query_gid)                               \
	X(alloc_pd, ibv_alloc_pd)                                 \
	X(dealloc_pd, ibv_dealloc_pd)                             \
	X(reg_mr, ibv_reg_mr)                                     \
	X(dereg_mr, ibv_dereg_mr)                                 \
	X(create_comp_channel, ibv_create_comp_channel)           \
	X(destroy_comp_channel, ibv_destroy_comp_channel)         \
	X(create_cq, ibv_create_cq)                               \
	X(destroy_cq, ibv_destroy_cq)                             \
	X(get_cq_event, ibv_get_cq_event)                         \
	X(ack_cq_events, ibv_ack_cq_events)                       \
	X(create_qp, ibv_create_qp)                               \
	X(destroy_qp, ibv_destroy_qp)

#define VRB_RDMACM_FUNCS(X)                                       \
	X(create_event_channel, rdma_create_event_channel)        \
	X(destroy_event_channel, rdma_destroy_event_channel)      \
	X(create_id, rdma_create_id)                              \
	X(destroy_id, rdma_destroy_id)                            \
	X(bind_addr, rdma_bind_addr)                              \
	X(resolve_addr, rdma_resolve_addr)                        \
	X(resolve_route, rdma_resolve_route)                      \
	X(listen, rdma_listen)                                    \
	X(connect, rdma_connect)                                  \
	X(accept, rdma_accept)                                    \
	X(reject, rdma_reject)                                    \
	X(disconnect, rdma_disconnect)                            \
	X(get_cm_event, rdma_get_cm_event)                        \
	X(ack_cm_event, rdma_ack_cm_event)                        \
	X(cm_create_qp, rdma_create_qp)                           \
	X(cm_destroy_qp, rdma_destroy_qp)                         \
	X(migrate_id, rdma_migrate_id)                            \
	X(get_devices, rdma_get_devices)                          \
	X(free_devices, rdma_free_devices)

#define VRB_LIB_FIELD(field, sym) __typeof__(sym) *field;

struct vrb_lib {
	void *ibverbs;
	void *rdmacm;
	VRB_IBVERBS_FUNCS(VRB_LIB_FIELD)
	VRB_RDMACM_FUNCS(VRB_LIB_FIELD)
};

/* Default library names: the SONAMEs rdma-core installs. */
#define VRB_IBVERBS_SONAME "libibverbs.so.1"
#define VRB_RDMACM_SONAME  "librdmacm.so.1"

/* Opens both libraries and resolves every function. 0, or -FI_ENODATA
 * with the reason (missing library or symbol) in why; nothing stays open
 * on failure. */
int vrb_lib_load(struct vrb_lib *lib, const char *ibverbs,
		 const char *rdmacm, char *why, size_t why_len);
void vrb_lib_unload(struct vrb_lib *lib);

/* ibv_query_port as rdma-core's inline wrapper does it: the context's
 * extended op when it has one, else the exported compatibility entry. */
int vrb_query_port(const struct vrb_lib *lib, struct ibv_context *ctx,
		   uint8_t port, struct ibv_port_attr *attr);

#ifdef __cplusplus
}
#endif

#endif
