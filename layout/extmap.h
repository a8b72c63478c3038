/*
 * Per-file extent map: logical offset -> device offset, sorted by logical
 * offset, non-overlapping.
 *
 * Each entry is a piece of one allocation extent.  An extent is split into
 * several entries only when part of it changes state (written / unwritten)
 * or is punched out; EXTENT_START marks the entry that begins an allocation
 * extent, so extmap_extent_count() is what a user calls "extents".
 */
#ifndef SCATTERFS_EXTMAP_H
#define SCATTERFS_EXTMAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum {
	EXTENT_UNWRITTEN = 1u << 0, /* allocated, never written: reads as zeros */
	EXTENT_START = 1u << 1,     /* first entry of an allocation extent */
};

/**
 * EXTENT_DEV() - the device index @d in the flags argument of
 * extmap_insert(): an extent lives on backing device @d (0 = main).
 */
#define EXTENT_DEV(d) ((unsigned)(d) << 8)

/**
 * One map entry: [logical, logical+length) is stored at [device,
 * device+length) of backing device @dev.
 */
struct extent {
	uint64_t logical;
	uint64_t device;
	uint64_t length : 48; /* bytes: at most 256 TiB per entry */
	uint64_t dev : 8;     /* backing device index (0 = main) */
	uint64_t flags : 8;   /* EXTENT_* */
};

enum segment_kind {
	SEG_DATA,      /* read from the device */
	SEG_UNWRITTEN, /* allocated on the device, reads as zeros */
	SEG_HOLE,      /* not allocated, reads as zeros */
};

/** One piece of a lookup result; device and dev are 0 for SEG_HOLE. */
struct segment {
	uint64_t logical;
	uint64_t device; /* device offset on backing device @dev */
	uint64_t length;
	enum segment_kind kind;
	unsigned dev; /* backing device index (0 = main) */
};

struct extent_map {
	struct extent *v; /* sorted by logical */
	size_t n, cap;
};

/** extmap_init() - an empty map. */
void extmap_init(struct extent_map *m);
/** extmap_release() - frees the entries; the map is empty afterwards. */
void extmap_release(struct extent_map *m);

/**
 * extmap_insert() - adds [@logical, +@length) -> @device with @flags
 * (EXTENT_* bits, plus EXTENT_DEV(index) for a device other than 0).
 * @return 0, -EEXIST when the logical range overlaps an entry, -EINVAL on
 * zero length, -ENOMEM.
 */
int extmap_insert(struct extent_map *m, uint64_t logical, uint64_t device, uint64_t length,
		  unsigned flags);

/**
 * extmap_lookup() - the device segments and holes of [@offset, +@length), in
 * logical order, neighbours of the same kind that are physically contiguous
 * merged into one segment.  Writes at most @max segments into @segs; never
 * allocates.
 * @return the number of segments written (>= 1 when @length > 0).  When the
 * range needs more than @max segments the last one written ends before
 * @offset+@length; call again from there.
 */
size_t extmap_lookup(const struct extent_map *m, uint64_t offset, uint64_t length,
		     struct segment *segs, size_t max);

/**
 * extmap_find() - index of the entry containing @logical, or of the first entry
 * after it (== m->n when none).  O(log n).
 */
size_t extmap_find(const struct extent_map *m, uint64_t logical);

/**
 * extmap_mark_written() - clears EXTENT_UNWRITTEN on [@offset, +@length),
 * splitting entries at the range's edges.  Holes in the range are skipped.
 * @return 0, -ENOMEM (map unchanged).
 */
int extmap_mark_written(struct extent_map *m, uint64_t offset, uint64_t length);

/**
 * extmap_mark_unwritten() - sets EXTENT_UNWRITTEN on [@offset, +@length)
 * (used by ZERO_RANGE on allocated space), splitting at the edges.
 * @return 0, -ENOMEM (map unchanged).
 */
int extmap_mark_unwritten(struct extent_map *m, uint64_t offset, uint64_t length);

/** Called with each device run that a removal frees: [@device, +@length) of device @dev. */
typedef void (*extmap_free_fn)(void *opaque, unsigned dev, uint64_t device, uint64_t length);

/**
 * extmap_remove() - unmaps [@offset, +@length) (punch hole, truncate),
 * splitting entries at the edges and calling @fn for each freed device run.
 * The piece of an extent left after a removed middle gets EXTENT_START.
 * @return 0, -ENOMEM (map unchanged).
 */
int extmap_remove(struct extent_map *m, uint64_t offset, uint64_t length, extmap_free_fn fn,
		  void *opaque);

/** extmap_end() - logical end of the last entry (0 when empty): the allocated end. */
uint64_t extmap_end(const struct extent_map *m);
/** extmap_extent_count() - number of allocation extents (entries with EXTENT_START). */
size_t extmap_extent_count(const struct extent_map *m);
/** extmap_mapped_bytes() - sum of all entry lengths. */
uint64_t extmap_mapped_bytes(const struct extent_map *m);
/** extmap_prev() - the entry that ends at or before @logical with the highest offset, or NULL. */
const struct extent *extmap_prev(const struct extent_map *m, uint64_t logical);

/**
 * extmap_write_csv() - writes the map as CSV with header
 * "logical_offset,device_offset,length", one row per allocation extent
 * (entries split only by written/unwritten state are joined).
 * @return 0, -EIO on a write error.  (In extmap_csv.c.)
 */
int extmap_write_csv(const struct extent_map *m, FILE *f);

/**
 * extmap_write_csv_devices() - extmap_write_csv(), and with more than one
 * of the @n device names (@names[dev]) a fourth column "device", the name
 * of each extent's device.  @return 0, -EIO on a write error.
 */
int extmap_write_csv_devices(const struct extent_map *m, const char *const *names, unsigned n,
			     FILE *f);

#endif
