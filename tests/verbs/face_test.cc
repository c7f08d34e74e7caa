// The verbs face of the simulated NIC, through rdma-core's API as any
// verbs program uses it (the inline ibv_post_send/ibv_poll_cq included):
// two devices, a reliable connection between them, and what a device does
// with sends, RDMA, atomics, immediate data, completion channels and
// errors.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include <infiniband/verbs.h>

namespace {

constexpr size_t kBuf = 1 << 16;

struct Side {
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;
	ibv_comp_channel *ch = nullptr;
	ibv_cq *cq = nullptr;
	ibv_qp *qp = nullptr;
	std::vector<uint8_t> mem = std::vector<uint8_t>(kBuf);
	ibv_mr *mr = nullptr;
	ibv_gid gid{};
};

class Face : public ::testing::Test {
protected:
	ibv_device **list = nullptr;
	Side a, b;

	void SetUp() override
	{
		int n = 0;
		list = ibv_get_device_list(&n);
		ASSERT_NE(list, nullptr);
		ASSERT_EQ(n, 2) << "the test runs with FABSIM_VERBS_DEVICES=2";
		Open(a, list[0]);
		Open(b, list[1]);
	}

	void TearDown() override
	{
		for (Side *s : { &a, &b }) {
			if (s->qp) {
				EXPECT_EQ(ibv_destroy_qp(s->qp), 0);
			}
			if (s->mr) {
				EXPECT_EQ(ibv_dereg_mr(s->mr), 0);
			}
			if (s->cq) {
				EXPECT_EQ(ibv_destroy_cq(s->cq), 0);
			}
			if (s->ch) {
				EXPECT_EQ(ibv_destroy_comp_channel(s->ch), 0);
			}
			if (s->pd) {
				EXPECT_EQ(ibv_dealloc_pd(s->pd), 0);
			}
			if (s->ctx) {
				EXPECT_EQ(ibv_close_device(s->ctx), 0);
			}
		}
		ibv_free_device_list(list);
	}

	void Open(Side &s, ibv_device *dev, int access = IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC)
	{
		s.ctx = ibv_open_device(dev);
		ASSERT_NE(s.ctx, nullptr);
		s.pd = ibv_alloc_pd(s.ctx);
		ASSERT_NE(s.pd, nullptr);
		s.ch = ibv_create_comp_channel(s.ctx);
		ASSERT_NE(s.ch, nullptr);
		s.cq = ibv_create_cq(s.ctx, 64, &s, s.ch, 0);
		ASSERT_NE(s.cq, nullptr);
		s.mr = ibv_reg_mr(s.pd, s.mem.data(), s.mem.size(), access);
		ASSERT_NE(s.mr, nullptr);
		ibv_qp_init_attr init{};
		init.send_cq = s.cq;
		init.recv_cq = s.cq;
		init.cap = { 32, 32, 4, 4, 64 };
		init.qp_type = IBV_QPT_RC;
		s.qp = ibv_create_qp(s.pd, &init);
		ASSERT_NE(s.qp, nullptr) << strerror(errno);
		ASSERT_EQ(ibv_query_gid(s.ctx, 1, 1, &s.gid), 0);
	}

	static int ToInit(Side &s)
	{
		ibv_qp_attr attr{};
		attr.qp_state = IBV_QPS_INIT;
		attr.pkey_index = 0;
		attr.port_num = 1;
		attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ |
				       IBV_ACCESS_REMOTE_ATOMIC;
		return ibv_modify_qp(s.qp, &attr, IBV_QP_STATE |
				     IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				     IBV_QP_ACCESS_FLAGS);
	}

	static int ToRtr(Side &s, const Side &peer,
			 uint8_t max_dest_rd_atomic = 1, uint32_t rq_psn = 0)
	{
		ibv_qp_attr attr{};
		attr.qp_state = IBV_QPS_RTR;
		attr.path_mtu = IBV_MTU_1024;
		attr.dest_qp_num = peer.qp->qp_num;
		attr.rq_psn = rq_psn;
		attr.max_dest_rd_atomic = max_dest_rd_atomic;
		attr.min_rnr_timer = 12;
		attr.ah_attr.is_global = 1;
		attr.ah_attr.grh.dgid = peer.gid;
		attr.ah_attr.grh.sgid_index = 1;
		attr.ah_attr.grh.hop_limit = 1;
		attr.ah_attr.port_num = 1;
		return ibv_modify_qp(s.qp, &attr, IBV_QP_STATE | IBV_QP_AV |
				     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER);
	}

	static int ToRts(Side &s, uint8_t retry_cnt = 7, uint8_t rnr_retry = 7,
			 uint8_t max_rd_atomic = 1, uint32_t sq_psn = 0)
	{
		ibv_qp_attr attr{};
		attr.qp_state = IBV_QPS_RTS;
		attr.timeout = 14;
		attr.retry_cnt = retry_cnt;
		attr.rnr_retry = rnr_retry;
		attr.sq_psn = sq_psn;
		attr.max_rd_atomic = max_rd_atomic;
		return ibv_modify_qp(s.qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT |
				     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	}

	void Connect()
	{
		ASSERT_EQ(ToInit(a), 0);
		ASSERT_EQ(ToInit(b), 0);
		ASSERT_EQ(ToRtr(a, b), 0);
		ASSERT_EQ(ToRtr(b, a), 0);
		ASSERT_EQ(ToRts(a), 0);
		ASSERT_EQ(ToRts(b), 0);
	}

	// Polls until one completion is there (bounded).
	static ibv_wc Wait(Side &s)
	{
		ibv_wc wc{};
		for (int i = 0; i < 1000000; i++) {
			int n = ibv_poll_cq(s.cq, 1, &wc);
			if (n == 1)
				return wc;
			EXPECT_EQ(n, 0);
		}
		ADD_FAILURE() << "no completion";
		wc.status = (ibv_wc_status)-1;
		return wc;
	}

	static int PostRecv(Side &s, size_t off, uint32_t len, uint64_t id,
			    uint32_t lkey = 0)
	{
		ibv_sge sge = { (uintptr_t)&s.mem[off], len,
				lkey ? lkey : s.mr->lkey };
		ibv_recv_wr wr{}, *bad = nullptr;
		wr.wr_id = id;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		return ibv_post_recv(s.qp, &wr, &bad);
	}

	static int Post(Side &s, ibv_wr_opcode op, size_t off, uint32_t len,
			uint64_t id, uint64_t raddr = 0, uint32_t rkey = 0,
			unsigned flags = IBV_SEND_SIGNALED, uint32_t imm = 0,
			uint32_t lkey = 0)
	{
		ibv_sge sge = { (uintptr_t)&s.mem[off], len,
				lkey ? lkey : s.mr->lkey };
		ibv_send_wr wr{}, *bad = nullptr;
		wr.wr_id = id;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = op;
		wr.send_flags = flags;
		wr.imm_data = htonl(imm);
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
		return ibv_post_send(s.qp, &wr, &bad);
	}

	uint64_t RemoteAddr(const Side &s, size_t off)
	{
		return (uintptr_t)&s.mem[off];
	}
};

TEST_F(Face, DevicesAreSimulatedRoceNics)
{
	ibv_device_attr dev{};
	ibv_port_attr port{};
	ibv_gid gid0{};

	EXPECT_STREQ(ibv_get_device_name(list[0]), "fabsim0");
	EXPECT_STREQ(ibv_get_device_name(list[1]), "fabsim1");
	ASSERT_EQ(ibv_query_device(a.ctx, &dev), 0);
	EXPECT_EQ(dev.phys_port_cnt, 1);
	EXPECT_EQ(dev.atomic_cap, IBV_ATOMIC_HCA);
	EXPECT_EQ(dev.max_sge, 4);
	EXPECT_GT(dev.max_ah, 0); // UD address handles work
	EXPECT_EQ(dev.node_guid, ibv_get_device_guid(list[0]));
	ASSERT_EQ(ibv_query_port(a.ctx, 1, &port), 0);
	EXPECT_EQ(port.state, IBV_PORT_ACTIVE);
	EXPECT_EQ(port.link_layer, IBV_LINK_LAYER_ETHERNET);
	EXPECT_EQ(port.gid_tbl_len, 2);
	EXPECT_NE(ibv_query_port(a.ctx, 2, &port), 0);
	ASSERT_EQ(ibv_query_gid(a.ctx, 1, 0, &gid0), 0);
	EXPECT_EQ(gid0.raw[0], 0xfe);
	EXPECT_EQ(gid0.raw[1], 0x80);
	// GID 1 is ::ffff:10.0.0.1 on the first device, 10.0.0.2 on the next.
	EXPECT_EQ(a.gid.raw[10], 0xff);
	EXPECT_EQ(a.gid.raw[12], 10);
	EXPECT_EQ(a.gid.raw[15], 1);
	EXPECT_EQ(b.gid.raw[15], 2);
}

// Fields the attributes cannot hold on a device (3-bit retry counts) or
// beyond what ibv_query_device grants are refused, and nothing is kept.
TEST_F(Face, AttributeValuesBeyondTheDevicesAreRefused)
{
	ibv_device_attr dev{};
	ASSERT_EQ(ibv_query_device(a.ctx, &dev), 0);
	ASSERT_EQ(ToInit(a), 0);
	EXPECT_EQ(ToRtr(a, b, (uint8_t)(dev.max_qp_rd_atom + 1)), EINVAL);
	EXPECT_EQ(a.qp->state, IBV_QPS_INIT);
	ASSERT_EQ(ToRtr(a, b, (uint8_t)dev.max_qp_rd_atom), 0);

	EXPECT_EQ(ToRts(a, 8, 7, 1), EINVAL);
	EXPECT_EQ(ToRts(a, 7, 8, 1), EINVAL);
	EXPECT_EQ(ToRts(a, 7, 7, (uint8_t)(dev.max_qp_init_rd_atom + 1)),
		  EINVAL);
	EXPECT_EQ(a.qp->state, IBV_QPS_RTR);
	ASSERT_EQ(ToRts(a), 0);
	ibv_qp_attr got{};
	ibv_qp_init_attr init{};
	ASSERT_EQ(ibv_query_qp(a.qp, &got, IBV_QP_RETRY_CNT, &init), 0);
	EXPECT_EQ(got.retry_cnt, 7);
	EXPECT_EQ(got.max_dest_rd_atomic, dev.max_qp_rd_atom);
}

// A QP moved to the error state before it was connected takes sends and
// flushes them; a program blocked in poll() on its CQ's channel wakes
// for the flushes.
TEST_F(Face, AQpInErrorFlushesAndItsChannelWakes)
{
	ASSERT_EQ(ToInit(a), 0);
	ASSERT_EQ(ibv_req_notify_cq(a.cq, 0), 0);
	ASSERT_EQ(PostRecv(a, 0, 64, 1), 0);
	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_ERR;
	ASSERT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE), 0);
	EXPECT_EQ(Post(a, IBV_WR_SEND, 0, 8, 2), 0);
	pollfd pfd = { a.ch->fd, POLLIN, 0 };
	ASSERT_EQ(poll(&pfd, 1, 2000), 1) << "the channel never woke";
	ibv_cq *ev_cq = nullptr;
	void *ev_ctx = nullptr;
	ASSERT_EQ(ibv_get_cq_event(a.ch, &ev_cq, &ev_ctx), 0);
	EXPECT_EQ(ev_cq, a.cq);
	ibv_ack_cq_events(a.cq, 1);
	for (uint64_t id : { 1, 2 }) {
		ibv_wc wc = Wait(a);
		EXPECT_EQ(wc.wr_id, id);
		EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
	}
}

