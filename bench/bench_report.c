/*
 * bench-report: throughput of scatterfs-report on a synthetic request log
 * (not a test: it prints numbers).
 *
 *   bench-report [--rows N] [--file PATH] [--keep] [--report PATH]
 *
 * Generates a log of N rows (default 10,000,000; about 70 bytes a row) in
 * $TMPDIR, then times, on the same file in the same run (the file is in the
 * page cache after it is written and after a first untimed cat):
 *   1. `wc -l FILE` and `cat FILE` (the baselines: reading the bytes);
 *   2. libcsv (csv_parse with empty callbacks: splitting only, no decoding);
 *   3. the report library's reader (report_parse.c: splitting and decoding);
 *   4. the whole tool, `scatterfs-report FILE` in text, CSV and --by file.
 * and prints rows per second and each time's ratio to `wc -l`.
 *
 * The log: 80% reads, 12% writes, 1% extends, 5% fsyncs, 1% punches, 1% zeros over
 * 64 files (one with a comma in its name, so quoted), 8 processes; sizes
 * 8K, 16K, 128K and 4K; half the reads continue the file's previous read;
 * one to three device I/Os per read or write, none for 5% (holes).
 */
#include <csv.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "report.h"
#include "splitmix64.h"

#ifndef SCATTERFS_REPORT
#define SCATTERFS_REPORT "scatterfs-report"
#endif

extern char **environ;

static uint64_t rng_state = 42;

static uint64_t rnd(void)
{
	return splitmix64_next(&rng_state);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *put_u64(char *p, uint64_t v)
{
	char tmp[20];
	int i = 20;
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	memcpy(p, tmp + i, (size_t)(20 - i));
	return p + (20 - i);
}

/* Writes @rows rows to @path.  @return its size in bytes, or 0 on failure. */
static uint64_t generate(const char *path, uint64_t rows)
{
	enum { NFILES = 64, NPIDS = 8 };
	static const uint64_t sizes[] = {8192, 16384, 131072, 4096};
	char names[NFILES][48];
	uint64_t next[NFILES] = {0};
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		perror(path);
		return 0;
	}
	for (int i = 0; i < NFILES; i++)
		snprintf(names[i], sizeof(names[i]),
			 i == 7 ? "\"odd,name %d.db\"" : "base/16384/%d", 16000 + i);
	char *buf = malloc(1 << 20);
	char *p = buf;
	uint64_t ts = 0, bytes = 0;
	p += sprintf(p, "%s\n", LOG_HEADER_BASE);
	for (uint64_t r = 0; r < rows; r++) {
		uint64_t x = rnd();
		unsigned pct = (unsigned)(x % 100);
		enum log_op_index op = pct < 80	  ? LOG_OPI_READ
				       : pct < 92 ? LOG_OPI_WRITE
				       : pct < 93 ? LOG_OPI_EXTEND
				       : pct < 98 ? LOG_OPI_FSYNC
				       : pct < 99 ? LOG_OPI_PUNCH
						  : LOG_OPI_ZERO;
		int file = (int)((x >> 8) % NFILES);
		uint64_t size = op == LOG_OPI_FSYNC    ? 0
				: op == LOG_OPI_EXTEND ? 1 << 20
						       : sizes[(x >> 16) % 4];
		uint64_t off = (x >> 20) & 1 ? next[file] : ((x >> 24) % 131072) * 8192;
		next[file] = off + size;
		ts += (x >> 44) % 50;
		p = put_u64(p, ts);
		*p++ = ',';
		p += strlen(strcpy(p, log_op_names[op]));
		*p++ = ',';
		p = put_u64(p, 1000 + (x >> 36) % NPIDS);
		*p++ = ',';
		p += strlen(strcpy(p, names[file]));
		*p++ = ',';
		p = put_u64(p, off);
		*p++ = ',';
		p = put_u64(p, size);
		*p++ = ',';
		p = put_u64(p, size);
		*p++ = ',';
		p = put_u64(p, 5 + (x >> 40) % 500);
		*p++ = ',';
		if ((op == LOG_OPI_READ || op == LOG_OPI_WRITE) && (x >> 50) % 20 != 0) {
			int n = 1 + (int)((x >> 56) % 3);
			uint64_t dev = ((x >> 12) % 1000000) * 4096, piece = size / (uint64_t)n;
			for (int i = 0; i < n; i++) {
				if (i)
					*p++ = ';';
				p = put_u64(p, dev);
				*p++ = '+';
				p = put_u64(p, piece);
				dev += piece + (i == 0 ? 0 : 65536);
			}
		}
		*p++ = '\n';
		if (p - buf > (1 << 20) - 512) {
			fwrite(buf, 1, (size_t)(p - buf), f);
			bytes += (uint64_t)(p - buf);
			p = buf;
		}
	}
	fwrite(buf, 1, (size_t)(p - buf), f);
	bytes += (uint64_t)(p - buf);
	free(buf);
	if (fclose(f) != 0) {
		perror(path);
		return 0;
	}
	return bytes;
}

/* Runs argv with stdout to /dev/null.  @return seconds, or -1 on failure. */
static double run(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	double t0 = now();
	int e = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (e != 0) {
		fprintf(stderr, "bench-report: %s: %s\n", argv[0], strerror(e));
		return -1;
	}
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	double t = now() - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench-report: %s failed\n", argv[0]);
		return -1;
	}
	return t;
}

struct csv_count {
	uint64_t fields, rows;
};

static void on_field(void *s, size_t len, void *data)
{
	(void)s;
	(void)len;
	((struct csv_count *)data)->fields++;
}

