/*
 * Unit tests of the configuration module (layout/config_*.c, layout/size.c):
 * defaults, every key, sizes, each kind of error with its file:line, -o
 * overrides, [file] rules and their inheritance, config_finish() conflicts,
 * the config_write_ini() round trip, and every shipped conf/NAME.ini.
 *
 * Test INI files go to a mkdtemp() directory made per test.  Run from the
 * project root (meson's workdir), so that conf/ is found.
 */
#undef NDEBUG
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "disk_model.h"
#include "models/hdd.h"
#include "size.h"

/* The hdd model's keys in @d (its slice of model_data). */
#define HDD(d) ((const struct hdd_params *)disk_model_params((d), &hdd_model))

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define TiB (UINT64_C(1) << 40)

static char tmpdir[64];
static char errbuf[1024];

static void setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_config.XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
	errbuf[0] = '\0';
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void teardown(void)
{
	nftw(tmpdir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

TestSuite(config, .init = setup, .fini = teardown);

/* Writes @len bytes of @text to tmpdir/@name; returns the path (static, one per name slot). */
static const char *write_bytes(const char *name, const char *text, size_t len)
{
	static char paths[4][128];
	static int slot;
	char *path = paths[slot++ % 4];
	FILE *f;

	snprintf(path, 128, "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(text, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
	return path;
}

static const char *write_ini(const char *name, const char *text)
{
	return write_bytes(name, text, strlen(text));
}

/* config_init() + config_load_file() of @text; returns the rc, the file's path in *@path. */
static int load_text(struct sfs_config *c, const char *text, const char **path)
{
	const char *p = write_ini("t.ini", text);

	if (path)
		*path = p;
	config_init(c);
	return config_load_file(c, p, errbuf, sizeof(errbuf));
}

static void load_ok(struct sfs_config *c, const char *text)
{
	int rc = load_text(c, text, NULL);

	cr_assert_eq(rc, 0, "load failed (%d): %s", rc, errbuf);
}

static void finish_ok(struct sfs_config *c, uint64_t device)
{
	int rc = config_finish(c, device, errbuf, sizeof(errbuf));

	cr_assert_eq(rc, 0, "finish failed (%d): %s", rc, errbuf);
}

static void assert_has(const char *msg, const char *part)
{
	cr_assert_not_null(strstr(msg, part), "message '%s' lacks '%s'", msg, part);
}

static void assert_one_line(const char *msg)
{
	cr_assert_neq(msg[0], '\0', "empty message");
	cr_assert_null(strchr(msg, '\n'), "message has a newline: '%s'", msg);
}

/* Loading @text fails with -EINVAL and a message naming the file, ":@line:" and @key. */
static void load_fails(const char *text, unsigned line, const char *key)
{
	struct sfs_config c;
	const char *path;
	char at[32];
	int rc = load_text(&c, text, &path);

	cr_assert_eq(rc, -EINVAL, "rc %d, message '%s'", rc, errbuf);
	assert_one_line(errbuf);
	assert_has(errbuf, path);
	snprintf(at, sizeof(at), ":%u:", line);
	assert_has(errbuf, at);
	if (key)
		assert_has(errbuf, key);
	config_free(&c);
}

/* Loading @text works, config_finish(@device) fails naming ":@line:" (0: no line) and @key. */
static void finish_fails(const char *text, uint64_t device, unsigned line, const char *key)
{
	struct sfs_config c;
	const char *path;
	char at[32];
	int rc = load_text(&c, text, &path);

	cr_assert_eq(rc, 0, "load failed: %s", errbuf);
	rc = config_finish(&c, device, errbuf, sizeof(errbuf));
	cr_assert_eq(rc, -EINVAL, "rc %d, message '%s'", rc, errbuf);
	assert_one_line(errbuf);
	if (line) {
		assert_has(errbuf, path);
		snprintf(at, sizeof(at), ":%u:", line);
		assert_has(errbuf, at);
	}
	assert_has(errbuf, key);
	config_free(&c);
}

/* ---- defaults ---- */

Test(config, defaults)
{
	struct sfs_config c;

	config_init(&c);
	cr_assert_eq(c.device.size, 0);
	cr_assert_eq(c.device.block_size, 4096);
	cr_assert_eq(c.device.direct, false);
	cr_assert_eq(c.device.poll_us, 0);
	cr_assert_eq(c.device.async_reads, ASYNC_READS_BUSY);
	cr_assert_eq(c.defaults.layout.pattern, PATTERN_CONTIGUOUS);
	cr_assert_eq(c.defaults.layout.extent_size, 0); /* auto */
	cr_assert_eq(c.defaults.layout.initial_size, 0);
	cr_assert_eq(c.defaults.layout.gap, 0);
	cr_assert_eq(c.defaults.layout.gap_max, 0);
	cr_assert_eq(c.defaults.layout.contiguous_ratio, 0.5);
	cr_assert_eq(c.defaults.layout.seed, 1);
	cr_assert_eq(c.defaults.autoextend.next, 0);
	cr_assert_eq(c.defaults.autoextend.max_size, 0);
	cr_assert_eq(c.defaults.autoextend.zero_fill, ZERO_FILL_WRITE);
	cr_assert_eq(c.defaults.cache.mode, CACHE_NONE);
	cr_assert_eq(c.defaults.cache.readahead, 128 * KiB);
	cr_assert(c.cache_writeback);
	cr_assert_null(c.log.path);
	cr_assert_eq(c.log.ops, LOG_READ | LOG_EXTEND);
	cr_assert_eq(c.disk.model, DISK_NONE);
	cr_assert_eq(HDD(&c.disk)->rpm, 7200);
	cr_assert_eq(HDD(&c.disk)->seek_track_ms, 1.0);
	cr_assert_eq(HDD(&c.disk)->seek_avg_ms, 8.5);
	cr_assert_eq(HDD(&c.disk)->seek_full_ms, 18);
	cr_assert_eq(HDD(&c.disk)->transfer_outer_mib_s, 150);
	cr_assert_eq(HDD(&c.disk)->transfer_inner_mib_s, 150);
	cr_assert_eq(c.disk.capacity, 0);
	cr_assert_eq(HDD(&c.disk)->rotation, ROTATION_PHASE);
	cr_assert_eq(c.nrules, 0);
	cr_assert_null(c.source);
	/* With no file at all, finish adds only the built-in -shm rule. */
	finish_ok(&c, 0);
	cr_assert_eq(c.nrules, 1);
	cr_assert_str_eq(c.rules[0].glob, "*-shm");
	cr_assert_eq(c.rules[0].params.cache.mode, CACHE_KERNEL);
	cr_assert_eq(c.rules[0].params.layout.extent_size, 0);
	/* ... and resolves the auto keys: 64 x extent_size, and extent_size. */
	cr_assert_eq(c.defaults.layout.gap_max, 64 * MiB);
	cr_assert_eq(c.defaults.layout.gap, MiB);
	cr_assert_eq(c.device.effective_size, 0);
	config_free(&c);
}

Test(config, enum_names)
{
	cr_assert_str_eq(pattern_name(PATTERN_CONTIGUOUS), "contiguous");
	cr_assert_str_eq(pattern_name(PATTERN_SINGLE), "single");
	cr_assert_str_eq(pattern_name(PATTERN_INTERLEAVED), "interleaved");
	cr_assert_str_eq(pattern_name(PATTERN_RANDOM), "random");
	cr_assert_str_eq(pattern_name(PATTERN_REVERSE), "reverse");
	cr_assert_str_eq(zero_fill_name(ZERO_FILL_WRITE), "write");
	cr_assert_str_eq(zero_fill_name(ZERO_FILL_FALLOCATE), "fallocate");
	cr_assert_str_eq(zero_fill_name(ZERO_FILL_NONE), "none");
	cr_assert_str_eq(cache_mode_name(CACHE_NONE), "none");
	cr_assert_str_eq(cache_mode_name(CACHE_KERNEL), "kernel");
}

/* ---- sizes ---- */

Test(config, parse_size_good)
{
	static const struct {
		const char *s;
		uint64_t v;
	} good[] = {
	    {"0", 0},
	    {"512", 512},
	    {"70K", 71680},
	    {"70k", 71680},
	    {"70KiB", 71680},
	    {"70kib", 71680},
	    {"70KIB", 71680},
	    {"3MiB", 3 * MiB},
	    {"2GiB", 2 * GiB},
	    {"1TiB", TiB},
	    {"1M", MiB},
	    {"2G", 2 * GiB},
	    {"1T", TiB},
	    {"13270K", 13270 * KiB},
	    {"512B", 512},
	    {"007", 7},
	    {"9223372036854775807", UINT64_C(9223372036854775807)},
	    {"8388607T", 8388607 * TiB},
	};
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		uint64_t v = 12345;
		int rc = parse_size(good[i].s, &v);

		cr_assert_eq(rc, 0, "'%s': rc %d", good[i].s, rc);
		cr_assert_eq(v, good[i].v, "'%s' gave %llu", good[i].s, (unsigned long long)v);
	}
}

Test(config, parse_size_bad)
{
	static const struct {
		const char *s;
		int rc;
	} bad[] = {
	    {"", -EINVAL},
	    {"-1", -EINVAL},
	    {"1.5M", -EINVAL},
	    {"12Q", -EINVAL},
	    {"99999999999999999999", -ERANGE},
	    {"9223372036854775808", -ERANGE},
	    {"8388608T", -ERANGE},
	    {"99999999999999999999Q", -EINVAL},
	    {" 1K", -EINVAL},
	    {"1K ", -EINVAL},
	    {"1 K", -EINVAL},
	    {"+1", -EINVAL},
	    {"K", -EINVAL},
	    {"1iB", -EINVAL},
	    {"1Ki", -EINVAL},
	    {"1KK", -EINVAL},
	    {"0x10", -EINVAL},
	    /* Powers of 1000 to most readers: refused, not taken as K/M/G/T. */
	    {"70KB", -EINVAL},
	    {"1GB", -EINVAL},
	    {"1gb", -EINVAL},
	    {"1Mb", -EINVAL},
	    {"1tB", -EINVAL},
	    {"1.5GB", -EINVAL},
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 12345;
		int rc = parse_size(bad[i].s, &v);

		cr_assert_eq(rc, bad[i].rc, "'%s': rc %d, want %d", bad[i].s, rc, bad[i].rc);
		cr_assert_eq(v, 12345, "'%s' changed the output", bad[i].s);
	}
}

Test(config, size_error_says_what_to_write)
{
	static const struct {
		const char *s, *why;
	} cases[] = {
	    {"1GB", "write 1G or 1GiB (powers of 1024); KB/MB/GB/TB are not accepted"},
	    {"70kb", "write 70K or 70KiB (powers of 1024); KB/MB/GB/TB are not accepted"},
	    {"1.5GB", "write 1536M or 1536MiB (powers of 1024); KB/MB/GB/TB are not accepted"},
	    {"0.5KB",
	     "write 512 (bytes; K/M/G/T are powers of 1024); KB/MB/GB/TB are not accepted"},
	    {"1.3KB",
	     "write a whole number of bytes, K, M, G or T (powers of 1024); KB/MB/GB/TB are "
	     "not accepted"},
	    {"1.5M", "not a size: no fractions (use a smaller unit: 1536K, not 1.5M)"},
	    {"2.25G", "not a size: no fractions (use a smaller unit: 2304M, not 2.25G)"},
	    {"1.50t", "not a size: no fractions (use a smaller unit: 1536G, not 1.50t)"},
	    {"1.3K", "not a size: no fractions (1.3K is not a whole number of bytes)"},
	    {"1.5", "not a size: no fractions (1.5 is not a whole number of bytes)"},
	    {"1.5Q", "not a size: no fractions"},
	    {"12Q", "not a size (use bytes or a K/M/G/T suffix)"},
	    {"-1", "not a size: negative"},
	    {"", "empty; expected a size (bytes or a K/M/G/T suffix)"},
	};
	char buf[200];
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = parse_size(cases[i].s, &v);

		cr_assert_eq(rc, -EINVAL, "'%s': rc %d", cases[i].s, rc);
		cr_assert_str_eq(size_error(cases[i].s, rc, buf, sizeof(buf)), cases[i].why);
	}
	cr_assert_str_eq(size_error("9223372036854775808", -ERANGE, buf, sizeof(buf)),
			 "too large (at most 2^63-1 bytes)");
}

Test(config, format_size)
{
	char buf[32];

	cr_assert_str_eq(format_size(0, buf, sizeof(buf)), "0");
	cr_assert_str_eq(format_size(1000, buf, sizeof(buf)), "1000");
	cr_assert_str_eq(format_size(71680, buf, sizeof(buf)), "70K");
	cr_assert_str_eq(format_size(512 * MiB, buf, sizeof(buf)), "512M");
	cr_assert_str_eq(format_size(1536 * KiB, buf, sizeof(buf)), "1536K");
	cr_assert_str_eq(format_size(2 * GiB, buf, sizeof(buf)), "2G");
	cr_assert_str_eq(format_size(3 * TiB, buf, sizeof(buf)), "3T");
	cr_assert_str_eq(format_size(TiB + 512, buf, sizeof(buf)), "1099511628288");
	cr_assert_str_eq(format_size(70 * KiB, buf, 3), "70");
}

/* ---- every key ---- */

Test(config, every_key)
{
	struct sfs_config c;

	load_ok(&c, "; a comment\n"
		    "[device]\n"
		    "size = 3G\n"
		    "block_size = 2K\n"
		    "direct = yes\n"
		    "poll_us = 10000\n"
		    "async_reads = off\n"
		    "[layout]\n"
		    "pattern = random\n"
		    "extent_size = 70K\n"
		    "gap_max = 13270K\n"
		    "contiguous_ratio = 0.25\n"
		    "seed = 18446744073709551615\n"
		    "[autoextend]\n"
		    "next = 140K\n"
		    "max_size = 1G\n"
		    "zero_fill = fallocate\n"
		    "[cache]\n"
		    "mode = kernel\n"
		    "readahead = 1M\n"
		    "[log]\n"
		    "path = /tmp/x y.csv\n"
		    "ops = read, write,extend,fsync,punch\n"
		    "[disk]\n"
		    "model = hdd\n"
		    "rpm = 5400.5\n"
		    "seek_track_ms = 0.8\n"
		    "seek_avg_ms = 9\n"
		    "seek_full_ms = 17.5\n"
		    "transfer_mib_s = 200,100\n"
		    "capacity = 8G\n"
		    "rotation = average\n");
	cr_assert_eq(c.device.size, 3 * GiB);
	cr_assert_eq(c.device.block_size, 2048);
	cr_assert_eq(c.device.direct, true);
	cr_assert_eq(c.device.poll_us, 10000);
	cr_assert_eq(c.device.async_reads, ASYNC_READS_OFF);
	cr_assert_eq(c.defaults.layout.pattern, PATTERN_RANDOM);
	cr_assert_eq(c.defaults.layout.extent_size, 71680);
	cr_assert_eq(c.defaults.layout.gap_max, 13270 * KiB);
	cr_assert_eq(c.defaults.layout.contiguous_ratio, 0.25);
	cr_assert_eq(c.defaults.layout.seed, UINT64_MAX);
	cr_assert_eq(c.defaults.autoextend.next, 140 * KiB);
	cr_assert_eq(c.defaults.autoextend.max_size, GiB);
	cr_assert_eq(c.defaults.autoextend.zero_fill, ZERO_FILL_FALLOCATE);
	cr_assert_eq(c.defaults.cache.mode, CACHE_KERNEL);
	cr_assert_eq(c.defaults.cache.readahead, MiB);
	cr_assert_str_eq(c.log.path, "/tmp/x y.csv");
	cr_assert_eq(c.log.ops, LOG_READ | LOG_WRITE | LOG_EXTEND | LOG_FSYNC | LOG_PUNCH);
	cr_assert_eq(c.disk.model, &hdd_model);
	cr_assert_eq(HDD(&c.disk)->rpm, 5400.5);
	cr_assert_eq(HDD(&c.disk)->seek_track_ms, 0.8);
	cr_assert_eq(HDD(&c.disk)->seek_avg_ms, 9);
	cr_assert_eq(HDD(&c.disk)->seek_full_ms, 17.5);
	cr_assert_eq(HDD(&c.disk)->transfer_outer_mib_s, 200);
	cr_assert_eq(HDD(&c.disk)->transfer_inner_mib_s, 100);
	cr_assert_eq(c.disk.capacity, 8 * GiB);
	cr_assert_eq(HDD(&c.disk)->rotation, ROTATION_AVERAGE);
	{
		char want[128];

		snprintf(want, sizeof(want), "%s/t.ini", tmpdir);
		cr_assert_str_eq(c.source, want);
	}
	finish_ok(&c, 0);
	config_free(&c);
}

Test(config, other_patterns_and_values)
{
	struct sfs_config c;

	load_ok(&c, "[layout]\npattern = single\ninitial_size = 512M\nextent_size = auto\n"
		    "[autoextend]\nzero_fill = none\n[device]\ndirect = off\n[disk]\n"
		    "model = hdd\ntransfer_mib_s = 120\n");
	cr_assert_eq(c.defaults.layout.pattern, PATTERN_SINGLE);
	cr_assert_eq(c.defaults.layout.initial_size, 512 * MiB);
	cr_assert_eq(c.defaults.layout.extent_size, 0);
	cr_assert_eq(c.defaults.autoextend.zero_fill, ZERO_FILL_NONE);
	cr_assert_eq(c.device.direct, false);
	cr_assert_eq(HDD(&c.disk)->transfer_outer_mib_s, 120);
	cr_assert_eq(HDD(&c.disk)->transfer_inner_mib_s, 120);
	finish_ok(&c, 0);
	config_free(&c);

	load_ok(&c, "[layout]\npattern = interleaved\ngap = 70K\nextent_size = 70K\n");
	cr_assert_eq(c.defaults.layout.pattern, PATTERN_INTERLEAVED);
	cr_assert_eq(c.defaults.layout.gap, 70 * KiB);
	config_free(&c);

	load_ok(&c, "[layout]\npattern = reverse\nseed = 0x10\n"
		    "; seed is random-only: finish would refuse it\n");
	cr_assert_eq(c.defaults.layout.pattern, PATTERN_REVERSE);
	cr_assert_eq(c.defaults.layout.seed, 16);
	config_free(&c);

	/* CRLF line ends, a UTF-8 byte order mark, indented lines, inline comments. */
	load_ok(&c, "\xef\xbb\xbf[layout]\r\n  extent_size = 64K ; sixty-four\r\n"
		    "  [cache] ; the cache\r\nmode = kernel\r\n# é, ü: UTF-8 comments are fine\n");
	cr_assert_eq(c.defaults.layout.extent_size, 64 * KiB);
	cr_assert_eq(c.defaults.cache.mode, CACHE_KERNEL);
	config_free(&c);
}

/* ---- errors in files ---- */

Test(config, error_bad_size_exact_message)
{
	struct sfs_config c;
	const char *path;
	char want[512];
	int rc =
	    load_text(&c, "[layout]\npattern = interleaved\n\n\n\n\n\n\n\n\n\ngap = 70Q\n", &path);

	cr_assert_eq(rc, -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:12: [layout] gap = 70Q: not a size (use bytes or a K/M/G/T suffix)", path);
	cr_assert_str_eq(errbuf, want);
	config_free(&c);
}

Test(config, error_unknown_key_exact_message)
{
	struct sfs_config c;
	const char *path;
	char want[512];
	int rc = load_text(&c, "[layout]\npattern = interleaved\ngapp = 70K\n", &path);

	cr_assert_eq(rc, -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:3: [layout] unknown key 'gapp'; allowed: pattern, extent_size, device, "
		 "initial_size, "
		 "gap, gap_max, contiguous_ratio, seed, layout_score, map, map_format, map_base, "
		 "map_then",
		 path);
	cr_assert_str_eq(errbuf, want);
	config_free(&c);
}

Test(config, error_bad_sizes)
{
	load_fails("[layout]\nextent_size =\n", 2, "extent_size");
	load_fails("[layout]\nextent_size = -1\n", 2, "extent_size = -1");
	load_fails("[layout]\nextent_size = 1.5M\n", 2, "extent_size = 1.5M");
	load_fails("[layout]\n\nextent_size = 12Q\n", 3, "extent_size = 12Q");
	load_fails("[layout]\nextent_size = 99999999999999999999\n", 2, "too large");
	load_fails("[layout]\nextent_size = 0\n", 2, "auto");
	load_fails("[device]\nsize = 1X\n", 2, "size = 1X");
	load_fails("[autoextend]\nnext = ten\n", 2, "next = ten");
	load_fails("[autoextend]\nmax_size = 1..\n", 2, "max_size");
	load_fails("[disk]\ncapacity = 8 G\n", 2, "capacity");
}

Test(config, error_unknown_section)
{
	load_fails("[layout]\nextent_size = 1M\n[bogus]\n", 3, "[bogus]");
	assert_has(errbuf, "allowed: [device], [layout], [autoextend], [cache], [log], [disk], "
			   "[file \"GLOB\"]");
	/* A section without keys is still checked. */
	load_fails("[Layout]\n", 1, "[Layout]");
	load_fails("[file]\n", 1, "[file \"GLOB\"]");
	load_fails("[file \"\"]\n", 1, "empty glob");
	load_fails("[file \"*.dbf]\n", 1, "glob");
	load_fails("[layout\n", 1, "']'");
	load_fails("[layout] x\n", 1, "after");
}

Test(config, error_unknown_key_in_rule)
{
	load_fails("[file \"*.dbf\"]\npattern = random\nblock_size = 2K\n", 3, "block_size");
	assert_has(errbuf,
		   "[file \"*.dbf\"] unknown key 'block_size'; allowed: pattern, "
		   "extent_size, device, initial_size, gap, gap_max, contiguous_ratio, seed, "
		   "layout_score, map, map_format, map_base, map_then, next, max_size, "
		   "zero_fill, sparse, mode, readahead");
}

/*
 * cache.writeback is mount-wide (the kernel's write-back cache is one per
 * connection): a [file] rule that sets it is refused with where to put it.
 */
Test(config, writeback_not_in_rule)
{
	load_fails("[cache]\nmode = kernel\n[file \"*.db\"]\nwriteback = false\n", 4,
		   "'writeback'");
	assert_has(errbuf, "[file \"*.db\"] key 'writeback' is mount-wide");
	assert_has(errbuf, "set it in [cache]");
	load_fails("[file \"*.db\"]\ncache.writeback = true\n", 2, "'cache.writeback'");
	assert_has(errbuf, "is mount-wide");
}

/*
 * config_writeback(): on only where every file is in kernel mode; a mount
 * that puts some files in each mode gets it off and one line saying why;
 * a mount in none mode alone, or with cache.writeback = false, no line.
 */
Test(config, writeback_needs_every_file_in_kernel_mode)
{
	struct sfs_config c;
	char why[512];

	load_ok(&c, "[cache]\nmode = kernel\n");
	finish_ok(&c, 64 * MiB);
	cr_assert(config_writeback(&c, why, sizeof(why)));
	cr_assert_str_eq(why, "");
	config_free(&c);

	load_ok(&c, "[cache]\nmode = kernel\nwriteback = false\n");
	finish_ok(&c, 64 * MiB);
	cr_assert_not(config_writeback(&c, why, sizeof(why)));
	cr_assert_str_eq(why, "");
	config_free(&c);

	/* none: the built-in *-shm rule (kernel) says nothing */
	load_ok(&c, "[cache]\nmode = none\n");
	finish_ok(&c, 64 * MiB);
	cr_assert_not(config_writeback(&c, why, sizeof(why)));
	cr_assert_str_eq(why, "");
	config_free(&c);

	load_ok(&c, "[cache]\nmode = kernel\n[file \"pg_wal/*\"]\ncache.mode = none\n");
	finish_ok(&c, 64 * MiB);
	cr_assert_not(config_writeback(&c, why, sizeof(why)));
	cr_assert_str_eq(why, "cache.writeback is off for this mount: it has files in both cache "
			      "modes ([file \"pg_wal/*\"] cache.mode = none), and the kernel's "
			      "write-back cache would keep the size and times of every file, a "
			      "direct-I/O file's going stale; set cache.writeback = false, or "
			      "cache.mode = kernel for every file");
	config_free(&c);

	load_ok(&c, "[cache]\nmode = none\n[file \"*.db\"]\ncache.mode = kernel\n");
	finish_ok(&c, 64 * MiB);
	cr_assert_not(config_writeback(&c, why, sizeof(why)));
	assert_has(why, "([cache] mode = none)");
	config_free(&c);
}

Test(config, error_bad_enums)
{
	struct sfs_config c;

	load_fails("[layout]\npattern = spiral\n", 2, "pattern = spiral");
	assert_has(errbuf, "allowed: contiguous, single, interleaved, random, reverse");
	load_fails("[autoextend]\nzero_fill = yes\n", 2, "zero_fill");
	assert_has(errbuf, "allowed: write, fallocate, none");
	load_fails("[cache]\nmode = page\n", 2, "mode = page");
	assert_has(errbuf, "allowed: none, kernel");
	load_fails("[disk]\nmodel = flash\n", 2, "model = flash");
	assert_has(errbuf, "allowed: none, hdd, ssd");
	load_fails("[disk]\nrotation = spin\n", 2, "rotation");
	assert_has(errbuf, "allowed: phase, average");
	load_fails("[device]\ndirect = maybe\n", 2, "direct");
	load_fails("[device]\nasync_reads = sometimes\n", 2, "async_reads");
	/* async_reads takes a boolean or always: */
	load_ok(&c, "[device]\nasync_reads = ALWAYS\n");
	cr_assert_eq(c.device.async_reads, ASYNC_READS_ALWAYS);
	config_free(&c);
	load_ok(&c, "[device]\nasync_reads = yes\n");
	cr_assert_eq(c.device.async_reads, ASYNC_READS_BUSY);
	config_free(&c);
	load_fails("[device]\nasync_reads = sometimes\n", 2, "async_reads");
	assert_has(errbuf, "[device] async_reads = sometimes: unknown value; allowed: true, false, "
			   "always (or yes, no, on, off, 1, 0)");
	load_fails("[log]\nops = read,seek\n", 2, "ops");
	assert_has(errbuf, "'seek'");
	assert_has(errbuf, "read, write, extend, fsync, punch, zero");
	load_fails("[log]\nops = read:write\n", 2, "ops");
	load_fails("[log]\nops = read,,write\n", 2, "ops");
	load_fails("[log]\npath =\n", 2, "path");
}

Test(config, error_out_of_range_numbers)
{
	load_fails("[layout]\ncontiguous_ratio = 1.01\n", 2, "contiguous_ratio");
	load_fails("[layout]\ncontiguous_ratio = -0.1\n", 2, "contiguous_ratio");
	load_fails("[layout]\ncontiguous_ratio = half\n", 2, "contiguous_ratio");
	load_fails("[layout]\ncontiguous_ratio = nan\n", 2, "contiguous_ratio");
	load_fails("[layout]\nseed = -1\n", 2, "seed");
	load_fails("[layout]\nseed = 18446744073709551616\n", 2, "seed");
	load_fails("[disk]\nrpm = 0\n", 2, "rpm");
	load_fails("[disk]\nrpm = -7200\n", 2, "rpm");
	load_fails("[disk]\nrpm = inf\n", 2, "rpm");
	load_fails("[disk]\nseek_avg_ms = -1\n", 2, "seek_avg_ms");
	load_fails("[disk]\ntransfer_mib_s = 100,200\n", 2, "transfer_mib_s");
	load_fails("[disk]\ntransfer_mib_s = 200,100,50\n", 2, "transfer_mib_s");
	load_fails("[disk]\ntransfer_mib_s = 0\n", 2, "transfer_mib_s");
	load_fails("[device]\nblock_size = 3K\n", 2, "block_size");
	assert_has(errbuf, "power of two");
	load_fails("[device]\nblock_size = 256\n", 2, "block_size");
	load_fails("[device]\nblock_size = 2M\n", 2, "block_size");
	load_fails("[cache]\nreadahead = 2M\n", 2, "readahead");
	load_fails("[cache]\nreadahead = 6K\n", 2, "readahead");
	load_fails("[cache]\nreadahead = 2K\n", 2, "readahead");
	load_fails("[device]\npoll_us = 10001\n", 2, "poll_us");
	assert_has(errbuf, "[device] poll_us = 10001: must be a whole number of microseconds "
			   "from 0 to 10000");
	load_fails("[device]\npoll_us = -1\n", 2, "poll_us");
	load_fails("[device]\npoll_us = 1.5\n", 2, "poll_us");
	load_fails("[device]\npoll_us = soon\n", 2, "poll_us");
}

Test(config, error_duplicates)
{
	load_fails("[layout]\npattern = single\n[cache]\nmode = none\n[layout]\n", 5, "[layout]");
	assert_has(errbuf, "duplicated section");
	assert_has(errbuf, "line 1");
	load_fails("[file \"*.dbf\"]\nextent_size = 64K\n[file \"*.log\"]\n[file \"*.dbf\"]\n", 4,
		   "[file \"*.dbf\"]");
	assert_has(errbuf, "duplicated section");
	load_fails("[layout]\ngap = 1K\nextent_size = 1M\ngap = 2K\n", 4, "'gap'");
	assert_has(errbuf, "duplicated key");
	assert_has(errbuf, "line 2");
	/* The long and the short name of a rule key are the same key. */
	load_fails("[file \"*-wal\"]\nmode = kernel\ncache.mode = none\n", 3, "cache.mode");
}

Test(config, error_key_outside_section)
{
	load_fails("gap = 70K\n[layout]\n", 1, "'gap'");
	assert_has(errbuf, "outside any section");
	assert_has(errbuf, "[layout]");
}

Test(config, error_syntax)
{
	load_fails("[layout]\npattern = single\njust words\n", 3, "just words");
}

Test(config, error_not_utf8)
{
	struct sfs_config c;
	const char text[] = "[log]\n# ok\npath = /tmp/\xff\xfe.csv\n";
	const char *path = write_bytes("bad.ini", text, sizeof(text) - 1);
	int rc;

	config_init(&c);
	rc = config_load_file(&c, path, errbuf, sizeof(errbuf));
	cr_assert_eq(rc, -EINVAL);
	assert_one_line(errbuf);
	assert_has(errbuf, path);
	assert_has(errbuf, ":3:");
	assert_has(errbuf, "UTF-8");
	assert_has(errbuf, "0xff");
	config_free(&c);

	/* An overlong encoding and a NUL byte are not text either. */
	path = write_bytes("bad2.ini", "[log]\npath = \xc0\xaf\n", 15);
	config_init(&c);
	cr_assert_eq(config_load_file(&c, path, errbuf, sizeof(errbuf)), -EINVAL);
	assert_has(errbuf, ":2:");
	config_free(&c);
	path = write_bytes("bad3.ini", "[log]\n\0path = x\n", 16);
	config_init(&c);
	cr_assert_eq(config_load_file(&c, path, errbuf, sizeof(errbuf)), -EINVAL);
	assert_has(errbuf, ":2:");
	config_free(&c);
}

Test(config, error_empty_file)
{
	struct sfs_config c;
	const char *path;

	cr_assert_eq(load_text(&c, "", &path), -EINVAL);
	assert_has(errbuf, path);
	assert_has(errbuf, "empty configuration file");
	config_free(&c);
	cr_assert_eq(load_text(&c, "# only\n; comments\n\n   \n", &path), -EINVAL);
	assert_has(errbuf, "empty configuration file");
	config_free(&c);
}

/* "/" then 'a' to @len bytes in all (malloc'd): a path longer than inih's 200-byte line. */
static char *long_path(size_t len)
{
	char *p = malloc(len + 1);

	cr_assert_not_null(p);
	memset(p, 'a', len);
	p[0] = '/';
	p[len] = '\0';
	return p;
}

Test(config, long_lines_hold_a_path)
{
	struct sfs_config c;
	char *backing = long_path(3000), *log = long_path(PATH_MAX - 1), *text, *want, *ini;

	/* key = value, key : value, an inline comment, blanks around. */
	cr_assert_gt(asprintf(&text,
			      "[log]\n"
			      "  path =   %s   ; the longest path: PATH_MAX - 1 bytes\n"
			      "[device \"wal\"]\n"
			      "backing:%s\n"
			      "[layout]\n"
			      "extent_size = 64K\n",
			      log, backing),
		     0);
	load_ok(&c, text);
	cr_assert_eq(strlen(c.log.path), PATH_MAX - 1);
	cr_assert_str_eq(c.log.path, log);
	cr_assert_eq(strlen(c.devices[0].backing), 3000);
	cr_assert_str_eq(c.devices[0].backing, backing);
	cr_assert_eq(c.defaults.layout.extent_size, 64 * KiB);
	/* .scatterfs/config writes them whole. */
	ini = config_write_ini(&c);
	cr_assert_not_null(ini);
	cr_assert_gt(asprintf(&want, "\npath = %s\n", log), 0);
	assert_has(ini, want);
	free(want);
	cr_assert_gt(asprintf(&want, "\nbacking = %s\n", backing), 0);
	assert_has(ini, want);
	free(want);
	free(ini);
	config_free(&c);
	/* A relative backing: the long path is taken beside the file. */
	free(text);
	cr_assert_gt(asprintf(&text, "[device \"wal\"]\nbacking = %s\n", backing + 1), 0);
	load_ok(&c, text);
	cr_assert_gt(asprintf(&want, "%s/%s", tmpdir, backing + 1), 0);
	cr_assert_str_eq(c.devices[0].backing, want);
	config_free(&c);
	free(want);
	free(text);
	free(log);
	free(backing);
}

Test(config, error_long_line)
{
	struct sfs_config c;
	const char *path;
	char *text, *p = long_path(CONFIG_LINE_MAX - 6), want[512];

	/* "path = " and the path: CONFIG_LINE_MAX + 1 characters. */
	cr_assert_gt(asprintf(&text, "[log]\npath = %s\n", p), 0);
	cr_assert_eq(strlen(text), 6 + CONFIG_LINE_MAX + 1 + 1);
	cr_assert_eq(load_text(&c, text, &path), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: line too long (4353 characters; at most 4352)", path);
	cr_assert_str_eq(errbuf, want);
	config_free(&c);
	/* One character less fits (and the value is a path too long to open, later). */
	free(text);
	cr_assert_gt(asprintf(&text, "[log]\npath = %s\n", p + 1), 0);
	load_ok(&c, text);
	cr_assert_eq(strlen(c.log.path), CONFIG_LINE_MAX - 7);
	config_free(&c);
	free(text);
	free(p);
}

Test(config, error_unreadable_file)
{
	struct sfs_config c;
	char path[128];

	snprintf(path, sizeof(path), "%s/missing.ini", tmpdir);
	config_init(&c);
	cr_assert_eq(config_load_file(&c, path, errbuf, sizeof(errbuf)), -ENOENT);
	assert_has(errbuf, path);
	config_free(&c);
	config_init(&c);
	cr_assert_eq(config_load_file(&c, tmpdir, errbuf, sizeof(errbuf)), -EISDIR);
	assert_has(errbuf, tmpdir);
	config_free(&c);
}

/* ---- overrides ---- */

Test(config, overrides)
{
	struct sfs_config c;

	config_init(&c);
	cr_assert_eq(config_set(&c, "layout.gap=70K", errbuf, sizeof(errbuf)), 0, "%s", errbuf);
	cr_assert_eq(c.defaults.layout.gap, 70 * KiB);
	cr_assert_eq(config_set(&c, "layout.pattern=interleaved", errbuf, sizeof(errbuf)), 0);
	cr_assert_eq(config_set(&c, "device.block_size=2K", errbuf, sizeof(errbuf)), 0);
	cr_assert_eq(c.device.block_size, 2048);
	cr_assert_eq(config_set(&c, "log.ops=read:write:punch", errbuf, sizeof(errbuf)), 0, "%s",
		     errbuf);
	cr_assert_eq(c.log.ops, LOG_READ | LOG_WRITE | LOG_PUNCH);
	cr_assert_eq(config_set(&c, "disk.model=hdd", errbuf, sizeof(errbuf)), 0, "%s", errbuf);
	cr_assert_eq(config_set(&c, "disk.transfer_mib_s=180:90", errbuf, sizeof(errbuf)), 0, "%s",
		     errbuf);
	cr_assert_eq(HDD(&c.disk)->transfer_outer_mib_s, 180);
	cr_assert_eq(HDD(&c.disk)->transfer_inner_mib_s, 90);
	cr_assert_eq(config_set(&c, "log.path=/tmp/a.csv", errbuf, sizeof(errbuf)), 0);
	cr_assert_eq(config_set(&c, "log.path=/tmp/b.csv", errbuf, sizeof(errbuf)), 0);
	cr_assert_str_eq(c.log.path, "/tmp/b.csv");
	/* A later override of the same key wins. */
	cr_assert_eq(config_set(&c, "layout.gap=140K", errbuf, sizeof(errbuf)), 0);
	cr_assert_eq(c.defaults.layout.gap, 140 * KiB);
	finish_ok(&c, 0);
	config_free(&c);
}

Test(config, override_errors)
{
	struct sfs_config c;

	config_init(&c);
	cr_assert_eq(config_set(&c, "layout.gap=70Q", errbuf, sizeof(errbuf)), -EINVAL);
	cr_assert_str_eq(errbuf, "option -o layout.gap=70Q: [layout] gap = 70Q: not a size (use "
				 "bytes or a K/M/G/T suffix)");
	cr_assert_eq(config_set(&c, "layout.gapp=1", errbuf, sizeof(errbuf)), -EINVAL);
	assert_has(errbuf, "option -o layout.gapp=1");
	assert_has(errbuf, "unknown key 'gapp'");
	cr_assert_eq(config_set(&c, "bogus.x=1", errbuf, sizeof(errbuf)), -EINVAL);
	assert_has(errbuf, "unknown section 'bogus'");
	cr_assert_eq(config_set(&c, "gap=1", errbuf, sizeof(errbuf)), -EINVAL);
	assert_has(errbuf, "SECTION.KEY=VALUE");
	cr_assert_eq(config_set(&c, "layout.gap", errbuf, sizeof(errbuf)), -EINVAL);
	cr_assert_eq(config_set(&c, "file.mode=kernel", errbuf, sizeof(errbuf)), -EINVAL);
	assert_has(errbuf, "[file \"GLOB\"]");
	cr_assert_eq(config_set(&c, "log.ops=read,write", errbuf, sizeof(errbuf)), -EINVAL);
	assert_has(errbuf, "':'");
	cr_assert_eq(config_set(&c, "layout.pattern=spiral", errbuf, sizeof(errbuf)), -EINVAL);
	assert_has(errbuf, "allowed: contiguous");
	cr_assert_eq(config_set(&c, "log.path=a\nb", errbuf, sizeof(errbuf)), -EINVAL);
	assert_one_line(errbuf);
	cr_assert_null(c.log.path);
	cr_assert_eq(config_set(&c, "layout.gap=1\n2", errbuf, sizeof(errbuf)), -EINVAL);
	assert_one_line(errbuf);
	/* Nothing bad was applied. */
	cr_assert_eq(c.defaults.layout.gap, 0);
	cr_assert_eq(c.defaults.layout.pattern, PATTERN_CONTIGUOUS);
	cr_assert_eq(c.log.ops, LOG_READ | LOG_EXTEND);
	config_free(&c);
}

/* ---- rules ---- */

Test(config, rules_match_and_inherit)
{
	struct sfs_config c;
	const struct file_params *fp;

	load_ok(&c, "[layout]\n"
		    "extent_size = 64K\n"
		    "[file \"*pg_wal/*\"]\n"
		    "pattern = contiguous\n"
		    "extent_size = 16M\n"
		    "[file \"*base/*\"]\n"
		    "pattern = random\n"
		    "gap_max = 64M\n"
		    "layout.seed = 7\n"
		    "[file \"*\"]\n"
		    "cache.mode = kernel\n"
		    "[autoextend]\n"
		    "next = 128K\n");
	cr_assert_eq(c.nrules, 3);
	cr_assert_str_eq(c.rules[1].glob, "*base/*");
	cr_assert_eq(c.rules[1].line, 6);
	/* The override comes after the file: rules still inherit it. */
	cr_assert_eq(config_set(&c, "layout.extent_size=256K", errbuf, sizeof(errbuf)), 0);
	cr_assert_eq(config_set(&c, "cache.readahead=512K", errbuf, sizeof(errbuf)), 0);
	finish_ok(&c, 0);
	cr_assert_eq(c.nrules, 4);
	cr_assert_str_eq(c.rules[3].glob, "*-shm");
	cr_assert_eq(c.rules[3].line, 0);

	fp = config_for_path(&c, "pgdata/pg_wal/000000010000000000000001");
	cr_assert_eq(fp, &c.rules[0].params);
	cr_assert_eq(fp->layout.pattern, PATTERN_CONTIGUOUS);
	cr_assert_eq(fp->layout.extent_size, 16 * MiB);
	cr_assert_eq(fp->autoextend.next, 128 * KiB); /* from [autoextend], declared later */
	cr_assert_eq(fp->cache.readahead, 512 * KiB);

	fp = config_for_path(&c, "pgdata/base/16384/1259");
	cr_assert_eq(fp, &c.rules[1].params);
	cr_assert_eq(fp->layout.pattern, PATTERN_RANDOM);
	cr_assert_eq(fp->layout.extent_size, 256 * KiB);
	cr_assert_eq(fp->layout.gap_max, 64 * MiB);
	cr_assert_eq(fp->layout.seed, 7);
	cr_assert_eq(fp->layout.contiguous_ratio, 0.5);
	cr_assert_eq(fp->cache.mode, CACHE_NONE);

	/* "*" matches everything else, so the -shm rule is never reached. */
	fp = config_for_path(&c, "db.sqlite-shm");
	cr_assert_eq(fp, &c.rules[2].params);
	cr_assert_eq(fp->cache.mode, CACHE_KERNEL);
	cr_assert_eq(fp->layout.pattern, PATTERN_CONTIGUOUS);
	cr_assert_eq(fp->layout.extent_size, 256 * KiB);
	config_free(&c);
}

Test(config, rule_setting_only_pattern_inherits_override)
{
	struct sfs_config c;
	const struct file_params *fp;

	load_ok(&c, "[layout]\nextent_size = 64K\n[file \"*.dbf\"]\npattern = reverse\n");
	cr_assert_eq(config_set(&c, "layout.extent_size=2M", errbuf, sizeof(errbuf)), 0);
	cr_assert_eq(config_set(&c, "autoextend.zero_fill=none", errbuf, sizeof(errbuf)), 0);
	finish_ok(&c, 0);
	fp = config_for_path(&c, "users01.dbf");
	cr_assert_eq(fp->layout.pattern, PATTERN_REVERSE);
	cr_assert_eq(fp->layout.extent_size, 2 * MiB);
	cr_assert_eq(fp->autoextend.zero_fill, ZERO_FILL_NONE);
	/* No match: the global values. */
	fp = config_for_path(&c, "users01.log");
	cr_assert_eq(fp, &c.defaults);
	cr_assert_eq(fp->layout.pattern, PATTERN_CONTIGUOUS);
	cr_assert_eq(fp->layout.extent_size, 2 * MiB);
	/* The built-in -shm rule: kernel mode, everything else global. */
	fp = config_for_path(&c, "dir/main.db-shm");
	cr_assert_eq(fp->cache.mode, CACHE_KERNEL);
	cr_assert_eq(fp->layout.extent_size, 2 * MiB);
	cr_assert_eq(fp->autoextend.zero_fill, ZERO_FILL_NONE);
	cr_assert_eq(config_for_path(&c, "main.db-wal")->cache.mode, CACHE_NONE);
	/* finish twice: no second built-in rule. */
	finish_ok(&c, 0);
	cr_assert_eq(c.nrules, 2);
	config_free(&c);
}

Test(config, user_shm_rule_replaces_builtin)
{
	struct sfs_config c;

	load_ok(&c, "[file \"*-shm\"]\nmode = none\n");
	finish_ok(&c, 0);
	cr_assert_eq(c.nrules, 1);
	cr_assert_eq(config_for_path(&c, "a.db-shm")->cache.mode, CACHE_NONE);
	config_free(&c);
}

Test(config, rule_inherits_unused_global_keys_without_conflict)
{
	struct sfs_config c;
	const struct file_params *fp;

	/* The rule's contiguous pattern does not read the inherited gap: no conflict. */
	load_ok(&c, "[layout]\npattern = interleaved\ngap = 64K\n[file \"*wal*\"]\n"
		    "pattern = contiguous\n");
	finish_ok(&c, 0);
	fp = config_for_path(&c, "pg_wal/1");
	cr_assert_eq(fp->layout.pattern, PATTERN_CONTIGUOUS);
	cr_assert_eq(fp->layout.gap, 64 * KiB);
	config_free(&c);
}

/* ---- conflicts ---- */

Test(config, conflict_key_not_used_by_pattern)
{
	finish_fails("[layout]\npattern = contiguous\ngap = 70K\n", 0, 3, "gap");
	assert_has(errbuf, "[layout] gap = 70K");
	assert_has(errbuf, "interleaved");
	finish_fails("[layout]\ngap_max = 1M\n", 0, 2, "gap_max");
	finish_fails("[layout]\npattern = interleaved\ncontiguous_ratio = 0.5\n", 0, 3,
		     "contiguous_ratio");
	finish_fails("[layout]\nseed = 3\n", 0, 2, "seed");
	finish_fails("[layout]\npattern = reverse\ninitial_size = 1M\n", 0, 3, "initial_size");
	/* In a rule: the rule's own key against its pattern. */
	finish_fails("[file \"*.dbf\"]\npattern = contiguous\ngap = 8K\n", 0, 3, "gap");
	assert_has(errbuf, "[file \"*.dbf\"]");
	/* A 0 (not set, or auto) is never a conflict. */
	{
		struct sfs_config c;

		load_ok(&c, "[layout]\npattern = contiguous\ngap = 0\ngap_max = 0\n"
			    "initial_size = 0\n");
		finish_ok(&c, 0);
		config_free(&c);
	}
	/* An override that changes the pattern makes the file's key ignored, not an error. */
	{
		struct sfs_config c;

		load_ok(&c, "[layout]\npattern = interleaved\ngap = 70K\n");
		cr_assert_eq(config_set(&c, "layout.pattern=contiguous", errbuf, sizeof(errbuf)),
			     0);
		finish_ok(&c, 0);
		/* As if never written: the auto value. */
		cr_assert_eq(c.defaults.layout.gap, MiB);
		config_free(&c);
	}
	/* A conflicting key set by an override names the option. */
	{
		struct sfs_config c;

		config_init(&c);
		cr_assert_eq(config_set(&c, "layout.gap=8K", errbuf, sizeof(errbuf)), 0);
		cr_assert_eq(config_finish(&c, 0, errbuf, sizeof(errbuf)), -EINVAL);
		assert_has(errbuf, "option -o layout.gap=8K");
		config_free(&c);
	}
}

Test(config, conflict_required_keys)
{
	finish_fails("[layout]\npattern = single\nextent_size = 64K\n", 0, 0, "initial_size");
	finish_fails("[file \"x\"]\npattern = single\n", 0, 2, "initial_size");
	finish_fails("[device]\nblock_size = 8K\n[layout]\npattern = random\ngap_max = 4K\n", 0, 5,
		     "gap_max");
	/* gap_max and gap have usable defaults now (auto), even in a rule that inherits them. */
	{
		struct sfs_config c;

		load_ok(&c, "[layout]\npattern = random\n");
		finish_ok(&c, 0);
		cr_assert_eq(c.defaults.layout.gap_max, 64 * MiB);
		config_free(&c);
		load_ok(&c, "[layout]\npattern = interleaved\ngap = 4K\n[file \"*.dbf\"]\n"
			    "pattern = random\n");
		finish_ok(&c, 0);
		cr_assert_eq(config_for_path(&c, "a.dbf")->layout.gap_max, 64 * MiB);
		config_free(&c);
	}
}

Test(config, conflict_not_multiple_of_block_size)
{
	static const char *const texts[] = {
	    "[device]\nblock_size = 4K\n[layout]\nextent_size = 70K\n",
	    "[device]\nblock_size = 4K\n[layout]\npattern = single\ninitial_size = 6K\n",
	    "[device]\nblock_size = 4K\n[layout]\npattern = interleaved\ngap = 2K\n",
	    "[device]\nblock_size = 4K\n[layout]\npattern = random\ngap_max = 10K\n",
	    "[device]\nblock_size = 4K\n[autoextend]\nnext = 6K\n",
	    "[device]\nblock_size = 4K\n[autoextend]\nmax_size = 1030K\n",
	    "[device]\nblock_size = 8K\n[cache]\nreadahead = 12K\n",
	    "[device]\nblock_size = 4K\n[file \"a\"]\nextent_size = 6K\n",
	};
	static const char *const key[] = {"extent_size", "initial_size", "gap",
					  "gap_max",	 "next",	 "max_size",
					  "readahead",	 "extent_size"};
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		finish_fails(texts[i], 0, 0, key[i]);
		assert_has(errbuf, "block_size");
	}
	finish_fails("[device]\nblock_size = 4K\n[autoextend]\nnext = 6K\n", 0, 4,
		     "[autoextend] next");
	finish_fails("[device]\nblock_size = 8K\n[cache]\nreadahead = 12K\n", 0, 4,
		     "[cache] readahead");
	/* A default that does not fit the block size names the block size's line. */
	finish_fails("[device]\nblock_size = 256K\n", 0, 2, "readahead = 128K (default)");
}

Test(config, conflict_larger_than_device)
{
	finish_fails("[layout]\npattern = interleaved\ngap = 2G\n", GiB, 3, "gap");
	assert_has(errbuf, "larger than the device (1G)");
	finish_fails("[layout]\npattern = random\ngap_max = 2G\n", GiB, 3, "gap_max");
	finish_fails("[device]\nsize = 1G\n[layout]\npattern = single\ninitial_size = 2G\n", 0, 5,
		     "initial_size");
	/* device.size, when set, is the device. */
	finish_fails("[device]\nsize = 1G\n[layout]\npattern = single\ninitial_size = 2G\n",
		     4 * GiB, 5, "initial_size");
	/* Unknown device size: no check. */
	{
		struct sfs_config c;

		load_ok(&c, "[layout]\npattern = interleaved\ngap = 2G\n");
		finish_ok(&c, 0);
		config_free(&c);
		/* interleaved reserves extent and gap together: 1M + 1023M fits 1G. */
		load_ok(&c, "[layout]\npattern = interleaved\ngap = 1023M\n");
		finish_ok(&c, GiB);
		config_free(&c);
	}
	finish_fails("[layout]\npattern = interleaved\ngap = 1G\n", GiB, 3, "gap = 1G");
	/* extent_size auto (the default): its first extent, 64K. */
	assert_has(errbuf, "extent_size + gap (1048640K) within the device (1G)");
	finish_fails("[layout]\npattern = interleaved\nextent_size = 1M\ngap = 1G\n", GiB, 4,
		     "gap = 1G");
	assert_has(errbuf, "extent_size + gap (1025M) within the device (1G)");
}

Test(config, conflict_max_size_below_one_extent)
{
	finish_fails("[layout]\nextent_size = 1M\n[autoextend]\nmax_size = 512K\n", 0, 4,
		     "max_size");
	assert_has(errbuf, "smaller than one extent (1M)");
	finish_fails("[layout]\npattern = single\ninitial_size = 8M\n[autoextend]\nmax_size = 4M\n",
		     0, 5, "max_size");
	{
		struct sfs_config c;

		load_ok(&c, "[layout]\nextent_size = 1M\n[autoextend]\nmax_size = 1M\n");
		finish_ok(&c, 0);
		config_free(&c);
	}
}

Test(config, conflict_seek_order)
{
	finish_fails("[disk]\nmodel = hdd\nseek_track_ms = 9\n", 0, 3, "seek_track_ms");
	finish_fails("[disk]\nmodel = hdd\nseek_full_ms = 5\n", 0, 3, "seek_full_ms");
	finish_fails("[disk]\nmodel = hdd\nseek_avg_ms = 20\n", 0, 3, "seek_avg_ms");
}

/* ---- config_write_ini ---- */

static void assert_same_params(const struct file_params *a, const struct file_params *b)
{
	cr_assert_eq(a->layout.pattern, b->layout.pattern);
	cr_assert_eq(a->layout.extent_size, b->layout.extent_size);
	cr_assert_eq(a->layout.initial_size, b->layout.initial_size);
	cr_assert_eq(a->layout.gap, b->layout.gap);
	cr_assert_eq(a->layout.gap_max, b->layout.gap_max);
	cr_assert_eq(a->layout.contiguous_ratio, b->layout.contiguous_ratio);
	cr_assert_eq(a->layout.seed, b->layout.seed);
	cr_assert_eq(a->autoextend.next, b->autoextend.next);
	cr_assert_eq(a->autoextend.max_size, b->autoextend.max_size);
	cr_assert_eq(a->autoextend.zero_fill, b->autoextend.zero_fill);
	cr_assert_eq(a->cache.mode, b->cache.mode);
	cr_assert_eq(a->cache.readahead, b->cache.readahead);
}

static void assert_same_config(const struct sfs_config *a, const struct sfs_config *b)
{
	size_t i;

	/* config_write_ini() writes the effective size where it is known. */
	cr_assert_eq(a->device.effective_size, b->device.effective_size);
	if (!a->device.effective_size)
		cr_assert_eq(a->device.size, b->device.size);
	cr_assert_eq(a->device.block_size, b->device.block_size);
	cr_assert_eq(a->device.direct, b->device.direct);
	cr_assert_eq(a->device.poll_us, b->device.poll_us);
	cr_assert_eq(a->device.async_reads, b->device.async_reads);
	assert_same_params(&a->defaults, &b->defaults);
	cr_assert_eq(a->cache_writeback, b->cache_writeback);
	cr_assert_eq(!a->log.path, !b->log.path);
	if (a->log.path)
		cr_assert_str_eq(a->log.path, b->log.path);
	cr_assert_eq(a->log.ops, b->log.ops);
	cr_assert_eq(a->disk.model, b->disk.model);
	cr_assert_eq(HDD(&a->disk)->rpm, HDD(&b->disk)->rpm);
	cr_assert_eq(HDD(&a->disk)->seek_track_ms, HDD(&b->disk)->seek_track_ms);
	cr_assert_eq(HDD(&a->disk)->seek_avg_ms, HDD(&b->disk)->seek_avg_ms);
	cr_assert_eq(HDD(&a->disk)->seek_full_ms, HDD(&b->disk)->seek_full_ms);
	cr_assert_eq(HDD(&a->disk)->transfer_outer_mib_s, HDD(&b->disk)->transfer_outer_mib_s);
	cr_assert_eq(HDD(&a->disk)->transfer_inner_mib_s, HDD(&b->disk)->transfer_inner_mib_s);
	cr_assert_eq(a->disk.capacity, b->disk.capacity);
	cr_assert_eq(HDD(&a->disk)->rotation, HDD(&b->disk)->rotation);
	cr_assert_eq(a->nrules, b->nrules);
	for (i = 0; i < a->nrules; i++) {
		cr_assert_str_eq(a->rules[i].glob, b->rules[i].glob);
		assert_same_params(&a->rules[i].params, &b->rules[i].params);
	}
}

/*
 * @text from its first section on, without the comment lines that say
 * where a value came from (a reloaded file names itself).  Malloc'd.
 */
static char *without_origins(const char *text)
{
	const char *p = strstr(text, "\n[device]");
	char *out = malloc(strlen(text) + 1), *o = out;

	cr_assert_not_null(p);
	cr_assert_not_null(out);
	for (p++; *p;) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) + 1 : strlen(p);

		if (strncmp(p, "# set at ", 9) && strncmp(p, "# set by -o ", 12) &&
		    strncmp(p, "# the backing's size\n", 21)) {
			memcpy(o, p, n);
			o += n;
		}
		p += n;
	}
	*o = '\0';
	return out;
}

