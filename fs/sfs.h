/*
 * scatterfs daemon internals shared by the files in fs/ (not a public header).
 *
 * Locking order: inode->lock, then a device's alloc_lock, then the
 * catalog's own mutex.  fs->itable_lock is never held while taking another
 * lock.
 */
#ifndef SCATTERFS_SFS_H
#define SCATTERFS_SFS_H

#define FUSE_USE_VERSION 314

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <uthash.h>

#include "alloc.h"
#include "autoextend.h"
#include "config.h"
#include "device.h"
#include "extmap.h"
#include "fault.h"
#include "pins.h"

struct catalog;
struct reqlog;
struct transport;

/* Inode numbers at or above this belong to the control directory. */
#define CTL_INO_BASE (1ull << 62)

/** Attributes kept in the catalog's inode table. */
struct inode_attr {
	uint64_t ino;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	uint32_t nlink;
	uint64_t size; /* bytes */
	dev_t rdev;
	struct timespec atime, mtime, ctime;
};

struct inode {
	uint64_t ino; /* st_ino and the FUSE node id */
	UT_hash_handle hh;
	uint64_t nlookup; /* under fs->itable_lock */
	uint32_t nopen;   /* under fs->itable_lock */
	bool unlinked;    /* nlink reached 0: an orphan, deleted at the last forget/release */

	pthread_rwlock_t lock; /* protects everything below but pins */
	/*
	 * Queued device reads of this file in flight (io_queue.c):
	 * taken under lock for reading, dropped by the completion thread, so a
	 * writer that inode_wrlock() admits never sees its blocks being read.
	 */
	struct pins pins;
	struct inode_attr attr;
	bool attr_dirty;        /* attr differs from the catalog */
	uint64_t stored_size;   /* attr.size as the catalog holds it (fdatasync's test) */
	/*
	 * Write-back errors of the file, as Linux's errseq_t: twice the
	 * number of times a failed flush made the volatile layer forget
	 * writes of it (flush = linux), plus 1 once an fsync has reported the
	 * last.  Each open handle keeps the value it last reported (struct
	 * handle's wb_seen; at open, 0 while the last error is unreported, so
	 * that the opener reports it), and its next fsync fails once with EIO
	 * when the count has moved on.
	 */
	atomic_uint wb_err;
	/*
	 * The catalog transaction (catalog_commit_seq()) up to which this
	 * file's size and extents were committed: what fdatasync must make
	 * durable.  At load, every transaction before it.
	 */
	uint64_t data_seq;
	char *path;             /* relative to the root, for the log and rules */
	const struct file_params *params;
	bool map_loaded;
	uint64_t catalog_mapped; /* bytes of extents in the catalog, for st_blocks before map_loaded */
	struct extent_map map;
	struct run_vec gaps;    /* pattern gaps this file keeps reserved */
	uint64_t dirty_from;    /* lowest logical offset whose extents changed; UINT64_MAX = clean */
	bool gaps_dirty;
	/*
	 * Whether the catalog holds a security.capability for this inode, so
	 * that a write asks the catalog once per inode, not once per write
	 * (xattr_kill_caps()); set and removed only under lock.
	 */
	enum { CAPS_UNKNOWN, CAPS_NONE, CAPS_SET } caps;
};

struct sfs_stats {
	atomic_uint_fast64_t reads, bytes_read, writes, bytes_written;
	atomic_uint_fast64_t extends, extend_bytes, zero_fill_ns;
	atomic_uint_fast64_t log_io_lost; /* device I/Os missing from log rows (ENOMEM) */
	/* Writes copied into an aligned buffer before the device write: not
	 * whole blocks, or on an O_DIRECT device data not page-aligned. */
	atomic_uint_fast64_t writes_bounced;
	/*
	 * The emulation floor: replies under a disk model, and how long after
	 * their modelled completion each left (late_hist: LATE_BUCKETS
	 * log-linear buckets of microseconds, late_bucket()).
	 */
	atomic_uint_fast64_t modelled_replies, late_replies;
	atomic_uint_fast64_t late_hist[64];
};

