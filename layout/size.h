/* Parsing of sizes ("64K", "1M", "512") and numbers in configuration values. */
#ifndef SCATTERFS_SIZE_H
#define SCATTERFS_SIZE_H

#include <stdint.h>

/**
 * parse_size() - parses a byte count: decimal digits with an optional suffix
 * K, M, G or T (powers of 1024, case-insensitive, optional trailing 'B' or
 * 'iB').  No sign, no fraction, no surrounding garbage.
 * @return 0, -EINVAL on a malformed value, -ERANGE when it does not fit in 63 bits.
 */
int parse_size(const char *s, uint64_t *out);

/**
 * format_size() - writes @bytes as the shortest exact form ("70K", "512M",
 * "1000") into @buf of @len bytes.  @return @buf.
 */
char *format_size(uint64_t bytes, char *buf, int len);

#endif
