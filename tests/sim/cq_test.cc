// Completion queues of the sim provider: a CQ's size is a minimum
// (fi_cq(3)). Operations in flight reserve their entries; a CQ smaller than
// what is in flight grows rather than refuse posts: Open MPI opens its CQ
// with 100 entries and posts its receives before the sends that answer
// them, which a post refused for want of room would deadlock.
#include <gtest/gtest.h>

#include <vector>

#include "tests/sim/scenario.h"

namespace {

TEST(Cq, ACqSmallerThanWhatIsInFlightGrows)
{
	const int k = 64; // eight times the CQs' size, each way
	Scenario s(2, {}, FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				  FI_MR_PROV_KEY,
		   FI_EP_RDM, 8);
	ASSERT_EQ(s.failure, "");
	static uint64_t in[2][k], out[2][k];
	fid_mr *rmr[2], *smr[2];
	for (int n = 0; n < 2; n++) {
		rmr[n] = s.reg(n, in[n], sizeof(in[n]), FI_RECV);
		smr[n] = s.reg(n, out[n], sizeof(out[n]), FI_SEND);
	}
	// Both nodes post every receive, then every send: nothing can
	// complete before the peer's sends are posted.
	for (int n = 0; n < 2; n++)
		for (int i = 0; i < k; i++)
			ASSERT_EQ(fi_trecv(s.node(n).ep, &in[n][i], 8,
					   s.desc(rmr[n]), s.addr(n, 1 - n),
					   (uint64_t)i, 0, nullptr),
				  0) << "receive " << i << " of node " << n;
	for (int n = 0; n < 2; n++)
		for (int i = 0; i < k; i++) {
			out[n][i] = 1000u * n + i;
			ASSERT_EQ(fi_tsend(s.node(n).ep, &out[n][i], 8,
					   s.desc(smr[n]), s.addr(n, 1 - n),
					   (uint64_t)i, nullptr),
				  0) << "send " << i << " of node " << n;
		}
	std::vector<Completion> got;
	ASSERT_TRUE(s.collect(4 * k, &got)) << got.size() << " completions";
	for (const Completion &c : got)
		EXPECT_FALSE(c.error) << c.err;
	for (int n = 0; n < 2; n++)
		for (int i = 0; i < k; i++)
			EXPECT_EQ(in[n][i], 1000u * (1 - n) + i);
}

// fabtests' rdm_tagged_peek: FI_PEEK, then fi_cq_sread for its answer, in
// a loop until the message is there. A peek found nothing at the very
// instant it was posted, so the clock never moved and the message, still
// on its way, never came: the loop spun for ever.
TEST(Cq, APeekLoopWithBlockingReadsLetsTheMessageArrive)
{
	Scenario s(2, {{"FI_SIM_PRESET", "roce-100g"}});
	ASSERT_EQ(s.failure, "");
	static char msg[64] = "peek me";
	fid_mr *mr = s.reg(0, msg, sizeof(msg), FI_SEND);
	ASSERT_EQ(fi_tsend(s.node(0).ep, msg, sizeof(msg), fi_mr_desc(mr),
			   s.node(0).peers[1], 0x900d, nullptr), 0);
	fi_context2 ctx;
	fi_msg_tagged m = { nullptr, nullptr, 0, FI_ADDR_UNSPEC, 0x900d, 0,
			    &ctx, 0 };
	int tries = 0;
	ssize_t got = -FI_EAVAIL;
	while (got != 1 && tries < 100000) {
		tries++;
		ASSERT_EQ(fi_trecvmsg(s.node(1).ep, &m, FI_PEEK), 0);
		fi_cq_tagged_entry e;
		got = fi_cq_sread(s.node(1).cq, &e, 1, nullptr, 1000);
		if (got == -FI_EAVAIL) {
			fi_cq_err_entry err = {};
			ASSERT_EQ(fi_cq_readerr(s.node(1).cq, &err, 0), 1);
			ASSERT_EQ(err.err, FI_ENOMSG);
		} else {
			ASSERT_EQ(got, 1);
			EXPECT_EQ(e.tag, 0x900du);
		}
	}
	EXPECT_EQ(got, 1) << "the message never arrived (" << tries
			  << " peeks)";
}

// fi_cq(3), fi_cntr(3), fi_eq(3): FI_WAIT_YIELD waits "without a wait
// object but instead yield on every wait", and allows the blocking reads
// (fabtests' -c yield): they wait here as with FI_WAIT_UNSPEC, in virtual
// time; there is no descriptor to get.
TEST(Cq, WaitYieldAllowsBlockingReadsWithoutAWaitObject)
{
	Scenario s(2, {});
	ASSERT_EQ(s.failure, "");
	fi_cq_attr ca = {};
	ca.format = FI_CQ_FORMAT_TAGGED;
	ca.wait_obj = FI_WAIT_YIELD;
	fid_cq *cq = nullptr;
	ASSERT_EQ(fi_cq_open(s.node(0).domain, &ca, &cq, nullptr), 0);
	fi_cq_tagged_entry e;
	EXPECT_EQ(fi_cq_sread(cq, &e, 1, nullptr, 5), -FI_EAGAIN);
	int fd = -1;
	EXPECT_EQ(fi_control(&cq->fid, FI_GETWAIT, &fd), -FI_ENODATA);
	fi_wait_obj obj = FI_WAIT_NONE;
	EXPECT_EQ(fi_control(&cq->fid, FI_GETWAITOBJ, &obj), 0);
	EXPECT_EQ(obj, FI_WAIT_YIELD);
	EXPECT_EQ(fi_close(&cq->fid), 0);

	fi_cntr_attr na = {};
	na.events = FI_CNTR_EVENTS_COMP;
	na.wait_obj = FI_WAIT_YIELD;
	fid_cntr *cntr = nullptr;
	ASSERT_EQ(fi_cntr_open(s.node(0).domain, &na, &cntr, nullptr), 0);
	EXPECT_EQ(fi_cntr_add(cntr, 1), 0);
	EXPECT_EQ(fi_cntr_wait(cntr, 1, 1000), 0);
	EXPECT_EQ(fi_cntr_wait(cntr, 2, 5), -FI_ETIMEDOUT);
	EXPECT_EQ(fi_close(&cntr->fid), 0);

	fi_eq_attr qa = {};
	qa.wait_obj = FI_WAIT_YIELD;
	qa.flags = FI_WRITE;
	fid_eq *eq = nullptr;
	ASSERT_EQ(fi_eq_open(s.fabric(), &qa, &eq, nullptr), 0);
	fi_eq_entry in = {}, out = {};
	in.context = &in;
	uint32_t event = 0;
	ASSERT_EQ(fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0),
		  (ssize_t)sizeof(in));
	EXPECT_EQ(fi_eq_sread(eq, &event, &out, sizeof(out), 1000, 0),
		  (ssize_t)sizeof(out));
	EXPECT_EQ(event, (uint32_t)FI_NOTIFY);
	EXPECT_EQ(out.context, &in);
	EXPECT_EQ(fi_eq_sread(eq, &event, &out, sizeof(out), 5, 0), -FI_EAGAIN);
	EXPECT_EQ(fi_close(&eq->fid), 0);
}

} // namespace
