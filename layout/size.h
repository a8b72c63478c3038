/* Parsing of sizes ("64K", "1M", "512") and numbers in configuration values. */
#ifndef SCATTERFS_SIZE_H
#define SCATTERFS_SIZE_H

#include <stddef.h>
#include <stdint.h>

/**
 * parse_size() - parses a byte count: decimal digits with an optional suffix
 * K, M, G or T, or KiB, MiB, GiB or TiB (powers of 1024, case-insensitive),
 * or a plain 'B'.  KB, MB, GB and TB (any case) are refused: they mean
 * powers of 1000 to most readers, and a size silently 7% off is worse than
 * a refusal.  No sign, no fraction, no surrounding garbage.
 * @return 0, -EINVAL on a malformed value, -ERANGE when it does not fit in 63 bits.
 */
int parse_size(const char *s, uint64_t *out);

/**
 * size_error() - why parse_size() refused @s, and what to write instead, as
 * one phrase for a message: "write 1G or 1GiB (powers of 1024); KB/MB/GB/TB
 * are not accepted" for "1GB", "not a size: no fractions (use a smaller
 * unit: 1536K, not 1.5M)" for "1.5M".
 * @rc: what parse_size() returned (-EINVAL or -ERANGE).
 * @return @buf (@len bytes).
 */
const char *size_error(const char *s, int rc, char *buf, size_t len);

/**
 * format_size() - writes @bytes as the shortest exact form ("70K", "512M",
 * "1000") into @buf of @len bytes.  @return @buf.
 */
char *format_size(uint64_t bytes, char *buf, int len);

#endif
