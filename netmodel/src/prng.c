#include "netmodel/nm_prng.h"

#include <math.h>

/* 2^64 / golden ratio: SplitMix64's increment. */
#define GOLDEN_GAMMA UINT64_C(0x9e3779b97f4a7c15)

uint64_t nm_mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

uint64_t nm_prng_key(uint64_t parent, uint64_t child)
{
	/* Mixing the parent first makes key(p, c) and key(c, p) unrelated. */
	return nm_mix64(nm_mix64(parent) + (child + 1) * GOLDEN_GAMMA);
}

uint64_t nm_prng_key_path(uint64_t seed, const uint64_t *path, size_t depth)
{
	uint64_t key = seed;
	for (size_t i = 0; i < depth; i++)
		key = nm_prng_key(key, path[i]);
	return key;
}

uint64_t nm_prng_at(uint64_t key, uint64_t index)
{
	return nm_mix64(key + (index + 1) * GOLDEN_GAMMA);
}

void nm_prng_seed(nm_prng *stream, uint64_t key)
{
	for (int i = 0; i < 4; i++)
		stream->s[i] = nm_prng_at(key, (uint64_t)i);
	/* xoshiro's only bad state; four mix64 outputs are never all zero in practice. */
	if ((stream->s[0] | stream->s[1] | stream->s[2] | stream->s[3]) == 0)
		stream->s[0] = 1;
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t nm_prng_next(nm_prng *stream)
{
	uint64_t *s = stream->s;
	const uint64_t result = rotl(s[1] * 5, 7) * 9;
	const uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t nm_prng_below(nm_prng *stream, uint64_t bound)
{
	if (bound == 0)
		return 0;
	/* Lemire's multiply-and-reject: unbiased, usually without a division. */
	unsigned __int128 m = (unsigned __int128)nm_prng_next(stream) * bound;
	uint64_t low = (uint64_t)m;
	if (low < bound) {
		uint64_t threshold = (0 - bound) % bound;
		while (low < threshold) {
			m = (unsigned __int128)nm_prng_next(stream) * bound;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

double nm_prng_unit(nm_prng *stream)
{
	return (double)(nm_prng_next(stream) >> 11) * 0x1.0p-53;
}

nm_prob nm_prob_from_double(double p)
{
	if (!(p > 0.0))
		return NM_PROB_NEVER;
	if (p >= 1.0)
		return NM_PROB_ALWAYS;
	double scaled = ldexp(p, 64);
	/* The largest double below 2^64 still converts; anything that rounds up to 2^64 is p = 1. */
	if (scaled >= 18446744073709551616.0)
		return NM_PROB_ALWAYS;
	return (nm_prob)scaled;
}
