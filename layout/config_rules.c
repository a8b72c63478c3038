/*
 * config_finish(): what the configuration means once every file and
 * override is in.  Rules inherit the global values, keys a scope's
 * pattern does not read are refused or dropped, auto values are resolved,
 * and sizes are checked against the block size and the device.
 *
 * Data structure.  struct sfs_config (config.h) holds effective values
 * only.  What config_finish() needs beyond them lives in the private struct
 * config_state behind c->state (config_i.h): one bit per key for the global
 * sections and one bit per key for each [file] rule, plus where each key
 * was set (file and line, or the -o text).  With that,
 *   - a rule inherits every key it did not set from the global values as
 *     they are after all overrides, although an override arrives after the
 *     file that declared the rule;
 *   - conflict checks blame only keys somebody wrote (a default never
 *     conflicts with the pattern), and the message points at that line.
 * The checks walk the key list (config_keys.c) by the rows' flags; what
 * one pattern alone needs is its check() and check_device().
 *
 * Conflicts.  A key that the pattern does not read is an error only where
 * it was written: in a global section against the global pattern, in a
 * rule against the rule's pattern.  A rule that switches to another
 * pattern inherits the global pattern's keys without complaint (they are
 * simply not read), so postgres.ini can scatter base/ and keep pg_wal/
 * contiguous.  Places are ranked: built-in default < files, in the order
 * their values were read (config= files and their include = lines) < -o
 * overrides.  The key is an error when the pattern comes from the same
 * place (one file, or both -o) or an earlier one (the user wrote both, or
 * asked for the key over the file's pattern); when the pattern comes from
 * a later place (-o layout.pattern=... over a shipped file, a later file
 * over an earlier one) the key is dropped as if never written and a note
 * is kept for config_write_ini().  Sizes
 * (multiples of the block size, the device size) are checked on every
 * effective value that the scope's pattern reads.
 *
 * Auto values.  gap and gap_max 0 mean auto (config.h).  config_finish()
 * resolves them per scope after inheritance, and remembers which it
 * resolved (autoset), so that a second config_finish() after more
 * overrides starts again from auto and not from the first result.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_i.h"
#include "disk_model.h"
#include "registry.h"
#include "size.h"

const char *config_label(const struct config_scope *s, unsigned k, char *buf, size_t len)
{
	if (s->device)
		return config_section_label(SEC_NAMED_DEVICE, s->c->devices[s->device - 1].name,
					    buf, len);
	return config_section_label(s->glob ? SEC_FILE : config_key(k)->sec, s->glob, buf, len);
}

static config_keyset scope_global_set(const struct config_scope *s)
{
	return s->st ? s->st->set : 0;
}

const char *config_where(const struct config_scope *s, unsigned k, char *buf, size_t len)
{
	const struct config_state *st = s->st;

	buf[0] = '\0';
	if (s->device && st) {
		const struct device_state *ds = &st->devices[s->device - 1];
		const struct device_conf *d = &s->c->devices[s->device - 1];

		if (ds->set & BIT(k))
			snprintf(buf, len, "%s:%u: ", ds->kfile[k], ds->line[k]);
		else
			snprintf(buf, len, "%s:%u: ", d->file, d->line);
	} else if (s->rule >= 0 && st && (st->rules[s->rule].set & BIT(k)))
		snprintf(buf, len, "%s:%u: ", st->rules[s->rule].kfile[k],
			 st->rules[s->rule].line[k]);
	else if (st && (st->set & BIT(k)) && st->origin[k].option)
		snprintf(buf, len, "option -o %s: ", st->origin[k].option);
	else if (st && (st->set & BIT(k)))
		snprintf(buf, len, "%s:%u: ", st->origin[k].file, st->origin[k].line);
	else if (s->rule >= 0 && st && st->rules[s->rule].file)
		snprintf(buf, len, "%s:%u: ", st->rules[s->rule].file, s->c->rules[s->rule].line);
	else if (s->c->source)
		snprintf(buf, len, "%s: ", s->c->source);
	return buf;
}

bool config_scope_wrote(const struct config_scope *s, unsigned k)
{
	return (s->set & BIT(k)) || (s->rule >= 0 && (scope_global_set(s) & BIT(k)));
}

const char *config_dflt(const struct config_scope *s, unsigned k)
{
	if (s->autoset && (*s->autoset & BIT(k)))
		return " (auto)";
	return config_scope_wrote(s, k) ? "" : " (default)";
}

const char *config_blame(const struct config_scope *s, unsigned k, char *buf, size_t len)
{
	return config_where(s, config_scope_wrote(s, k) ? k : K_DEVICE_SIZE, buf, len);
}

int config_check_block_floor(const struct config_scope *s, unsigned k, char *err, size_t errlen)
{
	uint32_t bs = s->c->device.block_size;
	char at[400], lb[300], v[64], bsbuf[32];
	const char *name = config_key(k)->row->name;

	/* After resolve_auto(), only an explicit value or a device below one block gets here. */
	if (config_size_of(s->fp, k) >= bs)
		return 0;
	config_format_value(s->c, s->fp, k, v, sizeof(v));
	config_seterr(
	    err, errlen, "%s%s %s = %s%s: pattern %s needs %s >= [device] block_size (%s)",
	    config_where(s, config_scope_wrote(s, k) ? k : K_PATTERN, at, sizeof(at)),
	    config_label(s, k, lb, sizeof(lb)), name, v, config_dflt(s, k),
	    pattern_name(s->fp->layout.pattern), name, format_size(bs, bsbuf, sizeof(bsbuf)));
	return -EINVAL;
}

