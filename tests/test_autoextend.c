/*
 * Autoextend planner: growth by autoextend.next in whole extents, max_size,
 * hole refill, and the all-or-nothing promise on errors.
 */
#undef NDEBUG
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>

#include "alloc.h"
#include "autoextend.h"
#include "extmap.h"
#include "placement.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

static const unsigned NEW = EXTENT_UNWRITTEN | EXTENT_START;

/* One file on one device. */
struct file {
	struct file_params fp;
	struct devalloc *a;
	struct extent_map map;
	struct run_vec gaps;
	struct alloc_plan plan;
};

static void file_open(struct file *f, struct devalloc *a, const struct placement_ops *pattern,
		      uint64_t extent_size, uint64_t next)
{
	*f = (struct file){0};
	f->fp.layout.pattern = pattern;
	f->fp.layout.extent_size = extent_size;
	f->fp.autoextend.next = next;
	f->fp.autoextend.zero_fill = ZERO_FILL_WRITE;
	f->a = a;
	extmap_init(&f->map);
}

static void file_close(struct file *f)
{
	extmap_release(&f->map);
	run_vec_release(&f->gaps);
	alloc_plan_release(&f->plan);
}

static int file_alloc(struct file *f, uint64_t offset, uint64_t length)
{
	return layout_allocate(&f->fp, f->a, &f->map, &f->gaps, offset, length, &f->plan);
}

static struct devalloc *new_device(uint64_t size, uint32_t block)
{
	struct devalloc *a = NULL;

	cr_assert_eq(devalloc_create(size, block, &a), 0);
	return a;
}

static void free_run(void *opaque, unsigned dev, uint64_t device, uint64_t length)
{
	cr_assert_eq(devalloc_free(opaque, device, length), 0);
}

static void assert_extent(const struct extent *e, uint64_t logical, uint64_t device,
			  uint64_t length)
{
	cr_assert_eq(e->logical, logical);
	cr_assert_eq(e->device, device, "extent at %llu: device %llu, expected %llu",
		     (unsigned long long)logical, (unsigned long long)e->device,
		     (unsigned long long)device);
	cr_assert_eq(e->length, length);
	cr_assert_eq(e->flags, NEW);
}

Test(autoextend, grows_by_next_in_whole_extents)
{
	struct devalloc *a = new_device(1 * GiB, 4096);
	struct file f;

	file_open(&f, a, PATTERN_CONTIGUOUS, 1 * MiB, 10 * MiB);
	f.fp.autoextend.zero_fill = ZERO_FILL_FALLOCATE;
	cr_assert_eq(file_alloc(&f, 0, 4096), 0);
	cr_assert_eq(f.plan.n, 10);
	for (size_t i = 0; i < 10; i++)
		assert_extent(&f.plan.v[i], i * MiB, i * MiB, 1 * MiB);
	cr_assert_eq(f.plan.extend_from, 0);
	cr_assert_eq(f.plan.extend_bytes, 10 * MiB);
	cr_assert_eq(f.plan.zero_fill, ZERO_FILL_FALLOCATE);
	cr_assert_eq(extmap_extent_count(&f.map), 10);
	cr_assert_eq(extmap_end(&f.map), 10 * MiB);
	cr_assert_eq(devalloc_used_bytes(a), 10 * MiB);

	/* Below the allocated end: nothing to do. */
	cr_assert_eq(file_alloc(&f, 5 * MiB, 1 * MiB), 0);
	cr_assert_eq(f.plan.n, 0);
	cr_assert_eq(f.plan.extend_from, 10 * MiB);
	cr_assert_eq(f.plan.extend_bytes, 0);

	/* The next write past the end is the next growth event. */
	cr_assert_eq(file_alloc(&f, 10 * MiB, 4096), 0);
	cr_assert_eq(f.plan.n, 10);
	assert_extent(&f.plan.v[0], 10 * MiB, 10 * MiB, 1 * MiB);
	cr_assert_eq(f.plan.extend_from, 10 * MiB);
	cr_assert_eq(f.plan.extend_bytes, 10 * MiB);
	cr_assert_eq(extmap_end(&f.map), 20 * MiB);
	file_close(&f);
	devalloc_destroy(a);
}

