/*
 * FUSE low-level operation handlers: decode, call the catalog, inode
 * table or I/O path, reply.  Permission checks are the kernel's
 * (default_permissions is always on), and so are POSIX ACLs' (kept as
 * xattrs, FUSE_CAP_POSIX_ACL: xattr.c); locks are left to the kernel (no
 * getlk/setlk/flock), which keeps POSIX and flock locks for one host.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <utlist.h>

#include "catalog.h"
#include "fuse_wire.h"
#include "reqlog.h"
#include "sfs.h"
#include "transport.h"

#define ATTR_TIMEOUT 1.0

/* The inode the kernel refers to as @ino (it holds a lookup on it). */
static struct inode *iget(struct sfs *fs, fuse_ino_t ino, int *err)
{
	struct inode *in = inode_find(fs, ino);
	if (in)
		return in;
	return inode_get(fs, ino, 0, err);
}

/*
 * An open file's handle (fi->fh points at it): its inode; whether the
 * open gave the kernel direct I/O (FOPEN_DIRECT_IO: cache.mode = none for
 * the file's name then), which it keeps for its life, as the kernel does,
 * even when a rename puts the file under a rule of the other mode; and
 * the file's write-back error count (in->wb_err) it last reported, so
 * that each handle's next fsync reports a forgotten write once, as
 * Linux's file->f_wb_err does.
 */
struct handle {
	struct inode *in;
	bool direct;
	atomic_uint wb_seen;
	struct handle *prev, *next; /* every open handle (utlist), freed at unmount if not released */
};

static struct handle *open_handles;
static pthread_mutex_t open_handles_lock = PTHREAD_MUTEX_INITIALIZER;

static struct handle *fh_handle(uint64_t fh)
{
	return (struct handle *)(uintptr_t)fh;
}

/* fh_inode() - the inode of handle @fh (not 0). */
static struct inode *fh_inode(uint64_t fh)
{
	return fh_handle(fh)->in;
}

/* The inode of an open file: from its handle, else from the table. */
static struct inode *iget_open(struct sfs *fs, fuse_ino_t ino, struct fuse_file_info *fi,
			       int *err)
{
	if (fi && fi->fh)
		return fh_inode(fi->fh);
	return iget(fs, ino, err);
}

/* Makes sure in->path is set (inodes reached without a lookup). */
static void ensure_path(struct sfs *fs, struct inode *in)
{
	if (in->path)
		return;
	char *p;
	if (in->ino == FUSE_ROOT_ID)
		p = strdup("");
	else if (catalog_path_of(fs->cat, in->ino, &p))
		return;
	if (!p)
		return;
	inode_wrlock(in);
	if (!in->path) {
		in->path = p;
		in->params = config_for_path(&fs->cfg, p);
		p = NULL;
	}
	pthread_rwlock_unlock(&in->lock);
	free(p);
}

static void fill_entry(struct sfs *fs, struct inode *in, struct fuse_entry_param *e)
{
	memset(e, 0, sizeof *e);
	e->ino = in->ino;
	e->generation = 1;
	e->attr_timeout = ATTR_TIMEOUT;
	e->entry_timeout = fs->entry_timeout;
	pthread_rwlock_rdlock(&in->lock);
	inode_to_stat(in, &e->attr);
	pthread_rwlock_unlock(&in->lock);
}

/* Looks up @name in @parent taking one lookup reference. */
static int do_lookup(struct sfs *fs, fuse_ino_t parent, const char *name,
		     struct fuse_entry_param *e)
{
	uint64_t ino;
	int err = catalog_lookup(fs->cat, parent, name, &ino);
	if (err)
		return err;
	struct inode *in = inode_get(fs, ino, 1, &err);
	if (!in)
		return err;
	struct inode *p = iget(fs, parent, &err);
	if (p) {
		ensure_path(fs, p);
		inode_set_path(fs, in, p->path, name);
	}
	fill_entry(fs, in, e);
	return 0;
}

