/*
 * Random placement (the seed's "random-fragmented" table): with probability
 * layout.contiguous_ratio an extent goes directly after the previous one;
 * otherwise it starts a random distance d after the previous extent's end,
 * d uniform in [block_size, gap_max] in whole blocks.  In both cases the
 * first free run from the wanted offset is taken, wrapping to device
 * offset 0 at the device end.
 *
 * The randomness is placement_random(seed, logical): a hash, not a stream,
 * so the choice for an extent depends only on the seed and where the
 * extent starts in the file.  The same configuration and sequence of
 * growth therefore give the same map on every machine, and refilling a
 * punched hole makes the same choice as the first time.  The coin uses
 * the top 53 bits as an IEEE double in [0, 1), which is exact; the
 * distance uses a 64x64->128 bit multiply (Lemire, "Fast random integer
 * generation in an interval", 2019), integers only.
 */
#include <errno.h>

#include "placement.h"
#include "splitmix64.h"

/* A second value from the first, one splitmix64 step further. */
static uint64_t next_random(uint64_t r)
{
	return splitmix64_mix(r + SPLITMIX64_GAMMA);
}

static int random_place(const struct layout_params *p, struct devalloc *a,
			const struct extent_map *map, uint64_t logical, uint64_t length,
			struct placement_result *out)
{
	uint64_t block = devalloc_block_size(a);
	uint64_t r = placement_random(p->seed, logical);
	struct placement_prev prev;
	uint64_t want = 0;
	int rc;

	if (placement_prev(map, logical, &prev))
		want = prev.device_end;
	if ((double)(r >> 11) * 0x1p-53 >= p->contiguous_ratio) {
		uint64_t blocks = p->gap_max / block;
		uint64_t pick;

		if (blocks == 0)
			blocks = 1;
		pick = (uint64_t)(((unsigned __int128)next_random(r) * blocks) >> 64);
		want += (pick + 1) * block;
	}
	rc = placement_alloc_after(a, want, length, &out->device);
	if (rc < 0)
		return rc;
	out->gap_device = 0;
	out->gap_length = 0;
	return 0;
}

const struct placement_ops random_ops = {
    .name = "random",
    .place = random_place,
};
