/*
 * Streaming reader of the request log (README, "The request log").
 *
 * Data structure: one read buffer (1 MiB, doubled while a single row does
 * not fit) that always ends in a NUL sentinel.  A row is decoded in one
 * pass by typed field scanners (numbers are converted while they are
 * scanned, the op is matched by length and first letter, the device I/O
 * list is decoded into a reused array), with no per-field copy and no
 * per-row allocation; only a quoted path is unescaped, into a reused
 * buffer.  Every scanner stops at any byte it does not expect, the
 * sentinel included; a stop AT the sentinel means the row continues past
 * the data read so far, so the reader moves the partial row to the front
 * of the buffer, reads more and decodes the row again from its start
 * (nothing is modified in place, so a restart is always safe).  At end of
 * file a missing final newline is supplied.
 *
 * Why not libcsv: bench/bench_report measures libcsv's callback parser on
 * the same log doing no work at all in its callbacks; it is slower than
 * this reader decoding every field (numbers included), because it copies
 * every field byte by byte through a state machine.  The weak spot of the
 * typed scanners is that they know the column order: a log whose first
 * columns are not the schema's (logschema.h, LOG_HEADER_BASE) is refused at
 * the header rather than read by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

#define READ_CHUNK (1u << 20)
/* The columns every log has: the schema's, up to the optional model_us. */
#define NCOLUMNS LOG_COL_MODEL_US

/*
 * The op names a row may hold: the schema's, then "trim", which logs
 * written before FALLOC_FL_PUNCH_HOLE took fallocate(2)'s name "punch" hold
 * for the same request, so that those logs stay readable.
 */
static const struct op_name {
	const char *name;
	size_t len;
	enum log_op_index op;
} op_names[] = {
#define OP_NAME(n, s, d) {s, sizeof(s) - 1, LOG_OPI_##n},
    LOG_OP_LIST(OP_NAME)
#undef OP_NAME
	{"trim", 4, LOG_OPI_PUNCH},
};

struct log_reader {
	int fd; /* -1 for a memory log */
	bool eof;
	char *name;
	char *buf;     /* cap + 1 bytes; buf[end] == '\0' */
	size_t cap;    /* bytes of data buf can hold */
	size_t start;  /* first byte of the next row */
	size_t end;    /* end of the data read */
	uint64_t line; /* line number of the next row */
	size_t columns;
	bool has_model;	   /* the header names model_us where the schema puts it */
	struct devio *dev; /* devcap entries, reused for each row */
	size_t devcap;
	char **devnames; /* device names seen, in order of first appearance */
	size_t ndevnames, devnamecap;
	uint32_t lastdev;      /* the name found last: rows mostly repeat it */
	int devform;	       /* DEVFORM_*: the form of the log's first device I/O item */
	uint64_t devform_line; /* the line of that item */
	char *pathbuf;	       /* unescaped quoted path, pathcap bytes */
	size_t pathcap;
	char err[512];
};

static void set_err(struct log_reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void set_err(struct log_reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
}

/*
 * Moves the unread data to the front and reads more after it, doubling the
 * buffer when the unread data fills it.  At end of file a last row without
 * its newline gets one.  @return 1 when data was added, 0 at end of file,
 * -errno.
 */
static int refill(struct log_reader *r)
{
	if (r->eof)
		return 0;
	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	if (r->cap - r->end < READ_CHUNK / 2) {
		size_t cap = r->cap * 2;
		char *b = realloc(r->buf, cap + 1);
		if (b == NULL)
			return -ENOMEM;
		r->buf = b;
		r->cap = cap;
	}
	ssize_t n;
	do
		n = read(r->fd, r->buf + r->end, r->cap - r->end);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		int rc = -errno;
		set_err(r, "%s: read: %s", r->name, strerror(errno));
		return rc;
	}
	if (n == 0) {
		r->eof = true;
		if (r->end > 0 && r->buf[r->end - 1] != '\n')
			r->buf[r->end++] = '\n'; /* cap - end >= READ_CHUNK / 2 */
		r->buf[r->end] = '\0';
		return r->end > r->start ? 1 : 0;
	}
	r->end += (size_t)n;
	r->buf[r->end] = '\0';
	return 1;
}

