/*
 * The volatile layer's interface to the control file (dev_volatile.c).
 */
#ifndef SCATTERFS_DEV_VOLATILE_H
#define SCATTERFS_DEV_VOLATILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct device;

/** dev_volatile_on() - whether @d's stack has the volatile layer ([device] volatile = true). */
bool dev_volatile_on(const struct device *d);

/**
 * dev_volatile_report() - sync-report's lines for @d: one per range not
 * yet durable, ranges of one file contiguous both on the device and in
 * the file merged: "file /PATH range LOGICAL+LEN device NAME OFF+LEN"
 * (PATH as the write knew it, "ino:N" when it did not, "-" and "range -"
 * for an I/O of no file's range).  In device offset order; then, the same
 * way, the ranges a failed flush forgot (dev_volatile_forget()), each line
 * ending " forgotten".  @return 0.
 */
int dev_volatile_report(struct device *d, FILE *out);

/**
 * dev_volatile_forget() - a flush of file @ino failed as Linux write-back
 * fails (a fault rule's flush = linux, dev_fault.c): the writes of @ino
 * (every file's and the allocator's when @ino is 0) not yet durable on @d
 * are forgotten, as Linux marks the pages clean after reporting the
 * error once: no later flush makes them durable, and a crash brings their
 * old contents back whole (with crash torn too).  A later write of one of
 * their bytes is volatile as any write, and durable after the next flush.
 * Each file whose writes it forgot is passed to @d->forgot (when set),
 * which reports the error to the file's other open handles.
 * Without the volatile layer there is nothing to forget: the writes are
 * on the backing already, as durable as the host makes them.
 * @return 0, or -ENOMEM (then some writes are not forgotten).
 */
int dev_volatile_forget(struct device *d, uint64_t ino);

/**
 * dev_volatile_crash() - the power failure on @d: every range not yet
 * durable gets its old contents back (with @rng not NULL: keeps a prefix
 * cut at a multiple of @sector, see undo_apply()), written and fsynced
 * through a descriptor of its own; every later write, zero-fill, trim or
 * flush of @d fails with EIO.  One line per range to @log when not NULL.
 * Adds the bytes it held to *@dropped.  @return 0 or -errno.
 */
int dev_volatile_crash(struct device *d, uint64_t *rng, uint32_t sector, FILE *log,
		       uint64_t *dropped);

#endif
