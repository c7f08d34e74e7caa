// Helpers shared by the traces tests: packets from a few arguments, temporary files, running
// tshark, and a conversation generator that exercises every opcode, drops and retransmissions.
#ifndef TRACES_TESTS_TEST_UTIL_H
#define TRACES_TESTS_TEST_UTIL_H

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

extern "C" {
#include "traces/tr_check.h"
#include "traces/tr_crc.h"
#include "traces/tr_mark.h"
#include "traces/tr_opcode.h"
#include "traces/tr_packet.h"
#include "traces/tr_summary.h"
#include "traces/tr_taghdr.h"
#include "traces/tr_trace.h"
}

namespace trtest {

using Bytes = std::vector<uint8_t>;

inline std::string TestData(const std::string& name) { return "traces/testdata/" + name; }

inline std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

inline Bytes ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void WriteFile(const std::string& path, const Bytes& b) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// Runs a shell command; returns its stdout, sets *status to its exit status.
inline std::string Run(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    *status = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int st = pclose(p);
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

inline bool HaveTshark() {
  int st;
  Run("command -v tshark >/dev/null 2>&1", &st);
  return st == 0;
}

// tshark with a private, writable HOME (its profile) and quiet about running as root.
inline std::string Tshark(const std::string& args, int* status) {
  return Run("HOME=" + TempPath("") + " tshark " + args + " 2>/dev/null", status);
}

inline std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty() || (!s.empty() && s.back() == sep)) out.push_back(cur);
  return out;
}

// A RoCEv2 packet between host A (10.0.0.1) and host B (10.0.0.2).
inline tr_packet Pkt(uint8_t opcode, uint32_t dest_qp, uint32_t psn, bool from_a = true) {
  tr_packet p;
  tr_packet_init(&p);
  const uint8_t mac_a[6] = {0x02, 0, 0, 0, 0, 0x0a}, mac_b[6] = {0x02, 0, 0, 0, 0, 0x0b};
  const uint8_t ip_a[4] = {10, 0, 0, 1}, ip_b[4] = {10, 0, 0, 2};
  memcpy(p.eth_src, from_a ? mac_a : mac_b, 6);
  memcpy(p.eth_dst, from_a ? mac_b : mac_a, 6);
  memcpy(p.ip_src, from_a ? ip_a : ip_b, 4);
  memcpy(p.ip_dst, from_a ? ip_b : ip_a, 4);
  p.opcode = opcode;
  p.dest_qp = dest_qp;
  p.psn = psn;
  return p;
}

inline Bytes Build(const tr_packet& p) {
  Bytes b(TR_FRAME_MAX);
  tr_error err;
  int n = tr_packet_build(&p, b.data(), b.size(), &err);
  EXPECT_GT(n, 0) << err.msg;
  b.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return b;
}

// A payload that no heuristic dissector of tshark claims (no ethertype, no known magic).
inline Bytes Payload(size_t n, uint8_t seed = 0) {
  Bytes b(n);
  for (size_t i = 0; i < n; i++) b[i] = static_cast<uint8_t>(0xA5 ^ (i * 7 + seed));
  return b;
}

// One packet of a generated trace and what was written into it.
struct Written {
  uint64_t ts_ns;
  tr_packet pkt;  // payload points into `payload`
  Bytes payload;
  Bytes frame;
  uint32_t flags;
  tr_where where;
};

// Appends to `out` a conversation between A (QP 0x11, port for QP 0x11) and B (QP 0x22): every
// RC/UC/UD opcode, SEND and WRITE messages of several packets, a READ, atomics, a tagged SEND, a
// drop (NAK, go-back-N retransmission), a dropped ACK followed by a timeout retransmission, an
// RNR NAK and the other NAK kinds. Packets are spaced `gap_ns` apart.
std::vector<Written> Conversation(uint64_t start_ns = 1000, uint64_t gap_ns = 1000,
                                  uint8_t ip_version = 4, uint8_t vlans = 0);

// ---- a hand-made pcap / pcapng writer, independent of libpcap ----

inline void Put(Bytes& b, uint64_t v, int n, bool be) {
  for (int i = 0; i < n; i++) {
    int shift = be ? (n - 1 - i) * 8 : i * 8;
    b.push_back(static_cast<uint8_t>(v >> shift));
  }
}

struct Rec {
  uint32_t sec, frac;
  Bytes data;
  uint32_t orig;  // 0: data.size()
};

