/*
 * The hidden control directory MOUNTPOINT/.scatterfs/: not listed by
 * readdir of the root (initdb wants an empty directory) but reachable by
 * name, read-only.
 *
 *   stats          JSON counters of the mount; opening it flushes the log
 *   config         the effective configuration as INI
 *   extents/PATH   CSV extent map of the file at PATH
 *   layout/PATH    the file's static layout: one line of layout_stats_format()
 *   control        root only (0600): one command a line, its reply read back
 *                  from the same open file (fault add|del|list, sync-report,
 *                  crash)
 *
 * Every request on a control inode, or on a name that would put something
 * into the control directory or take it out, comes here through ctl_ops
 * (the routing is dispatch.c's): whatever would change the directory or its
 * files answers EROFS, the answer a read-only mount gives.
 *
 * Inode numbers: CTL_INO_BASE + small constants for the fixed nodes, and
 * CTL_INO_BASE + EXTENTS_BIT + ino for the extents/ mirror of inode ino
 * (ino 1, the root, is extents/ itself); the layout/ mirror is the same
 * with LAYOUT_BIT.  File contents are generated at
 * open (and at getattr, for an exact st_size) and served from memory.
 */
#include <errno.h>
#include <inttypes.h>
#include <unistd.h>
#include <jansson.h>
#include <linux/posix_acl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl.h"
#include "build_config.h"
#include "catalog.h"
#include "catalog_vfs.h"
#include "dev_volatile.h"
#include "fault.h"
#include "layout_score.h"
#include "reqlog.h"
#include "sfs.h"
#include "transport.h"

#define CTL_ROOT (CTL_INO_BASE + 1)
#define CTL_STATS (CTL_INO_BASE + 2)
#define CTL_CONFIG (CTL_INO_BASE + 3)
#define CTL_CONTROL (CTL_INO_BASE + 4)
#define EXTENTS_BIT (1ull << 61)
#define CTL_EXTENTS(ino) (CTL_INO_BASE + EXTENTS_BIT + (ino))
#define LAYOUT_BIT (1ull << 60)
#define CTL_LAYOUT(ino) (CTL_INO_BASE + LAYOUT_BIT + (ino))

struct ctl_buf {
	char *data;
	size_t len;
};

/*
 * An open control file: the command bytes not yet ended by a newline, and
 * the replies not yet read.  Replies are a stream, read in order whatever
 * the read's offset (the writes moved the file offset past them), and a
 * read with nothing pending returns 0 bytes, so `cat <&3` ends.
 */
struct ctl_chan {
	pthread_mutex_t lock;
	char *cmd;
	size_t cmd_len;
	char *reply; /* [reply_pos, reply_len) not read yet */
	size_t reply_len, reply_pos;
	bool overlong; /* the line in cmd grew past CTL_LINE_MAX: refused at its newline */
};

/* A command line's limit: a 4,000-byte path and its quoting fit well. */
#define CTL_LINE_MAX (64 * 1024)

bool ctl_is_ino(uint64_t ino)
{
	return ino >= CTL_INO_BASE;
}

static bool is_extents(uint64_t ino)
{
	return ino >= CTL_EXTENTS(0);
}

static bool is_layout(uint64_t ino)
{
	return ino >= CTL_LAYOUT(0) && !is_extents(ino);
}

/* Where the mirror directory tree (extents/ or layout/) of @ino starts. */
static uint64_t mirror_base(uint64_t ino)
{
	return is_extents(ino) ? CTL_EXTENTS(0) : CTL_LAYOUT(0);
}

static void emit_json(void *ctx, const char *name, uint64_t value)
{
	json_object_set_new(ctx, name, json_integer((json_int_t)value));
}

/*
 * The counters of @d's layers that have their own (the timing layer: its
 * disk model's), one object per layer under its name, in @dev; and the
 * model's name as "model".
 */
static void layer_counters(struct sfs *fs, unsigned i, json_t *dev)
{
	struct device *d = fs->dev[i];
	const struct disk_params *disk = i ? &fs->cfg.devices[i - 1].disk : &fs->cfg.disk;
	if (!dev)
		return;
	if (disk->model)
		json_object_set_new(dev, "model", json_string(disk->model->name));
	for (struct dev_layer *l = d->top; l; l = l->next) {
		if (!l->ops->counters)
			continue;
		json_t *o = json_object();
		if (!o)
			return;
		l->ops->counters(l, emit_json, o);
		if (json_object_size(o))
			json_object_set_new(dev, l->type->cfg.name, o);
		else
			json_decref(o);
	}
}

/* The mount's flash layout score, file by file (catalog_file_extents()'s callback). */
struct flash_acc {
	struct sfs *fs;
	struct flash_stats st;
	bool any; /* some device has a model with dies */
};

static void flash_add_file(void *ctx, unsigned dev, const struct layout_extent *v, size_t n)
{
	struct flash_acc *a = ctx;
	struct flash_stats one;
	if (dev >= a->fs->ndev || dev_flash_score(a->fs->dev[dev], v, n, &one))
		return;
	flash_stats_add(&a->st, &one);
}

/* The @pct-th percentile of the lateness of @n modelled replies, in us (0 when none). */
static uint64_t late_pct(struct sfs *fs, uint64_t n, unsigned pct)
{
	uint64_t rank = (n * pct + 99) / 100, seen = 0;
	for (unsigned b = 0; n && b < LATE_BUCKETS; b++) {
		seen += atomic_load(&fs->stats.late_hist[b]);
		if (seen >= rank)
			return late_bucket_top_us(b);
	}
	return 0;
}

