/*
 * Opening and checking the backings of a mount's [device "NAME"] sections
 * (device_open.c); main's backing is main.c's.
 */
#ifndef SCATTERFS_DEVICE_OPEN_H
#define SCATTERFS_DEVICE_OPEN_H

#include <stddef.h>
#include <sys/stat.h>

#include "sfs.h"

struct catalog_identity;

/**
 * devices_open() - makes fs->dev[1..] for the configuration's [device
 * "NAME"] sections (after main's backing is open in fs->dev[0], before
 * config_finish()): makes each backing's path absolute (also in the
 * configuration), refuses two devices on one backing (one inode, or one
 * block device; main's included) and a backing that is neither a regular
 * file nor a block device, and opens and locks each existing backing,
 * recording its size in the configuration's effective_size.  A missing
 * backing is left to devices_check().
 * @err: one line naming the device.  @return 0, -EINVAL, -ENOMEM, -errno.
 */
int devices_open(struct sfs *fs, char *err, size_t errlen);

/** device_backing_id() - st_rdev of a block device, st_ino of a file: what the catalog records. */
uint64_t device_backing_id(const struct stat *st);
/**
 * device_backing_born_ns() - the birth time (statx(2) STATX_BTIME) of the
 * regular file open at @fd, in ns since the epoch: a file removed and
 * created again at the same path is a new file even where it gets the
 * same inode number.  0 for a block device, or where the file system
 * does not keep birth times.
 */
int64_t device_backing_born_ns(int fd);
/**
 * device_other_catalog() - whether @path has a catalog of its own beside
 * it (PATH.scatterfs) that is not @meta_path, the mount's: the backing is
 * another file system's.  Its path into @beside (@size bytes).
 */
bool device_other_catalog(const char *path, const char *meta_path, char *beside, size_t size);

/** device_lock_backing() - takes the backing @fd's flock, waiting up to 5 s for a daemon still closing it: 0, or -errno. */
int device_lock_backing(int fd);

/**
 * devices_check() - after config_finish() and catalog_open(): checks the
 * devices against the catalog and fills @ids[1..ndev-1] (ids[0], main's,
 * is the caller's).  Refused, with one line naming the device or the
 * file: a device the catalog records with files on it that the
 * configuration lacks; a missing backing of a device the catalog records
 * (a missing backing of a new device is created when its size is set);
 * an empty backing; a new device's backing with a catalog of its own
 * beside it (BACKING.scatterfs); a new device's existing backing that
 * holds data (backing_find_data()) unless @newfs; a backing that
 * catalog_check_device() refuses (another block size, another backing);
 * a file whose extents are on another device than its rule now names.
 * A backing smaller than recorded is main.c's to refuse (it names the
 * files that lost data).
 * @return 0, -EINVAL, -ENOENT, -ENOMEM, -EIO.
 */
int devices_check(struct sfs *fs, struct catalog_identity *ids, bool newfs, char *err,
		  size_t errlen);

#endif
