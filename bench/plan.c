/*
 * scatterfs-plan CONFIG PATH SIZE: the extent map a file at PATH would get
 * on a scatterfs mount with CONFIG when written sequentially from 0 to
 * SIZE, printed as the CSV of MOUNTPOINT/.scatterfs/extents/PATH.
 *
 * It drives the same layout library the daemon uses (allocator, placement
 * pattern, autoextend planner) over an in-memory allocator of the
 * configured device size, so what it prints is what a mount on an empty
 * backing device of that size will do for a writer that appends one
 * device block at a time, as a database extending a datafile does.
 *
 * Such a writer only triggers work when a write passes the allocated end:
 * every write below it lands on space already allocated.  So instead of
 * one layout_allocate() per block, the tool issues only the block-sized
 * writes at the allocated end, one per autoextend event; the map is the
 * same, and the cost is per extent, not per block.  (Writing in 1 MiB
 * chunks would be fast too but not the same: with a step that is not a
 * multiple of the extent size, one 1 MiB write grows by several steps at
 * once, rounding up only once.)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "autoextend.h"
#include "config.h"
#include "disk_model.h"
#include "extmap.h"
#include "layout_score.h"
#include "plan_clone.h"
#include "size.h"
#ifdef PLAN_WITH_DAEMON
#include "fault.h"
#endif

#define DEFAULT_DEVICE_SIZE (UINT64_C(1) << 40) /* 1 TiB when [device] size is unset */

static void usage(void)
{
	printf("usage: scatterfs-plan [--device-size BYTES] CONFIG PATH SIZE\n"
	       "       scatterfs-plan --check [--device-size BYTES] [--parse-only] [CONFIG]\n"
	       "                      [--set SECTION.KEY=VALUE]...\n"
	       "       scatterfs-plan --dump [--explicit] [--device-size BYTES] [CONFIG]\n"
	       "                      [--set SECTION.KEY=VALUE]...\n"
	       "       scatterfs-plan --expect [--device-size BYTES] [CONFIG] [--set S.K=V]...\n"
	       "                      [--op read|write] [--size BYTES] [--qd N]\n"
	       "                      [--pattern random|sequential] [--cache empty|full]\n"
	       "       scatterfs-plan clone DIR [--out CONFIG]\n"
	       "\n"
	       "Prints the extent map (CSV logical_offset,device_offset,length) that the\n"
	       "file PATH (relative to the mount root) would get on a scatterfs mount\n"
	       "configured by the INI file CONFIG, written sequentially from 0 to SIZE\n"
	       "bytes (suffixes K, M, G, T = powers of 1024) on an empty backing device of\n"
	       "[device] size (1T when unset).  A mount uses the backing's real size:\n"
	       "give it with --device-size to get the same map (the random pattern wraps\n"
	       "at the device end).  After the map, a summary line goes to standard\n"
	       "error: \"# extents=E runs=R blocks=B scored=S contiguous=C\n"
	       "layout_score=F largest_jump=J\" (Smith and Seltzer's layout score over\n"
	       "[device] block_size blocks, largest jump in bytes).\n"
	       "\n"
	       "clone writes CONFIG (default clone.ini) that reproduces the layout of the\n"
	       "regular files under DIR (their FIEMAP extent maps, written to CONFIG.maps/):\n"
	       "one [file] rule with pattern = map per file, keeping the files' relative\n"
	       "physical positions, the lowest at device offset 0.  Files FIEMAP cannot\n"
	       "map are named on standard error and placed contiguously.  As the source\n"
	       "reads through the kernel's page cache, CONFIG sets cache.mode = kernel and\n"
	       "cache.readahead = the read_ahead_kb of the block device under DIR (within\n"
	       "4K to 1M), and says so, in CONFIG and on standard error.\n"
	       "\n"
	       "With --check it prints nothing and exits 0 when the mount would accept\n"
	       "CONFIG (the built-in defaults without one) with the overrides, in order,\n"
	       "as -o SECTION.KEY=VALUE would give them (lists with ':'); otherwise it\n"
	       "prints the daemon's message for the first error and exits 1.\n"
	       "\n"
	       "With --dump it loads the configuration as --check does and prints every\n"
	       "key of the effective configuration (what MOUNTPOINT/.scatterfs/config\n"
	       "would hold), one SECTION.KEY=VALUE line each, in the order and with the\n"
	       "values .scatterfs/config writes (lists joined with ','); the keys of a\n"
	       "[device \"NAME\"] or [file \"GLOB\"] section as device \"NAME\".KEY=VALUE\n"
	       "and file \"GLOB\".KEY=VALUE.  --explicit keeps only the keys that CONFIG\n"
	       "(or a file it includes) or a --set wrote.\n"
	       "\n"
	       "With --expect it loads the configuration as --check does and prints what\n"
	       "the [disk] model's own formula expects of one steady workload: --qd\n"
	       "requests (default 1) of --size bytes (default 4K) always in flight,\n"
	       "--op read (default) or write, at --pattern random (default) or\n"
	       "sequential offsets, writes into an --cache empty (default) or full drive\n"
	       "write cache; one NAME=VALUE line each: latency_us (per request, queueing\n"
	       "included), iops, mb_s (10^6 bytes/s), mib_s and the model's terms\n"
	       "(hdd: seek_ms, rotation_ms, transfer_ms, link_ms, mean_gap_bytes; ssd:\n"
	       "latency_qd1_us, host_mb_s, array_mb_s, dies).  The disk's capacity is\n"
	       "[disk] capacity, else --device-size, else [device] size.\n"
	       "\n"
	       "  --device-size BYTES   the backing device's size (overrides [device] size)\n"
	       "  --check               validate a configuration without mounting\n"
	       "  --set SECTION.KEY=VALUE  with --check, --dump or --expect: one override (repeatable)\n"
	       "  --dump                print the effective configuration as KEY=VALUE lines\n"
	       "  --explicit            with --dump: only the keys CONFIG or --set wrote\n"
	       "  --expect              print the disk model's expected figures for a workload\n"
	       "  --op read|write       with --expect: the requests' operation (default read)\n"
	       "  --size BYTES          with --expect: bytes per request (default 4K)\n"
	       "  --qd N                with --expect: requests in flight (default 1)\n"
	       "  --pattern random|sequential  with --expect: offsets (default random)\n"
	       "  --cache empty|full    with --expect: the drive's write cache (default empty)\n"
	       "  --parse-only          with --check: check each key and value alone, not\n"
	       "                        how they combine (no device-size or pattern checks)\n"
	       "  -h, --help            print this help and exit\n"
	       "\n"
	       "Exit status: 0 on success, 1 on a configuration or allocation error,\n"
	       "2 on a usage error.\n");
}

