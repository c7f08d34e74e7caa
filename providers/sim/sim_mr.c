/* SPDX-License-Identifier: BSD-2-Clause
 * fid_mr: memory registration (fi_mr(3)) on the simulated NIC. A
 * registration costs virtual time (the preset's c0 + c_page x pages) and
 * counts against the NIC's limits; the key is the NIC's R_Key. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fabsim/fi_stubs.h>

#include "sim.h"

#define SIM_MR_ACCESS                                                     \
	(FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ |        \
	 FI_REMOTE_WRITE)

static uint32_t nic_access_of(uint64_t access)
{
	uint32_t a = 0;

	if (access & (FI_SEND | FI_RECV | FI_READ | FI_WRITE))
		a |= NIC_ACCESS_LOCAL;
	/* Received bytes and read results land in it. */
	if (access & (FI_RECV | FI_READ))
		a |= NIC_ACCESS_LOCAL_WRITE;
	if (access & FI_REMOTE_READ)
		a |= NIC_ACCESS_REMOTE_READ;
	if (access & FI_REMOTE_WRITE)
		a |= NIC_ACCESS_REMOTE_WRITE;
	/* An atomic reads and writes: both rights are needed. */
	if ((access & (FI_REMOTE_READ | FI_REMOTE_WRITE)) ==
	    (FI_REMOTE_READ | FI_REMOTE_WRITE))
		a |= NIC_ACCESS_REMOTE_ATOMIC;
	return a;
}

/* fi_eq(3): FI_MR_COMPLETE names the MR and the registration's context. */
static void report_registered(nm_engine *engine, void *ctx, uint64_t arg)
{
	struct sim_mr *mr = ctx;
	struct fi_eq_entry done = {
		.fid = &mr->mr_fid.fid,
		.context = mr->mr_fid.fid.context,
	};

	(void)engine;
	(void)arg;
	mr->reported = NM_EVENT_NONE;
	sim_eq_push(mr->domain->eq, FI_MR_COMPLETE, &done, sizeof(done));
}

static void unbind_cntrs(struct sim_mr *mr);

static int mr_close(struct fid *fid)
{
	struct sim_mr *mr = container_of(fid, struct sim_mr, mr_fid.fid);
	struct sim_domain *dom = mr->domain;
	int ret;

	sim_lock(dom->world);
	ret = nic_mr_dereg(mr->nic_mr);
	if (!ret) {
		dom->refs--;
		unbind_cntrs(mr);
		sim_ptrset_del(&dom->mrs, mr);
		if (mr->reported != NM_EVENT_NONE)
			nic_world_cancel(dom->world->nic, mr->reported);
	}
	sim_unlock(dom->world);
	if (ret) {
		FI_WARN(&sim_prov, FI_LOG_MR,
			"fi_close(mr key %#llx): operations in flight use it\n",
			(unsigned long long)mr->mr_fid.key);
		return -FI_EBUSY;
	}
	free(mr);
	return 0;
}

/* fi_mr(3): FI_REMOTE_WRITE counts remote writes and atomics that change
 * the region; FI_REMOTE_READ (as fi_cntr(3) has it for endpoints) reads
 * of it. sim does not offer FI_MR_RMA_EVENT: regions start enabled, and
 * counters may be bound to them at any time. */
static int bind_cntr(struct sim_mr *mr, struct sim_cntr *cntr, uint64_t flags)
{
	struct sim_domain *dom = mr->domain;

	if (!flags || (flags & ~(FI_REMOTE_WRITE | FI_REMOTE_READ)))
		return -FI_EBADFLAGS;
	if (cntr->domain != dom) {
		FI_WARN(&sim_prov, FI_LOG_MR, "fi_mr_bind: the counter is of "
			"another domain\n");
		return -FI_EINVAL;
	}
	sim_lock(dom->world);
	if (!mr->cntr_rem_write && !mr->cntr_rem_read) {
		mr->next_counted = dom->counted;
		dom->counted = mr;
	}
	if (flags & FI_REMOTE_WRITE) {
		if (mr->cntr_rem_write)
			mr->cntr_rem_write->refs--;
		mr->cntr_rem_write = cntr;
		cntr->refs++;
	}
	if (flags & FI_REMOTE_READ) {
		if (mr->cntr_rem_read)
			mr->cntr_rem_read->refs--;
		mr->cntr_rem_read = cntr;
		cntr->refs++;
	}
	sim_unlock(dom->world);
	return 0;
}

/* Lock held. */
static void unbind_cntrs(struct sim_mr *mr)
{
	struct sim_mr **p = &mr->domain->counted;

	if (!mr->cntr_rem_write && !mr->cntr_rem_read)
		return;
	while (*p != mr)
		p = &(*p)->next_counted;
	*p = mr->next_counted;
	if (mr->cntr_rem_write)
		mr->cntr_rem_write->refs--;
	if (mr->cntr_rem_read)
		mr->cntr_rem_read->refs--;
}

