/*
 * SSD model (layout/models/ssd.h): exact timings of one page read, a read
 * spread over dies, two reads queueing on one die, channel sharing, a
 * program, the write cache, write-order die assignment, trim, one garbage
 * collection on a tiny geometry, refused geometries, the FTL's memory, and
 * write amplification at steady state against the greedy closed form.
 *
 * The timing tests use a drive whose terms are round numbers:
 *   2 channels x 2 ways = 4 dies (die i on channel i % 2), 4 KiB pages,
 *   tR 40 us, tPROG 200 us, tERASE 2 ms, command 5 us,
 *   channel 409.6 MB/s: one page 4096 * 1000 / 409.6 = 10,000 ns,
 *   interface 819.2 MB/s: one page 5,000 ns.
 * Requests arrive at T = 1 s, long after the writes that set them up have
 * finished.
 */
#undef NDEBUG
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "disk_model.h"
#include "layout_score.h"
#include "models/ssd.h"
#include "splitmix64.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define PG  (4 * KiB)
#define T   UINT64_C(1000000000)

static struct ssd_params round_params(void)
{
	return (struct ssd_params){
	    .channels = 2,
	    .ways = 2,
	    .page_size = 4096,
	    .pages_per_block = 4,
	    .over_provisioning = 0.5,
	    .read_us = 40,
	    .program_us = 200,
	    .erase_us = 2000,
	    .command_us = 5,
	    .channel_mb_s = 409.6,
	    .interface_mb_s = 819.2,
	    .queue_depth = 32,
	    .gc_free_blocks = 1,
	};
}

static struct ssd *make(const struct ssd_params *p, uint64_t capacity)
{
	struct ssd *s = NULL;
	char err[256] = "";
	int rc = ssd_create(p, capacity, &s, err, sizeof(err));
	cr_assert_eq(rc, 0, "ssd_create: %d %s", rc, err);
	return s;
}

static struct ssd *round_drive(void)
{
	struct ssd_params p = round_params();
	return make(&p, 1 * MiB);
}

static void write_pages(struct ssd *s, uint64_t first, uint64_t n)
{
	struct ssd_io io;
	ssd_submit(s, SSD_WRITE, first * PG, n * PG, 0, &io);
}

/* A write at 0 of page 0 goes to die 0; read at T: 5 command + 40 tR + 10 channel + 5 host. */
Test(ssd, one_page_read)
{
	struct ssd *s = round_drive();
	struct ssd_io io;
	write_pages(s, 0, 1);
	cr_assert_eq(ssd_die_of(s, 0), 0);
	cr_assert_eq(ssd_submit(s, SSD_READ, 0, PG, T, &io), T + 60000);
	cr_assert_eq(io.start_ns, T);
	cr_assert_eq(io.pages, 1);
	cr_assert_eq(io.dies, 1);
	cr_assert_eq(io.collisions, 0);
	cr_assert_eq(io.die_ns, 40000);
	ssd_destroy(s);
}

/*
 * 16 KiB written at once land on dies 0, 1, 2, 3.  Read at T: every die
 * senses from T+5 to T+45 us; channel 0 carries die 0 (45-55) then die 2
 * (55-65), channel 1 dies 1 and 3 likewise; the host interface takes the
 * pages in order: 55-60, 60-65, 65-70, 70-75.
 */
Test(ssd, multi_page_read_over_dies)
{
	struct ssd *s = round_drive();
	struct ssd_io io;
	write_pages(s, 0, 4);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(ssd_die_of(s, i * PG), i);
	cr_assert_eq(ssd_submit(s, SSD_READ, 0, 4 * PG, T, &io), T + 75000);
	cr_assert_eq(io.dies, 4);
	cr_assert_eq(io.collisions, 0);
	cr_assert_eq(ssd_channel_free_ns(s, 0), T + 65000);
	cr_assert_eq(ssd_channel_free_ns(s, 1), T + 65000);
	ssd_destroy(s);
}

/*
 * Pages 0 and 4 are both on die 0 (the fifth page written).  Two reads
 * arrive at T: the first as above (T+60 us, die 0 busy until T+55); the
 * second waits for the controller (T+5), is ready at T+10, waits on die 0
 * until T+55 (a collision), senses to T+95, crosses channel 0 to T+105 and
 * the interface to T+110.
 */
Test(ssd, two_reads_queue_on_one_die)
{
	struct ssd *s = round_drive();
	struct ssd_io a, b;
	write_pages(s, 0, 5);
	cr_assert_eq(ssd_die_of(s, 4 * PG), 0);
	cr_assert_eq(ssd_submit(s, SSD_READ, 0, PG, T, &a), T + 60000);
	cr_assert_eq(ssd_submit(s, SSD_READ, 4 * PG, PG, T, &b), T + 110000);
	cr_assert_eq(b.start_ns, T + 5000);
	cr_assert_eq(a.collisions, 0);
	cr_assert_eq(b.collisions, 1);
	cr_assert_eq(b.collision_wait_ns, 45000); /* T+10 to T+55 */
	cr_assert_eq(a.collision_wait_ns, 0);
	cr_assert_eq(b.gc_wait_ns, 0);
	/* busy: [T, T+60] then the part of [T+5, T+110] after T+60 */
	cr_assert_eq(a.busy_ns, 60000);
	cr_assert_eq(b.busy_ns, 50000);
	struct ssd_counters c;
	ssd_get_counters(s, &c);
	cr_assert_eq(c.collisions, 1);
	cr_assert_eq(c.collision_wait_ns, 45000);
	cr_assert_eq(c.reads, 2);
	ssd_destroy(s);
}

/*
 * Pages 0 and 2 are on dies 0 and 2, both on channel 0.  Read of page 0 at
 * T: channel 0 busy 45-55.  Read of page 2 at T: ready T+10, senses to
 * T+50, but channel 0 is free only at T+55: 55-65, host 65-70.  Without
 * the shared channel it would have completed at T+65.
 */
Test(ssd, channel_sharing)
{
	struct ssd *s = round_drive();
	struct ssd_io a, b;
	write_pages(s, 0, 4);
	cr_assert_eq(ssd_submit(s, SSD_READ, 0, PG, T, &a), T + 60000);
	cr_assert_eq(ssd_submit(s, SSD_READ, 2 * PG, PG, T, &b), T + 70000);
	cr_assert_eq(b.collisions, 0);
	cr_assert_eq(ssd_die_free_ns(s, 2), T + 65000);
	/* page 1 is on channel 1: the same timing as page 2 with a free channel */
	struct ssd *s2 = round_drive();
	write_pages(s2, 0, 4);
	ssd_submit(s2, SSD_READ, 0, PG, T, &a);
	cr_assert_eq(ssd_submit(s2, SSD_READ, 1 * PG, PG, T, &b), T + 65000);
	ssd_destroy(s);
	ssd_destroy(s2);
}