inline Bytes Pcap(uint32_t magic, bool be, uint32_t linktype, const std::vector<Rec>& recs,
           uint32_t snaplen = 65535) {
  Bytes b;
  Put(b, magic, 4, be);
  Put(b, 2, 2, be);
  Put(b, 4, 2, be);
  Put(b, 0, 4, be);
  Put(b, 0, 4, be);
  Put(b, snaplen, 4, be);
  Put(b, linktype, 4, be);
  for (const auto& r : recs) {
    Put(b, r.sec, 4, be);
    Put(b, r.frac, 4, be);
    Put(b, r.data.size(), 4, be);
    Put(b, r.orig ? r.orig : r.data.size(), 4, be);
    b.insert(b.end(), r.data.begin(), r.data.end());
  }
  return b;
}

inline Bytes Pcapng(bool be, uint32_t linktype, const std::vector<Rec>& recs,
             std::vector<int64_t>* data_offsets) {
  Bytes b;
  // Section header block
  Put(b, 0x0A0D0D0A, 4, be);
  Put(b, 28, 4, be);
  Put(b, 0x1A2B3C4D, 4, be);
  Put(b, 1, 2, be);
  Put(b, 0, 2, be);
  Put(b, 0xFFFFFFFFFFFFFFFFull, 8, be);
  Put(b, 28, 4, be);
  // Interface description block with if_tsresol = 9 (nanoseconds)
  Put(b, 1, 4, be);
  Put(b, 32, 4, be);
  Put(b, linktype, 2, be);
  Put(b, 0, 2, be);
  Put(b, 0, 4, be);
  Put(b, 9, 2, be);  // option if_tsresol
  Put(b, 1, 2, be);
  b.insert(b.end(), {9, 0, 0, 0});
  Put(b, 0, 4, be);  // opt_endofopt
  Put(b, 32, 4, be);
  for (const auto& r : recs) {
    uint32_t padded = (static_cast<uint32_t>(r.data.size()) + 3) & ~3u;
    uint32_t total = 32 + padded;
    uint64_t ts = static_cast<uint64_t>(r.sec) * 1000000000u + r.frac;
    Put(b, 6, 4, be);
    Put(b, total, 4, be);
    Put(b, 0, 4, be);
    Put(b, ts >> 32, 4, be);
    Put(b, ts & 0xffffffffu, 4, be);
    Put(b, r.data.size(), 4, be);
    Put(b, r.orig ? r.orig : r.data.size(), 4, be);
    data_offsets->push_back(static_cast<int64_t>(b.size()));
    b.insert(b.end(), r.data.begin(), r.data.end());
    b.resize(b.size() + (padded - r.data.size()), 0);
    Put(b, total, 4, be);
  }
  return b;
}

// One packet of a hand-written scenario: p with `payload` bytes, built at ts.
Written Make(tr_packet p, size_t payload, uint64_t ts, uint32_t flags = 0, tr_where where = {});

// A frame as a switch mirrors or tunnels it: outer Ethernet and IPv4 (192.168.1.1 -> .2,
// protocol `proto`, DF, header checksum) carrying `shim` then `inner`. For UDP (17) the shim
// starts with the UDP header, whose length is filled in.
Bytes OverIpv4(uint8_t proto, Bytes shim, const Bytes& inner);

// A GRE header with protocol `proto` and the optional fields `flags` asks for (C 0x8000, K 0x2000,
// S 0x1000), filled with recognisable values.
Bytes Gre(uint16_t flags, uint16_t proto);

// ERSPAN type II in GRE (S set, as type II has it): version 1, VLAN 100, session 7, `t`: the
// mirrored frame was cut.
inline Bytes Erspan2(bool t = false) {
  Bytes b = Gre(0x1000, 0x88BE);
  b.insert(b.end(), {0x10, 0x64, static_cast<uint8_t>(t ? 0x04 : 0x00), 0x07, 0, 0, 0, 0x2A});
  return b;
}

// UDP to port 4789 and a VXLAN header (I flag, VNI 100).
inline Bytes Vxlan() {
  return Bytes{0x30, 0x39, 0x12, 0xB5, 0, 0, 0, 0, 0x08, 0, 0, 0, 0, 0, 0x64, 0};
}

// Rewrites the ICRC of a RoCEv2 frame (IPv4 or IPv6, no VLAN) after a test edited it.
void FixIcrc(Bytes& frame);

// Writes packets, runs `trace check` on them; returns its output, *rc its status.
std::string CheckOutput(const std::string& name, const std::vector<Written>& packets, int* rc);

// Writes `packets` to path with snaplen; returns false (and fails the test) on error.
bool WriteTrace(const std::string& path, const std::vector<Written>& packets,
                uint32_t snaplen = 0);

// Cuts every record of the pcap at path to snaplen bytes, keeping its original length, as
// `editcap -s snaplen` does (the writer itself keeps at least TR_SNAPLEN_HEADERS).
void Snap(const std::string& path, uint32_t snaplen);

}  // namespace trtest

#endif
