// Loss and damage: measured rates within 5 sigma of the configured ones, Gilbert-Elliott burst
// lengths, scripted drops, link down/up, and the independence properties (same seed -> same
// pattern; unrelated traffic and other impairments do not move a flow's pattern).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "netmodel/tests/test_util.h"

namespace {

using nmtest::Collector;
using nmtest::Packet;

// Two hosts back to back with infinite bandwidth: impairments are the only thing going on.
nm_config PairConfig(uint64_t seed) {
  nm_config cfg = nmtest::Preset("ideal");
  cfg.seed = seed;
  cfg.link.latency_ns = 10;
  cfg.topology.kind = NM_TOPO_PAIR;
  cfg.topology.hosts = 2;
  return cfg;
}

// Sends `count` packets of `flow` from host 0 (user_id = index) and returns, per index, whether
// it arrived. `other_flow_every` > 0 interleaves a packet of an unrelated flow every so often.
struct Outcome {
  std::vector<bool> arrived;
  std::vector<uint32_t> flags;
  uint64_t duplicates = 0;
};

Outcome SendFlow(const nm_config& cfg, const nm_impair_params& imp, uint64_t flow, uint32_t count,
            uint32_t other_flow_every = 0) {
  nmtest::Sim sim(cfg);
  nm_error err;
  EXPECT_EQ(0, nm_network_set_port_impairments(sim.net, sim.HostPort(0), &imp, &err)) << err.msg;
  Collector col;
  col.Attach(sim);
  for (uint32_t i = 0; i < count; i++) {
    nm_packet p = Packet(0, 1, flow, 64, i);
    EXPECT_EQ(0, nm_network_inject(sim.net, &p));
    if (other_flow_every && i % other_flow_every == 0) {
      nm_packet q = Packet(0, 1, flow + 1000, 64, UINT64_MAX);
      EXPECT_EQ(0, nm_network_inject(sim.net, &q));
    }
  }
  nm_engine_run_until(sim.engine, NM_TIME_NEVER);
  Outcome out;
  out.arrived.assign(count, false);
  out.flags.assign(count, 0);
  for (const auto& a : col.arrivals) {
    if (a.pkt.flow != flow) continue;
    if (a.pkt.flags & NM_PKT_DUPLICATE) {
      out.duplicates++;
      continue;
    }
    out.arrived[a.pkt.user_id] = true;
    out.flags[a.pkt.user_id] = a.pkt.flags;
  }
  return out;
}

uint64_t CountLost(const Outcome& o) {
  uint64_t n = 0;
  for (bool a : o.arrived) n += !a;
  return n;
}

double FiveSigma(double n, double p) { return 5 * std::sqrt(n * p * (1 - p)); }

TEST(Loss, BernoulliRateWithinFiveSigma) {
  const uint32_t n = 200000;
  for (double p : {0.001, 0.01, 0.2}) {
    nm_impair_params imp{};
    imp.loss_rate = p;
    imp.burst_mean_length = 1;
    Outcome o = SendFlow(PairConfig(1), imp, 5, n);
    EXPECT_NEAR(n * p, static_cast<double>(CountLost(o)), FiveSigma(n, p)) << "p " << p;
  }
}

TEST(Loss, GilbertElliottRateAndMeanBurstLength) {
  const uint32_t n = 400000;
  for (double mean_len : {1.0, 4.0, 10.0}) {
    const double rate = 0.02;
    nm_impair_params imp{};
    imp.burst_loss_rate = rate;
    imp.burst_mean_length = mean_len;
    Outcome o = SendFlow(PairConfig(2), imp, 9, n);
    std::vector<uint64_t> bursts;
    uint64_t run = 0;
    for (bool a : o.arrived) {
      if (!a) {
        run++;
      } else if (run) {
        bursts.push_back(run);
        run = 0;
      }
    }
    if (run) bursts.push_back(run);
    double lost = static_cast<double>(CountLost(o));
    // Loss indicators form a two-state Markov chain with second eigenvalue
    // lambda = 1 - p(G->B) - p(B->G); the variance of the mean is inflated by (1+l)/(1-l).
    double p_bg = 1 / mean_len, p_gb = rate / (mean_len * (1 - rate));
    double lambda = 1 - p_gb - p_bg;
    double inflation = (1 + lambda) / (1 - lambda);
    EXPECT_NEAR(n * rate, lost, FiveSigma(n, rate) * std::sqrt(inflation)) << "L " << mean_len;
    // Burst lengths are geometric on {1, 2, ...} with mean L and variance L (L - 1).
    double mean = lost / bursts.size();
    double sd_mean = std::sqrt(mean_len * (mean_len - 1) / bursts.size());
    EXPECT_NEAR(mean_len, mean, std::max(5 * sd_mean, 1e-9)) << "L " << mean_len;
  }
}

TEST(Loss, GilbertElliottRejectsUnreachableRates) {
  nm_gilbert_elliott ge;
  nm_error err;
  EXPECT_EQ(0, nm_gilbert_elliott_from_rate(0.5, 1.0, &ge, &err));  // L / (L + 1) = 0.5
  EXPECT_EQ(-EINVAL, nm_gilbert_elliott_from_rate(0.6, 1.0, &ge, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "loss.burst_rate"));
  EXPECT_EQ(-EINVAL, nm_gilbert_elliott_from_rate(0.1, 0.5, &ge, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "loss.burst_length"));
}

TEST(Loss, SameSeedSamePatternOtherSeedDifferent) {
  nm_impair_params imp{};
  imp.loss_rate = 0.05;
  imp.burst_loss_rate = 0.02;
  imp.burst_mean_length = 3;
  Outcome a = SendFlow(PairConfig(42), imp, 7, 20000);
  Outcome b = SendFlow(PairConfig(42), imp, 7, 20000);
  Outcome c = SendFlow(PairConfig(43), imp, 7, 20000);
  EXPECT_EQ(a.arrived, b.arrived);
  EXPECT_NE(a.arrived, c.arrived);
}

TEST(Loss, UnrelatedTrafficAndOtherImpairmentsDoNotMoveAFlowsPattern) {
  nm_impair_params imp{};
  imp.loss_rate = 0.03;
  imp.burst_loss_rate = 0.01;
  imp.burst_mean_length = 5;
  Outcome alone = SendFlow(PairConfig(8), imp, 7, 20000);
  Outcome crowded = SendFlow(PairConfig(8), imp, 7, 20000, 3);
  EXPECT_EQ(alone.arrived, crowded.arrived);
  // Turning corruption, duplication and reordering on changes nothing about which packets drop.
  nm_impair_params more = imp;
  more.corrupt_rate = 0.1;
  more.duplicate_rate = 0.1;
  more.reorder_rate = 0.1;
  more.reorder_delay_ns = 1000;
  Outcome damaged = SendFlow(PairConfig(8), more, 7, 20000, 5);
  EXPECT_EQ(alone.arrived, damaged.arrived);
}

TEST(Loss, CorruptionDuplicationAndReorderingRates) {
  const uint32_t n = 100000;
  nm_impair_params imp{};
  imp.burst_mean_length = 1;
  imp.corrupt_rate = 0.05;
  imp.duplicate_rate = 0.02;
  imp.reorder_rate = 0.1;
  imp.reorder_delay_ns = 500;
  Outcome o = SendFlow(PairConfig(3), imp, 11, n);
  EXPECT_EQ(0u, CountLost(o));
  uint64_t corrupted = 0, delayed = 0;
  for (uint32_t f : o.flags) {
    corrupted += (f & NM_PKT_CORRUPTED) != 0;
    delayed += (f & NM_PKT_DELAYED) != 0;
  }
  EXPECT_NEAR(n * 0.05, corrupted, FiveSigma(n, 0.05));
  EXPECT_NEAR(n * 0.02, o.duplicates, FiveSigma(n, 0.02));
  EXPECT_NEAR(n * 0.1, delayed, FiveSigma(n, 0.1));
}

TEST(Loss, ReorderedPacketsArriveLaterThanTheirSuccessors) {
  nm_config cfg = PairConfig(4);
  cfg.link.bandwidth_bps = 10000000000ull;  // 64 B = 51.2 -> 52 ns apart
  nmtest::Sim sim(cfg);
  nm_impair_params imp{};
  imp.burst_mean_length = 1;
  imp.reorder_rate = 0.2;
  imp.reorder_delay_ns = 1000;
  nm_error err;
  ASSERT_EQ(0, nm_network_set_port_impairments(sim.net, sim.HostPort(0), &imp, &err));
  Collector col;
  col.Attach(sim);
  for (uint32_t i = 0; i < 1000; i++) {
    nm_packet p = Packet(0, 1, 1, 64, i);
    ASSERT_EQ(0, nm_network_inject(sim.net, &p));
  }
  nm_engine_run_until(sim.engine, NM_TIME_NEVER);
  ASSERT_EQ(1000u, col.arrivals.size());
  uint64_t inversions = 0;
  for (size_t i = 0; i < col.arrivals.size(); i++) {
    const auto& a = col.arrivals[i];
    nm_time_ns sent_end = 52 * (a.pkt.user_id + 1);
    nm_time_ns expected = sent_end + 10 + ((a.pkt.flags & NM_PKT_DELAYED) ? 1000 : 0);
    EXPECT_EQ(expected, a.time);
    if (i && a.pkt.user_id < col.arrivals[i - 1].pkt.user_id) inversions++;
  }
  EXPECT_GT(inversions, 0u);
}

TEST(Loss, ScriptedDropRemovesExactlyTheNthPacketOfTheFlow) {
  nm_config cfg = PairConfig(0);
  cfg.drop_count = 2;
  cfg.drops[0] = {7, 5};
  cfg.drops[1] = {7, 9};
  nmtest::Sim sim(cfg);
  Collector col;
  col.Attach(sim);
  for (uint32_t i = 0; i < 12; i++) {
    nm_packet p7 = Packet(0, 1, 7, 64, i), p8 = Packet(0, 1, 8, 64, i);
    ASSERT_EQ(0, nm_network_inject(sim.net, &p8));
    ASSERT_EQ(0, nm_network_inject(sim.net, &p7));
  }
  // And programmatically on the reverse direction: the 2nd packet of flow 3.
  ASSERT_EQ(0, nm_network_add_scripted_drop(sim.net, sim.HostPort(1), 3, 2));
  for (uint32_t i = 0; i < 3; i++) {
    nm_packet p = Packet(1, 0, 3, 64, i);
    ASSERT_EQ(0, nm_network_inject(sim.net, &p));
  }
  nm_engine_run_until(sim.engine, NM_TIME_NEVER);
  std::vector<uint64_t> got7, got8, got3;
  for (const auto& a : col.arrivals)
    (a.pkt.flow == 7 ? got7 : a.pkt.flow == 8 ? got8 : got3).push_back(a.pkt.user_id);
  EXPECT_EQ((std::vector<uint64_t>{0, 1, 2, 3, 5, 6, 7, 9, 10, 11}), got7);  // 5th, 9th gone
  EXPECT_EQ(12u, got8.size());
  EXPECT_EQ((std::vector<uint64_t>{0, 2}), got3);
  nm_network_stats st;
  nm_network_stats_get(sim.net, &st);
  EXPECT_EQ(3u, st.dropped[NM_DROP_SCRIPTED]);
}

TEST(Loss, PacketsSentWhileTheLinkIsDownAreLost) {
  // 1 packet per 100 ns (80 B at 6.4 Gb/s); link down from 1000 to 2000 ns. A packet is lost
  // when its last bit leaves while the link is down: ends at 100 (k+1) for packet k, so
  // packets 9..18 (ending 1000..1900) are lost, packet 19 (ending 2000) survives.
  nm_config cfg = PairConfig(0);
  cfg.link.bandwidth_bps = 6400000000ull;
  cfg.fault_count = 1;
  cfg.faults[0] = {0, 1000, 2000};
  nmtest::Sim sim(cfg);
  Collector col;
  col.Attach(sim);
  for (uint32_t i = 0; i < 30; i++) {
    nm_packet p = Packet(0, 1, 1, 80, i);
    ASSERT_EQ(0, nm_network_inject(sim.net, &p));
  }
  nm_engine_run_until(sim.engine, NM_TIME_NEVER);
  std::vector<uint64_t> got;
  for (const auto& a : col.arrivals) got.push_back(a.pkt.user_id);
  std::vector<uint64_t> expected;
  for (uint64_t i = 0; i < 30; i++)
    if (i < 9 || i > 18) expected.push_back(i);
  EXPECT_EQ(expected, got);
  EXPECT_TRUE(nm_network_link_is_up(sim.net, 0));
  nm_network_stats st;
  nm_network_stats_get(sim.net, &st);
  EXPECT_EQ(10u, st.dropped[NM_DROP_LINK_DOWN]);
}

}  // namespace
