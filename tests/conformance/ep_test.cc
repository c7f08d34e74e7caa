// Endpoints (fi_endpoint(3), fi_cm(3)): fi_enable without CQ/AV/EQ,
// fi_getname/fi_setname, fi_cancel, fi_getopt/fi_setopt, fi_control,
// fi_ep_bind flags (FI_TRANSMIT, FI_RECV, FI_SELECTIVE_COMPLETION).
// Where an RDM endpoint is bound to an AV, a connected (MSG) one is bound
// to an EQ (fi_endpoint(3): endpoints that report "communication
// establishment events must be bound to the appropriate ... event queues
// ... before being enabled").
#include <netinet/in.h>

#include <cstdlib>
#include <cstring>

#include "harness.h"

namespace conf {
namespace {

// A World without endpoints' defaults: each test builds what it needs on
// node 0's domain, and closes it.
class EpTest : public RdmTest {
      protected:
	void SetUp() override { Open(Options()); }
	fid_cq* NewCq()
	{
		fi_cq_attr a;
		memset(&a, 0, sizeof(a));
		a.format = FI_CQ_FORMAT_TAGGED;
		fid_cq* cq = nullptr;
		int r = fi_cq_open(w.node(0).domain, &a, &cq, nullptr);
		EXPECT_EQ(r, 0) << Err(r);
		return cq;
	}
	fid_av* NewAv()
	{
		fi_av_attr a;
		memset(&a, 0, sizeof(a));
		a.type = w.info->domain_attr->av_type;
		fid_av* av = nullptr;
		int r = fi_av_open(w.node(0).domain, &a, &av, nullptr);
		EXPECT_EQ(r, 0) << Err(r);
		return av;
	}
	fid_eq* NewEq()
	{
		fi_eq_attr a;
		memset(&a, 0, sizeof(a));
		a.wait_obj = FI_WAIT_NONE;
		fid_eq* eq = nullptr;
		int r = fi_eq_open(w.fabric, &a, &eq, nullptr);
		EXPECT_EQ(r, 0) << Err(r);
		return eq;
	}
	// An AV (RDM) or an EQ (MSG), owned by the test.
	fid* NewAddressing()
	{
		if (MsgMode()) {
			fid_eq* eq = NewEq();
			return eq ? &eq->fid : nullptr;
		}
		fid_av* av = NewAv();
		return av ? &av->fid : nullptr;
	}
	fid_ep* NewEp()
	{
		fid_ep* ep = nullptr;
		int r = fi_endpoint(w.node(0).domain, w.node(0).info, &ep,
				    nullptr);
		EXPECT_EQ(r, 0) << Err(r);
		return ep;
	}
	static void Close(fid* f)
	{
		if (f) {
			EXPECT_EQ(fi_close(f), 0);
		}
	}
	// Binds ep to av and cq, enables it and puts its name in *name.
	static void EnableAndName(fid_ep* ep, fid* av, fid_cq* cq,
				  std::vector<uint8_t>* name)
	{
		CONF_OK(fi_ep_bind(ep, av, 0));
		CONF_OK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
		CONF_OK(fi_enable(ep));
		name->resize(256);
		size_t len = name->size();
		CONF_OK(fi_getname(&ep->fid, name->data(), &len));
		name->resize(len);
	}
};

TEST_F(EpTest, EnableWithoutCqFailsWithENOCQ)
{
	CONF_SKIP_IF_DEVIATION("ep.enable_without_cq");
	fid* av = NewAddressing();
	fid_ep* ep = NewEp();
	ASSERT_TRUE(av && ep);
	CONF_OK(fi_ep_bind(ep, av, 0));
	int r = fi_enable(ep);
	EXPECT_EQ(r, -FI_ENOCQ) << Err(r);
	Close(&ep->fid);
	Close(av);
}

TEST_F(EpTest, EnableWithoutAvFailsWithENOAV)
{
	CONF_SKIP_IF_MSG("connected endpoints use no address vector");
	CONF_SKIP_IF_DEVIATION("ep.enable_without_av");
	fid_cq* cq = NewCq();
	fid_ep* ep = NewEp();
	ASSERT_TRUE(cq && ep);
	CONF_OK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	// fi_endpoint(3) names no code for a missing AV: -FI_ENOAV
	// (fi_errno(3) "missing or unavailable address vector") or the
	// state error -FI_EOPBADSTATE.
	int r = fi_enable(ep);
	EXPECT_TRUE(r == -FI_ENOAV || r == -FI_EOPBADSTATE) << Err(r);
	Close(&ep->fid);
	Close(&cq->fid);
}

// One CQ bound with FI_TRANSMIT | FI_RECV takes both kinds of completion.
TEST_F(EpTest, OneCqForTransmitAndReceive)
{
	if (w.info->domain_attr->mr_mode & FI_MR_ENDPOINT)
		GTEST_SKIP() << "FI_MR_ENDPOINT: the World's buffers are bound "
				"to its own endpoints";
	fid_cq* cq = NewCq();
	fid_ep* ep = nullptr;
	fid_ep* peer = w.node(1).ep;  // node 1's endpoint talking to ep
	fid* av = nullptr;
	fi_addr_t to_b = FI_ADDR_UNSPEC, to_ep = FI_ADDR_UNSPEC;
	Cq both;
	both.cq = cq;
	both.name = "shared cq";
	both.manual = true;
	if (MsgMode()) {
		// A new connection from node 1 to a new endpoint of node
		// 0 that is bound to the shared CQ alone.
		ASSERT_NE(cq, nullptr);
		ASSERT_TRUE(w.Connect(0, 1, &ep, &peer, nullptr, nullptr,
				      [&](fid_ep* e) {
					      return fi_ep_bind(
						      e, &cq->fid,
						      FI_TRANSMIT | FI_RECV);
				      }));
	} else {
		ep = NewEp();
		av = NewAddressing();
		ASSERT_TRUE(cq && av && ep);
		CONF_OK(fi_ep_bind(ep, av, 0));
		CONF_OK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
		CONF_OK(fi_enable(ep));
		size_t len = 0;
		ASSERT_EQ(fi_getname(&ep->fid, nullptr, &len), -FI_ETOOSMALL);
		std::vector<uint8_t> name(len);
		CONF_OK(fi_getname(&ep->fid, name.data(), &len));
		ASSERT_EQ(fi_av_insert((fid_av*)av, w.node(1).name.data(), 1,
				       &to_b, 0, nullptr),
			  1);
		ASSERT_EQ(fi_av_insert(w.node(1).av, name.data(), 1, &to_ep, 0,
				       nullptr),
			  1);
	}
	Buf* s = w.NewBuf(0, 8);
	Buf* r = w.NewBuf(0, 8);
	Buf* echo = w.NewBuf(1, 8);
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	CONF_POST(fi_recv(ep, r->p, 8, r->desc, FI_ADDR_UNSPEC, rc));
	CONF_POST(fi_recv(peer, echo->p, 8, echo->desc, FI_ADDR_UNSPEC,
			  w.Ctx()));
	CONF_POST(fi_send(ep, s->p, 8, s->desc, to_b, sc));
	CONF_POST(fi_send(peer, echo->p, 8, echo->desc, to_ep, w.Ctx()));
	ASSERT_TRUE(w.WaitFor(both, 2));
	bool saw_send = false, saw_recv = false;
	for (auto& c : both.log) {
		EXPECT_FALSE(c.error) << Describe(c);
		saw_send |= c.op_context == sc && (c.flags & FI_SEND);
		saw_recv |= c.op_context == rc && (c.flags & FI_RECV);
	}
	EXPECT_TRUE(saw_send && saw_recv);
	if (MsgMode()) {
		EXPECT_EQ(w.CloseEp(ep), 0);
		EXPECT_EQ(w.CloseEp(peer), 0);
	} else {
		Close(&ep->fid);
		Close(av);
	}
	Close(&cq->fid);
}

// ---- Names --------------------------------------------------------------------------

TEST_F(EpTest, GetnameReportsSizeAndTruncates)
{
	fid_ep* ep = w.node(0).ep;
	size_t len = 0;
	EXPECT_EQ(fi_getname(&ep->fid, nullptr, &len), -FI_ETOOSMALL);
	size_t need = len;
	ASSERT_GT(need, 1u);
	std::vector<uint8_t> small(need - 1, 0xcc);
	small.push_back(0xdd);  // guard byte
	len = need - 1;
	EXPECT_EQ(fi_getname(&ep->fid, small.data(), &len), -FI_ETOOSMALL);
	EXPECT_EQ(len, need) << "fi_cm(3): addrlen is set to the size needed";
	EXPECT_EQ(small.back(), 0xdd) << "wrote past the given length";
	std::vector<uint8_t> full(need + 8);
	len = full.size();
	CONF_OK(fi_getname(&ep->fid, full.data(), &len));
	EXPECT_EQ(len, need);
	EXPECT_EQ(memcmp(full.data(), w.node(0).name.data(), need), 0)
		<< "fi_getname is not stable";
}

TEST_F(EpTest, EndpointsHaveDistinctNames)
{
	EXPECT_NE(w.node(0).name, w.node(1).name);
}

// fi_setname before enabling assigns the address; fi_getname then returns
// it. The address comes from an endpoint that has been closed: an enabled
// one (RDM), or a listening passive endpoint (MSG: "a passive endpoint may
// be used to reserve a fabric address that can be granted to an active
// endpoint", fi_endpoint(3); an active one that is not connected may not
// have a port yet).
TEST_F(EpTest, SetnameAssignsTheAddress)
{
	fid_cq* cq0 = NewCq();
	fid* av0 = NewAddressing();
	ASSERT_TRUE(cq0 && av0);
	std::vector<uint8_t> addr(256);
	size_t len = addr.size();
	if (MsgMode()) {
		fid_pep* pep = nullptr;
		CONF_OK(fi_passive_ep(w.fabric, w.node(0).info, &pep, nullptr));
		CONF_OK(fi_pep_bind(pep, av0, 0));
		CONF_OK(fi_listen(pep));
		CONF_OK(fi_getname(&pep->fid, addr.data(), &len));
		Close(&pep->fid);
		addr.resize(len);
	} else {
		fid_ep* old = NewEp();
		ASSERT_NE(old, nullptr);
		ASSERT_NO_FATAL_FAILURE(EnableAndName(old, av0, cq0, &addr));
		Close(&old->fid);
	}
	len = addr.size();
	// fi_cm(3): fi_getname returns a valid source address once the
	// endpoint "has been enabled"; for an IP address that includes a
	// port.
	const sockaddr_in* in = (const sockaddr_in*)addr.data();
	if (len >= sizeof(sockaddr_in) && in->sin_family == AF_INET) {
		EXPECT_NE(in->sin_port, 0) << "the address has no port";
	}
	fid_ep* ep = NewEp();
	ASSERT_NE(ep, nullptr);
	int r = fi_setname(&ep->fid, addr.data(), addr.size());
	if (r == -FI_ENOSYS || r == -FI_EOPNOTSUPP) {
		Close(&ep->fid);
		Close(&cq0->fid);
		Close(av0);
		GTEST_SKIP() << "fi_setname is not supported: " << Err(r);
	}
	EXPECT_EQ(r, 0) << "fi_setname: " << Err(r);
	std::vector<uint8_t> got;
	ASSERT_NO_FATAL_FAILURE(EnableAndName(ep, av0, cq0, &got));
	EXPECT_EQ(got, addr);
	Close(&ep->fid);
	Close(&cq0->fid);
	Close(av0);
}

// fi_getinfo(3): with FI_SOURCE, node and service "specify the local source
// address to associate with an endpoint", and src_addr "is only used when
// opening a local endpoint": an endpoint opened with a src_addr has that
// address, so that peers that were told it reach the endpoint. (MSG: an
// active endpoint's address is its connection's.)
TEST_F(EpTest, AnEndpointTakesTheSourceAddressOfItsInfo)
{
	CONF_SKIP_IF_MSG("a connected endpoint's address comes with its "
			 "connection");
	fid_cq* cq = NewCq();
	fid* av = NewAddressing();
	ASSERT_TRUE(cq && av);
	// A free address of this node, with a port: a closed endpoint's.
	fid_ep* old = NewEp();
	ASSERT_NE(old, nullptr);
	std::vector<uint8_t> addr;
	ASSERT_NO_FATAL_FAILURE(EnableAndName(old, av, cq, &addr));
	Close(&old->fid);
	fi_info* info = fi_dupinfo(w.node(0).info);
	ASSERT_NE(info, nullptr);
	free(info->src_addr);
	info->src_addr = malloc(addr.size());
	ASSERT_NE(info->src_addr, nullptr);
	memcpy(info->src_addr, addr.data(), addr.size());
	info->src_addrlen = addr.size();
	fid_ep* ep = nullptr;
	int r = fi_endpoint(w.node(0).domain, info, &ep, nullptr);
	fi_freeinfo(info);
	ASSERT_EQ(r, 0) << Err(r);
	std::vector<uint8_t> got;
	ASSERT_NO_FATAL_FAILURE(EnableAndName(ep, av, cq, &got));
	EXPECT_EQ(got, addr);
	Close(&ep->fid);
	Close(&cq->fid);
	Close(av);
}

// ---- Cancel ------------------------------------------------------------------------

TEST_F(EpTest, CancelPostedReceiveReportsECANCELED)
{
	Node& b = w.node(1);
	Buf* r = w.NewBuf(1, 32);
	fi_context2* rc = w.Ctx();
	CONF_POST(fi_recv(b.ep, r->p, 32, r->desc, FI_ADDR_UNSPEC, rc));
	CONF_CANCEL(b.ep, rc);
	Completion c = w.ExpectError(b.rx);
	EXPECT_EQ(c.err, FI_ECANCELED) << Describe(c);
	EXPECT_EQ(c.op_context, rc);
	// The cancelled buffer no longer matches: a message goes elsewhere.
	Buf* r2 = w.NewBuf(1, 32);
	fi_context2* rc2 = w.Ctx();
	CONF_POST(fi_recv(b.ep, r2->p, 32, r2->desc, FI_ADDR_UNSPEC, rc2));
	Buf* s = w.NewBuf(0, 32);
	s->Fill(4);
	CONF_POST(fi_send(w.node(0).ep, s->p, 32, s->desc, w.node(0).peer(1),
			  w.Ctx()));
	w.Expect(b.rx, rc2);
	EXPECT_TRUE(r2->Check(4, 32));
}

TEST_F(EpTest, CancelPostedTaggedReceive)
{
	if (!(w.info->caps & FI_TAGGED))
		GTEST_SKIP() << "the " << EpTypeName() << " endpoint of "
			     << Provider() << " has no FI_TAGGED";
	Node& b = w.node(1);
	Buf* r = w.NewBuf(1, 32);
	fi_context2* rc = w.Ctx();
	CONF_POST(fi_trecv(b.ep, r->p, 32, r->desc, FI_ADDR_UNSPEC, 0x42, 0,
			   rc));
	CONF_CANCEL(b.ep, rc);
	Completion c = w.ExpectError(b.rx);
	EXPECT_EQ(c.err, FI_ECANCELED) << Describe(c);
	EXPECT_EQ(c.op_context, rc);
	EXPECT_EQ(c.tag, 0x42u) << "the error names another tag than the "
				   "receive's";
}

// fi_endpoint(3): cancelling an operation that already completed posts no
// entry; its own completion is what the CQ holds.
TEST_F(EpTest, CancelAfterCompletionPostsNothing)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* r = w.NewBuf(1, 8);
	Buf* s = w.NewBuf(0, 8);
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	CONF_POST(fi_recv(b.ep, r->p, 8, r->desc, FI_ADDR_UNSPEC, rc));
	CONF_POST(fi_send(a.ep, s->p, 8, s->desc, a.peer(1), sc));
	w.Expect(b.rx, rc);
	w.Expect(a.tx, sc);
	(void)fi_cancel(&b.ep->fid, rc);  // return value unspecified here
	w.Settle();
	EXPECT_TRUE(b.rx.log.empty()) << Describe(b.rx.log[0]);
}

// ---- Options and control -------------------------------------------------------------

TEST_F(EpTest, UnknownOptionReturnsENOPROTOOPT)
{
	fid_ep* ep = w.node(0).ep;
	size_t v = 0, len = sizeof(v);
	EXPECT_EQ(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, 0x7fff, &v, &len),
		  -FI_ENOPROTOOPT);
	EXPECT_EQ(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, 0x7fff, &v, sizeof(v)),
		  -FI_ENOPROTOOPT);
}

