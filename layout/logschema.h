/*
 * The request log's schema, defined once: its columns and its op names.
 *
 * The writer (fs/reqlog.c), scatterfs-report's parser (bench/report_parse.c),
 * the benchmarks, the configuration's [log] ops key and the tests all take
 * the names from here, so a new column or op is one X() line below plus the
 * code that fills or reads it (HACKING.md, "Add a log column").
 *
 * One CSV header line, then one row per request:
 *   ts_us,op,pid,path,offset,size,result,latency_us,device_io[,model_us][,dies,collisions][,fault]
 * ts_us        microseconds since the mount (the request's start)
 * op           one of the op names below
 * pid          the calling process
 * path         relative to the mount root, quoted as RFC 4180 says when it
 *              holds a comma, a double quote, CR or LF
 * offset, size the logical request, bytes
 * result       bytes done, or -errno
 * latency_us   the request's time (for extend: the zero-fill's)
 * device_io    the device I/Os issued, "device_offset+length" joined by ';'
 * model_us     the disk model's latency; only when a disk model is on
 * dies         the flash dies its device I/Os touched (summed over them:
 *              a request of one device I/O names each die once); only when
 *              a device's disk model has dies (model = ssd).  A read of
 *              P pages on D dies is split over D dies: D = 1 for P > 1 is
 *              a file whose neighbouring pages share a die
 * collisions   its flash pages that waited for a die busy with another
 *              page (of it or of another request) or with garbage
 *              collection; with dies.  Splitting shows as dies > 1 with
 *              collisions 0, collisions as collisions > 0
 * fault        the fault rule that broke one of the request's device I/Os
 *              (empty when none did); only when a device's stack has the
 *              fault layer (fs/dev_fault.c)
 */
#ifndef SCATTERFS_LOGSCHEMA_H
#define SCATTERFS_LOGSCHEMA_H

/*
 * X(NAME, "name", description): the ops, in bit order.  FALLOC_FL_PUNCH_HOLE
 * is "punch" and FALLOC_FL_ZERO_RANGE "zero", as fallocate(2) names them.
 */
#define LOG_OP_LIST(X)                                                                \
	X(READ, "read", "a read request")                                             \
	X(WRITE, "write", "a write request")                                          \
	X(EXTEND, "extend", "an autoextend: offset = old allocated end, size = bytes added") \
	X(FSYNC, "fsync", "an fsync or fdatasync")                                    \
	X(PUNCH, "punch", "fallocate(FALLOC_FL_PUNCH_HOLE)")                          \
	X(ZERO, "zero", "fallocate(FALLOC_FL_ZERO_RANGE)")

enum log_op_index {
#define LOG_OP_INDEX(n, s, d) LOG_OPI_##n,
	LOG_OP_LIST(LOG_OP_INDEX)
#undef LOG_OP_INDEX
	LOG_OP_COUNT
};

/** One bit per op: the [log] ops mask and a row's op. */
enum log_op {
#define LOG_OP_BIT(n, s, d) LOG_##n = 1u << LOG_OPI_##n,
	LOG_OP_LIST(LOG_OP_BIT)
#undef LOG_OP_BIT
};

/** The op names, indexed by enum log_op_index, NULL-terminated. */
static const char *const log_op_names[LOG_OP_COUNT + 1] = {
#define LOG_OP_NAME(n, s, d) s,
	LOG_OP_LIST(LOG_OP_NAME)
#undef LOG_OP_NAME
	NULL};

/**
 * X(NAME, "name"): the columns, in file order; MODEL_US only with a disk
 * model, DIES and COLLISIONS only with a model that has dies, FAULT only
 * with the fault layer (each optional column is written
 * after those before it that are written).
 */
#define LOG_COLUMN_LIST(X)                                                            \
	X(TS_US, "ts_us")                                                             \
	X(OP, "op")                                                                   \
	X(PID, "pid")                                                                 \
	X(PATH, "path")                                                               \
	X(OFFSET, "offset")                                                           \
	X(SIZE, "size")                                                               \
	X(RESULT, "result")                                                           \
	X(LATENCY_US, "latency_us")                                                   \
	X(DEVICE_IO, "device_io")                                                     \
	X(MODEL_US, "model_us")                                                       \
	X(DIES, "dies")                                                               \
	X(COLLISIONS, "collisions")                                                   \
	X(FAULT, "fault")

enum log_column {
#define LOG_COLUMN_INDEX(n, s) LOG_COL_##n,
	LOG_COLUMN_LIST(LOG_COLUMN_INDEX)
#undef LOG_COLUMN_INDEX
	LOG_COLUMN_COUNT
};

/** The column names, indexed by enum log_column. */
static const char *const log_column_names[LOG_COLUMN_COUNT] = {
#define LOG_COLUMN_NAME(n, s) s,
	LOG_COLUMN_LIST(LOG_COLUMN_NAME)
#undef LOG_COLUMN_NAME
};

/** The header line without model_us (no newline): "ts_us,op,...,device_io". */
#define LOG_HEADER_BASE "ts_us,op,pid,path,offset,size,result,latency_us,device_io"

#endif
