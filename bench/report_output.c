/*
 * Output of the metrics as text, CSV or JSON.
 *
 * Data structure: each metric is one table with fixed columns (the names
 * in report_metric_name(), the columns in the tables below).  CSV and JSON
 * are produced by the same table code from typed cells, so the two always
 * carry the same columns and the same rounding: a CSV table is a header
 * row and data rows; in JSON each table is a key of the top-level object,
 * an object for single-row tables (sequentiality, device, autoextend) and
 * an array of objects otherwise.  Text is written for people and has its
 * own code: aligned columns and bar charts.
 *
 * Rounding: shares in percent with 2 decimals, means and ratios with 3.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define BAR_WIDTH 40 /* characters of the longest bar */

static const char *const metric_names[M_COUNT] = {
    "summary",	     "read_sizes",	"read_size_buckets",
    "sequentiality", "device",		"device_ios_per_read",
    "seek_distance", "autoextend",	"layout_score",
    "latency",	     "latency_buckets",
};

static const char *by_name(enum report_by by)
{
	switch (by) {
	case BY_FILE:
		return "file";
	case BY_PID:
		return "pid";
	case BY_OP:
		return "op";
	default:
		return "all";
	}
}

/* A latency column's name: the log's own (logschema.h). */
static const char *lat_column_name(int col)
{
	return log_column_names[col == LAT_MODEL_US ? LOG_COL_MODEL_US : LOG_COL_LATENCY_US];
}

/* The --latency percentiles, tenths of a percent (hist_percentiles()), and their labels. */
static const unsigned lat_pm[] = {500, 900, 990, 999, 1000};
#define NPCT (sizeof(lat_pm) / sizeof(lat_pm[0]))
static const char *const lat_pct_label[NPCT] = {"p50", "p90", "p99", "p99.9", "max"};
/* The same as CSV and JSON column names. */
static const char *const lat_pct_column[NPCT] = {"p50", "p90", "p99", "p99_9", "max"};

/*
 * The samples the p-th percentile needs, pm = 10 p: 100/(100-p) rounded
 * up (p50 2, p90 10, p99 100, p99.9 1000): with fewer, the nearest-rank
 * p-th percentile is the largest value, and says nothing about a tail of
 * 100-p percent; 0 for the maximum, which any sample gives.
 */
static uint64_t lat_pct_needs(unsigned pm)
{
	return pm >= 1000 ? 0 : (1000 + (1000 - pm) - 1) / (1000 - pm);
}

/* The CSV/JSON names of the percentiles that @n samples are too few for, joined by ';'. */
static void lat_undersampled(uint64_t n, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < NPCT && used < len; i++)
		if (n < lat_pct_needs(lat_pm[i]))
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ";" : "",
						 lat_pct_column[i]);
}

/*
 * Calls @fn for each latency histogram to print, in order: the whole log's
 * (by "all"), then each --by file or pid group's; in each, the ops in enum
 * order that have rows, and for each op latency_us then model_us (when the
 * log has it).
 */
static int each_latency(struct report *rep,
			int (*fn)(void *ctx, const char *by, const char *group, int op, int col,
				  const struct hist *h),
			void *ctx)
{
	size_t n = 0;
	struct report_group **g = report_latency_groups(rep, &n);
	int rc = 0;

	for (size_t i = 0; i <= n && rc == 0; i++) {
		const struct report_group *grp = i == 0 ? &rep->all : g[i - 1];
		const char *by = i == 0 ? "all" : by_name(rep->by);
		if (grp->lat == NULL)
			continue;
		for (int op = 0; op < LOG_OP_COUNT && rc == 0; op++)
			for (int c = 0; c < LAT_COLUMNS && rc == 0; c++)
				if ((*grp->lat)[op][c].n > 0)
					rc = fn(ctx, by, grp->key, op, c, &(*grp->lat)[op][c]);
	}
	free(g);
	return rc;
}

const char *report_metric_name(enum report_metric m)
{
	return m < M_COUNT ? metric_names[m] : "?";
}

int report_metric_parse(const char *name)
{
	for (int m = 0; m < M_COUNT; m++)
		if (strcmp(name, metric_names[m]) == 0)
			return m;
	return -1;
}

/* ---- tables for CSV and JSON ----------------------------------------------- */

enum cell_kind { C_U64, C_I64, C_STR, C_PCT, C_MEAN, C_SCORE };

struct cell {
	enum cell_kind kind;
	uint64_t u;
	int64_t i;
	double d;
	const char *s;
};

