/*
 * Device space allocator: which byte ranges of the backing device are in use.
 *
 * All offsets and lengths are in bytes and must be multiples of the
 * allocator's block size.  Runs never overlap.  Every operation is
 * O(log n) in the number of free runs.
 */
#ifndef SCATTERFS_ALLOC_H
#define SCATTERFS_ALLOC_H

#include <stddef.h>
#include <stdint.h>

struct devalloc;

/**
 * A device run: [device, device+length), bytes, on the backing device
 * numbered @dev (0 = main, the command line's BACKING; see fs/device.h).
 * An allocator (struct devalloc) covers one device and ignores @dev.
 */
struct run {
	uint64_t device;
	uint64_t length : 56;
	uint64_t dev : 8;
};

/**
 * devalloc_create() - an allocator over a device of @device_size bytes, all free.
 * @device_size: bytes; rounded down to a multiple of @block_size.
 * @block_size:  allocation unit in bytes, a power of two >= 512.
 * @out:         receives the allocator.
 * @return 0 on success, -EINVAL on a bad size, -ENOMEM.
 */
int devalloc_create(uint64_t device_size, uint32_t block_size, struct devalloc **out);

/**
 * devalloc_reserve_all() - marks all @n runs of @used in use at once: the
 * mount-time bulk load.  @a must have no space in use yet.  Sorts @used in
 * place by device offset (LSD radix sort, one pass per significant byte of
 * the block number) and builds the free-run treap in O(n) (Cartesian-tree
 * construction with a stack, Gabow, Bentley and Tarjan, STOC 1984), instead
 * of O(n log n) single reserves.
 * @bad:    on -EINVAL or -EEXIST receives the offending run (may be NULL).
 * @return 0; -EBUSY when @a already has space in use; -EINVAL for a run that
 * is empty, unaligned or outside the device; -EEXIST when two runs overlap;
 * -ENOMEM.  On error @a is unchanged (@used may be reordered).
 */
int devalloc_reserve_all(struct devalloc *a, struct run *used, size_t n, struct run *bad);

/** devalloc_destroy() - frees the allocator (NULL is ignored). */
void devalloc_destroy(struct devalloc *a);

/**
 * devalloc_alloc_at_or_after() - allocates @len bytes at the lowest device
 * offset >= @want where @len contiguous bytes are free.
 * @want:   wanted device offset (rounded down to a block).
 * @len:    bytes, > 0, a multiple of the block size.
 * @offset: receives the device offset of the run.
 * @return 0, -ENOSPC when no such run exists (state unchanged), -EINVAL,
 * -ENOMEM when splitting a free run needs memory (state unchanged).
 */
int devalloc_alloc_at_or_after(struct devalloc *a, uint64_t want, uint64_t len, uint64_t *offset);

/**
 * devalloc_alloc_at_or_before() - allocates @len bytes ending at the highest
 * device offset <= @want_end where @len contiguous bytes are free.
 * @want_end: wanted end offset (exclusive) of the run.
 * @return 0, -ENOSPC (state unchanged), -EINVAL, -ENOMEM (state unchanged).
 */
int devalloc_alloc_at_or_before(struct devalloc *a, uint64_t want_end, uint64_t len,
				uint64_t *offset);

/**
 * devalloc_reserve() - marks exactly [@offset, @offset+@len) as used.
 * Used when loading a catalog and for pattern gaps.
 * @return 0, -EEXIST when any byte of the range is already used (state
 * unchanged), -EINVAL when the range is unaligned or past the device end,
 * -ENOMEM (state unchanged).
 */
int devalloc_reserve(struct devalloc *a, uint64_t offset, uint64_t len);

/**
 * devalloc_is_free() - whether all of [@offset, @offset+@len) is free.
 */
int devalloc_is_free(const struct devalloc *a, uint64_t offset, uint64_t len);

/**
 * devalloc_free() - returns [@offset, @offset+@len) to the free space.
 * @return 0, -EINVAL when any byte of the range is not in use (state unchanged),
 * -ENOMEM when the range becomes a new free run and memory for it runs out
 * (state unchanged).
 */
int devalloc_free(struct devalloc *a, uint64_t offset, uint64_t len);

/** devalloc_used_bytes() - bytes in use. */
uint64_t devalloc_used_bytes(const struct devalloc *a);
/** devalloc_free_bytes() - bytes free. */
uint64_t devalloc_free_bytes(const struct devalloc *a);
/** devalloc_size() - device size in bytes (a multiple of the block size). */
uint64_t devalloc_size(const struct devalloc *a);
/** devalloc_block_size() - allocation unit in bytes. */
uint32_t devalloc_block_size(const struct devalloc *a);
/** devalloc_free_runs() - number of maximal free runs (for tests and stats). */
size_t devalloc_free_runs(const struct devalloc *a);
/** devalloc_memory_bytes() - heap bytes held by the allocator. */
size_t devalloc_memory_bytes(const struct devalloc *a);

#endif
