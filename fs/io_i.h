/*
 * What the I/O path's files (io.c, io_queue.c) share; not used elsewhere.
 */
#ifndef SCATTERFS_IO_I_H
#define SCATTERFS_IO_I_H

#include "sfs.h"

#define MAX_SEGS 64 /* segments per extent-map lookup; requests loop over more */

/** io_req_init() - dev_req_init() whose lost log entries count in @fs's stats. */
static inline void io_req_init(struct sfs *fs, struct dev_req *r, uint64_t arrival_ns)
{
	dev_req_init(r, arrival_ns);
	r->lost = &fs->stats.log_io_lost;
}

/**
 * io_req_file() - io_req_init() of a request that does @op on @in: the
 * layers see its inode number and path (a pointer to in->path: nothing
 * is built per request).
 */
static inline void io_req_file(struct sfs *fs, struct dev_req *r, uint64_t arrival_ns,
			       enum dev_op op, const struct inode *in)
{
	io_req_init(fs, r, arrival_ns);
	dev_req_file(r, op, in->ino, in->path);
}

/**
 * io_log_request() - appends the log row of one request of @in: @op at
 * logical [@off, +@size), @result bytes or -errno, started at @ts (us since
 * the mount); latency, device I/Os and modelled time come from @r.
 */
void io_log_request(struct sfs *fs, enum log_op op, pid_t pid, const struct inode *in, uint64_t off,
		    uint64_t size, int64_t result, uint64_t ts, const struct dev_req *r);

/**
 * io_note_reply() - counts a reply to a request whose device I/Os a disk
 * model timed (@r's complete_ns set), now leaving: in the emulation floor's
 * counters (sfs_stats.modelled_replies, late_replies, late_hist), with how
 * long after the modelled completion it left.  Nothing without a model.
 */
void io_note_reply(struct sfs *fs, const struct dev_req *r);

/**
 * io_read_done() - the completion of one read of @in, however it was
 * read (synchronously, io.c, or queued, io_queue.c), counted and logged
 * here once: logical [@off, +@want) asked, @size bytes read (clamped at
 * EOF); @err the read's -errno (0: read), @reply_err the reply's (the
 * log's result when the read succeeded); started at @ts (us since the
 * mount); device I/Os and times from @r.
 */
void io_read_done(struct sfs *fs, const struct inode *in, pid_t pid, uint64_t off, size_t want,
		  size_t size, int err, int reply_err, uint64_t ts, const struct dev_req *r);

/**
 * io_for_each_segment() - calls @fn for each segment of logical [off,
 * off+len) of @in, in order, however many there are.  Stops at the first
 * non-zero return and returns it.
 */
int io_for_each_segment(struct inode *in, uint64_t off, uint64_t len,
			int (*fn)(void *opaque, const struct segment *s), void *opaque);

/**
 * io_read_queued() - queues the read of logical [@off, +@size) of @in
 * (clamped at EOF; @want asked) when it qualifies: queued reads on, the
 * blocks it touches in at most MAX_SEGS runs of one device, and that
 * device's stack willing to queue now.  Caller holds @in->lock for
 * reading.  @return 0 when queued (the completion thread answers @req), 1
 * when the caller reads it itself.
 */
int io_read_queued(struct sfs *fs, fuse_req_t req, struct inode *in, uint64_t off, size_t size,
		   size_t want, pid_t pid, uint64_t ts, uint64_t arrival_ns);

#endif
