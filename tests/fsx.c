/*
 * sfs-fsx: a randomized file operation tester in the manner of fsx.
 *
 *     sfs-fsx [OPTIONS] TESTDIR REFDIR
 *
 * It applies a seeded pseudo-random sequence of operations to a few files
 * named f0..fN-1 in TESTDIR (a directory on the filesystem under test) and
 * applies each one identically to the files of the same names in REFDIR (a
 * directory on a trusted host filesystem).  REFDIR is the oracle: after each
 * operation the affected file's st_size must agree, a read must return the
 * same bytes, and the namespace (which names exist, their link counts, which
 * names are hard links of each other) must agree after every rename, link or
 * unlink.  Every --remount-every operations all descriptors are closed, the
 * --remount-cmd shell command is run (it unmounts and mounts the filesystem
 * again), and every file is compared in full.
 *
 * Data structure: one table of name slots, each holding whether the name
 * exists and the descriptor open on it on each side.  Rename, link and
 * unlink change which inode a name refers to, so after any of them the
 * descriptors of the names involved are closed and reopened by name, and
 * the existence of every name is re-read from REFDIR and checked on
 * TESTDIR: cheap with a handful of files, and it keeps the bookkeeping from
 * getting out of step.  (Its weak spot: operations through a descriptor
 * whose name was renamed away or unlinked are not exercised.)  A remount
 * counts as one operation: with --ops N --remount-every K, operations K+1,
 * 2K+1, ... are remounts.
 *
 * The random generator is splitmix64 (Steele, Lea and Flood, "Fast
 * splittable pseudorandom number generators", OOPSLA 2014), written out here
 * so that a seed replays the same operations with any libc.  Written bytes
 * are never zero and depend on the operation number and the logical offset,
 * so a hole, a stale block or another file's bytes all show as a mismatch.
 *
 * Exit status: 0 all operations agreed; 1 the first mismatch or unexpected
 * error (reported with the operation number, the seed and the recent
 * operations); 2 usage error.
 */
#undef NDEBUG
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/falloc.h>

#include "splitmix64.h"

enum op {
	OP_READ,
	OP_WRITE,
	OP_TRUNCATE,
	OP_FALLOC,	/* mode 0 */
	OP_FALLOC_KEEP, /* KEEP_SIZE */
	OP_PUNCH,	/* PUNCH_HOLE | KEEP_SIZE */
	OP_ZERO,	/* ZERO_RANGE */
	OP_ZERO_KEEP,	/* ZERO_RANGE | KEEP_SIZE */
	OP_RENAME,
	OP_LINK, /* unlink the target name if it exists, then link */
	OP_UNLINK,
	OP_FSYNC,
	OP_CREATE, /* chosen when an operation picks a name that does not exist */
	OP_REMOUNT,
	OP_COUNT
};

static const char *const op_names[OP_COUNT] = {
    "read",	 "write",  "truncate", "falloc", "falloc_keep", "punch",  "zero",
    "zero_keep", "rename", "link",     "unlink", "fsync",	"create", "remount",
};

/* Relative frequency of each randomly drawn operation (create and remount
 * are not drawn). */
static const unsigned op_weight[OP_COUNT] = {
    [OP_READ] = 22,	  [OP_WRITE] = 26, [OP_TRUNCATE] = 8, [OP_FALLOC] = 4,
    [OP_FALLOC_KEEP] = 4, [OP_PUNCH] = 6,  [OP_ZERO] = 4,     [OP_ZERO_KEEP] = 4,
    [OP_RENAME] = 3,	  [OP_LINK] = 3,   [OP_UNLINK] = 2,   [OP_FSYNC] = 3,
};

struct slot {
	char name[16];
	bool exists; /* as REFDIR says */
	int tfd;     /* on TESTDIR, -1 when closed */
	int rfd;     /* on REFDIR, -1 when closed */
};

#define RING 24
#define DESC 200

struct fsx {
	const char *tdir, *rdir;
	int tdirfd, rdirfd;
	struct slot *slot;
	unsigned nfiles;
	uint64_t seed, rng, nops, max_size, max_op, remount_every, check_every;
	const char *remount_cmd;
	const char *check_cmd; /* run with the files open every check_every operations */
	uint64_t nchecks;
	unsigned only_mask; /* bit per op; 0 = all */
	bool verbose;
	uint64_t opnum; /* current operation, from 1 */
	uint64_t count[OP_COUNT];
	char ring[RING][DESC]; /* the last operations, by opnum % RING */
	char **argv;
	int argc;
	unsigned char *tbuf, *rbuf, *wbuf;
};

/* --- random numbers ------------------------------------------------------ */

static uint64_t next_u64(struct fsx *f)
{
	return splitmix64_next(&f->rng);
}