#define CU(v)	  ((struct cell){.kind = C_U64, .u = (v)})
#define CS(v)	  ((struct cell){.kind = C_STR, .s = (v)})
#define CPCT(v)	  ((struct cell){.kind = C_PCT, .d = (v)})
#define CMEAN(v)  ((struct cell){.kind = C_MEAN, .d = (v)})
#define CSCORE(v) ((struct cell){.kind = C_SCORE, .d = (v)}) /* a fraction, 4 decimals */

struct table {
	FILE *out;
	enum report_format format;
	const char *name;
	const char *const *cols;
	size_t ncols;
	bool single;  /* JSON: an object, not an array */
	json_t *json; /* the array (or the object once its row is in) */
	json_t *root;
	int err;
};

static double rounded(double v, int decimals)
{
	double k = decimals == 2 ? 100.0 : decimals == 3 ? 1000.0 : 10000.0;
	return round(v * k) / k;
}

/* RFC 4180: quote a field holding a comma, a quote, CR or LF; double quotes. */
static void csv_str(FILE *out, const char *s)
{
	if (strcspn(s, ",\"\r\n") == strlen(s)) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void table_begin(struct table *t, FILE *out, const struct report_output *o, json_t *root,
			enum report_metric m, const char *const *cols, size_t ncols, bool single)
{
	memset(t, 0, sizeof(*t));
	t->out = out;
	t->format = o->format;
	t->name = metric_names[m];
	t->cols = cols;
	t->ncols = ncols;
	t->single = single;
	t->root = root;
	if (t->format == FMT_CSV) {
		if (o->metric < 0)
			fprintf(out, "# %s\n", t->name);
		for (size_t i = 0; i < ncols; i++)
			fprintf(out, "%s%s", i ? "," : "", cols[i]);
		fputc('\n', out);
	} else if (!single) {
		t->json = json_array();
		if (t->json == NULL)
			t->err = -ENOMEM;
	}
}

static void table_row(struct table *t, const struct cell *c)
{
	if (t->format == FMT_CSV) {
		for (size_t i = 0; i < t->ncols; i++) {
			if (i)
				fputc(',', t->out);
			switch (c[i].kind) {
			case C_U64:
				fprintf(t->out, "%" PRIu64, c[i].u);
				break;
			case C_I64:
				fprintf(t->out, "%" PRId64, c[i].i);
				break;
			case C_STR:
				csv_str(t->out, c[i].s);
				break;
			case C_PCT:
				fprintf(t->out, "%.2f", c[i].d);
				break;
			case C_MEAN:
				fprintf(t->out, "%.3f", c[i].d);
				break;
			case C_SCORE:
				fprintf(t->out, "%.4f", c[i].d);
				break;
			}
		}
		fputc('\n', t->out);
		return;
	}
	json_t *obj = json_object();
	if (obj == NULL) {
		t->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < t->ncols; i++) {
		json_t *v = NULL;
		switch (c[i].kind) {
		case C_U64:
			v = json_integer((json_int_t)c[i].u);
			break;
		case C_I64:
			v = json_integer((json_int_t)c[i].i);
			break;
		case C_STR:
			v = json_string(c[i].s);
			break;
		case C_PCT:
			v = json_real(rounded(c[i].d, 2));
			break;
		case C_MEAN:
			v = json_real(rounded(c[i].d, 3));
			break;
		case C_SCORE:
			v = json_real(rounded(c[i].d, 4));
			break;
		}
		if (v == NULL || json_object_set_new(obj, t->cols[i], v) < 0)
			t->err = -ENOMEM;
	}
	if (t->single) {
		json_decref(t->json);
		t->json = obj;
	} else if (json_array_append_new(t->json, obj) < 0) {
		t->err = -ENOMEM;
	}
}

static int table_end(struct table *t)
{
	if (t->format == FMT_CSV) {
		return 0;
	}
	if (t->json == NULL)
		t->json = json_object(); /* a single-row table without its row */
	if (t->json == NULL || json_object_set_new(t->root, t->name, t->json) < 0)
		return -ENOMEM;
	return t->err;
}

/* ---- the tables -------------------------------------------------------------- */

static int t_summary(struct table *t, struct report *rep)
{
	for (int op = 0; op < LOG_OP_COUNT; op++) {
		const struct op_summary *s = &rep->ops[op];
		table_row(t, (struct cell[]){CS(log_op_names[op]), CU(s->rows), CU(s->bytes),
					     CU(s->errors)});
	}
	return 0;
}

static int sizes_rows(struct table *t, const char *by, const struct report_group *g, size_t top)
{
	size_t n;
	struct hist_value *v = hist_values(&g->hist, &n);
	if (v == NULL && n > 0)
		return -ENOMEM;
	if (top > 0 && n > top)
		n = top;
	for (size_t i = 0; i < n; i++)
		table_row(t, (struct cell[]){CS(by), CS(g->key), CU(v[i].value), CU(v[i].count),
					     CPCT(report_share_pct(v[i].count, g->hist.n)),
					     CU(v[i].value * v[i].count)});
	free(v);
	return 0;
}

static void bucket_rows(struct table *t, const char *by, const struct report_group *g)
{
	for (unsigned b = 0; b < HIST_BUCKETS; b++)
		if (g->hist.bucket[b])
			table_row(t, (struct cell[]){
					 CS(by), CS(g->key), CU(hist_bucket_lo(b)),
					 CU(hist_bucket_hi(b)), CU(g->hist.bucket[b]),
					 CPCT(report_share_pct(g->hist.bucket[b], g->hist.n))});
}

static int t_sizes(struct table *t, struct report *rep, size_t top, bool buckets)
{
	size_t n;
	struct report_group **g = report_groups(rep, &n);
	if (g == NULL && rep->by != BY_NONE)
		return -ENOMEM;
	int rc = 0;
	if (buckets)
		bucket_rows(t, "all", &rep->all);
	else
		rc = sizes_rows(t, "all", &rep->all, top);
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (buckets)
			bucket_rows(t, by_name(rep->by), g[i]);
		else
			rc = sizes_rows(t, by_name(rep->by), g[i], top);
	}
	free(g);
	return rc;
}

