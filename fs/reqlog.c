/*
 * The request log writer.
 *
 * Data structure: one byte ring (default 8 MiB) shared by every FUSE
 * worker thread, and one writer thread that empties it with write(2).
 *
 * An appending thread formats its row without any lock into a 4 KiB
 * buffer on its own stack, then takes log->lock only to memcpy the bytes
 * into the ring.  The writer takes the lock only to read and advance the
 * ring's tail; it calls write(2) with the lock released, on bytes no
 * producer can touch until the tail moves.  It writes when 256 KiB are
 * queued, when an appender is stalled, when ~100 ms have passed, when no
 * row has come for 1 ms (the mount went idle: so `tail -f` and a report
 * run right after a command see its rows), when a flush barrier waits (a
 * read of .scatterfs/stats), or at close; so the log file gets large
 * writes under load and the I/O path never waits on the log file's disk
 * unless the ring is full.  An append to an empty ring wakes the writer
 * (once per batch, not per row); while rows are queued it wakes every
 * 1 ms to see whether more came.
 *
 * Why a byte ring rather than a queue of fixed-size buffers: rows vary from
 * ~40 bytes to hundreds of KiB (a read that crossed thousands of extents),
 * and a byte ring wastes no space at buffer ends and needs no special case
 * for a row that is bigger than a buffer.
 *
 * A row that does not fit in the stack buffer, or that meets a full ring,
 * is copied in pieces.  While it is incomplete in the ring its thread holds
 * log->busy, which keeps every other row out, so rows never interleave.
 * That is also the known weak spot: a thread formatting a very long row
 * holds back the others until it is done (it formats without the lock, so
 * they wait for formatting, never for the disk, unless the ring is full).
 *
 * Order: a row is entirely in the ring when reqlog_append() returns, and
 * the ring is FIFO, so rows appear in the file in the order their appends
 * returned, within one thread and across threads.
 *
 * Never drops: a full ring makes appenders wait (counted as stalls).  If
 * write(2) fails the writer stops writing (a log with a gap in the middle
 * would look complete to scatterfs-report), discards what is queued so
 * appenders are not blocked forever, and counts the lost rows; close
 * reports them.
 *
 * Flush barrier (reqlog_flush()): positions in the ring wrap, so the
 * barrier compares byte counts that never wrap: row_end, the bytes queued
 * up to the end of the last complete row, and done, the bytes the writer
 * has consumed (written or discarded).  A barrier takes row_end as its
 * target and waits until done reaches it; the writer treats a pending
 * target as a reason to write at once.  Because a failed writer still
 * consumes (and discards) what is queued, a barrier never waits for a
 * writer that has given up.
 *
 * Holds (reqlog_hold()): a read answers its caller before it appends its
 * row (so that its latency includes the reply), so a barrier must also
 * wait for the requests that may have answered without having appended
 * yet.  Holds are counted in two counters chosen by the parity of an
 * epoch; a barrier flips the epoch and waits for the old parity to drain,
 * twice, as userspace RCU's grace period does: every hold taken before the
 * barrier began is in one of the two drained parities, and while it waits
 * for one parity new holds go to the other, so a stream of new reads
 * cannot starve it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "reqlog.h"
#include "units.h"

#define REQLOG_RING_BYTES   (8 * MiB)
#define REQLOG_FLUSH_BYTES  (256 * KiB) /* wake the writer at this much queued */
#define REQLOG_MAX_WRITE    MiB	 /* largest single write(2) */
#define REQLOG_FLUSH_NS	    100000000L	 /* flush at least every 100 ms */
#define REQLOG_IDLE_NS	    1000000L	 /* flush after 1 ms without a new row */
#define REQLOG_ROWBUF_BYTES 4096	 /* per-append stack buffer */

static const char reqlog_header[] = LOG_HEADER_BASE "\n";

struct reqlog {
	int fd;
	unsigned ops; /* LOG_* mask, read-only after open */
	/*
	 * With more than one: each device_io item is NAME:offset+length, the
	 * name of the run's dev.  Set before the first row, read-only after.
	 */
	const char *const *dev_names;
	unsigned ndev_names;
	char *path;   /* for the message at close */

