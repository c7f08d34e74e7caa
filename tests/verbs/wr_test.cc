// Extended QPs on the verbs face: ibv_create_qp_ex with send ops flags and
// the work-request API (ibv_wr_start ... ibv_wr_complete), as programs
// written for current rdma-core post (Debian's ibv_rc_pingpong -N).
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <cstring>
#include <vector>

#include <infiniband/verbs.h>

#include "tests/verbs/face_util.h"

namespace {

struct Peer : face::Host {
	ibv_qp *qp = nullptr;
};

class Wr : public ::testing::Test {
protected:
	ibv_device **list = nullptr;
	Peer a, b;
	ibv_qp_ex *qpx = nullptr; // a's

	static constexpr int kRemote = IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_ATOMIC;

	void SetUp() override
	{
		ASSERT_NE(list = face::TwoDevices(), nullptr);
		Open(a, list[0]);
		Open(b, list[1]);
		ASSERT_TRUE(face::Connect(a.qp, b.gid, b.qp->qp_num, kRemote));
		ASSERT_TRUE(face::Connect(b.qp, a.gid, a.qp->qp_num, kRemote));
		qpx = ibv_qp_to_qp_ex(a.qp);
		ASSERT_NE(qpx, nullptr);
	}

	void TearDown() override
	{
		for (Peer *p : { &a, &b }) {
			EXPECT_EQ(ibv_destroy_qp(p->qp), 0);
			p->Close();
		}
		ibv_free_device_list(list);
	}

	static void Open(Peer &p, ibv_device *dev)
	{
		p.Open(dev, IBV_ACCESS_LOCAL_WRITE | kRemote, 1 << 14);
		ibv_qp_init_attr_ex init{};
		init.send_cq = p.cq;
		init.recv_cq = p.cq;
		init.cap = { 16, 16, 2, 2, 32 };
		init.qp_type = IBV_QPT_RC;
		init.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		init.pd = p.pd;
		init.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				      IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				      IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
		p.qp = ibv_create_qp_ex(p.ctx, &init);
		ASSERT_NE(p.qp, nullptr) << strerror(errno);
	}

	static int PostRecv(Peer &p, size_t off, uint32_t len, uint64_t id)
	{
		return face::PostRecv(p.qp, p, off, len, id);
	}

	static ibv_wc Next(Peer &p)
	{
		ibv_wc wc{};
		if (face::Poll(p.cq, &wc))
			return wc;
		ADD_FAILURE() << "no completion";
		wc.status = (ibv_wc_status)-1;
		return wc;
	}
};

TEST_F(Wr, AListOfRequestsIsPostedAtComplete)
{
	ASSERT_EQ(PostRecv(b, 0, 64, 10), 0);
	ASSERT_EQ(PostRecv(b, 64, 64, 11), 0);
	memset(a.mem.data(), 'a', 100);
	uint64_t *counter = (uint64_t *)&b.mem[4096];
	*counter = 40;

	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, a.mr->lkey, (uintptr_t)a.mem.data(), 20);
	qpx->wr_id = 2;
	ibv_wr_send_imm(qpx, htonl(0x42));
	char text[] = "inline!";
	ibv_wr_set_inline_data(qpx, text, sizeof(text));
	qpx->wr_id = 3;
	ibv_wr_atomic_fetch_add(qpx, b.mr->rkey, (uintptr_t)counter, 2);
	ibv_wr_set_sge(qpx, a.mr->lkey, (uintptr_t)&a.mem[8192], 8);
	memset(text, 0, sizeof(text)); // inline data was taken when set
	ASSERT_EQ(ibv_wr_complete(qpx), 0);

	for (uint64_t id = 1; id <= 3; id++) {
		ibv_wc wc = Next(a);
		EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
		EXPECT_EQ(wc.wr_id, id);
	}
	ibv_wc wc = Next(b);
	EXPECT_EQ(wc.wr_id, 10u);
	EXPECT_EQ(wc.byte_len, 20u);
	wc = Next(b);
	EXPECT_EQ(wc.wr_id, 11u);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(ntohl(wc.imm_data), 0x42u);
	EXPECT_STREQ((const char *)&b.mem[64], "inline!");
	EXPECT_EQ(*counter, 42u);
	EXPECT_EQ(*(uint64_t *)&a.mem[8192], 40u) << "the value before the add";
}

TEST_F(Wr, AnUnsupportedOperationFailsTheListAndNothingIsPosted)
{
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, a.mr->lkey, (uintptr_t)a.mem.data(), 8);
	ibv_wr_local_inv(qpx, 1234);
	EXPECT_EQ(ibv_wr_complete(qpx), EOPNOTSUPP);
	ibv_wc wc{};
	EXPECT_EQ(ibv_poll_cq(a.cq, 1, &wc), 0) << "a request of it was posted";

	ibv_wr_start(qpx);
	ibv_wr_set_sge(qpx, a.mr->lkey, (uintptr_t)a.mem.data(), 8);
	EXPECT_EQ(ibv_wr_complete(qpx), EINVAL) << "data for no request";

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_abort(qpx);
	EXPECT_EQ(ibv_wr_complete(qpx), 0) << "an empty list";
	EXPECT_EQ(ibv_poll_cq(a.cq, 1, &wc), 0);
}

TEST_F(Wr, OnlyQpsMadeWithSendOpsHaveTheApi)
{
	ibv_qp_init_attr plain{};
	plain.send_cq = a.cq;
	plain.recv_cq = a.cq;
	plain.cap = { 1, 1, 1, 1, 0 };
	plain.qp_type = IBV_QPT_RC;
	ibv_qp *qp = ibv_create_qp(a.pd, &plain);
	ASSERT_NE(qp, nullptr);
	errno = 0;
	EXPECT_EQ(ibv_qp_to_qp_ex(qp), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);
	EXPECT_EQ(ibv_destroy_qp(qp), 0);

	ibv_qp_init_attr_ex init{};
	init.send_cq = a.cq;
	init.recv_cq = a.cq;
	init.cap = { 1, 1, 1, 1, 0 };
	init.qp_type = IBV_QPT_RC;
	init.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	init.pd = a.pd;
	init.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_BIND_MW;
	errno = 0;
	EXPECT_EQ(ibv_create_qp_ex(a.ctx, &init), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP) << "memory windows are not simulated";
}

} // namespace
