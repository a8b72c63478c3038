/*
 * Placement patterns: where on the device a file's next extent goes.
 *
 * One struct placement_ops per pattern, one file per pattern
 * (pattern_*.c), in the manner of nbdkit's allocator table.  A pattern
 * only decides and reserves device space; the extent map is the caller's.
 */
#ifndef SCATTERFS_PLACEMENT_H
#define SCATTERFS_PLACEMENT_H

#include <stdint.h>

#include "alloc.h"
#include "config.h"
#include "extmap.h"

/** Where a new extent went, and the gap the pattern reserved after it. */
struct placement_result {
	uint64_t device;     /* device offset of the extent */
	uint64_t gap_device; /* device offset of the reserved gap */
	uint64_t gap_length; /* bytes; 0 when the pattern keeps no gap */
};

struct config_scope; /* config_i.h */

/**
 * struct placement_ops - one placement pattern.  A pattern is one source
 * file that defines its table and registers it with PLACEMENT_REGISTER();
 * with its keys[] it needs nothing else in layout/ or fs/.
 */
struct placement_ops {
	const char *name; /* as written in [layout] pattern = */
	/*
	 * Place in every list of patterns and their keys (messages, --help,
	 * config_write_ini()): lower first; 0 = after those with one, by name.
	 * The built-in patterns use 1 to 5, their historical order.
	 */
	int order;
	/*
	 * Reserves @length bytes in @a for the extent that will map logical
	 * [@logical, @logical+@length) of the file whose current extents are
	 * @map (the new extent is not in it yet), plus any gap the pattern
	 * keeps.  "Previous extent" is the entry of @map that ends at or
	 * before @logical with the highest logical offset.
	 * Returns 0, or -ENOSPC with @a unchanged.
	 */
	int (*place)(const struct layout_params *p, struct devalloc *a,
		     const struct extent_map *map, uint64_t logical, uint64_t length,
		     struct placement_result *out);
	/*
	 * The keys only this pattern reads ([layout] section), @nkeys of them.
	 * Rows with home CONFIG_PATTERN_DATA point into the pattern's own
	 * struct of @data_size bytes (at most LAYOUT_PATTERN_DATA_MAX), which
	 * placement_data() returns.
	 */
	const struct config_key *keys;
	size_t nkeys;
	size_t data_size;
	/*
	 * Optional checks run by config_finish() on a scope (the global
	 * values or one [file] rule) whose pattern this is: @check before the
	 * block-size and device-size checks of the keys, @check_device after
	 * them.  @device: bytes, 0 when not known.  Each returns 0 or -EINVAL
	 * with @err set (config_i.h has the helpers that name the key's place).
	 */
	int (*check)(const struct config_scope *s, uint64_t device, char *err, size_t errlen);
	int (*check_device)(const struct config_scope *s, uint64_t device, char *err,
			    size_t errlen);
	/*
	 * Optional: the size in bytes of the extent at logical 0 when the
	 * pattern sizes it itself; 0 = extent_size as for any extent.
	 */
	uint64_t (*first_extent_size)(const struct layout_params *p);
};

/*
 * Registration: a pointer to each pattern's table in the linker section
 * "sfs_patterns", whose bounds the linker names __start_/__stop_.  No
 * central list, so a pattern is one new file; the layout library is linked
 * whole (layout/meson.build) so that a pattern nobody calls by name stays.
 * The linker's order is not kept: placement_at() sorts by order and name.
 */
#define PLACEMENT_REGISTER(ops)                                                                    \
	static const struct placement_ops *const placement_registered_##ops                        \
	    __attribute__((section("sfs_patterns"), used)) = &(ops)

/** placement_count() - the number of registered patterns. */
size_t placement_count(void);

/**
 * placement_at() - registered pattern @i (< placement_count()), sorted by
 * struct placement_ops.order, then name; NULL past the end.
 */
const struct placement_ops *placement_at(size_t i);

/** placement_find() - the registered pattern named @name (case-insensitive), NULL if none. */
const struct placement_ops *placement_find(const char *name);

