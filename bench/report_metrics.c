/*
 * The metrics of scatterfs-report, fed one row at a time (definitions on
 * the structures in report.h).
 *
 * Data structure: fixed counters for everything global (per-op summary,
 * device I/Os, seek distance buckets, autoextend), a histogram per group,
 * and two uthash tables: files by path (the end of each file's previous
 * read, for logical sequentiality, and its group with --by file) and
 * processes by pid (--by pid only).  Memory is therefore constant per row
 * and grows only with the number of files, processes and distinct sizes.
 * Consecutive rows usually name the same file, so the last file found is
 * remembered and checked before hashing.  Weak spot: a log of millions of
 * distinct paths keeps one entry per path (about 100 bytes plus the path).
 * With --latency each group also keeps exact latencies per op (struct
 * hist: 16 bytes per distinct microsecond value, and 1.1 KiB of buckets per
 * op and column), so percentiles are exact rather than bucketed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "report.h"

struct file_state {
	char *path; /* NUL-terminated copy, the hash key */
	size_t len;
	bool has_read;		   /* a read of this file was seen */
	uint64_t next_offset;	   /* where its previous read ended */
	bool has_dev;		   /* a device I/O of a read of this file was seen */
	uint32_t dev_device;	   /* on which device (devio.device) */
	uint64_t dev_end;	   /* where the last one ended on the device */
	struct report_group group; /* --by file */
	UT_hash_handle hh;
};

struct pid_group {
	int64_t pid;
	struct report_group group;
	UT_hash_handle hh;
};

void report_init(struct report *rep, enum report_by by)
{
	memset(rep, 0, sizeof(*rep));
	rep->by = by;
	rep->block_size = 4096;
	rep->all.key = (char *)"all";
	for (int op = 0; op < LOG_OP_COUNT; op++)
		rep->by_op[op].key = (char *)log_op_names[op];
}

static struct file_state *find_file(struct report *rep, const char *path, size_t len)
{
	struct file_state *f = rep->last_file;

	if (f != NULL && f->len == len && memcmp(f->path, path, len) == 0)
		return f;
	HASH_FIND(hh, rep->files, path, len, f);
	if (f == NULL) {
		f = calloc(1, sizeof(*f));
		if (f == NULL)
			return NULL;
		f->path = malloc(len + 1);
		if (f->path == NULL) {
			free(f);
			return NULL;
		}
		memcpy(f->path, path, len);
		f->path[len] = '\0';
		f->len = len;
		f->group.key = f->path;
		HASH_ADD_KEYPTR(hh, rep->files, f->path, len, f);
	}
	rep->last_file = f;
	return f;
}

static struct pid_group *find_pid(struct report *rep, int64_t pid)
{
	struct pid_group *g;

	HASH_FIND(hh, rep->pids, &pid, sizeof(pid), g);
	if (g == NULL) {
		g = calloc(1, sizeof(*g));
		if (g == NULL)
			return NULL;
		g->pid = pid;
		if (asprintf(&g->group.key, "%" PRId64, pid) < 0) {
			free(g);
			return NULL;
		}
		HASH_ADD(hh, rep->pids, pid, sizeof(g->pid), g);
	}
	return g;
}

/*
 * The report's device @i of @row's log, named on first use.  @return it, or
 * NULL on ENOMEM or a number the row does not name.
 */
static struct report_device *device_of(struct report *rep, const struct log_row *row, uint32_t i)
{
	if (i >= rep->ndevices) {
		if (i >= row->ndev_names)
			return NULL;
		size_t n = row->ndev_names;
		struct report_device *d = realloc(rep->devices, n * sizeof(*d));
		if (d == NULL)
			return NULL;
		memset(d + rep->ndevices, 0, (n - rep->ndevices) * sizeof(*d));
		rep->devices = d;
		rep->ndevices = n;
	}
	struct report_device *d = &rep->devices[i];
	if (d->name == NULL &&
	    (i >= row->ndev_names || (d->name = strdup(row->dev_names[i])) == NULL))
		return NULL;
	return d;
}

/* Counts one device I/O of @length bytes of the read or write @row in @d. */
static inline void count_device_io(struct device_metrics *d, const struct log_row *row,
				   uint64_t length)
{
	d->device_ios++;
	if (row->op == LOG_OPI_READ) {
		d->read_bytes += length;
	} else {
		d->write_device_ios++;
		d->write_bytes += length;
	}
}

/*
 * Counts @row's device I/Os in rep->dev and, in a log that names its
 * devices, in each one's own metrics, the seek distance from the end of
 * the previous device I/O on the same device.  @return 0 or -ENOMEM.
 */
