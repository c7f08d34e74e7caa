// A thread that waits outside the fabric on a futex (a semaphore, a
// condition variable) for a sibling that waits inside it: the scheduler
// takes it out of virtual time within milliseconds (nic_kernel.h), and
// brings it back as soon as the sibling changes its word — before time
// moves on — so that it acts at the instant it was woken.
#include <gtest/gtest.h>

#include <semaphore.h>

#include <atomic>
#include <chrono>
#include <thread>

extern "C" {
#include <netmodel/nm_preset.h>
#include "providers/sim/nic/nic.h"
}

namespace {

TEST(NicFutex, ASleeperWokenByASiblingActsAtTheInstantOfItsWakeUp)
{
	nm_config cfg;
	nm_error err;
	nic_transport_params tp;
	nic_world *world = nullptr;
	ASSERT_EQ(nm_preset_load(&cfg, "roce-25g", &err), 0);
	nic_transport_defaults(&tp);
	ASSERT_EQ(nic_world_create_in(nullptr, &cfg, &tp, &world, &err), 0);

	sem_t go;
	ASSERT_EQ(sem_init(&go, 0, 0), 0);
	std::atomic<nm_time_ns> seen{0};
	std::atomic<bool> entered{false};
	std::thread sleeper([&] {
		nic_world_lock(world);
		nic_sched_enter(world); // a thread of the program
		nic_world_unlock(world);
		entered = true;
		sem_wait(&go);
		// Woken, it takes a while (real time) before it calls in:
		// whatever it does then happens at the instant it was woken.
		auto until = std::chrono::steady_clock::now() +
			     std::chrono::milliseconds(100);
		while (std::chrono::steady_clock::now() < until)
			;
		nic_world_lock(world);
		nic_sched_enter(world);
		seen = nic_world_now(world);
		nic_world_unlock(world);
	});

	while (!entered)
		std::this_thread::yield();
	nic_world_lock(world);
	nic_sched_enter(world);
	// Time moves only once the sleeper is out of time (asleep on `go`).
	nic_sched_sleep(world, 1000);
	nm_time_ns posted = nic_world_now(world);
	EXPECT_GE(posted, 1000u);
	sem_post(&go);
	// A long sleep: it must not start before the sleeper has called in.
	nic_sched_sleep(world, NM_NS_PER_S);
	nic_world_unlock(world);
	sleeper.join();
	EXPECT_EQ(seen.load(), posted);
	sem_destroy(&go);
	nic_world_destroy(world);
}

} // namespace
