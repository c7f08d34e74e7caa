// The engine's ordering rule, run functions and cancellation, checked against a reference order
// computed independently (std::sort on the documented key).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <random>
#include <tuple>
#include <vector>

extern "C" {
#include "netmodel/nm_code.h"
#include "netmodel/nm_engine.h"
}

namespace {

struct Log {
  std::vector<uint64_t> ran;  // args in run order
  std::vector<nm_time_ns> times;
};

void Record(nm_engine* engine, void* ctx, uint64_t arg) {
  auto* log = static_cast<Log*>(ctx);
  log->ran.push_back(arg);
  log->times.push_back(nm_engine_now(engine));
}

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(0, nm_engine_create(&engine_)); }
  void TearDown() override { nm_engine_destroy(engine_); }
  nm_engine* engine_ = nullptr;
  Log log_;
};

TEST_F(EngineTest, OrdersByTimeThenPriorityThenInsertion) {
  // (time, priority) per arg; several share both, so insertion order must decide those.
  const std::vector<std::pair<nm_time_ns, uint32_t>> events = {
      {50, 2}, {10, 7}, {50, 1}, {10, 7}, {0, 9}, {50, 1}, {10, 3}, {0, 9}, {30, 0}};
  for (size_t i = 0; i < events.size(); i++)
    ASSERT_EQ(0, nm_engine_schedule(engine_, events[i].first, events[i].second, Record, &log_, i,
                                    nullptr));
  std::vector<uint64_t> expected(events.size());
  for (size_t i = 0; i < expected.size(); i++) expected[i] = i;
  std::stable_sort(expected.begin(), expected.end(), [&](uint64_t a, uint64_t b) {
    return events[a] < events[b];
  });
  EXPECT_EQ(events.size(), nm_engine_run_until(engine_, NM_TIME_NEVER));
  EXPECT_EQ(expected, log_.ran);
  EXPECT_EQ(50u, nm_engine_now(engine_));
}

TEST_F(EngineTest, RejectsThePastAndNullHandlers) {
  ASSERT_EQ(0, nm_engine_schedule(engine_, 100, 0, Record, &log_, 1, nullptr));
  nm_engine_run_until(engine_, 100);
  EXPECT_EQ(-EINVAL, nm_engine_schedule(engine_, 99, 0, Record, &log_, 2, nullptr));
  EXPECT_EQ(-EINVAL, nm_engine_schedule(engine_, 200, 0, nullptr, &log_, 2, nullptr));
  EXPECT_EQ(0, nm_engine_schedule(engine_, 100, 0, Record, &log_, 3, nullptr));
  EXPECT_EQ(-EOVERFLOW, nm_engine_schedule_after(engine_, NM_TIME_NEVER, 0, Record, &log_, 4,
                                                 nullptr));
}

TEST_F(EngineTest, RunUntilMovesTheClockAndStopsAtTheBoundary) {
  for (uint64_t t : {5, 10, 15}) nm_engine_schedule(engine_, t, 0, Record, &log_, t, nullptr);
  EXPECT_EQ(2u, nm_engine_run_until(engine_, 10));
  EXPECT_EQ(10u, nm_engine_now(engine_));
  EXPECT_EQ(0u, nm_engine_run_until(engine_, 12));
  EXPECT_EQ(12u, nm_engine_now(engine_));  // time passes with nothing to do
  EXPECT_EQ(1u, nm_engine_pending(engine_));
  EXPECT_EQ(1u, nm_engine_run_until(engine_, NM_TIME_NEVER));
  EXPECT_EQ(15u, nm_engine_now(engine_));
}

bool RanOne(void* ctx) { return static_cast<Log*>(ctx)->ran.size() >= 1; }
bool RanTwo(void* ctx) { return static_cast<Log*>(ctx)->ran.size() >= 2; }

