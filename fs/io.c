/*
 * The I/O path: every request is mapped through the file's extent map and
 * becomes one device I/O per physically contiguous run, issued through the
 * top of the device's layer stack (device.h), which records it for the log,
 * charges the timing model and does the system call.
 *
 * Reads reply with a fuse_bufvec: an fd segment per device run when the
 * stack lets the reply splice from the backing (libfuse reads or splices
 * it), else the runs read into a per-thread buffer; a shared zero buffer
 * stands for holes and unwritten extents, so bytes never written read as
 * zeros whatever the device held.  Writes allocate through the file's
 * placement pattern (layout_allocate), zero-fill new extents as
 * autoextend.zero_fill says, then write the data.  Unaligned writes and an
 * O_DIRECT backing go through a per-thread aligned bounce buffer.
 * Reads that may wait for other device reads are queued (io_queue.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bounce.h"
#include "catalog.h"
#include "io_i.h"
#include "reqlog.h"
#include "sfs.h"
#include "transport.h"
#include "units.h"

#define ZERO_BUF_SIZE MiB

/* Never written: the source of zeros for holes. */
static char zero_buf[ZERO_BUF_SIZE] __attribute__((aligned(4096)));

uint64_t now_us(const struct sfs *fs)
{
	uint64_t start = (uint64_t)fs->start_mono.tv_sec * NS_PER_S + (uint64_t)fs->start_mono.tv_nsec;
	return (mono_ns() - start) / 1000;
}

static void touch_times(struct inode *in, bool mtime)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	if (mtime)
		in->attr.mtime = now;
	in->attr.ctime = now;
	in->attr_dirty = true;
}

static void mark_dirty(struct inode *in, uint64_t logical)
{
	if (logical < in->dirty_from)
		in->dirty_from = logical;
}

/*
 * Zero-fills the new extents of @plan except the blocks [skip_from,
 * skip_to) that the caller is about to overwrite, marks what it zeroed as
 * written, and logs an extend row when the plan grew the file.  The
 * zero-fill I/O is charged to the request @r too.
 */
static int zero_fill_plan(struct sfs *fs, struct inode *in, const struct alloc_plan *plan,
			  uint64_t skip_from, uint64_t skip_to, pid_t pid, struct dev_req *r)
{
	struct dev_req ext;
	io_req_file(fs, &ext, mono_ns(), r ? r->op : DEV_OP_WRITE, in);
	ext.fresh = true; /* zeros into space the file never wrote */
	uint64_t ts = now_us(fs);
	int err = 0;
	for (size_t i = 0; i < plan->n && !err; i++) {
		const struct extent *e = &plan->v[i];
		uint64_t lo = e->logical, hi = e->logical + e->length;
		uint64_t parts[2][2] = {{lo, hi < skip_from ? hi : skip_from},
					{lo > skip_to ? lo : skip_to, hi}};
		for (int k = 0; k < 2 && !err && plan->zero_fill != ZERO_FILL_NONE; k++) {
			uint64_t a = parts[k][0], b = parts[k][1];
			if (b <= a)
				continue;
			ext.logical = a;
			err = dev_zero(fs->dev[e->dev], &ext, b - a, e->device + (a - lo),
				       plan->zero_fill);
			if (!err)
				err = extmap_mark_written(&in->map, a, b - a);
		}
	}
	uint64_t ns = mono_ns() - ext.arrival_ns;
	if (r && ext.complete_ns > r->complete_ns)
		r->complete_ns = ext.complete_ns;
	if (plan->extend_bytes) {
		atomic_fetch_add(&fs->stats.extends, 1);
		atomic_fetch_add(&fs->stats.extend_bytes, plan->extend_bytes);
		atomic_fetch_add(&fs->stats.zero_fill_ns, ns);
		if (reqlog_wants(fs->log, LOG_EXTEND))
			io_log_request(fs, LOG_EXTEND, pid, in, plan->extend_from, plan->extend_bytes,
				    err ? err : (int64_t)plan->extend_bytes, ts, &ext);
	}
	dev_req_release(&ext);
	return err;
}

/*
 * An allocation of [@off, @off+@len) of @in on @d refused with ENOSPC:
 * counted, and the device's first one reported in one line that says how
 * much of the used space is reservation (allocated past the ends of files,
 * interleaved gaps) rather than data, from the catalog once every inode
 * is flushed to it.  The caller holds @in's lock.
 */