static char *stats_json(struct sfs *fs)
{
	uint64_t inodes = 0, extents = 0;
	inode_flush_all(fs, false, NULL);
	catalog_counts(fs->cat, &inodes, &extents);
	/* Runs waiting for a durable catalog are free as far as files go. */
	uint64_t total, free_b;
	sfs_space(fs, &total, &free_b);
	uint64_t used = total - free_b;
	uint64_t polled = 0, polled_done = 0, queued = 0, shrinks = 0, past_end = 0;
	for (unsigned i = 0; i < fs->ndev; i++) {
		polled += atomic_load(&fs->dev[i]->counters.polled_reads);
		polled_done += atomic_load(&fs->dev[i]->counters.polled_completions);
		queued += atomic_load(&fs->dev[i]->counters.async_reads);
		shrinks += atomic_load(&fs->dev[i]->shrinks);
		past_end += atomic_load(&fs->dev[i]->past_end);
	}
	char start[64];
	struct tm tm;
	gmtime_r(&fs->start_realtime.tv_sec, &tm);
	strftime(start, sizeof start, "%Y-%m-%dT%H:%M:%S", &tm);
	char startz[96];
	snprintf(startz, sizeof startz, "%s.%06ldZ", start, fs->start_realtime.tv_nsec / 1000);
	uint64_t zf_ns = atomic_load(&fs->stats.zero_fill_ns);
	json_t *o = json_pack(
		"{s:s, s:I, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
		"s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"version", PACKAGE_VERSION, "mount_start_us",
		(json_int_t)fs->start_realtime.tv_sec * 1000000 +
			fs->start_realtime.tv_nsec / 1000,
		"mount_start", startz, "backing", fs->backing_path, "device_size",
		(json_int_t)total, "block_size", (json_int_t)fs->dev[0]->block_size, "used_bytes",
		(json_int_t)used, "free_bytes", (json_int_t)free_b, "files", (json_int_t)inodes,
		"extents", (json_int_t)extents, "reads", (json_int_t)atomic_load(&fs->stats.reads),
		"bytes_read", (json_int_t)atomic_load(&fs->stats.bytes_read), "writes",
		(json_int_t)atomic_load(&fs->stats.writes), "bytes_written",
		(json_int_t)atomic_load(&fs->stats.bytes_written), "autoextend_count",
		(json_int_t)atomic_load(&fs->stats.extends), "autoextend_bytes",
		(json_int_t)atomic_load(&fs->stats.extend_bytes), "zero_fill_ms",
		(double)zf_ns / 1e6, "log_rows", (json_int_t)reqlog_rows(fs->log), "log_rows_written",
		(json_int_t)reqlog_rows_written(fs->log), "log_rows_lost",
		(json_int_t)reqlog_write_errors(fs->log), "log_stalls",
		(json_int_t)reqlog_stall_count(fs->log), "polled_reads",
		(json_int_t)polled, "polled_completions", (json_int_t)polled_done, "async_reads",
		(json_int_t)queued);
	/* What the catalog cost: transactions, and the synchronous ones (fsync, fdatasync). */
	uint64_t commits, syncs;
	catalog_commit_counts(fs->cat, &commits, &syncs);
	if (o) {
		/* statfs(2)'s inode figures (df -i): every inode of the catalog. */
		uint64_t files, ffree;
		sfs_inodes(fs, total, &files, &ffree);
		json_object_set_new(o, "inodes", json_integer((json_int_t)(files - ffree)));
		json_object_set_new(o, "inodes_free", json_integer((json_int_t)ffree));
		json_object_set_new(o, "catalog_commits", json_integer((json_int_t)commits));
		json_object_set_new(o, "catalog_syncs", json_integer((json_int_t)syncs));
		json_object_set_new(o, "writes_bounced",
				    json_integer((json_int_t)atomic_load(&fs->stats.writes_bounced)));
		/* A backing shrunk under the mount: how often, and the I/Os it failed. */
		json_object_set_new(o, "backing_shrinks", json_integer((json_int_t)shrinks));
		json_object_set_new(o, "past_end_errors", json_integer((json_int_t)past_end));
		/* How requests travel (transport.c), and what the kernel granted at INIT. */
		uint64_t ring_req, dev_req;
		unsigned queues, threads;
		transport_counts(fs, &ring_req, &dev_req, &queues, &threads);
		json_object_set_new(o, "transport", json_string(transport_name(fs)));
		json_object_set_new(o, "ring_queues", json_integer((json_int_t)queues));
		json_object_set_new(o, "ring_threads", json_integer((json_int_t)threads));
		json_object_set_new(o, "ring_requests", json_integer((json_int_t)ring_req));
		uint64_t ring_reads = 0;
		for (unsigned i = 0; i < fs->ndev; i++)
			ring_reads += atomic_load(&fs->dev[i]->counters.ring_reads);
		json_object_set_new(o, "ring_reads", json_integer((json_int_t)ring_reads));
		json_object_set_new(o, "dev_requests", json_integer((json_int_t)dev_req));
		json_object_set_new(o, "shared_mmap_direct", json_boolean(fs->direct_mmap));
		json_object_set_new(o, "writeback_cache", json_boolean(fs->writeback));
		/*
		 * The emulation floor: replies under a disk model that left after
		 * their modelled completion, and by how much (p50 and p99 over
		 * every modelled reply, the top of a log-linear bucket), in
		 * microseconds of the clock; and [disk] time_dilation, the factor
		 * by which the models' times are stretched on it (the devices'
		 * busy_ms and queue_ms, and the model's counters, are model time).
		 */
		json_object_set_new(
		    o, "time_dilation",
		    json_integer((json_int_t)(fs->cfg.time_dilation ? fs->cfg.time_dilation : 1)));
		uint64_t n = atomic_load(&fs->stats.modelled_replies);
		json_object_set_new(o, "modelled_replies", json_integer((json_int_t)n));
		json_object_set_new(o, "late_replies",
				    json_integer((json_int_t)atomic_load(&fs->stats.late_replies)));
		json_object_set_new(o, "late_p50_us",
				    json_integer((json_int_t)late_pct(fs, n, 50)));
		json_object_set_new(o, "late_p99_us",
				    json_integer((json_int_t)late_pct(fs, n, 99)));
	}
	/* The whole mount's static layout score (Smith and Seltzer, SIGMETRICS 1997). */
	struct layout_stats ls;
	if (o && catalog_layout_stats(fs->cat, fs->dev[0]->block_size, &ls) == 0) {
		json_object_set_new(o, "layout_score", json_real(layout_stats_score(&ls)));
		json_object_set_new(o, "physical_runs", json_integer((json_int_t)ls.runs));
	}
	/*
	 * The flash layout score (layout_score.h) of every file's pages on the
	 * devices whose disk model has dies, added up file by file; absent
	 * when no device has one.
	 */
	struct flash_acc fa = {.fs = fs};
	for (unsigned i = 0; i < fs->ndev; i++) {
		struct flash_stats none;
		fa.any |= dev_flash_score(fs->dev[i], NULL, 0, &none) == 0;
	}
	if (o && fa.any && catalog_file_extents(fs->cat, flash_add_file, &fa) == 0) {
		json_object_set_new(o, "flash_score", json_real(flash_stats_score(&fa.st)));
		json_object_set_new(o, "flash_pairs", json_integer((json_int_t)fa.st.pairs));
		json_object_set_new(o, "flash_pairs_apart", json_integer((json_int_t)fa.st.apart));
	}
	/*
	 * One object per device, by name, last: its space (used_bytes and
	 * free_bytes above add them up) and its device I/O counters.  No key
	 * repeats one above, for scripts that take a key's first match.
	 */
	json_t *devs = o ? json_object() : NULL;
	/* What the files hold without data (catalog_reserved_bytes()): flushed above. */
	uint32_t bs[SFS_MAX_DEVICES];
	uint64_t reserved[SFS_MAX_DEVICES];
	for (unsigned i = 0; i < fs->ndev; i++)
		bs[i] = fs->dev[i]->block_size;
	if (catalog_reserved_bytes(fs->cat, bs, fs->ndev, reserved))
		memset(reserved, 0, sizeof reserved);
	for (unsigned i = 0; devs && i < fs->ndev; i++) {
		struct device *d = fs->dev[i];
		pthread_mutex_lock(&d->alloc_lock);
		uint64_t size = devalloc_size(d->alloc);
		uint64_t dfree = devalloc_free_bytes(d->alloc) + d->pending_free_bytes;
		pthread_mutex_unlock(&d->alloc_lock);
		const struct dev_counters *k = &d->counters;
		json_object_set_new(
		    devs, d->name,
		    json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, "
			      "s:f, s:I, s:I, s:I}",
			      "backing", d->path, "size", (json_int_t)size, "block",
			      (json_int_t)d->block_size, "used", (json_int_t)(size - dfree), "free",
			      (json_int_t)dfree, "read_ios", (json_int_t)atomic_load(&k->reads),
			      "read_bytes", (json_int_t)atomic_load(&k->bytes_read), "write_ios",
			      (json_int_t)atomic_load(&k->writes), "write_bytes",
			      (json_int_t)atomic_load(&k->bytes_written), "flushes",
			      (json_int_t)atomic_load(&k->flushes), "trim_ios",
			      (json_int_t)atomic_load(&k->trims), "trim_bytes",
			      (json_int_t)atomic_load(&k->bytes_trimmed), "busy_ms",
			      (double)atomic_load(&k->busy_ns) / 1e6, "queue_ms",
			      (double)atomic_load(&k->queue_ns) / 1e6, "backing_bytes",
			      (json_int_t)atomic_load(&d->backing_bytes), "shrinks",
			      (json_int_t)atomic_load(&d->shrinks), "ios_past_end",
			      (json_int_t)atomic_load(&d->past_end)));
		/* Space: used bytes without data, and allocations refused. */
		json_t *dj = json_object_get(devs, d->name);
		if (dj) {
			json_object_set_new(dj, "reserved", json_integer((json_int_t)reserved[i]));
			json_object_set_new(dj, "enospc",
					    json_integer((json_int_t)atomic_load(&d->enospc)));
			json_object_set_new(dj, "backing_leased",
					    json_boolean(atomic_load(&d->backing_leased)));
		}
		layer_counters(fs, i, json_object_get(devs, d->name));
	}
	if (devs)
		json_object_set_new(o, "devices", devs);
	char *s = o ? json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) : NULL;
	json_decref(o);
	if (s) {
		char *t;
		if (asprintf(&t, "%s\n", s) < 0)
			t = NULL;
		free(s);
		s = t;
	}
	return s;
}

