// Coasting (forward.c): a packet with nothing to decide at the end of its transmission has its
// arrival downstream scheduled when it starts, and no event of its own at its end. (Random
// networks with changes of every kind: coasting_random_test.cc.) Tracing
// NM_TRACE_TX_END turns it off, which gives the event-per-step machine to compare with: every
// test runs a scenario both ways and expects the same arrivals at the same nanoseconds, the same
// losses, marks and pauses, and the same counters.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <tuple>
#include <string>
#include <vector>

#include "netmodel/tests/coasting_util.h"

namespace {

using nmtest::Arrival;
using nmtest::Collector;
using nmtest::Packet;

struct Outcome {
  std::vector<Arrival> arrivals;
  nm_network_stats net;
  std::vector<nm_port_stats> ports;
  uint64_t events;
};

void NoTrace(void*, const nm_trace_record*) {}

struct Injection {
  nm_network* net;
  nm_packet pkt;
};

void InjectEvent(nm_engine*, void* ctx, uint64_t) {
  auto* in = static_cast<Injection*>(ctx);
  ASSERT_EQ(0, nm_network_inject(in->net, &in->pkt));
}

// Runs `packets` (injected at their times, from engine events ordered by source as the NIC
// model's are) with `extra` scheduling whatever else the scenario needs; `per_step` forces an
// event at the end of every transmission.
Outcome RunScenario(const nm_config& cfg, const std::vector<std::pair<nm_time_ns, nm_packet>>& packets,
            bool per_step, const std::function<void(nmtest::Sim&)>& extra = nullptr) {
  nmtest::Sim sim(cfg);
  Collector col;
  col.Attach(sim);
  if (per_step) {
    nm_network_set_trace(sim.net, NoTrace, nullptr);
    nm_network_set_trace_mask(sim.net, 1u << NM_TRACE_TX_END);
  }
  std::vector<Injection> injections;
  injections.reserve(packets.size());
  for (const auto& [at, pkt] : packets) {
    injections.push_back({sim.net, pkt});
    EXPECT_EQ(0, nm_engine_schedule(sim.engine, at, pkt.src, InjectEvent, &injections.back(), 0,
                                    nullptr));
  }
  if (extra) extra(sim);
  nm_engine_run_until(sim.engine, NM_TIME_NEVER);
  Outcome out;
  out.arrivals = col.arrivals;
  nm_network_stats_get(sim.net, &out.net);
  const nm_topology* topo = nm_network_topology(sim.net);
  for (uint32_t id = 0; id < topo->port_count; id++) {
    nm_port_stats ps;
    EXPECT_EQ(0, nm_network_port_stats_get(sim.net, id, &ps));
    out.ports.push_back(ps);
  }
  out.events = nm_engine_events_run(sim.engine);
  return out;
}

void ExpectSame(const Outcome& coasting, const Outcome& per_step) {
  nmtest::ExpectSameArrivals(coasting.arrivals, per_step.arrivals);
  nmtest::ExpectSameCounters(coasting.net, per_step.net);
  nmtest::ExpectSamePorts(coasting.ports, per_step.ports);
}

// 8 Gb/s links: a 100-byte packet takes 100 ns; links 50 ns, switches 30 ns.
nm_config Config(nm_topology_kind kind, nm_flow_control fc) {
  return nmtest::SmallNetwork({kind, 16, 8000000000ull, 50, 30, fc, 3000, 1500});
}

// Bursts of 100 packets within 2 us, every 20 us, between random hosts: queues build up and
// drain. Sizes and times in steps of 100 bytes (100 ns) so that arrivals, departures and starts
// often fall on the same nanosecond: the ties are where an order of events could show.
std::vector<std::pair<nm_time_ns, nm_packet>> Workload(uint64_t seed, uint32_t hosts) {
  std::mt19937_64 rng(seed);
  std::vector<std::pair<nm_time_ns, nm_packet>> out;
  for (uint64_t id = 1; id <= 3000; id++) {
    uint32_t src = rng() % hosts, dst = rng() % (hosts - 1);
    if (dst >= src) dst++;
    nm_time_ns at = (rng() % 20) * 100 + (id / 100) * 20000;
    out.push_back({at, Packet(src, dst, src * hosts + dst, 100 * (1 + rng() % 10), id)});
  }
  return out;
}

struct Case {
  const char* name;
  nm_topology_kind kind;
  nm_flow_control fc;
};

class CoastingOnCongestedNetworks : public ::testing::TestWithParam<Case> {};

TEST_P(CoastingOnCongestedNetworks, GivesTheSameTimesLossesMarksAndCounters) {
  const Case& c = GetParam();
  nm_config cfg = Config(c.kind, c.fc);
  for (uint64_t seed = 1; seed <= 20; seed++) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto packets = Workload(seed, 16);
    Outcome coasting = RunScenario(cfg, packets, false);
    Outcome per_step = RunScenario(cfg, packets, true);
    ExpectSame(coasting, per_step);
    // The scenario bites, and coasting happened.
    EXPECT_GT(per_step.net.ecn_marked, 0u);
    if (c.fc == NM_FLOW_CONTROL_DROP) {
      EXPECT_GT(per_step.net.dropped[NM_DROP_BUFFER], 0u);
    } else {
      uint64_t pauses = 0;
      for (const auto& p : per_step.ports) pauses += p.pauses;
      EXPECT_GT(pauses, 0u);
    }
    EXPECT_LT(coasting.events, per_step.events);
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, CoastingOnCongestedNetworks,
    ::testing::Values(Case{"StarTailDrop", NM_TOPO_STAR, NM_FLOW_CONTROL_DROP},
                      Case{"StarPause", NM_TOPO_STAR, NM_FLOW_CONTROL_PAUSE},
                      Case{"StarCredit", NM_TOPO_STAR, NM_FLOW_CONTROL_CREDIT},
                      Case{"FatTreeTailDrop", NM_TOPO_FATTREE, NM_FLOW_CONTROL_DROP},
                      Case{"FatTreePause", NM_TOPO_FATTREE, NM_FLOW_CONTROL_PAUSE},
                      Case{"FatTreeCredit", NM_TOPO_FATTREE, NM_FLOW_CONTROL_CREDIT}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

uint32_t LinkOf(nmtest::Sim& sim, uint32_t port) {
  return nm_network_topology(sim.net)->ports[port].link;
}

// One 1000-byte packet from host 0 to host 1 of a star: it leaves host 0 from 0 to 1000, is in
// the switch's egress from 1080 to 2080, arrives at 2130.
std::vector<std::pair<nm_time_ns, nm_packet>> OnePacket() {
  return {{0, Packet(0, 1, 1, 1000, 7)}};
}

// Coasting takes the ends of both transmissions out; with no record of the switch wanted, the
// packet also passes through the switch with no event for its arrival there.
TEST(Coasting, AlonePacketArrivesOnTimeWithTwoEventsFewerAndThreeWhenItPassesThrough) {
  nm_config cfg = Config(NM_TOPO_STAR, NM_FLOW_CONTROL_PAUSE);
  Outcome passing = RunScenario(cfg, OnePacket(), false);
  Outcome coasting = RunScenario(cfg, OnePacket(), false, [](nmtest::Sim& sim) {
    nm_network_set_trace(sim.net, NoTrace, nullptr);
    nm_network_set_trace_mask(sim.net, 1u << NM_TRACE_ENQUEUE);
  });
  Outcome per_step = RunScenario(cfg, OnePacket(), true);
  ExpectSame(coasting, per_step);
  ExpectSame(passing, per_step);
  ASSERT_EQ(1u, coasting.arrivals.size());
  EXPECT_EQ(2130u, coasting.arrivals[0].time);
  EXPECT_EQ(per_step.events - 2, coasting.events);
  EXPECT_EQ(per_step.events - 3, passing.events);
}

// The link goes down, or down and up again, while the packet is being sent on either hop: it
// is lost exactly when the event-per-step machine loses it (a link is looked at when the last
// bit leaves). Changes at that very nanosecond: AChangeAtTheInstantTheLastBitLeaves... below.
TEST(Coasting, ALinkThatChangesDuringTheTransmissionDecidesAsWithoutCoasting) {
  nm_config cfg = Config(NM_TOPO_STAR, NM_FLOW_CONTROL_PAUSE);
  struct Change {
    uint32_t host;  // whose link
    nm_time_ns down, up;  // up == 0: stays down
    bool delivered;
  };
  const Change changes[] = {
      {0, 500, 0, false},     // host 0's link, during the first hop
      {0, 500, 900, true},    // ... back before the last bit left
      {0, 1001, 0, true},     // ... just after the last bit left: it is on the wire
      {1, 1500, 0, false},    // host 1's link, during the second hop
      {1, 1500, 2000, true},  // ... back in time
      {1, 2100, 0, true},     // ... after the last bit left: it is on the wire
  };
  for (const Change& ch : changes) {
    SCOPED_TRACE("host " + std::to_string(ch.host) + " down at " + std::to_string(ch.down));
    auto extra = [&](nmtest::Sim& sim) {
      uint32_t link = LinkOf(sim, sim.HostPort(ch.host));
      ASSERT_EQ(0, nm_network_schedule_link_state(sim.net, link, ch.down, false));
      if (ch.up) ASSERT_EQ(0, nm_network_schedule_link_state(sim.net, link, ch.up, true));
    };
    Outcome coasting = RunScenario(cfg, OnePacket(), false, extra);
    Outcome per_step = RunScenario(cfg, OnePacket(), true, extra);
    ExpectSame(coasting, per_step);
    EXPECT_EQ(ch.delivered ? 1u : 0u, coasting.arrivals.size());
    EXPECT_EQ(ch.delivered ? 0u : 1u, coasting.net.dropped[NM_DROP_LINK_DOWN]);
  }
}

struct Impair {
  nmtest::Sim* sim;
  uint32_t port;
};

void LoseEverything(nm_engine*, void* ctx, uint64_t) {
  auto* in = static_cast<Impair*>(ctx);
  nm_impair_params params{};
  params.loss_rate = 1.0;
  params.burst_mean_length = 1;
  nm_error err;
  ASSERT_EQ(0, nm_network_set_port_impairments(in->sim->net, in->port, &params, &err)) << err.msg;
}

// Loss switched on for the switch's port toward host 1 while the packet crosses it: its fate is
// decided when its last bit leaves, as without coasting.
TEST(Coasting, ImpairmentsSetDuringTheTransmissionApplyToIt) {
  nm_config cfg = Config(NM_TOPO_STAR, NM_FLOW_CONTROL_PAUSE);
  Impair in{};
  auto extra = [&](nmtest::Sim& sim) {
    in.sim = &sim;
    in.port = nm_network_topology(sim.net)->ports[sim.HostPort(1)].peer_port;
    ASSERT_EQ(0, nm_engine_schedule(sim.engine, 1500, 0, LoseEverything, &in, 0, nullptr));
  };
  Outcome coasting = RunScenario(cfg, OnePacket(), false, extra);
  Outcome per_step = RunScenario(cfg, OnePacket(), true, extra);
  ExpectSame(coasting, per_step);
  EXPECT_EQ(0u, coasting.arrivals.size());
  EXPECT_EQ(1u, coasting.net.dropped[NM_DROP_LOSS]);
}

// Counters read in the middle of a transmission: the packet is queued until its last bit has
// left, and counted as sent from then on.
TEST(Coasting, CountersReadDuringTheTransmissionAreThoseOfTheEventPath) {
  nm_config cfg = Config(NM_TOPO_STAR, NM_FLOW_CONTROL_PAUSE);
  for (bool per_step : {false, true}) {
    SCOPED_TRACE(per_step ? "per step" : "coasting");
    nmtest::Sim sim(cfg);
    if (per_step) {
      nm_network_set_trace(sim.net, NoTrace, nullptr);
      nm_network_set_trace_mask(sim.net, 1u << NM_TRACE_TX_END);
    }
    nm_packet pkt = Packet(0, 1, 1, 1000);
    ASSERT_EQ(0, nm_network_inject(sim.net, &pkt));
    uint32_t port = sim.HostPort(0);
    nm_port_stats ps;
    nm_engine_run_until(sim.engine, 999);
    ASSERT_EQ(0, nm_network_port_stats_get(sim.net, port, &ps));
    EXPECT_EQ(1000u, ps.queued_bytes);
    EXPECT_EQ(0u, ps.tx_packets);
    nm_engine_run_until(sim.engine, 1000);
    ASSERT_EQ(0, nm_network_port_stats_get(sim.net, port, &ps));
    EXPECT_EQ(0u, ps.queued_bytes);
    EXPECT_EQ(1u, ps.tx_packets);
    EXPECT_EQ(1000u, ps.tx_bytes);
  }
}

// The same at the switch, where the packet passes through with no event of its own: before it
// has arrived (at 1080) the port towards host 1 is idle, then it is queued, then sent (at 2080).
TEST(Coasting, CountersOfTheSwitchReadWhileAPacketPassesThroughAreThoseOfTheEventPath) {
  nm_config cfg = Config(NM_TOPO_STAR, NM_FLOW_CONTROL_PAUSE);
  const nm_time_ns reads[] = {500, 1079, 1080, 1500, 2079, 2080, 2200};
  std::vector<nm_port_stats> seen[2];
  for (bool per_step : {false, true}) {
    nmtest::Sim sim(cfg);
    if (per_step) {
      nm_network_set_trace(sim.net, NoTrace, nullptr);
      nm_network_set_trace_mask(sim.net, 1u << NM_TRACE_TX_END);
    }
    nm_packet pkt = Packet(0, 1, 1, 1000);
    nm_path path;
    ASSERT_EQ(0, nm_network_path(sim.net, 0, 1, pkt.flow, &path));
    ASSERT_EQ(2u, path.hop_count);
    ASSERT_EQ(0, nm_network_inject(sim.net, &pkt));
    for (nm_time_ns t : reads) {
      nm_port_stats ps;
      nm_engine_run_until(sim.engine, t);
      ASSERT_EQ(0, nm_network_port_stats_get(sim.net, path.hops[1].port, &ps));
      seen[per_step].push_back(ps);
    }
    nm_engine_run_until(sim.engine, NM_TIME_NEVER);
    EXPECT_EQ(per_step ? 4u : 1u, nm_engine_events_run(sim.engine));  // the delivery alone
  }
  for (size_t i = 0; i < std::size(reads); i++) {
    SCOPED_TRACE("at " + std::to_string(reads[i]));
    EXPECT_EQ(seen[1][i].queued_bytes, seen[0][i].queued_bytes);
    EXPECT_EQ(seen[1][i].peak_queued_bytes, seen[0][i].peak_queued_bytes);
    EXPECT_EQ(seen[1][i].tx_packets, seen[0][i].tx_packets);
    EXPECT_EQ(seen[1][i].tx_bytes, seen[0][i].tx_bytes);
  }
  EXPECT_EQ(0u, seen[0][1].queued_bytes);
  EXPECT_EQ(1000u, seen[0][2].queued_bytes);
  EXPECT_EQ(0u, seen[0][4].tx_packets);
  EXPECT_EQ(1u, seen[0][5].tx_packets);
  EXPECT_EQ(0u, seen[0][5].queued_bytes);
}

// ---- A trace callback, and changes at the instant a packet's last bit leaves ----

struct Traced {
  nmtest::Sim* sim;
  std::vector<std::pair<nm_time_ns, uint64_t>> arrivals;  // (time, user_id)
  std::function<void(nmtest::Sim&, const nm_trace_record*)> on_start;
};

void TracedDeliver(void* ctx, const nm_packet* pkt) {
  auto* t = static_cast<Traced*>(ctx);
  t->arrivals.push_back({nm_engine_now(t->sim->engine), pkt->user_id});
}

void TracedRecord(void* ctx, const nm_trace_record* r) {
  auto* t = static_cast<Traced*>(ctx);
  if (r->kind == NM_TRACE_TX_START && t->on_start) t->on_start(*t->sim, r);
}

struct TracedOutcome {
  std::vector<std::pair<nm_time_ns, uint64_t>> arrivals;
  nm_network_stats net;
};

// A star of 4 hosts (Config's links and switch); the callback sees every packet start; `setup`
// schedules what else the scenario needs before the packets are.
TracedOutcome RunTraced(bool per_step, const std::vector<std::pair<nm_time_ns, nm_packet>>& packets,
                        std::function<void(nmtest::Sim&, const nm_trace_record*)> on_start,
                        std::function<void(nmtest::Sim&)> setup = nullptr) {
  nm_config cfg = Config(NM_TOPO_STAR, NM_FLOW_CONTROL_DROP);
  cfg.topology.hosts = 4;
  nmtest::Sim sim(cfg);
  Traced t{&sim, {}, on_start};
  nm_network_set_deliver(sim.net, TracedDeliver, &t);
  nm_network_set_trace(sim.net, TracedRecord, &t);
  nm_network_set_trace_mask(sim.net, 1u << NM_TRACE_TX_START | (per_step ? 1u << NM_TRACE_TX_END : 0));
  if (setup) setup(sim);
  std::vector<Injection> injections;
  injections.reserve(packets.size());
  for (const auto& [at, pkt] : packets) {
    injections.push_back({sim.net, pkt});
    EXPECT_EQ(0, nm_engine_schedule(sim.engine, at, pkt.src, InjectEvent, &injections.back(), 0,
                                    nullptr));
  }
  nm_engine_run_until(sim.engine, NM_TIME_NEVER);
  TracedOutcome out{t.arrivals, {}};
  nm_network_stats_get(sim.net, &out.net);
  return out;
}

void ExpectSameTraced(const TracedOutcome& coasting, const TracedOutcome& per_step) {
  EXPECT_EQ(per_step.arrivals, coasting.arrivals);
  EXPECT_EQ(per_step.net.delivered, coasting.net.delivered);
  EXPECT_EQ(per_step.net.in_flight, coasting.net.in_flight);
  EXPECT_EQ(0u, coasting.net.in_flight);
  for (int r = 0; r < NM_DROP_REASON_COUNT; r++)
    EXPECT_EQ(per_step.net.dropped[r], coasting.net.dropped[r]) << "drop reason " << r;
}

// The callback of a packet's start changes what decides its end, before the packet has its
// arrival or its end's place: its link goes down, TX_END becomes traced, or (for a second
// packet, while the first's arrival is still to come) the port's latency changes. (Found by a
// review: the packet was then both dropped and delivered, or delivered twice.)
TEST(Coasting, ATraceCallbackThatChangesThePortAsAPacketStartsDecidesAsWithoutCoasting) {
  using Change = std::function<void(nmtest::Sim&, const nm_trace_record*)>;
  const std::pair<const char*, Change> changes[] = {
      {"link down",
       [](nmtest::Sim& sim, const nm_trace_record* r) {
         if (r->node == 0 && r->packet->user_id == 1)
           nm_network_set_link_up(sim.net, nm_network_topology(sim.net)->ports[r->port].link,
                                  false);
       }},
      {"TX_END traced",
       [](nmtest::Sim& sim, const nm_trace_record* r) {
         if (r->packet->user_id == 1)
           nm_network_set_trace_mask(sim.net, 1u << NM_TRACE_TX_START | 1u << NM_TRACE_TX_END);
       }},
      {"latency of the second packet's port",
       [](nmtest::Sim& sim, const nm_trace_record* r) {
         if (r->node != 0 || r->packet->user_id != 2) return;
         nm_link_params link = nm_network_config(sim.net)->link;
         link.latency_ns = 70;
         nm_error err;
         EXPECT_EQ(0, nm_network_set_port_link(sim.net, r->port, &link, &err)) << err.msg;
       }},
  };
  std::vector<std::pair<nm_time_ns, nm_packet>> packets = {{0, Packet(0, 1, 1, 1000, 1)},
                                                           {1000, Packet(0, 1, 1, 1000, 2)}};
  for (const auto& [name, change] : changes) {
    SCOPED_TRACE(name);
    ExpectSameTraced(RunTraced(false, packets, change), RunTraced(true, packets, change));
  }
}

void SetLossOnHost0(nm_engine*, void* ctx, uint64_t) {
  auto* sim = static_cast<nmtest::Sim*>(ctx);
  nm_impair_params params{};
  params.loss_rate = 1.0;
  params.burst_mean_length = 1;
  nm_error err;
  EXPECT_EQ(0, nm_network_set_port_impairments(sim->net, sim->HostPort(0), &params, &err));
}

void SetLatencyOnHost0(nm_engine*, void* ctx, uint64_t) {
  auto* sim = static_cast<nmtest::Sim*>(ctx);
  nm_link_params link = nm_network_config(sim->net)->link;
  link.latency_ns = 500;
  nm_error err;
  EXPECT_EQ(0, nm_network_set_port_link(sim->net, sim->HostPort(0), &link, &err));
}

// One packet from host 0 to host 1 (last bits leave at 1000 and 2080); a change at exactly one
// of those nanoseconds, by an event that runs before the end of the transmission would: the
// packet meets it, with or without coasting. (Found by a review: coasting took the packet for
// gone at that instant.)
TEST(Coasting, AChangeAtTheInstantTheLastBitLeavesDecidesAsWithoutCoasting) {
  using Setup = std::function<void(nmtest::Sim&)>;
  const std::pair<const char*, Setup> changes[] = {
      {"host 0's link down at 1000",
       [](nmtest::Sim& sim) {
         ASSERT_EQ(0, nm_network_schedule_link_state(sim.net, LinkOf(sim, sim.HostPort(0)),
                                                      1000, false));
       }},
      {"host 1's link down at 2080",
       [](nmtest::Sim& sim) {
         ASSERT_EQ(0, nm_network_schedule_link_state(sim.net, LinkOf(sim, sim.HostPort(1)),
                                                      2080, false));
       }},
      {"loss on host 0's port at 1000",
       [](nmtest::Sim& sim) {
         ASSERT_EQ(0, nm_engine_schedule(sim.engine, 1000, 0, SetLossOnHost0, &sim, 0, nullptr));
       }},
      {"latency of host 0's port at 1000",
       [](nmtest::Sim& sim) {
         ASSERT_EQ(0,
                   nm_engine_schedule(sim.engine, 1000, 0, SetLatencyOnHost0, &sim, 0, nullptr));
       }},
  };
  for (const auto& [name, setup] : changes) {
    SCOPED_TRACE(name);
    TracedOutcome coasting = RunTraced(false, OnePacket(), nullptr, setup);
    ExpectSameTraced(coasting, RunTraced(true, OnePacket(), nullptr, setup));
  }
}

// Pause mode, a star of 5 hosts whose hosts 0, 2 and 4 have infinitely fast links: two switch
// ports end at one instant, and which wakes its paused host first decides who gets room.
// (Found by a review: the ends' events took their places in another order.)
TEST(Coasting, ZeroTimeTransmittersWokenAtOneInstantTakeRoomInTheSameOrder) {
  nm_config cfg = nmtest::SmallNetwork(
      {NM_TOPO_STAR, 5, 4000000000ull, 0, 50, NM_FLOW_CONTROL_PAUSE, 2000, 0});
  std::vector<std::pair<nm_time_ns, nm_packet>> packets = {
      {2100, Packet(1, 3, 8, 1000, 4)},  {250, Packet(0, 1, 1, 800, 6)},
      {1450, Packet(2, 1, 11, 700, 8)},  {1000, Packet(2, 1, 11, 700, 11)},
      {2850, Packet(0, 3, 3, 700, 19)},  {2150, Packet(4, 3, 23, 900, 21)},
      {1600, Packet(0, 1, 1, 800, 24)},  {1250, Packet(4, 3, 23, 1000, 27)},
  };
  auto fast_hosts = [](nmtest::Sim& sim) {
    for (uint32_t h : {0u, 2u, 4u}) {
      nm_link_params link = nm_network_config(sim.net)->link;
      link.bandwidth_bps = 0;
      nm_error err;
      ASSERT_EQ(0, nm_network_set_port_link(sim.net, sim.HostPort(h), &link, &err)) << err.msg;
    }
  };
  Outcome coasting = RunScenario(cfg, packets, false, fast_hosts);
  Outcome per_step = RunScenario(cfg, packets, true, fast_hosts);
  ExpectSame(coasting, per_step);
  EXPECT_EQ(8u, coasting.arrivals.size());
}

}  // namespace
