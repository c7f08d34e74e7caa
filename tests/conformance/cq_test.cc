// Completion queues (fi_cq(3)): every format, fi_cq_read/readfrom/readerr/
// strerror, fi_cq_sread/sreadfrom with a wait object and a timeout,
// -FI_EAGAIN and -FI_EAVAIL, fi_cq_signal.
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "harness.h"

namespace conf {
namespace {

// ---- Formats -------------------------------------------------------------------

class CqFormatTest : public RdmTest,
		     public ::testing::WithParamInterface<fi_cq_format> {
      protected:
	void SetUp() override
	{
		Options o;
		o.cq_format = GetParam();
		Open(o);
	}
};

std::string FormatName(const ::testing::TestParamInfo<fi_cq_format>& i)
{
	static const char* const names[] = {"Unspec", "Context", "Msg", "Data",
					    "Tagged"};
	return names[i.param];
}

INSTANTIATE_TEST_SUITE_P(Formats, CqFormatTest,
			 ::testing::Values(FI_CQ_FORMAT_CONTEXT, FI_CQ_FORMAT_MSG,
					   FI_CQ_FORMAT_DATA, FI_CQ_FORMAT_TAGGED),
			 FormatName);

// A tagged message with remote CQ data; each format reports what it holds.
// (An untagged one where the endpoint has no FI_TAGGED: tcp's FI_EP_MSG.)
TEST_P(CqFormatTest, EntriesCarryTheFormatsFields)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	bool data = w.info->domain_attr->cq_data_size > 0;
	bool tagged = w.info->caps & FI_TAGGED;
	uint64_t kind = tagged ? FI_TAGGED : FI_MSG;
	Buf* s = w.NewBuf(0, 33);
	Buf* r = w.NewBuf(1, 64);
	s->Fill(1);
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	if (tagged)
		CONF_POST(fi_trecv(b.ep, r->p, 64, r->desc, FI_ADDR_UNSPEC,
				   0x51, 0, rc));
	else
		CONF_POST(fi_recv(b.ep, r->p, 64, r->desc, FI_ADDR_UNSPEC, rc));
	if (data && tagged)
		CONF_POST(fi_tsenddata(a.ep, s->p, 33, s->desc, 0xd0d0,
				       a.peer(1), 0x51, sc));
	else if (tagged)
		CONF_POST(fi_tsend(a.ep, s->p, 33, s->desc, a.peer(1), 0x51,
				   sc));
	else if (data)
		CONF_POST(fi_senddata(a.ep, s->p, 33, s->desc, 0xd0d0,
				      a.peer(1), sc));
	else
		CONF_POST(fi_send(a.ep, s->p, 33, s->desc, a.peer(1), sc));
	Completion t = w.Expect(a.tx, sc);
	Completion c = w.Expect(b.rx, rc);
	EXPECT_TRUE(r->Check(1, 33));
	fi_cq_format f = GetParam();
	if (f == FI_CQ_FORMAT_CONTEXT)
		return;  // op_context only, checked by Expect
	EXPECT_TRUE(t.flags & FI_SEND) << Describe(t);
	EXPECT_TRUE(t.flags & kind) << Describe(t);
	EXPECT_TRUE(c.flags & FI_RECV) << Describe(c);
	EXPECT_TRUE(c.flags & kind) << Describe(c);
	EXPECT_EQ(c.len, 33u);
	if (f == FI_CQ_FORMAT_MSG)
		return;
	if (data) {
		EXPECT_TRUE(c.flags & FI_REMOTE_CQ_DATA) << Describe(c);
		EXPECT_EQ(c.data, 0xd0d0u);
	}
	if (f == FI_CQ_FORMAT_DATA || !tagged)
		return;
	EXPECT_EQ(c.tag, 0x51u);
}

// ---- Reading ---------------------------------------------------------------------

class CqTest : public RdmTest {
      protected:
	void SetUp() override { Open(Options()); }
	// Reads `cq` directly (it is excluded from the poller), retrying
	// -FI_EAGAIN with progress on every other CQ, bounded.
	ssize_t ReadRaw(Cq& cq, void* buf, size_t count)
	{
		cq.manual = true;
		auto start = std::chrono::steady_clock::now();
		ssize_t r = -FI_EAGAIN;
		while (std::chrono::steady_clock::now() - start <
		       std::chrono::milliseconds(TimeoutMs())) {
			r = fi_cq_read(cq.cq, buf, count);
			if (r != -FI_EAGAIN)
				return r;
			w.PollAll();
		}
		return r;
	}
	// Posts a receive on node 1 and cancels it (or, without fi_cancel,
	// overruns it: FailReceive): an error entry, whose err is *err.
	fi_context2* CancelledReceive(int* err)
	{
		Node& b = w.node(1);
		Buf* r = w.NewBuf(1, 16);
		fi_context2* rc = w.Ctx();
		long ret = PostRetry(w, [&] {
			return fi_recv(b.ep, r->p, 16, r->desc, FI_ADDR_UNSPEC,
				       rc);
		});
		EXPECT_EQ(ret, 0) << Err(ret);
		*err = FailReceive(w, 1, 0, rc, 16);
		return rc;
	}
};

// Receives counted (FI_RECV), and node 1's receive CQ read by the test
// itself.
class CqCountTest : public CqTest {
      protected:
	void SetUp() override
	{
		Options o;
		o.cntr_events = FI_RECV;
		Open(o);
		if (!IsSkipped() && !HasFatalFailure())
			w.node(1).rx.manual = true;
	}
};

TEST_F(CqTest, ReadOnEmptyQueueReturnsEAGAIN)
{
	fi_cq_tagged_entry e;
	fi_addr_t src;
	EXPECT_EQ(fi_cq_read(w.node(0).tx.cq, &e, 1), -FI_EAGAIN);
	EXPECT_EQ(fi_cq_readfrom(w.node(0).rx.cq, &e, 1, &src), -FI_EAGAIN);
}

TEST_F(CqTest, ReaderrOnEmptyQueueReturnsEAGAIN)
{
	fi_cq_err_entry e;
	memset(&e, 0, sizeof(e));
	EXPECT_EQ(fi_cq_readerr(w.node(0).rx.cq, &e, 0), -FI_EAGAIN);
}

// Several completions come back from one fi_cq_read when available.
TEST_F(CqCountTest, ReadReturnsSeveralEntriesAtOnce)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	constexpr int kN = 5;
	fi_context2* rc[kN];
	for (int i = 0; i < kN; i++) {
		Buf* r = w.NewBuf(1, 8);
		rc[i] = w.Ctx();
		CONF_POST(fi_recv(b.ep, r->p, 8, r->desc, FI_ADDR_UNSPEC, rc[i]));
	}
	for (int i = 0; i < kN; i++) {
		Buf* s = w.NewBuf(0, 8);
		CONF_POST(fi_send(a.ep, s->p, 8, s->desc, a.peer(1), w.Ctx()));
	}
	ASSERT_TRUE(w.WaitCntr(b.counter(FI_RECV), kN));
	w.Settle();  // other CQs only; lets a provider thread finish writing
	fi_cq_tagged_entry e[8];
	ssize_t n = fi_cq_read(b.rx.cq, e, 8);
	ASSERT_EQ(n, kN) << "the counter shows 5 receives done: " << Err(n);
	for (int i = 0; i < kN; i++)
		EXPECT_TRUE(e[i].op_context == rc[0] || e[i].op_context == rc[1] ||
			    e[i].op_context == rc[2] || e[i].op_context == rc[3] ||
			    e[i].op_context == rc[4]);
	EXPECT_EQ(fi_cq_read(b.rx.cq, e, 8), -FI_EAGAIN);
}

