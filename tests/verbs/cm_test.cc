// The librdmacm face: connection management through rdma_cm's API, with IB
// CM MADs on the simulated wire, in one process with two devices.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <rdma/rdma_cma.h>

#include "tests/verbs/face_util.h"

namespace {

using face::Addr;

struct Queues {
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	ibv_mr *mr = nullptr;
	char buf[256] = {};
};

class Cm : public ::testing::Test {
protected:
	rdma_event_channel *sch = nullptr, *cch = nullptr;
	rdma_cm_id *listener = nullptr, *client = nullptr, *server = nullptr;
	Queues sq, cq;

	void SetUp() override
	{
		sch = rdma_create_event_channel();
		cch = rdma_create_event_channel();
		ASSERT_NE(sch, nullptr);
		ASSERT_NE(cch, nullptr);
	}

	void TearDown() override
	{
		for (rdma_cm_id *id : { server, client, listener }) {
			if (!id)
				continue;
			if (id->qp)
				rdma_destroy_qp(id);
			EXPECT_EQ(rdma_destroy_id(id), 0);
		}
		for (Queues *q : { &sq, &cq }) {
			if (q->mr)
				ibv_dereg_mr(q->mr);
			if (q->cq)
				ibv_destroy_cq(q->cq);
			if (q->pd)
				ibv_dealloc_pd(q->pd);
		}
		rdma_destroy_event_channel(sch);
		rdma_destroy_event_channel(cch);
	}

	// Takes the next event of a channel and checks its type.
	static rdma_cm_event *Expect(rdma_event_channel *ch,
				     rdma_cm_event_type type)
	{
		rdma_cm_event *ev = nullptr;
		EXPECT_EQ(rdma_get_cm_event(ch, &ev), 0) << strerror(errno);
		if (!ev)
			return nullptr;
		EXPECT_EQ(ev->event, type) << rdma_event_str(ev->event)
					   << " status " << ev->status;
		return ev;
	}

	static void MakeQp(rdma_cm_id *id, Queues &q)
	{
		q.pd = ibv_alloc_pd(id->verbs);
		ASSERT_NE(q.pd, nullptr);
		q.cq = ibv_create_cq(id->verbs, 16, nullptr, nullptr, 0);
		ASSERT_NE(q.cq, nullptr);
		q.mr = ibv_reg_mr(q.pd, q.buf, sizeof(q.buf),
				  IBV_ACCESS_LOCAL_WRITE);
		ASSERT_NE(q.mr, nullptr);
		ibv_qp_init_attr init{};
		init.send_cq = q.cq;
		init.recv_cq = q.cq;
		init.cap = { 8, 8, 1, 1, 0 };
		init.qp_type = IBV_QPT_RC;
		ASSERT_EQ(rdma_create_qp(id, q.pd, &init), 0) << strerror(errno);
		EXPECT_EQ(id->qp->state, IBV_QPS_INIT);
	}

	void Listen(uint16_t port = 7471)
	{
		ASSERT_EQ(rdma_create_id(sch, &listener, this, RDMA_PS_TCP), 0);
		sockaddr_in a = Addr("10.0.0.2", port);
		ASSERT_EQ(rdma_bind_addr(listener, (sockaddr *)&a), 0);
		ASSERT_EQ(rdma_listen(listener, 8), 0);
	}