Test(autoextend, next_zero_is_one_extent_at_a_time)
{
	struct devalloc *a = new_device(1 * GiB, 4096);
	struct file f;

	file_open(&f, a, PATTERN_CONTIGUOUS, 1 * MiB, 0);
	cr_assert_eq(file_alloc(&f, 0, 4096), 0);
	cr_assert_eq(f.plan.n, 1);
	cr_assert_eq(f.plan.extend_bytes, 1 * MiB);
	/* Until the range is covered. */
	cr_assert_eq(file_alloc(&f, 1 * MiB, 3 * MiB), 0);
	cr_assert_eq(f.plan.n, 3);
	cr_assert_eq(f.plan.extend_from, 1 * MiB);
	cr_assert_eq(f.plan.extend_bytes, 3 * MiB);
	/* A write far past the end fills everything from the old end: no holes. */
	cr_assert_eq(file_alloc(&f, 10 * MiB, 4096), 0);
	cr_assert_eq(f.plan.n, 7);
	assert_extent(&f.plan.v[0], 4 * MiB, 4 * MiB, 1 * MiB);
	assert_extent(&f.plan.v[6], 10 * MiB, 10 * MiB, 1 * MiB);
	cr_assert_eq(f.plan.extend_bytes, 7 * MiB);
	cr_assert_eq(extmap_extent_count(&f.map), 11);
	file_close(&f);
	devalloc_destroy(a);
}

Test(autoextend, write_crossing_two_steps_grows_twice_next)
{
	struct devalloc *a = new_device(1 * GiB, 4096);
	struct file f;

	file_open(&f, a, PATTERN_CONTIGUOUS, 1 * MiB, 10 * MiB);
	cr_assert_eq(file_alloc(&f, 0, 4096), 0);
	/* [9M, 21M) passes 10M and 20M. */
	cr_assert_eq(file_alloc(&f, 9 * MiB, 12 * MiB), 0);
	cr_assert_eq(f.plan.n, 20);
	cr_assert_eq(f.plan.extend_from, 10 * MiB);
	cr_assert_eq(f.plan.extend_bytes, 20 * MiB);
	cr_assert_eq(extmap_end(&f.map), 30 * MiB);
	/* Ending exactly on a step boundary is one step. */
	cr_assert_eq(file_alloc(&f, 30 * MiB, 10 * MiB), 0);
	cr_assert_eq(f.plan.extend_bytes, 10 * MiB);
	file_close(&f);
	devalloc_destroy(a);
}

Test(autoextend, step_not_a_multiple_of_the_extent)
{
	struct devalloc *a = new_device(1 * GiB, 4096);
	struct file f;

	file_open(&f, a, PATTERN_CONTIGUOUS, 64 * KiB, 100 * KiB);
	cr_assert_eq(file_alloc(&f, 0, 4096), 0);
	cr_assert_eq(f.plan.n, 2);
	cr_assert_eq(f.plan.extend_bytes, 128 * KiB);
	cr_assert_eq(file_alloc(&f, 128 * KiB, 4096), 0);
	cr_assert_eq(f.plan.n, 2);
	cr_assert_eq(f.plan.extend_from, 128 * KiB);
	cr_assert_eq(f.plan.extend_bytes, 128 * KiB);
	file_close(&f);
	devalloc_destroy(a);
}

Test(autoextend, auto_sizes_and_single_initial_extent)
{
	struct devalloc *a = new_device(1 * GiB, 4096);
	struct file f, s;

	file_open(&f, a, PATTERN_CONTIGUOUS, 0, 0);
	cr_assert_eq(file_alloc(&f, 0, 2 * MiB), 0);
	/* 16 x 64K up to 1M, then 1M extents. */
	cr_assert_eq(f.plan.n, 17);
	assert_extent(&f.plan.v[15], 15 * 64 * KiB, 15 * 64 * KiB, 64 * KiB);
	assert_extent(&f.plan.v[16], 1 * MiB, 1 * MiB, 1 * MiB);
	cr_assert_eq(f.plan.extend_bytes, 2 * MiB);

	file_open(&s, a, PATTERN_SINGLE, 1 * MiB, 1 * MiB);
	s.fp.layout.initial_size = 10 * MiB;
	cr_assert_eq(file_alloc(&s, 0, 4096), 0);
	cr_assert_eq(s.plan.n, 1);
	assert_extent(&s.plan.v[0], 0, 2 * MiB, 10 * MiB);
	cr_assert_eq(s.plan.extend_bytes, 10 * MiB);
	cr_assert_eq(file_alloc(&s, 10 * MiB, 4096), 0);
	cr_assert_eq(s.plan.n, 1);
	assert_extent(&s.plan.v[0], 10 * MiB, 12 * MiB, 1 * MiB);
	file_close(&f);
	file_close(&s);
	devalloc_destroy(a);
}