	pthread_mutex_t lock;
	pthread_cond_t data; /* writer waits: data queued, stall, closing */
	pthread_cond_t room; /* appenders wait: ring space, or busy released */
	char *ring;	     /* cap bytes */
	size_t cap;
	size_t flush_bytes;
	size_t max_write;
	size_t head;	  /* under lock: next byte an appender fills */
	size_t tail;	  /* under lock: next byte the writer writes */
	size_t used;	  /* under lock: bytes queued, [tail, tail+used) mod cap */
	bool busy;	  /* under lock: an incomplete row is in the ring */
	unsigned waiting; /* under lock: appenders waiting for room */
	bool closing;	  /* under lock */

	pthread_t writer;

	/* Counters: updated with __atomic builtins so the getters need no lock. */
	uint64_t rows;	 /* rows fully queued */
	uint64_t stalls; /* appends that waited for room */
	uint64_t lost;	 /* rows the writer failed to write */
	uint64_t written; /* rows the writer wrote to the file */
	int err;	  /* first -errno from write(2); set by the writer (atomic) */

	/* Flush barrier: byte counts since open, never wrapping. */
	uint64_t queued;	/* under lock: bytes ever put in the ring */
	uint64_t row_end;	/* under lock: queued at the end of the last complete row */
	uint64_t done;		/* under lock: bytes the writer consumed */
	uint64_t flush_to;	/* under lock: largest target of a waiting barrier */
	bool writer_gone;	/* under lock: the writer thread has returned */
	pthread_cond_t flushed; /* barriers wait: done advanced, or writer gone */
	bool in_quote;		/* writer only: row counting is inside a quoted path */

	/* Holds (see the file comment); hold_lock serializes barriers' epoch flips. */
	unsigned hold_epoch;
	uint64_t holds[2];
	pthread_mutex_t hold_lock;
};

/* ---- writer thread ---------------------------------------------------- */

/*
 * Rows that end in [p, p+n): newlines outside quotes.  A quoted path may
 * hold a newline (RFC 4180), and a chunk may end inside a quote, so the
 * quote state carries over from one call to the next in log->in_quote; a
 * doubled quote inside a path toggles it twice.
 */
static uint64_t count_rows(struct reqlog *log, const char *p, size_t n)
{
	uint64_t rows = 0;
	const char *end = p + n;

	while (p < end) {
		size_t left = (size_t)(end - p);
		if (log->in_quote) {
			const char *q = memchr(p, '"', left);
			if (q == NULL)
				break;
			log->in_quote = false;
			p = q + 1;
			continue;
		}
		const char *nl = memchr(p, '\n', left);
		const char *q = memchr(p, '"', nl ? (size_t)(nl - p) : left);
		if (q != NULL) {
			log->in_quote = true;
			p = q + 1;
		} else if (nl != NULL) {
			rows++;
			p = nl + 1;
		} else {
			break;
		}
	}
	return rows;
}

/* Writes [p, p+n) to the log file; after the first failure only counts. */
static void write_out(struct reqlog *log, const char *p, size_t n)
{
	int err = __atomic_load_n(&log->err, __ATOMIC_RELAXED);

	while (n > 0 && err == 0) {
		ssize_t w = write(log->fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (w == 0) { /* not expected from a file; do not spin */
			err = -EIO;
			break;
		}
		__atomic_add_fetch(&log->written, count_rows(log, p, (size_t)w), __ATOMIC_RELAXED);
		p += w;
		n -= (size_t)w;
	}
	if (err != 0)
		__atomic_store_n(&log->err, err, __ATOMIC_RELAXED);
	if (n > 0)
		__atomic_add_fetch(&log->lost, count_rows(log, p, n), __ATOMIC_RELAXED);
}

static void deadline_after(struct timespec *ts, long ns)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_nsec += ns;
	while (ts->tv_nsec >= 1000000000L) {
		ts->tv_nsec -= 1000000000L;
		ts->tv_sec++;
	}
}

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void *writer_main(void *arg)
{
	struct reqlog *log = arg;
	struct timespec deadline, quiet;
	size_t drain = 0; /* bytes still to write: the period expired, or the log went idle */

	deadline_after(&deadline, REQLOG_FLUSH_NS);
	pthread_mutex_lock(&log->lock);
	for (;;) {
		/* Write when there is data and a reason: the period expired, no
		 * row came for REQLOG_IDLE_NS, the flush size is reached, an
		 * appender is stalled, a flush barrier waits, or close. */
		while (!log->closing &&
		       (log->used == 0 || (drain == 0 && log->used < log->flush_bytes &&
					   log->waiting == 0 && log->done >= log->flush_to))) {
			/* With rows queued, wait for quiet rather than the period. */
			bool for_quiet = false;
			if (log->used > 0) {
				deadline_after(&quiet, REQLOG_IDLE_NS);
				for_quiet = ts_before(&quiet, &deadline);
			}
			uint64_t seen = log->queued;
			if (pthread_cond_timedwait(&log->data, &log->lock,
						   for_quiet ? &quiet : &deadline) != ETIMEDOUT)
				continue;
			if (!for_quiet) {
				drain = log->used;
				deadline_after(&deadline, REQLOG_FLUSH_NS);
			} else if (log->queued == seen) {
				drain = log->used; /* nothing new for REQLOG_IDLE_NS */
			}
		}
		if (log->used == 0)
			break; /* closing, and everything is written */

		size_t n = log->used;
		if (n > log->cap - log->tail)
			n = log->cap - log->tail;
		if (n > log->max_write)
			n = log->max_write;
		const char *p = log->ring + log->tail;

		pthread_mutex_unlock(&log->lock);
		write_out(log, p, n);
		pthread_mutex_lock(&log->lock);

		log->tail = (log->tail + n) % log->cap;
		log->used -= n;
		log->done += n;
		drain = drain > n ? drain - n : 0;
		pthread_cond_broadcast(&log->room);
		if (log->flush_to > log->done - n)
			pthread_cond_broadcast(&log->flushed);
	}
	log->writer_gone = true;
	pthread_cond_broadcast(&log->flushed);
	pthread_mutex_unlock(&log->lock);
	return NULL;
}

