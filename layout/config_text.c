/*
 * The configuration's words: lists of names and an enum value among them,
 * numbers as a file spells them, one item of a list, device names, section
 * labels and one-line error messages.
 *
 * This file knows nothing of the key table, so every other config_*.c file
 * (the key list, values, the reader, the checks) can use it without
 * depending on each other: config_text.c <- config_layers.c <-
 * config_keys.c <- config_values.c <- config_ini.c <- config_rules.c, each
 * calling only files to its left.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_i.h"

const char *const config_section_names[] = {"device", "layout", "autoextend", "cache",
					    "log",    "disk",	"file",	      "device"};

const char *config_name_of(const char *const *names, unsigned v)
{
	unsigned i;

	for (i = 0; names[i]; i++)
		if (i == v)
			return names[i];
	return "?";
}

void config_join_names(const char *const *names, char *buf, size_t len)
{
	size_t used = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; names[i] && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
}

int config_parse_double(const char *s, double *out)
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

int config_parse_enum(const char *s, const char *const *names, unsigned *out)
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

int config_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on", "1", NULL};
	static const char *const no[] = {"false", "no", "off", "0", NULL};
	unsigned i;

	if (config_parse_enum(s, yes, &i) == 0)
		*out = true;
	else if (config_parse_enum(s, no, &i) == 0)
		*out = false;
	else
		return -EINVAL;
	return 0;
}

void config_next_item(const char **s, char sep, char *buf, size_t len)
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

void config_format_double(double v, char *buf, size_t len)
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

/*
 * A device name: what a [device "NAME"] header and [layout] device take,
 * short and plain so that it reads well in the log's NAME:offset+length
 * items and in messages.
 */
int config_check_name(const char *value, char *why, size_t len)
{
	size_t n = strlen(value), i;

	if (n == 0 || n >= CONFIG_NAME_MAX) {
		snprintf(why, len, "a device name has 1 to %d characters", CONFIG_NAME_MAX - 1);
		return -EINVAL;
	}
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)value[i]) && value[i] != '_' && value[i] != '-') {
			snprintf(why, len,
				 "a device name has only letters, digits, '_' and '-' (it appears "
				 "in the log as NAME:offset+length)");
			return -EINVAL;
		}
	return 0;
}

/* "[layout]" or "[file "GLOB"]" */
const char *config_section_label(enum section sec, const char *glob, char *buf, size_t len)
{
	if (sec == SEC_FILE)
		snprintf(buf, len, "[file \"%s\"]", glob);
	else if (sec == SEC_NAMED_DEVICE)
		snprintf(buf, len, "[device \"%s\"]", glob);
	else if (sec == SEC_FAULT)
		snprintf(buf, len, "[fault \"%s\"]", glob);
	else if (sec == SEC_NONE)
		snprintf(buf, len, "(no section)");
	else
		snprintf(buf, len, "[%s]", config_section_names[sec]);
	return buf;
}

/* Control characters (a newline in an -o value or a path) become '?'. */
void config_one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/* One line, see config_one_line(). */
void config_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	config_one_line(err);
}