// A program that waits for its channel with edge-triggered epoll wakes
// when the completion's event is there: a wake-up before it (the descriptor
// is also readable while the simulation has work, so that the program
// comes back in) must not use up the edge the event brings.
TEST_F(Face, EdgeTriggeredEpollWakesForTheEvent)
{
	Connect();
	int flags = fcntl(a.ch->fd, F_GETFL);
	ASSERT_EQ(fcntl(a.ch->fd, F_SETFL, flags | O_NONBLOCK), 0);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_GE(ep, 0);
	epoll_event want{};
	want.events = EPOLLIN | EPOLLET;
	ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, a.ch->fd, &want), 0);
	ASSERT_EQ(ibv_req_notify_cq(a.cq, 0), 0);
	ASSERT_EQ(Post(a, IBV_WR_RDMA_WRITE, 0, 64, 1, RemoteAddr(b, 0),
		       b.mr->rkey), 0);
	ibv_cq *ev_cq = nullptr;
	void *ev_ctx = nullptr;
	int wakes = 0;
	for (;;) {
		epoll_event got;
		int n = epoll_wait(ep, &got, 1, 5000);
		ASSERT_EQ(n, 1) << "no edge for the event after " << wakes
				<< " wake-ups";
		wakes++;
		if (ibv_get_cq_event(a.ch, &ev_cq, &ev_ctx) == 0)
			break;
		ASSERT_EQ(errno, EAGAIN);
		ASSERT_LT(wakes, 100);
	}
	EXPECT_EQ(ev_cq, a.cq);
	ibv_ack_cq_events(a.cq, 1);
	ibv_wc wc = Wait(a);
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	close(ep);
}

// A QP that is destroyed takes its completions out of its CQ, as mlx5
// cleans the CQ of a QP it destroys: nothing reports a QP that is gone.
TEST_F(Face, ADestroyedQpsCompletionsLeaveItsCq)
{
	Connect();
	ASSERT_EQ(ibv_req_notify_cq(a.cq, 0), 0);
	ASSERT_EQ(Post(a, IBV_WR_RDMA_WRITE, 0, 64, 1, RemoteAddr(b, 0),
		       b.mr->rkey), 0);
	// The event says the completion is in the CQ (not yet read).
	ibv_cq *ev_cq = nullptr;
	void *ev_ctx = nullptr;
	ASSERT_EQ(ibv_get_cq_event(a.ch, &ev_cq, &ev_ctx), 0);
	ibv_ack_cq_events(a.cq, 1);
	ASSERT_EQ(ibv_destroy_qp(a.qp), 0);
	a.qp = nullptr;
	ibv_wc wc[4];
	EXPECT_EQ(ibv_poll_cq(a.cq, 4, wc), 0);
}

// Arming a CQ that has no channel is accepted and changes nothing (mlx5).
TEST_F(Face, ArmingACqWithoutAChannelIsANoOp)
{
	ibv_cq *cq = ibv_create_cq(a.ctx, 8, nullptr, nullptr, 0);
	ASSERT_NE(cq, nullptr);
	EXPECT_EQ(ibv_req_notify_cq(cq, 0), 0);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
}

// A region has pages: a length of 0 is refused (EINVAL), as the kernel
// refuses it for mlx5.
TEST_F(Face, AnEmptyRegionIsRefused)
{
	errno = 0;
	EXPECT_EQ(ibv_reg_mr(a.pd, a.mem.data(), 0, IBV_ACCESS_LOCAL_WRITE),
		  nullptr);
	EXPECT_EQ(errno, EINVAL);
}

// ibv_reg_mr_iova2: peers name the region's first byte by the IOVA given,
// not by its address in this process.
TEST_F(Face, PeersAddressARegionByItsIova)
{
	Connect();
	const uint64_t iova = 0x100000;
	ibv_mr *mr = ibv_reg_mr_iova2(b.pd, &b.mem[4096], 4096, iova,
				      IBV_ACCESS_LOCAL_WRITE |
					      IBV_ACCESS_REMOTE_WRITE);
	ASSERT_NE(mr, nullptr) << strerror(errno);
	for (int i = 0; i < 32; i++)
		a.mem[i] = (uint8_t)(0xa0 + i);
	ASSERT_EQ(Post(a, IBV_WR_RDMA_WRITE, 0, 32, 1, iova + 16, mr->rkey), 0);
	ibv_wc wc = Wait(a);
	ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	EXPECT_EQ(memcmp(&b.mem[4096 + 16], &a.mem[0], 32), 0);
	// Its own address is no address of the region for a peer.
	ASSERT_EQ(Post(a, IBV_WR_RDMA_WRITE, 0, 32, 2, RemoteAddr(b, 4096),
		       mr->rkey), 0);
	EXPECT_EQ(Wait(a).status, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
}

// ibv_rereg_mr(3): the access changes in place and the keys stay; what it
// does not know is IBV_REREG_MR_ERR_INPUT with errno EINVAL.
TEST_F(Face, ReregChangesAccessAndKeepsTheKeys)
{
	ibv_mr *mr = ibv_reg_mr(b.pd, &b.mem[8192], 4096,
				IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(mr, nullptr);
	uint32_t rkey = mr->rkey;
	EXPECT_EQ(ibv_rereg_mr(mr, 1 << 7, nullptr, nullptr, 0, 0),
		  IBV_REREG_MR_ERR_INPUT);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr,
			       0, IBV_ACCESS_REMOTE_WRITE),
		  IBV_REREG_MR_ERR_INPUT) << "remote write without local write";
	ASSERT_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr,
			       0, IBV_ACCESS_LOCAL_WRITE |
					  IBV_ACCESS_REMOTE_WRITE), 0);
	EXPECT_EQ(mr->rkey, rkey);
	Connect();
	a.mem[0] = 0x77;
	ASSERT_EQ(Post(a, IBV_WR_RDMA_WRITE, 0, 1, 1, (uintptr_t)&b.mem[8192],
		       mr->rkey), 0);
	ASSERT_EQ(Wait(a).status, IBV_WC_SUCCESS);
	EXPECT_EQ(b.mem[8192], 0x77);
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
}

