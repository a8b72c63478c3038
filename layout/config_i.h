/*
 * Internals of the configuration module (config_*.c) and what placement
 * patterns need to check their own keys.  Not for callers outside layout/
 * and pattern files: the public interface is config.h.
 *
 * Keys are numbered at start-up: the core table and every registered
 * pattern's and disk model's keys[] are merged into one list ordered by
 * section (the core keys of a section first, then each pattern's, then
 * each model's, in their lists' order).  A key's number is its index in
 * that list; sets of keys are bit masks of them (config_keyset, 128 bits:
 * every model brings a dozen keys), so there can be at most
 * CONFIG_MAX_KEYS keys in all.
 */
#ifndef SCATTERFS_CONFIG_I_H
#define SCATTERFS_CONFIG_I_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "placement.h"

enum section {
	SEC_NONE = -1,
	SEC_DEVICE,
	SEC_LAYOUT,
	SEC_AUTOEXTEND,
	SEC_CACHE,
	SEC_LOG,
	SEC_DISK,
	SEC_FILE,
	SEC_NAMED_DEVICE, /* [device "NAME"] */
	SEC_FAULT,        /* [fault "NAME"]: keys kept as written (struct config_fault) */
};
#define NGLOBAL_SECTIONS SEC_FILE

/* config_text.c: the global sections' names, by enum section. */
extern const char *const config_section_names[];

/* Sets of keys are bit masks (GCC's and Clang's 128-bit integer). */
typedef unsigned __int128 config_keyset;
#define CONFIG_MAX_KEYS 128
#define BIT(k)		((config_keyset)1 << (k))

/* The keys of the core table that config_finish() refers to by name. */
enum core_key {
	CK_DEVICE_SIZE,
	CK_BLOCK_SIZE,
	CK_DIRECT,
	CK_POLL_US,
	CK_ASYNC_READS,
	CK_PATTERN,
	CK_EXTENT_SIZE,
	CK_LAYOUT_DEVICE,
	CK_NEXT,
	CK_MAX_SIZE,
	CK_ZERO_FILL,
	CK_SPARSE,
	CK_CACHE_MODE,
	CK_READAHEAD,
	CK_WRITEBACK,
	CK_LOG_PATH,
	CK_LOG_OPS,
	/* [disk]: the keys every model shares, then model = (whose keys follow it) */
	CK_DISK_CAPACITY,
	CK_METADATA_IO,
	CK_METADATA_OFFSET,
	CK_TIME_DILATION,
	CK_DISK_MODEL,
	CK_LAYERS,
	CK__COUNT,
};

/* One key of the merged list. */
struct key_entry {
	const struct config_key *row;
	const struct placement_ops *pattern; /* the only pattern that reads it; NULL = every */
	const struct disk_model_ops *model;  /* the disk model whose key it is; NULL = core */
	const struct config_layer *layer;    /* the device layer whose key it is; NULL = core */
	enum section sec;
	size_t offset; /* into struct sfs_config (CONFIG_GLOBAL) or struct file_params */
	/*
	 * Into struct device_conf, for the keys a [device "NAME"] section
	 * can set: size, block_size, direct, and every [disk] key (a disk
	 * model's row points into sfs_config.disk, and so has the same place
	 * in a device's own struct disk_params); NO_DEV_OFFSET for the others.
	 */
	size_t dev_offset;
};
#define NO_DEV_OFFSET ((size_t)-1)

/* Whether a key of home @h is a global one (its offset into struct sfs_config). */
static inline bool config_home_global(enum config_home h)
{
	return h == CONFIG_GLOBAL || h == CONFIG_MODEL_DATA || h == CONFIG_LAYER_DATA;
}

/*
 * config_text.c: the words of a configuration, which know nothing of the
 * key table (every other config_*.c file may call them).
 */
/* "a, b, c": the NULL-terminated @names. */
void config_join_names(const char *const *names, char *buf, size_t len);
/* @names[@v], or "?" past the end. */
const char *config_name_of(const char *const *names, unsigned v);
/* 0 with *@out the index of @s in @names (case-insensitive), or -EINVAL. */
int config_parse_enum(const char *s, const char *const *names, unsigned *out);

/* true, yes, on, 1 / false, no, off, 0 (any case) into *@out: 0, or -EINVAL. */
int config_parse_bool(const char *s, bool *out);
/* A finite decimal number (no inf, nan, hexadecimal): 0, or -EINVAL. */
int config_parse_double(const char *s, double *out);
/* The next item of a @sep-separated list at *@s, blanks trimmed; advances *@s. */
void config_next_item(const char **s, char sep, char *buf, size_t len);
/* @v as a plain decimal when one reads back exactly, else %.17g. */
void config_format_double(double v, char *buf, size_t len);
/* 0 when @value is a valid device name, else -EINVAL with @why set. */
int config_check_name(const char *value, char *why, size_t len);
/* Control characters (a newline in an -o value or a path) become '?'. */
void config_one_line(char *s);
/* snprintf() into @err, then config_one_line(); nothing when @err is NULL. */
__attribute__((format(printf, 3, 4))) void config_seterr(char *err, size_t errlen, const char *fmt,
							 ...);
