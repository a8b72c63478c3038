/*
 * Placement patterns: the dispatch table, extent sizing, the deterministic
 * random source and the helpers every pattern shares.
 *
 * A pattern holds no state of its own: everything it needs to decide where
 * the next extent goes is in the file's extent map (the previous extent)
 * and the device allocator (what is free).  That keeps a layout a pure
 * function of the configuration and the sequence of growth, so
 * scatterfs-plan predicts exactly what a mount will do, and a catalog
 * reloaded after a restart continues the same pattern.  The weak spot is
 * that "previous" is by logical offset: a file filled out of order (holes
 * punched and refilled) places the refill next to its logical neighbour,
 * not next to the last extent allocated.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "placement.h"
#include "registry.h"
#include "splitmix64.h"
#include "units.h"

/* The linker's bounds of the section PLACEMENT_REGISTER() fills. */
extern const struct placement_ops *const __start_sfs_patterns[];
extern const struct placement_ops *const __stop_sfs_patterns[];

size_t placement_count(void)
{
	return (size_t)(__stop_sfs_patterns - __start_sfs_patterns);
}

_Static_assert(offsetof(struct placement_ops, name) == offsetof(struct registry_head, name) &&
		       offsetof(struct placement_ops, order) == offsetof(struct registry_head, order),
	       "struct placement_ops begins as struct registry_head");

const struct placement_ops *placement_at(size_t i)
{
	return registry_at((const void *const *)__start_sfs_patterns, placement_count(), i);
}

const struct placement_ops *placement_find(const char *name)
{
	return registry_find((const void *const *)__start_sfs_patterns, placement_count(), name);
}

static size_t pattern_data_size(const void *ops)
{
	return ((const struct placement_ops *)ops)->data_size;
}

size_t placement_data_offset(const struct placement_ops *ops)
{
	return registry_data_offset((const void *const *)__start_sfs_patterns, placement_count(), ops,
				    pattern_data_size);
}

const void *placement_data(const struct layout_params *p)
{
	if (!p->pattern || !p->pattern->data_size)
		return NULL;
	return p->pattern_data + placement_data_offset(p->pattern);
}

const struct placement_ops *placement_ops_for(const struct placement_ops *p)
{
	return p;
}

uint64_t placement_first_extent(const struct layout_params *p)
{
	return p->pattern && p->pattern->first_extent_size ? p->pattern->first_extent_size(p) : 0;
}

/*
 * Oracle AUTOALLOCATE extent sizes by the logical offset the extent starts
 * at.  Each tier's start is a multiple of the size of the tier below it
 * (1M of 64K, 64M of 1M, 1G of 8M), so a file grown from 0 in auto-sized
 * extents meets every tier boundary exactly at an extent start.
 */
static uint64_t auto_extent_size(uint64_t logical)
{
	if (logical < 1 * MiB)
		return 64 * KiB;
	if (logical < 64 * MiB)
		return 1 * MiB;
	if (logical < 1 * GiB)
		return 8 * MiB;
	return 64 * MiB;
}

uint64_t extent_size_at(const struct layout_params *p, uint64_t logical, uint32_t block_size)
{
	uint64_t size;
	uint64_t first = logical == 0 ? placement_first_extent(p) : 0;

	if (first > 0)
		size = first;
	else if (p->extent_size > 0)
		size = p->extent_size;
	else
		size = auto_extent_size(logical);
	if (p->pattern && p->pattern->extent_size_at)
		size = p->pattern->extent_size_at(p, logical, size, block_size);
	if (block_size == 0)
		return size;
	return round_up(size, block_size);
}

/*
 * The first splitmix64 output of the state seed ^ mix(logical), mix being
 * splitmix64's output function (a variant of MurmurHash3's fmix64).  It is
 * a bijection with mix(0) == 0, so the extent at logical 0 gets the
 * textbook first output of @seed (0xe220a8397b1dcdaf for seed 0), and two
 * offsets of one file never share a state.  Integer arithmetic only, so
 * the value is the same on every machine.
 */
uint64_t placement_random(uint64_t seed, uint64_t logical)
{
	return splitmix64_mix((seed ^ splitmix64_mix(logical)) + SPLITMIX64_GAMMA);
}

int placement_prev(const struct extent_map *map, uint64_t logical, struct placement_prev *out)
{
	const struct extent *e = extmap_prev(map, logical);
	const struct extent *start;

	if (e == NULL)
		return 0;
	out->device_end = e->device + e->length;
	/*
	 * Pieces of one allocation extent are contiguous both logically and
	 * on the device (a split never moves data); stop at EXTENT_START or
	 * at anything that breaks that, whichever comes first.
	 */
	start = e;
	while (!(start->flags & EXTENT_START) && start > map->v) {
		const struct extent *before = start - 1;

		if (before->logical + before->length != start->logical ||
		    before->device + before->length != start->device)
			break;
		start = before;
	}
	out->device = start->device;
	return 1;
}

int placement_alloc_after(struct devalloc *a, uint64_t want, uint64_t len, uint64_t *offset)
{
	uint64_t size = devalloc_size(a);
	int rc;

	if (len == 0 || len > size)
		return -ENOSPC;
	if (want < size && want + len <= size) {
		rc = devalloc_alloc_at_or_after(a, want, len, offset);
		if (rc != -ENOSPC)
			return rc;
		if (want == 0)
			return -ENOSPC;
	}
	return devalloc_alloc_at_or_after(a, 0, len, offset);
}

int placement_alloc_before(struct devalloc *a, uint64_t want_end, uint64_t len, uint64_t *offset)
{
	uint64_t size = devalloc_size(a);
	int rc;

	if (len == 0 || len > size)
		return -ENOSPC;
	if (want_end > size)
		want_end = size;
	if (want_end >= len) {
		rc = devalloc_alloc_at_or_before(a, want_end, len, offset);
		if (rc != -ENOSPC)
			return rc;
		if (want_end == size)
			return -ENOSPC;
	}
	return devalloc_alloc_at_or_before(a, size, len, offset);
}