// fi_cq(3): -FI_EAVAIL when the topmost completion is an error. An error
// that comes after a success is read after it, not before.
TEST_F(CqCountTest, AnErrorIsReadInItsPlaceAfterEarlierCompletions)
{
	CONF_SKIP_IF_DEVIATION("cq.error_order");
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* r = w.NewBuf(1, 16);
	fi_context2* first = w.Ctx();
	CONF_POST(fi_recv(b.ep, r->p, 16, r->desc, FI_ADDR_UNSPEC, first));
	Buf* s = w.NewBuf(0, 8);
	CONF_POST(fi_send(a.ep, s->p, 8, s->desc, a.peer(1), w.Ctx()));
	ASSERT_TRUE(w.WaitCntr(b.counter(FI_RECV), 1));
	w.Settle();
	int want = 0;
	fi_context2* failed = CancelledReceive(&want);
	ASSERT_NE(want, 0);
	// The error may be written later (a cancel that takes effect in the
	// provider's progress): its count on the receive counter, where the
	// provider keeps one, says it is there.
	auto start = std::chrono::steady_clock::now();
	while (fi_cntr_readerr(b.counter(FI_RECV)) < 1 &&
	       std::chrono::steady_clock::now() - start <
		       std::chrono::milliseconds(TimeoutMs() / 4))
		w.PollAll();
	w.Settle();
	fi_cq_tagged_entry e[4];
	ASSERT_EQ(ReadRaw(b.rx, e, 4), 1)
		<< "the earlier success comes first, alone";
	EXPECT_EQ(e[0].op_context, first);
	EXPECT_EQ(ReadRaw(b.rx, e, 4), -FI_EAVAIL);
	fi_cq_err_entry err;
	memset(&err, 0, sizeof(err));
	ASSERT_EQ(fi_cq_readerr(b.rx.cq, &err, 0), 1);
	EXPECT_EQ(err.op_context, failed);
	EXPECT_EQ(err.err, want) << fi_strerror(err.err);
}

