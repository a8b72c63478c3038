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

/*
 * Request order.  The daemon appends a row when its request is answered,
 * and requests answered out of order (a read queued to the completion
 * thread, readahead's reads in flight together, several threads) leave
 * rows whose ts_us, the request's arrival, is below the row before it:
 * a third of a percent of a single-threaded SQLite scan's rows.  Every
 * figure taken "one row after another" (the layout score, sequentiality,
 * seek distances, the fio iolog, the timeline) goes by request order, so
 * the rows pass through a window of REORDER_ROWS, kept sorted on (ts_us,
 * line) in a ring (a row goes in from the end, moving the few it comes
 * before: the log is nearly sorted, so a row costs a compare and a copy),
 * and leave it from the front in that order: exactly sorted unless a
 * request was answered after REORDER_ROWS later ones.  Each slot owns
 * copies of the row's path and device I/Os (the reader's pointers last one
 * row); the device names' array is taken from the newest row as a slot
 * leaves (numbers keep, the array may move).
 */
#define REORDER_ROWS 4096

struct slot {
	struct log_row row;
	char *path;
	size_t pathcap;
	struct devio *dev;
	size_t devcap;
};

struct ring_item {
	uint64_t ts_us, line;
	struct slot *s;
};

struct reorder {
	struct slot *slots;	  /* REORDER_ROWS + 1 */
	struct ring_item *ring; /* REORDER_ROWS + 1; n of them from head on */
	size_t head;
	struct slot **free;  /* nfree of them */
	size_t n, nfree;
	const char *const *names; /* the newest row's dev_names */
	size_t nnames;
};

static bool item_before(const struct ring_item *a, const struct ring_item *b)
{
	return a->ts_us != b->ts_us ? a->ts_us < b->ts_us : a->line < b->line;
}

/* Copies @row into a free slot and into the ring in order.  @return 0 or -ENOMEM. */
static int reorder_push(struct reorder *o, const struct log_row *row)
{
	struct slot *s = o->free[--o->nfree];
	if (row->path_len > s->pathcap || !s->path) {
		char *p = realloc(s->path, row->path_len + 1);
		if (!p)
			goto nomem;
		s->path = p;
		s->pathcap = row->path_len + 1;
	}
	if (row->ndev > s->devcap) {
		struct devio *d = realloc(s->dev, row->ndev * sizeof(*d));
		if (!d)
			goto nomem;
		s->dev = d;
		s->devcap = row->ndev;
	}
	s->row = *row;
	memcpy(s->path, row->path, row->path_len);
	s->row.path = s->path;
	if (row->ndev)
		memcpy(s->dev, row->dev, row->ndev * sizeof(*s->dev));
	s->row.dev = s->dev;
	struct ring_item it = {row->ts_us, row->line, s};
	const size_t cap = REORDER_ROWS + 1;
	size_t i = o->n++;
	while (i > 0 && item_before(&it, &o->ring[(o->head + i - 1) % cap])) {
		o->ring[(o->head + i) % cap] = o->ring[(o->head + i - 1) % cap];
		i--;
	}
	o->ring[(o->head + i) % cap] = it;
	return 0;
nomem:
	o->nfree++;
	return -ENOMEM;
}

/* Takes the earliest slot off the ring (o->n > 0); the caller frees it. */
static struct slot *reorder_pop(struct reorder *o)
{
	struct slot *first = o->ring[o->head].s;
	o->head = (o->head + 1) % (REORDER_ROWS + 1);
	o->n--;
	return first;
}

/* Gives the earliest row to the sinks.  @return 0 or a sink's -errno (@c->line: the row's). */
static int reorder_emit(struct reorder *o, struct report *rep, struct iolog_writer *iw,
			struct plot *plot, struct report_feed_counts *c)
{
	struct slot *s = reorder_pop(o);
	int rc;
	s->row.dev_names = o->names;
	s->row.ndev_names = o->nnames;
	c->line = s->row.line;
	if ((rc = report_add(rep, &s->row)) < 0 || (iw && (rc = iolog_add(iw, &s->row)) < 0) ||
	    (plot && (rc = plot_add(plot, &s->row)) < 0))
		return rc;
	o->free[o->nfree++] = s;
	return 0;
}

int report_feed(struct log_reader *r, struct report_filter *f, struct report *rep,
		struct iolog_writer *iw, struct plot *plot, struct report_feed_counts *c)
{
	struct log_row row = {0};
	struct reorder o = {0};
	int rc = -ENOMEM;

	memset(c, 0, sizeof(*c));
	o.slots = calloc(REORDER_ROWS + 1, sizeof(*o.slots));
	o.ring = calloc(REORDER_ROWS + 1, sizeof(*o.ring));
	o.free = calloc(REORDER_ROWS + 1, sizeof(*o.free));
	if (!o.slots || !o.ring || !o.free)
		goto out;
	for (size_t i = 0; i <= REORDER_ROWS; i++)
		o.free[o.nfree++] = &o.slots[i];
	while ((rc = log_reader_next(r, &row)) > 0) {
		c->rows++;
		c->line = row.line;
		o.names = row.dev_names;
		o.nnames = row.ndev_names;
		if ((rc = report_filter_match(f, &row)) == 0)
			continue;
		if (rc < 0 || (rc = reorder_push(&o, &row)) < 0)
			goto out;
		c->selected++;
		if (o.n > REORDER_ROWS && (rc = reorder_emit(&o, rep, iw, plot, c)) < 0)
			goto out;
	}
	if (rc < 0) { /* the reader's: c->line 0 */
		c->line = 0;
		goto out;
	}
	while (o.n)
		if ((rc = reorder_emit(&o, rep, iw, plot, c)) < 0)
			goto out;
	c->line = 0;
	rc = 0;
out:
	if (o.slots)
		for (size_t i = 0; i <= REORDER_ROWS; i++) {
			free(o.slots[i].path);
			free(o.slots[i].dev);
		}
	free(o.slots);
	free(o.ring);
	free(o.free);
	return rc;
}

void report_filter_free(struct report_filter *f)
{
	free(f->pids);
	free(f->pathbuf);
	memset(f, 0, sizeof(*f));
}
