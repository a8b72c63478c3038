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

#include "catalog.h"
#include "layout_score.h"
#include "units.h"

#define CATALOG_MAGIC "scatterfs-catalog"
#define CATALOG_VERSION 3

enum stmt_id {
	S_GET_ATTR,
	S_PUT_ATTR,
	S_LOOKUP,
	S_INSERT_INODE,
	S_INSERT_DIRENT,
	S_DELETE_DIRENT,
	S_NLINK_ADD,
	S_READDIR,
	S_DIR_EMPTY,
	S_PARENT_OF,
	S_NAME_OF,
	S_LOAD_EXTENTS,
	S_LOAD_GAPS,
	S_DELETE_EXTENTS_FROM,
	S_INSERT_EXTENT,
	S_DELETE_GAPS,
	S_INSERT_GAP,
	S_READLINK,
	S_GETXATTR,
	S_SETXATTR_INSERT,
	S_SETXATTR_REPLACE,
	S_SETXATTR_ANY,
	S_LISTXATTR,
	S_REMOVEXATTR,
	S_MOVE_DIRENT,
	S_DIRENT_PARENT_ADJ,
	S_MAPPED_BYTES,
	S_COUNT
};

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

struct catalog {
	pthread_mutex_t lock;
	bool dirty; /* a transaction committed since the last catalog_sync() */
	bool upgrading; /* catalog_open() began the version upgrade; catalog_adopt() commits it */
	int64_t version; /* the version the catalog had at open */
	uint64_t commits, syncs; /* since the mount: write transactions, synchronous commits */
	uint64_t synced_upto;    /* commits made durable by the last synchronous commit */
	uint64_t inodes;         /* rows of the inode table, orphans included */
	sqlite3 *db;
	sqlite3_stmt *st[S_COUNT];
};

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * (int64_t)NS_PER_S + t->tv_nsec;
}

static struct timespec ns_ts(int64_t ns)
{
	struct timespec t = {.tv_sec = ns / (int64_t)NS_PER_S, .tv_nsec = ns % (int64_t)NS_PER_S};
	if (t.tv_nsec < 0) {
		t.tv_nsec += NS_PER_S;
		t.tv_sec--;
	}
	return t;
}

/* Prepared statement @id, reset and unbound; caller holds cat->lock. */
static sqlite3_stmt *stmt(struct catalog *cat, enum stmt_id id)
{
	sqlite3_stmt *s = cat->st[id];
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return s;
}

static int sql_err(struct catalog *cat, int rc)
{
	if (rc == SQLITE_CONSTRAINT)
		return -EEXIST;
	if (rc == SQLITE_FULL)
		return -ENOSPC;
	fprintf(stderr, "scatterfs: catalog: %s\n", sqlite3_errmsg(cat->db));
	return -EIO;
}

/* Runs a statement that returns no rows. */
static int step_done(struct catalog *cat, sqlite3_stmt *s)
{
	if (!sqlite3_stmt_readonly(s)) {
		cat->dirty = true;
		if (sqlite3_get_autocommit(cat->db))
			cat->commits++; /* a transaction of its own */
	}
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : sql_err(cat, rc);
}

static int exec(struct catalog *cat, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(cat->db, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		fprintf(stderr, "scatterfs: catalog: %s: %s\n", sql, msg ? msg : "?");
		sqlite3_free(msg);
		return rc == SQLITE_FULL ? -ENOSPC : -EIO;
	}
	return 0;
}

/* Sets cat->inodes from the inode table; caller holds cat->lock (or owns @cat). */
static int count_inodes(struct catalog *cat)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(cat->db, "SELECT count(*) FROM inode", -1, &s, NULL) != SQLITE_OK)
		return sql_err(cat, SQLITE_ERROR);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		cat->inodes = (uint64_t)sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : sql_err(cat, rc);
}

static int begin(struct catalog *cat)
{
	return exec(cat, "BEGIN IMMEDIATE");
}

static int end(struct catalog *cat, int err)
{
	if (err) {
		exec(cat, "ROLLBACK");
		return err;
	}
	cat->dirty = true;
	cat->commits++;
	return exec(cat, "COMMIT");
}