/*
 * In a log that names its devices, the device tables get a first column
 * "device": the totals of every device under DEVICE_ALL (no device name
 * can be "*"), then each device by name.
 */
#define DEVICE_ALL "*"

/* The device I/Os per read of @d, after the cell @dev when it is not NULL. */
static int per_read_rows(struct table *t, const char *dev, const struct device_metrics *d)
{
	size_t n;
	struct hist_value *v = hist_values_by_value(&d->per_read, &n);
	if (v == NULL && n > 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct cell c[] = {CS(dev), CU(v[i].value), CU(v[i].count),
				   CPCT(report_share_pct(v[i].count, d->reads))};
		table_row(t, dev == NULL ? c + 1 : c);
	}
	free(v);
	return 0;
}

/* The device table's row of @d; with @dev (a log that names its devices) also its bytes and time.
 */
static void device_row(struct table *t, const char *dev, const struct device_metrics *d)
{
	struct cell c[] = {CS(dev),
			   CU(d->reads),
			   CU(d->read_device_ios),
			   CMEAN(report_dev_ios_per_read(d)),
			   CU(d->device_ios),
			   CU(d->pairs),
			   CU(d->seek[0]),
			   CU(d->pairs - d->seek[0]),
			   CPCT(report_share_pct(d->seek[0], d->pairs)),
			   CU(d->read_bytes),
			   CU(d->write_device_ios),
			   CU(d->write_bytes),
			   CU(d->model_us)};
	table_row(t, dev == NULL ? c + 1 : c);
}

static void seek_rows(struct table *t, const char *dev, const struct device_metrics *d)
{
	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		if (!d->seek[b])
			continue;
		struct cell c[] = {CS(dev), CU(hist_bucket_lo(b)), CU(hist_bucket_hi(b)),
				   CU(d->seek[b]), CPCT(report_share_pct(d->seek[b], d->pairs))};
		table_row(t, dev == NULL ? c + 1 : c);
	}
}

/*
 * One of the device tables (@m: M_DEVICE, M_DEVICE_IOS_PER_READ or
 * M_SEEK_DISTANCE): rep->dev, and in a log that names its devices, each
 * device after it.
 */
static int t_device(struct table *t, struct report *rep, enum report_metric m)
{
	size_t n = 0;
	struct report_device **d = report_devices(rep, &n);
	int rc = 0;

	if (rep->dev_named && d == NULL && rep->ndevices > 0)
		return -ENOMEM;
	for (size_t i = 0; i <= n && rc == 0; i++) {
		const char *name = i == 0 ? (rep->dev_named ? DEVICE_ALL : NULL) : d[i - 1]->name;
		const struct device_metrics *dm = i == 0 ? &rep->dev : &d[i - 1]->m;
		if (m == M_DEVICE)
			device_row(t, name, dm);
		else if (m == M_SEEK_DISTANCE)
			seek_rows(t, name, dm);
		else
			rc = per_read_rows(t, name, dm);
	}
	free(d);
	return rc;
}

static const char *const cols_layout[] = {"by",	    "group",	  "blocks_read",
					  "scored", "contiguous", "layout_score"};

