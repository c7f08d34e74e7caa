// N separate processes (tests/multiproc/mp_peer, a plain libfabric program)
// on one shared simulated fabric: tagged messages and RMA writes all to all,
// every payload checked by its receiver, the same completion stream and
// virtual time in every run.
#include <gtest/gtest.h>

#include "tests/multiproc/test_util.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct FabricRun {
	std::vector<std::string> lines; // "node i: ok, ..." per node, by node
	std::vector<int> status;
	std::string all;                // everything the nodes printed
	std::string dir;                // the run's directory
};

// Runs `nodes` mp_peer processes on a fresh shared fabric; kills them all
// after `limit_s` seconds.
FabricRun RunFabric(int nodes, int messages, size_t size,
	      const std::vector<std::string> &extra_env, int limit_s = 120)
{
	static int serial;
	std::string dir = multiproc::TempDir("mp");
	std::string fabric = "mp" + std::to_string(getpid()) + "x" +
			     std::to_string(serial++);
	std::vector<multiproc::Child> n;

	for (int i = 0; i < nodes; i++)
		n.push_back(multiproc::Start([&] {
			setenv("FI_PROVIDER", "sim", 1);
			setenv("FI_SIM_FABRIC", fabric.c_str(), 1);
			setenv("FI_SIM_NODE", std::to_string(i).c_str(), 1);
			setenv("FI_SIM_NODES", std::to_string(nodes).c_str(), 1);
			setenv("FABSIM_RUNTIME_DIR", dir.c_str(), 1);
			bool own_topology = std::any_of(
				extra_env.begin(), extra_env.end(),
				[](const std::string &kv) {
					return kv.rfind("FI_SIM_CONFIG=", 0) == 0;
				});
			if (nodes > 2 && !own_topology) {
				setenv("FI_SIM_TOPOLOGY_KIND", "star", 1);
				setenv("FI_SIM_TOPOLOGY_HOSTS",
				       std::to_string(nodes).c_str(), 1);
			}
			// "@DIR@" in a value stands for the run's directory.
			for (std::string kv : extra_env) {
				size_t at = kv.find("@DIR@");
				if (at != std::string::npos)
					kv.replace(at, 5, dir);
				putenv(strdup(kv.c_str()));
			}
			std::string path = multiproc::PeerPath("mp_peer");
			execl(path.c_str(), path.c_str(), dir.c_str(),
			      std::to_string(nodes).c_str(),
			      std::to_string(messages).c_str(),
			      std::to_string(size).c_str(), (char *)nullptr);
		}));
	multiproc::Finish(n, limit_s);
	FabricRun run;
	run.dir = dir;
	for (int i = 0; i < nodes; i++) {
		run.status.push_back(n[i].status);
		run.all += n[i].text;
		std::string want = "node " + std::to_string(i) + ": ok";
		size_t at = n[i].text.find(want);
		run.lines.push_back(at == std::string::npos ?
					    "" :
					    n[i].text.substr(at, n[i].text.find('\n', at) - at));
	}
	return run;
}

// Packets the fabric lost, as the last node to finish saw it.
long Dropped(const FabricRun &run)
{
	long most = 0;
	for (const auto &line : run.lines) {
		size_t at = line.rfind(", ");
		if (at != std::string::npos)
			most = std::max(most, atol(line.c_str() + at + 2));
	}
	return most;
}

void ExpectAllOk(const FabricRun &run)
{
	for (size_t i = 0; i < run.status.size(); i++) {
		EXPECT_TRUE(WIFEXITED(run.status[i]) && WEXITSTATUS(run.status[i]) == 0)
			<< "node " << i << " failed:\n" << run.all;
		EXPECT_FALSE(run.lines[i].empty()) << run.all;
	}
}

TEST(AllToAll, TwoProcessesExchangeMessagesAndWrites)
{
	FabricRun run = RunFabric(2, 20, 5000, {});
	ExpectAllOk(run);
}

