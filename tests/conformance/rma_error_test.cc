// RMA protection errors: a key the target never issued, an address outside
// the region, a region without the access asked for, and (FI_MR_LOCAL) a
// local buffer without a valid descriptor. Each must fail -- as an error
// return or an error completion at the initiator -- never succeed, hang or
// crash; the target's endpoint keeps working.
//
// fi_rma(3) names no error code for these. The suite accepts the codes of
// fi_errno(3) that describe a protection failure (see IsAccessError) and
// prints the one returned.
#include <cstring>

#include "harness.h"

namespace conf {
namespace {

bool IsAccessError(int e)
{
	return e == FI_EACCES || e == FI_EKEYREJECTED || e == FI_ENOKEY ||
	       e == FI_EINVAL || e == FI_EREMOTEIO || e == FI_EIO ||
	       e == FI_EFAULT;
}

class RmaErrorTest : public RdmTest {
      protected:
	void SetUp() override
	{
		Options o;
		o.caps = FI_MSG | FI_RMA;
		o.nodes = 3;
		Open(o);
	}
	// Posts an operation that must be refused; returns the positive error
	// code (an immediate return or the initiator's error completion), or
	// 0 after failing the test if it succeeded.
	int Refused(const std::function<long()>& post, fi_context2* ctx)
	{
		long r = PostRetry(w, post);
		if (r < 0) {
			std::printf("refused at post: %s\n", Err(r).c_str());
			return (int)-r;
		}
		Cq& tx = w.node(0).tx;
		::testing::AssertionResult ok = w.WaitFor(tx, 1);
		if (!ok) {
			ADD_FAILURE() << ok.message();
			return 0;
		}
		Completion c = tx.Take();
		if (!c.error) {
			ADD_FAILURE() << "the operation succeeded: " << Describe(c);
			return 0;
		}
		EXPECT_EQ(c.op_context, ctx) << Describe(c);
		std::printf("refused with %s\n", Describe(c).c_str());
		return c.err;
	}
	// Node 2 can still send to node 1 (the target).
	void TargetStillWorks()
	{
		Node& b = w.node(1);
		Node& c = w.node(2);
		Buf* r = w.NewBuf(1, 16);
		Buf* s = w.NewBuf(2, 16);
		s->Fill(99);
		fi_context2* rc = w.Ctx();
		CONF_POST(fi_recv(b.Ep(2), r->p, 16, r->desc, b.peer(2), rc));
		CONF_POST(fi_send(c.Ep(1), s->p, 16, s->desc, c.peer(1),
				  w.Ctx()));
		w.Expect(b.rx, rc);
		EXPECT_TRUE(r->Check(99, 16));
	}
};

TEST_F(RmaErrorTest, WriteWithUnknownKey)
{
	CONF_SKIP_IF_DEVIATION("rma.bad_key");
	Node& a = w.node(0);
	Buf* target = w.NewBuf(1, 256, kLocalAccess | kRemoteAccess);
	Buf* src = w.NewBuf(0, 64);
	src->Fill(1);
	fi_context2* ctx = w.Ctx();
	uint64_t bad = w.BadKey(target);
	int e = Refused([&] {
		return fi_write(a.ep, src->p, 64, src->desc, a.peer(1),
				target->raddr(), bad, ctx);
	}, ctx);
	EXPECT_TRUE(IsAccessError(e)) << Err(e);
	EXPECT_EQ(target->p[0], 0) << "the write landed";
	TargetStillWorks();
}

TEST_F(RmaErrorTest, ReadWithUnknownKey)
{
	CONF_SKIP_IF_DEVIATION("rma.bad_key");
	Node& a = w.node(0);
	Buf* target = w.NewBuf(1, 256, kLocalAccess | kRemoteAccess);
	target->Fill(2);
	Buf* dst = w.NewBuf(0, 64);
	fi_context2* ctx = w.Ctx();
	uint64_t bad = w.BadKey(target);
	int e = Refused([&] {
		return fi_read(a.ep, dst->p, 64, dst->desc, a.peer(1),
			       target->raddr(), bad, ctx);
	}, ctx);
	EXPECT_TRUE(IsAccessError(e)) << Err(e);
	TargetStillWorks();
}

// The region is the first 4 KiB of an 8 KiB buffer; a write straddling its
// end must not touch the memory beyond.
TEST_F(RmaErrorTest, WritePastTheRegionEnd)
{
	CONF_SKIP_IF_DEVIATION("rma.bounds");
	Node& a = w.node(0);
	Buf* mem = w.NewBuf(1, 8192);
	Buf* region = w.View(1, mem, 0, 4096, kLocalAccess | kRemoteAccess);
	Buf* src = w.NewBuf(0, 64);
	src->Fill(3);
	fi_context2* ctx = w.Ctx();
	int e = Refused([&] {
		return fi_write(a.ep, src->p, 64, src->desc, a.peer(1),
				region->raddr(4096 - 8), region->key, ctx);
	}, ctx);
	EXPECT_TRUE(IsAccessError(e)) << Err(e);
	for (size_t i = 4096; i < 4096 + 64; i++)
		ASSERT_EQ(mem->p[i], 0) << "wrote past the region at " << i;
	TargetStillWorks();
}

TEST_F(RmaErrorTest, ReadPastTheRegionEnd)
{
	CONF_SKIP_IF_DEVIATION("rma.bounds");
	Node& a = w.node(0);
	Buf* mem = w.NewBuf(1, 8192);
	Buf* region = w.View(1, mem, 0, 4096, kLocalAccess | kRemoteAccess);
	Buf* dst = w.NewBuf(0, 64);
	fi_context2* ctx = w.Ctx();
	int e = Refused([&] {
		return fi_read(a.ep, dst->p, 64, dst->desc, a.peer(1),
			       region->raddr(4096 + 128), region->key, ctx);
	}, ctx);
	EXPECT_TRUE(IsAccessError(e)) << Err(e);
	TargetStillWorks();
}

TEST_F(RmaErrorTest, WriteToReadOnlyRegion)
{
	CONF_SKIP_IF_DEVIATION("rma.access");
	Node& a = w.node(0);
	Buf* mem = w.NewBuf(1, 4096);
	Buf* ro = w.View(1, mem, 0, 4096, FI_REMOTE_READ);
	Buf* src = w.NewBuf(0, 64);
	src->Fill(4);
	fi_context2* ctx = w.Ctx();
	int e = Refused([&] {
		return fi_write(a.ep, src->p, 64, src->desc, a.peer(1),
				ro->raddr(), ro->key, ctx);
	}, ctx);
	EXPECT_TRUE(IsAccessError(e)) << Err(e);
	EXPECT_EQ(mem->p[0], 0) << "a region without FI_REMOTE_WRITE was written";
	TargetStillWorks();
}

TEST_F(RmaErrorTest, ReadFromWriteOnlyRegion)
{
	CONF_SKIP_IF_DEVIATION("rma.access");
	Node& a = w.node(0);
	Buf* mem = w.NewBuf(1, 4096);
	mem->Fill(5);
	Buf* wo = w.View(1, mem, 0, 4096, FI_REMOTE_WRITE);
	Buf* dst = w.NewBuf(0, 64);
	fi_context2* ctx = w.Ctx();
	int e = Refused([&] {
		return fi_read(a.ep, dst->p, 64, dst->desc, a.peer(1),
			       wo->raddr(), wo->key, ctx);
	}, ctx);
	EXPECT_TRUE(IsAccessError(e)) << Err(e);
	EXPECT_FALSE(dst->Check(5, 64)) << "a region without FI_REMOTE_READ "
					   "was read";
	TargetStillWorks();
}

// ---- FI_MR_LOCAL --------------------------------------------------------------

// fi_mr(3) FI_MR_LOCAL: "applications must register all data buffers ...
// and provide a valid desc". (The FI_MR_HMEM paragraph's "valid or NULL"
// is read as applying to device memory.)
TEST_F(RmaErrorTest, LocalBufferWithoutDescriptor)
{
	if (!w.mr_local())
		GTEST_SKIP() << "mr_mode has no FI_MR_LOCAL: the provider does "
				"not require local descriptors";
	Node& a = w.node(0);
	Buf* target = w.NewBuf(1, 256, kLocalAccess | kRemoteAccess);
	Buf* src = w.NewBuf(0, 64);
	src->Fill(6);
	fi_context2* ctx = w.Ctx();
	int e = Refused([&] {
		return fi_write(a.ep, src->p, 64, nullptr, a.peer(1),
				target->raddr(), target->key, ctx);
	}, ctx);
	EXPECT_TRUE(IsAccessError(e)) << Err(e);
}

TEST_F(RmaErrorTest, LocalBufferOutsideItsDescriptor)
{
	if (!w.mr_local())
		GTEST_SKIP() << "mr_mode has no FI_MR_LOCAL: the provider does "
				"not require local descriptors";
	Node& a = w.node(0);
	Buf* target = w.NewBuf(1, 256, kLocalAccess | kRemoteAccess);
	Buf* other = w.NewBuf(0, 4096);      // registered, elsewhere
	Buf* src = w.NewBuf(0, 64);
	src->Fill(7);
	fi_context2* ctx = w.Ctx();
	int e = Refused([&] {
		return fi_write(a.ep, src->p, 64, other->desc, a.peer(1),
				target->raddr(), target->key, ctx);
	}, ctx);
	EXPECT_TRUE(IsAccessError(e)) << Err(e);
}

TEST_F(RmaErrorTest, ReceiveIntoBufferWithoutDescriptor)
{
	if (!w.mr_local())
		GTEST_SKIP() << "mr_mode has no FI_MR_LOCAL";
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* r = w.NewBuf(1, 64);
	fi_context2* rc = w.Ctx();
	long ret = PostRetry(w, [&] {
		return fi_recv(b.ep, r->p, 64, nullptr, FI_ADDR_UNSPEC, rc);
	});
	if (ret < 0) {
		EXPECT_TRUE(IsAccessError((int)-ret)) << Err(ret);
		return;
	}
	Buf* s = w.NewBuf(0, 64);
	CONF_POST(fi_send(a.ep, s->p, 64, s->desc, a.peer(1), w.Ctx()));
	Completion c = w.ExpectError(b.rx);
	EXPECT_TRUE(IsAccessError(c.err)) << Describe(c);
}

}  // namespace
}  // namespace conf