/*
 * A one-page write at T: command to T+5, interface to T+10, channel 0 to
 * T+20, tPROG to T+220.
 */
Test(ssd, one_page_program)
{
	struct ssd *s = round_drive();
	struct ssd_io io;
	cr_assert_eq(ssd_submit(s, SSD_WRITE, 0, PG, T, &io), T + 220000);
	cr_assert_eq(io.pages, 1);
	cr_assert_eq(io.die_ns, 200000);
	cr_assert_eq(ssd_die_free_ns(s, 0), T + 220000);
	struct ssd_counters c;
	ssd_get_counters(s, &c);
	cr_assert_eq(c.host_pages, 1);
	cr_assert_eq(c.flash_pages, 1);
	ssd_destroy(s);
}

/*
 * Write cache of two pages; three pages written at T cross the interface
 * T+5 to T+20.  Pages 0 and 1 take the two slots and program on dies 0 and
 * 1 (channel 20-30, tPROG 30-230); page 2 waits for page 0's slot (T+230),
 * crosses channel 0 230-240 and programs to T+440.  The write completes
 * when its last page has a slot: T+230.  A flush completes at T+440.
 */
Test(ssd, write_cache_slots_and_flush)
{
	struct ssd_params p = round_params();
	p.write_cache = true;
	p.cache_size = 2 * PG;
	struct ssd *s = make(&p, 1 * MiB);
	struct ssd_io io;
	cr_assert_eq(ssd_submit(s, SSD_WRITE, 0, 3 * PG, T, &io), T + 230000);
	cr_assert_eq(ssd_die_free_ns(s, 2), T + 440000);
	cr_assert_eq(ssd_flush(s, T + 230000, &io), T + 440000);
	cr_assert_eq(ssd_flush(s, T + 500000, &io), T + 500000);
	/* FUA: to the media (die 3, idle) whatever the cache: T+1 s + 5 + 5 + 10 + 200 us */
	cr_assert_eq(ssd_submit(s, SSD_WRITE_FUA, 8 * PG, PG, 2 * T, &io), 2 * T + 220000);
	ssd_destroy(s);
}

/*
 * Rule: the k-th page written goes to die k mod 4.  File A (pages 0-3) and
 * file B (pages 8-11) written interleaved, one page each in turn: A's page
 * i is the (2i)-th write, on die 2i mod 4 = 0, 2, 0, 2; B's on 1, 3, 1, 3.
 * Reading A at T: pages 0 and 1 sense 5-45 on dies 0 and 2 and share
 * channel 0 (45-55, 55-65); page 2 waits on die 0 until 55 (collision),
 * senses to 95, channel 95-105; page 3 waits on die 2 until 65, senses to
 * 105, channel 105-115; host 55-60, 65-70, 105-110, 115-120.  The longest
 * wait on a busy die is page 3's, 5 to 65: 60 us.
 * The same file written alone reads in 75 us on 4 dies (multi_page_read_over_dies).
 */
Test(ssd, write_order_die_assignment)
{
	struct ssd *s = round_drive();
	struct ssd_io io;
	for (int i = 0; i < 4; i++) {
		write_pages(s, i, 1);
		write_pages(s, 8 + i, 1);
	}
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(ssd_die_of(s, i * PG), (2 * i) % 4);
		cr_assert_eq(ssd_die_of(s, (8 + i) * PG), (2 * i + 1) % 4);
	}
	cr_assert_eq(ssd_submit(s, SSD_READ, 0, 4 * PG, T, &io), T + 120000);
	cr_assert_eq(io.dies, 2);
	cr_assert_eq(io.collisions, 2);
	cr_assert_eq(io.collision_wait_ns, 60000);
	ssd_destroy(s);
}

/*
 * Trim invalidates the pages wholly inside its range: [0, 4096) drops page
 * 0 (die 0's block 0 goes from 2 valid pages to 1), [4097, 8192) none.
 * A read of a trimmed page costs no flash time: T + 5 command + 5 host.
 */
Test(ssd, trim)
{
	struct ssd_params p = round_params();
	p.channels = 1;
	p.ways = 1;
	struct ssd *s = make(&p, 1 * MiB);
	struct ssd_io io;
	write_pages(s, 0, 2);
	cr_assert_eq(ssd_block_valid(s, 0, 0), 2);
	ssd_trim(s, PG + 1, PG - 1);
	cr_assert_eq(ssd_block_valid(s, 0, 0), 2);
	ssd_trim(s, 0, PG);
	cr_assert_eq(ssd_block_valid(s, 0, 0), 1);
	cr_assert_eq(ssd_die_of(s, 0), -1);
	cr_assert_eq(ssd_die_of(s, PG), 0);
	cr_assert_eq(ssd_submit(s, SSD_READ, 0, PG, T, &io), T + 10000);
	cr_assert_eq(io.pages, 0);
	cr_assert_eq(io.dies, 0);
	ssd_destroy(s);
}

/*
 * One die, 4 pages per block, 16 KiB of user capacity with
 * over-provisioning 2.5: ceil(4 x 3.5) = 14 flash pages -> 4 blocks,
 * gc_free_blocks 1.  Pages 0-3 fill block 0; pages 0, 1, 2, 0 fill block 1
 * (block 0 keeps page 3 valid); pages 1, 2, 1, 2 fill block 2 (block 1
 * keeps page 0), leaving one free block.  Writing page 1 finds the open
 * block full and one free block: GC takes block 0 (1 valid page; block 1
 * also has 1, block 0 is the lower), copies page 3 into the last free
 * block, block 3 (physical page 12), erases block 0 and stops, the copy
 * having left room in block 3; page 1 goes to physical page 13.
 * Time: the write arrives at T, its data at the die at T+10 us; GC there:
 * 1 x (40 + 200) + 2000 = 2240 us, to T+2250; channel to T+2260, tPROG to
 * T+2460.  A read of page 2 (die 0) arriving at T+20 us is ready at T+25
 * and waits behind the GC and the program until T+2460: 2225 us of its
 * wait are GC.
 */