// A reserved place: an event scheduled into it later runs where one scheduled at the
// reservation would have, and the engine tells whether that place has been passed, mid-instant
// included.
TEST_F(EngineTest, AReservedPlaceRunsWhereItWasTakenAndIsReachedInOrder) {
  uint64_t early, late;
  ASSERT_EQ(0, nm_engine_reserve_order(engine_, 5, &early));
  ASSERT_EQ(0, nm_engine_schedule(engine_, 100, 5, Record, &log_, 1, nullptr));
  ASSERT_EQ(0, nm_engine_reserve_order(engine_, 5, &late));
  ASSERT_EQ(0, nm_engine_schedule(engine_, 100, 4, Record, &log_, 2, nullptr));
  EXPECT_EQ(-EINVAL, nm_engine_reserve_order(engine_, NM_ENGINE_PRIORITY_MAX + 1, &late));
  EXPECT_FALSE(nm_engine_reached(engine_, 100, early));
  ASSERT_EQ(0, nm_engine_schedule_ordered(engine_, 100, early, Record, &log_, 3, nullptr));

  // Priority 4 first, then the early place (before the event scheduled after it), then that one.
  EXPECT_EQ(NM_RUN_SATISFIED, nm_engine_run_until_pred(engine_, RanOne, &log_, NM_TIME_NEVER));
  EXPECT_EQ(std::vector<uint64_t>({2}), log_.ran);
  EXPECT_FALSE(nm_engine_reached(engine_, 100, early));
  EXPECT_EQ(NM_RUN_SATISFIED, nm_engine_run_until_pred(engine_, RanTwo, &log_, NM_TIME_NEVER));
  EXPECT_EQ(std::vector<uint64_t>({2, 3}), log_.ran);
  EXPECT_TRUE(nm_engine_reached(engine_, 100, early));
  EXPECT_FALSE(nm_engine_reached(engine_, 100, late));
  EXPECT_EQ(-EINVAL, nm_engine_schedule_ordered(engine_, 100, early, Record, &log_, 4, nullptr));
  EXPECT_EQ(1u, nm_engine_run_next_instant(engine_));
  EXPECT_TRUE(nm_engine_reached(engine_, 100, late));  // the instant has run out
  EXPECT_TRUE(nm_engine_reached(engine_, 99, UINT64_MAX));
  EXPECT_FALSE(nm_engine_reached(engine_, 101, 0));
  nm_engine_run_until(engine_, 200);  // a clock moved to 200 has passed every place by 200
  EXPECT_TRUE(nm_engine_reached(engine_, 200, late));
}

struct Chain {
  Log log;
  int remaining;
};

// Schedules another event at the same instant while `remaining` lasts.
void SameInstantChain(nm_engine* engine, void* ctx, uint64_t arg) {
  auto* chain = static_cast<Chain*>(ctx);
  chain->log.ran.push_back(arg);
  if (chain->remaining-- > 0)
    nm_engine_schedule(engine, nm_engine_now(engine), 0, SameInstantChain, ctx, arg + 1, nullptr);
}

TEST_F(EngineTest, RunNextInstantIncludesEventsAddedForThatInstant) {
  Chain chain{{}, 3};
  nm_engine_schedule(engine_, 7, 0, SameInstantChain, &chain, 100, nullptr);
  nm_engine_schedule(engine_, 8, 0, SameInstantChain, &chain, 200, nullptr);
  EXPECT_EQ(4u, nm_engine_run_next_instant(engine_));
  EXPECT_EQ((std::vector<uint64_t>{100, 101, 102, 103}), chain.log.ran);
  EXPECT_EQ(7u, nm_engine_now(engine_));
  EXPECT_EQ(1u, nm_engine_run_next_instant(engine_));
  EXPECT_EQ(8u, nm_engine_now(engine_));
  EXPECT_EQ(0u, nm_engine_run_next_instant(engine_));
  EXPECT_EQ(8u, nm_engine_now(engine_));
}

