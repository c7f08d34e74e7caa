// Counters (fi_cntr(3)): read/readerr/add/set/adderr/seterr/wait, and the
// events they count when bound to an endpoint (fi_endpoint(3) fi_ep_bind):
// FI_SEND, FI_RECV, FI_READ, FI_WRITE, FI_REMOTE_READ, FI_REMOTE_WRITE.
#include <chrono>
#include <cstring>

#include "harness.h"

namespace conf {
namespace {

class CntrTest : public RdmTest {
      protected:
	void SetUp() override
	{
		Options o;
		o.cntr_events = FI_SEND | FI_RECV;
		o.cntr_wait = FI_WAIT_UNSPEC;
		Open(o);
	}
	// fi_cntr_wait in 100 ms slices with progress between, bounded.
	int WaitSliced(fid_cntr* c, uint64_t v)
	{
		auto start = std::chrono::steady_clock::now();
		int r = -FI_ETIMEDOUT;
		while (std::chrono::steady_clock::now() - start <
		       std::chrono::milliseconds(TimeoutMs())) {
			r = fi_cntr_wait(c, v, 100);
			if (r == FI_ETIMEDOUT &&
			    Deviation("cntr.wait_timeout_sign"))
				r = -FI_ETIMEDOUT;
			if (r != -FI_ETIMEDOUT)
				return r;
			w.PollAll();
		}
		return r;
	}
};

TEST_F(CntrTest, ArithmeticOnValueAndErrorValue)
{
	fid_cntr* c = w.node(0).counter(FI_SEND);
	EXPECT_EQ(fi_cntr_read(c), 0u);
	EXPECT_EQ(fi_cntr_readerr(c), 0u);
	CONF_OK(fi_cntr_add(c, 5));
	CONF_OK(fi_cntr_add(c, 7));
	EXPECT_EQ(fi_cntr_read(c), 12u);
	CONF_OK(fi_cntr_set(c, 100));
	EXPECT_EQ(fi_cntr_read(c), 100u);
	CONF_OK(fi_cntr_adderr(c, 3));
	EXPECT_EQ(fi_cntr_readerr(c), 3u);
	CONF_OK(fi_cntr_seterr(c, 9));
	EXPECT_EQ(fi_cntr_readerr(c), 9u);
	EXPECT_EQ(fi_cntr_read(c), 100u) << "error ops changed the value";
	CONF_OK(fi_cntr_set(c, 0));
	CONF_OK(fi_cntr_seterr(c, 0));
	EXPECT_EQ(fi_cntr_read(c), 0u);
	EXPECT_EQ(fi_cntr_readerr(c), 0u);
}

// fi_poll(3): a counter opened with FI_WAIT_SET shares its wait set's
// wait object; fi_wait times out with nothing to see, and returns once the
// counter has moved. (Closing a set still in use is -FI_EBUSY by the man
// page, which Debian's providers do not check: tests/sim:wait_set_test.)
TEST_F(CntrTest, AWaitSetSeesItsCounterMove)
{
	fi_wait_attr wattr{};
	wattr.wait_obj = FI_WAIT_UNSPEC;
	fid_wait* ws = nullptr;
	int ret = fi_wait_open(w.fabric, &wattr, &ws);
	if (ret == -FI_ENOSYS)
		GTEST_SKIP() << Provider() << " has no wait sets";
	ASSERT_EQ(ret, 0) << Err(ret);
	fi_cntr_attr cattr{};
	cattr.events = FI_CNTR_EVENTS_COMP;
	cattr.wait_obj = FI_WAIT_SET;
	cattr.wait_set = ws;
	fid_cntr* c = nullptr;
	ret = fi_cntr_open(w.node(0).domain, &cattr, &c, nullptr);
	ASSERT_EQ(ret, 0) << Err(ret);
	EXPECT_EQ(fi_wait(ws, 50), -FI_ETIMEDOUT);
	CONF_OK(fi_cntr_add(c, 1));
	EXPECT_EQ(fi_wait(ws, 2000), 0);
	EXPECT_EQ(fi_close(&c->fid), 0);
	EXPECT_EQ(fi_close(&ws->fid), 0);
}

TEST_F(CntrTest, WaitTimesOutWithETIMEDOUT)
{
	CONF_SKIP_IF_DEVIATION("cntr.wait_timeout_sign");
	fid_cntr* c = w.node(0).counter(FI_SEND);
	auto start = std::chrono::steady_clock::now();
	int r = fi_cntr_wait(c, 1, 150);
	auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
			  std::chrono::steady_clock::now() - start)
			  .count();
	EXPECT_EQ(r, -FI_ETIMEDOUT) << Err(r);
	EXPECT_LT(ms, TimeoutMs());
	EXPECT_EQ(fi_cntr_readerr(c), 0u)
		<< "fi_cntr(3): a timeout leaves the error value unchanged";
}

TEST_F(CntrTest, WaitForReachedThresholdReturnsAtOnce)
{
	fid_cntr* c = w.node(0).counter(FI_SEND);
	CONF_OK(fi_cntr_set(c, 5));
	EXPECT_EQ(fi_cntr_wait(c, 5, 100), 0);
	EXPECT_EQ(fi_cntr_wait(c, 3, 100), 0);
}

TEST_F(CntrTest, SendAndRecvCountersCountMessages)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	constexpr int kN = 3;
	for (int i = 0; i < kN; i++) {
		Buf* r = w.NewBuf(1, 8);
		CONF_POST(fi_recv(b.ep, r->p, 8, r->desc, FI_ADDR_UNSPEC,
				  w.Ctx()));
	}
	for (int i = 0; i < kN; i++) {
		Buf* s = w.NewBuf(0, 8);
		CONF_POST(fi_send(a.ep, s->p, 8, s->desc, a.peer(1), w.Ctx()));
	}
	ASSERT_TRUE(w.WaitCntr(a.counter(FI_SEND), kN));
	ASSERT_TRUE(w.WaitCntr(b.counter(FI_RECV), kN));
	ASSERT_TRUE(w.WaitFor(b.rx, kN));
	w.Settle();
	EXPECT_EQ(fi_cntr_read(a.counter(FI_SEND)), (uint64_t)kN);
	EXPECT_EQ(fi_cntr_read(b.counter(FI_RECV)), (uint64_t)kN);
	EXPECT_EQ(fi_cntr_read(a.counter(FI_RECV)), 0u);
	EXPECT_EQ(fi_cntr_read(b.counter(FI_SEND)), 0u);
	EXPECT_EQ(fi_cntr_readerr(a.counter(FI_SEND)), 0u);
}

