/*
 * Row selection for scatterfs-report (--path, --pid, --op, --since,
 * --until): which rows of the log every metric, the fio iolog and the plots
 * see.
 *
 * Data structure: the parsed options as they are (a glob, a small array of
 * pids searched linearly, a bit mask of ops, a window of ts_us).  A log
 * names few processes and a command line gives a handful, so a linear
 * search beats a hash; the path test copies the path into a reused buffer
 * because fnmatch(3) needs a NUL-terminated string and the reader's path is
 * not.  Weak spot: a --pid list of thousands would make each row cost that
 * many compares.
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

int report_filter_pids(struct report_filter *f, const char *list, char *err, size_t errlen)
{
	const char *p = list;

	for (;;) {
		char *end;
		errno = 0;
		long long v = strtoll(p, &end, 10);
		if (end == p || errno || (*end != ',' && *end != '\0') || v < 0) {
			snprintf(err, errlen, "--pid '%s': expected process ids joined by ','",
				 list);
			return -EINVAL;
		}
		int64_t *a = realloc(f->pids, (f->npids + 1) * sizeof(*a));
		if (a == NULL)
			return -ENOMEM;
		f->pids = a;
		f->pids[f->npids++] = v;
		if (*end == '\0')
			return 0;
		p = end + 1;
	}
}

int report_filter_ops(struct report_filter *f, const char *list, char *err, size_t errlen)
{
	const char *p = list;

	for (;;) {
		size_t len = strcspn(p, ",");
		int op = report_op_parse(p, len);
		if (op < 0) {
			snprintf(err, errlen, "--op '%.*s': expected %s (several joined by ',')",
				 (int)len, p, report_op_list());
			return -EINVAL;
		}
		f->ops |= 1u << op;
		if (p[len] == '\0')
			return 0;
		p += len + 1;
	}
}

int report_parse_seconds(const char *s, uint64_t *us)
{
	uint64_t whole = 0, frac = 0;
	const char *p = s;
	int digits = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	while (*p >= '0' && *p <= '9') {
		if (__builtin_mul_overflow(whole, 10, &whole) ||
		    __builtin_add_overflow(whole, (uint64_t)(*p - '0'), &whole))
			return -ERANGE;
		p++;
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (++digits > 6)
				return -EINVAL; /* finer than ts_us can tell */
			frac = frac * 10 + (uint64_t)(*p - '0');
		}
		for (; digits < 6; digits++)
			frac *= 10;
	}
	if (*p != '\0')
		return -EINVAL;
	if (__builtin_mul_overflow(whole, 1000000, &whole) ||
	    __builtin_add_overflow(whole, frac, &whole))
		return -ERANGE;
	*us = whole;
	return 0;
}

int report_filter_match(struct report_filter *f, const struct log_row *row)
{
	if (f->ops && !(f->ops & (1u << row->op)))
		return 0;
	if (f->has_since && row->ts_us < f->since_us)
		return 0;
	if (f->has_until && row->ts_us >= f->until_us)
		return 0;
	if (f->npids > 0) {
		size_t i = 0;
		while (i < f->npids && f->pids[i] != row->pid)
			i++;
		if (i == f->npids)
			return 0;
	}
	if (f->path_glob != NULL) {
		if (row->path_len + 1 > f->pathcap) {
			char *b = realloc(f->pathbuf, row->path_len + 1);
			if (b == NULL)
				return -ENOMEM;
			f->pathbuf = b;
			f->pathcap = row->path_len + 1;
		}
		memcpy(f->pathbuf, row->path, row->path_len);
		f->pathbuf[row->path_len] = '\0';
		/* A path holding a NUL cannot match: fnmatch would see it cut short. */
		if (memchr(row->path, '\0', row->path_len) != NULL ||
		    fnmatch(f->path_glob, f->pathbuf, 0) != 0)
			return 0;
	}
	return 1;
}

bool report_filter_active(const struct report_filter *f)
{
	return f->path_glob != NULL || f->npids > 0 || f->ops != 0 || f->has_since || f->has_until;
}

int report_feed(struct log_reader *r, struct report_filter *f, struct report *rep,
		struct iolog_writer *iw, struct plot *plot, struct report_feed_counts *c)
{
	struct log_row row;
	int rc;

	memset(c, 0, sizeof(*c));
	while ((rc = log_reader_next(r, &row)) > 0) {
		c->rows++;
		c->line = row.line;
		if ((rc = report_filter_match(f, &row)) == 0)
			continue;
		if (rc < 0 || (rc = report_add(rep, &row)) < 0 ||
		    (iw && (rc = iolog_add(iw, &row)) < 0) ||
		    (plot && (rc = plot_add(plot, &row)) < 0))
			return rc;
		c->selected++;
	}
	c->line = 0;
	return rc;
}

void report_filter_free(struct report_filter *f)
{
	free(f->pids);
	free(f->pathbuf);
	memset(f, 0, sizeof(*f));
}
