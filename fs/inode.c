/*
 * The in-memory inode table: one struct inode per inode the kernel knows
 * (nlookup > 0) or has open, in a uthash table keyed by inode number.
 * Attributes and extent maps live here between catalog flushes; the
 * catalog stays the source of truth for the namespace.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "sfs.h"

struct inode *inode_find(struct sfs *fs, uint64_t ino)
{
	struct inode *in;
	pthread_mutex_lock(&fs->itable_lock);
	HASH_FIND(hh, fs->itable, &ino, sizeof ino, in);
	pthread_mutex_unlock(&fs->itable_lock);
	return in;
}

struct inode *inode_get(struct sfs *fs, uint64_t ino, uint64_t nlookup, int *err)
{
	struct inode *in, *fresh = NULL;
	pthread_mutex_lock(&fs->itable_lock);
	HASH_FIND(hh, fs->itable, &ino, sizeof ino, in);
	if (in) {
		in->nlookup += nlookup;
		pthread_mutex_unlock(&fs->itable_lock);
		return in;
	}
	pthread_mutex_unlock(&fs->itable_lock);

	fresh = calloc(1, sizeof *fresh);
	if (!fresh) {
		*err = -ENOMEM;
		return NULL;
	}
	*err = catalog_get_attr(fs->cat, ino, &fresh->attr);
	if (*err) {
		free(fresh);
		return NULL;
	}
	fresh->stored_size = fresh->attr.size;
	fresh->data_seq = catalog_commit_seq(fs->cat);
	if (S_ISREG(fresh->attr.mode) &&
	    (*err = catalog_mapped_bytes(fs->cat, ino, &fresh->catalog_mapped))) {
		free(fresh);
		return NULL;
	}
	fresh->ino = ino;
	/*
	 * Writers first: glibc's default lets readers in while a writer
	 * waits, and readers of one file under the disk model hold the lock
	 * through their modelled wait, so with a few of them overlapping an
	 * open, a write or a read of .scatterfs/stats (which flushes every
	 * inode) waited for as long as the reads went on.  No thread takes an
	 * inode's read lock twice, which this kind requires.
	 */
	pthread_rwlockattr_t attr;
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&fresh->lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	extmap_init(&fresh->map);
	fresh->dirty_from = UINT64_MAX;
	fresh->params = &fs->cfg.defaults;

	pthread_mutex_lock(&fs->itable_lock);
	HASH_FIND(hh, fs->itable, &ino, sizeof ino, in);
	if (!in) {
		in = fresh;
		fresh = NULL;
		HASH_ADD(hh, fs->itable, ino, sizeof in->ino, in);
	}
	in->nlookup += nlookup;
	pthread_mutex_unlock(&fs->itable_lock);
	if (fresh) { /* another thread loaded it first */
		pthread_rwlock_destroy(&fresh->lock);
		free(fresh);
	}
	return in;
}

void inode_set_path(struct sfs *fs, struct inode *in, const char *parent_path, const char *name)
{
	char *p;
	if (!parent_path || !*parent_path)
		p = strdup(name);
	else if (asprintf(&p, "%s/%s", parent_path, name) < 0)
		p = NULL;
	if (!p)
		return;
	inode_wrlock(in);
	free(in->path);
	in->path = p;
	in->params = config_for_path(&fs->cfg, p);
	pthread_rwlock_unlock(&in->lock);
}

int inode_load_map(struct sfs *fs, struct inode *in)
{
	if (in->map_loaded)
		return 0;
	int err = catalog_load_extents(fs->cat, in->ino, &in->map, &in->gaps);
	if (err == -EEXIST) {
		fprintf(stderr, "scatterfs: catalog: inode %llu has overlapping extents\n",
			(unsigned long long)in->ino);
		err = -EIO;
	}
	if (err) {
		extmap_release(&in->map);
		run_vec_release(&in->gaps);
		return err;
	}
	in->map_loaded = true;
	return 0;
}

