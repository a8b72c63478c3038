/*
 * Writing the configuration: config_write_ini(), the effective values as
 * an INI file that loads back to the same configuration (shown in
 * MOUNTPOINT/.scatterfs/config), and config_write_help(), the key list of
 * --help.  Both walk the key list (config_keys.c), so a new key appears in
 * them without an edit here.
 *
 * Where a value came from is a comment line above the key rather than a
 * trailing one: INI readers other than inih (Python's configparser, awk
 * scripts splitting on '=') take a trailing comment as part of the value,
 * and a long origin would push a key line past inih's line limit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_i.h"
#include "disk_model.h"
#include "size.h"

/*
 * "# set at FILE:LINE" or "# set by -o OPTION" for key @k, written in rule
 * @rule (or, when @rule < 0, the global sections); nothing for a value
 * nobody wrote.  " (auto)" when config_finish() resolved the value from auto.
 */
static void write_origin(FILE *f, const struct sfs_config *c, long rule, unsigned k)
{
	const struct config_state *st = c->state;
	const char *file = NULL, *option = NULL;
	config_keyset autoset;
	unsigned line = 0;
	char *text;

	if (!st)
		return;
	if (rule >= 0) {
		const struct rule_state *rs = &st->rules[rule];

		autoset = rs->autoset;
		if (rs->set & BIT(k)) {
			file = rs->kfile[k];
			line = rs->line[k];
		}
	} else {
		autoset = st->autoset;
		if ((st->set & BIT(k)) && st->origin[k].option)
			option = st->origin[k].option;
		else if (st->set & BIT(k)) {
			file = st->origin[k].file;
			line = st->origin[k].line;
		}
	}
	if (!file && !option)
		return;
	text = strdup(option ? option : file);
	if (text)
		config_one_line(text); /* a newline would end the comment */
	if (option)
		fprintf(f, "# set by -o %s", text ? text : "?");
	else
		fprintf(f, "# set at %s:%u", text ? text : "?", line);
	fprintf(f, "%s\n", (autoset & BIT(k)) ? " (auto)" : "");
	free(text);
}

/* Writes the rule keys of @fp (of rule @rule, < 0: global); keys its pattern does not read become
 * comments. */
static void write_params(FILE *f, const struct sfs_config *c, const struct file_params *fp,
			 long rule, bool with_headers)
{
	enum section cur = SEC_NONE;
	char v[CONFIG_LINE_MAX]; /* a value may be a path as long as a line allows */
	unsigned k;

	for (k = 0; k < config_nkeys(); k++) {
		const struct key_entry *e = config_key(k);

		/* The global sections also hold mount-wide keys (cache.writeback). */
		if (!config_rule_key(k) &&
		    !(rule < 0 && (e->sec == SEC_LAYOUT || e->sec == SEC_AUTOEXTEND ||
				   e->sec == SEC_CACHE)))
			continue;
		if (with_headers && e->sec != cur) {
			cur = e->sec;
			fprintf(f, "\n[%s]\n", config_section_names[cur]);
		}
		config_format_value(c, fp, k, v, sizeof(v));
		if (e->pattern && e->pattern != fp->layout.pattern) {
			fprintf(f, "# %s = %s (only the %s pattern reads it)\n", e->row->name, v,
				pattern_name(e->pattern));
		} else {
			write_origin(f, c, rule, k);
			fprintf(f, "%s = %s\n", e->row->name, v);
		}
	}
}

/*
 * Whether key @e is a key of a layer that @stack does not have: it is then
 * written as a comment, since loading it back would be refused (a key of
 * a layer not in the stack does nothing).
 */
static bool other_layer(FILE *f, const struct key_entry *e, const struct config_layers *stack,
			const char *v)
{
	if (!e->layer || config_layers_have(stack, e->layer->name))
		return false;
	fprintf(f, "# %s = %s (only the %s layer reads it; not in layers)\n", e->row->name, v,
		e->layer->name);
	return true;
}

