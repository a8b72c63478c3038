/*
 * Opening the backings of the [device "NAME"] sections and checking them,
 * at mount, against each other (their checks against the catalog are the
 * mount code's, fs/mount_devices.c).
 *
 * Order (main.c): devices_open() before config_finish(), so that the rules
 * on a device are checked against its size; devices_check() after
 * catalog_open(), because what a missing backing means depends on whether
 * the catalog knows the device.  Nothing is written until every check has
 * passed, except a backing file that does not exist yet and has a size to
 * be created with: main.c removes it again when the mount is refused
 * (struct device's created), as it does main's.
 *
 * A device is identified, as main is, by its backing's path and its id
 * (inode number, or device number for a block device): the catalog keeps
 * both under device.NAME.* and accepts a backing that kept one of them (a
 * moved or a copied file).  Two devices on one backing are found by the
 * id before any lock is taken (flock on the second open of one file
 * would wait for the first).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backing_scan.h"
#include "device_open.h"

/* What makes two backings one: the device number of a block device, else the file's inode. */
struct backing_key {
	dev_t dev;
	ino_t ino;
};

static struct backing_key key_of(const struct stat *st)
{
	if (S_ISBLK(st->st_mode))
		return (struct backing_key){st->st_rdev, 0};
	return (struct backing_key){st->st_dev, st->st_ino};
}

uint64_t device_backing_id(const struct stat *st)
{
	return S_ISBLK(st->st_mode) ? (uint64_t)st->st_rdev : (uint64_t)st->st_ino;
}

int64_t device_backing_born_ns(int fd)
{
	struct statx stx;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_BTIME, &stx) != 0 ||
	    !(stx.stx_mask & STATX_BTIME) || !S_ISREG(stx.stx_mode))
		return 0;
	return (int64_t)stx.stx_btime.tv_sec * 1000000000 + stx.stx_btime.tv_nsec;
}

bool device_other_catalog(const char *path, const char *meta_path, char *beside, size_t size)
{
	struct stat a, b;
	snprintf(beside, size, "%s.scatterfs", path);
	return stat(beside, &a) == 0 &&
	       (stat(meta_path, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino);
}

/* @path made absolute without resolving it (it may not exist yet); malloc'd or NULL. */
static char *absolute(const char *path)
{
	char *rp = realpath(path, NULL), cwd[PATH_MAX], *out;

	if (rp || path[0] == '/')
		return rp ? rp : strdup(path);
	if (!getcwd(cwd, sizeof cwd))
		return NULL;
	if (asprintf(&out, "%s/%s", cwd, path) < 0)
		return NULL;
	return out;
}

/* Takes @fd's lock, waiting up to 5 s for a daemon that is still closing it. */
int device_lock_backing(int fd)
{
	for (int tries = 0; tries < 50; tries++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK)
			return -errno;
		usleep(100000);
	}
	return -EWOULDBLOCK;
}

