/*
 * The table libfuse calls: one routing step in front of two tables of the
 * same shape, sfs_file_ops (ops.c, the files of the mount) and ctl_ops
 * (ctl.c, the control directory .scatterfs/).  A request goes to ctl_ops
 * when an inode it names is a control inode, or when a name it names is
 * ".scatterfs" in the root: so the file handlers never see a control inode,
 * and a new operation is one entry in each table and one router here.
 *
 * Names are checked here too, before either table: a name longer than
 * NAME_MAX (255) bytes gets ENAMETOOLONG from every operation that takes
 * one, as on ext4.  The kernel passes FUSE names of up to 1024 bytes
 * (FUSE_NAME_MAX), so the limit is the file system's to enforce.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "reqlog.h"
#include "sfs.h"
#include "transport.h"

static bool ctl_name(fuse_ino_t parent, const char *name)
{
	return ctl_is_ino(parent) || (parent == FUSE_ROOT_ID && strcmp(name, ".scatterfs") == 0);
}

/* The table for a request on inode @ino. */
static const struct fuse_lowlevel_ops *by_ino(fuse_ino_t ino)
{
	return ctl_is_ino(ino) ? &ctl_ops : &sfs_file_ops;
}

/* The table for a request on @name in @parent. */
static const struct fuse_lowlevel_ops *by_name(fuse_ino_t parent, const char *name)
{
	return ctl_name(parent, name) ? &ctl_ops : &sfs_file_ops;
}

/* Replies ENAMETOOLONG and returns true when @name is longer than NAME_MAX. */
static bool name_too_long(fuse_req_t req, const char *name)
{
	if (strlen(name) <= NAME_MAX)
		return false;
	fuse_reply_err(req, ENAMETOOLONG);
	return true;
}

static void d_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	if (!name_too_long(req, name))
		by_name(parent, name)->lookup(req, parent, name);
}

static void d_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	by_ino(ino)->forget(req, ino, nlookup);
}

/* Control inodes keep no lookup counts: only the others are passed on. */
static void d_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	size_t n = 0;
	for (size_t i = 0; i < count; i++)
		if (!ctl_is_ino(forgets[i].ino))
			forgets[n++] = forgets[i];
	sfs_file_ops.forget_multi(req, n, forgets);
}

static void d_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	by_ino(ino)->getattr(req, ino, fi);
}

static void d_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		      struct fuse_file_info *fi)
{
	by_ino(ino)->setattr(req, ino, attr, to_set, fi);
}

static void d_readlink(fuse_req_t req, fuse_ino_t ino)
{
	by_ino(ino)->readlink(req, ino);
}

static void d_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	if (!name_too_long(req, name))
		by_name(parent, name)->mknod(req, parent, name, mode, rdev);
}

static void d_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	if (!name_too_long(req, name))
		by_name(parent, name)->mkdir(req, parent, name, mode);
}

static void d_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	if (!name_too_long(req, name))
		by_name(parent, name)->unlink(req, parent, name);
}

static void d_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	if (!name_too_long(req, name))
		by_name(parent, name)->rmdir(req, parent, name);
}

static void d_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	if (!name_too_long(req, name))
		by_name(parent, name)->symlink(req, link, parent, name);
}

/* Either name in the control directory makes the whole rename its own. */
static void d_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		     const char *newname, unsigned int flags)
{
	if (name_too_long(req, name) || name_too_long(req, newname))
		return;
	const struct fuse_lowlevel_ops *ops =
	    ctl_name(newparent, newname) ? &ctl_ops : by_name(parent, name);
	ops->rename(req, parent, name, newparent, newname, flags);
}

static void d_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	if (name_too_long(req, newname))
		return;
	const struct fuse_lowlevel_ops *ops = ctl_name(newparent, newname) ? &ctl_ops : by_ino(ino);
	ops->link(req, ino, newparent, newname);
}

static void d_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	by_ino(ino)->open(req, ino, fi);
}

/*
 * A read answers before it appends its log row (its latency includes the
 * reply), so it holds the log until its handler returns: a read of
 * .scatterfs/stats that follows the answer then still waits for the row
 * (reqlog_flush()).  A read the completion thread answers takes its own
 * hold before this one ends (io_queue.c).
 */
