/* SPDX-License-Identifier: BSD-2-Clause
 * For nic_poll_test: an event that is news for a process, as a NIC's
 * completion is (nic_internal.h is C only). */
#include "nic_poll_news.h"
#include "providers/sim/nic/nic_internal.h"

void nic_poll_news_for_me(struct nic_poll_news *news, struct nic_world *world)
{
	news->world = world;
	news->proc = nic_proc_self(world);
}

void nic_poll_news_tell(nm_engine *engine, void *ctx, uint64_t arg)
{
	struct nic_poll_news *news = ctx;

	(void)engine;
	(void)arg;
	nic_sched_posted_to(news->world, news->proc);
}
