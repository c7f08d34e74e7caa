// The generated conversation: see test_util.h.
#include "traces/tests/test_util.h"

extern "C" {
#include "traces/tr_inet.h"
}

#include <algorithm>

namespace trtest {

namespace {

constexpr uint32_t kMtu = 1024;

class Conv {
 public:
  Conv(uint64_t start, uint64_t gap, uint8_t ipv, uint8_t vlans)
      : ts_(start), gap_(gap), ipv_(ipv), vlans_(vlans) {}

  // A packet from A (QP a_qp) to B's QP b_qp, or the other way.
  Written& Add(uint8_t opcode, uint32_t src_qp, uint32_t dest_qp, uint32_t psn, bool from_a,
               size_t payload = 0, uint32_t flags = 0, tr_where where = {}) {
    Written w;
    w.ts_ns = ts_;
    ts_ += gap_;
    w.pkt = Pkt(opcode, dest_qp, psn, from_a);
    w.pkt.udp_sport = tr_udp_sport_for_qp(src_qp);
    w.pkt.ip_version = ipv_;
    if (ipv_ == 6) {
      uint8_t a[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
      uint8_t b[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
      memcpy(w.pkt.ip_src, from_a ? a : b, 16);
      memcpy(w.pkt.ip_dst, from_a ? b : a, 16);
      w.pkt.ip_flow_label = src_qp;
    }
    w.pkt.vlan_count = vlans_;
    for (int i = 0; i < vlans_; i++) w.pkt.vlan_tci[i] = static_cast<uint16_t>(100 + i);
    w.payload = Payload(payload, static_cast<uint8_t>(psn));
    w.pkt.payload = w.payload.data();
    w.pkt.payload_len = static_cast<uint32_t>(payload);
    w.pkt.ack_req = !from_a ? false : true;
    w.flags = flags;
    w.where = where;
    list_.push_back(std::move(w));
    return list_.back();
  }

  Written& Finish(Written& w) {
    w.pkt.payload = w.payload.data();
    w.frame = Build(w.pkt);
    return w;
  }

  void Ack(uint32_t src_qp, uint32_t dest_qp, uint32_t psn, uint8_t syndrome, bool from_a = false,
           uint32_t flags = 0, tr_where where = {}) {
    Written& w = Add(0x11, src_qp, dest_qp, psn, from_a, 0, flags, where);
    w.pkt.aeth.syndrome = syndrome;
    w.pkt.aeth.msn = ++msn_;
    Finish(w);
  }

  void Data(uint8_t opcode, uint32_t src_qp, uint32_t dest_qp, uint32_t psn, size_t payload,
            uint32_t flags = 0, tr_where where = {}) {
    Finish(Add(opcode, src_qp, dest_qp, psn, true, payload, flags, where));
  }

  void Write(uint8_t opcode, uint32_t src_qp, uint32_t dest_qp, uint32_t psn, size_t payload,
             uint32_t dma_len, uint32_t imm = 0) {
    Written& w = Add(opcode, src_qp, dest_qp, psn, true, payload);
    w.pkt.reth.va = 0x7f0000001000ull + psn * 0x1000ull;
    w.pkt.reth.rkey = 0x2b8;
    w.pkt.reth.dma_len = dma_len;
    w.pkt.immdt = imm;
    Finish(w);
  }

  std::vector<Written> Take() {
    for (auto& w : list_) w.pkt.payload = w.payload.data();
    return std::move(list_);
  }

  std::vector<Written> list_;
  uint64_t ts_, gap_;
  uint8_t ipv_, vlans_;
  uint32_t msn_ = 0;
};

}  // namespace

std::vector<Written> Conversation(uint64_t start_ns, uint64_t gap_ns, uint8_t ip_version,
                                  uint8_t vlans) {
  Conv c(start_ns, gap_ns, ip_version, vlans);
  const uint32_t A = 0x11, B = 0x22;
  const uint8_t kAck = TR_AETH_SYNDROME_ACK;

  // SEND messages: three packets; a tagged SEND_ONLY; a tagged two-packet SEND with immediate.
  c.Data(0x00, A, B, 100, kMtu);
  c.Data(0x01, A, B, 101, kMtu);
  c.Data(0x02, A, B, 102, 500);
  c.Ack(B, A, 102, kAck);
  {
    Written& w = c.Add(0x04, A, B, 103, true, 200);
    w.pkt.flags |= TR_PKT_TAGHDR;
    w.pkt.tag.tag = 0x1122334455667788ull;
    c.Finish(w);
  }
  c.Ack(B, A, 103, kAck);
  {
    Written& w = c.Add(0x00, A, B, 104, true, kMtu - TR_TAG_LEN);
    w.pkt.flags |= TR_PKT_TAGHDR;
    w.pkt.tag.tag = 0xfeedull;
    w.pkt.tag.flags = TR_TAG_F_CQ_DATA;
    c.Finish(w);
    Written& l = c.Add(0x03, A, B, 105, true, 100);
    l.pkt.immdt = 0xC0FFEE;
    c.Finish(l);
  }
  c.Ack(B, A, 105, kAck);
  {
    Written& w = c.Add(0x05, A, B, 106, true, 64);
    w.pkt.immdt = 0x01020304;
    c.Finish(w);
  }
  c.Ack(B, A, 106, kAck);

  // RDMA WRITE: three packets, only, only with immediate, two packets ending with immediate.
  c.Write(0x06, A, B, 107, kMtu, 2 * kMtu + 52);
  c.Write(0x07, A, B, 108, kMtu, 0);
  c.Write(0x08, A, B, 109, 52, 0);
  c.Ack(B, A, 109, kAck);
  c.Write(0x0A, A, B, 110, 300, 300);
  c.Write(0x0B, A, B, 111, 16, 16, 0xABCD);
  c.Ack(B, A, 111, kAck);
  c.Write(0x06, A, B, 112, kMtu, kMtu + 6);
  c.Write(0x09, A, B, 113, 6, 0, 0x55);
  c.Ack(B, A, 113, kAck);

  // READ of 2500 bytes: three responses carrying the request's PSNs 114..116.
  {
    Written& r = c.Add(0x0C, A, B, 114, true);
    r.pkt.reth = {0x7f0000100000ull, 0x99, 2 * kMtu + 452};
    c.Finish(r);
    for (int i = 0; i < 3; i++) {
      uint8_t op = i == 0 ? 0x0D : i == 1 ? 0x0E : 0x0F;
      Written& w = c.Add(op, B, A, 114 + i, false, i < 2 ? kMtu : 452);
      w.pkt.aeth = {kAck, 7};
      c.Finish(w);
    }
  }
  // Atomics and their ACKs.
  for (int i = 0; i < 2; i++) {
    Written& r = c.Add(i ? 0x14 : 0x13, A, B, 117 + i, true);
    r.pkt.atomic = {0x7f0000200000ull + 8u * i, 0x77, 5u + i, i ? 0u : 9u};
    c.Finish(r);
    Written& w = c.Add(0x12, B, A, 117 + i, false);
    w.pkt.aeth = {kAck, 8u + i};
    w.pkt.atomic_ack_orig = 1000u + i;
    c.Finish(w);
  }
  // READ answered by one packet.
  {
    Written& r = c.Add(0x0C, A, B, 119, true);
    r.pkt.reth = {0x7f0000300000ull, 0x99, 100};
    c.Finish(r);
    Written& w = c.Add(0x10, B, A, 119, false, 100);
    w.pkt.aeth = {kAck, 10};
    c.Finish(w);
  }

  // A lost MIDDLE: NAK (PSN sequence error), go-back-N from it.
  c.Data(0x00, A, B, 120, kMtu);
  c.Data(0x01, A, B, 121, kMtu, TR_DROPPED, {TR_REASON_LOSS, 3, 7, 2});
  c.Data(0x02, A, B, 122, 100);
  c.Ack(B, A, 121, 0x60);
  c.Data(0x01, A, B, 121, kMtu, TR_RETRANSMIT, {TR_REASON_NAK, 1, 0, 0});
  c.Data(0x02, A, B, 122, 100, TR_RETRANSMIT, {TR_REASON_NAK, 1, 0, 0});
  c.Ack(B, A, 122, kAck);
  // A lost ACK: the requester times out and sends again.
  c.Data(0x04, A, B, 123, 40);
  c.Ack(B, A, 123, kAck, false, TR_DROPPED, {TR_REASON_BUFFER, 4, 9, 3});
  c.Data(0x04, A, B, 123, 40, TR_RETRANSMIT, {TR_REASON_TIMEOUT, 1, 0, 0});
  c.Ack(B, A, 123, kAck);
  // Receiver not ready, then accepted.
  c.Data(0x04, A, B, 124, 40);
  c.Ack(B, A, 124, 0x20 | 0x0E);
  c.Data(0x04, A, B, 124, 40, TR_RETRANSMIT, {TR_REASON_NAK, 1, 0, 0});
  c.Ack(B, A, 124, kAck);
  // Damaged on a link: the responder drops it silently, the requester times out.
  {
    Written& w = c.Add(0x04, A, B, 125, true, 48, TR_CORRUPTED, {TR_REASON_NONE, 5, 11, 4});
    c.Finish(w);
    w.frame[w.frame.size() - 10] ^= 0x40;  // a payload byte
  }
  c.Data(0x04, A, B, 125, 48, TR_RETRANSMIT, {TR_REASON_TIMEOUT, 1, 0, 0});
  c.Ack(B, A, 125, kAck);
  // Duplicated by the network.
  c.Data(0x04, A, B, 126, 32);
  c.Data(0x04, A, B, 126, 32, TR_DUPLICATE, {TR_REASON_NONE, 6, 12, 5});
  c.Ack(B, A, 126, kAck);
  // SEND with invalidate.
  {
    Written& w = c.Add(0x17, A, B, 127, true, 20);
    w.pkt.ieth_rkey = 0x1234;
    c.Finish(w);
    c.Ack(B, A, 127, kAck);
    c.Data(0x00, A, B, 128, kMtu);
    Written& l = c.Add(0x16, A, B, 129, true, 4);
    l.pkt.ieth_rkey = 0x5678;
    c.Finish(l);
    c.Ack(B, A, 129, kAck);
  }
  // B as the requester on the same QP pair: its own PSN space, answered by A.
  {
    Written& w = c.Add(0x04, B, A, 5000, false, 64);
    w.pkt.ack_req = true;
    c.Finish(w);
    c.Ack(A, B, 5000, kAck, true);
  }
  // The other NAK kinds, each on its own QP pair (a NAK ends a QP's life).
  const uint8_t naks[3] = {0x61, 0x62, 0x63};
  for (int i = 0; i < 3; i++) {
    uint32_t qa = 0x12 + i, qb = 0x23 + i;
    c.Data(0x04, qa, qb, 7, 16);
    c.Ack(qb, qa, 7, naks[i]);
  }
  // UC: every opcode.
  {
    const uint32_t qa = 0x31, qb = 0x41;
    c.Data(0x20, qa, qb, 0, kMtu);
    c.Data(0x21, qa, qb, 1, kMtu);
    c.Data(0x22, qa, qb, 2, 9);
    c.Data(0x20, qa, qb, 3, kMtu);
    Written& li = c.Add(0x23, qa, qb, 4, true, 3);
    li.pkt.immdt = 4;
    c.Finish(li);
    c.Data(0x24, qa, qb, 5, 77);
    Written& oi = c.Add(0x25, qa, qb, 6, true, 0);
    oi.pkt.immdt = 6;
    c.Finish(oi);
    c.Write(0x26, qa, qb, 7, kMtu, 2 * kMtu + 8);
    c.Write(0x27, qa, qb, 8, kMtu, 0);
    c.Write(0x28, qa, qb, 9, 8, 0);
    c.Write(0x26, qa, qb, 10, kMtu, kMtu + 4);
    c.Write(0x29, qa, qb, 11, 4, 0, 11);
    c.Write(0x2A, qa, qb, 12, 12, 12);
    c.Write(0x2B, qa, qb, 13, 13, 13, 13);
  }
  // UD: send only, with immediate, tagged.
  {
    const uint32_t qa = 0x51, qb = 0x61;
    for (int i = 0; i < 3; i++) {
      Written& w = c.Add(i == 1 ? 0x65 : 0x64, qa, qb, 20 + i, true, 100 + i);
      w.pkt.deth = {0x11111111u, qa};
      w.pkt.immdt = 0x65;
      if (i == 2) {
        w.pkt.flags |= TR_PKT_TAGHDR;
        w.pkt.tag.tag = 42;
      }
      c.Finish(w);
    }
  }
  return c.Take();
}

Written Make(tr_packet p, size_t payload, uint64_t ts, uint32_t flags, tr_where where) {
  Written w;
  w.ts_ns = ts;
  w.payload = Payload(payload, static_cast<uint8_t>(p.psn));
  p.payload = w.payload.data();
  p.payload_len = static_cast<uint32_t>(payload);
  w.pkt = p;
  w.frame = Build(p);
  w.flags = flags;
  w.where = where;
  return w;
}

Bytes OverIpv4(uint8_t proto, Bytes shim, const Bytes& inner) {
  Bytes f = {0x02, 0xAA, 0, 0, 0, 0x02, 0x02, 0xAA, 0, 0, 0, 0x01, 0x08, 0x00};
  size_t total = 20 + shim.size() + inner.size();
  if (proto == 17) {
    shim[4] = static_cast<uint8_t>((total - 20) >> 8);
    shim[5] = static_cast<uint8_t>(total - 20);
  }
  Bytes ip = {0x45, 0, static_cast<uint8_t>(total >> 8), static_cast<uint8_t>(total), 0x12, 0x34,
              0x40, 0, 64, proto, 0, 0, 192, 168, 1, 1, 192, 168, 1, 2};
  uint16_t c = tr_ipv4_checksum(ip.data(), 20);
  ip[10] = static_cast<uint8_t>(c >> 8);
  ip[11] = static_cast<uint8_t>(c);
  f.insert(f.end(), ip.begin(), ip.end());
  f.insert(f.end(), shim.begin(), shim.end());
  f.insert(f.end(), inner.begin(), inner.end());
  return f;
}

Bytes Gre(uint16_t flags, uint16_t proto) {
  Bytes b = {static_cast<uint8_t>(flags >> 8), static_cast<uint8_t>(flags),
             static_cast<uint8_t>(proto >> 8), static_cast<uint8_t>(proto)};
  if (flags & 0x8000) b.insert(b.end(), {0xC5, 0xC5, 0, 0});
  if (flags & 0x2000) b.insert(b.end(), {0x0E, 0xE0, 0x0E, 0xE0});
  if (flags & 0x1000) b.insert(b.end(), {0, 0, 0x01, 0x23});
  return b;
}

void FixIcrc(Bytes& f) {
  size_t n = f.size() - 14 - 4;
  uint32_t c = tr_icrc_roce(f.data() + 14, n);
  for (int i = 0; i < 4; i++) f[14 + n + i] = static_cast<uint8_t>(c >> (8 * i));
}

std::string CheckOutput(const std::string& name, const std::vector<Written>& packets, int* rc) {
  std::string path = TempPath(name);
  WriteTrace(path, packets);
  char* text = nullptr;
  size_t len = 0;
  FILE* out = open_memstream(&text, &len);
  *rc = tr_check_file(path.c_str(), out, nullptr);
  fclose(out);
  std::string s(text, len);
  free(text);
  return s;
}

bool WriteTrace(const std::string& path, const std::vector<Written>& packets, uint32_t snaplen) {
  tr_writer* w;
  tr_error err;
  if (tr_writer_open(&w, path.c_str(), snaplen, &err)) {
    ADD_FAILURE() << err.msg;
    return false;
  }
  for (const auto& p : packets) {
    if (tr_trace_write_packet(w, p.ts_ns, p.frame.data(), static_cast<uint32_t>(p.frame.size()),
                              p.flags, &p.where, &err)) {
      ADD_FAILURE() << err.msg;
      tr_writer_close(w, nullptr);
      return false;
    }
  }
  if (tr_writer_close(w, &err)) {
    ADD_FAILURE() << err.msg;
    return false;
  }
  return true;
}

void Snap(const std::string& path, uint32_t snaplen) {
  // A pcap of this host's byte order, as tr_writer writes it: 24-byte file header (snap length
  // at 16), then records of a 16-byte header (captured length at 8, original at 12) and data.
  Bytes in = ReadFile(path), out(in.begin(), in.begin() + 24);
  auto u32 = [](const uint8_t* b) { uint32_t v; memcpy(&v, b, 4); return v; };
  memcpy(&out[16], &snaplen, 4);
  for (size_t at = 24; at + 16 <= in.size();) {
    uint32_t caplen = u32(&in[at + 8]), keep = std::min(caplen, snaplen);
    out.insert(out.end(), in.begin() + at, in.begin() + at + 16);
    memcpy(&out[out.size() - 8], &keep, 4);
    out.insert(out.end(), in.begin() + at + 16, in.begin() + at + 16 + keep);
    at += 16 + caplen;
  }
  WriteFile(path, out);
}

}  // namespace trtest
