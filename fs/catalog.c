/*
 * The catalog in SQLite.
 *
 * Why SQLite: transactions give atomic renames and extent updates, WAL
 * keeps commits cheap (one fsync only when a caller asks for durability,
 * see catalog_sync()), and users can read a layout with the sqlite3 shell:
 *
 *   sqlite3 BACKING.scatterfs \
 *     "select logical, device, length from extent where ino = 2"
 *
 * Inode numbers are never reused (AUTOINCREMENT), so st_ino stays unique
 * for the life of a catalog.
 *
 * Tables: meta(key, value), inode(ino, mode, uid, gid, nlink, size, rdev,
 * atime_ns, mtime_ns, ctime_ns, target), dirent(id, parent, name, ino),
 * extent(ino, logical, device, length, flags, dev), gap(ino, device,
 * length, dev), xattr(ino, name, value).  Offsets and lengths in bytes;
 * dev is the backing device's index (0 = main).  scatterfs.ini(5) gives
 * every column's meaning.
 *
 * Versions: 1 had no dev columns; 2 had no dirent_parent index, so a
 * directory's listing (WHERE parent = ? AND id > ? ORDER BY id) read and
 * sorted all of its entries at every READDIR: quadratic in the entries.
 * An older catalog is upgraded in place (version 1: ALTER TABLE ... ADD
 * COLUMN dev; up to 2: CREATE INDEX dirent_parent) in a transaction that
 * catalog_open() begins and catalog_adopt() commits, so a mount refused
 * after the open leaves it as it was.
 *
 * Weak spot: one connection behind one mutex serializes all metadata work;
 * the data path touches the catalog only on fsync, release and forget.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "catalog_i.h"
#include "catalog_vfs.h"

static const char *const stmt_sql[S_COUNT] = {
	[S_GET_ATTR] = "SELECT mode, uid, gid, nlink, size, rdev, atime_ns, mtime_ns, ctime_ns "
		       "FROM inode WHERE ino = ?1",
	/* nlink is not written here: only the namespace operations change it. */
	[S_PUT_ATTR] = "UPDATE inode SET mode = ?2, uid = ?3, gid = ?4, size = ?6, "
		       "rdev = ?7, atime_ns = ?8, mtime_ns = ?9, ctime_ns = ?10 WHERE ino = ?1",
	[S_LOOKUP] = "SELECT ino FROM dirent WHERE parent = ?1 AND name = ?2",
	[S_INSERT_INODE] = "INSERT INTO inode (mode, uid, gid, nlink, size, rdev, atime_ns, "
			   "mtime_ns, ctime_ns, target) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
			   "?9, ?10)",
	[S_INSERT_DIRENT] = "INSERT INTO dirent (parent, name, ino) VALUES (?1, ?2, ?3)",
	[S_DELETE_DIRENT] = "DELETE FROM dirent WHERE parent = ?1 AND name = ?2",
	[S_NLINK_ADD] = "UPDATE inode SET nlink = nlink + ?2, ctime_ns = coalesce(?3, ctime_ns) "
			"WHERE ino = ?1",
	[S_READDIR] = "SELECT d.id, d.name, d.ino, i.mode FROM dirent d JOIN inode i ON "
		      "i.ino = d.ino WHERE d.parent = ?1 AND d.id > ?2 ORDER BY d.id",
	[S_DIR_EMPTY] = "SELECT 1 FROM dirent WHERE parent = ?1 LIMIT 1",
	[S_PARENT_OF] = "SELECT parent, name FROM dirent WHERE ino = ?1 LIMIT 1",
	[S_NAME_OF] = "SELECT name FROM dirent WHERE ino = ?1 LIMIT 1",
	[S_LOAD_EXTENTS] = "SELECT logical, device, length, flags, dev FROM extent WHERE ino = ?1 "
			   "ORDER BY logical",
	[S_LOAD_GAPS] = "SELECT device, length, dev FROM gap WHERE ino = ?1 ORDER BY dev, device",
	[S_DELETE_EXTENTS_FROM] = "DELETE FROM extent WHERE ino = ?1 AND logical >= ?2",
	[S_INSERT_EXTENT] = "INSERT INTO extent (ino, logical, device, length, flags, dev) VALUES "
			    "(?1, ?2, ?3, ?4, ?5, ?6)",
	[S_DELETE_GAPS] = "DELETE FROM gap WHERE ino = ?1",
	[S_INSERT_GAP] = "INSERT INTO gap (ino, device, length, dev) VALUES (?1, ?2, ?3, ?4)",
	[S_READLINK] = "SELECT target FROM inode WHERE ino = ?1",
	[S_GETXATTR] = "SELECT value FROM xattr WHERE ino = ?1 AND name = ?2",
	[S_SETXATTR_INSERT] = "INSERT INTO xattr (ino, name, value) VALUES (?1, ?2, ?3)",
	[S_SETXATTR_REPLACE] = "UPDATE xattr SET value = ?3 WHERE ino = ?1 AND name = ?2",
	[S_SETXATTR_ANY] = "INSERT OR REPLACE INTO xattr (ino, name, value) VALUES (?1, ?2, ?3)",
	[S_LISTXATTR] = "SELECT name FROM xattr WHERE ino = ?1 ORDER BY name",
	[S_REMOVEXATTR] = "DELETE FROM xattr WHERE ino = ?1 AND name = ?2",
	[S_MOVE_DIRENT] = "UPDATE dirent SET parent = ?3, name = ?4 WHERE parent = ?1 AND name = ?2",
	[S_DIRENT_PARENT_ADJ] = "UPDATE inode SET nlink = nlink + ?2 WHERE ino = ?1",
	[S_MAPPED_BYTES] = "SELECT coalesce(sum(length), 0) FROM extent WHERE ino = ?1",
};