static int meta_int(sqlite3 *db, const char *key, int64_t *v)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?1", -1, &s, NULL);
	if (rc != SQLITE_OK)
		return -1;
	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* The text value of meta @key (malloc'd), or NULL. */
static char *meta_text(sqlite3 *db, const char *key)
{
	sqlite3_stmt *s;
	char *v = NULL;
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?1", -1, &s, NULL) !=
	    SQLITE_OK)
		return NULL;
	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
		v = strdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return v;
}

static int meta_text_is(sqlite3 *db, const char *key, const char *want)
{
	sqlite3_stmt *s;
	int ok = 0;
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?1", -1, &s, NULL) !=
	    SQLITE_OK)
		return 0;
	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW) {
		const unsigned char *v = sqlite3_column_text(s, 0);
		ok = v && strcmp((const char *)v, want) == 0;
	}
	sqlite3_finalize(s);
	return ok;
}

/* Checks an existing catalog without writing to it. */
static int check_existing(struct catalog *cat, const char *path, struct catalog_identity *id,
			  char *err, size_t errlen)
{
	int64_t version, bs, size;
	if (!meta_text_is(cat->db, "magic", CATALOG_MAGIC)) {
		snprintf(err, errlen,
			 "%s is not a scatterfs catalog (corrupted, truncated or another file); "
			 "move it away to start an empty file system",
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
		snprintf(err, errlen,
			 "%s belongs to backing %s, not to %s; give that backing, or the right "
			 "meta=FILE for this one",
			 path, rec_path ? rec_path : "(unknown)", id->backing_path);
		free(rec_path);
		return -EINVAL;
	}
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
			 "catalog %s is empty (truncated?); move it away to start an empty file "
			 "system",
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
	int rc = sqlite3_open_v2(path, &cat->db, flags, NULL);
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

static int put_attr_locked(struct catalog *cat, const struct inode_attr *a)
{
	sqlite3_stmt *s = stmt(cat, S_PUT_ATTR);
	sqlite3_bind_int64(s, 1, (int64_t)a->ino);
	sqlite3_bind_int64(s, 2, a->mode);
	sqlite3_bind_int64(s, 3, a->uid);
	sqlite3_bind_int64(s, 4, a->gid);
	sqlite3_bind_int64(s, 5, a->nlink);
	sqlite3_bind_int64(s, 6, (int64_t)a->size);
	sqlite3_bind_int64(s, 7, (int64_t)a->rdev);
	sqlite3_bind_int64(s, 8, ts_ns(&a->atime));
	sqlite3_bind_int64(s, 9, ts_ns(&a->mtime));
	sqlite3_bind_int64(s, 10, ts_ns(&a->ctime));
	return step_done(cat, s);
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

int catalog_load_extents(struct catalog *cat, uint64_t ino, struct extent_map *map,
			 struct run_vec *gaps)
{
	int err = 0, rc;
	pthread_mutex_lock(&cat->lock);
	sqlite3_stmt *s = stmt(cat, S_LOAD_EXTENTS);
	sqlite3_bind_int64(s, 1, (int64_t)ino);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		err = extmap_insert(map, (uint64_t)sqlite3_column_int64(s, 0),
				    (uint64_t)sqlite3_column_int64(s, 1),
				    (uint64_t)sqlite3_column_int64(s, 2),
				    ((unsigned)sqlite3_column_int64(s, 3) & 0xff) |
					EXTENT_DEV(sqlite3_column_int64(s, 4)));
		if (err)
			break;
	}
	if (!err && rc != SQLITE_DONE)
		err = sql_err(cat, rc);
	sqlite3_reset(s);
	if (!err) {
		s = stmt(cat, S_LOAD_GAPS);
		sqlite3_bind_int64(s, 1, (int64_t)ino);
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			err = run_vec_push(gaps, (uint64_t)sqlite3_column_int64(s, 0),
					   (uint64_t)sqlite3_column_int64(s, 1));
			if (err)
				break;
			gaps->v[gaps->n - 1].dev = (unsigned)sqlite3_column_int64(s, 2);
		}
		if (!err && rc != SQLITE_DONE)
			err = sql_err(cat, rc);
		sqlite3_reset(s);
	}
	pthread_mutex_unlock(&cat->lock);
	return err;
}

/* catalog_store_inode()'s extents and gaps, inside the caller's transaction. */
static int store_extents_locked(struct catalog *cat, uint64_t ino, const struct extent_map *map,
				uint64_t from, const struct run_vec *gaps)
{
	int err = 0;
	if (from != UINT64_MAX) {
		/* The entry before @from may have been shortened (a truncate or a
		 * hole punched inside it) and one may straddle it: rewrite from
		 * the entry before. */
		size_t i = extmap_find(map, from);
		if (i > 0)
			i--;
		if (i < map->n && map->v[i].logical < from)
			from = map->v[i].logical;
		sqlite3_stmt *s = stmt(cat, S_DELETE_EXTENTS_FROM);
		sqlite3_bind_int64(s, 1, (int64_t)ino);
		sqlite3_bind_int64(s, 2, (int64_t)from);
		err = step_done(cat, s);
		for (; !err && i < map->n; i++) {
			const struct extent *e = &map->v[i];
			s = stmt(cat, S_INSERT_EXTENT);
			sqlite3_bind_int64(s, 1, (int64_t)ino);
			sqlite3_bind_int64(s, 2, (int64_t)e->logical);
			sqlite3_bind_int64(s, 3, (int64_t)e->device);
			sqlite3_bind_int64(s, 4, (int64_t)e->length);
			sqlite3_bind_int64(s, 5, e->flags);
			sqlite3_bind_int64(s, 6, e->dev);
			err = step_done(cat, s);
		}
	}
	if (!err && gaps) {
		sqlite3_stmt *s = stmt(cat, S_DELETE_GAPS);
		sqlite3_bind_int64(s, 1, (int64_t)ino);
		err = step_done(cat, s);
		for (size_t i = 0; !err && i < gaps->n; i++) {
			s = stmt(cat, S_INSERT_GAP);
			sqlite3_bind_int64(s, 1, (int64_t)ino);
			sqlite3_bind_int64(s, 2, (int64_t)gaps->v[i].device);
			sqlite3_bind_int64(s, 3, (int64_t)gaps->v[i].length);
			sqlite3_bind_int64(s, 4, gaps->v[i].dev);
			err = step_done(cat, s);
		}
	}
	return err;
}

int catalog_store_inode(struct catalog *cat, const struct inode_attr *a, uint64_t ino,
			const struct extent_map *map, uint64_t from, const struct run_vec *gaps,
			bool durable)
{
	pthread_mutex_lock(&cat->lock);
	/* With synchronous = FULL a WAL commit fsyncs the WAL, and with it
	 * every commit before it. */
	int err = durable ? exec(cat, "PRAGMA synchronous = FULL") : 0;
	if (!err)
		err = begin(cat);
	if (!err) {
		if (a)
			err = put_attr_locked(cat, a);
		if (!err && map)
			err = store_extents_locked(cat, ino, map, from, gaps);
		if (!err && !a && !map)
			err = exec(cat, "INSERT OR REPLACE INTO meta VALUES ('synced', 1)");
		err = end(cat, err);
	}
	if (durable) {
		exec(cat, "PRAGMA synchronous = NORMAL");
		if (!err) {
			cat->dirty = false;
			cat->syncs++;
			cat->synced_upto = cat->commits;
		}
	}
	pthread_mutex_unlock(&cat->lock);
	return err;
}

int catalog_used_runs(struct catalog *cat, unsigned dev, struct run_vec *out)
{
	sqlite3_stmt *s;
	int err = 0, rc;
	pthread_mutex_lock(&cat->lock);
	/* No ORDER BY: sorting 10 million rows in SQLite took seconds; the
	 * allocator's radix sort takes a fraction of that. */
	rc = sqlite3_prepare_v2(cat->db,
				"SELECT device, length FROM extent WHERE dev = ?1 AND ino NOT IN "
				"(SELECT ino FROM orphan) UNION ALL SELECT device, length FROM gap "
				"WHERE dev = ?1 AND ino NOT IN (SELECT ino FROM orphan)",
				-1, &s, NULL);
	if (rc != SQLITE_OK) {
		err = sql_err(cat, rc);
		goto out;
	}
	sqlite3_bind_int64(s, 1, dev);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		err = run_vec_push(out, (uint64_t)sqlite3_column_int64(s, 0),
				   (uint64_t)sqlite3_column_int64(s, 1));
		if (err)
			break;
	}
	if (!err && rc != SQLITE_DONE)
		err = sql_err(cat, rc);
	sqlite3_finalize(s);
out:
	pthread_mutex_unlock(&cat->lock);
	return err;
}