/* Writes @a, loads it back and finishes it, checks every value and the text are the same. */
static void round_trip(struct sfs_config *a)
{
	struct sfs_config b;
	char *text = config_write_ini(a), *again, *plain, *plain_again;
	const char *path;
	int rc;

	cr_assert_not_null(text);
	path = write_ini("round.ini", text);
	config_init(&b);
	rc = config_load_file(&b, path, errbuf, sizeof(errbuf));
	cr_assert_eq(rc, 0, "reload failed: %s\n%s", errbuf, text);
	finish_ok(&b, 0);
	assert_same_config(a, &b);
	again = config_write_ini(&b);
	cr_assert_not_null(again);
	/* Equal but for the comments that name the files. */
	plain = without_origins(text);
	plain_again = without_origins(again);
	cr_assert_str_eq(plain, plain_again);
	free(plain);
	free(plain_again);
	free(text);
	free(again);
	config_free(&b);
}

Test(config, write_ini_round_trip)
{
	struct sfs_config c;
	char *text;

	load_ok(&c, "[device]\nsize = 3G\nblock_size = 2K\ndirect = true\npoll_us = 0\n"
		    "async_reads = always\n"
		    "[layout]\npattern = random\nextent_size = 70K\ngap_max = 13270K\n"
		    "contiguous_ratio = 0.1\nseed = 18446744073709551615\n"
		    "[autoextend]\nnext = 140K\nmax_size = 2G\nzero_fill = fallocate\n"
		    "[cache]\nmode = kernel\nreadahead = 64K\nwriteback = false\n"
		    "[log]\npath = /tmp/req log.csv\nops = write,punch\n"
		    "[disk]\nmodel = hdd\nrpm = 5400\nseek_track_ms = 0.3\nseek_avg_ms = 8.9\n"
		    "seek_full_ms = 17.25\ntransfer_mib_s = 200,90.5\ncapacity = 8G\n"
		    "rotation = average\n"
		    "[file \"*pg_wal/*\"]\npattern = contiguous\nextent_size = 16M\n"
		    "[file \"*single*\"]\npattern = single\ninitial_size = 8M\n"
		    "[file \"*[ab]*.dbf\"]\npattern = interleaved\ngap = 70K\nmode = none\n"
		    "[file \"*auto*\"]\nextent_size = auto\n");
	cr_assert_eq(config_set(&c, "layout.seed=42", errbuf, sizeof(errbuf)), 0);
	finish_ok(&c, 0);
	cr_assert_eq(c.nrules, 5);
	text = config_write_ini(&c);
	cr_assert_not_null(text);
	assert_has(text, "[file \"*[ab]*.dbf\"]\n");
	assert_has(text, "seed = 42\n");
	assert_has(text, "contiguous_ratio = 0.1\n");
	assert_has(text, "transfer_mib_s = 200,90.5\n");
	assert_has(text, "extent_size = auto\n");
	assert_has(text, "async_reads = always\n");
	/* cache.writeback is mount-wide: in [cache], in no rule's section. */
	cr_assert_not_null(strstr(text, "writeback = false\n"));
	cr_assert_null(strstr(strstr(text, "[file "), "writeback"));
	/* The built-in rule is a commented-out section, not a section. */
	assert_has(text, "# [file \"*-shm\"]\n# cache.mode = kernel\n");
	cr_assert_null(strstr(text, "\n[file \"*-shm\"]"));
	free(text);
	round_trip(&c);
	config_free(&c);

	/* The defaults alone. */
	config_init(&c);
	finish_ok(&c, 0);
	round_trip(&c);
	config_free(&c);
}