Test(ssd, one_gc_cycle)
{
	struct ssd_params p = round_params();
	p.channels = 1;
	p.ways = 1;
	p.over_provisioning = 2.5;
	struct ssd *s = make(&p, 4 * PG);
	struct ssd_io io, r;
	cr_assert_eq(ssd_blocks_per_die(s), 4);
	write_pages(s, 0, 4);
	write_pages(s, 0, 3);
	write_pages(s, 0, 1);
	write_pages(s, 1, 2);
	write_pages(s, 1, 2);
	cr_assert_eq(ssd_block_valid(s, 0, 0), 1);
	cr_assert_eq(ssd_block_valid(s, 0, 1), 1);
	cr_assert_eq(ssd_block_valid(s, 0, 2), 2);
	cr_assert_eq(ssd_submit(s, SSD_WRITE, PG, PG, T, &io), T + 2460000);
	cr_assert_eq(io.gc_wait_ns, 2240000);
	cr_assert_eq(io.die_ns, 200000 + 2240000);
	cr_assert_eq(ssd_ppn_of(s, 3 * PG), 12);
	cr_assert_eq(ssd_ppn_of(s, 1 * PG), 13);
	cr_assert_eq(ssd_block_valid(s, 0, 0), 0);
	cr_assert_eq(ssd_block_valid(s, 0, 1), 1);
	cr_assert_eq(ssd_block_valid(s, 0, 2), 1);
	cr_assert_eq(ssd_block_valid(s, 0, 3), 2);
	cr_assert_eq(ssd_block_erases(s, 0, 0), 1);
	cr_assert_eq(ssd_submit(s, SSD_READ, 2 * PG, PG, T + 20000, &r), T + 2460000 + 55000);
	cr_assert_eq(r.collisions, 1);
	cr_assert_eq(r.gc_wait_ns, 2225000);
	struct ssd_counters c;
	ssd_get_counters(s, &c);
	cr_assert_eq(c.gc_runs, 1);
	cr_assert_eq(c.pages_moved, 1);
	cr_assert_eq(c.host_pages, 13);
	cr_assert_eq(c.flash_pages, 14);
	cr_assert_eq(c.erases_min, 0);
	cr_assert_eq(c.erases_max, 1);
	cr_assert_eq(c.erases_total, 1);
	cr_assert_eq(c.gc_wait_ns, 2240000 + 2225000);
	ssd_destroy(s);
}

/* The one_gc_cycle drive (1 die, 4 blocks of 4 pages), after its garbage collection. */
static struct ssd *gc_drive(struct ssd_params *p)
{
	struct ssd_io io;
	*p = round_params();
	p->channels = 1;
	p->ways = 1;
	p->over_provisioning = 2.5;
	struct ssd *s = make(p, 4 * PG);
	write_pages(s, 0, 4);
	write_pages(s, 0, 3);
	write_pages(s, 0, 1);
	write_pages(s, 1, 2);
	write_pages(s, 1, 2);
	ssd_submit(s, SSD_WRITE, PG, PG, T, &io);
	return s;
}

/*
 * ssd_save() and ssd_load(): the one_gc_cycle drive after its garbage
 * collection, saved and loaded into a new drive of the same parameters,
 * has the same map (pages 0-3 at 7, 13, 11, 12: page 0's third write,
 * page 1's GC-time write, page 2's second, page 3 moved by GC), blocks
 * (valid 0, 1, 1, 2; block 0 erased once), counters (13 host pages, 14
 * flash pages, one GC run) and next write place (page 0 again: physical
 * page 14, the open block's third), and passes ssd_verify().  The file is 64 bytes of
 * header and counters (sizeof the header) plus 4 x 4 map, 16 x 4 reverse
 * map, 4 x 8 blocks, 8 die words and 4 x 4 free stack.  Another geometry
(5 blocks per die),
 * a short file, a long one and a flipped byte are refused with -EINVAL
 * and what is wrong.
 */
Test(ssd, state_saved_and_loaded)
{
	struct ssd_params p;
	struct ssd *s = gc_drive(&p), *t = make(&p, 4 * PG);
	struct ssd_counters a, b;
	struct ssd_io io;
	char err[512] = "", path[] = "/tmp/test_ssd_state.XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	unlink(path);
	cr_assert_eq(ssd_save(s, fd), 0);
	struct stat st;
	cr_assert_eq(fstat(fd, &st), 0);
	off_t size = st.st_size;
	off_t header = size - (4 * 4 + 16 * 4 + 4 * 8 + 8 + 4 * 4);
	cr_assert_gt(header, (off_t)sizeof(struct ssd_counters));
	lseek(fd, 0, SEEK_SET);
	cr_assert_eq(ssd_load(t, fd, err, sizeof(err)), 0, "%s", err);
	const uint32_t ppn[4] = {7, 13, 11, 12}, valid[4] = {0, 1, 1, 2};
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(ssd_ppn_of(s, i * PG), ppn[i], "original page %d", i);
		cr_assert_eq(ssd_ppn_of(t, i * PG), ppn[i], "loaded page %d", i);
		cr_assert_eq(ssd_block_valid(t, 0, i), valid[i]);
		cr_assert_eq(ssd_block_erases(t, 0, i), i == 0);
	}
	ssd_get_counters(s, &a);
	ssd_get_counters(t, &b);
	cr_assert_eq(memcmp(&a, &b, sizeof(a)), 0);
	cr_assert_eq(b.host_pages, 13);
	cr_assert_eq(b.flash_pages, 14);
	cr_assert_eq(b.gc_runs, 1);
	cr_assert_eq(ssd_verify(t, err, sizeof(err)), 0, "%s", err);
	ssd_submit(s, SSD_WRITE, 0, PG, 2 * T, &io);
	ssd_submit(t, SSD_WRITE, 0, PG, 2 * T, &io);
	cr_assert_eq(ssd_ppn_of(s, 0), 14);
	cr_assert_eq(ssd_ppn_of(t, 0), 14);
	ssd_destroy(t);

	/* another geometry: over-provisioning 3.5, 5 blocks per die */
	struct ssd_params q = p;
	q.over_provisioning = 3.5;
	t = make(&q, 4 * PG);
	lseek(fd, 0, SEEK_SET);
	cr_assert_eq(ssd_load(t, fd, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "written for another drive (capacity 16384, 1 dies on 1 "
				       "channels, 4 blocks of 4 pages of 4096 bytes per die"),
			   "%s", err);
	ssd_destroy(t);
	/* short, long, flipped */
	cr_assert_eq(ftruncate(fd, size - 1), 0);
	t = make(&p, 4 * PG);
	lseek(fd, 0, SEEK_SET);
	cr_assert_eq(ssd_load(t, fd, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "shorter than its geometry needs"), "%s", err);
	ssd_destroy(t);
	lseek(fd, 0, SEEK_SET);
	cr_assert_eq(ssd_save(s, fd), 0);
	cr_assert_eq(pwrite(fd, "x", 1, size), 1);
	t = make(&p, 4 * PG);
	lseek(fd, 0, SEEK_SET);
	cr_assert_eq(ssd_load(t, fd, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "longer than its geometry needs"), "%s", err);
	ssd_destroy(t);
	cr_assert_eq(ftruncate(fd, 0), 0);
	lseek(fd, 0, SEEK_SET);
	cr_assert_eq(ssd_save(s, fd), 0);
	unsigned char c;
	cr_assert_eq(pread(fd, &c, 1, header + 5), 1);
	c ^= 1;
	cr_assert_eq(pwrite(fd, &c, 1, header + 5), 1);
	t = make(&p, 4 * PG);
	lseek(fd, 0, SEEK_SET);
	cr_assert_eq(ssd_load(t, fd, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "(damaged)"), "%s", err);
	ssd_destroy(t);
	close(fd);
	ssd_destroy(s);
}

