// Pollers of a world that several processes share (nic_lock.c): a thread
// whose last poll left it one poll short of idle, with nothing moved since,
// makes that poll without the world's lock; and a poller that looked at it
// before it became idle looks again.
#include <gtest/gtest.h>

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "arena/working_set.h"
#include "providers/sim/nic/tests/shared_world.h"

extern "C" {
#include "providers/sim/nic/tests/nic_poll_news.h"
}

namespace {

class NicPoll : public ::testing::Test {
protected:
	void SetUp() override
	{
		name = "/fabsim-nic-poll-" + std::to_string(getpid()) + "-" +
		       ::testing::UnitTest::GetInstance()->current_test_info()->name();
		world = MakeSharedWorld(name, &arena);
		ASSERT_NE(world, nullptr);
		ASSERT_EQ(pipe(to_child), 0);
		ASSERT_EQ(pipe(from_child), 0);
		ASSERT_EQ(pipe(wake), 0);
		child = fork();
		ASSERT_GE(child, 0);
		if (child == 0)
			Child();
	}

	void TearDown() override
	{
		Step('q');
		int status = 0;
		EXPECT_EQ(waitpid(child, &status, 0), child);
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		fs_arena_unlink(name.c_str());
	}

	// The other process: a thread of the program that does what it is
	// told, one step at a time, and answers each.
	[[noreturn]] void Child()
	{
		char step;
		while (read(to_child[0], &step, 1) == 1) {
			char answer = 'k';
			switch (step) {
			case 'e': // calls in (a post, say): it runs
				nic_world_lock(world);
				nic_sched_enter(world);
				nic_world_unlock(world);
				break;
			case 'p': // a poll that takes the lock
				nic_world_lock(world);
				nic_sched_enter(world);
				nic_sched_poll(world);
				nic_world_unlock(world);
				break;
			case 'l': // a poll as the provider makes it
				if (nic_world_poll_lock(world)) {
					nic_sched_enter(world);
					nic_sched_poll(world);
					nic_world_unlock(world);
					answer = 'L'; // it took the lock
				}
				break;
			case 'b': { // blocked outside until `wake`, then back
				nm_time_ns now;

				if (read(wake[0], &step, 1) != 1)
					_exit(4);
				nic_world_lock(world);
				nic_sched_enter(world);
				now = nic_world_now(world);
				nic_world_unlock(world);
				if (write(from_child[1], &now, sizeof(now)) !=
				    sizeof(now))
					_exit(2);
				continue;
			}
			case 'q':
				nic_world_lock(world);
				nic_world_leave(world);
				nic_world_unlock(world);
				(void)!write(from_child[1], &answer, 1);
				_exit(0);
			}
			if (write(from_child[1], &answer, 1) != 1)
				_exit(2);
		}
		_exit(3);
	}

	// Has the child take a step; its answer.
	char Step(char step)
	{
		char answer = 0;
		EXPECT_EQ(write(to_child[1], &step, 1), 1);
		EXPECT_EQ(read(from_child[0], &answer, 1), 1);
		return answer;
	}

