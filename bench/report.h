/*
 * The request log analysis library behind scatterfs-report: a streaming
 * reader of the request log (README, "The request log"), the metrics it
 * feeds, their output as text, CSV or JSON, the fio iolog export and the
 * gnuplot plots.  The tool (report.c) and the unit tests
 * (tests/test_report.c) link the same code, so every number the tool
 * prints is tested as a function.
 *
 * Split by concern: report_parse.c (reader), report_hist.c (histograms),
 * report_metrics.c (metrics), report_output.c (text, CSV, JSON),
 * report_iolog.c (fio iolog), report_plot.c (gnuplot).
 */
#ifndef SCATTERFS_REPORT_H
#define SCATTERFS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "logschema.h"

/* ---- the request log reader (report_parse.c) ---------------------------- */

/*
 * A row's op is the schema's op index (enum log_op_index, name in
 * log_op_names[]); the report prints ops in that order.
 */

/**
 * One device I/O of a row: bytes [offset, offset+length) of a backing
 * device.  A log of a mount with one device writes its items as
 * "offset+length"; a mount with several devices writes "NAME:offset+length",
 * NAME of [A-Za-z0-9_.-]+ (README, "The request log").
 */
struct devio {
	uint64_t offset; /* device offset, bytes */
	uint64_t length; /* bytes */
	uint32_t device; /* index into the row's dev_names (0 when the log names no device) */
};

/**
 * One row of the log.  Pointers stay valid until the next
 * log_reader_next() call only; path is not NUL-terminated (path_len bytes,
 * RFC 4180 quoting already undone).
 */
struct log_row {
	uint64_t line; /* line number of the row's first line, 1 = header */
	uint64_t ts_us;
	enum log_op_index op; /* "trim" in logs before punch was named is LOG_OPI_PUNCH */
	int64_t pid;
	const char *path;
	size_t path_len;
	uint64_t offset;     /* logical offset, bytes */
	uint64_t size;	     /* logical size, bytes */
	int64_t result;	     /* bytes done or -errno */
	uint64_t latency_us; /* for extend: the zero-fill time */
	const struct devio *dev;
	size_t ndev;
	/*
	 * Whether the log's device_io items name their devices (the mount had
	 * several); then dev_names[devio.device] is the NUL-terminated name.
	 * Names are numbered in order of first appearance in the log and keep
	 * their number; the array may move, its strings do not, until
	 * log_reader_close().
	 */
	bool dev_named;
	const char *const *dev_names;
	size_t ndev_names;
	bool has_model_us; /* the log has the model_us column */
	uint64_t model_us; /* the disk model's latency (0 without the column) */
};

struct log_reader;

/**
 * log_reader_open() - opens the request log @path ("-" = standard input)
 * and checks its header: its first columns must be exactly LOG_HEADER_BASE
 * (the schema's columns before model_us); any further
 * columns (model_us, written by later versions, and unknown ones) are
 * accepted and ignored, in the header and in every row.  The op column
 * takes log_op_names[] and, for logs written before punch had its name,
 * "trim" (read as punch).
 * @return 0, -errno from open(2)/read(2), or -EINVAL for a bad header; on
 * every failure *out is NULL and @err (of @errlen bytes) holds a message
 * naming the file and the line.
 */
int log_reader_open(const char *path, struct log_reader **out, char *err, size_t errlen);

/**
 * log_reader_open_mem() - as log_reader_open() but reads the @len bytes at
 * @buf (copied), reported as file @name.  For tests.
 */
int log_reader_open_mem(const char *buf, size_t len, const char *name, struct log_reader **out,
			char *err, size_t errlen);

/**
 * log_reader_next() - decodes the next row into @row.
 * @return 1 (a row), 0 (end of the log) or -errno (-EINVAL: a malformed
 * row; log_reader_error() then gives "FILE:LINE: what is wrong").  The
 * device_io items of one log are all "offset+length" or all
 * "NAME:offset+length": an item of the other form than the log's first is
 * malformed (the message names the line of that first one).
 */