static bool pattern_reads(const struct placement_ops *p, unsigned k)
{
	const struct placement_ops *user = config_key(k)->pattern;

	return !user || user == p;
}

/* A size key whose 0 means "not set" (initial_size) or "auto" (gap, gap_max): never a conflict. */
static bool zero_is_unset(const struct file_params *fp, unsigned k)
{
	return (config_key(k)->row->flags & CONFIG_ZERO_UNSET) && config_size_of(fp, k) == 0;
}

/* The first extent of a file: what autoextend.max_size must hold at least. */
static uint64_t first_extent(const struct layout_params *l)
{
	uint64_t first = placement_first_extent(l);

	if (first)
		return first;
	return l->extent_size ? l->extent_size : AUTO_FIRST_EXTENT;
}

/* Where a value was set, as far as precedence goes. */
struct place {
	bool set;	   /* false: the built-in default */
	bool option;	   /* an -o override */
	const char *file;  /* else the file (one config_file) ... */
	unsigned long seq; /* ... and when it was read */
};

/* The place of key @k as scope @s has it: written in the rule, else inherited. */
static struct place scope_place(const struct config_scope *s, unsigned k)
{
	const struct config_state *st = s->st;

	if (s->rule >= 0 && (st->rules[s->rule].set & BIT(k)))
		return (struct place){true, false, st->rules[s->rule].kfile[k],
				      st->rules[s->rule].seq[k]};
	if (!(st->set & BIT(k)))
		return (struct place){0};
	if (st->origin[k].option)
		return (struct place){.set = true, .option = true};
	return (struct place){true, false, st->origin[k].file, st->origin[k].seq};
}

/*
 * Whether @a is a later place than @b: -o over a file, a file read later
 * over an earlier one.  One file (however its keys interleave with its
 * includes) or the -o overrides together are one place, never later than
 * itself.
 */
static bool place_after(struct place a, struct place b)
{
	if (!a.set)
		return false;
	if (!b.set)
		return true;
	if (a.option || b.option)
		return a.option && !b.option;
	return a.file != b.file && a.seq > b.seq;
}

