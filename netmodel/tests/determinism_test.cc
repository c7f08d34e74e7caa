// Determinism: a randomized scenario (fat-tree, losses, bursts, duplication, reordering, ECN,
// finite buffers, link faults) run twice gives a byte-identical event log, and so does a run
// whose injection events are scheduled in a shuffled order (they all have distinct times).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "netmodel/tests/test_util.h"

namespace {

struct Injection {
  nm_time_ns at;
  nm_packet pkt;
};

// The workload: distinct injection times, random hosts, sizes and flows.
std::vector<Injection> Workload(uint32_t hosts, uint32_t mtu, size_t count) {
  std::mt19937_64 rng(99);
  std::vector<Injection> w;
  nm_time_ns t = 0;
  for (size_t i = 0; i < count; i++) {
    t += 1 + rng() % 60;
    // Half the packets go to host 0 (an incast that fills queues), the rest anywhere.
    uint32_t src = 1 + rng() % (hosts - 1);
    uint32_t dst = rng() % 2 ? 0 : (src + 1 + rng() % (hosts - 1)) % hosts;
    w.push_back({t, nmtest::Packet(src, dst, rng() % 40, 1 + rng() % mtu, i)});
  }
  return w;
}

// Appends every trace record as fixed-layout bytes (no pointers).
void LogRecord(void* ctx, const nm_trace_record* r) {
  auto* log = static_cast<std::string*>(ctx);
  uint64_t fields[12] = {r->time, static_cast<uint64_t>(r->kind), static_cast<uint64_t>(r->reason),
                         r->node, r->port};
  if (r->packet) {
    fields[5] = r->packet->flow;
    fields[6] = r->packet->user_id;
    fields[7] = r->packet->bytes;
    fields[8] = r->packet->src;
    fields[9] = r->packet->dst;
    fields[10] = r->packet->flags;
    fields[11] = r->packet->injected_at;
  }
  log->append(reinterpret_cast<const char*>(fields), sizeof(fields));
}

struct InjectCtx {
  nm_network* net;
  const Injection* inj;
};

void InjectEvent(nm_engine*, void* ctx, uint64_t) {
  auto* c = static_cast<InjectCtx*>(ctx);
  ASSERT_EQ(0, nm_network_inject(c->net, &c->inj->pkt));
}

std::string RunScenario(uint64_t seed, bool shuffle_insertion, fs_arena* arena = nullptr) {
  nm_config cfg = nmtest::Preset("roce-25g");
  cfg.seed = seed;
  cfg.topology = {NM_TOPO_FATTREE, 16, 4, 2};
  cfg.sw.flow_control = NM_FLOW_CONTROL_DROP;
  cfg.sw.buffer_bytes = 8 * 1024;
  cfg.sw.ecn_threshold_bytes = 3 * 1024;
  cfg.impair.loss_rate = 0.01;
  cfg.impair.burst_loss_rate = 0.01;
  cfg.impair.burst_mean_length = 3;
  cfg.impair.duplicate_rate = 0.01;
  cfg.impair.corrupt_rate = 0.01;
  cfg.impair.reorder_rate = 0.05;
  cfg.impair.reorder_delay_ns = 2000;
  cfg.fault_count = 1;
  cfg.faults[0] = {20, 50000, 90000};
  nmtest::Sim sim(cfg, arena);
  std::string log;
  nm_network_set_trace(sim.net, LogRecord, &log);

  std::vector<Injection> w = Workload(16, cfg.link.mtu_bytes, 3000);
  std::vector<InjectCtx> ctxs;
  for (const auto& inj : w) ctxs.push_back({sim.net, &inj});
  std::vector<size_t> order(w.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = i;
  if (shuffle_insertion) std::shuffle(order.begin(), order.end(), std::mt19937_64(seed + 1));
  for (size_t i : order)
    EXPECT_EQ(0, nm_engine_schedule(sim.engine, w[i].at, w[i].pkt.src, InjectEvent, &ctxs[i], 0,
                                    nullptr));
  nm_engine_run_until(sim.engine, NM_TIME_NEVER);
  nm_network_stats st;
  nm_network_stats_get(sim.net, &st);
  EXPECT_GT(st.dropped[NM_DROP_BUFFER] + st.dropped[NM_DROP_LOSS], 0u);  // the scenario bites
  EXPECT_GT(st.ecn_marked, 0u);
  EXPECT_GT(st.duplicated, 0u);
  if (arena) {
    EXPECT_TRUE(fs_arena_contains(arena, sim.net));
    EXPECT_GT(fs_arena_used(arena), 0u);
  }
  return log;
}

TEST(Determinism, SameScenarioTwiceGivesTheSameLog) {
  std::string a = RunScenario(7, false);
  std::string b = RunScenario(7, false);
  ASSERT_GT(a.size(), 0u);
  EXPECT_EQ(a.size(), b.size());
  EXPECT_TRUE(a == b);
}

// The model in an arena (the memory several processes will share) runs the same, keeps its state
// there, and gives it all back.
TEST(Determinism, ModelInAnArenaGivesTheSameLogAndFreesEverything) {
  fs_arena* arena = fs_arena_private(size_t(1) << 30);
  ASSERT_NE(arena, nullptr);
  std::string in_arena = RunScenario(7, false, arena);
  EXPECT_EQ(fs_arena_used(arena), 0u) << "the model left memory in its arena";
  fs_arena_detach(arena);
  std::string in_process = RunScenario(7, false);
  ASSERT_GT(in_arena.size(), 0u);
  EXPECT_TRUE(in_arena == in_process);
}

TEST(Determinism, ShuffledInsertionOrderGivesTheSameLog) {
  std::string a = RunScenario(7, false);
  std::string b = RunScenario(7, true);
  EXPECT_EQ(a.size(), b.size());
  EXPECT_TRUE(a == b);
}

TEST(Determinism, AnotherSeedGivesAnotherLog) {
  // Guards the two tests above against a log that ignores the randomness.
  EXPECT_FALSE(RunScenario(7, false) == RunScenario(8, false));
}

TEST(Determinism, SeveralModelsCoexistWithoutInterference) {
  // Interleaving two simulations step by step must not change either one's log.
  std::string alone = RunScenario(11, false);
  nm_config cfg = nmtest::Preset("ideal");
  nmtest::Sim other(cfg);
  nm_packet p = nmtest::Packet(0, 1, 1, 100);
  ASSERT_EQ(0, nm_network_inject(other.net, &p));
  std::string again = RunScenario(11, false);
  nm_engine_run_until(other.engine, NM_TIME_NEVER);
  EXPECT_TRUE(alone == again);
}

}  // namespace