/* "[layout]" or "[file "GLOB"]" */
const char *config_section_label(enum section sec, const char *glob, char *buf, size_t len);

/* config_layers.c */
/* Where @l's slice starts in a device's layer_data (by list order, 16-byte aligned). */
size_t config_layer_data_offset(const struct config_layer *l);
/* "accounting, timing, base": every registered layer. */
void config_layer_names(char *buf, size_t len);
/* [device] layers: parse() and format() of its row. */
int config_parse_layers(void *field, const char *value, char sep, char *why, size_t len);
void config_format_layers(const void *field, char *buf, size_t len);
/* Whether the stack @l names layer @name. */
bool config_layers_have(const struct config_layers *l, const char *name);

/* config_keys.c */
size_t config_nkeys(void);
const struct key_entry *config_key(unsigned k);
/* The number of core key @ck in the merged list. */
unsigned config_core_id(enum core_key ck);
/* The number of the key @row (from any table); config_nkeys() when unknown. */
unsigned config_key_id(const struct config_key *row);
/* The key named @name in @sec (in [file] sections also "cache.mode" and the like). */
unsigned config_find_key(enum section sec, const char *name);
/*
 * The next key after @k with the same section and name, of another disk
 * model (each model's keys are its own, so two may share a name);
 * config_nkeys() when none is, or when @k is no model's.
 */
unsigned config_twin(unsigned k);
/* Of @k and its twins, the key of @model; config_nkeys() when @model has none of that name. */
unsigned config_model_key(unsigned k, const struct disk_model_ops *model);
/*
 * "capacity, ..., model, rpm, ...": the [disk] keys with @model chosen (NULL:
 * none); of a [device "NAME"] section (@named_device: no mount-wide key).
 */
void config_disk_keys(const struct disk_model_ops *model, bool named_device, char *buf, size_t len);
/* Whether key @k may be set by a [file] rule. */
bool config_rule_key(unsigned k);
/*
 * "a, b, c": the keys of @sec (for [file], every rule key); of the disk
 * models' keys, those of @model only (NULL: none).
 */
void config_allowed_keys(enum section sec, const struct disk_model_ops *model, char *buf,
			 size_t len);
/* "none, hdd, ...": none and every registered disk model. */
void config_model_names(char *buf, size_t len);
/* "contiguous, single, ...": every registered pattern. */
void config_pattern_names(char *buf, size_t len);

#define K_DEVICE_SIZE config_core_id(CK_DEVICE_SIZE)
#define K_BLOCK_SIZE  config_core_id(CK_BLOCK_SIZE)
#define K_PATTERN     config_core_id(CK_PATTERN)
#define K_EXTENT_SIZE config_core_id(CK_EXTENT_SIZE)
#define K_MAX_SIZE    config_core_id(CK_MAX_SIZE)
#define K_CACHE_MODE  config_core_id(CK_CACHE_MODE)
#define K_LOG_OPS     config_core_id(CK_LOG_OPS)

/* config_values.c */
/* Parses @value for key @k into @field (the key's value, wherever it lives). */
int config_parse_value(unsigned k, void *field, const char *value, char sep, char *why, size_t len);
/* Writes the value at @field of key @k as an INI file spells it. */
void config_format_field(unsigned k, const void *field, char *buf, size_t len);
/* The value of key @k: global keys in @c, the others in @fp. */
void *config_field(struct sfs_config *c, struct file_params *fp, unsigned k);
/* Parses @value for key @k (see struct config_key); 0, -EINVAL with @why set, -ENOMEM. */
int config_apply_value(struct sfs_config *c, struct file_params *fp, unsigned k, const char *value,
		       char sep, char *why, size_t len);
/* Copies rule key @k from @src to @dst. */
void config_copy_key(struct file_params *dst, const struct file_params *src, unsigned k);
/* @k's value as an INI file spells it; global keys from @c, rule keys from @fp. */
void config_format_value(const struct sfs_config *c, const struct file_params *fp, unsigned k,
			 char *buf, size_t len);
/* A size key's value in bytes (0 for keys that are not sizes). */
uint64_t config_size_of(const struct file_params *fp, unsigned k);

/*
 * Where a key got its value.  @seq orders the values files gave: a key
 * read later has a larger one, across every config= file and include.
 */
