// SPDX-License-Identifier: BSD-2-Clause
// fabsimd: the coordinator's lifecycle — start on demand, membership,
// deaths, the last member leaving, stale state, persistent start and stop.
#include <limits.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <vector>

#include <arena/arena.h>

#include "helpers.h"

using namespace fabsimd_test;

namespace {

// Exit status of a forked child, or -1.
int reap(pid_t pid)
{
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Blocks until the pipe has a byte or is closed.
void await_pipe(int fd)
{
	char c;
	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
}

// A child attaches as `node`, says so on `ready`, and waits to be killed.
// With keep_forked_copy it first forks a grandchild that holds a copy of
// the connection (*grandchild: its pid, to be killed by the caller).
pid_t member_child(const char *fabric, uint32_t node, bool keep_forked_copy,
		   pid_t *grandchild = nullptr)
{
	int ready[2];
	if (pipe(ready))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(ready[0]);
		fabsimd_member_info me = { node, "victim" };
		fabsimd_session *s;
		if (fabsimd_attach(fabric, &me, &s, nullptr, 0))
			_exit(1);
		pid_t copy = keep_forked_copy ? fork() : 0;
		if (keep_forked_copy && copy == 0) {
			// A grandchild holding the connection outlives us.
			sleep(20);
			_exit(0);
		}
		if (write(ready[1], &copy, sizeof(copy)) != sizeof(copy))
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	pid_t copy = 0;
	if (read(ready[0], &copy, sizeof(copy)) != sizeof(copy))
		pid = -1;
	close(ready[0]);
	if (grandchild)
		*grandchild = copy;
	return pid;
}

// The fabric's segment, created and 4 KiB of it mapped, as a process
// running on the fabric has it mapped; unmapped and removed at the end.
struct FabricMemory {
	char seg[128];
	void *mem = nullptr;

	explicit FabricMemory(const char *fabric)
	{
		EXPECT_GT(fabsimd_segment_name(fabric, seg, sizeof(seg)), 0);
		int shm = shm_open(seg, O_CREAT | O_RDWR, 0600);
		EXPECT_GE(shm, 0);
		if (shm < 0)
			return;
		if (ftruncate(shm, 4096) == 0)
			mem = mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
				   MAP_SHARED, shm, 0);
		close(shm);
		if (mem == MAP_FAILED)
			mem = nullptr;
	}
	~FabricMemory()
	{
		if (mem)
			munmap(mem, 4096);
		shm_unlink(seg);
	}
};

// Waits until the fabric's coordinator lists `n` members (*st: its last
// answer).
bool members_become(const char *fabric, uint32_t n, struct fabsimd_status *st)
{
	char err[512];
	return wait_until([&] {
		return !fabsimd_status(fabric, st, err, sizeof(err)) &&
		       st->count == n;
	}, 5000);
}

// Kills the fabric's coordinator and waits until it is gone; its pid.
pid_t kill_coordinator(const char *fabric)
{
	struct fabsimd_status st;
	char err[512] = "";
	EXPECT_EQ(fabsimd_status(fabric, &st, err, sizeof(err)), 0) << err;
	EXPECT_EQ(kill(st.pid, SIGKILL), 0);
	EXPECT_TRUE(wait_until([&] { return gone(st.pid); }, 5000));
	return st.pid;
}

// A member on node 1 of the fabric whose memory `memory` maps (forked
// after that mapping, it maps it too: what tells a coordinator that it
// runs on the fabric), and then its coordinator killed (*old: its pid).
pid_t member_from_before(const char *fabric, const FabricMemory &memory,
			 pid_t *old = nullptr)
{
	EXPECT_NE(memory.mem, nullptr);
	pid_t earlier = member_child(fabric, 1, false);
	EXPECT_GT(earlier, 0);
	pid_t killed = kill_coordinator(fabric);
	if (old)
		*old = killed;
	return earlier;
}

} // namespace

TEST_F(FabricTest, FirstAttachStartsTheCoordinatorSecondJoinsIt)
{
	const char *f = fabric("alpha");
	struct fabsimd_status st;
	char err[256];

	EXPECT_EQ(fabsimd_status(f, &st, err, sizeof(err)), -ENOENT);
	EXPECT_NE(std::string(err).find(std::string("no fabric ") + f +
					       " is running"),
		  std::string::npos) << err;

	fabsimd_session *a = attach(f, 1, "first");
	ASSERT_NE(a, nullptr);
	pid_t coord = fabsimd_session_coordinator(a);
	EXPECT_GT(coord, 0);
	EXPECT_NE(coord, getpid());
	EXPECT_TRUE(exists(file(f, ".sock")));
	// Forked from this program, it must not go by its name (pkill).
	EXPECT_TRUE(wait_until([&] {
		return slurp("/proc/" + std::to_string(coord) + "/comm") ==
		       "fabsimd\n";
	}, 5000)) << slurp("/proc/" + std::to_string(coord) + "/comm");

	fabsimd_session *b = attach(f, 2, "second");
	ASSERT_NE(b, nullptr);
	EXPECT_EQ(fabsimd_session_coordinator(b), coord);

	fabsimd_notice n;
	ASSERT_TRUE(wait_notice(a, FABSIMD_NOTICE_JOINED, &n));
	EXPECT_EQ(n.node, 2u);
	EXPECT_EQ(n.pid, getpid());
	EXPECT_STREQ(n.prog, "second");

	ASSERT_EQ(fabsimd_status(f, &st, err, sizeof(err)), 0) << err;
	EXPECT_EQ(st.pid, coord);
	EXPECT_FALSE(st.persistent);
	ASSERT_EQ(st.count, 2u);
	std::set<uint32_t> nodes;
	for (size_t i = 0; i < st.count; i++) {
		nodes.insert(st.members[i].node);
		EXPECT_EQ(st.members[i].pid, getpid());
	}
	EXPECT_EQ(nodes, (std::set<uint32_t>{ 1, 2 }));

	fabsimd_detach(b);
	fabsimd_detach(a);
	EXPECT_TRUE(wait_until([&] { return gone(coord); }, 5000));
	EXPECT_FALSE(exists(file(f, ".sock")));
	std::string log = slurp(file(f, ".log"));
	EXPECT_EQ(count_of(log, std::string("start: fabric ") + f), 1u) << log;
	EXPECT_NE(log.find("node 2 (pid " + std::to_string(getpid()) +
			   ", second) joined"), std::string::npos) << log;
	EXPECT_NE(log.find("exit: the last member left"), std::string::npos)
		<< log;
}

