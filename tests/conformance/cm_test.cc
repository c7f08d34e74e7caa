// Connection management of connected endpoints (fi_cm(3), fi_eq(3),
// fi_endpoint(3)): the FI_CONNREQ event, fi_accept and fi_reject, implicit
// enabling, receives posted before the connection, connection data, fi_getpeer,
// fi_shutdown and closing, a refused connect, several connections to one
// listener; and the event queue itself (fi_eq_read/readerr/write/sread).
// Only built over FI_EP_MSG; every test skips elsewhere.
#include <chrono>
#include <cstring>
#include <string>

#include "harness.h"

namespace conf {
namespace {

// node 1 (the connecting side, "c") and node 0 (the listening side, "l").
struct Conn {
	fid_ep* l = nullptr;
	fid_ep* c = nullptr;
	Eq* lq = nullptr;
	Eq* cq = nullptr;
	EqEvent req;       // FI_CONNREQ at node 0's listener
	EqEvent conn_l;    // FI_CONNECTED for l
	EqEvent conn_c;    // FI_CONNECTED for c
};

class CmTest : public RdmTest {
      protected:
	void SetUp() override
	{
		CONF_SKIP_UNLESS_MSG("connection management is for connected "
				     "endpoints (FI_EP_MSG)");
		Options o;
		o.endpoints = false;  // the nodes' listeners, domains, CQs
		Open(o);
	}
	// A new, unenabled endpoint of node i bound to a new EQ of its own
	// and to the node's CQs.
	fid_ep* Active(int i, Eq** eq, const std::string& what)
	{
		*eq = w.NewEq(what + "'s EQ");
		return *eq ? w.NewEp(i, *eq, nullptr, what) : nullptr;
	}
	// Node 1's new endpoint (*c, its EQ *eq) asks node 0's listener for
	// a connection, which node 0 refuses (fi_reject).
	void RequestRejected(Eq** eq, fid_ep** c)
	{
		Node& L = w.node(0);
		*c = Active(1, eq, "node 1's endpoint");
		ASSERT_NE(*c, nullptr);
		CONF_OK(fi_enable(*c));
		CONF_OK(fi_connect(*c, L.listen_name.data(), nullptr, 0));
		ASSERT_TRUE(w.WaitEvent(L.listen_eq, &k_.req, &L.pep->fid));
		ASSERT_EQ(k_.req.event, (uint32_t)FI_CONNREQ)
			<< w.DescribeEvent(k_.req);
		ASSERT_NE(k_.req.info, nullptr);
		CONF_OK(fi_reject(L.pep, k_.req.info->handle, nullptr, 0));
	}
	// Waits for the next event for ep on eq and checks it is `event`.
	void ExpectEvent(Eq* eq, fid_ep* ep, uint32_t event, EqEvent* out)
	{
		::testing::AssertionResult ok = w.WaitEvent(eq, out, &ep->fid);
		ASSERT_TRUE(ok) << "waiting for " << EventName(event) << ": "
				<< ok.message();
		EXPECT_FALSE(out->error) << w.DescribeEvent(*out);
		EXPECT_EQ(out->event, event) << w.DescribeEvent(*out);
	}
	// Node 1 connects to node 0's listener; node 0 accepts. enable: call
	// fi_enable first (else fi_connect/fi_accept enable implicitly).
	// cdata/adata: connection data of fi_connect / fi_accept.
	void Establish(Conn* k, bool enable = true, const std::string& cdata = "",
		       const std::string& adata = "")
	{
		Node& L = w.node(0);
		k->c = Active(1, &k->cq, "node 1's endpoint");
		ASSERT_NE(k->c, nullptr);
		if (enable)
			CONF_OK(fi_enable(k->c));
		CONF_OK(fi_connect(k->c, L.listen_name.data(),
				   cdata.empty() ? nullptr : cdata.data(),
				   cdata.size()));
		::testing::AssertionResult ok =
			w.WaitEvent(L.listen_eq, &k->req, &L.pep->fid);
		ASSERT_TRUE(ok) << "no FI_CONNREQ: " << ok.message();
		ASSERT_FALSE(k->req.error) << w.DescribeEvent(k->req);
		ASSERT_EQ(k->req.event, (uint32_t)FI_CONNREQ)
			<< w.DescribeEvent(k->req);
		ASSERT_NE(k->req.info, nullptr) << "FI_CONNREQ without fi_info";
		k->lq = w.NewEq("node 0's accepting EQ");
		ASSERT_NE(k->lq, nullptr);
		k->l = w.NewEp(0, k->lq, k->req.info, "node 0's endpoint");
		ASSERT_NE(k->l, nullptr);
		if (enable)
			CONF_OK(fi_enable(k->l));
		CONF_OK(fi_accept(k->l, adata.empty() ? nullptr : adata.data(),
				  adata.size()));
		ExpectEvent(k->cq, k->c, FI_CONNECTED, &k->conn_c);
		ExpectEvent(k->lq, k->l, FI_CONNECTED, &k->conn_l);
	}
	void TearDown() override
	{
		for (EqEvent* e : {&k_.req, &k_.conn_l, &k_.conn_c})
			if (e->info)
				fi_freeinfo(e->info);
		k_ = Conn();
		RdmTest::TearDown();
	}
	// One 32 B message from `from` (node fn) to `to` (node tn).
	void Exchange(fid_ep* from, int fn, fid_ep* to, int tn, uint8_t seed)
	{
		Buf* s = w.NewBuf(fn, 32);
		Buf* r = w.NewBuf(tn, 32);
		s->Fill(seed);
		fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
		CONF_POST(fi_recv(to, r->p, 32, r->desc, FI_ADDR_UNSPEC, rc));
		CONF_POST(fi_send(from, s->p, 32, s->desc, FI_ADDR_UNSPEC, sc));
		w.Expect(w.node(fn).tx, sc);
		w.Expect(w.node(tn).rx, rc);
		EXPECT_TRUE(r->Check(seed, 32));
	}
	std::string Name(fid* f)
	{
		std::vector<uint8_t> a(256);
		size_t len = a.size();
		int r = fi_getname(f, a.data(), &len);
		EXPECT_EQ(r, 0) << "fi_getname: " << Err(r);
		a.resize(r ? 0 : len);
		return std::string(a.begin(), a.end());
	}
	Conn k_;  // the test's connection (its fi_infos freed at the end)
};

// fi_eq(3): "The fid is the passive endpoint", info describes the request
// and "The application is responsible for freeing this structure"; an
// endpoint made from it and accepted is connected (FI_CONNECTED on both
// sides, each event naming the active endpoint).
TEST_F(CmTest, ConnreqNamesTheListenerAndCarriesAnInfo)
{
	ASSERT_NO_FATAL_FAILURE(Establish(&k_));
	fi_info* i = k_.req.info;
	EXPECT_NE(i->handle, nullptr)
		<< "the fi_info of a FI_CONNREQ references the request";
	EXPECT_EQ(i->ep_attr->type, FI_EP_MSG);
	EXPECT_EQ(k_.conn_c.fid, &k_.c->fid);
	EXPECT_EQ(k_.conn_l.fid, &k_.l->fid) << "fi_cm(3): \"The fid of the "
						"FI_CONNECTED event will be that "
						"of the endpoint passed to "
						"fi_accept\"";
	Exchange(k_.c, 1, k_.l, 0, 1);
	Exchange(k_.l, 0, k_.c, 1, 2);
}

// fi_endpoint(3): "The fi_connect and fi_accept calls will also transition
// an endpoint into the enabled state, if it is not already active."
TEST_F(CmTest, ConnectAndAcceptEnableImplicitly)
{
	CONF_SKIP_IF_DEVIATION("cm.implicit_enable");
	ASSERT_NO_FATAL_FAILURE(Establish(&k_, /*enable=*/false));
	Exchange(k_.c, 1, k_.l, 0, 3);
	Exchange(k_.l, 0, k_.c, 1, 4);
}

// fi_msg(3): "For connected endpoints, receive buffers may be posted prior
// to connect or accept being called on the endpoint. This ensures that
// buffers are available to receive incoming data immediately after the
// connection has been established."
TEST_F(CmTest, ReceivesPostedBeforeConnectAndAccept)
{
	Node& L = w.node(0);
	Eq *cq = nullptr, *lq = nullptr;
	fid_ep* c = Active(1, &cq, "node 1's endpoint");
	ASSERT_NE(c, nullptr);
	CONF_OK(fi_enable(c));
	Buf* rc_buf = w.NewBuf(1, 32);
	Buf* rl_buf = w.NewBuf(0, 32);
	fi_context2 *rc = w.Ctx(), *rl = w.Ctx();
	CONF_POST(fi_recv(c, rc_buf->p, 32, rc_buf->desc, FI_ADDR_UNSPEC, rc));
	CONF_OK(fi_connect(c, L.listen_name.data(), nullptr, 0));
	ASSERT_TRUE(w.WaitEvent(L.listen_eq, &k_.req, &L.pep->fid));
	ASSERT_EQ(k_.req.event, (uint32_t)FI_CONNREQ) << w.DescribeEvent(k_.req);
	lq = w.NewEq("node 0's accepting EQ");
	fid_ep* l = w.NewEp(0, lq, k_.req.info, "node 0's endpoint");
	ASSERT_NE(l, nullptr);
	CONF_OK(fi_enable(l));
	CONF_POST(fi_recv(l, rl_buf->p, 32, rl_buf->desc, FI_ADDR_UNSPEC, rl));
	CONF_OK(fi_accept(l, nullptr, 0));
	ExpectEvent(cq, c, FI_CONNECTED, &k_.conn_c);
	ExpectEvent(lq, l, FI_CONNECTED, &k_.conn_l);
	// Both send at once, right after FI_CONNECTED.
	Buf* sc_buf = w.NewBuf(1, 32);
	Buf* sl_buf = w.NewBuf(0, 32);
	sc_buf->Fill(5);
	sl_buf->Fill(6);
	CONF_POST(fi_send(c, sc_buf->p, 32, sc_buf->desc, FI_ADDR_UNSPEC,
			  w.Ctx()));
	CONF_POST(fi_send(l, sl_buf->p, 32, sl_buf->desc, FI_ADDR_UNSPEC,
			  w.Ctx()));
	w.Expect(w.node(0).rx, rl);
	w.Expect(w.node(1).rx, rc);
	EXPECT_TRUE(rl_buf->Check(5, 32));
	EXPECT_TRUE(rc_buf->Check(6, 32));
	ASSERT_TRUE(w.WaitFor(w.node(0).tx, 1));
	ASSERT_TRUE(w.WaitFor(w.node(1).tx, 1));
}

// fi_cm(3): fi_getpeer returns the peer's address once connected; a too
// small buffer gets -FI_ETOOSMALL and the size needed.
TEST_F(CmTest, GetpeerReturnsThePeersName)
{
	ASSERT_NO_FATAL_FAILURE(Establish(&k_));
	std::string name_l = Name(&k_.l->fid), name_c = Name(&k_.c->fid);
	ASSERT_FALSE(name_l.empty() || name_c.empty());
	std::vector<uint8_t> a(256);
	size_t len = a.size();
	CONF_OK(fi_getpeer(k_.c, a.data(), &len));
	EXPECT_EQ(std::string(a.begin(), a.begin() + len), name_l)
		<< "fi_getpeer at the connecting side is not the accepting "
		   "endpoint's fi_getname";
	len = a.size();
	CONF_OK(fi_getpeer(k_.l, a.data(), &len));
	EXPECT_EQ(std::string(a.begin(), a.begin() + len), name_c)
		<< "fi_getpeer at the accepting side is not the connecting "
		   "endpoint's fi_getname";
	size_t need = len;
	len = 1;
	EXPECT_EQ(fi_getpeer(k_.l, a.data(), &len), -FI_ETOOSMALL);
	EXPECT_EQ(len, need) << "fi_cm(3): addrlen is set to the size needed";
}

// fi_cm(3) NOTES: param of fi_connect and fi_accept "will be sent as part of
// the connection request or response"; it arrives beyond the
// fi_eq_cm_entry of FI_CONNREQ and of the connecting side's FI_CONNECTED
// (fi_eq(3): "the returned length may be larger than that specified by
// the connecting peer"), limited by FI_OPT_CM_DATA_SIZE.
TEST_F(CmTest, ConnectionDataTravelsWithRequestAndAcceptance)
{
	Eq* probe_eq = nullptr;
	fid_ep* probe = Active(1, &probe_eq, "node 1's probe endpoint");
	ASSERT_NE(probe, nullptr);
	size_t max = 0, optlen = sizeof(max);
	CONF_OK(fi_getopt(&probe->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE,
			  &max, &optlen));
	EXPECT_EQ(w.CloseEp(probe), 0);
	if (max == 0)
		GTEST_SKIP() << "FI_OPT_CM_DATA_SIZE is 0: no connection data";
	size_t n = std::min<size_t>(max, 24);
	std::string cdata, adata;
	for (size_t i = 0; i < n; i++) {
		cdata += (char)('a' + i);
		adata += (char)('A' + i);
	}
	ASSERT_NO_FATAL_FAILURE(Establish(&k_, true, cdata, adata));
	ASSERT_GE(k_.req.data.size(), n) << w.DescribeEvent(k_.req);
	EXPECT_EQ(std::string(k_.req.data.begin(), k_.req.data.begin() + n),
		  cdata)
		<< "FI_CONNREQ does not carry fi_connect's data";
	ASSERT_GE(k_.conn_c.data.size(), n) << w.DescribeEvent(k_.conn_c);
	EXPECT_EQ(std::string(k_.conn_c.data.begin(),
			      k_.conn_c.data.begin() + n),
		  adata)
		<< "the connecting side's FI_CONNECTED does not carry "
		   "fi_accept's data";
}

// fi_endpoint(3) FI_OPT_CM_DATA_SIZE: for a passive endpoint "the size
// reflects the maximum size of the data that may be present as part of a
// connection request event".
TEST_F(CmTest, PassiveEndpointReportsCmDataSize)
{
	size_t v = 0, len = sizeof(v);
	int r = fi_getopt(&w.node(0).pep->fid, FI_OPT_ENDPOINT,
			  FI_OPT_CM_DATA_SIZE, &v, &len);
	EXPECT_EQ(r, 0) << Err(r);
	EXPECT_EQ(len, sizeof(size_t));
}

// fi_cm(3): "A rejected or failed connection request will generate an error
// event" at the connecting side; the listener keeps listening.
TEST_F(CmTest, RejectReportsAnErrorToTheConnector)
{
	Node& L = w.node(0);
	Eq* cq = nullptr;
	fid_ep* c = nullptr;
	ASSERT_NO_FATAL_FAILURE(RequestRejected(&cq, &c));
	EqEvent ev;
	::testing::AssertionResult ok = w.WaitEvent(cq, &ev, &c->fid);
	ASSERT_TRUE(ok) << "no event at the rejected side: " << ok.message();
	EXPECT_TRUE(ev.error) << "a rejected connect reported "
			      << w.DescribeEvent(ev);
	EXPECT_NE(ev.err, 0) << w.DescribeEvent(ev);
	std::printf("rejected: %s\n", w.DescribeEvent(ev).c_str());
	// The rejected request is over: nothing more comes of it (the
	// connecting endpoint called fi_connect once, fi_cm(3): "fi_connect
	// may only be called on an endpoint once in its lifetime").
	auto start = std::chrono::steady_clock::now();
	while (std::chrono::steady_clock::now() - start <
	       std::chrono::milliseconds(50)) {
		ASSERT_GE(w.PollEqs(), 0);
		w.PollAll();
	}
	ASSERT_TRUE(L.listen_eq->log.empty())
		<< "after fi_reject, the listener reported "
		<< w.DescribeEvent(L.listen_eq->log.front())
		<< " though nobody connected again (the rejected request "
		   "once more?)";
	// The listener still takes connections.
	fid_ep *l2 = nullptr, *c2 = nullptr;
	ASSERT_TRUE(w.Connect(0, 1, &l2, &c2));
	Exchange(c2, 1, l2, 0, 7);
}

// fi_endpoint(3): FI_OPT_CM_DATA_SIZE "limits the amount of data that
// applications can exchange between peer endpoints using the fi_connect,
// fi_accept, and fi_reject operations": one byte more is refused.
TEST_F(CmTest, ConnectAndRejectKeepToTheCmDataSize)
{
	CONF_SKIP_IF_DEVIATION("cm.reject_data_size");
	Node& L = w.node(0);
	size_t max = 0, optlen = sizeof(max);
	CONF_OK(fi_getopt(&L.pep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE,
			  &max, &optlen));
	std::vector<char> big(max + 1, 'x');
	Eq* cq = nullptr;
	fid_ep* c = Active(1, &cq, "node 1's endpoint");
	ASSERT_NE(c, nullptr);
	EXPECT_LT(fi_connect(c, L.listen_name.data(), big.data(), max + 1), 0);
	CONF_OK(fi_connect(c, L.listen_name.data(), nullptr, 0));
	ASSERT_TRUE(w.WaitEvent(L.listen_eq, &k_.req, &L.pep->fid));
	ASSERT_EQ(k_.req.event, (uint32_t)FI_CONNREQ) << w.DescribeEvent(k_.req);
	EXPECT_LT(fi_reject(L.pep, k_.req.info->handle, big.data(), max + 1), 0);
	CONF_OK(fi_reject(L.pep, k_.req.info->handle, big.data(), max));
}

// fi_cm(3): "fi_connect may only be called on an endpoint once in its
// lifetime" — a rejected one too (sim's sent a new request).
TEST_F(CmTest, ARejectedEndpointDoesNotConnectAgain)
{
	CONF_SKIP_IF_DEVIATION("cm.connect_once");
	Node& L = w.node(0);
	Eq* cq = nullptr;
	fid_ep* c = nullptr;
	ASSERT_NO_FATAL_FAILURE(RequestRejected(&cq, &c));
	EqEvent ev;
	ASSERT_TRUE(w.WaitEvent(cq, &ev, &c->fid));
	ASSERT_TRUE(ev.error) << w.DescribeEvent(ev);
	EXPECT_LT(fi_connect(c, L.listen_name.data(), nullptr, 0), 0);
}

// fi_cm(3) NOTES: rejection data is "available ... as additional err_data to
// fi_eq_err_entry, in the case of a rejected connection".
TEST_F(CmTest, RejectDataReachesTheConnector)
{
	CONF_SKIP_IF_DEVIATION("cm.reject_data");
	Node& L = w.node(0);
	Eq* cq = nullptr;
	fid_ep* c = Active(1, &cq, "node 1's endpoint");
	ASSERT_NE(c, nullptr);
	size_t max = 0, optlen = sizeof(max);
	CONF_OK(fi_getopt(&c->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &max,
			  &optlen));
	if (max == 0)
		GTEST_SKIP() << "FI_OPT_CM_DATA_SIZE is 0: no connection data";
	std::string why = "not now, sorry";
	why.resize(std::min(max, why.size()));
	CONF_OK(fi_enable(c));
	CONF_OK(fi_connect(c, L.listen_name.data(), nullptr, 0));
	ASSERT_TRUE(w.WaitEvent(L.listen_eq, &k_.req, &L.pep->fid));
	ASSERT_EQ(k_.req.event, (uint32_t)FI_CONNREQ) << w.DescribeEvent(k_.req);
	ASSERT_NE(k_.req.info, nullptr);
	CONF_OK(fi_reject(L.pep, k_.req.info->handle, why.data(), why.size()));
	EqEvent ev;
	ASSERT_TRUE(w.WaitEvent(cq, &ev, &c->fid));
	ASSERT_TRUE(ev.error) << w.DescribeEvent(ev);
	ASSERT_GE(ev.err_data.size(), why.size())
		<< "err_data does not hold the rejection data: "
		<< w.DescribeEvent(ev);
	EXPECT_EQ(std::string(ev.err_data.begin(),
			      ev.err_data.begin() + why.size()),
		  why);
}

// fi_cm(3): "An FI_SHUTDOWN event will be generated for an endpoint when the
// remote peer issues a disconnect using fi_shutdown"; its fid "refers to
// the active endpoint's fid_ep", and "Shutdown notification uses struct
// fi_eq_cm_entry" (fi_eq(3)): a read of that size takes it whole.
TEST_F(CmTest, ShutdownNotifiesThePeer)
{
	ASSERT_NO_FATAL_FAILURE(Establish(&k_));
	Exchange(k_.c, 1, k_.l, 0, 8);
	CONF_OK(fi_shutdown(k_.c, 0));
	EqEvent ev;
	ExpectEvent(k_.lq, k_.l, FI_SHUTDOWN, &ev);
	EXPECT_EQ(ev.bytes, (ssize_t)sizeof(fi_eq_cm_entry));
}

// fi_cm(3): "... or abruptly closes the endpoint" (the peer is reachable:
// it is in this process).
TEST_F(CmTest, ClosingAnEndpointNotifiesThePeer)
{
	ASSERT_NO_FATAL_FAILURE(Establish(&k_));
	Exchange(k_.l, 0, k_.c, 1, 9);
	EXPECT_EQ(w.CloseEp(k_.c), 0);
	k_.c = nullptr;
	EqEvent ev;
	ExpectEvent(k_.lq, k_.l, FI_SHUTDOWN, &ev);
}

// A connect to an address nobody listens on fails: at once, or as an error
// event at the connecting endpoint (fi_cm(3): "A rejected or failed
// connection request will generate an error event").
TEST_F(CmTest, ConnectWithoutListenerFails)
{
	Eq* gone_eq = w.NewEq("closed listener's EQ");
	std::vector<uint8_t> gone;
	fid_pep* pep = w.Listen(gone_eq, &gone, "a closed listener",
				w.node(0).info);
	ASSERT_NE(pep, nullptr);
	EXPECT_EQ(w.ClosePep(pep), 0);
	Eq* cq = nullptr;
	fid_ep* c = Active(1, &cq, "node 1's endpoint");
	ASSERT_NE(c, nullptr);
	CONF_OK(fi_enable(c));
	int r = fi_connect(c, gone.data(), nullptr, 0);
	if (r < 0) {
		std::printf("fi_connect refused at once: %s\n", Err(r).c_str());
		return;
	}
	EqEvent ev;
	::testing::AssertionResult ok = w.WaitEvent(cq, &ev, &c->fid);
	ASSERT_TRUE(ok) << ok.message();
	EXPECT_TRUE(ev.error) << "a connect to no listener reported "
			      << w.DescribeEvent(ev);
	EXPECT_NE(ev.err, 0);
	std::printf("refused: %s\n", w.DescribeEvent(ev).c_str());
}

// One listener, two connections from the same node: each connection has
// its own endpoints and queues; a message goes where it was sent.
TEST_F(CmTest, ConnectionsToOneListenerAreSeparate)
{
	fid_ep *l1 = nullptr, *c1 = nullptr, *l2 = nullptr, *c2 = nullptr;
	ASSERT_TRUE(w.Connect(0, 1, &l1, &c1));
	ASSERT_TRUE(w.Connect(0, 1, &l2, &c2));
	Buf* r1 = w.NewBuf(0, 16);
	Buf* r2 = w.NewBuf(0, 16);
	fi_context2 *rc1 = w.Ctx(), *rc2 = w.Ctx();
	CONF_POST(fi_recv(l1, r1->p, 16, r1->desc, FI_ADDR_UNSPEC, rc1));
	CONF_POST(fi_recv(l2, r2->p, 16, r2->desc, FI_ADDR_UNSPEC, rc2));
	Buf* s = w.NewBuf(1, 16);
	s->Fill(10);
	CONF_POST(fi_send(c2, s->p, 16, s->desc, FI_ADDR_UNSPEC, w.Ctx()));
	w.Expect(w.node(0).rx, rc2);
	EXPECT_TRUE(r2->Check(10, 16));
	w.Settle();
	EXPECT_TRUE(w.node(0).rx.log.empty())
		<< "a message on the second connection also completed "
		<< Describe(w.node(0).rx.log[0]);
	Buf* s1 = w.NewBuf(1, 16);
	s1->Fill(11);
	CONF_POST(fi_send(c1, s1->p, 16, s1->desc, FI_ADDR_UNSPEC, w.Ctx()));
	w.Expect(w.node(0).rx, rc1);
	EXPECT_TRUE(r1->Check(11, 16));
	ASSERT_TRUE(w.WaitFor(w.node(1).tx, 2));
}

TEST_F(CmTest, PassiveEndpointIdentity)
{
	int ctx;
	fid_pep* pep = nullptr;
	CONF_OK(fi_passive_ep(w.fabric, w.node(0).info, &pep, &ctx));
	EXPECT_EQ(pep->fid.fclass, (size_t)FI_CLASS_PEP);
	EXPECT_EQ(pep->fid.context, &ctx);
	EXPECT_EQ(fi_close(&pep->fid), 0);
}

// ---- The event queue ----------------------------------------------------------------

class EqTest : public CmTest {
      protected:
	fid_eq* OpenEq(fi_wait_obj wait, uint64_t flags)
	{
		fi_eq_attr attr;
		memset(&attr, 0, sizeof(attr));
		attr.wait_obj = wait;
		attr.flags = flags;
		fid_eq* eq = nullptr;
		int r = fi_eq_open(w.fabric, &attr, &eq, nullptr);
		EXPECT_EQ(r, 0) << "fi_eq_open: " << Err(r);
		if (eq)
			eqs_.push_back(eq);
		return eq;
	}
	void TearDown() override
	{
		for (fid_eq* eq : eqs_)
			EXPECT_EQ(fi_close(&eq->fid), 0);
		eqs_.clear();
		CmTest::TearDown();
	}
	std::vector<fid_eq*> eqs_;
};

// fi_eq(3) RETURN VALUES: "If no data is available to be read from the
// event queue, -FI_EAGAIN is returned."
TEST_F(EqTest, ReadOnEmptyQueueReturnsEAGAIN)
{
	fid_eq* eq = OpenEq(FI_WAIT_NONE, 0);
	ASSERT_NE(eq, nullptr);
	uint32_t event;
	fi_eq_cm_entry e;
	EXPECT_EQ(fi_eq_read(eq, &event, &e, sizeof(e), 0), -FI_EAGAIN);
	fi_eq_err_entry err;
	memset(&err, 0, sizeof(err));
	EXPECT_EQ(fi_eq_readerr(eq, &err, 0), -FI_EAGAIN);
}

// FI_WRITE: the application inserts events (fi_eq_write); FI_PEEK reads
// without consuming ("A subsequent read without the FI_PEEK flag would then
// remove the event from the EQ").
TEST_F(EqTest, WrittenEventIsPeekedThenRead)
{
	fid_eq* eq = OpenEq(FI_WAIT_NONE, FI_WRITE);
	ASSERT_NE(eq, nullptr);
	int ctx;
	fi_eq_entry in = {&eq->fid, &ctx, 0x5eed};
	ssize_t n = fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0);
	ASSERT_EQ(n, (ssize_t)sizeof(in)) << Err(n);
	for (uint64_t flags : {(uint64_t)FI_PEEK, (uint64_t)0}) {
		SCOPED_TRACE(flags ? "FI_PEEK" : "read");
		uint32_t event = 0;
		fi_eq_entry out;
		memset(&out, 0, sizeof(out));
		n = fi_eq_read(eq, &event, &out, sizeof(out), flags);
		ASSERT_EQ(n, (ssize_t)sizeof(out)) << Err(n);
		EXPECT_EQ(event, (uint32_t)FI_NOTIFY);
		EXPECT_EQ(out.fid, &eq->fid);
		EXPECT_EQ(out.context, &ctx);
		EXPECT_EQ(out.data, 0x5eedu);
	}
	uint32_t event;
	fi_eq_entry out;
	EXPECT_EQ(fi_eq_read(eq, &event, &out, sizeof(out), 0), -FI_EAGAIN);
}

// fi_eq_sread: "If the timeout expires ... and no data is available to be
// read from the event queue, -FI_EAGAIN is returned."
TEST_F(EqTest, SreadTimesOutWithEAGAIN)
{
	fid_eq* eq = OpenEq(FI_WAIT_UNSPEC, 0);
	ASSERT_NE(eq, nullptr);
	uint32_t event;
	fi_eq_cm_entry e;
	auto start = std::chrono::steady_clock::now();
	ssize_t r = fi_eq_sread(eq, &event, &e, sizeof(e), 100, 0);
	auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
			  std::chrono::steady_clock::now() - start)
			  .count();
	EXPECT_EQ(r, -FI_EAGAIN) << Err(r);
	EXPECT_LT(ms, TimeoutMs()) << "a 100 ms timeout took " << ms << " ms";
}

TEST_F(EqTest, SreadReturnsAWrittenEvent)
{
	fid_eq* eq = OpenEq(FI_WAIT_UNSPEC, FI_WRITE);
	ASSERT_NE(eq, nullptr);
	fi_eq_entry in = {&eq->fid, nullptr, 7};
	ASSERT_EQ(fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0),
		  (ssize_t)sizeof(in));
	uint32_t event = 0;
	fi_eq_entry out;
	memset(&out, 0, sizeof(out));
	ssize_t r = fi_eq_sread(eq, &event, &out, sizeof(out), 1000, 0);
	ASSERT_EQ(r, (ssize_t)sizeof(out)) << Err(r);
	EXPECT_EQ(event, (uint32_t)FI_NOTIFY);
	EXPECT_EQ(out.data, 7u);
}

}  // namespace
}  // namespace conf
