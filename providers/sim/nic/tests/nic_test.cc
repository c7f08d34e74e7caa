// The NIC model on its own: two (or more) NICs on a simulated network,
// work requests in, completions out, checked against the data and against
// the network model's closed-form timing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

extern "C" {
#include <rdma/fi_atomic.h>
#include <netmodel/nm_network.h>
#include <netmodel/nm_preset.h>
#include "providers/sim/nic/nic.h"
}

namespace {

struct Collected {
	std::vector<nic_completion> sends, recvs, remotes;
};

void on_send(void *ctx, const nic_completion *c)
{
	static_cast<Collected *>(ctx)->sends.push_back(*c);
}
void on_recv(void *ctx, const nic_completion *c)
{
	static_cast<Collected *>(ctx)->recvs.push_back(*c);
}
void on_remote(void *ctx, const nic_completion *c)
{
	static_cast<Collected *>(ctx)->remotes.push_back(*c);
}
const nic_qp_ops kOps = {on_send, on_recv, on_remote, nullptr};

struct Node {
	nic *n = nullptr;
	nic_qp *qp = nullptr;
	Collected got;
	nic_peer addr() const { return {nic_host(n), nic_qp_num(qp)}; }
};

// Every test runs three times: the model in process memory, the model in an
// arena (the memory several processes share, MULTIPROCESS.md) — where it
// must behave the same and give all its memory back — and in an arena with
// each host keeping its own free records and counters (NIC_PARTS_PER_HOST),
// which must change nothing either.
enum class Memory { kProcess, kArena, kArenaPerHost };

class NicTest : public ::testing::TestWithParam<Memory> {
protected:
	void build(const char *preset, void (*tweak)(nm_config *) = nullptr,
		   uint32_t hosts = 2,
		   void (*ttweak)(nic_transport_params *) = nullptr)
	{
		nm_error err;
		ASSERT_EQ(nm_preset_load(&cfg, preset, &err), 0) << err.msg;
		if (hosts > 2) {
			cfg.topology.kind = NM_TOPO_STAR;
			cfg.topology.hosts = hosts;
		}
		if (tweak)
			tweak(&cfg);
		nic_transport_params tp;
		nic_transport_defaults(&tp);
		if (ttweak)
			ttweak(&tp);
		if (GetParam() != Memory::kProcess) {
			arena = fs_arena_private(size_t(1) << 30);
			ASSERT_NE(arena, nullptr);
		}
		ASSERT_EQ(nic_world_create_parts(
				  arena, &cfg, &tp,
				  GetParam() == Memory::kArenaPerHost ?
					  NIC_PARTS_PER_HOST :
					  NIC_PARTS_ONE,
				  &world, &err),
			  0)
			<< err.msg;
		nodes.resize(hosts);
		for (auto &node : nodes) {
			ASSERT_EQ(nic_open(world, NIC_HOST_ANY, &node.n, &err), 0);
			ASSERT_EQ(nic_qp_create(node.n, NIC_QP_RD, &kOps, &node.got,
						&node.qp), 0);
		}
	}
	void TearDown() override
	{
		for (auto &node : nodes) {
			if (node.qp)
				nic_qp_destroy(node.qp);
			nic_close(node.n);
		}
		if (arena && world) {
			EXPECT_TRUE(fs_arena_contains(arena, world));
		}
		nic_world_destroy(world);
		if (arena) {
			EXPECT_EQ(fs_arena_used(arena), 0u)
				<< "the model left memory in its arena";
			fs_arena_detach(arena);
			arena = nullptr;
		}
	}
	nic_mr *reg(Node &node, void *buf, size_t len,
		    uint32_t access = NIC_ACCESS_LOCAL | NIC_ACCESS_REMOTE_READ |
				      NIC_ACCESS_REMOTE_WRITE |
				      NIC_ACCESS_REMOTE_ATOMIC)
	{
		nic_mr *mr = nullptr;
		nm_time_ns cost;
		nm_error err;
		EXPECT_EQ(nic_mr_reg(node.n, buf, len, access, NIC_KEY_ANY, true,
				     &mr, &cost, &err), 0) << err.msg;
		return mr;
	}
	// A connection between a QP of node 0 and one of node 1, of these
	// types, reporting to the nodes' collections.
	void connect_pair(nic_qp_type ta, nic_qp_type tb, nic_qp **a, nic_qp **b)
	{
		ASSERT_EQ(nic_qp_create(nodes[0].n, ta, &kOps, &nodes[0].got, a), 0);
		ASSERT_EQ(nic_qp_create(nodes[1].n, tb, &kOps, &nodes[1].got, b), 0);
		ASSERT_EQ(nic_qp_connect(*a, {nic_host(nodes[1].n), nic_qp_num(*b)}), 0);
		ASSERT_EQ(nic_qp_connect(*b, {nic_host(nodes[0].n), nic_qp_num(*a)}), 0);
	}
	void run() { nic_world_run_until(world, nullptr, nullptr, NM_TIME_NEVER); }
	void run_until_idle()
	{
		while (nic_world_run_instant(world)) {
		}
	}
	nic_wr send_wr(Node &to, const void *buf, size_t len, uint64_t id = 1)
	{
		nic_wr wr = {};
		wr.wr_id = id;
		wr.opcode = NIC_WR_SEND;
		wr.peer = to.addr();
		wr.sge_count = 1;
		wr.sge[0].addr = const_cast<void *>(buf);
		wr.sge[0].len = len;
		return wr;
	}
	nic_recv recv_of(void *buf, size_t len, uint64_t cookie = 1)
	{
		nic_recv r = {};
		r.cookie = cookie;
		r.source = NIC_ANY_SOURCE;
		r.sge_count = 1;
		r.sge[0].addr = buf;
		r.sge[0].len = len;
		return r;
	}

	nm_config cfg;
	fs_arena *arena = nullptr;
	nic_world *world = nullptr;
	std::vector<Node> nodes;
};

// An atomic with one result buffer (none when result is null).
nic_atomic atomic(int datatype, int op, size_t count, const void *operand,
		  const void *compare, void *result)
{
	nic_atomic a = {};
	a.datatype = datatype;
	a.op = op;
	a.count = count;
	a.operand = operand;
	a.compare = compare;
	if (result) {
		a.result[0].addr = result;
		a.result[0].len = count * nic_atomic_size(datatype);
		a.result_count = 1;
	}
	return a;
}

std::vector<uint8_t> pattern(size_t n, uint8_t seed)
{
	std::vector<uint8_t> v(n);
	for (size_t i = 0; i < n; i++)
		v[i] = (uint8_t)(seed + i * 7 + (i >> 8));
	return v;
}

TEST_P(NicTest, SendLandsInPostedReceive)
{
	build("ideal");
	auto data = pattern(10000, 3);
	std::vector<uint8_t> buf(10000);
	nic_recv r = recv_of(buf.data(), buf.size(), 42);
	ASSERT_EQ(nic_post_recv(nodes[1].qp, &r), 0);
	nic_wr wr = send_wr(nodes[1], data.data(), data.size(), 7);
	ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0);
	run();
	ASSERT_EQ(nodes[1].got.recvs.size(), 1u);
	EXPECT_EQ(nodes[1].got.recvs[0].cookie, 42u);
	EXPECT_EQ(nodes[1].got.recvs[0].status, NIC_OK);
	EXPECT_EQ(nodes[1].got.recvs[0].len, data.size());
	EXPECT_EQ(nodes[1].got.recvs[0].source.host, nic_host(nodes[0].n));
	EXPECT_EQ(buf, data);
	ASSERT_EQ(nodes[0].got.sends.size(), 1u);
	EXPECT_EQ(nodes[0].got.sends[0].cookie, 7u);
	EXPECT_EQ(nodes[0].got.sends[0].status, NIC_OK);
	EXPECT_EQ(nic_qp_outstanding(nodes[0].qp), 0u);
}

