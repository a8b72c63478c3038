/*
 * The catalog: directories, inodes, extent maps and xattrs of one backing
 * device, kept in an SQLite database (WAL mode) so that users can query a
 * layout with the sqlite3 shell.  Every function is thread-safe (one
 * connection behind one mutex) and returns 0 or -errno.
 */
#ifndef SCATTERFS_CATALOG_H
#define SCATTERFS_CATALOG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sfs.h"

struct catalog;

/**
 * What identifies a backing device of the catalog: main's is the
 * catalog's own (meta keys backing_path, backing_id, block_size,
 * device_size); each [device "NAME"] has the same under
 * device.NAME.* plus device.NAME.index, its number in the dev columns.
 */
struct catalog_identity {
	const char *name; /* "main", or the [device "NAME"] section's name */
	unsigned index;	  /* the device's number in this mount's dev columns */
	int recorded;	  /* the number the catalog records (catalog_check_device()); -1 = new */
	uint64_t device_size;     /* bytes */
	uint32_t block_size;      /* bytes */
	const char *backing_path; /* absolute */
	uint64_t backing_id;      /* st_ino of a regular file, st_rdev of a block device */
	int64_t backing_born_ns;  /* a regular file's birth time (device_backing_born_ns()); 0 = none */
	/* Set by catalog_open() and catalog_check_device(): the device size the
	 * catalog records (device_size for a new catalog; 0 for a new device). */
	uint64_t recorded_size;
	/* Set by the same: the catalog records another birth time for the
	 * backing, so the file at its path was created anew since the catalog
	 * last saw it (a restored copy, or an empty file in its place). */
	bool recreated;
	/* -o moved: a backing with neither the recorded path nor the recorded
	 * id is taken (backings and catalog moved or copied together), and
	 * then relocated is set; without it, such a backing is refused. */
	bool moved, relocated;
	/* catalog_open() only: where a relocated backing's recorded path goes
	 * (NULL: nowhere), a buffer of moved_from_size bytes. */
	char *moved_from;
	size_t moved_from_size;
};

/**
 * catalog_open() - opens @path, or creates it when absent (file mode 0600
 * whatever the umask, and so its -wal and -shm files; root directory
 * owned by @root_uid/@root_gid, mode 0755).  An existing catalog must be a
 * scatterfs catalog whose block size equals @id's and that belongs to
 * this backing: the recorded backing path or backing id must match (a
 * moved or copied backing keeps one of the two; both are then recorded
 * anew), or else @id->moved must be set (@id->relocated is then set).
 * Sets @id->recorded_size to the device size it records; a device
 * smaller than that is the caller's to refuse (a grown one is
 * recorded by catalog_adopt()).  On any refusal nothing is written.
 * @err: one-line reason.  @return 0, -EINVAL (not a catalog / mismatch),
 * -EIO, -ENOENT.
 */
int catalog_open(const char *path, struct catalog_identity *id, uid_t root_uid, gid_t root_gid,
		 struct catalog **out, char *err, size_t errlen);
/**
 * catalog_check_device() - checks the named device @id (not main) against
 * what the catalog records of it, without writing: the same block size
 * and the same backing (its path or its id, as for main).  Sets
 * @id->recorded to the device's recorded number, or -1 when the catalog
 * does not know the device, and @id->recorded_size to the size it
 * records (0 for a new device; a smaller device is the caller's to
 * refuse, as for catalog_open()).
 * @err: one line naming the device.  @return 0, -EINVAL, -EIO.
 */
int catalog_check_device(struct catalog *cat, struct catalog_identity *id, char *err,
			 size_t errlen);

/**
 * catalog_recorded_devices() - calls @fn for each named device the catalog
 * records (name, recorded number, backing path, bytes of extents and gaps
 * it holds) until @fn returns non-zero, which is returned.
 * @return 0, -EIO, or @fn's value.
 */
int catalog_recorded_devices(struct catalog *cat,
			     int (*fn)(void *opaque, const char *name, unsigned index,
				       const char *backing_path, uint64_t used),
			     void *opaque);

/**
 * catalog_file_devices() - calls @fn for each (inode, recorded device
 * number) pair of the extents of the files that directories name, until
 * @fn returns non-zero, which is returned.  @return 0, -EIO, or @fn's value.
 */
int catalog_file_devices(struct catalog *cat, int (*fn)(void *opaque, uint64_t ino, unsigned dev),
			 void *opaque);

/**
 * catalog_subtree_devices() - calls @fn for @ino (relpath "") and each
 * file below it when @ino is a directory (relpath from @ino, "a/b"), with
 * the device number of its extents, for those with extents, until @fn
 * returns non-zero, which is returned.  Extents not flushed yet are not
 * seen.  @return 0, -ENOMEM, -EIO, or @fn's value.
 */
