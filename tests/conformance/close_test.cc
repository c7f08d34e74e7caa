// fi_close of a parent while children are open: -FI_EBUSY, and the object
// stays usable (fi_domain(3), fi_cq(3), fi_av(3), fi_eq(3), fi_cntr(3),
// fi_mr(3), fi_endpoint(3)); closing in the right order succeeds. An
// endpoint is bound to an AV (RDM) or to an EQ (MSG).
#include <cstdio>
#include <cstring>
#include <string>

#include "harness.h"

namespace conf {
namespace {

// Opens a fabric and one domain by hand, so each test controls exactly
// which children exist.
class CloseTest : public ::testing::Test {
      protected:
	void SetUp() override
	{
		Options o;
		int r = GetInfo(o, &info);
		if (r == -FI_ENODATA)
			GTEST_SKIP() << "no " << EpTypeName() << " endpoint from "
				     << Provider();
		ASSERT_EQ(r, 0) << Err(r);
		CONF_OK(fi_fabric(info->fabric_attr, &fabric, nullptr));
		CONF_OK(fi_domain(fabric, info, &domain, nullptr));
	}
	void TearDown() override
	{
		if (domain) {
			EXPECT_EQ(fi_close(&domain->fid), 0);
		}
		if (fabric) {
			EXPECT_EQ(fi_close(&fabric->fid), 0);
		}
		if (info)
			fi_freeinfo(info);
	}
	fid_cq* OpenCq()
	{
		fi_cq_attr a;
		memset(&a, 0, sizeof(a));
		a.format = FI_CQ_FORMAT_CONTEXT;
		fid_cq* cq = nullptr;
		int r = fi_cq_open(domain, &a, &cq, nullptr);
		EXPECT_EQ(r, 0) << Err(r);
		return cq;
	}
	fid_av* OpenAv()
	{
		fi_av_attr a;
		memset(&a, 0, sizeof(a));
		a.type = info->domain_attr->av_type;
		fid_av* av = nullptr;
		int r = fi_av_open(domain, &a, &av, nullptr);
		EXPECT_EQ(r, 0) << Err(r);
		return av;
	}
	fid_eq* OpenEq()
	{
		fi_eq_attr a;
		memset(&a, 0, sizeof(a));
		a.wait_obj = FI_WAIT_NONE;
		fid_eq* eq = nullptr;
		int r = fi_eq_open(fabric, &a, &eq, nullptr);
		EXPECT_EQ(r, 0) << Err(r);
		return eq;
	}
	// What an endpoint must be bound to before fi_enable besides CQs:
	// an AV (connectionless, fi_endpoint(3)) or an EQ (connected: it
	// reports connection events).
	fid* OpenAddressing()
	{
		if (MsgMode()) {
			fid_eq* eq = OpenEq();
			return eq ? &eq->fid : nullptr;
		}
		fid_av* av = OpenAv();
		return av ? &av->fid : nullptr;
	}
	// A counter; NULL with *none set to the reason (and nothing failed)
	// when the provider offers no counters (NoCounters).
	fid_cntr* OpenCntr(std::string* none = nullptr)
	{
		fi_cntr_attr a;
		memset(&a, 0, sizeof(a));
		a.events = FI_CNTR_EVENTS_COMP;
		fid_cntr* c = nullptr;
		int r = fi_cntr_open(domain, &a, &c, nullptr);
		if (none && NoCounters(info, r, none))
			return nullptr;
		EXPECT_EQ(r, 0) << Err(r);
		return c;
	}
	// An enabled endpoint bound to cq (both directions) and av (an AV, or
	// an EQ in MSG mode: see OpenAddressing).
	fid_ep* OpenBoundEp(fid_cq* cq, fid* av, fid_cntr* cntr = nullptr)
	{
		fid_ep* ep = nullptr;
		int r = fi_endpoint(domain, info, &ep, nullptr);
		EXPECT_EQ(r, 0) << Err(r);
		if (r)
			return nullptr;
		EXPECT_EQ(fi_ep_bind(ep, av, 0), 0);
		EXPECT_EQ(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
		if (cntr) {
			EXPECT_EQ(fi_ep_bind(ep, &cntr->fid, FI_SEND), 0);
		}
		r = fi_enable(ep);
		EXPECT_EQ(r, 0) << "fi_enable: " << Err(r);
		return ep;
	}
	fi_info* info = nullptr;
	fid_fabric* fabric = nullptr;
	fid_domain* domain = nullptr;
};

#define EXPECT_BUSY(f)                                                      \
	do {                                                                \
		int r_ = fi_close(f);                                       \
		EXPECT_EQ(r_, -FI_EBUSY) << "fi_close(" #f "): " << Err(r_); \
	} while (0)

TEST_F(CloseTest, DomainBusyWhileEndpointOpen)
{
	CONF_SKIP_IF_DEVIATION("close.domain_busy");
	fid_cq* cq = OpenCq();
	fid* av = OpenAddressing();
	ASSERT_TRUE(cq && av);
	fid_ep* ep = OpenBoundEp(cq, av);
	ASSERT_NE(ep, nullptr);
	EXPECT_BUSY(&domain->fid);
	CONF_OK(fi_close(&ep->fid));
	CONF_OK(fi_close(&cq->fid));
	CONF_OK(fi_close(av));
}

// An endpoint that was never bound nor enabled closes like any other.
TEST_F(CloseTest, UnboundEndpointCloses)
{
	CONF_SKIP_IF_DEVIATION("close.unbound_endpoint");
	fid_ep* ep = nullptr;
	CONF_OK(fi_endpoint(domain, info, &ep, nullptr));
	EXPECT_BUSY(&domain->fid);
	CONF_OK(fi_close(&ep->fid));
}

TEST_F(CloseTest, DomainBusyWhileCqOpen)
{
	CONF_SKIP_IF_DEVIATION("close.domain_busy");
	fid_cq* cq = OpenCq();
	ASSERT_NE(cq, nullptr);
	EXPECT_BUSY(&domain->fid);
	CONF_OK(fi_close(&cq->fid));
}

TEST_F(CloseTest, DomainBusyWhileAvOpen)
{
	CONF_SKIP_IF_MSG("connected endpoints use no address vector");
	CONF_SKIP_IF_DEVIATION("close.domain_busy");
	fid_av* av = OpenAv();
	ASSERT_NE(av, nullptr);
	EXPECT_BUSY(&domain->fid);
	CONF_OK(fi_close(&av->fid));
}

TEST_F(CloseTest, DomainBusyWhileCounterOpen)
{
	CONF_SKIP_IF_DEVIATION("close.domain_busy");
	std::string none;
	fid_cntr* c = OpenCntr(&none);
	if (!none.empty())
		GTEST_SKIP() << none;
	ASSERT_NE(c, nullptr);
	EXPECT_BUSY(&domain->fid);
	CONF_OK(fi_close(&c->fid));
}

TEST_F(CloseTest, DomainBusyWhileMemoryRegionOpen)
{
	CONF_SKIP_IF_DEVIATION("close.domain_busy");
	if (info->domain_attr->mr_mode & FI_MR_ENDPOINT)
		GTEST_SKIP() << "FI_MR_ENDPOINT: an MR needs an endpoint; "
				"covered by MemoryRegionBusyWhileBound";
	static uint8_t buf[4096];
	fid_mr* mr = nullptr;
	CONF_OK(fi_mr_reg(domain, buf, sizeof(buf), FI_SEND | FI_RECV, 0, 7, 0,
			  &mr, nullptr));
	EXPECT_BUSY(&domain->fid);
	CONF_OK(fi_close(&mr->fid));
}

// fi_fabric(3) says the fabric's children must be closed first without
// naming the error; the suite assumes -FI_EBUSY, as for the other objects.
TEST_F(CloseTest, FabricBusyWhileDomainOpen)
{
	CONF_SKIP_IF_DEVIATION("close.fabric_busy");
	EXPECT_BUSY(&fabric->fid);
}

TEST_F(CloseTest, CqBusyWhileBoundToEndpoint)
{
	CONF_SKIP_IF_DEVIATION("close.cq_busy");
	fid_cq* cq = OpenCq();
	fid* av = OpenAddressing();
	ASSERT_TRUE(cq && av);
	fid_ep* ep = OpenBoundEp(cq, av);
	ASSERT_NE(ep, nullptr);
	EXPECT_BUSY(&cq->fid);
	CONF_OK(fi_close(&ep->fid));
	CONF_OK(fi_close(&cq->fid));
	CONF_OK(fi_close(av));
}

TEST_F(CloseTest, AvBusyWhileBoundToEndpoint)
{
	CONF_SKIP_IF_MSG("connected endpoints use no address vector");
	fid_cq* cq = OpenCq();
	fid_av* av = OpenAv();
	ASSERT_TRUE(cq && av);
	fid_ep* ep = OpenBoundEp(cq, &av->fid);
	ASSERT_NE(ep, nullptr);
	EXPECT_BUSY(&av->fid);
	CONF_OK(fi_close(&ep->fid));
	CONF_OK(fi_close(&av->fid));
	CONF_OK(fi_close(&cq->fid));
}

// fi_eq(3): "The EQ must not be bound to any other objects prior to being
// closed, otherwise the call will return -FI_EBUSY."
TEST_F(CloseTest, EqBusyWhileBoundToEndpoint)
{
	CONF_SKIP_UNLESS_MSG("only connected endpoints are bound to an EQ "
			     "(covered by the FI_EP_MSG runs)");
	CONF_SKIP_IF_DEVIATION("close.eq_busy");
	fid_cq* cq = OpenCq();
	fid_eq* eq = OpenEq();
	ASSERT_TRUE(cq && eq);
	fid_ep* ep = OpenBoundEp(cq, &eq->fid);
	ASSERT_NE(ep, nullptr);
	EXPECT_BUSY(&eq->fid);
	CONF_OK(fi_close(&ep->fid));
	CONF_OK(fi_close(&eq->fid));
	CONF_OK(fi_close(&cq->fid));
}

TEST_F(CloseTest, EqBusyWhileBoundToPassiveEndpoint)
{
	CONF_SKIP_UNLESS_MSG("passive endpoints are for FI_EP_MSG");
	CONF_SKIP_IF_DEVIATION("close.eq_busy");
	fid_eq* eq = OpenEq();
	ASSERT_NE(eq, nullptr);
	fid_pep* pep = nullptr;
	CONF_OK(fi_passive_ep(fabric, info, &pep, nullptr));
	CONF_OK(fi_pep_bind(pep, &eq->fid, 0));
	EXPECT_BUSY(&eq->fid);
	CONF_OK(fi_close(&pep->fid));
	CONF_OK(fi_close(&eq->fid));
}

TEST_F(CloseTest, CounterBusyWhileBoundToEndpoint)
{
	std::string none;
	fid_cntr* c = OpenCntr(&none);
	if (!none.empty())
		GTEST_SKIP() << none;
	fid_cq* cq = OpenCq();
	fid* av = OpenAddressing();
	ASSERT_TRUE(cq && av && c);
	fid_ep* ep = OpenBoundEp(cq, av, c);
	ASSERT_NE(ep, nullptr);
	EXPECT_BUSY(&c->fid);
	CONF_OK(fi_close(&ep->fid));
	CONF_OK(fi_close(&c->fid));
	CONF_OK(fi_close(&cq->fid));
	CONF_OK(fi_close(av));
}

// fi_mr(3): "there must be no opened endpoints or counters associated with
// the MR" -- an MR bound to an endpoint under FI_MR_ENDPOINT.
TEST_F(CloseTest, MemoryRegionBusyWhileBoundToEndpoint)
{
	if (!(info->domain_attr->mr_mode & FI_MR_ENDPOINT))
		GTEST_SKIP() << "mr_mode has no FI_MR_ENDPOINT: MRs belong to "
				"the domain, not to endpoints";
	fid_cq* cq = OpenCq();
	fid* av = OpenAddressing();
	ASSERT_TRUE(cq && av);
	fid_ep* ep = OpenBoundEp(cq, av);
	ASSERT_NE(ep, nullptr);
	static uint8_t buf[4096];
	fid_mr* mr = nullptr;
	CONF_OK(fi_mr_reg(domain, buf, sizeof(buf), FI_REMOTE_WRITE, 0, 9, 0,
			  &mr, nullptr));
	CONF_OK(fi_mr_bind(mr, &ep->fid, 0));
	CONF_OK(fi_mr_enable(mr));
	EXPECT_BUSY(&mr->fid);
	CONF_OK(fi_close(&ep->fid));
	CONF_OK(fi_close(&mr->fid));
	CONF_OK(fi_close(&cq->fid));
	CONF_OK(fi_close(av));
}

// Children closed first, the parent closes cleanly (fi_close returns 0 on
// every object; checked in TearDown for domain and fabric).
// (Without the counter where the provider offers none.)
TEST_F(CloseTest, ChildrenFirstThenParentCloses)
{
	fid_cq* cq = OpenCq();
	fid* av = OpenAddressing();
	std::string none;
	fid_cntr* c = OpenCntr(&none);
	if (!none.empty())
		printf("closing without a counter: the %s\n", none.c_str());
	ASSERT_TRUE(cq && av && (c || !none.empty()));
	fid_ep* ep = OpenBoundEp(cq, av, c);
	ASSERT_NE(ep, nullptr);
	CONF_OK(fi_close(&ep->fid));
	if (c)
		CONF_OK(fi_close(&c->fid));
	CONF_OK(fi_close(av));
	CONF_OK(fi_close(&cq->fid));
}

// ---- With traffic ----------------------------------------------------------------

class CloseTrafficTest : public RdmTest {
      protected:
	void SetUp() override { Open(Options()); }
};

// A refused close leaves every object working.
TEST_F(CloseTrafficTest, ObjectsStillWorkAfterEBUSY)
{
	CONF_SKIP_IF_DEVIATION("close.domain_busy");
	CONF_SKIP_IF_DEVIATION("close.cq_busy");
	Node& a = w.node(0);
	Node& b = w.node(1);
	EXPECT_EQ(fi_close(&a.domain->fid), -FI_EBUSY);
	EXPECT_EQ(fi_close(&a.tx.cq->fid), -FI_EBUSY);
	EXPECT_EQ(fi_close(&b.rx.cq->fid), -FI_EBUSY);
	if (MsgMode()) {
		// (Not where closing a bound EQ frees it: see close.eq_busy.)
		if (!Deviation("close.eq_busy")) {
			EXPECT_EQ(fi_close(&b.eq->eq->fid), -FI_EBUSY);
		}
	} else {
		EXPECT_EQ(fi_close(&b.av->fid), -FI_EBUSY);
	}
	Buf* s = w.NewBuf(0, 32);
	Buf* r = w.NewBuf(1, 32);
	s->Fill(1);
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	CONF_POST(fi_recv(b.ep, r->p, 32, r->desc, FI_ADDR_UNSPEC, rc));
	CONF_POST(fi_send(a.ep, s->p, 32, s->desc, a.peer(1), sc));
	w.Expect(a.tx, sc);
	w.Expect(b.rx, rc);
	EXPECT_TRUE(r->Check(1, 32));
}

// fi_endpoint(3): operations outstanding at fi_close are discarded without
// completions.
TEST_F(CloseTrafficTest, ClosingEndpointDiscardsPostedReceives)
{
	CONF_SKIP_IF_DEVIATION("close.discards_posted");
	Node& b = w.node(1);
	Buf* r = w.NewBuf(1, 32);
	for (int i = 0; i < 4; i++)
		CONF_POST(fi_recv(b.ep, r->p, 32, r->desc, FI_ADDR_UNSPEC,
				  w.Ctx()));
	CONF_OK(fi_close(&b.ep->fid));
	b.ep = nullptr;
	fi_cq_tagged_entry e[4];
	ssize_t got = fi_cq_read(b.rx.cq, e, 4);
	std::string what;
	if (got == -FI_EAVAIL) {
		fi_cq_err_entry err;
		memset(&err, 0, sizeof(err));
		if (fi_cq_readerr(b.rx.cq, &err, 0) == 1)
			what = std::string(": an error entry, ") +
			       fi_strerror(err.err);
	}
	EXPECT_EQ(got, -FI_EAGAIN) << "discarded receives were reported" << what;
}

}  // namespace
}  // namespace conf