/* The devices' names, by number, in @names. */
static const char *const *dev_names(const struct sfs *fs, const char **names)
{
	for (unsigned i = 0; i < fs->ndev; i++)
		names[i] = fs->dev[i]->name;
	return names;
}

static int extents_csv(struct sfs *fs, uint64_t ino, struct ctl_buf *b)
{
	const char *names[SFS_MAX_DEVICES];
	FILE *f = open_memstream(&b->data, &b->len);
	if (!f)
		return -ENOMEM;
	int err = 0;
	struct inode *in = inode_find(fs, ino);
	if (in) {
		inode_wrlock(in);
		err = inode_load_map(fs, in);
		if (!err)
			err = extmap_write_csv_devices(&in->map, dev_names(fs, names), fs->ndev, f);
		pthread_rwlock_unlock(&in->lock);
	} else {
		struct extent_map m;
		struct run_vec gaps = {0};
		extmap_init(&m);
		err = catalog_load_extents(fs->cat, ino, &m, &gaps);
		if (!err)
			err = extmap_write_csv_devices(&m, dev_names(fs, names), fs->ndev, f);
		extmap_release(&m);
		run_vec_release(&gaps);
	}
	if (fclose(f) && !err)
		err = -ENOMEM;
	return err;
}

/*
 * The flash layout score of @m's extents, added up over the devices whose
 * disk model has dies, into @fl; *@any tells whether there was one.
 */
static int flash_of_map(struct sfs *fs, const struct extent_map *m, struct flash_stats *fl,
			bool *any)
{
	*fl = (struct flash_stats){0};
	*any = false;
	for (unsigned d = 0; d < fs->ndev; d++) {
		struct layout_extent *v;
		struct flash_stats one;
		size_t n;
		int err = layout_extents_of(m, (int)d, true, &v, &n);
		if (err)
			return err;
		err = dev_flash_score(fs->dev[d], v, n, &one);
		free(v);
		if (err == -EOPNOTSUPP)
			continue;
		if (err)
			return err;
		flash_stats_add(fl, &one);
		*any = true;
	}
	return 0;
}

