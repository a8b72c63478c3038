/*
 * The ssd disk model ([disk] model = ssd): a NAND flash drive behind a
 * page-level FTL, timed per die, per channel, for the controller and for
 * the host interface.  The simulator is ssd_ftl.c (ssd.h says what it
 * models and how); this file is its face to the daemon: its keys, their
 * check, and its struct disk_model_ops.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "config_i.h"
#include "disk_model.h"
#include "ssd.h"

#define OWN(field)    .home = CONFIG_MODEL_DATA, .offset = offsetof(struct ssd_params, field)
#define RANGE(lo, hi) .flags = CONFIG_HAS_MIN | CONFIG_HAS_MAX, .min = (lo), .max = (hi)
#define ABOVE(lo, hi)                                                                              \
	.flags = CONFIG_HAS_MIN | CONFIG_MIN_OPEN | CONFIG_HAS_MAX, .min = (lo), .max = (hi)

static const struct config_key ssd_keys[] = {
    {"disk", "channels", CONFIG_U32, OWN(channels), RANGE(1, SSD_CHANNELS_MAX),
     .range_why = "allowed: 1 to 256", .def = "8", .help = "flash channels"},
    {"disk", "ways", CONFIG_U32, OWN(ways), RANGE(1, SSD_WAYS_MAX),
     .range_why = "allowed: 1 to 256", .def = "4", .help = "dies per channel"},
    {"disk", "page_size", CONFIG_SIZE32, OWN(page_size), RANGE(512, 1 << 20), .multiple = 512,
     .range_why = "allowed: a multiple of 512 from 512 to 1M", .def = "4K",
     .help = "flash page: the unit a die reads and programs and the FTL maps"},
    {"disk", "pages_per_block", CONFIG_U32, OWN(pages_per_block), RANGE(2, 65535),
     .range_why = "allowed: 2 to 65535 (a block holds at least two pages)", .def = "64",
     .help = "pages per erase block"},
    {"disk", "over_provisioning", CONFIG_DOUBLE, OWN(over_provisioning), ABOVE(0, 10),
     .range_why = "allowed: above 0 up to 10 (spare flash as a fraction of the capacity)",
     .def = "0.0995", .help = "spare flash as a fraction of the user capacity"},
    {"disk", "read_us", CONFIG_DOUBLE, OWN(read_us), ABOVE(0, 1e6),
     .range_why = "allowed: above 0 up to 1000000", .def = "40",
     .help = "page read (tR) in microseconds"},
    {"disk", "program_us", CONFIG_DOUBLE, OWN(program_us), ABOVE(0, 1e6),
     .range_why = "allowed: above 0 up to 1000000", .def = "200",
     .help = "page program (tPROG) in microseconds"},
    {"disk", "erase_us", CONFIG_DOUBLE, OWN(erase_us), ABOVE(0, 1e7),
     .range_why = "allowed: above 0 up to 10000000", .def = "2000",
     .help = "block erase (tERASE) in microseconds"},
    {"disk", "command_us", CONFIG_DOUBLE, OWN(command_us), RANGE(0, 1e6),
     .range_why = "allowed: 0 to 1000000", .def = "5",
     .help = "controller time per command in microseconds"},
    {"disk", "channel_mb_s", CONFIG_DOUBLE, OWN(channel_mb_s), ABOVE(0, 1e6),
     .range_why = "allowed: above 0 up to 1000000", .def = "400",
     .help = "one channel's transfer rate in MB/s (10^6 bytes)"},
    {"disk", "host_mb_s", CONFIG_DOUBLE, OWN(interface_mb_s), ABOVE(0, 1e6),
     .range_why = "allowed: above 0 up to 1000000", .def = "560",
     .help = "host interface rate in MB/s (10^6 bytes)"},
    {"disk", "queue_depth", CONFIG_U32, OWN(queue_depth), RANGE(1, 65535),
     .range_why = "allowed: 1 to 65535", .def = "32", .help = "commands the drive takes at once"},
    {"disk", "gc_free_blocks", CONFIG_U32, OWN(gc_free_blocks), RANGE(1, 65535),
     .range_why = "allowed: 1 to 65535", .def = "1",
     .help = "garbage collection runs when a die has at most this many free blocks"},
    {"disk", "prefill", CONFIG_BOOL, OWN(prefill), .def = "true",
     .help = "start with every page written once in address order (false: empty)"},
    {"disk", "write_buffer", CONFIG_BOOL, OWN(write_cache), .def = "true",
     .help = "DRAM write buffer (WCE): writes complete in it, a flush waits"},
    {"disk", "write_buffer_size", CONFIG_SIZE, OWN(cache_size), RANGE(512, 1ull << 40),
     .range_why = "allowed: 512 to 1T, at least one page", .def = "64M",
     .help = "bytes of the DRAM write buffer"},
};

static int ssd_model_create(const void *params, uint64_t capacity, void **out, char *err,
			    size_t errlen)
{
	char why[512]; /* the geometry's refusal runs to some 300 characters */
	int rc = ssd_create(params, capacity, (struct ssd **)out, why, sizeof(why));
	if (rc == -EINVAL)
		snprintf(err, errlen, "[disk] model = ssd: %s", why);
	return rc;
}

