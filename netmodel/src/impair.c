/* Impairment decisions. Each purpose draws from its own counter-based stream
 *     nm_prng_at(nm_prng_key(flow key, purpose), packet number in flow)
 * and every draw is made for every packet whether or not an earlier one already dropped it, so
 * turning one impairment on or off never moves another's pattern. */
#include "impair_state.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum purpose {
	PURPOSE_LOSS = 1,
	PURPOSE_BURST = 2,
	PURPOSE_CORRUPT = 3,
	PURPOSE_DUPLICATE = 4,
	PURPOSE_REORDER = 5,
};

static int check_probability(const char *name, double value, nm_error *err)
{
	if (!(value >= 0.0 && value <= 1.0))
		return nm_error_set(err, -EINVAL, "%s: %g is out of range (allowed: 0 to 1)", name,
				    value);
	return 0;
}

int nm_impair_params_check(const nm_impair_params *p, nm_error *err)
{
	int rc;
	if ((rc = check_probability("loss.rate", p->loss_rate, err)) ||
	    (rc = check_probability("loss.corrupt_rate", p->corrupt_rate, err)) ||
	    (rc = check_probability("loss.duplicate_rate", p->duplicate_rate, err)) ||
	    (rc = check_probability("loss.reorder_rate", p->reorder_rate, err)))
		return rc;
	if (p->burst_loss_rate != 0.0) {
		nm_gilbert_elliott ge;
		return nm_gilbert_elliott_from_rate(p->burst_loss_rate, p->burst_mean_length, &ge, err);
	}
	if (!(p->burst_mean_length >= 1.0))
		return nm_error_set(err, -EINVAL,
				    "loss.burst_length: %g is out of range (allowed: >= 1 packet)",
				    p->burst_mean_length);
	return 0;
}

bool nm_impair_params_active(const nm_impair_params *p)
{
	return p->loss_rate > 0 || p->burst_loss_rate > 0 || p->corrupt_rate > 0 ||
	       p->duplicate_rate > 0 || (p->reorder_rate > 0 && p->reorder_delay_ns > 0);
}

int nm_gilbert_elliott_from_rate(double rate, double mean_len, nm_gilbert_elliott *out,
				 nm_error *err)
{
	if (!(mean_len >= 1.0) || isinf(mean_len))
		return nm_error_set(err, -EINVAL,
				    "loss.burst_length: %g is out of range (allowed: >= 1 packet)",
				    mean_len);
	double max_rate = mean_len / (mean_len + 1.0);
	if (!(rate >= 0.0 && rate <= max_rate))
		return nm_error_set(err, -EINVAL,
				    "loss.burst_rate: %g is out of range (allowed: 0 to %g for "
				    "loss.burst_length %g, i.e. L / (L + 1))",
				    rate, max_rate, mean_len);
	out->bad_to_good = nm_prob_from_double(1.0 / mean_len);
	out->good_to_bad = rate >= max_rate ? NM_PROB_ALWAYS
					    : nm_prob_from_double(rate / (mean_len * (1.0 - rate)));
	return 0;
}

int impair_state_init(impair_state *state, fs_arena *arena, const nm_impair_params *params,
		      uint64_t key, nm_error *err)
{
	memset(state, 0, sizeof(*state));
	state->arena = arena;
	int rc = nm_impair_params_check(params, err);
	if (rc)
		return rc;
	state->params = *params;
	state->key = key;
	state->loss = nm_prob_from_double(params->loss_rate);
	state->corrupt = nm_prob_from_double(params->corrupt_rate);
	state->duplicate = nm_prob_from_double(params->duplicate_rate);
	state->reorder = params->reorder_delay_ns ? nm_prob_from_double(params->reorder_rate)
						  : NM_PROB_NEVER;
	state->burst_on = params->burst_loss_rate > 0;
	if (state->burst_on)
		nm_gilbert_elliott_from_rate(params->burst_loss_rate, params->burst_mean_length,
					     &state->burst, NULL);
	return 0;
}

void impair_state_release(impair_state *state)
{
	fs_mem_free(state->arena, state->flows);
	fs_mem_free(state->arena, state->rules);
	memset(state, 0, sizeof(*state));
}