/*
 * A 4 GiB drive (1,048,576 user pages, 4 dies, no prefill) with three
 * pages written: its state file leaves the untouched map, reverse map and
 * blocks as holes (less than a fifth of its 14.5 MiB allocated, where the
 * file system keeps holes: the free stacks are most of the rest), and
 * loads back with the three pages where they were, the rest unmapped.
 */
Test(ssd, state_file_sparse)
{
	struct ssd_params p = round_params();
	struct ssd *s = make(&p, 4096 * MiB), *t = make(&p, 4096 * MiB);
	char err[512] = "", path[] = "/tmp/test_ssd_state.XXXXXX";
	struct stat st;
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	unlink(path);
	write_pages(s, 1000, 1);
	write_pages(s, 40000, 2);
	cr_assert_eq(ssd_save(s, fd), 0);
	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert_gt(st.st_size, (off_t)(65536 * 4));
	if (lseek(fd, 0, SEEK_HOLE) < st.st_size) /* the file system keeps holes */
		cr_assert_lt((off_t)st.st_blocks * 512, st.st_size / 5, "%lld of %lld bytes",
			     (long long)st.st_blocks * 512, (long long)st.st_size);
	cr_assert_eq(ssd_load(t, fd, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(ssd_ppn_of(t, 1000 * PG), ssd_ppn_of(s, 1000 * PG));
	cr_assert_eq(ssd_ppn_of(t, 40001 * PG), ssd_ppn_of(s, 40001 * PG));
	cr_assert_eq(ssd_ppn_of(t, 0), UINT32_MAX);
	cr_assert_eq(ssd_die_of(t, 40000 * PG), 1);
	cr_assert_eq(ssd_verify(t, err, sizeof(err)), 0, "%s", err);
	close(fd);
	ssd_destroy(s);
	ssd_destroy(t);
}

/*
 * Prefill: 1 MiB = 256 pages on 4 dies, page n on die n mod 4, counters at
 * 0; each die's 64 pages fill its blocks 0-15.  A read of page 5 (die 1)
 * costs a flash read; the next host write goes to die 256 mod 4 = 0.
 */
Test(ssd, prefill)
{
	struct ssd_params p = round_params();
	p.prefill = true;
	struct ssd *s = make(&p, MiB);
	struct ssd_io io;
	struct ssd_counters c;
	cr_assert_eq(ssd_die_of(s, 5 * PG), 1);
	cr_assert_eq(ssd_die_of(s, 255 * PG), 3);
	cr_assert_eq(ssd_block_valid(s, 3, 15), 4);
	cr_assert_eq(ssd_block_valid(s, 3, 16), 0);
	cr_assert_eq(ssd_submit(s, SSD_READ, 5 * PG, PG, T, &io), T + 60000);
	write_pages(s, 7, 1);
	cr_assert_eq(ssd_die_of(s, 7 * PG), 0);
	ssd_get_counters(s, &c);
	cr_assert_eq(c.host_pages, 1);
	cr_assert_eq(c.flash_pages, 1);
	ssd_destroy(s);
}

/*
 * The FTL stays consistent (ssd_verify()) through random writes and trims
 * on a prefilled drive and on an empty one, with garbage collection
 * running: 2 x 2 dies, 4 pages per block, 256 KiB at 100 % (8 blocks per die).
 */
Test(ssd, ftl_consistent_under_random_writes_and_trims)
{
	for (int pre = 0; pre < 2; pre++) {
		struct ssd_params p = round_params();
		p.prefill = pre;
		p.over_provisioning = 1;
		const uint64_t pages = 64;
		struct ssd *s = make(&p, pages * PG);
		struct ssd_io io;
		struct ssd_counters c;
		char err[256] = "";
		uint64_t rng = 7;
		for (int i = 0; i < 5000; i++) {
			uint64_t r = splitmix64_next(&rng);
			uint64_t lpn = r % pages, n = 1 + (r >> 32) % 3;
			if (lpn + n > pages)
				n = pages - lpn;
			if ((r >> 20) % 10 == 0)
				ssd_trim(s, lpn * PG, n * PG);
			else
				ssd_submit(s, SSD_WRITE, lpn * PG, n * PG, 0, &io);
			cr_assert_eq(ssd_verify(s, err, sizeof(err)), 0, "after %d: %s", i, err);
		}
		ssd_get_counters(s, &c);
		cr_assert_gt(c.gc_runs, 100);
		ssd_destroy(s);
	}
}

static void refused(struct ssd_params p, uint64_t capacity, const char *msg)
{
	char err[256] = "";
	struct ssd *s = NULL;
	cr_assert_eq(ssd_create(&p, capacity, &s, err, sizeof(err)), -EINVAL, "%s", msg);
	cr_assert_null(s);
	cr_assert_str_eq(err, msg);
	cr_assert_eq(ssd_check(&p, capacity, err, sizeof(err)), -EINVAL);
}

/*
 * [disk] time_dilation (struct disk_clock): the two reads of
 * two_reads_queue_on_one_die through the model's ops on a clock dilated
 * 10 times from origin O = T / 2.  They arrive on the clock at
 * R = O + 10 (T - O), which is model time T: in model time they complete
 * at T + 60 and T + 110 us as before (busy 60 and 50 us, the collision's
 * 45 us wait), and on the clock at R + 600 us and R + 1,100 us: ten times
 * the undilated times.  At factor 1 the clock is the model's.
 */
Test(ssd, time_dilation_stretches_every_time_by_n)
{
	const struct disk_model_ops *ops = disk_model_find("ssd");
	const uint64_t O = T / 2, R = O + 10 * (T - O);
	struct disk_clock one = {.origin_ns = O, .dilation = 1},
			  ten = {.origin_ns = O, .dilation = 10};
	struct disk_io a, b;
	struct ssd *s = round_drive(), *s1 = round_drive();

	write_pages(s, 0, 5);
	write_pages(s1, 0, 5);
	cr_assert_eq(disk_clock_submit(&ten, ops, s, DISK_READ, 0, PG, R, &a), R + 600000);
	cr_assert_eq(disk_clock_submit(&ten, ops, s, DISK_READ, 4 * PG, PG, R, &b), R + 1100000);
	cr_assert_eq(a.complete_ns, T + 60000);
	cr_assert_eq(b.complete_ns, T + 110000);
	cr_assert_eq(a.busy_ns, 60000);
	cr_assert_eq(b.busy_ns, 50000);
	cr_assert_eq(b.collisions, 1);
	struct ssd_counters c;
	ssd_get_counters(s, &c);
	cr_assert_eq(c.collision_wait_ns, 45000);
	/* factor 1: the clock's times are the model's */
	cr_assert_eq(disk_clock_submit(&one, ops, s1, DISK_READ, 0, PG, T, &a), T + 60000);
	cr_assert_eq(disk_clock_submit(&one, ops, s1, DISK_READ, 4 * PG, PG, T, &b), T + 110000);
	/* an arrival off the model's ns grid (R + 7 is model T + 0.7 ns) waits 7 ns less */
	struct ssd *s2 = round_drive();
	write_pages(s2, 0, 1);
	cr_assert_eq(disk_clock_submit(&ten, ops, s2, DISK_READ, 0, PG, R + 7, &a), R + 600000);
	/* the conversions: model time of a clock time, and back */
	cr_assert_eq(disk_clock_model(&ten, R + 7), T);
	cr_assert_eq(disk_clock_real(&ten, T + 1), R + 10);
	cr_assert_eq(disk_clock_model(&one, R + 7), R + 7);
	ssd_destroy(s);
	ssd_destroy(s1);
	ssd_destroy(s2);
}

Test(ssd, refused_geometries)
{
	struct ssd_params p = round_params();
	p.channels = 0;
	refused(p, MiB, "channels = 0: allowed 1 to 256");
	p = round_params();
	p.ways = 0;
	refused(p, MiB, "ways = 0: allowed 1 to 256 (dies per channel)");
	p = round_params();
	p.pages_per_block = 1;
	refused(p, MiB,
		"pages_per_block = 1: allowed 2 to 65535 (a block holds at least two pages)");
	p = round_params();
	p.over_provisioning = 0;
	refused(p, MiB,
		"over_provisioning = 0: allowed above 0 up to 10 (spare flash as a fraction of "
		"the user capacity)");
	p.over_provisioning = -0.1;
	refused(p, MiB,
		"over_provisioning = -0.1: allowed above 0 up to 10 (spare flash as a fraction of "
		"the user capacity)");
	p = round_params();
	p.queue_depth = 0;
	refused(p, MiB, "queue_depth = 0: allowed 1 to 65535");
	p = round_params();
	p.page_size = 1000;
	refused(p, MiB, "page_size = 1000: allowed a multiple of 512 from 512 to 1048576");
	/*
	 * 1 MiB = 256 pages over 4 dies of 4-page blocks: 16 blocks of user
	 * pages per die; 7 % makes ceil(273.92 / 16) = 18, 2 spare, and
	 * gc_free_blocks 1 needs 3; 15 % makes ceil(294.4 / 16) = 19.
	 * The least capacity at 7 %: k user blocks per die need
	 * ceil(ceil(1.07 n) / 16) >= k + 3 for n user pages in
	 * (16 (k - 1), 16 k]: k = 29, n = 464 gives ceil(497 / 16) = 32
	 * (n = 463: ceil(496 / 16) = 31): 464 x 4096 = 1900544 bytes.
	 */
	p = round_params();
	p.over_provisioning = 0.07;
	refused(p, MiB,
		"capacity 1048576 bytes: 18 blocks per die with over_provisioning = 0.07 leave 2 "
		"spare, and garbage collection needs gc_free_blocks + 2 = 3 (raise "
		"over_provisioning, or lower pages_per_block or gc_free_blocks, or a capacity of "
		"at least 1900544 bytes)");
	char why[512] = "";
	cr_assert_eq(ssd_check(&p, 1900544, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(ssd_check(&p, 1900544 - 4096, why, sizeof(why)), -EINVAL);
	p.over_provisioning = 0.15;
	struct ssd *s = make(&p, MiB);
	cr_assert_eq(ssd_blocks_per_die(s), 19);
	ssd_destroy(s);
	/* 4 TiB of 512-byte pages: 2^33 user pages */
	p = round_params();
	p.page_size = 512;
	refused(p, UINT64_C(4) << 40,
		"capacity 4398046511104 bytes: the geometry needs 12884901888 flash pages, more "
		"than the 4294967293 the FTL numbers (raise page_size)");
}

/* W0 at known points: W0(0) = 0, W0(-1/e) = -1, W0(e) = 1, W0(1) = the omega constant. */
Test(ssd, lambert_w0)
{
	cr_assert_float_eq(ssd_lambert_w0(0), 0, 1e-15);
	cr_assert_float_eq(ssd_lambert_w0(-exp(-1)), -1, 1e-7);
	cr_assert_float_eq(ssd_lambert_w0(M_E), 1, 1e-14);
	cr_assert_float_eq(ssd_lambert_w0(1), 0.5671432904097838, 1e-15);
	cr_assert_float_eq(ssd_lambert_w0(-0.2), -0.2591711018190737, 1e-14);
	cr_assert(isnan(ssd_lambert_w0(-0.5)));
	/* the closed form at the points: about 2.47 at 28 %, 1.71 at 50 % */
	cr_assert_float_eq(ssd_waf_greedy(0.28), 2.4814, 5e-4);
	cr_assert_float_eq(ssd_waf_greedy(0.5), 1.7158, 5e-4);
}

/*
 * Write amplification at steady state under uniform random 4 KiB writes
 * over the whole user capacity, against the greedy closed form.  Geometry:
 * 2 channels x 2 ways, 64 pages per block, 64 MiB of user capacity (16,384
 * pages; 82 blocks per die at 28 %), gc_free_blocks 1.  The drive is filled
 * in order, then written at random 4 times its capacity (steady state is
 * reached within about 2), and WAF is measured over the next 4 times:
 * measured on this geometry 2.515 at 28 % (closed form 2.481), 1.722 at 50 %
 * (1.716) and 7.946 at 7 % (7.817).
 */
static double steady_waf(double op)
{
	struct ssd_params p = round_params();
	p.pages_per_block = 64;
	p.over_provisioning = op;
	const uint64_t pages = 16384;
	struct ssd *s = make(&p, pages * PG);
	struct ssd_io io;
	struct ssd_counters a, b;
	uint64_t rng = 26;
	for (uint64_t i = 0; i < pages; i++)
		ssd_submit(s, SSD_WRITE, i * PG, PG, 0, &io);
	for (uint64_t i = 0; i < 4 * pages; i++)
		ssd_submit(s, SSD_WRITE, splitmix64_next(&rng) % pages * PG, PG, 0, &io);
	ssd_get_counters(s, &a);
	for (uint64_t i = 0; i < 4 * pages; i++)
		ssd_submit(s, SSD_WRITE, splitmix64_next(&rng) % pages * PG, PG, 0, &io);
	ssd_get_counters(s, &b);
	ssd_destroy(s);
	double waf =
	    (double)(b.flash_pages - a.flash_pages) / (double)(b.host_pages - a.host_pages);
	cr_log_info("over-provisioning %.2f: WAF %.3f, greedy closed form %.3f", op, waf,
		    ssd_waf_greedy(op));
	return waf;
}

Test(ssd, waf_steady_state_greedy_closed_form)
{
	const double ops[] = {0.28, 0.5, 0.07};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		double waf = steady_waf(ops[i]), f = ssd_waf_greedy(ops[i]);
		cr_assert(fabs(waf - f) <= 0.10 * f, "op %.2f: WAF %.3f, closed form %.3f", ops[i],
			  waf, f);
	}
}

/*
 * The FTL's memory for a 64 GiB drive of 4 KiB pages (8 channels x 4 ways,
 * 256 pages per block, 7 %): 16,777,216 user pages, ceil(16,777,216 x
 * 1.07) = 17,951,622 flash pages -> 2,192 blocks per die, 17,956,864
 * flash pages, 70,144 blocks.  Map 4 x 16,777,216 + reverse map 4 x
 * 17,956,864 = 138,936,320 bytes (<= 8 per flash page) + 12 x 70,144 per
 * block = 139,778,048.
 */
Test(ssd, ftl_memory_64gib)
{
	struct ssd_params p = round_params();
	p.channels = 8;
	p.ways = 4;
	p.pages_per_block = 256;
	p.over_provisioning = 0.07;
	struct ssd *s = make(&p, UINT64_C(64) << 30);
	cr_assert_eq(ssd_blocks_per_die(s), 2192);
	cr_assert_eq(ssd_flash_bytes(s), UINT64_C(17956864) * 4096);
	cr_assert_eq(ssd_state_bytes(s), 139778048);
	cr_assert_leq(ssd_state_bytes(s) - 12 * 70144, 8 * UINT64_C(17956864));
	ssd_destroy(s);
}

/* ---- the model behind the seam: keys, presets, registry ---- */

static char cerr[512];

static int set_all(struct sfs_config *c, const char *const *kv)
{
	config_init(c);
	for (; *kv; kv++) {
		int rc = config_set(c, *kv, cerr, sizeof(cerr));
		if (rc)
			return rc;
	}
	return config_finish(c, 1 << 30, cerr, sizeof(cerr));
}

/* Each bad value is refused with its key and the allowed range. */
Test(ssd, bad_keys_refused_with_key_and_range)
{
	static const struct {
		const char *kv, *part;
	} bad[] = {
	    {"disk.channels=0", "channels = 0: allowed: 1 to 256"},
	    {"disk.ways=0", "ways = 0: allowed: 1 to 256"},
	    {"disk.pages_per_block=1", "pages_per_block = 1: allowed: 2 to 65535"},
	    {"disk.page_size=1000", "page_size = 1000: allowed: a multiple of 512"},
	    {"disk.page_size=2M", "page_size = 2M: allowed: a multiple of 512 from 512 to 1M"},
	    {"disk.over_provisioning=0", "over_provisioning = 0: must be > 0"},
	    {"disk.over_provisioning=11", "over_provisioning = 11: allowed: above 0 up to 10"},
	    {"disk.queue_depth=0", "queue_depth = 0: allowed: 1 to 65535"},
	    {"disk.read_us=0", "read_us = 0: must be > 0"},
	    {"disk.host_mb_s=0", "host_mb_s = 0: must be > 0"},
	    {"disk.gc_free_blocks=0", "gc_free_blocks = 0: allowed: 1 to 65535"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sfs_config c;
		const char *kv[] = {"disk.model=ssd", bad[i].kv, NULL};
		cr_assert_eq(set_all(&c, kv), -EINVAL, "%s accepted", bad[i].kv);
		cr_assert_not_null(strstr(cerr, bad[i].part), "%s: '%s' lacks '%s'", bad[i].kv,
				   cerr, bad[i].part);
		config_free(&c);
	}
}

/* The presets load, and their drives are what their comments say. */
Test(ssd, presets)
{
	static const struct {
		const char *file;
		uint32_t channels, ways, qd;
		double read_us, command_us, host;
		uint64_t qd1_ns; /* command + tR + page / channel + 4 KiB / host */
	} want[] = {
	    /* 10.2 + 49.4 + 10.24 + 7.314 us */
	    {"conf/ssd-sata.ini", 8, 4, 32, 49.4, 10.2, 560, 10200 + 49400 + 10240 + 7314},
	    /* 1.55 + 75 + 7.685 + 1.28 us */
	    {"conf/ssd-nvme.ini", 12, 8, 1024, 75, 1.55, 3200, 1550 + 75000 + 7685 + 1280},
	};
	for (size_t i = 0; i < 2; i++) {
		struct sfs_config c;
		config_init(&c);
		cr_assert_eq(config_load_file(&c, want[i].file, cerr, sizeof(cerr)), 0, "%s: %s",
			     want[i].file, cerr);
		cr_assert_eq(config_finish(&c, 1 << 30, cerr, sizeof(cerr)), 0, "%s", cerr);
		const struct disk_model_ops *ops = c.disk.model;
		cr_assert_eq(ops, disk_model_find("ssd"));
		const struct ssd_params *p = disk_model_params(&c.disk, ops);
		cr_assert_eq(p->channels, want[i].channels);
		cr_assert_eq(p->ways, want[i].ways);
		cr_assert_eq(p->queue_depth, want[i].qd);
		cr_assert_float_eq(p->read_us, want[i].read_us, 1e-9);
		cr_assert_float_eq(p->command_us, want[i].command_us, 1e-9);
		cr_assert_float_eq(p->interface_mb_s, want[i].host, 1e-9);
		cr_assert(p->prefill && p->write_cache);
		void *m = NULL;
		struct disk_io io;
		cr_assert_eq(ops->create(p, 1 << 30, &m, cerr, sizeof(cerr)), 0, "%s", cerr);
		/* a prefilled drive: the first random read costs the QD 1 formula */
		cr_assert_eq(ops->submit(m, DISK_READ, 123 * 4096, 4096, T, &io),
			     T + want[i].qd1_ns);
		ops->destroy(m);
		config_free(&c);
	}
}

/* A capacity the geometry cannot hold is refused by create(), naming the model. */
Test(ssd, create_refuses_capacity)
{
	struct ssd_params p = round_params();
	const struct disk_model_ops *ops = disk_model_find("ssd");
	void *m = NULL;
	p.over_provisioning = 0.01;
	cr_assert_not_null(ops);
	cr_assert_eq(ops->create(&p, MiB, &m, cerr, sizeof(cerr)), -EINVAL);
	cr_assert_null(m);
	cr_assert_str_eq(cerr,
			 "[disk] model = ssd: capacity 1048576 bytes: 17 blocks per die with "
			 "over_provisioning = 0.01 leave 1 spare, and garbage collection needs "
			 "gc_free_blocks + 2 = 3 (raise over_provisioning, or lower "
			 "pages_per_block or gc_free_blocks, or a capacity of at least 13172736 "
			 "bytes)");
}

/*
 * The presets' figures, from the model itself on a 1 GiB drive (what
 * bench/disk compares fio with): QD 1 random 4 KiB reads, 1 MiB reads at
 * QD 1, closed-loop QD 32 random 4 KiB reads, and sustained 1 MiB writes
 * (the second of two passes, the write buffer full).  Closed forms, in the
 * presets' comments:
 *   sata: 77.15 us; 10.2 + 49.4 + 10.24 + 1872.46 us per MiB = 539.9 MB/s;
 *         1 / 10.2 us = 98,039 IOPS; min(560, 32 x 4096 / 241.49 us = 542.8)
 *   nvme: 85.51 us; 1.55 + 75 + 7.685 + 327.68 us per MiB = 2,545.6 MB/s;
 *         between 283,000 (MVA) and 374,000 (no collisions);
 *         96 x 4096 / 238.93 us = 1,645.7 MB/s
 */
struct figures {
	double qd1_us, seq_read_mb_s, qd32_iops, seq_write_mb_s;
};

static struct figures run_figures(const char *file)
{
	struct sfs_config c;
	struct figures f;
	struct ssd_io io;
	const uint64_t cap = UINT64_C(1) << 30, pages = cap / PG;
	uint64_t t = T, rng = 1, t0, sum = 0;
	struct ssd *s;

	config_init(&c);
	cr_assert_eq(config_load_file(&c, file, cerr, sizeof(cerr)), 0, "%s", cerr);
	cr_assert_eq(config_finish(&c, cap, cerr, sizeof(cerr)), 0, "%s", cerr);
	s = make(disk_model_params(&c.disk, c.disk.model), cap);
	for (int k = 0; k < 2000; k++) {
		uint64_t a = t;
		t = ssd_submit(s, SSD_READ, splitmix64_next(&rng) % pages * PG, PG, a, &io);
		sum += t - a;
	}
	f.qd1_us = (double)sum / 2000 / 1e3;
	t0 = t;
	for (uint64_t k = 0; k < 100; k++)
		t = ssd_submit(s, SSD_READ, k * MiB, MiB, t, &io);
	f.seq_read_mb_s = 100.0 * MiB / ((double)(t - t0) / 1e3);
	uint64_t comp[32], last = t;
	for (int k = 0; k < 32; k++)
		comp[k] = t;
	t0 = t;
	for (int k = 0; k < 100000; k++) {
		int m = 0;
		for (int j = 1; j < 32; j++)
			if (comp[j] < comp[m])
				m = j;
		comp[m] =
		    ssd_submit(s, SSD_READ, splitmix64_next(&rng) % pages * PG, PG, comp[m], &io);
		if (comp[m] > last)
			last = comp[m];
	}
	f.qd32_iops = 100000 / ((double)(last - t0) / 1e9);
	t = last;
	for (int pass = 0; pass < 2; pass++) {
		t0 = t;
		for (uint64_t off = 0; off < cap; off += MiB)
			t = ssd_submit(s, SSD_WRITE, off, MiB, t, &io);
	}
	f.seq_write_mb_s = (double)cap / ((double)(t - t0) / 1e3);
	ssd_destroy(s);
	config_free(&c);
	cr_log_info("%s: QD 1 read %.2f us, 1 MiB read %.1f MB/s, QD 32 read %.0f IOPS, 1 MiB "
		    "write %.1f MB/s",
		    file, f.qd1_us, f.seq_read_mb_s, f.qd32_iops, f.seq_write_mb_s);
	return f;
}

Test(ssd, preset_figures)
{
	struct figures a = run_figures("conf/ssd-sata.ini");
	cr_assert_float_eq(a.qd1_us, 77.15, 0.01);
	cr_assert_float_eq(a.seq_read_mb_s, 539.9, 0.1);
	cr_assert(fabs(a.qd32_iops / 98039 - 1) < 0.01, "%.0f", a.qd32_iops);
	cr_assert(fabs(a.seq_write_mb_s / 542.8 - 1) < 0.05, "%.1f", a.seq_write_mb_s);
	struct figures b = run_figures("conf/ssd-nvme.ini");
	cr_assert_float_eq(b.qd1_us, 85.52, 0.01);
	cr_assert_float_eq(b.seq_read_mb_s, 2545.6, 0.1);
	cr_assert(b.qd32_iops > 283000 && b.qd32_iops < 374000, "%.0f", b.qd32_iops);
	cr_assert(fabs(b.seq_write_mb_s / 1645.7 - 1) < 0.05, "%.1f", b.seq_write_mb_s);
}

/*
 * The flash layout score (layout_score.h flash_score()) from the model's
 * own dies, through the disk model's die_of and page_bytes.  A drive of
 * 1 channel x 2 ways (dies 0 and 1), empty at start: the k-th page written
 * goes to die k mod 2.
 */
static int model_die_of(void *ctx, uint64_t off)
{
	return disk_model_find("ssd")->die_of(ctx, off);
}

static struct ssd *two_die_drive(void)
{
	struct ssd_params p = round_params();
	p.channels = 1;
	return make(&p, 1 * MiB);
}

static void flash_is(struct ssd *s, const struct layout_extent *v, size_t n, uint64_t pages,
		     uint64_t pairs, uint64_t apart, double score)
{
	struct flash_stats f;
	const struct disk_model_ops *ops = disk_model_find("ssd");
	cr_assert_eq(ops->page_bytes(s), PG);
	flash_score(v, n, ops->page_bytes(s), model_die_of, s, &f);
	cr_assert_eq(f.pages, pages, "pages %llu", (unsigned long long)f.pages);
	cr_assert_eq(f.pairs, pairs, "pairs %llu", (unsigned long long)f.pairs);
	cr_assert_eq(f.apart, apart, "apart %llu", (unsigned long long)f.apart);
	cr_assert_eq(flash_stats_score(&f), score, "score %g", flash_stats_score(&f));
}

/* File A (pages 0-3) written alone: writes 0-3 on dies 0, 1, 0, 1: 3 pairs, all apart. */
Test(ssd_flash_score, written_alone)
{
	struct ssd *s = two_die_drive();
	const struct layout_extent a[] = {{0, 0, 4 * PG}};
	write_pages(s, 0, 4);
	flash_is(s, a, 1, 4, 3, 3, 1.0);
	ssd_destroy(s);
}

/*
 * A (pages 0-3) and B (pages 8-11) written interleaved, one page each in
 * turn: A's pages are writes 0, 2, 4, 6, all on die 0: 3 pairs, none
 * apart, score 0; B's writes 1, 3, 5, 7, all on die 1, likewise.  Reading
 * A at T: 5 command, then die 0 senses and sends its four pages one after
 * the other (50 us each: 40 tR + 10 channel) and the last crosses the
 * host interface: 5 + 4 x 50 + 5 = 210 us, with 3 collisions.
 */
Test(ssd_flash_score, interleaved_one_die)
{
	struct ssd *s = two_die_drive();
	struct ssd_io io;
	const struct layout_extent a[] = {{0, 0, 4 * PG}}, b[] = {{0, 8 * PG, 4 * PG}};
	for (int i = 0; i < 4; i++) {
		write_pages(s, i, 1);
		write_pages(s, 8 + i, 1);
	}
	flash_is(s, a, 1, 4, 3, 0, 0.0);
	flash_is(s, b, 1, 4, 3, 0, 0.0);
	cr_assert_eq(ssd_submit(s, SSD_READ, 0, 4 * PG, T, &io), T + 210000);
	cr_assert_eq(io.dies, 1);
	cr_assert_eq(io.collisions, 3);
	ssd_destroy(s);
}

/*
 * A0, A1, B0, A2, A3: writes 0-4 on dies 0, 1, 0, 1, 0, so A's pages are
 * on 0, 1, 1, 0: pairs (0,1) apart, (1,1) not, (1,0) apart: 2 of 3.
 */
Test(ssd_flash_score, one_write_between)
{
	struct ssd *s = two_die_drive();
	const struct layout_extent a[] = {{0, 0, 4 * PG}};
	write_pages(s, 0, 2);
	write_pages(s, 8, 1);
	write_pages(s, 2, 2);
	flash_is(s, a, 1, 4, 3, 2, 2.0 / 3.0);
	ssd_destroy(s);
}

/*
 * The file's pages are those its extents cover on the device, in logical
 * order.  Writes: pages 0, 1, 2, 3, 5 (writes 0-4: dies 0, 1, 0, 1, 0);
 * page 4 never written.  Extents: logical [0, 4096+100) at device 0
 * (pages 0 and 1, the second in part), [4196, 4296) at device 4196 (page
 * 1 again: counted once), a hole, then [3 pages, +3 pages) at device 3
 * pages: pages 3, 4 (unmapped: left out) and 5.  Pages 0, 1, 3, 5 on dies
 * 0, 1, 1, 0: 4 pages, 3 pairs, 2 apart.
 */
Test(ssd_flash_score, extents_holes_unmapped)
{
	struct ssd *s = two_die_drive();
	const struct layout_extent v[] = {
	    {0, 0, PG + 100}, {PG + 100, PG + 100, 100}, {3 * PG, 3 * PG, 3 * PG}};
	write_pages(s, 0, 4);
	write_pages(s, 5, 1);
	cr_assert_eq(ssd_die_of(s, 4 * PG), -1);
	cr_assert_eq(ssd_die_of(s, 5 * PG), 0);
	flash_is(s, v, 3, 4, 3, 2, 2.0 / 3.0);
	/* trimming page 1 leaves pages 0, 3, 5 on dies 0, 1, 0: 2 pairs, both apart */
	ssd_trim(s, PG, PG);
	flash_is(s, v, 3, 3, 2, 2, 1.0);
	ssd_destroy(s);
}

/*
 * What the score does not see: on 4 dies (round_drive()) the interleaved
 * write of write_order_die_assignment puts A on dies 0, 2, 0, 2: every
 * neighbour is on another die (score 1), yet a read of the four pages
 * collides twice.  The log's dies column and read_collisions show that.
 */
Test(ssd_flash_score, neighbours_only)
{
	struct ssd *s = round_drive();
	const struct layout_extent a[] = {{0, 0, 4 * PG}};
	for (int i = 0; i < 4; i++) {
		write_pages(s, i, 1);
		write_pages(s, 8 + i, 1);
	}
	flash_is(s, a, 1, 4, 3, 3, 1.0);
	ssd_destroy(s);
}

/* No page holds data (an empty drive without prefill): nothing paired, score 1. */
Test(ssd_flash_score, nothing_written)
{
	struct ssd *s = two_die_drive();
	const struct layout_extent a[] = {{0, 0, 4 * PG}};
	flash_is(s, a, 1, 0, 0, 0, 1.0);
	ssd_destroy(s);
}