/* ---- shipped configurations ---- */

static void load_conf(struct sfs_config *c, const char *name)
{
	char path[256];
	int rc;

	snprintf(path, sizeof(path), "conf/%s", name);
	config_init(c);
	rc = config_load_file(c, path, errbuf, sizeof(errbuf));
	cr_assert_eq(rc, 0, "%s: %s", path, errbuf);
	rc = config_finish(c, 0, errbuf, sizeof(errbuf));
	cr_assert_eq(rc, 0, "%s: %s", path, errbuf);
}

Test(config, every_conf_file_loads)
{
	DIR *d = opendir("conf");
	struct dirent *e;
	unsigned n = 0;

	cr_assert_not_null(d, "run from the project root (conf/ not found)");
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		struct sfs_config c;

		if (len < 5 || strcmp(e->d_name + len - 4, ".ini") != 0)
			continue;
		load_conf(&c, e->d_name);
		round_trip(&c);
		config_free(&c);
		n++;
	}
	closedir(d);
	cr_assert_geq(n, 6);
}

Test(config, seed_confs)
{
	struct sfs_config c;
	const struct file_params *fp;

	load_conf(&c, "equi-fragmented.ini");
	cr_assert_eq(c.device.block_size, 2048);
	cr_assert_eq(c.defaults.layout.pattern, PATTERN_INTERLEAVED);
	cr_assert_eq(c.defaults.layout.extent_size, 70 * KiB);
	cr_assert_eq(c.defaults.layout.gap, 70 * KiB);
	cr_assert_eq(c.defaults.autoextend.next, 70 * KiB);
	config_free(&c);

	load_conf(&c, "random-fragmented.ini");
	cr_assert_eq(c.device.block_size, 2048);
	cr_assert_eq(c.defaults.layout.pattern, PATTERN_RANDOM);
	cr_assert_eq(c.defaults.layout.extent_size, 70 * KiB);
	cr_assert_eq(c.defaults.layout.gap_max, 6635 * 2 * KiB);
	cr_assert_eq(c.defaults.layout.contiguous_ratio, 0.5);
	cr_assert_eq(c.defaults.layout.seed, 1);
	cr_assert_eq(c.defaults.autoextend.next, 70 * KiB);
	config_free(&c);

	load_conf(&c, "contiguous.ini");
	cr_assert_eq(c.device.block_size, 2048);
	cr_assert_eq(c.defaults.layout.pattern, PATTERN_CONTIGUOUS);
	cr_assert_eq(c.defaults.layout.extent_size, 70 * KiB);
	cr_assert_eq(c.defaults.autoextend.next, 70 * KiB);
	config_free(&c);

	load_conf(&c, "single-extent.ini");
	cr_assert_eq(c.device.block_size, 2048);
	cr_assert_eq(c.defaults.layout.pattern, PATTERN_SINGLE);
	cr_assert_eq(c.defaults.layout.initial_size, 512 * MiB);
	cr_assert_eq(c.defaults.layout.extent_size, 70 * KiB);
	cr_assert_eq(c.defaults.autoextend.next, 70 * KiB);
	config_free(&c);

	load_conf(&c, "default.ini");
	{
		struct sfs_config d;

		config_init(&d);
		finish_ok(&d, 0);
		assert_same_config(&c, &d);
		config_free(&d);
	}
	config_free(&c);

	load_conf(&c, "postgres.ini");
	cr_assert_eq(c.device.block_size % 4096, 0);
	fp = config_for_path(&c, "pgdata/pg_wal/000000010000000000000001");
	cr_assert_eq(fp->layout.pattern, PATTERN_CONTIGUOUS);
	fp = config_for_path(&c, "pgdata/base/16384/1259");
	cr_assert_eq(fp->layout.pattern, PATTERN_RANDOM);
	cr_assert_geq(fp->layout.gap_max, c.device.block_size);
	config_free(&c);
}