TEST_F(FabricTest, ConcurrentFirstAttachesStartExactlyOneCoordinator)
{
	const char *f = fabric("crowd");
	const int kids = 8;
	int go[2], results[2], release[2];
	ASSERT_EQ(pipe(go), 0);
	ASSERT_EQ(pipe(results), 0);
	ASSERT_EQ(pipe(release), 0);
	std::vector<pid_t> pids;

	for (int i = 0; i < kids; i++) {
		pid_t pid = fork();
		ASSERT_GE(pid, 0);
		if (pid == 0) {
			close(go[1]);
			close(results[0]);
			close(release[1]);
			await_pipe(go[0]);
			fabsimd_member_info me = { (uint32_t)(10 + i), "crowd" };
			fabsimd_session *s;
			pid_t coord = -1;
			if (!fabsimd_attach(f, &me, &s, nullptr, 0))
				coord = fabsimd_session_coordinator(s);
			if (write(results[1], &coord, sizeof(coord)) !=
			    sizeof(coord))
				_exit(2);
			await_pipe(release[0]);
			if (coord > 0)
				fabsimd_detach(s);
			_exit(coord > 0 ? 0 : 1);
		}
		pids.push_back(pid);
	}
	close(go[0]);
	close(results[1]);
	close(release[0]);
	close(go[1]); // all at once

	std::set<pid_t> coordinators;
	for (int i = 0; i < kids; i++) {
		pid_t coord;
		ASSERT_EQ(read(results[0], &coord, sizeof(coord)),
			  (ssize_t)sizeof(coord));
		coordinators.insert(coord);
	}
	close(results[0]);
	EXPECT_EQ(coordinators.size(), 1u);
	EXPECT_EQ(coordinators.count(-1), 0u);

	struct fabsimd_status st;
	char err[256];
	ASSERT_EQ(fabsimd_status(f, &st, err, sizeof(err)), 0) << err;
	EXPECT_EQ(st.count, (size_t)kids);

	close(release[1]);
	for (pid_t pid : pids)
		EXPECT_EQ(reap(pid), 0);
	pid_t coord = *coordinators.begin();
	EXPECT_TRUE(wait_until([&] { return gone(coord); }, 5000));
	std::string log = slurp(file(f, ".log"));
	EXPECT_EQ(count_of(log, std::string("start: fabric ") + f), 1u) << log;
	EXPECT_EQ(count_of(log, " joined; "), (size_t)kids) << log;
}

TEST_F(FabricTest, DuplicateNodeIsRefused)
{
	const char *f = fabric("dup");
	fabsimd_session *a = attach(f, 3);
	ASSERT_NE(a, nullptr);

	fabsimd_member_info me = { 3, "again" };
	fabsimd_session *b = nullptr;
	char err[256] = "";
	EXPECT_EQ(fabsimd_attach(f, &me, &b, err, sizeof(err)), -EADDRINUSE);
	EXPECT_EQ(b, nullptr);
	std::string want = "node 3 is already attached by pid " +
			   std::to_string(getpid());
	EXPECT_NE(std::string(err).find(want), std::string::npos) << err;

	// The refusal did not disturb the fabric.
	struct fabsimd_status st;
	ASSERT_EQ(fabsimd_status(f, &st, err, sizeof(err)), 0) << err;
	EXPECT_EQ(st.count, 1u);
	fabsimd_session *c = attach(f, 4);
	ASSERT_NE(c, nullptr);
	fabsimd_detach(c);
	fabsimd_detach(a);
}

TEST_F(FabricTest, CleanDetachIsNotADeath)
{
	const char *f = fabric("clean");
	fabsimd_session *a = attach(f, 1);
	ASSERT_NE(a, nullptr);

	// Children that detach and exit at once: the BYE must win over the
	// process's end, whichever the coordinator sees first.
	for (int round = 0; round < 5; round++) {
		pid_t pid = fork();
		ASSERT_GE(pid, 0);
		if (pid == 0) {
			fabsimd_member_info me = { 7, "polite" };
			fabsimd_session *s;
			if (fabsimd_attach(f, &me, &s, nullptr, 0))
				_exit(1);
			fabsimd_detach(s);
			_exit(0);
		}
		EXPECT_EQ(reap(pid), 0);
		fabsimd_notice n;
		ASSERT_TRUE(wait_notice(a, FABSIMD_NOTICE_LEFT, &n));
		EXPECT_EQ(n.node, 7u);
		EXPECT_EQ(n.pid, pid);
	}
	fabsimd_notice n;
	while (fabsimd_next_notice(a, &n) == 0)
		EXPECT_NE(n.kind, FABSIMD_NOTICE_DIED) << "node " << n.node;
	pid_t coord = fabsimd_session_coordinator(a);
	fabsimd_detach(a);
	ASSERT_TRUE(wait_until([&] { return gone(coord); }, 5000));
	std::string log = slurp(file(f, ".log"));
	EXPECT_EQ(count_of(log, "died"), 0u) << log;
	EXPECT_EQ(count_of(log, "(pid "), 12u) << log; // 6 joined, 6 left
}