int catalog_files_past(struct catalog *cat, unsigned dev, uint64_t end, char **paths, size_t max,
		       size_t *npaths, uint64_t *nfiles, uint64_t *max_end)
{
	sqlite3_stmt *s;
	int err = 0, rc;

	*npaths = 0;
	*nfiles = 0;
	*max_end = 0;
	pthread_mutex_lock(&cat->lock);
	/* Each file once, by its first path in sort order; the depth bound
	 * stops a catalog whose directories loop. */
	rc = sqlite3_prepare_v2(
	    cat->db,
	    "WITH RECURSIVE p(ino, path, depth) AS (SELECT 1, '', 0 UNION ALL SELECT d.ino, "
	    "CASE p.path WHEN '' THEN d.name ELSE p.path || '/' || d.name END, p.depth + 1 FROM "
	    "dirent d JOIN p ON d.parent = p.ino WHERE p.depth < 4096), "
	    "past(ino, e) AS (SELECT ino, max(device + length) FROM extent WHERE dev = ?1 AND "
	    "device + length > ?2 GROUP BY ino) "
	    "SELECT min(p.path), past.e FROM p JOIN past ON p.ino = past.ino GROUP BY p.ino "
	    "ORDER BY 1",
	    -1, &s, NULL);
	if (rc != SQLITE_OK) {
		err = sql_err(cat, rc);
		goto out;
	}
	sqlite3_bind_int64(s, 1, dev);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)end);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		uint64_t e = (uint64_t)sqlite3_column_int64(s, 1);
		if (e > *max_end)
			*max_end = e;
		if (*npaths < max) {
			const char *t = (const char *)sqlite3_column_text(s, 0);
			if (!(paths[*npaths] = strdup(t ? t : ""))) {
				err = -ENOMEM;
				break;
			}
			(*npaths)++;
		}
		(*nfiles)++;
	}
	if (!err && rc != SQLITE_DONE)
		err = sql_err(cat, rc);
	sqlite3_finalize(s);
