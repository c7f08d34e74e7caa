// fi_mr_reg on the sim provider: memory the process has not mapped is
// refused (-FI_EFAULT), as a verbs device's pinning refuses it, rather
// than registered and later copied into or out of by the model.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>

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

// fi_mr(3): len "Must be > 0", offset "is reserved for future use and
// must be 0", and access holds the bits the page defines; anything else is
// refused, not registered.
// One node's domain and a buffer to register.
class MrArgs : public ::testing::Test {
protected:
	Scenario s{ 1, {} };
	char buf[64] = {};
	fid_domain *dom = s.node(0).domain;
	fid_mr *mr = nullptr;

	void SetUp() override { ASSERT_EQ(s.failure, ""); }
};

TEST_F(MrArgs, WhatTheManPageForbidsIsRefused)
{
	EXPECT_EQ(fi_mr_reg(dom, buf, 0, FI_SEND, 0, 0, 0, &mr, nullptr),
		  -FI_EINVAL);
	EXPECT_EQ(fi_mr_reg(dom, buf, sizeof(buf), FI_SEND, 5, 0, 0, &mr,
			    nullptr), -FI_EINVAL);
	EXPECT_EQ(fi_mr_reg(dom, buf, sizeof(buf), FI_SEND | (1ULL << 62), 0,
			    0, 0, &mr, nullptr), -FI_EINVAL);
	EXPECT_EQ(mr, nullptr);
	// No access bit at all is every access (fi_mr(3)).
	ASSERT_EQ(fi_mr_reg(dom, buf, sizeof(buf), 0, 0, 0, 0, &mr, nullptr),
		  0);
	EXPECT_EQ(fi_close(&mr->fid), 0);
}

// fi_mr_raw_attr is "safe to use with any memory region", and the peer maps
// the raw key back to the key data transfers name (fi_mr_map_raw). A buffer
// too small is told the size it needs.
TEST_F(MrArgs, ARawKeyMapsBackToTheKey)
{
	ASSERT_EQ(fi_mr_reg(dom, buf, sizeof(buf), FI_REMOTE_WRITE, 0, 0x1234,
			    0, &mr, nullptr), 0);
	uint8_t raw[16];
	size_t size = 1;
	uint64_t base = ~0ull, key = 0;
	const size_t key_size = 4; // the domain's mr_key_size
	EXPECT_EQ(fi_mr_raw_attr(mr, &base, raw, &size, 0), -FI_ETOOSMALL);
	EXPECT_EQ(size, key_size);
	size = sizeof(raw);
	ASSERT_EQ(fi_mr_raw_attr(mr, &base, raw, &size, 0), 0);
	EXPECT_EQ(size, key_size);
	// The scenario's domain addresses regions by virtual address.
	EXPECT_EQ(base, (uint64_t)(uintptr_t)buf);
	ASSERT_EQ(fi_mr_map_raw(dom, base, raw, size, &key, 0), 0);
	EXPECT_EQ(key, fi_mr_key(mr));
	EXPECT_EQ(fi_mr_unmap_key(dom, key), 0);
	EXPECT_EQ(fi_mr_map_raw(dom, base, raw, size + 1, &key, 0), -FI_EINVAL);
	EXPECT_EQ(fi_close(&mr->fid), 0);
}

// fi_mr(3), fi_mr_bind: a counter bound to a region with FI_REMOTE_WRITE
// moves "whenever a remote RMA write or atomic operation modifies the
// memory region" — that region's, not another's; one bound with
// FI_REMOTE_READ at reads of it. A bound counter cannot be closed first.
TEST(Mr, ACounterBoundToARegionCountsWhatChangesIt)
{
	Scenario s(2, {});
	ASSERT_EQ(s.failure, "");
	static uint64_t target[8], other[8], local[8];
	fid_domain *dom = s.node(1).domain;
	fid_mr *mr = nullptr, *mr_other = nullptr;
	ASSERT_EQ(fi_mr_reg(dom, target, sizeof(target),
			    FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 77, 0, &mr,
			    nullptr), 0);
	ASSERT_EQ(fi_mr_reg(dom, other, sizeof(other), FI_REMOTE_WRITE, 0, 78,
			    0, &mr_other, nullptr), 0);
	fi_cntr_attr attr = {};
	attr.events = FI_CNTR_EVENTS_COMP;
	attr.wait_obj = FI_WAIT_UNSPEC;
	fid_cntr *writes = nullptr, *reads = nullptr;
	ASSERT_EQ(fi_cntr_open(dom, &attr, &writes, nullptr), 0);
	ASSERT_EQ(fi_cntr_open(dom, &attr, &reads, nullptr), 0);
	EXPECT_EQ(fi_mr_bind(mr, &writes->fid, FI_SEND), -FI_EBADFLAGS);
	ASSERT_EQ(fi_mr_bind(mr, &writes->fid, FI_REMOTE_WRITE), 0);
	ASSERT_EQ(fi_mr_bind(mr, &reads->fid, FI_REMOTE_READ), 0);

	auto &a = s.node(0);
	fid_mr *lm = s.reg(0, local, sizeof(local), FI_WRITE | FI_READ);
	ASSERT_NE(lm, nullptr);
	local[0] = 5;
	ASSERT_EQ(fi_write(a.ep, local, 8, fi_mr_desc(lm), a.peers[1],
			   (uint64_t)(uintptr_t)target, fi_mr_key(mr), nullptr), 0);
	ASSERT_EQ(fi_atomic(a.ep, local, 1, fi_mr_desc(lm), a.peers[1],
			    (uint64_t)(uintptr_t)&target[1], fi_mr_key(mr),
			    FI_UINT64, FI_SUM, nullptr), 0);
	ASSERT_EQ(fi_write(a.ep, local, 8, fi_mr_desc(lm), a.peers[1],
			   (uint64_t)(uintptr_t)other, fi_mr_key(mr_other),
			   nullptr), 0);
	ASSERT_EQ(fi_read(a.ep, &local[2], 8, fi_mr_desc(lm), a.peers[1],
			  (uint64_t)(uintptr_t)target, fi_mr_key(mr), nullptr), 0);
	std::vector<Completion> done;
	ASSERT_TRUE(s.collect(4, &done));
	EXPECT_EQ(fi_cntr_wait(writes, 2, 1000), 0);
	EXPECT_EQ(fi_cntr_read(writes), 2u) << "a write and an atomic, not the "
					       "write into the other region";
	EXPECT_EQ(fi_cntr_read(reads), 1u);
	EXPECT_EQ(target[0], 5u);
	EXPECT_EQ(target[1], 5u);

	EXPECT_EQ(fi_close(&writes->fid), -FI_EBUSY) << "bound to the region";
	EXPECT_EQ(fi_close(&mr->fid), 0);
	EXPECT_EQ(fi_close(&mr_other->fid), 0);
	EXPECT_EQ(fi_close(&writes->fid), 0);
	EXPECT_EQ(fi_close(&reads->fid), 0);
}

} // namespace