struct sim_mr *sim_mr_counted(struct sim_domain *dom, uint64_t key)
{
	for (struct sim_mr *mr = dom->counted; mr; mr = mr->next_counted)
		if (nic_mr_key(mr->nic_mr) == key)
			return mr;
	return NULL;
}

static int mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct sim_mr *mr = container_of(fid, struct sim_mr, mr_fid.fid);

	switch (bfid->fclass) {
	case FI_CLASS_EP:
		if (!(mr->domain->mr_mode & FI_MR_ENDPOINT))
			return -FI_EINVAL;
		mr->bound_ep = container_of(bfid, struct sim_ep, ep_fid.fid);
		return 0;
	case FI_CLASS_CNTR:
		return bind_cntr(mr, container_of(bfid, struct sim_cntr,
						  cntr_fid.fid), flags);
	default:
		return -FI_EINVAL;
	}
}

/* fi_mr(3): "it is safe to use this call with any memory region": the raw
 * key is the key's mr_key_size bytes, least significant first; the base
 * address is the region's start when regions are addressed by virtual
 * address, else 0 (offsets). */
static int raw_attr(struct sim_mr *mr, struct fi_mr_raw_attr *attr)
{
	uint64_t key = mr->mr_fid.key;

	if (!attr || !attr->key_size || attr->flags)
		return attr && attr->flags ? -FI_EBADFLAGS : -FI_EINVAL;
	if (*attr->key_size < SIM_MR_KEY_SIZE) {
		*attr->key_size = SIM_MR_KEY_SIZE;
		return -FI_ETOOSMALL;
	}
	if (!attr->raw_key)
		return -FI_EINVAL;
	for (size_t i = 0; i < SIM_MR_KEY_SIZE; i++)
		attr->raw_key[i] = (uint8_t)(key >> (8 * i));
	*attr->key_size = SIM_MR_KEY_SIZE;
	if (attr->base_addr)
		*attr->base_addr = mr->domain->mr_mode & FI_MR_VIRT_ADDR ?
					   mr->base : 0;
	return 0;
}

static int mr_control(struct fid *fid, int command, void *arg)
{
	struct sim_mr *mr = container_of(fid, struct sim_mr, mr_fid.fid);

	if (command == FI_GET_RAW_MR)
		return raw_attr(mr, arg);
	if (command != FI_ENABLE)
		return -FI_ENOSYS;
	if ((mr->domain->mr_mode & FI_MR_ENDPOINT) && !mr->bound_ep)
		return -FI_EINVAL;
	mr->enabled = true;
	return 0;
}

int sim_mr_map_raw(struct fi_mr_map_raw *map)
{
	uint64_t key = 0;

	if (!map || !map->key || (map->key_size && !map->raw_key))
		return -FI_EINVAL;
	if (map->flags)
		return -FI_EBADFLAGS;
	if (map->key_size != SIM_MR_KEY_SIZE)
		return -FI_EINVAL; /* not a key of this provider's */
	for (size_t i = 0; i < map->key_size; i++)
		key |= (uint64_t)map->raw_key[i] << (8 * i);
	*map->key = key;
	return 0;
}

static struct fi_ops mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mr_close,
	.bind = mr_bind,
	.control = mr_control,
	.ops_open = fabsim_no_ops_open,
	.tostr = fabsim_no_tostr,
	.ops_set = fabsim_no_ops_set,
};

static int register_region(struct sim_domain *dom, const struct iovec *iov,
			   size_t count, uint64_t access, uint64_t offset,
			   uint64_t requested_key, uint64_t flags,
			   struct fid_mr **out, void *context)
{
	bool prov_key = dom->mr_mode & FI_MR_PROV_KEY;
	struct sim_mr *mr;
	nm_time_ns cost;
	nm_error err;
	int ret;

