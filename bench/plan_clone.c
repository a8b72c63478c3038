/*
 * scatterfs-plan clone DIR [--out CONFIG]: a configuration that reproduces
 * DIR's real layout on a scatterfs mount.
 *
 * Every regular file under DIR (on DIR's own file system: another mount's
 * offsets mean nothing next to these) is asked for its extent map with the
 * FIEMAP ioctl (Documentation/filesystems/fiemap.rst in the Linux sources;
 * linux/fiemap.h).  Each file with extents gets a map file, the CSV of
 * .scatterfs/extents/PATH with FIEMAP's physical offsets, in CONFIG.maps/,
 * and a rule
 *
 *     [file "relative/path"]
 *     pattern = map
 *     map = /abs/CONFIG.maps/N.csv
 *     map_base = (the file's lowest physical offset) - (the lowest of all)
 *
 * so the files keep their relative physical positions, the lowest landing
 * at device offset 0 (the map pattern moves each map by its own lowest,
 * map_base puts it back).  [device] block_size is the largest power of two
 * up to 4K that divides every offset and length, so no extent is rounded.
 * A file FIEMAP cannot map (tmpfs, FUSE, inline data, encoded extents) is
 * named on standard error and gets pattern = contiguous.  Map paths are
 * absolute so the daemon finds them from any working directory.
 *
 * Unwritten (preallocated) extents are in the maps like the others, but a
 * copy reads them as zeros: cp, which finds them with SEEK_DATA as holes,
 * leaves holes.  So the clone also writes CONFIG.prealloc, a shell script
 * of `fallocate -n` calls (util-linux) that, run on the mount after the
 * copy, allocates each of them where its map says, unwritten (the
 * configuration sets autoextend.zero_fill = none, or the allocation would
 * write zeros there); one that the copy wrote is already allocated and
 * stays as the copy left it.
 *
 * The page cache: DIR's file system reads through the kernel's page cache
 * with the read-ahead of its block device, so a database's reads reach the
 * disk as read-ahead-sized requests there.  The clone says the same:
 * [cache] mode = kernel, and readahead = the source's read_ahead_kb (the
 * bdi of DIR's device, /sys/class/bdi/MAJ:MIN, or of the whole disk for a
 * partition), within what scatterfs takes (a multiple of 4K from 4K to
 * 1M); with the default, mode = none, every read would reach the disk at
 * the database's own size, which the source never did.  Said in the file
 * and on standard error, with the value's source.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "plan_clone.h"

#define BATCH 256 /* extents per FIEMAP call */

/* Flags under which FIEMAP's physical offset is not where the bytes are. */
#define UNMAPPABLE                                                                                 \
	(FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_ENCODED |                  \
	 FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_NOT_ALIGNED)

struct cfile {
	char *rel; /* path relative to DIR */
	struct fiemap_extent *v;
	size_t n;
	bool unmappable;
	uint64_t lowest;
};

static struct {
	const char *root;
	size_t rootlen;
	struct cfile *files;
	size_t n, cap;
	int err;
} walk;

