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

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "logschema.h" /* enum log_op */

struct placement_ops; /* placement.h */

/*
 * The built-in placement patterns (one file each, layout/pattern_*.c).  A
 * pattern is its struct placement_ops; patterns register themselves (see
 * PLACEMENT_REGISTER in placement.h), so nothing central lists them and
 * these names are only shorthands for callers that pick a built-in one.
 */
extern const struct placement_ops contiguous_ops, single_ops, interleaved_ops, random_ops,
	reverse_ops;
#define PATTERN_CONTIGUOUS (&contiguous_ops)
#define PATTERN_SINGLE (&single_ops)
#define PATTERN_INTERLEAVED (&interleaved_ops)
#define PATTERN_RANDOM (&random_ops)
#define PATTERN_REVERSE (&reverse_ops)

enum zero_fill {
	ZERO_FILL_WRITE,     /* write zeros with pwrite */
	ZERO_FILL_FALLOCATE, /* FALLOC_FL_ZERO_RANGE on the backing */
	ZERO_FILL_NONE,      /* leave unwritten; still reads as zeros */
};

/*
 * [device] async_reads: ASYNC_READS_OFF (false) every read waits for its
 * own device I/O in the thread that took it; ASYNC_READS_BUSY (true, the
 * default) a read is queued when other device reads are in flight or, on
 * /dev/fuse, requests wait for a thread (over the ring, with polling off,
 * every read: queueing costs the ring thread nothing); ASYNC_READS_ALWAYS
 * every read is queued.
 */
enum async_reads { ASYNC_READS_OFF, ASYNC_READS_BUSY, ASYNC_READS_ALWAYS };

enum cache_mode {
	CACHE_NONE,   /* FOPEN_DIRECT_IO: the daemon sees every read() */
	CACHE_KERNEL, /* page cache and readahead */
};

struct disk_model_ops; /* disk_model.h */

/*
 * Disk timing models register themselves (DISK_MODEL_REGISTER in
 * disk_model.h), so nothing here names one; [disk] model = none is NULL.
 */
#define DISK_NONE ((const struct disk_model_ops *)0)

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
/* Bytes of struct layout_params that patterns keep their own keys in. */
#define LAYOUT_PATTERN_DATA_MAX 64

