// A network on the partitions of a parallel simulation (nm_network_create_parallel) against the
// same network on one engine: random traffic with replies, loss, duplicates, corruption,
// reordering, ECN, tail drops or credits, over a star and a fat tree. Every partition must see the trace
// records of its ports and hosts that one engine gives, in the same order, whether the partitions
// take turns in one thread or run at once in threads.
#include <gtest/gtest.h>
#include <sched.h>

#include <string>
#include <thread>
#include <vector>

#include "netmodel/nm_parallel.h"
#include "netmodel/tests/coasting_util.h"

namespace {

constexpr nm_time_ns kSendUntil = 120000;

struct Record {
  nm_time_ns time;
  int kind, reason;
  uint32_t node, port;
  uint64_t user_id;
  uint32_t flags;
  bool operator==(const Record& o) const {
    return time == o.time && kind == o.kind && reason == o.reason && node == o.node &&
           port == o.port && user_id == o.user_id && flags == o.flags;
  }
};

std::ostream& operator<<(std::ostream& os, const Record& r) {
  return os << "{t=" << r.time << " kind=" << r.kind << " node=" << r.node << " port=" << r.port
            << " id=" << r.user_id << " flags=" << r.flags << "}";
}

using nmtest::Mix;

struct Host;

// One model, on one engine (par == nullptr) or on partitions.
struct Model {
  nm_network* net = nullptr;
  nm_parallel* par = nullptr;
  nm_engine* engine = nullptr;
  uint32_t hosts = 0;
  std::vector<Host> *host_state = nullptr;
  // Records by partition (one list when on one engine); each partition's runner writes its own.
  std::vector<std::vector<Record>> records;
};

struct Host {
  Model* model;
  uint32_t id;
  uint64_t sent = 0;
};

thread_local uint32_t t_partition;  // which partition this thread runs now

void OnTrace(void* ctx, const nm_trace_record* rec) {
  auto* m = static_cast<Model*>(ctx);
  m->records[m->par ? t_partition : 0].push_back(
      {rec->time, rec->kind, rec->reason, rec->node, rec->port,
       rec->packet ? rec->packet->user_id : 0, rec->packet ? rec->packet->flags : 0u});
}

nm_engine* HostEngine(Model* m, uint32_t host) {
  return m->par ? nm_parallel_engine(m->par, nm_network_host_partition(m->net, host)) : m->engine;
}

// A packet of 40 in 256 is answered with a small one, from the delivery (as a NIC's ACK).
void OnDeliver(void* ctx, const nm_packet* pkt) {
  auto* m = static_cast<Model*>(ctx);
  if (pkt->user_id % 256 >= 40 || pkt->flags & NM_PKT_DUPLICATE) return;
  nm_packet reply = nmtest::Packet(pkt->dst, pkt->src, pkt->flow ^ 1, 64, Mix(pkt->user_id));
  EXPECT_EQ(0, nm_network_inject(m->net, &reply));
}

// A host's generator: a packet to a random other host, then the next after a random gap.
void Send(nm_engine* engine, void* ctx, uint64_t) {
  auto* h = static_cast<Host*>(ctx);
  Model* m = h->model;
  uint64_t r = Mix(uint64_t(h->id) << 32 | h->sent++);
  uint32_t dst = (h->id + 1 + r % (m->hosts - 1)) % m->hosts;
  uint32_t bytes = 64 + (r >> 16) % 1000;
  nm_packet pkt = nmtest::Packet(h->id, dst, (r >> 32) % 4, bytes, r);
  EXPECT_EQ(0, nm_network_inject(m->net, &pkt));
  nm_time_ns now = nm_engine_now(engine);
  if (now < kSendUntil) {
    EXPECT_EQ(0, nm_engine_schedule(engine, now + 50 + (r >> 40) % 600, h->id, Send, h, 0,
                                    nullptr));
  }
}

nm_config Config(nm_topology_kind kind, uint32_t hosts,
                 nm_flow_control fc = NM_FLOW_CONTROL_DROP) {
  nm_config cfg = nmtest::SmallNetwork({kind, hosts, 8000000000ull, 200, 100, fc, 6000, 3000});
  cfg.impair.loss_rate = 0.02;
  cfg.impair.corrupt_rate = 0.01;
  cfg.impair.duplicate_rate = 0.01;
  cfg.impair.reorder_rate = 0.02;
  cfg.impair.reorder_delay_ns = 700;
  cfg.seed = 7;
  return cfg;
}

constexpr nm_time_ns kLookahead = 200;  // the least hop that crosses, in credit mode: a link
nm_time_ns g_lookahead = kLookahead;    // what the runs use

struct ModelRun {
  Model model;
  std::vector<Host> host_state;
  nm_network_stats stats{};
  uint64_t pauses = 0;
};

void Build(ModelRun& run, const nm_config& cfg, uint32_t partitions, uint32_t trace_mask) {
  Model& m = run.model;
  nm_error err{};
  m.hosts = cfg.topology.hosts;
  if (partitions == 0) {
    ASSERT_EQ(0, nm_engine_create(&m.engine));
    ASSERT_EQ(0, nm_network_create(m.engine, &cfg, &m.net, &err)) << err.msg;
    m.records.resize(1);
  } else {
    ASSERT_EQ(0, nm_parallel_create_in(nullptr, partitions, g_lookahead, &m.par));
    ASSERT_EQ(0, nm_network_create_parallel(m.par, nullptr, &cfg, &m.net, &err)) << err.msg;
    m.records.resize(partitions);
  }
  nm_network_set_trace(m.net, OnTrace, &m);
  nm_network_set_trace_mask(m.net, trace_mask);
  nm_network_set_deliver(m.net, OnDeliver, &m);
  run.host_state.resize(m.hosts);
  for (uint32_t h = 0; h < m.hosts; h++) {
    run.host_state[h] = Host{&m, h};
    ASSERT_EQ(0, nm_engine_schedule(HostEngine(&m, h), h * 7, h, Send, &run.host_state[h], 0,
                                    nullptr));
  }
}

void Finish(ModelRun& run) {
  nm_network_stats_get(run.model.net, &run.stats);
  for (uint32_t id = 0; id < nm_network_topology(run.model.net)->port_count; id++) {
    nm_port_stats ps;
    ASSERT_EQ(0, nm_network_port_stats_get(run.model.net, id, &ps));
    run.pauses += ps.pauses;
  }
  nm_network_destroy(run.model.net);
  nm_parallel_destroy(run.model.par);
  if (run.model.engine) nm_engine_destroy(run.model.engine);
}

void OneEngine(ModelRun& run, const nm_config& cfg, uint32_t trace_mask) {
  Build(run, cfg, 0, trace_mask);
  nm_engine_run_until(run.model.engine, NM_TIME_NEVER);
  Finish(run);
}

void TakingTurns(ModelRun& run, const nm_config& cfg, uint32_t partitions, uint32_t trace_mask) {
  Build(run, cfg, partitions, trace_mask);
  for (uint32_t p = 0; p < partitions; p++) nm_parallel_wait(run.model.par, p, NM_TIME_NEVER);
  for (bool idle = false; !idle;) {
    idle = true;
    for (uint32_t p = 0; p < partitions; p++) {
      t_partition = p;
      if (nm_parallel_run(run.model.par, p, nullptr, nullptr, NM_TIME_NEVER) !=
          NM_PARALLEL_IDLE)
        idle = false;
    }
  }
  for (uint32_t p = 0; p < partitions; p++) EXPECT_EQ(0u, nm_parallel_late(run.model.par, p));
  Finish(run);
}

void AtOnce(ModelRun& run, const nm_config& cfg, uint32_t partitions, uint32_t trace_mask) {
  Build(run, cfg, partitions, trace_mask);
  std::vector<std::thread> threads;
  for (uint32_t p = 0; p < partitions; p++)
    threads.emplace_back([&run, p] {
      t_partition = p;
      nm_parallel_wait(run.model.par, p, NM_TIME_NEVER);
      for (unsigned spins = 1; nm_parallel_run(run.model.par, p, nullptr, nullptr,
                                               NM_TIME_NEVER) != NM_PARALLEL_IDLE;
           spins++)
        if (spins % 64 == 0) sched_yield();
    });
  for (auto& t : threads) t.join();
  for (uint32_t p = 0; p < partitions; p++) EXPECT_EQ(0u, nm_parallel_late(run.model.par, p));
  Finish(run);
}

// The one engine's records, split by the partition each would come from.
std::vector<std::vector<Record>> Split(const std::vector<Record>& all, const nm_config& cfg,
                                       uint32_t partitions) {
  nm_parallel* par = nullptr;
  nm_network* net = nullptr;
  nm_error err{};
  EXPECT_EQ(0, nm_parallel_create_in(nullptr, partitions, g_lookahead, &par));
  EXPECT_EQ(0, nm_network_create_parallel(par, nullptr, &cfg, &net, &err)) << err.msg;
  std::vector<std::vector<Record>> split(partitions);
  for (const Record& r : all) {
    uint32_t p = r.kind == NM_TRACE_DELIVER ? nm_network_host_partition(net, r.node)
                                            : nm_network_port_partition(net, r.port);
    split.at(p).push_back(r);
  }
  nm_network_destroy(net);
  nm_parallel_destroy(par);
  return split;
}

void ExpectSameRecords(const std::vector<std::vector<Record>>& got,
                       const std::vector<std::vector<Record>>& want) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t p = 0; p < want.size(); p++) {
    SCOPED_TRACE("partition " + std::to_string(p));
    ASSERT_EQ(want[p].size(), got[p].size());
    for (size_t i = 0; i < want[p].size(); i++)
      ASSERT_EQ(want[p][i], got[p][i]) << "record " << i;
  }
}