int impair_add_rule(impair_state *state, uint64_t flow, uint64_t nth)
{
	if (state->rule_count == state->rule_cap) {
		size_t cap = state->rule_cap ? state->rule_cap * 2 : 8;
		scripted_rule *rules = fs_mem_realloc(state->arena, state->rules, cap * sizeof(*rules));
		if (!rules)
			return -ENOMEM;
		state->rules = rules;
		state->rule_cap = cap;
	}
	state->rules[state->rule_count++] = (scripted_rule){.flow = flow, .nth = nth};
	return 0;
}

static flow_state *find_slot(flow_state *table, size_t cap, uint64_t flow)
{
	size_t mask = cap - 1;
	size_t i = (size_t)nm_mix64(flow) & mask;
	while (table[i].in_use && table[i].flow != flow)
		i = (i + 1) & mask;
	return &table[i];
}

static int grow_flows(impair_state *state)
{
	size_t cap = state->flow_cap ? state->flow_cap * 2 : 16;
	flow_state *table = fs_mem_calloc(state->arena, cap, sizeof(*table));
	if (!table)
		return -ENOMEM;
	for (size_t i = 0; i < state->flow_cap; i++)
		if (state->flows[i].in_use)
			*find_slot(table, cap, state->flows[i].flow) = state->flows[i];
	fs_mem_free(state->arena, state->flows);
	state->flows = table;
	state->flow_cap = cap;
	return 0;
}

/* The flow's state, created on its first packet. Lookup only: iteration order never matters. */
static flow_state *flow_lookup(impair_state *state, uint64_t flow)
{
	if (state->flow_cap == 0 || (state->flow_count + 1) * 2 > state->flow_cap)
		if (grow_flows(state) != 0)
			return NULL;
	flow_state *fs = find_slot(state->flows, state->flow_cap, flow);
	if (!fs->in_use) {
		fs->in_use = true;
		fs->flow = flow;
		fs->key = nm_prng_key(state->key, flow);
		fs->packets = 0;
		fs->burst_bad = false;
		state->flow_count++;
	}
	return fs;
}

static uint64_t draw(const flow_state *fs, enum purpose purpose)
{
	return nm_prng_at(nm_prng_key(fs->key, purpose), fs->packets);
}

static bool scripted_match(const impair_state *state, uint64_t flow, uint64_t nth)
{
	for (size_t i = 0; i < state->rule_count; i++)
		if (state->rules[i].flow == flow && state->rules[i].nth == nth)
			return true;
	return false;
}

/* One step of the Gilbert-Elliott chain; true when this packet falls in a burst. */
static bool burst_step(const impair_state *state, flow_state *fs)
{
	uint64_t u = draw(fs, PURPOSE_BURST);
	if (fs->burst_bad)
		fs->burst_bad = !nm_prob_hit(state->burst.bad_to_good, u);
	else
		fs->burst_bad = nm_prob_hit(state->burst.good_to_bad, u);
	return fs->burst_bad;
}

int impair_decide(impair_state *state, uint64_t flow, impair_verdict *out)
{
	flow_state *fs = flow_lookup(state, flow);
	if (!fs)
		return -ENOMEM;
	fs->packets++;
	memset(out, 0, sizeof(*out));

	bool scripted = state->rule_count && scripted_match(state, flow, fs->packets);
	bool lost = state->loss && nm_prob_hit(state->loss, draw(fs, PURPOSE_LOSS));
	bool burst = state->burst_on && burst_step(state, fs);
	if (scripted || lost || burst) {
		out->drop = true;
		out->reason = scripted ? NM_DROP_SCRIPTED : lost ? NM_DROP_LOSS : NM_DROP_BURST;
		return 0;
	}
	out->corrupt = state->corrupt && nm_prob_hit(state->corrupt, draw(fs, PURPOSE_CORRUPT));
	out->duplicate =
		state->duplicate && nm_prob_hit(state->duplicate, draw(fs, PURPOSE_DUPLICATE));
	if (state->reorder && nm_prob_hit(state->reorder, draw(fs, PURPOSE_REORDER)))
		out->extra_delay = state->params.reorder_delay_ns;
	return 0;
}

size_t impair_memory_bytes(const impair_state *state)
{
	return state->flow_cap * sizeof(flow_state) + state->rule_cap * sizeof(scripted_rule);
}
