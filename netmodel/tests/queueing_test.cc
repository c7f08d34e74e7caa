// Queueing at a switch egress port: FIFO drain order, total throughput equal to the port rate,
// tail drop, pause and credits with finite buffers, ECN marking. Small cases are checked against
// schedules worked out by hand in the comments; large ones against a reference FIFO model.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "netmodel/tests/test_util.h"

namespace {

using nmtest::Collector;
using nmtest::Packet;
using nmtest::SerNs;

// A star of `hosts` hosts where a 100-byte packet takes exactly 100 ns (8 Gb/s), links take
// 50 ns and the switch 30 ns: a packet injected at 0 enters the egress queue at
// a = 100 + 50 + 30 = 180.
nm_config StarConfig(uint32_t hosts, nm_flow_control fc, uint64_t buffer_bytes) {
  nm_config cfg = nmtest::Preset("ideal");
  cfg.topology.kind = NM_TOPO_STAR;
  cfg.topology.hosts = hosts;
  cfg.link.bandwidth_bps = 8000000000ull;
  cfg.link.latency_ns = 50;
  cfg.link.mtu_bytes = 100;
  cfg.link.header_bytes = 0;
  cfg.sw.latency_ns = 30;
  cfg.sw.flow_control = fc;
  cfg.sw.buffer_bytes = buffer_bytes;
  return cfg;
}

TEST(Queueing, SimultaneousArrivalsDrainInNodeOrderOneSerializationApart) {
  nm_config cfg = StarConfig(4, NM_FLOW_CONTROL_DROP, 0);
  nmtest::Sim sim(cfg);
  Collector col;
  col.Attach(sim);
  // Inject in reverse host order: arrival order at the switch is fixed by node id, not by this.
  for (uint32_t src : {2u, 1u, 0u}) {
    nm_packet p = Packet(src, 3, src, 100);
    ASSERT_EQ(0, nm_network_inject(sim.net, &p));
  }
  nm_engine_run_until(sim.engine, NM_TIME_NEVER);
  // All three enter the queue at 180. Departures: 180-280, 280-380, 380-480; +50 ns link.
  ASSERT_EQ(3u, col.arrivals.size());
  EXPECT_EQ(0u, col.arrivals[0].pkt.src);
  EXPECT_EQ(330u, col.arrivals[0].time);
  EXPECT_EQ(1u, col.arrivals[1].pkt.src);
  EXPECT_EQ(430u, col.arrivals[1].time);
  EXPECT_EQ(2u, col.arrivals[2].pkt.src);
  EXPECT_EQ(530u, col.arrivals[2].time);
}

TEST(Queueing, TailDropKeepsWhatFitsInTheBuffer) {
  // Buffer of 3 packets (counting the one being sent); 5 arrive together at 180.
  nm_config cfg = StarConfig(6, NM_FLOW_CONTROL_DROP, 300);
  nmtest::Sim sim(cfg);
  Collector col;
  col.Attach(sim);
  std::vector<nm_trace_record> drops;
  nm_network_set_trace(
      sim.net,
      [](void* ctx, const nm_trace_record* r) {
        if (r->kind == NM_TRACE_DROP) static_cast<std::vector<nm_trace_record>*>(ctx)->push_back(*r);
      },
      &drops);
  for (uint32_t src = 0; src < 5; src++) {
    nm_packet p = Packet(src, 5, src, 100);
    ASSERT_EQ(0, nm_network_inject(sim.net, &p));
  }
  nm_engine_run_until(sim.engine, NM_TIME_NEVER);
  ASSERT_EQ(3u, col.arrivals.size());
  for (uint32_t i = 0; i < 3; i++) {
    EXPECT_EQ(i, col.arrivals[i].pkt.src);
    EXPECT_EQ(330u + 100 * i, col.arrivals[i].time);
  }
  ASSERT_EQ(2u, drops.size());
  uint32_t egress = nm_topology_port_id(nm_network_topology(sim.net), 6, 5);
  for (const auto& d : drops) {
    EXPECT_EQ(NM_DROP_BUFFER, d.reason);
    EXPECT_EQ(egress, d.port);
    EXPECT_EQ(180u, d.time);
  }
  nm_network_stats stats;
  nm_network_stats_get(sim.net, &stats);
  EXPECT_EQ(2u, stats.dropped[NM_DROP_BUFFER]);
  nm_port_stats ps;
  ASSERT_EQ(0, nm_network_port_stats_get(sim.net, egress, &ps));
  EXPECT_EQ(300u, ps.peak_queued_bytes);
  EXPECT_EQ(0u, ps.queued_bytes);
}

TEST(Queueing, PauseHoldsUpstreamUntilSpaceIsFreedAndLosesNothing) {
  // Same as above in pause mode. Hosts 0-2 reserve space at 0 and send; hosts 3 and 4 pause.
  // Egress: p0 180-280, p1 280-380, p2 380-480.
  // p0 leaving at 280 frees room: host 3 sends 280-380, enters the queue at 460, egress busy
  // until 480 -> p3 480-580. p1 leaving at 380 frees room: host 4 sends 380-480, enters at 560
  // -> p4 580-680. Deliveries 50 ns after each departure.
  nm_config cfg = StarConfig(6, NM_FLOW_CONTROL_PAUSE, 300);
  nmtest::Sim sim(cfg);
  Collector col;
  col.Attach(sim);
  for (uint32_t src = 0; src < 5; src++) {
    nm_packet p = Packet(src, 5, src, 100);
    ASSERT_EQ(0, nm_network_inject(sim.net, &p));
  }
  nm_engine_run_until(sim.engine, NM_TIME_NEVER);
  ASSERT_EQ(5u, col.arrivals.size());
  const nm_time_ns expected[] = {330, 430, 530, 630, 730};
  for (uint32_t i = 0; i < 5; i++) {
    EXPECT_EQ(i, col.arrivals[i].pkt.src);
    EXPECT_EQ(expected[i], col.arrivals[i].time) << "packet " << i;
  }
  nm_network_stats stats;
  nm_network_stats_get(sim.net, &stats);
  for (int r = 0; r < NM_DROP_REASON_COUNT; r++) EXPECT_EQ(0u, stats.dropped[r]);
  nm_port_stats ps;
  ASSERT_EQ(0, nm_network_port_stats_get(sim.net, sim.HostPort(3), &ps));
  EXPECT_EQ(1u, ps.pauses);
  ASSERT_EQ(0, nm_network_port_stats_get(sim.net, sim.HostPort(0), &ps));
  EXPECT_EQ(0u, ps.pauses);
}

// Credits: a buffer of 200 bytes for each link into the switch, held by the transmitter. Host 0
// sends three packets to host 2 at 0.
// p1: host 0 sends 0-100 (credits 200 -> 100), enters the switch's queue at 180, leaves it
//     180-280: its credits are back at host 0 50 ns later, at 330; delivered at 330.
// p2: host 0 sends 100-200 (credits 0), enters at 280 as p1 leaves, leaves 280-380; delivered 430.
// p3: at 200 host 0 has no credits: it pauses until 330, sends 330-430, enters at 510, leaves
//     510-610; delivered 660. (With pause mode or no limit it would have left at 200.)
TEST(Queueing, CreditsComeBackOneLinkLatencyAfterThePacketLeft) {
  nm_config cfg = StarConfig(3, NM_FLOW_CONTROL_CREDIT, 200);
  nmtest::Sim sim(cfg);
  Collector col;
  col.Attach(sim);
  std::vector<nm_trace_record> flow;
  nm_network_set_trace(
      sim.net,
      [](void* ctx, const nm_trace_record* r) {
        if (r->kind == NM_TRACE_PAUSE || r->kind == NM_TRACE_RESUME)
          static_cast<std::vector<nm_trace_record>*>(ctx)->push_back(*r);
      },
      &flow);
  for (uint64_t id = 1; id <= 3; id++) {
    nm_packet p = Packet(0, 2, 1, 100, id);
    ASSERT_EQ(0, nm_network_inject(sim.net, &p));
  }
  nm_engine_run_until(sim.engine, NM_TIME_NEVER);
  ASSERT_EQ(3u, col.arrivals.size());
  const nm_time_ns expected[] = {330, 430, 660};
  for (uint32_t i = 0; i < 3; i++) {
    EXPECT_EQ(i + 1, col.arrivals[i].pkt.user_id);
    EXPECT_EQ(expected[i], col.arrivals[i].time) << "packet " << i + 1;
  }
  ASSERT_EQ(2u, flow.size());
  EXPECT_EQ(NM_TRACE_PAUSE, flow[0].kind);
  EXPECT_EQ(200u, flow[0].time);
  EXPECT_EQ(NM_TRACE_RESUME, flow[1].kind);
  EXPECT_EQ(330u, flow[1].time);
  EXPECT_EQ(sim.HostPort(0), flow[1].port);
  nm_port_stats ps;
  ASSERT_EQ(0, nm_network_port_stats_get(sim.net, sim.HostPort(0), &ps));
  EXPECT_EQ(1u, ps.pauses);
}

// Five hosts send ten packets each to one: nothing is lost, each source's packets arrive in order,
// and the egress queue never holds more than the five links' buffers.
TEST(Queueing, CreditsLoseNothingInAnIncast) {
  nm_config cfg = StarConfig(6, NM_FLOW_CONTROL_CREDIT, 200);
  nmtest::Sim sim(cfg);
  Collector col;
  col.Attach(sim);
  for (uint64_t k = 0; k < 10; k++)
    for (uint32_t src = 0; src < 5; src++) {
      nm_packet p = Packet(src, 5, src, 100, src * 100 + k);
      ASSERT_EQ(0, nm_network_inject(sim.net, &p));
    }
  nm_engine_run_until(sim.engine, NM_TIME_NEVER);
  ASSERT_EQ(50u, col.arrivals.size());
  std::map<uint32_t, uint64_t> next;
  for (const auto& a : col.arrivals) {
    EXPECT_EQ(a.pkt.src * 100 + next[a.pkt.src], a.pkt.user_id);
    next[a.pkt.src]++;
  }
  nm_network_stats stats;
  nm_network_stats_get(sim.net, &stats);
  for (int r = 0; r < NM_DROP_REASON_COUNT; r++) EXPECT_EQ(0u, stats.dropped[r]);
  EXPECT_EQ(0u, stats.in_flight);
  nm_port_stats ps;
  uint32_t egress = nm_topology_port_id(nm_network_topology(sim.net), 6, 5);
  ASSERT_EQ(0, nm_network_port_stats_get(sim.net, egress, &ps));
  EXPECT_LE(ps.peak_queued_bytes, 5u * 200);
  EXPECT_GT(ps.peak_queued_bytes, 200u);  // more than one link's buffer: they are per link
  uint64_t pauses = 0;
  for (uint32_t src = 0; src < 5; src++) {
    ASSERT_EQ(0, nm_network_port_stats_get(sim.net, sim.HostPort(src), &ps));
    pauses += ps.pauses;
  }
  EXPECT_GT(pauses, 0u);
}

// A packet lost on its way to the switch never took room there: its credits come back at once,
// or the link would run out of them.
TEST(Queueing, CreditsOfPacketsLostOnTheWayComeBack) {
  nm_config cfg = StarConfig(3, NM_FLOW_CONTROL_CREDIT, 200);
  nmtest::Sim sim(cfg);
  nm_impair_params lossy{};
  lossy.loss_rate = 1.0;
  lossy.burst_mean_length = 1;
  nm_error err;
  ASSERT_EQ(0, nm_network_set_port_impairments(sim.net, sim.HostPort(0), &lossy, &err)) << err.msg;
  for (uint64_t id = 1; id <= 10; id++) {
    nm_packet p = Packet(0, 2, 1, 100, id);
    ASSERT_EQ(0, nm_network_inject(sim.net, &p));
  }
  nm_engine_run_until(sim.engine, NM_TIME_NEVER);
  nm_network_stats stats;
  nm_network_stats_get(sim.net, &stats);
  EXPECT_EQ(10u, stats.dropped[NM_DROP_LOSS]);
  EXPECT_EQ(0u, stats.in_flight);
  nm_port_stats ps;
  ASSERT_EQ(0, nm_network_port_stats_get(sim.net, sim.HostPort(0), &ps));
  EXPECT_EQ(0u, ps.pauses);
  EXPECT_EQ(10u, ps.tx_packets);
}

TEST(Queueing, CreditsRefuseABufferSmallerThanAPacket) {
  nm_config cfg = StarConfig(3, NM_FLOW_CONTROL_CREDIT, 150);  // a packet may be 100 + 64 B
  nm_engine* engine = nullptr;
  nm_network* net = nullptr;
  nm_error err;
  ASSERT_EQ(0, nm_engine_create(&engine));
  EXPECT_EQ(-EINVAL, nm_network_create(engine, &cfg, &net, &err));
  EXPECT_NE(std::string(err.msg).find("switch.buffer_bytes"), std::string::npos) << err.msg;
  cfg.sw.buffer_bytes = 0;  // unlimited: no credits needed
  ASSERT_EQ(0, nm_network_create(engine, &cfg, &net, &err)) << err.msg;
  nm_network_destroy(net);
  nm_engine_destroy(engine);
}

TEST(Queueing, EcnMarksPacketsThatFindTheQueueAboveThreshold) {
  // Threshold 200 bytes: of five simultaneous arrivals, the 3rd, 4th and 5th find 200, 300 and
  // 400 bytes queued.
  nm_config cfg = StarConfig(6, NM_FLOW_CONTROL_DROP, 0);
  cfg.sw.ecn_threshold_bytes = 200;
  nmtest::Sim sim(cfg);
  Collector col;
  col.Attach(sim);
  for (uint32_t src = 0; src < 5; src++) {
    nm_packet p = Packet(src, 5, src, 100);
    ASSERT_EQ(0, nm_network_inject(sim.net, &p));
  }
  nm_engine_run_until(sim.engine, NM_TIME_NEVER);
  ASSERT_EQ(5u, col.arrivals.size());
  for (uint32_t i = 0; i < 5; i++)
    EXPECT_EQ(i >= 2, (col.arrivals[i].pkt.flags & NM_PKT_ECN) != 0) << "packet " << i;
}

// Reference model of one FIFO port fed by packets that become ready at known times (ties broken
// by the sender's node id, then by the sender's own order): departure = max(ready,
// previous departure) + serialization.
struct RefPacket {
  nm_time_ns ready;
  uint32_t src;
  uint32_t seq;
  uint32_t bytes;
  nm_time_ns delivered;
};

TEST(Queueing, RandomIncastMatchesAReferenceFifoSchedule) {
  const uint32_t senders = 4;
  nm_config cfg = StarConfig(senders + 1, NM_FLOW_CONTROL_DROP, 0);
  nmtest::Sim sim(cfg);
  Collector col;
  col.Attach(sim);
  std::mt19937_64 rng(2024);
  std::vector<RefPacket> ref;
  // Each sender injects a burst of random sizes at one random time; its own port serializes
  // them back to back, so each packet's arrival at the egress queue is known in closed form.
  for (uint32_t src = 0; src < senders; src++) {
    nm_time_ns start = rng() % 2000, host_free = start;
    for (uint32_t seq = 0; seq < 50; seq++) {
      uint32_t bytes = 1 + rng() % 100;
      host_free += SerNs(bytes, cfg.link.bandwidth_bps);
      ref.push_back({host_free + 50 + 30, src, seq, bytes, 0});
    }
  }
  // Inject through engine events at each sender's start time.
  struct Inject {
    nm_network* net;
    std::vector<RefPacket>* ref;
    uint32_t src;
  };
  std::vector<Inject> injects;
  injects.reserve(senders);
  for (uint32_t src = 0; src < senders; src++) {
    injects.push_back({sim.net, &ref, src});
    nm_time_ns start = ref[src * 50].ready - 80 - SerNs(ref[src * 50].bytes, cfg.link.bandwidth_bps);
    nm_engine_schedule(
        sim.engine, start, src,
        [](nm_engine*, void* ctx, uint64_t) {
          auto* in = static_cast<Inject*>(ctx);
          for (uint32_t seq = 0; seq < 50; seq++) {
            const RefPacket& r = (*in->ref)[in->src * 50 + seq];
            nm_packet p = Packet(in->src, 4, in->src, r.bytes, seq);
            nm_network_inject(in->net, &p);
          }
        },
        &injects.back(), 0, nullptr);
  }
  nm_engine_run_until(sim.engine, NM_TIME_NEVER);

  std::vector<RefPacket> order = ref;
  std::sort(order.begin(), order.end(), [](const RefPacket& a, const RefPacket& b) {
    return std::tie(a.ready, a.src, a.seq) < std::tie(b.ready, b.src, b.seq);
  });
  nm_time_ns free_at = 0;
  for (auto& r : order) {
    free_at = std::max(free_at, r.ready) + SerNs(r.bytes, cfg.link.bandwidth_bps);
    r.delivered = free_at + 50;
  }
  ASSERT_EQ(order.size(), col.arrivals.size());
  for (size_t i = 0; i < order.size(); i++) {
    EXPECT_EQ(order[i].src, col.arrivals[i].pkt.src) << i;
    EXPECT_EQ(order[i].seq, col.arrivals[i].pkt.user_id) << i;
    EXPECT_EQ(order[i].delivered, col.arrivals[i].time) << i;
  }
}

TEST(Queueing, SaturatedPortDeliversAtExactlyItsRate) {
  // 8 senders flood one receiver through a 25 Gb/s star; once the egress starts it never idles,
  // so the last delivery is first-enqueue + sum of serializations + link latency.
  nm_config cfg = nmtest::Preset("roce-25g");
  cfg.topology.kind = NM_TOPO_STAR;
  cfg.topology.hosts = 9;
  cfg.sw.buffer_bytes = 0;
  nmtest::Sim sim(cfg);
  Collector col;
  col.Attach(sim);
  const uint32_t per_sender = 2000, bytes = cfg.link.mtu_bytes + cfg.link.header_bytes;
  for (uint32_t i = 0; i < per_sender; i++)
    for (uint32_t src = 0; src < 8; src++) {
      nm_packet p = Packet(src, 8, src, bytes, i);
      ASSERT_EQ(0, nm_network_inject(sim.net, &p));
    }
  nm_engine_run_until(sim.engine, NM_TIME_NEVER);
  ASSERT_EQ(8u * per_sender, col.arrivals.size());
  nm_time_ns s = SerNs(bytes, cfg.link.bandwidth_bps);
  nm_time_ns first_enqueue = s + cfg.link.latency_ns + cfg.sw.latency_ns;
  EXPECT_EQ(first_enqueue + 8ull * per_sender * s + cfg.link.latency_ns, col.arrivals.back().time);
  // Throughput over the busy period equals the port rate to within one rounding per packet.
  double busy_s = (col.arrivals.back().time - cfg.link.latency_ns - first_enqueue) * 1e-9;
  double gbps = 8.0 * bytes * 8 * per_sender / busy_s / 1e9;
  EXPECT_NEAR(25.0, gbps, 25.0 * 1e-3);
  // FIFO fairness: every sender gets one slot per round (arrivals interleave 0..7).
  for (size_t i = 0; i < 64; i++) EXPECT_EQ(i % 8, col.arrivals[i].pkt.src);
}

TEST(Queueing, FatTreeIncastConservesPacketsAndNeverBeatsTheBottleneck) {
  for (nm_flow_control fc : {NM_FLOW_CONTROL_DROP, NM_FLOW_CONTROL_PAUSE}) {
    nm_config cfg = nmtest::Preset("roce-100g");
    cfg.topology = {NM_TOPO_FATTREE, 32, 8, 4};
    cfg.sw.flow_control = fc;
    cfg.sw.buffer_bytes = 64 * 1024;
    nmtest::Sim sim(cfg);
    Collector col;
    col.Attach(sim);
    uint32_t bytes = cfg.link.mtu_bytes + cfg.link.header_bytes;
    uint64_t injected = 0;
    for (uint32_t i = 0; i < 200; i++)
      for (uint32_t src = 1; src < 32; src++) {
        nm_packet p = Packet(src, 0, src * 1000 + i % 3, bytes, i);
        ASSERT_EQ(0, nm_network_inject(sim.net, &p));
        injected++;
      }
    nm_engine_run_until(sim.engine, NM_TIME_NEVER);
    nm_network_stats st;
    nm_network_stats_get(sim.net, &st);
    uint64_t dropped = 0;
    for (int r = 0; r < NM_DROP_REASON_COUNT; r++) dropped += st.dropped[r];
    EXPECT_EQ(injected, st.delivered + dropped);
    EXPECT_EQ(0u, st.in_flight);
    if (fc == NM_FLOW_CONTROL_PAUSE) {
      EXPECT_EQ(0u, dropped);
    } else {
      EXPECT_GT(st.dropped[NM_DROP_BUFFER], 0u);
    }
    // Deliveries to host 0 are at least one serialization apart: its link is the bottleneck.
    nm_time_ns s = SerNs(bytes, cfg.link.bandwidth_bps);
    for (size_t i = 1; i < col.arrivals.size(); i++)
      ASSERT_GE(col.arrivals[i].time - col.arrivals[i - 1].time, s);
  }
}

}  // namespace
