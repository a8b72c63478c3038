/*
 * Unit tests of the request log writer (fs/reqlog.c): exact CSV text of
 * rows, RFC 4180 quoting of paths, device I/O lists, the op mask, many
 * threads appending at once (nothing lost, per-thread order kept), a tiny
 * ring that forces stalls and split rows, the periodic flush, write errors,
 * the file mode, and the flush barrier with its holds.  Each test works in
 * its own temporary directory.
 */
#undef NDEBUG
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "reqlog.h"

/* Test hook defined in fs/reqlog.c: reqlog_open() with a ring of @ring_bytes. */
int reqlog_open_ring(const char *path, unsigned ops, size_t ring_bytes, struct reqlog **out);

#define HEADER	LOG_HEADER_BASE "\n"
#define ALL_OPS ((1u << LOG_OP_COUNT) - 1)

static char dir[64];
static char log_path[128];

static void setup(void)
{
	strcpy(dir, "/tmp/test_reqlog.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(log_path, sizeof(log_path), "%s/req.csv", dir);
	umask(022);
}

static void teardown(void)
{
	unlink(log_path);
	rmdir(dir);
}

TestSuite(reqlog, .init = setup, .fini = teardown);

/* The whole file, NUL-terminated; *len without the NUL. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "fopen %s: %s", path, strerror(errno));
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	cr_assert_not_null(buf);
	for (;;) {
		if (cap - n < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
			cr_assert_not_null(buf);
		}
		size_t r = fread(buf + n, 1, cap - n - 1, f);
		if (r == 0)
			break;
		n += r;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static struct reqlog_row row_of(enum log_op op, const char *path)
{
	struct reqlog_row r = {
	    .ts_us = 1,
	    .op = op,
	    .pid = 2,
	    .path = path,
	    .offset = 3,
	    .size = 4,
	    .result = 4,
	    .latency_us = 5,
	};
	return r;
}

/* Opens the log with @ops, appends @n rows, closes, returns the file text. */
static char *log_rows(unsigned ops, const struct reqlog_row *rows, size_t n)
{
	struct reqlog *log = NULL;
	cr_assert_eq(reqlog_open(log_path, ops, &log), 0);
	cr_assert_not_null(log);
	for (size_t i = 0; i < n; i++)
		reqlog_append(log, &rows[i]);
	cr_assert_eq(reqlog_close(log), 0);
	return slurp(log_path, NULL);
}

Test(reqlog, header_only)
{
	char *text = log_rows(ALL_OPS, NULL, 0);
	cr_assert_str_eq(text, HEADER);
	free(text);
}

Test(reqlog, one_read_row)
{
	const struct run io[] = {{1048576, 16384}};
	struct reqlog_row r = {
	    .ts_us = 123456,
	    .op = LOG_READ,
	    .pid = 4242,
	    .path = "oradata/users01.dbf",
	    .offset = 8192,
	    .size = 16384,
	    .result = 16384,
	    .latency_us = 87,
	    .device_io = io,
	    .ndevice_io = 1,
	};
	char *text = log_rows(ALL_OPS, &r, 1);
	cr_assert_str_eq(text, HEADER "123456,read,4242,oradata/users01.dbf,8192,16384,16384,87,"
				      "1048576+16384\n");
	free(text);
}

Test(reqlog, op_names_and_negative_result)
{
	struct reqlog_row r[6] = {
	    row_of(LOG_READ, "a"),  row_of(LOG_WRITE, "a"), row_of(LOG_EXTEND, "a"),
	    row_of(LOG_FSYNC, "a"), row_of(LOG_PUNCH, "a"), row_of(LOG_ZERO, "a"),
	};
	r[1].result = -28; /* -ENOSPC */
	r[4].result = INT64_MIN;
	r[0].ts_us = UINT64_MAX;
	char *text = log_rows(ALL_OPS, r, 6);
	cr_assert_str_eq(text, HEADER "18446744073709551615,read,2,a,3,4,4,5,\n"
				      "1,write,2,a,3,4,-28,5,\n"
				      "1,extend,2,a,3,4,4,5,\n"
				      "1,fsync,2,a,3,4,4,5,\n"
				      "1,punch,2,a,3,4,-9223372036854775808,5,\n"
				      "1,zero,2,a,3,4,4,5,\n");
	free(text);
}

Test(reqlog, header_is_the_schema)
{
	/*
	 * The contract header, written out once here so that changing it is
	 * deliberate; every other test builds its expected text from the schema.
	 */
	cr_assert_str_eq(LOG_HEADER_BASE,
			 "ts_us,op,pid,path,offset,size,result,latency_us,device_io");
	char joined[256] = "";
	for (int i = 0; i < LOG_COLUMN_COUNT; i++) {
		if (i == LOG_COL_MODEL_US)
			cr_assert_str_eq(joined, LOG_HEADER_BASE, "the columns before model_us");
		strcat(strcat(joined, i ? "," : ""), log_column_names[i]);
	}
	cr_assert_str_eq(joined, LOG_HEADER_BASE ",model_us,dies,collisions,fault");
	cr_assert_str_eq(log_op_names[LOG_OPI_PUNCH], "punch");
	cr_assert_str_eq(log_op_names[LOG_OPI_ZERO], "zero");
	cr_assert_null(log_op_names[LOG_OP_COUNT]);
}

Test(reqlog, path_quoting)
{
	struct reqlog_row r[] = {
	    row_of(LOG_READ, "a,b.dbf"),
	    row_of(LOG_READ, "say \"hi\".dbf"),
	    row_of(LOG_READ, "line\nbreak"),
	    row_of(LOG_READ, "cr\rend"),
	    row_of(LOG_READ, "\""),
	    row_of(LOG_READ, "plain name;+.dbf"),
	    row_of(LOG_READ, ""),
	    row_of(LOG_READ, NULL),
	    row_of(LOG_READ, ",\"\r\n\"\"x"),
	};
	char *text = log_rows(ALL_OPS, r, sizeof(r) / sizeof(r[0]));
	cr_assert_str_eq(text, HEADER "1,read,2,\"a,b.dbf\",3,4,4,5,\n"
				      "1,read,2,\"say \"\"hi\"\".dbf\",3,4,4,5,\n"
				      "1,read,2,\"line\nbreak\",3,4,4,5,\n"
				      "1,read,2,\"cr\rend\",3,4,4,5,\n"
				      "1,read,2,\"\"\"\",3,4,4,5,\n"
				      "1,read,2,plain name;+.dbf,3,4,4,5,\n"
				      "1,read,2,,3,4,4,5,\n"
				      "1,read,2,,3,4,4,5,\n"
				      "1,read,2,\",\"\"\r\n\"\"\"\"x\",3,4,4,5,\n");
	free(text);
}

/* A path longer than the 4 KiB row buffer, with quotes on both sides of
 * the buffer boundary, must be quoted exactly as a short one. */
Test(reqlog, long_quoted_path)
{
	size_t n = 10000;
	char *path = malloc(n + 1);
	char *want_field = malloc(2 * n + 3);
	size_t w = 0;
	want_field[w++] = '"';
	for (size_t i = 0; i < n; i++) {
		path[i] = i % 97 == 0 ? '"' : (i % 89 == 0 ? ',' : (char)('a' + i % 26));
		want_field[w++] = path[i];
		if (path[i] == '"')
			want_field[w++] = '"';
	}
	path[n] = '\0';
	want_field[w++] = '"';
	want_field[w] = '\0';

	struct reqlog_row r = row_of(LOG_READ, path);
	char *text = log_rows(ALL_OPS, &r, 1);
	char *want = NULL;
	cr_assert_geq(asprintf(&want, HEADER "1,read,2,%s,3,4,4,5,\n", want_field), 0);
	cr_assert_str_eq(text, want);
	free(text);
	free(want);
	free(want_field);
	free(path);
}

Test(reqlog, device_io_lists)
{
	const struct run one[] = {{0, 4096}};
	const struct run three[] = {{0, 8192}, {1073741824, 65536}, {UINT64_MAX, 1}};
	struct reqlog_row r[3] = {row_of(LOG_READ, "f"), row_of(LOG_READ, "f"),
				  row_of(LOG_WRITE, "f")};
	r[0].device_io = NULL; /* a hole: no device I/O */
	r[0].ndevice_io = 0;
	r[1].device_io = one;
	r[1].ndevice_io = 1;
	r[2].device_io = three;
	r[2].ndevice_io = 3;
	char *text = log_rows(ALL_OPS, r, 3);
	cr_assert_str_eq(text, HEADER "1,read,2,f,3,4,4,5,\n"
				      "1,read,2,f,3,4,4,5,0+4096\n"
				      "1,write,2,f,3,4,4,5,0+8192;1073741824+65536;"
				      "18446744073709551615+1\n");
	free(text);
}

/* Thousands of device I/Os: a row much longer than the row buffer. */
static char *device_io_text(const struct run *io, size_t n)
{
	char *s = malloc(n * 48 + 1);
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		w += (size_t)sprintf(s + w, "%s%llu+%llu", i ? ";" : "",
				     (unsigned long long)io[i].device,
				     (unsigned long long)io[i].length);
	s[w] = '\0';
	return s;
}

static struct run *make_runs(size_t n, uint64_t salt)
{
	struct run *io = malloc(n * sizeof(*io));
	for (size_t i = 0; i < n; i++) {
		io[i].device = (salt * 1000003 + i) * 1048576 + 123;
		io[i].length = 8192 * (i % 7 + 1);
	}
	return io;
}

Test(reqlog, long_device_io_list)
{
	size_t n = 5000;
	struct run *io = make_runs(n, 1);
	struct reqlog_row r[3] = {row_of(LOG_READ, "a"), row_of(LOG_READ, "big"),
				  row_of(LOG_READ, "c")};
	r[1].device_io = io;
	r[1].ndevice_io = n;
	char *text = log_rows(ALL_OPS, r, 3);
	char *list = device_io_text(io, n);
	char *want = NULL;
	cr_assert_geq(asprintf(&want,
			       HEADER "1,read,2,a,3,4,4,5,\n1,read,2,big,3,4,4,5,%s\n1,read,2,c,3,4,4,5,\n",
			       list),
		      0);
	cr_assert_str_eq(text, want);
	free(want);
	free(list);
	free(text);
	free(io);
}

Test(reqlog, wants_masks)
{
	cr_assert_not(reqlog_wants(NULL, LOG_READ));

	struct reqlog *log = NULL;
	cr_assert_eq(reqlog_open(log_path, LOG_READ | LOG_FSYNC, &log), 0);
	cr_assert(reqlog_wants(log, LOG_READ));
	cr_assert_not(reqlog_wants(log, LOG_WRITE));
	cr_assert_not(reqlog_wants(log, LOG_EXTEND));
	cr_assert(reqlog_wants(log, LOG_FSYNC));
	cr_assert_not(reqlog_wants(log, LOG_PUNCH));

	/* Rows of an op outside the mask are not written. */
	struct reqlog_row r[3] = {row_of(LOG_WRITE, "w"), row_of(LOG_FSYNC, "s"),
				  row_of(LOG_PUNCH, "t")};
	for (int i = 0; i < 3; i++)
		reqlog_append(log, &r[i]);
	cr_assert_eq(reqlog_rows(log), 1);
	cr_assert_eq(reqlog_close(log), 0);
	char *text = slurp(log_path, NULL);
	cr_assert_str_eq(text, HEADER "1,fsync,2,s,3,4,4,5,\n");
	free(text);

	cr_assert_eq(reqlog_open(log_path, 0, &log), 0);
	for (unsigned op = LOG_READ; op <= LOG_PUNCH; op <<= 1)
		cr_assert_not(reqlog_wants(log, (enum log_op)op));
	cr_assert_eq(reqlog_close(log), 0);
}

Test(reqlog, null_log_is_ignored)
{
	struct reqlog_row r = row_of(LOG_READ, "x");
	reqlog_append(NULL, &r);
	cr_assert_eq(reqlog_rows(NULL), 0);
	cr_assert_eq(reqlog_stall_count(NULL), 0);
	cr_assert_eq(reqlog_write_errors(NULL), 0);
	cr_assert_eq(reqlog_close(NULL), 0);
}

/* ---- many threads ------------------------------------------------------ */

struct writer_arg {
	struct reqlog *log;
	unsigned id;
	unsigned rows;
	unsigned long_every; /* every Nth row carries long_n device I/Os; 0 = never */
	size_t long_n;
	const struct run *long_io;
};

/* Row seq of thread id: pid 1000+id, path "t<id>/data", offset seq, and a
 * device I/O list of seq % 3 items (or the long list). */
static void *writer_thread(void *p)
{
	struct writer_arg *a = p;
	char path[32];
	snprintf(path, sizeof(path), "t%u/data", a->id);
	for (unsigned seq = 0; seq < a->rows; seq++) {
		struct run io[2] = {{(uint64_t)seq * 8192, 8192}, {(uint64_t)a->id << 40, 512}};
		struct reqlog_row r = {
		    .ts_us = (uint64_t)seq * 10 + a->id,
		    .op = LOG_READ,
		    .pid = (pid_t)(1000 + a->id),
		    .path = path,
		    .offset = seq,
		    .size = 8192,
		    .result = 8192,
		    .latency_us = a->id,
		    .device_io = io,
		    .ndevice_io = seq % 3,
		};
		if (a->long_every && seq % a->long_every == 0) {
			r.device_io = a->long_io;
			r.ndevice_io = a->long_n;
		}
		reqlog_append(a->log, &r);
	}
	return NULL;
}

/* Checks every row of a log written by run_threads(). */
static void check_threads_log(const char *text, unsigned nthreads, unsigned rows,
			      unsigned long_every, const char *long_list)
{
	cr_assert_eq(strncmp(text, HEADER, strlen(HEADER)), 0);
	const char *p = text + strlen(HEADER);
	unsigned next[16] = {0};
	uint64_t total = 0;

	while (*p) {
		const char *eol = strchr(p, '\n');
		cr_assert_not_null(eol, "row %llu has no newline", (unsigned long long)total);
		char *line = strndup(p, (size_t)(eol - p));
		char *f[9];
		char *s = line;
		int nf = 0;
		/* strsep, not strtok: the last field may be empty. */
		while (nf < 9 && (f[nf] = strsep(&s, ",")) != NULL)
			nf++;
		cr_assert_eq(nf, 9, "row %llu: %d fields", (unsigned long long)total, nf);
		cr_assert_null(s, "row %llu: too many fields", (unsigned long long)total);

		unsigned long pid = strtoul(f[2], NULL, 10);
		cr_assert(pid >= 1000 && pid < 1000 + nthreads, "row %llu: pid %s",
			  (unsigned long long)total, f[2]);
		unsigned id = (unsigned)(pid - 1000);
		unsigned seq = next[id];
		char want[64];

		snprintf(want, sizeof(want), "%llu", (unsigned long long)seq * 10 + id);
		cr_assert_str_eq(f[0], want);
		cr_assert_str_eq(f[1], "read");
		snprintf(want, sizeof(want), "t%u/data", id);
		cr_assert_str_eq(f[3], want);
		snprintf(want, sizeof(want), "%u", seq);
		cr_assert_str_eq(f[4], want, "thread %u: row %s where %u was due", id, f[4], seq);
		cr_assert_str_eq(f[5], "8192");
		cr_assert_str_eq(f[6], "8192");
		snprintf(want, sizeof(want), "%u", id);
		cr_assert_str_eq(f[7], want);
		if (long_every && seq % long_every == 0) {
			cr_assert_str_eq(f[8], long_list);
		} else {
			char io[128];
			if (seq % 3 == 0)
				io[0] = '\0';
			else if (seq % 3 == 1)
				snprintf(io, sizeof(io), "%llu+8192",
					 (unsigned long long)seq * 8192);
			else
				snprintf(io, sizeof(io), "%llu+8192;%llu+512",
					 (unsigned long long)seq * 8192,
					 (unsigned long long)id << 40);
			cr_assert_str_eq(f[8], io);
		}
		next[id]++;
		total++;
		free(line);
		p = eol + 1;
	}
	for (unsigned id = 0; id < nthreads; id++)
		cr_assert_eq(next[id], rows, "thread %u: %u rows of %u", id, next[id], rows);
	cr_assert_eq(total, (uint64_t)nthreads * rows);
}

static void run_threads(struct reqlog *log, unsigned nthreads, unsigned rows, unsigned long_every,
			size_t long_n, const struct run *long_io)
{
	pthread_t th[16];
	struct writer_arg a[16];
	cr_assert(nthreads <= 16);
	for (unsigned i = 0; i < nthreads; i++) {
		a[i] = (struct writer_arg){log, i, rows, long_every, long_n, long_io};
		cr_assert_eq(pthread_create(&th[i], NULL, writer_thread, &a[i]), 0);
	}
	for (unsigned i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
}

Test(reqlog, eight_threads_800k_rows, .timeout = 120)
{
	struct reqlog *log = NULL;
	cr_assert_eq(reqlog_open(log_path, ALL_OPS, &log), 0);
	run_threads(log, 8, 100000, 0, 0, NULL);
	cr_assert_eq(reqlog_rows(log), 800000);
	cr_assert_eq(reqlog_write_errors(log), 0);
	cr_assert_eq(reqlog_close(log), 0);

	char *text = slurp(log_path, NULL);
	check_threads_log(text, 8, 100000, 0, NULL);
	free(text);
}

/* A 64-byte ring: nearly every row is split and waits for the writer, and
 * the 3,000-item rows are hundreds of times the ring. */
Test(reqlog, tiny_ring_stalls_lose_nothing, .timeout = 120)
{
	size_t long_n = 3000;
	struct run *long_io = make_runs(long_n, 7);
	char *long_list = device_io_text(long_io, long_n);

	struct reqlog *log = NULL;
	cr_assert_eq(reqlog_open_ring(log_path, ALL_OPS, 64, &log), 0);
	run_threads(log, 4, 20000, 1000, long_n, long_io);
	cr_assert_eq(reqlog_rows(log), 80000);
	cr_assert_gt(reqlog_stall_count(log), 0);
	cr_assert_eq(reqlog_write_errors(log), 0);
	cr_assert_eq(reqlog_close(log), 0);

	char *text = slurp(log_path, NULL);
	check_threads_log(text, 4, 20000, 1000, long_list);
	free(text);
	free(long_list);
	free(long_io);
}

/*
 * A row appended when nothing else comes reaches the file at once (the
 * writer waits 1 ms for more, not its 100 ms period): 20 rows, one at a
 * time, each in the file within 50 ms (a period of 100 ms puts a row
 * there after 0 to 100 ms, so all 20 within 50 ms would be one chance in
 * a million).
 */
static size_t file_size(const char *path);

Test(reqlog, idle_rows_reach_the_file_at_once)
{
	struct reqlog *log = NULL;
	cr_assert_eq(reqlog_open(log_path, ALL_OPS, &log), 0);
	struct reqlog_row r = row_of(LOG_READ, "x");
	const size_t row_len = strlen("1,read,2,x,3,4,4,5,\n");
	for (int i = 1; i <= 20; i++) {
		usleep(20000); /* idle */
		reqlog_append(log, &r);
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		long ms;
		for (;;) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
			if (file_size(log_path) == strlen(HEADER) + i * row_len || ms > 2000)
				break;
			usleep(200);
		}
		cr_assert_eq(file_size(log_path), strlen(HEADER) + i * row_len,
			     "row %d not in the file after %ld ms", i, ms);
		cr_assert_leq(ms, 50, "row %d took %ld ms to reach the file", i, ms);
	}
	cr_assert_eq(reqlog_close(log), 0);
}

/* Rows reach the file within about 100 ms, without a close. */
Test(reqlog, periodic_flush)
{
	struct reqlog *log = NULL;
	cr_assert_eq(reqlog_open(log_path, ALL_OPS, &log), 0);
	struct reqlog_row r = row_of(LOG_READ, "x");
	reqlog_append(log, &r);

	const char *want = HEADER "1,read,2,x,3,4,4,5,\n";
	struct stat st;
	int ms = 0;
	for (; ms < 2000; ms += 10) {
		cr_assert_eq(stat(log_path, &st), 0);
		if ((size_t)st.st_size == strlen(want))
			break;
		usleep(10000);
	}
	cr_assert_eq((size_t)st.st_size, strlen(want), "row not flushed within 2 s");
	char *text = slurp(log_path, NULL);
	cr_assert_str_eq(text, want);
	free(text);
	cr_assert_eq(reqlog_close(log), 0);
}

/* The file size limit makes write(2) fail with EFBIG part-way: close
 * reports the error, and every row not wholly written is counted lost. */
Test(reqlog, write_error_counts_lost_rows)
{
	struct reqlog *log = NULL;
	cr_assert_eq(reqlog_open(log_path, ALL_OPS, &log), 0);
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl = {.rlim_cur = 1000, .rlim_max = RLIM_INFINITY};
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);

	struct reqlog_row r = row_of(LOG_READ, "x"); /* 20 bytes a row */
	for (int i = 0; i < 500; i++)
		reqlog_append(log, &r);
	cr_assert_eq(reqlog_rows(log), 500);
	cr_assert_eq(reqlog_close(log), -EFBIG);

	size_t len;
	char *text = slurp(log_path, &len);
	cr_assert_eq(len, 1000);
	size_t lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	/* 58-byte header; (1000 - 58) / 20 = 47 whole rows, then a part row. */
	cr_assert_eq(lines, 1 + 47);
	free(text);
}

