// `trace check`: a clean trace gives no line and status 0; each broken rule gives exactly one
// line "frame N (byte offset X): what" and status 1.
#include "traces/tests/test_util.h"

namespace {

using trtest::Bytes;
using trtest::Make;
using trtest::Pkt;
using trtest::Written;

constexpr uint32_t A = 0x11, B = 0x22;

tr_packet From(uint8_t opcode, uint32_t psn, bool from_a = true) {
  tr_packet p = Pkt(opcode, from_a ? B : A, psn, from_a);
  p.udp_sport = tr_udp_sport_for_qp(from_a ? A : B);
  return p;
}

tr_packet Ack(uint32_t psn, uint8_t syndrome = TR_AETH_SYNDROME_ACK) {
  tr_packet p = From(0x11, psn, false);
  p.aeth.syndrome = syndrome;
  return p;
}

std::vector<std::string> Lines(const std::string& s) {
  auto l = trtest::Split(s, '\n');
  if (!l.empty() && l.back().empty()) l.pop_back();
  return l;
}

// Checks `list` and expects exactly one problem, in frame `frame`, containing `what`.
void ExpectOne(const std::string& name, const std::vector<Written>& list, uint64_t frame,
               const std::string& what) {
  int rc;
  auto lines = Lines(trtest::CheckOutput(name, list, &rc));
  EXPECT_EQ(1, rc) << name;
  ASSERT_EQ(1u, lines.size()) << name << ":\n" << ::testing::PrintToString(lines);
  EXPECT_EQ(0u, lines[0].find("frame " + std::to_string(frame) + " (byte offset ")) << lines[0];
  EXPECT_NE(std::string::npos, lines[0].find(what)) << lines[0];
}

void ExpectClean(const std::string& name, const std::vector<Written>& list) {
  int rc;
  std::string out = trtest::CheckOutput(name, list, &rc);
  EXPECT_EQ(0, rc) << out;
  EXPECT_EQ("", out);
}

TEST(Check, TheGeneratedConversationIsClean) {
  ExpectClean("conv4.pcap", trtest::Conversation());
  ExpectClean("conv6.pcap", trtest::Conversation(0, 10, 6, 2));
}

TEST(Check, PsnGapWithItsExactOffset) {
  std::vector<Written> l = {Make(From(0x04, 1), 8, 0), Make(From(0x04, 2), 8, 1),
                            Make(From(0x04, 5), 8, 2)};
  int64_t off = 24;
  for (int i = 0; i < 2; i++) off += 16 + static_cast<int64_t>(l[i].frame.size());
  off += 16 + 42 + 9;  // record header, then BTH at 42, PSN at 9 of the BTH
  ExpectOne("gap.pcap", l, 3, "byte offset " + std::to_string(off) + "): PSN gap: expected PSN 3, got 5");
}

TEST(Check, ResendsNeedANakATimeoutOrAMark) {
  // A fabsim trace (it has marks: here a reordered packet) marks every resend: one acknowledged,
  // then sent again with no NAK and no mark, is a fault.
  ExpectOne("resend_acked.pcap",
            {Make(From(0x04, 1), 8, 0), Make(From(0x04, 2), 8, 1, TR_REORDERED),
             Make(Ack(2), 0, 2), Make(From(0x04, 2), 8, 3)},
            5, "PSN 2 sent again although acknowledged");
  // The same when the trace's first mark comes after the resend.
  ExpectOne("resend_acked_mark_later.pcap",
            {Make(From(0x04, 1), 8, 0), Make(Ack(1), 0, 1), Make(From(0x04, 1), 8, 2),
             Make(From(0x04, 2), 8, 3, TR_REORDERED)},
            3, "PSN 1 sent again although acknowledged");
  // A capture taken elsewhere (no marks) may be the responder's: the ACK it saw can have been
  // lost after it, and the requester's timeout rightly sends the PSN again. A retransmission,
  // no fault.
  ExpectClean("resend_acked_foreign.pcap",
              {Make(From(0x04, 1), 8, 0), Make(Ack(1), 0, 1), Make(From(0x04, 1), 8, 2)});
  // the same with a retransmit mark, after a NAK, or never acknowledged (timeout)
  ExpectClean("resend_marked.pcap", {Make(From(0x04, 1), 8, 0), Make(Ack(1), 0, 1),
                                     Make(From(0x04, 1), 8, 2, TR_RETRANSMIT)});
  ExpectClean("resend_nak.pcap",
              {Make(From(0x04, 1), 8, 0), Make(From(0x04, 2), 8, 1), Make(Ack(1), 0, 2),
               Make(Ack(2, 0x60 | 0), 0, 3), Make(From(0x04, 2), 8, 4)});
  ExpectClean("resend_timeout.pcap", {Make(From(0x04, 1), 8, 0), Make(From(0x04, 1), 8, 1)});
  // an ACK that was dropped does not acknowledge
  ExpectClean("resend_lost_ack.pcap", {Make(From(0x04, 1), 8, 0), Make(Ack(1), 0, 1, TR_DROPPED),
                                       Make(From(0x04, 1), 8, 2)});
  ExpectOne("uc_back.pcap", {Make(From(0x24, 1), 8, 0), Make(From(0x24, 1), 8, 1)}, 2,
            "goes back (newest was 1) on a UC flow");
}

TEST(Check, FirstMiddleLastOrder) {
  ExpectOne("first_first.pcap",
            {Make(From(0x00, 1), 1024, 0), Make(From(0x00, 2), 1024, 1), Make(From(0x02, 3), 8, 2)},
            2, "RC SEND_FIRST while a SEND message is still open");
  ExpectOne("middle_alone.pcap",
            {Make(From(0x04, 1), 8, 0), Make(From(0x01, 2), 1024, 1)}, 2,
            "RC SEND_MIDDLE without a SEND FIRST before it");
  ExpectOne("mixed.pcap",
            {Make(From(0x00, 1), 1024, 0), Make(From(0x08, 2), 8, 1)}, 2,
            "RC RDMA_WRITE_LAST without a WRITE FIRST before it");
  tr_packet rd = From(0x0C, 2);
  rd.reth.dma_len = 8;
  ExpectOne("read_inside.pcap", {Make(From(0x00, 1), 1024, 0), Make(rd, 0, 1)}, 2,
            "RC RDMA_READ_REQUEST inside an open SEND message");
  ExpectOne("resp_alone.pcap", {Make(From(0x10, 1, false), 8, 0), Make(From(0x0E, 2, false), 1024, 1)},
            2, "RC RDMA_READ_RESPONSE_MIDDLE without a READ response FIRST");
  // a capture that starts inside a message is fine
  ExpectClean("starts_inside.pcap", {Make(From(0x01, 7), 1024, 0), Make(From(0x02, 8), 8, 1)});
}

TEST(Check, PayloadSizesAndPadding) {
  ExpectOne("first_not_mtu.pcap", {Make(From(0x00, 1), 1000, 0), Make(From(0x02, 2), 8, 1)}, 1,
            "RC SEND_FIRST carries 1000 bytes, not a path MTU");
  ExpectOne("middle_other_mtu.pcap",
            {Make(From(0x00, 1), 1024, 0), Make(From(0x01, 2), 2048, 1), Make(From(0x02, 3), 8, 2)},
            2, "earlier FIRST/MIDDLE packets of this flow 1024");
  ExpectOne("last_too_big.pcap", {Make(From(0x00, 1), 1024, 0), Make(From(0x02, 2), 1500, 1)}, 2,
            "more than the flow's MTU of 1024");
  ExpectOne("last_empty.pcap", {Make(From(0x00, 1), 1024, 0), Make(From(0x02, 2), 0, 1)}, 2,
            "RC SEND_LAST carries no payload");
  // an ONLY is held to the flow's MTU too, and none may pass the largest path MTU
  ExpectOne("only_too_big.pcap",
            {Make(From(0x00, 1), 1024, 0), Make(From(0x02, 2), 8, 1), Make(From(0x04, 3), 3000, 2)},
            3, "RC SEND_ONLY carries 3000 bytes, more than the flow's MTU of 1024");
  ExpectOne("only_huge.pcap", {Make(From(0x04, 1), 8000, 0)}, 1,
            "RC SEND_ONLY carries 8000 bytes, more than the largest path MTU (4096)");
  ExpectClean("only_full.pcap", {Make(From(0x04, 1), 4096, 0)});
  // PadCnt on a FIRST: 1024 bytes of payload declared as 1021 + 3 of pad
  Written w = Make(From(0x00, 1), 1024, 0);
  w.frame[43] |= 0x30;
  trtest::FixIcrc(w.frame);
  ExpectOne("pad_first.pcap", {w, Make(From(0x02, 2), 8, 1)}, 1, "PadCnt 3 on RC SEND_FIRST");
  // an ACK carrying bytes
  Written a = Make(From(0x04, 1), 8, 0);
  a.frame[42] = 0x11;  // now an ACK with 4 bytes after its AETH
  trtest::FixIcrc(a.frame);
  ExpectOne("ack_payload.pcap", {a}, 1, "RC ACKNOWLEDGE carries 4 bytes after its headers");
  // a transport length that is not a multiple of 4: drop one pad byte, shorten IP and UDP
  Written odd = Make(From(0x04, 1), 5, 0);  // 5 bytes + 3 of pad
  odd.frame.erase(odd.frame.end() - 5);
  odd.frame[43] = static_cast<uint8_t>((odd.frame[43] & ~0x30) | 0x20);
  odd.frame[17]--;
  odd.frame[39]--;
  uint32_t sum = 0;  // IPv4 header checksum again
  odd.frame[24] = odd.frame[25] = 0;
  for (int i = 14; i < 34; i += 2) sum += odd.frame[i] << 8 | odd.frame[i + 1];
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  odd.frame[24] = static_cast<uint8_t>(~sum >> 8);
  odd.frame[25] = static_cast<uint8_t>(~sum);
  trtest::FixIcrc(odd.frame);
  ExpectOne("odd.pcap", {odd}, 1, "transport length 23 (BTH to ICRC) is not a multiple of 4");
}

TEST(Check, HeaderRules) {
  Written u = Make(From(0x04, 1), 8, 0);
  u.frame[42] = 0x15;  // not an opcode
  trtest::FixIcrc(u.frame);
  ExpectOne("unknown_op.pcap", {u}, 1, "opcode 0x15 is not a known opcode");
  Written t = Make(From(0x04, 1), 8, 0);
  t.frame[43] |= 0x01;
  trtest::FixIcrc(t.frame);
  ExpectOne("tver.pcap", {t}, 1, "BTH TVer 1");
  Written q = Make(From(0x04, 1), 8, 0);
  q.frame[49] = 1;  // destination QP 1
  trtest::FixIcrc(q.frame);
  ExpectOne("qp1.pcap", {q}, 1, "RC SEND_ONLY to QP 1: QP0 and QP1 are for management datagrams");
  ExpectOne("reserved_aeth.pcap", {Make(From(0x04, 1), 8, 0), Make(Ack(1, 0x41), 0, 1)}, 2,
            "AETH syndrome 0x41 uses the reserved kind");
  tr_packet wo = From(0x0A, 1);
  wo.reth.dma_len = 100;
  ExpectOne("write_only_len.pcap", {Make(wo, 64, 0)}, 1,
            "RDMA WRITE message of 64 bytes ends here, its first packet's RETH announced 100");
  tr_packet wf = From(0x06, 1);
  wf.reth.dma_len = 2000;
  ExpectOne("write_msg_len.pcap", {Make(wf, 1024, 0), Make(From(0x08, 2), 8, 1)}, 2,
            "RDMA WRITE message of 1032 bytes ends here, its first packet's RETH announced 2000");
}

// editcap -s 64 keeps an IPv4 frame's BTH but not its RETH or AtomicETH, nor all of an event
// frame's text: each is still a packet (an event) with opcode, QP and PSN, so the trace checks
// clean — no malformed frame, no PSN gap where a cut one was left out.
TEST(Check, ASnapLengthThatCutsTheExtendedHeadersIsNoProblem) {
  auto list = trtest::Conversation();
  tr_event ev = {};
  ev.kind = TR_EVENT_AWAY;
  snprintf(ev.text, sizeof(ev.text), "process 7 is blocked outside the fabric");
  Written w = {};
  w.frame.resize(TR_EVENT_FRAME_MAX);
  w.frame.resize(tr_event_frame_build(w.frame.data(), &ev));
  list.insert(list.begin() + 3, w);
  std::string path = trtest::TempPath("snap64.pcap");
  ASSERT_TRUE(trtest::WriteTrace(path, list));
  trtest::Snap(path, 64);
  char* text = nullptr;
  size_t len = 0;
  FILE* out = open_memstream(&text, &len);
  EXPECT_EQ(0, tr_check_file(path.c_str(), out, nullptr));
  fclose(out);
  EXPECT_EQ("", std::string(text, len));
  free(text);
  // The sequence comes out as from the whole frames.
  std::string whole_path = trtest::TempPath("snap64_whole.pcap");
  ASSERT_TRUE(trtest::WriteTrace(whole_path, list));
  tr_summary *s, *whole;
  tr_error err;
  ASSERT_EQ(0, tr_summary_file(path.c_str(), &s, &err)) << err.msg;
  ASSERT_EQ(0, tr_summary_file(whole_path.c_str(), &whole, &err)) << err.msg;
  EXPECT_EQ(0u, s->malformed);
  EXPECT_EQ(list.size() - 1, s->packets);
  EXPECT_EQ(whole->psn_gaps, s->psn_gaps);
  EXPECT_EQ(whole->retransmissions, s->retransmissions);
  for (int k : {TR_MSG_WRITE, TR_MSG_READ}) {
    EXPECT_GT(s->messages[k].count, 0u);
    EXPECT_EQ(whole->messages[k].count, s->messages[k].count);
  }
  tr_summary_free(s);
  tr_summary_free(whole);
}

// Fields a snap length cut off are not guessed. A READ request whose RETH was cut off may have
// used any number of PSNs: the request after it, sent before the responses came back, jumps over
// them and no gap can be told.
TEST(Check, FieldsCutOffAreNotGuessed) {
  tr_packet rd = From(0x0C, 10);
  rd.reth.dma_len = 3000;  // PSNs 10..12
  std::string path = trtest::TempPath("snap_read.pcap");
  ASSERT_TRUE(trtest::WriteTrace(path, {Make(rd, 0, 0), Make(From(0x04, 13), 8, 1)}));
  trtest::Snap(path, 60);
  tr_check_result res;
  EXPECT_EQ(0, tr_check_file(path.c_str(), stderr, &res));
  EXPECT_EQ(2u, res.packets);
  // An AETH cut off says neither ACK nor NAK: this NAK must not pass for an ACK of PSN 2, which
  // would make its resend one of acknowledged data.
  ASSERT_TRUE(trtest::WriteTrace(path, {Make(From(0x04, 1), 8, 0), Make(From(0x04, 2), 8, 1),
                                        Make(Ack(2, 0x60), 0, 2), Make(From(0x04, 2), 8, 3)}));
  trtest::Snap(path, 54);
  EXPECT_EQ(0, tr_check_file(path.c_str(), stderr, &res));
  EXPECT_EQ(4u, res.packets);
}

// Mirrored by a switch (ERSPAN) or carried over VXLAN, the inner packets follow the same rules,
// and each problem names the byte of the captured frame at fault.
TEST(Check, InsideTunnelsWithOffsetsInTheCapturedFrame) {
  for (bool vxlan : {false, true}) {
    std::string name = vxlan ? "vxlan" : "erspan";
    auto wrap = [vxlan](Written w) {
      w.frame = trtest::OverIpv4(vxlan ? 17 : 47, vxlan ? trtest::Vxlan() : trtest::Erspan2(), w.frame);
      return w;
    };
    const int64_t outer = 14 + 20 + 16;
    std::vector<Written> conv;
    for (const auto& w : trtest::Conversation()) conv.push_back(wrap(w));
    ExpectClean(name + "_conv.pcap", conv);
    std::vector<Written> l = {wrap(Make(From(0x04, 1), 8, 0)), wrap(Make(From(0x04, 2), 8, 1)),
                              wrap(Make(From(0x04, 5), 8, 2))};
    int64_t off = 24;
    for (int i = 0; i < 2; i++) off += 16 + static_cast<int64_t>(l[i].frame.size());
    ExpectOne(name + "_gap.pcap", l, 3,
              "byte offset " + std::to_string(off + 16 + outer + 42 + 9) + "): PSN gap");
    Written bad = wrap(Make(From(0x04, 1), 64, 0));
    bad.frame[outer + 70] ^= 0x08;
    ExpectOne(name + "_icrc.pcap", {bad}, 1,
              "byte offset " + std::to_string(24 + 16 + bad.frame.size() - 4) + "): ICRC 0x");
    Written ip = wrap(Make(From(0x04, 1), 8, 0));
    ip.frame[outer + 22] = 3;
    ExpectOne(name + "_ipsum.pcap", {ip}, 1,
              "byte offset " + std::to_string(24 + 16 + outer + 24) + "): IPv4 header checksum 0x");
  }
}

TEST(Check, Integrity) {
  Written bad = Make(From(0x04, 1), 64, 0);
  bad.frame[70] ^= 0x08;
  // The stored ICRC as Wireshark shows the field: its bytes in wire order.
  const uint8_t* icrc = &bad.frame[bad.frame.size() - 4];
  char shown[32];
  snprintf(shown, sizeof(shown), "ICRC 0x%02x%02x%02x%02x stored", icrc[0], icrc[1], icrc[2],
           icrc[3]);
  ExpectOne("icrc.pcap", {bad}, 1, shown);
  bad.flags = TR_CORRUPTED;
  ExpectClean("icrc_marked.pcap", {bad});
  Written ip = Make(From(0x04, 1), 8, 0);
  ip.frame[22] = 3;  // TTL is variant for the ICRC but covered by the IPv4 checksum
  ExpectOne("ipsum.pcap", {ip}, 1, "IPv4 header checksum 0x");
}

}  // namespace