/**
 * placement_data() - @p's slice of pattern_data, where the keys of @p's
 * pattern with home CONFIG_PATTERN_DATA live (NULL when it keeps none).
 */
const void *placement_data(const struct layout_params *p);

/**
 * placement_data_offset() - where @ops's slice starts in pattern_data, in
 * bytes.  Slices are assigned in placement_at() order, each aligned to 16.
 */
size_t placement_data_offset(const struct placement_ops *ops);

/** placement_ops_for() - the table of @p (the pattern itself; kept for callers). */
const struct placement_ops *placement_ops_for(const struct placement_ops *p);

/**
 * placement_first_extent() - the size of the extent at logical 0 that
 * @p's pattern chooses itself (single: initial_size), 0 when none.
 */
uint64_t placement_first_extent(const struct layout_params *p);

/**
 * extent_size_at() - the size in bytes of the extent that starts at logical
 * offset @logical of a file:
 * - the pattern's first_extent_size() for the extent at 0 when not 0
 *   (single: initial_size), then as below;
 * - fixed extent_size: extent_size;
 * - auto (extent_size 0), after Oracle's locally managed AUTOALLOCATE
 *   (Oracle Database Administrator's Guide, "Locally Managed Tablespaces"):
 *   64 KiB below 1 MiB, 1 MiB below 64 MiB, 8 MiB below 1 GiB, then 64 MiB.
 * Always a multiple of @block_size.
 */
uint64_t extent_size_at(const struct layout_params *p, uint64_t logical, uint32_t block_size);

/**
 * placement_random() - deterministic 64-bit pseudo-random value for the
 * extent at @logical under @seed (splitmix64 of both; Steele, Lea and
 * Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014).
 * The same on every machine.
 */
uint64_t placement_random(uint64_t seed, uint64_t logical);

/*
 * Helpers shared by the pattern implementations (defined in placement.c).
 * Added to the contract by the placement module's owner; callers outside
 * layout/ have no need for them.
 */

/** The allocation extent a new extent is placed relative to. */
struct placement_prev {
	uint64_t device;     /* device offset where that allocation extent starts */
	uint64_t device_end; /* device offset just past the previous entry */
};

/**
 * placement_prev() - the previous extent of logical offset @logical in
 * @map: the entry that ends at or before @logical with the highest logical
 * offset (extmap_prev()), widened back over the pieces of the same
 * allocation extent to its EXTENT_START entry.
 * @out: receives the device range (start of the allocation extent, end of
 *       the previous entry); untouched when there is none.
 * @return 1 when there is a previous extent, 0 when there is none.
 */
int placement_prev(const struct extent_map *map, uint64_t logical, struct placement_prev *out);

/**
 * placement_alloc_after() - reserves @len bytes at the first free run at or
 * after device offset @want; when none exists (or @want is at or past the
 * device end) it wraps and takes the first free run from device offset 0.
 * @len: bytes, > 0, a multiple of the block size.
 * @offset: receives the device offset.
 * @return 0, -ENOSPC with @a unchanged.
 */
int placement_alloc_after(struct devalloc *a, uint64_t want, uint64_t len, uint64_t *offset);

/**
 * placement_contiguous() - the contiguous pattern's place(): @length bytes
 * right after the previous extent of @logical (or from device offset 0 when
 * there is none), else the next free run after it, wrapping to 0; no gap.
 * Shared by the single-extent pattern, which differs only in sizing.
 * @return 0, -ENOSPC with @a unchanged.
 */
int placement_contiguous(const struct layout_params *p, struct devalloc *a,
			 const struct extent_map *map, uint64_t logical, uint64_t length,
			 struct placement_result *out);

/**
 * placement_alloc_before() - reserves @len bytes at the highest free run
 * that ends at or before device offset @want_end; when none exists it wraps
 * and takes the highest free run below the device end.
 * @len: bytes, > 0, a multiple of the block size.
 * @offset: receives the device offset.
 * @return 0, -ENOSPC with @a unchanged.
 */
int placement_alloc_before(struct devalloc *a, uint64_t want_end, uint64_t len, uint64_t *offset);

#endif
