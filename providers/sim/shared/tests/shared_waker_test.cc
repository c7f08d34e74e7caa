// A process's waker thread (shared_waker.h) on a world in an arena: it
// stops cleanly, and a child forked while it runs may stop its copy without
// touching the parent's thread or the world (the thread is not the child's
// to join; joining it would hang or crash the child).
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern "C" {
#include <netmodel/nm_preset.h>
#include "providers/sim/nic/nic.h"
#include "providers/sim/shared/shared_waker.h"
}

namespace {

class SharedWaker : public ::testing::Test {
protected:
	void SetUp() override
	{
		nm_error err;
		nm_config cfg;
		nic_transport_params tp;

		ASSERT_EQ(nm_preset_load(&cfg, "roce-25g", &err), 0) << err.msg;
		nic_transport_defaults(&tp);
		arena_ = fs_arena_private(size_t(1) << 28);
		ASSERT_NE(arena_, nullptr);
		ASSERT_EQ(nic_world_create_in(arena_, &cfg, &tp, &world_, &err),
			  0)
			<< err.msg;
	}
	void TearDown() override
	{
		if (world_)
			nic_world_destroy(world_);
		if (arena_)
			fs_arena_detach(arena_);
	}
	fs_arena *arena_ = nullptr;
	nic_world *world_ = nullptr;
};

const shared_waker_ops kNoHooks = {nullptr, nullptr, nullptr};

// The child's exit status, or -1 when it has not ended in 10 s (then it
// is killed).
int WaitChild(pid_t child)
{
	auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
	int status;

	while (std::chrono::steady_clock::now() < until) {
		pid_t got = waitpid(child, &status, WNOHANG);

		if (got == child)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
		std::this_thread::sleep_for(std::chrono::milliseconds(5));
	}
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	return -1;
}

TEST_F(SharedWaker, StartsAndStops)
{
	shared_waker *w = nullptr;

	ASSERT_EQ(shared_waker_start(world_, &kNoHooks, nullptr, &w), 0);
	ASSERT_NE(w, nullptr);
	shared_waker_kick(w);
	shared_waker_stop(w);
	shared_waker_stop(nullptr); // nothing
}

TEST_F(SharedWaker, AForkedChildStopsItsCopyWithoutTheParentsThread)
{
	shared_waker *w = nullptr;

	ASSERT_EQ(shared_waker_start(world_, &kNoHooks, nullptr, &w), 0);
	// Hold the world's lock across the fork, as a thread of the parent
	// may: a child that went into the world would wait for it forever.
	nic_world_lock(world_);
	pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		shared_waker_stop(w);
		_exit(0);
	}
	nic_world_unlock(world_);
	EXPECT_EQ(WaitChild(child), 0)
		<< "the child hung or died stopping its copy of the waker";
	// The parent's waker is untouched and stops as usual.
	shared_waker_stop(w);
}

} // namespace
