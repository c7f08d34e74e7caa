// A host whose process died can be taken by a new process, as a rebooted
// node comes back with its address (MULTIPROCESS.md): while its process
// lives the host is taken (-EADDRINUSE); once it has ended, a NIC opened on
// the host replaces the dead one, does not hand out its queue pair numbers
// again, and carries traffic. What a dead process was sending is not
// waited for.
#include <gtest/gtest.h>

#include <signal.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "providers/sim/nic/tests/shared_world.h"

namespace {

std::vector<nic_completion> *completions;

void on_completion(void *, const nic_completion *c)
{
	completions->push_back(*c);
}
const nic_qp_ops kOps = {on_completion, on_completion, on_completion, nullptr};

// A world in shared memory that a forked child shares.
class SharedNic : public ::testing::Test {
protected:
	std::string name = "/fabsim-nic-takeover-" + std::to_string(getpid());
	fs_arena *arena = nullptr;
	nic_world *world = nullptr;
	nm_error err;

	void SetUp() override
	{
		world = MakeSharedWorld(name, &arena);
		ASSERT_NE(world, nullptr);
	}
	void TearDown() override
	{
		if (world)
			nic_world_destroy(world);
		fs_arena_detach(arena);
		fs_arena_unlink(name.c_str());
	}
};

TEST_F(SharedNic, TheHostOfADeadProcessIsTakenByANewOne)
{

	// The child opens host 1 and a queue pair there, then waits for a
	// word from the parent and dies without closing anything.
	int go[2], ready[2];
	ASSERT_EQ(pipe(go), 0);
	ASSERT_EQ(pipe(ready), 0);
	pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		nic *n = nullptr;
		nic_qp *qp = nullptr;
		char c = 0;
		nic_world_lock(world);
		int r = nic_open(world, 1, &n, &err);
		if (r == 0)
			r = nic_qp_create(n, NIC_QP_RD, &kOps, nullptr, &qp);
		nic_world_unlock(world);
		c = r == 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(0);
	}
	char c = 0;
	ASSERT_EQ(read(ready[0], &c, 1), 1);
	ASSERT_EQ(c, 'y');

	nic *n[2] = {};
	nic_world_lock(world);
	ASSERT_EQ(nic_open(world, 0, &n[0], &err), 0);
	EXPECT_EQ(nic_open(world, 1, &n[1], &err), -EADDRINUSE)
		<< "a living process's host was taken";
	nic_world_unlock(world);

	ASSERT_EQ(write(go[1], "x", 1), 1);
	int status = 0;
	ASSERT_EQ(waitpid(child, &status, 0), child);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	nic_world_lock(world);
	ASSERT_EQ(nic_open(world, 1, &n[1], &err), 0) << err.msg;
	nic_qp *qp[2];
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(nic_qp_create(n[i], NIC_QP_RD, &kOps, nullptr, &qp[i]),
			  0);
	EXPECT_NE(nic_qp_num(qp[1]), nic_qp_num(qp[0]))
		<< "the dead process's queue pair number was handed out again";

	std::vector<nic_completion> got;
	completions = &got;
	std::vector<uint8_t> src(3000), dst(3000);
	for (size_t i = 0; i < src.size(); i++)
		src[i] = uint8_t(i * 5 + 3);
	nic_recv r = {};
	r.source = NIC_ANY_SOURCE;
	r.sge_count = 1;
	r.sge[0].addr = dst.data();
	r.sge[0].len = dst.size();
	ASSERT_EQ(nic_post_recv(qp[1], &r), 0);
	nic_wr wr = {};
	wr.opcode = NIC_WR_SEND;
	wr.peer = {nic_host(n[1]), nic_qp_num(qp[1])};
	wr.sge_count = 1;
	wr.sge[0].addr = src.data();
	wr.sge[0].len = src.size();
	ASSERT_EQ(nic_post_send(qp[0], &wr), 0);
	nic_world_run_until(world, nullptr, nullptr, NM_TIME_NEVER);
	EXPECT_EQ(got.size(), 2u); /* the send and the receive */
	EXPECT_TRUE(src == dst);
	for (int i = 0; i < 2; i++) {
		nic_qp_destroy(qp[i]);
		nic_close(n[i]);
	}
	nic_world_unlock(world);
}

bool got_one(void *ctx)
{
	return !static_cast<std::vector<nic_completion> *>(ctx)->empty();
}

// A process that dies in the middle of sending a message: the receive the
// message was landing in is flushed, not held for ever (a program that
// waited for it, or tried to cancel it, hung).
TEST_F(SharedNic, AReceiveADeadSenderWasFillingIsFlushed)
{
	nic *n0 = nullptr;
	nic_qp *qp0 = nullptr;
	std::vector<uint8_t> dst(1 << 20);
	nic_world_lock(world);
	ASSERT_EQ(nic_open(world, 0, &n0, &err), 0);
	ASSERT_EQ(nic_qp_create(n0, NIC_QP_RD, &kOps, nullptr, &qp0), 0);
	nic_recv r = {};
	r.cookie = 7;
	r.source = NIC_ANY_SOURCE;
	r.sge_count = 1;
	r.sge[0].addr = dst.data();
	r.sge[0].len = dst.size();
	ASSERT_EQ(nic_post_recv(qp0, &r), 0);
	nic_peer to = {nic_host(n0), nic_qp_num(qp0)};
	nic_world_unlock(world);

	// The child posts a 1 MiB send to it and waits to be killed.
	int ready[2];
	ASSERT_EQ(pipe(ready), 0);
	pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		static std::vector<uint8_t> src(1 << 20, 0x5a);
		nic *n = nullptr;
		nic_qp *qp = nullptr;
		nic_world_lock(world);
		int ret = nic_open(world, 1, &n, &err);
		if (ret == 0)
			ret = nic_qp_create(n, NIC_QP_RD, &kOps, nullptr, &qp);
		nic_wr wr = {};
		wr.opcode = NIC_WR_SEND;
		wr.peer = to;
		wr.sge_count = 1;
		wr.sge[0].addr = src.data();
		wr.sge[0].len = src.size();
		if (ret == 0)
			ret = nic_post_send(qp, &wr);
		nic_world_unlock(world);
		char c = ret == 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1)
			_exit(2);
		pause();
		_exit(0);
	}
	char c = 0;
	ASSERT_EQ(read(ready[0], &c, 1), 1);
	ASSERT_EQ(c, 'y');
	std::vector<nic_completion> got;
	completions = &got;
	// A few of its packets land (1 MiB takes ~340 us at 25 Gb/s).
	nic_world_lock(world);
	nic_world_run_until(world, nullptr, nullptr, nic_world_now(world) + 50000);
	nic_world_unlock(world);
	ASSERT_TRUE(got.empty()) << "the message was complete already";
	ASSERT_EQ(kill(child, SIGKILL), 0);
	ASSERT_EQ(waitpid(child, nullptr, 0), child);

	// Its death is found (here by taking its host over, at once), and
	// the rest of the model runs.
	nic *n1 = nullptr;
	nic_world_lock(world);
	ASSERT_EQ(nic_open(world, 1, &n1, &err), 0) << err.msg;
	nic_world_run_until(world, got_one, &got,
			    nic_world_now(world) + 10 * NM_NS_PER_MS);
	ASSERT_EQ(got.size(), 1u) << "the receive was held for ever";
	EXPECT_EQ(got[0].cookie, 7u);
	EXPECT_EQ(got[0].status, NIC_WR_FLUSH_ERR);
	nic_close(n1);
	nic_qp_destroy(qp0);
	nic_close(n0);
	nic_world_unlock(world);
}

}  // namespace
