/*
 * Units and rounding shared by every part of scatterfs: byte multiples
 * (powers of 1024, as the configuration's K/M/G/T suffixes), time in
 * nanoseconds, and rounding to a block.
 */
#ifndef SCATTERFS_UNITS_H
#define SCATTERFS_UNITS_H

#include <stdint.h>

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define TiB (UINT64_C(1) << 40)

#define NS_PER_US UINT64_C(1000)
#define NS_PER_MS UINT64_C(1000000)
#define NS_PER_S UINT64_C(1000000000)

/** round_down() - @x rounded down to a multiple of @unit (> 0). */
static inline uint64_t round_down(uint64_t x, uint64_t unit)
{
	return x / unit * unit;
}

/** round_up() - @x rounded up to a multiple of @unit (> 0); saturates at the largest multiple. */
static inline uint64_t round_up(uint64_t x, uint64_t unit)
{
	uint64_t r = x % unit;

	if (r == 0)
		return x;
	return x - r > UINT64_MAX - unit ? round_down(UINT64_MAX, unit) : x - r + unit;
}

/** div_round_up() - @x / @unit rounded up (@unit > 0). */
static inline uint64_t div_round_up(uint64_t x, uint64_t unit)
{
	return x / unit + (x % unit != 0);
}

#endif
