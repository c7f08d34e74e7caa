// The fabsim atomic headers (tr_atomichdr.h): byte layout, build -> parse, the builder's rules,
// what summary and check make of a fabsim atomic and its answer, and the Lua dissector's fields.
// Also: management datagrams (UD SEND to QP 1) build, data to QP 1 does not.
#include "traces/tests/test_util.h"

#include <algorithm>

extern "C" {
#include "traces/tr_atomichdr.h"
}

namespace {

using trtest::Bytes;

tr_atomichdr Request() {
  tr_atomichdr h = {};
  h.flags = TR_ATOMIC_F_FETCH | TR_ATOMIC_F_COMPARE;
  h.op = 12;       // FI_CSWAP
  h.datatype = 4;  // FI_INT32
  h.count = 3;
  h.va = 0x1122334455667788ull;
  h.rkey = 0xabcdef01u;
  return h;
}

TEST(AtomicHeader, LayoutAsDocumented) {
  tr_atomichdr h = Request();
  uint8_t b[TR_ATOMIC_LEN];
  tr_atomichdr_encode(b, &h);
  const uint8_t want[TR_ATOMIC_LEN] = {'F', 'S', 'A', 'T', 1, 3, 0, 24, 0x11, 0x22, 0x33, 0x44,
                                       0x55, 0x66, 0x77, 0x88, 0xab, 0xcd, 0xef, 0x01, 12, 4, 0, 3};
  EXPECT_EQ(0, memcmp(want, b, sizeof(want)));
  tr_atomichdr r = {};
  r.response = true;
  r.flags = TR_ATOMIC_F_FETCH;
  r.op = 12;
  r.datatype = 4;
  r.count = 3;
  uint8_t c[TR_ATOMIC_RESP_LEN];
  tr_atomichdr_encode(c, &r);
  const uint8_t want_r[TR_ATOMIC_RESP_LEN] = {'F', 'S', 'A', 'R', 1, 1, 0, 12, 12, 4, 0, 3};
  EXPECT_EQ(0, memcmp(want_r, c, sizeof(want_r)));

  tr_atomichdr back;
  tr_error err;
  EXPECT_EQ(24, tr_atomichdr_decode(b, sizeof(b), &back, &err));
  EXPECT_FALSE(back.response);
  EXPECT_EQ(h.va, back.va);
  EXPECT_EQ(h.rkey, back.rkey);
  EXPECT_EQ(3, back.count);
  EXPECT_EQ(12, tr_atomichdr_decode(c, sizeof(c), &back, &err));
  EXPECT_TRUE(back.response);
  EXPECT_EQ(0, tr_atomichdr_decode((const uint8_t*)"data", 4, &back, &err));
  EXPECT_EQ(-EINVAL, tr_atomichdr_decode(b, 10, &back, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "cut short")) << err.msg;
}

TEST(AtomicHeader, BuildsAndParsesBack) {
  Bytes ops = trtest::Payload(24);
  tr_packet p = trtest::Pkt(0x04, 0x22, 9);
  p.flags |= TR_PKT_ATOMICHDR;
  p.atomic_hdr = Request();
  p.payload = ops.data();
  p.payload_len = 24;
  Bytes f = trtest::Build(p);
  EXPECT_EQ(14u + 20 + 8 + 12 + 24 + 24 + 4, f.size());
  tr_packet q;
  tr_error err;
  ASSERT_EQ(TR_PARSE_OK, tr_packet_parse(&q, f.data(), f.size(), f.size(), TR_LINKTYPE_ETHERNET,
                                         nullptr, &err))
      << err.msg;
  EXPECT_TRUE(q.flags & TR_PKT_ATOMICHDR);
  EXPECT_EQ(24u, q.payload_len);
  EXPECT_EQ(48u, tr_packet_data_len(&q));
  EXPECT_EQ(0x1122334455667788ull, q.atomic_hdr.va);
  EXPECT_EQ(q.icrc_stored, q.icrc_computed);

  tr_packet r = trtest::Pkt(0x10, 0x11, 9, false);
  r.flags |= TR_PKT_ATOMICHDR;
  r.atomic_hdr.response = true;
  r.atomic_hdr.count = 3;
  r.payload = ops.data();
  r.payload_len = 12;
  Bytes g = trtest::Build(r);
  ASSERT_EQ(TR_PARSE_OK, tr_packet_parse(&q, g.data(), g.size(), g.size(), TR_LINKTYPE_ETHERNET,
                                         nullptr, &err));
  EXPECT_TRUE(q.flags & TR_PKT_ATOMICHDR);
  EXPECT_TRUE(q.atomic_hdr.response);
  EXPECT_EQ(12u, q.payload_len);
}

TEST(AtomicHeader, BuilderRules) {
  Bytes buf(TR_FRAME_MAX);
  tr_error err;
  tr_packet p = trtest::Pkt(0x00, 0x22, 1);  // SEND_FIRST: atomics are one packet
  p.flags |= TR_PKT_ATOMICHDR;
  p.atomic_hdr = Request();
  EXPECT_EQ(-EINVAL, tr_packet_build(&p, buf.data(), buf.size(), &err));
  EXPECT_NE(nullptr, strstr(err.msg, "SEND ONLY")) << err.msg;
  p = trtest::Pkt(0x04, 0x22, 1);
  p.flags |= TR_PKT_ATOMICHDR | TR_PKT_TAGHDR;
  EXPECT_EQ(-EINVAL, tr_packet_build(&p, buf.data(), buf.size(), &err));
  p = trtest::Pkt(0x04, 0x22, 1);  // a response header in a request
  p.flags |= TR_PKT_ATOMICHDR;
  p.atomic_hdr.response = true;
  EXPECT_EQ(-EINVAL, tr_packet_build(&p, buf.data(), buf.size(), &err));
  // Management datagrams go to QP 1 as UD SENDs (the CM's MADs); data never does.
  p = trtest::Pkt(0x64, 1, 0);
  p.deth.qkey = 0x80010000u;
  p.deth.src_qp = 1;
  EXPECT_GT(tr_packet_build(&p, buf.data(), buf.size(), &err), 0) << err.msg;
  p = trtest::Pkt(0x04, 1, 0);
  EXPECT_EQ(-EINVAL, tr_packet_build(&p, buf.data(), buf.size(), &err));
  p = trtest::Pkt(0x64, 0, 0);
  EXPECT_EQ(-EINVAL, tr_packet_build(&p, buf.data(), buf.size(), &err));
}

// tr_packet_build_prefix: the first bytes of the frame, whatever the headers, for every limit.
TEST(BuildPrefix, IsTheStartOfTheWholeFrame) {
  Bytes pay = trtest::Payload(3000);
  std::vector<tr_packet> pkts;
  for (uint8_t op : {0x00, 0x04, 0x06, 0x0b, 0x0c, 0x0d, 0x11, 0x12, 0x13, 0x64}) {
    tr_packet p = trtest::Pkt(op, op == 0x64 ? 1 : 0x22, 77);
    const tr_opcode_info* info = tr_opcode(op);
    if (info->has_payload) {
      p.payload = pay.data();
      p.payload_len = info->pos == TR_POS_FIRST ? 1024 : 301;
    }
    if (op == 0x00) {
      p.flags |= TR_PKT_TAGHDR;
      p.tag.tag = 0x1234;
      p.payload_len = 1024 - TR_TAG_LEN;
    }
    if (op == 0x04) {
      p.flags |= TR_PKT_ATOMICHDR;
      p.atomic_hdr = Request();
      p.payload_len = 24;
    }
    pkts.push_back(p);
  }
  for (const tr_packet& p : pkts) {
    Bytes whole = trtest::Build(p);
    for (uint32_t limit : {14u, 60u, 128u, 200u, 1000u, 65535u}) {
      Bytes cut(std::max<size_t>(whole.size(), limit) + 8, 0xEE);
      tr_error err;
      int n = tr_packet_build_prefix(&p, cut.data(), cut.size(), limit, &err);
      ASSERT_EQ(static_cast<int>(whole.size()), n) << err.msg;
      size_t keep = std::min<size_t>(limit, whole.size());
      EXPECT_EQ(0, memcmp(whole.data(), cut.data(), keep))
          << "opcode " << int(p.opcode) << " limit " << limit;
    }
  }
}

// A fabsim atomic (request, its answer) in a trace: an atomic message, an atomic latency, clean.
std::vector<trtest::Written> AtomicConversation() {
  std::vector<trtest::Written> out;
  auto add = [&](tr_packet p, uint64_t ts, Bytes payload) {
    trtest::Written w{};
    w.ts_ns = ts;
    w.payload = payload;
    w.pkt = p;
    w.pkt.payload = w.payload.data();
    w.pkt.payload_len = static_cast<uint32_t>(w.payload.size());
    w.frame = trtest::Build(w.pkt);
    out.push_back(w);
  };
  tr_packet q = trtest::Pkt(0x04, 0x22, 0);
  q.udp_sport = tr_udp_sport_for_qp(0x11);
  q.flags |= TR_PKT_ATOMICHDR;
  q.atomic_hdr = Request();
  q.ack_req = true;
  add(q, 1000, trtest::Payload(24));
  tr_packet r = trtest::Pkt(0x10, 0x11, 0, false);
  r.udp_sport = tr_udp_sport_for_qp(0x22);
  r.flags |= TR_PKT_ATOMICHDR;
  r.atomic_hdr.response = true;
  r.atomic_hdr.flags = TR_ATOMIC_F_FETCH;
  r.atomic_hdr.op = 12;
  r.atomic_hdr.datatype = 4;
  r.atomic_hdr.count = 3;
  r.aeth.syndrome = TR_AETH_SYNDROME_ACK;
  add(r, 1700, trtest::Payload(12, 3));
  return out;
}

TEST(AtomicHeader, SummaryCountsAnAtomicAndCheckIsClean) {
  std::string path = trtest::TempPath("fsat.pcap");
  ASSERT_TRUE(trtest::WriteTrace(path, AtomicConversation()));
  tr_summary* s = nullptr;
  tr_error err;
  ASSERT_EQ(0, tr_summary_file(path.c_str(), &s, &err)) << err.msg;
  EXPECT_EQ(1u, s->messages[TR_MSG_ATOMIC].count);
  EXPECT_EQ(12u, s->messages[TR_MSG_ATOMIC].bytes);  // operands, not the compare values
  EXPECT_EQ(0u, s->messages[TR_MSG_READ].count);     // the answer is no READ
  EXPECT_EQ(1u, s->latency[TR_LAT_ATOMIC].count);
  EXPECT_EQ(700u, s->latency[TR_LAT_ATOMIC].min_ns);
  EXPECT_EQ(0u, s->problems);
  tr_summary_free(s);
  int rc;
  std::string out = trtest::CheckOutput("fsat_check.pcap", AtomicConversation(), &rc);
  EXPECT_EQ(0, rc) << out;
}

TEST(AtomicHeader, LuaDissectorDecodesBoth) {
  if (!trtest::HaveTshark()) GTEST_SKIP() << "tshark is not installed";
  std::string path = trtest::TempPath("fsat_lua.pcap");
  ASSERT_TRUE(trtest::WriteTrace(path, AtomicConversation()));
  int st;
  std::string out = trtest::Run(
      "HOME=" + trtest::TempPath("") +
          " tshark -X lua_script:traces/wireshark/fabsim.lua -r " + path +
          " -T fields -E separator=/t -e fabsim.atomic.magic -e fabsim.atomic.flags"
          " -e fabsim.atomic.va -e fabsim.atomic.rkey -e fabsim.atomic.op"
          " -e fabsim.atomic.datatype -e fabsim.atomic.count -e fabsim.atomic_resp.magic"
          " -e fabsim.atomic_resp.flags -e fabsim.atomic_resp.count -e _ws.malformed"
          " 2>/dev/null",
      &st);
  ASSERT_EQ(0, st);
  auto lines = trtest::Split(out, '\n');
  ASSERT_GE(lines.size(), 2u) << out;
  EXPECT_EQ("0x46534154\t0x03\t0x1122334455667788\t0xabcdef01\t12\t4\t3\t\t\t\t", lines[0]);
  EXPECT_EQ("\t\t\t\t\t\t\t0x46534152\t0x01\t3\t", lines[1]);
}

}  // namespace