// fi_poll(3): a poll set progresses its CQs and counters and returns the
// contexts of the CQs with something to read and of the counters that moved
// since the last fi_poll; a CQ in a set is busy until it leaves it.
TEST_F(CqCountTest, PollSetSaysWhichCqsAndCountersHaveNews)
{
	CONF_SKIP_IF_DEVIATION("poll.set");
	Node& a = w.node(0);
	Node& b = w.node(1);
	fi_poll_attr attr{};
	fid_poll *cqs = nullptr, *cntrs = nullptr;
	int ret = fi_poll_open(b.domain, &attr, &cqs);
	if (ret == -FI_ENOSYS)
		GTEST_SKIP() << Provider() << " has no poll sets";
	ASSERT_EQ(ret, 0) << Err(ret);
	ASSERT_EQ(fi_poll_open(b.domain, &attr, &cntrs), 0);
	fid_cntr* cntr = b.counter(FI_RECV);
	ASSERT_EQ(fi_poll_add(cqs, &b.rx.cq->fid, 0), 0);
	ASSERT_EQ(fi_poll_add(cntrs, &cntr->fid, 0), 0);
	void* ctx[4];
	EXPECT_EQ(fi_poll(cqs, ctx, 4), 0) << "news before anything happened";
	Buf* r = w.NewBuf(1, 16);
	fi_context2* rc = w.Ctx();
	CONF_POST(fi_recv(b.ep, r->p, 16, r->desc, FI_ADDR_UNSPEC, rc));
	Buf* s = w.NewBuf(0, 8);
	CONF_POST(fi_send(a.ep, s->p, 8, s->desc, a.peer(1), w.Ctx()));
	int n = 0;
	auto start = std::chrono::steady_clock::now();
	while (!n && std::chrono::steady_clock::now() - start <
			     std::chrono::milliseconds(TimeoutMs())) {
		n = fi_poll(cqs, ctx, 4);
		w.PollAll();
	}
	ASSERT_EQ(n, 1) << "the completion never showed: " << Err(n);
	EXPECT_EQ(ctx[0], b.rx.cq->fid.context);
	EXPECT_EQ(fi_close(&b.rx.cq->fid), -FI_EBUSY) << "in a poll set";
	fi_cq_tagged_entry e;
	ASSERT_EQ(fi_cq_read(b.rx.cq, &e, 1), 1);
	EXPECT_EQ(e.op_context, rc);
	EXPECT_EQ(fi_poll(cqs, ctx, 4), 0) << "news after all was read";
	// The counter moved once: one poll says so, the next does not.
	EXPECT_EQ(fi_poll(cntrs, ctx, 4), 1);
	EXPECT_EQ(ctx[0], cntr->fid.context);
	EXPECT_EQ(fi_poll(cntrs, ctx, 4), 0);
	EXPECT_EQ(fi_poll_del(cqs, &b.rx.cq->fid, 0), 0);
	EXPECT_EQ(fi_poll_del(cntrs, &cntr->fid, 0), 0);
	EXPECT_EQ(fi_close(&cqs->fid), 0);
	EXPECT_EQ(fi_close(&cntrs->fid), 0);
}

// An error entry on top: fi_cq_read returns -FI_EAVAIL until
// fi_cq_readerr takes it; fi_cq_readerr returns 1, then -FI_EAGAIN.
TEST_F(CqTest, ErrorEntryReportsEAVAILThenReaderr)
{
	Cq& rx = w.node(1).rx;
	rx.manual = true;
	int want = 0;
	fi_context2* rc = CancelledReceive(&want);
	ASSERT_NE(want, 0);
	fi_cq_tagged_entry e;
	ASSERT_EQ(ReadRaw(rx, &e, 1), -FI_EAVAIL);
	EXPECT_EQ(fi_cq_read(rx.cq, &e, 1), -FI_EAVAIL)
		<< "the error entry stays until fi_cq_readerr";
	fi_cq_err_entry err;
	memset(&err, 0, sizeof(err));
	ASSERT_EQ(fi_cq_readerr(rx.cq, &err, 0), 1);
	EXPECT_EQ(err.err, want) << fi_strerror(err.err);
	EXPECT_EQ(err.op_context, rc);
	char buf[128];
	const char* s = fi_cq_strerror(rx.cq, err.prov_errno, err.err_data,
				       buf, sizeof(buf));
	EXPECT_NE(s, nullptr) << "fi_cq_strerror returns a string";
	memset(&err, 0, sizeof(err));
	EXPECT_EQ(fi_cq_readerr(rx.cq, &err, 0), -FI_EAGAIN);
	EXPECT_EQ(fi_cq_read(rx.cq, &e, 1), -FI_EAGAIN);
}

