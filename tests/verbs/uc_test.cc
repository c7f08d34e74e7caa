// Unreliable-connected queue pairs on the verbs face, through rdma-core's
// API: connected like RC, sends and writes only, no acknowledgement — a
// send completes whether or not the peer had a receive for it.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <cstring>
#include <vector>

#include <infiniband/verbs.h>

#include "tests/verbs/face_util.h"

namespace {

struct End : face::Host {
	ibv_qp *qp = nullptr;
};

class Uc : public ::testing::Test {
protected:
	ibv_device **list = nullptr;
	End a, b;

	void SetUp() override
	{
		ASSERT_NE(list = face::TwoDevices(), nullptr);
		Open(a, list[0]);
		Open(b, list[1]);
		ASSERT_TRUE(face::Connect(a.qp, b.gid, b.qp->qp_num));
		ASSERT_TRUE(face::Connect(b.qp, a.gid, a.qp->qp_num));
	}

	void TearDown() override
	{
		for (End *e : { &a, &b }) {
			EXPECT_EQ(ibv_destroy_qp(e->qp), 0);
			e->Close();
		}
		ibv_free_device_list(list);
	}

	static void Open(End &e, ibv_device *dev)
	{
		e.Open(dev, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		ibv_qp_init_attr init{};
		init.send_cq = e.cq;
		init.recv_cq = e.cq;
		init.cap = { 8, 8, 1, 1, 0 };
		init.qp_type = IBV_QPT_UC;
		e.qp = ibv_create_qp(e.pd, &init);
		ASSERT_NE(e.qp, nullptr) << strerror(errno);
	}

	static int PostRecv(End &e, size_t off, uint32_t len, uint64_t id)
	{
		return face::PostRecv(e.qp, e, off, len, id);
	}

	static int Post(End &e, ibv_wr_opcode op, size_t off, uint32_t len,
			uint64_t id, uint64_t raddr = 0, uint32_t rkey = 0)
	{
		ibv_sge sge = { e.Addr(off), len, e.mr->lkey };
		ibv_send_wr wr{}, *bad = nullptr;
		wr.wr_id = id;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = op;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.imm_data = htonl(0x1234);
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
		return ibv_post_send(e.qp, &wr, &bad);
	}

	static bool Poll(End &e, ibv_wc *wc, int turns = 200000)
	{
		return face::Poll(e.cq, wc, turns);
	}
};

TEST_F(Uc, SendsAndWritesLandWithoutAnAcknowledgement)
{
	for (size_t i = 0; i < 10000; i++)
		a.mem[i] = (uint8_t)(i * 13);
	ASSERT_EQ(PostRecv(b, 0, 10000, 1), 0);
	ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 10000, 2), 0);
	ibv_wc wc{};
	ASSERT_TRUE(Poll(a, &wc));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	EXPECT_EQ(wc.opcode, IBV_WC_SEND);
	ASSERT_TRUE(Poll(b, &wc));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	EXPECT_EQ(wc.byte_len, 10000u);
	EXPECT_EQ(wc.src_qp, a.qp->qp_num);
	EXPECT_EQ(memcmp(b.mem.data(), a.mem.data(), 10000), 0);

	ASSERT_EQ(PostRecv(b, 0, 16, 3), 0);
	ASSERT_EQ(Post(a, IBV_WR_RDMA_WRITE_WITH_IMM, 100, 500, 4,
		       (uintptr_t)&b.mem[20000], b.mr->rkey), 0);
	ASSERT_TRUE(Poll(a, &wc));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	ASSERT_TRUE(Poll(b, &wc));
	EXPECT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_EQ(ntohl(wc.imm_data), 0x1234u);
	EXPECT_EQ(memcmp(&b.mem[20000], &a.mem[100], 500), 0);
}

TEST_F(Uc, ASendWithNoReceiveIsDroppedAndStillCompletes)
{
	ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 64, 1), 0);
	ibv_wc wc{};
	ASSERT_TRUE(Poll(a, &wc));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << "no receiver-not-ready on UC";
	// It completed as its packet left; let the packet arrive (empty polls
	// move time), find no receive and go.
	EXPECT_FALSE(Poll(b, &wc, 2000));
	ASSERT_EQ(PostRecv(b, 0, 64, 2), 0);
	EXPECT_FALSE(Poll(b, &wc, 2000)) << "the dropped send was kept";
	memset(a.mem.data(), 'k', 32);
	ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 32, 3), 0);
	ASSERT_TRUE(Poll(b, &wc));
	EXPECT_EQ(wc.wr_id, 2u);
	EXPECT_EQ(wc.byte_len, 32u);
	EXPECT_EQ(b.mem[31], 'k');
}

TEST_F(Uc, ReadsAndAtomicsAreNotUnreliableOperations)
{
	EXPECT_EQ(Post(a, IBV_WR_RDMA_READ, 0, 8, 1, (uintptr_t)&b.mem[0],
		       b.mr->rkey), EINVAL);
	EXPECT_EQ(Post(a, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 8, 1,
		       (uintptr_t)&b.mem[0], b.mr->rkey), EINVAL);
	ibv_qp_attr attr{};
	ibv_qp_init_attr init{};
	ASSERT_EQ(ibv_query_qp(a.qp, &attr, IBV_QP_STATE, &init), 0);
	EXPECT_EQ(init.qp_type, IBV_QPT_UC);
	EXPECT_EQ(attr.qp_state, IBV_QPS_RTS);
}

} // namespace
