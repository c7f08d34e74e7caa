// Datagram endpoints (FI_EP_DGRAM) on the sim provider: unreliable,
// unconnected, MTU-limited messages through an AV. Loss shows to the
// application at the configured rate; what does not fit is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "tests/sim/scenario.h"

namespace {

const uint64_t kStrictMr = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
			   FI_MR_PROV_KEY;

size_t max_msg_size()
{
	fi_info *info = sim_info(FI_EP_DGRAM, FI_MSG);
	EXPECT_NE(info, nullptr);
	size_t max = info ? info->ep_attr->max_msg_size : 0;
	fi_freeinfo(info);
	return max;
}

// Sends `count` datagrams from node 0 to node 1, one receive posted for
// each; returns how many arrived. Every send completes successfully: a
// datagram's sender cannot know it was lost.
size_t send_and_count(Scenario &s, size_t count, size_t len)
{
	std::vector<uint8_t> out(len, 0x5a), in(count * len);
	fid_mr *mo = s.reg(0, out.data(), out.size(), FI_SEND);
	fid_mr *mi = s.reg(1, in.data(), in.size(), FI_RECV);
	std::vector<fi_context2> rctx(count), sctx(count);
	for (size_t i = 0; i < count; i++)
		EXPECT_EQ(fi_recv(s.ep(1, 0), in.data() + i * len, len,
				  s.desc(mi), FI_ADDR_UNSPEC, &rctx[i]), 0);
	for (size_t i = 0; i < count; i++) {
		ssize_t r;
		// A datagram queue may be full for a moment: wait for room.
		std::vector<Completion> drain;
		while ((r = fi_send(s.ep(0, 1), out.data(), len, s.desc(mo),
				    s.addr(0, 1), &sctx[i])) == -FI_EAGAIN)
			fi_cq_read(s.node(0).cq, nullptr, 0);
		EXPECT_EQ(r, 0);
	}
	// Let the network drain: nothing arrives later than this.
	s.ext()->advance(&s.node(0).domain->fid, 10000000);
	size_t sent = 0, received = 0;
	for (int n = 0; n < 2; n++) {
		fi_cq_tagged_entry e[64];
		ssize_t r;
		while ((r = fi_cq_read(s.node(n).cq, e, 64)) > 0)
			for (ssize_t k = 0; k < r; k++) {
				if (e[k].flags & FI_SEND)
					sent++;
				else {
					EXPECT_EQ(e[k].len, len);
					received++;
				}
			}
		EXPECT_EQ(r, -FI_EAGAIN) << "node " << n;
	}
	EXPECT_EQ(sent, count);
	return received;
}

TEST(Dgram, EverythingArrivesOnACleanNetwork)
{
	Scenario s(2, {}, kStrictMr, FI_EP_DGRAM);
	ASSERT_EQ(s.failure, "");
	EXPECT_EQ(send_and_count(s, 500, 1000), 500u);
}

// With FI_SIM_LOSS_RATE=p every datagram crosses two lossy hops (host to
// switch, switch to host), so it arrives with probability (1-p)^2; the
// count stays within four standard deviations of that, and the drop
// counter accounts for every missing one.
TEST(Dgram, LossShowsAtTheConfiguredRate)
{
	const size_t n = 4000;
	const double p = 0.1, arrive = (1 - p) * (1 - p);
	Scenario s(2, {{"FI_SIM_LOSS_RATE", "0.1"}, {"FI_SIM_SEED", "11"}},
		   kStrictMr, FI_EP_DGRAM);
	ASSERT_EQ(s.failure, "");
	size_t got = send_and_count(s, n, 512);
	double mean = n * arrive, sd = std::sqrt(n * arrive * (1 - arrive));
	EXPECT_GT(got, mean - 4 * sd) << got;
	EXPECT_LT(got, mean + 4 * sd) << got;
	fabsim_stats st = {};
	ASSERT_EQ(s.ext()->stats(&s.node(0).domain->fid, &st), 0);
	EXPECT_EQ(st.packets_dropped, n - got);
	EXPECT_EQ(st.retransmits, 0u); // nobody retries a datagram
	RecordProperty("arrived", std::to_string(got));
}

TEST(Dgram, SameSeedSameLosses)
{
	size_t got[2];
	for (int run = 0; run < 2; run++) {
		Scenario s(2, {{"FI_SIM_LOSS_RATE", "0.2"},
			       {"FI_SIM_SEED", "5"}},
			   kStrictMr, FI_EP_DGRAM);
		ASSERT_EQ(s.failure, "");
		got[run] = send_and_count(s, 1000, 256);
	}
	EXPECT_EQ(got[0], got[1]);
}

TEST(Dgram, OversizeIsRefusedWithEMSGSIZE)
{
	size_t max = max_msg_size();
	ASSERT_GT(max, 0u);
	ASSERT_LE(max, 65536u); // one MTU, not a reliable-message limit
	Scenario s(2, {}, kStrictMr, FI_EP_DGRAM);
	ASSERT_EQ(s.failure, "");
	std::vector<uint8_t> buf(max + 1);
	fid_mr *mr = s.reg(0, buf.data(), buf.size(), FI_SEND);
	EXPECT_EQ(fi_send(s.ep(0, 1), buf.data(), max + 1, s.desc(mr),
			  s.addr(0, 1), nullptr), -FI_EMSGSIZE);
	iovec iov[2] = {{buf.data(), max / 2 + 1}, {buf.data(), max / 2 + 1}};
	void *d[2] = {s.desc(mr), s.desc(mr)};
	EXPECT_EQ(fi_sendv(s.ep(0, 1), iov, d, 2, s.addr(0, 1), nullptr),
		  -FI_EMSGSIZE);
	// Its buffer sized to the limit (the descriptor does not cover the
	// datagram either): still refused for its size, at the post.
	fid_mr *limit = s.reg(0, buf.data(), max, FI_SEND);
	EXPECT_EQ(fi_send(s.ep(0, 1), buf.data(), max + 1, s.desc(limit),
			  s.addr(0, 1), nullptr), -FI_EMSGSIZE);
	// Exactly the limit goes through.
	std::vector<Completion> done;
	EXPECT_EQ(fi_send(s.ep(0, 1), buf.data(), max, s.desc(mr),
			  s.addr(0, 1), nullptr), 0);
	ASSERT_TRUE(s.collect(1, &done));
	EXPECT_FALSE(done[0].error);
}

// A datagram larger than the receive buffer: the receiver gets the part
// that fits and FI_ETRUNC, as fi_msg(3) describes for any endpoint.
TEST(Dgram, ShortReceiveBufferTruncates)
{
	Scenario s(2, {}, kStrictMr, FI_EP_DGRAM);
	ASSERT_EQ(s.failure, "");
	std::vector<uint8_t> out(1000, 7), in(100);
	fid_mr *mo = s.reg(0, out.data(), out.size(), FI_SEND);
	fid_mr *mi = s.reg(1, in.data(), in.size(), FI_RECV);
	fi_context2 rc, sc;
	ASSERT_EQ(fi_recv(s.ep(1, 0), in.data(), in.size(), s.desc(mi),
			  FI_ADDR_UNSPEC, &rc), 0);
	ASSERT_EQ(fi_send(s.ep(0, 1), out.data(), out.size(), s.desc(mo),
			  s.addr(0, 1), &sc), 0);
	std::vector<Completion> done;
	ASSERT_TRUE(s.collect(2, &done));
	bool saw_trunc = false;
	for (auto &c : done)
		if (c.node == 1) {
			EXPECT_TRUE(c.error);
			EXPECT_EQ(c.err, FI_ETRUNC);
			saw_trunc = true;
		}
	EXPECT_TRUE(saw_trunc);
}

// Without a posted receive the datagram is dropped at the receiver (no
// receiver-not-ready retries as on reliable endpoints); the sender still
// completes.
TEST(Dgram, NoReceivePostedDropsTheDatagram)
{
	Scenario s(2, {}, kStrictMr, FI_EP_DGRAM);
	ASSERT_EQ(s.failure, "");
	std::vector<uint8_t> out(64, 1), in(64);
	fid_mr *mo = s.reg(0, out.data(), out.size(), FI_SEND);
	fid_mr *mi = s.reg(1, in.data(), in.size(), FI_RECV);
	ASSERT_EQ(fi_send(s.ep(0, 1), out.data(), out.size(), s.desc(mo),
			  s.addr(0, 1), nullptr), 0);
	std::vector<Completion> done;
	ASSERT_TRUE(s.collect(1, &done));
	EXPECT_EQ(done[0].node, 0);
	s.ext()->advance(&s.node(0).domain->fid, 1000000);
	// A receive posted afterwards gets nothing.
	ASSERT_EQ(fi_recv(s.ep(1, 0), in.data(), in.size(), s.desc(mi),
			  FI_ADDR_UNSPEC, nullptr), 0);
	s.ext()->advance(&s.node(0).domain->fid, 1000000);
	fi_cq_tagged_entry e;
	EXPECT_EQ(fi_cq_read(s.node(1).cq, &e, 1), -FI_EAGAIN);
}

// Only messages: RMA is not a datagram operation.
TEST(Dgram, RmaIsNotSupported)
{
	Scenario s(2, {}, kStrictMr, FI_EP_DGRAM);
	ASSERT_EQ(s.failure, "");
	std::vector<uint8_t> buf(64);
	fid_mr *mr = s.reg(0, buf.data(), buf.size(), FI_WRITE);
	EXPECT_EQ(fi_write(s.ep(0, 1), buf.data(), buf.size(), s.desc(mr),
			   s.addr(0, 1), 0, 0, nullptr), -FI_EOPNOTSUPP);
}

} // namespace
