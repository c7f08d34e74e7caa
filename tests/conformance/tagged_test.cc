// Tagged messages (fi_tagged(3)): fi_tsend/tsendv/tsendmsg/tsenddata/
// tinject/tinjectdata, fi_trecv/trecvv/trecvmsg, tag matching with ignore
// bits, unexpected messages, FI_PEEK, FI_CLAIM, FI_DISCARD.
#include <cstring>

#include "harness.h"

namespace conf {
namespace {

class TaggedTest : public RdmTest, public ::testing::WithParamInterface<Layout> {
      protected:
	void SetUp() override
	{
		Options o;
		o.caps |= FI_TAGGED;
		o.layout = GetParam();
		Open(o);
	}
	// Sends n bytes of pattern `seed` with `tag` from node 0 to node 1.
	void Send(uint64_t tag, uint8_t seed, size_t n = 32)
	{
		Buf* s = w.NewBuf(0, n);
		s->Fill(seed);
		Node& a = w.node(0);
		CONF_POST(fi_tsend(a.ep, s->p, n, s->desc, a.peer(1), tag,
				   w.Ctx()));
	}
	// FI_PEEK (| extra) for tag at node 1, repeated while it reports
	// FI_ENOMSG (the message may still be in flight). Returns the
	// completion of the first peek that found the message.
	Completion PeekUntilFound(uint64_t tag, uint64_t extra, fi_context2* ctx)
	{
		Node& b = w.node(1);
		fi_msg_tagged m = {nullptr, nullptr, 0, FI_ADDR_UNSPEC,
				   tag, 0, ctx, 0};
		for (int i = 0; i < 100000; i++) {
			long r = PostRetry(w, [&] {
				return fi_trecvmsg(b.ep, &m, FI_PEEK | extra);
			});
			EXPECT_EQ(r, 0) << "fi_trecvmsg(FI_PEEK): " << Err(r);
			if (r)
				break;
			::testing::AssertionResult ok = w.WaitFor(b.rx, 1);
			EXPECT_TRUE(ok);
			if (!ok)
				break;
			Completion c = b.rx.Take();
			if (!c.error)
				return c;
			EXPECT_EQ(c.err, FI_ENOMSG) << Describe(c);
			if (c.err != FI_ENOMSG)
				return c;
		}
		ADD_FAILURE() << "FI_PEEK never found tag 0x" << std::hex << tag;
		Completion none;
		none.error = true;
		return none;
	}
};

INSTANTIATE_TEST_SUITE_P(Layouts, TaggedTest,
			 ::testing::Values(Layout::kTwoDomains, Layout::kOneDomain),
			 [](const ::testing::TestParamInfo<Layout>& i) {
				 return std::string(LayoutName(i.param));
			 });

TEST_P(TaggedTest, TsendTrecvExactTag)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* s = w.NewBuf(0, 48);
	Buf* r = w.NewBuf(1, 48);
	s->Fill(1);
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	CONF_POST(fi_trecv(b.ep, r->p, 48, r->desc, FI_ADDR_UNSPEC, 0x1234, 0,
			   rc));
	CONF_POST(fi_tsend(a.ep, s->p, 48, s->desc, a.peer(1), 0x1234, sc));
	Completion t = w.Expect(a.tx, sc);
	CONF_EXPECT_TAGGED_KIND(t, FI_SEND | FI_TAGGED);
	Completion c = w.Expect(b.rx, rc);
	CONF_EXPECT_TAGGED_KIND(c, FI_RECV | FI_TAGGED);
	EXPECT_EQ(c.tag, 0x1234u);
	EXPECT_EQ(c.len, 48u);
	EXPECT_TRUE(r->Check(1, 48));
}

TEST_P(TaggedTest, IgnoreBitsWidenTheMatch)
{
	Node& b = w.node(1);
	Buf* r = w.NewBuf(1, 32);
	fi_context2* rc = w.Ctx();
	CONF_POST(fi_trecv(b.ep, r->p, 32, r->desc, FI_ADDR_UNSPEC, 0x1200,
			   0xff, rc));
	Send(0x12ab, 2);
	Completion c = w.Expect(b.rx, rc);
	EXPECT_EQ(c.tag, 0x12abu) << "the completion carries the sent tag";
	EXPECT_TRUE(r->Check(2, 32));
}

TEST_P(TaggedTest, NonMatchingTagWaitsForItsReceive)
{
	Node& b = w.node(1);
	Buf* ra = w.NewBuf(1, 32);
	Buf* rb = w.NewBuf(1, 32);
	fi_context2 *ca = w.Ctx(), *cb = w.Ctx();
	CONF_POST(fi_trecv(b.ep, ra->p, 32, ra->desc, FI_ADDR_UNSPEC, 0xa, 0,
			   ca));
	Send(0xb, 3);
	Send(0xa, 4);
	Completion c = w.Expect(b.rx, ca);
	EXPECT_EQ(c.tag, 0xau);
	EXPECT_TRUE(ra->Check(4, 32));
	CONF_POST(fi_trecv(b.ep, rb->p, 32, rb->desc, FI_ADDR_UNSPEC, 0xb, 0,
			   cb));
	c = w.Expect(b.rx, cb);
	EXPECT_EQ(c.tag, 0xbu);
	EXPECT_TRUE(rb->Check(3, 32));
}

TEST_P(TaggedTest, UnexpectedTaggedMessage)
{
	Node& b = w.node(1);
	Send(0x77, 5, 100);
	ASSERT_TRUE(w.WaitFor(w.node(0).tx, 1));
	w.Settle();
	Buf* r = w.NewBuf(1, 100);
	fi_context2* rc = w.Ctx();
	CONF_POST(fi_trecv(b.ep, r->p, 100, r->desc, FI_ADDR_UNSPEC, 0x77, 0,
			   rc));
	Completion c = w.Expect(b.rx, rc);
	EXPECT_EQ(c.tag, 0x77u);
	EXPECT_EQ(c.len, 100u);
	EXPECT_TRUE(r->Check(5, 100));
}

TEST_P(TaggedTest, TaggedAndUntaggedQueuesAreSeparate)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* s = w.NewBuf(0, 16);
	s->Fill(6);
	CONF_POST(fi_send(a.ep, s->p, 16, s->desc, a.peer(1), w.Ctx()));
	Send(0x99, 7, 16);
	Buf* rt = w.NewBuf(1, 16);
	Buf* rm = w.NewBuf(1, 16);
	fi_context2 *ct = w.Ctx(), *cm = w.Ctx();
	CONF_POST(fi_trecv(b.ep, rt->p, 16, rt->desc, FI_ADDR_UNSPEC, 0x99, 0,
			   ct));
	Completion c = w.Expect(b.rx, ct);
	CONF_EXPECT_TAGGED_KIND(c, FI_RECV | FI_TAGGED);
	EXPECT_TRUE(rt->Check(7, 16));
	CONF_POST(fi_recv(b.ep, rm->p, 16, rm->desc, FI_ADDR_UNSPEC, cm));
	c = w.Expect(b.rx, cm);
	CONF_EXPECT_KIND(c, FI_RECV | FI_MSG);
	EXPECT_TRUE(rm->Check(6, 16));
}

