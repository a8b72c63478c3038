/*
 * Whether a backing holds data (backing_scan.h), so that a mount without
 * a catalog does not start an empty file system over someone's data.
 *
 * The backing is seen as its "data": a regular file's data regions, in
 * order (SEEK_DATA/SEEK_HOLE: a file made by size= or fallocate has none,
 * and is empty without a read), a block device's whole extent.  A data
 * offset maps to a backing offset through the region list, built in one
 * pass of lseek(2) before anything is read.  Small data is read whole;
 * large data is read at its two ends, where file systems keep their
 * superblocks and where scatterfs's patterns start (contiguous from the
 * front, reverse from the back), and sampled evenly between them: a
 * fully written backing of zeros (dd if=/dev/zero) costs at most 256 MiB
 * of reads, the weak spot being data that lies only between the samples
 * of a large, fully allocated backing.
 *
 * Reads go through a descriptor of its own without O_DIRECT (the mount's
 * may have it), so that lseek() moves no offset the mount's uses.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backing_scan.h"

struct region {
	uint64_t off, len; /* backing bytes [off, off+len) */
	uint64_t data;	   /* data offset of off: the bytes of the regions before */
};

struct regions {
	struct region *v;
	size_t n, cap;
	uint64_t total; /* data bytes */
};

static int push(struct regions *r, uint64_t off, uint64_t len)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct region *v = realloc(r->v, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = (struct region){.off = off, .len = len, .data = r->total};
	r->total += len;
	return 0;
}

/* The data regions of the backing open as @fd, of @size bytes. */
static int regions_of(int fd, bool blockdev, uint64_t size, struct regions *r)
{
	uint64_t pos = 0;

	if (blockdev)
		return size ? push(r, 0, size) : 0;
	while (pos < size) {
		off_t d = lseek(fd, (off_t)pos, SEEK_DATA), h;
		if (d < 0 && errno == ENXIO)
			break; /* no data from pos on */
		if (d < 0 && (errno == EINVAL || errno == EOPNOTSUPP)) {
			/* No SEEK_DATA on this file system: every byte is data. */
			r->n = 0;
			r->total = 0;
			return push(r, 0, size);
		}
		if (d < 0)
			return -errno;
		if ((uint64_t)d >= size)
			break;
		h = lseek(fd, d, SEEK_HOLE);
		if (h < 0)
			return -errno;
		if ((uint64_t)h > size)
			h = (off_t)size;
		if (h > d) {
			int err = push(r, (uint64_t)d, (uint64_t)(h - d));
			if (err)
				return err;
		}
		pos = (uint64_t)h > pos ? (uint64_t)h : pos + 1;
	}
	return 0;
}

/* The first non-zero byte of @p[0..n), or NULL. */
static const char *first_nonzero(const char *p, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		if (w)
			break;
	}
	for (; i < n; i++)
		if (p[i])
			return p + i;
	return NULL;
}

/*
 * Reads data [@from, @from+@len) of @r through @fd into @buf (SCAN_SAMPLE
 * bytes); 1 with *@at set at the first non-zero byte, 0, -errno.
 */
static int scan_range(int fd, const struct regions *r, uint64_t from, uint64_t len, char *buf,
		      uint64_t *at)
{
	size_t lo = 0, hi = r->n;
	/* The region holding data offset @from: the last whose data <= from. */
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (r->v[mid].data <= from)
			lo = mid;
		else
			hi = mid;
	}
	for (size_t i = lo; i < r->n && len; i++) {
		const struct region *g = &r->v[i];
		if (from >= g->data + g->len)
			continue;
		uint64_t off = g->off + (from - g->data);
		uint64_t n = g->data + g->len - from;
		if (n > len)
			n = len;
		from += n;
		len -= n;
		while (n) {
			size_t want = n < SCAN_SAMPLE ? (size_t)n : (size_t)SCAN_SAMPLE;
			ssize_t got = pread(fd, buf, want, (off_t)off);
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0)
				return -errno;
			if (got == 0)
				return 0; /* the end came early: nothing more to read */
			const char *p = first_nonzero(buf, (size_t)got);
			if (p) {
				*at = off + (uint64_t)(p - buf);
				return 1;
			}
			off += (uint64_t)got;
			n -= (uint64_t)got;
		}
	}
	return 0;
}

int backing_find_data(int fd, bool blockdev, uint64_t size, uint64_t *at)
{
	struct regions r = {0};
	char path[64], *buf = NULL;
	int rfd, rc;

	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	rfd = open(path, O_RDONLY | O_CLOEXEC);
	if (rfd < 0)
		return -errno;
	rc = regions_of(rfd, blockdev, size, &r);
	if (rc || r.total == 0)
		goto out;
	buf = malloc(SCAN_SAMPLE);
	if (!buf) {
		rc = -ENOMEM;
		goto out;
	}
	if (r.total <= SCAN_WHOLE_MAX) {
		rc = scan_range(rfd, &r, 0, r.total, buf, at);
		goto out;
	}
	rc = scan_range(rfd, &r, 0, SCAN_EDGE, buf, at);
	if (!rc)
		rc = scan_range(rfd, &r, r.total - SCAN_EDGE, SCAN_EDGE, buf, at);
	/* Sample i at the middle of the i-th of SCAN_SAMPLES equal parts between the edges. */
	uint64_t between = r.total - 2 * SCAN_EDGE, part = between / SCAN_SAMPLES;
	for (unsigned i = 0; i < SCAN_SAMPLES && !rc; i++)
		rc = scan_range(rfd, &r, SCAN_EDGE + i * part + (part - SCAN_SAMPLE) / 2,
				SCAN_SAMPLE, buf, at);
out:
	free(buf);
	free(r.v);
	close(rfd);
	return rc;
}
