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
 *
 * Aligned variant (--iolog-align A): each I/O's range is rounded out to
 * multiples of A (offset down, end up), so that fio --direct=1 can replay
 * it; the requests a database makes are not aligned (SQLite reads the 100
 * bytes of its header), and an O_DIRECT read of them fails with EINVAL.
 * fio takes an iolog's version from the first characters of its first
 * line and skips the rest of that line, while any other line it cannot
 * parse costs a "bad iolog" warning: so the note that the ranges were
 * rounded goes on the version line, after the version.
 *
 * Several devices: in device mode, a log whose device_io items name their
 * devices gets one iolog per device (iolog_device_path(): PATH with
 * ".NAME" before its extension), each against the file the device's
 * NAME=FILE target names, so that one fio job per device replays the
 * devices in parallel, as the mount ran them.  Every one of them counts
 * its timestamps from the first exported row of the whole log, so the jobs
 * stay in step.  The file PATH itself, created (with its version line)
 * before the log said whether it names devices, is removed when the first
 * named device I/O arrives.  File mode writes PATH alone: its I/Os are the
 * files' requests, whichever device holds them.
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

/* One iolog file being written. */
struct iolog_out {
	FILE *f;
	char *path;
	const char *target;	  /* device mode: the file fio replays on */
	struct iolog_file *files; /* uthash by name */
	struct iolog_file *first, *last;
	uint64_t last_t; /* timestamp of the line written last */
	uint64_t reads, writes;
};

struct iolog_writer {
	struct iolog_out base; /* PATH: file mode, and device mode of a one-device log */
	bool base_removed;     /* device mode of a log that names its devices */
	int version;
	uint64_t align; /* 0 or a power of two: ranges rounded out to it */
	char *dir;
	char *device;
	struct iolog_target *targets; /* copies of the NAME=FILE targets */
	size_t ntargets;
	struct iolog_out **devs; /* by the log's device number; NULL until used */
	size_t ndevs;
	bool have_base;
	uint64_t first_ts; /* ts_us of the first exported row: replay time 1 us */
	char *name;	   /* scratch for DIR/PATH */
	size_t namecap;
	uint64_t skipped;
	char err[512];
};

static void out_free(struct iolog_out *o)
{
	struct iolog_file *f, *t;
	HASH_ITER(hh, o->files, f, t)
	{
		HASH_DEL(o->files, f);
		free(f->name);
		free(f);
	}
	free(o->path);
}

static void writer_free(struct iolog_writer *w)
{
	out_free(&w->base);
	for (size_t i = 0; i < w->ndevs; i++)
		if (w->devs[i] != NULL) {
			out_free(w->devs[i]);
			free(w->devs[i]);
		}
	free(w->devs);
	for (size_t i = 0; i < w->ntargets; i++) {
		free((char *)w->targets[i].name);
		free((char *)w->targets[i].file);
	}
	free(w->targets);
	free(w->name);
	free(w->dir);
	free(w->device);
	free(w);
}

/* Creates @o's file at @path and writes the version line.  @return 0 or -errno (in w->err). */
static int out_open(struct iolog_writer *w, struct iolog_out *o, const char *path)
{
	o->path = strdup(path);
	if (o->path == NULL)
		return -ENOMEM;
	o->f = fopen(path, "w");
	if (o->f == NULL) {
		int rc = -errno;
		snprintf(w->err, sizeof(w->err), "%s: %s", path, strerror(errno));
		return rc;
	}
	fprintf(o->f, "fio version %d iolog", w->version);
	if (w->align)
		fprintf(o->f,
			" (scatterfs-report --iolog-align %" PRIu64 ": every range rounded out to "
			"%" PRIu64 "-byte boundaries, for fio --direct=1)",
			w->align, w->align);
	fputc('\n', o->f);
	return 0;
}

/* Whether @s is a fio iolog file name: at most 256 bytes, no white space. */
static bool fio_name_ok(const char *s)
{
	return strlen(s) <= FIO_NAME_MAX && strpbrk(s, " \t\n\v\f\r") == NULL;
}

char *iolog_device_path(const char *path, const char *device)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dot = strrchr(base, '.');
	if (dot == NULL || dot == base)
		dot = path + strlen(path);
	char *out;
	if (asprintf(&out, "%.*s.%s%s", (int)(dot - path), path, device, dot) < 0)
		return NULL;
	return out;
}

