// A process ends while one of its threads waits inside a shared world (a
// verbs program's event thread, blocked in ibv_get_cq_event when main
// returns): the others go on. Killed, it leaves nothing the others wait
// on; leaving on its way out, its thread does not run the world again.
#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <string>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "providers/sim/nic/tests/shared_world.h"

namespace {

class NicExit : public ::testing::Test {
protected:
	void SetUp() override
	{
		// A name of its own per test: the worlds are left mapped (see
		// TearDown), and a name's candidate addresses are few.
		static int tests;
		name = "/fabsim-nic-exit-" + std::to_string(getpid()) + "-" +
		       std::to_string(++tests);
		world = MakeSharedWorld(name, &arena);
		ASSERT_NE(world, nullptr);
		ASSERT_EQ(pipe(report), 0);
	}

	void TearDown() override
	{
		// The world is left for the process's end: a thread of a child
		// may have parked on it (and a parked thread of this process
		// must not find it freed).
		fs_arena_unlink(name.c_str());
		close(report[0]);
		close(report[1]);
	}

	// In a child: a thread that waits inside the world until `ready`.
	static void Waiter(nic_world *world, std::atomic<bool> *ready,
			   std::atomic<bool> *returned)
	{
		nic_world_lock(world);
		nic_sched_enter(world);
		while (!ready->load())
			nic_sched_wait(world, [](void *c) {
				return static_cast<std::atomic<bool> *>(c)->load();
			}, ready, NM_TIME_NEVER, false);
		returned->store(true);
		nic_world_unlock(world);
	}

	// The parent wakes whoever waits, a thread of its own among them, and
	// waits itself a little: none of it may hang on what a dead process
	// left (a waiter killed inside a process-shared condition variable
	// would make such wake-ups wait for it for ever).
	void StillUsable()
	{
		std::atomic<bool> ready{false}, returned{false};
		std::thread t(Waiter, world, &ready, &returned);
		usleep(50000);
		nic_world_lock(world);
		nic_sched_enter(world);
		EXPECT_FALSE(nic_world_broken(world));
		for (int i = 0; i < 5; i++) {
			nic_sched_posted(world);
			nic_sched_sleep(world, 1000);
		}
		ready.store(true);
		nic_sched_posted(world);
		nic_world_unlock(world);
		t.join();
		EXPECT_TRUE(returned.load());
	}

	// A child process takes the world's lock and ends holding it.
	void DieHoldingTheLock()
	{
		pid_t child = fork();
		ASSERT_GE(child, 0);
		if (child == 0) {
			nic_world_lock(world);
			_exit(0);
		}
		int status = 0;
		ASSERT_EQ(waitpid(child, &status, 0), child);
	}

	std::string name;
	fs_arena *arena = nullptr;
	nic_world *world = nullptr;
	int report[2] = {-1, -1};
};

// A thread that calls in and then ends (a worker that posts, a thread that
// signals a CQ) will never call in again: it is forgotten within
// milliseconds, rather than held for the 250 ms a silent thread keeps its
// place in time and then reported as taken out of time.
TEST_F(NicExit, AThreadThatEndsIsForgotten)
{
	nic_world_lock(world);
	nic_sched_enter(world);
	nic_world_unlock(world);
	std::thread worker([this] {
		nic_world_lock(world);
		nic_sched_enter(world);
		nic_world_unlock(world);
	});
	worker.join();
	nic_world_lock(world);
	nic_sched_enter(world);
	nic_sched_sleep(world, NM_NS_PER_MS);
	nic_stats stats;
	nic_world_stats(world, &stats);
	nic_world_unlock(world);
	EXPECT_EQ(stats.threads_out_of_time, 0u)
		<< "the ended thread was taken out of time, not forgotten";
}

TEST_F(NicExit, AProcessKilledWhileItsThreadWaitsInsideLeavesNothingBehind)
{
	pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		static std::atomic<bool> ready{false}, returned{false};
		std::thread t(Waiter, world, &ready, &returned);
		usleep(100000);
		if (write(report[1], "w", 1) != 1)
			_exit(2);
		for (;;)
			pause(); // killed here, its thread still waiting
	}
	char c = 0;
	ASSERT_EQ(read(report[0], &c, 1), 1);
	ASSERT_EQ(kill(child, SIGKILL), 0);
	int status = 0;
	ASSERT_EQ(waitpid(child, &status, 0), child);
	StillUsable();
}

TEST_F(NicExit, AThreadOfAProcessThatLeftOnItsWayOutDoesNotRunTheWorld)
{
	pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		static std::atomic<bool> ready{false}, returned{false};
		std::thread t(Waiter, world, &ready, &returned);
		usleep(100000);
		// What leaving on the way out does (shared_world_depart), and
		// then the thread's condition comes true.
		nic_world_lock(world);
		nic_world_leave(world);
		nic_world_depart(world);
		ready.store(true);
		nic_world_unlock(world);
		usleep(200000);
		char r = returned.load() ? 'r' : 'p';
		if (write(report[1], &r, 1) != 1)
			_exit(2);
		_exit(0); // the thread, parked, ends with the process
	}
	char c = 0;
	ASSERT_EQ(read(report[0], &c, 1), 1);
	EXPECT_EQ(c, 'p') << "the thread went on in a world its process had left";
	int status = 0;
	ASSERT_EQ(waitpid(child, &status, 0), child);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	StillUsable();
}

