/*
 * What each request of the I/O path leaves behind once it is answered: its
 * request log row, and for a read the read counters.  A read completes in
 * one of two places, io.c (the worker thread read it) or io_queue.c (the
 * completion thread did); both end here, so that a read is counted and
 * logged by one function, and neither of those files calls the other for
 * it.
 */
#include "io_i.h"
#include "reqlog.h"
#include "sfs.h"

void io_log_request(struct sfs *fs, enum log_op op, pid_t pid, const struct inode *in, uint64_t off,
		    uint64_t size, int64_t result, uint64_t ts, const struct dev_req *r)
{
	/* [disk] time_dilation: the log's durations are the drive's, the clock's / N */
	uint64_t n = fs->cfg.time_dilation > 1 ? fs->cfg.time_dilation : 1;
	struct reqlog_row row = {
	    .ts_us = ts,
	    .op = op,
	    .pid = pid,
	    .path = in->path ? in->path : "",
	    .offset = off,
	    .size = size,
	    .result = result,
	    .latency_us = (mono_ns() - r->arrival_ns) / 1000 / n,
	    .device_io = r->v,
	    .ndevice_io = r->n,
	    .model_us = dev_req_model_us(r) / n,
	    .dies = r->dies,
	    .collisions = r->collisions,
	    .fault = r->fault[0] ? r->fault : NULL,
	};
	reqlog_append(fs->log, &row);
}

void io_read_done(struct sfs *fs, const struct inode *in, pid_t pid, uint64_t off, size_t want,
		  size_t size, int err, int reply_err, uint64_t ts, const struct dev_req *r)
{
	if (!err) {
		atomic_fetch_add(&fs->stats.reads, 1);
		atomic_fetch_add(&fs->stats.bytes_read, size);
	}
	if (reqlog_wants(fs->log, LOG_READ))
		io_log_request(fs, LOG_READ, pid, in, off, want,
			       err ? err : reply_err ? reply_err : (int64_t)size, ts, r);
}