/* [device "NAME"] section @i: its backing, then every key it can set, with their origins. */
static void write_device(FILE *f, const struct sfs_config *c, size_t i)
{
	const struct device_conf *d = &c->devices[i];
	const struct device_state *ds = c->state ? &c->state->devices[i] : NULL;
	char v[CONFIG_LINE_MAX], *text;
	unsigned k;

	fprintf(f, "\n[device \"%s\"]\n", d->name);
	if (ds && ds->backing_line)
		fprintf(f, "# set at %s:%u\n", ds->backing_file, ds->backing_line);
	text = strdup(d->backing ? d->backing : "");
	if (text)
		config_one_line(text);
	fprintf(f, "backing = %s\n", text ? text : "?");
	free(text);
	for (k = 0; k < config_nkeys(); k++) {
		const struct key_entry *e = config_key(k);

		if (e->dev_offset == NO_DEV_OFFSET || (e->model && e->model != d->disk.model))
			continue; /* not a device key, or another model's */
		if (k == K_DEVICE_SIZE && !d->size && d->effective_size) {
			format_size(d->effective_size, v, sizeof(v));
			fprintf(f, "# the backing's size\n");
		} else {
			config_format_field(k, (const char *)d + e->dev_offset, v, sizeof(v));
		}
		if (other_layer(f, e, &d->layers, v))
			continue;
		if (ds && (ds->set & BIT(k))) {
			text = strdup(ds->kfile[k]);
			if (text)
				config_one_line(text);
			fprintf(f, "# set at %s:%u\n", text ? text : "?", ds->line[k]);
			free(text);
		}
		fprintf(f, "%s = %s\n", e->row->name, v);
	}
}

/* The [fault "NAME"] sections as the files wrote them, key by key. */
static void write_faults(FILE *f, const struct sfs_config *c)
{
	for (size_t i = 0; i < c->nfaults; i++) {
		const struct config_fault *r = &c->faults[i];
		char *file = strdup(r->file ? r->file : "?");

		if (file)
			config_one_line(file);
		fprintf(f, "\n# set at %s:%u\n[fault \"%s\"]\n", file ? file : "?", r->line,
			r->name);
		for (size_t k = 0; k < r->nkv; k++)
			fprintf(f, "# set at %s:%u\n%s = %s\n", file ? file : "?", r->kv[k].line,
				r->kv[k].key, r->kv[k].value);
		free(file);
	}
}

char *config_write_ini(const struct sfs_config *c)
{
	return config_write_ini_faults(c, true);
}