int iolog_open(const char *path, const struct iolog_opts *o, struct iolog_writer **out, char *err,
	       size_t errlen)
{
	*out = NULL;
	if (o->version != 2 && o->version != 3) {
		snprintf(err, errlen, "iolog version %d: fio reads versions 2 and 3", o->version);
		return -EINVAL;
	}
	if (o->device != NULL && !fio_name_ok(o->device)) {
		snprintf(err, errlen,
			 "--iolog-device %s: fio's iolog cannot hold a name longer than %d bytes "
			 "or with white space",
			 o->device, FIO_NAME_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < o->ntargets; i++) {
		if (!fio_name_ok(o->targets[i].file)) {
			snprintf(err, errlen,
				 "--iolog-device %s=%s: fio's iolog cannot hold a name longer than "
				 "%d bytes or with white space",
				 o->targets[i].name, o->targets[i].file, FIO_NAME_MAX);
			return -EINVAL;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(o->targets[i].name, o->targets[j].name) == 0) {
				snprintf(err, errlen, "--iolog-device %s=: device %s given twice",
					 o->targets[i].name, o->targets[i].name);
				return -EINVAL;
			}
	}
	struct iolog_writer *w = calloc(1, sizeof(*w));
	if (w == NULL)
		return -ENOMEM;
	w->version = o->version;
	w->align = o->align;
	w->dir = o->dir ? strdup(o->dir) : NULL;
	w->device = o->device ? strdup(o->device) : NULL;
	w->targets = o->ntargets ? calloc(o->ntargets, sizeof(*w->targets)) : NULL;
	bool nomem =
	    (o->dir && !w->dir) || (o->device && !w->device) || (o->ntargets && !w->targets);
	for (size_t i = 0; !nomem && i < o->ntargets; i++) {
		w->targets[i].name = strdup(o->targets[i].name);
		w->targets[i].file = strdup(o->targets[i].file);
		w->ntargets++;
		nomem = w->targets[i].name == NULL || w->targets[i].file == NULL;
	}
	if (nomem) {
		writer_free(w);
		return -ENOMEM;
	}
	/* A trailing '/' of DIR would double in DIR/PATH. */
	if (w->dir != NULL)
		for (size_t n = strlen(w->dir); n > 1 && w->dir[n - 1] == '/'; n--)
			w->dir[n - 1] = '\0';
	w->base.target = w->device;
	int rc = out_open(w, &w->base, path);
	if (rc < 0) {
		snprintf(err, errlen, "%s", rc == -ENOMEM ? strerror(ENOMEM) : w->err);
		writer_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

const char *iolog_error(const struct iolog_writer *w)
{
	return w->err;
}

/* Prints the timestamp of the next line of @o (version 3). */
static void stamp(struct iolog_writer *w, struct iolog_out *o, uint64_t ts_us)
{
	if (w->version < 3)
		return;
	uint64_t t = ts_us >= w->first_ts ? ts_us - w->first_ts + 1 : 1;
	if (t < o->last_t)
		t = o->last_t;
	o->last_t = t;
	fprintf(o->f, "%" PRIu64 " ", t);
}

/* Adds and opens @name in @o before its first I/O.  @return 0 or -ENOMEM. */
static int use_file(struct iolog_writer *w, struct iolog_out *o, const char *name, uint64_t ts_us)
{
	struct iolog_file *f;

	HASH_FIND_STR(o->files, name, f);
	if (f != NULL)
		return 0;
	f = calloc(1, sizeof(*f));
	if (f == NULL || (f->name = strdup(name)) == NULL) {
		free(f);
		return -ENOMEM;
	}
	HASH_ADD_KEYPTR(hh, o->files, f->name, strlen(f->name), f);
	if (o->last)
		o->last->next = f;
	else
		o->first = f;
	o->last = f;
	stamp(w, o, ts_us);
	fprintf(o->f, "%s add\n", name);
	stamp(w, o, ts_us);
	fprintf(o->f, "%s open\n", name);
	return 0;
}

static int io_line(struct iolog_writer *w, struct iolog_out *o, const char *name,
		   const struct log_row *row, uint64_t offset, uint64_t length)
{
	if (w->align) {
		uint64_t end = offset + length;
		offset &= ~(w->align - 1);
		end = (end + w->align - 1) & ~(w->align - 1);
		length = end - offset;
		if (length > UINT_MAX) {
			w->skipped++;
			return 0;
		}
	}
	if (!w->have_base) {
		w->have_base = true;
		w->first_ts = row->ts_us;
	}
	int rc = use_file(w, o, name, row->ts_us);
	if (rc < 0)
		return rc;
	stamp(w, o, row->ts_us);
	fprintf(o->f, "%s %s %" PRIu64 " %" PRIu64 "\n", name,
		row->op == LOG_OPI_READ ? "read" : "write", offset, length);
	if (row->op == LOG_OPI_READ)
		o->reads++;
	else
		o->writes++;
	return 0;
}

/*
 * The iolog of @row's named device @dev, created on its first device I/O
 * (the first one also removes PATH).  @return it, or NULL with -errno in
 * *@rc and the message in w->err.
 */
static struct iolog_out *device_out(struct iolog_writer *w, const struct log_row *row, uint32_t dev,
				    int *rc)
{
	const char *name = dev < row->ndev_names ? row->dev_names[dev] : "?";

	if (dev < w->ndevs && w->devs[dev] != NULL)
		return w->devs[dev];
	if (w->device != NULL) {
		snprintf(w->err, sizeof(w->err),
			 "the log names its devices (%s, ...): give --iolog-device NAME=FILE "
			 "for each of them instead of --iolog-device %s",
			 name, w->device);
		*rc = -EINVAL;
		return NULL;
	}
	const char *target = NULL;
	for (size_t i = 0; i < w->ntargets; i++)
		if (strcmp(w->targets[i].name, name) == 0)
			target = w->targets[i].file;
	if (target == NULL) {
		snprintf(w->err, sizeof(w->err),
			 "device %s has no --iolog-device %s=FILE (the file its iolog replays on)",
			 name, name);
		*rc = -EINVAL;
		return NULL;
	}
	*rc = -ENOMEM;
	if (dev >= w->ndevs) {
		struct iolog_out **d = realloc(w->devs, (dev + 1) * sizeof(*d));
		if (d == NULL)
			return NULL;
		memset(d + w->ndevs, 0, (dev + 1 - w->ndevs) * sizeof(*d));
		w->devs = d;
		w->ndevs = dev + 1;
	}
	struct iolog_out *o = calloc(1, sizeof(*o));
	char *path = iolog_device_path(w->base.path, name);
	if (o == NULL || path == NULL) {
		free(o);
		free(path);
		return NULL;
	}
	o->target = target;
	*rc = out_open(w, o, path);
	free(path);
	if (*rc < 0) {
		out_free(o);
		if (o->f)
			fclose(o->f);
		free(o);
		return NULL;
	}
	w->devs[dev] = o;
	if (!w->base_removed) {
		w->base_removed = true;
		fclose(w->base.f);
		w->base.f = NULL;
		remove(w->base.path);
	}
	return o;
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
	if (w->device != NULL || w->ntargets > 0) {
		if (!row->dev_named && row->ndev > 0 && w->device == NULL) {
			snprintf(w->err, sizeof(w->err),
				 "the log names no devices: give --iolog-device FILE, not "
				 "--iolog-device %s=%s",
				 w->targets[0].name, w->targets[0].file);
			return -EINVAL;
		}
		for (size_t i = 0; i < row->ndev; i++) {
			struct iolog_out *o = &w->base;
			int rc;
			if (row->dev_named &&
			    (o = device_out(w, row, row->dev[i].device, &rc)) == NULL)
				return rc;
			if (row->dev[i].length == 0 || row->dev[i].length > UINT_MAX) {
				w->skipped++;
				continue;
			}
			rc = io_line(w, o, o->target, row, row->dev[i].offset, row->dev[i].length);
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
	return io_line(w, &w->base, name, row, row->offset, len);
}

/* Writes @o's close actions and closes it.  @return 0 or -errno. */
static int out_finish(struct iolog_writer *w, struct iolog_out *o)
{
	int rc = 0;

	if (o->f == NULL)
		return 0;
	for (struct iolog_file *f = o->first; f != NULL; f = f->next) {
		if (w->version >= 3)
			fprintf(o->f, "%" PRIu64 " ", o->last_t);
		fprintf(o->f, "%s close\n", f->name);
	}
	if (ferror(o->f))
		rc = -EIO;
	if (fclose(o->f) != 0 && rc == 0)
		rc = -errno;
	o->f = NULL;
	return rc;
}

int iolog_finish(struct iolog_writer *w)
{
	int rc = out_finish(w, &w->base);
	for (size_t i = 0; i < w->ndevs; i++)
		if (w->devs[i] != NULL) {
			int r = out_finish(w, w->devs[i]);
			if (rc == 0)
				rc = r;
		}
	return rc;
}

int iolog_output(const struct iolog_writer *w, size_t i, const char **path, uint64_t *reads,
		 uint64_t *writes)
{
	const struct iolog_out *o = NULL;

	if (!w->base_removed) {
		if (i == 0)
			o = &w->base;
	} else {
		for (size_t k = 0; k < w->ndevs && o == NULL; k++)
			if (w->devs[k] != NULL && i-- == 0)
				o = w->devs[k];
	}
	if (o == NULL)
		return -ENOENT;
	*path = o->path;
	*reads = o->reads;
	*writes = o->writes;
	return 0;
}

void iolog_free(struct iolog_writer *w)
{
	if (w == NULL)
		return;
	if (w->base.f != NULL)
		fclose(w->base.f);
	for (size_t i = 0; i < w->ndevs; i++)
		if (w->devs[i] != NULL && w->devs[i]->f != NULL)
			fclose(w->devs[i]->f);
	writer_free(w);
}

int iolog_close(struct iolog_writer *w, uint64_t *reads, uint64_t *writes, uint64_t *skipped)
{
	int rc = iolog_finish(w);
	const char *path;
	uint64_t r, wr;

	*reads = *writes = 0;
	for (size_t i = 0; iolog_output(w, i, &path, &r, &wr) == 0; i++) {
		*reads += r;
		*writes += wr;
	}
	*skipped = w->skipped;
	iolog_free(w);
	return rc;
}
