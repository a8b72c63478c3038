/*
 * A throw-away placement pattern, built only for the tests (test_newpattern
 * and the scatterfs-stripe daemon of tests/mount/newpattern.sh): it proves
 * that a pattern with a key of its own is one source file, with no edit
 * anywhere in layout/ or fs/.
 *
 * "stripe" cuts the device into layout.stripes equal zones (whole blocks)
 * and deals a file's extents round-robin over them, the way a RAID-0 set
 * deals chunks over its members: extent i (i = logical / extent_size) goes
 * to zone i mod stripes, at (i / stripes) extents from the zone's start.
 * When that place is taken, the first free run after it is used, wrapping
 * to device offset 0.  Weak spot: with auto extent sizes, i counts extents
 * of the current one's size, so zones fill unevenly.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "config_i.h"
#include "placement.h"

/* The pattern's own keys, in its slice of layout_params.pattern_data. */
struct stripe_params {
	uint32_t stripes; /* zones, 1 to 64 */
};
_Static_assert(sizeof(struct stripe_params) <= LAYOUT_PATTERN_DATA_MAX,
	       "stripe_params must fit pattern_data");

static const struct config_key stripe_keys[] = {
    {"layout", "stripes", CONFIG_U32, CONFIG_PATTERN_DATA, offsetof(struct stripe_params, stripes),
     .flags = CONFIG_HAS_MIN | CONFIG_HAS_MAX | CONFIG_WHY_ALL, .min = 1, .max = 64,
     .range_why = "must be a whole number from 1 to 64", .def = "4",
     .help = "zones the extents are dealt over"},
};

extern const struct placement_ops stripe_ops;

static int stripe_place(const struct layout_params *p, struct devalloc *a,
			const struct extent_map *map, uint64_t logical, uint64_t length,
			struct placement_result *out)
{
	const struct stripe_params *sp = placement_data(p);
	uint64_t block = devalloc_block_size(a);
	uint64_t zone = devalloc_size(a) / sp->stripes / block * block;
	uint64_t i = logical / (p->extent_size ? p->extent_size : length);
	int rc;

	rc = placement_alloc_after(a, (i % sp->stripes) * zone + (i / sp->stripes) * length, length,
				   &out->device);
	if (rc < 0)
		return rc;
	out->gap_device = 0;
	out->gap_length = 0;
	return 0;
}

const struct placement_ops stripe_ops = {
    .name = "stripe",
    .place = stripe_place,
    .keys = stripe_keys,
    .nkeys = sizeof(stripe_keys) / sizeof(stripe_keys[0]),
    .data_size = sizeof(struct stripe_params),
};
PLACEMENT_REGISTER(stripe_ops);
