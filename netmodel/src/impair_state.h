/* Per-link-direction impairment state (internal to the network model). */
#ifndef NM_IMPAIR_STATE_H
#define NM_IMPAIR_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netmodel/nm_error.h"
#include "netmodel/nm_impair.h"
#include "netmodel/nm_network.h"
#include "netmodel/nm_prng.h"

/* What a flow has seen on one link direction. Its packets are numbered 1, 2, ... in the order
 * they finish transmission; that number indexes every random draw for the flow. */
typedef struct flow_state {
	uint64_t flow;
	uint64_t key; /* nm_prng_key(link direction key, flow) */
	uint64_t packets;
	bool in_use;
	bool burst_bad; /* Gilbert-Elliott state */
} flow_state;

typedef struct scripted_rule {
	uint64_t flow;
	uint64_t nth;
} scripted_rule;

typedef struct impair_state {
	fs_arena *arena; /* where the tables live */
	nm_impair_params params;
	nm_prob loss;
	nm_prob corrupt;
	nm_prob duplicate;
	nm_prob reorder;
	bool burst_on;
	nm_gilbert_elliott burst;
	uint64_t key;

	flow_state *flows; /* open addressing, capacity a power of two */
	size_t flow_cap;
	size_t flow_count;

	scripted_rule *rules;
	size_t rule_count;
	size_t rule_cap;
} impair_state;

typedef struct impair_verdict {
	bool drop;
	nm_drop_reason reason;
	bool corrupt;
	bool duplicate;
	nm_time_ns extra_delay;
} impair_verdict;

/* key identifies the link direction's random streams. */
int impair_state_init(impair_state *state, fs_arena *arena, const nm_impair_params *params,
		      uint64_t key,
		      nm_error *err);
void impair_state_release(impair_state *state);
int impair_add_rule(impair_state *state, uint64_t flow, uint64_t nth);

/* Decides the fate of the next packet of `flow` on this link direction. -ENOMEM only. */
int impair_decide(impair_state *state, uint64_t flow, impair_verdict *out);

size_t impair_memory_bytes(const impair_state *state);

#endif