static void sfs_init(void *userdata, struct fuse_conn_info *conn)
{
	struct sfs *fs = userdata;
	/*
	 * Shared mmap of direct-I/O files, where the kernel allows it (6.6):
	 * transport.c adds FUSE_DIRECT_IO_ALLOW_MMAP to the reply.  Then the
	 * built-in rule that gave SQLite's -shm files the page cache has no
	 * reason left; no lookup has happened yet (INIT comes first), so no
	 * inode has taken it.
	 */
	fs->direct_mmap = transport_init_offered(fs) & FUSE_DIRECT_IO_ALLOW_MMAP;
	if (fs->direct_mmap)
		config_drop_builtin_rules(&fs->cfg);
	/* Splicing pays when replies come from the backing's file descriptor;
	 * replies from memory (O_DIRECT backing, disk model) go faster with a
	 * plain writev than with vmsplice and splice (measured with perf).  A
	 * ring's replies are copied into its payload buffer: never spliced. */
	if ((conn->capable & FUSE_CAP_SPLICE_WRITE) && fs->splice_replies &&
	    !transport_uses_ring(fs))
		conn->want |= FUSE_CAP_SPLICE_WRITE;
	else
		conn->want &= ~(unsigned)(FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE);
	conn->want &= ~(unsigned)FUSE_CAP_SPLICE_READ;
	if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
		conn->want |= FUSE_CAP_PARALLEL_DIROPS;
	/*
	 * The kernel's write-back cache (cache.writeback, every file in kernel
	 * mode: config_writeback()), as a local file system has one: dirty
	 * pages reach the daemon at write-back, fsync or close, in page
	 * multiples, and the log sees them so.  The kernel then keeps size,
	 * mtime and ctime (it sends them back by SETATTR), computes O_APPEND
	 * offsets, may read whole pages through a handle opened O_WRONLY
	 * (nothing here checks a handle's access mode), and removes the file
	 * capability at write(2) itself (file_remove_privs(): REMOVEXATTR):
	 * the write-back WRITE carries the flusher's credentials, not the
	 * writer's, so sfs_write() judges none.  Set-id bits the kernel's
	 * FUSE side would not clear right (its fuse_setattr() drops
	 * set-group-ID only when the group may execute, ext4 also when the
	 * writer is outside the group: tests/mount/killpriv.sh), so
	 * transport.c adds FUSE_HANDLE_KILLPRIV_V2 to the INIT reply
	 * (libfuse 3.14 cannot ask for it): then a write(2) by a caller
	 * without CAP_FSETID to a file whose set-id bits it would drop goes
	 * through to the daemon at once, in the caller's context, where
	 * kill_priv() judges it as in the other modes.  Without the cache
	 * (cache.mode = none, or cache.writeback = false) every write(2)
	 * reaches the daemon before it returns, and nothing here changes.
	 */
	fs->writeback =
	    (conn->capable & FUSE_CAP_WRITEBACK_CACHE) && config_writeback(&fs->cfg, NULL, 0);
	if (fs->writeback)
		conn->want |= FUSE_CAP_WRITEBACK_CACHE;
	else
		conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
	/*
	 * POSIX ACLs: the kernel enforces them and caches them; keeping the
	 * mode in step and inheriting default ACLs is ours.  With ACLs the VFS
	 * no longer applies the umask, FUSE's kernel side does unless told
	 * not to: DONT_MASK lets a default ACL replace the umask, as acl(5)
	 * says, and make_node() applies the umask when there is none.
	 */
	if (conn->capable & FUSE_CAP_POSIX_ACL) {
		conn->want |= FUSE_CAP_POSIX_ACL;
		fs->posix_acl = true;
		if (conn->capable & FUSE_CAP_DONT_MASK) {
			conn->want |= FUSE_CAP_DONT_MASK;
			fs->dont_mask = true;
		}
	}
	conn->max_readahead = (unsigned)fs->cfg.defaults.cache.readahead;
	/* The kernel skips readahead while this many background requests are
	 * queued (libfuse's default threshold is 9): with a slow device or the
	 * disk model that turned readahead into two-page reads. */
	conn->max_background = 64;
	conn->congestion_threshold = 48;
}

static void sfs_destroy(void *userdata)
{
	struct sfs *fs = userdata;
	inode_flush_all(fs, true, NULL);
	inode_table_free(fs);
	struct handle *h, *tmp;
	pthread_mutex_lock(&open_handles_lock);
	DL_FOREACH_SAFE(open_handles, h, tmp)
	{
		DL_DELETE(open_handles, h);
		free(h);
	}
	pthread_mutex_unlock(&open_handles_lock);
}

static void sfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct sfs *fs = fuse_req_userdata(req);
	struct fuse_entry_param e;
	int err = do_lookup(fs, parent, name, &e);
	/*
	 * A missing name is a negative entry (node ID 0), cached as long as
	 * a positive one: every name this file system gains comes through
	 * the kernel (create, mkdir, link, rename...), which replaces the
	 * negative dentry, so the cache cannot hide one (the control
	 * directory's own lookups cache nothing).  SQLite looks for its
	 * journal at every transaction: two LOOKUPs of the 27 requests a
	 * transaction (tests/mount/lookup-cache.sh).
	 */
	if (err == -ENOENT) {
		memset(&e, 0, sizeof e);
		e.entry_timeout = fs->entry_timeout;
		fuse_reply_entry(req, &e);
	} else if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_entry(req, &e);
}

static void sfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct sfs *fs = fuse_req_userdata(req);
	struct inode *in = inode_find(fs, ino);
	if (in)
		inode_forget(fs, in, nlookup);
	fuse_reply_none(req);
}

static void sfs_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct sfs *fs = fuse_req_userdata(req);
	for (size_t i = 0; i < count; i++) {
		struct inode *in = inode_find(fs, forgets[i].ino);
		if (in)
			inode_forget(fs, in, forgets[i].nlookup);
	}
	fuse_reply_none(req);
}

static void sfs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sfs *fs = fuse_req_userdata(req);
	int err;
	struct inode *in = iget(fs, ino, &err);
	if (!in) {
		fuse_reply_err(req, -err);
		return;
	}
	struct stat st;
	pthread_rwlock_rdlock(&in->lock);
	inode_to_stat(in, &st);
	pthread_rwlock_unlock(&in->lock);
	fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

/*
 * The credentials of the caller of @req that decide whether its write
 * keeps a file's set-user-ID and set-group-ID bits, from its
 * /proc/PID/status (proc(5); the FUSE pid is the calling thread's, whose
 * credentials these are): *@fsetid whether CAP_FSETID is in its effective
 * set (CapEff), *@in_group whether @gid is its file-system group or one of
 * its supplementary groups (Groups).  A caller gone by now counts as having
 * CAP_FSETID when it ran as root, as it almost surely did.
 */
static void caller_creds(fuse_req_t req, gid_t gid, bool *fsetid, bool *in_group)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	*fsetid = ctx->uid == 0;
	*in_group = ctx->gid == gid;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int)ctx->pid);
	FILE *f = ctx->pid > 0 ? fopen(path, "re") : NULL;
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	unsigned long long eff;
	while (getline(&line, &cap, f) > 0) {
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			*fsetid = eff & (1ull << CAP_FSETID);
		} else if (strncmp(line, "Groups:", 7) == 0) {
			char *p = line + 7, *end;
			for (unsigned long g = strtoul(p, &end, 10); end != p;
			     p = end, g = strtoul(p, &end, 10))
				if (g == gid)
					*in_group = true;
		}
	}
	free(line);
	fclose(f);
}

