/*
 * The catalog's inode rows and directory entries: attributes, lookup,
 * create, link, unlink and rename (one transaction each), a removed
 * inode's rows, symlink targets, directory listings, a file's path, and
 * extended attributes (catalog.h gives each function's contract).
 */
#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "catalog_i.h"

static void row_to_attr(sqlite3_stmt *s, uint64_t ino, struct inode_attr *a)
{
	a->ino = ino;
	a->mode = (mode_t)sqlite3_column_int64(s, 0);
	a->uid = (uid_t)sqlite3_column_int64(s, 1);
	a->gid = (gid_t)sqlite3_column_int64(s, 2);
	a->nlink = (uint32_t)sqlite3_column_int64(s, 3);
	a->size = (uint64_t)sqlite3_column_int64(s, 4);
	a->rdev = (dev_t)sqlite3_column_int64(s, 5);
	a->atime = ns_ts(sqlite3_column_int64(s, 6));
	a->mtime = ns_ts(sqlite3_column_int64(s, 7));
	a->ctime = ns_ts(sqlite3_column_int64(s, 8));
}

static int get_attr_locked(struct catalog *cat, uint64_t ino, struct inode_attr *a)
{
	sqlite3_stmt *s = stmt(cat, S_GET_ATTR);
	sqlite3_bind_int64(s, 1, (int64_t)ino);
	int rc = sqlite3_step(s);
	int ret = 0;
	if (rc == SQLITE_ROW)
		row_to_attr(s, ino, a);
	else
		ret = rc == SQLITE_DONE ? -ENOENT : sql_err(cat, rc);
	sqlite3_reset(s);
	return ret;
}

int catalog_get_attr(struct catalog *cat, uint64_t ino, struct inode_attr *a)
{
	pthread_mutex_lock(&cat->lock);
	int ret = get_attr_locked(cat, ino, a);
	pthread_mutex_unlock(&cat->lock);
	return ret;
}

static int lookup_locked(struct catalog *cat, uint64_t parent, const char *name, uint64_t *ino)
{
	sqlite3_stmt *s = stmt(cat, S_LOOKUP);
	sqlite3_bind_int64(s, 1, (int64_t)parent);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
	int rc = sqlite3_step(s);
	int ret = 0;
	if (rc == SQLITE_ROW)
		*ino = (uint64_t)sqlite3_column_int64(s, 0);
	else
		ret = rc == SQLITE_DONE ? -ENOENT : sql_err(cat, rc);
	sqlite3_reset(s);
	return ret;
}

int catalog_lookup(struct catalog *cat, uint64_t parent, const char *name, uint64_t *ino)
{
	pthread_mutex_lock(&cat->lock);
	int ret = lookup_locked(cat, parent, name, ino);
	pthread_mutex_unlock(&cat->lock);
	return ret;
}

static int nlink_add_locked(struct catalog *cat, uint64_t ino, int delta,
			    const struct timespec *ctime)
{
	sqlite3_stmt *s = stmt(cat, S_NLINK_ADD);
	sqlite3_bind_int64(s, 1, (int64_t)ino);
	sqlite3_bind_int64(s, 2, delta);
	if (ctime)
		sqlite3_bind_int64(s, 3, ts_ns(ctime));
	return step_done(cat, s);
}

static int insert_dirent_locked(struct catalog *cat, uint64_t parent, const char *name,
				uint64_t ino)
{
	sqlite3_stmt *s = stmt(cat, S_INSERT_DIRENT);
	sqlite3_bind_int64(s, 1, (int64_t)parent);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, (int64_t)ino);
	return step_done(cat, s);
}

