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
#include <stddef.h>

#include "config_i.h"
#include "placement.h"
#include "size.h"

/* gap 0 = auto: as large as an extent (the seed's equi-fragmented layout), 1M for auto extents. */
static uint64_t auto_gap(const struct layout_params *l, uint64_t device, uint32_t block_size)
{
	return l->extent_size ? l->extent_size : AUTO_EXTENT_STEP;
}

static const struct config_key interleaved_keys[] = {
    {"layout", "gap", CONFIG_SIZE, CONFIG_FILE_PARAMS, offsetof(struct file_params, layout.gap),
     .flags = CONFIG_BLOCK_MULTIPLE | CONFIG_WITHIN_DEVICE | CONFIG_ZERO_UNSET, .def = "0",
     .resolve_auto = auto_gap, .help = "bytes kept free after each extent; 0 = auto"},
};

static int interleaved_check(const struct config_scope *s, uint64_t device, char *err,
			     size_t errlen)
{
	return config_check_block_floor(s, config_key_id(&interleaved_keys[0]), err, errlen);
}

/* interleaved reserves an extent and its gap as one run. */
static int interleaved_check_device(const struct config_scope *s, uint64_t device, char *err,
				    size_t errlen)
{
	const struct layout_params *l = &s->fp->layout;
	uint64_t ext = l->extent_size ? l->extent_size : AUTO_FIRST_EXTENT;
	unsigned k = config_key_id(&interleaved_keys[0]);
	char at[400], lb[300], v[64], x[64], w[64];

	if (ext + l->gap <= device)
		return 0;
	config_format_value(s->c, s->fp, k, v, sizeof(v));
	config_seterr(err, errlen,
		      "%s%s gap = %s%s: pattern interleaved needs extent_size + gap (%s) within the "
		      "device (%s)",
		      config_blame(s, config_scope_wrote(s, k) ? k : K_EXTENT_SIZE, at, sizeof(at)),
		      config_label(s, k, lb, sizeof(lb)), v, config_dflt(s, k),
		      format_size(ext + l->gap, x, sizeof(x)), format_size(device, w, sizeof(w)));
	return -EINVAL;
}

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
    .order = 3,
    .place = interleaved_place,
    .keys = interleaved_keys,
    .nkeys = sizeof(interleaved_keys) / sizeof(interleaved_keys[0]),
    .check = interleaved_check,
    .check_device = interleaved_check_device,
};
PLACEMENT_REGISTER(interleaved_ops);
