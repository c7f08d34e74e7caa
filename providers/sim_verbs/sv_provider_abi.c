/* SPDX-License-Identifier: BSD-2-Clause
 * rdma-core's interface for its provider libraries (symbol version
 * IBVERBS_PRIVATE_34), as far as Debian's libmlx5.so.1 and libefa.so.1
 * import it. The face has no provider plugins; but programs that link
 * those libraries for their vendor extensions (Debian's perftest: ib_send_bw
 * and the rest) cannot load without these symbols, bound at start
 * (BIND_NOW). Loading libmlx5 registers its driver (ignored); the
 * extensions check a device's driver before they use it, and the face's
 * devices are none of theirs, so none of the rest is reached: each says so
 * (EOPNOTSUPP) if it is.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

/* Read by libmlx5 when it destroys objects of a disassociated device. */
bool verbs_allow_disassociate_destroy;

/* A provider library announces its driver as it loads. */
void verbs_register_driver_34(const void *ops)
{
	(void)ops;
}

void verbs_set_ops(void *context, const void *ops)
{
	(void)context;
	(void)ops;
}

void verbs_uninit_context(void *context)
{
	(void)context;
}

void __verbs_log(void *context, int level, const char *fmt, ...)
{
	(void)context;
	(void)level;
	(void)fmt;
}

void *_verbs_init_and_alloc_context(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

void *verbs_open_device(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

int verbs_init_cq(void)
{
	return EOPNOTSUPP;
}

/* The kernel commands a provider library issues for its own devices:
 * each returns an errno value, as rdma-core's do. */
#define NOT_FOR_THE_FACE(name) \
	int name(void);        \
	int name(void)         \
	{                      \
		return EOPNOTSUPP; \
	}

NOT_FOR_THE_FACE(execute_ioctl)
NOT_FOR_THE_FACE(ibv_cmd_advise_mr)
NOT_FOR_THE_FACE(ibv_cmd_alloc_dm)
NOT_FOR_THE_FACE(ibv_cmd_alloc_mw)
NOT_FOR_THE_FACE(ibv_cmd_alloc_pd)
NOT_FOR_THE_FACE(ibv_cmd_attach_mcast)
NOT_FOR_THE_FACE(ibv_cmd_close_xrcd)
NOT_FOR_THE_FACE(ibv_cmd_create_ah)
NOT_FOR_THE_FACE(ibv_cmd_create_counters)
NOT_FOR_THE_FACE(ibv_cmd_create_cq_ex)
NOT_FOR_THE_FACE(ibv_cmd_create_flow)
NOT_FOR_THE_FACE(ibv_cmd_create_flow_action_esp)
NOT_FOR_THE_FACE(ibv_cmd_create_qp_ex)
NOT_FOR_THE_FACE(ibv_cmd_create_qp_ex2)
NOT_FOR_THE_FACE(ibv_cmd_create_rwq_ind_table)
NOT_FOR_THE_FACE(ibv_cmd_create_srq)
NOT_FOR_THE_FACE(ibv_cmd_create_srq_ex)
NOT_FOR_THE_FACE(ibv_cmd_create_wq)
NOT_FOR_THE_FACE(ibv_cmd_dealloc_mw)
NOT_FOR_THE_FACE(ibv_cmd_dealloc_pd)
NOT_FOR_THE_FACE(ibv_cmd_dereg_mr)
NOT_FOR_THE_FACE(ibv_cmd_destroy_ah)
NOT_FOR_THE_FACE(ibv_cmd_destroy_counters)
NOT_FOR_THE_FACE(ibv_cmd_destroy_cq)
NOT_FOR_THE_FACE(ibv_cmd_destroy_flow)
NOT_FOR_THE_FACE(ibv_cmd_destroy_flow_action)
NOT_FOR_THE_FACE(ibv_cmd_destroy_qp)
NOT_FOR_THE_FACE(ibv_cmd_destroy_rwq_ind_table)
NOT_FOR_THE_FACE(ibv_cmd_destroy_srq)
NOT_FOR_THE_FACE(ibv_cmd_destroy_wq)
NOT_FOR_THE_FACE(ibv_cmd_detach_mcast)
NOT_FOR_THE_FACE(ibv_cmd_free_dm)
NOT_FOR_THE_FACE(ibv_cmd_get_context)
NOT_FOR_THE_FACE(ibv_cmd_modify_cq)
NOT_FOR_THE_FACE(ibv_cmd_modify_flow_action_esp)
NOT_FOR_THE_FACE(ibv_cmd_modify_qp)
NOT_FOR_THE_FACE(ibv_cmd_modify_qp_ex)
NOT_FOR_THE_FACE(ibv_cmd_modify_srq)
NOT_FOR_THE_FACE(ibv_cmd_modify_wq)
NOT_FOR_THE_FACE(ibv_cmd_open_qp)
NOT_FOR_THE_FACE(ibv_cmd_open_xrcd)
NOT_FOR_THE_FACE(ibv_cmd_query_context)
NOT_FOR_THE_FACE(ibv_cmd_query_device_any)
NOT_FOR_THE_FACE(ibv_cmd_query_mr)
NOT_FOR_THE_FACE(ibv_cmd_query_port)
NOT_FOR_THE_FACE(ibv_cmd_query_qp)
NOT_FOR_THE_FACE(ibv_cmd_query_srq)
NOT_FOR_THE_FACE(ibv_cmd_read_counters)
NOT_FOR_THE_FACE(ibv_cmd_reg_dm_mr)
NOT_FOR_THE_FACE(ibv_cmd_reg_dmabuf_mr)
NOT_FOR_THE_FACE(ibv_cmd_reg_mr)
NOT_FOR_THE_FACE(ibv_cmd_rereg_mr)
NOT_FOR_THE_FACE(ibv_cmd_resize_cq)
