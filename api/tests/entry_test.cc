// The shared entry points of fi_msg(3), fi_tagged(3), fi_rma(3) and
// fi_atomic(3) (fabsim/entry.h): each short form reaches the provider's one
// post with the arguments and flags the man pages give it. A fake provider
// records what its posts are told; the calls go through the public inline
// wrappers, as an application's do.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <fabsim/entry.h>

namespace {

// What the last post was told.
struct Seen {
	int calls = 0;
	bool inject_call = false;
	uint64_t flags = 0;
	size_t iov_count = 0;
	const void *base = nullptr;
	size_t len = 0;
	void *desc = nullptr;
	bool desc_null = false;
	fi_addr_t addr = 0;
	void *context = nullptr;
	uint64_t data = 0;
	uint64_t tag = 0, ignore = 0;
	bool write = false;
	uint64_t rma_addr = 0, rma_key = 0;
	size_t rma_len = 0;
	fabsim_atomic_kind kind = FABSIM_ATOMIC_WRITE;
	size_t compare_count = 0, result_count = 0;
	fi_datatype datatype = FI_INT8;
	fi_op op = FI_MIN;
};

Seen seen;
const uint64_t kTxDefaults = FI_COMPLETION | FI_REMOTE_CQ_DATA |
			     FI_TRANSMIT_COMPLETE | FI_MULTI_RECV;
const uint64_t kRxDefaults = FI_COMPLETION | FI_MULTI_RECV | FI_PEEK;
const uint64_t kSendFlags = FI_COMPLETION | FI_REMOTE_CQ_DATA | FI_INJECT |
			    FI_TRANSMIT_COMPLETE;
const uint64_t kRecvFlags = FI_COMPLETION | FI_MULTI_RECV;

uint64_t OpFlags(struct fid_ep *, uint64_t which)
{
	return which == FI_RECV ? kRxDefaults : kTxDefaults;
}

template <typename Msg>
void Record(const Msg *msg, uint64_t flags, bool inject_call)
{
	seen = Seen();
	seen.calls = 1;
	seen.flags = flags;
	seen.inject_call = inject_call;
	seen.iov_count = msg->iov_count;
	seen.desc_null = msg->desc == nullptr;
	seen.desc = msg->desc ? msg->desc[0] : nullptr;
	seen.addr = msg->addr;
	seen.context = msg->context;
}

void RecordIov(const struct iovec *iov)
{
	seen.base = iov[0].iov_base;
	seen.len = iov[0].iov_len;
}

ssize_t MsgSend(struct fid_ep *, const struct fi_msg *msg, uint64_t flags,
		bool inject_call)
{
	Record(msg, flags, inject_call);
	RecordIov(msg->msg_iov);
	seen.data = msg->data;
	return 0;
}

ssize_t MsgRecv(struct fid_ep *, const struct fi_msg *msg, uint64_t flags)
{
	Record(msg, flags, false);
	RecordIov(msg->msg_iov);
	return 0;
}

ssize_t TaggedSend(struct fid_ep *, const struct fi_msg_tagged *msg,
		   uint64_t flags, bool inject_call)
{
	Record(msg, flags, inject_call);
	RecordIov(msg->msg_iov);
	seen.data = msg->data;
	seen.tag = msg->tag;
	return 0;
}

ssize_t TaggedRecv(struct fid_ep *, const struct fi_msg_tagged *msg,
		   uint64_t flags)
{
	Record(msg, flags, false);
	RecordIov(msg->msg_iov);
	seen.tag = msg->tag;
	seen.ignore = msg->ignore;
	return 0;
}

ssize_t RmaPost(struct fid_ep *, bool write, const struct fi_msg_rma *msg,
		uint64_t flags, bool inject_call)
{
	Record(msg, flags, inject_call);
	RecordIov(msg->msg_iov);
	seen.write = write;
	seen.data = msg->data;
	EXPECT_EQ(msg->rma_iov_count, 1u);
	seen.rma_addr = msg->rma_iov[0].addr;
	seen.rma_len = msg->rma_iov[0].len;
	seen.rma_key = msg->rma_iov[0].key;
	return 0;
}

ssize_t AtomicPost(struct fid_ep *, fabsim_atomic_kind kind,
		   const struct fi_msg_atomic *msg,
		   const struct fabsim_ioc_list *compare,
		   const struct fabsim_ioc_list *result, uint64_t flags,
		   bool inject_call)
{
	Record(msg, flags, inject_call);
	seen.base = msg->msg_iov[0].addr;
	seen.len = msg->msg_iov[0].count;
	seen.kind = kind;
	seen.rma_addr = msg->rma_iov[0].addr;
	seen.rma_len = msg->rma_iov[0].count;
	seen.rma_key = msg->rma_iov[0].key;
	seen.compare_count = compare ? compare->count : 0;
	seen.result_count = result ? result->count : 0;
	seen.datatype = msg->datatype;
	seen.op = msg->op;
	return 0;
}

int AtomicValid(struct fid_ep *, fabsim_atomic_kind kind,
		fi_datatype datatype, fi_op op, size_t *count)
{
	seen = Seen();
	seen.calls = 1;
	seen.kind = kind;
	seen.datatype = datatype;
	seen.op = op;
	*count = 7;
	return 0;
}

struct fabsim_msg_ops msg_ops = {
	FABSIM_MSG_ENTRY_POINTS, MsgSend, MsgRecv, OpFlags, kSendFlags,
	kRecvFlags,
};
struct fabsim_tagged_ops tagged_ops = {
	FABSIM_TAGGED_ENTRY_POINTS, TaggedSend, TaggedRecv, OpFlags, kSendFlags,
	FI_COMPLETION,
};
struct fabsim_rma_ops rma_ops = {
	FABSIM_RMA_ENTRY_POINTS, RmaPost, OpFlags, kSendFlags,
};
struct fabsim_atomic_ops atomic_ops = {
	FABSIM_ATOMIC_ENTRY_POINTS, AtomicPost, AtomicValid, OpFlags,
	FI_COMPLETION | FI_INJECT,
};

class Entry : public ::testing::Test {
protected:
	void SetUp() override
	{
		std::memset(&ep_, 0, sizeof(ep_));
		ep_.msg = &msg_ops.ops;
		ep_.tagged = &tagged_ops.ops;
		ep_.rma = &rma_ops.ops;
		ep_.atomic = &atomic_ops.ops;
		seen = Seen();
	}
	struct fid_ep ep_;
	char buf_[64] = {};
	void *desc_ = reinterpret_cast<void *>(0xde5c);
	void *ctx_ = reinterpret_cast<void *>(0xc0de);
};

// Defaults a send takes: those of the endpoint's transmit flags the family
// accepts, without remote CQ data unless the call carries data.
const uint64_t kSendDefaults = kTxDefaults & kSendFlags;

TEST_F(Entry, SendTakesTheDefaultsWithoutRemoteData)
{
	ASSERT_EQ(fi_send(&ep_, buf_, 10, desc_, 5, ctx_), 0);
	EXPECT_EQ(seen.flags, kSendDefaults & ~FI_REMOTE_CQ_DATA);
	EXPECT_FALSE(seen.inject_call);
	EXPECT_EQ(seen.iov_count, 1u);
	EXPECT_EQ(seen.base, buf_);
	EXPECT_EQ(seen.len, 10u);
	EXPECT_EQ(seen.desc, desc_);
	EXPECT_EQ(seen.addr, 5u);
	EXPECT_EQ(seen.context, ctx_);
	EXPECT_EQ(seen.data, 0u);
}

TEST_F(Entry, SenddataAddsRemoteDataAndItsValue)
{
	ASSERT_EQ(fi_senddata(&ep_, buf_, 4, desc_, 0xabc, 2, ctx_), 0);
	EXPECT_EQ(seen.flags, kSendDefaults | FI_REMOTE_CQ_DATA);
	EXPECT_EQ(seen.data, 0xabcu);
}

TEST_F(Entry, InjectIsAnInjectCallWithNoContextOrDescriptor)
{
	ASSERT_EQ(fi_inject(&ep_, buf_, 8, 3), 0);
	EXPECT_EQ(seen.flags, FI_INJECT);
	EXPECT_TRUE(seen.inject_call);
	EXPECT_TRUE(seen.desc_null);
	EXPECT_EQ(seen.context, nullptr);
	ASSERT_EQ(fi_injectdata(&ep_, buf_, 8, 77, 3), 0);
	EXPECT_EQ(seen.flags, FI_INJECT | FI_REMOTE_CQ_DATA);
	EXPECT_EQ(seen.data, 77u);
	EXPECT_TRUE(seen.inject_call);
}

// FI_INJECT given to fi_sendmsg is a flag like any other: not an inject
// call, which would write no completion.
TEST_F(Entry, SendmsgPassesItsFlagsAsGiven)
{
	struct iovec iov = { buf_, 3 };
	struct fi_msg msg = {};

	msg.msg_iov = &iov;
	msg.iov_count = 1;
	msg.data = 9;
	ASSERT_EQ(fi_sendmsg(&ep_, &msg, FI_INJECT | FI_MORE), 0);
	EXPECT_EQ(seen.flags, FI_INJECT | FI_MORE);
	EXPECT_FALSE(seen.inject_call);
	EXPECT_EQ(seen.data, 9u);
	seen = Seen();
	EXPECT_EQ(fi_sendmsg(&ep_, nullptr, 0), -FI_EINVAL);
	EXPECT_EQ(fi_recvmsg(&ep_, nullptr, 0), -FI_EINVAL);
	EXPECT_EQ(seen.calls, 0);
}

TEST_F(Entry, RecvTakesTheReceiveDefaults)
{
	struct iovec iov[2] = { { buf_, 8 }, { buf_ + 8, 8 } };
	void *descs[2] = { desc_, desc_ };

	ASSERT_EQ(fi_recv(&ep_, buf_, 16, desc_, FI_ADDR_UNSPEC, ctx_), 0);
	EXPECT_EQ(seen.flags, kRxDefaults & kRecvFlags);
	EXPECT_EQ(seen.addr, FI_ADDR_UNSPEC);
	ASSERT_EQ(fi_recvv(&ep_, iov, descs, 2, 1, ctx_), 0);
	EXPECT_EQ(seen.iov_count, 2u);
	EXPECT_EQ(seen.flags, kRxDefaults & kRecvFlags);
}

TEST_F(Entry, TaggedCallsCarryTagAndIgnore)
{
	ASSERT_EQ(fi_tsend(&ep_, buf_, 4, desc_, 1, 0x1234, ctx_), 0);
	EXPECT_EQ(seen.tag, 0x1234u);
	EXPECT_EQ(seen.flags, kSendDefaults & ~FI_REMOTE_CQ_DATA);
	ASSERT_EQ(fi_tinjectdata(&ep_, buf_, 4, 5, 1, 0x99), 0);
	EXPECT_EQ(seen.tag, 0x99u);
	EXPECT_EQ(seen.flags, FI_INJECT | FI_REMOTE_CQ_DATA);
	EXPECT_TRUE(seen.inject_call);
	ASSERT_EQ(fi_trecv(&ep_, buf_, 4, desc_, 1, 0x10, 0x0f, ctx_), 0);
	EXPECT_EQ(seen.tag, 0x10u);
	EXPECT_EQ(seen.ignore, 0x0fu);
	// Only the flags the family's short receives take (PEEK is not one).
	EXPECT_EQ(seen.flags, FI_COMPLETION);
}

TEST_F(Entry, RmaShortFormsNameOneSegmentAsLongAsTheBuffers)
{
	struct iovec iov[2] = { { buf_, 8 }, { buf_ + 8, 24 } };
	void *descs[2] = { desc_, desc_ };

	ASSERT_EQ(fi_readv(&ep_, iov, descs, 2, 4, 0x1000, 0x55, ctx_), 0);
	EXPECT_FALSE(seen.write);
	EXPECT_EQ(seen.rma_addr, 0x1000u);
	EXPECT_EQ(seen.rma_len, 32u);
	EXPECT_EQ(seen.rma_key, 0x55u);
	EXPECT_EQ(seen.flags,
		  kSendDefaults & ~(FI_REMOTE_CQ_DATA | FI_INJECT));
	ASSERT_EQ(fi_writedata(&ep_, buf_, 12, desc_, 42, 4, 0x2000, 7, ctx_),
		  0);
	EXPECT_TRUE(seen.write);
	EXPECT_EQ(seen.rma_len, 12u);
	EXPECT_EQ(seen.data, 42u);
	EXPECT_EQ(seen.flags, kSendDefaults | FI_REMOTE_CQ_DATA);
	ASSERT_EQ(fi_inject_write(&ep_, buf_, 6, 4, 0x3000, 8), 0);
	EXPECT_TRUE(seen.inject_call);
	EXPECT_EQ(seen.flags, FI_INJECT);
	EXPECT_EQ(fi_readmsg(&ep_, nullptr, 0), -FI_EINVAL);
}

TEST_F(Entry, AtomicKindsAndTheirBuffers)
{
	uint64_t a[2] = { 1, 2 }, cmp = 3, res = 0;
	struct fi_ioc iov[2] = { { &a[0], 1 }, { &a[1], 1 } };
	void *descs[2] = { desc_, desc_ };

	ASSERT_EQ(fi_atomicv(&ep_, iov, descs, 2, 1, 0x100, 9, FI_UINT64,
			     FI_SUM, ctx_),
		  0);
	EXPECT_EQ(seen.kind, FABSIM_ATOMIC_WRITE);
	EXPECT_EQ(seen.rma_len, 2u) << "one target of as many elements";
	EXPECT_EQ(seen.iov_count, 2u);
	EXPECT_EQ(seen.flags, kTxDefaults & (FI_COMPLETION | FI_INJECT));
	ASSERT_EQ(fi_fetch_atomic(&ep_, &a[0], 1, desc_, &res, desc_, 1, 0x100,
				  9, FI_UINT64, FI_SUM, ctx_),
		  0);
	EXPECT_EQ(seen.kind, FABSIM_ATOMIC_FETCH);
	EXPECT_EQ(seen.result_count, 1u);
	EXPECT_EQ(seen.compare_count, 0u);
	ASSERT_EQ(fi_compare_atomic(&ep_, &a[0], 1, desc_, &cmp, desc_, &res,
				    desc_, 1, 0x100, 9, FI_UINT64, FI_CSWAP,
				    ctx_),
		  0);
	EXPECT_EQ(seen.kind, FABSIM_ATOMIC_COMPARE);
	EXPECT_EQ(seen.compare_count, 1u);
	EXPECT_EQ(seen.op, FI_CSWAP);
	ASSERT_EQ(fi_inject_atomic(&ep_, &a[0], 1, 1, 0x100, 9, FI_UINT64,
				   FI_SUM),
		  0);
	EXPECT_TRUE(seen.inject_call);
	EXPECT_EQ(seen.flags, FI_INJECT);
}

TEST_F(Entry, ValidCallsNameTheirKind)
{
	size_t count = 0;

	ASSERT_EQ(fi_fetch_atomicvalid(&ep_, FI_INT32, FI_MAX, &count), 0);
	EXPECT_EQ(seen.kind, FABSIM_ATOMIC_FETCH);
	EXPECT_EQ(seen.datatype, FI_INT32);
	EXPECT_EQ(seen.op, FI_MAX);
	EXPECT_EQ(count, 7u);
	ASSERT_EQ(fi_compare_atomicvalid(&ep_, FI_INT64, FI_CSWAP, &count), 0);
	EXPECT_EQ(seen.kind, FABSIM_ATOMIC_COMPARE);
	ASSERT_EQ(fi_atomicvalid(&ep_, FI_INT64, FI_SUM, &count), 0);
	EXPECT_EQ(seen.kind, FABSIM_ATOMIC_WRITE);
}

} // namespace