Test(reqlog, write_error_count_before_close)
{
	struct reqlog *log = NULL;
	cr_assert_eq(reqlog_open(log_path, ALL_OPS, &log), 0);
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl = {.rlim_cur = 1000, .rlim_max = RLIM_INFINITY};
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	struct reqlog_row r = row_of(LOG_READ, "x");
	for (int i = 0; i < 500; i++)
		reqlog_append(log, &r);
	/* The periodic flush hits the limit; wait for the writer to count. */
	for (int ms = 0; ms < 2000 && reqlog_write_errors(log) < 453; ms += 10)
		usleep(10000);
	cr_assert_eq(reqlog_write_errors(log), 500 - 47);
	cr_assert_eq(reqlog_close(log), -EFBIG);
}

Test(reqlog, open_errors)
{
	struct reqlog *log = NULL;
	char bad[160];
	snprintf(bad, sizeof(bad), "%s/no/such/dir.csv", dir);
	cr_assert_eq(reqlog_open(bad, ALL_OPS, &log), -ENOENT);
	cr_assert_null(log);
	/* The header write fails at once. */
	cr_assert_eq(reqlog_open("/dev/full", ALL_OPS, &log), -ENOSPC);
	cr_assert_null(log);
}

Test(reqlog, created_mode_0640)
{
	struct reqlog *log = NULL;
	struct stat st;
	cr_assert_eq(reqlog_open(log_path, ALL_OPS, &log), 0);
	cr_assert_eq(reqlog_close(log), 0);
	cr_assert_eq(stat(log_path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0640, "mode %o", st.st_mode & 07777);
}

Test(reqlog, existing_file_truncated_and_narrowed)
{
	int fd = open(log_path, O_WRONLY | O_CREAT, 0666);
	cr_assert_geq(fd, 0);
	cr_assert_eq(fchmod(fd, 0666), 0);
	cr_assert_eq(write(fd, "old contents\n", 13), 13);
	close(fd);

	struct reqlog *log = NULL;
	struct stat st;
	cr_assert_eq(reqlog_open(log_path, ALL_OPS, &log), 0);
	cr_assert_eq(reqlog_close(log), 0);
	cr_assert_eq(stat(log_path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0640, "mode %o", st.st_mode & 07777);
	char *text = slurp(log_path, NULL);
	cr_assert_str_eq(text, HEADER);
	free(text);

	/* A stricter mode is kept. */
	cr_assert_eq(chmod(log_path, 0600), 0);
	cr_assert_eq(reqlog_open(log_path, ALL_OPS, &log), 0);
	cr_assert_eq(reqlog_close(log), 0);
	cr_assert_eq(stat(log_path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
}

Test(reqlog, model_us_column)
{
	const struct run io[] = {{0, 4096}, {8192, 4096}};
	struct reqlog_row r = {
	    .ts_us = 10,
	    .op = LOG_READ,
	    .pid = 7,
	    .path = "t.db",
	    .offset = 0,
	    .size = 8192,
	    .result = 8192,
	    .latency_us = 12650,
	    .device_io = io,
	    .ndevice_io = 2,
	    .model_us = 12600,
	};
	char *text = log_rows(ALL_OPS | REQLOG_MODEL_US, &r, 1);
	cr_assert_str_eq(text, LOG_HEADER_BASE ",model_us\n"
			       "10,read,7,t.db,0,8192,8192,12650,0+4096;8192+4096,12600\n");
	free(text);
	/* Without the flag the column is not written, whatever model_us holds. */
	text = log_rows(ALL_OPS, &r, 1);
	cr_assert_str_eq(text, HEADER "10,read,7,t.db,0,8192,8192,12650,0+4096;8192+4096\n");
	free(text);
}

Test(reqlog, fault_column)
{
	const struct run io[] = {{1048576, 4096}};
	struct reqlog_row r = {
	    .ts_us = 10,
	    .op = LOG_READ,
	    .pid = 7,
	    .path = "base/1/1259",
	    .offset = 65536,
	    .size = 4096,
	    .result = -5,
	    .latency_us = 40,
	    .device_io = io,
	    .ndevice_io = 1,
	    .model_us = 30,
	    .fault = "bad-sector",
	};
	char *text = log_rows(ALL_OPS | REQLOG_FAULT, &r, 1);
	cr_assert_str_eq(text, LOG_HEADER_BASE ",fault\n"
			       "10,read,7,base/1/1259,65536,4096,-5,40,1048576+4096,bad-sector\n");
	free(text);
	/* after model_us; a row no rule broke has it empty */
	r.fault = NULL;
	text = log_rows(ALL_OPS | REQLOG_MODEL_US | REQLOG_FAULT, &r, 1);
	cr_assert_str_eq(text, LOG_HEADER_BASE ",model_us,fault\n"
			       "10,read,7,base/1/1259,65536,4096,-5,40,1048576+4096,30,\n");
	free(text);
}

/*
 * A flash model's columns, after model_us and before fault: a read of 4
 * pages split over 2 dies, 2 of its pages having waited on a busy die.
 */
Test(reqlog, dies_columns)
{
	const struct run io[] = {{0, 16384}};
	struct reqlog_row r = {
	    .ts_us = 10,
	    .op = LOG_READ,
	    .pid = 7,
	    .path = "t.db",
	    .offset = 0,
	    .size = 16384,
	    .result = 16384,
	    .latency_us = 130,
	    .device_io = io,
	    .ndevice_io = 1,
	    .model_us = 120,
	    .dies = 2,
	    .collisions = 2,
	};
	char *text = log_rows(ALL_OPS | REQLOG_MODEL_US | REQLOG_DIES | REQLOG_FAULT, &r, 1);
	cr_assert_str_eq(text, LOG_HEADER_BASE ",model_us,dies,collisions,fault\n"
			       "10,read,7,t.db,0,16384,16384,130,0+16384,120,2,2,\n");
	free(text);
	/* without the flag neither column is written */
	text = log_rows(ALL_OPS | REQLOG_MODEL_US, &r, 1);
	cr_assert_str_eq(text, LOG_HEADER_BASE ",model_us\n"
			       "10,read,7,t.db,0,16384,16384,130,0+16384,120\n");
	free(text);
}

/* ---- the flush barrier --------------------------------------------------- */

static size_t file_size(const char *path)
{
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	return (size_t)st.st_size;
}

/*
 * 20 rounds of "append, flush, look at the file": every row is in the file
 * when reqlog_flush() returns, without waiting for the writer's 100 ms
 * period (20 rounds take far less than one period).
 */
Test(reqlog, flush_writes_every_row_before_it_returns)
{
	struct reqlog *log = NULL;
	cr_assert_eq(reqlog_open(log_path, ALL_OPS, &log), 0);
	struct reqlog_row r = row_of(LOG_READ, "x"); /* 20 bytes a row */
	const size_t row_bytes = strlen("1,read,2,x,3,4,4,5,\n");
	size_t rows = 0;
	for (int round = 1; round <= 20; round++) {
		for (int i = 0; i < round; i++)
			reqlog_append(log, &r);
		rows += (size_t)round;
		cr_assert_eq(reqlog_flush(log), 0);
		cr_assert_eq(file_size(log_path), strlen(HEADER) + rows * row_bytes, "round %d",
			     round);
		cr_assert_eq(reqlog_rows_written(log), rows, "round %d", round);
	}
	cr_assert_eq(rows, 210);
	cr_assert_eq(reqlog_close(log), 0);
}

/* A path with newlines is one row: the written count follows the quoting. */
Test(reqlog, rows_written_counts_quoted_newlines_once)
{
	struct reqlog *log = NULL;
	cr_assert_eq(reqlog_open(log_path, ALL_OPS, &log), 0);
	struct reqlog_row a = row_of(LOG_READ, "a\nb\"\n\"c");
	struct reqlog_row b = row_of(LOG_WRITE, "plain");
	reqlog_append(log, &a);
	reqlog_append(log, &b);
	reqlog_append(log, &a);
	cr_assert_eq(reqlog_flush(log), 0);
	cr_assert_eq(reqlog_rows_written(log), 3);
	char *text = slurp(log_path, NULL);
	cr_assert_str_eq(text, HEADER "1,read,2,\"a\nb\"\"\n\"\"c\",3,4,4,5,\n"
				      "1,write,2,plain,3,4,4,5,\n"
				      "1,read,2,\"a\nb\"\"\n\"\"c\",3,4,4,5,\n");
	free(text);
	cr_assert_eq(reqlog_close(log), 0);
}

/* A failed writer does not hang the barrier: it returns the error, and the
 * counters say which rows made it. */
Test(reqlog, flush_after_write_error_returns_the_error)
{
	struct reqlog *log = NULL;
	cr_assert_eq(reqlog_open(log_path, ALL_OPS, &log), 0);
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl = {.rlim_cur = 1000, .rlim_max = RLIM_INFINITY};
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	struct reqlog_row r = row_of(LOG_READ, "x");
	for (int i = 0; i < 500; i++)
		reqlog_append(log, &r);
	cr_assert_eq(reqlog_flush(log), -EFBIG);
	/* 58-byte header; (1000 - 58) / 20 = 47 whole rows, then a part row. */
	cr_assert_eq(reqlog_rows_written(log), 47);
	cr_assert_eq(reqlog_write_errors(log), 453);
	reqlog_append(log, &r);
	cr_assert_eq(reqlog_flush(log), -EFBIG);
	cr_assert_eq(reqlog_write_errors(log), 454);
	cr_assert_eq(reqlog_close(log), -EFBIG);
}

struct flusher {
	struct reqlog *log;
	int rc;
	int done; /* __atomic */
};

static void *flush_thread(void *arg)
{
	struct flusher *f = arg;
	f->rc = reqlog_flush(f->log);
	__atomic_store_n(&f->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * A request that answers before it logs holds the log: a barrier that
 * begins meanwhile waits for the hold, so the row is in the file when the
 * barrier returns.
 */
Test(reqlog, flush_waits_for_a_hold_taken_before_it)
{
	struct reqlog *log = NULL;
	cr_assert_eq(reqlog_open(log_path, ALL_OPS, &log), 0);
	unsigned hold = reqlog_hold(log);
	struct flusher f = {.log = log};
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, flush_thread, &f), 0);
	usleep(200000);
	cr_assert_eq(__atomic_load_n(&f.done, __ATOMIC_SEQ_CST), 0,
		     "the barrier returned while a hold was outstanding");
	struct reqlog_row r = row_of(LOG_READ, "x");
	reqlog_append(log, &r);
	reqlog_unhold(log, hold);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(f.rc, 0);
	char *text = slurp(log_path, NULL);
	cr_assert_str_eq(text, HEADER "1,read,2,x,3,4,4,5,\n");
	free(text);
	cr_assert_eq(reqlog_rows_written(log), 1);
	cr_assert_eq(reqlog_close(log), 0);
}

/* Holds released before the barrier, and a NULL log, cost it nothing. */
Test(reqlog, flush_with_no_holds_and_null_log)
{
	cr_assert_eq(reqlog_flush(NULL), 0);
	reqlog_unhold(NULL, reqlog_hold(NULL));
	cr_assert_eq(reqlog_rows_written(NULL), 0);
	struct reqlog *log = NULL;
	cr_assert_eq(reqlog_open(log_path, ALL_OPS, &log), 0);
	for (int i = 0; i < 3; i++)
		reqlog_unhold(log, reqlog_hold(log));
	cr_assert_eq(reqlog_flush(log), 0);
	cr_assert_eq(reqlog_rows_written(log), 0);
	char *text = slurp(log_path, NULL);
	cr_assert_str_eq(text, HEADER);
	free(text);
	cr_assert_eq(reqlog_close(log), 0);
}

/* Appenders keep going on a tiny ring while barriers run: each barrier
 * sees in the file at least the rows appended before it began. */
struct appender {
	struct reqlog *log;
	int n;
};

static void *append_thread(void *arg)
{
	struct appender *a = arg;
	struct reqlog_row r = row_of(LOG_READ, "y");
	for (int i = 0; i < a->n; i++)
		reqlog_append(a->log, &r);
	return NULL;
}

Test(reqlog, flush_under_concurrent_appends)
{
	struct reqlog *log = NULL;
	cr_assert_eq(reqlog_open_ring(log_path, ALL_OPS, 256, &log), 0);
	struct appender a = {.log = log, .n = 200000};
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, append_thread, &a), 0);
	for (int i = 0; i < 200; i++) {
		uint64_t before = reqlog_rows(log);
		cr_assert_eq(reqlog_flush(log), 0);
		uint64_t written = reqlog_rows_written(log);
		cr_assert_geq(written, before);
		cr_assert_geq(file_size(log_path), strlen(HEADER) + before * 20);
	}
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(reqlog_flush(log), 0);
	cr_assert_eq(reqlog_rows_written(log), 200000);
	cr_assert_eq(file_size(log_path), strlen(HEADER) + 200000 * 20);
	cr_assert_eq(reqlog_close(log), 0);
}
