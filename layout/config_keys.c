/*
 * The configuration keys: the core table, one row per key, and the merged
 * list of every key (core and registered patterns') that the parser, the
 * rules, the writer and --help walk.
 *
 * The merged list is built once, before main() (a constructor, so no
 * thread can race the first use), from the core table and the keys[] of
 * every pattern in the "sfs_patterns" linker section.  It is ordered by
 * section, core keys first, then each pattern's in registration order, so
 * a pattern's keys appear in messages and in config_write_ini() under its
 * section without the core table naming them.  Weak spot: sets of keys are
 * 128-bit masks, so the list holds at most CONFIG_MAX_KEYS keys; more
 * aborts at start-up with a message rather than silently dropping keys.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_i.h"
#include "disk_model.h"
#include "units.h"

#define STR_(x) #x
#define STR(x)	STR_(x)

static const char *const zero_fill_names[] = {"write", "fallocate", "none", NULL};
static const char *const cache_mode_names[] = {"none", "kernel", NULL};

/* ---- the keys whose value one type cannot express ---- */

/* [device] async_reads: a boolean (false, true) or always: enum async_reads. */
static int parse_async_reads(void *field, const char *value, char sep, char *why, size_t len)
{
	bool on;

	(void)sep;
	if (strcasecmp(value, "always") == 0) {
		*(unsigned *)field = ASYNC_READS_ALWAYS;
		return 0;
	}
	if (config_parse_bool(value, &on) == 0) {
		*(unsigned *)field = on ? ASYNC_READS_BUSY : ASYNC_READS_OFF;
		return 0;
	}
	snprintf(why, len, "unknown value; allowed: true, false, always (or yes, no, on, off, 1, 0)");
	return -EINVAL;
}

static void format_async_reads(const void *field, char *buf, size_t len)
{
	static const char *const names[] = {"false", "true", "always", NULL};

	snprintf(buf, len, "%s", config_name_of(names, *(const unsigned *)field));
}

/* [log] ops: a list of log_op_names (logschema.h); bit i of the mask is log_op_names[i]. */
static int parse_log_ops(void *field, const char *value, char sep, char *why, size_t len)
{
	const char *p = value;
	unsigned mask = 0, e;
	char item[64], list[128];

	config_join_names(log_op_names, list, sizeof(list));
	do {
		config_next_item(&p, sep, item, sizeof(item));
		if (config_parse_enum(item, log_op_names, &e)) {
			if (sep == ':' && strchr(item, ','))
				snprintf(why, len,
					 "separate items with ':' in -o (',' ends the option)");
			else if (strcasecmp(item, "trim") == 0)
				snprintf(why, len,
					 "'trim' is now called 'punch' (FALLOC_FL_PUNCH_HOLE); "
					 "allowed: %s, separated by '%c'",
					 list, sep);
			else if (!*item)
				snprintf(why, len, "empty item; allowed: %s, separated by '%c'",
					 list, sep);
			else
				snprintf(why, len,
					 "unknown op '%s'; allowed: %s, separated by '%c'", item,
					 list, sep);
			return -EINVAL;
		}
		mask |= 1u << e;
	} while (*p);
	*(unsigned *)field = mask;
	return 0;
}

static void format_log_ops(const void *field, char *buf, size_t len)
{
	unsigned mask = *(const unsigned *)field;
	size_t used = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; log_op_names[i] && used < len; i++)
		if (mask & (1u << i))
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "",
						 log_op_names[i]);
}

/* ---- the core table ---- */

#define GLOBAL(field)	.home = CONFIG_GLOBAL, .offset = offsetof(struct sfs_config, field)
#define PER_FILE(field) .home = CONFIG_FILE_PARAMS, .offset = offsetof(struct file_params, field)

