// What the scheduler reads from the kernel about a thread (nic_kernel.h):
// whether it is asleep waiting, with no time limit, for another party (a
// pipe, a socket, poll without a timeout) — such a thread is taken out of
// virtual time after milliseconds: a pipe, a socket, poll without a
// timeout, a condition variable (a futex) — or asleep for another reason (a
// sleep, a poll, select or futex wait with a timeout, a timer descriptor),
// which keeps the longer rule; and whether a process has ended.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/select.h>
#include <sys/timerfd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern "C" {
#include "providers/sim/nic/nic_kernel.h"
}

// The program's clock, as `fabsim run --virtual-clock` replaces it
// (LD_PRELOAD): while `frozen` is set it reads one fixed instant.
std::atomic<bool> frozen{false};

extern "C" int clock_gettime(clockid_t id, struct timespec *ts)
{
	if (frozen.load()) {
		ts->tv_sec = 12345;
		ts->tv_nsec = 0;
		return 0;
	}
	return static_cast<int>(syscall(SYS_clock_gettime, id, ts));
}

namespace {

pid_t Gettid()
{
	return static_cast<pid_t>(syscall(SYS_gettid));
}

bool Blocked(pid_t pid, pid_t tid, nic_futex_wait *futex = nullptr)
{
	nic_futex_wait ignored;
	return nic_kernel_blocked_on_another_party(pid, tid,
						   futex ? futex : &ignored);
}

// True once pred() holds, trying for up to five seconds: a thread started
// a moment ago may not be asleep yet.
bool Eventually(const std::function<bool()> &pred)
{
	auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);

