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
