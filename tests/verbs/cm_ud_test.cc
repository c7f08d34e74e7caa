// rdma_cm's UD port space (RDMA_PS_UDP) on the librdmacm face: a "connect"
// is a service ID resolution (SIDR_REQ, SIDR_REP on the simulated wire),
// whose answer names the remote QP, its Q_Key and how to reach it; the
// datagrams then go there. One process, two devices.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <cstring>

#include <rdma/rdma_cma.h>

#include "tests/verbs/face_util.h"

namespace {

using face::Addr;

struct Side {
	rdma_event_channel *ch = nullptr;
	rdma_cm_id *id = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	ibv_mr *mr = nullptr;
	char buf[512] = {};
};

class CmUd : public ::testing::Test {
protected:
	Side srv, cli;
	rdma_cm_id *listener = nullptr;

	void SetUp() override
	{
		srv.ch = rdma_create_event_channel();
		cli.ch = rdma_create_event_channel();
		ASSERT_TRUE(srv.ch && cli.ch);
		ASSERT_EQ(rdma_create_id(cli.ch, &cli.id, nullptr, RDMA_PS_UDP), 0);
		EXPECT_EQ(cli.id->qp_type, IBV_QPT_UD);
	}

	void TearDown() override
	{
		for (Side *s : { &srv, &cli }) {
			if (s->id) {
				if (s->id->qp)
					rdma_destroy_qp(s->id);
				EXPECT_EQ(rdma_destroy_id(s->id), 0);
			}
			if (s->mr)
				ibv_dereg_mr(s->mr);
			if (s->cq)
				ibv_destroy_cq(s->cq);
			if (s->pd)
				ibv_dealloc_pd(s->pd);
		}
		if (listener)
			EXPECT_EQ(rdma_destroy_id(listener), 0);
		rdma_destroy_event_channel(srv.ch);
		rdma_destroy_event_channel(cli.ch);
	}

	static rdma_cm_event *Expect(rdma_event_channel *ch,
				     rdma_cm_event_type type)
	{
		rdma_cm_event *ev = nullptr;
		EXPECT_EQ(rdma_get_cm_event(ch, &ev), 0) << strerror(errno);
		if (ev)
			EXPECT_EQ(ev->event, type) << rdma_event_str(ev->event)
						   << " status " << ev->status;
		return ev;
	}

	static void MakeQp(Side &s)
	{
		s.pd = ibv_alloc_pd(s.id->verbs);
		s.cq = ibv_create_cq(s.id->verbs, 16, nullptr, nullptr, 0);
		s.mr = ibv_reg_mr(s.pd, s.buf, sizeof(s.buf), IBV_ACCESS_LOCAL_WRITE);
		ASSERT_TRUE(s.pd && s.cq && s.mr);
		ibv_qp_init_attr init{};
		init.send_cq = s.cq;
		init.recv_cq = s.cq;
		init.cap = { 8, 8, 1, 1, 0 };
		init.qp_type = IBV_QPT_UD;
		ASSERT_EQ(rdma_create_qp(s.id, s.pd, &init), 0) << strerror(errno);
		EXPECT_EQ(s.id->qp->state, IBV_QPS_RTS) << "nothing to connect";
	}

	void Listen()
	{
		ASSERT_EQ(rdma_create_id(srv.ch, &listener, nullptr, RDMA_PS_UDP), 0);
		sockaddr_in a = Addr("10.0.0.2", 7600);
		ASSERT_EQ(rdma_bind_addr(listener, (sockaddr *)&a), 0);
		ASSERT_EQ(rdma_listen(listener, 8), 0);
	}