static const char schema_sql[] =
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;"
	"CREATE TABLE inode (ino INTEGER PRIMARY KEY AUTOINCREMENT, mode INTEGER NOT NULL, uid INTEGER NOT "
	"NULL, gid INTEGER NOT NULL, nlink INTEGER NOT NULL, size INTEGER NOT NULL, rdev INTEGER "
	"NOT NULL, atime_ns INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL, "
	"target BLOB);"
	"CREATE TABLE dirent (id INTEGER PRIMARY KEY, parent INTEGER NOT NULL, name TEXT NOT NULL, "
	"ino INTEGER NOT NULL);"
	"CREATE UNIQUE INDEX dirent_name ON dirent (parent, name);"
	"CREATE INDEX dirent_ino ON dirent (ino);"
	"CREATE INDEX dirent_parent ON dirent (parent, id);"
	"CREATE TABLE extent (ino INTEGER NOT NULL, logical INTEGER NOT NULL, device INTEGER NOT "
	"NULL, length INTEGER NOT NULL, flags INTEGER NOT NULL, dev INTEGER NOT NULL DEFAULT 0, "
	"PRIMARY KEY (ino, logical)) WITHOUT ROWID;"
	"CREATE TABLE gap (ino INTEGER NOT NULL, device INTEGER NOT NULL, length INTEGER NOT NULL, "
	"dev INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (ino, device)) WITHOUT ROWID;"
	"CREATE TABLE xattr (ino INTEGER NOT NULL, name TEXT NOT NULL, value BLOB, PRIMARY KEY "
	"(ino, name)) WITHOUT ROWID;"
	"CREATE VIEW extent_by_path AS WITH RECURSIVE p(ino, path) AS (SELECT 1, '' UNION ALL "
	"SELECT d.ino, CASE p.path WHEN '' THEN d.name ELSE p.path || '/' || d.name END FROM "
	"dirent d JOIN p ON d.parent = p.ino) SELECT p.path, e.logical, e.device, e.length, "
	"e.flags FROM extent e JOIN p ON p.ino = e.ino;";

/* The end of both refusals of a catalog that holds no file system. */
#define NOT_A_CATALOG_HINT                                                                  \
	"a copy without its -wal file: copy a catalog with its -wal, or once its daemon has " \
	"exited); move it away to start an empty file system"

