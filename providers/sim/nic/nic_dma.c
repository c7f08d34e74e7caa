/* SPDX-License-Identifier: BSD-2-Clause
 * Host memory as a NIC reaches it.
 *
 * A NIC reads and writes the memory of the process that opened it. In a
 * single process that is a memcpy. When several processes share the world
 * (MULTIPROCESS.md), the process running an event may be another one: it
 * then reaches the owner's memory with process_vm_readv/writev, the way a
 * real NIC does DMA without the program's help — so one-sided operations
 * complete while their target computes. A failure (the owner is gone, the
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

void nic_dma_read(const struct nic *nic, void *dst, const void *src,
		  size_t len)
{
	size_t done = 0;

	if (local(nic)) {
		memcpy(dst, src, len);
		return;
	}
	while (done < len) {
		struct iovec here = { (uint8_t *)dst + done, len - done };
		struct iovec there = { (uint8_t *)src + done, len - done };
		ssize_t n = process_vm_readv(nic->owner->pid, &here, 1, &there,
					     1, 0);

		if (n <= 0) {
			count_failure(nic);
			return;
		}
		done += (size_t)n;
	}
}

void nic_dma_write(const struct nic *nic, void *dst, const void *src,
		   size_t len)
{
	size_t done = 0;

	if (local(nic)) {
		memcpy(dst, src, len);
		return;
	}
	while (done < len) {
		struct iovec here = { (uint8_t *)src + done, len - done };
		struct iovec there = { (uint8_t *)dst + done, len - done };
		ssize_t n = process_vm_writev(nic->owner->pid, &here, 1, &there,
					      1, 0);

		if (n <= 0) {
			count_failure(nic);
			return;
		}
		done += (size_t)n;
	}
}