/*
 * Writes [0, @size) sequentially in blocks of the allocator's block size,
 * skipping the writes below the allocated end (see the top of the file).
 * @return 0 or -errno with @failed_at set to the write's logical offset.
 */
static int write_sequentially(const struct file_params *fp, struct devalloc *a, unsigned dev,
			      struct extent_map *map, struct run_vec *gaps, uint64_t size,
			      uint64_t *failed_at)
{
	const uint64_t block = devalloc_block_size(a);
	struct alloc_plan plan = {0};
	uint64_t end;
	int rc = 0;

	while ((end = extmap_end(map)) < size) {
		uint64_t chunk = size - end < block ? size - end : block;

		rc = layout_allocate_on(fp, a, dev, map, gaps, end, chunk, &plan);
		if (rc == 0 && extmap_end(map) <= end)
			rc = -EIO; /* the planner did not cover the write: a bug, do not spin */
		if (rc < 0) {
			*failed_at = end;
			break;
		}
	}
	alloc_plan_release(&plan);
	return rc;
}

/*
 * --check, --dump and --expect load a configuration the same way, in the
 * same order as the daemon's start-up (file, then each override, then
 * config_finish()), so that a script can refuse a bad configuration before
 * it mounts anything, or read its values without parsing INI itself.  The
 * daemon checks against the backing's real size; 0 leaves the size checks
 * out.  @what names the mode in messages; @extra (may be NULL) says
 * whether argv[i] is an option of the mode taking @extra_args[i] values,
 * which load_config() skips.  @return 0 with @c loaded (the caller frees
 * it), or the exit status (1 or 2) after printing the message.
 */
struct plan_opts {
	const char *file;
	uint64_t device_size;
	bool finish;
};

