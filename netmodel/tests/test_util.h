// Helpers shared by the netmodel tests: building a network from a preset, collecting what
// arrives, and an independent serialization formula (tests never reuse the library's own).
#ifndef NETMODEL_TESTS_TEST_UTIL_H
#define NETMODEL_TESTS_TEST_UTIL_H

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

extern "C" {
#include "netmodel/nm_config.h"
#include "netmodel/nm_engine.h"
#include "netmodel/nm_message.h"
#include "netmodel/nm_network.h"
#include "netmodel/nm_preset.h"
}

namespace nmtest {

// ceil(bytes * 8 * 1e9 / bps), in 128-bit arithmetic: what a link takes to send `bytes`.
inline uint64_t SerNs(uint64_t bytes, uint64_t bps) {
  if (bps == 0) return 0;
  unsigned __int128 bits_ns = static_cast<unsigned __int128>(bytes) * 8u * 1000000000u;
  return static_cast<uint64_t>((bits_ns + bps - 1) / bps);
}

inline nm_config Preset(const char* name) {
  nm_config cfg;
  nm_error err;
  EXPECT_EQ(0, nm_preset_load(&cfg, name, &err)) << err.msg;
  return cfg;
}

// An engine and a network built from a config, destroyed together.
struct Sim {
  nm_engine* engine = nullptr;
  nm_network* net = nullptr;

  // arena: where the model lives (nullptr: process memory).
  explicit Sim(const nm_config& cfg, fs_arena* arena = nullptr) {
    EXPECT_EQ(0, nm_engine_create_in(arena, &engine));
    nm_error err;
    int rc = nm_network_create(engine, &cfg, &net, &err);
    EXPECT_EQ(0, rc) << err.msg;
  }
  ~Sim() {
    nm_network_destroy(net);
    nm_engine_destroy(engine);
  }
  Sim(const Sim&) = delete;
  Sim& operator=(const Sim&) = delete;

  uint32_t HostPort(uint32_t host) const {
    return nm_topology_port_id(nm_network_topology(net), host, 0);
  }
};

struct Arrival {
  nm_time_ns time;
  nm_packet pkt;
};

// Records every delivered packet with its arrival time.
struct Collector {
  nm_engine* engine;
  std::vector<Arrival> arrivals;

  static void OnDeliver(void* ctx, const nm_packet* pkt) {
    auto* self = static_cast<Collector*>(ctx);
    self->arrivals.push_back({nm_engine_now(self->engine), *pkt});
  }
  void Attach(Sim& sim) {
    engine = sim.engine;
    nm_network_set_deliver(sim.net, OnDeliver, this);
  }
};

// A 64-bit mixer (splitmix64's finalizer): the random choices of models that must make the same
// ones however their events are run, drawn from an event's own numbers.
inline uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The network's counters agree, but the peak in flight (not kept across partitions).
inline void ExpectSameTotals(const nm_network_stats& got, const nm_network_stats& want) {
  EXPECT_EQ(want.injected, got.injected);
  EXPECT_EQ(want.delivered, got.delivered);
  EXPECT_EQ(want.ecn_marked, got.ecn_marked);
  EXPECT_EQ(want.duplicated, got.duplicated);
  EXPECT_EQ(want.corrupted, got.corrupted);
  EXPECT_EQ(want.in_flight, got.in_flight);
  for (int r = 0; r < NM_DROP_REASON_COUNT; r++)
    EXPECT_EQ(want.dropped[r], got.dropped[r]) << "drop reason " << r;
}

inline nm_packet Packet(uint32_t src, uint32_t dst, uint64_t flow, uint32_t bytes,
                        uint64_t user_id = 0) {
  nm_packet pkt{};
  pkt.flow = flow;
  pkt.user_id = user_id;
  pkt.bytes = bytes;
  pkt.src = src;
  pkt.dst = dst;
  return pkt;
}

}  // namespace nmtest

#endif