/* The extents of @fd; -errno, or -EINVAL when one of them cannot be placed. */
static int fiemap_all(int fd, struct fiemap_extent **out, size_t *n)
{
	struct fiemap *fm = calloc(1, sizeof(*fm) + BATCH * sizeof(struct fiemap_extent));
	struct fiemap_extent *v = NULL;
	size_t cap = 0;
	uint64_t start = 0;
	bool last = false;

	*n = 0;
	if (fm == NULL)
		return -ENOMEM;
	while (!last) {
		memset(fm, 0, sizeof(*fm));
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_flags = FIEMAP_FLAG_SYNC; /* delayed allocations get their place first */
		fm->fm_extent_count = BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
			int rc = -errno;
			free(fm);
			free(v);
			return rc;
		}
		if (fm->fm_mapped_extents == 0)
			break;
		for (unsigned i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &fm->fm_extents[i];
			if (e->fe_flags & UNMAPPABLE) {
				free(fm);
				free(v);
				return -EINVAL;
			}
			if (*n == cap) {
				struct fiemap_extent *w =
				    realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*w));
				if (w == NULL) {
					free(fm);
					free(v);
					return -ENOMEM;
				}
				v = w;
			}
			v[(*n)++] = *e;
			start = e->fe_logical + e->fe_length;
			last = e->fe_flags & FIEMAP_EXTENT_LAST;
		}
	}
	free(fm);
	*out = v;
	return 0;
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	if (walk.n == walk.cap) {
		struct cfile *f =
		    realloc(walk.files, (walk.cap = walk.cap ? 2 * walk.cap : 64) * sizeof(*f));
		if (f == NULL)
			return walk.err = -ENOMEM;
		walk.files = f;
	}
	struct cfile *f = &walk.files[walk.n];
	*f = (struct cfile){0};
	f->rel = strdup(path + walk.rootlen + 1);
	if (f->rel == NULL)
		return walk.err = -ENOMEM;
	walk.n++;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	int rc = fd < 0 ? -errno : fiemap_all(fd, &f->v, &f->n);
	if (fd >= 0)
		close(fd);
	if (rc == -ENOMEM)
		return walk.err = rc;
	if (rc < 0) {
		fprintf(stderr, "scatterfs-plan: %s: %s: placed contiguously\n", path,
			rc == -EINVAL ? "FIEMAP gives an extent without a physical place"
				      : strerror(-rc));
		f->unmappable = true;
		return 0;
	}
	f->lowest = UINT64_MAX;
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].fe_physical < f->lowest)
			f->lowest = f->v[i].fe_physical;
	return 0;
}

/* The first number in the file @path into @v; 0, or -1 when unreadable. */
static int read_number(const char *path, unsigned long long *v)
{
	FILE *f = fopen(path, "re");
	if (f == NULL)
		return -1;
	int rc = fscanf(f, "%llu", v) == 1 ? 0 : -1;
	fclose(f);
	return rc;
}

/*
 * The read-ahead of the file system holding @dir, KiB, into @kb, and the
 * file it came from into @from; -1 when there is none to read (tmpfs, a
 * file system without a block device of its own).
 */
static int source_readahead(const char *dir, unsigned long long *kb, char *from, size_t len)
{
	struct stat st;
	char p[PATH_MAX + 16], real[PATH_MAX];
	unsigned long long maj, min;

	if (stat(dir, &st) != 0)
		return -1;
	snprintf(from, len, "/sys/class/bdi/%u:%u/read_ahead_kb", major(st.st_dev),
		 minor(st.st_dev));
	if (read_number(from, kb) == 0)
		return 0;
	/* A partition has no bdi of its own: its disk's (the parent in sysfs). */
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u", major(st.st_dev), minor(st.st_dev));
	if (realpath(p, real) == NULL)
		return -1;
	snprintf(p, sizeof(p), "%s/../dev", real);
	FILE *f = fopen(p, "re");
	if (f == NULL)
		return -1;
	int n = fscanf(f, "%llu:%llu", &maj, &min);
	fclose(f);
	if (n != 2)
		return -1;
	snprintf(from, len, "/sys/class/bdi/%llu:%llu/read_ahead_kb", maj, min);
	return read_number(from, kb);
}

static uint64_t low_pow2(uint64_t x)
{
	return x & -x;
}

/* A glob that matches @rel only: fnmatch's specials escaped. */
static void glob_of(const char *rel, FILE *out)
{
	for (; *rel; rel++) {
		if (strchr("*?[]\\", *rel))
			fputc('\\', out);
		fputc(*rel, out);
	}
}

static int by_rel(const void *a, const void *b)
{
	return strcmp(((const struct cfile *)a)->rel, ((const struct cfile *)b)->rel);
}

