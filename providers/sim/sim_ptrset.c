/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdlib.h>

#include <rdma/fi_errno.h>

#include "sim_ptrset.h"

/* A deleted slot; never a valid object pointer. */
static char tombstone;

static size_t slot_of(const void *p, size_t cap)
{
	return (size_t)(((uintptr_t)p * 0x9e3779b97f4a7c15ull) >> 16) & (cap - 1);
}

bool sim_ptrset_has(const struct sim_ptrset *set, const void *p)
{
	if (!set->cap || !p)
		return false;
	for (size_t i = slot_of(p, set->cap);; i = (i + 1) & (set->cap - 1)) {
		if (!set->slots[i])
			return false;
		if (set->slots[i] == p)
			return true;
	}
}

static int rehash(struct sim_ptrset *set, size_t cap)
{
	void **old = set->slots;
	size_t old_cap = set->cap;

	set->slots = calloc(cap, sizeof(*set->slots));
	if (!set->slots) {
		set->slots = old;
		return -FI_ENOMEM;
	}
	set->cap = cap;
	set->used = set->live = 0;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i] && old[i] != &tombstone)
			sim_ptrset_add(set, old[i]);
	free(old);
	return 0;
}

int sim_ptrset_add(struct sim_ptrset *set, void *p)
{
	if ((set->used + 1) * 2 > set->cap &&
	    rehash(set, set->cap ? set->cap * 2 : 32))
		return -FI_ENOMEM;
	for (size_t i = slot_of(p, set->cap);; i = (i + 1) & (set->cap - 1)) {
		if (!set->slots[i]) {
			set->slots[i] = p;
			set->used++;
			set->live++;
			return 0;
		}
	}
}

void sim_ptrset_del(struct sim_ptrset *set, const void *p)
{
	if (!set->cap)
		return;
	for (size_t i = slot_of(p, set->cap);; i = (i + 1) & (set->cap - 1)) {
		if (!set->slots[i])
			return;
		if (set->slots[i] == p) {
			set->slots[i] = &tombstone;
			set->live--;
			return;
		}
	}
}

void sim_ptrset_free(struct sim_ptrset *set)
{
	free(set->slots);
	set->slots = NULL;
	set->cap = set->used = set->live = 0;
}