char *config_write_ini_faults(const struct sfs_config *c, bool faults)
{
	char *out = NULL, v[CONFIG_LINE_MAX];
	size_t len = 0, i;
	FILE *f = open_memstream(&out, &len);
	unsigned k;

	if (!f)
		return NULL;
	fprintf(f, "# scatterfs effective configuration (every key; sizes in bytes, K/M/G/T = "
		   "powers of 1024)\n");
	/* Later files override earlier ones key by key; "# set ..." above a key says which won. */
	for (i = 0; c->state && i < c->state->nfiles; i++) {
		const struct config_file *cf = &c->state->files[i];
		char *path = strdup(cf->path), *parent = cf->parent ? strdup(cf->parent) : NULL;

		if (path)
			config_one_line(path);
		if (parent)
			config_one_line(parent);
		if (cf->parent)
			fprintf(f, "# loaded from %s (include = at %s:%u)\n", path ? path : "?",
				parent ? parent : "?", cf->parent_line);
		else
			fprintf(f, "# loaded from %s\n", path ? path : "?");
		free(path);
		free(parent);
	}
	if (c->source && !(c->state && c->state->nfiles)) {
		char *src = strdup(c->source);

		if (src)
			config_one_line(src); /* a newline in the path would end the comment */
		fprintf(f, "# loaded from %s\n", src ? src : "?");
		free(src);
	}
	/* Keys dropped because the pattern was changed later (see drop_unused_keys()). */
	for (i = 0; c->state && i < c->state->nnotes; i++)
		fprintf(f, "# %s\n", c->state->notes[i]);
	fprintf(f, "\n[device]\n");
	for (k = 0; k < config_nkeys(); k++)
		if (config_key(k)->sec == SEC_DEVICE) {
			if (k == K_DEVICE_SIZE && c->device.effective_size) {
				/* The size in use, which "0 = the backing's size" does not tell. */
				format_size(c->device.effective_size, v, sizeof(v));
				if (!c->device.size)
					fprintf(f, "# the backing's size\n");
			} else {
				config_format_value(c, &c->defaults, k, v, sizeof(v));
			}
			if (other_layer(f, config_key(k), &c->device.layers, v))
				continue;
			write_origin(f, c, -1, k);
			fprintf(f, "%s = %s\n", config_key(k)->row->name, v);
		}
	write_params(f, c, &c->defaults, -1, true);
	fprintf(f, "\n[log]\n");
	if (c->log.path) {
		write_origin(f, c, -1, config_core_id(CK_LOG_PATH));
		fprintf(f, "path = %s\n", c->log.path);
	} else {
		fprintf(f, "# path = (none: no request log)\n");
	}
	config_format_value(c, &c->defaults, K_LOG_OPS, v, sizeof(v));
	write_origin(f, c, -1, K_LOG_OPS);
	fprintf(f, "ops = %s\n", v);
	fprintf(f, "\n[disk]\n");
	for (k = 0; k < config_nkeys(); k++)
		if (config_key(k)->sec == SEC_DISK &&
		    (!config_key(k)->model || config_key(k)->model == c->disk.model)) {
			config_format_value(c, &c->defaults, k, v, sizeof(v));
			write_origin(f, c, -1, k);
			fprintf(f, "%s = %s\n", config_key(k)->row->name, v);
		}
	for (i = 0; i < c->ndevices; i++)
		write_device(f, c, i);
	for (i = 0; i < c->nrules; i++) {
		const struct file_rule *r = &c->rules[i];

		if (r->line == 0) {
			/*
			 * Commented out: loading it back would make it a user rule.
			 * Uncommented, it is a valid rule with the same effect.
			 */
			fprintf(f,
				"\n# Built in: scatterfs adds this rule when no rule is written "
				"for \"%s\" files\n",
				r->glob);
			fprintf(f, "# (SQLite's memory-mapped WAL index needs the page cache).  "
				   "It is in effect;\n");
			fprintf(f, "# a [file \"%s\"] section of your own replaces it.\n", r->glob);
			fprintf(f, "# [file \"%s\"]\n", r->glob);
			fprintf(f, "# cache.mode = %s\n", cache_mode_name(r->params.cache.mode));
			continue;
		}
		fprintf(f, "\n[file \"%s\"]\n", r->glob);
		write_params(f, c, &r->params, (long)i, false);
	}
	if (faults)
		write_faults(f, c);
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

void config_write_help(FILE *f)
{
	char v[CONFIG_LINE_MAX], name[64];
	struct sfs_config c;
	unsigned k;

	config_init(&c);
	for (k = 0; k < config_nkeys(); k++) {
		const struct key_entry *e = config_key(k);
		char names[512] = "";

		snprintf(name, sizeof(name), "%s.%s", e->row->section, e->row->name);
		config_format_value(&c, &c.defaults, k, v, sizeof(v));
		/* The registered patterns and models, from their registries. */
		if (e->row->type == CONFIG_PATTERN || e->row->type == CONFIG_MODEL) {
			size_t used = (size_t)snprintf(names, sizeof(names), "; one of ");
			if (e->row->type == CONFIG_PATTERN)
				config_pattern_names(names + used, sizeof(names) - used);
			else
				config_model_names(names + used, sizeof(names) - used);
		}
		if (e->row->parse == config_parse_layers) {
			size_t used = (size_t)snprintf(names, sizeof(names), "; one of ");
			config_layer_names(names + used, sizeof(names) - used);
		}
		if (e->layer)
			fprintf(f, "    %-27s %s (%s layer; default %s)\n", name, e->row->help,
				e->layer->name, v);
		else if (e->pattern || e->model)
			fprintf(f, "    %-27s %s%s (%s %s; default %s)\n", name, e->row->help,
				names, e->pattern ? e->pattern->name : e->model->name,
				e->pattern ? "pattern" : "model", v);
		else if (e->row->def)
			fprintf(f, "    %-27s %s%s (default %s)\n", name, e->row->help, names, v);
		else
			fprintf(f, "    %-27s %s%s (default unset)\n", name, e->row->help, names);
	}
	config_free(&c);
}