// FI_OPT_CM_DATA_SIZE concerns connection management, which RDM endpoints
// do not do: reading it may succeed or be -FI_ENOPROTOOPT there, and must
// succeed on a connected endpoint (fi_endpoint(3): the size of "data that
// applications can exchange ... using the fi_connect, fi_accept, and
// fi_reject operations"); it is read only, so setting it fails.
TEST_F(EpTest, CmDataSizeIsReadOnly)
{
	fid_ep* ep = w.node(0).ep;
	size_t v = 0, len = sizeof(v);
	int r = fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &v,
			  &len);
	if (MsgMode()) {
		EXPECT_EQ(r, 0) << Err(r);
		EXPECT_EQ(len, sizeof(size_t));
	} else {
		EXPECT_TRUE(r == 0 || r == -FI_ENOPROTOOPT) << Err(r);
	}
	v = 16;
	r = fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &v,
		      sizeof(v));
	EXPECT_LT(r, 0) << "FI_OPT_CM_DATA_SIZE is read only";
}

TEST_F(EpTest, GetOpsFlagReturnsTransmitFlags)
{
	uint64_t flags = FI_TRANSMIT;
	int r = fi_control(&w.node(0).ep->fid, FI_GETOPSFLAG, &flags);
	if (r == -FI_ENOSYS)
		GTEST_SKIP() << "fi_control(FI_GETOPSFLAG) is not implemented";
	EXPECT_EQ(r, 0) << Err(r);
}

