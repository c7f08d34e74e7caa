// fi_getinfo of the sim provider, where it turns node and service into an
// address: a service that is a number is a port, and a port ends at 65535
// (the resolver would take 99999 for 34463 and hand back another port).
#include <gtest/gtest.h>

#include <netinet/in.h>

#include <cstring>

#include <rdma/fabric.h>

namespace {

int getinfo(const char *node, const char *service, uint64_t flags,
	    fi_info **out)
{
	fi_info *hints = fi_allocinfo();
	hints->fabric_attr->prov_name = strdup("sim");
	hints->ep_attr->type = FI_EP_RDM;
	int r = fi_getinfo(FI_VERSION(1, 17), node, service, flags, hints, out);
	fi_freeinfo(hints);
	return r;
}

TEST(SimGetinfo, AServiceIsAPortUpTo65535)
{
	fi_info *info = nullptr;
	ASSERT_EQ(getinfo(nullptr, "65535", FI_SOURCE, &info), 0);
	ASSERT_NE(info->src_addr, nullptr);
	EXPECT_EQ(ntohs(((sockaddr_in *)info->src_addr)->sin_port), 65535);
	fi_freeinfo(info);
	info = nullptr;
	EXPECT_EQ(getinfo(nullptr, "99999", FI_SOURCE, &info), -FI_ENODATA);
	EXPECT_EQ(info, nullptr);
	EXPECT_EQ(getinfo("127.0.0.1", "65536", 0, &info), -FI_ENODATA);
}

} // namespace
