// Helpers shared by the arena tests: unique segment names that are always unlinked, and
// running arena_child (a separate program) with a time limit.
#ifndef ARENA_TESTS_ARENA_TEST_UTIL_H
#define ARENA_TESTS_ARENA_TEST_UTIL_H

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

extern "C" {
#include "arena/arena.h"
}

extern char** environ;

namespace arena_test {

// A segment name unique to this process and call; unlinked when it goes out of scope.
class ScopedName {
 public:
  explicit ScopedName(const char* what) {
    static int counter;
    name_ = "/fabsim-arena-test-" + std::to_string(getpid()) + "-" + what + "-" +
            std::to_string(counter++);
    fs_arena_unlink(name_.c_str());
  }
  ~ScopedName() { fs_arena_unlink(name_.c_str()); }
  const char* c_str() const { return name_.c_str(); }

 private:
  std::string name_;
};

// arena_child's path: in the test's runfiles under Bazel, else next to this binary.
inline std::string ChildPath() {
  const char* srcdir = getenv("TEST_SRCDIR");
  const char* ws = getenv("TEST_WORKSPACE");
  if (srcdir && ws) {
    std::string p = std::string(srcdir) + "/" + ws + "/arena/arena_child";
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return "arena_child";
  self[n] = '\0';
  std::string dir(self);
  return dir.substr(0, dir.rfind('/')) + "/arena_child";
}

struct ChildResult {
  int status = -1;  // exit status, or 128 + signal, or -1 if it had to be killed
  std::string out;
};

// Runs arena_child with args, collects its stdout, kills it after timeout_s seconds.
inline ChildResult RunChild(const std::vector<std::string>& args, int timeout_s = 10) {
  ChildResult r;
  std::string path = ChildPath();
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(path.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  int fds[2];
  if (pipe(fds) != 0) return r;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  pid_t pid;
  int rc = posix_spawn(&pid, path.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    r.out = "posix_spawn " + path + ": " + strerror(rc);
    return r;
  }
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) r.out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int st = 0;
  for (int waited_ms = 0;; waited_ms += 5) {
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) break;
    if (waited_ms > timeout_s * 1000) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      return r;
    }
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, nullptr);
  }
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

// Waits for a forked child (bounded); its exit status, 128 + signal, or -1 if killed.
inline int WaitChild(pid_t pid, int timeout_s = 10) {
  int st = 0;
  for (int waited_ms = 0;; waited_ms += 2) {
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) break;
    if (waited_ms > timeout_s * 1000) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      return -1;
    }
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, nullptr);
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

}  // namespace arena_test

#endif