/*
 * layout/PATH: the static layout of file @ino, one line; on a device whose
 * disk model has dies, the flash layout score after it.
 */
static int layout_line(struct sfs *fs, uint64_t ino, struct ctl_buf *b)
{
	struct extent_map m;
	struct run_vec gaps = {0};
	struct layout_stats ls;
	struct flash_stats fl;
	bool flash = false;
	char line[256], fline[160] = "";
	int err;

	extmap_init(&m);
	struct inode *in = inode_find(fs, ino);
	if (in) {
		inode_wrlock(in);
		err = inode_load_map(fs, in);
		if (!err)
			err = layout_score_extmap(&in->map, inode_device(fs, in)->block_size, &ls);
		if (!err)
			err = flash_of_map(fs, &in->map, &fl, &flash);
		pthread_rwlock_unlock(&in->lock);
	} else {
		err = catalog_load_extents(fs->cat, ino, &m, &gaps);
		if (!err)
			err = layout_score_extmap(
			    &m, fs->dev[m.n && m.v[0].dev < fs->ndev ? m.v[0].dev : 0]->block_size,
			    &ls);
		if (!err)
			err = flash_of_map(fs, &m, &fl, &flash);
	}
	extmap_release(&m);
	run_vec_release(&gaps);
	if (err)
		return err;
	layout_stats_format(&ls, line, sizeof(line));
	if (flash)
		flash_stats_format(&fl, fline, sizeof(fline));
	if (asprintf(&b->data, "%s%s\n", line, fline) < 0) {
		b->data = NULL;
		return -ENOMEM;
	}
	b->len = strlen(b->data);
	return 0;
}

/*
 * .scatterfs/config: the effective configuration, whose [fault "NAME"]
 * sections are the mount's rules as they stand (those added through
 * control included, those deleted left out).  NULL on ENOMEM.
 */
static char *config_text(struct sfs *fs)
{
	char *head = config_write_ini_faults(&fs->cfg, false), *out = NULL;
	size_t len = 0;
	FILE *f = head ? open_memstream(&out, &len) : NULL;
	if (!f) {
		free(head);
		return NULL;
	}
	fputs(head, f);
	free(head);
	fault_set_write_ini(&fs->faults, f);
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

/* Generates the contents of control file @ino. */
static int generate(struct sfs *fs, uint64_t ino, struct ctl_buf *b)
{
	b->data = NULL;
	b->len = 0;
	if (ino == CTL_STATS)
		b->data = stats_json(fs);
	else if (ino == CTL_CONFIG)
		b->data = config_text(fs);
	else if (is_extents(ino))
		return extents_csv(fs, ino - CTL_EXTENTS(0), b);
	else if (is_layout(ino))
		return layout_line(fs, ino - CTL_LAYOUT(0), b);
	else
		return -EISDIR;
	if (!b->data)
		return -ENOMEM;
	b->len = strlen(b->data);
	return 0;
}

/*
 * The attributes of file-system inode @ino: the in-memory inode's when it
 * has one (a chmod or chown may not be in the catalog yet), else the
 * catalog's.
 */
static int real_attr(struct sfs *fs, uint64_t ino, struct inode_attr *a)
{
	struct inode *in = inode_find(fs, ino);
	if (!in)
		return catalog_get_attr(fs->cat, ino, a);
	pthread_rwlock_rdlock(&in->lock);
	*a = in->attr;
	pthread_rwlock_unlock(&in->lock);
	return 0;
}

/*
 * Who may read a mirror.  An extents/ or layout/ node carries the owner,
 * group and permission bits of what it mirrors (ctl_stat()) and its
 * access ACL (ctl_getxattr()), so that the kernel (default_permissions,
 * and FUSE_CAP_POSIX_ACL: it asks for a node's ACL and checks it as on
 * any other inode) refuses there what it refuses on the file or directory
 * itself, the mirror of every directory on the way included: a 0700
 * directory's names and its files' maps stay its owner's, and so do
 * those of a directory whose ACL denies a user.  The kernel checks, not
 * the daemon, so the rules are exactly the kernel's (the ACL's mask,
 * supplementary groups, CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH) with no
 * second implementation to drift from them.  What the kernel caches is
 * kept honest two ways.  A mirror's entry and attributes time out at once
 * (timeouts 0), and the kernel drops an inode's cached ACL whenever it
 * looks the name up again or refreshes the attributes for a permission
 * check: so a later path walk, or an openat() through a descriptor of a
 * mirror directory held open, sees the real inode's owner, mode and ACL
 * as they are, but one in the same jiffy as a change could still use
 * what was cached.  A change of the real inode's owner, mode or ACL
 * therefore also drops the mirrors' cached attributes and ACL at once
 * (ctl_inval_mirrors(), called by the handlers that make the change).
 * Files keep only their read and write bits, in the mode and in the ACL
 * (an extent map is not a program); every write still gets EROFS.
 */
static int ctl_stat(struct sfs *fs, uint64_t ino, struct stat *st)
{
	memset(st, 0, sizeof *st);
	st->st_ino = ino;
	st->st_nlink = 1;
	st->st_atim = st->st_mtim = st->st_ctim = fs->start_realtime;
	if (ino == CTL_ROOT) {
		st->st_mode = S_IFDIR | 0555;
		st->st_nlink = 2;
		return 0;
	}
	if (is_extents(ino) || is_layout(ino)) {
		struct inode_attr a;
		int err = real_attr(fs, ino - mirror_base(ino), &a);
		if (err)
			return err;
		st->st_uid = a.uid;
		st->st_gid = a.gid;
		if (S_ISDIR(a.mode)) {
			st->st_mode = S_IFDIR | (a.mode & 07777); /* ls -ld shows the same */
			st->st_nlink = 2;
			return 0;
		}
		if (!S_ISREG(a.mode))
			return -ENOENT;
		st->st_mode = S_IFREG | (a.mode & 0666);
	} else if (ino == CTL_CONTROL) {
		/* root's alone: the kernel refuses any other user (default_permissions) */
		st->st_mode = S_IFREG | 0600;
		return 0;
	} else if (ino != CTL_STATS && ino != CTL_CONFIG) {
		return -ENOENT;
	} else {
		st->st_mode = S_IFREG | 0444;
	}
	struct ctl_buf b;
	if (generate(fs, ino, &b) == 0)
		st->st_size = (off_t)b.len;
	free(b.data);
	return 0;
}

static int ctl_entry(struct sfs *fs, uint64_t ino, struct fuse_entry_param *e)
{
	memset(e, 0, sizeof *e);
	int err = ctl_stat(fs, ino, &e->attr);
	if (err)
		return err;
	e->ino = ino;
	e->generation = 1;
	e->attr_timeout = 0;
	e->entry_timeout = 0;
	return 0;
}

static void ctl_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct sfs *fs = fuse_req_userdata(req);
	uint64_t ino = 0;
	int err = 0;
	if (parent == FUSE_ROOT_ID) {
		ino = CTL_ROOT;
	} else if (parent == CTL_ROOT) {
		if (strcmp(name, "stats") == 0)
			ino = CTL_STATS;
		else if (strcmp(name, "config") == 0)
			ino = CTL_CONFIG;
		else if (strcmp(name, "control") == 0)
			ino = CTL_CONTROL;
		else if (strcmp(name, "extents") == 0)
			ino = CTL_EXTENTS(FUSE_ROOT_ID);
		else if (strcmp(name, "layout") == 0)
			ino = CTL_LAYOUT(FUSE_ROOT_ID);
		else
			err = -ENOENT;
	} else if (is_extents(parent) || is_layout(parent)) {
		uint64_t real;
		err = catalog_lookup(fs->cat, parent - mirror_base(parent), name, &real);
		ino = mirror_base(parent) + real;
	} else {
		err = -ENOTDIR;
	}
	struct fuse_entry_param e;
	if (!err)
		err = ctl_entry(fs, ino, &e);
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_entry(req, &e);
}

