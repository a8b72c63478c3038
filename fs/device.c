/*
 * Device stacks (device.h): building, starting and stopping them, the
 * per-request record of device I/Os that the layers fill, and what a
 * device knows of its backing's size.
 */
#include <errno.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>

#include "device.h"
#include "units.h"

/* A shrink report: the backing's path and the rest of the line. */
#define PATH_MAX_LINE (4096 + 512)

void dev_req_init(struct dev_req *r, uint64_t arrival_ns)
{
	r->op = DEV_OP_NONE;
	r->ino = 0;
	r->path = NULL;
	r->logical = DEV_NO_LOGICAL;
	r->fresh = false;
	r->arrival_ns = arrival_ns;
	r->complete_ns = 0;
	r->dies = r->collisions = 0;
	r->v = r->inline_v;
	r->n = 0;
	r->cap = sizeof r->inline_v / sizeof r->inline_v[0];
	r->lost = NULL;
	r->fault[0] = '\0';
}

const char *dev_op_name(enum dev_op op)
{
	static const char *const names[] = {
	    [DEV_OP_NONE] = "none",	  [DEV_OP_READ] = "read",	  [DEV_OP_WRITE] = "write",
	    [DEV_OP_ALLOCATE] = "allocate", [DEV_OP_PUNCH] = "punch",	  [DEV_OP_ZERO_RANGE] = "zero",
	    [DEV_OP_TRUNCATE] = "truncate", [DEV_OP_FSYNC] = "fsync", [DEV_OP_UNLINK] = "unlink",
	};
	return (unsigned)op < sizeof names / sizeof names[0] && names[op] ? names[op] : "?";
}

void dev_req_release(struct dev_req *r)
{
	if (r->v != r->inline_v)
		free(r->v);
	r->v = r->inline_v;
	r->n = 0;
}

#define WAKE_EARLY_NS 200000
void dev_req_wait(const struct dev_req *r)
{
	static __thread bool slack_set;
	if (!r->complete_ns)
		return;
	if (!slack_set) {
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
		slack_set = true;
	}
	uint64_t now = mono_ns();
	if (now >= r->complete_ns)
		return;
	if (r->complete_ns - now > WAKE_EARLY_NS) {
		uint64_t wake = r->complete_ns - WAKE_EARLY_NS;
		struct timespec t = {.tv_sec = (time_t)(wake / NS_PER_S),
				     .tv_nsec = (long)(wake % NS_PER_S)};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
			;
	}
	while (mono_ns() < r->complete_ns)
		;
}

uint64_t dev_req_model_us(const struct dev_req *r)
{
	return r->complete_ns > r->arrival_ns ? (r->complete_ns - r->arrival_ns) / 1000 : 0;
}

/*
 * Opens a layer of type @t over @next; NULL with *@rc set when it fails
 * (its own message in @err) or skips (*@rc = DEV_LAYER_SKIP).
 */