int catalog_subtree_devices(struct catalog *cat, uint64_t ino,
			    int (*fn)(void *opaque, const char *relpath, unsigned dev),
			    void *opaque);

/**
 * catalog_adopt() - once the mount succeeded: records the @n identities
 * of @ids (ids[0] is main; its backing path and id, device size; each
 * named device's under device.NAME.*), renumbers the dev columns of the
 * extents and gaps of each named device whose recorded number differs
 * from its number in this mount, forgets the named devices the mount does
 * not have (they hold nothing: the mount refuses otherwise), and deletes
 * the orphans found at open (inodes no directory names, left by a daemon
 * killed while they were open).  catalog_used_runs() already leaves the
 * orphans out.  One transaction.  @return 0, -EIO.
 */
int catalog_adopt(struct catalog *cat, const struct catalog_identity *ids, unsigned n);
/** catalog_close() - checkpoints and closes. */
void catalog_close(struct catalog *cat);

int catalog_get_attr(struct catalog *cat, uint64_t ino, struct inode_attr *a);
/** catalog_lookup() - the inode number of @name in directory @parent, or -ENOENT. */
int catalog_lookup(struct catalog *cat, uint64_t parent, const char *name, uint64_t *ino);
/**
 * catalog_create() - a new inode with @a (a->ino is set) linked as @name in
 * @parent; @symlink_target for symlinks, else NULL.  -EEXIST when taken.
 */
int catalog_create(struct catalog *cat, uint64_t parent, const char *name, struct inode_attr *a,
		   const char *symlink_target);
/** catalog_link() - adds @name in @parent for @ino and nlink+1. -EEXIST. */
int catalog_link(struct catalog *cat, uint64_t parent, const char *name, uint64_t ino,
		 const struct timespec *ctime);
/**
 * catalog_unlink() - removes @name from @parent, decrements the inode's
 * nlink (by 2 and the parent's by 1 for a directory: rmdir); *@ino gets the
 * inode.  @dir: 1 = must be a non-empty-checked directory (-ENOTEMPTY,
 * -ENOTDIR), 0 = must not be a directory (-EISDIR).
 */
int catalog_unlink(struct catalog *cat, uint64_t parent, const char *name, int dir,
		   uint64_t *ino);
/**
 * catalog_rename() - rename(2) semantics with RENAME_NOREPLACE and
 * RENAME_EXCHANGE in one transaction; *@replaced gets the inode whose last
 * link was replaced (its nlink decremented), 0 for none.
 */
int catalog_rename(struct catalog *cat, uint64_t parent, const char *name, uint64_t newparent,
		   const char *newname, unsigned flags, uint64_t *replaced);
/** catalog_delete_inode() - removes the inode row, its extents, gaps and xattrs. */
int catalog_delete_inode(struct catalog *cat, uint64_t ino);
/** catalog_readlink() - the target of symlink @ino (malloc'd). */
int catalog_readlink(struct catalog *cat, uint64_t ino, char **target);

/** One directory entry for catalog_readdir(). */
struct catalog_dirent {
	uint64_t ino;
	mode_t mode;
	const char *name;
	int64_t cookie; /* resume after this */
};
/**
 * catalog_readdir() - calls @fn for the entries of @dir after @cookie (0 =
 * from the start), in cookie order, until @fn returns non-zero.
 */
int catalog_readdir(struct catalog *cat, uint64_t dir, int64_t cookie,
		    int (*fn)(void *opaque, const struct catalog_dirent *d), void *opaque);
/** catalog_dir_is_empty() - 1 when @dir has no entries, 0 otherwise. */
int catalog_dir_is_empty(struct catalog *cat, uint64_t dir);
/** catalog_path_of() - a path of @ino from the root ("" for the root), malloc'd. */
int catalog_path_of(struct catalog *cat, uint64_t ino, char **path);

/** catalog_load_extents() - fills @map and @gaps of @ino. */
int catalog_load_extents(struct catalog *cat, uint64_t ino, struct extent_map *map,
			 struct run_vec *gaps);
/**
 * catalog_store_inode() - in one transaction, @a (when not NULL: the inode's
 * attributes, a->ino's row) and (when @map is not NULL) @ino's extents at
 * logical >= @from replaced with those of @map (none when @from is
 * UINT64_MAX) and, if @gaps, its gaps.  With @durable the transaction
 * commits with an fsync of the catalog's WAL, which makes it and every
 * commit before it durable (as catalog_sync(), and counted as one of its
 * synchronous commits): fsync's attributes, extents and durability cost
 * one commit and one fsync.  @return 0, -EIO, -ENOSPC.
 */
int catalog_store_inode(struct catalog *cat, const struct inode_attr *a, uint64_t ino,
			const struct extent_map *map, uint64_t from, const struct run_vec *gaps,
			bool durable);
