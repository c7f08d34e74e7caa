// The allocator: alignment, exact accounting, coalescing back to an empty footprint,
// realloc in place and by moving, determinism, a full arena, and random alloc/free/realloc
// against a shadow model from several threads and processes.
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "arena/tests/arena_test_util.h"

namespace {

using arena_test::ScopedName;
using arena_test::WaitChild;

uintptr_t U(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// Fills a block with bytes derived from its tag; checks them.
void Fill(void* p, size_t n, uint32_t tag) {
  auto* b = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < n; i++) b[i] = static_cast<unsigned char>(tag * 131u + i * 7u);
}
bool Check(const void* p, size_t n, uint32_t tag) {
  auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; i++)
    if (b[i] != static_cast<unsigned char>(tag * 131u + i * 7u)) return false;
  return true;
}

struct Block {
  size_t size;
  uint32_t tag;
};

// Sizes biased to the small classes, with some large blocks.
size_t RandomSize(std::mt19937_64& rng) {
  uint64_t r = rng() % 100;
  if (r < 70) return rng() % 257;
  if (r < 95) return 257 + rng() % 4000;
  return 4096 + rng() % 60000;
}

// Random alloc/free/realloc against a shadow map; returns an empty string or the first
// problem found. Frees everything at the end. Only this caller's blocks are checked, so
// several callers may share the arena.
std::string Stress(fs_arena* a, uint64_t seed, int ops, bool check_used) {
  std::mt19937_64 rng(seed);
  std::map<uintptr_t, Block> live;
  size_t used = 0;
  uint32_t next_tag = static_cast<uint32_t>(seed);
  auto overlaps = [&](uintptr_t p, size_t n) {
    auto it = live.upper_bound(p);
    if (it != live.end() && it->first < p + (n ? n : 1)) return true;
    if (it != live.begin()) {
      --it;
      if (it->first + (it->second.size ? it->second.size : 1) > p) return true;
    }
    return false;
  };
  for (int i = 0; i < ops; i++) {
    uint64_t op = rng() % 10;
    if (op < 5 || live.empty()) {
      size_t n = RandomSize(rng);
      void* p = fs_arena_alloc(a, n);
      if (!p) return "alloc(" + std::to_string(n) + ") failed at op " + std::to_string(i);
      if (U(p) % 16) return "misaligned block";
      if (!fs_arena_contains(a, p) || !fs_arena_contains(a, static_cast<char*>(p) + n))
        return "block outside the arena";
      if (overlaps(U(p), n)) return "new block overlaps a live one at op " + std::to_string(i);
      Fill(p, n, next_tag);
      live[U(p)] = {n, next_tag++};
      used += n;
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      void* p = reinterpret_cast<void*>(it->first);
      Block b = it->second;
      if (!Check(p, b.size, b.tag)) return "contents changed at op " + std::to_string(i);
      live.erase(it);
      used -= b.size;
      if (op < 8) {
        fs_arena_free(a, p);
      } else {
        size_t n = RandomSize(rng) + 1;
        void* q = fs_arena_realloc(a, p, n);
        if (!q) return "realloc failed at op " + std::to_string(i);
        if (U(q) % 16) return "misaligned realloc";
        if (overlaps(U(q), n)) return "realloc overlaps a live block";
        if (!Check(q, b.size < n ? b.size : n, b.tag)) return "realloc lost the contents";
        Fill(q, n, next_tag);
        live[U(q)] = {n, next_tag++};
        used += n;
      }
    }
    if (check_used && fs_arena_used(a) != used)
      return "used() " + std::to_string(fs_arena_used(a)) + " != " + std::to_string(used) +
             " at op " + std::to_string(i);
  }
  for (auto& [p, b] : live) {
    if (!Check(reinterpret_cast<void*>(p), b.size, b.tag)) return "contents changed at the end";
    fs_arena_free(a, reinterpret_cast<void*>(p));
  }
  return "";
}

class AllocTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = fs_arena_private(256u << 20);
    ASSERT_NE(nullptr, a_);
    empty_ = fs_arena_footprint(a_);
  }
  void TearDown() override { fs_arena_detach(a_); }
  fs_arena* a_ = nullptr;
  size_t empty_ = 0;
};