// fi_endpoint(3), fi_control: "The control argument must include
// FI_TRANSMIT or FI_RECV (not both)"; what one direction sets is what it
// reads back, and the other direction keeps its own.
TEST_F(EpTest, OpsFlagsTakeExactlyOneDirection)
{
	fid* ep = &w.node(0).ep->fid;
	uint64_t flags = FI_TRANSMIT;
	if (fi_control(ep, FI_GETOPSFLAG, &flags) == -FI_ENOSYS)
		GTEST_SKIP() << "fi_control(FI_GETOPSFLAG) is not implemented";
	uint64_t rx_before = FI_RECV;
	CONF_OK(fi_control(ep, FI_GETOPSFLAG, &rx_before));
	flags = FI_TRANSMIT | FI_RECV | FI_COMPLETION;
	EXPECT_EQ(fi_control(ep, FI_SETOPSFLAG, &flags), -FI_EINVAL);
	flags = FI_TRANSMIT | FI_RECV;
	EXPECT_EQ(fi_control(ep, FI_GETOPSFLAG, &flags), -FI_EINVAL);
	flags = FI_TRANSMIT | FI_COMPLETION;
	CONF_OK(fi_control(ep, FI_SETOPSFLAG, &flags));
	flags = FI_TRANSMIT;
	CONF_OK(fi_control(ep, FI_GETOPSFLAG, &flags));
	EXPECT_TRUE(flags & FI_COMPLETION) << std::hex << flags;
	EXPECT_FALSE(flags & (FI_TRANSMIT | FI_RECV)) << std::hex << flags;
	flags = FI_RECV;
	CONF_OK(fi_control(ep, FI_GETOPSFLAG, &flags));
	EXPECT_EQ(flags, rx_before);
}

