/*
 * The request log: one CSV row per logged request, in the format of
 * layout/logschema.h, written by a background thread so the I/O
 * path never waits on the log file's disk.
 */
#ifndef SCATTERFS_REQLOG_H
#define SCATTERFS_REQLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "autoextend.h" /* struct run */
#include "config.h"     /* enum log_op */

struct reqlog;

/** One row.  Strings and arrays are copied by reqlog_append(). */
struct reqlog_row {
	uint64_t ts_us;      /* microseconds since the mount */
	enum log_op op;      /* exactly one LOG_* bit */
	pid_t pid;           /* calling process */
	const char *path;    /* relative to the mount root, no leading '/' */
	uint64_t offset;     /* logical offset, bytes */
	uint64_t size;       /* logical size, bytes */
	int64_t result;      /* bytes done, or -errno */
	uint64_t latency_us; /* request (or, for extend, zero-fill) time */
	const struct run *device_io; /* device I/Os issued, in order */
	size_t ndevice_io;
	uint64_t model_us; /* disk model's latency; written with REQLOG_MODEL_US */
	uint32_t dies;	   /* flash dies its device I/Os touched; written with REQLOG_DIES */
	uint32_t collisions; /* its flash pages that waited on a busy die (REQLOG_DIES) */
	const char *fault; /* the fault rule that broke it; NULL = none (REQLOG_FAULT) */
};

/* Flag for reqlog_open()'s @ops: add the column model_us after device_io. */
#define REQLOG_MODEL_US (1u << 16)
/* Flag for reqlog_open()'s @ops: add the columns dies and collisions after model_us. */
#define REQLOG_DIES (1u << 18)
/* Flag for reqlog_open()'s @ops: add the column fault, last. */
#define REQLOG_FAULT (1u << 17)

/**
 * reqlog_open() - creates (or truncates) @path with mode 0640, writes the
 * header line and starts the writer thread.  @ops is a LOG_* mask of the
 * operations to log, plus REQLOG_MODEL_US for the disk model's column, REQLOG_DIES
 * for a flash model's dies and collisions and REQLOG_FAULT for the fault
 * layer's.
 * @return 0, -errno from open(2) or pthread_create(3).
 */
int reqlog_open(const char *path, unsigned ops, struct reqlog **out);

/**
 * reqlog_open_fd() - reqlog_open() on @fd, already open for writing (and
 * truncated if it should be) by the caller, which passes it on: the log
 * owns it, closed by reqlog_close() or on failure.  @path names it in
 * messages (and, under /dev/ or /proc/, keeps its mode: log=/dev/stderr).
 * @return 0, -EINVAL, -ENOMEM, -errno from writing the header or from
 * pthread_create(3).
 */
int reqlog_open_fd(int fd, const char *path, unsigned ops, struct reqlog **out);

/**
 * reqlog_names_other() - whether log path @path (as given) is under /dev/
 * or /proc/ (log=/dev/stderr): another's file, appended to, never
 * truncated, locked or chmod'ed.
 */
bool reqlog_names_other(const char *path);

/**
 * reqlog_set_devices() - names the mount's @n devices (@names[dev], kept
 * by the caller until reqlog_close()), before the first row: with more than
 * one, each device_io item is written NAME:offset+length; with one the
 * log is as before, offset+length.  A NULL log is ignored.
 */
void reqlog_set_devices(struct reqlog *log, const char *const *names, unsigned n);

/** reqlog_wants() - whether rows of @op are logged (false for a NULL log). */
bool reqlog_wants(const struct reqlog *log, enum log_op op);

/**
 * reqlog_append() - queues one row.  Never drops a row: when the queue is
 * full the caller waits for the writer (counted in reqlog_stall_count()).
 * Thread-safe.  A NULL log is ignored.
 */
void reqlog_append(struct reqlog *log, const struct reqlog_row *row);

/** reqlog_rows() - rows queued so far. */
uint64_t reqlog_rows(const struct reqlog *log);
/** reqlog_stall_count() - times an append had to wait for room. */
uint64_t reqlog_stall_count(const struct reqlog *log);
/** reqlog_write_errors() - rows the writer failed to write (disk full...); reported at close. */
uint64_t reqlog_write_errors(const struct reqlog *log);
/** reqlog_rows_written() - rows written to the log file so far (write(2) returned). */
uint64_t reqlog_rows_written(const struct reqlog *log);

/**
 * reqlog_flush() - the log's flush barrier.  Returns once every row whose
 * reqlog_append() returned before this call, and every row of a request
 * that held the log (reqlog_hold()) before this call, has been passed to
 * write(2) on the log file (not fsync'ed: the rows are in the file as
 * other processes read it, not necessarily on its disk).  Rows appended
 * later may be written too, and a very long row still being appended may
 * be written in part.  Wakes the writer instead of waiting for its period.
 * Never waits for a writer that has failed: its rows are counted lost.
 * Thread-safe; a NULL log returns 0 at once.
 * @return 0, or the -errno of the writer's first failed write(2) (rows were
 * lost, see reqlog_write_errors()).
 */
int reqlog_flush(struct reqlog *log);

/**
 * reqlog_hold() - declares that the calling request will append its row
 * only after it has answered, so reqlog_flush() called after the answer
 * must still wait for that row.  Take it before answering, release it
 * with reqlog_unhold() after the append (or when no row will come); a
 * hold is two atomic operations.  @return the token for reqlog_unhold();
 * a NULL log returns 0 and reqlog_unhold() ignores it.
 */
unsigned reqlog_hold(struct reqlog *log);
/** reqlog_unhold() - releases a hold taken by reqlog_hold(), @hold its token. */
void reqlog_unhold(struct reqlog *log, unsigned hold);

/**
 * reqlog_close() - writes every queued row, fsyncs and closes the file,
 * joins the writer.  @return 0, or -errno of the first write error (the
 * count of lost rows is printed to stderr).  NULL is ignored.
 */
int reqlog_close(struct reqlog *log);

#endif
