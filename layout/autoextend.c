/*
 * Autoextend planner: decides which new extents a byte range needs, asks
 * the file's placement pattern where each goes, and records them in the
 * extent map as unwritten.
 *
 * Two kinds of space are handed out.  Holes below the allocated end (left
 * by a punch) are tiled with ordinary extents from the hole's start, each
 * clipped to the hole, and the tiles the range meets are allocated.  Space
 * past the allocated end is an autoextend, as an Oracle datafile grows:
 * by whole multiples of autoextend.next, in whole extents, from the old
 * end, however far past it the write starts; so a file has no holes
 * unless someone punched them.  With autoextend.sparse a range that
 * starts past the allocated end is treated as a write into a hole that
 * runs from that end: only the extents it touches are allocated, as a
 * general-purpose file system would (next does not apply then).
 *
 * Every extent goes into the map as soon as it is placed, because the
 * next placement builds on it ("previous extent").  The new extents are
 * also listed in the plan, which doubles as the undo log: on any error
 * they are unmapped and their space and gaps returned, so a failed
 * allocation leaves map, gaps and allocator exactly as they were.  The
 * undo relies on extmap_remove() of a whole entry needing no memory.
 */
#include <errno.h>
#include <stdlib.h>

#include "autoextend.h"
#include "placement.h"

