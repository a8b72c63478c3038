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
	r->arrival_ns = arrival_ns;
	r->complete_ns = 0;
	r->v = r->inline_v;
	r->n = 0;
	r->cap = sizeof r->inline_v / sizeof r->inline_v[0];
	r->lost = NULL;
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

int dev_stack_build(struct device *d, const struct disk_params *disk, uint32_t poll_us,
		    bool async_reads, char *err, size_t errlen)
{
	bool model = disk->model != DISK_NONE;
	/* Under a timing model a reply waits for the modelled time anyway:
	 * polling and queueing would only spend CPU. */
	struct dev_layer *base = dev_base_create(d, model ? 0 : poll_us, model ? false : async_reads);
	if (!base) {
		snprintf(err, errlen, "device %s: out of memory", d->name);
		return -ENOMEM;
	}
	struct dev_layer *top = base;
	if (model) {
		int rc;
		struct dev_layer *t = dev_timing_create(d, top, disk, &rc);
		if (!t) {
			uint64_t cap = disk->capacity ? disk->capacity : d->size;
			free(base);
			if (rc == -ENOMEM)
				snprintf(err, errlen, "device %s: out of memory", d->name);
			else if (disk->capacity && disk->capacity < d->size)
				snprintf(err, errlen,
					 "[disk] capacity = %llu bytes is smaller than the backing device "
					 "(%llu bytes); the backing occupies the first bytes of the "
					 "emulated disk",
					 (unsigned long long)disk->capacity,
					 (unsigned long long)d->size);
			else if (disk->metadata_io && disk->metadata_offset >= cap)
				snprintf(err, errlen,
					 "[disk] metadata_offset = %llu is not below the %s disk's size "
					 "(%llu bytes); allowed: 0 to %llu, or metadata_io = false",
					 (unsigned long long)disk->metadata_offset, d->name,
					 (unsigned long long)cap, (unsigned long long)(cap - 1));
			else if (disk->model->explain)
				disk->model->explain(disk, err, errlen);
			else
				snprintf(err, errlen,
					 "[disk] model = %s cannot be built with these parameters",
					 disk->model->name);
			return rc;
		}
		top = t;
	}
	struct dev_layer *acc = dev_account_create(d, top);
	if (!acc) {
		d->base = base;
		d->top = top;
		dev_stack_free(d);
		snprintf(err, errlen, "device %s: out of memory", d->name);
		return -ENOMEM;
	}
	d->base = base;
	d->top = acc;
	d->model_on = model;
	return 0;
}

int dev_stack_start(struct device *d)
{
	return dev_base_start(d->base);
}

void dev_stack_stop(struct device *d)
{
	if (d->base)
		dev_base_stop(d->base);
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

bool dev_can_queue(const struct device *d)
{
	return dev_base_can_queue(d->base);
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