/* "set by option -o X" or "set at FILE:LINE" for an inherited or global pattern; "" otherwise. */
static const char *pattern_from(const struct config_scope *s, char *buf, size_t len)
{
	const struct config_state *st = s->st;
	unsigned kp = K_PATTERN;

	buf[0] = '\0';
	if ((s->rule >= 0 && (s->set & BIT(kp))) || !(st->set & BIT(kp)))
		return buf;
	if (st->origin[kp].option)
		snprintf(buf, len, "set by option -o %s", st->origin[kp].option);
	else
		snprintf(buf, len, "set at %s:%u", st->origin[kp].file, st->origin[kp].line);
	return buf;
}

static int add_note(struct config_state *st, const char *text)
{
	char **v = realloc(st->notes, (st->nnotes + 1) * sizeof(*v));
	char *copy;

	if (!v)
		return -ENOMEM;
	st->notes = v;
	copy = strdup(text);
	if (!copy)
		return -ENOMEM;
	config_one_line(copy);
	st->notes[st->nnotes++] = copy;
	return 0;
}

/*
 * Keys written in scope @s that its pattern does not read.  Written in the
 * same place as the pattern (one section, or both -o overrides) or in a
 * later place, such a key is an error: the user asked for it with that
 * pattern.  When the pattern was set in a later place (an -o override over
 * the file), the key is dropped as if never written: it takes @base's
 * value, and a note for config_write_ini() says so.
 */
static int drop_unused_keys(struct config_scope *s, const struct file_params *base, char *err,
			    size_t errlen)
{
	struct config_state *st = s->st;
	const struct placement_ops *pat = s->fp->layout.pattern;
	struct place ppat = scope_place(s, K_PATTERN);
	char at[400], v[64], lb[300], from[300], note[1400];
	unsigned k;

	pattern_from(s, from, sizeof(from));
	for (k = 0; k < config_nkeys(); k++) {
		const struct key_entry *e = config_key(k);

		if (!e->pattern || !(s->set & BIT(k)) || pattern_reads(pat, k) ||
		    zero_is_unset(s->fp, k))
			continue;
		config_where(s, k, at, sizeof(at));
		config_label(s, k, lb, sizeof(lb));
		config_format_value(s->c, s->fp, k, v, sizeof(v));
		if (place_after(ppat, scope_place(s, k))) {
			snprintf(note, sizeof(note),
				 "ignored: %s%s %s = %s (pattern %s, %s, does not read it)", at, lb,
				 e->row->name, v, pattern_name(pat), from);
			if (add_note(st, note)) {
				config_seterr(err, errlen, "out of memory");
				return -ENOMEM;
			}
			config_copy_key(s->fp, base, k);
			s->set &= ~BIT(k);
			if (s->rule >= 0)
				st->rules[s->rule].set &= ~BIT(k);
			else
				st->set &= ~BIT(k);
			continue;
		}
		config_seterr(err, errlen,
			      "%s%s %s = %s: pattern %s%s%s%s does not use %s; only %s does", at,
			      lb, e->row->name, v, pattern_name(pat), from[0] ? " (" : "", from,
			      from[0] ? ")" : "", e->row->name, pattern_name(e->pattern));
		return -EINVAL;
	}
	return 0;
}

/* Makes the keys config_finish() resolved from auto 0 again (a second config_finish()). */
static void unresolve(struct file_params *fp, config_keyset *autoset)
{
	unsigned k;

	for (k = 0; k < config_nkeys(); k++)
		if ((*autoset & BIT(k)) && config_key(k)->row->resolve_auto)
			*(uint64_t *)config_field(NULL, fp, k) = 0;
	*autoset = 0;
}

/*
 * Replaces each 0 (auto) of a key with resolve_auto() in scope @s (see
 * struct layout_params for gap and gap_max).  A rule whose pattern does
 * not read the key takes the global value @global instead: no pattern
 * reads it there, and config_write_ini() output then loads back to the
 * same values.
 */