TEST_P(NicTest, ReceiveCompletionTimeIsTheModelsClosedForm)
{
	build("roce-100g");
	nm_engine *engine;
	nm_network *net;
	nm_error err;
	ASSERT_EQ(nm_engine_create(&engine), 0);
	ASSERT_EQ(nm_network_create(engine, &cfg, &net, &err), 0);
	for (size_t size : {0ul, 1ul, 100ul, 4096ul, 4097ul, 65536ul, 1000000ul}) {
		auto data = pattern(size, 1);
		std::vector<uint8_t> buf(size + 1);
		nic_recv r = recv_of(buf.data(), buf.size());
		ASSERT_EQ(nic_post_recv(nodes[1].qp, &r), 0);
		nm_time_ns start = nic_world_now(world);
		nic_wr wr = send_wr(nodes[1], data.data(), size);
		ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0);
		run();
		ASSERT_EQ(nodes[1].got.recvs.size(), 1u);
		nm_time_ns expect =
			nm_network_message_latency_ns(net, 0, 1, 0, size);
		EXPECT_EQ(nodes[1].got.recvs[0].time - start, expect)
			<< size << " bytes";
		EXPECT_TRUE(std::equal(data.begin(), data.end(), buf.begin()));
		nodes[1].got.recvs.clear();
		nodes[0].got.sends.clear();
	}
	nm_network_destroy(net);
	nm_engine_destroy(engine);
}

TEST_P(NicTest, UnexpectedTaggedMessagesMatchLaterReceives)
{
	build("ideal");
	auto a = pattern(5000, 1), b = pattern(300, 2);
	nic_wr wa = send_wr(nodes[1], a.data(), a.size(), 1);
	wa.flags = NIC_WR_TAGGED;
	wa.tag = 0xAAAA;
	nic_wr wb = send_wr(nodes[1], b.data(), b.size(), 2);
	wb.flags = NIC_WR_TAGGED;
	wb.tag = 0xBBBB;
	ASSERT_EQ(nic_post_send(nodes[0].qp, &wa), 0);
	ASSERT_EQ(nic_post_send(nodes[0].qp, &wb), 0);
	run();
	EXPECT_EQ(nodes[0].got.sends.size(), 2u);
	std::vector<uint8_t> rb(300), ra(5000);
	nic_recv r = recv_of(rb.data(), rb.size(), 20);
	r.flags = NIC_RECV_TAGGED;
	r.tag = 0xBBBB;
	ASSERT_EQ(nic_post_recv(nodes[1].qp, &r), 0);
	r = recv_of(ra.data(), ra.size(), 10);
	r.flags = NIC_RECV_TAGGED;
	r.tag = 0xAA00;
	r.ignore = 0xFF;
	ASSERT_EQ(nic_post_recv(nodes[1].qp, &r), 0);
	run();
	ASSERT_EQ(nodes[1].got.recvs.size(), 2u);
	EXPECT_EQ(nodes[1].got.recvs[0].cookie, 20u);
	EXPECT_EQ(nodes[1].got.recvs[0].tag, 0xBBBBu);
	EXPECT_EQ(nodes[1].got.recvs[1].cookie, 10u);
	EXPECT_EQ(nodes[1].got.recvs[1].tag, 0xAAAAu);
	EXPECT_EQ(ra, a);
	EXPECT_EQ(rb, b);
}

TEST_P(NicTest, WriteWithImmediateAndRead)
{
	build("roce-25g");
	std::vector<uint8_t> target(20000, 0), back(20000, 0);
	auto data = pattern(20000, 9);
	nic_mr *mr = reg(nodes[1], target.data(), target.size());
	nic_wr wr = send_wr(nodes[1], data.data(), data.size(), 5);
	wr.opcode = NIC_WR_WRITE;
	wr.flags = NIC_WR_IMM;
	wr.imm = 0x12345678;
	wr.rma_count = 1;
	wr.rma[0] = {(uint64_t)(uintptr_t)target.data(), data.size(),
		     nic_mr_key(mr)};
	ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0);
	run();
	EXPECT_EQ(target, data);
	ASSERT_EQ(nodes[1].got.remotes.size(), 1u);
	EXPECT_EQ(nodes[1].got.remotes[0].imm, 0x12345678u);
	EXPECT_TRUE(nodes[1].got.remotes[0].flags & NIC_CQ_IMM);
	EXPECT_EQ(nodes[1].got.remotes[0].len, data.size());

	wr = send_wr(nodes[1], back.data(), back.size(), 6);
	wr.opcode = NIC_WR_READ;
	wr.rma_count = 1;
	wr.rma[0] = {(uint64_t)(uintptr_t)target.data(), back.size(),
		     nic_mr_key(mr)};
	ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0);
	run();
	EXPECT_EQ(back, data);
	ASSERT_EQ(nodes[0].got.sends.size(), 2u);
	EXPECT_EQ(nodes[0].got.sends[1].status, NIC_OK);
	EXPECT_EQ(nic_mr_dereg(mr), 0);
}

TEST_P(NicTest, AtomicsComputeAndFetch)
{
	build("ideal");
	uint64_t counter = 40;
	double vec[4] = {1, 2, 3, 4};
	nic_mr *m1 = reg(nodes[1], &counter, sizeof(counter));
	nic_mr *m2 = reg(nodes[1], vec, sizeof(vec));
	uint64_t add = 2, old = 0;
	nic_wr wr = {};
	wr.wr_id = 1;
	wr.opcode = NIC_WR_FETCH_ATOMIC;
	wr.peer = nodes[1].addr();
	wr.rma_count = 1;
	wr.rma[0] = {(uint64_t)(uintptr_t)&counter, 8, nic_mr_key(m1)};
	wr.atomic = atomic(FI_UINT64, FI_SUM, 1, &add, nullptr, &old);
	ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0);
	double dv[4] = {0.5, 0.5, 0.5, 0.5}, dold[4] = {};
	nic_wr w2 = wr;
	w2.wr_id = 2;
	w2.rma[0] = {(uint64_t)(uintptr_t)vec, sizeof(vec), nic_mr_key(m2)};
	w2.atomic = atomic(FI_DOUBLE, FI_SUM, 4, dv, nullptr, dold);
	ASSERT_EQ(nic_post_send(nodes[0].qp, &w2), 0);
	uint64_t cmp = 42, swp = 100, prev = 0;
	nic_wr w3 = wr;
	w3.wr_id = 3;
	w3.opcode = NIC_WR_COMPARE_ATOMIC;
	w3.atomic = atomic(FI_UINT64, FI_CSWAP, 1, &swp, &cmp, &prev);
	ASSERT_EQ(nic_post_send(nodes[0].qp, &w3), 0);
	run();
	ASSERT_EQ(nodes[0].got.sends.size(), 3u);
	for (auto &c : nodes[0].got.sends)
		EXPECT_EQ(c.status, NIC_OK);
	EXPECT_EQ(old, 40u);
	EXPECT_EQ(prev, 42u);
	EXPECT_EQ(counter, 100u);
	EXPECT_EQ(vec[0], 1.5);
	EXPECT_EQ(vec[3], 4.5);
	EXPECT_EQ(dold[2], 3.0);
	nic_mr_dereg(m1);
	nic_mr_dereg(m2);
}

