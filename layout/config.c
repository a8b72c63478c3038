/*
 * Configuration: the INI file, -o SECTION.KEY=VALUE overrides and
 * [file "GLOB"] rules.
 *
 * Data structure.  struct sfs_config (config.h) holds effective values
 * only.  What config_finish() needs beyond them lives in the private struct
 * config_state behind c->state: one bit per key for the global sections and
 * one bit per key for each [file] rule, plus where each key was set (file
 * and line, or the -o text).  With that,
 *   - a rule inherits every key it did not set from the global values as
 *     they are after all overrides, although an override arrives after the
 *     file that declared the rule;
 *   - conflict checks blame only keys somebody wrote (a default never
 *     conflicts with the pattern), and the message points at that line.
 * Keys are numbered (enum key) and named in one table, so the parser, the
 * override path, inheritance and config_write_ini() walk the same list.
 * Weak spot: the table and the switches in apply_value(), copy_key() and
 * format_value() must be kept in step by hand.
 *
 * Line numbers.  Debian's inih is built without INI_HANDLER_LINENO, so the
 * file is read into memory and handed to ini_parse_stream() one line per
 * reader call; the reader counts lines, rejects bytes that are not UTF-8,
 * and parses section headers itself, because inih truncates section names
 * at 50 bytes (long globs) and says nothing about a section without keys
 * (an unknown or duplicated one would pass).  inih sees "[s]" for each
 * header and does what it is good at: splitting "key = value" and
 * stripping comments.  The reader also strips leading blanks, which turns
 * off inih's multi-line continuation values (a continuation would look
 * like a duplicated key).  Known limit: a key line may hold at most 198
 * characters, the line buffer of Debian's inih (INI_MAX_LINE 200); longer
 * lines are an error, never silently cut.
 *
 * Conflicts.  A key that the pattern does not read is an error only where
 * it was written: in a global section against the global pattern, in a
 * rule against the rule's pattern.  A rule that switches to another
 * pattern inherits the global pattern's keys without complaint (they are
 * simply not read), so postgres.ini can scatter base/ and keep pg_wal/
 * contiguous.  Places are ranked: built-in default < first file < later
 * files < -o overrides.  The key is an error when the pattern comes from
 * the same place or an earlier one (the user wrote both, or asked for the
 * key over the file's pattern); when the pattern comes from a later place
 * (-o layout.pattern=... over a shipped file) the key is dropped as if
 * never written and a note is kept for config_write_ini().  Sizes
 * (multiples of the block size, the device size) are checked on every
 * effective value that the scope's pattern reads.
 *
 * Auto values.  gap and gap_max 0 mean auto (config.h).  config_finish()
 * resolves them per scope after inheritance, and remembers which it
 * resolved (autoset), so that a second config_finish() after more
 * overrides starts again from auto and not from the first result.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

#include "config.h"
#include "size.h"

/* A configuration file is text written by hand; anything larger is a wrong path. */
#define CONFIG_MAX_BYTES (1u << 20)

enum section {
	SEC_NONE = -1,
	SEC_DEVICE,
	SEC_LAYOUT,
	SEC_AUTOEXTEND,
	SEC_CACHE,
	SEC_LOG,
	SEC_DISK,
	SEC_FILE,
};
#define NGLOBAL_SECTIONS SEC_FILE

static const char *const section_names[] = {"device", "layout", "autoextend", "cache",
					    "log",    "disk",	"file"};

enum key {
	K_DEVICE_SIZE,
	K_BLOCK_SIZE,
	K_DIRECT,
	K_POLL_US,
	K_ASYNC_READS,
	K_PATTERN,
	K_EXTENT_SIZE,
	K_INITIAL_SIZE,
	K_GAP,
	K_GAP_MAX,
	K_CONTIGUOUS_RATIO,
	K_SEED,
	K_NEXT,
	K_MAX_SIZE,
	K_ZERO_FILL,
	K_SPARSE,
	K_CACHE_MODE,
	K_READAHEAD,
	K_LOG_PATH,
	K_LOG_OPS,
	K_DISK_MODEL,
	K_RPM,
	K_SEEK_TRACK,
	K_SEEK_AVG,
	K_SEEK_FULL,
	K_TRANSFER,
	K_CAPACITY,
	K_ROTATION,
	K_PREFETCH,
	K_PREFETCH_MAX,
	K__COUNT,
};

static const struct {
	const char *name;
	enum section sec;
} keys[K__COUNT] = {
    [K_DEVICE_SIZE] = {"size", SEC_DEVICE},
    [K_BLOCK_SIZE] = {"block_size", SEC_DEVICE},
    [K_DIRECT] = {"direct", SEC_DEVICE},
    [K_POLL_US] = {"poll_us", SEC_DEVICE},
    [K_ASYNC_READS] = {"async_reads", SEC_DEVICE},
    [K_PATTERN] = {"pattern", SEC_LAYOUT},
    [K_EXTENT_SIZE] = {"extent_size", SEC_LAYOUT},
    [K_INITIAL_SIZE] = {"initial_size", SEC_LAYOUT},
    [K_GAP] = {"gap", SEC_LAYOUT},
    [K_GAP_MAX] = {"gap_max", SEC_LAYOUT},
    [K_CONTIGUOUS_RATIO] = {"contiguous_ratio", SEC_LAYOUT},
    [K_SEED] = {"seed", SEC_LAYOUT},
    [K_NEXT] = {"next", SEC_AUTOEXTEND},
    [K_MAX_SIZE] = {"max_size", SEC_AUTOEXTEND},
    [K_ZERO_FILL] = {"zero_fill", SEC_AUTOEXTEND},
    [K_SPARSE] = {"sparse", SEC_AUTOEXTEND},
    [K_CACHE_MODE] = {"mode", SEC_CACHE},
    [K_READAHEAD] = {"readahead", SEC_CACHE},
    [K_LOG_PATH] = {"path", SEC_LOG},
    [K_LOG_OPS] = {"ops", SEC_LOG},
    [K_DISK_MODEL] = {"model", SEC_DISK},
    [K_RPM] = {"rpm", SEC_DISK},
    [K_SEEK_TRACK] = {"seek_track_ms", SEC_DISK},
    [K_SEEK_AVG] = {"seek_avg_ms", SEC_DISK},
    [K_SEEK_FULL] = {"seek_full_ms", SEC_DISK},
    [K_TRANSFER] = {"transfer_mib_s", SEC_DISK},
    [K_CAPACITY] = {"capacity", SEC_DISK},
    [K_ROTATION] = {"rotation", SEC_DISK},
    [K_PREFETCH] = {"prefetch", SEC_DISK},
    [K_PREFETCH_MAX] = {"prefetch_max", SEC_DISK},
};

#define BIT(k) (UINT64_C(1) << (k))

static const char *const pattern_names[] = {"contiguous", "single",  "interleaved",
					    "random",	  "reverse", NULL};
static const char *const zero_fill_names[] = {"write", "fallocate", "none", NULL};
static const char *const cache_mode_names[] = {"none", "kernel", NULL};
static const char *const disk_model_names[] = {"none", "hdd", NULL};
static const char *const rotation_names[] = {"phase", "average", NULL};
/* Bit i of the LOG_* mask is log_op_names[i] (logschema.h). */

/* Where a key got its value. */
struct origin {
	const char *file; /* into config_state.files; NULL when not from a file */
	unsigned line;
	char *option; /* the -o assignment (malloc'd); NULL when from a file */
};

struct rule_state {
	uint64_t set;		 /* BIT(key) for each key the section wrote */
	unsigned line[K__COUNT]; /* line of each key it wrote */
	const char *file;	 /* into config_state.files; NULL for built-in rules */
	uint64_t autoset;	 /* keys config_finish() resolved from 0 (auto) */
};

struct config_state {
	uint64_t set; /* global keys written by a file or an override */
	struct origin origin[K__COUNT];
	uint64_t autoset;	  /* global keys config_finish() resolved from 0 (auto) */
	struct rule_state *rules; /* parallel to sfs_config.rules */
	size_t cap;		  /* of both rule arrays */
	char **files;		  /* every file loaded, for origin.file */
	size_t nfiles;
	char **notes; /* "ignored: ..." lines for config_write_ini(), malloc'd */
	size_t nnotes;
};

/* ---- names ---- */

static const char *name_of(const char *const *names, unsigned v)
{
	unsigned i;

	for (i = 0; names[i]; i++)
		if (i == v)
			return names[i];
	return "?";
}

const char *pattern_name(enum pattern p)
{
	return name_of(pattern_names, (unsigned)p);
}

const char *zero_fill_name(enum zero_fill z)
{
	return name_of(zero_fill_names, (unsigned)z);
}

const char *cache_mode_name(enum cache_mode m)
{
	return name_of(cache_mode_names, (unsigned)m);
}