TEST_F(Face, QueuePairStatesFollowVerbs)
{
	ibv_qp_attr attr{};
	ibv_qp_init_attr init{};

	EXPECT_EQ(a.qp->state, IBV_QPS_RESET);
	EXPECT_EQ(Post(a, IBV_WR_SEND, 0, 8, 1), EINVAL); // not RTS
	EXPECT_EQ(PostRecv(a, 0, 8, 1), EINVAL);           // RESET
	EXPECT_EQ(ToRts(a), EINVAL);                        // skips states
	Connect();
	EXPECT_EQ(a.qp->state, IBV_QPS_RTS);
	ASSERT_EQ(ibv_query_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_DEST_QPN,
			       &init), 0);
	EXPECT_EQ(attr.qp_state, IBV_QPS_RTS);
	EXPECT_EQ(attr.dest_qp_num, b.qp->qp_num);
	EXPECT_EQ(attr.cap.max_inline_data, 64u);
	EXPECT_EQ(init.send_cq, a.cq);
}

// What each transition of an RC QP requires (the kernel's table, IBA
// 11.2.4.2): a missing attribute, or one the transition does not take, is
// EINVAL, and the QP stays where it was.
TEST_F(Face, TransitionsTakeTheirAttributesAndNoOthers)
{
	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	EXPECT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_PORT |
				IBV_QP_PKEY_INDEX), EINVAL); // no access flags
	EXPECT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_PORT |
				IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS |
				IBV_QP_SQ_PSN), EINVAL); // not at this step
	EXPECT_EQ(a.qp->state, IBV_QPS_RESET);
	ASSERT_EQ(ToInit(a), 0);
	ASSERT_EQ(ToInit(b), 0);
	attr = {};
	attr.qp_state = IBV_QPS_RTR;
	attr.dest_qp_num = b.qp->qp_num;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.grh.dgid = b.gid;
	attr.ah_attr.grh.sgid_index = 1;
	attr.ah_attr.port_num = 1;
	EXPECT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_AV |
				IBV_QP_DEST_QPN), EINVAL); // no MTU, PSN ...
	EXPECT_EQ(a.qp->state, IBV_QPS_INIT);
	ASSERT_EQ(ToRtr(a, b), 0);
	attr = {};
	attr.qp_state = IBV_QPS_RTS;
	EXPECT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE), EINVAL);
	EXPECT_EQ(a.qp->state, IBV_QPS_RTR);
	EXPECT_EQ(ToRts(a), 0);
}

// IBA 10.3.1: a QP may be reset from any state. What was posted goes
// without completions; the QP keeps its number and connects again.
TEST_F(Face, AQpResetFromAnyStateConnectsAgain)
{
	Connect();
	uint32_t qpn = a.qp->qp_num;
	ASSERT_EQ(PostRecv(a, 0, 64, 9), 0);
	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_RESET; // from RTS
	ASSERT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE), 0);
	EXPECT_EQ(a.qp->state, IBV_QPS_RESET);
	EXPECT_EQ(a.qp->qp_num, qpn);
	ibv_wc none[1];
	EXPECT_EQ(ibv_poll_cq(a.cq, 1, none), 0) << "a completion for what "
						    "the reset dropped";
	attr.qp_state = IBV_QPS_ERR;
	ASSERT_EQ(ibv_modify_qp(b.qp, &attr, IBV_QP_STATE), 0);
	attr.qp_state = IBV_QPS_RESET; // from ERR
	ASSERT_EQ(ibv_modify_qp(b.qp, &attr, IBV_QP_STATE), 0);
	Connect();
	memcpy(&a.mem[0], "again", 6);
	ASSERT_EQ(PostRecv(b, 64, 64, 11), 0);
	ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 6, 12), 0);
	EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
	ibv_wc r = Wait(b);
	EXPECT_EQ(r.status, IBV_WC_SUCCESS);
	EXPECT_EQ(r.wr_id, 11u);
	EXPECT_STREQ((const char *)&b.mem[64], "again");
}

TEST_F(Face, CreateQpChecksCapabilities)
{
	ibv_qp_init_attr init{};
	init.send_cq = a.cq;
	init.recv_cq = a.cq;
	init.qp_type = IBV_QPT_RC;
	init.cap = { 1, 1, 1, 1, 65 }; // inline beyond the NIC's 64 bytes
	EXPECT_EQ(ibv_create_qp(a.pd, &init), nullptr);
	EXPECT_EQ(errno, EINVAL);
	init.cap = { 1, 1, 5, 1, 0 };
	EXPECT_EQ(ibv_create_qp(a.pd, &init), nullptr);
	init.cap = { 1, 1, 1, 1, 0 };
	init.qp_type = IBV_QPT_RAW_PACKET; // not simulated
	EXPECT_EQ(ibv_create_qp(a.pd, &init), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);
}

// ibv_create_qp(3) writes back what the QP got, at least what was asked:
// inline room where its gather entries would go (librdmacm's rdma_xclient
// sends 16 bytes inline from a QP that asked for none).
TEST_F(Face, CreateQpGrantsInlineRoomOfItsGatherEntries)
{
	ibv_qp_init_attr init{};
	init.send_cq = a.cq;
	init.recv_cq = a.cq;
	init.qp_type = IBV_QPT_RC;
	init.cap = { 4, 4, 2, 1, 0 };
	ibv_qp *qp = ibv_create_qp(a.pd, &init);
	ASSERT_NE(qp, nullptr);
	EXPECT_EQ(init.cap.max_send_wr, 4u);
	EXPECT_EQ(init.cap.max_send_sge, 2u);
	EXPECT_EQ(init.cap.max_inline_data, 2 * sizeof(ibv_sge));
	ibv_qp_attr attr{};
	ibv_qp_init_attr got{};
	ASSERT_EQ(ibv_query_qp(qp, &attr, IBV_QP_CAP, &got), 0);
	EXPECT_EQ(attr.cap.max_inline_data, 2 * sizeof(ibv_sge));
	EXPECT_EQ(ibv_destroy_qp(qp), 0);
}

TEST_F(Face, SendAndReceiveWithImmediateData)
{
	Connect();
	memcpy(&a.mem[0], "hello, verbs", 13);
	ASSERT_EQ(PostRecv(b, 100, 64, 7), 0);
	ASSERT_EQ(Post(a, IBV_WR_SEND_WITH_IMM, 0, 13, 1, 0, 0,
		       IBV_SEND_SIGNALED, 0xabcd1234),
		  0);
	ibv_wc s = Wait(a);
	EXPECT_EQ(s.status, IBV_WC_SUCCESS) << ibv_wc_status_str(s.status);
	EXPECT_EQ(s.opcode, IBV_WC_SEND);
	EXPECT_EQ(s.wr_id, 1u);
	EXPECT_EQ(s.qp_num, a.qp->qp_num);
	ibv_wc r = Wait(b);
	EXPECT_EQ(r.status, IBV_WC_SUCCESS);
	EXPECT_EQ(r.opcode, IBV_WC_RECV);
	EXPECT_EQ(r.wr_id, 7u);
	EXPECT_EQ(r.byte_len, 13u);
	EXPECT_EQ(r.wc_flags & IBV_WC_WITH_IMM, (unsigned)IBV_WC_WITH_IMM);
	EXPECT_EQ(ntohl(r.imm_data), 0xabcd1234u);
	EXPECT_EQ(r.src_qp, a.qp->qp_num);
	EXPECT_STREQ((const char *)&b.mem[100], "hello, verbs");
}

TEST_F(Face, UnsignaledSuccessIsSilentInlineIsCopiedAtPost)
{
	Connect();
	ASSERT_EQ(PostRecv(b, 0, 64, 1), 0);
	memcpy(&a.mem[0], "inline!", 8);
	ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 8, 5, 0, 0, IBV_SEND_INLINE, 0,
		       0xdeadbeef), // the key of inline data is not looked at
		  0);
	memcpy(&a.mem[0], "changed", 8);
	ibv_wc r = Wait(b);
	EXPECT_EQ(r.status, IBV_WC_SUCCESS);
	EXPECT_STREQ((const char *)&b.mem[0], "inline!");
	ibv_wc none[1];
	for (int i = 0; i < 1000; i++)
		EXPECT_EQ(ibv_poll_cq(a.cq, 1, none), 0);
	EXPECT_EQ(Post(a, IBV_WR_SEND, 0, 65, 6, 0, 0, IBV_SEND_INLINE), EINVAL);
}

TEST_F(Face, RdmaWriteAndRead)
{
	Connect();
	for (size_t i = 0; i < 5000; i++)
		a.mem[i] = (uint8_t)(i * 7);
	ASSERT_EQ(Post(a, IBV_WR_RDMA_WRITE, 0, 5000, 1, RemoteAddr(b, 1000),
		       b.mr->rkey),
		  0);
	ibv_wc w = Wait(a);
	ASSERT_EQ(w.status, IBV_WC_SUCCESS);
	EXPECT_EQ(w.opcode, IBV_WC_RDMA_WRITE);
	EXPECT_EQ(memcmp(&b.mem[1000], &a.mem[0], 5000), 0);
	for (size_t i = 0; i < 3000; i++)
		b.mem[20000 + i] = (uint8_t)(i ^ 0x5a);
	ASSERT_EQ(Post(a, IBV_WR_RDMA_READ, 30000, 3000, 2, RemoteAddr(b, 20000),
		       b.mr->rkey),
		  0);
	ibv_wc r = Wait(a);
	ASSERT_EQ(r.status, IBV_WC_SUCCESS);
	EXPECT_EQ(r.opcode, IBV_WC_RDMA_READ);
	EXPECT_EQ(r.byte_len, 3000u);
	EXPECT_EQ(memcmp(&a.mem[30000], &b.mem[20000], 3000), 0);
	// The target hears nothing of one-sided operations.
	ibv_wc none[1];
	EXPECT_EQ(ibv_poll_cq(b.cq, 1, none), 0);
}