struct layout_params {
	const struct placement_ops *pattern; /* registered; never NULL after config_init() */
	uint64_t extent_size;  /* bytes; 0 = auto */
	uint64_t initial_size; /* single: bytes of the first extent */
	uint64_t gap;          /* interleaved: reserved bytes after each extent; 0 = auto */
	uint64_t gap_max;      /* random: largest jump in bytes; 0 = auto */
	double contiguous_ratio; /* random: probability of an adjacent extent, [0, 1] */
	uint64_t seed;         /* random */
	/*
	 * The keys of patterns that keep them in their own struct (a new
	 * pattern needs no field here): each registered pattern with a
	 * data_size gets its own slice, placement_data() finds it.
	 */
	_Alignas(16) unsigned char pattern_data[LAYOUT_PATTERN_DATA_MAX];
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

/* [device "NAME"] sections a configuration may have (main is one more). */
#define CONFIG_MAX_DEVICES 15

/*
 * Characters of a configuration line, blanks at its ends not counted:
 * room for a value as long as a path (PATH_MAX, 4096 on Linux) with its
 * key and a comment.
 */
#define CONFIG_LINE_MAX (PATH_MAX + 256)

/* Bytes of a device name, its NUL included ([layout] device, [device "NAME"]). */
#define CONFIG_NAME_MAX 32

/** The keys a file rule can set: [layout], [autoextend], [cache]. */
struct file_params {
	/*
	 * [layout] device: the backing device that holds the file's extents,
	 * "main" (the command line's BACKING) or a [device "NAME"] section's.
	 */
	char device[CONFIG_NAME_MAX];
	struct layout_params layout;
	struct autoextend_params autoextend;
	struct cache_params cache;
};

/* Layers a device's stack may have ([device] layers), and their names' bytes. */
#define CONFIG_LAYERS_MAX 8

/* Bytes of a device's configuration that layers keep their own keys in. */
#define CONFIG_LAYER_DATA_MAX 64

/**
 * [device] layers: a device's stack, top first (fs/device.h).  Names are
 * checked against the registered layers (struct config_layer) when the
 * program has any (the daemon); programs without the device stack
 * (scatterfs-plan, layout's unit tests) check only their spelling.
 */
struct config_layers {
	unsigned n;
	char name[CONFIG_LAYERS_MAX][CONFIG_NAME_MAX];
};

/**
 * struct config_layer - what the configuration knows of a device layer:
 * the first members of the layer's registered table (struct dev_layer_type
 * in fs/device.h, registered in the linker section "sfs_layers"), so that
 * layout/ reads them without knowing the device stack.
 */
struct config_layer {
	const char *name; /* as [device] layers names it (struct registry_head) */
	int order;	  /* in lists: lower first; 0 = after those with one, by name */
	/* Its own keys ([device] section, home CONFIG_LAYER_DATA), @nkeys of them. */
	const struct config_key *keys;
	size_t nkeys;
	size_t data_size; /* bytes of the struct its keys live in (its slice of layer_data) */
	unsigned flags;	  /* CONFIG_LAYER_* */
	/*
	 * Optional: checks its keys' values in @data (its slice) for a device
	 * whose stack has it: 0, or -EINVAL with @why set (one line, without
	 * the file and line, which the caller adds).
	 */
	int (*check)(const void *data, char *why, size_t len);
};
/* The bottom of every stack: named last in [device] layers, and always there. */
#define CONFIG_LAYER_BOTTOM (1u << 0)
/* Runs the device's [disk] model: a device whose model is not none must have it. */
#define CONFIG_LAYER_DISK (1u << 1)

/**
 * Default and largest [device] poll_us.  Off by default: on the project's
 * virtual machine a spinning thread slowed the reads it waited for (fio's
 * 8 KiB reads at QD 1 about a quarter slower at 200 than at 0;
 * bench/README.md, "Polling off by default").
 */
#define DEVICE_POLL_US_DEFAULT 0
#define DEVICE_POLL_US_MAX 10000

/* Largest [disk] time_dilation. */
#define DISK_TIME_DILATION_MAX 1000

/* Bytes of struct disk_params that the disk models keep their own keys in. */
#define DISK_MODEL_DATA_MAX 512

/**
 * [disk] keys: the timing model of a device (see disk_model.h).  The keys
 * every model shares are fields here; each model's own keys are in its
 * own struct, its slice of model_data (disk_model_params()), which nobody
 * but the model reads.
 */
struct disk_params {
	const struct disk_model_ops *model; /* DISK_NONE (NULL) = no timing model */
	uint64_t capacity; /* bytes of the modelled disk; 0 = the backing device's size */
	/* One forced-unit-access metadata write per new extent (fs/device.h). */
	bool metadata_io;
	uint64_t metadata_offset; /* device offset of that write */
	/* Each registered model with keys has its own 16-byte aligned slice. */
	_Alignas(16) unsigned char model_data[DISK_MODEL_DATA_MAX];
};

/*
 * One [device "NAME"] section: a backing device besides main.  Its keys
 * start from the built-in defaults (not from [device] and [disk], which
 * are main's); keys of the [device] and [disk] sections' tables set the
 * fields below through the key rows (struct key_entry's dev_offset).
 */
struct device_conf {
	char name[CONFIG_NAME_MAX]; /* [A-Za-z0-9_-], not "main" */
	char *backing;		    /* absolute, or relative to the working directory (malloc'd) */
	uint64_t size;		    /* bytes; 0 = the backing's current size */
	uint32_t block_size;	    /* bytes, power of two in [512, 1M] */
	bool direct;		    /* O_DIRECT on the backing */
	struct disk_params disk;    /* the device's own timing model */
	struct config_layers layers; /* its stack ([device] layers) */
	/* The layers' own keys: each registered layer's slice (config_layer_data()). */
	_Alignas(16) unsigned char layer_data[CONFIG_LAYER_DATA_MAX];
	/*
	 * Bytes of the backing, for config_finish()'s checks of the rules on
	 * this device: set by the caller once the backing is open (size when
	 * set); 0 = not known.
	 */
	uint64_t effective_size;
	const char *file; /* where the section was first declared (the state's copy) */
	unsigned line;
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
		 * With direct: which reads are submitted with io_submit and
		 * answered by the completion thread (or a ring thread's own
		 * io_uring), so the worker takes the next request at once:
		 * enum async_reads.  Off under the disk model.
		 */
		enum async_reads async_reads;
		struct config_layers layers; /* the stack, top first */
		/* The layers' own keys: each registered layer's slice (config_layer_data()). */
		_Alignas(16) unsigned char layer_data[CONFIG_LAYER_DATA_MAX];
		/*
		 * Bytes of the device config_finish() checked against: size when
		 * set, else the device_size it was given; 0 = not known.  Set by
		 * config_finish(); config_write_ini() writes it as size.
		 */
		uint64_t effective_size;
	} device;
	struct file_params defaults; /* [layout], [autoextend], [cache] */
	/*
	 * [cache] writeback: mount-wide (the kernel takes it per connection),
	 * so no [file] rule's; effective only where config_writeback() says.
	 */
	bool cache_writeback;
	struct {
		char *path; /* NULL = no log */
		unsigned ops; /* LOG_* mask */
	} log;
	struct disk_params disk;
	/*
	 * [disk] time_dilation: every disk model's modelled times take this
	 * many times as long on the clock (1 .. DISK_TIME_DILATION_MAX);
	 * mount-wide, one clock for every device (fs/dev_timing.c).
	 */
	uint32_t time_dilation;
	struct file_rule *rules; /* in file order, then the built-in ones */
	size_t nrules;
	struct device_conf *devices; /* [device "NAME"] sections, in the order declared */
	size_t ndevices;
	/*
	 * [fault "NAME"] sections, in the order read, as written: the fault
	 * layer (fs/fault.c) owns their keys and checks them at mount, naming
	 * the file and line kept here.
	 */
	struct config_fault *faults;
	size_t nfaults;
	char *source; /* the INI file's path, or NULL */
	/*
	 * Private to the configuration module (config_i.h): which keys
	 * the file and the -o overrides set, and where, so that config_finish()
	 * can resolve rules after every override and name the line at fault.
	 * NULL until a file or override is applied.
	 */
	struct config_state *state;
};