static bool rule_key(enum key k)
{
	enum section s = keys[k].sec;

	return s == SEC_LAYOUT || s == SEC_AUTOEXTEND || s == SEC_CACHE;
}

/* The key named @name in @sec; in [file] sections also "cache.mode" and the like. */
static enum key find_key(enum section sec, const char *name)
{
	unsigned k;

	for (k = 0; k < K__COUNT; k++) {
		const char *sn = section_names[keys[k].sec];
		size_t snlen = strlen(sn);

		if (sec == SEC_FILE) {
			if (!rule_key(k))
				continue;
			if (strcmp(name, keys[k].name) == 0 ||
			    (strncmp(name, sn, snlen) == 0 && name[snlen] == '.' &&
			     strcmp(name + snlen + 1, keys[k].name) == 0))
				return k;
		} else if (keys[k].sec == sec && strcmp(name, keys[k].name) == 0) {
			return k;
		}
	}
	return K__COUNT;
}

static void allowed_keys(enum section sec, char *buf, size_t len)
{
	size_t used = 0;
	unsigned k;

	buf[0] = '\0';
	for (k = 0; k < K__COUNT && used < len; k++) {
		if (sec == SEC_FILE ? !rule_key(k) : keys[k].sec != sec)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
					 keys[k].name);
	}
}

static void join_names(const char *const *names, char *buf, size_t len)
{
	size_t used = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; names[i] && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
}

/* "[layout]" or "[file "GLOB"]" */
static const char *section_label(enum section sec, const char *glob, char *buf, size_t len)
{
	if (sec == SEC_FILE)
		snprintf(buf, len, "[file \"%s\"]", glob);
	else if (sec == SEC_NONE)
		snprintf(buf, len, "(no section)");
	else
		snprintf(buf, len, "[%s]", section_names[sec]);
	return buf;
}

/* ---- errors ---- */

/* Control characters (a newline in an -o value or a path) become '?'. */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/* One line, see one_line(). */
__attribute__((format(printf, 3, 4))) static void seterr(char *err, size_t errlen, const char *fmt,
							 ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	one_line(err);
}

/* ---- private state ---- */

static struct config_state *state_get(struct sfs_config *c)
{
	if (!c->state)
		c->state = calloc(1, sizeof(*c->state));
	return c->state;
}

static void state_free(struct config_state *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < K__COUNT; i++)
		free(st->origin[i].option);
	for (i = 0; i < st->nfiles; i++)
		free(st->files[i]);
	free(st->files);
	for (i = 0; i < st->nnotes; i++)
		free(st->notes[i]);
	free(st->notes);
	free(st->rules);
	free(st);
}

/* Keeps a copy of @path for origins; returns it, NULL on ENOMEM. */
static const char *state_add_file(struct config_state *st, const char *path)
{
	char **v = realloc(st->files, (st->nfiles + 1) * sizeof(*v));
	char *copy;

	if (!v)
		return NULL;
	st->files = v;
	copy = strdup(path);
	if (!copy)
		return NULL;
	st->files[st->nfiles++] = copy;
	return copy;
}

/* Appends a rule for @glob with the current global values; returns its index or -ENOMEM. */
static long add_rule(struct sfs_config *c, const char *glob, unsigned line, const char *file)
{
	struct config_state *st = state_get(c);
	struct file_rule *r;
	char *copy;

	if (!st)
		return -ENOMEM;
	if (c->nrules == st->cap) {
		size_t cap = st->cap ? 2 * st->cap : 8;
		struct file_rule *nr = realloc(c->rules, cap * sizeof(*nr));
		struct rule_state *ns;

		if (!nr)
			return -ENOMEM;
		c->rules = nr;
		ns = realloc(st->rules, cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		st->rules = ns;
		st->cap = cap;
	}
	copy = strdup(glob);
	if (!copy)
		return -ENOMEM;
	r = &c->rules[c->nrules];
	r->glob = copy;
	r->params = c->defaults;
	r->line = line;
	memset(&st->rules[c->nrules], 0, sizeof(st->rules[0]));
	st->rules[c->nrules].file = file;
	return (long)c->nrules++;
}

/* ---- values ---- */

static int parse_double(const char *s, double *out)
{
	const char *p;
	char *end;
	double v;

	if (!*s)
		return -EINVAL;
	/* strtod() alone would take "inf", "nan" and hexadecimal floats. */
	for (p = s; *p; p++)
		if (!strchr("0123456789.eE+-", *p))
			return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno == ERANGE || !isfinite(v))
		return -EINVAL;
	*out = v;
	return 0;
}

/* Decimal, or hexadecimal with 0x; the full 64-bit range. */
static int parse_u64(const char *s, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && isxdigit((unsigned char)*s))
			d = (unsigned)(tolower((unsigned char)*s) - 'a' + 10);
		else
			return -EINVAL;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