/* Buckets of sfs_stats.late_hist: 0-3 us one each, then 4 per power of two. */
#define LATE_BUCKETS 64

/** late_bucket() - the late_hist bucket of a lateness of @us microseconds. */
static inline unsigned late_bucket(uint64_t us)
{
	if (us < 4)
		return (unsigned)us;
	unsigned lg = 63 - (unsigned)__builtin_clzll(us); /* >= 2 */
	unsigned b = 4 * (lg - 1) + (unsigned)((us >> (lg - 2)) & 3);
	return b < LATE_BUCKETS ? b : LATE_BUCKETS - 1;
}

/** late_bucket_top_us() - the largest lateness, in microseconds, bucket @b holds. */
static inline uint64_t late_bucket_top_us(unsigned b)
{
	if (b < 4)
		return b;
	unsigned lg = b / 4 + 1, sub = b % 4;
	return ((UINT64_C(4) + sub + 1) << (lg - 2)) - 1;
}

struct sfs {
	struct sfs_config cfg;
	char *backing_path;
	char *meta_path;
	/*
	 * The backing devices; dev[0] is main, the command line's BACKING,
	 * dev[i] the configuration's devices[i - 1] ([device "NAME"]), and i
	 * is the device's number in the catalog's dev columns (catalog_adopt()
	 * renumbers the rows when the sections' order changed).
	 */
	struct device *dev[SFS_MAX_DEVICES];
	unsigned ndev;
	const char *dev_names[SFS_MAX_DEVICES]; /* dev[i]->name, for the request log */
	bool model_on;       /* some device has a timing model */
	bool dies_on;        /* some device's timing model has dies (the log's dies column) */
	bool splice_replies; /* every device's stack lets replies splice from the backing */

	pthread_t
	    syncer; /* flushes and syncs every SYNC_INTERVAL_S; looks at the backings' sizes */
	bool syncer_running;
	/*
	 * Some device has [device] volatile = true (dev_volatile.c): the
	 * background sync makes nothing durable, the catalog's unsynced
	 * writes are tracked (catalog_vfs.c).  power_failed: the control
	 * file's crash ran; the daemon ends after its reply.
	 */
	bool volatile_on;
	atomic_bool power_failed;
	atomic_bool power_exit; /* the thread that ends the daemon is started */
	pthread_mutex_t syncer_lock;
	pthread_cond_t syncer_cond;
	bool syncer_stop;      /* under syncer_lock */

	struct catalog *cat;
	struct reqlog *log;
	struct fault_set faults; /* the fault layer's rules (fault.h), of every device */
	bool fault_layer;	 /* some device's stack has the fault layer */
	struct timespec start_mono;     /* ts_us = 0 */
	struct timespec start_realtime; /* wall clock at mount, for stats */

	pthread_mutex_t itable_lock;
	struct inode *itable; /* uthash by ino, under itable_lock */

	atomic_uint_fast64_t reply_ps_per_byte; /* measured cost of copying a reply */

	struct read_queue *rq; /* queued reads' contexts (io_queue.c) */

	struct sfs_stats stats;
	struct fuse_session *se;
	struct transport *tp; /* transport.c: /dev/fuse or the io_uring queues */
	/* Set by the init handler, before any other request: */
	bool posix_acl; /* FUSE_CAP_POSIX_ACL: the kernel enforces ACLs kept as xattrs */
	bool dont_mask; /* FUSE_CAP_DONT_MASK: the daemon applies the umask (or a default ACL) */
	/* FUSE_DIRECT_IO_ALLOW_MMAP granted: MAP_SHARED works on cache.mode = none files */
	bool direct_mmap;
	/*
	 * FUSE_CAP_WRITEBACK_CACHE granted (config_writeback()): the kernel
	 * owns every regular file's size, mtime and ctime while it caches,
	 * sends dirty pages at write-back (WRITE with FUSE_WRITE_CACHE), and
	 * removes privileges itself at write(2).
	 */
	bool writeback;
	double entry_timeout;
};

