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
#include <linux/aio_abi.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "reqlog.h"
#include "sfs.h"

#define ZERO_BUF_SIZE (1u << 20)
#define MAX_SEGS 64 /* segments per extent-map lookup; requests loop over more */

/* Never written: the source of zeros for holes and zero-fill. */
static char zero_buf[ZERO_BUF_SIZE] __attribute__((aligned(4096)));

/*
 * Per-thread aligned bounce buffers: BOUNCE_WRITE builds the blocks of an
 * unaligned write, BOUNCE_READ takes O_DIRECT reads (which may fill the
 * write buffer from the device, so the two must differ), BOUNCE_REPLY holds
 * a read's reply when it is copied (O_DIRECT backing, disk model): no
 * allocation per request.  A key's
 * destructor frees them when a worker thread ends.
 */
enum { BOUNCE_WRITE, BOUNCE_READ, BOUNCE_REPLY, BOUNCE_SLOTS };
struct bounce {
	char *buf[BOUNCE_SLOTS];
	size_t size[BOUNCE_SLOTS];
	struct fuse_bufvec *bv; /* a read's reply vector, bv_cap buffers */
	size_t bv_cap;
	aio_context_t aio;      /* polled device reads (aio_read_polled), 0 until first use */
	bool aio_failed;        /* io_setup failed: this thread never polls */
};
static __thread struct bounce *bounce;
static pthread_key_t bounce_key;
static pthread_once_t bounce_once = PTHREAD_ONCE_INIT;

static void bounce_free(void *p)
{
	struct bounce *b = p;
	for (int i = 0; i < BOUNCE_SLOTS; i++)
		free(b->buf[i]);
	free(b->bv);
	if (b->aio)
		syscall(SYS_io_destroy, b->aio);
	free(b);
}

static void bounce_key_init(void)
{
	pthread_key_create(&bounce_key, bounce_free);
}

static struct bounce *bounce_self(void)
{
	if (!bounce) {
		pthread_once(&bounce_once, bounce_key_init);
		bounce = calloc(1, sizeof *bounce);
		if (!bounce)
			return NULL;
		pthread_setspecific(bounce_key, bounce);
	}
	return bounce;
}