/* A uniform integer in [0, n); n > 0 (Lemire's multiply-shift, bias < n/2^64). */
static uint64_t rnd(struct fsx *f, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)next_u64(f) * n) >> 64);
}

/* --- reporting ----------------------------------------------------------- */

static void print_replay(const struct fsx *f)
{
	printf("replay:");
	for (int i = 0; i < f->argc; i++) { /* shell-quoted: 'it'\''s' */
		printf(" '");
		for (const char *c = f->argv[i]; *c; c++)
			if (*c == '\'')
				printf("'\\''");
			else
				putchar(*c);
		printf("'");
	}
	printf("   (seed %" PRIu64 ")\n", f->seed);
}

static void print_recent(const struct fsx *f)
{
	uint64_t first = f->opnum > RING - 1 ? f->opnum - (RING - 1) : 1;
	printf("last operations:\n");
	for (uint64_t i = first; i <= f->opnum; i++)
		printf("  %s\n", f->ring[i % RING]);
}

/* Reports a failure of operation f->opnum and exits 1. */
__attribute__((format(printf, 2, 3), noreturn)) static void fail(struct fsx *f, const char *fmt,
								 ...)
{
	va_list ap;
	fflush(stdout);
	printf("sfs-fsx: FAILED at op %" PRIu64 " (seed %" PRIu64 "): ", f->opnum, f->seed);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	print_recent(f);
	print_replay(f);
	fflush(stdout);
	exit(1);
}

/* Records (and with --verbose prints) the description of the current operation. */
__attribute__((format(printf, 2, 3))) static void note_op(struct fsx *f, const char *fmt, ...)
{
	char *d = f->ring[f->opnum % RING];
	va_list ap;
	int n = snprintf(d, DESC, "op %" PRIu64 ": ", f->opnum);
	va_start(ap, fmt);
	vsnprintf(d + n, DESC - (size_t)n, fmt, ap);
	va_end(ap);
	if (f->verbose)
		printf("%s\n", d);
}

/* --- the two sides ------------------------------------------------------- */

static void open_dirs(struct fsx *f)
{
	f->tdirfd = open(f->tdir, O_RDONLY | O_DIRECTORY);
	if (f->tdirfd < 0)
		fail(f, "open %s: %s", f->tdir, strerror(errno));
	f->rdirfd = open(f->rdir, O_RDONLY | O_DIRECTORY);
	if (f->rdirfd < 0)
		fail(f, "open %s: %s", f->rdir, strerror(errno));
}

static void close_dirs(struct fsx *f)
{
	if (close(f->tdirfd))
		fail(f, "close %s: %s", f->tdir, strerror(errno));
	close(f->rdirfd);
	f->tdirfd = f->rdirfd = -1;
}

static void close_slot(struct fsx *f, struct slot *s)
{
	if (s->tfd >= 0 && close(s->tfd))
		fail(f, "close %s/%s: %s", f->tdir, s->name, strerror(errno));
	if (s->rfd >= 0)
		close(s->rfd);
	s->tfd = s->rfd = -1;
}

static void close_all(struct fsx *f)
{
	for (unsigned i = 0; i < f->nfiles; i++)
		close_slot(f, &f->slot[i]);
}

/* After a change of names: reads which names exist from REFDIR, checks
 * TESTDIR agrees (existence, link count, size, which names share an inode),
 * and closes and reopens the names @a and @b (every name when @a is NULL):
 * the other names still refer to the inodes their descriptors are open on. */
