// Runs a program with extra environment and captures its output, for tests
// that drive the distribution's binaries against our library.
#ifndef FABSIM_TEST_RUN_UTIL_H
#define FABSIM_TEST_RUN_UTIL_H

#include <map>
#include <string>
#include <vector>

struct RunResult {
	int status = -1;      // exit status, or 128 + signal
	std::string out;      // stdout
	std::string err;      // stderr
};

// Runs argv[0] (a path) with the current environment plus `env`, with a
// time limit in seconds. Never uses a shell.
RunResult run_program(const std::vector<std::string> &argv,
		      const std::map<std::string, std::string> &env,
		      int timeout_s = 60);

// The directory holding our libfabric.so.1 in the test's runfiles.
std::string our_library_dir();

// Environment that makes a distribution binary load our library: the
// library path, and the sanitizer runtimes first when we are built with
// them (an instrumented library cannot load into a plain program otherwise).
std::map<std::string, std::string> our_library_env();

bool file_exists(const std::string &path);

#endif