int inode_store(struct sfs *fs, struct inode *in, bool attrs, bool durable)
{
	bool a = attrs && in->attr_dirty, x = inode_extents_dirty(in);
	if (!a && !x)
		return durable ? catalog_sync_upto(fs->cat, attrs ? UINT64_MAX : in->data_seq) : 0;
	int err = catalog_store_inode(fs->cat, a ? &in->attr : NULL, in->ino, x ? &in->map : NULL,
				      in->dirty_from, x && in->gaps_dirty ? &in->gaps : NULL, durable);
	if (err)
		return err;
	if (a) {
		in->attr_dirty = false;
		if (in->stored_size != in->attr.size)
			in->data_seq = catalog_commit_seq(fs->cat);
		in->stored_size = in->attr.size;
	}
	if (x) {
		in->dirty_from = UINT64_MAX;
		in->gaps_dirty = false;
		in->data_seq = catalog_commit_seq(fs->cat);
	}
	return 0;
}

int inode_flush(struct sfs *fs, struct inode *in)
{
	return inode_store(fs, in, true, false);
}

void sfs_defer_free(struct device *d, uint64_t off, uint64_t len, const struct freed_from *from)
{
	struct freed_vec *v = &d->pending_free;
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 16;
		struct freed_run *nv = realloc(v->v, cap * sizeof *nv);
		if (!nv) {
			/* No memory to remember it: leak the run until the next mount (the
			 * catalog rebuilds the allocator) rather than risk exposing it. */
			fprintf(stderr,
				"scatterfs: out of memory: %llu bytes at %llu of device %s stay used "
				"until remount\n",
				(unsigned long long)len, (unsigned long long)off, d->name);
			return;
		}
		v->v = nv;
		v->cap = cap;
	}
	struct freed_run *r = &v->v[v->n++];
	r->device = off;
	r->length = len;
	r->from = from ? *from : (struct freed_from){DEV_OP_NONE, 0, NULL};
	if (r->from.path)
		r->from.path->refs++;
	d->pending_free_bytes += len;
}

/* A pending run is gone: its share of the path goes (under alloc_lock). */
static void freed_put(struct freed_name *name)
{
	if (name && --name->refs == 0)
		free(name);
}

void sfs_pending_release(struct device *d)
{
	for (size_t i = 0; i < d->pending_free.n; i++)
		freed_put(d->pending_free.v[i].from.path);
	free(d->pending_free.v);
	d->pending_free = (struct freed_vec){0};
}

/*
 * What the runs freed by one call on @in carry: @op, its inode number and
 * a copy of its path (NULL when it has none, or without memory: a trim
 * then names no path).  freed_end() drops the copy if no run took it.
 */
static struct freed_from freed_begin(const struct inode *in, enum dev_op op)
{
	struct freed_from f = {op, in->ino, NULL};
	if (in->path) {
		size_t n = strlen(in->path) + 1;
		f.path = malloc(sizeof *f.path + n);
		if (f.path) {
			f.path->refs = 0;
			memcpy(f.path->s, in->path, n);
		}
	}
	return f;
}

/* Under alloc_lock, after the runs were deferred. */
static void freed_end(struct freed_from *f)
{
	if (f->path && f->path->refs == 0)
		free(f->path);
	f->path = NULL;
}

static void free_run(struct sfs *fs, const struct freed_from *from, unsigned dev, uint64_t device,
		     uint64_t length)
{
	sfs_defer_free(fs->dev[dev], device, length, from);
}

/*
 * Returns to @d's allocator the runs pending on it whose number since the
 * mount is below @upto, those not released yet: a sync that overlapped
 * this one may have released some, or all, of them already.  Each run is
 * trimmed first (dev_trim(): the catalog that no longer points at it is
 * durable now), under the allocator's lock, so that no write of a file
 * that gets the space next can come before its trim.
 */