TEST_F(Face, WriteWithImmediateConsumesAReceive)
{
	Connect();
	ASSERT_EQ(PostRecv(b, 0, 16, 41), 0);
	ASSERT_EQ(PostRecv(b, 16, 16, 42), 0);
	memcpy(&a.mem[0], "write-imm", 10);
	ASSERT_EQ(Post(a, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 10, 1,
		       RemoteAddr(b, 500), b.mr->rkey, IBV_SEND_SIGNALED, 99),
		  0);
	EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
	ibv_wc r = Wait(b);
	EXPECT_EQ(r.status, IBV_WC_SUCCESS);
	EXPECT_EQ(r.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_EQ(r.wr_id, 41u); // the oldest receive
	EXPECT_EQ(r.byte_len, 10u);
	EXPECT_EQ(ntohl(r.imm_data), 99u);
	EXPECT_STREQ((const char *)&b.mem[500], "write-imm");
	// The next send lands in the receive that is left.
	ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 4, 2), 0);
	EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
	r = Wait(b);
	EXPECT_EQ(r.opcode, IBV_WC_RECV);
	EXPECT_EQ(r.wr_id, 42u);
	// None left: the responder is not ready (RNR NAKs) until one comes.
	ASSERT_EQ(Post(a, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 10, 3,
		       RemoteAddr(b, 600), b.mr->rkey, IBV_SEND_SIGNALED, 7),
		  0);
	ibv_wc wc;
	for (int i = 0; i < 2000; i++)
		ASSERT_EQ(ibv_poll_cq(a.cq, 1, &wc), 0) << "done with no receive";
	ASSERT_EQ(PostRecv(b, 32, 16, 43), 0);
	EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
	r = Wait(b);
	EXPECT_EQ(r.wr_id, 43u);
	EXPECT_EQ(r.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_EQ(ntohl(r.imm_data), 7u);
}

// One atomic from `from` on `to`'s memory at `remote`, its result into
// from.mem[64].
static int PostAtomic(Side &from, const Side &to, ibv_wr_opcode op,
		      uint64_t remote, uint64_t compare_add, uint64_t swap = 0)
{
	ibv_sge sge = { (uintptr_t)&from.mem[64], 8, from.mr->lkey };
	ibv_send_wr wr{}, *bad;
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = remote;
	wr.wr.atomic.rkey = to.mr->rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	return ibv_post_send(from.qp, &wr, &bad);
}

TEST_F(Face, AtomicsFetchAddAndCompareSwap)
{
	Connect();
	uint64_t *target = (uint64_t *)&b.mem[4096];
	uint64_t *result = (uint64_t *)&a.mem[64];
	*target = 40;

	ASSERT_EQ(PostAtomic(a, b, IBV_WR_ATOMIC_FETCH_AND_ADD,
			     (uintptr_t)target, 2), 0);
	ibv_wc c = Wait(a);
	ASSERT_EQ(c.status, IBV_WC_SUCCESS);
	EXPECT_EQ(c.opcode, IBV_WC_FETCH_ADD);
	EXPECT_EQ(*result, 40u);
	EXPECT_EQ(*target, 42u);

	// 41 does not match: no swap.
	ASSERT_EQ(PostAtomic(a, b, IBV_WR_ATOMIC_CMP_AND_SWP,
			     (uintptr_t)target, 41, 7), 0);
	EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
	EXPECT_EQ(*result, 42u);
	EXPECT_EQ(*target, 42u);
	ASSERT_EQ(PostAtomic(a, b, IBV_WR_ATOMIC_CMP_AND_SWP,
			     (uintptr_t)target, 42, 7), 0);
	c = Wait(a);
	EXPECT_EQ(c.opcode, IBV_WC_COMP_SWAP);
	EXPECT_EQ(*result, 42u);
	EXPECT_EQ(*target, 7u);
}

// An atomic on a target address not aligned to 8 bytes is an invalid
// request at the responder (not an access error), and the target is left
// alone.
TEST_F(Face, AMisalignedAtomicIsAnInvalidRequest)
{
	Connect();
	ASSERT_EQ(PostAtomic(a, b, IBV_WR_ATOMIC_FETCH_AND_ADD,
			     (uintptr_t)&b.mem[4096 + 4], 1), 0);
	ibv_wc c = Wait(a);
	EXPECT_EQ(c.status, IBV_WC_REM_INV_REQ_ERR) << ibv_wc_status_str(c.status);
	EXPECT_EQ(b.mem[4096 + 4], 0);
}

TEST_F(Face, BadLocalKeyIsAProtectionErrorAndFlushesTheRest)
{
	Connect();
	ASSERT_EQ(PostRecv(a, 0, 64, 10), 0);
	ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 8, 1, 0, 0, IBV_SEND_SIGNALED, 0,
		       a.mr->lkey + 1000),
		  0); // the post succeeds; the device finds the bad key
	ibv_wc e = Wait(a);
	EXPECT_EQ(e.wr_id, 1u);
	EXPECT_EQ(e.status, IBV_WC_LOC_PROT_ERR);
	ibv_wc f = Wait(a);
	EXPECT_EQ(f.wr_id, 10u);
	EXPECT_EQ(f.status, IBV_WC_WR_FLUSH_ERR);
	EXPECT_EQ(a.qp->state, IBV_QPS_ERR);
	// Later requests are flushed too.
	ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 8, 2), 0);
	EXPECT_EQ(Wait(a).status, IBV_WC_WR_FLUSH_ERR);
}

// A receive's bad local key is found when a message lands in it: the
// receiver's local protection error, the sender's remote operational error,
// both QPs in error.
TEST_F(Face, AReceiveWithABadKeyFailsWhenAMessageLandsInIt)
{
	Connect();
	ASSERT_EQ(PostRecv(b, 0, 64, 7, b.mr->lkey + 1000), 0);
	ibv_wc none[1];
	EXPECT_EQ(ibv_poll_cq(b.cq, 1, none), 0) << "failed at its post";
	ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 8, 1), 0);
	ibv_wc r = Wait(b);
	EXPECT_EQ(r.wr_id, 7u);
	EXPECT_EQ(r.status, IBV_WC_LOC_PROT_ERR) << ibv_wc_status_str(r.status);
	ibv_wc s = Wait(a);
	EXPECT_EQ(s.wr_id, 1u);
	EXPECT_EQ(s.status, IBV_WC_REM_OP_ERR) << ibv_wc_status_str(s.status);
	EXPECT_EQ(a.qp->state, IBV_QPS_ERR);
	EXPECT_EQ(b.qp->state, IBV_QPS_ERR);
}

// Deregistering a region takes its key from the receives posted on it:
// the message that lands in one is a protection error, and nothing is
// written into the memory (the program may unmap it at once).
TEST_F(Face, ADeregisteredRegionsReceivesFailWhenAMessageLands)
{
	Connect();
	ASSERT_EQ(PostRecv(b, 0, 64, 7), 0);
	ASSERT_EQ(ibv_dereg_mr(b.mr), 0);
	b.mr = nullptr;
	b.mem[0] = 0x5a;
	a.mem[0] = 0xa5;
	ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 8, 1), 0);
	ibv_wc r = Wait(b);
	EXPECT_EQ(r.wr_id, 7u);
	EXPECT_EQ(r.status, IBV_WC_LOC_PROT_ERR) << ibv_wc_status_str(r.status);
	ibv_wc s = Wait(a);
	EXPECT_EQ(s.status, IBV_WC_REM_OP_ERR) << ibv_wc_status_str(s.status);
	EXPECT_EQ(b.mem[0], 0x5a) << "written through a deregistered region";
}

// The same while a message of many packets is landing: what comes after
// the deregistration is not written, and the receive fails.
TEST_F(Face, ADeregistrationStopsAMessageLandingInItsRegion)
{
	Connect();
	std::fill(b.mem.begin(), b.mem.end(), 0x5a);
	std::fill(a.mem.begin(), a.mem.end(), 0xa5);
	ASSERT_EQ(PostRecv(b, 0, kBuf, 7), 0);
	ASSERT_EQ(Post(a, IBV_WR_SEND, 0, kBuf, 1), 0);
	ibv_wc wc[1];
	int polls = 0;
	while (b.mem[0] != 0xa5 && polls++ < 100000) // its first packet
		ASSERT_EQ(ibv_poll_cq(b.cq, 1, wc), 0);
	ASSERT_EQ(b.mem[0], 0xa5) << "no packet landed";
	ASSERT_EQ(b.mem[kBuf - 1], 0x5a) << "the whole message landed at once";
	ASSERT_EQ(ibv_dereg_mr(b.mr), 0);
	b.mr = nullptr;
	ibv_wc r = Wait(b);
	EXPECT_EQ(r.wr_id, 7u);
	EXPECT_EQ(r.status, IBV_WC_LOC_PROT_ERR) << ibv_wc_status_str(r.status);
	EXPECT_EQ(b.mem[kBuf - 1], 0x5a) << "written after its deregistration";
}

