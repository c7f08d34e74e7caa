// fi_poll(3) on the sim provider: a poll set progresses the simulation and
// names the CQs with something to read (the conformance suite checks the
// details against Debian's providers; here, that sim has poll sets at all).
#include <gtest/gtest.h>

#include <rdma/fi_domain.h>

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

} // namespace
