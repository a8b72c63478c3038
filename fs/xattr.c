/*
 * Extended attributes, kept in the catalog's xattr table, and the POSIX
 * ACLs among them (system.posix_acl_access and system.posix_acl_default).
 * The kernel enforces the ACLs (FUSE_CAP_POSIX_ACL, negotiated in init);
 * what libfuse leaves to the file system is here: the mode follows the
 * access ACL (setfacl) and the ACL follows the mode (chmod), and a new node
 * gets its parent's default ACL or, without one, the caller's umask
 * (FUSE_CAP_DONT_MASK).  The ACL arithmetic itself is acl.c's.  Other
 * system.* attributes are refused with EOPNOTSUPP, as before.
 *
 * security.capability is the one other attribute the daemon reads itself:
 * a change of a file's data or owner removes it (xattr_kill_caps(), called
 * by ops.c's kill_priv()), so its setting and removal keep the inode's
 * cached answer (in->caps) in step under the inode's lock.
 *
 * A new node and its ACLs are two catalog writes, not one transaction: a
 * failure to store the ACLs removes the node again (see make_node() in
 * ops.c); a crash between the two leaves the node without them.
 */
#include <errno.h>
#include <linux/xattr.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <time.h>

#include "acl.h"
#include "catalog.h"
#include "sfs.h"

/*
 * Xattr @name of @ino into a new buffer (*@value, freed by the caller) of
 * *@len bytes.  @return 0, -ENODATA when absent, -ENOMEM, -EIO.
 */
static int load_xattr(struct sfs *fs, uint64_t ino, const char *name, void **value, size_t *len)
{
	/* A setxattr may land between the two calls: again if it grew. */
	for (;;) {
		*value = NULL;
		int err = catalog_getxattr(fs->cat, ino, name, NULL, 0, len);
		if (err)
			return err;
		*value = malloc(*len ? *len : 1);
		if (!*value)
			return -ENOMEM;
		size_t got;
		err = catalog_getxattr(fs->cat, ino, name, *value, *len, &got);
		if (!err) {
			*len = got;
			return 0;
		}
		free(*value);
		*value = NULL;
		if (err != -ERANGE)
			return err;
	}
}

int xattr_acl_access(struct sfs *fs, uint64_t ino, void **value, size_t *len)
{
	*value = NULL;
	*len = 0;
	if (!fs->posix_acl)
		return -ENODATA;
	int err = load_xattr(fs, ino, ACL_XATTR_ACCESS, value, len);
	if (!err && acl_valid(*value, *len)) {
		free(*value);
		*value = NULL;
		err = -EIO; /* the catalog holds only what setxattr checked */
	}
	return err;
}

int xattr_kill_caps(struct sfs *fs, struct inode *in, bool *killed)
{
	*killed = false;
	if (in->caps == CAPS_UNKNOWN) {
		size_t len;
		int err = catalog_getxattr(fs->cat, in->ino, XATTR_NAME_CAPS, NULL, 0, &len);
		if (err && err != -ENODATA)
			return err;
		in->caps = err ? CAPS_NONE : CAPS_SET;
	}
	if (in->caps == CAPS_NONE)
		return 0;
	int err = catalog_removexattr(fs->cat, in->ino, XATTR_NAME_CAPS);
	if (err && err != -ENODATA)
		return err;
	in->caps = CAPS_NONE;
	*killed = !err;
	return 0;
}

/*
 * Sets (@value) or removes (@value NULL) security.capability of @ino under
 * the inode's lock, so that a write that holds the lock either sees the
 * capability and removes it or ran entirely before it was set.
 * @return 0, -errno.
 */
static int set_caps(struct sfs *fs, fuse_ino_t ino, const char *value, size_t size, int flags)
{
	int err;
	/* The kernel holds a lookup on @ino, so it is nearly always in the table. */
	struct inode *in = inode_find(fs, ino), *loaded = NULL;
	if (!in)
		in = loaded = inode_get(fs, ino, 0, &err);
	if (!in)
		return err;
	inode_wrlock(in);
	if (value)
		err = catalog_setxattr(fs->cat, ino, XATTR_NAME_CAPS, value, size, flags);
	else
		err = catalog_removexattr(fs->cat, ino, XATTR_NAME_CAPS);
	in->caps = CAPS_UNKNOWN;
	pthread_rwlock_unlock(&in->lock);
	if (loaded)
		inode_forget(fs, loaded, 0);
	return err;
}

int xattr_acl_chmod(struct sfs *fs, struct inode *in)
{
	if (!fs->posix_acl)
		return 0;
	void *acl;
	size_t len;
	int err = load_xattr(fs, in->ino, ACL_XATTR_ACCESS, &acl, &len);
	if (err)
		return err == -ENODATA ? 0 : err;
	if (acl_valid(acl, len) == 0) {
		acl_chmod(acl, len, in->attr.mode);
		err = catalog_setxattr(fs->cat, in->ino, ACL_XATTR_ACCESS, acl, len, 0);
	}
	free(acl);
	return err;
}