static void resolve_auto(struct config_scope *s, const struct file_params *global, uint64_t device)
{
	unsigned k;

	for (k = 0; k < config_nkeys(); k++) {
		const struct config_key *r = config_key(k)->row;
		uint64_t *v;

		if (!r->resolve_auto || config_home_global(r->home))
			continue;
		v = config_field(NULL, s->fp, k);
		if (*v != 0)
			continue;
		if (s->rule >= 0 && !pattern_reads(s->fp->layout.pattern, k))
			*v = *(const uint64_t *)config_field(NULL, (struct file_params *)global, k);
		else
			*v = r->resolve_auto(&s->fp->layout, device, s->c->device.block_size);
		*s->autoset |= BIT(k);
	}
}

/* Checks the scope's values against each other, the block size and the @device size (0: not known).
 */
static int check_scope(const struct config_scope *s, uint64_t device, char *err, size_t errlen)
{
	const struct sfs_config *c = s->c;
	const struct file_params *fp = s->fp;
	const struct placement_ops *pat = fp->layout.pattern;
	int di = config_device_index(c, fp->device);
	/* A rule's extents are on its device: its block size and size bound them. */
	uint32_t bs = di > 0 ? c->devices[di - 1].block_size : c->device.block_size;
	uint64_t ext = fp->layout.extent_size ? fp->layout.extent_size : AUTO_FIRST_EXTENT;
	char at[400], v[64], w[64], x[64], bsbuf[32], lb[300];
	unsigned k;
	int rc;

	format_size(bs, bsbuf, sizeof(bsbuf));
	if (pat->check && (rc = pat->check(s, device, err, errlen)))
		return rc;
	for (k = 0; k < config_nkeys(); k++) {
		const struct config_key *r = config_key(k)->row;

		if (!(r->flags & CONFIG_BLOCK_MULTIPLE) || config_home_global(r->home) ||
		    !pattern_reads(pat, k) || config_size_of(fp, k) % bs == 0)
			continue;
		config_format_value(c, fp, k, v, sizeof(v));
		config_seterr(
		    err, errlen, "%s%s %s = %s%s: not a multiple of %s block_size (%s)",
		    config_where(s, config_scope_wrote(s, k) ? k : K_BLOCK_SIZE, at, sizeof(at)),
		    config_label(s, k, lb, sizeof(lb)), r->name, v, config_dflt(s, k),
		    di > 0 ? "its device's" : "[device]", bsbuf);
		return -EINVAL;
	}
	if (device) {
		/* Every extent of a file must fit, or every write past the first fails. */
		format_size(device, w, sizeof(w));
		if (ext > device) {
			unsigned ke = K_EXTENT_SIZE;

			config_format_value(c, fp, ke, v, sizeof(v));
			if (fp->layout.extent_size)
				config_seterr(
				    err, errlen,
				    "%s%s extent_size = %s%s: larger than the device (%s)",
				    config_blame(s, ke, at, sizeof(at)),
				    config_label(s, ke, lb, sizeof(lb)), v, config_dflt(s, ke), w);
			else
				config_seterr(err, errlen,
					      "%s%s extent_size = auto%s: its first extent (%s) is "
					      "larger than the device (%s)",
					      config_blame(s, ke, at, sizeof(at)),
					      config_label(s, ke, lb, sizeof(lb)),
					      config_dflt(s, ke), format_size(ext, x, sizeof(x)),
					      w);
			return -EINVAL;
		}
		for (k = 0; k < config_nkeys(); k++) {
			const struct config_key *r = config_key(k)->row;

			if (!(r->flags & CONFIG_WITHIN_DEVICE) || config_home_global(r->home) ||
			    !pattern_reads(pat, k) || config_size_of(fp, k) <= device)
				continue;
			config_format_value(c, fp, k, v, sizeof(v));
			config_seterr(err, errlen, "%s%s %s = %s%s: larger than the device (%s)",
				      config_blame(s, k, at, sizeof(at)),
				      config_label(s, k, lb, sizeof(lb)), r->name, v,
				      config_dflt(s, k), w);
			return -EINVAL;
		}
		if (pat->check_device && (rc = pat->check_device(s, device, err, errlen)))
			return rc;
	}
	if (fp->autoextend.max_size && fp->autoextend.max_size < first_extent(&fp->layout)) {
		unsigned km = K_MAX_SIZE;

		config_format_value(c, fp, km, v, sizeof(v));
		config_seterr(err, errlen,
			      "%s%s max_size = %s: smaller than one extent (%s); 0 means unlimited",
			      config_where(s, km, at, sizeof(at)),
			      config_label(s, km, lb, sizeof(lb)), v,
			      format_size(first_extent(&fp->layout), w, sizeof(w)));
		return -EINVAL;
	}
	return 0;
}