static int mode_option_args(const char *const *opts, const char *arg)
{
	for (size_t k = 0; opts != NULL && opts[k] != NULL; k++)
		if (strcmp(opts[k] + 1, arg) == 0)
			return opts[k][0] - '0';
	return -1;
}

#ifdef PLAN_WITH_DAEMON
/*
 * The [fault "NAME"] sections of @c, as the daemon loads them at mount
 * (fault_set_load(), fs/fault.c): each key and value, a rule with no
 * effect, a device named or a range past its end, a rule where no device
 * has the fault layer.  @main_size: main's bytes (0 = not known).
 * @return 0, or -errno with the daemon's message in @err.
 */
static int check_faults(const struct sfs_config *c, uint64_t main_size, char *err, size_t errlen)
{
	const char *names[64] = {"main"};
	size_t n = 1;
	for (size_t i = 0; i < c->ndevices && n < 64; i++)
		names[n++] = c->devices[i].name;
	struct fault_set s;
	fault_set_init(&s, names, n);
	for (size_t i = 0; i < n; i++) {
		const struct config_layers *l = i ? &c->devices[i - 1].layers : &c->device.layers;
		bool on = false;
		for (unsigned k = 0; k < l->n; k++)
			on |= strcmp(l->name[k], "faults") == 0;
		fault_set_layer(&s, i, on);
		fault_set_size(&s, i, i ? c->devices[i - 1].effective_size : main_size);
	}
	int rc = fault_set_load(&s, c->faults, c->nfaults, err, errlen);
	fault_set_release(&s);
	return rc;
}
#endif

static int load_config(int argc, char **argv, const char *what, const char *const *mode_opts,
		       struct sfs_config *c, struct plan_opts *o)
{
	char err[1024] = "";
	int rc = 0, i, n;

	o->file = NULL;
	o->device_size = 0;
	o->finish = true;
	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--device-size") == 0) {
			if (i + 1 >= argc || parse_size(argv[i + 1], &o->device_size) < 0) {
				fprintf(stderr, "scatterfs-plan: --device-size needs a size in bytes "
						"(K/M/G/T suffixes), not '%s'\n",
					i + 1 >= argc ? "" : argv[i + 1]);
				return 2;
			}
			i++;
		} else if (strcmp(argv[i], "--parse-only") == 0 && mode_opts == NULL) {
			o->finish = false;
		} else if (strcmp(argv[i], "--set") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "scatterfs-plan: --set needs SECTION.KEY=VALUE\n");
				return 2;
			}
			i++;
		} else if ((n = mode_option_args(mode_opts, argv[i])) >= 0) {
			if (i + n >= argc) {
				fprintf(stderr, "scatterfs-plan: %s needs a value\n", argv[i]);
				return 2;
			}
			i += n;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			fprintf(stderr, "scatterfs-plan: unknown option '%s' with %s\n", argv[i], what);
			return 2;
		} else if (o->file == NULL) {
			o->file = argv[i];
		} else {
			fprintf(stderr, "scatterfs-plan: %s takes one CONFIG, not also '%s'\n", what,
				argv[i]);
			return 2;
		}
	}

	config_init(c);
	if (o->file != NULL)
		rc = config_load_file(c, o->file, err, sizeof(err));
	if (rc < 0 && err[0] == '\0')
		snprintf(err, sizeof(err), "%s: %s", o->file, strerror(-rc));
	for (i = 0; rc == 0 && i < argc; i++) {
		if (strcmp(argv[i], "--device-size") == 0) {
			i++;
		} else if (strcmp(argv[i], "--set") == 0) {
			rc = config_set(c, argv[++i], err, sizeof(err));
		} else if ((n = mode_option_args(mode_opts, argv[i])) > 0) {
			i += n;
		}
	}
	if (rc == 0 && o->finish) {
		uint64_t device_size = o->device_size ? o->device_size : c->device.size;

		rc = config_finish(c, device_size, err, sizeof(err));
		/* each device's disk model at its size, as the timing layer checks it at mount */
		for (size_t d = 0; rc == 0 && d <= c->ndevices; d++)
			rc = disk_model_fits(d ? &c->devices[d - 1].disk : &c->disk,
					     d ? c->devices[d - 1].name : "main",
					     d ? c->devices[d - 1].effective_size
					       : c->device.effective_size,
					     NULL, err, sizeof(err));
#ifdef PLAN_WITH_DAEMON
		if (rc == 0)
			rc = check_faults(c, c->device.effective_size, err, sizeof(err));
#endif
		if (rc < 0 && err[0] == '\0')
			snprintf(err, sizeof(err), "%s", strerror(-rc));
	}
	if (rc < 0) {
		config_free(c);
		fprintf(stderr, "scatterfs-plan: %s\n", err);
		return 1;
	}
	return 0;
}