TEST_F(Face, BufferOutsideTheRegionIsAProtectionError)
{
	Connect();
	ASSERT_EQ(Post(a, IBV_WR_SEND, kBuf - 4, 8, 1), 0);
	EXPECT_EQ(Wait(a).status, IBV_WC_LOC_PROT_ERR);
}

TEST_F(Face, ReadIntoARegionWithoutLocalWriteIsAProtectionError)
{
	ibv_mr *ro = ibv_reg_mr(a.pd, &a.mem[0], 4096, 0);
	ASSERT_NE(ro, nullptr);
	Connect();
	ASSERT_EQ(Post(a, IBV_WR_RDMA_READ, 0, 64, 1, RemoteAddr(b, 0),
		       b.mr->rkey, IBV_SEND_SIGNALED, 0, ro->lkey),
		  0);
	EXPECT_EQ(Wait(a).status, IBV_WC_LOC_PROT_ERR);
	EXPECT_EQ(ibv_dereg_mr(ro), 0);
}

TEST_F(Face, BadRemoteKeyIsARemoteAccessError)
{
	Connect();
	ASSERT_EQ(Post(a, IBV_WR_RDMA_WRITE, 0, 64, 1, RemoteAddr(b, 0),
		       b.mr->rkey + 1),
		  0);
	ibv_wc e = Wait(a);
	EXPECT_EQ(e.status, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(a.qp->state, IBV_QPS_ERR);
	ASSERT_EQ(Post(a, IBV_WR_RDMA_READ, 0, 64, 2, RemoteAddr(b, kBuf - 8),
		       b.mr->rkey),
		  0);
	EXPECT_EQ(Wait(a).status, IBV_WC_WR_FLUSH_ERR);
	// The responder tells its program, as an affiliated asynchronous
	// error; the requester, whose completion said it, does not.
	for (Side *s : { &a, &b }) {
		int fl = fcntl(s->ctx->async_fd, F_GETFL);
		ASSERT_EQ(fcntl(s->ctx->async_fd, F_SETFL, fl | O_NONBLOCK), 0);
	}
	ibv_async_event ev{};
	ASSERT_EQ(ibv_get_async_event(b.ctx, &ev), 0);
	EXPECT_EQ(ev.event_type, IBV_EVENT_QP_ACCESS_ERR);
	EXPECT_EQ(ev.element.qp, b.qp);
	ibv_ack_async_event(&ev);
	EXPECT_EQ(ibv_get_async_event(a.ctx, &ev), -1);
}

// An RC responder that refuses a request goes to the error state: a send
// the requester had already put on the wire behind it is not delivered (the
// requester flushes it), and the responder's receive is flushed too.
TEST_F(Face, ARefusingResponderGoesToErrorAndTakesNothingAfter)
{
	Connect();
	ASSERT_EQ(PostRecv(b, 0, 64, 7), 0);
	ASSERT_EQ(Post(a, IBV_WR_RDMA_WRITE, 0, 64, 1, RemoteAddr(b, 0),
		       b.mr->rkey + 1),
		  0);
	ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 8, 2), 0);
	EXPECT_EQ(Wait(a).status, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(Wait(a).status, IBV_WC_WR_FLUSH_ERR);
	ibv_wc r = Wait(b);
	EXPECT_EQ(r.wr_id, 7u);
	EXPECT_EQ(r.status, IBV_WC_WR_FLUSH_ERR) << ibv_wc_status_str(r.status);
	EXPECT_EQ(b.qp->state, IBV_QPS_ERR);
}

TEST_F(Face, RemoteRightsAreEnforced)
{
	ibv_mr *ro = ibv_reg_mr(b.pd, &b.mem[0], 4096, IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(ro, nullptr);
	Connect();
	ASSERT_EQ(Post(a, IBV_WR_RDMA_READ, 0, 64, 1, RemoteAddr(b, 0),
		       ro->rkey),
		  0);
	EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
	ASSERT_EQ(Post(a, IBV_WR_RDMA_WRITE, 0, 64, 2, RemoteAddr(b, 0),
		       ro->rkey),
		  0);
	EXPECT_EQ(Wait(a).status, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(ibv_dereg_mr(ro), 0);
}

// ibv_modify_qp(3): qp_access_flags is the "mask of enabled remote access
// operations": one the responder's QP does not enable is refused, whatever
// the region allows, and leaves its memory alone.
TEST_F(Face, AQpAnswersOnlyTheRemoteOperationsItEnables)
{
	Connect();
	ibv_qp_attr attr{};
	attr.qp_access_flags = IBV_ACCESS_REMOTE_READ;
	ASSERT_EQ(ibv_modify_qp(b.qp, &attr, IBV_QP_ACCESS_FLAGS), 0);
	ASSERT_EQ(Post(a, IBV_WR_RDMA_READ, 0, 64, 1, RemoteAddr(b, 0),
		       b.mr->rkey),
		  0);
	EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
	memset(&a.mem[0], 0x5a, 64);
	ASSERT_EQ(Post(a, IBV_WR_RDMA_WRITE, 0, 64, 2, RemoteAddr(b, 128),
		       b.mr->rkey),
		  0);
	EXPECT_EQ(Wait(a).status, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(b.mem[128], 0) << "the refused write landed";
}

// A region is reachable only through QPs of its own protection domain: an
// R_Key of another PD is refused as a device refuses it.
TEST_F(Face, ARegionOfAnotherPdIsOutOfReach)
{
	ibv_pd *other = ibv_alloc_pd(b.ctx);
	ASSERT_NE(other, nullptr);
	ibv_mr *mr = ibv_reg_mr(other, &b.mem[0], 4096,
				IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE);
	ASSERT_NE(mr, nullptr);
	Connect();
	memset(&a.mem[0], 0x5a, 64);
	ASSERT_EQ(Post(a, IBV_WR_RDMA_WRITE, 0, 64, 1, RemoteAddr(b, 0),
		       mr->rkey),
		  0);
	EXPECT_EQ(Wait(a).status, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(b.mem[0], 0) << "the write through another PD landed";
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
	EXPECT_EQ(ibv_dealloc_pd(other), 0);
}

// IBA C9-88: a zero-length RDMA write or read checks neither key nor
// address; a zero-byte write with immediate data is a notification that
// takes a receive.
TEST_F(Face, AZeroLengthWriteChecksNoKey)
{
	Connect();
	ASSERT_EQ(PostRecv(b, 0, 64, 7), 0);
	ASSERT_EQ(Post(a, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 0, 1, 0, 0,
		       IBV_SEND_SIGNALED, 0x1234),
		  0);
	EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
	ibv_wc r = Wait(b);
	EXPECT_EQ(r.status, IBV_WC_SUCCESS);
	EXPECT_EQ(r.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_EQ(r.byte_len, 0u);
	EXPECT_EQ(ntohl(r.imm_data), 0x1234u);
	ASSERT_EQ(Post(a, IBV_WR_RDMA_READ, 0, 0, 2, 0, 0x5555), 0);
	EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
}

// ibv_create_cq_ex(3): an extended CQ, read with ibv_start_poll,
// ibv_next_poll and the ibv_wc_read_* calls (ibv_poll_cq reads it too);
// fields the device cannot give are refused.
TEST_F(Face, AnExtendedCqIsReadEntryByEntry)
{
	ibv_cq_init_attr_ex attr{};
	attr.cqe = 16;
	attr.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	errno = 0;
	EXPECT_EQ(ibv_create_cq_ex(b.ctx, &attr), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);
	attr.wc_flags = IBV_WC_STANDARD_FLAGS;
	ibv_cq_ex *cqx = ibv_create_cq_ex(b.ctx, &attr);
	ASSERT_NE(cqx, nullptr) << strerror(errno);
	// b's QP is made again on the extended CQ.
	ASSERT_EQ(ibv_destroy_qp(b.qp), 0);
	ibv_qp_init_attr init{};
	init.send_cq = ibv_cq_ex_to_cq(cqx);
	init.recv_cq = ibv_cq_ex_to_cq(cqx);
	init.cap = { 32, 32, 4, 4, 64 };
	init.qp_type = IBV_QPT_RC;
	b.qp = ibv_create_qp(b.pd, &init);
	ASSERT_NE(b.qp, nullptr);
	Connect();
	ASSERT_EQ(PostRecv(b, 0, 64, 7), 0);
	ASSERT_EQ(PostRecv(b, 64, 64, 8), 0);
	ASSERT_EQ(Post(a, IBV_WR_SEND_WITH_IMM, 0, 16, 1, 0, 0,
		       IBV_SEND_SIGNALED, 0xbeef),
		  0);
	ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 24, 2), 0);
	EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
	EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
	ibv_poll_cq_attr pattr{};
	int ret = ENOENT;
	for (int i = 0; i < 100000 && ret == ENOENT; i++)
		ret = ibv_start_poll(cqx, &pattr);
	ASSERT_EQ(ret, 0);
	EXPECT_EQ(cqx->wr_id, 7u);
	EXPECT_EQ(cqx->status, IBV_WC_SUCCESS);
	EXPECT_EQ(ibv_wc_read_opcode(cqx), IBV_WC_RECV);
	EXPECT_EQ(ibv_wc_read_byte_len(cqx), 16u);
	EXPECT_TRUE(ibv_wc_read_wc_flags(cqx) & IBV_WC_WITH_IMM);
	EXPECT_EQ(ntohl(ibv_wc_read_imm_data(cqx)), 0xbeefu);
	EXPECT_EQ(ibv_wc_read_qp_num(cqx), b.qp->qp_num);
	ret = ENOENT;
	for (int i = 0; i < 100000 && ret == ENOENT; i++)
		ret = ibv_next_poll(cqx);
	ASSERT_EQ(ret, 0);
	EXPECT_EQ(cqx->wr_id, 8u);
	EXPECT_EQ(ibv_wc_read_byte_len(cqx), 24u);
	EXPECT_FALSE(ibv_wc_read_wc_flags(cqx) & IBV_WC_WITH_IMM);
	EXPECT_EQ(ibv_next_poll(cqx), ENOENT);
	ibv_end_poll(cqx);
	ASSERT_EQ(ibv_destroy_qp(b.qp), 0);
	b.qp = nullptr;
	EXPECT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
}

// ibv_query_gid_table(3): "If there are more valid GID entries than the
// provided value of max_entries ... the call will fail"; with room, every
// entry, each as ibv_query_gid_ex gives it.
TEST_F(Face, TheGidTableIsReadWholeOrNotAtAll)
{
	ibv_port_attr port{};
	ASSERT_EQ(ibv_query_port(a.ctx, 1, &port), 0);
	std::vector<ibv_gid_entry> table(port.gid_tbl_len + 1);
	EXPECT_LT(ibv_query_gid_table(a.ctx, table.data(), 0, 0), 0);
	EXPECT_LT(ibv_query_gid_table(a.ctx, table.data(),
				      port.gid_tbl_len - 1, 0),
		  0);
	ssize_t n = ibv_query_gid_table(a.ctx, table.data(), table.size(), 0);
	ASSERT_EQ(n, (ssize_t)port.gid_tbl_len);
	for (ssize_t i = 0; i < n; i++) {
		ibv_gid_entry one{};
		ASSERT_EQ(ibv_query_gid_ex(a.ctx, 1, (uint32_t)i, &one, 0), 0);
		EXPECT_EQ(memcmp(&one.gid, &table[i].gid, sizeof(one.gid)), 0);
		EXPECT_EQ(table[i].gid_index, (uint32_t)i);
	}
}

// Attribute values the device does not have are refused: a P_Key index
// past its one-entry table, a source GID index past its GID table.
TEST_F(Face, AttributesNamingMissingTableEntriesAreRefused)
{
	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_INIT;
	attr.pkey_index = 1;
	attr.port_num = 1;
	attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	EXPECT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
		  EINVAL);
	ASSERT_EQ(ToInit(a), 0);
	ibv_device_attr dev{};
	ibv_port_attr port{};
	ASSERT_EQ(ibv_query_device(a.ctx, &dev), 0);
	ASSERT_EQ(ibv_query_port(a.ctx, 1, &port), 0);
	attr = {};
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = IBV_MTU_1024;
	attr.dest_qp_num = b.qp->qp_num;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.grh.dgid = b.gid;
	attr.ah_attr.grh.sgid_index = (uint8_t)port.gid_tbl_len;
	attr.ah_attr.grh.hop_limit = 1;
	attr.ah_attr.port_num = 1;
	EXPECT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_AV |
				IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER),
		  EINVAL);
	EXPECT_EQ(a.qp->state, IBV_QPS_INIT);
}