/* inode.c */
/**
 * inode_get() - the in-memory inode for @ino, loading its attributes from
 * the catalog when not present; takes a reference of @nlookup lookups
 * (0 for a temporary reference released with inode_put(.., 0)).
 * @return the inode, or NULL with *err = -ENOENT / -EIO / -ENOMEM.
 */
struct inode *inode_get(struct sfs *fs, uint64_t ino, uint64_t nlookup, int *err);
/** inode_find() - the in-memory inode for @ino without loading, or NULL. */
struct inode *inode_find(struct sfs *fs, uint64_t ino);
/** inode_forget() - drops @n lookups; frees (and deletes, if unlinked) at zero. */
void inode_forget(struct sfs *fs, struct inode *in, uint64_t n);
/**
 * inode_open_ref() / inode_close_ref() - count open handles.  An inode
 * with no name (unlinked) is deleted, and its space freed, when the last
 * open closes and the kernel has forgotten it, whichever comes last.
 */
void inode_open_ref(struct sfs *fs, struct inode *in);
/**
 * inode_note_wb_error() - struct device's forgot hook (@ctx: the struct
 * sfs): a failed flush forgot writes of file @ino; bumps its wb_err when
 * it is in memory (a file no handle has open has no one to tell).
 */
void inode_note_wb_error(void *ctx, uint64_t ino);
void inode_close_ref(struct sfs *fs, struct inode *in);
/** inode_set_path() - records @parent_path/@name as the inode's path and picks its rule. */
void inode_set_path(struct sfs *fs, struct inode *in, const char *parent_path, const char *name);
/**
 * inode_load_map() - loads the extent map from the catalog if not yet
 * loaded.  Caller holds in->lock for writing.  @return 0, -EIO, -ENOMEM.
 */
int inode_load_map(struct sfs *fs, struct inode *in);
/**
 * inode_store() - writes the inode's dirty extents and gaps and, with
 * @attrs, its dirty attributes to the catalog, in one transaction; with
 * @durable, that commit also makes the catalog durable (one WAL fsync) up
 * to it, and when nothing is dirty, the catalog is made durable up to the
 * inode's last commit (@attrs: up to every commit so far).  fsync is
 * (@attrs, @durable); fdatasync of a file whose size did not change
 * (!@attrs, @durable), as ext4's, which leaves a new mtime in memory.
 * Caller holds in->lock (read or write).  @return 0, -EIO, -ENOSPC.
 */
int inode_store(struct sfs *fs, struct inode *in, bool attrs, bool durable);
/** inode_flush() - inode_store(@fs, @in, true, false). */
int inode_flush(struct sfs *fs, struct inode *in);
/**
 * inode_flush_all() - inode_flush() on every in-memory inode.  With @final
 * (unmount), inodes that are unlinked but still referenced are deleted;
 * otherwise they are left alone.  @held: an inode whose lock the caller
 * already holds for writing (flushed without locking), or NULL.  Never
 * holds itable_lock while taking an inode's lock.
 */
int inode_flush_all(struct sfs *fs, bool final, struct inode *held);
/**
 * inode_rename_paths() - after directory @old_path was renamed to
 * @new_path, updates the path (and rule) of every in-memory inode below it.
 */
void inode_rename_paths(struct sfs *fs, const char *old_path, const char *new_path);
/**
 * sfs_defer_free() - frees [@off, @off+@len) of device @d once the catalog
 * durably no longer refers to it (see struct device's pending_free); its
 * trim then carries @from (NULL: no file).  Caller holds @d->alloc_lock.
 */
void sfs_defer_free(struct device *d, uint64_t off, uint64_t len, const struct freed_from *from);
/**
 * sfs_pending_release() - forgets the runs still pending on @d without
 * trimming or freeing them (teardown: the allocator goes too).
 */
void sfs_pending_release(struct device *d);
/**
 * sfs_flush_ordered() - flushes every device that holds new data (new
 * extents, zero-fill) written since its last flush (struct device's
 * new_data_gen), as ext4's data=ordered journal commit writes such data
 * first: called before every catalog sync (the catalog VFS's hook, set
 * at mount), so no durable catalog row points at bytes a crash can take
 * back.  @r: the request the flushes are charged to, or NULL (the
 * daemon's own: not charged by a disk model, seen by fault rules).
 * @return 0, or the first -errno.
 */
