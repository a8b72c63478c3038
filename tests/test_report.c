/*
 * Unit tests of the scatterfs-report library (bench/report*.c): one test
 * per metric on a small hand-made log whose expected values are worked out
 * in the comments, the --by groupings, the reader (quoted paths, both
 * headers, extra columns, malformed input and its messages), the exact CSV
 * and JSON output, the fio iolog export and the missing-gnuplot error.
 */
#undef NDEBUG
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

#define HEADER LOG_HEADER_BASE "\n"

/*
 * The reference log.  Reads: lines 2, 3, 4, 5, 9, 11 (6 reads).
 *   sizes: 8192 x3, 4096 x2, 16384 x1; bytes 49152.
 *   sequentiality: t.db 0+8192 -> 8192 (seq) -> 65536 (no) -> 81920 (seq);
 *     a,"b".db 0+4096 -> 4096 (seq): 3 sequential of 4 with a previous read.
 *   device I/Os per read: 1, 1, 2, 0, 1, 0 = 5 (0: 2, 1: 3, 2: 1).
 *   device I/Os of reads and writes, in order, with the seek from the
 *   previous one's end: 0+8192; 8192 (0); 65536 (49152); 131072 (57344);
 *   write 16384 (|16384 - 139264| = 122880); 196608 (196608 - 24576 = 172032).
 * Extends: 1 MiB in 3000 us and 2 MiB in 5000 us.
 */
static const char ref_log[] =
    HEADER "100,read,10,t.db,0,8192,8192,50,0+8192\n"
	   "200,read,10,t.db,8192,8192,8192,40,8192+8192\n"
	   "300,read,11,t.db,65536,16384,16384,60,65536+8192;131072+8192\n"
	   "400,read,11,\"a,\"\"b\"\".db\",0,4096,4096,20,\n"
	   "500,write,10,t.db,16384,8192,8192,70,16384+8192\n"
	   "600,extend,10,t.db,1048576,1048576,1048576,3000,\n"
	   "700,extend,10,t.db,2097152,2097152,2097152,5000,\n"
	   "800,read,10,t.db,81920,8192,8192,30,196608+8192\n"
	   "900,fsync,10,t.db,0,0,0,100,\n"
	   "1000,read,12,\"a,\"\"b\"\".db\",4096,4096,-5,10,\n";

/* Feeds @log (NUL-terminated) to a report grouped by @by. */
static void load(struct report *rep, const char *log, enum report_by by)
{
	char err[512];
	struct log_reader *r;
	struct log_row row;
	int rc;

	cr_assert_eq(log_reader_open_mem(log, strlen(log), "ref.csv", &r, err, sizeof(err)), 0,
		     "%s", err);
	report_init(rep, by);
	while ((rc = log_reader_next(r, &row)) > 0)
		cr_assert_eq(report_add(rep, &row), 0);
	cr_assert_eq(rc, 0, "%s", log_reader_error(r));
	log_reader_close(r);
}

/* The message log_reader_open_mem() or log_reader_next() gives for @log. */
static char *first_error(const char *log)
{
	static char err[512];
	struct log_reader *r;
	struct log_row row;
	int rc;

	err[0] = '\0';
	if (log_reader_open_mem(log, strlen(log), "bad.csv", &r, err, sizeof(err)) < 0)
		return err;
	while ((rc = log_reader_next(r, &row)) > 0)
		;
	cr_assert_eq(rc, -EINVAL, "expected -EINVAL, got %d", rc);
	snprintf(err, sizeof(err), "%s", log_reader_error(r));
	log_reader_close(r);
	return err;
}

/* What report_print() writes for @rep. */
static char *printed(struct report *rep, enum report_format fmt, int metric)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_not_null(f);
	struct report_output o = {.format = fmt, .metric = metric, .top = 0, .name = "ref.csv"};
	cr_assert_eq(report_print(f, rep, &o), 0);
	fclose(f);
	return buf;
}

Test(hist, buckets_are_powers_of_two)
{
	cr_assert_eq(hist_bucket(0), 0);
	cr_assert_eq(hist_bucket(1), 1);
	cr_assert_eq(hist_bucket(4095), 12);
	cr_assert_eq(hist_bucket(4096), 13);
	cr_assert_eq(hist_bucket(8191), 13);
	cr_assert_eq(hist_bucket(UINT64_MAX), 64);
	cr_assert_eq(hist_bucket_lo(13), 4096);
	cr_assert_eq(hist_bucket_hi(13), 8191);
	cr_assert_eq(hist_bucket_hi(64), UINT64_MAX);

	struct hist h = {0};
	for (uint64_t v = 0; v < 1000; v++) /* forces several rehashes */
		for (uint64_t k = 0; k <= v % 3; k++)
			cr_assert_eq(hist_add(&h, v * 512), 0);
	cr_assert_eq(h.n, 1999);
	cr_assert_eq(hist_count(&h, 2 * 512), 3);
	cr_assert_eq(hist_count(&h, 1 * 512), 2);
	cr_assert_eq(hist_count(&h, 7), 0);
	size_t n;
	struct hist_value *v = hist_values(&h, &n);
	cr_assert_eq(n, 1000);
	cr_assert_eq(v[0].value, 2 * 512); /* count 3, smallest value first */
	cr_assert_eq(v[0].count, 3);
	cr_assert_eq(v[n - 1].value, 999 * 512); /* count 1, largest value last */
	free(v);
	hist_free(&h);
}

Test(metrics, read_size_histogram)
{
	struct report rep;
	load(&rep, ref_log, BY_NONE);
	cr_assert_eq(rep.rows, 10);
	cr_assert_eq(rep.all.hist.n, 6);
	cr_assert_eq(rep.all.hist.sum, 49152);
	size_t n;
	struct hist_value *v = hist_values(&rep.all.hist, &n);
	cr_assert_eq(n, 3);
	cr_assert_eq(v[0].value, 8192);
	cr_assert_eq(v[0].count, 3);
	cr_assert_eq(v[1].value, 4096);
	cr_assert_eq(v[1].count, 2);
	cr_assert_eq(v[2].value, 16384);
	cr_assert_eq(v[2].count, 1);
	cr_assert_float_eq(report_share_pct(v[0].count, rep.all.hist.n), 50.0, 1e-9);
	cr_assert_float_eq(report_share_pct(v[1].count, rep.all.hist.n), 100.0 / 3, 1e-9);
	free(v);
	/* buckets: [4K,8K) 2, [8K,16K) 3, [16K,32K) 1, nothing else */
	uint64_t total = 0;
	for (unsigned b = 0; b < HIST_BUCKETS; b++)
		total += rep.all.hist.bucket[b];
	cr_assert_eq(total, 6);
	cr_assert_eq(rep.all.hist.bucket[13], 2);
	cr_assert_eq(rep.all.hist.bucket[14], 3);
	cr_assert_eq(rep.all.hist.bucket[15], 1);
	report_free(&rep);
}

Test(metrics, summary_per_op)
{
	struct report rep;
	load(&rep, ref_log, BY_NONE);
	cr_assert_eq(rep.ops[LOG_OPI_READ].rows, 6);
	cr_assert_eq(rep.ops[LOG_OPI_READ].bytes, 49152);
	cr_assert_eq(rep.ops[LOG_OPI_READ].errors, 1);
	cr_assert_eq(rep.ops[LOG_OPI_WRITE].rows, 1);
	cr_assert_eq(rep.ops[LOG_OPI_EXTEND].bytes, 3145728);
	cr_assert_eq(rep.ops[LOG_OPI_FSYNC].rows, 1);
	cr_assert_eq(rep.ops[LOG_OPI_PUNCH].rows, 0);
	cr_assert_eq(rep.first_ts_us, 100);
	cr_assert_eq(rep.last_ts_us, 1000);
	cr_assert_eq(report_file_count(&rep), 2);
	report_free(&rep);
}

Test(reader, punch_zero_and_the_old_name_trim)
{
	/* trim, in logs written before punch was named, is read as punch. */
	static const char log[] = HEADER "1,punch,1,f,4096,8192,8192,3,\n"
					 "2,zero,1,f,0,65536,65536,9,0+4096\n"
					 "3,trim,1,f,12288,4096,-22,2,\n"
					 "4,zero,1,f,65536,4096,4096,1,\n";
	struct log_reader *r;
	struct log_row row;
	char err[512];
	cr_assert_eq(log_reader_open_mem(log, strlen(log), "p.csv", &r, err, sizeof(err)), 0);
	cr_assert_eq(log_reader_next(r, &row), 1);
	cr_assert_eq(row.op, LOG_OPI_PUNCH);
	cr_assert_eq(log_reader_next(r, &row), 1);
	cr_assert_eq(row.op, LOG_OPI_ZERO);
	cr_assert_eq(row.ndev, 1);
	cr_assert_eq(log_reader_next(r, &row), 1);
	cr_assert_eq(row.op, LOG_OPI_PUNCH);
	cr_assert_eq(row.result, -22);
	log_reader_close(r);

	struct report rep;
	load(&rep, log, BY_OP);
	cr_assert_eq(rep.ops[LOG_OPI_PUNCH].rows, 2);
	cr_assert_eq(rep.ops[LOG_OPI_PUNCH].bytes, 12288);
	cr_assert_eq(rep.ops[LOG_OPI_PUNCH].errors, 1);
	cr_assert_eq(rep.ops[LOG_OPI_ZERO].rows, 2);
	cr_assert_eq(rep.ops[LOG_OPI_ZERO].bytes, 69632);
	cr_assert_eq(rep.ops[LOG_OPI_ZERO].errors, 0);
	char *out = printed(&rep, FMT_CSV, M_SUMMARY);
	cr_assert_str_eq(out, "op,rows,bytes,errors\n"
			      "read,0,0,0\n"
			      "write,0,0,0\n"
			      "extend,0,0,0\n"
			      "fsync,0,0,0\n"
			      "punch,2,12288,1\n"
			      "zero,2,69632,0\n");
	free(out);
	size_t n;
	struct report_group **g = report_groups(&rep, &n);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(g[0]->key, "punch");
	cr_assert_eq(hist_count(&g[0]->hist, 8192), 1);
	cr_assert_eq(hist_count(&g[0]->hist, 4096), 1);
	cr_assert_str_eq(g[1]->key, "zero");
	cr_assert_eq(hist_count(&g[1]->hist, 65536), 1);
	free(g);
	report_free(&rep);
}

Test(metrics, by_file)
{
	struct report rep;
	load(&rep, ref_log, BY_FILE);
	size_t n;
	struct report_group **g = report_groups(&rep, &n);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(g[0]->key, "t.db"); /* 4 reads */
	cr_assert_eq(g[0]->hist.n, 4);
	cr_assert_eq(hist_count(&g[0]->hist, 8192), 3);
	cr_assert_eq(hist_count(&g[0]->hist, 16384), 1);
	cr_assert_str_eq(g[1]->key, "a,\"b\".db");
	cr_assert_eq(g[1]->hist.n, 2);
	cr_assert_eq(hist_count(&g[1]->hist, 4096), 2);
	free(g);
	report_free(&rep);
}

