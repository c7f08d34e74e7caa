// Coasting against the event-per-step machine (tracing NM_TRACE_TX_END), on random networks: stars,
// fat trees and pairs; per-port rates, latencies and impairments; tail drop and pause; ECN;
// links, parameters, impairments and scripted drops changed during the run by scheduled events,
// by trace callbacks of every kind, from outside between pieces of a run; replies sent from the
// delivery callback. Every arrival's time and flags, every loss, mark, pause and counter must
// agree. Written by a review of the coasting change, with two scenarios it found first.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "netmodel/tests/coasting_util.h"

namespace {

using nmtest::Packet;

void NoTrace(void*, const nm_trace_record*) {}

// 8 Gb/s: 100 B take 100 ns.
nm_config StarCfg(uint32_t hosts) {
  return nmtest::SmallNetwork(
      {NM_TOPO_STAR, hosts, 8000000000ull, 50, 30, NM_FLOW_CONTROL_DROP, 100000, 0});
}

// ---- A host's own event at the instant a packet is delivered to it ----
// Host 1 gets packet P (0 -> 1, 1000 B at 0): the switch sends it from 1080 to 2080, it is
// delivered at 2130 (an event with priority 1). Host 1 answers it at once (like a NIC's ACK):
// packet X, 1 -> 2. Host 1 also has a timer (priority 1, as nic_schedule's) due at 2130, armed at
// 1500 by something else: it sends Y, 1 -> 2. The delivery's event was scheduled at 2080 without
// coasting (after the timer) and at 1080 with it (before): X and Y went out in another order.
// Now it takes its place from the end of the transmission, either way.
struct World {
  nmtest::Sim* sim;
  std::vector<std::pair<nm_time_ns, uint64_t>> arrivals;  // at host 2: (time, user_id)
};

void Deliver(void* ctx, const nm_packet* pkt) {
  auto* w = static_cast<World*>(ctx);
  if (pkt->dst == 2) w->arrivals.push_back({nm_engine_now(w->sim->engine), pkt->user_id});
  if (pkt->user_id == 100) {  // P: answer it
    nm_packet x = Packet(1, 2, 12, 500, 200);
    EXPECT_EQ(0, nm_network_inject(w->sim->net, &x));
  }
}

void SendY(nm_engine*, void* ctx, uint64_t) {
  auto* w = static_cast<World*>(ctx);
  nm_packet y = Packet(1, 2, 12, 500, 300);
  EXPECT_EQ(0, nm_network_inject(w->sim->net, &y));
}

void ArmTimer(nm_engine* e, void* ctx, uint64_t) {
  // host 1's timer, priority 1
  EXPECT_EQ(0, nm_engine_schedule(e, 2130, 1, SendY, ctx, 0, nullptr));
}

void InjectP(nm_engine*, void* ctx, uint64_t) {
  auto* w = static_cast<World*>(ctx);
  nm_packet p = Packet(0, 1, 1, 1000, 100);
  EXPECT_EQ(0, nm_network_inject(w->sim->net, &p));
}

std::vector<std::pair<nm_time_ns, uint64_t>> RunReply(bool per_step) {
  nmtest::Sim sim(StarCfg(3));
  World w{&sim, {}};
  nm_network_set_deliver(sim.net, Deliver, &w);
  if (per_step) {
    nm_network_set_trace(sim.net, NoTrace, nullptr);
    nm_network_set_trace_mask(sim.net, 1u << NM_TRACE_TX_END);
  }
  EXPECT_EQ(0, nm_engine_schedule(sim.engine, 0, 0, InjectP, &w, 0, nullptr));
  EXPECT_EQ(0, nm_engine_schedule(sim.engine, 1500, 5, ArmTimer, &w, 0, nullptr));
  nm_engine_run_until(sim.engine, NM_TIME_NEVER);
  return w.arrivals;
}

std::string Show(const std::vector<std::pair<nm_time_ns, uint64_t>>& v) {
  std::string s;
  for (auto& [t, id] : v) s += "(" + std::to_string(t) + " ns, id " + std::to_string(id) + ") ";
  return s;
}

TEST(CoastingScenario, ADeliveryAndAnotherEventOfTheHostAtOneInstantRunInTheSameOrder) {
  auto coasting = RunReply(false), per_step = RunReply(true);
  EXPECT_EQ(per_step, coasting) << "coasting: " << Show(coasting) << "\nper step: " << Show(per_step);
  EXPECT_EQ(2u, coasting.size());
}

// ---- A trace callback during a tx_done, before the packet's fate is decided ----
// Pause mode, star of 3 hosts, 1000-byte buffers. P1 (0 -> 2, 1000 B at 0) is on the switch's
// port toward host 2 from 1080 to 2080 (coasting: nothing waits there when it starts). At 1500
// host 1 sends P2 to host 2: no room, host 1's port pauses on that switch port. At 2080 the
// switch port's end wakes it; the RESUME trace callback changes the switch port's latency to 500.
// The event path's tx_done woke the waiters before it launched P1, so P1 took the new latency
// (arriving at 2580, against 2130 coasting). Now a tx_done decides the packet's fate first.
struct Resume {
  nmtest::Sim* sim;
  int what;  // 0 latency, 1 link down, 2 loss
  std::vector<std::pair<nm_time_ns, uint64_t>> arrivals;
  nm_network_stats net;
};

void ResumeDeliver(void* ctx, const nm_packet* pkt) {
  auto* r = static_cast<Resume*>(ctx);
  r->arrivals.push_back({nm_engine_now(r->sim->engine), pkt->user_id});
}

void ResumeTrace(void* ctx, const nm_trace_record* rec) {
  auto* r = static_cast<Resume*>(ctx);
  if (rec->kind != NM_TRACE_RESUME) return;
  uint32_t sw_port = nm_network_topology(r->sim->net)->ports[r->sim->HostPort(2)].peer_port;
  nm_error err;
  if (r->what == 0) {
    nm_link_params link = nm_network_config(r->sim->net)->link;
    link.latency_ns = 500;
    EXPECT_EQ(0, nm_network_set_port_link(r->sim->net, sw_port, &link, &err));
  } else if (r->what == 1) {
    EXPECT_EQ(0, nm_network_set_link_up(
                     r->sim->net, nm_network_topology(r->sim->net)->ports[sw_port].link, false));
  } else {
    nm_impair_params params{};
    params.loss_rate = 1.0;
    params.burst_mean_length = 1;
    EXPECT_EQ(0, nm_network_set_port_impairments(r->sim->net, sw_port, &params, &err));
  }
}

struct Inj {
  nm_network* net;
  nm_packet pkt;
};
void InjEvent(nm_engine*, void* ctx, uint64_t) {
  auto* in = static_cast<Inj*>(ctx);
  EXPECT_EQ(0, nm_network_inject(in->net, &in->pkt));
}

Resume RunResume(bool per_step, int what) {
  nm_config cfg = StarCfg(3);
  cfg.sw.flow_control = NM_FLOW_CONTROL_PAUSE;
  cfg.sw.buffer_bytes = 1000;
  nmtest::Sim sim(cfg);
  Resume r{&sim, what, {}, {}};
  nm_network_set_deliver(sim.net, ResumeDeliver, &r);
  nm_network_set_trace(sim.net, ResumeTrace, &r);
  nm_network_set_trace_mask(sim.net,
                            1u << NM_TRACE_RESUME | (per_step ? 1u << NM_TRACE_TX_END : 0));
  Inj p1{sim.net, Packet(0, 2, 1, 1000, 1)}, p2{sim.net, Packet(1, 2, 2, 1000, 2)};
  EXPECT_EQ(0, nm_engine_schedule(sim.engine, 0, 0, InjEvent, &p1, 0, nullptr));
  EXPECT_EQ(0, nm_engine_schedule(sim.engine, 1500, 1, InjEvent, &p2, 0, nullptr));
  nm_engine_run_until(sim.engine, NM_TIME_NEVER);
  nm_network_stats_get(sim.net, &r.net);
  return r;
}

TEST(CoastingScenario, ATraceCallbackOfAWakeUpDuringTheEndOfATransmissionDecidesAsWithoutCoasting) {
  const char* names[] = {"latency", "link down", "loss"};
  for (int what = 0; what < 3; what++) {
    SCOPED_TRACE(names[what]);
    Resume c = RunResume(false, what), e = RunResume(true, what);
    EXPECT_EQ(e.arrivals, c.arrivals) << "coasting: " << Show(c.arrivals)
                                      << "\nper step: " << Show(e.arrivals);
    for (int r = 0; r < NM_DROP_REASON_COUNT; r++)
      EXPECT_EQ(e.net.dropped[r], c.net.dropped[r]) << "drop reason " << r;
  }
}

// ---- Random networks ----

using nmtest::Mix;

struct Rig;

struct PlanAction {
  int kind;  // 0 inject, 1 link params, 2 link up/down, 3 impairments, 4 scripted drop
  nm_packet pkt;
  uint32_t port;
  nm_link_params link;
  nm_impair_params impair;
  bool up;
};

struct Rig {
  nmtest::Sim* sim;
  bool per_step;
  bool pause;
  uint64_t seed;
  uint32_t base_mask;
  int trace_changes;  // 0: none; else 1 in trace_changes records makes a change
  bool replies;
  uint32_t ports, links, hosts;
  nm_link_params link;
  std::vector<nmtest::Arrival> arrivals;
  std::vector<bool> link_state;
  uint64_t changes_made = 0;
  // No record of the switches' queueing or starts: packets pass through quiet switches.
  bool narrow_switches = false;
  uint32_t Mask() const { return base_mask | (per_step ? 1u << NM_TRACE_TX_END : 0); }
  void SetMasks(uint32_t extra = 0) const {
    nm_network_set_trace_mask(sim->net, Mask() | extra);
    if (narrow_switches)
      nm_network_set_switch_trace_mask(
          sim->net, (Mask() | extra) & ~(1u << NM_TRACE_ENQUEUE | 1u << NM_TRACE_TX_START));
  }
};

void Change(Rig* r, uint64_t h);

void RigTrace(void* ctx, const nm_trace_record* rec) {
  auto* r = static_cast<Rig*>(ctx);
  if (rec->kind == NM_TRACE_TX_END) return;  // only the event path has them
  if (!r->trace_changes) return;
  uint64_t h = Mix(r->seed ^ Mix(rec->kind * 1000003ull + rec->time) ^
                   Mix((rec->packet ? rec->packet->user_id : 77) * 31 + rec->node * 7 + rec->port));
  if (h % r->trace_changes) return;
  Change(r, h / r->trace_changes);
}

void Change(Rig* r, uint64_t h) {
  nm_network* net = r->sim->net;
  nm_error err;
  r->changes_made++;
  int kind = h % 7;
  h /= 7;
  if (r->pause && (kind == 2 || kind == 4)) kind = 1;
  const uint64_t rates[] = {8000000000ull, 16000000000ull, 4000000000ull, 0};
  switch (kind) {
    case 0:
    case 1: {
      nm_link_params link = r->link;
      link.bandwidth_bps = rates[h % 4];
      h /= 4;
      link.latency_ns = (h % 3) * 50;
      h /= 3;
      EXPECT_EQ(0, nm_network_set_port_link(net, h % r->ports, &link, &err));
      break;
    }
    case 2: {
      uint32_t l = h % r->links;
      r->link_state[l] = !r->link_state[l];
      EXPECT_EQ(0, nm_network_set_link_up(net, l, r->link_state[l]));
      break;
    }
    case 3: {
      nm_impair_params impair{};
      impair.burst_mean_length = 1;
      if (h % 2) {
        impair.reorder_rate = 0.3;
        impair.reorder_delay_ns = 200;
        impair.duplicate_rate = 0.1;
        if (!r->pause) impair.loss_rate = 0.1;
      }
      h /= 2;
      EXPECT_EQ(0, nm_network_set_port_impairments(net, h % r->ports, &impair, &err));
      break;
    }
    case 4:
      EXPECT_EQ(0, nm_network_add_scripted_drop(net, h % r->ports, h % (r->hosts * r->hosts),
                                                1 + h % 3));
      break;
    case 5:  // the trace callback set again (traces everything; then back to the mask)
      nm_network_set_trace(net, RigTrace, r);
      r->SetMasks();
      break;
    case 6:  // TX_END traced for a while: no coasting... then not again
      if (!r->per_step) {
        r->SetMasks(1u << NM_TRACE_TX_END);
        r->SetMasks();
      }
      break;
  }
}

void RigDeliver(void* ctx, const nm_packet* pkt) {
  auto* r = static_cast<Rig*>(ctx);
  r->arrivals.push_back({nm_engine_now(r->sim->engine), *pkt});
  if (r->replies && pkt->user_id < 100000 && pkt->user_id % 3 == 0 &&
      !(pkt->flags & NM_PKT_DUPLICATE)) {
    nm_packet reply = Packet(pkt->dst, pkt->src, pkt->flow + 1, 100 + (pkt->user_id % 5) * 100,
                             pkt->user_id + 100000);
    EXPECT_EQ(0, nm_network_inject(r->sim->net, &reply));
  }
}

struct PlanEntry {
  nm_time_ns at;
  uint32_t prio;
  PlanAction a;
};

struct Scheduled {
  Rig* rig;
  const PlanAction* a;
  nm_time_ns at;
  uint32_t prio;
};
void RunPlanAction(nm_engine*, void* ctx, uint64_t);
void Launcher(nm_engine* e, void* ctx, uint64_t) {
  auto* s = static_cast<Scheduled*>(ctx);
  EXPECT_EQ(0, nm_engine_schedule(e, s->at, s->prio, RunPlanAction, s, 0, nullptr));
}

void RunPlanAction(nm_engine*, void* ctx, uint64_t) {
  auto* s = static_cast<Scheduled*>(ctx);
  nm_network* net = s->rig->sim->net;
  const PlanAction* a = s->a;
  nm_error err;
  switch (a->kind) {
    case 0: EXPECT_EQ(0, nm_network_inject(net, &a->pkt)); break;
    case 1: EXPECT_EQ(0, nm_network_set_port_link(net, a->port, &a->link, &err)); break;
    case 2:
      s->rig->link_state[a->port] = a->up;
      EXPECT_EQ(0, nm_network_set_link_up(net, a->port, a->up));
      break;
    case 3: EXPECT_EQ(0, nm_network_set_port_impairments(net, a->port, &a->impair, &err)); break;
    case 4:
      EXPECT_EQ(0, nm_network_add_scripted_drop(net, a->port, a->pkt.flow, a->pkt.user_id));
      break;
  }
}

struct Out {
  std::vector<nmtest::Arrival> arrivals;
  nm_network_stats net;
  std::vector<nm_port_stats> ports;
  uint64_t changes;
  std::vector<std::pair<nm_time_ns, nm_network_stats>> steps;
  uint64_t events = 0;
};

struct RigOpts {
  int trace_changes = 0;
  bool replies = false;
  bool plan_changes = true;
  bool stepped = false;  // run in pieces, with injections from outside between them
  int variant = 0;
  bool narrow_switches = false;
};

void ExpectSameOut(const Out& c, const Out& e) {
  nmtest::ExpectSameArrivals(c.arrivals, e.arrivals);
  EXPECT_EQ(e.changes, c.changes);
  nmtest::ExpectSameCounters(c.net, e.net);
  nmtest::ExpectSamePorts(c.ports, e.ports);
  ASSERT_EQ(e.steps.size(), c.steps.size());
  for (size_t i = 0; i < e.steps.size(); i++) {
    SCOPED_TRACE("step " + std::to_string(i));
    EXPECT_EQ(e.steps[i].first, c.steps[i].first);
    EXPECT_EQ(e.steps[i].second.delivered, c.steps[i].second.delivered);
    EXPECT_EQ(e.steps[i].second.injected, c.steps[i].second.injected);
  }
}

bool DeliveredAtLeast(void* ctx) {
  auto* p = static_cast<std::pair<Rig*, uint64_t>*>(ctx);
  return p->first->arrivals.size() >= p->second;
}

void RandomDiff(uint64_t seed, const RigOpts& o) {
  std::mt19937_64 rng(seed);
  nm_config cfg = nmtest::Preset("ideal");
  switch (rng() % 7) {
    case 5: cfg.topology = {NM_TOPO_FATTREE, 16, 4, 2}; break;
    case 6: cfg.topology = {NM_TOPO_STAR, 10, 4, 2}; break;
    case 0: cfg.topology = {NM_TOPO_FATTREE, 8, 2, 2}; break;
    case 1: cfg.topology = {NM_TOPO_FATTREE, 12, 3, 3}; break;
    case 2: cfg.topology = {NM_TOPO_STAR, 6, 4, 2}; break;
    case 3: cfg.topology = {NM_TOPO_STAR, 3, 4, 2}; break;
    default: cfg.topology = {NM_TOPO_PAIR, 2, 1, 1}; break;
  }
  const uint64_t rates[] = {8000000000ull, 16000000000ull, 4000000000ull, 10000000000ull};
  cfg.link.bandwidth_bps = rates[rng() % 4];
  const nm_time_ns lat[] = {0, 17, 50, 100};
  cfg.link.latency_ns = lat[rng() % 4];
  cfg.link.mtu_bytes = 1000;
  cfg.link.header_bytes = 0;
  cfg.sw.latency_ns = (rng() % 3) * 25;
  const nm_flow_control modes[] = {NM_FLOW_CONTROL_DROP, NM_FLOW_CONTROL_PAUSE,
                                   NM_FLOW_CONTROL_CREDIT};
  cfg.sw.flow_control = modes[rng() % 3];
  bool pause = cfg.sw.flow_control != NM_FLOW_CONTROL_DROP;  // lossless
  cfg.sw.buffer_bytes = 1000 + (rng() % 6) * 500;
  if (cfg.sw.flow_control == NM_FLOW_CONTROL_CREDIT && cfg.sw.buffer_bytes < 1064)
    cfg.sw.buffer_bytes = 1064;  // the largest packet: 1000 B of MTU and 64 more
  const uint64_t ecn[] = {0, 100, 500, 1000, 1500};
  cfg.sw.ecn_threshold_bytes = ecn[rng() % 5];
  cfg.seed = seed;
  uint32_t hosts = cfg.topology.hosts;
  uint32_t ports, links;
  {
    nmtest::Sim probe(cfg);
    ports = nm_network_topology(probe.net)->port_count;
    links = nm_network_topology(probe.net)->link_count;
  }
  std::vector<int> port_kinds;
  for (uint32_t id = 0; id < ports; id++) port_kinds.push_back(int(rng() % 10));
  std::vector<PlanEntry> plan;
  uint32_t npk = 300 + rng() % 300;
  for (uint64_t id = 1; id <= npk; id++) {
    uint32_t src = rng() % hosts, dst = rng() % (hosts - 1);
    if (dst >= src) dst++;
    PlanAction a{};
    a.pkt = Packet(src, dst, src * hosts + dst, 100 * (1 + rng() % 10), id);
    plan.push_back({(rng() % 20) * 50 + (id / 60) * 3000, src, a});
  }
  for (int k = 0; o.plan_changes && k < 30; k++) {
    nm_time_ns at = (rng() % 600) * 50 + (rng() % 3 == 0 ? 17 : 0);
    uint32_t prio = rng() % (hosts + 8);
    PlanAction a{};
    a.kind = 1 + rng() % 4;
    if (pause && (a.kind == 2 || a.kind == 4)) a.kind = 1;
    a.port = rng() % ports;
    a.link = cfg.link;
    a.link.bandwidth_bps = rng() % 4 == 0 ? 0 : rates[rng() % 3];
    a.link.latency_ns = lat[rng() % 4];
    a.impair.burst_mean_length = 1;
    if (rng() % 2) {
      a.impair.reorder_rate = 0.3;
      a.impair.reorder_delay_ns = 200;
      a.impair.duplicate_rate = 0.1;
      if (!pause && rng() % 2) a.impair.loss_rate = 0.1;
    }
    if (a.kind == 2) {
      a.port = rng() % links;
      a.up = false;
      PlanAction up = a;
      up.up = true;
      plan.push_back({at, prio, a});
      plan.push_back({at + 100 + (rng() % 20) * 50, prio, up});
      continue;
    }
    if (a.kind == 4) {
      a.pkt.flow = rng() % (hosts * hosts);
      a.pkt.user_id = 1 + rng() % 3;
    }
    plan.push_back({at, prio, a});
  }
  uint64_t step_seed = rng();
  uint32_t base_mask = (1u << NM_TRACE_TX_START) | (1u << NM_TRACE_DROP) |
                       (1u << NM_TRACE_ENQUEUE) | (1u << NM_TRACE_DELIVER) |
                       (1u << NM_TRACE_PAUSE) | (1u << NM_TRACE_RESUME) |
                       (1u << NM_TRACE_DUPLICATE) | (1u << NM_TRACE_INJECT);

  auto run = [&](bool per_step) {
    nmtest::Sim sim(cfg);
    Rig rig{&sim, per_step, pause, seed, base_mask, o.trace_changes, o.replies, ports, links,
            hosts, cfg.link, {}, std::vector<bool>(links, true)};
    rig.narrow_switches = o.narrow_switches;
    nm_network_set_deliver(sim.net, RigDeliver, &rig);
    nm_network_set_trace(sim.net, RigTrace, &rig);
    rig.SetMasks();
    for (uint32_t id = 0; id < ports; id++) {
      int kind = port_kinds[id];
      nm_error err;
      nm_link_params link = cfg.link;
      if (kind == 0) link.bandwidth_bps = 0;
      if (kind == 1) link.latency_ns = 0;
      if (kind <= 1) EXPECT_EQ(0, nm_network_set_port_link(sim.net, id, &link, &err));
      if (kind == 2) {
        nm_impair_params impair{};
        impair.burst_mean_length = 1;
        impair.duplicate_rate = 0.2;
        impair.reorder_rate = 0.2;
        impair.reorder_delay_ns = 300;
        impair.loss_rate = pause ? 0 : 0.05;
        EXPECT_EQ(0, nm_network_set_port_impairments(sim.net, id, &impair, &err));
      }
    }
    std::vector<Scheduled> sched;
    sched.reserve(plan.size());
    std::mt19937_64 drng(step_seed + 1);
    for (auto& e : plan) {
      sched.push_back({&rig, &e.a, e.at, e.prio});
      if (o.variant == 1) {  // scheduled during the run, by an earlier event
        nm_time_ns back = (drng() % 30) * 25 + drng() % 2;
        EXPECT_EQ(0, nm_engine_schedule(sim.engine, e.at > back ? e.at - back : 0,
                                        drng() % (hosts + 8), Launcher, &sched.back(), 0,
                                        nullptr));
      } else {
        EXPECT_EQ(0, nm_engine_schedule(sim.engine, e.at, e.prio, RunPlanAction, &sched.back(), 0,
                                        nullptr));
      }
    }
    Out out;
    if (o.stepped) {
      std::mt19937_64 srng(step_seed);
      uint64_t outside_id = 500000;
      for (int i = 0; i < 400 && nm_engine_pending(sim.engine); i++) {
        nm_time_ns now = nm_engine_now(sim.engine);
        int how = srng() % 4;
        if (how == 0) {
          nm_engine_run_until(sim.engine, now + (srng() % 40) * 25);
        } else if (how == 1) {
          nm_engine_run_until(sim.engine, now > 100 ? now - (srng() % 100) : now);  // past
        } else if (how == 2) {
          std::pair<Rig*, uint64_t> want{&rig, rig.arrivals.size() + 1 + srng() % 3};
          nm_engine_run_until_pred(sim.engine, DeliveredAtLeast, &want,
                                   now + (srng() % 40) * 25);
        } else {
          nm_engine_run_until(sim.engine, now);  // (run_next_instant's instants differ: tx_done)
        }
        nm_network_stats st;
        nm_network_stats_get(sim.net, &st);
        out.steps.push_back({nm_engine_now(sim.engine), st});
        if (srng() % 2) {  // a packet from outside, at now
          uint32_t src = srng() % hosts, dst = srng() % (hosts - 1);
          if (dst >= src) dst++;
          nm_packet pkt = Packet(src, dst, src * hosts + dst, 100 * (1 + srng() % 10), outside_id++);
          EXPECT_EQ(0, nm_network_inject(sim.net, &pkt));
        }
        if (srng() % 8 == 0) Change(&rig, srng());
      }
    }
    nm_engine_run_until(sim.engine, NM_TIME_NEVER);
    out.arrivals = rig.arrivals;
    nm_network_stats_get(sim.net, &out.net);
    for (uint32_t id = 0; id < ports; id++) {
      nm_port_stats ps;
      EXPECT_EQ(0, nm_network_port_stats_get(sim.net, id, &ps));
      out.ports.push_back(ps);
    }
    out.changes = rig.changes_made;
    out.events = nm_engine_events_run(sim.engine);
    return out;
  };
  Out c = run(false), e = run(true);
  ExpectSameOut(c, e);
}

// Seeds per variant: enough to meet every topology, flow control and kind of change many times.
constexpr uint64_t kSeeds = 100;

#define DIFF_TEST(name, ...)                                  \
  TEST(CoastingOnRandomNetworks, name) {                                 \
    RigOpts o{__VA_ARGS__};                                   \
    for (uint64_t seed = 1; seed <= kSeeds; seed++) {         \
      SCOPED_TRACE("seed " + std::to_string(seed));           \
      RandomDiff(seed, o);                                    \
      if (HasFailure()) return;                               \
    }                                                         \
  }

DIFF_TEST(PlanOnly, 0, false, true, false)
DIFF_TEST(TraceChanges, 20, false, true, false)
DIFF_TEST(TraceChangesRare, 150, false, false, false)
DIFF_TEST(TraceChangesRareDynamic, 150, true, false, false, 1)
DIFF_TEST(TraceChangesOften, 5, false, false, false)
DIFF_TEST(Replies, 0, true, true, false)
DIFF_TEST(Stepped, 0, false, true, true)
DIFF_TEST(Everything, 20, true, true, true)
DIFF_TEST(Dynamic, 0, false, true, false, 1)
DIFF_TEST(DynamicEverything, 20, true, true, true, 1)
// The same with packets that pass through switches.
DIFF_TEST(PassingPlanOnly, 0, false, true, false, 0, true)
DIFF_TEST(PassingTraceChanges, 20, false, true, false, 0, true)
DIFF_TEST(PassingTraceChangesOften, 5, false, false, false, 0, true)
DIFF_TEST(PassingReplies, 0, true, true, false, 0, true)
DIFF_TEST(PassingStepped, 0, false, true, true, 0, true)
DIFF_TEST(PassingEverything, 20, true, true, true, 0, true)
DIFF_TEST(PassingDynamicEverything, 20, true, true, true, 1, true)

}  // namespace
