/* SPDX-License-Identifier: BSD-2-Clause */
#include <fabsim/fi_stubs.h>

int fabsim_no_close(struct fid *fid)
{
	return -FI_ENOSYS;
}

int fabsim_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return -FI_ENOSYS;
}

int fabsim_no_control(struct fid *fid, int command, void *arg)
{
	return -FI_ENOSYS;
}

int fabsim_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		       void **ops, void *context)
{
	return -FI_ENOSYS;
}

int fabsim_no_tostr(const struct fid *fid, char *buf, size_t len)
{
	return -FI_ENOSYS;
}

int fabsim_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
		      void *ops, void *context)
{
	return -FI_ENOSYS;
}

int fabsim_no_domain(struct fid_fabric *fabric, struct fi_info *info,
		     struct fid_domain **dom, void *context)
{
	return -FI_ENOSYS;
}

int fabsim_no_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
			 struct fid_pep **pep, void *context)
{
	return -FI_ENOSYS;
}

int fabsim_no_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		      struct fid_eq **eq, void *context)
{
	return -FI_ENOSYS;
}

int fabsim_no_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
			struct fid_wait **waitset)
{
	return -FI_ENOSYS;
}

int fabsim_no_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	return -FI_ENOSYS;
}

int fabsim_no_domain2(struct fid_fabric *fabric, struct fi_info *info,
		      struct fid_domain **dom, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

int fabsim_no_scalable_ep(struct fid_domain *domain, struct fi_info *info,
			  struct fid_ep **sep, void *context)
{
	return -FI_ENOSYS;
}

int fabsim_no_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
			struct fid_poll **pollset)
{
	return -FI_ENOSYS;
}

int fabsim_no_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr,
		      struct fid_stx **stx, void *context)
{
	return -FI_ENOSYS;
}

int fabsim_no_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
		      struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

int fabsim_no_query_collective(struct fid_domain *domain,
			       enum fi_collective_op coll,
			       struct fi_collective_attr *attr, uint64_t flags)
{
	return -FI_ENOSYS;
}

int fabsim_no_endpoint2(struct fid_domain *domain, struct fi_info *info,
			struct fid_ep **ep, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

int fabsim_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		     struct fid_ep **tx_ep, void *context)
{
	return -FI_ENOSYS;
}

int fabsim_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		     struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

int fabsim_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	return -FI_ENOSYS;
}

int fabsim_no_connect(struct fid_ep *ep, const void *addr, const void *param,
		      size_t paramlen)
{
	return -FI_ENOSYS;
}

int fabsim_no_listen(struct fid_pep *pep)
{
	return -FI_ENOSYS;
}

int fabsim_no_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

int fabsim_no_reject(struct fid_pep *pep, fid_t handle, const void *param,
		     size_t paramlen)
{
	return -FI_ENOSYS;
}

int fabsim_no_shutdown(struct fid_ep *ep, uint64_t flags)
{
	return -FI_ENOSYS;
}

int fabsim_no_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		   struct fid_mc **mc, void *context)
{
	return -FI_ENOSYS;
}

int fabsim_no_insertsym(struct fid_av *av, const char *node, size_t nodecnt,
			const char *service, size_t svccnt, fi_addr_t *fi_addr,
			uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

int fabsim_no_av_set(struct fid_av *av, struct fi_av_set_attr *attr,
		     struct fid_av_set **av_set, void *context)
{
	return -FI_ENOSYS;
}

ssize_t fabsim_no_coll_barrier(struct fid_ep *ep, fi_addr_t coll_addr, void *context)
{
	return -FI_ENOSYS;
}

ssize_t fabsim_no_coll_broadcast(struct fid_ep *ep, void *buf, size_t count, void *desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

ssize_t fabsim_no_coll_alltoall(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

ssize_t fabsim_no_coll_allreduce(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, enum fi_op op, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

ssize_t fabsim_no_coll_allgather(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

ssize_t fabsim_no_coll_reduce_scatter(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, enum fi_op op, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

ssize_t fabsim_no_coll_reduce(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, enum fi_op op, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

ssize_t fabsim_no_coll_scatter(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

ssize_t fabsim_no_coll_gather(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

ssize_t fabsim_no_coll_msg(struct fid_ep *ep, const struct fi_msg_collective *msg, struct fi_ioc *resultv, void **result_desc, size_t result_count, uint64_t flags)
{
	return -FI_ENOSYS;
}

ssize_t fabsim_no_coll_barrier2(struct fid_ep *ep, fi_addr_t coll_addr, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

struct fi_ops_collective fabsim_no_collective_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = fabsim_no_coll_barrier,
	.broadcast = fabsim_no_coll_broadcast,
	.alltoall = fabsim_no_coll_alltoall,
	.allreduce = fabsim_no_coll_allreduce,
	.allgather = fabsim_no_coll_allgather,
	.reduce_scatter = fabsim_no_coll_reduce_scatter,
	.reduce = fabsim_no_coll_reduce,
	.scatter = fabsim_no_coll_scatter,
	.gather = fabsim_no_coll_gather,
	.msg = fabsim_no_coll_msg,
	.barrier2 = fabsim_no_coll_barrier2,
};

ssize_t fabsim_no_cancel(fid_t fid, void *context)
{
	return -FI_ENOSYS;
}

int fabsim_no_setopt(fid_t fid, int level, int optname, const void *optval,
		     size_t optlen)
{
	return -FI_ENOSYS;
}

ssize_t fabsim_no_size_left(struct fid_ep *ep)
{
	return -FI_ENOSYS;
}
