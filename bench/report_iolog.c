/*
 * Export of the log's reads and writes as a fio iolog, replayed with
 * `fio --read_iolog=FILE`.
 *
 * The format, as fio 3.33 reads it (HOWTO "Trace file format", and
 * read_iolog() in fio's iolog.c):
 *   - version 2: first line "fio version 2 iolog", then "NAME add|open|close"
 *     and "NAME read|write OFFSET LENGTH" lines; no timing is written (fio's
 *     "wait" action is documented as relative microseconds but 3.33 treats
 *     it as milliseconds since the job started, so it is left out);
 *   - version 3 (fio >= 3.31): first line "fio version 3 iolog", and every
 *     line starts with a timestamp in MICROSECONDS from the start of the
 *     replay; fio sleeps the difference to the previous line's timestamp
 *     before each line (fio ignores the difference when the previous
 *     timestamp is 0, so the lines here start at 1 us, which keeps the gap
 *     before the second request);
 *   - NAME is read with sscanf("%256s"): at most 256 bytes, no white space;
 *     LENGTH with "%u": at most 4 GiB - 1.
 *
 * Data structure: a uthash set of the file names already added, in the
 * order they were added, so each file gets its "add" and "open" just
 * before its first request (the file stays streamable: one pass, memory
 * per file) and its "close" at the end.  fio reads the whole iolog before
 * it starts, so late "add" lines are fine; with --replay_redirect every
 * name is replaced by the redirect target, and fio ignores the repeated
 * "add" and "open" of it.
 *
 * Two mappings of requests to fio I/Os:
 *   - file mode (default): each read or write row becomes one I/O of its
 *     logical offset and length (the bytes done: result) on DIR/PATH;
 *     failed (result <= 0) requests are not exported;
 *   - device mode (--iolog-device FILE): each device I/O of a read or
 *     write row becomes one I/O at its device offset on FILE, replaying what
 *     the backing device saw.
 * Timestamps come from ts_us and never go backwards (rows from concurrent
 * requests may be a few microseconds out of order in the log).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "report.h"

#define FIO_NAME_MAX 256 /* sscanf "%256s" in fio's read_iolog() */

struct iolog_file {
	char *name;
	struct iolog_file *next; /* in the order of their "add" */
	UT_hash_handle hh;
};

struct iolog_writer {
	FILE *f;
	char *path;
	int version;
	char *dir;
	char *device;
	struct iolog_file *files; /* uthash by name */
	struct iolog_file *first, *last;
	bool have_base;
	uint64_t first_ts; /* ts_us of the first exported row: replay time 1 us */
	uint64_t last_t;
	char *name; /* scratch for DIR/PATH */
	size_t namecap;
	uint64_t reads, writes, skipped;
};

int iolog_open(const char *path, const struct iolog_opts *o, struct iolog_writer **out, char *err,
	       size_t errlen)
{
	*out = NULL;
	if (o->version != 2 && o->version != 3) {
		snprintf(err, errlen, "iolog version %d: fio reads versions 2 and 3", o->version);
		return -EINVAL;
	}
	struct iolog_writer *w = calloc(1, sizeof(*w));
	if (w == NULL)
		return -ENOMEM;
	w->version = o->version;
	w->path = strdup(path);
	w->dir = o->dir ? strdup(o->dir) : NULL;
	w->device = o->device ? strdup(o->device) : NULL;
	if (w->path == NULL || (o->dir && !w->dir) || (o->device && !w->device)) {
		free(w->path);
		free(w->dir);
		free(w->device);
		free(w);
		return -ENOMEM;
	}
	/* A trailing '/' of DIR would double in DIR/PATH. */
	if (w->dir != NULL)
		for (size_t n = strlen(w->dir); n > 1 && w->dir[n - 1] == '/'; n--)
			w->dir[n - 1] = '\0';
	if (w->device != NULL &&
	    (strlen(w->device) > FIO_NAME_MAX || strpbrk(w->device, " \t\n\v\f\r") != NULL)) {
		snprintf(err, errlen,
			 "--iolog-device %s: fio's iolog cannot hold a name longer than %d bytes "
			 "or with white space",
			 w->device, FIO_NAME_MAX);
		free(w->path);
		free(w->dir);
		free(w->device);
		free(w);
		return -EINVAL;
	}
	w->f = fopen(path, "w");
	if (w->f == NULL) {
		int rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(w->path);
		free(w->dir);
		free(w->device);
		free(w);
		return rc;
	}
	fprintf(w->f, "fio version %d iolog\n", w->version);
	*out = w;
	return 0;
}

