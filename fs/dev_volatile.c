/*
 * The volatile layer: a simulated power failure ([device] volatile = true).
 *
 * Every write and zero-fill that passes is kept where a crash can lose
 * it, until it is durable.  How: writes reach the backing at once (so
 * reads, splicing and queued reads see them unchanged), and before the
 * first write of a range since the last durable point the layer reads the
 * range's old contents into an undo log in memory (undo.h).  A flush that
 * reaches this layer (fsync, fdatasync, an O_SYNC or O_DSYNC write, the
 * syncs the allocator needs to reuse freed space) has passed the layers
 * above, the timing model's among them (whose flush waits for the drive's
 * write cache to destage), and the backing's own flush has succeeded: it
 * drops the undo log, since everything written before it is durable.  A
 * flush that a fault rule ignores or fails never gets here, so its data
 * stays volatile; one that flush = linux fails has the layer forget the
 * file's writes (dev_volatile_forget()): they move to a second log that
 * no flush drops, which a crash applies too, and a clean unmount; a forgotten write into space
 * the file never wrote (struct dev_req's fresh) comes back as zeros, not
 * as the space's old bytes (a deleted file's), as ext4 leaves an extent
 * whose write failed unwritten.  The crash (dev_volatile_crash(), the control file's
 * crash command) writes the old contents back, or with torn keeps a
 * seeded prefix of each range (undo_apply()), makes that durable on the
 * host, and fails every later write of the device.
 *
 * Memory: the old contents of every range written since the last flush,
 * plus about 64 bytes an entry; [device] volatile_max bounds it.  A write
 * that would go past the bound fails with ENOSPC (reported once on
 * stderr): durable data is never dropped to make room, and nothing
 * becomes durable without a flush.  Besides, the old contents of the
 * forgotten writes, which no flush drops (at most volatile_max more at
 * each failed flush; the counter volatile_forgotten_bytes).
 *
 * With volatile = false (the default) the layer leaves itself out of the
 * stack (DEV_LAYER_SKIP): the I/O path is the one without it.  Put it
 * right above base, below timing and faults:
 *
 *     layers = accounting, faults, timing, volatile, base
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dev_volatile.h"
#include "device.h"
#include "undo.h"

struct vol_conf {
	bool on;
	uint64_t max;
};

struct vol {
	/* Writes hold it shared from their note to their write; flush and crash exclusive. */
	pthread_rwlock_t gate;
	pthread_mutex_t lock; /* the undo log */
	struct undo u;
	/*
	 * Writes a failed flush forgot (flush = linux, dev_volatile_forget()):
	 * no flush makes them durable, a crash brings their old bytes back;
	 * a later write of one of their bytes moves that byte to @u (the
	 * old contents with it), whose next flush makes it durable.  Disjoint
	 * from @u after every flush.
	 */
	struct undo lost;
	bool crashed;
	bool full_reported;
	uint64_t flushes_kept; /* flushes that made something durable */
};

static const struct dev_layer_type volatile_layer;

static struct dev_layer *find(const struct device *d)
{
	for (struct dev_layer *l = d->top; l; l = l->next)
		if (l->type == &volatile_layer)
			return l;
	return NULL;
}

bool dev_volatile_on(const struct device *d)
{
	return find(d) != NULL;
}

/* The durable contents: what the backing holds, or the old bytes of a forgotten write. */
static int lower_read(void *ctx, void *buf, uint64_t len, uint64_t off)
{
	struct dev_layer *l = ctx;
	struct vol *v = l->priv;
	int err = dev_layer_pread(l->next, NULL, buf, len, off);
	if (!err)
		undo_overlay(&v->lost, buf, len, off);
	return err;
}

/* Keeps the old contents of [off, +len) and takes the gate; -errno refuses the write. */
static int begin_write(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off)
{
	struct vol *v = l->priv;
	pthread_rwlock_rdlock(&v->gate);
	if (v->crashed) {
		pthread_rwlock_unlock(&v->gate);
		return -EIO;
	}
	pthread_mutex_lock(&v->lock);
	/*
	 * The bound is on what a flush can make durable (@u): forgotten
	 * writes (@lost), which no flush drops, do not count, or once they
	 * reached it every later write would fail for good.
	 */
	const struct vol_conf *c = l->conf;
	v->u.max = c->max;
	int err = undo_note(&v->u, off, len, lower_read, l, r ? r->ino : 0,
			    r && r->logical != DEV_NO_LOGICAL ? r->logical : UINT64_MAX,
			    r ? r->path : NULL, r && r->fresh);
	bool report = err == -ENOSPC && !v->full_reported;
	if (report)
		v->full_reported = true;
	uint64_t held = v->u.bytes;
	pthread_mutex_unlock(&v->lock);
	if (report) {
		char line[512];
		snprintf(line, sizeof line,
			 "scatterfs: device %s: volatile_max reached (%" PRIu64
			 " bytes not yet durable): writes fail with ENOSPC until an fsync or "
			 "sync makes them durable; not reported again",
			 l->dev->name, held);
		dev_report(line);
	}
	if (err)
		pthread_rwlock_unlock(&v->gate);
	return err;
}

