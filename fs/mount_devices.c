/*
 * Mount-time checks of the backing devices against the catalog
 * (devices_check(), device_open.h): what each [device "NAME"] was when the
 * catalog last saw it, and whether a new one may be taken.  The mount
 * code's, not the device stack's: the stack's files call nothing of the
 * catalog.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backing_scan.h"
#include "catalog.h"
#include "device_open.h"

struct check_ctx {
	struct sfs *fs;
	int map[256]; /* recorded device number -> number in this mount; -1 = unknown */
	char *err;
	size_t errlen;
};

static int on_recorded(void *opaque, const char *name, unsigned index, const char *backing_path,
		       uint64_t used)
{
	struct check_ctx *x = opaque;
	int ci = config_device_index(&x->fs->cfg, name);

	if (ci > 0) {
		x->fs->dev[ci]->recorded = (int)index;
		if (index < 256)
			x->map[index] = ci;
		return 0;
	}
	if (used == 0)
		return 0; /* nothing on it: catalog_adopt() forgets it */
	snprintf(x->err, x->errlen,
		 "the catalog has %llu bytes of files on device '%s' (backing %s), but the "
		 "configuration has no [device \"%s\"]; add the section back",
		 (unsigned long long)used, name, backing_path, name);
	return -EINVAL;
}

static int on_file(void *opaque, uint64_t ino, unsigned dev)
{
	struct check_ctx *x = opaque;
	struct sfs *fs = x->fs;
	int have = dev < 256 ? x->map[dev] : -1, want;
	char *path = NULL;

	if (have < 0) {
		snprintf(x->err, x->errlen,
			 "catalog %s is inconsistent: inode %llu has extents on device number %u, "
			 "which it does not record; refusing to mount",
			 fs->meta_path, (unsigned long long)ino, dev);
		return -EINVAL;
	}
	if (catalog_path_of(fs->cat, ino, &path))
		return 0; /* no name (an orphan): catalog_adopt() deletes it */
	want = config_device_index(&fs->cfg, config_for_path(&fs->cfg, path)->device);
	if (want != have) {
		snprintf(x->err, x->errlen,
			 "file '%s' has its extents on device '%s' but the configuration's rules "
			 "put it on '%s'; a file's device cannot change: keep its old rule, or "
			 "copy the file once mounted",
			 path, fs->dev[have]->name, fs->dev[want]->name);
		free(path);
		return -EINVAL;
	}
	free(path);
	return 0;
}

/* Creates @d's backing, which does not exist, with @dc's size. */
static int create_one(struct device *d, const struct device_conf *dc, char *err, size_t errlen)
{
	d->fd = open(d->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | (dc->direct ? O_DIRECT : 0),
		     0600);
	if (d->fd < 0) {
		snprintf(err, errlen, "device '%s': cannot create backing %s: %s", d->name, d->path,
			 strerror(errno));
		return -errno;
	}
	d->created = true;
	if (device_lock_backing(d->fd)) {
		snprintf(err, errlen, "device '%s': cannot lock backing %s", d->name, d->path);
		return -EIO;
	}
	return 0;
}

/*
 * A device new to the catalog over a backing that exists: refused when the
 * backing holds data (backing_find_data()), unless @newfs.
 */
static int check_new_device(struct sfs *fs, struct device *d, bool newfs, char *err, size_t errlen)
{
	uint64_t at;
	int rc = backing_find_data(d->fd, d->blockdev, d->opened_bytes, &at);

	if (rc < 0) {
		snprintf(err, errlen,
			 "device '%s': cannot read backing %s to see whether it holds data: %s",
			 d->name, d->path, strerror(-rc));
		return rc;
	}
	if (rc == 0)
		return 0;
	if (newfs) {
		fprintf(stderr,
			"scatterfs: -o newfs: device '%s' starts empty on backing %s, whose data "
			"(non-zero from byte %llu on) it will overwrite\n",
			d->name, d->path, (unsigned long long)at);
		return 0;
	}
	snprintf(err, errlen,
		 "device '%s': backing %s holds data (a non-zero byte at offset %llu) and catalog "
		 "%s does not know the device; refusing to start a new device over it: name the "
		 "backing this device had in [device \"%s\"], or give -o newfs to start it empty "
		 "(its data will be overwritten)",
		 d->name, d->path, (unsigned long long)at, fs->meta_path, d->name);
	return -EINVAL;
}

int devices_check(struct sfs *fs, struct catalog_identity *ids, bool newfs, char *err,
		  size_t errlen)
{
	struct check_ctx x = {.fs = fs, .err = err, .errlen = errlen};
	struct stat st;
	int rc;

	for (unsigned i = 0; i < 256; i++)
		x.map[i] = -1;
	x.map[0] = 0;
	rc = catalog_recorded_devices(fs->cat, on_recorded, &x);
	if (rc)
		return rc;
	for (unsigned i = 1; i < fs->ndev; i++) {
		struct device *d = fs->dev[i];
		const struct device_conf *dc = &fs->cfg.devices[i - 1];
		uint64_t size = dc->effective_size;

		if (d->fd < 0) {
			if (d->recorded >= 0) {
				snprintf(
				    err, errlen,
				    "device '%s': backing %s is missing, and the catalog "
				    "records the device; restore the backing or name the right "
				    "one in [device \"%s\"]",
				    d->name, d->path, d->name);
				return -ENOENT;
			}
			if (!dc->size) {
				snprintf(err, errlen,
					 "device '%s': backing %s: %s (set size = BYTES in [device "
					 "\"%s\"] to create it)",
					 d->name, d->path, strerror(ENOENT), d->name);
				return -ENOENT;
			}
			rc = create_one(d, dc, err, errlen);
			if (rc)
				return rc;
		}
		d->direct = dc->direct;
		d->block_size = dc->block_size;
		d->size = size / d->block_size * d->block_size;
		if (d->size == 0) {
			snprintf(err, errlen,
				 "device '%s': backing %s is empty; set size = BYTES in [device "
				 "\"%s\"] to make it usable",
				 d->name, d->path, d->name);
			return -EINVAL;
		}
		if (fstat(d->fd, &st))
			return -errno;
		if (d->recorded < 0 && !d->created) {
			char beside[PATH_MAX + 16];

			if (device_other_catalog(d->path, fs->meta_path, beside, sizeof beside)) {
				snprintf(err, errlen,
					 "device '%s': backing %s belongs to another catalog (%s); "
					 "give each file system its own backings",
					 d->name, d->path, beside);
				return -EINVAL;
			}
			rc = check_new_device(fs, d, newfs, err, errlen);
			if (rc)
				return rc;
		}
		ids[i] = (struct catalog_identity){
		    .name = d->name,
		    .index = i,
		    .recorded = d->recorded,
		    .device_size = d->size,
		    .block_size = d->block_size,
		    .backing_path = d->path,
		    .backing_id = device_backing_id(&st),
		    .backing_born_ns = device_backing_born_ns(d->fd),
		    .moved = ids[0].moved,
		};
		rc = catalog_check_device(fs->cat, &ids[i], err, errlen);
		if (rc)
			return rc;
		if (d->recorded >= 0 && d->recorded < 256)
			x.map[d->recorded] = (int)i;
	}
	/* Only where a file could be on another device than its rule says. */
	if (fs->ndev > 1)
		rc = catalog_file_devices(fs->cat, on_file, &x);
	return rc;
}
