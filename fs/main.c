/*
 * scatterfs BACKING MOUNTPOINT [-f] [-d] [-o OPTIONS]
 *
 * Start-up order, chosen so that a refused mount changes nothing: parse
 * options and configuration, check the mount point, open and lock the
 * backing (flock: a second daemon on the same backing is refused), check
 * or create the catalog, rebuild the allocator from it, open, check and
 * lock the request log (not truncated yet), and only then grow the
 * backing, mount, and start the request log on that descriptor.  Without -f the process
 * forks first and the parent exits only when the mount answers requests
 * (or with the child's error), so scripts need no sleep.
 *
 * main() runs that order as named steps, each undone by teardown() as far
 * as it got: parse_cmdline(), check_mountpoint(), (the fork), load_config(),
 * open_devices(), open_catalog(), build_stacks(), prepare_log(), mount_fs(),
 * run_loop().
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "backing_scan.h"
#include "build_config.h"
#include "catalog.h"
#include "catalog_vfs.h"
#include "dev_volatile.h"
#include "fault.h"
#include "config.h"
#include "device_open.h"
#include "loop.h"
#include "reqlog.h"
#include "sfs.h"
#include "size.h"
#include "transport.h"
#include "units.h"

struct cmdline {
	char *backing;
	char **configs; /* every config=FILE, in order */
	size_t nconfigs;
	char *log;
	char *meta;
	char *size;
	char *transport;  /* -o transport=auto|uring|dev */
	char **overrides; /* SECTION.KEY=VALUE, in order */
	size_t noverrides;
	int nonopts;
	int nonempty; /* -o nonempty: mount over a mount point */
	int newfs;    /* -o newfs: a new file system (or device) over a backing that holds data */
	int moved;    /* -o moved: backings and catalog moved or copied together to new paths */
};

#define SFS_OPT(t, p) {t, offsetof(struct cmdline, p), 1}
#define SFS_KEY_CONFIG 1 /* config= may be given several times: collected in order */
static const struct fuse_opt sfs_opts[] = {
    FUSE_OPT_KEY("config=", SFS_KEY_CONFIG),
    SFS_OPT("log=%s", log),
    SFS_OPT("meta=%s", meta),
    SFS_OPT("size=%s", size),
    SFS_OPT("transport=%s", transport),
    /* Ours, not libfuse's: fuse3 dropped nonempty and would refuse it. */
    {"nonempty", offsetof(struct cmdline, nonempty), 1},
    {"newfs", offsetof(struct cmdline, newfs), 1},
    {"moved", offsetof(struct cmdline, moved), 1},
    FUSE_OPT_END,
};

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct cmdline *c = data;
	(void)outargs;
	if (key == FUSE_OPT_KEY_NONOPT) {
		if (c->nonopts++ == 0) {
			c->backing = strdup(arg);
			return 0;
		}
		return 1; /* the mount point, for fuse_parse_cmdline() */
	}
	if (key == SFS_KEY_CONFIG) {
		char **v = realloc(c->configs, (c->nconfigs + 1) * sizeof *v);
		if (!v || !(v[c->nconfigs] = strdup(arg + strlen("config="))))
			return -1;
		c->configs = v;
		c->nconfigs++;
		return 0;
	}
	if (key == FUSE_OPT_KEY_OPT) {
		const char *eq = strchr(arg, '=');
		const char *dot = strchr(arg, '.');
		if (eq && dot && dot < eq) {
			char **v = realloc(c->overrides, (c->noverrides + 1) * sizeof *v);
			if (!v)
				return -1;
			c->overrides = v;
			c->overrides[c->noverrides++] = strdup(arg);
			return 0;
		}
	}
	return 1;
}

static void usage(const char *prog)
{
	printf("usage: %s BACKING MOUNTPOINT [-f] [-d] [-o OPTIONS]\n\n"
	       "Stores every file of the mount on BACKING (a regular file or a block device),\n"
	       "placing each extent where the configured placement pattern says, and logs\n"
	       "every request.\n\n"
	       "scatterfs options:\n"
	       "    -o config=FILE         INI configuration (see conf/ and README); several\n"
	       "                           load in order, later keys overriding earlier ones\n"
	       "    -o log=FILE            request log (CSV; same as [log] path); an existing\n"
	       "                           log is replaced (any other file refused), a new\n"
	       "                           one created mode 0640; one log per mount (locked)\n"
	       "    -o meta=FILE           catalog (default BACKING.scatterfs; required for a\n"
	       "                           block device)\n"
	       "    -o size=BYTES          create or grow a regular-file BACKING to BYTES\n"
	       "                           (K/M/G/T suffixes; same as [device] size)\n"
	       "    -o nonempty            mount even where something is mounted already\n"
	       "                           (refused otherwise)\n"
	       "    -o newfs               start a new file system on a backing that holds\n"
	       "                           data and has no catalog, and a new [device \"NAME\"]\n"
	       "                           on one the catalog does not know (refused\n"
	       "                           otherwise: its data would be overwritten); see\n"
	       "                           scatterfs(1) for what counts as data\n"
	       "    -o moved               the backings and the catalog were moved or copied\n"
	       "                           together to new paths: take the catalog for them\n"
	       "                           (refused otherwise, as another backing's catalog)\n"
	       "    -o transport=auto|uring|dev\n"
	       "                           how requests travel: FUSE over io_uring (Linux\n"
	       "                           6.14, /sys/module/fuse/parameters/enable_uring = Y)\n"
	       "                           or /dev/fuse; auto (default) takes the ring when\n"
	       "                           the kernel offers it; uring refuses the mount\n"
	       "                           without it; .scatterfs/stats says which is used\n"
	       "    -o SECTION.KEY=VALUE   override any INI key, e.g. layout.pattern=random;\n"
	       "                           lists use ':' (log.ops=read:write); the disk\n"
	       "                           timing model is disk.model=hdd (presets in\n"
	       "                           conf/hdd-*.ini)\n"
	       "    the multi-threaded loop runs up to 64 worker threads unless\n"
	       "    -o max_threads=N says otherwise (libfuse's own list below gives\n"
	       "    its default of 10: scatterfs's default is 64); its workers read a\n"
	       "    write's data page-aligned for O_DIRECT devices (clone_fd runs\n"
	       "    libfuse's own loop, which does not)\n"
	       "    default_permissions is always on; use allow_other to let other users in\n"
	       "    (PostgreSQL runs as its own user).\n\n"
	       "Unmount with: fusermount3 -u MOUNTPOINT\n"
	       "Control files: MOUNTPOINT/.scatterfs/{stats,config,extents/PATH,layout/PATH,control}\n"
	       "    (stats: counters as JSON; config: the effective configuration;\n"
	       "    extents/PATH: the file's extent map as CSV; layout/PATH: its layout\n"
	       "    score; see scatterfs(1))\n\n"
	       "Configuration keys (-o SECTION.KEY=VALUE, or KEY = VALUE under [SECTION]):\n",
	       prog);
	config_write_help(stdout);
	printf("\nNamed sections (in INI files only; scatterfs.ini(5)):\n"
	       "    [file \"GLOB\"]        the [layout], [autoextend] and [cache] keys for\n"
	       "                           the files whose path from the root matches GLOB\n"
	       "    [device \"NAME\"]      a device besides main: backing, and the [device]\n"
	       "                           and [disk] keys; [file] rules' device = NAME\n"
	       "    [fault \"NAME\"]       a fault rule, on devices with faults in their\n"
	       "                           layers; its keys:");
	/* the keys' list, wrapped at 79 columns */
	int col = 79;
	for (const char *p = fault_keys_allowed; *p;) {
		size_t n = strcspn(p, " ");
		if (col + 1 + (int)n > 79) {
			printf("\n                          ");
			col = 26;
		}
		printf(" %.*s", (int)n, p);
		col += 1 + (int)n;
		p += n + (p[n] == ' ');
	}
	printf("\n\n");
}

/* Undoes mountinfo's octal escapes (\040 for a space, proc_pid_mountinfo(5)) in place. */
static void mountinfo_unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/*
 * Whether something is mounted on @dir (an absolute path without symbolic
 * links), from /proc/self/mountinfo: the last line for @dir is the mount
 * on top, whose fstype and source are copied to @fstype and @source, and
 * whose device number ("MAJ:MIN", the name of its bdi in /sys/class/bdi)
 * to @devnum when it is not NULL.
 */