static int ssd_model_fits(const void *params, uint64_t capacity, char *err, size_t errlen)
{
	char why[512];
	int rc = ssd_check(params, capacity, why, sizeof(why));
	if (rc == -EINVAL)
		snprintf(err, errlen, "[disk] model = ssd: %s", why);
	return rc;
}

static uint64_t ssd_model_submit(void *model, enum disk_op op, uint64_t off, uint64_t len,
				 uint64_t arrival_ns, struct disk_io *out)
{
	struct ssd_io io;
	enum ssd_op o = op == DISK_READ ? SSD_READ : op == DISK_WRITE ? SSD_WRITE : SSD_WRITE_FUA;

	ssd_submit(model, o, off, len, arrival_ns, &io);
	*out = (struct disk_io){.start_ns = io.start_ns,
				.complete_ns = io.complete_ns,
				.busy_ns = io.busy_ns,
				.dies = io.dies,
				.collisions = io.collisions};
	return io.complete_ns;
}

static uint64_t ssd_model_flush(void *model, uint64_t now_ns, struct disk_io *out)
{
	struct ssd_io io;

	ssd_flush(model, now_ns, &io);
	*out = (struct disk_io){
	    .start_ns = io.start_ns, .complete_ns = io.complete_ns, .busy_ns = io.busy_ns};
	return io.complete_ns;
}

/* A trim takes no flash time: the FTL only drops map entries. */
static uint64_t ssd_model_trim(void *model, uint64_t off, uint64_t len, uint64_t now_ns,
			       struct disk_io *out)
{
	ssd_trim(model, off, len);
	*out = (struct disk_io){.start_ns = now_ns, .complete_ns = now_ns};
	return now_ns;
}

static void ssd_model_counters(void *model, disk_emit_fn emit, void *ctx)
{
	struct ssd_counters c;
	uint64_t blocks = (uint64_t)ssd_dies(model) * ssd_blocks_per_die(model);

	ssd_get_counters(model, &c);
	emit(ctx, "host_pages_written", c.host_pages);
	emit(ctx, "flash_pages_written", c.flash_pages);
	/* write amplification in thousandths: flash / host pages */
	emit(ctx, "waf_milli", c.host_pages ? c.flash_pages * 1000 / c.host_pages : 0);
	emit(ctx, "gc_runs", c.gc_runs);
	emit(ctx, "gc_pages_moved", c.pages_moved);
	emit(ctx, "erases_min", c.erases_min);
	emit(ctx, "erases_mean_milli", blocks ? c.erases_total * 1000 / blocks : 0);
	emit(ctx, "erases_max", c.erases_max);
	emit(ctx, "gc_wait_ns", c.gc_wait_ns);
	emit(ctx, "reads", c.reads);
	emit(ctx, "read_pages", c.read_pages);
	emit(ctx, "read_collisions", c.collisions);
	/* per read, its longest wait on a busy die, summed: what collisions cost */
	emit(ctx, "read_collision_wait_ns", c.collision_wait_ns);
	/* dies touched per read in thousandths: splitting against collisions */
	emit(ctx, "read_dies_milli", c.reads ? c.read_dies * 1000 / c.reads : 0);
	emit(ctx, "trims", c.trims);
}

