/*
 * scatterfs configuration: the INI file (parsed with inih), command-line
 * SECTION.KEY=VALUE overrides, and [file "GLOB"] rules.
 *
 * Sections and keys are listed in conf/default.ini and scatterfs.ini(5).  Every
 * error is reported as one line naming the source (file and line, or
 * "option -o"), the section and key, and what is allowed.
 */
#ifndef SCATTERFS_CONFIG_H
#define SCATTERFS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "logschema.h" /* enum log_op */

enum pattern {
	PATTERN_CONTIGUOUS,
	PATTERN_SINGLE,
	PATTERN_INTERLEAVED,
	PATTERN_RANDOM,
	PATTERN_REVERSE,
};

enum zero_fill {
	ZERO_FILL_WRITE,     /* write zeros with pwrite */
	ZERO_FILL_FALLOCATE, /* FALLOC_FL_ZERO_RANGE on the backing */
	ZERO_FILL_NONE,      /* leave unwritten; still reads as zeros */
};

enum cache_mode {
	CACHE_NONE,   /* FOPEN_DIRECT_IO: the daemon sees every read() */
	CACHE_KERNEL, /* page cache and readahead */
};

enum disk_model_kind {
	DISK_NONE,
	DISK_HDD,
};

enum disk_rotation {
	ROTATION_PHASE,   /* from a virtual spindle angle */
	ROTATION_AVERAGE, /* half a revolution per positioning */
};

/**
 * [layout] keys. extent_size 0 means "auto" (Oracle AUTOALLOCATE sizes).
 *
 * gap and gap_max 0 mean "auto" too; config_finish() replaces them, in the
 * global values and in every rule whose pattern reads them (each with its
 * own extent_size; other rules keep the global value), by:
 * - gap_max: 64 x extent_size (64M when extent_size is auto, counted as
 *   its 1M step), at most the device size rounded down to the block size
 *   when the device size is known;
 * - gap: extent_size (1M when extent_size is auto), the seed's
 *   equi-fragmented layout where each gap is as large as an extent.
 * So after config_finish() a pattern never sees 0 there, and
 * `-o layout.pattern=random` or `=interleaved` works alone.
 */
struct layout_params {
	enum pattern pattern;
	uint64_t extent_size;  /* bytes; 0 = auto */
	uint64_t initial_size; /* single: bytes of the first extent */
	uint64_t gap;          /* interleaved: reserved bytes after each extent; 0 = auto */
	uint64_t gap_max;      /* random: largest jump in bytes; 0 = auto */
	double contiguous_ratio; /* random: probability of an adjacent extent, [0, 1] */
	uint64_t seed;         /* random */
};

/** [autoextend] keys. */
struct autoextend_params {
	uint64_t next;     /* bytes per growth event; 0 = one extent */
	uint64_t max_size; /* bytes; 0 = unlimited (the device) */
	enum zero_fill zero_fill;
	bool sparse; /* a write past the allocated end leaves a hole before it */
};

/** [cache] keys. */
struct cache_params {
	enum cache_mode mode;
	uint64_t readahead; /* bytes, <= 1 MiB */
};

/** The keys a file rule can set: [layout], [autoextend], [cache]. */
struct file_params {
	struct layout_params layout;
	struct autoextend_params autoextend;
	struct cache_params cache;
};

/** Default and largest [device] poll_us. */
#define DEVICE_POLL_US_DEFAULT 200
#define DEVICE_POLL_US_MAX 10000

/** Largest [disk] prefetch: read-ahead of at most this many times an I/O. */
#define DISK_PREFETCH_MAX 1000

/** [disk] keys: the disk timing model's parameters (see disk_model.h). */
struct disk_params {
	enum disk_model_kind model;
	double rpm;
	double seek_track_ms, seek_avg_ms, seek_full_ms;
	double transfer_outer_mib_s, transfer_inner_mib_s; /* equal when not zoned */
	uint64_t capacity; /* bytes; 0 = the backing device's size */
	enum disk_rotation rotation;
	double prefetch;       /* read-ahead after each I/O, in multiples of its length; 0 = off */
	uint64_t prefetch_max; /* bytes: the read-ahead never goes further than this */
};

/** One [file "GLOB"] section: the keys it set, over the global ones. */
struct file_rule {
	char *glob;            /* fnmatch(3) pattern, flags 0, on the path relative to the root */
	struct file_params params; /* effective values (global ones where not set) */
	unsigned line;         /* where the section starts */
};

