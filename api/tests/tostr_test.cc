// fi_tostr / fi_tostr_r: every FI_TYPE_* fi_info uses, and a round trip of a
// provider's fi_info through the text.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <cstring>
#include <string>

#include <rdma/fabric.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_trigger.h>
#include <rdma/providers/fi_log.h>

#include "api/tests/info_text.h"
#include "test_provider.h"

namespace {

template <typename T> std::string str(T value, fi_type type)
{
	return fi_tostr(&value, type);
}

TEST(Tostr, FlagSets)
{
	EXPECT_EQ(str<uint64_t>(FI_MSG | FI_RMA | FI_SOURCE, FI_TYPE_CAPS),
		  "FI_MSG, FI_RMA, FI_SOURCE");
	EXPECT_EQ(str<uint64_t>(0, FI_TYPE_CAPS), "");
	EXPECT_EQ(str<uint64_t>(FI_MSG | (1ULL << 63), FI_TYPE_CAPS),
		  "FI_MSG, 0x8000000000000000");
	EXPECT_EQ(str<uint64_t>(FI_INJECT | FI_COMPLETION, FI_TYPE_OP_FLAGS),
		  "FI_COMPLETION, FI_INJECT");
	EXPECT_EQ(str<uint64_t>(FI_CONTEXT | FI_CONTEXT2, FI_TYPE_MODE),
		  "FI_CONTEXT2, FI_CONTEXT");
	EXPECT_EQ(str<uint64_t>(FI_ORDER_SAS | FI_ORDER_RMA_WAW,
				FI_TYPE_MSG_ORDER),
		  "FI_ORDER_SAS, FI_ORDER_RMA_WAW");
	EXPECT_EQ(str<uint64_t>(FI_SEND | FI_TAGGED | FI_REMOTE_CQ_DATA,
				FI_TYPE_CQ_EVENT_FLAGS),
		  "FI_TAGGED, FI_SEND, FI_REMOTE_CQ_DATA");
	EXPECT_EQ(str<int>(FI_MR_LOCAL | FI_MR_PROV_KEY, FI_TYPE_MR_MODE),
		  "FI_MR_LOCAL, FI_MR_PROV_KEY");
}

TEST(Tostr, Enumerations)
{
	EXPECT_EQ(str(FI_EP_RDM, FI_TYPE_EP_TYPE), "FI_EP_RDM");
	EXPECT_EQ(str((fi_ep_type)99, FI_TYPE_EP_TYPE), "Unknown(99)");
	EXPECT_EQ(str<uint32_t>(FI_SOCKADDR_IN, FI_TYPE_ADDR_FORMAT),
		  "FI_SOCKADDR_IN");
	EXPECT_EQ(str(FI_THREAD_DOMAIN, FI_TYPE_THREADING), "FI_THREAD_DOMAIN");
	EXPECT_EQ(str(FI_PROGRESS_MANUAL, FI_TYPE_PROGRESS),
		  "FI_PROGRESS_MANUAL");
	EXPECT_EQ(str<uint32_t>(FI_PROTO_RXM, FI_TYPE_PROTOCOL), "FI_PROTO_RXM");
	EXPECT_EQ(str(FI_AV_TABLE, FI_TYPE_AV_TYPE), "FI_AV_TABLE");
	EXPECT_EQ(str(FI_DOUBLE_COMPLEX, FI_TYPE_ATOMIC_TYPE),
		  "FI_DOUBLE_COMPLEX");
	EXPECT_EQ(str(FI_UINT128, FI_TYPE_ATOMIC_TYPE), "FI_UINT128");
	EXPECT_EQ(str(FI_CSWAP_GE, FI_TYPE_ATOMIC_OP), "FI_CSWAP_GE");
	EXPECT_EQ(str<uint32_t>(FI_CONNREQ, FI_TYPE_EQ_EVENT), "FI_CONNREQ");
	EXPECT_EQ(str(FI_OP_TSEND, FI_TYPE_OP_TYPE), "FI_OP_TSEND");
	EXPECT_EQ(str(FI_ALLREDUCE, FI_TYPE_COLLECTIVE_OP), "FI_ALLREDUCE");
	EXPECT_EQ(str(FI_HMEM_ZE, FI_TYPE_HMEM_IFACE), "FI_HMEM_ZE");
	EXPECT_EQ(str(FI_CQ_FORMAT_TAGGED, FI_TYPE_CQ_FORMAT),
		  "FI_CQ_FORMAT_TAGGED");
	EXPECT_EQ(str(FI_LOG_INFO, FI_TYPE_LOG_LEVEL), "info");
	EXPECT_EQ(str(FI_LOG_EP_DATA, FI_TYPE_LOG_SUBSYS), "ep_data");
}

TEST(Tostr, VersionIsTheLibrarysAndIgnoresData)
{
	EXPECT_STREQ(fi_tostr("1", FI_TYPE_VERSION), "1.17.0");
	// libfabric 1.17 answers NULL for NULL data, even here.
	EXPECT_EQ(fi_tostr(nullptr, FI_TYPE_VERSION), nullptr);
}

TEST(Tostr, NullDataAndUnknownType)
{
	EXPECT_EQ(fi_tostr(nullptr, FI_TYPE_CAPS), nullptr);
	// A provider's own address format (fabric.h, FI_PROV_SPECIFIC).
	uint32_t format = FI_PROV_SPECIFIC | 5;
	EXPECT_STREQ(fi_tostr(&format, FI_TYPE_ADDR_FORMAT), "Provider specific");
	// Cut short: the list ends on a name, not a separator.
	char small[8];
	uint64_t three = FI_MSG | FI_RMA | FI_TAGGED;
	EXPECT_STREQ(fi_tostr_r(small, sizeof(small), &three, FI_TYPE_CAPS),
		     "FI_MSG");
	uint64_t caps = FI_MSG;
	EXPECT_STREQ(fi_tostr(&caps, (fi_type)999), "Unknown type");
}

TEST(Tostr, ReentrantVersionTruncatesSafely)
{
	char buf[16];
	uint64_t caps = FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC;
	memset(buf, 'x', sizeof(buf));
	EXPECT_EQ(fi_tostr_r(buf, sizeof(buf), &caps, FI_TYPE_CAPS), buf);
	// Cut short, and no separator left dangling (libfabric 1.17 gives
	// the same for this length).
	EXPECT_EQ(std::string(buf), "FI_MSG, FI_RMA");
	EXPECT_EQ(fi_tostr_r(buf, 0, &caps, FI_TYPE_CAPS), nullptr);
}

TEST(Tostr, AttributeStructuresHaveHeaders)
{
	fi_info *info = fi_allocinfo();
	info->tx_attr->size = 5;
	std::string tx = fi_tostr(info->tx_attr, FI_TYPE_TX_ATTR);
	EXPECT_EQ(tx.rfind("fi_tx_attr:\n    caps: [  ]\n", 0), 0u) << tx;
	EXPECT_NE(tx.find("    size: 5\n"), std::string::npos);
	EXPECT_NE(tx.find("comp_order: [ FI_ORDER_NONE ]"), std::string::npos);
	std::string fab = fi_tostr(info->fabric_attr, FI_TYPE_FABRIC_ATTR);
	EXPECT_EQ(fab, "fi_fabric_attr:\n    name: (null)\n    prov_name: "
		       "(null)\n    prov_version: 0.0\n    api_version: 0.0\n");
	fi_freeinfo(info);
}

TEST(Tostr, AddressesPrintAsUris)
{
	fi_info *info = fi_allocinfo();
	auto *sin = (sockaddr_in *)calloc(1, sizeof(sockaddr_in));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(4791);
	inet_pton(AF_INET, "10.1.2.3", &sin->sin_addr);
	info->addr_format = FI_SOCKADDR_IN;
	info->src_addr = sin;
	info->src_addrlen = sizeof(*sin);
	std::string text = fi_tostr(info, FI_TYPE_INFO);
	EXPECT_NE(text.find("src_addr: fi_sockaddr_in://10.1.2.3:4791\n"),
		  std::string::npos) << text;
	EXPECT_NE(text.find("dest_addr: (null)\n"), std::string::npos);
	fi_freeinfo(info);
}

// Every entry the test provider returns survives fi_tostr and back.
TEST(Tostr, InfoRoundTrip)
{
	fi_info *list = nullptr;
	ASSERT_EQ(fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, nullptr,
			     &list), 0);
	int n = 0;
	for (fi_info *cur = list; cur; cur = cur->next, n++) {
		std::string err, src;
		std::string text = fi_tostr(cur, FI_TYPE_INFO);
		fi_info *back = parse_info_text(text, &err, &src);
		ASSERT_NE(back, nullptr) << err << "\n" << text;
		EXPECT_EQ(diff_infos(cur, back), "") << text;
		if (cur->addr_format == FI_SOCKADDR_IN) {
			EXPECT_EQ(src, "fi_sockaddr_in://10.0.0.1:0");
		}
		fi_freeinfo(back);
	}
	EXPECT_EQ(n, 4);
	fi_freeinfo(list);
}

// The parser is strict enough to notice a damaged text.
TEST(Tostr, RoundTripNoticesDamage)
{
	fi_info *list = nullptr;
	ASSERT_EQ(fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, nullptr,
			     &list), 0);
	std::string text = fi_tostr(list, FI_TYPE_INFO), err;
	size_t at = text.find("inject_size: 64");
	ASSERT_NE(at, std::string::npos);
	text.replace(at, strlen("inject_size: 64"), "inject_size: 65");
	fi_info *back = parse_info_text(text, &err);
	ASSERT_NE(back, nullptr) << err;
	EXPECT_EQ(diff_infos(list, back), "tx_attr->inject_size: 64 vs 65\n");
	fi_freeinfo(back);
	fi_freeinfo(list);
}

}  // namespace
