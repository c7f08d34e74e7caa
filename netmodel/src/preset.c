/* Preset parameter sets. Sources (full citations in netmodel/README.md):
 *  [IEEE802.3]  Ethernet framing: 14 B header + 4 B FCS + 8 B preamble/SFD + 12 B inter-frame gap.
 *  [RoCEv2]     IBTA RoCEv2 annex: IPv4 20 B + UDP 8 B + BTH 12 B + ICRC 4 B inside the frame;
 *               IB path MTU 1024 over a 1500 B Ethernet MTU, 4096 over 9000 B jumbo frames.
 *  [IBTA]       InfiniBand spec: LRH 8 B + BTH 12 B + ICRC 4 B + VCRC 2 B; HDR and NDR use MTU 4096.
 *  [SN2000/3000] NVIDIA Spectrum switch datasheets: ~300 ns port-to-port; 16 MB shared buffer
 *               (Spectrum-1), i.e. ~512 KiB per port on a 32-port box.
 *  [QM8700]     NVIDIA Quantum HDR switch datasheet: 130 ns port-to-port.
 *  [QM9700]     NVIDIA Quantum-2 NDR: vendor and third-party summaries quote 130-330 ns; 200 ns here.
 *  [DCQCN]      Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015:
 *               ECN marking between Kmin = 5 KB and Kmax = 200 KB; 100 KiB is a middle value.
 *  [PCIe]       Neugebauer et al., "Understanding PCIe performance for end host networking",
 *               SIGCOMM 2018: DMA latency of a few hundred ns per PCIe round trip.
 *  [MR]         Mietke et al., Euro-Par 2006; Frey & Alonso, ICDCS 2009: registration costs tens of
 *               microseconds fixed plus ~0.3-0.7 us per 4 KiB page. 30 us + 0.5 us/page here.
 *  [devinfo]    ibv_devinfo -v on ConnectX-4..7 reports max_mr = 2^24.
 * Link latency: ~10 m of cable at ~5 ns/m plus PHY/FEC latency (approximate). NIC tx/rx delays are
 * chosen so that a small message over one switch lands near published ib_write_lat figures for
 * each generation (approximate, not a measurement of ours). */
#include "netmodel/nm_preset.h"

#include <errno.h>
#include <string.h>

#define KIB UINT64_C(1024)
#define GIB (UINT64_C(1024) * 1024 * 1024)
#define GBPS UINT64_C(1000000000)

/* Ethernet framing + RoCEv2 headers; see [IEEE802.3] and [RoCEv2]. */
#define ROCE_HEADER_BYTES (14 + 4 + 8 + 12 + 20 + 8 + 12 + 4)
/* InfiniBand local route header, BTH and both CRCs; see [IBTA]. */
#define IB_HEADER_BYTES (8 + 12 + 4 + 2)

static const nm_mr_params published_mr = {
	.base_ns = 30000,
	.per_page_ns = 500,
	.page_size = 4096,
	.max_regions = UINT64_C(1) << 24,
	.max_bytes = 64 * GIB,
};

/* Sixteen hosts on one switch, as a rack on its top-of-rack switch: enough NICs for a program
 * that opens several nodes in one process; the fat-tree shape (used once topology.kind says so)
 * is 2:1, 32 hosts and 16 uplinks per leaf, as on a 48-port leaf. */
static const nm_topology_params one_rack = {
	.kind = NM_TOPO_STAR, .hosts = 16, .hosts_per_leaf = 32, .uplinks_per_leaf = 16};

static const nm_config presets[] = {
	{
		.preset = "ideal",
		.topology = one_rack,
		.link = {.bandwidth_bps = NM_BANDWIDTH_INFINITE, .mtu_bytes = 4096},
		.sw = {.flow_control = NM_FLOW_CONTROL_PAUSE},
		.impair = {.burst_mean_length = 1},
		.mr = {.page_size = 4096},
	},
	{
		.preset = "roce-25g",
		.topology = one_rack,
		.link = {.bandwidth_bps = 25 * GBPS, .latency_ns = 150, .mtu_bytes = 1024,
			 .header_bytes = ROCE_HEADER_BYTES},
		.sw = {.latency_ns = 300, .buffer_bytes = 512 * KIB,
		       .flow_control = NM_FLOW_CONTROL_PAUSE, .ecn_threshold_bytes = 100 * KIB},
		.impair = {.burst_mean_length = 1},
		.nic = {.tx_delay_ns = 200, .rx_delay_ns = 200, .dma_latency_ns = 400},
		.mr = published_mr,
	},
	{
		.preset = "roce-100g",
		.topology = one_rack,
		.link = {.bandwidth_bps = 100 * GBPS, .latency_ns = 150, .mtu_bytes = 4096,
			 .header_bytes = ROCE_HEADER_BYTES},
		.sw = {.latency_ns = 300, .buffer_bytes = 512 * KIB,
		       .flow_control = NM_FLOW_CONTROL_PAUSE, .ecn_threshold_bytes = 100 * KIB},
		.impair = {.burst_mean_length = 1},
		.nic = {.tx_delay_ns = 150, .rx_delay_ns = 150, .dma_latency_ns = 300},
		.mr = published_mr,
	},
	{
		.preset = "ib-hdr-200g",
		.topology = one_rack,
		.link = {.bandwidth_bps = 200 * GBPS, .latency_ns = 100, .mtu_bytes = 4096,
			 .header_bytes = IB_HEADER_BYTES},
		.sw = {.latency_ns = 130, .buffer_bytes = 256 * KIB,
		       .flow_control = NM_FLOW_CONTROL_PAUSE},
		.impair = {.burst_mean_length = 1},
		.nic = {.tx_delay_ns = 100, .rx_delay_ns = 100, .dma_latency_ns = 250},
		.mr = published_mr,
	},
	{
		.preset = "ib-ndr-400g",
		.topology = one_rack,
		.link = {.bandwidth_bps = 400 * GBPS, .latency_ns = 100, .mtu_bytes = 4096,
			 .header_bytes = IB_HEADER_BYTES},
		.sw = {.latency_ns = 200, .buffer_bytes = 256 * KIB,
		       .flow_control = NM_FLOW_CONTROL_PAUSE},
		.impair = {.burst_mean_length = 1},
		.nic = {.tx_delay_ns = 100, .rx_delay_ns = 100, .dma_latency_ns = 200},
		.mr = published_mr,
	},
};

static const char *const preset_names[] = {"ideal", "roce-25g", "roce-100g", "ib-hdr-200g",
					   "ib-ndr-400g"};

_Static_assert(sizeof(presets) / sizeof(presets[0]) ==
		       sizeof(preset_names) / sizeof(preset_names[0]),
	       "one name per preset");

int nm_preset_load(nm_config *cfg, const char *name, nm_error *err)
{
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
		if (strcmp(name, presets[i].preset) == 0) {
			*cfg = presets[i];
			return 0;
		}
	}
	return nm_error_set(err, -EINVAL,
			    "preset: \"%.80s%s\" is unknown (allowed: ideal, roce-25g, roce-100g, "
			    "ib-hdr-200g, ib-ndr-400g)",
			    name, strlen(name) > 80 ? "..." : "");
}

const char *const *nm_preset_names(size_t *count_out)
{
	*count_out = sizeof(preset_names) / sizeof(preset_names[0]);
	return preset_names;
}
