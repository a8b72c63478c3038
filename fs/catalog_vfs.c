/*
 * The catalog's SQLite files under a simulated power failure: a VFS shim
 * ("scatterfs") over the default unix VFS that every catalog opens its
 * files through.  It passes every call on; once catalog_vfs_track() is
 * called (a mount with [device] volatile = true) it also keeps, for each
 * open file, the file's size at its last xSync and an undo log (undo.h) of
 * the bytes below that size overwritten since then.  catalog_vfs_crash()
 * truncates each file back to its last synced size and writes the old
 * bytes back, then fails every later write: what SQLite never fsynced is
 * gone, as at a power failure, and SQLite's own recovery (the WAL up to
 * its last valid commit frame) finds what was durable.  The -shm index is
 * rebuilt by the next opener (SQLite's unix VFS truncates it when no
 * other process has it open).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_vfs.h"
#include "undo.h"

struct vfile {
	sqlite3_file base; /* our methods */
	struct vfile *next;
	uint64_t synced_size;
	struct undo u;
	sqlite3_file *real; /* the unix VFS's file, right after this struct */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct vfile *files; /* open files, under mu */
static bool tracking, crashed;
static sqlite3_vfs *unix_vfs;
static sqlite3_vfs shim;
static sqlite3_io_methods methods;
static _Atomic(int (*)(void *)) before_sync;
static _Atomic(void *) before_sync_ctx;

static int real_read(void *ctx, void *buf, uint64_t len, uint64_t off)
{
	sqlite3_file *f = ctx;
	int rc = f->pMethods->xRead(f, buf, (int)len, (sqlite3_int64)off);
	return rc == SQLITE_OK || rc == SQLITE_IOERR_SHORT_READ ? 0 : -EIO;
}

static int real_write(void *ctx, const void *buf, uint64_t len, uint64_t off)
{
	sqlite3_file *f = ctx;
	return f->pMethods->xWrite(f, buf, (int)len, (sqlite3_int64)off) == SQLITE_OK ? 0 : -EIO;
}

static uint64_t real_size(sqlite3_file *f)
{
	sqlite3_int64 n = 0;
	return f->pMethods->xFileSize(f, &n) == SQLITE_OK && n > 0 ? (uint64_t)n : 0;
}

/* Saves what a change of [off, end) overwrites below the synced size. */
static int note(struct vfile *v, uint64_t off, uint64_t end)
{
	if (crashed)
		return SQLITE_IOERR;
	if (!tracking || off >= v->synced_size)
		return SQLITE_OK;
	if (end > v->synced_size)
		end = v->synced_size;
	return undo_note(&v->u, off, end - off, real_read, v->real, 0, UINT64_MAX, NULL, false)
		   ? SQLITE_IOERR
		   : SQLITE_OK;
}

static int x_close(sqlite3_file *f)
{
	struct vfile *v = (struct vfile *)f;
	pthread_mutex_lock(&mu);
	for (struct vfile **p = &files; *p; p = &(*p)->next)
		if (*p == v) {
			*p = v->next;
			break;
		}
	undo_free(&v->u);
	pthread_mutex_unlock(&mu);
	return v->real->pMethods->xClose(v->real);
}

static int x_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
	struct vfile *v = (struct vfile *)f;
	/* After the power failure the files hold their last synced state,
	 * which SQLite's page cache no longer matches: nothing is read. */
	if (catalog_vfs_crashed())
		return SQLITE_IOERR_READ;
	return v->real->pMethods->xRead(v->real, buf, n, off);
}

static int x_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
	struct vfile *v = (struct vfile *)f;
	pthread_mutex_lock(&mu);
	int rc = note(v, (uint64_t)off, (uint64_t)off + (uint64_t)n);
	if (rc == SQLITE_OK)
		rc = v->real->pMethods->xWrite(v->real, buf, n, off);
	pthread_mutex_unlock(&mu);
	return rc;
}

static int x_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct vfile *v = (struct vfile *)f;
	pthread_mutex_lock(&mu);
	int rc = note(v, (uint64_t)size, v->synced_size);
	if (rc == SQLITE_OK)
		rc = v->real->pMethods->xTruncate(v->real, size);
	pthread_mutex_unlock(&mu);
	return rc;
}