static void ctl_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sfs *fs = fuse_req_userdata(req);
	struct stat st;
	int err = ctl_stat(fs, ino, &st);
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_attr(req, &st, 0);
}

/* sync-report: the ranges not yet durable, device by device (dev_volatile.h). */
static void sync_report(struct sfs *fs, const char *args, FILE *out)
{
	if (args[strspn(args, " \t")]) {
		fputs("error: sync-report takes no arguments\n", out);
		return;
	}
	if (!fs->volatile_on) {
		fputs("error: sync-report: no device has volatile = true ([device] volatile)\n",
		      out);
		return;
	}
	for (unsigned i = 0; i < fs->ndev; i++)
		dev_volatile_report(fs->dev[i], out);
	fprintf(out, "catalog %" PRIu64 "\n", catalog_vfs_unsynced());
	fputs("ok\n", out);
}

/*
 * crash [torn] [seed=N] [sector_size=N]: the simulated power failure.
 * Checked whole before anything happens; then every device's and the
 * catalog's writes not yet durable are dropped (or torn), and the daemon
 * ends after the reply (ctl_write()).
 */
static void crash(struct sfs *fs, const char *args, FILE *out)
{
	bool torn = false, seen_seed = false, seen_sector = false;
	uint64_t seed = 1, sector = 512;
	char tok[128];
	const char *p = args;
	for (;;) {
		p += strspn(p, " \t");
		size_t n = strcspn(p, " \t");
		if (!n)
			break;
		if (n >= sizeof tok) {
			fputs("error: crash: argument too long; allowed: torn, seed=N, "
			      "sector_size=N\n",
			      out);
			return;
		}
		memcpy(tok, p, n);
		tok[n] = '\0';
		p += n;
		char *end;
		if (strcmp(tok, "torn") == 0 && !torn) {
			torn = true;
		} else if (strncmp(tok, "seed=", 5) == 0 && tok[5] && !seen_seed) {
			errno = 0;
			seed = strtoull(tok + 5, &end, 0);
			if (*end || errno || tok[5] == '-') {
				fprintf(out, "error: crash: seed=%s: not a number from 0 to 2^64-1\n",
					tok + 5);
				return;
			}
			seen_seed = true;
		} else if (strncmp(tok, "sector_size=", 12) == 0 && tok[12] && !seen_sector) {
			errno = 0;
			sector = strtoull(tok + 12, &end, 0);
			if (*end || errno || sector < 1 || sector > (1u << 20)) {
				fprintf(out,
					"error: crash: sector_size=%s: allowed: 1 to 1048576 "
					"bytes\n",
					tok + 12);
				return;
			}
			seen_sector = true;
		} else {
			fprintf(out,
				"error: crash: unknown or repeated argument '%s'; allowed: torn, "
				"seed=N, sector_size=N\n",
				tok);
			return;
		}
	}
	if ((seen_seed || seen_sector) && !torn) {
		fputs("error: crash: seed= and sector_size= go with torn\n", out);
		return;
	}
	if (!fs->volatile_on) {
		fputs("error: crash: no device has volatile = true ([device] volatile)\n", out);
		return;
	}
	uint64_t rng = seed, dropped = 0;
	int err = 0;
	for (unsigned i = 0; i < fs->ndev; i++) {
		int e = dev_volatile_crash(fs->dev[i], torn ? &rng : NULL, (uint32_t)sector, stderr,
					   &dropped);
		if (e && !err)
			err = e;
	}
	uint64_t cat = catalog_vfs_unsynced();
	int e = catalog_vfs_crash();
	if (e && !err)
		err = e;
	atomic_store(&fs->power_failed, true);
	fprintf(stderr,
		"scatterfs: crash%s: %" PRIu64 " bytes of devices and %" PRIu64
		" of the catalog not durable, dropped%s; the daemon ends as at a power "
		"failure\n",
		torn ? " torn" : "", dropped, cat, err ? " (a restore failed)" : "");
	if (err)
		fprintf(out, "error: crash: restoring old contents failed: %s\n", strerror(-err));
	else
		fputs("ok\n", out);
}