TEST_P(TaggedTest, TsendvTrecvv)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	size_t tx_n = std::min<size_t>(w.info->tx_attr->iov_limit, 2);
	size_t rx_n = std::min<size_t>(w.info->rx_attr->iov_limit, 2);
	Buf* s = w.NewBuf(0, 64);
	Buf* r = w.NewBuf(1, 64);
	s->Fill(8);
	iovec siov[2] = {{s->p, tx_n == 2 ? 20u : 64u}, {s->p + 20, 44}};
	iovec riov[2] = {{r->p, rx_n == 2 ? 50u : 64u}, {r->p + 50, 14}};
	void* sd[2] = {s->desc, s->desc};
	void* rd[2] = {r->desc, r->desc};
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	CONF_POST(fi_trecvv(b.ep, riov, rd, rx_n, FI_ADDR_UNSPEC, 5, 0, rc));
	CONF_POST(fi_tsendv(a.ep, siov, sd, tx_n, a.peer(1), 5, sc));
	w.Expect(a.tx, sc);
	Completion c = w.Expect(b.rx, rc);
	EXPECT_EQ(c.len, 64u);
	EXPECT_EQ(c.tag, 5u);
	EXPECT_TRUE(r->Check(8, 64));
}

TEST_P(TaggedTest, TsendmsgTrecvmsgWithData)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* s = w.NewBuf(0, 24);
	Buf* r = w.NewBuf(1, 24);
	s->Fill(9);
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	iovec siov = {s->p, 24}, riov = {r->p, 24};
	void *sd = s->desc, *rd = r->desc;
	bool data = w.info->domain_attr->cq_data_size > 0;
	fi_msg_tagged rm = {&riov, &rd, 1, FI_ADDR_UNSPEC, 0x4242, 0, rc, 0};
	fi_msg_tagged sm = {&siov, &sd, 1, a.peer(1), 0x4242, 0, sc, 0x2468};
	CONF_POST(fi_trecvmsg(b.ep, &rm, FI_COMPLETION));
	CONF_POST(fi_tsendmsg(a.ep, &sm,
			      FI_COMPLETION | (data ? FI_REMOTE_CQ_DATA : 0)));
	w.Expect(a.tx, sc);
	Completion c = w.Expect(b.rx, rc);
	EXPECT_EQ(c.tag, 0x4242u);
	EXPECT_TRUE(r->Check(9, 24));
	if (data) {
		EXPECT_TRUE(c.flags & FI_REMOTE_CQ_DATA) << Describe(c);
		EXPECT_EQ(c.data, 0x2468u);
	}
}