static bool mounted_on(const char *dir, char *fstype, size_t ftlen, char *source, size_t srclen,
		       char *devnum, size_t devlen)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return false;
	char *line = NULL;
	size_t cap = 0;
	bool found = false;
	while (getline(&line, &cap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE ... */
		char *save = NULL, *field[5], *t;
		int n = 0;
		while (n < 5 && (field[n] = strtok_r(n ? NULL : line, " \n", &save)) != NULL)
			n++;
		if (n < 5)
			continue;
		mountinfo_unescape(field[4]);
		if (strcmp(field[4], dir) != 0)
			continue;
		while ((t = strtok_r(NULL, " \n", &save)) && strcmp(t, "-") != 0)
			;
		char *type = t ? strtok_r(NULL, " \n", &save) : NULL;
		char *src = type ? strtok_r(NULL, " \n", &save) : NULL;
		if (type)
			mountinfo_unescape(type);
		if (src)
			mountinfo_unescape(src);
		snprintf(fstype, ftlen, "%s", type ? type : "?");
		snprintf(source, srclen, "%s", src ? src : "?");
		if (devnum)
			snprintf(devnum, devlen, "%s", field[2]);
		found = true;
	}
	free(line);
	fclose(f);
	return found;
}

/* Child -> parent status pipe of the start-up fork. */
static int ready_fd = -1;

static void report_ready(int status)
{
	if (ready_fd >= 0) {
		unsigned char c = (unsigned char)status;
		if (write(ready_fd, &c, 1) < 0) {
			/* the parent is gone: nothing to tell */
		}
		close(ready_fd);
		ready_fd = -1;
	}
}

/* Forks; the parent waits for the child's status and exits with it. */
static void fork_and_wait(void)
{
	int p[2];
	if (pipe(p)) {
		perror("scatterfs: pipe");
		exit(1);
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("scatterfs: fork");
		exit(1);
	}
	if (pid > 0) {
		close(p[1]);
		unsigned char c = 1;
		ssize_t n;
		do
			n = read(p[0], &c, 1);
		while (n < 0 && errno == EINTR);
		/* _exit: the parent owns nothing worth an exit handler (and
		 * LeakSanitizer would count the child's allocations as leaks). */
		if (n != 1) {
			int st;
			waitpid(pid, &st, 0);
			_exit(WIFEXITED(st) && WEXITSTATUS(st) ? WEXITSTATUS(st) : 1);
		}
		_exit(c);
	}
	close(p[0]);
	ready_fd = p[1];
}

/*
 * flock(LOCK_EX) on @fd, waiting up to 5 s while another holds it (a
 * daemon that was just unmounted may still be closing).  false: another
 * mount holds it.  Any other flock() error counts as locked (the lock is
 * advice between scatterfs daemons; a file system without flock keeps
 * none).
 */
static bool lock_or_wait(int fd)
{
	for (int tries = 0; flock(fd, LOCK_EX | LOCK_NB); tries++) {
		if (errno != EWOULDBLOCK)
			return true;
		if (tries == 49)
			return false;
		usleep(100000);
	}
	return true;
}

/* Opens, checks and locks the backing of device @d; sets *size to its current size. */
static int open_backing(struct sfs *fs, struct device *d, uint64_t want_size, bool *created,
			uint64_t *size)
{
	struct stat st;
	*created = false;
	int flags = O_RDWR | O_CLOEXEC | (fs->cfg.device.direct ? O_DIRECT : 0);
	if (stat(fs->backing_path, &st) != 0) {
		if (errno != ENOENT || !want_size) {
			fprintf(stderr,
				"scatterfs: backing %s: %s%s\n", fs->backing_path, strerror(errno),
				errno == ENOENT ? " (give -o size=BYTES to create a backing file)"
						: "");
			return -1;
		}
		flags |= O_CREAT | O_EXCL;
		*created = true;
	} else if (S_ISDIR(st.st_mode)) {
		fprintf(stderr, "scatterfs: backing %s is a directory; give a regular file or a "
				"block device\n",
			fs->backing_path);
		return -1;
	} else if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		fprintf(stderr, "scatterfs: backing %s is neither a regular file nor a block device\n",
			fs->backing_path);
		return -1;
	}
	d->fd = open(fs->backing_path, flags, 0600);
	if (d->fd < 0) {
		fprintf(stderr, "scatterfs: cannot open backing %s: %s\n", fs->backing_path,
			strerror(errno));
		return -1;
	}
	d->direct = fs->cfg.device.direct;
	if (!lock_or_wait(d->fd)) {
		fprintf(stderr,
			"scatterfs: backing %s is in use by another scatterfs mount; a second "
			"mount of the same backing is refused\n",
			fs->backing_path);
		return -1;
	}
	if (fstat(d->fd, &st)) {
		perror("scatterfs: fstat backing");
		return -1;
	}
	d->blockdev = S_ISBLK(st.st_mode);
	if (S_ISBLK(st.st_mode)) {
		uint64_t bytes;
		if (ioctl(d->fd, BLKGETSIZE64, &bytes)) {
			perror("scatterfs: BLKGETSIZE64");
			return -1;
		}
		d->opened_bytes = bytes;
		if (want_size && want_size != bytes) {
			fprintf(stderr,
				"scatterfs: backing %s is a block device of %llu bytes; size= (or "
				"device.size) applies only to a regular-file backing\n",
				fs->backing_path, (unsigned long long)bytes);
			return -1;
		}
		*size = bytes;
		return 0;
	}
	*size = (uint64_t)st.st_size;
	d->opened_bytes = *size;
	if (want_size && want_size < *size) {
		fprintf(stderr,
			"scatterfs: backing %s is %llu bytes, larger than size=%llu; scatterfs never "
			"shrinks a backing (that would cost data)\n",
			fs->backing_path, (unsigned long long)*size, (unsigned long long)want_size);
		return -1;
	}
	if (want_size)
		*size = want_size;
	return 0;
}

/*
 * The mount reads the whole catalog (SQLite's quick_check, then every
 * extent), b-tree page by b-tree page in key order, which is not file
 * order: read it into the page cache first in large sequential reads.  A
 * cold catalog of 10 million extents (285 MB) then mounts in 2.2 s instead
 * of 5.9 s (readahead() and POSIX_FADV_WILLNEED did not help: they return
 * before the pages are in).
 * Best effort: errors are ignored.
 */
static void prefetch(int fd)
{
	const size_t chunk = MiB;
	char *buf = malloc(chunk);
	off_t off = 0;
	ssize_t got;
	if (!buf)
		return;
	while ((got = pread(fd, buf, chunk, off)) > 0)
		off += got;
	free(buf);
}

#define PAST_END_NAMED 5 /* files a refusal names before "and N more" */

/*
 * The files of recorded device @d with an extent ending past byte @end,
 * for a refusal: "'a', 'b' and N more" into @list; their count into
 * *@nfiles and the largest end into *@ext_end.  @return 0 or -1 (said).
 */
static int files_past(struct sfs *fs, struct device *d, uint64_t end, char *list, size_t size,
		      uint64_t *nfiles, uint64_t *ext_end)
{
	char *paths[PAST_END_NAMED];
	size_t np = 0, at = 0;
	int err = catalog_files_past(fs->cat, (unsigned)d->recorded, end, paths, PAST_END_NAMED,
				     &np, nfiles, ext_end);
	if (err) {
		fprintf(stderr, "scatterfs: catalog %s: cannot list the files on device '%s': %s\n",
			fs->meta_path, d->name, strerror(-err));
		return -1;
	}
	list[0] = '\0';
	for (size_t i = 0; i < np; i++) {
		int n = snprintf(list + at, size - at, "%s'%s'", i ? ", " : "", paths[i]);
		if (n > 0)
			at = at + (size_t)n < size ? at + (size_t)n : size - 1;
		free(paths[i]);
	}
	if (*nfiles > np)
		snprintf(list + at, size - at, " and %llu more", (unsigned long long)(*nfiles - np));
	return 0;
}

/*
 * Refuses a mount whose catalog has extents on @d past the end its backing
 * had when this mount opened it (before size= grew it): the backing was
 * truncated or shrunk, and those files' data past it is gone; growing it
 * again would only show zeros where the data was.  Names the files.
 * Asks the catalog only when @max_end, the end of its last run on @d, is
 * past the backing's (the query walks every directory).  @return 0 or -1.
 */