static const struct config_key core_keys[CK__COUNT] = {
    [CK_DEVICE_SIZE] = {"device", "size", CONFIG_SIZE, GLOBAL(device.size), .def = "0",
			.help = "bytes of the backing device to use; 0 = its current size"},
    [CK_BLOCK_SIZE] = {"device", "block_size", CONFIG_SIZE32, GLOBAL(device.block_size),
		       .flags = CONFIG_HAS_MIN | CONFIG_HAS_MAX | CONFIG_POWER_OF_TWO, .min = 512,
		       .max = 1 << 20, .range_why = "must be a power of two from 512 to 1M",
		       .def = "4K",
		       .help = "allocation unit in bytes; every size must be a multiple"},
    [CK_DIRECT] = {"device", "direct", CONFIG_BOOL, GLOBAL(device.direct), .def = "false",
		   .help = "open the backing device with O_DIRECT"},
    [CK_POLL_US] = {"device", "poll_us", CONFIG_U32, GLOBAL(device.poll_us),
		    .flags = CONFIG_HAS_MAX | CONFIG_WHY_ALL, .max = DEVICE_POLL_US_MAX,
		    .range_why =
			"must be a whole number of microseconds from 0 to " STR(DEVICE_POLL_US_MAX),
		    .def = STR(DEVICE_POLL_US_DEFAULT),
		    .help = "with direct: microseconds a lone device read polls before sleeping"},
    [CK_ASYNC_READS] = {"device", "async_reads", CONFIG_CUSTOM, GLOBAL(device.async_reads),
			.def = "true", .parse = parse_async_reads, .format = format_async_reads,
			.help = "with direct: true (reads behind others or behind waiting "
				"requests complete on a completion thread), always, or false"},
    [CK_PATTERN] = {"layout", "pattern", CONFIG_PATTERN, PER_FILE(layout.pattern),
		    .def = "contiguous",
		    .help = "placement pattern: where each new extent of a file goes"},
    /* 1 byte: the smallest size; the block-size check gives the real floor. */
    [CK_EXTENT_SIZE] = {"layout", "extent_size", CONFIG_SIZE, PER_FILE(layout.extent_size),
			.flags = CONFIG_AUTO | CONFIG_HAS_MIN | CONFIG_BLOCK_MULTIPLE, .min = 1,
			.range_why = "must be > 0 (or auto)", .def = "auto",
			.help = "bytes per extent, or auto (Oracle AUTOALLOCATE sizes)"},
    [CK_LAYOUT_DEVICE] = {"layout", "device", CONFIG_NAME, PER_FILE(device), .def = "main",
			  .help = "backing device of the extents: main (BACKING) or a [device "
				  "\"NAME\"] section's name"},
    [CK_NEXT] = {"autoextend", "next", CONFIG_SIZE, PER_FILE(autoextend.next),
		 .flags = CONFIG_BLOCK_MULTIPLE | CONFIG_WITHIN_DEVICE, .def = "0",
		 .help = "bytes added per growth (AUTOEXTEND NEXT); 0 = one extent"},
    [CK_MAX_SIZE] = {"autoextend", "max_size", CONFIG_SIZE, PER_FILE(autoextend.max_size),
		     .flags = CONFIG_BLOCK_MULTIPLE, .def = "0",
		     .help = "largest allocation of a file (AUTOEXTEND MAXSIZE); 0 = unlimited"},
    [CK_ZERO_FILL] = {"autoextend", "zero_fill", CONFIG_ENUM, PER_FILE(autoextend.zero_fill),
		      .names = zero_fill_names, .def = "write",
		      .help = "how new space is zeroed: write, fallocate or none"},
    [CK_SPARSE] = {"autoextend", "sparse", CONFIG_BOOL, PER_FILE(autoextend.sparse), .def = "false",
		   .help = "a write past the allocated end allocates only what it touches and "
			   "leaves a hole before it (false: zero-fill up to it, as a datafile)"},
    [CK_CACHE_MODE] = {"cache", "mode", CONFIG_ENUM, PER_FILE(cache.mode),
		       .names = cache_mode_names, .def = "none",
		       .help = "none (direct I/O) or kernel (page cache and readahead)"},
    /* 1 MiB: the largest FUSE request of libfuse 3.14. */
    [CK_READAHEAD] = {"cache", "readahead", CONFIG_SIZE, PER_FILE(cache.readahead),
		      .flags = CONFIG_HAS_MIN | CONFIG_HAS_MAX | CONFIG_BLOCK_MULTIPLE, .min = 4096,
		      .max = 1 << 20, .multiple = 4096,
		      .range_why = "must be a multiple of 4K from 4K to 1M", .def = "128K",
		      .help = "kernel mode: readahead in bytes"},
    /* Mount-wide (GLOBAL): the kernel takes it per connection, at INIT. */
    [CK_WRITEBACK] = {"cache", "writeback", CONFIG_BOOL, GLOBAL(cache_writeback), .def = "true",
		      .help = "kernel mode: the kernel's write-back cache (writes reach the "
			      "daemon at write-back, fsync or close); mount-wide"},
    [CK_LOG_PATH] = {"log", "path", CONFIG_PATH, GLOBAL(log.path),
		     .help = "the request log (CSV); unset = no log"},
    [CK_LOG_OPS] = {"log", "ops", CONFIG_CUSTOM, GLOBAL(log.ops), .def = "read,extend",
		    .parse = parse_log_ops, .format = format_log_ops,
		    .help = "requests to log: read, write, extend, fsync, punch, zero"},
    [CK_LAYERS] = {"device", "layers", CONFIG_CUSTOM, GLOBAL(device.layers),
		   .def = "accounting,timing,volatile,base", .parse = config_parse_layers,
		   .format = config_format_layers,
		   .help = "the device's layer stack, top first, base last"},
    [CK_DISK_CAPACITY] = {"disk", "capacity", CONFIG_SIZE, GLOBAL(disk.capacity), .def = "0",
			  .help = "bytes of the modelled disk; 0 = the backing device's size"},
    [CK_METADATA_IO] = {"disk", "metadata_io", CONFIG_BOOL, GLOBAL(disk.metadata_io), .def = "true",
			.help = "charge one FUA metadata write per new extent"},
    [CK_METADATA_OFFSET] = {"disk", "metadata_offset", CONFIG_SIZE, GLOBAL(disk.metadata_offset),
			    .def = "0", .help = "device offset of the per-extent metadata write"},
    [CK_TIME_DILATION] = {"disk", "time_dilation", CONFIG_U32, GLOBAL(time_dilation),
			  .flags = CONFIG_HAS_MIN | CONFIG_HAS_MAX | CONFIG_WHY_ALL, .min = 1,
			  .max = DISK_TIME_DILATION_MAX,
			  .range_why =
			      "must be a whole number from 1 to " STR(DISK_TIME_DILATION_MAX),
			  .def = "1",
			  .help = "stretch every disk model's times by this factor (time dilation; "
				  "mount-wide)"},
    [CK_DISK_MODEL] = {"disk", "model", CONFIG_MODEL, GLOBAL(disk.model), .def = "none",
		       .help = "disk timing model"},
};

