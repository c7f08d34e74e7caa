// fi_endpoint(3) options of the sim provider beyond what every provider
// has (tests/conformance): FI_OPT_FI_HMEM_P2P, which a NIC with no device
// memory can honour in every mode but REQUIRED.
#include <gtest/gtest.h>

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

} // namespace
