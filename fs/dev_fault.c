/*
 * The fault layer: breaks device I/Os as the mount's fault rules say
 * (fault.h: [fault "NAME"] sections and `fault add` on .scatterfs/control).
 * It goes where [device] layers puts it, usually right below accounting,
 * so that the request log's device_io column still shows the I/O that
 * failed:
 *
 *     [device]
 *     layers = accounting, faults, timing, base
 *
 * For each I/O it describes the I/O (device, device range, the file's
 * path and logical offset that struct dev_req carries) to the rule set
 * and applies the effect of the rule that fires:
 *
 *   error      the I/O is not passed on and fails with the errno
 *   delay_ms   the request completes that much later (the I/O path waits
 *              once for the latest completion, as for a disk model)
 *   bitflip    a read passes on, then one bit of the bytes read flips; a
 *              write passes on a copy with one bit flipped
 *   torn       only a prefix of the write, cut at a sector_size boundary
 *              of the device (on an O_DIRECT backing, at a block boundary
 *              below it), is passed on; the write reports success, or
 *              the rule's error when it has one
 *   flush      ignore: reports success and passes nothing on; linux: fails
 *              once with the error and the volatile layer below forgets
 *              the file's writes not yet durable (dev_volatile_forget():
 *              a crash loses them, whatever flush comes later), the next
 *              matching flush passes on; keep-dirty: fails every time from
 *              then on, and the writes stay volatile (a flush that no
 *              request owns, such as the allocator's to reuse freed
 *              space, still makes them durable)
 *
 * The rule's name goes in the request (dev_req_fault()), and so in the
 * request log's fault column, whose row names the file and the logical
 * offset of the request: a fault aimed at a device range names the file
 * it hit.
 *
 * While the mount has any rule, reads are copied, never spliced or queued
 * past this layer (its pread_fd and submit_reads answer -EOPNOTSUPP), so
 * that a bit can flip in them; with no rule, each operation costs one
 * atomic load and passes on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dev_volatile.h"
#include "device.h"
#include "fault.h"

static const struct dev_layer_type fault_layer;

_Static_assert(sizeof(((struct dev_req *)0)->fault) == FAULT_NAME_MAX, "a rule's name fits");

/* Names rule @name in @r, for the log's fault column (the first that broke one of its I/Os). */
static void dev_req_fault(struct dev_req *r, const char *name)
{
	if (!r->fault[0])
		strcpy(r->fault, name);
}

bool fault_layer_on(const struct device *d)
{
	for (const struct dev_layer *l = d->top; l; l = l->next)
		if (l->type == &fault_layer)
			return true;
	return false;
}

/* The effect of the rule that fired on @io, or false (nothing to do). */
static bool ask(struct dev_layer *l, struct dev_req *r, unsigned op, uint64_t off, uint64_t len,
		uint64_t logical, struct fault_hit *hit)
{
	struct fault_set *s = l->dev->faults;
	if (!s || fault_set_empty(s))
		return false;
	struct fault_io io = {
	    .op = op,
	    .device = l->dev->name,
	    .dev_off = off,
	    .len = len,
	    .path = r ? r->path : NULL,
	    .has_logical = logical != DEV_NO_LOGICAL,
	    .logical_off = logical,
	};
	if (!fault_set_match(s, &io, hit))
		return false;
	if (r) {
		dev_req_fault(r, hit->rule);
		if (hit->delay_ms) {
			uint64_t from = r->complete_ns > mono_ns() ? r->complete_ns : mono_ns();
			r->complete_ns = from + (uint64_t)hit->delay_ms * 1000000;
		}
	}
	return true;
}

static uint64_t logical_of(const struct dev_req *r)
{
	return r ? r->logical : DEV_NO_LOGICAL;
}

static void flip(void *buf, uint64_t bit)
{
	((unsigned char *)buf)[bit / 8] ^= (unsigned char)(1u << (bit % 8));
}

static int fault_pread(struct dev_layer *l, struct dev_req *r, void *buf, uint64_t len,
		       uint64_t off)
{
	struct fault_hit hit;
	if (!ask(l, r, FAULT_READ, off, len, logical_of(r), &hit))
		return dev_layer_pread(l->next, r, buf, len, off);
	if (hit.error)
		return hit.error;
	int err = dev_layer_pread(l->next, r, buf, len, off);
	if (!err && hit.bitflip)
		flip(buf, hit.bit);
	return err;
}

