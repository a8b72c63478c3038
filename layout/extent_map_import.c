/*
 * Extent map parsers (extent_map_import.h).  Each format is read line by
 * line with sscanf-free hand scanning, so that every number is checked for
 * overflow and every line is either recognised or refused: a map that
 * silently dropped a garbled row would place the file somewhere else than
 * the user believes.  The text is small (one line per extent), so it is
 * read whole; rows go into a growing array, then the order and overlap
 * checks run over it once.
 *
 * The output formats are those of e2fsprogs 1.47 (misc/filefrag.c, -v) and
 * xfsprogs 6.1 (xfs_bmap -v, 512-byte "basic blocks"), as on Debian
 * bookworm; other versions print the same columns.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "extent_map_import.h"

#define CSV_HEADER	  "logical_offset,device_offset,length"
#define CSV_DEVICE	  ",device" /* the column .scatterfs/extents adds with several devices */
#define XFS_BB		  512U	    /* xfs_bmap's unit: the basic block */
#define XFS_FLAG_PREALLOC 0100000   /* xfs_bmap -v FLAGS: unwritten extent */

struct parser {
	const char *name;
	char *err;
	size_t errlen;
	struct imported_map *m;
	size_t cap;
	bool devices;	    /* map_import_devices(): the CSV may have the device column */
	bool device_column; /* it has */
	uint32_t device;    /* the device of the row being added */
	size_t devnamecap;
};

