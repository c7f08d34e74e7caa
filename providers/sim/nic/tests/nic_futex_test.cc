// A thread that waits outside the fabric on a futex (a semaphore, a
// condition variable) for a sibling that waits inside it: the scheduler
// takes it out of virtual time within milliseconds (nic_kernel.h), and
// brings it back as soon as the sibling changes its word — before time
// moves on — so that it acts at the instant it was woken.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <semaphore.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <string>
#include <thread>

#include "providers/sim/nic/nic_kernel.h"
#include "providers/sim/nic/tests/shared_world.h"

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
	nic_world *world = MakeWorldIn(nullptr);
	ASSERT_NE(world, nullptr);

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

// A thread of a world of one process that comes back from outside the
// fabric (a sleep between two posts) and finds the world's lock held
// sleeps on it (a pthread mutex there): it is on its way in, and holds the
// clock, as a thread asleep on a shared world's lock does. Before, a
// waiting sibling that looked at it then took it for one blocked on
// another party, out of time, and the clock jumped (sleep_test, now and
// then under load: "the clock ran on while the sender slept").
TEST(NicFutex, AThreadAsleepOnTheLockOfAWorldOfOneProcessHoldsTheClock)
{
	nic_world *world = MakeWorldIn(nullptr);
	ASSERT_NE(world, nullptr);

	std::atomic<bool> entered{false}, go{false};
	std::atomic<pid_t> tid{0};
	std::atomic<nm_time_ns> seen{0};
	std::thread late([&] {
		tid = pid_t(syscall(SYS_gettid));
		nic_world_lock(world);
		nic_sched_enter(world);
		nic_world_unlock(world);
		entered = true;
		while (!go) // computing: it keeps its place
			std::this_thread::yield();
		nic_world_lock(world);
		nic_sched_enter(world);
		seen = nic_world_now(world);
		nic_sched_sleep(world, NM_NS_PER_S);
		nic_world_unlock(world);
	});
	while (!entered)
		std::this_thread::yield();

	nic_world_lock(world);
	nic_sched_enter(world);
	// Looks at the computing thread until its silence is timed (a poller
	// reads the clock every 64 looks), then lets it be silent for longer
	// than a thread asleep on a futex keeps its place (NIC_BLOCKED_US).
	for (int i = 0; i < 200; i++)
		nic_sched_poll(world);
	std::this_thread::sleep_for(std::chrono::milliseconds(5));
	go = true;
	uintptr_t word = 0;
	auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(5);
	while (!nic_kernel_asleep_on_futex(getpid(), tid, &word) &&
	       std::chrono::steady_clock::now() < limit)
		std::this_thread::yield();
	// Not an ASSERT: the thread must still get the lock and end.
	EXPECT_NE(word, 0u) << "the thread never slept on the lock";
	nm_time_ns before = nic_world_now(world);
	nic_sched_sleep(world, NM_NS_PER_S);
	nic_world_unlock(world);
	late.join();
	EXPECT_EQ(seen.load(), before) << "the clock moved while it slept on the lock";
	nic_world_destroy(world);
}

// A world in shared memory, as processes of one fabric share it; `name`
// is unlinked at the end of the test.
nic_world *SharedWorld(const std::string &name)
{
	return MakeSharedWorld(name);
}

// Another process: once `start` has a byte, a thread that sleeps in the
// fabric a millisecond at a time (and so looks at everyone else, moving
// time whenever it may) until `stop` (non-blocking) has one; with `ready`,
// it says so there after 100 ms of that.
pid_t SleepingProcess(nic_world *world, int start, int stop, int ready = -1)
{
	pid_t child = fork();
	if (child != 0)
		return child;
	char c;
	if (read(start, &c, 1) != 1)
		_exit(2);
	auto told = std::chrono::steady_clock::now() +
		    std::chrono::milliseconds(100);
	bool told_ready = ready < 0;
	nic_world_lock(world);
	nic_sched_enter(world);
	while (read(stop, &c, 1) != 1) {
		nic_sched_sleep(world, NM_NS_PER_MS);
		if (!told_ready && std::chrono::steady_clock::now() > told)
			told_ready = write(ready, "r", 1) == 1;
	}
	nic_world_leave(world);
	nic_world_unlock(world);
	_exit(0);
}