// A member that leaves with notices it never read (another member joined
// meanwhile): closing its end then resets the coordinator's, and the BYE
// queued before the reset must still count (Open MPI's ranks leave so).
TEST_F(FabricTest, DetachWithUnreadNoticesIsNotADeath)
{
	const char *f = fabric("unread");
	fabsimd_session *a = attach(f, 1);
	ASSERT_NE(a, nullptr);

	for (int round = 0; round < 3; round++) {
		int go[2];
		ASSERT_EQ(pipe(go), 0);
		pid_t pid = fork();
		ASSERT_GE(pid, 0);
		if (pid == 0) {
			fabsimd_member_info me = { 7, "unread" };
			fabsimd_session *s;
			char c;
			if (fabsimd_attach(f, &me, &s, nullptr, 0))
				_exit(1);
			if (read(go[0], &c, 1) != 1)
				_exit(2);
			// The notice of node 8's arrival is queued for us.
			struct pollfd p = { fabsimd_session_fd(s), POLLIN, 0 };
			if (poll(&p, 1, 5000) != 1)
				_exit(3);
			fabsimd_detach(s);
			_exit(0);
		}
		fabsimd_notice n;
		ASSERT_TRUE(wait_notice(a, FABSIMD_NOTICE_JOINED, &n));
		EXPECT_EQ(n.node, 7u);
		fabsimd_session *b = attach(f, 8);
		ASSERT_NE(b, nullptr);
		ASSERT_EQ(write(go[1], "x", 1), 1);
		EXPECT_EQ(reap(pid), 0);
		ASSERT_TRUE(wait_notice(a, FABSIMD_NOTICE_LEFT, &n));
		EXPECT_EQ(n.node, 7u);
		fabsimd_detach(b);
		ASSERT_TRUE(wait_notice(a, FABSIMD_NOTICE_LEFT, &n));
		EXPECT_EQ(n.node, 8u);
		close(go[0]);
		close(go[1]);
	}
	pid_t coord = fabsimd_session_coordinator(a);
	fabsimd_detach(a);
	ASSERT_TRUE(wait_until([&] { return gone(coord); }, 5000));
	std::string log = slurp(file(f, ".log"));
	EXPECT_EQ(count_of(log, "died"), 0u) << log;
}

TEST_F(FabricTest, KilledMemberIsReportedDeadAndTheFabricGoesOn)
{
	const char *f = fabric("deaths");
	pid_t victim = member_child(f, 2, false);
	ASSERT_GT(victim, 0);
	fabsimd_session *a = attach(f, 1);
	fabsimd_session *c = attach(f, 3);
	ASSERT_NE(a, nullptr);
	ASSERT_NE(c, nullptr);
	pid_t coord = fabsimd_session_coordinator(a);

	ASSERT_EQ(kill(victim, SIGKILL), 0);
	EXPECT_EQ(reap(victim), 128 + SIGKILL);
	long long t0 = now_ms();
	fabsimd_notice n;
	ASSERT_TRUE(wait_notice(a, FABSIMD_NOTICE_DIED, &n, 5000));
	EXPECT_LT(now_ms() - t0, 5000);
	EXPECT_EQ(n.node, 2u);
	EXPECT_EQ(n.pid, victim);
	EXPECT_STREQ(n.prog, "victim");
	ASSERT_TRUE(wait_notice(c, FABSIMD_NOTICE_DIED, &n, 5000));
	EXPECT_EQ(n.node, 2u);

	// The fabric goes on; node 2 is free again.
	struct fabsimd_status st;
	char err[256];
	ASSERT_EQ(fabsimd_status(f, &st, err, sizeof(err)), 0) << err;
	EXPECT_EQ(st.pid, coord);
	EXPECT_EQ(st.count, 2u);
	fabsimd_session *again = attach(f, 2, "newcomer");
	ASSERT_NE(again, nullptr);
	EXPECT_EQ(fabsimd_session_coordinator(again), coord);
	fabsimd_detach(again);
	fabsimd_detach(c);
	fabsimd_detach(a);
	std::string log = slurp(file(f, ".log"));
	EXPECT_NE(log.find("node 2 (pid " + std::to_string(victim) +
			   ", victim) died without detaching"),
		  std::string::npos) << log;
}

TEST_F(FabricTest, DeathIsSeenEvenWhenAForkedChildHoldsTheConnection)
{
	const char *f = fabric("forked");
	pid_t copy = 0;
	pid_t victim = member_child(f, 5, true, &copy);
	ASSERT_GT(victim, 0);
	ASSERT_GT(copy, 0);
	fabsimd_session *a = attach(f, 1);
	ASSERT_NE(a, nullptr);
	ASSERT_EQ(kill(victim, SIGKILL), 0);
	reap(victim);
	fabsimd_notice n;
	ASSERT_TRUE(wait_notice(a, FABSIMD_NOTICE_DIED, &n, 5000));
	EXPECT_EQ(n.node, 5u);
	EXPECT_EQ(n.pid, victim);
	fabsimd_detach(a);
	kill(copy, SIGKILL); // reparented: not ours to reap
	std::string log = slurp(file(f, ".log"));
	EXPECT_NE(log.find("died without detaching"), std::string::npos);
}