struct origin {
	const char *file; /* a config_file's path; NULL when not from a file */
	unsigned line;
	unsigned long seq;
	char *option; /* the -o assignment as the user wrote it (malloc'd); NULL from a file */
};

/* Where the keys of one [device "NAME"] section were written. */
struct device_state {
	config_keyset set;			/* BIT(key) for each key the sections wrote */
	unsigned line[CONFIG_MAX_KEYS]; /* ... and the line */
	const char *kfile[CONFIG_MAX_KEYS];
	unsigned backing_line, preset_line; /* 0 = not written */
	const char *backing_file, *preset_file;
};

struct rule_state {
	config_keyset set;			/* BIT(key) for each key the rule's sections wrote */
	unsigned line[CONFIG_MAX_KEYS]; /* line of each key they wrote */
	/*
	 * The file of each key written: one glob's sections in several files
	 * make one rule, each key from the last file that wrote it.
	 */
	const char *kfile[CONFIG_MAX_KEYS];
	unsigned long seq[CONFIG_MAX_KEYS]; /* as struct origin's */
	const char *file; /* where the rule was first declared; NULL if built in */
	config_keyset autoset; /* keys config_finish() resolved from 0 (auto) */
};

/* One configuration file read, in the order reading began. */
struct config_file {
	char *path;	    /* as opened: relative to the working directory, or absolute */
	const char *parent; /* the file whose include = line read it; NULL for config= */
	unsigned parent_line;
};

struct config_state {
	config_keyset set; /* global keys written by a file or an override */
	struct origin origin[CONFIG_MAX_KEYS];
	config_keyset autoset;	   /* global keys config_finish() resolved from 0 (auto) */
	struct rule_state *rules;  /* parallel to sfs_config.rules */
	size_t cap;		   /* of both rule arrays */
	struct device_state *devices; /* parallel to sfs_config.devices */
	size_t devcap;		      /* of both device arrays */
	struct config_file *files; /* every file read, for origins and config_write_ini() */
	size_t nfiles;
	unsigned long seq; /* the last origin.seq given */
	char **notes;	   /* "ignored: ..." lines for config_write_ini(), malloc'd */
	size_t nnotes;
};

/* config_ini.c */
struct config_state *config_state_get(struct sfs_config *c);
void config_state_free(struct config_state *st);
/* Appends a rule for @glob with the current global values; returns its index or -ENOMEM. */
long config_add_rule(struct sfs_config *c, const char *glob, unsigned line, const char *file);

/* Appends a [device "@name"] section's device with built-in values; its index or -ENOMEM. */
long config_add_device(struct sfs_config *c, const char *name, unsigned line, const char *file);

/*
 * config_rules.c: a scope of checks, the global values (rule < 0 and
 * device 0), one rule, or one [device "NAME"] section's keys (device > 0).
 */
struct config_scope {
	const struct sfs_config *c;
	struct config_state *st;
	long rule;
	size_t device; /* 1 + index in c->devices for a [device "NAME"] scope; 0 otherwise */
	/* The [disk] values this scope checks: &c->disk (or NULL for it), or the device's. */
	const struct disk_params *disk;
	struct file_params *fp;
	config_keyset set;	   /* keys written in this scope */
	config_keyset *autoset; /* where the scope records keys resolved from 0 (auto) */
	const char *glob;  /* the rule's, NULL for the global scope */
};

/* "[layout]" for key @k of the global scope, "[file "GLOB"]" in a rule. */
const char *config_label(const struct config_scope *s, unsigned k, char *buf, size_t len);
/* "file:line: " or "option -o ...: " for key @k of scope @s; "" when nothing names it. */
const char *config_where(const struct config_scope *s, unsigned k, char *buf, size_t len);
/* Whether key @k was written in scope @s (or, in a rule, globally). */
bool config_scope_wrote(const struct config_scope *s, unsigned k);
/* "", " (default)" after a value nobody wrote, or " (auto)" after a resolved one. */
const char *config_dflt(const struct config_scope *s, unsigned k);
/* config_where() for a value that breaks a limit: the key's place, else the device size's. */
const char *config_blame(const struct config_scope *s, unsigned k, char *buf, size_t len);

/*
 * config_check_block_floor() - for a pattern that needs size key @k of
 * scope @s at least one block: 0, or -EINVAL with @err naming the key's
 * place (the pattern's when the key was not written).
 */
int config_check_block_floor(const struct config_scope *s, unsigned k, char *err, size_t errlen);

/* extent_size auto: Oracle AUTOALLOCATE starts with 64 KiB (see placement.h). */
#define AUTO_FIRST_EXTENT (UINT64_C(64) << 10)
/* ... and the auto gap and gap_max count it as its 1 MiB step (files of 1M to 64M). */
#define AUTO_EXTENT_STEP (UINT64_C(1) << 20)

#endif
