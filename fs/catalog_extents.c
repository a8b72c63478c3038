/*
 * The catalog's extents and gaps: a file's extent map and pattern gaps
 * loaded and stored (with its inode row, in one transaction), the runs in
 * use on a device, files past a device's end, and the counts over them
 * (inodes and extents, reserved bytes, the layout score, mapped bytes).
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
#include "layout_score.h"

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

typedef void (*file_extents_fn)(void *ctx, unsigned dev, const struct layout_extent *v, size_t n);

/*
 * The catalog's extents file by file: calls @fn with each file's extents
 * sorted by logical offset, pieces of one allocation extent split by state
 * joined into one.  @per_device: one call per file and device (else one
 * per file, its devices' extents together in logical order; @dev is then
 * the last extent's); @written_only: pieces allocated and never written
 * are left out.  @fn runs under the catalog's lock.  @return 0, -ENOMEM,
 * -EIO.
 */
static int file_extents(struct catalog *cat, bool per_device, bool written_only,
			file_extents_fn fn, void *ctx)
{
	struct layout_extent *v = NULL;
	size_t n = 0, cap = 0;
	int64_t cur = -1, cur_dev = -1;
	sqlite3_stmt *s;
	int err = 0, rc;

	pthread_mutex_lock(&cat->lock);
	if (sqlite3_prepare_v2(cat->db,
			       per_device ? "SELECT ino, dev, logical, device, length, flags "
					    "FROM extent ORDER BY ino, dev, logical"
					  : "SELECT ino, dev, logical, device, length, flags "
					    "FROM extent ORDER BY ino, logical",
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

		if (written_only && (flags & EXTENT_UNWRITTEN))
			continue;
		if (ino != cur || (per_device && dev != cur_dev)) {
			if (n)
				fn(ctx, (unsigned)cur_dev, v, n);
			n = 0;
			cur = ino;
		}
		cur_dev = dev;
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
	if (err == 0 && n)
		fn(ctx, (unsigned)cur_dev, v, n);
	sqlite3_finalize(s);
	pthread_mutex_unlock(&cat->lock);
	free(v);
	return err;
}

struct layout_stats_ctx {
	uint64_t block_size;
	struct layout_stats *out;
};

/* Scores the @n extents of one file at @v and adds them to the total. */
static void add_file_layout(void *ctx, unsigned dev, const struct layout_extent *v, size_t n)
{
	struct layout_stats_ctx *c = ctx;
	struct layout_stats one;

	(void)dev;
	layout_score(v, n, c->block_size, &one);
	layout_stats_add(c->out, &one);
}

int catalog_layout_stats(struct catalog *cat, uint64_t block_size, struct layout_stats *out)
{
	struct layout_stats_ctx c = {block_size, out};

	*out = (struct layout_stats){0};
	return file_extents(cat, false, false, add_file_layout, &c);
}

int catalog_file_extents(struct catalog *cat, file_extents_fn fn, void *ctx)
{
	return file_extents(cat, true, true, fn, ctx);
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
