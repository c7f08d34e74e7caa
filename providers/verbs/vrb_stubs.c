/* SPDX-License-Identifier: BSD-2-Clause
 * -FI_ENOSYS entries the core's fi_stubs.h does not have: MSG endpoints
 * over verbs have no tagged messages, no AV, no counters, and a posted
 * request cannot be taken back from the device. */
#include "verbs.h"

int vrb_no_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		   struct fid_av **av, void *context)
{
	return -FI_ENOSYS;
}

int vrb_no_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		     struct fid_cntr **cntr, void *context)
{
	return -FI_ENOSYS;
}

ssize_t vrb_no_cancel(fid_t fid, void *context)
{
	return -FI_ENOSYS;
}

int vrb_no_setopt(fid_t fid, int level, int optname, const void *optval,
		  size_t optlen)
{
	return -FI_ENOPROTOOPT;
}

ssize_t vrb_no_size_left(struct fid_ep *ep)
{
	return -FI_ENOSYS;
}

static ssize_t no_trecv(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src_addr, uint64_t tag, uint64_t ignore,
			void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_trecvv(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src_addr,
			 uint64_t tag, uint64_t ignore, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_trecvmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg,
			   uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t no_tsend(struct fid_ep *ep, const void *buf, size_t len,
			void *desc, fi_addr_t dest_addr, uint64_t tag,
			void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_tsendv(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t dest_addr,
			 uint64_t tag, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_tsendmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg,
			   uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t no_tinject(struct fid_ep *ep, const void *buf, size_t len,
			  fi_addr_t dest_addr, uint64_t tag)
{
	return -FI_ENOSYS;
}

static ssize_t no_tsenddata(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, uint64_t data, fi_addr_t dest_addr,
			    uint64_t tag, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t no_tinjectdata(struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest_addr, uint64_t tag)
{
	return -FI_ENOSYS;
}

struct fi_ops_tagged vrb_no_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = no_trecv,
	.recvv = no_trecvv,
	.recvmsg = no_trecvmsg,
	.send = no_tsend,
	.sendv = no_tsendv,
	.sendmsg = no_tsendmsg,
	.inject = no_tinject,
	.senddata = no_tsenddata,
	.injectdata = no_tinjectdata,
};