static int check_runs_in_backing(struct sfs *fs, struct device *d, uint64_t max_end)
{
	char list[2048];
	uint64_t nfiles = 0, ext_end = 0;

	if (max_end <= d->opened_bytes)
		return 0;
	if (files_past(fs, d, d->opened_bytes, list, sizeof list, &nfiles, &ext_end))
		return -1;
	if (nfiles == 0)
		return 0; /* only pattern gaps (no data) past the end: the checks below decide */
	fprintf(stderr,
		"scatterfs: device '%s': backing %s %s %llu bytes, but catalog %s has extents up "
		"to byte %llu of it, in %llu file%s: %s; their data past the backing's end is gone "
		"(the backing was truncated or shrunk): restore the backing, or give the catalog "
		"that belongs to it; refused whatever size= says (a grown backing would read zeros "
		"there)\n",
		d->name, d->path, d->created ? "was missing: created with" : "has",
		(unsigned long long)d->opened_bytes, fs->meta_path, (unsigned long long)ext_end,
		(unsigned long long)nfiles, nfiles == 1 ? "" : "s", list);
	return -1;
}

/*
 * Refuses a mount whose backing for @d was created anew since the catalog
 * last saw it (@id->recreated: another birth time at the same path) and
 * holds no data at all (SEEK_DATA finds none) while the catalog has files
 * with extents on it: the file was removed and made again empty (rm and
 * truncate -s), and every such file would read as zeros.  A restored copy
 * holds data and is taken.  A sparse copy of a file system whose files
 * held only zeros (or were only allocated) holds no data either, and is
 * refused too: the message says to copy it with cp --sparse=never.  Not
 * seen: a backing emptied in place (same birth time), one recreated with
 * any data in it, a file system without birth times, a block device.
 * @return 0 or -1.
 */
static int check_recreated(struct sfs *fs, struct device *d, const struct catalog_identity *id)
{
	char list[2048];
	uint64_t nfiles = 0, ext_end = 0;

	if (!id->recreated || lseek(d->fd, 0, SEEK_DATA) >= 0 || errno != ENXIO)
		return 0;
	if (files_past(fs, d, 0, list, sizeof list, &nfiles, &ext_end))
		return -1;
	if (nfiles == 0)
		return 0;
	fprintf(stderr,
		"scatterfs: device '%s': backing %s is a new file (created since catalog %s last "
		"saw it) and holds no data, but the catalog has extents on it in %llu file%s: %s; "
		"they would read as zeros: restore the backing the catalog belongs to (a copy "
		"whose files held only zeros: copy it again without holes, cp --sparse=never, "
		"not tar -S or rsync -S), or move the catalog away to start an empty file "
		"system\n",
		d->name, d->path, fs->meta_path, (unsigned long long)nfiles, nfiles == 1 ? "" : "s",
		list);
	return -1;
}

/*
 * Rebuilds the allocator of device @d from the catalog's runs in use, found
 * under the number the catalog records for @d (catalog_adopt() renumbers
 * them later); a device new to the catalog has none.  First refuses a
 * backing that lost files' extents (check_runs_in_backing()) or that was
 * created anew without them (check_recreated()), then one smaller than the
 * device the catalog records (@id->recorded_size).
 */
static int reserve_used(struct sfs *fs, struct device *d, const struct catalog_identity *id)
{
	uint64_t recorded_size = id->recorded_size;
	struct run_vec used = {0};
	struct run bad = {0};
	uint64_t max_end = 0;
	if (d->recorded < 0)
		return 0;
	int err = catalog_used_runs(fs->cat, (unsigned)d->recorded, &used);
	for (size_t i = 0; !err && i < used.n; i++)
		if (used.v[i].device + used.v[i].length > max_end)
			max_end = used.v[i].device + used.v[i].length;
	if (!err && (check_runs_in_backing(fs, d, max_end) || check_recreated(fs, d, id))) {
		run_vec_release(&used);
		return -1;
	}
	if (!err && recorded_size > d->size) {
		if (d->index == 0)
			fprintf(
			    stderr,
			    "scatterfs: %s describes a device of %llu bytes but the backing has "
			    "only %llu: wrong backing, or it was truncated\n",
			    fs->meta_path, (unsigned long long)recorded_size,
			    (unsigned long long)d->size);
		else
			fprintf(
			    stderr,
			    "scatterfs: device '%s': the catalog describes a device of %llu bytes "
			    "but backing %s has only %llu: wrong backing, or it was truncated\n",
			    d->name, (unsigned long long)recorded_size, d->path,
			    (unsigned long long)d->size);
		run_vec_release(&used);
		return -1;
	}
	if (!err)
		err = devalloc_reserve_all(d->alloc, used.v, used.n, &bad);
	run_vec_release(&used);
	if (err == -EEXIST || err == -EINVAL)
		fprintf(stderr,
			"scatterfs: catalog %s is inconsistent: device range %llu+%llu is %s (device "
			"'%s'); refusing to mount\n",
			fs->meta_path, (unsigned long long)bad.device,
			(unsigned long long)bad.length,
			err == -EEXIST ? "used twice" : "outside the device", d->name);
	else if (err)
		fprintf(stderr, "scatterfs: cannot load the catalog's extents %s: %s\n",
			fs->meta_path, strerror(-err));
	return err;
}

/*
 * Main's backing @d exists and its catalog does not: either a new file
 * system, or a backing whose catalog is elsewhere (a typo in meta=) or
 * lost, and an empty file system over it would overwrite its data.
 * Refused when the backing holds data (backing_find_data()) unless @newfs.
 * @return 0, or -1 with the reason on stderr.
 */
static int check_no_catalog(struct sfs *fs, struct device *d, bool meta_given, bool newfs)
{
	uint64_t at;
	char hint[PATH_MAX + 128] = "";
	struct stat st;
	int rc = backing_find_data(d->fd, d->blockdev, d->opened_bytes, &at);

	if (rc < 0) {
		fprintf(stderr,
			"scatterfs: backing %s has no catalog (%s) and cannot be read to see "
			"whether it holds data: %s\n",
			fs->backing_path, fs->meta_path, strerror(-rc));
		return -1;
	}
	if (rc == 0)
		return 0; /* nothing to lose: a new file system, silently */
	if (newfs) {
		fprintf(stderr,
			"scatterfs: -o newfs: starting an empty file system on %s, whose data "
			"(non-zero from byte %llu on) it will overwrite; catalog %s is new\n",
			fs->backing_path, (unsigned long long)at, fs->meta_path);
		return 0;
	}
	/* The catalog beside the backing, when meta= named another: a typo? */
	char *beside = NULL;
	if (meta_given && asprintf(&beside, "%s.scatterfs", fs->backing_path) < 0)
		beside = NULL;
	if (beside && strcmp(beside, fs->meta_path) != 0 && stat(beside, &st) == 0)
		snprintf(hint, sizeof hint, " (%s exists: is that its catalog?)", beside);
	free(beside);
	fprintf(stderr,
		"scatterfs: backing %s holds data (a non-zero byte at offset %llu) but its catalog "
		"%s does not exist%s; refusing to start an empty file system over it: give its "
		"catalog with -o meta=FILE, or -o newfs to start a new file system on it (its data "
		"will be overwritten)\n",
		fs->backing_path, (unsigned long long)at, fs->meta_path, hint);
	return -1;
}

/*
 * -o moved must take some backing the catalog records at another path and
 * id (@ids[0..fs->ndev), @cat_created: no catalog was there): else it is
 * refused, as -o newfs with nothing to start.  And what it takes must be a
 * copy of this file system alone: a taken backing with a catalog of its
 * own beside it is another file system's; and when main's backing was
 * taken while the one the catalog recorded (@moved_from) still has its
 * catalog, that file system still uses every device that did not move,
 * which the two would then share.  @return 0 or -1.
 */
static int check_moved(struct sfs *fs, const struct catalog_identity *ids, bool cat_created,
		       const char *moved_from)
{
	char beside[PATH_MAX + 16];
	bool some = false;
	for (unsigned i = 0; i < fs->ndev && !cat_created; i++) {
		if (!ids[i].relocated)
			continue;
		some = true;
		if (device_other_catalog(ids[i].backing_path, fs->meta_path, beside, sizeof beside)) {
			fprintf(stderr,
				"scatterfs: -o moved: device '%s': backing %s has a catalog of its own "
				"beside it (%s), so it is another file system's, not a copy of the one "
				"catalog %s records; give each file system its own backings\n",
				ids[i].name, ids[i].backing_path, beside, fs->meta_path);
			return -1;
		}
	}
	if (some && ids[0].relocated && moved_from[0] &&
	    device_other_catalog(moved_from, fs->meta_path, beside, sizeof beside)) {
		for (unsigned i = 1; i < fs->ndev; i++) {
			if (ids[i].recorded < 0 || ids[i].relocated)
				continue;
			fprintf(stderr,
				"scatterfs: -o moved: device '%s': backing %s did not move, and the file "
				"system this one was copied from (%s, catalog %s) still uses it: copy it "
				"too and name the copy in [device \"%s\"]\n",
				ids[i].name, ids[i].backing_path, moved_from, beside, ids[i].name);
			return -1;
		}
	}
	if (some)
		return 0;
	if (cat_created)
		fprintf(stderr, "scatterfs: -o moved: there is no catalog %s to take: drop -o moved\n",
			fs->meta_path);
	else
		fprintf(stderr,
			"scatterfs: -o moved: catalog %s records each backing of this mount at its "
			"path already: drop -o moved\n",
			fs->meta_path);
	return -1;
}

