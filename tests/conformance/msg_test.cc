// Untagged messages: fi_send/sendv/sendmsg/senddata/inject/injectdata and
// fi_recv/recvv/recvmsg (fi_msg(3)), completion flags (fi_cq(3)),
// truncation, unexpected messages, ordering, sizes, completion levels.
#include <cstring>

#include "harness.h"

namespace conf {
namespace {

class MsgTest : public RdmTest, public ::testing::WithParamInterface<Layout> {
      protected:
	void SetUp() override
	{
		Options o;
		o.layout = GetParam();
		Open(o);
	}
};

INSTANTIATE_TEST_SUITE_P(Layouts, MsgTest,
			 ::testing::Values(Layout::kTwoDomains, Layout::kOneDomain),
			 [](const ::testing::TestParamInfo<Layout>& i) {
				 return std::string(LayoutName(i.param));
			 });

TEST_P(MsgTest, SendRecv)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* s = w.NewBuf(0, 64);
	Buf* r = w.NewBuf(1, 64);
	s->Fill(1);
	fi_context2* rc = w.Ctx();
	fi_context2* sc = w.Ctx();
	CONF_POST(fi_recv(b.ep, r->p, 64, r->desc, FI_ADDR_UNSPEC, rc));
	CONF_POST(fi_send(a.ep, s->p, 64, s->desc, a.peer(1), sc));
	Completion t = w.Expect(a.tx, sc);
	CONF_EXPECT_KIND(t, FI_SEND | FI_MSG);
	Completion c = w.Expect(b.rx, rc);
	CONF_EXPECT_KIND(c, FI_RECV | FI_MSG);
	EXPECT_EQ(c.len, 64u);
	EXPECT_EQ(c.flags & FI_REMOTE_CQ_DATA, 0u);
	EXPECT_TRUE(r->Check(1, 64));
}

TEST_P(MsgTest, BothDirections)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* sa = w.NewBuf(0, 32);
	Buf* ra = w.NewBuf(0, 32);
	Buf* sb = w.NewBuf(1, 32);
	Buf* rb = w.NewBuf(1, 32);
	sa->Fill(2);
	sb->Fill(3);
	fi_context2 *c1 = w.Ctx(), *c2 = w.Ctx(), *c3 = w.Ctx(), *c4 = w.Ctx();
	CONF_POST(fi_recv(a.ep, ra->p, 32, ra->desc, FI_ADDR_UNSPEC, c1));
	CONF_POST(fi_recv(b.ep, rb->p, 32, rb->desc, FI_ADDR_UNSPEC, c2));
	CONF_POST(fi_send(a.ep, sa->p, 32, sa->desc, a.peer(1), c3));
	CONF_POST(fi_send(b.ep, sb->p, 32, sb->desc, b.peer(0), c4));
	w.Expect(a.tx, c3);
	w.Expect(b.tx, c4);
	w.Expect(a.rx, c1);
	w.Expect(b.rx, c2);
	EXPECT_TRUE(ra->Check(3, 32));
	EXPECT_TRUE(rb->Check(2, 32));
}

TEST_P(MsgTest, SendvRecvvScatterGather)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	size_t tx_n = std::min<size_t>(w.info->tx_attr->iov_limit, 3);
	size_t rx_n = std::min<size_t>(w.info->rx_attr->iov_limit, 3);
	const size_t seg[3] = {10, 20, 34};
	size_t total = 64;
	Buf* s = w.NewBuf(0, total);
	Buf* r = w.NewBuf(1, total);
	s->Fill(4);
	// The sender gathers from up to three pieces of one buffer, the
	// receiver scatters into up to three pieces of another.
	auto split = [&](Buf* b, size_t n, iovec* iov, void** desc) {
		size_t off = 0;
		for (size_t i = 0; i < n; i++) {
			size_t len = i + 1 == n ? total - off : seg[i];
			iov[i].iov_base = b->p + off;
			iov[i].iov_len = len;
			desc[i] = b->desc;
			off += len;
		}
	};
	iovec siov[3], riov[3];
	void *sdesc[3], *rdesc[3];
	split(s, tx_n, siov, sdesc);
	split(r, rx_n, riov, rdesc);
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	CONF_POST(fi_recvv(b.ep, riov, rdesc, rx_n, FI_ADDR_UNSPEC, rc));
	CONF_POST(fi_sendv(a.ep, siov, sdesc, tx_n, a.peer(1), sc));
	w.Expect(a.tx, sc);
	Completion c = w.Expect(b.rx, rc);
	EXPECT_EQ(c.len, total);
	EXPECT_TRUE(r->Check(4, total));
}