static void note_enospc(struct sfs *fs, struct inode *in, struct device *d, uint64_t off,
			uint64_t len)
{
	uint32_t bs[SFS_MAX_DEVICES];
	uint64_t reserved[SFS_MAX_DEVICES];
	char *path = NULL, line[4096 + 1024];

	atomic_fetch_add(&d->enospc, 1);
	if (atomic_exchange(&d->enospc_reported, true))
		return;
	for (unsigned i = 0; i < fs->ndev; i++)
		bs[i] = fs->dev[i]->block_size;
	/* Busy inodes are skipped (-EAGAIN): their newest extents may be missing. */
	inode_flush_all(fs, false, in);
	if (catalog_reserved_bytes(fs->cat, bs, fs->ndev, reserved))
		reserved[d->index] = 0;
	pthread_mutex_lock(&d->alloc_lock);
	uint64_t size = devalloc_size(d->alloc);
	uint64_t used = size - devalloc_free_bytes(d->alloc) - d->pending_free_bytes;
	pthread_mutex_unlock(&d->alloc_lock);
	uint64_t r = reserved[d->index];
	char who[64];
	if (catalog_path_of(fs->cat, in->ino, &path))
		path = NULL;
	snprintf(who, sizeof who, "inode %llu", (unsigned long long)in->ino);
	int n = snprintf(line, sizeof line,
			 "scatterfs: device '%s' is full: no room for bytes %llu to %llu of %s%s "
			 "(ENOSPC); %llu of its %llu bytes are in use, %llu of them (%.0f%%) "
			 "reserved, not data: allocated past the ends of files (the rest of an "
			 "extent, autoextend.next, fallocate --keep-size) or kept as interleaved "
			 "gaps",
			 d->name, (unsigned long long)off, (unsigned long long)(off + len),
			 path ? "/" : "", path ? path : who, (unsigned long long)used,
			 (unsigned long long)size, (unsigned long long)r,
			 used ? 100.0 * (double)r / (double)used : 0.0);
	if (n > 0 && (size_t)n < sizeof line && 2 * r > used)
		n += snprintf(line + n, sizeof line - (size_t)n,
			      "; mostly reservation: smaller extents (layout.extent_size, "
			      "autoextend.next) leave more room for data");
	if (n > 0 && (size_t)n < sizeof line)
		snprintf(line + n, sizeof line - (size_t)n,
			 "; counted in .scatterfs/stats (devices.%s.enospc, .reserved), not "
			 "reported again",
			 d->name);
	dev_report(line);
	free(path);
}

/* Allocates [off, off+len) and zero-fills what is new outside [skip_from, skip_to). */
static int allocate_range(struct sfs *fs, struct inode *in, uint64_t off, uint64_t len,
			  uint64_t skip_from, uint64_t skip_to, pid_t pid, struct dev_req *r)
{
	struct alloc_plan plan = {0};
	size_t ngaps = in->gaps.n;
	struct device *d = inode_device(fs, in);
	pthread_mutex_lock(&d->alloc_lock);
	uint64_t alloc_end = extmap_end(&in->map);
	int err = layout_allocate_on(in->params, d->alloc, d->index, &in->map, &in->gaps, off, len,
				     &plan);
	bool pending = d->pending_free.n > 0;
	pthread_mutex_unlock(&d->alloc_lock);
	if (err == -ENOSPC && pending) {
		/* Space freed but not yet durable: make it so, then try again. */
		if (dev_flush(d, NULL) == 0 && sfs_sync(fs, in) == 0) {
			pthread_mutex_lock(&d->alloc_lock);
			err = layout_allocate_on(in->params, d->alloc, d->index, &in->map,
						 &in->gaps, off, len, &plan);
			pthread_mutex_unlock(&d->alloc_lock);
		}
	}
	if (err == -ENOSPC)
		note_enospc(fs, in, d, off, len);
	if (err) {
		alloc_plan_release(&plan);
		/* A refused autoextend (ENOSPC, EFBIG) is logged too: offset the
		 * allocated end, size the bytes the request needed past it. */
		if (off + len > alloc_end && reqlog_wants(fs->log, LOG_EXTEND)) {
			struct dev_req none;
			io_req_init(fs, &none, mono_ns());
			io_log_request(fs, LOG_EXTEND, pid, in, alloc_end, off + len - alloc_end, err,
				    now_us(fs), &none);
		}
		return err;
	}
	if (in->gaps.n != ngaps)
		in->gaps_dirty = true;
	if (plan.n) {
		mark_dirty(in, plan.v[0].logical);
		err = zero_fill_plan(fs, in, &plan, skip_from, skip_to, pid, r);
		/*
		 * Each new extent's metadata update, after its zero-fill (as a
		 * journaling file system commits an allocation after the data
		 * it covers): charged to the request, not to the extend row,
		 * whose latency is the zero-fill alone.
		 */
		if (r) {
			r->logical = DEV_NO_LOGICAL;
			r->fresh = false;
		}
		for (size_t i = 0; i < plan.n && !err; i++)
			err = dev_charge_metadata(fs->dev[plan.v[i].dev], r);
	}
	alloc_plan_release(&plan);
	return err;
}

