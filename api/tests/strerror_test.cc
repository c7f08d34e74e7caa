// fi_strerror(3): errno-range codes through the C library, fabric codes from
// fi_errno(3), either sign, and out-of-range codes.
#include <gtest/gtest.h>

#include <cstring>

#include <rdma/fi_errno.h>

TEST(Strerror, ErrnoRangeMatchesTheCLibrary)
{
	EXPECT_STREQ(fi_strerror(FI_ENODATA), strerror(ENODATA));
	EXPECT_STREQ(fi_strerror(FI_EAGAIN), strerror(EAGAIN));
}

TEST(Strerror, FabricCodesFollowTheManPage)
{
	EXPECT_STREQ(fi_strerror(FI_EOTHER), "Unspecified error");
	EXPECT_STREQ(fi_strerror(FI_ETOOSMALL), "Provided buffer is too small");
	EXPECT_STREQ(fi_strerror(FI_EAVAIL), "Error available");
	EXPECT_STREQ(fi_strerror(FI_EBADFLAGS), "Flags not supported");
	EXPECT_STREQ(fi_strerror(FI_ETRUNC), "Truncation error");
	EXPECT_STREQ(fi_strerror(FI_ENOKEY), "Required key not available");
	EXPECT_STREQ(fi_strerror(FI_ENORX),
		     "Receiver not ready, no receive buffers available");
}

TEST(Strerror, EveryFabricCodeHasText)
{
	for (int e = FI_ERRNO_OFFSET; e < FI_ERRNO_MAX; e++) {
		ASSERT_NE(fi_strerror(e), nullptr) << e;
		EXPECT_GT(strlen(fi_strerror(e)), 5u) << e;
	}
}

TEST(Strerror, SignDoesNotMatter)
{
	EXPECT_STREQ(fi_strerror(-FI_ETRUNC), fi_strerror(FI_ETRUNC));
	EXPECT_STREQ(fi_strerror(-FI_ENOENT), fi_strerror(FI_ENOENT));
}

TEST(Strerror, UnknownFabricCodesAreUnspecified)
{
	EXPECT_STREQ(fi_strerror(FI_ERRNO_MAX), "Unspecified error");
	EXPECT_STREQ(fi_strerror(9999), "Unspecified error");
	EXPECT_NE(fi_strerror(-2147483647 - 1), nullptr);
}
