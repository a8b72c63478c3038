/*
 * Queued reads (device.async_reads), the I/O path's side: a read that
 * finds other device reads in flight or requests waiting (every read with
 * async_reads = always; dev_can_queue()) is not waited for by the worker
 * thread.  Its device runs go to the device stack's queued submission
 * (struct dev_ops.submit_reads: one io_submit on a shared aio context),
 * and the worker goes back to /dev/fuse for the next request; the base
 * layer's completion thread calls back here as runs complete, and the
 * read is answered when its last run is done.  On a ring thread
 * (transport.c) the runs go to the thread's own io_uring instead
 * (dev_thread_set_ring()), and the thread itself completes them, answering
 * each read in the io_uring_enter that reaps its last run; an aligned
 * read is read straight into its ring entry's reply buffer.
 *
 * Each read in flight holds a pin on its inode instead of the inode's
 * lock, which another thread cannot release; inode_wrlock() waits for the
 * pins.  Contexts and their aligned buffers are kept in slots taken with a
 * compare-and-swap (no lock on the read path): slot[i] is allocated by the
 * first taker of slot i and kept until unmount, so nothing is allocated
 * per request once warm.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "io_i.h"
#include "reqlog.h"
#include "sfs.h"
#include "transport.h"
#include "units.h"

#define READ_QUEUE_SLOTS 256 /* queued reads in flight at most; more read synchronously */

struct queued_read {
	unsigned slot; /* index in read_queue.slot */
	struct sfs *fs;
	fuse_req_t req;
	struct inode *in;
	char *buf;         /* 4096-aligned, cap bytes: whole blocks from the request's first */
	char *data;        /* where the blocks are read: buf, or the ring entry's reply buffer */
	size_t cap, skip;  /* skip: bytes of buf before the request's offset */
	uint64_t off, ts;  /* logical offset; the log's ts_us */
	size_t size, want; /* bytes read (clamped at EOF), bytes asked */
	pid_t pid;
	struct dev_req r;
	atomic_int pending; /* runs not yet complete, plus one while submitting */
	atomic_int err;     /* first -errno */
	unsigned hold;      /* reqlog_hold() token: answered before logged */
	struct dev_aio io[MAX_SEGS];
};

struct read_queue {
	atomic_bool busy[READ_QUEUE_SLOTS];
	struct queued_read *slot[READ_QUEUE_SLOTS]; /* written only by busy[i]'s taker */
};

int io_queue_start(struct sfs *fs)
{
	int err = 0;
	for (unsigned i = 0; i < fs->ndev; i++) {
		int e = dev_stack_start(fs->dev[i]);
		if (e && !err)
			err = e;
	}
	struct read_queue *rq = calloc(1, sizeof *rq);
	if (!rq)
		return err ? err : -ENOMEM;
	fs->rq = rq;
	return err;
}