	// The client side, from the first device (10.0.0.1), up to a
	// resolved route to ip:port.
	void Resolve(uint16_t port = 7471, const char *ip = "10.0.0.2")
	{
		ASSERT_EQ(rdma_create_id(cch, &client, nullptr, RDMA_PS_TCP), 0);
		sockaddr_in src = Addr("10.0.0.1", 0);
		sockaddr_in dst = Addr(ip, port);
		ASSERT_EQ(rdma_resolve_addr(client, (sockaddr *)&src,
					    (sockaddr *)&dst, 2000),
			  0);
		rdma_ack_cm_event(Expect(cch, RDMA_CM_EVENT_ADDR_RESOLVED));
		ASSERT_NE(client->verbs, nullptr);
		ASSERT_EQ(rdma_resolve_route(client, 2000), 0);
		rdma_ack_cm_event(Expect(cch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	}

	// The client on the first device asks the listener for a connection
	// (its QP rdma_cm's); returns the server's new id, its request event
	// taken (null if none came).
	rdma_cm_id *Request()
	{
		Listen();
		Resolve();
		MakeQp(client, cq);
		EXPECT_EQ(rdma_connect(client, nullptr), 0);
		rdma_cm_event *ev = Expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
		if (!ev)
			return nullptr;
		rdma_cm_id *id = ev->id;
		rdma_ack_cm_event(ev);
		return id;
	}

	// The server (its id taken from the request) accepts with `a`;
	// returns the client's ESTABLISHED event, the server's taken.
	rdma_cm_event *AcceptWith(rdma_conn_param *a)
	{
		MakeQp(server, sq);
		EXPECT_EQ(rdma_accept(server, a), 0);
		rdma_cm_event *ev = Expect(cch, RDMA_CM_EVENT_ESTABLISHED);
		rdma_ack_cm_event(Expect(sch, RDMA_CM_EVENT_ESTABLISHED));
		return ev;
	}

	void Connect(const char *req_data = "req", const char *rep_data = "rep")
	{
		Listen();
		Resolve();
		MakeQp(client, cq);
		rdma_conn_param p{};
		p.private_data = req_data;
		p.private_data_len = (uint8_t)(strlen(req_data) + 1);
		ASSERT_EQ(rdma_connect(client, &p), 0);
		rdma_cm_event *ev = Expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
		ASSERT_NE(ev, nullptr);
		EXPECT_EQ(ev->listen_id, listener);
		EXPECT_EQ(ev->id->context, this); // the listener's
		EXPECT_STREQ((const char *)ev->param.conn.private_data, req_data);
		server = ev->id;
		rdma_ack_cm_event(ev);
		MakeQp(server, sq);
		p.private_data = rep_data;
		p.private_data_len = (uint8_t)(strlen(rep_data) + 1);
		ASSERT_EQ(rdma_accept(server, &p), 0);
		ev = Expect(cch, RDMA_CM_EVENT_ESTABLISHED);
		ASSERT_NE(ev, nullptr);
		EXPECT_STREQ((const char *)ev->param.conn.private_data, rep_data);
		rdma_ack_cm_event(ev);
		rdma_ack_cm_event(Expect(sch, RDMA_CM_EVENT_ESTABLISHED));
	}
};

TEST_F(Cm, DevicesAreTheVerbsFacesContexts)
{
	int n = 0;
	ibv_context **list = rdma_get_devices(&n);
	ASSERT_NE(list, nullptr);
	EXPECT_EQ(n, 2);
	EXPECT_STREQ(ibv_get_device_name(list[0]->device), "fabsim0");
	EXPECT_EQ(list[2], nullptr);
	rdma_free_devices(list);
}

TEST_F(Cm, BindingChecksAddressesAndPorts)
{
	rdma_cm_id *a, *b;
	ASSERT_EQ(rdma_create_id(sch, &a, nullptr, RDMA_PS_TCP), 0);
	ASSERT_EQ(rdma_create_id(sch, &b, nullptr, RDMA_PS_TCP), 0);
	sockaddr_in x = Addr("192.168.77.1", 1000); // not a simulated NIC
	EXPECT_EQ(rdma_bind_addr(a, (sockaddr *)&x), -1);
	EXPECT_EQ(errno, EADDRNOTAVAIL);
	x = Addr("10.0.0.1", 1000);
	ASSERT_EQ(rdma_bind_addr(a, (sockaddr *)&x), 0);
	EXPECT_NE(a->verbs, nullptr);
	EXPECT_EQ(rdma_bind_addr(b, (sockaddr *)&x), -1);
	EXPECT_EQ(errno, EADDRINUSE);
	x = Addr("0.0.0.0", 0); // any address, a port of the library's choice
	ASSERT_EQ(rdma_bind_addr(b, (sockaddr *)&x), 0);
	EXPECT_NE(rdma_get_src_port(b), 0);
	EXPECT_EQ(b->verbs, nullptr); // not tied to a device yet
	rdma_destroy_id(a);
	rdma_destroy_id(b);
}

TEST_F(Cm, ConnectAcceptCarriesPrivateDataAndConnectsTheQps)
{
	Connect("hello from the client", "welcome");
	EXPECT_EQ(client->qp->state, IBV_QPS_RTS);
	EXPECT_EQ(server->qp->state, IBV_QPS_RTS);
	sockaddr_in *peer = (sockaddr_in *)rdma_get_peer_addr(server);
	EXPECT_EQ(peer->sin_addr.s_addr, htonl(0x0a000001));
	EXPECT_EQ(peer->sin_port, rdma_get_src_port(client));

	// The QPs talk.
	ibv_sge sge = { (uintptr_t)sq.buf, 64, sq.mr->lkey };
	ibv_recv_wr rwr{}, *rbad;
	rwr.wr_id = 1;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	ASSERT_EQ(ibv_post_recv(server->qp, &rwr, &rbad), 0);
	strcpy(cq.buf, "over the connection");
	ASSERT_EQ(face::PostSend(client->qp, cq.buf, 20, cq.mr->lkey, 2), 0);
	ibv_wc wc{};
	ASSERT_TRUE(face::Poll(sq.cq, &wc, 100000));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	EXPECT_STREQ(sq.buf, "over the connection");
}

TEST_F(Cm, DisconnectReachesBothSidesAndFlushesTheQps)
{
	Connect();
	ibv_sge sge = { (uintptr_t)sq.buf, 64, sq.mr->lkey };
	ibv_recv_wr rwr{}, *rbad;
	rwr.wr_id = 9;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	ASSERT_EQ(ibv_post_recv(server->qp, &rwr, &rbad), 0);
	ASSERT_EQ(rdma_disconnect(client), 0);
	rdma_ack_cm_event(Expect(sch, RDMA_CM_EVENT_DISCONNECTED));
	rdma_ack_cm_event(Expect(cch, RDMA_CM_EVENT_DISCONNECTED));
	EXPECT_EQ(server->qp->state, IBV_QPS_ERR);
	ibv_wc wc{};
	int n = 0;
	for (int i = 0; i < 1000 && !n; i++)
		n = ibv_poll_cq(sq.cq, 1, &wc);
	ASSERT_EQ(n, 1);
	EXPECT_EQ(wc.wr_id, 9u);
	EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
}

TEST_F(Cm, RejectCarriesTheReasonAndData)
{
	rdma_cm_id *req = Request();
	ASSERT_NE(req, nullptr);
	ASSERT_EQ(rdma_reject(req, "go away", 8), 0);
	rdma_cm_event *ev = Expect(cch, RDMA_CM_EVENT_REJECTED);
	ASSERT_NE(ev, nullptr);
	EXPECT_EQ(ev->status, 28); // IB CM: consumer reject
	EXPECT_STREQ((const char *)ev->param.conn.private_data, "go away");
	rdma_ack_cm_event(ev);
	rdma_destroy_id(req);
}

// librdmacm moves the requester's QP to the error state as it hands out
// REJECTED: what was posted before rdma_connect comes back flushed.
TEST_F(Cm, ARejectedRequestersQpFlushesItsReceives)
{
	rdma_cm_id *req = Request();
	ASSERT_NE(req, nullptr);
	ibv_sge sge = { (uintptr_t)cq.buf, 64, cq.mr->lkey };
	ibv_recv_wr rwr{}, *rbad;
	rwr.wr_id = 5;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	ASSERT_EQ(ibv_post_recv(client->qp, &rwr, &rbad), 0);
	ASSERT_EQ(rdma_reject(req, nullptr, 0), 0);
	rdma_ack_cm_event(Expect(cch, RDMA_CM_EVENT_REJECTED));
	EXPECT_EQ(client->qp->state, IBV_QPS_ERR);
	ibv_wc wc{};
	int n = 0;
	for (int i = 0; i < 1000 && !n; i++)
		n = ibv_poll_cq(cq.cq, 1, &wc);
	ASSERT_EQ(n, 1);
	EXPECT_EQ(wc.wr_id, 5u);
	EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
	rdma_destroy_id(req);
}

// A REQ the client resent before the REJ reached it must not become a new
// request once the first one is rejected and its id destroyed.
TEST_F(Cm, AResentRequestOfARejectedConnectionIsRejectedAgain)
{
	rdma_cm_id *req = Request();
	ASSERT_NE(req, nullptr);
	int fl = fcntl(sch->fd, F_GETFL);
	ASSERT_EQ(fcntl(sch->fd, F_SETFL, fl | O_NONBLOCK), 0);
	// An empty read runs the next instant: the client's REQ timer, whose
	// resent REQ is now on the wire.
	rdma_cm_event *ev = nullptr;
	EXPECT_EQ(rdma_get_cm_event(sch, &ev), -1);
	ASSERT_EQ(rdma_reject(req, nullptr, 0), 0);
	ASSERT_EQ(rdma_destroy_id(req), 0);
	rdma_ack_cm_event(Expect(cch, RDMA_CM_EVENT_REJECTED));
	for (int i = 0; i < 50; i++) {
		ASSERT_EQ(rdma_get_cm_event(sch, &ev), -1)
			<< rdma_event_str(ev->event);
		EXPECT_EQ(errno, EAGAIN);
	}
}

TEST_F(Cm, ClosingAListenerRefusesWhatNobodyTook)
{
	Listen();
	Resolve();
	MakeQp(client, cq);
	ASSERT_EQ(rdma_connect(client, nullptr), 0);
	// Let the REQ arrive without taking its event.
	int fl = fcntl(cch->fd, F_GETFL);
	ASSERT_EQ(fcntl(cch->fd, F_SETFL, fl | O_NONBLOCK), 0);
	rdma_cm_event *ev = nullptr;
	for (int i = 0; i < 5; i++)
		EXPECT_EQ(rdma_get_cm_event(cch, &ev), -1);
	ASSERT_EQ(rdma_destroy_id(listener), 0);
	listener = nullptr;
	ASSERT_EQ(fcntl(cch->fd, F_SETFL, fl), 0);
	ev = Expect(cch, RDMA_CM_EVENT_REJECTED);
	ASSERT_NE(ev, nullptr);
	EXPECT_EQ(ev->status, 28);
	rdma_ack_cm_event(ev);
}

// A server that takes its time to accept — registering 16 MiB first costs
// ~2 ms of virtual time, longer than the requester's whole resend budget —
// still gets its connection: rdma_cm acknowledges the request (MRA) as it
// hands it over, and the requester waits the MRA's 68 s for the answer.
TEST_F(Cm, ASlowAcceptIsWaitedFor)
{
	server = Request();
	ASSERT_NE(server, nullptr);
	MakeQp(server, sq);
	std::vector<char> big(16 << 20);
	ibv_mr *mr = ibv_reg_mr(sq.pd, big.data(), big.size(),
				IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(mr, nullptr);
	ASSERT_EQ(rdma_accept(server, nullptr), 0);
	rdma_cm_event *ev = Expect(cch, RDMA_CM_EVENT_ESTABLISHED);
	ASSERT_NE(ev, nullptr);
	rdma_ack_cm_event(ev);
	rdma_ack_cm_event(Expect(sch, RDMA_CM_EVENT_ESTABLISHED));
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
}

// rdma_cm(7): the CM answers a request for the application; one the
// application destroys without answering is refused (as the kernel's CM
// does), not left to time out after the MRA's long wait.
TEST_F(Cm, ARequestDestroyedUnansweredIsRefused)
{
	rdma_cm_id *req = Request();
	ASSERT_NE(req, nullptr);
	ASSERT_EQ(rdma_destroy_id(req), 0);
	rdma_cm_event *ev = Expect(cch, RDMA_CM_EVENT_REJECTED);
	ASSERT_NE(ev, nullptr);
	EXPECT_EQ(ev->status, 28);
	rdma_ack_cm_event(ev);
}

// An id destroyed after rdma_accept, before the client's RTU reached it, is
// refused as the kernel's CM does: the client, established by the REP, hears
// REJECTED (consumer defined, 28) and its QP goes to the error state.
TEST_F(Cm, AnAcceptedIdDestroyedBeforeTheRtuIsRefused)
{
	rdma_cm_id *accepted = Request();
	ASSERT_NE(accepted, nullptr);
	MakeQp(accepted, sq);
	ASSERT_EQ(rdma_accept(accepted, nullptr), 0);
	// The id first: destroying a QP takes a NIC command's time, in which
	// the RTU would arrive.
	ibv_qp *qp = accepted->qp;
	ASSERT_EQ(rdma_destroy_id(accepted), 0);
	ASSERT_EQ(ibv_destroy_qp(qp), 0);
	rdma_ack_cm_event(Expect(cch, RDMA_CM_EVENT_ESTABLISHED));
	rdma_cm_event *ev = Expect(cch, RDMA_CM_EVENT_REJECTED);
	ASSERT_NE(ev, nullptr);
	EXPECT_EQ(ev->status, 28);
	rdma_ack_cm_event(ev);
	ibv_qp_attr attr{};
	ibv_qp_init_attr init{};
	ASSERT_EQ(ibv_query_qp(client->qp, &attr, IBV_QP_STATE, &init), 0);
	EXPECT_EQ(attr.qp_state, IBV_QPS_ERR);
}

// rdma_connect(3): the requester's retry_count and rnr_retry_count travel
// in the REQ; the server's QP takes them (the REQ's RNR retries are for the
// responder's sends): with 3, a send to a client that has posted no receive
// fails after its retries, where 7 would retry for ever.
TEST_F(Cm, TheRequestersRetryCountsReachTheServersQp)
{
	Listen();
	Resolve();
	MakeQp(client, cq);
	rdma_conn_param p{};
	p.retry_count = 5;
	p.rnr_retry_count = 3;
	ASSERT_EQ(rdma_connect(client, &p), 0);
	rdma_cm_event *ev = Expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	ASSERT_NE(ev, nullptr);
	EXPECT_EQ(ev->param.conn.retry_count, 5);
	EXPECT_EQ(ev->param.conn.rnr_retry_count, 3);
	server = ev->id;
	rdma_ack_cm_event(ev);
	rdma_conn_param a{};
	a.rnr_retry_count = 7;
	rdma_ack_cm_event(AcceptWith(&a));
	ibv_qp_attr attr{};
	ibv_qp_init_attr init{};
	ASSERT_EQ(ibv_query_qp(server->qp, &attr, IBV_QP_RETRY_CNT |
			       IBV_QP_RNR_RETRY, &init), 0);
	EXPECT_EQ(attr.retry_cnt, 5);
	EXPECT_EQ(attr.rnr_retry, 3);
	ASSERT_EQ(ibv_query_qp(client->qp, &attr, IBV_QP_RETRY_CNT |
			       IBV_QP_RNR_RETRY, &init), 0);
	EXPECT_EQ(attr.retry_cnt, 5);
	EXPECT_EQ(attr.rnr_retry, 7);

	ASSERT_EQ(face::PostSend(server->qp, sq.buf, 8, sq.mr->lkey, 1), 0);
	ibv_wc wc{};
	ASSERT_TRUE(face::Poll(sq.cq, &wc, 1000000));
	EXPECT_EQ(wc.status, IBV_WC_RNR_RETRY_EXC_ERR)
		<< ibv_wc_status_str(wc.status);
}

// rdma_connect(3), rdma_accept(3): the read and atomic depths may not exceed
// the device's; rdma_get_cm_event(3): each side's event gives the peer's,
// each as the other side of it ("initiator_depth ... matches the responder
// resources specified by the remote node"), and qp_num "the remote QP
// number"; each QP takes its own side's depths.
TEST_F(Cm, ReadDepthsAndQpNumbersReachThePeer)
{
	Listen();
	Resolve();
	MakeQp(client, cq);
	ibv_device_attr dev{};
	ASSERT_EQ(ibv_query_device(client->verbs, &dev), 0);
	rdma_conn_param p{};
	p.responder_resources = (uint8_t)(dev.max_qp_rd_atom + 1);
	p.initiator_depth = 2;
	EXPECT_EQ(rdma_connect(client, &p), -1);
	EXPECT_EQ(errno, EINVAL);
	p.responder_resources = 4;
	ASSERT_EQ(rdma_connect(client, &p), 0);
	rdma_cm_event *ev = Expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	ASSERT_NE(ev, nullptr);
	EXPECT_EQ(ev->param.conn.responder_resources, 2);
	EXPECT_EQ(ev->param.conn.initiator_depth, 4);
	EXPECT_EQ(ev->param.conn.qp_num, client->qp->qp_num);
	server = ev->id;
	rdma_ack_cm_event(ev);
	rdma_conn_param a{};
	a.responder_resources = 3;
	a.initiator_depth = 1;
	ev = AcceptWith(&a);
	ASSERT_NE(ev, nullptr);
	EXPECT_EQ(ev->param.conn.responder_resources, 1);
	EXPECT_EQ(ev->param.conn.initiator_depth, 3);
	EXPECT_EQ(ev->param.conn.qp_num, server->qp->qp_num);
	rdma_ack_cm_event(ev);
	ibv_qp_attr attr{};
	ibv_qp_init_attr init{};
	ASSERT_EQ(ibv_query_qp(client->qp, &attr, IBV_QP_MAX_QP_RD_ATOMIC |
			       IBV_QP_MAX_DEST_RD_ATOMIC, &init), 0);
	EXPECT_EQ(attr.max_rd_atomic, 2);
	EXPECT_EQ(attr.max_dest_rd_atomic, 4);
	ASSERT_EQ(ibv_query_qp(server->qp, &attr, IBV_QP_MAX_QP_RD_ATOMIC |
			       IBV_QP_MAX_DEST_RD_ATOMIC, &init), 0);
	EXPECT_EQ(attr.max_rd_atomic, 1);
	EXPECT_EQ(attr.max_dest_rd_atomic, 3);
}

TEST_F(Cm, NobodyListeningIsARejectForAnInvalidService)
{
	Listen(7471);
	Resolve(7472);
	MakeQp(client, cq);
	ASSERT_EQ(rdma_connect(client, nullptr), 0);
	rdma_cm_event *ev = Expect(cch, RDMA_CM_EVENT_REJECTED);
	ASSERT_NE(ev, nullptr);
	EXPECT_EQ(ev->status, 8);
	rdma_ack_cm_event(ev);
}

TEST_F(Cm, AHostWithoutANicIsUnreachableAfterRetries)
{
	// 10.0.0.9 is a host of the topology; no device of ours sits there.
	Resolve(7471, "10.0.0.9");
	MakeQp(client, cq);
	ASSERT_EQ(rdma_connect(client, nullptr), 0);
	rdma_cm_event *ev = Expect(cch, RDMA_CM_EVENT_UNREACHABLE);
	ASSERT_NE(ev, nullptr);
	EXPECT_EQ(ev->status, -ETIMEDOUT);
	rdma_ack_cm_event(ev);
}

// ucmatose -b: the source address a program asks rdma_getaddrinfo for comes
// back with the destination, and binding to it when resolving checks it
// (it was dropped: any -b was taken, even an address of no NIC).
TEST_F(Cm, GetaddrinfoKeepsTheSourceAskedFor)
{
	sockaddr_in src = Addr("192.168.77.5", 0); // not a simulated NIC
	rdma_addrinfo hints = {}, *res = nullptr;
	hints.ai_src_addr = (sockaddr *)&src;
	hints.ai_src_len = sizeof(src);
	hints.ai_port_space = RDMA_PS_TCP;
	ASSERT_EQ(rdma_getaddrinfo("10.0.0.1", "7471", &hints, &res), 0);
	ASSERT_NE(res->ai_src_addr, nullptr);
	ASSERT_EQ(res->ai_src_len, sizeof(src));
	EXPECT_EQ(((sockaddr_in *)res->ai_src_addr)->sin_addr.s_addr,
		  src.sin_addr.s_addr);
	ASSERT_NE(res->ai_dst_addr, nullptr);
	ASSERT_EQ(rdma_create_id(cch, &client, nullptr, RDMA_PS_TCP), 0);
	EXPECT_EQ(rdma_resolve_addr(client, res->ai_src_addr,
				    res->ai_dst_addr, 2000), -1);
	EXPECT_EQ(errno, EADDRNOTAVAIL);
	rdma_freeaddrinfo(res);
}

// An address no route reaches: the kernel fails the call itself.
TEST_F(Cm, AnAddressOutsideTheFabricIsUnreachable)
{
	ASSERT_EQ(rdma_create_id(cch, &client, nullptr, RDMA_PS_TCP), 0);
	sockaddr_in dst = Addr("192.0.2.1", 7471);
	errno = 0;
	EXPECT_EQ(rdma_resolve_addr(client, nullptr, (sockaddr *)&dst, 2000),
		  -1);
	EXPECT_EQ(errno, ENETUNREACH);
	EXPECT_EQ(rdma_resolve_route(client, 2000), -1);
}

// An address on the fabric's network that no host has: as the kernel's
// neighbour resolution, it is asked for until the timeout ends, then an
// address error with -ETIMEDOUT.
TEST_F(Cm, ANeighbourNobodyAnswersForTimesOut)
{
	ASSERT_EQ(rdma_create_id(cch, &client, nullptr, RDMA_PS_TCP), 0);
	sockaddr_in dst = Addr("10.0.0.77", 7471);
	ASSERT_EQ(rdma_resolve_addr(client, nullptr, (sockaddr *)&dst, 500), 0);
	rdma_cm_event *ev = Expect(cch, RDMA_CM_EVENT_ADDR_ERROR);
	ASSERT_NE(ev, nullptr);
	EXPECT_EQ(ev->status, -ETIMEDOUT);
	rdma_ack_cm_event(ev);
	EXPECT_EQ(rdma_resolve_route(client, 2000), -1);
}

// The wildcard address is this host, as the kernel resolves it.
TEST_F(Cm, TheWildcardAddressIsThisHost)
{
	ASSERT_EQ(rdma_create_id(cch, &client, nullptr, RDMA_PS_TCP), 0);
	sockaddr_in dst = Addr("0.0.0.0", 7471);
	ASSERT_EQ(rdma_resolve_addr(client, nullptr, (sockaddr *)&dst, 2000), 0);
	rdma_ack_cm_event(Expect(cch, RDMA_CM_EVENT_ADDR_RESOLVED));
}

// A port space the kernel does not have is EINVAL.
TEST_F(Cm, AnUnknownPortSpaceIsInvalid)
{
	errno = 0;
	EXPECT_EQ(rdma_create_id(cch, &client, nullptr, (rdma_port_space)0x999),
		  -1);
	EXPECT_EQ(errno, EINVAL);
	client = nullptr;
}

TEST_F(Cm, ALocalDestinationIsReachedOverItsOwnDevice)
{
	ASSERT_EQ(rdma_create_id(cch, &client, nullptr, RDMA_PS_TCP), 0);
	sockaddr_in dst = Addr("10.0.0.2", 7471);
	ASSERT_EQ(rdma_resolve_addr(client, nullptr, (sockaddr *)&dst, 2000), 0);
	rdma_ack_cm_event(Expect(cch, RDMA_CM_EVENT_ADDR_RESOLVED));
	// Loopback, as a route to one of the host's own addresses is.
	EXPECT_STREQ(ibv_get_device_name(client->verbs->device), "fabsim1");
	sockaddr_in *src = (sockaddr_in *)rdma_get_local_addr(client);
	EXPECT_EQ(src->sin_addr.s_addr, dst.sin_addr.s_addr);
}

TEST_F(Cm, LoopbackAddressReachesAListenerOfTheLocalNic)
{
	ASSERT_EQ(rdma_create_id(sch, &listener, nullptr, RDMA_PS_TCP), 0);
	sockaddr_in a = Addr("10.0.0.1", 7480);
	ASSERT_EQ(rdma_bind_addr(listener, (sockaddr *)&a), 0);
	ASSERT_EQ(rdma_listen(listener, 8), 0);
	ASSERT_EQ(rdma_create_id(cch, &client, nullptr, RDMA_PS_TCP), 0);
	sockaddr_in src = Addr("10.0.0.1", 0), dst = Addr("127.0.0.1", 7480);
	ASSERT_EQ(rdma_resolve_addr(client, (sockaddr *)&src, (sockaddr *)&dst,
				    2000),
		  0);
	rdma_ack_cm_event(Expect(cch, RDMA_CM_EVENT_ADDR_RESOLVED));
	ASSERT_EQ(rdma_resolve_route(client, 2000), 0);
	rdma_ack_cm_event(Expect(cch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	MakeQp(client, cq);
	ASSERT_EQ(rdma_connect(client, nullptr), 0);
	rdma_cm_event *ev = Expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	ASSERT_NE(ev, nullptr);
	server = ev->id;
	rdma_ack_cm_event(ev);
	EXPECT_STREQ(ibv_get_device_name(server->verbs->device), "fabsim0");
	MakeQp(server, sq);
	ASSERT_EQ(rdma_accept(server, nullptr), 0);
	rdma_ack_cm_event(Expect(cch, RDMA_CM_EVENT_ESTABLISHED));
	rdma_ack_cm_event(Expect(sch, RDMA_CM_EVENT_ESTABLISHED));
	// The route still names the address the application gave.
	sockaddr_in *peer = (sockaddr_in *)rdma_get_peer_addr(client);
	EXPECT_EQ(peer->sin_addr.s_addr, htonl(0x7f000001));
}

TEST_F(Cm, MigratedIdsTakeTheirEventsAlong)
{
	rdma_event_channel *other = rdma_create_event_channel();
	ASSERT_NE(other, nullptr);
	ASSERT_EQ(rdma_create_id(cch, &client, nullptr, RDMA_PS_TCP), 0);
	sockaddr_in dst = Addr("10.0.0.2", 7471);
	ASSERT_EQ(rdma_resolve_addr(client, nullptr, (sockaddr *)&dst, 2000), 0);
	ASSERT_EQ(rdma_migrate_id(client, other), 0);
	EXPECT_EQ(client->channel, other);
	rdma_ack_cm_event(Expect(other, RDMA_CM_EVENT_ADDR_RESOLVED));
	// Nothing was left behind.
	int fl = fcntl(cch->fd, F_GETFL);
	ASSERT_EQ(fcntl(cch->fd, F_SETFL, fl | O_NONBLOCK), 0);
	rdma_cm_event *ev = nullptr;
	EXPECT_EQ(rdma_get_cm_event(cch, &ev), -1);
	EXPECT_EQ(errno, EAGAIN);
	rdma_destroy_id(client);
	client = nullptr;
	rdma_destroy_event_channel(other);
}

// An id made with no channel is synchronous (rdma_cma(7)): each call waits
// for its event and keeps it in id->event, and fails with its status.
TEST_F(Cm, SynchronousIdsWaitForTheirEvents)
{
	rdma_cm_id *id = nullptr;
	ASSERT_EQ(rdma_create_id(nullptr, &id, nullptr, RDMA_PS_TCP), 0);
	ASSERT_NE(id->channel, nullptr);
	sockaddr_in dst = Addr("10.0.0.2", 7471);
	ASSERT_EQ(rdma_resolve_addr(id, nullptr, (sockaddr *)&dst, 2000), 0);
	ASSERT_NE(id->event, nullptr);
	EXPECT_EQ(id->event->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	ASSERT_EQ(rdma_resolve_route(id, 2000), 0);
	EXPECT_EQ(id->event->event, RDMA_CM_EVENT_ROUTE_RESOLVED);
	int fl = fcntl(id->channel->fd, F_GETFL);
	ASSERT_EQ(fcntl(id->channel->fd, F_SETFL, fl | O_NONBLOCK), 0);
	rdma_cm_event *ev = nullptr;
	EXPECT_EQ(rdma_get_cm_event(id->channel, &ev), -1) << "taken already";
	EXPECT_EQ(errno, EAGAIN);
	ASSERT_EQ(fcntl(id->channel->fd, F_SETFL, fl), 0);

	// Nobody listens there: the connect fails as the REJ says.
	ibv_qp_init_attr attr{};
	attr.cap = { 4, 4, 1, 1, 0 };
	attr.qp_type = IBV_QPT_RC;
	ASSERT_EQ(rdma_create_qp(id, nullptr, &attr), 0) << strerror(errno);
	EXPECT_NE(id->pd, nullptr) << "the device's default PD";
	EXPECT_NE(id->send_cq, nullptr) << "CQs made for the QP";
	EXPECT_NE(id->recv_cq_channel, nullptr);
	errno = 0;
	EXPECT_EQ(rdma_connect(id, nullptr), -1);
	EXPECT_EQ(errno, ECONNREFUSED);
	EXPECT_EQ(id->event->event, RDMA_CM_EVENT_REJECTED);
	rdma_destroy_qp(id);
	EXPECT_EQ(id->send_cq, nullptr);
	EXPECT_EQ(rdma_destroy_id(id), 0);
}

// Moved onto an application's channel, a synchronous id is no longer one:
// its kept event is let go and its next events are the channel's.
TEST_F(Cm, ASynchronousIdMovedOntoAChannelStopsWaiting)
{
	rdma_cm_id *id = nullptr;
	ASSERT_EQ(rdma_create_id(nullptr, &id, nullptr, RDMA_PS_TCP), 0);
	sockaddr_in dst = Addr("10.0.0.2", 7471);
	ASSERT_EQ(rdma_resolve_addr(id, nullptr, (sockaddr *)&dst, 2000), 0);
	ASSERT_NE(id->event, nullptr);
	ASSERT_EQ(rdma_migrate_id(id, cch), 0);
	EXPECT_EQ(id->event, nullptr);
	ASSERT_EQ(rdma_resolve_route(id, 2000), 0);
	rdma_ack_cm_event(Expect(cch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	EXPECT_EQ(rdma_destroy_id(id), 0);
}

// RDMA_PS_IB has service IDs of its own (0x013f above the port).
TEST_F(Cm, TheIbPortSpaceConnectsToo)
{
	ASSERT_EQ(rdma_create_id(sch, &listener, this, RDMA_PS_IB), 0);
	sockaddr_in a = Addr("10.0.0.2", 7472);
	ASSERT_EQ(rdma_bind_addr(listener, (sockaddr *)&a), 0);
	ASSERT_EQ(rdma_listen(listener, 8), 0);
	ASSERT_EQ(rdma_create_id(cch, &client, nullptr, RDMA_PS_IB), 0);
	sockaddr_in src = Addr("10.0.0.1", 0);
	ASSERT_EQ(rdma_resolve_addr(client, (sockaddr *)&src, (sockaddr *)&a,
				    2000), 0);
	rdma_ack_cm_event(Expect(cch, RDMA_CM_EVENT_ADDR_RESOLVED));
	ASSERT_EQ(rdma_resolve_route(client, 2000), 0);
	rdma_ack_cm_event(Expect(cch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	MakeQp(client, cq);
	ASSERT_EQ(rdma_connect(client, nullptr), 0);
	rdma_cm_event *ev = Expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	ASSERT_NE(ev, nullptr);
	server = ev->id;
	EXPECT_EQ(server->ps, RDMA_PS_IB);
	rdma_ack_cm_event(ev);
}

// A thread blocked in rdma_get_cm_event on a channel another thread
// destroys stays blocked, as in read() on a descriptor closed under it;
// the channel's memory stays for it (AddressSanitizer watches).
TEST_F(Cm, DestroyingAChannelAThreadWaitsOnLeavesItWaiting)
{
	rdma_event_channel *ch = rdma_create_event_channel();
	ASSERT_NE(ch, nullptr);
	static std::atomic<bool> returned{false};
	std::thread t([ch] {
		rdma_cm_event *ev = nullptr;
		if (rdma_get_cm_event(ch, &ev) == 0)
			rdma_ack_cm_event(ev);
		returned = true;
	});
	std::this_thread::sleep_for(std::chrono::milliseconds(50));
	rdma_destroy_event_channel(ch);
	// The waiter looks at its channel again at each turn of its wait.
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	EXPECT_FALSE(returned.load());
	t.detach();
}

} // namespace
