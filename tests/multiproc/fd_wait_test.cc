// A process blocked in poll() on its CQ's wait descriptor (FI_WAIT_FD) on a
// shared simulated fabric is woken by the messages another process sends:
// tests/multiproc/fd_wait_peer, a plain libfabric program, as the two sides
// of a ping-pong whose receiver blocks in poll() for every message.
#include <gtest/gtest.h>

#include "tests/multiproc/test_util.h"

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Side = multiproc::Child;

struct PingPongRun {
	std::vector<Side> sides;
	std::string all;
};

// Starts the two sides on a fresh shared fabric, joined by a socket pair;
// kills them after `limit_s` seconds.
PingPongRun PingPong(int rounds, size_t size, int limit_s)
{
	static int serial;
	std::string dir = multiproc::TempDir("fd");
	std::string fabric = "fdw" + std::to_string(getpid()) + "x" +
			     std::to_string(serial++);
	int link[2];
	PingPongRun run;

	EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, link), 0);
	for (int i = 0; i < 2; i++)
		run.sides.push_back(multiproc::Start([&] {
			// Its end of the socket pair, kept across exec.
			int sock = dup(link[i]);
			close(link[0]);
			close(link[1]);
			setenv("FI_PROVIDER", "sim", 1);
			setenv("FI_SIM_FABRIC", fabric.c_str(), 1);
			setenv("FI_SIM_NODE", std::to_string(i).c_str(), 1);
			setenv("FI_SIM_NODES", "2", 1);
			setenv("FABSIM_RUNTIME_DIR", dir.c_str(), 1);
			std::string path = multiproc::PeerPath("fd_wait_peer");
			execl(path.c_str(), path.c_str(),
			      std::to_string(sock).c_str(),
			      std::to_string(rounds).c_str(),
			      std::to_string(size).c_str(), (char *)nullptr);
		}));
	close(link[0]);
	close(link[1]);
	multiproc::Finish(run.sides, limit_s);
	for (auto &s : run.sides)
		run.all += s.text;
	return run;
}

// The line "node I: ok, R rounds, B blocked, T ns", or "".
std::string OkLine(const Side &s, int node)
{
	std::string want = "node " + std::to_string(node) + ": ok, ";
	size_t at = s.text.find(want);
	if (at == std::string::npos)
		return "";
	return s.text.substr(at, s.text.find('\n', at) - at);
}

// T of the line ("" without it).
std::string EndTime(const Side &s, int node)
{
	std::string line = OkLine(s, node);
	size_t at = line.rfind(", ");
	return at == std::string::npos ? "" : line.substr(at + 2);
}

// B of the line, or -1 without it.
long Blocked(const Side &s, int node)
{
	std::string line = OkLine(s, node);
	size_t at = line.find(" rounds, ");
	return at == std::string::npos ? -1 : atol(line.c_str() + at + 9);
}

void ExpectOk(const PingPongRun &run, int rounds)
{
	ASSERT_EQ(run.sides.size(), 2u);
	for (int i = 0; i < 2; i++)
		EXPECT_TRUE(WIFEXITED(run.sides[i].status) &&
			    WEXITSTATUS(run.sides[i].status) == 0)
			<< "node " << i << " failed:\n" << run.all;
	EXPECT_GE(Blocked(run.sides[0], 0), 0) << run.all;
	// Every message found the receiver blocked in poll(), and woke it.
	EXPECT_GE(Blocked(run.sides[1], 1), rounds) << run.all;
}

TEST(FdWait, AReceiverBlockedInPollIsWokenByTheOtherProcessesMessages)
{
	const int rounds = 100;
	PingPongRun first = PingPong(rounds, 1000, 60);
	ExpectOk(first, rounds);
	if (HasFailure())
		return;
	// The waits on descriptors change nothing in virtual time: a second
	// run ends at the same instants.
	PingPongRun second = PingPong(rounds, 1000, 60);
	ExpectOk(second, rounds);
	for (int i = 0; i < 2; i++) {
		EXPECT_NE(EndTime(first.sides[i], i), "");
		EXPECT_EQ(EndTime(first.sides[i], i), EndTime(second.sides[i], i));
	}
}

}  // namespace
