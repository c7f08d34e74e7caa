/* SPDX-License-Identifier: BSD-2-Clause
 * Protection domains and memory regions. A region is the NIC model's
 * (its key is both lkey and rkey, remote addresses are virtual addresses,
 * registration costs virtual time and counts against the preset's limits);
 * the face keeps the IBV_ACCESS_* rights and the protection domain, and
 * checks local keys itself (sv_post.c), as the NIC model leaves local
 * protection to its user. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sv.h"

/* ---- Protection domains --------------------------------------------------------- */

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct sv_context *c = sv_ctx(context);
	struct sv_pd *pd = calloc(1, sizeof(*pd));

	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	static uint32_t last_id;

	pd->ctx = c;
	pd->pd.context = context;
	sv->lock();
	c->refs++;
	if (++last_id == 0)
		++last_id; /* 0 is "none" */
	pd->id = last_id;
	sv->unlock();
	return &pd->pd;
}

int ibv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct sv_pd *pd = SV_CONTAINER_OF(ibpd, struct sv_pd, pd);

	sv->lock();
	if (pd->refs) {
		sv->unlock();
		return EBUSY;
	}
	pd->ctx->refs--;
	sv->unlock();
	free(pd);
	return 0;
}

/* ---- The device's key table ----------------------------------------------------------- */

static size_t slot_of(uint32_t key, size_t slots)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (slots - 1);
}

/* Open addressing; the device's address marks a deleted slot. */
#define SV_DELETED(d) ((struct sv_mr *)(d))

struct sv_mr *sv_mr_find(struct sv_device *d, uint32_t lkey)
{
	if (!d->mr_slots)
		return NULL;
	for (size_t i = slot_of(lkey, d->mr_slots);; i = (i + 1) & (d->mr_slots - 1)) {
		struct sv_mr *mr = d->mrs[i];

		if (!mr)
			return NULL;
		if (mr != SV_DELETED(d) && mr->mr.lkey == lkey)
			return mr;
	}
}

/* Live regions and deleted slots both lengthen probes: the table is
 * rebuilt (without the deleted ones) before they fill half of it, so a
 * probe always ends at an empty slot. */
static int table_add(struct sv_device *d, struct sv_mr *mr)
{
	if ((d->mr_used + 1) * 2 > d->mr_slots) {
		size_t slots = d->mr_slots && (d->mr_count + 1) * 4 <= d->mr_slots ?
				       d->mr_slots : d->mr_slots ? d->mr_slots * 2 : 64;
		struct sv_mr **old = d->mrs, **fresh = calloc(slots, sizeof(*fresh));
		size_t old_slots = d->mr_slots;

		if (!fresh)
			return -ENOMEM;
		d->mrs = fresh;
		d->mr_slots = slots;
		d->mr_count = 0;
		d->mr_used = 0;
		for (size_t i = 0; i < old_slots; i++)
			if (old[i] && old[i] != SV_DELETED(d))
				table_add(d, old[i]);
		free(old);
	}
	for (size_t i = slot_of(mr->mr.lkey, d->mr_slots);; i = (i + 1) & (d->mr_slots - 1)) {
		if (!d->mrs[i] || d->mrs[i] == SV_DELETED(d)) {
			if (!d->mrs[i])
				d->mr_used++;
			d->mrs[i] = mr;
			d->mr_count++;
			return 0;
		}
	}
}

static void table_del(struct sv_device *d, struct sv_mr *mr)
{
	for (size_t i = slot_of(mr->mr.lkey, d->mr_slots);; i = (i + 1) & (d->mr_slots - 1)) {
		if (d->mrs[i] == mr) {
			d->mrs[i] = SV_DELETED(d);
			d->mr_count--;
			return;
		}
	}
}

/* ---- Registration ---------------------------------------------------------------------------- */

#define SV_ACCESS_KNOWN                                                    \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                 \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |                \
	 IBV_ACCESS_RELAXED_ORDERING)

uint32_t sv_remote_access(int access)
{
	uint32_t a = 0;

	if (access & IBV_ACCESS_REMOTE_READ)
		a |= NIC_ACCESS_REMOTE_READ;
	if (access & IBV_ACCESS_REMOTE_WRITE)
		a |= NIC_ACCESS_REMOTE_WRITE;
	if (access & IBV_ACCESS_REMOTE_ATOMIC)
		a |= NIC_ACCESS_REMOTE_ATOMIC;
	return a;
}

/* Verbs: remote write or atomic rights need local write too; a region
 * has pages (mlx5, as the kernel, refuses a length of 0). */
