/*
 * Disk timing models: the seam between the timing layer (fs/dev_timing.c)
 * and the models behind it.
 *
 * A model is one source file (the built-in ones in layout/models/) that
 * defines a struct disk_model_ops and registers it with
 * DISK_MODEL_REGISTER(), as a placement pattern does (placement.h):
 * nothing else names it.  It brings
 *  - its keys (keys[], section "disk", home CONFIG_MODEL_DATA): they live
 *    in its own struct of params_size bytes, its slice of
 *    disk_params.model_data (disk_model_params() finds it), read by no one
 *    else; [disk] model = NAME chooses the model whose keys a section may
 *    write, and a key of another model is refused with the chosen model's
 *    name;
 *  - its check() of those keys against each other, run only when it is
 *    the chosen model;
 *  - its state, which create() makes for a disk of a given capacity and
 *    which may hold as many busy timelines as the device has units (one
 *    head for a rotating disk; dies and channels for a flash device).
 * The keys every model shares (capacity, metadata_io, metadata_offset)
 * are the timing layer's, in struct disk_params itself.
 *
 * The timing layer serializes calls on one model instance, passes the
 * arrival time of each I/O (a CLOCK_MONOTONIC time in ns) and makes the
 * request wait until the completion the model returns.  A model reads no
 * clock and takes no lock.  Times in nanoseconds unless a name says
 * otherwise; offsets and lengths in bytes of the device.
 */
#ifndef SCATTERFS_DISK_MODEL_H
#define SCATTERFS_DISK_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

struct config_scope; /* config_i.h */

/** What a device I/O does, as the drive sees the command. */
enum disk_op {
	DISK_READ,
	DISK_WRITE,
	DISK_WRITE_FUA, /* a write with Force Unit Access: to the media even with a write cache */
};

/** When a device I/O (or a flush) is served, and what it cost the device. */
struct disk_io {
	uint64_t start_ns;    /* when the device began serving it (>= its arrival) */
	uint64_t complete_ns; /* when it completes */
	/*
	 * Time this call added to the device's busy time (iostat's io_ticks,
	 * the time with at least one I/O in service): a model with several
	 * timelines counts each instant once, so that busy time never grows
	 * faster than the clock.  It may include work the call made the
	 * device do before the I/O (a write cache's destage).
	 */
	uint64_t busy_ns;
	/*
	 * A model with dies (die_of): the dies the I/O's pages are on, and its
	 * pages that waited on a die busy with something else; 0 otherwise.
	 */
	uint32_t dies, collisions;
};

/**
 * struct disk_workload - a steady workload, for disk_model_ops.expect():
 * @qd requests of @size bytes each always in flight, at uniformly random
 * offsets of the disk or one after the other (@sequential).
 */
struct disk_workload {
	enum disk_op op;   /* DISK_READ or DISK_WRITE */
	uint64_t size;	   /* bytes per request, > 0 */
	uint32_t qd;	   /* requests in flight, >= 1 */
	bool sequential;   /* else random */
	bool cache_full;   /* writes: the drive's write cache full (destage-bound), not empty */
};

/** Receives one expected figure: @name (a C identifier, unit in its suffix) and its value. */
typedef void (*disk_figure_fn)(void *ctx, const char *name, double value);

/** Receives one of a model's counters: @name (a C identifier) and its value. */
typedef void (*disk_emit_fn)(void *ctx, const char *name, uint64_t value);

/**
 * struct disk_model_ops - one disk timing model, as [disk] model = names
 * it.  Optional operations may be NULL.
 */
