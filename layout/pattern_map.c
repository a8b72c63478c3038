/*
 * The map pattern: a file's extents go where an extent map read from a
 * file says (layout.map, in one of the formats of extent_map_import.h),
 * so that a real file's layout, taken with filefrag -v, xfs_bmap -v or
 * scatterfs-plan clone, can be replayed on the mount.
 *
 * Placement.  Map extent i, of physical offset P and length L, lands at
 * device [map_base + P - P_min, + L), P_min the map's lowest physical
 * offset, rounded out to whole blocks (start down, end up); its logical
 * range is rounded out the same way.  The extent sizes follow the map
 * (extent_size_at() below): an extent that starts inside map extent i
 * ends where i ends, so a sequential writer gets exactly the map's
 * extents.  Logical space the map does not cover (its holes, and
 * everything past its end) is placed by layout.map_then, with extents no
 * longer than the distance to the next map extent.  The space between the
 * map's extents is left free for other files.
 *
 * Checks (config_finish(), before anything is written): the map file
 * parses (its own checks: garbage, unsorted, empty, physical overlap), its
 * extents do not collide once rounded to the block size, they fit in the
 * device, and they do not overlap the device ranges of another rule's
 * map.  Each message names the map file and its line.
 *
 * Maps are read once per (path, format) into a process-wide table that
 * lives until the process ends: the configuration stores only an index
 * (the pattern's data slice is 64 bytes), and the daemon, scatterfs-plan
 * and the tests load a configuration once or a few times.  The table is
 * filled only while the configuration is loaded and checked (one thread)
 * and only read afterwards, so it takes no lock.  Weak spot: space a map
 * names is not reserved ahead; a file of another pattern written first
 * can take it, and the mapped extent then goes to the first free run after
 * its place (as contiguous would place it).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_i.h"
#include "extent_map_import.h"
#include "placement.h"

struct map_params {
	uint32_t map;			  /* 1 + index into maps[]; 0 = unset */
	unsigned format;		  /* enum map_format */
	uint64_t base;			  /* device offset of the map's lowest physical offset */
	const struct placement_ops *then; /* growth outside the map */
};
_Static_assert(sizeof(struct map_params) <= LAYOUT_PATTERN_DATA_MAX,
	       "map_params must fit pattern_data");

struct loaded_map {
	char *path;
	unsigned format; /* the format it was loaded with */
	bool loaded;
	struct imported_map m;
	uint64_t lowest; /* lowest physical offset */
};

static struct loaded_map *maps;
static size_t nmaps;

static const char *const format_names[] = {"auto", "csv", "filefrag", "xfs_bmap", NULL};