// The NIC reads operand and compare values at post: the caller may reuse
// them at once (fi_inject_atomic relies on it). Target segments and result
// buffers may both be split.
TEST_P(NicTest, AtomicValuesAreTakenAtPostAndSegmentsSplit)
{
	build("ideal");
	uint32_t left[3] = {10, 20, 30}, right[2] = {40, 50};
	nic_mr *ml = reg(nodes[1], left, sizeof(left));
	nic_mr *mr = reg(nodes[1], right, sizeof(right));
	uint32_t add[5] = {1, 2, 3, 4, 5}, old_a[2] = {}, old_b[3] = {};
	nic_wr wr = {};
	wr.wr_id = 1;
	wr.opcode = NIC_WR_FETCH_ATOMIC;
	wr.peer = nodes[1].addr();
	wr.rma_count = 2;
	wr.rma[0] = {(uint64_t)(uintptr_t)left, sizeof(left), nic_mr_key(ml)};
	wr.rma[1] = {(uint64_t)(uintptr_t)right, sizeof(right), nic_mr_key(mr)};
	wr.atomic = atomic(FI_UINT32, FI_SUM, 5, add, nullptr, nullptr);
	wr.atomic.result[0] = {old_a, sizeof(old_a), nullptr};
	wr.atomic.result[1] = {old_b, sizeof(old_b), nullptr};
	wr.atomic.result_count = 2;
	ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0);
	for (auto &v : add)
		v = 1000; // too late to matter
	run();
	ASSERT_EQ(nodes[0].got.sends.size(), 1u);
	EXPECT_EQ(nodes[0].got.sends[0].status, NIC_OK);
	EXPECT_EQ(left[0], 11u);
	EXPECT_EQ(left[2], 33u);
	EXPECT_EQ(right[0], 44u);
	EXPECT_EQ(right[1], 55u);
	EXPECT_EQ(old_a[0], 10u);
	EXPECT_EQ(old_a[1], 20u);
	EXPECT_EQ(old_b[0], 30u);
	EXPECT_EQ(old_b[2], 50u);

	// A target segment that splits an element is refused at post.
	wr.rma[0].len = 10;
	EXPECT_EQ(nic_post_send(nodes[0].qp, &wr), -EINVAL);
	nic_mr_dereg(ml);
	nic_mr_dereg(mr);
}

TEST_P(NicTest, BadKeyFailsThatRequestOnly)
{
	build("ideal");
	std::vector<uint8_t> target(64), data = pattern(64, 4);
	nic_mr *mr = reg(nodes[1], target.data(), target.size(),
			 NIC_ACCESS_LOCAL | NIC_ACCESS_REMOTE_READ);
	nic_wr wr = send_wr(nodes[1], data.data(), data.size(), 1);
	wr.opcode = NIC_WR_WRITE;
	wr.rma_count = 1;
	wr.rma[0] = {(uint64_t)(uintptr_t)target.data(), 64, nic_mr_key(mr)};
	ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0); // no write access
	wr.wr_id = 2;
	wr.rma[0].key = nic_mr_key(mr) + 99;               // no such key
	ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0);
	wr.wr_id = 3;
	wr.opcode = NIC_WR_READ;
	wr.rma[0] = {(uint64_t)(uintptr_t)target.data() + 60, 8, nic_mr_key(mr)};
	ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0);     // out of bounds
	std::vector<uint8_t> rb(64);
	nic_recv r = recv_of(rb.data(), rb.size());
	ASSERT_EQ(nic_post_recv(nodes[1].qp, &r), 0);
	nic_wr ok = send_wr(nodes[1], data.data(), data.size(), 4);
	ASSERT_EQ(nic_post_send(nodes[0].qp, &ok), 0);
	run();
	ASSERT_EQ(nodes[0].got.sends.size(), 4u);
	EXPECT_EQ(nodes[0].got.sends[0].status, NIC_REM_ACCESS_ERR);
	EXPECT_EQ(nodes[0].got.sends[1].status, NIC_REM_ACCESS_ERR);
	EXPECT_EQ(nodes[0].got.sends[2].status, NIC_REM_ACCESS_ERR);
	EXPECT_EQ(nodes[0].got.sends[3].status, NIC_OK);
	EXPECT_EQ(rb, data);
	EXPECT_EQ(target, std::vector<uint8_t>(64, 0));
	nic_mr_dereg(mr);
}

TEST_P(NicTest, TruncationReportsOverflow)
{
	build("ideal");
	auto data = pattern(1000, 5);
	std::vector<uint8_t> buf(600);
	nic_recv r = recv_of(buf.data(), buf.size());
	ASSERT_EQ(nic_post_recv(nodes[1].qp, &r), 0);
	nic_wr wr = send_wr(nodes[1], data.data(), data.size());
	ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0);
	run();
	ASSERT_EQ(nodes[1].got.recvs.size(), 1u);
	EXPECT_EQ(nodes[1].got.recvs[0].status, NIC_TRUNCATED);
	EXPECT_EQ(nodes[1].got.recvs[0].len, 600u);
	EXPECT_EQ(nodes[1].got.recvs[0].olen, 400u);
	EXPECT_TRUE(std::equal(buf.begin(), buf.end(), data.begin()));
	EXPECT_EQ(nodes[0].got.sends[0].status, NIC_OK);
}

// Every message arrives intact, exactly once and in order, whatever the
// network does to the packets.
void lossy(nm_config *cfg)
{
	cfg->impair.loss_rate = 0.2;
	cfg->impair.duplicate_rate = 0.05;
	cfg->impair.reorder_rate = 0.05;
	cfg->impair.reorder_delay_ns = 3000;
	cfg->seed = 11;
}
void patient(nic_transport_params *tp)
{
	tp->retry_count = 60;
	tp->ack_timeout_ns = 20000;
}

TEST_P(NicTest, LossDuplicationAndReorderingAreRepaired)
{
	build("roce-100g", lossy, 2, patient);
	const int n = 300;
	std::vector<std::vector<uint8_t>> out(n), in(n);
	for (int i = 0; i < n; i++) {
		out[i] = pattern(1 + (i * 977) % 20000, (uint8_t)i);
		in[i].assign(out[i].size(), 0);
		nic_recv r = recv_of(in[i].data(), in[i].size(), (uint64_t)i);
		ASSERT_EQ(nic_post_recv(nodes[1].qp, &r), 0);
	}
	for (int i = 0; i < n; i++) {
		nic_wr wr = send_wr(nodes[1], out[i].data(), out[i].size(), i);
		ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0);
	}
	run();
	ASSERT_EQ(nodes[1].got.recvs.size(), (size_t)n);
	ASSERT_EQ(nodes[0].got.sends.size(), (size_t)n);
	for (int i = 0; i < n; i++) {
		EXPECT_EQ(nodes[1].got.recvs[i].cookie, (uint64_t)i);
		EXPECT_EQ(nodes[1].got.recvs[i].status, NIC_OK);
		EXPECT_EQ(in[i], out[i]) << "message " << i;
		EXPECT_EQ(nodes[0].got.sends[i].status, NIC_OK);
	}
	nic_stats st;
	nic_world_stats(world, &st);
	EXPECT_GT(st.retransmits, 0u);
	EXPECT_GT(st.packets_dropped, 0u);
	EXPECT_GT(st.duplicates, 0u);
}

