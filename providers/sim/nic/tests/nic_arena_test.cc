// With the model in an arena, traffic takes no memory from the C library:
// everything the NICs and the network keep lives where every process of a
// shared fabric can reach it (MULTIPROCESS.md). The test binary counts the
// C library's allocations itself.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include <netmodel/nm_preset.h>
#include "providers/sim/nic/nic.h"

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *ptr, size_t size);
}

// AddressSanitizer and ThreadSanitizer bring their own allocators:
// counting the C library's calls there would mix two allocators.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define COUNT_ALLOCATIONS 1
#endif

namespace {

bool counting;
long allocations;

}  // namespace

#ifdef COUNT_ALLOCATIONS
extern "C" void *malloc(size_t size)
{
	allocations += counting;
	return __libc_malloc(size);
}

extern "C" void *calloc(size_t count, size_t size)
{
	allocations += counting;
	return __libc_calloc(count, size);
}

extern "C" void *realloc(void *ptr, size_t size)
{
	allocations += counting;
	return __libc_realloc(ptr, size);
}
#endif

namespace {

std::vector<nic_completion> *completions;

void on_completion(void *, const nic_completion *c)
{
	completions->push_back(*c);
}
const nic_qp_ops kOps = {on_completion, on_completion, on_completion, nullptr};

// Two NICs with a queue pair each, in a world in an arena of its own; the
// world must give all its memory back when it goes.
struct TwoNics {
	fs_arena *arena = nullptr;
	nic_world *world = nullptr;
	nic *n[2] = {};
	nic_qp *qp[2] = {};

