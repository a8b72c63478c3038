/*
 * The I/O path: every request is mapped through the file's extent map and
 * becomes one device I/O per physically contiguous run.
 *
 * Reads reply with a fuse_bufvec: an fd segment per device run (libfuse
 * reads or splices it) and a shared zero buffer for holes and unwritten
 * extents, so bytes never written read as zeros whatever the device held.
 * Writes allocate through the file's placement pattern (layout_allocate),
 * zero-fill new extents as autoextend.zero_fill says, then write the data.
 * Unaligned writes and an O_DIRECT backing go through a per-thread aligned
 * bounce buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "reqlog.h"
#include "sfs.h"

#define ZERO_BUF_SIZE (1u << 20)
#define MAX_SEGS 64

/* Never written: the source of zeros for holes and zero-fill. */
static char zero_buf[ZERO_BUF_SIZE] __attribute__((aligned(4096)));

/*
 * Per-thread aligned bounce buffers: BOUNCE_WRITE builds the blocks of an
 * unaligned write, BOUNCE_READ takes O_DIRECT reads (which may fill the
 * write buffer from the device, so the two must differ).  A key's
 * destructor frees them when a worker thread ends.
 */
enum { BOUNCE_WRITE, BOUNCE_READ, BOUNCE_SLOTS };
struct bounce {
	char *buf[BOUNCE_SLOTS];
	size_t size[BOUNCE_SLOTS];
};
static __thread struct bounce *bounce;
static pthread_key_t bounce_key;
static pthread_once_t bounce_once = PTHREAD_ONCE_INIT;

static void bounce_free(void *p)
{
	struct bounce *b = p;
	for (int i = 0; i < BOUNCE_SLOTS; i++)
		free(b->buf[i]);
	free(b);
}

static void bounce_key_init(void)
{
	pthread_key_create(&bounce_key, bounce_free);
}

/* A 4096-aligned buffer of at least @size bytes, valid until the next call for @slot. */
static char *bounce_get(int slot, size_t size)
{
	if (!bounce) {
		pthread_once(&bounce_once, bounce_key_init);
		bounce = calloc(1, sizeof *bounce);
		if (!bounce)
			return NULL;
		pthread_setspecific(bounce_key, bounce);
	}
	if (size <= bounce->size[slot])
		return bounce->buf[slot];
	void *p;
	size_t want = size < (2u << 20) ? (2u << 20) : size;
	if (posix_memalign(&p, 4096, want))
		return NULL;
	free(bounce->buf[slot]);
	bounce->buf[slot] = p;
	bounce->size[slot] = want;
	return p;
}

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