static void resync(struct fsx *f, struct slot *a, struct slot *b)
{
	struct stat rst[f->nfiles], tst[f->nfiles];

	for (unsigned i = 0; i < f->nfiles; i++)
		if (!a || &f->slot[i] == a || &f->slot[i] == b)
			close_slot(f, &f->slot[i]);
	for (unsigned i = 0; i < f->nfiles; i++) {
		struct slot *s = &f->slot[i];
		int rr = fstatat(f->rdirfd, s->name, &rst[i], AT_SYMLINK_NOFOLLOW);
		if (rr && errno != ENOENT)
			fail(f, "stat %s/%s: %s", f->rdir, s->name, strerror(errno));
		int tr = fstatat(f->tdirfd, s->name, &tst[i], AT_SYMLINK_NOFOLLOW);
		int terr = errno;
		s->exists = rr == 0;
		if (s->exists && tr)
			fail(f, "%s/%s: stat failed (%s), but the name exists in the reference",
			     f->tdir, s->name, strerror(terr));
		if (!s->exists && tr == 0)
			fail(f, "%s/%s exists, but not in the reference", f->tdir, s->name);
		if (!s->exists && terr != ENOENT)
			fail(f, "stat %s/%s: %s, expected ENOENT", f->tdir, s->name,
			     strerror(terr));
		if (!s->exists)
			continue;
		if (!S_ISREG(tst[i].st_mode))
			fail(f, "%s/%s: not a regular file (mode %o)", f->tdir, s->name,
			     (unsigned)tst[i].st_mode);
		if (tst[i].st_nlink != rst[i].st_nlink)
			fail(f, "%s: st_nlink %lu, expected %lu", s->name,
			     (unsigned long)tst[i].st_nlink, (unsigned long)rst[i].st_nlink);
		if (tst[i].st_size != rst[i].st_size)
			fail(f, "%s: st_size %lld, expected %lld", s->name,
			     (long long)tst[i].st_size, (long long)rst[i].st_size);
	}
	for (unsigned i = 0; i < f->nfiles; i++)
		for (unsigned j = i + 1; j < f->nfiles; j++) {
			if (!f->slot[i].exists || !f->slot[j].exists)
				continue;
			bool rsame = rst[i].st_ino == rst[j].st_ino;
			bool tsame = tst[i].st_ino == tst[j].st_ino;
			if (rsame != tsame)
				fail(f,
				     "%s and %s: %s on the mount (st_ino %llu, %llu), %s in the "
				     "reference",
				     f->slot[i].name, f->slot[j].name,
				     tsame ? "the same inode" : "different inodes",
				     (unsigned long long)tst[i].st_ino,
				     (unsigned long long)tst[j].st_ino,
				     rsame ? "hard links" : "distinct");
		}
	for (unsigned i = 0; i < f->nfiles; i++) {
		struct slot *s = &f->slot[i];
		if (!s->exists || s->tfd >= 0)
			continue;
		s->tfd = openat(f->tdirfd, s->name, O_RDWR);
		if (s->tfd < 0)
			fail(f, "open %s/%s: %s", f->tdir, s->name, strerror(errno));
		s->rfd = openat(f->rdirfd, s->name, O_RDWR);
		if (s->rfd < 0)
			fail(f, "open %s/%s: %s", f->rdir, s->name, strerror(errno));
	}
}

static void check_size(struct fsx *f, const struct slot *s)
{
	struct stat t, r;
	if (fstat(s->tfd, &t))
		fail(f, "fstat %s/%s: %s", f->tdir, s->name, strerror(errno));
	if (fstat(s->rfd, &r))
		fail(f, "fstat %s/%s: %s", f->rdir, s->name, strerror(errno));
	if (t.st_size != r.st_size)
		fail(f, "%s: st_size %lld, expected %lld", s->name, (long long)t.st_size,
		     (long long)r.st_size);
}

static uint64_t ref_size(struct fsx *f, const struct slot *s)
{
	struct stat r;
	if (fstat(s->rfd, &r))
		fail(f, "fstat %s/%s: %s", f->rdir, s->name, strerror(errno));
	return (uint64_t)r.st_size;
}

/* Reads up to @len bytes at @off, retrying short reads until EOF.
 * @return bytes read, or -errno. */
