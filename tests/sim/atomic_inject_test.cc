// fi_inject_atomic(3) on sim: an operand larger than the endpoint's
// inject_size is -FI_EMSGSIZE, before anything else the call may get wrong
// (an operation fi_atomic does not take, here), as sim has answered since
// it had atomics; one that fits lands at the target.
#include <gtest/gtest.h>

#include <rdma/fi_atomic.h>

#include "tests/sim/scenario.h"

namespace {

TEST(AtomicInject, TooLargeIsEmsgsizeFirst)
{
	Scenario s(2, {});
	ASSERT_EQ(s.failure, "");
	static uint64_t operand[1024], target[1024];
	fid_mr *mr = s.reg(1, target, sizeof(target),
			   FI_REMOTE_READ | FI_REMOTE_WRITE);
	fid_ep *a = s.ep(0, 1);
	fi_addr_t peer = s.addr(0, 1);

	// 8 KiB: more than any inject_size sim offers.
	EXPECT_EQ(fi_inject_atomic(a, operand, 1024, peer, (uint64_t)target,
				   fi_mr_key(mr), FI_UINT64, FI_CSWAP),
		  -FI_EMSGSIZE);
	EXPECT_EQ(fi_inject_atomic(a, operand, 1024, peer, (uint64_t)target,
				   fi_mr_key(mr), FI_UINT64, FI_SUM),
		  -FI_EMSGSIZE);
	// Not a plain atomic's operation, and small: refused for that.
	EXPECT_NE(fi_inject_atomic(a, operand, 1, peer, (uint64_t)target,
				   fi_mr_key(mr), FI_UINT64, FI_CSWAP),
		  0);
	operand[0] = 5;
	ASSERT_EQ(fi_inject_atomic(a, operand, 1, peer, (uint64_t)target,
				   fi_mr_key(mr), FI_UINT64, FI_SUM),
		  0);
	std::vector<Completion> done;
	s.collect(1, &done); // nothing is reported: let the world run
	EXPECT_EQ(target[0], 5u);
}

} // namespace
