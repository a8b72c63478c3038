/*
 * Configuration values: parsing one key's value by its row's type and
 * range, writing it back as INI text, copying it between scopes, and the
 * built-in defaults (each row's def parsed as if written in a file).
 *
 * Every message a value can earn is made here or by a row's own parse(),
 * so that the file, the -o overrides and config_init() agree on what a
 * value means.  Numbers are checked more strictly than strtod()/strtoull()
 * would: no "inf", "nan", hexadecimal floats, signs on sizes or fractions
 * of a byte.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_i.h"
#include "disk_model.h"
#include "size.h"

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

/* The row's range message, or the generic @fallback. */
static int out_of_range(const struct config_key *r, const char *fallback, char *why, size_t len)
{
	snprintf(why, len, "%s", r->range_why ? r->range_why : fallback);
	return -EINVAL;
}

static int parse_size_value(const struct config_key *r, const char *value, uint64_t *out, char *why,
			    size_t len)
{
	uint64_t u;
	int rc;

	if ((r->flags & CONFIG_AUTO) && strcasecmp(value, "auto") == 0) {
		*out = 0;
		return 0;
	}
	rc = parse_size(value, &u);
	if (rc) {
		size_error(value, rc, why, len);
		return -EINVAL;
	}
	if (((r->flags & CONFIG_HAS_MIN) && (double)u < r->min) ||
	    ((r->flags & CONFIG_HAS_MAX) && (double)u > r->max) ||
	    ((r->flags & CONFIG_POWER_OF_TWO) && (u & (u - 1))) || (r->multiple && u % r->multiple))
		return out_of_range(r, "out of range", why, len);
	if (r->type == CONFIG_SIZE32 && u > UINT32_MAX)
		return out_of_range(r, "too large (at most 4G-1 bytes)", why, len);
	*out = u;
	return 0;
}

static int parse_uint_value(const struct config_key *r, const char *value, uint64_t *out, char *why,
			    size_t len)
{
	uint64_t u;
	int rc = parse_u64(value, &u);

	if (rc && (r->flags & CONFIG_WHY_ALL))
		return out_of_range(r, "", why, len);
	if (rc) {
		snprintf(why, len, "%s",
			 rc == -ERANGE ? "too large (at most 2^64-1)"
				       : "not an unsigned 64-bit integer");
		return -EINVAL;
	}
	if (((r->flags & CONFIG_HAS_MIN) && (double)u < r->min) ||
	    ((r->flags & CONFIG_HAS_MAX) && (double)u > r->max))
		return out_of_range(r, "out of range", why, len);
	if (r->type == CONFIG_U32 && u > UINT32_MAX)
		return out_of_range(r, "too large (at most 2^32-1)", why, len);
	*out = u;
	return 0;
}

static int parse_double_value(const struct config_key *r, const char *value, double *out, char *why,
			      size_t len)
{
	bool all = r->flags & CONFIG_WHY_ALL;
	double d;

	if (config_parse_double(value, &d)) {
		if (all)
			return out_of_range(r, "", why, len);
		snprintf(why, len, "not a number");
		return -EINVAL;
	}
	if ((r->flags & CONFIG_HAS_MIN) &&
	    ((r->flags & CONFIG_MIN_OPEN) ? !(d > r->min) : !(d >= r->min))) {
		if (all)
			return out_of_range(r, "", why, len);
		snprintf(why, len, "must be %s %g",
			 (r->flags & CONFIG_MIN_OPEN) ? ">" : ">=", r->min);
		return -EINVAL;
	}
	if ((r->flags & CONFIG_HAS_MAX) && d > r->max) {
		char fallback[64];

		snprintf(fallback, sizeof(fallback), "must be at most %g", r->max);
		return out_of_range(r, fallback, why, len);
	}
	*out = d;
	return 0;
}

static int parse_path_value(const char *value, char **field, char *why, size_t len)
{
	const char *p;
	char *copy;

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
	free(*field);
	*field = copy;
	return 0;
}