int log_reader_next(struct log_reader *r, struct log_row *row);

/** log_reader_error() - the message of the last failure ("" when none). */
const char *log_reader_error(const struct log_reader *r);

/** log_reader_columns() - number of columns in the header (9, or more). */
size_t log_reader_columns(const struct log_reader *r);

/** log_reader_close() - frees the reader and closes its file.  NULL is ignored. */
void log_reader_close(struct log_reader *r);

/**
 * report_op_parse() - the op whose name is the @len bytes at @name: one of
 * log_op_names[], or "trim" (older logs' name for punch).
 * @return its enum log_op_index, or -1.
 */
int report_op_parse(const char *name, size_t len);

/** report_op_list() - "read, write, ... or zero": the op names, for messages. */
const char *report_op_list(void);

/* ---- row selection (report_filter.c) ------------------------------------- */

/**
 * Which rows every metric, the fio iolog and the plots see (--path, --pid,
 * --op, --since, --until); a row must pass every test that is set.  Zero it
 * to select every row.
 */
struct report_filter {
	const char *path_glob; /* fnmatch(3), no flags ('*' also matches '/'); NULL = any */
	int64_t *pids;	       /* npids pids; none = any */
	size_t npids;
	unsigned ops; /* bit (1 << enum log_op_index) per op; 0 = any */
	bool has_since, has_until;
	uint64_t since_us; /* rows with ts_us >= since_us */
	uint64_t until_us; /* rows with ts_us < until_us */
	char *pathbuf;	   /* NUL-terminated copy of the row's path */
	size_t pathcap;
};

/**
 * report_filter_pids() - adds the pids of @list ("N[,N]...", decimal) to @f.
 * @return 0, -EINVAL (message in @err) or -ENOMEM.
 */
int report_filter_pids(struct report_filter *f, const char *list, char *err, size_t errlen);

/**
 * report_filter_ops() - adds the ops of @list ("OP[,OP]...", names as
 * report_op_parse() takes them) to @f.  @return 0 or -EINVAL (message in @err).
 */
int report_filter_ops(struct report_filter *f, const char *list, char *err, size_t errlen);

/**
 * report_parse_seconds() - "SEC" or "SEC.FRACTION" (at most 6 decimals:
 * ts_us counts microseconds) into *@us, microseconds.
 * @return 0, -EINVAL (not such a number) or -ERANGE (past 2^64 - 1 us).
 */
int report_parse_seconds(const char *s, uint64_t *us);

/** report_filter_match() - @return 1 when @row passes @f, 0 when not, -ENOMEM. */
int report_filter_match(struct report_filter *f, const struct log_row *row);

/** report_filter_active() - whether @f sets any test. */
bool report_filter_active(const struct report_filter *f);

/* ---- histograms (report_hist.c) ------------------------------------------ */

/** Power-of-two buckets: bucket 0 holds the value 0, bucket k >= 1 holds [2^(k-1), 2^k). */
#define HIST_BUCKETS 65

/** One exact value of a histogram and how often it was seen. */
struct hist_value {
	uint64_t value;
	uint64_t count;
};

/**
 * A histogram of unsigned 64-bit values: exact values (an open-addressing
 * hash table, so memory grows with the number of distinct values only) and
 * power-of-two buckets.
 */
struct hist {
	uint64_t n;   /* values added */
	uint64_t sum; /* their sum (saturating) */
	uint64_t bucket[HIST_BUCKETS];
	struct hist_value *slot; /* cap slots; count 0 = empty */
	size_t cap, used;
};

/** hist_bucket() - the bucket of @v: 0 for 0, else 1 + floor(log2(v)). */
unsigned hist_bucket(uint64_t v);
/** hist_bucket_lo() / hist_bucket_hi() - smallest and largest value of bucket @b. */
uint64_t hist_bucket_lo(unsigned b);
uint64_t hist_bucket_hi(unsigned b);

/** hist_add() - counts @v once.  @return 0 or -ENOMEM. */
int hist_add(struct hist *h, uint64_t v);

