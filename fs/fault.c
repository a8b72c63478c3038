/*
 * Fault rules (see fault.h): parsing of a rule's keys, the rule set, and
 * the matching of a device I/O against it.
 *
 * The set is an array of rule pointers in the order added, guarded by one
 * mutex: rules are few (a test adds a handful), every device I/O of a
 * mount with rules takes the mutex once, and a mount without rules never
 * does (fault_set_empty()).  A rule's random state is its own splitmix64
 * sequence, advanced only by the operations it matches past after, so
 * adding a second rule does not move the first one's firings.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fault.h"
#include "size.h"
#include "splitmix64.h"

const char fault_keys_allowed[] = "op, file, range, device, after, count, probability, seed, "
				  "error, delay_ms, corrupt, torn, sector_size, flush";

/* The keys, in the order fault_set_list() writes them; bit i of seen_ops is key i. */
enum {
	K_OP,
	K_FILE,
	K_RANGE,
	K_DEVICE,
	K_AFTER,
	K_COUNT,
	K_PROBABILITY,
	K_SEED,
	K_ERROR,
	K_DELAY_MS,
	K_CORRUPT,
	K_TORN,
	K_SECTOR_SIZE,
	K_FLUSH,
	K_COUNT_KEYS
};

static const char *const key_names[K_COUNT_KEYS] = {
    "op",   "file",  "range",	 "device",  "after", "count",	    "probability",
    "seed", "error", "delay_ms", "corrupt", "torn",  "sector_size", "flush"};

static const char *const op_names[] = {"read", "write", "flush", "trim"};
static const char *const flush_names[] = {"none", "ignore", "linux", "keep-dirty"};

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int fault_errno_parse(const char *name)
{
	if (!name || name[0] != 'E')
		return 0;
	for (int e = 1; e < 4096; e++) {
		const char *n = strerrorname_np(e);
		if (n && strcmp(n, name) == 0)
			return e;
	}
	return 0;
}

void fault_set_init(struct fault_set *s, const char *const *devices, size_t ndevices)
{
	memset(s, 0, sizeof *s);
	pthread_mutex_init(&s->lock, NULL);
	atomic_init(&s->nrules, 0);
	s->devices = devices;
	s->ndevices = ndevices;
	s->layer_mask = ~(uint64_t)0;
}

void fault_set_layer(struct fault_set *s, size_t i, bool on)
{
	if (i < 64) {
		if (on)
			s->layer_mask |= (uint64_t)1 << i;
		else
			s->layer_mask &= ~((uint64_t)1 << i);
	}
}

void fault_set_size(struct fault_set *s, size_t i, uint64_t bytes)
{
	if (i < 64)
		s->sizes[i] = bytes;
}

void fault_set_release(struct fault_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		fault_rule_free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
	atomic_store(&s->nrules, 0);
	pthread_mutex_destroy(&s->lock);
}

static bool name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n >= FAULT_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("_.-", name[i]))
			return false;
	return true;
}

struct fault_rule *fault_rule_new(const char *name, char *err, size_t errlen)
{
	if (!name_ok(name)) {
		seterr(err, errlen,
		       "fault name '%s': use letters, digits, '_', '.' and '-', at most %d", name,
		       FAULT_NAME_MAX - 1);
		return NULL;
	}
	struct fault_rule *r = calloc(1, sizeof *r);
	if (!r) {
		seterr(err, errlen, "out of memory");
		return NULL;
	}
	strcpy(r->name, name);
	r->ops = FAULT_ANY;
	r->probability = 1.0;
	r->sector_size = FAULT_SECTOR_DEFAULT;
	return r;
}

void fault_rule_free(struct fault_rule *r)
{
	if (!r)
		return;
	free(r->file);
	free(r->device);
	free(r);
}

