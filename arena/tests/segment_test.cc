// The segment: one address in every process (a fork()ed child and a separate program), the
// address rule, and each error fs_arena_create/fs_arena_attach promise.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "arena/tests/arena_test_util.h"
#include "arena/tests/shared_demo.h"

namespace {

using arena_test::RunChild;
using arena_test::ScopedName;
using arena_test::WaitChild;

constexpr size_t kCap = 64u << 20;
#if defined(__SANITIZE_THREAD__) // arena_internal.h: below ThreadSanitizer's shadow
constexpr uintptr_t kRegionLo = 0x001000000000ULL;
constexpr uintptr_t kRegionHi = 0x007000000000ULL;
#else
constexpr uintptr_t kRegionLo = 0x200000000000ULL;
constexpr uintptr_t kRegionHi = 0x500000000000ULL;
#endif

std::string Hex(const void* p) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%p", p);
  return buf;
}

// Creates the arena and publishes a shared_demo with the creator's message at the root.
shared_demo* Publish(fs_arena* a) {
  auto* demo = static_cast<shared_demo*>(fs_arena_calloc(a, 1, sizeof(shared_demo)));
  if (demo) {
    snprintf(demo->msg, sizeof(demo->msg), "%s", DEMO_PARENT_MSG);
    fs_arena_set_root(a, demo);
  }
  return demo;
}

TEST(SegmentTest, AddressIsInTheReservedRegionAndGiBAligned) {
  ScopedName name("region");
  fs_arena* a = nullptr;
  char err[256] = "";
  ASSERT_EQ(0, fs_arena_create(name.c_str(), kCap, &a, err, sizeof(err))) << err;
  uintptr_t base = reinterpret_cast<uintptr_t>(a);
  EXPECT_GE(base, kRegionLo);
  EXPECT_LE(base + kCap, kRegionHi);
  EXPECT_EQ(0u, base % (1ULL << 30));
  EXPECT_TRUE(fs_arena_contains(a, reinterpret_cast<void*>(base + kCap - 1)));
  EXPECT_FALSE(fs_arena_contains(a, reinterpret_cast<void*>(base + kCap)));
  fs_arena_detach(a);
}

TEST(SegmentTest, SameNameGivesSameAddressAndTakenCandidateMovesOn) {
  ScopedName name("again");
  fs_arena *a = nullptr, *b = nullptr, *c = nullptr;
  char err[256] = "";
  ASSERT_EQ(0, fs_arena_create(name.c_str(), kCap, &a, err, sizeof(err))) << err;
  fs_arena_detach(a);
  ASSERT_EQ(0, fs_arena_unlink(name.c_str()));
  // Recreated after the first is gone: the same deterministic first candidate.
  ASSERT_EQ(0, fs_arena_create(name.c_str(), kCap, &b, err, sizeof(err))) << err;
  EXPECT_EQ(a, b);
  // Name reused while b is still mapped here: the first candidate is taken, the next is used.
  ASSERT_EQ(0, fs_arena_unlink(name.c_str()));
  ASSERT_EQ(0, fs_arena_create(name.c_str(), kCap, &c, err, sizeof(err))) << err;
  EXPECT_NE(b, c);
  EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(c) % (1ULL << 30));
  fs_arena_detach(b);
  fs_arena_detach(c);
}

TEST(SegmentTest, ForkedChildAttachesAtSameAddressAndParentSeesItsAllocation) {
  ScopedName name("fork");
  fs_arena* a = nullptr;
  char err[256] = "";
  ASSERT_EQ(0, fs_arena_create(name.c_str(), kCap, &a, err, sizeof(err))) << err;
  shared_demo* demo = Publish(a);
  ASSERT_NE(nullptr, demo);
  size_t used_before = fs_arena_used(a);

  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Drop the inherited mapping and attach by name, as a process that did not fork would.
    fs_arena_detach(a);
    fs_arena* b = nullptr;
    char cerr[256];
    if (fs_arena_attach(name.c_str(), &b, cerr, sizeof(cerr)) != 0) _exit(3);
    if (b != a) _exit(4);
    auto* d = static_cast<shared_demo*>(fs_arena_root(b));
    if (d != demo || strcmp(d->msg, DEMO_PARENT_MSG) != 0) _exit(5);
    d->child_block = static_cast<char*>(fs_arena_alloc(b, 100));
    if (!d->child_block) _exit(6);
    snprintf(d->child_block, 100, "child %d", static_cast<int>(getpid()));
    d->child_pid = getpid();
    d->child_base = reinterpret_cast<uintptr_t>(b);
    _exit(0);
  }
  ASSERT_EQ(0, WaitChild(pid));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a), demo->child_base);
  ASSERT_NE(nullptr, demo->child_block);
  EXPECT_TRUE(fs_arena_contains(a, demo->child_block));
  EXPECT_EQ("child " + std::to_string(pid), std::string(demo->child_block));
  EXPECT_EQ(used_before + 100, fs_arena_used(a));
  // The child's block is an ordinary block of the arena for the parent.
  fs_arena_free(a, demo->child_block);
  EXPECT_EQ(used_before, fs_arena_used(a));
  fs_arena_detach(a);
}