	if (count != 1 || !iov) {
		FI_WARN(&sim_prov, FI_LOG_MR,
			"fi_mr_reg: %zu buffers given; the NIC takes one "
			"(mr_iov_limit 1)\n", count);
		return -FI_EINVAL;
	}
	if (iov[0].iov_len && !iov[0].iov_base) {
		FI_WARN(&sim_prov, FI_LOG_MR,
			"fi_mr_reg: NULL buffer of %zu bytes\n", iov[0].iov_len);
		return -FI_EINVAL;
	}
	/* fi_mr(3): len "Must be > 0". */
	if (!iov[0].iov_len) {
		FI_WARN(&sim_prov, FI_LOG_MR, "fi_mr_reg: a length of 0\n");
		return -FI_EINVAL;
	}
	if (offset) {
		FI_WARN(&sim_prov, FI_LOG_MR, "fi_mr_reg: offset %llu: it is "
			"reserved and must be 0\n", (unsigned long long)offset);
		return -FI_EINVAL;
	}
	if (access & ~(SIM_MR_ACCESS | FI_COLLECTIVE)) {
		FI_WARN(&sim_prov, FI_LOG_MR, "fi_mr_reg: access %#llx has "
			"bits fi_mr(3) does not define\n",
			(unsigned long long)access);
		return -FI_EINVAL;
	}
	if (flags & ~FI_RMA_EVENT)
		return -FI_EBADFLAGS;
	if (!(access & SIM_MR_ACCESS))
		access |= SIM_MR_ACCESS; /* fi_mr(3): none given means all */
	if (!prov_key && requested_key > UINT32_MAX) {
		FI_WARN(&sim_prov, FI_LOG_MR,
			"fi_mr_reg: requested key %#llx exceeds mr_key_size "
			"%d bytes\n", (unsigned long long)requested_key,
			SIM_MR_KEY_SIZE);
		return -FI_EKEYREJECTED;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	mr->domain = dom;
	mr->access = access;
	mr->base = (uint64_t)(uintptr_t)iov[0].iov_base;
	sim_lock(dom->world);
	ret = nic_mr_reg(dom->nic, iov[0].iov_base, iov[0].iov_len,
			 nic_access_of(access),
			 prov_key ? NIC_KEY_ANY : requested_key,
			 dom->mr_mode & FI_MR_VIRT_ADDR, &mr->nic_mr, &cost,
			 &err);
	if (!ret && sim_ptrset_add(&dom->mrs, mr)) {
		nic_mr_dereg(mr->nic_mr);
		ret = -ENOMEM;
	}
	mr->reported = NM_EVENT_NONE;
	if (!ret && dom->async_mr) {
		/* FI_REG_MR: the caller goes on; FI_MR_COMPLETE comes when
		 * the registration would be done. */
		dom->refs++;
		mr->mr_fid.fid.context = context;
		ret = nic_world_schedule(dom->world->nic, nic_host(dom->nic),
					 cost, report_registered, mr,
					 &mr->reported);
		if (ret) {
			dom->refs--;
			sim_ptrset_del(&dom->mrs, mr);
			nic_mr_dereg(mr->nic_mr);
			snprintf(err.msg, sizeof(err.msg), "cannot schedule "
				 "the FI_MR_COMPLETE report");
		}
	} else if (!ret) {
		dom->refs++;
		/* Registration blocks the caller for its cost. */
		sim_progress_sleep(dom->world, cost);
	}
	sim_unlock(dom->world);
	if (ret) {
		FI_WARN(&sim_prov, FI_LOG_MR, "fi_mr_reg: %s\n", err.msg);
		free(mr);
		return ret == -EEXIST ? -FI_ENOKEY :
		       ret == -ENOSPC || ret == -ENOMEM ? -FI_ENOSPC :
							   sim_errno(ret);
	}
	mr->enabled = !(dom->mr_mode & FI_MR_ENDPOINT);
	mr->mr_fid.fid.fclass = FI_CLASS_MR;
	mr->mr_fid.fid.context = context;
	mr->mr_fid.fid.ops = &mr_fi_ops;
	mr->mr_fid.mem_desc = mr;
	mr->mr_fid.key = nic_mr_key(mr->nic_mr);
	*out = &mr->mr_fid;
	return 0;
}

static struct sim_domain *domain_of(struct fid *fid)
{
	return fid && fid->fclass == FI_CLASS_DOMAIN ?
		       container_of(fid, struct sim_domain, domain_fid.fid) : NULL;
}

int sim_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
	       uint64_t offset, uint64_t requested_key, uint64_t flags,
	       struct fid_mr **mr, void *context)
{
	struct iovec iov = { (void *)buf, len };
	struct sim_domain *dom = domain_of(fid);

	if (!dom || !mr)
		return -FI_EINVAL;
	return register_region(dom, &iov, 1, access, offset, requested_key,
			       flags, mr, context);
}

int sim_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		uint64_t access, uint64_t offset, uint64_t requested_key,
		uint64_t flags, struct fid_mr **mr, void *context)
{
	struct sim_domain *dom = domain_of(fid);

	if (!dom || !mr)
		return -FI_EINVAL;
	return register_region(dom, iov, count, access, offset, requested_key,
			       flags, mr, context);
}

int sim_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		   uint64_t flags, struct fid_mr **mr)
{
	struct sim_domain *dom = domain_of(fid);

	if (!dom || !attr || !mr)
		return -FI_EINVAL;
	if (attr->iface != FI_HMEM_SYSTEM) {
		FI_WARN(&sim_prov, FI_LOG_MR, "fi_mr_regattr: only host "
			"memory (FI_HMEM_SYSTEM) is simulated\n");
		return -FI_EOPNOTSUPP;
	}
	return register_region(dom, attr->mr_iov, attr->iov_count,
			       attr->access, attr->offset, attr->requested_key,
			       flags, mr, attr->context);
}

struct nic_mr *sim_mr_of_desc(struct sim_domain *domain, void *desc)
{
	struct sim_mr *mr = desc;

	/* Only a live region of this domain is a descriptor; anything else
	 * is not looked into. */
	if (!sim_ptrset_has(&domain->mrs, desc) || !mr->enabled)
		return NULL;
	return mr->nic_mr;
}
