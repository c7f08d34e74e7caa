// With a real preset, a ping-pong of S bytes through the libfabric API takes
// exactly the network model's closed-form time each way (read through the
// fabsim_ops_v1 extension's virtual clock); with `ideal`, no time at all.
#include <gtest/gtest.h>

#include <cstdlib>

extern "C" {
#include <netmodel/nm_config.h>
#include <netmodel/nm_engine.h>
#include <netmodel/nm_network.h>
}

#include "tests/sim/scenario.h"

namespace {

// The model's figure for the configuration the provider loaded.
nm_time_ns model_one_way(uint32_t src, uint32_t dst, size_t bytes)
{
	nm_config cfg;
	nm_error err;
	nm_engine *engine;
	nm_network *net;
	if (nm_config_load(&cfg, nullptr, nm_env_getenv, nullptr, &err) ||
	    nm_engine_create(&engine))
		return 0;
	if (nm_network_create(engine, &cfg, &net, &err)) {
		nm_engine_destroy(engine);
		return 0;
	}
	nm_time_ns t = nm_network_message_latency_ns(net, src, dst, 0, bytes);
	nm_network_destroy(net);
	nm_engine_destroy(engine);
	return t;
}

void pingpong(const char *preset, bool expect_zero)
{
	Scenario s(2, {{"FI_SIM_PRESET", preset}});
	ASSERT_EQ(s.failure, "");
	auto &a = s.node(0), &b = s.node(1);
	uint32_t ha = s.ext()->host(&a.domain->fid);
	uint32_t hb = s.ext()->host(&b.domain->fid);
	for (size_t size : {8ul, 64ul, 1000ul, 4096ul, 65536ul, 1ul << 20}) {
		std::vector<uint8_t> abuf(size, 1), bbuf(size, 2);
		fid_mr *ma = s.reg(0, abuf.data(), size + 1, FI_SEND | FI_RECV);
		fid_mr *mb = s.reg(1, bbuf.data(), size + 1, FI_SEND | FI_RECV);
		nm_time_ns want = expect_zero ? 0 : model_one_way(ha, hb, size);
		ASSERT_TRUE(expect_zero || want > 0);
		for (int iter = 0; iter < 5; iter++) {
			SCOPED_TRACE(std::to_string(size) + " B, iteration " + std::to_string(iter));
			fi_context2 c[4];
			std::vector<Completion> done;
			ASSERT_EQ(fi_recv(b.ep, bbuf.data(), size, fi_mr_desc(mb),
					  FI_ADDR_UNSPEC, &c[0]), 0);
			ASSERT_EQ(fi_recv(a.ep, abuf.data(), size, fi_mr_desc(ma),
					  FI_ADDR_UNSPEC, &c[1]), 0);
			uint64_t t0 = s.now();
			ASSERT_EQ(fi_send(a.ep, abuf.data(), size, fi_mr_desc(ma),
					  a.peers[1], &c[2]), 0);
			// Wait for the ping to land, answer at once.
			uint64_t t1 = 0;
			for (bool seen = false; !seen;) {
				ASSERT_TRUE(s.collect(done.size() + 1, &done));
				for (auto &d : done)
					if (d.context == &c[0]) {
						t1 = d.time_ns;
						seen = true;
					}
			}
			ASSERT_EQ(fi_send(b.ep, bbuf.data(), size, fi_mr_desc(mb),
					  b.peers[0], &c[3]), 0);
			uint64_t t2 = 0;
			for (bool seen = false; !seen;) {
				ASSERT_TRUE(s.collect(done.size() + 1, &done));
				for (auto &d : done)
					if (d.context == &c[1]) {
						t2 = d.time_ns;
						seen = true;
					}
			}
			EXPECT_EQ(t1 - t0, want) << size << " B ping";
			EXPECT_EQ(t2 - t1, want) << size << " B pong";
			// Drain the send completions.
			ASSERT_TRUE(s.collect(4, &done));
		}
	}
}

TEST(Timing, PingPongTakesTheModelsTimeExactly)
{
	pingpong("roce-100g", false);
}

TEST(Timing, SlowerPresetSameRule)
{
	pingpong("roce-25g", false);
}

TEST(Timing, IdealPresetTakesNoTime)
{
	pingpong("ideal", true);
}

// Registration costs the preset's base + per-page time.
TEST(Timing, MemoryRegistrationCostsVirtualTime)
{
	Scenario s(1, {{"FI_SIM_PRESET", "roce-100g"},
		       {"FI_SIM_MR_BASE_NS", "20000"},
		       {"FI_SIM_MR_PER_PAGE_NS", "400"},
		       {"FI_SIM_MR_PAGE_SIZE", "4096"}});
	ASSERT_EQ(s.failure, "");
	std::vector<uint8_t> buf(64 * 4096 + 1);
	uint64_t t0 = s.now();
	ASSERT_NE(s.reg(0, buf.data(), 64 * 4096, FI_SEND), nullptr);
	EXPECT_EQ(s.now() - t0, 20000u + 64u * 400u);
	// A partial page counts whole; where the buffer sits does not matter.
	t0 = s.now();
	ASSERT_NE(s.reg(0, buf.data() + 1, 64 * 4096, FI_SEND), nullptr);
	EXPECT_EQ(s.now() - t0, 20000u + 64u * 400u);
	t0 = s.now();
	ASSERT_NE(s.reg(0, buf.data(), 4097, FI_SEND), nullptr);
	EXPECT_EQ(s.now() - t0, 20000u + 2u * 400u);
}

}  // namespace