static void on_row(int c, void *data)
{
	(void)c;
	((struct csv_count *)data)->rows++;
}

/* libcsv over the file, empty callbacks.  @return seconds, -1 on failure. */
static double time_libcsv(const char *path, uint64_t *rows)
{
	struct csv_parser p;
	struct csv_count n = {0, 0};
	static char buf[1 << 20];
	int fd = open(path, O_RDONLY);
	if (fd < 0 || csv_init(&p, 0) != 0)
		return -1;
	double t0 = now();
	ssize_t k;
	while ((k = read(fd, buf, sizeof(buf))) > 0)
		if (csv_parse(&p, buf, (size_t)k, on_field, on_row, &n) != (size_t)k) {
			fprintf(stderr, "bench-report: libcsv: %s\n", csv_strerror(csv_error(&p)));
			close(fd);
			return -1;
		}
	csv_fini(&p, on_field, on_row, &n);
	double t = now() - t0;
	csv_free(&p);
	close(fd);
	*rows = n.rows;
	return t;
}

/* The report library's reader alone.  @return seconds, -1 on failure. */
static double time_reader(const char *path, uint64_t *rows)
{
	char err[512];
	struct log_reader *r;
	struct log_row row;
	uint64_t n = 0, sum = 0;
	double t0 = now();
	if (log_reader_open(path, &r, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench-report: %s\n", err);
		return -1;
	}
	int rc;
	while ((rc = log_reader_next(r, &row)) > 0) {
		n++;
		sum += row.size + row.ndev; /* use the decoded fields */
	}
	double t = now() - t0;
	if (rc < 0)
		fprintf(stderr, "bench-report: %s\n", log_reader_error(r));
	log_reader_close(r);
	*rows = n + (sum == 0); /* keeps sum alive */
	return rc < 0 ? -1 : t;
}

static void line(const char *what, double t, uint64_t rows, uint64_t bytes, double base)
{
	printf("%-44s %8.3f s %12.0f rows/s %8.1f MB/s %7.2fx wc -l\n", what, t, (double)rows / t,
	       (double)bytes / t / 1e6, t / base);
}

int main(int argc, char **argv)
{
	uint64_t rows = 10000000;
	const char *file = NULL, *tool = SCATTERFS_REPORT;
	bool keep = false;
	static const struct option opts[] = {
	    {"rows", required_argument, NULL, 'n'}, {"file", required_argument, NULL, 'f'},
	    {"keep", no_argument, NULL, 'k'},	    {"report", required_argument, NULL, 'r'},
	    {"help", no_argument, NULL, 'h'},	    {NULL, 0, NULL, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "n:f:kr:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			rows = strtoull(optarg, NULL, 10);
			break;
		case 'f':
			file = optarg;
			break;
		case 'k':
			keep = true;
			break;
		case 'r':
			tool = optarg;
			break;
		default:
			printf("usage: bench-report [--rows N] [--file PATH] [--keep] "
			       "[--report PATH]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	char path[256];
	if (file == NULL) {
		const char *dir = getenv("TMPDIR");
		snprintf(path, sizeof(path), "%s/bench-report.%d.csv", dir && *dir ? dir : "/tmp",
			 (int)getpid());
		file = path;
	}

	double t0 = now();
	uint64_t bytes = generate(file, rows);
	if (bytes == 0)
		return 1;
	printf("log: %s, %" PRIu64 " rows, %.1f MB, generated in %.2f s\n", file, rows,
	       (double)bytes / 1e6, now() - t0);

	int status = 1;
	char *cat[] = {(char *)"cat", (char *)file, NULL};
	char *wc[] = {(char *)"wc", (char *)"-l", (char *)file, NULL};
	char *rep_text[] = {(char *)tool, (char *)file, NULL};
	char *rep_csv[] = {(char *)tool, (char *)file, (char *)"--format", (char *)"csv", NULL};
	char *rep_by[] = {(char *)tool, (char *)file, (char *)"--by", (char *)"file", NULL};

	if (run(cat) < 0) /* warm the page cache */
		goto out;
	double t_wc = run(wc), t_cat = run(cat);
	uint64_t n_csv = 0, n_rd = 0;
	double t_csv = time_libcsv(file, &n_csv);
	double t_rd = time_reader(file, &n_rd);
	double t_text = run(rep_text), t_csvout = run(rep_csv), t_by = run(rep_by);
	if (t_wc <= 0 || t_cat < 0 || t_csv < 0 || t_rd < 0 || t_text < 0 || t_csvout < 0 ||
	    t_by < 0)
		goto out;
	if (n_csv != rows + 1)
		fprintf(stderr,
			"bench-report: libcsv saw %" PRIu64 " records, expected %" PRIu64 "\n",
			n_csv, rows + 1);
	line("baseline: wc -l", t_wc, rows, bytes, t_wc);
	line("baseline: cat > /dev/null", t_cat, rows, bytes, t_wc);
	line("libcsv csv_parse, empty callbacks", t_csv, rows, bytes, t_wc);
	line("report reader (split + decode every field)", t_rd, rows, bytes, t_wc);
	line("scatterfs-report LOG", t_text, rows, bytes, t_wc);
	line("scatterfs-report LOG --format csv", t_csvout, rows, bytes, t_wc);
	line("scatterfs-report LOG --by file", t_by, rows, bytes, t_wc);
	printf("parser choice: the report reader decodes %.2fx faster than libcsv only splits\n",
	       t_csv / t_rd);
	status = 0;
out:
	if (!keep)
		unlink(file);
	return status;
}
