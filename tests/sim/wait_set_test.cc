// Wait sets (fi_poll(3)) on the sim provider: counters, CQs and EQs opened
// with FI_WAIT_SET share the set's wait object; fi_wait returns once one of
// them has something to read (its timeout passes in virtual time), and with
// FI_WAIT_FD the set's one descriptor works with fi_trywait and poll().
#include <gtest/gtest.h>

#include <poll.h>

#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include "tests/sim/scenario.h"

namespace {

// A wait set of `s`'s fabric with wait object `obj` (0 when refused).
int OpenSet(Scenario &s, fi_wait_obj obj, fid_wait **ws)
{
	fi_wait_attr attr{};
	attr.wait_obj = obj;
	return fi_wait_open(s.fabric(), &attr, ws);
}

// An FI_WAIT_FD set, its descriptor, and the attributes of an EQ that
// joins it and takes fi_eq_write.
struct FdSet {
	fid_wait *ws = nullptr;
	int fd = -1;
	fi_eq_attr eq_attr{};

	int Open(Scenario &s)
	{
		int ret = OpenSet(s, FI_WAIT_FD, &ws);
		if (!ret)
			ret = fi_control(&ws->fid, FI_GETWAIT, &fd);
		eq_attr.wait_obj = FI_WAIT_SET;
		eq_attr.wait_set = ws;
		eq_attr.flags = FI_WRITE;
		return ret;
	}
};

// A counter's attributes for joining wait set `ws` (NULL: none named).
fi_cntr_attr InSet(fid_wait *ws)
{
	fi_cntr_attr attr{};
	attr.events = FI_CNTR_EVENTS_COMP;
	attr.wait_obj = FI_WAIT_SET;
	attr.wait_set = ws;
	return attr;
}

TEST(WaitSet, FiWaitEndsWhenAMemberCounterMoves)
{
	Scenario s(1, {});
	ASSERT_EQ(s.failure, "");
	fid_wait *ws = nullptr;
	ASSERT_EQ(OpenSet(s, FI_WAIT_UNSPEC, &ws), 0);
	fi_cntr_attr cattr = InSet(ws);
	fid_cntr *cntr = nullptr;
	ASSERT_EQ(fi_cntr_open(s.node(0).domain, &cattr, &cntr, nullptr), 0);
	EXPECT_EQ(fi_wait(ws, 5), -FI_ETIMEDOUT);
	ASSERT_EQ(fi_cntr_add(cntr, 1), 0);
	EXPECT_EQ(fi_wait(ws, -1), 0);
	EXPECT_EQ(fi_close(&ws->fid), -FI_EBUSY) << "a counter still uses it";
	EXPECT_EQ(fi_close(&cntr->fid), 0);
	EXPECT_EQ(fi_close(&ws->fid), 0);
}

TEST(WaitSet, ItsDescriptorWorksWithTrywaitAndPoll)
{
	Scenario s(1, {});
	ASSERT_EQ(s.failure, "");
	FdSet set_fd;
	ASSERT_EQ(set_fd.Open(s), 0);
	fid_wait *ws = set_fd.ws;
	int fd = set_fd.fd;
	ASSERT_GE(fd, 0);
	fid_eq *eq = nullptr;
	ASSERT_EQ(fi_eq_open(s.fabric(), &set_fd.eq_attr, &eq, nullptr), 0);
	fid *set = &ws->fid;
	ASSERT_EQ(fi_trywait(s.fabric(), &set, 1), 0);
	pollfd p = {fd, POLLIN, 0};
	EXPECT_EQ(poll(&p, 1, 0), 0) << "readable with nothing queued";
	fi_eq_entry entry{};
	ASSERT_EQ(fi_eq_write(eq, FI_NOTIFY, &entry, sizeof(entry), 0),
		  (ssize_t)sizeof(entry));
	EXPECT_EQ(poll(&p, 1, 1000), 1) << "an event and the set's "
					   "descriptor stays unreadable";
	EXPECT_EQ(fi_trywait(s.fabric(), &set, 1), -FI_EAGAIN);
	uint32_t event = 0;
	ASSERT_EQ(fi_eq_read(eq, &event, &entry, sizeof(entry), 0),
		  (ssize_t)sizeof(entry));
	EXPECT_EQ(event, (uint32_t)FI_NOTIFY);
	EXPECT_EQ(fi_trywait(s.fabric(), &set, 1), 0);
	EXPECT_EQ(fi_close(&eq->fid), 0);
	EXPECT_EQ(fi_close(&ws->fid), 0);
}

// A member read empty leaves the set's descriptor readable while another
// member still has something: the descriptor is the set's, not the member's.
TEST(WaitSet, ItsDescriptorStaysReadableWhileAnyMemberHasEvents)
{
	Scenario s(1, {});
	ASSERT_EQ(s.failure, "");
	FdSet set_fd;
	ASSERT_EQ(set_fd.Open(s), 0);
	fid_wait *ws = set_fd.ws;
	fid_eq *eqs[2] = {};
	fi_eq_entry entry{};
	for (fid_eq *&eq : eqs) {
		ASSERT_EQ(fi_eq_open(s.fabric(), &set_fd.eq_attr, &eq, nullptr),
			  0);
		ASSERT_EQ(fi_eq_write(eq, FI_NOTIFY, &entry, sizeof(entry), 0),
			  (ssize_t)sizeof(entry));
	}
	uint32_t event = 0;
	ASSERT_EQ(fi_eq_read(eqs[0], &event, &entry, sizeof(entry), 0),
		  (ssize_t)sizeof(entry));
	pollfd p = {set_fd.fd, POLLIN, 0};
	EXPECT_EQ(poll(&p, 1, 0), 1) << "the second EQ's event is unannounced";
	ASSERT_EQ(fi_eq_read(eqs[1], &event, &entry, sizeof(entry), 0),
		  (ssize_t)sizeof(entry));
	EXPECT_EQ(poll(&p, 1, 0), 0) << "readable with both EQs empty";
	for (fid_eq *eq : eqs)
		EXPECT_EQ(fi_close(&eq->fid), 0);
	EXPECT_EQ(fi_close(&ws->fid), 0);
}

TEST(WaitSet, FiWaitSetWithoutASetIsRefused)
{
	Scenario s(1, {});
	ASSERT_EQ(s.failure, "");
	fi_cntr_attr cattr = InSet(nullptr);
	fid_cntr *cntr = nullptr;
	EXPECT_EQ(fi_cntr_open(s.node(0).domain, &cattr, &cntr, nullptr),
		  -FI_EINVAL);
	fid_wait *ws = nullptr;
	EXPECT_EQ(OpenSet(s, FI_WAIT_MUTEX_COND, &ws), -FI_ENOSYS);
}

} // namespace