/* "model hdd (set at FILE:LINE)", "model none (the default)": scope @s's model and its place. */
static const char *model_from(const struct config_scope *s, char *buf, size_t len)
{
	const struct disk_model_ops *m = s->disk->model;
	unsigned km = config_core_id(CK_DISK_MODEL);
	char at[400];
	size_t n;

	if (!config_scope_wrote(s, km)) {
		snprintf(buf, len, "model %s (the default)", m ? m->name : "none");
		return buf;
	}
	config_where(s, km, at, sizeof(at));
	n = strlen(at);
	if (n >= 2 && strcmp(at + n - 2, ": ") == 0)
		at[n - 2] = '\0';
	if (strncmp(at, "option ", 7) == 0)
		snprintf(buf, len, "model %s (%s)", m ? m->name : "none", at);
	else
		snprintf(buf, len, "model %s (set at %s)", m ? m->name : "none", at);
	return buf;
}

/*
 * Keys of other disk models written in scope @s ([disk] or a [device
 * "NAME"] section): each model's keys are its own.  A key whose twin of
 * the chosen model took the same line's value is no one's business.  In
 * [disk], when model = was set in a later place than the key (an -o
 * override over the file, a later file), the key is dropped as if never
 * written, with a note for config_write_ini(); otherwise it is an error
 * naming the chosen model, the models that have the key and the spelling
 * that would choose one.
 */
static int drop_foreign_model_keys(struct config_scope *s, char *err, size_t errlen)
{
	const struct disk_model_ops *model = s->disk->model;
	struct config_state *st = s->st;
	struct sfs_config *c = (struct sfs_config *)s->c;
	config_keyset *set = s->device ? &st->devices[s->device - 1].set : &st->set;
	unsigned km = config_core_id(CK_DISK_MODEL), k, t;
	char at[400], lb[300], v[64], from[500], owners[200], list[1024], why[256], note[1400];

	for (k = 0; k < config_nkeys(); k++) {
		const struct key_entry *e = config_key(k);
		char *field;
		size_t used = 0;

		if (!e->model || e->model == model || !(s->set & BIT(k)))
			continue;
		t = config_model_key(k, model);
		if (t == config_nkeys())
			t = config_model_key(config_find_key(SEC_DISK, e->row->name), model);
		if (t < config_nkeys() && (s->set & BIT(t))) {
			s->set &= ~BIT(k);
			*set &= ~BIT(k);
			continue;
		}
		field = s->device ? (char *)&c->devices[s->device - 1] + e->dev_offset
				  : (char *)c + e->offset;
		config_format_field(k, field, v, sizeof(v));
		config_where(s, k, at, sizeof(at));
		config_label(s, k, lb, sizeof(lb));
		model_from(s, from, sizeof(from));
		if (!s->device && place_after(scope_place(s, km), scope_place(s, k))) {
			snprintf(note, sizeof(note), "ignored: %s%s %s = %s (%s does not read it)",
				 at, lb, e->row->name, v, from);
			if (add_note(st, note)) {
				config_seterr(err, errlen, "out of memory");
				return -ENOMEM;
			}
			/* It and its twins (one line wrote them all) take their defaults again. */
			for (t = k; t < config_nkeys(); t = config_twin(t)) {
				if (config_key(t)->model != model && (s->set & BIT(t))) {
					if (config_key(t)->row->def)
						(void)config_parse_value(
						    t, (char *)c + config_key(t)->offset,
						    config_key(t)->row->def, ',', why, sizeof(why));
					s->set &= ~BIT(t);
					*set &= ~BIT(t);
				}
			}
			continue;
		}
		owners[0] = '\0';
		for (t = config_find_key(SEC_DISK, e->row->name);
		     t < config_nkeys() && used < sizeof(owners); t = config_twin(t))
			used += (size_t)snprintf(owners + used, sizeof(owners) - used, "%s%s",
						 used ? " or " : "", config_key(t)->model->name);
		config_disk_keys(model, s->device != 0, list, sizeof(list));
		config_seterr(err, errlen,
			      "%s%s %s = %s: %s has no key %s; it is a key of model %s: write "
			      "model = %s before it (keys with model = %s: %s)",
			      at, lb, e->row->name, v, from, e->row->name, owners, owners,
			      model ? model->name : "none", list);
		return -EINVAL;
	}
	return 0;
}

