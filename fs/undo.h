/*
 * Undo log of the bytes a crash must bring back: for each byte range
 * written since the last durable point, the contents it had before (read
 * once, at the first write of the range after that point).  The
 * simulated power failure ([device] volatile, dev_volatile.c; the
 * catalog's files, catalog_vfs.c) keeps writes on the backing as they
 * come, so reads and splicing see them unchanged, and at a crash writes
 * the old contents back: what a crash loses is exactly what was written
 * and never made durable.
 *
 * Entries do not overlap and are kept sorted by offset; each remembers
 * the file (inode number, logical offset, path) of the write that made
 * it, for sync-report.  Not thread-safe: the caller locks.
 */
#ifndef SCATTERFS_UNDO_H
#define SCATTERFS_UNDO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/** One range written since the last durable point, and its old bytes. */
struct undo_ent {
	uint64_t off, len;  /* bytes on the device (or file) */
	unsigned char *old; /* @len bytes: the contents before the first write */
	uint64_t ino;	    /* the file whose write made it (0 = none) */
	uint64_t logical;   /* that file's logical offset of @off (UINT64_MAX = none) */
	char *path;	    /* its path when the write knew it, else NULL */
	/*
	 * The write went to space its file never wrote (struct dev_req's
	 * fresh): the file's durable contents there are zeros, whatever
	 * @old holds.  undo_take() makes @old zeros.
	 */
	bool fresh;
};

struct undo {
	struct undo_ent *v;
	size_t n, cap;
	uint64_t bytes; /* old bytes held (sum of the entries' len) */
	uint64_t max;	/* bound on @bytes; 0 = none */
};

/** Reads @len bytes at @off into @buf: 0 or -errno (short reads past the end give zeros). */
typedef int (*undo_read_fn)(void *ctx, void *buf, uint64_t len, uint64_t off);
/** Writes @len bytes of @buf at @off: 0 or -errno. */
typedef int (*undo_write_fn)(void *ctx, const void *buf, uint64_t len, uint64_t off);

/**
 * undo_note() - before a write of [@off, +@len): saves, through @rd, the
 * old contents of the parts of the range no entry covers yet, each as an
 * entry naming @ino, @path, the logical offset (@logical for @off,
 * UINT64_MAX when none) and @fresh (see struct undo_ent).  @return 0,
 * -ENOSPC (the entries would hold more than @u->max bytes: nothing is
 * saved, the write must not happen), -ENOMEM, or @rd's error.
 */
int undo_note(struct undo *u, uint64_t off, uint64_t len, undo_read_fn rd, void *ctx,
	      uint64_t ino, uint64_t logical, const char *path, bool fresh);

/** undo_clear() - forgets every entry: what was written is durable now. */
void undo_clear(struct undo *u);

/**
 * undo_apply() - the crash: writes each entry's old bytes back through
 * @wr.  With @rng not NULL (crash torn) each entry keeps a prefix of what
 * was written instead: the cut is at a multiple of @sector in the
 * entry's offsets, chosen among those in [off, off+len] (both ends
 * included) as splitmix64_next(@rng) modulo their number, entries in
 * offset order.  One line per entry to @out when not NULL ("OFF+LEN
 * kept K").  @return 0 or the first error of @wr (the others are still
 * written).
 */
int undo_apply(struct undo *u, undo_write_fn wr, void *ctx, uint64_t *rng, uint32_t sector,
	       FILE *out, const char *label);

/** undo_torn_keep() - the bytes crash torn keeps of [@off, +@len) (see undo_apply()). */
uint64_t undo_torn_keep(uint64_t off, uint64_t len, uint32_t sector, uint64_t *rng);

/**
 * undo_subtract() - removes from @u every byte that an entry of @b
 * covers (an entry partly covered keeps its uncovered pieces, each with
 * its own copy of the old bytes).  @return 0 or -ENOMEM (then an entry
 * it could not cut stays whole: no byte is lost).
 */
int undo_subtract(struct undo *u, const struct undo *b);

/**
 * undo_take() - moves the entries of @src that file @ino made (every
 * entry when @ino is 0) to @dst, less the bytes @dst covers already
 * (@dst's old bytes are the older ones).  A fresh entry's old bytes
 * become zeros as it moves: what the file held there durably, and never
 * the space's earlier contents (another file's, freed).  @return 0 or
 * -ENOMEM (then an entry that could not be cut stays in @src: no byte is
 * lost).
 */
int undo_take(struct undo *dst, struct undo *src, uint64_t ino);

/**
 * undo_overlay() - copies into @buf, which holds [@off, +@len) as read,
 * the old bytes of every entry of @u that overlaps that range.
 */
void undo_overlay(const struct undo *u, void *buf, uint64_t len, uint64_t off);

/** undo_free() - frees the entries. */
void undo_free(struct undo *u);

#endif