Test(autoextend, unaligned_range_expands_to_blocks)
{
	struct devalloc *a = new_device(1 * GiB, 4096);
	struct file f;

	file_open(&f, a, PATTERN_CONTIGUOUS, 4096, 0);
	/* [5000, 8193) needs blocks [4096, 12288): 3 extents from 0. */
	cr_assert_eq(file_alloc(&f, 5000, 3193), 0);
	cr_assert_eq(f.plan.n, 3);
	cr_assert_eq(f.plan.extend_bytes, 12288);
	cr_assert_eq(file_alloc(&f, 0, 0), 0);
	cr_assert_eq(f.plan.n, 0);
	cr_assert_eq(f.plan.extend_bytes, 0);
	file_close(&f);
	devalloc_destroy(a);
}

Test(autoextend, max_size_clips_then_efbig)
{
	struct devalloc *a = new_device(1 * GiB, 4096);
	struct file f;

	file_open(&f, a, PATTERN_CONTIGUOUS, 1 * MiB, 10 * MiB);
	f.fp.autoextend.max_size = 15 * MiB;
	cr_assert_eq(file_alloc(&f, 0, 4096), 0);
	cr_assert_eq(f.plan.extend_bytes, 10 * MiB);
	/* The second step would reach 20M: clipped to 15M. */
	cr_assert_eq(file_alloc(&f, 10 * MiB, 4096), 0);
	cr_assert_eq(f.plan.n, 5);
	cr_assert_eq(f.plan.extend_bytes, 5 * MiB);
	cr_assert_eq(extmap_end(&f.map), 15 * MiB);
	/* Up to max_size is fine, past it is -EFBIG with nothing changed. */
	cr_assert_eq(file_alloc(&f, 15 * MiB - 4096, 4096), 0);
	cr_assert_eq(f.plan.n, 0);
	cr_assert_eq(file_alloc(&f, 15 * MiB, 4096), -EFBIG);
	cr_assert_eq(file_alloc(&f, 14 * MiB, 2 * MiB), -EFBIG);
	cr_assert_eq(f.plan.n, 0);
	cr_assert_eq(f.plan.extend_bytes, 0);
	cr_assert_eq(extmap_end(&f.map), 15 * MiB);
	cr_assert_eq(extmap_extent_count(&f.map), 15);
	cr_assert_eq(devalloc_used_bytes(a), 15 * MiB);
	file_close(&f);
	devalloc_destroy(a);
}

Test(autoextend, max_size_clips_the_last_extent)
{
	struct devalloc *a = new_device(1 * GiB, 4096);
	struct file f;

	file_open(&f, a, PATTERN_CONTIGUOUS, 4 * MiB, 0);
	f.fp.autoextend.max_size = 10 * MiB;
	cr_assert_eq(file_alloc(&f, 0, 10 * MiB), 0);
	cr_assert_eq(f.plan.n, 3);
	assert_extent(&f.plan.v[0], 0, 0, 4 * MiB);
	assert_extent(&f.plan.v[1], 4 * MiB, 4 * MiB, 4 * MiB);
	assert_extent(&f.plan.v[2], 8 * MiB, 8 * MiB, 2 * MiB);
	cr_assert_eq(f.plan.extend_bytes, 10 * MiB);
	file_close(&f);
	devalloc_destroy(a);
}