/**
 * hist_values() - the exact values of @h, sorted by count (descending),
 * then value (ascending); *@n gets their number.  The caller frees the
 * array.  @return the array, or NULL when @h is empty or on ENOMEM.
 */
struct hist_value *hist_values(const struct hist *h, size_t *n);

/** hist_values_by_value() - as hist_values(), sorted by value (ascending). */
struct hist_value *hist_values_by_value(const struct hist *h, size_t *n);

/** hist_count() - how often @v was added. */
uint64_t hist_count(const struct hist *h, uint64_t v);

/** hist_free() - frees what @h holds and zeroes it. */
void hist_free(struct hist *h);

/**
 * hist_percentiles() - nearest-rank percentiles of @h: for each of the @n
 * ranks @pm[i], given in tenths of a percent (500 = p50, 999 = p99.9,
 * 1000 = the maximum), the smallest value v such that at least
 * ceil(pm[i] / 1000 * h->n) of the values are <= v, into @out[i]; the
 * definition fio's completion-latency percentiles follow (fio counts in
 * buckets, this counts exact values).  All 0 when @h is empty.
 * @return 0 or -ENOMEM.
 */
int hist_percentiles(const struct hist *h, const unsigned *pm, size_t n, uint64_t *out);

/* ---- metrics (report_metrics.c) ------------------------------------------ */

/** How the read-size histogram is grouped (--by). */
enum report_by { BY_NONE, BY_FILE, BY_PID, BY_OP };

/** One group of the read-size histogram: a file, a process or an op. */
/** The latency columns summarised by --latency. */
enum lat_column { LAT_LATENCY_US, LAT_MODEL_US, LAT_COLUMNS };

/** Latencies of one group, microseconds: per op, per column. */
typedef struct hist latency_hists[LOG_OP_COUNT][LAT_COLUMNS];

/**
 * The dynamic layout score (after Smith and Seltzer's static one, SIGMETRICS
 * 1997, over the blocks actually read, as Conway et al. use it, FAST 2017):
 * over the device I/Os of read rows of one file in log order, each cut into
 * blocks of report.block_size bytes (a partial block counts as one), the
 * blocks that have a previous block read of the same file (every block but
 * the file's very first) are @scored; of those, @contiguous follow it on the
 * device: every block inside an I/O, and an I/O's first block when the I/O
 * starts where the file's previous device I/O ended.  The overall figure
 * adds the files' counts.  score = contiguous / scored (1 when 0 scored).
 */
struct dyn_layout {
	uint64_t blocks; /* blocks read */
	uint64_t scored;
	uint64_t contiguous;
};

struct report_group {
	char *key;		  /* "all", the path, the pid in decimal, or the op name */
	struct dyn_layout layout; /* "all" and --by file groups: dynamic layout score */
	struct hist hist;	  /* request sizes, bytes */
	latency_hists *lat; /* with --latency: latencies of every row; NULL before the first */
};

/** Per-op row counts of the summary table. */
struct op_summary {
	uint64_t rows;
	uint64_t bytes;	 /* sum of the size column */
	uint64_t errors; /* rows whose result is -errno */
};

/**
 * Logical sequentiality: a read is sequential when it starts where the
 * previous read of the same file ended (offset == previous offset + size).
 * The first read of each file has no previous read and counts in @reads
 * only.  share = sequential / with_previous.
 */
struct seq_metrics {
	uint64_t reads;
	uint64_t with_previous;
	uint64_t sequential;
};

/**
 * Device behaviour.  Device I/Os per read: over read rows.  Seek distance:
 * over the pairs of consecutive device I/Os of read and write rows in log
 * order (a row's own device I/Os in their order), |offset - end of the
 * previous device I/O| in bytes; a pair at distance 0 is sequential, any
 * other is non-sequential (a seek).  The first device I/O of the log starts
 * no pair.
 */