static void release_pending(struct device *d, uint64_t upto)
{
	struct dev_req tr;
	dev_req_init(&tr, mono_ns());
	pthread_mutex_lock(&d->alloc_lock);
	size_t n = upto > d->pending_released ? (size_t)(upto - d->pending_released) : 0;
	if (n > d->pending_free.n)
		n = d->pending_free.n;
	if (n == 0) { /* nothing pending: pending_free.v may be NULL (memmove must not see it) */
		pthread_mutex_unlock(&d->alloc_lock);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct freed_run *r = &d->pending_free.v[i];
		dev_req_file(&tr, r->from.op, r->from.ino, r->from.path ? r->from.path->s : NULL);
		int e = dev_trim(d, &tr, r->length, r->device);
		if (e)
			fprintf(stderr, "scatterfs: device %s: trim of %llu+%llu failed: %s\n",
				d->name, (unsigned long long)r->device,
				(unsigned long long)r->length, strerror(-e));
		e = devalloc_free(d->alloc, r->device, r->length);
		if (e)
			fprintf(stderr, "scatterfs: internal error: freeing %llu+%llu on %s: %d\n",
				(unsigned long long)r->device, (unsigned long long)r->length,
				d->name, e);
		d->pending_free_bytes -= r->length;
		freed_put(r->from.path);
	}
	memmove(d->pending_free.v, d->pending_free.v + n,
		(d->pending_free.n - n) * sizeof *d->pending_free.v);
	d->pending_free.n -= n;
	d->pending_released += n;
	pthread_mutex_unlock(&d->alloc_lock);
}

int sfs_sync(struct sfs *fs, struct inode *held)
{
	uint64_t upto[SFS_MAX_DEVICES];
	for (unsigned i = 0; i < fs->ndev; i++) {
		pthread_mutex_lock(&fs->dev[i]->alloc_lock);
		upto[i] = fs->dev[i]->pending_released + fs->dev[i]->pending_free.n;
		pthread_mutex_unlock(&fs->dev[i]->alloc_lock);
	}
	int err = inode_flush_all(fs, false, held);
	if (!err)
		err = catalog_sync(fs->cat);
	if (err)
		return err;
	for (unsigned i = 0; i < fs->ndev; i++)
		release_pending(fs->dev[i], upto[i]);
	return 0;
}

int sfs_flush_ordered(struct sfs *fs, struct dev_req *r)
{
	int err = 0;
	for (unsigned i = 0; i < fs->ndev; i++) {
		struct device *d = fs->dev[i];
		if (atomic_load(&d->new_data_gen) == atomic_load(&d->flushed_gen))
			continue;
		int e = dev_flush(d, r);
		if (e && !err)
			err = e;
	}
	return err;
}

int sfs_flush_devices(struct sfs *fs, struct device *mine, struct dev_req *r)
{
	int err = 0;
	for (unsigned i = 0; i < fs->ndev; i++) {
		int e = dev_flush(fs->dev[i], fs->dev[i] == mine ? r : NULL);
		if (e && !err)
			err = e;
	}
	return err;
}

void sfs_space(struct sfs *fs, uint64_t *total, uint64_t *free_bytes)
{
	*total = *free_bytes = 0;
	for (unsigned i = 0; i < fs->ndev; i++) {
		struct device *d = fs->dev[i];
		pthread_mutex_lock(&d->alloc_lock);
		*total += devalloc_size(d->alloc);
		*free_bytes += devalloc_free_bytes(d->alloc) + d->pending_free_bytes;
		pthread_mutex_unlock(&d->alloc_lock);
	}
}

