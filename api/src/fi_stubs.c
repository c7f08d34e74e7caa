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