struct Case {
  const char* name;
  nm_topology_kind kind;
  uint32_t hosts, partitions;
  uint32_t trace_mask;
  nm_flow_control fc;
};

class NetworkParallel : public ::testing::TestWithParam<Case> {};

TEST_P(NetworkParallel, EveryPartitionSeesWhatOneEngineDoes) {
  const Case& c = GetParam();
  nm_config cfg = Config(c.kind, c.hosts, c.fc);
  ModelRun one, turns;
  OneEngine(one, cfg, c.trace_mask);
  TakingTurns(turns, cfg, c.partitions, c.trace_mask);
  auto want = Split(one.model.records[0], cfg, c.partitions);

  // The model does what the test is about: traffic between partitions, losses, marks.
  EXPECT_GT(one.stats.delivered, 1000u);
  EXPECT_GT(one.stats.dropped[NM_DROP_LOSS], 10u);
  EXPECT_GT(one.stats.dropped[NM_DROP_BUFFER] + one.stats.ecn_marked, 10u);
  EXPECT_GT(one.stats.duplicated, 5u);
  if (c.fc == NM_FLOW_CONTROL_CREDIT) {
    EXPECT_GT(one.pauses, 10u);  // the credits run out
    EXPECT_EQ(one.pauses, turns.pauses);
  }
  ExpectSameRecords(turns.model.records, want);
  nmtest::ExpectSameTotals(turns.stats, one.stats);
  for (int i = 0; i < 3; i++) {
    SCOPED_TRACE("threads, run " + std::to_string(i));
    ModelRun at_once;
    AtOnce(at_once, cfg, c.partitions, c.trace_mask);
    ExpectSameRecords(at_once.model.records, want);
    nmtest::ExpectSameTotals(at_once.stats, one.stats);
    EXPECT_EQ(one.pauses, at_once.pauses);
  }
}

