/*
 * Reading the configuration: the INI file (with inih) and the command
 * line's -o SECTION.KEY=VALUE overrides, into struct sfs_config and the
 * private state that config_finish() needs (which keys were set, where).
 *
 * Line numbers.  Debian's inih is built without INI_HANDLER_LINENO, so the
 * file is read into memory and handed to ini_parse_stream() one line per
 * reader call; the reader counts lines, rejects bytes that are not UTF-8,
 * and parses section headers itself, because inih truncates section names
 * at 50 bytes (long globs) and says nothing about a section without keys
 * (an unknown or duplicated one would pass).  inih sees "[s]" for each
 * header and does what it is good at: splitting "key = value" and
 * stripping comments.  The reader also strips leading blanks, which turns
 * off inih's multi-line continuation values (a continuation would look
 * like a duplicated key).  Long lines: Debian's inih reads into a line
 * buffer of 200 bytes (INI_MAX_LINE, on the stack), too short for a path;
 * a key line that does not fit it is split by the reader itself, with
 * inih's own rules (the first '=' or ':', an inline comment from a ';'
 * after a blank), and inih gets "key=" while the value waits in
 * x->long_value for the handler.  A line may hold CONFIG_LINE_MAX
 * characters: a value as long as a path (PATH_MAX) with its key and
 * comment; a longer one is an error, never silently cut.
 *
 * Composition.  Several files load into one configuration in order
 * (config_load_file() once per config= option), and a file's "include =
 * FILE" line loads FILE at that point, as if its text stood there but with
 * its own sections.  A later value overrides an earlier one key by key;
 * what makes an error (a duplicated section or key) is judged within one
 * file, so that a preset can be laid over a layout.  Each file read gets
 * a config_file entry, each value an origin (file, line and a sequence
 * number), which is what config_finish() ranks and config_write_ini()
 * shows.  An include cycle is found by the device and inode of the files
 * being read (the chain of parse_ctx), not by their names, which can
 * differ for one file.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

#include "config_i.h"

/* A configuration file is text written by hand; anything larger is a wrong path. */
#define CONFIG_MAX_BYTES (1u << 20)

/* include = lines nest at most this deep (each level holds a parse on the stack). */
#define CONFIG_MAX_INCLUDE_DEPTH 16

/* ---- private state ---- */

struct config_state *config_state_get(struct sfs_config *c)
{
	if (!c->state)
		c->state = calloc(1, sizeof(*c->state));
	return c->state;
}

void config_state_free(struct config_state *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < CONFIG_MAX_KEYS; i++)
		free(st->origin[i].option);
	for (i = 0; i < st->nfiles; i++)
		free(st->files[i].path);
	free(st->files);
	for (i = 0; i < st->nnotes; i++)
		free(st->notes[i]);
	free(st->notes);
	free(st->rules);
	free(st->devices);
	free(st);
}

/*
 * Keeps a copy of @path for origins, read by an include = at @parent's
 * @line (NULL for a config= file); returns the copy, NULL on ENOMEM.
 */
static const char *state_add_file(struct config_state *st, const char *path, const char *parent,
				  unsigned line)
{
	struct config_file *v = realloc(st->files, (st->nfiles + 1) * sizeof(*v));
	char *copy;

	if (!v)
		return NULL;
	st->files = v;
	copy = strdup(path);
	if (!copy)
		return NULL;
	st->files[st->nfiles++] = (struct config_file){copy, parent, line};
	return copy;
}

/*
 * Doubles (from @first) the capacity *@cap of two arrays kept side by side,
 * *@a of @asize-byte items and *@b of @bsize-byte ones.  0 or -ENOMEM (both
 * arrays still valid, *@cap unchanged).
 */
static int grow_pair(void **a, size_t asize, void **b, size_t bsize, size_t *cap, size_t first)
{
	size_t n = *cap ? 2 * *cap : first;
	void *na = realloc(*a, n * asize);
	if (!na)
		return -ENOMEM;
	*a = na;
	void *nb = realloc(*b, n * bsize);
	if (!nb)
		return -ENOMEM;
	*b = nb;
	*cap = n;
	return 0;
}

long config_add_rule(struct sfs_config *c, const char *glob, unsigned line, const char *file)
{
	struct config_state *st = config_state_get(c);
	struct file_rule *r;
	char *copy;

	if (!st)
		return -ENOMEM;
	if (c->nrules == st->cap && grow_pair((void **)&c->rules, sizeof(*c->rules),
					      (void **)&st->rules, sizeof(*st->rules), &st->cap, 8))
		return -ENOMEM;
	copy = strdup(glob);
	if (!copy)
		return -ENOMEM;
	r = &c->rules[c->nrules];
	r->glob = copy;
	r->params = c->defaults;
	r->line = line;
	memset(&st->rules[c->nrules], 0, sizeof(st->rules[0]));
	st->rules[c->nrules].file = file;
	return (long)c->nrules++;
}

