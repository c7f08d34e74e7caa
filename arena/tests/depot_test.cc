// Per-partition caches of free objects and the depot that balances them: nothing is lost or
// handed out twice, a one-way stream between two caches stays within a few batches, the
// caches work from threads and processes at once, and a process that dies holding the
// depot's lock does not stop the others.
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "arena/tests/arena_test_util.h"

extern "C" {
#include "arena/depot.h"
}

namespace {

using arena_test::ScopedName;
using arena_test::WaitChild;

struct Obj {
  uint64_t payload;
  Obj* link;
  int free;  // 1 while in a cache or the depot
};
constexpr size_t kLink = offsetof(Obj, link);

// A partition's view: its cache, and what it allocated new when the cache had nothing.
struct Part {
  fs_cache cache{};
  std::vector<Obj*> created;

  Obj* Get(fs_depot* depot) {
    auto* o = static_cast<Obj*>(fs_cache_get(&cache, depot, kLink));
    if (!o) {
      o = new Obj{};
      created.push_back(o);
    } else {
      EXPECT_EQ(1, o->free) << "an object handed out twice";
    }
    o->free = 0;
    return o;
  }
  void Put(fs_depot* depot, Obj* o) {
    EXPECT_EQ(0, o->free) << "an object freed twice";
    o->free = 1;
    fs_cache_put(&cache, depot, kLink, o);
  }
};

void CountOne(void* ctx, void* obj) {
  auto* seen = static_cast<std::vector<Obj*>*>(ctx);
  seen->push_back(static_cast<Obj*>(obj));
}

class DepotTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(0, fs_depot_init(&depot_, nullptr)); }
  void TearDown() override { fs_depot_fini(&depot_); }
  fs_depot depot_;
};

TEST_F(DepotTest, WithoutADepotTheCacheKeepsEverything) {
  Part p;
  std::vector<Obj*> taken;
  for (int i = 0; i < 1000; i++) taken.push_back(p.Get(nullptr));
  for (Obj* o : taken) p.Put(nullptr, o);
  EXPECT_EQ(1000u, fs_cache_count(&p.cache));
  for (int i = 0; i < 1000; i++) p.Get(nullptr);
  EXPECT_EQ(1000u, p.created.size()) << "every object came back from the cache";
  EXPECT_EQ(nullptr, fs_cache_get(&p.cache, nullptr, kLink));
  for (Obj* o : p.created) delete o;
}

// The case the depot exists for: one partition allocates, the other frees.
TEST_F(DepotTest, AOneWayStreamStaysWithinAFewBatches) {
  Part sender, receiver;
  std::vector<Obj*> in_flight;
  for (int i = 0; i < 200000; i++) {
    in_flight.push_back(sender.Get(&depot_));
    if (in_flight.size() > 10) {  // ten in flight at a time
      receiver.Put(&depot_, in_flight.front());
      in_flight.erase(in_flight.begin());
    }
  }
  // The receiver holds at most a loaded list and a spare, the depot the rest.
  EXPECT_LE(sender.created.size(), 10 + 3 * FS_CACHE_BATCH);
  EXPECT_LE(fs_cache_count(&receiver.cache), 2 * FS_CACHE_BATCH);
  EXPECT_GT(depot_.count + fs_cache_count(&receiver.cache), 0u);

  std::vector<Obj*> seen;
  for (Obj* o : in_flight) receiver.Put(&depot_, o);
  fs_cache_drain(&sender.cache, kLink, CountOne, &seen);
  fs_cache_drain(&receiver.cache, kLink, CountOne, &seen);
  fs_depot_drain(&depot_, kLink, CountOne, &seen);
  EXPECT_EQ(sender.created.size(), seen.size()) << "drained exactly what was made";
  EXPECT_EQ(0u, fs_cache_count(&sender.cache));
  EXPECT_EQ(0u, depot_.count);
  for (Obj* o : sender.created) delete o;
}

// Two threads pass objects to each other through a ring, each allocating from and freeing
// into its own cache: every object is accounted for at the end, none was handed out twice.
TEST_F(DepotTest, ThreadsShareTheDepot) {
  constexpr int kThreads = 4, kRounds = 100000;
  constexpr size_t kRing = 256;
  struct Ring {
    std::atomic<Obj*> slot[kRing]{};
  };
  std::vector<Ring> rings(kThreads);  // rings[t]: what thread t frees
  std::vector<Part> parts(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      Part& me = parts[t];
      Ring& mine = rings[t];
      Ring& next = rings[(t + 1) % kThreads];
      size_t out = 0;
      for (int i = 0; i < kRounds; i++) {
        Obj* o = me.Get(&depot_);
        // Hand it on when the slot is free; otherwise free it here.
        Obj* expected = nullptr;
        if (!next.slot[out % kRing].compare_exchange_strong(expected, o)) me.Put(&depot_, o);
        out++;
        Obj* in = mine.slot[i % kRing].exchange(nullptr);
        if (in) me.Put(&depot_, in);
      }
    });
  }
  for (auto& th : threads) th.join();
  size_t created = 0;
  std::vector<Obj*> seen;
  for (int t = 0; t < kThreads; t++) {
    created += parts[t].created.size();
    for (auto& s : rings[t].slot)
      if (Obj* o = s.load()) seen.push_back(o);
    fs_cache_drain(&parts[t].cache, kLink, CountOne, &seen);
  }
  fs_depot_drain(&depot_, kLink, CountOne, &seen);
  EXPECT_EQ(created, seen.size());
  EXPECT_LE(created, kThreads * (kRing + 3 * FS_CACHE_BATCH));
  for (auto& p : parts)
    for (Obj* o : p.created) delete o;
}

// In an arena, a forked process frees into the depot what its parent takes, and one that
// dies holding the depot's lock leaves it usable.
TEST(DepotArenaTest, ProcessesShareItAndADeadHolderIsSurvived) {
  ScopedName name("depot");
  fs_arena* a = nullptr;
  char err[256] = "";
  ASSERT_EQ(0, fs_arena_create(name.c_str(), 16u << 20, &a, err, sizeof(err))) << err;
  auto* depot = static_cast<fs_depot*>(fs_arena_calloc(a, 1, sizeof(fs_depot)));
  ASSERT_NE(nullptr, depot);
  ASSERT_EQ(0, fs_depot_init(depot, a));

  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    fs_cache cache{};
    for (int i = 0; i < 10 * static_cast<int>(FS_CACHE_BATCH); i++) {
      auto* o = static_cast<Obj*>(fs_arena_calloc(a, 1, sizeof(Obj)));
      if (!o) _exit(3);
      o->payload = 7;
      fs_cache_put(&cache, depot, kLink, o);
    }
    pthread_mutex_lock(&depot->lock);
    _exit(0);  // dies holding it
  }
  ASSERT_EQ(0, WaitChild(pid));
  EXPECT_EQ(8u, depot->count) << "two batches stay in the child's cache";

  fs_cache cache{};
  int got = 0;
  while (auto* o = static_cast<Obj*>(fs_cache_get(&cache, depot, kLink))) {
    EXPECT_EQ(7u, o->payload);
    got++;
  }
  EXPECT_EQ(8 * static_cast<int>(FS_CACHE_BATCH), got);
  EXPECT_EQ(0, fs_depot_put(depot, fs_depot_batch{1, 1}));
  EXPECT_EQ(1u, depot->count);
  // The lock is an ordinary one again, not one that can never be taken.
  EXPECT_EQ(0, pthread_mutex_trylock(&depot->lock));
  pthread_mutex_unlock(&depot->lock);
  fs_depot_fini(depot);
  fs_arena_detach(a);
}

}  // namespace