/*
 * The kernel's file_remove_privs() for this file system: before @in's data
 * or size is changed (write, fallocate, truncate, O_TRUNC open) by the
 * caller of @req, as ext4 gets it from the VFS.  Two things go, each by
 * its own rule (the expected values are ext4's on this machine's 6.18
 * kernel, tests/mount/killpriv.sh and killcaps.sh):
 *
 *   - set-user-ID, and set-group-ID when the group may execute or the
 *     caller is not in the file's group, for a caller without CAP_FSETID
 *     (should_remove_suid(), setattr_should_drop_sgid(): 02767 -> 0767
 *     for a writer outside the group, 02767 kept for one inside it);
 *   - the file capability (security.capability), whoever the caller is,
 *     root included (security_inode_need_killpriv() and
 *     security_inode_killpriv(): cap_inode_killpriv() asks nothing of the
 *     caller), xattr_kill_caps();
 *
 * so that a modified program keeps no privilege.  A chown (ATTR_KILL_PRIV)
 * takes the capability through here too (sfs_setattr()).
 *
 * Done in the daemon, not left to the kernel: libfuse 3.14 knows no
 * FUSE_CAP_HANDLE_KILLPRIV_V2 and does not pass the handler the
 * FUSE_WRITE_KILL_SUIDGID flag the kernel sets on such writes, and the
 * kernel removes privileges itself only on its page-cache path (cache.mode
 * = kernel), for fallocate, truncate and chown, not on a direct-I/O write
 * (cache.mode = none, or a copy or splice that falls back to one); nor does
 * it clear set-id bits at an O_TRUNC open (atomic_o_trunc skips its
 * setattr).  Where the kernel did it first, this finds nothing left.  The
 * caller's credentials are read only when the file has a set-id bit; the
 * catalog is asked about a capability once per inode.  The new mode goes
 * to the catalog at once, as a chmod does (if that fails it stays dirty
 * for the next flush); with @notify the kernel is told to drop the
 * attributes it caches (a reply that carries none: a direct-I/O write's
 * refreshes only size and times, an open's nothing); only the attributes,
 * which takes no lock the caller's request holds.  Caller holds in->lock
 * for writing.  @return 0, or -errno from the catalog: the caller then
 * fails the request before changing anything, as a write fails when
 * file_remove_privs() does.
 */
static int kill_priv(struct sfs *fs, fuse_req_t req, struct inode *in, bool notify)
{
	mode_t m = in->attr.mode, kill = 0;
	if (!S_ISREG(m))
		return 0;
	if (m & (S_ISUID | S_ISGID)) {
		bool fsetid, in_group;
		caller_creds(req, in->attr.gid, &fsetid, &in_group);
		if (!fsetid && (m & S_ISUID))
			kill |= S_ISUID;
		if (!fsetid && (m & S_ISGID) && ((m & S_IXGRP) || !in_group))
			kill |= S_ISGID;
	}
	bool caps;
	int err = xattr_kill_caps(fs, in, &caps);
	if (err)
		return err;
	if (!kill && !caps)
		return 0;
	in->attr.mode &= ~kill;
	clock_gettime(CLOCK_REALTIME, &in->attr.ctime);
	in->attr_dirty = true;
	inode_flush(fs, in);
	if (notify)
		fuse_lowlevel_notify_inval_inode(fs->se, in->ino, -1, 0);
	return 0;
}

static void sfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
			struct fuse_file_info *fi)
{
	struct sfs *fs = fuse_req_userdata(req);
	int err = 0;
	struct inode *in = iget(fs, ino, &err);
	if (!in) {
		fuse_reply_err(req, -err);
		return;
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	inode_wrlock(in);
	/*
	 * A truncate, to any size, and a chown or chgrp, to any owner, remove
	 * the file's privileges as on ext4 (the kernel's do_truncate() and
	 * chown_common() ask for ATTR_KILL_PRIV): before the change.  The
	 * reply carries the attributes: no notification.
	 */
	/*
	 * Under FUSE_HANDLE_KILLPRIV_V2 (the write-back cache: sfs_init())
	 * the kernel leaves a chown's set-id removal to us, and a chown(-1,
	 * -1), which removes them on ext4, arrives as a SETATTR of the change
	 * time alone (nothing else sends one: the kernel's own times come
	 * with the mtime): a chown to the same owner.
	 */
	bool chown_same = fs->writeback && S_ISREG(in->attr.mode) && to_set == FUSE_SET_ATTR_CTIME;
	if ((to_set & (FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) || chown_same)
		err = kill_priv(fs, req, in, false);
	if (!err && (to_set & FUSE_SET_ATTR_SIZE)) {
		if (!S_ISREG(in->attr.mode))
			err = S_ISDIR(in->attr.mode) ? -EISDIR : -EINVAL;
		else
			err = io_truncate(fs, in, (uint64_t)attr->st_size);
	}
	if (!err) {
		if (to_set & FUSE_SET_ATTR_MODE) {
			in->attr.mode = (in->attr.mode & S_IFMT) | (attr->st_mode & 07777);
			err = xattr_acl_chmod(fs, in);
		}
		if (to_set & FUSE_SET_ATTR_UID)
			in->attr.uid = attr->st_uid;
		if (to_set & FUSE_SET_ATTR_GID)
			in->attr.gid = attr->st_gid;
		if (((to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) || chown_same) &&
		    !S_ISDIR(in->attr.mode))
			in->attr.mode &= ~(mode_t)(S_ISUID | S_ISGID);
		if (to_set & FUSE_SET_ATTR_ATIME_NOW)
			in->attr.atime = now;
		else if (to_set & FUSE_SET_ATTR_ATIME)
			in->attr.atime = attr->st_atim;
		if (to_set & FUSE_SET_ATTR_MTIME_NOW)
			in->attr.mtime = now;
		else if (to_set & FUSE_SET_ATTR_MTIME)
			in->attr.mtime = attr->st_mtim;
		if (to_set & FUSE_SET_ATTR_CTIME)
			in->attr.ctime = attr->st_ctim;
		else
			in->attr.ctime = now;
		in->attr_dirty = true;
		/* Metadata changes go to the catalog now; data-path ones at fsync. */
		if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID |
			      FUSE_SET_ATTR_SIZE))
			err = inode_flush(fs, in);
	}
	struct stat st;
	inode_to_stat(in, &st);
	pthread_rwlock_unlock(&in->lock);
	/* The control directory's mirrors of @ino carry its owner, mode and ACL. */
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))
		ctl_inval_mirrors(fs, ino);
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