uint64_t now_us(const struct sfs *fs)
{
	uint64_t start = (uint64_t)fs->start_mono.tv_sec * 1000000000u +
			 (uint64_t)fs->start_mono.tv_nsec;
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

static int pwrite_all(int fd, const char *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int pread_all(int fd, char *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pread(fd, buf, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) { /* past the end of a regular-file backing: zeros */
			memset(buf, 0, len);
			return 0;
		}
		buf += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Writes zeros over device [dev, dev+len) as @mode asks. */
static int zero_device(struct sfs *fs, enum zero_fill mode, uint64_t dev, uint64_t len)
{
	if (mode == ZERO_FILL_FALLOCATE) {
		if (fallocate(fs->dev_fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, (off_t)dev,
			      (off_t)len) == 0)
			return 0;
		if (errno != EOPNOTSUPP && errno != ENOSYS)
			return -errno;
		/* The backing cannot do it (a block device without write-zeroes). */
	}
	while (len) {
		size_t n = len < ZERO_BUF_SIZE ? (size_t)len : ZERO_BUF_SIZE;
		int err = pwrite_all(fs->dev_fd, zero_buf, n, dev);
		if (err)
			return err;
		dev += n;
		len -= n;
	}
	return 0;
}

/*
 * Zero-fills the new extents of @plan except the blocks [skip_from,
 * skip_to) that the caller is about to overwrite, marks what it zeroed as
 * written, and logs an extend row when the plan grew the file.
 */
static int zero_fill_plan(struct sfs *fs, struct inode *in, const struct alloc_plan *plan,
			  uint64_t skip_from, uint64_t skip_to, pid_t pid)
{
	uint64_t t0 = mono_ns();
	uint64_t ts = now_us(fs);
	int err = 0;
	struct run ios[MAX_SEGS];
	size_t nios = 0;
	for (size_t i = 0; i < plan->n && !err; i++) {
		const struct extent *e = &plan->v[i];
		uint64_t lo = e->logical, hi = e->logical + e->length;
		uint64_t parts[2][2] = {{lo, hi < skip_from ? hi : skip_from},
					{lo > skip_to ? lo : skip_to, hi}};
		for (int k = 0; k < 2 && !err; k++) {
			uint64_t a = parts[k][0], b = parts[k][1];
			if (b <= a)
				continue;
			if (plan->zero_fill != ZERO_FILL_NONE) {
				err = zero_device(fs, plan->zero_fill, e->device + (a - lo), b - a);
				if (!err)
					err = extmap_mark_written(&in->map, a, b - a);
			}
			if (nios < MAX_SEGS)
				ios[nios++] = (struct run){e->device + (a - lo), b - a};
		}
	}
	uint64_t ns = mono_ns() - t0;
	if (plan->extend_bytes) {
		atomic_fetch_add(&fs->stats.extends, 1);
		atomic_fetch_add(&fs->stats.extend_bytes, plan->extend_bytes);
		atomic_fetch_add(&fs->stats.zero_fill_ns, ns);
		if (reqlog_wants(fs->log, LOG_EXTEND)) {
			struct reqlog_row row = {
				.ts_us = ts,
				.op = LOG_EXTEND,
				.pid = pid,
				.path = in->path ? in->path : "",
				.offset = plan->extend_from,
				.size = plan->extend_bytes,
				.result = err ? err : (int64_t)plan->extend_bytes,
				.latency_us = ns / 1000,
				.device_io = ios,
				.ndevice_io = plan->zero_fill == ZERO_FILL_NONE ? 0 : nios,
			};
			reqlog_append(fs->log, &row);
		}
	}
	return err;
}

/* Allocates [off, off+len) and zero-fills what is new outside [skip_from, skip_to). */
static int allocate_range(struct sfs *fs, struct inode *in, uint64_t off, uint64_t len,
			  uint64_t skip_from, uint64_t skip_to, pid_t pid)
{
	struct alloc_plan plan = {0};
	size_t ngaps = in->gaps.n;
	pthread_mutex_lock(&fs->alloc_lock);
	int err = layout_allocate(in->params, fs->alloc, &in->map, &in->gaps, off, len, &plan);
	pthread_mutex_unlock(&fs->alloc_lock);
	if (err) {
		alloc_plan_release(&plan);
		return err;
	}
	if (in->gaps.n != ngaps)
		in->gaps_dirty = true;
	if (plan.n) {
		mark_dirty(in, plan.v[0].logical);
		err = zero_fill_plan(fs, in, &plan, skip_from, skip_to, pid);
	}
	alloc_plan_release(&plan);
	return err;
}

static void log_request(struct sfs *fs, enum log_op op, pid_t pid, const struct inode *in,
			uint64_t off, uint64_t size, int64_t result, uint64_t ts, uint64_t t0,
			const struct run *ios, size_t nios)
{
	struct reqlog_row row = {
		.ts_us = ts,
		.op = op,
		.pid = pid,
		.path = in->path ? in->path : "",
		.offset = off,
		.size = size,
		.result = result,
		.latency_us = (mono_ns() - t0) / 1000,
		.device_io = ios,
		.ndevice_io = nios,
	};
	reqlog_append(fs->log, &row);
}

/* Fills @iov with zeros or device bytes per @s, for an O_DIRECT backing. */
static int read_direct(struct sfs *fs, const struct segment *s, char *dst)
{
	uint64_t bs = fs->block_size;
	uint64_t a = s->device / bs * bs, b = (s->device + s->length + bs - 1) / bs * bs;
	char *buf = bounce_get(BOUNCE_READ, b - a);
	if (!buf)
		return -ENOMEM;
	int err = pread_all(fs->dev_fd, buf, b - a, a);
	if (!err)
		memcpy(dst, buf + (s->device - a), s->length);
	return err;
}

void io_read(struct sfs *fs, fuse_req_t req, struct inode *in, uint64_t off, size_t size)
{
	uint64_t t0 = mono_ns(), ts = now_us(fs);
	pid_t pid = fuse_req_ctx(req)->pid;
	struct segment segs[MAX_SEGS];
	struct run ios[MAX_SEGS];
	size_t nios = 0;
	struct {
		struct fuse_bufvec v;
		struct fuse_buf more[MAX_SEGS];
	} bv;
	char *direct_buf = NULL;
	int err = 0;

	pthread_rwlock_rdlock(&in->lock);
	if (!in->map_loaded) {
		pthread_rwlock_unlock(&in->lock);
		pthread_rwlock_wrlock(&in->lock);
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
	size_t n = size ? extmap_lookup(&in->map, off, size, segs, MAX_SEGS) : 0;
	if (n && segs[n - 1].logical + segs[n - 1].length < off + size)
		size = (size_t)(segs[n - 1].logical + segs[n - 1].length - off); /* short read */
	if (fs->dev_direct && size) {
		direct_buf = malloc(size);
		if (!direct_buf) {
			err = -ENOMEM;
			goto out;
		}
	}
	memset(&bv.v, 0, sizeof bv.v);
	bv.v.count = n;
	for (size_t i = 0; i < n; i++) {
		const struct segment *s = &segs[i];
		struct fuse_buf *b = &bv.v.buf[i];
		memset(b, 0, sizeof *b);
		b->size = s->length;
		if (s->kind != SEG_DATA) {
			if (direct_buf) {
				memset(direct_buf + (s->logical - off), 0, s->length);
				continue;
			}
			b->mem = zero_buf; /* a segment is at most one request: <= 1 MiB */
			continue;
		}
		ios[nios++] = (struct run){s->device, s->length};
		if (direct_buf) {
			err = read_direct(fs, s, direct_buf + (s->logical - off));
			if (err)
				goto out;
			continue;
		}
		b->flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK | FUSE_BUF_FD_RETRY;
		b->fd = fs->dev_fd;
		b->pos = (off_t)s->device;
	}
	if (direct_buf) {
		bv.v.count = 1;
		bv.v.buf[0] = (struct fuse_buf){.size = size, .mem = direct_buf};
	}
	if (!size)
		bv.v.count = 0;
	err = fuse_reply_data(req, &bv.v, FUSE_BUF_SPLICE_MOVE);
	if (err > 0)
		err = -err;
	atomic_fetch_add(&fs->stats.reads, 1);
	atomic_fetch_add(&fs->stats.bytes_read, size);
	if (reqlog_wants(fs->log, LOG_READ))
		log_request(fs, LOG_READ, pid, in, off, size, err ? err : (int64_t)size, ts, t0,
			    ios, nios);
	pthread_rwlock_unlock(&in->lock);
	free(direct_buf);
	return;
out:
	pthread_rwlock_unlock(&in->lock);
	free(direct_buf);
	if (reqlog_wants(fs->log, LOG_READ))
		log_request(fs, LOG_READ, pid, in, off, size, err, ts, t0, NULL, 0);
	fuse_reply_err(req, -err);
}

/*
 * Writes @len bytes of @buf (block-aligned when the device is O_DIRECT) to
 * logical [@off, +@len), which is fully allocated, one device I/O per run.
 */
static int write_mapped(struct sfs *fs, struct inode *in, const char *buf, uint64_t off,
			uint64_t len, struct run *ios, size_t *nios)
{
	struct segment segs[MAX_SEGS];
	while (len) {
		size_t n = extmap_lookup(&in->map, off, len, segs, MAX_SEGS);
		for (size_t i = 0; i < n; i++) {
			const struct segment *s = &segs[i];
			if (s->kind == SEG_HOLE)
				return -EIO; /* allocate_range() left a hole: a bug */
			int err = pwrite_all(fs->dev_fd, buf + (s->logical - off), s->length,
					     s->device);
			if (err)
				return err;
			if (*nios < MAX_SEGS)
				ios[(*nios)++] = (struct run){s->device, s->length};
		}
		uint64_t done = segs[n - 1].logical + segs[n - 1].length - off;
		buf += done;
		off += done;
		len -= done;
	}
	return 0;
}

/* Fills @dst with the current contents of logical [@off, +@len). */
static int read_mapped(struct sfs *fs, struct inode *in, char *dst, uint64_t off, uint64_t len)
{
	struct segment segs[MAX_SEGS];
	while (len) {
		size_t n = extmap_lookup(&in->map, off, len, segs, MAX_SEGS);
		for (size_t i = 0; i < n; i++) {
			const struct segment *s = &segs[i];
			char *d = dst + (s->logical - off);
			int err = 0;
			if (s->kind != SEG_DATA)
				memset(d, 0, s->length);
			else if (fs->dev_direct)
				err = read_direct(fs, s, d);
			else
				err = pread_all(fs->dev_fd, d, s->length, s->device);
			if (err)
				return err;
		}
		uint64_t done = segs[n - 1].logical + segs[n - 1].length - off;
		dst += done;
		off += done;
		len -= done;
	}
	return 0;
}

ssize_t io_write(struct sfs *fs, struct inode *in, const char *buf, size_t size, uint64_t off,
		 pid_t pid)
{
	uint64_t t0 = mono_ns(), ts = now_us(fs);
	uint64_t bs = fs->block_size;
	struct run ios[MAX_SEGS];
	size_t nios = 0;
	int err = inode_load_map(fs, in);
	if (err || size == 0)
		goto out;
	if (off + size < off || off + size > (uint64_t)INT64_MAX) {
		err = -EFBIG;
		goto out;
	}
	uint64_t a = off / bs * bs, b = (off + size + bs - 1) / bs * bs;
	/* Blocks this write covers completely need no zero-fill. */
	uint64_t full_from = (off + bs - 1) / bs * bs, full_to = (off + size) / bs * bs;
	err = allocate_range(fs, in, a, b - a, full_from, full_to > full_from ? full_to : full_from,
			     pid);
	if (err)
		goto out;
	bool aligned = a == off && b == off + size;
	if (!aligned || (fs->dev_direct && ((uintptr_t)buf % 4096))) {
		/* Build whole blocks: current contents, then the new bytes. */
		char *tmp = bounce_get(BOUNCE_WRITE, b - a);
		if (!tmp) {
			err = -ENOMEM;
			goto out;
		}
		if (off != a)
			err = read_mapped(fs, in, tmp, a, bs);
		if (!err && off + size != b && !(b - bs == a && off != a))
			err = read_mapped(fs, in, tmp + (b - bs - a), b - bs, bs);
		if (err)
			goto out;
		memcpy(tmp + (off - a), buf, size);
		err = write_mapped(fs, in, tmp, a, b - a, ios, &nios);
	} else {
		err = write_mapped(fs, in, buf, a, b - a, ios, &nios);
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
	if (reqlog_wants(fs->log, LOG_WRITE))
		log_request(fs, LOG_WRITE, pid, in, off, size, err ? err : (int64_t)size, ts, t0,
			    ios, nios);
	return err ? err : (ssize_t)size;
}

/* Writes zeros over the DATA parts of logical [off, off+len) (within one block). */
static int zero_partial(struct sfs *fs, struct inode *in, uint64_t off, uint64_t len)
{
	if (!len)
		return 0;
	uint64_t bs = fs->block_size;
	uint64_t a = off / bs * bs;
	struct segment s;
	extmap_lookup(&in->map, a, bs, &s, 1);
	if (s.kind != SEG_DATA || s.length < bs)
		return 0; /* unwritten or hole: already reads as zeros */
	char *tmp = bounce_get(BOUNCE_WRITE, bs);
	if (!tmp)
		return -ENOMEM;
	int err = read_mapped(fs, in, tmp, a, bs);
	if (!err) {
		memset(tmp + (off - a), 0, len);
		err = pwrite_all(fs->dev_fd, tmp, bs, s.device);
	}
	return err;
}

/* Zeros the bytes of [off, off+len) in partial blocks at its edges; returns the whole blocks. */
static int zero_edges(struct sfs *fs, struct inode *in, uint64_t off, uint64_t len,
		      uint64_t *whole_from, uint64_t *whole_to)
{
	uint64_t bs = fs->block_size, end = off + len;
	uint64_t wf = (off + bs - 1) / bs * bs, wt = end / bs * bs;
	int err;
	if (wf >= wt) { /* inside one block, or two partial blocks */
		uint64_t mid = wf < end ? wf : end;
		err = zero_partial(fs, in, off, mid - off);
		if (!err && end > mid)
			err = zero_partial(fs, in, mid, end - mid);
		*whole_from = *whole_to = 0;
		return err;
	}
	err = zero_partial(fs, in, off, wf - off);
	if (!err)
		err = zero_partial(fs, in, wt, end - wt);
	*whole_from = wf;
	*whole_to = wt;
	return err;
}

static void free_run_cb(void *opaque, uint64_t device, uint64_t length)
{
	struct sfs *fs = opaque;
	devalloc_free(fs->alloc, device, length);
}

int io_fallocate(struct sfs *fs, struct inode *in, int mode, uint64_t off, uint64_t len,
		 pid_t pid)
{
	uint64_t bs = fs->block_size;
	int err = inode_load_map(fs, in);
	if (err)
		return err;
	if (len == 0)
		return -EINVAL;
	if (off + len < off || off + len > (uint64_t)INT64_MAX)
		return -EFBIG;
	int kind = mode & ~FALLOC_FL_KEEP_SIZE;
	if (kind == 0) {
		uint64_t a = off / bs * bs, b = (off + len + bs - 1) / bs * bs;
		err = allocate_range(fs, in, a, b - a, 0, 0, pid);
	} else if (kind == FALLOC_FL_PUNCH_HOLE) {
		if (!(mode & FALLOC_FL_KEEP_SIZE))
			return -EOPNOTSUPP;
		uint64_t wf, wt;
		if (off >= in->attr.size)
			return 0;
		err = zero_edges(fs, in, off, len, &wf, &wt);
		uint64_t t0 = mono_ns(), ts = now_us(fs);
		if (!err && wt > wf) {
			pthread_mutex_lock(&fs->alloc_lock);
			err = extmap_remove(&in->map, wf, wt - wf, free_run_cb, fs);
			pthread_mutex_unlock(&fs->alloc_lock);
			mark_dirty(in, wf);
		}
		if (!err)
			touch_times(in, true);
		if (reqlog_wants(fs->log, LOG_TRIM))
			log_request(fs, LOG_TRIM, pid, in, off, len, err ? err : (int64_t)len, ts, t0,
				    NULL, 0);
		return err;
	} else if (kind == FALLOC_FL_ZERO_RANGE) {
		uint64_t wf, wt;
		err = zero_edges(fs, in, off, len, &wf, &wt);
		if (!err && wt > wf) {
			/* Allocate the holes (as unwritten), then forget the data. */
			err = allocate_range(fs, in, wf, wt - wf, wf, wt, pid);
			if (!err)
				err = extmap_mark_unwritten(&in->map, wf, wt - wf);
			mark_dirty(in, wf);
		}
	} else {
		return -EOPNOTSUPP;
	}
	if (!err) {
		if (!(mode & FALLOC_FL_KEEP_SIZE) && off + len > in->attr.size)
			in->attr.size = off + len;
		touch_times(in, kind != 0);
	}
	return err;
}

int io_truncate(struct sfs *fs, struct inode *in, uint64_t size)
{
	uint64_t bs = fs->block_size;
	int err = inode_load_map(fs, in);
	if (err)
		return err;
	if (size < in->attr.size) {
		uint64_t keep = (size + bs - 1) / bs * bs;
		if (size % bs)
			err = zero_partial(fs, in, size, keep - size);
		if (!err)
			inode_free_space(fs, in, keep);
	}
	if (!err) {
		in->attr.size = size;
		touch_times(in, true);
	}
	return err;
}

int io_fsync(struct sfs *fs, struct inode *in, pid_t pid)
{
	uint64_t t0 = mono_ns(), ts = now_us(fs);
	/* Data and zero-fill first, then the catalog that points at them. */
	int err = fdatasync(fs->dev_fd) ? -errno : 0;
	if (!err)
		err = inode_flush(fs, in);
	if (!err)
		err = catalog_sync(fs->cat);
	if (reqlog_wants(fs->log, LOG_FSYNC))
		log_request(fs, LOG_FSYNC, pid, in, 0, 0, err, ts, t0, NULL, 0);
	return err;
}
