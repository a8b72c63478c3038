/*
 * scatterfs-report LOG [options]: read-size histograms, logical
 * sequentiality, device I/O and seek summaries and autoextend costs of a
 * scatterfs request log, as text, CSV or JSON; optionally a fio iolog of
 * its reads and writes and a gnuplot plot.
 *
 * One pass over the log, row by row (report_parse.c): every consumer (the
 * metrics, the iolog writer, the plot's timeline) sees each row once, so
 * memory does not grow with the log.  This file only parses the command
 * line and wires the pieces of the library (report.h) together.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "build_config.h"
#include "extent_map_import.h"
#include "size.h"
#include "layout_score.h"
#include "report.h"

#define TEXT_TOP 20 /* exact sizes per group in text output unless --top */
/* The characters of a device name in the log's NAME:offset+length items. */
#define DEVICE_NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"

static void usage(FILE *out)
{
	fprintf(out, "usage: scatterfs-report LOG [options]\n"
		     "       scatterfs-report --layout EXTENTS_CSV [--block-size BYTES]\n"
		     "\n"
		     "Summarises a scatterfs request log: CSV with the header\n"
		     "  " LOG_HEADER_BASE "\n"
		     "optionally followed by model_us (read by --latency) and further columns,\n"
		     "which are ignored.\n"
		     "LOG may be - for standard input.  The log is read once, as a stream.\n"
		     "The op column holds one of:");
	for (int i = 0; i < LOG_OP_COUNT; i++)
		fprintf(out, " %s", log_op_names[i]);
	fprintf(out,
		"\n"
		"(trim, in logs written before punch had its name, counts as punch).\n"
		"\n"
		"Metrics (the --metric names):\n"
		"  summary              rows, bytes (sum of size) and errors per op\n"
		"  read_sizes           exact read sizes: count, share of the reads, bytes;\n"
		"                       most frequent first\n"
		"  read_size_buckets    read sizes in power-of-two buckets [lo, hi] (text:\n"
		"                       a bar chart)\n"
		"  sequentiality        reads that start where the previous read of the same\n"
		"                       file ended, of the reads that follow a read of that file\n"
		"  device               device I/Os per read (mean); device I/Os of reads and\n"
		"                       writes in log order: device_io_pairs (pairs of\n"
		"                       consecutive device I/Os), sequential_pairs (the second\n"
		"                       starts where the first ended), nonsequential_pairs\n"
		"                       (the others: seeks) and sequential_pct\n"
		"  device_ios_per_read  distribution of the number of device I/Os of a read\n"
		"  seek_distance        |offset - end of the previous device I/O| in bytes,\n"
		"                       power-of-two buckets (0 = sequential)\n"
		"  autoextend           extends, bytes added, zero-fill time in total, mean and\n"
		"                       max per extend, and per MiB added\n"
		"  latency              (with --latency) per op: count, p50, p90, p99, p99.9 and\n"
		"                       max of latency_us, and of model_us when the log has it,\n"
		"                       in microseconds; with --by file or pid also per file or\n"
		"                       process.  Percentiles by nearest rank: the p-th is the\n"
		"                       smallest value with at least ceil(p/100 x count) values\n"
		"                       at or below it (as fio's completion-latency\n"
		"                       percentiles, from exact values here).  A percentile\n"
		"                       resting on fewer samples than 100/(100-p) (p50 2,\n"
		"                       p90 10, p99 100, p99.9 1000) is flagged: column\n"
		"                       undersampled lists them (p90;p99;p99_9), text marks\n"
		"                       each with '*'\n"
		"  layout_score         dynamic layout score: the device I/Os of each file's\n"
		"                       reads in log order, cut into --block-size blocks;\n"
		"                       of the blocks after the file's first, the share that\n"
		"                       start where the previous block read ended (after\n"
		"                       Smith and Seltzer, SIGMETRICS 1997); overall, and per\n"
		"                       file with --by file\n"
		"  latency_buckets      (with --latency) the same latencies in power-of-two\n"
		"                       buckets [lo, hi] (text: a bar chart)\n"
		"\n"
		"Row selection (a row must pass every one given; applies to every metric, the\n"
		"fio iolog and the plots):\n"
		"  --path GLOB          rows whose path matches GLOB (fnmatch(3); * also\n"
		"                       matches /)\n"
		"  --pid N[,N]...       rows of these processes\n"
		"  --op OP[,OP]...      rows of these ops\n"
		"  --since SEC          rows with ts_us >= SEC seconds since the mount\n"
		"  --until SEC          rows with ts_us < SEC seconds since the mount (SEC may\n"
		"                       have up to 6 decimals)\n"
		"\n"
		"Options:\n"
		"  --by file|pid|op     also give the read-size histograms per file, per\n"
		"                       process, or per op (op: the request sizes of every op)\n"
		"  --format text|csv|json\n"
		"                       text (default) for people.  csv: every metric as a\n"
		"                       table, each preceded by a line '# NAME' and separated\n"
		"                       by an empty line; with --metric only that table, pure\n"
		"                       CSV (header row, then data rows).  json: one object;\n"
		"                       keys log, rows, by, then one key per metric with the\n"
		"                       CSV columns (an object for sequentiality, device and\n"
		"                       autoextend, an array of objects otherwise).  Shares\n"
		"                       are percent with 2 decimals, means with 3.\n"
		"  --metric NAME        print one metric only (any format)\n"
		"  --latency            also give the latency and latency_buckets metrics\n"
		"  --top N              at most N exact sizes per histogram (0 = all; default\n"
		"                       20 in text, all in csv and json)\n"
		"  --fio-iolog FILE     also write the reads and writes as a fio iolog, to\n"
		"                       replay with fio --read_iolog=FILE (add --readonly to\n"
		"                       skip the writes, --replay_redirect=DEV to send every\n"
		"                       I/O to DEV, --replay_no_stall to ignore the timing)\n"
		"  --iolog-version 2|3  iolog version (default 3: each line starts with its\n"
		"                       time in microseconds since the first request, and fio\n"
		"                       >= 3.31 replays the timing; 2: no timing)\n"
		"  --iolog-dir DIR      file mode (the default): one I/O per request, at its\n"
		"                       logical offset with the bytes it did, on DIR/PATH\n"
		"                       (default: PATH, relative to fio's working directory;\n"
		"                       use the mount point, or a copy of the files)\n"
		"  --iolog-align BYTES  every I/O rounded out to BYTES boundaries (offset down,\n"
		"                       end up; a power of two from 512 to 1M), so that fio\n"
		"                       --direct=1 replays it: a database's requests are not\n"
		"                       aligned (SQLite reads 100 bytes of its header).  The\n"
		"                       iolog's first line says so after its version\n"
		"  --iolog-device FILE  device mode: one I/O per device I/O of each request, at\n"
		"                       its device offset on FILE (the backing device or a copy\n"
		"                       of it): replays what the device saw\n"
		"  --iolog-device NAME=FILE\n"
		"                       device mode for a log of several devices, once per\n"
		"                       device: one iolog per device instead of the\n"
		"                       --fio-iolog FILE, named with .NAME before its extension\n"
		"                       (r.iolog: r.main.iolog, r.wal.iolog), each with the\n"
		"                       device's I/Os against its FILE and timed from the log's\n"
		"                       first request, for one fio job per device\n"
		"  --plot FILE.png|FILE.svg\n"
		"                       plot the read-size histogram with gnuplot (Debian\n"
		"                       package gnuplot-nox)\n"
		"  --timeline           with --plot: also each read's size and each of its\n"
		"                       device I/Os' device offset against time (a colour\n"
		"                       per device in a log of several)\n"
		"  --block-size BYTES   block size of the layout scores (default 4096; give\n"
		"                       the mount's [device] block_size to match its own\n"
		"                       .scatterfs/layout scores)\n"
		"  --layout MAP         print the static layout score of the extent map MAP\n"
		"                       (the CSV of .scatterfs/extents/PATH or scatterfs-plan;\n"
		"                       also filefrag -v or xfs_bmap -v text) as one line\n"
		"                       'extents=E runs=R blocks=B scored=S contiguous=C\n"
		"                       layout_score=F largest_jump=J' and exit (no LOG)\n"
		"                       A CSV with the device column (several devices): first\n"
		"                       one such line per device, starting 'device=NAME ', of\n"
		"                       its extents; the last line adds the devices' counts\n"
		"  -h, --help           print this help and exit\n"
		"  --version            print the version and exit\n"
		"\n"
		"Several devices: a log whose device_io items are NAME:offset+length (NAME of\n"
		"letters, digits, _ . -) gives the device, device_ios_per_read and\n"
		"seek_distance metrics a first column device: '*' for every device added\n"
		"(each device's seeks from its own previous device I/O), then each device by\n"
		"name (JSON: device becomes an array), and device adds read_bytes,\n"
		"write_device_ios, write_bytes and model_us (sum over the read and write rows\n"
		"with device I/Os on the device); layout_score gets rows by device.\n"
		"A one-device log (offset+length items) reads as always.\n"
		"\n"
		"fio iolog names hold at most 256 bytes and no white space: requests on other\n"
		"paths are not exported (counted on standard error).  Failed requests (result\n"
		"< 0) are not exported in file mode.\n"
		"\n"
		"Exit status: 0 on success, 1 on an error (unreadable or malformed log, gnuplot\n"
		"missing or failing, unwritable output), 2 on a usage error.\n");
}