TEST_F(AllocTest, EveryBlockIs16ByteAlignedAndDistinct) {
  std::vector<void*> ps;
  for (size_t n : {0, 1, 15, 16, 17, 31, 32, 100, 1000, 1023, 1024, 1025, 5000, 100000}) {
    void* p = fs_arena_alloc(a_, n);
    ASSERT_NE(nullptr, p) << n;
    EXPECT_EQ(0u, U(p) % 16) << n;
    for (void* q : ps) EXPECT_NE(p, q);
    ps.push_back(p);
  }
  for (void* p : ps) fs_arena_free(a_, p);
  EXPECT_EQ(0u, fs_arena_used(a_));
  EXPECT_EQ(empty_, fs_arena_footprint(a_));
}

// Objects that begin a cache line, in the arena and in the C library's
// heap: aligned, zeroed, apart, and given back whole (a free of anything
// but a block aborts in the arena).
TEST_F(AllocTest, LineObjectsBeginALineAndAreFreedWhole) {
  for (fs_arena* arena : {a_, static_cast<fs_arena*>(nullptr)}) {
    std::vector<char*> ps;
    for (size_t n : {1, 15, 16, 48, 64, 100, 224, 4096}) {
      char* p = static_cast<char*>(fs_mem_calloc_line(arena, n));
      ASSERT_NE(nullptr, p) << n;
      EXPECT_EQ(0u, U(p) % FS_MEM_LINE) << n;
      for (size_t i = 0; i < n; i++) ASSERT_EQ(0, p[i]) << n << " at " << i;
      memset(p, 0xa5, n);  // the whole object is its own
      for (char* q : ps) EXPECT_NE(p, q);
      ps.push_back(p);
    }
    for (char* p : ps) fs_mem_free_line(arena, p);
    fs_mem_free_line(arena, nullptr);
  }
  EXPECT_EQ(0u, fs_arena_used(a_));
  EXPECT_EQ(empty_, fs_arena_footprint(a_));
}

TEST_F(AllocTest, UsedCountsRequestedBytesAndFootprintTheOverhead) {
  EXPECT_EQ(0u, fs_arena_used(a_));
  void* p = fs_arena_alloc(a_, 100);
  void* q = fs_arena_calloc(a_, 3, 10);
  EXPECT_EQ(130u, fs_arena_used(a_));
  // 100 + 16 -> 128; 30 + 16 -> 48.
  EXPECT_EQ(empty_ + 128 + 48, fs_arena_footprint(a_));
  q = fs_arena_realloc(a_, q, 500);
  EXPECT_EQ(600u, fs_arena_used(a_));
  fs_arena_free(a_, p);
  EXPECT_EQ(500u, fs_arena_used(a_));
  fs_arena_free(a_, q);
  EXPECT_EQ(0u, fs_arena_used(a_));
  EXPECT_EQ(empty_, fs_arena_footprint(a_));
}

TEST_F(AllocTest, FreedNeighboursCoalesceAndAreReused) {
  char* x = static_cast<char*>(fs_arena_alloc(a_, 1000));
  char* y = static_cast<char*>(fs_arena_alloc(a_, 1000));
  char* z = static_cast<char*>(fs_arena_alloc(a_, 1000));
  char* guard = static_cast<char*>(fs_arena_alloc(a_, 16));
  ASSERT_TRUE(x && y && z && guard);
  EXPECT_EQ(x + 1024, y);  // back to back: 1000 + 16 rounds to 1024
  size_t full = fs_arena_footprint(a_);
  fs_arena_free(a_, x);
  fs_arena_free(a_, z);
  fs_arena_free(a_, y);  // joins x and z into one 3072-byte chunk
  void* big = fs_arena_alloc(a_, 3072 - 16);
  EXPECT_EQ(static_cast<void*>(x), big);
  EXPECT_EQ(full, fs_arena_footprint(a_));
  fs_arena_free(a_, big);
  fs_arena_free(a_, guard);  // the last chunk: everything goes back to the tail
  EXPECT_EQ(empty_, fs_arena_footprint(a_));
}