/*
 * The [disk] keys of each scope, [disk] (main) and each [device "NAME"]
 * section: keys of a model the scope did not choose are refused (or
 * dropped, drop_foreign_model_keys()), then the chosen model checks its
 * own keys.  No model's check runs for another's keys.
 */
static int check_disk(const struct sfs_config *c, struct config_state *st, char *err, size_t errlen)
{
	struct config_scope s = {
	    .c = c, .st = st, .rule = -1, .set = st ? st->set : 0, .disk = &c->disk};
	size_t d;
	int rc;

	for (d = 0; d <= c->ndevices; d++) {
		if (d) {
			s.device = d;
			s.disk = &c->devices[d - 1].disk;
			s.set = st->devices[d - 1].set;
		}
		if (st && (rc = drop_foreign_model_keys(&s, err, errlen)))
			return rc;
		if (s.disk->model && s.disk->model->check &&
		    (rc = s.disk->model->check(&s, disk_model_params(s.disk, s.disk->model), err,
					       errlen)))
			return rc;
	}
	return 0;
}

/*
 * Of main's stack and each [device "NAME"]'s: a key of a layer that the
 * stack does not have is refused (it would do nothing), and each layer of
 * the stack checks its own keys.  A registered disk model's table begins
 * with struct registry_head (disk_model.h), which names it.
 */
static int check_layers(const struct sfs_config *c, struct config_state *st, char *err,
			size_t errlen)
{
	struct config_scope s = {.c = c, .st = st, .rule = -1, .set = st ? st->set : 0};
	char where[600], label[300], why[256], list[CONFIG_LAYERS_MAX * CONFIG_NAME_MAX];
	size_t d, i, j;

	for (d = 0; d <= c->ndevices; d++) {
		const struct config_layers *stack =
		    d ? &c->devices[d - 1].layers : &c->device.layers;
		const unsigned char *data = d ? c->devices[d - 1].layer_data : c->device.layer_data;
		unsigned klayers = config_find_key(SEC_DEVICE, "layers");

		if (d) {
			s.device = d;
			s.set = st ? st->devices[d - 1].set : 0;
		}
		for (i = 0; i < config_layer_count(); i++) {
			const struct config_layer *l = config_layer_at(i);
			bool in = config_layers_have(stack, l->name);
			unsigned blame = klayers;
			const struct disk_params *disk = d ? &c->devices[d - 1].disk : &c->disk;

			if ((l->flags & CONFIG_LAYER_DISK) && !in && disk->model) {
				config_where(&s, klayers, where, sizeof(where));
				config_format_layers(stack, list, sizeof(list));
				config_seterr(err, errlen,
					      "%s%s layers = %s has no layer '%s', which runs the "
					      "[disk] model %s: add it (above base), or set [disk] "
					      "model = none",
					      where,
					      d ? config_section_label(SEC_NAMED_DEVICE,
								       c->devices[d - 1].name,
								       label, sizeof(label))
						: "[device]",
					      list, l->name,
					      ((const struct registry_head *)disk->model)->name);
				return -EINVAL;
			}

			for (j = 0; j < l->nkeys; j++) {
				unsigned k = config_key_id(&l->keys[j]);

				if (k == config_nkeys() || !(s.set & BIT(k)))
					continue;
				blame = k;
				if (in)
					break;
				config_label(&s, k, label, sizeof(label));
				config_where(&s, k, where, sizeof(where));
				config_format_layers(stack, list, sizeof(list));
				config_seterr(err, errlen,
					      "%s%s %s is a key of layer '%s', which this device's "
					      "stack does not have (layers = %s): add the layer to "
					      "layers, or remove the key",
					      where, label, l->keys[j].name, l->name, list);
				return -EINVAL;
			}
			if (!in || !l->check ||
			    !l->check(config_layer_data(l, data), why, sizeof(why)))
				continue;
			if (blame == config_nkeys())
				where[0] = '\0';
			else
				config_where(&s, blame, where, sizeof(where));
			config_seterr(err, errlen, "%s%s layer '%s': %s", where,
				      d ? config_section_label(SEC_NAMED_DEVICE,
							       c->devices[d - 1].name, label,
							       sizeof(label))
					: "[device]",
				      l->name, why);
			return -EINVAL;
		}
	}
	return 0;
}

