// Threads of one program on the sim provider: a thread that retries posts
// refused with -FI_EAGAIN (fi_msg(3): progress, then try again) while
// another thread reads the CQ. Retrying is waiting for the fabric: the
// clock moves, the reader gets the completions, and the retries get in.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "tests/sim/scenario.h"

namespace {

TEST(Threads, ASenderRetryingRefusedPostsLetsAnotherThreadReadTheCq)
{
	Scenario s(2, {{"FI_SIM_PRESET", "roce-100g"}});
	ASSERT_EQ(s.failure, "");
	fi_info *info = nullptr;
	ASSERT_EQ(fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, nullptr,
			     &info), 0);
	// More than the send queue takes at once: it must fill.
	const long n = (long)info->tx_attr->size + 256;
	fi_freeinfo(info);
	static char src[8], dst[8];
	fid_mr *sm = s.reg(0, src, sizeof(src), FI_WRITE);
	fid_mr *dm = s.reg(1, dst, sizeof(dst), FI_REMOTE_WRITE);
	uint64_t key = fi_mr_key(dm);
	std::atomic<long> refused{0}, posted{0};
	std::atomic<bool> stop{false};

	std::thread sender([&] {
		auto &a = s.node(0);
		for (long i = 0; i < n && !stop; i++) {
			ssize_t r;
			while ((r = fi_write(a.ep, src, sizeof(src),
					     fi_mr_desc(sm), a.peers[1],
					     (uint64_t)(uintptr_t)dst, key,
					     nullptr)) == -FI_EAGAIN &&
			       !stop)
				refused++;
			if (r)
				break;
			posted++;
		}
	});
	long done = 0;
	auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
	fi_cq_tagged_entry e[64];
	while (done < n && std::chrono::steady_clock::now() < give_up) {
		ssize_t got = fi_cq_read(s.node(0).cq, e, 64);
		if (got > 0)
			done += got;
		else
			ASSERT_EQ(got, -FI_EAGAIN);
	}
	stop = true;
	sender.join();
	EXPECT_EQ(posted.load(), n);
	EXPECT_EQ(done, n) << "the reader saw " << done << " of " << n
			   << " writes complete";
	EXPECT_GT(refused.load(), 0) << "the send queue never filled";
}

// glibc gives a thread started after another was joined that one's
// pthread_t. Each round's worker computes (20 ms of real time, no virtual
// time) before it sends; the main thread waits with a timeout far longer
// than the message takes. A worker that inherited the ended one's place
// in the scheduler was taken for that one, ended: the clock jumped to the
// timeout at once from the second round on.
TEST(Threads, AWorkerStartedAfterAnotherEndedHoldsTheClockWhileItComputes)
{
	Scenario s(2, {{"FI_SIM_PRESET", "roce-100g"}});
	ASSERT_EQ(s.failure, "");
	static char msg[8] = "hi", buf[8];
	fid_mr *mr = s.reg(1, buf, sizeof(buf), FI_RECV);

	for (int round = 0; round < 4; round++) {
		ASSERT_EQ(fi_recv(s.node(1).ep, buf, sizeof(buf), s.desc(mr),
				  FI_ADDR_UNSPEC, nullptr), 0);
		std::thread worker([&] {
			auto until = std::chrono::steady_clock::now() +
				     std::chrono::milliseconds(20);
			while (std::chrono::steady_clock::now() < until)
				;
			EXPECT_EQ(fi_inject(s.node(0).ep, msg, sizeof(msg),
					    s.node(0).peers[1]), 0);
		});
		fi_cq_tagged_entry e;
		ssize_t got = fi_cq_sread(s.node(1).cq, &e, 1, nullptr, 5000);
		worker.join();
		EXPECT_EQ(got, 1) << "round " << round
				  << ": the wait timed out before the worker sent";
		if (got != 1)
			ASSERT_EQ(fi_cq_sread(s.node(1).cq, &e, 1, nullptr, 5000), 1);
	}
}

} // namespace
