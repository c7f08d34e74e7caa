/* SPDX-License-Identifier: BSD-2-Clause
 * A set of pointers (open addressing), to tell a live object handed back
 * by the application (a memory descriptor, say) from garbage without
 * dereferencing it. */
#ifndef FABSIM_SIM_PTRSET_H
#define FABSIM_SIM_PTRSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim_ptrset {
	void  **slots;
	size_t  cap;    /* a power of two, or 0 */
	size_t  used;   /* live + tombstones */
	size_t  live;
};

bool sim_ptrset_has(const struct sim_ptrset *set, const void *p);
int sim_ptrset_add(struct sim_ptrset *set, void *p);
void sim_ptrset_del(struct sim_ptrset *set, const void *p);
void sim_ptrset_free(struct sim_ptrset *set);

#endif