static void layout_row(struct table *t, const char *by, const struct report_group *g)
{
	table_row(t, (struct cell[]){CS(by), CS(g->key), CU(g->layout.blocks), CU(g->layout.scored),
				     CU(g->layout.contiguous),
				     CSCORE(report_layout_score(&g->layout))});
}

/*
 * Overall, then per device (by "device", group the device's name) in a log
 * that names its devices, then per file with --by file (the files with
 * reads, as report_groups()).
 */
static int t_layout(struct table *t, struct report *rep)
{
	size_t n = 0;
	struct report_group **g = NULL;

	layout_row(t, "all", &rep->all);
	if (rep->dev_named) {
		struct report_device **d = report_devices(rep, &n);
		if (d == NULL && rep->ndevices > 0)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			layout_row(
			    t, "device",
			    &(struct report_group){.key = d[i]->name, .layout = d[i]->layout});
		free(d);
	}
	if (rep->by != BY_FILE)
		return 0;
	g = report_groups(rep, &n);
	if (g == NULL && n > 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		layout_row(t, "file", g[i]);
	free(g);
	return 0;
}

static const char *const cols_summary[] = {"op", "rows", "bytes", "errors"};
static const char *const cols_sizes[] = {"by", "group", "size", "count", "share_pct", "bytes"};
static const char *const cols_buckets[] = {"by", "group", "lo", "hi", "count", "share_pct"};
static const char *const cols_seq[] = {"reads", "with_previous", "sequential", "sequential_pct"};
static const char *const cols_device[] = {
    "reads",	       "read_device_ios",  "device_ios_per_read", "device_ios",
    "device_io_pairs", "sequential_pairs", "nonsequential_pairs", "sequential_pct"};
static const char *const cols_per_read[] = {"device_ios", "reads", "share_pct"};
static const char *const cols_seek[] = {"lo", "hi", "count", "share_pct"};
/* The same with the device column first, for a log that names its devices. */
static const char *const cols_device_named[] = {
    "device",	      "reads",		 "read_device_ios",  "device_ios_per_read",
    "device_ios",     "device_io_pairs", "sequential_pairs", "nonsequential_pairs",
    "sequential_pct", "read_bytes",	 "write_device_ios", "write_bytes",
    "model_us"};
static const char *const cols_per_read_named[] = {"device", "device_ios", "reads", "share_pct"};
static const char *const cols_seek_named[] = {"device", "lo", "hi", "count", "share_pct"};
static const char *const cols_ext[] = {"extends", "bytes",  "zero_fill_us",
				       "mean_us", "max_us", "us_per_mib"};
static const char *const cols_latency[] = {"by",  "group", "op",    "column", "count",	     "p50",
					   "p90", "p99",   "p99_9", "max",    "undersampled"};
static const char *const cols_lat_buckets[] = {"by", "group", "op",    "column",
					       "lo", "hi",    "count", "share_pct"};

static int latency_row(void *ctx, const char *by, const char *group, int op, int col,
		       const struct hist *h)
{
	uint64_t v[NPCT];
	int rc = hist_percentiles(h, lat_pm, NPCT, v);
	if (rc < 0)
		return rc;
	char under[64];
	lat_undersampled(h->n, under, sizeof(under));
	table_row(ctx, (struct cell[]){CS(by), CS(group), CS(log_op_names[op]),
				       CS(lat_column_name(col)), CU(h->n), CU(v[0]), CU(v[1]),
				       CU(v[2]), CU(v[3]), CU(v[4]), CS(under)});
	return 0;
}

static int latency_bucket_rows(void *ctx, const char *by, const char *group, int op, int col,
			       const struct hist *h)
{
	for (unsigned b = 0; b < HIST_BUCKETS; b++)
		if (h->bucket[b])
			table_row(ctx,
				  (struct cell[]){CS(by), CS(group), CS(log_op_names[op]),
						  CS(lat_column_name(col)), CU(hist_bucket_lo(b)),
						  CU(hist_bucket_hi(b)), CU(h->bucket[b]),
						  CPCT(report_share_pct(h->bucket[b], h->n))});
	return 0;
}

#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))

static int print_tables(FILE *out, struct report *rep, const struct report_output *o, json_t *root)
{
	struct table t;
	int rc = 0;

	for (int m = 0; m < M_COUNT && rc == 0; m++) {
		if (o->metric >= 0 && o->metric != m)
			continue;
		if ((m == M_LATENCY || m == M_LATENCY_BUCKETS) && !rep->latency)
			continue;
		if (o->format == FMT_CSV && o->metric < 0 && m > 0)
			fputc('\n', out);
		switch ((enum report_metric)m) {
		case M_SUMMARY:
			table_begin(&t, out, o, root, M_SUMMARY, cols_summary, NCOLS(cols_summary),
				    false);
			rc = t_summary(&t, rep);
			break;
		case M_READ_SIZES:
			table_begin(&t, out, o, root, M_READ_SIZES, cols_sizes, NCOLS(cols_sizes),
				    false);
			rc = t_sizes(&t, rep, o->top, false);
			break;
		case M_READ_SIZE_BUCKETS:
			table_begin(&t, out, o, root, M_READ_SIZE_BUCKETS, cols_buckets,
				    NCOLS(cols_buckets), false);
			rc = t_sizes(&t, rep, 0, true);
			break;
		case M_SEQUENTIALITY:
			table_begin(&t, out, o, root, M_SEQUENTIALITY, cols_seq, NCOLS(cols_seq),
				    true);
			table_row(&t,
				  (struct cell[]){CU(rep->seq.reads), CU(rep->seq.with_previous),
						  CU(rep->seq.sequential),
						  CPCT(report_share_pct(rep->seq.sequential,
									rep->seq.with_previous))});
			break;
		case M_DEVICE:
			if (rep->dev_named)
				table_begin(&t, out, o, root, M_DEVICE, cols_device_named,
					    NCOLS(cols_device_named), false);
			else
				table_begin(&t, out, o, root, M_DEVICE, cols_device,
					    NCOLS(cols_device), true);
			rc = t_device(&t, rep, M_DEVICE);
			break;
		case M_DEVICE_IOS_PER_READ:
			if (rep->dev_named)
				table_begin(&t, out, o, root, M_DEVICE_IOS_PER_READ,
					    cols_per_read_named, NCOLS(cols_per_read_named), false);
			else
				table_begin(&t, out, o, root, M_DEVICE_IOS_PER_READ, cols_per_read,
					    NCOLS(cols_per_read), false);
			rc = t_device(&t, rep, M_DEVICE_IOS_PER_READ);
			break;
		case M_SEEK_DISTANCE:
			if (rep->dev_named)
				table_begin(&t, out, o, root, M_SEEK_DISTANCE, cols_seek_named,
					    NCOLS(cols_seek_named), false);
			else
				table_begin(&t, out, o, root, M_SEEK_DISTANCE, cols_seek,
					    NCOLS(cols_seek), false);
			rc = t_device(&t, rep, M_SEEK_DISTANCE);
			break;
		case M_AUTOEXTEND:
			table_begin(&t, out, o, root, M_AUTOEXTEND, cols_ext, NCOLS(cols_ext),
				    true);
			table_row(&t, (struct cell[]){CU(rep->ext.extends), CU(rep->ext.bytes),
						      CU(rep->ext.zero_fill_us),
						      CMEAN(report_extend_mean_us(rep)),
						      CU(rep->ext.max_us),
						      CMEAN(report_extend_us_per_mib(rep))});
			break;
		case M_LAYOUT_SCORE:
			table_begin(&t, out, o, root, M_LAYOUT_SCORE, cols_layout,
				    NCOLS(cols_layout), false);
			rc = t_layout(&t, rep);
			break;
		case M_LATENCY:
			table_begin(&t, out, o, root, M_LATENCY, cols_latency, NCOLS(cols_latency),
				    false);
			rc = each_latency(rep, latency_row, &t);
			break;
		case M_LATENCY_BUCKETS:
			table_begin(&t, out, o, root, M_LATENCY_BUCKETS, cols_lat_buckets,
				    NCOLS(cols_lat_buckets), false);
			rc = each_latency(rep, latency_bucket_rows, &t);
			break;
		default:
			continue;
		}
		if (rc == 0)
			rc = table_end(&t);
		else if (t.json != NULL)
			json_decref(t.json);
	}
	return rc;
}

/* ---- text -------------------------------------------------------------------- */

/* @v (a power of two or 0) as 0, 512, 8K, 1M, ... */
static const char *pow2_label(uint64_t v, char *buf, size_t len)
{
	static const char suffix[] = "KMGTPE";
	int k = -1;
	while (v >= 1024 && v % 1024 == 0 && k < 5) {
		v /= 1024;
		k++;
	}
	if (k < 0)
		snprintf(buf, len, "%" PRIu64, v);
	else
		snprintf(buf, len, "%" PRIu64 "%c", v, suffix[k]);
	return buf;
}

static const char *bucket_label(unsigned b, char *buf, size_t len)
{
	char lo[24], hi[24];
	if (b == 0) {
		snprintf(buf, len, "0");
		return buf;
	}
	/* [lo, 2 lo): the upper bound printed as a power of two (bucket 64: 16E) */
	if (b == 64)
		snprintf(hi, sizeof(hi), "16E");
	else
		pow2_label(hist_bucket_hi(b) + 1, hi, sizeof(hi));
	snprintf(buf, len, "[%s,%s)", pow2_label(hist_bucket_lo(b), lo, sizeof(lo)), hi);
	return buf;
}

static void bar(FILE *out, uint64_t count, uint64_t max)
{
	int w = max ? (int)((count * BAR_WIDTH + max - 1) / max) : 0;
	for (int i = 0; i < w; i++)
		fputc('#', out);
}

static void text_buckets(FILE *out, const uint64_t *bucket, uint64_t total)
{
	uint64_t max = 0;
	char label[48];
	for (unsigned b = 0; b < HIST_BUCKETS; b++)
		if (bucket[b] > max)
			max = bucket[b];
	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		if (!bucket[b])
			continue;
		fprintf(out, "    %-12s %10" PRIu64 " %6.2f%% ",
			bucket_label(b, label, sizeof(label)), bucket[b],
			report_share_pct(bucket[b], total));
		bar(out, bucket[b], max);
		fputc('\n', out);
	}
}

