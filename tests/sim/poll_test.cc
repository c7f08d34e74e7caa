// fi_poll(3) on the sim provider: a poll set progresses the simulation and
// names the CQs with something to read (the conformance suite checks the
// details against Debian's providers; here, that sim has poll sets at all).
#include <gtest/gtest.h>

#include <poll.h>
#include <semaphore.h>

#include <chrono>
#include <thread>
#include <vector>

#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include "tests/sim/scenario.h"

namespace {

TEST(Poll, APollSetFindsTheCompletionItMadeHappen)
{
	Scenario s(2, {});
	ASSERT_EQ(s.failure, "");
	auto &a = s.node(0), &b = s.node(1);
	char abuf[8] = "poll", bbuf[8] = {};
	fid_mr *ma = s.reg(0, abuf, sizeof(abuf), FI_SEND);
	fid_mr *mb = s.reg(1, bbuf, sizeof(bbuf), FI_RECV);
	fi_poll_attr attr{};
	fid_poll *ps = nullptr;
	ASSERT_EQ(fi_poll_open(b.domain, &attr, &ps), 0);
	ASSERT_EQ(fi_poll_add(ps, &b.cq->fid, 0), 0);
	EXPECT_EQ(fi_poll_add(ps, &b.cq->fid, 0), -FI_EALREADY);
	void *ctx[2];
	EXPECT_EQ(fi_poll(ps, ctx, 2), 0);
	fi_context2 rc, sc;
	ASSERT_EQ(fi_recv(b.ep, bbuf, sizeof(bbuf), fi_mr_desc(mb),
			  FI_ADDR_UNSPEC, &rc), 0);
	ASSERT_EQ(fi_send(a.ep, abuf, sizeof(abuf), fi_mr_desc(ma), a.peers[1],
			  &sc), 0);
	// Only the poll set moves time here: the completion comes from it.
	int n = 0;
	for (int i = 0; i < 100000 && !n; i++)
		n = fi_poll(ps, ctx, 2);
	ASSERT_EQ(n, 1);
	EXPECT_EQ(ctx[0], b.cq->fid.context);
	EXPECT_STREQ(bbuf, "poll");
	EXPECT_EQ(fi_close(&b.cq->fid), -FI_EBUSY);
	EXPECT_EQ(fi_poll_del(ps, &b.cq->fid, 0), 0);
	EXPECT_EQ(fi_poll_del(ps, &b.cq->fid, 0), -FI_EINVAL);
	EXPECT_EQ(fi_close(&ps->fid), 0);
	std::vector<Completion> done;
	EXPECT_TRUE(s.collect(2, &done));
}

// One domain, n endpoints each with its own receive and send CQ, opened
// with FI_WAIT_FD: what a program blocked in poll() on a CQ uses.
class FdEndpoints {
public:
	explicit FdEndpoints(int n) : eps(n), cqs(n), addrs(n)
	{
		fi_info *hints = fi_allocinfo();
		hints->ep_attr->type = FI_EP_RDM;
		hints->caps = FI_MSG;
		hints->fabric_attr->prov_name = strdup("sim");
		ok = !fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints,
				 &info) &&
		     !fi_fabric(info->fabric_attr, &fab, nullptr) &&
		     !fi_domain(fab, info, &dom, nullptr);
		fi_freeinfo(hints);
		fi_av_attr aa = {};
		aa.type = FI_AV_TABLE;
		ok = ok && !fi_av_open(dom, &aa, &av, nullptr);
		for (int i = 0; ok && i < n; i++) {
			fi_cq_attr ca = {};
			ca.format = FI_CQ_FORMAT_CONTEXT;
			ca.wait_obj = FI_WAIT_FD;
			char name[64];
			size_t len = sizeof(name);
			ok = !fi_cq_open(dom, &ca, &cqs[i], nullptr) &&
			     !fi_endpoint(dom, info, &eps[i], nullptr) &&
			     !fi_ep_bind(eps[i], &av->fid, 0) &&
			     !fi_ep_bind(eps[i], &cqs[i]->fid,
					 FI_TRANSMIT | FI_RECV) &&
			     !fi_enable(eps[i]) &&
			     !fi_getname(&eps[i]->fid, name, &len) &&
			     fi_av_insert(av, name, 1, &addrs[i], 0, nullptr) == 1;
		}
	}
	~FdEndpoints()
	{
		for (size_t i = 0; i < eps.size(); i++) {
			if (eps[i])
				EXPECT_EQ(fi_close(&eps[i]->fid), 0);
			if (cqs[i])
				EXPECT_EQ(fi_close(&cqs[i]->fid), 0);
		}
		for (fid *f : { av ? &av->fid : nullptr,
				dom ? &dom->fid : nullptr,
				fab ? &fab->fid : nullptr })
			if (f)
				EXPECT_EQ(fi_close(f), 0);
		fi_freeinfo(info);
	}
	int fd(int i)
	{
		int fd = -1;
		EXPECT_EQ(fi_control(&cqs[i]->fid, FI_GETWAIT, &fd), 0);
		return fd;
	}