static ssize_t read_full(int fd, unsigned char *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fd, buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* Reports the first differing byte of two equal-length buffers read at
 * logical offset @off of @s, with the extent of the differing run. */
__attribute__((noreturn)) static void report_mismatch(struct fsx *f, const struct slot *s,
						      uint64_t off, size_t len, const char *what)
{
	size_t i = 0, last, ndiff = 0;
	while (i < len && f->tbuf[i] == f->rbuf[i])
		i++;
	last = i;
	for (size_t k = i; k < len; k++)
		if (f->tbuf[k] != f->rbuf[k]) {
			ndiff++;
			last = k;
		}
	printf("sfs-fsx: %s of %s [%" PRIu64 ", %" PRIu64
	       "): %zu bytes differ, first at offset %" PRIu64 ", last at %" PRIu64 "\n",
	       what, s->name, off, off + len, ndiff, off + i, off + last);
	size_t w0 = i & ~(size_t)15, w1 = w0 + 32 < len ? w0 + 32 : len;
	printf("  offset %" PRIu64 ":\n  expected:", off + w0);
	for (size_t k = w0; k < w1; k++)
		printf(" %02x", f->rbuf[k]);
	printf("\n  got:     ");
	for (size_t k = w0; k < w1; k++)
		printf(" %02x", f->tbuf[k]);
	printf("\n");
	fail(f, "%s: byte at offset %" PRIu64 " is 0x%02x, expected 0x%02x", s->name, off + i,
	     f->tbuf[i], f->rbuf[i]);
}

/* Compares @len bytes at @off of @s on both sides, reading each once (a
 * short read on the mount where the reference returns more is a failure). */
static void compare_range(struct fsx *f, const struct slot *s, uint64_t off, size_t len,
			  const char *what)
{
	ssize_t rn = pread(s->rfd, f->rbuf, len, (off_t)off);
	if (rn < 0)
		fail(f, "pread %s/%s: %s", f->rdir, s->name, strerror(errno));
	ssize_t tn = pread(s->tfd, f->tbuf, len, (off_t)off);
	if (tn < 0)
		fail(f, "%s: pread(%zu bytes at %" PRIu64 ") on the mount: %s", s->name, len, off,
		     strerror(errno));
	if (tn != rn)
		fail(f, "%s: pread(%zu bytes at %" PRIu64 ") returned %zd, expected %zd", s->name,
		     len, off, tn, rn);
	if (memcmp(f->tbuf, f->rbuf, (size_t)rn))
		report_mismatch(f, s, off, (size_t)rn, what);
}

/* Compares the whole of @s on both sides. */
static void compare_file(struct fsx *f, const struct slot *s, const char *what)
{
	uint64_t size = ref_size(f, s);
	check_size(f, s);
	for (uint64_t off = 0; off < size + 1; off += f->max_op) {
		ssize_t rn = read_full(s->rfd, f->rbuf, f->max_op, off);
		if (rn < 0)
			fail(f, "read %s/%s: %s", f->rdir, s->name, strerror((int)-rn));
		ssize_t tn = read_full(s->tfd, f->tbuf, f->max_op, off);
		if (tn < 0)
			fail(f, "%s (%s): read %zu bytes at %" PRIu64 " on the mount: %s", s->name,
			     what, (size_t)f->max_op, off, strerror((int)-tn));
		if (tn != rn)
			fail(f, "%s (%s): %zd bytes read at %" PRIu64 ", expected %zd", s->name,
			     what, tn, off, rn);
		if (memcmp(f->tbuf, f->rbuf, (size_t)rn))
			report_mismatch(f, s, off, (size_t)rn, what);
		if ((uint64_t)rn < f->max_op)
			break;
	}
}

static void compare_all(struct fsx *f, const char *what)
{
	for (unsigned i = 0; i < f->nfiles; i++)
		if (f->slot[i].exists)
			compare_file(f, &f->slot[i], what);
}

/* --- operations ---------------------------------------------------------- */

/* A logical offset and length within [0, max_size): aligned to 4 KiB a
 * quarter of the time, so whole-block paths are exercised too; len >= 1. */
static void pick_range(struct fsx *f, uint64_t *off, uint64_t *len)
{
	uint64_t l = 1 + rnd(f, f->max_op);
	uint64_t o = rnd(f, f->max_size - l + 1);
	if (rnd(f, 4) == 0) {
		o &= ~(uint64_t)4095;
		l = (l + 4095) & ~(uint64_t)4095;
		if (l > f->max_op)
			l = f->max_op & ~(uint64_t)4095;
		if (l == 0)
			l = f->max_op;
		if (o + l > f->max_size)
			o = (f->max_size - l) & ~(uint64_t)4095;
	}
	*off = o;
	*len = l;
}

static void do_read(struct fsx *f, struct slot *s)
{
	uint64_t size = ref_size(f, s), off, len;
	pick_range(f, &off, &len);
	if (size && rnd(f, 2)) /* half the reads inside the file */
		off = rnd(f, size);
	note_op(f, "read %s [%" PRIu64 ", +%" PRIu64 ") size %" PRIu64, s->name, off, len, size);
	compare_range(f, s, off, (size_t)len, "read");
}

static void do_write(struct fsx *f, struct slot *s)
{
	uint64_t size = ref_size(f, s), off, len;
	pick_range(f, &off, &len);
	if (rnd(f, 6) == 0 && size < f->max_size) { /* append: autoextend */
		off = size;
		if (off + len > f->max_size)
			len = f->max_size - off;
	}
	for (uint64_t i = 0; i < len; i++)
		f->wbuf[i] = (unsigned char)(((off + i) * 7 + f->opnum * 13) % 255 + 1);
	note_op(f, "write %s [%" PRIu64 ", +%" PRIu64 ") size %" PRIu64, s->name, off, len, size);
	ssize_t n = pwrite(s->rfd, f->wbuf, len, (off_t)off);
	if (n != (ssize_t)len)
		fail(f, "pwrite %s/%s: %s", f->rdir, s->name, n < 0 ? strerror(errno) : "short");
	n = pwrite(s->tfd, f->wbuf, len, (off_t)off);
	if (n < 0)
		fail(f, "%s: pwrite(%" PRIu64 " bytes at %" PRIu64 ") on the mount: %s", s->name,
		     len, off, strerror(errno));
	if ((uint64_t)n != len)
		fail(f, "%s: pwrite(%" PRIu64 " bytes at %" PRIu64 ") returned %zd", s->name, len,
		     off, n);
	check_size(f, s);
}

static void do_truncate(struct fsx *f, struct slot *s)
{
	uint64_t size = ref_size(f, s);
	uint64_t to = rnd(f, f->max_size + 1);
	if (rnd(f, 4) == 0)
		to &= ~(uint64_t)4095;
	note_op(f, "truncate %s %" PRIu64 " -> %" PRIu64, s->name, size, to);
	if (ftruncate(s->rfd, (off_t)to))
		fail(f, "ftruncate %s/%s: %s", f->rdir, s->name, strerror(errno));
	if (ftruncate(s->tfd, (off_t)to))
		fail(f, "%s: ftruncate(%" PRIu64 ") on the mount: %s", s->name, to,
		     strerror(errno));
	check_size(f, s);
}

/* The reference filesystem may lack a mode (tmpfs has no ZERO_RANGE):
 * then the same effect is written out with zeros. */
static int ref_fallocate(struct fsx *f, struct slot *s, int mode, uint64_t off, uint64_t len)
{
	if (fallocate(s->rfd, mode, (off_t)off, (off_t)len) == 0)
		return 0;
	if (errno != EOPNOTSUPP)
		return -errno;
	uint64_t size = ref_size(f, s), end = off + len;
	if (mode & FALLOC_FL_KEEP_SIZE)
		end = end < size ? end : size;
	if (!(mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))) {
		/* mode 0 or KEEP_SIZE: only the size can change */
		if (!(mode & FALLOC_FL_KEEP_SIZE) && off + len > size &&
		    ftruncate(s->rfd, (off_t)(off + len)))
			return -errno;
		return 0;
	}
	memset(f->wbuf, 0, f->max_op);
	for (uint64_t o = off; o < end;) {
		uint64_t n = end - o < f->max_op ? end - o : f->max_op;
		if (pwrite(s->rfd, f->wbuf, n, (off_t)o) != (ssize_t)n)
			return -EIO;
		o += n;
	}
	return 0;
}

