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
    if (op->hdrs & TR_HDR_BIT(TR_HDR_ATOMICACKETH)) {
      EXPECT_EQ(std::to_string(p.atomic_ack_orig), f[12]);
    }
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

// The project's Lua dissector over the same trace: every marker's fields, the marks it puts on
// the frame after it, every tag header; no Lua error, nothing malformed.
TEST(LuaDissector, DecodesMarkersMarksAndTags) {
  REQUIRE_TSHARK();
  const std::string lua = "traces/wireshark/fabsim.lua";
  ASSERT_TRUE(std::ifstream(lua).good()) << lua << " is not in the runfiles";
  auto list = trtest::Conversation(5000, 700, 4, 1);
  std::string path = trtest::TempPath("lua.pcap");
  ASSERT_TRUE(trtest::WriteTrace(path, list));
  int st;
  std::string errfile = trtest::TempPath("lua.stderr");
  std::string out = trtest::Run(
      "HOME=" + trtest::TempPath("") + " tshark -X lua_script:" + lua + " -r " + path +
          " -T fields -E separator=/t -e frame.number -e fabsim.mark.flags -e fabsim.mark.reason"
          " -e fabsim.mark.node -e fabsim.mark.port -e fabsim.mark.link -e fabsim.mark.length"
          " -e fabsim.marked.flags -e fabsim.marked.by -e fabsim.tag.tag -e fabsim.tag.flags"
          " -e fabsim.tag.len -e _ws.malformed -e _ws.expert.severity 2>" + errfile,
      &st);
  ASSERT_EQ(0, st);
  std::string err;
  trtest::Bytes stderr_bytes = trtest::ReadFile(errfile);
  for (const auto& line : Split(std::string(stderr_bytes.begin(), stderr_bytes.end()), '\n'))
    if (!line.empty() && line.find("Running as user") == std::string::npos) err += line + "\n";
  EXPECT_EQ("", err) << "tshark's stderr";
  auto lines = Split(out, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  auto frames = FileOrder(list);
  ASSERT_EQ(frames.size(), lines.size());
  size_t tags = 0, marks = 0;
  for (size_t i = 0; i < frames.size(); i++) {
    auto f = Split(lines[i], '\t');
    ASSERT_EQ(14u, f.size()) << lines[i];
    SCOPED_TRACE(lines[i]);
    EXPECT_EQ("", f[12]) << "malformed";
    if (!frames[i].w) {  // the marker: describes frames[i + 1]
      const Written& next = *frames[i + 1].w;
      EXPECT_EQ(Hex(next.flags, 4), f[1]);
      EXPECT_EQ(std::to_string(next.where.reason), f[2]);
      EXPECT_EQ(std::to_string(next.where.node), f[3]);
      EXPECT_EQ(std::to_string(next.where.port), f[4]);
      EXPECT_EQ(std::to_string(next.where.link), f[5]);
      EXPECT_EQ(std::to_string(next.frame.size()), f[6]);
      marks++;
      continue;
    }
    const Written& w = *frames[i].w;
    EXPECT_EQ("", f[1]);
    if (w.flags) {
      EXPECT_EQ(Hex(w.flags, 4), f[7]);
      EXPECT_EQ(std::to_string(i), f[8]);  // marked by the frame before (1-based i)
    } else {
      EXPECT_EQ("", f[7]);
    }
    if (w.pkt.flags & TR_PKT_TAGHDR) {
      EXPECT_EQ(Hex(w.pkt.tag.tag, 16), f[9]);
      EXPECT_EQ(Hex(w.pkt.tag.flags, 2), f[10]);
      EXPECT_EQ("16", f[11]);
      tags++;
    } else {
      EXPECT_EQ("", f[9]);
    }
  }
  EXPECT_EQ(3u, tags);
  EXPECT_EQ(9u, marks);
}

// A payload that starts with a fabsim header's magic but whose version or length field says
// otherwise is payload, as `fabsim trace summary` takes it: the dissector shows no tag.
TEST(LuaDissector, PayloadThatOnlyStartsWithTheMagicIsPayload) {
  REQUIRE_TSHARK();
  const std::string lua = "traces/wireshark/fabsim.lua";
  std::vector<Written> list;
  for (int k = 0; k < 3; k++) {  // good, length 8, version 2
    Written w = trtest::Make(trtest::Pkt(0x04, 0x22, (uint32_t)k), 32, 1000u * (k + 1));
    const uint8_t hdr[8] = {'F', 'S', 'T', 'G', (uint8_t)(k == 2 ? 2 : 1), 0, 0,
                            (uint8_t)(k == 1 ? 8 : 16)};
    std::copy(hdr, hdr + 8, w.payload.begin());
    w.pkt.payload = w.payload.data();
    w.frame = trtest::Build(w.pkt);
    list.push_back(w);
  }
  std::string path = trtest::TempPath("lua_magic.pcap");
  ASSERT_TRUE(trtest::WriteTrace(path, list));
  int st;
  std::string out = trtest::Run("HOME=" + trtest::TempPath("") + " tshark -X lua_script:" + lua +
                                    " -r " + path + " -T fields -e fabsim.tag.len 2>/dev/null",
                                &st);
  ASSERT_EQ(0, st);
  EXPECT_EQ("16\n\n\n", out);
}

// A marker followed by another frame than the one it describes (a spliced file) marks nothing,
// as `fabsim trace` reads it; one followed by its own frame marks it.
TEST(LuaDissector, AMarkerOnlyMarksTheFrameItDescribes) {
  REQUIRE_TSHARK();
  const std::string lua = "traces/wireshark/fabsim.lua";
  trtest::Bytes a = trtest::Build(trtest::Pkt(0x04, 0x22, 3));
  trtest::Bytes b = trtest::Build(trtest::Pkt(0x04, 0x22, 4));
  trtest::Bytes m(TR_MARK_FRAME_LEN);
  tr_where where = {TR_REASON_LOSS, 1, 2, 3};
  tr_mark_frame_build(m.data(), TR_DROPPED, &where, a.data(), static_cast<uint32_t>(a.size()),
                      static_cast<uint32_t>(a.size()));
  std::string path = trtest::TempPath("lua_splice.pcap");
  trtest::Bytes file = trtest::Pcap(0xa1b2c3d4u, false, 1, {{0, 0, m, 0}, {0, 1, b, 0}, {0, 2, m, 0},
                                                           {0, 3, a, 0}});
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(file.data()),
                                               static_cast<std::streamsize>(file.size()));
  int st;
  std::string out = trtest::Run("HOME=" + trtest::TempPath("") + " tshark -X lua_script:" + lua +
                                    " -r " + path + " -T fields -e fabsim.marked.flags 2>/dev/null",
                                &st);
  ASSERT_EQ(0, st);
  EXPECT_EQ("\n\n\n0x0001\n", out);
}

INSTANTIATE_TEST_SUITE_P(IpAndVlans, TsharkTest,
                         ::testing::Values(std::make_tuple(4, 0), std::make_tuple(6, 0),
                                           std::make_tuple(4, 1), std::make_tuple(6, 2)));

}  // namespace