Test(autoextend, enospc_leaves_everything_unchanged)
{
	struct devalloc *a = new_device(12 * MiB, 4096);
	struct file f;

	file_open(&f, a, PATTERN_CONTIGUOUS, 1 * MiB, 10 * MiB);
	cr_assert_eq(file_alloc(&f, 0, 4096), 0);
	/* Two of the next ten extents fit, the third does not. */
	cr_assert_eq(file_alloc(&f, 10 * MiB, 4096), -ENOSPC);
	cr_assert_eq(f.plan.n, 0);
	cr_assert_eq(f.plan.extend_bytes, 0);
	cr_assert_eq(devalloc_used_bytes(a), 10 * MiB);
	cr_assert_eq(devalloc_free_runs(a), 1);
	cr_assert_eq(extmap_extent_count(&f.map), 10);
	cr_assert_eq(f.map.n, 10);
	cr_assert_eq(extmap_end(&f.map), 10 * MiB);
	/* Still usable: the space that is left can be had with a smaller step. */
	f.fp.autoextend.next = 2 * MiB;
	cr_assert_eq(file_alloc(&f, 10 * MiB, 4096), 0);
	cr_assert_eq(f.plan.n, 2);
	cr_assert_eq(devalloc_used_bytes(a), 12 * MiB);
	file_close(&f);
	devalloc_destroy(a);
}

Test(autoextend, enospc_returns_gaps_too)
{
	struct devalloc *a = new_device(12 * MiB, 4096);
	struct file f;

	file_open(&f, a, PATTERN_INTERLEAVED, 1 * MiB, 4 * MiB);
	f.fp.layout.gap = 1 * MiB;
	cr_assert_eq(file_alloc(&f, 0, 4096), 0);
	cr_assert_eq(f.plan.n, 4);
	cr_assert_eq(f.gaps.n, 4);
	for (size_t i = 0; i < 4; i++) {
		assert_extent(&f.plan.v[i], i * MiB, 2 * i * MiB, 1 * MiB);
		cr_assert_eq(f.gaps.v[i].device, (2 * i + 1) * MiB);
		cr_assert_eq(f.gaps.v[i].length, 1 * MiB);
	}
	cr_assert_eq(devalloc_used_bytes(a), 8 * MiB);
	/* Extent and gap need 2M each: [8M, 12M) holds two, the third fails. */
	cr_assert_eq(file_alloc(&f, 4 * MiB, 4096), -ENOSPC);
	cr_assert_eq(f.plan.n, 0);
	cr_assert_eq(f.gaps.n, 4);
	cr_assert_eq(devalloc_used_bytes(a), 8 * MiB);
	cr_assert_eq(devalloc_free_runs(a), 1);
	cr_assert_eq(devalloc_is_free(a, 8 * MiB, 4 * MiB), 1);
	cr_assert_eq(f.map.n, 4);
	cr_assert_eq(extmap_end(&f.map), 4 * MiB);
	file_close(&f);
	devalloc_destroy(a);
}

Test(autoextend, refills_a_punched_hole)
{
	struct devalloc *a = new_device(1 * GiB, 4096);
	struct file f;

	file_open(&f, a, PATTERN_CONTIGUOUS, 1 * MiB, 10 * MiB);
	cr_assert_eq(file_alloc(&f, 0, 4096), 0);
	cr_assert_eq(extmap_remove(&f.map, 3 * MiB, 1 * MiB, free_run, a), 0);
	cr_assert_eq(extmap_extent_count(&f.map), 9);
	cr_assert_eq(devalloc_used_bytes(a), 9 * MiB);

	/* An 8K write in the hole gets the whole 1M hole back, at its old place. */
	cr_assert_eq(file_alloc(&f, 3 * MiB + 8192, 8192), 0);
	cr_assert_eq(f.plan.n, 1);
	assert_extent(&f.plan.v[0], 3 * MiB, 3 * MiB, 1 * MiB);
	cr_assert_eq(f.plan.extend_from, 10 * MiB);
	cr_assert_eq(f.plan.extend_bytes, 0);
	cr_assert_eq(extmap_extent_count(&f.map), 10);
	cr_assert_eq(devalloc_used_bytes(a), 10 * MiB);

	/* A hole and an autoextend in one range. */
	cr_assert_eq(extmap_remove(&f.map, 3 * MiB, 1 * MiB, free_run, a), 0);
	cr_assert_eq(file_alloc(&f, 3 * MiB, 8 * MiB), 0);
	cr_assert_eq(f.plan.n, 11);
	assert_extent(&f.plan.v[0], 3 * MiB, 3 * MiB, 1 * MiB);
	assert_extent(&f.plan.v[1], 10 * MiB, 10 * MiB, 1 * MiB);
	cr_assert_eq(f.plan.extend_from, 10 * MiB);
	cr_assert_eq(f.plan.extend_bytes, 10 * MiB);
	file_close(&f);
	devalloc_destroy(a);
}