/* ---- appending --------------------------------------------------------- */

/* One row being formatted by one thread. */
struct rowbuf {
	struct reqlog *log;
	size_t n;     /* bytes in b */
	bool holding; /* this row owns log->busy */
	bool stalled; /* this append already counted a stall */
	char b[REQLOG_ROWBUF_BYTES];
};

/*
 * Moves rb->b into the ring.  @final: the row is complete; otherwise this
 * thread keeps log->busy until its final spill so no row gets in between.
 */
static void rb_spill(struct rowbuf *rb, bool final)
{
	struct reqlog *log = rb->log;
	const char *p = rb->b;
	size_t n = rb->n;

	pthread_mutex_lock(&log->lock);
	while (log->busy && !rb->holding)
		pthread_cond_wait(&log->room, &log->lock);
	bool was_empty = log->used == 0;
	while (n > 0) {
		size_t k = log->cap - log->used;

		if (k == 0) {
			if (!rb->stalled) {
				rb->stalled = true;
				__atomic_add_fetch(&log->stalls, 1, __ATOMIC_RELAXED);
			}
			log->busy = true; /* part of this row may be queued already */
			rb->holding = true;
			log->waiting++;
			pthread_cond_signal(&log->data);
			pthread_cond_wait(&log->room, &log->lock);
			log->waiting--;
			continue;
		}
		if (k > n)
			k = n;
		if (k > log->cap - log->head)
			k = log->cap - log->head;
		memcpy(log->ring + log->head, p, k);
		log->head = (log->head + k) % log->cap;
		log->used += k;
		log->queued += k;
		p += k;
		n -= k;
	}
	/* The first bytes of a batch wake the writer, which then waits for
	 * quiet (cheap when it is not waiting). */
	if (was_empty || log->used >= log->flush_bytes)
		pthread_cond_signal(&log->data);
	if (final) {
		/* No other row got in while this one was incomplete (busy). */
		log->row_end = log->queued;
		__atomic_add_fetch(&log->rows, 1, __ATOMIC_RELAXED);
		if (rb->holding) {
			rb->holding = false;
			log->busy = false;
			pthread_cond_broadcast(&log->room);
		}
	} else {
		rb->holding = true;
		log->busy = true;
	}
	pthread_mutex_unlock(&log->lock);
	rb->n = 0;
}

/* Makes room for @k more bytes (k <= sizeof(rb->b)). */
static inline void rb_reserve(struct rowbuf *rb, size_t k)
{
	if (rb->n + k > sizeof(rb->b))
		rb_spill(rb, false);
}

static void rb_bytes(struct rowbuf *rb, const char *p, size_t len)
{
	while (len > 0) {
		if (rb->n == sizeof(rb->b))
			rb_spill(rb, false);
		size_t k = sizeof(rb->b) - rb->n;
		if (k > len)
			k = len;
		memcpy(rb->b + rb->n, p, k);
		rb->n += k;
		p += k;
		len -= k;
	}
}

static inline void rb_char(struct rowbuf *rb, char c)
{
	rb_reserve(rb, 1);
	rb->b[rb->n++] = c;
}