static void do_fallocate(struct fsx *f, struct slot *s, enum op op)
{
	static const int modes[OP_COUNT] = {
	    [OP_FALLOC] = 0,
	    [OP_FALLOC_KEEP] = FALLOC_FL_KEEP_SIZE,
	    [OP_PUNCH] = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
	    [OP_ZERO] = FALLOC_FL_ZERO_RANGE,
	    [OP_ZERO_KEEP] = FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
	};
	uint64_t size = ref_size(f, s), off, len;
	pick_range(f, &off, &len);
	if ((op == OP_PUNCH || op == OP_ZERO || op == OP_ZERO_KEEP) && size && rnd(f, 2))
		off = rnd(f, size); /* mostly where there is data */
	if (off + len > f->max_size)
		len = f->max_size - off;
	note_op(f, "%s %s [%" PRIu64 ", +%" PRIu64 ") size %" PRIu64, op_names[op], s->name, off,
		len, size);
	int rr = ref_fallocate(f, s, modes[op], off, len);
	int tr = fallocate(s->tfd, modes[op], (off_t)off, (off_t)len) ? -errno : 0;
	if (tr != rr)
		fail(f,
		     "%s: fallocate(%s, %" PRIu64 ", %" PRIu64 ") on the mount: %s, reference: %s",
		     s->name, op_names[op], off, len, tr ? strerror(-tr) : "success",
		     rr ? strerror(-rr) : "success");
	check_size(f, s);
}

/* A slot other than @not: any slot, or only existing ones. */
static struct slot *other_slot(struct fsx *f, const struct slot * not, bool existing)
{
	unsigned n = 0, pick;
	for (unsigned i = 0; i < f->nfiles; i++)
		n += &f->slot[i] != not &&(!existing || f->slot[i].exists);
	if (n == 0)
		return NULL;
	pick = (unsigned)rnd(f, n);
	for (unsigned i = 0; i < f->nfiles; i++)
		if (&f->slot[i] != not &&(!existing || f->slot[i].exists) && pick-- == 0)
			return &f->slot[i];
	return NULL;
}

/* Checks a namespace call that was made on both sides: @rerr and @terr are
 * the errno of the reference's and the mount's call, 0 on success.  Neither
 * may fail: the operations are chosen so that they are valid. */
static void both(struct fsx *f, const char *what, int rerr, int terr)
{
	if (rerr)
		fail(f, "%s in %s: %s", what, f->rdir, strerror(rerr));
	if (terr)
		fail(f, "%s on the mount: %s (the reference succeeded)", what, strerror(terr));
}

/* errno of a call that returned @r (0 or -1), 0 on success */
static int err_of(int r)
{
	return r ? errno : 0;
}

