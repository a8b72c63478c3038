/*
 * Byte counts as users write them in configuration files and on the command
 * line: "70K", "512M", "2GiB", "4096".
 *
 * No data structure: a hand-written scanner rather than strtoull(), because
 * strtoull() accepts a sign ("-1" wraps to 2^64-1), leading blanks and a
 * base prefix, all of which would turn a typo into a huge size.  Values
 * are kept below 2^63 so that they fit off_t.  A refused value is scanned
 * again by size_error(), which works out what the user meant ("1.5M" is
 * 1536K, "1GB" was meant as 1G) so that the message can say what to write.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

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
			return -EINVAL; /* KB, MB, ...: see size_error() */
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

/* What a refused size says, split: "1.5GB" is 1, "5", 30 and a decimal 'B'. */
struct size_parts {
	const char *whole; /* the digits before any '.' */
	size_t nwhole;
	const char *frac; /* the digits after the '.'; NULL when there is no '.' */
	size_t nfrac;
	unsigned shift;	   /* 10, 20, 30, 40 for K, M, G, T; 0 without a suffix */
	char unit;	   /* 'K', 'M', 'G', 'T'; 0 without a suffix */
	bool decimal_unit; /* written KB, MB, GB or TB */
};

/* Splits @s as DIGITS[.DIGITS][K|M|G|T][B|iB]; false when it is not that shape. */
static bool split_size(const char *s, struct size_parts *sp)
{
	static const char units[] = "kmgt";
	const char *p = s, *u;

	memset(sp, 0, sizeof(*sp));
	sp->whole = p;
	while (*p >= '0' && *p <= '9')
		p++;
	sp->nwhole = (size_t)(p - s);
	if (*p == '.') {
		sp->frac = ++p;
		while (*p >= '0' && *p <= '9')
			p++;
		sp->nfrac = (size_t)(p - sp->frac);
	}
	if (sp->nwhole + sp->nfrac == 0)
		return false;
	u = *p ? strchr(units, lower(*p)) : NULL;
	if (u) {
		sp->shift = 10u * (unsigned)(u - units + 1);
		sp->unit = (char)(*u - 'a' + 'A');
		p++;
		if (lower(p[0]) == 'i' && lower(p[1]) == 'b')
			p += 2;
		else if (lower(*p) == 'b')
			sp->decimal_unit = true, p++;
	} else if (lower(*p) == 'b') {
		p++;
	}
	return *p == '\0';
}

/*
 * The bytes @sp stands for, in powers of 1024; false when that is not a
 * whole number of bytes or does not fit in 63 bits.
 */
static bool exact_bytes(const struct size_parts *sp, uint64_t *out)
{
	unsigned __int128 whole = 0, frac = 0, pow10 = 1, bytes;
	size_t nfrac = sp->nfrac, i;

	while (nfrac && sp->frac[nfrac - 1] == '0')
		nfrac--; /* "1.50M" is "1.5M" */
	if (sp->nwhole > 19 || nfrac > 19)
		return false;
	for (i = 0; i < sp->nwhole; i++)
		whole = whole * 10 + (unsigned)(sp->whole[i] - '0');
	for (i = 0; i < nfrac; i++) {
		frac = frac * 10 + (unsigned)(sp->frac[i] - '0');
		pow10 *= 10;
	}
	if ((frac << sp->shift) % pow10)
		return false;
	bytes = (whole << sp->shift) + (frac << sp->shift) / pow10;
	if (bytes > INT64_MAX)
		return false;
	*out = (uint64_t)bytes;
	return true;
}

const char *size_error(const char *s, int rc, char *buf, size_t len)
{
	struct size_parts sp;
	uint64_t bytes;
	char fs[32];

	if (rc == -ERANGE)
		snprintf(buf, len, "too large (at most 2^63-1 bytes)");
	else if (!s || !*s)
		snprintf(buf, len, "empty; expected a size (bytes or a K/M/G/T suffix)");
	else if (s[0] == '-')
		snprintf(buf, len, "not a size: negative");
	else if (!split_size(s, &sp))
		snprintf(buf, len, "%s",
			 strchr(s, '.') ? "not a size: no fractions"
					: "not a size (use bytes or a K/M/G/T suffix)");
	else if (sp.decimal_unit && !sp.frac)
		snprintf(buf, len,
			 "write %.*s%c or %.*s%ciB (powers of 1024); KB/MB/GB/TB are not accepted",
			 (int)sp.nwhole, sp.whole, sp.unit, (int)sp.nwhole, sp.whole, sp.unit);
	else if (sp.decimal_unit && exact_bytes(&sp, &bytes)) {
		size_t n = strlen(format_size(bytes, fs, sizeof(fs)));

		if (n && fs[n - 1] >= 'A' && fs[n - 1] <= 'Z')
			snprintf(buf, len,
				 "write %s or %siB (powers of 1024); KB/MB/GB/TB are not accepted",
				 fs, fs);
		else
			snprintf(buf, len,
				 "write %s (bytes; K/M/G/T are powers of 1024); KB/MB/GB/TB are "
				 "not accepted",
				 fs);
	} else if (sp.decimal_unit)
		snprintf(buf, len,
			 "write a whole number of bytes, K, M, G or T (powers of 1024); "
			 "KB/MB/GB/TB are not accepted");
	else if (sp.frac && exact_bytes(&sp, &bytes))
		snprintf(buf, len, "not a size: no fractions (use a smaller unit: %s, not %s)",
			 format_size(bytes, fs, sizeof(fs)), s);
	else if (sp.frac)
		snprintf(buf, len, "not a size: no fractions (%s is not a whole number of bytes)",
			 s);
	else
		snprintf(buf, len, "not a size (use bytes or a K/M/G/T suffix)");
	return buf;
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
