/*
 * Unit tests for the extent map parsers (layout/extent_map_import.h): one
 * case per format, with the text as the tools print it, then each refusal
 * with its exact message.
 */
#undef NDEBUG
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "extent_map_import.h"

static void extent_is(const struct imported_map *m, size_t i, uint64_t logical, uint64_t physical,
		      uint64_t length, unsigned line, bool unwritten)
{
	cr_assert_lt(i, m->n, "extent %zu of %zu", i, m->n);
	cr_assert_eq(m->v[i].logical, logical, "extent %zu logical %llu", i,
		     (unsigned long long)m->v[i].logical);
	cr_assert_eq(m->v[i].physical, physical, "extent %zu physical %llu", i,
		     (unsigned long long)m->v[i].physical);
	cr_assert_eq(m->v[i].length, length, "extent %zu length %llu", i,
		     (unsigned long long)m->v[i].length);
	cr_assert_eq(m->v[i].line, line, "extent %zu line %u", i, m->v[i].line);
	cr_assert_eq(m->v[i].unwritten, unwritten, "extent %zu unwritten", i);
}

static int parse(const char *text, enum map_format fmt, struct imported_map *m, char *err)
{
	return map_import(text, strlen(text), fmt, "m.map", m, err, 256);
}

Test(map_import, csv)
{
	struct imported_map m;
	char err[256] = "";

	cr_assert_eq(parse("logical_offset,device_offset,length\n"
			   "0,1048576,73728\n"
			   "73728,0,8192\n",
			   MAP_AUTO, &m, err),
		     0, "%s", err);
	cr_assert_eq(m.format, MAP_CSV);
	cr_assert_eq(m.n, 2);
	extent_is(&m, 0, 0, 1048576, 73728, 2, false);
	extent_is(&m, 1, 73728, 0, 8192, 3, false);
	imported_map_release(&m);
}

/* filefrag -v of e2fsprogs 1.47 on ext4 with 1 KiB blocks: units of 1024 bytes. */
Test(map_import, filefrag)
{
	static const char text[] =
	    "Filesystem type is: ef53\n"
	    "File size of /mnt/e/a is 40960 (40 blocks of 1024 bytes)\n"
	    " ext:     logical_offset:        physical_offset: length:   expected: flags:\n"
	    "   0:        0..       7:       8705..      8712:      8:            \n"
	    "   1:        8..      15:       8721..      8728:      8:       8713:\n"
	    "   2:       24..      39:      10000..     10015:     16:       8729: "
	    "last,unwritten,eof\n"
	    "/mnt/e/a: 3 extents found\n";
	struct imported_map m;
	char err[256] = "";

	cr_assert_eq(map_format_detect(text, strlen(text)), MAP_FILEFRAG);
	cr_assert_eq(parse(text, MAP_AUTO, &m, err), 0, "%s", err);
	cr_assert_eq(m.n, 3);
	extent_is(&m, 0, 0, 8705 * 1024, 8 * 1024, 4, false);
	extent_is(&m, 1, 8 * 1024, 8721 * 1024, 8 * 1024, 5, false);
	extent_is(&m, 2, 24 * 1024, 10000 * 1024, 16 * 1024, 6, true);
	imported_map_release(&m);
}

/* xfs_bmap -v (-p: FLAGS column): 512-byte units, inclusive ranges, a hole kept. */
Test(map_import, xfs_bmap)
{
	static const char text[] =
	    "/mnt/x/a:\n"
	    " EXT: FILE-OFFSET      BLOCK-RANGE      AG AG-OFFSET        TOTAL FLAGS\n"
	    "   0: [0..7]:          96..103           0 (96..103)            8 000000\n"
	    "   1: [8..15]:         hole                                     8\n"
	    "   2: [16..31]:        200..215          0 (200..215)          16 100000\n";
	struct imported_map m;
	char err[256] = "";

	cr_assert_eq(map_format_detect(text, strlen(text)), MAP_XFS_BMAP);
	cr_assert_eq(parse(text, MAP_AUTO, &m, err), 0, "%s", err);
	cr_assert_eq(m.n, 2);
	extent_is(&m, 0, 0, 96 * 512, 8 * 512, 3, false);
	extent_is(&m, 1, 16 * 512, 200 * 512, 16 * 512, 5, true);
	imported_map_release(&m);
}

static void refused(const char *text, enum map_format fmt, const char *msg)
{
	struct imported_map m;
	char err[256] = "";

	cr_assert_eq(parse(text, fmt, &m, err), -EINVAL);
	cr_assert_str_eq(err, msg);
	cr_assert_eq(m.n, 0);
	cr_assert_null(m.v);
}