/**
 * catalog_used_runs() - appends to @out every run of device @dev in use
 * (extents and gaps of all inodes but the orphans), in no particular order, for
 * rebuilding the allocator at mount (devalloc_reserve_all() sorts them).
 * @return 0, -ENOMEM, -EIO.
 */
int catalog_used_runs(struct catalog *cat, unsigned dev, struct run_vec *out);
/**
 * catalog_files_past() - the files with an extent of recorded device @dev
 * that ends past byte @end of it (orphans and extents of no inode left
 * out): *@nfiles gets how many, *@max_end the largest end of such an
 * extent, and @paths[0..*@npaths) the first @max of their paths in sort
 * order (one path a file, malloc'd: the caller frees them).
 * @return 0, -ENOMEM, -EIO.
 */
int catalog_files_past(struct catalog *cat, unsigned dev, uint64_t end, char **paths, size_t max,
		       size_t *npaths, uint64_t *nfiles, uint64_t *max_end);
/** catalog_mapped_bytes() - sum of the lengths of @ino's extents (for st_blocks). */
int catalog_mapped_bytes(struct catalog *cat, uint64_t ino, uint64_t *bytes);
/**
 * catalog_inode_count() - the number of inodes the catalog holds: every
 * file, directory, symlink and node, the root included, and the orphans
 * (no name, still open or known to the kernel) until they are deleted.
 * Kept in memory (counted at open and adopt, then followed at each create
 * and delete), so it costs no query: statfs(2)'s used inodes.
 */
uint64_t catalog_inode_count(struct catalog *cat);
/** catalog_counts() - number of regular files and of extents in the catalog. */
int catalog_counts(struct catalog *cat, uint64_t *inodes, uint64_t *extents);

/**
 * catalog_reserved_bytes() - per device, the bytes the catalog's files hold
 * without data: extents past the end of each file's last block (space
 * allocated ahead: the rest of an extent, autoextend's next, fallocate
 * --keep-size) and the gaps the interleaved pattern keeps after extents.
 * @block_size: the @ndev devices' allocation units (bytes), by number.
 * @reserved: @ndev bytes counts, set.  @return 0, -EIO.
 */
int catalog_reserved_bytes(struct catalog *cat, const uint32_t *block_size, unsigned ndev,
			   uint64_t *reserved);

struct layout_stats;
/**
 * catalog_layout_stats() - the static layout (layout_score.h) of every
 * file in the catalog over blocks of @block_size bytes, added up file by
 * file (layout_stats_add()).  @return 0, -ENOMEM, -EIO.
 */
int catalog_layout_stats(struct catalog *cat, uint64_t block_size, struct layout_stats *out);

struct layout_extent;
/**
 * catalog_file_extents() - calls @fn once per file and device with that
 * file's written extents on device @dev (the catalog's, sorted by logical
 * offset, pieces of one allocation extent joined; pieces allocated and
 * never written left out), files in inode order.  @fn runs
 * under the catalog's lock: it must not call the catalog.
 * @return 0, -ENOMEM, -EIO.
 */
int catalog_file_extents(struct catalog *cat,
			 void (*fn)(void *ctx, unsigned dev, const struct layout_extent *v, size_t n),
			 void *ctx);

int catalog_setxattr(struct catalog *cat, uint64_t ino, const char *name, const void *value,
		     size_t size, int flags);
/** catalog_getxattr() - copies up to @size bytes; *@len gets the value's length. */
int catalog_getxattr(struct catalog *cat, uint64_t ino, const char *name, void *value,
		     size_t size, size_t *len);
/** catalog_listxattr() - NUL-separated names into @buf; *@len the needed length. */
int catalog_listxattr(struct catalog *cat, uint64_t ino, char *buf, size_t size, size_t *len);
int catalog_removexattr(struct catalog *cat, uint64_t ino, const char *name);

/**
 * catalog_sync() - makes every change committed so far durable (one WAL
 * fsync).  Called for fsync and fsyncdir.
 */
int catalog_sync(struct catalog *cat);
/**
 * catalog_commit_counts() - since the catalog was opened: write
 * transactions committed (*@commits, each without an fsync of its own) and
 * synchronous commits (*@syncs, catalog_sync() calls that had something
 * to make durable and durable catalog_store_inode() calls, one fsync of
 * the WAL each).
 */
void catalog_commit_counts(struct catalog *cat, uint64_t *commits, uint64_t *syncs);
/**
 * catalog_commit_seq() - the number of write transactions committed so
 * far: a sequence number that catalog_sync_upto() takes.
 */
uint64_t catalog_commit_seq(struct catalog *cat);
/**
 * catalog_sync_upto() - catalog_sync() only when a transaction numbered up
 * to @seq (catalog_commit_seq() after it) is not durable yet; at once
 * otherwise.  @return 0, -EIO.
 */
int catalog_sync_upto(struct catalog *cat, uint64_t seq);

#endif