/* Opens and locks @d's existing backing; *@size gets its bytes (or the size it is to have). */
static int open_one(struct device *d, const struct device_conf *dc, uint64_t *size, char *err,
		    size_t errlen)
{
	struct stat st;
	uint64_t bytes;
	int rc;

	d->fd = open(d->path, O_RDWR | O_CLOEXEC | (dc->direct ? O_DIRECT : 0));
	if (d->fd < 0) {
		snprintf(err, errlen, "device '%s': cannot open backing %s: %s", d->name, d->path,
			 strerror(errno));
		return -errno;
	}
	rc = device_lock_backing(d->fd);
	if (rc) {
		snprintf(err, errlen,
			 "device '%s': backing %s is in use by another scatterfs mount; refused",
			 d->name, d->path);
		return rc;
	}
	if (fstat(d->fd, &st)) {
		snprintf(err, errlen, "device '%s': fstat %s: %s", d->name, d->path,
			 strerror(errno));
		return -errno;
	}
	d->blockdev = S_ISBLK(st.st_mode);
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(d->fd, BLKGETSIZE64, &bytes)) {
			snprintf(err, errlen, "device '%s': BLKGETSIZE64 on %s: %s", d->name,
				 d->path, strerror(errno));
			return -errno;
		}
		d->opened_bytes = bytes;
		if (dc->size && dc->size != bytes) {
			snprintf(err, errlen,
				 "device '%s': backing %s is a block device of %llu bytes; size "
				 "applies only to a regular-file backing",
				 d->name, d->path, (unsigned long long)bytes);
			return -EINVAL;
		}
		*size = bytes;
		return 0;
	}
	*size = (uint64_t)st.st_size;
	d->opened_bytes = *size;
	if (dc->size && dc->size < *size) {
		snprintf(err, errlen,
			 "device '%s': backing %s is %llu bytes, larger than its size = %llu; "
			 "scatterfs never shrinks a backing (that would cost data)",
			 d->name, d->path, (unsigned long long)*size, (unsigned long long)dc->size);
		return -EINVAL;
	}
	if (dc->size)
		*size = dc->size;
	return 0;
}

int devices_open(struct sfs *fs, char *err, size_t errlen)
{
	struct backing_key keys[SFS_MAX_DEVICES];
	struct stat st;

	if (fstat(fs->dev[0]->fd, &st)) {
		snprintf(err, errlen, "fstat backing %s: %s", fs->backing_path, strerror(errno));
		return -errno;
	}
	keys[0] = key_of(&st);
	for (size_t i = 0; i < fs->cfg.ndevices; i++) {
		struct device_conf *dc = &fs->cfg.devices[i];
		struct device *d = calloc(1, sizeof *d);
		uint64_t size = dc->size;

		if (!d)
			return -ENOMEM;
		d->index = (unsigned)i + 1;
		d->name = dc->name;
		d->fd = -1;
		d->recorded = -1;
		pthread_mutex_init(&d->alloc_lock, NULL);
		fs->dev[d->index] = d;
		fs->ndev = d->index + 1;
		if (!dc->backing)
			continue; /* config_finish() refuses it, naming the section */
		d->path = absolute(dc->backing);
		if (!d->path)
			return -ENOMEM;
		/* .scatterfs/config shows the path that was used. */
		free(dc->backing);
		dc->backing = strdup(d->path);
		if (!dc->backing)
			return -ENOMEM;
		if (stat(d->path, &st)) {
			if (errno != ENOENT) {
				snprintf(err, errlen, "device '%s': backing %s: %s", d->name,
					 d->path, strerror(errno));
				return -errno;
			}
			/* Not there yet: two devices can still name one path. */
			for (unsigned j = 0; j < d->index; j++) {
				const char *other = j ? fs->dev[j]->path : fs->backing_path;
				if (!other || strcmp(other, d->path) != 0)
					continue;
				snprintf(err, errlen,
					 "devices '%s' and '%s' are one backing (%s): give each "
					 "device a backing of its own",
					 fs->dev[j]->name, d->name, d->path);
				return -EINVAL;
			}
			dc->effective_size = size; /* devices_check() creates it, or refuses */
			continue;
		}
		if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
			snprintf(err, errlen,
				 "device '%s': backing %s is neither a regular file nor a block "
				 "device",
				 d->name, d->path);
			return -EINVAL;
		}
		keys[d->index] = key_of(&st);
		for (unsigned j = 0; j < d->index; j++) {
			if (keys[j].dev != keys[d->index].dev ||
			    keys[j].ino != keys[d->index].ino || (j && fs->dev[j]->fd < 0))
				continue;
			snprintf(err, errlen,
				 "devices '%s' and '%s' are one backing (%s): give each device a "
				 "backing of its own",
				 fs->dev[j]->name, d->name, d->path);
			return -EINVAL;
		}
		int rc = open_one(d, dc, &size, err, errlen);
		if (rc)
			return rc;
		dc->effective_size = size;
	}
	return 0;
}