TEST_F(AllocTest, SmallFreedBlockIsReusedFirst) {
  void* p = fs_arena_alloc(a_, 48);
  void* keep = fs_arena_alloc(a_, 48);
  fs_arena_free(a_, p);
  EXPECT_EQ(p, fs_arena_alloc(a_, 40));  // same 64-byte class
  fs_arena_free(a_, p);
  fs_arena_free(a_, keep);
}

TEST_F(AllocTest, LargeFreeChunkIsSplitForSmallerRequests) {
  char* big = static_cast<char*>(fs_arena_alloc(a_, 8192));
  void* guard = fs_arena_alloc(a_, 16);
  fs_arena_free(a_, big);
  size_t fp = fs_arena_footprint(a_);
  char* p = static_cast<char*>(fs_arena_alloc(a_, 100));
  char* q = static_cast<char*>(fs_arena_alloc(a_, 100));
  EXPECT_EQ(big, p);
  EXPECT_EQ(big + 128, q);
  EXPECT_EQ(fp, fs_arena_footprint(a_));  // carved from the free chunk, not the tail
  fs_arena_free(a_, p);
  fs_arena_free(a_, q);
  fs_arena_free(a_, guard);
  EXPECT_EQ(empty_, fs_arena_footprint(a_));
}

TEST_F(AllocTest, ReallocGrowsInPlaceIntoTheTailAndIntoAFreeNeighbour) {
  char* p = static_cast<char*>(fs_arena_alloc(a_, 100));
  Fill(p, 100, 1);
  EXPECT_EQ(p, fs_arena_realloc(a_, p, 5000));  // last block: grows into the tail
  EXPECT_TRUE(Check(p, 100, 1));

  char* q = static_cast<char*>(fs_arena_alloc(a_, 100));
  char* r = static_cast<char*>(fs_arena_alloc(a_, 4000));
  void* guard = fs_arena_alloc(a_, 16);
  fs_arena_free(a_, r);
  Fill(q, 100, 2);
  EXPECT_EQ(q, fs_arena_realloc(a_, q, 3000));  // into the freed r, split
  EXPECT_TRUE(Check(q, 100, 2));
  EXPECT_EQ(static_cast<void*>(q + 3008 + 16), fs_arena_alloc(a_, 1000));  // r's remainder
  EXPECT_EQ(5000u + 3000u + 1000u + 16u, fs_arena_used(a_));
  (void)guard;
}

TEST_F(AllocTest, ReallocMovesWhenBlockedAndShrinksInPlace) {
  char* p = static_cast<char*>(fs_arena_alloc(a_, 200));
  void* blocker = fs_arena_alloc(a_, 16);
  Fill(p, 200, 3);
  char* q = static_cast<char*>(fs_arena_realloc(a_, p, 10000));
  ASSERT_NE(nullptr, q);
  EXPECT_NE(p, q);
  EXPECT_TRUE(Check(q, 200, 3));
  EXPECT_EQ(10016u, fs_arena_used(a_));

  Fill(q, 10000, 4);
  EXPECT_EQ(q, fs_arena_realloc(a_, q, 50));
  EXPECT_TRUE(Check(q, 50, 4));
  EXPECT_EQ(66u, fs_arena_used(a_));
  // The cut-off tail went back to the arena: the footprint shrank to q's 80-byte chunk.
  EXPECT_EQ(U(q) - 16 + 80 - U(a_), fs_arena_footprint(a_));

  EXPECT_EQ(nullptr, fs_arena_realloc(a_, q, 0));  // frees, as glibc's realloc
  void* r = fs_arena_realloc(a_, nullptr, 10);     // allocates
  ASSERT_NE(nullptr, r);
  fs_arena_free(a_, r);
  fs_arena_free(a_, blocker);
  EXPECT_EQ(0u, fs_arena_used(a_));
  EXPECT_EQ(empty_, fs_arena_footprint(a_));
}

