/*
 * Placement patterns, extent sizing and the deterministic random source.
 *
 * The patterns are driven directly through their placement_ops (not through
 * the autoextend planner) so that a failure points at the pattern: grow()
 * appends extents of extent_size_at() at the file's end, as the planner
 * does, and inserts each into the map before the next is placed.
 */
#undef NDEBUG
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>

#include "alloc.h"
#include "extmap.h"
#include "placement.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

struct placed {
	uint64_t logical, device, length;
	uint64_t gap_device, gap_length;
};

static struct layout_params params(const struct placement_ops *pattern, uint64_t extent_size)
{
	struct layout_params p = {
	    .pattern = pattern,
	    .extent_size = extent_size,
	};
	return p;
}

static struct devalloc *new_device(uint64_t size, uint32_t block)
{
	struct devalloc *a = NULL;

	cr_assert_eq(devalloc_create(size, block, &a), 0);
	return a;
}

/*
 * Appends @n extents to @m placed by @p's pattern; records them in @out
 * (may be NULL).  @return 0, or the first error (extents before it stay).
 */
static int grow(const struct layout_params *p, struct devalloc *a, struct extent_map *m, size_t n,
		struct placed *out)
{
	const struct placement_ops *ops = placement_ops_for(p->pattern);

	for (size_t i = 0; i < n; i++) {
		uint64_t logical = extmap_end(m);
		uint64_t len = extent_size_at(p, logical, devalloc_block_size(a));
		struct placement_result r = {0};
		int rc = ops->place(p, a, m, logical, len, &r);

		if (rc < 0)
			return rc;
		cr_assert_eq(
		    extmap_insert(m, logical, r.device, len, EXTENT_UNWRITTEN | EXTENT_START), 0);
		if (out) {
			out[i].logical = logical;
			out[i].device = r.device;
			out[i].length = len;
			out[i].gap_device = r.gap_device;
			out[i].gap_length = r.gap_length;
		}
	}
	return 0;
}

static int by_device(const void *x, const void *y)
{
	const struct placed *a = x, *b = y;

	return a->device < b->device ? -1 : a->device > b->device;
}

/* Asserts that no two of the @n device runs (extents and their gaps) overlap. */
static void assert_disjoint(const struct placed *v, size_t n)
{
	struct placed *runs = calloc(2 * n, sizeof(*runs));
	size_t k = 0;

	cr_assert_not_null(runs);
	for (size_t i = 0; i < n; i++) {
		runs[k].device = v[i].device;
		runs[k++].length = v[i].length;
		if (v[i].gap_length > 0) {
			runs[k].device = v[i].gap_device;
			runs[k++].length = v[i].gap_length;
		}
	}
	qsort(runs, k, sizeof(*runs), by_device);
	for (size_t i = 1; i < k; i++)
		cr_assert_leq(runs[i - 1].device + runs[i - 1].length, runs[i].device,
			      "runs %zu and %zu overlap", i - 1, i);
	free(runs);
}

/* ---- extent_size_at() ---- */

Test(sizes, auto_boundaries)
{
	struct layout_params p = params(PATTERN_CONTIGUOUS, 0);

	cr_assert_eq(extent_size_at(&p, 0, 2048), 64 * KiB);
	cr_assert_eq(extent_size_at(&p, 1 * MiB - 64 * KiB, 2048), 64 * KiB);
	cr_assert_eq(extent_size_at(&p, 1 * MiB, 2048), 1 * MiB);
	cr_assert_eq(extent_size_at(&p, 64 * MiB - 1 * MiB, 2048), 1 * MiB);
	cr_assert_eq(extent_size_at(&p, 64 * MiB, 2048), 8 * MiB);
	cr_assert_eq(extent_size_at(&p, 1 * GiB - 8 * MiB, 2048), 8 * MiB);
	cr_assert_eq(extent_size_at(&p, 1 * GiB, 2048), 64 * MiB);
	cr_assert_eq(extent_size_at(&p, 100 * GiB, 2048), 64 * MiB);
	/* A block larger than the tier's size rounds the extent up to one block. */
	cr_assert_eq(extent_size_at(&p, 0, 1 << 20), 1 * MiB);
}