/* A decimal count: digits only, fits in 64 bits. */
static int parse_count(const char *v, uint64_t *out)
{
	if (!*v)
		return -EINVAL;
	uint64_t x = 0;
	for (const char *p = v; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		unsigned d = (unsigned)(*p - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -ERANGE;
		x = x * 10 + d;
	}
	*out = x;
	return 0;
}

static int parse_ops(const char *v, unsigned *out)
{
	unsigned ops = 0;
	const char *p = v;
	if (!*p)
		return -EINVAL;
	while (*p) {
		size_t n = strcspn(p, ",:");
		unsigned bit = 0;
		if (n == 3 && memcmp(p, "any", 3) == 0)
			bit = FAULT_ANY;
		for (unsigned i = 0; !bit && i < 4; i++)
			if (strlen(op_names[i]) == n && memcmp(p, op_names[i], n) == 0)
				bit = 1u << i;
		if (!bit)
			return -EINVAL;
		ops |= bit;
		p += n;
		if (*p && !*++p)
			return -EINVAL; /* a trailing separator */
	}
	*out = ops;
	return 0;
}

/* OFFSET+LENGTH, both sizes (K/M/G/T), LENGTH > 0 and the end within 64 bits. */
static int parse_range(const char *v, uint64_t *off, uint64_t *len)
{
	const char *plus = strchr(v, '+');
	if (!plus || plus == v)
		return -EINVAL;
	char *a = strndup(v, (size_t)(plus - v));
	if (!a)
		return -ENOMEM;
	int rc = parse_size(a, off);
	free(a);
	if (!rc)
		rc = parse_size(plus + 1, len);
	if (!rc && (*len == 0 || *off > UINT64_MAX - *len))
		rc = -EINVAL;
	return rc;
}

int fault_rule_set(struct fault_rule *r, const char *key, const char *value, char *err,
		   size_t errlen)
{
	int k;
	for (k = 0; k < K_COUNT_KEYS; k++)
		if (strcmp(key, key_names[k]) == 0)
			break;
	if (k == K_COUNT_KEYS) {
		seterr(err, errlen, "unknown key '%s'; allowed: %s", key, fault_keys_allowed);
		return -EINVAL;
	}
	if (r->seen_ops & (1u << k)) {
		seterr(err, errlen, "key '%s' given twice", key);
		return -EINVAL;
	}
	uint64_t x = 0;
	int rc = 0;
	const char *allowed = NULL;
	switch (k) {
	case K_OP:
		rc = parse_ops(value, &r->ops);
		allowed = "read, write, flush, trim or any, several joined by ',' (':' in -o)";
		break;
	case K_FILE:
		/* the mount root's "/x" is "x": sync-report prints paths with the '/' */
		if (*value == '/')
			value++;
		if (!*value) {
			rc = -EINVAL;
			allowed = "a glob (fnmatch(3)) on the path relative to the mount root "
				  "(a leading '/' is the root's)";
		} else if (!(r->file = strdup(value))) {
			rc = -ENOMEM;
		}
		break;
	case K_DEVICE:
		if (!*value) {
			rc = -EINVAL;
			allowed = "a device's name (main, or a [device \"NAME\"] section's)";
		} else if (!(r->device = strdup(value))) {
			rc = -ENOMEM;
		}
		break;
	case K_RANGE:
		rc = parse_range(value, &r->range_off, &r->range_len);
		r->has_range = rc == 0;
		allowed = "OFFSET+LENGTH in bytes or with K/M/G/T, LENGTH > 0 (such as 64K+4K)";
		break;
	case K_AFTER:
		rc = parse_count(value, &r->after);
		allowed = "a count of matching operations that pass first (0 or more)";
		break;
	case K_COUNT:
		rc = parse_count(value, &r->count);
		allowed = "how often it fires, 0 = no limit";
		break;
	case K_SEED:
		rc = parse_count(value, &r->seed);
		r->rng = r->seed;
		allowed = "an unsigned 64-bit number";
		break;
	case K_PROBABILITY: {
		char *end;
		errno = 0;
		double p = strtod(value, &end);
		if (!*value || *end || errno || !(p > 0.0 && p <= 1.0) || isspace(*value))
			rc = -EINVAL;
		else
			r->probability = p;
		allowed = "a number greater than 0 and at most 1";
		break;
	}
	case K_ERROR:
		r->error = fault_errno_parse(value);
		rc = r->error ? 0 : -EINVAL;
		allowed = "an errno name (such as EIO, ENOSPC, EROFS)";
		break;
	case K_DELAY_MS:
		rc = parse_count(value, &x);
		if (!rc && (x == 0 || x > 3600000))
			rc = -EINVAL;
		r->delay_ms = (uint32_t)x;
		allowed = "milliseconds, 1 to 3600000";
		break;
	case K_CORRUPT:
		r->bitflip = strcmp(value, "bitflip") == 0;
		rc = r->bitflip ? 0 : -EINVAL;
		allowed = "bitflip";
		break;
	case K_TORN:
		if (strcmp(value, "true") == 0)
			r->torn = true;
		else if (strcmp(value, "false") != 0)
			rc = -EINVAL;
		allowed = "true or false";
		break;
	case K_SECTOR_SIZE:
		rc = parse_size(value, &x);
		if (!rc && (x < 512 || x > (1u << 20) || (x & (x - 1))))
			rc = -EINVAL;
		r->sector_size = (uint32_t)x;
		allowed = "a power of two from 512 to 1M";
		break;
	case K_FLUSH:
		rc = -EINVAL;
		for (int i = FAULT_FLUSH_IGNORE; i <= FAULT_FLUSH_KEEP_DIRTY; i++)
			if (strcmp(value, flush_names[i]) == 0) {
				r->flush = (enum fault_flush)i;
				rc = 0;
			}
		allowed = "ignore, linux or keep-dirty";
		break;
	}
	if (rc == -ENOMEM) {
		seterr(err, errlen, "out of memory");
		return rc;
	}
	if (rc) {
		seterr(err, errlen, "key '%s': '%s' is not valid; allowed: %s", key, value,
		       allowed);
		return -EINVAL;
	}
	r->seen_ops |= 1u << k;
	return 0;
}

int fault_rule_check(struct fault_rule *r, char *err, size_t errlen)
{
	const char *n = r->name;
	r->blame = NULL;
	if (!r->error && !r->delay_ms && !r->bitflip && !r->torn && !r->flush) {
		seterr(err, errlen,
		       "fault '%s' has no effect; give error, delay_ms, corrupt, torn or flush", n);
		return -EINVAL;
	}
	if (r->file && r->device) {
		seterr(err, errlen,
		       "fault '%s': file and device exclude each other (a file range is logical, "
		       "a device range is on the device)",
		       n);
		r->blame = "device";
		return -EINVAL;
	}
	if (r->has_range && !r->file && !r->device) {
		seterr(err, errlen, "fault '%s': range needs file or device", n);
		r->blame = "range";
		return -EINVAL;
	}
	if (r->flush) {
		if (r->ops != FAULT_FLUSH) {
			seterr(err, errlen, "fault '%s': flush = %s needs op = flush", n,
			       flush_names[r->flush]);
			r->blame = "flush";
			return -EINVAL;
		}
		if (r->bitflip || r->torn) {
			seterr(err, errlen, "fault '%s': flush = %s takes no corrupt or torn", n,
			       flush_names[r->flush]);
			r->blame = "flush";
			return -EINVAL;
		}
		if (r->flush == FAULT_FLUSH_IGNORE && r->error) {
			seterr(err, errlen,
			       "fault '%s': flush = ignore reports success; it takes no error", n);
			r->blame = "error";
			return -EINVAL;
		}
		if (r->flush != FAULT_FLUSH_IGNORE && !r->error)
			r->error = EIO;
	}
	if (r->bitflip && (r->ops & ~(unsigned)(FAULT_READ | FAULT_WRITE))) {
		seterr(err, errlen, "fault '%s': corrupt = bitflip needs op = read, write or both",
		       n);
		r->blame = "corrupt";
		return -EINVAL;
	}
	if (r->torn && r->ops != FAULT_WRITE) {
		seterr(err, errlen, "fault '%s': torn needs op = write", n);
		r->blame = "torn";
		return -EINVAL;
	}
	if (r->bitflip && (r->torn || r->error)) {
		seterr(err, errlen,
		       "fault '%s': corrupt = bitflip is a success with wrong data; it takes no "
		       "error or torn",
		       n);
		r->blame = "corrupt";
		return -EINVAL;
	}
	if (r->has_range && (r->ops & FAULT_FLUSH)) {
		seterr(err, errlen,
		       "fault '%s': a flush has no range; write op = without flush, or no range",
		       n);
		r->blame = "range";
		return -EINVAL;
	}
	if ((r->seen_ops & (1u << K_SECTOR_SIZE)) && !r->torn) {
		seterr(err, errlen, "fault '%s': sector_size goes with torn = true", n);
		r->blame = "sector_size";
		return -EINVAL;
	}
	return 0;
}

static ssize_t find(const struct fault_set *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i]->name, name) == 0)
			return (ssize_t)i;
	return -1;
}