void *config_field(struct sfs_config *c, struct file_params *fp, unsigned k)
{
	const struct key_entry *e = config_key(k);

	if (config_home_global(e->row->home))
		return (char *)c + e->offset;
	return (char *)fp + e->offset;
}

static int parse_name_value(const char *value, char *field, char *why, size_t len)
{
	int rc = config_check_name(value, why, len);

	if (!rc)
		memcpy(field, value, strlen(value) + 1);
	return rc;
}

int config_apply_value(struct sfs_config *c, struct file_params *fp, unsigned k, const char *value,
		       char sep, char *why, size_t len)
{
	return config_parse_value(k, config_field(c, fp, k), value, sep, why, len);
}

int config_parse_value(unsigned k, void *field, const char *value, char sep, char *why, size_t len)
{
	const struct config_key *r = config_key(k)->row;
	const struct placement_ops *ops;
	const struct disk_model_ops *model;
	char list[256];
	uint64_t u;
	unsigned e;
	double d;
	int rc;

	switch (r->type) {
	case CONFIG_SIZE:
	case CONFIG_SIZE32:
		if ((rc = parse_size_value(r, value, &u, why, len)))
			return rc;
		if (r->type == CONFIG_SIZE)
			*(uint64_t *)field = u;
		else
			*(uint32_t *)field = (uint32_t)u;
		return 0;
	case CONFIG_U32:
	case CONFIG_U64:
		if ((rc = parse_uint_value(r, value, &u, why, len)))
			return rc;
		if (r->type == CONFIG_U64)
			*(uint64_t *)field = u;
		else
			*(uint32_t *)field = (uint32_t)u;
		return 0;
	case CONFIG_BOOL:
		if (config_parse_bool(value, field) == 0)
			return 0;
		snprintf(why, len, "not a boolean; allowed: true, false, yes, no, on, off, 1, 0");
		return -EINVAL;
	case CONFIG_DOUBLE:
		if ((rc = parse_double_value(r, value, &d, why, len)))
			return rc;
		*(double *)field = d;
		return 0;
	case CONFIG_ENUM:
		if (config_parse_enum(value, r->names, &e) == 0) {
			*(unsigned *)field = e;
			return 0;
		}
		config_join_names(r->names, list, sizeof(list));
		snprintf(why, len, "unknown value; allowed: %s", list);
		return -EINVAL;
	case CONFIG_PATTERN:
		ops = placement_find(value);
		if (ops) {
			*(const struct placement_ops **)field = ops;
			return 0;
		}
		config_pattern_names(list, sizeof(list));
		snprintf(why, len, "unknown value; allowed: %s", list);
		return -EINVAL;
	case CONFIG_MODEL:
		if (strcasecmp(value, "none") == 0) {
			*(const struct disk_model_ops **)field = NULL;
			return 0;
		}
		if ((model = disk_model_find(value))) {
			*(const struct disk_model_ops **)field = model;
			return 0;
		}
		config_model_names(list, sizeof(list));
		snprintf(why, len, "unknown value; allowed: %s", list);
		return -EINVAL;
	case CONFIG_PATH:
		return parse_path_value(value, field, why, len);
	case CONFIG_NAME:
		return parse_name_value(value, field, why, len);
	case CONFIG_CUSTOM:
		return r->parse(field, value, sep, why, len);
	}
	snprintf(why, len, "internal error: no parser");
	return -EINVAL;
}