Test(metrics, by_pid)
{
	struct report rep;
	load(&rep, ref_log, BY_PID);
	size_t n;
	struct report_group **g = report_groups(&rep, &n);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(g[0]->key, "10");
	cr_assert_eq(hist_count(&g[0]->hist, 8192), 3);
	cr_assert_str_eq(g[1]->key, "11");
	cr_assert_eq(g[1]->hist.n, 2);
	cr_assert_eq(hist_count(&g[1]->hist, 16384), 1);
	cr_assert_eq(hist_count(&g[1]->hist, 4096), 1);
	cr_assert_str_eq(g[2]->key, "12");
	cr_assert_eq(g[2]->hist.n, 1);
	free(g);
	report_free(&rep);
}

Test(metrics, by_op)
{
	struct report rep;
	load(&rep, ref_log, BY_OP);
	size_t n;
	struct report_group **g = report_groups(&rep, &n);
	cr_assert_eq(n, 4); /* no punch or zero rows */
	cr_assert_str_eq(g[0]->key, "read");
	cr_assert_eq(g[0]->hist.n, 6);
	cr_assert_str_eq(g[1]->key, "write");
	cr_assert_eq(hist_count(&g[1]->hist, 8192), 1);
	cr_assert_str_eq(g[2]->key, "extend");
	cr_assert_eq(hist_count(&g[2]->hist, 1048576), 1);
	cr_assert_eq(hist_count(&g[2]->hist, 2097152), 1);
	cr_assert_str_eq(g[3]->key, "fsync");
	cr_assert_eq(hist_count(&g[3]->hist, 0), 1);
	cr_assert_eq(g[3]->hist.bucket[0], 1);
	free(g);
	report_free(&rep);
}

Test(metrics, logical_sequentiality)
{
	struct report rep;
	load(&rep, ref_log, BY_NONE);
	cr_assert_eq(rep.seq.reads, 6);
	cr_assert_eq(rep.seq.with_previous, 4);
	cr_assert_eq(rep.seq.sequential, 3);
	cr_assert_float_eq(report_share_pct(rep.seq.sequential, rep.seq.with_previous), 75.0, 1e-9);
	report_free(&rep);
}

Test(metrics, device_ios_per_read)
{
	struct report rep;
	load(&rep, ref_log, BY_NONE);
	cr_assert_eq(rep.dev.reads, 6);
	cr_assert_eq(rep.dev.read_device_ios, 5);
	cr_assert_float_eq(report_device_ios_per_read(&rep), 5.0 / 6, 1e-12);
	cr_assert_eq(hist_count(&rep.dev.per_read, 0), 2);
	cr_assert_eq(hist_count(&rep.dev.per_read, 1), 3);
	cr_assert_eq(hist_count(&rep.dev.per_read, 2), 1);
	cr_assert_eq(rep.dev.per_read.n, 6);
	report_free(&rep);
}

Test(metrics, seek_distance_and_sequential_device_share)
{
	struct report rep;
	load(&rep, ref_log, BY_NONE);
	cr_assert_eq(rep.dev.device_ios, 6);
	cr_assert_eq(rep.dev.pairs, 5);
	cr_assert_eq(rep.dev.seek[0], 1);		    /* 0: sequential */
	cr_assert_eq(rep.dev.seek[hist_bucket(49152)], 2);  /* [32K,64K): 49152, 57344 */
	cr_assert_eq(rep.dev.seek[hist_bucket(122880)], 1); /* [64K,128K) */
	cr_assert_eq(rep.dev.seek[hist_bucket(172032)], 1); /* [128K,256K) */
	cr_assert_eq(hist_bucket(49152), 16);
	cr_assert_eq(hist_bucket(57344), 16);
	uint64_t total = 0;
	for (unsigned b = 0; b < HIST_BUCKETS; b++)
		total += rep.dev.seek[b];
	cr_assert_eq(total, 5);
	cr_assert_float_eq(report_share_pct(rep.dev.seek[0], rep.dev.pairs), 20.0, 1e-9);
	report_free(&rep);
}

/*
 * Dynamic layout score, 4 KiB blocks.  t.db's read device I/Os in log order
 * (the write between them does not count): 0+8192 (2 blocks, the first of
 * the file: 1 scored, 1 contiguous); 8192+8192 (starts at the previous end:
 * 2, 2); 65536+8192 (previous end 16384: 2, 1); 131072+8192 (previous end
 * 73728: 2, 1); 196608+8192 (previous end 139264: 2, 1).  10 blocks, 9
 * scored, 6 contiguous.  a,"b".db reads no device block.
 * With 8 KiB blocks: 5 blocks, 4 scored, 1 contiguous.
 */
Test(metrics, dynamic_layout_score)
{
	struct report rep;

	load(&rep, ref_log, BY_FILE);
	cr_assert_eq(rep.all.layout.blocks, 10);
	cr_assert_eq(rep.all.layout.scored, 9);
	cr_assert_eq(rep.all.layout.contiguous, 6);
	cr_assert_float_eq(report_layout_score(&rep.all.layout), 6.0 / 9.0, 1e-12);
	char *out = printed(&rep, FMT_CSV, M_LAYOUT_SCORE);
	cr_assert_str_eq(out, "by,group,blocks_read,scored,contiguous,layout_score\n"
			      "all,all,10,9,6,0.6667\n"
			      "file,t.db,10,9,6,0.6667\n"
			      "file,\"a,\"\"b\"\".db\",0,0,0,1.0000\n");
	free(out);
	report_free(&rep);

	char err[512];
	struct log_reader *r;
	struct log_row row;
	cr_assert_eq(log_reader_open_mem(ref_log, strlen(ref_log), "ref.csv", &r, err, sizeof(err)),
		     0);
	report_init(&rep, BY_NONE);
	rep.block_size = 8192;
	while (log_reader_next(r, &row) > 0)
		cr_assert_eq(report_add(&rep, &row), 0);
	log_reader_close(r);
	cr_assert_eq(rep.all.layout.blocks, 5);
	cr_assert_eq(rep.all.layout.scored, 4);
	cr_assert_eq(rep.all.layout.contiguous, 1);
	report_free(&rep);
}

Test(metrics, autoextend)
{
	struct report rep;
	load(&rep, ref_log, BY_NONE);
	cr_assert_eq(rep.ext.extends, 2);
	cr_assert_eq(rep.ext.bytes, 3145728);
	cr_assert_eq(rep.ext.zero_fill_us, 8000);
	cr_assert_eq(rep.ext.max_us, 5000);
	cr_assert_float_eq(report_extend_mean_us(&rep), 4000.0, 1e-9);
	cr_assert_float_eq(report_extend_us_per_mib(&rep), 8000.0 / 3, 1e-9);
	report_free(&rep);
}

Test(reader, quoted_paths_and_line_numbers)
{
	static const char log[] = HEADER "1,read,1,\"a,\"\"b\"\".db\",0,1,1,1,\n"
					 "2,read,1,\"two\nlines\",0,1,1,1,5+1\n"
					 "3,read,1,\"\",0,1,1,1,\n"
					 "4,read,1,plain,0,1,1,1,";
	char err[512];
	struct log_reader *r;
	struct log_row row;
	cr_assert_eq(log_reader_open_mem(log, strlen(log), "q.csv", &r, err, sizeof(err)), 0);
	cr_assert_eq(log_reader_next(r, &row), 1);
	cr_assert_eq(row.line, 2);
	cr_assert_eq(row.path_len, 8);
	cr_assert_eq(memcmp(row.path, "a,\"b\".db", 8), 0);
	cr_assert_eq(log_reader_next(r, &row), 1);
	cr_assert_eq(row.line, 3);
	cr_assert_eq(row.path_len, 9);
	cr_assert_eq(memcmp(row.path, "two\nlines", 9), 0);
	cr_assert_eq(row.ndev, 1);
	cr_assert_eq(row.dev[0].offset, 5);
	cr_assert_eq(log_reader_next(r, &row), 1);
	cr_assert_eq(row.line, 5); /* the quoted newline took a line */
	cr_assert_eq(row.path_len, 0);
	cr_assert_eq(log_reader_next(r, &row), 1); /* no final newline */
	cr_assert_eq(row.line, 6);
	cr_assert_eq(row.ts_us, 4);
	cr_assert_eq(row.path_len, 5);
	cr_assert_eq(log_reader_next(r, &row), 0);
	log_reader_close(r);
}