int catalog_create(struct catalog *cat, uint64_t parent, const char *name, struct inode_attr *a,
		   const char *symlink_target)
{
	pthread_mutex_lock(&cat->lock);
	int err = begin(cat);
	if (err)
		goto out;
	sqlite3_stmt *s = stmt(cat, S_INSERT_INODE);
	sqlite3_bind_int64(s, 1, a->mode);
	sqlite3_bind_int64(s, 2, a->uid);
	sqlite3_bind_int64(s, 3, a->gid);
	sqlite3_bind_int64(s, 4, a->nlink);
	sqlite3_bind_int64(s, 5, (int64_t)a->size);
	sqlite3_bind_int64(s, 6, (int64_t)a->rdev);
	sqlite3_bind_int64(s, 7, ts_ns(&a->atime));
	sqlite3_bind_int64(s, 8, ts_ns(&a->mtime));
	sqlite3_bind_int64(s, 9, ts_ns(&a->ctime));
	if (symlink_target)
		sqlite3_bind_blob(s, 10, symlink_target, (int)strlen(symlink_target),
				  SQLITE_STATIC);
	err = step_done(cat, s);
	if (!err) {
		a->ino = (uint64_t)sqlite3_last_insert_rowid(cat->db);
		err = insert_dirent_locked(cat, parent, name, a->ino);
	}
	if (!err && S_ISDIR(a->mode))
		err = nlink_add_locked(cat, parent, 1, &a->ctime);
	err = end(cat, err);
	if (!err)
		cat->inodes++;
out:
	pthread_mutex_unlock(&cat->lock);
	return err;
}

int catalog_link(struct catalog *cat, uint64_t parent, const char *name, uint64_t ino,
		 const struct timespec *ctime)
{
	pthread_mutex_lock(&cat->lock);
	int err = begin(cat);
	if (!err) {
		err = insert_dirent_locked(cat, parent, name, ino);
		if (!err)
			err = nlink_add_locked(cat, ino, 1, ctime);
		err = end(cat, err);
	}
	pthread_mutex_unlock(&cat->lock);
	return err;
}

static int dir_is_empty_locked(struct catalog *cat, uint64_t dir)
{
	sqlite3_stmt *s = stmt(cat, S_DIR_EMPTY);
	sqlite3_bind_int64(s, 1, (int64_t)dir);
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? 1 : sql_err(cat, rc);
}

int catalog_dir_is_empty(struct catalog *cat, uint64_t dir)
{
	pthread_mutex_lock(&cat->lock);
	int ret = dir_is_empty_locked(cat, dir);
	pthread_mutex_unlock(&cat->lock);
	return ret;
}

static int delete_dirent_locked(struct catalog *cat, uint64_t parent, const char *name)
{
	sqlite3_stmt *s = stmt(cat, S_DELETE_DIRENT);
	sqlite3_bind_int64(s, 1, (int64_t)parent);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
	return step_done(cat, s);
}

/* Drops the link @parent/@name to @ino (mode @mode) inside a transaction. */
static int drop_link_locked(struct catalog *cat, uint64_t parent, const char *name, uint64_t ino,
			    mode_t mode)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int err = delete_dirent_locked(cat, parent, name);
	if (!err)
		err = nlink_add_locked(cat, ino, S_ISDIR(mode) ? -2 : -1, &now);
	if (!err && S_ISDIR(mode))
		err = nlink_add_locked(cat, parent, -1, NULL);
	return err;
}

int catalog_unlink(struct catalog *cat, uint64_t parent, const char *name, int dir,
		   uint64_t *ino)
{
	struct inode_attr a;
	pthread_mutex_lock(&cat->lock);
	int err = lookup_locked(cat, parent, name, ino);
	if (!err)
		err = get_attr_locked(cat, *ino, &a);
	if (!err && dir && !S_ISDIR(a.mode))
		err = -ENOTDIR;
	if (!err && !dir && S_ISDIR(a.mode))
		err = -EISDIR;
	if (!err && dir) {
		int empty = dir_is_empty_locked(cat, *ino);
		err = empty < 0 ? empty : empty ? 0 : -ENOTEMPTY;
	}
	if (!err) {
		err = begin(cat);
		if (!err)
			err = end(cat, drop_link_locked(cat, parent, name, *ino, a.mode));
	}
	pthread_mutex_unlock(&cat->lock);
	return err;
}