TEST_P(MsgTest, SendmsgRecvmsg)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* s = w.NewBuf(0, 100);
	Buf* r = w.NewBuf(1, 100);
	s->Fill(5);
	iovec siov = {s->p, 100}, riov = {r->p, 100};
	void *sd = s->desc, *rd = r->desc;
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	fi_msg rm = {&riov, &rd, 1, FI_ADDR_UNSPEC, rc, 0};
	fi_msg sm = {&siov, &sd, 1, a.peer(1), sc, 0};
	CONF_POST(fi_recvmsg(b.ep, &rm, FI_COMPLETION));
	CONF_POST(fi_sendmsg(a.ep, &sm, FI_COMPLETION));
	Completion t = w.Expect(a.tx, sc);
	CONF_EXPECT_KIND(t, FI_SEND | FI_MSG);
	Completion c = w.Expect(b.rx, rc);
	CONF_EXPECT_KIND(c, FI_RECV | FI_MSG);
	EXPECT_EQ(c.len, 100u);
	EXPECT_TRUE(r->Check(5, 100));
}

// Remote CQ data: the receiver's completion carries the data and
// FI_REMOTE_CQ_DATA (fi_cq(3)). Only cq_data_size bytes are carried.
uint64_t CqData(World& w, uint64_t v)
{
	size_t n = w.info->domain_attr->cq_data_size;
	return n >= 8 ? v : v & ((1ULL << (8 * n)) - 1);
}

TEST_P(MsgTest, SenddataDeliversRemoteCqData)
{
	if (w.info->domain_attr->cq_data_size == 0)
		GTEST_SKIP() << "cq_data_size is 0: no remote CQ data";
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* s = w.NewBuf(0, 16);
	Buf* r = w.NewBuf(1, 16);
	s->Fill(6);
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	uint64_t data = CqData(w, 0x1122334455667788ULL);
	CONF_POST(fi_recv(b.ep, r->p, 16, r->desc, FI_ADDR_UNSPEC, rc));
	CONF_POST(fi_senddata(a.ep, s->p, 16, s->desc, data, a.peer(1), sc));
	w.Expect(a.tx, sc);
	Completion c = w.Expect(b.rx, rc);
	CONF_EXPECT_KIND(c, FI_RECV | FI_MSG);
	EXPECT_TRUE(c.flags & FI_REMOTE_CQ_DATA) << Describe(c);
	EXPECT_EQ(c.data, data);
	EXPECT_TRUE(r->Check(6, 16));
}

TEST_P(MsgTest, SendmsgWithRemoteCqData)
{
	if (w.info->domain_attr->cq_data_size == 0)
		GTEST_SKIP() << "cq_data_size is 0: no remote CQ data";
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* s = w.NewBuf(0, 8);
	Buf* r = w.NewBuf(1, 8);
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	iovec siov = {s->p, 8};
	void* sd = s->desc;
	uint64_t data = CqData(w, 0xabcdef01);
	fi_msg sm = {&siov, &sd, 1, a.peer(1), sc, data};
	CONF_POST(fi_recv(b.ep, r->p, 8, r->desc, FI_ADDR_UNSPEC, rc));
	CONF_POST(fi_sendmsg(a.ep, &sm, FI_REMOTE_CQ_DATA | FI_COMPLETION));
	w.Expect(a.tx, sc);
	Completion c = w.Expect(b.rx, rc);
	EXPECT_TRUE(c.flags & FI_REMOTE_CQ_DATA) << Describe(c);
	EXPECT_EQ(c.data, data);
}