TEST_F(EpTest, EndpointIdentity)
{
	int ctx;
	fid_ep* ep = nullptr;
	CONF_OK(fi_endpoint(w.node(0).domain, w.node(0).info, &ep, &ctx));
	EXPECT_EQ(ep->fid.context, &ctx);
	EXPECT_EQ(ep->fid.fclass, (size_t)FI_CLASS_EP);
	fid_cq* cq = NewCq();
	fid* av = NewAddressing();
	ASSERT_TRUE(cq && av);
	CONF_OK(fi_ep_bind(ep, av, 0));
	CONF_OK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	CONF_OK(fi_enable(ep));
	Close(&ep->fid);
	Close(&cq->fid);
	Close(av);
}

// ---- Not enabled ---------------------------------------------------------------------

class EpDisabledTest : public RdmTest {};

// fi_endpoint(3): "Active endpoints are created in the disabled state.
// They must transition into an enabled state before accepting data
// transfer operations, including posting of receive buffers." For
// connected endpoints too: fi_msg(3) "An endpoint must be enabled before
// an application can post send or receive operations to it. For connected
// endpoints, receive buffers may be posted prior to connect or accept" --
// enabled, not yet connected (fi_cm(3)'s "receive buffers may be associated
// with an endpoint anytime" is about the connection, not enabling).
// -FI_EOPBADSTATE is the state error.
TEST_F(EpDisabledTest, PostingBeforeEnableFails)
{
	CONF_SKIP_IF_DEVIATION("ep.post_before_enable");
	Options o;
	o.enable = false;
	CONF_OPEN(o);
	Buf* r = w.NewBuf(0, 8);
	long ret = fi_recv(w.node(0).ep, r->p, 8, r->desc, FI_ADDR_UNSPEC,
			   w.Ctx());
	EXPECT_EQ(ret, -FI_EOPBADSTATE)
		<< "fi_recv on a bound endpoint that was never enabled: "
		<< Err(ret);
}

