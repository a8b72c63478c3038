/*
 * Byte counts as users write them in configuration files and on the command
 * line: "70K", "512M", "2GiB", "4096".
 *
 * No data structure: a hand-written scanner rather than strtoull(), because
 * strtoull() accepts a sign ("-1" wraps to 2^64-1), leading blanks and a
 * base prefix, all of which would turn a typo into a huge size.  Values
 * are kept below 2^63 so that they fit off_t.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "size.h"

static int lower(int ch)
{
	return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

int parse_size(const char *s, uint64_t *out)
{
	const uint64_t limit = INT64_MAX;
	const char *p = s;
	uint64_t v = 0;
	bool too_large = false;
	unsigned shift = 0;

	if (!s || *p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (limit - d) / 10)
			too_large = true;
		else
			v = v * 10 + d;
	}
	switch (lower(*p)) {
	case 'k':
		shift = 10;
		break;
	case 'm':
		shift = 20;
		break;
	case 'g':
		shift = 30;
		break;
	case 't':
		shift = 40;
		break;
	}
	if (shift) {
		p++;
		if (lower(*p) == 'i') {
			p++;
			if (lower(*p) != 'b')
				return -EINVAL;
			p++;
		} else if (lower(*p) == 'b') {
			p++;
		}
	} else if (lower(*p) == 'b') {
		p++; /* "512B": plain bytes */
	}
	/* Syntax first, so that "99999999999999999999Q" is malformed, not too large. */
	if (*p)
		return -EINVAL;
	if (too_large || v > (limit >> shift))
		return -ERANGE;
	*out = v << shift;
	return 0;
}

char *format_size(uint64_t bytes, char *buf, int len)
{
	static const char units[] = "KMGT";
	int i;

	if (len <= 0)
		return buf;
	for (i = 3; i >= 0 && bytes; i--) {
		unsigned shift = 10u * (unsigned)(i + 1);

		if (bytes % (UINT64_C(1) << shift) == 0) {
			snprintf(buf, (size_t)len, "%" PRIu64 "%c", bytes >> shift, units[i]);
			return buf;
		}
	}
	snprintf(buf, (size_t)len, "%" PRIu64, bytes);
	return buf;
}