/* --check: load, say nothing. */
static int check_config(int argc, char **argv)
{
	struct sfs_config c;
	struct plan_opts o;
	int rc = load_config(argc, argv, "--check", NULL, &c, &o);

	if (rc == 0)
		config_free(&c);
	return rc;
}

/*
 * --dump: every key of the effective configuration (what the mount's
 * .scatterfs/config would hold) as one "SECTION.KEY=VALUE" line, from
 * config_write_ini()'s text, so that the INI syntax is read in one place.
 * A [device "NAME"] or [file "GLOB"] section's keys are written
 * 'device "NAME".KEY=VALUE' and 'file "GLOB".KEY=VALUE'.  With
 * --explicit, only the keys a file or a --set wrote (those with a
 * "# set at" or "# set by" comment above them).  Lists keep their ','.
 */
static int dump_config(int argc, char **argv)
{
	static const char *const opts[] = {"0--explicit", NULL};
	struct sfs_config c;
	struct plan_opts o;
	bool explicit_only = false, set_above = false;
	char section[512] = "";
	int rc = load_config(argc, argv, "--dump", opts, &c, &o);

	if (rc != 0)
		return rc;
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "--explicit") == 0)
			explicit_only = true;
	char *text = config_write_ini(&c);
	config_free(&c);
	if (text == NULL) {
		fprintf(stderr, "scatterfs-plan: %s\n", strerror(ENOMEM));
		return 1;
	}
	for (char *line = text, *next; line != NULL && *line != '\0'; line = next) {
		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		if (line[0] == '#') {
			if (strncmp(line, "# set at ", 9) == 0 || strncmp(line, "# set by ", 9) == 0)
				set_above = true;
			continue;
		}
		if (line[0] == '[') {
			char *end = strrchr(line, ']');

			if (end != NULL)
				*end = '\0';
			snprintf(section, sizeof(section), "%s", line + 1);
			set_above = false;
			continue;
		}
		char *eq = strstr(line, " = ");
		if (eq != NULL && (!explicit_only || set_above)) {
			*eq = '\0';
			printf("%s.%s=%s\n", section, line, eq + 3);
		}
		set_above = false;
	}
	free(text);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "scatterfs-plan: writing the dump: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

static void print_figure(void *ctx, const char *name, double value)
{
	(void)ctx;
	printf("%s=%.9g\n", name, value);
}

/*
 * --expect: the main device's disk model's expected figures for one steady
 * workload (disk_model_ops.expect()), one NAME=VALUE line each, so that
 * bench/disk checks a model against the model's own formula.  The disk's
 * capacity: [disk] capacity, else --device-size, else [device] size.
 */
