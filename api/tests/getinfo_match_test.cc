// fi_getinfo matching rules (fi_getinfo(3)), table-driven against the test
// providers in test_provider.c, plus every class of bad input.
#include <gtest/gtest.h>

#include <netinet/in.h>

#include <functional>
#include <string>
#include <vector>

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>

#include "test_provider.h"

namespace {

using HintsFn = std::function<void(fi_info *)>;
using CheckFn = std::function<void(const fi_info *)>;

struct Row {
	const char *name;
	uint32_t version;
	HintsFn hints;  // null: no hints at all
	int expect_ret;
	// One "prov:EP:domain" word per returned entry, in order.
	std::vector<std::string> expect;
	CheckFn check = nullptr;
	uint64_t flags = 0;
	const char *node = nullptr;
	const char *service = nullptr;
};

const uint32_t V = FI_VERSION(1, 17);

std::string describe(const fi_info *i)
{
	static const char *ep[] = {"UNSPEC", "MSG", "DGRAM", "RDM"};
	const char *dom = i->domain_attr->name;
	return std::string(i->fabric_attr->prov_name) + ":" +
	       ep[i->ep_attr->type] + ":" + (dom ? dom : "");
}

const std::string STRICT = "testprov:RDM:test0";   // offer 0 and offer 1
const std::string MSG = "testprov:MSG:test0";
const std::string DGRAM = "testprov:DGRAM:test1";

std::vector<Row> rows()
{
	return {
		{"null hints list every offer", V, nullptr, 0,
		 {STRICT, STRICT, MSG, DGRAM},
		 [](const fi_info *i) {
			 EXPECT_EQ(i->mode, FI_CONTEXT);
			 EXPECT_EQ(i->domain_attr->mr_mode, TESTPROV_STRICT_MR);
			 EXPECT_EQ(i->fabric_attr->prov_version, FI_VERSION(3, 1));
			 EXPECT_EQ(i->fabric_attr->api_version, V);
			 EXPECT_EQ(i->caps, TESTPROV_CAPS);
			 EXPECT_EQ(i->tx_attr->op_flags, 0u);
			 EXPECT_EQ(i->next->mode, 0u);
		 }},
		{"zero modes exclude the offer needing FI_CONTEXT", V,
		 [](fi_info *h) { h->caps = FI_TAGGED; }, 0, {STRICT},
		 [](const fi_info *i) {
			 EXPECT_EQ(i->mode, 0u);
			 EXPECT_EQ(i->domain_attr->mr_mode, 0);
			 // Primary caps narrowed to the request, all modifiers,
			 // no unrequested secondary caps but the reach.
			 EXPECT_EQ(i->caps, FI_TAGGED | FI_READ | FI_WRITE | FI_SEND |
						    FI_RECV | FI_REMOTE_READ |
						    FI_REMOTE_WRITE | FI_LOCAL_COMM |
						    FI_REMOTE_COMM);
			 EXPECT_FALSE(i->tx_attr->caps & FI_MSG);
		 }},
		{"FI_CONTEXT and strict MR modes get the strict offer first", V,
		 [](fi_info *h) {
			 h->caps = FI_TAGGED;
			 h->mode = FI_CONTEXT;
			 h->domain_attr->mr_mode = TESTPROV_STRICT_MR;
		 },
		 0, {STRICT, STRICT},
		 [](const fi_info *i) {
			 EXPECT_EQ(i->mode, FI_CONTEXT);
			 EXPECT_EQ(i->domain_attr->mr_mode, TESTPROV_STRICT_MR);
			 EXPECT_EQ(i->next->domain_attr->mr_mode, 0);
		 }},
		{"FI_CONTEXT2 alone does not satisfy FI_CONTEXT", V,
		 [](fi_info *h) {
			 h->mode = FI_CONTEXT2;
			 h->domain_attr->mr_mode = TESTPROV_STRICT_MR;
			 h->ep_attr->type = FI_EP_RDM;
		 },
		 0, {STRICT},
		 [](const fi_info *i) { EXPECT_EQ(i->mode, 0u); }},
		{"partial MR support falls back to the relaxed offer", V,
		 [](fi_info *h) {
			 h->mode = FI_CONTEXT;
			 h->domain_attr->mr_mode = FI_MR_LOCAL;
			 h->ep_attr->type = FI_EP_RDM;
		 },
		 0, {STRICT},
		 [](const fi_info *i) { EXPECT_EQ(i->domain_attr->mr_mode, 0); }},
		// fi_getinfo(3): FI_LOCAL_MR "is ignored if the application
		// version is 1.5 or later and the domain mr_mode is set to
		// anything other than FI_MR_BASIC or FI_MR_SCALABLE".
		{"from 1.5 on the FI_LOCAL_MR mode bit is not FI_MR_LOCAL", V,
		 [](fi_info *h) {
			 h->mode = FI_CONTEXT | FI_LOCAL_MR;
			 h->domain_attr->mr_mode =
				 FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
			 h->ep_attr->type = FI_EP_RDM;
		 },
		 0, {STRICT},
		 [](const fi_info *i) {
			 EXPECT_EQ(i->domain_attr->mr_mode, 0);
		 }},
		{"modifiers narrow to the ones asked", V,
		 [](fi_info *h) { h->caps = FI_MSG | FI_SEND; }, 0,
		 {STRICT, MSG, DGRAM},
		 [](const fi_info *i) {
			 EXPECT_EQ(i->caps, FI_MSG | FI_SEND | FI_LOCAL_COMM |
						    FI_REMOTE_COMM);
			 EXPECT_EQ(i->tx_attr->caps & FI_RMA, 0u);
			 EXPECT_EQ(i->rx_attr->caps & FI_RECV, 0u);
		 }},
		{"unoffered secondary capability", V,
		 [](fi_info *h) { h->caps = FI_MSG | FI_TRIGGER; }, -FI_ENODATA,
		 {}},
		{"requested secondary capability is reported", V,
		 [](fi_info *h) {
			 h->caps = FI_TAGGED | FI_SOURCE | FI_DIRECTED_RECV;
		 },
		 0, {STRICT},
		 [](const fi_info *i) {
			 EXPECT_TRUE(i->caps & FI_SOURCE);
			 EXPECT_TRUE(i->caps & FI_DIRECTED_RECV);
			 EXPECT_FALSE(i->caps & FI_MULTI_RECV);
		 }},
		// fi_getinfo(3): a provider "may optionally report non-selected
		// secondary capabilities if doing so would not compromise
		// performance or security": FI_RMA_EVENT, where offered, comes
		// with RMA or atomics at the target (fabtests' fi_rma_bw -t
		// counter binds a counter for remote writes without asking).
		{"FI_RMA_EVENT comes with RMA at the target where offered", V,
		 [](fi_info *h) { h->caps = FI_MSG | FI_RMA; }, 0,
		 {STRICT, MSG},
		 [](const fi_info *i) {
			 bool offered = i->ep_attr->type == FI_EP_RDM;
			 EXPECT_EQ(!!(i->caps & FI_RMA_EVENT), offered);
			 EXPECT_EQ(!!(i->rx_attr->caps & FI_RMA_EVENT), offered);
		 }},
		{"... not for an initiator only", V,
		 [](fi_info *h) { h->caps = FI_RMA | FI_WRITE | FI_READ; }, 0,
		 {STRICT, MSG},
		 [](const fi_info *i) {
			 EXPECT_FALSE(i->caps & FI_RMA_EVENT);
		 }},
		{"... nor without RMA or atomics", V,
		 [](fi_info *h) { h->caps = FI_TAGGED; }, 0, {STRICT},
		 [](const fi_info *i) {
			 EXPECT_FALSE(i->caps & FI_RMA_EVENT);
		 }},
		{"endpoint type MSG", V,
		 [](fi_info *h) { h->ep_attr->type = FI_EP_MSG; }, 0, {MSG},
		 [](const fi_info *i) {
			 EXPECT_EQ(i->domain_attr->data_progress, FI_PROGRESS_AUTO);
		 }},
		{"manual progress accepted from an auto-progress offer", V,
		 [](fi_info *h) {
			 h->ep_attr->type = FI_EP_MSG;
			 h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
		 },
		 0, {MSG}},
		{"auto progress not offered by RDM", V,
		 [](fi_info *h) {
			 h->ep_attr->type = FI_EP_RDM;
			 h->domain_attr->data_progress = FI_PROGRESS_AUTO;
		 },
		 -FI_ENODATA, {}},
		{"address format mismatch", V,
		 [](fi_info *h) {
			 h->ep_attr->type = FI_EP_DGRAM;
			 h->addr_format = FI_SOCKADDR_IN;
		 },
		 -FI_ENODATA, {}},
		{"address format FI_ADDR_STR", V,
		 [](fi_info *h) { h->addr_format = FI_ADDR_STR; }, 0, {DGRAM}},
		{"fabric name", V,
		 [](fi_info *h) { h->fabric_attr->name = strdup("testfab"); }, 0,
		 {STRICT, MSG, DGRAM}},
		{"unknown fabric name", V,
		 [](fi_info *h) { h->fabric_attr->name = strdup("nope"); },
		 -FI_ENODATA, {}},
		{"domain name", V,
		 [](fi_info *h) { h->domain_attr->name = strdup("test1"); }, 0,
		 {DGRAM}},
		{"provider by name", V,
		 [](fi_info *h) { h->fabric_attr->prov_name = strdup("TESTPROV"); },
		 0, {STRICT, MSG, DGRAM}},
		{"provider excluded by name", V,
		 [](fi_info *h) { h->fabric_attr->prov_name = strdup("^testprov"); },
		 -FI_ENODATA, {}},
		{"an older provider serves an older API", FI_VERSION(1, 5),
		 [](fi_info *h) { h->fabric_attr->prov_name = strdup("oldprov"); },
		 0, {"oldprov:RDM:old0"},
		 [](const fi_info *i) {
			 EXPECT_EQ(i->fabric_attr->api_version, FI_VERSION(1, 5));
		 }},
		{"an older provider is skipped for a newer API", V,
		 [](fi_info *h) { h->fabric_attr->prov_name = strdup("oldprov"); },
		 -FI_ENODATA, {}},
		{"tx size at the limit", V,
		 [](fi_info *h) {
			 h->tx_attr->size = TESTPROV_TX_SIZE;
			 h->ep_attr->type = FI_EP_MSG;
		 },
		 0, {MSG},
		 [](const fi_info *i) {
			 EXPECT_GE(i->tx_attr->size, (size_t)TESTPROV_TX_SIZE);
		 }},
		{"tx size over the limit", V,
		 [](fi_info *h) { h->tx_attr->size = TESTPROV_TX_SIZE + 1; },
		 -FI_ENODATA, {}},
		{"inject size over the limit", V,
		 [](fi_info *h) { h->tx_attr->inject_size = TESTPROV_INJECT_SIZE + 1; },
		 -FI_ENODATA, {}},
		{"message size over the limit", V,
		 [](fi_info *h) {
			 h->ep_attr->max_msg_size = (size_t)TESTPROV_MAX_MSG + 1;
		 },
		 -FI_ENODATA, {}},
		{"remote CQ data larger than offered", V,
		 [](fi_info *h) { h->domain_attr->cq_data_size = 8; }, -FI_ENODATA,
		 {}},
		{"shared tx context not offered", V,
		 [](fi_info *h) { h->ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT; },
		 -FI_ENODATA, {}},
		{"thread safety excludes the domain-threaded offer", V,
		 [](fi_info *h) { h->domain_attr->threading = FI_THREAD_SAFE; }, 0,
		 {STRICT, MSG}},
		{"domain threading is served by all, and echoed", V,
		 [](fi_info *h) { h->domain_attr->threading = FI_THREAD_DOMAIN; },
		 0, {STRICT, MSG, DGRAM},
		 [](const fi_info *i) {
			 EXPECT_EQ(i->domain_attr->threading, FI_THREAD_DOMAIN);
		 }},
		{"AV map excludes the table-only offer", V,
		 [](fi_info *h) { h->domain_attr->av_type = FI_AV_MAP; }, 0,
		 {STRICT, MSG},
		 [](const fi_info *i) {
			 EXPECT_EQ(i->domain_attr->av_type, FI_AV_MAP);
		 }},
		{"op_flags asked are the defaults returned", V,
		 [](fi_info *h) {
			 h->ep_attr->type = FI_EP_MSG;
			 h->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
		 },
		 0, {MSG},
		 [](const fi_info *i) {
			 EXPECT_EQ(i->tx_attr->op_flags, FI_DELIVERY_COMPLETE);
		 }},
		{"unsupported op flag", V,
		 [](fi_info *h) { h->tx_attr->op_flags = FI_MORE; }, -FI_ENODATA,
		 {}},
		{"unoffered message ordering", V,
		 [](fi_info *h) { h->tx_attr->msg_order = FI_ORDER_WAR; },
		 -FI_ENODATA, {}},
		{"offered message ordering", V,
		 [](fi_info *h) {
			 h->tx_attr->msg_order = FI_ORDER_SAS;
			 h->ep_attr->type = FI_EP_MSG;
		 },
		 0, {MSG}},
		{"API 1.4 FI_MR_BASIC with FI_LOCAL_MR", FI_VERSION(1, 4),
		 [](fi_info *h) {
			 h->mode = FI_CONTEXT | FI_LOCAL_MR;
			 h->domain_attr->mr_mode = FI_MR_BASIC;
			 h->ep_attr->type = FI_EP_RDM;
			 h->fabric_attr->prov_name = strdup("testprov");
		 },
		 0, {STRICT, STRICT},
		 [](const fi_info *i) {
			 EXPECT_EQ(i->domain_attr->mr_mode, FI_MR_BASIC);
			 EXPECT_TRUE(i->mode & FI_LOCAL_MR);
		 }},
		{"API 1.4 FI_MR_SCALABLE only gets the relaxed offer",
		 FI_VERSION(1, 4),
		 [](fi_info *h) {
			 h->domain_attr->mr_mode = FI_MR_SCALABLE;
			 h->ep_attr->type = FI_EP_RDM;
			 h->fabric_attr->prov_name = strdup("testprov");
		 },
		 0, {STRICT},
		 [](const fi_info *i) {
			 EXPECT_EQ(i->domain_attr->mr_mode, FI_MR_SCALABLE);
		 }},
		{"API 1.4 without hints states FI_LOCAL_MR", FI_VERSION(1, 4),
		 nullptr, 0, {"oldprov:RDM:old0", STRICT, STRICT, MSG, DGRAM},
		 [](const fi_info *i) {
			 // oldprov needs no registration: scalable.
			 EXPECT_EQ(i->domain_attr->mr_mode, FI_MR_SCALABLE);
			 EXPECT_EQ(i->next->domain_attr->mr_mode, FI_MR_BASIC);
			 EXPECT_TRUE(i->next->mode & FI_LOCAL_MR);
		 }},
		{"FI_MR_BASIC combined with other bits", V,
		 [](fi_info *h) {
			 h->domain_attr->mr_mode = FI_MR_BASIC | FI_MR_LOCAL;
		 },
		 -FI_ENODATA, {}},
		{"fi_info's default hints (all modes, all MR bits)", V,
		 [](fi_info *h) {
			 h->mode = ~0ULL;
			 h->domain_attr->mode = ~0ULL;
			 h->domain_attr->mr_mode = ~(FI_MR_BASIC | FI_MR_SCALABLE);
		 },
		 0, {STRICT, STRICT, MSG, DGRAM}},
		{"node, service and flags reach the provider", V, nullptr, 0,
		 {STRICT, STRICT, MSG, DGRAM},
		 [](const fi_info *) {
			 EXPECT_STREQ(testprov_last_call.node, "10.0.0.2");
			 EXPECT_STREQ(testprov_last_call.service, "4791");
			 EXPECT_EQ(testprov_last_call.flags,
				   FI_SOURCE | FI_NUMERICHOST);
		 },
		 FI_SOURCE | FI_NUMERICHOST, "10.0.0.2", "4791"},
		{"FI_PROV_ATTR_ONLY lists each provider once", V, nullptr, 0,
		 {"testprov:UNSPEC:"},
		 [](const fi_info *i) {
			 EXPECT_EQ(i->fabric_attr->prov_version, FI_VERSION(3, 1));
			 EXPECT_EQ(i->caps, 0u);
		 },
		 FI_PROV_ATTR_ONLY},
		// fi_endpoint(3): a context's capabilities are a subset of the
		// endpoint's.
		{"tx caps with a primary capability the endpoint lacks", V,
		 [](fi_info *h) {
			 h->caps = FI_TAGGED;
			 h->tx_attr->caps = FI_MSG;
		 },
		 -FI_ENODATA, {}},
		{"rx caps with a primary capability the endpoint lacks", V,
		 [](fi_info *h) {
			 h->caps = FI_MSG;
			 h->rx_attr->caps = FI_TAGGED;
		 },
		 -FI_ENODATA, {}},
		// A hinted address must be one of the offer's format.
		{"src_addr of a socket address's wrong length", V,
		 [](fi_info *h) {
			 auto *sin = (sockaddr_in *)calloc(1, 64);
			 sin->sin_family = AF_INET;
			 h->src_addr = sin;
			 h->src_addrlen = 3;
			 h->ep_attr->type = FI_EP_RDM;
		 },
		 -FI_ENODATA, {}},
		{"src_addr of another family", V,
		 [](fi_info *h) {
			 auto *sin = (sockaddr_in *)calloc(1, sizeof(sockaddr_in));
			 sin->sin_family = AF_INET6;
			 h->src_addr = sin;
			 h->src_addrlen = sizeof(sockaddr_in);
			 h->ep_attr->type = FI_EP_RDM;
		 },
		 -FI_ENODATA, {}},
		{"dest_addr of another family", V,
		 [](fi_info *h) {
			 auto *sin = (sockaddr_in *)calloc(1, sizeof(sockaddr_in));
			 sin->sin_family = 9999;
			 h->dest_addr = sin;
			 h->dest_addrlen = sizeof(sockaddr_in);
			 h->ep_attr->type = FI_EP_RDM;
		 },
		 -FI_ENODATA, {}},
		// Bad input: each gets its documented error.
		{"newer API than the library", FI_VERSION(1, 18), nullptr,
		 -FI_ENOSYS, {}},
		{"major version 2", FI_VERSION(2, 0), nullptr, -FI_ENOSYS, {}},
		{"major version 0", FI_VERSION(0, 9), nullptr, -FI_ENOSYS, {}},
		{"flags that are not getinfo flags", V, nullptr, -FI_EBADFLAGS, {},
		 nullptr, FI_MSG},
		{"FI_SOURCE without node or service", V, nullptr, -FI_EINVAL, {},
		 nullptr, FI_SOURCE},
		{"src_addr without length", V,
		 [](fi_info *h) {
			 h->src_addr = malloc(16);
			 h->src_addrlen = 0;
		 },
		 -FI_EINVAL, {}},
		{"dest_addr without length", V,
		 [](fi_info *h) {
			 h->dest_addr = malloc(16);
			 h->dest_addrlen = 0;
		 },
		 -FI_EINVAL, {}},
		{"undefined capability bit", V,
		 [](fi_info *h) { h->caps = FI_MSG | (1ULL << 62); }, -FI_EBADFLAGS,
		 {}},
		{"undefined tx capability bit", V,
		 [](fi_info *h) { h->tx_attr->caps = 1ULL << 63; }, -FI_EBADFLAGS,
		 {}},
		{"FI_SOURCE_ERR without FI_SOURCE", V,
		 [](fi_info *h) { h->caps = FI_MSG | FI_SOURCE_ERR; },
		 -FI_EBADFLAGS, {}},
		{"endpoint type out of range", V,
		 [](fi_info *h) { h->ep_attr->type = (fi_ep_type)77; }, -FI_EINVAL,
		 {}},
		{"address format out of range", V,
		 [](fi_info *h) { h->addr_format = 999; }, -FI_EINVAL, {}},
		{"threading out of range", V,
		 [](fi_info *h) { h->domain_attr->threading = (fi_threading)42; },
		 -FI_EINVAL, {}},
		{"AV type out of range", V,
		 [](fi_info *h) { h->domain_attr->av_type = (fi_av_type)9; },
		 -FI_EINVAL, {}},
		{"progress out of range", V,
		 [](fi_info *h) { h->domain_attr->data_progress = (fi_progress)7; },
		 -FI_EINVAL, {}},
	};
}

class GetinfoMatch : public ::testing::TestWithParam<Row> {};

TEST_P(GetinfoMatch, Row)
{
	const Row &row = GetParam();
	fi_info *hints = nullptr, *info = (fi_info *)0x1;

	if (row.hints) {
		hints = fi_allocinfo();
		ASSERT_NE(hints, nullptr);
		row.hints(hints);
	}
	int ret = fi_getinfo(row.version, row.node, row.service, row.flags,
			     hints, &info);
	EXPECT_EQ(ret, row.expect_ret) << fi_strerror(-ret);
	std::vector<std::string> got;
	for (fi_info *i = ret ? nullptr : info; i; i = i->next)
		got.push_back(describe(i));
	EXPECT_EQ(got, row.expect);
	if (ret) {
		EXPECT_EQ(info, nullptr) << "info must be NULL on error";
	}
	if (!ret && row.check)
		row.check(info);
	if (!ret)
		fi_freeinfo(info);
	fi_freeinfo(hints);
}

INSTANTIATE_TEST_SUITE_P(Table, GetinfoMatch, ::testing::ValuesIn(rows()),
			 [](const ::testing::TestParamInfo<Row> &p) {
				 std::string n = p.param.name;
				 for (char &c : n)
					 if (!isalnum((unsigned char)c))
						 c = '_';
				 return n;
			 });

TEST(Getinfo, NullInfoPointerIsInvalid)
{
	EXPECT_EQ(fi_getinfo(V, nullptr, nullptr, 0, nullptr, nullptr),
		  -FI_EINVAL);
}

TEST(Getinfo, HintsWithoutAttributeStructures)
{
	fi_info hints = {};
	fi_info *info = nullptr;

	hints.caps = FI_MSG;
	ASSERT_EQ(fi_getinfo(V, nullptr, nullptr, 0, &hints, &info), 0);
	// Zero modes: the relaxed RDM offer comes first.
	EXPECT_EQ(describe(info), STRICT);
	EXPECT_EQ(info->mode, 0u);
	fi_freeinfo(info);
}

TEST(Getinfo, PassiveEndpointHandleIsHandedBack)
{
	fid pep = {};
	fi_info *hints = fi_allocinfo(), *info = nullptr;

	pep.fclass = FI_CLASS_PEP;
	hints->handle = &pep;
	hints->ep_attr->type = FI_EP_MSG;
	ASSERT_EQ(fi_getinfo(V, nullptr, nullptr, 0, hints, &info), 0);
	EXPECT_EQ(info->handle, &pep);
	fi_freeinfo(info);
	hints->handle = nullptr;
	fi_freeinfo(hints);
}

TEST(Getinfo, ProviderErrorsPropagate)
{
	fi_info *info = nullptr;

	testprov_fail_with(-FI_ENODATA);
	EXPECT_EQ(fi_getinfo(V, nullptr, nullptr, 0, nullptr, &info),
		  -FI_ENODATA);
	testprov_fail_with(-FI_ENOMEM);
	EXPECT_EQ(fi_getinfo(V, nullptr, nullptr, 0, nullptr, &info),
		  -FI_ENOMEM);
	// A broken provider is still listed under FI_PROV_ATTR_ONLY.
	ASSERT_EQ(fi_getinfo(V, nullptr, nullptr, FI_PROV_ATTR_ONLY, nullptr,
			     &info), 0);
	EXPECT_STREQ(info->fabric_attr->prov_name, "testprov");
	fi_freeinfo(info);
	testprov_fail_with(0);
}

}  // namespace