struct disk_model_ops {
	const char *name; /* as [disk] model = writes it */
	int order;	  /* in lists: lower first; 0 = after those with one, by name */
	/* Its keys: section "disk", home CONFIG_MODEL_DATA, offsets into its params struct. */
	const struct config_key *keys;
	size_t nkeys;
	/* Bytes of its params struct (at most DISK_MODEL_DATA_MAX in all models together). */
	size_t params_size;
	/*
	 * Optional: checks its keys against each other in scope @s ([disk]
	 * or a [device "NAME"] section whose model it is), @params being its
	 * struct there.  Only the chosen model's check runs.  0 or -EINVAL
	 * with one line in @err naming the place, the key and what is allowed.
	 */
	int (*check)(const struct config_scope *s, const void *params, char *err, size_t errlen);
	/*
	 * A model instance for @params (its struct) over a disk of @capacity
	 * bytes (the [disk] capacity, or the backing's size), in *@out.
	 * 0; -EINVAL with one line in @err saying which of its parameters it
	 * cannot represent; -ENOMEM.
	 */
	int (*create)(const void *params, uint64_t capacity, void **out, char *err, size_t errlen);
	/*
	 * Optional: whether @params can model a disk of @capacity bytes at
	 * all (what create() refuses for the size alone), without making the
	 * state: disk_model_fits() asks it.  0, or -EINVAL with create()'s
	 * message in @err.
	 */
	int (*fits)(const void *params, uint64_t capacity, char *err, size_t errlen);
	/*
	 * One I/O of @len bytes at device offset @off, arrived at
	 * @arrival_ns: fills @out and returns out->complete_ns.
	 */
	uint64_t (*submit)(void *model, enum disk_op op, uint64_t off, uint64_t len,
			   uint64_t arrival_ns, struct disk_io *out);
	/*
	 * Optional (NULL: a flush has nothing to wait for): SYNCHRONIZE
	 * CACHE at @now_ns; fills @out and returns when it completes.
	 */
	uint64_t (*flush)(void *model, uint64_t now_ns, struct disk_io *out);
	/*
	 * Optional (NULL: the model ignores trims, as a rotating disk does):
	 * the device range [@off, @off + @len) no longer holds data (TRIM,
	 * UNMAP, a punched hole), at @now_ns.  Fills @out and returns when
	 * it completes.
	 */
	uint64_t (*trim)(void *model, uint64_t off, uint64_t len, uint64_t now_ns,
			 struct disk_io *out);
	/*
	 * Optional: what the model's own formula expects of workload @w on a
	 * disk of @capacity bytes with @params: at least "latency_us" (per
	 * request, queueing at @w->qd included), "iops" and "mb_s" (10^6
	 * bytes per second), and any terms the model wants to show, each
	 * through @emit.  This is the figure bench/disk checks the model's
	 * timing against (scatterfs-plan --expect prints it), so that no
	 * script re-derives a model's formula.  0, or -EINVAL with one line
	 * in @err saying what of @w the model has no formula for.
	 */
	int (*expect)(const void *params, uint64_t capacity, const struct disk_workload *w,
		      disk_figure_fn emit, void *ctx, char *err, size_t errlen);
	/*
	 * Optional, both or neither (a model of a drive with parallel units,
	 * a flash drive's dies): page_bytes() is the size of the unit's page
	 * in bytes (> 0), die_of() the unit holding the page with byte @off
	 * of the disk, -1 when that page holds no data.  The flash layout
	 * score (layout_score.h, flash_score()) is computed from them.
	 */
	uint64_t (*page_bytes)(void *model);
	int (*die_of)(void *model, uint64_t off);
	/*
	 * Optional, both or neither: the state that outlives a mount (a
	 * flash drive's mapping table, block wear and counters), as a real
	 * drive keeps it.  save() writes it to @fd (0 or -errno); load()
	 * reads it from @fd into a model create() has just made with the
	 * same params and capacity: 0, or -EINVAL with one line in @err
	 * when the file is not that drive's (another geometry, damaged), or
	 * -errno; after an error the caller destroys the model.
	 */
	int (*save)(void *model, int fd);
	int (*load)(void *model, int fd, char *err, size_t errlen);
	/* Optional: its counters, for .scatterfs/stats, through @emit. */
	void (*counters)(void *model, disk_emit_fn emit, void *ctx);
	void (*destroy)(void *model);
};