static void *syncer_main(void *p)
{
	struct sfs *fs = p;
	pthread_mutex_lock(&fs->syncer_lock);
	while (!fs->syncer_stop) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_sec += SYNC_INTERVAL_S;
		pthread_cond_timedwait(&fs->syncer_cond, &fs->syncer_lock, &t);
		if (fs->syncer_stop)
			break;
		pthread_mutex_unlock(&fs->syncer_lock);
		/* A backing shrunk under an idle mount is reported too. */
		for (unsigned i = 0; i < fs->ndev; i++)
			dev_backing_poll(fs->dev[i]);
		/* Data first, then the catalog that points at it; under a
		 * simulated power failure only the application's syncs count. */
		if (!fs->volatile_on && sfs_flush_devices(fs, NULL, NULL) == 0)
			sfs_sync(fs, NULL);
		pthread_mutex_lock(&fs->syncer_lock);
	}
	pthread_mutex_unlock(&fs->syncer_lock);
	return NULL;
}

int sfs_syncer_start(struct sfs *fs)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&fs->syncer_lock, NULL);
	pthread_cond_init(&fs->syncer_cond, &ca);
	pthread_condattr_destroy(&ca);
	int err = pthread_create(&fs->syncer, NULL, syncer_main, fs);
	fs->syncer_running = err == 0;
	return -err;
}

void sfs_syncer_stop(struct sfs *fs)
{
	if (!fs->syncer_running)
		return;
	pthread_mutex_lock(&fs->syncer_lock);
	fs->syncer_stop = true;
	pthread_cond_signal(&fs->syncer_cond);
	pthread_mutex_unlock(&fs->syncer_lock);
	pthread_join(fs->syncer, NULL);
	fs->syncer_running = false;
}

/* What a removal from one inode's map frees. */
struct unmap_ctx {
	struct sfs *fs;
	struct inode *in;
	struct freed_from from; /* what their trims carry */
};

/*
 * Frees a run of @c->in's extents, and the pattern gap that belongs to it.
 * A gap is reserved together with its extent as one device run (extent
 * first), so the gap whose device offset is the freed run's end belongs
 * to the piece of the extent that ended there: once that piece is gone,
 * nothing of the file adjoins the gap and it is freed with it.  The search
 * starts from the newest gap because shrinking frees the extents a file
 * grew last.
 */
static void unmap_run(void *opaque, unsigned dev, uint64_t device, uint64_t length)
{
	struct unmap_ctx *c = opaque;
	struct run_vec *g = &c->in->gaps;

	sfs_defer_free(c->fs->dev[dev], device, length, &c->from);
	for (size_t i = g->n; i-- > 0;) {
		if (g->v[i].dev != dev || g->v[i].device != device + length)
			continue;
		sfs_defer_free(c->fs->dev[dev], g->v[i].device, g->v[i].length, &c->from);
		memmove(g->v + i, g->v + i + 1, (g->n - i - 1) * sizeof *g->v);
		g->n--;
		c->in->gaps_dirty = true;
		break;
	}
}

int inode_unmap(struct sfs *fs, struct inode *in, uint64_t off, uint64_t len, enum dev_op op)
{
	struct device *d = inode_device(fs, in);
	int err = 0;
	if (!len)
		return 0;
	struct unmap_ctx c = {fs, in, freed_begin(in, op)};
	pthread_mutex_lock(&d->alloc_lock);
	err = extmap_remove(&in->map, off, len, unmap_run, &c);
	freed_end(&c.from);
	pthread_mutex_unlock(&d->alloc_lock);
	if (!err && off < in->dirty_from)
		in->dirty_from = off;
	return err;
}

void inode_free_space(struct sfs *fs, struct inode *in, uint64_t from, enum dev_op op)
{
	uint64_t end = extmap_end(&in->map);
	struct device *d = inode_device(fs, in);
	if (from == 0 && in->gaps.n) {
		/* Every gap goes: no need to match them to extents one by one. */
		struct freed_from f = freed_begin(in, op);
		pthread_mutex_lock(&d->alloc_lock);
		for (size_t i = 0; i < in->gaps.n; i++)
			free_run(fs, &f, in->gaps.v[i].dev, in->gaps.v[i].device,
				 in->gaps.v[i].length);
		in->gaps_dirty = true;
		in->gaps.n = 0;
		freed_end(&f);
		pthread_mutex_unlock(&d->alloc_lock);
	}
	if (end > from && inode_unmap(fs, in, from, end - from, op) < 0)
		/* A tail is removed without splitting off a new entry, so this
		 * needs no memory; should that change, the file keeps its space. */
		fprintf(stderr, "scatterfs: out of memory: inode %llu keeps its space past %llu\n",
			(unsigned long long)in->ino, (unsigned long long)from);
}

