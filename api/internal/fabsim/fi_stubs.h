/* SPDX-License-Identifier: BSD-2-Clause
 * Shared entries for ops-table slots an object does not support. No ops
 * table holds a NULL: an unsupported call returns -FI_ENOSYS through these. */
#ifndef FABSIM_FI_STUBS_H
#define FABSIM_FI_STUBS_H

#include <rdma/fabric.h>

int fabsim_no_close(struct fid *fid);
int fabsim_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int fabsim_no_control(struct fid *fid, int command, void *arg);
int fabsim_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		       void **ops, void *context);
int fabsim_no_tostr(const struct fid *fid, char *buf, size_t len);
int fabsim_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
		      void *ops, void *context);


/* fi_ops_fabric */
int fabsim_no_domain(struct fid_fabric *fabric, struct fi_info *info,
		     struct fid_domain **dom, void *context);
int fabsim_no_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
			 struct fid_pep **pep, void *context);
int fabsim_no_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		      struct fid_eq **eq, void *context);
int fabsim_no_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
			struct fid_wait **waitset);
int fabsim_no_trywait(struct fid_fabric *fabric, struct fid **fids, int count);
int fabsim_no_domain2(struct fid_fabric *fabric, struct fi_info *info,
		      struct fid_domain **dom, uint64_t flags, void *context);

#endif