struct device_metrics {
	uint64_t reads;		     /* read rows */
	uint64_t read_device_ios;    /* device I/Os of read rows */
	struct hist per_read;	     /* device I/Os of each read row */
	uint64_t device_ios;	     /* device I/Os of read and write rows */
	uint64_t pairs;		     /* pairs of consecutive device I/Os: device_ios - 1 */
	uint64_t seek[HIST_BUCKETS]; /* seek distance, bytes, by hist_bucket() */
	/*
	 * Counted and printed for a log that names its devices (0 otherwise): the bytes of the
	 * device I/Os of read rows; the device I/Os and bytes of write rows; the sum of model_us of
	 * the read and write rows with device I/Os (a row's device I/Os are on one device: a file's
	 * extents are all on its rule's device; a row's is counted on the device of its first).
	 */
	uint64_t read_bytes;
	uint64_t write_device_ios;
	uint64_t write_bytes;
	uint64_t model_us;
	bool have_prev;
	uint64_t prev_end; /* device offset where the previous device I/O ended */
};

/**
 * Autoextend (the seed autoextend experiment's two metrics): the extend
 * rows, the bytes they added (size) and their zero-fill time (latency_us):
 * per extend (mean, max) and per MiB (total time / (bytes / 2^20)).
 */
struct extend_metrics {
	uint64_t extends;
	uint64_t bytes;
	uint64_t zero_fill_us; /* total */
	uint64_t max_us;
};

/**
 * One device of a log whose device_io items name their devices: the
 * device metrics of its own device I/Os.  Seek distances are measured from
 * the end of the previous device I/O on the same device (each device has
 * its own head); reads and per_read count the read rows with at least one
 * device I/O on this device, and that many device I/Os; the dynamic layout
 * score counts the blocks read on this device.
 */
struct report_device {
	char *name; /* NULL while the log's device of this number has had no device I/O */
	struct device_metrics m;
	struct dyn_layout layout;
};

struct file_state;
struct pid_group;

/** All metrics of one log, fed one row at a time. */
struct report {
	enum report_by by;
	uint64_t block_size; /* bytes, for the dynamic layout score; report_init() sets 4096 */
	bool latency;	     /* collect latencies (--latency); set after report_init() */
	bool has_model_us;   /* a row had the model_us column */
	uint64_t rows;
	uint64_t first_ts_us, last_ts_us;
	struct op_summary ops[LOG_OP_COUNT];
	struct report_group all; /* read sizes of every read; latencies of every row */
	struct report_group by_op[LOG_OP_COUNT];
	struct file_state *files;     /* uthash, by path */
	struct file_state *last_file; /* cache: consecutive rows often share a file */
	struct pid_group *pids;	      /* uthash, by pid (BY_PID only) */
	struct seq_metrics seq;
	struct device_metrics dev; /* every device: with several, their pairs and seeks added */
	struct extend_metrics ext;
	bool dev_named;		       /* a row named its devices (the mount had several) */
	struct report_device *devices; /* by the reader's device number (devio.device) */
	size_t ndevices;
};

/** report_init() - an empty report grouping read sizes by @by. */
void report_init(struct report *rep, enum report_by by);

/** report_add() - feeds one row.  @return 0 or -ENOMEM. */
int report_add(struct report *rep, const struct log_row *row);

/**
 * report_groups() - the --by groups of the read-size histogram (the
 * overall one is rep->all): none for BY_NONE, else one per file with reads
 * (most reads first, then by path), pid (most reads first, then by pid) or
 * op (every op's request sizes, in enum order, ops without rows left out).  @return an array of *@n
 * pointers into @rep (free the array only), or NULL with *@n = 0.
 */
struct report_group **report_groups(struct report *rep, size_t *n);

/**
 * report_latency_groups() - the --by file or --by pid groups that have
 * latencies (rep->latency), by path (bytewise) or pid (numerically).
 * @return an array of *@n pointers into @rep (free the array only), or NULL
 * with *@n = 0 (none, BY_NONE, BY_OP, or ENOMEM).
 */
struct report_group **report_latency_groups(struct report *rep, size_t *n);