/* The forms of device_io items: one device, or several with names. */
enum { DEVFORM_UNKNOWN, DEVFORM_PLAIN, DEVFORM_NAMED };

/* ---- header -------------------------------------------------------------- */

static int check_header(struct log_reader *r)
{
	char *nl;
	int rc;

	while ((nl = memchr(r->buf + r->start, '\n', r->end - r->start)) == NULL) {
		rc = refill(r);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			set_err(r, "%s: empty file, expected the request log header %s", r->name,
				LOG_HEADER_BASE);
			return -EINVAL;
		}
	}
	char *p = r->buf + r->start;
	char *eol = nl;
	if (eol > p && eol[-1] == '\r')
		eol--;
	size_t col = 0;
	while (p <= eol) {
		char *c = memchr(p, ',', (size_t)(eol - p));
		char *fe = c ? c : eol;
		if (col < NCOLUMNS && ((size_t)(fe - p) != strlen(log_column_names[col]) ||
				       memcmp(p, log_column_names[col], (size_t)(fe - p)) != 0)) {
			set_err(r,
				"%s:1: not a scatterfs request log: column %zu is '%.*s', expected "
				"'%s' (the header must begin " LOG_HEADER_BASE ")",
				r->name, col + 1, (int)(fe - p > 64 ? 64 : fe - p), p,
				log_column_names[col]);
			return -EINVAL;
		}
		if (col == LOG_COL_MODEL_US)
			r->has_model = (size_t)(fe - p) == strlen(log_column_names[col]) &&
				       memcmp(p, log_column_names[col], (size_t)(fe - p)) == 0;
		col++;
		p = fe + 1;
	}
	if (col < NCOLUMNS) {
		set_err(r,
			"%s:1: not a scatterfs request log: the header has %zu columns, "
			"expected " LOG_HEADER_BASE,
			r->name, col);
		return -EINVAL;
	}
	r->columns = col;
	r->start = (size_t)(nl + 1 - r->buf);
	r->line = 2;
	return 0;
}

static int reader_new(const char *name, int fd, struct log_reader **out)
{
	struct log_reader *r = calloc(1, sizeof(*r));
	if (r == NULL)
		return -ENOMEM;
	r->fd = fd;
	r->name = strdup(name);
	r->cap = READ_CHUNK;
	r->buf = malloc(r->cap + 1);
	if (r->name == NULL || r->buf == NULL) {
		free(r->name);
		free(r->buf);
		free(r);
		return -ENOMEM;
	}
	r->buf[0] = '\0';
	r->line = 1;
	*out = r;
	return 0;
}

