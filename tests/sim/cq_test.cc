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

} // namespace