/** One key = value line of a [fault "NAME"] section. */
struct config_fault_kv {
	char *key, *value;
	unsigned line;
};

/** A [fault "NAME"] section: its keys, unchecked (the fault layer's). */
struct config_fault {
	char *name;
	const char *file; /* where it was written (the configuration's copy of the path) */
	unsigned line;    /* of its header */
	struct config_fault_kv *kv;
	size_t nkv;
};

/** config_init() - fills @c with the built-in defaults (see conf/default.ini). */
void config_init(struct sfs_config *c);

/**
 * config_load_file() - parses the INI file @path into @c (initialised with
 * config_init()).  Unknown sections or keys, malformed values, duplicated
 * sections or keys are errors.
 *
 * May be called once per file, in order: each file's keys override the
 * earlier files' one by one, and the keys it does not write keep their
 * values.  A [file "GLOB"] section whose glob an earlier file declared
 * adds to that rule the same way (the rule keeps its place among the
 * rules, where it was first declared).  An "include = FILE" line, in or
 * outside a section, loads FILE there (relative to the directory of the
 * file that names it, unless absolute), with its own sections: the keys
 * after the line override it, the keys before it are overridden.  A
 * duplicated section or key is an error only within one file.
 * @err/@errlen: receives one line naming file, line, section, key and what
 * is allowed; for an include = FILE that cannot be read or is already
 * being read (a cycle), the file and line of the include = line.
 * @return 0, -EINVAL on a configuration error, -errno when a file cannot be read.
 */
int config_load_file(struct sfs_config *c, const char *path, char *err, size_t errlen);

/**
 * config_set() - applies one "SECTION.KEY=VALUE" override (command line).
 * List values use ':' instead of ','.  Only global sections are accepted.
 * An override ranks above every file, whenever it is applied.
 * @return 0, -EINVAL with @err set.
 */
int config_set(struct sfs_config *c, const char *assignment, char *err, size_t errlen);

/**
 * config_set_option() - config_set() of @assignment for an option the user
 * wrote as @option (-o size=1G is "device.size=1G"): messages and
 * config_write_ini() name @option.
 * @return 0, -EINVAL with @err set.
 */
int config_set_option(struct sfs_config *c, const char *assignment, const char *option, char *err,
		      size_t errlen);

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
 * config_drop_builtin_rules() - removes the rules config_finish() added by
 * itself (today the "*-shm" rule giving SQLite's memory-mapped WAL index
 * cache.mode = kernel), for a mount where the kernel maps direct-I/O files
 * shared.  Rules of the configuration stay where they are, so pointers to
 * their params stay valid.
 */