static int parse_enum(const char *s, const char *const *names, unsigned *out)
{
	unsigned i;

	for (i = 0; names[i]; i++) {
		if (strcasecmp(s, names[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on", "1", NULL};
	static const char *const no[] = {"false", "no", "off", "0", NULL};
	unsigned i;

	if (parse_enum(s, yes, &i) == 0)
		*out = true;
	else if (parse_enum(s, no, &i) == 0)
		*out = false;
	else
		return -EINVAL;
	return 0;
}

/* parse_bool() of a key's @value, or -EINVAL with the allowed values in @why. */
static int get_bool(const char *value, bool *out, char *why, size_t len)
{
	if (parse_bool(value, out) == 0)
		return 0;
	snprintf(why, len, "not a boolean; allowed: true, false, yes, no, on, off, 1, 0");
	return -EINVAL;
}

/* Copies the next @sep-separated item of *@s, blanks trimmed, into @buf; advances *@s. */
static void next_item(const char **s, char sep, char *buf, size_t len)
{
	const char *p = *s, *end = strchr(p, sep);
	size_t n;

	if (!end)
		end = p + strlen(p);
	*s = *end ? end + 1 : end;
	while (p < end && isspace((unsigned char)*p))
		p++;
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	n = (size_t)(end - p) < len - 1 ? (size_t)(end - p) : len - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
}

static int why_size(int rc, const char *value, char *why, size_t len)
{
	if (rc == -ERANGE)
		snprintf(why, len, "too large (at most 2^63-1 bytes)");
	else if (!*value)
		snprintf(why, len, "empty; expected a size (bytes or a K/M/G/T suffix)");
	else if (value[0] == '-')
		snprintf(why, len, "not a size: negative");
	else if (strchr(value, '.'))
		snprintf(why, len,
			 "not a size: no fractions (use a smaller unit: 1536K, not 1.5M)");
	else
		snprintf(why, len, "not a size (use bytes or a K/M/G/T suffix)");
	return -EINVAL;
}

static int get_size(const char *value, uint64_t *out, char *why, size_t len)
{
	int rc = parse_size(value, out);

	return rc ? why_size(rc, value, why, len) : 0;
}

static int get_enum(const char *value, const char *const *names, unsigned *out, char *why,
		    size_t len)
{
	char list[128];

	if (parse_enum(value, names, out) == 0)
		return 0;
	join_names(names, list, sizeof(list));
	snprintf(why, len, "unknown value; allowed: %s", list);
	return -EINVAL;
}

static int get_double(const char *value, double *out, double min, bool min_open, char *why,
		      size_t len)
{
	if (parse_double(value, out)) {
		snprintf(why, len, "not a number");
		return -EINVAL;
	}
	if (min_open ? !(*out > min) : !(*out >= min)) {
		snprintf(why, len, "must be %s %g", min_open ? ">" : ">=", min);
		return -EINVAL;
	}
	return 0;
}

/*
 * Parses @value for key @k into @c (global keys) or @fp (rule keys: the
 * global defaults or a rule's params).  @sep separates list items.
 * Returns 0, -EINVAL with @why set, or -ENOMEM.
 */
static int apply_value(struct sfs_config *c, struct file_params *fp, enum key k, const char *value,
		       char sep, char *why, size_t len)
{
	uint64_t u;
	unsigned e;
	double d;
	int rc;

	switch (k) {
	case K_DEVICE_SIZE:
		return get_size(value, &c->device.size, why, len);
	case K_BLOCK_SIZE:
		if ((rc = get_size(value, &u, why, len)))
			return rc;
		if (u < 512 || u > (1u << 20) || (u & (u - 1))) {
			snprintf(why, len, "must be a power of two from 512 to 1M");
			return -EINVAL;
		}
		c->device.block_size = (uint32_t)u;
		return 0;
	case K_DIRECT:
		return get_bool(value, &c->device.direct, why, len);
	case K_POLL_US:
		if (parse_u64(value, &u) || u > DEVICE_POLL_US_MAX) {
			snprintf(why, len, "must be a whole number of microseconds from 0 to %d",
				 DEVICE_POLL_US_MAX);
			return -EINVAL;
		}
		c->device.poll_us = (uint32_t)u;
		return 0;
	case K_ASYNC_READS:
		return get_bool(value, &c->device.async_reads, why, len);
	case K_PATTERN:
		if ((rc = get_enum(value, pattern_names, &e, why, len)))
			return rc;
		fp->layout.pattern = (enum pattern)e;
		return 0;
	case K_EXTENT_SIZE:
		if (strcasecmp(value, "auto") == 0) {
			fp->layout.extent_size = 0;
			return 0;
		}
		if ((rc = get_size(value, &u, why, len)))
			return rc;
		if (u == 0) {
			snprintf(why, len, "must be > 0 (or auto)");
			return -EINVAL;
		}
		fp->layout.extent_size = u;
		return 0;
	case K_INITIAL_SIZE:
		return get_size(value, &fp->layout.initial_size, why, len);
	case K_GAP:
		return get_size(value, &fp->layout.gap, why, len);
	case K_GAP_MAX:
		return get_size(value, &fp->layout.gap_max, why, len);
	case K_CONTIGUOUS_RATIO:
		if (parse_double(value, &d) || d < 0 || d > 1) {
			snprintf(why, len, "must be a number from 0 to 1");
			return -EINVAL;
		}
		fp->layout.contiguous_ratio = d;
		return 0;
	case K_SEED:
		if ((rc = parse_u64(value, &fp->layout.seed))) {
			snprintf(why, len, "%s",
				 rc == -ERANGE ? "too large (at most 2^64-1)"
					       : "not an unsigned 64-bit integer");
			return -EINVAL;
		}
		return 0;
	case K_NEXT:
		return get_size(value, &fp->autoextend.next, why, len);
	case K_MAX_SIZE:
		return get_size(value, &fp->autoextend.max_size, why, len);
	case K_ZERO_FILL:
		if ((rc = get_enum(value, zero_fill_names, &e, why, len)))
			return rc;
		fp->autoextend.zero_fill = (enum zero_fill)e;
		return 0;
	case K_SPARSE:
		return get_bool(value, &fp->autoextend.sparse, why, len);
	case K_CACHE_MODE:
		if ((rc = get_enum(value, cache_mode_names, &e, why, len)))
			return rc;
		fp->cache.mode = (enum cache_mode)e;
		return 0;
	case K_READAHEAD:
		if ((rc = get_size(value, &u, why, len)))
			return rc;
		/* 1 MiB: the largest FUSE request of libfuse 3.14. */
		if (u < 4096 || u > (1u << 20) || u % 4096) {
			snprintf(why, len, "must be a multiple of 4K from 4K to 1M");
			return -EINVAL;
		}
		fp->cache.readahead = u;
		return 0;
	case K_LOG_PATH: {
		char *copy;

		const char *p;

		if (!*value) {
			snprintf(why, len, "empty; remove the key for no log");
			return -EINVAL;
		}
		for (p = value; *p; p++) {
			if ((unsigned char)*p < 0x20 || *p == 0x7f) {
				snprintf(why, len, "control characters are not allowed in a path");
				return -EINVAL;
			}
		}
		copy = strdup(value);
		if (!copy)
			return -ENOMEM;
		free(c->log.path);
		c->log.path = copy;
		return 0;
	}
	case K_LOG_OPS: {
		const char *p = value;
		unsigned mask = 0;
		char item[64], list[128];

		join_names(log_op_names, list, sizeof(list));
		do {
			next_item(&p, sep, item, sizeof(item));
			if (parse_enum(item, log_op_names, &e)) {
				if (sep == ':' && strchr(item, ','))
					snprintf(
					    why, len,
					    "separate items with ':' in -o (',' ends the option)");
				else if (strcasecmp(item, "trim") == 0)
					snprintf(why, len,
						 "'trim' is now called 'punch' (FALLOC_FL_PUNCH_HOLE); "
						 "allowed: %s, separated by '%c'",
						 list, sep);
				else if (!*item)
					snprintf(why, len,
						 "empty item; allowed: %s, separated by '%c'", list,
						 sep);
				else
					snprintf(why, len,
						 "unknown op '%s'; allowed: %s, separated by '%c'",
						 item, list, sep);
				return -EINVAL;
			}
			mask |= 1u << e;
		} while (*p);
		c->log.ops = mask;
		return 0;
	}
	case K_DISK_MODEL:
		if ((rc = get_enum(value, disk_model_names, &e, why, len)))
			return rc;
		c->disk.model = (enum disk_model_kind)e;
		return 0;
	case K_RPM:
		return get_double(value, &c->disk.rpm, 0, true, why, len);
	case K_SEEK_TRACK:
		return get_double(value, &c->disk.seek_track_ms, 0, false, why, len);
	case K_SEEK_AVG:
		return get_double(value, &c->disk.seek_avg_ms, 0, false, why, len);
	case K_SEEK_FULL:
		return get_double(value, &c->disk.seek_full_ms, 0, false, why, len);
	case K_TRANSFER: {
		const char *p = value;
		char item[64];
		double v[2];
		int n = 0;

		do {
			next_item(&p, sep, item, sizeof(item));
			if (n == 2 || parse_double(item, &v[n]) || !(v[n] > 0)) {
				snprintf(why, len,
					 "expected one rate in MiB/s, or 'outer%cinner' for a "
					 "zoned disk, each > 0",
					 sep);
				return -EINVAL;
			}
			n++;
		} while (*p);
		if (n == 1)
			v[1] = v[0];
		if (v[0] < v[1]) {
			snprintf(why, len,
				 "the outer zone (first) must be at least as fast as the inner");
			return -EINVAL;
		}
		c->disk.transfer_outer_mib_s = v[0];
		c->disk.transfer_inner_mib_s = v[1];
		return 0;
	}
	case K_CAPACITY:
		return get_size(value, &c->disk.capacity, why, len);
	case K_ROTATION:
		if ((rc = get_enum(value, rotation_names, &e, why, len)))
			return rc;
		c->disk.rotation = (enum disk_rotation)e;
		return 0;
	case K_PREFETCH:
		if ((rc = get_double(value, &c->disk.prefetch, 0, false, why, len)))
			return rc;
		if (c->disk.prefetch > DISK_PREFETCH_MAX) {
			snprintf(why, len, "must be at most %d (times the I/O's length)",
				 DISK_PREFETCH_MAX);
			return -EINVAL;
		}
		return 0;
	case K_PREFETCH_MAX:
		return get_size(value, &c->disk.prefetch_max, why, len);
	case K__COUNT:
		break;
	}
	snprintf(why, len, "internal error: no parser");
	return -EINVAL;
}

/* Copies rule key @k from @src to @dst. */
static void copy_key(struct file_params *dst, const struct file_params *src, enum key k)
{
	switch (k) {
	case K_PATTERN:
		dst->layout.pattern = src->layout.pattern;
		break;
	case K_EXTENT_SIZE:
		dst->layout.extent_size = src->layout.extent_size;
		break;
	case K_INITIAL_SIZE:
		dst->layout.initial_size = src->layout.initial_size;
		break;
	case K_GAP:
		dst->layout.gap = src->layout.gap;
		break;
	case K_GAP_MAX:
		dst->layout.gap_max = src->layout.gap_max;
		break;
	case K_CONTIGUOUS_RATIO:
		dst->layout.contiguous_ratio = src->layout.contiguous_ratio;
		break;
	case K_SEED:
		dst->layout.seed = src->layout.seed;
		break;
	case K_NEXT:
		dst->autoextend.next = src->autoextend.next;
		break;
	case K_MAX_SIZE:
		dst->autoextend.max_size = src->autoextend.max_size;
		break;
	case K_ZERO_FILL:
		dst->autoextend.zero_fill = src->autoextend.zero_fill;
		break;
	case K_SPARSE:
		dst->autoextend.sparse = src->autoextend.sparse;
		break;
	case K_CACHE_MODE:
		dst->cache.mode = src->cache.mode;
		break;
	case K_READAHEAD:
		dst->cache.readahead = src->cache.readahead;
		break;
	default:
		break;
	}
}

/* Shortest decimal form that reads back as the same double. */
static void format_double(double v, char *buf, size_t len)
{
	int prec;

	/* Plain decimals ("5400", "0.1") read best; exponents only for extreme values. */
	for (prec = 0; prec <= 17; prec++) {
		int n = snprintf(buf, len, "%.*f", prec, v);

		if (n > 0 && (size_t)n < len && strtod(buf, NULL) == v)
			return;
	}
	snprintf(buf, len, "%.17g", v);
}

static void format_mask(unsigned mask, char *buf, size_t len)
{
	size_t used = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; log_op_names[i] && used < len; i++)
		if (mask & (1u << i))
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "",
						 log_op_names[i]);
}

/* @k's value as an INI file spells it; global keys from @c, rule keys from @fp. */
static void format_value(const struct sfs_config *c, const struct file_params *fp, enum key k,
			 char *buf, size_t len)
{
	char a[32], b[32];

	switch (k) {
	case K_DEVICE_SIZE:
		format_size(c->device.size, buf, (int)len);
		break;
	case K_BLOCK_SIZE:
		format_size(c->device.block_size, buf, (int)len);
		break;
	case K_DIRECT:
		snprintf(buf, len, "%s", c->device.direct ? "true" : "false");
		break;
	case K_POLL_US:
		snprintf(buf, len, "%u", c->device.poll_us);
		break;
	case K_ASYNC_READS:
		snprintf(buf, len, "%s", c->device.async_reads ? "true" : "false");
		break;
	case K_PATTERN:
		snprintf(buf, len, "%s", pattern_name(fp->layout.pattern));
		break;
	case K_EXTENT_SIZE:
		if (fp->layout.extent_size)
			format_size(fp->layout.extent_size, buf, (int)len);
		else
			snprintf(buf, len, "auto");
		break;
	case K_INITIAL_SIZE:
		format_size(fp->layout.initial_size, buf, (int)len);
		break;
	case K_GAP:
		format_size(fp->layout.gap, buf, (int)len);
		break;
	case K_GAP_MAX:
		format_size(fp->layout.gap_max, buf, (int)len);
		break;
	case K_CONTIGUOUS_RATIO:
		format_double(fp->layout.contiguous_ratio, buf, len);
		break;
	case K_SEED:
		snprintf(buf, len, "%" PRIu64, fp->layout.seed);
		break;
	case K_NEXT:
		format_size(fp->autoextend.next, buf, (int)len);
		break;
	case K_MAX_SIZE:
		format_size(fp->autoextend.max_size, buf, (int)len);
		break;
	case K_ZERO_FILL:
		snprintf(buf, len, "%s", zero_fill_name(fp->autoextend.zero_fill));
		break;
	case K_SPARSE:
		snprintf(buf, len, "%s", fp->autoextend.sparse ? "true" : "false");
		break;
	case K_CACHE_MODE:
		snprintf(buf, len, "%s", cache_mode_name(fp->cache.mode));
		break;
	case K_READAHEAD:
		format_size(fp->cache.readahead, buf, (int)len);
		break;
	case K_LOG_PATH:
		snprintf(buf, len, "%s", c->log.path ? c->log.path : "");
		break;
	case K_LOG_OPS:
		format_mask(c->log.ops, buf, len);
		break;
	case K_DISK_MODEL:
		snprintf(buf, len, "%s", name_of(disk_model_names, c->disk.model));
		break;
	case K_RPM:
		format_double(c->disk.rpm, buf, len);
		break;
	case K_SEEK_TRACK:
		format_double(c->disk.seek_track_ms, buf, len);
		break;
	case K_SEEK_AVG:
		format_double(c->disk.seek_avg_ms, buf, len);
		break;
	case K_SEEK_FULL:
		format_double(c->disk.seek_full_ms, buf, len);
		break;
	case K_TRANSFER:
		format_double(c->disk.transfer_outer_mib_s, a, sizeof(a));
		format_double(c->disk.transfer_inner_mib_s, b, sizeof(b));
		if (c->disk.transfer_outer_mib_s == c->disk.transfer_inner_mib_s)
			snprintf(buf, len, "%s", a);
		else
			snprintf(buf, len, "%s,%s", a, b);
		break;
	case K_CAPACITY:
		format_size(c->disk.capacity, buf, (int)len);
		break;
	case K_ROTATION:
		snprintf(buf, len, "%s", name_of(rotation_names, c->disk.rotation));
		break;
	case K_PREFETCH:
		format_double(c->disk.prefetch, buf, len);
		break;
	case K_PREFETCH_MAX:
		format_size(c->disk.prefetch_max, buf, (int)len);
		break;
	case K__COUNT:
		buf[0] = '\0';
		break;
	}
}

/* ---- defaults ---- */

void config_init(struct sfs_config *c)
{
	memset(c, 0, sizeof(*c));
	c->device.size = 0;
	c->device.block_size = 4096;
	c->device.direct = false;
	c->device.poll_us = DEVICE_POLL_US_DEFAULT;
	c->device.async_reads = true;
	c->defaults.layout.pattern = PATTERN_CONTIGUOUS;
	c->defaults.layout.extent_size = 1u << 20;
	c->defaults.layout.initial_size = 0;
	c->defaults.layout.gap = 0;
	c->defaults.layout.gap_max = 0;
	c->defaults.layout.contiguous_ratio = 0.5;
	c->defaults.layout.seed = 1;
	c->defaults.autoextend.next = 0;
	c->defaults.autoextend.max_size = 0;
	c->defaults.autoextend.zero_fill = ZERO_FILL_WRITE;
	c->defaults.autoextend.sparse = false;
	c->defaults.cache.mode = CACHE_NONE;
	c->defaults.cache.readahead = 128u << 10;
	c->log.path = NULL;
	c->log.ops = LOG_READ | LOG_EXTEND;
	c->disk.model = DISK_NONE;
	c->disk.rpm = 7200;
	c->disk.seek_track_ms = 1.0;
	c->disk.seek_avg_ms = 8.5;
	c->disk.seek_full_ms = 18;
	c->disk.transfer_outer_mib_s = 150;
	c->disk.transfer_inner_mib_s = 150;
	c->disk.capacity = 0;
	c->disk.rotation = ROTATION_PHASE;
	c->disk.prefetch = 0;
	c->disk.prefetch_max = 512u << 10;
	c->rules = NULL;
	c->nrules = 0;
	c->source = NULL;
	c->state = NULL;
}

void config_free(struct sfs_config *c)
{
	size_t i;

	for (i = 0; i < c->nrules; i++)
		free(c->rules[i].glob);
	free(c->rules);
	free(c->log.path);
	free(c->source);
	state_free(c->state);
	memset(c, 0, sizeof(*c));
}

/* ---- INI file ---- */

struct parse_ctx {
	struct sfs_config *c;
	struct config_state *st;
	const char *path; /* as the caller named the file, for messages */
	const char *file; /* state's copy, for origins */
	const char *buf;
	size_t len, pos;
	unsigned line;			     /* of the line last handed to inih */
	bool content;			     /* a section or key seen */
	enum section sec;		     /* current section */
	long rule;			     /* current rule index in [file] sections */
	unsigned sec_line[NGLOBAL_SECTIONS]; /* where each global section began; 0 = not seen */
	uint64_t sec_keys;		     /* keys the current section wrote */
	unsigned key_line[K__COUNT];	     /* ... and where */
	char *err;
	size_t errlen;
	int rc; /* first error; 0 while none */
};

/*
 * Length in bytes of the valid UTF-8 sequence at @s (at most @n bytes),
 * 0 when it is not one (RFC 3629: no overlongs, no surrogates, <= U+10FFFF).
 */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

__attribute__((format(printf, 2, 3))) static void parse_fail(struct parse_ctx *x, const char *fmt,
							     ...)
{
	char msg[512];
	va_list ap;

	if (x->rc)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	seterr(x->err, x->errlen, "%s:%u: %s", x->path, x->line, msg);
	x->rc = -EINVAL;
}

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* After a header's ']': only blanks or a comment may follow. */
static bool header_tail_ok(const char *p, const char *end)
{
	while (p < end && is_blank(*p))
		p++;
	return p == end || *p == ';' || *p == '#';
}

/* Parses the header in [@s, @end) (starting at '[') and makes it current.  Returns 0 or -errno. */
static int parse_header(struct parse_ctx *x, const char *s, const char *end)
{
	const char *p = s + 1, *q, *close;
	char name[64];
	size_t n;
	unsigned i;
	long r;

	x->sec_keys = 0;
	while (p < end && is_blank(*p))
		p++;
	if (end - p >= 4 && memcmp(p, "file", 4) == 0 &&
	    (p + 4 == end || is_blank(p[4]) || p[4] == '"' || p[4] == ']')) {
		char *glob;

		q = p + 4;
		while (q < end && is_blank(*q))
			q++;
		if (q == end || *q != '"') {
			parse_fail(x, "[file] needs a glob in double quotes: [file \"GLOB\"]");
			return x->rc;
		}
		close = memchr(q + 1, '"', (size_t)(end - q - 1));
		if (!close) {
			parse_fail(x, "[file \"...: missing closing '\"' of the glob");
			return x->rc;
		}
		if (close == q + 1) {
			parse_fail(x, "[file \"\"]: empty glob");
			return x->rc;
		}
		p = close + 1;
		while (p < end && is_blank(*p))
			p++;
		if (p == end || *p != ']' || !header_tail_ok(p + 1, end)) {
			parse_fail(x,
				   "[file \"GLOB\"]: expected ']' after the glob and nothing but a "
				   "comment after it");
			return x->rc;
		}
		glob = strndup(q + 1, (size_t)(close - q - 1));
		if (!glob)
			return x->rc = -ENOMEM;
		for (i = 0; i < x->c->nrules; i++) {
			if (strcmp(x->c->rules[i].glob, glob) == 0 && x->c->rules[i].line) {
				parse_fail(x, "duplicated section [file \"%s\"] (first at line %u)",
					   glob, x->c->rules[i].line);
				free(glob);
				return x->rc;
			}
		}
		r = add_rule(x->c, glob, x->line, x->file);
		free(glob);
		if (r < 0)
			return x->rc = (int)r;
		x->sec = SEC_FILE;
		x->rule = r;
		return 0;
	}
	close = memchr(p, ']', (size_t)(end - p));
	if (!close) {
		parse_fail(x, "section header without ']'");
		return x->rc;
	}
	if (!header_tail_ok(close + 1, end)) {
		parse_fail(x, "unexpected text after the section header's ']'");
		return x->rc;
	}
	q = close;
	while (q > p && is_blank(q[-1]))
		q--;
	n = (size_t)(q - p) < sizeof(name) - 1 ? (size_t)(q - p) : sizeof(name) - 1;
	memcpy(name, p, n);
	name[n] = '\0';
	for (i = 0; i < NGLOBAL_SECTIONS; i++)
		if (strcmp(name, section_names[i]) == 0)
			break;
	if (i == NGLOBAL_SECTIONS) {
		parse_fail(x,
			   "unknown section [%s]; allowed: [device], [layout], [autoextend], "
			   "[cache], [log], [disk], [file \"GLOB\"]",
			   name);
		return x->rc;
	}
	if (x->sec_line[i]) {
		parse_fail(x, "duplicated section [%s] (first at line %u)", name, x->sec_line[i]);
		return x->rc;
	}
	x->sec_line[i] = x->line;
	x->sec = (enum section)i;
	return 0;
}

/*
 * inih's reader: hands over the next line of the buffer, with leading
 * blanks stripped (no continuation lines), comments as blank lines and
 * headers as "[s]", so that inih's line count stays ours.
 */
static char *reader(char *str, int num, void *stream)
{
	struct parse_ctx *x = stream;
	const char *s, *eol, *end, *p;
	size_t n;

	if (x->rc || x->pos >= x->len)
		return NULL;
	s = x->buf + x->pos;
	eol = memchr(s, '\n', x->len - x->pos);
	if (!eol)
		eol = x->buf + x->len;
	x->pos = (size_t)(eol - x->buf) + 1;
	x->line++;
	if (x->line == 1 && eol - s >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3; /* UTF-8 byte order mark */
	for (p = s; p < eol;) {
		size_t l = *p ? utf8_len((const unsigned char *)p, (size_t)(eol - p)) : 0;

		if (!l) {
			parse_fail(x, "not UTF-8 text (byte 0x%02x at column %u)",
				   (unsigned)(unsigned char)*p, (unsigned)(p - s) + 1);
			return NULL;
		}
		p += l;
	}
	while (s < eol && is_blank(*s))
		s++;
	end = eol;
	while (end > s && is_blank(end[-1]))
		end--;
	if (s == end || *s == ';' || *s == '#') {
		snprintf(str, (size_t)num, "\n");
		return str;
	}
	x->content = true;
	if (*s == '[') {
		if (parse_header(x, s, end))
			return NULL;
		snprintf(str, (size_t)num, "[s]\n");
		return str;
	}
	n = (size_t)(end - s);
	if (n + 2 > (size_t)num) {
		parse_fail(x, "line too long (more than %d characters)", num - 2);
		return NULL;
	}
	if (!memchr(s, '=', n) && !memchr(s, ':', n)) {
		parse_fail(x, "'%.*s' is not 'key = value', a [section] or a comment",
			   (int)(n > 60 ? 60 : n), s);
		return NULL;
	}
	memcpy(str, s, n);
	str[n] = '\n';
	str[n + 1] = '\0';
	return str;
}

static int handler(void *user, const char *inih_section, const char *name, const char *value)
{
	struct parse_ctx *x = user;
	struct config_state *st = x->st;
	const char *glob = x->sec == SEC_FILE ? x->c->rules[x->rule].glob : NULL;
	char label[300], why[256], list[300];
	enum key k;
	int rc;

	(void)inih_section; /* ours is complete (see reader()) */
	if (x->rc)
		return 0;
	if (x->sec == SEC_NONE) {
		for (k = 0; k < K__COUNT; k++)
			if (strcmp(keys[k].name, name) == 0)
				break;
		if (k < K__COUNT)
			parse_fail(x, "key '%s' outside any section (it belongs in [%s])", name,
				   section_names[keys[k].sec]);
		else
			parse_fail(x, "key '%s' outside any section", name);
		return 0;
	}
	section_label(x->sec, glob, label, sizeof(label));
	k = find_key(x->sec, name);
	if (k == K__COUNT) {
		allowed_keys(x->sec, list, sizeof(list));
		parse_fail(x, "%s unknown key '%s'; allowed: %s", label, name, list);
		return 0;
	}
	if (x->sec_keys & BIT(k)) {
		parse_fail(x, "%s duplicated key '%s' (first at line %u)", label, name,
			   x->key_line[k]);
		return 0;
	}
	x->sec_keys |= BIT(k);
	x->key_line[k] = x->line;
	rc = apply_value(x->c, x->sec == SEC_FILE ? &x->c->rules[x->rule].params : &x->c->defaults,
			 k, value, ',', why, sizeof(why));
	if (rc == -ENOMEM) {
		x->rc = rc;
		return 0;
	}
	if (rc) {
		parse_fail(x, "%s %s = %s: %s", label, name, value, why);
		return 0;
	}
	if (x->sec == SEC_FILE) {
		st->rules[x->rule].set |= BIT(k);
		st->rules[x->rule].line[k] = x->line;
	} else {
		st->set |= BIT(k);
		st->autoset &= ~BIT(k);
		free(st->origin[k].option);
		st->origin[k].option = NULL;
		st->origin[k].file = x->file;
		st->origin[k].line = x->line;
	}
	return 1;
}

/* Reads all of @path into a malloc'd buffer.  Returns 0 or -errno. */
static int read_file(const char *path, char **out, size_t *outlen)
{
	size_t len = 0, cap = 8192;
	char *buf = malloc(cap);
	int fd, rc = 0;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return -errno;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *nb;

			if (cap > CONFIG_MAX_BYTES) {
				rc = -EFBIG;
				break;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (rc) {
		free(buf);
		return rc;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

int config_load_file(struct sfs_config *c, const char *path, char *err, size_t errlen)
{
	struct parse_ctx x = {
	    .c = c,
	    .path = path,
	    .sec = SEC_NONE,
	    .rule = -1,
	    .err = err,
	    .errlen = errlen,
	};
	char *buf = NULL, *src;
	size_t len = 0;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	x.st = state_get(c);
	if (!x.st || !(x.file = state_add_file(x.st, path)) || !(src = strdup(path))) {
		seterr(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	free(c->source);
	c->source = src;
	rc = read_file(path, &buf, &len);
	if (rc) {
		seterr(err, errlen, "%s: %s", path,
		       rc == -EFBIG ? "larger than 1 MiB; not a configuration file"
				    : strerror(-rc));
		return rc;
	}
	x.buf = buf;
	x.len = len;
	rc = ini_parse_stream(reader, &x, handler, &x);
	free(buf);
	if (x.rc == -ENOMEM || rc == -2) {
		seterr(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	if (x.rc)
		return x.rc;
	if (rc > 0) {
		seterr(err, errlen,
		       "%s:%d: syntax error: expected 'key = value', a [section] or a comment",
		       path, rc);
		return -EINVAL;
	}
	if (rc < 0) {
		seterr(err, errlen, "%s: cannot parse", path);
		return -EIO;
	}
	if (!x.content) {
		seterr(err, errlen, "%s: empty configuration file (no section, no key)", path);
		return -EINVAL;
	}
	return 0;
}

/* ---- overrides ---- */

int config_set(struct sfs_config *c, const char *assignment, char *err, size_t errlen)
{
	const char *eq = strchr(assignment, '='), *dot;
	char secname[32], name[64], label[300], why[256], list[300];
	struct config_state *st;
	const char *value;
	enum section sec;
	enum key k;
	size_t n;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	dot = eq ? memchr(assignment, '.', (size_t)(eq - assignment)) : NULL;
	if (!eq || !dot) {
		seterr(err, errlen, "option -o %s: expected SECTION.KEY=VALUE", assignment);
		return -EINVAL;
	}
	n = (size_t)(dot - assignment);
	snprintf(secname, sizeof(secname), "%.*s",
		 (int)(n < sizeof(secname) ? n : sizeof(secname) - 1), assignment);
	n = (size_t)(eq - dot - 1);
	snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1),
		 dot + 1);
	value = eq + 1;
	for (sec = 0; sec < NGLOBAL_SECTIONS; sec++)
		if (strcmp(secname, section_names[sec]) == 0)
			break;
	if (strcmp(secname, "file") == 0 || strncmp(secname, "file ", 5) == 0) {
		seterr(err, errlen,
		       "option -o %s: [file \"GLOB\"] rules can only be written in the "
		       "configuration file",
		       assignment);
		return -EINVAL;
	}
	if (sec == NGLOBAL_SECTIONS) {
		seterr(err, errlen,
		       "option -o %s: unknown section '%s'; allowed: device, layout, autoextend, "
		       "cache, log, disk",
		       assignment, secname);
		return -EINVAL;
	}
	section_label(sec, NULL, label, sizeof(label));
	k = find_key(sec, name);
	if (k == K__COUNT) {
		allowed_keys(sec, list, sizeof(list));
		seterr(err, errlen, "option -o %s: %s unknown key '%s'; allowed: %s", assignment,
		       label, name, list);
		return -EINVAL;
	}
	st = state_get(c);
	if (!st) {
		seterr(err, errlen, "option -o %s: out of memory", assignment);
		return -ENOMEM;
	}
	rc = apply_value(c, &c->defaults, k, value, ':', why, sizeof(why));
	if (rc == -ENOMEM) {
		seterr(err, errlen, "option -o %s: out of memory", assignment);
		return rc;
	}
	if (rc) {
		seterr(err, errlen, "option -o %s: %s %s = %s: %s", assignment, label, name, value,
		       why);
		return rc;
	}
	free(st->origin[k].option);
	st->origin[k].option = strdup(assignment);
	st->origin[k].file = NULL;
	st->origin[k].line = 0;
	st->set |= BIT(k);
	st->autoset &= ~BIT(k); /* a new value, not config_finish()'s resolution */
	return 0;
}

/* ---- config_finish ---- */

/* A scope of checks: the global values (rule < 0) or one rule. */
struct scope {
	const struct sfs_config *c;
	struct config_state *st;
	long rule;
	struct file_params *fp;
	uint64_t set;	   /* keys written in this scope */
	uint64_t *autoset; /* where the scope records keys resolved from 0 (auto) */
	const char *glob;  /* the rule's, NULL for the global scope */
};

/* "[layout]" for key @k of the global scope, "[file "GLOB"]" in a rule. */
static const char *label(const struct scope *s, enum key k, char *buf, size_t len)
{
	return section_label(s->glob ? SEC_FILE : keys[k].sec, s->glob, buf, len);
}

static uint64_t scope_global_set(const struct scope *s)
{
	return s->st ? s->st->set : 0;
}

/* "file:line: " or "option -o ...: " for key @k of scope @s; "" when nothing names it. */
static const char *where(const struct scope *s, enum key k, char *buf, size_t len)
{
	const struct config_state *st = s->st;

	buf[0] = '\0';
	if (s->rule >= 0 && st && (st->rules[s->rule].set & BIT(k)))
		snprintf(buf, len, "%s:%u: ", st->rules[s->rule].file, st->rules[s->rule].line[k]);
	else if (st && (st->set & BIT(k)) && st->origin[k].option)
		snprintf(buf, len, "option -o %s: ", st->origin[k].option);
	else if (st && (st->set & BIT(k)))
		snprintf(buf, len, "%s:%u: ", st->origin[k].file, st->origin[k].line);
	else if (s->rule >= 0 && st && st->rules[s->rule].file)
		snprintf(buf, len, "%s:%u: ", st->rules[s->rule].file, s->c->rules[s->rule].line);
	else if (s->c->source)
		snprintf(buf, len, "%s: ", s->c->source);
	return buf;
}

static bool scope_wrote(const struct scope *s, enum key k)
{
	return (s->set & BIT(k)) || (s->rule >= 0 && (scope_global_set(s) & BIT(k)));
}

/* "", " (default)" after a value nobody wrote, or " (auto)" after a resolved one. */
static const char *dflt(const struct scope *s, enum key k)
{
	if (s->autoset && (*s->autoset & BIT(k)))
		return " (auto)";
	return scope_wrote(s, k) ? "" : " (default)";
}

/* where() for a value that breaks a limit: the key's place, else the device size's. */
static const char *blame(const struct scope *s, enum key k, char *buf, size_t len)
{
	return where(s, scope_wrote(s, k) ? k : K_DEVICE_SIZE, buf, len);
}

/* The pattern that reads key @k, or -1 when every pattern does. */
static int key_user(enum key k)
{
	switch (k) {
	case K_INITIAL_SIZE:
		return PATTERN_SINGLE;
	case K_GAP:
		return PATTERN_INTERLEAVED;
	case K_GAP_MAX:
	case K_CONTIGUOUS_RATIO:
	case K_SEED:
		return PATTERN_RANDOM;
	default:
		return -1;
	}
}

static bool pattern_reads(enum pattern p, enum key k)
{
	int user = key_user(k);

	return user < 0 || user == (int)p;
}

static uint64_t size_of_key(const struct file_params *fp, enum key k)
{
	switch (k) {
	case K_EXTENT_SIZE:
		return fp->layout.extent_size;
	case K_INITIAL_SIZE:
		return fp->layout.initial_size;
	case K_GAP:
		return fp->layout.gap;
	case K_GAP_MAX:
		return fp->layout.gap_max;
	case K_NEXT:
		return fp->autoextend.next;
	case K_MAX_SIZE:
		return fp->autoextend.max_size;
	case K_READAHEAD:
		return fp->cache.readahead;
	default:
		return 0;
	}
}

/* A size key whose 0 means "not set" (initial_size) or "auto" (gap, gap_max): never a conflict. */
static bool zero_is_unset(const struct file_params *fp, enum key k)
{
	return (k == K_INITIAL_SIZE || k == K_GAP || k == K_GAP_MAX) && size_of_key(fp, k) == 0;
}

/* extent_size auto: Oracle AUTOALLOCATE starts with 64 KiB (see placement.h). */
#define AUTO_FIRST_EXTENT (UINT64_C(64) << 10)
/* ... and the auto gap and gap_max count it as its 1 MiB step (files of 1M to 64M). */
#define AUTO_EXTENT_STEP (UINT64_C(1) << 20)
/* gap_max auto = GAP_MAX_EXTENTS x extent_size. */
#define GAP_MAX_EXTENTS 64

/* The first extent of a file: what autoextend.max_size must hold at least. */
static uint64_t first_extent(const struct layout_params *l)
{
	if (l->pattern == PATTERN_SINGLE && l->initial_size)
		return l->initial_size;
	return l->extent_size ? l->extent_size : AUTO_FIRST_EXTENT;
}

/*
 * Precedence of the place a key was set: 0 for the built-in default, 1 + i
 * for the i-th file loaded, SIZE_MAX for an -o override.  A later place
 * overrides an earlier one.
 */
static size_t file_rank(const struct config_state *st, const char *file)
{
	size_t i;

	for (i = 0; file && i < st->nfiles; i++)
		if (st->files[i] == file)
			return i + 1;
	return 0;
}

static size_t global_rank(const struct config_state *st, enum key k)
{
	if (!(st->set & BIT(k)))
		return 0;
	if (st->origin[k].option)
		return SIZE_MAX;
	return file_rank(st, st->origin[k].file);
}

/* The rank of key @k as scope @s has it: written in the rule, else inherited. */
static size_t scope_rank(const struct scope *s, enum key k)
{
	if (s->rule >= 0 && (s->st->rules[s->rule].set & BIT(k)))
		return file_rank(s->st, s->st->rules[s->rule].file);
	return global_rank(s->st, k);
}

/* "set by option -o X" or "set at FILE:LINE" for an inherited or global pattern; "" otherwise. */
static const char *pattern_from(const struct scope *s, char *buf, size_t len)
{
	const struct config_state *st = s->st;

	buf[0] = '\0';
	if ((s->rule >= 0 && (s->set & BIT(K_PATTERN))) || !(st->set & BIT(K_PATTERN)))
		return buf;
	if (st->origin[K_PATTERN].option)
		snprintf(buf, len, "set by option -o %s", st->origin[K_PATTERN].option);
	else
		snprintf(buf, len, "set at %s:%u", st->origin[K_PATTERN].file,
			 st->origin[K_PATTERN].line);
	return buf;
}

static int add_note(struct config_state *st, const char *text)
{
	char **v = realloc(st->notes, (st->nnotes + 1) * sizeof(*v));
	char *copy;

	if (!v)
		return -ENOMEM;
	st->notes = v;
	copy = strdup(text);
	if (!copy)
		return -ENOMEM;
	one_line(copy);
	st->notes[st->nnotes++] = copy;
	return 0;
}

/*
 * Keys written in scope @s that its pattern does not read.  Written in the
 * same place as the pattern (one section, or both -o overrides) or in a
 * later place, such a key is an error: the user asked for it with that
 * pattern.  When the pattern was set in a later place (an -o override over
 * the file), the key is dropped as if never written: it takes @base's
 * value, and a note for config_write_ini() says so.
 */
static int drop_unused_keys(struct scope *s, const struct file_params *base, char *err,
			    size_t errlen)
{
	static const enum key pattern_keys[] = {K_INITIAL_SIZE, K_GAP, K_GAP_MAX,
						K_CONTIGUOUS_RATIO, K_SEED};
	struct config_state *st = s->st;
	enum pattern pat = s->fp->layout.pattern;
	size_t prank = scope_rank(s, K_PATTERN), i;
	char at[400], v[64], lb[300], from[300], note[1400];

	pattern_from(s, from, sizeof(from));
	for (i = 0; i < sizeof(pattern_keys) / sizeof(pattern_keys[0]); i++) {
		enum key k = pattern_keys[i];

		if (!(s->set & BIT(k)) || pattern_reads(pat, k) || zero_is_unset(s->fp, k))
			continue;
		where(s, k, at, sizeof(at));
		label(s, k, lb, sizeof(lb));
		format_value(s->c, s->fp, k, v, sizeof(v));
		if (prank > scope_rank(s, k)) {
			snprintf(note, sizeof(note),
				 "ignored: %s%s %s = %s (pattern %s, %s, does not read it)", at, lb,
				 keys[k].name, v, pattern_name(pat), from);
			if (add_note(st, note)) {
				seterr(err, errlen, "out of memory");
				return -ENOMEM;
			}
			copy_key(s->fp, base, k);
			s->set &= ~BIT(k);
			if (s->rule >= 0)
				st->rules[s->rule].set &= ~BIT(k);
			else
				st->set &= ~BIT(k);
			continue;
		}
		seterr(err, errlen, "%s%s %s = %s: pattern %s%s%s%s does not use %s; only %s does",
		       at, lb, keys[k].name, v, pattern_name(pat), from[0] ? " (" : "", from,
		       from[0] ? ")" : "", keys[k].name, pattern_name((enum pattern)key_user(k)));
		return -EINVAL;
	}
	return 0;
}

/* Makes the keys config_finish() resolved from auto 0 again (a second config_finish()). */
static void unresolve(struct file_params *fp, uint64_t *autoset)
{
	if (*autoset & BIT(K_GAP))
		fp->layout.gap = 0;
	if (*autoset & BIT(K_GAP_MAX))
		fp->layout.gap_max = 0;
	*autoset = 0;
}

/*
 * Replaces a 0 (auto) gap and gap_max of scope @s (see struct
 * layout_params): gap = extent_size, gap_max = 64 x extent_size at most the
 * device in whole blocks, an auto extent_size counting as 1M.  A rule
 * whose pattern does not read the key takes the global value @global
 * instead: no pattern reads it there, and config_write_ini() output then
 * loads back to the same values.
 */
static void resolve_auto(struct scope *s, const struct file_params *global, uint64_t device)
{
	struct layout_params *l = &s->fp->layout;
	uint64_t ext = l->extent_size ? l->extent_size : AUTO_EXTENT_STEP;
	uint64_t bs = s->c->device.block_size;

	if (l->gap == 0) {
		if (s->rule >= 0 && !pattern_reads(l->pattern, K_GAP))
			l->gap = global->layout.gap;
		else
			l->gap = ext;
		*s->autoset |= BIT(K_GAP);
	}
	if (l->gap_max == 0) {
		if (s->rule >= 0 && !pattern_reads(l->pattern, K_GAP_MAX)) {
			l->gap_max = global->layout.gap_max;
		} else {
			uint64_t g =
			    ext > UINT64_MAX / GAP_MAX_EXTENTS ? UINT64_MAX : GAP_MAX_EXTENTS * ext;

			if (device && g > device / bs * bs)
				g = device / bs * bs;
			l->gap_max = g;
		}
		*s->autoset |= BIT(K_GAP_MAX);
	}
}

/* Checks the scope's values against each other, the block size and the @device size (0: not known).
 */
static int check_scope(const struct scope *s, uint64_t device, char *err, size_t errlen)
{
	static const enum key block_keys[] = {K_EXTENT_SIZE, K_INITIAL_SIZE, K_GAP,	 K_GAP_MAX,
					      K_NEXT,	     K_MAX_SIZE,     K_READAHEAD};
	static const enum key device_keys[] = {K_INITIAL_SIZE, K_NEXT, K_GAP, K_GAP_MAX};
	const struct sfs_config *c = s->c;
	const struct file_params *fp = s->fp;
	enum pattern pat = fp->layout.pattern;
	uint32_t bs = c->device.block_size;
	uint64_t ext = fp->layout.extent_size ? fp->layout.extent_size : AUTO_FIRST_EXTENT;
	char at[400], v[64], w[64], x[64], bsbuf[32], lb[300];
	size_t i;

	format_size(bs, bsbuf, sizeof(bsbuf));
	if (pat == PATTERN_SINGLE && fp->layout.initial_size == 0) {
		seterr(err, errlen,
		       "%s%s pattern = single needs initial_size (the size of the first extent)",
		       where(s, K_PATTERN, at, sizeof(at)), label(s, K_PATTERN, lb, sizeof(lb)));
		return -EINVAL;
	}
	/* After resolve_auto(), only an explicit value or a device below one block gets here. */
	if ((pat == PATTERN_RANDOM && fp->layout.gap_max < bs) ||
	    (pat == PATTERN_INTERLEAVED && fp->layout.gap < bs)) {
		enum key k = pat == PATTERN_RANDOM ? K_GAP_MAX : K_GAP;

		format_value(c, fp, k, v, sizeof(v));
		seterr(err, errlen,
		       "%s%s %s = %s%s: pattern %s needs %s >= [device] block_size (%s)",
		       where(s, scope_wrote(s, k) ? k : K_PATTERN, at, sizeof(at)),
		       label(s, k, lb, sizeof(lb)), keys[k].name, v, dflt(s, k), pattern_name(pat),
		       keys[k].name, bsbuf);
		return -EINVAL;
	}
	for (i = 0; i < sizeof(block_keys) / sizeof(block_keys[0]); i++) {
		enum key k = block_keys[i];

		if (!pattern_reads(pat, k) || size_of_key(fp, k) % bs == 0)
			continue;
		format_value(c, fp, k, v, sizeof(v));
		seterr(err, errlen, "%s%s %s = %s%s: not a multiple of [device] block_size (%s)",
		       where(s, scope_wrote(s, k) ? k : K_BLOCK_SIZE, at, sizeof(at)),
		       label(s, k, lb, sizeof(lb)), keys[k].name, v, dflt(s, k), bsbuf);
		return -EINVAL;
	}
	if (device) {
		/* Every extent of a file must fit, or every write past the first fails. */
		format_size(device, w, sizeof(w));
		if (ext > device) {
			format_value(c, fp, K_EXTENT_SIZE, v, sizeof(v));
			if (fp->layout.extent_size)
				seterr(err, errlen,
				       "%s%s extent_size = %s%s: larger than the device (%s)",
				       blame(s, K_EXTENT_SIZE, at, sizeof(at)),
				       label(s, K_EXTENT_SIZE, lb, sizeof(lb)), v,
				       dflt(s, K_EXTENT_SIZE), w);
			else
				seterr(err, errlen,
				       "%s%s extent_size = auto%s: its first extent (%s) is larger "
				       "than "
				       "the device (%s)",
				       blame(s, K_EXTENT_SIZE, at, sizeof(at)),
				       label(s, K_EXTENT_SIZE, lb, sizeof(lb)),
				       dflt(s, K_EXTENT_SIZE), format_size(ext, x, sizeof(x)), w);
			return -EINVAL;
		}
		for (i = 0; i < sizeof(device_keys) / sizeof(device_keys[0]); i++) {
			enum key k = device_keys[i];

			if (!pattern_reads(pat, k) || size_of_key(fp, k) <= device)
				continue;
			format_value(c, fp, k, v, sizeof(v));
			seterr(err, errlen, "%s%s %s = %s%s: larger than the device (%s)",
			       blame(s, k, at, sizeof(at)), label(s, k, lb, sizeof(lb)),
			       keys[k].name, v, dflt(s, k), w);
			return -EINVAL;
		}
		/* interleaved reserves an extent and its gap as one run. */
		if (pat == PATTERN_INTERLEAVED && ext + fp->layout.gap > device) {
			format_value(c, fp, K_GAP, v, sizeof(v));
			seterr(
			    err, errlen,
			    "%s%s gap = %s%s: pattern interleaved needs extent_size + gap (%s) "
			    "within the device (%s)",
			    blame(s, scope_wrote(s, K_GAP) ? K_GAP : K_EXTENT_SIZE, at, sizeof(at)),
			    label(s, K_GAP, lb, sizeof(lb)), v, dflt(s, K_GAP),
			    format_size(ext + fp->layout.gap, x, sizeof(x)), w);
			return -EINVAL;
		}
	}
	if (fp->autoextend.max_size && fp->autoextend.max_size < first_extent(&fp->layout)) {
		format_value(c, fp, K_MAX_SIZE, v, sizeof(v));
		seterr(err, errlen,
		       "%s%s max_size = %s: smaller than one extent (%s); 0 means unlimited",
		       where(s, K_MAX_SIZE, at, sizeof(at)), label(s, K_MAX_SIZE, lb, sizeof(lb)),
		       v, format_size(first_extent(&fp->layout), w, sizeof(w)));
		return -EINVAL;
	}
	return 0;
}

static int check_disk(const struct sfs_config *c, struct config_state *st, char *err, size_t errlen)
{
	const struct disk_params *d = &c->disk;
	struct scope s = {.c = c, .st = st, .rule = -1, .set = st ? st->set : 0};
	char at[400], a[32], b[32], m[32];
	enum key k;

	if (d->seek_track_ms <= d->seek_avg_ms && d->seek_avg_ms <= d->seek_full_ms)
		return 0;
	if (d->seek_track_ms > d->seek_avg_ms)
		k = (s.set & BIT(K_SEEK_TRACK)) ? K_SEEK_TRACK : K_SEEK_AVG;
	else
		k = (s.set & BIT(K_SEEK_FULL)) ? K_SEEK_FULL : K_SEEK_AVG;
	format_double(d->seek_track_ms, a, sizeof(a));
	format_double(d->seek_avg_ms, m, sizeof(m));
	format_double(d->seek_full_ms, b, sizeof(b));
	seterr(err, errlen,
	       "%s[disk] %s: seek times must grow: seek_track_ms (%s) <= seek_avg_ms (%s) <= "
	       "seek_full_ms (%s)",
	       where(&s, k, at, sizeof(at)), keys[k].name, a, m, b);
	return -EINVAL;
}

/*
 * Order matters: the global scope drops its ignored keys before the rules
 * copy what they inherit, and the rules inherit the global values before
 * auto keys are resolved (@raw), so that each rule resolves them with its
 * own extent_size.
 */
int config_finish(struct sfs_config *c, uint64_t device_size, char *err, size_t errlen)
{
	struct config_state *st;
	struct sfs_config builtin;
	struct file_params raw;
	struct scope s;
	uint64_t device;
	bool have_shm = false;
	size_t i;
	long r;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	st = state_get(c);
	if (!st) {
		seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	device = c->device.size ? c->device.size : device_size;
	c->device.effective_size = device;
	config_init(&builtin); /* the built-in values; owns nothing */
	unresolve(&c->defaults, &st->autoset);
	rc = check_disk(c, st, err, errlen);
	if (rc)
		return rc;
	s = (struct scope){.c = c,
			   .st = st,
			   .rule = -1,
			   .fp = &c->defaults,
			   .set = st->set,
			   .autoset = &st->autoset};
	rc = drop_unused_keys(&s, &builtin.defaults, err, errlen);
	if (rc)
		return rc;
	raw = c->defaults;
	resolve_auto(&s, &c->defaults, device);
	rc = check_scope(&s, device, err, errlen);
	if (rc)
		return rc;
	for (i = 0; i < c->nrules; i++)
		if (strcmp(c->rules[i].glob, "*-shm") == 0)
			have_shm = true;
	if (!have_shm) {
		/*
		 * SQLite's WAL index (the -shm file) is mmapped, and libfuse 3.14
		 * cannot mmap a direct-I/O file: kernel cache mode.
		 */
		r = add_rule(c, "*-shm", 0, NULL);
		if (r < 0) {
			seterr(err, errlen, "out of memory");
			return (int)r;
		}
		c->rules[r].params.cache.mode = CACHE_KERNEL;
		st->rules[r].set = BIT(K_CACHE_MODE);
	}
	for (i = 0; i < c->nrules; i++) {
		struct file_rule *rule = &c->rules[i];
		struct rule_state *rs = &st->rules[i];
		enum key k;

		unresolve(&rule->params, &rs->autoset);
		for (k = 0; k < K__COUNT; k++)
			if (rule_key(k) && !(rs->set & BIT(k)))
				copy_key(&rule->params, &raw, k);
		s = (struct scope){.c = c,
				   .st = st,
				   .rule = (long)i,
				   .fp = &rule->params,
				   .set = rs->set,
				   .autoset = &rs->autoset,
				   .glob = rule->glob};
		rc = drop_unused_keys(&s, &raw, err, errlen);
		if (rc)
			return rc;
		resolve_auto(&s, &c->defaults, device);
		rc = check_scope(&s, device, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

const struct file_params *config_for_path(const struct sfs_config *c, const char *path)
{
	size_t i;

	for (i = 0; i < c->nrules; i++)
		if (fnmatch(c->rules[i].glob, path, 0) == 0)
			return &c->rules[i].params;
	return &c->defaults;
}

/* ---- config_write_ini ---- */

/* Writes the rule keys of @fp; keys its pattern does not read become comments. */
static void write_params(FILE *f, const struct sfs_config *c, const struct file_params *fp,
			 bool with_headers)
{
	enum section cur = SEC_NONE;
	char v[64];
	enum key k;

	for (k = 0; k < K__COUNT; k++) {
		int user;

		if (!rule_key(k))
			continue;
		if (with_headers && keys[k].sec != cur) {
			cur = keys[k].sec;
			fprintf(f, "\n[%s]\n", section_names[cur]);
		}
		format_value(c, fp, k, v, sizeof(v));
		user = key_user(k);
		if (user >= 0 && user != (int)fp->layout.pattern)
			fprintf(f, "# %s = %s (only the %s pattern reads it)\n", keys[k].name, v,
				pattern_name((enum pattern)user));
		else
			fprintf(f, "%s = %s\n", keys[k].name, v);
	}
}

char *config_write_ini(const struct sfs_config *c)
{
	char *out = NULL, v[64];
	size_t len = 0, i;
	FILE *f = open_memstream(&out, &len);
	enum key k;

	if (!f)
		return NULL;
	fprintf(f, "# scatterfs effective configuration (every key; sizes in bytes, K/M/G/T = "
		   "powers of 1024)\n");
	if (c->source) {
		char *src = strdup(c->source);

		if (src)
			one_line(src); /* a newline in the path would end the comment */
		fprintf(f, "# loaded from %s\n", src ? src : "?");
		free(src);
	}
	/* Keys dropped because the pattern was changed later (see drop_unused_keys()). */
	for (i = 0; c->state && i < c->state->nnotes; i++)
		fprintf(f, "# %s\n", c->state->notes[i]);
	fprintf(f, "\n[device]\n");
	for (k = 0; k < K__COUNT; k++)
		if (keys[k].sec == SEC_DEVICE) {
			if (k == K_DEVICE_SIZE && c->device.effective_size)
				/* The size in use, which "0 = the backing's size" does not tell. */
				format_size(c->device.effective_size, v, sizeof(v));
			else
				format_value(c, &c->defaults, k, v, sizeof(v));
			fprintf(f, "%s = %s\n", keys[k].name, v);
		}
	write_params(f, c, &c->defaults, true);
	fprintf(f, "\n[log]\n");
	if (c->log.path)
		fprintf(f, "path = %s\n", c->log.path);
	else
		fprintf(f, "# path = (none: no request log)\n");
	format_value(c, &c->defaults, K_LOG_OPS, v, sizeof(v));
	fprintf(f, "ops = %s\n", v);
	fprintf(f, "\n[disk]\n");
	for (k = 0; k < K__COUNT; k++)
		if (keys[k].sec == SEC_DISK) {
			format_value(c, &c->defaults, k, v, sizeof(v));
			fprintf(f, "%s = %s\n", keys[k].name, v);
		}
	for (i = 0; i < c->nrules; i++) {
		const struct file_rule *r = &c->rules[i];

		if (r->line == 0) {
			/*
			 * Commented out: loading it back would make it a user rule.
			 * Uncommented, it is a valid rule with the same effect.
			 */
			fprintf(f,
				"\n# Built in: scatterfs adds this rule when no rule is written "
				"for \"%s\" files\n",
				r->glob);
			fprintf(f, "# (SQLite's memory-mapped WAL index needs the page cache).  "
				   "It is in effect;\n");
			fprintf(f, "# a [file \"%s\"] section of your own replaces it.\n", r->glob);
			fprintf(f, "# [file \"%s\"]\n", r->glob);
			fprintf(f, "# cache.mode = %s\n", cache_mode_name(r->params.cache.mode));
			continue;
		}
		fprintf(f, "\n[file \"%s\"]\n", r->glob);
		write_params(f, c, &r->params, false);
	}
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}