bool SeenAtLeastTwo(void* ctx) { return static_cast<Log*>(ctx)->ran.size() >= 2; }

TEST_F(EngineTest, RunUntilPredicateStopsOnSatisfactionDeadlineOrIdle) {
  for (uint64_t t : {10, 20, 30}) nm_engine_schedule(engine_, t, 0, Record, &log_, t, nullptr);
  EXPECT_EQ(NM_RUN_SATISFIED, nm_engine_run_until_pred(engine_, SeenAtLeastTwo, &log_, 1000));
  EXPECT_EQ(20u, nm_engine_now(engine_));  // stopped right after the event that satisfied it
  EXPECT_EQ(1u, nm_engine_pending(engine_));

  Log other;
  EXPECT_EQ(NM_RUN_DEADLINE, nm_engine_run_until_pred(engine_, SeenAtLeastTwo, &other, 25));
  EXPECT_EQ(25u, nm_engine_now(engine_));
  EXPECT_EQ(NM_RUN_DEADLINE, nm_engine_run_until_pred(engine_, SeenAtLeastTwo, &other, 500));
  EXPECT_EQ(500u, nm_engine_now(engine_));  // queue emptied; a timed wait still lets time pass
  EXPECT_EQ(NM_RUN_IDLE,
            nm_engine_run_until_pred(engine_, SeenAtLeastTwo, &other, NM_TIME_NEVER));
}

TEST_F(EngineTest, CancelRemovesExactlyThatEventAndIdsGoStale) {
  nm_event_id a, b, c;
  nm_engine_schedule(engine_, 10, 0, Record, &log_, 1, &a);
  nm_engine_schedule(engine_, 10, 0, Record, &log_, 2, &b);
  nm_engine_schedule(engine_, 20, 0, Record, &log_, 3, &c);
  EXPECT_NE(NM_EVENT_NONE, a);
  EXPECT_EQ(0, nm_engine_cancel(engine_, b));
  EXPECT_EQ(-ENOENT, nm_engine_cancel(engine_, b));
  EXPECT_EQ(2u, nm_engine_pending(engine_));
  nm_engine_run_until(engine_, 10);
  EXPECT_EQ(-ENOENT, nm_engine_cancel(engine_, a));  // already ran
  // The record of `a` is reused by the next schedule; the old id must not cancel the new event.
  nm_event_id d;
  nm_engine_schedule(engine_, 30, 0, Record, &log_, 4, &d);
  EXPECT_EQ(-ENOENT, nm_engine_cancel(engine_, a));
  EXPECT_EQ(-ENOENT, nm_engine_cancel(engine_, NM_EVENT_NONE));
  nm_engine_run_until(engine_, NM_TIME_NEVER);
  EXPECT_EQ((std::vector<uint64_t>{1, 3, 4}), log_.ran);
}

// Random schedules, cancels (enough to trigger the sweep) and same-time ties, checked against
// the reference order: sort the survivors by (time, priority, insertion index).
TEST_F(EngineTest, RandomScheduleAndCancelMatchReferenceOrder) {
  std::mt19937_64 rng(12345);
  const int n = 20000;
  std::vector<std::tuple<nm_time_ns, uint32_t, uint64_t>> keys;
  std::vector<nm_event_id> ids(n);
  for (int i = 0; i < n; i++) {
    nm_time_ns t = rng() % 500;  // many ties
    uint32_t prio = rng() % 4;
    keys.emplace_back(t, prio, i);
    ASSERT_EQ(0, nm_engine_schedule(engine_, t, prio, Record, &log_, i, &ids[i]));
  }
  std::vector<bool> cancelled(n, false);
  for (int i = 0; i < n; i++) {
    if (rng() % 10 < 7) {
      ASSERT_EQ(0, nm_engine_cancel(engine_, ids[i]));
      cancelled[i] = true;
    }
  }
  std::vector<uint64_t> expected;
  std::sort(keys.begin(), keys.end());
  for (auto& k : keys)
    if (!cancelled[std::get<2>(k)]) expected.push_back(std::get<2>(k));
  EXPECT_EQ(expected.size(), nm_engine_pending(engine_));
  nm_engine_run_until(engine_, NM_TIME_NEVER);
  EXPECT_EQ(expected, log_.ran);
  EXPECT_EQ(0u, nm_engine_pending(engine_));
}