int fault_set_add(struct fault_set *s, struct fault_rule *r, char *err, size_t errlen)
{
	int rc = 0;
	if (r->device && s->ndevices) {
		size_t i;
		for (i = 0; i < s->ndevices; i++)
			if (strcmp(s->devices[i], r->device) == 0)
				break;
		if (i == s->ndevices) {
			char names[512] = "";
			for (size_t j = 0; j < s->ndevices; j++) {
				size_t l = strlen(names);
				snprintf(names + l, sizeof names - l, "%s%s", j ? ", " : "",
					 s->devices[j]);
			}
			seterr(err, errlen, "key 'device': no device '%s'; the mount's: %s",
			       r->device, names);
			fault_rule_free(r);
			return -EINVAL;
		}
		if (!(s->layer_mask & ((uint64_t)1 << i))) {
			seterr(err, errlen,
			       "device '%s' has no fault layer; name faults in its layers "
			       "(such as layers = accounting, faults, timing, base)",
			       r->device);
			fault_rule_free(r);
			return -EINVAL;
		}
		if (r->has_range && i < 64 && s->sizes[i] &&
		    (r->range_off >= s->sizes[i] || r->range_len > s->sizes[i] - r->range_off)) {
			char a[32], b[32], z[32];
			seterr(err, errlen,
			       "key 'range': %s+%s ends past the end of device '%s'; allowed: "
			       "OFFSET+LENGTH within 0+%s",
			       format_size(r->range_off, a, sizeof a),
			       format_size(r->range_len, b, sizeof b), r->device,
			       format_size(s->sizes[i], z, sizeof z));
			fault_rule_free(r);
			return -EINVAL;
		}
	} else if (s->ndevices && !(s->layer_mask & (((uint64_t)2 << (s->ndevices - 1)) - 1))) {
		seterr(err, errlen,
		       "no device has the fault layer; name faults in [device] layers (such as "
		       "layers = accounting, faults, timing, base)");
		fault_rule_free(r);
		return -EINVAL;
	}
	pthread_mutex_lock(&s->lock);
	if (find(s, r->name) >= 0) {
		seterr(err, errlen, "a fault named '%s' exists", r->name);
		rc = -EEXIST;
	} else if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		struct fault_rule **v = realloc(s->v, cap * sizeof *v);
		if (!v) {
			seterr(err, errlen, "out of memory");
			rc = -ENOMEM;
		} else {
			s->v = v;
			s->cap = cap;
		}
	}
	if (!rc) {
		s->v[s->n++] = r;
		atomic_store_explicit(&s->nrules, s->n, memory_order_release);
	}
	pthread_mutex_unlock(&s->lock);
	if (rc)
		fault_rule_free(r);
	return rc;
}