/* Creates a node of @mode in @parent; takes a lookup reference on it. */
static int make_node(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		     dev_t rdev, const char *target, struct inode **out)
{
	struct sfs *fs = fuse_req_userdata(req);
	int err;
	struct inode *p = iget(fs, parent, &err);
	if (!p)
		return err;
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct inode_attr a = {0};
	clock_gettime(CLOCK_REALTIME, &a.atime);
	a.mtime = a.ctime = a.atime;
	a.mode = mode;
	a.uid = ctx->uid;
	a.gid = ctx->gid;
	a.rdev = rdev;
	a.nlink = S_ISDIR(mode) ? 2 : 1;
	a.size = target ? strlen(target) : 0;
	pthread_rwlock_rdlock(&p->lock);
	if (p->attr.mode & S_ISGID) { /* BSD group semantics of setgid directories */
		a.gid = p->attr.gid;
		if (S_ISDIR(mode))
			a.mode |= S_ISGID;
	}
	struct new_acl na;
	err = xattr_acl_new_node(fs, parent, &a.mode, ctx->umask, &na);
	pthread_rwlock_unlock(&p->lock);
	if (!err)
		err = catalog_create(fs->cat, parent, name, &a, target);
	if (!err) {
		err = xattr_acl_store(fs, a.ino, &na);
		if (err) {
			/* Without its ACL the node would grant what the ACL withholds. */
			uint64_t gone;
			catalog_unlink(fs->cat, parent, name, S_ISDIR(mode), &gone);
			catalog_delete_inode(fs->cat, a.ino);
		}
	}
	free(na.dflt);
	free(na.access);
	if (err)
		return err;
	inode_wrlock(p);
	if (S_ISDIR(mode))
		p->attr.nlink++;
	p->attr.mtime = p->attr.ctime = a.ctime;
	p->attr_dirty = true;
	pthread_rwlock_unlock(&p->lock);
	struct inode *in = inode_get(fs, a.ino, 1, &err);
	if (!in)
		return err;
	ensure_path(fs, p);
	inode_set_path(fs, in, p->path, name);
	*out = in;
	return 0;
}

static void reply_new_entry(fuse_req_t req, int err, struct inode *in)
{
	struct sfs *fs = fuse_req_userdata(req);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	struct fuse_entry_param e;
	fill_entry(fs, in, &e);
	fuse_reply_entry(req, &e);
}

static void sfs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      dev_t rdev)
{
	struct inode *in = NULL;
	int err = make_node(req, parent, name, mode, rdev, NULL, &in);
	reply_new_entry(req, err, in);
}

static void sfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct inode *in = NULL;
	int err = make_node(req, parent, name, S_IFDIR | (mode & 07777), 0, NULL, &in);
	reply_new_entry(req, err, in);
}

static void sfs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	struct inode *in = NULL;
	int err = make_node(req, parent, name, S_IFLNK | 0777, 0, link, &in);
	reply_new_entry(req, err, in);
}

static void sfs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct sfs *fs = fuse_req_userdata(req);
	char *target;
	int err = catalog_readlink(fs->cat, ino, &target);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	fuse_reply_readlink(req, target);
	free(target);
}

/*
 * After the catalog dropped a link to @ino: mirror nlink, and mark the
 * inode unlinked when that was its last name.  It then lives on as an
 * orphan, catalog row and space, until the kernel forgets it and its last
 * open closes (inode_forget(), inode_close_ref()), as an ext4 inode lives
 * until its last reference: the kernel may send an OPEN for it through a
 * path walk that found it before the unlink or the rename over its name
 * (a reader racing a writer that renames a new version over the name),
 * and that open must succeed and read the file's bytes.  When the kernel
 * holds no reference (nlookup 0) and nothing is open, that is now.
 */
static void link_dropped(struct sfs *fs, uint64_t ino)
{
	int err;
	struct inode_attr a;
	struct inode *in = inode_get(fs, ino, 0, &err);
	if (!in)
		return;
	bool have = catalog_get_attr(fs->cat, ino, &a) == 0;
	bool gone = have && (a.nlink == 0 || (S_ISDIR(a.mode) && a.nlink <= 1));
	inode_wrlock(in);
	if (have) {
		in->attr.nlink = a.nlink;
		in->attr.ctime = a.ctime;
	}
	if (gone) {
		in->attr.nlink = 0;
		in->unlinked = true;
	}
	pthread_rwlock_unlock(&in->lock);
	inode_forget(fs, in, 0);
}