/*
 * -o newfs over a catalog that exists must start something: a device the
 * catalog does not know yet.  Otherwise it would be ignored silently (or
 * taken for a request to wipe the file system, which it is not).
 * @return 0, or -1 with the reason on stderr.
 */
static int check_newfs_has_work(struct sfs *fs)
{
	for (unsigned i = 1; i < fs->ndev; i++)
		if (fs->dev[i]->recorded < 0)
			return 0;
	fprintf(stderr,
		"scatterfs: -o newfs: catalog %s exists and records every device of this mount; "
		"newfs starts a file system only where there is no catalog (or a [device \"NAME\"] "
		"the catalog does not know): drop -o newfs to mount the file system it holds\n",
		fs->meta_path);
	return -1;
}

/*
 * The mount's readahead, /sys/class/bdi/MAJ:MIN/read_ahead_kb, where
 * MAJ:MIN is the device number of the mount on top of @mountpoint (an
 * absolute path) in /proc/self/mountinfo; @path receives the file's name.
 * @return 0, or -errno (-ENOENT: no such mount).
 */
static int readahead_path(const char *mountpoint, char *path, size_t len)
{
	char type[256], source[PATH_MAX], dev[64];
	if (!mounted_on(mountpoint, type, sizeof type, source, sizeof source, dev, sizeof dev))
		return -ENOENT;
	snprintf(path, len, "/sys/class/bdi/%s/read_ahead_kb", dev);
	return 0;
}

/*
 * Sets the mount's readahead to @bytes, between fuse_session_mount() and
 * the first request the daemon answers.  The kernel sends INIT while it
 * mounts and answers nothing else until INIT is answered, and the INIT
 * reply (max_readahead, sfs_init()) can only lower the bdi's value: so
 * written here, before the loop answers INIT, the value is in place before
 * any file can be opened (a file takes the bdi's readahead when it is
 * opened), and nothing of ours writes it later.  Written once INIT was
 * done, as the daemon used to, it raced with every opener and with a
 * script writing its own value right after the mount appeared.
 * Failures are reported, not fatal: the mount works with the kernel's.
 */
static void set_readahead(const char *mountpoint, uint64_t bytes)
{
	char path[128];
	int err = readahead_path(mountpoint, path, sizeof path);
	if (err) {
		fprintf(stderr, "scatterfs: cannot set readahead: %s: %s in /proc/self/mountinfo\n",
			mountpoint, strerror(-err));
		return;
	}
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "scatterfs: cannot set readahead (%s): %s\n", path,
			strerror(errno));
		return;
	}
	fprintf(f, "%llu\n", (unsigned long long)(bytes / 1024));
	if (fclose(f))
		fprintf(stderr, "scatterfs: cannot set readahead (%s): %s\n", path,
			strerror(errno));
}

/*
 * Once INIT is done: says so when the mount's readahead is not @bytes
 * (what cache.readahead asked for), as read back from the bdi.
 */
static void check_readahead(const char *mountpoint, uint64_t bytes)
{
	char path[128];
	unsigned long long kb;
	if (readahead_path(mountpoint, path, sizeof path))
		return;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	if (fscanf(f, "%llu", &kb) == 1 && kb != bytes / 1024)
		fprintf(stderr,
			"scatterfs: readahead of %s is %llu KiB (%s), not the %llu KiB of "
			"cache.readahead\n",
			mountpoint, kb, path, (unsigned long long)(bytes / 1024));
	fclose(f);
}

struct ready_arg {
	char *mountpoint;
	uint64_t readahead;
	bool foreground;
	bool keep_stderr; /* a daemon's stderr stays (no syslog here: mount_fs()) */
};

static void *ready_thread(void *p)
{
	struct ready_arg *r = p;
	struct statvfs sv;
	/* A request of our own: it returns only after the kernel has the INIT reply. */
	if (statvfs(r->mountpoint, &sv) == 0)
		check_readahead(r->mountpoint, r->readahead);
	report_ready(0);
	if (!r->foreground) {
		int fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			if (!r->keep_stderr)
				dup2(fd, 2);
			if (fd > 2)
				close(fd);
		}
	}
	return NULL;
}

/*
 * What main()'s steps share: the command line, the mount's state, and what
 * teardown() must undo (each step records what it made, so a refusal at
 * any step unwinds exactly that).
 */
struct start {
	struct fuse_args args;
	struct cmdline cl;
	struct fuse_cmdline_opts opts;
	struct sfs *fs;
	char err[1024];
	enum sfs_transport transport;
	uid_t mount_uid; /* the mount point's owner and group: the root directory's in a new catalog
			  */
	gid_t mount_gid;
	uint64_t dev_size; /* main's backing, bytes */
	struct catalog_identity ids[SFS_MAX_DEVICES];
	bool created;	  /* main's backing was created by this mount */
	bool cat_created; /* the catalog was created by this mount */
	char moved_from[PATH_MAX]; /* -o moved: main's backing path the catalog recorded */
	bool faults_ready;
	bool signals;  /* fuse_set_signal_handlers() done */
	bool mounted;  /* fuse_session_mount() done */
	bool loop_ran; /* run_loop() started the threads */
	int meta_fd;   /* the catalog, held open for its lock; -1 */
	int log_fd;    /* the request log, held open for its lock (prepare_log()); -1 */
	bool log_created;		       /* the log file was created by this mount */
	bool log_special;		       /* log= under /dev/ or /proc/ (/dev/stderr) */
	char *log_real;			       /* where the log is, symlinks followed; NULL */
	uint64_t grown_from[SFS_MAX_DEVICES]; /* a backing's size before mount_fs() grew it */
	bool grown[SFS_MAX_DEVICES];
	struct fuse_loop_config *loop;
	struct ready_arg ra;
};

/*
 * Step 1: the command line.  0 to go on; otherwise main() returns
 * *@exit_code at once (--help, --version, a usage error) or, when it is
 * -1, after teardown().
 */
/* libfuse's messages while the options are only checked: its errors, not its debug lines. */
static void probe_log(enum fuse_log_level level, const char *fmt, va_list ap)
{
	if (level <= FUSE_LOG_ERR)
		vfprintf(stderr, fmt, ap);
}

/* After libfuse's own line naming the options it does not know. */
static void options_not_understood(void)
{
	fprintf(stderr, "scatterfs: the options above were not understood; scatterfs's own "
			"are config=, log=, meta=, size=, nonempty, newfs, moved, transport= and "
			"SECTION.KEY=VALUE, with ':' between list items (log.ops=read:write); "
			"see --help\n");
}

static int parse_cmdline(struct start *s, int argc, char *argv[], int *exit_code)
{
	s->args = (struct fuse_args)FUSE_ARGS_INIT(argc, argv);
	*exit_code = 1;
	if (!s->fs || fuse_opt_parse(&s->args, &s->cl, sfs_opts, opt_proc))
		return 1;
	if (fuse_parse_cmdline(&s->args, &s->opts) != 0)
		return 1;
	if (s->opts.show_version) {
		printf("scatterfs %s (libfuse %s)\n", PACKAGE_VERSION, fuse_pkgversion());
		*exit_code = 0;
		return 1;
	}
	if (s->opts.show_help) {
		usage(argv[0]);
		printf("FUSE options:\n");
		fuse_cmdline_help();
		fuse_lowlevel_help();
		*exit_code = 0;
		return 1;
	}
	if (!s->cl.backing || !s->opts.mountpoint) {
		fprintf(stderr,
			"usage: %s BACKING MOUNTPOINT [-f] [-d] [-o OPTIONS] (--help for "
			"more)\n",
			argv[0]);
		*exit_code = 2;
		return 1;
	}
	/*
	 * Options libfuse does not know are named before anything else (a
	 * missing backing's message would hide a misspelt size=): it parses
	 * them in fuse_session_new(), which mounts nothing, on a copy.
	 */
	struct fuse_args probe = FUSE_ARGS_INIT(0, NULL);
	for (int i = 0; i < s->args.argc; i++)
		fuse_opt_add_arg(&probe, s->args.argv[i]);
	fuse_set_log_func(probe_log);
	struct fuse_session *se = fuse_session_new(&probe, &sfs_ops, sizeof sfs_ops, NULL);
	fuse_set_log_func(NULL); /* libfuse's own again */
	fuse_opt_free_args(&probe);
	if (!se) {
		options_not_understood();
		return 1;
	}
	fuse_session_destroy(se);
	*exit_code = -1;
	s->transport = TRANSPORT_AUTO;
	if (s->cl.transport && transport_parse(s->cl.transport, &s->transport)) {
		fprintf(stderr, "scatterfs: -o transport=%s: allowed: auto, uring, dev\n",
			s->cl.transport);
		return 1;
	}
	/* Before anything is created: a ring the kernel cannot give refuses the mount. */
	if (transport_check(s->transport, s->err, sizeof s->err)) {
		fprintf(stderr, "scatterfs: %s\n", s->err);
		return 1;
	}
	return 0;
}