/* Every [device "NAME"] has a backing; @fp (of rule @rule, -1: global) names a known device. */
static int check_devices(const struct sfs_config *c, const struct config_state *st, char *err,
			 size_t errlen)
{
	size_t i;

	for (i = 0; i < c->ndevices; i++) {
		const struct device_conf *d = &c->devices[i];

		if (!d->backing) {
			config_seterr(err, errlen,
				      "%s:%u: [device \"%s\"] has no backing = PATH (a file or "
				      "block device); every [device \"NAME\"] section needs one",
				      d->file, d->line, d->name);
			return -EINVAL;
		}
	}
	return 0;
}

static int check_rule_device(const struct config_scope *s, char *err, size_t errlen)
{
	unsigned k = config_core_id(CK_LAYOUT_DEVICE);
	char at[400], lb[300], list[CONFIG_NAME_MAX * (CONFIG_MAX_DEVICES + 1) + 64];
	size_t used, i;

	if (config_device_index(s->c, s->fp->device) >= 0)
		return 0;
	used = (size_t)snprintf(list, sizeof(list), "main");
	for (i = 0; i < s->c->ndevices && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, ", %s",
					 s->c->devices[i].name);
	config_seterr(err, errlen,
		      "%s%s device = %s: no such device; allowed: %s (main is BACKING, the others "
		      "[device \"NAME\"] sections)",
		      config_where(s, k, at, sizeof(at)), config_label(s, k, lb, sizeof(lb)),
		      s->fp->device, list);
	return -EINVAL;
}

void config_drop_builtin_rules(struct sfs_config *c)
{
	struct config_state *st = config_state_get(c);

	/* Built-in rules come last (config_finish()): dropping them moves no other. */
	while (c->nrules && st && !st->rules[c->nrules - 1].file) {
		free(c->rules[c->nrules - 1].glob);
		c->nrules--;
	}
}

/*
 * Order matters: the global scope drops its ignored keys before the rules
 * copy what they inherit, and the rules inherit the global values before
 * auto keys are resolved (@raw), so that each rule resolves them with its
 * own extent_size.
 */