out:
	pthread_mutex_unlock(&cat->lock);
	return err;
}

int catalog_counts(struct catalog *cat, uint64_t *inodes, uint64_t *extents)
{
	sqlite3_stmt *s;
	int err = -EIO;
	pthread_mutex_lock(&cat->lock);
	if (sqlite3_prepare_v2(cat->db,
			       "SELECT (SELECT count(*) FROM inode WHERE mode & 61440 = 32768), "
			       "(SELECT count(*) FROM extent WHERE flags & 2)",
			       -1, &s, NULL) == SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW) {
			*inodes = (uint64_t)sqlite3_column_int64(s, 0);
			*extents = (uint64_t)sqlite3_column_int64(s, 1);
			err = 0;
		}
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(&cat->lock);
	return err;
}

int catalog_reserved_bytes(struct catalog *cat, const uint32_t *block_size, unsigned ndev,
			   uint64_t *reserved)
{
	sqlite3_stmt *s;
	int err = 0, rc;

	memset(reserved, 0, ndev * sizeof(*reserved));
	pthread_mutex_lock(&cat->lock);
	/* Extents reaching past their file's end, then each device's gaps. */
	if (sqlite3_prepare_v2(cat->db,
			       "SELECT e.dev, e.logical, e.length, i.size FROM extent e JOIN inode i "
			       "ON i.ino = e.ino WHERE e.logical + e.length > i.size "
			       "UNION ALL SELECT dev, 0, sum(length), 0 FROM gap GROUP BY dev",
			       -1, &s, NULL) != SQLITE_OK) {
		pthread_mutex_unlock(&cat->lock);
		return -EIO;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t dev = sqlite3_column_int64(s, 0);
		uint64_t logical = (uint64_t)sqlite3_column_int64(s, 1);
		uint64_t end = logical + (uint64_t)sqlite3_column_int64(s, 2);
		uint64_t size = (uint64_t)sqlite3_column_int64(s, 3);

		if (dev < 0 || (uint64_t)dev >= ndev)
			continue;
		/* The block that holds the last byte is data (block_size: a power of two). */
		size = (size + block_size[dev] - 1) & ~(uint64_t)(block_size[dev] - 1);
		if (end > size)
			reserved[dev] += end - (logical > size ? logical : size);
	}
	if (rc != SQLITE_DONE)
		err = -EIO;
	sqlite3_finalize(s);
	pthread_mutex_unlock(&cat->lock);
	return err;
}

