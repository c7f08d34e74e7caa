/* Impairments of one link direction: loss, damage, duplication, reordering.
 *
 * Every decision is taken when a packet's last bit leaves the transmitter, from counter-based
 * random values keyed by (seed, link direction, flow, purpose) and indexed by the packet's rank in
 * its flow on that link direction (see nm_prng.h). So a flow's fate depends only on its own
 * packets: unrelated traffic, and the other impairments being on or off, change nothing. */
#ifndef NM_IMPAIR_H
#define NM_IMPAIR_H

#include <stdbool.h>
#include <stdint.h>

#include "netmodel/nm_error.h"
#include "netmodel/nm_prng.h"
#include "netmodel/nm_time.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nm_impair_params {
	double loss_rate;          /* Bernoulli loss probability per packet, [0, 1] */
	double burst_loss_rate;    /* long-run fraction lost in Gilbert-Elliott bursts, [0, 1) */
	double burst_mean_length;  /* mean packets per burst, >= 1 (used when burst_loss_rate > 0) */
	double corrupt_rate;       /* probability a delivered packet is flagged NM_PKT_CORRUPTED */
	double duplicate_rate;     /* probability a packet is followed by a copy */
	double reorder_rate;       /* probability a packet is held back by reorder_delay_ns */
	nm_time_ns reorder_delay_ns;
} nm_impair_params;

/* True when any impairment is on (the model skips all per-flow state otherwise). */
bool nm_impair_params_active(const nm_impair_params *params);

/* Checks every field's range; the message names the field, its value and the allowed range. */
int nm_impair_params_check(const nm_impair_params *params, nm_error *err);

/* The two-state Gilbert-Elliott chain, evaluated once per packet before the loss decision:
 * a packet in the Bad state is lost, in the Good state it is not. The chain is parametrised by the
 * long-run loss rate r and mean burst length L:
 *     p(Bad -> Good) = 1 / L            (burst length is geometric with mean L)
 *     p(Good -> Bad) = r / (L * (1 - r)) (so the stationary Bad fraction is r)
 * which requires p(Good -> Bad) <= 1, i.e. r <= L / (L + 1). */
typedef struct nm_gilbert_elliott {
	nm_prob good_to_bad;
	nm_prob bad_to_good;
} nm_gilbert_elliott;

int nm_gilbert_elliott_from_rate(double loss_rate, double mean_burst_length,
				 nm_gilbert_elliott *out, nm_error *err);

#ifdef __cplusplus
}
#endif

#endif