int plan_clone(const char *dir, const char *out_path)
{
	char root[PATH_MAX], maps[PATH_MAX + 16], mapdir_abs[PATH_MAX];
	uint64_t lowest = UINT64_MAX, span = 0, g = 4096;
	size_t mapped = 0;
	FILE *out;
	int status = 1;

	if (realpath(dir, root) == NULL) {
		fprintf(stderr, "scatterfs-plan: clone %s: %s\n", dir, strerror(errno));
		return 1;
	}
	struct stat st;
	int not_dir = stat(root, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	if (not_dir) {
		fprintf(stderr, "scatterfs-plan: clone %s: %s\n", dir, strerror(not_dir));
		return 1;
	}
	walk.root = root;
	walk.rootlen = strlen(root);
	if (nftw(root, visit, 64, FTW_PHYS | FTW_MOUNT) != 0 || walk.err) {
		fprintf(stderr, "scatterfs-plan: clone %s: %s\n", dir,
			strerror(walk.err ? -walk.err : errno));
		return 1;
	}
	qsort(walk.files, walk.n, sizeof(*walk.files), by_rel);
	for (size_t i = 0; i < walk.n; i++)
		if (!walk.files[i].unmappable && walk.files[i].n && walk.files[i].lowest < lowest)
			lowest = walk.files[i].lowest;
	for (size_t i = 0; i < walk.n; i++) {
		const struct cfile *f = &walk.files[i];
		for (size_t k = 0; !f->unmappable && k < f->n; k++) {
			const struct fiemap_extent *e = &f->v[k];
			uint64_t end = e->fe_physical - lowest + e->fe_length;
			g = low_pow2(g | (e->fe_physical - lowest) | e->fe_logical | e->fe_length);
			span = end > span ? end : span;
		}
	}
	if (g < 512)
		g = 512; /* the map pattern rounds out to the smallest block scatterfs has */

	snprintf(maps, sizeof(maps), "%s.maps", out_path);
	if (mkdir(maps, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "scatterfs-plan: %s: %s\n", maps, strerror(errno));
		return 1;
	}
	if (realpath(maps, mapdir_abs) == NULL) {
		fprintf(stderr, "scatterfs-plan: %s: %s\n", maps, strerror(errno));
		return 1;
	}
	char pre_path[PATH_MAX + 16];
	snprintf(pre_path, sizeof(pre_path), "%s.prealloc", out_path);
	FILE *pre = fopen(pre_path, "w");
	if (pre == NULL) {
		fprintf(stderr, "scatterfs-plan: %s: %s\n", pre_path, strerror(errno));
		return 1;
	}
	fprintf(pre,
		"#!/bin/sh\n"
		"# scatterfs-plan clone %s: after copying its files into a mount of\n"
		"# %s, run 'sh %s MOUNTPOINT' to allocate the extents that were\n"
		"# unwritten (preallocated) there, unwritten, where their maps say.\n"
		"set -e\n",
		root, out_path, pre_path);
	out = fopen(out_path, "w");
	if (out == NULL) {
		fprintf(stderr, "scatterfs-plan: %s: %s\n", out_path, strerror(errno));
		fclose(pre);
		return 1;
	}
	fprintf(out,
		"# scatterfs-plan clone %s: the layout of its %zu regular files (FIEMAP).\n"
		"# The maps span %" PRIu64 " bytes of the device from offset 0: mount on a\n"
		"# backing at least that large.\n"
		"[device]\nblock_size = %" PRIu64 "\n"
		"\n"
		"# New space is not zero-filled, so that what the copy does not write\n"
		"# (unwritten in the source: %s.prealloc allocates it) stays unwritten.\n"
		"[autoextend]\nzero_fill = none\n",
		root, walk.n, span, g, out_path);

	/* The source's page cache and read-ahead (see the file comment). */
	char ra_from[PATH_MAX + 64], ra_note[256] = "";
	unsigned long long ra_kb = 0, kb;
	if (source_readahead(root, &ra_kb, ra_from, sizeof(ra_from)) == 0) {
		kb = ra_kb / 4 * 4;
		if (kb < 4)
			kb = 4;
		if (kb > 1024)
			kb = 1024;
		if (kb != ra_kb)
			snprintf(ra_note, sizeof(ra_note),
				 " (scatterfs takes a multiple of 4K from 4K to 1M: %lluK)", kb);
		fprintf(out,
			"\n# The source reads through the kernel's page cache, reading ahead by\n"
			"# %lluK (%s):\n# so does the clone%s.\n",
			ra_kb, ra_from, ra_note);
		fprintf(
		    stderr,
		    "scatterfs-plan: cache.mode = kernel, cache.readahead = %lluK: as the source, "
		    "which reads through the page cache with read_ahead_kb = %llu (%s)%s\n",
		    kb, ra_kb, ra_from, ra_note);
	} else {
		kb = 128;
		fprintf(out,
			"\n# The source reads through the kernel's page cache; its read-ahead\n"
			"# could not be read (no block device under %s): the kernel's\n"
			"# default, 128K.\n",
			root);
		fprintf(stderr,
			"scatterfs-plan: cache.mode = kernel, cache.readahead = 128K: the source "
			"reads through the page cache; its read-ahead could not be read (no block "
			"device under %s), so the kernel's default\n",
			root);
	}
	fprintf(out, "[cache]\nmode = kernel\nreadahead = %lluK\n", kb);
	for (size_t i = 0; i < walk.n; i++) {
		const struct cfile *f = &walk.files[i];
		if (strpbrk(f->rel, "\"\n\r") != NULL) {
			fprintf(
			    stderr,
			    "scatterfs-plan: %s/%s: a [file] rule cannot name this path: placed "
			    "by the global pattern\n",
			    root, f->rel);
			continue;
		}
		if (f->n == 0 && !f->unmappable)
			continue; /* no extents (empty or all holes): nothing to place */
		fputs("\n[file \"", out);
		glob_of(f->rel, out);
		fputs("\"]\n", out);
		if (f->unmappable) {
			fputs("pattern = contiguous\n", out);
			continue;
		}
		char mp[PATH_MAX + 32];
		snprintf(mp, sizeof(mp), "%s/%zu.csv", mapdir_abs, mapped++);
		FILE *m = fopen(mp, "w");
		if (m == NULL) {
			fprintf(stderr, "scatterfs-plan: %s: %s\n", mp, strerror(errno));
			goto out;
		}
		fputs("logical_offset,device_offset,length\n", m);
		for (size_t k = 0; k < f->n; k++)
			fprintf(m, "%llu,%llu,%llu\n", (unsigned long long)f->v[k].fe_logical,
				(unsigned long long)f->v[k].fe_physical,
				(unsigned long long)f->v[k].fe_length);
		if (fclose(m) != 0) {
			fprintf(stderr, "scatterfs-plan: %s: %s\n", mp, strerror(errno));
			goto out;
		}
		fprintf(out, "pattern = map\nmap = %s\nmap_base = %" PRIu64 "\n", mp,
			f->lowest - lowest);
		for (size_t k = 0; k < f->n; k++) {
			if (!(f->v[k].fe_flags & FIEMAP_EXTENT_UNWRITTEN))
				continue;
			fprintf(pre, "fallocate -n -o %llu -l %llu \"$1\"/'",
				(unsigned long long)f->v[k].fe_logical,
				(unsigned long long)f->v[k].fe_length);
			for (const char *c = f->rel; *c; c++) /* single quotes: ' is '\'' */
				fputs(*c == '\'' ? "'\\''" : (char[]){*c, 0}, pre);
			fputs("'\n", pre);
		}
	}
	status = 0;
out:
	if (fclose(pre) != 0 && status == 0) {
		fprintf(stderr, "scatterfs-plan: %s: %s\n", pre_path, strerror(errno));
		status = 1;
	}
	if (fclose(out) != 0 && status == 0) {
		fprintf(stderr, "scatterfs-plan: %s: %s\n", out_path, strerror(errno));
		status = 1;
	}
	for (size_t i = 0; i < walk.n; i++) {
		free(walk.files[i].rel);
		free(walk.files[i].v);
	}
	free(walk.files);
	if (status == 0) {
		/* The size to mount with: the span, up to a whole MiB or GiB (the
		 * files placed contiguously need room past it too). */
		uint64_t unit = span >= (1ULL << 30) ? 1ULL << 30 : 1ULL << 20;
		fprintf(stderr,
			"scatterfs-plan: wrote %s (%zu maps in %s); the maps span %" PRIu64
			" bytes of the device: mount on a backing at least that large, e.g. -o "
			"size=%" PRIu64 "%c (a new backing file is sparse: it takes only what is "
			"written)\n",
			out_path, mapped, mapdir_abs, span, (span + unit - 1) / unit + !span,
			unit == 1ULL << 30 ? 'G' : 'M');
	}
	return status;
}