// ---- Selective completion ---------------------------------------------------------

class SelectiveTest : public RdmTest {
      protected:
	void SetUp() override
	{
		Options o;
		o.tx_bind = FI_TRANSMIT | FI_SELECTIVE_COMPLETION;
		o.rx_bind = FI_RECV | FI_SELECTIVE_COMPLETION;
		Open(o);
	}
	// fi_sendmsg/fi_recvmsg of one 8 B message with the given flags.
	void Exchange(uint64_t tx_flags, uint64_t rx_flags, fi_context2* sc,
		      fi_context2* rc)
	{
		Node& a = w.node(0);
		Node& b = w.node(1);
		Buf* s = w.NewBuf(0, 8);
		Buf* r = w.NewBuf(1, 8);
		iovec siov = {s->p, 8}, riov = {r->p, 8};
		void *sd = s->desc, *rd = r->desc;
		fi_msg rm = {&riov, &rd, 1, FI_ADDR_UNSPEC, rc, 0};
		fi_msg sm = {&siov, &sd, 1, a.peer(1), sc, 0};
		CONF_POST(fi_recvmsg(b.ep, &rm, rx_flags));
		CONF_POST(fi_sendmsg(a.ep, &sm, tx_flags));
	}
};

TEST_F(SelectiveTest, OnlyOperationsWithCompletionFlagReport)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	fi_context2 *s1 = w.Ctx(), *r1 = w.Ctx(), *s2 = w.Ctx(), *r2 = w.Ctx();
	Exchange(0, 0, s1, r1);
	Exchange(FI_COMPLETION, FI_COMPLETION, s2, r2);
	w.Expect(a.tx, s2);
	w.Expect(b.rx, r2);
	w.Settle();
	EXPECT_TRUE(a.tx.log.empty()) << "a send without FI_COMPLETION "
					 "reported: "
				      << Describe(a.tx.log[0]);
	EXPECT_TRUE(b.rx.log.empty()) << "a receive without FI_COMPLETION "
					 "reported: "
				      << Describe(b.rx.log[0]);
}