static int text_group(FILE *out, const char *by, const struct report_group *g, size_t top,
		      bool sizes, bool buckets)
{
	size_t n;
	struct hist_value *v = hist_values(&g->hist, &n);
	if (v == NULL && n > 0)
		return -ENOMEM;
	fprintf(out, "\n%s%s: %" PRIu64 " requests, %" PRIu64 " bytes\n", by, g->key, g->hist.n,
		g->hist.sum);
	if (sizes) {
		fprintf(out, "    %12s %10s %7s %16s\n", "size", "count", "share", "bytes");
		size_t k = top > 0 && n > top ? top : n;
		for (size_t i = 0; i < k; i++)
			fprintf(out, "    %12" PRIu64 " %10" PRIu64 " %6.2f%% %16" PRIu64 "\n",
				v[i].value, v[i].count, report_share_pct(v[i].count, g->hist.n),
				v[i].value * v[i].count);
		if (k < n)
			fprintf(out, "    (%zu more sizes; --top 0 shows all)\n", n - k);
	}
	if (buckets && g->hist.n > 0) {
		fprintf(out, "  power-of-two buckets, bytes:\n");
		text_buckets(out, g->hist.bucket, g->hist.n);
	}
	free(v);
	return 0;
}

/* One line of the text latency table. */
static int text_latency_row(void *ctx, const char *by, const char *group, int op, int col,
			    const struct hist *h)
{
	uint64_t v[NPCT];
	int rc = hist_percentiles(h, lat_pm, NPCT, v);
	if (rc < 0)
		return rc;
	(void)by;
	fprintf(ctx, "    %-16s %-7s %-10s %10" PRIu64, group, log_op_names[op],
		lat_column_name(col), h->n);
	for (size_t i = 0; i < NPCT; i++)
		fprintf(ctx, " %9" PRIu64 "%c", v[i], h->n < lat_pct_needs(lat_pm[i]) ? '*' : ' ');
	fputc('\n', ctx);
	return 0;
}

