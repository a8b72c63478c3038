/*
 * The timing model layer: charges each device I/O what the modelled disk
 * would take and records its completion in the request, then passes the
 * I/O on unchanged.  The model is whichever registered disk model [disk]
 * model names (struct disk_model_ops in layout/disk_model.h), called
 * through its table and named nowhere here; each device has its own
 * instance, which keeps its own timelines (one head, or many dies), and
 * calls on it are serialized by this layer's lock, in the order I/Os
 * reach it.  The keys every model shares are this layer's: capacity (the
 * disk the model is created for) and the metadata write.
 *
 * A reply that waits for the model is copied into memory anyway, so this
 * layer has no pread_fd and no submit_reads: its device's reads are
 * neither spliced from the backing nor queued (both would only hide the
 * time the reply must wait), and it tells the layers below (args.timed)
 * that polling would spend CPU for nothing.  On a device whose [disk]
 * model is none it leaves itself out of the stack.
 *
 * A flush is the drive's SYNCHRONIZE CACHE: it waits for the model's write
 * cache to be destaged.  charge_metadata is the file system's allocation
 * metadata update for one new extent, a FUA write (see fs/device.h).
 *
 * [disk] time_dilation = N: the model reads its times on a clock N times
 * slower (struct disk_clock, layout/disk_model.h), so a request waits N
 * times what the model charges it and the FUSE round trip is small
 * against that; the device's busy and queue time stay in model time.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device.h"

struct dev_timing {
	pthread_mutex_t lock;
	const struct disk_model_ops *ops;
	void *model; /* the model's state, under lock */
	struct disk_clock clock; /* the model's clock ([disk] time_dilation) */
	char *state_path; /* where a model with save() keeps its state; NULL = nowhere */
	bool metadata_io;	  /* [disk] metadata_io */
	uint64_t metadata_offset; /* [disk] metadata_offset */
	uint64_t metadata_room;	  /* bytes of the disk from metadata_offset on */
};

static struct dev_timing *timing_of(struct dev_layer *l)
{
	return l->priv;
}

/*
 * Adds the busy time the model reported in @c to the device's, and, for a
 * device I/O that arrived at @arrival (0 for a flush), its time from
 * arrival to completion @done to the device's queue time (iostat's
 * time_in_queue: over an interval, its growth is the mean number of I/Os
 * in flight, aqu-sz), both in model time, and makes @r wait until the
 * clock time of @done.
 */
static void note_cost(struct dev_layer *l, struct dev_req *r, const struct disk_io *c,
		      uint64_t arrival, uint64_t done)
{
	uint64_t until = disk_clock_real(&timing_of(l)->clock, done);

	atomic_fetch_add(&l->dev->counters.busy_ns, c->busy_ns);
	if (arrival && done > arrival)
		atomic_fetch_add(&l->dev->counters.queue_ns, done - arrival);
	if (r && until > r->complete_ns)
		r->complete_ns = until;
	if (r) {
		r->dies += c->dies;
		r->collisions += c->collisions;
	}
}

/* Charges [off, off+len) on the model for @r (its arrival is the submission time). */
static void charge(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off,
		   enum disk_op op)
{
	struct dev_timing *t = timing_of(l);
	struct disk_io c;
	if (!len)
		return;
	uint64_t now = r ? r->arrival_ns : mono_ns();
	pthread_mutex_lock(&t->lock);
	disk_clock_submit(&t->clock, t->ops, t->model, op, off, len, now, &c);
	pthread_mutex_unlock(&t->lock);
	note_cost(l, r, &c, disk_clock_model(&t->clock, now), c.complete_ns);
}

static int timing_pread(struct dev_layer *l, struct dev_req *r, void *buf, uint64_t len,
			uint64_t off)
{
	charge(l, r, len, off, DISK_READ);
	return dev_layer_pread(l->next, r, buf, len, off);
}

static int timing_pwrite(struct dev_layer *l, struct dev_req *r, const void *buf, uint64_t len,
			 uint64_t off)
{
	charge(l, r, len, off, DISK_WRITE);
	return dev_layer_pwrite(l->next, r, buf, len, off);
}

