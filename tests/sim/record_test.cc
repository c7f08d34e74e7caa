// Recording (FI_SIM_PCAP): the sim provider writes what its simulated NICs
// put on the wire as a RoCEv2 pcap. Each test runs real traffic through the
// libfabric API and checks the files against what the NIC itself logged
// (FI_SIM_PCAP_LOG, written from the NIC's packet records, not from the
// frames): tshark must decode every frame with the fields the NIC logged,
// `trace check` must find the files clean, `trace summary` must count the
// drops and retransmissions the NIC's statistics report, the same run must
// give the same bytes, and the snap length must cut frames. Tests that need
// tshark skip themselves, saying so, when it is not installed.
#include "tests/sim/record_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>

extern "C" {
#include "traces/tr_check.h"
#include "traces/tr_summary.h"
#include "traces/tr_trace.h"
}

using rec::Hex;
using rec::LogLine;
using rec::Temp;

#define REQUIRE_TSHARK()                                                  \
	do {                                                              \
		if (!rec::HaveTshark())                                   \
			GTEST_SKIP() << "tshark is not installed";        \
	} while (0)

namespace rec {

void Traffic::post_pair(int a, int b, int r)
{
	int n = s_.size();
	fid_ep *ep = s_.ep(a, b), *rep = s_.ep(b, a);
	fi_addr_t to = s_.addr(a, b), from = s_.addr(b, a);
	NodeMem &ma = mem_[a], &mb = mem_[b];
	size_t chunk = (size_t)(a * rounds_ + r);
	uint8_t *rbuf = mb.recv.data() + chunk * 32768;
	uint8_t *sbuf = ma.send.data();
	uint8_t *res = ma.result.data() + (size_t)(b * rounds_ + r) * 16384;
	size_t win = chunk * 32768;
	uint64_t wkey = fi_mr_key(mb.window_mr);
	void *sd = fi_mr_desc(ma.send_mr), *rd = fi_mr_desc(mb.recv_mr);
	void *resd = fi_mr_desc(ma.result_mr);
	auto ctx = [&]() { return &ctx_[used_++]; };
	auto check = [&](ssize_t ret, const char *what) {
		if (ret && err_.empty())
			err_ = std::string(what) + ": " +
			       fi_strerror((int)-ret);
		expect_ += ret == 0;
	};
	static const size_t sizes[] = {0, 8, 300, 9000};
	static const size_t roff[] = {0, 16, 32, 400};
	static const size_t tsizes[] = {8, 5000, 20, 5000};
	static const size_t troff[] = {9500, 9600, 14700, 14800};
	(void)n;

	for (int k = 0; k < 4; k++)
		check(fi_recv(rep, rbuf + roff[k], sizes[k], rd, from, ctx()),
		      "fi_recv");
	for (int k = 0; k < 4; k++)
		check(fi_trecv(rep, rbuf + troff[k], tsizes[k], rd, from,
			       tag(a, b, r, k), 0, ctx()),
		      "fi_trecv");
	for (int k = 0; k < 4; k++)
		check(fi_send(ep, sbuf, sizes[k], sd, to, ctx()), "fi_send");
	check(fi_tsend(ep, sbuf, 8, sd, to, tag(a, b, r, 0), ctx()),
	      "fi_tsend");
	check(fi_tsend(ep, sbuf + 100, 5000, sd, to, tag(a, b, r, 1), ctx()),
	      "fi_tsend");
	check(fi_tsenddata(ep, sbuf + 7, 20, sd, 0xc0de0000u | chunk, to,
			   tag(a, b, r, 2), ctx()),
	      "fi_tsenddata");
	check(fi_tsenddata(ep, sbuf + 9, 5000, sd, 0xc1de0000u | chunk, to,
			   tag(a, b, r, 3), ctx()),
	      "fi_tsenddata");
	// RMA: writes with immediate data (each a completion at b), a plain
	// write, a read.
	check(fi_writedata(ep, sbuf + 3, 100, sd, 0xda7a0000u | chunk, to,
			   remote(b, win), wkey, ctx()),
	      "fi_writedata");
	check(fi_write(ep, sbuf + 5, 20, sd, to, remote(b, win + 104), wkey,
		       ctx()),
	      "fi_write");
	check(fi_writedata(ep, sbuf + 200, 9000, sd, 0xdb7a0000u | chunk, to,
			   remote(b, win + 128), wkey, ctx()),
	      "fi_writedata");
	expect_ += 2; // b's remote CQ data
	check(fi_write(ep, sbuf + 300, 5000, sd, to, remote(b, win + 9200),
		       wkey, ctx()),
	      "fi_write");
	check(fi_read(ep, res, 9000, resd, to, remote(b, win + 15000), wkey,
		      ctx()),
	      "fi_read");
	// Native atomics: one 64-bit fetch-add, one compare-swap.
	uint8_t *op = sbuf + 60000;
	check(fi_fetch_atomic(ep, op, 1, sd, res + 9216, resd, to,
			      remote(b, win + 24000), wkey, FI_UINT64, FI_SUM,
			      ctx()),
	      "fi_fetch_atomic");
	check(fi_compare_atomic(ep, op, 1, sd, op + 8, sd, res + 9224, resd,
				to, remote(b, win + 24008), wkey, FI_UINT64,
				FI_CSWAP, ctx()),
	      "fi_compare_atomic");
	// The others travel with the fabsim atomic header.
	check(fi_atomic(ep, op + 16, 4, sd, to, remote(b, win + 24016), wkey,
			FI_UINT32, FI_SUM, ctx()),
	      "fi_atomic");
	check(fi_fetch_atomic(ep, op + 32, 3, sd, res + 9232, resd, to,
			      remote(b, win + 24032), wkey, FI_INT32, FI_MAX,
			      ctx()),
	      "fi_fetch_atomic");
	check(fi_compare_atomic(ep, op + 48, 2, sd, op + 52, sd, res + 9248,
				resd, to, remote(b, win + 24048), wkey,
				FI_INT16, FI_CSWAP, ctx()),
	      "fi_compare_atomic");
}

bool Traffic::run(std::string *why)
{
	int n = s_.size();
	mem_.resize(n);
	ctx_.resize((size_t)n * n * rounds_ * 32);
	for (int i = 0; i < n; i++) {
		NodeMem &m = mem_[i];
		m.send.resize(65536);
		for (size_t k = 0; k < m.send.size(); k++)
			m.send[k] = (uint8_t)(k * 7 + i * 31 + (k >> 8) + 0x40);
		m.recv.assign((size_t)n * rounds_ * 32768, 0);
		m.window.assign((size_t)n * rounds_ * 32768, 0);
		for (size_t k = 0; k < m.window.size(); k++)
			m.window[k] = (uint8_t)(k * 13 + i);
		m.result.assign((size_t)n * rounds_ * 16384, 0);
		m.send_mr = reg(i, m.send.data(), m.send.size(),
				   FI_SEND | FI_WRITE | FI_READ);
		m.recv_mr = reg(i, m.recv.data(), m.recv.size(), FI_RECV);
		m.window_mr = reg(i, m.window.data(), m.window.size(),
				     FI_REMOTE_READ | FI_REMOTE_WRITE);
		m.result_mr = reg(i, m.result.data(), m.result.size(),
				     FI_READ | FI_WRITE | FI_RECV);
		if (!m.send_mr || !m.recv_mr || !m.window_mr || !m.result_mr) {
			*why = "fi_mr_reg failed";
			return false;
		}
	}
	for (int r = 0; r < rounds_; r++)
		for (int a = 0; a < n; a++)
			for (int b = 0; b < n; b++)
				if (a != b)
					post_pair(a, b, r);
	if (!err_.empty()) {
		*why = err_;
		return false;
	}
	std::vector<Completion> done;
	if (!s_.collect(expect_, &done)) {
		*why = "only " + std::to_string(done.size()) + " of " +
		       std::to_string(expect_) + " completions";
		return false;
	}
	for (auto &c : done)
		if (c.error) {
			*why = std::string("a completion in error: ") +
			       fi_strerror(c.err);
			return false;
		}
	return true;
}

} // namespace rec

