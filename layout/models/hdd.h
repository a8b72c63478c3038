/*
 * The hdd disk model ([disk] model = hdd): the time a single-actuator
 * rotating disk would take for each device I/O, so that a fast backing
 * device behaves like one.  Its interface to the daemon is its struct
 * disk_model_ops (disk_model.h); this header is for its unit tests.
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
 * Write cache (write_cache = true, the drive's WCE bit: SBC-3, Caching mode
 * page, section 6.4.5; drives ship with it set).  The cache holds up to
 * cache_size bytes of dirty data, a sorted list of byte ranges, adjacent
 * and overlapping ones merged.  The host link (interface_mib_s) carries one
 * transfer at a time.
 *  - A write is taken into the cache: it completes when its bytes have
 *    crossed the link (length / interface rate, after any earlier link
 *    transfer).  When the cache lacks room for its new bytes, the drive
 *    first destages (below) until it has room, and the bytes cross the link
 *    after that.  A write does not move the head and leaves the read-ahead
 *    window alone: a read stream goes on past writes until a destage moves
 *    the head ("immediate reporting", C. Ruemmler and J. Wilkes, "UNIX disk
 *    access patterns", USENIX Winter 1993, section 5; "An introduction to
 *    disk drive modeling", 1994, section "Caching").
 *  - Writes bypass the cache when they cannot fit it at all (longer than
 *    cache_size) or carry FUA (DISK_WRITE_FUA, the Force Unit Access bit of
 *    SBC-3 WRITE(10)): they are written to the media as with the cache off,
 *    and dirty bytes they overwrite are dropped.
 *  - Destage: the head writes dirty data back to the media in C-SCAN order
 *    (circular elevator: the dirty range at or after the head's position
 *    with the lowest offset, wrapping to the lowest offset of all), at most
 *    DISK_DESTAGE_MAX bytes per media write, each paying seek, rotation and
 *    transfer as any I/O does and leaving the head at its end without a
 *    read-ahead window.  In the background the drive destages only while
 *    the head is idle (reads are never delayed by a destage that has not
 *    begun; one that has begun finishes first), from the moment the dirty
 *    bytes reach half the cache until they are down to a quarter (high and
 *    low water marks, as in B. Gill and D. Modha, "WOW: Wise Ordering for
 *    Writes", FAST 2005): below the high mark, dirty data waits, so that
 *    small writes close together merge before they cost the head anything.
 *    The model is lazy: each call at time now first runs the background
 *    destage the idle head would have done before now, from the later of
 *    busy_until_ns and the completion of the write that reached the high
 *    mark.
 *  - A read that lies wholly in dirty ranges is served from the cache: link
 *    time only, no media time, the head untouched.  Any other read goes to
 *    the media when the head is free.
 *  - A flush (SYNCHRONIZE CACHE) completes when every dirty byte has been
 *    destaged, in the order above; at once when none is dirty.
 * With write_cache = false every write goes to the media as described
 * above the cache, and a flush has nothing to wait for.
 *
 * Pure computation: no clocks, no locks.  Times in nanoseconds unless a
 * name says otherwise; offsets and lengths in bytes.
 */
#ifndef SCATTERFS_MODELS_HDD_H
#define SCATTERFS_MODELS_HDD_H

#include <stdbool.h>
#include <stdint.h>

#include "disk_model.h"

/** Largest prefetch: read-ahead of at most this many times an I/O. */
#define HDD_PREFETCH_MAX 1000

enum hdd_rotation {
	ROTATION_PHASE,	  /* from a virtual spindle angle */
	ROTATION_AVERAGE, /* half a revolution per positioning */
};

/** The hdd model's keys ([disk] with model = hdd): its slice of disk_params.model_data. */
struct hdd_params {
	double rpm;
	double seek_track_ms, seek_avg_ms, seek_full_ms;
	double transfer_outer_mib_s, transfer_inner_mib_s; /* equal when not zoned */
	enum hdd_rotation rotation;
	double prefetch;       /* read-ahead after each I/O, in multiples of its length; 0 = off */
	uint64_t prefetch_max; /* bytes: the read-ahead never goes further than this */
	/* The drive's write cache: WCE of the Caching mode page. */
	bool write_cache;
	uint64_t cache_size;	/* bytes of dirty data the cache holds */
	double interface_mib_s; /* host link rate in MiB/s */
};

/** A byte range [off, end) of the device. */
struct hdd_range {
	uint64_t off, end;
};

struct hdd {
	struct hdd_params p;
	uint64_t capacity;    /* bytes of the emulated disk */
	uint64_t track_bytes; /* bytes under the head in one revolution at offset 0 */
	uint64_t rev_ns;      /* one revolution */
	/* state */
	uint64_t head_pos;	/* device offset where the last I/O ended; 0 at first */
	uint64_t busy_until_ns; /* when the head is free */
	uint64_t prefetch_end;	/* the read-ahead window is [head_pos, prefetch_end] */
	/* the write cache (p.write_cache) */
	struct hdd_range *dirty; /* sorted, disjoint, not adjacent; malloc'd */
	size_t ndirty, capdirty;
	uint64_t dirty_bytes;	  /* sum of the ranges' lengths */
	uint64_t link_free_ns;	  /* when the host link is free */
	bool destaging;		  /* between the high and the low water mark */
	uint64_t destage_from_ns; /* when the dirty bytes last reached the high mark */
	/* counters, for .scatterfs/stats */
	uint64_t prefetch_hits, cache_hits, destage_ns;
};

