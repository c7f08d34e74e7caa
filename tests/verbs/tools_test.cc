// Debian's own rdma-core tools (ibverbs-utils) on the verbs face, through
// LD_LIBRARY_PATH: the simulated NICs are devices like any other to them.
// And Debian's fi_info on our libfabric.so.1, whose verbs provider loads the
// face. Skipped, with the reason, when a tool is not installed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/compat/run_util.h"

namespace {

std::string FaceDir()
{
	const char *srcdir = getenv("TEST_SRCDIR");
	const char *ws = getenv("TEST_WORKSPACE");
	return std::string(srcdir ? srcdir : ".") + "/" + (ws ? ws : "fabsim") +
	       "/providers/sim_verbs";
}

RunResult Tool(const std::string &tool, std::vector<std::string> args,
	       std::map<std::string, std::string> env = {})
{
	// The sanitizer runtimes when we are built with them; our library
	// directory instead of libfabric's.
	std::map<std::string, std::string> all = our_library_env();
	all["LD_LIBRARY_PATH"] = FaceDir();
	for (auto &kv : env)
		all[kv.first] = kv.second;
	args.insert(args.begin(), "/usr/bin/" + tool);
	return run_program(args, all, 30);
}

class Tools : public ::testing::Test {
protected:
	void SetUp() override
	{
		for (const char *t : { "ibv_devices", "ibv_devinfo" })
			if (!file_exists(std::string("/usr/bin/") + t))
				GTEST_SKIP() << "/usr/bin/" << t << " is missing: "
					     << "install ibverbs-utils "
						"(tools/packages.txt)";
		ASSERT_TRUE(file_exists(FaceDir() + "/libibverbs.so.1"))
			<< FaceDir();
	}
};

TEST_F(Tools, IbvDevicesListsTheSimulatedNics)
{
	RunResult r = Tool("ibv_devices", {}, { { "FABSIM_VERBS_DEVICES", "2" } });

	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("fabsim0"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("fabsim1"), std::string::npos) << r.out;
	// GUIDs are EUI-64s of the NICs' addresses: 10.0.0.1, 10.0.0.2.
	EXPECT_NE(r.out.find("00000afffe000001"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("00000afffe000002"), std::string::npos) << r.out;
}

TEST_F(Tools, IbvDevinfoShowsARoceNicFromThePreset)
{
	RunResult r = Tool("ibv_devinfo", { "-v" },
			   { { "FI_SIM_PRESET", "roce-25g" },
			     { "FI_SIM_LINK_MTU", "1024" } });

	ASSERT_EQ(r.status, 0) << r.err;
	for (const char *want :
	     { "hca_id:\tfabsim0", "PORT_ACTIVE (4)", "link_layer:\t\tEthernet",
	       "active_mtu:\t\t1024 (3)", "fw_ver:\t\t\t\tfabsim roce-25g",
	       "board_id:\t\t\tFABSIM_SIM_NIC", "atomic_cap:\t\t\tATOMIC_HCA",
	       "max_sge:\t\t\t4", "::ffff:10.0.0.1", "RoCE v2",
	       "active_width:\t\t1X", "active_speed:\t\t25.0 Gbps" })
		EXPECT_NE(r.out.find(want), std::string::npos)
			<< "missing \"" << want << "\" in\n" << r.out;
	EXPECT_EQ(r.err, "");
}

TEST_F(Tools, IbvDevinfoFollowsAnotherPreset)
{
	RunResult r = Tool("ibv_devinfo", { "-v" },
			   { { "FI_SIM_PRESET", "roce-100g" } });

	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("active_width:\t\t4X"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("active_speed:\t\t25.0 Gbps"), std::string::npos)
		<< r.out;
	EXPECT_NE(r.out.find("active_mtu:\t\t4096 (5)"), std::string::npos)
		<< r.out;
}

TEST_F(Tools, NoDevicesIsWhatTheToolsSayItIs)
{
	RunResult r = Tool("ibv_devinfo", {}, { { "FABSIM_VERBS_DEVICES", "0" } });

	EXPECT_NE(r.status, 0);
	EXPECT_NE(r.err.find("No IB devices found"), std::string::npos) << r.err;
}

TEST_F(Tools, ABadConfigurationIsExplainedOnce)
{
	RunResult r = Tool("ibv_devices", {}, { { "FI_SIM_PRESET", "bogus" } });

	EXPECT_EQ(r.status, 0) << r.err; // an empty list, as without devices
	EXPECT_EQ(r.out.find("fabsim0"), std::string::npos) << r.out;
	EXPECT_NE(r.err.find("fabsim verbs: configuration rejected"),
		  std::string::npos)
		<< r.err;
	EXPECT_NE(r.err.find("bogus"), std::string::npos) << r.err;
}

// Debian's fi_info, our libfabric.so.1, the verbs provider, the face.
RunResult FiInfo(std::map<std::string, std::string> env,
		 std::vector<std::string> args = {})
{
	std::map<std::string, std::string> all = our_library_env();
	all["LD_LIBRARY_PATH"] = FaceDir() + ":" + our_library_dir();
	for (auto &kv : env)
		all[kv.first] = kv.second;
	args.insert(args.begin(), "/usr/bin/fi_info");
	return run_program(args, all, 30);
}

class FiInfoOnFace : public ::testing::Test {
protected:
	void SetUp() override
	{
		if (!file_exists("/usr/bin/fi_info"))
			GTEST_SKIP() << "Debian's fi_info (libfabric-bin) is "
					"missing";
	}
};

TEST_F(FiInfoOnFace, ListsOneVerbsDomainPerSimulatedNic)
{
	RunResult r = FiInfo({ { "FI_PROVIDER", "verbs" },
			       { "FABSIM_VERBS_DEVICES", "2" } });

	ASSERT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_NE(r.out.find("provider: verbs"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("domain: fabsim0"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("domain: fabsim1"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("fabric: IB-0xfe80000000000000"), std::string::npos)
		<< r.out;
	EXPECT_NE(r.out.find("FI_EP_MSG"), std::string::npos) << r.out;
	EXPECT_EQ(r.err, "");
}

TEST_F(FiInfoOnFace, NoSimulatedNicIsNoVerbsProvider)
{
	RunResult r = FiInfo({ { "FI_PROVIDER", "verbs" },
			       { "FABSIM_VERBS_DEVICES", "0" } });

	EXPECT_EQ(r.status, 61) << r.out << r.err; // FI_ENODATA
	EXPECT_NE(r.err.find("no verbs provider: no RDMA device found"),
		  std::string::npos)
		<< r.err;
}

} // namespace