/*
 * Calls @fn for each segment of logical [off, off+len) of @in, in order,
 * however many there are.  Stops at the first non-zero return.
 */
int io_for_each_segment(struct inode *in, uint64_t off, uint64_t len,
			    int (*fn)(void *opaque, const struct segment *s), void *opaque)
{
	struct segment segs[MAX_SEGS];
	while (len) {
		size_t n = extmap_lookup(&in->map, off, len, segs, MAX_SEGS);
		for (size_t i = 0; i < n; i++) {
			int err = fn(opaque, &segs[i]);
			if (err)
				return err;
		}
		uint64_t done = segs[n - 1].logical + segs[n - 1].length - off;
		off += done;
		len -= done;
	}
	return 0;
}

struct read_ctx {
	struct sfs *fs;
	struct dev_req *r;
	uint64_t off;       /* logical offset of the request */
	size_t size;        /* its bytes (up to the end of the file) */
	char *buf;          /* copy target (O_DIRECT backing or disk model), or NULL */
	struct fuse_bufvec *bv; /* otherwise: one fd buffer per device run, zeros between */
	size_t cap;         /* entries of bv */
	/*
	 * Where the runs go once a layer declined to splice one (pread_fd
	 * -EOPNOTSUPP): the request's bytes from that run on are copied here
	 * and join bv as memory buffers; NULL while every run spliced.
	 */
	char *copy;
};

/* Adds @b to the reply vector, which is per thread and kept: no allocation per request. */
static int add_buf(struct read_ctx *c, struct fuse_buf b)
{
	if (c->bv->count == c->cap) {
		size_t cap;
		struct fuse_bufvec *bv = bounce_bufvec_grow(&cap);
		if (!bv)
			return -ENOMEM;
		c->bv = bv;
		c->cap = cap;
	}
	c->bv->buf[c->bv->count++] = b;
	return 0;
}

static int read_segment(void *opaque, const struct segment *s)
{
	struct read_ctx *c = opaque;
	if (c->buf) {
		char *d = c->buf + (s->logical - c->off);
		if (s->kind != SEG_DATA) {
			memset(d, 0, s->length);
			return 0;
		}
		c->r->logical = s->logical;
		return dev_pread(c->fs->dev[s->dev], c->r, d, s->length, s->device);
	}
	if (s->kind == SEG_DATA) {
		int fd, err = -EOPNOTSUPP;
		c->r->logical = s->logical;
		if (!c->copy)
			err = dev_pread_fd(c->fs->dev[s->dev], c->r, s->length, s->device, &fd);
		if (!err)
			return add_buf(c, (struct fuse_buf){.size = s->length,
							    .flags = FUSE_BUF_IS_FD |
								     FUSE_BUF_FD_SEEK |
								     FUSE_BUF_FD_RETRY,
							    .fd = fd,
							    .pos = (off_t)s->device});
		if (err != -EOPNOTSUPP)
			return err;
		/*
		 * A layer would not let this run splice after all (the fault
		 * layer once a rule exists, say): this run and the rest are
		 * copied, and the runs already spliced stay as they are, so
		 * that no device I/O is issued, counted or timed twice.
		 */
		if (!c->copy && !(c->copy = bounce_get(BOUNCE_REPLY, c->size)))
			return -ENOMEM;
		char *d = c->copy + (s->logical - c->off);
		err = dev_pread(c->fs->dev[s->dev], c->r, d, s->length, s->device);
		return err ? err : add_buf(c, (struct fuse_buf){.size = s->length, .mem = d});
	}
	for (uint64_t done = 0; done < s->length; done += ZERO_BUF_SIZE) {
		uint64_t n = s->length - done < ZERO_BUF_SIZE ? s->length - done : ZERO_BUF_SIZE;
		int err = add_buf(c, (struct fuse_buf){.size = n, .mem = zero_buf});
		if (err)
			return err;
	}
	return 0;
}