TEST_F(CntrTest, WaitReturnsOnceMessagesComplete)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* r = w.NewBuf(1, 8);
	Buf* s = w.NewBuf(0, 8);
	CONF_POST(fi_recv(b.ep, r->p, 8, r->desc, FI_ADDR_UNSPEC, w.Ctx()));
	CONF_POST(fi_send(a.ep, s->p, 8, s->desc, a.peer(1), w.Ctx()));
	EXPECT_EQ(WaitSliced(b.counter(FI_RECV), 1), 0);
	EXPECT_EQ(WaitSliced(a.counter(FI_SEND), 1), 0);
}

// Counters with FI_SELECTIVE_COMPLETION: operations without FI_COMPLETION
// write no CQ entry but are counted (fi_endpoint(3) NOTES).
TEST_F(CntrTest, CountersCountWhatTheCqSuppresses)
{
	w.Close();
	Options o;
	o.cntr_events = FI_SEND;
	o.tx_bind = FI_TRANSMIT | FI_SELECTIVE_COMPLETION;
	CONF_OPEN(o);
	Node& a = w.node(0);
	Node& b = w.node(1);
	constexpr int kN = 4;
	for (int i = 0; i < kN; i++) {
		Buf* r = w.NewBuf(1, 8);
		CONF_POST(fi_recv(b.ep, r->p, 8, r->desc, FI_ADDR_UNSPEC,
				  w.Ctx()));
		Buf* s = w.NewBuf(0, 8);
		CONF_POST(fi_send(a.ep, s->p, 8, s->desc, a.peer(1), nullptr));
	}
	ASSERT_TRUE(w.WaitFor(b.rx, kN));
	ASSERT_TRUE(w.WaitCntr(a.counter(FI_SEND), kN));
	w.Settle();
	EXPECT_TRUE(a.tx.log.empty())
		<< "a suppressed send wrote a CQ entry: " << Describe(a.tx.log[0]);
}

// ---- RMA counters --------------------------------------------------------------