namespace {

const uint64_t kVirt = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
		       FI_MR_PROV_KEY;
// Offsets instead of virtual addresses: nothing in the frames depends on
// where this process's heap is (for byte-identical reruns).
const uint64_t kOffsets = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY;

struct Result {
	fabsim_stats stats = {};
	std::string failure;
};

// Runs the fixed workload on `nodes` RDM nodes with these settings.
Result RunRdm(int nodes, std::map<std::string, std::string> env,
	      uint64_t mr_mode = kVirt, int rounds = 1)
{
	Result res;
	Scenario s(nodes, env, mr_mode);
	if (!s.failure.empty()) {
		res.failure = s.failure;
		return res;
	}
	rec::Traffic t(s, mr_mode & FI_MR_VIRT_ADDR, rounds);
	if (!t.run(&res.failure))
		return res;
	// Let the last ACKs land: nothing moves on the wire after this.
	s.ext()->advance(&s.node(0).domain->fid, 10000000);
	res.stats.size = sizeof(res.stats);
	s.ext()->stats(&s.node(0).domain->fid, &res.stats);
	return res;
}

std::map<std::string, std::string> Lossy(const std::string &pcap,
					 const std::string &log)
{
	return {{"FI_SIM_PRESET", "roce-100g"},  {"FI_SIM_SEED", "7"},
		{"FI_SIM_LOSS_RATE", "0.03"},    {"FI_SIM_PCAP", pcap},
		{"FI_SIM_PCAP_LOG", log},        {"FI_SIM_TOPOLOGY_HOSTS", "4"}};
}

const char *kFields[] = {
	"frame.number",                    // 0
	"frame.protocols",                 // 1
	"infiniband.bth.opcode",           // 2
	"infiniband.bth.destqp",           // 3
	"infiniband.bth.psn",              // 4
	"infiniband.bth.a",                // 5
	"infiniband.reth.va",              // 6
	"infiniband.reth.r_key",           // 7
	"infiniband.reth.dmalen",          // 8
	"infiniband.aeth.syndrome",        // 9
	"infiniband.aeth.msn",             // 10
	"infiniband.atomiceth.swapdt",     // 11
	"infiniband.atomiceth.cmpdt",      // 12
	"infiniband.atomicacketh.origremdt", // 13
	"infiniband.deth.q_key",           // 14
	"infiniband.deth.srcqp",           // 15
	"infiniband.immdt",                // 16
	"udp.srcport",                     // 17
	"ip.src",                          // 18
	"ip.dst",                          // 19
	"fabsim.tag.tag",                  // 20
	"fabsim.tag.flags",                // 21
	"fabsim.atomic.op",                // 22
	"fabsim.atomic.datatype",          // 23
	"fabsim.atomic.count",             // 24
	"fabsim.atomic.flags",             // 25
	"fabsim.atomic.va",                // 26
	"fabsim.atomic.rkey",              // 27
	"fabsim.atomic_resp.op",           // 28
	"fabsim.atomic_resp.count",        // 29
	"fabsim.atomic_resp.flags",        // 30
	"fabsim.marked.flags",             // 31
	"frame.len",                       // 32
	"frame.time_epoch",                // 33
	"eth.src",                         // 34
	"eth.type",                        // 35
	"fabsim.mark.flags",               // 36
	"infiniband.mad.attributeid",      // 37
	"frame.cap_len",                   // 38
};
const size_t kFieldCount = sizeof(kFields) / sizeof(kFields[0]);

// tshark's view of a file: the fields above for every frame.
std::vector<std::vector<std::string>> Decode(const std::string &pcap)
{
	std::string args = "-r " + pcap +
			   " -T fields -E separator=/t -E occurrence=f";
	for (const char *f : kFields)
		args += std::string(" -e ") + f;
	int st;
	std::vector<std::vector<std::string>> out;
	for (auto &line : rec::Lines(rec::Tshark(args, &st)))
		out.push_back(rec::Split(line, '\t'));
	EXPECT_EQ(0, st) << "tshark on " << pcap;
	return out;
}

std::string MarkFlags(const std::string &mark)
{
	if (mark == "-")
		return "";
	uint32_t v = 0;
	for (auto &w : rec::Split(mark, ','))
		v |= w == "dropped" ? 1 : w == "corrupted" ? 2 :
		     w == "retransmit" ? 4 : w == "duplicate" ? 8 :
		     w == "reordered" ? 16 : 0x8000;
	return Hex(v, 4);
}

std::string Ip(uint32_t host)
{
	return "10.0.0." + std::to_string(host + 1);
}

std::pair<uint32_t, uint32_t> HostQp(const std::string &v)
{
	auto p = rec::Split(v, ':');
	return {(uint32_t)std::stoul(p[0]), (uint32_t)std::stoul(p[1])};
}

// Every frame of `pcap` against the NIC's log lines for that file: the
// same number of data frames, each decoded by tshark as the NIC logged it,
// marker frames exactly before the marked ones. `full`: whole frames (else
// cut by the snap length: headers only). Returns how many frames matched.
size_t CompareWithLog(const std::string &pcap,
		      const std::vector<LogLine> &log, bool full)
{
	auto frames = Decode(pcap);
	std::map<uint64_t, const LogLine *> by_frame;
	for (auto &l : log)
		by_frame[l.num("frame")] = &l;
	EXPECT_FALSE(frames.empty()) << pcap;
	size_t matched = 0;
	for (size_t i = 0; i < frames.size(); i++) {
		auto &f = frames[i];
		SCOPED_TRACE(pcap + " frame " + std::to_string(i + 1));
		if (f.size() < kFieldCount) {
			ADD_FAILURE() << "tshark gave " << f.size() << " fields";
			continue;
		}
		EXPECT_EQ(std::to_string(i + 1), f[0]);
		if (f[35] == "0x88b5") {
			// A marker: the next frame is the marked one.
			auto next = by_frame.find(i + 2);
			if (next == by_frame.end()) {
				ADD_FAILURE() << "marker with no log line after it";
				continue;
			}
			EXPECT_EQ(MarkFlags((*next->second)["mark"]), f[36]);
			continue;
		}
		auto it = by_frame.find(i + 1);
		if (it == by_frame.end()) {
			ADD_FAILURE() << "frame not in the NIC's log: " << f[1];
			continue;
		}
		const LogLine &l = *it->second;
		SCOPED_TRACE(l.text);
		auto src = HostQp(l["src"]), dst = HostQp(l["dst"]);
		uint32_t op = (uint32_t)l.num("op");
		EXPECT_EQ(0u, f[1].find("eth:ethertype:ip:udp:infiniband")) << f[1];
		EXPECT_EQ(std::to_string(op), f[2]);
		EXPECT_EQ(Hex(dst.second, 6), f[3]);
		EXPECT_EQ(l["psn"], f[4]);
		EXPECT_EQ(l["ackreq"] == "1" ? "1" : "0", f[5]);
		EXPECT_EQ(std::to_string(0xC000 | (src.second & 0x3FFF)), f[17]);
		EXPECT_EQ(Ip(src.first), f[18]);
		EXPECT_EQ(Ip(dst.first), f[19]);
		char mac[32];
		snprintf(mac, sizeof(mac), "02:00:0a:00:00:%02x", src.first + 1);
		EXPECT_EQ(mac, f[34]);
		// Virtual time in ns, as tshark's seconds.
		uint64_t t = l.num("t");
		char ts[32];
		snprintf(ts, sizeof(ts), "%llu.%09llu",
			 (unsigned long long)(t / 1000000000),
			 (unsigned long long)(t % 1000000000));
		EXPECT_EQ(ts, f[33]);
		EXPECT_EQ(MarkFlags(l["mark"]), f[31]);
		// Extended headers, as the NIC's opcode says.
		uint32_t ext = 0;
		if (l.has("reth")) {
			auto r = rec::Split(l["reth"], '/');
			EXPECT_EQ(Hex(std::stoull(r[0], nullptr, 16), 16), f[6]);
			EXPECT_EQ(Hex(std::stoull(r[1], nullptr, 16), 8), f[7]);
			EXPECT_EQ(r[2], f[8]);
			ext += 16;
		} else if (l.has("atomic")) {
			auto r = rec::Split(l["atomic"], '/');
			EXPECT_EQ(Hex(std::stoull(r[0], nullptr, 16), 16), f[6]);
			EXPECT_EQ(Hex(std::stoull(r[1], nullptr, 16), 8), f[7]);
			EXPECT_EQ(r[2], f[11]);
			EXPECT_EQ(r[3], f[12]);
			ext += 28;
		} else {
			EXPECT_EQ("", f[6]);
			EXPECT_EQ("", f[11]);
		}
		if (l.has("aeth")) {
			auto r = rec::Split(l["aeth"], '/');
			EXPECT_EQ(r[0], f[9]);
			EXPECT_EQ(r[1], f[10]);
			ext += 4;
		} else {
			EXPECT_EQ("", f[9]);
		}
		if (l.has("ackorig")) {
			EXPECT_EQ(l["ackorig"], f[13]);
			ext += 8;
		} else {
			EXPECT_EQ("", f[13]);
		}
		if (l.has("imm")) {
			EXPECT_EQ(l["imm"].substr(2), f[16]);
			ext += 4;
		} else {
			EXPECT_EQ("", f[16]);
		}
		if (l.has("deth")) {
			auto r = rec::Split(l["deth"], '/');
			EXPECT_EQ(Hex(std::stoull(r[0], nullptr, 16), 16), f[14]);
			EXPECT_EQ(Hex(std::stoull(r[1]), 8), f[15]);
			ext += 8;
		} else {
			EXPECT_EQ("", f[14]);
		}
		// Frame length: Ethernet, IPv4, UDP, BTH, the extended headers,
		// payload (fabsim headers included) and pad, ICRC.
		uint64_t len = l.num("len");
		EXPECT_EQ(std::to_string(14 + 20 + 8 + 12 + ext + len +
					 (4 - len % 4) % 4 + 4),
			  f[32]);
		if (!full) {
			EXPECT_LE(std::stoul(f[38]), (unsigned long)TR_SNAPLEN_HEADERS);
		} else {
			EXPECT_EQ(f[32], f[38]);
			// The fabsim headers, decoded by the Lua dissector.
			if (l.has("tag")) {
				auto r = rec::Split(l["tag"], '/');
				EXPECT_EQ(Hex(std::stoull(r[0], nullptr, 16), 16), f[20]);
				EXPECT_EQ(Hex(std::stoul(r[1]), 2), f[21]);
			} else {
				EXPECT_EQ("", f[20]);
			}
			if (l.has("fsat")) {
				auto r = rec::Split(l["fsat"], '/');
				EXPECT_EQ(r[0], f[22]);
				EXPECT_EQ(r[1], f[23]);
				EXPECT_EQ(r[2], f[24]);
				EXPECT_EQ(Hex(std::stoul(r[3]), 2), f[25]);
				EXPECT_EQ(Hex(std::stoull(r[4], nullptr, 16), 16), f[26]);
				EXPECT_EQ(Hex(std::stoull(r[5], nullptr, 16), 8), f[27]);
			} else {
				EXPECT_EQ("", f[22]);
			}
			if (l.has("fsar")) {
				auto r = rec::Split(l["fsar"], '/');
				EXPECT_EQ(r[0], f[28]);
				EXPECT_EQ(r[2], f[29]);
				EXPECT_EQ(Hex(std::stoul(r[3]), 2), f[30]);
			} else {
				EXPECT_EQ("", f[28]);
			}
		}
		matched++;
	}
	EXPECT_EQ(log.size(), matched) << "log lines without their frame";
	return matched;
}

// No frame tshark calls malformed, no expert warning or error, nothing but
// RoCEv2 and the marker frames.
void ExpectClean(const std::string &pcap)
{
	int st;
	std::string bad = rec::Tshark(
		"-r " + pcap +
			" -Y '_ws.malformed || _ws.expert.severity >= warning ||"
			" !(infiniband || eth.type == 0x88b5)' -T fields -e frame.number"
			" -e frame.protocols -e _ws.expert.message",
		&st);
	EXPECT_EQ(0, st);
	EXPECT_EQ("", bad) << "frames tshark flags in " << pcap;
}

std::vector<LogLine> ForFile(const std::vector<LogLine> &log,
			     const std::string &file)
{
	std::vector<LogLine> out;
	for (auto &l : log)
		if (l["file"] == file)
			out.push_back(l);
	return out;
}

tr_summary *Summary(const std::string &pcap)
{
	tr_summary *s = nullptr;
	tr_error err;
	EXPECT_EQ(0, tr_summary_file(pcap.c_str(), &s, &err)) << err.msg;
	return s;
}

void ExpectCheckClean(const std::string &pcap)
{
	tr_check_result res = {};
	char *text = nullptr;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int ret = tr_check_file(pcap.c_str(), out, &res);
	fclose(out);
	EXPECT_EQ(0, ret) << "trace check " << pcap << ":\n" << text;
	free(text);
}

// ---- The whole fabric in one file -----------------------------------------------

TEST(Record, EveryKindOfTrafficDecodesAsTheNicLoggedIt)
{
	std::string pcap = Temp("mixed.pcap"), log = Temp("mixed.log");
	Result r = RunRdm(3, Lossy(pcap, log));
	ASSERT_EQ("", r.failure);
	auto lines = rec::ReadLog(log);
	ASSERT_FALSE(lines.empty());

	// What the run must have put on the wire, by opcode and header.
	std::set<uint32_t> ops;
	bool tagged = false, tag_data = false, fsat = false, fsar = false;
	for (auto &l : lines) {
		ops.insert((uint32_t)l.num("op"));
		tagged |= l.has("tag");
		tag_data |= l.has("tag") && l["tag"].back() == '1';
		fsat |= l.has("fsat");
		fsar |= l.has("fsar");
		EXPECT_EQ("fabric", l["file"]);
	}
	for (uint32_t op = 0x00; op <= 0x14; op++)
		EXPECT_TRUE(ops.count(op)) << "no opcode " << op << " in the run";
	EXPECT_TRUE(tagged && tag_data && fsat && fsar);

	tr_summary *s = Summary(pcap);
	ASSERT_NE(nullptr, s);
	// Losses and the go-back-N resends they cause, as the NIC counted.
	EXPECT_GT(r.stats.packets_dropped, 0u);
	EXPECT_GT(r.stats.retransmits, 0u);
	EXPECT_EQ(r.stats.packets_dropped, s->dropped);
	EXPECT_EQ(r.stats.retransmits, s->marked_retransmits);
	EXPECT_EQ(r.stats.packets_sent, s->packets);
	EXPECT_GE(s->retransmissions, 1u);
	EXPECT_EQ(0u, s->malformed);
	EXPECT_EQ(0u, s->icrc_bad);
	EXPECT_LE(s->markers, s->dropped + s->marked_retransmits);
	// fabsim atomics count as atomics (3 per pair), with a latency.
	EXPECT_EQ(6u * 5, s->messages[TR_MSG_ATOMIC].count);
	EXPECT_GT(s->latency[TR_LAT_ATOMIC].count, 0u);
	EXPECT_GT(s->tagged_messages, 0u);
	tr_summary_free(s);
	ExpectCheckClean(pcap);

	if (!rec::HaveTshark()) {
		GTEST_SKIP() << "tshark is not installed: the decoding half is not checked";
	}
	ExpectClean(pcap);
	EXPECT_EQ(lines.size(), CompareWithLog(pcap, lines, true));
}

// A connection: the CM's MADs (REQ, REP, RTU; DREQ, DREP at shutdown) are UD
// SENDs to QP 1 with a DETH, which tshark decodes as InfiniBand CM.
TEST(Record, ConnectionSetupAndShutdownAreCmMads)
{
	std::string pcap = Temp("msg.pcap"), log = Temp("msg.log");
	{
		Scenario s(2,
			   {{"FI_SIM_PRESET", "roce-25g"},
			    {"FI_SIM_PCAP", pcap},
			    {"FI_SIM_PCAP_LOG", log}},
			   kVirt, FI_EP_MSG);
		ASSERT_EQ("", s.failure);
		std::vector<uint8_t> a(4096, 0x5a), b(4096);
		fid_mr *ma = s.reg(0, a.data(), a.size(), FI_SEND);
		fid_mr *mb = s.reg(1, b.data(), b.size(), FI_RECV);
		fi_context2 c[2];
		ASSERT_EQ(0, fi_recv(s.ep(1, 0), b.data(), 3000, s.desc(mb), 0, &c[0]));
		ASSERT_EQ(0, fi_send(s.ep(0, 1), a.data(), 3000, s.desc(ma), 0, &c[1]));
		std::vector<Completion> done;
		ASSERT_TRUE(s.collect(2, &done));
		ASSERT_EQ(0, fi_shutdown(s.ep(0, 1), 0));
		uint32_t event = 0;
		uint8_t entry[sizeof(fi_eq_cm_entry) + 256];
		EXPECT_GE(fi_eq_sread(s.node(1).eq, &event, entry, sizeof(entry),
				      10000, 0),
			  (ssize_t)sizeof(fi_eq_cm_entry));
		EXPECT_EQ((uint32_t)FI_SHUTDOWN, event);
	}
	auto lines = rec::ReadLog(log);
	size_t mads = 0, data = 0;
	for (auto &l : lines) {
		if (HostQp(l["dst"]).second == 1) {
			mads++;
			EXPECT_EQ("100", l["op"]) << l.text; // UD SEND_ONLY
			EXPECT_EQ("0x80010000/1", l["deth"]) << l.text;
		} else {
			data++;
			EXPECT_GE(HostQp(l["dst"]).second, 2u);
		}
	}
	EXPECT_GE(mads, 5u); // REQ, REP, RTU, DREQ, DREP
	EXPECT_GE(data, 2u);
	ExpectCheckClean(pcap);
	REQUIRE_TSHARK();
	ExpectClean(pcap);
	CompareWithLog(pcap, lines, true);
	// tshark names each CM message.
	int st;
	std::string cm = rec::Tshark("-r " + pcap +
					     " -Y infiniband.mad -T fields -e frame.protocols"
					     " -e infiniband.mad.mgmtclass -e infiniband.mad.attributeid",
				     &st);
	std::set<std::string> attrs;
	for (auto &line : rec::Lines(cm)) {
		auto f = rec::Split(line, '\t');
		ASSERT_EQ(3u, f.size()) << line;
		EXPECT_NE(std::string::npos, f[0].find(":infiniband")) << line;
		EXPECT_EQ("0x07", f[1]) << line; // Communication Management
		attrs.insert(f[2]);
	}
	EXPECT_EQ(mads, rec::Lines(cm).size());
	for (const char *a : {"0x0010", "0x0013", "0x0014", "0x0015", "0x0016"})
		EXPECT_TRUE(attrs.count(a)) << "no CM attribute " << a;
	// The REQ's path LIDs are permissive, as the kernel's CM sends them
	// on RoCE.
	std::string lids = rec::Tshark("-r " + pcap +
				       " -Y infiniband.cm.req -T fields"
				       " -e infiniband.cm.req.prim_locallid"
				       " -e infiniband.cm.req.prim_remotelid",
				       &st);
	ASSERT_FALSE(rec::Lines(lids).empty());
	for (auto &line : rec::Lines(lids))
		EXPECT_EQ("65535\t65535", line);
}

// Datagrams: UD SEND_ONLY with a DETH (the Q_Key and the source QP).
TEST(Record, DatagramsCarryADeth)
{
	std::string pcap = Temp("dgram.pcap"), log = Temp("dgram.log");
	{
		Scenario s(2,
			   {{"FI_SIM_PRESET", "roce-100g"},
			    {"FI_SIM_PCAP", pcap},
			    {"FI_SIM_PCAP_LOG", log}},
			   kVirt, FI_EP_DGRAM);
		ASSERT_EQ("", s.failure);
		std::vector<uint8_t> a(4096, 0x33), b(4096);
		fid_mr *ma = s.reg(0, a.data(), a.size(), FI_SEND);
		fid_mr *mb = s.reg(1, b.data(), b.size(), FI_RECV);
		fi_context2 c[6];
		for (int k = 0; k < 3; k++)
			ASSERT_EQ(0, fi_recv(s.ep(1, 0), b.data() + 1024 * k, 1024,
					     s.desc(mb), FI_ADDR_UNSPEC, &c[k]));
		for (int k = 0; k < 3; k++)
			ASSERT_EQ(0, fi_send(s.ep(0, 1), a.data(), 100 + 300 * k,
					     s.desc(ma), s.addr(0, 1), &c[3 + k]));
		std::vector<Completion> done;
		ASSERT_TRUE(s.collect(6, &done));
	}
	auto lines = rec::ReadLog(log);
	ASSERT_EQ(3u, lines.size());
	for (auto &l : lines) {
		EXPECT_EQ("100", l["op"]);
		EXPECT_TRUE(l.has("deth"));
	}
	// A UD QP numbers its packets: consecutive PSNs.
	EXPECT_EQ(std::stoul(lines[1]["psn"]), std::stoul(lines[0]["psn"]) + 1);
	EXPECT_EQ(std::stoul(lines[2]["psn"]), std::stoul(lines[1]["psn"]) + 1);
	ExpectCheckClean(pcap);
	REQUIRE_TSHARK();
	ExpectClean(pcap);
	EXPECT_EQ(3u, CompareWithLog(pcap, lines, true));
}

// Duplicates made by the network and corrupted arrivals are marked; the
// corrupted frame is recorded damaged (its ICRC fails, as expected).
TEST(Record, NetworkDuplicatesAndCorruptionAreMarked)
{
	std::string pcap = Temp("dup.pcap"), log = Temp("dup.log");
	auto env = Lossy(pcap, log);
	env["FI_SIM_LOSS_RATE"] = "0.01";
	env["FI_SIM_LOSS_DUPLICATE_RATE"] = "0.02";
	env["FI_SIM_LOSS_CORRUPT_RATE"] = "0.01";
	Result r = RunRdm(3, env);
	ASSERT_EQ("", r.failure);
	tr_summary *s = Summary(pcap);
	ASSERT_NE(nullptr, s);
	EXPECT_GT(s->duplicated, 0u);
	EXPECT_GT(s->corrupted, 0u);
	EXPECT_EQ(r.stats.packets_corrupted, s->corrupted);
	EXPECT_EQ(r.stats.packets_dropped, s->dropped);
	EXPECT_EQ(r.stats.retransmits, s->marked_retransmits);
	EXPECT_EQ(0u, s->icrc_bad); // the damaged ones are marked
	tr_summary_free(s);
	ExpectCheckClean(pcap);
	REQUIRE_TSHARK();
	auto lines = rec::ReadLog(log);
	EXPECT_EQ(lines.size(), CompareWithLog(pcap, lines, true));
}

// ---- One file per host ------------------------------------------------------------

TEST(Record, PerNodeFilesHoldWhatEachHostSentAndReceived)
{
	std::string base = Temp("node"), log = Temp("node.log");
	auto env = Lossy(base + ".pcap", log);
	env["FI_SIM_PCAP_PER_NODE"] = "1";
	Result r = RunRdm(3, env);
	ASSERT_EQ("", r.failure);
	auto lines = rec::ReadLog(log);
	uint64_t drops = 0;
	for (uint32_t h = 0; h < 3; h++) {
		std::string pcap = base + "." + std::to_string(h) + ".pcap";
		SCOPED_TRACE(pcap);
		ASSERT_TRUE(rec::Exists(pcap));
		auto mine = ForFile(lines, std::to_string(h));
		ASSERT_FALSE(mine.empty());
		for (auto &l : mine)
			EXPECT_TRUE(HostQp(l["src"]).first == h ||
				    HostQp(l["dst"]).first == h)
				<< l.text;
		ExpectCheckClean(pcap);
		tr_summary *s = Summary(pcap);
		ASSERT_NE(nullptr, s);
		drops += s->dropped;
		tr_summary_free(s);
		if (rec::HaveTshark()) {
			ExpectClean(pcap);
			EXPECT_EQ(mine.size(), CompareWithLog(pcap, mine, true));
		}
	}
	// Host 3 has no NIC: no file.
	EXPECT_FALSE(rec::Exists(base + ".3.pcap"));
	// Each loss shows in the sender's file and in the receiver's.
	EXPECT_GT(r.stats.packets_dropped, 0u);
	EXPECT_EQ(2 * r.stats.packets_dropped, drops);
	EXPECT_EQ(lines.size(), ForFile(lines, "0").size() +
					ForFile(lines, "1").size() +
					ForFile(lines, "2").size());
}

// ---- Determinism and snap length -----------------------------------------------------

TEST(Record, SameRunSameBytes)
{
	for (bool per_node : {false, true}) {
		std::vector<std::vector<rec::Bytes>> runs;
		for (int run = 0; run < 2; run++) {
			std::string base = Temp("det" + std::to_string(run));
			auto env = Lossy(base + ".pcap", base + ".log");
			env["FI_SIM_LOSS_DUPLICATE_RATE"] = "0.01";
			if (per_node)
				env["FI_SIM_PCAP_PER_NODE"] = "yes";
			Result r = RunRdm(3, env, kOffsets);
			ASSERT_EQ("", r.failure);
			std::vector<rec::Bytes> files;
			if (per_node)
				for (int h = 0; h < 3; h++)
					files.push_back(rec::ReadFile(
						base + "." + std::to_string(h) + ".pcap"));
			else
				files.push_back(rec::ReadFile(base + ".pcap"));
			files.push_back(rec::ReadFile(base + ".log"));
			runs.push_back(files);
		}
		ASSERT_EQ(runs[0].size(), runs[1].size());
		for (size_t i = 0; i < runs[0].size(); i++) {
			EXPECT_GT(runs[0][i].size(), 24u);
			EXPECT_TRUE(runs[0][i] == runs[1][i])
				<< (per_node ? "per node" : "whole fabric")
				<< ", file " << i << " differs";
		}
	}
}

TEST(Record, SnapLengthKeepsHeadersOnly)
{
	std::string full = Temp("full.pcap"), cut = Temp("cut.pcap");
	Result a = RunRdm(3, Lossy(full, Temp("full.log")), kOffsets);
	ASSERT_EQ("", a.failure);
	auto env = Lossy(cut, Temp("cut.log"));
	env["FI_SIM_PCAP_SNAPLEN"] = "128";
	Result b = RunRdm(3, env, kOffsets);
	ASSERT_EQ("", b.failure);

	// The same frames, cut at 128 bytes, with their original lengths.
	tr_reader *ra, *rb;
	tr_error err;
	ASSERT_EQ(0, tr_reader_open(&ra, full.c_str(), &err)) << err.msg;
	ASSERT_EQ(0, tr_reader_open(&rb, cut.c_str(), &err)) << err.msg;
	tr_record x, y;
	size_t frames = 0, cut_frames = 0;
	for (;;) {
		int na = tr_reader_next(ra, &x, &err), nb = tr_reader_next(rb, &y, &err);
		ASSERT_EQ(na, nb);
		if (na <= 0)
			break;
		frames++;
		EXPECT_EQ(x.wirelen, y.wirelen);
		EXPECT_EQ(x.ts_ns, y.ts_ns);
		EXPECT_EQ(std::min<uint32_t>(x.caplen, 128), y.caplen);
		EXPECT_EQ(0, memcmp(x.data, y.data, y.caplen));
		cut_frames += y.caplen < y.wirelen;
	}
	tr_reader_close(ra);
	tr_reader_close(rb);
	EXPECT_GT(frames, 100u);
	EXPECT_GT(cut_frames, 10u);
	rec::Bytes fa = rec::ReadFile(full), fb = rec::ReadFile(cut);
	EXPECT_LT(fb.size() * 2, fa.size());

	ExpectCheckClean(cut);
	tr_summary *s = Summary(cut);
	ASSERT_NE(nullptr, s);
	EXPECT_EQ(b.stats.packets_dropped, s->dropped);
	EXPECT_EQ(b.stats.retransmits, s->marked_retransmits);
	EXPECT_EQ(cut_frames, s->truncated);
	tr_summary_free(s);
	REQUIRE_TSHARK();
	auto lines = rec::ReadLog(Temp("cut.log"));
	EXPECT_EQ(lines.size(), CompareWithLog(cut, lines, false));
}

// ---- Configuration ------------------------------------------------------------------

// Runs fi_getinfo + fi_fabric with env set; returns the first error and
// what the provider logged.
int OpenWith(const std::map<std::string, std::string> &env, std::string *logged)
{
	std::string errpath = Temp("stderr.txt");
	fflush(stderr);
	int saved = dup(2);
	int fd = open(errpath.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
	dup2(fd, 2);
	close(fd);
	for (auto &kv : env)
		setenv(kv.first.c_str(), kv.second.c_str(), 1);
	fi_info *hints = fi_allocinfo(), *info = nullptr;
	hints->fabric_attr->prov_name = strdup("sim");
	hints->ep_attr->type = FI_EP_RDM;
	int ret = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info);
	if (!ret) {
		fid_fabric *fab = nullptr;
		ret = fi_fabric(info->fabric_attr, &fab, nullptr);
		if (!ret)
			ret = fi_close(&fab->fid);
	}
	fi_freeinfo(info);
	fi_freeinfo(hints);
	for (auto &kv : env)
		unsetenv(kv.first.c_str());
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	auto bytes = rec::ReadFile(errpath);
	logged->assign(bytes.begin(), bytes.end());
	return ret;
}

TEST(RecordConfig, BadValuesAreRejectedNamingTheKey)
{
	struct Case {
		std::map<std::string, std::string> env;
		const char *names;
	} cases[] = {
		{{{"FI_SIM_PCAP", Temp("x.pcap")}, {"FI_SIM_PCAP_SNAPLEN", "50"}},
		 "FI_SIM_PCAP_SNAPLEN"},
		{{{"FI_SIM_PCAP", Temp("x.pcap")}, {"FI_SIM_PCAP_SNAPLEN", "300000"}},
		 "FI_SIM_PCAP_SNAPLEN"},
		{{{"FI_SIM_PCAP", Temp("x.pcap")}, {"FI_SIM_PCAP_SNAPLEN", "lots"}},
		 "FI_SIM_PCAP_SNAPLEN"},
		{{{"FI_SIM_PCAP", Temp("x.pcap")}, {"FI_SIM_PCAP_PER_NODE", "maybe"}},
		 "FI_SIM_PCAP_PER_NODE"},
		{{{"FI_SIM_PCAP_SNAPLEN", "128"}}, "FI_SIM_PCAP_SNAPLEN"},
		{{{"FI_SIM_PCAP_PER_NODE", "1"}}, "FI_SIM_PCAP_PER_NODE"},
		{{{"FI_SIM_PCAP", Temp("no/such/dir/x.pcap")}}, "FI_SIM_PCAP"},
		{{{"FI_SIM_PCAP", Temp("no/such/dir/x")}, {"FI_SIM_PCAP_PER_NODE", "1"}},
		 "FI_SIM_PCAP"},
		{{{"FI_SIM_PCAPS", "x"}}, "FI_SIM_PCAPS"},
	};
	setenv("FI_LOG_LEVEL", "warn", 1);
	for (auto &c : cases) {
		std::string logged;
		EXPECT_NE(0, OpenWith(c.env, &logged)) << c.names;
		EXPECT_NE(std::string::npos, logged.find(c.names))
			<< "the message should name " << c.names << ": " << logged;
	}
	unsetenv("FI_LOG_LEVEL");
}

// The provider's own settings refuse what they cannot mean, naming the
// variable: an ACK timeout of 0 (every send would time out), a yes/no
// setting that is neither (it was ignored with a warning).
TEST(ProviderConfig, ValuesASettingCannotTakeAreRefused)
{
	setenv("FI_LOG_LEVEL", "warn", 1);
	for (auto env : std::vector<std::map<std::string, std::string>>{
		     {{"FI_SIM_ACK_TIMEOUT_NS", "0"}},
		     {{"FI_SIM_MR_STRICT", "perhaps"}}}) {
		std::string logged;
		const std::string &name = env.begin()->first;
		EXPECT_NE(0, OpenWith(env, &logged)) << name;
		EXPECT_NE(std::string::npos, logged.find(name)) << logged;
	}
	std::string logged;
	EXPECT_EQ(0, OpenWith({{"FI_SIM_ACK_TIMEOUT_NS", "1"},
			       {"FI_SIM_MR_STRICT", "no"}}, &logged))
		<< logged;
	unsetenv("FI_LOG_LEVEL");
}

// A trace that cannot be written (a full disk) is the fabric's close's
// error, named in the log, rather than a close that says all went well.
TEST(RecordConfig, ATraceTheDiskCannotTakeFailsTheFabricsClose)
{
	if (access("/dev/full", W_OK))
		GTEST_SKIP() << "no /dev/full here";
	setenv("FI_LOG_LEVEL", "warn", 1);
	std::string logged;
	EXPECT_EQ(-FI_EIO, OpenWith({{"FI_SIM_PCAP", "/dev/full"}}, &logged));
	EXPECT_NE(std::string::npos, logged.find("disk full")) << logged;
	unsetenv("FI_LOG_LEVEL");
}

TEST(RecordConfig, JsonFileKeysAndVariablesOverThem)
{
	std::string json = Temp("rec.json"), pcap = Temp("json.pcap");
	{
		std::ofstream out(json);
		out << "{\"preset\": \"roce-100g\", \"link\": {\"latency_ns\": 300},"
		       " \"pcap\": \"" << pcap << "\", \"pcap_snaplen\": 128,"
		       " \"pcap_per_node\": false}\n";
	}
	Result r = RunRdm(2, {{"FI_SIM_CONFIG", json}});
	ASSERT_EQ("", r.failure);
	tr_reader *rd;
	tr_error err;
	ASSERT_EQ(0, tr_reader_open(&rd, pcap.c_str(), &err)) << err.msg;
	tr_reader_info info;
	tr_reader_get_info(rd, &info);
	EXPECT_EQ(128u, info.snaplen);
	tr_reader_close(rd);

	// A variable wins over the file's key.
	Result r2 = RunRdm(2, {{"FI_SIM_CONFIG", json},
			       {"FI_SIM_PCAP_SNAPLEN", "0"}});
	ASSERT_EQ("", r2.failure);
	ASSERT_EQ(0, tr_reader_open(&rd, pcap.c_str(), &err)) << err.msg;
	tr_reader_get_info(rd, &info);
	EXPECT_EQ(TR_SNAPLEN_FULL, info.snaplen);
	tr_reader_close(rd);

	// A bad value in the file names the key and the file.
	{
		std::ofstream out(json);
		out << "{\"pcap\": \"" << pcap << "\", \"pcap_snaplen\": \"big\"}\n";
	}
	setenv("FI_LOG_LEVEL", "warn", 1);
	std::string logged;
	EXPECT_NE(0, OpenWith({{"FI_SIM_CONFIG", json}}, &logged));
	EXPECT_NE(std::string::npos, logged.find("pcap_snaplen")) << logged;
	EXPECT_NE(std::string::npos, logged.find(json)) << logged;
	// The model's own keys are still checked.
	{
		std::ofstream out(json);
		out << "{\"pcap\": \"" << pcap << "\", \"lnk\": {}}\n";
	}
	EXPECT_NE(0, OpenWith({{"FI_SIM_CONFIG", json}}, &logged));
	EXPECT_NE(std::string::npos, logged.find("lnk")) << logged;
	unsetenv("FI_LOG_LEVEL");
}

TEST(RecordConfig, TheKeysAreListedLikeEveryParameter)
{
	// The provider defines its parameters when it is first loaded.
	fi_info *info = nullptr;
	fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, nullptr, &info);
	fi_freeinfo(info);
	fi_param *params = nullptr;
	int count = 0;
	ASSERT_EQ(0, fi_getparams(&params, &count));
	std::set<std::string> names;
	for (int i = 0; i < count; i++)
		names.insert(params[i].name);
	fi_freeparams(params);
	for (const char *k : {"FI_SIM_PCAP", "FI_SIM_PCAP_PER_NODE",
			      "FI_SIM_PCAP_SNAPLEN", "FI_SIM_PCAP_LOG"})
		EXPECT_TRUE(names.count(k)) << k;
}

} // namespace