	std::string name;
	fs_arena *arena = nullptr;
	nic_world *world = nullptr;
	int to_child[2] = {-1, -1}, from_child[2] = {-1, -1}, wake[2] = {-1, -1};
	pid_t child = -1;
};

// The world's lock, held until the end of the scope: a failed ASSERT
// returns with it let go, and the child's last step can still take it.
class Held {
public:
	explicit Held(nic_world *world) : world_(world) { nic_world_lock(world_); }
	~Held() { nic_world_unlock(world_); }
	Held(const Held &) = delete;
	Held &operator=(const Held &) = delete;

private:
	nic_world *world_;
};

void Fire(nm_engine *, void *ctx, uint64_t)
{
	*static_cast<bool *>(ctx) = true;
}

// This thread (lock held) calls in and polls, with an event due 1 us
// ahead that sets *fired: *ran, whether the poll ran the model.
void PollWithAnEventDue(nic_world *world, bool *fired, bool *ran)
{
	*fired = false;
	ASSERT_EQ(nic_world_schedule(world, 0, NM_NS_PER_US, Fire, fired,
				     nullptr), 0);
	nic_sched_enter(world);
	*ran = nic_sched_poll(world);
}

// The child's first poll finds nothing (this thread runs); its second,
// while this thread holds the lock, makes it idle all the same: this
// thread's poll may then move time.
TEST_F(NicPoll, APollOneShortOfIdleMakesThePollerIdleWithoutTheLock)
{
	nic_world_lock(world);
	nic_sched_enter(world);
	nic_world_unlock(world);
	Step('p');

	Held held(world);
	EXPECT_EQ(Step('l'), 'k') << "the lock is held: the poll cannot take it";
	bool fired, ran;
	ASSERT_NO_FATAL_FAILURE(PollWithAnEventDue(world, &fired, &ran));
	EXPECT_TRUE(ran) << "the child's second poll did not make it idle";
	EXPECT_TRUE(fired);
}

void Nothing(nm_engine *, void *, uint64_t) {}

// The child's run brings this thread news, and leaves the child one poll
// short of idle; this thread's poll, which takes the news in, finds the
// child not idle and leaves this thread one short too. Both then become
// idle without the lock and look again only when something moves: the one
// that became idle first must see the other do so, or nobody would run
// what is left to run.
TEST_F(NicPoll, OfTwoPollersThatBecomeIdleWithoutTheLockTheFirstLooksAgain)
{
	Step('e');
	{
		Held held(world);
		nic_sched_enter(world);
		static nic_poll_news news; // the same address in the child
		nic_poll_news_for_me(&news, world);
		ASSERT_EQ(nic_world_schedule(world, 0, NM_NS_PER_US,
					     nic_poll_news_tell, &news, nullptr),
			  0);
		ASSERT_EQ(nic_world_schedule(world, 0, NM_NS_PER_MS, Nothing,
					     nullptr, nullptr),
			  0);
		EXPECT_FALSE(nic_sched_poll(world)); // the child runs
		nic_sched_enter(world);
		EXPECT_FALSE(nic_sched_poll(world)); // a poll in a loop: idle now
	}

	EXPECT_EQ(Step('p'), 'k'); // runs Tell: news for this process
	ASSERT_TRUE(nic_world_poll_lock(world)) << "this thread missed its news";
	nic_sched_enter(world);
	EXPECT_FALSE(nic_sched_poll(world)); // the child is not idle
	nic_world_unlock(world);

	EXPECT_EQ(Step('l'), 'k') << "the child's idle poll took the lock";
	EXPECT_FALSE(nic_world_poll_lock(world))
		<< "this thread's idle poll took the lock";
	EXPECT_EQ(Step('l'), 'L')
		<< "the child did not look again after this thread became idle";
}

// The child, asleep outside the fabric (reading a pipe, as fi_pingpong's
// server reads its control socket), is taken out of time. Woken, it calls
// in while this thread holds the lock, and sleeps on the lock: it is
// coming back, at this instant, and time must not move before it has
// (under load, fi_pingpong's server came back microseconds late, once in
// a few hundred runs, and the trace differed).
TEST_F(NicPoll, AThreadAsleepOnTheLockOnItsWayBackHoldsTheClock)
{
	Step('e');
	char b = 'b';
	ASSERT_EQ(write(to_child[1], &b, 1), 1);
	// On any failure below, the child is let go (it reads `wake`, then
	// takes the lock) and answers 'b' before TearDown's step.
	struct LetGo {
		int fd, answer;
		bool woken = false;
		~LetGo()
		{
			nm_time_ns ignored;
			char c = 'w';
			if (!woken && write(fd, &c, 1) != 1)
				return;
			(void)!read(answer, &ignored, sizeof(ignored));
		}
	} let_go{wake[1], from_child[0]};
	nm_time_ns now, back = 0;
	{
		Held held(world);
		nic_sched_enter(world);
		nic_sched_sleep(world, NM_NS_PER_US); // time moves: the child is out
		ASSERT_GT(nic_world_now(world), 0u);
		ASSERT_EQ(write(wake[1], &b, 1), 1);
		let_go.woken = true;
		// Until the child sleeps in the kernel on the lock this thread holds.
		std::string syscall_file = "/proc/" + std::to_string(child) + "/syscall";
		auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
		for (;;) {
			std::ifstream f(syscall_file);
			std::string call;
			f >> call;
			if (call == std::to_string(SYS_futex))
				break;
			ASSERT_LT(std::chrono::steady_clock::now(), give_up)
				<< "the child never slept on the lock";
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
		}
		now = nic_world_now(world);
		bool fired, ran;
		ASSERT_NO_FATAL_FAILURE(PollWithAnEventDue(world, &fired, &ran));
		EXPECT_FALSE(ran) << "time moved while the child was on its way back";
		EXPECT_EQ(nic_world_now(world), now);
	}
	ASSERT_EQ(read(from_child[0], &back, sizeof(back)), (ssize_t)sizeof(back));
	let_go.answer = -1; // answered
	EXPECT_EQ(back, now) << "the child came back late";
}

// A thread's turn (its holds since another thread held the lock) notes
// what it touches only when its working set is renewed, one turn in
// FS_WORKING_SET_REFRESH, in each of its holds; the other turns only fetch
// the set and note nothing, in any hold (nic_lock.c, begin_turn).
TEST(NicTurn, ATurnNotesOnlyWhenItsSetIsRenewed)
{
	std::string name = "/fabsim-nic-turn-" + std::to_string(getpid());
	nic_world *world = MakeSharedWorld(name);
	ASSERT_NE(world, nullptr);
	fs_working_set *ws = fs_working_set_mine();
	ASSERT_NE(ws, nullptr);
	// One turn of this thread, two holds; whether it noted.
	auto turn = [world, ws](int n) {
		bool noted = false;
		for (int hold = 0; hold < 2; hold++) {
			nic_world_lock(world);
			if (hold == 0)
				noted = ws->noting_turn;
			EXPECT_EQ(fs_working_set_noting(), noted ? ws : nullptr)
				<< "turn " << n << ", hold " << hold;
			nic_world_unlock(world);
		}
		// Another thread's hold ends the turn.
		std::thread([world] {
			nic_world_lock(world);
			nic_world_unlock(world);
		}).join();
		return noted;
	};
	// Where the set's count of turns stands is up to the tests before.
	int first = 0;
	while (!turn(first) && first <= FS_WORKING_SET_REFRESH)
		first++;
	ASSERT_LE(first, FS_WORKING_SET_REFRESH) << "no turn noted";
	for (int n = 1; n <= 2 * FS_WORKING_SET_REFRESH; n++)
		EXPECT_EQ(turn(n), n % FS_WORKING_SET_REFRESH == 0) << "turn " << n;
	nic_world_destroy(world);
	fs_arena_unlink(name.c_str());
}

} // namespace