static void parent_changed(struct sfs *fs, fuse_ino_t parent, int dir_delta)
{
	struct inode *p = inode_find(fs, parent);
	if (!p)
		return;
	inode_wrlock(p);
	p->attr.nlink = (uint32_t)((int)p->attr.nlink + dir_delta);
	clock_gettime(CLOCK_REALTIME, &p->attr.mtime);
	p->attr.ctime = p->attr.mtime;
	p->attr_dirty = true;
	pthread_rwlock_unlock(&p->lock);
}

static void do_unlink(fuse_req_t req, fuse_ino_t parent, const char *name, int dir)
{
	struct sfs *fs = fuse_req_userdata(req);
	uint64_t ino;
	int err = catalog_unlink(fs->cat, parent, name, dir, &ino);
	if (!err) {
		parent_changed(fs, parent, dir ? -1 : 0);
		link_dropped(fs, ino);
	}
	fuse_reply_err(req, -err);
}

static void sfs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	do_unlink(req, parent, name, 0);
}

static void sfs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	do_unlink(req, parent, name, 1);
}

struct move_check {
	struct sfs *fs;
	const char *to; /* the new path of the inode checked */
};

static int move_one(void *opaque, const char *relpath, unsigned dev)
{
	struct move_check *m = opaque;
	char *p;
	if (asprintf(&p, "%s%s%s", m->to, *relpath ? "/" : "", relpath) < 0)
		return -ENOMEM;
	struct device *want = sfs_rule_device(m->fs, config_for_path(&m->fs->cfg, p));
	free(p);
	return want->index == dev ? 0 : -EXDEV;
}

/*
 * With several devices: -EXDEV when @ino (a file, or a directory and what
 * lies below it) would get a path whose rule names another device than the
 * one its extents are on.  A file never moves between devices, and the
 * next mount refuses a file its rule would put elsewhere; EXDEV is what a
 * rename across file systems returns, so mv(1) copies the file instead,
 * which puts its new extents on the device its new rule names.
 */
static int check_move(struct sfs *fs, uint64_t ino, fuse_ino_t newparent, const char *newname)
{
	if (fs->ndev < 2 || !ino)
		return 0;
	int e;
	struct inode *np = iget(fs, newparent, &e);
	if (!np)
		return 0; /* the rename itself reports it */
	ensure_path(fs, np);
	if (!np->path)
		return 0;
	char *to;
	if (asprintf(&to, "%s%s%s", np->path, *np->path ? "/" : "", newname) < 0)
		return -ENOMEM;
	struct move_check m = {fs, to};
	struct inode *in = inode_find(fs, ino);
	e = 0;
	if (in && !S_ISDIR(in->attr.mode) && in->map_loaded) {
		/* A file whose map is in memory: the map says, the catalog may lag. */
		pthread_rwlock_rdlock(&in->lock);
		if (in->map.n)
			e = move_one(&m, "", in->map.v[0].dev);
		pthread_rwlock_unlock(&in->lock);
	} else {
		/* Below a directory, extents still in memory reach the catalog first. */
		if (!in || S_ISDIR(in->attr.mode))
			e = inode_flush_all(fs, false, NULL);
		if (!e)
			e = catalog_subtree_devices(fs->cat, ino, move_one, &m);
	}
	free(to);
	return e;
}

static void sfs_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		       const char *newname, unsigned int flags)
{
	struct sfs *fs = fuse_req_userdata(req);
	if (flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	uint64_t src_ino = 0, dst_ino = 0, replaced;
	catalog_lookup(fs->cat, parent, name, &src_ino);
	catalog_lookup(fs->cat, newparent, newname, &dst_ino);
	int err = check_move(fs, src_ino, newparent, newname);
	if (!err && (flags & RENAME_EXCHANGE))
		err = check_move(fs, dst_ino, parent, name);
	if (!err)
		err = catalog_rename(fs->cat, parent, name, newparent, newname, flags, &replaced);
	if (!err) {
		int e2;
		struct inode *np = iget(fs, newparent, &e2), *op = iget(fs, parent, &e2);
		if (np)
			ensure_path(fs, np);
		if (op)
			ensure_path(fs, op);
		struct inode *in = src_ino ? inode_find(fs, src_ino) : NULL;
		struct inode *other = dst_ino ? inode_find(fs, dst_ino) : NULL;
		char *src_old = in && in->path ? strdup(in->path) : NULL;
		char *dst_old = other && other->path ? strdup(other->path) : NULL;
		if (in && np)
			inode_set_path(fs, in, np->path, newname);
		if (flags & RENAME_EXCHANGE) {
			if (other && op)
				inode_set_path(fs, other, op->path, name);
		} else if (dst_ino) {
			link_dropped(fs, dst_ino);
		}
		/* What lies below a moved directory moved with it.  An exchange of
		 * two directories goes through a prefix no real path has ("\001"). */
		bool src_dir = in && src_old && S_ISDIR(in->attr.mode) && in->path;
		bool dst_dir = (flags & RENAME_EXCHANGE) && other && dst_old &&
			       S_ISDIR(other->attr.mode) && other->path;
		if (src_dir)
			inode_rename_paths(fs, src_old, dst_dir ? "\001" : in->path);
		if (dst_dir)
			inode_rename_paths(fs, dst_old, other->path);
		if (src_dir && dst_dir)
			inode_rename_paths(fs, "\001", in->path);
		free(src_old);
		free(dst_old);
		struct inode_attr a;
		/* Directory link counts may have moved: refresh both parents. */
		fuse_ino_t ps[2] = {parent, newparent};
		for (int i = 0; i < 2; i++) {
			struct inode *p = inode_find(fs, ps[i]);
			if (p && catalog_get_attr(fs->cat, ps[i], &a) == 0) {
				inode_wrlock(p);
				p->attr.nlink = a.nlink;
				clock_gettime(CLOCK_REALTIME, &p->attr.mtime);
				p->attr.ctime = p->attr.mtime;
				p->attr_dirty = true;
				pthread_rwlock_unlock(&p->lock);
			}
		}
		(void)replaced;
	}
	fuse_reply_err(req, -err);
}

static void sfs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct sfs *fs = fuse_req_userdata(req);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int err = check_move(fs, ino, newparent, newname);
	if (!err)
		err = catalog_link(fs->cat, newparent, newname, ino, &now);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	struct inode *in = inode_get(fs, ino, 1, &err);
	if (!in) {
		fuse_reply_err(req, -err);
		return;
	}
	inode_wrlock(in);
	in->attr.nlink++;
	in->attr.ctime = now;
	pthread_rwlock_unlock(&in->lock);
	parent_changed(fs, newparent, 0);
	reply_new_entry(req, 0, in);
}

