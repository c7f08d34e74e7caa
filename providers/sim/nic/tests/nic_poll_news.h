/* SPDX-License-Identifier: BSD-2-Clause
 * For nic_poll_test: an event that is news for a process. */
#ifndef FABSIM_NIC_POLL_NEWS_H
#define FABSIM_NIC_POLL_NEWS_H
#include <stdint.h>
#include <netmodel/nm_engine.h>
#include "providers/sim/nic/nic.h"

struct nic_poll_news {
	struct nic_world *world;
	struct nic_proc  *proc;
};

/* News for the calling thread's process. */
void nic_poll_news_for_me(struct nic_poll_news *news, struct nic_world *world);
/* An event handler (ctx: the news): posts it. */
void nic_poll_news_tell(nm_engine *engine, void *ctx, uint64_t arg);
#endif
