/*
 * Single-extent placement: the seed's "single extent" table, one large
 * extent of initial_size at logical 0 (extent_size_at() gives it that
 * size), placed like contiguous; growth past it continues contiguously
 * right after it.  The pattern keeps no state and no gap: only the sizing
 * differs from contiguous.
 */
#include <errno.h>

#include "placement.h"

static int single_place(const struct layout_params *p, struct devalloc *a,
			const struct extent_map *map, uint64_t logical, uint64_t length,
			struct placement_result *out)
{
	struct placement_prev prev;
	uint64_t want = 0;
	int rc;

	if (placement_prev(map, logical, &prev))
		want = prev.device_end;
	rc = placement_alloc_after(a, want, length, &out->device);
	if (rc < 0)
		return rc;
	out->gap_device = 0;
	out->gap_length = 0;
	return 0;
}

const struct placement_ops single_ops = {
    .name = "single",
    .place = single_place,
};