/* Scores the @n extents of one file at @v and adds them to @out. */
static void add_file_layout(struct layout_extent *v, size_t n, uint64_t block_size,
			    struct layout_stats *out)
{
	struct layout_stats one;

	layout_score(v, n, block_size, &one);
	layout_stats_add(out, &one);
}

int catalog_layout_stats(struct catalog *cat, uint64_t block_size, struct layout_stats *out)
{
	struct layout_extent *v = NULL;
	size_t n = 0, cap = 0;
	int64_t cur = -1;
	sqlite3_stmt *s;
	int err = 0, rc;

	*out = (struct layout_stats){0};
	pthread_mutex_lock(&cat->lock);
	if (sqlite3_prepare_v2(cat->db,
			       "SELECT ino, logical, device, length, flags FROM extent "
			       "ORDER BY ino, logical",
			       -1, &s, NULL) != SQLITE_OK) {
		pthread_mutex_unlock(&cat->lock);
		return -EIO;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t ino = sqlite3_column_int64(s, 0);
		struct layout_extent e = {(uint64_t)sqlite3_column_int64(s, 1),
					  (uint64_t)sqlite3_column_int64(s, 2),
					  (uint64_t)sqlite3_column_int64(s, 3)};
		unsigned flags = (unsigned)sqlite3_column_int(s, 4);

		if (ino != cur) {
			add_file_layout(v, n, block_size, out);
			n = 0;
			cur = ino;
		}
		/* Pieces of one allocation extent split by state are one extent. */
		if (n > 0 && !(flags & EXTENT_START) &&
		    e.logical == v[n - 1].logical + v[n - 1].length &&
		    e.device == v[n - 1].device + v[n - 1].length) {
			v[n - 1].length += e.length;
			continue;
		}
		if (n == cap) {
			struct layout_extent *w = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof(*w));
			if (w == NULL) {
				err = -ENOMEM;
				break;
			}
			v = w;
		}
		v[n++] = e;
	}
	if (err == 0 && rc != SQLITE_DONE)
		err = -EIO;
	sqlite3_finalize(s);
	pthread_mutex_unlock(&cat->lock);
	if (err == 0)
		add_file_layout(v, n, block_size, out);
	free(v);
	return err;
}

int catalog_file_extents(struct catalog *cat,
			 void (*fn)(void *ctx, unsigned dev, const struct layout_extent *v, size_t n),
			 void *ctx)
{
	struct layout_extent *v = NULL;
	size_t n = 0, cap = 0;
	int64_t cur = -1, cur_dev = -1;
	sqlite3_stmt *s;
	int err = 0, rc;

	pthread_mutex_lock(&cat->lock);
	if (sqlite3_prepare_v2(cat->db,
			       "SELECT ino, dev, logical, device, length, flags FROM extent "
			       "ORDER BY ino, dev, logical",
			       -1, &s, NULL) != SQLITE_OK) {
		pthread_mutex_unlock(&cat->lock);
		return -EIO;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t ino = sqlite3_column_int64(s, 0), dev = sqlite3_column_int64(s, 1);
		struct layout_extent e = {(uint64_t)sqlite3_column_int64(s, 2),
					  (uint64_t)sqlite3_column_int64(s, 3),
					  (uint64_t)sqlite3_column_int64(s, 4)};
		unsigned flags = (unsigned)sqlite3_column_int(s, 5);

		if (flags & EXTENT_UNWRITTEN)
			continue;
		if (ino != cur || dev != cur_dev) {
			if (n)
				fn(ctx, (unsigned)cur_dev, v, n);
			n = 0;
			cur = ino;
			cur_dev = dev;
		}
		if (n > 0 && !(flags & EXTENT_START) &&
		    e.logical == v[n - 1].logical + v[n - 1].length &&
		    e.device == v[n - 1].device + v[n - 1].length) {
			v[n - 1].length += e.length;
			continue;
		}
		if (n == cap) {
			struct layout_extent *w = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof(*w));
			if (w == NULL) {
				err = -ENOMEM;
				break;
			}
			v = w;
		}
		v[n++] = e;
	}
	if (err == 0 && rc != SQLITE_DONE)
		err = -EIO;
	if (err == 0 && n)
		fn(ctx, (unsigned)cur_dev, v, n);
	sqlite3_finalize(s);
	pthread_mutex_unlock(&cat->lock);
	free(v);
	return err;
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