Test(autoextend, hole_is_tiled_from_its_start)
{
	struct devalloc *a = new_device(1 * GiB, 4096);
	struct file f;

	file_open(&f, a, PATTERN_CONTIGUOUS, 1 * MiB, 10 * MiB);
	cr_assert_eq(file_alloc(&f, 0, 4096), 0);
	/* Hole [2M, 6M) of 1M tiles; the device space [2M, 6M) is free again. */
	cr_assert_eq(extmap_remove(&f.map, 2 * MiB, 4 * MiB, free_run, a), 0);
	/* A write into the third tile maps that tile only; its previous extent ends at device 2M.
	 */
	cr_assert_eq(file_alloc(&f, 4 * MiB + 8192, 4096), 0);
	cr_assert_eq(f.plan.n, 1);
	assert_extent(&f.plan.v[0], 4 * MiB, 2 * MiB, 1 * MiB);
	/* The rest of the hole: tiles at 2M, 3M and 5M, each after its previous extent. */
	cr_assert_eq(file_alloc(&f, 2 * MiB, 8 * MiB), 0);
	cr_assert_eq(f.plan.n, 3);
	assert_extent(&f.plan.v[0], 2 * MiB, 3 * MiB, 1 * MiB);
	assert_extent(&f.plan.v[1], 3 * MiB, 4 * MiB, 1 * MiB);
	assert_extent(&f.plan.v[2], 5 * MiB, 5 * MiB, 1 * MiB);
	cr_assert_eq(f.plan.extend_bytes, 0);
	cr_assert_eq(extmap_mapped_bytes(&f.map), 10 * MiB);
	cr_assert_eq(devalloc_used_bytes(a), 10 * MiB);
	file_close(&f);
	devalloc_destroy(a);
}

Test(autoextend, hole_tiles_are_clipped_to_the_hole)
{
	struct devalloc *a = new_device(1 * GiB, 4096);
	struct file f;

	file_open(&f, a, PATTERN_CONTIGUOUS, 1 * MiB, 10 * MiB);
	cr_assert_eq(file_alloc(&f, 0, 4096), 0);
	/* Hole [3M+256K, 4M+512K): tiles of 1M from its start, the second clipped to 256K. */
	cr_assert_eq(extmap_remove(&f.map, 3 * MiB + 256 * KiB, 1 * MiB + 256 * KiB, free_run, a),
		     0);
	cr_assert_eq(file_alloc(&f, 4 * MiB + 400 * KiB, 4096), 0);
	cr_assert_eq(f.plan.n, 1);
	cr_assert_eq(f.plan.v[0].logical, 4 * MiB + 256 * KiB);
	cr_assert_eq(f.plan.v[0].length, 256 * KiB);
	cr_assert_eq(file_alloc(&f, 3 * MiB, 1 * MiB), 0);
	cr_assert_eq(f.plan.n, 1);
	cr_assert_eq(f.plan.v[0].logical, 3 * MiB + 256 * KiB);
	cr_assert_eq(f.plan.v[0].length, 1 * MiB);
	cr_assert_eq(extmap_mapped_bytes(&f.map), 10 * MiB);
	file_close(&f);
	devalloc_destroy(a);
}

Test(autoextend, auto_sized_hole_tiles)
{
	struct devalloc *a = new_device(1 * GiB, 4096);
	struct file f;

	file_open(&f, a, PATTERN_CONTIGUOUS, 0, 0);
	cr_assert_eq(file_alloc(&f, 0, 2 * MiB), 0);
	/* Hole [0, 1M) of 64K tiles; a write at 128K maps exactly the tile at 128K. */
	cr_assert_eq(extmap_remove(&f.map, 0, 1 * MiB, free_run, a), 0);
	cr_assert_eq(file_alloc(&f, 128 * KiB, 4096), 0);
	cr_assert_eq(f.plan.n, 1);
	assert_extent(&f.plan.v[0], 128 * KiB, 0, 64 * KiB);
	/* A write across a tile boundary maps both tiles. */
	cr_assert_eq(file_alloc(&f, 512 * KiB - 4096, 8192), 0);
	cr_assert_eq(f.plan.n, 2);
	cr_assert_eq(f.plan.v[0].logical, 448 * KiB);
	cr_assert_eq(f.plan.v[1].logical, 512 * KiB);
	cr_assert_eq(f.plan.v[1].length, 64 * KiB);
	cr_assert_eq(extmap_mapped_bytes(&f.map), 1 * MiB + 3 * 64 * KiB);
	file_close(&f);
	devalloc_destroy(a);
}

