// Drop-in: the distribution's own libfabric programs (fi_info, fi_strerror
// from libfabric-bin) and a program compiled against the distribution's
// headers run against our libfabric.so.1.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include <rdma/fabric.h>

#include "api/tests/info_text.h"
#include "tests/compat/run_util.h"

namespace {

const char *const kFiInfo = "/usr/bin/fi_info";
const char *const kFiStrerror = "/usr/bin/fi_strerror";

#define REQUIRE_PROGRAM(path)                                               \
	do {                                                                \
		if (!file_exists(path))                                     \
			GTEST_SKIP() << path << " is missing: install "     \
					"libfabric-bin (./dev test does)";  \
	} while (0)

RunResult run_fi_info(std::vector<std::string> args,
		  std::map<std::string, std::string> extra = {})
{
	auto env = our_library_env();
	for (auto &kv : extra)
		env[kv.first] = kv.second;
	args.insert(args.begin(), kFiInfo);
	return run_program(args, env);
}

TEST(DropIn, LibraryIsInRunfiles)
{
	ASSERT_TRUE(file_exists(our_library_dir() + "/libfabric.so.1"))
		<< our_library_dir();
}

TEST(DropIn, FiInfoListsProviders)
{
	REQUIRE_PROGRAM(kFiInfo);
	RunResult r = run_fi_info({"-l"});
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("sim:\n    version: 0.1\n"), std::string::npos)
		<< r.out;
}

TEST(DropIn, FiInfoShortListing)
{
	REQUIRE_PROGRAM(kFiInfo);
	RunResult r = run_fi_info({});
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("provider: sim\n    fabric: fabsim\n    domain: "
			     "sim0\n    version: 0.1\n    type: FI_EP_RDM\n"),
		  std::string::npos)
		<< r.out;
}

// fi_info -v prints every entry through our fi_tostr; each block must read
// back as exactly the fi_info our fi_getinfo returns in this process.
TEST(DropIn, FiInfoVerboseRoundTrip)
{
	REQUIRE_PROGRAM(kFiInfo);
	RunResult r = run_fi_info({"-v"});
	ASSERT_EQ(r.status, 0) << r.err;
	std::vector<std::string> blocks = split_info_blocks(r.out);

	fi_info *list = nullptr;
	ASSERT_EQ(fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, nullptr,
			     &list), 0);
	size_t n = 0;
	for (fi_info *cur = list; cur; cur = cur->next, n++) {
		ASSERT_LT(n, blocks.size()) << r.out;
		std::string err;
		fi_info *back = parse_info_text(blocks[n], &err);
		ASSERT_NE(back, nullptr) << err << "\n" << blocks[n];
		EXPECT_EQ(diff_infos(cur, back), "") << blocks[n];
		fi_freeinfo(back);
	}
	EXPECT_EQ(n, blocks.size());
	EXPECT_GE(n, 1u);
	fi_freeinfo(list);
}

TEST(DropIn, FiInfoEnvListsParameters)
{
	REQUIRE_PROGRAM(kFiInfo);
	RunResult r = run_fi_info({"-e"}, {{"FI_SIM_SEED", "7"}});
	ASSERT_EQ(r.status, 0) << r.err;
	// fi_info quotes values with a NUL "delimiter" when they hold no space.
	r.out.erase(std::remove(r.out.begin(), r.out.end(), '\0'), r.out.end());
	for (const char *want :
	     {"# FI_PROVIDER: String\n", "# FI_LOG_LEVEL: String\n",
	      "# FI_LOG_PROV: String\n", "# FI_LOG_SUBSYS: String\n",
	      "# FI_SIM_CONFIG: String\n", "# FI_SIM_PRESET: String\n",
	      "# FI_SIM_LINK_MTU: String\n", "FI_SIM_SEED=7\n"})
		EXPECT_NE(r.out.find(want), std::string::npos) << want;
}

TEST(DropIn, FiInfoHintsFromTheCommandLine)
{
	REQUIRE_PROGRAM(kFiInfo);
	RunResult r = run_fi_info({"-p", "sim", "-t", "FI_EP_RDM", "-c",
			       "FI_TAGGED|FI_RMA", "-v"});
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("caps: [ FI_RMA, FI_TAGGED,"), std::string::npos)
		<< r.out;
	EXPECT_EQ(r.out.find("FI_ATOMIC"), std::string::npos)
		<< "unrequested primary capability reported";
}

TEST(DropIn, FiInfoNoProviderFailsCleanly)
{
	REQUIRE_PROGRAM(kFiInfo);
	RunResult r = run_fi_info({"-p", "nosuchprov"});
	EXPECT_EQ(r.status, FI_ENODATA);
	EXPECT_NE(r.err.find("fi_getinfo: -61"), std::string::npos) << r.err;
	r = run_fi_info({}, {{"FI_PROVIDER", "^sim"}});
	EXPECT_EQ(r.status, FI_ENODATA) << r.out;
}

TEST(DropIn, BadModelValueIsNamedInTheLog)
{
	REQUIRE_PROGRAM(kFiInfo);
	RunResult r = run_fi_info({}, {{"FI_SIM_LINK_MTU", "abc"}});
	EXPECT_EQ(r.status, FI_ENODATA);
	EXPECT_NE(r.err.find("link.mtu"), std::string::npos) << r.err;
	EXPECT_NE(r.err.find("abc"), std::string::npos) << r.err;
}

TEST(DropIn, LogLevelAndFilters)
{
	REQUIRE_PROGRAM(kFiInfo);
	RunResult r = run_fi_info({"-l"}, {{"FI_LOG_LEVEL", "info"}});
	ASSERT_EQ(r.status, 0);
	EXPECT_NE(r.err.find("libfabric:"), std::string::npos) << r.err;
	EXPECT_NE(r.err.find("::core:core:"), std::string::npos) << r.err;
	r = run_fi_info({"-l"}, {{"FI_LOG_LEVEL", "info"}, {"FI_LOG_PROV", "^core"}});
	EXPECT_EQ(r.err.find("::core:"), std::string::npos) << r.err;
	r = run_fi_info({"-l"}, {{"FI_LOG_LEVEL", "warn"}});
	EXPECT_EQ(r.err, "");
}

TEST(DropIn, FiStrerror)
{
	REQUIRE_PROGRAM(kFiStrerror);
	RunResult r = run_program({kFiStrerror, "265"}, our_library_env());
	EXPECT_EQ(r.status, 0);
	EXPECT_EQ(r.out, "Truncation error\n");
	r = run_program({kFiStrerror, "-61"}, our_library_env());
	EXPECT_EQ(r.out, "No data available\n");
}

TEST(DropIn, ProgramBuiltAgainstDistributionHeaders)
{
	std::string prog = our_library_dir() + "/../tests/compat/debian_headers_prog";
	ASSERT_TRUE(file_exists(prog)) << prog;
	RunResult r = run_program({prog}, our_library_env());
	ASSERT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_NE(r.out.find("provider sim domain sim0 type FI_EP_RDM mr_mode "
			     "[FI_MR_LOCAL, FI_MR_VIRT_ADDR, FI_MR_ALLOCATED, "
			     "FI_MR_PROV_KEY]\n"),
		  std::string::npos)
		<< r.out;
	EXPECT_NE(r.out.find("fi_fabric: 0\nfi_close: 0\n"), std::string::npos)
		<< r.out;
	EXPECT_NE(r.out.find("strerror: Truncation error\n"), std::string::npos);
	EXPECT_NE(r.out.find("version: 1.17\n"), std::string::npos);
}

}  // namespace
