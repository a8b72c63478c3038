/*
 * The layout score of Smith and Seltzer ("File System Aging — Increasing
 * the Relevance of File System Benchmarks", SIGMETRICS 1997): the fraction
 * of a file's blocks, after its first, that lie physically right after the
 * previous logical block.  1 is a perfectly contiguous file; 0 a file none
 * of whose blocks follows its predecessor.
 *
 * The static score is computed from an extent map alone (this module); the
 * dynamic one, over the blocks actually read in read order, from the
 * request log (scatterfs-report).  Both are fractions of blocks, so each
 * also returns its numerator and denominator: scores of several files are
 * combined by adding those, not by averaging the fractions.
 */
#ifndef SCATTERFS_LAYOUT_SCORE_H
#define SCATTERFS_LAYOUT_SCORE_H

#include <stddef.h>
#include <stdint.h>

#include "extmap.h"

/** One extent of a map: logical [logical, +length) at device [device, +length); bytes. */
struct layout_extent {
	uint64_t logical;
	uint64_t device;
	uint64_t length;
};

/** The static layout of one file (or, added up, of several). */
struct layout_stats {
	uint64_t extents;      /* extents of the map */
	uint64_t runs;	       /* physical runs: maximal chains of physically adjacent extents */
	uint64_t blocks;       /* mapped blocks */
	uint64_t scored;       /* blocks after the first: the score's denominator */
	uint64_t contiguous;   /* of those, blocks right after their predecessor */
	uint64_t largest_jump; /* bytes: largest |device - end of the previous extent| */
};

/**
 * layout_score() - the static layout of the @n extents at @v, which must be
 * sorted by logical offset and not overlap logically.
 *
 * Blocks are @block_size bytes (> 0); an extent of length L holds
 * ceil(L / block_size) blocks, all but its first contiguous.  The first
 * block of an extent is contiguous when the extent starts on the device
 * exactly where the previous extent (in logical order) ends.
 * Holes: a hole holds no block, so it is skipped: the block after a hole is
 * compared with the last mapped block before it (contiguous only when the
 * device offsets touch), and the hole's length counts nowhere.  Unwritten
 * extents are allocated and count as any extent.
 * Physical runs: 1 + the extent boundaries that are not contiguous (0 for
 * an empty map).  The largest jump: bytes, over those boundaries, the
 * distance from the end of the previous extent to the start of the next
 * (0 when there is none).
 * @out: zeroed, then filled.
 */
void layout_score(const struct layout_extent *v, size_t n, uint64_t block_size,
		  struct layout_stats *out);

/**
 * layout_score_extmap() - layout_score() of @m, whose pieces of one
 * allocation extent (entries split only by written state) count as one
 * extent, as extmap_write_csv() prints them.  @return 0 or -ENOMEM.
 */
int layout_score_extmap(const struct extent_map *m, uint64_t block_size, struct layout_stats *out);

/** layout_stats_add() - adds @b's counts to @a (extents, runs, blocks; largest jump = max). */
void layout_stats_add(struct layout_stats *a, const struct layout_stats *b);

/**
 * layout_stats_score() - contiguous / scored; 1.0 when nothing is scored
 * (an empty or one-block file has nothing out of place).
 */
double layout_stats_score(const struct layout_stats *s);

/**
 * layout_stats_format() - @s as one line without newline, key=value pairs
 * separated by spaces: "extents=E runs=R blocks=B scored=S contiguous=C
 * layout_score=F largest_jump=J" (F with 6 decimals, J in bytes), the line
 * scatterfs-plan and scatterfs-report --layout print.
 * @return as snprintf(3).
 */
int layout_stats_format(const struct layout_stats *s, char *buf, size_t len);

#endif