class CntrRmaTest : public RdmTest {
      protected:
	// Endpoints with FI_RMA_EVENT and `caps`, a counter on each node for
	// FI_REMOTE_READ and one for FI_REMOTE_WRITE.
	static Options RemoteCounters(uint64_t caps = 0)
	{
		Options o;
		o.caps = FI_MSG | FI_RMA | FI_RMA_EVENT | caps;
		o.cntr_events = FI_REMOTE_READ | FI_REMOTE_WRITE;
		return o;
	}
};

TEST_F(CntrRmaTest, ReadAndWriteCountersCountInitiatedRma)
{
	Options o;
	o.caps = FI_MSG | FI_RMA;
	o.cntr_events = FI_READ | FI_WRITE;
	CONF_OPEN(o);
	Node& a = w.node(0);
	Buf* target = w.NewBuf(1, 64, kLocalAccess | kRemoteAccess);
	Buf* local = w.NewBuf(0, 64);
	local->Fill(1);
	CONF_POST(fi_write(a.ep, local->p, 64, local->desc, a.peer(1),
			   target->raddr(), target->key, w.Ctx()));
	ASSERT_TRUE(w.WaitCntr(a.counter(FI_WRITE), 1));
	CONF_POST(fi_read(a.ep, local->p, 64, local->desc, a.peer(1),
			  target->raddr(), target->key, w.Ctx()));
	ASSERT_TRUE(w.WaitCntr(a.counter(FI_READ), 1));
	ASSERT_TRUE(w.WaitFor(a.tx, 2));
	EXPECT_EQ(fi_cntr_read(a.counter(FI_WRITE)), 1u);
	EXPECT_EQ(fi_cntr_read(a.counter(FI_READ)), 1u);
	EXPECT_TRUE(target->Check(1, 64));
}

TEST_F(CntrRmaTest, RemoteCountersNeedRmaEventAndCountTargetAccess)
{
	CONF_SKIP_IF_DEVIATION("cntr.remote_rma_events");
	CONF_OPEN(RemoteCounters());
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* target = w.NewBuf(1, 64, kLocalAccess | kRemoteAccess);
	Buf* local = w.NewBuf(0, 64);
	local->Fill(2);
	CONF_POST(fi_write(a.ep, local->p, 64, local->desc, a.peer(1),
			   target->raddr(), target->key, w.Ctx()));
	CONF_POST(fi_write(a.ep, local->p, 32, local->desc, a.peer(1),
			   target->raddr(32), target->key, w.Ctx()));
	ASSERT_TRUE(w.WaitCntr(b.counter(FI_REMOTE_WRITE), 2));
	CONF_POST(fi_read(a.ep, local->p, 16, local->desc, a.peer(1),
			  target->raddr(), target->key, w.Ctx()));
	ASSERT_TRUE(w.WaitCntr(b.counter(FI_REMOTE_READ), 1));
	ASSERT_TRUE(w.WaitFor(a.tx, 3));
	EXPECT_EQ(fi_cntr_read(b.counter(FI_REMOTE_WRITE)), 2u);
	EXPECT_EQ(fi_cntr_read(b.counter(FI_REMOTE_READ)), 1u);
	EXPECT_EQ(fi_cntr_read(a.counter(FI_REMOTE_WRITE)), 0u)
		<< "the initiator's remote counter moved";
}

// fi_mr(3), fi_mr_bind with FI_REMOTE_WRITE: the counter moves "whenever a
// remote RMA write or atomic operation modifies the memory region" — or
// the bind fails with -FI_ENOSYS, for a provider that does not count per
// region. It must not succeed and then count nothing (sim did).
TEST_F(CntrRmaTest, ARegionsCounterCountsWritesIntoItOrIsRefused)
{
	CONF_OPEN(RemoteCounters());
	Node& a = w.node(0);
	Buf* target = w.NewBuf(1, 64, kLocalAccess | kRemoteAccess);
	Buf* local = w.NewBuf(0, 64);
	ASSERT_NE(target->mr, nullptr);
	fi_cntr_attr attr{};
	attr.events = FI_CNTR_EVENTS_COMP;
	attr.wait_obj = FI_WAIT_UNSPEC;
	fid_cntr* cntr = nullptr;
	CONF_OK(fi_cntr_open(w.node(1).domain, &attr, &cntr, nullptr));
	int r = fi_mr_bind(target->mr, &cntr->fid, FI_REMOTE_WRITE);
	if (r == -FI_ENOSYS) {
		fi_close(&cntr->fid);
		GTEST_SKIP() << Provider() << " refuses per-region counters "
			     << "(fi_mr_bind: -FI_ENOSYS)";
	}
	ASSERT_EQ(r, 0) << Err(r);
	r = fi_mr_enable(target->mr);
	ASSERT_TRUE(r == 0 || r == -FI_ENOSYS) << Err(r);
	CONF_POST(fi_write(a.ep, local->p, 64, local->desc, a.peer(1),
			   target->raddr(), target->key, w.Ctx()));
	EXPECT_TRUE(w.WaitCntr(cntr, 1));
	ASSERT_TRUE(w.WaitFor(a.tx, 1));
	// The region goes first: its counter is bound to it.
	CONF_OK(fi_close(&target->mr->fid));
	target->mr = nullptr;
	CONF_OK(fi_close(&cntr->fid));
}