/* ---- the merged list ---- */

static struct key_entry entries[CONFIG_MAX_KEYS];
static size_t nentries;
static unsigned core_ids[CK__COUNT];

static enum section section_of(const char *name)
{
	unsigned i;

	for (i = 0; i < NGLOBAL_SECTIONS; i++)
		if (strcmp(config_section_names[i], name) == 0)
			return (enum section)i;
	return SEC_NONE;
}

static __attribute__((noreturn, format(printf, 1, 2))) void broken(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "scatterfs: internal error in the key tables: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/*
 * Where a key lives in struct device_conf (NO_DEV_OFFSET: not a key of
 * [device "NAME"] sections).  A [disk] key's @offset points into
 * sfs_config.disk, so its place in a device's struct disk_params is the
 * same distance from the struct's start: a disk model's new key works in
 * [device "NAME"] sections without a row of its own.
 */
static size_t dev_offset_of(const struct config_key *row, enum section sec, size_t offset)
{
	const size_t disk = offsetof(struct sfs_config, disk);

	if (sec == SEC_DEVICE && row->home == CONFIG_GLOBAL) {
		if (row->offset == offsetof(struct sfs_config, device.size))
			return offsetof(struct device_conf, size);
		if (row->offset == offsetof(struct sfs_config, device.block_size))
			return offsetof(struct device_conf, block_size);
		if (row->offset == offsetof(struct sfs_config, device.direct))
			return offsetof(struct device_conf, direct);
		if (row->offset == offsetof(struct sfs_config, device.layers))
			return offsetof(struct device_conf, layers);
	}
	if (sec == SEC_DISK && row->home != CONFIG_FILE_PARAMS && offset >= disk &&
	    offset < disk + sizeof(struct disk_params))
		return offsetof(struct device_conf, disk) + (offset - disk);
	return NO_DEV_OFFSET;
}

static void add_entry(const struct config_key *row, const struct placement_ops *pattern,
		      const struct disk_model_ops *model, const struct config_layer *layer)
{
	struct key_entry *e;

	if (nentries == CONFIG_MAX_KEYS)
		broken("more than %d keys", CONFIG_MAX_KEYS);
	e = &entries[nentries++];
	e->row = row;
	e->pattern = pattern;
	e->model = model;
	e->layer = layer;
	e->sec = section_of(row->section);
	e->offset = row->offset;
	if (row->home == CONFIG_PATTERN_DATA) {
		size_t base = placement_data_offset(pattern);

		if (row->offset >= pattern->data_size ||
		    base + pattern->data_size > LAYOUT_PATTERN_DATA_MAX)
			broken("pattern %s: key %s outside pattern_data", pattern->name, row->name);
		e->offset = offsetof(struct file_params, layout.pattern_data) + base + row->offset;
	}
	if (row->home == CONFIG_MODEL_DATA) {
		size_t base = disk_model_data_offset(model);

		if (row->offset >= model->params_size ||
		    base + model->params_size > DISK_MODEL_DATA_MAX)
			broken("disk model %s: key %s outside model_data", model->name, row->name);
		e->offset = offsetof(struct sfs_config, disk.model_data) + base + row->offset;
	}
	if (row->home == CONFIG_LAYER_DATA) {
		size_t base = config_layer_data_offset(layer);

		if (row->offset >= layer->data_size ||
		    base + layer->data_size > CONFIG_LAYER_DATA_MAX)
			broken("layer %s: key %s outside layer_data", layer->name, row->name);
		e->offset = offsetof(struct sfs_config, device.layer_data) + base + row->offset;
		e->dev_offset = offsetof(struct device_conf, layer_data) + base + row->offset;
		return;
	}
	e->dev_offset = dev_offset_of(row, e->sec, e->offset);
}

__attribute__((constructor)) static void build_key_list(void)
{
	size_t p, i;
	int sec;

	for (p = 0; p < placement_count(); p++)
		if (placement_find(placement_at(p)->name) != placement_at(p))
			broken("two patterns named %s", placement_at(p)->name);
	for (p = 0; p < config_layer_count(); p++)
		if (config_layer_find(config_layer_at(p)->name) != config_layer_at(p))
			broken("two layers named %s", config_layer_at(p)->name);
	for (sec = 0; sec < NGLOBAL_SECTIONS; sec++) {
		for (i = 0; i < CK__COUNT; i++) {
			if (section_of(core_keys[i].section) != sec)
				continue;
			core_ids[i] = (unsigned)nentries;
			add_entry(&core_keys[i], NULL, NULL, NULL);
		}
		for (p = 0; p < placement_count(); p++) {
			const struct placement_ops *ops = placement_at(p);

			for (i = 0; i < ops->nkeys; i++) {
				enum section s = section_of(ops->keys[i].section);

				if (s != SEC_LAYOUT)
					broken("pattern %s: key %s must be in [layout]", ops->name,
					       ops->keys[i].name);
				if (s == sec)
					add_entry(&ops->keys[i], ops, NULL, NULL);
			}
		}
		for (p = 0; p < config_layer_count(); p++) {
			const struct config_layer *l = config_layer_at(p);

			for (i = 0; i < l->nkeys; i++) {
				enum section s = section_of(l->keys[i].section);

				if (s != SEC_DEVICE || l->keys[i].home != CONFIG_LAYER_DATA)
					broken("layer %s: key %s must be a [device] key in its "
					       "layer_data",
					       l->name, l->keys[i].name);
				if (s == sec)
					add_entry(&l->keys[i], NULL, NULL, l);
			}
		}
		for (p = 0; p < disk_model_count(); p++) {
			const struct disk_model_ops *m = disk_model_at(p);

			for (i = 0; i < m->nkeys; i++) {
				enum section s = section_of(m->keys[i].section);

				if (s != SEC_DISK || m->keys[i].home != CONFIG_MODEL_DATA)
					broken("disk model %s: key %s must be a [disk] key in "
					       "model_data",
					       m->name, m->keys[i].name);
				if (s != sec)
					continue;
				add_entry(&m->keys[i], NULL, m, NULL);
			}
		}
	}
	/* A layer's key named as another [device] key would never be found. */
	for (i = 0; i < nentries; i++)
		for (p = 0; p < i; p++)
			if (entries[i].sec == SEC_DEVICE && entries[p].sec == SEC_DEVICE &&
			    strcmp(entries[i].row->name, entries[p].row->name) == 0)
				broken("two [device] keys named %s", entries[i].row->name);
}

int config_device_index(const struct sfs_config *c, const char *name)
{
	size_t i;

	if (strcmp(name, "main") == 0)
		return 0;
	for (i = 0; i < c->ndevices; i++)
		if (strcmp(c->devices[i].name, name) == 0)
			return (int)i + 1;
	return -ENOENT;
}

size_t config_nkeys(void)
{
	return nentries;
}

const struct key_entry *config_key(unsigned k)
{
	return &entries[k];
}

unsigned config_core_id(enum core_key ck)
{
	return core_ids[ck];
}

unsigned config_key_id(const struct config_key *row)
{
	unsigned k;

	for (k = 0; k < nentries; k++)
		if (entries[k].row == row)
			return k;
	return (unsigned)nentries;
}

size_t config_key_count(void)
{
	return nentries;
}

const struct config_key *config_key_at(size_t i, const struct placement_ops **pattern)
{
	if (i >= nentries)
		return NULL;
	if (pattern)
		*pattern = entries[i].pattern;
	return entries[i].row;
}

unsigned config_twin(unsigned k)
{
	unsigned t;

	if (!entries[k].model)
		return (unsigned)nentries;
	for (t = k + 1; t < nentries; t++)
		if (entries[t].model && entries[t].sec == entries[k].sec &&
		    strcmp(entries[t].row->name, entries[k].row->name) == 0)
			return t;
	return (unsigned)nentries;
}

unsigned config_model_key(unsigned k, const struct disk_model_ops *model)
{
	unsigned t;

	for (t = k; t < nentries; t = config_twin(t))
		if (entries[t].model == model)
			return t;
	return (unsigned)nentries;
}

void config_disk_keys(const struct disk_model_ops *model, bool named_device, char *buf, size_t len)
{
	size_t used = 0;
	unsigned k;

	buf[0] = '\0';
	for (k = 0; k < nentries && used < len; k++)
		if (entries[k].sec == SEC_DISK &&
		    (!entries[k].model || entries[k].model == model) &&
		    !(named_device && entries[k].dev_offset == NO_DEV_OFFSET))
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
						 entries[k].row->name);
}

