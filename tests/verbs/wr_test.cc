// Extended QPs on the verbs face: ibv_create_qp_ex with send ops flags and
// the work-request API (ibv_wr_start ... ibv_wr_complete), as programs
// written for current rdma-core post (Debian's ibv_rc_pingpong -N).
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <cstring>
#include <vector>

#include <infiniband/verbs.h>

namespace {

constexpr size_t kBuf = 1 << 14;

struct Peer {
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	ibv_qp *qp = nullptr;
	std::vector<uint8_t> mem = std::vector<uint8_t>(kBuf);
	ibv_mr *mr = nullptr;
	ibv_gid gid{};
};

class Wr : public ::testing::Test {
protected:
	ibv_device **list = nullptr;
	Peer a, b;
	ibv_qp_ex *qpx = nullptr; // a's

	void SetUp() override
	{
		int n = 0;
		list = ibv_get_device_list(&n);
		ASSERT_NE(list, nullptr);
		ASSERT_EQ(n, 2) << "the test runs with FABSIM_VERBS_DEVICES=2";
		Open(a, list[0]);
		Open(b, list[1]);
		Link(a, b);
		Link(b, a);
		qpx = ibv_qp_to_qp_ex(a.qp);
		ASSERT_NE(qpx, nullptr);
	}

	void TearDown() override
	{
		for (Peer *p : { &a, &b }) {
			EXPECT_EQ(ibv_destroy_qp(p->qp), 0);
			EXPECT_EQ(ibv_dereg_mr(p->mr), 0);
			EXPECT_EQ(ibv_destroy_cq(p->cq), 0);
			EXPECT_EQ(ibv_dealloc_pd(p->pd), 0);
			EXPECT_EQ(ibv_close_device(p->ctx), 0);
		}
		ibv_free_device_list(list);
	}

	static void Open(Peer &p, ibv_device *dev)
	{
		p.ctx = ibv_open_device(dev);
		ASSERT_NE(p.ctx, nullptr);
		p.pd = ibv_alloc_pd(p.ctx);
		p.cq = ibv_create_cq(p.ctx, 64, nullptr, nullptr, 0);
		p.mr = ibv_reg_mr(p.pd, p.mem.data(), p.mem.size(),
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					  IBV_ACCESS_REMOTE_ATOMIC);
		ASSERT_TRUE(p.pd && p.cq && p.mr);
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
		ASSERT_EQ(ibv_query_gid(p.ctx, 1, 1, &p.gid), 0);
	}

	static void Link(Peer &p, const Peer &peer)
	{
		ibv_qp_attr attr{};
		attr.qp_state = IBV_QPS_INIT;
		attr.port_num = 1;
		attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
		ASSERT_EQ(ibv_modify_qp(p.qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
		attr.qp_state = IBV_QPS_RTR;
		attr.path_mtu = IBV_MTU_1024;
		attr.dest_qp_num = peer.qp->qp_num;
		attr.max_dest_rd_atomic = 1;
		attr.ah_attr.is_global = 1;
		attr.ah_attr.grh.dgid = peer.gid;
		attr.ah_attr.grh.sgid_index = 1;
		attr.ah_attr.port_num = 1;
		ASSERT_EQ(ibv_modify_qp(p.qp, &attr, IBV_QP_STATE | IBV_QP_AV |
					IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER), 0);
		attr.qp_state = IBV_QPS_RTS;
		attr.retry_cnt = 7;
		attr.rnr_retry = 7;
		attr.max_rd_atomic = 1;
		ASSERT_EQ(ibv_modify_qp(p.qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT |
					IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC), 0);
	}

	static int PostRecv(Peer &p, size_t off, uint32_t len, uint64_t id)
	{
		ibv_sge sge = { (uintptr_t)&p.mem[off], len, p.mr->lkey };
		ibv_recv_wr wr{}, *bad = nullptr;
		wr.wr_id = id;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		return ibv_post_recv(p.qp, &wr, &bad);
	}

	static ibv_wc Next(Peer &p)
	{
		ibv_wc wc{};
		for (int i = 0; i < 200000; i++)
			if (ibv_poll_cq(p.cq, 1, &wc) == 1)
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
