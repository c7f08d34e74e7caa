// Unreliable-datagram queue pairs on the verbs face, through rdma-core's
// API: address handles, Q_Keys, the 40 bytes of GRH in front of every
// datagram, replies addressed from a completion, and what a UD QP refuses.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <cstring>
#include <vector>

#include <infiniband/verbs.h>

#include "tests/verbs/face_util.h"

namespace {

constexpr uint32_t kQkey = 0x11111111;
constexpr size_t kGrh = 40;

struct Node : face::Host {
	ibv_qp *qp = nullptr;
	ibv_ah *ah = nullptr; // to the other node
	in_addr ip{};
};

class Ud : public ::testing::Test {
protected:
	ibv_device **list = nullptr;
	Node a, b;

	void SetUp() override
	{
		ASSERT_NE(list = face::TwoDevices(), nullptr);
		Open(a, list[0]);
		Open(b, list[1]);
	}

	void TearDown() override
	{
		for (Node *s : { &a, &b }) {
			if (s->ah)
				EXPECT_EQ(ibv_destroy_ah(s->ah), 0);
			if (s->qp)
				EXPECT_EQ(ibv_destroy_qp(s->qp), 0);
			s->Close();
		}
		ibv_free_device_list(list);
	}

	static void Open(Node &s, ibv_device *dev)
	{
		s.Open(dev, IBV_ACCESS_LOCAL_WRITE);
		ibv_qp_init_attr init{};
		init.send_cq = s.cq;
		init.recv_cq = s.cq;
		init.cap = { 32, 32, 2, 2, 64 };
		init.qp_type = IBV_QPT_UD;
		s.qp = ibv_create_qp(s.pd, &init);
		ASSERT_NE(s.qp, nullptr) << strerror(errno);
		memcpy(&s.ip.s_addr, s.gid.raw + 12, 4);
	}

	static int ToRts(Node &s, uint32_t qkey = kQkey)
	{
		ibv_qp_attr attr{};
		attr.qp_state = IBV_QPS_INIT;
		attr.port_num = 1;
		attr.qkey = qkey;
		if (int ret = ibv_modify_qp(s.qp, &attr, IBV_QP_STATE |
					    IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					    IBV_QP_QKEY))
			return ret;
		attr.qp_state = IBV_QPS_RTR;
		if (int ret = ibv_modify_qp(s.qp, &attr, IBV_QP_STATE))
			return ret;
		attr.qp_state = IBV_QPS_RTS;
		attr.sq_psn = 0x123;
		return ibv_modify_qp(s.qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}

	static ibv_ah *AhTo(Node &from, const ibv_gid &gid)
	{
		ibv_ah_attr ah{};
		ah.is_global = 1;
		ah.grh.dgid = gid;
		ah.grh.sgid_index = 1;
		ah.grh.hop_limit = 1;
		ah.port_num = 1;
		return ibv_create_ah(from.pd, &ah);
	}

	void Ready()
	{
		ASSERT_EQ(ToRts(a), 0);
		ASSERT_EQ(ToRts(b), 0);
		a.ah = AhTo(a, b.gid);
		ASSERT_NE(a.ah, nullptr) << strerror(errno);
		b.ah = AhTo(b, a.gid);
		ASSERT_NE(b.ah, nullptr) << strerror(errno);
	}

	static bool Poll(Node &s, ibv_wc *wc, int turns = 100000)
	{
		return face::Poll(s.cq, wc, turns);
	}

	static int PostRecv(Node &s, size_t off, uint32_t len, uint64_t id)
	{
		return face::PostRecv(s.qp, s, off, len, id);
	}

	static int Send(Node &s, ibv_ah *ah, uint32_t qpn, size_t off,
			uint32_t len, uint64_t id, uint32_t qkey = kQkey,
			ibv_wr_opcode op = IBV_WR_SEND)
	{
		ibv_sge sge = { (uintptr_t)&s.mem[off], len, s.mr->lkey };
		ibv_send_wr wr{}, *bad = nullptr;
		wr.wr_id = id;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = op;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.imm_data = htonl(0xabcd);
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = qpn;
		wr.wr.ud.remote_qkey = qkey;
		return ibv_post_send(s.qp, &wr, &bad);
	}

	static void Fill(Node &s, size_t off, size_t len, uint8_t seed)
	{
		for (size_t i = 0; i < len; i++)
			s.mem[off + i] = (uint8_t)(seed + i * 7);
	}
};

TEST_F(Ud, ADatagramLandsAfterAGrhThatNamesItsSender)
{
	Ready();
	memset(b.mem.data(), 0xee, 4096);
	ASSERT_EQ(PostRecv(b, 0, 2048 + kGrh, 7), 0);
	Fill(a, 0, 2048, 3);
	ASSERT_EQ(Send(a, a.ah, b.qp->qp_num, 0, 2048, 9,
		       kQkey, IBV_WR_SEND_WITH_IMM), 0);

	ibv_wc wc{};
	ASSERT_TRUE(Poll(a, &wc));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	EXPECT_EQ(wc.wr_id, 9u);
	EXPECT_EQ(wc.opcode, IBV_WC_SEND);
	ASSERT_TRUE(Poll(b, &wc));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
	EXPECT_EQ(wc.wr_id, 7u);
	EXPECT_EQ(wc.opcode, IBV_WC_RECV);
	EXPECT_EQ(wc.byte_len, 2048 + kGrh);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_GRH);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(ntohl(wc.imm_data), 0xabcdu);
	EXPECT_EQ(wc.src_qp, a.qp->qp_num);
	EXPECT_EQ(wc.qp_num, b.qp->qp_num);
	EXPECT_EQ(memcmp(&b.mem[kGrh], &a.mem[0], 2048), 0);

