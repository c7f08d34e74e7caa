// SPDX-License-Identifier: BSD-2-Clause
// What the multi-process tests share: where their peer programs are, and a
// fresh directory for a run.
#ifndef FABSIM_TESTS_MULTIPROC_TEST_UTIL_H
#define FABSIM_TESTS_MULTIPROC_TEST_UTIL_H

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace multiproc {

// A program of this package in the test's runfiles.
inline std::string PeerPath(const std::string& name)
{
	const char* src = getenv("TEST_SRCDIR");
	return std::string(src ? src : ".") + "/fabsim/tests/multiproc/" + name;
}

// A new directory under the test's temporary directory.
inline std::string TempDir(const std::string& prefix)
{
	const char* t = getenv("TEST_TMPDIR");
	std::string tmpl = std::string(t ? t : "/tmp") + "/" + prefix + "XXXXXX";
	std::vector<char> buf(tmpl.begin(), tmpl.end());
	buf.push_back('\0');
	EXPECT_NE(mkdtemp(buf.data()), nullptr);
	return buf.data();
}

}  // namespace multiproc

#endif