TEST_P(MsgTest, InjectBufferIsReusableAtReturnAndNoCompletion)
{
	size_t n = std::min<size_t>(w.info->tx_attr->inject_size, 32);
	if (n == 0)
		GTEST_SKIP() << "inject_size is 0";
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* s = w.NewBuf(0, n);
	Buf* r1 = w.NewBuf(1, n);
	Buf* r2 = w.NewBuf(1, n);
	Buf* s2 = w.NewBuf(0, n);
	fi_context2 *rc1 = w.Ctx(), *rc2 = w.Ctx(), *sc = w.Ctx();
	CONF_POST(fi_recv(b.ep, r1->p, n, r1->desc, FI_ADDR_UNSPEC, rc1));
	CONF_POST(fi_recv(b.ep, r2->p, n, r2->desc, FI_ADDR_UNSPEC, rc2));
	s->Fill(7);
	CONF_POST(fi_inject(a.ep, s->p, n, a.peer(1)));
	memset(s->p, 0xEE, n);  // the buffer is ours again at return
	s2->Fill(8);
	CONF_POST(fi_send(a.ep, s2->p, n, s2->desc, a.peer(1), sc));
	w.Expect(b.rx, rc1);
	w.Expect(b.rx, rc2);
	EXPECT_TRUE(r1->Check(7, n)) << "inject sent the overwritten buffer";
	EXPECT_TRUE(r2->Check(8, n));
	w.Expect(a.tx, sc);
	w.Settle();
	EXPECT_TRUE(a.tx.log.empty())
		<< "fi_inject generated a completion: " << Describe(a.tx.log[0]);
}

TEST_P(MsgTest, InjectdataDeliversRemoteCqData)
{
	size_t n = std::min<size_t>(w.info->tx_attr->inject_size, 16);
	if (n == 0 || w.info->domain_attr->cq_data_size == 0)
		GTEST_SKIP() << "inject_size or cq_data_size is 0";
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* s = w.NewBuf(0, n);
	Buf* r = w.NewBuf(1, n);
	s->Fill(9);
	fi_context2* rc = w.Ctx();
	uint64_t data = CqData(w, 0x5a5a1234);
	CONF_POST(fi_recv(b.ep, r->p, n, r->desc, FI_ADDR_UNSPEC, rc));
	CONF_POST(fi_injectdata(a.ep, s->p, n, data, a.peer(1)));
	memset(s->p, 0, n);
	Completion c = w.Expect(b.rx, rc);
	EXPECT_TRUE(c.flags & FI_REMOTE_CQ_DATA) << Describe(c);
	EXPECT_EQ(c.data, data);
	EXPECT_EQ(c.len, n);
	EXPECT_TRUE(r->Check(9, n));
	w.Settle();
	EXPECT_TRUE(a.tx.log.empty()) << "fi_injectdata generated a completion";
}

TEST_P(MsgTest, ZeroByteMessage)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* s = w.NewBuf(0, 8);
	Buf* r = w.NewBuf(1, 8);
	memset(r->p, 0x77, 8);
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	CONF_POST(fi_recv(b.ep, r->p, 8, r->desc, FI_ADDR_UNSPEC, rc));
	CONF_POST(fi_send(a.ep, s->p, 0, s->desc, a.peer(1), sc));
	w.Expect(a.tx, sc);
	Completion c = w.Expect(b.rx, rc);
	CONF_EXPECT_KIND(c, FI_RECV | FI_MSG);
	EXPECT_EQ(c.len, 0u);
	EXPECT_EQ(r->p[0], 0x77) << "a zero-byte message wrote data";
}

// A 64 B message into a 16 B receive: an error completion with FI_ETRUNC
// (fi_cq(3) olen, fi_errno(3)), and on verbs the sender's error. Returns
// the receiver's completion.
Completion Truncate(World& w, fi_context2** rc_out)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* s = w.NewBuf(0, 64);
	Buf* r = w.NewBuf(1, 16);
	s->Fill(10);
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	*rc_out = rc;
	long ret = PostRetry(w, [&] {
		return fi_recv(b.ep, r->p, 16, r->desc, FI_ADDR_UNSPEC, rc);
	});
	EXPECT_EQ(ret, 0) << Err(ret);
	ret = PostRetry(w, [&] {
		return fi_send(a.ep, s->p, 64, s->desc, a.peer(1), sc);
	});
	EXPECT_EQ(ret, 0) << Err(ret);
	Completion c = w.ExpectError(b.rx);
	if (Provider() == "verbs") {
		// A reliable connection's responder answers a message longer
		// than its receive with an invalid-request NAK (IBA 9.9.2):
		// the sender's operation fails too.
		Completion t = w.ExpectError(a.tx);
		EXPECT_EQ(t.op_context, sc) << Describe(t);
	} else {
		// The sender's operation is not in error: the message was
		// delivered.
		Completion t = w.Expect(a.tx, sc);
		EXPECT_FALSE(t.error);
	}
	return c;
}

