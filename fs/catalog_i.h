/*
 * Internals of the catalog (catalog*.c): the connection and its prepared
 * statements, and the small helpers every part uses.  The catalog's parts:
 *   catalog.c          schema, open (checks and version upgrade), close, sync
 *   catalog_inode.c    inode rows, directory entries, symlinks, xattrs
 *   catalog_extents.c  extents and gaps, and what is counted over them
 *   catalog_devices.c  the devices' meta rows, adoption, and subtree walks
 * Not for callers outside them: the interface is catalog.h.
 */
#ifndef SCATTERFS_CATALOG_I_H
#define SCATTERFS_CATALOG_I_H

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog.h"
#include "catalog_vfs.h"
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

static inline int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * (int64_t)NS_PER_S + t->tv_nsec;
}

static inline struct timespec ns_ts(int64_t ns)
{
	struct timespec t = {.tv_sec = ns / (int64_t)NS_PER_S, .tv_nsec = ns % (int64_t)NS_PER_S};
	if (t.tv_nsec < 0) {
		t.tv_nsec += NS_PER_S;
		t.tv_sec--;
	}
	return t;
}

/* Prepared statement @id, reset and unbound; caller holds cat->lock. */
static inline sqlite3_stmt *stmt(struct catalog *cat, enum stmt_id id)
{
	sqlite3_stmt *s = cat->st[id];
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return s;
}

static inline int sql_err(struct catalog *cat, int rc)
{
	if (rc == SQLITE_CONSTRAINT)
		return -EEXIST;
	if (rc == SQLITE_FULL)
		return -ENOSPC;
	if (!catalog_vfs_crashed()) /* after a simulated power failure: expected */
		fprintf(stderr, "scatterfs: catalog: %s\n", sqlite3_errmsg(cat->db));
	return -EIO;
}

/* Runs a statement that returns no rows. */
static inline int step_done(struct catalog *cat, sqlite3_stmt *s)
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

static inline int exec(struct catalog *cat, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(cat->db, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		if (!catalog_vfs_crashed()) /* after a simulated power failure: expected */
			fprintf(stderr, "scatterfs: catalog: %s: %s\n", sql, msg ? msg : "?");
		sqlite3_free(msg);
		return rc == SQLITE_FULL ? -ENOSPC : -EIO;
	}
	return 0;
}

/* Sets cat->inodes from the inode table; caller holds cat->lock (or owns @cat). */
static inline int count_inodes(struct catalog *cat)
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

static inline int begin(struct catalog *cat)
{
	return exec(cat, "BEGIN IMMEDIATE");
}

static inline int end(struct catalog *cat, int err)
{
	if (err) {
		exec(cat, "ROLLBACK");
		return err;
	}
	cat->dirty = true;
	cat->commits++;
	return exec(cat, "COMMIT");
}

static inline int meta_int(sqlite3 *db, const char *key, int64_t *v)
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
static inline char *meta_text(sqlite3 *db, const char *key)
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

static inline int meta_text_is(sqlite3 *db, const char *key, const char *want)
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

#endif