enum {
	OPT_BY = 256,
	OPT_FORMAT,
	OPT_METRIC,
	OPT_TOP,
	OPT_IOLOG,
	OPT_IOLOG_VERSION,
	OPT_IOLOG_DIR,
	OPT_IOLOG_DEVICE,
	OPT_IOLOG_ALIGN,
	OPT_PLOT,
	OPT_TIMELINE,
	OPT_VERSION,
	OPT_LATENCY,
	OPT_PATH,
	OPT_PID,
	OPT_OP,
	OPT_SINCE,
	OPT_UNTIL,
	OPT_BLOCK_SIZE,
	OPT_LAYOUT,
};

static const struct option options[] = {
    {"by", required_argument, NULL, OPT_BY},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"metric", required_argument, NULL, OPT_METRIC},
    {"top", required_argument, NULL, OPT_TOP},
    {"fio-iolog", required_argument, NULL, OPT_IOLOG},
    {"iolog-version", required_argument, NULL, OPT_IOLOG_VERSION},
    {"iolog-dir", required_argument, NULL, OPT_IOLOG_DIR},
    {"iolog-device", required_argument, NULL, OPT_IOLOG_DEVICE},
    {"iolog-align", required_argument, NULL, OPT_IOLOG_ALIGN},
    {"plot", required_argument, NULL, OPT_PLOT},
    {"timeline", no_argument, NULL, OPT_TIMELINE},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {"latency", no_argument, NULL, OPT_LATENCY},
    {"path", required_argument, NULL, OPT_PATH},
    {"pid", required_argument, NULL, OPT_PID},
    {"op", required_argument, NULL, OPT_OP},
    {"since", required_argument, NULL, OPT_SINCE},
    {"until", required_argument, NULL, OPT_UNTIL},
    {"block-size", required_argument, NULL, OPT_BLOCK_SIZE},
    {"layout", required_argument, NULL, OPT_LAYOUT},
    {NULL, 0, NULL, 0},
};