int fault_set_del(struct fault_set *s, const char *name)
{
	pthread_mutex_lock(&s->lock);
	ssize_t i = find(s, name);
	if (i >= 0) {
		fault_rule_free(s->v[i]);
		memmove(s->v + i, s->v + i + 1, (s->n - (size_t)i - 1) * sizeof *s->v);
		s->n--;
		atomic_store_explicit(&s->nrules, s->n, memory_order_release);
	}
	pthread_mutex_unlock(&s->lock);
	return i >= 0 ? 0 : -ENOENT;
}

int fault_set_load(struct fault_set *s, const struct config_fault *f, size_t n, char *err,
		   size_t errlen)
{
	char msg[768];
	for (size_t i = 0; i < n; i++) {
		struct fault_rule *r = fault_rule_new(f[i].name, msg, sizeof msg);
		if (!r) {
			seterr(err, errlen, "%s:%u: [fault \"%s\"]: %s", f[i].file, f[i].line,
			       f[i].name, msg);
			return -EINVAL;
		}
		r->line = f[i].line;
		r->file_name = f[i].file;
		for (size_t k = 0; k < f[i].nkv; k++) {
			const struct config_fault_kv *kv = &f[i].kv[k];
			int rc = fault_rule_set(r, kv->key, kv->value, msg, sizeof msg);
			if (rc) {
				seterr(err, errlen, "%s:%u: [fault \"%s\"] %s", f[i].file, kv->line,
				       f[i].name, msg);
				fault_rule_free(r);
				return rc;
			}
		}
		int rc = fault_rule_check(r, msg, sizeof msg);
		const char *blame = r->blame;
		if (!rc) {
			rc = fault_set_add(s, r, msg, sizeof msg);
			blame = NULL;
		} else {
			fault_rule_free(r);
		}
		if (rc) {
			/* the line of the key at fault ("key 'range': ..."), else the section's */
			unsigned line = f[i].line;
			size_t bl = blame ? strlen(blame) : 0;
			if (!blame && strncmp(msg, "key '", 5) == 0) {
				blame = msg + 5;
				bl = strcspn(blame, "'");
			}
			for (size_t k = 0; blame && k < f[i].nkv; k++)
				if (strlen(f[i].kv[k].key) == bl &&
				    strncmp(f[i].kv[k].key, blame, bl) == 0)
					line = f[i].kv[k].line;
			seterr(err, errlen, "%s:%u: [fault \"%s\"]: %s", f[i].file, line, f[i].name,
			       msg);
			return rc;
		}
	}
	return 0;
}