/* ---- user reports: defaults that work, pattern switches, the device size ---- */

/* config_init() + the -o overrides in @opts (NULL-terminated), each must be accepted. */
static void set_all(struct sfs_config *c, const char *const *opts)
{
	for (; *opts; opts++)
		cr_assert_eq(config_set(c, *opts, errbuf, sizeof(errbuf)), 0, "%s: %s", *opts,
			     errbuf);
}

Test(config, random_alone_gets_auto_gap_max)
{
	struct sfs_config c;
	const struct file_params *fp;

	/* -o layout.pattern=random alone: gap_max auto = 64 x extent_size (1M). */
	config_init(&c);
	set_all(&c, (const char *const[]){"layout.pattern=random", NULL});
	finish_ok(&c, 0);
	cr_assert_eq(c.defaults.layout.gap_max, 64 * MiB);
	/* finish twice: still resolved from auto, not from the first result. */
	cr_assert_eq(config_set(&c, "layout.extent_size=64K", errbuf, sizeof(errbuf)), 0);
	finish_ok(&c, 0);
	cr_assert_eq(c.defaults.layout.gap_max, 4 * MiB);
	config_free(&c);

	/* extent_size auto counts as 1M: 64M; a known device clamps it (whole blocks). */
	config_init(&c);
	set_all(&c,
		(const char *const[]){"layout.pattern=random", "layout.extent_size=auto", NULL});
	finish_ok(&c, 0);
	cr_assert_eq(c.defaults.layout.gap_max, 64 * MiB);
	finish_ok(&c, 10 * MiB + 1000);
	cr_assert_eq(c.defaults.layout.gap_max, 10 * MiB);
	config_free(&c);

	/* 0 written in the file is auto too, and each rule resolves with its own extent_size. */
	load_ok(&c, "[layout]\npattern = random\nextent_size = 16K\ngap_max = 0\n"
		    "[file \"*.dbf\"]\nextent_size = 128K\n"
		    "[file \"*.idx\"]\ngap_max = 3M\n"
		    "[file \"*.log\"]\npattern = contiguous\n");
	finish_ok(&c, 0);
	cr_assert_eq(c.defaults.layout.gap_max, 1 * MiB);
	fp = config_for_path(&c, "a.dbf");
	cr_assert_eq(fp->layout.pattern, PATTERN_RANDOM);
	cr_assert_eq(fp->layout.gap_max, 8 * MiB);
	cr_assert_eq(config_for_path(&c, "a.idx")->layout.gap_max, 3 * MiB);
	config_free(&c);

	/* An explicit global gap_max is inherited as written. */
	load_ok(&c, "[layout]\npattern = random\ngap_max = 5M\n[file \"*.dbf\"]\n"
		    "extent_size = 128K\n");
	finish_ok(&c, 0);
	cr_assert_eq(config_for_path(&c, "a.dbf")->layout.gap_max, 5 * MiB);
	config_free(&c);

	/* Still refused: an explicit gap_max below the block size. */
	finish_fails("[device]\nblock_size = 8K\n[layout]\npattern = random\ngap_max = 4K\n", 0, 5,
		     "gap_max");
}