bool config_rule_key(unsigned k)
{
	enum section s = entries[k].sec;

	/* A mount-wide key of these sections (cache.writeback) is no rule's. */
	return (s == SEC_LAYOUT || s == SEC_AUTOEXTEND || s == SEC_CACHE) &&
	       entries[k].row->home != CONFIG_GLOBAL;
}

unsigned config_find_key(enum section sec, const char *name)
{
	unsigned k;

	for (k = 0; k < nentries; k++) {
		const char *sn = config_section_names[entries[k].sec];
		const char *kn = entries[k].row->name;
		size_t snlen = strlen(sn);

		if (sec == SEC_NAMED_DEVICE) {
			if (entries[k].dev_offset != NO_DEV_OFFSET && strcmp(name, kn) == 0)
				return k;
		} else if (sec == SEC_FILE) {
			if (!config_rule_key(k))
				continue;
			if (strcmp(name, kn) == 0 ||
			    (strncmp(name, sn, snlen) == 0 && name[snlen] == '.' &&
			     strcmp(name + snlen + 1, kn) == 0))
				return k;
		} else if (entries[k].sec == sec && strcmp(name, kn) == 0) {
			return k;
		}
	}
	return (unsigned)nentries;
}

void config_allowed_keys(enum section sec, const struct disk_model_ops *model, char *buf,
			 size_t len)
{
	size_t used = 0;
	unsigned k;

	buf[0] = '\0';
	if (sec == SEC_NAMED_DEVICE)
		used = (size_t)snprintf(buf, len, "backing, preset");
	for (k = 0; k < nentries && used < len; k++) {
		if (sec == SEC_NAMED_DEVICE ? entries[k].dev_offset == NO_DEV_OFFSET
		    : sec == SEC_FILE	    ? !config_rule_key(k)
					    : entries[k].sec != sec)
			continue;
		if (entries[k].model && entries[k].model != model)
			continue; /* each model's keys are its own */
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
					 entries[k].row->name);
	}
}

void config_model_names(char *buf, size_t len)
{
	size_t used, i;

	used = (size_t)snprintf(buf, len, "none");
	for (i = 0; i < disk_model_count() && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, ", %s", disk_model_at(i)->name);
}

void config_pattern_names(char *buf, size_t len)
{
	size_t used = 0, i;

	buf[0] = '\0';
	for (i = 0; i < placement_count() && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
					 placement_at(i)->name);
}

/* ---- names ---- */

const char *pattern_name(const struct placement_ops *p)
{
	return p ? p->name : "?";
}

const char *zero_fill_name(enum zero_fill z)
{
	return config_name_of(zero_fill_names, (unsigned)z);
}

const char *cache_mode_name(enum cache_mode m)
{
	return config_name_of(cache_mode_names, (unsigned)m);
}