void config_drop_builtin_rules(struct sfs_config *c);

/**
 * config_writeback() - whether the mount asks the kernel for its
 * write-back cache (FUSE_CAP_WRITEBACK_CACHE): cache.writeback is true and
 * every file is in kernel mode ([cache] mode and every rule's, the
 * built-in ones included: call it after config_drop_builtin_rules() where
 * that applies).  The kernel takes the cache per connection and then
 * keeps every regular file's size, mtime and ctime itself, which a
 * direct-I/O (cache.mode = none) file's writes would leave stale.
 * @why/@len (may be NULL/0): when cache.writeback is true but a file the
 * configuration puts in kernel mode shares the mount with one in none
 * mode, receives one line saying the cache is off and why; else "".
 * @return true when the mount gets the write-back cache.
 */
bool config_writeback(const struct sfs_config *c, char *why, size_t len);

/**
 * config_for_path() - the parameters for the file at @path (relative to
 * the mount root, no leading '/'): the first rule whose glob matches, else
 * the global ones.  Valid until config_free().
 */
const struct file_params *config_for_path(const struct sfs_config *c, const char *path);

/**
 * config_write_ini() - writes the effective configuration as INI text that
 * config_load_file() accepts back.  Every file read is named at the top
 * ("# loaded from FILE", with "(include = at FILE:LINE)" when included),
 * and a comment line above each key that a file or an option wrote says
 * where: "# set at FILE:LINE" or "# set by -o OPTION" (a key without one
 * has its built-in default, or in a rule the global value).
 * @return a malloc'd string, NULL on ENOMEM.
 */
char *config_write_ini(const struct sfs_config *c);

/**
 * config_write_ini_faults() - config_write_ini(), whose text ends with the
 * [fault "NAME"] sections as the files wrote them; with @faults false
 * without them (.scatterfs/config writes the mount's rules as they stand
 * instead, fault_set_write_ini()).  A key of a device layer that the
 * device's stack does not have is written as a comment.
 * @return a malloc'd string, NULL on ENOMEM.
 */
char *config_write_ini_faults(const struct sfs_config *c, bool faults);

/** config_free() - frees everything @c owns. */
void config_free(struct sfs_config *c);

/**
 * config_device_index() - which device @name is: 0 for "main", 1 + its
 * index in c->devices for a [device "NAME"] section; -ENOENT when none.
 */
int config_device_index(const struct sfs_config *c, const char *name);

/** config_layer_count() - registered device layers (0 in a program without the stack). */
size_t config_layer_count(void);
/** config_layer_at() - the @i-th registered layer in list order, NULL past the end. */
const struct config_layer *config_layer_at(size_t i);
/** config_layer_find() - the registered layer named @name (case-insensitive), or NULL. */
const struct config_layer *config_layer_find(const char *name);
/**
 * config_layer_data() - @l's slice of @layer_data (a device's: sfs_config
 * device.layer_data or struct device_conf's), where its keys' values are.
 */
const void *config_layer_data(const struct config_layer *l, const unsigned char *layer_data);

/** Names of enum values, as written in INI files ("?" for none). */
const char *pattern_name(const struct placement_ops *p);
const char *zero_fill_name(enum zero_fill z);
const char *cache_mode_name(enum cache_mode m);

/* ---- the key table ---- */

/** What a key's value is, and so how it is parsed, checked and written. */
enum config_type {
	CONFIG_SIZE,	/* uint64_t bytes, K/M/G/T suffixes */
	CONFIG_SIZE32,	/* uint32_t bytes, as CONFIG_SIZE */
	CONFIG_U32,	/* uint32_t, decimal or 0x hexadecimal */
	CONFIG_U64,	/* uint64_t, decimal or 0x hexadecimal */
	CONFIG_BOOL,	/* bool: true/false, yes/no, on/off, 1/0 */
	CONFIG_DOUBLE,	/* double, plain decimal (no inf, nan or hexadecimal) */
	CONFIG_ENUM,	/* an enum (unsigned int), one of names[] */
	CONFIG_PATTERN, /* const struct placement_ops *, a registered pattern's name */
	CONFIG_MODEL,	/* const struct disk_model_ops *, "none" (NULL) or a registered model's name */
	CONFIG_PATH,	/* char * (malloc'd), no control characters; NULL = unset */
	CONFIG_NAME,	/* char[CONFIG_NAME_MAX]: 1 to 31 of [A-Za-z0-9_-] */
	CONFIG_CUSTOM,	/* parse() and format() of the row */
};