TEST_F(Face, RegistrationRules)
{
	// Remote write without local write: refused, as by verbs.
	EXPECT_EQ(ibv_reg_mr(a.pd, &a.mem[0], 64, IBV_ACCESS_REMOTE_WRITE),
		  nullptr);
	EXPECT_EQ(errno, EINVAL);
	ibv_mr *m = ibv_reg_mr(a.pd, &a.mem[0], 64, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(m, nullptr);
	EXPECT_EQ(m->lkey, m->rkey);
	EXPECT_NE(m->lkey, a.mr->lkey);
	EXPECT_EQ(ibv_dealloc_pd(a.pd), EBUSY); // regions still in it
	EXPECT_EQ(ibv_dereg_mr(m), 0);
	// An IOVA other than the address is one too (PeersAddressARegionByItsIova).
	m = ibv_reg_mr_iova2(a.pd, &a.mem[0], 64, 0x1000,
			     IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(m, nullptr);
	EXPECT_EQ(ibv_dereg_mr(m), 0);
}

// ibv_reg_mr on memory the process has not mapped fails with EFAULT, as
// a device's pinning does (the model would otherwise copy into nothing).
TEST_F(Face, RegisteringUnmappedMemoryIsAFault)
{
	long page = sysconf(_SC_PAGESIZE);
	void *gone = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(gone, MAP_FAILED);
	ASSERT_EQ(munmap((char *)gone + page, page), 0);
	// Half of it mapped, half not.
	errno = 0;
	EXPECT_EQ(ibv_reg_mr(a.pd, gone, 2 * page, IBV_ACCESS_LOCAL_WRITE),
		  nullptr);
	EXPECT_EQ(errno, EFAULT);
	ibv_mr *half = ibv_reg_mr(a.pd, gone, page, IBV_ACCESS_LOCAL_WRITE);
	EXPECT_NE(half, nullptr);
	if (half) {
		EXPECT_EQ(ibv_dereg_mr(half), 0);
	}
	ASSERT_EQ(munmap(gone, page), 0);
}

// The kernel pins a region's pages for writing when the device may write
// them: read-only memory is a fault with local write (a message landing in
// it killed the process), fine without; no access at all is a fault.
TEST_F(Face, RegisteringMemoryTheDeviceMayNotWriteIsAFault)
{
	long page = sysconf(_SC_PAGESIZE);
	void *ro = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(ro, MAP_FAILED);
	ASSERT_EQ(mprotect((char *)ro + page, page, PROT_READ), 0);
	errno = 0;
	EXPECT_EQ(ibv_reg_mr(a.pd, ro, 2 * page, IBV_ACCESS_LOCAL_WRITE),
		  nullptr);
	EXPECT_EQ(errno, EFAULT);
	errno = 0;
	EXPECT_EQ(ibv_reg_mr(a.pd, (char *)ro + page, page,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE),
		  nullptr);
	EXPECT_EQ(errno, EFAULT);
	ibv_mr *readable = ibv_reg_mr(a.pd, ro, 2 * page,
				      IBV_ACCESS_REMOTE_READ);
	EXPECT_NE(readable, nullptr) << strerror(errno);
	if (readable) {
		EXPECT_EQ(ibv_dereg_mr(readable), 0);
	}
	ASSERT_EQ(mprotect(ro, 2 * page, PROT_NONE), 0);
	errno = 0;
	EXPECT_EQ(ibv_reg_mr(a.pd, ro, page, 0), nullptr);
	EXPECT_EQ(errno, EFAULT);
	ASSERT_EQ(munmap(ro, 2 * page), 0);
}

// A message longer than its receive: a local length error at the
// receiver, a remote invalid request at the sender (IBA 9.9.2), both QPs
// in error. Also for a message of several packets.
TEST_F(Face, TruncatedReceiveIsALengthErrorAndTheSendersInvalidRequest)
{
	Connect();
	ASSERT_EQ(PostRecv(b, 0, 4, 1), 0);
	// The sender's own receive is flushed by its QP's failure: after the
	// failed send's completion, which the NIC writes first.
	ASSERT_EQ(PostRecv(a, 0, 64, 3), 0);
	ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 5000, 2), 0);
	ibv_wc r = Wait(b);
	EXPECT_EQ(r.status, IBV_WC_LOC_LEN_ERR);
	EXPECT_EQ(b.qp->state, IBV_QPS_ERR);
	ibv_wc s = Wait(a);
	EXPECT_EQ(s.wr_id, 2u);
	EXPECT_EQ(s.status, IBV_WC_REM_INV_REQ_ERR) << ibv_wc_status_str(s.status);
	EXPECT_EQ(a.qp->state, IBV_QPS_ERR);
	ibv_wc f = Wait(a);
	EXPECT_EQ(f.wr_id, 3u);
	EXPECT_EQ(f.status, IBV_WC_WR_FLUSH_ERR) << ibv_wc_status_str(f.status);
}

