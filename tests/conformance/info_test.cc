// fi_getinfo, fi_dupinfo, fi_fabric, fi_domain: what a program sees before
// it opens an endpoint (fi_getinfo(3), fi_fabric(3), fi_domain(3)).
#include <arpa/inet.h>
#include <cstring>
#include <netinet/in.h>

#include "harness.h"

namespace conf {
namespace {

// Runs fi_getinfo with the suite's hints for `o`; skips when nothing matches.
class InfoTest : public ::testing::Test {
      protected:
	void TearDown() override
	{
		if (info)
			fi_freeinfo(info);
	}
	int Get(const Options& o) { return GetInfo(o, &info); }
	fi_info* info = nullptr;
};

#define GET_OR_SKIP(o)                                                      \
	do {                                                                \
		int r_ = Get(o);                                            \
		if (r_ == -FI_ENODATA)                                      \
			GTEST_SKIP() << "provider " << Provider()           \
				     << " offers no " << EpTypeName()       \
				     << " endpoint for these hints";        \
		ASSERT_EQ(r_, 0) << Err(r_);                                \
		ASSERT_NE(info, nullptr);                                   \
	} while (0)

// (RDM: FI_MSG | FI_TAGGED; MSG: FI_MSG.)
TEST_F(InfoTest, FindsTheProviderForMessaging)
{
	Options o;
	ASSERT_EQ(Get(o), 0) << "no " << EpTypeName() << " endpoint with "
			     << "the default caps from " << Provider();
	ASSERT_NE(info, nullptr);
	for (fi_info* cur = info; cur; cur = cur->next) {
		ASSERT_NE(cur->fabric_attr, nullptr);
		ASSERT_NE(cur->fabric_attr->prov_name, nullptr);
		EXPECT_EQ(std::string(cur->fabric_attr->prov_name), Provider());
		EXPECT_EQ(cur->ep_attr->type, EpType());
		EXPECT_EQ(cur->caps & o.caps, o.caps);
	}
}

TEST_F(InfoTest, AttributesAreSane)
{
	Options o;
	o.caps = DefaultCaps() | FI_RMA;
	o.optional_caps |= FI_ATOMIC;
	GET_OR_SKIP(o);
	for (fi_info* i = info; i; i = i->next) {
		SCOPED_TRACE(i->domain_attr->name ? i->domain_attr->name : "?");
		EXPECT_EQ(i->caps & o.caps, o.caps);
		EXPECT_EQ(i->mode & ~o.mode, 0u) << "mode bits the program "
						    "did not offer";
		EXPECT_EQ(i->domain_attr->mr_mode & ~o.mr_mode, 0)
			<< "mr_mode bits the program did not offer";
		EXPECT_NE(i->fabric_attr->name, nullptr);
		EXPECT_NE(i->domain_attr->name, nullptr);
		EXPECT_NE(i->fabric_attr->prov_version, 0u);
		EXPECT_GT(i->tx_attr->size, 0u);
		EXPECT_GT(i->rx_attr->size, 0u);
		EXPECT_GE(i->tx_attr->iov_limit, 1u);
		EXPECT_GE(i->rx_attr->iov_limit, 1u);
		EXPECT_GE(i->tx_attr->rma_iov_limit, 1u);
		EXPECT_GT(i->ep_attr->max_msg_size, 0u);
		EXPECT_LE(i->tx_attr->inject_size, i->ep_attr->max_msg_size);
		if (i->caps & FI_TAGGED) {
			EXPECT_NE(i->ep_attr->mem_tag_format, 0u)
				<< "FI_TAGGED needs tag bits";
		}
		EXPECT_EQ(i->tx_attr->caps & ~i->caps, 0u);
		EXPECT_EQ(i->rx_attr->caps & ~i->caps, 0u);
		// fi_domain(3): keys are at most 8 bytes unless FI_MR_RAW.
		if (!(i->domain_attr->mr_mode & FI_MR_RAW)) {
			EXPECT_GE(i->domain_attr->mr_key_size, 1u);
			EXPECT_LE(i->domain_attr->mr_key_size, 8u);
		}
		// fi_domain(3): if supported, remote CQ data is >= 4 bytes.
		size_t cqd = i->domain_attr->cq_data_size;
		EXPECT_TRUE(cqd == 0 || (cqd >= 4 && cqd <= 8)) << cqd;
		EXPECT_GE(i->domain_attr->mr_iov_limit, 1u);
		EXPECT_GT(i->domain_attr->cq_cnt, 0u);
		EXPECT_GT(i->domain_attr->ep_cnt, 0u);
		EXPECT_GE(i->domain_attr->tx_ctx_cnt, 1u);
		EXPECT_GE(i->domain_attr->rx_ctx_cnt, 1u);
		EXPECT_NE(i->domain_attr->threading, FI_THREAD_UNSPEC);
		EXPECT_NE(i->domain_attr->data_progress, FI_PROGRESS_UNSPEC);
		EXPECT_NE(i->domain_attr->control_progress,
			  FI_PROGRESS_UNSPEC);
		EXPECT_NE(i->domain_attr->resource_mgmt, FI_RM_UNSPEC);
		if (i->src_addr) {
			EXPECT_GT(i->src_addrlen, 0u);
		}
	}
}

TEST_F(InfoTest, ProgramWithoutModeBitsGetsNoModeBits)
{
	Options o;
	o.mode = 0;
	int r = Get(o);
	if (r == -FI_ENODATA)
		GTEST_SKIP() << Provider() << " requires mode bits (e.g. "
			     << "FI_CONTEXT): fi_getinfo rightly returns "
			     << "-FI_ENODATA to a program offering none";
	ASSERT_EQ(r, 0) << Err(r);
	for (fi_info* i = info; i; i = i->next)
		EXPECT_EQ(i->mode, 0u);
}

// fi_mr(3): the mr_mode bits are the program's offer; a provider leaves set
// those it needs and may clear the others, never adds one. fi_getinfo(3):
// from 1.5 on the FI_LOCAL_MR mode bit is ignored, so a program that sets
// every mode bit but leaves FI_MR_LOCAL out gets no FI_MR_LOCAL (fabtests'
// getinfo_test, validate_mr_modes).
TEST_F(InfoTest, EveryMrModeCombinationGetsOnlyItsOwnBits)
{
	const int bits[] = { FI_MR_LOCAL, FI_MR_RAW, FI_MR_VIRT_ADDR,
			     FI_MR_ALLOCATED, FI_MR_PROV_KEY, FI_MR_MMU_NOTIFY,
			     FI_MR_RMA_EVENT, FI_MR_ENDPOINT };
	for (unsigned combo = 0; combo < 1u << 8; combo++) {
		Options o;
		o.mode = ~0ULL;
		o.mr_mode = 0;
		for (unsigned b = 0; b < 8; b++)
			if (combo & (1u << b))
				o.mr_mode |= bits[b];
		fi_info* got = nullptr;
		int r = GetInfo(o, &got);
		if (r == -FI_ENODATA)
			continue;
		ASSERT_EQ(r, 0) << Err(r);
		for (fi_info* i = got; i; i = i->next)
			EXPECT_EQ(i->domain_attr->mr_mode & ~o.mr_mode, 0)
				<< "asked 0x" << std::hex << o.mr_mode
				<< ", got 0x" << i->domain_attr->mr_mode;
		fi_freeinfo(got);
	}
}

// fi_getinfo(3), src_addr: "On output a provider shall return an address
// that corresponds to the indicated fabric, domain, node, and/or service"
// — without FI_SOURCE too, with or without a destination (fabtests'
// getinfo_test, no_hints1 and src_dest1).
TEST_F(InfoTest, EveryOfferHasASourceAddress)
{
	Options o;
	fi_info* hints = MakeHints(o);
	ASSERT_NE(hints, nullptr);
	for (const char* node : { (const char*)nullptr, "127.0.0.1" }) {
		SCOPED_TRACE(node ? node : "no node");
		fi_info* got = nullptr;
		int r = fi_getinfo(kApiVersion, node, node ? "9228" : nullptr,
				   0, hints, &got);
		if (r == -FI_ENODATA)
			continue;
		ASSERT_EQ(r, 0) << Err(r);
		for (fi_info* i = got; i; i = i->next) {
			EXPECT_NE(i->src_addr, nullptr);
			EXPECT_GT(i->src_addrlen, 0u);
			if (node) {
				EXPECT_NE(i->dest_addr, nullptr);
			}
		}
		fi_freeinfo(got);
	}
	fi_freeinfo(hints);
}

// fi_getinfo(3): with node and service NULL, the hints' destination
// address is used: every offer carries it.
TEST_F(InfoTest, HintedDestinationIsKeptWithoutNodeAndService)
{
	Options o;
	fi_info* hints = MakeHints(o);
	ASSERT_NE(hints, nullptr);
	sockaddr_in sin{};
	sin.sin_family = AF_INET;
	sin.sin_port = htons(49152);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	hints->addr_format = FI_SOCKADDR_IN;
	hints->dest_addr = malloc(sizeof(sin));
	ASSERT_NE(hints->dest_addr, nullptr);
	memcpy(hints->dest_addr, &sin, sizeof(sin));
	hints->dest_addrlen = sizeof(sin);
	int r = fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints, &info);
	fi_freeinfo(hints);
	if (r == -FI_ENODATA)
		GTEST_SKIP() << Provider() << " offers no IPv4 addressing";
	ASSERT_EQ(r, 0) << Err(r);
	for (fi_info* i = info; i; i = i->next) {
		ASSERT_EQ(i->dest_addrlen, sizeof(sin));
		ASSERT_NE(i->dest_addr, nullptr);
		EXPECT_EQ(memcmp(i->dest_addr, &sin, sizeof(sin)), 0);
	}
}

// fi_getinfo(3): FI_SOCKADDR is an address "of type sockaddr", its format
// "determined at run time by interfaces examining the sa_family field": it
// asks for any socket address, which an IPv4 one is.
TEST_F(InfoTest, SockaddrHintFindsSocketAddressing)
{
	Options o;
	fi_info* hints = MakeHints(o);
	ASSERT_NE(hints, nullptr);
	hints->addr_format = FI_SOCKADDR_IN;
	int r = fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints, &info);
	if (r == -FI_ENODATA) {
		fi_freeinfo(hints);
		GTEST_SKIP() << Provider() << " offers no IPv4 addressing";
	}
	ASSERT_EQ(r, 0) << Err(r);
	fi_freeinfo(info);
	info = nullptr;
	hints->addr_format = FI_SOCKADDR;
	r = fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints, &info);
	fi_freeinfo(hints);
	ASSERT_EQ(r, 0) << "FI_SOCKADDR finds nothing where FI_SOCKADDR_IN "
			   "finds offers: "
			<< Err(r);
	for (fi_info* i = info; i; i = i->next)
		EXPECT_TRUE(i->addr_format == FI_SOCKADDR ||
			    i->addr_format == FI_SOCKADDR_IN ||
			    i->addr_format == FI_SOCKADDR_IN6 ||
			    i->addr_format == FI_SOCKADDR_IB)
			<< "addr_format " << i->addr_format;
}