static void d_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	struct sfs *fs = fuse_req_userdata(req);
	/* Only the file read path (io.c) runs beside this ring thread's
	 * reads in flight; a control file's read may wait for their log rows,
	 * and a read without a handle looks its inode up. */
	if (ctl_is_ino(ino) || !fi || !fi->fh)
		transport_drain();
	if (ctl_is_ino(ino) || !reqlog_wants(fs->log, LOG_READ)) {
		by_ino(ino)->read(req, ino, size, off, fi);
		return;
	}
	unsigned hold = reqlog_hold(fs->log);
	sfs_file_ops.read(req, ino, size, off, fi);
	reqlog_unhold(fs->log, hold);
}

static void d_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	by_ino(ino)->write(req, ino, buf, size, off, fi);
}

static void d_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	by_ino(ino)->release(req, ino, fi);
}

static void d_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	by_ino(ino)->fsync(req, ino, datasync, fi);
}

static void d_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	by_ino(ino)->opendir(req, ino, fi);
}

static void d_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	by_ino(ino)->readdir(req, ino, size, off, fi);
}

static void d_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			  struct fuse_file_info *fi)
{
	by_ino(ino)->readdirplus(req, ino, size, off, fi);
}

static void d_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	by_ino(ino)->releasedir(req, ino, fi);
}

static void d_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	by_ino(ino)->fsyncdir(req, ino, datasync, fi);
}

static void d_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		       size_t size, int flags)
{
	by_ino(ino)->setxattr(req, ino, name, value, size, flags);
}

static void d_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	by_ino(ino)->getxattr(req, ino, name, size);
}

static void d_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	by_ino(ino)->listxattr(req, ino, size);
}

static void d_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	by_ino(ino)->removexattr(req, ino, name);
}

static void d_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		     struct fuse_file_info *fi)
{
	if (!name_too_long(req, name))
		by_name(parent, name)->create(req, parent, name, mode, fi);
}

static void d_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
			struct fuse_file_info *fi)
{
	by_ino(ino)->fallocate(req, ino, mode, off, len, fi);
}

static void d_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		    struct fuse_file_info *fi)
{
	by_ino(ino)->lseek(req, ino, off, whence, fi);
}

/*
 * init, destroy and statfs concern the whole mount (statfs of a control
 * inode reports the device like any other), so they go to the file table.
 */
static void d_init(void *userdata, struct fuse_conn_info *conn)
{
	sfs_file_ops.init(userdata, conn);
}

static void d_destroy(void *userdata)
{
	sfs_file_ops.destroy(userdata);
}

static void d_statfs(fuse_req_t req, fuse_ino_t ino)
{
	sfs_file_ops.statfs(req, ino);
}

const struct fuse_lowlevel_ops sfs_ops = {
    .init = d_init,
    .destroy = d_destroy,
    .statfs = d_statfs,
    .lookup = d_lookup,
    .forget = d_forget,
    .forget_multi = d_forget_multi,
    .getattr = d_getattr,
    .setattr = d_setattr,
    .readlink = d_readlink,
    .mknod = d_mknod,
    .mkdir = d_mkdir,
    .unlink = d_unlink,
    .rmdir = d_rmdir,
    .symlink = d_symlink,
    .rename = d_rename,
    .link = d_link,
    .open = d_open,
    .read = d_read,
    .write = d_write,
    /* no .flush: neither table has anything to do at close, so libfuse
     * answers the first FLUSH ENOSYS and the kernel sends no more
     * (ops.c, open_inode()) */
    .release = d_release,
    .fsync = d_fsync,
    .opendir = d_opendir,
    .readdir = d_readdir,
    .readdirplus = d_readdirplus,
    .releasedir = d_releasedir,
    .fsyncdir = d_fsyncdir,
    .setxattr = d_setxattr,
    .getxattr = d_getxattr,
    .listxattr = d_listxattr,
    .removexattr = d_removexattr,
    .create = d_create,
    .fallocate = d_fallocate,
    .lseek = d_lseek,
};
