/*
 * Whether a backing holds data (backing_scan.c): what a mount looks at
 * before it starts a new file system, or a new device, over a backing
 * that exists.
 */
#ifndef SCATTERFS_BACKING_SCAN_H
#define SCATTERFS_BACKING_SCAN_H

#include <stdbool.h>
#include <stdint.h>

/** Read whole when its data is at most this many bytes; sampled above. */
#define SCAN_WHOLE_MAX (256ull << 20)
/** Read from the start and from the end of a larger backing's data, each. */
#define SCAN_EDGE (64ull << 20)
/** Samples read between the two edges, and the bytes of each. */
#define SCAN_SAMPLES 128
#define SCAN_SAMPLE  (1ull << 20)

/**
 * backing_find_data() - looks for a non-zero byte in the backing open as
 * @fd (a regular file, or a block device when @blockdev) of @size bytes.
 *
 * The rule (README and scatterfs(1) state it): a regular file's data is
 * its data regions as SEEK_DATA and SEEK_HOLE report them (holes and
 * unwritten extents read as zeros and are not read); a block device's is
 * all of it.  Data of at most SCAN_WHOLE_MAX bytes is read whole;
 * otherwise its first and last SCAN_EDGE bytes and SCAN_SAMPLES samples of
 * SCAN_SAMPLE bytes evenly spaced between them ("first", "last" and
 * "between" count data bytes only, so a sparse file's data is read whole
 * wherever it lies when it is small enough).  Reading stops at the first
 * non-zero byte.  At most 256 MiB is read.
 *
 * @at: the backing offset of the non-zero byte found.
 * @return 1 (data found), 0 (none: the backing counts as empty), -errno.
 */
int backing_find_data(int fd, bool blockdev, uint64_t size, uint64_t *at);

#endif
