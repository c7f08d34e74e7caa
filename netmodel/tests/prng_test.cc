// PRNG streams: reference values of the published generators, key derivation properties and
// statistical sanity (bounds at 5 sigma).
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

extern "C" {
#include "netmodel/nm_prng.h"
}

namespace {

TEST(Prng, CounterStreamIsSplitMix64) {
  // SplitMix64 (Steele, Lea, Flood 2014) started at state 0: first outputs.
  EXPECT_EQ(UINT64_C(0xe220a8397b1dcdaf), nm_prng_at(0, 0));
  EXPECT_EQ(UINT64_C(0x6e789e6aa1b965f4), nm_prng_at(0, 1));
  EXPECT_EQ(UINT64_C(0x06c45d188009454f), nm_prng_at(0, 2));
}

TEST(Prng, XoshiroStepMatchesTheReferenceAlgorithm) {
  // xoshiro256** (Blackman, Vigna) from state {1, 2, 3, 4}: result = rotl(s1 * 5, 7) * 9.
  nm_prng s = {{1, 2, 3, 4}};
  EXPECT_EQ(11520u, nm_prng_next(&s));
  EXPECT_EQ(0u, nm_prng_next(&s));
  EXPECT_EQ(1509978240u, nm_prng_next(&s));
}

TEST(Prng, KeysDependOnEveryPathElementAndOrder) {
  EXPECT_NE(nm_prng_key(1, 2), nm_prng_key(2, 1));
  EXPECT_NE(nm_prng_key(0, 0), nm_prng_key(0, 1));
  uint64_t path_ab[] = {7, 8};
  uint64_t path_ba[] = {8, 7};
  EXPECT_EQ(nm_prng_key(nm_prng_key(42, 7), 8), nm_prng_key_path(42, path_ab, 2));
  EXPECT_NE(nm_prng_key_path(42, path_ab, 2), nm_prng_key_path(42, path_ba, 2));
  std::set<uint64_t> keys;
  for (uint64_t a = 0; a < 100; a++)
    for (uint64_t b = 0; b < 100; b++) keys.insert(nm_prng_key(a, b));
  EXPECT_EQ(10000u, keys.size());
}

TEST(Prng, SeededStreamsAreReproducibleAndDistinct) {
  nm_prng a, b, c;
  nm_prng_seed(&a, 99);
  nm_prng_seed(&b, 99);
  nm_prng_seed(&c, 100);
  int same_ac = 0;
  for (int i = 0; i < 1000; i++) {
    uint64_t x = nm_prng_next(&a);
    EXPECT_EQ(x, nm_prng_next(&b));
    same_ac += x == nm_prng_next(&c);
  }
  EXPECT_EQ(0, same_ac);
}

TEST(Prng, UnitIsUniformWithinFiveSigma) {
  nm_prng s;
  nm_prng_seed(&s, 1);
  const int n = 1000000, buckets = 16;
  std::vector<int> count(buckets, 0);
  double sum = 0;
  for (int i = 0; i < n; i++) {
    double u = nm_prng_unit(&s);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    count[static_cast<int>(u * buckets)]++;
  }
  // Mean of U(0,1): 1/2, sd 1/sqrt(12 n).
  EXPECT_NEAR(0.5, sum / n, 5 / std::sqrt(12.0 * n));
  double p = 1.0 / buckets, sd = std::sqrt(n * p * (1 - p));
  for (int c : count) EXPECT_NEAR(n * p, c, 5 * sd);
}

TEST(Prng, BelowStaysInRangeAndCoversIt) {
  nm_prng s;
  nm_prng_seed(&s, 3);
  std::vector<int> seen(7, 0);
  for (int i = 0; i < 70000; i++) {
    uint64_t v = nm_prng_below(&s, 7);
    ASSERT_LT(v, 7u);
    seen[v]++;
  }
  double sd = std::sqrt(70000 * (1.0 / 7) * (6.0 / 7));
  for (int c : seen) EXPECT_NEAR(10000, c, 5 * sd);
  EXPECT_EQ(0u, nm_prng_below(&s, 0));
}

TEST(Prng, ProbabilityThresholds) {
  EXPECT_EQ(NM_PROB_NEVER, nm_prob_from_double(0.0));
  EXPECT_EQ(NM_PROB_NEVER, nm_prob_from_double(-1.0));
  EXPECT_EQ(NM_PROB_ALWAYS, nm_prob_from_double(1.0));
  EXPECT_EQ(UINT64_C(1) << 63, nm_prob_from_double(0.5));
  EXPECT_FALSE(nm_prob_hit(NM_PROB_NEVER, 0));
  EXPECT_TRUE(nm_prob_hit(NM_PROB_ALWAYS, UINT64_MAX));
  nm_prob p = nm_prob_from_double(0.25);
  int hits = 0;
  const int n = 400000;
  for (int i = 0; i < n; i++) hits += nm_prob_hit(p, nm_prng_at(5, i));
  EXPECT_NEAR(0.25 * n, hits, 5 * std::sqrt(n * 0.25 * 0.75));
}

}  // namespace