/*
 * Step 2: the mount point is a live directory and no mount's (unless -o
 * nonempty).  0, or *@exit_code as parse_cmdline() gives it.
 */
static int check_mountpoint(struct start *s, int *exit_code)
{
	const char *mp = s->opts.mountpoint;
	struct stat mst;
	struct statvfs msv;
	/* statvfs() always asks a FUSE daemon (stat() may answer from the
	 * attribute cache), so it tells a stale mount point for sure: the
	 * kernel answers ENOTCONN once the connection is gone, and a request
	 * that waited while it went ECONNABORTED on /dev/fuse or ECANCELED on
	 * FUSE over io_uring (a daemon killed as we asked; a ring's daemon
	 * also in the moment after its exit, while the kernel tears the ring
	 * down). */
	if (statvfs(mp, &msv) || stat(mp, &mst) || !S_ISDIR(mst.st_mode)) {
		if (errno == ENOTCONN || errno == ECONNABORTED || errno == ECANCELED)
			fprintf(stderr,
				"scatterfs: %s is a stale mount (its daemon is gone); run "
				"fusermount3 -u %s first\n",
				mp, mp);
		else
			fprintf(stderr, "scatterfs: mount point %s: %s\n", mp,
				errno ? strerror(errno) : "not a directory");
		*exit_code = 1;
		return 1;
	}
	s->mount_uid = mst.st_uid;
	s->mount_gid = mst.st_gid;
	/*
	 * A mount over a live mount hides it: its files vanish from under
	 * whatever uses them (a second scatterfs over the first, or over a
	 * database's own file system), so it takes -o nonempty to say so.
	 */
	char *mreal = realpath(mp, NULL);
	char mtype[256], msource[PATH_MAX];
	if (!s->cl.nonempty && mreal && strcmp(mreal, "/") != 0 &&
	    mounted_on(mreal, mtype, sizeof mtype, msource, sizeof msource, NULL, 0)) {
		fprintf(stderr,
			"scatterfs: %s is already a mount point (%s from %s); unmount it first, or "
			"give -o nonempty to mount over it\n",
			mp, mtype, msource);
		free(mreal);
		*exit_code = -1; /* teardown() frees what the options allocated */
		return 1;
	}
	free(mreal);
	return 0;
}

/* Step 3: main's device and the configuration (files, -o overrides, size=, log=). */
static int load_config(struct start *s)
{
	struct sfs *fs = s->fs;
	struct cmdline *cl = &s->cl;
	char *err = s->err;
	size_t errlen = sizeof s->err;
	struct device *d = calloc(1, sizeof *d);
	if (!d)
		return -1;
	fs->dev[0] = d;
	fs->ndev = 1;
	d->index = 0;
	d->name = "main";
	d->fd = -1;
	d->recorded = 0; /* main is device 0 of every catalog */
	pthread_mutex_init(&d->alloc_lock, NULL);
	fs->entry_timeout = 60.0;
	fs->backing_path = realpath(cl->backing, NULL);
	if (!fs->backing_path) /* not there yet: created below */
		fs->backing_path = strdup(cl->backing);
	config_init(&fs->cfg);
	for (size_t i = 0; i < cl->nconfigs; i++) {
		if (config_load_file(&fs->cfg, cl->configs[i], err, errlen)) {
			fprintf(stderr, "scatterfs: %s\n", err);
			return -1;
		}
	}
	for (size_t i = 0; i < cl->noverrides; i++) {
		if (config_set(&fs->cfg, cl->overrides[i], err, errlen)) {
			fprintf(stderr, "scatterfs: %s\n", err);
			return -1;
		}
	}
	if (cl->size) {
		char a[128], o[128];
		snprintf(a, sizeof a, "device.size=%s", cl->size);
		snprintf(o, sizeof o, "size=%s", cl->size);
		if (config_set_option(&fs->cfg, a, o, err, errlen)) {
			uint64_t v;
			int rc = parse_size(cl->size, &v);
			char why[200];

			fprintf(stderr, "scatterfs: -o size=%s: %s\n", cl->size,
				rc ? size_error(cl->size, rc, why, sizeof why) : err);
			return -1;
		}
	}
	if (cl->log) {
		/* Through the key table, so that .scatterfs/config names -o log= as the origin. */
		char *a = NULL, *o = NULL;
		int rc =
		    asprintf(&a, "log.path=%s", cl->log) < 0 || asprintf(&o, "log=%s", cl->log) < 0
			? -ENOMEM
			: config_set_option(&fs->cfg, a, o, err, errlen);
		free(a);
		free(o);
		if (rc) {
			fprintf(stderr, "scatterfs: %s\n", rc == -ENOMEM ? "out of memory" : err);
			return -1;
		}
	}
	return 0;
}

/* Whether the resolved path @real is @mp_real or below it. */
static bool under(const char *real, const char *mp_real)
{
	size_t n = strlen(mp_real);
	return strcmp(mp_real, "/") != 0 && strncmp(real, mp_real, n) == 0 &&
	       (real[n] == '\0' || real[n] == '/');
}

/*
 * Whether @path would reach into @mp_real (resolved): the file as
 * realpath() resolves it (symlinks followed) where it exists; a dangling
 * symlink by its target (at most 40 links, as the kernel follows); a file
 * not there yet by its nearest existing ancestor directory.
 */
static bool inside_mountpoint(const char *path, const char *mp_real)
{
	char cur[PATH_MAX], link[PATH_MAX], next[2 * PATH_MAX];
	snprintf(cur, sizeof cur, "%s", path);
	for (int hops = 0; hops < 40; hops++) {
		char *real = realpath(cur, NULL);
		if (real) {
			bool in = under(real, mp_real);
			free(real);
			return in;
		}
		struct stat lst;
		ssize_t n;
		if (lstat(cur, &lst) || !S_ISLNK(lst.st_mode) ||
		    (n = readlink(cur, link, sizeof link - 1)) <= 0)
			break;
		link[n] = '\0';
		char *slash = strrchr(cur, '/');
		if (link[0] == '/' || !slash)
			snprintf(next, sizeof next, "%s", link);
		else
			snprintf(next, sizeof next, "%.*s/%s", (int)(slash - cur), cur, link);
		if (strlen(next) >= sizeof cur)
			break;
		memcpy(cur, next, strlen(next) + 1);
	}
	char *real = NULL;
	while (!real) { /* cur is not there: its nearest existing ancestor */
		char *slash = strrchr(cur, '/');
		if (!slash) {
			real = realpath(".", NULL);
			break;
		}
		if (slash == cur)
			slash[1] = '\0';
		else
			*slash = '\0';
		real = realpath(cur, NULL);
		if (slash == cur)
			break;
	}
	if (!real)
		return false;
	bool in = under(real, mp_real);
	free(real);
	return in;
}

/*
 * Before step 4 creates anything: no file the daemon opens by its name
 * (the backings, the catalog with its -wal and -shm, the request log) may
 * lie in the mount point.  Once mounted, the name would lead through the
 * daemon's own mount: the log is created after the mount but before the
 * daemon answers requests, so it would wait on itself for ever, and a
 * simulated crash reopens a backing by name.  0, or -1 after one line on
 * stderr.
 */
static int check_own_files(struct start *s)
{
	struct sfs *fs = s->fs;
	char *mp = realpath(s->opts.mountpoint, NULL);
	if (!mp)
		return 0; /* check_mountpoint() found it: it went since */
	const char *what[3 + SFS_MAX_DEVICES], *path[3 + SFS_MAX_DEVICES];
	unsigned n = 0;
	what[n] = "backing", path[n++] = s->cl.backing;
	if (s->cl.meta)
		what[n] = "catalog", path[n++] = s->cl.meta;
	if (fs->cfg.log.path)
		what[n] = "log", path[n++] = fs->cfg.log.path;
	for (size_t i = 0; i < fs->cfg.ndevices && n < sizeof path / sizeof path[0]; i++)
		what[n] = "backing", path[n++] = fs->cfg.devices[i].backing;
	int rc = 0;
	for (unsigned i = 0; i < n && !rc; i++) {
		if (path[i] && inside_mountpoint(path[i], mp)) {
			fprintf(stderr,
				"scatterfs: %s %s is inside the mount point %s: the daemon would "
				"reach it through its own mount; give a path outside it\n",
				what[i], path[i], mp);
			rc = -1;
		}
	}
	free(mp);
	return rc;
}