Test(sizes, auto_tiers_meet_extent_starts)
{
	struct layout_params p = params(PATTERN_CONTIGUOUS, 0);
	const uint64_t tiers[] = {1 * MiB, 64 * MiB, 1 * GiB};
	uint64_t pos = 0;
	size_t count = 0;

	while (pos < 2 * GiB) {
		uint64_t len = extent_size_at(&p, pos, 4096);

		for (size_t t = 0; t < 3; t++)
			cr_assert(!(pos < tiers[t] && pos + len > tiers[t]),
				  "extent at %llu crosses the tier boundary %llu",
				  (unsigned long long)pos, (unsigned long long)tiers[t]);
		cr_assert_eq(pos % len, 0);
		pos += len;
		count++;
	}
	cr_assert_eq(pos, 2 * GiB);
	/* 16 x 64K + 63 x 1M + 120 x 8M + 16 x 64M */
	cr_assert_eq(count, 16 + 63 + 120 + 16);
}

Test(sizes, fixed_rounds_up_to_blocks)
{
	struct layout_params p = params(PATTERN_INTERLEAVED, 70 * KiB);

	cr_assert_eq(extent_size_at(&p, 0, 2048), 71680);
	cr_assert_eq(extent_size_at(&p, 5 * GiB, 2048), 71680);
	cr_assert_eq(extent_size_at(&p, 0, 4096), 73728);
}

Test(sizes, single_initial_extent)
{
	struct layout_params p = params(PATTERN_SINGLE, 1 * MiB);

	p.initial_size = 100 * MiB;
	cr_assert_eq(extent_size_at(&p, 0, 4096), 100 * MiB);
	cr_assert_eq(extent_size_at(&p, 100 * MiB, 4096), 1 * MiB);
	p.extent_size = 0;
	cr_assert_eq(extent_size_at(&p, 0, 4096), 100 * MiB);
	cr_assert_eq(extent_size_at(&p, 100 * MiB, 4096), 8 * MiB);
	p.initial_size = 0;
	cr_assert_eq(extent_size_at(&p, 0, 4096), 64 * KiB);
	/* initial_size belongs to the single pattern only. */
	p = params(PATTERN_CONTIGUOUS, 1 * MiB);
	p.initial_size = 100 * MiB;
	cr_assert_eq(extent_size_at(&p, 0, 4096), 1 * MiB);
}

/* ---- placement_ops_for(), placement_random() ---- */

Test(ops, table)
{
	cr_assert_eq(placement_ops_for(PATTERN_CONTIGUOUS), &contiguous_ops);
	cr_assert_eq(placement_ops_for(PATTERN_SINGLE), &single_ops);
	cr_assert_eq(placement_ops_for(PATTERN_INTERLEAVED), &interleaved_ops);
	cr_assert_eq(placement_ops_for(PATTERN_RANDOM), &random_ops);
	cr_assert_eq(placement_ops_for(PATTERN_REVERSE), &reverse_ops);
	cr_assert_str_eq(contiguous_ops.name, "contiguous");
	cr_assert_str_eq(single_ops.name, "single");
	cr_assert_str_eq(interleaved_ops.name, "interleaved");
	cr_assert_str_eq(random_ops.name, "random");
	cr_assert_str_eq(reverse_ops.name, "reverse");
}

Test(random, splitmix64_values)
{
	/* The published first splitmix64 outputs for seeds 0 and 1. */
	cr_assert_eq(placement_random(0, 0), UINT64_C(0xe220a8397b1dcdaf));
	cr_assert_eq(placement_random(1, 0), UINT64_C(0x910a2dec89025cc1));
	/* Computed once with an independent Python implementation. */
	cr_assert_eq(placement_random(42, 65536), UINT64_C(0x9fffceacbc6fa224));
	cr_assert_neq(placement_random(42, 65536), placement_random(42, 131072));
	cr_assert_neq(placement_random(42, 65536), placement_random(43, 65536));
}