/**
 * report_devices() - the devices of a log that names them (rep->dev_named)
 * and that had device I/Os, sorted by name (bytewise).  @return an array of
 * *@n pointers into @rep (free the array only), or NULL with *@n = 0 (a
 * log without names, or ENOMEM).
 */
struct report_device **report_devices(struct report *rep, size_t *n);

/** report_free() - frees everything @rep holds. */
void report_free(struct report *rep);

/** Derived values, as printed (NaN-free: 0 when the denominator is 0). */
double report_share_pct(uint64_t part, uint64_t whole); /* 100 * part / whole */
double report_device_ios_per_read(const struct report *rep);
/** report_dev_ios_per_read() - @d->read_device_ios / @d->reads; 0 without reads. */
double report_dev_ios_per_read(const struct device_metrics *d);
double report_extend_mean_us(const struct report *rep);
double report_extend_us_per_mib(const struct report *rep);
/** report_layout_score() - @l->contiguous / @l->scored; 1.0 when nothing is scored. */
double report_layout_score(const struct dyn_layout *l);

/** report_file_count() - distinct paths seen (any op). */
size_t report_file_count(const struct report *rep);

/* ---- output (report_output.c) --------------------------------------------- */

enum report_format { FMT_TEXT, FMT_CSV, FMT_JSON };

/** The tables, in output order; --metric takes these names. */
enum report_metric {
	M_SUMMARY,
	M_READ_SIZES,
	M_READ_SIZE_BUCKETS,
	M_SEQUENTIALITY,
	M_DEVICE,
	M_DEVICE_IOS_PER_READ,
	M_SEEK_DISTANCE,
	M_AUTOEXTEND,
	M_LAYOUT_SCORE,
	M_LATENCY,	   /* with --latency only */
	M_LATENCY_BUCKETS, /* with --latency only */
	M_COUNT
};

/** report_metric_name() - "summary", "read_sizes", ... */
const char *report_metric_name(enum report_metric m);
/** report_metric_parse() - the metric called @name.  @return it, or -1. */
int report_metric_parse(const char *name);

struct report_output {
	enum report_format format;
	int metric;	  /* one enum report_metric, or -1 for all */
	size_t top;	  /* exact sizes per group at most (0 = all) */
	const char *name; /* the log's name, for headings */
};

/**
 * report_print() - writes the metrics of @rep to @out as @o says (formats
 * documented in scatterfs-report --help).
 * @return 0, -EIO when writing failed, -ENOMEM.
 */
int report_print(FILE *out, struct report *rep, const struct report_output *o);

/* ---- fio iolog export (report_iolog.c) ------------------------------------ */

/** The file device NAME's iolog replays on (--iolog-device NAME=FILE). */
struct iolog_target {
	const char *name;
	const char *file;
};

/** The largest --iolog-align, bytes. */
#define IOLOG_ALIGN_MAX (1u << 20)

/** How the log's requests become fio iolog lines. */
struct iolog_opts {
	int version;	    /* 2 or 3 */
	uint64_t align;	    /* 0, or every I/O rounded out to this power of two of bytes */
	const char *dir;    /* file mode: log path P becomes DIR/P ("." when NULL) */
	const char *device; /* device mode, a one-device log: device I/Os against this file */
	/* device mode, a log that names its devices: one iolog per device */
	const struct iolog_target *targets;
	size_t ntargets;
};

struct iolog_writer;

/**
 * iolog_open() - creates the fio iolog @path and writes its version line.
 * Device mode is @o->device or @o->targets; in device mode a log that
 * names its devices gets, instead of @path, one iolog per device at
 * iolog_device_path(@path, NAME), created at the device's first device
 * I/O, its lines against the target of NAME.
 * @return 0 or -errno (message in @err): -EINVAL for a version other than
 * 2 or 3, a target name fio cannot read (over 256 bytes, white space) or
 * a device given two targets.
 */
int iolog_open(const char *path, const struct iolog_opts *o, struct iolog_writer **out, char *err,
	       size_t errlen);

