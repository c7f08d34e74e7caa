// A thread's working set (arena/working_set.h): what a turn notes, and
// what the next turn fetches.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "arena/working_set.h"

namespace {

struct alignas(64) Record {
	char bytes[256];
};

// The objects noted so far this turn, as (first line, lines).
std::vector<std::pair<uintptr_t, unsigned>> noted(const fs_working_set *ws)
{
	std::vector<std::pair<uintptr_t, unsigned>> out;
	for (uint32_t i = 0; i < ws->count; i++)
		out.emplace_back(ws->objects[i] & ~uintptr_t{FS_LINE - 1},
				 unsigned(ws->objects[i] % FS_LINE) + 1);
	return out;
}

uintptr_t line_of(const void *p)
{
	return reinterpret_cast<uintptr_t>(p) & ~uintptr_t{FS_LINE - 1};
}

// Begins turns until one notes anew (at most FS_WORKING_SET_REFRESH);
// returns how many it began, 0 if none noted.
int next_noting_turn(fs_working_set *ws)
{
	for (int turns = 1; turns <= FS_WORKING_SET_REFRESH; turns++)
		if (fs_working_set_begin_turn(ws))
			return turns;
	return 0;
}

class WorkingSet : public ::testing::Test {
protected:
	void SetUp() override
	{
		ws = fs_working_set_mine();
		ASSERT_NE(ws, nullptr);
		// Whatever an earlier test left.
		ASSERT_NE(next_noting_turn(ws), 0) << "the set is never noted anew";
	}
	void TearDown() override { fs_working_set_pause(); }
	fs_working_set *ws = nullptr;
};

TEST_F(WorkingSet, NotesNothingUnlessResumed)
{
	Record r[2];
	fs_touch(&r[0]);
	fs_touch_span(&r[1], sizeof(r[1]));
	EXPECT_EQ(ws->count, 0u);

	fs_working_set_resume(ws);
	fs_touch(&r[0]);
	fs_working_set_pause();
	fs_touch(&r[1]);
	EXPECT_EQ(noted(ws), (std::vector<std::pair<uintptr_t, unsigned>>{{line_of(&r[0]), 1}}));
}

TEST_F(WorkingSet, AnObjectIsNotedOnceATurnInTheOrderFirstTouched)
{
	Record r[3];
	fs_working_set_resume(ws);
	for (int round = 0; round < 5; round++) {
		fs_touch_span(&r[2], sizeof(r[2]));
		fs_touch(&r[0]);
		fs_touch_span(&r[2], sizeof(r[2]));
	}
	fs_touch(r[1].bytes + 100);
	EXPECT_EQ(noted(ws), (std::vector<std::pair<uintptr_t, unsigned>>{
				     {line_of(&r[2]), 4}, {line_of(&r[0]), 1}, {line_of(r[1].bytes + 100), 1}}));
}

TEST_F(WorkingSet, ASpanCoversEveryLineItStartsOrEndsIn)
{
	Record r[2];
	fs_working_set_resume(ws);
	fs_touch_span(r[0].bytes + 32, 200); // bytes 32..231: lines 0..3
	fs_touch_span(r[1].bytes + 63, 2);   // bytes 63..64: lines 0..1
	fs_touch_span(r[1].bytes + 128, 0);  // counts as one byte
	EXPECT_EQ(noted(ws), (std::vector<std::pair<uintptr_t, unsigned>>{
				     {line_of(&r[0]), 4}, {line_of(&r[1]), 2}, {line_of(r[1].bytes + 128), 1}}));
}

// A line noted first (an event's context) may be the start of an object
// touched as a whole later in the turn: the note grows, it is not lost.
TEST_F(WorkingSet, AnObjectTouchedMoreWidelyLaterIsWidened)
{
	Record r[2];
	fs_working_set_resume(ws);
	fs_touch(&r[0]);
	fs_touch(&r[1]);
	fs_touch_span(&r[0], sizeof(r[0]));
	fs_touch(&r[0]); // narrower again: stays wide
	EXPECT_EQ(noted(ws), (std::vector<std::pair<uintptr_t, unsigned>>{{line_of(&r[0]), 4}, {line_of(&r[1]), 1}}));
}

TEST_F(WorkingSet, AHugeObjectIsFetchedUpToTheSpanLimit)
{
	std::vector<char> big(FS_LINE * (FS_WORKING_SET_SPAN + 10));
	fs_working_set_resume(ws);
	fs_touch_span(big.data(), big.size());
	ASSERT_EQ(ws->count, 1u);
	EXPECT_EQ(noted(ws)[0].second, unsigned{FS_WORKING_SET_SPAN});
}

// A set serves FS_WORKING_SET_REFRESH turns: the turns after the one that
// noted it fetch it as it is, then a turn empties it and notes anew, the
// objects of the last set among others.
TEST_F(WorkingSet, ASetServesRefreshTurnsThenIsNotedAnew)
{
	Record r, later;
	EXPECT_TRUE(ws->noting_turn);
	fs_working_set_resume(ws);
	fs_touch(&r);
	fs_working_set_pause();
	for (int turn = 1; turn < FS_WORKING_SET_REFRESH; turn++) {
		ASSERT_FALSE(fs_working_set_begin_turn(ws)) << "turn " << turn;
		EXPECT_FALSE(ws->noting_turn);
		EXPECT_EQ(noted(ws), (std::vector<std::pair<uintptr_t, unsigned>>{{line_of(&r), 1}}))
			<< "turn " << turn;
	}
	ASSERT_TRUE(fs_working_set_begin_turn(ws));
	EXPECT_TRUE(ws->noting_turn);
	EXPECT_EQ(ws->count, 0u);
	fs_working_set_resume(ws);
	fs_touch(&later);
	fs_touch(&r);
	fs_touch(&later);
	EXPECT_EQ(noted(ws), (std::vector<std::pair<uintptr_t, unsigned>>{{line_of(&later), 1}, {line_of(&r), 1}}));
}

// A turn that noted nothing leaves nothing to serve: the next notes; one
// that noted something is served by the next.
TEST_F(WorkingSet, AnEmptySetIsNotedAtTheNextTurn)
{
	Record r;
	ASSERT_EQ(ws->count, 0u);
	EXPECT_TRUE(fs_working_set_begin_turn(ws));
	fs_working_set_resume(ws);
	fs_touch(&r);
	fs_working_set_pause();
	EXPECT_FALSE(fs_working_set_begin_turn(ws));
}

// A turn's tag comes back after FS_WORKING_SET_TAGS - 1 turns: what the
// table remembers from the last turn with that tag must not hide a note.
TEST_F(WorkingSet, TurnsManyTurnsApartDoNotShareNotes)
{
	Record once, every;
	fs_working_set_resume(ws);
	fs_touch(&once);
	for (int turn = 0; turn < 3 * FS_WORKING_SET_TAGS; turn++) {
		ASSERT_NE(next_noting_turn(ws), 0);
		fs_touch(&every);
		if (turn % (FS_WORKING_SET_TAGS - 1) == FS_WORKING_SET_TAGS - 2)
			fs_touch(&once);
		auto n = noted(ws);
		ASSERT_GE(n.size(), 1u) << "turn " << turn;
		EXPECT_EQ(n[0].first, line_of(&every)) << "turn " << turn;
		EXPECT_EQ(n.size(), turn % (FS_WORKING_SET_TAGS - 1) == FS_WORKING_SET_TAGS - 2 ? 2u : 1u)
			<< "turn " << turn;
	}
}

TEST_F(WorkingSet, ATurnKeepsItsFirstObjectsWhenTooManyAreTouched)
{
	std::vector<Record> r(FS_WORKING_SET_OBJECTS + 50);
	fs_working_set_resume(ws);
	for (auto &x : r)
		fs_touch(&x);
	ASSERT_EQ(ws->count, uint32_t{FS_WORKING_SET_OBJECTS});
	EXPECT_EQ(noted(ws).back().first, line_of(&r[FS_WORKING_SET_OBJECTS - 1]));
}

// Another thread that resumed its own set since keeps noting when this one
// pauses.
TEST_F(WorkingSet, APauseLeavesAnotherThreadsSetAlone)
{
	Record mine_only, theirs;
	fs_working_set_resume(ws);
	fs_touch(&mine_only);
	uint32_t before = 0, after = 0;
	std::thread t([&] {
		fs_working_set *other = fs_working_set_mine();
		fs_working_set_resume(other);
		fs_touch(&theirs);
		before = other->count;
		std::thread([] { fs_working_set_pause(); }).join(); // not the noter: no effect
		fs_touch(reinterpret_cast<const char *>(&theirs) + FS_LINE);
		after = other->count;
		fs_working_set_pause();
	});
	t.join();
	EXPECT_EQ(before, 1u);
	EXPECT_EQ(after, 2u);
	fs_touch(&theirs); // this thread's set is no longer the one noted into
	EXPECT_EQ(noted(ws), (std::vector<std::pair<uintptr_t, unsigned>>{{line_of(&mine_only), 1}}));
}

TEST_F(WorkingSet, AForkedChildNotesNothingUntilItResumes)
{
	Record r;
	fs_working_set_resume(ws);
	pid_t pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		uint32_t count = ws->count;
		fs_touch(&r);
		_exit(ws->count == count && fs_working_set_noting() == nullptr ? 0 : 1);
	}
	int status = 0;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// A note is a hint: memory freed since (even unmapped) is fetched without
// harm.
TEST_F(WorkingSet, FetchingMemoryThatIsGoneIsHarmless)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(p, MAP_FAILED);
	fs_working_set_resume(ws);
	fs_touch_span(p, page);
	ASSERT_EQ(munmap(p, page), 0);
	EXPECT_FALSE(fs_working_set_begin_turn(ws)); // fetches the page
	EXPECT_EQ(ws->count, 1u);
	ASSERT_NE(next_noting_turn(ws), 0);
	EXPECT_EQ(ws->count, 0u);
}

TEST_F(WorkingSet, EachThreadNotesIntoItsOwn)
{
	Record mine_only, theirs;
	fs_working_set_resume(ws);
	fs_touch(&mine_only);
	fs_working_set *other = nullptr;
	uint32_t other_count = 0;
	std::thread t([&] {
		other = fs_working_set_mine();
		fs_touch(&theirs); // not resumed in this thread
		fs_working_set_resume(other);
		fs_touch(&theirs);
		other_count = other->count;
		fs_working_set_pause();
	});
	t.join();
	EXPECT_NE(other, ws);
	EXPECT_EQ(other_count, 1u);
	EXPECT_EQ(noted(ws), (std::vector<std::pair<uintptr_t, unsigned>>{{line_of(&mine_only), 1}}));
}

} // namespace