TEST_F(InfoTest, UnknownProviderReturnsENODATA)
{
	fi_info* hints = fi_allocinfo();
	hints->ep_attr->type = EpType();
	hints->fabric_attr->prov_name = strdup("no_such_provider_xyz");
	int r = fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints, &info);
	fi_freeinfo(hints);
	EXPECT_EQ(r, -FI_ENODATA) << Err(r);
	EXPECT_EQ(info, nullptr);
	info = nullptr;
}

TEST_F(InfoTest, DupinfoCopiesEveryAttribute)
{
	Options o;
	GET_OR_SKIP(o);
	fi_info* dup = fi_dupinfo(info);
	ASSERT_NE(dup, nullptr);
	EXPECT_EQ(dup->next, nullptr) << "fi_dupinfo copies one entry";
	EXPECT_EQ(dup->caps, info->caps);
	EXPECT_EQ(dup->mode, info->mode);
	EXPECT_EQ(dup->addr_format, info->addr_format);
	EXPECT_EQ(dup->ep_attr->type, info->ep_attr->type);
	EXPECT_EQ(dup->ep_attr->max_msg_size, info->ep_attr->max_msg_size);
	EXPECT_EQ(dup->tx_attr->size, info->tx_attr->size);
	EXPECT_EQ(dup->rx_attr->size, info->rx_attr->size);
	EXPECT_EQ(dup->tx_attr->inject_size, info->tx_attr->inject_size);
	EXPECT_EQ(dup->domain_attr->mr_mode, info->domain_attr->mr_mode);
	EXPECT_NE(dup->domain_attr->name, info->domain_attr->name)
		<< "strings are copied, not shared";
	EXPECT_STREQ(dup->domain_attr->name, info->domain_attr->name);
	EXPECT_STREQ(dup->fabric_attr->name, info->fabric_attr->name);
	EXPECT_STREQ(dup->fabric_attr->prov_name, info->fabric_attr->prov_name);
	fi_freeinfo(dup);
}

