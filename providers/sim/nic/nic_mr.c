/* SPDX-License-Identifier: BSD-2-Clause
 * Memory regions: registration (cost and limits from the preset), the key
 * table, and the checks a NIC makes on every remote access. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nic_internal.h"

static size_t key_slot(uint64_t key, size_t slots)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (slots - 1);
}

struct nic_mr *nic_find_mr(struct nic *nic, uint64_t key)
{
	if (!nic->mr_slots)
		return NULL;
	for (size_t i = key_slot(key, nic->mr_slots);; i = (i + 1) & (nic->mr_slots - 1)) {
		struct nic_mr *mr = nic->mrs[i];

		if (!mr)
			return NULL;
		if (mr != (struct nic_mr *)nic && mr->key == key)
			return mr;
	}
}

/* Open addressing; the NIC's own address marks a deleted slot. Lookups
 * stop at an empty slot, so live and deleted slots together stay under
 * half the table: when they would not, the table is rebuilt without the
 * deleted ones (and twice as large if the live ones alone need it). */
static bool is_deleted(const struct nic *nic, const struct nic_mr *mr)
{
	return mr == (const struct nic_mr *)nic;
}

static void place(struct nic *nic, struct nic_mr *mr)
{
	for (size_t i = key_slot(mr->key, nic->mr_slots);; i = (i + 1) & (nic->mr_slots - 1)) {
		if (!nic->mrs[i] || is_deleted(nic, nic->mrs[i])) {
			if (!nic->mrs[i])
				nic->mr_used++;
			nic->mrs[i] = mr;
			nic->mr_count++;
			return;
		}
	}
}

static int rebuild(struct nic *nic, size_t slots)
{
	struct nic_mr **old = nic->mrs, **fresh = fs_mem_calloc(nic->world->arena, slots, sizeof(*fresh));
	size_t old_slots = nic->mr_slots;

	if (!fresh)
		return -ENOMEM;
	nic->mrs = fresh;
	nic->mr_slots = slots;
	nic->mr_count = 0;
	nic->mr_used = 0;
	for (size_t i = 0; i < old_slots; i++)
		if (old[i] && !is_deleted(nic, old[i]))
			place(nic, old[i]);
	fs_mem_free(nic->world->arena, old);
	return 0;
}

static int table_insert(struct nic *nic, struct nic_mr *mr)
{
	if ((nic->mr_used + 1) * 2 > nic->mr_slots) {
		size_t slots = nic->mr_slots ? nic->mr_slots : 64;

		if ((nic->mr_count + 1) * 4 > slots)
			slots *= 2;
		if (rebuild(nic, slots))
			return -ENOMEM;
	}
	place(nic, mr);
	return 0;
}

static void table_remove(struct nic *nic, struct nic_mr *mr)
{
	for (size_t i = key_slot(mr->key, nic->mr_slots);; i = (i + 1) & (nic->mr_slots - 1)) {
		if (nic->mrs[i] == mr) {
			nic->mrs[i] = (struct nic_mr *)nic;
			nic->mr_count--;
			return;
		}
	}
}

/* Provider keys are 32 bits, as an R_Key on the wire. */
static uint64_t next_free_key(struct nic *nic)
{
	while (nic_find_mr(nic, nic->next_key) || !(nic->next_key & 0xffffffffu))
		nic->next_key = (nic->next_key + 0x101) & 0xffffffffu;
	return nic->next_key;
}

/* 0 when every page of [addr, addr + len) is mapped in this process (the
 * registering one) with the protection the NIC needs: a device pins the
 * pages, for writing when it may write them, and fails with EFAULT for any
 * it cannot (where the model would later copy into or out of nothing, or
 * into read-only memory: the process would die in the middle of a step).
 * The process's mappings come sorted by address. */
static int pages_allow(const void *addr, size_t len, bool write,
		       nm_error *err)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t at = (uintptr_t)addr & ~(uintptr_t)(page - 1);
	uintptr_t end = (uintptr_t)addr + len;
	char line[512];
	FILE *maps;

	if (end < (uintptr_t)addr)
		goto refused; /* wraps around */
	maps = fopen("/proc/self/maps", "re");
	if (!maps)
		return nm_error_set(err, -errno, "cannot read the process's "
				    "mappings (/proc/self/maps): %s",
				    strerror(errno));
	while (at < end && fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi;
		char perms[5];

		if (!strchr(line, '\n')) {
			/* A long path: the rest of the line is not ours. */
			int c;

			while ((c = fgetc(maps)) != EOF && c != '\n')
				;
		}
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3 ||
		    hi <= at)
			continue;
		if (lo > at || perms[0] != 'r' || (write && perms[1] != 'w'))
			break; /* a hole, or pages it may not touch */
		at = hi;
	}
	fclose(maps);
	if (at >= end)
		return 0;
refused:
	return nm_error_set(err, -EFAULT, "[%p, %p) is not all %s memory of "
			    "this process", addr, (void *)end,
			    write ? "writable" : "readable");
}

