// A poller that shares its CPU with the thread it waits for moves to
// another CPU of its own (nic_lock.c, give_cpu_away): two processes that
// poll each other, started on one CPU while another was free, would
// otherwise take turns through yields for as long as the kernel leaves
// them there. A poller whose CPU another program takes stays where it is.
#include <gtest/gtest.h>

#include <poll.h>
#include <sched.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "providers/sim/nic/tests/shared_world.h"

namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// What the polling child found: where it ran at the end, and whether its
// affinity mask was still the one it polled with.
struct Polled {
	int cpu = -1;
	int mask_kept = 0;
};

// Busy for `us` of real time, on this CPU.
void Compute(int us)
{
	auto until = steady_clock::now() + std::chrono::microseconds(us);
	while (steady_clock::now() < until)
		;
}

class NicReseat : public ::testing::Test {
protected:
	void SetUp() override
	{
		ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
		if (CPU_COUNT(&allowed) < 2)
			GTEST_SKIP() << "needs two CPUs to move between";
		cpu = sched_getcpu();
		ASSERT_GE(cpu, 0);
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		name = "/fabsim-nic-reseat-" + std::to_string(getpid()) + "-" +
		       std::to_string(steady_clock::now().time_since_epoch().count()) +
		       "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
		world = MakeSharedWorld(name, &arena);
		ASSERT_NE(world, nullptr);
		ASSERT_EQ(pipe(from_child), 0);
		// Both on one CPU: the child starts where this process runs.
		ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
		pinned = true;
	}

	void TearDown() override
	{
		if (pinned)
			EXPECT_EQ(sched_setaffinity(0, sizeof(allowed), &allowed), 0);
		Reap();
		if (world)
			fs_arena_unlink(name.c_str());
	}

	void Reap()
	{
		if (child <= 0)
			return;
		int status = 0;
		EXPECT_EQ(waitpid(child, &status, 0), child);
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		child = -1;
	}

	// The other process: free to run on any CPU of this one's, it polls
	// as the provider does (after a call of its own when `called_last`)
	// until it runs elsewhere than `cpu`, for 1 s at most, or for `for_ms`
	// when given; then says where it ended.
	void ForkPoller(bool called_last, int for_ms = 0)
	{
		child = fork();
		ASSERT_GE(child, 0);
		if (child != 0)
			return;
		if (sched_setaffinity(0, sizeof(allowed), &allowed) != 0)
			_exit(2);
		if (called_last) {
			nic_world_lock(world);
			nic_sched_enter(world);
			nic_world_unlock(world);
		}
		auto until = steady_clock::now() + milliseconds(for_ms ? for_ms : 1000);
		while ((for_ms || sched_getcpu() == cpu) && steady_clock::now() < until) {
			if (nic_world_poll_lock(world)) {
				nic_sched_enter(world);
				nic_sched_poll(world);
				nic_world_unlock(world);
			}
		}
		cpu_set_t now;
		Polled polled;
		polled.cpu = sched_getcpu();
		polled.mask_kept = sched_getaffinity(0, sizeof(now), &now) == 0 &&
				   CPU_EQUAL(&now, &allowed);
		nic_world_lock(world);
		nic_world_leave(world);
		nic_world_unlock(world);
		_exit(write(from_child[1], &polled, sizeof(polled)) == sizeof(polled) ? 0 : 3);
	}

	uint64_t PollersMoved()
	{
		nic_stats stats;

		nic_world_stats(world, &stats);
		return stats.pollers_moved;
	}

	// Whether the child has said where it ended (without waiting).
	bool ChildDone()
	{
		struct pollfd p = {from_child[0], POLLIN, 0};
		return poll(&p, 1, 0) == 1;
	}

	Polled Result()
	{
		Polled polled;
		EXPECT_EQ(read(from_child[0], &polled, sizeof(polled)), ssize_t(sizeof(polled)));
		return polled;
	}

	cpu_set_t allowed, one;
	int cpu = -1;
	bool pinned = false;
	std::string name;
	fs_arena *arena = nullptr;
	nic_world *world = nullptr;
	int from_child[2] = {-1, -1};
	pid_t child = -1;
};

// This process takes the lock again and again on the CPU the child polls
// on, as the peer of a ping-pong does, and yields to it in between: the
// child's yields come back late, to a lock last taken there by another.
// The kernel may move the child first (a busy machine balances its CPUs):
// that attempt proves nothing, and the next one starts over.
TEST_F(NicReseat, APollerThatSharesItsCpuWithTheThreadItWaitsForMovesToAnother)
{
	for (int attempt = 0; attempt < 5 && PollersMoved() == 0; attempt++) {
		ForkPoller(false);
		auto until = steady_clock::now() + milliseconds(2000);
		while (!ChildDone() && steady_clock::now() < until) {
			nic_world_lock(world);
			nic_sched_enter(world);
			Compute(10);
			nic_world_unlock(world);
			Compute(10);
			sched_yield();
		}
		ASSERT_TRUE(ChildDone()) << "the child never moved";
		Polled polled = Result();
		Reap();
		EXPECT_NE(polled.cpu, cpu);
		EXPECT_TRUE(polled.mask_kept) << "the child's affinity mask changed";
	}
	EXPECT_EQ(PollersMoved(), 1u);
}

// This process computes on the child's CPU without calling in: the child
// called last, so the yields that come back late were to another program,
// and moving would not help the thread it waits for.
TEST_F(NicReseat, APollerWhoseCpuAnotherProgramTakesStays)
{
	nic_world_lock(world);
	nic_sched_enter(world); // a thread of the world, running its program
	nic_world_unlock(world);
	ForkPoller(true, 100);
	auto until = steady_clock::now() + milliseconds(2000);
	while (!ChildDone() && steady_clock::now() < until) {
		Compute(10);
		sched_yield();
	}
	ASSERT_TRUE(ChildDone()) << "the child did not finish";
	Polled polled = Result();
	EXPECT_TRUE(polled.mask_kept);
	EXPECT_EQ(PollersMoved(), 0u);
	nic_world_lock(world);
	nic_world_leave(world);
	nic_world_unlock(world);
}

} // namespace