/* Decimal, no leading zeros; snprintf costs several times more per field. */
static inline void rb_u64(struct rowbuf *rb, uint64_t v)
{
	char tmp[20]; /* UINT64_MAX has 20 digits */
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	rb_reserve(rb, sizeof(tmp) - i);
	memcpy(rb->b + rb->n, tmp + i, sizeof(tmp) - i);
	rb->n += sizeof(tmp) - i;
}

static inline void rb_i64(struct rowbuf *rb, int64_t v)
{
	if (v < 0) {
		rb_char(rb, '-');
		rb_u64(rb, -(uint64_t)v); /* well defined for INT64_MIN too */
	} else {
		rb_u64(rb, (uint64_t)v);
	}
}

/* RFC 4180, section 2, rules 6 and 7: quote a field holding a comma, a
 * double quote, CR or LF, and double each double quote inside it. */
static void rb_path(struct rowbuf *rb, const char *path)
{
	if (path == NULL)
		return;
	size_t len = strlen(path);
	if (strcspn(path, ",\"\r\n") == len) {
		rb_bytes(rb, path, len);
		return;
	}
	rb_char(rb, '"');
	const char *end = path + len;
	while (path < end) {
		const char *q = memchr(path, '"', (size_t)(end - path));
		if (q == NULL) {
			rb_bytes(rb, path, (size_t)(end - path));
			break;
		}
		rb_bytes(rb, path, (size_t)(q - path) + 1);
		rb_char(rb, '"');
		path = q + 1;
	}
	rb_char(rb, '"');
}

/* The name of @op, exactly one LOG_* bit (logschema.h). */
static const char *op_name(enum log_op op)
{
	unsigned i = (unsigned)__builtin_ctz((unsigned)op);

	return i < LOG_OP_COUNT ? log_op_names[i] : "unknown";
}

void reqlog_append(struct reqlog *log, const struct reqlog_row *row)
{
	if (log == NULL || row == NULL || !(log->ops & (unsigned)row->op))
		return;

	struct rowbuf rb;
	rb.log = log;
	rb.n = 0;
	rb.holding = false;
	rb.stalled = false;

	rb_u64(&rb, row->ts_us);
	rb_char(&rb, ',');
	const char *op = op_name(row->op);
	rb_bytes(&rb, op, strlen(op));
	rb_char(&rb, ',');
	rb_i64(&rb, row->pid);
	rb_char(&rb, ',');
	rb_path(&rb, row->path);
	rb_char(&rb, ',');
	rb_u64(&rb, row->offset);
	rb_char(&rb, ',');
	rb_u64(&rb, row->size);
	rb_char(&rb, ',');
	rb_i64(&rb, row->result);
	rb_char(&rb, ',');
	rb_u64(&rb, row->latency_us);
	rb_char(&rb, ',');
	for (size_t i = 0; i < row->ndevice_io; i++) {
		if (i > 0)
			rb_char(&rb, ';');
		if (log->ndev_names > 1) {
			unsigned dev = row->device_io[i].dev;
			const char *name = dev < log->ndev_names ? log->dev_names[dev] : "?";
			rb_bytes(&rb, name, strlen(name));
			rb_char(&rb, ':');
		}
		rb_u64(&rb, row->device_io[i].device);
		rb_char(&rb, '+');
		rb_u64(&rb, row->device_io[i].length);
	}
	if (log->ops & REQLOG_MODEL_US) {
		rb_char(&rb, ',');
		rb_u64(&rb, row->model_us);
	}
	if (log->ops & REQLOG_DIES) {
		rb_char(&rb, ',');
		rb_u64(&rb, row->dies);
		rb_char(&rb, ',');
		rb_u64(&rb, row->collisions);
	}
	if (log->ops & REQLOG_FAULT) {
		rb_char(&rb, ',');
		if (row->fault) /* a rule's name: letters, digits, '_', '.', '-' (never quoted) */
			rb_bytes(&rb, row->fault, strlen(row->fault));
	}
	rb_char(&rb, '\n');
	rb_spill(&rb, true);
}

/* ---- open, getters, close ---------------------------------------------- */

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void reqlog_free(struct reqlog *log)
{
	free(log->ring);
	free(log->path);
	free(log);
}

/*
 * Test hook for tests/test_reqlog.c (a tiny ring forces stalls and split
 * rows); not in reqlog.h because the daemon has no reason to size the ring.
 * reqlog_open() with a ring of @ring_bytes (>= 1).
 */
