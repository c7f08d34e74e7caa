// Native wait objects (FI_WAIT_FD) and fi_trywait, used as fi_poll(3)
// "fi_trywait" shows: obtain the descriptor with fi_control(FI_GETWAIT)
// (fi_control(3), fi_cq(3), fi_cntr(3), fi_eq(3)), and loop { if
// (fi_trywait(...) == FI_SUCCESS) poll(fd); read everything }.
//
// fi_poll(3): "fi_trywait() will return FI_SUCCESS if it is safe to block
// on the wait object(s) corresponding to the fabric descriptor(s), or
// -FI_EAGAIN if there are events queued on the fabric descriptor or if
// blocking could hang the application."
//
// Every wait is bounded: poll(2) gets what is left of CONFORMANCE_TIMEOUT_MS,
// and a descriptor that stays silent after fi_trywait allowed blocking,
// while the awaited event was sent, fails the test (a missing wakeup).
//
// The peer sends from a thread of its own, each message only once the
// receiver is blocked in poll(2) (so every wakeup is exercised), as another
// process would. The two threads take turns in the library (one mutex
// around every fabric call, whatever the domain's threading model); poll(2)
// is called without it.
#include <poll.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "harness.h"

namespace conf {
namespace {

using Clock = std::chrono::steady_clock;

int RemainingMs(Clock::time_point start)
{
	auto el = std::chrono::duration_cast<std::chrono::milliseconds>(
			  Clock::now() - start)
			  .count();
	long left = (long)TimeoutMs() - (long)el;
	return left > 0 ? (int)left : 0;
}

// fi_control(3) FI_GETWAIT: "Returns the low-level wait object associated
// with the ... fid", here an int file descriptor (FI_WAIT_FD).
::testing::AssertionResult GetFd(fid_t f, int* fd)
{
	*fd = -1;
	int r = fi_control(f, FI_GETWAIT, fd);
	if (r)
		return ::testing::AssertionFailure()
		       << "fi_control(FI_GETWAIT): " << Err(r);
	if (*fd < 0 || fcntl(*fd, F_GETFD) == -1)
		return ::testing::AssertionFailure()
		       << "fi_control(FI_GETWAIT) gave " << *fd
		       << ", not an open file descriptor";
	return ::testing::AssertionSuccess();
}

// The receiving side of fi_poll(3)'s loop, until have() reaches want:
//   if (fi_trywait(fabric, &obj, 1) == FI_SUCCESS) poll(fd);
//   read_all();
// *blocked_at is have() while the loop is blocked in poll(2), -1
// otherwise (the sender watches it). Fails on any other fi_trywait result,
// on a poll(2) that times out (a missing wakeup) and on the overall bound.
class Receiver {
      public:
	Receiver(fid_fabric* fabric, fid_t obj, int fd, std::mutex* mu)
	    : fabric_(fabric), obj_(obj), fd_(fd), mu_(mu)
	{
	}
	std::atomic<long> blocked_at{-1};
	std::atomic<bool> stop{false};  // set when the loop gives up
	long blocks = 0;                // times fi_trywait allowed blocking

	::testing::AssertionResult Run(const std::function<long()>& read_all,
				       const std::function<long()>& have,
				       long want)
	{
		auto start = Clock::now();
		auto fail = [&](const std::string& why) {
			stop = true;
			return ::testing::AssertionFailure()
			       << why << " (" << have() << " of " << want
			       << " after " << blocks << " block(s))";
		};
		while (have() < want) {
			if (RemainingMs(start) == 0)
				return fail("timed out");
			int r;
			{
				std::lock_guard<std::mutex> g(*mu_);
				fid_t fids[1] = {obj_};
				r = fi_trywait(fabric_, fids, 1);
			}
			if (r == FI_SUCCESS) {
				blocks++;
				blocked_at = have();
				pollfd p = {fd_, POLLIN, 0};
				int n = poll(&p, 1, RemainingMs(start));
				blocked_at = -1;
				if (n == 0)
					return fail(
						"fi_trywait returned FI_SUCCESS "
						"but the descriptor never became "
						"readable: a missing wakeup");
				if (n < 0 && errno != EINTR)
					return fail(std::string("poll: ") +
						    strerror(errno));
			} else if (r != -FI_EAGAIN) {
				return fail("fi_trywait: " + Err(r));
			}
			long got;
			do {
				std::lock_guard<std::mutex> g(*mu_);
				got = read_all();
			} while (got > 0);
			if (got < 0)
				return fail("read: " + Err(got));
		}
		return ::testing::AssertionSuccess();
	}