void io_read(struct sfs *fs, fuse_req_t req, struct inode *in, uint64_t off, size_t size)
{
	struct dev_req r;
	io_req_file(fs, &r, mono_ns(), DEV_OP_READ, in);
	uint64_t ts = now_us(fs);
	pid_t pid = fuse_req_ctx(req)->pid;
	struct read_ctx c = {.fs = fs, .r = &r, .off = off};
	size_t want = size; /* the log shows the request; result what was read */
	int err = 0;

	/* A ring thread with reads in flight on its own ring must not sleep
	 * on the lock: a writer holding it may wait for those reads' pins,
	 * which only this thread can drop (transport_drain()). */
	if (pthread_rwlock_tryrdlock(&in->lock)) {
		transport_drain();
		pthread_rwlock_rdlock(&in->lock);
	}
	if (!in->map_loaded) {
		pthread_rwlock_unlock(&in->lock);
		transport_drain();
		inode_wrlock(in);
		err = inode_load_map(fs, in);
		pthread_rwlock_unlock(&in->lock);
		pthread_rwlock_rdlock(&in->lock);
		if (err)
			goto out;
	}
	uint64_t fsize = in->attr.size;
	if (off >= fsize)
		size = 0;
	else if (size > fsize - off)
		size = (size_t)(fsize - off);
	if (io_read_queued(fs, req, in, off, size, want, pid, ts, r.arrival_ns) == 0) {
		pthread_rwlock_unlock(&in->lock);
		return;
	}
	/* On the ring, read into the reply's own buffer (transport.c).  Else
	 * copy when the stack cannot splice (O_DIRECT backing), or to overlap
	 * the real read with the model's wait. */
	if (size && (c.buf = transport_reply_buffer(size))) {
		/* the payload buffer of this thread's ring entry */
	} else if (!fs->splice_replies && size) {
		c.buf = bounce_get(BOUNCE_REPLY, size);
		if (!c.buf) {
			err = -ENOMEM;
			goto out;
		}
	} else {
		c.bv = bounce_bufvec(&c.cap);
		if (!c.bv) {
			err = -ENOMEM;
			goto out;
		}
		*c.bv = (struct fuse_bufvec){.count = 0};
	}
	c.size = size;
	if (size)
		err = io_for_each_segment(in, off, size, read_segment, &c);
	if (err)
		goto out;
	/* With the model, start the reply early by what copying it to the
	 * caller is expected to take, so the data arrives at the modelled
	 * completion (the estimate follows the measured copy speed). */
	uint64_t copy_ns = fs->model_on ? size * atomic_load(&fs->reply_ps_per_byte) / 1000 : 0;
	if (r.complete_ns)
		r.complete_ns -= copy_ns < r.complete_ns - r.arrival_ns ? copy_ns : 0;
	dev_req_wait(&r);
	uint64_t reply_start = mono_ns();
	if (c.buf) {
		struct fuse_bufvec one = FUSE_BUFVEC_INIT(size);
		one.buf[0].mem = c.buf;
		/* No SPLICE_MOVE here: pages gifted from a private buffer replace
		 * page-cache pages and lose the kernel's readahead mark, after
		 * which it reads two pages at a time (measured). */
		err = fuse_reply_data(req, &one, 0); /* 0 or -errno */
	} else {
		err = fuse_reply_data(req, c.bv, 0);
	}
	if (fs->model_on && size >= 65536) {
		/* Exponential average, weight 1/8, of the picoseconds per byte. */
		uint64_t ps = (mono_ns() - reply_start) * 1000 / size;
		uint64_t old = atomic_load(&fs->reply_ps_per_byte);
		atomic_store(&fs->reply_ps_per_byte, old - old / 8 + ps / 8);
	}
	r.complete_ns += r.complete_ns ? copy_ns : 0;
	io_note_reply(fs, &r);
	io_read_done(fs, in, pid, off, want, size, 0, err, ts, &r);
	pthread_rwlock_unlock(&in->lock);
	dev_req_release(&r);
	return;
out:
	io_read_done(fs, in, pid, off, want, size, err, 0, ts, &r);
	pthread_rwlock_unlock(&in->lock);
	dev_req_release(&r);
	fuse_reply_err(req, -err);
}

