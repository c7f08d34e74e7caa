// CRC engines and the ICRC/VCRC rules, against known values and real packets.
#include "traces/tests/test_util.h"

#include <algorithm>

namespace {

using trtest::Bytes;

uint32_t BitwiseCrc32(const uint8_t* p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ ((c & 1) ? 0xEDB88320u : 0);
  }
  return ~c;
}

TEST(Crc32, MatchesTheCheckValueAndABitwiseDefinition) {
  const char* check = "123456789";
  EXPECT_EQ(0xCBF43926u, tr_crc32(check, 9));
  EXPECT_EQ(0u, tr_crc32("", 0));
  Bytes b(4099);
  for (size_t i = 0; i < b.size(); i++) b[i] = static_cast<uint8_t>(i * 131 + (i >> 8));
  // Every length and alignment of the slicing-by-8 loop and its tail.
  for (size_t off = 0; off < 9; off++)
    for (size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4090})
      EXPECT_EQ(BitwiseCrc32(b.data() + off, n), tr_crc32(b.data() + off, n)) << off << " " << n;
}

TEST(Crc32, UpdateInPiecesEqualsAtOnce) {
  Bytes b = trtest::Payload(777);
  uint32_t c = tr_crc32_update(~0u, b.data(), 100);
  c = tr_crc32_update(c, b.data() + 100, 677);
  EXPECT_EQ(tr_crc32(b.data(), b.size()), ~c);
}

// Frame 11 of srinivaskoritala_infiniband.pcap (an RC ACK, LRH without GRH): tshark shows ICRC
// 0xa8035550 and VCRC 0x3081, stored in this byte order.
const uint8_t kIbAck[30] = {0x00, 0x02, 0x00, 0x04, 0x00, 0x07, 0x00, 0x01, 0x11, 0x40,
                            0xff, 0xff, 0x00, 0x87, 0x04, 0x08, 0x00, 0xd4, 0x0a, 0x55,
                            0x1f, 0x00, 0x00, 0x01, 0xa8, 0x03, 0x55, 0x50, 0x30, 0x81};

TEST(Icrc, NativeInfiniBandIcrcAndVcrc) {
  EXPECT_EQ(0x505503a8u, tr_icrc_ib(kIbAck, 24));
  EXPECT_EQ(0x8130u, tr_vcrc(kIbAck, 28));
  // VL is variant for the ICRC but covered by the VCRC.
  uint8_t b[30];
  memcpy(b, kIbAck, sizeof(b));
  b[0] = 0x30;
  EXPECT_EQ(0x505503a8u, tr_icrc_ib(b, 24));
  EXPECT_NE(0x8130u, tr_vcrc(b, 28));
}

TEST(Icrc, RealRxePacket) {
  Bytes file = trtest::ReadFile(trtest::TestData("FlashBarryAllen_PcapPlusPlus_InfiniBandPacket.pcap"));
  ASSERT_EQ(114u, file.size());
  const uint8_t* frame = file.data() + 24 + 16;  // one 74-byte record
  uint32_t stored = frame[70] | frame[71] << 8 | frame[72] << 16 | static_cast<uint32_t>(frame[73]) << 24;
  EXPECT_EQ(0x4a15c608u, stored);  // tshark: Invariant CRC 0x08c6154a
  EXPECT_EQ(stored, tr_icrc_roce(frame + 14, 74 - 14 - 4));
}

TEST(Icrc, VariantFieldsDoNotCountAndEverythingElseDoes) {
  tr_packet p = trtest::Pkt(0x04, 0x22, 7);
  Bytes pay = trtest::Payload(33);
  p.payload = pay.data();
  p.payload_len = 33;
  for (uint8_t ipv : {4, 6}) {
    p.ip_version = ipv;
    Bytes f = trtest::Build(p);
    const uint8_t* ip = f.data() + 14;
    size_t n = f.size() - 14 - 4;
    uint32_t icrc = tr_icrc_roce(ip, n);
    size_t udp = ipv == 4 ? 20 : 40;
    std::vector<size_t> variant = ipv == 4 ? std::vector<size_t>{1, 8, 10, 11}
                                           : std::vector<size_t>{0, 1, 2, 3, 7};
    variant.push_back(udp + 6);   // UDP checksum
    variant.push_back(udp + 7);
    variant.push_back(udp + 12);  // BTH byte 4: FECN/BECN
    for (size_t i = 0; i < n; i++) {
      Bytes g = f;
      // IPv6 byte 0's version nibble is invariant, its traffic-class nibble is not
      g[14 + i] ^= (ipv == 6 && i == 0) ? 0x0f : 0x81;
      bool is_variant = std::find(variant.begin(), variant.end(), i) != variant.end();
      EXPECT_EQ(is_variant, icrc == tr_icrc_roce(g.data() + 14, n)) << "IPv" << int(ipv) << " byte " << i;
    }
  }
}

}  // namespace