/* A value as a command word: bare, or quoted when it holds a blank, '"' or '\'. */
static void put_value(FILE *out, const char *v)
{
	if (*v && !strpbrk(v, " \t\"\\")) {
		fputs(v, out);
		return;
	}
	fputc('"', out);
	for (const char *p = v; *p; p++) {
		if (*p == '"' || *p == '\\')
			fputc('\\', out);
		fputc(*p, out);
	}
	fputc('"', out);
}

/*
 * Key @k of a rule: " key=value" (a `fault add` word, quoted by put_value())
 * or, with @ini, "key = value" on a line of its own (an INI value is
 * taken as it stands up to the end of the line).
 */
static void put_key(FILE *out, bool ini, int k, const char *v)
{
	if (ini) {
		fprintf(out, "%s = %s\n", key_names[k], v);
		return;
	}
	fprintf(out, " %s=", key_names[k]);
	put_value(out, v);
}

/* The keys of @r that differ from the defaults, in key_names' order. */
static void rule_keys(const struct fault_rule *r, FILE *out, bool ini)
{
	char a[32], b[32], v[96];
	if (r->ops != FAULT_ANY) {
		v[0] = '\0';
		for (unsigned i = 0; i < 4; i++)
			if (r->ops & (1u << i))
				snprintf(v + strlen(v), sizeof v - strlen(v), "%s%s", v[0] ? "," : "",
					 op_names[i]);
		put_key(out, ini, K_OP, v);
	}
	if (r->file)
		put_key(out, ini, K_FILE, r->file);
	if (r->device)
		put_key(out, ini, K_DEVICE, r->device);
	if (r->has_range) {
		snprintf(v, sizeof v, "%s+%s", format_size(r->range_off, a, sizeof a),
			 format_size(r->range_len, b, sizeof b));
		put_key(out, ini, K_RANGE, v);
	}
	if (r->after) {
		snprintf(v, sizeof v, "%" PRIu64, r->after);
		put_key(out, ini, K_AFTER, v);
	}
	if (r->count) {
		snprintf(v, sizeof v, "%" PRIu64, r->count);
		put_key(out, ini, K_COUNT, v);
	}
	if (r->probability != 1.0) {
		snprintf(v, sizeof v, "%.17g", r->probability);
		put_key(out, ini, K_PROBABILITY, v);
	}
	if (r->seen_ops & (1u << K_SEED)) {
		snprintf(v, sizeof v, "%" PRIu64, r->seed);
		put_key(out, ini, K_SEED, v);
	}
	if (r->error)
		put_key(out, ini, K_ERROR, strerrorname_np(r->error));
	if (r->delay_ms) {
		snprintf(v, sizeof v, "%" PRIu32, r->delay_ms);
		put_key(out, ini, K_DELAY_MS, v);
	}
	if (r->bitflip)
		put_key(out, ini, K_CORRUPT, "bitflip");
	if (r->torn)
		put_key(out, ini, K_TORN, "true");
	if (r->sector_size != FAULT_SECTOR_DEFAULT)
		put_key(out, ini, K_SECTOR_SIZE, format_size(r->sector_size, a, sizeof a));
	if (r->flush)
		put_key(out, ini, K_FLUSH, flush_names[r->flush]);
}

