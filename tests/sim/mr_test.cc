// fi_mr_reg on the sim provider: memory the process has not mapped is
// refused (-FI_EFAULT), as a verbs device's pinning refuses it, rather
// than registered and later copied into or out of by the model.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include "tests/sim/scenario.h"

namespace {

TEST(Mr, UnmappedMemoryIsAFault)
{
	Scenario s(1, {});
	ASSERT_EQ(s.failure, "");
	long page = sysconf(_SC_PAGESIZE);
	void *gone = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(gone, MAP_FAILED);
	ASSERT_EQ(munmap((char *)gone + page, page), 0);
	fid_mr *mr = nullptr;
	EXPECT_EQ(fi_mr_reg(s.node(0).domain, gone, 2 * page,
			    FI_SEND | FI_RECV, 0, 0, 0, &mr, nullptr),
		  -FI_EFAULT);
	EXPECT_EQ(mr, nullptr);
	ASSERT_EQ(fi_mr_reg(s.node(0).domain, gone, page, FI_SEND | FI_RECV,
			    0, 0, 0, &mr, nullptr),
		  0);
	EXPECT_EQ(fi_close(&mr->fid), 0);
	ASSERT_EQ(munmap(gone, page), 0);
}

} // namespace