/**
 * iolog_device_path() - the iolog of device @device beside @path: ".DEVICE"
 * inserted before the extension of @path's last component ("r.iolog" ->
 * "r.wal.iolog"), or appended when it has none ("r" -> "r.wal"; a leading
 * dot is no extension).  @return a string to free, or NULL (ENOMEM).
 */
char *iolog_device_path(const char *path, const char *device);

/**
 * iolog_add() - exports @row if it is a read or a write.
 * @return 0 or -errno; -EINVAL (message in iolog_error()) in device mode
 * when the log's form and the targets disagree: a log that names its
 * devices with a plain --iolog-device FILE, a device without a target, or
 * NAME=FILE targets for a log that names none.
 */
int iolog_add(struct iolog_writer *w, const struct log_row *row);

/** iolog_error() - the message of iolog_add()'s last -EINVAL ("" when none). */
const char *iolog_error(const struct iolog_writer *w);

/**
 * iolog_finish() - writes the close actions and closes every iolog file.
 * @return 0 or the first -errno.
 */
int iolog_finish(struct iolog_writer *w);

/**
 * iolog_output() - the @i-th iolog file written (0: @path of iolog_open(),
 * or the devices' iologs in order of their first device I/O): its path
 * and the I/O lines in it.  Valid until iolog_free().
 * @return 0, or -ENOENT past the last.
 */
int iolog_output(const struct iolog_writer *w, size_t i, const char **path, uint64_t *reads,
		 uint64_t *writes);

/** iolog_free() - frees @w (closing what is still open).  NULL is ignored. */
void iolog_free(struct iolog_writer *w);

/**
 * iolog_close() - iolog_finish() then iolog_free(): *@reads, *@writes get
 * the I/O lines written (over every iolog file), *@skipped the requests
 * that could not be exported (see report_iolog.c).  @return 0 or -errno.
 */
int iolog_close(struct iolog_writer *w, uint64_t *reads, uint64_t *writes, uint64_t *skipped);

/* ---- plots (report_plot.c) ------------------------------------------------ */

struct plot;

/**
 * plot_open() - prepares a plot into @out (.png or .svg); @timeline also
 * records read sizes and device offsets over time (in temporary files).
 * @return 0 or -errno (message in @err).
 */
int plot_open(const char *out, bool timeline, struct plot **pp, char *err, size_t errlen);

/** plot_add() - records @row for the timeline.  @return 0 or -errno. */
int plot_add(struct plot *p, const struct log_row *row);

/**
 * plot_finish() - writes the read-size histogram of @rep and runs gnuplot
 * (found on PATH) on a generated script; frees @p.
 * @return 0, -ENOENT when gnuplot is missing, other -errno (message in @err).
 */
int plot_finish(struct plot *p, const struct report *rep, char *err, size_t errlen);

/** plot_discard() - removes the temporary files and frees @p (no plot).  NULL is ignored. */
void plot_discard(struct plot *p);

/* ---- the whole pass (report_filter.c) ------------------------------------- */

/** What report_feed() read. */
struct report_feed_counts {
	uint64_t rows;	   /* rows read */
	uint64_t selected; /* rows that passed the filter */
	uint64_t line;	   /* on a failure other than the reader's: the row's line; else 0 */
};

/**
 * report_feed() - reads every row of @r and gives each that passes @f to
 * @rep, and to @iw and @plot when they are not NULL: the one pass of
 * scatterfs-report, so that the filter applies alike to every metric, the
 * fio iolog and the plots.
 * @return 0; the reader's -errno (log_reader_error() says why, @c->line is
 * 0); or -ENOMEM/-errno of a sink (@c->line names the row).
 */
int report_feed(struct log_reader *r, struct report_filter *f, struct report *rep,
		struct iolog_writer *iw, struct plot *plot, struct report_feed_counts *c);

/** report_filter_free() - frees what @f holds and zeroes it (path_glob is not owned). */
void report_filter_free(struct report_filter *f);

#endif