long config_add_device(struct sfs_config *c, const char *name, unsigned line, const char *file)
{
	struct config_state *st = config_state_get(c);
	struct sfs_config builtin;
	struct device_conf *d;

	if (!st)
		return -ENOMEM;
	if (c->ndevices == st->devcap &&
	    grow_pair((void **)&c->devices, sizeof(*c->devices), (void **)&st->devices,
		      sizeof(*st->devices), &st->devcap, 4))
		return -ENOMEM;
	/* The built-in values, not main's: each device is described by its own section. */
	config_init(&builtin);
	d = &c->devices[c->ndevices];
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->size = builtin.device.size;
	d->block_size = builtin.device.block_size;
	d->direct = builtin.device.direct;
	d->disk = builtin.disk;
	d->layers = builtin.device.layers;
	memcpy(d->layer_data, builtin.device.layer_data, sizeof(d->layer_data));
	d->file = file;
	d->line = line;
	config_free(&builtin);
	memset(&st->devices[c->ndevices], 0, sizeof(st->devices[0]));
	return (long)c->ndevices++;
}

void config_free(struct sfs_config *c)
{
	size_t i;

	for (i = 0; i < c->ndevices; i++)
		free(c->devices[i].backing);
	free(c->devices);
	for (i = 0; i < c->nrules; i++)
		free(c->rules[i].glob);
	free(c->rules);
	for (i = 0; i < c->nfaults; i++) {
		for (size_t j = 0; j < c->faults[i].nkv; j++) {
			free(c->faults[i].kv[j].key);
			free(c->faults[i].kv[j].value);
		}
		free(c->faults[i].kv);
		free(c->faults[i].name);
	}
	free(c->faults);
	free(c->log.path);
	free(c->source);
	config_state_free(c->state);
	memset(c, 0, sizeof(*c));
}

/* ---- INI file ---- */

struct parse_ctx {
	struct sfs_config *c;
	struct config_state *st;
	struct parse_ctx *parent; /* the file whose include = line is being read; NULL */
	unsigned depth;		  /* of include = lines above this file */
	dev_t dev;		  /* the file's identity, for include cycles */
	ino_t ino;
	const char *path; /* as the caller named the file, for messages */
	const char *file; /* state's copy, for origins */
	const char *buf;
	size_t len, pos;
	unsigned line;			       /* of the line last handed to inih */
	bool content;			       /* a section or key seen */
	enum section sec;		       /* current section */
	long rule;			       /* current rule index in [file] sections */
	long device;			       /* current index in c->devices in [device "NAME"] */
	long fault;			       /* current index in c->faults in [fault "NAME"] */
	unsigned dev_line[CONFIG_MAX_DEVICES]; /* where this file's section of each began; 0 */
	unsigned sec_line[NGLOBAL_SECTIONS];   /* where each global section began; 0 = not seen */
	config_keyset sec_keys;		       /* keys the current section wrote */
	unsigned key_line[CONFIG_MAX_KEYS];    /* ... and where */
	size_t *opened;			       /* the rules this file has a section of (malloc'd) */
	unsigned *opened_line;		       /* ... and where each section began */
	size_t nopened;
	char *long_value; /* the value of a line longer than inih's buffer (malloc'd); NULL */
	char *err;
	size_t errlen;
	int rc; /* first error; 0 while none */
};

/*
 * Length in bytes of the valid UTF-8 sequence at @s (at most @n bytes),
 * 0 when it is not one (RFC 3629: no overlongs, no surrogates, <= U+10FFFF).
 */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

__attribute__((format(printf, 2, 3))) static void parse_fail(struct parse_ctx *x, const char *fmt,
							     ...)
{
	char msg[512];
	va_list ap;

	if (x->rc)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	config_seterr(x->err, x->errlen, "%s:%u: %s", x->path, x->line, msg);
	x->rc = -EINVAL;
}

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* After a header's ']': only blanks or a comment may follow. */
static bool header_tail_ok(const char *p, const char *end)
{
	while (p < end && is_blank(*p))
		p++;
	return p == end || *p == ';' || *p == '#';
}

/* Notes that this file has a section of rule @r, which began at the current line. */
static int remember_rule(struct parse_ctx *x, size_t r)
{
	size_t *o = realloc(x->opened, (x->nopened + 1) * sizeof(*o));
	unsigned *l;

	if (!o)
		return -ENOMEM;
	x->opened = o;
	l = realloc(x->opened_line, (x->nopened + 1) * sizeof(*l));
	if (!l)
		return -ENOMEM;
	x->opened_line = l;
	x->opened[x->nopened] = r;
	x->opened_line[x->nopened++] = x->line;
	return 0;
}

/*
 * A [device "NAME"] header, from the opening quote @q: makes the device
 * current, declaring it unless an earlier file did (its keys are then
 * overridden one by one, as a later file's [disk] overrides the earlier).
 */