/* Is @ino (a directory) @anc or below it? */
static int is_descendant_locked(struct catalog *cat, uint64_t ino, uint64_t anc)
{
	for (int depth = 0; depth < 4096; depth++) {
		if (ino == anc)
			return 1;
		if (ino == FUSE_ROOT_ID)
			return 0;
		sqlite3_stmt *s = stmt(cat, S_PARENT_OF);
		sqlite3_bind_int64(s, 1, (int64_t)ino);
		int rc = sqlite3_step(s);
		if (rc != SQLITE_ROW) {
			sqlite3_reset(s);
			return 0;
		}
		ino = (uint64_t)sqlite3_column_int64(s, 0);
		sqlite3_reset(s);
	}
	return 1;
}

int catalog_rename(struct catalog *cat, uint64_t parent, const char *name, uint64_t newparent,
		   const char *newname, unsigned flags, uint64_t *replaced)
{
	struct inode_attr src, dst;
	uint64_t src_ino, dst_ino = 0;
	*replaced = 0;
	pthread_mutex_lock(&cat->lock);
	int err = lookup_locked(cat, parent, name, &src_ino);
	if (!err)
		err = get_attr_locked(cat, src_ino, &src);
	if (err)
		goto out;
	int have_dst = lookup_locked(cat, newparent, newname, &dst_ino) == 0;
	if (have_dst && dst_ino == src_ino)
		goto out; /* same file: rename(2) does nothing */
	if ((flags & RENAME_NOREPLACE) && have_dst) {
		err = -EEXIST;
		goto out;
	}
	if ((flags & RENAME_EXCHANGE) && !have_dst) {
		err = -ENOENT;
		goto out;
	}
	if (have_dst && (err = get_attr_locked(cat, dst_ino, &dst)))
		goto out;
	/* A directory cannot move below itself. */
	if (S_ISDIR(src.mode) && is_descendant_locked(cat, newparent, src_ino)) {
		err = -EINVAL;
		goto out;
	}
	if ((flags & RENAME_EXCHANGE) && S_ISDIR(dst.mode) &&
	    is_descendant_locked(cat, parent, dst_ino)) {
		err = -EINVAL;
		goto out;
	}
	if (have_dst && !(flags & RENAME_EXCHANGE)) {
		if (S_ISDIR(src.mode) && !S_ISDIR(dst.mode)) {
			err = -ENOTDIR;
			goto out;
		}
		if (!S_ISDIR(src.mode) && S_ISDIR(dst.mode)) {
			err = -EISDIR;
			goto out;
		}
		if (S_ISDIR(dst.mode)) {
			int empty = dir_is_empty_locked(cat, dst_ino);
			if (empty <= 0) {
				err = empty < 0 ? empty : -ENOTEMPTY;
				goto out;
			}
		}
	}
	if ((err = begin(cat)))
		goto out;
	if (flags & RENAME_EXCHANGE) {
		/* Swap the inode numbers of the two entries. */
		char sql[] = "UPDATE dirent SET ino = CASE ino WHEN ?1 THEN ?2 ELSE ?1 END WHERE "
			     "(parent = ?3 AND name = ?4) OR (parent = ?5 AND name = ?6)";
		sqlite3_stmt *s;
		if (sqlite3_prepare_v2(cat->db, sql, -1, &s, NULL) != SQLITE_OK) {
			err = end(cat, sql_err(cat, SQLITE_ERROR));
			goto out;
		}
		sqlite3_bind_int64(s, 1, (int64_t)src_ino);
		sqlite3_bind_int64(s, 2, (int64_t)dst_ino);
		sqlite3_bind_int64(s, 3, (int64_t)parent);
		sqlite3_bind_text(s, 4, name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 5, (int64_t)newparent);
		sqlite3_bind_text(s, 6, newname, -1, SQLITE_STATIC);
		int rc = sqlite3_step(s);
		sqlite3_finalize(s);
		err = rc == SQLITE_DONE ? 0 : sql_err(cat, rc);
		if (!err && parent != newparent && S_ISDIR(src.mode) != S_ISDIR(dst.mode)) {
			int d = S_ISDIR(src.mode) ? 1 : -1;
			err = nlink_add_locked(cat, newparent, d, NULL);
			if (!err)
				err = nlink_add_locked(cat, parent, -d, NULL);
		}
		err = end(cat, err);
		goto out;
	}
	if (have_dst) {
		err = drop_link_locked(cat, newparent, newname, dst_ino, dst.mode);
		if (!err)
			err = get_attr_locked(cat, dst_ino, &dst);
		if (!err && (dst.nlink == 0 || (S_ISDIR(dst.mode) && dst.nlink <= 1)))
			*replaced = dst_ino;
	}
	if (!err) {
		sqlite3_stmt *s = stmt(cat, S_MOVE_DIRENT);
		sqlite3_bind_int64(s, 1, (int64_t)parent);
		sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 3, (int64_t)newparent);
		sqlite3_bind_text(s, 4, newname, -1, SQLITE_STATIC);
		err = step_done(cat, s);
	}
	if (!err && S_ISDIR(src.mode) && parent != newparent) {
		err = nlink_add_locked(cat, newparent, 1, NULL);
		if (!err)
			err = nlink_add_locked(cat, parent, -1, NULL);
	}
	err = end(cat, err);
	if (err)
		*replaced = 0;