/* ---- placement_prev() ---- */

Test(prev, widens_to_extent_start)
{
	struct extent_map m;
	struct placement_prev pv = {0};

	extmap_init(&m);
	cr_assert_eq(placement_prev(&m, 0, &pv), 0);
	/* One allocation extent in two pieces (written head, unwritten tail). */
	cr_assert_eq(extmap_insert(&m, 0, 5 * MiB, 1 * MiB, EXTENT_START), 0);
	cr_assert_eq(extmap_insert(&m, 1 * MiB, 6 * MiB, 1 * MiB, EXTENT_UNWRITTEN), 0);
	cr_assert_eq(extmap_insert(&m, 4 * MiB, 9 * MiB, 1 * MiB, EXTENT_START), 0);
	cr_assert_eq(placement_prev(&m, 0, &pv), 0);
	cr_assert_eq(placement_prev(&m, 2 * MiB, &pv), 1);
	cr_assert_eq(pv.device, 5 * MiB);
	cr_assert_eq(pv.device_end, 7 * MiB);
	cr_assert_eq(placement_prev(&m, 3 * MiB, &pv), 1);
	cr_assert_eq(pv.device_end, 7 * MiB);
	cr_assert_eq(placement_prev(&m, 5 * MiB, &pv), 1);
	cr_assert_eq(pv.device, 9 * MiB);
	cr_assert_eq(pv.device_end, 10 * MiB);
	extmap_release(&m);
}

/* ---- contiguous and single ---- */

Test(contiguous, one_physical_run_on_empty_device)
{
	struct layout_params p = params(PATTERN_CONTIGUOUS, 0);
	struct devalloc *a = new_device(1 * GiB, 2048);
	struct extent_map m;
	struct placed v[100];
	uint64_t total = 0;

	extmap_init(&m);
	cr_assert_eq(grow(&p, a, &m, 100, v), 0);
	cr_assert_eq(v[0].device, 0);
	for (size_t i = 0; i < 100; i++) {
		if (i > 0)
			cr_assert_eq(v[i].device, v[i - 1].device + v[i - 1].length, "extent %zu",
				     i);
		cr_assert_eq(v[i].gap_length, 0);
		total += v[i].length;
	}
	/* 16 x 64K + 63 x 1M + 21 x 8M */
	cr_assert_eq(total, 16 * 64 * KiB + 63 * MiB + 21 * 8 * MiB);
	cr_assert_eq(devalloc_used_bytes(a), total);
	cr_assert_eq(devalloc_free_runs(a), 1);
	extmap_release(&m);
	devalloc_destroy(a);
}

Test(contiguous, skips_used_space_then_wraps)
{
	struct layout_params p = params(PATTERN_CONTIGUOUS, 256 * KiB);
	struct devalloc *a = new_device(1 * MiB, 4096);
	struct extent_map m;
	struct placed v[4];
	uint64_t used;

	extmap_init(&m);
	/* Another file holds [256K, 512K): the second extent goes after it. */
	cr_assert_eq(devalloc_reserve(a, 256 * KiB, 256 * KiB), 0);
	cr_assert_eq(grow(&p, a, &m, 3, v), 0);
	cr_assert_eq(v[0].device, 0);
	cr_assert_eq(v[1].device, 512 * KiB);
	cr_assert_eq(v[2].device, 768 * KiB);
	/* The other file goes away: nothing is free after the file, so it wraps to 0. */
	cr_assert_eq(devalloc_free(a, 256 * KiB, 256 * KiB), 0);
	cr_assert_eq(grow(&p, a, &m, 1, v + 3), 0);
	cr_assert_eq(v[3].device, 256 * KiB);
	/* Full: -ENOSPC, allocator unchanged. */
	used = devalloc_used_bytes(a);
	cr_assert_eq(grow(&p, a, &m, 1, NULL), -ENOSPC);
	cr_assert_eq(devalloc_used_bytes(a), used);
	extmap_release(&m);
	devalloc_destroy(a);
}