/*
 * Opens @in for the caller of @req; @created: by this request (FUSE_CREATE),
 * whose O_TRUNC then truncates nothing, as open(2) skips the truncation of
 * a file it created.
 */
static int open_inode(struct sfs *fs, fuse_req_t req, struct inode *in, struct fuse_file_info *fi,
		      bool created)
{
	struct handle *h = malloc(sizeof *h); /* first: a refused open changes nothing */
	if (!h)
		return -ENOMEM;
	ensure_path(fs, in);
	inode_wrlock(in);
	int err = inode_load_map(fs, in);
	/*
	 * libfuse negotiates atomic O_TRUNC: the truncation is ours to do,
	 * and so is what it removes, even from an empty file (ext4's
	 * handle_truncate() does both at every O_TRUNC open of a file it did
	 * not create).
	 */
	if (!err && (fi->flags & O_TRUNC) && S_ISREG(in->attr.mode) && !created) {
		err = kill_priv(fs, req, in, true);
		if (!err && in->attr.size) {
			err = io_truncate(fs, in, 0);
			if (!err)
				err = inode_flush(fs, in);
		}
	}
	bool direct = in->params->cache.mode == CACHE_NONE;
	pthread_rwlock_unlock(&in->lock);
	if (err) {
		free(h);
		return err;
	}
	fi->direct_io = direct;
	fi->keep_cache = !direct;
	/*
	 * The daemon has nothing to do at close (write-through: a write is
	 * done when answered), so the kernel need not send a FLUSH at each
	 * one (FOPEN_NOFLUSH): one request less per open file, a fifth of
	 * creating an empty file (bench/dirs).  The kernel ignores the flag
	 * under its write-back cache (it writes dirty pages back at close,
	 * then sends FLUSH): there no table has a flush handler, so libfuse
	 * answers the first FLUSH with ENOSYS and the kernel sends no more
	 * on this mount (fc->no_flush), one request less per close of
	 * SQLite's journal (tests/mount/lookup-cache.sh).
	 */
	fi->noflush = 1;
	/* The open reference keeps @in alive until release: the data path
	 * finds it here without the inode table's lock. */
	h->in = in;
	h->direct = direct;
	unsigned wb = atomic_load(&in->wb_err);
	atomic_init(&h->wb_seen, wb & 1 ? wb : 0); /* an error nobody reported yet: this one too */
	pthread_mutex_lock(&open_handles_lock);
	DL_APPEND(open_handles, h);
	pthread_mutex_unlock(&open_handles_lock);
	fi->fh = (uint64_t)(uintptr_t)h;
	inode_open_ref(fs, in);
	return 0;
}

static void sfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sfs *fs = fuse_req_userdata(req);
	int err;
	struct inode *in = iget(fs, ino, &err);
	if (in)
		err = open_inode(fs, req, in, fi, false);
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_open(req, fi);
}

static void sfs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		       struct fuse_file_info *fi)
{
	struct sfs *fs = fuse_req_userdata(req);
	struct inode *in = NULL;
	int err = make_node(req, parent, name, S_IFREG | (mode & 07777), 0, NULL, &in);
	if (!err) {
		err = open_inode(fs, req, in, fi, true);
		if (err)
			inode_forget(fs, in, 1);
	}
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	struct fuse_entry_param e;
	fill_entry(fs, in, &e);
	fuse_reply_create(req, &e, fi);
}

static void sfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct sfs *fs = fuse_req_userdata(req);
	int err;
	struct inode *in = iget_open(fs, ino, fi, &err);
	if (!in) {
		fuse_reply_err(req, -err);
		return;
	}
	io_read(fs, req, in, (uint64_t)off, size);
}