static int x_sync(sqlite3_file *f, int flags)
{
	struct vfile *v = (struct vfile *)f;
	/* What the rows point at first (catalog_vfs_before_sync()); not under mu. */
	int (*fn)(void *) = atomic_load(&before_sync);
	if (catalog_vfs_crashed())
		return SQLITE_IOERR;
	if (fn && fn(atomic_load(&before_sync_ctx)))
		return SQLITE_IOERR_FSYNC;
	pthread_mutex_lock(&mu);
	int rc = crashed ? SQLITE_IOERR : v->real->pMethods->xSync(v->real, flags);
	if (rc == SQLITE_OK && tracking) {
		undo_clear(&v->u);
		v->synced_size = real_size(v->real);
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

static int x_file_size(sqlite3_file *f, sqlite3_int64 *n)
{
	struct vfile *v = (struct vfile *)f;
	return v->real->pMethods->xFileSize(v->real, n);
}

#define PASS(name, sig, args)                                                                      \
	static int x_##name sig                                                                    \
	{                                                                                          \
		sqlite3_file *r = ((struct vfile *)f)->real;                                       \
		return r->pMethods->x##name args;                                                  \
	}
PASS(Lock, (sqlite3_file * f, int l), (r, l))
PASS(Unlock, (sqlite3_file * f, int l), (r, l))
PASS(CheckReservedLock, (sqlite3_file * f, int *out), (r, out))
PASS(FileControl, (sqlite3_file * f, int op, void *arg), (r, op, arg))
PASS(SectorSize, (sqlite3_file * f), (r))
PASS(DeviceCharacteristics, (sqlite3_file * f), (r))
PASS(ShmMap, (sqlite3_file * f, int pg, int sz, int ext, void volatile **pp), (r, pg, sz, ext, pp))
PASS(ShmLock, (sqlite3_file * f, int off, int n, int flags), (r, off, n, flags))
PASS(ShmUnmap, (sqlite3_file * f, int del), (r, del))
PASS(Fetch, (sqlite3_file * f, sqlite3_int64 off, int n, void **pp), (r, off, n, pp))
PASS(Unfetch, (sqlite3_file * f, sqlite3_int64 off, void *p), (r, off, p))

static void x_ShmBarrier(sqlite3_file *f)
{
	sqlite3_file *r = ((struct vfile *)f)->real;
	r->pMethods->xShmBarrier(r);
}

static int x_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
	struct vfile *v = (struct vfile *)f;
	memset(v, 0, sizeof *v);
	v->real = (sqlite3_file *)(v + 1);
	int rc = unix_vfs->xOpen(unix_vfs, name, v->real, flags, out);
	if (rc != SQLITE_OK || !v->real->pMethods) {
		v->base.pMethods = NULL;
		return rc;
	}
	/* methods: as many as the unix VFS's version has */
	methods.iVersion = v->real->pMethods->iVersion;
	v->base.pMethods = &methods;
	pthread_mutex_lock(&mu);
	v->synced_size = real_size(v->real);
	v->next = files;
	files = v;
	pthread_mutex_unlock(&mu);
	return rc;
}

static int register_result;

static void register_once(void)
{
	int result = 0;
	{
		unix_vfs = sqlite3_vfs_find(NULL);
		if (!unix_vfs) {
			register_result = -ENOENT;
			return;
		}
		shim = *unix_vfs;
		shim.zName = CATALOG_VFS_NAME;
		shim.szOsFile = (int)sizeof(struct vfile) + unix_vfs->szOsFile;
		shim.xOpen = x_open;
		shim.pNext = NULL;
		methods = (sqlite3_io_methods){
		    .xClose = x_close,
		    .xRead = x_read,
		    .xWrite = x_write,
		    .xTruncate = x_truncate,
		    .xSync = x_sync,
		    .xFileSize = x_file_size,
		    .xLock = x_Lock,
		    .xUnlock = x_Unlock,
		    .xCheckReservedLock = x_CheckReservedLock,
		    .xFileControl = x_FileControl,
		    .xSectorSize = x_SectorSize,
		    .xDeviceCharacteristics = x_DeviceCharacteristics,
		    .xShmMap = x_ShmMap,
		    .xShmLock = x_ShmLock,
		    .xShmBarrier = x_ShmBarrier,
		    .xShmUnmap = x_ShmUnmap,
		    .xFetch = x_Fetch,
		    .xUnfetch = x_Unfetch,
		};
		result = sqlite3_vfs_register(&shim, 0) == SQLITE_OK ? 0 : -ENOMEM;
	}
	register_result = result;
}

int catalog_vfs_register(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, register_once);
	return register_result;
}

void catalog_vfs_track(void)
{
	pthread_mutex_lock(&mu);
	if (!tracking)
		for (struct vfile *v = files; v; v = v->next) {
			undo_clear(&v->u);
			v->synced_size = real_size(v->real);
		}
	tracking = true;
	pthread_mutex_unlock(&mu);
}

uint64_t catalog_vfs_unsynced(void)
{
	uint64_t n = 0;
	pthread_mutex_lock(&mu);
	for (struct vfile *v = files; v; v = v->next) {
		uint64_t size = real_size(v->real);
		n += v->u.bytes + (size > v->synced_size ? size - v->synced_size : 0);
	}
	pthread_mutex_unlock(&mu);
	return n;
}

int catalog_vfs_crash(void)
{
	int err = 0;
	pthread_mutex_lock(&mu);
	if (tracking && !crashed)
		for (struct vfile *v = files; v; v = v->next) {
			sqlite3_file *r = v->real;
			if (r->pMethods->xTruncate(r, (sqlite3_int64)v->synced_size) != SQLITE_OK)
				err = -EIO;
			if (undo_apply(&v->u, real_write, r, NULL, 0, NULL, NULL))
				err = -EIO;
			if (r->pMethods->xSync(r, SQLITE_SYNC_NORMAL) != SQLITE_OK)
				err = -EIO;
		}
	__atomic_store_n(&crashed, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&mu);
	return err;
}

void catalog_vfs_before_sync(int (*fn)(void *ctx), void *ctx)
{
	atomic_store(&before_sync_ctx, ctx);
	atomic_store(&before_sync, fn);
}

bool catalog_vfs_crashed(void)
{
	return __atomic_load_n(&crashed, __ATOMIC_ACQUIRE);
}
