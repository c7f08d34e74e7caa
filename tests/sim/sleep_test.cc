// A thread that sleeps between two posts keeps its place in virtual time,
// whichever way it sleeps: the clock must not run on while it is away, or
// what the program computes would depend on how long the kernel let it
// sleep. (A thread blocked with no time limit on another party — a socket,
// a pipe — leaves time after milliseconds instead: nic_kernel_test.)
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <poll.h>
#include <sys/select.h>
#include <thread>
#include <time.h>
#include <unistd.h>

#include "tests/sim/scenario.h"

namespace {

struct Way {
	const char *name;
	std::function<void()> sleep_100ms;
};

class Sleep : public ::testing::TestWithParam<int> {};

const Way kWays[] = {
	{"nanosleep",
	 [] {
		 struct timespec ts = {0, 100000000};
		 nanosleep(&ts, nullptr);
	 }},
	{"poll with a timeout", [] { poll(nullptr, 0, 100); }},
	{"select with a timeout",
	 [] {
		 struct timeval tv = {0, 100000};
		 select(0, nullptr, nullptr, nullptr, &tv);
	 }},
};

// Node 1 has a receive posted; a thread of node 0, known to the fabric (it
// has posted a receive of its own), sleeps as told, then sends `text` to
// node 1 and does `after` (if any).
struct LateSend {
	Scenario s{2, {{"FI_SIM_PRESET", "roce-100g"}}};
	char abuf[64] = {}, bbuf[64] = {}, spare[64] = {};
	fi_context2 c[3];
	std::thread sender;

	~LateSend()
	{
		if (sender.joinable())
			sender.join();
	}

	void Start(const char *text, std::function<void()> sleep,
		   std::function<void()> after = {})
	{
		strncpy(abuf, text, sizeof(abuf) - 1);
		fid_mr *ma = s.reg(0, abuf, sizeof(abuf), FI_SEND | FI_RECV);
		fid_mr *mb = s.reg(1, bbuf, sizeof(bbuf), FI_SEND | FI_RECV);
		fid_mr *ms = s.reg(0, spare, sizeof(spare), FI_RECV);
		std::atomic<bool> entered{false};

		ASSERT_EQ(fi_recv(s.node(1).ep, bbuf, sizeof(bbuf),
				  fi_mr_desc(mb), FI_ADDR_UNSPEC, &c[0]),
			  0);
		sender = std::thread([this, ma, ms, sleep, after, &entered] {
			auto &a = s.node(0);

			// Known to the fabric from here on.
			EXPECT_EQ(fi_recv(a.ep, spare, sizeof(spare),
					  fi_mr_desc(ms), FI_ADDR_UNSPEC, &c[1]),
				  0);
			entered = true; // the last use of Start's own state
			sleep();
			EXPECT_EQ(fi_send(a.ep, abuf, 8, fi_mr_desc(ma),
					  a.peers[1], &c[2]),
				  0);
			if (after)
				after();
		});
		while (!entered)
			std::this_thread::yield();
	}
};

TEST_P(Sleep, ASleeperHoldsTheClockUntilItPosts)
{
	const Way &way = kWays[GetParam()];
	SCOPED_TRACE(way.name);
	LateSend p;
	ASSERT_EQ(p.s.failure, "");
	ASSERT_NO_FATAL_FAILURE(p.Start("ping", way.sleep_100ms, [&p] {
		fi_cq_tagged_entry e;

		EXPECT_EQ(fi_cq_sread(p.s.node(0).cq, &e, 1, nullptr, 1000), 1);
	}));
	fi_cq_tagged_entry e;
	uint64_t before = p.s.now();
	// 500 ms of virtual time: the message takes microseconds once sent.
	EXPECT_EQ(fi_cq_sread(p.s.node(1).cq, &e, 1, nullptr, 500), 1)
		<< "the clock ran on while the sender slept";
	EXPECT_LT(p.s.now() - before, 1000000u) << "more than 1 ms went by";
	p.sender.join();
}

INSTANTIATE_TEST_SUITE_P(Ways, Sleep, ::testing::Range(0, 3));

// fi_cq(3): a negative timeout waits for ever. A thread that posts only
// after a long sleep (out of virtual time by then) still ends a wait with no
// timeout, however long nothing else happens meanwhile.
TEST(SleepLong, AWaitWithNoTimeoutWaitsForAThreadAwayForSeconds)
{
	LateSend p;
	ASSERT_EQ(p.s.failure, "");
	ASSERT_NO_FATAL_FAILURE(p.Start("late", [] {
		std::this_thread::sleep_for(std::chrono::milliseconds(1500));
	}));
	fi_cq_tagged_entry e;
	EXPECT_EQ(fi_cq_sread(p.s.node(1).cq, &e, 1, nullptr, -1), 1);
	EXPECT_STREQ(p.bbuf, "late");
	p.sender.join();
	// The send's own completion, before the scenario closes its buffer.
	EXPECT_EQ(fi_cq_sread(p.s.node(0).cq, &e, 1, nullptr, 1000), 1);
	EXPECT_EQ(e.op_context, &p.c[2]);
}

// A thread that naps in a loop for something outside the fabric (fabtests'
// fi_unexpected_msg retries its out-of-band connect() every 100 us, 100
// times, while its peer needs the clock to move before it listens) does not
// hold the clock as a sleeper does: it is taken out of time within
// milliseconds, and a send completion another thread waits for arrives.
TEST(Nap, AThreadNappingInALoopLetsTheClockMove)
{
	Scenario s{2, {{"FI_SIM_PRESET", "roce-100g"}}};
	ASSERT_EQ(s.failure, "");
	char abuf[64] = "nap", bbuf[64] = {}, spare[64] = {};
	fi_context2 c[3];
	fid_mr *ma = s.reg(0, abuf, sizeof(abuf), FI_SEND);
	fid_mr *mb = s.reg(1, bbuf, sizeof(bbuf), FI_RECV);
	fid_mr *ms = s.reg(0, spare, sizeof(spare), FI_RECV);
	std::atomic<bool> entered{false}, done{false};
	int naps = 0;

	ASSERT_EQ(fi_recv(s.node(1).ep, bbuf, sizeof(bbuf), fi_mr_desc(mb),
			  FI_ADDR_UNSPEC, &c[0]),
		  0);
	std::thread napper([&] {
		// Known to the fabric from here on, then away from it.
		EXPECT_EQ(fi_recv(s.node(0).ep, spare, sizeof(spare),
				  fi_mr_desc(ms), FI_ADDR_UNSPEC, &c[1]),
			  0);
		entered = true;
		while (!done) {
			usleep(100);
			naps++;
		}
	});
	while (!entered)
		std::this_thread::yield();
	fi_cq_tagged_entry e;
	ASSERT_EQ(fi_send(s.node(0).ep, abuf, 8, fi_mr_desc(ma),
			  s.node(0).peers[1], &c[2]),
		  0);
	// The send completes once acknowledged: the clock must move.
	EXPECT_EQ(fi_cq_sread(s.node(0).cq, &e, 1, nullptr, -1), 1);
	done = true;
	napper.join();
	EXPECT_EQ(e.op_context, &c[2]);
	// Held as a sleeper, it would have napped for NIC_ABSENT_MS (250 ms,
	// some 1500 naps); a nap loop is let go after 2 ms of silence.
	EXPECT_LT(naps, 300) << "the napping thread held the clock";
	EXPECT_EQ(fi_cq_sread(s.node(1).cq, &e, 1, nullptr, 1000), 1);
	EXPECT_STREQ(bbuf, "nap");
}

} // namespace
