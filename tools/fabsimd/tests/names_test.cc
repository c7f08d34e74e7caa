// SPDX-License-Identifier: BSD-2-Clause
// fabsimd: fabric names, segment names, node identity from the environment,
// and the runtime directory's safety checks.
#include "helpers.h"

using namespace fabsimd_test;

namespace {

const char *const kIdentityVars[] = { "FI_SIM_NODE", "OMPI_COMM_WORLD_RANK",
				      "PMI_RANK", "PMIX_RANK",
				      "SLURM_PROCID" };

class NodeIdentity : public ::testing::Test {
protected:
	void SetUp() override
	{
		for (const char *v : kIdentityVars)
			unsetenv(v);
	}
	void TearDown() override { SetUp(); }
};

} // namespace

TEST_F(NodeIdentity, NoneSetIsENOENT)
{
	uint32_t node = 77;
	const char *source = nullptr;
	char err[256] = "";
	EXPECT_EQ(fabsimd_node_identity(&node, &source, err, sizeof(err)),
		  -ENOENT);
	EXPECT_EQ(node, 77u);
	EXPECT_NE(std::string(err).find("FI_SIM_NODE"), std::string::npos);
}

TEST_F(NodeIdentity, PrecedenceFollowsTheList)
{
	uint32_t node;
	const char *source;
	// Set from the last to the first: each new one takes over.
	for (int i = 4; i >= 0; i--) {
		setenv(kIdentityVars[i], std::to_string(100 + i).c_str(), 1);
		ASSERT_EQ(fabsimd_node_identity(&node, &source, nullptr, 0), 0);
		EXPECT_EQ(node, (uint32_t)(100 + i));
		EXPECT_STREQ(source, kIdentityVars[i]);
	}
	// An empty value counts as unset.
	setenv("FI_SIM_NODE", "", 1);
	ASSERT_EQ(fabsimd_node_identity(&node, &source, nullptr, 0), 0);
	EXPECT_STREQ(source, "OMPI_COMM_WORLD_RANK");
	setenv("FI_SIM_NODE", "0", 1);
	ASSERT_EQ(fabsimd_node_identity(&node, &source, nullptr, 0), 0);
	EXPECT_EQ(node, 0u);
	setenv("FI_SIM_NODE", "4294967294", 1);
	ASSERT_EQ(fabsimd_node_identity(&node, nullptr, nullptr, 0), 0);
	EXPECT_EQ(node, 4294967294u);
}

TEST_F(NodeIdentity, GarbageIsEINVALNamingTheVariable)
{
	setenv("SLURM_PROCID", "4", 1);
	for (const char *bad : { "abc", "-1", "+3", "12x", " 5", "5 ",
				 "4294967295", "99999999999999999999",
				 "0x10", "1.5" }) {
		uint32_t node = 9;
		char err[256] = "";
		setenv("PMI_RANK", bad, 1);
		EXPECT_EQ(fabsimd_node_identity(&node, nullptr, err,
						sizeof(err)), -EINVAL) << bad;
		EXPECT_EQ(node, 9u);
		EXPECT_NE(std::string(err).find("PMI_RANK"), std::string::npos)
			<< err;
	}
}

TEST(FabricNames, ValidAndInvalid)
{
	std::string longest(64, 'x');
	for (const char *good : { "a", "default", "job-42.ring_0", "A.b-C_9",
				  "_x", "9", longest.c_str() })
		EXPECT_EQ(fabsimd_check_name(good, nullptr, 0), 0) << good;
	std::string long_name(65, 'y');
	for (const char *bad : { "", "a/b", "a b", "fabric!", "caf\xc3\xa9",
				 "../up", "tab\tname", long_name.c_str(),
				 /* hidden files, an option */
				 ".", "..", ".hidden", "-x", "--help" }) {
		char err[256] = "";
		EXPECT_EQ(fabsimd_check_name(bad, err, sizeof(err)), -EINVAL)
			<< bad;
		EXPECT_NE(std::string(err).find("fabric name"),
			  std::string::npos) << err;
	}
	EXPECT_EQ(fabsimd_check_name(nullptr, nullptr, 0), -EINVAL);
}

TEST(FabricNames, DefaultFromEnvironment)
{
	unsetenv("FI_SIM_FABRIC");
	EXPECT_STREQ(fabsimd_default_fabric(), "default");
	setenv("FI_SIM_FABRIC", "mine", 1);
	EXPECT_STREQ(fabsimd_default_fabric(), "mine");
	unsetenv("FI_SIM_FABRIC");
}