int config_finish(struct sfs_config *c, uint64_t device_size, char *err, size_t errlen)
{
	struct config_state *st;
	struct sfs_config builtin;
	struct file_params raw;
	struct config_scope s;
	uint64_t device, rdev;
	bool have_shm = false;
	int di;
	size_t i;
	long r;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	st = config_state_get(c);
	if (!st) {
		config_seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	device = c->device.size ? c->device.size : device_size;
	c->device.effective_size = device;
	config_init(&builtin); /* the built-in values; owns nothing */
	unresolve(&c->defaults, &st->autoset);
	rc = check_disk(c, st, err, errlen);
	if (!rc)
		rc = check_devices(c, st, err, errlen);
	if (!rc)
		rc = check_layers(c, st, err, errlen);
	if (rc)
		return rc;
	s = (struct config_scope){.c = c,
				  .st = st,
				  .rule = -1,
				  .fp = &c->defaults,
				  .set = st->set,
				  .autoset = &st->autoset};
	rc = drop_unused_keys(&s, &builtin.defaults, err, errlen);
	if (rc)
		return rc;
	raw = c->defaults;
	resolve_auto(&s, &c->defaults, device);
	rc = check_rule_device(&s, err, errlen);
	if (!rc)
		rc = check_scope(&s, device, err, errlen);
	if (rc)
		return rc;
	for (i = 0; i < c->nrules; i++)
		if (strcmp(c->rules[i].glob, "*-shm") == 0)
			have_shm = true;
	if (!have_shm) {
		/*
		 * SQLite's WAL index (the -shm file) is mmapped, and libfuse 3.14
		 * cannot mmap a direct-I/O file: kernel cache mode.
		 */
		r = config_add_rule(c, "*-shm", 0, NULL);
		if (r < 0) {
			config_seterr(err, errlen, "out of memory");
			return (int)r;
		}
		c->rules[r].params.cache.mode = CACHE_KERNEL;
		st->rules[r].set = BIT(K_CACHE_MODE);
	}
	for (i = 0; i < c->nrules; i++) {
		struct file_rule *rule = &c->rules[i];
		struct rule_state *rs = &st->rules[i];
		unsigned k;

		unresolve(&rule->params, &rs->autoset);
		for (k = 0; k < config_nkeys(); k++)
			if (config_rule_key(k) && !(rs->set & BIT(k)))
				config_copy_key(&rule->params, &raw, k);
		s = (struct config_scope){.c = c,
					  .st = st,
					  .rule = (long)i,
					  .fp = &rule->params,
					  .set = rs->set,
					  .autoset = &rs->autoset,
					  .glob = rule->glob};
		rc = drop_unused_keys(&s, &raw, err, errlen);
		if (rc)
			return rc;
		rc = check_rule_device(&s, err, errlen);
		if (rc)
			return rc;
		di = config_device_index(c, rule->params.device);
		rdev = di > 0 ? (c->devices[di - 1].size ? c->devices[di - 1].size
							 : c->devices[di - 1].effective_size)
			      : device;
		resolve_auto(&s, &c->defaults, rdev);
		rc = check_scope(&s, rdev, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

const struct file_params *config_for_path(const struct sfs_config *c, const char *path)
{
	size_t i;

	for (i = 0; i < c->nrules; i++)
		if (fnmatch(c->rules[i].glob, path, 0) == 0)
			return &c->rules[i].params;
	return &c->defaults;
}

bool config_writeback(const struct sfs_config *c, char *why, size_t len)
{
	const struct config_state *st = c->state;
	const char *none = c->defaults.cache.mode == CACHE_NONE ? "[cache] mode = none" : NULL;
	bool own_kernel = c->defaults.cache.mode == CACHE_KERNEL;
	size_t i;

	if (why && len)
		why[0] = '\0';
	for (i = 0; i < c->nrules; i++) {
		bool builtin = st && !st->rules[i].file;

		if (c->rules[i].params.cache.mode == CACHE_NONE && !none)
			none = c->rules[i].glob;
		else if (c->rules[i].params.cache.mode == CACHE_KERNEL && !builtin)
			own_kernel = true;
	}
	if (!c->cache_writeback || !none)
		return c->cache_writeback;
	if (why && len && own_kernel)
		snprintf(why, len,
			 "cache.writeback is off for this mount: it has files in both cache modes "
			 "(%s%s%s), and the kernel's write-back cache would keep the size and "
			 "times of every file, a direct-I/O file's going stale; set "
			 "cache.writeback = false, or cache.mode = kernel for every file",
			 none[0] == '[' ? "" : "[file \"", none,
			 none[0] == '[' ? "" : "\"] cache.mode = none");
	return false;
}