// fi_cq_readerr with a caller's err_data buffer (err_data_size > 0).
TEST_F(CqTest, ReaderrWithCallerErrDataBuffer)
{
	Cq& rx = w.node(1).rx;
	rx.manual = true;
	int want = 0;
	fi_context2* rc = CancelledReceive(&want);
	ASSERT_NE(want, 0);
	fi_cq_tagged_entry e;
	ASSERT_EQ(ReadRaw(rx, &e, 1), -FI_EAVAIL);
	uint8_t data[64];
	fi_cq_err_entry err;
	memset(&err, 0, sizeof(err));
	err.err_data = data;
	err.err_data_size = sizeof(data);
	ASSERT_EQ(fi_cq_readerr(rx.cq, &err, 0), 1);
	EXPECT_EQ(err.err, want) << fi_strerror(err.err);
	EXPECT_EQ(err.op_context, rc);
	EXPECT_LE(err.err_data_size, sizeof(data));
	if (err.err_data_size > 0) {
		EXPECT_EQ(err.err_data, (void*)data)
			<< "err_data must point to the caller's buffer";
	}
}

// ---- Blocking reads --------------------------------------------------------------

class CqWaitTest : public RdmTest {
      protected:
	void SetUp() override
	{
		Options o;
		// FI_SOURCE for SreadfromReturnsTheSource; connected
		// endpoints have no source addresses to report.
		if (!MsgMode())
			o.caps = FI_MSG | FI_TAGGED | FI_SOURCE;
		o.cq_wait = FI_WAIT_UNSPEC;
		Open(o);
		if (!w.info)
			return;
		w.node(1).rx.manual = true;
	}
	// fi_cq_sread[from] in 100 ms slices with progress on the other CQs
	// between them, until something other than -FI_EAGAIN, bounded.
	ssize_t SreadRaw(Cq& cq, fi_cq_tagged_entry* e, fi_addr_t* src)
	{
		auto start = std::chrono::steady_clock::now();
		ssize_t r = -FI_EAGAIN;
		while (std::chrono::steady_clock::now() - start <
		       std::chrono::milliseconds(TimeoutMs())) {
			r = src ? fi_cq_sreadfrom(cq.cq, e, 1, src, nullptr, 100)
				: fi_cq_sread(cq.cq, e, 1, nullptr, 100);
			if (r != -FI_EAGAIN)
				return r;
			w.PollAll();
		}
		return r;
	}
};

TEST_F(CqWaitTest, SreadTimesOutWithEAGAIN)
{
	fi_cq_tagged_entry e;
	auto start = std::chrono::steady_clock::now();
	ssize_t r = fi_cq_sread(w.node(1).rx.cq, &e, 1, nullptr, 200);
	auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
			  std::chrono::steady_clock::now() - start)
			  .count();
	EXPECT_EQ(r, -FI_EAGAIN) << Err(r);
	EXPECT_LT(ms, TimeoutMs()) << "a 200 ms timeout took " << ms << " ms";
	fi_addr_t src;
	r = fi_cq_sreadfrom(w.node(1).rx.cq, &e, 1, &src, nullptr, 50);
	EXPECT_EQ(r, -FI_EAGAIN) << Err(r);
}

TEST_F(CqWaitTest, SreadReturnsACompletion)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* s = w.NewBuf(0, 16);
	Buf* r = w.NewBuf(1, 16);
	s->Fill(2);
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	CONF_POST(fi_recv(b.ep, r->p, 16, r->desc, FI_ADDR_UNSPEC, rc));
	CONF_POST(fi_send(a.ep, s->p, 16, s->desc, a.peer(1), sc));
	fi_cq_tagged_entry e;
	ASSERT_EQ(SreadRaw(b.rx, &e, nullptr), 1);
	EXPECT_EQ(e.op_context, rc);
	EXPECT_EQ(e.len, 16u);
	EXPECT_TRUE(r->Check(2, 16));
	w.Expect(a.tx, sc);
}

