// RMA (fi_rma(3)): fi_write/writev/writemsg/writedata/inject_write/
// inject_writedata, fi_read/readv/readmsg; remote CQ data at the target;
// completion flags; completion levels. Protection errors are in
// rma_error_test.cc.
#include <cstring>

#include "harness.h"

namespace conf {
namespace {

class RmaTest : public RdmTest, public ::testing::WithParamInterface<Layout> {
      protected:
	void SetUp() override
	{
		Options o;
		o.caps = FI_MSG | FI_RMA;
		o.layout = GetParam();
		Open(o);
		if (!w.info)
			return;
		// Node 1 exposes a 4 KiB region for reading and writing.
		target = w.NewBuf(1, 4096, kLocalAccess | kRemoteAccess);
	}
	Buf* target = nullptr;
};

INSTANTIATE_TEST_SUITE_P(Layouts, RmaTest,
			 ::testing::Values(Layout::kTwoDomains, Layout::kOneDomain),
			 [](const ::testing::TestParamInfo<Layout>& i) {
				 return std::string(LayoutName(i.param));
			 });

TEST_P(RmaTest, WriteThenReadBack)
{
	Node& a = w.node(0);
	Buf* src = w.NewBuf(0, 256);
	Buf* dst = w.NewBuf(0, 256);
	src->Fill(1);
	fi_context2 *wc = w.Ctx(), *rc = w.Ctx();
	CONF_POST(fi_write(a.ep, src->p, 256, src->desc, a.peer(1),
			   target->raddr(64), target->key, wc));
	Completion c = w.Expect(a.tx, wc);
	CONF_EXPECT_KIND(c, FI_RMA | FI_WRITE);
	CONF_POST(fi_read(a.ep, dst->p, 256, dst->desc, a.peer(1),
			  target->raddr(64), target->key, rc));
	c = w.Expect(a.tx, rc);
	CONF_EXPECT_KIND(c, FI_RMA | FI_READ);
	EXPECT_TRUE(dst->Check(1, 256)) << "read back differs";
	EXPECT_TRUE(target->Check(1, 256, 64)) << "target memory differs";
	EXPECT_EQ(target->p[63], 0) << "wrote before the address";
	EXPECT_EQ(target->p[64 + 256], 0) << "wrote past the length";
	w.Settle();
	EXPECT_TRUE(w.node(1).rx.log.empty())
		<< "an RMA without remote CQ data reported at the target: "
		<< Describe(w.node(1).rx.log[0]);
}

TEST_P(RmaTest, ReadOfTargetData)
{
	Node& a = w.node(0);
	target->Fill(2);
	Buf* dst = w.NewBuf(0, 4096);
	fi_context2* rc = w.Ctx();
	CONF_POST(fi_read(a.ep, dst->p, 4096, dst->desc, a.peer(1),
			  target->raddr(), target->key, rc));
	w.Expect(a.tx, rc);
	EXPECT_TRUE(dst->Check(2, 4096));
}

TEST_P(RmaTest, WritevAndReadvScatterGather)
{
	Node& a = w.node(0);
	size_t n = std::min<size_t>(w.info->tx_attr->iov_limit, 3);
	Buf* src = w.NewBuf(0, 300);
	Buf* dst = w.NewBuf(0, 300);
	src->Fill(3);
	iovec iov[3] = {{src->p, 100}, {src->p + 100, 100}, {src->p + 200, 100}};
	iovec riov[3] = {{dst->p, 100}, {dst->p + 100, 100}, {dst->p + 200, 100}};
	if (n == 1)
		iov[0].iov_len = riov[0].iov_len = 300;
	if (n == 2)
		iov[1].iov_len = riov[1].iov_len = 200;
	void* d[3] = {src->desc, src->desc, src->desc};
	void* rd[3] = {dst->desc, dst->desc, dst->desc};
	fi_context2 *wc = w.Ctx(), *rc = w.Ctx();
	CONF_POST(fi_writev(a.ep, iov, d, n, a.peer(1), target->raddr(1000),
			    target->key, wc));
	w.Expect(a.tx, wc);
	CONF_POST(fi_readv(a.ep, riov, rd, n, a.peer(1), target->raddr(1000),
			   target->key, rc));
	w.Expect(a.tx, rc);
	EXPECT_TRUE(target->Check(3, 300, 1000));
	EXPECT_TRUE(dst->Check(3, 300));
}

// fi_writemsg/fi_readmsg with several remote segments (rma_iov_limit).
TEST_P(RmaTest, WritemsgAndReadmsgWithRemoteSegments)
{
	Node& a = w.node(0);
	size_t n = std::min<size_t>(w.info->tx_attr->rma_iov_limit, 2);
	Buf* src = w.NewBuf(0, 128);
	Buf* dst = w.NewBuf(0, 128);
	src->Fill(4);
	iovec iov = {src->p, 128};
	void* d = src->desc;
	// Two remote segments, 64 B at 0 and 64 B at 2048 (or one of 128 B).
	fi_rma_iov rma[2] = {{target->raddr(0), n == 2 ? 64u : 128u, target->key},
			     {target->raddr(2048), 64, target->key}};
	fi_context2 *wc = w.Ctx(), *rc = w.Ctx();
	fi_msg_rma wm = {&iov, &d, 1, a.peer(1), rma, n, wc, 0};
	CONF_POST(fi_writemsg(a.ep, &wm, FI_COMPLETION));
	w.Expect(a.tx, wc);
	if (n == 2) {
		EXPECT_TRUE(target->Check(4, 64, 0));
		for (size_t i = 0; i < 64; i++)
			EXPECT_EQ(target->p[2048 + i], Pattern(4, 64 + i));
	} else {
		EXPECT_TRUE(target->Check(4, 128, 0));
	}
	iovec riov = {dst->p, 128};
	void* rd = dst->desc;
	fi_msg_rma rm = {&riov, &rd, 1, a.peer(1), rma, n, rc, 0};
	CONF_POST(fi_readmsg(a.ep, &rm, FI_COMPLETION));
	w.Expect(a.tx, rc);
	EXPECT_TRUE(dst->Check(4, 128));
}

uint64_t CqData(World& w, uint64_t v)
{
	size_t n = w.info->domain_attr->cq_data_size;
	return n >= 8 ? v : v & ((1ULL << (8 * n)) - 1);
}

// Under FI_RX_CQ_DATA (fi_getinfo(3)) a write with remote CQ data
// "will consume a receive buffer at the target": posts one on node 1 and
// returns its context, the op_context the target's completion carries
// (fi_cq(3) sets it to NULL only for completions "not associated with a
// posted operation"). NULL, posting nothing, without the mode.
fi_context2* ReceiveForCqData(World& w)
{
	if (!w.rx_cq_data())
		return nullptr;
	Node& b = w.node(1);
	Buf* r = w.NewBuf(1, 64);
	fi_context2* rc = w.Ctx();
	long ret = PostRetry(w, [&] {
		return fi_recv(b.ep, r->p, 64, r->desc, FI_ADDR_UNSPEC, rc);
	});
	EXPECT_EQ(ret, 0) << "fi_recv for FI_RX_CQ_DATA: " << Err(ret);
	return rc;
}

// fi_cq(3): an RMA write with remote CQ data generates a completion at the
// target (FI_REMOTE_CQ_DATA, the data, op_context NULL -- or, under
// FI_RX_CQ_DATA, the receive it consumed).
TEST_P(RmaTest, WritedataNotifiesTheTarget)
{
	if (w.info->domain_attr->cq_data_size == 0)
		GTEST_SKIP() << "cq_data_size is 0";
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* src = w.NewBuf(0, 64);
	src->Fill(5);
	fi_context2* wc = w.Ctx();
	fi_context2* rc = ReceiveForCqData(w);
	uint64_t data = CqData(w, 0xcafe0001);
	CONF_POST(fi_writedata(a.ep, src->p, 64, src->desc, data, a.peer(1),
			       target->raddr(128), target->key, wc));
	w.Expect(a.tx, wc);
	ASSERT_TRUE(w.WaitFor(b.rx, 1));
	Completion c = b.rx.Take();
	ASSERT_FALSE(c.error) << Describe(c);
	EXPECT_TRUE(c.flags & FI_REMOTE_CQ_DATA) << Describe(c);
	EXPECT_EQ(c.data, data);
	EXPECT_EQ(c.op_context, (void*)rc);
	EXPECT_TRUE(target->Check(5, 64, 128))
		<< "the data is visible when the target completion is";
}

TEST_P(RmaTest, WritedataCompletionFlagsAtTarget)
{
	CONF_SKIP_IF_DEVIATION("rma.remote_write_flags");
	if (w.info->domain_attr->cq_data_size == 0)
		GTEST_SKIP() << "cq_data_size is 0";
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* src = w.NewBuf(0, 8);
	ReceiveForCqData(w);
	CONF_POST(fi_writedata(a.ep, src->p, 8, src->desc, 1, a.peer(1),
			       target->raddr(), target->key, w.Ctx()));
	ASSERT_TRUE(w.WaitFor(b.rx, 1));
	Completion c = b.rx.Take();
	// fi_cq(3): "Flags are set for all relevant completions": a remote
	// write carrying data is FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA.
	CONF_EXPECT_KIND(c, FI_RMA | FI_REMOTE_WRITE);
	EXPECT_TRUE(c.flags & FI_REMOTE_CQ_DATA);
}

TEST_P(RmaTest, InjectWriteBufferReusableAtReturn)
{
	size_t n = std::min<size_t>(w.info->tx_attr->inject_size, 32);
	if (n == 0)
		GTEST_SKIP() << "inject_size is 0";
	Node& a = w.node(0);
	Buf* src = w.NewBuf(0, n);
	src->Fill(6);
	CONF_POST(fi_inject_write(a.ep, src->p, n, a.peer(1), target->raddr(512),
				  target->key));
	memset(src->p, 0xee, n);
	Buf* t = target;
	EXPECT_TRUE(w.WaitUntil([&] { return t->Check(6, n, 512); },
				"the injected write to land"));
	w.Settle();
	EXPECT_TRUE(a.tx.log.empty()) << "fi_inject_write generated a completion";
}

TEST_P(RmaTest, InjectWritedataNotifiesTheTarget)
{
	size_t n = std::min<size_t>(w.info->tx_attr->inject_size, 16);
	if (n == 0 || w.info->domain_attr->cq_data_size == 0)
		GTEST_SKIP() << "inject_size or cq_data_size is 0";
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* src = w.NewBuf(0, n);
	src->Fill(7);
	uint64_t data = CqData(w, 0x77);
	fi_context2* rc = ReceiveForCqData(w);
	CONF_POST(fi_inject_writedata(a.ep, src->p, n, data, a.peer(1),
				      target->raddr(), target->key));
	memset(src->p, 0, n);
	ASSERT_TRUE(w.WaitFor(b.rx, 1));
	Completion c = b.rx.Take();
	EXPECT_TRUE(c.flags & FI_REMOTE_CQ_DATA) << Describe(c);
	EXPECT_EQ(c.data, data);
	if (rc) {
		EXPECT_EQ(c.op_context, (void*)rc) << Describe(c);
	}
	EXPECT_TRUE(target->Check(7, n));
	EXPECT_TRUE(a.tx.log.empty());
}

TEST_P(RmaTest, CompletionLevelsOnWritemsg)
{
	Node& a = w.node(0);
	const uint64_t levels[] = {FI_INJECT_COMPLETE, FI_TRANSMIT_COMPLETE,
				   FI_DELIVERY_COMPLETE};
	size_t off = 0;
	for (uint64_t level : levels) {
		SCOPED_TRACE(FlagsStr(level));
		Buf* src = w.NewBuf(0, 64);
		src->Fill((uint8_t)(off + 9));
		iovec iov = {src->p, 64};
		void* d = src->desc;
		fi_rma_iov rma = {target->raddr(off), 64, target->key};
		fi_context2* wc = w.Ctx();
		fi_msg_rma m = {&iov, &d, 1, a.peer(1), &rma, 1, wc, 0};
		CONF_POST(fi_writemsg(a.ep, &m, level | FI_COMPLETION));
		w.Expect(a.tx, wc);
		if (level == FI_DELIVERY_COMPLETE) {
			// Delivery complete: the data is at the target.
			EXPECT_TRUE(target->Check((uint8_t)(off + 9), 64, off));
		}
		off += 64;
	}
}

TEST_P(RmaTest, LargeWriteAndRead)
{
	size_t n = std::min<size_t>(1 << 20, w.info->ep_attr->max_msg_size);
	Node& a = w.node(0);
	Buf* big = w.NewBuf(1, n, kLocalAccess | kRemoteAccess);
	Buf* src = w.NewBuf(0, n);
	Buf* dst = w.NewBuf(0, n);
	src->Fill(10);
	fi_context2 *wc = w.Ctx(), *rc = w.Ctx();
	CONF_POST(fi_write(a.ep, src->p, n, src->desc, a.peer(1), big->raddr(),
			   big->key, wc));
	w.Expect(a.tx, wc);
	CONF_POST(fi_read(a.ep, dst->p, n, dst->desc, a.peer(1), big->raddr(),
			  big->key, rc));
	w.Expect(a.tx, rc);
	EXPECT_TRUE(dst->Check(10, n));
}

// Both sides write into each other's memory at the same time.
TEST_P(RmaTest, BothSidesWrite)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* t0 = w.NewBuf(0, 256, kLocalAccess | kRemoteAccess);
	Buf* s0 = w.NewBuf(0, 256);
	Buf* s1 = w.NewBuf(1, 256);
	s0->Fill(11);
	s1->Fill(12);
	fi_context2 *c0 = w.Ctx(), *c1 = w.Ctx();
	CONF_POST(fi_write(a.ep, s0->p, 256, s0->desc, a.peer(1),
			   target->raddr(), target->key, c0));
	CONF_POST(fi_write(b.ep, s1->p, 256, s1->desc, b.peer(0), t0->raddr(),
			   t0->key, c1));
	w.Expect(a.tx, c0);
	w.Expect(b.tx, c1);
	EXPECT_TRUE(target->Check(11, 256));
	EXPECT_TRUE(t0->Check(12, 256));
}

}  // namespace
}  // namespace conf