struct Reschedule {
  std::mt19937_64 rng{7};
  std::vector<std::tuple<nm_time_ns, uint32_t, uint64_t>> ran;
  uint64_t next_id = 0;
  int budget = 50000;
};

// Handlers that schedule more events at random later times; the run order must be increasing
// in (time, priority, scheduling order). (An event added for the current instant with a lower
// priority than the running one still runs after it: the rule orders pending events.)
void Spawn(nm_engine* engine, void* ctx, uint64_t arg) {
  auto* r = static_cast<Reschedule*>(ctx);
  r->ran.emplace_back(nm_engine_now(engine), static_cast<uint32_t>(arg >> 40), arg & 0xffffffffff);
  for (int k = 0; k < 2 && r->budget > 0; k++, r->budget--) {
    uint32_t prio = r->rng() % 3;
    uint64_t id = r->next_id++;
    nm_engine_schedule_after(engine, 1 + r->rng() % 50, prio, Spawn, ctx,
                             (static_cast<uint64_t>(prio) << 40) | id, nullptr);
  }
}

TEST_F(EngineTest, HandlersSchedulingMoreEventsKeepTheOrder) {
  Reschedule r;
  nm_engine_schedule(engine_, 0, 0, Spawn, &r, r.next_id++, nullptr);
  nm_engine_run_until(engine_, NM_TIME_NEVER);
  ASSERT_EQ(r.next_id, r.ran.size());
  for (size_t i = 1; i < r.ran.size(); i++) {
    auto [t0, p0, id0] = r.ran[i - 1];
    auto [t1, p1, id1] = r.ran[i];
    ASSERT_TRUE(t0 < t1 || (t0 == t1 && (p0 < p1 || (p0 == p1 && id0 < id1)))) << "at " << i;
  }
  EXPECT_EQ(r.ran.size(), nm_engine_events_run(engine_));
}

// Engine 1 of 3: sequence numbers 2, 5, 8, ... so that another engine's never coincide.
TEST_F(EngineTest, SequenceSpaceInterleavesEngines) {
  uint64_t order = 0;
  EXPECT_EQ(-EINVAL, nm_engine_set_sequence_space(engine_, 3, 3));
  EXPECT_EQ(-EINVAL, nm_engine_set_sequence_space(engine_, 0, 0));
  ASSERT_EQ(0, nm_engine_set_sequence_space(engine_, 1, 3));
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 3; i++) {
    ASSERT_EQ(0, nm_engine_reserve_order(engine_, 2, &order));
    EXPECT_EQ(2u, order >> 40);
    seqs.push_back(order & ((uint64_t{1} << 40) - 1));
  }
  EXPECT_EQ((std::vector<uint64_t>{2, 5, 8}), seqs);
  EXPECT_EQ(-EINVAL, nm_engine_set_sequence_space(engine_, 0, 2));  // too late
}

void LowerLimit(nm_engine* engine, void* ctx, uint64_t) {
  *static_cast<nm_time_ns*>(ctx) = nm_engine_now(engine);
}

