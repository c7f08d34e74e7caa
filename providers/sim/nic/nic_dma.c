/* SPDX-License-Identifier: BSD-2-Clause
 * Host memory as a NIC reaches it.
 *
 * A NIC reads and writes the memory of the process that opened it. In a
 * single process that is a memcpy. When several processes share the world
 * (MULTIPROCESS.md), the process running an event may be another one: it
 * then reaches the owner's memory with process_vm_readv/writev, the way a
 * real NIC does DMA without the program's help — so one-sided operations
 * complete while their target computes. Received messages need not reach
 * memory before the completion that announces them: those bytes go on the
 * owner's list of calls, and the owner writes them when it takes in the
 * completion, saving a system call each. A failure (the owner is gone, the
 * range is not mapped) is counted and the bytes are left alone: the owner's
 * own checks (registration, bounds) come first, so only a dying owner
 * meets it.
 */
#define _GNU_SOURCE /* process_vm_readv */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "nic_internal.h"

static bool local(const struct nic *nic)
{
	return !nic->owner || nic_proc_is_self(nic->owner);
}

static void count_failure(const struct nic *nic)
{
	nic->world->stats.dma_failures++;
}

/* Copies len bytes between this process's `here` and the owner's `there`,
 * in the direction `to_owner` says. */
static void owner_copy(const struct nic *nic, void *there, void *here,
		       size_t len, bool to_owner)
{
	size_t done = 0;

	while (done < len) {
		struct iovec mine = { (uint8_t *)here + done, len - done };
		struct iovec theirs = { (uint8_t *)there + done, len - done };
		ssize_t n = to_owner ?
			process_vm_writev(nic->owner->pid, &mine, 1, &theirs, 1, 0) :
			process_vm_readv(nic->owner->pid, &mine, 1, &theirs, 1, 0);

		if (n <= 0) {
			count_failure(nic);
			return;
		}
		done += (size_t)n;
	}
}

void nic_dma_read(const struct nic *nic, void *dst, const void *src,
		  size_t len)
{
	/* Bytes in the world's memory (a send's inline data) are at the
	 * same address in every process. */
	if (local(nic) || fs_arena_contains(nic->world->arena, src))
		memcpy(dst, src, len);
	else
		owner_copy(nic, (void *)src, dst, len, false);
}

void nic_dma_write(const struct nic *nic, void *dst, const void *src,
		   size_t len)
{
	if (local(nic))
		memcpy(dst, src, len);
	else
		owner_copy(nic, dst, (void *)src, len, true);
}

void nic_dma_deliver(struct nic_qp *qp, void *dst, const void *src,
		     size_t len)
{
	if (local(qp->nic))
		memcpy(dst, src, len);
	else
		nic_call_copy(qp, dst, src, len);
}
