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
	nic->part->stats.dma_failures++;
}

/* Copies len bytes between this process's `here` and the owner's `there`,
 * in the direction `to_owner` says; false (counted) if it could not. */
static bool owner_copy(const struct nic *nic, void *there, void *here,
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
			return false;
		}
		done += (size_t)n;
	}
	return true;
}

void nic_dma_read(const struct nic *nic, void *dst, const void *src,
		  size_t len)
{
	if (!len)
		return;
	/* Bytes in the world's memory (a send's inline data) are at the
	 * same address in every process. */
	if (local(nic) || fs_arena_contains(nic->world->arena, src))
		memcpy(dst, src, len);
	else
		owner_copy(nic, (void *)src, dst, len, false);
}

/* Bytes of another process's buffer fetched by one system call when a NIC
 * reads it in order: a 64 KiB send across processes took sixteen calls of
 * ~0.7 us, one per 4 KiB packet. A NIC may read a send's buffer at any
 * time before the send completes. Buffers of the full size are kept for
 * reuse, a few per part of the world: the rest go back to the world's
 * memory, which outstanding requests must not exhaust. */
#define NIC_READ_AHEAD (64 * 1024)
#define NIC_READ_AHEAD_SPARES 8

static uint8_t *ahead_buffer(struct nic_part *part, size_t size)
{
	uint8_t *buf = part->free_aheads;

	if (size < NIC_READ_AHEAD || !buf)
		return fs_mem_alloc(part->world->arena, size);
	memcpy(&part->free_aheads, buf, sizeof(void *));
	part->spare_aheads--;
	return buf;
}

void nic_dma_read_ahead(const struct nic *nic, struct nic_read_ahead *ra,
			void *dst, const void *src, size_t len, size_t avail)
{
	const uint8_t *at = src;
	size_t want = avail < NIC_READ_AHEAD ? avail : NIC_READ_AHEAD;

	if (!len)
		return;
	if (local(nic) || fs_arena_contains(nic->world->arena, src)) {
		nic_dma_read(nic, dst, src, len);
		return;
	}
	if (!ra->buf || at < ra->from || at + len > ra->from + ra->len) {
		/* Nothing to gain when this piece is all there is to read. */
		if (want <= len) {
			nic_dma_read(nic, dst, src, len);
			return;
		}
		if (ra->buf && ra->cap < want)
			nic_read_ahead_release(nic->part, ra);
		if (!ra->buf) {
			ra->buf = ahead_buffer(nic->part, want);
			ra->cap = want;
		}
		ra->len = 0;
		if (!ra->buf) { /* no memory for it: packet by packet */
			nic_dma_read(nic, dst, src, len);
			return;
		}
		ra->from = at;
		if (!owner_copy(nic, (void *)src, ra->buf, want, false))
			return;
		ra->len = want;
	}
	memcpy(dst, ra->buf + (at - ra->from), len);
}

void nic_read_ahead_release(struct nic_part *part, struct nic_read_ahead *ra)
{
	if (!ra->buf)
		return;
	if (ra->cap == NIC_READ_AHEAD &&
	    part->spare_aheads < NIC_READ_AHEAD_SPARES) {
		memcpy(ra->buf, &part->free_aheads, sizeof(void *));
		part->free_aheads = ra->buf;
		part->spare_aheads++;
	} else {
		fs_mem_free(part->world->arena, ra->buf);
	}
	ra->buf = NULL;
	ra->len = ra->cap = 0;
}

void nic_read_ahead_free_all(struct nic_part *part)
{
	while (part->free_aheads) {
		void *buf = part->free_aheads;

		memcpy(&part->free_aheads, buf, sizeof(void *));
		fs_mem_free(part->world->arena, buf);
	}
	part->spare_aheads = 0;
}

void nic_dma_write(const struct nic *nic, void *dst, const void *src,
		   size_t len)
{
	if (!len)
		return; /* a zero-length write names no memory (C9-88) */
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