/*
 * The expected figures of a steady workload (disk_model_ops.expect()), the
 * bounds the presets' comments derive (ssd.h):
 *  - a read of @size bytes alone: command + tR + one page over its channel
 *    + @size over the host interface (its pages on different dies read in
 *    parallel; the host transfer of a long read hides the rest); at queue
 *    depth @qd, min(1 / command, @qd / that), the bound without die
 *    collisions;
 *  - writes (random or sequential, before garbage collection): min(@size
 *    / (command + @size over the host), dies x page / (page over its
 *    channel + tPROG + tERASE / pages_per_block)), the host bound and the
 *    array's program bound.
 * Times in us; MB/s = bytes per us.
 */
static int ssd_expect(const void *params, uint64_t capacity, const struct disk_workload *w,
		      disk_figure_fn emit, void *ctx, char *err, size_t errlen)
{
	const struct ssd_params *p = params;
	const double size = (double)w->size, dies = (double)p->channels * p->ways;
	const double page_ch_us = p->page_size / p->channel_mb_s;
	double iops;

	(void)capacity;
	if (w->op == DISK_READ) {
		double lat1 = p->command_us + p->read_us + page_ch_us + size / p->interface_mb_s;

		iops = w->qd * 1e6 / lat1;
		if (p->command_us > 0 && 1e6 / p->command_us < iops)
			iops = 1e6 / p->command_us;
		emit(ctx, "latency_qd1_us", lat1);
	} else if (w->op == DISK_WRITE) {
		double host = size / (p->command_us + size / p->interface_mb_s);
		double array = dies * p->page_size /
			       (page_ch_us + p->program_us + p->erase_us / p->pages_per_block);

		emit(ctx, "host_mb_s", host);
		emit(ctx, "array_mb_s", array);
		iops = (host < array ? host : array) / size * 1e6;
	} else {
		snprintf(err, errlen, "ssd: no expected figure for that operation");
		return -EINVAL;
	}
	emit(ctx, "dies", dies);
	emit(ctx, "latency_us", w->qd * 1e6 / iops);
	emit(ctx, "iops", iops);
	emit(ctx, "mb_s", iops * size / 1e6);
	emit(ctx, "mib_s", iops * size / 1048576.0);
	return 0;
}

static uint64_t ssd_model_page_bytes(void *model)
{
	return ssd_page_size(model);
}

static int ssd_model_die_of(void *model, uint64_t off)
{
	return ssd_die_of(model, off);
}

static int ssd_model_save(void *model, int fd)
{
	return ssd_save(model, fd);
}

static int ssd_model_load(void *model, int fd, char *err, size_t errlen)
{
	return ssd_load(model, fd, err, errlen);
}

static void ssd_model_destroy(void *model)
{
	ssd_destroy(model);
}

const struct disk_model_ops ssd_model = {
    .name = "ssd",
    .order = 2,
    .keys = ssd_keys,
    .nkeys = sizeof(ssd_keys) / sizeof(ssd_keys[0]),
    .params_size = sizeof(struct ssd_params),
    .create = ssd_model_create,
    .fits = ssd_model_fits,
    .submit = ssd_model_submit,
    .flush = ssd_model_flush,
    .trim = ssd_model_trim,
    .page_bytes = ssd_model_page_bytes,
    .die_of = ssd_model_die_of,
    .counters = ssd_model_counters,
    .save = ssd_model_save,
    .load = ssd_model_load,
    .expect = ssd_expect,
    .destroy = ssd_model_destroy,
};
DISK_MODEL_REGISTER(ssd_model);
