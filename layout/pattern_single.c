/*
 * Single-extent placement: the seed's "single extent" table, one large
 * extent of initial_size at logical 0 (extent_size_at() gives it that
 * size), placed like contiguous; growth past it continues contiguously
 * right after it.  The pattern keeps no state and no gap: only the sizing
 * differs from contiguous, so it uses contiguous's place().
 */
#include "placement.h"

const struct placement_ops single_ops = {
    .name = "single",
    .place = placement_contiguous,
};
