/*
 * The map placement pattern (layout/pattern_map.c): a file written
 * sequentially gets exactly the map's extents, moved by map_base and
 * rounded out to the block size; space outside the map goes to map_then;
 * every kind of bad map stops config_finish() with the map file, its line
 * and the reason.  Maps and configurations are written to a mkdtemp()
 * directory per test.
 */
#undef NDEBUG
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "autoextend.h"
#include "config.h"
#include "extmap.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)

static char dir[] = "/tmp/test_pattern_map.XXXXXX";

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(map, .init = setup, .fini = teardown);

/* Writes @text to DIR/@name; the path in @path (256 bytes). */
static void put(const char *name, const char *text, char *path)
{
	snprintf(path, 256, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

/* Loads and finishes the INI @text for a device of @device bytes: 0 or -errno, message in @err. */
static int load(struct sfs_config *c, const char *text, uint64_t device, char *err)
{
	char path[256];

	put("t.ini", text, path);
	config_init(c);
	int rc = config_load_file(c, path, err, 1024);
	if (rc == 0)
		rc = config_finish(c, device, err, 1024);
	return rc;
}

/* Writes @path's file from 0 to @size block by block at the allocated end, as scatterfs-plan. */
static void write_file(const struct sfs_config *c, struct devalloc *a, const char *path,
		       uint64_t size, struct extent_map *m)
{
	const struct file_params *fp = config_for_path(c, path);
	struct run_vec gaps = {0};
	struct alloc_plan plan = {0};
	uint64_t end;

	extmap_init(m);
	while ((end = extmap_end(m)) < size)
		cr_assert_eq(layout_allocate(fp, a, m, &gaps, end, c->device.block_size, &plan), 0);
	alloc_plan_release(&plan);
	run_vec_release(&gaps);
}

static void extent_is(const struct extent_map *m, size_t i, uint64_t logical, uint64_t device,
		      uint64_t length)
{
	cr_assert_lt(i, m->n, "entry %zu of %zu", i, m->n);
	cr_assert_eq(m->v[i].logical, logical, "entry %zu logical %llu", i,
		     (unsigned long long)m->v[i].logical);
	cr_assert_eq(m->v[i].device, device, "entry %zu device %llu", i,
		     (unsigned long long)m->v[i].device);
	cr_assert_eq(m->v[i].length, length, "entry %zu length %llu", i,
		     (unsigned long long)m->v[i].length);
}

/*
 * The CSV map's physical offsets 1M, 1M+32K, 1M+16K less the lowest (1M),
 * plus map_base 64K: device 64K, 96K, 80K, in the map's lengths.  Past the
 * map's end (28K) map_then = contiguous: after the previous extent's end
 * (80K + 16K = 96K, taken by the second extent), so at 100K, in a 64K
 * extent.
 */
Test(map, csv_extents_land_where_the_map_says)
{
	char path[256], ini[1024], err[1024] = "";
	struct sfs_config c;
	struct devalloc *a;
	struct extent_map m;

	put("a.map",
	    "logical_offset,device_offset,length\n"
	    "0,1048576,8192\n"
	    "8192,1081344,4096\n"
	    "12288,1064960,16384\n",
	    path);
	snprintf(ini, sizeof(ini),
		 "[device]\nblock_size = 4K\n[layout]\nextent_size = 64K\n"
		 "[file \"a\"]\npattern = map\nmap = %s\nmap_base = 64K\n",
		 path);
	cr_assert_eq(load(&c, ini, 4 * MiB, err), 0, "%s", err);
	cr_assert_eq(devalloc_create(4 * MiB, 4096, &a), 0);
	write_file(&c, a, "a", 40 * KiB, &m);
	cr_assert_eq(m.n, 4);
	extent_is(&m, 0, 0, 64 * KiB, 8 * KiB);
	extent_is(&m, 1, 8 * KiB, 96 * KiB, 4 * KiB);
	extent_is(&m, 2, 12 * KiB, 80 * KiB, 16 * KiB);
	extent_is(&m, 3, 28 * KiB, 100 * KiB, 64 * KiB);
	extmap_release(&m);
	devalloc_destroy(a);
	config_free(&c);
}

/*
 * filefrag -v in 1 KiB blocks on a 4 KiB-block mount: extent 0 is 1K
 * blocks 0-7 at physical 8704-8711 (8 MiB + 512 KiB), extent 1 is blocks
 * 12-15 at 8720-8723: logical 12K-16K.  Relative to the lowest (8704 KiB):
 * 0 and 16K.  The hole at logical 8K-12K is placed by map_then
 * (contiguous: right after extent 0, at device 8K) in an extent that stops
 * where the map's next extent starts.
 */
Test(map, filefrag_block_size_and_hole)
{
	char path[256], ini[1024], err[1024] = "";
	struct sfs_config c;
	struct devalloc *a;
	struct extent_map m;

	put("b.txt",
	    "Filesystem type is: ef53\n"
	    "File size of /mnt/b is 16384 (16 blocks of 1024 bytes)\n"
	    " ext:     logical_offset:        physical_offset: length:   expected: flags:\n"
	    "   0:        0..       7:       8704..      8711:      8:\n"
	    "   1:       12..      15:       8720..      8723:      4:       8712: last,eof\n"
	    "/mnt/b: 2 extents found\n",
	    path);
	snprintf(ini, sizeof(ini),
		 "[device]\nblock_size = 4K\n[file \"b\"]\npattern = map\nmap = %s\n"
		 "map_format = filefrag\n",
		 path);
	cr_assert_eq(load(&c, ini, 4 * MiB, err), 0, "%s", err);
	cr_assert_eq(devalloc_create(4 * MiB, 4096, &a), 0);
	write_file(&c, a, "b", 16 * KiB, &m);
	cr_assert_eq(m.n, 3);
	extent_is(&m, 0, 0, 0, 8 * KiB);
	extent_is(&m, 1, 8 * KiB, 8 * KiB, 4 * KiB);
	extent_is(&m, 2, 12 * KiB, 16 * KiB, 4 * KiB);
	extmap_release(&m);
	devalloc_destroy(a);
	config_free(&c);
}

/* Each refusal: the configuration's place of map =, the map file, its line and the reason. */
static void refused(const char *map_text, const char *extra, uint64_t device, const char *reason)
{
	char path[256], ini[2048], err[1024] = "", want[2048];
	struct sfs_config c;

	put("bad.map", map_text, path);
	snprintf(ini, sizeof(ini),
		 "[device]\nblock_size = 4K\n[file \"a\"]\npattern = map\nmap = %s\n%s", path,
		 extra);
	cr_assert_eq(load(&c, ini, device, err), -EINVAL);
	snprintf(want, sizeof(want), "%s/t.ini:5: [file \"a\"] map = %s: %s%s", dir, path, path,
		 reason);
	cr_assert_str_eq(err, want);
	config_free(&c);
}

Test(map, refuses_unsorted)
{
	refused("logical_offset,device_offset,length\n8192,0,4096\n0,4096,4096\n", "", 4 * MiB,
		":3: logical offset 0 is before the end of line 2's extent (12288): the map must "
		"be sorted by logical offset");
}

Test(map, refuses_garbage_line)
{
	refused("logical_offset,device_offset,length\n0,0,4096\nx,y\n", "", 4 * MiB,
		":3: expected LOGICAL_OFFSET,DEVICE_OFFSET,LENGTH in bytes");
}

Test(map, refuses_empty)
{
	refused("", "", 4 * MiB, ":0: no extents in the map (empty file)");
}

Test(map, refuses_past_the_device)
{
	/* 1M lowest, so the second extent ends at 3M - 1M + 2M = 4M + 4K. */
	refused("logical_offset,device_offset,length\n0,1048576,4096\n4096,3145728,2101248\n", "",
		4 * MiB,
		":3: extent ends at device offset 4198400, past the device (4194304 bytes)");
}

Test(map, refuses_a_map_overlapping_another_files)
{
	char path[256], other[256], ini[2048], err[1024] = "", want[2048];
	struct sfs_config c;

	put("one.map", "logical_offset,device_offset,length\n0,0,8192\n", other);
	put("two.map", "logical_offset,device_offset,length\n0,0,4096\n4096,8192,4096\n", path);
	/* two.map at base 4K: device 4K-8K (line 2) and 12K-16K; one.map holds 0-8K. */
	snprintf(ini, sizeof(ini),
		 "[device]\nblock_size = 4K\n[file \"one\"]\npattern = map\nmap = %s\n"
		 "[file \"two\"]\npattern = map\nmap = %s\nmap_base = 4K\n",
		 other, path);
	cr_assert_eq(load(&c, ini, 4 * MiB, err), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s/t.ini:8: [file \"two\"] map = %s: %s:2: overlaps the map of [file \"one\"] "
		 "(%s:2) on the device",
		 dir, path, path, other);
	cr_assert_str_eq(err, want);
	config_free(&c);
}

Test(map, needs_a_map)
{
	char err[1024] = "", want[1024];
	struct sfs_config c;

	cr_assert_eq(load(&c, "[file \"a\"]\npattern = map\n", 4 * MiB, err), -EINVAL);
	snprintf(want, sizeof(want), "%s/t.ini:2: [file \"a\"] pattern = map needs map = FILE",
		 dir);
	cr_assert_str_eq(err, want);
	config_free(&c);
}