void inode_wrlock(struct inode *in)
{
	pthread_rwlock_wrlock(&in->lock);
	pins_wait(&in->pins);
}

int inode_trywrlock(struct inode *in)
{
	int err = pthread_rwlock_trywrlock(&in->lock);
	if (!err && atomic_load(&in->pins.word)) { /* reads in flight: busy too */
		pthread_rwlock_unlock(&in->lock);
		err = EBUSY;
	}
	return err;
}

static void inode_destroy(struct sfs *fs, struct inode *in)
{
	pins_wait(&in->pins); /* nothing refers to @in: no pin can be taken */
	if (in->unlinked) {
		pthread_rwlock_wrlock(&in->lock); /* pins drained above */
		/* The catalog forgets the inode before its space may be reused. */
		bool loaded = inode_load_map(fs, in) == 0;
		catalog_delete_inode(fs->cat, in->ino);
		if (loaded)
			inode_free_space(fs, in, 0, DEV_OP_UNLINK);
		pthread_rwlock_unlock(&in->lock);
	} else {
		inode_flush(fs, in);
	}
	extmap_release(&in->map);
	run_vec_release(&in->gaps);
	pthread_rwlock_destroy(&in->lock);
	free(in->path);
	free(in);
}

/* Removes @in from the table when nothing refers to it; itable_lock held. */
static bool unhash_if_unused(struct sfs *fs, struct inode *in)
{
	if (in->nlookup || in->nopen || in->ino == FUSE_ROOT_ID)
		return false;
	HASH_DEL(fs->itable, in);
	return true;
}

void inode_forget(struct sfs *fs, struct inode *in, uint64_t n)
{
	pthread_mutex_lock(&fs->itable_lock);
	in->nlookup = n > in->nlookup ? 0 : in->nlookup - n;
	bool gone = unhash_if_unused(fs, in);
	pthread_mutex_unlock(&fs->itable_lock);
	if (gone)
		inode_destroy(fs, in);
}

void inode_open_ref(struct sfs *fs, struct inode *in)
{
	pthread_mutex_lock(&fs->itable_lock);
	in->nopen++;
	pthread_mutex_unlock(&fs->itable_lock);
}

void inode_close_ref(struct sfs *fs, struct inode *in)
{
	pthread_mutex_lock(&fs->itable_lock);
	in->nopen--;
	bool gone = unhash_if_unused(fs, in);
	pthread_mutex_unlock(&fs->itable_lock);
	if (gone)
		inode_destroy(fs, in);
}

/* Every in-memory inode, each pinned by an open reference; *n gets the count. */
static struct inode **pin_all(struct sfs *fs, size_t *n)
{
	struct inode *in, *tmp, **v;
	pthread_mutex_lock(&fs->itable_lock);
	*n = HASH_COUNT(fs->itable);
	v = malloc((*n ? *n : 1) * sizeof *v);
	size_t i = 0;
	if (v) {
		HASH_ITER(hh, fs->itable, in, tmp)
		{
			in->nopen++;
			v[i++] = in;
		}
	}
	pthread_mutex_unlock(&fs->itable_lock);
	*n = i;
	return v;
}

