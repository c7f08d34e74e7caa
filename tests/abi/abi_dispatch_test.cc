// SPDX-License-Identifier: BSD-2-Clause
// The data path is binary compatible only if every inline wrapper, compiled
// into an application against libfabric's headers, calls the same ops-table
// slot with the same arguments as it does compiled against ours. This test
// runs abi_dispatch.c built both ways and compares the two call logs.

#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/abi/abi_dispatch.h"

namespace {

std::vector<std::string> Lines(char *text)
{
	std::vector<std::string> out;
	std::istringstream in(text ? text : "");
	std::string line;
	while (std::getline(in, line))
		out.push_back(line);
	std::free(text);
	return out;
}

// Every static inline function of libfabric's headers, from the manifest.
std::vector<std::string> InlineNames()
{
	std::vector<std::string> names;
#define ABI_INLINE(name, ...) names.push_back(#name);
#include "tests/abi/abi_manifest.inc"
#undef ABI_INLINE
	return names;
}

TEST(AbiDispatch, BuildsSeeTheRightHeaders)
{
	EXPECT_EQ(abi_dispatch_fabsim_headers_ours(), 1)
		<< "abi_dispatch_ours was not built against api/include/rdma";
	EXPECT_EQ(abi_dispatch_fabsim_headers_debian(), 0)
		<< "abi_dispatch_debian picked up our headers instead of "
		   "/usr/include/rdma";
}

TEST(AbiDispatch, CallLogsAreIdentical)
{
	std::vector<std::string> ours = Lines(abi_dispatch_log_ours());
	std::vector<std::string> theirs = Lines(abi_dispatch_log_debian());
	ASSERT_FALSE(theirs.empty());

	std::ostringstream diff;
	size_t mismatches = 0;
	std::string last_call;
	size_t n = ours.size() > theirs.size() ? ours.size() : theirs.size();
	for (size_t i = 0; i < n; i++) {
		const std::string &a = i < ours.size() ? ours[i] : "<end>";
		const std::string &b = i < theirs.size() ? theirs[i] : "<end>";
		if (b.rfind("call ", 0) == 0 || b.rfind("# ", 0) == 0)
			last_call = b;
		if (a == b)
			continue;
		if (++mismatches <= 60)
			diff << "  line " << i + 1 << " (in '" << last_call
			     << "')\n    ours:   " << a << "\n    theirs: " << b
			     << "\n";
	}
	EXPECT_EQ(mismatches, 0u)
		<< mismatches << " of " << n << " log lines differ (first 60):\n"
		<< diff.str();
	std::printf("[ abi      ] %zu call-log lines compared\n", n);
}

TEST(AbiDispatch, EveryInlineFunctionIsExercised)
{
	std::vector<std::string> log = Lines(abi_dispatch_log_debian());
	std::set<std::string> called;
	for (const std::string &l : log)
		if (l.rfind("call ", 0) == 0)
			called.insert(l.substr(5));
	std::vector<std::string> names = InlineNames();
	ASSERT_GT(names.size(), 100u);
	for (const std::string &name : names)
		EXPECT_TRUE(called.count(name)) << name << " is never called";
	std::printf("[ abi      ] %zu inline functions called\n", names.size());
}

// Every slot of every ops table must be reachable by some wrapper, except
// the tables that only providers and the core call (peer, monitor, logging,
// hmem) and the two slots libfabric 1.17 has no inline wrapper for.
TEST(AbiDispatch, EveryApplicationSlotIsReached)
{
	std::vector<std::string> log = Lines(abi_dispatch_log_debian());
	std::set<std::string> reached;
	for (const std::string &l : log) {
		if (l.rfind("  slot ", 0) != 0)
			continue;
		std::string s = l.substr(7);
		reached.insert(s.substr(0, s.find(' ')));
	}
	const std::set<std::string> provider_only = {
		"fi_hmem_override_ops", "fi_ops_mem_monitor",
		"fi_ops_mem_notify",    "fi_ops_av_owner",
		"fi_ops_av_set_owner",  "fi_ops_cq_owner",
		"fi_ops_srx_owner",     "fi_ops_srx_peer",
		"fi_ops_transfer_peer", "fi_ops_log",
	};
	const std::set<std::string> no_wrapper = {
		"fi_ops.tostr",              // used by fi_tostr() in the core
		"fi_ops_collective.msg",     // no fi_collectivemsg() in 1.17
	};
	std::vector<std::string> missing;
#define ABI_OPS_SLOT(tag, slot, ...)                                        \
	if (!provider_only.count(#tag) && !no_wrapper.count(#tag "." #slot) && \
	    !reached.count(#tag "." #slot))                                 \
		missing.push_back(#tag "." #slot);
#include "tests/abi/abi_manifest.inc"
#undef ABI_OPS_SLOT
	std::string all;
	for (const std::string &m : missing)
		all += "  " + m + "\n";
	EXPECT_TRUE(missing.empty())
		<< "slots no wrapper calls (ours and Debian's alike):\n" << all;
	for (const std::string &s : no_wrapper)
		EXPECT_FALSE(reached.count(s)) << s << " is reached after all";
}

}  // namespace
