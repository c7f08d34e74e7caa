// Helpers of the recording tests (record_test.cc): temporary files, tshark,
// the provider's packet log (FI_SIM_PCAP_LOG) and a fixed workload of every
// kind of traffic the sim provider puts on the wire.
#ifndef FABSIM_TEST_RECORD_UTIL_H
#define FABSIM_TEST_RECORD_UTIL_H

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/sim/scenario.h"

namespace rec {

using Bytes = std::vector<uint8_t>;

inline std::string Temp(const std::string &name)
{
	const char *dir = std::getenv("TEST_TMPDIR");
	return std::string(dir ? dir : "/tmp") + "/" + name;
}

inline Bytes ReadFile(const std::string &path)
{
	std::ifstream in(path, std::ios::binary);
	return Bytes((std::istreambuf_iterator<char>(in)),
		     std::istreambuf_iterator<char>());
}

inline bool Exists(const std::string &path)
{
	return std::ifstream(path).good();
}

inline std::string Run(const std::string &cmd, int *status)
{
	std::string out;
	FILE *p = popen(cmd.c_str(), "r");
	if (!p) {
		*status = -1;
		return out;
	}
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		out.append(buf, n);
	int st = pclose(p);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return out;
}

inline bool HaveTshark()
{
	int st;
	Run("command -v tshark >/dev/null 2>&1", &st);
	return st == 0;
}

inline const char *kLua = "traces/wireshark/fabsim.lua";

// tshark with the project's dissector, a private HOME, and without the
// RPC-over-RDMA heuristic, which calls short application payloads
// malformed (traces/README.md, "Wireshark"; the heuristic's name in
// `tshark -G heuristic-decodes` is rpcrdma_infiniband).
inline std::string Tshark(const std::string &args, int *status)
{
	return Run("HOME=" + Temp("") + " tshark -X lua_script:" +
			   std::string(kLua) +
			   " --disable-heuristic rpcrdma_infiniband " + args +
			   " 2>/dev/null",
		   status);
}

inline std::vector<std::string> Split(const std::string &s, char sep)
{
	std::vector<std::string> out;
	std::string cur;
	for (char c : s) {
		if (c == sep) {
			out.push_back(cur);
			cur.clear();
		} else {
			cur += c;
		}
	}
	out.push_back(cur);
	return out;
}

inline std::vector<std::string> Lines(const std::string &s)
{
	auto v = Split(s, '\n');
	if (!v.empty() && v.back().empty())
		v.pop_back();
	return v;
}

// One line of the provider's log: "file=F frame=N t=T mark=M [where=...]
// src=h:q dst=h:q op=.. psn=.. ...", as key -> value.
struct LogLine {
	std::map<std::string, std::string> f;
	std::string text;
	bool has(const std::string &k) const { return f.count(k) != 0; }
	const std::string &operator[](const std::string &k) const
	{
		static const std::string none;
		auto it = f.find(k);
		return it == f.end() ? none : it->second;
	}
	uint64_t num(const std::string &k) const
	{
		return std::strtoull((*this)[k].c_str(), nullptr, 0);
	}
};

inline std::vector<LogLine> ReadLog(const std::string &path)
{
	std::vector<LogLine> out;
	std::ifstream in(path);
	std::string line;
	while (std::getline(in, line)) {
		LogLine l;
		l.text = line;
		for (auto &tok : Split(line, ' ')) {
			auto eq = tok.find('=');
			if (eq != std::string::npos)
				l.f[tok.substr(0, eq)] = tok.substr(eq + 1);
		}
		out.push_back(l);
	}
	return out;
}

inline std::string Hex(uint64_t v, int width)
{
	std::ostringstream s;
	s << "0x" << std::hex;
	s.width(width);
	s.fill('0');
	s << v;
	return s.str();
}

// A fixed workload between every ordered pair of nodes: untagged and tagged
// messages (with remote CQ data), RMA writes with immediate data and reads,
// native atomics (64-bit fetch-add and compare-swap) and the fabsim ones
// (other types, ops and counts). Returns false (with a failure) if any
// operation did not complete successfully.
class Traffic {
public:
	explicit Traffic(Scenario &s, bool virt_addr, int rounds = 1)
		: s_(s), virt_(virt_addr), rounds_(rounds)
	{
	}
	~Traffic()
	{
		for (auto *mr : mrs_)
			fi_close(&mr->fid);
	}
	bool run(std::string *why);
	size_t ops() const { return expect_; }

private:
	struct NodeMem {
		Bytes send, recv, window, result;
		fid_mr *send_mr, *recv_mr, *window_mr, *result_mr;
	};
	void post_pair(int a, int b, int round);
	static uint64_t tag(int a, int b, int r, int k)
	{
		return 0xfab5000000000000ull | (uint64_t)a << 24 |
		       (uint64_t)b << 16 | (uint64_t)r << 8 | (uint64_t)k;
	}
	uint64_t remote(int node, size_t off)
	{
		return (virt_ ? (uint64_t)(uintptr_t)mem_[node].window.data()
			      : 0) + off;
	}

	// A region with a key of our choosing (the provider may leave keys to
	// the program when it need not pick them).
	fid_mr *reg(int node, void *buf, size_t len, uint64_t access)
	{
		fid_mr *mr = nullptr;
		if (fi_mr_reg(s_.node(node).domain, buf, len, access, 0,
			      (uint64_t)(node + 1) * 100 + mrs_.size(), 0, &mr,
			      nullptr))
			return nullptr;
		mrs_.push_back(mr);
		return mr;
	}

	Scenario &s_;
	std::vector<fid_mr *> mrs_;
	bool virt_;
	int rounds_;
	std::vector<NodeMem> mem_;
	std::vector<fi_context2> ctx_;
	size_t used_ = 0;
	size_t expect_ = 0;
	std::string err_;
};

} // namespace rec

#endif