// An unreliable connection (UC) over the same network: no ACK, no
// retransmission; every send completes; a message that loses a packet, or
// finds no receive, is dropped whole, and the receives go to the intact
// ones, in order.
TEST_P(NicTest, UnreliableConnectionsDropWhatTheNetworkBreaks)
{
	build("roce-100g", lossy);
	nic_qp *a, *b;
	connect_pair(NIC_QP_UC, NIC_QP_UC, &a, &b);
	Collected &got_a = nodes[0].got, &got_b = nodes[1].got;
	const int n = 200;
	std::vector<std::vector<uint8_t>> out(n);
	std::vector<std::vector<uint8_t>> in(n, std::vector<uint8_t>(20000));
	for (int i = 0; i < n; i++) {
		nic_recv r = recv_of(in[i].data(), in[i].size(), (uint64_t)i);
		ASSERT_EQ(nic_post_recv(b, &r), 0);
	}
	for (int i = 0; i < n; i++) {
		// The first byte names the message.
		out[i] = pattern(1 + (i * 977) % 20000, (uint8_t)i);
		out[i][0] = (uint8_t)i;
		nic_wr wr = send_wr(nodes[1], out[i].data(), out[i].size(), i);
		ASSERT_EQ(nic_post_send(a, &wr), 0);
	}
	uint8_t value = 1, old = 0;
	nic_wr rd = send_wr(nodes[1], &value, 1, 999);
	rd.opcode = NIC_WR_READ;
	rd.rma_count = 1;
	rd.rma[0] = {(uint64_t)(uintptr_t)&old, 1, 1};
	EXPECT_EQ(nic_post_send(a, &rd), -EINVAL) << "no reads on UC";
	run();

	ASSERT_EQ(got_a.sends.size(), (size_t)n);
	for (int i = 0; i < n; i++) {
		EXPECT_EQ(got_a.sends[i].cookie, (uint64_t)i);
		EXPECT_EQ(got_a.sends[i].status, NIC_OK);
	}
	nic_stats st;
	nic_world_stats(world, &st);
	EXPECT_EQ(st.retransmits, 0u);
	EXPECT_GT(st.uc_dropped, 0u);
	ASSERT_LT(got_b.recvs.size(), (size_t)n) << "nothing was lost";
	EXPECT_GT(got_b.recvs.size(), (size_t)n / 4);
	int last = -1;
	for (size_t k = 0; k < got_b.recvs.size(); k++) {
		const nic_completion &c = got_b.recvs[k];
		EXPECT_EQ(c.cookie, k) << "receives are taken in order";
		EXPECT_EQ(c.status, NIC_OK);
		int i = in[k][0];
		for (int j = last + 1; j < n; j++)
			if ((uint8_t)j == i && out[j].size() == c.len) {
				i = j;
				break;
			}
		ASSERT_GT(i, last) << "messages land in the order sent";
		ASSERT_EQ(c.len, out[i].size());
		EXPECT_TRUE(std::equal(out[i].begin(), out[i].end(), in[k].begin()))
			<< "message " << i << " in receive " << k;
		last = i;
	}
	nic_qp_destroy(a);
	nic_qp_destroy(b);
}

void duplicating(nm_config *cfg)
{
	cfg->impair.duplicate_rate = 0.3;
	cfg->seed = 5;
}

// On UC a send completes before its packets have crossed the network, so
// they carry their own copy of the data; copies the network makes are
// dropped, not taken for a gap.
TEST_P(NicTest, UnreliableConnectionsCarryTheirDataAndIgnoreDuplicates)
{
	build("roce-100g", duplicating);
	nic_qp *a, *b;
	connect_pair(NIC_QP_UC, NIC_QP_UC, &a, &b);
	Collected &got_a = nodes[0].got, &got_b = nodes[1].got;
	const int n = 50;
	std::vector<std::vector<uint8_t>> out(n), in(n);
	for (int i = 0; i < n; i++) {
		out[i] = pattern(3000 + i, (uint8_t)i);
		in[i].assign(out[i].size(), 0);
		nic_recv r = recv_of(in[i].data(), in[i].size(), (uint64_t)i);
		ASSERT_EQ(nic_post_recv(b, &r), 0);
	}
	std::vector<std::vector<uint8_t>> sent = out;
	for (int i = 0; i < n; i++) {
		nic_wr wr = send_wr(nodes[1], sent[i].data(), sent[i].size(), i);
		ASSERT_EQ(nic_post_send(a, &wr), 0);
	}
	// The sender reuses its buffers as soon as the sends complete.
	while (got_a.sends.size() < (size_t)n && nic_world_run_instant(world)) {
	}
	ASSERT_EQ(got_a.sends.size(), (size_t)n);
	EXPECT_LT(got_b.recvs.size(), (size_t)n) << "all arrived already";
	for (auto &s : sent)
		std::fill(s.begin(), s.end(), 0xee);
	run();
	ASSERT_EQ(got_b.recvs.size(), (size_t)n);
	for (int i = 0; i < n; i++) {
		EXPECT_EQ(got_b.recvs[i].status, NIC_OK);
		EXPECT_EQ(in[i], out[i]) << "message " << i;
	}
	nic_stats st;
	nic_world_stats(world, &st);
	EXPECT_EQ(st.uc_dropped, 0u);
	nic_qp_destroy(a);
	nic_qp_destroy(b);
}

// A UC QP connected to an RC one: their packets are of different
// transports, and each side drops the other's.
TEST_P(NicTest, UnreliableAndReliableConnectionsDoNotMix)
{
	build("ideal");
	nic_qp *a, *b;
	connect_pair(NIC_QP_UC, NIC_QP_RC, &a, &b);
	Collected &got_a = nodes[0].got, &got_b = nodes[1].got;
	std::vector<uint8_t> out = pattern(100, 1), in(100);
	nic_recv r = recv_of(in.data(), in.size());
	ASSERT_EQ(nic_post_recv(b, &r), 0);
	nic_wr wr = send_wr(nodes[1], out.data(), out.size());
	ASSERT_EQ(nic_post_send(a, &wr), 0);
	run();
	EXPECT_EQ(got_a.sends.size(), 1u) << "UC completes anyway";
	EXPECT_TRUE(got_b.recvs.empty()) << "an RC QP took a UC packet";
	nic_qp_destroy(a);
	nic_qp_destroy(b);
}

void link_down_long(nm_config *cfg)
{
	cfg->fault_count = 1;
	cfg->faults[0] = {0, 1000, NM_TIME_NEVER};
}