// One fi_writemsg or fi_readmsg with several target segments is one
// operation: the target's counter moves once (fi_endpoint(3): it counts
// "whenever an RMA write ... is initiated from a remote endpoint").
TEST_F(CntrRmaTest, AnOperationOfSeveralSegmentsCountsOnceAtTheTarget)
{
	CONF_SKIP_IF_DEVIATION("cntr.remote_rma_events");
	CONF_OPEN(RemoteCounters());
	if (w.info->tx_attr->rma_iov_limit < 3)
		GTEST_SKIP() << "rma_iov_limit " << w.info->tx_attr->rma_iov_limit;
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* target = w.NewBuf(1, 64, kLocalAccess | kRemoteAccess);
	Buf* local = w.NewBuf(0, 48);
	local->Fill(3);
	iovec iov = {local->p, 48};
	void* desc = local->desc;
	fi_rma_iov rma[3];
	for (int i = 0; i < 3; i++)
		rma[i] = {target->raddr(20 * i), 16, target->key};
	fi_msg_rma m = {&iov, &desc, 1, a.peer(1), rma, 3, w.Ctx(), 0};
	CONF_POST(fi_writemsg(a.ep, &m, 0));
	ASSERT_TRUE(w.WaitFor(a.tx, 1));
	EXPECT_FALSE(a.tx.Take().error);
	m.context = w.Ctx();
	CONF_POST(fi_readmsg(a.ep, &m, 0));
	ASSERT_TRUE(w.WaitFor(a.tx, 1));
	EXPECT_FALSE(a.tx.Take().error);
	w.Settle();
	EXPECT_EQ(fi_cntr_read(b.counter(FI_REMOTE_WRITE)), 1u);
	EXPECT_EQ(fi_cntr_read(b.counter(FI_REMOTE_READ)), 1u);
	EXPECT_TRUE(local->Check(3, 48));
}

// fi_endpoint(3): a base atomic counts on the target's FI_REMOTE_WRITE
// counter, an atomic fetch or compare on its FI_REMOTE_READ one — also for
// the 64-bit sum and compare-swap a RoCE NIC does natively.
TEST_F(CntrRmaTest, AtomicsCountAsWritesOrAsReadsAtTheTarget)
{
	CONF_SKIP_IF_DEVIATION("cntr.remote_rma_events");
	CONF_SKIP_IF_DEVIATION("cntr.remote_atomic_reads");
	CONF_OPEN(RemoteCounters(FI_ATOMIC));
	Node& a = w.node(0);
	Node& b = w.node(1);
	size_t count = 0;
	if (fi_atomicvalid(a.ep, FI_INT64, FI_SUM, &count) ||
	    fi_fetch_atomicvalid(a.ep, FI_INT64, FI_SUM, &count) ||
	    fi_compare_atomicvalid(a.ep, FI_INT64, FI_CSWAP, &count))
		GTEST_SKIP() << "no 64-bit sum or compare-swap";
	Buf* target = w.NewBuf(1, 8, kLocalAccess | kRemoteAccess);
	Buf* operand = w.NewBuf(0, 24);
	int64_t* v = (int64_t*)operand->p;
	*(int64_t*)target->p = 40;
	v[0] = 2;  // the addend, and the swap value
	v[1] = 42; // the compare value
	CONF_POST(fi_atomic(a.ep, &v[0], 1, operand->desc, a.peer(1),
			    target->raddr(), target->key, FI_INT64, FI_SUM,
			    w.Ctx()));
	ASSERT_TRUE(w.WaitFor(a.tx, 1));
	EXPECT_FALSE(a.tx.Take().error);
	w.Settle();
	EXPECT_EQ(fi_cntr_read(b.counter(FI_REMOTE_WRITE)), 1u);
	EXPECT_EQ(fi_cntr_read(b.counter(FI_REMOTE_READ)), 0u);
	CONF_POST(fi_fetch_atomic(a.ep, &v[0], 1, operand->desc, &v[2],
				  operand->desc, a.peer(1), target->raddr(),
				  target->key, FI_INT64, FI_SUM, w.Ctx()));
	ASSERT_TRUE(w.WaitFor(a.tx, 1));
	EXPECT_FALSE(a.tx.Take().error);
	EXPECT_EQ(v[2], 42);
	CONF_POST(fi_compare_atomic(a.ep, &v[0], 1, operand->desc, &v[1],
				    operand->desc, &v[2], operand->desc,
				    a.peer(1), target->raddr(), target->key,
				    FI_INT64, FI_CSWAP, w.Ctx()));
	ASSERT_TRUE(w.WaitFor(a.tx, 1));
	EXPECT_FALSE(a.tx.Take().error);
	w.Settle();
	EXPECT_EQ(v[2], 44);
	EXPECT_EQ(*(int64_t*)target->p, 44) << "44 is not 42: no swap";
	EXPECT_EQ(fi_cntr_read(b.counter(FI_REMOTE_WRITE)), 1u);
	EXPECT_EQ(fi_cntr_read(b.counter(FI_REMOTE_READ)), 2u);
}