struct write_ctx {
	struct sfs *fs;
	struct dev_req *r;
	const char *buf;
	uint64_t off;
	uint64_t done; /* logical end of the runs written so far, in order */
};

static int write_segment(void *opaque, const struct segment *s)
{
	struct write_ctx *c = opaque;
	if (s->kind == SEG_HOLE)
		return -EIO; /* allocate_range() left a hole: a bug */
	c->r->logical = s->logical;
	c->r->fresh = s->kind == SEG_UNWRITTEN;
	int err = dev_pwrite(c->fs->dev[s->dev], c->r, c->buf + (s->logical - c->off), s->length,
			     s->device);
	if (!err)
		c->done = s->logical + s->length;
	return err;
}

/*
 * Writes @len bytes of @buf (block-aligned when the device is O_DIRECT) to
 * logical [@off, +@len), which is fully allocated, one device I/O per run,
 * in logical order.  *@done: the logical end of the runs that reached the
 * device (@off when none did), also when a later one fails.
 */
static int write_mapped(struct sfs *fs, struct inode *in, const char *buf, uint64_t off,
			uint64_t len, struct dev_req *r, uint64_t *done)
{
	struct write_ctx c = {fs, r, buf, off, off};
	int err = io_for_each_segment(in, off, len, write_segment, &c);
	*done = c.done;
	return err;
}

struct fill_ctx {
	struct sfs *fs;
	struct dev_req *r;
	char *dst;
	uint64_t off;
};

static int fill_segment(void *opaque, const struct segment *s)
{
	struct fill_ctx *c = opaque;
	char *d = c->dst + (s->logical - c->off);
	if (s->kind != SEG_DATA) {
		memset(d, 0, s->length);
		return 0;
	}
	c->r->logical = s->logical;
	return dev_pread(c->fs->dev[s->dev], c->r, d, s->length, s->device);
}

/* Fills @dst with the current contents of logical [@off, +@len). */
static int read_mapped(struct sfs *fs, struct inode *in, char *dst, uint64_t off, uint64_t len,
		       struct dev_req *r)
{
	struct fill_ctx c = {fs, r, dst, off};
	return io_for_each_segment(in, off, len, fill_segment, &c);
}

void io_note_reply(struct sfs *fs, const struct dev_req *r)
{
	if (!r->complete_ns)
		return;
	uint64_t now = mono_ns();
	uint64_t late = now > r->complete_ns ? now - r->complete_ns : 0;
	atomic_fetch_add(&fs->stats.modelled_replies, 1);
	if (late)
		atomic_fetch_add(&fs->stats.late_replies, 1);
	atomic_fetch_add(&fs->stats.late_hist[late_bucket(late / 1000)], 1);
}