Test(map_import, empty)
{
	refused("", MAP_AUTO, "m.map:0: no extents in the map (empty file)");
	refused("logical_offset,device_offset,length\n", MAP_CSV, "m.map:0: no extents in the map");
}

Test(map_import, garbage_line)
{
	refused("logical_offset,device_offset,length\n0,0,4096\nhello\n", MAP_AUTO,
		"m.map:3: expected LOGICAL_OFFSET,DEVICE_OFFSET,LENGTH in bytes");
	refused("hello\n", MAP_AUTO,
		"m.map:1: not an extent map: expected the CSV header "
		"'logical_offset,device_offset,length', filefrag -v or xfs_bmap -v output");
	refused("Filesystem type is: ef53\n   0:  0..  7: x\n", MAP_AUTO,
		"m.map:2: expected 'N: LOGICAL.. LAST: PHYSICAL.. LAST: LENGTH:'");
	refused(" EXT: FILE-OFFSET  BLOCK-RANGE\n garbage\n", MAP_AUTO,
		"m.map:2: not a line of xfs_bmap -v");
	refused("logical_offset,device_offset,length\n0,0,0\n", MAP_CSV,
		"m.map:2: extent of length 0");
}

Test(map_import, unsorted)
{
	refused("logical_offset,device_offset,length\n8192,0,4096\n0,4096,4096\n", MAP_CSV,
		"m.map:3: logical offset 0 is before the end of line 2's extent (12288): the map "
		"must be sorted by logical offset");
}

Test(map_import, overlapping_physical)
{
	refused("logical_offset,device_offset,length\n0,0,8192\n8192,4096,4096\n", MAP_CSV,
		"m.map:3: physical range overlaps the extent of line 2");
}

static int parse_devices(const char *text, struct imported_map *m, char *err)
{
	return map_import_devices(text, strlen(text), MAP_AUTO, "m.map", m, err, 256);
}

Test(map_import, csv_with_the_device_column)
{
	struct imported_map m;
	char err[256] = "";

	/* Physical ranges may coincide on different devices. */
	cr_assert_eq(parse_devices("logical_offset,device_offset,length,device\n"
				   "0,1048576,65536,main\n"
				   "65536,1048576,8192,wal\n"
				   "73728,1114112,8192,main\n",
				   &m, err),
		     0, "%s", err);
	cr_assert_eq(m.n, 3);
	cr_assert_eq(m.ndevices, 2);
	cr_assert_str_eq(m.devices[0], "main");
	cr_assert_str_eq(m.devices[1], "wal");
	extent_is(&m, 1, 65536, 1048576, 8192, 3, false);
	cr_assert_eq(m.v[0].device, 0);
	cr_assert_eq(m.v[1].device, 1);
	cr_assert_eq(m.v[2].device, 0);
	imported_map_release(&m);
	cr_assert_eq(m.ndevices, 0);

	/* Without the column: as map_import(), no devices. */
	cr_assert_eq(parse_devices("logical_offset,device_offset,length\n0,0,4096\n", &m, err), 0);
	cr_assert_eq(m.ndevices, 0);
	cr_assert_eq(m.v[0].device, 0);
	imported_map_release(&m);

	/* On one device they may not. */
	cr_assert_eq(parse_devices("logical_offset,device_offset,length,device\n"
				   "0,0,8192,wal\n"
				   "8192,4096,8192,wal\n",
				   &m, err),
		     -EINVAL);
	cr_assert_str_eq(err, "m.map:3: physical range overlaps the extent of line 2");
	cr_assert_eq(
	    parse_devices("logical_offset,device_offset,length,device\n0,0,8192,w@l\n", &m, err),
	    -EINVAL);
	cr_assert_str_eq(err, "m.map:2: expected a device name (letters, digits, '_', '.' and '-') "
			      "in the device column");
	cr_assert_eq(
	    parse_devices("logical_offset,device_offset,length,device\n0,0,8192\n", &m, err),
	    -EINVAL);
	cr_assert_str_eq(err, "m.map:2: expected LOGICAL_OFFSET,DEVICE_OFFSET,LENGTH,DEVICE");

	/* map_import() (a placement map) refuses the column. */
	cr_assert_eq(
	    parse("logical_offset,device_offset,length,device\n0,0,8192,main\n", MAP_AUTO, &m, err),
	    -EINVAL);
	cr_assert_str_eq(err, "m.map:1: expected the header 'logical_offset,device_offset,length'");
}