	bool ok = false;
	fi_info *info = nullptr;
	fid_fabric *fab = nullptr;
	fid_domain *dom = nullptr;
	fid_av *av = nullptr;
	std::vector<fid_ep *> eps;
	std::vector<fid_cq *> cqs;
	std::vector<fi_addr_t> addrs;
};

static const char kMsg[8] = "hi";

// fi_poll(3)'s fi_trywait-then-poll(2) in one process: the main thread
// blocks in poll() on its receive CQ's descriptor; another thread sends
// and goes to wait on a semaphore. Nothing of the program is in the fabric
// then, and nothing moved the clock: the poll waited for ever.
TEST(Poll, ABlockedPollWakesForAMessageAnotherThreadSent)
{
	FdEndpoints f(2); // 0 sends, 1 receives
	ASSERT_TRUE(f.ok);
	static char buf[8];
	ASSERT_EQ(fi_recv(f.eps[1], buf, sizeof(buf), nullptr, FI_ADDR_UNSPEC,
			  nullptr), 0);
	sem_t go, done;
	sem_init(&go, 0, 0);
	sem_init(&done, 0, 0);
	std::thread worker([&] {
		fi_cq_entry e;
		fi_cq_read(f.cqs[0], &e, 1); // it has used the fabric before
		sem_wait(&go);
		EXPECT_EQ(fi_inject(f.eps[0], kMsg, sizeof(kMsg), f.addrs[1]), 0);
		sem_wait(&done); // away from the fabric, for another party
	});
	fid *fids[1] = { &f.cqs[1]->fid };
	ASSERT_EQ(fi_trywait(f.fab, fids, 1), 0) << "nothing to read yet";
	sem_post(&go);
	pollfd p = { f.fd(1), POLLIN, 0 };
	// Bounded for the test's sake; the program this stands for waits
	// with no timeout.
	EXPECT_EQ(poll(&p, 1, 20000), 1) << "poll() never woke";
	fi_cq_entry e;
	EXPECT_EQ(fi_cq_read(f.cqs[1], &e, 1), 1) << "readable, with its entry";
	EXPECT_STREQ(buf, "hi");
	sem_post(&done);
	worker.join();
}

// Two threads of one process, each blocked in poll() on its own receive
// CQ after fi_trywait; a third sends to both and waits on a semaphore. The
// first answered descriptor disarmed them all, and the second poll() was
// never answered.
TEST(Poll, EachBlockedPollIsAnswered)
{
	FdEndpoints f(3); // 0 sends, 1 and 2 receive
	ASSERT_TRUE(f.ok);
	static char bufs[3][8];
	for (int i = 1; i < 3; i++)
		ASSERT_EQ(fi_recv(f.eps[i], bufs[i], sizeof(bufs[i]), nullptr,
				  FI_ADDR_UNSPEC, nullptr), 0);
	sem_t armed, done;
	sem_init(&armed, 0, 0);
	sem_init(&done, 0, 0);
	int woke[3] = {};
	auto receiver = [&](int i) {
		fid *fids[1] = { &f.cqs[i]->fid };
		pollfd p = { f.fd(i), POLLIN, 0 };
		ASSERT_EQ(fi_trywait(f.fab, fids, 1), 0);
		sem_post(&armed);
		woke[i] = poll(&p, 1, 20000); // bounded for the test's sake
	};
	std::thread r1(receiver, 1), r2(receiver, 2);
	sem_wait(&armed);
	sem_wait(&armed);
	std::thread sender([&] {
		EXPECT_EQ(fi_inject(f.eps[0], kMsg, sizeof(kMsg), f.addrs[1]), 0);
		EXPECT_EQ(fi_inject(f.eps[0], kMsg, sizeof(kMsg), f.addrs[2]), 0);
		sem_wait(&done); // away from the fabric
	});
	r1.join();
	r2.join();
	EXPECT_EQ(woke[1], 1);
	EXPECT_EQ(woke[2], 1);
	sem_post(&done);
	sender.join();
	for (int i = 1; i < 3; i++) {
		fi_cq_entry e;
		EXPECT_EQ(fi_cq_read(f.cqs[i], &e, 1), 1) << i;
	}
}

} // namespace