static bool reg_args_ok(void *addr, size_t length, int access)
{
	return !(access & ~SV_ACCESS_KNOWN) &&
	       !((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
		 !(access & IBV_ACCESS_LOCAL_WRITE)) &&
	       length && addr;
}

static uint32_t nic_access(int access)
{
	return NIC_ACCESS_LOCAL | sv_remote_access(access) |
	       ((access & IBV_ACCESS_LOCAL_WRITE) ? NIC_ACCESS_LOCAL_WRITE : 0);
}

static struct ibv_mr *reg(struct ibv_pd *ibpd, void *addr, size_t length,
			  uint64_t iova, int access)
{
	struct sv_pd *pd = SV_CONTAINER_OF(ibpd, struct sv_pd, pd);
	struct sv_device *d = pd->ctx->dev;
	struct sv_mr *mr;
	nm_time_ns cost;
	nm_error err;
	int ret;

	if (!reg_args_ok(addr, length, access)) {
		errno = EINVAL;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	sv->lock();
	ret = nic_mr_reg(d->nic, addr, length, nic_access(access), NIC_KEY_ANY,
			 true, &mr->nmr, &cost, &err);
	if (!ret) {
		mr->mr.lkey = mr->mr.rkey = (uint32_t)nic_mr_key(mr->nmr);
		nic_mr_set_pd(mr->nmr, pd->id);
		nic_mr_set_iova(mr->nmr, iova);
		ret = table_add(d, mr);
		if (ret)
			nic_mr_dereg(mr->nmr);
	}
	if (!ret) {
		pd->refs++;
		/* Registration blocks the caller for its cost (time moves
		 * for every thread and process that waits meanwhile). */
		nic_sched_sleep(sv_world.nic, cost);
	}
	sv->unlock();
	if (ret) {
		free(mr);
		errno = ret == -ENOSPC || ret == -ENOMEM ? ENOMEM : -ret;
		return NULL;
	}
	mr->pd = pd;
	mr->access = access;
	mr->iova = iova;
	mr->mr.context = ibpd->context;
	mr->mr.pd = ibpd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.handle = mr->mr.lkey;
	return &mr->mr;
}

struct ibv_mr *(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
			    int access)
{
	return reg(pd, addr, length, (uintptr_t)addr, access);
}

/* Peers name the region's first byte `iova`. */
struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
				uint64_t iova, unsigned int access)
{
	return reg(pd, addr, length, iova, (int)access);
}

struct ibv_mr *(ibv_reg_mr_iova)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t iova, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

int ibv_dereg_mr(struct ibv_mr *ibmr)
{
	struct sv_mr *mr = SV_CONTAINER_OF(ibmr, struct sv_mr, mr);
	int ret;

	sv->lock();
	ret = nic_mr_dereg(mr->nmr);
	if (!ret) {
		table_del(mr->pd->ctx->dev, mr);
		mr->pd->refs--;
	}
	sv->unlock();
	if (ret)
		return EBUSY; /* operations in flight use it */
	free(mr);
	return 0;
}

/* ibv_rereg_mr(3): the region's translation, PD or access changed in
 * place, its keys kept. A failure returns an IBV_REREG_MR_ERR_* code with
 * errno set; one of the NIC (ERR_CMD) leaves the region as it was. */
int ibv_rereg_mr(struct ibv_mr *ibmr, int flags, struct ibv_pd *ibpd,
		 void *addr, size_t length, int access)
{
	struct sv_mr *mr = SV_CONTAINER_OF(ibmr, struct sv_mr, mr);
	struct sv_pd *pd = mr->pd;
	void *new_addr = ibmr->addr;
	size_t new_len = ibmr->length;
	int new_access = mr->access;
	struct nic_mr *nmr;
	nm_time_ns cost;
	nm_error err;
	int ret;

	if (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD) {
		if (!ibpd || ibpd->context != ibmr->context) {
			errno = EINVAL;
			return IBV_REREG_MR_ERR_INPUT;
		}
		pd = SV_CONTAINER_OF(ibpd, struct sv_pd, pd);
	}
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		new_addr = addr;
		new_len = length;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		new_access = access;
	if (!reg_args_ok(new_addr, new_len, new_access)) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	sv->lock();
	ret = nic_mr_dereg(mr->nmr);
	if (ret) {
		sv->unlock();
		errno = EBUSY; /* operations in flight use it */
		return IBV_REREG_MR_ERR_CMD;
	}
	ret = nic_mr_reg(pd->ctx->dev->nic, new_addr, new_len,
			 nic_access(new_access), ibmr->lkey, true, &nmr, &cost,
			 &err);
	if (ret) {
		/* As it was: its key is free, and its memory was valid. */
		nic_mr_reg(mr->pd->ctx->dev->nic, ibmr->addr, ibmr->length,
			   nic_access(mr->access), ibmr->lkey, true, &mr->nmr,
			   &cost, &err);
		nic_mr_set_pd(mr->nmr, mr->pd->id);
		nic_mr_set_iova(mr->nmr, mr->iova);
		sv->unlock();
		errno = ret == -ENOSPC || ret == -ENOMEM ? ENOMEM : -ret;
		return IBV_REREG_MR_ERR_CMD;
	}
	mr->nmr = nmr;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION)
		mr->iova = (uintptr_t)new_addr;
	nic_mr_set_pd(nmr, pd->id);
	nic_mr_set_iova(nmr, mr->iova);
	if (pd != mr->pd) {
		mr->pd->refs--;
		pd->refs++;
		mr->pd = pd;
	}
	mr->access = new_access;
	ibmr->pd = &pd->pd;
	ibmr->addr = new_addr;
	ibmr->length = new_len;
	nic_sched_sleep(sv_world.nic, cost);
	sv->unlock();
	return 0;
}
