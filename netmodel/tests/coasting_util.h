// What the coasting tests compare between a run that coasts and the same run on the event-per-step
// machine (NM_TRACE_TX_END traced): arrivals, the network's counters, every port's.
#ifndef NETMODEL_TESTS_COASTING_UTIL_H
#define NETMODEL_TESTS_COASTING_UTIL_H

#include <string>
#include <vector>

#include "netmodel/tests/test_util.h"

namespace nmtest {

// A small network for the coasting tests: 1000-byte MTU and no framing, so that a packet's size
// is what crosses the wire.
struct Net {
  nm_topology_kind kind;
  uint32_t hosts;
  uint64_t bandwidth_bps;
  nm_time_ns link_latency_ns, switch_latency_ns;
  nm_flow_control flow_control;
  uint64_t buffer_bytes, ecn_threshold_bytes;
};

inline nm_config SmallNetwork(const Net& n) {
  nm_config cfg = Preset("ideal");
  cfg.topology = {n.kind, n.hosts, 4, 2};
  cfg.link.bandwidth_bps = n.bandwidth_bps;
  cfg.link.latency_ns = n.link_latency_ns;
  cfg.link.mtu_bytes = 1000;
  cfg.link.header_bytes = 0;
  cfg.sw.latency_ns = n.switch_latency_ns;
  cfg.sw.flow_control = n.flow_control;
  cfg.sw.buffer_bytes = n.buffer_bytes;
  cfg.sw.ecn_threshold_bytes = n.ecn_threshold_bytes;
  return cfg;
}

inline void ExpectSameArrivals(const std::vector<Arrival>& coasting,
                               const std::vector<Arrival>& per_step) {
  ASSERT_EQ(per_step.size(), coasting.size());
  for (size_t i = 0; i < per_step.size(); i++) {
    SCOPED_TRACE("arrival " + std::to_string(i));
    EXPECT_EQ(per_step[i].time, coasting[i].time);
    EXPECT_EQ(per_step[i].pkt.user_id, coasting[i].pkt.user_id);
    EXPECT_EQ(per_step[i].pkt.flags, coasting[i].pkt.flags);
  }
}

inline void ExpectSameCounters(const nm_network_stats& coasting, const nm_network_stats& per_step) {
  ExpectSameTotals(coasting, per_step);
  EXPECT_EQ(per_step.peak_in_flight, coasting.peak_in_flight);
}

inline void ExpectSamePorts(const std::vector<nm_port_stats>& coasting,
                            const std::vector<nm_port_stats>& per_step) {
  ASSERT_EQ(per_step.size(), coasting.size());
  for (size_t id = 0; id < per_step.size(); id++) {
    SCOPED_TRACE("port " + std::to_string(id));
    const nm_port_stats &a = per_step[id], &b = coasting[id];
    EXPECT_EQ(a.tx_packets, b.tx_packets);
    EXPECT_EQ(a.tx_bytes, b.tx_bytes);
    EXPECT_EQ(a.dropped, b.dropped);
    EXPECT_EQ(a.ecn_marked, b.ecn_marked);
    EXPECT_EQ(a.queued_bytes, b.queued_bytes);
    EXPECT_EQ(a.peak_queued_bytes, b.peak_queued_bytes);
    EXPECT_EQ(a.pauses, b.pauses);
  }
}

}  // namespace nmtest

#endif