// fi_cntr(3): counters count successful completions. A read or a write the
// target refuses (a key it never issued) moves neither of its remote
// counters; the initiator's operations fail.
TEST_F(CntrRmaTest, RefusedAccessDoesNotCountAtTheTarget)
{
	CONF_SKIP_IF_DEVIATION("cntr.remote_rma_events");
	CONF_SKIP_IF_DEVIATION("rma.bad_key");
	CONF_OPEN(RemoteCounters());
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* target = w.NewBuf(1, 64, kLocalAccess | kRemoteAccess);
	Buf* local = w.NewBuf(0, 64);
	CONF_POST(fi_read(a.ep, local->p, 16, local->desc, a.peer(1),
			  target->raddr(), w.BadKey(target), w.Ctx()));
	EXPECT_NE(w.ExpectError(a.tx).err, 0);
	if (!MsgMode()) { // a connection does not survive a refusal
		CONF_POST(fi_write(a.ep, local->p, 16, local->desc, a.peer(1),
				   target->raddr(), w.BadKey(target),
				   w.Ctx()));
		EXPECT_NE(w.ExpectError(a.tx).err, 0);
	}
	w.Settle();
	EXPECT_EQ(fi_cntr_read(b.counter(FI_REMOTE_READ)), 0u);
	EXPECT_EQ(fi_cntr_read(b.counter(FI_REMOTE_WRITE)), 0u);
}

// An RMA write with a key the target never issued fails; the initiator's
// FI_WRITE counter records it in its error value, not its success value
// (fi_cntr(3): "if an operation completes in error, it may increment an
// associated error value").
TEST_F(CntrRmaTest, FailedWriteIncrementsTheErrorValue)
{
	CONF_SKIP_IF_DEVIATION("rma.bad_key");
	Options o;
	o.caps = FI_MSG | FI_RMA;
	o.cntr_events = FI_WRITE;
	CONF_OPEN(o);
	Node& a = w.node(0);
	Buf* target = w.NewBuf(1, 64, kLocalAccess | kRemoteAccess);
	Buf* local = w.NewBuf(0, 64);
	CONF_POST(fi_write(a.ep, local->p, 64, local->desc, a.peer(1),
			   target->raddr(), w.BadKey(target), w.Ctx()));
	Completion c = w.ExpectError(a.tx);
	EXPECT_NE(c.err, 0);
	auto start = std::chrono::steady_clock::now();
	while (fi_cntr_readerr(a.counter(FI_WRITE)) < 1 &&
	       std::chrono::steady_clock::now() - start <
		       std::chrono::milliseconds(TimeoutMs()))
		w.PollAll();
	EXPECT_EQ(fi_cntr_readerr(a.counter(FI_WRITE)), 1u);
	EXPECT_EQ(fi_cntr_read(a.counter(FI_WRITE)), 0u);
}

}  // namespace
}  // namespace conf