	// RoCEv2 over IPv4: 20 bytes of zeros, then the packet's IPv4 header.
	const uint8_t *grh = b.mem.data();
	const uint8_t *ip = grh + 20;
	for (int i = 0; i < 20; i++)
		EXPECT_EQ(grh[i], 0) << "byte " << i;
	EXPECT_EQ(ip[0], 0x45);
	EXPECT_EQ(ip[9], 17) << "UDP";
	// IPv4, UDP, BTH, DETH, ImmDt, payload, ICRC.
	EXPECT_EQ(ip[2] << 8 | ip[3], 20 + 8 + 12 + 8 + 4 + 2048 + 4);
	EXPECT_EQ(memcmp(ip + 12, &a.ip.s_addr, 4), 0) << "source";
	EXPECT_EQ(memcmp(ip + 16, &b.ip.s_addr, 4), 0) << "destination";
	uint32_t sum = 0;
	for (int i = 0; i < 20; i += 2)
		sum += ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	EXPECT_EQ(sum, 0xffffu) << "the header checksum";
	EXPECT_EQ(b.mem[kGrh + 2048], 0xee) << "nothing past the datagram";
}

TEST_F(Ud, AReplyGoesToWhereTheCompletionSaysTheDatagramCameFrom)
{
	Ready();
	ASSERT_EQ(PostRecv(b, 0, 256 + kGrh, 1), 0);
	ASSERT_EQ(PostRecv(a, 0, 256 + kGrh, 2), 0);
	Fill(a, 4096, 100, 1);
	ASSERT_EQ(Send(a, a.ah, b.qp->qp_num, 4096, 100, 3), 0);
	ibv_wc wc{};
	ASSERT_TRUE(Poll(a, &wc));
	ASSERT_TRUE(Poll(b, &wc));
	ASSERT_EQ(wc.status, IBV_WC_SUCCESS);

	ibv_ah *reply = ibv_create_ah_from_wc(b.pd, &wc,
					      (ibv_grh *)b.mem.data(), 1);
	ASSERT_NE(reply, nullptr) << strerror(errno);
	Fill(b, 4096, 50, 9);
	ASSERT_EQ(Send(b, reply, wc.src_qp, 4096, 50, 4), 0);
	ASSERT_TRUE(Poll(b, &wc));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	ASSERT_TRUE(Poll(a, &wc));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	EXPECT_EQ(wc.byte_len, 50 + kGrh);
	EXPECT_EQ(memcmp(&a.mem[kGrh], &b.mem[4096], 50), 0);
	EXPECT_EQ(ibv_destroy_ah(reply), 0);

	ibv_ah_attr attr{};
	ibv_wc nogrh = wc;
	nogrh.wc_flags &= ~IBV_WC_GRH;
	EXPECT_EQ(ibv_init_ah_from_wc(a.ctx, 1, &nogrh,
				      (ibv_grh *)a.mem.data(), &attr), EINVAL)
		<< "a RoCE completion without a GRH names nobody";
}

TEST_F(Ud, ADatagramWithAnotherQkeyIsDropped)
{
	Ready();
	ASSERT_EQ(PostRecv(b, 0, 64 + kGrh, 1), 0);
	ASSERT_EQ(Send(a, a.ah, b.qp->qp_num, 0, 64, 2, 0x2222), 0);
	ibv_wc wc{};
	ASSERT_TRUE(Poll(a, &wc));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << "the sender cannot tell";
	EXPECT_FALSE(Poll(b, &wc, 2000)) << "received with a wrong Q_Key";

	// A Q_Key with its high bit set stands for the sender QP's own.
	ASSERT_EQ(Send(a, a.ah, b.qp->qp_num, 0, 64, 3, 0x80000000u), 0);
	ASSERT_TRUE(Poll(a, &wc));
	ASSERT_TRUE(Poll(b, &wc));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	EXPECT_EQ(wc.wr_id, 1u);
}

TEST_F(Ud, AReceiveTooSmallFailsAloneAndTheQpGoesOn)
{
	Ready();
	ASSERT_EQ(PostRecv(b, 0, 100 + kGrh, 1), 0);
	ASSERT_EQ(PostRecv(b, 1024, 1000 + kGrh, 2), 0);
	ASSERT_EQ(Send(a, a.ah, b.qp->qp_num, 0, 500, 3), 0);
	ASSERT_EQ(Send(a, a.ah, b.qp->qp_num, 0, 500, 4), 0);
	ibv_wc wc{};
	ASSERT_TRUE(Poll(b, &wc));
	EXPECT_EQ(wc.wr_id, 1u);
	EXPECT_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
	ASSERT_TRUE(Poll(b, &wc));
	EXPECT_EQ(wc.wr_id, 2u);
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
	EXPECT_EQ(wc.byte_len, 500 + kGrh);

	ibv_qp_attr attr{};
	ibv_qp_init_attr init{};
	ASSERT_EQ(ibv_query_qp(b.qp, &attr, IBV_QP_STATE, &init), 0);
	EXPECT_EQ(attr.qp_state, IBV_QPS_RTS);
	EXPECT_EQ(init.qp_type, IBV_QPT_UD);
	EXPECT_EQ(attr.qkey, kQkey);
}

TEST_F(Ud, TheGrhMaySpanScatterEntries)
{
	Ready();
	ibv_sge sge[2] = { { (uintptr_t)&b.mem[0], 24, b.mr->lkey },
			   { (uintptr_t)&b.mem[1000], 16 + 64, b.mr->lkey } };
	ibv_recv_wr wr{}, *bad = nullptr;
	wr.wr_id = 5;
	wr.sg_list = sge;
	wr.num_sge = 2;
	ASSERT_EQ(ibv_post_recv(b.qp, &wr, &bad), 0);
	Fill(a, 0, 64, 4);
	ASSERT_EQ(Send(a, a.ah, b.qp->qp_num, 0, 64, 6), 0);
	ibv_wc wc{};
	ASSERT_TRUE(Poll(b, &wc));
	ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	EXPECT_EQ(wc.byte_len, 64 + kGrh);
	EXPECT_EQ(b.mem[20], 0x45) << "the IPv4 header starts 20 bytes in";
	EXPECT_EQ(memcmp(&b.mem[1000 + 16], &a.mem[0], 64), 0);
	EXPECT_EQ(memcmp(&b.mem[1000 + 16 - 4], &b.ip.s_addr, 4), 0)
		<< "the destination address ends the GRH";

	// The same list holds 64 bytes of payload and no more.
	ASSERT_EQ(ibv_post_recv(b.qp, &wr, &bad), 0);
	ASSERT_EQ(Send(a, a.ah, b.qp->qp_num, 0, 65, 7), 0);
	ASSERT_TRUE(Poll(b, &wc));
	EXPECT_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
}

TEST_F(Ud, TransitionsTakeTheAttributesOfADatagramQp)
{
	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	EXPECT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT), EINVAL) << "no Q_Key";
	attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	EXPECT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | IBV_QP_QKEY |
				IBV_QP_ACCESS_FLAGS), EINVAL)
		<< "access flags are for connected QPs";
	ASSERT_EQ(ToRts(a), 0);
	attr.qp_state = IBV_QPS_RTS;
	attr.qkey = 0x5555;
	EXPECT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_QKEY), 0);
	ASSERT_EQ(ibv_query_qp(a.qp, &attr, IBV_QP_QKEY, nullptr), 0);
	EXPECT_EQ(attr.qkey, 0x5555u);
}