TEST_F(AllocTest, CallocZeroesReusedMemoryAndRejectsOverflow) {
  void* p = fs_arena_alloc(a_, 256);
  void* guard = fs_arena_alloc(a_, 16);
  memset(p, 0xff, 256);
  fs_arena_free(a_, p);
  auto* z = static_cast<unsigned char*>(fs_arena_calloc(a_, 16, 16));
  ASSERT_EQ(p, static_cast<void*>(z));
  for (int i = 0; i < 256; i++) ASSERT_EQ(0, z[i]) << i;
  EXPECT_EQ(nullptr, fs_arena_calloc(a_, SIZE_MAX / 2, 4));
  fs_arena_free(a_, z);
  fs_arena_free(a_, guard);
}

TEST_F(AllocTest, FreeOfNullIsANoOp) {
  fs_arena_free(a_, nullptr);
  EXPECT_EQ(0u, fs_arena_used(a_));
  EXPECT_EQ(empty_, fs_arena_footprint(a_));
}

TEST_F(AllocTest, RandomOpsMatchShadowModelAndReturnEverything) {
  EXPECT_EQ("", Stress(a_, 42, 30000, true));
  EXPECT_EQ(0u, fs_arena_used(a_));
  EXPECT_EQ(empty_, fs_arena_footprint(a_));
  EXPECT_EQ("", Stress(a_, 7, 30000, true));
  EXPECT_EQ(empty_, fs_arena_footprint(a_));
}

TEST_F(AllocTest, SameCallsOnFreshArenasGiveSameOffsets) {
  fs_arena* b = fs_arena_private(256u << 20);
  ASSERT_NE(nullptr, b);
  std::mt19937_64 rng(99);
  std::vector<void*> pa, pb;
  for (int i = 0; i < 5000; i++) {
    if (pa.empty() || rng() % 3) {
      size_t n = RandomSize(rng);
      pa.push_back(fs_arena_alloc(a_, n));
      pb.push_back(fs_arena_alloc(b, n));
    } else {
      size_t k = rng() % pa.size();
      fs_arena_free(a_, pa[k]);
      fs_arena_free(b, pb[k]);
      pa.erase(pa.begin() + static_cast<long>(k));
      pb.erase(pb.begin() + static_cast<long>(k));
    }
    ASSERT_EQ(U(pa.back()) - U(a_), U(pb.back()) - U(b)) << i;
  }
  fs_arena_detach(b);
}

TEST(AllocFullTest, FullArenaReturnsNullAndRecovers) {
  const size_t cap = 1u << 20;
  fs_arena* a = fs_arena_private(cap);
  ASSERT_NE(nullptr, a);
  std::vector<void*> ps;
  for (void* p; (p = fs_arena_alloc(a, 4000)) != nullptr;) ps.push_back(p);
  // 4016-byte chunks: everything but the header and less than one chunk is handed out.
  EXPECT_EQ((cap - fs_arena_footprint(a) + ps.size() * 4016) / 4016, ps.size());
  EXPECT_LT(cap - fs_arena_footprint(a), 4016u);
  EXPECT_EQ(nullptr, fs_arena_alloc(a, cap));
  EXPECT_EQ(nullptr, fs_arena_alloc(a, SIZE_MAX));
  EXPECT_EQ(nullptr, fs_arena_realloc(a, ps[0], 8000));  // cannot grow: unchanged
  fs_arena_free(a, ps.back());
  ps.pop_back();
  void* again = fs_arena_alloc(a, 4000);
  EXPECT_NE(nullptr, again);
  ps.push_back(again);
  for (void* p : ps) fs_arena_free(a, p);
  EXPECT_EQ(0u, fs_arena_used(a));
  fs_arena_detach(a);
}

TEST(AllocFullTest, FullSharedArenaReturnsNull) {
  ScopedName name("full");
  fs_arena* a = nullptr;
  char err[256];
  ASSERT_EQ(0, fs_arena_create(name.c_str(), 256u << 10, &a, err, sizeof(err))) << err;
  int n = 0;
  while (fs_arena_alloc(a, 1000)) n++;
  EXPECT_GT(n, 200);
  EXPECT_EQ(nullptr, fs_arena_calloc(a, 1, 1000));
  fs_arena_detach(a);
}

