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

} // namespace