static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int bad_usage(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "scatterfs-report: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry 'scatterfs-report --help'.\n");
	va_end(ap);
	return 2;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * --layout MAP: the static layout score of an extent map.  A map with the
 * device column (a mount with several devices) gets one line per device,
 * "device=NAME " then the score of that device's extents in logical order,
 * devices by name, and last the line of them all: their counts added (as
 * layout_stats_add() adds files), so a change of device is not counted as
 * a jump of either.
 */
static int print_static_layout(const char *path, uint64_t block_size)
{
	struct imported_map m;
	struct layout_stats st, sum = {0};
	struct layout_extent *v;
	char err[512], line[256];
	char **names = NULL;

	if (map_import_file_devices(path, MAP_AUTO, &m, err, sizeof(err)) < 0) {
		fprintf(stderr, "scatterfs-report: %s\n", err);
		return 1;
	}
	v = malloc(m.n * sizeof(*v));
	names = m.ndevices ? malloc(m.ndevices * sizeof(*names)) : NULL;
	if (v == NULL || (m.ndevices && names == NULL)) {
		free(v);
		imported_map_release(&m);
		fprintf(stderr, "scatterfs-report: %s\n", strerror(ENOMEM));
		return 1;
	}
	if (m.ndevices > 0) {
		memcpy(names, m.devices, m.ndevices * sizeof(*names));
		qsort(names, m.ndevices, sizeof(*names), cmp_name);
	}
	for (size_t d = 0; d < m.ndevices; d++) {
		size_t k = 0;
		for (size_t i = 0; i < m.n; i++)
			if (strcmp(m.devices[m.v[i].device], names[d]) == 0)
				v[k++] = (struct layout_extent){m.v[i].logical, m.v[i].physical,
								m.v[i].length};
		layout_score(v, k, block_size, &st);
		layout_stats_format(&st, line, sizeof(line));
		printf("device=%s %s\n", names[d], line);
		layout_stats_add(&sum, &st);
	}
	if (m.ndevices == 0) {
		for (size_t i = 0; i < m.n; i++)
			v[i] =
			    (struct layout_extent){m.v[i].logical, m.v[i].physical, m.v[i].length};
		layout_score(v, m.n, block_size, &sum);
	}
	layout_stats_format(&sum, line, sizeof(line));
	printf("%s\n", line);
	free(names);
	free(v);
	imported_map_release(&m);
	return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *layout_map = NULL;
	uint64_t block_size = 4096;
	enum report_by by = BY_NONE;
	struct report_output o = {.format = FMT_TEXT, .metric = -1};
	long top = -1;
	struct iolog_opts io = {.version = 3};
	const char *iolog_path = NULL, *plot_path = NULL;
	bool timeline = false, iolog_opt = false, latency = false;
	struct report_filter filter = {0};
	const char *since_arg = NULL, *until_arg = NULL; /* as given, for the message */
	struct iolog_target targets[64];
	size_t ntargets = 0;
	char ferr[256];
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		switch (c) {
		case OPT_BY:
			if (strcmp(optarg, "file") == 0)
				by = BY_FILE;
			else if (strcmp(optarg, "pid") == 0)
				by = BY_PID;
			else if (strcmp(optarg, "op") == 0)
				by = BY_OP;
			else
				return bad_usage("--by '%s': expected file, pid or op", optarg);
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "text") == 0)
				o.format = FMT_TEXT;
			else if (strcmp(optarg, "csv") == 0)
				o.format = FMT_CSV;
			else if (strcmp(optarg, "json") == 0)
				o.format = FMT_JSON;
			else
				return bad_usage("--format '%s': expected text, csv or json",
						 optarg);
			break;
		case OPT_METRIC:
			o.metric = report_metric_parse(optarg);
			if (o.metric < 0)
				return bad_usage("--metric '%s': expected summary, read_sizes, "
						 "read_size_buckets, sequentiality, device, "
						 "device_ios_per_read, seek_distance, autoextend, layout_score, "
						 "latency or latency_buckets",
						 optarg);
			break;
		case OPT_LATENCY:
			latency = true;
			break;
		case OPT_PATH:
			filter.path_glob = optarg;
			break;
		case OPT_PID:
			if (report_filter_pids(&filter, optarg, ferr, sizeof(ferr)) < 0)
				return bad_usage("%s", ferr);
			break;
		case OPT_OP:
			if (report_filter_ops(&filter, optarg, ferr, sizeof(ferr)) < 0)
				return bad_usage("%s", ferr);
			break;
		case OPT_SINCE:
		case OPT_UNTIL: {
			bool since = c == OPT_SINCE;
			if (report_parse_seconds(optarg,
						 since ? &filter.since_us : &filter.until_us) < 0)
				return bad_usage("--%s '%s': expected seconds since the mount "
						 "(at most 6 decimals)",
						 since ? "since" : "until", optarg);
			*(since ? &filter.has_since : &filter.has_until) = true;
			*(since ? &since_arg : &until_arg) = optarg;
			break;
		}
		case OPT_LAYOUT:
			layout_map = optarg;
			break;
		case OPT_BLOCK_SIZE: {
			/* what [device] block_size takes: a score over other blocks has no mount */
			uint64_t b;
			if (parse_size(optarg, &b) < 0 || b < 512 || b > (1u << 20) || (b & (b - 1)))
				return bad_usage("--block-size '%s': allowed a power of two from 512 "
						 "to 1M (K and M suffixes), as [device] block_size",
						 optarg);
			block_size = b;
			break;
		}
		case OPT_TOP: {
			char *end;
			errno = 0;
			top = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || top < 0)
				return bad_usage("--top '%s': expected a number >= 0 (0 = all)",
						 optarg);
			break;
		}
		case OPT_IOLOG:
			iolog_path = optarg;
			break;
		case OPT_IOLOG_VERSION:
			if (strcmp(optarg, "2") == 0)
				io.version = 2;
			else if (strcmp(optarg, "3") == 0)
				io.version = 3;
			else
				return bad_usage("--iolog-version '%s': expected 2 or 3", optarg);
			iolog_opt = true;
			break;
		case OPT_IOLOG_DIR:
			io.dir = optarg;
			iolog_opt = true;
			break;
		case OPT_IOLOG_DEVICE: {
			/* NAME=FILE when what precedes the first '=' is a device name */
			const char *eq = strchr(optarg, '=');
			size_t k = eq ? (size_t)(eq - optarg) : 0;
			if (k > 0 && strspn(optarg, DEVICE_NAME_CHARS) == k) {
				if (ntargets == sizeof(targets) / sizeof(targets[0]))
					return bad_usage("--iolog-device NAME=FILE: at most %zu "
							 "devices",
							 ntargets);
				if (eq[1] == '\0')
					return bad_usage("--iolog-device %s: FILE is empty",
							 optarg);
				optarg[k] = '\0'; /* argv's strings are the program's to modify */
				targets[ntargets++] = (struct iolog_target){optarg, optarg + k + 1};
			} else {
				if (io.device != NULL)
					return bad_usage(
					    "--iolog-device FILE given twice ('%s' and "
					    "'%s'); several devices take NAME=FILE",
					    io.device, optarg);
				io.device = optarg;
			}
			iolog_opt = true;
			break;
		}
		case OPT_IOLOG_ALIGN: {
			char *end;
			errno = 0;
			unsigned long long b = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || b < 512 ||
			    b > IOLOG_ALIGN_MAX || (b & (b - 1)))
				return bad_usage(
				    "--iolog-align '%s': expected a power of two of bytes "
				    "from 512 to %u (the block size fio --direct=1 "
				    "needs: 512, or 4096 for a 4K-sector device)",
				    optarg, IOLOG_ALIGN_MAX);
			io.align = b;
			iolog_opt = true;
			break;
		}
		case OPT_PLOT: {
			/* a usage error, found before the log is read (report_plot.c says it too) */
			const char *dot = strrchr(optarg, '.');
			if (!dot || (strcasecmp(dot, ".png") != 0 && strcasecmp(dot, ".svg") != 0))
				return bad_usage("--plot %s: the file name must end in .png or .svg",
						 optarg);
			plot_path = optarg;
			break;
		}
		case OPT_TIMELINE:
			timeline = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf("scatterfs-report %s\n", PACKAGE_VERSION);
			return 0;
		case ':':
			return bad_usage("option %s needs a value", argv[optind - 1]);
		default:
			if (optopt)
				return bad_usage("unknown option '-%c'", optopt);
			return bad_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (layout_map != NULL) {
		if (optind < argc)
			return bad_usage("--layout takes no LOG; extra argument '%s'",
					 argv[optind]);
		return print_static_layout(layout_map, block_size);
	}
	if (filter.has_since && filter.has_until && filter.until_us <= filter.since_us)
		return bad_usage("--until %s is not after --since %s: no row could match", until_arg,
				 since_arg);
	if (optind >= argc)
		return bad_usage("%s", "missing the request log (LOG)");
	if (optind + 1 < argc)
		return bad_usage("one request log only; extra argument '%s'", argv[optind + 1]);
	if (iolog_opt && iolog_path == NULL)
		return bad_usage("%s", "--iolog-version, --iolog-dir, --iolog-device and "
				       "--iolog-align need --fio-iolog FILE");
	if (io.dir && (io.device || ntargets))
		return bad_usage("%s", "--iolog-dir and --iolog-device exclude each other");
	if (io.device && ntargets)
		return bad_usage("--iolog-device %s and --iolog-device %s=%s: FILE is for a "
				 "one-device log, NAME=FILE for a log of several devices",
				 io.device, targets[0].name, targets[0].file);
	io.targets = targets;
	io.ntargets = ntargets;
	if (timeline && plot_path == NULL)
		return bad_usage("%s", "--timeline needs --plot FILE");
	if ((o.metric == M_LATENCY || o.metric == M_LATENCY_BUCKETS) && !latency)
		return bad_usage("--metric %s needs --latency", report_metric_name(o.metric));
	const char *log_path = argv[optind];
	o.name = log_path;
	o.top = top >= 0 ? (size_t)top : o.format == FMT_TEXT ? TEXT_TOP : 0;

	char err[512];
	struct log_reader *r = NULL;
	struct iolog_writer *iw = NULL;
	struct plot *plot = NULL;
	struct report rep;
	int rc, status = 1;

	report_init(&rep, by);
	rep.latency = latency;
	rep.block_size = block_size;
	if (log_reader_open(log_path, &r, err, sizeof(err)) < 0) {
		fprintf(stderr, "scatterfs-report: %s\n", err);
		goto out;
	}
	if (iolog_path && iolog_open(iolog_path, &io, &iw, err, sizeof(err)) < 0) {
		fprintf(stderr, "scatterfs-report: --fio-iolog %s\n", err);
		goto out;
	}
	if (plot_path && plot_open(plot_path, timeline, &plot, err, sizeof(err)) < 0) {
		fprintf(stderr, "scatterfs-report: %s\n", err);
		goto out;
	}

	struct report_feed_counts fc;
	rc = report_feed(r, &filter, &rep, iw, plot, &fc);
	if (rc < 0 && fc.line == 0) {
		fprintf(stderr, "scatterfs-report: %s\n", log_reader_error(r));
		goto out;
	}
	if (rc < 0) {
		fprintf(stderr, "scatterfs-report: %s:%" PRIu64 ": %s\n", log_path, fc.line,
			rc == -EINVAL && iw && iolog_error(iw)[0] ? iolog_error(iw)
								  : strerror(-rc));
		goto out;
	}
	if (report_filter_active(&filter))
		fprintf(stderr, "scatterfs-report: %" PRIu64 " of %" PRIu64 " rows selected\n",
			fc.selected, fc.rows);

	rc = report_print(stdout, &rep, &o);
	if (rc < 0) {
		fprintf(stderr, "scatterfs-report: writing the report: %s\n", strerror(-rc));
		goto out;
	}
	status = 0;
	if (iw) {
		rc = iolog_finish(iw);
		if (rc < 0) {
			fprintf(stderr, "scatterfs-report: --fio-iolog %s: %s\n", iolog_path,
				strerror(-rc));
			status = 1;
		} else {
			const char *path;
			uint64_t reads, writes;
			for (size_t i = 0; iolog_output(iw, i, &path, &reads, &writes) == 0; i++)
				fprintf(stderr,
					"scatterfs-report: fio iolog %s (version %d): %" PRIu64
					" reads, %" PRIu64 " writes\n",
					path, io.version, reads, writes);
			uint64_t a, b, skipped;
			iolog_close(iw, &a, &b, &skipped);
			iw = NULL;
			if (skipped)
				fprintf(stderr,
					"scatterfs-report: warning: %" PRIu64
					" requests not exported to %s (failed, empty, or a path "
					"fio's iolog cannot hold: white space or over 256 bytes)\n",
					skipped, iolog_path);
		}
	}
	if (plot) {
		rc = plot_finish(plot, &rep, err, sizeof(err));
		plot = NULL;
		if (rc < 0) {
			fprintf(stderr, "scatterfs-report: %s\n", err);
			status = 1;
		}
	}
out:
	if (iw) {
		const char *path;
		uint64_t a, b;
		iolog_finish(iw);
		for (size_t i = 0; iolog_output(iw, i, &path, &a, &b) == 0; i++)
			remove(path); /* incomplete */
		iolog_free(iw);
	}
	if (plot)
		plot_discard(plot);
	log_reader_close(r);
	report_free(&rep);
	report_filter_free(&filter);
	return status;
}