/*
 * One command line of the control file, without its newline: its reply
 * lines, ending with "ok" or one "error: ..." line, go to @out.  A blank
 * line gets no reply.
 */
static void ctl_command(struct sfs *fs, const char *line, FILE *out)
{
	const char *p = line + strspn(line, " \t");
	if (!*p)
		return;
	if (fault_command(&fs->faults, p, out) == 0)
		return;
	size_t n = strcspn(p, " \t");
	if (n == 11 && memcmp(p, "sync-report", 11) == 0)
		sync_report(fs, p + n, out);
	else if (n == 5 && memcmp(p, "crash", 5) == 0)
		crash(fs, p + n, out);
	else
		fprintf(out,
			"error: unknown command '%.*s'; allowed: fault add, fault del, fault list, "
			"sync-report, crash\n",
			(int)(n > 64 ? 64 : n), p);
}

/* Runs every complete line of @c's command bytes (@all: the last unended one too). */
static int chan_run(struct sfs *fs, struct ctl_chan *c, bool all)
{
	char *rbuf = NULL;
	size_t rlen = 0;
	FILE *out = open_memstream(&rbuf, &rlen);
	if (!out)
		return -ENOMEM;
	size_t start = 0;
	for (;;) {
		char *nl = memchr(c->cmd + start, '\n', c->cmd_len - start);
		if (!nl && !(all && start < c->cmd_len))
			break;
		size_t end = nl ? (size_t)(nl - c->cmd) : c->cmd_len;
		c->cmd[end] = '\0'; /* the newline, or the spare byte chan_write() keeps */
		if (c->overlong) {
			fprintf(out, "error: command line longer than %d bytes\n", CTL_LINE_MAX);
			c->overlong = false;
		} else if (memchr(c->cmd + start, '\0', end - start)) {
			fputs("error: a NUL byte in the command line\n", out);
		} else {
			ctl_command(fs, c->cmd + start, out);
		}
		start = nl ? end + 1 : c->cmd_len;
	}
	memmove(c->cmd, c->cmd + start, c->cmd_len - start);
	c->cmd_len -= start;
	if (fclose(out))
		return -ENOMEM;
	if (rlen) {
		size_t keep = c->reply_len - c->reply_pos;
		char *r = malloc(keep + rlen);
		if (!r) {
			free(rbuf);
			return -ENOMEM;
		}
		if (keep) /* c->reply is NULL before the first reply */
			memcpy(r, c->reply + c->reply_pos, keep);
		memcpy(r + keep, rbuf, rlen);
		free(c->reply);
		c->reply = r;
		c->reply_len = keep + rlen;
		c->reply_pos = 0;
	}
	free(rbuf);
	return 0;
}

/* Takes the written bytes: each line that ends in them runs at once, in order. */
static int chan_write(struct sfs *fs, struct ctl_chan *c, const char *buf, size_t size)
{
	pthread_mutex_lock(&c->lock);
	int err = 0;
	size_t done = 0;
	while (!err && done < size) {
		const char *nl = memchr(buf + done, '\n', size - done);
		size_t n = nl ? (size_t)(nl - (buf + done)) + 1 : size - done;
		if (c->overlong || c->cmd_len + n > CTL_LINE_MAX + 1) {
			/* dropped as it comes; at its newline, one error line stands for it */
			c->overlong = true;
			c->cmd_len = 0;
			if (nl) {
				char *m = realloc(c->cmd, 2);
				if (!m) {
					err = -ENOMEM;
					break;
				}
				c->cmd = m;
				c->cmd[c->cmd_len++] = '\n';
				err = chan_run(fs, c, false);
			}
		} else {
			/* + 1: the NUL chan_run() puts */
			char *m = realloc(c->cmd, c->cmd_len + n + 1);
			if (!m) {
				err = -ENOMEM;
				break;
			}
			c->cmd = m;
			memcpy(c->cmd + c->cmd_len, buf + done, n);
			c->cmd_len += n;
			if (nl)
				err = chan_run(fs, c, false);
		}
		done += n;
	}
	pthread_mutex_unlock(&c->lock);
	return err;
}

static void ctl_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sfs *fs = fuse_req_userdata(req);
	if (ino == CTL_CONTROL) {
		/*
		 * The kernel checks the mode (0600, root's) first; this is the
		 * daemon's own check, for a mount without default_permissions.
		 */
		if (fuse_req_ctx(req)->uid != 0) {
			fuse_reply_err(req, EACCES);
			return;
		}
		struct ctl_chan *c = calloc(1, sizeof *c);
		if (!c) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		pthread_mutex_init(&c->lock, NULL);
		fi->fh = (uint64_t)(uintptr_t)c;
		fi->direct_io = 1;
		fi->nonseekable = 1;
		fuse_reply_open(req, fi);
		return;
	}
	if ((fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EROFS);
		return;
	}
	/*
	 * The log's completeness guarantee: once stats is open, every row of
	 * a request answered before the open is in the log file, so
	 * `cat stats; scatterfs-report LOG` sees them all.  A failed log
	 * writer does not fail the read: its lost rows are in the counters.
	 */
	if (ino == CTL_STATS)
		(void)reqlog_flush(fs->log);
	struct ctl_buf *b = malloc(sizeof *b);
	int err = b ? generate(fs, ino, b) : -ENOMEM;
	if (err) {
		free(b);
		fuse_reply_err(req, -err);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)b;
	fi->direct_io = 1;
	fuse_reply_open(req, fi);
}