static void list_rule(const struct fault_rule *r, FILE *out)
{
	fputs(r->name, out);
	rule_keys(r, out, false);
	fprintf(out, " matched=%" PRIu64 " fired=%" PRIu64 "\n", r->matched, r->fired);
}

/*
 * Whether an INI line "key = @v" reads back as @v: the reader strips blanks
 * around a value and ends it at a ';' after a blank (config_ini.c).
 */
static bool ini_holds(const char *v)
{
	size_t n = strlen(v);
	if (!n)
		return true;
	if (isspace((unsigned char)v[0]) || isspace((unsigned char)v[n - 1]))
		return false;
	for (size_t i = 1; i < n; i++)
		if (v[i] == ';' && (v[i - 1] == ' ' || v[i - 1] == '\t'))
			return false;
	return true;
}

void fault_set_write_ini(struct fault_set *s, FILE *out)
{
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n; i++) {
		const struct fault_rule *r = s->v[i];
		fputc('\n', out);
		if ((r->file && !ini_holds(r->file)) || (r->device && !ini_holds(r->device))) {
			/* a glob added through control may hold what INI cannot */
			fprintf(out,
				"# fault '%s' (added through control) is left out: its file or device value "
				"has a blank at an end or a ';' after a blank, which an INI "
				"value cannot hold; as a command:\n# fault add ",
				r->name);
			list_rule(r, out);
			continue;
		}
		if (r->line)
			fprintf(out, "# from %s:%u", r->file_name ? r->file_name : "?", r->line);
		else
			fputs("# added through .scatterfs/control", out);
		fprintf(out,
			"; as it stands: matched=%" PRIu64 " fired=%" PRIu64
			" (loaded back, it counts anew)\n[fault \"%s\"]\n",
			r->matched, r->fired, r->name);
		rule_keys(r, out, true);
	}
	pthread_mutex_unlock(&s->lock);
}

void fault_set_list(struct fault_set *s, FILE *out)
{
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n; i++)
		list_rule(s->v[i], out);
	pthread_mutex_unlock(&s->lock);
}

/*
 * Whether @r's target covers @io; sets the covered device range.  A file
 * range is logical: the I/O's device range maps onto the file's bytes
 * [logical_off, logical_off + len).
 */