Test(reader, both_headers_and_extra_columns)
{
	/* The later header (model_us), and one more unknown column, with quotes. */
	static const char log[] =
	    LOG_HEADER_BASE ",model_us,future\n"
			    "1,read,1,f,0,8192,8192,7,4096+8192,9000,\"x,y\"\n"
			    "2,read,1,f,8192,8192,8192,7,12288+8192,8000,z\n"
			    "3,read,1,f,16384,8192,8192,7,20480+8192\r\n";
	char err[512];
	struct log_reader *r;
	struct log_row row;
	cr_assert_eq(log_reader_open_mem(log, strlen(log), "m.csv", &r, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_eq(log_reader_columns(r), 11);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(log_reader_next(r, &row), 1, "%s", log_reader_error(r));
		cr_assert_eq(row.size, 8192);
		cr_assert_eq(row.latency_us, 7);
		cr_assert_eq(row.ndev, 1);
		cr_assert_eq(row.dev[0].offset, 4096 + 8192 * (uint64_t)i);
	}
	cr_assert_eq(log_reader_next(r, &row), 0);
	log_reader_close(r);

	/* The same rows under the nine-column header give the same report. */
	struct report a, b;
	load(&a, log, BY_NONE);
	load(&b,
	     HEADER "1,read,1,f,0,8192,8192,7,4096+8192\n2,read,1,f,8192,8192,8192,7,12288+8192\n"
		    "3,read,1,f,16384,8192,8192,7,20480+8192\n",
	     BY_NONE);
	cr_assert_eq(a.seq.sequential, 2);
	cr_assert_eq(b.seq.sequential, 2);
	cr_assert_eq(a.dev.seek[0], 2);
	cr_assert_eq(b.dev.seek[0], 2);
	report_free(&a);
	report_free(&b);
}

Test(reader, malformed_input_messages)
{
	cr_assert_str_eq(first_error(""),
			 "bad.csv: empty file, expected the request log header " LOG_HEADER_BASE);
	cr_assert_str_eq(
	    first_error("ts_us,op,pid,file,offset,size,result,latency_us,device_io\n"),
	    "bad.csv:1: not a scatterfs request log: column 4 is 'file', expected 'path' (the "
	    "header must begin " LOG_HEADER_BASE ")");
	cr_assert_str_eq(first_error("ts_us,op,pid,path\n"),
			 "bad.csv:1: not a scatterfs request log: the header has 4 columns, "
			 "expected " LOG_HEADER_BASE);
	cr_assert_str_eq(first_error(HEADER "1,read,1,f,0,8192,8192,7,\n2,read,1,f,x1,8192,8192,"
					    "7,\n"),
			 "bad.csv:3: field offset: 'x1' is not an unsigned decimal");
	cr_assert_str_eq(first_error(HEADER "1,read,1,f,12a,8192,8192,7,\n"),
			 "bad.csv:2: field offset: '12a' is not an unsigned decimal");
	cr_assert_str_eq(first_error(HEADER "1,read,1,f,0,8192\n"),
			 "bad.csv:2: the row has 6 fields, expected at least 9");
	cr_assert_str_eq(first_error(HEADER "1,copy,1,f,0,8192,8192,7,\n"),
			 "bad.csv:2: field op: 'copy' is not read, write, extend, fsync, punch or "
			 "zero");
	cr_assert_str_eq(first_error(HEADER "1,read,1,f,0,8192,8192,7,100+\n"),
			 "bad.csv:2: field device_io: '100+' is not device_offset+length items "
			 "joined by ';'");
	cr_assert_str_eq(first_error(HEADER "1,read,1,f,0,8192,8192,7,100+5x\n"),
			 "bad.csv:2: field device_io: unexpected 'x' after '100+5'");
	cr_assert_str_eq(first_error(HEADER "1,read,1,\"f,0,8192,8192,7,\n"),
			 "bad.csv:2: the row ends inside a quoted field");
	cr_assert_str_eq(first_error(HEADER "1,read,1,f,99999999999999999999,8192,8192,7,\n"),
			 "bad.csv:2: field offset: '99999999999999999999' is not an unsigned "
			 "decimal");
}

Test(reader, rows_longer_than_the_buffer)
{
	/* One read with 200,000 device I/Os (about 2.6 MB): the reader's buffer grows. */
	char path[] = "/tmp/test_report.XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs(HEADER "1,read,1,f,0,8192,8192,7,", f);
	for (int i = 0; i < 200000; i++)
		fprintf(f, "%s%d+4096", i ? ";" : "", i * 8192);
	fputs("\n2,read,1,f,8192,8192,8192,7,0+8192\n", f);
	fclose(f);
	char err[512];
	struct log_reader *r;
	struct log_row row;
	cr_assert_eq(log_reader_open(path, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(log_reader_next(r, &row), 1, "%s", log_reader_error(r));
	cr_assert_eq(row.ndev, 200000);
	cr_assert_eq(row.dev[199999].offset, 199999 * 8192);
	cr_assert_eq(log_reader_next(r, &row), 1);
	cr_assert_eq(row.ts_us, 2);
	cr_assert_eq(log_reader_next(r, &row), 0);
	log_reader_close(r);
	unlink(path);
}

Test(output, csv_exact)
{
	struct report rep;
	load(&rep, ref_log, BY_NONE);
	char *out = printed(&rep, FMT_CSV, -1);
	cr_assert_str_eq(out,
			 "# summary\n"
			 "op,rows,bytes,errors\n"
			 "read,6,49152,1\n"
			 "write,1,8192,0\n"
			 "extend,2,3145728,0\n"
			 "fsync,1,0,0\n"
			 "punch,0,0,0\n"
			 "zero,0,0,0\n"
			 "\n"
			 "# read_sizes\n"
			 "by,group,size,count,share_pct,bytes\n"
			 "all,all,8192,3,50.00,24576\n"
			 "all,all,4096,2,33.33,8192\n"
			 "all,all,16384,1,16.67,16384\n"
			 "\n"
			 "# read_size_buckets\n"
			 "by,group,lo,hi,count,share_pct\n"
			 "all,all,4096,8191,2,33.33\n"
			 "all,all,8192,16383,3,50.00\n"
			 "all,all,16384,32767,1,16.67\n"
			 "\n"
			 "# sequentiality\n"
			 "reads,with_previous,sequential,sequential_pct\n"
			 "6,4,3,75.00\n"
			 "\n"
			 "# device\n"
			 "reads,read_device_ios,device_ios_per_read,device_ios,device_io_pairs,"
			 "sequential_pairs,nonsequential_pairs,sequential_pct\n"
			 "6,5,0.833,6,5,1,4,20.00\n"
			 "\n"
			 "# device_ios_per_read\n"
			 "device_ios,reads,share_pct\n"
			 "0,2,33.33\n"
			 "1,3,50.00\n"
			 "2,1,16.67\n"
			 "\n"
			 "# seek_distance\n"
			 "lo,hi,count,share_pct\n"
			 "0,0,1,20.00\n"
			 "32768,65535,2,40.00\n"
			 "65536,131071,1,20.00\n"
			 "131072,262143,1,20.00\n"
			 "\n"
			 "# autoextend\n"
			 "extends,bytes,zero_fill_us,mean_us,max_us,us_per_mib\n"
			 "2,3145728,8000,4000.000,5000,2666.667\n"
			 "\n"
			 "# layout_score\n"
			 "by,group,blocks_read,scored,contiguous,layout_score\n"
			 "all,all,10,9,6,0.6667\n");
	free(out);
	report_free(&rep);
}

Test(output, csv_one_metric_by_file_quotes_the_path)
{
	struct report rep;
	load(&rep, ref_log, BY_FILE);
	char *out = printed(&rep, FMT_CSV, M_READ_SIZES);
	cr_assert_str_eq(out, "by,group,size,count,share_pct,bytes\n"
			      "all,all,8192,3,50.00,24576\n"
			      "all,all,4096,2,33.33,8192\n"
			      "all,all,16384,1,16.67,16384\n"
			      "file,t.db,8192,3,75.00,24576\n"
			      "file,t.db,16384,1,25.00,16384\n"
			      "file,\"a,\"\"b\"\".db\",4096,2,100.00,8192\n");
	free(out);
	report_free(&rep);
}

Test(output, json_exact)
{
	struct report rep;
	load(&rep, ref_log, BY_PID);
	char *out = printed(&rep, FMT_JSON, M_READ_SIZE_BUCKETS);
	cr_assert_str_eq(out, "{\n"
			      "  \"log\": \"ref.csv\",\n"
			      "  \"rows\": 10,\n"
			      "  \"by\": \"pid\",\n"
			      "  \"read_size_buckets\": [\n"
			      "    {\n"
			      "      \"by\": \"all\",\n"
			      "      \"group\": \"all\",\n"
			      "      \"lo\": 4096,\n"
			      "      \"hi\": 8191,\n"
			      "      \"count\": 2,\n"
			      "      \"share_pct\": 33.33\n"
			      "    },\n"
			      "    {\n"
			      "      \"by\": \"all\",\n"
			      "      \"group\": \"all\",\n"
			      "      \"lo\": 8192,\n"
			      "      \"hi\": 16383,\n"
			      "      \"count\": 3,\n"
			      "      \"share_pct\": 50.0\n"
			      "    },\n"
			      "    {\n"
			      "      \"by\": \"all\",\n"
			      "      \"group\": \"all\",\n"
			      "      \"lo\": 16384,\n"
			      "      \"hi\": 32767,\n"
			      "      \"count\": 1,\n"
			      "      \"share_pct\": 16.67\n"
			      "    },\n"
			      "    {\n"
			      "      \"by\": \"pid\",\n"
			      "      \"group\": \"10\",\n"
			      "      \"lo\": 8192,\n"
			      "      \"hi\": 16383,\n"
			      "      \"count\": 3,\n"
			      "      \"share_pct\": 100.0\n"
			      "    },\n"
			      "    {\n"
			      "      \"by\": \"pid\",\n"
			      "      \"group\": \"11\",\n"
			      "      \"lo\": 4096,\n"
			      "      \"hi\": 8191,\n"
			      "      \"count\": 1,\n"
			      "      \"share_pct\": 50.0\n"
			      "    },\n"
			      "    {\n"
			      "      \"by\": \"pid\",\n"
			      "      \"group\": \"11\",\n"
			      "      \"lo\": 16384,\n"
			      "      \"hi\": 32767,\n"
			      "      \"count\": 1,\n"
			      "      \"share_pct\": 50.0\n"
			      "    },\n"
			      "    {\n"
			      "      \"by\": \"pid\",\n"
			      "      \"group\": \"12\",\n"
			      "      \"lo\": 4096,\n"
			      "      \"hi\": 8191,\n"
			      "      \"count\": 1,\n"
			      "      \"share_pct\": 100.0\n"
			      "    }\n"
			      "  ]\n"
			      "}\n");
	free(out);
	out = printed(&rep, FMT_JSON, M_AUTOEXTEND);
	cr_assert_str_eq(out, "{\n"
			      "  \"log\": \"ref.csv\",\n"
			      "  \"rows\": 10,\n"
			      "  \"by\": \"pid\",\n"
			      "  \"autoextend\": {\n"
			      "    \"extends\": 2,\n"
			      "    \"bytes\": 3145728,\n"
			      "    \"zero_fill_us\": 8000,\n"
			      "    \"mean_us\": 4000.0,\n"
			      "    \"max_us\": 5000,\n"
			      "    \"us_per_mib\": 2666.667\n"
			      "  }\n"
			      "}\n");
	free(out);

	/* All metrics: every table, under its name, in order, with the CSV's values. */
	out = printed(&rep, FMT_JSON, -1);
	json_error_t jerr;
	json_t *j = json_loads(out, 0, &jerr);
	cr_assert_not_null(j, "%s", jerr.text);
	const char *key;
	json_t *val;
	int i = 0;
	json_object_foreach(j, key, val)
	{
		if (i >= 3)
			cr_assert_str_eq(key, report_metric_name((enum report_metric)(i - 3)));
		i++;
	}
	cr_assert_eq(i, 3 + M_LATENCY); /* the latency tables only with --latency */
	cr_assert_eq(
	    json_integer_value(json_object_get(json_object_get(j, "device"), "device_io_pairs")),
	    5);
	cr_assert_eq(json_integer_value(
			 json_object_get(json_object_get(j, "device"), "nonsequential_pairs")),
		     4);
	cr_assert_float_eq(
	    json_real_value(json_object_get(json_object_get(j, "device"), "device_ios_per_read")),
	    0.833, 1e-12);
	cr_assert_eq(json_integer_value(json_object_get(
			 json_array_get(json_object_get(j, "seek_distance"), 1), "lo")),
		     32768);
	json_decref(j);
	free(out);
	report_free(&rep);
}

/* The fio iolog the reference log gives with @o. */
static char *iolog_of(const struct iolog_opts *o, uint64_t *reads, uint64_t *writes,
		      uint64_t *skipped)
{
	char path[] = "/tmp/test_report.XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	close(fd);
	char err[512];
	struct iolog_writer *w;
	cr_assert_eq(iolog_open(path, o, &w, err, sizeof(err)), 0, "%s", err);
	struct log_reader *r;
	struct log_row row;
	cr_assert_eq(log_reader_open_mem(ref_log, strlen(ref_log), "ref.csv", &r, err, sizeof(err)),
		     0);
	while (log_reader_next(r, &row) > 0)
		cr_assert_eq(iolog_add(w, &row), 0);
	log_reader_close(r);
	cr_assert_eq(iolog_close(w, reads, writes, skipped), 0);
	FILE *f = fopen(path, "r");
	static char buf[4096];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	unlink(path);
	return buf;
}

Test(iolog, version3_file_mode)
{
	/* Timestamps: microseconds from the first exported row, which is at 1. The
	 * path with a comma is fine; the failed read (result -5) is not exported. */
	struct iolog_opts o = {.version = 3, .dir = "/data/"};
	uint64_t reads, writes, skipped;
	char *s = iolog_of(&o, &reads, &writes, &skipped);
	cr_assert_str_eq(s, "fio version 3 iolog\n"
			    "1 /data/t.db add\n"
			    "1 /data/t.db open\n"
			    "1 /data/t.db read 0 8192\n"
			    "101 /data/t.db read 8192 8192\n"
			    "201 /data/t.db read 65536 16384\n"
			    "301 /data/a,\"b\".db add\n"
			    "301 /data/a,\"b\".db open\n"
			    "301 /data/a,\"b\".db read 0 4096\n"
			    "401 /data/t.db write 16384 8192\n"
			    "701 /data/t.db read 81920 8192\n"
			    "701 /data/t.db close\n"
			    "701 /data/a,\"b\".db close\n");
	cr_assert_eq(reads, 5);
	cr_assert_eq(writes, 1);
	cr_assert_eq(skipped, 1);
}

Test(iolog, version2_and_device_mode)
{
	struct iolog_opts o = {.version = 2, .device = "/dev/sdz"};
	uint64_t reads, writes, skipped;
	char *s = iolog_of(&o, &reads, &writes, &skipped);
	cr_assert_str_eq(s, "fio version 2 iolog\n"
			    "/dev/sdz add\n"
			    "/dev/sdz open\n"
			    "/dev/sdz read 0 8192\n"
			    "/dev/sdz read 8192 8192\n"
			    "/dev/sdz read 65536 8192\n"
			    "/dev/sdz read 131072 8192\n"
			    "/dev/sdz write 16384 8192\n"
			    "/dev/sdz read 196608 8192\n"
			    "/dev/sdz close\n");
	cr_assert_eq(reads, 5);
	cr_assert_eq(writes, 1);
	cr_assert_eq(skipped, 0);
}

Test(iolog, names_fio_cannot_read_are_skipped)
{
	static const char log[] = HEADER "1,read,1,with space,0,4096,4096,1,\n";
	char path[] = "/tmp/test_report.XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	char err[512];
	struct iolog_writer *w;
	struct iolog_opts o = {.version = 3};
	cr_assert_eq(iolog_open(path, &o, &w, err, sizeof(err)), 0);
	struct log_reader *r;
	struct log_row row;
	cr_assert_eq(log_reader_open_mem(log, strlen(log), "s.csv", &r, err, sizeof(err)), 0);
	cr_assert_eq(log_reader_next(r, &row), 1);
	cr_assert_eq(iolog_add(w, &row), 0);
	log_reader_close(r);
	uint64_t reads, writes, skipped;
	cr_assert_eq(iolog_close(w, &reads, &writes, &skipped), 0);
	cr_assert_eq(reads, 0);
	cr_assert_eq(skipped, 1);
	unlink(path);

	o.version = 4;
	cr_assert_eq(iolog_open(path, &o, &w, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "iolog version 4: fio reads versions 2 and 3");
}

Test(plot, missing_gnuplot_is_a_clear_error)
{
	struct report rep;
	load(&rep, ref_log, BY_NONE);
	char err[512];
	struct plot *p;
	cr_assert_eq(plot_open("/tmp/x.jpg", false, &p, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "--plot /tmp/x.jpg: the file name must end in .png or .svg");
	char dir[] = "/tmp/test_report.XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char png[64];
	snprintf(png, sizeof png, "%s/nogp.png", dir);
	cr_assert_eq(plot_open(png, true, &p, err, sizeof(err)), 0);
	setenv("PATH", "/nonexistent", 1); /* this test runs in its own process */
	cr_assert_eq(plot_finish(p, &rep, err, sizeof(err)), -ENOENT);
	cr_assert_str_eq(err,
			 "--plot needs gnuplot, which is not installed (not found on PATH); "
			 "install the Debian package gnuplot-nox: apt-get install gnuplot-nox");
	cr_assert_neq(access(png, F_OK), 0);
	cr_assert_eq(rmdir(dir), 0); /* nothing was left in it either */
	report_free(&rep);
}

/*
 * A log with model_us (seconds since the mount in ts_us).  Latencies, us:
 *   read  latency_us 100 (pid 10, a.db), 300 (10, a.db), 200 (11, b.db),
 *         1000 (11, b.db), 400 (12, a.db); model_us 90, 280, 150, 990, 0
 *   write 50 / 40 (10, a.db); punch, logged as trim, 7 / 0 (12, b.db);
 *   zero 9 / 0 (10, a.db).
 * Nearest rank over the 5 reads: p50 is the 3rd smallest (rank
 * ceil(0.5 x 5) = 3), p90 and above the 5th (ceil(4.5) = 5).
 */
static const char lat_log[] =
    LOG_HEADER_BASE ",model_us\n"
		    "1000000,read,10,a.db,0,4096,4096,100,0+4096,90\n"
		    "2000000,read,10,a.db,4096,4096,4096,300,4096+4096,280\n"
		    "3000000,read,11,b.db,0,4096,4096,200,8192+4096,150\n"
		    "4000000,read,11,b.db,8192,4096,4096,1000,12288+4096,990\n"
		    "5000000,read,12,a.db,8192,8192,8192,400,16384+8192,0\n"
		    "6000000,write,10,a.db,0,4096,4096,50,0+4096,40\n"
		    "7000000,trim,12,b.db,0,4096,4096,7,,0\n"
		    "8000000,zero,10,a.db,0,4096,4096,9,,0\n";

/* Feeds @log through @f (NULL: every row) to a --latency report grouped by @by. */
static void load_filtered(struct report *rep, const char *log, enum report_by by,
			  struct report_filter *f, struct iolog_writer *iw,
			  struct report_feed_counts *c)
{
	char err[512];
	struct log_reader *r;
	struct report_filter none = {0};

	cr_assert_eq(log_reader_open_mem(log, strlen(log), "lat.csv", &r, err, sizeof(err)), 0,
		     "%s", err);
	report_init(rep, by);
	rep->latency = true;
	cr_assert_eq(report_feed(r, f ? f : &none, rep, iw, NULL, c), 0, "%s", log_reader_error(r));
	log_reader_close(r);
}

Test(hist, nearest_rank_percentiles)
{
	static const unsigned pm[] = {500, 900, 990, 999, 1000, 1};
	uint64_t v[6];
	struct hist h = {0};

	cr_assert_eq(hist_percentiles(&h, pm, 6, v), 0);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(v[i], 0, "empty: percentile %d", i);
	/* 1..1000 once each, added in reverse: the k-th smallest is k. */
	for (uint64_t x = 1000; x >= 1; x--)
		cr_assert_eq(hist_add(&h, x), 0);
	cr_assert_eq(hist_percentiles(&h, pm, 6, v), 0);
	cr_assert_eq(v[0], 500);
	cr_assert_eq(v[1], 900);
	cr_assert_eq(v[2], 990);
	cr_assert_eq(v[3], 999);
	cr_assert_eq(v[4], 1000);
	cr_assert_eq(v[5], 1); /* p0.1: rank 1 */
	hist_free(&h);
	/* 10, 20, 30 and 40 x 7 (n = 10): ranks 5, 9, 10, 10, 10. */
	hist_add(&h, 30);
	hist_add(&h, 10);
	hist_add(&h, 20);
	for (int i = 0; i < 7; i++)
		hist_add(&h, 40);
	cr_assert_eq(hist_percentiles(&h, pm, 6, v), 0);
	cr_assert_eq(v[0], 40); /* rank 5: 10, 20, 30, 40 */
	cr_assert_eq(v[1], 40);
	cr_assert_eq(v[4], 40);
	cr_assert_eq(v[5], 10);
	hist_free(&h);
	/* 3 values: p50 is rank ceil(1.5) = 2. */
	hist_add(&h, 7);
	hist_add(&h, 5);
	hist_add(&h, 9);
	cr_assert_eq(hist_percentiles(&h, pm, 2, v), 0);
	cr_assert_eq(v[0], 7);
	cr_assert_eq(v[1], 9);
	hist_free(&h);
}

Test(latency, percentiles_per_op_with_model_us)
{
	struct report rep;
	struct report_feed_counts c;
	load_filtered(&rep, lat_log, BY_NONE, NULL, NULL, &c);
	cr_assert_eq(c.rows, 8);
	cr_assert_eq(c.selected, 8);
	cr_assert(rep.has_model_us);
	char *out = printed(&rep, FMT_CSV, M_LATENCY);
	cr_assert_str_eq(out, "by,group,op,column,count,p50,p90,p99,p99_9,max,undersampled\n"
			      "all,all,read,latency_us,5,300,1000,1000,1000,1000,p90;p99;p99_9\n"
			      "all,all,read,model_us,5,150,990,990,990,990,p90;p99;p99_9\n"
			      "all,all,write,latency_us,1,50,50,50,50,50,p50;p90;p99;p99_9\n"
			      "all,all,write,model_us,1,40,40,40,40,40,p50;p90;p99;p99_9\n"
			      "all,all,punch,latency_us,1,7,7,7,7,7,p50;p90;p99;p99_9\n"
			      "all,all,punch,model_us,1,0,0,0,0,0,p50;p90;p99;p99_9\n"
			      "all,all,zero,latency_us,1,9,9,9,9,9,p50;p90;p99;p99_9\n"
			      "all,all,zero,model_us,1,0,0,0,0,0,p50;p90;p99;p99_9\n");
	free(out);
	/* read latency_us: 100 in [64,127], 200 in [128,255], 300 and 400 in [256,511], 1000 in
	 * [512,1023] */
	out = printed(&rep, FMT_CSV, M_LATENCY_BUCKETS);
	cr_assert_str_eq(out, "by,group,op,column,lo,hi,count,share_pct\n"
			      "all,all,read,latency_us,64,127,1,20.00\n"
			      "all,all,read,latency_us,128,255,1,20.00\n"
			      "all,all,read,latency_us,256,511,2,40.00\n"
			      "all,all,read,latency_us,512,1023,1,20.00\n"
			      "all,all,read,model_us,0,0,1,20.00\n"
			      "all,all,read,model_us,64,127,1,20.00\n"
			      "all,all,read,model_us,128,255,1,20.00\n"
			      "all,all,read,model_us,256,511,1,20.00\n"
			      "all,all,read,model_us,512,1023,1,20.00\n"
			      "all,all,write,latency_us,32,63,1,100.00\n"
			      "all,all,write,model_us,32,63,1,100.00\n"
			      "all,all,punch,latency_us,4,7,1,100.00\n"
			      "all,all,punch,model_us,0,0,1,100.00\n"
			      "all,all,zero,latency_us,8,15,1,100.00\n"
			      "all,all,zero,model_us,0,0,1,100.00\n");
	free(out);
	report_free(&rep);
}

Test(latency, by_pid_and_by_file_and_json)
{
	struct report rep;
	struct report_feed_counts c;
	load_filtered(&rep, lat_log, BY_PID, NULL, NULL, &c);
	char *out = printed(&rep, FMT_CSV, M_LATENCY);
	/* pid 10 reads 100, 300 (n = 2: p50 rank 1, p90 rank 2); pid 11 200, 1000; pid 12 400 */
	cr_assert_str_eq(out, "by,group,op,column,count,p50,p90,p99,p99_9,max,undersampled\n"
			      "all,all,read,latency_us,5,300,1000,1000,1000,1000,p90;p99;p99_9\n"
			      "all,all,read,model_us,5,150,990,990,990,990,p90;p99;p99_9\n"
			      "all,all,write,latency_us,1,50,50,50,50,50,p50;p90;p99;p99_9\n"
			      "all,all,write,model_us,1,40,40,40,40,40,p50;p90;p99;p99_9\n"
			      "all,all,punch,latency_us,1,7,7,7,7,7,p50;p90;p99;p99_9\n"
			      "all,all,punch,model_us,1,0,0,0,0,0,p50;p90;p99;p99_9\n"
			      "all,all,zero,latency_us,1,9,9,9,9,9,p50;p90;p99;p99_9\n"
			      "all,all,zero,model_us,1,0,0,0,0,0,p50;p90;p99;p99_9\n"
			      "pid,10,read,latency_us,2,100,300,300,300,300,p90;p99;p99_9\n"
			      "pid,10,read,model_us,2,90,280,280,280,280,p90;p99;p99_9\n"
			      "pid,10,write,latency_us,1,50,50,50,50,50,p50;p90;p99;p99_9\n"
			      "pid,10,write,model_us,1,40,40,40,40,40,p50;p90;p99;p99_9\n"
			      "pid,10,zero,latency_us,1,9,9,9,9,9,p50;p90;p99;p99_9\n"
			      "pid,10,zero,model_us,1,0,0,0,0,0,p50;p90;p99;p99_9\n"
			      "pid,11,read,latency_us,2,200,1000,1000,1000,1000,p90;p99;p99_9\n"
			      "pid,11,read,model_us,2,150,990,990,990,990,p90;p99;p99_9\n"
			      "pid,12,read,latency_us,1,400,400,400,400,400,p50;p90;p99;p99_9\n"
			      "pid,12,read,model_us,1,0,0,0,0,0,p50;p90;p99;p99_9\n"
			      "pid,12,punch,latency_us,1,7,7,7,7,7,p50;p90;p99;p99_9\n"
			      "pid,12,punch,model_us,1,0,0,0,0,0,p50;p90;p99;p99_9\n");
	free(out);
	/* The read-size groups still list only processes that read. */
	size_t n;
	struct report_group **g = report_groups(&rep, &n);
	cr_assert_eq(n, 3);
	free(g);
	report_free(&rep);

	load_filtered(&rep, lat_log, BY_FILE, NULL, NULL, &c);
	out = printed(&rep, FMT_JSON, M_LATENCY);
	json_error_t jerr;
	json_t *j = json_loads(out, 0, &jerr);
	cr_assert_not_null(j, "%s", jerr.text);
	json_t *a = json_object_get(j, "latency");
	cr_assert_eq(json_array_size(a),
		     8 + 6 + 4);	    /* all; a.db read, write, zero; b.db read, punch */
	json_t *row = json_array_get(a, 8); /* a.db reads: 100, 300, 400 */
	cr_assert_str_eq(json_string_value(json_object_get(row, "by")), "file");
	cr_assert_str_eq(json_string_value(json_object_get(row, "group")), "a.db");
	cr_assert_str_eq(json_string_value(json_object_get(row, "op")), "read");
	cr_assert_str_eq(json_string_value(json_object_get(row, "column")), "latency_us");
	cr_assert_eq(json_integer_value(json_object_get(row, "count")), 3);
	cr_assert_eq(json_integer_value(json_object_get(row, "p50")), 300);
	cr_assert_eq(json_integer_value(json_object_get(row, "p90")), 400);
	cr_assert_eq(json_integer_value(json_object_get(row, "p99_9")), 400);
	cr_assert_eq(json_integer_value(json_object_get(row, "max")), 400);
	char *every = printed(&rep, FMT_JSON, -1);
	json_t *all = json_loads(every, 0, &jerr);
	free(every);
	cr_assert_not_null(all, "%s", jerr.text);
	cr_assert_eq(json_object_size(all), 3 + M_COUNT);
	cr_assert_eq(json_array_size(json_object_get(all, "latency")), 18);
	/*
	 * latency_buckets, rows per op and column: all 15 (as in the test above);
	 * a.db: read latency_us 2 ([64,127], [256,511]), model_us 3 (0, [64,127],
	 * [256,511]), write 1 + 1, zero 1 + 1; b.db: read 2 + 2, punch 1 + 1.
	 */
	cr_assert_eq(json_array_size(json_object_get(all, "latency_buckets")), 30);
	json_decref(all);
	row = json_array_get(a, 14); /* b.db reads: 200, 1000 */
	cr_assert_str_eq(json_string_value(json_object_get(row, "group")), "b.db");
	cr_assert_eq(json_integer_value(json_object_get(row, "p50")), 200);
	cr_assert_eq(json_integer_value(json_object_get(row, "max")), 1000);
	json_decref(j);
	free(out);
	report_free(&rep);
}

Test(latency, without_model_us_and_in_text)
{
	struct report rep;
	struct report_feed_counts c;
	load_filtered(&rep, ref_log, BY_NONE, NULL, NULL, &c);
	cr_assert_not(rep.has_model_us);
	/* reads 50, 40, 60, 20, 30, 10 -> sorted 10..60: p50 rank 3 = 30, p90 rank ceil(5.4) = 6 */
	char *out = printed(&rep, FMT_CSV, M_LATENCY);
	cr_assert_str_eq(out, "by,group,op,column,count,p50,p90,p99,p99_9,max,undersampled\n"
			      "all,all,read,latency_us,6,30,60,60,60,60,p90;p99;p99_9\n"
			      "all,all,write,latency_us,1,70,70,70,70,70,p50;p90;p99;p99_9\n"
			      "all,all,extend,latency_us,2,3000,5000,5000,5000,5000,p90;p99;p99_9\n"
			      "all,all,fsync,latency_us,1,100,100,100,100,100,p50;p90;p99;p99_9\n");
	free(out);
	out = printed(&rep, FMT_TEXT, M_LATENCY);
	cr_assert_not_null(strstr(out,
				  "\nLatency, us (percentiles by nearest rank over count samples)\n"
				  "    group            op      column          count       p50 "
				  "       p90        p99      p99.9        max \n"
				  "    all              read    latency_us          6        30 "
				  "        60*        60*        60*        60 \n"),
			   "%s", out);
	cr_assert_not_null(strstr(out, "    * too few samples for that percentile: the p-th "
				       "needs 100/(100-p) (p50 2, p90 10, p99 100, p99.9 1000)\n"),
			   "%s", out);
	free(out);
	report_free(&rep);
}

/* A log of @n reads of latency 1..n us. */
static char *reads_log(unsigned n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_not_null(f);
	fprintf(f, "%s\n", LOG_HEADER_BASE);
	for (unsigned i = 1; i <= n; i++)
		fprintf(f, "%u,read,1,a.db,0,4096,4096,%u,0+4096\n", i, i);
	fclose(f);
	return buf;
}

/*
 * A percentile resting on fewer than 100/(100-p) samples is flagged: at
 * 1 sample every one but max, then p50 from 2, p90 from 10, p99 from 100,
 * p99.9 from 1000.
 */
Test(latency, undersampled_percentiles)
{
	static const struct {
		unsigned n;
		const char *flags;
	} want[] = {
	    {1, "p50;p90;p99;p99_9"}, {2, "p90;p99;p99_9"}, {9, "p90;p99;p99_9"}, {10, "p99;p99_9"},
	    {99, "p99;p99_9"},	      {100, "p99_9"},	    {999, "p99_9"},	  {1000, ""}};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct report rep;
		struct report_feed_counts c;
		char *log = reads_log(want[i].n);
		load_filtered(&rep, log, BY_NONE, NULL, NULL, &c);
		char *out = printed(&rep, FMT_CSV, M_LATENCY);
		char *row = strchr(out, '\n') + 1;
		char *last = strrchr(row, ',') + 1;
		cr_assert_eq(strncmp(last, want[i].flags, strlen(want[i].flags)), 0, "n = %u: %s",
			     want[i].n, row);
		cr_assert_eq(last[strlen(want[i].flags)], '\n', "n = %u: %s", want[i].n, row);
		free(out);
		report_free(&rep);
		free(log);
	}
}

Test(filter, path_pid_op_and_window)
{
	struct report rep;
	struct report_feed_counts c;
	char err[256];

	struct report_filter f = {.path_glob = "a*"};
	load_filtered(&rep, lat_log, BY_NONE, &f, NULL, &c);
	cr_assert_eq(c.rows, 8);
	cr_assert_eq(c.selected, 5); /* a.db: reads at 1, 2, 5 s, the write, the zero */
	cr_assert_eq(rep.rows, 5);
	cr_assert_eq(rep.ops[LOG_OPI_READ].rows, 3);
	cr_assert_eq(rep.ops[LOG_OPI_WRITE].rows, 1);
	cr_assert_eq(rep.ops[LOG_OPI_ZERO].rows, 1);
	cr_assert_eq(rep.ops[LOG_OPI_PUNCH].rows, 0);
	cr_assert_eq(report_file_count(&rep), 1);
	report_free(&rep);
	report_filter_free(&f);

	cr_assert_eq(report_filter_pids(&f, "11,12", err, sizeof(err)), 0);
	load_filtered(&rep, lat_log, BY_NONE, &f, NULL, &c);
	cr_assert_eq(c.selected, 4); /* rows at 3, 4, 5 and 7 s */
	cr_assert_eq(rep.first_ts_us, 3000000);
	cr_assert_eq(rep.last_ts_us, 7000000);
	report_free(&rep);
	report_filter_free(&f);

	cr_assert_eq(report_filter_ops(&f, "read,trim", err, sizeof(err)), 0);
	cr_assert_eq(f.ops, (1u << LOG_OPI_READ) | (1u << LOG_OPI_PUNCH));
	load_filtered(&rep, lat_log, BY_NONE, &f, NULL, &c);
	cr_assert_eq(c.selected, 6);
	cr_assert_eq(rep.ops[LOG_OPI_PUNCH].rows, 1);
	cr_assert_eq(rep.ops[LOG_OPI_WRITE].rows, 0);
	report_free(&rep);
	report_filter_free(&f);

	/* [2 s, 4 s): since is inclusive, until exclusive */
	cr_assert_eq(report_parse_seconds("2", &f.since_us), 0);
	cr_assert_eq(report_parse_seconds("4", &f.until_us), 0);
	f.has_since = f.has_until = true;
	load_filtered(&rep, lat_log, BY_NONE, &f, NULL, &c);
	cr_assert_eq(c.selected, 2);
	cr_assert_eq(rep.first_ts_us, 2000000);
	cr_assert_eq(rep.last_ts_us, 3000000);
	report_free(&rep);

	/* every test at once: a.db reads from 1.5 s on -> the reads at 2 and 5 s */
	f.path_glob = "a*";
	cr_assert_eq(report_filter_ops(&f, "read", err, sizeof(err)), 0);
	cr_assert_eq(report_parse_seconds("1.5", &f.since_us), 0);
	f.has_until = false;
	load_filtered(&rep, lat_log, BY_NONE, &f, NULL, &c);
	cr_assert_eq(c.selected, 2);
	char *out = printed(&rep, FMT_CSV, M_LATENCY);
	cr_assert_str_eq(out, "by,group,op,column,count,p50,p90,p99,p99_9,max,undersampled\n"
			      "all,all,read,latency_us,2,300,400,400,400,400,p90;p99;p99_9\n"
			      "all,all,read,model_us,2,0,280,280,280,280,p90;p99;p99_9\n");
	free(out);
	report_free(&rep);
	report_filter_free(&f);
}

Test(filter, empty_selection)
{
	struct report rep;
	struct report_feed_counts c;
	char err[256];
	struct report_filter f = {0};

	cr_assert_eq(report_filter_pids(&f, "99", err, sizeof(err)), 0);
	load_filtered(&rep, lat_log, BY_PID, &f, NULL, &c);
	cr_assert_eq(c.rows, 8);
	cr_assert_eq(c.selected, 0);
	cr_assert_eq(rep.rows, 0);
	char *out = printed(&rep, FMT_CSV, M_LATENCY);
	cr_assert_str_eq(out, "by,group,op,column,count,p50,p90,p99,p99_9,max,undersampled\n");
	free(out);
	out = printed(&rep, FMT_CSV, M_SUMMARY);
	cr_assert_str_eq(out, "op,rows,bytes,errors\n"
			      "read,0,0,0\n"
			      "write,0,0,0\n"
			      "extend,0,0,0\n"
			      "fsync,0,0,0\n"
			      "punch,0,0,0\n"
			      "zero,0,0,0\n");
	free(out);
	out = printed(&rep, FMT_JSON, M_LATENCY);
	cr_assert_str_eq(out, "{\n"
			      "  \"log\": \"ref.csv\",\n"
			      "  \"rows\": 0,\n"
			      "  \"by\": \"pid\",\n"
			      "  \"latency\": []\n"
			      "}\n");
	free(out);
	out = printed(&rep, FMT_TEXT, -1); /* every table, none of them with rows */
	cr_assert_not_null(strstr(out, "0 rows, 0 files"), "%s", out);
	free(out);
	report_free(&rep);
	report_filter_free(&f);
}

Test(filter, applies_to_the_fio_iolog)
{
	char path[] = "/tmp/test_report.XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	close(fd);
	char err[512];
	struct iolog_writer *w;
	struct iolog_opts o = {.version = 3, .dir = "/m"};
	cr_assert_eq(iolog_open(path, &o, &w, err, sizeof(err)), 0, "%s", err);
	struct report rep;
	struct report_feed_counts c;
	struct report_filter f = {.path_glob = "b*"};
	load_filtered(&rep, lat_log, BY_NONE, &f, w, &c);
	cr_assert_eq(c.selected, 3); /* two reads and the punch */
	uint64_t reads, writes, skipped;
	cr_assert_eq(iolog_close(w, &reads, &writes, &skipped), 0);
	cr_assert_eq(reads, 2);
	cr_assert_eq(writes, 0);
	FILE *fp = fopen(path, "r");
	char buf[1024];
	size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	unlink(path);
	/* times from the first exported row (3 s), which is at 1 */
	cr_assert_str_eq(buf, "fio version 3 iolog\n"
			      "1 /m/b.db add\n"
			      "1 /m/b.db open\n"
			      "1 /m/b.db read 0 4096\n"
			      "1000001 /m/b.db read 8192 4096\n"
			      "1000001 /m/b.db close\n");
	report_free(&rep);
	report_filter_free(&f);
}

Test(filter, option_values)
{
	struct report_filter f = {0};
	char err[256];
	uint64_t us = 7;

	cr_assert_eq(report_parse_seconds("0", &us), 0);
	cr_assert_eq(us, 0);
	cr_assert_eq(report_parse_seconds("12.000345", &us), 0);
	cr_assert_eq(us, 12000345);
	cr_assert_eq(report_parse_seconds("0.5", &us), 0);
	cr_assert_eq(us, 500000);
	cr_assert_eq(report_parse_seconds("18446744073709.551615", &us), 0);
	cr_assert_eq(us, UINT64_MAX);
	cr_assert_eq(report_parse_seconds("18446744073709.551616", &us), -ERANGE);
	cr_assert_eq(report_parse_seconds("1.0000001", &us), -EINVAL);
	cr_assert_eq(report_parse_seconds("1.", &us), -EINVAL);
	cr_assert_eq(report_parse_seconds("", &us), -EINVAL);
	cr_assert_eq(report_parse_seconds("-1", &us), -EINVAL);
	cr_assert_eq(report_parse_seconds("1e3", &us), -EINVAL);

	cr_assert_eq(report_filter_ops(&f, "read,copy", err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "--op 'copy': expected read, write, extend, fsync, punch or zero "
			      "(several joined by ',')");
	cr_assert_eq(report_filter_pids(&f, "12,x", err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "--pid '12,x': expected process ids joined by ','");
	cr_assert_eq(report_filter_pids(&f, "5,", err, sizeof(err)), -EINVAL);
	report_filter_free(&f);
	cr_assert_not(report_filter_active(&f));
	cr_assert_eq(report_op_parse("trim", 4), LOG_OPI_PUNCH);
	cr_assert_eq(report_op_parse("zero", 4), LOG_OPI_ZERO);
	cr_assert_eq(report_op_parse("zer", 3), -1);
}

Test(reader, model_us_column)
{
	static const char log[] = LOG_HEADER_BASE ",model_us\n"
						  "1,read,1,f,0,1,1,5,,77\n"
						  "2,read,1,f,0,1,1,5,\n"
						  "3,read,1,f,0,1,1,5,,x\n";
	char err[512];
	struct log_reader *r;
	struct log_row row;
	cr_assert_eq(log_reader_open_mem(log, strlen(log), "m.csv", &r, err, sizeof(err)), 0);
	cr_assert_eq(log_reader_next(r, &row), 1);
	cr_assert(row.has_model_us);
	cr_assert_eq(row.model_us, 77);
	cr_assert_eq(log_reader_next(r, &row), 1); /* a row without the column (older writers) */
	cr_assert_not(row.has_model_us);
	cr_assert_eq(row.model_us, 0);
	cr_assert_eq(log_reader_next(r, &row), -EINVAL);
	cr_assert_str_eq(log_reader_error(r),
			 "m.csv:4: field model_us: 'x' is not an unsigned decimal");
	log_reader_close(r);
	/* Under another name the tenth column is not model_us. */
	static const char other[] = LOG_HEADER_BASE ",other\n1,read,1,f,0,1,1,5,,x\n";
	cr_assert_eq(log_reader_open_mem(other, strlen(other), "o.csv", &r, err, sizeof(err)), 0);
	cr_assert_eq(log_reader_next(r, &row), 1);
	cr_assert_not(row.has_model_us);
	log_reader_close(r);
}

/* ---- several devices ------------------------------------------------------ */

/*
 * A log of two devices, main and wal, with their I/Os interleaved.
 *   main (reads of base/t): 1048576+8192; 1056768 (seek 0); 2097152 (seek
 *     2097152 - 1064960 = 1032192); 3145728 (seek 3145728 - 2105344 =
 *     1040384): 4 device I/Os, 3 pairs, 1 sequential, 2 in [512K, 1M);
 *     3 reads with a device I/O there (1, 1 and 2 of them: 4).
 *   wal (writes of pg_wal/w): 0+8192; 8192 (seek 0); 65536 (seek 65536 -
 *     16384 = 49152): 3 device I/Os, 2 pairs, 1 sequential, 1 in [32K, 64K).
 *   all: 7 device I/Os, 3 + 2 = 5 pairs (not the 6 of one head going back
 *     and forth between the devices), 2 sequential; 4 reads (the read of a
 *     hole at 400 has 0 device I/Os), 4 device I/Os.
 *   dynamic layout score of base/t, 4096-byte blocks: 2 + 2 + 2 + 2 = 8
 *     blocks, 7 scored, 1 + 2 + 1 + 1 = 5 contiguous; all on main.
 *   bytes: main read 4 x 8192 = 32768; wal wrote 3 x 8192 = 24576.
 *   model_us of the rows with device I/Os: main 500 + 0 + 900 = 1400, wal
 *     300 + 200 + 400 = 900, all 2300 (not the fsync's 50 nor the hole's 7).
 */
static const char two_log[] =
    LOG_HEADER_BASE ",model_us\n"
		    "100,read,10,base/t,0,8192,8192,50,main:1048576+8192,500\n"
		    "150,write,20,pg_wal/w,0,8192,8192,40,wal:0+8192,300\n"
		    "200,read,10,base/t,8192,8192,8192,60,main:1056768+8192,0\n"
		    "250,write,20,pg_wal/w,8192,8192,8192,30,wal:8192+8192,200\n"
		    "300,read,10,base/t,65536,16384,16384,70,main:2097152+8192;main:3145728+8192,"
		    "900\n"
		    "350,fsync,20,pg_wal/w,0,0,0,900,,50\n"
		    "400,read,10,base/t,16384,8192,8192,20,,7\n"
		    "450,write,20,pg_wal/w,16384,8192,8192,30,wal:65536+8192,400\n";

Test(devices, reader_names_the_devices)
{
	static const char log[] = HEADER "1,read,1,f,0,8192,8192,7,main:4096+4096;1.x_y-z:0+512\n"
					 "2,read,1,f,0,8192,8192,7,1.x_y-z:512+512\n"
					 "3,fsync,1,f,0,0,0,7,\n";
	char err[512];
	struct log_reader *r;
	struct log_row row;

	cr_assert_eq(log_reader_open_mem(log, strlen(log), "d.csv", &r, err, sizeof(err)), 0);
	cr_assert_eq(log_reader_next(r, &row), 1);
	cr_assert(row.dev_named);
	cr_assert_eq(row.ndev, 2);
	cr_assert_eq(row.ndev_names, 2);
	cr_assert_eq(row.dev[0].device, 0);
	cr_assert_eq(row.dev[0].offset, 4096);
	cr_assert_eq(row.dev[0].length, 4096);
	cr_assert_eq(row.dev[1].device, 1);
	cr_assert_eq(row.dev[1].offset, 0);
	cr_assert_eq(row.dev[1].length, 512);
	cr_assert_str_eq(row.dev_names[0], "main");
	cr_assert_str_eq(row.dev_names[1], "1.x_y-z");
	cr_assert_eq(log_reader_next(r, &row), 1);
	cr_assert_eq(row.ndev, 1);
	cr_assert_eq(row.dev[0].device, 1);
	cr_assert_eq(row.dev[0].offset, 512);
	cr_assert_eq(log_reader_next(r, &row), 1);
	cr_assert(row.dev_named);
	cr_assert_eq(row.ndev, 0);
	cr_assert_eq(log_reader_next(r, &row), 0);
	log_reader_close(r);

	/* A one-device log: no names, device 0. */
	cr_assert_eq(log_reader_open_mem(ref_log, strlen(ref_log), "ref.csv", &r, err, sizeof(err)),
		     0);
	cr_assert_eq(log_reader_next(r, &row), 1);
	cr_assert_not(row.dev_named);
	cr_assert_eq(row.ndev_names, 0);
	cr_assert_eq(row.dev[0].device, 0);
	log_reader_close(r);
}

Test(devices, malformed_and_mixed_items)
{
	cr_assert_str_eq(first_error(HEADER "1,read,1,f,0,8192,8192,7,main:0+8192\n"
					    "2,read,1,f,0,8192,8192,7,wal:0+8192;8192+8192\n"),
			 "bad.csv:3: field device_io: item '8192+8192' names no device, but line 2 "
			 "does: with several devices every item is NAME:device_offset+length");
	cr_assert_str_eq(first_error(HEADER "1,read,1,f,0,8192,8192,7,\n"
					    "2,read,1,f,0,8192,8192,7,0+8192\n"
					    "3,read,1,f,0,8192,8192,7,wal:0+8192\n"),
			 "bad.csv:4: field device_io: item 'wal:0+8192' names a device, but line 3 "
			 "does not: with one device every item is device_offset+length");
	cr_assert_str_eq(first_error(HEADER "1,read,1,f,0,8192,8192,7,main:100+\n"),
			 "bad.csv:2: field device_io: 'main:100+' is not NAME:device_offset+length "
			 "items joined by ';'");
	cr_assert_str_eq(first_error(HEADER "1,read,1,f,0,8192,8192,7,main:+5\n"),
			 "bad.csv:2: field device_io: 'main:+5' is not NAME:device_offset+length "
			 "items joined by ';'");
	cr_assert_str_eq(first_error(HEADER "1,read,1,f,0,8192,8192,7,w@l:0+5\n"),
			 "bad.csv:2: field device_io: 'w@l:0+5' is not device_offset+length or "
			 "NAME:device_offset+length items joined by ';' (NAME of letters, digits, "
			 "'_', '.' and '-')");
	cr_assert_str_eq(first_error(HEADER "1,read,1,f,0,8192,8192,7,:0+5\n"),
			 "bad.csv:2: field device_io: ':0+5' is not device_offset+length or "
			 "NAME:device_offset+length items joined by ';' (NAME of letters, digits, "
			 "'_', '.' and '-')");
}

Test(devices, seeks_per_device_and_totals)
{
	struct report rep;
	load(&rep, two_log, BY_NONE);
	cr_assert(rep.dev_named);

	size_t n;
	struct report_device **d = report_devices(&rep, &n);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(d[0]->name, "main");
	cr_assert_str_eq(d[1]->name, "wal");

	const struct device_metrics *m = &d[0]->m, *w = &d[1]->m, *a = &rep.dev;
	cr_assert_eq(m->reads, 3);
	cr_assert_eq(m->read_device_ios, 4);
	cr_assert_eq(hist_count(&m->per_read, 1), 2);
	cr_assert_eq(hist_count(&m->per_read, 2), 1);
	cr_assert_eq(m->device_ios, 4);
	cr_assert_eq(m->pairs, 3);
	cr_assert_eq(m->seek[0], 1);
	cr_assert_eq(m->seek[hist_bucket(1032192)], 2);
	cr_assert_eq(hist_bucket(1032192), hist_bucket(1040384));

	cr_assert_eq(w->reads, 0);
	cr_assert_eq(w->device_ios, 3);
	cr_assert_eq(w->pairs, 2);
	cr_assert_eq(w->seek[0], 1);
	cr_assert_eq(w->seek[hist_bucket(49152)], 1);

	cr_assert_eq(a->reads, 4);
	cr_assert_eq(a->read_device_ios, 4);
	cr_assert_eq(hist_count(&a->per_read, 0), 1);
	cr_assert_eq(a->device_ios, 7);
	cr_assert_eq(a->pairs, 5);
	cr_assert_eq(a->seek[0], 2);
	cr_assert_eq(a->seek[hist_bucket(49152)], 1);
	cr_assert_eq(a->seek[hist_bucket(1032192)], 2);

	cr_assert_eq(m->read_bytes, 32768);
	cr_assert_eq(m->write_device_ios, 0);
	cr_assert_eq(m->model_us, 1400);
	cr_assert_eq(w->read_bytes, 0);
	cr_assert_eq(w->write_device_ios, 3);
	cr_assert_eq(w->write_bytes, 24576);
	cr_assert_eq(w->model_us, 900);
	cr_assert_eq(a->read_bytes, 32768);
	cr_assert_eq(a->write_bytes, 24576);
	cr_assert_eq(a->model_us, 2300);

	cr_assert_eq(d[0]->layout.blocks, 8);
	cr_assert_eq(d[0]->layout.scored, 7);
	cr_assert_eq(d[0]->layout.contiguous, 5);
	cr_assert_eq(d[1]->layout.blocks, 0);
	cr_assert_eq(rep.all.layout.contiguous, 5);
	free(d);
	report_free(&rep);
}

Test(devices, a_block_on_another_device_is_not_contiguous)
{
	/* f's second read starts at the very device offset where its first ended, but on wal. */
	static const char log[] = HEADER "1,read,1,f,0,4096,4096,7,main:0+4096\n"
					 "2,read,1,f,4096,4096,4096,7,wal:4096+4096\n"
					 "3,read,1,f,8192,4096,4096,7,wal:8192+4096\n";
	struct report rep;
	load(&rep, log, BY_NONE);
	cr_assert_eq(rep.all.layout.blocks, 3);
	cr_assert_eq(rep.all.layout.scored, 2);
	cr_assert_eq(rep.all.layout.contiguous, 1);
	/* and the two heads: 0 pairs on main, 1 sequential pair on wal */
	cr_assert_eq(rep.dev.pairs, 1);
	cr_assert_eq(rep.dev.seek[0], 1);
	report_free(&rep);
}

Test(devices, one_device_log_has_no_device_rows)
{
	struct report rep;
	size_t n = 7;
	load(&rep, ref_log, BY_NONE);
	cr_assert_not(rep.dev_named);
	cr_assert_null(report_devices(&rep, &n));
	cr_assert_eq(n, 0);
	report_free(&rep);
}

/* @got equals @want; frees @got. */
static void printed_is(char *got, const char *want)
{
	cr_assert_str_eq(got, want);
	free(got);
}

Test(devices, csv_exact)
{
	struct report rep;
	load(&rep, two_log, BY_NONE);
	printed_is(printed(&rep, FMT_CSV, M_DEVICE),
		   "device,reads,read_device_ios,device_ios_per_read,device_ios,"
		   "device_io_pairs,sequential_pairs,nonsequential_pairs,sequential_pct,"
		   "read_bytes,write_device_ios,write_bytes,model_us\n"
		   "*,4,4,1.000,7,5,2,3,40.00,32768,3,24576,2300\n"
		   "main,3,4,1.333,4,3,1,2,33.33,32768,0,0,1400\n"
		   "wal,0,0,0.000,3,2,1,1,50.00,0,3,24576,900\n");
	printed_is(printed(&rep, FMT_CSV, M_DEVICE_IOS_PER_READ),
		   "device,device_ios,reads,share_pct\n"
		   "*,0,1,25.00\n"
		   "*,1,2,50.00\n"
		   "*,2,1,25.00\n"
		   "main,1,2,66.67\n"
		   "main,2,1,33.33\n");
	printed_is(printed(&rep, FMT_CSV, M_SEEK_DISTANCE), "device,lo,hi,count,share_pct\n"
							    "*,0,0,2,40.00\n"
							    "*,32768,65535,1,20.00\n"
							    "*,524288,1048575,2,40.00\n"
							    "main,0,0,1,33.33\n"
							    "main,524288,1048575,2,66.67\n"
							    "wal,0,0,1,50.00\n"
							    "wal,32768,65535,1,50.00\n");
	printed_is(printed(&rep, FMT_CSV, M_LAYOUT_SCORE),
		   "by,group,blocks_read,scored,contiguous,layout_score\n"
		   "all,all,8,7,5,0.7143\n"
		   "device,main,8,7,5,0.7143\n"
		   "device,wal,0,0,0,1.0000\n");
	report_free(&rep);
}

Test(devices, json_device_is_an_array)
{
	struct report rep;
	json_error_t e;
	load(&rep, two_log, BY_NONE);
	char *s = printed(&rep, FMT_JSON, -1);
	json_t *root = json_loads(s, 0, &e);
	cr_assert_not_null(root, "%s", e.text);
	json_t *dev = json_object_get(root, "device");
	cr_assert(json_is_array(dev));
	cr_assert_eq(json_array_size(dev), 3);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(dev, 2), "device")),
			 "wal");
	cr_assert_eq(json_integer_value(json_object_get(json_array_get(dev, 2), "device_io_pairs")),
		     2);
	cr_assert_eq(json_integer_value(json_object_get(json_array_get(dev, 0), "device_io_pairs")),
		     5);
	json_t *seek = json_object_get(root, "seek_distance");
	cr_assert_eq(json_array_size(seek), 7);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(seek, 4), "device")),
			 "main");
	cr_assert_eq(json_integer_value(json_object_get(json_array_get(seek, 4), "lo")), 524288);
	json_t *lay = json_object_get(root, "layout_score");
	cr_assert_eq(json_array_size(lay), 3);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(lay, 1), "group")),
			 "main");
	json_decref(root);
	free(s);
	report_free(&rep);
}

