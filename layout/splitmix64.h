/*
 * splitmix64 (G. L. Steele, D. Lea and C. H. Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014): a 64-bit generator with a
 * fixed sequence on every machine, for the random placement pattern, the
 * randomized tests and the benchmarks.  Header only.
 */
#ifndef SCATTERFS_SPLITMIX64_H
#define SCATTERFS_SPLITMIX64_H

#include <stdint.h>

/** The generator's increment: 2^64 divided by the golden ratio. */
#define SPLITMIX64_GAMMA UINT64_C(0x9e3779b97f4a7c15)

/** splitmix64_mix() - the output function: a bijection of 64-bit values. */
static inline uint64_t splitmix64_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/** splitmix64_next() - advances *@state by the increment and returns the next value. */
static inline uint64_t splitmix64_next(uint64_t *state)
{
	return splitmix64_mix(*state += SPLITMIX64_GAMMA);
}

#endif