static int parse_device_header(struct parse_ctx *x, const char *q, const char *end)
{
	const char *close = memchr(q + 1, '"', (size_t)(end - q - 1)), *p;
	char name[CONFIG_NAME_MAX + 8], why[200];
	long d;

	if (!close) {
		parse_fail(x, "[device \"...: missing closing '\"' of the name");
		return x->rc;
	}
	p = close + 1;
	while (p < end && is_blank(*p))
		p++;
	if (p == end || *p != ']' || !header_tail_ok(p + 1, end)) {
		parse_fail(x, "[device \"NAME\"]: expected ']' after the name and nothing but a "
			      "comment after it");
		return x->rc;
	}
	snprintf(name, sizeof(name), "%.*s",
		 (int)(close - q - 1 < CONFIG_NAME_MAX + 4 ? close - q - 1 : CONFIG_NAME_MAX + 4),
		 q + 1);
	if (config_check_name(name, why, sizeof(why))) {
		parse_fail(x, "[device \"%s\"]: %s", name, why);
		return x->rc;
	}
	if (strcmp(name, "main") == 0) {
		parse_fail(x, "[device \"main\"]: main is the command line's BACKING, configured "
			      "by the plain [device] and [disk] sections; name the other devices "
			      "differently");
		return x->rc;
	}
	d = config_device_index(x->c, name) - 1;
	if (d >= 0 && x->dev_line[d]) {
		parse_fail(x, "duplicated section [device \"%s\"] (first at line %u)", name,
			   x->dev_line[d]);
		return x->rc;
	}
	if (d < 0) {
		if (x->c->ndevices == CONFIG_MAX_DEVICES) {
			parse_fail(x, "[device \"%s\"]: at most %d [device \"NAME\"] sections",
				   name, CONFIG_MAX_DEVICES);
			return x->rc;
		}
		d = config_add_device(x->c, name, x->line, x->file);
		if (d < 0)
			return x->rc = (int)d;
	}
	x->dev_line[d] = x->line;
	x->sec = SEC_NAMED_DEVICE;
	x->device = d;
	return 0;
}

/*
 * A [fault "NAME"] header, from the opening quote @q: a new section whose
 * keys are kept as written for the fault layer.  A name given twice, in
 * this file or an earlier one, is refused: two rules cannot share a name.
 */
static int parse_fault_header(struct parse_ctx *x, const char *q, const char *end)
{
	const char *close = memchr(q + 1, '"', (size_t)(end - q - 1)), *p;
	struct config_fault *f;

	if (!close) {
		parse_fail(x, "[fault \"...: missing closing '\"' of the name");
		return x->rc;
	}
	p = close + 1;
	while (p < end && is_blank(*p))
		p++;
	if (p == end || *p != ']' || !header_tail_ok(p + 1, end)) {
		parse_fail(x, "[fault \"NAME\"]: expected ']' after the name and nothing but a "
			      "comment after it");
		return x->rc;
	}
	if (close == q + 1) {
		parse_fail(x, "[fault \"\"]: empty name");
		return x->rc;
	}
	for (size_t i = 0; i < x->c->nfaults; i++) {
		f = &x->c->faults[i];
		if ((size_t)(close - q - 1) == strlen(f->name) &&
		    memcmp(f->name, q + 1, (size_t)(close - q - 1)) == 0) {
			parse_fail(x, "duplicated section [fault \"%s\"] (first at %s:%u)", f->name,
				   f->file, f->line);
			return x->rc;
		}
	}
	f = realloc(x->c->faults, (x->c->nfaults + 1) * sizeof(*f));
	if (!f)
		return x->rc = -ENOMEM;
	x->c->faults = f;
	f += x->c->nfaults;
	memset(f, 0, sizeof(*f));
	f->name = strndup(q + 1, (size_t)(close - q - 1));
	if (!f->name)
		return x->rc = -ENOMEM;
	f->file = x->file;
	f->line = x->line;
	x->fault = (long)x->c->nfaults++;
	x->sec = SEC_FAULT;
	return 0;
}

/* One key of a [fault "NAME"] section: kept as written; a key twice is refused here. */
static int fault_key(struct parse_ctx *x, const char *label, const char *name, const char *value)
{
	struct config_fault *f = &x->c->faults[x->fault];
	struct config_fault_kv *kv;

	for (size_t i = 0; i < f->nkv; i++) {
		if (strcmp(f->kv[i].key, name) == 0) {
			parse_fail(x, "%s: duplicated key '%s' (first at line %u)", label, name,
				   f->kv[i].line);
			return 0;
		}
	}
	kv = realloc(f->kv, (f->nkv + 1) * sizeof(*kv));
	if (!kv) {
		x->rc = -ENOMEM;
		return 0;
	}
	f->kv = kv;
	kv += f->nkv;
	kv->key = strdup(name);
	kv->value = strdup(value);
	kv->line = x->line;
	f->nkv++;
	if (!kv->key || !kv->value) {
		x->rc = -ENOMEM;
		return 0;
	}
	return 1;
}

