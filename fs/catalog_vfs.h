/*
 * The catalog's SQLite files under a simulated power failure (catalog_vfs.c).
 */
#ifndef SCATTERFS_CATALOG_VFS_H
#define SCATTERFS_CATALOG_VFS_H

#include <stdbool.h>
#include <stdint.h>

/** The VFS name catalog_open() opens the catalog with. */
#define CATALOG_VFS_NAME "scatterfs"

/** catalog_vfs_register() - registers the VFS (once a process).  @return 0, -ENOENT, -ENOMEM. */
int catalog_vfs_register(void);

/**
 * catalog_vfs_track() - from now on, what is written to the catalog's
 * files and not fsynced by SQLite is kept for catalog_vfs_crash() to drop
 * (the size each file has now counts as durable).
 */
void catalog_vfs_track(void);

/** catalog_vfs_unsynced() - bytes of the catalog's files a crash would drop or restore now. */
uint64_t catalog_vfs_unsynced(void);

/**
 * catalog_vfs_crash() - the power failure: every catalog file back to its
 * last fsync (size and bytes), made durable on the host; every later
 * read, write or sync fails with SQLITE_IOERR.  @return 0 or -EIO.
 */
int catalog_vfs_crash(void);

/**
 * catalog_vfs_before_sync() - has every xSync of a catalog file call
 * @fn(@ctx) first and fail (SQLITE_IOERR_FSYNC) when it returns nonzero:
 * every point where catalog rows become durable (a commit with synchronous
 * = FULL, a checkpoint, the close's) then comes after what @fn makes
 * durable (the data the rows point at: sfs_flush_ordered()).  @fn NULL
 * removes it.  Called under the catalog's lock.
 */
void catalog_vfs_before_sync(int (*fn)(void *ctx), void *ctx);

/**
 * catalog_vfs_crashed() - true once catalog_vfs_crash() has run: the
 * catalog's errors from then on are the power failure's, not faults to
 * report (the daemon ends within 200 ms, ctl.c).
 */
bool catalog_vfs_crashed(void);

#endif