int catalog_mapped_bytes(struct catalog *cat, uint64_t ino, uint64_t *bytes)
{
	pthread_mutex_lock(&cat->lock);
	sqlite3_stmt *s = stmt(cat, S_MAPPED_BYTES);
	sqlite3_bind_int64(s, 1, (int64_t)ino);
	int rc = sqlite3_step(s);
	int err = 0;
	if (rc == SQLITE_ROW)
		*bytes = (uint64_t)sqlite3_column_int64(s, 0);
	else
		err = sql_err(cat, rc);
	sqlite3_reset(s);
	pthread_mutex_unlock(&cat->lock);
	return err;
}

/* Binds and runs "INSERT OR REPLACE INTO meta VALUES (?1, ?2)" with a text or an integer value. */
static int meta_put(struct catalog *cat, const char *key, const char *text, int64_t v)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(cat->db, "INSERT OR REPLACE INTO meta VALUES (?1, ?2)", -1, &s,
				    NULL);
	if (rc != SQLITE_OK)
		return sql_err(cat, rc);
	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	if (text)
		sqlite3_bind_text(s, 2, text, -1, SQLITE_STATIC);
	else
		sqlite3_bind_int64(s, 2, v);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : sql_err(cat, rc);
}

int catalog_check_device(struct catalog *cat, struct catalog_identity *id, char *err, size_t errlen)
{
	char k[96];
	int64_t idx, bs, size, rec_id;
	int ret = 0;
	pthread_mutex_lock(&cat->lock);
	id->recorded_size = 0;
	snprintf(k, sizeof k, "device.%s.index", id->name);
	if (meta_int(cat->db, k, &idx)) {
		id->recorded = -1;
		goto out;
	}
	id->recorded = (int)idx;
	snprintf(k, sizeof k, "device.%s.block_size", id->name);
	if (meta_int(cat->db, k, &bs) == 0 && (uint64_t)bs != id->block_size) {
		snprintf(err, errlen,
			 "device '%s': the catalog's extents on it are in blocks of %lld bytes but "
			 "[device \"%s\"] block_size is %u; use the same block size",
			 id->name, (long long)bs, id->name, id->block_size);
		ret = -EINVAL;
		goto out;
	}
	snprintf(k, sizeof k, "device.%s.device_size", id->name);
	if (meta_int(cat->db, k, &size) == 0)
		id->recorded_size = (uint64_t)size;
	snprintf(k, sizeof k, "device.%s.backing_id", id->name);
	bool have_id = meta_int(cat->db, k, &rec_id) == 0;
	snprintf(k, sizeof k, "device.%s.backing_path", id->name);
	if (have_id && (uint64_t)rec_id != id->backing_id &&
	    !meta_text_is(cat->db, k, id->backing_path)) {
		char *rec_path = meta_text(cat->db, k);
		snprintf(err, errlen,
			 "device '%s': backing %s is not the one this catalog records for it (%s); "
			 "give that backing, or another catalog (meta=FILE) for this one",
			 id->name, id->backing_path, rec_path ? rec_path : "(unknown)");
		free(rec_path);
		ret = -EINVAL;
	}
out:
	pthread_mutex_unlock(&cat->lock);
	return ret;
}