// A thousand sends outstanding at a time across two processes, on a fabric
// of 16 MiB of shared memory with long links: every one completes and
// arrives intact. (A review found that every send another process built
// packets for held 64 KiB of that memory until it completed; this
// aborted, out of memory, in 2 runs of 6.) Then 300 sends of 20 KB (five
// packets each, read ahead).
TEST(AllToAll, ManyOutstandingSendsOnASmallFabricComplete)
{
	for (size_t size : {1000, 20000}) {
		SCOPED_TRACE("size " + std::to_string(size));
		FabricRun run = RunFabric(2, size == 1000 ? 1000 : 300, size,
					  {"MP_BURST=1", "FI_SIM_SHARED_MEMORY_MB=16",
					   "FI_SIM_LINK_LATENCY_NS=100000"});
		ExpectAllOk(run);
	}
}

// Messages, writes and reads of 300 KB (hundreds of packets each): the
// process that builds a packet is often not the one whose memory it comes
// from, and reads that memory 64 KiB ahead (nic_dma.c); losses make it go
// back and read again. Every byte is checked (the pattern differs from
// message to message), and a second run gives the same results.
TEST(AllToAll, LargeMessagesWritesAndReadsUnderLossArriveIntactAndTheSameTwice)
{
	std::vector<std::string> env = {"FI_SIM_PRESET=roce-25g",
					"FI_SIM_LOSS_RATE=0.01", "MP_READ=1"};
	FabricRun first = RunFabric(2, 3, 300000, env);
	ExpectAllOk(first);
	EXPECT_GT(Dropped(first), 0) << "the loss did not bite";
	FabricRun second = RunFabric(2, 3, 300000, env);
	ExpectAllOk(second);
	EXPECT_EQ(first.lines, second.lines);
}

std::string ReadAll(const std::string &path)
{
	std::string bytes;
	FILE *f = fopen(path.c_str(), "rb");
	if (!f)
		return bytes;
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		bytes.append(buf, n);
	fclose(f);
	return bytes;
}

// A pcap without its fabsim event frames (a process away from the fabric, back, dead): those
// record when a process was blocked outside the fabric in real time, which may differ between
// runs; the packets may not.
std::string WithoutEvents(const std::string &pcap)
{
	if (pcap.size() < 24)
		return pcap;
	std::string out = pcap.substr(0, 24);
	for (size_t at = 24; at + 16 <= pcap.size();) {
		uint32_t caplen;
		memcpy(&caplen, pcap.data() + at + 8, 4);
		size_t end = at + 16 + caplen;
		if (end > pcap.size())
			break;
		bool event = caplen >= 18 &&
			     pcap.compare(at + 16 + 12, 6, std::string("\x88\xb5" "FSEV", 6)) == 0;
		if (!event)
			out.append(pcap, at, end - at);
		at = end;
	}
	return out;
}

// Records in a pcap file.
size_t PcapRecords(const std::string &pcap)
{
	size_t n = 0;
	for (size_t at = 24; at + 16 <= pcap.size(); n++) {
		uint32_t caplen;
		memcpy(&caplen, pcap.data() + at + 8, 4);
		at += 16 + caplen;
	}
	return n;
}

// The "frame=N" numbers of a FI_SIM_PCAP_LOG log, in the order written.
std::vector<long> LogFrames(const std::string &log)
{
	std::vector<long> frames;
	for (size_t at = log.find(" frame="); at != std::string::npos;
	     at = log.find(" frame=", at + 1))
		frames.push_back(atol(log.c_str() + at + 7));
	return frames;
}

// The four processes record the wire into one trace: the same packets twice.
// The log every process appends to has a line for each, in order.
TEST(AllToAll, FourProcessesUnderLossGiveTheSameResultsAndTraceTwice)
{
	std::vector<std::string> env = {"FI_SIM_PRESET=roce-25g",
					"FI_SIM_LOSS_RATE=0.01",
					"FI_SIM_PCAP=@DIR@/wire.pcap",
					"FI_SIM_PCAP_LOG=@DIR@/wire.log"};
	FabricRun first = RunFabric(4, 10, 3000, env);
	ExpectAllOk(first);
	std::vector<long> logged = LogFrames(ReadAll(first.dir + "/wire.log"));
	ASSERT_FALSE(logged.empty());
	EXPECT_TRUE(std::is_sorted(logged.begin(), logged.end()) &&
		    std::adjacent_find(logged.begin(), logged.end()) ==
			    logged.end())
		<< "log lines lost, repeated or out of order";
	// A marked frame (a drop) is two records and one line.
	EXPECT_EQ((size_t)logged.back(),
		  PcapRecords(ReadAll(first.dir + "/wire.pcap")));
	EXPECT_GT(Dropped(first), 0) << "the loss did not bite";
	FabricRun second = RunFabric(4, 10, 3000, env);
	ExpectAllOk(second);
	EXPECT_EQ(first.lines, second.lines);
	std::string a = WithoutEvents(ReadAll(first.dir + "/wire.pcap"));
	std::string b = WithoutEvents(ReadAll(second.dir + "/wire.pcap"));
	// Every packet of 4 x 3 x 12 operations, and their acknowledgements.
	EXPECT_GT(a.size(), 4u * 3 * 11 * 3000);
	EXPECT_TRUE(a == b) << "the traces differ (" << a.size() << " and "
			    << b.size() << " bytes)";
}

}  // namespace