static void sfs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	struct sfs *fs = fuse_req_userdata(req);
	int err;
	struct inode *in = iget_open(fs, ino, fi, &err);
	if (!in) {
		fuse_reply_err(req, -err);
		return;
	}
	inode_wrlock(in);
	/*
	 * A write back from the page cache (a shared mapping's dirty pages,
	 * and with the write-back cache every cached write) comes with the
	 * flusher's credentials, not the writer's: the kernel removed what
	 * write(2) takes when it was called (file_remove_privs()), and
	 * nothing at a store into a mapping (ext4 keeps set-id bits and
	 * capability), so neither do we here.
	 */
	ssize_t n = 0;
	if (size && !(fi && fi->writepage))
		n = kill_priv(fs, req, in, true);
	if (n == 0)
		n = io_write(fs, in, buf, size, (uint64_t)off, fuse_req_ctx(req)->pid);
	/* the handle's mode, not the name's now: a rename may have changed that */
	bool direct = fi && fi->fh ? fh_handle(fi->fh)->direct : in->params->cache.mode == CACHE_NONE;
	pthread_rwlock_unlock(&in->lock);
	/*
	 * A write with O_DSYNC (an open's, or pwritev2's RWF_DSYNC) is
	 * durable before its reply, as fdatasync(2); with O_SYNC (RWF_SYNC)
	 * as fsync(2): the kernel puts them in the WRITE's flags
	 * (fuse_write_flags()).  Only on a handle opened for direct I/O
	 * (cache.mode = none at its open): on one that goes through the page
	 * cache the kernel's generic_write_sync() sends an FSYNC after the
	 * write, and a write-back from the page cache owes nothing.  The
	 * flush is an fsync's: fault rules, stats and the log see it so.
	 */
	if (n > 0 && direct && fi && !fi->writepage && (fi->flags & O_DSYNC)) {
		int e = io_fsync(fs, in, fuse_req_ctx(req)->pid, (fi->flags & O_SYNC) != O_SYNC,
				 &fh_handle(fi->fh)->wb_seen);
		if (e)
			n = e;
	}
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

static void sfs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sfs *fs = fuse_req_userdata(req);
	struct inode *in = fi->fh ? fh_inode(fi->fh) : inode_find(fs, ino);
	if (in) {
		inode_wrlock(in);
		if (!in->unlinked)
			inode_flush(fs, in);
		pthread_rwlock_unlock(&in->lock);
		inode_close_ref(fs, in);
	}
	if (fi->fh) {
		struct handle *h = fh_handle(fi->fh);
		pthread_mutex_lock(&open_handles_lock);
		DL_DELETE(open_handles, h);
		pthread_mutex_unlock(&open_handles_lock);
		free(h);
	}
	fuse_reply_err(req, 0);
}

static void sfs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct sfs *fs = fuse_req_userdata(req);
	int err;
	struct inode *in = iget(fs, ino, &err);
	if (!in) {
		fuse_reply_err(req, -err);
		return;
	}
	err = io_fsync(fs, in, fuse_req_ctx(req)->pid, datasync != 0,
		       fi && fi->fh ? &fh_handle(fi->fh)->wb_seen : NULL);
	fuse_reply_err(req, -err);
}

static void sfs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
			  struct fuse_file_info *fi)
{
	struct sfs *fs = fuse_req_userdata(req);
	int err;
	struct inode *in = iget(fs, ino, &err);
	if (!in) {
		fuse_reply_err(req, -err);
		return;
	}
	if (off < 0 || len <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	inode_wrlock(in);
	/* Every mode we do changes the file (ext4 removes privileges at each);
	 * one we refuse changes nothing. */
	err = io_fallocate_supported(mode) ? kill_priv(fs, req, in, true) : 0;
	if (!err)
		err = io_fallocate(fs, in, mode, (uint64_t)off, (uint64_t)len,
				   fuse_req_ctx(req)->pid);
	pthread_rwlock_unlock(&in->lock);
	fuse_reply_err(req, -err);
}

/*
 * The next data (SEEK_DATA) or hole (SEEK_HOLE) at or after @off of a file
 * of @size bytes mapped by @m, as lseek(2) defines them: data is what an
 * extent holds that was written; a range with no extent, or an unwritten
 * extent (allocated, reads as zeros), is a hole, and so is the end of the
 * file.  @return 0 with *@pos set, or -ENXIO when @off is at or past @size
 * or, for SEEK_DATA, no data follows @off.
 */
static int seek_data_hole(const struct extent_map *m, uint64_t size, uint64_t off, int whence,
			  uint64_t *pos)
{
	if (off >= size)
		return -ENXIO;
	size_t i = extmap_find(m, off);
	if (whence == SEEK_DATA) {
		for (; i < m->n && m->v[i].logical < size; i++) {
			if (!(m->v[i].flags & EXTENT_UNWRITTEN)) {
				*pos = m->v[i].logical > off ? m->v[i].logical : off;
				return 0;
			}
		}
		return -ENXIO;
	}
	uint64_t p = off;
	/* Entries may abut: a hole starts where the written ones stop touching. */
	for (; i < m->n && m->v[i].logical <= p && !(m->v[i].flags & EXTENT_UNWRITTEN); i++)
		if (m->v[i].logical + m->v[i].length > p)
			p = m->v[i].logical + m->v[i].length;
	*pos = p < size ? p : size;
	return 0;
}

static void sfs_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		      struct fuse_file_info *fi)
{
	struct sfs *fs = fuse_req_userdata(req);
	/* The kernel sends only these two; it answers the others itself. */
	if (whence != SEEK_DATA && whence != SEEK_HOLE) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (off < 0) {
		fuse_reply_err(req, ENXIO);
		return;
	}
	int err;
	struct inode *in = iget_open(fs, ino, fi, &err);
	if (!in) {
		fuse_reply_err(req, -err);
		return;
	}
	uint64_t pos = 0;
	err = 0;
	pthread_rwlock_rdlock(&in->lock);
	if (!in->map_loaded) {
		pthread_rwlock_unlock(&in->lock);
		inode_wrlock(in);
		err = inode_load_map(fs, in);
	}
	if (!err)
		err = seek_data_hole(&in->map, in->attr.size, (uint64_t)off, whence, &pos);
	pthread_rwlock_unlock(&in->lock);
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_lseek(req, (off_t)pos);
}

static void sfs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_open(req, fi);
}

struct dir_batch {
	struct catalog_dirent *v;
	char **names;
	size_t n, max;
};