/*
 * Step 4: opens main's backing and the named devices' (their sizes are
 * what config_finish() checks the rules against), finishes the
 * configuration, and sizes main and names its catalog.
 */
static int open_devices(struct start *s)
{
	struct sfs *fs = s->fs;
	struct device *d = fs->dev[0];
	char *err = s->err;
	size_t errlen = sizeof s->err;
	if (check_own_files(s) ||
	    open_backing(fs, d, fs->cfg.device.size, &s->created, &s->dev_size))
		return -1;
	d->created = s->created;
	if (s->created) {
		char *rp = realpath(fs->backing_path, NULL);
		if (rp) {
			free(fs->backing_path);
			fs->backing_path = rp;
		}
	}
	/* The other devices' sizes, for config_finish()'s checks of the rules on them. */
	err[0] = '\0';
	if (devices_open(fs, err, errlen)) {
		fprintf(stderr, "scatterfs: %s\n", err[0] ? err : "out of memory");
		return -1;
	}
	if (config_finish(&fs->cfg, s->dev_size, err, errlen)) {
		fprintf(stderr, "scatterfs: %s\n", err);
		return -1;
	}
	/* A mount whose files are in both cache modes gets no write-back cache: say so. */
	if (!config_writeback(&fs->cfg, err, errlen) && err[0])
		fprintf(stderr, "scatterfs: warning: %s\n", err);
	d->path = fs->backing_path;
	d->block_size = fs->cfg.device.block_size;
	d->size = s->dev_size / d->block_size * d->block_size;
	if (d->size == 0) {
		fprintf(stderr,
			"scatterfs: backing %s is empty; give -o size=BYTES to make it usable\n",
			fs->backing_path);
		return -1;
	}
	if (s->cl.meta) {
		fs->meta_path = strdup(s->cl.meta);
	} else {
		struct stat bst;
		if (fstat(d->fd, &bst) == 0 && S_ISBLK(bst.st_mode)) {
			fprintf(stderr,
				"scatterfs: backing %s is a block device: give the catalog "
				"file with -o meta=FILE\n",
				fs->backing_path);
			return -1;
		}
		if (asprintf(&fs->meta_path, "%s.scatterfs", fs->backing_path) < 0)
			return -1;
	}
	return 0;
}

/*
 * Step 5: opens (or creates) the catalog, locked, and checks every
 * device against it (s->ids: what it recorded of each).
 */
static int open_catalog(struct start *s)
{
	struct sfs *fs = s->fs;
	struct device *d = fs->dev[0];
	char *err = s->err;
	size_t errlen = sizeof s->err;
	s->cat_created = access(fs->meta_path, F_OK) != 0;
	if (s->cat_created && !s->created &&
	    check_no_catalog(fs, d, s->cl.meta != NULL, s->cl.newfs))
		return -1;
	if (!s->cat_created) {
		/* The catalog is locked too: two daemons never share one (SQLite's
		 * own locks would let them take turns). */
		s->meta_fd = open(fs->meta_path, O_RDONLY | O_CLOEXEC);
		if (s->meta_fd >= 0 && flock(s->meta_fd, LOCK_EX | LOCK_NB)) {
			fprintf(
			    stderr,
			    "scatterfs: catalog %s is in use by another scatterfs mount; refused\n",
			    fs->meta_path);
			return -1;
		}
		if (s->meta_fd >= 0)
			prefetch(s->meta_fd);
	}
	struct stat bst0;
	fstat(d->fd, &bst0);
	struct catalog_identity id = {
	    .name = "main",
	    .index = 0,
	    .recorded = 0,
	    .device_size = d->size,
	    .block_size = d->block_size,
	    .backing_path = fs->backing_path,
	    .backing_id = device_backing_id(&bst0),
	    .backing_born_ns = device_backing_born_ns(d->fd),
	    .moved = s->cl.moved,
	    .moved_from = s->moved_from,
	    .moved_from_size = sizeof s->moved_from,
	};
	if (catalog_open(fs->meta_path, &id, s->mount_uid, s->mount_gid, &fs->cat, err, errlen)) {
		fprintf(stderr, "scatterfs: %s\n", err);
		s->cat_created = false;
		return -1;
	}
	/* A new one is 0600 (catalog_open()); an old one may predate that. */
	struct stat cst;
	if (!s->cat_created && stat(fs->meta_path, &cst) == 0 &&
	    (cst.st_mode & (S_IRGRP | S_IROTH)))
		fprintf(stderr,
			"scatterfs: warning: catalog %s is readable by other users (mode %04o) and "
			"holds every file's name, owner, size and extents: chmod 600 it\n",
			fs->meta_path, (unsigned)(cst.st_mode & 07777));
	s->ids[0] = id;
	err[0] = '\0';
	if (devices_check(fs, s->ids, s->cl.newfs, err, errlen)) {
		fprintf(stderr, "scatterfs: %s\n", err[0] ? err : "out of memory");
		return -1;
	}
	if (s->cl.newfs && !s->cat_created && check_newfs_has_work(fs))
		return -1;
	if (s->cl.moved && check_moved(fs, s->ids, s->cat_created, s->moved_from))
		return -1;
	if (s->meta_fd < 0) {
		s->meta_fd = open(fs->meta_path, O_RDONLY | O_CLOEXEC);
		if (s->meta_fd >= 0 && flock(s->meta_fd, LOCK_EX | LOCK_NB)) {
			fprintf(stderr,
				"scatterfs: catalog %s is in use by another scatterfs mount\n",
				fs->meta_path);
			return -1;
		}
	}
	return 0;
}

/*
 * Step 6: each device's allocator (what the catalog holds is used) and
 * stack of layers, and the fault rules; the last checks before anything
 * changes.
 */
static int build_stacks(struct start *s)
{
	struct sfs *fs = s->fs;
	char *err = s->err;
	size_t errlen = sizeof s->err;
	pthread_mutex_init(&fs->itable_lock, NULL);
	for (unsigned i = 0; i < fs->ndev; i++) {
		fs->dev_names[i] = fs->dev[i]->name;
		fs->dev[i]->faults = &fs->faults;
		fs->dev[i]->forgot = inode_note_wb_error;
		fs->dev[i]->forgot_ctx = fs;
	}
	fault_set_init(&fs->faults, fs->dev_names, fs->ndev);
	s->faults_ready = true;
	fs->splice_replies = true;
	for (unsigned i = 0; i < fs->ndev; i++) {
		struct device *dv = fs->dev[i];
		if (devalloc_create(dv->size, dv->block_size, &dv->alloc)) {
			fprintf(stderr, "scatterfs: cannot create the allocator\n");
			return -1;
		}
		if (reserve_used(fs, dv, &s->ids[i]))
			return -1;
		/* Each device its own stack: its own model, head and queue of I/Os. */
		const struct device_conf *dc = i ? &fs->cfg.devices[i - 1] : NULL;
		char *state = NULL;
		if (asprintf(&state, "%s.ftl.%s", fs->meta_path, dv->name) < 0)
			state = NULL;
		struct dev_layer_args la = {.disk = dc ? &dc->disk : &fs->cfg.disk,
					    .time_dilation = fs->cfg.time_dilation,
					    .state_path = state,
					    .state_load = !s->cat_created,
					    .poll_us = fs->cfg.device.poll_us,
					    .async_reads = fs->cfg.device.async_reads};
		if (dev_stack_build(dv, dc ? &dc->layers : &fs->cfg.device.layers,
				    dc ? dc->layer_data : fs->cfg.device.layer_data, &la, err,
				    errlen)) {
			free(state);
			fprintf(stderr, "scatterfs: %s\n", err);
			return -1;
		}
		free(state);
		fs->model_on |= dv->model_on;
		struct flash_stats none;
		fs->dies_on |= dev_flash_score(dv, NULL, 0, &none) == 0;
		fs->splice_replies &= dev_splice_ok(dv);
	}

	for (unsigned i = 0; i < fs->ndev; i++) {
		fs->fault_layer |= fault_layer_on(fs->dev[i]);
		fault_set_layer(&fs->faults, i, fault_layer_on(fs->dev[i]));
		fault_set_size(&fs->faults, i, fs->dev[i]->size);
	}
	if (fault_set_load(&fs->faults, fs->cfg.faults, fs->cfg.nfaults, err, errlen)) {
		fprintf(stderr, "scatterfs: %s\n", err);
		return -1;
	}
	return 0;
}