namespace {

TEST(AllToAll, SixteenProcessesUnderLossGiveTheSameResultsTwice)
{
	std::vector<std::string> env = {"FI_SIM_PRESET=roce-100g",
					"FI_SIM_LOSS_RATE=0.01"};
	FabricRun first = RunFabric(16, 4, 2000, env);
	ExpectAllOk(first);
	EXPECT_GT(Dropped(first), 0) << "the loss did not bite";
	FabricRun second = RunFabric(16, 4, 2000, env);
	ExpectAllOk(second);
	EXPECT_EQ(first.lines, second.lines);
}

}  // namespace

namespace {

// A process killed mid-run: its peers' operations towards it fail as they
// would with a real dead peer (no acknowledgement ever comes: FI_ETIMEDOUT),
// and the others finish their exchange with each other.
void ExpectNodeThreeKilledAndTimedOut(const FabricRun &run)
{
	ASSERT_EQ(run.status.size(), 4u);
	EXPECT_TRUE(WIFSIGNALED(run.status[3]) && WTERMSIG(run.status[3]) == SIGKILL)
		<< run.all;
	for (int i = 0; i < 3; i++) {
		EXPECT_TRUE(WIFEXITED(run.status[i]) && WEXITSTATUS(run.status[i]) == 0)
			<< "node " << i << ":\n" << run.all;
		EXPECT_NE(run.lines[i].find("send to node 3 failed: Connection timed out"),
			  std::string::npos)
			<< run.lines[i];
	}
}

// A launcher's job larger than the configured star (here 3 processes, a
// star of 2 hosts from a config file): the star grows to the job, one host
// per process, rather than refusing the ranks past its size; a size fixed
// by FI_SIM_TOPOLOGY_HOSTS stays, and the rank past it is refused.
// One mp_peer of a 3-node job, as node `node`, on `fabric`, with the star
// of 2 hosts from `cfg`; `nodes`: its FI_SIM_NODES ("": unset); `hosts`:
// its FI_SIM_TOPOLOGY_HOSTS ("": unset).
multiproc::Child StarPeer(const std::string &dir, const std::string &fabric,
			  const std::string &cfg, const char *node,
			  const char *nodes, const char *hosts)
{
	return multiproc::Start([&] {
		setenv("FI_PROVIDER", "sim", 1);
		setenv("FI_SIM_FABRIC", fabric.c_str(), 1);
		setenv("FI_SIM_NODE", node, 1);
		if (*nodes)
			setenv("FI_SIM_NODES", nodes, 1);
		if (*hosts)
			setenv("FI_SIM_TOPOLOGY_HOSTS", hosts, 1);
		setenv("FABSIM_RUNTIME_DIR", dir.c_str(), 1);
		setenv("FI_SIM_CONFIG", cfg.c_str(), 1);
		std::string path = multiproc::PeerPath("mp_peer");
		execl(path.c_str(), path.c_str(), dir.c_str(), "3", "2", "64",
		      (char *)nullptr);
	});
}

TEST(AllToAll, AJobLargerThanTheStarGrowsIt)
{
	std::string cfg_dir = multiproc::TempDir("star");
	std::string cfg = cfg_dir + "/star2.json";
	FILE *f = fopen(cfg.c_str(), "w");
	ASSERT_NE(f, nullptr);
	fputs("{\"topology\": {\"kind\": \"star\", \"hosts\": 2}}\n", f);
	fclose(f);
	FabricRun grown = RunFabric(3, 2, 64, {"FI_SIM_CONFIG=" + cfg});
	ExpectAllOk(grown);

	// The rank past a fixed size fails at once (its peers would wait for
	// its address: it runs alone).
	std::string dir = multiproc::TempDir("fixed");
	std::vector<multiproc::Child> alone;
	alone.push_back(StarPeer(dir, "fx" + std::to_string(getpid()), cfg,
				 "2", "3", "2"));
	multiproc::Finish(alone, 30);
	EXPECT_FALSE(WIFEXITED(alone[0].status) && WEXITSTATUS(alone[0].status) == 0);
	EXPECT_NE(alone[0].text.find("node 2 (from FI_SIM_NODE) is outside the "
				     "topology's 2 hosts"),
		  std::string::npos) << alone[0].text;

	// A fabric its first process built without knowing the job (no
	// FI_SIM_NODES: 2 hosts): a later rank of the job is told why it does
	// not fit.
	std::string dir2 = multiproc::TempDir("mixed");
	std::string fabric = "mx" + std::to_string(getpid());
	std::vector<multiproc::Child> first;
	first.push_back(StarPeer(dir2, fabric, cfg, "0", "", ""));
	for (int i = 0; i < 100 && access((dir2 + "/node0").c_str(), F_OK); i++)
		usleep(20000); // its address published: its world is built
	std::vector<multiproc::Child> late;
	late.push_back(StarPeer(dir2, fabric, cfg, "2", "3", ""));
	multiproc::Finish(late, 30);
	kill(first[0].pid, SIGKILL);
	multiproc::Finish(first, 30);
	EXPECT_FALSE(WIFEXITED(late[0].status) && WEXITSTATUS(late[0].status) == 0);
	EXPECT_NE(late[0].text.find("node 2 (from FI_SIM_NODE) is outside the 2 "
				    "hosts of fabric " + fabric + ", as the "
				    "process that created it built it"),
		  std::string::npos) << late[0].text;
}

TEST(AllToAll, AKilledProcessGivesItsPeersTimeoutsAndTheOthersFinish)
{
	ExpectNodeThreeKilledAndTimedOut(RunFabric(4, 5, 1000, {"MP_DEAD=3"}));
}

// Killed while it computes: its thread is seen gone, and with it the
// process, before the clock moves on; its NIC must not acknowledge what
// arrives after its death.
TEST(AllToAll, AProcessKilledWhileItComputesTakesItsNicOffTheNetwork)
{
	ExpectNodeThreeKilledAndTimedOut(RunFabric(4, 5, 1000, {"MP_DEAD=3:30"}));
}

}  // namespace