	while (std::chrono::steady_clock::now() < until) {
		if (pred())
			return true;
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
	return false;
}

// Runs body(tid_out) on a thread, and gives the test its kernel thread id.
class Sleeper {
public:
	explicit Sleeper(std::function<void()> body)
		: thread_([this, body] {
			  tid_ = Gettid();
			  body();
		  })
	{
		EXPECT_TRUE(Eventually([this] { return tid_ != 0; }));
	}
	~Sleeper() { thread_.join(); }
	pid_t tid() const { return tid_; }
	bool Asleep() const
	{
		return nic_kernel_thread_state(getpid(), tid_) == 'S';
	}

private:
	std::atomic<pid_t> tid_{0};
	std::thread thread_;
};

TEST(NicKernel, AThreadReadingAnEmptyPipeWaitsForAnotherParty)
{
	int fds[2];
	char byte;

	ASSERT_EQ(pipe(fds), 0);
	{
		Sleeper reader([&] { EXPECT_EQ(read(fds[0], &byte, 1), 1); });

		EXPECT_TRUE(Eventually([&] {
			return Blocked(
				getpid(), reader.tid());
		}));
		ASSERT_EQ(write(fds[1], "x", 1), 1);
	}
	close(fds[0]);
	close(fds[1]);
}

TEST(NicKernel, SocketsAndPollWaitForAnotherParty)
{
	int sv[2];
	char byte;

	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	{
		Sleeper receiver([&] { EXPECT_EQ(recv(sv[0], &byte, 1, 0), 1); });

		EXPECT_TRUE(Eventually([&] {
			return Blocked(
				getpid(), receiver.tid());
		}));
		ASSERT_EQ(send(sv[1], "x", 1, 0), 1);
	}
	{
		Sleeper poller([&] {
			struct pollfd p = {sv[0], POLLIN, 0};
			EXPECT_EQ(poll(&p, 1, -1), 1);
		});

		EXPECT_TRUE(Eventually([&] {
			return Blocked(
				getpid(), poller.tid());
		}));
		ASSERT_EQ(send(sv[1], "y", 1, 0), 1);
	}
	close(sv[0]);
	close(sv[1]);
}

// A poll or select with a timeout is a sleep as much as a wait: an event
// loop's tick, poll(NULL, 0, ms). So is a timer descriptor.
TEST(NicKernel, WaitsWithATimeoutAreSleeps)
{
	int fds[2];

	ASSERT_EQ(pipe(fds), 0);
	{
		Sleeper poller([&] {
			struct pollfd p = {fds[0], POLLIN, 0};
			EXPECT_EQ(poll(&p, 1, 300), 0);
		});

		ASSERT_TRUE(Eventually([&] { return poller.Asleep(); }));
		EXPECT_FALSE(Blocked(getpid(),
								 poller.tid()));
	}
	{
		Sleeper selector([] {
			struct timeval tv = {0, 300000};
			EXPECT_EQ(select(0, nullptr, nullptr, nullptr, &tv), 0);
		});

		ASSERT_TRUE(Eventually([&] { return selector.Asleep(); }));
		EXPECT_FALSE(Blocked(
			getpid(), selector.tid()));
	}
	{
		int timer = timerfd_create(CLOCK_MONOTONIC, 0);
		struct itimerspec in = {{0, 0}, {0, 300000000}};
		uint64_t ticks;

		ASSERT_GE(timer, 0);
		ASSERT_EQ(timerfd_settime(timer, 0, &in, nullptr), 0);
		{
			Sleeper reader([&] {
				EXPECT_EQ(read(timer, &ticks, sizeof(ticks)),
					  (ssize_t)sizeof(ticks));
			});

			ASSERT_TRUE(Eventually([&] { return reader.Asleep(); }));
			EXPECT_FALSE(Blocked(
				getpid(), reader.tid()));
		}
		close(timer);
	}
	close(fds[0]);
	close(fds[1]);
}

// A sleep, and a condition variable waited on with a time limit, keep
// their place in time longer: the thread will go on by itself.
TEST(NicKernel, SleepsAndTimedWaitsDoNot)
{
	std::mutex m;
	std::condition_variable cv;

	{
		Sleeper sleeper([] {
			std::this_thread::sleep_for(std::chrono::milliseconds(300));
		});

		ASSERT_TRUE(Eventually([&] { return sleeper.Asleep(); }));
		EXPECT_FALSE(Blocked(getpid(), sleeper.tid()));
	}
	{
		Sleeper waiter([&] {
			std::unique_lock<std::mutex> lock(m);
			cv.wait_for(lock, std::chrono::milliseconds(300));
		});

		ASSERT_TRUE(Eventually([&] { return waiter.Asleep(); }));
		EXPECT_FALSE(Blocked(getpid(), waiter.tid()));
	}
}

// A condition variable (a futex) waited on with no time limit waits for
// another thread: the scheduler learns the word, which the waker changes
// before the sleeper runs again.
TEST(NicKernel, AConditionVariableWaitsForAnotherThreadOnItsWord)
{
	std::mutex m;
	std::condition_variable cv;
	bool go = false;
	nic_futex_wait futex = {};

	{
		Sleeper waiter([&] {
			std::unique_lock<std::mutex> lock(m);
			cv.wait(lock, [&] { return go; });
		});

		ASSERT_TRUE(Eventually([&] {
			return Blocked(getpid(), waiter.tid(), &futex);
		}));
		EXPECT_NE(futex.word, 0u);
		EXPECT_TRUE(nic_kernel_futex_unchanged(&futex));
		{
			std::lock_guard<std::mutex> lock(m);
			go = true;
		}
		cv.notify_one();
		// The word changes; the waiter, woken, may take the signal back
		// out of it at once (glibc's condition variables do), but then
		// it no longer sleeps on it.
		nic_futex_wait now = {};
		EXPECT_TRUE(!nic_kernel_futex_unchanged(&futex) ||
			    !Blocked(getpid(), waiter.tid(), &now) ||
			    now.word != futex.word ||
			    now.value != futex.value)
			<< "notify left the waiter asleep on the same word";
	}
	// A word whose memory is gone is not a wait any more.
	nic_futex_wait gone = { 8, 0 };
	EXPECT_FALSE(nic_kernel_futex_unchanged(&gone));
}

TEST(NicKernel, AComputingThreadIsRunningNotBlocked)
{
	std::atomic<bool> stop{false};
	Sleeper spinner([&] {
		while (!stop.load())
			;
	});

	EXPECT_TRUE(Eventually([&] {
		return nic_kernel_thread_state(getpid(), spinner.tid()) == 'R';
	}));
	EXPECT_FALSE(Blocked(getpid(),
							 spinner.tid()));
	stop = true;
}

// Another process blocked on a pipe is seen the same way; once it has
// ended (a zombie not yet reaped, then reaped) it is gone.
TEST(NicKernel, AnotherProcessBlockedThenGone)
{
	int fds[2];
	pid_t child;
	int status;
	char byte;

	ASSERT_EQ(pipe(fds), 0);
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0)
		_exit(read(fds[0], &byte, 1) == 1 ? 0 : 1);
	EXPECT_TRUE(Eventually(
		[&] { return Blocked(child, child); }));
	EXPECT_FALSE(nic_kernel_process_gone(child));
	ASSERT_EQ(write(fds[1], "x", 1), 1);
	EXPECT_TRUE(Eventually([&] { return nic_kernel_process_gone(child); }))
		<< "a zombie has ended";
	ASSERT_EQ(waitpid(child, &status, 0), child);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_TRUE(nic_kernel_process_gone(child));
	EXPECT_EQ(nic_kernel_thread_state(child, child), '-');
	EXPECT_FALSE(Blocked(child, child));
	close(fds[0]);
	close(fds[1]);
}