/*
 * Step 7: the request log (log=), checked before anything changes (its
 * place: check_own_files()).  It may not be a backing or the catalog (its
 * header would overwrite them), or another mount's log (flock, as the
 * backing has: two daemons' rows would interleave); it must be creatable.  The file is opened without
 * truncation, so a refused mount keeps the last mount's log; mount_fs()
 * truncates it.  A file created here is removed by teardown() when the
 * mount fails.  0, or -1 after one line on stderr.
 */
static int prepare_log(struct start *s)
{
	struct sfs *fs = s->fs;
	const char *path = fs->cfg.log.path;
	if (!path)
		return 0;
	/* /dev/stderr and the like name another's file: written, never truncated or locked */
	s->log_special = reqlog_names_other(path);
	/* O_EXCL tells a file this mount created; O_NONBLOCK a FIFO no one reads. */
	int fl = O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (s->log_special ? O_APPEND : 0);
	s->log_fd = open(path, fl | O_CREAT | O_EXCL, 0640);
	s->log_created = s->log_fd >= 0;
	if (s->log_fd < 0 && errno == EEXIST)
		s->log_fd = open(path, fl);
	if (s->log_fd < 0) {
		if (errno == ENXIO)
			fprintf(stderr,
				"scatterfs: log %s is a FIFO that no process reads; start its reader "
				"first\n",
				path);
		else
			fprintf(stderr, "scatterfs: cannot create log %s: %s\n", path,
				strerror(errno));
		return -1;
	}
	(void)fcntl(s->log_fd, F_SETFL, fcntl(s->log_fd, F_GETFL) & ~O_NONBLOCK);
	/* Where it really is (symlinks followed): what teardown() removes
	 * (check_own_files() kept it out of the mount point). */
	char proc[64], real[PATH_MAX];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", s->log_fd);
	ssize_t n = readlink(proc, real, sizeof real - 1);
	if (n > 0) {
		real[n] = '\0';
		s->log_real = strdup(real);
	}
	struct stat st;
	if (fstat(s->log_fd, &st) || !S_ISREG(st.st_mode) || s->log_special)
		return 0; /* a terminal, a pipe, /dev/stderr: many may write it */
	for (unsigned i = 0; i < fs->ndev; i++) {
		struct stat dst;
		if (fstat(fs->dev[i]->fd, &dst) == 0 && dst.st_dev == st.st_dev &&
		    dst.st_ino == st.st_ino) {
			fprintf(stderr,
				"scatterfs: log %s is the backing of device '%s'; give the log "
				"another path\n",
				path, fs->dev[i]->name);
			return -1;
		}
	}
	static const char *const cat_files[] = {"", "-wal", "-shm", "-journal"};
	for (size_t k = 0; k < sizeof cat_files / sizeof cat_files[0]; k++) {
		char cp[PATH_MAX + 16];
		struct stat cst;
		snprintf(cp, sizeof cp, "%s%s", fs->meta_path, cat_files[k]);
		if (stat(cp, &cst) == 0 && cst.st_dev == st.st_dev && cst.st_ino == st.st_ino) {
			fprintf(stderr,
				"scatterfs: log %s is the catalog%s%s; give the log another path\n",
				path, k ? "'s " : "", cat_files[k]);
			return -1;
		}
	}
	/*
	 * An existing file is replaced only if it is a request log (or empty):
	 * a mistyped log= must not truncate another mount's catalog, a
	 * database's file, anything else.
	 */
	if (!s->log_created && st.st_size > 0) {
		char head[6] = {0};
		int rfd = open(proc, O_RDONLY | O_CLOEXEC);
		ssize_t got = rfd >= 0 ? pread(rfd, head, sizeof head, 0) : -1;
		if (rfd >= 0)
			close(rfd);
		if (got != (ssize_t)sizeof head || memcmp(head, "ts_us,", sizeof head) != 0) {
			fprintf(stderr,
				"scatterfs: log %s exists and is not a request log (it does not begin "
				"with the header ts_us,...): scatterfs replaces only its own logs; "
				"give another path, or remove the file\n",
				path);
			return -1;
		}
	}
	if (!lock_or_wait(s->log_fd)) {
		fprintf(stderr,
			"scatterfs: log %s is in use by another scatterfs mount; give each mount "
			"its own log\n",
			path);
		return -1;
	}
	return 0;
}

/*
 * Step 8: everything checked, now change things: grow the backings, mount,
 * set up the transport, make the catalog durable, open the request log,
 * detach (without -f) and start the thread that reports the mount ready.
 */
static int mount_fs(struct start *s)
{
	struct sfs *fs = s->fs;
	int e;
	for (unsigned i = 0; i < fs->ndev; i++) {
		struct device *dv = fs->dev[i];
		uint64_t want = i ? fs->cfg.devices[i - 1].effective_size : s->dev_size;
		struct stat bst;
		if (fstat(dv->fd, &bst) == 0 && S_ISREG(bst.st_mode) &&
		    (uint64_t)bst.st_size < want) {
			if (ftruncate(dv->fd, (off_t)want)) {
				fprintf(stderr,
					"scatterfs: cannot grow backing %s to %llu bytes: %s\n",
					dv->path, (unsigned long long)want, strerror(errno));
				return -1;
			}
			/* teardown() shrinks it back if the mount then fails */
			s->grown_from[i] = (uint64_t)bst.st_size;
			s->grown[i] = true;
		}
		/* What a shrink under the mount will be measured from. */
		uint64_t bytes;
		if (dev_backing_size(dv->fd, dv->blockdev, &bytes) == 0)
			atomic_store(&dv->backing_bytes, bytes);
	}
	clock_gettime(CLOCK_MONOTONIC, &fs->start_mono);
	clock_gettime(CLOCK_REALTIME, &fs->start_realtime);

	struct inode *root = inode_get(fs, FUSE_ROOT_ID, 1, &e);
	if (!root) {
		fprintf(stderr, "scatterfs: catalog %s has no root directory\n", fs->meta_path);
		return -1;
	}
	root->path = strdup("");

	char fsname[PATH_MAX + 16];
	snprintf(fsname, sizeof fsname, "-ofsname=%s", fs->backing_path);
	fuse_opt_add_arg(&s->args, "-odefault_permissions");
	fuse_opt_add_arg(&s->args, "-osubtype=scatterfs");
	fuse_opt_add_arg(&s->args, fsname);
	fs->se = fuse_session_new(&s->args, &sfs_ops, sizeof sfs_ops, fs);
	if (!fs->se) {
		options_not_understood();
		return -1;
	}
	if (fuse_set_signal_handlers(fs->se))
		return -1;
	s->signals = true;
	if (fuse_session_mount(fs->se, s->opts.mountpoint)) {
		fprintf(stderr, "scatterfs: cannot mount on %s\n", s->opts.mountpoint);
		return -1;
	}
	s->mounted = true;
	unsigned max_threads = s->opts.singlethread ? 1
			       : s->opts.max_threads && s->opts.max_threads <= 100000
				   ? s->opts.max_threads
				   : 64;
	if ((e = transport_install(fs, s->transport, max_threads))) {
		fprintf(stderr, "scatterfs: cannot set up the transport: %s\n", strerror(-e));
		return -1;
	}
	dev_set_yield_fd(fuse_session_fd(fs->se));
	/* Durable now, so that an idle mount writes nothing more. */
	if (catalog_adopt(fs->cat, s->ids, fs->ndev) || catalog_sync(fs->cat)) {
		fprintf(stderr, "scatterfs: cannot update catalog %s\n", fs->meta_path);
		return -1;
	}
	if (fs->cfg.log.path) {
		/* The file prepare_log() opened, never its name again (it may lead
		 * into this mount now: a bind mount that the mount propagated to). */
		struct stat lst;
		if (!s->log_special && fstat(s->log_fd, &lst) == 0 && S_ISREG(lst.st_mode) &&
		    ftruncate(s->log_fd, 0)) {
			fprintf(stderr, "scatterfs: cannot truncate log %s: %s\n", fs->cfg.log.path,
				strerror(errno));
			return -1;
		}
		e = reqlog_open_fd(dup(s->log_fd), fs->cfg.log.path,
				fs->cfg.log.ops | (fs->model_on ? REQLOG_MODEL_US : 0) |
				    (fs->dies_on ? REQLOG_DIES : 0) |
				    (fs->fault_layer ? REQLOG_FAULT : 0),
				&fs->log);
		if (e) {
			fprintf(stderr, "scatterfs: cannot create log %s: %s\n", fs->cfg.log.path,
				strerror(-e));
			return -1;
		}
		for (unsigned i = 0; i < fs->ndev; i++)
			fs->dev_names[i] = fs->dev[i]->name;
		reqlog_set_devices(fs->log, fs->dev_names, fs->ndev);
	}
	bool keep_stderr = false;
	if (!s->opts.foreground) {
		/*
		 * Its stderr goes once the mount is up, and what it reports later (a
		 * full device, a shrunk backing) goes to syslog.  Where the system has
		 * no syslog (no /dev/log: a container) that would be lost, so stderr
		 * stays when it is a terminal or a file; a pipe goes all the same (a
		 * script reading it would wait for the daemon to exit).
		 */
		struct stat est;
		keep_stderr = access("/dev/log", F_OK) != 0 &&
			      (isatty(2) || (fstat(2, &est) == 0 && S_ISREG(est.st_mode)));
		if (!keep_stderr) {
			openlog("scatterfs", LOG_PID, LOG_DAEMON);
			dev_set_syslog(true);
		}
		setsid();
		if (chdir("/")) {
			/* keep going: only relative paths would suffer, and all are absolute */
		}
	}
	s->ra = (struct ready_arg){.mountpoint = realpath(s->opts.mountpoint, NULL),
				   .readahead = fs->cfg.defaults.cache.readahead,
				   .foreground = s->opts.foreground,
				   .keep_stderr = keep_stderr};
	if (s->ra.mountpoint)
		set_readahead(s->ra.mountpoint, s->ra.readahead);
	pthread_t rt;
	if (!s->ra.mountpoint || pthread_create(&rt, NULL, ready_thread, &s->ra)) {
		fprintf(stderr, "scatterfs: cannot start\n");
		return -1;
	}
	pthread_detach(rt);
	return 0;
}

