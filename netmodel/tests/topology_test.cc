// Topology wiring and routing: every port's peer points back, every route reaches its
// destination in the documented number of hops, ECMP keeps a flow on one path and spreads flows.
#include <gtest/gtest.h>

#include <cerrno>
#include <set>
#include <vector>

extern "C" {
#include "netmodel/nm_topology.h"
}

namespace {

class TopologyTest : public ::testing::Test {
 protected:
  void TearDown() override { nm_topology_release(&topo_); }
  void Build(nm_topology_params p) {
    nm_error err;
    ASSERT_EQ(0, nm_topology_init(&topo_, &p, &err)) << err.msg;
  }
  // Follows the route; returns the hop count, or -1 on a loop.
  int Walk(uint32_t src, uint32_t dst, uint64_t flow, std::vector<uint32_t>* ports = nullptr) {
    uint32_t node = src;
    for (int hops = 0; hops <= NM_TOPOLOGY_MAX_HOPS; hops++) {
      if (node == dst) return hops;
      uint32_t local = nm_topology_route(&topo_, node, flow, src, dst);
      uint32_t port = nm_topology_port_id(&topo_, node, local);
      EXPECT_NE(UINT32_MAX, port);
      if (ports) ports->push_back(port);
      node = topo_.ports[topo_.ports[port].peer_port].node;
    }
    return -1;
  }
  nm_topology topo_{};
};

void CheckWiring(const nm_topology& t) {
  for (uint32_t p = 0; p < t.port_count; p++) {
    const nm_topology_port& port = t.ports[p];
    EXPECT_EQ(p, t.ports[port.peer_port].peer_port);
    EXPECT_EQ(port.link, t.ports[port.peer_port].link);
    uint32_t a = t.link_ports[2 * port.link], b = t.link_ports[2 * port.link + 1];
    EXPECT_TRUE(p == a || p == b);
    const nm_topology_node& n = t.nodes[port.node];
    EXPECT_GE(p, n.first_port);
    EXPECT_LT(p, n.first_port + n.port_count);
  }
}

TEST_F(TopologyTest, PairIsOneLink) {
  Build({NM_TOPO_PAIR, 2, 0, 0});
  EXPECT_EQ(2u, topo_.node_count);
  EXPECT_EQ(1u, topo_.link_count);
  CheckWiring(topo_);
  EXPECT_EQ(1, Walk(0, 1, 0));
  EXPECT_EQ(1, Walk(1, 0, 0));
}

TEST_F(TopologyTest, StarRoutesThroughTheSwitch) {
  Build({NM_TOPO_STAR, 5, 0, 0});
  EXPECT_EQ(6u, topo_.node_count);
  EXPECT_EQ(NM_NODE_SWITCH, topo_.nodes[5].kind);
  CheckWiring(topo_);
  for (uint32_t s = 0; s < 5; s++)
    for (uint32_t d = 0; d < 5; d++) {
      if (s == d) continue;
      EXPECT_EQ(2, Walk(s, d, s * 7 + d));
    }
}

TEST_F(TopologyTest, FatTreeShapeRoutesAndEcmp) {
  // 2:1 oversubscription: 8 hosts per leaf, 4 uplinks (= 4 spines), 4 leaves.
  Build({NM_TOPO_FATTREE, 32, 8, 4});
  EXPECT_EQ(32u + 4 + 4, topo_.node_count);
  EXPECT_EQ(32u + 4 * 4, topo_.link_count);
  CheckWiring(topo_);
  std::set<uint32_t> uplinks_used;
  for (uint32_t s = 0; s < 32; s++) {
    for (uint32_t d = 0; d < 32; d++) {
      if (s == d) continue;
      int expected = (s / 8 == d / 8) ? 2 : 4;
      std::vector<uint32_t> a, b;
      ASSERT_EQ(expected, Walk(s, d, 1000 + s, &a));
      ASSERT_EQ(expected, Walk(s, d, 1000 + s, &b));
      EXPECT_EQ(a, b);  // one flow, one path
      if (expected == 4) uplinks_used.insert(a[1]);
    }
  }
  EXPECT_EQ(16u, uplinks_used.size());  // every leaf's every uplink carries some flow
  // Flows between one pair spread over the 4 uplinks.
  std::set<uint32_t> spread;
  for (uint64_t flow = 0; flow < 64; flow++) {
    std::vector<uint32_t> ports;
    Walk(0, 31, flow, &ports);
    spread.insert(ports[1]);
  }
  EXPECT_EQ(4u, spread.size());
}

TEST(TopologyParams, BadShapesAreRejectedWithTheKeyName) {
  nm_error err;
  nm_topology t;
  nm_topology_params pair3{NM_TOPO_PAIR, 3, 0, 0};
  EXPECT_EQ(-EINVAL, nm_topology_init(&t, &pair3, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "topology.hosts: 3"));
  nm_topology_params uneven{NM_TOPO_FATTREE, 30, 8, 4};
  EXPECT_EQ(-EINVAL, nm_topology_init(&t, &uneven, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "multiple of hosts_per_leaf"));
  nm_topology_params no_uplinks{NM_TOPO_FATTREE, 32, 8, 0};
  EXPECT_EQ(-EINVAL, nm_topology_init(&t, &no_uplinks, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "topology.uplinks_per_leaf: 0"));
  // Every count in range, but 2^31 + 2^19 links: their ports overflowed
  // 32 bits and the wiring wrote past its arrays.
  nm_topology_params too_many_links{NM_TOPO_FATTREE, 1u << 19, 1, 4096};
  EXPECT_EQ(-EINVAL, nm_topology_init(&t, &too_many_links, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "links (allowed: up to"));
}

}  // namespace
