#include "tests/compat/run_util.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

extern char **environ;

bool file_exists(const std::string &path)
{
	struct stat st;
	return stat(path.c_str(), &st) == 0;
}

static void drain(int fd, std::string *into)
{
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		into->append(buf, (size_t)n);
}

RunResult run_program(const std::vector<std::string> &argv,
		      const std::map<std::string, std::string> &env,
		      int timeout_s)
{
	RunResult r;
	std::map<std::string, std::string> all;
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		if (eq)
			all[std::string(*e, (size_t)(eq - *e))] = eq + 1;
	}
	for (auto &kv : env)
		all[kv.first] = kv.second;
	std::vector<std::string> env_strs;
	for (auto &kv : all)
		env_strs.push_back(kv.first + "=" + kv.second);
	std::vector<char *> envp, args;
	for (auto &s : env_strs)
		envp.push_back((char *)s.c_str());
	envp.push_back(nullptr);
	for (auto &s : argv)
		args.push_back((char *)s.c_str());
	args.push_back(nullptr);

	int out[2], err[2];
	if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		return r;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	pid_t pid;
	int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(),
			     envp.data());
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	close(err[1]);
	if (rc) {
		close(out[0]);
		close(err[0]);
		r.err = std::string("spawn failed: ") + strerror(rc);
		return r;
	}
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	fcntl(err[0], F_SETFL, O_NONBLOCK);
	time_t deadline = time(nullptr) + timeout_s;
	int status = 0;
	for (;;) {
		struct pollfd p[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
		poll(p, 2, 100);
		drain(out[0], &r.out);
		drain(err[0], &r.err);
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		if (time(nullptr) > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			r.err += "\n[killed: timeout]";
			break;
		}
	}
	drain(out[0], &r.out);
	drain(err[0], &r.err);
	close(out[0]);
	close(err[0]);
	r.status = WIFEXITED(status) ? WEXITSTATUS(status)
				     : 128 + WTERMSIG(status);
	return r;
}

std::string our_library_dir()
{
	const char *srcdir = getenv("TEST_SRCDIR");
	const char *ws = getenv("TEST_WORKSPACE");
	std::string base = std::string(srcdir ? srcdir : ".") + "/" +
			   (ws ? ws : "fabsim");
	return base + "/api";
}

static std::string runtime_of(const char *symbol)
{
	void *sym = dlsym(RTLD_DEFAULT, symbol);
	Dl_info info;
	if (!sym || !dladdr(sym, &info) || !info.dli_fname)
		return "";
	std::string path = info.dli_fname;
	// Only shared runtimes can be preloaded.
	return path.find(".so") != std::string::npos ? path : "";
}

std::map<std::string, std::string> our_library_env()
{
	std::map<std::string, std::string> env = {
		{"LD_LIBRARY_PATH", our_library_dir()},
	};
	std::string preload;
	for (const char *sym : {"__asan_init", "__ubsan_handle_add_overflow"}) {
		std::string rt = runtime_of(sym);
		if (!rt.empty() && preload.find(rt) == std::string::npos)
			preload += (preload.empty() ? "" : ":") + rt;
	}
	if (!preload.empty()) {
		env["LD_PRELOAD"] = preload;
		// The distribution's programs are not ours to leak-check.
		env["ASAN_OPTIONS"] = "detect_leaks=0";
	}
	return env;
}