TEST(AllocThreadsTest, ThreadsAllocateConcurrently) {
  fs_arena* a = fs_arena_private(512u << 20);
  ASSERT_NE(nullptr, a);
  size_t empty = fs_arena_footprint(a);
  std::string result[4];
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; t++)
    ts.emplace_back([&, t] { result[t] = Stress(a, 1000 + t, 20000, false); });
  for (auto& t : ts) t.join();
  for (auto& r : result) EXPECT_EQ("", r);
  EXPECT_EQ(0u, fs_arena_used(a));
  EXPECT_EQ(empty, fs_arena_footprint(a));
  fs_arena_detach(a);
}

TEST(AllocProcessesTest, ProcessesAllocateConcurrentlyInOneSegment) {
  ScopedName name("procs");
  fs_arena* a = nullptr;
  char err[256];
  ASSERT_EQ(0, fs_arena_create(name.c_str(), 512u << 20, &a, err, sizeof(err))) << err;
  size_t empty = fs_arena_footprint(a);
  pid_t kids[2];
  for (int k = 0; k < 2; k++) {
    kids[k] = fork();
    ASSERT_GE(kids[k], 0);
    if (kids[k] == 0) _exit(Stress(a, 500 + k, 20000, false).empty() ? 0 : 1);
  }
  EXPECT_EQ("", Stress(a, 499, 20000, false));
  for (pid_t k : kids) EXPECT_EQ(0, WaitChild(k, 60));
  EXPECT_EQ(0u, fs_arena_used(a));
  EXPECT_EQ(empty, fs_arena_footprint(a));
  fs_arena_detach(a);
}

TEST(AllocMisuseDeathTest, DoubleFreeAbortsWithAMessage) {
  fs_arena* a = fs_arena_private(1 << 20);
  ASSERT_NE(nullptr, a);
  void* p = fs_arena_alloc(a, 64);
  void* keep = fs_arena_alloc(a, 64);
  fs_arena_free(a, p);
  EXPECT_DEATH(fs_arena_free(a, p), "already free");
  fs_arena_free(a, keep);
  fs_arena_detach(a);
}

TEST(AllocMisuseDeathTest, ForeignPointerAbortsWithAMessage) {
  fs_arena* a = fs_arena_private(1 << 20);
  ASSERT_NE(nullptr, a);
  int on_stack = 0;
  EXPECT_DEATH(fs_arena_free(a, &on_stack), "outside the arena");
  char* p = static_cast<char*>(fs_arena_alloc(a, 64));
  EXPECT_DEATH(fs_arena_free(a, p + 16), "fs_arena_free");
  EXPECT_DEATH(fs_arena_realloc(a, &on_stack, 10), "outside the arena");
  fs_arena_free(a, p);
  fs_arena_detach(a);
}

TEST(FsMemTest, NullArenaUsesTheCLibrary) {
  auto* p = static_cast<char*>(fs_mem_alloc(nullptr, 100));
  ASSERT_NE(nullptr, p);
  EXPECT_GE(malloc_usable_size(p), 100u);  // a glibc block
  memset(p, 1, 100);
  p = static_cast<char*>(fs_mem_realloc(nullptr, p, 1000));
  ASSERT_NE(nullptr, p);
  EXPECT_EQ(1, p[99]);
  fs_mem_free(nullptr, p);
  auto* z = static_cast<int*>(fs_mem_calloc(nullptr, 10, sizeof(int)));
  ASSERT_NE(nullptr, z);
  EXPECT_EQ(0, z[9]);
  fs_mem_free(nullptr, z);
  fs_mem_free(nullptr, nullptr);
}

TEST(FsMemTest, ArenaGoesToTheArena) {
  fs_arena* a = fs_arena_private(1 << 20);
  ASSERT_NE(nullptr, a);
  void* p = fs_mem_alloc(a, 100);
  EXPECT_TRUE(fs_arena_contains(a, p));
  p = fs_mem_realloc(a, p, 200);
  EXPECT_TRUE(fs_arena_contains(a, p));
  void* z = fs_mem_calloc(a, 2, 8);
  EXPECT_TRUE(fs_arena_contains(a, z));
  EXPECT_EQ(216u, fs_arena_used(a));
  fs_mem_free(a, p);
  fs_mem_free(a, z);
  EXPECT_EQ(0u, fs_arena_used(a));
  fs_arena_detach(a);
}

}  // namespace