/* A 4096-aligned buffer of at least @size bytes, valid until the next call for @slot. */
static char *bounce_get(int slot, size_t size)
{
	if (!bounce_self())
		return NULL;
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
 * The device I/Os of one request, for the log and the disk model.  Each
 * I/O is charged on the model as it is added; the request then waits for
 * the modelled completion (rio_wait) before it is answered.
 */
struct req_io {
	uint64_t arrival_ns;  /* CLOCK_MONOTONIC when the request started */
	uint64_t complete_ns; /* modelled completion; 0 without a model */
	struct run *v;
	size_t n, cap;
	struct run inline_v[16];
};

static void rio_init(struct req_io *r, uint64_t arrival_ns)
{
	r->arrival_ns = arrival_ns;
	r->complete_ns = 0;
	r->v = r->inline_v;
	r->n = 0;
	r->cap = sizeof r->inline_v / sizeof r->inline_v[0];
}

static void rio_release(struct req_io *r)
{
	if (r->v != r->inline_v)
		free(r->v);
}

/* Records the device I/O [dev, dev+len) of @r and charges it on the model. */
static void rio_add(struct sfs *fs, struct req_io *r, uint64_t dev, uint64_t len,
		    enum disk_dir dir)
{
	if (!r || !len)
		return;
	if (fs->model_on) {
		struct disk_io_cost c;
		pthread_mutex_lock(&fs->model_lock);
		uint64_t done = disk_model_submit(&fs->model, r->arrival_ns, dev, len, dir, &c);
		pthread_mutex_unlock(&fs->model_lock);
		if (done > r->complete_ns)
			r->complete_ns = done;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap * 2;
		struct run *v = malloc(cap * sizeof *v);
		if (!v) {
			atomic_fetch_add(&fs->stats.log_io_lost, 1);
			return; /* the I/O happens; only its log entry is lost (counted) */
		}
		memcpy(v, r->v, r->n * sizeof *v);
		if (r->v != r->inline_v)
			free(r->v);
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = (struct run){dev, len};
}

/*
 * Waits until the modelled completion of @r: an absolute-deadline sleep
 * (clock_nanosleep, TIMER_ABSTIME) to WAKE_EARLY_NS before it, then a spin
 * on the clock, because a sleeping thread wakes up late (about 80 us on a
 * virtual machine, more under load), and that lateness would be error in
 * the model's timing.
 */
#define WAKE_EARLY_NS 200000
static void rio_wait(const struct req_io *r)
{
	static __thread bool slack_set;
	if (!r->complete_ns)
		return;
	if (!slack_set) {
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
		slack_set = true;
	}
	uint64_t now = mono_ns();
	if (now >= r->complete_ns)
		return;
	if (r->complete_ns - now > WAKE_EARLY_NS) {
		uint64_t wake = r->complete_ns - WAKE_EARLY_NS;
		struct timespec t = {.tv_sec = (time_t)(wake / 1000000000u),
				     .tv_nsec = (long)(wake % 1000000000u)};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
			;
	}
	while (mono_ns() < r->complete_ns)
		;
}

static uint64_t rio_model_us(const struct req_io *r)
{
	return r->complete_ns > r->arrival_ns ? (r->complete_ns - r->arrival_ns) / 1000 : 0;
}

static void log_request(struct sfs *fs, enum log_op op, pid_t pid, const struct inode *in,
			uint64_t off, uint64_t size, int64_t result, uint64_t ts,
			const struct req_io *r)
{
	struct reqlog_row row = {
		.ts_us = ts,
		.op = op,
		.pid = pid,
		.path = in->path ? in->path : "",
		.offset = off,
		.size = size,
		.result = result,
		.latency_us = (mono_ns() - r->arrival_ns) / 1000,
		.device_io = r->v,
		.ndevice_io = r->n,
		.model_us = rio_model_us(r),
	};
	reqlog_append(fs->log, &row);
}

/*
 * Zero-fills the new extents of @plan except the blocks [skip_from,
 * skip_to) that the caller is about to overwrite, marks what it zeroed as
 * written, and logs an extend row when the plan grew the file.  The
 * zero-fill I/O is charged to the request @r too.
 */
static int zero_fill_plan(struct sfs *fs, struct inode *in, const struct alloc_plan *plan,
			  uint64_t skip_from, uint64_t skip_to, pid_t pid, struct req_io *r)
{
	struct req_io ext;
	rio_init(&ext, mono_ns());
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
			err = zero_device(fs, plan->zero_fill, e->device + (a - lo), b - a);
			if (!err)
				err = extmap_mark_written(&in->map, a, b - a);
			rio_add(fs, &ext, e->device + (a - lo), b - a, DISK_WRITE);
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
			log_request(fs, LOG_EXTEND, pid, in, plan->extend_from, plan->extend_bytes,
				    err ? err : (int64_t)plan->extend_bytes, ts, &ext);
	}
	rio_release(&ext);
	return err;
}

/* Allocates [off, off+len) and zero-fills what is new outside [skip_from, skip_to). */
static int allocate_range(struct sfs *fs, struct inode *in, uint64_t off, uint64_t len,
			  uint64_t skip_from, uint64_t skip_to, pid_t pid, struct req_io *r)
{
	struct alloc_plan plan = {0};
	size_t ngaps = in->gaps.n;
	pthread_mutex_lock(&fs->alloc_lock);
	uint64_t alloc_end = extmap_end(&in->map);
	int err = layout_allocate(in->params, fs->alloc, &in->map, &in->gaps, off, len, &plan);
	bool pending = fs->pending_free.n > 0;
	pthread_mutex_unlock(&fs->alloc_lock);
	if (err == -ENOSPC && pending) {
		/* Space freed but not yet durable: make it so, then try again. */
		if (fdatasync(fs->dev_fd) == 0 && sfs_sync(fs, in) == 0) {
			pthread_mutex_lock(&fs->alloc_lock);
			err = layout_allocate(in->params, fs->alloc, &in->map, &in->gaps, off, len,
					      &plan);
			pthread_mutex_unlock(&fs->alloc_lock);
		}
	}
	if (err) {
		alloc_plan_release(&plan);
		/* A refused autoextend (ENOSPC, EFBIG) is logged too: offset the
		 * allocated end, size the bytes the request needed past it. */
		if (off + len > alloc_end && reqlog_wants(fs->log, LOG_EXTEND)) {
			struct req_io none;
			rio_init(&none, mono_ns());
			log_request(fs, LOG_EXTEND, pid, in, alloc_end, off + len - alloc_end, err,
				    now_us(fs), &none);
		}
		return err;
	}
	if (in->gaps.n != ngaps)
		in->gaps_dirty = true;
	if (plan.n) {
		mark_dirty(in, plan.v[0].logical);
		err = zero_fill_plan(fs, in, &plan, skip_from, skip_to, pid, r);
	}
	alloc_plan_release(&plan);
	return err;
}

/*
 * The completion ring the kernel maps at an aio context's address (fs/aio.c,
 * struct aio_ring): events are added at tail in interrupt context and taken
 * from head, so a thread can see its read complete without sleeping.
 */
struct aio_ring_hdr {
	unsigned id, nr, head, tail, magic, compat_features, incompat_features, header_length;
	struct io_event events[];
};
#define AIO_RING_MAGIC_VALUE 0xa10a10a1u

/* Whether the completion ring of @ctx has the layout struct aio_ring_hdr describes. */
static bool ring_usable(aio_context_t ctx)
{
	const struct aio_ring_hdr *ring = (const struct aio_ring_hdr *)ctx;
	return ring->magic == AIO_RING_MAGIC_VALUE && ring->incompat_features == 0;
}

/*
 * Takes up to @max completions from the ring of @ctx into @ev without a
 * system call (ring_usable() contexts only; one thread reaps a context).
 * @return how many were taken.
 */
static long ring_take(aio_context_t ctx, struct io_event *ev, long max)
{
	struct aio_ring_hdr *ring = (struct aio_ring_hdr *)ctx;
	unsigned head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
	unsigned tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
	long n = 0;
	for (; head != tail && n < max; head = (head + 1) % ring->nr)
		ev[n++] = ring->events[head % ring->nr];
	if (n)
		__atomic_store_n(&ring->head, head, __ATOMIC_RELEASE);
	return n;
}

/* An aio read of [off, off+len) of the backing into @buf; @data comes back in its io_event. */
static struct iocb device_read_iocb(const struct sfs *fs, void *buf, uint64_t len, uint64_t off,
				    void *data)
{
	return (struct iocb){.aio_data = (uint64_t)(uintptr_t)data,
			     .aio_lio_opcode = IOCB_CMD_PREAD,
			     .aio_fildes = (uint32_t)fs->dev_fd,
			     .aio_buf = (uint64_t)(uintptr_t)buf,
			     .aio_nbytes = len,
			     .aio_offset = (int64_t)off};
}

/* Device reads in flight through pread_polled() while polling is on, and queued reads. */
static atomic_uint device_reads_in_flight;

/* A spin-wait hint to the CPU (x86 PAUSE); nothing elsewhere. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/*
 * Reads [off, off+len) of the O_DIRECT backing into @buf with io_submit on
 * this thread's aio context, then looks for the completion on the context's
 * ring for up to fs->poll_ns, or until another device read is in flight,
 * before sleeping in io_getevents.  Returns 0, -errno from the read, or 1
 * when nothing was submitted (no aio here): the caller reads it another way.
 */
static int aio_read_polled(struct sfs *fs, char *buf, size_t len, uint64_t off)
{
	if (!bounce->aio && syscall(SYS_io_setup, 1, &bounce->aio) != 0) {
		bounce->aio = 0;
		bounce->aio_failed = true;
		return 1;
	}
	struct iocb cb = device_read_iocb(fs, buf, len, off, NULL);
	struct iocb *cbs[1] = {&cb};
	if (syscall(SYS_io_submit, bounce->aio, 1, cbs) != 1)
		return 1;
	atomic_fetch_add(&fs->stats.polled_reads, 1);

	struct io_event ev;
	bool got = false;
	if (ring_usable(bounce->aio)) {
		uint64_t until = mono_ns() + fs->poll_ns;
		do {
			if (ring_take(bounce->aio, &ev, 1)) {
				atomic_fetch_add(&fs->stats.polled_completions, 1);
				got = true;
				break;
			}
			cpu_relax();
			/* another read now waits too: leave the CPU to it */
		} while (atomic_load_explicit(&device_reads_in_flight, memory_order_relaxed) == 1 &&
			 mono_ns() < until);
	}
	while (!got) {
		long n = syscall(SYS_io_getevents, bounce->aio, 1, 1, &ev, NULL);
		if (n < 0 && errno != EINTR)
			return -errno;
		got = n == 1;
	}
	if (ev.res < 0)
		return (int)ev.res;
	if ((size_t)ev.res < len) /* short (past a regular file's end): the rest as pread_all() */
		return pread_all(fs->dev_fd, buf + ev.res, len - (size_t)ev.res,
				 off + (uint64_t)ev.res);
	return 0;
}

/*
 * pread_all() of [off, off+len) of the O_DIRECT backing into @buf, polled
 * (aio_read_polled) when it is the only device read in flight.  A read
 * alone in flight (a queue depth of 1) otherwise pays a sleep and a wake-up
 * of the thread on top of the device's time: with fio at QD 1 on this
 * project's virtual disk, polling the completions took the bare file from
 * about 20,000 to 24,600-29,900 8 KiB reads a second.  With polling off
 * (fs->poll_ns 0), while other reads are in flight, or without aio, it is
 * pread_all(); fs->stats.polled_reads and polled_completions count how
 * often a read was polled and seen complete while polled.
 * Returns 0 or -errno.
 */
static int pread_polled(struct sfs *fs, char *buf, size_t len, uint64_t off)
{
	if (!fs->poll_ns || !bounce_self() || bounce->aio_failed)
		return pread_all(fs->dev_fd, buf, len, off);
	int err = 1;
	if (atomic_fetch_add(&device_reads_in_flight, 1) == 0)
		err = aio_read_polled(fs, buf, len, off);
	if (err == 1)
		err = pread_all(fs->dev_fd, buf, len, off);
	atomic_fetch_sub(&device_reads_in_flight, 1);
	return err;
}

/*
 * Reads device [dev, dev+len) into @dst for an O_DIRECT backing: straight
 * into @dst when offset, length and buffer are block-aligned, else through
 * an aligned buffer.
 */
static int read_direct(struct sfs *fs, uint64_t dev, uint64_t len, char *dst)
{
	uint64_t bs = fs->block_size;
	if (dev % bs == 0 && len % bs == 0 && (uintptr_t)dst % 4096 == 0)
		return pread_polled(fs, dst, len, dev);
	uint64_t a = dev / bs * bs, b = (dev + len + bs - 1) / bs * bs;
	char *buf = bounce_get(BOUNCE_READ, b - a);
	if (!buf)
		return -ENOMEM;
	int err = pread_polled(fs, buf, b - a, a);
	if (!err)
		memcpy(dst, buf + (dev - a), len);
	return err;
}

/* Reads device [dev, dev+len) into @dst. */
static int read_device(struct sfs *fs, uint64_t dev, uint64_t len, char *dst)
{
	return fs->dev_direct ? read_direct(fs, dev, len, dst) : pread_all(fs->dev_fd, dst, len, dev);
}

/*
 * Calls @fn for each segment of logical [off, off+len) of @in, in order,
 * however many there are.  Stops at the first non-zero return.
 */
static int for_each_segment(struct inode *in, uint64_t off, uint64_t len,
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
	struct req_io *r;
	uint64_t off;       /* logical offset of the request */
	char *buf;          /* copy target (O_DIRECT backing or disk model), or NULL */
	struct fuse_bufvec *bv; /* otherwise: one fd buffer per device run, zeros between */
	size_t cap;         /* entries of bv */
};

/* Adds @b to the reply vector, which is per thread and kept: no allocation per request. */
static int add_buf(struct read_ctx *c, struct fuse_buf b)
{
	if (c->bv->count == c->cap) {
		size_t cap = c->cap * 2;
		struct fuse_bufvec *bv =
			realloc(c->bv, sizeof *bv + (cap - 1) * sizeof(struct fuse_buf));
		if (!bv)
			return -ENOMEM;
		c->bv = bounce->bv = bv;
		c->cap = bounce->bv_cap = cap;
	}
	c->bv->buf[c->bv->count++] = b;
	return 0;
}

static int read_segment(void *opaque, const struct segment *s)
{
	struct read_ctx *c = opaque;
	if (s->kind == SEG_DATA)
		rio_add(c->fs, c->r, s->device, s->length, DISK_READ);
	if (c->buf) {
		char *d = c->buf + (s->logical - c->off);
		if (s->kind != SEG_DATA) {
			memset(d, 0, s->length);
			return 0;
		}
		return read_device(c->fs, s->device, s->length, d);
	}
	if (s->kind == SEG_DATA)
		return add_buf(c, (struct fuse_buf){.size = s->length,
						    .flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK |
							     FUSE_BUF_FD_RETRY,
						    .fd = c->fs->dev_fd,
						    .pos = (off_t)s->device});
	for (uint64_t done = 0; done < s->length; done += ZERO_BUF_SIZE) {
		uint64_t n = s->length - done < ZERO_BUF_SIZE ? s->length - done : ZERO_BUF_SIZE;
		int err = add_buf(c, (struct fuse_buf){.size = n, .mem = zero_buf});
		if (err)
			return err;
	}
	return 0;
}

/*
 * Queued device reads (device.async_reads).  A read that finds other
 * device reads in flight is not waited for by the worker
 * thread: its device runs go to the device with one io_submit on a shared
 * aio context, and the worker goes back to /dev/fuse for the next request.
 * One completion thread reaps the completions (from the ring in user space
 * for up to poll_us, then io_getevents) and answers each read whose last
 * run has completed.  On this project's virtual disk, at 16 reads in
 * flight, it saved a thread sleep and wake-up per read (README,
 * performance).  Each read in flight holds a pin on its inode instead of
 * the inode's lock, which another thread cannot release; inode_wrlock()
 * waits for the pins.  Contexts and their aligned buffers are kept in
 * slots taken without a lock: no allocation per request once warm.
 */
#define READ_QUEUE_EVENTS 256 /* the aio context's capacity, in device I/Os */
#define READ_QUEUE_SLOTS 256  /* queued reads in flight at most; more read synchronously */

struct queued_read {
	unsigned slot; /* index in read_queue.slot */
	struct sfs *fs;
	fuse_req_t req;
	struct inode *in;
	char *buf; /* 4096-aligned, cap bytes: whole blocks from the request's first */
	size_t cap, skip; /* skip: bytes of buf before the request's offset */
	uint64_t off, ts; /* logical offset; the log's ts_us */
	size_t size, want; /* bytes read (clamped at EOF), bytes asked */
	pid_t pid;
	struct req_io r;
	atomic_int pending; /* runs not yet complete, plus one while submitting */
	atomic_int err;     /* first -errno */
	struct iocb cb[MAX_SEGS];
	struct iocb *cbp[MAX_SEGS];
};

/*
 * The contexts are slots taken with a compare-and-swap on busy[] (no lock
 * on the read path); slot[i] is allocated by the first taker of slot i and
 * kept until unmount.
 */
struct read_queue {
	aio_context_t ctx;
	pthread_t reaper;
	atomic_bool busy[READ_QUEUE_SLOTS];
	struct queued_read *slot[READ_QUEUE_SLOTS]; /* written only by busy[i]'s taker */
	atomic_uint outstanding; /* reads submitted, not yet answered */
	struct iocb stop;        /* an empty read whose completion stops the reaper */
};

/* Answers @q, logs it, drops its pin and frees its slot. */
static void queued_read_finish(struct queued_read *q)
{
	struct sfs *fs = q->fs;
	int err = atomic_load(&q->err);
	if (!err) {
		err = fuse_reply_buf(q->req, q->buf + q->skip, q->size); /* 0 or -errno */
		atomic_fetch_add(&fs->stats.reads, 1);
		atomic_fetch_add(&fs->stats.bytes_read, q->size);
	} else {
		fuse_reply_err(q->req, -err);
	}
	if (reqlog_wants(fs->log, LOG_READ))
		log_request(fs, LOG_READ, q->pid, q->in, q->off, q->want,
			    err ? err : (int64_t)q->size, q->ts, &q->r);
	pins_drop(&q->in->pins);
	rio_release(&q->r);
	atomic_fetch_sub(&device_reads_in_flight, 1);
	struct read_queue *rq = fs->rq;
	atomic_store(&rq->busy[q->slot], false);
	atomic_fetch_sub(&rq->outstanding, 1);
}

/* Accounts one completed run @cb of its read (res: bytes or -errno). */
static void queued_run_done(struct sfs *fs, struct iocb *cb, int64_t res)
{
	struct queued_read *q = (struct queued_read *)(uintptr_t)cb->aio_data;
	char *buf = (char *)(uintptr_t)cb->aio_buf;
	if (res < 0) {
		int zero = 0;
		atomic_compare_exchange_strong(&q->err, &zero, (int)res);
	} else if ((uint64_t)res < cb->aio_nbytes) { /* short (past a regular file's end) */
		int e = pread_all(fs->dev_fd, buf + res, cb->aio_nbytes - (uint64_t)res,
				  (uint64_t)cb->aio_offset + (uint64_t)res);
		int zero = 0;
		if (e)
			atomic_compare_exchange_strong(&q->err, &zero, e);
	}
	if (atomic_fetch_sub(&q->pending, 1) == 1)
		queued_read_finish(q);
}

/* The completion thread: reaps until the stop read has completed and nothing is outstanding. */
static void *read_queue_reaper(void *p)
{
	struct sfs *fs = p;
	struct read_queue *rq = fs->rq;
	struct io_event ev[64];
	bool stop = false, spin = fs->poll_ns && ring_usable(rq->ctx);
	prctl(PR_SET_NAME, "sfs-reads", 0, 0, 0);
	while (!stop || atomic_load(&rq->outstanding)) {
		long n = 0;
		if (spin) {
			uint64_t until = mono_ns() + fs->poll_ns;
			while (!(n = ring_take(rq->ctx, ev, 64)) && atomic_load(&rq->outstanding) &&
			       mono_ns() < until)
				cpu_relax();
		}
		if (!n)
			n = syscall(SYS_io_getevents, rq->ctx, 1, 64, ev, NULL);
		if (n < 0 && errno != EINTR) {
			perror("scatterfs: io_getevents");
			abort(); /* reads would never be answered */
		}
		for (long i = 0; i < n; i++) {
			struct iocb *cb = (struct iocb *)(uintptr_t)ev[i].obj;
			if (cb == &rq->stop)
				stop = true;
			else
				queued_run_done(fs, cb, ev[i].res);
		}
	}
	return NULL;
}

int io_queue_start(struct sfs *fs)
{
	if (!fs->dev_direct || fs->model_on || !fs->cfg.device.async_reads)
		return 0;
	struct read_queue *rq = calloc(1, sizeof *rq);
	if (!rq)
		return -ENOMEM;
	if (syscall(SYS_io_setup, READ_QUEUE_EVENTS, &rq->ctx) != 0) {
		int err = -errno;
		free(rq);
		return err;
	}
	fs->rq = rq;
	int err = -pthread_create(&rq->reaper, NULL, read_queue_reaper, fs);
	if (err) {
		syscall(SYS_io_destroy, rq->ctx);
		free(rq);
		fs->rq = NULL;
	}
	return err;
}

void io_queue_stop(struct sfs *fs)
{
	struct read_queue *rq = fs->rq;
	if (!rq)
		return;
	/* An empty read completes at once; the reaper stops once it has seen
	 * it and every read submitted before is answered. */
	rq->stop = device_read_iocb(fs, zero_buf, 0, 0, NULL);
	struct iocb *cbs[1] = {&rq->stop};
	while (syscall(SYS_io_submit, rq->ctx, 1, cbs) != 1) {
		if (errno != EAGAIN && errno != EINTR) {
			/* Cannot happen with a live context; leave the thread (the process exits). */
			perror("scatterfs: stopping queued reads: io_submit");
			return;
		}
		usleep(1000);
	}
	pthread_join(rq->reaper, NULL);
	syscall(SYS_io_destroy, rq->ctx);
	for (unsigned i = 0; i < READ_QUEUE_SLOTS; i++) {
		if (rq->slot[i])
			free(rq->slot[i]->buf);
		free(rq->slot[i]);
	}
	free(rq);
	fs->rq = NULL;
}

/* A free slot's context, its buffer at least @size bytes; NULL when all are busy or ENOMEM. */
static struct queued_read *queued_read_get(struct read_queue *rq, size_t size)
{
	unsigned i = 0;
	for (;; i++) {
		if (i == READ_QUEUE_SLOTS)
			return NULL;
		bool no = false;
		if (!atomic_load_explicit(&rq->busy[i], memory_order_relaxed) &&
		    atomic_compare_exchange_strong(&rq->busy[i], &no, true))
			break;
	}
	struct queued_read *q = rq->slot[i];
	if (!q && !(q = rq->slot[i] = calloc(1, sizeof *q)))
		goto fail;
	if (q->cap < size) {
		size_t want = size < (128u << 10) ? (128u << 10) : size;
		void *p;
		if (posix_memalign(&p, 4096, want))
			goto fail;
		free(q->buf);
		q->buf = p;
		q->cap = want;
	}
	q->slot = i;
	return q;
fail:
	atomic_store(&rq->busy[i], false);
	return NULL;
}

/*
 * Queues the read of logical [@off, +@size) of @in (clamped at EOF;
 * @want asked) when it qualifies: queued reads on, the blocks it touches
 * in at most MAX_SEGS runs, and another device read in flight (or polling
 * off).
 * Caller holds @in->lock for reading.  @return 0 when queued (the
 * completion thread answers @req), 1 when the caller reads it itself.
 */
static int read_queued(struct sfs *fs, fuse_req_t req, struct inode *in, uint64_t off, size_t size,
		       size_t want, pid_t pid, uint64_t ts, uint64_t arrival_ns)
{
	struct read_queue *rq = fs->rq;
	if (!rq || !size || (fs->poll_ns && !atomic_load(&device_reads_in_flight)))
		return 1;
	/* The device reads whole blocks: the request's first and last block
	 * belong to the extents the request starts and ends in. */
	uint64_t bs = fs->block_size, a = off / bs * bs, b = (off + size + bs - 1) / bs * bs;
	struct segment segs[MAX_SEGS];
	size_t n = extmap_lookup(&in->map, a, b - a, segs, MAX_SEGS);
	if (segs[n - 1].logical + segs[n - 1].length < b)
		return 1; /* more runs than one lookup gives */
	struct queued_read *q = queued_read_get(rq, b - a);
	if (!q)
		return 1;
	q->fs = fs;
	q->req = req;
	q->in = in;
	q->skip = off - a;
	q->off = off;
	q->ts = ts;
	q->size = size;
	q->want = want;
	q->pid = pid;
	atomic_store(&q->err, 0);
	rio_init(&q->r, arrival_ns);
	int nio = 0;
	for (size_t i = 0; i < n; i++) {
		char *d = q->buf + (segs[i].logical - a);
		if (segs[i].kind != SEG_DATA) {
			memset(d, 0, segs[i].length);
			continue;
		}
		/* The log shows the request's own bytes, as a synchronous read does. */
		uint64_t lo = segs[i].logical > off ? segs[i].logical : off;
		uint64_t end = segs[i].logical + segs[i].length;
		uint64_t hi = end < off + size ? end : off + size;
		rio_add(fs, &q->r, segs[i].device + (lo - segs[i].logical), hi - lo, DISK_READ);
		q->cb[nio] = device_read_iocb(fs, d, segs[i].length, segs[i].device, q);
		q->cbp[nio] = &q->cb[nio];
		nio++;
	}
	pins_take(&in->pins);
	atomic_fetch_add(&rq->outstanding, 1);
	atomic_fetch_add(&device_reads_in_flight, 1);
	atomic_fetch_add(&fs->stats.async_reads, 1);
	atomic_store(&q->pending, nio + 1);
	long k = nio ? syscall(SYS_io_submit, rq->ctx, nio, q->cbp) : 0;
	/* What io_submit did not take (queue full, an error) is read here. */
	for (long i = k < 0 ? 0 : k; i < nio; i++) {
		struct iocb *cb = &q->cb[i];
		int e = pread_all(fs->dev_fd, (char *)(uintptr_t)cb->aio_buf, cb->aio_nbytes,
				  (uint64_t)cb->aio_offset);
		queued_run_done(fs, cb, e ? e : (int64_t)cb->aio_nbytes);
	}
	if (atomic_fetch_sub(&q->pending, 1) == 1)
		queued_read_finish(q);
	return 0;
}

void io_read(struct sfs *fs, fuse_req_t req, struct inode *in, uint64_t off, size_t size)
{
	struct req_io r;
	rio_init(&r, mono_ns());
	uint64_t ts = now_us(fs);
	pid_t pid = fuse_req_ctx(req)->pid;
	struct read_ctx c = {.fs = fs, .r = &r, .off = off};
	size_t want = size; /* the log shows the request; result what was read */
	int err = 0;

	pthread_rwlock_rdlock(&in->lock);
	if (!in->map_loaded) {
		pthread_rwlock_unlock(&in->lock);
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
	if (read_queued(fs, req, in, off, size, want, pid, ts, r.arrival_ns) == 0) {
		pthread_rwlock_unlock(&in->lock);
		return;
	}
	/* Copy when the backing is O_DIRECT, or to overlap the real read with the model's wait. */
	if ((fs->dev_direct || fs->model_on) && size) {
		c.buf = bounce_get(BOUNCE_REPLY, size);
		if (!c.buf) {
			err = -ENOMEM;
			goto out;
		}
	} else {
		struct bounce *b = bounce_self();
		if (b && !b->bv) {
			b->bv = malloc(sizeof *b->bv + 15 * sizeof(struct fuse_buf));
			b->bv_cap = b->bv ? 16 : 0;
		}
		if (!b || !b->bv) {
			err = -ENOMEM;
			goto out;
		}
		c.bv = b->bv;
		c.cap = b->bv_cap;
		*c.bv = (struct fuse_bufvec){.count = 0};
	}
	if (size)
		err = for_each_segment(in, off, size, read_segment, &c);
	if (err)
		goto out;
	/* With the model, start the reply early by what copying it to the
	 * caller is expected to take, so the data arrives at the modelled
	 * completion (the estimate follows the measured copy speed). */
	uint64_t copy_ns = fs->model_on ? size * atomic_load(&fs->reply_ps_per_byte) / 1000 : 0;
	if (r.complete_ns)
		r.complete_ns -= copy_ns < r.complete_ns - r.arrival_ns ? copy_ns : 0;
	rio_wait(&r);
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
	atomic_fetch_add(&fs->stats.reads, 1);
	atomic_fetch_add(&fs->stats.bytes_read, size);
	if (reqlog_wants(fs->log, LOG_READ))
		log_request(fs, LOG_READ, pid, in, off, want, err ? err : (int64_t)size, ts, &r);
	pthread_rwlock_unlock(&in->lock);
	rio_release(&r);
	return;
out:
	pthread_rwlock_unlock(&in->lock);
	if (reqlog_wants(fs->log, LOG_READ))
		log_request(fs, LOG_READ, pid, in, off, want, err, ts, &r);
	rio_release(&r);
	fuse_reply_err(req, -err);
}

struct write_ctx {
	struct sfs *fs;
	struct req_io *r;
	const char *buf;
	uint64_t off;
};

static int write_segment(void *opaque, const struct segment *s)
{
	struct write_ctx *c = opaque;
	if (s->kind == SEG_HOLE)
		return -EIO; /* allocate_range() left a hole: a bug */
	rio_add(c->fs, c->r, s->device, s->length, DISK_WRITE);
	return pwrite_all(c->fs->dev_fd, c->buf + (s->logical - c->off), s->length, s->device);
}

/*
 * Writes @len bytes of @buf (block-aligned when the device is O_DIRECT) to
 * logical [@off, +@len), which is fully allocated, one device I/O per run.
 */
static int write_mapped(struct sfs *fs, struct inode *in, const char *buf, uint64_t off,
			uint64_t len, struct req_io *r)
{
	struct write_ctx c = {fs, r, buf, off};
	return for_each_segment(in, off, len, write_segment, &c);
}

struct fill_ctx {
	struct sfs *fs;
	struct req_io *r;
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
	rio_add(c->fs, c->r, s->device, s->length, DISK_READ);
	return read_device(c->fs, s->device, s->length, d);
}

/* Fills @dst with the current contents of logical [@off, +@len). */
static int read_mapped(struct sfs *fs, struct inode *in, char *dst, uint64_t off, uint64_t len,
		       struct req_io *r)
{
	struct fill_ctx c = {fs, r, dst, off};
	return for_each_segment(in, off, len, fill_segment, &c);
}

ssize_t io_write(struct sfs *fs, struct inode *in, const char *buf, size_t size, uint64_t off,
		 pid_t pid)
{
	struct req_io r;
	rio_init(&r, mono_ns());
	uint64_t ts = now_us(fs);
	uint64_t bs = fs->block_size;
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
			     pid, &r);
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
			err = read_mapped(fs, in, tmp, a, bs, &r);
		if (!err && off + size != b && !(b - bs == a && off != a))
			err = read_mapped(fs, in, tmp + (b - bs - a), b - bs, bs, &r);
		if (err)
			goto out;
		memcpy(tmp + (off - a), buf, size);
		err = write_mapped(fs, in, tmp, a, b - a, &r);
	} else {
		err = write_mapped(fs, in, buf, a, b - a, &r);
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
	rio_wait(&r);
	if (reqlog_wants(fs->log, LOG_WRITE))
		log_request(fs, LOG_WRITE, pid, in, off, size, err ? err : (int64_t)size, ts, &r);
	rio_release(&r);
	return err ? err : (ssize_t)size;
}

/* Writes zeros over the DATA parts of logical [off, off+len) (within one block). */
static int zero_partial(struct sfs *fs, struct inode *in, uint64_t off, uint64_t len,
			struct req_io *r)
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
	int err = read_mapped(fs, in, tmp, a, bs, r);
	if (!err) {
		memset(tmp + (off - a), 0, len);
		rio_add(fs, r, s.device, bs, DISK_WRITE);
		err = pwrite_all(fs->dev_fd, tmp, bs, s.device);
	}
	return err;
}