static void do_rename(struct fsx *f, struct slot *s)
{
	struct slot *d = other_slot(f, s, false);
	char what[96];
	if (!d)
		return (void)note_op(f, "rename: only one name (skipped)");
	note_op(f, "rename %s -> %s%s", s->name, d->name, d->exists ? " (replacing it)" : "");
	snprintf(what, sizeof(what), "rename %s -> %s", s->name, d->name);
	int rerr = err_of(renameat(f->rdirfd, s->name, f->rdirfd, d->name));
	int terr = err_of(renameat(f->tdirfd, s->name, f->tdirfd, d->name));
	both(f, what, rerr, terr);
	resync(f, s, d);
}

static void do_link(struct fsx *f, struct slot *s)
{
	struct slot *d = other_slot(f, s, false);
	char what[96];
	int rerr, terr;
	if (!d)
		return (void)note_op(f, "link: only one name (skipped)");
	note_op(f, "link %s -> %s%s", s->name, d->name, d->exists ? " (unlinking it first)" : "");
	if (d->exists) {
		snprintf(what, sizeof(what), "unlink %s", d->name);
		rerr = err_of(unlinkat(f->rdirfd, d->name, 0));
		terr = err_of(unlinkat(f->tdirfd, d->name, 0));
		both(f, what, rerr, terr);
	}
	snprintf(what, sizeof(what), "link %s -> %s", s->name, d->name);
	rerr = err_of(linkat(f->rdirfd, s->name, f->rdirfd, d->name, 0));
	terr = err_of(linkat(f->tdirfd, s->name, f->tdirfd, d->name, 0));
	both(f, what, rerr, terr);
	resync(f, s, d);
}

static void do_unlink(struct fsx *f, struct slot *s)
{
	char what[96];
	if (!other_slot(f, s, true))
		return (void)note_op(f, "unlink %s: the last name (skipped)", s->name);
	note_op(f, "unlink %s", s->name);
	snprintf(what, sizeof(what), "unlink %s", s->name);
	int rerr = err_of(unlinkat(f->rdirfd, s->name, 0));
	int terr = err_of(unlinkat(f->tdirfd, s->name, 0));
	both(f, what, rerr, terr);
	resync(f, s, NULL);
}

static void do_fsync(struct fsx *f, struct slot *s)
{
	bool data = rnd(f, 2);
	note_op(f, "%s %s", data ? "fdatasync" : "fsync", s->name);
	if ((data ? fdatasync(s->tfd) : fsync(s->tfd)))
		fail(f, "%s: %s on the mount: %s", s->name, data ? "fdatasync" : "fsync",
		     strerror(errno));
	check_size(f, s);
}

static void do_create(struct fsx *f, struct slot *s)
{
	char what[64];
	note_op(f, "create %s", s->name);
	snprintf(what, sizeof(what), "create %s", s->name);
	int rfd = openat(f->rdirfd, s->name, O_RDWR | O_CREAT | O_EXCL, 0644);
	int rerr = err_of(rfd < 0 ? -1 : 0);
	int tfd = openat(f->tdirfd, s->name, O_RDWR | O_CREAT | O_EXCL, 0644);
	int terr = err_of(tfd < 0 ? -1 : 0);
	both(f, what, rerr, terr);
	close(rfd);
	if (close(tfd))
		fail(f, "close %s/%s: %s", f->tdir, s->name, strerror(errno));
	resync(f, s, NULL);
}

