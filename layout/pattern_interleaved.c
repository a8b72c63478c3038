/*
 * Interleaved placement (the seed's "equi-fragmented" table): every extent
 * is followed on the device by a gap of layout.gap bytes that the file
 * keeps reserved, so no other file can use it.  The seed built this by
 * interleaving a dummy table's extents with the real table's; reserving
 * the gap gives the same physical picture without a second file.
 *
 * Extent and gap are reserved as one run, starting right after the
 * previous extent's gap, so on an empty device the device offsets step by
 * exactly extent_size + gap.  When that place is taken, the first free run
 * that holds extent and gap together is used, wrapping to device offset 0;
 * when no run on the device holds both, the extent goes alone (no gap) to
 * the first free run that holds it, the same way, before ENOSPC.
 *
 * The gap belongs to the extent it follows: whoever frees the piece of
 * the extent that ends at the gap's device offset frees the gap too (a
 * truncate or punch hole in the daemon), so a file that shrinks gives
 * back the gaps of what it lost.
 * Known weak spot: the gap is assumed to follow the previous extent with
 * the current gap size; a file whose gap setting changed between mounts
 * steps by the new size from then on.
 */
#include <errno.h>

#include "placement.h"

static int interleaved_place(const struct layout_params *p, struct devalloc *a,
			     const struct extent_map *map, uint64_t logical, uint64_t length,
			     struct placement_result *out)
{
	struct placement_prev prev;
	uint64_t want = 0;
	uint64_t run;
	int rc;

	if (placement_prev(map, logical, &prev))
		want = prev.device_end + p->gap;
	rc = placement_alloc_after(a, want, length + p->gap, &run);
	if (rc == -ENOSPC && p->gap > 0) {
		/* No run holds extent and gap: the data matters, the gap does not. */
		rc = placement_alloc_after(a, want, length, &out->device);
		out->gap_device = 0;
		out->gap_length = 0;
		return rc;
	}
	if (rc < 0)
		return rc;
	out->device = run;
	out->gap_device = p->gap > 0 ? run + length : 0;
	out->gap_length = p->gap;
	return 0;
}

const struct placement_ops interleaved_ops = {
    .name = "interleaved",
    .place = interleaved_place,
};