// Writes, reads and atomics under the same impairments: data intact, each
// atomic applied exactly once.
TEST_P(NicTest, RmaAndAtomicsSurviveLoss)
{
	build("roce-25g", lossy, 2, patient);
	const int n = 200;
	std::vector<uint8_t> target(n * 6000, 0);
	uint64_t counter = 0;
	nic_mr *mt = reg(nodes[1], target.data(), target.size());
	nic_mr *mc = reg(nodes[1], &counter, sizeof(counter));
	std::vector<std::vector<uint8_t>> out(n), back(n);
	std::vector<uint64_t> fetched(n);
	uint64_t one = 1;
	for (int i = 0; i < n; i++) {
		out[i] = pattern(6000, (uint8_t)(i * 3));
		nic_wr wr = send_wr(nodes[1], out[i].data(), 6000, 3 * i);
		wr.opcode = NIC_WR_WRITE;
		wr.rma_count = 1;
		wr.rma[0] = {(uint64_t)(uintptr_t)&target[i * 6000], 6000,
			     nic_mr_key(mt)};
		ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0);
		back[i].assign(6000, 0);
		wr.wr_id = 3 * i + 1;
		wr.opcode = NIC_WR_READ;
		wr.sge[0].addr = back[i].data();
		ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0);
		nic_wr at = {};
		at.wr_id = 3 * i + 2;
		at.opcode = NIC_WR_FETCH_ATOMIC;
		at.peer = nodes[1].addr();
		at.rma_count = 1;
		at.rma[0] = {(uint64_t)(uintptr_t)&counter, 8, nic_mr_key(mc)};
		at.atomic = atomic(FI_UINT64, FI_SUM, 1, &one, nullptr,
				   &fetched[i]);
		if (i % 3 == 0)
			at.atomic.datatype = FI_INT64; // native fetch-add too
		ASSERT_EQ(nic_post_send(nodes[0].qp, &at), 0);
	}
	run();
	ASSERT_EQ(nodes[0].got.sends.size(), (size_t)(3 * n));
	for (auto &c : nodes[0].got.sends)
		EXPECT_EQ(c.status, NIC_OK) << c.cookie;
	for (int i = 0; i < n; i++) {
		EXPECT_TRUE(std::equal(out[i].begin(), out[i].end(),
				       target.begin() + i * 6000)) << i;
		EXPECT_EQ(back[i], out[i]) << i;
	}
	EXPECT_EQ(counter, (uint64_t)n);
	std::vector<uint64_t> sorted = fetched;
	std::sort(sorted.begin(), sorted.end());
	for (int i = 0; i < n; i++)
		EXPECT_EQ(sorted[i], (uint64_t)i) << "each atomic applied once";
	nic_mr_dereg(mt);
	nic_mr_dereg(mc);
}

TEST_P(NicTest, RetryExhaustionFailsTheOperations)
{
	build("roce-100g", link_down_long);
	auto data = pattern(100, 1);
	std::vector<uint8_t> buf(100);
	nic_recv r = recv_of(buf.data(), buf.size());
	ASSERT_EQ(nic_post_recv(nodes[1].qp, &r), 0);
	// Let the link go down first.
	nic_world_advance(world, 2000);
	for (int i = 0; i < 3; i++) {
		nic_wr wr = send_wr(nodes[1], data.data(), data.size(), i);
		ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0);
	}
	run();
	ASSERT_EQ(nodes[0].got.sends.size(), 3u);
	for (auto &c : nodes[0].got.sends)
		EXPECT_EQ(c.status, NIC_RETRY_EXC_ERR);
	EXPECT_TRUE(nodes[1].got.recvs.empty());
}

void no_unexpected(nic_transport_params *tp)
{
	tp->unexpected_bytes = 0;
	tp->rnr_timeout_ns = 5000;
}

TEST_P(NicTest, ReceiverNotReadyIsRetriedUntilAReceiveIsPosted)
{
	build("ideal", nullptr, 2, no_unexpected);
	auto data = pattern(3000, 8);
	nic_wr wr = send_wr(nodes[1], data.data(), data.size());
	ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0);
	nic_world_advance(world, 50000); // several RNR rounds
	EXPECT_TRUE(nodes[0].got.sends.empty());
	std::vector<uint8_t> buf(3000);
	nic_recv r = recv_of(buf.data(), buf.size());
	ASSERT_EQ(nic_post_recv(nodes[1].qp, &r), 0);
	run();
	ASSERT_EQ(nodes[1].got.recvs.size(), 1u);
	EXPECT_EQ(buf, data);
	ASSERT_EQ(nodes[0].got.sends.size(), 1u);
	nic_stats st;
	nic_world_stats(world, &st);
	EXPECT_GE(st.rnr_naks, 5u);
}

// Several messages in flight to a receiver with no buffer: the first is
// refused (RNR NAK), the ones behind it answered out of sequence. The NAK
// for those must not cancel the receiver-not-ready wait, or the flow never
// sends again.
TEST_P(NicTest, SequenceNakDuringAReceiverNotReadyWaitKeepsItsTimer)
{
	build("ideal", nullptr, 2, no_unexpected);
	std::vector<std::vector<uint8_t>> data, bufs(4);
	for (int i = 0; i < 4; i++) {
		data.push_back(pattern(9000, (uint8_t)i));
		nic_wr wr = send_wr(nodes[1], data[i].data(), data[i].size(), i);
		ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0);
	}
	nic_world_advance(world, 30000);
	EXPECT_TRUE(nodes[0].got.sends.empty());
	for (int i = 0; i < 4; i++) {
		bufs[i].resize(9000);
		nic_recv r = recv_of(bufs[i].data(), bufs[i].size(), 10 + i);
		ASSERT_EQ(nic_post_recv(nodes[1].qp, &r), 0);
	}
	run();
	ASSERT_EQ(nodes[1].got.recvs.size(), 4u);
	ASSERT_EQ(nodes[0].got.sends.size(), 4u);
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(bufs[i], data[i]) << i;
}

void small_unexpected(nic_transport_params *tp)
{
	tp->unexpected_bytes = 12000; // two 5000-byte messages
	tp->rnr_timeout_ns = 5000;
}

// Four tagged messages on one flow; the unexpected queue takes two. The
// program waits for the fourth: the third, refused (RNR), stands before it
// on the flow and would be refused for ever, the receive it waits in never
// matching anything. It is taken beyond the budget, since a receive is
// posted; then every message arrives.
TEST_P(NicTest, AFullUnexpectedQueueDoesNotBlockAReceiveForALaterMessage)
{
	build("ideal", nullptr, 2, small_unexpected);
	std::vector<std::vector<uint8_t>> data, bufs(4);
	for (int i = 0; i < 4; i++) {
		data.push_back(pattern(5000, (uint8_t)(i + 1)));
		nic_wr wr = send_wr(nodes[1], data[i].data(), data[i].size(), i);
		wr.flags = NIC_WR_TAGGED;
		wr.tag = 100 + i;
		ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0);
	}
	nic_world_advance(world, 50000);
	EXPECT_EQ(nodes[0].got.sends.size(), 2u) << "the queue took two";
	for (int i = 3; i >= 0; i--) {
		bufs[i].resize(5000);
		nic_recv r = recv_of(bufs[i].data(), bufs[i].size(), 10 + i);
		r.flags = NIC_RECV_TAGGED;
		r.tag = 100 + i;
		ASSERT_EQ(nic_post_recv(nodes[1].qp, &r), 0);
		nic_world_advance(world, 50000);
		ASSERT_EQ(nodes[1].got.recvs.size(), size_t(4 - i))
			<< "the receive for message " << i << " never ended";
		EXPECT_EQ(nodes[1].got.recvs.back().cookie, uint64_t(10 + i));
	}
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(bufs[i], data[i]) << i;
	EXPECT_EQ(nodes[0].got.sends.size(), 4u);
}