struct sfs_config {
	struct {
		uint64_t size;       /* bytes; 0 = the backing's current size */
		uint32_t block_size; /* bytes, power of two in [512, 1M] */
		bool direct;         /* O_DIRECT on the backing */
		/*
		 * Microseconds a device read that is alone in flight on an
		 * O_DIRECT backing polls for its completion before the thread
		 * sleeps; 0 = it sleeps at once.  At most DEVICE_POLL_US_MAX.
		 */
		uint32_t poll_us;
		/*
		 * With direct: a read while other device reads are in flight
		 * (every one when poll_us is 0) is submitted with io_submit and
		 * answered by the completion thread, so the worker thread takes
		 * the next request at once.  Off under the disk model.
		 */
		bool async_reads;
		/*
		 * Bytes of the device config_finish() checked against: size when
		 * set, else the device_size it was given; 0 = not known.  Set by
		 * config_finish(); config_write_ini() writes it as size.
		 */
		uint64_t effective_size;
	} device;
	struct file_params defaults; /* [layout], [autoextend], [cache] */
	struct {
		char *path; /* NULL = no log */
		unsigned ops; /* LOG_* mask */
	} log;
	struct disk_params disk;
	struct file_rule *rules; /* in file order, then the built-in ones */
	size_t nrules;
	char *source; /* the INI file's path, or NULL */
	/*
	 * Private to config.c (added by the configuration module): which keys
	 * the file and the -o overrides set, and where, so that config_finish()
	 * can resolve rules after every override and name the line at fault.
	 * NULL until a file or override is applied.
	 */
	struct config_state *state;
};

/** config_init() - fills @c with the built-in defaults (see conf/default.ini). */
void config_init(struct sfs_config *c);

/**
 * config_load_file() - parses the INI file @path into @c (initialised with
 * config_init()).  Unknown sections or keys, malformed values, duplicated
 * sections or keys are errors.
 * @err/@errlen: receives one line naming file, line, section, key and what
 * is allowed.
 * @return 0, -EINVAL on a configuration error, -errno when the file cannot be read.
 */
int config_load_file(struct sfs_config *c, const char *path, char *err, size_t errlen);

/**
 * config_set() - applies one "SECTION.KEY=VALUE" override (command line).
 * List values use ':' instead of ','.  Only global sections are accepted.
 * @return 0, -EINVAL with @err set.
 */
int config_set(struct sfs_config *c, const char *assignment, char *err, size_t errlen);

/**
 * config_finish() - after the file and every override: validates values
 * against each other (conflicting keys, sizes not multiples of the block
 * size, a gap larger than the device, ...), resolves every rule's
 * inherited keys and appends the built-in rules.  @device_size is the
 * backing device's size in bytes (0 when not known yet).
 *
 * Also: records the device size in device.effective_size; resolves the
 * auto gap and gap_max (see struct layout_params); with a known device
 * size, refuses an extent_size (64K for auto: its first extent),
 * initial_size (single), autoextend.next, gap or gap_max larger than the
 * device, and for interleaved a first extent plus gap larger than it.
 * A key the pattern does not read (gap for contiguous, ...) is an error
 * when it was set in the same place as the pattern (one file section, or
 * both -o overrides) or in a later one; when the pattern was set in a
 * later place (an -o override over the file, a later file over an earlier
 * one) the key is ignored as if never written, and config_write_ini()
 * names it in a comment.  A 0 for initial_size, gap or gap_max means "not
 * set" (or auto) and never conflicts.  May be called again after more
 * overrides.
 * @return 0, -EINVAL with @err set, -ENOMEM.
 */
int config_finish(struct sfs_config *c, uint64_t device_size, char *err, size_t errlen);

/**
 * config_for_path() - the parameters for the file at @path (relative to
 * the mount root, no leading '/'): the first rule whose glob matches, else
 * the global ones.  Valid until config_free().
 */
const struct file_params *config_for_path(const struct sfs_config *c, const char *path);

/**
 * config_write_ini() - writes the effective configuration as INI text that
 * config_load_file() accepts back.  @return a malloc'd string, NULL on ENOMEM.
 */
char *config_write_ini(const struct sfs_config *c);

/** config_free() - frees everything @c owns. */
void config_free(struct sfs_config *c);

/** Names of enum values, as written in INI files. */
const char *pattern_name(enum pattern p);
const char *zero_fill_name(enum zero_fill z);
const char *cache_mode_name(enum cache_mode m);

#endif
