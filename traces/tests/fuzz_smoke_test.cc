// A bounded run of the fuzz entry point inside `bazel test`: every seed, then a few thousand
// deterministic mutations of them (bit flips, byte stores, cuts, insertions, deletions, lengths
// made to lie). Under --config=asan this is a small fuzzing campaign of its own; the long runs
// use the libFuzzer target (traces/fuzz/run_fuzz.sh).
//
// FUZZ_SEED_DIR=dir bazel-bin/traces/fuzz_smoke_test writes the generated seeds to dir: that is
// how traces/testdata/fuzz_seeds/ was made.
#include "traces/tests/test_util.h"

#include "traces/fuzz/fuzz_entry.h"

#include <dirent.h>

namespace {

using trtest::Bytes;

std::vector<std::pair<std::string, Bytes>> Seeds() {
  std::vector<std::pair<std::string, Bytes>> seeds;
  for (const char* name : {"oferby_proxy_roce.pcap", "srinivaskoritala_infiniband.pcap",
                           "FlashBarryAllen_PcapPlusPlus_InfiniBandPacket.pcap"})
    seeds.emplace_back(name, trtest::ReadFile(trtest::TestData(name)));
  // Short generated traces: every opcode, marks, IPv4/IPv6, VLANs, full and headers-only.
  auto conv = trtest::Conversation(1, 1);
  std::vector<trtest::Written> head(conv.begin(), conv.begin() + 40), tail(conv.begin() + 40, conv.end());
  struct {
    const char* name;
    const std::vector<trtest::Written>* list;
    uint32_t snap;
  } gen[] = {{"gen_head.pcap", &head, 0}, {"gen_tail.pcap", &tail, 0}, {"gen_headers.pcap", &tail, TR_SNAPLEN_HEADERS}};
  for (auto& g : gen) {
    std::string path = trtest::TempPath(g.name);
    trtest::WriteTrace(path, *g.list, g.snap);
    seeds.emplace_back(g.name, trtest::ReadFile(path));
  }
  auto v6 = trtest::Conversation(1, 1, 6, 2);
  std::vector<trtest::Written> v6head(v6.begin(), v6.begin() + 30);
  trtest::WriteTrace(trtest::TempPath("gen_v6.pcap"), v6head);
  seeds.emplace_back("gen_v6.pcap", trtest::ReadFile(trtest::TempPath("gen_v6.pcap")));
  // The other containers: pcapng, big-endian microsecond pcap, raw IP, cooked.
  std::vector<trtest::Rec> recs;
  for (size_t i = 0; i < 6; i++) recs.push_back({1, static_cast<uint32_t>(i), conv[i * 7].frame, 0});
  std::vector<int64_t> offs;
  seeds.emplace_back("gen.pcapng", trtest::Pcapng(false, 1, recs, &offs));
  seeds.emplace_back("gen_be.pcap", trtest::Pcap(0xa1b2c3d4u, true, 1, recs));
  std::vector<trtest::Rec> raw, sll;
  for (auto& r : recs) {
    raw.push_back({r.sec, r.frac, Bytes(r.data.begin() + 14, r.data.end()), 0});
    Bytes s(16, 0);
    s[14] = 0x08;
    s.insert(s.end(), r.data.begin() + 14, r.data.end());
    sll.push_back({r.sec, r.frac, s, 0});
  }
  seeds.emplace_back("gen_raw.pcap", trtest::Pcap(0xa1b2c3d4u, false, 101, raw));
  seeds.emplace_back("gen_sll.pcap", trtest::Pcap(0xa1b2c3d4u, false, 113, sll));
  return seeds;
}

struct Rng {
  uint64_t s;
  uint64_t Next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  size_t Below(size_t n) { return n ? static_cast<size_t>(Next() % n) : 0; }
};

Bytes Mutate(const Bytes& in, Rng& r) {
  Bytes b = in;
  int edits = 1 + static_cast<int>(r.Below(4));
  for (int e = 0; e < edits; e++) {
    switch (r.Below(7)) {
      case 0:  // flip a bit
        if (!b.empty()) b[r.Below(b.size())] ^= static_cast<uint8_t>(1u << r.Below(8));
        break;
      case 1:  // store an interesting byte
        if (!b.empty()) b[r.Below(b.size())] = static_cast<uint8_t>(std::vector<int>{0, 1, 0x7f, 0x80, 0xff, 0x11, 0x12, 0xb7}[r.Below(8)]);
        break;
      case 2:  // cut
        b.resize(r.Below(b.size() + 1));
        break;
      case 3: {  // insert bytes
        size_t at = r.Below(b.size() + 1), n = 1 + r.Below(16);
        b.insert(b.begin() + static_cast<long>(at), n, static_cast<uint8_t>(r.Next()));
        break;
      }
      case 4: {  // delete bytes
        if (b.empty()) break;
        size_t at = r.Below(b.size()), n = std::min(b.size() - at, 1 + r.Below(16));
        b.erase(b.begin() + static_cast<long>(at), b.begin() + static_cast<long>(at + n));
        break;
      }
      case 5:  // make a 16-bit length field somewhere lie
        if (b.size() > 2) {
          size_t at = r.Below(b.size() - 1);
          b[at] = static_cast<uint8_t>(r.Next());
          b[at + 1] = static_cast<uint8_t>(r.Next());
        }
        break;
      default:  // overwrite a pcap record's lengths (after the 24-byte file header)
        if (b.size() > 40) {
          size_t at = 24 + 8 + r.Below(8);
          b[at] = static_cast<uint8_t>(r.Next());
        }
        break;
    }
  }
  return b;
}

TEST(FuzzSmoke, SeedsAndMutations) {
  auto seeds = Seeds();
  if (const char* dir = std::getenv("FUZZ_SEED_DIR")) {
    for (auto& [name, bytes] : seeds)
      if (name.rfind("gen", 0) == 0) trtest::WriteFile(std::string(dir) + "/" + name, bytes);
  }
  // The checked-in corpus (and any crash input added to it) is replayed as is.
  const std::string dir = trtest::TestData("fuzz_seeds");
  if (DIR* d = opendir(dir.c_str())) {
    size_t n = 0;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      Bytes b = trtest::ReadFile(dir + "/" + e->d_name);
      tr_fuzz_one(b.data(), b.size());
      n++;
    }
    closedir(d);
    EXPECT_GT(n, 5u) << dir;
  } else {
    ADD_FAILURE() << dir << " is not in the runfiles";
  }
  uint64_t records = 0;
  for (auto& [name, bytes] : seeds) {
    int n = tr_fuzz_one(bytes.data(), bytes.size());
    EXPECT_GT(n, 0) << name << " should read as a trace";
    records += static_cast<uint64_t>(n);
  }
  const char* env = std::getenv("FUZZ_SMOKE_RUNS");
  int runs = env ? std::atoi(env) : 4000;
  Rng r{0x9E3779B97F4A7C15ull};
  for (int i = 0; i < runs; i++) {
    const Bytes& seed = seeds[r.Below(seeds.size())].second;
    Bytes m = Mutate(seed, r);
    records += static_cast<uint64_t>(tr_fuzz_one(m.data(), m.size()));
  }
  // Arbitrary small inputs too, where most files are rejected at the header.
  for (int i = 0; i < 500; i++) {
    Bytes b(r.Below(200));
    for (auto& x : b) x = static_cast<uint8_t>(r.Next());
    tr_fuzz_one(b.data(), b.size());
  }
  tr_fuzz_one(nullptr, 0);
  EXPECT_GT(records, 1000u);
}

}  // namespace