static int add_device_ios(struct report *rep, const struct log_row *row)
{
	struct device_metrics *all = &rep->dev;

	for (size_t i = 0; i < row->ndev; i++) {
		const struct devio *io = &row->dev[i];
		struct device_metrics *dm = NULL, *head = all;
		if (row->dev_named) {
			struct report_device *d = device_of(rep, row, io->device);
			if (d == NULL)
				return -ENOMEM;
			dm = head = &d->m;
		}
		if (head->have_prev) {
			uint64_t dist = io->offset >= head->prev_end ? io->offset - head->prev_end
								     : head->prev_end - io->offset;
			all->pairs++;
			all->seek[hist_bucket(dist)]++;
			if (dm != NULL) {
				dm->pairs++;
				dm->seek[hist_bucket(dist)]++;
			}
		}
		head->have_prev = true;
		head->prev_end = io->offset + io->length;
		if (dm == NULL) {
			all->device_ios++; /* bytes and time are printed only per device */
			continue;
		}
		count_device_io(all, row, io->length);
		count_device_io(dm, row, io->length);
		if (i == 0 && row->has_model_us) {
			dm->model_us += row->model_us;
			all->model_us += row->model_us;
		}
	}
	return 0;
}

/* A read @row's device I/Os per device (the rows with at least one there). */
static int add_device_reads(struct report *rep, const struct log_row *row)
{
	for (size_t i = 0; i < row->ndev; i++) {
		uint32_t dev = row->dev[i].device;
		bool first = true;
		uint64_t k = 0;
		for (size_t j = 0; j < row->ndev; j++) {
			if (row->dev[j].device != dev)
				continue;
			first = first && j >= i;
			k++;
		}
		if (!first)
			continue; /* counted at its first device I/O */
		struct report_device *d = device_of(rep, row, dev);
		if (d == NULL)
			return -ENOMEM;
		d->m.reads++;
		d->m.read_device_ios += k;
		int rc = hist_add(&d->m.per_read, k);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * Adds the device I/Os of the read @row of file @f to the dynamic layout
 * score (and, in a log that names its devices, to their devices' scores).
 * A block follows the file's previous one only on the same device.
 */
static int add_dyn_layout(struct report *rep, struct file_state *f, const struct log_row *row)
{
	uint64_t bs = rep->block_size ? rep->block_size : 4096;

	for (size_t i = 0; i < row->ndev; i++) {
		const struct devio *io = &row->dev[i];
		uint64_t blocks = (io->length + bs - 1) / bs;
		struct dyn_layout d = {blocks, blocks ? blocks - 1 : 0, blocks ? blocks - 1 : 0};
		struct report_device *dev = NULL;

		if (blocks == 0)
			continue;
		if (row->dev_named && (dev = device_of(rep, row, io->device)) == NULL)
			return -ENOMEM;
		if (f->has_dev) {
			d.scored++;
			d.contiguous += io->offset == f->dev_end && io->device == f->dev_device;
		}
		f->has_dev = true;
		f->dev_device = io->device;
		f->dev_end = io->offset + io->length;
		for (int k = 0; k < 2; k++) {
			struct dyn_layout *t = k ? &f->group.layout : &rep->all.layout;
			t->blocks += d.blocks;
			t->scored += d.scored;
			t->contiguous += d.contiguous;
		}
		if (dev != NULL) {
			dev->layout.blocks += d.blocks;
			dev->layout.scored += d.scored;
			dev->layout.contiguous += d.contiguous;
		}
	}
	return 0;
}

/* Counts @row's latency_us (and model_us) in @g's latencies of its op. */
static int add_latency(struct report_group *g, const struct log_row *row)
{
	if (g->lat == NULL && (g->lat = calloc(1, sizeof(*g->lat))) == NULL)
		return -ENOMEM;
	int rc = hist_add(&(*g->lat)[row->op][LAT_LATENCY_US], row->latency_us);
	if (rc == 0 && row->has_model_us)
		rc = hist_add(&(*g->lat)[row->op][LAT_MODEL_US], row->model_us);
	return rc;
}

static void free_latency(struct report_group *g)
{
	if (g->lat == NULL)
		return;
	for (int op = 0; op < LOG_OP_COUNT; op++)
		for (int c = 0; c < LAT_COLUMNS; c++)
			hist_free(&(*g->lat)[op][c]);
	free(g->lat);
	g->lat = NULL;
}

int report_add(struct report *rep, const struct log_row *row)
{
	int rc;

	if (rep->rows == 0 || row->ts_us < rep->first_ts_us)
		rep->first_ts_us = row->ts_us;
	if (rep->rows == 0 || row->ts_us > rep->last_ts_us)
		rep->last_ts_us = row->ts_us;
	rep->rows++;
	rep->dev_named |= row->dev_named;

	struct op_summary *s = &rep->ops[row->op];
	s->rows++;
	s->bytes += row->size;
	s->errors += row->result < 0;

	struct file_state *f = find_file(rep, row->path, row->path_len);
	if (f == NULL)
		return -ENOMEM;

	if (rep->by == BY_OP && (rc = hist_add(&rep->by_op[row->op].hist, row->size)) < 0)
		return rc;

	if (rep->latency) {
		rep->has_model_us |= row->has_model_us;
		if ((rc = add_latency(&rep->all, row)) < 0)
			return rc;
		if (rep->by == BY_FILE && (rc = add_latency(&f->group, row)) < 0)
			return rc;
		if (rep->by == BY_PID) {
			struct pid_group *g = find_pid(rep, row->pid);
			if (g == NULL)
				return -ENOMEM;
			if ((rc = add_latency(&g->group, row)) < 0)
				return rc;
		}
	}

	switch (row->op) {
	case LOG_OPI_READ:
		if ((rc = hist_add(&rep->all.hist, row->size)) < 0)
			return rc;
		rep->seq.reads++;
		if (f->has_read) {
			rep->seq.with_previous++;
			rep->seq.sequential += row->offset == f->next_offset;
		}
		f->has_read = true;
		f->next_offset = row->offset + row->size;
		if (rep->by == BY_FILE && (rc = hist_add(&f->group.hist, row->size)) < 0)
			return rc;
		if (rep->by == BY_PID) {
			struct pid_group *g = find_pid(rep, row->pid);
			if (g == NULL)
				return -ENOMEM;
			if ((rc = hist_add(&g->group.hist, row->size)) < 0)
				return rc;
		}
		if ((rc = add_dyn_layout(rep, f, row)) < 0)
			return rc;
		rep->dev.reads++;
		rep->dev.read_device_ios += row->ndev;
		if ((rc = hist_add(&rep->dev.per_read, row->ndev)) < 0)
			return rc;
		if (row->dev_named && (rc = add_device_reads(rep, row)) < 0)
			return rc;
		return add_device_ios(rep, row);
	case LOG_OPI_WRITE:
		return add_device_ios(rep, row);
	case LOG_OPI_EXTEND:
		rep->ext.extends++;
		rep->ext.bytes += row->size;
		rep->ext.zero_fill_us += row->latency_us;
		if (row->latency_us > rep->ext.max_us)
			rep->ext.max_us = row->latency_us;
		return 0;
	default:
		return 0;
	}
}

/* Most reads first; ties by key (numerically for pids). */
static int cmp_group(const void *a, const void *b, bool numeric)
{
	const struct report_group *x = *(struct report_group *const *)a;
	const struct report_group *y = *(struct report_group *const *)b;
	if (x->hist.n != y->hist.n)
		return x->hist.n > y->hist.n ? -1 : 1;
	if (numeric) {
		long long u = strtoll(x->key, NULL, 10), v = strtoll(y->key, NULL, 10);
		return (u > v) - (u < v);
	}
	return strcmp(x->key, y->key);
}

static int cmp_file(const void *a, const void *b)
{
	return cmp_group(a, b, false);
}

static int cmp_pid(const void *a, const void *b)
{
	return cmp_group(a, b, true);
}

struct report_group **report_groups(struct report *rep, size_t *n)
{
	struct report_group **g = NULL;
	size_t k = 0;

	*n = 0;
	switch (rep->by) {
	case BY_NONE:
		return NULL;
	case BY_FILE: {
		g = malloc((HASH_COUNT(rep->files) + 1) * sizeof(*g));
		if (g == NULL)
			return NULL;
		for (struct file_state *f = rep->files; f != NULL; f = f->hh.next)
			if (f->group.hist.n > 0)
				g[k++] = &f->group;
		qsort(g, k, sizeof(*g), cmp_file);
		break;
	}
	case BY_PID: {
		g = malloc((HASH_COUNT(rep->pids) + 1) * sizeof(*g));
		if (g == NULL)
			return NULL;
		for (struct pid_group *p = rep->pids; p != NULL; p = p->hh.next)
			if (p->group.hist.n > 0) /* --latency adds processes without reads */
				g[k++] = &p->group;
		qsort(g, k, sizeof(*g), cmp_pid);
		break;
	}
	case BY_OP:
		g = malloc(LOG_OP_COUNT * sizeof(*g));
		if (g == NULL)
			return NULL;
		for (int op = 0; op < LOG_OP_COUNT; op++)
			if (rep->by_op[op].hist.n > 0)
				g[k++] = &rep->by_op[op];
		break;
	}
	*n = k;
	return g;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp((*(struct report_group *const *)a)->key,
		      (*(struct report_group *const *)b)->key);
}

static int cmp_key_numeric(const void *a, const void *b)
{
	long long u = strtoll((*(struct report_group *const *)a)->key, NULL, 10);
	long long v = strtoll((*(struct report_group *const *)b)->key, NULL, 10);
	return (u > v) - (u < v);
}

struct report_group **report_latency_groups(struct report *rep, size_t *n)
{
	struct report_group **g = NULL;
	size_t k = 0;

	*n = 0;
	if (rep->by == BY_FILE) {
		g = malloc((HASH_COUNT(rep->files) + 1) * sizeof(*g));
		if (g == NULL)
			return NULL;
		for (struct file_state *f = rep->files; f != NULL; f = f->hh.next)
			if (f->group.lat != NULL)
				g[k++] = &f->group;
		qsort(g, k, sizeof(*g), cmp_key);
	} else if (rep->by == BY_PID) {
		g = malloc((HASH_COUNT(rep->pids) + 1) * sizeof(*g));
		if (g == NULL)
			return NULL;
		for (struct pid_group *p = rep->pids; p != NULL; p = p->hh.next)
			if (p->group.lat != NULL)
				g[k++] = &p->group;
		qsort(g, k, sizeof(*g), cmp_key_numeric);
	}
	*n = k;
	return g;
}

static int cmp_device(const void *a, const void *b)
{
	return strcmp((*(struct report_device *const *)a)->name,
		      (*(struct report_device *const *)b)->name);
}

struct report_device **report_devices(struct report *rep, size_t *n)
{
	struct report_device **d;
	size_t k = 0;

	*n = 0;
	if (!rep->dev_named || rep->ndevices == 0)
		return NULL;
	d = malloc(rep->ndevices * sizeof(*d));
	if (d == NULL)
		return NULL;
	for (size_t i = 0; i < rep->ndevices; i++)
		if (rep->devices[i].name != NULL)
			d[k++] = &rep->devices[i];
	qsort(d, k, sizeof(*d), cmp_device);
	*n = k;
	return d;
}

size_t report_file_count(const struct report *rep)
{
	return HASH_COUNT(rep->files);
}

void report_free(struct report *rep)
{
	struct file_state *f, *ft;
	HASH_ITER(hh, rep->files, f, ft)
	{
		HASH_DEL(rep->files, f);
		hist_free(&f->group.hist);
		free_latency(&f->group);
		free(f->path);
		free(f);
	}
	struct pid_group *p, *pt;
	HASH_ITER(hh, rep->pids, p, pt)
	{
		HASH_DEL(rep->pids, p);
		hist_free(&p->group.hist);
		free_latency(&p->group);
		free(p->group.key);
		free(p);
	}
	hist_free(&rep->all.hist);
	free_latency(&rep->all);
	for (int op = 0; op < LOG_OP_COUNT; op++)
		hist_free(&rep->by_op[op].hist);
	hist_free(&rep->dev.per_read);
	for (size_t i = 0; i < rep->ndevices; i++) {
		hist_free(&rep->devices[i].m.per_read);
		free(rep->devices[i].name);
	}
	free(rep->devices);
	memset(rep, 0, sizeof(*rep));
}

double report_share_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

double report_layout_score(const struct dyn_layout *l)
{
	return l->scored ? (double)l->contiguous / (double)l->scored : 1.0;
}

double report_dev_ios_per_read(const struct device_metrics *d)
{
	return d->reads ? (double)d->read_device_ios / (double)d->reads : 0.0;
}

double report_device_ios_per_read(const struct report *rep)
{
	return report_dev_ios_per_read(&rep->dev);
}

double report_extend_mean_us(const struct report *rep)
{
	return rep->ext.extends ? (double)rep->ext.zero_fill_us / (double)rep->ext.extends : 0.0;
}

double report_extend_us_per_mib(const struct report *rep)
{
	return rep->ext.bytes ? (double)rep->ext.zero_fill_us / ((double)rep->ext.bytes / 1048576.0)
			      : 0.0;
}
