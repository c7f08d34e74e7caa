// fi_allocinfo / fi_dupinfo / fi_freeinfo: deep copies that own everything.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <cstring>

#include <rdma/fabric.h>

namespace {

TEST(Allocinfo, EveryAttributeIsAllocatedAndZeroed)
{
	fi_info *info = fi_allocinfo();
	ASSERT_NE(info, nullptr);
	ASSERT_NE(info->tx_attr, nullptr);
	ASSERT_NE(info->rx_attr, nullptr);
	ASSERT_NE(info->ep_attr, nullptr);
	ASSERT_NE(info->domain_attr, nullptr);
	ASSERT_NE(info->fabric_attr, nullptr);
	EXPECT_EQ(info->nic, nullptr);
	EXPECT_EQ(info->caps, 0u);
	EXPECT_EQ(info->tx_attr->size, 0u);
	EXPECT_EQ(info->domain_attr->name, nullptr);
	fi_freeinfo(info);
}

fi_info *populated()
{
	fi_info *info = fi_allocinfo();
	auto *sin = (sockaddr_in *)calloc(1, sizeof(sockaddr_in));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(7471);
	info->src_addr = sin;
	info->src_addrlen = sizeof(*sin);
	info->dest_addr = strdup("fi_addr_str://x");
	info->dest_addrlen = strlen("fi_addr_str://x") + 1;
	info->caps = FI_MSG | FI_TAGGED;
	info->tx_attr->size = 17;
	info->ep_attr->auth_key = (uint8_t *)malloc(4);
	memcpy(info->ep_attr->auth_key, "\1\2\3\4", 4);
	info->ep_attr->auth_key_size = 4;
	info->domain_attr->name = strdup("dom");
	info->domain_attr->auth_key = (uint8_t *)malloc(2);
	memcpy(info->domain_attr->auth_key, "\7\7", 2);
	info->domain_attr->auth_key_size = 2;
	info->fabric_attr->name = strdup("fab");
	info->fabric_attr->prov_name = strdup("prov");
	info->handle = (fid_t)0x1234;
	return info;
}

TEST(Dupinfo, DeepCopyOwnsEverythingButTheHandle)
{
	fi_info *orig = populated();
	fi_info *dup = fi_dupinfo(orig);
	ASSERT_NE(dup, nullptr);

	EXPECT_NE(dup->src_addr, orig->src_addr);
	EXPECT_EQ(memcmp(dup->src_addr, orig->src_addr, orig->src_addrlen), 0);
	EXPECT_STREQ((char *)dup->dest_addr, "fi_addr_str://x");
	EXPECT_NE(dup->tx_attr, orig->tx_attr);
	EXPECT_EQ(dup->tx_attr->size, 17u);
	EXPECT_NE(dup->ep_attr->auth_key, orig->ep_attr->auth_key);
	EXPECT_EQ(memcmp(dup->ep_attr->auth_key, "\1\2\3\4", 4), 0);
	EXPECT_NE(dup->domain_attr->name, orig->domain_attr->name);
	EXPECT_STREQ(dup->domain_attr->name, "dom");
	EXPECT_EQ(memcmp(dup->domain_attr->auth_key, "\7\7", 2), 0);
	EXPECT_STREQ(dup->fabric_attr->name, "fab");
	EXPECT_STREQ(dup->fabric_attr->prov_name, "prov");
	EXPECT_EQ(dup->handle, orig->handle);
	EXPECT_EQ(dup->next, nullptr);

	// The copy survives the original (ASan checks the rest).
	orig->handle = nullptr;
	fi_freeinfo(orig);
	EXPECT_STREQ(dup->domain_attr->name, "dom");
	fi_freeinfo(dup);
}

TEST(Dupinfo, CopiesOneEntryNotTheList)
{
	fi_info *a = fi_allocinfo(), *b = fi_allocinfo();
	a->next = b;
	fi_info *dup = fi_dupinfo(a);
	EXPECT_EQ(dup->next, nullptr);
	fi_freeinfo(dup);
	fi_freeinfo(a);  // frees the whole list
}

TEST(Dupinfo, NullAttributesStayEmpty)
{
	fi_info bare = {};
	bare.caps = FI_RMA;
	fi_info *dup = fi_dupinfo(&bare);
	ASSERT_NE(dup, nullptr);
	EXPECT_EQ(dup->caps, FI_RMA);
	ASSERT_NE(dup->tx_attr, nullptr);
	EXPECT_EQ(dup->tx_attr->size, 0u);
	fi_freeinfo(dup);
}

TEST(Freeinfo, NullIsANoOp)
{
	fi_freeinfo(nullptr);
}

}  // namespace