TEST_F(FabricTest, LastMemberLeavingRemovesSocketAndSharedMemory)
{
	const char *f = fabric("tidy");
	fabsimd_session *a = attach(f, 1);
	ASSERT_NE(a, nullptr);
	pid_t coord = fabsimd_session_coordinator(a);

	char seg[128];
	ASSERT_GT(fabsimd_segment_name(f, seg, sizeof(seg)), 0);
	int fd = shm_open(seg, O_CREAT | O_RDWR, 0600);
	ASSERT_GE(fd, 0) << seg << ": " << strerror(errno);
	close(fd);
	fabsimd_detach(a);
	ASSERT_TRUE(wait_until([&] { return gone(coord); }, 5000));
	EXPECT_FALSE(exists(file(f, ".sock")));
	EXPECT_FALSE(exists(file(f, ".lock")));
	errno = 0;
	EXPECT_LT(shm_open(seg, O_RDWR, 0600), 0) << seg;
	EXPECT_EQ(errno, ENOENT) << seg;
	EXPECT_NE(slurp(file(f, ".log")).find("and shared memory removed"),
		  std::string::npos);
}

TEST_F(FabricTest, StaleSocketAndSegmentAreCleanedByTheNextAttach)
{
	const char *f = fabric("stale");
	char rdir[4096], err[256];
	ASSERT_EQ(fabsimd_runtime_dir(rdir, sizeof(rdir), err, sizeof(err)), 0)
		<< err;

	// A socket file nobody listens on: what a crashed coordinator leaves.
	std::string sock = file(f, ".sock");
	int dirfd = open(dir.c_str(), O_PATH | O_DIRECTORY);
	ASSERT_GE(dirfd, 0);
	struct sockaddr_un sa = {};
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s.sock",
		 dirfd, f);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	ASSERT_EQ(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0)
		<< strerror(errno);
	close(fd);
	close(dirfd);
	ASSERT_TRUE(exists(sock));
	char seg[128];
	ASSERT_GT(fabsimd_segment_name(f, seg, sizeof(seg)), 0);
	int shm = shm_open(seg, O_CREAT | O_RDWR, 0600);
	ASSERT_GE(shm, 0);
	close(shm);

	fabsimd_session *a = attach(f, 1);
	ASSERT_NE(a, nullptr);
	errno = 0;
	EXPECT_LT(shm_open(seg, O_RDWR, 0600), 0);
	EXPECT_EQ(errno, ENOENT);
	struct fabsimd_status st;
	ASSERT_EQ(fabsimd_status(f, &st, err, sizeof(err)), 0) << err;
	EXPECT_EQ(st.count, 1u);
	fabsimd_detach(a);
	std::string log = slurp(file(f, ".log"));
	EXPECT_NE(log.find("removed the stale socket"), std::string::npos)
		<< log;
	EXPECT_NE(log.find("removed 1 stale shared-memory segment"),
		  std::string::npos) << log;
}

// A coordinator killed while processes run on the fabric's memory: the next
// process to join starts a new one, which must leave that memory alone, or
// the newcomer would build a second fabric of the same name, apart from
// the processes still running.
TEST_F(FabricTest, MemoryStillInUseIsKeptByTheNextAttach)
{
	const char *f = fabric("inuse");
	FabricMemory memory(f); // this process runs on it
	ASSERT_NE(memory.mem, nullptr);
	const char *seg = memory.seg;
	int shm;

	fabsimd_session *a = attach(f, 1);
	ASSERT_NE(a, nullptr);
	pid_t coord = fabsimd_session_coordinator(a);
	shm = shm_open(seg, O_RDWR, 0600);
	EXPECT_GE(shm, 0) << "the segment in use was removed";
	if (shm >= 0)
		close(shm);
	// Its last member leaves, still mapping the memory as a process on
	// its way out does: the coordinator removes it as it ends.
	fabsimd_detach(a);
	ASSERT_TRUE(wait_until([&] { return gone(coord); }, 5000));
	EXPECT_LT(shm_open(seg, O_RDWR, 0600), 0)
		<< "the memory outlived the fabric's last member";
	std::string log = slurp(file(f, ".log"));
	EXPECT_NE(log.find("kept the shared memory"), std::string::npos)
		<< log;
}

// Memory of fabric `f` that nobody maps, as a crashed run leaves it; its
// name.
std::string memory_left(const char *f)
{
	char seg[128];
	EXPECT_GT(fabsimd_segment_name(f, seg, sizeof(seg)), 0);
	int shm = shm_open(seg, O_CREAT | O_RDWR, 0600);
	EXPECT_GE(shm, 0);
	if (shm >= 0)
		close(shm);
	return seg;
}

bool in_memory(const std::string &name)
{
	int shm = shm_open(name.c_str(), O_RDWR, 0600);
	if (shm >= 0)
		close(shm);
	return shm >= 0;
}