int xattr_acl_new_node(struct sfs *fs, uint64_t parent, mode_t *mode, mode_t umask,
		       struct new_acl *na)
{
	memset(na, 0, sizeof *na);
	if (S_ISLNK(*mode))
		return 0;
	int err = fs->posix_acl ? load_xattr(fs, parent, ACL_XATTR_DEFAULT, &na->dflt, &na->len)
				: -ENODATA;
	if (err == -ENODATA) {
		if (fs->dont_mask)
			*mode &= ~(umask & 0777);
		return 0;
	}
	if (err)
		return err;
	if (acl_valid(na->dflt, na->len))
		return -EIO; /* the catalog holds only what setxattr checked */
	na->access = malloc(na->len);
	if (!na->access)
		return -ENOMEM;
	memcpy(na->access, na->dflt, na->len);
	bool equiv;
	acl_create(na->access, na->len, mode, &equiv);
	if (equiv) {
		free(na->access);
		na->access = NULL;
	}
	if (!S_ISDIR(*mode)) {
		free(na->dflt);
		na->dflt = NULL;
	}
	return 0;
}

int xattr_acl_store(struct sfs *fs, uint64_t ino, const struct new_acl *na)
{
	int err = 0;
	if (na->access)
		err = catalog_setxattr(fs->cat, ino, ACL_XATTR_ACCESS, na->access, na->len, 0);
	if (!err && na->dflt)
		err = catalog_setxattr(fs->cat, ino, ACL_XATTR_DEFAULT, na->dflt, na->len, 0);
	return err;
}

/*
 * setxattr of system.posix_acl_access: an ACL that says no more than the
 * mode bits is not stored (any stored one is removed), as ext4 does; either
 * way the mode's permission bits become what the ACL says (acl(5)).
 * @return 0, -errno.
 */
static int set_access_acl(struct sfs *fs, fuse_ino_t ino, const char *value, size_t size, int flags)
{
	int err;
	/* The kernel holds a lookup on @ino, so it is nearly always in the table. */
	struct inode *in = inode_find(fs, ino);
	if (!in)
		in = inode_get(fs, ino, 0, &err);
	if (!in)
		return err;
	mode_t perm;
	bool equiv;
	acl_equiv_mode(value, size, &perm, &equiv);
	/* The kernel removes an ACL rather than set an empty one: so do we. */
	bool empty = size == ACL_XATTR_EMPTY_SIZE;
	inode_wrlock(in);
	if (equiv || empty) {
		err = catalog_removexattr(fs->cat, ino, ACL_XATTR_ACCESS);
		if (err == -ENODATA)
			err = 0;
	} else {
		err = catalog_setxattr(fs->cat, ino, ACL_XATTR_ACCESS, value, size, flags);
	}
	bool changed = !err;
	if (!err && !empty) {
		in->attr.mode = (in->attr.mode & ~(mode_t)0777) | perm;
		clock_gettime(CLOCK_REALTIME, &in->attr.ctime);
		in->attr_dirty = true;
		err = inode_flush(fs, in);
	}
	pthread_rwlock_unlock(&in->lock);
	if (changed)
		ctl_inval_mirrors(fs, ino);
	return err;
}

void sfs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
		  int flags)
{
	struct sfs *fs = fuse_req_userdata(req);
	bool access = strcmp(name, ACL_XATTR_ACCESS) == 0;
	bool dflt = strcmp(name, ACL_XATTR_DEFAULT) == 0;
	/* Of system.*, only the POSIX ACLs, and only when the kernel enforces them. */
	if (strncmp(name, "system.", 7) == 0 && !(fs->posix_acl && (access || dflt))) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	int err = 0;
	if (access || dflt)
		err = acl_valid(value, size);
	if (!err && access)
		err = set_access_acl(fs, ino, value, size, flags);
	else if (!err && strcmp(name, XATTR_NAME_CAPS) == 0)
		err = set_caps(fs, ino, value, size, flags);
	else if (!err)
		err = catalog_setxattr(fs->cat, ino, name, value, size, flags);
	if (err == -EEXIST && !(flags & XATTR_CREATE))
		err = -EIO;
	fuse_reply_err(req, -err);
}

void sfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct sfs *fs = fuse_req_userdata(req);
	char stackbuf[256];
	char *buf = size <= sizeof stackbuf ? stackbuf : malloc(size);
	size_t len = 0;
	int err = buf ? catalog_getxattr(fs->cat, ino, name, buf, size, &len) : -ENOMEM;
	if (err)
		fuse_reply_err(req, -err);
	else if (size == 0)
		fuse_reply_xattr(req, len);
	else
		fuse_reply_buf(req, buf, len);
	if (buf != stackbuf)
		free(buf);
}

void sfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct sfs *fs = fuse_req_userdata(req);
	char *buf = size ? malloc(size) : NULL;
	size_t len = 0;
	int err = (size && !buf) ? -ENOMEM : catalog_listxattr(fs->cat, ino, buf, size, &len);
	if (err)
		fuse_reply_err(req, -err);
	else if (size == 0)
		fuse_reply_xattr(req, len);
	else
		fuse_reply_buf(req, buf, len);
	free(buf);
}

void sfs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct sfs *fs = fuse_req_userdata(req);
	int err;
	if (strcmp(name, XATTR_NAME_CAPS) == 0)
		err = set_caps(fs, ino, NULL, 0, 0);
	else
		err = catalog_removexattr(fs->cat, ino, name);
	/* The control directory's mirrors of @ino carry its access ACL. */
	if (!err && strcmp(name, ACL_XATTR_ACCESS) == 0)
		ctl_inval_mirrors(fs, ino);
	fuse_reply_err(req, -err);
}