/* Checks an existing catalog without writing to it. */
static int check_existing(struct catalog *cat, const char *path, struct catalog_identity *id,
			  char *err, size_t errlen)
{
	int64_t version = 0, bs, size; /* 0 in the message when the row is missing */
	if (!meta_text_is(cat->db, "magic", CATALOG_MAGIC)) {
		snprintf(err, errlen,
			 "%s is not a scatterfs catalog (corrupted, truncated, another file, or "
			 NOT_A_CATALOG_HINT,
			 path);
		return -EINVAL;
	}
	if (meta_int(cat->db, "version", &version) || version < 1 || version > CATALOG_VERSION) {
		snprintf(err, errlen, "%s: catalog version %lld is not supported (this is %d)",
			 path, (long long)version, CATALOG_VERSION);
		return -EINVAL;
	}
	cat->upgrading = version < CATALOG_VERSION;
	cat->version = version;
	if (meta_int(cat->db, "block_size", &bs) || meta_int(cat->db, "device_size", &size)) {
		snprintf(err, errlen, "%s: catalog has no device geometry (corrupted)", path);
		return -EINVAL;
	}
	if ((uint64_t)bs != id->block_size) {
		snprintf(err, errlen,
			 "%s was made with device.block_size = %lld but the configuration says %u; "
			 "use the same block size",
			 path, (long long)bs, id->block_size);
		return -EINVAL;
	}
	/* A device smaller than recorded is the caller's to refuse, after it has
	 * looked for the files that lost data (catalog_files_past()). */
	id->recorded_size = (uint64_t)size;
	int64_t rec_id;
	bool have_id = meta_int(cat->db, "backing_id", &rec_id) == 0;
	bool same_id = have_id && (uint64_t)rec_id == id->backing_id;
	bool same_path = meta_text_is(cat->db, "backing_path", id->backing_path);
	if (have_id && !same_id && !same_path) {
		char *rec_path = meta_text(cat->db, "backing_path");
		if (!id->moved) {
			snprintf(err, errlen,
				 "%s belongs to backing %s, not to %s; give that backing, or the right "
				 "meta=FILE for this one (backing and catalog moved or copied together: "
				 "-o moved)",
				 path, rec_path ? rec_path : "(unknown)", id->backing_path);
			free(rec_path);
			return -EINVAL;
		}
		id->relocated = true;
		if (id->moved_from && rec_path)
			snprintf(id->moved_from, id->moved_from_size, "%s", rec_path);
		free(rec_path);
	}
	int64_t rec_born;
	id->recreated = id->backing_born_ns && meta_int(cat->db, "backing_born_ns", &rec_born) == 0 &&
			rec_born != id->backing_born_ns;
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(cat->db, "PRAGMA quick_check", -1, &s, NULL) != SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_ROW ||
	    strcmp((const char *)sqlite3_column_text(s, 0), "ok") != 0) {
		snprintf(err, errlen, "%s: catalog fails SQLite's quick_check (corrupted)", path);
		sqlite3_finalize(s);
		return -EINVAL;
	}
	sqlite3_finalize(s);
	return 0;
}

static int create_schema(struct catalog *cat, const struct catalog_identity *id, uid_t uid,
			 gid_t gid)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	char sql[1024];
	int64_t t = ts_ns(&now);
	snprintf(sql, sizeof sql,
		 "INSERT INTO meta VALUES ('magic', '%s'), ('version', %d), ('block_size', %u), "
		 "('device_size', %llu), ('created_ns', %lld);"
		 "INSERT INTO inode (ino, mode, uid, gid, nlink, size, rdev, atime_ns, mtime_ns, "
		 "ctime_ns) VALUES (1, %u, %u, %u, 2, 0, 0, %lld, %lld, %lld);",
		 CATALOG_MAGIC, CATALOG_VERSION, id->block_size,
		 (unsigned long long)id->device_size, (long long)t, S_IFDIR | 0755, uid, gid,
		 (long long)t, (long long)t, (long long)t);
	int err = begin(cat);
	if (err)
		return err;
	err = exec(cat, schema_sql);
	if (!err)
		err = exec(cat, sql);
	return end(cat, err);
}