static int expect_config(int argc, char **argv)
{
	static const char *const opts[] = {"1--op", "1--size", "1--qd", "1--pattern", "1--cache",
					   NULL};
	struct sfs_config c;
	struct plan_opts o;
	struct disk_workload w = {.op = DISK_READ, .size = 4096, .qd = 1};
	char err[512] = "";
	int rc;

	for (int i = 0; i + 1 < argc; i++) {
		const char *v = argv[i + 1];
		const char *allowed = NULL; /* what the option takes, when @v is refused */
		char why[160];
		uint64_t n;
		int src;

		if (strcmp(argv[i], "--op") == 0) {
			allowed = "read or write";
			if (strcmp(v, "read") != 0 && strcmp(v, "write") != 0)
				goto bad;
			w.op = v[0] == 'r' ? DISK_READ : DISK_WRITE;
		} else if (strcmp(argv[i], "--size") == 0) {
			allowed = "bytes above 0, K/M/G/T suffixes";
			if ((src = parse_size(v, &w.size)) < 0) {
				allowed = size_error(v, src, why, sizeof why);
				goto bad;
			}
			if (w.size == 0)
				goto bad;
		} else if (strcmp(argv[i], "--qd") == 0) {
			allowed = "1 to 65535";
			if (parse_size(v, &n) < 0 || n == 0 || n > 65535 || strpbrk(v, "KMGTkmgt"))
				goto bad;
			w.qd = (uint32_t)n;
		} else if (strcmp(argv[i], "--pattern") == 0) {
			allowed = "random or sequential";
			if (strcmp(v, "random") != 0 && strcmp(v, "sequential") != 0)
				goto bad;
			w.sequential = v[0] == 's';
		} else if (strcmp(argv[i], "--cache") == 0) {
			allowed = "empty or full";
			if (strcmp(v, "empty") != 0 && strcmp(v, "full") != 0)
				goto bad;
			w.cache_full = v[0] == 'f';
		} else {
			continue;
		}
		i++;
		continue;
bad:
		fprintf(stderr, "scatterfs-plan: %s '%s': %s%s\n", argv[i], v,
			allowed == why ? "" : "allowed: ", allowed);
		return 2;
	}
	rc = load_config(argc, argv, "--expect", opts, &c, &o);
	if (rc != 0)
		return rc;
	const struct disk_model_ops *m = c.disk.model;
	uint64_t capacity = c.disk.capacity       ? c.disk.capacity
			    : o.device_size	  ? o.device_size
						  : c.device.size;
	if (m == NULL || m->expect == NULL) {
		fprintf(stderr, "scatterfs-plan: --expect: [disk] model = %s has no expected figures\n",
			m ? m->name : "none");
		rc = 1;
	} else if (capacity == 0) {
		fprintf(stderr, "scatterfs-plan: --expect: the disk's capacity is unknown: give "
				"--device-size, [device] size or [disk] capacity\n");
		rc = 1;
	} else if (m->expect(disk_model_params(&c.disk, m), capacity, &w, print_figure, NULL, err,
			     sizeof(err)) < 0) {
		fprintf(stderr, "scatterfs-plan: --expect: %s\n", err);
		rc = 1;
	}
	config_free(&c);
	return rc;
}