// Taken beyond the budget while a receive waits, but not without end: a
// receive that never matches must not let a sender fill the memory.
TEST_P(NicTest, BeyondItsBudgetTheUnexpectedQueueStillHasALimit)
{
	build("ideal", nullptr, 2, small_unexpected);
	std::vector<uint8_t> rbuf(64);
	nic_recv r = recv_of(rbuf.data(), rbuf.size(), 1);
	r.flags = NIC_RECV_TAGGED;
	r.tag = 999; // never sent
	ASSERT_EQ(nic_post_recv(nodes[1].qp, &r), 0);
	std::vector<std::vector<uint8_t>> data;
	for (int i = 0; i < 20; i++) {
		data.push_back(pattern(5000, (uint8_t)i));
		nic_wr wr = send_wr(nodes[1], data[i].data(), data[i].size(), i);
		wr.flags = NIC_WR_TAGGED;
		wr.tag = 1;
		ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0);
	}
	nic_world_advance(world, 200000);
	size_t taken = nodes[0].got.sends.size();
	EXPECT_GT(taken, 2u) << "no more than the budget taken";
	EXPECT_LT(taken, 20u) << "every message taken: no limit";
}

// Registering and deregistering many times over: deleted key-table slots
// are reclaimed, so a remote access naming an unknown key still ends (in
// a remote access error) instead of searching the table forever.
TEST_P(NicTest, ManyRegistrationCyclesKeepTheKeyTableUsable)
{
	build("ideal");
	std::vector<uint8_t> target(64), data = pattern(64, 5);
	for (int i = 0; i < 5000; i++) {
		nic_mr *mr = reg(nodes[1], target.data(), target.size());
		ASSERT_NE(mr, nullptr) << i;
		ASSERT_EQ(nic_mr_dereg(mr), 0);
	}
	nic_mr *kept = reg(nodes[1], target.data(), target.size());
	ASSERT_NE(kept, nullptr);
	nic_wr wr = send_wr(nodes[1], data.data(), data.size(), 1);
	wr.opcode = NIC_WR_WRITE;
	wr.rma_count = 1;
	wr.rma[0] = {(uint64_t)(uintptr_t)target.data(), 64,
		     nic_mr_key(kept) + 7}; // no such key
	ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0);
	wr.wr_id = 2;
	wr.rma[0].key = nic_mr_key(kept);
	ASSERT_EQ(nic_post_send(nodes[0].qp, &wr), 0);
	run();
	ASSERT_EQ(nodes[0].got.sends.size(), 2u);
	EXPECT_EQ(nodes[0].got.sends[0].status, NIC_REM_ACCESS_ERR);
	EXPECT_EQ(nodes[0].got.sends[1].status, NIC_OK);
	EXPECT_EQ(target, data);
	nic_mr_dereg(kept);
}

TEST_P(NicTest, MultiReceiveBufferTakesWholeMessages)
{
	build("ideal", nullptr, 3);
	std::vector<uint8_t> big(1000, 0);
	nic_recv r = recv_of(big.data(), big.size(), 9);
	r.flags = NIC_RECV_MULTI;
	r.min_free = 300;
	ASSERT_EQ(nic_post_recv(nodes[2].qp, &r), 0);
	auto a = pattern(400, 1), b = pattern(350, 2);
	nic_wr wa = send_wr(nodes[2], a.data(), a.size(), 1);
	nic_wr wb = send_wr(nodes[2], b.data(), b.size(), 2);
	ASSERT_EQ(nic_post_send(nodes[0].qp, &wa), 0);
	ASSERT_EQ(nic_post_send(nodes[1].qp, &wb), 0);
	run();
	ASSERT_EQ(nodes[2].got.recvs.size(), 2u);
	auto &c0 = nodes[2].got.recvs[0], &c1 = nodes[2].got.recvs[1];
	EXPECT_EQ(c0.cookie, 9u);
	EXPECT_EQ(c1.cookie, 9u);
	EXPECT_EQ((uint8_t *)c1.buf - (uint8_t *)c0.buf, (ptrdiff_t)c0.len);
	EXPECT_FALSE(c0.flags & NIC_CQ_MULTI_RECV_DONE);
	EXPECT_TRUE(c1.flags & NIC_CQ_MULTI_RECV_DONE); // 250 < 300 left
	EXPECT_EQ(c0.len + c1.len, 750u);
}

TEST_P(NicTest, PeekClaimAndCancel)
{
	build("ideal");
	auto a = pattern(100, 1);
	nic_wr wa = send_wr(nodes[1], a.data(), a.size(), 1);
	wa.flags = NIC_WR_TAGGED;
	wa.tag = 5;
	ASSERT_EQ(nic_post_send(nodes[0].qp, &wa), 0);
	run();
	nic_recv p = recv_of(nullptr, 0, 100);
	p.sge_count = 0;
	p.flags = NIC_RECV_TAGGED | NIC_RECV_PEEK;
	p.tag = 6;
	ASSERT_EQ(nic_post_recv(nodes[1].qp, &p), 0);
	p.cookie = 101;
	p.tag = 5;
	p.flags |= NIC_RECV_CLAIM;
	ASSERT_EQ(nic_post_recv(nodes[1].qp, &p), 0);
	run();
	ASSERT_EQ(nodes[1].got.recvs.size(), 2u);
	EXPECT_EQ(nodes[1].got.recvs[0].status, NIC_WR_FLUSH_ERR); // none
	EXPECT_EQ(nodes[1].got.recvs[1].status, NIC_OK);
	EXPECT_EQ(nodes[1].got.recvs[1].len, 100u);
	uint64_t claim = nodes[1].got.recvs[1].claim_id;
	// A plain receive no longer sees the claimed message.
	std::vector<uint8_t> buf(100), other(100);
	nic_recv plain = recv_of(other.data(), other.size(), 102);
	plain.flags = NIC_RECV_TAGGED;
	plain.tag = 5;
	ASSERT_EQ(nic_post_recv(nodes[1].qp, &plain), 0);
	nic_recv c = recv_of(buf.data(), buf.size(), 103);
	c.flags = NIC_RECV_TAGGED | NIC_RECV_CLAIM;
	c.claim_id = claim;
	ASSERT_EQ(nic_post_recv(nodes[1].qp, &c), 0);
	run();
	ASSERT_EQ(nodes[1].got.recvs.size(), 3u);
	EXPECT_EQ(nodes[1].got.recvs[2].cookie, 103u);
	EXPECT_EQ(buf, a);
	EXPECT_EQ(nic_cancel_recv(nodes[1].qp, 102), 0);
	run();
	ASSERT_EQ(nodes[1].got.recvs.size(), 4u);
	EXPECT_EQ(nodes[1].got.recvs[3].status, NIC_WR_FLUSH_ERR);
	EXPECT_EQ(nic_cancel_recv(nodes[1].qp, 102), -ENOENT);
}

