/* Cost models of the host side: NIC processing, DMA over PCIe, memory registration.
 *
 * The NIC model applies them around the network; nm_network_message_latency_ns adds them the same
 * way: a message posted at t leaves the NIC at t + nic_send_overhead, and its completion at the
 * target is written nic_recv_overhead after its last packet arrived. */
#ifndef NM_COST_H
#define NM_COST_H

#include <stdint.h>

#include "netmodel/nm_error.h"
#include "netmodel/nm_time.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nm_nic_params {
	nm_time_ns tx_delay_ns;    /* doorbell to first bit on the wire (WQE fetch, scheduling) */
	nm_time_ns rx_delay_ns;    /* last bit in to completion entry visible (CQE generation) */
	nm_time_ns dma_latency_ns; /* one DMA transfer across PCIe (payload read or write) */
} nm_nic_params;

/* Post to first packet ready for the wire: tx_delay + one DMA read of the payload. */
nm_time_ns nm_nic_send_overhead_ns(const nm_nic_params *nic);
/* Last packet in to completion: one DMA write of the payload + rx_delay. */
nm_time_ns nm_nic_recv_overhead_ns(const nm_nic_params *nic);

/* Memory registration: pinning and translating pages costs base + per_page * pages. */
typedef struct nm_mr_params {
	nm_time_ns base_ns;     /* fixed cost per registration (syscall, MR object, NIC command) */
	nm_time_ns per_page_ns; /* per page pinned and written to the NIC's translation table */
	uint64_t page_size;     /* a power of two */
	uint64_t max_regions;   /* 0 = unlimited */
	uint64_t max_bytes;     /* total registered bytes; 0 = unlimited */
} nm_mr_params;

/* Pages spanned by [addr, addr + length): partial pages at both ends count whole. */
uint64_t nm_mr_pages(const nm_mr_params *mr, uint64_t addr, uint64_t length);

/* base_ns + per_page_ns * pages. */
nm_time_ns nm_mr_cost_ns(const nm_mr_params *mr, uint64_t addr, uint64_t length);

/* Running totals of one protection domain / NIC, to enforce the limits. */
typedef struct nm_mr_ledger {
	nm_mr_params params;
	uint64_t regions;
	uint64_t bytes;
} nm_mr_ledger;

void nm_mr_ledger_init(nm_mr_ledger *ledger, const nm_mr_params *params);

/* Accounts one registration and returns its cost in *cost_out. Fails without changing the ledger:
 * -ENOSPC when max_regions would be exceeded, -ENOMEM when max_bytes would be, -EINVAL for a
 * zero length. */
int nm_mr_register(nm_mr_ledger *ledger, uint64_t addr, uint64_t length, nm_time_ns *cost_out,
		   nm_error *err);

/* Releases what nm_mr_register accounted for a region of `length` bytes (deregistration is
 * modelled as free). -EINVAL when the ledger holds no such region. */
int nm_mr_deregister(nm_mr_ledger *ledger, uint64_t length, nm_error *err);

#ifdef __cplusplus
}
#endif

#endif
