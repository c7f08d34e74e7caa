// The sim provider through the libfabric API under network impairments:
// thousands of mixed operations (untagged and tagged messages, RMA writes
// and reads, atomics) between several nodes, with loss, reordering and
// duplication. Every payload must arrive intact exactly once, counters and
// completions must agree, atomics must give the arithmetic result — and a
// run must be exactly reproducible from its seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "tests/sim/scenario.h"

namespace {

enum Kind { MSG, TAGGED, WRITE, READ, ATOMIC, KINDS };

struct Op {
	Kind kind;
	int src, dst;
	size_t len;
	size_t offset;       // in the target's window (RMA)
	std::vector<uint8_t> out, in;
	uint64_t fetched = ~0ull;
	fi_context2 tx_ctx, rx_ctx;
};

const size_t kSizes[] = {0, 1, 7, 64, 100, 1000, 4096, 5000, 20000, 70000};
const size_t kWindow = 4 << 20; // per node, for RMA
const uint64_t kStrictMr = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
			   FI_MR_PROV_KEY;

uint8_t byte_of(size_t op, size_t i)
{
	return (uint8_t)(op * 131 + i * 7 + (i >> 9));
}

struct Workload {
	std::vector<Op> ops;
	std::vector<std::vector<uint8_t>> windows; // RMA target per node
	std::vector<uint64_t> counters;            // atomic target per node
	std::vector<fid_mr *> window_mrs, counter_mrs;
	std::vector<fid_mr *> op_mrs;
};

// Builds and posts a deterministic random workload; returns how many
// completions to expect.
size_t post_workload(Scenario &s, Workload &w, int count, unsigned seed)
{
	std::mt19937 rng(seed);
	int n = s.size();
	w.windows.assign(n, std::vector<uint8_t>(kWindow));
	w.counters.assign(n, 0);
	for (int i = 0; i < n; i++) {
		for (size_t b = 0; b < kWindow; b++)
			w.windows[i][b] = (uint8_t)(b * 13 + i);
		w.window_mrs.push_back(s.reg(i, w.windows[i].data(), kWindow,
					     FI_READ | FI_WRITE | FI_REMOTE_READ |
						     FI_REMOTE_WRITE));
		w.counter_mrs.push_back(s.reg(i, &w.counters[i], 8,
					      FI_REMOTE_READ | FI_REMOTE_WRITE));
	}
	w.ops.resize(count);
	std::vector<size_t> next_offset(n, 0);
	size_t expect = 0;
	for (int k = 0; k < count; k++) {
		Op &op = w.ops[k];
		op.kind = (Kind)(rng() % KINDS);
		op.src = rng() % n;
		op.dst = (op.src + 1 + rng() % (n - 1)) % n;
		op.len = op.kind == ATOMIC ? 8 : kSizes[rng() % 10];
		// One spare byte: registered buffers are never empty.
		op.out.resize(op.len + 1);
		for (size_t i = 0; i < op.len; i++)
			op.out[i] = byte_of(k, i);
		op.in.assign(op.len + 1, 0);
		if (op.kind == WRITE || op.kind == READ) {
			op.offset = next_offset[op.dst];
			next_offset[op.dst] += op.len + 64;
		}
	}
	// Receives first (in each pair's send order), then the operations.
	for (int k = 0; k < count; k++) {
		Op &op = w.ops[k];
		if (op.kind != MSG && op.kind != TAGGED)
			continue;
		fid_mr *mr = s.reg(op.dst, op.in.data(), op.in.size(), FI_RECV);
		w.op_mrs.push_back(mr);
		fid_ep *ep = s.ep(op.dst, op.src);
		fi_addr_t from = s.addr(op.dst, op.src);
		int ret = op.kind == MSG ?
			fi_recv(ep, op.in.data(), op.len, s.desc(mr), from,
				&op.rx_ctx) :
			fi_trecv(ep, op.in.data(), op.len, s.desc(mr), from,
				 (uint64_t)k, 0, &op.rx_ctx);
		EXPECT_EQ(ret, 0);
		expect++;
	}
	for (int k = 0; k < count; k++) {
		Op &op = w.ops[k];
		fid_ep *ep = s.ep(op.src, op.dst);
		fi_addr_t to = s.addr(op.src, op.dst);
		uint64_t base = (uint64_t)(uintptr_t)w.windows[op.dst].data();
		fid_mr *mr = s.reg(op.src, op.kind == READ ? op.in.data()
							     : op.out.data(),
				   op.len + 1, FI_SEND | FI_READ | FI_WRITE);
		EXPECT_NE(mr, nullptr);
		w.op_mrs.push_back(mr);
		void *d = s.desc(mr);
		int ret = -1;
		switch (op.kind) {
		case MSG:
			ret = fi_send(ep, op.out.data(), op.len, d, to,
				      &op.tx_ctx);
			break;
		case TAGGED:
			ret = fi_tsend(ep, op.out.data(), op.len, d, to,
				       (uint64_t)k, &op.tx_ctx);
			break;
		case WRITE:
			ret = fi_write(ep, op.out.data(), op.len, d, to,
				       base + op.offset,
				       fi_mr_key(w.window_mrs[op.dst]), &op.tx_ctx);
			break;
		case READ:
			ret = fi_read(ep, op.in.data(), op.len, d, to,
				      base + op.offset,
				      fi_mr_key(w.window_mrs[op.dst]), &op.tx_ctx);
			break;
		case ATOMIC: {
			static const uint64_t one = 1;
			fid_mr *rmr = s.reg(op.src, &op.fetched, 8, FI_READ);
			w.op_mrs.push_back(rmr);
			fid_mr *omr = s.reg(op.src, (void *)&one, 8, FI_WRITE);
			w.op_mrs.push_back(omr);
			ret = fi_fetch_atomic(
				ep, &one, 1, s.desc(omr), &op.fetched,
				s.desc(rmr), to,
				(uint64_t)(uintptr_t)&w.counters[op.dst],
				fi_mr_key(w.counter_mrs[op.dst]), FI_UINT64,
				FI_SUM, &op.tx_ctx);
			break;
		}
		default:
			break;
		}
		EXPECT_EQ(ret, 0) << "op " << k;
		expect++;
	}
	return expect;
}

void verify(Scenario &s, Workload &w, const std::vector<Completion> &done)
{
	size_t sends = 0, recvs = 0;
	std::vector<int> tx_per_node(s.size()), rx_per_node(s.size());
	for (auto &c : done) {
		EXPECT_FALSE(c.error) << "error " << fi_strerror(c.err);
		bool rx = c.flags & FI_RECV;
		(rx ? recvs : sends)++;
		(rx ? rx_per_node : tx_per_node)[c.node]++;
	}
	std::vector<std::vector<uint64_t>> fetched(s.size());
	for (size_t k = 0; k < w.ops.size(); k++) {
		Op &op = w.ops[k];
		switch (op.kind) {
		case MSG:
		case TAGGED:
			EXPECT_EQ(op.in, op.out) << "message " << k;
			break;
		case WRITE:
			EXPECT_TRUE(std::equal(op.out.begin(),
					       op.out.begin() + op.len,
					       w.windows[op.dst].begin() + op.offset))
				<< "write " << k;
			break;
		case READ: {
			std::vector<uint8_t> want(op.len + 1, 0);
			for (size_t i = 0; i < op.len; i++)
				want[i] = (uint8_t)((op.offset + i) * 13 + op.dst);
			// Reads race only with writes to other offsets.
			EXPECT_EQ(op.in, want) << "read " << k;
			break;
		}
		case ATOMIC:
			fetched[op.dst].push_back(op.fetched);
			break;
		default:
			break;
		}
	}
	for (int i = 0; i < s.size(); i++) {
		// Each fetch-add applied exactly once: the old values are a
		// permutation of 0..n-1 and the counter ends at n.
		std::sort(fetched[i].begin(), fetched[i].end());
		for (size_t j = 0; j < fetched[i].size(); j++)
			EXPECT_EQ(fetched[i][j], j) << "node " << i;
		EXPECT_EQ(w.counters[i], fetched[i].size()) << "node " << i;
		EXPECT_EQ(fi_cntr_read(s.node(i).tx_cntr),
			  (uint64_t)tx_per_node[i]) << "node " << i;
		EXPECT_EQ(fi_cntr_read(s.node(i).rx_cntr),
			  (uint64_t)rx_per_node[i]) << "node " << i;
		EXPECT_EQ(fi_cntr_readerr(s.node(i).tx_cntr), 0u);
	}
	EXPECT_EQ(sends, w.ops.size());
}

struct Impairment {
	const char *name;
	const char *loss;
	const char *reorder;
	const char *duplicate;
};

const char *type_name(fi_ep_type type)
{
	return type == FI_EP_MSG ? "msg" : "rdm";
}

class Reliability
	: public ::testing::TestWithParam<std::tuple<Impairment, fi_ep_type>> {
};

TEST_P(Reliability, MixedTrafficArrivesIntactExactlyOnce)
{
	const Impairment &imp = std::get<0>(GetParam());
	Scenario s(4, {{"FI_SIM_PRESET", "roce-100g"},
		       {"FI_SIM_SEED", "7"},
		       {"FI_SIM_LOSS_RATE", imp.loss},
		       {"FI_SIM_LOSS_REORDER_RATE", imp.reorder},
		       {"FI_SIM_LOSS_REORDER_DELAY_NS", "2000"},
		       {"FI_SIM_LOSS_DUPLICATE_RATE", imp.duplicate},
		       {"FI_SIM_RETRY_COUNT", "1000"},
		       {"FI_SIM_ACK_TIMEOUT_NS", "50000"}},
		   kStrictMr, std::get<1>(GetParam()));
	ASSERT_EQ(s.failure, "");
	Workload w;
	size_t expect = post_workload(s, w, 2000, 1234);
	std::vector<Completion> done;
	ASSERT_TRUE(s.collect(expect, &done)) << done.size() << " of " << expect;
	verify(s, w, done);
	fabsim_stats st = {};
	ASSERT_EQ(s.ext()->stats(&s.node(0).domain->fid, &st), 0);
	if (strcmp(imp.loss, "0"))
		EXPECT_GT(st.retransmits, 0u);
	else
		EXPECT_EQ(st.packets_dropped, 0u);
	RecordProperty("retransmits", std::to_string(st.retransmits));
	RecordProperty("virtual_us", std::to_string(s.now() / 1000));
}

INSTANTIATE_TEST_SUITE_P(
	Loss, Reliability,
	::testing::Combine(
		::testing::Values(Impairment{"none", "0", "0", "0"},
				  Impairment{"loss1pct", "0.01", "0.01", "0.01"},
				  Impairment{"loss10pct", "0.1", "0.02", "0.02"},
				  Impairment{"loss30pct", "0.3", "0.02", "0.02"}),
		::testing::Values(FI_EP_RDM, FI_EP_MSG)),
	[](const ::testing::TestParamInfo<std::tuple<Impairment, fi_ep_type>>
		   &p) {
		return std::string(std::get<0>(p.param).name) + "_" +
		       type_name(std::get<1>(p.param));
	});

// Many atomics in flight to one peer under loss: each is applied once and
// completes successfully. A retransmitted atomic is answered with the
// result the responder remembers, and a requester keeps no more unanswered
// than it remembers: with more than 8 in flight, retransmitted ones went
// unanswered and timed out although they had been applied.
TEST(Reliability, ManyAtomicsInFlightUnderLossApplyOnceAndSucceed)
{
	Scenario s(2, {{"FI_SIM_PRESET", "roce-100g"},
		       {"FI_SIM_SEED", "1"},
		       {"FI_SIM_LOSS_RATE", "0.01"}},
		   kStrictMr);
	ASSERT_EQ(s.failure, "");
	const size_t kOps = 1000;
	static const uint64_t one = 1;
	uint64_t target = 0;
	std::vector<uint64_t> fetched(kOps, UINT64_MAX);
	fid_mr *tmr = s.reg(1, &target, 8, FI_REMOTE_READ | FI_REMOTE_WRITE);
	fid_mr *omr = s.reg(0, (void *)&one, 8, FI_WRITE);
	fid_mr *rmr = s.reg(0, fetched.data(), kOps * 8, FI_READ);
	ASSERT_TRUE(tmr && omr && rmr);
	std::vector<Completion> done;
	for (size_t k = 0; k < kOps; k++) {
		ssize_t ret;
		while ((ret = fi_fetch_atomic(s.ep(0, 1), &one, 1, s.desc(omr),
					      &fetched[k], s.desc(rmr),
					      s.addr(0, 1),
					      (uint64_t)(uintptr_t)&target,
					      fi_mr_key(tmr), FI_UINT64, FI_SUM,
					      &fetched[k])) == -FI_EAGAIN)
			ASSERT_TRUE(s.collect(done.size() + 1, &done));
		ASSERT_EQ(ret, 0) << k;
	}
	ASSERT_TRUE(s.collect(kOps, &done)) << done.size() << " of " << kOps;
	for (const Completion &c : done)
		ASSERT_FALSE(c.error) << fi_strerror(c.err);
	EXPECT_EQ(target, kOps);
	std::sort(fetched.begin(), fetched.end());
	for (size_t k = 0; k < kOps; k++)
		ASSERT_EQ(fetched[k], k) << "applied twice, or answered wrong";
	fabsim_stats st = {};
	ASSERT_EQ(s.ext()->stats(&s.node(0).domain->fid, &st), 0);
	EXPECT_GT(st.retransmits, 0u);
}

// A link down for longer than the retry budget: the operations that need
// it fail with FI_ETIMEDOUT; the rest of the fabric is not disturbed.
TEST(Reliability, LinkDownPastTheRetryBudget)
{
	Scenario s(4, {{"FI_SIM_PRESET", "roce-100g"},
		       {"FI_SIM_RETRY_COUNT", "3"},
		       {"FI_SIM_ACK_TIMEOUT_NS", "10000"}});
	ASSERT_EQ(s.failure, "");
	// Star topology: link i joins host i to the switch.
	uint32_t host1 = s.ext()->host(&s.node(1).domain->fid);
	ASSERT_EQ(s.ext()->set_link(&s.node(0).domain->fid, host1, 0), 0);
	std::vector<uint8_t> a(3000, 1), b(3000, 2), ra(3000), rb(3000);
	fi_context2 c[6];
	auto &n0 = s.node(0), &n2 = s.node(2), &n3 = s.node(3);
	fid_mr *ma = s.reg(0, a.data(), a.size(), FI_SEND);
	fid_mr *mb = s.reg(2, b.data(), b.size(), FI_SEND);
	fid_mr *mrb = s.reg(3, rb.data(), rb.size(), FI_RECV);
	ASSERT_EQ(fi_recv(n3.ep, rb.data(), rb.size(), fi_mr_desc(mrb),
			  FI_ADDR_UNSPEC, &c[0]), 0);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(fi_send(n0.ep, a.data(), a.size(), fi_mr_desc(ma),
				  n0.peers[1], &c[1 + i]), 0);
	ASSERT_EQ(fi_send(n2.ep, b.data(), b.size(), fi_mr_desc(mb),
			  n2.peers[3], &c[4]), 0);
	std::vector<Completion> done;
	ASSERT_TRUE(s.collect(5, &done));
	int failed = 0, ok = 0;
	for (auto &d : done) {
		if (d.error) {
			EXPECT_EQ(d.node, 0);
			EXPECT_EQ(d.err, FI_ETIMEDOUT);
			failed++;
		} else {
			ok++;
		}
	}
	EXPECT_EQ(failed, 3);
	EXPECT_EQ(ok, 2);
	EXPECT_EQ(rb, b);
	EXPECT_EQ(fi_cntr_readerr(n0.tx_cntr), 3u);
}

// One node sends 100 KB to each of fifteen others at once, with no loss:
// its link carries the fifteen flows in turn, so a message's packets go
// out over far longer than the ACK timeout. The timeout counts from the
// packet that asks for the acknowledgement, not from the first one queued:
// every send completes, none retransmitted (a collective's fan-out in
// Open MPI failed with FI_ETIMEDOUT).
TEST(Reliability, AFanOutLongerThanTheAckTimeoutCompletes)
{
	const int peers = 15;
	const size_t len = 100000;
	Scenario s(peers + 1, {{"FI_SIM_PRESET", "roce-100g"},
			       {"FI_SIM_TOPOLOGY_KIND", "star"},
			       {"FI_SIM_TOPOLOGY_HOSTS", "16"}});
	ASSERT_EQ(s.failure, "");
	std::vector<uint8_t> out(len, 7);
	std::vector<std::vector<uint8_t>> in(peers + 1,
					     std::vector<uint8_t>(len));
	fid_mr *mo = s.reg(0, out.data(), len, FI_SEND);
	for (int p = 1; p <= peers; p++) {
		fid_mr *mi = s.reg(p, in[p].data(), len, FI_RECV);
		ASSERT_EQ(fi_recv(s.node(p).ep, in[p].data(), len,
				  fi_mr_desc(mi), FI_ADDR_UNSPEC, nullptr),
			  0);
	}
	for (int p = 1; p <= peers; p++)
		ASSERT_EQ(fi_send(s.node(0).ep, out.data(), len,
				  fi_mr_desc(mo), s.node(0).peers[p], nullptr),
			  0);
	std::vector<Completion> done;
	EXPECT_TRUE(s.collect(2 * peers, &done)) << done.size() << " completions";
	for (auto &d : done)
		EXPECT_FALSE(d.error) << "node " << d.node << ": "
				      << fi_strerror(d.err);
	for (int p = 1; p <= peers; p++)
		EXPECT_EQ(in[p], out) << "node " << p;
	fabsim_stats st = {};
	st.size = sizeof(st);
	ASSERT_EQ(s.ext()->stats(&s.node(0).domain->fid, &st), 0);
	EXPECT_EQ(st.timeouts, 0u);
	EXPECT_EQ(st.retransmits, 0u);
}

// Same program, same configuration, same seed: the same completions, in
// the same order, at the same virtual times, twenty times over.
class Determinism : public ::testing::TestWithParam<fi_ep_type> {};

TEST_P(Determinism, SameSeedSameCompletionStream)
{
	std::vector<std::string> first;
	for (int run = 0; run < 20; run++) {
		Scenario s(4, {{"FI_SIM_PRESET", "roce-25g"},
			       {"FI_SIM_SEED", "99"},
			       {"FI_SIM_LOSS_RATE", "0.05"},
			       {"FI_SIM_LOSS_REORDER_RATE", "0.05"},
			       {"FI_SIM_LOSS_REORDER_DELAY_NS", "1500"},
			       {"FI_SIM_RETRY_COUNT", "1000"}},
			   kStrictMr, GetParam());
		ASSERT_EQ(s.failure, "");
		Workload w;
		size_t expect = post_workload(s, w, 300, 42);
		std::vector<Completion> done;
		ASSERT_TRUE(s.collect(expect, &done));
		std::vector<std::string> stream;
		for (auto &c : done) {
			size_t op = SIZE_MAX;
			for (size_t k = 0; k < w.ops.size(); k++)
				if (c.context == &w.ops[k].tx_ctx ||
				    c.context == &w.ops[k].rx_ctx)
					op = k;
			stream.push_back(std::to_string(c.node) + "/" +
					 std::to_string(op) + "/" +
					 std::to_string(c.flags) + "/" +
					 std::to_string(c.len) + "@" +
					 std::to_string(c.time_ns));
		}
		if (run == 0)
			first = stream;
		else
			ASSERT_EQ(stream, first) << "run " << run;
	}
	EXPECT_GT(first.size(), 300u); // every send and every receive
}

INSTANTIATE_TEST_SUITE_P(
	EndpointTypes, Determinism, ::testing::Values(FI_EP_RDM, FI_EP_MSG),
	[](const ::testing::TestParamInfo<fi_ep_type> &p) {
		return std::string(type_name(p.param));
	});

}  // namespace