Test(devices, text_exact)
{
	struct report rep;
	load(&rep, two_log, BY_NONE);
	char *s = printed(&rep, FMT_TEXT, M_DEVICE);
	cr_assert_str_eq(
	    s,
	    "scatterfs-report: ref.csv: 8 rows, 2 files, ts_us 100 to 450\n"
	    "\n"
	    "Device I/O, all devices (each device's seek distances from its own previous "
	    "device I/O)\n"
	    "    read 32768 bytes in 4 device I/Os, wrote 24576 bytes in 3 device I/Os; "
	    "model_us 2300\n"
	    "    device I/Os per read: 1.000 mean (4 for 4 reads)\n"
	    "    device I/Os of reads and writes 7; of their 5 consecutive pairs, sequential 2 "
	    "(40.00%), non-sequential 3\n"
	    "\n"
	    "Device I/O, device main\n"
	    "    read 32768 bytes in 4 device I/Os, wrote 0 bytes in 0 device I/Os; model_us "
	    "1400\n"
	    "    device I/Os per read: 1.333 mean (4 for 3 reads)\n"
	    "    device I/Os of reads and writes 4; of their 3 consecutive pairs, sequential 1 "
	    "(33.33%), non-sequential 2\n"
	    "\n"
	    "Device I/O, device wal\n"
	    "    read 0 bytes in 0 device I/Os, wrote 24576 bytes in 3 device I/Os; model_us "
	    "900\n"
	    "    device I/Os per read: 0.000 mean (0 for 0 reads)\n"
	    "    device I/Os of reads and writes 3; of their 2 consecutive pairs, sequential 1 "
	    "(50.00%), non-sequential 1\n");
	free(s);
	/* the histograms are metrics of their own */
	s = printed(&rep, FMT_TEXT, M_DEVICE_IOS_PER_READ);
	cr_assert(strstr(s, "    device I/Os per read: 1.000 mean (4 for 4 reads)\n"
			    "         0 device I/Os          1  25.00% ####################\n"
			    "         1 device I/O           2  50.00% "
			    "########################################\n"
			    "         2 device I/Os          1  25.00% ####################\n") != NULL,
		  "%s", s);
	cr_assert(strstr(s, "seek distance between") == NULL, "%s", s);
	free(s);
	s = printed(&rep, FMT_TEXT, M_SEEK_DISTANCE);
	cr_assert(strstr(s, "  seek distance between consecutive device I/Os, bytes:\n"
			    "    0                     2  40.00% "
			    "########################################\n"
			    "    [32K,64K)             1  20.00% ####################\n") != NULL,
		  "%s", s);
	cr_assert(strstr(s, "device I/Os per read") == NULL, "%s", s);
	free(s);
	s = printed(&rep, FMT_TEXT, M_LAYOUT_SCORE);
	cr_assert(strstr(s, "    blocks read 8, after a block of the same file 7, contiguous 5: "
			    "layout score 0.7143\n"
			    "    device main: blocks read 8, layout score 0.7143\n"
			    "    device wal: blocks read 0, layout score 1.0000\n") != NULL,
		  "%s", s);
	free(s);
	report_free(&rep);
}