int main(int argc, char **argv)
{
	struct sfs_config c;
	struct devalloc *a = NULL;
	struct extent_map map;
	struct run_vec gaps = {0};
	const struct file_params *fp;
	const char *path;
	uint64_t size, device_size, failed_at = 0;
	char err[1024] = "";
	int rc, status = 1;

	uint64_t forced_size = 0;
	if (argc > 1 && strcmp(argv[1], "clone") == 0) {
		if (argc == 3)
			return plan_clone(argv[2], "clone.ini");
		if (argc == 5 && strcmp(argv[3], "--out") == 0)
			return plan_clone(argv[2], argv[4]);
		fprintf(stderr, "usage: scatterfs-plan clone DIR [--out CONFIG]\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--check") == 0 || strcmp(argv[i], "--dump") == 0 ||
		    strcmp(argv[i], "--expect") == 0) {
			/* --check, --dump and --expect may come anywhere: drop it, pass the rest on. */
			char mode = argv[i][2];

			memmove(&argv[i], &argv[i + 1], (size_t)(argc - i) * sizeof(*argv));
			return mode == 'd'   ? dump_config(argc - 2, argv + 1)
			       : mode == 'e' ? expect_config(argc - 2, argv + 1)
					     : check_config(argc - 2, argv + 1);
		}
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage();
			return 0;
		}
	}
	/* --device-size anywhere, as GNU tools take options after operands */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--device-size") != 0) {
			if (strncmp(argv[i], "--", 2) == 0 && argv[i][2]) {
				fprintf(stderr,
					"scatterfs-plan: unknown option '%s'\nTry 'scatterfs-plan "
					"--help' for more information.\n",
					argv[i]);
				return 2;
			}
			continue;
		}
		if (i + 1 >= argc || parse_size(argv[i + 1], &forced_size) < 0 ||
		    forced_size == 0) {
			fprintf(stderr,
				"scatterfs-plan: --device-size needs a size in bytes "
				"(K/M/G/T suffixes), not '%s'\n",
				i + 1 >= argc ? "" : argv[i + 1]);
			return 2;
		}
		memmove(&argv[i], &argv[i + 2], (size_t)(argc - i - 1) * sizeof(*argv));
		argc -= 2;
		i--;
	}
	if (argc != 4) {
		fprintf(stderr,
			"scatterfs-plan: expected CONFIG PATH SIZE, got %d argument%s\n"
			"usage: scatterfs-plan [--device-size BYTES] CONFIG PATH SIZE\n"
			"Try 'scatterfs-plan --help' for more information.\n",
			argc - 1, argc == 2 ? "" : "s");
		return 2;
	}
	rc = parse_size(argv[3], &size);
	if (rc < 0) {
		fprintf(stderr, "scatterfs-plan: bad SIZE '%s': %s\n", argv[3],
			rc == -ERANGE ? "too large"
				      : "expected digits with an optional K, M, G or T");
		return 2;
	}
	path = argv[2];
	while (*path == '/')
		path++;

	config_init(&c);
	rc = config_load_file(&c, argv[1], err, sizeof(err));
	if (rc < 0) {
		if (err[0] != '\0')
			fprintf(stderr, "scatterfs-plan: %s\n", err);
		else
			fprintf(stderr, "scatterfs-plan: %s: %s\n", argv[1], strerror(-rc));
		goto out_config;
	}
	device_size = forced_size     ? forced_size
		      : c.device.size ? c.device.size
				      : DEFAULT_DEVICE_SIZE;
	/*
	 * A [device "NAME"] section's backing is not opened: its size is its
	 * size key, else --device-size, else the default, as for main.
	 */
	for (size_t i = 0; i < c.ndevices; i++)
		c.devices[i].effective_size = c.devices[i].size ? c.devices[i].size
					      : forced_size	? forced_size
								: DEFAULT_DEVICE_SIZE;
	rc = config_finish(&c, device_size, err, sizeof(err));
	if (rc < 0) {
		if (err[0] != '\0')
			fprintf(stderr, "scatterfs-plan: %s\n", err);
		else
			fprintf(stderr, "scatterfs-plan: %s: %s\n", argv[1], strerror(-rc));
		goto out_config;
	}
	fp = config_for_path(&c, path);
	/* The file's device: main, or the [device "NAME"] its rule names. */
	int di = config_device_index(&c, fp->device);
	uint32_t block_size = di > 0 ? c.devices[di - 1].block_size : c.device.block_size;
	if (di > 0)
		device_size = c.devices[di - 1].effective_size;

	rc = devalloc_create(device_size, block_size, &a);
	if (rc < 0) {
		fprintf(stderr, "scatterfs-plan: device of %llu bytes, blocks of %u: %s\n",
			(unsigned long long)device_size, block_size, strerror(-rc));
		goto out_config;
	}
	extmap_init(&map);
	rc = write_sequentially(fp, a, (unsigned)di, &map, &gaps, size, &failed_at);
	if (rc < 0) {
		fprintf(stderr, "scatterfs-plan: %s: cannot allocate at logical offset %llu: %s\n",
			path, (unsigned long long)failed_at, strerror(-rc));
		goto out_map;
	}
	/* The same CSV as MOUNTPOINT/.scatterfs/extents/PATH (a device column with several). */
	const char *names[CONFIG_MAX_DEVICES + 1] = {"main"};
	for (size_t i = 0; i < c.ndevices; i++)
		names[i + 1] = c.devices[i].name;
	rc = extmap_write_csv_devices(&map, names, (unsigned)c.ndevices + 1, stdout);
	if (rc == 0 && fflush(stdout) != 0)
		rc = -errno;
	if (rc < 0) {
		fprintf(stderr, "scatterfs-plan: writing the map: %s\n", strerror(-rc));
		goto out_map;
	}
	/*
	 * The summary goes to standard error so that standard output stays the
	 * same CSV as .scatterfs/extents/PATH, comparable byte for byte.
	 */
	struct layout_stats ls;
	char line[256];
	if (layout_score_extmap(&map, block_size, &ls) == 0) {
		layout_stats_format(&ls, line, sizeof(line));
		fprintf(stderr, "# %s\n", line);
	}
	status = 0;

out_map:
	run_vec_release(&gaps);
	extmap_release(&map);
	devalloc_destroy(a);
out_config:
	config_free(&c);
	return status;
}