void heavy_loss(nm_config *cfg)
{
	cfg->impair.loss_rate = 0.3;
	cfg->seed = 5;
}

TEST_P(NicTest, DatagramsAreLostAsTheNetworkLosesThem)
{
	build("roce-100g", heavy_loss);
	nic_qp *ua, *ub;
	ASSERT_EQ(nic_qp_create(nodes[0].n, NIC_QP_UD, &kOps, &nodes[0].got, &ua), 0);
	ASSERT_EQ(nic_qp_create(nodes[1].n, NIC_QP_UD, &kOps, &nodes[1].got, &ub), 0);
	const int n = 2000;
	std::vector<std::vector<uint8_t>> bufs(n, std::vector<uint8_t>(64));
	auto data = pattern(64, 3);
	for (int i = 0; i < n; i++) {
		nic_recv r = recv_of(bufs[i].data(), 64, i);
		ASSERT_EQ(nic_post_recv(ub, &r), 0);
		nic_wr wr = send_wr(nodes[1], data.data(), 64, i);
		wr.peer = {nic_host(nodes[1].n), nic_qp_num(ub)};
		ASSERT_EQ(nic_post_send(ua, &wr), 0);
	}
	run();
	EXPECT_EQ(nodes[0].got.sends.size(), (size_t)n); // all "sent"
	size_t got = nodes[1].got.recvs.size();
	// Two links (host-switch-host), 30% loss each: 49% arrive.
	EXPECT_NEAR(got, n * 0.49, 5 * std::sqrt(n * 0.49 * 0.51));
	for (auto &c : nodes[1].got.recvs)
		EXPECT_EQ(bufs[c.cookie], data);
	nic_stats st;
	nic_world_stats(world, &st);
	EXPECT_EQ(st.retransmits, 0u);
	// Larger than a packet: refused.
	std::vector<uint8_t> big(cfg.link.mtu_bytes + 1);
	nic_wr wr = send_wr(nodes[1], big.data(), big.size());
	wr.peer = {nic_host(nodes[1].n), nic_qp_num(ub)};
	EXPECT_EQ(nic_post_send(ua, &wr), -EMSGSIZE);
	nic_qp_destroy(ua);
	nic_qp_destroy(ub);
}

struct Fatal {
	int calls = 0;
	nic_status why = NIC_OK;
};

TEST_P(NicTest, ConnectedQpGoesIntoErrorAndFlushes)
{
	build("roce-100g", link_down_long);
	nic_qp *a, *b;
	static Fatal fatal;
	static Collected got_a;
	static nic_qp_ops ops = kOps;
	fatal = {};
	got_a = {};
	ops.send_done = on_send;
	ops.qp_fatal = [](void *, nic_status why) {
		fatal.calls++;
		fatal.why = why;
	};
	ASSERT_EQ(nic_qp_create(nodes[0].n, NIC_QP_RC, &ops, &got_a, &a), 0);
	ASSERT_EQ(nic_qp_create(nodes[1].n, NIC_QP_RC, &kOps, &nodes[1].got, &b), 0);
	ASSERT_EQ(nic_qp_connect(a, {nic_host(nodes[1].n), nic_qp_num(b)}), 0);
	ASSERT_EQ(nic_qp_connect(b, {nic_host(nodes[0].n), nic_qp_num(a)}), 0);
	nic_world_advance(world, 2000);
	auto data = pattern(100, 1);
	std::vector<uint8_t> buf(100);
	nic_recv r = recv_of(buf.data(), buf.size(), 77);
	ASSERT_EQ(nic_post_recv(a, &r), 0);
	for (int i = 0; i < 3; i++) {
		nic_wr wr = send_wr(nodes[1], data.data(), data.size(), i);
		ASSERT_EQ(nic_post_send(a, &wr), 0);
	}
	run();
	EXPECT_EQ(fatal.calls, 1);
	EXPECT_EQ(fatal.why, NIC_RETRY_EXC_ERR);
	ASSERT_EQ(got_a.sends.size(), 3u);
	EXPECT_EQ(got_a.sends[0].status, NIC_RETRY_EXC_ERR);
	EXPECT_EQ(got_a.sends[1].status, NIC_WR_FLUSH_ERR);
	EXPECT_EQ(got_a.sends[2].status, NIC_WR_FLUSH_ERR);
	ASSERT_EQ(got_a.recvs.size(), 1u);
	EXPECT_EQ(got_a.recvs[0].status, NIC_WR_FLUSH_ERR);
	EXPECT_TRUE(nic_qp_in_error(a));
	// Anything posted now is flushed at once.
	nic_wr wr = send_wr(nodes[1], data.data(), data.size(), 9);
	ASSERT_EQ(nic_post_send(a, &wr), 0);
	run();
	ASSERT_EQ(got_a.sends.size(), 4u);
	EXPECT_EQ(got_a.sends[3].status, NIC_WR_FLUSH_ERR);
	nic_qp_destroy(a);
	nic_qp_destroy(b);
}

// Runs the world in steps of 50 ns until part of `data` has landed in
// `buf`, but not all of it: a receive half filled.
bool run_until_half_filled(nic_world *world, const std::vector<uint8_t> &data,
			   const std::vector<uint8_t> &buf)
{
	for (int step = 0; step < 100000; step++) {
		bool first = std::equal(data.begin(), data.begin() + 64,
					buf.begin());
		bool last = std::equal(data.end() - 64, data.end(),
				       buf.end() - 64);
		if (first && !last)
			return true;
		if (last)
			return false;
		nic_world_advance(world, 50);
	}
	return false;
}

// A QP that fails while a message is landing in one of its receives
// flushes that receive too: it is the application's, and must come back.
TEST_P(NicTest, AReceiveHalfFilledWhenItsQpFailsIsFlushed)
{
	build("roce-100g");
	nic_qp *a, *b;
	connect_pair(NIC_QP_RC, NIC_QP_RC, &a, &b);
	auto data = pattern(64 * 1024, 3);
	std::vector<uint8_t> buf(data.size());
	nic_recv r = recv_of(buf.data(), buf.size(), 77);
	ASSERT_EQ(nic_post_recv(b, &r), 0);
	nic_wr wr = send_wr(nodes[1], data.data(), data.size());
	ASSERT_EQ(nic_post_send(a, &wr), 0);
	ASSERT_TRUE(run_until_half_filled(world, data, buf));
	EXPECT_TRUE(nodes[1].got.recvs.empty());
	nic_qp_set_error(b);
	run();
	ASSERT_EQ(nodes[1].got.recvs.size(), 1u);
	EXPECT_EQ(nodes[1].got.recvs[0].cookie, 77u);
	EXPECT_EQ(nodes[1].got.recvs[0].status, NIC_WR_FLUSH_ERR);
	nic_qp_destroy(a);
	nic_qp_destroy(b);
}