static int collect(void *opaque, const struct catalog_dirent *d)
{
	struct dir_batch *b = opaque;
	if (b->n == b->max)
		return 1;
	b->names[b->n] = strdup(d->name);
	b->v[b->n] = *d;
	b->v[b->n].name = b->names[b->n];
	b->n++;
	return 0;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus)
{
	struct sfs *fs = fuse_req_userdata(req);
	char *buf = calloc(1, size);
	struct catalog_dirent v[256];
	char *names[256];
	struct dir_batch b = {v, names, 0, 256};
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	size_t used = 0;
	int err = 0;
	struct stat st = {0};
	/* Cookies: 1 after ".", 2 after "..", then catalog id + 2. */
	for (off_t o = off; o < 2; o++) {
		struct fuse_entry_param e = {0};
		st.st_ino = ino;
		st.st_mode = S_IFDIR;
		e.attr = st;
		const char *name = o == 0 ? "." : "..";
		size_t n = plus ? fuse_add_direntry_plus(req, buf + used, size - used, name, &e,
							 o + 1)
				: fuse_add_direntry(req, buf + used, size - used, name, &st, o + 1);
		if (n > size - used)
			goto reply;
		used += n;
	}
	err = catalog_readdir(fs->cat, ino, off > 2 ? off - 2 : 0, collect, &b);
	for (size_t i = 0; !err && i < b.n; i++) {
		const struct catalog_dirent *d = &b.v[i];
		off_t next = d->cookie + 2;
		size_t n;
		if (plus) {
			struct inode *in = inode_get(fs, d->ino, 1, &err);
			if (!in) {
				err = 0; /* removed meanwhile */
				continue;
			}
			struct fuse_entry_param e;
			fill_entry(fs, in, &e);
			n = fuse_add_direntry_plus(req, buf + used, size - used, d->name, &e, next);
			if (n > size - used) {
				inode_forget(fs, in, 1);
				break;
			}
			struct inode *p = inode_find(fs, ino);
			if (p && !in->path) {
				ensure_path(fs, p);
				inode_set_path(fs, in, p->path, d->name);
			}
		} else {
			st.st_ino = d->ino;
			st.st_mode = d->mode;
			n = fuse_add_direntry(req, buf + used, size - used, d->name, &st, next);
			if (n > size - used)
				break;
		}
		used += n;
	}
reply:
	for (size_t i = 0; i < b.n; i++)
		free(b.names[i]);
	if (err && used == 0)
		fuse_reply_err(req, -err);
	else
		fuse_reply_buf(req, buf, used);
	free(buf);
}

static void sfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, false);
}

static void sfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			    struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, true);
}

static void sfs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static void sfs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct sfs *fs = fuse_req_userdata(req);
	struct inode *in = inode_find(fs, ino);
	int err = in ? io_fsyncdir(fs, in, datasync) : catalog_sync(fs->cat);
	fuse_reply_err(req, -err);
}

/*
 * A catalog has no inode table of fixed size: an inode is a row, and
 * SQLite holds as many as its file can.  So that df -i says something
 * familiar, the total is ext4's default, one inode per 16 KiB of device
 * (mke2fs.conf(5): inode_ratio = 16384), over every device, or the number
 * in use when that is more; the used ones are the catalog's real count
 * (catalog_inode_count(), orphans included as ext4 counts them).  Free
 * reaching 0 refuses nothing: a create still succeeds.
 */
void sfs_inodes(struct sfs *fs, uint64_t total_bytes, uint64_t *files, uint64_t *ffree)
{
	uint64_t used = catalog_inode_count(fs->cat);
	*files = total_bytes / SFS_INODE_RATIO;
	if (*files < used)
		*files = used;
	*ffree = *files - used;
}

static void sfs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct sfs *fs = fuse_req_userdata(req);
	struct statvfs s = {0};
	uint64_t total, free_bytes;
	uint32_t bs = fs->dev[0]->block_size;
	sfs_space(fs, &total, &free_bytes);
	s.f_bsize = bs;
	s.f_frsize = bs;
	s.f_blocks = total / bs;
	s.f_bfree = free_bytes / bs;
	s.f_bavail = s.f_bfree;
	sfs_inodes(fs, total, &s.f_files, &s.f_ffree);
	s.f_favail = s.f_ffree;
	s.f_namemax = 255;
	fuse_reply_statfs(req, &s);
}

const struct fuse_lowlevel_ops sfs_file_ops = {
	.init = sfs_init,
	.destroy = sfs_destroy,
	.lookup = sfs_lookup,
	.forget = sfs_forget,
	.forget_multi = sfs_forget_multi,
	.getattr = sfs_getattr,
	.setattr = sfs_setattr,
	.readlink = sfs_readlink,
	.mknod = sfs_mknod,
	.mkdir = sfs_mkdir,
	.unlink = sfs_unlink,
	.rmdir = sfs_rmdir,
	.symlink = sfs_symlink,
	.rename = sfs_rename,
	.link = sfs_link,
	.open = sfs_open,
	.read = sfs_read,
	.write = sfs_write,
	.release = sfs_release,
	.fsync = sfs_fsync,
	.opendir = sfs_opendir,
	.readdir = sfs_readdir,
	.readdirplus = sfs_readdirplus,
	.releasedir = sfs_releasedir,
	.fsyncdir = sfs_fsyncdir,
	.statfs = sfs_statfs,
	.setxattr = sfs_setxattr,
	.getxattr = sfs_getxattr,
	.listxattr = sfs_listxattr,
	.removexattr = sfs_removexattr,
	.create = sfs_create,
	.fallocate = sfs_fallocate,
	.lseek = sfs_lseek,
};
