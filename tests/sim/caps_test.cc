// What an endpoint was opened for is what it does (fi_getinfo(3): FI_SEND,
// FI_RECV "indicate that the user requires an endpoint capable of" sending,
// receiving; with neither given, both are), and an operation whose
// completion would have nowhere to go is refused rather than lost. What
// fi_getinfo would not have offered opens nothing.
#include <gtest/gtest.h>

#include <cstring>

#include <rdma/fi_eq.h>

#include "tests/sim/scenario.h"

namespace {

struct OneWay {
	fid_ep *ep = nullptr;
	fid_cq *cq = nullptr;
	fid_av *av = nullptr;
};

// An RDM endpoint on node 0's domain with `caps`, its one CQ bound for
// `bind` (FI_TRANSMIT and/or FI_RECV), enabled.
OneWay open_one_way(Scenario &s, uint64_t caps, uint64_t bind)
{
	OneWay o;
	fi_info *info = sim_info(FI_EP_RDM, caps);
	EXPECT_NE(info, nullptr);
	if (!info)
		return o;
	info->caps = caps;
	fi_cq_attr ca = {};
	ca.format = FI_CQ_FORMAT_TAGGED;
	fi_av_attr aa = {};
	aa.type = FI_AV_TABLE;
	fid_domain *dom = s.node(0).domain;
	EXPECT_EQ(fi_endpoint(dom, info, &o.ep, nullptr), 0);
	EXPECT_EQ(fi_cq_open(dom, &ca, &o.cq, nullptr), 0);
	EXPECT_EQ(fi_av_open(dom, &aa, &o.av, nullptr), 0);
	fi_freeinfo(info);
	if (!o.ep || !o.cq || !o.av)
		return o;
	EXPECT_EQ(fi_ep_bind(o.ep, &o.av->fid, 0), 0);
	EXPECT_EQ(fi_ep_bind(o.ep, &o.cq->fid, bind), 0);
	EXPECT_EQ(fi_enable(o.ep), 0);
	return o;
}

void close_one_way(OneWay &o)
{
	EXPECT_EQ(fi_close(&o.ep->fid), 0);
	EXPECT_EQ(fi_close(&o.cq->fid), 0);
	EXPECT_EQ(fi_close(&o.av->fid), 0);
}

// What a receive (or a send) gets on an endpoint of `caps` whose CQ is
// bound for `bind`.
ssize_t post_on(uint64_t caps, uint64_t bind, bool receive)
{
	Scenario s(1, {});
	EXPECT_EQ(s.failure, "");
	OneWay o = open_one_way(s, caps, bind);
	if (!o.ep)
		return -FI_EOTHER;
	char buf[16] = "hey";
	fi_context2 ctx;
	ssize_t r = receive ? fi_recv(o.ep, buf, sizeof(buf), nullptr,
				      FI_ADDR_UNSPEC, &ctx)
			    : fi_send(o.ep, buf, sizeof(buf), nullptr, 0, &ctx);
	close_one_way(o);
	return r;
}

TEST(Caps, ASendOnlyEndpointRefusesReceives)
{
	EXPECT_EQ(post_on(FI_MSG | FI_SEND, FI_TRANSMIT, true), -FI_EOPNOTSUPP);
}

TEST(Caps, AReceiveOnlyEndpointRefusesSends)
{
	EXPECT_EQ(post_on(FI_MSG | FI_RECV, FI_RECV, false), -FI_EOPNOTSUPP);
}

// Neither FI_SEND nor FI_RECV asked: both are, and a receive with no CQ
// bound for it would complete into nothing: refused.
TEST(Caps, AReceiveWithNoCqForItIsRefused)
{
	EXPECT_EQ(post_on(FI_MSG, FI_TRANSMIT, true), -FI_ENOCQ);
}

// One node, and an RDM info of the sim provider to open things with.
class CapsOpen : public ::testing::Test {
protected:
	Scenario s{ 1, {} };
	fi_info *info = sim_info(FI_EP_RDM, FI_MSG);

	void SetUp() override
	{
		ASSERT_EQ(s.failure, "");
		ASSERT_NE(info, nullptr);
	}
	void TearDown() override { fi_freeinfo(info); }
};

// An info changed after fi_getinfo into what it would have refused (a
// value no enum has) or not offered (caps, contexts) opens nothing.
TEST_F(CapsOpen, WhatFiGetinfoWouldNotOfferOpensNothing)
{
	fid_ep *ep = nullptr;
	info->caps |= FI_COLLECTIVE;
	EXPECT_EQ(fi_endpoint(s.node(0).domain, info, &ep, nullptr),
		  -FI_ENODATA);
	info->caps &= ~FI_COLLECTIVE;
	info->ep_attr->tx_ctx_cnt = 4;
	EXPECT_EQ(fi_endpoint(s.node(0).domain, info, &ep, nullptr),
		  -FI_ENODATA);
	EXPECT_EQ(ep, nullptr);
	info->ep_attr->tx_ctx_cnt = 1;
	info->domain_attr->threading = (fi_threading)99;
	fid_domain *dom = nullptr;
	EXPECT_EQ(fi_domain(s.fabric(), info, &dom, nullptr), -FI_EINVAL);
	EXPECT_EQ(dom, nullptr);
}

// An EQ belongs to its fabric: an endpoint of another hears nothing there.
TEST_F(CapsOpen, AnEqOfAnotherFabricIsNotBound)
{
	fid_fabric *other = nullptr;
	ASSERT_EQ(fi_fabric(info->fabric_attr, &other, nullptr), 0);
	fi_eq_attr ea = {};
	ea.wait_obj = FI_WAIT_NONE;
	fid_eq *theirs = nullptr, *ours = nullptr;
	ASSERT_EQ(fi_eq_open(other, &ea, &theirs, nullptr), 0);
	ASSERT_EQ(fi_eq_open(s.fabric(), &ea, &ours, nullptr), 0);
	fid_ep *ep = nullptr;
	ASSERT_EQ(fi_endpoint(s.node(0).domain, info, &ep, nullptr), 0);
	EXPECT_EQ(fi_ep_bind(ep, &theirs->fid, 0), -FI_EINVAL);
	EXPECT_EQ(fi_ep_bind(ep, &ours->fid, 0), 0);
	EXPECT_EQ(fi_close(&ep->fid), 0);
	EXPECT_EQ(fi_close(&ours->fid), 0);
	EXPECT_EQ(fi_close(&theirs->fid), 0);
	EXPECT_EQ(fi_close(&other->fid), 0);
}

} // namespace