void io_queue_stop(struct sfs *fs)
{
	for (unsigned i = 0; i < fs->ndev; i++)
		dev_stack_stop(fs->dev[i]);
	struct read_queue *rq = fs->rq;
	if (!rq)
		return;
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
		size_t want = size < 128 * KiB ? 128 * KiB : size;
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

static void queued_read_put(struct read_queue *rq, struct queued_read *q)
{
	atomic_store(&rq->busy[q->slot], false);
}

/* Answers @q, logs it, drops its pin and frees its slot. */
static void queued_read_finish(struct queued_read *q)
{
	struct sfs *fs = q->fs;
	int err = atomic_load(&q->err), reply_err = 0;
	if (!err)
		reply_err = fuse_reply_buf(q->req, q->data + q->skip, q->size); /* 0 or -errno */
	else
		fuse_reply_err(q->req, -err);
	io_read_done(fs, q->in, q->pid, q->off, q->want, q->size, err, reply_err, q->ts, &q->r);
	if (reqlog_wants(fs->log, LOG_READ))
		reqlog_unhold(fs->log, q->hold);
	pins_drop(&q->in->pins);
	dev_req_release(&q->r);
	queued_read_put(fs->rq, q);
}

/* One run of @io's read completed (res: bytes or -errno). */
static void queued_run_done(struct dev_aio *io, int64_t res)
{
	struct queued_read *q = io->opaque;
	if (res < 0) {
		int zero = 0;
		atomic_compare_exchange_strong(&q->err, &zero, (int)res);
	}
	if (atomic_fetch_sub(&q->pending, 1) == 1)
		queued_read_finish(q);
}

int io_read_queued(struct sfs *fs, fuse_req_t req, struct inode *in, uint64_t off, size_t size,
		   size_t want, pid_t pid, uint64_t ts, uint64_t arrival_ns)
{
	struct read_queue *rq = fs->rq;
	struct device *d = inode_device(fs, in);
	if (!rq || !size || !dev_can_queue(d))
		return 1;
	/* The device reads whole blocks: the request's first and last block
	 * belong to the extents the request starts and ends in. */
	uint64_t bs = d->block_size, a = round_down(off, bs), b = round_up(off + size, bs);
	struct segment segs[MAX_SEGS];
	size_t n = extmap_lookup(&in->map, a, b - a, segs, MAX_SEGS);
	if (segs[n - 1].logical + segs[n - 1].length < b)
		return 1; /* more runs than one lookup gives */
	struct queued_read *q = queued_read_get(rq, b - a);
	if (!q)
		return 1;
	/* On a ring thread, an aligned read goes straight into its entry's
	 * reply buffer (the reply then leaves without a copy, transport.c). */
	q->data = off == a ? transport_reply_buffer(b - a) : NULL;
	if (!q->data)
		q->data = q->buf;
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
	io_req_file(fs, &q->r, arrival_ns, DEV_OP_READ, in);
	size_t nio = 0;
	for (size_t i = 0; i < n; i++) {
		char *dst = q->data + (segs[i].logical - a);
		if (segs[i].kind != SEG_DATA) {
			memset(dst, 0, segs[i].length);
			continue;
		}
		if (segs[i].dev != d->index) {
			nio = MAX_SEGS + 1; /* another device: read it synchronously */
			break;
		}
		/* The log shows the request's own bytes, as a synchronous read does;
		 * the device reads the whole blocks around them into the buffer. */
		uint64_t lo = segs[i].logical > off ? segs[i].logical : off;
		uint64_t end = segs[i].logical + segs[i].length;
		uint64_t hi = end < off + size ? end : off + size;
		q->io[nio] = (struct dev_aio){.off = segs[i].device + (lo - segs[i].logical),
					      .len = hi - lo,
					      .logical = lo,
					      .buf = dst + (lo - segs[i].logical),
					      .done = queued_run_done,
					      .opaque = q};
		nio++;
	}
	if (nio > MAX_SEGS) {
		dev_req_release(&q->r);
		queued_read_put(rq, q);
		return 1;
	}
	pins_take(&in->pins);
	/* The completion thread answers, then logs: .scatterfs/stats must wait
	 * for the row (the worker's own hold ends when this returns). */
	if (reqlog_wants(fs->log, LOG_READ))
		q->hold = reqlog_hold(fs->log);
	atomic_store(&q->pending, (int)nio + 1);
	if (nio && dev_submit_reads(d, &q->r, q->io, nio)) {
		/* The stack would not queue after all: read it here. */
		if (reqlog_wants(fs->log, LOG_READ))
			reqlog_unhold(fs->log, q->hold);
		pins_drop(&in->pins);
		dev_req_release(&q->r);
		queued_read_put(rq, q);
		return 1;
	}
	atomic_fetch_add(&d->counters.async_reads, 1);
	if (transport_on_ring_thread())
		atomic_fetch_add(&d->counters.ring_reads, 1);
	if (atomic_fetch_sub(&q->pending, 1) == 1)
		queued_read_finish(q);
	return 0;
}
