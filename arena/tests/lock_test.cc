// The robust, process-shared lock: mutual exclusion across processes, and a holder that
// dies (a fork()ed child, a separate program, a process inside the allocator) turns the
// arena broken: -EOWNERDEAD once, then -EIO, and no more allocations.
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "arena/src/arena_internal.h"
#include "arena/tests/arena_test_util.h"

namespace {

using arena_test::RunChild;
using arena_test::ScopedName;
using arena_test::WaitChild;

constexpr size_t kCap = 16u << 20;

class LockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char err[256] = "";
    ASSERT_EQ(0, fs_arena_create(name_.c_str(), kCap, &a_, err, sizeof(err))) << err;
  }
  void TearDown() override { fs_arena_detach(a_); }

  // What everyone sees once the arena is broken.
  void ExpectBrokenEverywhere(void* block) {
    EXPECT_TRUE(fs_arena_broken(a_));
    EXPECT_EQ(-EIO, fs_arena_lock(a_));
    EXPECT_EQ(-EIO, fs_arena_lock(a_));
    EXPECT_EQ(nullptr, fs_arena_alloc(a_, 16));
    EXPECT_EQ(nullptr, fs_arena_calloc(a_, 1, 16));
    EXPECT_EQ(nullptr, fs_arena_realloc(a_, block, 64));
    size_t used = fs_arena_used(a_);
    fs_arena_free(a_, block);  // left alone, no crash
    EXPECT_EQ(used, fs_arena_used(a_));
    // A process attaching afterwards sees it broken too.
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      fs_arena_detach(a_);
      fs_arena* b = nullptr;
      if (fs_arena_attach(name_.c_str(), &b, nullptr, 0) != 0) _exit(3);
      _exit(fs_arena_broken(b) && fs_arena_lock(b) == -EIO && !fs_arena_alloc(b, 8) ? 0 : 4);
    }
    EXPECT_EQ(0, WaitChild(pid));
  }

  ScopedName name_{"lock"};
  fs_arena* a_ = nullptr;
};

TEST_F(LockTest, LockAndAllocateWhileHoldingIt) {
  ASSERT_EQ(0, fs_arena_lock(a_));
  // The allocator has its own lock: allocating under fs_arena_lock does not deadlock.
  void* p = fs_arena_alloc(a_, 100);
  EXPECT_NE(nullptr, p);
  fs_arena_free(a_, p);
  fs_arena_unlock(a_);
  EXPECT_EQ(0, fs_arena_lock(a_));
  fs_arena_unlock(a_);
  EXPECT_FALSE(fs_arena_broken(a_));
  EXPECT_EQ(-EINVAL, fs_arena_lock(nullptr));
}

TEST_F(LockTest, ExcludesAcrossProcesses) {
  auto* counter = static_cast<volatile uint64_t*>(fs_arena_calloc(a_, 1, sizeof(uint64_t)));
  ASSERT_NE(nullptr, counter);
  const int kIters = 200000;
  auto work = [&] {
    for (int i = 0; i < kIters; i++) {
      if (fs_arena_lock(a_) != 0) return false;
      uint64_t v = *counter;  // a non-atomic read-modify-write: only the lock makes it exact
      *counter = v + 1;
      fs_arena_unlock(a_);
    }
    return true;
  };
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(work() ? 0 : 1);
  EXPECT_TRUE(work());
  ASSERT_EQ(0, WaitChild(pid, 60));
  EXPECT_EQ(2u * kIters, *counter);
}

TEST_F(LockTest, ForkedChildDyingWithTheLockBreaksTheArena) {
  void* block = fs_arena_alloc(a_, 32);
  ASSERT_NE(nullptr, block);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (fs_arena_lock(a_) != 0) _exit(1);
    _exit(0);  // dies holding it
  }
  ASSERT_EQ(0, WaitChild(pid));
  EXPECT_FALSE(fs_arena_broken(a_));  // nobody has noticed yet

  EXPECT_EQ(-EOWNERDEAD, fs_arena_lock(a_));  // and we hold it now
  EXPECT_TRUE(fs_arena_broken(a_));
  fs_arena_unlock(a_);
  ExpectBrokenEverywhere(block);
}

TEST_F(LockTest, SeparateProgramDyingWithTheLockBreaksTheArena) {
  void* block = fs_arena_alloc(a_, 32);
  ASSERT_NE(nullptr, block);
  auto r = RunChild({"lockdie", name_.c_str()});
  ASSERT_EQ(0, r.status) << r.out;
  EXPECT_EQ(-EOWNERDEAD, fs_arena_lock(a_));
  fs_arena_unlock(a_);
  ExpectBrokenEverywhere(block);
}

TEST_F(LockTest, DyingInsideTheAllocatorBreaksTheArena) {
  void* block = fs_arena_alloc(a_, 32);
  ASSERT_NE(nullptr, block);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // As if killed in the middle of an allocation.
    if (pthread_mutex_lock(&a_->alloc_lock) != 0) _exit(1);
    _exit(0);
  }
  ASSERT_EQ(0, WaitChild(pid));
  EXPECT_EQ(nullptr, fs_arena_alloc(a_, 16));
  // The user lock's holder did not die; the arena is broken all the same.
  ExpectBrokenEverywhere(block);
}

}  // namespace