      private:
	fid_fabric* fabric_;
	fid_t obj_;
	int fd_;
	std::mutex* mu_;
};

// The peer: node 0 sends kN messages of kLen bytes (message i filled with
// seed i) to node 1, message i only once the receiver is blocked having
// seen i of them, each send completed (node 0's tx CQ) before the next.
// Runs in a thread; what went wrong is left in error.
constexpr int kN = 6;
constexpr size_t kLen = 300;

struct Sender {
	World* w = nullptr;
	std::mutex* mu = nullptr;
	Receiver* rx = nullptr;
	std::vector<Buf*> bufs;
	std::string error;

	void Run()
	{
		Node& a = w->node(0);
		auto start = Clock::now();
		for (int i = 0; i < kN && error.empty(); i++) {
			while (rx->blocked_at.load() != i) {
				if (rx->stop || RemainingMs(start) == 0) {
					error = "the receiver never blocked "
						"(fi_trywait never returned "
						"FI_SUCCESS) having " +
						std::to_string(i) +
						" message(s)";
					return;
				}
				std::this_thread::sleep_for(
					std::chrono::milliseconds(1));
			}
			// Let it reach poll(2).
			std::this_thread::sleep_for(
				std::chrono::milliseconds(2));
			long r;
			do {
				std::lock_guard<std::mutex> g(*mu);
				r = fi_send(a.ep, bufs[i]->p, kLen,
					    bufs[i]->desc, a.peer(1),
					    w->Ctx());
				if (r == -FI_EAGAIN)
					a.tx.Poll();
			} while (r == -FI_EAGAIN && !rx->stop &&
				 RemainingMs(start) > 0);
			if (r) {
				error = "fi_send: " + Err(r);
				return;
			}
			size_t want = (size_t)i + 1;
			while (a.tx.log.size() < want) {
				long n;
				{
					std::lock_guard<std::mutex> g(*mu);
					n = a.tx.Poll();
				}
				if (n < 0) {
					error = "tx cq: " + Err(n);
					return;
				}
				if (rx->stop || RemainingMs(start) == 0) {
					error = "send " + std::to_string(i) +
						" never completed";
					return;
				}
				if (n == 0)
					std::this_thread::yield();
			}
		}
	}
};

// ---- Completion queues ------------------------------------------------------------

class CqFdTest : public RdmTest {
      protected:
	void SetUp() override
	{
		Options o;
		o.cq_wait = FI_WAIT_FD;
		CONF_OPEN(o);
		// This test reads node 1's receive CQ itself.
		w.node(1).rx.manual = true;
	}
};

// fi_cq(3) wait_obj FI_WAIT_FD: "Indicates that the CQ should use a file
// descriptor as its wait mechanism"; fi_control(3) FI_GETWAIT returns it.
TEST_F(CqFdTest, GetwaitGivesAnOpenDescriptor)
{
	if (IsSkipped() || HasFatalFailure())
		return;
	for (int i = 0; i < 2; i++)
		for (Cq* cq : {&w.node(i).tx, &w.node(i).rx}) {
			int fd;
			EXPECT_TRUE(GetFd(&cq->cq->fid, &fd))
				<< "node " << i << " " << cq->name;
		}
	int a, b;
	ASSERT_TRUE(GetFd(&w.node(1).rx.cq->fid, &a));
	ASSERT_TRUE(GetFd(&w.node(1).tx.cq->fid, &b));
	EXPECT_NE(a, b) << "two CQs share one descriptor";
}

// fi_poll(3) fi_trywait: the receiver blocks on its CQ's descriptor with
// fi_trywait + poll(2) + fi_cq_read, and gets every message, intact.
TEST_F(CqFdTest, ReceiverBlockingOnTheDescriptorGetsEveryMessage)
{
	if (IsSkipped() || HasFatalFailure())
		return;
	Node& b = w.node(1);
	std::mutex mu;
	int fd;
	ASSERT_TRUE(GetFd(&b.rx.cq->fid, &fd));
	std::vector<Buf*> rbufs;
	std::vector<fi_context2*> rctx;
	for (int i = 0; i < kN; i++) {
		rbufs.push_back(w.NewBuf(1, kLen));
		memset(rbufs[i]->p, 0, kLen);
		rctx.push_back(w.Ctx());
		CONF_POST(fi_recv(b.ep, rbufs[i]->p, kLen, rbufs[i]->desc,
				  FI_ADDR_UNSPEC, rctx[i]));
	}
	Receiver rx(w.fabric, &b.rx.cq->fid, fd, &mu);
	Sender s;
	s.w = &w;
	s.mu = &mu;
	s.rx = &rx;
	for (int i = 0; i < kN; i++) {
		s.bufs.push_back(w.NewBuf(0, kLen));
		s.bufs[i]->Fill((uint8_t)(0x40 + i));
	}
	std::thread t([&] { s.Run(); });
	auto ok = rx.Run([&] { return b.rx.Poll(); },
			 [&] { return (long)b.rx.log.size(); }, kN);
	t.join();
	EXPECT_TRUE(ok);
	EXPECT_EQ(s.error, "");
	ASSERT_EQ(b.rx.log.size(), (size_t)kN);
	for (int i = 0; i < kN; i++) {
		const Completion& c = b.rx.log[i];
		SCOPED_TRACE("message " + std::to_string(i));
		EXPECT_FALSE(c.error) << Describe(c);
		EXPECT_EQ(c.op_context, rctx[i]) << Describe(c);
		EXPECT_EQ(c.len, kLen) << Describe(c);
		EXPECT_TRUE(rbufs[i]->Check((uint8_t)(0x40 + i), kLen))
			<< "received bytes differ from the sent ones";
	}
	EXPECT_GE(rx.blocks, kN) << "each message was sent while blocked";
}

// fi_poll(3): "The following types of fabric descriptors may be passed
// into fi_trywait: event queues, completion queues, counters, and wait
// sets." An endpoint is none of them: the call fails, it does not say
// "safe to block".
TEST_F(CqFdTest, TrywaitRejectsAnEndpoint)
{
	if (IsSkipped() || HasFatalFailure())
		return;
	CONF_SKIP_IF_DEVIATION("wait.trywait_endpoint");
	fid_t fids[2] = {&w.node(1).rx.cq->fid, &w.node(1).ep->fid};
	EXPECT_EQ(fi_trywait(w.fabric, fids, 2), -FI_EINVAL);
}

// fi_poll(3): fi_trywait returns "-FI_EAGAIN if there are events queued on
// the fabric descriptor"; once the application has read them and nothing
// else is pending, it is safe to block again (FI_SUCCESS).
TEST_F(CqFdTest, TrywaitIsEAGAINWhileACompletionIsUnread)
{
	if (IsSkipped() || HasFatalFailure())
		return;
	CONF_SKIP_IF_DEVIATION("wait.cq_trywait_queued");
	Node& a = w.node(0);
	Node& b = w.node(1);
	int fd;
	ASSERT_TRUE(GetFd(&b.rx.cq->fid, &fd));
	Buf* r = w.NewBuf(1, 64);
	Buf* s = w.NewBuf(0, 64);
	s->Fill(9);
	fi_context2* rc = w.Ctx();
	CONF_POST(fi_recv(b.ep, r->p, 64, r->desc, FI_ADDR_UNSPEC, rc));
	CONF_POST(fi_send(a.ep, s->p, 64, s->desc, a.peer(1), w.Ctx()));
	ASSERT_TRUE(w.WaitFor(a.tx, 1));
	// Wait for the completion to be queued without reading it: block as
	// fi_poll(3) says until fi_trywait reports something queued.
	fid_t fids[1] = {&b.rx.cq->fid};
	auto start = Clock::now();
	int ret;
	while ((ret = fi_trywait(w.fabric, fids, 1)) == FI_SUCCESS) {
		ASSERT_GT(RemainingMs(start), 0)
			<< "fi_trywait kept returning FI_SUCCESS with a "
			   "completion queued (the descriptor was readable)";
		pollfd p = {fd, POLLIN, 0};
		int n = poll(&p, 1, RemainingMs(start));
		ASSERT_GT(n, 0) << "no wakeup for a completion (poll: "
				<< (n ? strerror(errno) : "timed out") << ")";
	}
	ASSERT_EQ(ret, -FI_EAGAIN) << Err(ret);
	// Nothing consumed it: it is still queued.
	EXPECT_EQ(fi_trywait(w.fabric, fids, 1), -FI_EAGAIN);
	EXPECT_EQ(fi_trywait(w.fabric, fids, 1), -FI_EAGAIN);
	fi_cq_tagged_entry e[2];
	ASSERT_EQ(fi_cq_read(b.rx.cq, e, 2), 1);
	EXPECT_EQ(e[0].op_context, rc);
	EXPECT_TRUE(r->Check(9, 64));
	EXPECT_EQ(fi_cq_read(b.rx.cq, e, 2), -FI_EAGAIN);
	EXPECT_EQ(fi_trywait(w.fabric, fids, 1), FI_SUCCESS)
		<< "read empty, nothing else pending";
}

// ---- Counters ---------------------------------------------------------------------

class CntrFdTest : public RdmTest {
      protected:
	// fi_cntr(3) wait_obj FI_WAIT_FD: "the counter should use a file
	// descriptor as its wait mechanism".
	bool OpenWithFdCounter()
	{
		Options o;
		o.cntr_events = FI_RECV;
		o.cntr_wait = FI_WAIT_FD;
		if (!w.Open(o) || HasFatalFailure() || IsSkipped())
			return false;
		w.node(1).rx.manual = true;
		c_ = w.node(1).counter(FI_RECV);
		return c_ && GetFd(&c_->fid, &fd_);
	}
	fid_cntr* c_ = nullptr;
	int fd_ = -1;
};

// fi_poll(3) fi_trywait with a counter ("The following types of fabric
// descriptors may be passed into fi_trywait: event queues, completion
// queues, counters, and wait sets"): a loop of fi_trywait + poll(2) +
// fi_cntr_read reaches the number of receives completed (fi_cntr(3),
// fi_ep_bind FI_RECV).
TEST_F(CntrFdTest, ReceiverBlockingOnTheDescriptorCountsEveryMessage)
{
	if (!OpenWithFdCounter())
		return;
	Node& b = w.node(1);
	std::mutex mu;
	for (int i = 0; i < kN; i++) {
		Buf* r = w.NewBuf(1, kLen);
		CONF_POST(fi_recv(b.ep, r->p, kLen, r->desc, FI_ADDR_UNSPEC,
				  w.Ctx()));
	}
	Receiver rx(w.fabric, &c_->fid, fd_, &mu);
	Sender s;
	s.w = &w;
	s.mu = &mu;
	s.rx = &rx;
	for (int i = 0; i < kN; i++)
		s.bufs.push_back(w.NewBuf(0, kLen));
	uint64_t value = 0;
	std::thread t([&] { s.Run(); });
	// fi_cntr_read is the read: nothing more to read after one call.
	auto ok = rx.Run([&] { value = fi_cntr_read(c_); return 0L; },
			 [&] { return (long)value; }, kN);
	t.join();
	EXPECT_TRUE(ok);
	EXPECT_EQ(s.error, "");
	EXPECT_EQ(fi_cntr_read(c_), (uint64_t)kN);
	EXPECT_EQ(fi_cntr_readerr(c_), 0u);
	EXPECT_GE(rx.blocks, kN) << "each message was sent while blocked";
}

// A change the application has not read is an event still queued on the
// counter (fi_poll(3): -FI_EAGAIN "if there are events queued"); once read,
// blocking is safe again until the next change.
TEST_F(CntrFdTest, TrywaitIsEAGAINUntilAChangeIsRead)
{
	CONF_SKIP_IF_DEVIATION("wait.cntr_trywait_unread");
	if (!OpenWithFdCounter())
		return;
	fid_t fids[1] = {&c_->fid};
	EXPECT_EQ(fi_cntr_read(c_), 0u);
	EXPECT_EQ(fi_cntr_readerr(c_), 0u);
	EXPECT_EQ(fi_trywait(w.fabric, fids, 1), FI_SUCCESS)
		<< "nothing happened";
	CONF_OK(fi_cntr_add(c_, 2));
	EXPECT_EQ(fi_trywait(w.fabric, fids, 1), -FI_EAGAIN)
		<< "the counter changed and was not read";
	EXPECT_EQ(fi_cntr_read(c_), 2u);
	EXPECT_EQ(fi_trywait(w.fabric, fids, 1), FI_SUCCESS)
		<< "the change was read";
}

// ---- Event queues -------------------------------------------------------------------

class EqFdTest : public RdmTest {
      protected:
	void SetUp() override
	{
		Options o;
		o.endpoints = false;
		CONF_OPEN(o);
	}
	void TearDown() override
	{
		if (eq_) {
			EXPECT_EQ(fi_close(&eq_->fid), 0);
		}
		RdmTest::TearDown();
	}
	// fi_eq(3) wait_obj FI_WAIT_FD, and FI_WRITE for fi_eq_write.
	bool OpenFdEq()
	{
		fi_eq_attr attr;
		memset(&attr, 0, sizeof(attr));
		attr.wait_obj = FI_WAIT_FD;
		attr.flags = FI_WRITE;
		int r = fi_eq_open(w.fabric, &attr, &eq_, nullptr);
		EXPECT_EQ(r, 0) << "fi_eq_open(FI_WAIT_FD): " << Err(r);
		if (r) {
			eq_ = nullptr;
			return false;
		}
		return GetFd(&eq_->fid, &fd_);
	}
	fid_eq* eq_ = nullptr;
	int fd_ = -1;
};

// fi_poll(3) fi_trywait on an event queue: -FI_EAGAIN while an event
// written with fi_eq_write (fi_eq(3)) is queued; fi_eq_read returns it.
TEST_F(EqFdTest, TrywaitIsEAGAINWhileAnEventIsQueued)
{
	if (IsSkipped() || HasFatalFailure())
		return;
	CONF_SKIP_IF_DEVIATION("wait.eq_trywait_queued");
	ASSERT_TRUE(OpenFdEq());
	fid_t fids[1] = {&eq_->fid};
	EXPECT_EQ(fi_trywait(w.fabric, fids, 1), FI_SUCCESS) << "empty EQ";
	int ctx;
	fi_eq_entry in = {&eq_->fid, &ctx, 0xfd};
	ASSERT_EQ(fi_eq_write(eq_, FI_NOTIFY, &in, sizeof(in), 0),
		  (ssize_t)sizeof(in));
	EXPECT_EQ(fi_trywait(w.fabric, fids, 1), -FI_EAGAIN)
		<< "an event is queued";
	EXPECT_EQ(fi_trywait(w.fabric, fids, 1), -FI_EAGAIN)
		<< "an event is still queued";
	uint32_t event = 0;
	fi_eq_entry out;
	memset(&out, 0, sizeof(out));
	ASSERT_EQ(fi_eq_read(eq_, &event, &out, sizeof(out), 0),
		  (ssize_t)sizeof(out));
	EXPECT_EQ(event, (uint32_t)FI_NOTIFY);
	EXPECT_EQ(out.fid, &eq_->fid);
	EXPECT_EQ(out.context, &ctx);
	EXPECT_EQ(out.data, 0xfdu);
	EXPECT_EQ(fi_trywait(w.fabric, fids, 1), FI_SUCCESS)
		<< "the event was read";
}

// The descriptor of an EQ a thread blocks on (after fi_trywait) becomes
// readable when another thread writes an event (fi_eq(3) fi_eq_write).
TEST_F(EqFdTest, WrittenEventWakesABlockedReader)
{
	if (IsSkipped() || HasFatalFailure())
		return;
	ASSERT_TRUE(OpenFdEq());
	std::mutex mu;
	Receiver rx(w.fabric, &eq_->fid, fd_, &mu);
	std::string error;
	std::thread t([&] {
		auto start = Clock::now();
		while (rx.blocked_at.load() != 0) {
			if (rx.stop || RemainingMs(start) == 0) {
				error = "the reader never blocked";
				return;
			}
			std::this_thread::sleep_for(
				std::chrono::milliseconds(1));
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(2));
		std::lock_guard<std::mutex> g(mu);
		fi_eq_entry in = {&eq_->fid, nullptr, 0xabc};
		ssize_t n = fi_eq_write(eq_, FI_NOTIFY, &in, sizeof(in), 0);
		if (n != (ssize_t)sizeof(in))
			error = "fi_eq_write: " + Err(n);
	});
	long got = 0;
	uint64_t data = 0;
	auto ok = rx.Run(
		[&]() -> long {
			uint32_t event;
			fi_eq_entry out;
			ssize_t n = fi_eq_read(eq_, &event, &out, sizeof(out),
					       0);
			if (n == -FI_EAGAIN)
				return 0;
			if (n != (ssize_t)sizeof(out))
				return n < 0 ? n : -FI_EOTHER;
			got++;
			data = out.data;
			return 1;
		},
		[&] { return got; }, 1);
	t.join();
	EXPECT_TRUE(ok);
	EXPECT_EQ(error, "");
	EXPECT_EQ(data, 0xabcu);
	EXPECT_GE(rx.blocks, 1);
}

}  // namespace
}  // namespace conf
