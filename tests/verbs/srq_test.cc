// Shared receive queues on the verbs face, through rdma-core's API: RC
// queue pairs of one device take the receives of one SRQ in the order they
// were posted; each completion names the QP that took it; a QP's error
// leaves the SRQ's receives to the others; the limit event; an empty SRQ
// makes senders retry.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>

#include <cstring>
#include <vector>

#include <infiniband/verbs.h>

#include "tests/verbs/face_util.h"

namespace {

using Dev = face::Host;

class Srq : public ::testing::Test {
protected:
	ibv_device **list = nullptr;
	Dev a, b;            // senders on a, receivers on b
	ibv_srq *srq = nullptr;
	ibv_qp *tx[2] = {};  // on a
	ibv_qp *rx[2] = {};  // on b, on the SRQ

	void SetUp() override
	{
		ASSERT_NE(list = face::TwoDevices(), nullptr);
		a.Open(list[0], kAccess);
		b.Open(list[1], kAccess);
		ibv_srq_init_attr init{};
		init.attr.max_wr = 8;
		init.attr.max_sge = 1;
		srq = ibv_create_srq(b.pd, &init);
		ASSERT_NE(srq, nullptr) << strerror(errno);
		for (int i = 0; i < 2; i++) {
			tx[i] = Qp(a, nullptr);
			rx[i] = Qp(b, srq);
			ASSERT_NE(tx[i], nullptr);
			ASSERT_NE(rx[i], nullptr) << strerror(errno);
			ASSERT_TRUE(face::Connect(tx[i], b.gid, rx[i]->qp_num));
			ASSERT_TRUE(face::Connect(rx[i], a.gid, tx[i]->qp_num));
		}
	}

	void TearDown() override
	{
		for (ibv_qp *qp : { tx[0], tx[1], rx[0], rx[1] })
			if (qp)
				EXPECT_EQ(ibv_destroy_qp(qp), 0);
		if (srq)
			EXPECT_EQ(ibv_destroy_srq(srq), 0);
		a.Close();
		b.Close();
		ibv_free_device_list(list);
	}

	static constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE;

	static ibv_qp *Qp(Dev &d, ibv_srq *s)
	{
		ibv_qp_init_attr init{};
		init.send_cq = d.cq;
		init.recv_cq = d.cq;
		init.srq = s;
		init.cap = { 8, s ? 0u : 8u, 1, s ? 0u : 1u, 0 };
		init.qp_type = IBV_QPT_RC;
		return ibv_create_qp(d.pd, &init);
	}

	int PostSrq(size_t off, uint32_t len, uint64_t id)
	{
		ibv_sge sge = { b.Addr(off), len, b.mr->lkey };
		ibv_recv_wr wr{}, *bad = nullptr;
		wr.wr_id = id;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		return ibv_post_srq_recv(srq, &wr, &bad);
	}

	int Send(ibv_qp *qp, size_t off, uint32_t len, uint64_t id)
	{
		return face::PostSend(qp, (void *)a.Addr(off), len,
				      a.mr->lkey, id);
	}

	static bool Poll(Dev &d, ibv_wc *wc, int turns = 200000)
	{
		return face::Poll(d.cq, wc, turns);
	}
};

TEST_F(Srq, QueuePairsTakeTheSharedReceivesInOrderAndSayWhichTookThem)
{
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(PostSrq(1024 * i, 1024, 100 + i), 0);
	memset(a.mem.data(), 'x', 100);
	memset(a.mem.data() + 4096, 'y', 200);
	ASSERT_EQ(Send(tx[1], 0, 100, 1), 0);
	ibv_wc wc{};
	ASSERT_TRUE(Poll(b, &wc));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	EXPECT_EQ(wc.wr_id, 100u) << "the first posted";
	EXPECT_EQ(wc.qp_num, rx[1]->qp_num);
	EXPECT_EQ(wc.byte_len, 100u);
	ASSERT_EQ(Send(tx[0], 4096, 200, 2), 0);
	ASSERT_TRUE(Poll(b, &wc));
	EXPECT_EQ(wc.wr_id, 101u);
	EXPECT_EQ(wc.qp_num, rx[0]->qp_num);
	EXPECT_EQ(wc.byte_len, 200u);
	EXPECT_EQ(b.mem[0], 'x');
	EXPECT_EQ(b.mem[1024], 'y');
	for (int i = 0; i < 2; i++) {
		ASSERT_TRUE(Poll(a, &wc));
		EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	}
}

TEST_F(Srq, AQueuePairsErrorLeavesTheReceivesToTheOthers)
{
	ASSERT_EQ(PostSrq(0, 1024, 7), 0);
	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_ERR;
	ASSERT_EQ(ibv_modify_qp(rx[0], &attr, IBV_QP_STATE), 0);
	ibv_wc wc{};
	EXPECT_FALSE(Poll(b, &wc, 2000)) << "the SRQ's receive was flushed";
	ASSERT_EQ(Send(tx[1], 0, 10, 1), 0);
	ASSERT_TRUE(Poll(b, &wc));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	EXPECT_EQ(wc.wr_id, 7u);
	EXPECT_EQ(wc.qp_num, rx[1]->qp_num);
}

TEST_F(Srq, AnEmptySharedQueueMakesTheSenderRetryUntilAReceiveComes)
{
	ASSERT_EQ(Send(tx[0], 0, 64, 1), 0);
	ibv_wc wc{};
	EXPECT_FALSE(Poll(a, &wc, 5000)) << "completed with nowhere to land";
	ASSERT_EQ(PostSrq(0, 64, 9), 0);
	ASSERT_TRUE(Poll(b, &wc));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	EXPECT_EQ(wc.wr_id, 9u);
	ASSERT_TRUE(Poll(a, &wc));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
}

TEST_F(Srq, TheLimitEventComesOnceFewerReceivesAreLeft)
{
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(PostSrq(256 * i, 256, i), 0);
	ibv_srq_attr attr{};
	attr.srq_limit = 3;
	ASSERT_EQ(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT), 0);
	ASSERT_EQ(ibv_query_srq(srq, &attr), 0);
	EXPECT_EQ(attr.srq_limit, 3u);
	EXPECT_EQ(attr.max_wr, 8u);

