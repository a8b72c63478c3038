/*
 * Fault rules: what the fault layer breaks, and when.
 *
 * A rule is a target x a trigger x an effect:
 *
 *   target   op = read | write | flush | trim | any (a list joined by ','
 *            or, in a -o option, ':'); and either file = GLOB (fnmatch(3),
 *            flags 0, on the path relative to the mount root, any length),
 *            with an optional logical range = OFFSET+LENGTH, or
 *            device = NAME with an optional device range = OFFSET+LENGTH
 *   trigger  after = N (the first N matching operations pass), count = N
 *            (it fires at most N times; 0 = no limit), probability = P
 *            (0 < P <= 1) with seed = S: each matching operation past
 *            after draws one splitmix64 value from the rule's own state,
 *            so a run with the same operations fires at the same ones
 *   effect   error = ENAME (the operation fails with it), delay_ms = N,
 *            corrupt = bitflip (one bit of the data read or written),
 *            torn (a write keeps only a prefix cut at a sector_size
 *            boundary), flush = ignore | linux | keep-dirty
 *
 * The rules of a mount form one set (struct fault_set), in the order they
 * were added: the [fault "NAME"] sections in file order, then the control
 * channel's `fault add`.  For each device I/O the set is asked once
 * (fault_set_match()): every rule whose target matches counts the
 * operation; the first of them that fires decides the effect, and the
 * rules after it do not fire (nor draw) for that operation.  The set is
 * guarded by one mutex, and an empty set costs one atomic load.
 *
 * This module knows no device stack and no FUSE: the fault layer
 * describes each device I/O as a struct fault_io and applies the struct
 * fault_hit it gets back, so the rules are unit-tested alone
 * (tests/test_fault.c).
 */
#ifndef SCATTERFS_FAULT_H
#define SCATTERFS_FAULT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** Operations a rule targets: one bit each. */
enum fault_op {
	FAULT_READ = 1u << 0,
	FAULT_WRITE = 1u << 1,
	FAULT_FLUSH = 1u << 2,
	FAULT_TRIM = 1u << 3,
	FAULT_ANY = (1u << 4) - 1,
};

/** What a failed or faked flush does (flush = ...). */
enum fault_flush {
	FAULT_FLUSH_NONE = 0,
	/* reports success and makes nothing durable */
	FAULT_FLUSH_IGNORE,
	/*
	 * Linux write-back error semantics (fsyncgate): the flush fails once
	 * with the rule's error; what it should have made durable is
	 * forgotten (never made durable: dev_volatile_forget()), and the next
	 * matching flush passes without firing (and without counting towards
	 * after or drawing); the one after may fire again
	 */
	FAULT_FLUSH_LINUX,
	/* fails with the rule's error, and so does every later flush of the device */
	FAULT_FLUSH_KEEP_DIRTY,
};

/** Longest rule name, with its NUL. */
#define FAULT_NAME_MAX 64

/** The default sector size of torn writes, bytes. */
#define FAULT_SECTOR_DEFAULT 512u

/** One rule: its keys, then its state. */
struct fault_rule {
	char name[FAULT_NAME_MAX]; /* [A-Za-z0-9_.-], at most 63 characters */
	/* target */
	unsigned ops;	    /* enum fault_op bits; default FAULT_ANY */
	char *file;	    /* glob; NULL = any file (malloc'd) */
	char *device;	    /* device name; NULL = any device (malloc'd) */
	bool has_range;	    /* range given: logical with file, else device offsets */
	uint64_t range_off; /* bytes */
	uint64_t range_len; /* bytes, > 0 */
	/* trigger */
	uint64_t after;	    /* matching operations let through first */
	uint64_t count;	    /* fires at most this often; 0 = no limit */
	double probability; /* of firing on a matching operation past @after; default 1 */
	uint64_t seed;	    /* of the rule's splitmix64 state */
	/* effect */
	int error;	      /* positive errno; 0 = none */
	uint32_t delay_ms;    /* added to the operation's completion */
	bool bitflip;	      /* corrupt = bitflip */
	bool torn;	      /* keep a prefix of a write */
	uint32_t sector_size; /* torn writes are cut at multiples of it (device offsets), bytes */
	enum fault_flush flush;
	/* state, under the set's lock */
	uint64_t rng;	   /* splitmix64 state, starts at @seed */
	uint64_t matched;  /* operations whose target matched */
	uint64_t fired;	   /* of them, the ones it broke */
	bool stuck;	   /* keep-dirty: it fired once, every later flush fails */
	bool pass_next;	   /* linux: it fired; the next matching flush passes without firing */
	unsigned seen_ops; /* which keys were written: see fault_rule_set() */
	const char *blame; /* the key fault_rule_check() refused, or NULL (the section) */
	const char *file_name; /* the configuration file of its section (not owned), or NULL */
	unsigned line;	   /* where its section began in @file_name (0: the control channel) */
};

