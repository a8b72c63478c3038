/*
 * The timing model layer: charges each device I/O what the modelled disk
 * would take (layout/disk_model.h) and records its completion in the
 * request, then passes the I/O on unchanged.  The model is one virtual
 * head per device, so I/Os of one device are served in the order they
 * reach this layer; its lock serializes them.
 *
 * A reply that waits for the model is copied into memory anyway, so this
 * layer refuses to let a read be spliced from the backing (pread_fd) and
 * never queues reads (submit_reads): both would only hide the time the
 * reply must wait.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "device.h"

struct dev_timing {
	struct dev_layer l;
	pthread_mutex_t lock;
	struct disk_model model; /* under lock */
};

static struct dev_timing *timing_of(struct dev_layer *l)
{
	return (struct dev_timing *)l;
}

/* Charges [off, off+len) on the model for @r (its arrival is the submission time). */
static void charge(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off,
		   enum disk_dir dir)
{
	struct dev_timing *t = timing_of(l);
	struct disk_io_cost c;
	if (!len)
		return;
	uint64_t now = r ? r->arrival_ns : mono_ns();
	pthread_mutex_lock(&t->lock);
	uint64_t done = disk_model_submit(&t->model, now, off, len, dir, &c);
	pthread_mutex_unlock(&t->lock);
	atomic_fetch_add(&l->dev->counters.busy_ns, c.complete_ns - c.start_ns);
	if (r && done > r->complete_ns)
		r->complete_ns = done;
}

static int timing_pread(struct dev_layer *l, struct dev_req *r, void *buf, uint64_t len,
			uint64_t off)
{
	charge(l, r, len, off, DISK_READ);
	return l->next->ops->pread(l->next, r, buf, len, off);
}

static int timing_pread_fd(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off,
			   int *fd)
{
	return -EOPNOTSUPP;
}

static int timing_pwrite(struct dev_layer *l, struct dev_req *r, const void *buf, uint64_t len,
			 uint64_t off)
{
	charge(l, r, len, off, DISK_WRITE);
	return l->next->ops->pwrite(l->next, r, buf, len, off);
}

static int timing_zero(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off,
		       enum zero_fill mode)
{
	if (mode != ZERO_FILL_NONE)
		charge(l, r, len, off, DISK_WRITE);
	return l->next->ops->zero(l->next, r, len, off, mode);
}

static int timing_flush(struct dev_layer *l, struct dev_req *r)
{
	return l->next->ops->flush(l->next, r);
}

static int timing_submit_reads(struct dev_layer *l, struct dev_req *r, struct dev_aio *ios,
			       size_t n)
{
	return -EOPNOTSUPP;
}

static const struct dev_ops timing_ops = {
	.name = "timing",
	.pread = timing_pread,
	.pread_fd = timing_pread_fd,
	.pwrite = timing_pwrite,
	.zero = timing_zero,
	.flush = timing_flush,
	.submit_reads = timing_submit_reads,
};

struct dev_layer *dev_timing_create(struct device *d, struct dev_layer *next,
				    const struct disk_params *disk, int *rc)
{
	struct dev_timing *t = calloc(1, sizeof *t);
	if (!t) {
		*rc = -ENOMEM;
		return NULL;
	}
	*rc = disk_model_init(&t->model, disk, d->size);
	if (*rc) {
		free(t);
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	t->l = (struct dev_layer){.ops = &timing_ops, .next = next, .dev = d};
	return &t->l;
}