int log_reader_open(const char *path, struct log_reader **out, char *err, size_t errlen)
{
	*out = NULL;
	int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
#ifdef POSIX_FADV_SEQUENTIAL
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
	struct log_reader *r;
	int rc = reader_new(path, fd, &r);
	if (rc < 0) {
		if (fd != STDIN_FILENO)
			close(fd);
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	rc = check_header(r);
	if (rc < 0) {
		snprintf(err, errlen, "%s", r->err);
		log_reader_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

int log_reader_open_mem(const char *buf, size_t len, const char *name, struct log_reader **out,
			char *err, size_t errlen)
{
	*out = NULL;
	struct log_reader *r;
	int rc = reader_new(name, -1, &r);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", name, strerror(-rc));
		return rc;
	}
	if (len + 1 > r->cap) {
		char *b = realloc(r->buf, len + 2);
		if (b == NULL) {
			log_reader_close(r);
			snprintf(err, errlen, "%s: %s", name, strerror(ENOMEM));
			return -ENOMEM;
		}
		r->buf = b;
		r->cap = len + 1;
	}
	memcpy(r->buf, buf, len);
	r->end = len;
	if (len > 0 && buf[len - 1] != '\n')
		r->buf[r->end++] = '\n';
	r->buf[r->end] = '\0';
	r->eof = true;
	rc = check_header(r);
	if (rc < 0) {
		snprintf(err, errlen, "%s", r->err);
		log_reader_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

void log_reader_close(struct log_reader *r)
{
	if (r == NULL)
		return;
	if (r->fd > STDIN_FILENO)
		close(r->fd);
	free(r->name);
	free(r->buf);
	free(r->dev);
	for (size_t i = 0; i < r->ndevnames; i++)
		free(r->devnames[i]);
	free(r->devnames);
	free(r->pathbuf);
	free(r);
}

const char *log_reader_error(const struct log_reader *r)
{
	return r->err;
}

size_t log_reader_columns(const struct log_reader *r)
{
	return r->columns;
}

/* ---- rows ---------------------------------------------------------------- */

/* Outcome of decoding one row. */
enum { ROW_OK = 1, ROW_MORE = 0, ROW_BAD = -1 };

/* What went wrong, for the message (filled only on ROW_BAD). */
struct row_fail {
	int field;	    /* 0-based column */
	const char *at;	    /* where the scanner stopped */
	const char *what;   /* "an unsigned decimal", ... */
	const char *fstart; /* start of the field */
	const char *item;   /* device_io: the start of the item in the wrong form, else NULL */
};

/* Unsigned decimal at *pp; advances *pp.  @return false when there is no digit or it overflows. */
static inline bool scan_u64(const char **pp, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	unsigned d;

	while ((d = (unsigned)(unsigned char)*p - '0') < 10) {
		v = v * 10 + d;
		p++;
	}
	size_t n = (size_t)(p - *pp);
	if (n == 0)
		return false;
	if (n >= 20) { /* 10^19 - 1 < 2^64 - 1 < 10^20: only 20 digits can overflow */
		if (n > 20)
			return false;
		v = 0;
		for (const char *q = *pp; q < p; q++)
			if (__builtin_mul_overflow(v, 10, &v) ||
			    __builtin_add_overflow(v, (uint64_t)(*q - '0'), &v))
				return false;
	}
	*pp = p;
	*out = v;
	return true;
}

static inline bool scan_i64(const char **pp, int64_t *out)
{
	const char *p = *pp;
	bool neg = *p == '-';
	uint64_t v;

	if (neg)
		p++;
	if (!scan_u64(&p, &v))
		return false;
	if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
		return false;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	*pp = p;
	return true;
}

/* What a malformed device_io item should have been, for the message. */
#define WHAT_PLAIN "device_offset+length items joined by ';'"
#define WHAT_NAMED "NAME:device_offset+length items joined by ';'"
#define WHAT_EITHER                                                                                \
	"device_offset+length or NAME:device_offset+length items joined by ';' (NAME of "          \
	"letters, digits, '_', '.' and '-')"

/* Whether @c may be in a device name: [A-Za-z0-9_.-]. */
static inline bool devname_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

static bool grow(void **arr, size_t *cap, size_t elem, size_t need)
{
	if (need <= *cap)
		return true;
	size_t c = *cap ? *cap * 2 : 16;
	while (c < need)
		c *= 2;
	void *a = realloc(*arr, c * elem);
	if (a == NULL)
		return false;
	*arr = a;
	*cap = c;
	return true;
}

/*
 * The number of the device named by the @len bytes at @name, adding the
 * name when it is new.  @return 0 or -ENOMEM.
 */
static int devname_index(struct log_reader *r, const char *name, size_t len, uint32_t *out)
{
	if (r->lastdev < r->ndevnames && strlen(r->devnames[r->lastdev]) == len &&
	    memcmp(r->devnames[r->lastdev], name, len) == 0) {
		*out = r->lastdev;
		return 0;
	}
	for (size_t i = 0; i < r->ndevnames; i++)
		if (strlen(r->devnames[i]) == len && memcmp(r->devnames[i], name, len) == 0) {
			*out = r->lastdev = (uint32_t)i;
			return 0;
		}
	if (r->ndevnames >= UINT32_MAX ||
	    !grow((void **)&r->devnames, &r->devnamecap, sizeof(*r->devnames), r->ndevnames + 1))
		return -ENOMEM;
	char *copy = strndup(name, len);
	if (copy == NULL)
		return -ENOMEM;
	r->devnames[r->ndevnames] = copy;
	*out = r->lastdev = (uint32_t)r->ndevnames++;
	return 0;
}

/*
 * Quoted field at p (p[0] == '"', RFC 4180 rule 7: "" inside is one ").
 * Unescapes into r->pathbuf when @keep.  @return the byte after the closing
 * quote, or NULL when the field is not closed within the data (*@nl counts
 * the newlines inside).
 */
static const char *scan_quoted(struct log_reader *r, const char *p, const char *end, bool keep,
			       size_t *len, uint64_t *nl, bool *nomem)
{
	size_t n = 0;

	p++;
	for (;;) {
		const char *q = memchr(p, '"', (size_t)(end - p));
		if (q == NULL)
			return NULL;
		if (q + 1 >= end)
			return NULL; /* "" or "," may follow: need the next byte */
		size_t k = (size_t)(q - p) + (q[1] == '"');
		for (const char *c = p; (c = memchr(c, '\n', (size_t)(q - c))) != NULL; c++)
			(*nl)++;
		if (keep) {
			if (!grow((void **)&r->pathbuf, &r->pathcap, 1, n + k + 1)) {
				*nomem = true;
				return NULL;
			}
			memcpy(r->pathbuf + n, p, k);
		}
		n += k;
		if (q[1] != '"') {
			*len = n;
			return q + 1;
		}
		p = q + 2;
	}
}

/*
 * Decodes the row at r->buf + r->start into @row.  @return ROW_OK (with
 * *@used = its bytes and *@lines = its lines), ROW_MORE (the row goes past
 * the data read) or ROW_BAD (*@f says why).
 */
static int decode_row(struct log_reader *r, struct log_row *row, size_t *used, uint64_t *lines,
		      struct row_fail *f)
{
	const char *const base = r->buf + r->start;
	const char *const end = r->buf + r->end;
	const char *p = base;
	uint64_t nl = 0;
	uint64_t u;

#define FAIL(fieldno, what_)                                                                       \
	do {                                                                                       \
		if (p >= end)                                                                      \
			return ROW_MORE;                                                           \
		f->field = (fieldno);                                                              \
		f->at = p;                                                                         \
		f->what = (what_);                                                                 \
		return ROW_BAD;                                                                    \
	} while (0)
#define COMMA(fieldno, what_)                                                                      \
	do {                                                                                       \
		if (*p != ',')                                                                     \
			FAIL(fieldno, what_);                                                      \
		p++;                                                                               \
	} while (0)

	f->fstart = p;
	if (!scan_u64(&p, &row->ts_us))
		FAIL(LOG_COL_TS_US, "an unsigned decimal");
	COMMA(LOG_COL_TS_US, "an unsigned decimal");

	f->fstart = p;
	const char *c = p;
	while (*c >= 'a' && *c <= 'z')
		c++;
	size_t oplen = (size_t)(c - p);
	int op = report_op_parse(p, oplen);
	if (c >= end)
		return ROW_MORE;
	if (op < 0 || *c != ',') {
		f->field = LOG_COL_OP;
		f->at = p;
		f->what = NULL; /* the op names, spelled out by describe() */
		return ROW_BAD;
	}
	row->op = (enum log_op_index)op;
	p = c + 1;

	f->fstart = p;
	if (!scan_i64(&p, &row->pid))
		FAIL(LOG_COL_PID, "a decimal");
	COMMA(LOG_COL_PID, "a decimal");

	f->fstart = p;
	if (*p == '"') {
		bool nomem = false;
		const char *q = scan_quoted(r, p, end, true, &row->path_len, &nl, &nomem);
		if (nomem)
			return -ENOMEM;
		if (q == NULL)
			return ROW_MORE;
		row->path = r->pathbuf;
		p = q;
	} else {
		const char *q = p;
		while (*q != ',' && *q != '\n' && *q != '"' && q < end)
			q++;
		row->path = p;
		row->path_len = (size_t)(q - p);
		p = q;
		if (*p == '"')
			FAIL(LOG_COL_PATH, "a path (RFC 4180: quotes only around the whole field)");
	}
	COMMA(LOG_COL_PATH, "a path (RFC 4180: quotes only around the whole field)");

	f->fstart = p;
	if (!scan_u64(&p, &row->offset))
		FAIL(LOG_COL_OFFSET, "an unsigned decimal");
	COMMA(LOG_COL_OFFSET, "an unsigned decimal");
	f->fstart = p;
	if (!scan_u64(&p, &row->size))
		FAIL(LOG_COL_SIZE, "an unsigned decimal");
	COMMA(LOG_COL_SIZE, "an unsigned decimal");
	f->fstart = p;
	if (!scan_i64(&p, &row->result))
		FAIL(LOG_COL_RESULT, "a decimal");
	COMMA(LOG_COL_RESULT, "a decimal");
	f->fstart = p;
	if (!scan_u64(&p, &row->latency_us))
		FAIL(LOG_COL_LATENCY_US, "an unsigned decimal");
	COMMA(LOG_COL_LATENCY_US, "an unsigned decimal");

	f->fstart = p;
	f->item = NULL;
	size_t ndev = 0;
	if (*p != ',' && *p != '\n' && *p != '\r') {
		for (;;) {
			struct devio d = {0};
			const char *item = p, *q = p;
			int form = DEVFORM_PLAIN;
			/* The common item, "offset+length", is decoded without a second look. */
			if (!scan_u64(&q, &d.offset) || *q != '+') {
				const char *n = p;
				while (devname_char(*n))
					n++;
				if (n >= end)
					return ROW_MORE;
				if (n > p && *n == ':') {
					form = DEVFORM_NAMED;
					int rc = devname_index(r, p, (size_t)(n - p), &d.device);
					if (rc < 0)
						return rc;
					q = n + 1;
					if (!scan_u64(&q, &d.offset) || *q != '+') {
						p = q;
						FAIL(LOG_COL_DEVICE_IO, WHAT_NAMED);
					}
				} else {
					p = q;
					FAIL(LOG_COL_DEVICE_IO, *item >= '0' && *item <= '9'
								    ? WHAT_PLAIN
								    : WHAT_EITHER);
				}
			}
			p = q + 1;
			if (!scan_u64(&p, &u))
				FAIL(LOG_COL_DEVICE_IO,
				     form == DEVFORM_NAMED ? WHAT_NAMED : WHAT_PLAIN);
			d.length = u;
			if (form != r->devform) {
				if (r->devform == DEVFORM_UNKNOWN) {
					r->devform = form;
					r->devform_line = r->line;
				} else {
					f->item = item;
					FAIL(LOG_COL_DEVICE_IO, WHAT_PLAIN);
				}
			}
			if (ndev == r->devcap &&
			    !grow((void **)&r->dev, &r->devcap, sizeof(*r->dev), ndev + 1))
				return -ENOMEM;
			r->dev[ndev++] = d;
			if (*p != ';')
				break;
			p++;
		}
	}
	row->dev = r->dev;
	row->ndev = ndev;
	row->dev_named = r->devform == DEVFORM_NAMED;
	row->dev_names = (const char *const *)r->devnames;
	row->ndev_names = r->ndevnames;

	/* Further columns: model_us is read, unknown ones skipped, quotes honoured. */
	row->has_model_us = false;
	row->model_us = 0;
	for (size_t col = LOG_COL_DEVICE_IO + 1; *p == ','; col++) {
		p++;
		if (col == LOG_COL_MODEL_US && r->has_model) {
			f->fstart = p;
			if (!scan_u64(&p, &row->model_us) ||
			    (*p != ',' && *p != '\n' && *p != '\r'))
				FAIL(LOG_COL_MODEL_US, "an unsigned decimal");
			row->has_model_us = true;
			continue;
		}
		if (*p == '"') {
			size_t dummy;
			bool nomem = false;
			const char *q = scan_quoted(r, p, end, false, &dummy, &nl, &nomem);
			if (q == NULL)
				return ROW_MORE;
			p = q;
		} else {
			while (*p != ',' && *p != '\n' && *p != '"' && p < end)
				p++;
		}
	}
	if (*p == '\r')
		p++;
	if (*p != '\n')
		FAIL(LOG_COL_DEVICE_IO, "the end of the row");
	p++;
	*used = (size_t)(p - base);
	*lines = nl + 1;
	return ROW_OK;
#undef COMMA
#undef FAIL
}

int report_op_parse(const char *name, size_t len)
{
	/* Reads come first in op_names and are most of a log. */
	for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
		if (op_names[i].len == len && memcmp(name, op_names[i].name, len) == 0)
			return (int)op_names[i].op;
	return -1;
}

const char *report_op_list(void)
{
	static char list[256];
	size_t n = 0;

	if (list[0] != '\0')
		return list;
	for (int i = 0; i < LOG_OP_COUNT; i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s",
				      i == 0		      ? ""
				      : i == LOG_OP_COUNT - 1 ? " or "
							      : ", ",
				      log_op_names[i]);
	return list;
}

/* The message for a ROW_BAD decode of the row at line @line. */
static void describe(struct log_reader *r, const struct row_fail *f, uint64_t line)
{
	const char *end = r->buf + r->end;
	const char *p = f->at;

	if (*p == '\n' || (*p == '\r' && p + 1 < end && p[1] == '\n')) {
		if (f->field < NCOLUMNS - 1) {
			set_err(r, "%s:%llu: the row has %d field%s, expected at least %d", r->name,
				(unsigned long long)line, f->field + 1, f->field ? "s" : "",
				NCOLUMNS);
			return;
		}
	}
	/* Quote the field as far as it goes on its line (at most 40 bytes). */
	const char *s = f->fstart;
	const char *e = s;
	while (e < end && *e != '\n' && *e != ',' && e - s < 40)
		e++;
	if (f->field == LOG_COL_DEVICE_IO && f->item != NULL) {
		const char *ie = f->item;
		while (ie < end && *ie != '\n' && *ie != ',' && *ie != ';' && ie - f->item < 40)
			ie++;
		if (r->devform == DEVFORM_NAMED)
			set_err(r,
				"%s:%llu: field device_io: item '%.*s' names no device, but line "
				"%llu does: with several devices every item is "
				"NAME:device_offset+length",
				r->name, (unsigned long long)line, (int)(ie - f->item), f->item,
				(unsigned long long)r->devform_line);
		else
			set_err(r,
				"%s:%llu: field device_io: item '%.*s' names a device, but line "
				"%llu does not: with one device every item is "
				"device_offset+length",
				r->name, (unsigned long long)line, (int)(ie - f->item), f->item,
				(unsigned long long)r->devform_line);
	} else if (f->field == LOG_COL_DEVICE_IO && f->what[0] == 't')
		set_err(r, "%s:%llu: field device_io: unexpected '%c' after '%.*s'", r->name,
			(unsigned long long)line, *p, (int)(p - s > 40 ? 40 : p - s), s);
	else if (f->what == NULL)
		set_err(r, "%s:%llu: field %s: '%.*s' is not %s", r->name, (unsigned long long)line,
			log_column_names[f->field], (int)(e - s), s, report_op_list());
	else
		set_err(r, "%s:%llu: field %s: '%.*s' is not %s", r->name, (unsigned long long)line,
			log_column_names[f->field], (int)(e - s), s, f->what);
}

int log_reader_next(struct log_reader *r, struct log_row *row)
{
	for (;;) {
		if (r->start == r->end) {
			int rc = refill(r);
			if (rc <= 0)
				return rc;
		}
		size_t used;
		uint64_t lines;
		struct row_fail f;
		int rc = decode_row(r, row, &used, &lines, &f);
		if (rc == ROW_OK) {
			row->line = r->line;
			r->line += lines;
			r->start += used;
			return 1;
		}
		if (rc == ROW_BAD) {
			describe(r, &f, r->line);
			return -EINVAL;
		}
		if (rc < 0) {
			set_err(r, "%s:%llu: %s", r->name, (unsigned long long)r->line,
				strerror(-rc));
			return rc;
		}
		/* ROW_MORE */
		if (r->fd < 0 || r->eof) {
			/* Cannot happen with the supplied final newline unless a quote is open. */
			set_err(r, "%s:%llu: the row ends inside a quoted field", r->name,
				(unsigned long long)r->line);
			return -EINVAL;
		}
		rc = refill(r);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			set_err(r, "%s:%llu: the row ends inside a quoted field", r->name,
				(unsigned long long)r->line);
			return -EINVAL;
		}
	}
}