/** One device I/O as the fault layer sees it. */
struct fault_io {
	unsigned op;	      /* one enum fault_op bit */
	const char *device;   /* the device's name ("main" for BACKING) */
	uint64_t dev_off;     /* device offset, bytes */
	uint64_t len;	      /* bytes (0 for a flush) */
	const char *path;     /* the file, relative to the mount root; NULL = unknown */
	bool has_logical;     /* @logical_off is known */
	uint64_t logical_off; /* the file's offset of @dev_off */
};

/** What a fired rule does to one I/O. */
struct fault_hit {
	char rule[FAULT_NAME_MAX]; /* the rule's name, for the log's fault column */
	int error;		   /* -errno to return, 0 = report success */
	uint32_t delay_ms;
	bool bitflip;
	uint64_t bit; /* the bit to flip: byte bit / 8 of the I/O's buffer, 1 << (bit % 8) */
	bool torn;
	uint64_t torn_len;	/* bytes of the write to keep: a prefix */
	enum fault_flush flush; /* a flush's effect, FAULT_FLUSH_NONE otherwise */
	/* the part of the I/O the target covers: device offsets [hit_off, hit_off + hit_len) */
	uint64_t hit_off, hit_len;
};

/** The rules of a mount. */
struct fault_set {
	pthread_mutex_t lock;
	struct fault_rule **v;	    /* under lock, in the order added */
	size_t n, cap;		    /* under lock */
	atomic_size_t nrules;	    /* n, read without the lock by the fast path */
	const char *const *devices; /* names a device = key may take (not owned) */
	size_t ndevices;
	uint64_t layer_mask; /* bit i: device i has the fault layer (fault_set_layer()) */
	uint64_t sizes[64];  /* bytes of device i (fault_set_size()); 0 = not known */
};

/**
 * fault_set_init() - an empty set whose rules may name the @ndevices
 * devices of @devices (the array must outlive the set; NULL/0: any name).
 */
void fault_set_init(struct fault_set *s, const char *const *devices, size_t ndevices);

/** fault_set_release() - frees every rule. */
void fault_set_release(struct fault_set *s);

/** fault_set_empty() - whether the set has no rule (lock-free: the hot path's test). */
static inline bool fault_set_empty(struct fault_set *s)
{
	return atomic_load_explicit(&s->nrules, memory_order_acquire) == 0;
}

/**
 * fault_rule_new() - a rule named @name with the defaults (op = any,
 * probability 1, sector_size 512, no effect yet).
 * @return the rule, or NULL with @err set (a bad name: "fault name 'x':
 * use letters, digits, '_', '.' and '-', at most 63"; or out of memory).
 */
struct fault_rule *fault_rule_new(const char *name, char *err, size_t errlen);

/** fault_rule_free() - frees @r (NULL is fine). */
void fault_rule_free(struct fault_rule *r);

/**
 * fault_rule_set() - sets key @key of @r to @value (the text after '=').
 * Keys: op, file, range, device, after, count, probability, seed, error,
 * delay_ms, corrupt, torn, sector_size, flush.
 * @return 0, or -EINVAL with one phrase in @err naming the key, the value
 * and what is allowed ("key 'error': 'EIOO' is not an errno name (such as
 * EIO, ENOSPC, EROFS)"), "unknown key 'x'; allowed: ..." for an unknown
 * key, "key 'x' given twice" for a repeated one.
 */
int fault_rule_set(struct fault_rule *r, const char *key, const char *value, char *err,
		   size_t errlen);

/**
 * fault_rule_check() - whether @r is complete and consistent once all its
 * keys are set: it has an effect; range goes with file or device, and
 * file and device are not both given; flush = only with op = flush and no
 * other effect but delay_ms; corrupt only for reads and writes, torn only
 * for writes, sector_size only with torn; error with flush = ignore is
 * refused (ignore reports success).  On an error, @r->blame names the key
 * at fault (fault_set_load() cites its line).
 * Fills in the defaults that depend on other keys (flush = linux or
 * keep-dirty without error: EIO).
 * @return 0, or -EINVAL with one phrase in @err.
 */
int fault_rule_check(struct fault_rule *r, char *err, size_t errlen);

