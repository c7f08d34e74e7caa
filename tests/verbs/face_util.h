// What the verbs face's tests share: the two simulated NICs a test runs
// with (FABSIM_VERBS_DEVICES=2), a host's context, PD, CQ and registered
// buffer, a connected QP brought to RTS, and a bounded poll.
#ifndef FABSIM_TESTS_VERBS_FACE_UTIL_H
#define FABSIM_TESTS_VERBS_FACE_UTIL_H

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <vector>

#include <infiniband/verbs.h>

namespace face {

// A device opened with what a test posts from: a PD, one CQ for both
// directions, and a buffer registered with `access`.
struct Host {
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	std::vector<uint8_t> mem;
	ibv_mr *mr = nullptr;
	ibv_gid gid{}; // the IPv4-mapped one (index 1)

	void Open(ibv_device *dev, int access, size_t bytes = 1 << 16)
	{
		ctx = ibv_open_device(dev);
		ASSERT_NE(ctx, nullptr);
		pd = ibv_alloc_pd(ctx);
		cq = ibv_create_cq(ctx, 64, nullptr, nullptr, 0);
		mem.assign(bytes, 0);
		mr = pd ? ibv_reg_mr(pd, mem.data(), mem.size(), access) : nullptr;
		ASSERT_TRUE(pd && cq && mr);
		ASSERT_EQ(ibv_query_gid(ctx, 1, 1, &gid), 0);
	}

	// After the test's QPs, SRQs and address handles are gone.
	void Close()
	{
		if (mr) {
			EXPECT_EQ(ibv_dereg_mr(mr), 0);
		}
		if (cq) {
			EXPECT_EQ(ibv_destroy_cq(cq), 0);
		}
		if (pd) {
			EXPECT_EQ(ibv_dealloc_pd(pd), 0);
		}
		if (ctx) {
			EXPECT_EQ(ibv_close_device(ctx), 0);
		}
	}

	uint64_t Addr(size_t off) const { return (uintptr_t)&mem[off]; }
};

// The device list, which must hold the two NICs the test runs with.
inline ibv_device **TwoDevices()
{
	int n = 0;
	ibv_device **list = ibv_get_device_list(&n);

	EXPECT_NE(list, nullptr);
	EXPECT_EQ(n, 2) << "the test runs with FABSIM_VERBS_DEVICES=2";
	return n == 2 ? list : nullptr;
}

// An RC or UC QP through INIT, RTR and RTS towards the peer QP on the host
// with `gid`, with the attributes Debian's tools give (the RC ones where
// RC takes them). false when a transition failed.
inline bool Connect(ibv_qp *qp, const ibv_gid &gid, uint32_t peer_qpn,
		    int access = IBV_ACCESS_REMOTE_WRITE)
{
	bool rc = qp->qp_type == IBV_QPT_RC;
	ibv_qp_attr attr{};

	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qp_access_flags = access;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return false;
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = IBV_MTU_1024;
	attr.dest_qp_num = peer_qpn;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 1;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.grh.dgid = gid;
	attr.ah_attr.grh.sgid_index = 1;
	attr.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  (rc ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0)))
		return false;
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 1;
	return !ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN |
			      (rc ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC
				  : 0));
}

// A completion, or false after `turns` empty polls (virtual time moves
// with each).
inline bool Poll(ibv_cq *cq, ibv_wc *wc, int turns = 200000)
{
	for (int i = 0; i < turns; i++) {
		int n = ibv_poll_cq(cq, 1, wc);
		if (n == 1)
			return true;
		EXPECT_EQ(n, 0);
	}
	return false;
}

// One receive of [off, off + len) of h's buffer.
inline int PostRecv(ibv_qp *qp, Host &h, size_t off, uint32_t len,
		    uint64_t id)
{
	ibv_sge sge = { h.Addr(off), len, h.mr->lkey };
	ibv_recv_wr wr{}, *bad = nullptr;

	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_recv(qp, &wr, &bad);
}

// One signaled send of [addr, addr + len), registered with lkey.
inline int PostSend(ibv_qp *qp, void *addr, uint32_t len, uint32_t lkey,
		    uint64_t id)
{
	ibv_sge sge = { (uintptr_t)addr, len, lkey };
	ibv_send_wr wr{}, *bad = nullptr;

	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	return ibv_post_send(qp, &wr, &bad);
}

// An IPv4 address and port, for rdma_cm.
inline sockaddr_in Addr(const char *ip, uint16_t port)
{
	sockaddr_in a{};

	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

} // namespace face

#endif
