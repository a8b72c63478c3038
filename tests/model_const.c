/*
 * A throw-away disk timing model, built only for the tests (the
 * scatterfs-const daemon of tests/mount/newmodel.sh): it proves that a
 * model with a key of its own is one source file and one meson line, with
 * no edit anywhere in layout/ or fs/, as tests/pattern_stripe.c does for
 * placement patterns.
 *
 * "const" completes every device I/O disk.latency_us microseconds after it
 * arrives, whatever its offset, length or direction, with no queueing (as
 * many I/Os in service at once as arrive): a device whose every command
 * takes one fixed time.  Busy time is the union of the I/Os' service
 * intervals (iostat's io_ticks), so it never grows faster than the clock.
 * It has no write cache (a flush waits for nothing) and ignores trims.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "config_i.h"
#include "disk_model.h"

/* The model's own key, in its slice of disk_params.model_data. */
struct const_params {
	double latency_us; /* each I/O's time from arrival to completion */
};

static const struct config_key const_keys[] = {
    {"disk", "latency_us", CONFIG_DOUBLE, CONFIG_MODEL_DATA,
     offsetof(struct const_params, latency_us),
     .flags = CONFIG_HAS_MIN | CONFIG_HAS_MAX | CONFIG_WHY_ALL, .min = 0, .max = 1e6,
     .range_why = "a constant-latency device takes from 0 to 1000000 microseconds per I/O",
     .def = "100", .help = "microseconds from each I/O's arrival to its completion"},
};

struct const_model {
	uint64_t latency_ns;
	uint64_t busy_until_ns; /* the end of the last service interval */
	uint64_t ios;
};

static int const_create(const void *params, uint64_t capacity, void **out, char *err, size_t errlen)
{
	const struct const_params *p = params;
	struct const_model *m = calloc(1, sizeof(*m));

	(void)capacity;
	(void)err;
	(void)errlen;
	if (!m)
		return -ENOMEM;
	m->latency_ns = (uint64_t)(p->latency_us * 1000 + 0.5);
	*out = m;
	return 0;
}

static uint64_t const_submit(void *model, enum disk_op op, uint64_t off, uint64_t len,
			     uint64_t arrival_ns, struct disk_io *out)
{
	struct const_model *m = model;
	uint64_t done = arrival_ns + m->latency_ns;
	uint64_t from = arrival_ns > m->busy_until_ns ? arrival_ns : m->busy_until_ns;

	(void)op;
	(void)off;
	(void)len;
	*out = (struct disk_io){
	    .start_ns = arrival_ns, .complete_ns = done, .busy_ns = done > from ? done - from : 0};
	if (done > m->busy_until_ns)
		m->busy_until_ns = done;
	m->ios++;
	return done;
}

static void const_counters(void *model, disk_emit_fn emit, void *ctx)
{
	emit(ctx, "ios", ((struct const_model *)model)->ios);
}

static void const_destroy(void *model)
{
	free(model);
}

static const struct disk_model_ops const_model = {
    .name = "const",
    .keys = const_keys,
    .nkeys = sizeof(const_keys) / sizeof(const_keys[0]),
    .params_size = sizeof(struct const_params),
    .create = const_create,
    .submit = const_submit,
    .counters = const_counters,
    .destroy = const_destroy,
};
DISK_MODEL_REGISTER(const_model);