TEST(SegmentTest, SeparateProgramAttachesAtSameAddressAndParentSeesItsAllocation) {
  ScopedName name("exec");
  fs_arena* a = nullptr;
  char err[256] = "";
  ASSERT_EQ(0, fs_arena_create(name.c_str(), kCap, &a, err, sizeof(err))) << err;
  shared_demo* demo = Publish(a);
  ASSERT_NE(nullptr, demo);

  auto r = RunChild({"attach", name.c_str()});
  ASSERT_EQ(0, r.status) << r.out;
  EXPECT_EQ("base " + Hex(a) + "\n", r.out);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a), demo->child_base);
  ASSERT_NE(nullptr, demo->child_block);
  EXPECT_TRUE(fs_arena_contains(a, demo->child_block));
  EXPECT_EQ("child " + std::to_string(demo->child_pid), std::string(demo->child_block));
  fs_arena_detach(a);
}

TEST(SegmentTest, DataOutlivesDetachUntilUnlinked) {
  ScopedName name("persist");
  fs_arena *a = nullptr, *b = nullptr;
  char err[256] = "";
  ASSERT_EQ(0, fs_arena_create(name.c_str(), kCap, &a, err, sizeof(err))) << err;
  auto* p = static_cast<char*>(fs_arena_alloc(a, 32));
  ASSERT_NE(nullptr, p);
  strcpy(p, "still here");
  fs_arena_set_root(a, p);
  fs_arena_detach(a);
  ASSERT_EQ(0, fs_arena_attach(name.c_str(), &b, err, sizeof(err))) << err;
  EXPECT_EQ(a, b);
  EXPECT_EQ(p, fs_arena_root(b));
  EXPECT_STREQ("still here", static_cast<char*>(fs_arena_root(b)));
  EXPECT_EQ(32u, fs_arena_used(b));
  fs_arena_detach(b);
}

TEST(SegmentTest, DuplicateCreateIsEEXIST) {
  ScopedName name("dup");
  fs_arena *a = nullptr, *b = reinterpret_cast<fs_arena*>(1);
  char err[256] = "";
  ASSERT_EQ(0, fs_arena_create(name.c_str(), kCap, &a, err, sizeof(err))) << err;
  EXPECT_EQ(-EEXIST, fs_arena_create(name.c_str(), kCap, &b, err, sizeof(err)));
  EXPECT_EQ(nullptr, b);
  EXPECT_NE(nullptr, strstr(err, name.c_str())) << err;
  // The failed create did not remove the existing segment.
  fs_arena_detach(a);
  ASSERT_EQ(0, fs_arena_attach(name.c_str(), &a, err, sizeof(err))) << err;
  fs_arena_detach(a);
}

TEST(SegmentTest, AttachOfMissingNameIsENOENT) {
  ScopedName name("missing");
  fs_arena* a = reinterpret_cast<fs_arena*>(1);
  char err[256] = "";
  EXPECT_EQ(-ENOENT, fs_arena_attach(name.c_str(), &a, err, sizeof(err)));
  EXPECT_EQ(nullptr, a);
  EXPECT_NE(nullptr, strstr(err, name.c_str())) << err;
}

TEST(SegmentTest, AttachOverTakenRangeIsEADDRINUSEAndNamesIt) {
  ScopedName name("inuse");
  fs_arena *a = nullptr, *b = nullptr;
  char err[512] = "";
  ASSERT_EQ(0, fs_arena_create(name.c_str(), kCap, &a, err, sizeof(err))) << err;
  // Attaching again while it is mapped here: the range is taken.
  EXPECT_EQ(-EADDRINUSE, fs_arena_attach(name.c_str(), &b, err, sizeof(err)));
  fs_arena_detach(a);

  // Something else mapped inside the range.
  char* inside = reinterpret_cast<char*>(a) + (8u << 20);
  void* other = mmap(inside, 4096, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  ASSERT_EQ(static_cast<void*>(inside), other) << strerror(errno);
  EXPECT_EQ(-EADDRINUSE, fs_arena_attach(name.c_str(), &b, err, sizeof(err)));
  EXPECT_EQ(nullptr, b);
  EXPECT_NE(nullptr, strstr(err, Hex(a).c_str())) << err;    // the range wanted
  EXPECT_NE(nullptr, strstr(err, Hex(inside).c_str())) << err;  // what occupies it
  // Nothing was clobbered: our mapping is intact.
  EXPECT_EQ(0, static_cast<char*>(other)[0]);
  ASSERT_EQ(0, munmap(other, 4096));

  ASSERT_EQ(0, fs_arena_attach(name.c_str(), &b, err, sizeof(err))) << err;
  EXPECT_EQ(a, b);
  fs_arena_detach(b);
}

TEST(SegmentTest, SegmentThatIsNotAnArenaIsEPROTO) {
  ScopedName name("proto");
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0) << strerror(errno);
  ASSERT_EQ(0, ftruncate(fd, 1 << 20));
  const char junk[] = "this is not an arena header, just text";
  ASSERT_EQ(static_cast<ssize_t>(sizeof(junk)), pwrite(fd, junk, sizeof(junk), 0));
  close(fd);

  fs_arena* a = reinterpret_cast<fs_arena*>(1);
  char err[256] = "";
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(-EPROTO, fs_arena_attach(name.c_str(), &a, err, sizeof(err)));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500));
  EXPECT_EQ(nullptr, a);
  EXPECT_NE(nullptr, strstr(err, "not an arena")) << err;
}