/* The text of the file at @path (static buffer). */
static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Feeds two_log to a writer of @o at DIR/t.iolog.  @return iolog_add()'s first failure or 0. */
static int two_iolog(const char *dir, const struct iolog_opts *o, struct iolog_writer **w,
		     uint64_t *line)
{
	char err[512], path[256];
	struct log_reader *r;
	struct log_row row;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/t.iolog", dir);
	cr_assert_eq(iolog_open(path, o, w, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(log_reader_open_mem(two_log, strlen(two_log), "two.csv", &r, err, sizeof(err)),
		     0);
	while (rc == 0 && log_reader_next(r, &row) > 0) {
		*line = row.line;
		rc = iolog_add(*w, &row);
	}
	log_reader_close(r);
	return rc;
}

Test(devices, iolog_one_file_per_device)
{
	char dir[] = "/tmp/test_report.XXXXXX", path[300];
	cr_assert_not_null(mkdtemp(dir));
	const struct iolog_target t[] = {{"wal", "/dev/sdw"}, {"main", "/dev/sdm"}};
	struct iolog_opts o = {.version = 3, .targets = t, .ntargets = 2};
	struct iolog_writer *w;
	uint64_t line, reads, writes, skipped;

	cr_assert_eq(two_iolog(dir, &o, &w, &line), 0);
	cr_assert_eq(iolog_finish(w), 0);
	const char *p;
	cr_assert_eq(iolog_output(w, 0, &p, &reads, &writes), 0);
	snprintf(path, sizeof(path), "%s/t.main.iolog", dir);
	cr_assert_str_eq(p, path);
	cr_assert_eq(reads, 4);
	cr_assert_eq(writes, 0);
	cr_assert_eq(iolog_output(w, 1, &p, &reads, &writes), 0);
	cr_assert_eq(reads, 0);
	cr_assert_eq(writes, 3);
	cr_assert_eq(iolog_output(w, 2, &p, &reads, &writes), -ENOENT);
	iolog_free(w);

	/* Both count time from the log's first exported row (ts 100 = 1 us). */
	cr_assert_str_eq(slurp(path), "fio version 3 iolog\n"
				      "1 /dev/sdm add\n"
				      "1 /dev/sdm open\n"
				      "1 /dev/sdm read 1048576 8192\n"
				      "101 /dev/sdm read 1056768 8192\n"
				      "201 /dev/sdm read 2097152 8192\n"
				      "201 /dev/sdm read 3145728 8192\n"
				      "201 /dev/sdm close\n");
	unlink(path);
	snprintf(path, sizeof(path), "%s/t.wal.iolog", dir);
	cr_assert_str_eq(slurp(path), "fio version 3 iolog\n"
				      "51 /dev/sdw add\n"
				      "51 /dev/sdw open\n"
				      "51 /dev/sdw write 0 8192\n"
				      "151 /dev/sdw write 8192 8192\n"
				      "351 /dev/sdw write 65536 8192\n"
				      "351 /dev/sdw close\n");
	unlink(path);
	/* PATH itself is gone: the devices' files replace it. */
	snprintf(path, sizeof(path), "%s/t.iolog", dir);
	cr_assert_eq(access(path, F_OK), -1);

	/* File mode: one iolog, the files' requests. */
	o = (struct iolog_opts){.version = 2};
	cr_assert_eq(two_iolog(dir, &o, &w, &line), 0);
	cr_assert_eq(iolog_close(w, &reads, &writes, &skipped), 0);
	cr_assert_eq(reads, 4);
	cr_assert_eq(writes, 3);
	cr_assert_eq(skipped, 0);
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(rmdir(dir), 0);
}

Test(devices, iolog_targets_must_match_the_log)
{
	char dir[] = "/tmp/test_report.XXXXXX", path[300];
	cr_assert_not_null(mkdtemp(dir));
	struct iolog_writer *w;
	uint64_t line = 0;

	struct iolog_opts o = {.version = 3, .device = "/dev/sdz"};
	cr_assert_eq(two_iolog(dir, &o, &w, &line), -EINVAL);
	cr_assert_eq(line, 2);
	cr_assert_str_eq(iolog_error(w), "the log names its devices (main, ...): give "
					 "--iolog-device NAME=FILE for each of them instead of "
					 "--iolog-device /dev/sdz");
	iolog_free(w);

	const struct iolog_target t[] = {{"main", "/dev/sdm"}};
	o = (struct iolog_opts){.version = 3, .targets = t, .ntargets = 1};
	cr_assert_eq(two_iolog(dir, &o, &w, &line), -EINVAL);
	cr_assert_eq(line, 3);
	cr_assert_str_eq(
	    iolog_error(w),
	    "device wal has no --iolog-device wal=FILE (the file its iolog replays on)");
	iolog_free(w);
	snprintf(path, sizeof(path), "%s/t.main.iolog", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/t.iolog", dir);
	unlink(path);

	/* NAME=FILE for a one-device log */
	char err[512];
	struct log_reader *r;
	struct log_row row;
	cr_assert_eq(iolog_open(path, &o, &w, err, sizeof(err)), 0);
	cr_assert_eq(log_reader_open_mem(ref_log, strlen(ref_log), "ref.csv", &r, err, sizeof(err)),
		     0);
	cr_assert_eq(log_reader_next(r, &row), 1);
	cr_assert_eq(iolog_add(w, &row), -EINVAL);
	cr_assert_str_eq(iolog_error(w), "the log names no devices: give --iolog-device FILE, not "
					 "--iolog-device main=/dev/sdm");
	log_reader_close(r);
	iolog_free(w);
	unlink(path);

	/* a device given twice, a target fio cannot read */
	const struct iolog_target t2[] = {{"main", "/dev/sdm"}, {"main", "/dev/sdn"}};
	o = (struct iolog_opts){.version = 3, .targets = t2, .ntargets = 2};
	cr_assert_eq(iolog_open(path, &o, &w, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "--iolog-device main=: device main given twice");
	const struct iolog_target t3[] = {{"wal", "/dev/a b"}};
	o = (struct iolog_opts){.version = 3, .targets = t3, .ntargets = 1};
	cr_assert_eq(iolog_open(path, &o, &w, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "--iolog-device wal=/dev/a b: fio's iolog cannot hold a name longer "
			      "than 256 bytes or with white space");
	cr_assert_eq(rmdir(dir), 0);
}

Test(devices, iolog_device_path)
{
	const char *const cases[][3] = {
	    {"r.iolog", "wal", "r.wal.iolog"}, {"r", "wal", "r.wal"},
	    {"/a.b/r", "main", "/a.b/r.main"}, {"/a.b/r.x.log", "main", "/a.b/r.x.main.log"},
	    {".hidden", "wal", ".hidden.wal"}, {"d/.h.iolog", "wal", "d/.h.wal.iolog"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *s = iolog_device_path(cases[i][0], cases[i][1]);
		cr_assert_str_eq(s, cases[i][2]);
		free(s);
	}
}

/*
 * Request order: the daemon writes a row when its request is answered, so
 * a read answered after a later one comes later in the log; every figure
 * taken one row after another goes by ts_us (report_feed()'s window).  In
 * log order these three reads would be 0 of 2 sequential and 0 of 2
 * contiguous blocks; in request order 2 of 2 each.  The second log names
 * its devices, first seen in rows that wait in the window.
 */
Test(order, rows_in_request_order)
{
	static const char *logs[] = {
		"ts_us,op,pid,path,offset,size,result,latency_us,device_io\n"
		"100,read,1,a,0,4096,4096,5,0+4096\n"
		"300,read,1,a,8192,4096,4096,5,8192+4096\n"
		"200,read,1,a,4096,4096,4096,5,4096+4096\n",
		"ts_us,op,pid,path,offset,size,result,latency_us,device_io\n"
		"100,read,1,a,0,4096,4096,5,wal:0+4096\n"
		"300,read,1,a,8192,4096,4096,5,wal:8192+4096\n"
		"200,read,1,a,4096,4096,4096,5,wal:4096+4096\n"
		"250,read,1,b,0,4096,4096,5,main:65536+4096\n",
	};
	for (size_t i = 0; i < 2; i++) {
		struct report rep;
		struct report_feed_counts c;
		load_filtered(&rep, logs[i], BY_NONE, NULL, NULL, &c);
		cr_assert_eq(c.rows, 3 + i);
		cr_assert_eq(rep.seq.with_previous, 2, "log %zu", i);
		cr_assert_eq(rep.seq.sequential, 2, "log %zu", i);
		cr_assert_eq(rep.all.layout.scored, 2, "log %zu", i);
		cr_assert_eq(rep.all.layout.contiguous, 2, "log %zu", i);
		if (i == 1) {
			size_t n;
			struct report_device **d = report_devices(&rep, &n);
			cr_assert_eq(n, 2);
			cr_assert_str_eq(d[0]->name, "main");
			cr_assert_str_eq(d[1]->name, "wal");
			cr_assert_eq(d[0]->m.reads, 1);
			cr_assert_eq(d[1]->m.reads, 3);
			free(d);
		}
		report_free(&rep);
	}
}