Test(config, interleaved_gap_auto_is_extent_size)
{
	struct sfs_config c;

	config_init(&c);
	set_all(&c, (const char *const[]){"layout.pattern=interleaved", NULL});
	finish_ok(&c, 0);
	cr_assert_eq(c.defaults.layout.gap, MiB);
	config_free(&c);

	load_ok(&c, "[device]\nblock_size = 2K\n[layout]\npattern = interleaved\n"
		    "extent_size = 70K\ngap = 0\n");
	finish_ok(&c, 0);
	cr_assert_eq(c.defaults.layout.gap, 70 * KiB);
	config_free(&c);

	/* extent_size auto: 1M. */
	load_ok(&c, "[layout]\npattern = interleaved\nextent_size = auto\n");
	finish_ok(&c, 0);
	cr_assert_eq(c.defaults.layout.gap, MiB);
	config_free(&c);

	/* Extent and gap must fit the device together. */
	finish_fails("[layout]\npattern = interleaved\nextent_size = 1M\n", 1536 * KiB, 0, "gap");
	assert_has(errbuf, "gap = 1M (auto)");
	assert_has(errbuf, "1536K");
}

Test(config, pattern_override_over_shipped_file)
{
	struct sfs_config c;
	char *text;

	/* The user's command line: the file's gap is ignored, not an error. */
	config_init(&c);
	cr_assert_eq(config_load_file(&c, "conf/equi-fragmented.ini", errbuf, sizeof(errbuf)), 0,
		     "%s", errbuf);
	set_all(&c, (const char *const[]){"layout.pattern=contiguous", NULL});
	finish_ok(&c, 0);
	cr_assert_eq(c.defaults.layout.pattern, PATTERN_CONTIGUOUS);
	cr_assert_eq(c.defaults.layout.extent_size, 70 * KiB);
	text = config_write_ini(&c);
	cr_assert_not_null(text);
	/* Not a key any more; named in a comment with where it came from. */
	cr_assert_null(strstr(text, "\ngap = "), "%s", text);
	assert_has(text, "# ignored: conf/equi-fragmented.ini:");
	assert_has(text, "[layout] gap = 70K");
	assert_has(text, "option -o layout.pattern=contiguous");
	free(text);
	round_trip(&c);
	config_free(&c);

	/* Clearing the key with 0 alongside is accepted too. */
	config_init(&c);
	cr_assert_eq(config_load_file(&c, "conf/equi-fragmented.ini", errbuf, sizeof(errbuf)), 0);
	set_all(&c, (const char *const[]){"layout.pattern=contiguous", "layout.gap=0", NULL});
	finish_ok(&c, 0);
	config_free(&c);

	/* To random: the file's gap goes, gap_max is auto (64 x 70K). */
	config_init(&c);
	cr_assert_eq(config_load_file(&c, "conf/equi-fragmented.ini", errbuf, sizeof(errbuf)), 0);
	set_all(&c, (const char *const[]){"layout.pattern=random", NULL});
	finish_ok(&c, 0);
	cr_assert_eq(c.defaults.layout.gap_max, 64 * 70 * KiB);
	config_free(&c);

	/* A rule's key, with the rule's pattern inherited from an -o override: ignored too. */
	load_ok(&c, "[layout]\npattern = interleaved\ngap = 64K\n[file \"*.dbf\"]\ngap = 128K\n");
	set_all(&c, (const char *const[]){"layout.pattern=reverse", NULL});
	finish_ok(&c, 0);
	cr_assert_eq(config_for_path(&c, "a.dbf")->layout.pattern, PATTERN_REVERSE);
	config_free(&c);
}