int run_vec_push(struct run_vec *rv, uint64_t device, uint64_t length)
{
	if (rv->n == rv->cap) {
		size_t cap = rv->cap ? rv->cap * 2 : 16;
		struct run *v = realloc(rv->v, cap * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		rv->v = v;
		rv->cap = cap;
	}
	rv->v[rv->n++] = (struct run){.device = device, .length = length};
	return 0;
}

void run_vec_release(struct run_vec *rv)
{
	free(rv->v);
	rv->v = NULL;
	rv->n = 0;
	rv->cap = 0;
}

void alloc_plan_release(struct alloc_plan *plan)
{
	free(plan->v);
	plan->v = NULL;
	plan->n = 0;
	plan->cap = 0;
}

static int plan_push(struct alloc_plan *plan, uint64_t logical, uint64_t device, uint64_t length,
		     unsigned flags)
{
	if (plan->n == plan->cap) {
		size_t cap = plan->cap ? plan->cap * 2 : 16;
		struct extent *v = realloc(plan->v, cap * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		plan->v = v;
		plan->cap = cap;
	}
	plan->v[plan->n++] = (struct extent){.logical = logical,
					     .device = device,
					     .length = length,
					     .dev = (flags >> 8) & 0xff,
					     .flags = flags & 0xff};
	return 0;
}

/* What one layout_allocate() call works on. */
struct planner {
	const struct file_params *fp;
	const struct placement_ops *ops;
	struct devalloc *a;
	struct extent_map *map;
	struct run_vec *gaps;
	struct alloc_plan *plan;
	unsigned dev; /* the device index new extents and gaps get */
};

static void free_run(void *opaque, unsigned dev, uint64_t device, uint64_t length)
{
	devalloc_free(opaque, device, length);
}

/* Places, maps and records one extent of @length bytes at logical @logical. */
static int add_extent(struct planner *pl, uint64_t logical, uint64_t length)
{
	const unsigned flags = EXTENT_UNWRITTEN | EXTENT_START | EXTENT_DEV(pl->dev);
	struct placement_result r = {0};
	int rc;

	rc = pl->ops->place(&pl->fp->layout, pl->a, pl->map, logical, length, &r);
	if (rc < 0)
		return rc;
	rc = extmap_insert(pl->map, logical, r.device, length, flags);
	if (rc < 0)
		goto out_space;
	rc = plan_push(pl->plan, logical, r.device, length, flags);
	if (rc < 0)
		goto out_unmap;
	if (r.gap_length > 0) {
		rc = run_vec_push(pl->gaps, r.gap_device, r.gap_length);
		if (rc < 0)
			goto out_unplan;
		pl->gaps->v[pl->gaps->n - 1].dev = pl->dev;
	}
	return 0;

out_unplan:
	pl->plan->n--;
out_unmap:
	/* free_run() returns the extent's space; only the gap is left. */
	extmap_remove(pl->map, logical, length, free_run, pl->a);
	goto out_gap;
out_space:
	devalloc_free(pl->a, r.device, length);
out_gap:
	if (r.gap_length > 0)
		devalloc_free(pl->a, r.gap_device, r.gap_length);
	return rc;
}

/* Undoes every extent and gap this call added (see the comment at the top). */
static void undo(struct planner *pl, size_t gaps_before)
{
	while (pl->plan->n > 0) {
		const struct extent *e = &pl->plan->v[--pl->plan->n];

		extmap_remove(pl->map, e->logical, e->length, free_run, pl->a);
	}
	while (pl->gaps->n > gaps_before) {
		const struct run *g = &pl->gaps->v[--pl->gaps->n];

		devalloc_free(pl->a, g->device, g->length);
	}
}

static uint64_t round_down(uint64_t x, uint64_t unit)
{
	return x / unit * unit;
}

/* Rounds up, saturating at the highest multiple of @unit. */
static uint64_t round_up(uint64_t x, uint64_t unit)
{
	uint64_t down = round_down(x, unit);

	if (down == x)
		return x;
	if (down > UINT64_MAX - unit)
		return down;
	return down + unit;
}

/*
 * A tile start at @t, moved forward to the last tile start at or before
 * @pos when the extents from @t on have a fixed size, so a write deep into
 * a large hole does not walk every tile before it.  Auto sizes walk: 199
 * tiles up to 1 GiB, 16 per GiB after that.
 */
static uint64_t skip_tiles(const struct layout_params *p, uint64_t t, uint64_t pos, uint32_t block)
{
	uint64_t size;

	if (p->extent_size == 0 || t >= pos || (t == 0 && placement_first_extent(p)) ||
	    (p->pattern && p->pattern->extent_size_at)) /* sizes vary: walk */
		return t;
	size = extent_size_at(p, t, block);
	return t + (pos - t) / size * size;
}

/*
 * Fills the holes of the map that meet [@start, @limit).  A hole is tiled
 * from its own start with extents of extent_size_at(), the last one
 * clipped to the hole, and the tiles that meet the range are allocated:
 * a small write into a large punched hole gets one ordinary extent, not an
 * extent of the write's size, so refilling a hole block by block does not
 * multiply the extent count.
 */
static int fill_holes(struct planner *pl, uint64_t start, uint64_t limit, uint32_t block)
{
	const struct layout_params *p = &pl->fp->layout;
	uint64_t pos = start;

	while (pos < limit) {
		size_t i = extmap_find(pl->map, pos);
		uint64_t hole_start, hole_end, t;

		/* limit <= extmap_end(), so some entry starts at or after pos. */
		if (i >= pl->map->n)
			break;
		if (pl->map->v[i].logical <= pos) {
			pos = pl->map->v[i].logical + pl->map->v[i].length;
			continue;
		}
		hole_start = i > 0 ? pl->map->v[i - 1].logical + pl->map->v[i - 1].length : 0;
		hole_end = pl->map->v[i].logical;
		t = hole_start;
		while (t < hole_end && t < limit) {
			uint64_t len;

			t = skip_tiles(p, t, pos, block);
			len = extent_size_at(p, t, block);

			if (len > hole_end - t)
				len = hole_end - t;
			if (t + len > pos) {
				int rc = add_extent(pl, t, len);

				if (rc < 0)
					return rc;
			}
			t += len;
		}
		pos = t;
	}
	return 0;
}

/*
 * Grows the allocation from @old_end until @target is covered, in whole
 * extents, the last one clipped at @cap.  @return the new allocated end
 * through @new_end.
 */
static int grow(struct planner *pl, uint64_t old_end, uint64_t target, uint64_t cap, uint32_t block,
		uint64_t *new_end)
{
	uint64_t pos = old_end;

	while (pos < target) {
		uint64_t len = extent_size_at(&pl->fp->layout, pos, block);
		int rc;

		if (len > cap - pos)
			len = cap - pos;
		rc = add_extent(pl, pos, len);
		if (rc < 0)
			return rc;
		pos += len;
	}
	*new_end = pos;
	return 0;
}

/*
 * Sparse growth: tiles [@old_end, ...) as fill_holes() tiles a hole, the
 * last tile clipped at @cap, and allocates the tiles that meet [@start,
 * @end); nothing before @start is allocated.
 */
static int fill_tail(struct planner *pl, uint64_t old_end, uint64_t start, uint64_t end,
		     uint64_t cap, uint32_t block)
{
	const struct layout_params *p = &pl->fp->layout;
	uint64_t t = old_end;

	while (t < end) {
		uint64_t len;
		int rc;

		t = skip_tiles(p, t, start, block);
		len = extent_size_at(p, t, block);
		if (len > cap - t)
			len = cap - t;
		if (t + len > start) {
			rc = add_extent(pl, t, len);
			if (rc < 0)
				return rc;
		}
		t += len;
	}
	return 0;
}

int layout_allocate(const struct file_params *fp, struct devalloc *a, struct extent_map *map,
		    struct run_vec *gaps, uint64_t offset, uint64_t length, struct alloc_plan *plan)
{
	return layout_allocate_on(fp, a, 0, map, gaps, offset, length, plan);
}

int layout_allocate_on(const struct file_params *fp, struct devalloc *a, unsigned dev,
		       struct extent_map *map, struct run_vec *gaps, uint64_t offset,
		       uint64_t length, struct alloc_plan *plan)
{
	const uint32_t block = devalloc_block_size(a);
	const uint64_t max_size = fp->autoextend.max_size;
	const uint64_t next = fp->autoextend.next;
	const uint64_t old_end = extmap_end(map);
	const size_t gaps_before = gaps->n;
	struct planner pl = {
	    .fp = fp,
	    .ops = placement_ops_for(fp->layout.pattern),
	    .a = a,
	    .map = map,
	    .gaps = gaps,
	    .plan = plan,
	    .dev = dev,
	};
	uint64_t start, end, cap;
	int rc;

	plan->n = 0;
	plan->extend_from = old_end;
	plan->extend_bytes = 0;
	plan->zero_fill = fp->autoextend.zero_fill;
	if (pl.ops == NULL)
		return -EINVAL;
	if (length == 0)
		return 0;
	if (offset > UINT64_MAX - length)
		return -EFBIG;
	if (max_size > 0 && offset + length > max_size)
		return -EFBIG;
	cap = max_size > 0 ? round_up(max_size, block) : round_down(UINT64_MAX, block);
	start = round_down(offset, block);
	end = round_up(offset + length, block);
	if (end < offset + length)
		return -EFBIG;

	rc = fill_holes(&pl, start, end < old_end ? end : old_end, block);
	if (rc < 0)
		goto fail;

	if (end > old_end && fp->autoextend.sparse && start > old_end) {
		/*
		 * Sparse: the space past the allocated end is tiled from that
		 * end as a hole would be, and only the tiles the range meets are
		 * allocated, so a later write into the hole continues the same
		 * tiling and the extents stay whole.
		 */
		uint64_t mapped = extmap_mapped_bytes(map);

		rc = fill_tail(&pl, old_end, start, end, cap, block);
		if (rc < 0)
			goto fail;
		plan->extend_bytes = extmap_mapped_bytes(map) - mapped;
	} else if (end > old_end) {
		uint64_t target = end, steps, added, new_end;

		if (next > 0) {
			steps = (end - old_end - 1) / next + 1;
			if (__builtin_mul_overflow(steps, next, &added) ||
			    __builtin_add_overflow(old_end, added, &target))
				target = cap;
			target = round_up(target, block);
		}
		if (target > cap)
			target = cap;
		rc = grow(&pl, old_end, target, cap, block, &new_end);
		if (rc < 0)
			goto fail;
		plan->extend_bytes = new_end - old_end;
	}
	return 0;

fail:
	undo(&pl, gaps_before);
	plan->extend_bytes = 0;
	return rc;
}