static int text_latency_buckets(void *ctx, const char *by, const char *group, int op, int col,
				const struct hist *h)
{
	fprintf(ctx, "  %s%s%s %s %s, power-of-two buckets, us:\n", by, by[0] == 'a' ? "" : " ",
		by[0] == 'a' ? "" : group, log_op_names[op], lat_column_name(col));
	text_buckets(ctx, h->bucket, h->n);
	return 0;
}

static int print_text_latency(FILE *out, struct report *rep, int m)
{
	int rc = 0;

	fprintf(out, "\nLatency, us (percentiles by nearest rank over count samples)\n");
	if (m < 0 || m == M_LATENCY) {
		fprintf(out, "    %-16s %-7s %-10s %10s", "group", "op", "column", "count");
		for (size_t i = 0; i < NPCT; i++)
			fprintf(out, " %9s ", lat_pct_label[i]);
		fputc('\n', out);
		rc = each_latency(rep, text_latency_row, out);
		fprintf(out,
			"    * too few samples for that percentile: the p-th needs 100/(100-p) "
			"(p50 2, p90 10, p99 100, p99.9 1000)\n");
	}
	if (rc == 0 && (m < 0 || m == M_LATENCY_BUCKETS))
		rc = each_latency(rep, text_latency_buckets, out);
	return rc;
}

