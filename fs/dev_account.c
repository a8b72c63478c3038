/*
 * The accounting layer: the top of the default device stack.  It records each
 * device I/O in its request (struct dev_req: the request log's device_io
 * column) and counts it in the device's counters, then passes it on.  It
 * sees the I/O as the I/O path asked for it (the request's own bytes),
 * before any layer below rounds it to blocks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"

/* Appends [off, off+len) of device @dev to @r's runs; a run that cannot be recorded is counted. */
static void record(struct dev_req *r, unsigned dev, uint64_t off, uint64_t len)
{
	if (!r || !len)
		return;
	if (r->n == r->cap) {
		size_t cap = r->cap * 2;
		struct run *v = malloc(cap * sizeof *v);
		if (!v) {
			if (r->lost)
				atomic_fetch_add(r->lost, 1);
			return; /* the I/O happens; only its log entry is lost (counted) */
		}
		memcpy(v, r->v, r->n * sizeof *v);
		if (r->v != r->inline_v)
			free(r->v);
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = (struct run){.device = off, .length = len, .dev = dev};
}

static void count(atomic_uint_fast64_t *ios, atomic_uint_fast64_t *bytes, uint64_t len)
{
	atomic_fetch_add(ios, 1);
	atomic_fetch_add(bytes, len);
}

static int account_pread(struct dev_layer *l, struct dev_req *r, void *buf, uint64_t len,
			 uint64_t off)
{
	record(r, l->dev->index, off, len);
	count(&l->dev->counters.reads, &l->dev->counters.bytes_read, len);
	return dev_layer_pread(l->next, r, buf, len, off);
}

static int account_pread_fd(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off,
			    int *fd)
{
	int err = dev_layer_pread_fd(l->next, r, len, off, fd);
	/* -EOPNOTSUPP: not spliced, the caller reads (and records) it; a failed
	 * read stays in the log's row, as a failed pread does. */
	if (err != -EOPNOTSUPP)
		record(r, l->dev->index, off, len);
	if (!err)
		count(&l->dev->counters.reads, &l->dev->counters.bytes_read, len);
	return err;
}

static int account_pwrite(struct dev_layer *l, struct dev_req *r, const void *buf, uint64_t len,
			  uint64_t off)
{
	record(r, l->dev->index, off, len);
	count(&l->dev->counters.writes, &l->dev->counters.bytes_written, len);
	return dev_layer_pwrite(l->next, r, buf, len, off);
}

static int account_zero(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off,
			enum zero_fill mode)
{
	if (mode != ZERO_FILL_NONE) {
		record(r, l->dev->index, off, len);
		count(&l->dev->counters.writes, &l->dev->counters.bytes_written, len);
	}
	return dev_layer_zero(l->next, r, len, off, mode);
}

static int account_flush(struct dev_layer *l, struct dev_req *r)
{
	atomic_fetch_add(&l->dev->counters.flushes, 1);
	return dev_layer_flush(l->next, r);
}

static int account_submit_reads(struct dev_layer *l, struct dev_req *r, struct dev_aio *ios,
				size_t n)
{
	size_t before = r ? r->n : 0;
	for (size_t i = 0; i < n; i++)
		record(r, l->dev->index, ios[i].off, ios[i].len);
	int err = dev_layer_submit_reads(l->next, r, ios, n);
	if (err && r) {
		r->n = before; /* not submitted: the caller reads (and records) it again */
		return err;
	}
	for (size_t i = 0; i < n; i++)
		count(&l->dev->counters.reads, &l->dev->counters.bytes_read, ios[i].len);
	return err;
}

/* Counted, not logged: a trim belongs to no request of the log. */
static int account_trim(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off)
{
	count(&l->dev->counters.trims, &l->dev->counters.bytes_trimmed, len);
	return dev_layer_trim(l->next, r, len, off);
}

static const struct dev_ops account_ops = {
	.pread = account_pread,
	.pread_fd = account_pread_fd,
	.pwrite = account_pwrite,
	.zero = account_zero,
	.flush = account_flush,
	.submit_reads = account_submit_reads,
	.trim = account_trim,
};

static const struct dev_layer_type account_layer = {
	.cfg = {.name = "accounting", .order = 1},
	.ops = &account_ops,
};
DEV_LAYER_REGISTER(account_layer);