int catalog_recorded_devices(struct catalog *cat,
			     int (*fn)(void *opaque, const char *name, unsigned index,
				       const char *backing_path, uint64_t used),
			     void *opaque)
{
	sqlite3_stmt *s;
	int ret = 0, rc;
	pthread_mutex_lock(&cat->lock);
	/* device.NAME.index rows, with the backing and the bytes the device's extents and gaps
	 * hold. */
	rc = sqlite3_prepare_v2(
	    cat->db,
	    "SELECT substr(m.key, 8, length(m.key) - 13), m.value, "
	    "(SELECT value FROM meta WHERE key = 'device.' || substr(m.key, 8, length(m.key) - 13) "
	    "|| '.backing_path'), "
	    "(SELECT coalesce(sum(length), 0) FROM extent WHERE dev = m.value) + "
	    "(SELECT coalesce(sum(length), 0) FROM gap WHERE dev = m.value) "
	    "FROM meta m WHERE m.key LIKE 'device.%.index'",
	    -1, &s, NULL);
	if (rc != SQLITE_OK) {
		ret = sql_err(cat, rc);
		pthread_mutex_unlock(&cat->lock);
		return ret;
	}
	struct rec {
		char *name, *path;
		unsigned index;
		uint64_t used;
	} *v = NULL;
	size_t n = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct rec *nv = realloc(v, (n + 1) * sizeof *v);
		if (!nv) {
			ret = -ENOMEM;
			break;
		}
		v = nv;
		const unsigned char *path = sqlite3_column_text(s, 2);
		v[n].name = strdup((const char *)sqlite3_column_text(s, 0));
		v[n].path = strdup(path ? (const char *)path : "(unknown)");
		v[n].index = (unsigned)sqlite3_column_int64(s, 1);
		v[n].used = (uint64_t)sqlite3_column_int64(s, 3);
		n++;
		if (!v[n - 1].name || !v[n - 1].path) {
			ret = -ENOMEM;
			break;
		}
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sql_err(cat, rc);
	sqlite3_finalize(s);
	pthread_mutex_unlock(&cat->lock);
	/* @fn runs without the lock: it may call back into the catalog. */
	for (size_t i = 0; i < n; i++) {
		if (!ret)
			ret = fn(opaque, v[i].name, v[i].index, v[i].path, v[i].used);
		free(v[i].name);
		free(v[i].path);
	}
	free(v);
	return ret;
}