Test(contiguous, two_files_alternate)
{
	struct layout_params p = params(PATTERN_CONTIGUOUS, 1 * MiB);
	struct devalloc *a = new_device(1 * GiB, 4096);
	struct extent_map ma, mb;
	struct placed va, vb;

	extmap_init(&ma);
	extmap_init(&mb);
	for (uint64_t i = 0; i < 10; i++) {
		cr_assert_eq(grow(&p, a, &ma, 1, &va), 0);
		cr_assert_eq(grow(&p, a, &mb, 1, &vb), 0);
		cr_assert_eq(va.device, 2 * i * MiB);
		cr_assert_eq(vb.device, (2 * i + 1) * MiB);
	}
	extmap_release(&ma);
	extmap_release(&mb);
	devalloc_destroy(a);
}

Test(single, one_physical_run_on_empty_device)
{
	struct layout_params p = params(PATTERN_SINGLE, 1 * MiB);
	struct devalloc *a = new_device(1 * GiB, 4096);
	struct extent_map m;
	struct placed v[20];

	p.initial_size = 10 * MiB;
	extmap_init(&m);
	cr_assert_eq(grow(&p, a, &m, 20, v), 0);
	cr_assert_eq(v[0].device, 0);
	cr_assert_eq(v[0].length, 10 * MiB);
	for (size_t i = 1; i < 20; i++) {
		cr_assert_eq(v[i].length, 1 * MiB);
		cr_assert_eq(v[i].device, v[i - 1].device + v[i - 1].length, "extent %zu", i);
	}
	cr_assert_eq(devalloc_used_bytes(a), 29 * MiB);
	cr_assert_eq(devalloc_free_runs(a), 1);
	extmap_release(&m);
	devalloc_destroy(a);
}

/* ---- interleaved ---- */

Test(interleaved, steps_by_extent_plus_gap)
{
	struct layout_params p = params(PATTERN_INTERLEAVED, 70 * KiB);
	struct devalloc *a = new_device(1 * GiB, 2048);
	struct extent_map m;
	struct placed v[100];

	p.gap = 70 * KiB;
	extmap_init(&m);
	cr_assert_eq(grow(&p, a, &m, 100, v), 0);
	for (size_t i = 0; i < 100; i++) {
		cr_assert_eq(v[i].length, 71680);
		cr_assert_eq(v[i].device, i * 143360, "extent %zu", i);
		cr_assert_eq(v[i].gap_device, v[i].device + 71680);
		cr_assert_eq(v[i].gap_length, 71680);
		cr_assert_eq(devalloc_is_free(a, v[i].gap_device, v[i].gap_length), 0);
	}
	cr_assert_eq(devalloc_used_bytes(a), 100 * 143360);
	extmap_release(&m);
	devalloc_destroy(a);
}

Test(interleaved, gap_is_reserved_for_the_file)
{
	struct layout_params p = params(PATTERN_INTERLEAVED, 70 * KiB);
	struct layout_params other = params(PATTERN_CONTIGUOUS, 2048);
	struct devalloc *a = new_device(1 * GiB, 2048);
	struct extent_map m, mo;
	struct placed v[10], w;

	p.gap = 70 * KiB;
	extmap_init(&m);
	extmap_init(&mo);
	cr_assert_eq(grow(&p, a, &m, 10, v), 0);
	/* Another file's first fit from 0 skips every gap, though a 2K block fits in each. */
	cr_assert_eq(grow(&other, a, &mo, 1, &w), 0);
	cr_assert_eq(w.device, 10 * 143360);
	for (size_t i = 0; i < 10; i++)
		cr_assert_eq(devalloc_reserve(a, v[i].gap_device, 2048), -EEXIST);
	extmap_release(&m);
	extmap_release(&mo);
	devalloc_destroy(a);
}