int reqlog_open_ring(const char *path, unsigned ops, size_t ring_bytes, struct reqlog **out);

static int reqlog_start(int fd, const char *path, unsigned ops, size_t ring_bytes,
			struct reqlog **out);

int reqlog_open_ring(const char *path, unsigned ops, size_t ring_bytes, struct reqlog **out)
{
	if (path == NULL || out == NULL || ring_bytes == 0)
		return -EINVAL;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0)
		return -errno;
	return reqlog_start(fd, path, ops, ring_bytes, out);
}

bool reqlog_names_other(const char *path)
{
	return strncmp(path, "/dev/", 5) == 0 || strncmp(path, "/proc/", 6) == 0;
}

int reqlog_open_fd(int fd, const char *path, unsigned ops, struct reqlog **out)
{
	if (fd < 0 || path == NULL || out == NULL) {
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	return reqlog_start(fd, path, ops, REQLOG_RING_BYTES, out);
}

/* reqlog_open_ring() and reqlog_open_fd() once @fd is open: owns it (closed on failure). */
static int reqlog_start(int fd, const char *path, unsigned ops, size_t ring_bytes,
			struct reqlog **out)
{
	struct reqlog *log = calloc(1, sizeof(*log));
	if (log == NULL) {
		close(fd);
		return -ENOMEM;
	}
	log->fd = fd;
	log->ops = ops;
	log->cap = ring_bytes;
	log->flush_bytes =
	    ring_bytes / 4 < REQLOG_FLUSH_BYTES ? ring_bytes / 4 : REQLOG_FLUSH_BYTES;
	if (log->flush_bytes == 0)
		log->flush_bytes = 1;
	log->max_write = ring_bytes < REQLOG_MAX_WRITE ? ring_bytes : REQLOG_MAX_WRITE;
	log->ring = malloc(ring_bytes);
	log->path = strdup(path);
	int rc;
	if (log->ring == NULL || log->path == NULL) {
		rc = -ENOMEM;
		goto fail_fd;
	}
	/*
	 * An existing file keeps its mode through O_TRUNC: narrow it to 0640
	 * (never widen a stricter one).  Only a regular file named as such:
	 * log=/dev/stderr must not chmod the terminal, nor the file stderr
	 * was redirected to.
	 */
	struct stat st;
	if (!reqlog_names_other(path) && fstat(log->fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777 & ~0640u))
		(void)fchmod(log->fd, st.st_mode & 0640);

	rc = write_all(log->fd, reqlog_header, sizeof(reqlog_header) - 2);
	if (rc == 0 && (ops & REQLOG_MODEL_US))
		rc = write_all(log->fd, ",", 1);
	if (rc == 0 && (ops & REQLOG_MODEL_US))
		rc = write_all(log->fd, log_column_names[LOG_COL_MODEL_US],
			       strlen(log_column_names[LOG_COL_MODEL_US]));
	for (int c = LOG_COL_DIES; c <= LOG_COL_COLLISIONS && rc == 0 && (ops & REQLOG_DIES); c++) {
		rc = write_all(log->fd, ",", 1);
		if (rc == 0)
			rc = write_all(log->fd, log_column_names[c], strlen(log_column_names[c]));
	}
	if (rc == 0 && (ops & REQLOG_FAULT))
		rc = write_all(log->fd, ",", 1);
	if (rc == 0 && (ops & REQLOG_FAULT))
		rc = write_all(log->fd, log_column_names[LOG_COL_FAULT],
			       strlen(log_column_names[LOG_COL_FAULT]));
	if (rc == 0)
		rc = write_all(log->fd, "\n", 1);
	if (rc < 0)
		goto fail_fd;

	pthread_condattr_t ca;
	pthread_mutex_init(&log->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&log->data, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&log->room, NULL);
	pthread_cond_init(&log->flushed, NULL);
	pthread_mutex_init(&log->hold_lock, NULL);

	/* Signals belong to the FUSE session's thread, not to the writer. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = -pthread_create(&log->writer, NULL, writer_main, log);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc < 0) {
		pthread_mutex_destroy(&log->hold_lock);
		pthread_cond_destroy(&log->flushed);
		pthread_cond_destroy(&log->room);
		pthread_cond_destroy(&log->data);
		pthread_mutex_destroy(&log->lock);
		goto fail_fd;
	}
	*out = log;
	return 0;

fail_fd:
	close(log->fd);
	reqlog_free(log);
	return rc;
}

int reqlog_open(const char *path, unsigned ops, struct reqlog **out)
{
	return reqlog_open_ring(path, ops, REQLOG_RING_BYTES, out);
}

void reqlog_set_devices(struct reqlog *log, const char *const *names, unsigned n)
{
	if (!log)
		return;
	log->dev_names = names;
	log->ndev_names = n;
}

bool reqlog_wants(const struct reqlog *log, enum log_op op)
{
	return log != NULL && (log->ops & (unsigned)op) != 0;
}

uint64_t reqlog_rows(const struct reqlog *log)
{
	return log ? __atomic_load_n(&log->rows, __ATOMIC_RELAXED) : 0;
}

uint64_t reqlog_stall_count(const struct reqlog *log)
{
	return log ? __atomic_load_n(&log->stalls, __ATOMIC_RELAXED) : 0;
}

uint64_t reqlog_write_errors(const struct reqlog *log)
{
	return log ? __atomic_load_n(&log->lost, __ATOMIC_RELAXED) : 0;
}

uint64_t reqlog_rows_written(const struct reqlog *log)
{
	return log ? __atomic_load_n(&log->written, __ATOMIC_RELAXED) : 0;
}

unsigned reqlog_hold(struct reqlog *log)
{
	if (log == NULL)
		return 0;
	unsigned e = __atomic_load_n(&log->hold_epoch, __ATOMIC_SEQ_CST) & 1;
	__atomic_add_fetch(&log->holds[e], 1, __ATOMIC_SEQ_CST);
	return e;
}

void reqlog_unhold(struct reqlog *log, unsigned hold)
{
	if (log != NULL)
		__atomic_sub_fetch(&log->holds[hold & 1], 1, __ATOMIC_SEQ_CST);
}

/* Waits until every hold taken before the call is released. */
static void wait_holds(struct reqlog *log)
{
	const struct timespec pause = {.tv_nsec = 20000};

	pthread_mutex_lock(&log->hold_lock);
	for (int flip = 0; flip < 2; flip++) {
		unsigned old = __atomic_fetch_xor(&log->hold_epoch, 1, __ATOMIC_SEQ_CST) & 1;
		/* A hold lasts one request, so polling costs little and needs
		 * nothing of the hot path. */
		while (__atomic_load_n(&log->holds[old], __ATOMIC_SEQ_CST) != 0)
			nanosleep(&pause, NULL);
	}
	pthread_mutex_unlock(&log->hold_lock);
}

int reqlog_flush(struct reqlog *log)
{
	if (log == NULL)
		return 0;
	wait_holds(log);

	pthread_mutex_lock(&log->lock);
	uint64_t target = log->row_end;
	if (log->done < target && !log->writer_gone) {
		if (log->flush_to < target)
			log->flush_to = target;
		pthread_cond_signal(&log->data);
		while (log->done < target && !log->writer_gone)
			pthread_cond_wait(&log->flushed, &log->lock);
	}
	/* The writer stores err before it takes the lock to advance done. */
	int rc = __atomic_load_n(&log->err, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&log->lock);
	return rc;
}

int reqlog_close(struct reqlog *log)
{
	if (log == NULL)
		return 0;

	pthread_mutex_lock(&log->lock);
	log->closing = true;
	pthread_cond_signal(&log->data);
	pthread_mutex_unlock(&log->lock);
	pthread_join(log->writer, NULL);

	int rc = __atomic_load_n(&log->err, __ATOMIC_RELAXED);
	uint64_t lost = log->lost;
	if (rc < 0)
		fprintf(stderr, "scatterfs: request log %s: %" PRIu64 " rows lost: %s\n", log->path,
			lost, strerror(-rc));
	/* EINVAL: a pipe or terminal (log=/dev/stderr) cannot be synced. */
	if (fsync(log->fd) < 0 && errno != EINVAL && errno != EROFS && rc == 0) {
		rc = -errno;
		fprintf(stderr, "scatterfs: request log %s: fsync: %s\n", log->path, strerror(-rc));
	}
	/* Linux releases the descriptor even when close(2) fails: no retry. */
	if (close(log->fd) < 0 && rc == 0) {
		rc = -errno;
		fprintf(stderr, "scatterfs: request log %s: close: %s\n", log->path, strerror(-rc));
	}

	pthread_mutex_destroy(&log->hold_lock);
	pthread_cond_destroy(&log->flushed);
	pthread_cond_destroy(&log->room);
	pthread_cond_destroy(&log->data);
	pthread_mutex_destroy(&log->lock);
	reqlog_free(log);
	return rc;
}