// A crashed run of another fabric in the same directory (a test's, a
// temporary name) left its memory: the next coordinator to start removes
// it, since no start of that fabric ever would. Not a fabric's whose
// coordinator runs (persistent, with nobody on it; its name starts with
// the crashed one's), nor one a process still runs on, nor one whose lock
// is held (someone is starting or ending it).
TEST_F(FabricTest, MemoryOfAnotherFabricsCrashedRunIsRemoved)
{
	const char *crashed = fabric("crashed");
	const char *kept = fabric((std::string(crashed) + "-b").c_str());
	const char *used = fabric("used");
	const char *locked = fabric("locked");
	char err[256] = "";
	ASSERT_EQ(fabsimd_start(kept, true, nullptr, err, sizeof(err)), 0)
		<< err;
	std::string kept_seg = memory_left(kept);
	std::string crashed_seg = memory_left(crashed);
	// Its dead coordinator's socket (bound through the directory's
	// descriptor: the path may be longer than a socket address holds).
	int dirfd = open(dir.c_str(), O_PATH | O_DIRECTORY);
	ASSERT_GE(dirfd, 0);
	int sock = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	ASSERT_GE(sock, 0);
	struct sockaddr_un sa = {};
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s.sock",
		 dirfd, crashed);
	ASSERT_EQ(bind(sock, (struct sockaddr *)&sa, sizeof(sa)), 0)
		<< sa.sun_path << ": " << strerror(errno);
	close(sock);
	close(dirfd);
	ASSERT_TRUE(exists(file(crashed, ".sock")));
	int crashed_lock = open(file(crashed, ".lock").c_str(),
				O_CREAT | O_RDWR, 0600);
	ASSERT_GE(crashed_lock, 0);
	close(crashed_lock);
	FabricMemory memory(used);
	ASSERT_NE(memory.mem, nullptr);
	std::string locked_seg = memory_left(locked);
	int held = open(file(locked, ".lock").c_str(), O_CREAT | O_RDWR, 0600);
	ASSERT_GE(held, 0);
	ASSERT_EQ(flock(held, LOCK_EX), 0);

	fabsimd_session *a = attach(fabric("next"), 1);
	ASSERT_NE(a, nullptr);
	EXPECT_FALSE(in_memory(crashed_seg));
	EXPECT_FALSE(exists(file(crashed, ".sock")));
	EXPECT_FALSE(exists(file(crashed, ".lock")));
	EXPECT_TRUE(in_memory(kept_seg)) << "a running fabric's memory went";
	EXPECT_TRUE(in_memory(memory.seg)) << "memory in use went";
	EXPECT_FALSE(exists(file(used, ".lock")))
		<< "a lock file was left where there was none";
	EXPECT_TRUE(in_memory(locked_seg))
		<< "the memory of a fabric being started or ended went";
	fabsimd_detach(a);
	std::string log = slurp(file(fabric("next"), ".log"));
	EXPECT_NE(log.find(std::string("of fabric ") + crashed +
			   ": its coordinator is gone"),
		  std::string::npos) << log;
	EXPECT_EQ(log.find(std::string("of fabric ") + kept),
		  std::string::npos) << log;
	close(held);
	shm_unlink(kept_seg.c_str());
	shm_unlink(locked_seg.c_str());
}

// Fabric memory made in runtime directory `where`, labelled as a fabric's
// creator labels it (or with `label` instead), mapped by nobody.
static std::string memory_made_in(const std::string &where, const char *f,
				  const char *label = nullptr)
{
	std::string saved = getenv("FABSIM_RUNTIME_DIR");
	char seg[128], origin[PATH_MAX], err[256] = "";
	fs_arena *a = nullptr;

	setenv("FABSIM_RUNTIME_DIR", where.c_str(), 1);
	EXPECT_GT(fabsimd_segment_name(f, seg, sizeof(seg)), 0);
	EXPECT_GT(fabsimd_segment_origin(origin, sizeof(origin)), 0);
	setenv("FABSIM_RUNTIME_DIR", saved.c_str(), 1);
	EXPECT_EQ(origin, where);
	EXPECT_EQ(fs_arena_create(seg, 1 << 20, &a, err, sizeof(err)), 0)
		<< err;
	if (a) {
		EXPECT_EQ(fs_arena_set_label(a, label ? label : origin), 0);
		fs_arena_detach(a);
	}
	return seg;
}

// A crashed run whose runtime directory is gone (a test's temporary one)
// left its memory: nothing will ever start that fabric again, so the next
// coordinator to start anywhere removes it — not the memory of a directory
// that still exists, nor memory a process still maps, nor memory whose
// label its name does not confirm.
TEST_F(FabricTest, MemoryOfARunWhoseDirectoryIsGoneIsRemoved)
{
	std::string gone_dir = dir + "-gone", alive_dir = dir + "-alive";
	ASSERT_EQ(mkdir(alive_dir.c_str(), 0700), 0) << strerror(errno);
	std::string gone = memory_made_in(gone_dir, fabric("crashed"));
	std::string alive = memory_made_in(alive_dir, fabric("elsewhere"));
	std::string used = memory_made_in(gone_dir, fabric("used"));
	std::string liar = memory_made_in(gone_dir, fabric("liar"),
					  (alive_dir + "-x").c_str());
	int fd = shm_open(used.c_str(), O_RDWR, 0);
	ASSERT_GE(fd, 0);
	void *mapped = mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	ASSERT_NE(mapped, MAP_FAILED);

	fabsimd_session *a = attach(fabric("next"), 1);
	ASSERT_NE(a, nullptr);
	EXPECT_FALSE(in_memory(gone)) << "a gone directory's memory stayed";
	EXPECT_TRUE(in_memory(alive)) << "a live directory's memory went";
	EXPECT_TRUE(in_memory(used)) << "memory a process maps went";
	EXPECT_TRUE(in_memory(liar)) << "memory with a label of another name";
	fabsimd_detach(a);
	std::string log = slurp(file(fabric("next"), ".log"));
	EXPECT_NE(log.find("of a crashed run in " + gone_dir), std::string::npos)
		<< log;
	munmap(mapped, 4096);
	shm_unlink(alive.c_str());
	shm_unlink(used.c_str());
	shm_unlink(liar.c_str());
	rmdir(alive_dir.c_str());
}