static bool target_covers(const struct fault_rule *r, const struct fault_io *io, uint64_t *off,
			  uint64_t *len)
{
	if (!(r->ops & io->op))
		return false;
	*off = io->dev_off;
	*len = io->len;
	if (r->device && (!io->device || strcmp(r->device, io->device) != 0))
		return false;
	if (r->file && (!io->path || fnmatch(r->file, io->path, 0) != 0))
		return false;
	if (!r->has_range)
		return true;
	if (io->len == 0)
		return false;
	uint64_t base; /* the I/O's start in the range's coordinates */
	if (r->file) {
		if (!io->has_logical)
			return false;
		base = io->logical_off;
	} else {
		base = io->dev_off;
	}
	uint64_t lo = base > r->range_off ? base : r->range_off;
	uint64_t end = base + io->len, rend = r->range_off + r->range_len;
	uint64_t hi = end < rend ? end : rend;
	if (lo >= hi)
		return false;
	*off = io->dev_off + (lo - base);
	*len = hi - lo;
	return true;
}

/* A uniform draw in [0, n) from @r's state (n > 0). */
static uint64_t draw(struct fault_rule *r, uint64_t n)
{
	return splitmix64_next(&r->rng) % n;
}

/* The torn write's kept prefix: a cut at a sector boundary of the device, before the end. */
static uint64_t torn_prefix(struct fault_rule *r, const struct fault_io *io)
{
	uint64_t s = r->sector_size;
	uint64_t first = (s - io->dev_off % s) % s; /* bytes to the first boundary */
	if (first >= io->len)
		return 0;
	uint64_t cuts = (io->len - first - 1) / s + 1;
	return first + draw(r, cuts) * s;
}

bool fault_set_match(struct fault_set *s, const struct fault_io *io, struct fault_hit *hit)
{
	if (fault_set_empty(s))
		return false;
	bool fired = false;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n; i++) {
		struct fault_rule *r = s->v[i];
		uint64_t off, len;
		if (!target_covers(r, io, &off, &len))
			continue;
		r->matched++;
		if (fired)
			continue;
		if (r->pass_next) { /* flush = linux: the flush after a failed one passes */
			r->pass_next = false;
			continue;
		}
		bool fire;
		if (r->stuck)
			fire = true;
		else if (r->matched <= r->after || (r->count && r->fired >= r->count))
			fire = false;
		else if (r->probability < 1.0)
			fire =
			    (double)(splitmix64_next(&r->rng) >> 11) * 0x1.0p-53 < r->probability;
		else
			fire = true;
		if (!fire)
			continue;
		fired = true;
		r->fired++;
		memset(hit, 0, sizeof *hit);
		strcpy(hit->rule, r->name);
		hit->error = -r->error;
		hit->delay_ms = r->delay_ms;
		hit->hit_off = off;
		hit->hit_len = len;
		if (io->op == FAULT_FLUSH) {
			hit->flush = r->flush;
			if (r->flush == FAULT_FLUSH_KEEP_DIRTY)
				r->stuck = true;
			if (r->flush == FAULT_FLUSH_LINUX)
				r->pass_next = true;
		}
		if (r->bitflip && len) {
			hit->bitflip = true;
			hit->bit = (off - io->dev_off) * 8 + draw(r, len * 8);
		}
		if (r->torn && io->op == FAULT_WRITE) {
			hit->torn = true;
			hit->torn_len = torn_prefix(r, io);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return fired;
}

int fault_split_words(const char *line, char **w, size_t max, char *err, size_t errlen)
{
	size_t n = 0;
	const char *p = line;
	size_t cap = strlen(line) + 1;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			return (int)n;
		if (n == max) {
			seterr(err, errlen, "too many words (at most %zu)", max);
			goto fail;
		}
		char *o = malloc(cap), *q = o;
		if (!o) {
			seterr(err, errlen, "out of memory");
			goto fail;
		}
		w[n++] = o;
		bool quoted = false;
		while (*p && (quoted || (*p != ' ' && *p != '\t'))) {
			if (*p == '\\') {
				if (!p[1]) {
					seterr(err, errlen, "'\\' at the end of the line");
					goto fail;
				}
				*q++ = p[1];
				p += 2;
			} else if (*p == '"') {
				quoted = !quoted;
				p++;
			} else {
				*q++ = *p++;
			}
		}
		if (quoted) {
			seterr(err, errlen, "unterminated quote");
			goto fail;
		}
		*q = '\0';
	}
fail:
	for (size_t i = 0; i < n; i++)
		free(w[i]);
	return -EINVAL;
}