ssize_t io_write(struct sfs *fs, struct inode *in, const char *buf, size_t size, uint64_t off,
		 pid_t pid)
{
	struct dev_req r;
	io_req_file(fs, &r, mono_ns(), DEV_OP_WRITE, in);
	uint64_t ts = now_us(fs);
	uint64_t bs = inode_device(fs, in)->block_size;
	int err = inode_load_map(fs, in);
	if (err || size == 0)
		goto out;
	if (off + size < off || off + size > (uint64_t)INT64_MAX) {
		err = -EFBIG;
		goto out;
	}
	uint64_t a = round_down(off, bs), b = round_up(off + size, bs);
	/* Blocks this write covers completely need no zero-fill. */
	uint64_t full_from = round_up(off, bs), full_to = round_down(off + size, bs);
	err = allocate_range(fs, in, a, b - a, full_from, full_to > full_from ? full_to : full_from,
			     pid, &r);
	if (err)
		goto out;
	bool aligned = a == off && b == off + size;
	uint64_t done = a;
	if (!aligned || (inode_device(fs, in)->direct && ((uintptr_t)buf % 4096))) {
		/* Build whole blocks: current contents, then the new bytes. */
		atomic_fetch_add(&fs->stats.writes_bounced, 1);
		char *tmp = bounce_get(BOUNCE_WRITE, b - a);
		if (!tmp) {
			err = -ENOMEM;
			goto out;
		}
		if (off != a)
			err = read_mapped(fs, in, tmp, a, bs, &r);
		if (!err && off + size != b && !(b - bs == a && off != a))
			err = read_mapped(fs, in, tmp + (b - bs - a), b - bs, bs, &r);
		if (err)
			goto out;
		memcpy(tmp + (off - a), buf, size);
		err = write_mapped(fs, in, tmp, a, b - a, &r, &done);
	} else {
		err = write_mapped(fs, in, buf, a, b - a, &r, &done);
	}
	if (err == -ENOSPC && done > off) {
		/*
		 * A later run found no room (the volatile layer's bound,
		 * volatile_max) after earlier ones reached the device: a short
		 * write of what they hold, as ext4 returns one when space runs
		 * out part way, not ENOSPC over changed bytes.  (An I/O error
		 * fails the whole write, as a direct write's does on ext4.)
		 */
		size = (done < off + size ? done : off + size) - off;
		b = done;
		err = 0;
	}
	if (!err) {
		size_t i = extmap_find(&in->map, a);
		/* Mark written only when something in range is unwritten. */
		for (; i < in->map.n && in->map.v[i].logical < b; i++) {
			if (in->map.v[i].flags & EXTENT_UNWRITTEN) {
				err = extmap_mark_written(&in->map, a, b - a);
				mark_dirty(in, a);
				break;
			}
		}
	}
	if (!err) {
		if (off + size > in->attr.size)
			in->attr.size = off + size;
		touch_times(in, true);
		atomic_fetch_add(&fs->stats.writes, 1);
		atomic_fetch_add(&fs->stats.bytes_written, size);
	}
out:
	/* (new extents whose rows are not durable: the catalog's next sync flushes first) */
	if (inode_extents_dirty(in))
		dev_note_new_data(inode_device(fs, in));
	dev_req_wait(&r);
	io_note_reply(fs, &r); /* the caller replies at once */
	if (reqlog_wants(fs->log, LOG_WRITE))
		io_log_request(fs, LOG_WRITE, pid, in, off, size, err ? err : (int64_t)size, ts, &r);
	dev_req_release(&r);
	return err ? err : (ssize_t)size;
}

/*
 * Writes zeros over the DATA parts of logical [off, off+len) (within one
 * block).  The zeros are ordered data, as ext4's data=ordered orders the
 * partial block of a truncate or a zero range: the catalog rows that
 * rely on them (a size that ends inside the block, or grows past it
 * again) must not become durable before they do, so the block's device is
 * flushed before the catalog's next sync (dev_note_new_data()).
 */
static int zero_partial(struct sfs *fs, struct inode *in, uint64_t off, uint64_t len,
			struct dev_req *r)
{
	if (!len)
		return 0;
	uint64_t bs = inode_device(fs, in)->block_size;
	uint64_t a = round_down(off, bs);
	struct segment s;
	extmap_lookup(&in->map, a, bs, &s, 1);
	if (s.kind != SEG_DATA || s.length < bs)
		return 0; /* unwritten or hole: already reads as zeros */
	char *tmp = bounce_get(BOUNCE_WRITE, bs);
	if (!tmp)
		return -ENOMEM;
	int err = read_mapped(fs, in, tmp, a, bs, r);
	if (!err) {
		memset(tmp + (off - a), 0, len);
		r->logical = a;
		r->fresh = false;
		err = dev_pwrite(fs->dev[s.dev], r, tmp, bs, s.device);
		if (!err)
			dev_note_new_data(fs->dev[s.dev]);
	}
	return err;
}