/**
 * struct disk_clock - the clock a model's times are read on, for [disk]
 * time_dilation (time dilation: D. Gupta et al., "To Infinity and Beyond:
 * Time-Warped Network Emulation", NSDI 2006).  Model time runs @dilation
 * times slower than CLOCK_MONOTONIC from @origin_ns on: an I/O arriving
 * at clock time t reaches the model at origin + (t - origin) / dilation,
 * and a completion at model time m is clock time origin + (m - origin) x
 * dilation.  A model's completion is a max-plus expression of arrival
 * times and fixed costs (its own ns), so every service time it charges
 * takes dilation times as long on the clock, while what it reports (busy
 * time, its counters) stays in model time.  dilation 1 is the identity.
 */
struct disk_clock {
	uint64_t origin_ns; /* CLOCK_MONOTONIC when model time began */
	uint32_t dilation;  /* >= 1 */
};

/** disk_clock_model() - the model time of clock time @clock_ns (not before the origin). */
static inline uint64_t disk_clock_model(const struct disk_clock *c, uint64_t clock_ns)
{
	if (clock_ns <= c->origin_ns)
		return clock_ns;
	return c->origin_ns + (clock_ns - c->origin_ns) / c->dilation;
}

/** disk_clock_real() - the clock time of model time @model_ns. */
static inline uint64_t disk_clock_real(const struct disk_clock *c, uint64_t model_ns)
{
	if (model_ns <= c->origin_ns)
		return model_ns;
	return c->origin_ns + (model_ns - c->origin_ns) * c->dilation;
}

/**
 * disk_clock_submit() - @ops's submit() of one I/O of @len bytes at @off
 * arriving at clock time @arrival_ns, read on clock @c: the model sees
 * the arrival at disk_clock_model(), fills @out in model time (start,
 * completion, busy time: undilated) and the return is the completion on
 * the clock, disk_clock_real(@out->complete_ns): with dilation N, N times
 * the model's time from an arrival on the model's ns grid (one that is
 * not waits up to N - 1 ns less).
 */
uint64_t disk_clock_submit(const struct disk_clock *c, const struct disk_model_ops *ops,
			   void *model, enum disk_op op, uint64_t off, uint64_t len,
			   uint64_t arrival_ns, struct disk_io *out);

/* Registration, as PLACEMENT_REGISTER() (placement.h), in section "sfs_disk_models". */
#define DISK_MODEL_REGISTER(ops)                                                                   \
	static const struct disk_model_ops *const disk_model_registered_##ops                      \
	    __attribute__((section("sfs_disk_models"), used)) = &(ops)

/** disk_model_count() - the number of registered disk models. */
size_t disk_model_count(void);

/** disk_model_at() - registered model @i, sorted by order then name; NULL past the end. */
const struct disk_model_ops *disk_model_at(size_t i);

/** disk_model_find() - the model named @name (case-insensitive), NULL when none is. */
const struct disk_model_ops *disk_model_find(const char *name);

/**
 * disk_model_data_offset() - where @ops's params struct starts in
 * disk_params.model_data, in bytes (each registered model has its own
 * slice, 16-byte aligned, so that keys written for one model never land
 * in another's).
 */
size_t disk_model_data_offset(const struct disk_model_ops *ops);

/**
 * disk_model_params() - the params struct of @ops in @p (its slice of
 * p->model_data); @ops is usually p->model.
 */
const void *disk_model_params(const struct disk_params *p, const struct disk_model_ops *ops);

/**
 * disk_model_fits() - whether @disk's model can time device @name of
 * @device_size bytes (0 = not known: only the checks that need no size):
 * the modelled disk's capacity ([disk] capacity, else @device_size) holds
 * the backing and metadata_offset, and the model's fits() takes it.  The
 * timing layer's check at mount (fs/dev_timing.c) and scatterfs-plan
 * --check's.  *@capacity (may be NULL): that capacity.  @return 0, or
 * -EINVAL with one line in @err.
 */
int disk_model_fits(const struct disk_params *disk, const char *name, uint64_t device_size,
		    uint64_t *capacity, char *err, size_t errlen);

#endif