Test(interleaved, two_files_do_not_overlap)
{
	struct layout_params p = params(PATTERN_INTERLEAVED, 64 * KiB);
	struct devalloc *a = new_device(1 * GiB, 4096);
	struct extent_map ma, mb;
	struct placed v[200];
	uint64_t total = 0;

	p.gap = 192 * KiB;
	extmap_init(&ma);
	extmap_init(&mb);
	for (size_t i = 0; i < 100; i++) {
		cr_assert_eq(grow(&p, a, &ma, 1, &v[2 * i]), 0);
		cr_assert_eq(grow(&p, a, &mb, 1, &v[2 * i + 1]), 0);
	}
	assert_disjoint(v, 200);
	for (size_t i = 0; i < 200; i++)
		total += v[i].length + v[i].gap_length;
	cr_assert_eq(devalloc_used_bytes(a), total);
	extmap_release(&ma);
	extmap_release(&mb);
	devalloc_destroy(a);
}

/* ---- random ---- */

#define RANDOM_EXTENTS 10000

/* Grows a file of RANDOM_EXTENTS 64K extents on a 64 GiB device. */
static void random_file(uint64_t seed, double ratio, struct placed *v)
{
	struct layout_params p = params(PATTERN_RANDOM, 64 * KiB);
	struct devalloc *a = new_device(64 * GiB, 4096);
	struct extent_map m;

	p.seed = seed;
	p.gap_max = 1 * MiB;
	p.contiguous_ratio = ratio;
	extmap_init(&m);
	cr_assert_eq(grow(&p, a, &m, RANDOM_EXTENTS, v), 0);
	extmap_release(&m);
	devalloc_destroy(a);
}

/* Share of extents that start where the previous one ends; checks jump sizes. */
static double adjacent_share(const struct placed *v)
{
	size_t adjacent = 0;

	for (size_t i = 1; i < RANDOM_EXTENTS; i++) {
		uint64_t prev_end = v[i - 1].device + v[i - 1].length;

		if (v[i].device == prev_end) {
			adjacent++;
			continue;
		}
		/* No wrap on a device this large: every jump is forward, 4K..1M. */
		cr_assert_gt(v[i].device, prev_end);
		cr_assert_leq(v[i].device - prev_end, 1 * MiB);
		cr_assert_eq((v[i].device - prev_end) % 4096, 0);
	}
	return (double)adjacent / (RANDOM_EXTENTS - 1);
}

Test(random, same_seed_same_map)
{
	struct placed *v1 = calloc(RANDOM_EXTENTS, sizeof(*v1));
	struct placed *v2 = calloc(RANDOM_EXTENTS, sizeof(*v2));
	struct placed *v3 = calloc(RANDOM_EXTENTS, sizeof(*v3));
	size_t differ = 0;

	cr_assert(v1 && v2 && v3);
	random_file(7, 0.5, v1);
	random_file(7, 0.5, v2);
	random_file(8, 0.5, v3);
	for (size_t i = 0; i < RANDOM_EXTENTS; i++) {
		cr_assert_eq(v1[i].device, v2[i].device, "extent %zu", i);
		differ += v1[i].device != v3[i].device;
	}
	cr_assert_gt(differ, 0);
	free(v1);
	free(v2);
	free(v3);
}

Test(random, contiguous_ratio_and_no_overlap)
{
	const double ratios[] = {0.0, 0.2, 0.5, 0.9, 1.0};
	struct placed *v = calloc(RANDOM_EXTENTS, sizeof(*v));

	cr_assert_not_null(v);
	for (size_t r = 0; r < sizeof(ratios) / sizeof(ratios[0]); r++) {
		double share;

		random_file(12345, ratios[r], v);
		share = adjacent_share(v);
		cr_assert(share >= ratios[r] - 0.05 && share <= ratios[r] + 0.05,
			  "ratio %.2f: adjacent share %.4f", ratios[r], share);
		assert_disjoint(v, RANDOM_EXTENTS);
		/* At the extremes the share is exact: every jump is at least a block. */
		if (ratios[r] == 0.0 || ratios[r] == 1.0)
			cr_assert_eq(share, ratios[r]);
	}
	free(v);
}