TEST_F(Face, SendQueueDepthIsEnforced)
{
	Connect();
	ibv_qp_init_attr init{};
	ibv_qp_attr attr{};
	ASSERT_EQ(ibv_query_qp(a.qp, &attr, 0, &init), 0);
	int posted = 0, ret = 0;
	while ((ret = Post(a, IBV_WR_RDMA_WRITE, 0, 8, posted,
			   RemoteAddr(b, 0), b.mr->rkey)) == 0)
		posted++;
	EXPECT_EQ(ret, ENOMEM);
	EXPECT_EQ(posted, (int)init.cap.max_send_wr);
	for (int i = 0; i < posted; i++)
		EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
	EXPECT_EQ(Post(a, IBV_WR_RDMA_WRITE, 0, 8, 99, RemoteAddr(b, 0),
		       b.mr->rkey),
		  0);
}

// A device frees a send queue's slots as their completions are read, those
// of unsignaled requests with the next signaled one's: however long the
// writes take, a full queue stays full until then, so a CQ as deep as the
// queue is never overrun (the slots used to come back as the writes
// completed, and a program reading slowly lost completions).
TEST_F(Face, SendQueueSlotsComeBackAsCompletionsAreRead)
{
	Connect();
	ibv_qp_init_attr init{};
	ibv_qp_attr attr{};
	ASSERT_EQ(ibv_query_qp(a.qp, &attr, 0, &init), 0);
	const int depth = (int)init.cap.max_send_wr;
	auto write = [&](int id, unsigned flags) {
		return Post(a, IBV_WR_RDMA_WRITE, 0, 8, id, RemoteAddr(b, 0),
			    b.mr->rkey, flags);
	};
	for (int i = 0; i < depth; i++)
		ASSERT_EQ(write(i, IBV_SEND_SIGNALED), 0);
	// Each refusal is a poll: the writes complete meanwhile.
	for (int k = 0; k < 1000; k++)
		ASSERT_EQ(write(99, IBV_SEND_SIGNALED), ENOMEM) << "try " << k;
	EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
	EXPECT_EQ(write(100, IBV_SEND_SIGNALED), 0) << "one read, one slot";
	EXPECT_EQ(write(101, IBV_SEND_SIGNALED), ENOMEM);
	for (int i = 0; i < depth; i++)
		EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
	// Unsignaled requests hold theirs until a later completion is read.
	for (int i = 0; i < depth - 1; i++)
		ASSERT_EQ(write(200 + i, 0), 0);
	ASSERT_EQ(write(300, IBV_SEND_SIGNALED), 0);
	for (int k = 0; k < 1000; k++)
		ASSERT_EQ(write(99, 0), ENOMEM) << "try " << k;
	ibv_wc wc = Wait(a);
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	EXPECT_EQ(wc.wr_id, 300u);
	for (int i = 0; i < depth; i++)
		EXPECT_EQ(write(400 + i, IBV_SEND_SIGNALED), 0) << i;
	for (int i = 0; i < depth; i++)
		EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
}

// One thread posts and, refused for want of room, posts again without
// reading the CQ; another thread reads it. The refused post counts as a
// poll: the clock moves, the writes complete and make room (the retrying
// thread used to hold the clock for ever, as a thread at work does).
TEST_F(Face, AThreadRetryingAFullSendQueueLetsTheClockMove)
{
	Connect();
	constexpr int kWrites = 200;
	const auto give_up = std::chrono::steady_clock::now() +
			     std::chrono::seconds(20);
	std::atomic<int> done{0};
	std::atomic<bool> failed{false};
	std::thread reader([&] {
		ibv_wc wc;
		while (done < kWrites && !failed &&
		       std::chrono::steady_clock::now() < give_up) {
			int n = ibv_poll_cq(a.cq, 1, &wc);
			if (n == 1 && wc.status == IBV_WC_SUCCESS)
				done++;
			else if (n != 0)
				failed = true;
		}
	});
	int posted = 0, refused = 0;
	while (posted < kWrites && std::chrono::steady_clock::now() < give_up) {
		int ret = Post(a, IBV_WR_RDMA_WRITE, 0, 64, posted,
			       RemoteAddr(b, 0), b.mr->rkey);
		if (ret == 0)
			posted++;
		else if (ret == ENOMEM)
			refused++;
		else
			break;
	}
	reader.join();
	EXPECT_FALSE(failed);
	EXPECT_EQ(posted, kWrites);
	EXPECT_EQ(done, kWrites);
	EXPECT_GT(refused, 0) << "the send queue never filled";
}

TEST_F(Face, CompletionChannelWakesAWaiter)
{
	Connect();
	ASSERT_EQ(ibv_req_notify_cq(b.cq, 0), 0);
	ASSERT_EQ(PostRecv(b, 0, 64, 1), 0);
	ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 8, 2), 0);
	// The fd is readable while the simulation has work: a program that
	// polls it comes back in, and waiting for the event moves time.
	pollfd p = { b.ch->fd, POLLIN, 0 };
	ASSERT_EQ(poll(&p, 1, 1000), 1);
	ibv_cq *cq = nullptr;
	void *ctx = nullptr;
	ASSERT_EQ(ibv_get_cq_event(b.ch, &cq, &ctx), 0);
	EXPECT_EQ(cq, b.cq);
	EXPECT_EQ(ctx, &b);
	ibv_ack_cq_events(cq, 1);
	ibv_wc r = Wait(b);
	EXPECT_EQ(r.wr_id, 1u);
	EXPECT_EQ(r.status, IBV_WC_SUCCESS);
}

TEST_F(Face, NonBlockingChannelSaysAgainWhenNothingIsComing)
{
	Connect();
	int fl = fcntl(a.ch->fd, F_GETFL);
	ASSERT_EQ(fcntl(a.ch->fd, F_SETFL, fl | O_NONBLOCK), 0);
	ASSERT_EQ(ibv_req_notify_cq(a.cq, 0), 0);
	ibv_cq *cq;
	void *ctx;
	EXPECT_EQ(ibv_get_cq_event(a.ch, &cq, &ctx), -1);
	EXPECT_EQ(errno, EAGAIN);
	// Idle: the fd is not readable either.
	pollfd p = { a.ch->fd, POLLIN, 0 };
	EXPECT_EQ(poll(&p, 1, 0), 0);
}

// ibv_req_notify_cq(cq, 1): only a solicited completion (the sender's
// IBV_SEND_SOLICITED, the SE bit of its last packet) raises the event.
TEST_F(Face, ASolicitedOnlyArmIgnoresUnsolicitedReceives)
{
	Connect();
	int fl = fcntl(b.ch->fd, F_GETFL);
	ASSERT_EQ(fcntl(b.ch->fd, F_SETFL, fl | O_NONBLOCK), 0);
	ASSERT_EQ(ibv_req_notify_cq(b.cq, 1), 0);
	ibv_cq *cq = nullptr;
	void *ctx = nullptr;
	for (unsigned flags : { 0u, (unsigned)IBV_SEND_SOLICITED }) {
		ASSERT_EQ(PostRecv(b, 0, 64, 1), 0);
		ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 8, 2, 0, 0,
			       IBV_SEND_SIGNALED | flags),
			  0);
		EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
		EXPECT_EQ(Wait(b).wr_id, 1u);
		int got = ibv_get_cq_event(b.ch, &cq, &ctx);
		if (!flags) {
			EXPECT_EQ(got, -1) << "an unsolicited receive woke it";
			EXPECT_EQ(errno, EAGAIN);
		} else {
			EXPECT_EQ(got, 0) << "the solicited receive did not";
			if (!got)
				ibv_ack_cq_events(cq, 1);
		}
	}
}

// ibv_resize_cq keeps what is unpolled, in order, and refuses a size that
// cannot hold it; a CQ overrun loses completions and is one async event.
TEST_F(Face, AResizedCqKeepsItsEntriesAndAnOverrunIsOneEvent)
{
	Connect();
	auto exchange = [&](int n) {
		for (int i = 0; i < n; i++)
			ASSERT_EQ(PostRecv(b, 0, 64, 100 + i), 0);
		for (int i = 0; i < n; i++)
			ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 8, i), 0);
		for (int i = 0; i < n; i++)
			ASSERT_EQ(Wait(a).status, IBV_WC_SUCCESS);
	};
	exchange(3);
	EXPECT_EQ(ibv_resize_cq(b.cq, 2), EINVAL);
	ASSERT_EQ(ibv_resize_cq(b.cq, 3), 0);
	EXPECT_GE(b.cq->cqe, 3);
	for (int i = 0; i < 3; i++)
		EXPECT_EQ(Wait(b).wr_id, 100u + i);

	int fl = fcntl(b.ctx->async_fd, F_GETFL);
	ASSERT_EQ(fcntl(b.ctx->async_fd, F_SETFL, fl | O_NONBLOCK), 0);
	exchange(5); // two more than the CQ holds
	ibv_async_event ev{};
	ASSERT_EQ(ibv_get_async_event(b.ctx, &ev), 0);
	EXPECT_EQ(ev.event_type, IBV_EVENT_CQ_ERR);
	EXPECT_EQ(ev.element.cq, b.cq);
	ibv_ack_async_event(&ev);
	EXPECT_EQ(ibv_get_async_event(b.ctx, &ev), -1) << "one overrun, "
							   "one event";
	EXPECT_EQ(errno, EAGAIN);
}