// Without credits, nothing crosses sooner than a link and a switch: that is the lookahead, and
// every partition still runs what one engine does.
TEST(NetworkParallelLookahead, TheLeastCrossingHopIsEnough) {
  nm_config cfg = Config(NM_TOPO_FATTREE, 8);
  g_lookahead = cfg.link.latency_ns + cfg.sw.latency_ns;
  ModelRun one, turns, at_once;
  OneEngine(one, cfg, UINT32_MAX);
  TakingTurns(turns, cfg, 8, UINT32_MAX);
  AtOnce(at_once, cfg, 8, UINT32_MAX);
  auto want = Split(one.model.records[0], cfg, 8);
  g_lookahead = kLookahead;
  EXPECT_GT(one.stats.delivered, 1000u);
  ExpectSameRecords(turns.model.records, want);
  ExpectSameRecords(at_once.model.records, want);
}

constexpr uint32_t kAll = UINT32_MAX;
constexpr uint32_t kCoasting = ~(1u << NM_TRACE_TX_END);  // lets packets coast where they may

INSTANTIATE_TEST_SUITE_P(
    Networks, NetworkParallel,
    ::testing::Values(
        Case{"star4", NM_TOPO_STAR, 4, 4, kAll, NM_FLOW_CONTROL_DROP},
        Case{"star8_coasting", NM_TOPO_STAR, 8, 4, kCoasting, NM_FLOW_CONTROL_DROP},
        Case{"fattree8", NM_TOPO_FATTREE, 8, 8, kAll, NM_FLOW_CONTROL_DROP},
        Case{"fattree8_coasting", NM_TOPO_FATTREE, 8, 3, kCoasting, NM_FLOW_CONTROL_DROP},
        Case{"star8_credit", NM_TOPO_STAR, 8, 8, kAll, NM_FLOW_CONTROL_CREDIT},
        Case{"fattree8_credit_coasting", NM_TOPO_FATTREE, 8, 4, kCoasting,
             NM_FLOW_CONTROL_CREDIT}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// A one-way stream: every packet is taken in the sender's partition and freed in the
// receiver's. The slots come back to the sender through the depot, so the pool does not grow
// with the length of the stream.
struct Stream {
  nm_network* net;
  uint64_t left;
};

void StreamSend(nm_engine* engine, void* ctx, uint64_t) {
  auto* s = static_cast<Stream*>(ctx);
  nm_packet pkt = nmtest::Packet(0, 1, 0, 64, s->left);
  EXPECT_EQ(0, nm_network_inject(s->net, &pkt));
  if (--s->left)
    EXPECT_EQ(0, nm_engine_schedule(engine, nm_engine_now(engine) + 100, 0, StreamSend, s, 0,
                                    nullptr));
}

void Ignore(void*, const nm_packet*) {}

size_t StreamMemory(uint64_t packets) {
  nm_parallel* par = nullptr;
  nm_network* net = nullptr;
  nm_error err{};
  EXPECT_EQ(0, nm_parallel_create_in(nullptr, 2, kLookahead, &par));
  nm_config cfg = nmtest::SmallNetwork(
      {NM_TOPO_STAR, 2, 8000000000ull, 200, 100, NM_FLOW_CONTROL_DROP, 60000, 30000});
  EXPECT_EQ(0, nm_network_create_parallel(par, nullptr, &cfg, &net, &err)) << err.msg;
  nm_network_set_deliver(net, Ignore, nullptr);
  Stream stream{net, packets};
  EXPECT_EQ(0, nm_engine_schedule(nm_parallel_engine(par, nm_network_host_partition(net, 0)), 0,
                                  0, StreamSend, &stream, 0, nullptr));
  for (uint32_t p = 0; p < 2; p++) nm_parallel_wait(par, p, NM_TIME_NEVER);
  for (bool idle = false; !idle;) {
    idle = true;
    for (uint32_t p = 0; p < 2; p++)
      if (nm_parallel_run(par, p, nullptr, nullptr, NM_TIME_NEVER) != NM_PARALLEL_IDLE)
        idle = false;
  }
  nm_network_stats stats;
  nm_network_stats_get(net, &stats);
  EXPECT_EQ(packets, stats.delivered);
  size_t bytes = nm_network_memory_bytes(net);
  nm_network_destroy(net);
  nm_parallel_destroy(par);
  return bytes;
}

TEST(NetworkParallelPool, AOneWayStreamReusesItsPackets) {
  // Ten times the packets, ten times the pool's first chunk: the same memory.
  EXPECT_EQ(StreamMemory(20000), StreamMemory(200000));
}

nm_time_ns LeastCrossing(const nm_config& cfg) {
  nm_engine* engine = nullptr;
  nm_network* net = nullptr;
  nm_error err{};
  EXPECT_EQ(0, nm_engine_create(&engine));
  EXPECT_EQ(0, nm_network_create(engine, &cfg, &net, &err)) << err.msg;
  nm_time_ns least = net ? nm_network_least_crossing_ns(net) : 0;
  nm_network_destroy(net);
  nm_engine_destroy(engine);
  return least;
}

TEST(NetworkParallelCreate, RefusesWhatCannotBePartitioned) {
  nm_parallel* par = nullptr;
  nm_network* net = nullptr;
  nm_error err{};
  ASSERT_EQ(0, nm_parallel_create_in(nullptr, 2, kLookahead, &par));

  // A packet crosses to another partition at the next switch, after the link and the switch's
  // forwarding; credits come back over the link alone.
  nm_config cfg = Config(NM_TOPO_STAR, 4);
  EXPECT_EQ(cfg.link.latency_ns + cfg.sw.latency_ns, LeastCrossing(cfg));
  cfg.link.latency_ns = kLookahead - cfg.sw.latency_ns - 1;
  EXPECT_EQ(kLookahead - 1, LeastCrossing(cfg));
  EXPECT_EQ(-EINVAL, nm_network_create_parallel(par, nullptr, &cfg, &net, &err));
  EXPECT_NE(std::string(err.msg).find("lookahead"), std::string::npos) << err.msg;
  cfg = Config(NM_TOPO_STAR, 4, NM_FLOW_CONTROL_CREDIT);
  EXPECT_EQ(cfg.link.latency_ns, LeastCrossing(cfg));
  cfg.link.latency_ns = kLookahead - 1;
  EXPECT_EQ(-EINVAL, nm_network_create_parallel(par, nullptr, &cfg, &net, &err));
  EXPECT_NE(std::string(err.msg).find("lookahead"), std::string::npos) << err.msg;

  cfg = Config(NM_TOPO_STAR, 4);
  cfg.sw.flow_control = NM_FLOW_CONTROL_PAUSE;
  EXPECT_EQ(-EINVAL, nm_network_create_parallel(par, nullptr, &cfg, &net, &err));
  EXPECT_NE(std::string(err.msg).find("pause"), std::string::npos) << err.msg;

  cfg = Config(NM_TOPO_PAIR, 2);
  EXPECT_EQ(-EINVAL, nm_network_create_parallel(par, nullptr, &cfg, &net, &err));
  EXPECT_NE(std::string(err.msg).find("pair"), std::string::npos) << err.msg;

  cfg = Config(NM_TOPO_STAR, 4);
  const uint32_t bad[] = {0, 1, 2, 0};
  EXPECT_EQ(-EINVAL, nm_network_create_parallel(par, bad, &cfg, &net, &err));
  EXPECT_NE(std::string(err.msg).find("partition 2"), std::string::npos) << err.msg;

  // In credit mode the credits of what host 0 sends come back over the switch's port towards
  // it, from whichever partition the packet left the switch in: that direction is checked too.
  cfg = Config(NM_TOPO_STAR, 4, NM_FLOW_CONTROL_CREDIT);
  ASSERT_EQ(0, nm_network_create_parallel(par, nullptr, &cfg, &net, &err)) << err.msg;
  const nm_topology* topo = nm_network_topology(net);
  uint32_t towards_host0 = topo->ports[topo->nodes[0].first_port].peer_port;
  nm_link_params short_back = cfg.link;
  short_back.latency_ns = kLookahead - 1;
  EXPECT_EQ(-EINVAL, nm_network_set_port_link(net, towards_host0, &short_back, &err));
  EXPECT_NE(std::string(err.msg).find("lookahead"), std::string::npos) << err.msg;
  nm_network_destroy(net);
  net = nullptr;
  {
    nm_engine* engine = nullptr;
    nm_network* one = nullptr;
    ASSERT_EQ(0, nm_engine_create(&engine));
    ASSERT_EQ(0, nm_network_create(engine, &cfg, &one, &err)) << err.msg;
    ASSERT_EQ(0, nm_network_set_port_link(one, towards_host0, &short_back, &err)) << err.msg;
    EXPECT_EQ(kLookahead - 1, nm_network_least_crossing_ns(one));
    nm_network_destroy(one);
    nm_engine_destroy(engine);
  }

  cfg = Config(NM_TOPO_STAR, 4);
  const uint32_t good[] = {1, 1, 0, 0};
  ASSERT_EQ(0, nm_network_create_parallel(par, good, &cfg, &net, &err)) << err.msg;
  EXPECT_EQ(1u, nm_network_host_partition(net, 1));
  EXPECT_EQ(0u, nm_network_host_partition(net, 2));
  EXPECT_EQ(nullptr, nm_network_engine(net));
  nm_msglayer* layer = nullptr;
  EXPECT_EQ(-EINVAL, nm_msglayer_create(net, nullptr, nullptr, &layer));
  nm_link_params link = cfg.link;
  link.latency_ns = 10;
  EXPECT_EQ(-EINVAL, nm_network_set_port_link(net, 0, &link, &err));  // a host's port
  nm_network_destroy(net);
  nm_parallel_destroy(par);
}

}  // namespace