/* Prints the timestamp of the next line (version 3). */
static void stamp(struct iolog_writer *w, uint64_t ts_us)
{
	if (w->version < 3)
		return;
	uint64_t t = ts_us >= w->first_ts ? ts_us - w->first_ts + 1 : 1;
	if (t < w->last_t)
		t = w->last_t;
	w->last_t = t;
	fprintf(w->f, "%" PRIu64 " ", t);
}

/* Adds and opens @name before its first I/O.  @return 0 or -ENOMEM. */
static int use_file(struct iolog_writer *w, const char *name, uint64_t ts_us)
{
	struct iolog_file *f;

	HASH_FIND_STR(w->files, name, f);
	if (f != NULL)
		return 0;
	f = calloc(1, sizeof(*f));
	if (f == NULL || (f->name = strdup(name)) == NULL) {
		free(f);
		return -ENOMEM;
	}
	HASH_ADD_KEYPTR(hh, w->files, f->name, strlen(f->name), f);
	if (w->last)
		w->last->next = f;
	else
		w->first = f;
	w->last = f;
	stamp(w, ts_us);
	fprintf(w->f, "%s add\n", name);
	stamp(w, ts_us);
	fprintf(w->f, "%s open\n", name);
	return 0;
}

static int io_line(struct iolog_writer *w, const char *name, const struct log_row *row,
		   uint64_t offset, uint64_t length)
{
	if (!w->have_base) {
		w->have_base = true;
		w->first_ts = row->ts_us;
	}
	int rc = use_file(w, name, row->ts_us);
	if (rc < 0)
		return rc;
	stamp(w, row->ts_us);
	fprintf(w->f, "%s %s %" PRIu64 " %" PRIu64 "\n", name,
		row->op == LOG_OPI_READ ? "read" : "write", offset, length);
	if (row->op == LOG_OPI_READ)
		w->reads++;
	else
		w->writes++;
	return 0;
}

/* DIR/PATH of @row, or NULL when fio could not read it back. */
static const char *file_name(struct iolog_writer *w, const struct log_row *row)
{
	size_t dlen = w->dir ? strlen(w->dir) + 1 : 0;
	size_t n = dlen + row->path_len;

	if (row->path_len == 0 || n > FIO_NAME_MAX)
		return NULL;
	if (memchr(row->path, ' ', row->path_len) || memchr(row->path, '\t', row->path_len) ||
	    memchr(row->path, '\n', row->path_len) || memchr(row->path, '\r', row->path_len) ||
	    memchr(row->path, '\v', row->path_len) || memchr(row->path, '\f', row->path_len) ||
	    memchr(row->path, '\0', row->path_len))
		return NULL;
	if (n + 1 > w->namecap) {
		char *b = realloc(w->name, n + 1);
		if (b == NULL)
			return NULL;
		w->name = b;
		w->namecap = n + 1;
	}
	if (w->dir) {
		memcpy(w->name, w->dir, dlen - 1);
		w->name[dlen - 1] = '/';
	}
	memcpy(w->name + dlen, row->path, row->path_len);
	w->name[n] = '\0';
	return w->name;
}

int iolog_add(struct iolog_writer *w, const struct log_row *row)
{
	if (row->op != LOG_OPI_READ && row->op != LOG_OPI_WRITE)
		return 0;
	if (w->device != NULL) {
		for (size_t i = 0; i < row->ndev; i++) {
			if (row->dev[i].length == 0 || row->dev[i].length > UINT_MAX) {
				w->skipped++;
				continue;
			}
			int rc = io_line(w, w->device, row, row->dev[i].offset, row->dev[i].length);
			if (rc < 0)
				return rc;
		}
		return 0;
	}
	uint64_t len = row->result > 0 ? (uint64_t)row->result : 0;
	if (len > row->size)
		len = row->size;
	const char *name = file_name(w, row);
	if (len == 0 || len > UINT_MAX || name == NULL) {
		w->skipped++;
		return 0;
	}
	return io_line(w, name, row, row->offset, len);
}

int iolog_close(struct iolog_writer *w, uint64_t *reads, uint64_t *writes, uint64_t *skipped)
{
	int rc = 0;

	for (struct iolog_file *f = w->first; f != NULL; f = f->next) {
		if (w->version >= 3)
			fprintf(w->f, "%" PRIu64 " ", w->last_t);
		fprintf(w->f, "%s close\n", f->name);
	}
	if (ferror(w->f))
		rc = -EIO;
	if (fclose(w->f) != 0 && rc == 0)
		rc = -errno;
	*reads = w->reads;
	*writes = w->writes;
	*skipped = w->skipped;
	struct iolog_file *f, *t;
	HASH_ITER(hh, w->files, f, t)
	{
		HASH_DEL(w->files, f);
		free(f->name);
		free(f);
	}
	free(w->name);
	free(w->path);
	free(w->dir);
	free(w->device);
	free(w);
	return rc;
}