/* With rules, the bytes must pass through pread: never spliced. */
static int fault_pread_fd(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off,
			  int *fd)
{
	if (l->dev->faults && !fault_set_empty(l->dev->faults))
		return -EOPNOTSUPP;
	return dev_layer_pread_fd(l->next, r, len, off, fd);
}

static int fault_submit_reads(struct dev_layer *l, struct dev_req *r, struct dev_aio *ios, size_t n)
{
	if (l->dev->faults && !fault_set_empty(l->dev->faults))
		return -EOPNOTSUPP;
	return dev_layer_submit_reads(l->next, r, ios, n);
}

static int fault_pwrite(struct dev_layer *l, struct dev_req *r, const void *buf, uint64_t len,
			uint64_t off)
{
	struct fault_hit hit;
	if (!ask(l, r, FAULT_WRITE, off, len, logical_of(r), &hit))
		return dev_layer_pwrite(l->next, r, buf, len, off);
	if (hit.torn) {
		uint64_t keep = hit.torn_len;
		if (l->dev->direct)
			keep -= keep % l->dev->block_size;
		int err = keep ? dev_layer_pwrite(l->next, r, buf, keep, off) : 0;
		return err ? err : hit.error;
	}
	if (hit.error)
		return hit.error;
	if (!hit.bitflip)
		return dev_layer_pwrite(l->next, r, buf, len, off);
	/* A copy, aligned as the caller's must be for an O_DIRECT backing. */
	void *copy;
	if (posix_memalign(&copy, 4096, len ? len : 1))
		return -ENOMEM;
	memcpy(copy, buf, len);
	flip(copy, hit.bit);
	int err = dev_layer_pwrite(l->next, r, copy, len, off);
	free(copy);
	return err;
}

static int fault_zero(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off,
		      enum zero_fill mode)
{
	struct fault_hit hit;
	if (mode != ZERO_FILL_NONE && ask(l, r, FAULT_WRITE, off, len, logical_of(r), &hit) &&
	    hit.error)
		return hit.error;
	return dev_layer_zero(l->next, r, len, off, mode);
}

static int fault_flush(struct dev_layer *l, struct dev_req *r)
{
	struct fault_hit hit;
	/*
	 * Every flush, the daemon's own too (@r NULL: the background sync's,
	 * the one before a catalog sync, before reusing freed space), which
	 * only a rule without a file glob can match (it has no path).
	 */
	if (!ask(l, r, FAULT_FLUSH, 0, 0, DEV_NO_LOGICAL, &hit))
		return dev_layer_flush(l->next, r);
	switch (hit.flush) {
	case FAULT_FLUSH_IGNORE:
		return 0; /* reports success; nothing below is asked to make anything durable */
	case FAULT_FLUSH_LINUX:
		/* the failed write-back is forgotten: never made durable (the
		 * daemon's own flush, @r NULL, covered every file's writes) */
		dev_volatile_forget(l->dev, r ? r->ino : 0);
		return hit.error;
	case FAULT_FLUSH_KEEP_DIRTY:
		return hit.error;
	case FAULT_FLUSH_NONE:
		break;
	}
	return hit.error ? hit.error : dev_layer_flush(l->next, r);
}

static int fault_trim(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off)
{
	struct fault_hit hit;
	if (ask(l, r, FAULT_TRIM, off, len, DEV_NO_LOGICAL, &hit) && hit.error)
		return hit.error;
	return dev_layer_trim(l->next, r, len, off);
}

static const struct dev_ops fault_ops = {
    .pread = fault_pread,
    .pread_fd = fault_pread_fd,
    .pwrite = fault_pwrite,
    .zero = fault_zero,
    .flush = fault_flush,
    .submit_reads = fault_submit_reads,
    .trim = fault_trim,
};

static const struct dev_layer_type fault_layer = {
    .cfg = {.name = "faults", .order = 2},
    .ops = &fault_ops,
};
DEV_LAYER_REGISTER(fault_layer);