/* Grows two files alternately on one allocator; no device byte is used twice. */
static void two_files(const struct placement_ops *pattern)
{
	struct devalloc *a = new_device(1 * GiB, 4096);
	struct file f[2];
	struct run *runs;
	size_t n = 0, cap = 0;
	uint64_t total = 0;

	for (int k = 0; k < 2; k++) {
		file_open(&f[k], a, pattern, 64 * KiB, 192 * KiB);
		f[k].fp.layout.gap = 64 * KiB;
		f[k].fp.layout.gap_max = 256 * KiB;
		f[k].fp.layout.contiguous_ratio = 0.5;
		f[k].fp.layout.seed = 3;
		f[k].fp.layout.initial_size = 512 * KiB;
	}
	for (int round = 0; round < 50; round++)
		for (int k = 0; k < 2; k++)
			cr_assert_eq(file_alloc(&f[k], extmap_end(&f[k].map), 4096), 0);
	for (int k = 0; k < 2; k++)
		cap += f[k].map.n + f[k].gaps.n;
	runs = calloc(cap, sizeof(*runs));
	cr_assert_not_null(runs);
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < f[k].map.n; i++)
			runs[n++] = (struct run){f[k].map.v[i].device, f[k].map.v[i].length};
		for (size_t i = 0; i < f[k].gaps.n; i++)
			runs[n++] = f[k].gaps.v[i];
	}
	for (size_t i = 0; i < n; i++)
		total += runs[i].length;
	cr_assert_eq(devalloc_used_bytes(a), total);
	/* Sort by device offset (insertion sort: a few hundred runs). */
	for (size_t i = 1; i < n; i++) {
		struct run r = runs[i];
		size_t j = i;

		for (; j > 0 && runs[j - 1].device > r.device; j--)
			runs[j] = runs[j - 1];
		runs[j] = r;
	}
	for (size_t i = 1; i < n; i++)
		cr_assert_leq(runs[i - 1].device + runs[i - 1].length, runs[i].device,
			      "pattern %s: runs %zu and %zu overlap", pattern->name, i - 1, i);
	free(runs);
	for (int k = 0; k < 2; k++)
		file_close(&f[k]);
	devalloc_destroy(a);
}

Test(autoextend, two_files_do_not_overlap)
{
	two_files(PATTERN_CONTIGUOUS);
	two_files(PATTERN_SINGLE);
	two_files(PATTERN_INTERLEAVED);
	two_files(PATTERN_RANDOM);
	two_files(PATTERN_REVERSE);
}

Test(autoextend, two_contiguous_files_alternate_extents)
{
	struct devalloc *a = new_device(1 * GiB, 4096);
	struct file f[2];

	for (int k = 0; k < 2; k++)
		file_open(&f[k], a, PATTERN_CONTIGUOUS, 1 * MiB, 1 * MiB);
	for (uint64_t round = 0; round < 5; round++) {
		for (int k = 0; k < 2; k++) {
			cr_assert_eq(file_alloc(&f[k], round * MiB, 4096), 0);
			cr_assert_eq(f[k].plan.n, 1);
			assert_extent(&f[k].plan.v[0], round * MiB, (2 * round + k) * MiB, 1 * MiB);
		}
	}
	for (int k = 0; k < 2; k++)
		file_close(&f[k]);
	devalloc_destroy(a);
}

