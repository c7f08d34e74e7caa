// SPDX-License-Identifier: BSD-2-Clause
// Our public headers against Debian's libfabric-dev 1.17 headers: the two
// builds of abi_table.c must agree on every entry. One test per category so a
// failure says what kind of thing differs; each prints every mismatch.

#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/abi/abi_table.h"

namespace {

struct Tables {
	const abi_entry *ours;
	const abi_entry *theirs;
	size_t n_ours;
	size_t n_theirs;
};

Tables Load()
{
	Tables t;
	t.ours = abi_table_ours(&t.n_ours);
	t.theirs = abi_table_debian(&t.n_theirs);
	return t;
}

std::string Hex(uint64_t v)
{
	char buf[32];
	std::snprintf(buf, sizeof(buf), "%#llx", (unsigned long long)v);
	return buf;
}

std::string Show(const abi_entry &e)
{
	if (e.text)
		return std::string("\"") + e.text + "\"";
	return std::to_string((long long)e.value) + " (" + Hex(e.value) + ")";
}

// Compares the entries of one category and returns a report of mismatches.
std::string Compare(const Tables &t, abi_category cat, size_t *checked)
{
	std::ostringstream out;
	*checked = 0;
	size_t n = t.n_ours < t.n_theirs ? t.n_ours : t.n_theirs;
	for (size_t i = 0; i < n; i++) {
		const abi_entry &a = t.ours[i];
		const abi_entry &b = t.theirs[i];
		if (b.category != cat)
			continue;
		++*checked;
		if (std::strcmp(a.name, b.name) != 0) {
			out << "  entry " << i << ": tables out of step (ours '"
			    << a.name << "', theirs '" << b.name << "')\n";
			break;
		}
		bool same = a.value == b.value;
		if (a.text || b.text)
			same = a.text && b.text && std::strcmp(a.text, b.text) == 0;
		if (!same) {
			out << "  " << a.name << ": ours " << Show(a) << ", theirs "
			    << Show(b);
			if (b.expect)
				out << "  [libfabric: " << b.expect << "]";
			out << "\n";
		}
	}
	return out.str();
}

void ExpectCategoryEqual(abi_category cat, const char *what)
{
	Tables t = Load();
	ASSERT_EQ(t.n_ours, t.n_theirs) << "the two tables differ in length";
	size_t checked = 0;
	std::string report = Compare(t, cat, &checked);
	EXPECT_GT(checked, 0u) << "no " << what << " entries";
	EXPECT_TRUE(report.empty())
		<< what << " that differ from libfabric 1.17 (of " << checked
		<< " checked):\n" << report;
	std::printf("[ abi      ] %zu %s entries compared\n", checked, what);
}

TEST(AbiGuard, OursAreOursAndDebiansAreDebians)
{
	Tables t = Load();
	ASSERT_GT(t.n_ours, 0u);
	ASSERT_GT(t.n_theirs, 0u);
	ASSERT_STREQ(t.ours[0].name, "FABSIM_RDMA_HEADERS defined");
	ASSERT_STREQ(t.theirs[0].name, "FABSIM_RDMA_HEADERS defined");
	EXPECT_EQ(t.ours[0].value, 1u)
		<< "abi_table_ours was not built against api/include/rdma";
	EXPECT_EQ(t.theirs[0].value, 0u)
		<< "abi_table_debian picked up our headers instead of "
		   "/usr/include/rdma: the comparison would be meaningless";
}

TEST(AbiEquality, Constants)
{
	ExpectCategoryEqual(ABI_CAT_CONSTANT, "constant");
}

TEST(AbiEquality, Macros)
{
	ExpectCategoryEqual(ABI_CAT_MACRO, "macro");
}

TEST(AbiEquality, StructSizes)
{
	ExpectCategoryEqual(ABI_CAT_STRUCT, "struct size/alignment");
}

TEST(AbiEquality, FieldOffsets)
{
	ExpectCategoryEqual(ABI_CAT_FIELD, "member offset/size/type");
}

TEST(AbiEquality, Functions)
{
	ExpectCategoryEqual(ABI_CAT_FUNCTION, "function type");
}

// On the Debian side every check against libfabric's own spelling must hold;
// if one does not, the manifest does not describe these headers (stale, or
// the generator misread something) and the comparison proves less.
TEST(AbiEquality, ManifestMatchesDebianHeaders)
{
	Tables t = Load();
	std::ostringstream out;
	for (size_t i = 0; i < t.n_theirs; i++) {
		const abi_entry &e = t.theirs[i];
		bool must_be_one = e.expect != nullptr ||
				   std::strstr(e.name, " is a macro") != nullptr ||
				   std::strstr(e.name, " has an address") != nullptr;
		bool enumerator = std::strncmp(e.name, "enumerator ", 11) == 0;
		if (enumerator && std::strstr(e.name, " is a macro")) {
			if (e.value != 0)
				out << "  " << e.name << " = " << e.value << "\n";
		} else if (must_be_one && e.value != 1) {
			out << "  " << e.name << " = " << e.value << "\n";
		}
	}
	EXPECT_TRUE(out.str().empty())
		<< "abi_manifest.inc does not fit /usr/include/rdma; rerun "
		   "tests/abi/gen_abi_manifest.py:\n" << out.str();
}

}  // namespace
