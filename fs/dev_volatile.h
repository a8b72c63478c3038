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
 * for an I/O of no file's range).  In device offset order.  @return 0.
 */
int dev_volatile_report(struct device *d, FILE *out);

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