// fi_send takes the endpoint's default op_flags (tx_attr->op_flags): it
// reports only if those include FI_COMPLETION.
TEST_F(SelectiveTest, DefaultOpFlagsDecideForSend)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	bool reports = w.info->tx_attr->op_flags & FI_COMPLETION;
	Buf* s = w.NewBuf(0, 8);
	Buf* r = w.NewBuf(1, 8);
	fi_context2 *sc = w.Ctx(), *rc = w.Ctx();
	iovec riov = {r->p, 8};
	void* rd = r->desc;
	fi_msg rm = {&riov, &rd, 1, FI_ADDR_UNSPEC, rc, 0};
	CONF_POST(fi_recvmsg(b.ep, &rm, FI_COMPLETION));
	CONF_POST(fi_send(a.ep, s->p, 8, s->desc, a.peer(1), sc));
	w.Expect(b.rx, rc);
	if (reports) {
		w.Expect(a.tx, sc);
	}
	w.Settle();
	EXPECT_TRUE(a.tx.log.empty()) << Describe(a.tx.log[0]);
}

// Errors are reported even without FI_COMPLETION (fi_cq(3)).
TEST_F(SelectiveTest, ErrorsAreReportedWithoutCompletionFlag)
{
	Node& b = w.node(1);
	Buf* r = w.NewBuf(1, 8);
	fi_context2* rc = w.Ctx();
	iovec riov = {r->p, 8};
	void* rd = r->desc;
	fi_msg rm = {&riov, &rd, 1, FI_ADDR_UNSPEC, rc, 0};
	CONF_POST(fi_recvmsg(b.ep, &rm, 0));
	int want = FailReceive(w, 1, 0, rc, 8);
	ASSERT_NE(want, 0);
	Completion c = w.ExpectError(b.rx);
	EXPECT_EQ(c.err, want) << Describe(c);
}

}  // namespace
}  // namespace conf