Test(config, pattern_conflict_in_the_same_place_stays)
{
	struct sfs_config c;

	/* Both -o overrides. */
	config_init(&c);
	set_all(&c, (const char *const[]){"layout.pattern=contiguous", "layout.gap=8K", NULL});
	cr_assert_eq(config_finish(&c, 0, errbuf, sizeof(errbuf)), -EINVAL);
	assert_one_line(errbuf);
	assert_has(errbuf, "option -o layout.gap=8K: [layout] gap = 8K: pattern contiguous");
	config_free(&c);

	/* The same file section, written in either order. */
	finish_fails("[layout]\ngap = 70K\npattern = contiguous\n", 0, 2, "gap");
	/* A key on the command line over the file's pattern: refused (the user asked for it). */
	config_init(&c);
	cr_assert_eq(config_load_file(&c, "conf/equi-fragmented.ini", errbuf, sizeof(errbuf)), 0);
	set_all(&c, (const char *const[]){"layout.seed=5", NULL});
	cr_assert_eq(config_finish(&c, 0, errbuf, sizeof(errbuf)), -EINVAL);
	assert_has(errbuf, "option -o layout.seed=5:");
	assert_has(errbuf, "pattern interleaved");
	config_free(&c);
}

Test(config, larger_than_the_device)
{
	struct sfs_config c;

	/* -o size=32K with the default extent_size auto (its first extent 64K). */
	config_init(&c);
	set_all(&c, (const char *const[]){"device.size=32K", NULL});
	cr_assert_eq(config_finish(&c, 32 * KiB, errbuf, sizeof(errbuf)), -EINVAL);
	cr_assert_str_eq(errbuf, "option -o device.size=32K: [layout] extent_size = auto (default): "
				 "its first extent (64K) is larger than the device (32K)");
	config_free(&c);

	finish_fails("[layout]\nextent_size = 8M\n", 4 * MiB, 2, "extent_size = 8M");
	assert_has(errbuf, "larger than the device (4M)");
	/* auto: the first extent is 64K. */
	finish_fails("[layout]\nextent_size = auto\n", 32 * KiB, 2, "extent_size = auto");
	load_ok(&c, "[layout]\nextent_size = auto\n");
	finish_ok(&c, 64 * KiB);
	config_free(&c);
	/* In a rule. */
	finish_fails("[layout]\nextent_size = 64K\n[file \"*pg_wal/*\"]\nextent_size = 16M\n",
		     8 * MiB, 4, "[file \"*pg_wal/*\"] extent_size = 16M");
	finish_fails("[layout]\nextent_size = 64K\n[autoextend]\nnext = 2M\n", MiB, 4, "next = 2M");
	finish_fails("[layout]\nextent_size = 64K\n[file \"x\"]\nnext = 2M\n", MiB, 4,
		     "[file \"x\"] next = 2M");
	finish_fails("[layout]\npattern = single\ninitial_size = 2M\nextent_size = 64K\n", MiB, 3,
		     "initial_size = 2M");
	/* Exactly the device fits. */
	load_ok(&c, "[layout]\nextent_size = 1M\n[autoextend]\nnext = 1M\n");
	finish_ok(&c, MiB);
	config_free(&c);
}

Test(config, effective_size_recorded_and_written)
{
	struct sfs_config c;
	char *text;

	config_init(&c);
	finish_ok(&c, 100 * MiB);
	cr_assert_eq(c.device.size, 0);
	cr_assert_eq(c.device.effective_size, 100 * MiB);
	text = config_write_ini(&c);
	cr_assert_not_null(text);
	assert_has(text, "\n[device]\n# the backing's size\nsize = 100M\n");
	free(text);
	round_trip(&c);
	config_free(&c);

	/* device.size, when set, is the device. */
	load_ok(&c, "[device]\nsize = 1G\n");
	finish_ok(&c, 4 * GiB);
	cr_assert_eq(c.device.effective_size, GiB);
	config_free(&c);

	/* Not known yet: 0. */
	config_init(&c);
	finish_ok(&c, 0);
	cr_assert_eq(c.device.effective_size, 0);
	config_free(&c);
}

Test(config, write_ini_builtin_rule_is_commented_ini)
{
	struct sfs_config c, d;
	char *text, *p;
	const char *path;
	int rc;

	config_init(&c);
	finish_ok(&c, 0);
	text = config_write_ini(&c);
	cr_assert_not_null(text);
	/* User-facing words, no function names. */
	cr_assert_null(strstr(text, "config_finish"), "%s", text);
	cr_assert_null(strstr(text, "()"), "%s", text);
	assert_has(text, "# Built in:");
	assert_has(text, "\n# [file \"*-shm\"]\n# cache.mode = kernel\n");
	/* Uncommented, the two lines are a valid rule that gives the same configuration. */
	p = strstr(text, "\n# [file \"*-shm\"]\n");
	memmove(p + 1, p + 3, strlen(p + 3) + 1);
	p = strstr(p, "\n# cache.mode");
	memmove(p + 1, p + 3, strlen(p + 3) + 1);
	path = write_ini("uncommented.ini", text);
	config_init(&d);
	rc = config_load_file(&d, path, errbuf, sizeof(errbuf));
	cr_assert_eq(rc, 0, "%s\n%s", errbuf, text);
	cr_assert_eq(d.nrules, 1);
	finish_ok(&d, 0);
	assert_same_config(&c, &d);
	free(text);
	config_free(&d);
	config_free(&c);
}

Test(config, conf_files_cite_only_shipped_files)
{
	DIR *d = opendir("conf");
	struct dirent *e;
	char path[300], line[512];
	unsigned n = 0;

	cr_assert_not_null(d, "run from the project root (conf/ not found)");
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		FILE *f;

		if (len < 5 || strcmp(e->d_name + len - 4, ".ini") != 0)
			continue;
		snprintf(path, sizeof(path), "conf/%s", e->d_name);
		f = fopen(path, "r");
		cr_assert_not_null(f, "%s", path);
		while (fgets(line, sizeof(line), f)) {
			cr_assert_null(strstr(line, "../shared"), "%s: %s", path, line);
			cr_assert_null(strstr(line, "seed-figures.md"), "%s: %s", path, line);
		}
		fclose(f);
		n++;
	}
	closedir(d);
	cr_assert_geq(n, 6);
}

/* ---- several files: config= in order, include = ---- */

/* Loads @path into @c (more files may follow); fails the test on an error. */
static void add_file(struct sfs_config *c, const char *path)
{
	int rc = config_load_file(c, path, errbuf, sizeof(errbuf));

	cr_assert_eq(rc, 0, "loading %s failed (%d): %s", path, rc, errbuf);
}

