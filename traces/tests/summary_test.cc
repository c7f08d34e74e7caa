// `trace summary` on scenarios whose figures are known exactly: message sizes, bytes, goodput,
// latencies and their percentiles, retransmissions, gaps, NAKs, drops, tags; QP pairing when
// several QPs share two hosts; the JSON and text forms.
#include "traces/tests/test_util.h"

#include <jansson.h>

#include <algorithm>

namespace {

using trtest::Make;
using trtest::Pkt;
using trtest::Written;

constexpr uint32_t A = 0x11, B = 0x22;
constexpr uint8_t kAck = TR_AETH_SYNDROME_ACK;

tr_packet From(uint8_t opcode, uint32_t src_qp, uint32_t dest_qp, uint32_t psn, bool from_a) {
  tr_packet p = Pkt(opcode, dest_qp, psn, from_a);
  p.udp_sport = tr_udp_sport_for_qp(src_qp);
  return p;
}

tr_packet AckP(uint32_t psn, uint8_t syndrome = kAck, uint32_t src = B, uint32_t dst = A) {
  tr_packet p = From(0x11, src, dst, psn, false);
  p.aeth.syndrome = syndrome;
  return p;
}

struct Sum {
  tr_summary* s = nullptr;
  ~Sum() { tr_summary_free(s); }
};

void Summarize(const std::string& name, const std::vector<Written>& list, Sum* out) {
  std::string path = trtest::TempPath(name);
  ASSERT_TRUE(trtest::WriteTrace(path, list));
  tr_error err;
  ASSERT_EQ(0, tr_summary_file(path.c_str(), &out->s, &err)) << err.msg;
}

TEST(Summary, MessagesBytesAndGoodput) {
  std::vector<Written> l;
  l.push_back(Make(From(0x00, A, B, 10, true), 1024, 0));
  l.push_back(Make(From(0x01, A, B, 11, true), 1024, 10000));
  l.push_back(Make(From(0x02, A, B, 12, true), 500, 20000));
  tr_packet w = From(0x0A, A, B, 13, true);
  w.reth.dma_len = 300;
  l.push_back(Make(w, 300, 30000));
  l.push_back(Make(AckP(13), 0, 40000));
  Sum s;
  Summarize("msgs.pcap", l, &s);
  ASSERT_EQ(2u, s.s->n_flows);
  const tr_flow_summary& f = s.s->flows[0];
  EXPECT_STREQ("10.0.0.1:49169", f.src);
  EXPECT_STREQ("10.0.0.2", f.dst);
  EXPECT_EQ(B, f.dest_qp);
  EXPECT_EQ(TR_TRANSPORT_RC, f.transport);
  EXPECT_EQ(4u, f.packets);
  uint64_t bytes = 0;
  for (int i = 0; i < 4; i++) bytes += l[i].frame.size();
  EXPECT_EQ(bytes, f.bytes);
  EXPECT_EQ(2848u, f.unique_payload_bytes);
  EXPECT_EQ(1u, f.messages[TR_MSG_SEND].count);
  EXPECT_EQ(2548u, f.messages[TR_MSG_SEND].bytes);
  EXPECT_EQ(1u, f.messages[TR_MSG_WRITE].count);
  EXPECT_EQ(300u, f.messages[TR_MSG_WRITE].max_bytes);
  EXPECT_DOUBLE_EQ(2848.0 * 8e9 / 30000.0, f.goodput_bps);
  EXPECT_EQ(3u, f.ops[TR_OP_SEND]);
  EXPECT_EQ(1u, s.s->opcode_packets[0x0A]);
  EXPECT_EQ(5u, s.s->packets);
  EXPECT_EQ(40000u, s.s->last_ns - s.s->first_ns);
  EXPECT_EQ(0u, s.s->problems);
  EXPECT_EQ(1u, s.s->latency[TR_LAT_ACK].count);
  EXPECT_EQ(10000u, s.s->latency[TR_LAT_ACK].min_ns);
}

// Times that go back (a fabsim trace records a lost packet when it is lost): a flow lasts from
// its earliest packet to its latest, never a negative span.
TEST(Summary, AFlowWhoseTimesGoBackLastsFromItsEarliestToItsLatest) {
  std::vector<Written> l;
  l.push_back(Make(From(0x00, A, B, 10, true), 1024, 50000));
  l.push_back(Make(From(0x01, A, B, 11, true), 1024, 90000));
  l.push_back(Make(From(0x02, A, B, 12, true), 1024, 20000));
  Sum s;
  Summarize("back.pcap", l, &s);
  ASSERT_EQ(1u, s.s->n_flows);
  const tr_flow_summary& f = s.s->flows[0];
  EXPECT_EQ(20000u, f.first_ns);
  EXPECT_EQ(90000u, f.last_ns);
  EXPECT_DOUBLE_EQ(3072.0 * 8e9 / 70000.0, f.goodput_bps);
}

// A packet whose ICRC fails is dropped by its receiver, and any of its fields may be wrong: one
// whose PSN reads 1000 takes no part in the sequence (no jump forward, then no "resends" of what
// follows) — the flow has one gap, where it was.
TEST(Summary, APacketThatFailsItsIcrcTakesNoPartInTheSequence) {
  std::vector<Written> l;
  for (uint32_t i = 0; i < 6; i++) l.push_back(Make(From(0x04, A, B, 10 + i, true), 100, 1000 * i));
  l[2].frame[14 + 20 + 8 + 10] ^= 0x03;  // PSN 12 reads 1012 (or so); its ICRC no longer matches
  Sum s;
  Summarize("badicrc.pcap", l, &s);
  ASSERT_EQ(1u, s.s->n_flows);
  EXPECT_EQ(1u, s.s->icrc_bad);
  EXPECT_EQ(0u, s.s->retransmissions);
  EXPECT_EQ(1u, s.s->psn_gaps);
  EXPECT_EQ(5u, s.s->flows[0].messages[TR_MSG_SEND].count);
}

TEST(Summary, LatencyPercentiles) {
  std::vector<Written> l;
  uint64_t t = 0;
  for (uint32_t i = 1; i <= 100; i++) {  // ACK delays 1..100 ns, shuffled by a stride
    uint32_t d = (i * 37) % 100 + 1;
    l.push_back(Make(From(0x04, A, B, i, true), 8, t));
    l.push_back(Make(AckP(i), 0, t + d));
    t += 1000;
  }
  tr_packet rd = From(0x0C, A, B, 101, true);
  rd.reth.dma_len = 2000;
  l.push_back(Make(rd, 0, t));
  tr_packet r1 = From(0x0D, B, A, 101, false);
  l.push_back(Make(r1, 1024, t + 2500));
  l.push_back(Make(From(0x0F, B, A, 102, false), 976, t + 2600));
  tr_packet cs = From(0x13, A, B, 103, true);
  l.push_back(Make(cs, 0, t + 3000));
  l.push_back(Make(From(0x12, B, A, 103, false), 0, t + 3444));
  Sum s;
  Summarize("lat.pcap", l, &s);
  const tr_latency& a = s.s->latency[TR_LAT_ACK];
  EXPECT_EQ(100u, a.count);
  EXPECT_EQ(1u, a.min_ns);
  EXPECT_EQ(50u, a.p50_ns);
  EXPECT_EQ(99u, a.p99_ns);
  EXPECT_EQ(100u, a.max_ns);
  EXPECT_DOUBLE_EQ(50.5, a.mean_ns);
  EXPECT_EQ(1u, s.s->latency[TR_LAT_READ].count);
  EXPECT_EQ(2500u, s.s->latency[TR_LAT_READ].max_ns);
  EXPECT_EQ(1u, s.s->latency[TR_LAT_ATOMIC].count);
  EXPECT_EQ(444u, s.s->latency[TR_LAT_ATOMIC].min_ns);
  EXPECT_EQ(1u, s.s->messages[TR_MSG_READ].count);
  EXPECT_EQ(2000u, s.s->messages[TR_MSG_READ].bytes);
  EXPECT_EQ(1u, s.s->messages[TR_MSG_ATOMIC].count);
  EXPECT_EQ(0u, s.s->problems);
}

// A request sent again gives one latency sample, from its first transmission: not a second one
// when the resend is answered too, nor one from the resend (shorter than any round trip).
TEST(Summary, LatencyOncePerRequestFromItsFirstTransmission) {
  std::vector<Written> l;
  l.push_back(Make(From(0x04, A, B, 1, true), 8, 0));
  l.push_back(Make(AckP(1), 0, 500));                             // answers it: 500
  l.push_back(Make(From(0x04, A, B, 1, true), 8, 1000));          // sent again all the same
  l.push_back(Make(AckP(1), 0, 1100));                            // not another sample
  l.push_back(Make(From(0x04, A, B, 2, true), 8, 2000));
  l.push_back(Make(From(0x04, A, B, 2, true), 8, 3000));          // a timeout's resend
  l.push_back(Make(AckP(2), 0, 3100));                            // 1100 from the first
  l.push_back(Make(From(0x04, A, B, 3, true), 8, 4000, TR_DROPPED));
  l.push_back(Make(AckP(3), 0, 4100));                            // answers no copy of it
  l.push_back(Make(From(0x04, A, B, 3, true), 8, 5000, TR_RETRANSMIT));
  l.push_back(Make(AckP(3), 0, 5300));                            // 1300 from the first
  Sum s;
  Summarize("lat_resend.pcap", l, &s);
  const tr_latency& a = s.s->latency[TR_LAT_ACK];
  EXPECT_EQ(3u, a.count);
  EXPECT_EQ(500u, a.min_ns);
  EXPECT_EQ(1100u, a.p50_ns);
  EXPECT_EQ(1300u, a.max_ns);
}

TEST(Summary, PairsResponsesWithTheirQpWhenPsnsCollide) {
  // Two QP pairs between the same hosts, both starting at PSN 0; only the source port (the QP)
  // tells which ACK answers which request.
  std::vector<Written> l;
  l.push_back(Make(From(0x04, 0x11, 0x21, 0, true), 8, 0));
  l.push_back(Make(From(0x04, 0x12, 0x22, 0, true), 8, 50));
  l.push_back(Make(AckP(0, kAck, 0x22, 0x12), 0, 150));  // 100 ns after its request
  l.push_back(Make(AckP(0, kAck, 0x21, 0x11), 0, 900));  // 900 ns after its request
  Sum s;
  Summarize("pair.pcap", l, &s);
  const tr_latency& a = s.s->latency[TR_LAT_ACK];
  EXPECT_EQ(2u, a.count);
  EXPECT_EQ(100u, a.min_ns);
  EXPECT_EQ(900u, a.max_ns);
}

// Ports that say nothing of the QP (rxe, mlx5): two QPs between the same hosts sent PSNs 100 and
// 101; an ACK of 101 goes to the second. Either could have sent what it answers, so it is credited
// to neither — not to the first, whose resend would then look like one of acknowledged data.
// Once a pair is certain it is kept, and a QP paired stays out of the others' candidates.
TEST(Summary, ResponsesPairWithARequestFlowOnlyWhenThatIsCertain) {
  auto from_port = [](uint8_t op, uint16_t port, uint32_t dest_qp, uint32_t psn, bool from_a) {
    tr_packet p = Pkt(op, dest_qp, psn, from_a);
    p.udp_sport = port;
    return p;
  };
  std::vector<Written> l;
  for (uint32_t psn : {100, 101}) l.push_back(Make(from_port(0x04, 50001, 0x201, psn, true), 8, psn));
  for (uint32_t psn : {100, 101}) l.push_back(Make(from_port(0x04, 50002, 0x202, psn, true), 8, psn + 10));
  Written ack = Make(from_port(0x11, 50004, 0x102, 101, false), 0, 200);
  l.push_back(ack);
  for (uint32_t psn : {100, 101}) l.push_back(Make(from_port(0x04, 50001, 0x201, psn, true), 8, psn + 300));
  Sum s;
  Summarize("collide.pcap", l, &s);
  EXPECT_EQ(0u, s.s->problems);
  EXPECT_EQ(0u, s.s->latency[TR_LAT_ACK].count);
  tr_summary_free(s.s);
  s.s = nullptr;

  // QP after QP: the first ACK has one candidate; the second two, one of them already paired.
  // Later ACKs keep to their pairs even where another flow sent the PSN.
  l.clear();
  l.push_back(Make(from_port(0x04, 50001, 0x201, 0, true), 8, 0));
  l.push_back(Make(from_port(0x11, 50003, 0x101, 0, false), 0, 100));   // 100
  l.push_back(Make(from_port(0x04, 50002, 0x202, 0, true), 8, 200));
  l.push_back(Make(from_port(0x11, 50004, 0x102, 0, false), 0, 500));   // 300
  l.push_back(Make(from_port(0x04, 50002, 0x202, 1, true), 8, 600));
  l.push_back(Make(from_port(0x04, 50001, 0x201, 1, true), 8, 700));
  l.push_back(Make(from_port(0x11, 50003, 0x101, 1, false), 0, 1400));  // 700
  l.push_back(Make(from_port(0x11, 50004, 0x102, 1, false), 0, 1600));  // 1000
  Summarize("pairs.pcap", l, &s);
  const tr_latency& a = s.s->latency[TR_LAT_ACK];
  EXPECT_EQ(4u, a.count);
  EXPECT_EQ(100u, a.min_ns);
  EXPECT_EQ(1000u, a.max_ns);
  EXPECT_DOUBLE_EQ((100 + 300 + 700 + 1000) / 4.0, a.mean_ns);
  tr_summary_free(s.s);
  s.s = nullptr;

  // A port that names a QP by chance: a flow to QP 0x23 leaves from port 0xC011 too, and the
  // ACK goes to QP 0x11. Only the flow to QP 0x22, the QP the ACK's port 0xC022 names, is its.
  l.clear();
  l.push_back(Make(from_port(0x04, 0xC011, 0x23, 0, true), 8, 0));
  l.push_back(Make(from_port(0x04, 0xC011, 0x22, 0, true), 8, 10));
  l.push_back(Make(from_port(0x11, 0xC022, 0x11, 0, false), 0, 110));  // 100
  Summarize("chance.pcap", l, &s);
  EXPECT_EQ(1u, s.s->latency[TR_LAT_ACK].count);
  EXPECT_EQ(100u, s.s->latency[TR_LAT_ACK].max_ns);
}

// A READ response already answered in full, sent again (README: "a READ response repeated" is a
// retransmission): one READ message, its bytes once.
TEST(Summary, ARepeatedReadResponseIsARetransmission) {
  std::vector<Written> l;
  tr_packet rd = From(0x0C, A, B, 10, true);
  rd.reth.dma_len = 2048;
  l.push_back(Make(rd, 0, 0));
  for (int again = 0; again < 2; again++) {
    l.push_back(Make(From(0x0D, B, A, 10, false), 1024, 20 + 100 * again));
    l.push_back(Make(From(0x0F, B, A, 11, false), 1024, 30 + 100 * again));
  }
  tr_packet one = From(0x0C, A, B, 12, true);
  one.reth.dma_len = 64;
  l.push_back(Make(one, 0, 300));
  l.push_back(Make(From(0x10, B, A, 12, false), 64, 310));
  l.push_back(Make(From(0x10, B, A, 12, false), 64, 320));
  Sum s;
  Summarize("readdup.pcap", l, &s);
  EXPECT_EQ(3u, s.s->retransmissions);
  EXPECT_EQ(0u, s.s->problems);
  EXPECT_EQ(2u, s.s->messages[TR_MSG_READ].count);
  EXPECT_EQ(2048u + 64u, s.s->messages[TR_MSG_READ].bytes);
}

TEST(Summary, ReadResponsesConsumeRequesterPsns) {
  std::vector<Written> l;
  tr_packet rd = From(0x0C, A, B, 10, true);
  rd.reth.dma_len = 3000;
  l.push_back(Make(rd, 0, 0));
  l.push_back(Make(From(0x04, A, B, 13, true), 8, 10));  // pipelined: jumps over 10..12
  l.push_back(Make(From(0x0D, B, A, 10, false), 1024, 20));
  l.push_back(Make(From(0x0E, B, A, 11, false), 1024, 30));
  l.push_back(Make(From(0x0F, B, A, 12, false), 952, 40));
  l.push_back(Make(From(0x04, A, B, 14, true), 8, 50));
  l.push_back(Make(AckP(14), 0, 60));
  Sum s;
  Summarize("readpsn.pcap", l, &s);
  EXPECT_EQ(0u, s.s->psn_gaps);
  EXPECT_EQ(0u, s.s->retransmissions);
  EXPECT_EQ(0u, s.s->problems);
  EXPECT_EQ(3000u, s.s->messages[TR_MSG_READ].bytes);
}

TEST(Summary, RetransmissionsGapsNaksDropsTags) {
  std::vector<Written> l;
  uint64_t t = 0;
  auto at = [&]() { return t += 100; };
  l.push_back(Make(From(0x04, A, B, 1, true), 8, at()));
  l.push_back(Make(From(0x04, A, B, 2, true), 8, at(), TR_DROPPED, {TR_REASON_BUFFER, 1, 2, 3}));
  l.push_back(Make(From(0x04, A, B, 3, true), 8, at()));
  l.push_back(Make(AckP(2, 0x60), 0, at()));                                   // PSN sequence NAK
  l.push_back(Make(From(0x04, A, B, 2, true), 8, at(), TR_RETRANSMIT));
  l.push_back(Make(From(0x04, A, B, 3, true), 8, at()));                       // unmarked resend
  l.push_back(Make(AckP(3), 0, at()));
  l.push_back(Make(From(0x04, A, B, 4, true), 8, at()));
  l.push_back(Make(AckP(4, 0x20 | 3), 0, at()));                               // RNR
  l.push_back(Make(From(0x04, A, B, 4, true), 8, at()));
  l.push_back(Make(AckP(4), 0, at(), TR_DROPPED, {TR_REASON_LOSS, 9, 9, 9}));
  tr_packet tagged = From(0x04, A, B, 7, true);  // 5 and 6 never seen: a gap
  tagged.flags |= TR_PKT_TAGHDR;
  tagged.tag.tag = 99;
  l.push_back(Make(tagged, 8, at()));
  l.push_back(Make(AckP(7, 0x61), 0, at()));
  l.push_back(Make(From(0x04, A, B, 8, true), 8, at()));
  l.push_back(Make(From(0x04, A, B, 8, true), 8, at(), TR_DUPLICATE));
  Written bad = Make(From(0x04, A, B, 9, true), 8, at(), TR_CORRUPTED);
  bad.frame[bad.frame.size() - 6] ^= 1;
  l.push_back(bad);
  l.push_back(Make(AckP(9, 0x62), 0, at()));
  l.push_back(Make(AckP(9, 0x63), 0, at()));
  l.push_back(Make(AckP(9, 0x64), 0, at()));
  Sum s;
  Summarize("events.pcap", l, &s);
  const tr_summary& x = *s.s;
  EXPECT_EQ(3u, x.retransmissions);
  EXPECT_EQ(1u, x.marked_retransmits);
  EXPECT_EQ(1u, x.psn_gaps);
  EXPECT_EQ(2u, x.dropped);
  EXPECT_EQ(1u, x.drop_reasons[TR_REASON_BUFFER]);
  EXPECT_EQ(1u, x.drop_reasons[TR_REASON_LOSS]);
  EXPECT_EQ(1u, x.corrupted);
  EXPECT_EQ(1u, x.duplicated);
  EXPECT_EQ(0u, x.icrc_bad);  // the damaged frame is marked
  EXPECT_EQ(1u, x.naks[TR_NAKK_PSN_SEQUENCE]);
  EXPECT_EQ(1u, x.naks[TR_NAKK_RNR]);
  EXPECT_EQ(1u, x.naks[TR_NAKK_INVALID_REQUEST]);
  EXPECT_EQ(1u, x.naks[TR_NAKK_REMOTE_ACCESS]);
  EXPECT_EQ(1u, x.naks[TR_NAKK_REMOTE_OPERATIONAL]);
  EXPECT_EQ(1u, x.naks[TR_NAKK_OTHER]);
  EXPECT_EQ(1u, x.tagged_messages);
  EXPECT_EQ(1u, x.problems);  // the gap
  EXPECT_EQ(1u, x.flows[0].psn_gaps);
  EXPECT_EQ(3u, x.flows[0].retransmissions);
  EXPECT_EQ(6u, x.flows[1].naks[TR_NAKK_PSN_SEQUENCE] + x.flows[1].naks[TR_NAKK_RNR] +
                    x.flows[1].naks[TR_NAKK_INVALID_REQUEST] + x.flows[1].naks[TR_NAKK_REMOTE_ACCESS] +
                    x.flows[1].naks[TR_NAKK_REMOTE_OPERATIONAL] + x.flows[1].naks[TR_NAKK_OTHER]);
  // user data of PSNs 1,2,3,4,7,8,9 once each: no resend, no copy, no tag header
  EXPECT_EQ(7u * 8, x.flows[0].unique_payload_bytes);
  EXPECT_EQ(11u * 8 + TR_TAG_LEN, x.flows[0].payload_bytes);  // every packet, tag header included
}

// PSNs 1,2,4,3,5,6: 3 was never seen before, so it arrives late (reordered on the way to the
// capture point), it is not sent again — six messages, no retransmission. A capture at the
// receiver does see the gap at 4. Sent once more later, 3 is a retransmission.
TEST(Summary, APsnArrivingLateIsReorderedNotResent) {
  std::vector<Written> l;
  uint64_t t = 0;
  for (uint32_t psn : {1, 2, 4, 3, 5, 6}) l.push_back(Make(From(0x04, A, B, psn, true), 8, t += 100));
  l.push_back(Make(AckP(6), 0, t += 100));
  Sum s;
  Summarize("late.pcap", l, &s);
  EXPECT_EQ(0u, s.s->retransmissions);
  EXPECT_EQ(1u, s.s->reordered);
  EXPECT_EQ(1u, s.s->flows[0].reordered);
  EXPECT_EQ(1u, s.s->psn_gaps);
  EXPECT_EQ(1u, s.s->problems);
  EXPECT_EQ(6u, s.s->flows[0].messages[TR_MSG_SEND].count);
  EXPECT_EQ(6u * 8, s.s->flows[0].unique_payload_bytes);
  char* text = tr_summary_json(s.s);
  ASSERT_NE(nullptr, text);
  json_t* root = json_loads(text, 0, nullptr);
  free(text);
  ASSERT_NE(nullptr, root);
  EXPECT_EQ(1, json_integer_value(json_object_get(root, "reordered")));
  json_t* f0 = json_array_get(json_object_get(root, "flows"), 0);
  EXPECT_EQ(1, json_integer_value(json_object_get(f0, "reordered")));
  json_decref(root);
  tr_summary_free(s.s);
  s.s = nullptr;

  // Reordered inside a message of several packets: that message is not reassembled, the packet
  // neither opens one nor breaks the newer one; a UC flow takes it the same way.
  for (uint8_t uc : {0x00, 0x20}) {
    l.clear();
    t = 0;
    l.push_back(Make(From(uc | 0x04, A, B, 1, true), 8, t += 100));
    l.push_back(Make(From(uc | 0x04, A, B, 3, true), 8, t += 100));
    l.push_back(Make(From(uc | 0x00, A, B, 2, true), 1024, t += 100));  // a FIRST, late
    l.push_back(Make(From(uc | 0x00, A, B, 4, true), 1024, t += 100));
    l.push_back(Make(From(uc | 0x02, A, B, 5, true), 8, t += 100));
    l.push_back(Make(From(uc | 0x04, A, B, 2, true), 8, t += 100));  // now a resend
    Summarize(uc ? "late_uc.pcap" : "late_msg.pcap", l, &s);
    EXPECT_EQ(1u, s.s->reordered);
    EXPECT_EQ(1u, s.s->retransmissions);
    EXPECT_EQ(3u, s.s->flows[0].messages[TR_MSG_SEND].count);
    EXPECT_EQ(0u, s.s->flows[0].incomplete_messages);
    // the gap; the resend on UC
    EXPECT_EQ(uc ? 2u : 1u, s.s->problems);
    tr_summary_free(s.s);
    s.s = nullptr;
  }
}

// A frame the capture recorded twice (mergecap of a file with itself: same bytes, same time) is
// one packet on the wire: no retransmission, no network duplicate, one message. The same bytes
// at another time are a resend.
TEST(Summary, AFrameRecordedTwiceIsACaptureCopy) {
  std::vector<Written> l;
  for (uint32_t psn : {1, 2, 3}) l.push_back(Make(From(0x04, A, B, psn, true), 8, psn * 100));
  l.insert(l.begin() + 2, l[1]);  // PSN 2 twice at 200
  l.push_back(Make(AckP(3), 0, 400));
  l.push_back(l.back());
  Sum s;
  Summarize("copies.pcap", l, &s);
  EXPECT_EQ(2u, s.s->duplicate_captures);
  EXPECT_EQ(0u, s.s->duplicated);
  EXPECT_EQ(0u, s.s->retransmissions);
  EXPECT_EQ(0u, s.s->problems);
  EXPECT_EQ(3u, s.s->flows[0].messages[TR_MSG_SEND].count);
  EXPECT_EQ(1u, s.s->latency[TR_LAT_ACK].count);
  EXPECT_EQ(6u, s.s->packets);  // every frame of the file, as tshark counts them
  char* text = tr_summary_json(s.s);
  ASSERT_NE(nullptr, text);
  EXPECT_NE(nullptr, strstr(text, "\"duplicate_captures\": 2")) << text;
  free(text);
  tr_summary_free(s.s);
  s.s = nullptr;
  l[2].ts_ns = 250;
  l.erase(l.end() - 1);
  Summarize("resend.pcap", l, &s);
  EXPECT_EQ(0u, s.s->duplicate_captures);
  EXPECT_EQ(1u, s.s->retransmissions);
}

// `trace summary --json` writes its flows one at a time: the text is the
// whole tree's, byte for byte.
// A conversation mirrored through ERSPAN, or carried over VXLAN, sums up as itself: the flows are
// the inner hosts' and QPs', messages, retransmissions and latencies the same; only the bytes on
// the wire grow by the tunnel's headers.
TEST(Summary, TunnelledTrafficIsTheInnerTraffic) {
  std::vector<Written> plain = trtest::Conversation();
  Sum a;
  Summarize("plain.pcap", plain, &a);
  for (bool vxlan : {false, true}) {
    std::vector<Written> wrapped;
    for (Written w : plain) {
      w.frame = trtest::OverIpv4(vxlan ? 17 : 47, vxlan ? trtest::Vxlan() : trtest::Erspan2(), w.frame);
      wrapped.push_back(w);
    }
    Sum b;
    Summarize(vxlan ? "vxlan.pcap" : "erspan.pcap", wrapped, &b);
    ASSERT_GT(a.s->packets, 10u);
    EXPECT_EQ(a.s->packets, b.s->packets);
    EXPECT_EQ(0u, b.s->other);
    EXPECT_EQ(0u, b.s->malformed);
    EXPECT_EQ(a.s->bytes + a.s->packets * (14 + 20 + 16), b.s->bytes);
    EXPECT_EQ(a.s->payload_bytes, b.s->payload_bytes);
    EXPECT_EQ(a.s->icrc_bad, b.s->icrc_bad);
    EXPECT_EQ(a.s->dropped, b.s->dropped);
    EXPECT_EQ(a.s->problems, b.s->problems);
    EXPECT_EQ(a.s->retransmissions, b.s->retransmissions);
    ASSERT_EQ(a.s->n_flows, b.s->n_flows);
    for (size_t i = 0; i < a.s->n_flows; i++) {
      EXPECT_STREQ(a.s->flows[i].src, b.s->flows[i].src);
      EXPECT_STREQ(a.s->flows[i].dst, b.s->flows[i].dst);
      EXPECT_EQ(a.s->flows[i].dest_qp, b.s->flows[i].dest_qp);
      EXPECT_EQ(a.s->flows[i].packets, b.s->flows[i].packets);
      EXPECT_EQ(a.s->flows[i].unique_payload_bytes, b.s->flows[i].unique_payload_bytes);
    }
    for (int k = 0; k < TR_LAT_KINDS; k++) {
      EXPECT_EQ(a.s->latency[k].count, b.s->latency[k].count);
      EXPECT_EQ(a.s->latency[k].p50_ns, b.s->latency[k].p50_ns);
    }
    for (int k = 0; k < TR_MSG_KINDS; k++) EXPECT_EQ(a.s->messages[k].bytes, b.s->messages[k].bytes);
  }
}

// n QPs between the same two hosts, each a READ and its response; the ports name no QP, so each
// response flow looks for its request flow once, among the unpaired flows of its two hosts. Each
// finds its own: one READ latency per QP. (Time per QP: bench_record --qps, BENCHMARKS.md.)
TEST(Summary, ManyQpsWhosePortsNameNoneArePairedEach) {
  const uint32_t n = 2000;
  std::vector<Written> l;
  for (uint32_t q = 0; q < n; q++) {
    tr_packet r = From(0x0C, 0, 0x100000 + q, q * 37, true);
    r.udp_sport = static_cast<uint16_t>(0xC000 + q % 0x4000);
    r.reth = {0x1000, 7, 64};
    l.push_back(Make(r, 0, 2 * q));
    tr_packet resp = From(0x10, 0, 0x1000 + q, q * 37, false);
    resp.udp_sport = static_cast<uint16_t>(0xC000 + (q * 13 + 5) % 0x4000);
    resp.aeth.syndrome = kAck;
    l.push_back(Make(resp, 64, 2 * q + 1));
  }
  std::string path = trtest::TempPath("qps.pcap");
  ASSERT_TRUE(trtest::WriteTrace(path, l));
  tr_summary* s;
  tr_error err;
  ASSERT_EQ(0, tr_summary_file(path.c_str(), &s, &err)) << err.msg;
  EXPECT_EQ(n, s->latency[TR_LAT_READ].count);
  tr_summary_free(s);
}

TEST(Summary, PrintedJsonIsTheWholeTreesText) {
  auto list = trtest::Conversation();
  Sum s;
  Summarize("printed.pcap", list, &s);
  ASSERT_GT(s.s->n_flows, 1u);
  char* tree = tr_summary_json(s.s);
  ASSERT_NE(nullptr, tree);
  char* printed = nullptr;
  size_t len = 0;
  FILE* out = open_memstream(&printed, &len);
  ASSERT_NE(nullptr, out);
  tr_error err;
  ASSERT_EQ(0, tr_summary_print_json(s.s, nullptr, out, &err)) << err.msg;
  fclose(out);
  EXPECT_EQ(std::string(tree) + "\n", std::string(printed, len));
  free(tree);
  free(printed);
}

TEST(Summary, JsonCarriesTheSameFigures) {
  auto list = trtest::Conversation();
  Sum s;
  Summarize("json.pcap", list, &s);
  char* text = tr_summary_json(s.s);
  ASSERT_NE(nullptr, text);
  json_error_t jerr;
  json_t* root = json_loads(text, 0, &jerr);
  free(text);
  ASSERT_NE(nullptr, root) << jerr.text;
  EXPECT_EQ(static_cast<json_int_t>(s.s->frames), json_integer_value(json_object_get(root, "frames")));
  EXPECT_EQ(static_cast<json_int_t>(s.s->packets), json_integer_value(json_object_get(root, "packets")));
  EXPECT_EQ(static_cast<json_int_t>(s.s->markers), json_integer_value(json_object_get(root, "markers")));
  EXPECT_EQ(static_cast<json_int_t>(s.s->bytes), json_integer_value(json_object_get(root, "bytes")));
  EXPECT_EQ(0, json_integer_value(json_object_get(root, "problems")));
  json_t* flows = json_object_get(root, "flows");
  ASSERT_EQ(s.s->n_flows, json_array_size(flows));
  for (size_t i = 0; i < s.s->n_flows; i++) {
    json_t* f = json_array_get(flows, i);
    EXPECT_STREQ(s.s->flows[i].src, json_string_value(json_object_get(f, "src")));
    EXPECT_EQ(static_cast<json_int_t>(s.s->flows[i].dest_qp), json_integer_value(json_object_get(f, "dest_qp")));
    EXPECT_EQ(static_cast<json_int_t>(s.s->flows[i].packets), json_integer_value(json_object_get(f, "packets")));
    EXPECT_NE(nullptr, json_object_get(json_object_get(f, "naks"), "rnr"));
    EXPECT_NE(nullptr, json_object_get(json_object_get(f, "messages"), "send"));
  }
  json_t* ops = json_object_get(root, "opcodes");
  size_t i;
  json_t* op;
  uint64_t total = 0;
  json_array_foreach(ops, i, op) {
    int code = static_cast<int>(json_integer_value(json_object_get(op, "opcode")));
    EXPECT_STREQ(tr_opcode_name(static_cast<uint8_t>(code)), json_string_value(json_object_get(op, "name")));
    EXPECT_EQ(static_cast<json_int_t>(s.s->opcode_packets[code]), json_integer_value(json_object_get(op, "packets")));
    total += json_integer_value(json_object_get(op, "packets"));
  }
  EXPECT_EQ(s.s->packets, total);
  json_t* lat = json_object_get(json_object_get(root, "latency"), "ack");
  EXPECT_EQ(static_cast<json_int_t>(s.s->latency[TR_LAT_ACK].count), json_integer_value(json_object_get(lat, "count")));
  EXPECT_EQ(1, json_integer_value(json_object_get(json_object_get(root, "naks"), "rnr")));
  EXPECT_EQ(1, json_integer_value(json_object_get(json_object_get(root, "drop_reasons"), "loss")));
  json_decref(root);
}

TEST(Summary, TextTables) {
  auto list = trtest::Conversation();
  Sum s;
  Summarize("text.pcap", list, &s);
  char* text = nullptr;
  size_t len = 0;
  FILE* out = open_memstream(&text, &len);
  tr_summary_print(s.s, out);
  fclose(out);
  std::string t(text, len);
  free(text);
  for (const char* want : {"RC RDMA_READ_RESPONSE_MIDDLE", "UD SEND_ONLY_WITH_IMMEDIATE", "10.0.0.1:49169",
                           "0x000022 RC", "retransmissions 5 (marked 5)", "drops by reason: loss 1 queue full 1",
                           "rnr 1", "read_response", "tagged", "problems 0"})
    EXPECT_NE(std::string::npos, t.find(want)) << want << "\n" << t;
}

TEST(Summary, UnreadableTailStillSummarisesTheRest) {
  auto list = trtest::Conversation();
  std::string path = trtest::TempPath("tail.pcap");
  ASSERT_TRUE(trtest::WriteTrace(path, list));
  auto b = trtest::ReadFile(path);
  b.resize(b.size() - 3);
  trtest::WriteFile(path, b);
  tr_summary* s;
  tr_error err;
  EXPECT_EQ(-EINVAL, tr_summary_file(path.c_str(), &s, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "truncated")) << err.msg;
  ASSERT_NE(nullptr, s);
  EXPECT_EQ(list.size() - 1, s->packets);
  EXPECT_EQ(1u, s->problems);
  tr_summary_free(s);
  EXPECT_EQ(-ENOENT, tr_summary_file("/no/such.pcap", &s, &err));
  EXPECT_EQ(nullptr, s);
}

}  // namespace
