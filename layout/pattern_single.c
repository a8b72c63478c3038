/*
 * Single-extent placement: the seed's "single extent" table, one large
 * extent of initial_size at logical 0 (extent_size_at() gives it that
 * size), placed like contiguous; growth past it continues contiguously
 * right after it.  The pattern keeps no state and no gap: only the sizing
 * differs from contiguous, so it uses contiguous's place().
 */
#include <errno.h>
#include <stddef.h>

#include "config_i.h"
#include "placement.h"

static const struct config_key single_keys[] = {
    {"layout", "initial_size", CONFIG_SIZE, CONFIG_FILE_PARAMS,
     offsetof(struct file_params, layout.initial_size),
     .flags = CONFIG_BLOCK_MULTIPLE | CONFIG_WITHIN_DEVICE | CONFIG_ZERO_UNSET, .def = "0",
     .help = "bytes of the first extent (required)"},
};

static int single_check(const struct config_scope *s, uint64_t device, char *err, size_t errlen)
{
	char at[400], lb[300];

	if (s->fp->layout.initial_size)
		return 0;
	config_seterr(err, errlen,
		      "%s%s pattern = single needs initial_size (the size of the first extent)",
		      config_where(s, K_PATTERN, at, sizeof(at)),
		      config_label(s, K_PATTERN, lb, sizeof(lb)));
	return -EINVAL;
}

static uint64_t single_first_extent(const struct layout_params *p)
{
	return p->initial_size;
}

const struct placement_ops single_ops = {
    .name = "single",
    .order = 2,
    .place = placement_contiguous,
    .keys = single_keys,
    .nkeys = sizeof(single_keys) / sizeof(single_keys[0]),
    .check = single_check,
    .first_extent_size = single_first_extent,
};
PLACEMENT_REGISTER(single_ops);