int catalog_open(const char *path, struct catalog_identity *id, uid_t root_uid, gid_t root_gid,
		 struct catalog **out, char *err, size_t errlen)
{
	struct stat st;
	bool exists = stat(path, &st) == 0;
	if (exists && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "catalog %s is not a regular file", path);
		return -EINVAL;
	}
	if (exists && st.st_size == 0) {
		snprintf(err, errlen,
			 "catalog %s is empty (truncated, or " NOT_A_CATALOG_HINT,
			 path);
		return -EINVAL;
	}
	struct catalog *cat = calloc(1, sizeof *cat);
	if (!cat)
		return -ENOMEM;
	pthread_mutex_init(&cat->lock, NULL);
	if (!exists) {
		/*
		 * Created here with mode 0600 whatever the umask, because it holds
		 * every name, owner, size and extent of the file system; SQLite
		 * gives the -wal and -shm files the mode of the database file.  An
		 * empty file is a new database to SQLite.  When this fails,
		 * sqlite3_open_v2() below fails too and says why.
		 */
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0) {
			(void)fchmod(fd, 0600); /* a umask such as 0277 took more */
			close(fd);
		}
	}
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (exists ? 0 : SQLITE_OPEN_CREATE);
	/* through the VFS shim that a simulated power failure needs (catalog_vfs.c) */
	int rc = catalog_vfs_register() ? SQLITE_ERROR
					: sqlite3_open_v2(path, &cat->db, flags, CATALOG_VFS_NAME);
	int ret = 0;
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "cannot open catalog %s: %s", path,
			 cat->db ? sqlite3_errmsg(cat->db) : sqlite3_errstr(rc));
		ret = -EIO;
		goto fail;
	}
	sqlite3_busy_timeout(cat->db, 5000);
	if (exists) {
		ret = check_existing(cat, path, id, err, errlen);
		if (ret)
			goto fail;
	}
	if (exec(cat, "PRAGMA journal_mode = WAL") || exec(cat, "PRAGMA synchronous = NORMAL") ||
	    exec(cat, "PRAGMA foreign_keys = OFF")) {
		snprintf(err, errlen, "cannot set up catalog %s: %s", path, sqlite3_errmsg(cat->db));
		ret = -EIO;
		goto fail;
	}
	if (!exists) {
		id->recorded_size = id->device_size;
		ret = create_schema(cat, id, root_uid, root_gid);
		if (ret) {
			snprintf(err, errlen, "cannot create catalog %s", path);
			goto fail;
		}
	}
	if (cat->upgrading &&
	    (begin(cat) ||
	     (cat->version < 2 &&
	      exec(cat, "ALTER TABLE extent ADD COLUMN dev INTEGER NOT NULL DEFAULT 0;"
			"ALTER TABLE gap ADD COLUMN dev INTEGER NOT NULL DEFAULT 0;")) ||
	     (cat->version < 3 &&
	      exec(cat, "CREATE INDEX dirent_parent ON dirent (parent, id);")) ||
	     exec(cat, "UPDATE meta SET value = 3 WHERE key = 'version';"))) {
		snprintf(err, errlen, "cannot upgrade catalog %s to version %d: %s", path,
			 CATALOG_VERSION, sqlite3_errmsg(cat->db));
		ret = -EIO;
		goto fail;
	}
	if (exec(cat, "CREATE TEMP TABLE orphan AS SELECT ino FROM inode WHERE ino != 1 AND ino "
		      "NOT IN (SELECT ino FROM dirent)")) {
		snprintf(err, errlen, "catalog %s: %s", path, sqlite3_errmsg(cat->db));
		ret = -EIO;
		goto fail;
	}
	if (count_inodes(cat)) {
		snprintf(err, errlen, "catalog %s: %s", path, sqlite3_errmsg(cat->db));
		ret = -EIO;
		goto fail;
	}
	for (int i = 0; i < S_COUNT; i++) {
		rc = sqlite3_prepare_v3(cat->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
					&cat->st[i], NULL);
		if (rc != SQLITE_OK) {
			snprintf(err, errlen, "catalog %s: %s (in: %s)", path,
				 sqlite3_errmsg(cat->db), stmt_sql[i]);
			ret = -EIO;
			goto fail;
		}
	}
	*out = cat;
	return 0;
fail:
	for (int i = 0; i < S_COUNT; i++)
		sqlite3_finalize(cat->st[i]);
	if (cat->upgrading)
		exec(cat, "ROLLBACK");
	sqlite3_close(cat->db);
	if (!exists)
		unlink(path);
	free(cat);
	return ret;
}

void catalog_close(struct catalog *cat)
{
	if (!cat)
		return;
	for (int i = 0; i < S_COUNT; i++)
		sqlite3_finalize(cat->st[i]);
	if (cat->upgrading) /* never adopted: the catalog stays as it was */
		sqlite3_exec(cat->db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_exec(cat->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
	sqlite3_close(cat->db);
	pthread_mutex_destroy(&cat->lock);
	free(cat);
}

int catalog_sync(struct catalog *cat)
{
	return catalog_sync_upto(cat, UINT64_MAX);
}

uint64_t catalog_commit_seq(struct catalog *cat)
{
	pthread_mutex_lock(&cat->lock);
	uint64_t n = cat->commits;
	pthread_mutex_unlock(&cat->lock);
	return n;
}

int catalog_sync_upto(struct catalog *cat, uint64_t seq)
{
	pthread_mutex_lock(&cat->lock);
	bool needed = cat->dirty && cat->synced_upto < seq;
	pthread_mutex_unlock(&cat->lock);
	/* (a commit between the check and the sync is made durable too) */
	return needed ? catalog_store_inode(cat, NULL, 0, NULL, UINT64_MAX, NULL, true) : 0;
}

void catalog_commit_counts(struct catalog *cat, uint64_t *commits, uint64_t *syncs)
{
	pthread_mutex_lock(&cat->lock);
	*commits = cat->commits;
	*syncs = cat->syncs;
	pthread_mutex_unlock(&cat->lock);
}

uint64_t catalog_inode_count(struct catalog *cat)
{
	pthread_mutex_lock(&cat->lock);
	uint64_t n = cat->inodes;
	pthread_mutex_unlock(&cat->lock);
	return n;
}