// The first packet a QP in RTR receives raises COMM_EST (an affiliated
// asynchronous event of IBA chapter 11), once; a QP in RTS raises none.
TEST_F(Face, TheFirstPacketAQpInRtrReceivesIsCommunicationEstablished)
{
	ASSERT_EQ(ToInit(a), 0);
	ASSERT_EQ(ToInit(b), 0);
	ASSERT_EQ(ToRtr(a, b), 0);
	ASSERT_EQ(ToRtr(b, a), 0);
	ASSERT_EQ(ToRts(a), 0); // b stays in RTR: it can receive, not send
	for (Side *s : { &a, &b }) {
		int fl = fcntl(s->ctx->async_fd, F_GETFL);
		ASSERT_EQ(fcntl(s->ctx->async_fd, F_SETFL, fl | O_NONBLOCK), 0);
	}
	for (uint64_t id : { 1, 2 }) {
		ASSERT_EQ(PostRecv(b, 0, 64, 10 + id), 0);
		ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 8, id), 0);
		EXPECT_EQ(Wait(b).status, IBV_WC_SUCCESS);
		EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
	}
	ibv_async_event ev{};
	ASSERT_EQ(ibv_get_async_event(b.ctx, &ev), 0);
	EXPECT_EQ(ev.event_type, IBV_EVENT_COMM_EST);
	EXPECT_EQ(ev.element.qp, b.qp);
	ibv_ack_async_event(&ev);
	EXPECT_EQ(ibv_get_async_event(b.ctx, &ev), -1) << "once";
	EXPECT_EQ(ibv_get_async_event(a.ctx, &ev), -1) << "a was in RTS";
}

TEST_F(Face, ReceiverNotReadyRetriesUntilAReceiveIsPosted)
{
	Connect();
	ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 8, 1), 0);
	ibv_wc wc[1];
	for (int i = 0; i < 2000; i++) // virtual time passes: RNR NAKs
		EXPECT_EQ(ibv_poll_cq(a.cq, 1, wc), 0);
	ASSERT_EQ(PostRecv(b, 0, 64, 2), 0);
	EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
	EXPECT_EQ(Wait(b).wr_id, 2u);
}

// The QP's own rnr_retry counts: none left, the first receiver-not-ready
// NAK fails the send (and the QP).
TEST_F(Face, ASenderWithNoRnrRetriesGivesUpAtOnce)
{
	ASSERT_EQ(ToInit(a), 0);
	ASSERT_EQ(ToInit(b), 0);
	ASSERT_EQ(ToRtr(a, b), 0);
	ASSERT_EQ(ToRtr(b, a), 0);
	ASSERT_EQ(ToRts(b), 0);
	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 0;
	attr.max_rd_atomic = 1;
	ASSERT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT |
				IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC), 0);
	ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 8, 1), 0);
	EXPECT_EQ(Wait(a).status, IBV_WC_RNR_RETRY_EXC_ERR);
}

TEST_F(Face, DestroyingAPeerMakesTheSenderGiveUp)
{
	Connect();
	ASSERT_EQ(ibv_destroy_qp(b.qp), 0);
	b.qp = nullptr;
	ASSERT_EQ(Post(a, IBV_WR_RDMA_WRITE, 0, 8, 1, RemoteAddr(b, 0),
		       b.mr->rkey),
		  0);
	EXPECT_EQ(Wait(a).status, IBV_WC_RETRY_EXC_ERR);
}

// Destroying a QP is a command to the device that takes time: what was
// already on its way to it arrives meanwhile and is acknowledged, as it is
// on a device, where a program's teardown comes long after its last
// completion (Debian's ibv_srq_pingpong ends with sends still in flight).
TEST_F(Face, AMessageOnItsWayToAQpBeingDestroyedIsStillAcknowledged)
{
	Connect();
	ASSERT_EQ(PostRecv(b, 0, 64, 5), 0);
	ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 64, 1), 0);
	ASSERT_EQ(ibv_destroy_qp(b.qp), 0);
	b.qp = nullptr;
	EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
}

// Several messages in flight when the receiver has no receive posted: the
// first draws receiver-not-ready NAKs, the others sequence NAKs, and the
// receiver-not-ready wait keeps its timer (nic_test's
// SequenceNakDuringAReceiverNotReadyWaitKeepsItsTimer, at the NIC).
TEST_F(Face, ReceiverNotReadyWithSeveralMessagesInFlight)
{
	Connect();
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(Post(a, IBV_WR_SEND, i * 64, 40, 100 + i), 0);
	ibv_wc wc[1];
	for (int i = 0; i < 20000; i++)
		EXPECT_EQ(ibv_poll_cq(b.cq, 1, wc), 0);
	for (int i = 0; i < 8; i++) {
		ASSERT_EQ(PostRecv(b, 1000 + i * 64, 40, i), 0);
		ibv_wc r = Wait(b);
		EXPECT_EQ(r.status, IBV_WC_SUCCESS) << i;
		EXPECT_EQ(r.wr_id, (uint64_t)i);
	}
	for (int i = 0; i < 8; i++)
		EXPECT_EQ(Wait(a).status, IBV_WC_SUCCESS);
}

// Registering and deregistering many times: the NIC's key table reuses
// its slots (nic_test's ManyRegistrationCyclesKeepTheKeyTableUsable).
TEST_F(Face, ManyRegistrationsComeAndGo)
{
	for (int i = 0; i < 2000; i++) {
		ibv_mr *m = ibv_reg_mr(a.pd, &a.mem[0], 64, IBV_ACCESS_LOCAL_WRITE);
		ASSERT_NE(m, nullptr) << i;
		ASSERT_EQ(ibv_dereg_mr(m), 0);
	}
}

// A thread that never uses the fabric (a runtime's helper) gets its time
// to show up once, not at every registration's wait: each cost 250 ms of
// real time, and these 400 took 100 s (the test's time limit fails it).
TEST_F(Face, AThreadThatNeverCallsInDoesNotSlowEveryRegistration)
{
	std::mutex m;
	std::condition_variable cv;
	bool stop = false;
	std::thread helper([&] {
		std::unique_lock<std::mutex> lock(m);
		cv.wait(lock, [&] { return stop; });
	});
	for (int i = 0; i < 400; i++) {
		ibv_mr *mr = ibv_reg_mr(a.pd, &a.mem[0], 64,
					IBV_ACCESS_LOCAL_WRITE);
		ASSERT_NE(mr, nullptr) << i;
		ASSERT_EQ(ibv_dereg_mr(mr), 0);
	}
	{
		std::lock_guard<std::mutex> lock(m);
		stop = true;
	}
	cv.notify_one();
	helper.join();
}

// ibv_modify_qp's sq_psn and rq_psn are the PSNs on the wire: a pair that
// agrees on them talks across the 24-bit wrap; one whose requester starts
// behind what the responder expects has its requests taken for duplicates
// and never delivered, as on a NIC (the PSNs were ignored, and both worked).
TEST_F(Face, StartingPsnsAreKeptAcrossTheWrap)
{
	const uint32_t start = 0xfffff0;
	ASSERT_EQ(ToInit(a), 0);
	ASSERT_EQ(ToInit(b), 0);
	ASSERT_EQ(ToRtr(a, b, 1, start), 0);
	ASSERT_EQ(ToRtr(b, a, 1, start), 0);
	ASSERT_EQ(ToRts(a, 7, 7, 1, start), 0);
	ASSERT_EQ(ToRts(b, 7, 7, 1, start), 0);
	for (int i = 0; i < 40; i++) {
		a.mem[0] = (uint8_t)i;
		ASSERT_EQ(PostRecv(b, 100, 64, 500 + i), 0);
		ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 1, i), 0);
		ibv_wc rw = Wait(b), sw = Wait(a);
		ASSERT_EQ(rw.status, IBV_WC_SUCCESS) << i;
		ASSERT_EQ(sw.status, IBV_WC_SUCCESS) << i;
		EXPECT_EQ(b.mem[100], (uint8_t)i);
	}
}

TEST_F(Face, ARequesterBehindTheRespondersPsnIsNotHeard)
{
	ASSERT_EQ(ToInit(a), 0);
	ASSERT_EQ(ToInit(b), 0);
	ASSERT_EQ(ToRtr(a, b), 0);
	ASSERT_EQ(ToRtr(b, a, 1, 0x100), 0);
	ASSERT_EQ(ToRts(a, 2), 0);
	ASSERT_EQ(ToRts(b), 0);
	ASSERT_EQ(PostRecv(b, 100, 64, 7), 0);
	ASSERT_EQ(Post(a, IBV_WR_SEND, 0, 8, 1), 0);
	ibv_wc sw = Wait(a);
	EXPECT_EQ(sw.status, IBV_WC_RETRY_EXC_ERR) << ibv_wc_status_str(sw.status);
	ibv_wc wc;
	EXPECT_EQ(ibv_poll_cq(b.cq, 1, &wc), 0) << "the send was delivered";
}

} // namespace
