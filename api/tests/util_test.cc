// What providers share (fabsim/util.h), checked against fi_cq(3) and
// fi_endpoint(3).
#include <gtest/gtest.h>

#include <cstring>

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/providers/fi_prov.h>

#include <fabsim/eventq.h>
#include <fabsim/util.h>

namespace {

TEST(CqFormat, SizesAreLibfabricStructs)
{
	EXPECT_EQ(fabsim_cq_entry_size(FI_CQ_FORMAT_CONTEXT), sizeof(fi_cq_entry));
	EXPECT_EQ(fabsim_cq_entry_size(FI_CQ_FORMAT_MSG), sizeof(fi_cq_msg_entry));
	EXPECT_EQ(fabsim_cq_entry_size(FI_CQ_FORMAT_DATA),
		  sizeof(fi_cq_data_entry));
	EXPECT_EQ(fabsim_cq_entry_size(FI_CQ_FORMAT_TAGGED),
		  sizeof(fi_cq_tagged_entry));
	EXPECT_EQ(fabsim_cq_entry_size(FI_CQ_FORMAT_UNSPEC), 0u);
	EXPECT_EQ(fabsim_cq_entry_size((fi_cq_format)77), 0u);
}

TEST(CqFormat, AnEntryWritesItsFieldsAndNoMore)
{
	int ctx;
	fi_cq_tagged_entry e = {&ctx, FI_RECV | FI_MSG, 5, nullptr, 9, 3};
	unsigned char raw[sizeof(fi_cq_tagged_entry) + 8];
	memset(raw, 0xee, sizeof(raw));
	fabsim_cq_entry_write(FI_CQ_FORMAT_MSG, &e, raw);
	auto *m = (fi_cq_msg_entry *)raw;
	EXPECT_EQ(m->op_context, &ctx);
	EXPECT_EQ(m->len, 5u);
	EXPECT_EQ(raw[sizeof(fi_cq_msg_entry)], 0xee);
}

struct fi_provider test_prov = {};

TEST(CqAttr, TheChecksOfFiCqOpen)
{
	fi_cq_attr a = {};
	EXPECT_EQ(fabsim_cq_check_attr(&test_prov, &a, 0), 0);
	EXPECT_EQ(a.format, FI_CQ_FORMAT_CONTEXT); // UNSPEC chooses
	a.flags = FI_AFFINITY;
	EXPECT_EQ(fabsim_cq_check_attr(&test_prov, &a, 0), -FI_EBADFLAGS);
	EXPECT_EQ(fabsim_cq_check_attr(&test_prov, &a, FI_AFFINITY), 0);
	a = {};
	a.format = (fi_cq_format)77;
	EXPECT_EQ(fabsim_cq_check_attr(&test_prov, &a, 0), -FI_EINVAL);
	a = {};
	a.wait_obj = FI_WAIT_MUTEX_COND;
	EXPECT_EQ(fabsim_cq_check_attr(&test_prov, &a, 0), -FI_ENOSYS);
	a = {};
	a.wait_cond = (fi_cq_wait_cond)9;
	EXPECT_EQ(fabsim_cq_check_attr(&test_prov, &a, 0), -FI_EINVAL);
}

TEST(EpOpsFlag, GetAndSetTheDefaultFlagsOfEitherSide)
{
	uint64_t tx = FI_COMPLETION, rx = 0, f;
	f = FI_TRANSMIT;
	ASSERT_EQ(fabsim_ep_opsflag(FI_GETOPSFLAG, &f, &tx, &rx), 0);
	EXPECT_EQ(f, (uint64_t)FI_COMPLETION);
	f = FI_RECV | FI_MULTI_RECV;
	ASSERT_EQ(fabsim_ep_opsflag(FI_SETOPSFLAG, &f, &tx, &rx), 0);
	EXPECT_EQ(rx, (uint64_t)FI_MULTI_RECV);
	EXPECT_EQ(tx, (uint64_t)FI_COMPLETION);
	f = 0;
	EXPECT_EQ(fabsim_ep_opsflag(FI_GETOPSFLAG, &f, &tx, &rx), -FI_EINVAL);
	EXPECT_EQ(fabsim_ep_opsflag(FI_SETOPSFLAG, &f, &tx, &rx), -FI_EINVAL);
	EXPECT_EQ(fabsim_ep_opsflag(FI_GETOPSFLAG, nullptr, &tx, &rx),
		  -FI_EINVAL);
	EXPECT_EQ(fabsim_ep_opsflag(FI_ENABLE, &f, &tx, &rx), -FI_ENOSYS);
}

TEST(EpOpt, SizeOptionsNeedRoomForASizeT)
{
	size_t v = 0, len = sizeof(v) - 1;
	EXPECT_EQ(fabsim_getopt_size(&v, &len, 42), -FI_ETOOSMALL);
	EXPECT_EQ(v, 0u);
	len = sizeof(v) + 8;
	ASSERT_EQ(fabsim_getopt_size(&v, &len, 42), 0);
	EXPECT_EQ(v, 42u);
	EXPECT_EQ(len, sizeof(size_t));
}

TEST(EventQueue, EventsThenAnErrorInOrder)
{
	fabsim_eventq q;
	fabsim_eventq_init(&q);
	uint32_t ev = 0;
	fi_eq_entry in = {nullptr, (void *)0x1234, 77}, out = {};
	EXPECT_EQ(fabsim_eventq_read(&q, &ev, &out, sizeof(out), 0), -FI_EAGAIN);
	ASSERT_EQ(fabsim_eventq_push(&q, FI_MR_COMPLETE, &in, sizeof(in)), 0);
	fi_eq_err_entry err = {};
	err.err = FI_ECONNREFUSED;
	ASSERT_EQ(fabsim_eventq_push_error(&q, &err, "no", 3), 0);

	// Too small a buffer leaves the event queued.
	EXPECT_EQ(fabsim_eventq_read(&q, &ev, &out, sizeof(out) - 1, 0),
		  -FI_ETOOSMALL);
	EXPECT_EQ(fabsim_eventq_read(&q, &ev, &out, sizeof(out), FI_PEEK),
		  (ssize_t)sizeof(out));
	EXPECT_EQ(fabsim_eventq_read(&q, &ev, &out, sizeof(out), 0),
		  (ssize_t)sizeof(out));
	EXPECT_EQ(ev, (uint32_t)FI_MR_COMPLETE);
	EXPECT_EQ(out.data, 77u);

	// An error is next: read says so, readerr gives it.
	EXPECT_EQ(fabsim_eventq_read(&q, &ev, &out, sizeof(out), 0), -FI_EAVAIL);
	fi_eq_err_entry got = {};
	ASSERT_EQ(fabsim_eventq_readerr(&q, &got, 0, FI_VERSION(1, 17)),
		  (ssize_t)sizeof(got));
	EXPECT_EQ(got.err, FI_ECONNREFUSED);
	ASSERT_EQ(got.err_data_size, 3u);
	EXPECT_STREQ((const char *)got.err_data, "no"); // valid until the next
	EXPECT_EQ(fabsim_eventq_readerr(&q, &got, 0, FI_VERSION(1, 17)),
		  -FI_EAGAIN);
	EXPECT_TRUE(fabsim_eventq_empty(&q));
	fabsim_eventq_fini(&q);
}

TEST(EventQueue, AReaderBringsItsOwnErrDataBufferFromApi15)
{
	fabsim_eventq q;
	fabsim_eventq_init(&q);
	fi_eq_err_entry err = {};
	err.err = FI_ECONNREFUSED;
	ASSERT_EQ(fabsim_eventq_push_error(&q, &err, "full", 5), 0);
	char mine[3];
	fi_eq_err_entry got = {};
	got.err_data = mine;
	got.err_data_size = sizeof(mine);
	ASSERT_EQ(fabsim_eventq_readerr(&q, &got, 0, FI_VERSION(1, 17)),
		  (ssize_t)sizeof(got));
	EXPECT_EQ(got.err_data, (void *)mine);
	EXPECT_EQ(got.err_data_size, 3u);
	EXPECT_EQ(memcmp(mine, "ful", 3), 0);
	fabsim_eventq_fini(&q);
}

// A connection request nobody read still owns its fi_info: closing the
// queue frees it (LeakSanitizer checks under --config=asan).
TEST(EventQueue, UnreadConnectionRequestsFreeTheirInfo)
{
	fabsim_eventq q;
	fabsim_eventq_init(&q);
	fi_eq_cm_entry cm = {};
	cm.info = fi_allocinfo();
	ASSERT_NE(cm.info, nullptr);
	ASSERT_EQ(fabsim_eventq_push(&q, FI_CONNREQ, &cm, sizeof(cm)), 0);
	fabsim_eventq_fini(&q);
}

} // namespace
