// Receive-side capabilities of untagged messages: FI_DIRECTED_RECV,
// FI_SOURCE, FI_MULTI_RECV (fi_msg(3), fi_getinfo(3), fi_cq(3)), and queue
// overrun (fi_msg(3) -FI_EAGAIN).
#include <cstring>
#include <set>

#include "harness.h"

namespace conf {
namespace {

class MsgRecvTest : public RdmTest {};

// Node 0 receives from node 2 only; node 1's message waits for a receive
// that accepts any source.
TEST_F(MsgRecvTest, DirectedReceiveMatchesOnlyItsSource)
{
	CONF_SKIP_IF_MSG("directed receive selects a source address, and a "
			 "connected endpoint has only one source");
	Options o;
	o.caps = FI_MSG | FI_DIRECTED_RECV;
	o.nodes = 3;
	CONF_OPEN(o);
	Node& rx = w.node(0);
	Buf* r2 = w.NewBuf(0, 16);
	Buf* rany = w.NewBuf(0, 16);
	fi_context2 *c2 = w.Ctx(), *cany = w.Ctx();
	CONF_POST(fi_recv(rx.ep, r2->p, 16, r2->desc, rx.peer(2), c2));
	Buf* s1 = w.NewBuf(1, 16);
	Buf* s2 = w.NewBuf(2, 16);
	s1->Fill(1);
	s2->Fill(2);
	CONF_POST(fi_send(w.node(1).ep, s1->p, 16, s1->desc, w.node(1).peer(0),
			  w.Ctx()));
	ASSERT_TRUE(w.WaitFor(w.node(1).tx, 1));
	w.Settle();
	EXPECT_TRUE(rx.rx.log.empty())
		<< "node 1's message matched a receive directed at node 2";
	CONF_POST(fi_send(w.node(2).ep, s2->p, 16, s2->desc, w.node(2).peer(0),
			  w.Ctx()));
	w.Expect(rx.rx, c2);
	EXPECT_TRUE(r2->Check(2, 16));
	CONF_POST(fi_recv(rx.ep, rany->p, 16, rany->desc, FI_ADDR_UNSPEC,
			  cany));
	w.Expect(rx.rx, cany);
	EXPECT_TRUE(rany->Check(1, 16));
}

// fi_cq_readfrom reports the sender's fi_addr_t in the receiver's AV.
TEST_F(MsgRecvTest, SourceAddressIdentifiesTheSender)
{
	CONF_SKIP_IF_MSG("source addresses (FI_SOURCE) are fi_addr_t of an "
			 "AV: connected endpoints have neither");
	Options o;
	o.caps = FI_MSG | FI_SOURCE;
	o.nodes = 3;
	o.readfrom = true;
	CONF_OPEN(o);
	Node& rx = w.node(0);
	Buf* r[2];
	for (int i = 0; i < 2; i++) {
		r[i] = w.NewBuf(0, 8);
		CONF_POST(fi_recv(rx.ep, r[i]->p, 8, r[i]->desc,
				  FI_ADDR_UNSPEC, w.Ctx()));
	}
	for (int j = 1; j <= 2; j++) {
		Buf* s = w.NewBuf(j, 8);
		memset(s->p, j, 8);
		CONF_POST(fi_send(w.node(j).ep, s->p, 8, s->desc,
				  w.node(j).peer(0), w.Ctx()));
		ASSERT_TRUE(w.WaitFor(rx.rx, j));
	}
	for (int i = 0; i < 2; i++) {
		Completion c = rx.rx.Take();
		ASSERT_FALSE(c.error) << Describe(c);
		int sender = r[i]->p[0];
		ASSERT_TRUE(sender == 1 || sender == 2);
		EXPECT_EQ(c.src, rx.peer(sender))
			<< "message from node " << sender;
	}
}

// Without FI_SOURCE in the endpoint's caps, fi_cq_readfrom sets the source
// to FI_ADDR_NOTAVAIL (fi_cq(3): "If fi_cq_readfrom is called on an
// endpoint for which source addressing data is not available, the source
// address will be set to FI_ADDR_NOTAVAIL"). This holds for connected
// endpoints too, which never have source addresses to give.
TEST_F(MsgRecvTest, ReadfromWithoutSourceCapReportsNotAvail)
{
	CONF_SKIP_IF_DEVIATION("cq.readfrom_without_source");
	Options o;
	o.caps = FI_MSG;
	o.readfrom = true;
	CONF_OPEN(o);
	if (w.info->caps & FI_SOURCE)
		GTEST_SKIP() << "the provider reports FI_SOURCE without being "
			     << "asked (allowed by fi_getinfo(3)), so a source "
			     << "may legitimately be returned";
	Buf* r = w.NewBuf(1, 8);
	Buf* s = w.NewBuf(0, 8);
	fi_context2* rc = w.Ctx();
	CONF_POST(fi_recv(w.node(1).ep, r->p, 8, r->desc, FI_ADDR_UNSPEC, rc));
	CONF_POST(fi_send(w.node(0).ep, s->p, 8, s->desc, w.node(0).peer(1),
			  w.Ctx()));
	Completion c = w.Expect(w.node(1).rx, rc);
	EXPECT_EQ(c.src, FI_ADDR_NOTAVAIL);
}

// ---- FI_MULTI_RECV ------------------------------------------------------------

// One 4 KiB buffer, FI_OPT_MIN_MULTI_RECV 1 KiB, five 1000 B messages: the
// buffer takes messages until less than 1 KiB is left, reports each with
// buf pointing into it, then is released with FI_MULTI_RECV (on the last
// message's completion or on a completion of its own); the rest go to the
// next posted receive.
TEST_F(MsgRecvTest, MultiRecvBufferTakesSeveralMessages)
{
	Options o;
	o.caps = FI_MSG | FI_MULTI_RECV;
	o.cq_format = FI_CQ_FORMAT_DATA;
	CONF_OPEN(o);
	Node& a = w.node(0);
	Node& b = w.node(1);
	size_t min = 1024;
	CONF_OK(fi_setopt(&b.ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
			  &min, sizeof(min)));
	constexpr size_t kBuf = 4096, kMsg = 1000;
	constexpr int kMsgs = 5;
	Buf* multi = w.NewBuf(1, kBuf);
	Buf* extra[2] = {w.NewBuf(1, kMsg), w.NewBuf(1, kMsg)};
	fi_context2* mc = w.Ctx();
	fi_context2* ec[2] = {w.Ctx(), w.Ctx()};
	iovec iov = {multi->p, kBuf};
	void* d = multi->desc;
	fi_msg m = {&iov, &d, 1, FI_ADDR_UNSPEC, mc, 0};
	CONF_POST(fi_recvmsg(b.ep, &m, FI_MULTI_RECV));
	for (int i = 0; i < 2; i++)
		CONF_POST(fi_recv(b.ep, extra[i]->p, kMsg, extra[i]->desc,
				  FI_ADDR_UNSPEC, ec[i]));
	for (int i = 0; i < kMsgs; i++) {
		Buf* s = w.NewBuf(0, kMsg);
		s->Fill(40 + i);
		CONF_POST(fi_send(a.ep, s->p, kMsg, s->desc, a.peer(1), w.Ctx()));
		ASSERT_TRUE(w.WaitFor(a.tx, 1));
		a.tx.Take();
	}
	int in_multi = 0, in_extra = 0, released = 0;
	bool after_release = false;
	std::set<int> seeds;
	std::vector<std::pair<uint8_t*, size_t>> spans;
	while (in_multi + in_extra < kMsgs || !released) {
		ASSERT_TRUE(w.WaitFor(b.rx, 1))
			<< in_multi << " in the multi-recv buffer, " << in_extra
			<< " elsewhere, released " << released;
		Completion c = b.rx.Take();
		ASSERT_FALSE(c.error) << Describe(c);
		if (c.op_context == mc) {
			EXPECT_FALSE(after_release)
				<< "completion for a released buffer";
			if (c.flags & FI_RECV) {
				uint8_t* p = (uint8_t*)c.buf;
				ASSERT_GE(p, multi->p);
				ASSERT_LE(p + c.len, multi->p + kBuf);
				EXPECT_EQ(c.len, kMsg);
				spans.push_back({p, c.len});
				int seed = -1;
				for (int k = 0; k < kMsgs; k++)
					if (p[0] == Pattern(40 + k, 0))
						seed = k;
				ASSERT_GE(seed, 0);
				Buf view;
				view.p = p;
				view.len = c.len;
				EXPECT_TRUE(view.Check(40 + seed, kMsg));
				seeds.insert(seed);
				in_multi++;
			}
			if (c.flags & FI_MULTI_RECV) {
				released++;
				after_release = true;
			}
		} else {
			ASSERT_TRUE(c.op_context == ec[0] ||
				    c.op_context == ec[1])
				<< Describe(c);
			EXPECT_EQ(c.len, kMsg);
			in_extra++;
		}
	}
	EXPECT_EQ(released, 1);
	EXPECT_GE(in_multi, 3) << "4 KiB with a 1 KiB minimum holds at least "
				  "three 1000 B messages";
	EXPECT_EQ(in_multi + in_extra, kMsgs);
	for (size_t i = 0; i < spans.size(); i++)
		for (size_t j = i + 1; j < spans.size(); j++)
			EXPECT_TRUE(spans[i].first + spans[i].second <=
					    spans[j].first ||
				    spans[j].first + spans[j].second <=
					    spans[i].first)
				<< "messages overlap in the multi-recv buffer";
}

TEST_F(MsgRecvTest, MinMultiRecvOptionRoundTrips)
{
	Options o;
	o.caps = FI_MSG | FI_MULTI_RECV;
	CONF_OPEN(o);
	fid_ep* ep = w.node(0).ep;
	size_t v = 0, len = sizeof(v);
	CONF_OK(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &v,
			  &len));
	EXPECT_EQ(len, sizeof(size_t));
	size_t set = 777;
	CONF_OK(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
			  &set, sizeof(set)));
	len = sizeof(v);
	CONF_OK(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &v,
			  &len));
	EXPECT_EQ(v, 777u);
}