TEST_F(CqWaitTest, SreadfromReturnsTheSource)
{
	CONF_SKIP_IF_MSG("source addresses (FI_SOURCE) are fi_addr_t of an "
			 "AV: connected endpoints have neither");
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* s = w.NewBuf(0, 16);
	Buf* r = w.NewBuf(1, 16);
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	CONF_POST(fi_recv(b.ep, r->p, 16, r->desc, FI_ADDR_UNSPEC, rc));
	CONF_POST(fi_send(a.ep, s->p, 16, s->desc, a.peer(1), sc));
	fi_cq_tagged_entry e;
	fi_addr_t src = kUntouchedAddr;
	ASSERT_EQ(SreadRaw(b.rx, &e, &src), 1);
	EXPECT_EQ(e.op_context, rc);
	EXPECT_EQ(src, b.peer(0));
	w.Expect(a.tx, sc);
}

TEST_F(CqWaitTest, SreadReportsEAVAILForAnErrorEntry)
{
	Node& b = w.node(1);
	Buf* r = w.NewBuf(1, 16);
	fi_context2* rc = w.Ctx();
	CONF_POST(fi_recv(b.ep, r->p, 16, r->desc, FI_ADDR_UNSPEC, rc));
	int want = FailReceive(w, 1, 0, rc, 16);
	ASSERT_NE(want, 0);
	fi_cq_tagged_entry e;
	ASSERT_EQ(SreadRaw(b.rx, &e, nullptr), -FI_EAVAIL);
	fi_cq_err_entry err;
	memset(&err, 0, sizeof(err));
	ASSERT_EQ(fi_cq_readerr(b.rx.cq, &err, 0), 1);
	EXPECT_EQ(err.err, want) << fi_strerror(err.err);
	EXPECT_EQ(err.op_context, rc);
}

// fi_cq_sread with no timeout on `cq`, for tests where only fi_cq_signal
// can end it (a provider whose timeouts pass in virtual time would
// otherwise return at its timeout all the same); one that ignores the
// signal fails after 10 s rather than hanging the suite.
static ssize_t SreadOnlyASignalEnds(fid_cq* cq)
{
	std::atomic<bool> returned{false};
	std::thread watchdog([&] {
		for (int i = 0; i < 1000 && !returned; i++)
			std::this_thread::sleep_for(
				std::chrono::milliseconds(10));
		if (!returned) {
			fprintf(stderr, "fi_cq_signal did not end fi_cq_sread "
					"(no timeout) within 10 s\n");
			abort();
		}
	});
	fi_cq_tagged_entry e;
	ssize_t r = fi_cq_sread(cq, &e, 1, nullptr, -1);
	returned = true;
	watchdog.join();
	return r;
}

// fi_cq_signal wakes a thread blocked in fi_cq_sread, which then returns
// -FI_EAGAIN (nothing to read).
TEST_F(CqWaitTest, SignalWakesABlockedSread)
{
	CONF_SKIP_IF_DEVIATION("cq.signal_sread_eagain");
	fid_cq* cq = w.node(1).rx.cq;
	int signal_ret = 1;
	std::thread t([&] {
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
		signal_ret = fi_cq_signal(cq);
	});
	ssize_t r = SreadOnlyASignalEnds(cq);
	t.join();
	EXPECT_EQ(signal_ret, 0) << Err(signal_ret);
	EXPECT_EQ(r, -FI_EAGAIN) << Err(r);
}

// A signal while no thread waits is kept: the next fi_cq_sread returns at
// once (fabtests' cq_test, cq_signal: -FI_EAGAIN or -FI_ECANCELED).
TEST_F(CqWaitTest, ASignalWithNobodyWaitingEndsTheNextSread)
{
	fid_cq* cq = w.node(1).rx.cq;
	ASSERT_EQ(fi_cq_signal(cq), 0);
	ssize_t r = SreadOnlyASignalEnds(cq);
	EXPECT_TRUE(r == -FI_EAGAIN || r == -FI_ECANCELED) << Err(r);
}

// ---- Opening ----------------------------------------------------------------------

TEST_F(CqTest, UnspecifiedFormatAndSizeOpen)
{
	fi_cq_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.format = FI_CQ_FORMAT_UNSPEC;
	int ctx;
	fid_cq* cq = nullptr;
	CONF_OK(fi_cq_open(w.node(0).domain, &attr, &cq, &ctx));
	EXPECT_EQ(cq->fid.context, &ctx);
	EXPECT_EQ(cq->fid.fclass, (size_t)FI_CLASS_CQ);
	EXPECT_EQ(fi_close(&cq->fid), 0);
}

}  // namespace
}  // namespace conf