/* The equi-fragmented seed layout: 100 extents of 70K, each followed by a 70K gap. */
Test(autoextend, equi_fragmented_seed_layout)
{
	struct devalloc *a = new_device(1 * GiB, 2048);
	struct file f;

	file_open(&f, a, PATTERN_INTERLEAVED, 70 * KiB, 70 * KiB);
	f.fp.layout.gap = 70 * KiB;
	for (uint64_t off = 0; off < 7000 * KiB; off += 1 * MiB) {
		uint64_t len = 7000 * KiB - off < 1 * MiB ? 7000 * KiB - off : 1 * MiB;

		cr_assert_eq(file_alloc(&f, off, len), 0);
	}
	cr_assert_eq(f.map.n, 100);
	cr_assert_eq(f.gaps.n, 100);
	for (size_t i = 0; i < 100; i++) {
		cr_assert_eq(f.map.v[i].logical, i * 71680);
		cr_assert_eq(f.map.v[i].device, i * 143360);
		cr_assert_eq(f.map.v[i].length, 71680);
	}
	cr_assert_eq(devalloc_used_bytes(a), 100 * 143360);
	file_close(&f);
	devalloc_destroy(a);
}

Test(autoextend, sparse_write_far_past_the_end_allocates_one_extent)
{
	struct devalloc *a = new_device(64 * MiB, 4096);
	struct file f;

	file_open(&f, a, PATTERN_CONTIGUOUS, 1 * MiB, 0);
	f.fp.autoextend.sparse = true;
	cr_assert_eq(file_alloc(&f, 3 * GiB, 4096), 0);
	cr_assert_eq(f.plan.n, 1);
	assert_extent(&f.plan.v[0], 3 * GiB, 0, 1 * MiB);
	cr_assert_eq(f.plan.extend_from, 0);
	cr_assert_eq(f.plan.extend_bytes, 1 * MiB);
	cr_assert_eq(f.map.n, 1);
	cr_assert_eq(extmap_end(&f.map), 3 * GiB + 1 * MiB);
	cr_assert_eq(devalloc_used_bytes(a), 1 * MiB);
	/* A write into the hole gets the tile of the same tiling, [1M, 2M). */
	cr_assert_eq(file_alloc(&f, 1 * MiB + 8192, 4096), 0);
	cr_assert_eq(f.plan.n, 1);
	assert_extent(&f.plan.v[0], 1 * MiB, 1 * MiB, 1 * MiB);
	cr_assert_eq(f.plan.extend_bytes, 0);
	cr_assert_eq(devalloc_used_bytes(a), 2 * MiB);
	file_close(&f);
	devalloc_destroy(a);
}

Test(autoextend, sparse_tiles_from_the_allocated_end)
{
	struct devalloc *a = new_device(64 * MiB, 4096);
	struct file f;

	file_open(&f, a, PATTERN_CONTIGUOUS, 64 * KiB, 0);
	f.fp.autoextend.sparse = true;
	cr_assert_eq(file_alloc(&f, 0, 4096), 0);
	/* From the allocated end 64K, tiles of 64K: [192K, 256K) holds 200K. */
	cr_assert_eq(file_alloc(&f, 200 * KiB, 4096), 0);
	cr_assert_eq(f.plan.n, 1);
	assert_extent(&f.plan.v[0], 192 * KiB, 64 * KiB, 64 * KiB);
	cr_assert_eq(f.plan.extend_from, 64 * KiB);
	cr_assert_eq(f.plan.extend_bytes, 64 * KiB);
	/* A write that starts at the allocated end is an append: next applies. */
	f.fp.autoextend.next = 128 * KiB;
	cr_assert_eq(file_alloc(&f, 256 * KiB, 4096), 0);
	cr_assert_eq(f.plan.n, 2);
	cr_assert_eq(f.plan.extend_bytes, 128 * KiB);
	file_close(&f);
	devalloc_destroy(a);
}

Test(autoextend, datafile_write_far_past_the_end_fills_up_to_it)
{
	struct devalloc *a = new_device(64 * MiB, 4096);
	struct file f;

	file_open(&f, a, PATTERN_CONTIGUOUS, 1 * MiB, 0);
	cr_assert_eq(file_alloc(&f, 32 * MiB, 4096), 0);
	cr_assert_eq(f.plan.n, 33);
	cr_assert_eq(f.plan.extend_bytes, 33 * MiB);
	cr_assert_eq(file_alloc(&f, 3 * GiB, 4096), -ENOSPC);
	file_close(&f);
	devalloc_destroy(a);
}
