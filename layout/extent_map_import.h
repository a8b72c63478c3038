/*
 * Extent maps read from text: the CSV that .scatterfs/extents/PATH and
 * scatterfs-plan print, the text of e2fsprogs' `filefrag -v`, and the text
 * of xfsprogs' `xfs_bmap -v`.  Used by the map placement pattern and by
 * scatterfs-report --layout.  Pure text parsing: no file system is asked.
 */
#ifndef SCATTERFS_EXTENT_MAP_IMPORT_H
#define SCATTERFS_EXTENT_MAP_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum map_format { MAP_AUTO, MAP_CSV, MAP_FILEFRAG, MAP_XFS_BMAP };

/** One extent of an imported map, in bytes; holes are not extents. */
struct map_extent {
	uint64_t logical;  /* logical offset in the file */
	uint64_t physical; /* physical offset as the map gives it (FIEMAP's fe_physical) */
	uint64_t length;
	unsigned line;	 /* line of the map text that gave it (1 = first) */
	bool unwritten;	 /* preallocated, never written: reads as zeros */
	uint32_t device; /* map_import_devices(): index into devices[] (0 without the column) */
};

struct imported_map {
	struct map_extent *v; /* sorted by logical offset, not overlapping */
	size_t n;
	enum map_format format; /* the format read (never MAP_AUTO) */
	char **devices;		/* map_import_devices(): names of the device column, in */
	size_t ndevices;	/* order of first appearance; 0 without the column */
};

/**
 * map_format_detect() - the format of the @len bytes at @text: MAP_CSV when
 * the first non-empty line is the CSV header "logical_offset,device_offset,
 * length", MAP_FILEFRAG when a line starts with "Filesystem type is:" or
 * " ext:" followed by "logical_offset", MAP_XFS_BMAP when a line holds
 * "EXT: FILE-OFFSET"; MAP_AUTO when none matches.
 */
enum map_format map_format_detect(const char *text, size_t len);

/**
 * map_import() - parses the @len bytes at @text, named @name in messages,
 * in format @fmt (MAP_AUTO: map_format_detect()).
 *
 * CSV: the header, then "LOGICAL,PHYSICAL,LENGTH" rows in bytes.
 * filefrag -v: the block size from "(N blocks of B bytes)" (4096 when the
 * line is missing), then rows "I: L1.. L2: P1.. P2: LEN: [EXPECTED] FLAGS"
 * in blocks; flag "unwritten" marks an unwritten extent.
 * xfs_bmap -v: rows "I: [L1..L2]: P1..P2 ..." in 512-byte units (both
 * ranges inclusive), "hole" rows skipped; a FLAGS column (octal, after
 * TOTAL) with bit 0100000 set marks an unwritten extent (xfs_bmap -p).
 *
 * Refused, with "NAME:LINE: reason" in @err: a line that is none of the
 * format's header, row or known trailer lines (garbage), a row whose
 * numbers are malformed or whose length is 0, a row whose logical offset
 * is not past the previous row's end (unsorted or overlapping), two rows
 * whose physical ranges overlap, and a map without extents (line 0).
 * @out: filled on success (free with imported_map_release()); left empty
 * on failure.
 * @return 0, -EINVAL (message in @err), -ENOMEM.
 */
int map_import(const char *text, size_t len, enum map_format fmt, const char *name,
	       struct imported_map *out, char *err, size_t errlen);

/**
 * map_import_file() - map_import() of the file at @path (named by @path).
 * @return 0, -errno from reading the file (message in @err), or as map_import().
 */
int map_import_file(const char *path, enum map_format fmt, struct imported_map *out, char *err,
		    size_t errlen);

/**
 * map_import_devices() - map_import(), where a CSV map may also have the
 * fourth column "device" that .scatterfs/extents/PATH prints on a mount
 * with several devices (header "logical_offset,device_offset,length,device",
 * names of letters, digits, '_', '.' and '-').  Then @out->devices names
 * them and each extent's device indexes it; physical ranges may overlap
 * only on different devices.  map_import() refuses that column (a
 * placement map places on one device).
 * @return as map_import().
 */
int map_import_devices(const char *text, size_t len, enum map_format fmt, const char *name,
		       struct imported_map *out, char *err, size_t errlen);

/** map_import_file_devices() - map_import_devices() of the file at @path. */
int map_import_file_devices(const char *path, enum map_format fmt, struct imported_map *out,
			    char *err, size_t errlen);

/** imported_map_release() - frees @m's extents and names; @m is empty afterwards. */
void imported_map_release(struct imported_map *m);

/** map_format_name() - "auto", "csv", "filefrag" or "xfs_bmap". */
const char *map_format_name(enum map_format f);

#endif
