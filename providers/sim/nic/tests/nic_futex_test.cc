// A thread that waits outside the fabric on a futex (a semaphore, a
// condition variable) for a sibling that waits inside it: the scheduler
// takes it out of virtual time within milliseconds (nic_kernel.h), and
// brings it back as soon as the sibling changes its word — before time
// moves on — so that it acts at the instant it was woken.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <semaphore.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

extern "C" {
#include <netmodel/nm_preset.h>
#include "providers/sim/nic/nic.h"
}

namespace {

// A thread of the program that waits on `go` outside the fabric. Woken,
// it takes a while (real time) before it calls in: whatever it does then
// happens at the instant it was woken, which it records in *seen.
void Sleep(nic_world *world, sem_t *go, std::atomic<bool> *entered,
	   std::atomic<nm_time_ns> *seen)
{
	nic_world_lock(world);
	nic_sched_enter(world);
	nic_world_unlock(world);
	*entered = true;
	sem_wait(go);
	auto until = std::chrono::steady_clock::now() +
		     std::chrono::milliseconds(100);
	while (std::chrono::steady_clock::now() < until)
		;
	nic_world_lock(world);
	nic_sched_enter(world);
	*seen = nic_world_now(world);
	nic_world_unlock(world);
}

TEST(NicFutex, ASleeperWokenByASiblingActsAtTheInstantOfItsWakeUp)
{
	nm_config cfg;
	nm_error err;
	nic_transport_params tp;
	nic_world *world = nullptr;
	ASSERT_EQ(nm_preset_load(&cfg, "roce-25g", &err), 0);
	nic_transport_defaults(&tp);
	ASSERT_EQ(nic_world_create_in(nullptr, &cfg, &tp, &world, &err), 0);

	sem_t go;
	ASSERT_EQ(sem_init(&go, 0, 0), 0);
	std::atomic<nm_time_ns> seen{0};
	std::atomic<bool> entered{false};
	std::thread sleeper(Sleep, world, &go, &entered, &seen);

	while (!entered)
		std::this_thread::yield();
	nic_world_lock(world);
	nic_sched_enter(world);
	// Time moves only once the sleeper is out of time (asleep on `go`).
	nic_sched_sleep(world, 1000);
	nm_time_ns posted = nic_world_now(world);
	EXPECT_GE(posted, 1000u);
	sem_post(&go);
	// A long sleep: it must not start before the sleeper has called in.
	nic_sched_sleep(world, NM_NS_PER_S);
	nic_world_unlock(world);
	sleeper.join();
	EXPECT_EQ(seen.load(), posted);
	sem_destroy(&go);
	nic_world_destroy(world);
}

// The same on a shared fabric where another process's thread is the one
// that finds the sleeper asleep and takes it out of time: what it read of
// the sleeper's wait is kept, so that this process can still see its word
// change.
TEST(NicFutex, ASleeperTakenOutOfTimeByAnotherProcessIsBroughtBackByItsWaker)
{
	std::string name = "/fabsim-nic-futex-" + std::to_string(getpid());
	char msg[256] = "";
	fs_arena *arena = nullptr;
	fs_arena_unlink(name.c_str());
	ASSERT_EQ(fs_arena_create(name.c_str(), size_t(1) << 28, &arena, msg,
				  sizeof(msg)), 0) << msg;
	nm_config cfg;
	nm_error err;
	nic_transport_params tp;
	nic_world *world = nullptr;
	ASSERT_EQ(nm_preset_load(&cfg, "roce-25g", &err), 0);
	nic_transport_defaults(&tp);
	ASSERT_EQ(nic_world_create_in(arena, &cfg, &tp, &world, &err), 0);
	nic_world_lock(world);
	nic_sched_enter(world); // this thread is one of the program's
	nic_world_unlock(world);

	// The other process: a thread that sleeps in the fabric a
	// millisecond at a time (and so looks at everyone else) until told
	// to stop.
	int start[2], ready[2], stop[2];
	ASSERT_EQ(pipe(start), 0);
	ASSERT_EQ(pipe(ready), 0);
	ASSERT_EQ(pipe2(stop, O_NONBLOCK), 0);
	pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		char c;
		if (read(start[0], &c, 1) != 1)
			_exit(2);
		auto told = std::chrono::steady_clock::now() +
			    std::chrono::milliseconds(100);
		bool told_ready = false;
		nic_world_lock(world);
		nic_sched_enter(world);
		while (read(stop[0], &c, 1) != 1) {
			nic_sched_sleep(world, NM_NS_PER_MS);
			if (!told_ready &&
			    std::chrono::steady_clock::now() > told)
				told_ready = write(ready[1], "r", 1) == 1;
		}
		nic_world_leave(world);
		nic_world_unlock(world);
		_exit(0);
	}

	sem_t go;
	ASSERT_EQ(sem_init(&go, 0, 0), 0);
	std::atomic<nm_time_ns> seen{0};
	std::atomic<bool> entered{false};
	std::thread sleeper(Sleep, world, &go, &entered, &seen);
	while (!entered)
		std::this_thread::yield();
	ASSERT_EQ(write(start[1], "s", 1), 1);
	// Only the other process looks at the sleeper meanwhile: this
	// thread waits for it outside the fabric, and is soon out of time
	// too, so that time runs on.
	char c;
	ASSERT_EQ(read(ready[0], &c, 1), 1);

	nic_world_lock(world);
	nic_sched_enter(world);
	nm_time_ns posted = nic_world_now(world);
	EXPECT_GT(posted, 0u) << "time did not run without the sleeper";
	sem_post(&go);
	nic_sched_sleep(world, NM_NS_PER_S);
	nic_world_unlock(world);
	sleeper.join();
	EXPECT_EQ(seen.load(), posted);

	ASSERT_EQ(write(stop[1], "q", 1), 1);
	int status = 0;
	ASSERT_EQ(waitpid(child, &status, 0), child);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	sem_destroy(&go);
	fs_arena_unlink(name.c_str());
}

} // namespace