int inode_flush_all(struct sfs *fs, bool final, struct inode *held)
{
	size_t n;
	struct inode **v = pin_all(fs, &n);
	int err = v ? 0 : -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct inode *in = v[i];
		/* A caller holding an inode lock must not wait for another one
		 * (two such callers would deadlock): it skips busy inodes, and
		 * the flush then counts as incomplete (-EAGAIN). */
		if (in != held && held && inode_trywrlock(in)) {
			err = err ? err : -EAGAIN;
			continue;
		}
		if (in != held && !held)
			inode_wrlock(in);
		if (in->unlinked) {
			if (final) {
				/* Still open or looked up at unmount: nothing refers to it any more. */
				bool loaded = inode_load_map(fs, in) == 0;
				catalog_delete_inode(fs->cat, in->ino);
				if (loaded)
					inode_free_space(fs, in, 0, DEV_OP_UNLINK);
				in->unlinked = false;
			}
		} else {
			int e = inode_flush(fs, in);
			if (e && !err)
				err = e;
		}
		if (in != held)
			pthread_rwlock_unlock(&in->lock);
	}
	for (size_t i = 0; i < n; i++) {
		if (final) {
			pthread_mutex_lock(&fs->itable_lock);
			v[i]->nopen--;
			pthread_mutex_unlock(&fs->itable_lock);
		} else {
			inode_close_ref(fs, v[i]);
		}
	}
	free(v);
	return err;
}

void inode_rename_paths(struct sfs *fs, const char *old_path, const char *new_path)
{
	size_t n, ol = strlen(old_path);
	struct inode **v = pin_all(fs, &n);
	for (size_t i = 0; v && i < n; i++) {
		struct inode *in = v[i];
		inode_wrlock(in);
		if (in->path && strncmp(in->path, old_path, ol) == 0 && in->path[ol] == '/') {
			char *p;
			if (asprintf(&p, "%s%s", new_path, in->path + ol) >= 0) {
				free(in->path);
				in->path = p;
				in->params = config_for_path(&fs->cfg, p);
			}
		}
		pthread_rwlock_unlock(&in->lock);
	}
	for (size_t i = 0; v && i < n; i++)
		inode_close_ref(fs, v[i]);
	free(v);
}

void inode_to_stat(const struct inode *in, struct stat *st)
{
	memset(st, 0, sizeof *st);
	st->st_ino = in->ino;
	st->st_mode = in->attr.mode;
	st->st_nlink = in->attr.nlink;
	st->st_uid = in->attr.uid;
	st->st_gid = in->attr.gid;
	st->st_rdev = in->attr.rdev;
	st->st_size = (off_t)in->attr.size;
	st->st_blksize = 4096;
	uint64_t mapped = in->map_loaded ? extmap_mapped_bytes(&in->map) : in->catalog_mapped;
	st->st_blocks = (blkcnt_t)(mapped / 512);
	st->st_atim = in->attr.atime;
	st->st_mtim = in->attr.mtime;
	st->st_ctim = in->attr.ctime;
}

void inode_table_free(struct sfs *fs)
{
	struct inode *in, *tmp;
	pthread_mutex_lock(&fs->itable_lock);
	HASH_ITER(hh, fs->itable, in, tmp)
	{
		HASH_DEL(fs->itable, in);
		extmap_release(&in->map);
		run_vec_release(&in->gaps);
		pthread_rwlock_destroy(&in->lock);
		free(in->path);
		free(in);
	}
	pthread_mutex_unlock(&fs->itable_lock);
}

void inode_note_wb_error(void *ctx, uint64_t ino)
{
	struct sfs *fs = ctx;
	pthread_mutex_lock(&fs->itable_lock); /* (@in cannot leave the table meanwhile) */
	struct inode *in;
	HASH_FIND(hh, fs->itable, &ino, sizeof ino, in);
	if (in) { /* one more error, not reported yet */
		unsigned v = atomic_load(&in->wb_err);
		while (!atomic_compare_exchange_weak(&in->wb_err, &v, (v + 2) & ~1u))
			;
	}
	pthread_mutex_unlock(&fs->itable_lock);
}