static void do_remount(struct fsx *f)
{
	note_op(f, "remount: %s", f->remount_cmd);
	close_all(f);
	close_dirs(f);
	fflush(stdout);
	int st = system(f->remount_cmd);
	if (st == -1)
		fail(f, "cannot run the remount command: %s", strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail(f, "the remount command '%s' failed (status %d)", f->remount_cmd,
		     WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	open_dirs(f);
	resync(f, NULL, NULL);
	compare_all(f, "full compare after remount");
}

/*
 * Runs the --check-cmd between two operations, files left open: it checks
 * what only the filesystem's own view can tell (its space accounting
 * against its catalog), which the reference directory cannot.
 */
static void do_check(struct fsx *f)
{
	char op[32];
	snprintf(op, sizeof op, "%" PRIu64, f->opnum);
	fflush(stdout);
	if (setenv("SFS_FSX_OP", op, 1))
		fail(f, "setenv: %s", strerror(errno));
	int st = system(f->check_cmd);
	if (st == -1)
		fail(f, "cannot run the check command: %s", strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail(f, "the check command '%s' failed after operation %" PRIu64 " (status %d)",
		     f->check_cmd, f->opnum, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	f->nchecks++;
}

static enum op draw_op(struct fsx *f)
{
	unsigned total = 0;
	for (int i = 0; i < OP_COUNT; i++)
		if (!f->only_mask || (f->only_mask >> i & 1))
			total += op_weight[i];
	unsigned r = (unsigned)rnd(f, total);
	for (int i = 0; i < OP_COUNT; i++) {
		if (f->only_mask && !(f->only_mask >> i & 1))
			continue;
		if (r < op_weight[i])
			return (enum op)i;
		r -= op_weight[i];
	}
	return OP_READ;
}

static void step(struct fsx *f)
{
	enum op op = draw_op(f);
	struct slot *s = &f->slot[rnd(f, f->nfiles)];
	if (!s->exists)
		op = OP_CREATE;
	f->count[op]++;
	switch (op) {
	case OP_READ:
		do_read(f, s);
		break;
	case OP_WRITE:
		do_write(f, s);
		break;
	case OP_TRUNCATE:
		do_truncate(f, s);
		break;
	case OP_FALLOC:
	case OP_FALLOC_KEEP:
	case OP_PUNCH:
	case OP_ZERO:
	case OP_ZERO_KEEP:
		do_fallocate(f, s, op);
		break;
	case OP_RENAME:
		do_rename(f, s);
		break;
	case OP_LINK:
		do_link(f, s);
		break;
	case OP_UNLINK:
		do_unlink(f, s);
		break;
	case OP_FSYNC:
		do_fsync(f, s);
		break;
	case OP_CREATE:
		do_create(f, s);
		break;
	case OP_REMOUNT:
	case OP_COUNT:
		break;
	}
}

/* --- command line -------------------------------------------------------- */

static void usage(FILE *to)
{
	fprintf(to,
		"usage: sfs-fsx [OPTIONS] TESTDIR REFDIR\n"
		"Random operations on files f0..fN-1 of TESTDIR, mirrored on REFDIR (a host\n"
		"filesystem) and compared after each one.\n"
		"  --seed N           random seed (default: from the clock; always printed)\n"
		"  --ops N            operations to run (default 10000)\n"
		"  --files N          number of file names, 1 to 64 (default 4)\n"
		"  --max-size BYTES   largest file size (default 262144)\n"
		"  --max-op BYTES     largest read, write or fallocate (default 65536, at most\n"
		"                     --max-size)\n"
		"  --remount-every N  close everything, run --remount-cmd and compare every file\n"
		"                     in full every N operations (default 0 = never)\n"
		"  --remount-cmd CMD  shell command that unmounts and mounts TESTDIR's filesystem\n"
		"  --check-every N    run --check-cmd after every N operations, files open\n"
		"                     (default 0 = never)\n"
		"  --check-cmd CMD    shell command that must exit 0 (SFS_FSX_OP in its\n"
		"                     environment: the operations done)\n"
		"  --only OP,OP...    draw only these operations (read, write, truncate, falloc,\n"
		"                     falloc_keep, punch, zero, zero_keep, rename, link, unlink,\n"
		"                     fsync); a missing name is still created first\n"
		"  --verbose          print every operation\n"
		"Exit status: 0 all agreed, 1 mismatch or error (seed and op number printed),\n"
		"2 usage error.\n");
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;
	if (!*s || *s == '-')
		return false;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || *end)
		return false;
	*v = x;
	return true;
}

static bool parse_only(struct fsx *f, char *list)
{
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		int i;
		for (i = 0; i < OP_CREATE; i++)
			if (!strcmp(tok, op_names[i]))
				break;
		if (i == OP_CREATE)
			return false;
		f->only_mask |= 1u << i;
	}
	return f->only_mask != 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"seed", required_argument, NULL, 's'},
	    {"ops", required_argument, NULL, 'n'},
	    {"files", required_argument, NULL, 'f'},
	    {"max-size", required_argument, NULL, 'm'},
	    {"max-op", required_argument, NULL, 'o'},
	    {"remount-every", required_argument, NULL, 'r'},
	    {"remount-cmd", required_argument, NULL, 'c'},
	    {"check-every", required_argument, NULL, 'k'},
	    {"check-cmd", required_argument, NULL, 'K'},
	    {"only", required_argument, NULL, 'O'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct fsx fx = {.nops = 10000,
			 .max_size = 262144,
			 .max_op = 65536,
			 .argv = argv,
			 .argc = argc,
			 .tdirfd = -1,
			 .rdirfd = -1};
	struct fsx *f = &fx;
	uint64_t files = 4;
	bool have_seed = false;
	int c, li = 0;

	while ((c = getopt_long(argc, argv, "", longopts, &li)) != -1) {
		bool ok = true;
		switch (c) {
		case 's':
			ok = parse_u64(optarg, &f->seed);
			have_seed = true;
			break;
		case 'n':
			ok = parse_u64(optarg, &f->nops);
			break;
		case 'f':
			ok = parse_u64(optarg, &files) && files >= 1 && files <= 64;
			break;
		case 'm':
			ok = parse_u64(optarg, &f->max_size) && f->max_size >= 1 &&
			     f->max_size <= (1ULL << 40);
			break;
		case 'o':
			ok = parse_u64(optarg, &f->max_op) && f->max_op >= 1 &&
			     f->max_op <= (64ULL << 20);
			break;
		case 'r':
			ok = parse_u64(optarg, &f->remount_every);
			break;
		case 'c':
			f->remount_cmd = optarg;
			break;
		case 'k':
			ok = parse_u64(optarg, &f->check_every);
			break;
		case 'K':
			f->check_cmd = optarg;
			break;
		case 'O':
			ok = parse_only(f, optarg);
			break;
		case 'v':
			f->verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (!ok) {
			fprintf(stderr, "sfs-fsx: bad value for --%s: '%s'\n", longopts[li].name,
				optarg);
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return 2;
	}
	if (f->remount_every && !f->remount_cmd) {
		fprintf(stderr, "sfs-fsx: --remount-every needs --remount-cmd\n");
		return 2;
	}
	if (f->check_every && !f->check_cmd) {
		fprintf(stderr, "sfs-fsx: --check-every needs --check-cmd\n");
		return 2;
	}
	f->tdir = argv[optind];
	f->rdir = argv[optind + 1];
	f->nfiles = (unsigned)files;
	if (f->max_op > f->max_size)
		f->max_op = f->max_size;
	if (!have_seed) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		f->seed =
		    (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec ^ (uint64_t)getpid();
	}
	f->rng = f->seed;
	f->slot = calloc(f->nfiles, sizeof(*f->slot));
	f->tbuf = malloc(f->max_op);
	f->rbuf = malloc(f->max_op);
	f->wbuf = malloc(f->max_op);
	if (!f->slot || !f->tbuf || !f->rbuf || !f->wbuf) {
		fprintf(stderr, "sfs-fsx: out of memory\n");
		return 1;
	}
	printf("sfs-fsx: seed %" PRIu64 ", %" PRIu64 " ops, %u files, max size %" PRIu64
	       ", max op %" PRIu64 ", remount every %" PRIu64 "\n",
	       f->seed, f->nops, f->nfiles, f->max_size, f->max_op, f->remount_every);
	fflush(stdout);

	open_dirs(f);
	for (unsigned i = 0; i < f->nfiles; i++) {
		struct slot *s = &f->slot[i];
		snprintf(s->name, sizeof(s->name), "f%u", i);
		s->tfd = s->rfd = -1;
		if (unlinkat(f->rdirfd, s->name, 0) && errno != ENOENT)
			fail(f, "unlink %s/%s: %s", f->rdir, s->name, strerror(errno));
		if (unlinkat(f->tdirfd, s->name, 0) && errno != ENOENT)
			fail(f, "unlink %s/%s: %s", f->tdir, s->name, strerror(errno));
		int fd = openat(f->rdirfd, s->name, O_RDWR | O_CREAT | O_EXCL, 0644);
		if (fd < 0)
			fail(f, "create %s/%s: %s", f->rdir, s->name, strerror(errno));
		close(fd);
		fd = openat(f->tdirfd, s->name, O_RDWR | O_CREAT | O_EXCL, 0644);
		if (fd < 0)
			fail(f, "create %s/%s: %s", f->tdir, s->name, strerror(errno));
		if (close(fd))
			fail(f, "close %s/%s: %s", f->tdir, s->name, strerror(errno));
	}
	resync(f, NULL, NULL);

	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (f->opnum = 1; f->opnum <= f->nops; f->opnum++) {
		if (f->remount_every && f->opnum > 1 && (f->opnum - 1) % f->remount_every == 0) {
			f->count[OP_REMOUNT]++;
			do_remount(f);
			f->opnum++;
			if (f->opnum > f->nops)
				break;
		}
		step(f);
		if (f->check_every && f->opnum % f->check_every == 0)
			do_check(f);
	}
	f->opnum = f->nops;
	compare_all(f, "final full compare");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

	printf("sfs-fsx: seed %" PRIu64 ": %" PRIu64 " ops passed in %.1f s;", f->seed, f->nops, s);
	for (int i = 0; i < OP_COUNT; i++)
		printf(" %s=%" PRIu64, op_names[i], f->count[i]);
	if (f->check_every)
		printf(" checks=%" PRIu64, f->nchecks);
	printf("\n");
	close_all(f);
	close_dirs(f);
	free(f->slot);
	free(f->tbuf);
	free(f->rbuf);
	free(f->wbuf);
	return 0;
}