// A fabric that ends removes its own memory, not that of a fabric whose
// name starts with its own.
TEST_F(FabricTest, AnEndingFabricLeavesAnotherWhoseNameStartsWithItsOwn)
{
	const char *f = fabric("prefix");
	const char *longer = fabric((std::string(f) + "-1").c_str());
	char err[256] = "";
	ASSERT_EQ(fabsimd_start(longer, true, nullptr, err, sizeof(err)), 0)
		<< err;
	std::string other = memory_left(longer);
	fabsimd_session *a = attach(f, 1);
	ASSERT_NE(a, nullptr);
	pid_t coord = fabsimd_session_coordinator(a);
	fabsimd_detach(a);
	ASSERT_TRUE(wait_until([&] { return gone(coord); }, 5000));
	EXPECT_TRUE(in_memory(other)) << "fabric " << longer << "'s memory went";
	shm_unlink(other.c_str());
}

TEST_F(FabricTest, CrashedCoordinatorIsReplaced)
{
	const char *f = fabric("crash");
	fabsimd_session *a = attach(f, 1);
	ASSERT_NE(a, nullptr);
	pid_t old = fabsimd_session_coordinator(a);
	ASSERT_EQ(kill(old, SIGKILL), 0);

	fabsimd_notice n;
	ASSERT_TRUE(wait_notice(a, FABSIMD_NOTICE_LOST, &n, 5000));
	EXPECT_EQ(fabsimd_next_notice(a, &n), -ENOTCONN);
	ASSERT_TRUE(wait_until([&] { return gone(old); }, 5000));
	EXPECT_TRUE(exists(file(f, ".sock"))); // left behind
	// Status says the coordinator died, not that nothing ever ran.
	struct fabsimd_status st;
	char err[512] = "";
	EXPECT_EQ(fabsimd_status(f, &st, err, sizeof(err)), -ENOENT);
	EXPECT_NE(std::string(err).find("ended without cleaning up"),
		  std::string::npos) << err;

	fabsimd_session *b = attach(f, 1);
	ASSERT_NE(b, nullptr);
	EXPECT_NE(fabsimd_session_coordinator(b), old);
	fabsimd_detach(a);
	fabsimd_detach(b);
}

// A coordinator killed while members run: the next process to join starts
// a new one and tells it of the members from before (it knows them from the
// fabric's memory); the new coordinator lists them, stays while they run,
// and logs their end.
TEST_F(FabricTest, TheReplacementListsTheMembersFromBefore)
{
	const char *f = fabric("adopt");
	FabricMemory memory(f);
	ASSERT_NE(memory.mem, nullptr);
	pid_t old;
	pid_t earlier = member_from_before(f, memory, &old);
	ASSERT_GT(earlier, 0);
	struct fabsimd_status st;
	char err[512] = "";

	fabsimd_session *b = attach(f, 2);
	ASSERT_NE(b, nullptr);
	ASSERT_NE(fabsimd_session_coordinator(b), old);
	ASSERT_EQ(fabsimd_adopt(b, 1, earlier), 0);
	// Told twice (every newcomer tells): listed once.
	ASSERT_EQ(fabsimd_adopt(b, 1, earlier), 0);
	auto listed = [&](pid_t pid, uint32_t node) {
		if (fabsimd_status(f, &st, err, sizeof(err)))
			return false;
		for (uint32_t i = 0; i < st.count; i++)
			if (st.members[i].pid == pid && st.members[i].node == node)
				return true;
		return false;
	};
	ASSERT_TRUE(wait_until([&] { return listed(earlier, 1); }, 5000)) << err;
	EXPECT_EQ(st.count, 2u);
	// Its node is taken.
	fabsimd_member_info me = { 1, "late" };
	fabsimd_session *dup = nullptr;
	EXPECT_EQ(fabsimd_attach(f, &me, &dup, err, sizeof(err)), -EADDRINUSE);

	// It ends: the coordinator sees it through its pidfd.
	ASSERT_EQ(kill(earlier, SIGKILL), 0);
	EXPECT_EQ(reap(earlier), 128 + SIGKILL);
	ASSERT_TRUE(members_become(f, 1, &st));
	EXPECT_TRUE(listed(getpid(), 2));
	fabsimd_detach(b);
	std::string log = slurp(file(f, ".log"));
	EXPECT_NE(log.find("node 1 (pid " + std::to_string(earlier) +
			   ", lifecycle_test) attached before this coordinator "
			   "started"), std::string::npos) << log;
	EXPECT_NE(log.find("node 1 (pid " + std::to_string(earlier) +
			   ", lifecycle_test) ended"), std::string::npos) << log;
}

// The newcomer that starts the replacement may ask for the node a process
// from before runs (the fabric refuses it later, and it leaves): that
// process is adopted all the same, and the coordinator stays for it.
TEST_F(FabricTest, AProcessFromBeforeIsAdoptedEvenWhenItsNodeWasTaken)
{
	const char *f = fabric("adoptclash");
	FabricMemory memory(f);
	ASSERT_NE(memory.mem, nullptr);
	pid_t earlier = member_from_before(f, memory);
	ASSERT_GT(earlier, 0);
	struct fabsimd_status st;
	char err[512] = "";

	fabsimd_session *clash = attach(f, 1, "clash");
	ASSERT_NE(clash, nullptr);
	ASSERT_EQ(fabsimd_adopt(clash, 1, earlier), 0);
	ASSERT_TRUE(members_become(f, 2, &st)) << err;
	fabsimd_detach(clash);
	ASSERT_TRUE(members_become(f, 1, &st)) << "the coordinator left with a process from before running: " << err;
	EXPECT_EQ(st.members[0].pid, earlier);
	kill(earlier, SIGKILL);
	reap(earlier);
}