/* Parses the header in [@s, @end) (starting at '[') and makes it current.  Returns 0 or -errno. */
static int parse_header(struct parse_ctx *x, const char *s, const char *end)
{
	const char *p = s + 1, *q, *close;
	char name[64];
	size_t n;
	unsigned i;
	long r;

	x->sec_keys = 0;
	while (p < end && is_blank(*p))
		p++;
	if (end - p >= 4 && memcmp(p, "file", 4) == 0 &&
	    (p + 4 == end || is_blank(p[4]) || p[4] == '"' || p[4] == ']')) {
		char *glob;

		q = p + 4;
		while (q < end && is_blank(*q))
			q++;
		if (q == end || *q != '"') {
			parse_fail(x, "[file] needs a glob in double quotes: [file \"GLOB\"]");
			return x->rc;
		}
		close = memchr(q + 1, '"', (size_t)(end - q - 1));
		if (!close) {
			parse_fail(x, "[file \"...: missing closing '\"' of the glob");
			return x->rc;
		}
		if (close == q + 1) {
			parse_fail(x, "[file \"\"]: empty glob");
			return x->rc;
		}
		p = close + 1;
		while (p < end && is_blank(*p))
			p++;
		if (p == end || *p != ']' || !header_tail_ok(p + 1, end)) {
			parse_fail(x,
				   "[file \"GLOB\"]: expected ']' after the glob and nothing but a "
				   "comment after it");
			return x->rc;
		}
		glob = strndup(q + 1, (size_t)(close - q - 1));
		if (!glob)
			return x->rc = -ENOMEM;
		for (i = 0; i < x->nopened; i++) {
			if (strcmp(x->c->rules[x->opened[i]].glob, glob) == 0) {
				parse_fail(x, "duplicated section [file \"%s\"] (first at line %u)",
					   glob, x->opened_line[i]);
				free(glob);
				return x->rc;
			}
		}
		/*
		 * The same glob in an earlier file: one rule, at the place of
		 * its first declaration, whose keys this section overrides
		 * one by one, as a later file's [layout] does the global ones.
		 */
		for (r = 0; (size_t)r < x->c->nrules; r++)
			if (x->c->rules[r].line && strcmp(x->c->rules[r].glob, glob) == 0)
				break;
		if ((size_t)r == x->c->nrules)
			r = config_add_rule(x->c, glob, x->line, x->file);
		free(glob);
		if (r < 0)
			return x->rc = (int)r;
		if (remember_rule(x, (size_t)r))
			return x->rc = -ENOMEM;
		x->sec = SEC_FILE;
		x->rule = r;
		return 0;
	}
	if (end - p >= 6 && memcmp(p, "device", 6) == 0) {
		q = p + 6;
		while (q < end && is_blank(*q))
			q++;
		if (q < end && *q == '"')
			return parse_device_header(x, q, end);
	}
	if (end - p >= 5 && memcmp(p, "fault", 5) == 0 &&
	    (p + 5 == end || is_blank(p[5]) || p[5] == '"' || p[5] == ']')) {
		q = p + 5;
		while (q < end && is_blank(*q))
			q++;
		if (q < end && *q == '"')
			return parse_fault_header(x, q, end);
		parse_fail(x, "[fault] needs a name in double quotes: [fault \"NAME\"]");
		return x->rc;
	}
	close = memchr(p, ']', (size_t)(end - p));
	if (!close) {
		parse_fail(x, "section header without ']'");
		return x->rc;
	}
	if (!header_tail_ok(close + 1, end)) {
		parse_fail(x, "unexpected text after the section header's ']'");
		return x->rc;
	}
	q = close;
	while (q > p && is_blank(q[-1]))
		q--;
	n = (size_t)(q - p) < sizeof(name) - 1 ? (size_t)(q - p) : sizeof(name) - 1;
	memcpy(name, p, n);
	name[n] = '\0';
	for (i = 0; i < NGLOBAL_SECTIONS; i++)
		if (strcmp(name, config_section_names[i]) == 0)
			break;
	if (i == NGLOBAL_SECTIONS) {
		parse_fail(x,
			   "unknown section [%s]; allowed: [device], [layout], [autoextend], "
			   "[cache], [log], [disk], [file \"GLOB\"], [device \"NAME\"], "
			   "[fault \"NAME\"]",
			   name);
		return x->rc;
	}
	if (x->sec_line[i]) {
		parse_fail(x, "duplicated section [%s] (first at line %u)", name, x->sec_line[i]);
		return x->rc;
	}
	x->sec_line[i] = x->line;
	x->sec = (enum section)i;
	return 0;
}

/*
 * A key line [@s, @end) (blanks stripped) too long for inih's buffer @str
 * of @num bytes: split as inih's ini_parse_stream() splits a line (name
 * before the first '=' or ':', the value after it up to an inline comment
 * (';' after a blank), both stripped of blanks); inih gets "name=" and the
 * handler takes the value from x->long_value.
 */
static char *long_line(struct parse_ctx *x, const char *s, const char *end, char *str, int num)
{
	const char *sep, *v, *vend;
	bool was_blank = false;
	size_t klen;

	for (sep = s; sep < end && *sep != '=' && *sep != ':'; sep++) {
		if (was_blank && *sep == ';')
			break;
		was_blank = isspace((unsigned char)*sep);
	}
	if (sep == end || *sep == ';') {
		parse_fail(x, "'%.*s' is not 'key = value', a [section] or a comment", 60, s);
		return NULL;
	}
	for (klen = (size_t)(sep - s); klen > 0 && isspace((unsigned char)s[klen - 1]); klen--)
		;
	if (klen + 3 > (size_t)num) {
		parse_fail(x, "key '%.60s...' too long (more than %d characters)", s, num - 3);
		return NULL;
	}
	was_blank = false;
	for (vend = sep + 1; vend < end; vend++) {
		if (was_blank && *vend == ';')
			break;
		was_blank = isspace((unsigned char)*vend);
	}
	for (v = sep + 1; v < vend && isspace((unsigned char)*v); v++)
		;
	while (vend > v && isspace((unsigned char)vend[-1]))
		vend--;
	free(x->long_value);
	x->long_value = strndup(v, (size_t)(vend - v));
	if (!x->long_value) {
		x->rc = -ENOMEM;
		return NULL;
	}
	memcpy(str, s, klen);
	memcpy(str + klen, "=\n", 3);
	return str;
}

/*
 * inih's reader: hands over the next line of the buffer, with leading
 * blanks stripped (no continuation lines), comments as blank lines and
 * headers as "[s]", so that inih's line count stays ours.
 */