TEST_P(TaggedTest, TsenddataCarriesData)
{
	if (w.info->domain_attr->cq_data_size == 0)
		GTEST_SKIP() << "cq_data_size is 0";
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* s = w.NewBuf(0, 8);
	Buf* r = w.NewBuf(1, 8);
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	CONF_POST(fi_trecv(b.ep, r->p, 8, r->desc, FI_ADDR_UNSPEC, 3, 0, rc));
	CONF_POST(fi_tsenddata(a.ep, s->p, 8, s->desc, 0xfeed, a.peer(1), 3,
			       sc));
	w.Expect(a.tx, sc);
	Completion c = w.Expect(b.rx, rc);
	EXPECT_TRUE(c.flags & FI_REMOTE_CQ_DATA) << Describe(c);
	EXPECT_EQ(c.data, 0xfeedu);
	EXPECT_EQ(c.tag, 3u);
}

TEST_P(TaggedTest, TinjectAndTinjectdata)
{
	size_t n = std::min<size_t>(w.info->tx_attr->inject_size, 16);
	if (n == 0)
		GTEST_SKIP() << "inject_size is 0";
	Node& a = w.node(0);
	Node& b = w.node(1);
	bool data = w.info->domain_attr->cq_data_size > 0;
	Buf* s = w.NewBuf(0, n);
	Buf* r1 = w.NewBuf(1, n);
	Buf* r2 = w.NewBuf(1, n);
	fi_context2 *c1 = w.Ctx(), *c2 = w.Ctx();
	CONF_POST(fi_trecv(b.ep, r1->p, n, r1->desc, FI_ADDR_UNSPEC, 10, 0, c1));
	CONF_POST(fi_trecv(b.ep, r2->p, n, r2->desc, FI_ADDR_UNSPEC, 11, 0, c2));
	s->Fill(10);
	CONF_POST(fi_tinject(a.ep, s->p, n, a.peer(1), 10));
	s->Fill(11);
	if (data)
		CONF_POST(fi_tinjectdata(a.ep, s->p, n, 0x77, a.peer(1), 11));
	else
		CONF_POST(fi_tinject(a.ep, s->p, n, a.peer(1), 11));
	memset(s->p, 0, n);
	Completion c = w.Expect(b.rx, c1);
	EXPECT_EQ(c.tag, 10u);
	EXPECT_TRUE(r1->Check(10, n));
	c = w.Expect(b.rx, c2);
	EXPECT_EQ(c.tag, 11u);
	EXPECT_TRUE(r2->Check(11, n));
	if (data) {
		EXPECT_TRUE(c.flags & FI_REMOTE_CQ_DATA) << Describe(c);
		EXPECT_EQ(c.data, 0x77u);
	}
	w.Settle();
	EXPECT_TRUE(a.tx.log.empty()) << "an inject generated a completion";
}