static int map_parse(void *field, const char *value, char sep, char *why, size_t len)
{
	(void)sep;
	if (!*value) {
		snprintf(why, len, "empty; expected the path of an extent map file");
		return -EINVAL;
	}
	for (const char *p = value; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			snprintf(why, len, "control characters are not allowed in a path");
			return -EINVAL;
		}
	for (size_t i = 0; i < nmaps; i++)
		if (strcmp(maps[i].path, value) == 0) {
			*(uint32_t *)field = (uint32_t)i + 1;
			return 0;
		}
	struct loaded_map *v = realloc(maps, (nmaps + 1) * sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	maps = v;
	maps[nmaps] = (struct loaded_map){.path = strdup(value)};
	if (maps[nmaps].path == NULL)
		return -ENOMEM;
	*(uint32_t *)field = (uint32_t)++nmaps;
	return 0;
}

static void map_format_value(const void *field, char *buf, size_t len)
{
	uint32_t i = *(const uint32_t *)field;
	snprintf(buf, len, "%s", i && i <= nmaps ? maps[i - 1].path : "");
}

static const struct config_key map_keys[] = {
    {"layout", "map", CONFIG_CUSTOM, CONFIG_PATTERN_DATA, offsetof(struct map_params, map),
     .parse = map_parse, .format = map_format_value,
     .help = "extent map file: CSV of .scatterfs/extents, filefrag -v or xfs_bmap -v"},
    {"layout", "map_format", CONFIG_ENUM, CONFIG_PATTERN_DATA, offsetof(struct map_params, format),
     .names = format_names, .def = "auto", .help = "format of the map file; auto detects it"},
    {"layout", "map_base", CONFIG_SIZE, CONFIG_PATTERN_DATA, offsetof(struct map_params, base),
     .flags = CONFIG_BLOCK_MULTIPLE | CONFIG_WITHIN_DEVICE, .def = "0",
     .help = "device offset where the map's lowest physical offset lands"},
    {"layout", "map_then", CONFIG_PATTERN, CONFIG_PATTERN_DATA, offsetof(struct map_params, then),
     .def = "contiguous", .help = "pattern for space the map does not cover"},
};

extern const struct placement_ops map_ops;

static uint64_t down(uint64_t x, uint64_t b)
{
	return b ? x / b * b : x;
}

static uint64_t up(uint64_t x, uint64_t b)
{
	return b ? (x + b - 1) / b * b : x;
}

static const struct loaded_map *map_of(const struct layout_params *p)
{
	const struct map_params *mp = placement_data(p);
	return mp->map && mp->map <= nmaps && maps[mp->map - 1].loaded ? &maps[mp->map - 1] : NULL;
}

/* Map extent @i rounded out to @block: logical [*l, *le), device from *d. */
static void rounded(const struct loaded_map *lm, uint64_t base, size_t i, uint64_t block,
		    uint64_t *l, uint64_t *le, uint64_t *d)
{
	const struct map_extent *e = &lm->m.v[i];

	*l = down(e->logical, block);
	*le = up(e->logical + e->length, block);
	*d = down(base + e->physical - lm->lowest, block);
}

/* The first map extent whose rounded logical end is past @logical (m.n when none). */
static size_t find(const struct loaded_map *lm, uint64_t logical, uint64_t block)
{
	size_t lo = 0, hi = lm->m.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct map_extent *e = &lm->m.v[mid];
		if (up(e->logical + e->length, block) <= logical)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t map_extent_size_at(const struct layout_params *p, uint64_t logical, uint64_t size,
				   uint32_t block_size)
{
	const struct loaded_map *lm = map_of(p);
	const struct map_params *mp = placement_data(p);
	uint64_t l, le, d;
	size_t i;

	if (lm == NULL)
		return size;
	i = find(lm, logical, block_size);
	if (i == lm->m.n)
		return size; /* past the map: map_then's sizes */
	rounded(lm, mp->base, i, block_size, &l, &le, &d);
	if (l <= logical)
		return le - logical;			/* the rest of this map extent */
	return size < l - logical ? size : l - logical; /* a hole: stop at the next extent */
}

static int map_place(const struct layout_params *p, struct devalloc *a,
		     const struct extent_map *map, uint64_t logical, uint64_t length,
		     struct placement_result *out)
{
	const struct loaded_map *lm = map_of(p);
	const struct map_params *mp = placement_data(p);
	uint64_t block = devalloc_block_size(a), l, le, d;
	size_t i;

	if (lm != NULL && (i = find(lm, logical, block)) < lm->m.n) {
		rounded(lm, mp->base, i, block, &l, &le, &d);
		if (l <= logical) {
			uint64_t want = d + (logical - l);
			out->gap_device = 0;
			out->gap_length = 0;
			if (devalloc_reserve(a, want, length) == 0) {
				out->device = want;
				return 0;
			}
			/* Taken by a file placed earlier: the first free run after it. */
			return placement_alloc_after(a, want, length, &out->device);
		}
	}
	if (mp->then != NULL && mp->then != &map_ops)
		return mp->then->place(p, a, map, logical, length, out);
	return placement_contiguous(p, a, map, logical, length, out);
}

/* Reads the map of scope @s (once per path and format). */
static int load(const struct config_scope *s, const struct map_params *mp, char *err, size_t errlen)
{
	struct loaded_map *lm = &maps[mp->map - 1];
	char e[768], at[512], lb[300];
	unsigned k = config_key_id(&map_keys[0]);
	int rc;

	if (lm->loaded && lm->format == mp->format)
		return 0;
	if (lm->loaded)
		imported_map_release(&lm->m);
	lm->loaded = false;
	rc = map_import_file(lm->path, (enum map_format)mp->format, &lm->m, e, sizeof(e));
	if (rc < 0) {
		if (rc == -ENOMEM)
			snprintf(e, sizeof(e), "out of memory");
		config_seterr(err, errlen, "%s%s map = %s: %s", config_where(s, k, at, sizeof(at)),
			      config_label(s, k, lb, sizeof(lb)), lm->path, e);
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	lm->format = mp->format;
	lm->lowest = UINT64_MAX;
	for (size_t i = 0; i < lm->m.n; i++)
		if (lm->m.v[i].physical < lm->lowest)
			lm->lowest = lm->m.v[i].physical;
	lm->loaded = true;
	return 0;
}

struct dev_range {
	uint64_t start, end;
	unsigned line;
};

static int by_start(const void *a, const void *b)
{
	const struct dev_range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The device ranges of @lm at @base, sorted; NULL on ENOMEM. */
static struct dev_range *ranges(const struct loaded_map *lm, uint64_t base, uint64_t block)
{
	struct dev_range *r = malloc(lm->m.n * sizeof(*r));
	uint64_t l, le, d;

	if (r == NULL)
		return NULL;
	for (size_t i = 0; i < lm->m.n; i++) {
		rounded(lm, base, i, block, &l, &le, &d);
		r[i] = (struct dev_range){d, d + (le - l), lm->m.v[i].line};
	}
	qsort(r, lm->m.n, sizeof(*r), by_start);
	return r;
}

/* The map is set, readable and well formed, and map_then is another pattern. */
static int map_check(const struct config_scope *s, uint64_t device, char *err, size_t errlen)
{
	const struct map_params *mp = placement_data(&s->fp->layout);
	char at[512], lb[300];

	(void)device;
	if (mp->map == 0) {
		config_seterr(err, errlen, "%s%s pattern = map needs map = FILE",
			      config_where(s, K_PATTERN, at, sizeof(at)),
			      config_label(s, K_PATTERN, lb, sizeof(lb)));
		return -EINVAL;
	}
	if (mp->then == &map_ops) {
		unsigned kt = config_key_id(&map_keys[3]);
		config_seterr(err, errlen, "%s%s map_then = map: allowed: any other pattern",
			      config_where(s, kt, at, sizeof(at)),
			      config_label(s, kt, lb, sizeof(lb)));
		return -EINVAL;
	}
	return load(s, mp, err, errlen);
}

/* The map fits the device and meets no other rule's map. */
static int map_check_device(const struct config_scope *s, uint64_t device, char *err, size_t errlen)
{
	const struct map_params *mp = placement_data(&s->fp->layout);
	const uint64_t block = s->c->device.block_size;
	unsigned k = config_key_id(&map_keys[0]);
	char at[512], lb[300], w[64];
	const struct loaded_map *lm;
	uint64_t l, le, d, pl = 0, ple = 0, pd = 0;
	int rc;

	if ((rc = load(s, mp, err, errlen)) < 0)
		return rc;
	lm = &maps[mp->map - 1];
	config_where(s, k, at, sizeof(at));
	config_label(s, k, lb, sizeof(lb));
	for (size_t i = 0; i < lm->m.n; i++) {
		rounded(lm, mp->base, i, block, &l, &le, &d);
		if (i > 0 && (l < ple || (d < pd + (ple - pl) && pd < d + (le - l)))) {
			config_seterr(err, errlen,
				      "%s%s map = %s: %s:%u: overlaps the extent before it once "
				      "rounded out to the block size (%llu bytes)",
				      at, lb, lm->path, lm->path, lm->m.v[i].line,
				      (unsigned long long)block);
			return -EINVAL;
		}
		if (device && d + (le - l) > device) {
			snprintf(w, sizeof(w), "%llu", (unsigned long long)device);
			config_seterr(err, errlen,
				      "%s%s map = %s: %s:%u: extent ends at device offset %llu, "
				      "past the device (%s bytes)",
				      at, lb, lm->path, lm->path, lm->m.v[i].line,
				      (unsigned long long)(d + (le - l)), w);
			return -EINVAL;
		}
		pl = l, ple = le, pd = d;
	}
	/* Against the maps of the rules checked before this one. */
	for (long j = 0; s->rule >= 0 && j < s->rule; j++) {
		const struct file_params *o = &s->c->rules[j].params;
		const struct map_params *om;
		const struct loaded_map *ol;
		if (o->layout.pattern != &map_ops)
			continue;
		om = placement_data(&o->layout);
		ol = map_of(&o->layout);
		if (ol == NULL)
			continue;
		struct dev_range *a = ranges(lm, mp->base, block), *b = ranges(ol, om->base, block);
		size_t x = 0, y = 0;
		int hit = 0;
		if (a == NULL || b == NULL) {
			free(a);
			free(b);
			config_seterr(err, errlen, "out of memory");
			return -ENOMEM;
		}
		while (x < lm->m.n && y < ol->m.n && !hit) {
			if (a[x].end <= b[y].start)
				x++;
			else if (b[y].end <= a[x].start)
				y++;
			else
				hit = 1;
		}
		if (hit)
			config_seterr(err, errlen,
				      "%s%s map = %s: %s:%u: overlaps the map of [file \"%s\"] "
				      "(%s:%u) on the device",
				      at, lb, lm->path, lm->path, a[x].line, s->c->rules[j].glob,
				      ol->path, b[y].line);
		free(a);
		free(b);
		if (hit)
			return -EINVAL;
	}
	return 0;
}

const struct placement_ops map_ops = {
    .name = "map",
    .order = 6,
    .place = map_place,
    .keys = map_keys,
    .nkeys = sizeof(map_keys) / sizeof(map_keys[0]),
    .data_size = sizeof(struct map_params),
    .check = map_check,
    .check_device = map_check_device,
    .extent_size_at = map_extent_size_at,
};
PLACEMENT_REGISTER(map_ops);
