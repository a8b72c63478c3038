/*
 * Disk timing model: the time a single-actuator rotating disk would take
 * for each device I/O, so that a fast backing device behaves like one.
 *
 * Seek: a three-point curve through (one track, seek_track_ms),
 * (capacity / 3, seek_avg_ms) and (capacity, seek_full_ms): proportional to
 * the square root of the distance up to a third of the stroke and linear
 * beyond, after C. Ruemmler and J. Wilkes, "An introduction to disk drive
 * modeling", IEEE Computer 27(3), 1994.  A third of the stroke is the mean
 * distance between two uniformly random positions.
 * Rotation: deterministic from a virtual spindle angle (ROTATION_PHASE), or
 * half a revolution per positioning (ROTATION_AVERAGE).
 * Transfer: at a rate that falls linearly from transfer_outer_mib_s at
 * device offset 0 to transfer_inner_mib_s at capacity (zoned recording).
 * An I/O that starts where the previous one ended costs only its transfer.
 * I/Os are served one at a time in submission order on one virtual head.
 * Read-ahead (prefetch > 0): after each read the drive reads on into its
 * cache, up to prefetch times the read's length (at most prefetch_max bytes)
 * past its end, as a SCSI drive does with the MF ("multiplication factor")
 * bit of its Caching mode page set (SBC-3, section 6.4.5).  A read that
 * starts inside that window pays no seek and no rotation: it completes when
 * the stream, which began when the drive went idle, passes its end (at once
 * when it already has).  A short forward skip then costs the time to read
 * through the skipped bytes, not a repositioning.
 *
 * Pure computation: no clocks, no locks.  Times in nanoseconds unless a
 * name says otherwise; offsets and lengths in bytes.
 */
#ifndef SCATTERFS_DISK_MODEL_H
#define SCATTERFS_DISK_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

struct disk_model {
	struct disk_params p;
	uint64_t capacity;    /* bytes of the emulated disk */
	uint64_t track_bytes; /* bytes under the head in one revolution at offset 0 */
	uint64_t rev_ns;      /* one revolution */
	/* state */
	uint64_t head_pos;	/* device offset where the last I/O ended; 0 at first */
	uint64_t busy_until_ns; /* when the head is free */
	uint64_t prefetch_end;	/* the read-ahead window is [head_pos, prefetch_end] */
};

/** What an I/O does: only reads are served from the drive's read-ahead. */
enum disk_dir {
	DISK_READ,
	DISK_WRITE,
};

/** The cost of one I/O, and when it completes. */
struct disk_io_cost {
	uint64_t start_ns; /* when the head takes it (>= submission) */
	uint64_t seek_ns, rotation_ns, transfer_ns;
	uint64_t complete_ns; /* start + seek + rotation + transfer */
	bool prefetch_hit;    /* served by the read-ahead (a skip into it, or data already read) */
};

/**
 * disk_model_init() - a model with parameters @p for a backing device of
 * @device_size bytes: capacity is p->capacity, or @device_size when that is 0
 * (the backing occupies the disk's first bytes).  track_bytes is the bytes
 * transferred in one revolution at the outer rate.
 * @return 0, -EINVAL when capacity < @device_size, a parameter is <= 0,
 * prefetch is outside [0, DISK_PREFETCH_MAX], or a revolution or a track
 * does not fit the model's integers.
 */
int disk_model_init(struct disk_model *m, const struct disk_params *p, uint64_t device_size);

/**
 * disk_seek_ns() - seek time for a head movement of @distance bytes: 0 for
 * 0, seek_track_ms up to one track, then the three-point curve above,
 * clamped to seek_full_ms.
 */
uint64_t disk_seek_ns(const struct disk_model *m, uint64_t distance);

/**
 * disk_rotation_ns() - rotational latency for an I/O at @offset whose seek
 * ends at @t_ns: ROTATION_AVERAGE gives half a revolution; ROTATION_PHASE
 * the time until the spindle angle (t_ns / rev_ns, fractional part) reaches
 * the target angle ((offset mod track_bytes) / track_bytes).
 */
uint64_t disk_rotation_ns(const struct disk_model *m, uint64_t offset, uint64_t t_ns);

/** disk_transfer_ns() - time to transfer @length bytes starting at @offset (zoned rate). */
uint64_t disk_transfer_ns(const struct disk_model *m, uint64_t offset, uint64_t length);

/**
 * disk_model_submit() - queues one I/O of @length bytes at @offset submitted
 * at @now_ns on the head: it starts at max(@now_ns, busy_until_ns), pays a
 * seek and a rotation unless it starts at head_pos, then the transfer; the
 * head ends at @offset + @length.  With prefetch > 0, a read starting in
 * [head_pos, prefetch_end] instead completes at
 * max(start, busy_until_ns + transfer from head_pos to @offset + @length),
 * its transfer_ns being that minus start (0 when the data was read ahead
 * already); a read leaves a window of prefetch * @length (at most
 * prefetch_max) past its end.  A write (@dir DISK_WRITE) always pays its
 * transfer, and leaves no window: the drive reads ahead after reads only.
 * Fills @cost and returns cost->complete_ns.
 */
uint64_t disk_model_submit(struct disk_model *m, uint64_t now_ns, uint64_t offset, uint64_t length,
			   enum disk_dir dir, struct disk_io_cost *cost);

struct config_scope; /* config_i.h */

/**
 * struct disk_model_ops - one disk timing model, as [disk] model = names
 * it.  A model is one source file that defines its table and registers it
 * with DISK_MODEL_REGISTER(); its keys (in [disk]) come with it.
 */
struct disk_model_ops {
	const char *name;
	int order; /* in lists: lower first; 0 = after those with one, by name */
	/* Its keys, in [disk]; rows with home CONFIG_GLOBAL into struct sfs_config. */
	const struct config_key *keys;
	size_t nkeys;
	/*
	 * Optional: checks its keys against each other in the global scope
	 * @s; run by config_finish() whichever model is selected, so that a
	 * file is valid or not whatever model = says.  0 or -EINVAL with @err.
	 */
	int (*check)(const struct config_scope *s, char *err, size_t errlen);
	/*
	 * A model instance for parameters @p over a backing device of
	 * @device_size bytes, in *@out.  0, -EINVAL, -ENOMEM.
	 */
	int (*create)(const struct disk_params *p, uint64_t device_size, void **out);
	/* Queues one I/O (see disk_model_submit()); returns its completion time in ns. */
	uint64_t (*submit)(void *model, uint64_t now_ns, uint64_t offset, uint64_t length,
			   enum disk_dir dir, struct disk_io_cost *cost);
	void (*destroy)(void *model);
};

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

#endif