static size_t size_of_type(enum config_type t)
{
	switch (t) {
	case CONFIG_SIZE:
	case CONFIG_U64:
		return sizeof(uint64_t);
	case CONFIG_SIZE32:
	case CONFIG_U32:
		return sizeof(uint32_t);
	case CONFIG_BOOL:
		return sizeof(bool);
	case CONFIG_DOUBLE:
		return sizeof(double);
	case CONFIG_ENUM:
		return sizeof(unsigned);
	case CONFIG_PATTERN:
		return sizeof(const struct placement_ops *);
	case CONFIG_MODEL:
		return sizeof(const struct disk_model_ops *);
	case CONFIG_NAME:
		return CONFIG_NAME_MAX;
	case CONFIG_PATH:
	case CONFIG_CUSTOM:
		break;
	}
	return 0; /* owned or unknown: never copied between rules */
}

void config_copy_key(struct file_params *dst, const struct file_params *src, unsigned k)
{
	const struct key_entry *e = config_key(k);

	if (config_home_global(e->row->home))
		return;
	memcpy((char *)dst + e->offset, (const char *)src + e->offset, size_of_type(e->row->type));
}

uint64_t config_size_of(const struct file_params *fp, unsigned k)
{
	const struct key_entry *e = config_key(k);
	const char *field = (const char *)fp + e->offset;

	if (config_home_global(e->row->home))
		return 0;
	if (e->row->type == CONFIG_SIZE)
		return *(const uint64_t *)field;
	if (e->row->type == CONFIG_SIZE32)
		return *(const uint32_t *)field;
	return 0;
}

void config_format_value(const struct sfs_config *c, const struct file_params *fp, unsigned k,
			 char *buf, size_t len)
{
	config_format_field(k, config_field((struct sfs_config *)c, (struct file_params *)fp, k),
			    buf, len);
}

void config_format_field(unsigned k, const void *field, char *buf, size_t len)
{
	const struct config_key *r = config_key(k)->row;
	uint64_t u;

	switch (r->type) {
	case CONFIG_SIZE:
	case CONFIG_SIZE32:
		u = r->type == CONFIG_SIZE ? *(const uint64_t *)field : *(const uint32_t *)field;
		if (u == 0 && (r->flags & CONFIG_AUTO))
			snprintf(buf, len, "auto");
		else
			format_size(u, buf, (int)len);
		return;
	case CONFIG_U32:
		snprintf(buf, len, "%" PRIu32, *(const uint32_t *)field);
		return;
	case CONFIG_U64:
		snprintf(buf, len, "%" PRIu64, *(const uint64_t *)field);
		return;
	case CONFIG_BOOL:
		snprintf(buf, len, "%s", *(const bool *)field ? "true" : "false");
		return;
	case CONFIG_DOUBLE:
		config_format_double(*(const double *)field, buf, len);
		return;
	case CONFIG_ENUM:
		snprintf(buf, len, "%s", config_name_of(r->names, *(const unsigned *)field));
		return;
	case CONFIG_PATTERN:
		snprintf(buf, len, "%s", pattern_name(*(const struct placement_ops *const *)field));
		return;
	case CONFIG_MODEL: {
		const struct disk_model_ops *m = *(const struct disk_model_ops *const *)field;

		snprintf(buf, len, "%s", m ? m->name : "none");
		return;
	}
	case CONFIG_PATH:
		snprintf(buf, len, "%s", *(char *const *)field ? *(char *const *)field : "");
		return;
	case CONFIG_NAME:
		snprintf(buf, len, "%s", (const char *)field);
		return;
	case CONFIG_CUSTOM:
		r->format(field, buf, len);
		return;
	}
	buf[0] = '\0';
}

/* ---- defaults ---- */

void config_init(struct sfs_config *c)
{
	char why[256];
	unsigned k;

	memset(c, 0, sizeof(*c));
	for (k = 0; k < config_nkeys(); k++) {
		const struct config_key *r = config_key(k)->row;

		/* A default that does not parse is a bug in a table, never the user's. */
		if (r->def &&
		    config_apply_value(c, &c->defaults, k, r->def, ',', why, sizeof(why))) {
			fprintf(stderr, "scatterfs: internal error: default of [%s] %s = %s: %s\n",
				r->section, r->name, r->def, why);
			abort();
		}
	}
}