/** The most bytes one destage writes to the media (a range longer is destaged in pieces). */
#define HDD_DESTAGE_MAX (UINT64_C(1) << 20)

/** The cost of one I/O, and when it completes. */
struct hdd_io_cost {
	uint64_t start_ns; /* when the head takes it (>= submission) */
	uint64_t seek_ns, rotation_ns, transfer_ns;
	/*
	 * A write into the cache: the time it waited for destaging to make
	 * room; transfer_ns is then the link transfer.  0 otherwise.
	 */
	uint64_t cache_wait_ns;
	uint64_t complete_ns; /* start + cache_wait + seek + rotation + transfer */
	bool prefetch_hit;    /* served by the read-ahead (a skip into it, or data already read) */
	bool cache_hit;	      /* cached: a write taken into the cache, a read of dirty data */
	/* Head time spent destaging during this call (background and forced). */
	uint64_t destage_ns;
};

/**
 * hdd_init() - a model with parameters @p for a disk of @capacity bytes.
 * track_bytes is the bytes transferred in one revolution at the outer rate.
 * @return 0, -EINVAL when @capacity is 0, a parameter is <= 0, prefetch is
 * outside [0, HDD_PREFETCH_MAX], or a revolution or a track does not fit
 * the model's integers; with write_cache, also when cache_size is 0 or
 * interface_mib_s is not > 0.  The dirty list is allocated on first use:
 * release it with hdd_release().
 */
int hdd_init(struct hdd *m, const struct hdd_params *p, uint64_t capacity);

/** hdd_release() - frees the write cache's dirty list (the struct stays usable, empty). */
void hdd_release(struct hdd *m);

/**
 * hdd_link_ns() - time for @length bytes to cross the host link:
 * round(length * 1e9 / (interface_mib_s * 2^20)).
 */
uint64_t hdd_link_ns(const struct hdd *m, uint64_t length);

/**
 * hdd_seek_ns() - seek time for a head movement of @distance bytes: 0 for
 * 0, seek_track_ms up to one track, then the three-point curve above,
 * clamped to seek_full_ms.
 */
uint64_t hdd_seek_ns(const struct hdd *m, uint64_t distance);

/**
 * hdd_rotation_ns() - rotational latency for an I/O at @offset whose seek
 * ends at @t_ns: ROTATION_AVERAGE gives half a revolution; ROTATION_PHASE
 * the time until the spindle angle (t_ns / rev_ns, fractional part) reaches
 * the target angle ((offset mod track_bytes) / track_bytes).
 */
uint64_t hdd_rotation_ns(const struct hdd *m, uint64_t offset, uint64_t t_ns);

/** hdd_transfer_ns() - time to transfer @length bytes starting at @offset (zoned rate). */
uint64_t hdd_transfer_ns(const struct hdd *m, uint64_t offset, uint64_t length);

/**
 * hdd_submit() - queues one I/O of @length bytes at @offset submitted
 * at @now_ns on the head: it starts at max(@now_ns, busy_until_ns), pays a
 * seek and a rotation unless it starts at head_pos, then the transfer; the
 * head ends at @offset + @length.  With prefetch > 0, a read starting in
 * [head_pos, prefetch_end] instead completes at
 * max(start, busy_until_ns + transfer from head_pos to @offset + @length),
 * its transfer_ns being that minus start (0 when the data was read ahead
 * already); a read leaves a window of prefetch * @length (at most
 * prefetch_max) past its end.  A write (@dir DISK_WRITE) always pays its
 * transfer, and leaves no window: the drive reads ahead after reads only.
 * With the write cache on, first the background destage up to @now_ns
 * runs, then a write (not FUA, at most cache_size bytes) is taken into the
 * cache: it starts at max(@now_ns, link_free_ns), waits while the cache
 * lacks room for its bytes not yet dirty (forced destages, from
 * max(@now_ns, busy_until_ns)), then crosses the link (hdd_link_ns()); and
 * a read wholly in dirty ranges only crosses the link.  Everything else
 * goes to the media as above.  Fills @cost and returns cost->complete_ns.
 * When the dirty list cannot grow (no memory) the write goes to the media.
 */
uint64_t hdd_submit(struct hdd *m, uint64_t now_ns, uint64_t offset, uint64_t length,
		    enum disk_op dir, struct hdd_io_cost *cost);

/**
 * hdd_flush() - SYNCHRONIZE CACHE at @now_ns: runs the background
 * destage up to @now_ns, then destages every dirty byte (C-SCAN order) from
 * max(@now_ns, busy_until_ns).  Fills @cost (start_ns, destage_ns,
 * complete_ns) and returns the completion: the last destage's end, or
 * @now_ns when nothing is dirty (always so with the write cache off).
 */
uint64_t hdd_flush(struct hdd *m, uint64_t now_ns, struct hdd_io_cost *cost);

/**
 * hdd_busy_ns() - the head time of @c, which the timing layer adds to the
 * device's busy time: its destages, plus its own service unless it was
 * served by the cache (a write taken into the cache, a read of dirty
 * data: link time only, the head untouched).
 */
uint64_t hdd_busy_ns(const struct hdd_io_cost *c);

extern const struct disk_model_ops hdd_model;

#endif