Test(config, two_files_later_wins_per_key_origins_shown)
{
	const char *a = write_ini("a.ini", "[layout]\n"
					   "pattern = interleaved\n"
					   "extent_size = 64K\n"
					   "gap = 128K\n"
					   "[autoextend]\n"
					   "next = 256K\n"
					   "[file \"*.db\"]\n"
					   "extent_size = 128K\n"
					   "gap = 64K\n");
	const char *b = write_ini("b.ini", "[layout]\n"
					   "extent_size = 32K\n"
					   "[disk]\n"
					   "model = hdd\n"
					   "rpm = 5400\n"
					   "[file \"x*\"]\n"
					   "pattern = contiguous\n"
					   "[file \"*.db\"]\n"
					   "gap = 256K\n");
	const struct file_params *db;
	struct sfs_config c;
	char want[600], *text;

	config_init(&c);
	add_file(&c, a);
	add_file(&c, b);
	cr_assert_eq(config_set(&c, "autoextend.zero_fill=none", errbuf, sizeof(errbuf)), 0);
	finish_ok(&c, 64 * MiB);
	/* b's keys win, a's other keys stay. */
	cr_assert_eq(c.defaults.layout.pattern, PATTERN_INTERLEAVED);
	cr_assert_eq(c.defaults.layout.extent_size, 32 * KiB);
	cr_assert_eq(c.defaults.layout.gap, 128 * KiB);
	cr_assert_eq(c.defaults.autoextend.next, 256 * KiB);
	cr_assert_eq(c.defaults.autoextend.zero_fill, ZERO_FILL_NONE);
	cr_assert_eq(c.disk.model, &hdd_model);
	cr_assert_eq(HDD(&c.disk)->rpm, 5400);
	/* One rule per glob, keys merged one by one, at its first declaration's place. */
	cr_assert_eq(c.nrules, 3);
	cr_assert_str_eq(c.rules[0].glob, "*.db");
	cr_assert_str_eq(c.rules[1].glob, "x*");
	db = config_for_path(&c, "x.db");
	cr_assert_eq(db, &c.rules[0].params);
	cr_assert_eq(db->layout.pattern, PATTERN_INTERLEAVED);
	cr_assert_eq(db->layout.extent_size, 128 * KiB);
	cr_assert_eq(db->layout.gap, 256 * KiB);
	cr_assert_eq(db->autoextend.next, 256 * KiB);
	cr_assert_eq(config_for_path(&c, "x.log")->layout.pattern, PATTERN_CONTIGUOUS);

	text = config_write_ini(&c);
	cr_assert_not_null(text);
	snprintf(want, sizeof(want), "\n# loaded from %s\n# loaded from %s\n", a, b);
	assert_has(text, want);
	snprintf(want, sizeof(want),
		 "\n[layout]\n# set at %s:2\npattern = interleaved\n# set at %s:2\n"
		 "extent_size = 32K\ndevice = main\n# initial_size = 0 (only the single pattern "
		 "reads it)\n"
		 "# set at %s:4\ngap = 128K\n",
		 a, b, a);
	assert_has(text, want);
	snprintf(want, sizeof(want),
		 "\n[autoextend]\n# set at %s:6\nnext = 256K\nmax_size = 0\n"
		 "# set by -o autoextend.zero_fill=none\nzero_fill = none\n",
		 a);
	assert_has(text, want);
	snprintf(want, sizeof(want),
		 "\n[disk]\ncapacity = 0\nmetadata_io = true\nmetadata_offset = 0\ntime_dilation = "
		 "1\n# set at "
		 "%s:4\nmodel = hdd\n# set at %s:5\nrpm = 5400\n",
		 b, b);
	assert_has(text, want);
	snprintf(
	    want, sizeof(want),
	    "\n[file \"*.db\"]\npattern = interleaved\n# set at %s:8\nextent_size = 128K\n"
	    "device = main\n# initial_size = 0 (only the single pattern reads it)\n# set at %s:9\n"
	    "gap = 256K\n",
	    a, b);
	assert_has(text, want);
	snprintf(want, sizeof(want), "\n[file \"x*\"]\n# set at %s:7\npattern = contiguous\n", b);
	assert_has(text, want);
	free(text);
	/* What it writes loads back to the same values. */
	round_trip(&c);
	config_free(&c);
}

Test(config, two_files_duplicates_judged_per_file)
{
	const char *a = write_ini("a.ini", "[file \"*.db\"]\nextent_size = 128K\n");
	const char *b = write_ini("b.ini", "[layout]\nseed = 1\n[file \"*.db\"]\ngap = 64K\n"
					   "[file \"*.db\"]\nnext = 1M\n");
	struct sfs_config c;
	char want[400];

	config_init(&c);
	add_file(&c, a);
	cr_assert_eq(config_load_file(&c, b, errbuf, sizeof(errbuf)), -EINVAL);
	snprintf(want, sizeof(want), "%s:5: duplicated section [file \"*.db\"] (first at line 3)",
		 b);
	cr_assert_str_eq(errbuf, want);
	config_free(&c);

	b = write_ini("b.ini", "[layout]\nseed = 1\nseed = 2\n");
	config_init(&c);
	add_file(&c, write_ini("a.ini", "[layout]\nseed = 3\n"));
	cr_assert_eq(config_load_file(&c, b, errbuf, sizeof(errbuf)), -EINVAL);
	snprintf(want, sizeof(want), "%s:3: [layout] duplicated key 'seed' (first at line 2)", b);
	cr_assert_str_eq(errbuf, want);
	config_free(&c);
}

/* A later file's pattern drops an earlier file's key it does not read; the reverse is an error. */
Test(config, two_files_pattern_precedence)
{
	const char *a = write_ini("a.ini", "[layout]\npattern = interleaved\ngap = 128K\n");
	const char *b = write_ini("b.ini", "[layout]\npattern = contiguous\n");
	struct sfs_config c;
	char want[400], *text;

	config_init(&c);
	add_file(&c, a);
	add_file(&c, b);
	finish_ok(&c, 0);
	cr_assert_eq(c.defaults.layout.pattern, PATTERN_CONTIGUOUS);
	text = config_write_ini(&c);
	snprintf(want, sizeof(want),
		 "# ignored: %s:3: [layout] gap = 128K (pattern contiguous, set at %s:2, does "
		 "not read it)\n",
		 a, b);
	assert_has(text, want);
	free(text);
	config_free(&c);

	config_init(&c);
	add_file(&c, b);
	add_file(&c, write_ini("g.ini", "[layout]\ngap = 128K\n"));
	cr_assert_eq(config_finish(&c, 0, errbuf, sizeof(errbuf)), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s/g.ini:2: [layout] gap = 128K: pattern contiguous (set at %s:2) does not use "
		 "gap; only interleaved does",
		 tmpdir, b);
	cr_assert_str_eq(errbuf, want);
	config_free(&c);
}

Test(config, include_relative_to_its_file_in_order)
{
	char dir[128], want[600], *text;
	const char *main_ini;
	struct sfs_config c;

	snprintf(dir, sizeof(dir), "%s/sub", tmpdir);
	cr_assert_eq(mkdir(dir, 0755), 0);
	write_ini("sub/base.ini", "[layout]\n"
				  "pattern = interleaved\n"
				  "extent_size = 64K\n"
				  "gap = 128K\n"
				  "[autoextend]\n"
				  "next = 1M\n");
	/* The test runs in the source tree: a path relative to it would not be found. */
	main_ini = write_ini("main.ini", "[autoextend]\n"
					 "next = 512K\n"
					 "include = sub/base.ini\n"
					 "zero_fill = none\n"
					 "[layout]\n"
					 "extent_size = 32K\n");
	config_init(&c);
	add_file(&c, main_ini);
	finish_ok(&c, 0);
	cr_assert_eq(c.defaults.layout.pattern, PATTERN_INTERLEAVED);
	cr_assert_eq(c.defaults.layout.gap, 128 * KiB);
	cr_assert_eq(c.defaults.autoextend.next, MiB);		       /* the include came later */
	cr_assert_eq(c.defaults.autoextend.zero_fill, ZERO_FILL_NONE); /* still [autoextend] */
	cr_assert_eq(c.defaults.layout.extent_size, 32 * KiB);	       /* after the include */
	text = config_write_ini(&c);
	snprintf(want, sizeof(want),
		 "\n# loaded from %s\n# loaded from %s/base.ini (include = at %s:3)\n", main_ini,
		 dir, main_ini);
	assert_has(text, want);
	snprintf(want, sizeof(want), "\n# set at %s/base.ini:6\nnext = 1M\n", dir);
	assert_has(text, want);
	snprintf(want, sizeof(want), "\n# set at %s:6\nextent_size = 32K\n", main_ini);
	assert_has(text, want);
	free(text);
	round_trip(&c);
	config_free(&c);

	/* A pattern after the include drops the included gap; one before it cannot. */
	config_init(&c);
	add_file(&c,
		 write_ini("main.ini", "include = sub/base.ini\n[layout]\npattern = contiguous\n"));
	finish_ok(&c, 0);
	cr_assert_eq(c.defaults.layout.pattern, PATTERN_CONTIGUOUS);
	config_free(&c);
	write_ini("sub/gap.ini", "[layout]\ngap = 128K\n");
	main_ini = write_ini("main.ini", "[layout]\npattern = contiguous\ninclude = sub/gap.ini\n");
	config_init(&c);
	add_file(&c, main_ini);
	cr_assert_eq(config_finish(&c, 0, errbuf, sizeof(errbuf)), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s/gap.ini:2: [layout] gap = 128K: pattern contiguous (set at %s:2) does not use "
		 "gap; only interleaved does",
		 dir, main_ini);
	cr_assert_str_eq(errbuf, want);
	config_free(&c);
}

