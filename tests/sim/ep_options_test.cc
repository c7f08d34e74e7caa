// Options and flags of the sim provider's objects beyond what every
// provider is checked for (tests/conformance): fi_endpoint(3)'s
// FI_OPT_FI_HMEM_P2P, which a NIC with no device memory can honour in every
// mode but REQUIRED, and the flags fi_cntr_open takes (none).
#include <gtest/gtest.h>

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include "tests/sim/scenario.h"

namespace {

TEST(EpOptions, PeerToPeerIsEnabledAndCannotBeRequired)
{
	Scenario s(1, {});
	ASSERT_EQ(s.failure, "");
	fid_ep *ep = s.node(0).ep;
	int mode = -1;
	size_t len = sizeof(mode);
	ASSERT_EQ(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_FI_HMEM_P2P, &mode,
			    &len), 0);
	EXPECT_EQ(mode, FI_HMEM_P2P_ENABLED); // the default, fi_endpoint(3)
	mode = FI_HMEM_P2P_REQUIRED;
	EXPECT_EQ(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_FI_HMEM_P2P, &mode,
			    sizeof(mode)), -FI_EOPNOTSUPP);
	mode = FI_HMEM_P2P_DISABLED;
	ASSERT_EQ(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_FI_HMEM_P2P, &mode,
			    sizeof(mode)), 0);
	mode = -1;
	ASSERT_EQ(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_FI_HMEM_P2P, &mode,
			    &len), 0);
	EXPECT_EQ(mode, FI_HMEM_P2P_DISABLED);
	mode = 77;
	EXPECT_EQ(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_FI_HMEM_P2P, &mode,
			    sizeof(mode)), -FI_EINVAL);
}

// fi_cntr(3) defines no flags for a counter's attributes: any is refused as
// fi_cq_open and fi_eq_open refuse theirs, with -FI_EBADFLAGS.
TEST(EpOptions, ACounterTakesNoFlags)
{
	Scenario s(1, {});
	ASSERT_EQ(s.failure, "");
	fi_cntr_attr attr = {};
	attr.events = FI_CNTR_EVENTS_COMP;
	attr.flags = 1ULL << 60;
	fid_cntr *cntr = nullptr;
	EXPECT_EQ(fi_cntr_open(s.node(0).domain, &attr, &cntr, nullptr),
		  -FI_EBADFLAGS);
	EXPECT_EQ(cntr, nullptr);
}

} // namespace