static void ctl_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	if (ino == CTL_CONTROL) {
		struct ctl_chan *c = (struct ctl_chan *)(uintptr_t)fi->fh;
		pthread_mutex_lock(&c->lock);
		size_t n = c->reply_len - c->reply_pos;
		if (n > size)
			n = size;
		char *copy = n ? malloc(n) : NULL;
		if (copy) {
			memcpy(copy, c->reply + c->reply_pos, n);
			c->reply_pos += n;
		}
		pthread_mutex_unlock(&c->lock);
		if (n && !copy)
			fuse_reply_err(req, ENOMEM);
		else
			fuse_reply_buf(req, copy, n);
		free(copy);
		return;
	}
	struct ctl_buf *b = (struct ctl_buf *)(uintptr_t)fi->fh;
	if (!b || (uint64_t)off >= b->len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	size_t n = b->len - (size_t)off;
	if (n > size)
		n = size;
	/*
	 * Reply from a private copy: the kernel takes the data inside writev(),
	 * wakes the reader, and the reader's close can make another worker run
	 * ctl_release() and free b before this writev() has returned.  Nothing
	 * reads b after the kernel copied it, but ASan's writev interceptor
	 * checks the buffer after the call and reported a use after free
	 * (tests/mount/posix.sh under ASan, once, on the fresh machine).
	 */
	char *copy = malloc(n);
	if (!copy) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memcpy(copy, b->data + off, n);
	fuse_reply_buf(req, copy, n);
	free(copy);
}

static void ctl_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino == CTL_CONTROL) {
		struct ctl_chan *c = (struct ctl_chan *)(uintptr_t)fi->fh;
		/* A last line without its newline still runs; its reply has no reader. */
		if (c->cmd_len)
			(void)chan_run(fuse_req_userdata(req), c, true);
		pthread_mutex_destroy(&c->lock);
		free(c->cmd);
		free(c->reply);
		free(c);
		fuse_reply_err(req, 0);
		return;
	}
	struct ctl_buf *b = (struct ctl_buf *)(uintptr_t)fi->fh;
	if (b)
		free(b->data);
	free(b);
	fuse_reply_err(req, 0);
}

static void ctl_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sfs *fs = fuse_req_userdata(req);
	struct stat st;
	int err = ctl_stat(fs, ino, &st);
	if (!err && !S_ISDIR(st.st_mode))
		err = -ENOTDIR;
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_open(req, fi);
}

struct ctl_names {
	char *name[256];
	uint64_t ino[256];
	int64_t cookie[256];
	size_t n;
	uint64_t base; /* CTL_EXTENTS(0) or CTL_LAYOUT(0) */
};

static int ctl_collect(void *opaque, const struct catalog_dirent *d)
{
	struct ctl_names *c = opaque;
	if (c->n == 256)
		return 1;
	if (!S_ISDIR(d->mode) && !S_ISREG(d->mode))
		return 0;
	c->name[c->n] = strdup(d->name);
	c->ino[c->n] = c->base + d->ino;
	c->cookie[c->n] = d->cookie;
	c->n++;
	return 0;
}

/* Adds one entry; returns false when the buffer is full. */
static bool add_entry(fuse_req_t req, char *buf, size_t size, size_t *used, const char *name,
		      uint64_t ino, off_t next, bool plus)
{
	struct sfs *fs = fuse_req_userdata(req);
	struct fuse_entry_param e;
	size_t n;
	if (ctl_entry(fs, ino, &e))
		return true; /* vanished: skip */
	if (plus)
		n = fuse_add_direntry_plus(req, buf + *used, size - *used, name, &e, next);
	else
		n = fuse_add_direntry(req, buf + *used, size - *used, name, &e.attr, next);
	if (n > size - *used)
		return false;
	*used += n;
	return true;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus)
{
	struct sfs *fs = fuse_req_userdata(req);
	char *buf = calloc(1, size);
	size_t used = 0;
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (ino == CTL_ROOT) {
		static const char *const names[] = {"stats", "config", "extents", "layout",
						    "control"};
		const uint64_t inos[] = {CTL_STATS, CTL_CONFIG, CTL_EXTENTS(FUSE_ROOT_ID),
					 CTL_LAYOUT(FUSE_ROOT_ID), CTL_CONTROL};
		for (off_t i = off; i < 5; i++)
			if (!add_entry(req, buf, size, &used, names[i], inos[i], i + 1, plus))
				break;
	} else {
		struct ctl_names c = {.n = 0, .base = mirror_base(ino)};
		int err = catalog_readdir(fs->cat, ino - c.base, off, ctl_collect, &c);
		for (size_t i = 0; !err && i < c.n; i++)
			if (!add_entry(req, buf, size, &used, c.name[i], c.ino[i], c.cookie[i],
				       plus))
				break;
		for (size_t i = 0; i < c.n; i++)
			free(c.name[i]);
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void ctl_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static void ctl_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, false);
}

static void ctl_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			    struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, true);
}

/* The contents are generated whole at open: all data, no hole (lseek(2)). */
static void ctl_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		      struct fuse_file_info *fi)
{
	struct ctl_buf *b = (struct ctl_buf *)(uintptr_t)fi->fh;
	size_t len = b ? b->len : 0;
	if (whence != SEEK_DATA && whence != SEEK_HOLE)
		fuse_reply_err(req, EINVAL);
	else if (off < 0 || (uint64_t)off >= len)
		fuse_reply_err(req, ENXIO);
	else
		fuse_reply_lseek(req, whence == SEEK_DATA ? off : (off_t)len);
}

static void ctl_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	fuse_reply_none(req); /* control inodes are not counted */
}

static void ctl_readlink(fuse_req_t req, fuse_ino_t ino)
{
	fuse_reply_err(req, EINVAL); /* no control node is a symbolic link */
}

static void reply_rofs(fuse_req_t req)
{
	fuse_reply_err(req, EROFS);
}