/**
 * fault_set_add() - adds checked rule @r at the end of @s, which owns it
 * from then on.  @return 0; -EEXIST ("a fault named 'x' exists") or
 * -EINVAL (device = names no device of the mount: "key 'device': no
 * device 'x'; the mount's: main, ...") with @err set, and @r freed.
 */
int fault_set_add(struct fault_set *s, struct fault_rule *r, char *err, size_t errlen);

/** fault_set_del() - removes and frees the rule named @name.  @return 0 or -ENOENT. */
int fault_set_del(struct fault_set *s, const char *name);

/**
 * fault_set_list() - writes one line per rule to @out, in order: the rule
 * as a `fault add` command would give it (keys in a fixed order, only
 * those that differ from the defaults; a value with a space, a '"' or a
 * '\' in double quotes with '\' escapes), then " matched=M fired=F".
 */
void fault_set_list(struct fault_set *s, FILE *out);

/**
 * fault_set_write_ini() - writes each rule of @s, in order, as a
 * [fault "NAME"] section that loads back to the same rule (its keys as
 * fault_set_list() gives them, one "KEY = VALUE" line each), below a
 * comment saying where it came from (the configuration's line, or
 * .scatterfs/control) and its matched and fired counts: a rule loaded
 * back starts counting anew.  Each section begins with an empty line.  A
 * rule whose file or device value an INI line cannot hold (a blank at
 * an end, a ';' after a blank: only `fault add` can give one) is written
 * as a comment instead, with its `fault add` command.
 */
void fault_set_write_ini(struct fault_set *s, FILE *out);

/**
 * fault_set_match() - asks the rules about one device I/O: every rule
 * whose target covers @io counts it; the first that fires (in the order
 * added) fills @hit and counts the firing.  A file target needs @io->path
 * (and @io->has_logical when it has a range); a device range overlaps the
 * I/O's device range; a flush (len 0) matches a range target never.
 * @return true when a rule fired.
 */
bool fault_set_match(struct fault_set *s, const struct fault_io *io, struct fault_hit *hit);

struct config_fault; /* layout/config.h */
struct device;	     /* device.h */

/**
 * fault_layer_on() - whether @d's stack has the fault layer ([device]
 * layers names faults); dev_fault.c's.
 */
bool fault_layer_on(const struct device *d);

/**
 * fault_set_layer() - says whether device @i (of the names given to
 * fault_set_init()) has the fault layer in its stack; fault_set_init()
 * assumes every one has.  A rule is refused when no device it can match
 * has the layer: it could never fire.
 */
void fault_set_layer(struct fault_set *s, size_t i, bool on);

/**
 * fault_set_size() - says that device @i is @bytes long: a rule whose
 * device range ends past it is refused (it names bytes no I/O reaches).
 */
void fault_set_size(struct fault_set *s, size_t i, uint64_t bytes);

/**
 * fault_set_load() - adds the rules of the @n [fault "NAME"] sections of
 * @f, in order, to @s.  @return 0, or -EINVAL / -EEXIST / -ENOMEM with
 * one line in @err naming the file and line, the section and what was
 * wrong ("conf.ini:12: [fault \"x\"] key 'error': 'EIOO' is not valid;
 * allowed: ..."); the rules added before it stay (the mount is refused).
 */
int fault_set_load(struct fault_set *s, const struct config_fault *f, size_t n, char *err,
		   size_t errlen);

/**
 * fault_command() - runs one fault control command, @line without its
 * newline: `fault add NAME KEY=VALUE...`, `fault del NAME`, `fault list`.
 * Writes the reply to @out: the list's lines, then "ok\n"; or one line
 * "error: ...\n", and then the set is as it was.  Values may be quoted
 * with '"' ('\' escapes the next character), so a glob may hold spaces.
 * @return 0 (a fault command, answered), 1 (not a fault command: @out
 * untouched).
 */
int fault_command(struct fault_set *s, const char *line, FILE *out);

/**
 * fault_errno_parse() - the errno called @name ("EIO"), as strerrorname_np(3)
 * spells it.  @return the positive value, or 0 when no errno has that name.
 */
int fault_errno_parse(const char *name);

/**
 * fault_split_words() - splits @line into words at blanks; a word may be
 * quoted with '"' in whole or in part (key="a b"), and '\' takes the next
 * character literally.  @return the number of words put in @w (malloc'd
 * strings, at most @max), or -EINVAL with @err set ("unterminated quote",
 * "too many words"), -ENOMEM.
 */
int fault_split_words(const char *line, char **w, size_t max, char *err, size_t errlen);

/** The keys of a [fault "NAME"] section, ", "-joined, for messages. */
extern const char fault_keys_allowed[];

#endif
