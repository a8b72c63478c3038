/*
 * Reverse placement: each new extent ends directly before the previous
 * extent's device start, so a file read forward walks the device backward
 * (the worst case for a disk's readahead and for a database's sequential
 * scan).  The first extent takes the highest free place on the device;
 * when nothing fits below the previous extent the search wraps to the
 * device end.
 */
#include <errno.h>

#include "placement.h"

static int reverse_place(const struct layout_params *p, struct devalloc *a,
			 const struct extent_map *map, uint64_t logical, uint64_t length,
			 struct placement_result *out)
{
	struct placement_prev prev;
	uint64_t want_end = devalloc_size(a);
	int rc;

	if (placement_prev(map, logical, &prev))
		want_end = prev.device;
	rc = placement_alloc_before(a, want_end, length, &out->device);
	if (rc < 0)
		return rc;
	out->gap_device = 0;
	out->gap_length = 0;
	return 0;
}

const struct placement_ops reverse_ops = {
    .name = "reverse",
    .order = 5,
    .place = reverse_place,
};
PLACEMENT_REGISTER(reverse_ops);
