// Parameters: fi_param_define / fi_param_get / fi_getparams / fi_freeparams,
// read from FI_<PROV>_<NAME> environment variables.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

#include <rdma/fabric.h>
#include <rdma/providers/fi_prov.h>

#include "test_provider.h"

namespace {

struct Env {
	Env(const char *name, const char *value) : name_(name)
	{
		setenv(name, value, 1);
	}
	~Env() { unsetenv(name_); }
	const char *name_;
};

TEST(Params, GetparamsListsCoreAndProviderParameters)
{
	fi_param *params = nullptr;
	int count = 0;
	Env env("FI_TESTPROV_LABEL", "hello world");

	ASSERT_EQ(fi_getparams(&params, &count), 0);
	std::map<std::string, const fi_param *> by_name;
	for (int i = 0; i < count; i++)
		by_name[params[i].name] = &params[i];
	ASSERT_TRUE(by_name.count("FI_PROVIDER"));
	ASSERT_TRUE(by_name.count("FI_LOG_LEVEL"));
	ASSERT_TRUE(by_name.count("FI_LOG_PROV"));
	ASSERT_TRUE(by_name.count("FI_LOG_SUBSYS"));
	ASSERT_TRUE(by_name.count("FI_TESTPROV_DEPTH"));
	EXPECT_EQ(by_name["FI_TESTPROV_DEPTH"]->type, FI_PARAM_INT);
	EXPECT_STREQ(by_name["FI_TESTPROV_DEPTH"]->help_string,
		     "queue depth for tests (default: 8)");
	EXPECT_EQ(by_name["FI_TESTPROV_DEPTH"]->value, nullptr);
	EXPECT_STREQ(by_name["FI_TESTPROV_LABEL"]->value, "hello world");
	EXPECT_EQ(by_name["FI_TESTPROV_VERBOSE"]->type, FI_PARAM_BOOL);
	EXPECT_EQ(params[count].name, nullptr) << "array is NULL-terminated";
	fi_freeparams(params);
}

TEST(Params, GetparamsRejectsNullArguments)
{
	int count;
	fi_param *params;
	EXPECT_EQ(fi_getparams(nullptr, &count), -FI_EINVAL);
	EXPECT_EQ(fi_getparams(&params, nullptr), -FI_EINVAL);
}

TEST(Params, TypedValues)
{
	fi_provider *prov = testprov_provider();
	int depth = 0, verbose = -1;
	size_t limit = 0;
	char *label = nullptr;

	EXPECT_EQ(fi_param_get_int(prov, "depth", &depth), -FI_ENODATA);
	{
		Env a("FI_TESTPROV_DEPTH", "-12");
		Env b("FI_TESTPROV_VERBOSE", "Yes");
		Env c("FI_TESTPROV_LIMIT", "0x100");
		Env d("FI_TESTPROV_LABEL", "abc");
		EXPECT_EQ(fi_param_get_int(prov, "depth", &depth), 0);
		EXPECT_EQ(depth, -12);
		EXPECT_EQ(fi_param_get_bool(prov, "verbose", &verbose), 0);
		EXPECT_EQ(verbose, 1);
		EXPECT_EQ(fi_param_get_size_t(prov, "limit", &limit), 0);
		EXPECT_EQ(limit, 256u);
		EXPECT_EQ(fi_param_get_str(prov, "label", &label), 0);
		EXPECT_STREQ(label, "abc");
	}
	for (const char *off : {"0", "off", "FALSE", "no"}) {
		Env b("FI_TESTPROV_VERBOSE", off);
		verbose = -1;
		EXPECT_EQ(fi_param_get_bool(prov, "verbose", &verbose), 0) << off;
		EXPECT_EQ(verbose, 0) << off;
	}
}

TEST(Params, BadValuesAreRejectedAndLeaveTheOutputAlone)
{
	fi_provider *prov = testprov_provider();
	int depth = 7, verbose = 7;
	size_t limit = 7;

	for (const char *bad : {"", "12abc", "abc", "99999999999"}) {
		Env a("FI_TESTPROV_DEPTH", bad);
		EXPECT_EQ(fi_param_get_int(prov, "depth", &depth), -FI_EINVAL)
			<< bad;
	}
	{
		Env b("FI_TESTPROV_VERBOSE", "maybe");
		EXPECT_EQ(fi_param_get_bool(prov, "verbose", &verbose),
			  -FI_EINVAL);
	}
	{
		Env c("FI_TESTPROV_LIMIT", "-5");
		EXPECT_EQ(fi_param_get_size_t(prov, "limit", &limit), -FI_EINVAL);
	}
	EXPECT_EQ(depth, 7);
	EXPECT_EQ(verbose, 7);
	EXPECT_EQ(limit, 7u);
}

TEST(Params, UndefinedParameterIsAnError)
{
	int v;
	EXPECT_EQ(fi_param_get_int(testprov_provider(), "no_such", &v),
		  -FI_ENOENT);
}

TEST(Params, DefineChecksItsArguments)
{
	fi_provider *prov = testprov_provider();
	EXPECT_EQ(fi_param_define(prov, "depth", FI_PARAM_INT, "again"),
		  -FI_EALREADY);
	EXPECT_EQ(fi_param_define(nullptr, "x", FI_PARAM_INT, "h"), -FI_EINVAL);
	EXPECT_EQ(fi_param_define(prov, "", FI_PARAM_INT, "h"), -FI_EINVAL);
	EXPECT_EQ(fi_param_define(prov, "x", (fi_param_type)9, "h"),
		  -FI_EINVAL);
}

}  // namespace