// An adopted process that leaves the fabric and runs on: its own
// coordinator is gone, so it tells the one that replaced it, which no longer
// lists it (its node is free again).
TEST_F(FabricTest, AnAdoptedProcessThatLeavesIsNoLongerListed)
{
	const char *f = fabric("adoptbye");
	FabricMemory memory(f);
	ASSERT_NE(memory.mem, nullptr);
	int go[2], done[2];
	ASSERT_EQ(pipe(go), 0);
	ASSERT_EQ(pipe(done), 0);
	pid_t earlier = fork();
	ASSERT_GE(earlier, 0);
	if (earlier == 0) {
		fabsimd_member_info me = { 1, "leaver" };
		fabsimd_session *s;
		char c = 'x';
		if (fabsimd_attach(f, &me, &s, nullptr, 0))
			_exit(1);
		(void)!write(done[1], &c, 1);
		(void)!read(go[0], &c, 1);
		fabsimd_detach(s);
		(void)!write(done[1], &c, 1);
		for (;;)
			pause();
	}
	char c;
	ASSERT_EQ(read(done[0], &c, 1), 1);
	kill_coordinator(f);
	struct fabsimd_status st;
	char err[512] = "";
	fabsimd_session *b = attach(f, 2);
	ASSERT_NE(b, nullptr);
	ASSERT_EQ(fabsimd_adopt(b, 1, earlier), 0);
	ASSERT_TRUE(members_become(f, 2, &st)) << err;

	ASSERT_EQ(write(go[1], "g", 1), 1);
	ASSERT_EQ(read(done[0], &c, 1), 1);
	EXPECT_TRUE(members_become(f, 1, &st)) << "the adopted process left and is still listed";
	fabsimd_session *again = attach(f, 1, "newcomer");
	EXPECT_NE(again, nullptr) << "its node is not free";
	if (again)
		fabsimd_detach(again);
	fabsimd_detach(b);
	kill(earlier, SIGKILL);
	reap(earlier);
	std::string log = slurp(file(f, ".log"));
	EXPECT_NE(log.find("node 1 (pid " + std::to_string(earlier) +
			   ", lifecycle_test) left; it had attached before"),
		  std::string::npos) << log;
	for (int fd : {go[0], go[1], done[0], done[1]})
		close(fd);
}

// A process that is not on the fabric's memory cannot be made a member by
// naming it: one that has ended, or one that runs but maps none of it.
TEST_F(FabricTest, AProcessNotOnTheFabricIsNotAdopted)
{
	const char *f = fabric("adoptgone");
	pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0)
		_exit(0);
	ASSERT_EQ(reap(child), 0);
	pid_t stranger = fork();
	ASSERT_GE(stranger, 0);
	if (stranger == 0) {
		pause();
		_exit(0);
	}
	fabsimd_session *b = attach(f, 2);
	ASSERT_NE(b, nullptr);
	ASSERT_EQ(fabsimd_adopt(b, 1, child), 0);
	ASSERT_EQ(fabsimd_adopt(b, 3, stranger), 0);
	EXPECT_EQ(fabsimd_adopt(b, 1, 0), -EINVAL);
	struct fabsimd_status st;
	char err[256];
	usleep(100000);
	ASSERT_EQ(fabsimd_status(f, &st, err, sizeof(err)), 0) << err;
	EXPECT_EQ(st.count, 1u);
	fabsimd_detach(b);
	kill(stranger, SIGKILL);
	reap(stranger);
}

TEST_F(FabricTest, PersistentStartStaysUntilStop)
{
	const char *f = fabric("keep");
	pid_t pid = -1, again = -1;
	char err[256] = "";
	ASSERT_EQ(fabsimd_start(f, true, &pid, err, sizeof(err)), 0) << err;
	EXPECT_GT(pid, 0);
	EXPECT_EQ(fabsimd_start(f, true, &again, err, sizeof(err)), 1) << err;
	EXPECT_EQ(again, pid);

	struct fabsimd_status st;
	ASSERT_EQ(fabsimd_status(f, &st, err, sizeof(err)), 0) << err;
	EXPECT_EQ(st.pid, pid);
	EXPECT_TRUE(st.persistent);
	EXPECT_EQ(st.count, 0u);

	fabsimd_session *a = attach(f, 1);
	ASSERT_NE(a, nullptr);
	fabsimd_detach(a);
	usleep(200000);
	ASSERT_EQ(fabsimd_status(f, &st, err, sizeof(err)), 0) << err;
	EXPECT_EQ(st.pid, pid);

	fabsimd_session *b = attach(f, 2);
	ASSERT_NE(b, nullptr);
	pid_t stopped = -1;
	EXPECT_EQ(fabsimd_stop(f, &stopped, err, sizeof(err)), 1) << err;
	EXPECT_EQ(stopped, pid);
	EXPECT_TRUE(gone(pid) || wait_until([&] { return gone(pid); }, 2000));
	fabsimd_notice n;
	ASSERT_TRUE(wait_notice(b, FABSIMD_NOTICE_STOPPING, &n, 2000));
	ASSERT_TRUE(wait_notice(b, FABSIMD_NOTICE_LOST, &n, 2000));
	fabsimd_detach(b);

	EXPECT_EQ(fabsimd_status(f, &st, err, sizeof(err)), -ENOENT);
	EXPECT_NE(std::string(err).find(std::string("no fabric ") + f +
					       " is running"),
		  std::string::npos) << err;
	EXPECT_EQ(fabsimd_stop(f, nullptr, err, sizeof(err)), -ENOENT);
	EXPECT_FALSE(exists(file(f, ".sock")));
}