static int vol_pwrite(struct dev_layer *l, struct dev_req *r, const void *buf, uint64_t len,
		      uint64_t off)
{
	struct vol *v = l->priv;
	int err = begin_write(l, r, len, off);
	if (err)
		return err;
	err = dev_layer_pwrite(l->next, r, buf, len, off);
	pthread_rwlock_unlock(&v->gate);
	return err;
}

static int vol_zero(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off,
		    enum zero_fill mode)
{
	struct vol *v = l->priv;
	if (mode == ZERO_FILL_NONE)
		return dev_layer_zero(l->next, r, len, off, mode);
	int err = begin_write(l, r, len, off);
	if (err)
		return err;
	err = dev_layer_zero(l->next, r, len, off, mode);
	pthread_rwlock_unlock(&v->gate);
	return err;
}

static int vol_flush(struct dev_layer *l, struct dev_req *r)
{
	struct vol *v = l->priv;
	pthread_rwlock_wrlock(&v->gate);
	int err = v->crashed ? -EIO : dev_layer_flush(l->next, r);
	if (!err) {
		pthread_mutex_lock(&v->lock);
		if (v->u.n)
			v->flushes_kept++;
		/* a forgotten byte written again is durable now */
		undo_subtract(&v->lost, &v->u);
		undo_clear(&v->u);
		pthread_mutex_unlock(&v->lock);
	}
	pthread_rwlock_unlock(&v->gate);
	return err;
}

static int vol_trim(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off)
{
	struct vol *v = l->priv;
	if (v->crashed)
		return -EIO;
	return dev_layer_trim(l->next, r, len, off);
}

static void vol_counters(struct dev_layer *l,
			 void (*emit)(void *ctx, const char *name, uint64_t value), void *ctx)
{
	struct vol *v = l->priv;
	pthread_mutex_lock(&v->lock);
	uint64_t bytes = v->u.bytes, ranges = v->u.n, kept = v->flushes_kept, lost = v->lost.bytes;
	pthread_mutex_unlock(&v->lock);
	emit(ctx, "volatile_bytes", bytes);
	emit(ctx, "volatile_forgotten_bytes", lost);
	emit(ctx, "volatile_ranges", ranges);
	emit(ctx, "durable_flushes", kept);
}

static int write_back(struct device *d, struct vol *v, bool crash, uint64_t *rng, uint32_t sector,
		      FILE *log);

static void vol_close(struct dev_layer *l)
{
	struct vol *v = l->priv;
	/*
	 * A clean unmount: the forgotten writes never reached the disk (Linux
	 * marked their pages clean, and an unmount drops them), so the next
	 * mount reads what the disk held, as after a crash.
	 */
	if (!v->crashed && v->lost.n && write_back(l->dev, v, false, NULL, 0, NULL))
		dev_report("scatterfs: volatile: the forgotten writes' old contents could not all be "
			   "written back at unmount");
	undo_free(&v->u);
	undo_free(&v->lost);
	pthread_mutex_destroy(&v->lock);
	pthread_rwlock_destroy(&v->gate);
}

/* Sync-report's lines for the entries of @u, each ending with @tail. */
static void report(const struct device *d, const struct undo *u, const char *tail, FILE *out)
{
	for (size_t i = 0; i < u->n;) {
		const struct undo_ent *e = &u->v[i];
		uint64_t len = e->len;
		size_t j = i + 1;
		/* one line for the ranges of one file contiguous on both sides */
		for (; j < u->n; j++) {
			const struct undo_ent *f = &u->v[j];
			if (f->ino != e->ino || f->off != e->off + len ||
			    (e->logical == UINT64_MAX) != (f->logical == UINT64_MAX) ||
			    (e->logical != UINT64_MAX && f->logical != e->logical + len))
				break;
			len += f->len;
		}
		if (e->ino && e->path)
			fprintf(out, "file /%s", e->path);
		else if (e->ino)
			fprintf(out, "file ino:%" PRIu64, e->ino);
		else
			fputs("file -", out);
		if (e->logical != UINT64_MAX)
			fprintf(out, " range %" PRIu64 "+%" PRIu64, e->logical, len);
		else
			fputs(" range -", out);
		fprintf(out, " device %s %" PRIu64 "+%" PRIu64 "%s\n", d->name, e->off, len, tail);
		i = j;
	}
}

int dev_volatile_report(struct device *d, FILE *out)
{
	struct dev_layer *l = find(d);
	if (!l)
		return 0;
	struct vol *v = l->priv;
	pthread_mutex_lock(&v->lock);
	report(d, &v->u, "", out);
	report(d, &v->lost, " forgotten", out);
	pthread_mutex_unlock(&v->lock);
	return 0;
}

