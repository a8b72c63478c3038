/*
 * A throw-away device layer, built only for the tests (the scatterfs-late
 * daemon of tests/mount/late-decline.sh): a layer that lets a request's
 * first device run splice and declines the others, so the I/O path meets
 * pread_fd's -EOPNOTSUPP after it decided to splice the reply and after
 * a run of the request already spliced.  The fault layer does the same
 * when a rule is added while a read is under way.
 *
 * "late" has pread_fd and no pread (a copy passes through it), so its
 * device's replies splice.  Its counters, in .scatterfs/stats under the
 * device's "late" object: spliced (runs it let splice) and declined (runs
 * it answered -EOPNOTSUPP).  It has no keys.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "device.h"

struct late {
	atomic_uint_fast64_t spliced, declined;
};

/* The request whose run this thread saw last: its record and arrival time. */
static __thread const struct dev_req *last_req;
static __thread uint64_t last_arrival;

static int late_pread_fd(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off,
			 int *fd)
{
	struct late *t = l->priv;
	/* A request's record lives on its thread's stack: the next request
	 * may have the same address, never the same arrival time as well. */
	if (r && r == last_req && r->arrival_ns == last_arrival) {
		atomic_fetch_add(&t->declined, 1);
		return -EOPNOTSUPP;
	}
	last_req = r;
	last_arrival = r ? r->arrival_ns : 0;
	int err = dev_layer_pread_fd(l->next, r, len, off, fd);
	if (!err)
		atomic_fetch_add(&t->spliced, 1);
	return err;
}

static void late_counters(struct dev_layer *l,
			  void (*emit)(void *ctx, const char *name, uint64_t value), void *ctx)
{
	struct late *t = l->priv;
	emit(ctx, "spliced", atomic_load(&t->spliced));
	emit(ctx, "declined", atomic_load(&t->declined));
}

static const struct dev_ops late_ops = {
    .pread_fd = late_pread_fd,
    .counters = late_counters,
};

static const struct dev_layer_type late_layer = {
    .cfg = {.name = "late"},
    .ops = &late_ops,
    .priv_size = sizeof(struct late),
};
DEV_LAYER_REGISTER(late_layer);
