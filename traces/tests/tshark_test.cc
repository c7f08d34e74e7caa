// A generated trace of every opcode, with drops, corruption, duplicates and retransmissions, read
// back by tshark: no malformed or unknown packets, and the fields tshark extracts (opcode, QP,
// PSN, RETH, AETH, AtomicETH, DETH, ImmDt) equal what was written. Skipped, with the reason
// printed, when tshark is not installed.
#include "traces/tests/test_util.h"

#include <map>
#include <sstream>

namespace {

using trtest::Split;
using trtest::Written;

#define REQUIRE_TSHARK()                                                        \
  do {                                                                          \
    if (!trtest::HaveTshark()) GTEST_SKIP() << "tshark is not installed";       \
  } while (0)

std::string Hex(uint64_t v, int width) {
  std::ostringstream s;
  s << "0x" << std::hex;
  s.width(width);
  s.fill('0');
  s << v;
  return s.str();
}

// The data packets of the written list, in file order (markers are extra frames in the file).
struct Frame {
  const Written* w;  // nullptr for a marker
};

std::vector<Frame> FileOrder(const std::vector<Written>& list) {
  std::vector<Frame> out;
  for (const auto& w : list) {
    if (w.flags) out.push_back({nullptr});
    out.push_back({&w});
  }
  return out;
}

class TsharkTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(TsharkTest, DecodesEveryPacketAsWritten) {
  REQUIRE_TSHARK();
  auto [ipv, vlans] = GetParam();
  auto list = trtest::Conversation(1000, 1000, static_cast<uint8_t>(ipv), static_cast<uint8_t>(vlans));
  std::string path = trtest::TempPath("tshark_" + std::to_string(ipv) + "_" +
                                      std::to_string(vlans) + ".pcap");
  ASSERT_TRUE(trtest::WriteTrace(path, list));

  int st;
  // No frame may be malformed or carry an expert warning or error.
  std::string bad = trtest::Tshark(
      "-r " + path + " -Y '_ws.malformed || _ws.expert.severity >= warning' -T fields -e frame.number",
      &st);
  ASSERT_EQ(0, st);
  EXPECT_EQ("", bad) << "frames tshark flags";

  std::string out = trtest::Tshark(
      "-r " + path +
          " -T fields -E separator=/t -E occurrence=f -e frame.protocols -e infiniband.bth.opcode"
          " -e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.bth.padcnt"
          " -e infiniband.reth.va -e infiniband.reth.r_key -e infiniband.reth.dmalen"
          " -e infiniband.aeth.syndrome -e infiniband.aeth.msn -e infiniband.atomiceth.swapdt"
          " -e infiniband.atomiceth.cmpdt -e infiniband.atomicacketh.origremdt"
          " -e infiniband.deth.q_key -e infiniband.deth.srcqp -e infiniband.immdt -e udp.srcport",
      &st);
  ASSERT_EQ(0, st);
  auto lines = Split(out, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  auto frames = FileOrder(list);
  ASSERT_EQ(frames.size(), lines.size());
  for (size_t i = 0; i < frames.size(); i++) {
    auto f = Split(lines[i], '\t');
    ASSERT_GE(f.size(), 17u) << lines[i];
    SCOPED_TRACE("frame " + std::to_string(i + 1) + ": " + lines[i]);
    if (!frames[i].w) {
      EXPECT_EQ("eth:ethertype:data", f[0]) << "marker frame";
      continue;
    }
    const tr_packet& p = frames[i].w->pkt;
    const tr_opcode_info* op = tr_opcode(p.opcode);
    std::string ip = ipv == 6 ? "ipv6" : "ip";
    std::string vl;
    for (int v = 0; v < vlans; v++) vl += "vlan:ethertype:";
    EXPECT_EQ(0u, f[0].find("eth:ethertype:" + vl + ip + ":udp:infiniband")) << f[0];
    EXPECT_EQ(std::to_string(p.opcode), f[1]);
    EXPECT_EQ(Hex(p.dest_qp, 6), f[2]);
    EXPECT_EQ(std::to_string(p.psn), f[3]);
    uint32_t data = p.payload_len + ((p.flags & TR_PKT_TAGHDR) ? TR_TAG_LEN : 0);
    EXPECT_EQ(std::to_string((4 - data % 4) % 4), f[4]);
    if (op->hdrs & TR_HDR_BIT(TR_HDR_RETH)) {
      EXPECT_EQ(Hex(p.reth.va, 16), f[5]);
      EXPECT_EQ(Hex(p.reth.rkey, 8), f[6]);
      EXPECT_EQ(std::to_string(p.reth.dma_len), f[7]);
    } else if (op->hdrs & TR_HDR_BIT(TR_HDR_ATOMICETH)) {
      EXPECT_EQ(Hex(p.atomic.va, 16), f[5]);  // AtomicETH's VA/R_Key show as RETH fields
      EXPECT_EQ(Hex(p.atomic.rkey, 8), f[6]);
      EXPECT_EQ(std::to_string(p.atomic.swap_add), f[10]);
      EXPECT_EQ(std::to_string(p.atomic.compare), f[11]);
    } else {
      EXPECT_EQ("", f[5]);
    }
    if (op->hdrs & TR_HDR_BIT(TR_HDR_AETH)) {
      EXPECT_EQ(std::to_string(p.aeth.syndrome), f[8]);
      EXPECT_EQ(std::to_string(p.aeth.msn), f[9]);
    } else {
      EXPECT_EQ("", f[8]);
    }
    if (op->hdrs & TR_HDR_BIT(TR_HDR_ATOMICACKETH))
      EXPECT_EQ(std::to_string(p.atomic_ack_orig), f[12]);
    if (op->hdrs & TR_HDR_BIT(TR_HDR_DETH)) {
      EXPECT_EQ(Hex(p.deth.qkey, 16), f[13]);  // tshark shows these wider than they are
      EXPECT_EQ(Hex(p.deth.src_qp, 8), f[14]);
    }
    if (op->hdrs & TR_HDR_BIT(TR_HDR_IMMDT)) {
      char imm[16];
      snprintf(imm, sizeof(imm), "%08x", p.immdt);
      EXPECT_EQ(imm, f[15]);
    }
    EXPECT_EQ(std::to_string(p.udp_sport), f[16]);
  }
}

INSTANTIATE_TEST_SUITE_P(IpAndVlans, TsharkTest,
                         ::testing::Values(std::make_tuple(4, 0), std::make_tuple(6, 0),
                                           std::make_tuple(4, 1), std::make_tuple(6, 2)));

}  // namespace