int nic_mr_reg(struct nic *nic, void *addr, size_t len, uint32_t access,
	       uint64_t key, bool virt_addr, struct nic_mr **out,
	       nm_time_ns *cost_ns, nm_error *err)
{
	struct nic_mr *mr;
	int ret;

	*cost_ns = 0;
	bool writes = access & (NIC_ACCESS_LOCAL_WRITE |
				NIC_ACCESS_REMOTE_WRITE |
				NIC_ACCESS_REMOTE_ATOMIC);

	if (len && (ret = pages_allow(addr, len, writes, err)))
		return ret;
	if (key != NIC_KEY_ANY && nic_find_mr(nic, key))
		return nm_error_set(err, -EEXIST, "key %#llx is already in "
				    "use on this NIC", (unsigned long long)key);
	if (key != NIC_KEY_ANY && key > 0xffffffffu)
		return nm_error_set(err, -EINVAL, "key %#llx does not fit the "
				    "NIC's 32-bit keys",
				    (unsigned long long)key);
	if (len) {
		/* Pages are counted from offset 0, not from where the buffer
		 * happens to sit: a run must not depend on malloc's choices. */
		ret = nm_mr_register(&nic->ledger, 0, len, cost_ns, err);
		if (ret)
			return ret;
	}
	mr = fs_mem_calloc(nic->world->arena, 1, sizeof(*mr));
	if (!mr)
		goto nomem;
	mr->nic = nic;
	mr->addr = addr;
	mr->len = len;
	mr->access = access;
	mr->virt_addr = virt_addr;
	mr->iova = (uintptr_t)addr;
	mr->key = key == NIC_KEY_ANY ? next_free_key(nic) : key;
	if (table_insert(nic, mr)) {
		fs_mem_free(nic->world->arena, mr);
		goto nomem;
	}
	if (key == NIC_KEY_ANY)
		nic->next_key = (mr->key + 0x101) & 0xffffffffu;
	*out = mr;
	return 0;
nomem:
	if (len)
		nm_mr_deregister(&nic->ledger, len, NULL);
	return nm_error_set(err, -ENOMEM, "out of memory");
}

int nic_mr_dereg(struct nic_mr *mr)
{
	fs_arena *arena = mr->nic->world->arena;

	if (mr->busy)
		return -EBUSY;
	for (uint32_t i = 0; i < mr->nic->qps.count; i++) {
		struct nic_qp *qp = mr->nic->qps.slots[i];

		if (!qp || !qp->rq)
			continue;
		nic_match_revoke_mr(qp->rq, mr);
		/* Receives a message is landing in, packet by packet. */
		for (size_t s = 0; s < qp->flow_slots; s++)
			for (struct nic_flow *f = qp->flows[s]; f;
			     f = f->hash_next)
				if (f->rx.active && f->rx.kind == 0 &&
				    f->rx.match)
					nic_match_revoke_recv(f->rx.match, mr);
	}
	table_remove(mr->nic, mr);
	if (mr->len)
		nm_mr_deregister(&mr->nic->ledger, mr->len, NULL);
	fs_mem_free(arena, mr);
	return 0;
}

void nic_mr_free_all(struct nic *nic)
{
	for (size_t i = 0; i < nic->mr_slots; i++) {
		struct nic_mr *mr = nic->mrs[i];

		if (mr && !is_deleted(nic, mr))
			fs_mem_free(nic->world->arena, mr);
	}
	fs_mem_free(nic->world->arena, nic->mrs);
	nic->mrs = NULL;
	nic->mr_slots = nic->mr_count = nic->mr_used = 0;
}

uint64_t nic_mr_key(const struct nic_mr *mr)
{
	return mr->key;
}

bool nic_mr_covers(const struct nic_mr *mr, const void *addr, size_t len)
{
	const uint8_t *p = addr;

	return p >= mr->addr && len <= mr->len &&
	       (size_t)(p - mr->addr) <= mr->len - len;
}

void nic_mr_set_iova(struct nic_mr *mr, uint64_t iova)
{
	mr->iova = iova;
}

void nic_mr_set_pd(struct nic_mr *mr, uint32_t pd)
{
	mr->pd = pd;
}

enum nic_status nic_mr_check_remote(const struct nic_qp *qp, uint64_t key,
				    uint64_t addr, size_t len,
				    uint32_t access, uint8_t **out)
{
	struct nic_mr *mr;
	uint64_t offset;

	/* An operation the QP does not enable (verbs' qp_access_flags). */
	if ((qp->remote_access & access) != access)
		return NIC_REM_ACCESS_ERR;
	/* IBA C9-88: a zero-length RDMA read or write checks neither key
	 * nor address (a zero-byte write with immediate data is a common
	 * notification). */
	if (!len && access != NIC_ACCESS_REMOTE_ATOMIC) {
		*out = NULL;
		return NIC_OK;
	}
	mr = nic_find_mr(qp->nic, key);
	if (!mr || (mr->access & access) != access ||
	    (qp->pd && mr->pd && mr->pd != qp->pd))
		return NIC_REM_ACCESS_ERR;
	offset = mr->virt_addr ? addr - mr->iova : addr;
	if ((mr->virt_addr && addr < mr->iova) || len > mr->len ||
	    offset > mr->len - len)
		return NIC_REM_ACCESS_ERR;
	*out = mr->addr + offset;
	return NIC_OK;
}
