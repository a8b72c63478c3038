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
#include <stddef.h>

#include "config_i.h"
#include "placement.h"
#include "splitmix64.h"

/* gap_max auto = GAP_MAX_EXTENTS x extent_size. */
#define GAP_MAX_EXTENTS 64

/* gap_max 0 = auto: 64 extents (of 1M when auto), at most the device in whole blocks. */
static uint64_t auto_gap_max(const struct layout_params *l, uint64_t device, uint32_t block_size)
{
	uint64_t ext = l->extent_size ? l->extent_size : AUTO_EXTENT_STEP;
	uint64_t g = ext > UINT64_MAX / GAP_MAX_EXTENTS ? UINT64_MAX : GAP_MAX_EXTENTS * ext;

	if (device && g > device / block_size * block_size)
		g = device / block_size * block_size;
	return g;
}

static const struct config_key random_keys[] = {
    {"layout", "gap_max", CONFIG_SIZE, CONFIG_FILE_PARAMS,
     offsetof(struct file_params, layout.gap_max),
     .flags = CONFIG_BLOCK_MULTIPLE | CONFIG_WITHIN_DEVICE | CONFIG_ZERO_UNSET, .def = "0",
     .resolve_auto = auto_gap_max, .help = "largest jump in bytes; 0 = auto"},
    {"layout", "contiguous_ratio", CONFIG_DOUBLE, CONFIG_FILE_PARAMS,
     offsetof(struct file_params, layout.contiguous_ratio),
     .flags = CONFIG_HAS_MIN | CONFIG_HAS_MAX | CONFIG_WHY_ALL, .min = 0, .max = 1,
     .range_why = "must be a number from 0 to 1", .def = "0.5",
     .help = "probability that an extent follows its predecessor"},
    {"layout", "seed", CONFIG_U64, CONFIG_FILE_PARAMS, offsetof(struct file_params, layout.seed),
     .def = "1", .help = "64-bit seed of the pseudo-random sequence"},
};

static int random_check(const struct config_scope *s, uint64_t device, char *err, size_t errlen)
{
	return config_check_block_floor(s, config_key_id(&random_keys[0]), err, errlen);
}

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
    .order = 4,
    .place = random_place,
    .keys = random_keys,
    .nkeys = sizeof(random_keys) / sizeof(random_keys[0]),
    .check = random_check,
};
PLACEMENT_REGISTER(random_ops);