static int timing_zero(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off,
		       enum zero_fill mode)
{
	if (mode != ZERO_FILL_NONE)
		charge(l, r, len, off, DISK_WRITE);
	return dev_layer_zero(l->next, r, len, off, mode);
}

/*
 * The drive's SYNCHRONIZE CACHE: @r waits until the model has destaged
 * every dirty byte of this device (at once for a model without a flush).
 * A flush no request owns (@r NULL: the syncer's periodic one, which makes
 * the backing durable before the catalog, the one before a catalog
 * sync (sfs_flush_ordered()), or the one before reusing freed space) is scatterfs's own bookkeeping, not the workload's: it is not
 * charged, or every mount would model a drive whose cache is flushed every
 * SYNC_INTERVAL_S seconds.
 */
static int timing_flush(struct dev_layer *l, struct dev_req *r)
{
	struct dev_timing *t = timing_of(l);
	if (t->ops->flush && r) {
		struct disk_io c;
		uint64_t now = disk_clock_model(&t->clock, r->arrival_ns);
		pthread_mutex_lock(&t->lock);
		uint64_t done = t->ops->flush(t->model, now, &c);
		pthread_mutex_unlock(&t->lock);
		note_cost(l, r, &c, 0, done);
	}
	return dev_layer_flush(l->next, r);
}

/*
 * One new extent's metadata write: a forced-unit-access write of one
 * block at [disk] metadata_offset, charged on the model only (nothing is
 * written to the backing: the catalog holds the metadata).
 */
static int timing_charge_metadata(struct dev_layer *l, struct dev_req *r)
{
	struct dev_timing *t = timing_of(l);
	if (!t->metadata_io)
		return 0;
	uint64_t len = l->dev->block_size;
	if (len > t->metadata_room)
		len = t->metadata_room;
	charge(l, r, len, t->metadata_offset, DISK_WRITE_FUA);
	return 0;
}

/*
 * A trim: the model's, when it has one (an SSD's FTL drops the pages; a
 * rotating disk ignores it).  Nobody waits for it: its time counts in the
 * device's busy time only.
 */
static int timing_trim(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off)
{
	struct dev_timing *t = timing_of(l);
	if (t->ops->trim && len) {
		struct disk_io c;
		uint64_t now = disk_clock_model(&t->clock, r ? r->arrival_ns : mono_ns());
		pthread_mutex_lock(&t->lock);
		uint64_t done = t->ops->trim(t->model, off, len, now, &c);
		pthread_mutex_unlock(&t->lock);
		note_cost(l, NULL, &c, now, done);
	}
	return dev_layer_trim(l->next, r, len, off);
}

/*
 * A model with a state of its own (an SSD's FTL) keeps it across a clean
 * unmount beside the catalog (state_path): written to a temporary file,
 * synced and renamed over the old one, so that a crash while writing it
 * leaves the previous one whole.
 */
static void timing_save_state(struct dev_layer *l)
{
	struct dev_timing *t = timing_of(l);
	char *tmp = NULL;
	int rc, fd = -1;

	if (!t->ops->save || !t->state_path)
		return;
	if (asprintf(&tmp, "%s.tmp", t->state_path) < 0) {
		tmp = NULL;
		rc = -ENOMEM;
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	pthread_mutex_lock(&t->lock);
	rc = t->ops->save(t->model, fd);
	pthread_mutex_unlock(&t->lock);
	if (!rc && fsync(fd) != 0)
		rc = -errno;
	if (close(fd) != 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, t->state_path) != 0)
		rc = -errno;
out:
	if (rc) {
		fprintf(stderr,
			"scatterfs: device %s: cannot write the disk model's state to %s: %s (the "
			"next mount starts the drive as a new one)\n",
			l->dev->name, t->state_path, strerror(-rc));
		if (tmp)
			unlink(tmp);
	}
	free(tmp);
}

/*
 * The model's state of the last clean unmount, from state_path, when
 * there is one: a file that is not this drive's (another geometry,
 * damaged) is discarded with one line on stderr and the drive starts as
 * create() made it, as when there is none; only the model's timing
 * depends on it, never data.  0, or create()'s error.
 */