int sfs_flush_ordered(struct sfs *fs, struct dev_req *r);
/**
 * sfs_flush_devices() - flushes every device (dev_flush()): the
 * background sync and the mount's start.  Only @mine's flush is @r's (its
 * modelled time and the log); @mine and @r may be NULL.  @return 0, or the
 * first -errno.
 */
int sfs_flush_devices(struct sfs *fs, struct device *mine, struct dev_req *r);
/** inode_extents_dirty() - whether @in has extents or gaps the catalog does not hold yet. */
static inline bool inode_extents_dirty(const struct inode *in)
{
	return in->map_loaded && (in->dirty_from != UINT64_MAX || in->gaps_dirty);
}
/* Bytes of device per inode in statfs(2)'s total: ext4's default inode_ratio (mke2fs.conf(5)). */
#define SFS_INODE_RATIO 16384
/**
 * sfs_inodes() - statfs(2)'s inode figures for a mount of @total_bytes
 * (every device): *@files = @total_bytes / SFS_INODE_RATIO, or the inodes
 * in use when more; *@ffree = *@files minus the inodes in use (every
 * inode of the catalog, orphans included).  A count, not a limit.
 */
void sfs_inodes(struct sfs *fs, uint64_t total_bytes, uint64_t *files, uint64_t *ffree);
/**
 * sfs_space() - bytes of all devices, and of them free for files (space
 * waiting for a durable catalog counts as free, as it is for statfs).
 */
void sfs_space(struct sfs *fs, uint64_t *total, uint64_t *free_bytes);
/**
 * sfs_rule_device() - the device that [layout] device of @fp names (the
 * configuration was checked: every name is a device of the mount).
 */
static inline struct device *sfs_rule_device(struct sfs *fs, const struct file_params *fp)
{
	for (unsigned i = 1; i < fs->ndev; i++)
		if (strcmp(fs->dev[i]->name, fp->device) == 0)
			return fs->dev[i];
	return fs->dev[0];
}

/**
 * inode_device() - the backing device that holds @in's extents: the one
 * its extents are on, else the one its rule names.  A file never moves: a
 * rename or link under a rule naming another device gets EXDEV (ops.c).
 */
static inline struct device *inode_device(struct sfs *fs, const struct inode *in)
{
	if (in->map_loaded && in->map.n)
		return fs->dev[in->map.v[0].dev];
	return sfs_rule_device(fs, in->params);
}

/**
 * sfs_sync() - flushes every inode's attributes and extents to the
 * catalog, makes the catalog durable, then releases the runs that were
 * pending before it started.  @held: an inode whose lock the caller holds
 * for writing (flushed without locking), or NULL.  @return 0, -errno.
 */
int sfs_sync(struct sfs *fs, struct inode *held);
/** sfs_syncer_start() / sfs_syncer_stop() - the background sync thread. */
int sfs_syncer_start(struct sfs *fs);
void sfs_syncer_stop(struct sfs *fs);
#define SYNC_INTERVAL_S 5

/** inode_table_free() - frees every in-memory inode (after inode_flush_all(), at unmount). */
void inode_table_free(struct sfs *fs);
/**
 * inode_wrlock() - takes @in->lock for writing, then waits until no queued
 * device read of @in is in flight (@in->pins 0), so the caller may change
 * the extent map and free or reuse the blocks.  Every writer of an inode
 * takes its lock this way.
 */
void inode_wrlock(struct inode *in);
/**
 * inode_trywrlock() - inode_wrlock() without waiting: 0 with the lock held,
 * or EBUSY (not -errno) when the lock is taken or queued reads pin @in.
 */
int inode_trywrlock(struct inode *in);
/** inode_to_stat() - fills @st from the attributes (st_blocks from mapped bytes). */
void inode_to_stat(const struct inode *in, struct stat *st);
/**
 * inode_free_space() - frees the extents of @in from logical offset @from
 * (a multiple of the block size) to its allocated end, and their gaps
 * (every gap when @from is 0).  Caller holds in->lock for writing.  The
 * space goes to the device's pending_free: reusable after the next catalog
 * sync, and its trims carry @op (DEV_OP_TRUNCATE, DEV_OP_UNLINK), @in's
 * inode number and path.
 */