TEST_P(MsgTest, TruncatedReceiveReportsETRUNC)
{
	fi_context2* rc;
	Completion c = Truncate(w, &rc);
	EXPECT_EQ(c.err, FI_ETRUNC) << Describe(c);
	EXPECT_EQ(c.op_context, rc);
	EXPECT_TRUE(c.flags & FI_RECV) << Describe(c);
}

TEST_P(MsgTest, TruncatedReceiveReportsOverflowLength)
{
	CONF_SKIP_IF_DEVIATION("msg.trunc_olen");
	fi_context2* rc;
	Completion c = Truncate(w, &rc);
	EXPECT_EQ(c.err, FI_ETRUNC) << Describe(c);
	EXPECT_EQ(c.olen, 48u) << "olen is the data that did not fit: "
			       << Describe(c);
}

TEST_P(MsgTest, UnexpectedMessagesWaitForTheirReceive)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	constexpr int kN = 8;
	Buf* s[kN];
	fi_context2* sc[kN];
	for (int i = 0; i < kN; i++) {
		s[i] = w.NewBuf(0, 40);
		s[i]->Fill(20 + i);
		sc[i] = w.Ctx();
		CONF_POST(fi_send(a.ep, s[i]->p, 40, s[i]->desc, a.peer(1),
				  sc[i]));
	}
	w.Settle();
	EXPECT_TRUE(b.rx.log.empty());
	for (int i = 0; i < kN; i++) {
		Buf* r = w.NewBuf(1, 40);
		fi_context2* rc = w.Ctx();
		CONF_POST(fi_recv(b.ep, r->p, 40, r->desc, FI_ADDR_UNSPEC, rc));
		Completion c = w.Expect(b.rx, rc);
		EXPECT_EQ(c.len, 40u);
		EXPECT_TRUE(r->Check(20 + i, 40)) << "message " << i;
	}
	ASSERT_TRUE(w.WaitFor(a.tx, kN));
}

TEST_P(MsgTest, CompletionLevelsAreAcceptedAsOpFlags)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	const uint64_t levels[] = {FI_INJECT_COMPLETE, FI_TRANSMIT_COMPLETE,
				   FI_DELIVERY_COMPLETE};
	for (uint64_t level : levels) {
		SCOPED_TRACE(FlagsStr(level));
		Buf* s = w.NewBuf(0, 24);
		Buf* r = w.NewBuf(1, 24);
		s->Fill((uint8_t)level);
		fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
		iovec iov = {s->p, 24};
		void* d = s->desc;
		fi_msg m = {&iov, &d, 1, a.peer(1), sc, 0};
		CONF_POST(fi_recv(b.ep, r->p, 24, r->desc, FI_ADDR_UNSPEC, rc));
		CONF_POST(fi_sendmsg(a.ep, &m, level | FI_COMPLETION));
		w.Expect(a.tx, sc);
		w.Expect(b.rx, rc);
		EXPECT_TRUE(r->Check((uint8_t)level, 24));
	}
}

TEST_P(MsgTest, InjectFlagOnSendmsg)
{
	size_t n = std::min<size_t>(w.info->tx_attr->inject_size, 16);
	if (n == 0)
		GTEST_SKIP() << "inject_size is 0";
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* s = w.NewBuf(0, n);
	Buf* r = w.NewBuf(1, n);
	s->Fill(11);
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	iovec iov = {s->p, n};
	void* d = s->desc;
	fi_msg m = {&iov, &d, 1, a.peer(1), sc, 0};
	CONF_POST(fi_recv(b.ep, r->p, n, r->desc, FI_ADDR_UNSPEC, rc));
	CONF_POST(fi_sendmsg(a.ep, &m, FI_INJECT | FI_COMPLETION));
	memset(s->p, 0, n);
	w.Expect(a.tx, sc);
	w.Expect(b.rx, rc);
	EXPECT_TRUE(r->Check(11, n));
}