static int timing_load_state(struct dev_layer *l, const void *params, uint64_t capacity,
			     char *err, size_t errlen)
{
	struct dev_timing *t = timing_of(l);
	char why[512];
	int rc, fd = open(t->state_path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		rc = -errno;
	} else {
		rc = t->ops->load(t->model, fd, why, sizeof(why));
		close(fd);
		if (!rc)
			return 0;
	}
	fprintf(stderr,
		"scatterfs: device %s: the disk model's state %s is discarded: %s; the drive "
		"starts as a new one\n",
		l->dev->name, t->state_path, rc == -EINVAL ? why : strerror(-rc));
	if (t->ops->destroy)
		t->ops->destroy(t->model);
	t->model = NULL;
	return t->ops->create(params, capacity, &t->model, err, errlen);
}

static void timing_close(struct dev_layer *l)
{
	struct dev_timing *t = timing_of(l);
	free(t->state_path);
	if (t->ops->destroy)
		t->ops->destroy(t->model);
	pthread_mutex_destroy(&t->lock);
}

/* The model's counters (struct disk_model_ops counters), read under the lock. */
static void timing_counters(struct dev_layer *l,
			    void (*emit)(void *ctx, const char *name, uint64_t value), void *ctx)
{
	struct dev_timing *t = timing_of(l);
	if (!t->ops->counters)
		return;
	pthread_mutex_lock(&t->lock);
	t->ops->counters(t->model, emit, ctx);
	pthread_mutex_unlock(&t->lock);
}

static int timing_die_of(void *ctx, uint64_t off)
{
	struct dev_timing *t = ctx;
	return t->ops->die_of(t->model, off);
}

/* The flash layout score of one file's extents, from the model's dies, under the lock. */
static int timing_flash_score(struct dev_layer *l, const struct layout_extent *v, size_t n,
			      struct flash_stats *out)
{
	struct dev_timing *t = timing_of(l);
	if (!t->ops->die_of || !t->ops->page_bytes)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&t->lock);
	flash_score(v, n, t->ops->page_bytes(t->model), timing_die_of, t, out);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

static const struct dev_ops timing_ops = {
    .pread = timing_pread,
    .pwrite = timing_pwrite,
    .zero = timing_zero,
    .flush = timing_flush,
    .charge_metadata = timing_charge_metadata,
    .trim = timing_trim,
    .counters = timing_counters,
    .flash_score = timing_flash_score,
    .save_state = timing_save_state,
    .close = timing_close,
};

/* The model's instance for this device; every refusal is this layer's own message. */
static int timing_open(struct dev_layer *l, struct dev_layer_args *a, char *err, size_t errlen)
{
	const struct disk_params *disk = a->disk;
	struct dev_timing *t = timing_of(l);
	struct device *d = l->dev;

	if (disk->model == DISK_NONE)
		return DEV_LAYER_SKIP;
	uint64_t capacity;
	int fit = disk_model_fits(disk, d->name, d->size, &capacity, err, errlen);
	if (fit)
		return fit;
	t->ops = disk->model;
	const void *params = disk_model_params(disk, t->ops);
	int rc = t->ops->create(params, capacity, &t->model, err, errlen);
	if (!rc && t->ops->save && a->state_path) {
		t->state_path = strdup(a->state_path);
		if (!t->state_path)
			rc = -ENOMEM;
		else if (a->state_load)
			rc = timing_load_state(l, params, capacity, err, errlen);
	}
	if (rc) {
		if (rc == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		free(t->state_path);
		if (t->model && t->ops->destroy)
			t->ops->destroy(t->model);
		return rc;
	}
	t->clock = (struct disk_clock){.origin_ns = mono_ns(), .dilation = a->time_dilation};
	if (!t->clock.dilation)
		t->clock.dilation = 1;
	t->metadata_io = disk->metadata_io;
	t->metadata_offset = disk->metadata_offset;
	t->metadata_room = t->metadata_io ? capacity - disk->metadata_offset : 0;
	pthread_mutex_init(&t->lock, NULL);
	l->splice = false;
	a->timed = true;
	return 0;
}

static const struct dev_layer_type timing_layer = {
	.cfg = {.name = "timing", .order = 2, .flags = CONFIG_LAYER_DISK},
	.ops = &timing_ops,
	.priv_size = sizeof(struct dev_timing),
	.open = timing_open,
};
DEV_LAYER_REGISTER(timing_layer);