TEST_P(TaggedTest, TruncatedTaggedReceive)
{
	Node& b = w.node(1);
	Buf* r = w.NewBuf(1, 8);
	fi_context2* rc = w.Ctx();
	CONF_POST(fi_trecv(b.ep, r->p, 8, r->desc, FI_ADDR_UNSPEC, 1, 0, rc));
	Send(1, 12, 32);
	Completion c = w.ExpectError(b.rx);
	EXPECT_EQ(c.err, FI_ETRUNC) << Describe(c);
	EXPECT_EQ(c.op_context, rc);
	EXPECT_EQ(c.tag, 1u) << Describe(c);
}

// ---- FI_PEEK, FI_CLAIM, FI_DISCARD ---------------------------------------------

TEST_P(TaggedTest, PeekWithoutMessageReportsENOMSG)
{
	Node& b = w.node(1);
	fi_context2* ctx = w.Ctx();
	fi_msg_tagged m = {nullptr, nullptr, 0, FI_ADDR_UNSPEC, 0x5151, 0,
			   ctx, 0};
	CONF_POST(fi_trecvmsg(b.ep, &m, FI_PEEK));
	Completion c = w.ExpectError(b.rx);
	EXPECT_EQ(c.err, FI_ENOMSG) << Describe(c);
	EXPECT_EQ(c.op_context, ctx);
}

TEST_P(TaggedTest, PeekFindsMessageWithoutConsumingIt)
{
	Node& b = w.node(1);
	Send(0x600d, 13, 40);
	Completion p = PeekUntilFound(0x600d, 0, w.Ctx());
	ASSERT_FALSE(p.error);
	EXPECT_TRUE(p.flags & FI_TAGGED) << Describe(p);
	EXPECT_EQ(p.tag, 0x600du);
	EXPECT_EQ(p.len, 40u) << "the peek reports the message's length";
	Buf* r = w.NewBuf(1, 40);
	fi_context2* rc = w.Ctx();
	CONF_POST(fi_trecv(b.ep, r->p, 40, r->desc, FI_ADDR_UNSPEC, 0x600d, 0,
			   rc));
	Completion c = w.Expect(b.rx, rc);
	EXPECT_EQ(c.len, 40u);
	EXPECT_TRUE(r->Check(13, 40)) << "the peeked message was consumed";
}

