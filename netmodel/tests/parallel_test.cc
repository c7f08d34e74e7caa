// A conservative parallel simulation (nm_parallel.h): the lookahead contract, safe times, acting
// partitions, and the same events in the same order whether the partitions run in one thread,
// in several threads or in several processes.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "arena/arena.h"
#include "netmodel/nm_parallel.h"
#include "netmodel/tests/test_util.h"

namespace {

constexpr nm_time_ns kLookahead = 100;

struct Ran {
	nm_time_ns time;
	uint64_t arg;
	bool operator==(const Ran &o) const { return time == o.time && arg == o.arg; }
	bool operator<(const Ran &o) const
	{
		return time != o.time ? time < o.time : arg < o.arg;
	}
};

std::vector<Ran> *g_log;

void log_event(nm_engine *engine, void *, uint64_t arg)
{
	g_log->push_back({nm_engine_now(engine), arg});
}

class Parallel : public ::testing::Test {
protected:
	void SetUp() override { g_log = &log_; }
	void TearDown() override
	{
		nm_parallel_destroy(par_);
		g_log = nullptr;
	}
	void Make(uint32_t partitions)
	{
		ASSERT_EQ(nm_parallel_create_in(nullptr, partitions, kLookahead, &par_), 0);
	}
	nm_parallel *par_ = nullptr;
	std::vector<Ran> log_;
};

TEST(ParallelCreate, RefusesNoPartitionsAndNoLookahead)
{
	nm_parallel *par = nullptr;

	EXPECT_EQ(nm_parallel_create_in(nullptr, 0, kLookahead, &par), -EINVAL);
	EXPECT_EQ(nm_parallel_create_in(nullptr, 2, 0, &par), -EINVAL);
	EXPECT_EQ(nm_parallel_create_in(nullptr, 2, NM_TIME_NEVER, &par), -EINVAL);
	EXPECT_EQ(par, nullptr);
	ASSERT_EQ(nm_parallel_create_in(nullptr, 3, kLookahead, &par), 0);
	EXPECT_EQ(nm_parallel_count(par), 3u);
	EXPECT_EQ(nm_parallel_lookahead(par), kLookahead);
	EXPECT_NE(nm_parallel_engine(par, 2), nullptr);
	EXPECT_EQ(nm_parallel_engine(par, 3), nullptr);
	nm_parallel_destroy(par);
}

TEST_F(Parallel, SendKeepsTheLookahead)
{
	Make(2);
	EXPECT_EQ(nm_parallel_send(par_, 0, 1, kLookahead - 1, 0, log_event, nullptr, 1), -EINVAL);
	EXPECT_EQ(nm_parallel_send(par_, 0, 0, kLookahead, 0, log_event, nullptr, 1), -EINVAL);
	EXPECT_EQ(nm_parallel_send(par_, 0, 2, kLookahead, 0, log_event, nullptr, 1), -EINVAL);
	EXPECT_EQ(nm_parallel_send(par_, 0, 1, kLookahead, 0, nullptr, nullptr, 1), -EINVAL);
	EXPECT_EQ(nm_parallel_send(par_, 0, 1, kLookahead, NM_ENGINE_PRIORITY_MAX + 1, log_event,
				   nullptr, 1), -EINVAL);
	EXPECT_EQ(nm_parallel_send(par_, 0, 1, kLookahead, 0, log_event, nullptr, 1), 0);
	nm_parallel_wait(par_, 0, NM_TIME_NEVER);
	EXPECT_EQ(nm_parallel_run(par_, 1, nullptr, nullptr, NM_TIME_NEVER), NM_PARALLEL_IDLE);
	EXPECT_EQ(log_, (std::vector<Ran>{{kLookahead, 1}}));
}

// A partition whose next event is at 500 promised 600: a send before that breaks the promise.
TEST_F(Parallel, SendKeepsThePromise)
{
	Make(2);
	ASSERT_EQ(nm_engine_schedule(nm_parallel_engine(par_, 0), 500, 0, log_event, nullptr, 7,
				     nullptr), 0);
	nm_parallel_wait(par_, 0, NM_TIME_NEVER);
	EXPECT_EQ(nm_parallel_safe_until(par_, 1), 500 + kLookahead);
	EXPECT_EQ(nm_parallel_send(par_, 0, 1, 500 + kLookahead - 1, 0, log_event, nullptr, 1),
		  -EINVAL);
}

// A partition acts from time 0: it holds the others to its clock plus the lookahead; once it
// waits, they go.
TEST_F(Parallel, ActingHoldsOthersToItsClock)
{
	Make(2);
	nm_engine *e1 = nm_parallel_engine(par_, 1);

	for (uint64_t t : {50, 150, 250})
		ASSERT_EQ(nm_engine_schedule(e1, t, 0, log_event, nullptr, t, nullptr), 0);
	EXPECT_EQ(nm_parallel_act(par_, 0), NM_PARALLEL_SATISFIED);
	EXPECT_EQ(nm_parallel_run(par_, 1, nullptr, nullptr, NM_TIME_NEVER),
		  NM_PARALLEL_BLOCKED);
	EXPECT_EQ(log_, (std::vector<Ran>{{50, 50}}));
	EXPECT_EQ(nm_engine_now(e1), 50u); // a stop that depends on the others moves no clock

	nm_parallel_wait(par_, 0, NM_TIME_NEVER);
	EXPECT_EQ(nm_parallel_run(par_, 1, nullptr, nullptr, NM_TIME_NEVER), NM_PARALLEL_IDLE);
	EXPECT_EQ(log_, (std::vector<Ran>{{50, 50}, {150, 150}, {250, 250}}));
}

// A deadline within the safe time moves the clock; one beyond it waits for the others.
TEST_F(Parallel, DeadlineOnlyWithinTheSafeTime)
{
	Make(2); // partition 0 acts at 0: it promises 0 + lookahead
	EXPECT_EQ(nm_parallel_run(par_, 1, nullptr, nullptr, 60), NM_PARALLEL_DEADLINE);
	EXPECT_EQ(nm_engine_now(nm_parallel_engine(par_, 1)), 60u);
	EXPECT_EQ(nm_parallel_run(par_, 1, nullptr, nullptr, 400), NM_PARALLEL_BLOCKED);
	EXPECT_EQ(nm_engine_now(nm_parallel_engine(par_, 1)), 60u);
}

// A waiting program's deadline counts in its partition's promise: it may act then.
TEST_F(Parallel, ADeadlineIsPromised)
{
	Make(2);
	ASSERT_EQ(nm_engine_schedule(nm_parallel_engine(par_, 0), 900, 0, log_event, nullptr, 1,
				     nullptr), 0);
	nm_parallel_wait(par_, 0, 300);
	EXPECT_EQ(nm_parallel_safe_until(par_, 1), 300 + kLookahead);
	nm_parallel_wait(par_, 1, NM_TIME_NEVER);
	EXPECT_EQ(nm_parallel_run(par_, 0, nullptr, nullptr, 300), NM_PARALLEL_DEADLINE);
	EXPECT_EQ(nm_engine_now(nm_parallel_engine(par_, 0)), 300u);
	EXPECT_EQ(nm_parallel_send(par_, 0, 1, 300 + kLookahead, 0, log_event, nullptr, 2), 0);
}

// A program that comes back joins where the others may already be: at what its partition
// promised, minus the lookahead, once what is due before has run.
TEST_F(Parallel, ActingJoinsAtThePromise)
{
	Make(2);
	nm_engine *e0 = nm_parallel_engine(par_, 0);

	ASSERT_EQ(nm_engine_schedule(e0, 500, 0, log_event, nullptr, 1, nullptr), 0);
	nm_parallel_wait(par_, 0, NM_TIME_NEVER);
	nm_parallel_wait(par_, 1, NM_TIME_NEVER);
	EXPECT_EQ(nm_parallel_run(par_, 1, nullptr, nullptr, NM_TIME_NEVER),
		  NM_PARALLEL_BLOCKED); // partition 1 may have gone up to 599
	EXPECT_EQ(nm_parallel_act(par_, 0), NM_PARALLEL_SATISFIED);
	EXPECT_EQ(nm_engine_now(e0), 500u);
	EXPECT_EQ(nm_parallel_send(par_, 0, 1, 500 + kLookahead - 1, 0, log_event, nullptr, 2),
		  -EINVAL);
	EXPECT_EQ(nm_parallel_send(par_, 0, 1, 500 + kLookahead, 0, log_event, nullptr, 2), 0);
	EXPECT_EQ(nm_parallel_run(par_, 0, nullptr, nullptr, NM_TIME_NEVER),
		  NM_PARALLEL_BLOCKED);
	EXPECT_EQ(log_, (std::vector<Ran>{{500, 1}}));
}

void send_to_0_at_200(nm_engine *engine, void *ctx, uint64_t arg)
{
	log_event(engine, ctx, arg);
	EXPECT_EQ(nm_parallel_send(static_cast<nm_parallel *>(ctx), 1, 0, 200, 0, log_event,
				   nullptr, 99),
		  0);
}

// Joining waits for what may still come before the join: partition 1's event at 100 sends to
// partition 0 for 200, and partition 0 joins at 200 whichever runs first (it used to jump to its
// own next event, 500, and get the message late when it came second).
TEST_F(Parallel, JoinWaitsForWhatMayStillCome)
{
	for (bool one_first : {true, false}) {
		SCOPED_TRACE(one_first ? "partition 1 runs first" : "partition 0 asks first");
		log_.clear();
		nm_parallel_destroy(par_);
		Make(2);
		nm_engine *e0 = nm_parallel_engine(par_, 0);
		ASSERT_EQ(nm_engine_schedule(e0, 500, 0, log_event, nullptr, 1, nullptr), 0);
		ASSERT_EQ(nm_engine_schedule(nm_parallel_engine(par_, 1), 100, 0, send_to_0_at_200,
					     par_, 2, nullptr), 0);
		nm_parallel_wait(par_, 0, NM_TIME_NEVER);
		nm_parallel_wait(par_, 1, NM_TIME_NEVER);
		if (!one_first)
			EXPECT_EQ(nm_parallel_act(par_, 0), NM_PARALLEL_BLOCKED);
		nm_parallel_run(par_, 1, nullptr, nullptr, NM_TIME_NEVER);
		EXPECT_EQ(nm_parallel_act(par_, 0), NM_PARALLEL_SATISFIED);
		EXPECT_EQ(nm_engine_now(e0), 200u);
		EXPECT_EQ(nm_parallel_run(par_, 0, nullptr, nullptr, NM_TIME_NEVER),
			  NM_PARALLEL_IDLE);
		EXPECT_EQ(nm_parallel_late(par_, 0), 0u);
		EXPECT_EQ(log_, (std::vector<Ran>{{100, 2}, {200, 99}, {500, 1}}));
	}
}

// A partition that promised nothing (no event, no deadline) cannot act again: the others may
// have run anywhere.
TEST_F(Parallel, NothingPromisedNothingToJoin)
{
	Make(2);
	nm_engine *e1 = nm_parallel_engine(par_, 1);
	for (uint64_t t : {100, 1000})
		ASSERT_EQ(nm_engine_schedule(e1, t, 0, log_event, nullptr, t, nullptr), 0);
	nm_parallel_wait(par_, 0, NM_TIME_NEVER);
	EXPECT_EQ(nm_parallel_run(par_, 1, nullptr, nullptr, NM_TIME_NEVER), NM_PARALLEL_IDLE);
	EXPECT_EQ(nm_parallel_act(par_, 0), NM_PARALLEL_IDLE);
	EXPECT_EQ(nm_parallel_send(par_, 0, 1, 100, 0, log_event, nullptr, 3), -EINVAL);
}

// Under a lock every runner takes, a partition that promised nothing acts again at the latest
// clock of all (nm_parallel_act cannot: the others may be anywhere). What it sends from there is
// late for nobody.
TEST_F(Parallel, RejoinAtTheLatestClock)
{
	Make(3);
	nm_engine *e0 = nm_parallel_engine(par_, 0);
	for (uint64_t t : {100, 1000})
		ASSERT_EQ(nm_engine_schedule(nm_parallel_engine(par_, 1), t, 0, log_event, nullptr,
					     t, nullptr), 0);
	ASSERT_EQ(nm_engine_schedule(nm_parallel_engine(par_, 2), 700, 0, log_event, nullptr, 700,
				     nullptr), 0);
	for (uint32_t p = 0; p < 3; p++)
		nm_parallel_wait(par_, p, NM_TIME_NEVER);
	EXPECT_FALSE(nm_parallel_acting(par_, 0));
	for (int turn = 0; turn < 4; turn++) // 1 and 2 take turns until they are done
		nm_parallel_run(par_, 1 + turn % 2, nullptr, nullptr, NM_TIME_NEVER);
	EXPECT_EQ(nm_parallel_run(par_, 1, nullptr, nullptr, NM_TIME_NEVER), NM_PARALLEL_IDLE);
	EXPECT_EQ(nm_parallel_act(par_, 0), NM_PARALLEL_IDLE);
	EXPECT_EQ(nm_parallel_rejoin(par_, 0), NM_PARALLEL_SATISFIED);
	EXPECT_TRUE(nm_parallel_acting(par_, 0));
	EXPECT_EQ(nm_engine_now(e0), 1000u);
	EXPECT_EQ(nm_parallel_safe_until(par_, 1), 1000 + kLookahead);
	EXPECT_EQ(nm_parallel_send(par_, 0, 2, 1000 + kLookahead, 0, log_event, nullptr, 5), 0);
	EXPECT_TRUE(nm_parallel_has_mail(par_, 2));
	EXPECT_FALSE(nm_parallel_has_mail(par_, 1));
	nm_parallel_wait(par_, 0, NM_TIME_NEVER);
	EXPECT_EQ(nm_parallel_run(par_, 2, nullptr, nullptr, NM_TIME_NEVER), NM_PARALLEL_IDLE);
	EXPECT_FALSE(nm_parallel_has_mail(par_, 2));
	EXPECT_EQ(nm_parallel_late(par_, 2), 0u);
	EXPECT_EQ(log_, (std::vector<Ran>{{100, 100}, {700, 700}, {1000, 1000},
					  {1000 + kLookahead, 5}}));
}

// One that promised something (a message lowered its promise) joins as nm_parallel_act does,
// after the events before.
TEST_F(Parallel, RejoinWithAPromiseJoinsThere)
{
	Make(2);
	nm_engine *e0 = nm_parallel_engine(par_, 0);
	ASSERT_EQ(nm_parallel_send(par_, 1, 0, 300, 0, log_event, nullptr, 3), 0);
	nm_parallel_wait(par_, 0, NM_TIME_NEVER);
	nm_parallel_wait(par_, 1, NM_TIME_NEVER);
	EXPECT_EQ(nm_parallel_rejoin(par_, 0), NM_PARALLEL_SATISFIED);
	EXPECT_EQ(nm_engine_now(e0), 300u);
	EXPECT_TRUE(log_.empty()); // the instant it joins at is still open
}

// The partition a safe time waits for: the one with the least promise.
TEST_F(Parallel, HolderHasTheLeastPromise)
{
	Make(3);
	ASSERT_EQ(nm_engine_schedule(nm_parallel_engine(par_, 1), 400, 0, log_event, nullptr, 1,
				     nullptr), 0);
	ASSERT_EQ(nm_engine_schedule(nm_parallel_engine(par_, 2), 200, 0, log_event, nullptr, 2,
				     nullptr), 0);
	EXPECT_EQ(nm_parallel_holder(par_, 0), 1u); // all promise the lookahead: the first
	nm_parallel_wait(par_, 1, NM_TIME_NEVER);
	nm_parallel_wait(par_, 2, NM_TIME_NEVER);
	EXPECT_EQ(nm_parallel_holder(par_, 0), 2u);
	EXPECT_EQ(nm_parallel_promise(par_, 2), 200 + kLookahead);
	EXPECT_EQ(nm_parallel_promise(par_, 1), 400 + kLookahead);
	EXPECT_EQ(nm_parallel_holder(par_, 2), 0u); // 0 still acts at 0
	nm_parallel *one = nullptr;
	ASSERT_EQ(nm_parallel_create_in(nullptr, 1, kLookahead, &one), 0);
	EXPECT_EQ(nm_parallel_holder(one, 0), 0u);
	nm_parallel_destroy(one);
}

bool always(void *)
{
	return true;
}

// A predicate that already holds on entry of a waiting partition: it acts where it may, at what
// it promised minus the lookahead, not at its old clock (the others ran up to 550 meanwhile).
TEST_F(Parallel, ConditionThatHeldOnEntryActsAtThePromise)
{
	Make(2);
	nm_engine *e0 = nm_parallel_engine(par_, 0);
	ASSERT_EQ(nm_engine_schedule(e0, 500, 0, log_event, nullptr, 1, nullptr), 0);
	for (uint64_t t : {150, 550})
		ASSERT_EQ(nm_engine_schedule(nm_parallel_engine(par_, 1), t, 0, log_event, nullptr,
					     t, nullptr), 0);
	nm_parallel_wait(par_, 0, NM_TIME_NEVER);
	nm_parallel_wait(par_, 1, NM_TIME_NEVER);
	nm_parallel_run(par_, 1, nullptr, nullptr, NM_TIME_NEVER);
	EXPECT_EQ(nm_parallel_run(par_, 0, always, nullptr, NM_TIME_NEVER),
		  NM_PARALLEL_SATISFIED);
	EXPECT_EQ(nm_engine_now(e0), 500u);
	EXPECT_EQ(nm_parallel_send(par_, 0, 1, 100, 0, log_event, nullptr, 3), -EINVAL);
}

// A condition that holds on entry of a partition that waits and promised nothing: it cannot act,
// and says so (it answered BLOCKED, "call again", for ever).
TEST_F(Parallel, ConditionThatHeldWithNothingPromisedIsIdle)
{
	Make(2);
	nm_parallel_wait(par_, 0, NM_TIME_NEVER);
	nm_parallel_wait(par_, 1, NM_TIME_NEVER);
	EXPECT_EQ(nm_parallel_run(par_, 1, nullptr, nullptr, NM_TIME_NEVER), NM_PARALLEL_IDLE);
	EXPECT_EQ(nm_parallel_run(par_, 0, always, nullptr, NM_TIME_NEVER), NM_PARALLEL_IDLE);
}

// A join moves the clock to an instant where nothing has run yet: a message for that very
// instant, in the first place any partition gives out, is not late.
TEST_F(Parallel, JoinLeavesTheInstantOpen)
{
	Make(2); // partition 0 acts at 0
	ASSERT_EQ(nm_engine_schedule(nm_parallel_engine(par_, 1), 400, 0, log_event, nullptr, 1,
				     nullptr), 0);
	ASSERT_EQ(nm_parallel_send(par_, 0, 1, kLookahead, 0, log_event, nullptr, 2), 0);
	nm_parallel_wait(par_, 1, NM_TIME_NEVER);
	EXPECT_EQ(nm_parallel_act(par_, 1), NM_PARALLEL_SATISFIED);
	EXPECT_EQ(nm_engine_now(nm_parallel_engine(par_, 1)), kLookahead);
	nm_parallel_wait(par_, 0, NM_TIME_NEVER);
	EXPECT_EQ(nm_parallel_run(par_, 1, nullptr, nullptr, NM_TIME_NEVER), NM_PARALLEL_IDLE);
	EXPECT_EQ(nm_parallel_late(par_, 1), 0u);
	EXPECT_EQ(log_, (std::vector<Ran>{{kLookahead, 2}, {400, 1}}));
}

bool logged_two(void *ctx)
{
	return static_cast<std::vector<Ran> *>(ctx)->size() >= 2;
}

// A run stops where its predicate becomes true, and the partition acts from then on.
TEST_F(Parallel, SatisfiedStopsAndActs)
{
	Make(2);
	nm_engine *e0 = nm_parallel_engine(par_, 0);

	for (uint64_t t : {10, 20, 30})
		ASSERT_EQ(nm_engine_schedule(e0, t, 0, log_event, nullptr, t, nullptr), 0);
	nm_parallel_wait(par_, 1, NM_TIME_NEVER);
	EXPECT_EQ(nm_parallel_run(par_, 0, logged_two, &log_, NM_TIME_NEVER),
		  NM_PARALLEL_SATISFIED);
	EXPECT_EQ(nm_engine_now(e0), 20u);
	EXPECT_EQ(nm_parallel_safe_until(par_, 1), 20 + kLookahead);
}

// Equal times: priority first, then sequence numbers, which no two partitions share.
TEST_F(Parallel, SameInstantOrderedByPriorityThenSequence)
{
	Make(2);
	nm_engine *e1 = nm_parallel_engine(par_, 1);

	ASSERT_EQ(nm_engine_schedule(e1, 300, 5, log_event, nullptr, 1, nullptr), 0);
	ASSERT_EQ(nm_engine_schedule(e1, 300, 4, log_event, nullptr, 2, nullptr), 0);
	ASSERT_EQ(nm_parallel_send(par_, 0, 1, 300, 4, log_event, nullptr, 3), 0); // sequence 1
	ASSERT_EQ(nm_parallel_send(par_, 0, 1, 300, 3, log_event, nullptr, 4), 0);
	nm_parallel_wait(par_, 0, NM_TIME_NEVER);
	EXPECT_EQ(nm_parallel_run(par_, 1, nullptr, nullptr, NM_TIME_NEVER), NM_PARALLEL_IDLE);
	// priority 3, then priority 4 by sequence (partition 0's 1 before partition 1's 2), then 5
	EXPECT_EQ(log_, (std::vector<Ran>{{300, 4}, {300, 3}, {300, 2}, {300, 1}}));
}

// ---- one model, run every way ----------------------------------------------------------

// Chains of events, each step at this partition or sent to another, times on a 10 ns grid so that
// many fall on one instant. What a step does depends only on its id and its time, so the set of
// events is the same however they are run; their order within a partition must be too.
constexpr uint32_t kParts = 8; // more than the CPUs: runners are preempted anywhere
constexpr uint32_t kChainsPerPart = 4;
constexpr nm_time_ns kHorizon = 100000;
constexpr size_t kLogCap = 1 << 16;

struct PartState {
	uint32_t index;
	struct World *world;
	uint64_t logged;
	uint64_t sent;
	uint64_t refused;
	Ran log[kLogCap];
};

struct World {
	nm_parallel *par;  // run in partitions, or:
	nm_engine *single; // every partition's events on one engine
	PartState parts[kParts];
};

void step(nm_engine *engine, void *ctx, uint64_t id)
{
	PartState *ps = static_cast<PartState *>(ctx);
	World *w = ps->world;
	nm_time_ns now = nm_engine_now(engine);
	uint64_t r = nmtest::Mix(id ^ now);
	uint64_t child = nmtest::Mix(id + 1);
	uint32_t priority = r % 3;

	if (ps->logged < kLogCap)
		ps->log[ps->logged] = {now, id};
	ps->logged++;
	if (now >= kHorizon)
		return;
	uint32_t to = (r >> 8) % kParts;
	nm_time_ns later = ((r >> 16) % 4) * 10;
	if (to == ps->index) {
		if (nm_engine_schedule(engine, now + 10 + later, priority, step, ps, child, nullptr))
			ps->refused++;
		return;
	}
	nm_time_ns at = now + kLookahead + later;
	int rc = w->par ? nm_parallel_send(w->par, ps->index, to, at, priority, step,
					   &w->parts[to], child)
			: nm_engine_schedule(w->single, at, priority, step, &w->parts[to], child,
					     nullptr);
	if (rc)
		ps->refused++;
	ps->sent++;
}

void seed(World *w)
{
	for (uint32_t p = 0; p < kParts; p++) {
		nm_engine *e = w->par ? nm_parallel_engine(w->par, p) : w->single;

		w->parts[p].index = p;
		w->parts[p].world = w;
		for (uint32_t c = 0; c < kChainsPerPart; c++)
			ASSERT_EQ(nm_engine_schedule(e, c * 10, c % 3, step, &w->parts[p],
						     nmtest::Mix(p * 100 + c), nullptr), 0);
	}
}

std::vector<Ran> log_of(const PartState &ps)
{
	return std::vector<Ran>(ps.log, ps.log + std::min<uint64_t>(ps.logged, kLogCap));
}

// Runs partition p until nothing is left anywhere.
void run_to_the_end(nm_parallel *par, uint32_t p)
{
	nm_parallel_wait(par, p, NM_TIME_NEVER);
	for (unsigned spins = 0;; spins++) {
		if (nm_parallel_run(par, p, nullptr, nullptr, NM_TIME_NEVER) == NM_PARALLEL_IDLE)
			return;
		if (spins % 64 == 63)
			sched_yield();
	}
}

class ParallelModel : public ::testing::Test {
protected:
	static World *NewWorld(fs_arena *arena, bool partitioned)
	{
		World *w = static_cast<World *>(fs_mem_calloc(arena, 1, sizeof(World)));
		if (partitioned)
			EXPECT_EQ(nm_parallel_create_in(arena, kParts, kLookahead, &w->par), 0);
		else
			EXPECT_EQ(nm_engine_create_in(arena, &w->single), 0);
		seed(w);
		return w;
	}
	static void FreeWorld(fs_arena *arena, World *w)
	{
		nm_parallel_destroy(w->par);
		if (w->single)
			nm_engine_destroy(w->single);
		fs_mem_free(arena, w);
	}
	static void ExpectSane(const World *w)
	{
		uint64_t sent = 0;

		for (const PartState &ps : w->parts) {
			EXPECT_EQ(ps.refused, 0u) << "partition " << ps.index;
			if (w->par)
				EXPECT_EQ(nm_parallel_late(w->par, ps.index), 0u)
					<< "partition " << ps.index << " got events late";
			EXPECT_LE(ps.logged, kLogCap);
			sent += ps.sent;
			std::vector<Ran> log = log_of(ps);
			EXPECT_TRUE(std::is_sorted(log.begin(), log.end(),
						   [](const Ran &a, const Ran &b) {
							   return a.time < b.time;
						   }))
				<< "partition " << ps.index << " ran an event late";
		}
		EXPECT_GT(sent, 1000u); // the model does cross partitions
	}
	// Every partition's events, in the order they ran.
	static std::vector<std::vector<Ran>> Logs(const World *w)
	{
		std::vector<std::vector<Ran>> logs;
		for (const PartState &ps : w->parts)
			logs.push_back(log_of(ps));
		return logs;
	}

