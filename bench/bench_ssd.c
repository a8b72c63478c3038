/*
 * bench-ssd: the ssd model's own cost (layout/models/ssd.h), outside any
 * mount, for bench/scale.
 *
 *   bench-ssd [--disk FILE] [--capacity BYTES] [--ops N]
 *
 * Builds the drive of FILE's [disk] section (default conf/ssd-nvme.ini)
 * over a user capacity of BYTES (default 64G) and prints, as CSV
 * metric,value lines on stdout:
 *   create_s            ssd_create() of the drive (prefilled when the
 *                       preset says so), wall time
 *   flash_pages, blocks its derived geometry
 *   state_bytes         the FTL's memory (ssd_state_bytes())
 *   page_state_bytes    of which per flash page: the map (4 bytes per user
 *                       page) and the reverse map (4 per flash page),
 *                       divided by the flash pages
 *   block_state_bytes   the rest, per block (valid and written counts,
 *                       erases, free list)
 *   read4k_ns_per_page  N random 4 KiB reads (after N untimed ones, which
 *                       take the page faults of the map's first touch),
 *                       one every 200 us of modelled
 *                       time: the thread's CPU time per page (the model's
 *                       cost; wall time would count other processes on a
 *                       shared machine)
 *   read1m_ns_per_page  N / 256 sequential 1 MiB reads likewise, per page
 *   write4k_ns_per_page N random 4 KiB writes after 2 x the spare pages of
 *                       random writes (so that garbage collection runs),
 *                       per page, garbage collection included
 *   waf                 flash / host pages over those N writes
 * Progress goes to stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "disk_model.h"
#include "models/ssd.h"
#include "size.h"
#include "splitmix64.h"

static double clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The model's cost is the CPU time this thread spent in it: on a shared machine wall time
 * also counts the time other processes ran. */
