#include "netmodel/nm_cost.h"

#include <errno.h>
#include <inttypes.h>

nm_time_ns nm_nic_send_overhead_ns(const nm_nic_params *nic)
{
	return nic->tx_delay_ns + nic->dma_latency_ns;
}

nm_time_ns nm_nic_recv_overhead_ns(const nm_nic_params *nic)
{
	return nic->dma_latency_ns + nic->rx_delay_ns;
}

uint64_t nm_mr_pages(const nm_mr_params *mr, uint64_t addr, uint64_t length)
{
	if (length == 0)
		return 0;
	uint64_t first = addr / mr->page_size;
	uint64_t last = (addr + (length - 1)) / mr->page_size;
	return last - first + 1;
}

nm_time_ns nm_mr_cost_ns(const nm_mr_params *mr, uint64_t addr, uint64_t length)
{
	return mr->base_ns + mr->per_page_ns * nm_mr_pages(mr, addr, length);
}

void nm_mr_ledger_init(nm_mr_ledger *ledger, const nm_mr_params *params)
{
	ledger->params = *params;
	ledger->regions = 0;
	ledger->bytes = 0;
}

int nm_mr_register(nm_mr_ledger *ledger, uint64_t addr, uint64_t length, nm_time_ns *cost_out,
		   nm_error *err)
{
	const nm_mr_params *p = &ledger->params;
	if (length == 0)
		return nm_error_set(err, -EINVAL, "memory registration: length 0 (allowed: >= 1 byte)");
	if (p->max_regions && ledger->regions + 1 > p->max_regions)
		return nm_error_set(err, -ENOSPC,
				    "memory registration: %" PRIu64 " regions already registered "
				    "(mr.max_regions = %" PRIu64 ")",
				    ledger->regions, p->max_regions);
	if (p->max_bytes && (length > p->max_bytes || ledger->bytes > p->max_bytes - length))
		return nm_error_set(err, -ENOMEM,
				    "memory registration: %" PRIu64 " bytes on top of %" PRIu64
				    " registered would exceed mr.max_bytes = %" PRIu64,
				    length, ledger->bytes, p->max_bytes);
	ledger->regions++;
	ledger->bytes += length;
	if (cost_out)
		*cost_out = nm_mr_cost_ns(p, addr, length);
	return 0;
}

int nm_mr_deregister(nm_mr_ledger *ledger, uint64_t length, nm_error *err)
{
	if (ledger->regions == 0 || length > ledger->bytes)
		return nm_error_set(err, -EINVAL,
				    "memory deregistration of %" PRIu64 " bytes: the ledger holds %" PRIu64
				    " regions, %" PRIu64 " bytes",
				    length, ledger->regions, ledger->bytes);
	ledger->regions--;
	ledger->bytes -= length;
	return 0;
}