TEST_F(Ud, WhatADatagramCannotBeIsRefusedAtThePost)
{
	Ready();
	EXPECT_EQ(Send(a, a.ah, b.qp->qp_num, 0, 64, 1, kQkey,
		       IBV_WR_RDMA_WRITE), EINVAL);
	EXPECT_EQ(Send(a, nullptr, b.qp->qp_num, 0, 64, 1), EINVAL)
		<< "no address handle";
	ibv_port_attr port{};
	ASSERT_EQ(ibv_query_port(a.ctx, 1, &port), 0);
	uint32_t mtu = 128u << port.active_mtu;
	EXPECT_EQ(Send(a, a.ah, b.qp->qp_num, 0, mtu + 1, 1), EINVAL)
		<< "more than one packet (" << mtu << " bytes)";
	EXPECT_EQ(Send(a, a.ah, b.qp->qp_num, 0, mtu, 1), 0);
	ibv_wc wc{};
	ASSERT_TRUE(Poll(a, &wc));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
}

TEST_F(Ud, AnAddressHandleNeedsAGidOfTheFabric)
{
	ibv_ah_attr ah{};
	ah.port_num = 1;
	ah.dlid = 5;
	errno = 0;
	EXPECT_EQ(ibv_create_ah(a.pd, &ah), nullptr) << "RoCE needs a GRH";
	EXPECT_EQ(errno, EINVAL);
	ah.is_global = 1;
	ah.grh.dgid.raw[10] = ah.grh.dgid.raw[11] = 0xff;
	ah.grh.dgid.raw[12] = 192;
	ah.grh.dgid.raw[13] = 0;
	ah.grh.dgid.raw[14] = 2;
	ah.grh.dgid.raw[15] = 1;
	errno = 0;
	EXPECT_EQ(ibv_create_ah(a.pd, &ah), nullptr);
	EXPECT_EQ(errno, EHOSTUNREACH) << "192.0.2.1 is no host of the fabric";
	ibv_ah *ok = AhTo(a, b.gid);
	ASSERT_NE(ok, nullptr);
	EXPECT_EQ(ibv_dealloc_pd(a.pd), EBUSY) << "the handle holds the PD";
	EXPECT_EQ(ibv_destroy_ah(ok), 0);
}

} // namespace