	// Three left: not fewer than the limit yet.
	ASSERT_EQ(Send(tx[0], 0, 8, 1), 0);
	ibv_wc wc{};
	ASSERT_TRUE(Poll(b, &wc));
	int fl = fcntl(b.ctx->async_fd, F_GETFL);
	ASSERT_EQ(fcntl(b.ctx->async_fd, F_SETFL, fl | O_NONBLOCK), 0);
	ibv_async_event ev{};
	errno = 0;
	EXPECT_EQ(ibv_get_async_event(b.ctx, &ev), -1);
	EXPECT_EQ(errno, EAGAIN);
	// Two left.
	ASSERT_EQ(Send(tx[0], 0, 8, 2), 0);
	ASSERT_TRUE(Poll(b, &wc));
	ASSERT_EQ(ibv_get_async_event(b.ctx, &ev), 0) << strerror(errno);
	EXPECT_EQ(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	EXPECT_EQ(ev.element.srq, srq);
	ibv_ack_async_event(&ev);
	ASSERT_EQ(ibv_query_srq(srq, &attr), 0);
	EXPECT_EQ(attr.srq_limit, 0u) << "the limit is disarmed";
}

TEST_F(Srq, WhatASharedQueueRefuses)
{
	ibv_sge sge = { (uintptr_t)b.mem.data(), 64, b.mr->lkey };
	ibv_recv_wr wr{}, *bad = nullptr;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	EXPECT_EQ(ibv_post_recv(rx[0], &wr, &bad), EINVAL)
		<< "a QP on an SRQ has no receive queue of its own";
	EXPECT_EQ(bad, &wr);
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(PostSrq(0, 64, i), 0);
	EXPECT_EQ(PostSrq(0, 64, 8), ENOMEM) << "max_wr is 8";
	EXPECT_EQ(ibv_destroy_srq(srq), EBUSY) << "QPs use it";
	ibv_srq_attr attr{};
	attr.max_wr = 16;
	EXPECT_EQ(ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR), EINVAL);
	attr.srq_limit = 9;
	EXPECT_EQ(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT), EINVAL)
		<< "beyond max_wr";

	ibv_qp_init_attr init{};
	init.send_cq = b.cq;
	init.recv_cq = b.cq;
	init.srq = srq;
	init.cap = { 1, 0, 1, 0, 0 };
	init.qp_type = IBV_QPT_UD;
	EXPECT_EQ(ibv_create_qp(b.pd, &init), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP) << "datagrams from an SRQ";
}

// A write with immediate data that finds the SRQ empty draws
// receiver-not-ready NAKs until a receive is posted there, and takes it, on
// the QP it came to.
TEST_F(Srq, AWriteWithImmediateDataWaitsForTheNextSharedReceive)
{
	ibv_sge sge = { (uintptr_t)a.mem.data(), 8, a.mr->lkey };
	ibv_send_wr wr{}, *bad = nullptr;
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htonl(77);
	wr.wr.rdma.remote_addr = (uintptr_t)b.mem.data();
	wr.wr.rdma.rkey = b.mr->rkey;
	ASSERT_EQ(ibv_post_send(tx[1], &wr, &bad), 0);
	ibv_wc wc{};
	EXPECT_FALSE(Poll(b, &wc, 2000));
	EXPECT_FALSE(Poll(a, &wc, 2000)) << "completed with no receive";
	ASSERT_EQ(PostSrq(0, 64, 55), 0);
	ASSERT_TRUE(Poll(a, &wc));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	ASSERT_TRUE(Poll(b, &wc)) << "the write's completion was lost";
	EXPECT_EQ(wc.wr_id, 55u);
	EXPECT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_EQ(ntohl(wc.imm_data), 77u);
	EXPECT_EQ(wc.qp_num, rx[1]->qp_num);
}

// A QP on an SRQ that goes into the error state says it will take no
// more of its receives (IBV_EVENT_QP_LAST_WQE_REACHED).
TEST_F(Srq, AQueuePairInErrorReportsItsLastReceive)
{
	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_ERR;
	ASSERT_EQ(ibv_modify_qp(rx[1], &attr, IBV_QP_STATE), 0);
	ibv_async_event ev{};
	ASSERT_EQ(ibv_get_async_event(b.ctx, &ev), 0) << strerror(errno);
	EXPECT_EQ(ev.event_type, IBV_EVENT_QP_LAST_WQE_REACHED);
	EXPECT_EQ(ev.element.qp, rx[1]);
	ibv_ack_async_event(&ev);
}

} // namespace