out:
	pthread_mutex_unlock(&cat->lock);
	return err;
}

int catalog_delete_inode(struct catalog *cat, uint64_t ino)
{
	char sql[320];
	/* The inode row last: sqlite3_changes() then says whether there was one. */
	snprintf(sql, sizeof sql,
		 "DELETE FROM extent WHERE ino = %1$llu; DELETE FROM gap WHERE ino = %1$llu; "
		 "DELETE FROM xattr WHERE ino = %1$llu; DELETE FROM inode WHERE ino = %1$llu;",
		 (unsigned long long)ino);
	pthread_mutex_lock(&cat->lock);
	int err = begin(cat);
	if (!err) {
		err = exec(cat, sql);
		int gone = err ? 0 : sqlite3_changes(cat->db);
		err = end(cat, err);
		if (!err && gone && cat->inodes)
			cat->inodes--;
	}
	pthread_mutex_unlock(&cat->lock);
	return err;
}

int catalog_readlink(struct catalog *cat, uint64_t ino, char **target)
{
	pthread_mutex_lock(&cat->lock);
	sqlite3_stmt *s = stmt(cat, S_READLINK);
	sqlite3_bind_int64(s, 1, (int64_t)ino);
	int rc = sqlite3_step(s);
	int err = 0;
	if (rc == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL) {
		int n = sqlite3_column_bytes(s, 0);
		*target = malloc((size_t)n + 1);
		if (*target) {
			if (n) /* a zero-length blob may come back as NULL */
				memcpy(*target, sqlite3_column_blob(s, 0), (size_t)n);
			(*target)[n] = 0;
		} else {
			err = -ENOMEM;
		}
	} else {
		err = rc == SQLITE_ROW ? -EINVAL : rc == SQLITE_DONE ? -ENOENT : sql_err(cat, rc);
	}
	sqlite3_reset(s);
	pthread_mutex_unlock(&cat->lock);
	return err;
}

int catalog_readdir(struct catalog *cat, uint64_t dir, int64_t cookie,
		    int (*fn)(void *opaque, const struct catalog_dirent *d), void *opaque)
{
	pthread_mutex_lock(&cat->lock);
	sqlite3_stmt *s = stmt(cat, S_READDIR);
	sqlite3_bind_int64(s, 1, (int64_t)dir);
	sqlite3_bind_int64(s, 2, cookie);
	int rc, err = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct catalog_dirent d = {
			.cookie = sqlite3_column_int64(s, 0),
			.name = (const char *)sqlite3_column_text(s, 1),
			.ino = (uint64_t)sqlite3_column_int64(s, 2),
			.mode = (mode_t)sqlite3_column_int64(s, 3),
		};
		if (fn(opaque, &d))
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		err = sql_err(cat, rc);
	sqlite3_reset(s);
	pthread_mutex_unlock(&cat->lock);
	return err;
}