Test(random, wraps_to_device_start)
{
	struct layout_params p = params(PATTERN_RANDOM, 64 * KiB);
	struct devalloc *a = new_device(8 * MiB, 4096);
	struct extent_map m;
	struct placed v[40];
	size_t n = 0;

	p.seed = 99;
	p.gap_max = 1 * MiB;
	p.contiguous_ratio = 0.25;
	extmap_init(&m);
	/*
	 * 40 extents with jumps of ~400K on average pass the end of 8M; each
	 * extent strands less than 64K of free space, so 40 always fit.
	 */
	while (n < 40 && grow(&p, a, &m, 1, &v[n]) == 0)
		n++;
	cr_assert_eq(n, 40);
	assert_disjoint(v, n);
	size_t backwards = 0;
	for (size_t i = 1; i < n; i++)
		backwards += v[i].device < v[i - 1].device;
	cr_assert_gt(backwards, 0);
	extmap_release(&m);
	devalloc_destroy(a);
}

/* ---- reverse ---- */

Test(reverse, strictly_descends)
{
	struct layout_params p = params(PATTERN_REVERSE, 1 * MiB);
	struct devalloc *a = new_device(1 * GiB, 4096);
	struct extent_map m;
	struct placed v[50];

	extmap_init(&m);
	cr_assert_eq(grow(&p, a, &m, 50, v), 0);
	cr_assert_eq(v[0].device, 1 * GiB - 1 * MiB);
	for (size_t i = 1; i < 50; i++) {
		cr_assert_lt(v[i].device, v[i - 1].device);
		cr_assert_eq(v[i].device + v[i].length, v[i - 1].device, "extent %zu", i);
	}
	extmap_release(&m);
	devalloc_destroy(a);
}

Test(reverse, wraps_to_device_end)
{
	struct layout_params p = params(PATTERN_REVERSE, 1 * MiB);
	struct devalloc *a = new_device(4 * MiB, 4096);
	struct extent_map m;
	struct placed v[4];
	uint64_t used;

	extmap_init(&m);
	cr_assert_eq(devalloc_reserve(a, 0, 1 * MiB), 0);
	cr_assert_eq(grow(&p, a, &m, 3, v), 0);
	cr_assert_eq(v[0].device, 3 * MiB);
	cr_assert_eq(v[1].device, 2 * MiB);
	cr_assert_eq(v[2].device, 1 * MiB);
	used = devalloc_used_bytes(a);
	cr_assert_eq(grow(&p, a, &m, 1, NULL), -ENOSPC);
	cr_assert_eq(devalloc_used_bytes(a), used);
	/* Space frees up above: nothing below [1M, 2M), so the search wraps to the end. */
	cr_assert_eq(devalloc_free(a, 3 * MiB, 1 * MiB), 0);
	cr_assert_eq(grow(&p, a, &m, 1, &v[3]), 0);
	cr_assert_eq(v[3].device, 3 * MiB);
	extmap_release(&m);
	devalloc_destroy(a);
}

Test(interleaved, extent_goes_alone_when_no_run_holds_its_gap)
{
	struct layout_params p = params(PATTERN_INTERLEAVED, 1 * MiB);
	struct devalloc *a = new_device(5 * MiB, 4096);
	struct extent_map m;
	struct placed v[3];

	p.gap = 1 * MiB;
	extmap_init(&m);
	cr_assert_eq(grow(&p, a, &m, 2, v), 0);
	/* [4M, 5M) is free: too small for extent and gap, enough for the extent. */
	cr_assert_eq(grow(&p, a, &m, 1, &v[2]), 0);
	cr_assert_eq(v[2].device, 4 * MiB);
	cr_assert_eq(v[2].gap_length, 0);
	cr_assert_eq(v[2].gap_device, 0);
	cr_assert_eq(devalloc_used_bytes(a), 5 * MiB);
	/* Nothing left at all: ENOSPC. */
	cr_assert_eq(grow(&p, a, &m, 1, NULL), -ENOSPC);
	extmap_release(&m);
	devalloc_destroy(a);
}