// The same on a shared fabric where another process's thread is the one
// that finds the sleeper asleep and takes it out of time: what it read of
// the sleeper's wait is kept, so that this process can still see its word
// change.
TEST(NicFutex, ASleeperTakenOutOfTimeByAnotherProcessIsBroughtBackByItsWaker)
{
	std::string name = "/fabsim-nic-futex-" + std::to_string(getpid());
	nic_world *world = SharedWorld(name);
	ASSERT_NE(world, nullptr);
	nic_world_lock(world);
	nic_sched_enter(world); // this thread is one of the program's
	nic_world_unlock(world);

	// The other process, which says when it has slept a while.
	int start[2], ready[2], stop[2];
	ASSERT_EQ(pipe(start), 0);
	ASSERT_EQ(pipe(ready), 0);
	ASSERT_EQ(pipe2(stop, O_NONBLOCK), 0);
	pid_t child = SleepingProcess(world, start[0], stop[0], ready[1]);
	ASSERT_GE(child, 0);

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

// A thread that waits in the fabric for what a sibling takes in (a waker
// thread takes in the connection request another process's run delivered,
// which the thread in rdma_get_request waits for): that thread is about to
// run, and the other process must not move time before it has, however
// long it takes to get a CPU. Here it is held in a signal handler, asleep
// in its wait.
int hold_pipe[2];
std::atomic<bool> held{false};

void Hold(int)
{
	char c;
	held = true;
	while (read(hold_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
}

bool Flag(void *ctx)
{
	return static_cast<std::atomic<bool> *>(ctx)->load();
}

void Fire(nm_engine *, void *ctx, uint64_t)
{
	static_cast<std::atomic<bool> *>(ctx)->store(true);
}

// Waits in the fabric until *flag, however long that takes.
void WaitFor(nic_world *world, std::atomic<bool> *flag)
{
	while (nic_sched_wait(world, Flag, flag, NM_TIME_NEVER, false) !=
	       NIC_WAIT_READY)
		;
}

TEST(NicFutex, AThreadASiblingTookInWhatItWaitsForRunsBeforeTimeMoves)
{
	std::string name = "/fabsim-nic-sibling-" + std::to_string(getpid());
	nic_world *world = SharedWorld(name);
	ASSERT_NE(world, nullptr);

	// The other process, moving time whenever it may.
	int start[2], stop[2];
	ASSERT_EQ(pipe(start), 0);
	ASSERT_EQ(pipe2(stop, O_NONBLOCK), 0);
	pid_t child = SleepingProcess(world, start[0], stop[0]);
	ASSERT_GE(child, 0);

	// The waiting thread, asleep in its wait (nobody else uses the world
	// yet: it holds no lock there), then held in a signal handler.
	ASSERT_EQ(pipe(hold_pipe), 0);
	struct sigaction sa = {};
	sa.sa_handler = Hold;
	ASSERT_EQ(sigaction(SIGUSR1, &sa, nullptr), 0);
	std::atomic<bool> fired{false};
	std::atomic<nm_time_ns> seen{0};
	std::atomic<pid_t> tid{0};
	std::thread waiter([&] {
		tid = (pid_t)syscall(SYS_gettid);
		nic_world_lock(world);
		nic_sched_enter(world);
		WaitFor(world, &fired);
		seen = nic_world_now(world);
		nic_world_unlock(world);
	});
	auto asleep = [&] {
		if (!tid)
			return false;
		std::string stat = "/proc/self/task/" +
				   std::to_string(tid.load()) + "/stat";
		char buf[512] = "";
		FILE *f = fopen(stat.c_str(), "r");
		if (!f)
			return false;
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		const char *state = strrchr(buf, ')');
		return state && state[1] == ' ' && state[2] == 'S';
	};
	// It wakes now and then (its wait's slices): held while it holds the
	// world's lock, it is let go and held again.
	for (;;) {
		while (!asleep())
			usleep(1000);
		ASSERT_EQ(syscall(SYS_tgkill, getpid(), tid.load(), SIGUSR1),
			  0);
		while (!held)
			usleep(1000);
		if (nic_world_trylock(world)) {
			nic_world_unlock(world);
			break;
		}
		held = false;
		ASSERT_EQ(write(hold_pipe[1], "r", 1), 1);
	}

	// Its sibling: what it waits for comes a millisecond from now, taken
	// in by the sibling or run by the sibling itself.
	std::atomic<bool> stopped{false};
	nm_time_ns due = 0;
	std::thread sibling([&] {
		nic_world_lock(world);
		nic_sched_enter(world);
		due = nic_world_now(world) + NM_NS_PER_MS;
		EXPECT_EQ(nic_world_schedule(world, 0, NM_NS_PER_MS, Fire,
					     &fired, nullptr), 0);
		WaitFor(world, &stopped);
		nic_world_unlock(world);
	});
	ASSERT_EQ(write(start[1], "s", 1), 1);
	// Long enough for the other process to move time on many times.
	while (!fired)
		usleep(1000);
	usleep(200000);
	ASSERT_EQ(write(hold_pipe[1], "r", 1), 1);
	waiter.join();
	EXPECT_EQ(seen.load(), due)
		<< "time moved while the waiting thread was about to run";

	nic_world_lock(world);
	stopped = true;
	nic_world_unlock(world);
	sibling.join();
	ASSERT_EQ(write(stop[1], "q", 1), 1);
	int status = 0;
	ASSERT_EQ(waitpid(child, &status, 0), child);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	fs_arena_unlink(name.c_str());
}

} // namespace
