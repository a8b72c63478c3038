/*
 * The catalog's devices: each named device's meta rows (number, backing
 * path and id, block size, size), checked at mount and adopted (renumbered
 * when the sections' order changed), and the walks over files and
 * subtrees that say which device each file is on.
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
	bool other = have_id && (uint64_t)rec_id != id->backing_id &&
		     !meta_text_is(cat->db, k, id->backing_path);
	id->relocated = other && id->moved;
	if (other && !id->moved) {
		char *rec_path = meta_text(cat->db, k);
		snprintf(err, errlen,
			 "device '%s': backing %s is not the one this catalog records for it (%s); "
			 "give that backing, or another catalog (meta=FILE) for this one (backings "
			 "and catalog moved or copied together: -o moved)",
			 id->name, id->backing_path, rec_path ? rec_path : "(unknown)");
		free(rec_path);
		ret = -EINVAL;
	}
	int64_t rec_born;
	snprintf(k, sizeof k, "device.%s.backing_born_ns", id->name);
	id->recreated = !ret && id->backing_born_ns && meta_int(cat->db, k, &rec_born) == 0 &&
			rec_born != id->backing_born_ns;
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
	snprintf(k, sizeof k, "device.%s.backing_born_ns", id->name);
	if (!err && id->backing_born_ns)
		err = meta_put(cat, k, NULL, id->backing_born_ns);
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
	if (!err)
		err = id->backing_born_ns ? meta_put(cat, "backing_born_ns", NULL, id->backing_born_ns)
					  : exec(cat, "DELETE FROM meta WHERE key = 'backing_born_ns'");
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