	std::vector<std::vector<Ran>> RunInOneThread()
	{
		World *w = NewWorld(nullptr, true);
		bool idle = false;

		for (uint32_t p = 0; p < kParts; p++)
			nm_parallel_wait(w->par, p, NM_TIME_NEVER);
		while (!idle) {
			idle = true;
			for (uint32_t p = 0; p < kParts; p++)
				if (nm_parallel_run(w->par, p, nullptr, nullptr, NM_TIME_NEVER) !=
				    NM_PARALLEL_IDLE)
					idle = false;
		}
		ExpectSane(w);
		auto logs = Logs(w);
		FreeWorld(nullptr, w);
		return logs;
	}

	std::vector<std::vector<Ran>> RunInThreads()
	{
		World *w = NewWorld(nullptr, true);
		std::vector<std::thread> threads;

		for (uint32_t p = 0; p < kParts; p++)
			threads.emplace_back(run_to_the_end, w->par, p);
		for (auto &t : threads)
			t.join();
		ExpectSane(w);
		auto logs = Logs(w);
		FreeWorld(nullptr, w);
		return logs;
	}
};

TEST_F(ParallelModel, SameEventsAsOneEngine)
{
	World *one = NewWorld(nullptr, false);
	nm_engine_run_until(one->single, NM_TIME_NEVER);
	ExpectSane(one);
	auto parallel = RunInOneThread();

	for (uint32_t p = 0; p < kParts; p++) {
		std::vector<Ran> a = log_of(one->parts[p]), b = parallel[p];
		std::sort(a.begin(), a.end());
		std::sort(b.begin(), b.end());
		EXPECT_EQ(a, b) << "partition " << p;
	}
	size_t ties = 0;
	for (const auto &log : parallel)
		for (size_t i = 1; i < log.size(); i++)
			ties += log[i].time == log[i - 1].time;
	EXPECT_GT(ties, 100u); // the order among equal times is exercised
	FreeWorld(nullptr, one);
}

TEST_F(ParallelModel, ThreadsRunTheSameOrder)
{
	auto reference = RunInOneThread();

	for (int run = 0; run < 10; run++)
		EXPECT_EQ(RunInThreads(), reference) << "run " << run;
}

TEST_F(ParallelModel, ProcessesRunTheSameOrder)
{
	auto reference = RunInOneThread();
	std::string name = "/fabsim-parallel-test-" + std::to_string(getpid());
	fs_arena *arena = nullptr;
	char msg[256];

	ASSERT_EQ(fs_arena_create(name.c_str(), size_t(1) << 28, &arena, msg, sizeof msg), 0)
		<< msg;
	fs_arena_unlink(name.c_str());
	for (int run = 0; run < 3; run++) {
		World *w = NewWorld(arena, true);
		std::vector<pid_t> children;

		for (uint32_t p = 0; p < kParts; p++) {
			pid_t pid = fork();
			ASSERT_GE(pid, 0);
			if (pid == 0) {
				alarm(60); // a lost message would leave the others waiting
				run_to_the_end(w->par, p);
				_exit(0);
			}
			children.push_back(pid);
		}
		for (pid_t pid : children) {
			int status = 0;
			ASSERT_EQ(waitpid(pid, &status, 0), pid);
			EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
		}
		ExpectSane(w);
		EXPECT_EQ(Logs(w), reference) << "run " << run;
		FreeWorld(arena, w);
	}
	fs_arena_detach(arena);
}

} // namespace
