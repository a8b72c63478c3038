/*
 * Unit tests for the static layout score (layout/layout_score.h).  Every
 * expected value is counted by hand in the comment above its case, with
 * 4 KiB blocks.
 */
#undef NDEBUG
#include <criterion/criterion.h>

#include "layout_score.h"

#define B UINT64_C(4096)

static void stats_are(const struct layout_stats *s, uint64_t extents, uint64_t runs,
		      uint64_t blocks, uint64_t scored, uint64_t contiguous, uint64_t jump)
{
	cr_assert_eq(s->extents, extents, "extents %llu", (unsigned long long)s->extents);
	cr_assert_eq(s->runs, runs, "runs %llu", (unsigned long long)s->runs);
	cr_assert_eq(s->blocks, blocks, "blocks %llu", (unsigned long long)s->blocks);
	cr_assert_eq(s->scored, scored, "scored %llu", (unsigned long long)s->scored);
	cr_assert_eq(s->contiguous, contiguous, "contiguous %llu",
		     (unsigned long long)s->contiguous);
	cr_assert_eq(s->largest_jump, jump, "largest jump %llu",
		     (unsigned long long)s->largest_jump);
}

/* Nothing mapped: nothing scored, score 1 by convention. */
Test(layout_score, empty)
{
	struct layout_stats s;

	layout_score(NULL, 0, B, &s);
	stats_are(&s, 0, 0, 0, 0, 0, 0);
	cr_assert_eq(layout_stats_score(&s), 1.0);
}

/* One block: no block after the first, so 0 scored; score 1. */
Test(layout_score, one_block)
{
	const struct layout_extent v[] = {{0, 7 * B, B}};
	struct layout_stats s;

	layout_score(v, 1, B, &s);
	stats_are(&s, 1, 1, 1, 0, 0, 0);
	cr_assert_eq(layout_stats_score(&s), 1.0);
}

/* Three extents of 2 blocks end to end: 6 blocks, 5 scored, all 5 contiguous. */
Test(layout_score, all_contiguous)
{
	const struct layout_extent v[] = {
	    {0, 0, 2 * B}, {2 * B, 2 * B, 2 * B}, {4 * B, 4 * B, 2 * B}};
	struct layout_stats s;

	layout_score(v, 3, B, &s);
	stats_are(&s, 3, 1, 6, 5, 5, 0);
	cr_assert_eq(layout_stats_score(&s), 1.0);
}

/*
 * Four one-block extents each one block past the previous one's end:
 * 3 scored, none contiguous, 4 runs, every jump 1 block.
 */
Test(layout_score, all_scattered)
{
	const struct layout_extent v[] = {
	    {0, 0, B}, {B, 2 * B, B}, {2 * B, 4 * B, B}, {3 * B, 6 * B, B}};
	struct layout_stats s;

	layout_score(v, 4, B, &s);
	stats_are(&s, 4, 4, 4, 3, 0, B);
	cr_assert_eq(layout_stats_score(&s), 0.0);
}

/*
 * Reverse: extents of 2 blocks at device blocks 4, 2, 0.  Inside each
 * extent 1 contiguous block (3); extent 2 starts at block 2 while extent 1
 * ended at block 6 (jump 4 blocks), extent 3 at 0 while extent 2 ended at 4
 * (jump 4).  Score 3 / 5.
 */
Test(layout_score, reverse)
{
	const struct layout_extent v[] = {
	    {0, 4 * B, 2 * B}, {2 * B, 2 * B, 2 * B}, {4 * B, 0, 2 * B}};
	struct layout_stats s;

	layout_score(v, 3, B, &s);
	stats_are(&s, 3, 3, 6, 5, 3, 4 * B);
	cr_assert_eq(layout_stats_score(&s), 0.6);
}

/*
 * Holes are skipped: logical blocks 0-1 at device 0-1, a hole at logical
 * 2-3, logical 4 at device 2 (right after device 1: contiguous), logical 6
 * at device 10 (device 3 expected: jump 7 blocks).  4 blocks, 3 scored:
 * 1 inside the first extent, 1 across the hole.  Score 2 / 3, 2 runs.
 */
Test(layout_score, holes)
{
	const struct layout_extent v[] = {{0, 0, 2 * B}, {4 * B, 2 * B, B}, {6 * B, 10 * B, B}};
	struct layout_stats s;

	layout_score(v, 3, B, &s);
	stats_are(&s, 3, 2, 4, 3, 2, 7 * B);
	cr_assert_float_eq(layout_stats_score(&s), 2.0 / 3.0, 1e-12);
}

/* A partial last block counts as a block: 6000 bytes are 2 blocks, 1 scored. */
Test(layout_score, partial_block)
{
	const struct layout_extent v[] = {{0, 0, 6000}};
	struct layout_stats s;

	layout_score(v, 1, B, &s);
	stats_are(&s, 1, 1, 2, 1, 1, 0);
}

/*
 * An extent map: pieces of one allocation extent split by written state
 * are one extent (logical 0-3 at device 8-11, written then unwritten); a
 * second allocation extent at device 12 right behind it is a second extent
 * in the same run; a third at device 0 jumps back 16 blocks.
 * 4 + 2 + 1 = 7 blocks, 6 scored, 5 contiguous.
 */
Test(layout_score, extmap)
{
	struct extent_map m;
	struct layout_stats s;

	extmap_init(&m);
	cr_assert_eq(extmap_insert(&m, 0, 8 * B, 2 * B, EXTENT_START), 0);
	cr_assert_eq(extmap_insert(&m, 2 * B, 10 * B, 2 * B, EXTENT_UNWRITTEN), 0);
	cr_assert_eq(extmap_insert(&m, 4 * B, 12 * B, 2 * B, EXTENT_START), 0);
	cr_assert_eq(extmap_insert(&m, 6 * B, 0, B, EXTENT_START), 0);
	cr_assert_eq(layout_score_extmap(&m, B, &s), 0);
	stats_are(&s, 3, 2, 7, 6, 5, 14 * B);
	extmap_release(&m);
}

/* Files add up by blocks, not by averaging scores: 5/5 + 0/3 = 5/8. */
Test(layout_score, add)
{
	const struct layout_extent a[] = {{0, 0, 6 * B}};
	const struct layout_extent b[] = {
	    {0, 0, B}, {B, 2 * B, B}, {2 * B, 4 * B, B}, {3 * B, 6 * B, B}};
	struct layout_stats sa, sb;

	layout_score(a, 1, B, &sa);
	layout_score(b, 4, B, &sb);
	layout_stats_add(&sa, &sb);
	stats_are(&sa, 5, 5, 10, 8, 5, B);
	cr_assert_eq(layout_stats_score(&sa), 0.625);
}
