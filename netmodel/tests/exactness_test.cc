// Exactness: an isolated message takes exactly the closed-form time, to the nanosecond, for every
// preset, every topology and sizes from 0 B to 16 MiB. The expectation is computed here from
// first principles (the store-and-forward recurrence over the hops of the route, which this file
// derives from the documented topology numbering), never from the library's formula; the
// library's closed form (nm_network_message_latency_ns) is checked against it too.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "netmodel/tests/test_util.h"

namespace {

using nmtest::SerNs;

struct Hop {
  uint64_t bps;
  nm_time_ns latency;
  nm_time_ns forward;  // switch latency at the far end, 0 at the destination
};

// Packet train through FIFO store-and-forward hops, all packets ready at time 0:
// depart[i][h] = max(depart[i-1][h], depart[i][h-1] + L[h-1] + F[h-1]) + ser_h(size_i).
nm_time_ns TrainTime(const std::vector<Hop>& hops, const std::vector<uint64_t>& sizes) {
  std::vector<nm_time_ns> prev_depart(hops.size(), 0);
  nm_time_ns last_arrival = 0;
  for (uint64_t size : sizes) {
    nm_time_ns ready = 0;
    for (size_t h = 0; h < hops.size(); h++) {
      nm_time_ns start = std::max(prev_depart[h], ready);
      prev_depart[h] = start + SerNs(size, hops[h].bps);
      ready = prev_depart[h] + hops[h].latency + hops[h].forward;
    }
    last_arrival = ready;
  }
  return last_arrival;
}

std::vector<uint64_t> PacketSizes(uint64_t payload, uint32_t mtu, uint32_t header) {
  std::vector<uint64_t> sizes;
  do {
    uint64_t chunk = std::min<uint64_t>(payload, mtu);
    sizes.push_back(chunk + header);
    payload -= chunk;
  } while (payload > 0);
  return sizes;
}

std::vector<uint64_t> MessageSizes() {
  std::vector<uint64_t> sizes = {0, 3, 7, 1000, 1023, 1025, 4095, 4097, 9001, 65537, 1000003,
                                 (1u << 24) - 1};
  for (uint64_t s = 1; s <= (1u << 24); s *= 2) sizes.push_back(s);
  return sizes;
}

struct Done {
  std::vector<nm_message_info> infos;
  static void Cb(void* ctx, const nm_message_info* info) {
    static_cast<Done*>(ctx)->infos.push_back(*info);
  }
};

struct Case {
  std::string preset;
  nm_topology_kind kind;
  uint32_t src, dst;
  std::string name;
};

// The route of the case, from the numbering documented in nm_topology.h.
std::vector<Hop> RouteOf(const nm_config& cfg, const Case& c) {
  Hop to_switch{cfg.link.bandwidth_bps, cfg.link.latency_ns, cfg.sw.latency_ns};
  Hop to_host{cfg.link.bandwidth_bps, cfg.link.latency_ns, 0};
  if (c.kind == NM_TOPO_PAIR) return {to_host};
  if (c.kind == NM_TOPO_STAR) return {to_switch, to_host};
  bool same_leaf = c.src / cfg.topology.hosts_per_leaf == c.dst / cfg.topology.hosts_per_leaf;
  if (same_leaf) return {to_switch, to_host};
  return {to_switch, to_switch, to_switch, to_host};
}

nm_config ConfigFor(const Case& c) {
  nm_config cfg = nmtest::Preset(c.preset.c_str());
  cfg.topology.kind = c.kind;
  cfg.topology.hosts = c.kind == NM_TOPO_PAIR ? 2 : 8;
  cfg.topology.hosts_per_leaf = 4;
  cfg.topology.uplinks_per_leaf = 2;
  cfg.sw.buffer_bytes = 0;  // an isolated message never queues behind others anyway
  return cfg;
}

class Exactness : public ::testing::TestWithParam<Case> {};

TEST_P(Exactness, IsolatedMessageTakesTheClosedFormTime) {
  const Case& c = GetParam();
  nm_config cfg = ConfigFor(c);
  nmtest::Sim sim(cfg);
  Done done;
  nm_msglayer* layer;
  ASSERT_EQ(0, nm_msglayer_create(sim.net, Done::Cb, &done, &layer));
  std::vector<Hop> hops = RouteOf(cfg, c);
  nm_time_ns nic = cfg.nic.tx_delay_ns + cfg.nic.rx_delay_ns + 2 * cfg.nic.dma_latency_ns;

  for (uint64_t size : MessageSizes()) {
    std::vector<uint64_t> packets = PacketSizes(size, cfg.link.mtu_bytes, cfg.link.header_bytes);
    nm_time_ns expected = nic + TrainTime(hops, packets);
    uint64_t flow = size * 31 + 5;
    ASSERT_EQ(0, nm_message_send(layer, c.src, c.dst, flow, size, size));
    nm_engine_run_until(sim.engine, NM_TIME_NEVER);
    ASSERT_EQ(1u, done.infos.size()) << "size " << size;
    const nm_message_info& info = done.infos.back();
    EXPECT_EQ(expected, info.completed_at - info.posted_at) << "size " << size;
    EXPECT_EQ(expected, nm_network_message_latency_ns(sim.net, c.src, c.dst, flow, size))
        << "size " << size;
    done.infos.clear();
  }
  nm_network_stats stats;
  nm_network_stats_get(sim.net, &stats);
  EXPECT_EQ(stats.injected, stats.delivered);
  EXPECT_EQ(0u, stats.in_flight);
  nm_msglayer_destroy(layer);
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (const char* preset : {"ideal", "roce-25g", "roce-100g", "ib-hdr-200g", "ib-ndr-400g"}) {
    std::string p = preset;
    std::string id = p;
    std::replace(id.begin(), id.end(), '-', '_');
    cases.push_back({p, NM_TOPO_PAIR, 0, 1, id + "_pair"});
    cases.push_back({p, NM_TOPO_PAIR, 1, 0, id + "_pair_reverse"});
    cases.push_back({p, NM_TOPO_STAR, 2, 7, id + "_star"});
    cases.push_back({p, NM_TOPO_FATTREE, 1, 3, id + "_fattree_same_leaf"});
    cases.push_back({p, NM_TOPO_FATTREE, 1, 6, id + "_fattree_cross_leaf"});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllPresetsAndTopologies, Exactness, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

// Unequal rates: a slow middle hop is the bottleneck, a fast first hop is not. The recurrence
// still gives the exact answer, and so must the simulator and the library's closed form.
TEST(ExactnessHeterogeneous, BottleneckInTheMiddleOfAFatTreePath) {
  nm_config cfg = ConfigFor({"roce-100g", NM_TOPO_FATTREE, 0, 5, ""});
  nmtest::Sim sim(cfg);
  nm_path path;
  ASSERT_EQ(0, nm_network_path(sim.net, 0, 5, 77, &path));
  ASSERT_EQ(4u, path.hop_count);
  // First hop 400 Gb/s, leaf->spine 10 Gb/s, spine->leaf 40 Gb/s, last hop 100 Gb/s.
  const uint64_t rates[] = {400000000000ull, 10000000000ull, 40000000000ull, 100000000000ull};
  std::vector<Hop> hops;
  for (int h = 0; h < 4; h++) {
    nm_link_params link = cfg.link;
    link.bandwidth_bps = rates[h];
    link.latency_ns = 100 + 37 * h;
    nm_error err;
    ASSERT_EQ(0, nm_network_set_port_link(sim.net, path.hops[h].port, &link, &err)) << err.msg;
    hops.push_back({rates[h], link.latency_ns, h < 3 ? cfg.sw.latency_ns : 0});
  }
  Done done;
  nm_msglayer* layer;
  ASSERT_EQ(0, nm_msglayer_create(sim.net, Done::Cb, &done, &layer));
  nm_time_ns nic = cfg.nic.tx_delay_ns + cfg.nic.rx_delay_ns + 2 * cfg.nic.dma_latency_ns;
  for (uint64_t size : MessageSizes()) {
    nm_time_ns expected =
        nic + TrainTime(hops, PacketSizes(size, cfg.link.mtu_bytes, cfg.link.header_bytes));
    ASSERT_EQ(0, nm_message_send(layer, 0, 5, 77, size, 0));
    nm_engine_run_until(sim.engine, NM_TIME_NEVER);
    ASSERT_EQ(1u, done.infos.size());
    EXPECT_EQ(expected, done.infos[0].completed_at - done.infos[0].posted_at) << "size " << size;
    EXPECT_EQ(expected, nm_network_message_latency_ns(sim.net, 0, 5, 77, size)) << "size " << size;
    done.infos.clear();
  }
  nm_msglayer_destroy(layer);
}

// The textbook closed form for equal rates, written out: sum(L + F) + (k - 1) s(full) +
// (H - 1) s(full) + s(last); a second, independent check of the recurrence above.
TEST(ExactnessClosedForm, EqualRatesFormulaAgreesWithTheSimulator) {
  nm_config cfg = ConfigFor({"ib-hdr-200g", NM_TOPO_FATTREE, 0, 7, ""});
  nmtest::Sim sim(cfg);
  Done done;
  nm_msglayer* layer;
  ASSERT_EQ(0, nm_msglayer_create(sim.net, Done::Cb, &done, &layer));
  const uint64_t H = 4;
  const uint64_t mtu = cfg.link.mtu_bytes, hdr = cfg.link.header_bytes;
  for (uint64_t size : {1ull, 4096ull, 4097ull, 1ull << 20, (1ull << 20) + 5}) {
    uint64_t k = size == 0 ? 1 : (size + mtu - 1) / mtu;
    uint64_t last = size - (k - 1) * mtu + hdr;
    uint64_t full = k >= 2 ? mtu + hdr : last;
    nm_time_ns s_full = SerNs(full, cfg.link.bandwidth_bps);
    nm_time_ns expected = H * cfg.link.latency_ns + (H - 1) * cfg.sw.latency_ns +
                          (k - 1) * s_full + (H - 1) * s_full + SerNs(last, cfg.link.bandwidth_bps) +
                          cfg.nic.tx_delay_ns + cfg.nic.rx_delay_ns + 2 * cfg.nic.dma_latency_ns;
    ASSERT_EQ(0, nm_message_send(layer, 0, 7, 1, size, 0));
    nm_engine_run_until(sim.engine, NM_TIME_NEVER);
    ASSERT_EQ(1u, done.infos.size());
    EXPECT_EQ(expected, done.infos[0].completed_at - done.infos[0].posted_at) << "size " << size;
    done.infos.clear();
  }
  nm_msglayer_destroy(layer);
}

TEST(Serialization, RoundsUpPerPacket) {
  EXPECT_EQ(0u, nm_serialization_ns(1000, NM_BANDWIDTH_INFINITE));
  EXPECT_EQ(80u, nm_serialization_ns(1000, 100000000000ull));  // exact
  EXPECT_EQ(1u, nm_serialization_ns(1, 100000000000ull));      // 0.08 ns rounds up to 1
  EXPECT_EQ(3u, nm_serialization_ns(7, 25000000000ull));       // 2.24 ns -> 3
  // Large counts take the 128-bit path and still agree with the test's own formula.
  EXPECT_EQ(SerNs(5000000000ull, 3000000007ull), nm_serialization_ns(5000000000ull, 3000000007ull));
  EXPECT_EQ(SerNs(123457, 3000000007ull), nm_serialization_ns(123457, 3000000007ull));
}

}  // namespace