/*
 * The text of the device metrics @d (metric @m, or all when < 0); @named:
 * the log names its devices, and the bytes and modelled time are printed.
 * M_DEVICE alone prints the totals lines (the CSV's device table), not
 * the histograms of M_DEVICE_IOS_PER_READ and M_SEEK_DISTANCE.
 */
static int text_device(FILE *out, const struct device_metrics *d, int m, bool named)
{
	bool all = m < 0;

	if (named && (all || m == M_DEVICE))
		fprintf(out,
			"    read %" PRIu64 " bytes in %" PRIu64 " device I/Os, wrote %" PRIu64
			" bytes in %" PRIu64 " device I/Os; model_us %" PRIu64 "\n",
			d->read_bytes, d->device_ios - d->write_device_ios, d->write_bytes,
			d->write_device_ios, d->model_us);
	if (all || m == M_DEVICE_IOS_PER_READ) {
		fprintf(out,
			"    device I/Os per read: %.3f mean (%" PRIu64 " for %" PRIu64 " reads)\n",
			report_dev_ios_per_read(d), d->read_device_ios, d->reads);
		size_t n;
		struct hist_value *v = hist_values_by_value(&d->per_read, &n);
		if (v == NULL && n > 0)
			return -ENOMEM;
		uint64_t max = 0;
		for (size_t i = 0; i < n; i++)
			max = v[i].count > max ? v[i].count : max;
		for (size_t i = 0; i < n; i++) {
			fprintf(out, "    %6" PRIu64 " device I/O%s %10" PRIu64 " %6.2f%% ",
				v[i].value, v[i].value == 1 ? " " : "s", v[i].count,
				report_share_pct(v[i].count, d->reads));
			bar(out, v[i].count, max);
			fputc('\n', out);
		}
		free(v);
	}
	if (m == M_DEVICE)
		fprintf(out, "    device I/Os per read: %.3f mean (%" PRIu64 " for %" PRIu64 " reads)\n",
			report_dev_ios_per_read(d), d->read_device_ios, d->reads);
	if (all || m == M_DEVICE || m == M_SEEK_DISTANCE) {
		fprintf(out,
			"    device I/Os of reads and writes %" PRIu64 "; of their %" PRIu64
			" consecutive pairs, sequential %" PRIu64
			" (%.2f%%), non-sequential %" PRIu64 "\n",
			d->device_ios, d->pairs, d->seek[0], report_share_pct(d->seek[0], d->pairs),
			d->pairs - d->seek[0]);
		if (d->pairs > 0 && m != M_DEVICE) {
			fprintf(out, "  seek distance between consecutive device I/Os, bytes:\n");
			text_buckets(out, d->seek, d->pairs);
		}
	}
	return 0;
}