// Runs what is due by the limit, which a handler may lower, and leaves the clock at the last
// event rather than at the limit.
TEST_F(EngineTest, RunWithinKeepsTheClockAtTheLastEvent) {
  nm_time_ns limit = 100;
  for (nm_time_ns t : {10, 20, 150})
    ASSERT_EQ(0, nm_engine_schedule(engine_, t, 0, Record, &log_, t, nullptr));
  EXPECT_EQ(NM_RUN_IDLE, nm_engine_run_within(engine_, nullptr, nullptr, &limit));
  EXPECT_EQ((std::vector<uint64_t>{10, 20}), log_.ran);
  EXPECT_EQ(20u, nm_engine_now(engine_));

  ASSERT_EQ(0, nm_engine_schedule(engine_, 30, 0, LowerLimit, &limit, 0, nullptr));
  ASSERT_EQ(0, nm_engine_schedule(engine_, 40, 0, Record, &log_, 40, nullptr));
  limit = 1000;
  EXPECT_EQ(NM_RUN_IDLE, nm_engine_run_within(engine_, nullptr, nullptr, &limit));
  EXPECT_EQ(30u, limit);
  EXPECT_EQ(30u, nm_engine_now(engine_));
  EXPECT_EQ(2u, nm_engine_pending(engine_));
}

TEST(EngineInstances, TwoEnginesAreIndependent) {
  nm_engine *a, *b;
  ASSERT_EQ(0, nm_engine_create(&a));
  ASSERT_EQ(0, nm_engine_create(&b));
  Log la, lb;
  nm_engine_schedule(a, 5, 0, Record, &la, 1, nullptr);
  nm_engine_schedule(b, 9, 0, Record, &lb, 2, nullptr);
  nm_engine_run_until(a, NM_TIME_NEVER);
  EXPECT_EQ(5u, nm_engine_now(a));
  EXPECT_EQ(0u, nm_engine_now(b));
  EXPECT_EQ(1u, nm_engine_pending(b));
  nm_engine_destroy(a);
  nm_engine_destroy(b);
}

}  // namespace

// ---- Handlers as nm_code (state shared by several processes) ----

namespace {

// A function of the library itself: numbers are distances within one library (libfabric.so.1 holds
// the engine and every handler).
const auto CodeProbe = nm_engine_now;

// Run as a child by the test below: prints this process's number and address for CodeProbe.
TEST(Code, ChildReport) {
  if (!getenv("NM_CODE_CHILD")) GTEST_SKIP() << "run by SameNumberWhereverTheLibraryIsLoaded";
  printf("CODE %ld %p\n", static_cast<long>(NM_CODE(CodeProbe)),
         reinterpret_cast<void*>(CodeProbe));
}

TEST(Code, RoundTripsAndNullIsZero) {
  EXPECT_EQ(0, NM_CODE(static_cast<nm_event_fn>(nullptr)));
  EXPECT_EQ(NM_CODE_AS(decltype(CodeProbe), NM_CODE(CodeProbe)), CodeProbe);
  EXPECT_NE(0, NM_CODE(CodeProbe));
}

// Another process (the same program, loaded at another address) names the handler with the same
// number, so an engine in shared memory can be run by either.
TEST(Code, SameNumberWhereverTheProgramIsLoaded) {
  std::string cmd = "env -u GTEST_PREMATURE_EXIT_FILE -u XML_OUTPUT_FILE -u GTEST_OUTPUT "
                    "NM_CODE_CHILD=1 /proc/" + std::to_string(getpid()) +
                    "/exe --gtest_filter=Code.ChildReport 2>&1";
  long other_code = 0;
  void* other_addr = nullptr;
  for (int i = 0; i < 4; i++) {  // address randomisation may repeat an address: try a few
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    char line[256];
    bool found = false;
    while (fgets(line, sizeof(line), p))
      if (sscanf(line, "CODE %ld %p", &other_code, &other_addr) == 2) found = true;
    pclose(p);
    ASSERT_TRUE(found);
    EXPECT_EQ(other_code, static_cast<long>(NM_CODE(CodeProbe)));
    if (other_addr != reinterpret_cast<void*>(CodeProbe)) break;
  }
  if (other_addr == reinterpret_cast<void*>(CodeProbe))
    GTEST_SKIP() << "address randomisation is off here: same address in both processes";
}

}  // namespace
