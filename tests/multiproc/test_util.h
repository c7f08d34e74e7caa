// SPDX-License-Identifier: BSD-2-Clause
// What the multi-process tests share: where their peer programs are, a
// fresh directory for a run, starting the processes and collecting what
// they print.
#ifndef FABSIM_TESTS_MULTIPROC_TEST_UTIL_H
#define FABSIM_TESTS_MULTIPROC_TEST_UTIL_H

#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace multiproc {

// A program of this package in the test's runfiles.
inline std::string PeerPath(const std::string& name)
{
	const char* src = getenv("TEST_SRCDIR");
	return std::string(src ? src : ".") + "/fabsim/tests/multiproc/" + name;
}

// A new directory under the test's temporary directory.
inline std::string TempDir(const std::string& prefix)
{
	const char* t = getenv("TEST_TMPDIR");
	std::string tmpl = std::string(t ? t : "/tmp") + "/" + prefix + "XXXXXX";
	std::vector<char> buf(tmpl.begin(), tmpl.end());
	buf.push_back('\0');
	EXPECT_NE(mkdtemp(buf.data()), nullptr);
	return buf.data();
}

// A process of a run: what it printed (standard output and error) and how
// it ended.
struct Child {
	pid_t pid = -1;
	int out = -1;
	std::string text;
	int status = -1;
};

// Forks a child whose standard output and error go to a pipe the parent
// reads; in the child, `exec` sets up and execs (it must not return).
inline Child Start(const std::function<void()>& exec)
{
	Child c;
	int fds[2];
	EXPECT_EQ(pipe(fds), 0);
	c.pid = fork();
	if (c.pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		exec();
		_exit(127);
	}
	close(fds[1]);
	c.out = fds[0];
	return c;
}

// Reads what the children print until they all close their output, then
// reaps them; kills them all after `limit_s` seconds (a test failure).
inline void Finish(std::vector<Child>& children, int limit_s)
{
	auto start = std::chrono::steady_clock::now();
	size_t open_fds = children.size();
	while (open_fds > 0) {
		std::vector<pollfd> p;
		std::vector<Child*> who;
		for (auto& c : children)
			if (c.out >= 0) {
				p.push_back({c.out, POLLIN, 0});
				who.push_back(&c);
			}
		poll(p.data(), p.size(), 1000);
		for (size_t k = 0; k < p.size(); k++) {
			if (!(p[k].revents & (POLLIN | POLLHUP)))
				continue;
			char buf[4096];
			ssize_t r = read(p[k].fd, buf, sizeof(buf));
			if (r > 0) {
				who[k]->text.append(buf, r);
			} else {
				close(p[k].fd);
				who[k]->out = -1;
				open_fds--;
			}
		}
		if (std::chrono::steady_clock::now() - start >
		    std::chrono::seconds(limit_s)) {
			ADD_FAILURE() << "the processes did not finish in "
				      << limit_s << " s";
			for (auto& c : children)
				kill(c.pid, SIGKILL);
			break;
		}
	}
	for (auto& c : children) {
		waitpid(c.pid, &c.status, 0);
		if (c.out >= 0)
			close(c.out);
		c.out = -1;
	}
}

}  // namespace multiproc

#endif