/** Where a key's offset points. */
enum config_home {
	CONFIG_GLOBAL,	    /* into struct sfs_config: a global key */
	CONFIG_FILE_PARAMS, /* into struct file_params: a key [file] rules can set */
	CONFIG_PATTERN_DATA, /* into its pattern's slice of layout_params.pattern_data */
	CONFIG_MODEL_DATA,   /* into its disk model's slice of disk_params.model_data */
	CONFIG_LAYER_DATA    /* into its layer's slice of the device's layer_data (global) */
};

/* Flags of a key row. */
#define CONFIG_MIN_OPEN (1u << 0)	/* the minimum itself is refused (> min) */
#define CONFIG_HAS_MAX (1u << 1)	/* max applies */
#define CONFIG_HAS_MIN (1u << 2)	/* min applies (numbers and sizes) */
#define CONFIG_POWER_OF_TWO (1u << 3)	/* sizes: a power of two */
#define CONFIG_AUTO (1u << 4)		/* sizes: "auto" is accepted and stored as 0 */
#define CONFIG_WHY_ALL (1u << 5)	/* range_why also for a value that does not parse */
#define CONFIG_BLOCK_MULTIPLE (1u << 6) /* sizes: a multiple of [device] block_size */
#define CONFIG_WITHIN_DEVICE (1u << 7)	/* sizes: at most the device size */
#define CONFIG_ZERO_UNSET (1u << 8)	/* 0 means "not set" or auto: never a conflict */

struct config_key;

/**
 * struct config_key - one configuration key, declared once: parsing,
 * range checks, defaults (config_init()), inheritance by [file] rules,
 * config_write_ini(), the "allowed" lists of messages and --help all walk
 * these rows.  In the manner of fio's option table (struct fio_option).
 *
 * Rows live in a table of the module that owns the keys: the core table
 * (config_keys.c), a placement pattern's keys[] (struct placement_ops) or
 * a disk model's (struct disk_model_ops).
 */
struct config_key {
	const char *section; /* "device", "layout", "autoextend", "cache", "log", "disk" */
	const char *name;
	enum config_type type;
	enum config_home home;
	size_t offset;	   /* of the value, in the struct @home names */
	unsigned flags;	   /* CONFIG_* above */
	double min, max;   /* inclusive range (see flags); sizes and integers compare exactly */
	uint64_t multiple; /* sizes: a multiple of this many bytes; 0 = any */
	/* The message for a value out of range (NULL = a generic one). */
	const char *range_why;
	const char *const *names; /* CONFIG_ENUM: value names, NULL-terminated */
	const char *def;	  /* default as written in INI (',' in lists); NULL = unset */
	const char *help;	  /* one line for --help and scatterfs.ini(5) */
	/*
	 * CONFIG_CUSTOM: parses @value (list items separated by @sep) into
	 * @field; returns 0, -EINVAL with @why set, or -ENOMEM.
	 */
	int (*parse)(void *field, const char *value, char sep, char *why, size_t len);
	/* CONFIG_CUSTOM: writes @field as INI text (list items separated by ','). */
	void (*format)(const void *field, char *buf, size_t len);
	/*
	 * CONFIG_ZERO_UNSET sizes that mean "auto": the value config_finish()
	 * gives a 0, from the scope's other keys and the @device size in
	 * bytes (0 = not known).
	 */
	uint64_t (*resolve_auto)(const struct layout_params *l, uint64_t device,
				 uint32_t block_size);
};

/** config_key_count() - the number of keys (every table, every registered pattern). */
size_t config_key_count(void);

/**
 * config_key_at() - key @i (< config_key_count()), in the order of
 * config_write_ini(): by section, the core table's keys first, then each
 * pattern's (in placement_at() order), then each disk model's.
 * @pattern: receives the pattern that alone reads the key, or NULL when
 *           every pattern does; may be NULL.
 */
const struct config_key *config_key_at(size_t i, const struct placement_ops **pattern);

/**
 * config_write_help() - writes every key to @f, one line each:
 * "    SECTION.KEY=VALUE  help (default D)", for --help.
 */
void config_write_help(FILE *f);

#endif