/* Zeros the bytes of [off, off+len) in partial blocks at its edges; returns the whole blocks. */
static int zero_edges(struct sfs *fs, struct inode *in, uint64_t off, uint64_t len,
		      uint64_t *whole_from, uint64_t *whole_to, struct dev_req *r)
{
	uint64_t bs = inode_device(fs, in)->block_size, end = off + len;
	uint64_t wf = round_up(off, bs), wt = round_down(end, bs);
	int err;
	if (wf >= wt) { /* inside one block, or two partial blocks */
		uint64_t mid = wf < end ? wf : end;
		err = zero_partial(fs, in, off, mid - off, r);
		if (!err && end > mid)
			err = zero_partial(fs, in, mid, end - mid, r);
		*whole_from = *whole_to = 0;
		return err;
	}
	err = zero_partial(fs, in, off, wf - off, r);
	if (!err)
		err = zero_partial(fs, in, wt, end - wt, r);
	*whole_from = wf;
	*whole_to = wt;
	return err;
}

bool io_fallocate_supported(int mode)
{
	int kind = mode & ~FALLOC_FL_KEEP_SIZE;
	return kind == 0 || kind == FALLOC_FL_ZERO_RANGE ||
	       (kind == FALLOC_FL_PUNCH_HOLE && (mode & FALLOC_FL_KEEP_SIZE));
}