// A QP of a shared receive queue destroyed while a message is landing in
// one of the queue's receives gives that receive back to the queue: the
// next QP's message lands in it, whole.
TEST_P(NicTest, AnSrqReceiveHalfFilledGoesBackWhenItsQpIsDestroyed)
{
	build("roce-100g");
	nic_srq *srq;
	nic_qp *a, *b, *c, *d;
	ASSERT_EQ(nic_srq_create(nodes[1].n, &srq), 0);
	connect_pair(NIC_QP_RC, NIC_QP_RC, &a, &b);
	ASSERT_EQ(nic_qp_use_srq(b, srq), 0);
	auto data = pattern(64 * 1024, 3);
	std::vector<uint8_t> buf(data.size());
	nic_recv r = recv_of(buf.data(), buf.size(), 91);
	ASSERT_EQ(nic_srq_post_recv(srq, &r), 0);
	nic_wr wr = send_wr(nodes[1], data.data(), data.size());
	ASSERT_EQ(nic_post_send(a, &wr), 0);
	ASSERT_TRUE(run_until_half_filled(world, data, buf));
	nic_qp_destroy(b);
	EXPECT_TRUE(nodes[1].got.recvs.empty());

	connect_pair(NIC_QP_RC, NIC_QP_RC, &c, &d);
	ASSERT_EQ(nic_qp_use_srq(d, srq), 0);
	auto other = pattern(data.size(), 9);
	nic_wr wr2 = send_wr(nodes[1], other.data(), other.size(), 2);
	ASSERT_EQ(nic_post_send(c, &wr2), 0);
	// Bounded: a receive lost to the queue would leave c retrying for
	// ever (receiver not ready).
	nic_world_advance(world, 10 * 1000 * 1000);
	ASSERT_EQ(nodes[1].got.recvs.size(), 1u);
	EXPECT_EQ(nodes[1].got.recvs[0].cookie, 91u);
	EXPECT_EQ(nodes[1].got.recvs[0].status, NIC_OK);
	EXPECT_EQ(nodes[1].got.recvs[0].len, other.size());
	EXPECT_EQ(buf, other);
	nic_qp_destroy(a);
	nic_qp_destroy(c);
	nic_qp_destroy(d);
	EXPECT_EQ(nic_srq_destroy(srq), 0);
}

// A shared receive queue keeps no unexpected messages, even where the
// world gives QPs a budget for them: a send that finds it empty is refused
// until a receive is posted, and lands there.
TEST_P(NicTest, AnEmptySharedReceiveQueueRefusesUntilAReceiveIsPosted)
{
	build("ideal");
	nic_srq *srq;
	nic_qp *a, *b;
	ASSERT_EQ(nic_srq_create(nodes[1].n, &srq), 0);
	ASSERT_EQ(nic_qp_create(nodes[0].n, NIC_QP_RC, &kOps, &nodes[0].got, &a), 0);
	ASSERT_EQ(nic_qp_create(nodes[1].n, NIC_QP_RC, &kOps, &nodes[1].got, &b), 0);
	ASSERT_EQ(nic_qp_use_srq(b, srq), 0);
	EXPECT_EQ(nic_qp_use_srq(a, srq), -EINVAL) << "another NIC's SRQ";
	ASSERT_EQ(nic_qp_connect(a, {nic_host(nodes[1].n), nic_qp_num(b)}), 0);
	ASSERT_EQ(nic_qp_connect(b, {nic_host(nodes[0].n), nic_qp_num(a)}), 0);
	auto data = pattern(3000, 5);
	std::vector<uint8_t> buf(3000);
	nic_recv r = recv_of(buf.data(), buf.size(), 33);
	EXPECT_EQ(nic_post_recv(b, &r), -EINVAL) << "b's receives are the SRQ's";
	nic_wr wr = send_wr(nodes[1], data.data(), data.size());
	ASSERT_EQ(nic_post_send(a, &wr), 0);
	nic_world_advance(world, 50000);
	EXPECT_TRUE(nodes[0].got.sends.empty());
	EXPECT_TRUE(nodes[1].got.recvs.empty());
	nic_stats st;
	nic_world_stats(world, &st);
	EXPECT_GE(st.rnr_naks, 2u);
	ASSERT_EQ(nic_srq_post_recv(srq, &r), 0);
	run();
	ASSERT_EQ(nodes[1].got.recvs.size(), 1u);
	EXPECT_EQ(nodes[1].got.recvs[0].cookie, 33u);
	EXPECT_EQ(buf, data);
	ASSERT_EQ(nodes[0].got.sends.size(), 1u);
	EXPECT_EQ(nodes[0].got.sends[0].status, NIC_OK);
	EXPECT_EQ(nic_srq_destroy(srq), -EBUSY);
	nic_qp_destroy(a);
	nic_qp_destroy(b);
	EXPECT_EQ(nic_srq_destroy(srq), 0);
}

struct Mads {
	std::vector<std::pair<uint32_t, std::vector<uint8_t>>> got;
};

TEST_P(NicTest, ManagementDatagramsReachTheHandler)
{
	build("ideal");
	static Mads mads;
	mads = {};
	nic_set_mad_handler(nodes[1].n,
			    [](void *ctx, nic *, uint32_t src, const void *mad,
			       size_t len) {
				    auto *m = static_cast<Mads *>(ctx);
				    const uint8_t *p = (const uint8_t *)mad;
				    m->got.push_back({src, {p, p + len}});
			    },
			    &mads);
	std::vector<uint8_t> mad(256, 0x5a);
	ASSERT_EQ(nic_send_mad(nodes[0].n, nic_host(nodes[1].n), mad.data(),
			       mad.size()), 0);
	EXPECT_EQ(nic_send_mad(nodes[0].n, 999, mad.data(), mad.size()), -EINVAL);
	run();
	ASSERT_EQ(mads.got.size(), 1u);
	EXPECT_EQ(mads.got[0].first, nic_host(nodes[0].n));
	EXPECT_EQ(mads.got[0].second, mad);
}

TEST_P(NicTest, SameSeedSameTimeline)
{
	std::vector<nm_time_ns> first;
	for (int round = 0; round < 2; round++) {
		build("roce-25g", lossy, 2, patient);
		std::vector<std::vector<uint8_t>> bufs(50);
		auto data = pattern(9000, 3);
		for (int i = 0; i < 50; i++) {
			bufs[i].resize(9000);
			nic_recv r = recv_of(bufs[i].data(), 9000, i);
			nic_post_recv(nodes[1].qp, &r);
			nic_wr wr = send_wr(nodes[1], data.data(), 9000, i);
			nic_post_send(nodes[0].qp, &wr);
		}
		run();
		std::vector<nm_time_ns> times;
		for (auto &c : nodes[1].got.recvs)
			times.push_back(c.time);
		for (auto &c : nodes[0].got.sends)
			times.push_back(c.time);
		if (round == 0)
			first = times;
		else
			EXPECT_EQ(times, first);
		TearDown();
		nodes.clear();
		world = nullptr;
	}
}

INSTANTIATE_TEST_SUITE_P(
	Memory, NicTest,
	::testing::Values(Memory::kProcess, Memory::kArena, Memory::kArenaPerHost),
	[](const ::testing::TestParamInfo<Memory> &info) {
		switch (info.param) {
		case Memory::kProcess:
			return "ProcessMemory";
		case Memory::kArena:
			return "Arena";
		case Memory::kArenaPerHost:
			return "ArenaPerHost";
		}
		return "?";
	});

}  // namespace