// A relative FABSIM_RUNTIME_DIR names a directory below where the command
// runs; the coordinator, which runs from /, finds the same one and ends
// when told (it could not find its files and never ended).
TEST_F(FabricTest, ARelativeRuntimeDirectoryWorksFromWhereTheCommandRuns)
{
	const char *f = fabric("rel");
	char old_cwd[PATH_MAX];
	ASSERT_NE(getcwd(old_cwd, sizeof(old_cwd)), nullptr);
	std::string parent = dir.substr(0, dir.rfind('/'));
	ASSERT_EQ(chdir(parent.c_str()), 0);
	setenv("FABSIM_RUNTIME_DIR", "run", 1);
	pid_t pid = -1, stopped = -1;
	char err[256] = "";
	int started = fabsimd_start(f, true, &pid, err, sizeof(err));
	EXPECT_TRUE(exists(file(f, ".sock")));
	int stop = fabsimd_stop(f, &stopped, err, sizeof(err));
	ASSERT_EQ(chdir(old_cwd), 0);
	setenv("FABSIM_RUNTIME_DIR", dir.c_str(), 1);
	ASSERT_EQ(started, 0) << err;
	EXPECT_EQ(stop, 0) << err;
	EXPECT_EQ(stopped, pid);
	EXPECT_TRUE(gone(pid) || wait_until([&] { return gone(pid); }, 2000));
}

TEST_F(FabricTest, StartOnARunningOnDemandFabricMakesItPersistent)
{
	const char *f = fabric("promote");
	fabsimd_session *a = attach(f, 1);
	ASSERT_NE(a, nullptr);
	pid_t pid = -1;
	char err[256] = "";
	EXPECT_EQ(fabsimd_start(f, true, &pid, err, sizeof(err)), 1) << err;
	EXPECT_EQ(pid, fabsimd_session_coordinator(a));
	fabsimd_detach(a);
	usleep(200000);
	struct fabsimd_status st;
	ASSERT_EQ(fabsimd_status(f, &st, err, sizeof(err)), 0) << err;
	EXPECT_TRUE(st.persistent);
	EXPECT_EQ(fabsimd_stop(f, nullptr, err, sizeof(err)), 0) << err;
}

TEST_F(FabricTest, OnDemandCoordinatorNobodyJoinsEndsAfterIdleTimeout)
{
	setenv("FABSIM_IDLE_TIMEOUT_MS", "300", 1);
	const char *f = fabric("idle");
	pid_t pid = -1;
	char err[256] = "";
	ASSERT_EQ(fabsimd_start(f, false, &pid, err, sizeof(err)), 0) << err;
	EXPECT_TRUE(wait_until([&] { return gone(pid); }, 5000));
	EXPECT_FALSE(exists(file(f, ".sock")));
	EXPECT_NE(slurp(file(f, ".log")).find("exit: nobody attached"),
		  std::string::npos);
}

TEST_F(FabricTest, ASilentConnectionDoesNotKeepTheCoordinatorAlive)
{
	setenv("FABSIM_IDLE_TIMEOUT_MS", "300", 1);
	const char *f = fabric("silent");
	pid_t pid = -1;
	char err[256] = "";
	ASSERT_EQ(fabsimd_start(f, false, &pid, err, sizeof(err)), 0) << err;
	int dirfd = open(dir.c_str(), O_PATH | O_DIRECTORY);
	ASSERT_GE(dirfd, 0);
	struct sockaddr_un sa = {};
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s.sock",
		 dirfd, f);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	ASSERT_EQ(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0)
		<< strerror(errno);
	close(dirfd);
	// Garbage first: logged and dropped, never a crash.
	char junk[7] = "hello";
	EXPECT_EQ(send(fd, junk, sizeof(junk), 0), (ssize_t)sizeof(junk));
	int fd2 = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	dirfd = open(dir.c_str(), O_PATH | O_DIRECTORY);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s.sock",
		 dirfd, f);
	ASSERT_EQ(connect(fd2, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(dirfd);
	EXPECT_TRUE(wait_until([&] { return gone(pid); }, 5000))
		<< slurp(file(f, ".log"));
	close(fd);
	close(fd2);
	std::string log = slurp(file(f, ".log"));
	EXPECT_NE(log.find("malformed message"), std::string::npos) << log;
	EXPECT_NE(log.find("said nothing"), std::string::npos) << log;
}

TEST_F(FabricTest, AttachRejectsBadArguments)
{
	fabsimd_member_info me = { 1, "x" };
	fabsimd_session *s = nullptr;
	char err[256] = "";
	EXPECT_EQ(fabsimd_attach("no/slash", &me, &s, err, sizeof(err)),
		  -EINVAL);
	EXPECT_NE(std::string(err).find("no/slash"), std::string::npos) << err;
	EXPECT_EQ(fabsimd_attach("ok", nullptr, &s, err, sizeof(err)), -EINVAL);
	EXPECT_EQ(fabsimd_next_notice(nullptr, nullptr), -EINVAL);
	fabsimd_detach(nullptr);
}