// ---- Queue overrun ------------------------------------------------------------

// Posting more sends than tx_attr->size without reaping: every call returns
// 0 or -FI_EAGAIN (fi_msg(3)), never crashes; what was accepted is
// delivered once receives are posted.
TEST_F(MsgRecvTest, SendQueueOverrunReturnsEAGAIN)
{
	Options o;
	o.caps = FI_MSG;
	o.cq_size = 1 << 16;
	CONF_OPEN(o);
	Node& a = w.node(0);
	Node& b = w.node(1);
	size_t limit = std::min<size_t>(2 * w.info->tx_attr->size + 16, 1 << 14);
	Buf* s = w.NewBuf(0, 8);
	Buf* r = w.NewBuf(1, 8);
	// One exchange first: a provider may need progress to reach a new
	// peer (returning -FI_EAGAIN meanwhile), which is not what is tested.
	fi_context2 *wc = w.Ctx(), *wr = w.Ctx();
	CONF_POST(fi_recv(b.ep, r->p, 8, r->desc, FI_ADDR_UNSPEC, wr));
	CONF_POST(fi_send(a.ep, s->p, 8, s->desc, a.peer(1), wc));
	w.Expect(a.tx, wc);
	w.Expect(b.rx, wr);
	size_t accepted = 0, eagain = 0;
	for (size_t i = 0; i < limit; i++) {
		long r = fi_send(a.ep, s->p, 8, s->desc, a.peer(1), w.Ctx());
		ASSERT_TRUE(r == 0 || r == -FI_EAGAIN)
			<< "send " << i << ": " << Err(r);
		if (r == 0)
			accepted++;
		else
			eagain++;
	}
	std::printf("tx_attr->size %zu: %zu of %zu sends accepted, %zu "
		    "-FI_EAGAIN\n",
		    w.info->tx_attr->size, accepted, limit, eagain);
	EXPECT_GT(accepted, 0u);
	for (size_t i = 0; i < accepted; i++) {
		CONF_POST(fi_recv(b.ep, r->p, 8, r->desc, FI_ADDR_UNSPEC,
				  w.Ctx()));
		if (i % 64 == 63)
			w.PollAll();
	}
	ASSERT_TRUE(w.WaitFor(b.rx, accepted));
	ASSERT_TRUE(w.WaitFor(a.tx, accepted));
	for (auto& c : b.rx.log)
		EXPECT_FALSE(c.error) << Describe(c);
	for (auto& c : a.tx.log)
		EXPECT_FALSE(c.error) << Describe(c);
}