int catalog_file_devices(struct catalog *cat, int (*fn)(void *opaque, uint64_t ino, unsigned dev),
			 void *opaque)
{
	sqlite3_stmt *s;
	int ret = 0, rc;
	struct pair {
		uint64_t ino;
		unsigned dev;
	} *v = NULL;
	size_t n = 0;
	pthread_mutex_lock(&cat->lock);
	rc = sqlite3_prepare_v2(cat->db,
				"SELECT DISTINCT ino, dev FROM extent WHERE ino NOT IN "
				"(SELECT ino FROM orphan)",
				-1, &s, NULL);
	if (rc != SQLITE_OK) {
		ret = sql_err(cat, rc);
		pthread_mutex_unlock(&cat->lock);
		return ret;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct pair *nv = realloc(v, (n + 1) * sizeof *v);
		if (!nv) {
			ret = -ENOMEM;
			break;
		}
		v = nv;
		v[n].ino = (uint64_t)sqlite3_column_int64(s, 0);
		v[n++].dev = (unsigned)sqlite3_column_int64(s, 1);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sql_err(cat, rc);
	sqlite3_finalize(s);
	pthread_mutex_unlock(&cat->lock);
	for (size_t i = 0; i < n && !ret; i++)
		ret = fn(opaque, v[i].ino, v[i].dev);
	free(v);
	return ret;
}

int catalog_subtree_devices(struct catalog *cat, uint64_t ino,
			    int (*fn)(void *opaque, const char *relpath, unsigned dev),
			    void *opaque)
{
	sqlite3_stmt *s;
	int ret = 0, rc;
	char **paths = NULL;
	unsigned *devs = NULL;
	size_t n = 0;
	pthread_mutex_lock(&cat->lock);
	rc = sqlite3_prepare_v2(
	    cat->db,
	    "WITH RECURSIVE t(ino, path) AS (SELECT ?1, '' UNION ALL SELECT d.ino, CASE t.path "
	    "WHEN '' THEN d.name ELSE t.path || '/' || d.name END FROM dirent d JOIN t ON "
	    "d.parent = t.ino) SELECT path, dev FROM (SELECT t.path AS path, (SELECT e.dev FROM "
	    "extent e WHERE e.ino = t.ino LIMIT 1) AS dev FROM t) WHERE dev IS NOT NULL",
	    -1, &s, NULL);
	if (rc != SQLITE_OK) {
		ret = sql_err(cat, rc);
		pthread_mutex_unlock(&cat->lock);
		return ret;
	}
	sqlite3_bind_int64(s, 1, (int64_t)ino);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		char **np = realloc(paths, (n + 1) * sizeof *np);
		if (np)
			paths = np;
		unsigned *nd = np ? realloc(devs, (n + 1) * sizeof *nd) : NULL;
		if (nd)
			devs = nd;
		if (!np || !nd || !(paths[n] = strdup((const char *)sqlite3_column_text(s, 0)))) {
			ret = -ENOMEM;
			break;
		}
		devs[n++] = (unsigned)sqlite3_column_int64(s, 1);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sql_err(cat, rc);
	sqlite3_finalize(s);
	pthread_mutex_unlock(&cat->lock);
	for (size_t i = 0; i < n; i++) {
		if (!ret)
			ret = fn(opaque, paths[i], devs[i]);
		free(paths[i]);
	}
	free(paths);
	free(devs);
	return ret;
}

/* Records named device @id and renumbers its rows from its recorded number (under the lock, in a
 * transaction). */
static int adopt_device(struct catalog *cat, const struct catalog_identity *id)
{
	char k[96];
	int err;
	snprintf(k, sizeof k, "device.%s.index", id->name);
	err = meta_put(cat, k, NULL, id->index);
	snprintf(k, sizeof k, "device.%s.backing_path", id->name);
	if (!err)
		err = meta_put(cat, k, id->backing_path, 0);
	snprintf(k, sizeof k, "device.%s.backing_id", id->name);
	if (!err)
		err = meta_put(cat, k, NULL, (int64_t)id->backing_id);
	snprintf(k, sizeof k, "device.%s.block_size", id->name);
	if (!err)
		err = meta_put(cat, k, NULL, id->block_size);
	snprintf(k, sizeof k, "device.%s.device_size", id->name);
	if (!err)
		err = meta_put(cat, k, NULL, (int64_t)id->device_size);
	return err;
}

int catalog_adopt(struct catalog *cat, const struct catalog_identity *ids, unsigned n)
{
	const struct catalog_identity *id = &ids[0];
	char sql[512];
	/* A daemon killed with files unlinked but open leaves their inodes
	 * without a name: nothing can reach them, so they go now. */
	snprintf(sql, sizeof sql,
		 "UPDATE meta SET value = %llu WHERE key = 'device_size';"
		 "DELETE FROM extent WHERE ino IN (SELECT ino FROM orphan);"
		 "DELETE FROM gap WHERE ino IN (SELECT ino FROM orphan);"
		 "DELETE FROM xattr WHERE ino IN (SELECT ino FROM orphan);"
		 "DELETE FROM inode WHERE ino IN (SELECT ino FROM orphan);",
		 (unsigned long long)id->device_size);
	pthread_mutex_lock(&cat->lock);
	/* A version upgrade begun at open commits with the rest. */
	int err = cat->upgrading ? 0 : begin(cat);
	cat->upgrading = false;
	if (!err)
		err = exec(cat, sql);
	if (!err)
		err = meta_put(cat, "backing_path", id->backing_path, 0);
	if (!err)
		err = meta_put(cat, "backing_id", NULL, (int64_t)id->backing_id);
	/*
	 * Renumbering: one UPDATE per table with a CASE over every device
	 * that moves, so that two devices swapping numbers never meet.  The
	 * devices the mount does not have are forgotten first (the mount
	 * refuses a catalog where such a device holds extents).
	 */
	char *cases = NULL;
	size_t clen = 0;
	FILE *cf = err ? NULL : open_memstream(&cases, &clen);
	if (!err && !cf)
		err = -ENOMEM;
	bool moves = false;
	if (!err)
		err = exec(cat, "DELETE FROM meta WHERE key LIKE 'device.%'");
	for (unsigned i = 1; i < n && !err; i++) {
		if (ids[i].recorded >= 0 && (unsigned)ids[i].recorded != ids[i].index) {
			fprintf(cf, " WHEN %d THEN %u", ids[i].recorded, ids[i].index);
			moves = true;
		}
		err = adopt_device(cat, &ids[i]);
	}
	if (cf && fclose(cf) && !err)
		err = -ENOMEM;
	if (!err && moves) {
		char *upd;
		if (asprintf(&upd,
			     "UPDATE extent SET dev = CASE dev%s ELSE dev END;"
			     "UPDATE gap SET dev = CASE dev%s ELSE dev END;",
			     cases, cases) < 0)
			err = -ENOMEM;
		else {
			err = exec(cat, upd);
			free(upd);
		}
	}
	free(cases);
	err = end(cat, err);
	if (!err)
		err = count_inodes(cat); /* the orphans are gone */
	pthread_mutex_unlock(&cat->lock);
	return err;
}

uint64_t catalog_inode_count(struct catalog *cat)
{
	pthread_mutex_lock(&cat->lock);
	uint64_t n = cat->inodes;
	pthread_mutex_unlock(&cat->lock);
	return n;
}
