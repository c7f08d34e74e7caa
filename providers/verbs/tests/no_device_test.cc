// The verbs provider on a machine without an RDMA device: fi_getinfo says
// -FI_ENODATA, one log line says why, nothing crashes, and programs that
// never asked for verbs hear nothing of it. Runs Debian's fi_info and
// fi_pingpong against our libfabric.so.1, and calls fi_getinfo in process.
// Skipped, with the reason, on a machine that has a device.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include "tests/compat/run_util.h"

namespace {

// How many devices the distribution's libibverbs sees (-1: not installed).
int SystemDevices()
{
	void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return -1;
	using list_fn = void **(*)(int *);
	using free_fn = void (*)(void **);
	auto list = (list_fn)dlsym(h, "ibv_get_device_list");
	auto release = (free_fn)dlsym(h, "ibv_free_device_list");
	int n = 0;
	if (list && release) {
		void **devs = list(&n);
		if (devs)
			release(devs);
	}
	dlclose(h);
	return n;
}

class NoDevice : public ::testing::Test {
protected:
	void SetUp() override
	{
		int n = SystemDevices();
		if (n > 0)
			GTEST_SKIP() << "this machine has " << n
				     << " RDMA device(s): the no-device "
					"behaviour cannot be observed here";
	}
};

std::vector<std::string> Lines(const std::string &text, const char *with)
{
	std::vector<std::string> out;
	std::istringstream in(text);
	std::string line;
	while (std::getline(in, line))
		if (line.find(with) != std::string::npos)
			out.push_back(line);
	return out;
}

RunResult FiInfo(std::map<std::string, std::string> env,
		 std::vector<std::string> args = {})
{
	std::map<std::string, std::string> all = our_library_env();
	for (auto &kv : env)
		all[kv.first] = kv.second;
	std::vector<std::string> argv = { "/usr/bin/fi_info" };
	argv.insert(argv.end(), args.begin(), args.end());
	return run_program(argv, all);
}

TEST_F(NoDevice, FiProviderVerbsFailsCleanlyWithOneLine)
{
	if (!file_exists("/usr/bin/fi_info"))
		GTEST_SKIP() << "Debian's fi_info (libfabric-bin) is missing";
	RunResult r = FiInfo({ { "FI_PROVIDER", "verbs" } });

	EXPECT_EQ(r.status, FI_ENODATA) << r.out << r.err;
	EXPECT_NE((r.out + r.err).find("fi_getinfo: -61"), std::string::npos)
		<< r.out << r.err;
	auto lines = Lines(r.err, "verbs");
	ASSERT_EQ(lines.size(), 1u) << r.err;
	EXPECT_NE(lines[0].find("<warn>"), std::string::npos) << lines[0];
	EXPECT_NE(lines[0].find("no verbs provider"), std::string::npos)
		<< lines[0];
	EXPECT_NE(lines[0].find("no RDMA device"), std::string::npos)
		<< lines[0];
}

TEST_F(NoDevice, OtherProgramsHearNothingOfIt)
{
	if (!file_exists("/usr/bin/fi_info"))
		GTEST_SKIP() << "Debian's fi_info (libfabric-bin) is missing";
	RunResult r = FiInfo({ { "FI_PROVIDER", "" } });

	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("provider: sim"), std::string::npos) << r.out;
	EXPECT_EQ(r.out.find("provider: verbs"), std::string::npos) << r.out;
	EXPECT_TRUE(Lines(r.err, "verbs").empty()) << r.err;
}

TEST_F(NoDevice, InfoLevelTellsWhyVerbsIsMissing)
{
	if (!file_exists("/usr/bin/fi_info"))
		GTEST_SKIP() << "Debian's fi_info (libfabric-bin) is missing";
	RunResult r = FiInfo({ { "FI_PROVIDER", "" },
			       { "FI_LOG_LEVEL", "info" } },
			     { "-p", "sim" });

	EXPECT_EQ(r.status, 0) << r.err;
	auto lines = Lines(r.err, "no verbs provider");
	// fi_info -p asks through the hints: verbs is not asked for.
	EXPECT_TRUE(lines.empty()) << r.err;

	r = FiInfo({ { "FI_PROVIDER", "" }, { "FI_LOG_LEVEL", "info" } });
	lines = Lines(r.err, "no verbs provider");
	ASSERT_FALSE(lines.empty()) << r.err;
	EXPECT_NE(lines[0].find("<info>"), std::string::npos) << lines[0];
}

TEST_F(NoDevice, MissingLibraryIsNamed)
{
	if (!file_exists("/usr/bin/fi_info"))
		GTEST_SKIP() << "Debian's fi_info (libfabric-bin) is missing";
	RunResult r = FiInfo({ { "FI_PROVIDER", "verbs" },
			       { "FI_VERBS_IBVERBS_LIB",
				 "libfabsim-not-installed.so.1" } });

	EXPECT_EQ(r.status, FI_ENODATA) << r.err;
	auto lines = Lines(r.err, "verbs");
	ASSERT_EQ(lines.size(), 1u) << r.err;
	EXPECT_NE(lines[0].find("libfabsim-not-installed.so.1"),
		  std::string::npos)
		<< lines[0];
}

// fi_pingpong's two sides meet on a TCP control socket before either
// asks for the provider; then both must fail cleanly.
TEST_F(NoDevice, PingpongOnVerbsExitsWithoutCrashing)
{
	if (!file_exists("/usr/bin/fi_pingpong"))
		GTEST_SKIP() << "Debian's fi_pingpong (libfabric-bin) is missing";
	std::map<std::string, std::string> env = our_library_env();
	env["FI_PROVIDER"] = "verbs";
	const std::string port = std::to_string(20000 + getpid() % 20000);
	RunResult server, client;
	std::thread srv([&] {
		server = run_program({ "/usr/bin/fi_pingpong", "-p", "verbs",
				       "-e", "msg", "-B", port },
				     env, 20);
	});
	for (int tries = 0; tries < 100; tries++) {
		client = run_program({ "/usr/bin/fi_pingpong", "-p", "verbs",
				       "-e", "msg", "-P", port, "127.0.0.1" },
				     env, 20);
		if (client.err.find("Connection refused") == std::string::npos)
			break;
		usleep(50 * 1000); // the server is not listening yet
	}
	srv.join();
	for (const RunResult *r : { &server, &client }) {
		EXPECT_NE(r->status, 0) << r->out << r->err;
		EXPECT_LT(r->status, 128) << "killed by a signal\n" << r->err;
	}
	// The server asks for the provider first; the client may see it
	// hang up before asking.
	EXPECT_NE(server.err.find("no verbs provider"), std::string::npos)
		<< server.err;
	EXPECT_NE(server.err.find("fi_getinfo"), std::string::npos)
		<< server.err;
}

TEST_F(NoDevice, GetinfoInProcess)
{
	fi_info *hints = fi_allocinfo();
	fi_info *info = nullptr;

	hints->fabric_attr->prov_name = strdup("verbs");
	hints->ep_attr->type = FI_EP_MSG;
	EXPECT_EQ(fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints,
			     &info),
		  -FI_ENODATA);
	EXPECT_EQ(info, nullptr);
	// Twice: nothing was left half-initialised by the first call.
	EXPECT_EQ(fi_getinfo(FI_VERSION(1, 17), "10.0.0.1", "7471", 0, hints,
			     &info),
		  -FI_ENODATA);
	fi_freeinfo(hints);
}

} // namespace