TEST_F(InfoTest, FabricAndDomainOpenAndClose)
{
	Options o;
	GET_OR_SKIP(o);
	fid_fabric* fabric = nullptr;
	CONF_OK(fi_fabric(info->fabric_attr, &fabric, nullptr));
	ASSERT_NE(fabric, nullptr);
	fid_domain* d1 = nullptr;
	fid_domain* d2 = nullptr;
	CONF_OK(fi_domain(fabric, info, &d1, nullptr));
	// Two opens of one domain name: two independent domains (two NICs
	// of one simulated node, or two opens of one real NIC).
	CONF_OK(fi_domain(fabric, info, &d2, nullptr));
	EXPECT_NE(d1, d2);
	EXPECT_EQ(fi_close(&d2->fid), 0);
	EXPECT_EQ(fi_close(&d1->fid), 0);
	EXPECT_EQ(fi_close(&fabric->fid), 0);
}

TEST_F(InfoTest, FabricContextIsKept)
{
	Options o;
	GET_OR_SKIP(o);
	int ctx = 0;
	fid_fabric* fabric = nullptr;
	CONF_OK(fi_fabric(info->fabric_attr, &fabric, &ctx));
	EXPECT_EQ(fabric->fid.context, &ctx);
	EXPECT_EQ(fabric->fid.fclass, (size_t)FI_CLASS_FABRIC);
	fid_domain* d = nullptr;
	CONF_OK(fi_domain(fabric, info, &d, &ctx));
	EXPECT_EQ(d->fid.context, &ctx);
	EXPECT_EQ(d->fid.fclass, (size_t)FI_CLASS_DOMAIN);
	EXPECT_EQ(fi_close(&d->fid), 0);
	EXPECT_EQ(fi_close(&fabric->fid), 0);
}

TEST_F(InfoTest, RmaAndAtomicCapsComeWithKeys)
{
	Options o;
	o.caps = FI_MSG | FI_RMA | FI_ATOMIC;
	GET_OR_SKIP(o);
	EXPECT_EQ(info->caps & (FI_RMA | FI_ATOMIC), FI_RMA | FI_ATOMIC);
	EXPECT_GE(info->domain_attr->mr_key_size, 1u);
}

}  // namespace
}  // namespace conf