TEST(SegmentName, UserRuntimeDirectoryAndFabric)
{
	char buf[128], other[128];
	std::string user = "/fabsim-" + std::to_string(geteuid()) + "-";

	setenv("FABSIM_RUNTIME_DIR", "/tmp/fabsim-names-a", 1);
	ASSERT_EQ(fabsimd_segment_name("ring", buf, sizeof(buf)),
		  (int)(user.size() + 8 + 5));
	EXPECT_EQ(std::string(buf).substr(0, user.size()), user);
	EXPECT_EQ(std::string(buf).substr(user.size() + 8), "-ring");
	// The same directory (a trailing slash is the same), the same name.
	setenv("FABSIM_RUNTIME_DIR", "/tmp/fabsim-names-a/", 1);
	ASSERT_GT(fabsimd_segment_name("ring", other, sizeof(other)), 0);
	EXPECT_STREQ(buf, other);
	// Another directory: another fabric of the same name.
	setenv("FABSIM_RUNTIME_DIR", "/tmp/fabsim-names-b", 1);
	ASSERT_GT(fabsimd_segment_name("ring", other, sizeof(other)), 0);
	EXPECT_STRNE(buf, other);
	unsetenv("FABSIM_RUNTIME_DIR");
	EXPECT_EQ(fabsimd_segment_name("ring", buf, 5), -ENAMETOOLONG);
	EXPECT_EQ(fabsimd_segment_name("bad/name", buf, sizeof(buf)), -EINVAL);
}

TEST_F(FabricTest, RuntimeDirIsCreated0700)
{
	char buf[4096], err[256] = "";
	mode_t old = umask(077 | 0100); // even a hostile umask
	ASSERT_EQ(fabsimd_runtime_dir(buf, sizeof(buf), err, sizeof(err)), 0)
		<< err;
	umask(old);
	EXPECT_EQ(std::string(buf), dir);
	struct stat st;
	ASSERT_EQ(lstat(dir.c_str(), &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(st.st_mode & 07777, 0700u);
}

TEST_F(FabricTest, RuntimeDirUnderXdg)
{
	unsetenv("FABSIM_RUNTIME_DIR");
	std::string xdg = dir + "-xdg";
	ASSERT_EQ(mkdir(xdg.c_str(), 0700), 0);
	const char *old = getenv("XDG_RUNTIME_DIR");
	std::string saved = old ? old : "";
	setenv("XDG_RUNTIME_DIR", xdg.c_str(), 1);
	char buf[4096], err[256] = "";
	EXPECT_EQ(fabsimd_runtime_dir(buf, sizeof(buf), err, sizeof(err)), 0)
		<< err;
	EXPECT_EQ(std::string(buf), xdg + "/fabsim");
	if (old)
		setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
	else
		unsetenv("XDG_RUNTIME_DIR");
}

TEST_F(FabricTest, UnsafeRuntimeDirsAreRefused)
{
	char buf[4096], err[256];
	fabsimd_member_info me = { 1, "x" };
	fabsimd_session *s = nullptr;

	// A symbolic link, even to a good directory.
	std::string real = dir + "-real", link = dir + "-link";
	ASSERT_EQ(mkdir(real.c_str(), 0700), 0);
	ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
	for (const std::string &path : { link, link + "/" }) {
		setenv("FABSIM_RUNTIME_DIR", path.c_str(), 1);
		err[0] = '\0';
		EXPECT_EQ(fabsimd_runtime_dir(buf, sizeof(buf), err,
					      sizeof(err)), -ELOOP) << path;
		EXPECT_NE(std::string(err).find("symbolic link"),
			  std::string::npos) << err;
	}
	EXPECT_EQ(fabsimd_attach("f", &me, &s, err, sizeof(err)), -ELOOP);
	EXPECT_EQ(s, nullptr);

	// Open to others.
	std::string open_dir = dir + "-open";
	ASSERT_EQ(mkdir(open_dir.c_str(), 0700), 0);
	ASSERT_EQ(chmod(open_dir.c_str(), 0755), 0);
	setenv("FABSIM_RUNTIME_DIR", open_dir.c_str(), 1);
	EXPECT_EQ(fabsimd_runtime_dir(buf, sizeof(buf), err, sizeof(err)),
		  -EPERM);
	EXPECT_NE(std::string(err).find("mode 0755"), std::string::npos)
		<< err;
	struct fabsimd_status st;
	EXPECT_EQ(fabsimd_status("f", &st, err, sizeof(err)), -EPERM);

	// Not a directory.
	std::string plain = dir + "-file";
	int fd = open(plain.c_str(), O_CREAT | O_WRONLY, 0600);
	ASSERT_GE(fd, 0);
	close(fd);
	setenv("FABSIM_RUNTIME_DIR", plain.c_str(), 1);
	EXPECT_EQ(fabsimd_runtime_dir(buf, sizeof(buf), err, sizeof(err)),
		  -ENOTDIR);
	EXPECT_NE(std::string(err).find("not a directory"), std::string::npos)
		<< err;

	// A missing parent.
	setenv("FABSIM_RUNTIME_DIR", (dir + "-none/sub").c_str(), 1);
	EXPECT_EQ(fabsimd_runtime_dir(buf, sizeof(buf), err, sizeof(err)),
		  -ENOENT);
	EXPECT_NE(std::string(err).find("cannot create"), std::string::npos)
		<< err;
}
