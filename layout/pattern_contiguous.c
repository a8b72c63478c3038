/*
 * Contiguous placement: each extent goes directly after the previous one on
 * the device, as a freshly created datafile on an empty disk would be laid
 * out.  When that space is taken (another file grew there) the extent goes
 * to the first free run after it, so a file fragments only as much as the
 * device's other tenants force it to; when nothing is free after it, the
 * search wraps to device offset 0 (first fit).
 */
#include <errno.h>

#include "placement.h"

int placement_contiguous(const struct layout_params *p, struct devalloc *a,
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

const struct placement_ops contiguous_ops = {
    .name = "contiguous",
    .order = 1,
    .place = placement_contiguous,
};
PLACEMENT_REGISTER(contiguous_ops);
