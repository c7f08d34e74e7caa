// The three real captures: the reader parses every frame, every ICRC (and VCRC) checks, the
// summary agrees with tshark on packets per opcode, per QP and bytes, `trace check` accepts them
// and rejects a copy with one flipped payload byte.
#include "traces/tests/test_util.h"

#include <map>

namespace {

using trtest::Bytes;
using trtest::TestData;

const char* kOferby = "oferby_proxy_roce.pcap";
const char* kErf = "srinivaskoritala_infiniband.pcap";
const char* kRxe = "FlashBarryAllen_PcapPlusPlus_InfiniBandPacket.pcap";

struct Counts {
  uint64_t frames = 0, packets = 0, other = 0, malformed = 0, icrc_ok = 0, vcrc_ok = 0, grh = 0;
  std::map<int, uint64_t> opcodes;
};

Counts Read(const std::string& path) {
  Counts c;
  tr_reader* r;
  tr_error err;
  EXPECT_EQ(0, tr_reader_open(&r, path.c_str(), &err)) << err.msg;
  if (!r) return c;
  tr_record rec;
  int ret;
  while ((ret = tr_reader_next(r, &rec, &err)) > 0) {
    c.frames++;
    EXPECT_EQ(c.frames, rec.frame);
    EXPECT_STREQ("", rec.problem.msg);
    if (rec.kind == TR_REC_OTHER) c.other++;
    if (rec.kind == TR_REC_MALFORMED) c.malformed++;
    if (rec.kind != TR_REC_PACKET) continue;
    c.packets++;
    c.opcodes[rec.pkt.opcode]++;
    c.icrc_ok += rec.pkt.icrc_captured && rec.pkt.icrc_stored == rec.pkt.icrc_computed;
    c.vcrc_ok += rec.pkt.vcrc_captured && rec.pkt.vcrc_stored == rec.pkt.vcrc_computed;
    c.grh += (rec.pkt.flags & TR_PKT_GRH) != 0;
  }
  EXPECT_EQ(0, ret) << err.msg;
  tr_reader_close(r);
  return c;
}

TEST(Captures, HuaweiRoce) {
  Counts c = Read(TestData(kOferby));
  EXPECT_EQ(123u, c.frames);
  EXPECT_EQ(105u, c.packets);
  EXPECT_EQ(18u, c.other);
  EXPECT_EQ(0u, c.malformed);
  EXPECT_EQ(105u, c.icrc_ok);
  EXPECT_EQ((std::map<int, uint64_t>{{0x00, 33}, {0x03, 33}, {0x05, 2}, {0x11, 37}}), c.opcodes);
}

// Its MLD reports carry a hop-by-hop option (router alert) before ICMPv6: they are ICMPv6, as
// its other two ICMPv6 frames, and nothing of the capture is left as "IPv6 (not UDP)".
TEST(Captures, HuaweiOtherFramesByKind) {
  tr_summary* s;
  tr_error err;
  ASSERT_EQ(0, tr_summary_file(TestData(kOferby).c_str(), &s, &err)) << err.msg;
  std::map<std::string, uint64_t> kinds;
  for (unsigned i = 0; i < s->n_other_kinds; i++) kinds[s->other_kinds[i].what] = s->other_kinds[i].count;
  tr_summary_free(s);
  EXPECT_EQ(4u, kinds["ICMPv6"]);
  EXPECT_EQ(0u, kinds.count("IPv6 (not UDP)"));
  EXPECT_EQ(4u, kinds["ARP"]);
  EXPECT_EQ(10u, kinds["TCP"]);
}

TEST(Captures, ErfInfiniBand) {
  Counts c = Read(TestData(kErf));
  EXPECT_EQ(43u, c.frames);
  EXPECT_EQ(43u, c.packets);
  EXPECT_EQ(43u, c.icrc_ok);
  EXPECT_EQ(43u, c.vcrc_ok);
  EXPECT_EQ(6u, c.grh);
  EXPECT_EQ((std::map<int, uint64_t>{{0x04, 10}, {0x11, 9}, {0x64, 24}}), c.opcodes);
}

TEST(Captures, RxeReadRequest) {
  tr_reader* r;
  tr_error err;
  ASSERT_EQ(0, tr_reader_open(&r, TestData(kRxe).c_str(), &err)) << err.msg;
  tr_reader_info info;
  tr_reader_get_info(r, &info);
  EXPECT_STREQ("pcap", info.format);
  EXPECT_EQ(TR_LINKTYPE_ETHERNET, info.linktype);
  tr_record rec;
  ASSERT_EQ(1, tr_reader_next(r, &rec, &err)) << err.msg;
  ASSERT_EQ(TR_REC_PACKET, rec.kind);
  EXPECT_EQ(40, rec.offset);
  EXPECT_EQ(0x0Cu, rec.pkt.opcode);
  EXPECT_EQ(0x7fee260fb000ull, rec.pkt.reth.va);
  EXPECT_EQ(0x2b8u, rec.pkt.reth.rkey);
  EXPECT_EQ(65536u, rec.pkt.reth.dma_len);
  EXPECT_EQ(57236u, rec.pkt.udp_sport);
  EXPECT_EQ(0x11u, rec.pkt.dest_qp);
  EXPECT_EQ(5557091u, rec.pkt.psn);
  EXPECT_EQ(rec.pkt.icrc_stored, rec.pkt.icrc_computed);
  EXPECT_EQ(0, tr_reader_next(r, &rec, &err));
  tr_reader_close(r);
}

// Packets and bytes per opcode and per destination QP, by tshark and by the summary.
struct Tally {
  std::map<int, uint64_t> op_packets, op_bytes;
  std::map<uint32_t, uint64_t> qp_packets, qp_bytes;
  bool operator==(const Tally& o) const {
    return op_packets == o.op_packets && op_bytes == o.op_bytes && qp_packets == o.qp_packets &&
           qp_bytes == o.qp_bytes;
  }
};

std::ostream& operator<<(std::ostream& os, const Tally& t) {
  for (auto& [k, v] : t.op_packets) os << "op " << k << ": " << v << " pkts " << t.op_bytes.at(k) << " B; ";
  for (auto& [k, v] : t.qp_packets) os << "qp " << k << ": " << v << " pkts " << t.qp_bytes.at(k) << " B; ";
  return os;
}

Tally FromSummary(const std::string& path) {
  Tally t;
  tr_summary* s;
  tr_error err;
  EXPECT_EQ(0, tr_summary_file(path.c_str(), &s, &err)) << err.msg;
  if (!s) return t;
  for (int op = 0; op < 256; op++) {
    if (!s->opcode_packets[op]) continue;
    t.op_packets[op] = s->opcode_packets[op];
    t.op_bytes[op] = s->opcode_bytes[op];
  }
  for (size_t i = 0; i < s->n_flows; i++) {
    t.qp_packets[s->flows[i].dest_qp] += s->flows[i].packets;
    t.qp_bytes[s->flows[i].dest_qp] += s->flows[i].bytes;
  }
  tr_summary_free(s);
  return t;
}

Tally FromTshark(const std::string& path, const std::string& extra) {
  Tally t;
  int st;
  std::string out = trtest::Tshark("-r " + path + " " + extra +
                                       " -Y infiniband -T fields -e infiniband.bth.opcode"
                                       " -e infiniband.bth.destqp -e frame.len",
                                   &st);
  EXPECT_EQ(0, st);
  for (const auto& line : trtest::Split(out, '\n')) {
    if (line.empty()) continue;
    auto f = trtest::Split(line, '\t');
    EXPECT_EQ(3u, f.size()) << line;
    if (f.size() != 3) continue;
    int op = std::stoi(f[0]);
    uint32_t qp = static_cast<uint32_t>(std::stoul(f[1], nullptr, 16));
    uint64_t len = std::stoull(f[2]);
    t.op_packets[op]++;
    t.op_bytes[op] += len;
    t.qp_packets[qp]++;
    t.qp_bytes[qp] += len;
  }
  return t;
}

class AgreesWithTshark : public ::testing::TestWithParam<const char*> {};

TEST_P(AgreesWithTshark, PerOpcodePerQpAndBytes) {
  if (!trtest::HaveTshark()) GTEST_SKIP() << "tshark is not installed";
  std::string path = TestData(GetParam());
  // The Huawei NIC's source port 69 makes tshark decode that side as TFTP (captures/README).
  std::string extra = path.find("oferby") != std::string::npos ? "--disable-protocol tftp" : "";
  Tally mine = FromSummary(path), theirs = FromTshark(path, extra);
  EXPECT_FALSE(theirs.op_packets.empty());
  EXPECT_EQ(theirs, mine) << "tshark: " << theirs << "\nsummary: " << mine;
}

INSTANTIATE_TEST_SUITE_P(Captures, AgreesWithTshark, ::testing::Values(kOferby, kErf, kRxe));

TEST(Captures, CheckAcceptsThemAll) {
  for (const char* name : {kOferby, kErf, kRxe}) {
    tr_check_result res;
    char* text = nullptr;
    size_t len = 0;
    FILE* out = open_memstream(&text, &len);
    EXPECT_EQ(0, tr_check_file(TestData(name).c_str(), out, &res)) << name;
    fclose(out);
    EXPECT_STREQ("", text) << name;
    EXPECT_EQ(0u, res.problems);
    free(text);
  }
}

// Copies `name` with the byte at `delta` from the payload of frame `frame` flipped; returns the
// copy's path and the byte offset of the flip.
std::string FlipPayloadByte(const char* name, uint64_t frame, int delta, int64_t* where) {
  tr_reader* r;
  tr_error err;
  tr_record rec;
  *where = -1;
  EXPECT_EQ(0, tr_reader_open(&r, TestData(name).c_str(), &err));
  while (tr_reader_next(r, &rec, &err) > 0)
    if (rec.frame == frame) *where = rec.offset + rec.pkt.payload_off + delta;
  tr_reader_close(r);
  Bytes b = trtest::ReadFile(TestData(name));
  EXPECT_GT(*where, 0);
  EXPECT_LT(*where, static_cast<int64_t>(b.size()));
  if (*where > 0 && *where < static_cast<int64_t>(b.size())) b[static_cast<size_t>(*where)] ^= 0x10;
  std::string copy = trtest::TempPath(std::string("flipped_") + name);
  trtest::WriteFile(copy, b);
  return copy;
}

TEST(Captures, CheckRejectsAFlippedPayloadByte) {
  struct {
    const char* name;
    uint64_t frame;
    int delta;
    std::vector<std::string> problems;
  } cases[] = {
      {kOferby, 17, 5, {"ICRC"}},
      {kErf, 10, 5, {"ICRC", "VCRC"}},
      {kRxe, 1, -3, {"ICRC"}},  // a READ request has no payload: flip its RETH DMA length
  };
  for (auto& c : cases) {
    int64_t where;
    std::string copy = FlipPayloadByte(c.name, c.frame, c.delta, &where);
    char* text = nullptr;
    size_t len = 0;
    FILE* out = open_memstream(&text, &len);
    tr_check_result res;
    EXPECT_EQ(1, tr_check_file(copy.c_str(), out, &res)) << c.name;
    fclose(out);
    auto lines = trtest::Split(text, '\n');
    lines.pop_back();
    ASSERT_EQ(c.problems.size(), lines.size()) << text;
    for (size_t i = 0; i < lines.size(); i++) {
      EXPECT_EQ(0u, lines[i].find("frame " + std::to_string(c.frame) + " (byte offset "))
          << lines[i];
      EXPECT_NE(std::string::npos, lines[i].find(c.problems[i] + " 0x")) << lines[i];
    }
    free(text);
  }
}

}  // namespace