int catalog_path_of(struct catalog *cat, uint64_t ino, char **path)
{
	char *p = strdup("");
	int err = 0;
	pthread_mutex_lock(&cat->lock);
	for (int depth = 0; p && ino != FUSE_ROOT_ID && depth < 4096; depth++) {
		sqlite3_stmt *s = stmt(cat, S_PARENT_OF);
		sqlite3_bind_int64(s, 1, (int64_t)ino);
		if (sqlite3_step(s) != SQLITE_ROW) {
			sqlite3_reset(s);
			err = -ENOENT;
			break;
		}
		ino = (uint64_t)sqlite3_column_int64(s, 0);
		const char *name = (const char *)sqlite3_column_text(s, 1);
		char *q;
		if (asprintf(&q, "%s%s%s", name, *p ? "/" : "", p) < 0)
			q = NULL;
		sqlite3_reset(s);
		free(p);
		p = q;
	}
	pthread_mutex_unlock(&cat->lock);
	if (!p)
		return -ENOMEM;
	if (err) {
		free(p);
		return err;
	}
	*path = p;
	return 0;
}

int catalog_setxattr(struct catalog *cat, uint64_t ino, const char *name, const void *value,
		     size_t size, int flags)
{
	enum stmt_id id = (flags & XATTR_CREATE)    ? S_SETXATTR_INSERT
			  : (flags & XATTR_REPLACE) ? S_SETXATTR_REPLACE
						    : S_SETXATTR_ANY;
	pthread_mutex_lock(&cat->lock);
	sqlite3_stmt *s = stmt(cat, id);
	sqlite3_bind_int64(s, 1, (int64_t)ino);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
	sqlite3_bind_blob(s, 3, value ? value : "", (int)size, SQLITE_STATIC);
	int err = step_done(cat, s);
	if (!err && id == S_SETXATTR_REPLACE && sqlite3_changes(cat->db) == 0)
		err = -ENODATA;
	pthread_mutex_unlock(&cat->lock);
	return err;
}

int catalog_getxattr(struct catalog *cat, uint64_t ino, const char *name, void *value,
		     size_t size, size_t *len)
{
	pthread_mutex_lock(&cat->lock);
	sqlite3_stmt *s = stmt(cat, S_GETXATTR);
	sqlite3_bind_int64(s, 1, (int64_t)ino);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
	int rc = sqlite3_step(s);
	int err = 0;
	if (rc == SQLITE_ROW) {
		size_t n = (size_t)sqlite3_column_bytes(s, 0);
		*len = n;
		if (size && n > size)
			err = -ERANGE;
		else if (size && n)
			memcpy(value, sqlite3_column_blob(s, 0), n);
	} else {
		err = rc == SQLITE_DONE ? -ENODATA : sql_err(cat, rc);
	}
	sqlite3_reset(s);
	pthread_mutex_unlock(&cat->lock);
	return err;
}

int catalog_listxattr(struct catalog *cat, uint64_t ino, char *buf, size_t size, size_t *len)
{
	pthread_mutex_lock(&cat->lock);
	sqlite3_stmt *s = stmt(cat, S_LISTXATTR);
	sqlite3_bind_int64(s, 1, (int64_t)ino);
	size_t n = 0;
	int rc, err = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 0);
		size_t l = strlen(name) + 1;
		if (size && n + l <= size)
			memcpy(buf + n, name, l);
		n += l;
	}
	if (rc != SQLITE_DONE)
		err = sql_err(cat, rc);
	sqlite3_reset(s);
	pthread_mutex_unlock(&cat->lock);
	*len = n;
	if (!err && size && n > size)
		err = -ERANGE;
	return err;
}

int catalog_removexattr(struct catalog *cat, uint64_t ino, const char *name)
{
	pthread_mutex_lock(&cat->lock);
	sqlite3_stmt *s = stmt(cat, S_REMOVEXATTR);
	sqlite3_bind_int64(s, 1, (int64_t)ino);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
	int err = step_done(cat, s);
	if (!err && sqlite3_changes(cat->db) == 0)
		err = -ENODATA;
	pthread_mutex_unlock(&cat->lock);
	return err;
}
