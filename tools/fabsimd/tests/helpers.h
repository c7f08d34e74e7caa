// SPDX-License-Identifier: BSD-2-Clause
// fabsimd tests: a fresh runtime directory per test, waits with deadlines.
#ifndef FABSIMD_TESTS_HELPERS_H
#define FABSIMD_TESTS_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "fabsimd/fabsimd.h"

namespace fabsimd_test {

inline long long now_ms()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

inline bool wait_until(const std::function<bool()> &done, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	while (!done()) {
		if (now_ms() >= deadline)
			return false;
		usleep(2000);
	}
	return true;
}

// The process ended (a zombie counts: it is not ours to reap).
inline bool gone(pid_t pid)
{
	if (kill(pid, 0) && errno == ESRCH)
		return true;
	std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
	std::string line;
	if (!std::getline(stat, line))
		return true;
	size_t paren = line.rfind(')');
	return paren != std::string::npos && paren + 2 < line.size() &&
	       (line[paren + 2] == 'Z' || line[paren + 2] == 'X');
}

inline bool exists(const std::string &path)
{
	struct stat st;
	return lstat(path.c_str(), &st) == 0;
}

inline std::string slurp(const std::string &path)
{
	std::ifstream in(path);
	std::stringstream s;
	s << in.rdbuf();
	return s.str();
}

inline size_t count_of(const std::string &text, const std::string &what)
{
	size_t n = 0;
	for (size_t at = text.find(what); at != std::string::npos;
	     at = text.find(what, at + 1))
		n++;
	return n;
}

// Waits for a notice of `kind`, skipping others; false on timeout.
inline bool wait_notice(fabsimd_session *s, fabsimd_notice_kind kind,
			fabsimd_notice *out, int timeout_ms = 5000)
{
	long long deadline = now_ms() + timeout_ms;
	for (;;) {
		int rc = fabsimd_next_notice(s, out);
		if (rc == 0 && out->kind == kind)
			return true;
		if (rc == 0)
			continue;
		if (rc != -EAGAIN)
			return false;
		long long left = deadline - now_ms();
		if (left <= 0)
			return false;
		struct pollfd pfd = { fabsimd_session_fd(s), POLLIN, 0 };
		poll(&pfd, 1, (int)left);
	}
}

// Each test gets its own runtime directory and stops what it started.
class FabricTest : public ::testing::Test {
protected:
	std::string dir;
	std::string tag; // random, to make fabric names unique
	std::set<std::string> fabrics;

	void SetUp() override
	{
		const char *base = getenv("TEST_TMPDIR");
		std::string tmpl = std::string(base && *base ? base : "/tmp") +
				   "/fabsimd-XXXXXX";
		ASSERT_NE(mkdtemp(&tmpl[0]), nullptr) << tmpl << ": "
						       << strerror(errno);
		dir = tmpl + "/run";
		unsigned char r[5] = {};
		FILE *u = fopen("/dev/urandom", "rb");
		ASSERT_NE(u, nullptr);
		ASSERT_EQ(fread(r, 1, sizeof(r), u), sizeof(r));
		fclose(u);
		char hex[16];
		snprintf(hex, sizeof(hex), "%02x%02x%02x%02x%02x", r[0], r[1],
			 r[2], r[3], r[4]);
		tag = hex;
		setenv("FABSIM_RUNTIME_DIR", dir.c_str(), 1);
		setenv("FABSIM_IDLE_TIMEOUT_MS", "3000", 1);
		unsetenv("FI_SIM_FABRIC");
	}

	void TearDown() override
	{
		for (const std::string &f : fabrics)
			fabsimd_stop(f.c_str(), nullptr, nullptr, 0);
	}

	// A fabric name of this test process: shared-memory names are per
	// user and fabric, not per runtime directory, and tests run in
	// parallel (in PID namespaces: pids repeat).
	const char *fabric(const char *name)
	{
		std::string own = std::string(name) + "-" + tag;
		if (strchr(name, '-'))
			own = name; // already one of ours
		return fabrics.insert(own).first->c_str();
	}

	std::string file(const std::string &fabric, const char *ext)
	{
		return dir + "/" + fabric + ext;
	}

	fabsimd_session *attach(const char *f, uint32_t node,
				const char *prog = "test")
	{
		fabsimd_member_info me = { node, prog };
		fabsimd_session *s = nullptr;
		char err[256] = "";
		int rc = fabsimd_attach(fabric(f), &me, &s, err, sizeof(err));
		EXPECT_EQ(rc, 0) << err;
		return s;
	}
};

} // namespace fabsimd_test

#endif