static double now_s(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

static void usage_exit(const char *why)
{
	fprintf(stderr, "bench-ssd: %s\nusage: bench-ssd [--disk FILE] [--capacity BYTES] [--ops N]\n",
		why);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *disk = "conf/ssd-nvme.ini";
	uint64_t capacity = UINT64_C(64) << 30, ops = 2000000;
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage_exit("an option without its value");
		char *end;
		if (!strcmp(argv[i], "--disk"))
			disk = argv[++i];
		else if (!strcmp(argv[i], "--capacity")) {
			if (parse_size(argv[++i], &capacity) || capacity == 0)
				usage_exit("--capacity: a size in bytes (K, M, G, T suffixes)");
		} else if (!strcmp(argv[i], "--ops")) {
			ops = strtoull(argv[++i], &end, 10);
			if (*end || ops < 256)
				usage_exit("--ops: a number, at least 256");
		} else
			usage_exit("unknown option");
	}
	struct sfs_config c;
	char err[512];
	config_init(&c);
	int rc = config_load_file(&c, disk, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "bench-ssd: %s\n", err);
		return 2;
	}
	const struct disk_model_ops *m = disk_model_find("ssd");
	if (c.disk.model != m) {
		fprintf(stderr, "bench-ssd: %s: [disk] model is not ssd\n", disk);
		return 2;
	}
	const struct ssd_params *p = disk_model_params(&c.disk, m);

	fprintf(stderr, "bench-ssd: creating a %llu-byte drive (%s)\n",
		(unsigned long long)capacity, disk);
	struct ssd *s;
	double t0 = clock_s(CLOCK_MONOTONIC);
	rc = ssd_create(p, capacity, &s, err, sizeof(err));
	double create_s = clock_s(CLOCK_MONOTONIC) - t0;
	if (rc) {
		fprintf(stderr, "bench-ssd: %s\n", rc == -ENOMEM ? "out of memory" : err);
		return 1;
	}
	uint64_t ps = ssd_page_size(s), user_pages = (capacity + ps - 1) / ps;
	uint64_t flash_pages = ssd_flash_bytes(s) / ps;
	uint64_t blocks = (uint64_t)ssd_dies(s) * ssd_blocks_per_die(s);
	uint64_t state = ssd_state_bytes(s), page_state = (user_pages + flash_pages) * 4;

	struct ssd_io io;
	uint64_t now = 0, seed = 42;
	const uint64_t gap = 200000; /* ns between requests: no queue builds up */

	/*
	 * Untimed first: the map's pages come from calloc() and each costs a
	 * page fault at its first use (once per 1,024 user pages, paid once in
	 * a drive's life), which would otherwise count in the first reads.
	 */
	fprintf(stderr, "bench-ssd: %llu random 4 KiB reads, untimed (the map's first touch)\n",
		(unsigned long long)ops);
	for (uint64_t i = 0; i < ops; i++) {
		uint64_t pg = splitmix64_next(&seed) % user_pages;
		ssd_submit(s, SSD_READ, pg * ps, ps, now += gap, &io);
	}
	fprintf(stderr, "bench-ssd: %llu random 4 KiB reads\n", (unsigned long long)ops);
	t0 = now_s();
	for (uint64_t i = 0; i < ops; i++) {
		uint64_t pg = splitmix64_next(&seed) % user_pages;
		ssd_submit(s, SSD_READ, pg * ps, ps, now += gap, &io);
	}
	double read4k = (now_s() - t0) * 1e9 / (double)ops;

	uint64_t per = (UINT64_C(1) << 20) / ps, n1m = ops / per;
	fprintf(stderr, "bench-ssd: %llu sequential 1 MiB reads\n", (unsigned long long)n1m);
	t0 = now_s();
	for (uint64_t i = 0; i < n1m; i++) {
		uint64_t off = (i * (UINT64_C(1) << 20)) % (user_pages * ps - (UINT64_C(1) << 20));
		ssd_submit(s, SSD_READ, off, UINT64_C(1) << 20, now += 10 * gap, &io);
	}
	double read1m = (now_s() - t0) * 1e9 / (double)(n1m * per);

	uint64_t warm = 2 * (flash_pages - user_pages);
	fprintf(stderr, "bench-ssd: %llu random 4 KiB writes to start garbage collection\n",
		(unsigned long long)warm);
	for (uint64_t i = 0; i < warm; i++) {
		uint64_t pg = splitmix64_next(&seed) % user_pages;
		ssd_submit(s, SSD_WRITE, pg * ps, ps, now += gap, &io);
	}
	struct ssd_counters a, b;
	ssd_get_counters(s, &a);
	fprintf(stderr, "bench-ssd: %llu random 4 KiB writes, timed\n", (unsigned long long)ops);
	t0 = now_s();
	for (uint64_t i = 0; i < ops; i++) {
		uint64_t pg = splitmix64_next(&seed) % user_pages;
		ssd_submit(s, SSD_WRITE, pg * ps, ps, now += gap, &io);
	}
	double write4k = (now_s() - t0) * 1e9 / (double)ops;
	ssd_get_counters(s, &b);

	printf("metric,value\n");
	printf("capacity_bytes,%llu\n", (unsigned long long)capacity);
	printf("create_s,%.3f\n", create_s);
	printf("flash_pages,%llu\n", (unsigned long long)flash_pages);
	printf("blocks,%llu\n", (unsigned long long)blocks);
	printf("state_bytes,%llu\n", (unsigned long long)state);
	printf("page_state_bytes,%.3f\n", (double)page_state / (double)flash_pages);
	printf("block_state_bytes,%.3f\n", (double)(state - page_state) / (double)blocks);
	printf("read4k_ns_per_page,%.1f\n", read4k);
	printf("read1m_ns_per_page,%.1f\n", read1m);
	printf("write4k_ns_per_page,%.1f\n", write4k);
	printf("gc_runs,%llu\n", (unsigned long long)(b.gc_runs - a.gc_runs));
	printf("waf,%.3f\n", (double)(b.flash_pages - a.flash_pages) /
				 (double)(b.host_pages - a.host_pages));
	ssd_destroy(s);
	return 0;
}