// A process that has left stays gone for the others, whatever its other
// threads do on their way out: one that takes the lock then (and parks
// there) must not bring its process back. Taking the lock once did, by
// way of nic_proc_self (it revives a process's entry), until the process
// ended: a process that left last took itself for not the last.
TEST_F(NicExit, AProcessThatLeftStaysGoneWhenAnotherOfItsThreadsTakesTheLock)
{
	int go_on[2];
	ASSERT_EQ(pipe(go_on), 0);
	pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		nic_world_lock(world);
		nic_world_leave(world);
		nic_world_depart(world);
		nic_world_unlock(world);
		nic_world *w = world;
		std::thread([w] { nic_world_lock(w); }).detach();
		usleep(100000);
		char r = 'l';
		char c;
		if (write(report[1], &r, 1) != 1 || read(go_on[0], &c, 1) != 1)
			_exit(2);
		_exit(0); // the thread, parked, ends with the process
	}
	char c = 0;
	ASSERT_EQ(read(report[0], &c, 1), 1);
	nic_world_lock(world);
	bool present = nic_world_others_present(world);
	nic_world_unlock(world);
	EXPECT_FALSE(present) << "a process that left came back when its thread took the lock";
	ASSERT_EQ(write(go_on[1], "x", 1), 1);
	int status = 0;
	ASSERT_EQ(waitpid(child, &status, 0), child);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(go_on[0]);
	close(go_on[1]);
}

// A process dies holding the world's lock (in the middle of a long run):
// a thread of another that only polls (fi_cq_read in a loop) finds it out
// and gets the lock. Its polls looked at the holder's flag only, which the
// dead holder left set, and spun for ever.
TEST_F(NicExit, APollerGetsTheLockOfAProcessThatDiedHoldingIt)
{
	ASSERT_NO_FATAL_FAILURE(DieHoldingTheLock());
	bool got = false;
	for (int i = 0; i < 100000 && !got; i++)
		got = nic_world_poll_lock(world);
	ASSERT_TRUE(got) << "100000 polls never took the dead holder's lock";
	EXPECT_TRUE(nic_world_broken(world));
	nic_world_unlock(world);
}

// A thread that ends holding the lock in a process that goes on (a
// worker killed by pthread_exit in a callback): another thread gets the
// lock, and the world says it is broken. A holder's process that lives
// (its main thread ended, say) is no sign of a live holder.
TEST_F(NicExit, ALockHeldByAThreadThatEndedIsTaken)
{
	std::thread t([this] {
		nic_world_lock(world);
		pthread_exit(nullptr);
	});
	t.join();
	EXPECT_FALSE(nic_world_broken(world));
	nic_world_lock(world);
	EXPECT_TRUE(nic_world_broken(world));
	nic_world_unlock(world);
}

// A holder whose process's main thread has ended (pthread_exit: /proc
// shows the main thread a zombie) is alive: its lock is not taken.
TEST_F(NicExit, ALiveHolderInAProcessWhoseMainThreadEndedKeepsTheLock)
{
	pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		std::thread([this] {
			nic_world_lock(world);
			char c = 'x';
			(void)!write(report[1], &c, 1);
			for (;;)
				pause();
		}).detach();
		syscall(SYS_exit, 0); // the main thread alone ends
	}
	char c;
	ASSERT_EQ(read(report[0], &c, 1), 1);
	usleep(50000);
	bool got = false;
	for (int i = 0; i < 20000 && !got; i++)
		got = nic_world_poll_lock(world);
	EXPECT_FALSE(got) << "a live holder's lock was taken";
	EXPECT_FALSE(nic_world_broken(world));
	kill(child, SIGKILL);
	int status = 0;
	ASSERT_EQ(waitpid(child, &status, 0), child);
	// Now it is gone: taken, and the world is broken.
	for (int i = 0; i < 100000 && !got; i++)
		got = nic_world_poll_lock(world);
	ASSERT_TRUE(got);
	EXPECT_TRUE(nic_world_broken(world));
	nic_world_unlock(world);
}

// A thread that takes the lock to post (no poll: it waits for it) gets it
// from a process that died holding it, and the world says it is broken.
TEST_F(NicExit, ALockerGetsTheLockOfAProcessThatDiedHoldingIt)
{
	ASSERT_NO_FATAL_FAILURE(DieHoldingTheLock());
	EXPECT_FALSE(nic_world_broken(world));
	nic_world_lock(world);
	EXPECT_TRUE(nic_world_broken(world));
	nic_world_unlock(world);
	// Released, it is free again: another process takes it at once.
	pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0)
		_exit(nic_world_trylock(world) ? 0 : 1);
	int status = 0;
	ASSERT_EQ(waitpid(child, &status, 0), child);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// A thread asleep on the lock (past its spins) gets it when the holder,
// another process, lets go.
TEST_F(NicExit, ALockerAsleepOnTheLockGetsItWhenReleased)
{
	int go[2];
	ASSERT_EQ(pipe(go), 0);
	pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		nic_world_lock(world);
		char c = 'x';
		(void)!write(report[1], &c, 1);
		(void)!read(go[0], &c, 1);
		nic_world_unlock(world);
		_exit(0);
	}
	char c;
	ASSERT_EQ(read(report[0], &c, 1), 1);
	std::atomic<bool> got{false};
	std::thread t([&] {
		nic_world_lock(world);
		got.store(true);
		nic_world_unlock(world);
	});
	usleep(50000); // long past its spins: asleep
	EXPECT_FALSE(got.load());
	ASSERT_EQ(write(go[1], "g", 1), 1);
	t.join();
	EXPECT_TRUE(got.load());
	EXPECT_FALSE(nic_world_broken(world));
	int status = 0;
	ASSERT_EQ(waitpid(child, &status, 0), child);
	close(go[0]);
	close(go[1]);
}

}  // namespace
