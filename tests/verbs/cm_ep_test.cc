// rdma_cm's endpoint API (rdma_verbs.h) on the librdmacm face, as Debian's
// rdma_server and rdma_client use it: synchronous ids made by
// rdma_create_ep, a request taken with rdma_get_request, QPs on the
// device's default PD with CQs rdma_cm makes, messages with the inline
// rdma_post_* and rdma_get_*_comp helpers. Two threads, two devices.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

namespace {

rdma_addrinfo *Info(const char *node, const char *port, bool passive)
{
	rdma_addrinfo hints{}, *res = nullptr;
	hints.ai_port_space = RDMA_PS_TCP;
	if (passive)
		hints.ai_flags = RAI_PASSIVE;
	EXPECT_EQ(rdma_getaddrinfo(node, port, &hints, &res), 0);
	return res;
}

ibv_qp_init_attr Attr()
{
	ibv_qp_init_attr attr{};
	attr.cap = { 4, 4, 1, 1, 16 };
	attr.sq_sig_all = 1;
	return attr;
}

TEST(CmEndpoint, ServerAndClientExchangeMessagesSynchronously)
{
	rdma_addrinfo *lres = Info("10.0.0.1", "7480", true);
	ASSERT_NE(lres, nullptr);
	ibv_qp_init_attr lattr = Attr();
	rdma_cm_id *listen = nullptr;
	ASSERT_EQ(rdma_create_ep(&listen, lres, nullptr, &lattr), 0)
		<< strerror(errno);
	rdma_freeaddrinfo(lres);
	ASSERT_EQ(rdma_listen(listen, 1), 0);

	std::string server_got, server_err;
	std::thread server([&] {
		rdma_cm_id *id = nullptr;
		char buf[16] = {};
		ibv_wc wc;
		if (rdma_get_request(listen, &id)) {
			server_err = std::string("rdma_get_request: ") + strerror(errno);
			return;
		}
		if (!id->qp || !id->recv_cq || !id->send_cq_channel) {
			server_err = "the request has no QP or CQs";
			return;
		}
		ibv_mr *mr = rdma_reg_msgs(id, buf, sizeof(buf));
		if (!mr || rdma_post_recv(id, nullptr, buf, sizeof(buf), mr) ||
		    rdma_accept(id, nullptr) ||
		    rdma_get_recv_comp(id, &wc) != 1 || wc.status) {
			server_err = std::string("receive: ") + strerror(errno);
			return;
		}
		server_got.assign(buf, wc.byte_len);
		memcpy(buf, "pong", 5);
		if (rdma_post_send(id, nullptr, buf, 5, mr, 0) ||
		    rdma_get_send_comp(id, &wc) != 1 || wc.status) {
			server_err = std::string("send: ") + strerror(errno);
			return;
		}
		// Whichever side disconnects first, both calls return once the
		// connection is down.
		if (rdma_disconnect(id))
			server_err = std::string("disconnect: ") + strerror(errno);
		rdma_dereg_mr(mr);
		rdma_destroy_ep(id);
	});

	rdma_addrinfo *res = Info("10.0.0.1", "7480", false);
	ASSERT_NE(res, nullptr);
	ibv_qp_init_attr attr = Attr();
	rdma_cm_id *id = nullptr;
	ASSERT_EQ(rdma_create_ep(&id, res, nullptr, &attr), 0) << strerror(errno);
	rdma_freeaddrinfo(res);
	EXPECT_EQ(attr.qp_type, IBV_QPT_RC) << "the address information's kind";
	char buf[16] = "ping";
	ibv_mr *mr = rdma_reg_msgs(id, buf, sizeof(buf));
	ASSERT_NE(mr, nullptr);
	ASSERT_EQ(rdma_post_recv(id, nullptr, buf, sizeof(buf), mr), 0);
	ASSERT_EQ(rdma_connect(id, nullptr), 0) << strerror(errno);
	EXPECT_EQ(id->event->event, RDMA_CM_EVENT_ESTABLISHED);
	ibv_wc wc;
	ASSERT_EQ(rdma_post_send(id, nullptr, buf, 5, mr, 0), 0);
	ASSERT_EQ(rdma_get_send_comp(id, &wc), 1);
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	ASSERT_EQ(rdma_get_recv_comp(id, &wc), 1);
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	EXPECT_STREQ(buf, "pong");
	EXPECT_EQ(rdma_disconnect(id), 0);
	EXPECT_EQ(id->event->event, RDMA_CM_EVENT_DISCONNECTED);
	server.join();
	EXPECT_EQ(server_err, "");
	EXPECT_EQ(server_got, std::string("ping", 5));
	rdma_dereg_mr(mr);
	rdma_destroy_ep(id);
	rdma_destroy_ep(listen);
}

TEST(CmEndpoint, AddressInformationCarriesTheKindAskedFor)
{
	rdma_addrinfo hints{}, *res = nullptr;
	hints.ai_port_space = RDMA_PS_UDP;
	ASSERT_EQ(rdma_getaddrinfo("10.0.0.2", "7490", &hints, &res), 0);
	EXPECT_EQ(res->ai_port_space, RDMA_PS_UDP);
	EXPECT_EQ(res->ai_qp_type, IBV_QPT_UD);
	ibv_qp_init_attr attr = Attr();
	rdma_cm_id *id = nullptr;
	ASSERT_EQ(rdma_create_ep(&id, res, nullptr, &attr), 0) << strerror(errno);
	EXPECT_EQ(id->ps, RDMA_PS_UDP);
	EXPECT_EQ(id->qp->qp_type, IBV_QPT_UD);
	rdma_destroy_ep(id);
	rdma_freeaddrinfo(res);
}

TEST(CmEndpoint, GetRequestNeedsASynchronousListener)
{
	rdma_event_channel *ch = rdma_create_event_channel();
	rdma_cm_id *listen = nullptr, *id = nullptr;
	ASSERT_EQ(rdma_create_id(ch, &listen, nullptr, RDMA_PS_TCP), 0);
	errno = 0;
	EXPECT_EQ(rdma_get_request(listen, &id), -1);
	EXPECT_EQ(errno, EINVAL);
	rdma_destroy_id(listen);
	rdma_destroy_event_channel(ch);
}

} // namespace