void inode_free_space(struct sfs *fs, struct inode *in, uint64_t from, enum dev_op op);
/**
 * inode_unmap() - unmaps logical [@off, +@len) of @in (block-aligned),
 * deferring the free of the extent pieces it held and of the pattern gap of
 * each extent whose device end goes with them (sfs_defer_free; their
 * trims carry @op, @in's inode number and path).  Caller holds in->lock
 * for writing and not the device's alloc_lock.
 * @return 0, -ENOMEM (nothing unmapped).
 */
int inode_unmap(struct sfs *fs, struct inode *in, uint64_t off, uint64_t len, enum dev_op op);

/* io.c */
/** Reads [off, off+size) of @in and replies to @req.  Caller holds no lock. */
void io_read(struct sfs *fs, fuse_req_t req, struct inode *in, uint64_t off, size_t size);
/**
 * io_queue_start() - starts every device stack's threads (the completion
 * thread of queued reads, device.async_reads, on an O_DIRECT backing
 * without a timing model) and the queued reads' contexts (io_queue.c).
 * @return 0, or -errno from io_setup/pthread_create: reads then stay
 * synchronous.
 */
int io_queue_start(struct sfs *fs);
/** io_queue_stop() - answers the reads still in flight, then stops the stacks' threads. */
void io_queue_stop(struct sfs *fs);
/**
 * io_fsyncdir() - fsync(2) (@datasync false) or fdatasync(2) of directory
 * @in: the devices' new data (sfs_flush_ordered(), charged to the
 * request), then the catalog durable with @in's attributes (fsync) or as
 * it is (fdatasync).  @return 0 or -errno.
 */
int io_fsyncdir(struct sfs *fs, struct inode *in, bool datasync);
/**
 * io_write() - writes @size bytes from @buf at @off of @in, allocating
 * through the pattern.  Caller holds in->lock for writing.
 * @return bytes written, or -errno.
 */
ssize_t io_write(struct sfs *fs, struct inode *in, const char *buf, size_t size, uint64_t off,
		 pid_t pid);
/**
 * io_fallocate() - allocates (mode 0, KEEP_SIZE), punches (PUNCH_HOLE) or
 * zeroes (ZERO_RANGE) [off, off+len) of @in.  Caller holds in->lock for
 * writing.  @return 0, -errno.
 */
int io_fallocate(struct sfs *fs, struct inode *in, int mode, uint64_t off, uint64_t len,
		 pid_t pid);
/**
 * io_fallocate_supported() - whether io_fallocate() does @mode (0,
 * KEEP_SIZE, PUNCH_HOLE with KEEP_SIZE, ZERO_RANGE with or without
 * KEEP_SIZE) rather than refuse it with -EOPNOTSUPP.
 */
bool io_fallocate_supported(int mode);
/**
 * io_truncate() - sets the size of @in, freeing whole blocks past it and
 * zeroing the tail of the last block.  Caller holds in->lock for writing.
 */
int io_truncate(struct sfs *fs, struct inode *in, uint64_t size);
/**
 * io_fsync() - makes @in's data, size and extents durable; with @datasync
 * (fdatasync), its other attributes (times, mode, owner) only when its
 * size changed too, as ext4's fdatasync does: what reading the data back
 * does not need waits for the next flush.  So a file overwritten in place
 * (a database's log) costs one device flush per fdatasync, no catalog
 * commit, and its device flush holds no lock of the file.  Takes @in's
 * lock itself.  @wb_seen (NULL: none): the open handle's last reported
 * in->wb_err; a write-back error it has not reported (a failed flush
 * forgot writes of the file since) fails this fsync once with EIO, as
 * Linux reports one to each open file.  @return 0, -errno.
 */