static int print_text(FILE *out, struct report *rep, const struct report_output *o)
{
	size_t top = o->top;
	int m = o->metric;
	bool all = m < 0;
	int rc = 0;

	fprintf(out,
		"scatterfs-report: %s: %" PRIu64 " rows, %zu files, ts_us %" PRIu64 " to %" PRIu64
		"\n",
		o->name, rep->rows, report_file_count(rep), rep->first_ts_us, rep->last_ts_us);

	if (all || m == M_SUMMARY) {
		fprintf(out, "\nRows by op\n    %-8s %12s %16s %8s\n", "op", "rows", "bytes asked",
			"errors");
		for (int op = 0; op < LOG_OP_COUNT; op++)
			fprintf(out, "    %-8s %12" PRIu64 " %16" PRIu64 " %8" PRIu64 "\n",
				log_op_names[op], rep->ops[op].rows, rep->ops[op].bytes,
				rep->ops[op].errors);
	}
	if (all || m == M_READ_SIZES || m == M_READ_SIZE_BUCKETS) {
		bool sizes = all || m == M_READ_SIZES, buckets = all || m == M_READ_SIZE_BUCKETS;
		rc = text_group(out, "Read sizes, ", &rep->all, top, sizes, buckets);
		size_t n;
		struct report_group **g = report_groups(rep, &n);
		if (g == NULL && rep->by != BY_NONE)
			return -ENOMEM;
		for (size_t i = 0; i < n && rc == 0; i++)
			rc = text_group(out,
					rep->by == BY_OP    ? "Request sizes, op "
					: rep->by == BY_PID ? "Read sizes, pid "
							    : "Read sizes, file ",
					g[i], top, sizes, buckets);
		free(g);
		if (rc < 0)
			return rc;
	}
	if (all || m == M_SEQUENTIALITY)
		fprintf(out,
			"\nLogical sequentiality (a read that starts where the previous read of "
			"its file ended)\n"
			"    reads %" PRIu64 ", after a read of the same file %" PRIu64
			", sequential %" PRIu64 " (%.2f%%)\n",
			rep->seq.reads, rep->seq.with_previous, rep->seq.sequential,
			report_share_pct(rep->seq.sequential, rep->seq.with_previous));
	if (all || m == M_DEVICE || m == M_DEVICE_IOS_PER_READ || m == M_SEEK_DISTANCE) {
		size_t n = 0;
		struct report_device **d = report_devices(rep, &n);
		if (rep->dev_named && d == NULL && rep->ndevices > 0)
			return -ENOMEM;
		if (rep->dev_named)
			fprintf(out, "\nDevice I/O, all devices (each device's seek distances from "
				     "its own previous device I/O)\n");
		else
			fprintf(out, "\nDevice I/O\n");
		rc = text_device(out, &rep->dev, m, rep->dev_named);
		for (size_t i = 0; i < n && rc == 0; i++) {
			fprintf(out, "\nDevice I/O, device %s\n", d[i]->name);
			rc = text_device(out, &d[i]->m, m, true);
		}
		free(d);
		if (rc < 0)
			return rc;
	}
	if (all || m == M_AUTOEXTEND)
		fprintf(out,
			"\nAutoextend\n"
			"    extends %" PRIu64 ", bytes added %" PRIu64 " (%.3f MiB)\n"
			"    zero-fill %" PRIu64 " us: %.3f us mean and %" PRIu64
			" us max per extend, %.3f us per MiB\n",
			rep->ext.extends, rep->ext.bytes, (double)rep->ext.bytes / 1048576.0,
			rep->ext.zero_fill_us, report_extend_mean_us(rep), rep->ext.max_us,
			report_extend_us_per_mib(rep));
	if (all || m == M_LAYOUT_SCORE) {
		fprintf(out,
			"\nDynamic layout score (blocks of %" PRIu64 " bytes read right after the "
			"previous block read of their file)\n"
			"    blocks read %" PRIu64 ", after a block of the same file %" PRIu64
			", contiguous %" PRIu64 ": layout score %.4f\n",
			rep->block_size, rep->all.layout.blocks, rep->all.layout.scored,
			rep->all.layout.contiguous, report_layout_score(&rep->all.layout));
		if (rep->dev_named) {
			size_t n = 0;
			struct report_device **d = report_devices(rep, &n);
			if (d == NULL && rep->ndevices > 0)
				return -ENOMEM;
			for (size_t i = 0; i < n; i++)
				fprintf(out,
					"    device %s: blocks read %" PRIu64
					", layout score %.4f\n",
					d[i]->name, d[i]->layout.blocks,
					report_layout_score(&d[i]->layout));
			free(d);
		}
		if (rep->by == BY_FILE) {
			size_t n = 0;
			struct report_group **g = report_groups(rep, &n);
			if (g == NULL && n > 0)
				return -ENOMEM;
			for (size_t i = 0; i < n; i++)
				fprintf(out,
					"    file %s: blocks read %" PRIu64 ", layout score %.4f\n",
					g[i]->key, g[i]->layout.blocks,
					report_layout_score(&g[i]->layout));
			free(g);
		}
	}
	if (rep->latency && (all || m == M_LATENCY || m == M_LATENCY_BUCKETS))
		rc = print_text_latency(out, rep, m);
	return rc;
}

int report_print(FILE *out, struct report *rep, const struct report_output *o)
{
	int rc;

	if (o->format == FMT_TEXT) {
		struct report_output t = *o;
		rc = print_text(out, rep, &t);
	} else if (o->format == FMT_CSV) {
		rc = print_tables(out, rep, o, NULL);
	} else {
		json_t *root = json_object();
		if (root == NULL)
			return -ENOMEM;
		rc = json_object_set_new(root, "log", json_string(o->name)) < 0 ||
			     json_object_set_new(root, "rows",
						 json_integer((json_int_t)rep->rows)) < 0 ||
			     json_object_set_new(root, "by", json_string(by_name(rep->by))) < 0
			 ? -ENOMEM
			 : 0;
		if (rc == 0)
			rc = print_tables(out, rep, o, root);
		if (rc == 0 &&
		    json_dumpf(root, out,
			       JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15)) < 0)
			rc = -EIO;
		if (rc == 0)
			fputc('\n', out);
		json_decref(root);
	}
	if (rc == 0 && (fflush(out) != 0 || ferror(out)))
		rc = -EIO;
	return rc;
}