TEST_P(TaggedTest, PeekClaimThenClaimReceive)
{
	Node& b = w.node(1);
	Send(0xc1a, 14, 24);
	fi_context2* claim = w.Ctx();
	Completion p = PeekUntilFound(0xc1a, FI_CLAIM, claim);
	ASSERT_FALSE(p.error);
	EXPECT_EQ(p.op_context, claim);
	// A second message with the same tag: an ordinary receive must get
	// it, not the claimed one.
	Send(0xc1a, 15, 24);
	Buf* r2 = w.NewBuf(1, 24);
	fi_context2* rc2 = w.Ctx();
	CONF_POST(fi_trecv(b.ep, r2->p, 24, r2->desc, FI_ADDR_UNSPEC, 0xc1a, 0,
			   rc2));
	w.Expect(b.rx, rc2);
	EXPECT_TRUE(r2->Check(15, 24)) << "a claimed message was matched by "
					  "an ordinary receive";
	Buf* r1 = w.NewBuf(1, 24);
	iovec iov = {r1->p, 24};
	void* d = r1->desc;
	fi_msg_tagged m = {&iov, &d, 1, FI_ADDR_UNSPEC, 0xc1a, 0, claim, 0};
	CONF_POST(fi_trecvmsg(b.ep, &m, FI_CLAIM));
	Completion c = w.Expect(b.rx, claim);
	EXPECT_EQ(c.len, 24u);
	EXPECT_EQ(c.tag, 0xc1au);
	EXPECT_TRUE(r1->Check(14, 24));
}

TEST_P(TaggedTest, PeekDiscardDropsTheMessage)
{
	Node& b = w.node(1);
	Send(0xd15c, 16, 24);
	Completion p = PeekUntilFound(0xd15c, FI_DISCARD, w.Ctx());
	ASSERT_FALSE(p.error);
	fi_context2* ctx = w.Ctx();
	fi_msg_tagged m = {nullptr, nullptr, 0, FI_ADDR_UNSPEC, 0xd15c, 0, ctx,
			   0};
	CONF_POST(fi_trecvmsg(b.ep, &m, FI_PEEK));
	Completion c = w.ExpectError(b.rx);
	EXPECT_EQ(c.err, FI_ENOMSG) << "the discarded message is still there: "
				    << Describe(c);
}

TEST_P(TaggedTest, ClaimDiscardDropsAClaimedMessage)
{
	Node& b = w.node(1);
	Send(0xcd, 17, 24);
	fi_context2* claim = w.Ctx();
	Completion p = PeekUntilFound(0xcd, FI_CLAIM, claim);
	ASSERT_FALSE(p.error);
	fi_msg_tagged m = {nullptr, nullptr, 0, FI_ADDR_UNSPEC, 0xcd, 0, claim,
			   0};
	CONF_POST(fi_trecvmsg(b.ep, &m, FI_CLAIM | FI_DISCARD));
	Completion c = w.Expect(b.rx, claim);
	EXPECT_FALSE(c.error);
	fi_context2* ctx = w.Ctx();
	fi_msg_tagged pm = {nullptr, nullptr, 0, FI_ADDR_UNSPEC, 0xcd, 0, ctx,
			    0};
	CONF_POST(fi_trecvmsg(b.ep, &pm, FI_PEEK));
	c = w.ExpectError(b.rx);
	EXPECT_EQ(c.err, FI_ENOMSG) << Describe(c);
}

// ---- Directed tagged receive -----------------------------------------------------

class TaggedDirectedTest : public RdmTest {};

TEST_F(TaggedDirectedTest, DirectedTaggedReceive)
{
	CONF_SKIP_IF_MSG("directed receive selects a source address, and a "
			 "connected endpoint has only one source");
	Options o;
	o.caps = FI_TAGGED | FI_DIRECTED_RECV;
	o.nodes = 3;
	CONF_OPEN(o);
	Node& rx = w.node(0);
	Buf* r = w.NewBuf(0, 8);
	fi_context2* rc = w.Ctx();
	CONF_POST(fi_trecv(rx.ep, r->p, 8, r->desc, rx.peer(2), 9, 0, rc));
	for (int j = 1; j <= 2; j++) {
		Buf* s = w.NewBuf(j, 8);
		s->Fill(j);
		CONF_POST(fi_tsend(w.node(j).ep, s->p, 8, s->desc,
				   w.node(j).peer(0), 9, w.Ctx()));
		ASSERT_TRUE(w.WaitFor(w.node(j).tx, 1));
	}
	w.Expect(rx.rx, rc);
	EXPECT_TRUE(r->Check(2, 8)) << "matched a sender it was not directed at";
}

}  // namespace
}  // namespace conf