int io_fsync(struct sfs *fs, struct inode *in, pid_t pid, bool datasync, atomic_uint *wb_seen);
/** now_us() - microseconds since the mount. */
uint64_t now_us(const struct sfs *fs);

/*
 * The handlers.  Each takes the daemon's state from its request
 * (fuse_req_userdata(), the struct sfs the session was created with), never
 * from a global.
 */

/* xattr.c: extended attributes and POSIX ACLs (handlers of sfs_file_ops) */
void sfs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		  size_t size, int flags);
void sfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void sfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void sfs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);
/**
 * xattr_acl_chmod() - after a chmod of @in (in->attr.mode already new): its
 * access ACL, if it has one, takes the new owner, group-class and other
 * permissions, as chmod(2) does to a file with an ACL (acl(5)).  Caller
 * holds in->lock for writing.  @return 0, -ENOMEM, -EIO.
 */
int xattr_acl_chmod(struct sfs *fs, struct inode *in);

/** The ACLs of a new node, from its parent's default ACL (xattr_acl_new_node()). */
struct new_acl {
	void *dflt;   /* the default ACL a new directory inherits, or NULL */
	void *access; /* the new node's access ACL, or NULL when its mode says it all */
	size_t len;   /* bytes of each (both are the parent's default ACL's size) */
};
/**
 * xattr_acl_new_node() - for a node about to be created in @parent with
 * *@mode: the parent's default ACL, when it has one, masks *@mode and gives
 * the node its ACLs into @na (acl(5), "Object creation and default ACLs");
 * without one, @umask (the caller's, which the kernel leaves to us under
 * FUSE_CAP_DONT_MASK) masks *@mode.  A symbolic link takes neither.  Caller
 * holds @parent's lock.  @na is always set; free its two buffers.
 * @return 0, -ENOMEM, -EIO.
 */
int xattr_acl_new_node(struct sfs *fs, uint64_t parent, mode_t *mode, mode_t umask,
		       struct new_acl *na);
/** xattr_acl_store() - stores @na's ACLs as node @ino's.  @return 0, -EIO. */
int xattr_acl_store(struct sfs *fs, uint64_t ino, const struct new_acl *na);
/**
 * xattr_kill_caps() - removes @in's file capability (security.capability)
 * if it has one: the part of the kernel's file_remove_privs() that
 * security_inode_need_killpriv() and security_inode_killpriv() do (the
 * capability module: a file capability goes at any change of the file's
 * data or owner, whoever makes it, root included).  *@killed tells whether
 * one was removed.  The catalog is asked once per inode (in->caps).
 * Caller holds in->lock for writing.  @return 0, -EIO.
 */
int xattr_kill_caps(struct sfs *fs, struct inode *in, bool *killed);
/**
 * xattr_acl_access() - the access ACL of inode @ino (the
 * system.posix_acl_access bytes) into a new buffer *@value of *@len bytes,
 * freed by the caller.  @return 0, -ENODATA without one (or when the
 * kernel does not enforce ACLs), -ENOMEM, -EIO.
 */
int xattr_acl_access(struct sfs *fs, uint64_t ino, void **value, size_t *len);

/* ctl.c: the hidden control directory */
/** ctl_is_ino() - whether @ino is a node of the control directory. */
bool ctl_is_ino(uint64_t ino);
/**
 * ctl_inval_mirrors() - after the owner, group, mode or access ACL of
 * inode @ino changed: tells the kernel to drop what it caches of the
 * nodes that mirror @ino in .scatterfs/extents/ and .scatterfs/layout/
 * (their attributes and their ACL, which carry @ino's), so its next
 * permission check there asks again.  Takes no lock.
 */
void ctl_inval_mirrors(struct sfs *fs, uint64_t ino);
/** The handlers of control inodes (and of names that would enter or leave the directory). */
extern const struct fuse_lowlevel_ops ctl_ops;

/* ops.c: the handlers of the files of the mount (never given a control inode) */
extern const struct fuse_lowlevel_ops sfs_file_ops;

/* dispatch.c: the table the session runs, routing each request to one of the two above */
extern const struct fuse_lowlevel_ops sfs_ops;

#endif