static struct dev_layer *layer_open(struct device *d, const struct dev_layer_type *t,
				    const unsigned char *layer_data, struct dev_layer_args *a,
				    int *rc, char *err, size_t errlen)
{
	size_t head = (sizeof(struct dev_layer) + 15) / 16 * 16;
	struct dev_layer *l = calloc(1, head + t->priv_size);
	if (!l) {
		*rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	*l = (struct dev_layer){.ops = t->ops,
				.dev = d,
				.type = t,
				.priv = t->priv_size ? (char *)l + head : NULL,
				.conf = config_layer_data(&t->cfg, layer_data),
				.splice = !(t->ops->pread && !t->ops->pread_fd)};
	*rc = t->open ? t->open(l, a, err, errlen) : 0;
	if (*rc) {
		free(l);
		return NULL;
	}
	return l;
}

int dev_stack_build(struct device *d, const struct config_layers *layers,
		    const unsigned char *layer_data, struct dev_layer_args *a, char *err,
		    size_t errlen)
{
	struct dev_layer *v[CONFIG_LAYERS_MAX];
	size_t n = 0;
	char why[512];
	int rc = 0;

	d->top = d->base = NULL;
	a->timed = false;
	/* Top first: a layer tells those below it what it does (a->timed). */
	for (unsigned i = 0; i < layers->n && i < CONFIG_LAYERS_MAX; i++) {
		const struct config_layer *c = config_layer_find(layers->name[i]);
		if (!c) {
			snprintf(err, errlen, "device %s: no layer named '%s' in this program",
				 d->name, layers->name[i]);
			rc = -ENOENT;
			break;
		}
		why[0] = '\0';
		struct dev_layer *l =
		    layer_open(d, dev_layer_type_of(c), layer_data, a, &rc, why, sizeof why);
		if (l) {
			v[n++] = l;
			continue;
		}
		if (rc == DEV_LAYER_SKIP) {
			rc = 0;
			continue;
		}
		if (rc == -ENOMEM && !why[0])
			snprintf(why, sizeof why, "out of memory");
		snprintf(err, errlen, "device %s: layer %s: %s", d->name, c->name, why);
		break;
	}
	if (!rc && n == 0) {
		snprintf(err, errlen, "device %s: the stack has no layer", d->name);
		rc = -EINVAL;
	}
	d->splice_ok = d->queue_ok = true;
	d->model_on = a->timed;
	for (size_t i = n; i-- > 0;) {
		v[i]->next = i + 1 < n ? v[i + 1] : NULL;
		d->splice_ok &= v[i]->splice;
		if (v[i]->ops->pread && !v[i]->ops->submit_reads)
			d->queue_ok = false;
	}
	if (n) {
		d->top = v[0];
		d->base = v[n - 1];
	}
	if (rc)
		dev_stack_free(d);
	return rc;
}

/* The bottom layer is the base (CONFIG_LAYER_BOTTOM), whose threads these are. */
int dev_stack_start(struct device *d)
{
	return d->base ? dev_base_start(d->base) : 0;
}

void dev_stack_stop(struct device *d)
{
	if (d->base)
		dev_base_stop(d->base);
}

void dev_stack_save(struct device *d)
{
	for (struct dev_layer *l = d->top; l; l = l->next)
		if (l->ops->save_state)
			l->ops->save_state(l);
}

void dev_stack_free(struct device *d)
{
	struct dev_layer *l = d->top;
	while (l) {
		struct dev_layer *next = l->next;
		if (l->ops->close)
			l->ops->close(l);
		free(l);
		l = next;
	}
	d->top = d->base = NULL;
}

bool dev_may_queue(const struct device *d)
{
	return d->queue_ok && d->base && dev_base_queue_started(d->base);
}

bool dev_can_queue(const struct device *d)
{
	return d->queue_ok && d->base && dev_base_can_queue(d->base);
}

int dev_backing_size(int fd, bool blockdev, uint64_t *bytes)
{
	struct stat st;

	if (blockdev)
		return ioctl(fd, BLKGETSIZE64, bytes) ? -errno : 0;
	if (fstat(fd, &st))
		return -errno;
	*bytes = (uint64_t)st.st_size;
	return 0;
}

static atomic_bool to_syslog;

void dev_set_syslog(bool on)
{
	atomic_store(&to_syslog, on);
}

void dev_backing_seen(struct device *d, uint64_t bytes)
{
	uint_fast64_t old = atomic_load(&d->backing_bytes);

	/* The thread whose exchange takes the size down reports it: one line a shrink. */
	while (old != bytes && !atomic_compare_exchange_weak(&d->backing_bytes, &old, bytes))
		;
	if (old <= bytes)
		return;
	uint_fast64_t floor = atomic_load(&d->shrunk_end);
	while ((floor == 0 || bytes + 1 < floor) &&
	       !atomic_compare_exchange_weak(&d->shrunk_end, &floor, bytes + 1))
		;
	atomic_fetch_add(&d->shrinks, 1);
	char line[PATH_MAX_LINE];
	snprintf(line, sizeof line,
		 "scatterfs: device '%s': backing %s shrank from %llu to %llu bytes under the "
		 "mounted file system; every device I/O past byte %llu now fails with EIO, and the "
		 "files with extents there have lost that data: unmount, restore the backing",
		 d->name, d->path, (unsigned long long)old, (unsigned long long)bytes,
		 (unsigned long long)bytes);
	dev_report(line);
}

bool dev_past_shrink(struct device *d, uint64_t end)
{
	uint_fast64_t floor = atomic_load_explicit(&d->shrunk_end, memory_order_relaxed);
	return floor && end > floor - 1;
}

void dev_report(const char *line)
{
	fprintf(stderr, "%s\n", line);
	if (atomic_load(&to_syslog))
		syslog(LOG_ERR, "%s", line + strlen("scatterfs: "));
}

int dev_backing_poll(struct device *d)
{
	uint64_t bytes;
	int err = d->fd >= 0 ? dev_backing_size(d->fd, d->blockdev, &bytes) : -EBADF;

	if (!err)
		dev_backing_seen(d, bytes);
	return err;
}