/* The catalog's xSync hook: the data its rows point at is made durable first. */
static int flush_before_catalog(void *fs)
{
	return sfs_flush_ordered(fs, NULL);
}

/*
 * Step 9: serves requests until the file system is unmounted (or a
 * signal), with the sync thread and queued reads around it.  The loop's
 * status: 0, or 1.
 */
static int run_loop(struct start *s)
{
	struct sfs *fs = s->fs;
	const struct fuse_cmdline_opts *opts = &s->opts;
	int e, ret;
	s->loop_ran = true;
	s->loop = fuse_loop_cfg_create();
	fuse_loop_cfg_set_clone_fd(s->loop, (unsigned)opts->clone_fd);
	if (opts->max_idle_threads && opts->max_idle_threads <= 100000)
		fuse_loop_cfg_set_idle_threads(s->loop, opts->max_idle_threads);
	fuse_loop_cfg_set_max_threads(
	    s->loop, opts->max_threads && opts->max_threads <= 100000 ? opts->max_threads : 64);
	for (unsigned i = 0; i < fs->ndev; i++)
		fs->volatile_on |= dev_volatile_on(fs->dev[i]);
	catalog_vfs_before_sync(flush_before_catalog, fs);
	if (fs->volatile_on) {
		/* What the mount wrote so far is durable; from now on a crash decides. */
		if (sfs_flush_devices(fs, NULL, NULL) == 0)
			sfs_sync(fs, NULL);
		catalog_sync(fs->cat);
		catalog_vfs_track();
	}
	if (sfs_syncer_start(fs))
		fprintf(stderr, "scatterfs: cannot start the sync thread: no periodic flush\n");
	if ((e = io_queue_start(fs)))
		fprintf(stderr,
			"scatterfs: device.async_reads: cannot start queued reads (%s): every read "
			"waits for its device I/O\n",
			strerror(-e));
	/* Our own loop (loop.c: a WRITE's data page-aligned) unless clone_fd
	 * asks for libfuse's, which clones /dev/fuse per worker. */
	if (opts->singlethread)
		ret = fuse_session_loop(fs->se);
	else if (opts->clone_fd)
		ret = fuse_session_loop_mt(fs->se, s->loop);
	else
		ret = sfs_loop_run(
		    fs->se,
		    opts->max_threads && opts->max_threads <= 100000 ? opts->max_threads : 64,
		    opts->max_idle_threads <= 100000 ? opts->max_idle_threads : 0);
	return ret ? 1 : 0;
}

/*
 * Step 10: undoes what the steps did, in reverse, whichever step stopped:
 * a mount that never happened leaves no new file behind.  @ret: main()'s
 * status so far; returns the final one.
 */
static int teardown(struct start *s, int ret)
{
	struct sfs *fs = s->fs;
	if (s->loop_ran) {
		/* The ring before queued reads: its threads answer the reads they
		 * queued on their own rings from the queued reads' slots; the
		 * completion thread's reads came from /dev/fuse and answer there. */
		transport_stop(fs);
		io_queue_stop(fs);
		sfs_syncer_stop(fs);
		fuse_loop_cfg_destroy(s->loop);
	}
	free(s->ra.mountpoint);
	if (reqlog_close(fs->log))
		ret = 1;
	fs->log = NULL;
	/* A mount that never served leaves no new log (nor backing, catalog) behind. */
	if (ret && s->log_created && !s->loop_ran && s->log_real)
		unlink(s->log_real);
	free(s->log_real);
	if (s->log_fd >= 0)
		close(s->log_fd);
	if (s->mounted)
		fuse_session_unmount(fs->se);
	if (s->signals)
		fuse_remove_signal_handlers(fs->se);
	if (fs->se) {
		fuse_session_destroy(fs->se); /* calls destroy(): the inodes are flushed */
		transport_free(fs);
	}
	if (fs->cat)
		catalog_close(fs->cat);
	catalog_vfs_before_sync(NULL, NULL); /* the devices go next */
	/* A mount that never served leaves no new files behind. */
	if (ret && s->cat_created && !s->loop_ran)
		unlink(fs->meta_path);
	for (unsigned i = 0; i < fs->ndev; i++) {
		struct device *dv = fs->dev[i];
		/* A drive keeps its state across a clean unmount (an SSD's FTL). */
		if (s->mounted)
			dev_stack_save(dv);
		dev_stack_free(dv);
		/* nothing was written past the size it had: a failed mount gives the growth back */
		if (ret && s->grown[i] && !s->loop_ran && !dv->created &&
		    ftruncate(dv->fd, (off_t)s->grown_from[i]))
			fprintf(stderr, "scatterfs: cannot shrink backing %s back to %llu bytes: %s\n",
				dv->path, (unsigned long long)s->grown_from[i], strerror(errno));
		if (dv->fd >= 0) {
			fsync(dv->fd);
			close(dv->fd);
		}
	}
	if (s->meta_fd >= 0)
		close(s->meta_fd);
	if (ret && s->created && !s->loop_ran)
		unlink(fs->backing_path);
	for (unsigned i = 0; i < fs->ndev; i++) {
		if (i && ret && fs->dev[i]->created && !s->loop_ran)
			unlink(fs->dev[i]->path); /* main's: above */
		devalloc_destroy(fs->dev[i]->alloc);
		sfs_pending_release(fs->dev[i]);
		if (i)
			free(fs->dev[i]->path);
		free(fs->dev[i]);
	}
	report_ready(ret ? ret : 1);
	fuse_opt_free_args(&s->args);
	for (size_t i = 0; i < s->cl.noverrides; i++)
		free(s->cl.overrides[i]);
	free(s->cl.overrides);
	free(s->cl.backing);
	for (size_t i = 0; i < s->cl.nconfigs; i++)
		free(s->cl.configs[i]);
	free(s->cl.configs);
	free(s->cl.log);
	free(s->cl.meta);
	free(s->cl.size);
	free(s->cl.transport);
	free(s->opts.mountpoint);
	if (s->faults_ready)
		fault_set_release(&fs->faults);
	config_free(&fs->cfg);
	free(fs->backing_path);
	free(fs->meta_path);
	free(fs);
	return ret;
}

int main(int argc, char *argv[])
{
	static struct start s = {.meta_fd = -1, .log_fd = -1};
	int code;
	s.fs = calloc(1, sizeof *s.fs);
	if (parse_cmdline(&s, argc, argv, &code) || check_mountpoint(&s, &code)) {
		if (code >= 0)
			return code;
		return teardown(&s, 1);
	}
	if (!s.opts.foreground)
		fork_and_wait();
	if (load_config(&s) || open_devices(&s) || open_catalog(&s) || build_stacks(&s) ||
	    prepare_log(&s) || mount_fs(&s))
		return teardown(&s, 1);
	return teardown(&s, run_loop(&s));
}
