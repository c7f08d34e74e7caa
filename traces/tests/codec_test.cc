// The packet codec: build -> parse round trips for every opcode over IPv4/IPv6 with 0-2 VLAN
// tags, the builder's refusals, frame-level details (checksums, DF, pad), and the parser's
// handling of truncated, lying and foreign frames.
#include "traces/tests/test_util.h"

namespace {

using trtest::Build;
using trtest::Bytes;
using trtest::Pkt;

int Parse(const Bytes& f, tr_packet* p, tr_error* err, uint32_t caplen = 0,
          uint32_t linktype = TR_LINKTYPE_ETHERNET, const char** what = nullptr) {
  uint32_t cap = caplen ? caplen : static_cast<uint32_t>(f.size());
  return tr_packet_parse(p, f.data(), cap, static_cast<uint32_t>(f.size()), linktype, what, err);
}

// Fills every field the opcode carries with values derived from the opcode.
tr_packet Full(uint8_t opcode, uint8_t ipv, uint8_t vlans, const Bytes& payload, bool tagged) {
  tr_packet p = Pkt(opcode, 0x123456, 0xABCDEF);
  p.ip_version = ipv;
  if (ipv == 6) {
    for (int i = 0; i < 16; i++) {
      p.ip_src[i] = static_cast<uint8_t>(0x20 + i);
      p.ip_dst[i] = static_cast<uint8_t>(0x40 + i);
    }
    p.ip_flow_label = 0xABCDE;
  }
  p.ip_tos = 0x68;
  p.ip_ttl = 17;
  p.ip_id = 0x1234;
  p.vlan_count = vlans;
  for (int i = 0; i < vlans; i++) {
    p.vlan_tpid[i] = i == 0 && vlans == 2 ? 0x88A8 : 0x8100;
    p.vlan_tci[i] = static_cast<uint16_t>(0x6000 | (10 + i));
  }
  p.udp_sport = tr_udp_sport_for_qp(0x3456 + opcode);
  p.se = opcode & 1;
  p.migreq = true;
  p.pkey = 0x8001;
  p.ack_req = true;
  p.reth = {0x1122334455667788ull + opcode, 0xA0B0C0D0u, 0x10000u + opcode};
  p.aeth = {static_cast<uint8_t>(0x1F), 0x00FEDCu};
  p.atomic = {0x0102030405060708ull, 0xCAFEu, 0x1111222233334444ull, 0x5555666677778888ull};
  p.atomic_ack_orig = 0x99AABBCCDDEEFF00ull;
  p.immdt = 0xDEADBEEFu;
  p.ieth_rkey = 0x4242u;
  p.deth = {0x80010000u, 0x00BEEFu};
  const tr_opcode_info* op = tr_opcode(opcode);
  if (op->has_payload) {
    p.payload = payload.data();
    p.payload_len = static_cast<uint32_t>(payload.size());
  }
  if (tagged) {
    p.flags |= TR_PKT_TAGHDR;
    p.tag.tag = 0x0123456789ABCDEFull;
    p.tag.flags = TR_TAG_F_CQ_DATA;
  }
  return p;
}

void ExpectSame(const tr_packet& a, const tr_packet& b) {
  const tr_opcode_info* op = tr_opcode(a.opcode);
  EXPECT_EQ(0, memcmp(a.eth_dst, b.eth_dst, 6));
  EXPECT_EQ(0, memcmp(a.eth_src, b.eth_src, 6));
  EXPECT_EQ(a.vlan_count, b.vlan_count);
  for (int i = 0; i < a.vlan_count; i++) {
    EXPECT_EQ(a.vlan_tpid[i], b.vlan_tpid[i]);
    EXPECT_EQ(a.vlan_tci[i], b.vlan_tci[i]);
  }
  EXPECT_EQ(a.ip_version, b.ip_version);
  size_t alen = a.ip_version == 6 ? 16 : 4;
  EXPECT_EQ(0, memcmp(a.ip_src, b.ip_src, alen));
  EXPECT_EQ(0, memcmp(a.ip_dst, b.ip_dst, alen));
  EXPECT_EQ(a.ip_tos, b.ip_tos);
  EXPECT_EQ(a.ip_ttl, b.ip_ttl);
  if (a.ip_version == 6) {
    EXPECT_EQ(a.ip_flow_label, b.ip_flow_label);
  }
  if (a.ip_version == 4) {
    EXPECT_EQ(a.ip_id, b.ip_id);
    EXPECT_TRUE(b.ip_df);
  }
  EXPECT_TRUE(b.ip_csum_ok);
  EXPECT_EQ(a.udp_sport, b.udp_sport);
  EXPECT_EQ(TR_ROCE_PORT, b.udp_dport);
  EXPECT_EQ(a.opcode, b.opcode);
  EXPECT_EQ(op, b.op);
  EXPECT_EQ(a.se, b.se);
  EXPECT_EQ(a.migreq, b.migreq);
  EXPECT_EQ(a.pkey, b.pkey);
  EXPECT_EQ(a.dest_qp, b.dest_qp);
  EXPECT_EQ(a.ack_req, b.ack_req);
  EXPECT_EQ(a.psn, b.psn);
  if (op->hdrs & TR_HDR_BIT(TR_HDR_RETH)) {
    EXPECT_EQ(a.reth.va, b.reth.va);
    EXPECT_EQ(a.reth.rkey, b.reth.rkey);
    EXPECT_EQ(a.reth.dma_len, b.reth.dma_len);
  }
  if (op->hdrs & TR_HDR_BIT(TR_HDR_AETH)) {
    EXPECT_EQ(a.aeth.syndrome, b.aeth.syndrome);
    EXPECT_EQ(a.aeth.msn, b.aeth.msn);
  }
  if (op->hdrs & TR_HDR_BIT(TR_HDR_ATOMICETH)) {
    EXPECT_EQ(a.atomic.va, b.atomic.va);
    EXPECT_EQ(a.atomic.rkey, b.atomic.rkey);
    EXPECT_EQ(a.atomic.swap_add, b.atomic.swap_add);
    EXPECT_EQ(a.atomic.compare, b.atomic.compare);
  }
  if (op->hdrs & TR_HDR_BIT(TR_HDR_ATOMICACKETH)) {
    EXPECT_EQ(a.atomic_ack_orig, b.atomic_ack_orig);
  }
  if (op->hdrs & TR_HDR_BIT(TR_HDR_IMMDT)) {
    EXPECT_EQ(a.immdt, b.immdt);
  }
  if (op->hdrs & TR_HDR_BIT(TR_HDR_IETH)) {
    EXPECT_EQ(a.ieth_rkey, b.ieth_rkey);
  }
  if (op->hdrs & TR_HDR_BIT(TR_HDR_DETH)) {
    EXPECT_EQ(a.deth.qkey, b.deth.qkey);
    EXPECT_EQ(a.deth.src_qp, b.deth.src_qp);
  }
  EXPECT_EQ(a.flags & TR_PKT_TAGHDR, b.flags & TR_PKT_TAGHDR);
  if (a.flags & TR_PKT_TAGHDR) {
    EXPECT_EQ(a.tag.tag, b.tag.tag);
    EXPECT_EQ(a.tag.flags, b.tag.flags);
    EXPECT_EQ(TR_TAG_VERSION, b.tag.version);
    EXPECT_EQ(TR_TAG_LEN, b.tag.len);
  }
  ASSERT_EQ(a.payload_len, b.payload_len);
  EXPECT_EQ(b.payload_len, b.payload_caplen);
  if (a.payload_len) {
    EXPECT_EQ(0, memcmp(a.payload, b.payload, a.payload_len));
  }
  uint32_t data = a.payload_len + ((a.flags & TR_PKT_TAGHDR) ? TR_TAG_LEN : 0);
  EXPECT_EQ((4 - data % 4) % 4, b.padcnt);
  EXPECT_TRUE(b.icrc_captured);
  EXPECT_EQ(b.icrc_stored, b.icrc_computed);
  EXPECT_FALSE(b.flags & TR_PKT_TRUNCATED);
  EXPECT_TRUE(b.flags & TR_PKT_ROCE);
}

class RoundTrip : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(RoundTrip, EveryOpcodeEveryPayloadLength) {
  auto [ipv, vlans, size] = GetParam();
  Bytes payload = trtest::Payload(static_cast<size_t>(size));
  int tested = 0;
  for (int code = 0; code < 256; code++) {
    const tr_opcode_info* op = tr_opcode(static_cast<uint8_t>(code));
    if (!op) continue;
    bool can_tag = op->op == TR_OP_SEND && (op->pos == TR_POS_FIRST || op->pos == TR_POS_ONLY);
    for (bool tagged : {false, true}) {
      if (tagged && !can_tag) continue;
      SCOPED_TRACE(std::string(op->name) + (tagged ? " tagged" : ""));
      tr_packet in = Full(static_cast<uint8_t>(code), static_cast<uint8_t>(ipv),
                          static_cast<uint8_t>(vlans), payload, tagged);
      Bytes f = Build(in);
      ASSERT_EQ(tr_packet_frame_len(&in), f.size());
      EXPECT_EQ(0u, f.size() % 2);
      tr_packet out;
      tr_error err;
      ASSERT_EQ(TR_PARSE_OK, Parse(f, &out, &err)) << err.msg;
      ExpectSame(in, out);
      tested++;
    }
  }
  EXPECT_EQ(38 + 9, tested);  // 38 opcodes, 9 of which may carry a tag header
}

INSTANTIATE_TEST_SUITE_P(IpVlanSize, RoundTrip,
                         ::testing::Combine(::testing::Values(4, 6), ::testing::Values(0, 1, 2),
                                            ::testing::Values(0, 1, 2, 3, 4, 1024, 4093)));

TEST(Build, FrameLayoutOfWireMd) {
  tr_packet p = Pkt(0x0C, 0x11, 5);
  p.reth = {0x7fee260fb000ull, 0x2b8, 65536};
  Bytes f = Build(p);
  ASSERT_EQ(74u, f.size());  // the same size as the rxe READ request of the captures
  EXPECT_EQ(0x08, f[12]);
  EXPECT_EQ(0x00, f[13]);
  EXPECT_EQ(0x45, f[14]);
  EXPECT_EQ(64, f[22]);                  // TTL
  EXPECT_EQ(17, f[23]);                  // UDP
  EXPECT_EQ(0x40, f[20]);                // DF
  EXPECT_EQ(0x12, f[36]);                // port 4791
  EXPECT_EQ(0xB7, f[37]);
  EXPECT_EQ(0, f[40] | f[41]);           // UDP checksum 0
  EXPECT_EQ(0x0C, f[42]);                // opcode
  EXPECT_EQ(0x11, f[49]);                // dest QP
  EXPECT_EQ(5, f[53]);                   // PSN
  EXPECT_EQ(0x7f, f[56]);                // RETH VA, big-endian, at 54
  // IPv4 header checksum: the one's complement sum over the header is 0xffff.
  uint32_t sum = 0;
  for (int i = 14; i < 34; i += 2) sum += f[i] << 8 | f[i + 1];
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  EXPECT_EQ(0xffffu, sum);
}

TEST(Build, Ipv6UdpChecksumIsValid) {
  tr_packet p = Pkt(0x04, 0x22, 1);
  p.ip_version = 6;
  Bytes pay = trtest::Payload(77);
  p.payload = pay.data();
  p.payload_len = 77;
  Bytes f = Build(p);
  // pseudo-header + UDP datagram sums to 0xffff when the checksum is right
  uint32_t len = f[58] << 8 | f[59], sum = 17 + len;
  for (int i = 22; i < 54; i += 2) sum += f[i] << 8 | f[i + 1];
  for (uint32_t i = 0; i < len; i += 2)
    sum += f[54 + i] << 8 | (i + 1 < len ? f[54 + i + 1] : 0);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  EXPECT_EQ(0xffffu, sum);
  EXPECT_EQ(62u, f[62] == 0x04 ? 62u : 0u);  // BTH at 62 with IPv6
}

TEST(Build, RefusesWhatWouldConfuseAReader) {
  Bytes buf(TR_FRAME_MAX), pay = trtest::Payload(8);
  tr_error err;
  auto expect_reject = [&](tr_packet p, int code, const char* words) {
    EXPECT_EQ(code, tr_packet_build(&p, buf.data(), buf.size(), &err));
    EXPECT_NE(nullptr, strstr(err.msg, words)) << err.msg;
  };
  tr_packet p = Pkt(0x04, 0, 1);
  expect_reject(p, -EINVAL, "QP 0 is reserved");
  p.dest_qp = 1;
  expect_reject(p, -EINVAL, "QP 1 is reserved");
  p.dest_qp = 0x1000000;
  expect_reject(p, -EINVAL, "wider than 24 bits");
  p = Pkt(0x04, 2, 0x1000000);
  expect_reject(p, -EINVAL, "PSN");
  p = Pkt(0x04, 2, 0);
  p.udp_sport = 4791;
  expect_reject(p, -EINVAL, "below 0xC000");
  p = Pkt(0x11, 2, 0);
  p.payload = pay.data();
  p.payload_len = 8;
  expect_reject(p, -EINVAL, "carries no payload");
  p = Pkt(0x0A, 2, 0);
  p.flags |= TR_PKT_TAGHDR;
  expect_reject(p, -EINVAL, "tag header");
  p = Pkt(0x02, 2, 0);
  p.flags |= TR_PKT_TAGHDR;
  expect_reject(p, -EINVAL, "tag header");
  p = Pkt(0x15, 2, 0);
  expect_reject(p, -EINVAL, "not in the opcode table");
  p = Pkt(0x04, 2, 0);
  p.ip_version = 5;
  expect_reject(p, -EINVAL, "IP version");
  p.ip_version = 4;
  p.vlan_count = 3;
  expect_reject(p, -EINVAL, "VLAN");
  p = Pkt(0x11, 2, 0);
  p.aeth.msn = 0x1000000;
  expect_reject(p, -EINVAL, "MSN");
  p = Pkt(0x04, 2, 0);
  p.payload_len = 70000;
  p.payload = buf.data();
  expect_reject(p, -EINVAL, "does not fit");
  p = Pkt(0x04, 2, 0);
  p.payload_len = 4;
  expect_reject(p, -EINVAL, "no buffer");
  p = Pkt(0x04, 2, 0);
  EXPECT_EQ(-ENOSPC, tr_packet_build(&p, buf.data(), 40, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "needs 58 bytes")) << err.msg;
}

TEST(Build, SourcePortPerQp) {
  EXPECT_EQ(0xC000u, tr_udp_sport_for_qp(0));
  EXPECT_EQ(0xC011u, tr_udp_sport_for_qp(0x11));
  EXPECT_EQ(0xFFFFu, tr_udp_sport_for_qp(0xFFFFFF));
  for (uint32_t q = 0; q < 0x10000; q += 97) EXPECT_GE(tr_udp_sport_for_qp(q), 0xC000u);
}

TEST(Parse, FlippedByteFailsTheIcrcEverywhereButTheVariantFields) {
  tr_packet in = Pkt(0x0B, 0x22, 9);
  Bytes pay = trtest::Payload(64);
  in.payload = pay.data();
  in.payload_len = 64;
  in.reth.dma_len = 64;
  Bytes f = Build(in);
  for (size_t i = 14; i < f.size(); i++) {
    Bytes g = f;
    g[i] ^= 0x01;
    tr_packet out;
    tr_error err;
    int r = Parse(g, &out, &err);
    if (r != TR_PARSE_OK) continue;  // a flipped length or port: not RoCE or not parseable
    bool variant = i == 15 || i == 22 || i == 24 || i == 25 || i == 40 || i == 41 || i == 46;
    EXPECT_EQ(variant, out.icrc_stored == out.icrc_computed) << "byte " << i;
  }
}

TEST(Parse, TruncatedFrameKeepsItsHeaders) {
  tr_packet in = Pkt(0x06, 0x22, 9);
  Bytes pay = trtest::Payload(1024);
  in.payload = pay.data();
  in.payload_len = 1024;
  in.reth = {0x1000, 7, 4096};
  Bytes f = Build(in);
  tr_packet out;
  tr_error err;
  ASSERT_EQ(TR_PARSE_OK, Parse(f, &out, &err, TR_SNAPLEN_HEADERS)) << err.msg;
  EXPECT_TRUE(out.flags & TR_PKT_TRUNCATED);
  EXPECT_FALSE(out.icrc_captured);
  EXPECT_EQ(1024u, out.payload_len);
  EXPECT_EQ(TR_SNAPLEN_HEADERS - 70u, out.payload_caplen);
  EXPECT_EQ(4096u, out.reth.dma_len);
  EXPECT_EQ(f.size(), out.wirelen);
  EXPECT_EQ(TR_HDR_BIT(TR_HDR_RETH), out.hdrs_captured);
}

// A snap length that cuts the extended headers (editcap -s 64) leaves a packet: its BTH is there,
// the headers it cut are missing from hdrs_captured, their fields zero. Cut before the BTH, or a
// frame short on the wire itself, is still an error.
TEST(Parse, SnapLengthInsideTheExtendedHeadersKeepsTheBth) {
  tr_packet in = Pkt(0x12, 0x22, 9);  // ATOMIC ACK: AETH at 54, AtomicAckETH at 58
  in.aeth.syndrome = TR_AETH_SYNDROME_ACK;
  in.atomic_ack_orig = 0x1122334455667788ull;
  Bytes f = Build(in);
  tr_packet out;
  tr_error err;
  ASSERT_EQ(TR_PARSE_OK, Parse(f, &out, &err, 64)) << err.msg;
  EXPECT_TRUE(out.flags & TR_PKT_TRUNCATED);
  EXPECT_EQ(0x12, out.opcode);
  EXPECT_EQ(0x22u, out.dest_qp);
  EXPECT_EQ(9u, out.psn);
  EXPECT_EQ(TR_HDR_BIT(TR_HDR_AETH), out.hdrs_captured);
  EXPECT_EQ(TR_AETH_SYNDROME_ACK, out.aeth.syndrome);
  EXPECT_EQ(0u, out.atomic_ack_orig);
  EXPECT_EQ(0u, out.payload_caplen);
  ASSERT_EQ(TR_PARSE_OK, Parse(f, &out, &err, 54)) << err.msg;  // the BTH and nothing more
  EXPECT_EQ(0u, out.hdrs_captured);
  EXPECT_EQ(-EINVAL, Parse(f, &out, &err, 50));
  EXPECT_NE(nullptr, strstr(err.msg, "the BTH not captured")) << err.msg;
  // Short on the wire: the IP and UDP lengths leave the BTH and the ICRC, no room for the AETH.
  Bytes g = f;
  g[17] -= 12;
  g[39] -= 12;
  g.resize(g.size() - 12);
  EXPECT_EQ(-EINVAL, Parse(g, &out, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "needs 28 bytes of headers and ICRC")) << err.msg;
}

TEST(Parse, LengthsThatLieAreErrorsWithTheirOffset) {
  tr_packet in = Pkt(0x04, 0x22, 9);
  Bytes pay = trtest::Payload(40);
  in.payload = pay.data();
  in.payload_len = 40;
  Bytes f = Build(in);
  tr_packet out;
  tr_error err;
  Bytes g = f;
  g[17] += 8;  // IPv4 total length past the frame
  EXPECT_EQ(-EINVAL, Parse(g, &out, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "byte 16")) << err.msg;
  g = f;
  g[39] -= 4;  // UDP length disagrees with IP
  EXPECT_EQ(-EINVAL, Parse(g, &out, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "UDP length")) << err.msg;
  g = f;
  g[16] = 0;
  g[17] = 20 + 8 + 12;  // room for a BTH but not the ICRC
  g[38] = 0;
  g[39] = 8 + 12;
  EXPECT_EQ(-EINVAL, Parse(g, &out, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "fewer than a BTH and an ICRC")) << err.msg;
  tr_packet ack = Pkt(0x0C, 0x22, 1);  // READ request: 28 bytes of headers
  g = Build(ack);
  g[42] = 0x13;  // now an atomic, which needs 40
  EXPECT_EQ(-EINVAL, Parse(g, &out, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "needs 44 bytes")) << err.msg;
  g = Build(ack);
  g[42] = 0x04;   // SEND_ONLY with the RETH bytes as payload...
  g[43] |= 0x30;  // ...and a PadCnt of 3: fine, 16 bytes are there
  EXPECT_EQ(TR_PARSE_OK, Parse(g, &out, &err)) << err.msg;
  EXPECT_EQ(13u, out.payload_len);
  EXPECT_EQ(-EINVAL, tr_packet_parse(&out, f.data(), 100, 60, TR_LINKTYPE_ETHERNET, nullptr, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "less than the 100 bytes captured")) << err.msg;
}

TEST(Parse, EthernetTrailerIsIgnored) {
  tr_packet in = Pkt(0x11, 0x22, 9);
  Bytes f = Build(in);
  f.resize(f.size() + 6, 0);  // a NIC's minimum-size padding after the IP packet
  tr_packet out;
  tr_error err;
  ASSERT_EQ(TR_PARSE_OK, Parse(f, &out, &err)) << err.msg;
  EXPECT_EQ(out.icrc_stored, out.icrc_computed);
}

TEST(Parse, ForeignFramesAreNamed) {
  tr_packet out;
  tr_error err;
  const char* what = nullptr;
  Bytes arp(42, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_EQ(TR_PARSE_NOT_IB, Parse(arp, &out, &err, 0, TR_LINKTYPE_ETHERNET, &what));
  EXPECT_STREQ("ARP", what);
  Bytes f = Build(Pkt(0x04, 0x22, 1));
  Bytes tcp = f;
  tcp[23] = 6;
  EXPECT_EQ(TR_PARSE_NOT_IB, Parse(tcp, &out, &err, 0, TR_LINKTYPE_ETHERNET, &what));
  EXPECT_STREQ("TCP", what);
  Bytes udp = f;
  udp[37] = 53;
  EXPECT_EQ(TR_PARSE_NOT_IB, Parse(udp, &out, &err, 0, TR_LINKTYPE_ETHERNET, &what));
  EXPECT_STREQ("UDP (not port 4791)", what);
  Bytes bad_version = f;
  bad_version[14] = 0x65;
  EXPECT_EQ(-EINVAL, Parse(bad_version, &out, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "IP version 6 under ethertype 0x0800")) << err.msg;
  EXPECT_EQ(-EINVAL, tr_packet_parse(&out, f.data(), 20, 20, 9999, nullptr, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "link type 9999")) << err.msg;
}

TEST(Parse, CookedAndRawIpLinkTypes) {
  Bytes f = Build(Pkt(0x04, 0x22, 77));
  tr_packet out;
  tr_error err;
  Bytes raw(f.begin() + 14, f.end());
  ASSERT_EQ(TR_PARSE_OK, Parse(raw, &out, &err, 0, TR_LINKTYPE_RAW)) << err.msg;
  EXPECT_EQ(77u, out.psn);
  EXPECT_EQ(out.icrc_stored, out.icrc_computed);
  Bytes sll(16, 0);
  sll[5] = 6;  // address length
  memcpy(&sll[6], f.data() + 6, 6);
  sll[14] = 0x08;
  sll.insert(sll.end(), raw.begin(), raw.end());
  ASSERT_EQ(TR_PARSE_OK, Parse(sll, &out, &err, 0, TR_LINKTYPE_LINUX_SLL)) << err.msg;
  EXPECT_EQ(77u, out.psn);
  EXPECT_EQ(0, memcmp(out.eth_src, f.data() + 6, 6));
  Bytes sll2(20, 0);
  sll2[0] = 0x08;
  sll2.insert(sll2.end(), raw.begin(), raw.end());
  ASSERT_EQ(TR_PARSE_OK, Parse(sll2, &out, &err, 0, TR_LINKTYPE_LINUX_SLL2)) << err.msg;
  EXPECT_EQ(77u, out.psn);
}

// Switches stack a provider tag on a customer one and mirror sessions add another: every tag is
// walked, the outermost two kept. A cooked capture (tcpdump -i any) of a VLAN interface names
// 0x8100 as its protocol and the tag follows the cooked header.
TEST(Parse, AnyNumberOfVlanTagsAlsoAfterACookedHeader) {
  tr_packet v = Pkt(0x04, 0x22, 1);
  v.vlan_count = 2;
  v.vlan_tpid[0] = 0x88A8;
  v.vlan_tci[0] = 10;
  v.vlan_tpid[1] = 0x8100;
  v.vlan_tci[1] = 100;
  Bytes two = Build(v);
  Bytes four = two;
  four.insert(four.begin() + 20, {0x91, 0x00, 0x00, 0xC8, 0x81, 0x00, 0x01, 0x2C});
  tr_packet out;
  tr_error err;
  ASSERT_EQ(TR_PARSE_OK, Parse(four, &out, &err)) << err.msg;
  EXPECT_EQ(2, out.vlan_count);
  EXPECT_EQ(0x88A8, out.vlan_tpid[0]);
  EXPECT_EQ(100, out.vlan_tci[1]);
  EXPECT_EQ(1u, out.psn);
  EXPECT_EQ(14u + 4 * 4, out.l3_off);
  EXPECT_EQ(out.icrc_stored, out.icrc_computed);
  four = two;
  four.insert(four.begin() + 20, {0x81, 0x00, 0x00, 0x05});
  four[14 + 12 + 10] ^= 0xff;  // IPv4 header checksum, behind three tags
  ASSERT_EQ(TR_PARSE_OK, Parse(four, &out, &err)) << err.msg;
  EXPECT_FALSE(out.ip_csum_ok);
  EXPECT_EQ(26u, out.l3_off);

  tr_packet one = Pkt(0x04, 0x22, 77);
  one.vlan_count = 1;
  one.vlan_tci[0] = 0x0064;
  one.vlan_tpid[0] = 0x8100;
  Bytes f = Build(one);
  Bytes sll(16, 0);
  sll[5] = 6;
  memcpy(&sll[6], f.data() + 6, 6);
  sll[14] = 0x81;  // protocol 0x8100: the tag comes first
  sll.insert(sll.end(), f.begin() + 14, f.end());
  ASSERT_EQ(TR_PARSE_OK, Parse(sll, &out, &err, 0, TR_LINKTYPE_LINUX_SLL)) << err.msg;
  EXPECT_EQ(77u, out.psn);
  EXPECT_EQ(1, out.vlan_count);
  EXPECT_EQ(0x64, out.vlan_tci[0]);
  EXPECT_EQ(out.icrc_stored, out.icrc_computed);
  Bytes sll2(20, 0);
  sll2[0] = 0x81;
  sll2.insert(sll2.end(), f.begin() + 14, f.end());
  ASSERT_EQ(TR_PARSE_OK, Parse(sll2, &out, &err, 0, TR_LINKTYPE_LINUX_SLL2)) << err.msg;
  EXPECT_EQ(77u, out.psn);
  EXPECT_EQ(24u, out.l3_off);
}

// The ICRC as this test computes it, apart from the code under test: eight 0xFF bytes, the IP
// header from l3 with its variant fields set to ones and whatever follows it up to UDP as it is,
// UDP with its checksum set to ones, the BTH with byte 4 set to ones, the rest up to the ICRC.
uint32_t IcrcByHand(const Bytes& f, size_t l3, size_t udp) {
  Bytes b(8, 0xff);
  b.insert(b.end(), f.begin() + static_cast<long>(l3), f.end() - 4);
  size_t ip = 8, u = 8 + udp - l3;
  if ((b[ip] >> 4) == 4) {
    b[ip + 1] = b[ip + 8] = b[ip + 10] = b[ip + 11] = 0xff;
  } else {
    b[ip] |= 0x0f;
    b[ip + 1] = b[ip + 2] = b[ip + 3] = b[ip + 7] = 0xff;
  }
  b[u + 6] = b[u + 7] = 0xff;
  b[u + 8 + 4] = 0xff;
  return tr_crc32(b.data(), b.size());
}

void PutIcrc(Bytes& f, uint32_t c) {
  for (int i = 0; i < 4; i++) f[f.size() - 4 + i] = static_cast<uint8_t>(c >> (8 * i));
}

// An IPv6 RoCE frame with `ext` inserted after the fixed header: `first` is the first extension
// header's type; the last of `ext` must name UDP (17). Lengths and the ICRC follow.
Bytes WithIpv6Ext(uint8_t first, const Bytes& ext, uint32_t psn = 5) {
  tr_packet in = Pkt(0x04, 0x22, psn);
  in.ip_version = 6;
  Bytes pay = trtest::Payload(32);
  in.payload = pay.data();
  in.payload_len = 32;
  Bytes f = Build(in);
  f.insert(f.begin() + 54, ext.begin(), ext.end());
  uint16_t plen = static_cast<uint16_t>(((f[18] << 8) | f[19]) + ext.size());
  f[18] = static_cast<uint8_t>(plen >> 8);
  f[19] = static_cast<uint8_t>(plen);
  f[20] = first;
  PutIcrc(f, IcrcByHand(f, 14, 54 + ext.size()));
  return f;
}

// Routers and hosts may put extension headers between IPv6 and UDP; the chain is walked to UDP,
// and the ICRC covers them as part of the IP header.
TEST(Parse, Ipv6ExtensionHeadersBeforeUdp) {
  const Bytes hbh = {17, 0, 1, 4, 0, 0, 0, 0};  // hop-by-hop, PadN
  const Bytes chain = {60, 0, 1, 4, 0, 0, 0, 0,                      // hop-by-hop -> dest. options
                       43, 1, 1, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  // -> routing (16 bytes)
                       44, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,   // -> fragment
                       17, 0, 0, 0, 0, 0, 0, 1};   // atomic fragment (offset 0, no more) -> UDP
  tr_packet out;
  tr_error err;
  for (auto [first, ext] : {std::pair<uint8_t, Bytes>{0, hbh}, {60, hbh}, {43, {17, 0, 0, 0, 0, 0, 0, 0}},
                            {0, chain}}) {
    Bytes f = WithIpv6Ext(first, ext);
    ASSERT_EQ(TR_PARSE_OK, Parse(f, &out, &err)) << err.msg << " after " << int(first);
    EXPECT_EQ(5u, out.psn);
    EXPECT_EQ(0x22u, out.dest_qp);
    EXPECT_EQ(32u, out.payload_len);
    EXPECT_EQ(54u + ext.size(), out.udp_off);
    EXPECT_EQ(54u + ext.size() + 8, out.bth_off);
    EXPECT_EQ(out.icrc_stored, out.icrc_computed) << "after " << int(first);
    Bytes g = f;
    g[58] ^= 1;  // inside the extension headers: covered by the ICRC
    ASSERT_EQ(TR_PARSE_OK, Parse(g, &out, &err)) << err.msg;
    EXPECT_NE(out.icrc_stored, out.icrc_computed);
    ASSERT_EQ(TR_PARSE_OK, Parse(f, &out, &err, 54 + static_cast<uint32_t>(ext.size()) + 20));
    EXPECT_TRUE(out.flags & TR_PKT_TRUNCATED);
    EXPECT_EQ(5u, out.psn);
  }
}

TEST(Parse, Ipv6FragmentsAndOtherProtocolsBehindExtensionHeaders) {
  tr_packet out;
  tr_error err;
  const char* what = nullptr;
  Bytes later = WithIpv6Ext(44, {17, 0, 0x01, 0x00, 0, 0, 0, 1});  // offset 32: no UDP header here
  EXPECT_EQ(TR_PARSE_NOT_IB, Parse(later, &out, &err, 0, TR_LINKTYPE_ETHERNET, &what));
  EXPECT_STREQ("IPv6 fragment", what);
  // A first fragment with more to come holds part of the datagram: its UDP length says more.
  Bytes first = WithIpv6Ext(44, {17, 0, 0x00, 0x01, 0, 0, 0, 1});
  first[54 + 8 + 5] += 8;
  EXPECT_EQ(TR_PARSE_NOT_IB, Parse(first, &out, &err, 0, TR_LINKTYPE_ETHERNET, &what));
  EXPECT_STREQ("IPv6 fragment", what);
  // ...unless the whole datagram is in it.
  Bytes whole = WithIpv6Ext(44, {17, 0, 0x00, 0x01, 0, 0, 0, 1});
  ASSERT_EQ(TR_PARSE_OK, Parse(whole, &out, &err)) << err.msg;
  EXPECT_EQ(out.icrc_stored, out.icrc_computed);
  // An MLD report: hop-by-hop (router alert) then ICMPv6.
  Bytes mld = WithIpv6Ext(0, {58, 0, 5, 2, 0, 0, 1, 0});
  EXPECT_EQ(TR_PARSE_NOT_IB, Parse(mld, &out, &err, 0, TR_LINKTYPE_ETHERNET, &what));
  EXPECT_STREQ("ICMPv6", what);
  // Cut by the capture inside the extension headers: not known to be RoCE.
  EXPECT_EQ(TR_PARSE_NOT_IB, Parse(mld, &out, &err, 55, TR_LINKTYPE_ETHERNET, &what));
  EXPECT_STREQ("IPv6 (extension headers not captured)", what);
  // An extension header longer than the payload length leaves: named at its offset.
  Bytes lying = WithIpv6Ext(0, {17, 0, 1, 4, 0, 0, 0, 0});
  lying[55] = 200;
  EXPECT_EQ(-EINVAL, Parse(lying, &out, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "byte 54: IPv6 extension header of 1608 bytes")) << err.msg;
  // The payload length is at byte 4 of the IPv6 header, which is where the error points.
  Bytes past = WithIpv6Ext(0, {17, 0, 1, 4, 0, 0, 0, 0});
  past[18] += 1;
  EXPECT_EQ(-EINVAL, Parse(past, &out, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "byte 18: the IP length")) << err.msg;
}

// RoCE as a switch mirrors it (ERSPAN types I, II and III in GRE, with GRE's optional fields and
// ERSPAN III's platform subheader) or bridges it (GRE 0x6558, VXLAN): the packet is the inner
// one — its addresses, its ICRC — at offsets from the start of the captured frame.
TEST(Parse, TunnelsCarryTheInnerFrame) {
  tr_packet in = Pkt(0x04, 0x22, 9);
  in.vlan_count = 1;
  in.vlan_tpid[0] = 0x8100;
  in.vlan_tci[0] = 100;
  Bytes pay = trtest::Payload(32);
  in.payload = pay.data();
  in.payload_len = 32;
  Bytes inner = Build(in);
  Bytes e3 = trtest::Gre(0x1000, 0x22EB);
  e3.insert(e3.end(), {0x20, 0x64, 0x00, 0x07, 1, 2, 3, 4, 0, 0, 0x00, 0x01});  // O: subheader
  e3.insert(e3.end(), {0, 0, 0, 0, 0, 0, 0, 0});
  Bytes e3k = trtest::Gre(0x3000, 0x22EB);
  e3k.insert(e3k.end(), {0x20, 0x64, 0x00, 0x07, 1, 2, 3, 4, 0, 0, 0x00, 0x00});
  const std::vector<std::pair<const char*, Bytes>> shims = {
      {"ERSPAN II", trtest::Erspan2()},
      {"ERSPAN III + subheader", e3},
      {"ERSPAN III + key", e3k},
      {"ERSPAN I", trtest::Gre(0, 0x88BE)},
      {"GRE bridging + checksum, key", trtest::Gre(0xA000, 0x6558)},
      {"VXLAN", trtest::Vxlan()}};
  for (const auto& [name, shim] : shims) {
    Bytes f = trtest::OverIpv4(name[0] == 'V' ? 17 : 47, shim, inner);
    uint32_t at = 14 + 20 + static_cast<uint32_t>(shim.size());
    tr_packet out;
    tr_error err;
    ASSERT_EQ(TR_PARSE_OK, Parse(f, &out, &err)) << name << ": " << err.msg;
    EXPECT_TRUE(out.flags & TR_PKT_TUNNEL) << name;
    EXPECT_TRUE(out.flags & TR_PKT_ROCE) << name;
    EXPECT_EQ(9u, out.psn) << name;
    EXPECT_EQ(32u, out.payload_len) << name;
    EXPECT_EQ(f.size(), out.wirelen) << name;
    EXPECT_EQ(0, memcmp(out.ip_src, in.ip_src, 4)) << name;
    EXPECT_EQ(0, memcmp(out.eth_src, in.eth_src, 6)) << name;
    EXPECT_EQ(1, out.vlan_count) << name;
    EXPECT_EQ(100, out.vlan_tci[0]) << name;
    EXPECT_EQ(TR_ROCE_PORT, out.udp_dport) << name;
    EXPECT_EQ(at + 18, out.l3_off) << name;
    EXPECT_EQ(at + 18 + 28, out.bth_off) << name;
    EXPECT_EQ(f.size() - 4, out.icrc_off) << name;
    EXPECT_EQ(out.icrc_stored, out.icrc_computed) << name;
    EXPECT_TRUE(out.ip_csum_ok) << name;
    Bytes g = f;
    g[22] = 1;  // the outer TTL: the ICRC covers the inner packet only
    ASSERT_EQ(TR_PARSE_OK, Parse(g, &out, &err)) << name << ": " << err.msg;
    EXPECT_EQ(out.icrc_stored, out.icrc_computed) << name;
    g = f;
    g[out.payload_off + 3] ^= 1;
    ASSERT_EQ(TR_PARSE_OK, Parse(g, &out, &err)) << name << ": " << err.msg;
    EXPECT_NE(out.icrc_stored, out.icrc_computed) << name;
    g = f;
    g[at + 18 + 8] = 1;  // inner TTL: the inner IPv4 checksum fails
    ASSERT_EQ(TR_PARSE_OK, Parse(g, &out, &err)) << name << ": " << err.msg;
    EXPECT_FALSE(out.ip_csum_ok) << name;
    ASSERT_EQ(TR_PARSE_OK, Parse(f, &out, &err, at + 18 + 28 + 12)) << name << ": " << err.msg;
    EXPECT_TRUE(out.flags & TR_PKT_TRUNCATED) << name;
    EXPECT_FALSE(out.icrc_captured) << name;
    EXPECT_EQ(9u, out.psn) << name;
  }
  // ERSPAN II over IPv6, behind a hop-by-hop header.
  Bytes shim = trtest::Erspan2();
  Bytes f = {0x02, 0xAA, 0, 0, 0, 0x02, 0x02, 0xAA, 0, 0, 0, 0x01, 0x86, 0xDD};
  size_t plen = 8 + shim.size() + inner.size();
  Bytes ip6 = {0x60, 0, 0, 0, static_cast<uint8_t>(plen >> 8), static_cast<uint8_t>(plen), 0, 64};
  ip6.resize(40, 0xFD);
  f.insert(f.end(), ip6.begin(), ip6.end());
  f.insert(f.end(), {47, 0, 1, 4, 0, 0, 0, 0});
  f.insert(f.end(), shim.begin(), shim.end());
  f.insert(f.end(), inner.begin(), inner.end());
  tr_packet out;
  tr_error err;
  ASSERT_EQ(TR_PARSE_OK, Parse(f, &out, &err)) << err.msg;
  EXPECT_EQ(4, out.ip_version);
  EXPECT_EQ(0u, out.ip_flow_label);
  EXPECT_EQ(14u + 48 + shim.size() + 18, out.l3_off);
  EXPECT_EQ(out.icrc_stored, out.icrc_computed);
}

TEST(Parse, TunnelsWithoutRoceOrWithLengthsThatLie) {
  Bytes inner = Build(Pkt(0x04, 0x22, 9));
  tr_packet out;
  tr_error err;
  const char* what = nullptr;
  Bytes f = trtest::OverIpv4(47, trtest::Gre(0, 0x0800), Bytes(inner.begin() + 14, inner.end()));
  EXPECT_EQ(TR_PARSE_NOT_IB, Parse(f, &out, &err, 0, TR_LINKTYPE_ETHERNET, &what));
  EXPECT_STREQ("GRE (other protocol)", what);
  f = trtest::OverIpv4(47, trtest::Gre(0x0001, 0x880B), inner);  // PPTP's enhanced GRE
  EXPECT_EQ(TR_PARSE_NOT_IB, Parse(f, &out, &err, 0, TR_LINKTYPE_ETHERNET, &what));
  EXPECT_STREQ("GRE (other)", what);
  Bytes arp(42, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  f = trtest::OverIpv4(47, trtest::Erspan2(), arp);
  EXPECT_EQ(TR_PARSE_NOT_IB, Parse(f, &out, &err, 0, TR_LINKTYPE_ETHERNET, &what));
  EXPECT_STREQ("ARP", what);
  Bytes e3 = trtest::Gre(0x1000, 0x22EB);
  e3.insert(e3.end(), {0x20, 0x64, 0x00, 0x07, 1, 2, 3, 4, 0, 0, 0x0C, 0x00});  // FT 3
  f = trtest::OverIpv4(47, e3, inner);
  EXPECT_EQ(TR_PARSE_NOT_IB, Parse(f, &out, &err, 0, TR_LINKTYPE_ETHERNET, &what));
  EXPECT_STREQ("ERSPAN frame of another type", what);
  e3[4 + 4 + 10] = 0x08;  // FT 2: an IP packet, no Ethernet header
  f = trtest::OverIpv4(47, e3, Bytes(inner.begin() + 14, inner.end()));
  ASSERT_EQ(TR_PARSE_OK, Parse(f, &out, &err)) << err.msg;
  EXPECT_EQ(out.icrc_stored, out.icrc_computed);
  // VXLAN in VXLAN is fine; a frame nesting more than a few is not taken for RoCE.
  f = inner;
  for (int i = 0; i < 2; i++) f = trtest::OverIpv4(17, trtest::Vxlan(), f);
  ASSERT_EQ(TR_PARSE_OK, Parse(f, &out, &err)) << err.msg;
  EXPECT_EQ(f.size() - inner.size() + 14, out.l3_off);
  for (int i = 0; i < 4; i++) f = trtest::OverIpv4(17, trtest::Vxlan(), f);
  EXPECT_EQ(TR_PARSE_NOT_IB, Parse(f, &out, &err, 0, TR_LINKTYPE_ETHERNET, &what));
  EXPECT_STREQ("tunnels nested too deep", what);
  // The outer IP length ends the packet inside the GRE header, or the inner one's past it.
  f = trtest::OverIpv4(47, trtest::Gre(0xA000, 0x6558), inner);
  f[16] = 0;
  f[17] = 20 + 6;
  EXPECT_EQ(-EINVAL, Parse(f, &out, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "byte 34: the GRE header runs past the end of the tunnel's "
                                     "packet at byte 40")) << err.msg;
  f = trtest::OverIpv4(47, trtest::Erspan2(), inner);
  f.resize(f.size() - 10);  // a mirror session cut the frame...
  f[17] -= 10;
  f[24] = f[25] = 0;
  EXPECT_EQ(-EINVAL, Parse(f, &out, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "byte 66: the IP length puts the end of the packet at byte "))
      << err.msg;
  // ...and says so (ERSPAN's T bit): a truncated packet.
  tr_packet send = Pkt(0x04, 0x22, 9);
  Bytes pay = trtest::Payload(64);
  send.payload = pay.data();
  send.payload_len = 64;
  inner = Build(send);
  f = trtest::OverIpv4(47, trtest::Erspan2(true), Bytes(inner.begin(), inner.end() - 10));
  ASSERT_EQ(TR_PARSE_OK, Parse(f, &out, &err)) << err.msg;
  EXPECT_TRUE(out.flags & TR_PKT_TRUNCATED);
  EXPECT_FALSE(out.icrc_captured);
  EXPECT_EQ(9u, out.psn);
}

// Frame 11 of the ERF capture as a bare InfiniBand frame (link type 247).
TEST(Parse, NativeInfiniBand) {
  Bytes ib = {0x00, 0x02, 0x00, 0x04, 0x00, 0x07, 0x00, 0x01, 0x11, 0x40, 0xff, 0xff, 0x00, 0x87, 0x04,
              0x08, 0x00, 0xd4, 0x0a, 0x55, 0x1f, 0x00, 0x00, 0x01, 0xa8, 0x03, 0x55, 0x50, 0x30, 0x81};
  tr_packet out;
  tr_error err;
  ASSERT_EQ(TR_PARSE_OK, Parse(ib, &out, &err, 0, TR_LINKTYPE_INFINIBAND)) << err.msg;
  EXPECT_TRUE(out.flags & TR_PKT_NATIVE_IB);
  EXPECT_EQ(4u, out.lrh.dlid);
  EXPECT_EQ(1u, out.lrh.slid);
  EXPECT_EQ(7u, out.lrh.pktlen);
  EXPECT_EQ(0x11u, out.opcode);
  EXPECT_EQ(0x870408u, out.dest_qp);
  EXPECT_EQ(13896277u, out.psn);
  EXPECT_EQ(0x1fu, out.aeth.syndrome);
  EXPECT_EQ(1u, out.aeth.msn);
  EXPECT_TRUE(out.icrc_captured && out.vcrc_captured);
  EXPECT_EQ(out.icrc_stored, out.icrc_computed);
  EXPECT_EQ(out.vcrc_stored, out.vcrc_computed);
  ib[20] ^= 1;
  ASSERT_EQ(TR_PARSE_OK, Parse(ib, &out, &err, 0, TR_LINKTYPE_INFINIBAND));
  EXPECT_NE(out.icrc_stored, out.icrc_computed);
  EXPECT_NE(out.vcrc_stored, out.vcrc_computed);
  ib.push_back(0);  // LRH length no longer matches
  EXPECT_EQ(-EINVAL, Parse(ib, &out, &err, 0, TR_LINKTYPE_INFINIBAND));
  EXPECT_NE(nullptr, strstr(err.msg, "LRH packet length 7 words")) << err.msg;
}

// The same frame in an ERF record (type 21), padded to 8 bytes as ERF records may be, and with
// an extension header.
TEST(Parse, ErfRecords) {
  Bytes ib = {0x00, 0x02, 0x00, 0x04, 0x00, 0x07, 0x00, 0x01, 0x11, 0x40, 0xff, 0xff, 0x00, 0x87, 0x04,
              0x08, 0x00, 0xd4, 0x0a, 0x55, 0x1f, 0x00, 0x00, 0x01, 0xa8, 0x03, 0x55, 0x50, 0x30, 0x81};
  Bytes erf(16, 0);
  erf[8] = 21;
  erf[10] = 0;
  erf[11] = 48;  // rlen: 16 + 30 + 2 of padding
  erf[15] = 30;  // wlen
  erf.insert(erf.end(), ib.begin(), ib.end());
  erf.insert(erf.end(), {0, 0});
  tr_packet out;
  tr_error err;
  ASSERT_EQ(TR_PARSE_OK, Parse(erf, &out, &err, 0, TR_LINKTYPE_ERF)) << err.msg;
  EXPECT_EQ(30u, out.wirelen);
  EXPECT_EQ(21, out.erf_type);
  EXPECT_EQ(out.vcrc_stored, out.vcrc_computed);
  EXPECT_FALSE(out.flags & TR_PKT_TRUNCATED);
  Bytes ext = erf;
  ext[8] = 21 | 0x80;  // one 8-byte extension header
  ext.insert(ext.begin() + 16, {0x01, 0, 0, 0, 0, 0, 0, 0});
  ASSERT_EQ(TR_PARSE_OK, Parse(ext, &out, &err, 0, TR_LINKTYPE_ERF)) << err.msg;
  EXPECT_EQ(13896277u, out.psn);
  Bytes cut(erf.begin(), erf.begin() + 16 + 24);  // record cut before the ICRC
  ASSERT_EQ(TR_PARSE_OK, Parse(cut, &out, &err, 0, TR_LINKTYPE_ERF)) << err.msg;
  EXPECT_TRUE(out.flags & TR_PKT_TRUNCATED);
  EXPECT_FALSE(out.icrc_captured);
  Bytes other = erf;
  other[8] = 3;
  const char* what;
  EXPECT_EQ(TR_PARSE_NOT_IB, Parse(other, &out, &err, 0, TR_LINKTYPE_ERF, &what));
  EXPECT_STREQ("other ERF record type", what);
}

TEST(TagHeader, EncodeDecodeAndDamage) {
  uint8_t b[32];
  tr_taghdr t;
  tr_error err;
  tr_taghdr_encode(b, 0x8877665544332211ull, TR_TAG_F_CQ_DATA);
  EXPECT_EQ('F', b[0]);
  EXPECT_EQ('S', b[1]);
  EXPECT_EQ('T', b[2]);
  EXPECT_EQ('G', b[3]);
  EXPECT_EQ(0x88, b[8]);
  ASSERT_EQ(16, tr_taghdr_decode(b, 16, &t, &err));
  EXPECT_EQ(0x8877665544332211ull, t.tag);
  EXPECT_EQ(TR_TAG_F_CQ_DATA, t.flags);
  EXPECT_EQ(1, t.version);
  EXPECT_EQ(0, tr_taghdr_decode(b + 1, 16, &t, &err));  // no magic: untagged
  EXPECT_EQ(-EINVAL, tr_taghdr_decode(b, 10, &t, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "cut short")) << err.msg;
  b[7] = 40;  // claims 40 bytes
  EXPECT_EQ(-EINVAL, tr_taghdr_decode(b, 32, &t, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "length 40")) << err.msg;
  b[7] = 20;  // a longer header of a later version is skipped whole
  b[4] = 2;
  EXPECT_EQ(20, tr_taghdr_decode(b, 32, &t, &err));
}

TEST(TagHeader, LookalikePayloadStaysData) {
  tr_packet in = Pkt(0x04, 0x22, 3);
  Bytes pay = {'F', 'S', 'T', 'G', 0, 0, 0, 1};  // magic, then version 0: not a header
  in.payload = pay.data();
  in.payload_len = 8;
  Bytes f = Build(in);
  tr_packet out;
  tr_error err;
  ASSERT_EQ(TR_PARSE_OK, Parse(f, &out, &err)) << err.msg;
  EXPECT_FALSE(out.flags & TR_PKT_TAGHDR);
  EXPECT_EQ(8u, out.payload_len);
}

}  // namespace
