/*
 * Autoextend planner: turns "this byte range needs device space" into new
 * extents placed by the file's pattern, and tells the I/O layer what to
 * zero-fill.  The I/O itself belongs to the daemon.
 */
#ifndef SCATTERFS_AUTOEXTEND_H
#define SCATTERFS_AUTOEXTEND_H

#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "config.h"
#include "extmap.h"

struct run_vec {
	struct run *v;
	size_t n, cap;
};

/** run_vec_push() - appends a run.  @return 0, -ENOMEM. */
int run_vec_push(struct run_vec *rv, uint64_t device, uint64_t length);
/** run_vec_release() - frees the runs. */
void run_vec_release(struct run_vec *rv);

/** The outcome of layout_allocate(). */
struct alloc_plan {
	struct extent *v; /* new extents, inserted in the map as EXTENT_UNWRITTEN */
	size_t n, cap;
	uint64_t extend_from;  /* allocated end before an autoextend */
	uint64_t extend_bytes; /* bytes the autoextend added past it; 0 = none */
	enum zero_fill zero_fill; /* what the caller should do with the new extents */
};

/** alloc_plan_release() - frees the plan's array. */
void alloc_plan_release(struct alloc_plan *plan);

/**
 * layout_allocate() - makes every block of [@offset, @offset+@length) backed
 * by device space.
 *
 * Holes below the allocated end (extmap_end()) get extents of
 * extent_size_at() clipped to the hole.  Space needed past it is an
 * autoextend: the allocation grows by a multiple of autoextend.next (one
 * extent when next is 0) covering the range, in whole extents, but never
 * past autoextend.max_size (the last extent is clipped there).  With
 * autoextend.sparse, a range that starts past the allocated end gets only
 * the extents of the tiling from that end that it meets (the rest stays a
 * hole, and next does not apply).  Each new
 * extent is placed by the file's pattern, inserted into @map with
 * EXTENT_UNWRITTEN | EXTENT_START, and listed in @plan; gaps the pattern
 * reserves are appended to @gaps.
 *
 * @fp:  the file's parameters.  @a: the device allocator.
 * @return 0; -ENOSPC (device full) or -EFBIG (past max_size) or -ENOMEM, and
 * then @map, @gaps and @a are as they were.
 */
int layout_allocate(const struct file_params *fp, struct devalloc *a, struct extent_map *map,
		    struct run_vec *gaps, uint64_t offset, uint64_t length,
		    struct alloc_plan *plan);

/**
 * layout_allocate_on() - layout_allocate() on device @dev (0 to 255, the
 * dev field of struct extent and struct run): the new extents and gaps
 * carry @dev, and @a must be that device's allocator.  layout_allocate()
 * is this with @dev 0 (main).  Same return values.
 */
int layout_allocate_on(const struct file_params *fp, struct devalloc *a, unsigned dev,
		       struct extent_map *map, struct run_vec *gaps, uint64_t offset,
		       uint64_t length, struct alloc_plan *plan);

#endif
