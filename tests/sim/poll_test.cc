// fi_poll(3) on the sim provider: a poll set progresses the simulation and
// names the CQs with something to read (the conformance suite checks the
// details against Debian's providers; here, that sim has poll sets at all).
#include <gtest/gtest.h>

#include <poll.h>
#include <semaphore.h>

#include <chrono>
#include <thread>

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

// fi_poll(3)'s fi_trywait-then-poll(2) in one process: the main thread
// blocks in poll() on its receive CQ's descriptor; another thread sends
// and goes to wait on a semaphore. Nothing of the program is in the fabric
// then, and nothing moved the clock: the poll waited for ever.
TEST(Poll, ABlockedPollWakesForAMessageAnotherThreadSent)
{
	fi_info *hints = fi_allocinfo(), *info = nullptr;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG;
	hints->fabric_attr->prov_name = strdup("sim");
	ASSERT_EQ(fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints,
			     &info), 0);
	fi_freeinfo(hints);
	fid_fabric *fab;
	fid_domain *dom;
	fid_av *av;
	fid_cq *txcq, *rxcq;
	fid_ep *tx, *rx;
	ASSERT_EQ(fi_fabric(info->fabric_attr, &fab, nullptr), 0);
	ASSERT_EQ(fi_domain(fab, info, &dom, nullptr), 0);
	fi_av_attr aa = {};
	aa.type = FI_AV_TABLE;
	ASSERT_EQ(fi_av_open(dom, &aa, &av, nullptr), 0);
	fi_cq_attr ca = {};
	ca.format = FI_CQ_FORMAT_CONTEXT;
	ca.wait_obj = FI_WAIT_FD;
	ASSERT_EQ(fi_cq_open(dom, &ca, &txcq, nullptr), 0);
	ASSERT_EQ(fi_cq_open(dom, &ca, &rxcq, nullptr), 0);
	for (auto [ep, cq] : {std::pair{&tx, txcq}, std::pair{&rx, rxcq}}) {
		ASSERT_EQ(fi_endpoint(dom, info, ep, nullptr), 0);
		ASSERT_EQ(fi_ep_bind(*ep, &av->fid, 0), 0);
		ASSERT_EQ(fi_ep_bind(*ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
		ASSERT_EQ(fi_enable(*ep), 0);
	}
	char name[64];
	size_t len = sizeof(name);
	fi_addr_t dst;
	ASSERT_EQ(fi_getname(&rx->fid, name, &len), 0);
	ASSERT_EQ(fi_av_insert(av, name, 1, &dst, 0, nullptr), 1);
	int fd = -1;
	ASSERT_EQ(fi_control(&rxcq->fid, FI_GETWAIT, &fd), 0);
	static char buf[8];
	static const char msg[8] = "hi";
	ASSERT_EQ(fi_recv(rx, buf, sizeof(buf), nullptr, FI_ADDR_UNSPEC,
			  nullptr), 0);

	sem_t go, done;
	sem_init(&go, 0, 0);
	sem_init(&done, 0, 0);
	std::thread worker([&] {
		fi_cq_entry e;
		fi_cq_read(txcq, &e, 1); // it has used the fabric before
		sem_wait(&go);
		EXPECT_EQ(fi_inject(tx, msg, sizeof(msg), dst), 0);
		sem_wait(&done); // away from the fabric, for another party
	});
	fid *fids[1] = { &rxcq->fid };
	ASSERT_EQ(fi_trywait(fab, fids, 1), 0) << "nothing to read yet";
	sem_post(&go);
	pollfd p = { fd, POLLIN, 0 };
	// Bounded for the test's sake; the program this stands for waits
	// with no timeout.
	int r = poll(&p, 1, 20000);
	EXPECT_EQ(r, 1) << "poll() never woke";
	fi_cq_entry e;
	EXPECT_EQ(fi_cq_read(rxcq, &e, 1), 1) << "readable, with its entry";
	EXPECT_STREQ(buf, "hi");
	sem_post(&done);
	worker.join();

	EXPECT_EQ(fi_close(&tx->fid), 0);
	EXPECT_EQ(fi_close(&rx->fid), 0);
	EXPECT_EQ(fi_close(&txcq->fid), 0);
	EXPECT_EQ(fi_close(&rxcq->fid), 0);
	EXPECT_EQ(fi_close(&av->fid), 0);
	EXPECT_EQ(fi_close(&dom->fid), 0);
	EXPECT_EQ(fi_close(&fab->fid), 0);
	fi_freeinfo(info);
}

// Two threads of one process, each blocked in poll() on its own receive
// CQ after fi_trywait; a third sends to both and waits on a semaphore. The
// first answered descriptor disarmed them all, and the second poll() was
// never answered.
TEST(Poll, EachBlockedPollIsAnswered)
{
	fi_info *hints = fi_allocinfo(), *info = nullptr;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG;
	hints->fabric_attr->prov_name = strdup("sim");
	ASSERT_EQ(fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints,
			     &info), 0);
	fi_freeinfo(hints);
	fid_fabric *fab;
	fid_domain *dom;
	fid_av *av;
	fid_cq *cqs[3];
	fid_ep *eps[3]; // a sender, two receivers
	ASSERT_EQ(fi_fabric(info->fabric_attr, &fab, nullptr), 0);
	ASSERT_EQ(fi_domain(fab, info, &dom, nullptr), 0);
	fi_av_attr aa = {};
	aa.type = FI_AV_TABLE;
	ASSERT_EQ(fi_av_open(dom, &aa, &av, nullptr), 0);
	fi_addr_t dst[3];
	for (int i = 0; i < 3; i++) {
		fi_cq_attr ca = {};
		ca.format = FI_CQ_FORMAT_CONTEXT;
		ca.wait_obj = FI_WAIT_FD;
		ASSERT_EQ(fi_cq_open(dom, &ca, &cqs[i], nullptr), 0);
		ASSERT_EQ(fi_endpoint(dom, info, &eps[i], nullptr), 0);
		ASSERT_EQ(fi_ep_bind(eps[i], &av->fid, 0), 0);
		ASSERT_EQ(fi_ep_bind(eps[i], &cqs[i]->fid,
				     FI_TRANSMIT | FI_RECV), 0);
		ASSERT_EQ(fi_enable(eps[i]), 0);
		char name[64];
		size_t len = sizeof(name);
		ASSERT_EQ(fi_getname(&eps[i]->fid, name, &len), 0);
		ASSERT_EQ(fi_av_insert(av, name, 1, &dst[i], 0, nullptr), 1);
	}
	static char bufs[3][8];
	static const char msg[8] = "hi";
	for (int i = 1; i < 3; i++)
		ASSERT_EQ(fi_recv(eps[i], bufs[i], sizeof(bufs[i]), nullptr,
				  FI_ADDR_UNSPEC, nullptr), 0);

	sem_t armed, done;
	sem_init(&armed, 0, 0);
	sem_init(&done, 0, 0);
	int woke[3] = {};
	auto receiver = [&](int i) {
		int fd = -1;
		ASSERT_EQ(fi_control(&cqs[i]->fid, FI_GETWAIT, &fd), 0);
		fid *fids[1] = { &cqs[i]->fid };
		ASSERT_EQ(fi_trywait(fab, fids, 1), 0);
		sem_post(&armed);
		pollfd p = { fd, POLLIN, 0 };
		woke[i] = poll(&p, 1, 20000); // bounded for the test's sake
	};
	std::thread r1(receiver, 1), r2(receiver, 2);
	sem_wait(&armed);
	sem_wait(&armed);
	std::thread sender([&] {
		EXPECT_EQ(fi_inject(eps[0], msg, sizeof(msg), dst[1]), 0);
		EXPECT_EQ(fi_inject(eps[0], msg, sizeof(msg), dst[2]), 0);
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
		EXPECT_EQ(fi_cq_read(cqs[i], &e, 1), 1) << i;
	}
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(fi_close(&eps[i]->fid), 0);
		EXPECT_EQ(fi_close(&cqs[i]->fid), 0);
	}
	EXPECT_EQ(fi_close(&av->fid), 0);
	EXPECT_EQ(fi_close(&dom->fid), 0);
	EXPECT_EQ(fi_close(&fab->fid), 0);
	fi_freeinfo(info);
}

} // namespace