int io_fallocate(struct sfs *fs, struct inode *in, int mode, uint64_t off, uint64_t len,
		 pid_t pid)
{
	if (!io_fallocate_supported(mode))
		return -EOPNOTSUPP;
	uint64_t bs = inode_device(fs, in)->block_size;
	int kind = mode & ~FALLOC_FL_KEEP_SIZE;
	struct dev_req r;
	io_req_file(fs, &r, mono_ns(),
		    kind == FALLOC_FL_PUNCH_HOLE   ? DEV_OP_PUNCH
		    : kind == FALLOC_FL_ZERO_RANGE ? DEV_OP_ZERO_RANGE
						   : DEV_OP_ALLOCATE,
		    in);
	uint64_t ts = now_us(fs);
	int err = inode_load_map(fs, in);
	if (err)
		return err;
	if (len == 0)
		return -EINVAL;
	if (off + len < off || off + len > (uint64_t)INT64_MAX)
		return -EFBIG;
	uint64_t wf, wt;
	switch (kind) {
	case 0: {
		uint64_t a = round_down(off, bs), b = round_up(off + len, bs);
		err = allocate_range(fs, in, a, b - a, 0, 0, pid, &r);
		break;
	}
	case FALLOC_FL_PUNCH_HOLE:
		err = zero_edges(fs, in, off, len, &wf, &wt, &r);
		if (!err && wt > wf)
			err = inode_unmap(fs, in, wf, wt - wf, DEV_OP_PUNCH);
		if (reqlog_wants(fs->log, LOG_PUNCH))
			io_log_request(fs, LOG_PUNCH, pid, in, off, len, err ? err : (int64_t)len, ts,
				    &r);
		break;
	case FALLOC_FL_ZERO_RANGE:
		err = zero_edges(fs, in, off, len, &wf, &wt, &r);
		if (!err && wt > wf) {
			/* Allocate the holes (as unwritten), then forget the data. */
			err = allocate_range(fs, in, wf, wt - wf, wf, wt, pid, &r);
			if (!err)
				err = extmap_mark_unwritten(&in->map, wf, wt - wf);
			mark_dirty(in, wf);
		}
		if (reqlog_wants(fs->log, LOG_ZERO))
			io_log_request(fs, LOG_ZERO, pid, in, off, len, err ? err : (int64_t)len, ts,
				    &r);
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (!err) {
		if (kind != FALLOC_FL_PUNCH_HOLE && !(mode & FALLOC_FL_KEEP_SIZE) &&
		    off + len > in->attr.size)
			in->attr.size = off + len;
		touch_times(in, kind != 0);
	}
	if (inode_extents_dirty(in)) /* a zero-fill the catalog will point at */
		dev_note_new_data(inode_device(fs, in));
	dev_req_wait(&r);
	dev_req_release(&r);
	return err;
}

int io_truncate(struct sfs *fs, struct inode *in, uint64_t size)
{
	uint64_t bs = inode_device(fs, in)->block_size;
	struct dev_req r;
	io_req_file(fs, &r, mono_ns(), DEV_OP_TRUNCATE, in);
	int err = inode_load_map(fs, in);
	if (err)
		return err;
	/*
	 * Every block wholly past the new end goes, whether the size shrinks
	 * or not: a truncate is how a caller drops a KEEP_SIZE preallocation
	 * (ext4 and XFS do the same).
	 */
	uint64_t keep = round_up(size, bs);
	if (size < in->attr.size && size % bs)
		err = zero_partial(fs, in, size, keep - size, &r);
	if (!err)
		inode_free_space(fs, in, keep, DEV_OP_TRUNCATE);
	if (!err) {
		in->attr.size = size;
		touch_times(in, true);
	}
	dev_req_wait(&r);
	dev_req_release(&r);
	return err;
}

int io_fsync(struct sfs *fs, struct inode *in, pid_t pid, bool datasync, atomic_uint *wb_seen)
{
	struct dev_req r;
	io_req_file(fs, &r, mono_ns(), DEV_OP_FSYNC, in);
	uint64_t ts = now_us(fs);
	int err;
	inode_wrlock(in);
	bool commit = inode_extents_dirty(in) ||
		      (datasync ? in->attr.size != in->stored_size : in->attr_dirty);
	if (commit) {
		/* Data and zero-fill first, then the catalog that points at them,
		 * under the lock: no write may add extents in between.  Only the
		 * file's device: the catalog's sync flushes first any other that
		 * holds new data its rows point at (sfs_flush_ordered()). */
		err = dev_flush(inode_device(fs, in), &r);
		if (!err)
			err = inode_store(fs, in, !datasync || in->attr.size != in->stored_size, true);
		pthread_rwlock_unlock(&in->lock);
	} else {
		/*
		 * Nothing of this file to commit (a file overwritten in place):
		 * the device flush needs no lock, so reads and other requests
		 * of the file go on while it lasts, as on ext4.  Then what the
		 * catalog already holds of the file, made durable when it is
		 * not yet.
		 */
		uint64_t seq = datasync ? in->data_seq : UINT64_MAX;
		struct device *d = inode_device(fs, in);
		pthread_rwlock_unlock(&in->lock);
		err = dev_flush(d, &r);
		if (!err)
			err = catalog_sync_upto(fs->cat, seq);
	}
	/*
	 * The flush's modelled completion (a disk model's destage, a fault's
	 * delay_ms), waited for with no lock held: what is durable is decided
	 * above, and the file's other requests meet the drive's busy time on
	 * the model's timeline, not behind this lock.
	 */
	dev_req_wait(&r);
	if (wb_seen) {
		/* a forgotten write of the file not reported to this handle yet: once */
		unsigned now = atomic_load(&in->wb_err) | 1;
		bool news = (atomic_exchange(wb_seen, now) | 1) != now;
		if (news && !err)
			err = -EIO;
		if (err == -EIO)
			atomic_fetch_or(&in->wb_err, 1); /* reported: a later open does not see it */
	}
	pthread_rwlock_rdlock(&in->lock); /* in->path, for the log */
	if (reqlog_wants(fs->log, LOG_FSYNC))
		io_log_request(fs, LOG_FSYNC, pid, in, 0, 0, err, ts, &r);
	pthread_rwlock_unlock(&in->lock);
	dev_req_release(&r);
	return err;
}

int io_fsyncdir(struct sfs *fs, struct inode *in, bool datasync)
{
	struct dev_req r;
	io_req_file(fs, &r, mono_ns(), DEV_OP_FSYNC, in);
	/*
	 * The data that the catalog's rows point at first, charged to this
	 * request and with no lock held (the catalog's own hook then finds
	 * nothing left, unless a write came in between).
	 */
	int err = sfs_flush_ordered(fs, &r);
	/* The entries were committed as they changed; fdatasync, as ext4's,
	 * leaves a new mtime in memory (so SQLite's directory sync after it
	 * creates its journal finds nothing left to commit). */
	if (!err && !datasync) {
		inode_wrlock(in);
		err = inode_store(fs, in, true, true);
		pthread_rwlock_unlock(&in->lock);
	} else if (!err) {
		err = catalog_sync(fs->cat);
	}
	dev_req_wait(&r);
	dev_req_release(&r);
	return err;
}
