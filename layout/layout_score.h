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

#include <stdbool.h>
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

/**
 * layout_extents_of() - @m's extents (on device @dev only, or all when
 * @dev < 0; with @written, only the pieces written, not those allocated
 * and never written, which read as zeros without a device read) as a
 * malloc'ed vector in *@out of *@n entries, pieces of one
 * allocation extent joined as layout_score_extmap() joins them; free() it.
 * @return 0 or -ENOMEM.
 */
int layout_extents_of(const struct extent_map *m, int dev, bool written, struct layout_extent **out,
		      size_t *n);

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

/*
 * The flash layout score: on a flash drive the pages of a file that lie on
 * different dies are read in parallel, those on one die one after the
 * other, and which die holds a page depends on when it was written (the
 * FTL's write order), not on its address.  The score is the share of a
 * file's logically adjacent page pairs that sit on different dies: 1 when
 * every neighbour can be read in parallel, 0 when the whole file is on one
 * die.  It looks at neighbours only: a file whose pages alternate between
 * two dies of four scores 1, though a read of four pages collides on both.
 */

/** The flash layout of one file (or, added up, of several); counts of flash pages. */
struct flash_stats {
	uint64_t pages; /* flash pages holding the file's data (the model maps them to a die) */
	uint64_t pairs; /* pairs of those pages next to each other in logical order */
	uint64_t apart; /* of those, pairs on different dies: the score's numerator */
};

/** The die holding the flash page with byte @device_offset; -1 when it holds no data. */
typedef int (*flash_die_fn)(void *ctx, uint64_t device_offset);

/**
 * flash_score() - the flash layout of the @n extents at @v (sorted by
 * logical offset, not overlapping) on a drive of @page_size-byte flash
 * pages (> 0) whose dies @die_of gives.
 *
 * The file's flash pages, in logical order, are those its extents cover
 * (its written ones: an allocated piece never written reads as zeros
 * without a device read, so the callers leave it out)
 * on the device (device offset / page_size, a page an extent covers only
 * in part included); a page met twice in a row (two extents in one page)
 * counts once.  A page the drive holds no data for (@die_of < 0: never
 * written, or trimmed) costs no flash read and is left out, as layout_score()
 * leaves out holes: the pages on either side of it form the pair.
 * @out: zeroed, then filled.
 */
void flash_score(const struct layout_extent *v, size_t n, uint64_t page_size, flash_die_fn die_of,
		 void *ctx, struct flash_stats *out);

/** flash_stats_add() - adds @b's counts to @a. */
void flash_stats_add(struct flash_stats *a, const struct flash_stats *b);

/** flash_stats_score() - apart / pairs; 1.0 when there is no pair. */
double flash_stats_score(const struct flash_stats *s);

/**
 * flash_stats_format() - @s as " flash_pages=P flash_pairs=N flash_apart=A
 * flash_score=F" (a leading space, F with 6 decimals), what layout/PATH
 * appends to layout_stats_format()'s line on a device with a flash model.
 * @return as snprintf(3).
 */
int flash_stats_format(const struct flash_stats *s, char *buf, size_t len);

#endif