// ---- Sizes ------------------------------------------------------------------

class MsgSizeTest : public RdmTest, public ::testing::WithParamInterface<size_t> {
      protected:
	void SetUp() override { Open(Options()); }
};

// 0 and SIZE_MAX stand for inject_size and inject_size + 1.
INSTANTIATE_TEST_SUITE_P(
	Sizes, MsgSizeTest,
	::testing::Values(1, 2, 7, 64, 0, SIZE_MAX, 4095, 4096, 4097, 65536,
			  1 << 20, 4 << 20),
	[](const ::testing::TestParamInfo<size_t>& i) {
		if (i.param == 0)
			return std::string("InjectSize");
		if (i.param == SIZE_MAX)
			return std::string("InjectSizePlus1");
		return std::to_string(i.param) + "B";
	});

TEST_P(MsgSizeTest, PayloadArrivesIntact)
{
	size_t n = GetParam();
	if (n == 0)
		n = w.info->tx_attr->inject_size;
	else if (n == SIZE_MAX)
		n = w.info->tx_attr->inject_size + 1;
	if (n == 0)
		GTEST_SKIP() << "inject_size is 0";
	if (n > w.info->ep_attr->max_msg_size)
		GTEST_SKIP() << n << " B exceeds max_msg_size "
			     << w.info->ep_attr->max_msg_size;
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* s = w.NewBuf(0, n);
	Buf* r = w.NewBuf(1, n);
	s->Fill(12);
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	CONF_POST(fi_recv(b.ep, r->p, n, r->desc, FI_ADDR_UNSPEC, rc));
	CONF_POST(fi_send(a.ep, s->p, n, s->desc, a.peer(1), sc));
	w.Expect(a.tx, sc);
	Completion c = w.Expect(b.rx, rc);
	EXPECT_EQ(c.len, n);
	EXPECT_TRUE(r->Check(12, n));
}

// ---- Ordering ------------------------------------------------------------------

class MsgOrderTest : public RdmTest {};

TEST_F(MsgOrderTest, SendAfterSendArrivesInOrder)
{
	Options o;
	o.msg_order = FI_ORDER_SAS;
	CONF_OPEN(o);
	ASSERT_TRUE(w.info->tx_attr->msg_order & FI_ORDER_SAS);
	Node& a = w.node(0);
	Node& b = w.node(1);
	constexpr int kN = 64;
	fi_context2* rc[kN];
	Buf* r[kN];
	for (int i = 0; i < kN; i++) {
		r[i] = w.NewBuf(1, 8);
		rc[i] = w.Ctx();
		CONF_POST(fi_recv(b.ep, r[i]->p, 8, r[i]->desc, FI_ADDR_UNSPEC,
				  rc[i]));
	}
	for (int i = 0; i < kN; i++) {
		Buf* s = w.NewBuf(0, 8);
		memcpy(s->p, &i, sizeof(i));
		CONF_POST(fi_send(a.ep, s->p, 8, s->desc, a.peer(1), w.Ctx()));
	}
	ASSERT_TRUE(w.WaitFor(b.rx, kN));
	ASSERT_TRUE(w.WaitFor(a.tx, kN));
	bool strict = w.info->rx_attr->comp_order & FI_ORDER_STRICT;
	for (int i = 0; i < kN; i++) {
		int got;
		memcpy(&got, r[i]->p, sizeof(got));
		EXPECT_EQ(got, i) << "receive " << i << " matched message "
				  << got;
		Completion c = b.rx.Take();
		EXPECT_FALSE(c.error) << Describe(c);
		if (strict) {
			EXPECT_EQ(c.op_context, rc[i])
				<< "completion " << i << " out of order";
		}
	}
}

}  // namespace
}  // namespace conf