// A process whose main thread ended (pthread_exit) while another runs on:
// /proc shows its main thread a zombie, yet the process lives.
TEST(NicKernel, AProcessWhoseMainThreadEndedStillRuns)
{
	pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		pthread_t t;
		pthread_create(&t, nullptr, [](void *) -> void * {
			for (;;)
				pause();
		}, nullptr);
		// The main thread alone ends (no unwinding through the test).
		syscall(SYS_exit, 0);
	}
	EXPECT_TRUE(Eventually(
		[&] { return nic_kernel_thread_state(child, child) == 'Z'; }));
	EXPECT_FALSE(nic_kernel_process_gone(child));
	kill(child, SIGKILL);
	int status;
	EXPECT_TRUE(Eventually([&] { return nic_kernel_process_gone(child); }))
		<< "killed, a zombie has ended";
	ASSERT_EQ(waitpid(child, &status, 0), child);
}

// A process that reads a TCP connection whose other end this process
// holds, or accepts connections (an out-of-band exchange: it waits for
// us), is told from one that reads a pipe, and from one whose connection's
// other end is another's.
TEST(NicKernel, AReaderOfOurConnectionWaitsForUs)
{
	int lst = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_GE(lst, 0);
	sockaddr_in a = {};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ASSERT_EQ(bind(lst, (sockaddr *)&a, sizeof(a)), 0);
	ASSERT_EQ(listen(lst, 1), 0);
	socklen_t alen = sizeof(a);
	ASSERT_EQ(getsockname(lst, (sockaddr *)&a, &alen), 0);
	int pipefd[2];
	ASSERT_EQ(pipe(pipefd), 0);

	pid_t reader = fork();
	ASSERT_GE(reader, 0);
	if (reader == 0) {
		int c = socket(AF_INET, SOCK_STREAM, 0);
		char b;
		if (connect(c, (sockaddr *)&a, sizeof(a)))
			_exit(1);
		_exit(read(c, &b, 1) == 1 ? 0 : 2);
	}
	int conn = accept(lst, nullptr, nullptr);
	ASSERT_GE(conn, 0);
	// A server waiting for a client to connect waits for another too.
	pid_t acceptor = fork();
	ASSERT_GE(acceptor, 0);
	if (acceptor == 0)
		_exit(accept(lst, nullptr, nullptr) >= 0 ? 0 : 2);
	EXPECT_TRUE(Eventually([&] {
		return nic_kernel_waits_out_of_band(acceptor, acceptor, getpid());
	}));
	kill(acceptor, SIGKILL);
	int st;
	ASSERT_EQ(waitpid(acceptor, &st, 0), acceptor);
	pid_t piper = fork();
	ASSERT_GE(piper, 0);
	if (piper == 0) {
		char b;
		close(conn); /* not an end of the reader's connection */
		close(lst);
		_exit(read(pipefd[0], &b, 1) == 1 ? 0 : 2);
	}
	EXPECT_TRUE(Eventually([&] {
		return nic_kernel_waits_out_of_band(reader, reader, getpid());
	}));
	/* Asleep, the piper has closed its copies of our descriptors. */
	EXPECT_TRUE(Eventually([&] { return Blocked(piper, piper); }));
	EXPECT_FALSE(nic_kernel_waits_out_of_band(reader, reader, piper))
		<< "the other end is ours, not the piper's";
	EXPECT_FALSE(nic_kernel_waits_out_of_band(piper, piper, getpid()))
		<< "a pipe is no connection";
	ASSERT_EQ(write(conn, "x", 1), 1);
	ASSERT_EQ(write(pipefd[1], "x", 1), 1);
	int status;
	ASSERT_EQ(waitpid(reader, &status, 0), reader);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(waitpid(piper, &status, 0), piper);
	close(conn);
	close(lst);
	close(pipefd[0]);
	close(pipefd[1]);
}