Test(config, include_cycle_refused)
{
	const char *a = write_ini("a.ini", "[layout]\nseed = 1\ninclude = b.ini\n");
	const char *b = write_ini("b.ini", "include = a.ini\n");
	const char *self = write_ini("self.ini", "[layout]\ninclude = ./self.ini\n");
	struct sfs_config c;
	char want[400];

	config_init(&c);
	cr_assert_eq(config_load_file(&c, a, errbuf, sizeof(errbuf)), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:1: include = a.ini: include cycle: %s is already being read", b, a);
	cr_assert_str_eq(errbuf, want);
	config_free(&c);

	config_init(&c);
	cr_assert_eq(config_load_file(&c, self, errbuf, sizeof(errbuf)), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:2: include = ./self.ini: include cycle: %s is already being read", self, self);
	cr_assert_str_eq(errbuf, want);
	config_free(&c);

	/* The same file twice, but not inside itself, is no cycle. */
	write_ini("b2.ini", "[layout]\nseed = 5\n");
	config_init(&c);
	add_file(&c, write_ini("twice.ini", "include = b2.ini\ninclude = b2.ini\n"));
	cr_assert_eq(c.defaults.layout.seed, 5);
	config_free(&c);
}

Test(config, include_missing_or_empty_refused)
{
	const char *path;
	struct sfs_config c;
	char want[400];

	cr_assert_eq(load_text(&c, "[layout]\nseed = 1\ninclude = nosuch.ini\n", &path), -ENOENT);
	snprintf(want, sizeof(want),
		 "%s:3: include = nosuch.ini: %s/nosuch.ini: No such file or directory", path,
		 tmpdir);
	cr_assert_str_eq(errbuf, want);
	config_free(&c);

	cr_assert_eq(load_text(&c, "include =\n", &path), -EINVAL);
	snprintf(want, sizeof(want), "%s:1: include = : expected the name of a configuration file",
		 path);
	cr_assert_str_eq(errbuf, want);
	config_free(&c);
}

Test(config, decimal_size_units_refused_binary_accepted)
{
	const char *path;
	struct sfs_config c;
	char want[400];

	cr_assert_eq(load_text(&c, "[device]\nblock_size = 4K\n[autoextend]\nnext = 2MB\n", &path),
		     -EINVAL);
	snprintf(
	    want, sizeof(want),
	    "%s:4: [autoextend] next = 2MB: write 2M or 2MiB (powers of 1024); KB/MB/GB/TB are "
	    "not accepted",
	    path);
	cr_assert_str_eq(errbuf, want);
	config_free(&c);

	config_init(&c);
	cr_assert_eq(config_set(&c, "device.size=1GB", errbuf, sizeof(errbuf)), -EINVAL);
	cr_assert_str_eq(errbuf, "option -o device.size=1GB: [device] size = 1GB: write 1G or 1GiB "
				 "(powers of 1024); KB/MB/GB/TB are not accepted");
	cr_assert_eq(config_set_option(&c, "device.size=1gb", "size=1gb", errbuf, sizeof(errbuf)),
		     -EINVAL);
	cr_assert_str_eq(errbuf, "option -o size=1gb: [device] size = 1gb: write 1G or 1GiB "
				 "(powers of 1024); KB/MB/GB/TB are not accepted");
	cr_assert_eq(config_set(&c, "disk.prefetch_max=1.5MB", errbuf, sizeof(errbuf)), -EINVAL);
	cr_assert_str_eq(errbuf, "option -o disk.prefetch_max=1.5MB: [disk] prefetch_max = 1.5MB: "
				 "write 1536K or 1536KiB (powers of 1024); KB/MB/GB/TB are not "
				 "accepted");
	cr_assert_eq(c.device.size, 0);
	config_free(&c);

	load_ok(&c, "[device]\nsize = 1GiB\n[layout]\nextent_size = 64KiB\n[autoextend]\n"
		    "next = 1mib\n[disk]\nmodel = hdd\nprefetch_max = 512KIB\n");
	cr_assert_eq(config_set_option(&c, "device.size=2GiB", "size=2GiB", errbuf, sizeof(errbuf)),
		     0, "%s", errbuf);
	finish_ok(&c, 0);
	cr_assert_eq(c.device.size, 2 * GiB);
	cr_assert_eq(c.defaults.layout.extent_size, 64 * KiB);
	cr_assert_eq(c.defaults.autoextend.next, MiB);
	cr_assert_eq(HDD(&c.disk)->prefetch_max, 512 * KiB);
	config_free(&c);
}

/* ---- [device "NAME"] sections and [layout] device ---- */

Test(config, device_sections_and_rule_device)
{
	struct sfs_config c;
	char want[256];
	const char *path;
	int rc = load_text(&c,
			   "[device \"wal\"]\n"
			   "backing = wal.img\n"
			   "size = 64M\n"
			   "block_size = 8K\n"
			   "direct = true\n"
			   "model = hdd\n"
			   "rpm = 5400\n"
			   "[device \"data2\"]\n"
			   "backing = /var/tmp/d2.img\n"
			   "[file \"pg_wal/*\"]\n"
			   "device = wal\n"
			   "extent_size = 16M\n",
			   &path);

	cr_assert_eq(rc, 0, "%s", errbuf);
	finish_ok(&c, 1 * GiB);
	cr_assert_eq(c.ndevices, 2);
	cr_assert_str_eq(c.devices[0].name, "wal");
	snprintf(want, sizeof(want), "%s/wal.img", tmpdir);
	cr_assert_str_eq(c.devices[0].backing, want);
	cr_assert_eq(c.devices[0].size, 64 * MiB);
	cr_assert_eq(c.devices[0].block_size, 8 * KiB);
	cr_assert_eq(c.devices[0].direct, true);
	cr_assert_eq(c.devices[0].disk.model, &hdd_model);
	cr_assert_eq(HDD(&c.devices[0].disk)->rpm, 5400);
	cr_assert_eq(HDD(&c.devices[0].disk)->seek_avg_ms, 8.5); /* the built-in default */
	/* The second device takes the built-in values, not main's nor wal's. */
	cr_assert_str_eq(c.devices[1].backing, "/var/tmp/d2.img");
	cr_assert_eq(c.devices[1].size, 0);
	cr_assert_eq(c.devices[1].block_size, 4 * KiB);
	cr_assert_eq(c.devices[1].direct, false);
	cr_assert_null(c.devices[1].disk.model);
	cr_assert_null(c.disk.model);
	cr_assert_str_eq(config_for_path(&c, "pg_wal/000000010000000000000001")->device, "wal");
	cr_assert_str_eq(config_for_path(&c, "base/1/1259")->device, "main");
	cr_assert_eq(config_device_index(&c, "main"), 0);
	cr_assert_eq(config_device_index(&c, "wal"), 1);
	cr_assert_eq(config_device_index(&c, "data2"), 2);
	cr_assert_eq(config_device_index(&c, "nope"), -ENOENT);
	config_free(&c);
}

Test(config, device_preset_takes_the_disk_section)
{
	struct sfs_config c;

	write_ini("p.ini", "[layout]\npattern = random\n[disk]\nmodel = hdd\nrpm = 10000\n"
			   "seek_avg_ms = 4.5\n");
	load_ok(&c, "[device \"wal\"]\nbacking = w.img\npreset = p.ini\nseek_avg_ms = 5\n");
	finish_ok(&c, 1 * GiB);
	cr_assert_eq(c.devices[0].disk.model, &hdd_model);
	cr_assert_eq(HDD(&c.devices[0].disk)->rpm, 10000);
	cr_assert_eq(HDD(&c.devices[0].disk)->seek_avg_ms, 5);
	/* Only its [disk] section: main's pattern and model are untouched. */
	cr_assert_eq(c.defaults.layout.pattern, PATTERN_CONTIGUOUS);
	cr_assert_null(c.disk.model);
	config_free(&c);
}

Test(config, device_written_back_and_loaded_again)
{
	struct sfs_config c, d;
	char *text, want[512];

	load_ok(&c, "[device \"wal\"]\nbacking = /var/tmp/w.img\nblock_size = 8K\nmodel = hdd\n"
		    "[file \"pg_wal/*\"]\ndevice = wal\n");
	finish_ok(&c, 1 * GiB);
	text = config_write_ini(&c);
	cr_assert_not_null(text);
	snprintf(want, sizeof(want),
		 "\n[device \"wal\"]\n# set at %s/t.ini:2\nbacking = /var/tmp/w.img\nsize = 0\n"
		 "# set at %s/t.ini:3\nblock_size = 8K\ndirect = false\n"
		 "layers = accounting,timing,volatile,base\ncapacity = 0\n"
		 "metadata_io = true\nmetadata_offset = 0\n# set at %s/t.ini:4\nmodel = hdd\n"
		 "rpm = 7200\n",
		 tmpdir, tmpdir, tmpdir);
	assert_has(text, want);
	assert_has(text, "\n[file \"pg_wal/*\"]\npattern = contiguous\nextent_size = auto\n"
			 "# set at ");
	load_ok(&d, text);
	finish_ok(&d, 1 * GiB);
	cr_assert_eq(d.ndevices, 1);
	cr_assert_eq(d.devices[0].block_size, 8 * KiB);
	cr_assert_eq(d.devices[0].disk.model, &hdd_model);
	cr_assert_str_eq(config_for_path(&d, "pg_wal/x")->device, "wal");
	free(text);
	config_free(&c);
	config_free(&d);
}

/* Loads and finishes @text; expects -EINVAL with exactly @want after "DIR/t.ini". */
static void device_error(const char *text, const char *want)
{
	struct sfs_config c;
	char full[1024];
	int rc = load_text(&c, text, NULL);

	if (rc == 0)
		rc = config_finish(&c, 1 * GiB, errbuf, sizeof(errbuf));
	cr_assert_eq(rc, -EINVAL, "accepted: %s", text);
	snprintf(full, sizeof(full), "%s/t.ini%s", tmpdir, want);
	cr_assert_str_eq(errbuf, full);
	config_free(&c);
}

Test(config, device_errors_exact_messages)
{
	device_error("[device \"wal\"]\nsize = 1G\n",
		     ":1: [device \"wal\"] has no backing = PATH (a file or block device); every "
		     "[device \"NAME\"] section needs one");
	device_error("[device \"wal\"]\nbacking = w.img\n[file \"pg_wal/*\"]\ndevice = wall\n",
		     ":4: [file \"pg_wal/*\"] device = wall: no such device; allowed: main, wal "
		     "(main is BACKING, the others [device \"NAME\"] sections)");
	device_error("[layout]\ndevice = wal\n",
		     ":2: [layout] device = wal: no such device; allowed: main (main is BACKING, "
		     "the others [device \"NAME\"] sections)");
	device_error("[device \"main\"]\nbacking = w.img\n",
		     ":1: [device \"main\"]: main is the command line's BACKING, configured by the "
		     "plain [device] and [disk] sections; name the other devices differently");
	device_error("[device \"w al\"]\nbacking = w.img\n",
		     ":1: [device \"w al\"]: a device name has only letters, digits, '_' and '-' "
		     "(it appears in the log as NAME:offset+length)");
	device_error("[device \"wal\"]\nbacking = w.img\npoll_us = 0\n",
		     ":3: [device \"wal\"] unknown key 'poll_us'; allowed: backing, preset, size, "
		     "block_size, direct, layers, capacity, metadata_io, metadata_offset, model");
	device_error("[device \"wal\"]\nbacking = w.img\nmodel = hdd\nrpmm = 1\n",
		     ":4: [device \"wal\"] unknown key 'rpmm'; allowed: backing, preset, size, "
		     "block_size, direct, layers, capacity, metadata_io, metadata_offset, model, rpm, "
		     "seek_track_ms, seek_avg_ms, seek_full_ms, transfer_mib_s, rotation, "
		     "prefetch, prefetch_max, write_cache, cache_size, interface_mib_s");
	device_error("[device \"wal\"]\nbacking = w.img\n[device \"wal\"]\nbacking = v.img\n",
		     ":3: duplicated section [device \"wal\"] (first at line 1)");
	device_error("[device \"wal\"]\nbacking = w.img\nrpm = 5400\npreset = p.ini\n",
		     ":4: [device \"wal\"] preset = p.ini: write preset = before the section's "
		     "model keys (it sets every [disk] key)");
	device_error("[device \"wal\"]\nbacking = w.img\nmodel = hdd\nseek_track_ms = 9\n",
		     ":4: [device \"wal\"] seek_track_ms: seek times must grow: seek_track_ms (9) "
		     "<= seek_avg_ms (8.5) <= seek_full_ms (18)");
	device_error("[device \"wal\"]\nbacking = w.img\nblock_size = 64K\n[file \"w/*\"]\n"
		     "device = wal\nextent_size = 16K\n",
		     ":6: [file \"w/*\"] extent_size = 16K: not a multiple of its device's "
		     "block_size (64K)");
}

Test(config, device_sections_not_by_option)
{
	struct sfs_config c;

	config_init(&c);
	cr_assert_eq(config_set(&c, "device \"wal\".backing=/x", errbuf, sizeof(errbuf)), -EINVAL);
	cr_assert_str_eq(errbuf, "option -o device \"wal\".backing=/x: [device \"NAME\"] sections "
				 "can only be written in the configuration file");
	cr_assert_eq(config_set(&c, "layout.device=wal", errbuf, sizeof(errbuf)), 0);
	cr_assert_eq(config_finish(&c, 1 * GiB, errbuf, sizeof(errbuf)), -EINVAL);
	cr_assert_str_eq(errbuf, "option -o layout.device=wal: [layout] device = wal: no such "
				 "device; allowed: main (main is BACKING, the others [device "
				 "\"NAME\"] sections)");
	config_free(&c);
}

/* ---- [disk]: each model's keys are its own ---- */

/*
 * A key of a model other than the one chosen is refused, naming the
 * chosen model, where it was chosen, the model that has the key and the
 * spelling that chooses it: model = none (conf/default.ini before models
 * had their own keys) with an hdd key, in [disk] and in [device "NAME"].
 */
Test(config, disk_key_of_another_model_refused)
{
	struct sfs_config c;
	const char *path;
	char want[1024];

	cr_assert_eq(load_text(&c, "[disk]\nmodel = none\nrpm = 7200\n", &path), 0, "%s", errbuf);
	cr_assert_eq(config_finish(&c, GiB, errbuf, sizeof(errbuf)), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:3: [disk] rpm = 7200: model none (set at %s:2) has no key rpm; it is a key of "
		 "model hdd: write model = hdd before it (keys with model = none: capacity, "
		 "metadata_io, metadata_offset, time_dilation, model)",
		 path, path);
	cr_assert_str_eq(errbuf, want);
	config_free(&c);

	/* No model written: the default none, and an -o override is named as such. */
	config_init(&c);
	cr_assert_eq(config_set(&c, "disk.seek_avg_ms=30", errbuf, sizeof(errbuf)), 0, "%s",
		     errbuf);
	cr_assert_eq(config_finish(&c, GiB, errbuf, sizeof(errbuf)), -EINVAL);
	cr_assert_str_eq(errbuf,
			 "option -o disk.seek_avg_ms=30: [disk] seek_avg_ms = 30: model none "
			 "(the default) has no key seek_avg_ms; it is a key of model hdd: "
			 "write model = hdd before it (keys with model = none: capacity, "
			 "metadata_io, metadata_offset, time_dilation, model)");
	config_free(&c);

	/* The keys every model shares are accepted with any. */
	load_ok(&c, "[disk]\ncapacity = 1T\nmetadata_offset = 1M\n");
	finish_ok(&c, GiB);
	cr_assert_eq(c.disk.capacity, 1ULL << 40);
	config_free(&c);

	cr_assert_eq(
	    load_text(&c, "[device \"wal\"]\nbacking = w.img\nmodel = none\nprefetch = 2\n", &path),
	    0, "%s", errbuf);
	cr_assert_eq(config_finish(&c, GiB, errbuf, sizeof(errbuf)), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:4: [device \"wal\"] prefetch = 2: model none (set at %s:3) has no key "
		 "prefetch; it is a key of model hdd: write model = hdd before it (keys with model "
		 "= none: capacity, metadata_io, metadata_offset, model)",
		 path, path);
	cr_assert_str_eq(errbuf, want);
	config_free(&c);
}

/*
 * Where model = stands in its section does not matter: a model key
 * written before it is the model's (each model's twin of a name took the
 * value, and the chosen one keeps it).  The seek check of the hdd model
 * runs only when hdd is the model.
 */
Test(config, disk_model_key_before_model_line)
{
	struct sfs_config c;

	load_ok(&c, "[disk]\nrpm = 5400\nseek_avg_ms = 12\nmodel = hdd\n");
	finish_ok(&c, GiB);
	cr_assert_eq(c.disk.model, &hdd_model);
	cr_assert_eq(HDD(&c.disk)->rpm, 5400);
	cr_assert_eq(HDD(&c.disk)->seek_avg_ms, 12);
	config_free(&c);
}

/*
 * An -o disk.model= override over a file chooses another model: the
 * file's keys of the old model are dropped, as a pattern's are, and the
 * effective configuration says so in a comment and writes only the
 * chosen model's keys.
 */
Test(config, disk_model_override_drops_the_files_model_keys)
{
	struct sfs_config c;
	const char *path;
	char want[600], *text;

	cr_assert_eq(load_text(&c, "[disk]\nmodel = hdd\nrpm = 5400\nseek_avg_ms = 30\n", &path), 0,
		     "%s", errbuf);
	cr_assert_eq(config_set(&c, "disk.model=none", errbuf, sizeof(errbuf)), 0, "%s", errbuf);
	finish_ok(&c, GiB);
	cr_assert_null(c.disk.model);
	cr_assert_eq(HDD(&c.disk)->rpm, 7200, "the default again");
	text = config_write_ini(&c);
	cr_assert_not_null(text);
	snprintf(want, sizeof(want),
		 "# ignored: %s:3: [disk] rpm = 5400 (model none (option -o disk.model=none) does "
		 "not read it)",
		 path);
	assert_has(text, want);
	cr_assert_null(strstr(text, "\nrpm = "), "%s", text);
	cr_assert_null(strstr(text, "\nseek_avg_ms = "), "%s", text);
	free(text);
	config_free(&c);
}