TEST_F(MsgRecvTest, ReceiveQueueOverrunReturnsEAGAIN)
{
	Options o;
	o.caps = FI_MSG;
	CONF_OPEN(o);
	Node& b = w.node(1);
	size_t limit = std::min<size_t>(2 * w.info->rx_attr->size + 16, 1 << 14);
	Buf* r = w.NewBuf(1, 8);
	size_t accepted = 0;
	for (size_t i = 0; i < limit; i++) {
		long ret = fi_recv(b.ep, r->p, 8, r->desc, FI_ADDR_UNSPEC,
				   w.Ctx());
		ASSERT_TRUE(ret == 0 || ret == -FI_EAGAIN)
			<< "receive " << i << ": " << Err(ret);
		accepted += ret == 0;
	}
	std::printf("rx_attr->size %zu: %zu of %zu receives accepted\n",
		    w.info->rx_attr->size, accepted, limit);
	EXPECT_GT(accepted, 0u);
	// The endpoint still works: a message lands in a posted receive.
	Buf* s = w.NewBuf(0, 8);
	s->Fill(3);
	CONF_POST(fi_send(w.node(0).ep, s->p, 8, s->desc, w.node(0).peer(1),
			  w.Ctx()));
	ASSERT_TRUE(w.WaitFor(b.rx, 1));
	EXPECT_FALSE(b.rx.log[0].error) << Describe(b.rx.log[0]);
	EXPECT_TRUE(r->Check(3, 8));
}

}  // namespace
}  // namespace conf