/* Zeros the bytes of [off, off+len) in partial blocks at its edges; returns the whole blocks. */
static int zero_edges(struct sfs *fs, struct inode *in, uint64_t off, uint64_t len,
		      uint64_t *whole_from, uint64_t *whole_to, struct req_io *r)
{
	uint64_t bs = fs->block_size, end = off + len;
	uint64_t wf = (off + bs - 1) / bs * bs, wt = end / bs * bs;
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

static void free_run_cb(void *opaque, uint64_t device, uint64_t length)
{
	sfs_defer_free(opaque, device, length);
}

int io_fallocate(struct sfs *fs, struct inode *in, int mode, uint64_t off, uint64_t len,
		 pid_t pid)
{
	uint64_t bs = fs->block_size;
	struct req_io r;
	rio_init(&r, mono_ns());
	uint64_t ts = now_us(fs);
	int err = inode_load_map(fs, in);
	if (err)
		return err;
	if (len == 0)
		return -EINVAL;
	if (off + len < off || off + len > (uint64_t)INT64_MAX)
		return -EFBIG;
	int kind = mode & ~FALLOC_FL_KEEP_SIZE;
	uint64_t wf, wt;
	switch (kind) {
	case 0: {
		uint64_t a = off / bs * bs, b = (off + len + bs - 1) / bs * bs;
		err = allocate_range(fs, in, a, b - a, 0, 0, pid, &r);
		break;
	}
	case FALLOC_FL_PUNCH_HOLE:
		if (!(mode & FALLOC_FL_KEEP_SIZE))
			return -EOPNOTSUPP;
		err = zero_edges(fs, in, off, len, &wf, &wt, &r);
		if (!err && wt > wf) {
			pthread_mutex_lock(&fs->alloc_lock);
			err = extmap_remove(&in->map, wf, wt - wf, free_run_cb, fs);
			pthread_mutex_unlock(&fs->alloc_lock);
			mark_dirty(in, wf);
		}
		if (reqlog_wants(fs->log, LOG_PUNCH))
			log_request(fs, LOG_PUNCH, pid, in, off, len, err ? err : (int64_t)len, ts,
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
			log_request(fs, LOG_ZERO, pid, in, off, len, err ? err : (int64_t)len, ts,
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
	rio_wait(&r);
	rio_release(&r);
	return err;
}

int io_truncate(struct sfs *fs, struct inode *in, uint64_t size)
{
	uint64_t bs = fs->block_size;
	struct req_io r;
	rio_init(&r, mono_ns());
	int err = inode_load_map(fs, in);
	if (err)
		return err;
	if (size < in->attr.size) {
		uint64_t keep = (size + bs - 1) / bs * bs;
		if (size % bs)
			err = zero_partial(fs, in, size, keep - size, &r);
		if (!err)
			inode_free_space(fs, in, keep);
	}
	if (!err) {
		in->attr.size = size;
		touch_times(in, true);
	}
	rio_wait(&r);
	rio_release(&r);
	return err;
}

int io_fsync(struct sfs *fs, struct inode *in, pid_t pid)
{
	struct req_io r;
	rio_init(&r, mono_ns());
	uint64_t ts = now_us(fs);
	/* Data and zero-fill first, then the catalog that points at them. */
	int err = fdatasync(fs->dev_fd) ? -errno : 0;
	if (!err)
		err = inode_flush(fs, in);
	if (!err)
		err = catalog_sync(fs->cat);
	if (reqlog_wants(fs->log, LOG_FSYNC))
		log_request(fs, LOG_FSYNC, pid, in, 0, 0, err, ts, &r);
	return err;
}
