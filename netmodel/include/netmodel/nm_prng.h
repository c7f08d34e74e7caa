/* Seeded, splittable pseudo-random streams.
 *
 * Randomness is organised as a tree of 64-bit keys: the run's seed is the root and every consumer
 * derives its own key from a path of ids, e.g. seed -> "impairment" -> link direction -> flow ->
 * purpose. Because a stream depends only on its path, adding traffic, links or other consumers
 * never shifts anybody else's random sequence.
 *
 *   nm_mix64(x)          SplitMix64's finaliser (Stafford variant 13): a bijective 64-bit mixer.
 *   nm_prng_key(p, c)    = nm_mix64(nm_mix64(p) + (c + 1) * 0x9e3779b97f4a7c15)
 *   nm_prng_at(k, i)     = nm_mix64(k + (i + 1) * 0x9e3779b97f4a7c15), i.e. the i-th output of a
 *                          SplitMix64 generator started at state k: random access by counter, used
 *                          where a decision must be tied to "the n-th packet of flow f".
 *   nm_prng              xoshiro256** seeded from a key with four nm_prng_at outputs: a fast
 *                          sequential stream for workloads and for the NIC model above.
 */
#ifndef NM_PRNG_H
#define NM_PRNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

uint64_t nm_mix64(uint64_t x);

/* Key of child `child` under key `parent`. */
uint64_t nm_prng_key(uint64_t parent, uint64_t child);

/* Key at the end of a path of ids below `seed` (depth 0 gives nm_prng_key-free seed mixing). */
uint64_t nm_prng_key_path(uint64_t seed, const uint64_t *path, size_t depth);

/* The index-th 64-bit random value of the counter-based stream `key`. */
uint64_t nm_prng_at(uint64_t key, uint64_t index);

typedef struct nm_prng {
	uint64_t s[4];
} nm_prng;

void nm_prng_seed(nm_prng *stream, uint64_t key);
uint64_t nm_prng_next(nm_prng *stream);
/* Uniform in [0, bound) without modulo bias; bound 0 returns 0. */
uint64_t nm_prng_below(nm_prng *stream, uint64_t bound);
/* Uniform double in [0, 1) with 53 random bits. */
double nm_prng_unit(nm_prng *stream);

/* A probability as a 64-bit fixed-point threshold: an event of probability p happens when a
 * uniform 64-bit value is below p * 2^64. Decisions then use integer compares only, so they are
 * identical on every machine. NM_PROB_ALWAYS stands for p = 1. */
typedef uint64_t nm_prob;
#define NM_PROB_NEVER UINT64_C(0)
#define NM_PROB_ALWAYS UINT64_MAX

/* p <= 0 gives NM_PROB_NEVER, p >= 1 gives NM_PROB_ALWAYS. */
nm_prob nm_prob_from_double(double p);

static inline bool nm_prob_hit(nm_prob p, uint64_t random)
{
	return p == NM_PROB_ALWAYS || random < p;
}

#ifdef __cplusplus
}
#endif

#endif