int dev_volatile_forget(struct device *d, uint64_t ino)
{
	struct dev_layer *l = find(d);
	if (!l)
		return 0;
	struct vol *v = l->priv;
	pthread_rwlock_wrlock(&v->gate);
	pthread_mutex_lock(&v->lock);
	/* the files whose writes it forgets (each once), for d->forgot */
	uint64_t *inos = malloc((v->u.n ? v->u.n : 1) * sizeof *inos);
	size_t n = 0;
	for (size_t i = 0; inos && i < v->u.n; i++) {
		uint64_t f = v->u.v[i].ino;
		bool seen = !f || (ino && f != ino);
		for (size_t k = 0; k < n && !seen; k++)
			seen = inos[k] == f;
		if (!seen)
			inos[n++] = f;
	}
	int err = undo_take(&v->lost, &v->u, ino);
	pthread_mutex_unlock(&v->lock);
	pthread_rwlock_unlock(&v->gate);
	for (size_t k = 0; d->forgot && k < n; k++)
		d->forgot(d->forgot_ctx, inos[k]);
	free(inos);
	return err;
}

struct restore {
	int fd;
};

static int restore_write(void *ctx, const void *buf, uint64_t len, uint64_t off)
{
	struct restore *s = ctx;
	const char *p = buf;
	while (len) {
		ssize_t n = pwrite(s->fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (uint64_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/*
 * Writes back on @d's backing, made durable there, the old contents of
 * the forgotten writes and, with @crash, of the writes not yet durable
 * (each keeping a prefix with crash torn: @rng, @sector); one line per
 * range to @log when not NULL.  A clean unmount (no @crash) leaves the
 * latter: they are durable then.  Clears what it wrote back.  The caller
 * holds v->lock or is the last user.  @return 0 or the first -errno.
 */
static int write_back(struct device *d, struct vol *v, bool crash, uint64_t *rng, uint32_t sector,
		      FILE *log)
{
	/* a forgotten byte written again since: its old bytes are in @u's entry */
	undo_subtract(&v->lost, &v->u);
	/* a descriptor of its own, without O_DIRECT: any offset and length go */
	struct restore s = {.fd = open(d->path, O_WRONLY | O_CLOEXEC)};
	int err = s.fd < 0 ? -errno : 0;
	if (!err && crash)
		err = undo_apply(&v->u, restore_write, &s, rng, sector, log, d->name);
	/* a forgotten write never reached the disk: no prefix of it is kept */
	int err2 = s.fd < 0 ? 0 : undo_apply(&v->lost, restore_write, &s, NULL, 0, log, d->name);
	if (!err)
		err = err2;
	if (!err && fsync(s.fd))
		err = -errno;
	if (s.fd >= 0)
		close(s.fd);
	if (crash)
		undo_clear(&v->u);
	undo_clear(&v->lost);
	return err;
}

int dev_volatile_crash(struct device *d, uint64_t *rng, uint32_t sector, FILE *log,
		       uint64_t *dropped)
{
	struct dev_layer *l = find(d);
	if (!l)
		return 0;
	struct vol *v = l->priv;
	/* held until the process ends: no write of this device gets past it again */
	pthread_rwlock_wrlock(&v->gate);
	v->crashed = true;
	pthread_rwlock_unlock(&v->gate);
	pthread_mutex_lock(&v->lock);
	undo_subtract(&v->lost, &v->u); /* (for the count; write_back() does it too) */
	*dropped += v->u.bytes + v->lost.bytes;
	int err = write_back(d, v, true, rng, sector, log);
	pthread_mutex_unlock(&v->lock);
	return err;
}

static int vol_open(struct dev_layer *l, struct dev_layer_args *a, char *err, size_t errlen)
{
	(void)a;
	(void)err;
	(void)errlen;
	const struct vol_conf *c = l->conf;
	if (!c->on)
		return DEV_LAYER_SKIP;
	struct vol *v = l->priv;
	pthread_rwlockattr_t ra;
	pthread_rwlockattr_init(&ra);
	/* a flush must not wait behind an endless stream of writes */
	pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&v->gate, &ra);
	pthread_rwlockattr_destroy(&ra);
	pthread_mutex_init(&v->lock, NULL);
	v->u.max = c->max;
	return 0;
}

static const struct dev_ops volatile_ops = {
    .pwrite = vol_pwrite,
    .zero = vol_zero,
    .flush = vol_flush,
    .trim = vol_trim,
    .counters = vol_counters,
    .close = vol_close,
};

#define OWN(field) .home = CONFIG_LAYER_DATA, .offset = offsetof(struct vol_conf, field)

static const struct config_key volatile_keys[] = {
    {"device", "volatile", CONFIG_BOOL, OWN(on), .def = "false",
     .help = "simulated power failure: writes not yet flushed are lost at the control file's "
	     "crash"},
    {"device", "volatile_max", CONFIG_SIZE, OWN(max), .flags = CONFIG_HAS_MIN, .min = 1,
     .def = "1G",
     .help = "bytes of old contents volatile may hold; past it writes fail with ENOSPC"},
};

static const struct dev_layer_type volatile_layer = {
    .cfg = {.name = "volatile",
	    .order = 3,
	    .keys = volatile_keys,
	    .nkeys = sizeof volatile_keys / sizeof volatile_keys[0],
	    .data_size = sizeof(struct vol_conf)},
    .ops = &volatile_ops,
    .priv_size = sizeof(struct vol),
    .open = vol_open,
};
DEV_LAYER_REGISTER(volatile_layer);