TEST(NicKernel, FindsTheNewestThreadNotKnown)
{
	pid_t self = (pid_t)syscall(SYS_gettid);
	std::atomic<bool> stop{false};
	std::atomic<pid_t> first{0}, second{0};
	auto spin = [&](std::atomic<pid_t> &id) {
		id = (pid_t)syscall(SYS_gettid);
		while (!stop.load())
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
	};
	std::thread a([&] { spin(first); });
	ASSERT_TRUE(Eventually([&] { return first.load() != 0; }));
	std::thread b([&] { spin(second); });
	ASSERT_TRUE(Eventually([&] { return second.load() != 0; }));

	pid_t known[2] = { self, second.load() };
	EXPECT_EQ(nic_kernel_newest_other_thread(getpid(), known, 1), second)
		<< "the one started last";
	EXPECT_EQ(nic_kernel_newest_other_thread(getpid(), known, 2), first)
		<< "the newest is known: the one before";
	stop = true;
	a.join();
	b.join();
}

// A short sleep in a loop is a nap: a thread that looks for something
// outside the fabric between naps (a connect() retried until a server
// listens) is taken out of time as soon as one blocked on another party
// (nic_sched.c, NIC_NAP_US). Sleeps longer than asked, and sleeps until an
// instant, are not naps.
TEST(NicKernel, ShortSleepsInALoopAreNaps)
{
	std::atomic<bool> stop{false};
	const auto Napping = [](const Sleeper &t, long max_us) {
		return nic_kernel_napping(getpid(), t.tid(), max_us);
	};

	{
		Sleeper napper([&] {
			while (!stop)
				usleep(100);
		});
		EXPECT_TRUE(Eventually([&] { return Napping(napper, 500); }));
		stop = true;
	}
	stop = false;
	{
		Sleeper selector([&] {
			while (!stop) {
				struct timeval tv = {0, 200};
				select(0, nullptr, nullptr, nullptr, &tv);
			}
		});
		EXPECT_TRUE(Eventually([&] { return Napping(selector, 500); }));
		stop = true;
	}
	stop = false;
	{
		Sleeper ticker([&] {
			while (!stop)
				poll(nullptr, 0, 1);
		});
		EXPECT_TRUE(Eventually([&] { return Napping(ticker, 1000); }));
		EXPECT_FALSE(Napping(ticker, 500)) << "a 1 ms tick is no 500 us nap";
		stop = true;
	}
	{
		Sleeper sleeper([] { usleep(300000); });

		ASSERT_TRUE(Eventually([&] { return sleeper.Asleep(); }));
		EXPECT_FALSE(Napping(sleeper, 500));
		EXPECT_TRUE(Napping(sleeper, 1000000)) << "300 ms asked";
	}
	{
		Sleeper until([] {
			struct timespec at;

			clock_gettime(CLOCK_MONOTONIC, &at);
			at.tv_nsec += 300000000;
			if (at.tv_nsec >= 1000000000) {
				at.tv_sec++;
				at.tv_nsec -= 1000000000;
			}
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at,
					nullptr);
		});

		ASSERT_TRUE(Eventually([&] { return until.Asleep(); }));
		EXPECT_FALSE(Napping(until, 1000000000))
			<< "a sleep until an instant";
	}
}

// The scheduler times absences in real time; a program whose clock reads
// virtual time must not stop that clock for it.
TEST(NicKernel, TheKernelsClockIsNotTheProgramsClock)
{
	timespec program{}, before{}, after{};

	frozen = true;
	clock_gettime(CLOCK_MONOTONIC, &program);
	nic_kernel_clock(CLOCK_MONOTONIC, &before);
	usleep(2000);
	nic_kernel_clock(CLOCK_MONOTONIC, &after);
	frozen = false;
	EXPECT_EQ(program.tv_sec, 12345);
	EXPECT_NE(before.tv_sec, 12345);
	const long long moved_ns =
		(after.tv_sec - before.tv_sec) * 1000000000LL +
		(after.tv_nsec - before.tv_nsec);
	EXPECT_GE(moved_ns, 2000000);
}

} // namespace