	void Resolve()
	{
		sockaddr_in src = Addr("10.0.0.1", 0), dst = Addr("10.0.0.2", 7600);
		ASSERT_EQ(rdma_resolve_addr(cli.id, (sockaddr *)&src,
					    (sockaddr *)&dst, 2000), 0);
		rdma_ack_cm_event(Expect(cli.ch, RDMA_CM_EVENT_ADDR_RESOLVED));
		ASSERT_EQ(rdma_resolve_route(cli.id, 2000), 0);
		rdma_ack_cm_event(Expect(cli.ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
		MakeQp(cli);
	}

	// The client's SIDR_REQ reaches the listener: the request's id.
	rdma_cm_id *Request(const char *data)
	{
		rdma_conn_param p{};
		p.private_data = data;
		p.private_data_len = (uint8_t)(strlen(data) + 1);
		EXPECT_EQ(rdma_connect(cli.id, &p), 0);
		rdma_cm_event *ev = Expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST);
		if (!ev)
			return nullptr;
		EXPECT_STREQ((const char *)ev->param.ud.private_data, data);
		rdma_cm_id *id = ev->id;
		rdma_ack_cm_event(ev);
		return id;
	}
};

TEST_F(CmUd, TheAnswerNamesTheQpAndItsQkeyAndDatagramsGoThere)
{
	Listen();
	Resolve();
	srv.id = Request("who");
	ASSERT_NE(srv.id, nullptr);
	MakeQp(srv);
	rdma_conn_param p{};
	p.private_data = "me";
	p.private_data_len = 3;
	ASSERT_EQ(rdma_accept(srv.id, &p), 0);
	rdma_cm_event *ev = Expect(cli.ch, RDMA_CM_EVENT_ESTABLISHED);
	ASSERT_NE(ev, nullptr);
	EXPECT_EQ(ev->param.ud.qp_num, srv.id->qp->qp_num);
	EXPECT_EQ(ev->param.ud.qkey, (uint32_t)RDMA_UDP_QKEY);
	EXPECT_STREQ((const char *)ev->param.ud.private_data, "me");
	ibv_ah *ah = ibv_create_ah(cli.pd, &ev->param.ud.ah_attr);
	ASSERT_NE(ah, nullptr) << strerror(errno);
	uint32_t qpn = ev->param.ud.qp_num, qkey = ev->param.ud.qkey;
	rdma_ack_cm_event(ev);

	ibv_sge rsge = { (uintptr_t)srv.buf, 40 + 64, srv.mr->lkey };
	ibv_recv_wr rwr{}, *rbad = nullptr;
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	ASSERT_EQ(ibv_post_recv(srv.id->qp, &rwr, &rbad), 0);
	strcpy(cli.buf, "datagram");
	ibv_sge sge = { (uintptr_t)cli.buf, 9, cli.mr->lkey };
	ibv_send_wr wr{}, *bad = nullptr;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	ASSERT_EQ(ibv_post_send(cli.id->qp, &wr, &bad), 0);
	ibv_wc wc{};
	int n = 0;
	for (int i = 0; i < 100000 && n == 0; i++)
		n = ibv_poll_cq(srv.cq, 1, &wc);
	ASSERT_EQ(n, 1);
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	EXPECT_STREQ(srv.buf + 40, "datagram");
	EXPECT_EQ(ibv_destroy_ah(ah), 0);
	EXPECT_EQ(rdma_disconnect(cli.id), -1) << "datagrams are not connected";
	EXPECT_EQ(errno, EINVAL);
}

TEST_F(CmUd, NoSuchServiceAndARejectAreUnreachable)
{
	Resolve();
	ASSERT_EQ(rdma_connect(cli.id, nullptr), 0);
	rdma_cm_event *ev = Expect(cli.ch, RDMA_CM_EVENT_UNREACHABLE);
	ASSERT_NE(ev, nullptr);
	EXPECT_EQ(ev->status, 1) << "SIDR_REP: service ID not supported";
	rdma_ack_cm_event(ev);

	Listen();
	rdma_destroy_qp(cli.id);
	rdma_destroy_id(cli.id);
	ASSERT_EQ(rdma_create_id(cli.ch, &cli.id, nullptr, RDMA_PS_UDP), 0);
	ibv_dereg_mr(cli.mr);
	ibv_destroy_cq(cli.cq);
	ibv_dealloc_pd(cli.pd);
	cli.mr = nullptr, cli.cq = nullptr, cli.pd = nullptr;
	Resolve();
	srv.id = Request("please");
	ASSERT_NE(srv.id, nullptr);
	ASSERT_EQ(rdma_reject(srv.id, nullptr, 0), 0);
	ev = Expect(cli.ch, RDMA_CM_EVENT_UNREACHABLE);
	ASSERT_NE(ev, nullptr);
	EXPECT_EQ(ev->status, 2) << "SIDR_REP: rejected";
	rdma_ack_cm_event(ev);
}

// A request destroyed unanswered is rejected (as the kernel's CM does),
// not left for the requester to time out.
TEST_F(CmUd, ARequestDestroyedUnansweredIsRejected)
{
	Listen();
	Resolve();
	rdma_cm_id *req = Request("please");
	ASSERT_NE(req, nullptr);
	ASSERT_EQ(rdma_destroy_id(req), 0);
	rdma_cm_event *ev = Expect(cli.ch, RDMA_CM_EVENT_UNREACHABLE);
	ASSERT_NE(ev, nullptr);
	EXPECT_EQ(ev->status, 2) << "SIDR_REP: rejected";
	rdma_ack_cm_event(ev);
}

// Port spaces keep their own ports, as the kernel's rdma_cm does: a TCP
// listener and a UDP one share a port, each request reaching its own.
TEST_F(CmUd, APortIsTakenOnlyWithinItsPortSpace)
{
	Listen();
	rdma_event_channel *tch = rdma_create_event_channel();
	ASSERT_NE(tch, nullptr);
	rdma_cm_id *tcp = nullptr, *udp2 = nullptr;
	ASSERT_EQ(rdma_create_id(tch, &tcp, nullptr, RDMA_PS_TCP), 0);
	ASSERT_EQ(rdma_create_id(srv.ch, &udp2, nullptr, RDMA_PS_UDP), 0);
	sockaddr_in a = Addr("10.0.0.2", 7600);
	ASSERT_EQ(rdma_bind_addr(tcp, (sockaddr *)&a), 0) << strerror(errno);
	ASSERT_EQ(rdma_listen(tcp, 8), 0);
	EXPECT_EQ(rdma_bind_addr(udp2, (sockaddr *)&a), -1);
	EXPECT_EQ(errno, EADDRINUSE);

	// A resolution (UDP) reaches the UDP listener.
	Resolve();
	rdma_conn_param p{};
	ASSERT_EQ(rdma_connect(cli.id, &p), 0);
	rdma_cm_event *ev = Expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	ASSERT_NE(ev, nullptr);
	EXPECT_EQ(ev->listen_id, listener);
	srv.id = ev->id;
	rdma_ack_cm_event(ev);
	ASSERT_EQ(rdma_reject(srv.id, nullptr, 0), 0);
	rdma_ack_cm_event(Expect(cli.ch, RDMA_CM_EVENT_UNREACHABLE));

	// A connection (TCP) reaches the TCP listener.
	rdma_event_channel *cch = rdma_create_event_channel();
	rdma_cm_id *conn = nullptr;
	ASSERT_EQ(rdma_create_id(cch, &conn, nullptr, RDMA_PS_TCP), 0);
	sockaddr_in src = Addr("10.0.0.1", 0);
	ASSERT_EQ(rdma_resolve_addr(conn, (sockaddr *)&src, (sockaddr *)&a,
				    2000), 0);
	rdma_ack_cm_event(Expect(cch, RDMA_CM_EVENT_ADDR_RESOLVED));
	ASSERT_EQ(rdma_resolve_route(conn, 2000), 0);
	rdma_ack_cm_event(Expect(cch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	ibv_pd *pd = ibv_alloc_pd(conn->verbs);
	ibv_qp_init_attr init{};
	init.cap = { 1, 1, 1, 1, 0 };
	init.qp_type = IBV_QPT_RC;
	ASSERT_EQ(rdma_create_qp(conn, pd, &init), 0) << strerror(errno);
	ASSERT_EQ(rdma_connect(conn, &p), 0);
	ev = Expect(tch, RDMA_CM_EVENT_CONNECT_REQUEST);
	ASSERT_NE(ev, nullptr);
	EXPECT_EQ(ev->listen_id, tcp);
	rdma_cm_id *req = ev->id;
	rdma_ack_cm_event(ev);
	ASSERT_EQ(rdma_reject(req, nullptr, 0), 0);
	rdma_ack_cm_event(Expect(cch, RDMA_CM_EVENT_REJECTED));
	EXPECT_EQ(rdma_destroy_id(req), 0);

	rdma_destroy_qp(conn);
	EXPECT_EQ(rdma_destroy_id(conn), 0);
	ibv_dealloc_pd(pd);
	EXPECT_EQ(rdma_destroy_id(udp2), 0);
	EXPECT_EQ(rdma_destroy_id(tcp), 0);
	rdma_destroy_event_channel(cch);
	rdma_destroy_event_channel(tch);
}

} // namespace