static void ctl_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
			struct fuse_file_info *fi)
{
	/*
	 * `echo CMD > control` truncates first: the control file is always
	 * empty, so a truncation to 0 (and the times it sets) changes nothing.
	 */
	const int ok_bits = FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME |
			    FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW | FUSE_SET_ATTR_CTIME;
	if (ino == CTL_CONTROL && !(to_set & ~ok_bits) &&
	    (!(to_set & FUSE_SET_ATTR_SIZE) || attr->st_size == 0)) {
		struct stat st;
		ctl_stat(fuse_req_userdata(req), ino, &st);
		fuse_reply_attr(req, &st, 0);
		return;
	}
	reply_rofs(req);
}

/* A new name in the control directory; ".scatterfs" itself exists already. */
static void reply_new_name(fuse_req_t req, fuse_ino_t parent)
{
	fuse_reply_err(req, parent == FUSE_ROOT_ID ? EEXIST : EROFS);
}

static void ctl_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      dev_t rdev)
{
	reply_new_name(req, parent);
}

static void ctl_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	reply_new_name(req, parent);
}

static void ctl_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	reply_new_name(req, parent);
}

static void ctl_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		       struct fuse_file_info *fi)
{
	reply_new_name(req, parent);
}

static void ctl_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	reply_rofs(req);
}

static void ctl_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		       const char *newname, unsigned int flags)
{
	reply_rofs(req);
}

static void ctl_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	reply_rofs(req);
}

/* The end of a daemon whose power failed (the crash command). */
static void *power_off(void *unused)
{
	(void)unused;
	struct timespec t = {0, 200 * 1000 * 1000};
	nanosleep(&t, NULL);
	_exit(0);
}

static void ctl_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	if (ino != CTL_CONTROL) {
		reply_rofs(req);
		return;
	}
	struct ctl_chan *c = (struct ctl_chan *)(uintptr_t)fi->fh;
	struct sfs *fs = fuse_req_userdata(req);
	int err = chan_write(fs, c, buf, size);
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_write(req, size);
	/*
	 * After a crash command: the power is off (nothing is unmounted or
	 * flushed).  The daemon ends 200 ms later, from a thread of its own,
	 * so that this reply reaches the writer on either transport (over
	 * io_uring it leaves when this thread returns to its ring); in
	 * between every device write, flush and catalog commit fails with EIO.
	 */
	if (atomic_load(&fs->power_failed) && !atomic_exchange(&fs->power_exit, true)) {
		pthread_t t;
		if (pthread_create(&t, NULL, power_off, NULL))
			_exit(0);
		pthread_detach(t);
	}
}

static void ctl_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
			  struct fuse_file_info *fi)
{
	reply_rofs(req);
}

/* Nothing to make durable: the contents are generated from the daemon's state. */
static void ctl_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static void ctl_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			 size_t size, int flags)
{
	reply_rofs(req);
}

void ctl_inval_mirrors(struct sfs *fs, uint64_t ino)
{
	/* -ENOENT (a mirror the kernel never looked up) is the usual answer. */
	fuse_lowlevel_notify_inval_inode(fs->se, CTL_EXTENTS(ino), -1, 0);
	fuse_lowlevel_notify_inval_inode(fs->se, CTL_LAYOUT(ino), -1, 0);
}

/*
 * The access ACL of mirror @ino: the real inode's (see "Who may read a
 * mirror" above), without execute permission for a file's.  -ENODATA for
 * the other nodes, which have none.
 */
static int mirror_acl(struct sfs *fs, uint64_t ino, void **acl, size_t *len)
{
	*acl = NULL;
	*len = 0;
	if (!is_extents(ino) && !is_layout(ino))
		return -ENODATA;
	struct inode_attr a;
	uint64_t real = ino - mirror_base(ino);
	int err = real_attr(fs, real, &a);
	if (!err)
		err = xattr_acl_access(fs, real, acl, len);
	if (!err && !S_ISDIR(a.mode))
		acl_keep_perms(*acl, *len, ACL_READ | ACL_WRITE);
	return err;
}

/* Only the access ACL: a mirror has no other extended attribute. */
static void ctl_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct sfs *fs = fuse_req_userdata(req);
	void *acl = NULL;
	size_t len = 0;
	int err = strcmp(name, ACL_XATTR_ACCESS) == 0 ? mirror_acl(fs, ino, &acl, &len) : -ENODATA;
	if (!err && size && len > size)
		err = -ERANGE;
	if (err)
		fuse_reply_err(req, -err);
	else if (size == 0)
		fuse_reply_xattr(req, len);
	else
		fuse_reply_buf(req, acl, len);
	free(acl);
}

static void ctl_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct sfs *fs = fuse_req_userdata(req);
	void *acl;
	size_t len;
	int err = mirror_acl(fs, ino, &acl, &len);
	free(acl);
	static const char names[] = ACL_XATTR_ACCESS; /* with its NUL */
	size_t n = err ? 0 : sizeof names;
	if (err && err != -ENODATA)
		fuse_reply_err(req, -err);
	else if (size == 0)
		fuse_reply_xattr(req, n);
	else if (n > size)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, names, n);
}

static void ctl_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	reply_rofs(req);
}

const struct fuse_lowlevel_ops ctl_ops = {
	.lookup = ctl_lookup,
	.forget = ctl_forget,
	.getattr = ctl_getattr,
	.setattr = ctl_setattr,
	.readlink = ctl_readlink,
	.mknod = ctl_mknod,
	.mkdir = ctl_mkdir,
	.unlink = ctl_unlink,
	.rmdir = ctl_unlink,
	.symlink = ctl_symlink,
	.rename = ctl_rename,
	.link = ctl_link,
	.open = ctl_open,
	.read = ctl_read,
	.write = ctl_write,
	.release = ctl_release,
	.fsync = ctl_fsync,
	.opendir = ctl_opendir,
	.readdir = ctl_readdir,
	.readdirplus = ctl_readdirplus,
	.releasedir = ctl_releasedir,
	.fsyncdir = ctl_fsync,
	.setxattr = ctl_setxattr,
	.getxattr = ctl_getxattr,
	.listxattr = ctl_listxattr,
	.removexattr = ctl_removexattr,
	.create = ctl_create,
	.fallocate = ctl_fallocate,
	.lseek = ctl_lseek,
};