	void Open(const nm_config &cfg, enum nic_world_parts parts)
	{
		nm_error err;
		nic_transport_params tp;
		nic_transport_defaults(&tp);
		arena = fs_arena_private(size_t(1) << 30);
		ASSERT_NE(arena, nullptr);
		ASSERT_EQ(nic_world_create_parts(arena, &cfg, &tp, parts, &world,
						 &err),
			  0)
			<< err.msg;
		for (int i = 0; i < 2; i++) {
			ASSERT_EQ(nic_open(world, NIC_HOST_ANY, &n[i], &err), 0);
			ASSERT_EQ(nic_qp_create(n[i], NIC_QP_RD, &kOps, nullptr,
						&qp[i]),
				  0);
		}
	}
	~TwoNics()
	{
		for (int i = 0; i < 2; i++) {
			if (qp[i])
				nic_qp_destroy(qp[i]);
			nic_close(n[i]);
		}
		nic_world_destroy(world);
		if (!arena)
			return;
		EXPECT_EQ(fs_arena_used(arena), 0u);
		fs_arena_detach(arena);
	}
};

TEST(NicArena, TrafficAllocatesOnlyInTheArena)
{
#ifndef COUNT_ALLOCATIONS
	GTEST_SKIP() << "under a sanitizer the C library's allocations "
			"cannot be counted";
#endif
	nm_config cfg;
	nm_error err;
	ASSERT_EQ(nm_preset_load(&cfg, "roce-25g", &err), 0);
	cfg.impair.loss_rate = 0.05;
	cfg.impair.duplicate_rate = 0.02;
	TwoNics w;
	ASSERT_NO_FATAL_FAILURE(w.Open(cfg, NIC_PARTS_ONE));
	nic_world *world = w.world;
	nic **n = w.n;
	nic_qp **qp = w.qp;
	const int kMessages = 200;
	const size_t kSize = 5000; /* several packets each */
	std::vector<uint8_t> src(kSize * kMessages), dst(kSize * kMessages);
	for (size_t i = 0; i < src.size(); i++)
		src[i] = uint8_t(i * 7 + 1);
	std::vector<nic_completion> got;
	got.reserve(4 * kMessages);
	completions = &got;

	auto post_recv = [&](int i) {
		nic_recv r = {};
		r.cookie = i;
		r.source = NIC_ANY_SOURCE;
		r.sge_count = 1;
		r.sge[0].addr = &dst[i * kSize];
		r.sge[0].len = kSize;
		return nic_post_recv(qp[1], &r);
	};

	counting = true;
	for (int i = 0; i < kMessages; i++) {
		nic_wr wr = {};
		wr.wr_id = i;
		wr.opcode = NIC_WR_SEND;
		wr.peer = {nic_host(n[1]), nic_qp_num(qp[1])};
		wr.sge_count = 1;
		wr.sge[0].addr = &src[i * kSize];
		wr.sge[0].len = kSize;
		ASSERT_EQ(nic_post_send(qp[0], &wr), 0);
		/* The second half arrive unexpected: their receives are
		 * posted later. */
		if (i < kMessages / 2) {
			ASSERT_EQ(post_recv(i), 0);
		}
	}
	nic_world_run_until(world, nullptr, nullptr, 200000);
	for (int i = kMessages / 2; i < kMessages; i++)
		ASSERT_EQ(post_recv(i), 0);
	nic_world_run_until(world, nullptr, nullptr, NM_TIME_NEVER);
	counting = false;

	EXPECT_EQ(allocations, 0) << "the model allocated outside its arena";
	EXPECT_EQ(got.size(), 2u * kMessages);
	EXPECT_TRUE(src == dst);
	nic_stats st;
	nic_world_stats(world, &st);
	EXPECT_GT(st.packets_dropped, 0u); /* the loss really happened */
}

// With free records kept per host (NIC_PARTS_PER_HOST), the sender builds
// packets that the receiver frees. They come back to the sender through the
// world's depots, so a one-way stream does not grow the world's memory with
// its length.
size_t StreamRounds(fs_arena *arena, nic_world *world, nic_qp *qp[2],
		    nic *n[2], int rounds)
{
	const int kPerRound = 40;
	const size_t kSize = 5000; /* two packets each */
	std::vector<uint8_t> src(kSize), dst(kSize * kPerRound);
	std::vector<nic_completion> got;
	completions = &got;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < kPerRound; i++) {
			nic_recv rv = {};
			rv.source = NIC_ANY_SOURCE;
			rv.sge_count = 1;
			rv.sge[0].addr = &dst[i * kSize];
			rv.sge[0].len = kSize;
			EXPECT_EQ(nic_post_recv(qp[1], &rv), 0);
			nic_wr wr = {};
			wr.opcode = NIC_WR_SEND;
			wr.peer = {nic_host(n[1]), nic_qp_num(qp[1])};
			wr.sge_count = 1;
			wr.sge[0].addr = src.data();
			wr.sge[0].len = kSize;
			EXPECT_EQ(nic_post_send(qp[0], &wr), 0);
		}
		nic_world_run_until(world, nullptr, nullptr, NM_TIME_NEVER);
	}
	EXPECT_EQ(got.size(), 2u * kPerRound * rounds);
	return fs_arena_used(arena);
}

TEST(NicArena, AOneWayStreamReusesItsRecords)
{
	nm_config cfg;
	nm_error err;
	ASSERT_EQ(nm_preset_load(&cfg, "roce-25g", &err), 0);
	TwoNics w;
	ASSERT_NO_FATAL_FAILURE(w.Open(cfg, NIC_PARTS_PER_HOST));
	nic_transport_params tp;
	nic_transport_defaults(&tp);
	nic_world *refused = nullptr;
	EXPECT_EQ(nic_world_create_parts(w.arena, &cfg, &tp, nic_world_parts(7),
					 &refused, &err),
		  -EINVAL);
	EXPECT_NE(std::string(err.msg).find("parts"), std::string::npos);
	size_t warm = StreamRounds(w.arena, w.world, w.qp, w.n, 10);
	size_t later = StreamRounds(w.arena, w.world, w.qp, w.n, 100);
	EXPECT_EQ(warm, later) << "ten times the messages took more memory";
}

}  // namespace