static int fail(struct parser *p, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct parser *p, unsigned line, const char *fmt, ...)
{
	va_list ap;
	int k = snprintf(p->err, p->errlen, "%s:%u: ", p->name, line);

	va_start(ap, fmt);
	if (k >= 0 && (size_t)k < p->errlen)
		vsnprintf(p->err + k, p->errlen - k, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const char *skip_space(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* A decimal number at *@s (no sign), advancing *@s.  @return 0 or -1 (none, overflow). */
static int number(const char **s, const char *end, uint64_t *v)
{
	const char *c = *s;
	uint64_t x = 0;

	if (c >= end || !isdigit((unsigned char)*c))
		return -1;
	for (; c < end && isdigit((unsigned char)*c); c++) {
		if (x > (UINT64_MAX - (uint64_t)(*c - '0')) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*c - '0');
	}
	*s = c;
	*v = x;
	return 0;
}

/* Consumes the literal @lit after optional blanks.  @return 0 or -1. */
static int expect(const char **s, const char *end, const char *lit)
{
	const char *c = skip_space(*s, end);
	size_t n = strlen(lit);

	if ((size_t)(end - c) < n || memcmp(c, lit, n) != 0)
		return -1;
	*s = c + n;
	return 0;
}

static int starts_with(const char *s, const char *end, const char *lit)
{
	size_t n = strlen(lit);
	return (size_t)(end - s) >= n && memcmp(s, lit, n) == 0;
}

static int contains(const char *s, const char *end, const char *lit)
{
	size_t n = strlen(lit);
	for (; (size_t)(end - s) >= n; s++)
		if (memcmp(s, lit, n) == 0)
			return 1;
	return 0;
}

/* Whether [@a * @unit, + @b * @unit) fits in 64 bits. */
static int scaled(uint64_t a, uint64_t unit, uint64_t *out)
{
	if (unit && a > UINT64_MAX / unit)
		return -1;
	*out = a * unit;
	return 0;
}

static int add(struct parser *p, uint64_t logical, uint64_t physical, uint64_t length,
	       unsigned line, bool unwritten)
{
	if (length == 0)
		return fail(p, line, "extent of length 0");
	if (logical + length < logical || physical + length < physical)
		return fail(p, line, "extent past the largest 64-bit offset");
	if (p->m->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct map_extent *v = realloc(p->m->v, cap * sizeof(*v));
		if (v == NULL)
			return -ENOMEM;
		p->m->v = v;
		p->cap = cap;
	}
	p->m->v[p->m->n++] =
	    (struct map_extent){logical, physical, length, line, unwritten, p->device};
	return 0;
}

/* ---- the formats, one line at a time ---------------------------------------- */

/* The number of the device called by the @len bytes at @name, added when new. */
static int device_index(struct parser *p, const char *name, size_t len, uint32_t *out)
{
	struct imported_map *m = p->m;

	for (size_t i = 0; i < m->ndevices; i++)
		if (strlen(m->devices[i]) == len && memcmp(m->devices[i], name, len) == 0) {
			*out = (uint32_t)i;
			return 0;
		}
	if (m->ndevices == p->devnamecap) {
		size_t cap = p->devnamecap ? 2 * p->devnamecap : 4;
		char **d = realloc(m->devices, cap * sizeof(*d));
		if (d == NULL)
			return -ENOMEM;
		m->devices = d;
		p->devnamecap = cap;
	}
	if ((m->devices[m->ndevices] = strndup(name, len)) == NULL)
		return -ENOMEM;
	*out = (uint32_t)m->ndevices++;
	return 0;
}

static int csv_line(struct parser *p, const char *s, const char *end, unsigned line, bool *header)
{
	uint64_t l, d, n;

	if (!*header) {
		size_t h = strlen(CSV_HEADER), hd = h + strlen(CSV_DEVICE);
		if ((size_t)(end - s) == h && starts_with(s, end, CSV_HEADER)) {
			*header = true;
			return 0;
		}
		if (p->devices && (size_t)(end - s) == hd && starts_with(s, end, CSV_HEADER) &&
		    starts_with(s + h, end, CSV_DEVICE)) {
			*header = true;
			p->device_column = true;
			return 0;
		}
		return fail(p, line, "expected the header '" CSV_HEADER "'%s",
			    p->devices ? " or '" CSV_HEADER CSV_DEVICE "'" : "");
	}
	if (number(&s, end, &l) < 0 || expect(&s, end, ",") < 0 || number(&s, end, &d) < 0 ||
	    expect(&s, end, ",") < 0 || number(&s, end, &n) < 0)
		return fail(p, line, "expected LOGICAL_OFFSET,DEVICE_OFFSET,LENGTH%s in bytes",
			    p->device_column ? ",DEVICE" : "");
	if (p->device_column) {
		const char *c;
		if (expect(&s, end, ",") < 0)
			return fail(p, line, "expected LOGICAL_OFFSET,DEVICE_OFFSET,LENGTH,DEVICE");
		s = skip_space(s, end);
		for (c = s;
		     c < end && (isalnum((unsigned char)*c) || *c == '_' || *c == '.' || *c == '-');
		     c++)
			;
		if (c == s || skip_space(c, end) != end)
			return fail(p, line,
				    "expected a device name (letters, digits, '_', '.' and '-') in "
				    "the device column");
		int rc = device_index(p, s, (size_t)(c - s), &p->device);
		if (rc < 0)
			return rc;
		s = c;
	}
	if (skip_space(s, end) != end)
		return fail(p, line, "expected LOGICAL_OFFSET,DEVICE_OFFSET,LENGTH%s in bytes",
			    p->device_column ? ",DEVICE" : "");
	return add(p, l, d, n, line, false);
}

static int filefrag_line(struct parser *p, const char *s, const char *end, unsigned line,
			 uint64_t *block)
{
	const char *c = skip_space(s, end);
	uint64_t i, l1, l2, p1, p2, len, b;

	if (starts_with(c, end, "Filesystem type is:") || starts_with(c, end, "ext:") ||
	    contains(c, end, " extent found") || contains(c, end, " extents found") ||
	    contains(c, end, "Filesystem cylinder groups"))
		return 0;
	if (starts_with(c, end, "File size of ")) {
		const char *o = c;
		/* "... is S (N blocks of B bytes)": the block size the rows count in. */
		for (; o < end && !starts_with(o, end, "blocks of "); o++)
			;
		o += strlen("blocks of ");
		if (o >= end || number(&o, end, &b) < 0 || b == 0)
			return fail(p, line, "no block size in the 'File size of' line");
		*block = b;
		return 0;
	}
	if (number(&c, end, &i) < 0 || expect(&c, end, ":") < 0)
		return fail(p, line, "not a line of filefrag -v");
	if (number((c = skip_space(c, end), &c), end, &l1) < 0 || expect(&c, end, "..") < 0 ||
	    number((c = skip_space(c, end), &c), end, &l2) < 0 || expect(&c, end, ":") < 0 ||
	    number((c = skip_space(c, end), &c), end, &p1) < 0 || expect(&c, end, "..") < 0 ||
	    number((c = skip_space(c, end), &c), end, &p2) < 0 || expect(&c, end, ":") < 0 ||
	    number((c = skip_space(c, end), &c), end, &len) < 0 || expect(&c, end, ":") < 0)
		return fail(p, line, "expected 'N: LOGICAL.. LAST: PHYSICAL.. LAST: LENGTH:'");
	if (l2 < l1 || p2 < p1 || l2 - l1 + 1 != len || p2 - p1 + 1 != len)
		return fail(p, line, "extent ranges do not match its length %llu",
			    (unsigned long long)len);
	/* The rest: an optional expected physical block, then flags. */
	bool unwritten = contains(c, end, "unwritten");
	uint64_t lb, pb, nb;
	if (scaled(l1, *block, &lb) < 0 || scaled(p1, *block, &pb) < 0 ||
	    scaled(len, *block, &nb) < 0)
		return fail(p, line, "extent past the largest 64-bit offset");
	return add(p, lb, pb, nb, line, unwritten);
}

static int xfs_line(struct parser *p, const char *s, const char *end, unsigned line)
{
	const char *c = skip_space(s, end);
	uint64_t i, l1, l2, p1, p2, lb, pb, nb;

	if (c == end || contains(c, end, "EXT: FILE-OFFSET") || *(end - 1) == ':' ||
	    starts_with(c, end, "no extents"))
		return 0; /* the "PATH:" line, the column header */
	if (number(&c, end, &i) < 0 || expect(&c, end, ":") < 0 || expect(&c, end, "[") < 0 ||
	    number(&c, end, &l1) < 0 || expect(&c, end, "..") < 0 || number(&c, end, &l2) < 0 ||
	    expect(&c, end, "]:") < 0)
		return fail(p, line, "not a line of xfs_bmap -v");
	c = skip_space(c, end);
	if (starts_with(c, end, "hole"))
		return 0; /* holes stay holes */
	if (number(&c, end, &p1) < 0 || expect(&c, end, "..") < 0 || number(&c, end, &p2) < 0)
		return fail(p, line, "expected 'N: [FIRST..LAST]: FIRST..LAST' or a hole");
	if (l2 < l1 || p2 < p1 || l2 - l1 != p2 - p1)
		return fail(p, line, "file and block ranges differ in length");
	/* AG (AG-OFFSET) TOTAL [FLAGS]: the fourth field, when present, is the flags. */
	uint64_t flags = 0;
	int field = 0;
	for (c = skip_space(c, end); c < end; c = skip_space(c, end), field++) {
		const char *w = c;
		while (c < end && *c != ' ' && *c != '\t')
			c++;
		if (field == 3) {
			char buf[24];
			char *e;
			size_t n =
			    (size_t)(c - w) < sizeof(buf) - 1 ? (size_t)(c - w) : sizeof(buf) - 1;
			memcpy(buf, w, n);
			buf[n] = '\0';
			flags = strtoull(buf, &e, 8);
			if (*e != '\0')
				return fail(p, line, "FLAGS '%s' is not an octal number", buf);
		}
	}
	if (scaled(l1, XFS_BB, &lb) < 0 || scaled(p1, XFS_BB, &pb) < 0 ||
	    scaled(l2 - l1 + 1, XFS_BB, &nb) < 0)
		return fail(p, line, "extent past the largest 64-bit offset");
	return add(p, lb, pb, nb, line, (flags & XFS_FLAG_PREALLOC) != 0);
}

/* ---- the whole map ------------------------------------------------------------ */

static int by_physical(const void *a, const void *b)
{
	const struct map_extent *x = *(struct map_extent *const *)a;
	const struct map_extent *y = *(struct map_extent *const *)b;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return x->physical < y->physical ? -1 : x->physical > y->physical;
}

/* Rows in logical order, none overlapping another logically or physically. */
static int check_map(struct parser *p)
{
	struct imported_map *m = p->m;
	struct map_extent **byp;
	int rc = 0;

	if (m->n == 0)
		return fail(p, 0, "no extents in the map");
	for (size_t i = 1; i < m->n; i++)
		if (m->v[i].logical < m->v[i - 1].logical + m->v[i - 1].length)
			return fail(p, m->v[i].line,
				    "logical offset %llu is before the end of line %u's extent "
				    "(%llu): the map must be sorted by logical offset",
				    (unsigned long long)m->v[i].logical, m->v[i - 1].line,
				    (unsigned long long)(m->v[i - 1].logical + m->v[i - 1].length));
	byp = malloc(m->n * sizeof(*byp));
	if (byp == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++)
		byp[i] = &m->v[i];
	qsort(byp, m->n, sizeof(*byp), by_physical);
	for (size_t i = 1; i < m->n && rc == 0; i++) {
		const struct map_extent *a = byp[i - 1], *b = byp[i];
		if (b->device == a->device && b->physical < a->physical + a->length) {
			const struct map_extent *later = a->line > b->line ? a : b;
			rc = fail(p, later->line, "physical range overlaps the extent of line %u",
				  later == a ? b->line : a->line);
		}
	}
	free(byp);
	return rc;
}

enum map_format map_format_detect(const char *text, size_t len)
{
	const char *end = text + len, *s = text;

	while (s < end) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		const char *c = skip_space(s, e ? e : end);
		if (e == NULL)
			e = end;
		if (c < e) {
			if (starts_with(c, e, CSV_HEADER))
				return MAP_CSV;
			if (starts_with(c, e, "Filesystem type is:") ||
			    (starts_with(c, e, "ext:") && contains(c, e, "logical_offset")))
				return MAP_FILEFRAG;
			if (contains(c, e, "EXT: FILE-OFFSET"))
				return MAP_XFS_BMAP;
		}
		s = e + 1;
	}
	return MAP_AUTO;
}

const char *map_format_name(enum map_format f)
{
	static const char *const names[] = {"auto", "csv", "filefrag", "xfs_bmap"};
	return (unsigned)f < 4 ? names[f] : "?";
}

static int import(const char *text, size_t len, enum map_format fmt, const char *name,
		  struct imported_map *out, char *err, size_t errlen, bool devices)
{
	struct parser p = {name, err, errlen, out, 0, devices, false, 0, 0};
	const char *end = text + len, *s = text;
	unsigned line = 0;
	uint64_t block = 4096; /* filefrag's unit when no "File size" line says otherwise */
	bool header = false;
	int rc = 0;

	*out = (struct imported_map){0};
	if (fmt == MAP_AUTO && (fmt = map_format_detect(text, len)) == MAP_AUTO) {
		if (len == 0 || skip_space(text, end) == end)
			return fail(&p, 0, "no extents in the map (empty file)");
		return fail(&p, 1,
			    "not an extent map: expected the CSV header '" CSV_HEADER
			    "', filefrag -v or xfs_bmap -v output");
	}
	out->format = fmt;
	while (s < end && rc == 0) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		if (e == NULL)
			e = end;
		line++;
		const char *le = e;
		if (le > s && le[-1] == '\r')
			le--;
		if (skip_space(s, le) != le) {
			if (fmt == MAP_CSV)
				rc = csv_line(&p, s, le, line, &header);
			else if (fmt == MAP_FILEFRAG)
				rc = filefrag_line(&p, s, le, line, &block);
			else
				rc = xfs_line(&p, s, le, line);
		}
		s = e + 1;
	}
	if (rc == 0)
		rc = check_map(&p);
	if (rc < 0)
		imported_map_release(out);
	return rc;
}

int map_import(const char *text, size_t len, enum map_format fmt, const char *name,
	       struct imported_map *out, char *err, size_t errlen)
{
	return import(text, len, fmt, name, out, err, errlen, false);
}

int map_import_devices(const char *text, size_t len, enum map_format fmt, const char *name,
		       struct imported_map *out, char *err, size_t errlen)
{
	return import(text, len, fmt, name, out, err, errlen, true);
}

static int import_file(const char *path, enum map_format fmt, struct imported_map *out, char *err,
		       size_t errlen, bool devices)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int rc;

	*out = (struct imported_map){0};
	if (f == NULL) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	for (;;) {
		if (len == cap) {
			char *b = realloc(buf, cap = cap ? 2 * cap : 65536);
			if (b == NULL) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = b;
		}
		size_t k = fread(buf + len, 1, cap - len, f);
		len += k;
		if (k == 0)
			break;
	}
	if (ferror(f)) {
		rc = -EIO;
		snprintf(err, errlen, "%s: %s", path, strerror(EIO));
	} else {
		rc = import(buf ? buf : "", len, fmt, path, out, err, errlen, devices);
	}
	free(buf);
	fclose(f);
	return rc;
}

int map_import_file(const char *path, enum map_format fmt, struct imported_map *out, char *err,
		    size_t errlen)
{
	return import_file(path, fmt, out, err, errlen, false);
}

int map_import_file_devices(const char *path, enum map_format fmt, struct imported_map *out,
			    char *err, size_t errlen)
{
	return import_file(path, fmt, out, err, errlen, true);
}

void imported_map_release(struct imported_map *m)
{
	free(m->v);
	m->v = NULL;
	m->n = 0;
	for (size_t i = 0; i < m->ndevices; i++)
		free(m->devices[i]);
	free(m->devices);
	m->devices = NULL;
	m->ndevices = 0;
}