namespace {

// A process blocked outside the fabric is taken out of time so the others
// go on, and rejoins: the log (standard error) and the trace say so.
TEST(AllToAll, AProcessAwayFromTheFabricIsToldInTheLogAndTheTrace)
{
	FabricRun run = RunFabric(2, 3, 1000,
				  {"MP_AWAY=1:700", "FI_SIM_PCAP=@DIR@/wire.pcap"});
	ExpectAllOk(run);
	EXPECT_NE(run.all.find("node 1 (process"), std::string::npos) << run.all;
	EXPECT_NE(run.all.find("is blocked outside the fabric: out of virtual time"),
		  std::string::npos)
		<< run.all;
	EXPECT_NE(run.all.find("called in again: back in virtual time"),
		  std::string::npos)
		<< run.all;
	std::string trace = ReadAll(run.dir + "/wire.pcap");
	// Event frames: EtherType 0x88B5, magic "FSEV", kind 1 (away) and 2 (back).
	const std::string away("\x88\xb5" "FSEV\x01\x01", 8);
	const std::string back("\x88\xb5" "FSEV\x01\x02", 8);
	EXPECT_NE(trace.find(away), std::string::npos) << "no 'away' event in the trace";
	EXPECT_NE(trace.find(back), std::string::npos) << "no 'back' event in the trace";
	EXPECT_NE(trace.find("out of virtual time"), std::string::npos);
}

}  // namespace