#define MAX_WORDS 64

static int cmd_add(struct fault_set *s, char **w, int n, char *err, size_t errlen)
{
	if (n < 3) {
		seterr(err, errlen, "usage: fault add NAME KEY=VALUE...");
		return -EINVAL;
	}
	char msg[768];
	struct fault_rule *r = fault_rule_new(w[2], msg, sizeof msg);
	if (!r) {
		seterr(err, errlen, "fault add: %s", msg);
		return -EINVAL;
	}
	for (int i = 3; i < n; i++) {
		char *eq = strchr(w[i], '=');
		if (!eq || eq == w[i]) {
			seterr(err, errlen, "fault add %s: '%s' is not KEY=VALUE", r->name, w[i]);
			fault_rule_free(r);
			return -EINVAL;
		}
		*eq = '\0';
		if (fault_rule_set(r, w[i], eq + 1, msg, sizeof msg)) {
			seterr(err, errlen, "fault add %s: %s", r->name, msg);
			fault_rule_free(r);
			return -EINVAL;
		}
	}
	if (fault_rule_check(r, msg, sizeof msg)) {
		seterr(err, errlen, "fault add: %s", msg);
		fault_rule_free(r);
		return -EINVAL;
	}
	char name[FAULT_NAME_MAX];
	strcpy(name, r->name);
	int rc = fault_set_add(s, r, msg, sizeof msg);
	if (rc)
		seterr(err, errlen, "fault add %s: %s", name, msg);
	return rc;
}

int fault_command(struct fault_set *s, const char *line, FILE *out)
{
	char *w[MAX_WORDS];
	char err[1024];
	int rc = 0;
	/* Only the first word decides whether it is ours: split the rest after. */
	const char *p = line + strspn(line, " \t");
	if (strncmp(p, "fault", 5) != 0 || (p[5] && p[5] != ' ' && p[5] != '\t'))
		return 1;
	int n = fault_split_words(line, w, MAX_WORDS, err, sizeof err);
	if (n < 0) {
		fprintf(out, "error: %s\n", err);
		return 0;
	}
	if (n < 2) {
		snprintf(err, sizeof err, "usage: fault add|del|list ...");
		rc = -EINVAL;
	} else if (strcmp(w[1], "add") == 0) {
		rc = cmd_add(s, w, n, err, sizeof err);
	} else if (strcmp(w[1], "del") == 0) {
		if (n != 3) {
			snprintf(err, sizeof err, "usage: fault del NAME");
			rc = -EINVAL;
		} else if ((rc = fault_set_del(s, w[2])) != 0) {
			snprintf(err, sizeof err, "fault del: no fault named '%.*s'",
				 FAULT_NAME_MAX * 2, w[2]);
		}
	} else if (strcmp(w[1], "list") == 0) {
		if (n != 2) {
			snprintf(err, sizeof err, "usage: fault list");
			rc = -EINVAL;
		} else {
			fault_set_list(s, out);
		}
	} else {
		snprintf(err, sizeof err,
			 "unknown command 'fault %.*s'; allowed: fault add, "
			 "fault del, fault list",
			 FAULT_NAME_MAX, w[1]);
		rc = -EINVAL;
	}
	for (int i = 0; i < n; i++)
		free(w[i]);
	if (rc)
		fprintf(out, "error: %s\n", err);
	else
		fputs("ok\n", out);
	return 0;
}