static char *reader(char *str, int num, void *stream)
{
	struct parse_ctx *x = stream;
	const char *s, *eol, *end, *p;
	size_t n;

	if (x->rc || x->pos >= x->len)
		return NULL;
	s = x->buf + x->pos;
	eol = memchr(s, '\n', x->len - x->pos);
	if (!eol)
		eol = x->buf + x->len;
	x->pos = (size_t)(eol - x->buf) + 1;
	x->line++;
	if (x->line == 1 && eol - s >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3; /* UTF-8 byte order mark */
	for (p = s; p < eol;) {
		size_t l = *p ? utf8_len((const unsigned char *)p, (size_t)(eol - p)) : 0;

		if (!l) {
			parse_fail(x, "not UTF-8 text (byte 0x%02x at column %u)",
				   (unsigned)(unsigned char)*p, (unsigned)(p - s) + 1);
			return NULL;
		}
		p += l;
	}
	while (s < eol && is_blank(*s))
		s++;
	end = eol;
	while (end > s && is_blank(end[-1]))
		end--;
	if (s == end || *s == ';' || *s == '#') {
		snprintf(str, (size_t)num, "\n");
		return str;
	}
	x->content = true;
	if (*s == '[') {
		if (parse_header(x, s, end))
			return NULL;
		snprintf(str, (size_t)num, "[s]\n");
		return str;
	}
	n = (size_t)(end - s);
	if (n > CONFIG_LINE_MAX) {
		parse_fail(x, "line too long (%zu characters; at most %d)", n, CONFIG_LINE_MAX);
		return NULL;
	}
	if (!memchr(s, '=', n) && !memchr(s, ':', n)) {
		parse_fail(x, "'%.*s' is not 'key = value', a [section] or a comment",
			   (int)(n > 60 ? 60 : n), s);
		return NULL;
	}
	if (n + 2 > (size_t)num)
		return long_line(x, s, end, str, num);
	memcpy(str, s, n);
	str[n] = '\n';
	str[n + 1] = '\0';
	return str;
}

static int include(struct parse_ctx *x, const char *value);

/* @value relative to the directory of @x's file unless absolute (malloc'd; NULL on ENOMEM). */
static char *beside(const struct parse_ctx *x, const char *value)
{
	const char *slash = strrchr(x->path, '/');
	char *path;

	if (value[0] == '/' || !slash)
		return strdup(value);
	if (asprintf(&path, "%.*s/%s", (int)(slash - x->path), x->path, value) < 0)
		return NULL;
	return path;
}

/*
 * preset = FILE in [device "NAME"]: the [disk] section of FILE (a preset
 * such as conf/hdd-7200.ini) becomes the device's model.  The file is
 * read as a configuration of its own, so its errors name its lines; its
 * other sections are not used.
 */
static int device_preset(struct parse_ctx *x, struct device_conf *d, struct device_state *ds,
			 const char *label, const char *value)
{
	struct sfs_config tmp;
	char *path, why[768];
	unsigned k;
	int rc;

	if (!*value) {
		parse_fail(x, "%s preset = : expected the name of a configuration file", label);
		return 0;
	}
	for (k = 0; k < config_nkeys(); k++)
		if ((x->sec_keys & BIT(k)) && config_key(k)->sec == SEC_DISK)
			break;
	if (k < config_nkeys()) {
		parse_fail(x,
			   "%s preset = %s: write preset = before the section's model keys "
			   "(it sets every [disk] key)",
			   label, value);
		return 0;
	}
	path = beside(x, value);
	if (!path) {
		x->rc = -ENOMEM;
		return 0;
	}
	config_init(&tmp);
	rc = config_load_file(&tmp, path, why, sizeof(why));
	if (rc == -ENOMEM) {
		x->rc = rc;
	} else if (rc) {
		parse_fail(x, "%s preset = %s: %s", label, value, why);
	} else {
		d->disk = tmp.disk;
		ds->preset_line = x->line;
		ds->preset_file = x->file;
		/* Each [disk] key of its model is the preset's now, at this line. */
		for (k = 0; k < config_nkeys(); k++)
			if (config_key(k)->sec == SEC_DISK &&
			    (!config_key(k)->model || config_key(k)->model == d->disk.model)) {
				ds->set |= BIT(k);
				ds->line[k] = x->line;
				ds->kfile[k] = x->file;
			}
	}
	config_free(&tmp);
	free(path);
	return x->rc ? 0 : 1;
}

/* One key of a [device "NAME"] section: backing, preset, or a [device] or [disk] key. */
/*
 * The key @name of section @sec (labelled @label in messages) on the
 * current line: its index, marked as written in this section, or
 * config_nkeys() after failing the parse (unknown, or written twice).
 */
static unsigned claim_key(struct parse_ctx *x, enum section sec, const char *label,
			  const char *name)
{
	char list[1024];
	unsigned k = config_find_key(sec, name);

	if (k == config_nkeys() && sec == SEC_FILE &&
	    (strcmp(name, "writeback") == 0 || strcmp(name, "cache.writeback") == 0)) {
		parse_fail(x,
			   "%s key '%s' is mount-wide (the kernel's write-back cache is one per "
			   "mount): set it in [cache]",
			   label, name);
		return k;
	}
	if (k == config_nkeys() && sec == SEC_NAMED_DEVICE && strcmp(name, "time_dilation") == 0) {
		parse_fail(x,
			   "%s key 'time_dilation' is mount-wide (one clock for every device): set "
			   "it in [disk]",
			   label);
		return k;
	}
	if (k == config_nkeys()) {
		config_allowed_keys(sec,
				    sec == SEC_NAMED_DEVICE ? x->c->devices[x->device].disk.model
							    : x->c->disk.model,
				    list, sizeof(list));
		parse_fail(x, "%s unknown key '%s'; allowed: %s", label, name, list);
		return k;
	}
	if (x->sec_keys & BIT(k)) {
		parse_fail(x, "%s duplicated key '%s' (first at line %u)", label, name,
			   x->key_line[k]);
		return config_nkeys();
	}
	x->sec_keys |= BIT(k);
	x->key_line[k] = x->line;
	return k;
}

/* Where a key's value is written: the global values (or a rule's), or a device's. */
struct apply_site {
	struct sfs_config *c;
	struct file_params *fp; /* &c->defaults or a rule's params */
	struct device_conf *d;	/* a [device "NAME"] section's device; NULL otherwise */
	char sep;		/* list items: ',' in files, ':' in -o */
};

static int apply_one(const struct apply_site *a, unsigned k, const char *value, char *why,
		     size_t len)
{
	if (a->d)
		return config_parse_value(k, (char *)a->d + config_key(k)->dev_offset, value,
					  a->sep, why, len);
	return config_apply_value(a->c, a->fp, k, value, a->sep, why, len);
}

/*
 * Writes @value to key @k and to its twins (config_twin(): the key of the
 * same name of every other disk model), so that whichever model the
 * configuration chooses in the end has it, wherever model = stands;
 * config_finish() drops the twins of the models not chosen.  The value
 * must suit the model in effect now (@cur) when it has the key, else at
 * least one of them.  *@took: the keys that took it.  0, or the refusal
 * (-EINVAL with @why set, -ENOMEM).
 */
static int apply_value(const struct apply_site *a, unsigned k, const char *value,
		       config_keyset *took, char *why, size_t len)
{
	const struct disk_model_ops *cur = a->d ? a->d->disk.model : a->c->disk.model;
	bool cur_bad = false;
	char tmp[256];
	int rc, bad = 0;
	unsigned t;

	*took = 0;
	for (t = k; t < config_nkeys(); t = config_twin(t)) {
		rc = apply_one(a, t, value, tmp, sizeof(tmp));
		if (rc == -ENOMEM)
			return rc;
		if (!rc) {
			*took |= BIT(t);
			continue;
		}
		if (!bad || config_key(t)->model == cur) {
			bad = rc;
			cur_bad |= config_key(t)->model == cur;
			snprintf(why, len, "%s", tmp);
		}
	}
	return *took && !cur_bad ? 0 : bad;
}

static int device_key(struct parse_ctx *x, const char *label, const char *name, const char *value)
{
	struct device_conf *d = &x->c->devices[x->device];
	struct device_state *ds = &x->st->devices[x->device];
	config_keyset took;
	char why[256];
	unsigned k;
	int rc;

	if (strcmp(name, "backing") == 0) {
		char *path;

		if (ds->backing_file == x->file && ds->backing_line) {
			parse_fail(x, "%s duplicated key 'backing' (first at line %u)", label,
				   ds->backing_line);
			return 0;
		}
		if (!*value) {
			parse_fail(x, "%s backing = : expected the path of a file or block device",
				   label);
			return 0;
		}
		for (const char *p = value; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f) {
				parse_fail(x,
					   "%s backing: control characters are not allowed in a "
					   "path",
					   label);
				return 0;
			}
		path = beside(x, value);
		if (!path) {
			x->rc = -ENOMEM;
			return 0;
		}
		free(d->backing);
		d->backing = path;
		ds->backing_line = x->line;
		ds->backing_file = x->file;
		return 1;
	}
	if (strcmp(name, "preset") == 0) {
		if (ds->preset_file == x->file && ds->preset_line) {
			parse_fail(x, "%s duplicated key 'preset' (first at line %u)", label,
				   ds->preset_line);
			return 0;
		}
		return device_preset(x, d, ds, label, value);
	}
	k = claim_key(x, SEC_NAMED_DEVICE, label, name);
	if (k == config_nkeys())
		return 0;
	rc = apply_value(&(struct apply_site){.d = d, .sep = ','}, k, value, &took, why,
			 sizeof(why));
	if (rc == -ENOMEM) {
		x->rc = rc;
		return 0;
	}
	if (rc) {
		parse_fail(x, "%s %s = %s: %s", label, name, value, why);
		return 0;
	}
	for (k = 0; k < config_nkeys(); k++)
		if (took & BIT(k)) {
			ds->set |= BIT(k);
			ds->line[k] = x->line;
			ds->kfile[k] = x->file;
		}
	return 1;
}

static int handle_key(struct parse_ctx *x, const char *name, const char *value);

/* inih's handler: one key of the current section (a long line's value from the reader). */
static int handler(void *user, const char *inih_section, const char *name, const char *value)
{
	struct parse_ctx *x = user;
	char *long_value = x->long_value;
	int rc;

	(void)inih_section; /* ours is complete (see reader()) */
	x->long_value = NULL;
	rc = handle_key(x, name, long_value ? long_value : value);
	free(long_value);
	return rc;
}

static int handle_key(struct parse_ctx *x, const char *name, const char *value)
{
	struct config_state *st = x->st;
	const char *glob = x->sec == SEC_FILE		? x->c->rules[x->rule].glob
			   : x->sec == SEC_NAMED_DEVICE ? x->c->devices[x->device].name
			   : x->sec == SEC_FAULT	? x->c->faults[x->fault].name
							: NULL;
	char label[300], why[256];
	config_keyset took;
	unsigned k;
	int rc;

	if (x->rc)
		return 0;
	if (strcmp(name, "include") == 0)
		return include(x, value) ? 0 : 1;
	if (x->sec == SEC_NONE) {
		for (k = 0; k < config_nkeys(); k++)
			if (strcmp(config_key(k)->row->name, name) == 0)
				break;
		if (k < config_nkeys())
			parse_fail(x, "key '%s' outside any section (it belongs in [%s])", name,
				   config_section_names[config_key(k)->sec]);
		else
			parse_fail(x, "key '%s' outside any section", name);
		return 0;
	}
	config_section_label(x->sec, glob, label, sizeof(label));
	if (x->sec == SEC_NAMED_DEVICE)
		return device_key(x, label, name, value);
	if (x->sec == SEC_FAULT)
		return fault_key(x, label, name, value);
	k = claim_key(x, x->sec, label, name);
	if (k == config_nkeys())
		return 0;
	rc =
	    apply_value(&(struct apply_site){.c = x->c,
					     .fp = x->sec == SEC_FILE ? &x->c->rules[x->rule].params
								      : &x->c->defaults,
					     .sep = ','},
			k, value, &took, why, sizeof(why));
	if (rc == -ENOMEM) {
		x->rc = rc;
		return 0;
	}
	if (rc) {
		parse_fail(x, "%s %s = %s: %s", label, name, value, why);
		return 0;
	}
	if (x->sec == SEC_FILE) {
		struct rule_state *rs = &st->rules[x->rule];

		rs->set |= BIT(k);
		rs->line[k] = x->line;
		rs->kfile[k] = x->file;
		rs->seq[k] = ++st->seq;
		return 1;
	}
	++st->seq;
	for (k = 0; k < config_nkeys(); k++) {
		if (!(took & BIT(k)))
			continue;
		st->set |= BIT(k);
		st->autoset &= ~BIT(k);
		free(st->origin[k].option);
		st->origin[k].option = NULL;
		st->origin[k].file = x->file;
		st->origin[k].line = x->line;
		st->origin[k].seq = st->seq;
	}
	return 1;
}

/* Reads all of @path into a malloc'd buffer; @sb receives its fstat().  Returns 0 or -errno. */
static int read_file(const char *path, char **out, size_t *outlen, struct stat *sb)
{
	size_t len = 0, cap = 8192;
	char *buf = malloc(cap);
	int fd, rc = 0;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return -errno;
	}
	if (fstat(fd, sb)) {
		rc = -errno;
		close(fd);
		free(buf);
		return rc;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *nb;

			if (cap > CONFIG_MAX_BYTES) {
				rc = -EFBIG;
				break;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (rc) {
		free(buf);
		return rc;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

/*
 * Loads @path into @c.  @parent is the file whose include = @written line
 * names it (NULL for a config= file): errors in opening it then name that
 * line, and a file already being read in the chain of parents is a cycle.
 */
static int load_file(struct sfs_config *c, const char *path, struct parse_ctx *parent,
		     const char *written, char *err, size_t errlen)
{
	struct parse_ctx x = {
	    .c = c,
	    .parent = parent,
	    .depth = parent ? parent->depth + 1 : 0,
	    .path = path,
	    .sec = SEC_NONE,
	    .rule = -1,
	    .err = err,
	    .errlen = errlen,
	};
	const struct parse_ctx *p;
	char *buf = NULL, *src;
	struct stat sb;
	size_t len = 0;
	int rc;

	x.st = config_state_get(c);
	if (!x.st) {
		config_seterr(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	if (!parent) {
		src = strdup(path);
		if (!src) {
			config_seterr(err, errlen, "%s: out of memory", path);
			return -ENOMEM;
		}
		free(c->source);
		c->source = src;
	}
	rc = read_file(path, &buf, &len, &sb);
	if (rc) {
		const char *why =
		    rc == -EFBIG ? "larger than 1 MiB; not a configuration file" : strerror(-rc);

		if (parent)
			config_seterr(err, errlen, "%s:%u: include = %s: %s: %s", parent->path,
				      parent->line, written, path, why);
		else
			config_seterr(err, errlen, "%s: %s", path, why);
		return rc;
	}
	for (p = parent; p; p = p->parent) {
		if (p->dev == sb.st_dev && p->ino == sb.st_ino) {
			config_seterr(
			    err, errlen,
			    "%s:%u: include = %s: include cycle: %s is already being read",
			    parent->path, parent->line, written, p->path);
			free(buf);
			return -EINVAL;
		}
	}
	x.dev = sb.st_dev;
	x.ino = sb.st_ino;
	x.file =
	    state_add_file(x.st, path, parent ? parent->file : NULL, parent ? parent->line : 0);
	if (!x.file) {
		free(buf);
		config_seterr(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	x.buf = buf;
	x.len = len;
	rc = ini_parse_stream(reader, &x, handler, &x);
	free(x.long_value);
	free(buf);
	free(x.opened);
	free(x.opened_line);
	if (x.rc == -ENOMEM || rc == -2) {
		config_seterr(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	if (x.rc)
		return x.rc;
	if (rc > 0) {
		config_seterr(
		    err, errlen,
		    "%s:%d: syntax error: expected 'key = value', a [section] or a comment", path,
		    rc);
		return -EINVAL;
	}
	if (rc < 0) {
		config_seterr(err, errlen, "%s: cannot parse", path);
		return -EIO;
	}
	if (!x.content) {
		config_seterr(err, errlen, "%s: empty configuration file (no section, no key)",
			      path);
		return -EINVAL;
	}
	return 0;
}

/*
 * An include = @value line of @x: loads the file, named relative to the
 * directory of @x's file unless absolute.  Returns 0, or the error (also
 * in x->rc, the message in x->err).
 */
static int include(struct parse_ctx *x, const char *value)
{
	const char *slash = strrchr(x->path, '/');
	char *path;
	int rc;

	if (!*value) {
		parse_fail(x, "include = : expected the name of a configuration file");
		return x->rc;
	}
	if (x->depth + 1 >= CONFIG_MAX_INCLUDE_DEPTH) {
		parse_fail(x, "include = %s: includes nested more than %d files deep", value,
			   CONFIG_MAX_INCLUDE_DEPTH);
		return x->rc;
	}
	if (value[0] == '/' || !slash)
		path = strdup(value);
	else if (asprintf(&path, "%.*s/%s", (int)(slash - x->path), x->path, value) < 0)
		path = NULL;
	if (!path)
		return x->rc = -ENOMEM;
	rc = load_file(x->c, path, x, value, x->err, x->errlen);
	free(path);
	if (rc)
		x->rc = rc;
	return rc;
}

int config_load_file(struct sfs_config *c, const char *path, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	return load_file(c, path, NULL, NULL, err, errlen);
}

/* ---- overrides ---- */

int config_set(struct sfs_config *c, const char *assignment, char *err, size_t errlen)
{
	return config_set_option(c, assignment, assignment, err, errlen);
}

int config_set_option(struct sfs_config *c, const char *assignment, const char *option, char *err,
		      size_t errlen)
{
	const char *eq = strchr(assignment, '='), *dot;
	char secname[32], name[64], label[300], why[256], list[1024];
	struct config_state *st;
	config_keyset took;
	const char *value;
	enum section sec;
	unsigned k;
	size_t n;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	dot = eq ? memchr(assignment, '.', (size_t)(eq - assignment)) : NULL;
	if (!eq || !dot) {
		config_seterr(err, errlen, "option -o %s: expected SECTION.KEY=VALUE", option);
		return -EINVAL;
	}
	n = (size_t)(dot - assignment);
	snprintf(secname, sizeof(secname), "%.*s",
		 (int)(n < sizeof(secname) ? n : sizeof(secname) - 1), assignment);
	n = (size_t)(eq - dot - 1);
	snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1),
		 dot + 1);
	value = eq + 1;
	for (sec = 0; sec < NGLOBAL_SECTIONS; sec++)
		if (strcmp(secname, config_section_names[sec]) == 0)
			break;
	if (strncmp(secname, "device ", 7) == 0 || strncmp(secname, "device\"", 7) == 0) {
		config_seterr(err, errlen,
			      "option -o %s: [device \"NAME\"] sections can only be written in the "
			      "configuration file",
			      option);
		return -EINVAL;
	}
	if (strcmp(secname, "file") == 0 || strncmp(secname, "file ", 5) == 0) {
		config_seterr(err, errlen,
			      "option -o %s: [file \"GLOB\"] rules can only be written in the "
			      "configuration file",
			      option);
		return -EINVAL;
	}
	if (sec == NGLOBAL_SECTIONS) {
		config_seterr(
		    err, errlen,
		    "option -o %s: unknown section '%s'; allowed: device, layout, autoextend, "
		    "cache, log, disk",
		    option, secname);
		return -EINVAL;
	}
	config_section_label(sec, NULL, label, sizeof(label));
	k = config_find_key(sec, name);
	if (k == config_nkeys()) {
		config_allowed_keys(sec, c->disk.model, list, sizeof(list));
		config_seterr(err, errlen, "option -o %s: %s unknown key '%s'; allowed: %s", option,
			      label, name, list);
		return -EINVAL;
	}
	st = config_state_get(c);
	if (!st) {
		config_seterr(err, errlen, "option -o %s: out of memory", option);
		return -ENOMEM;
	}
	rc = apply_value(&(struct apply_site){.c = c, .fp = &c->defaults, .sep = ':'}, k, value,
			 &took, why, sizeof(why));
	if (rc == -ENOMEM) {
		config_seterr(err, errlen, "option -o %s: out of memory", option);
		return rc;
	}
	if (rc) {
		config_seterr(err, errlen, "option -o %s: %s %s = %s: %s", option, label, name,
			      value, why);
		return rc;
	}
	for (k = 0; k < config_nkeys(); k++) {
		if (!(took & BIT(k)))
			continue;
		free(st->origin[k].option);
		st->origin[k].option = strdup(option);
		st->origin[k].file = NULL;
		st->origin[k].line = 0;
		st->set |= BIT(k);
		st->autoset &= ~BIT(k); /* a new value, not config_finish()'s resolution */
	}
	return 0;
}