TEST(SegmentTest, EmptySegmentIsEPROTOAfterABoundedWait) {
  ScopedName name("empty");
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0) << strerror(errno);
  close(fd);
  fs_arena* a = nullptr;
  char err[256] = "";
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(-EPROTO, fs_arena_attach(name.c_str(), &a, err, sizeof(err)));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  EXPECT_NE(nullptr, strstr(err, "not an arena")) << err;
}

TEST(SegmentTest, BadNamesAndCapacitiesAreEINVAL) {
  fs_arena* a = nullptr;
  char err[256] = "";
  EXPECT_EQ(-EINVAL, fs_arena_create("no-slash", kCap, &a, err, sizeof(err)));
  EXPECT_EQ(-EINVAL, fs_arena_create("/a/b", kCap, &a, err, sizeof(err)));
  EXPECT_EQ(-EINVAL, fs_arena_attach("/", &a, err, sizeof(err)));
  ScopedName name("cap");
  EXPECT_EQ(-EINVAL, fs_arena_create(name.c_str(), 0, &a, err, sizeof(err)));
  EXPECT_NE(nullptr, strstr(err, "capacity")) << err;
  EXPECT_EQ(-EINVAL, fs_arena_create(name.c_str(), SIZE_MAX / 2, &a, err, sizeof(err)));
  // Neither left a segment behind.
  EXPECT_EQ(-ENOENT, fs_arena_attach(name.c_str(), &a, nullptr, 0));
}

TEST(SegmentTest, PrivateArenaAllocatesAndRejectsBadCapacity) {
  fs_arena* a = fs_arena_private(1 << 20);
  ASSERT_NE(nullptr, a);
  void* p = fs_arena_alloc(a, 100);
  ASSERT_NE(nullptr, p);
  EXPECT_TRUE(fs_arena_contains(a, p));
  EXPECT_EQ(nullptr, fs_arena_root(a));
  fs_arena_set_root(a, p);
  EXPECT_EQ(p, fs_arena_root(a));
  fs_arena_free(a, p);
  fs_arena_detach(a);
  EXPECT_EQ(nullptr, fs_arena_private(0));
}

// The label: read from the segment by name, without attaching it (a cleaner
// that finds the segment later tells where it came from), once set and only
// once; every refusal with its own code.
TEST(SegmentTest, LabelIsReadByNameWithoutAttaching) {
  ScopedName name("label");
  fs_arena* a = nullptr;
  char err[256] = "", buf[FS_ARENA_LABEL_MAX];
  EXPECT_EQ(-ENOENT, fs_arena_label(name.c_str(), buf, sizeof(buf)));
  ASSERT_EQ(0, fs_arena_create(name.c_str(), kCap, &a, err, sizeof(err))) << err;
  EXPECT_EQ(0, fs_arena_label(name.c_str(), buf, sizeof(buf))) << "a label before one was set";
  std::string too_long(FS_ARENA_LABEL_MAX, 'x');
  EXPECT_EQ(-ENAMETOOLONG, fs_arena_set_label(a, too_long.c_str()));
  EXPECT_EQ(-EINVAL, fs_arena_set_label(a, nullptr));
  ASSERT_EQ(0, fs_arena_set_label(a, "/run/user/1000/fabsim"));
  EXPECT_EQ(-EBUSY, fs_arena_set_label(a, "/elsewhere"));
  ASSERT_EQ(21, fs_arena_label(name.c_str(), buf, sizeof(buf)));
  EXPECT_STREQ("/run/user/1000/fabsim", buf);
  char small[8];
  EXPECT_EQ(-ENAMETOOLONG, fs_arena_label(name.c_str(), small, sizeof(small)));
  fs_arena_detach(a);
  // The segment outlives every mapping: its label too.
  ASSERT_EQ(21, fs_arena_label(name.c_str(), buf, sizeof(buf)));
  fs_arena* priv = fs_arena_private(kCap);
  ASSERT_NE(priv, nullptr);
  EXPECT_EQ(-EINVAL, fs_arena_set_label(priv, "/x"));
  fs_arena_detach(priv);
}

// What is not an arena is told apart from an arena with no label.
TEST(SegmentTest, LabelOfSomethingElseIsAProtocolError) {
  ScopedName name("notarena");
  int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(0, ftruncate(fd, 1 << 20));
  uint64_t junk = 0x1122334455667788ULL;
  ASSERT_EQ((ssize_t)sizeof(junk), pwrite(fd, &junk, sizeof(junk), 0));
  close(fd);
  char buf[64];
  EXPECT_EQ(-EPROTO, fs_arena_label(name.c_str(), buf, sizeof(buf)));
  EXPECT_EQ(-EINVAL, fs_arena_label("no-slash", buf, sizeof(buf)));
}

}  // namespace
