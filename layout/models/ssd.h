/*
 * The SSD model's simulator: a NAND flash drive behind a page-level flash
 * translation layer (FTL), timed die by die and channel by channel.  The
 * disk-model glue (keys, registration) sits in ssd.c beside it; this header
 * is for that glue, its unit tests and the benchmarks.
 *
 * Geometry.  channels x ways dies (die i is way i / channels on channel
 * i % channels); each die holds blocks_per_die blocks of pages_per_block
 * pages of page_size bytes.  The user capacity is the device's size,
 * user_pages = ceil(capacity / page_size); the flash behind it is derived:
 * blocks_per_die = ceil(user_pages * (1 + over_provisioning) /
 * (dies * pages_per_block)).  A geometry is refused when its flash pages do
 * not fit the FTL's 32-bit page numbers, or when a die would have fewer
 * spare blocks (blocks beyond those the user pages fill) than garbage
 * collection needs (gc_free_blocks + 2: the reserve, one more, and the
 * open block).
 *
 * FTL.  Page-level mapping, a 32-bit physical page number per logical page
 * (map) and a 32-bit logical page number per physical page (the reverse
 * map garbage collection walks): 8 bytes per flash page at most, plus 8
 * bytes of state per block and 4 per block of free list.  Write order:
 * the k-th page the host writes (k counted from 0 since the model was
 * created) goes to die k mod dies, at the next free page of that die's
 * open block, so consecutive writes go to consecutive channels first; a
 * die that cannot take a page even after garbage collection passes its
 * turn to the next.  The page's previous copy is invalidated.  A write that
 * covers part of a page programs the whole page (the rest is taken from
 * the controller's buffer: no read is charged).  Reads follow the map; a
 * page never written or trimmed costs no flash time.  Trim invalidates the
 * pages wholly inside its range.
 * With prefill the drive starts as if every user page had been written
 * once in address order (page n on die n mod dies), before the counters
 * start: data already on a backing then costs a flash read, and garbage
 * collection works on a full drive from the first write, as on a
 * sequentially preconditioned one.  Without it every page starts unmapped
 * (fresh out of the box).
 *
 * Garbage collection (greedy): when a die's open block is full and it has
 * at most gc_free_blocks free blocks, it picks the full block with the
 * fewest valid pages (lowest block number among equals; not the open
 * block), copies them into its open block inside the die (copyback: tR +
 * tPROG each, no channel time; a full open block is replaced by a free
 * one), erases the victim (tERASE), and repeats until the die has more
 * than gc_free_blocks free blocks or the copies left room in the open
 * block.  Host writes then fill the open block, or open a free one only
 * while more than gc_free_blocks are free: the last free block is always
 * left for garbage collection's copies.  All of it is charged on that
 * die's timeline, from the later of the triggering write's data arrival
 * and the die's free time, so requests queued behind it see the stall.
 * Timing.  Times in ns (parameters in us, rounded once to the ns), rates in
 * MB/s (10^6 bytes, as datasheets give them).  A request takes one of
 * queue_depth command slots (it starts when one is free: the earliest
 * completion among the last queue_depth requests), then the controller,
 * one command at a time, for command_us.  Then, with t0 its end:
 *  - read: for each page in logical order, its die senses it (tR) from
 *    max(t0, die free), then the page crosses the die's channel
 *    (page_size / channel rate) from max(sense end, channel free), the die
 *    staying busy until then; then the requested bytes of that page cross
 *    the host interface, one transfer at a time, after the page arrived.
 *    Pages on different dies proceed in parallel, on one die in order, and
 *    a channel's transfers are shared by its dies.  A channel and the host
 *    interface carry one transfer at a time, each in the earliest gap at or
 *    after the time it is ready (a transfer held back by a busy die does
 *    not delay one ready earlier); a die works in request order.  A page that waited on
 *    a busy die is a collision.  The read completes at its last byte.
 *  - write: the bytes cross the host interface from max(t0, interface
 *    free); each page then crosses its channel from max(that end, channel
 *    free, die free) and programs (tPROG).  Without the write cache the
 *    write completes at its last program's end; with it the drive's DRAM
 *    holds cache_size / page_size pages, each slot freed when its page has
 *    programmed (in write order): a page enters when a slot is free, and
 *    the write completes when its bytes have crossed the interface and all
 *    its pages have a slot.  A FUA write completes at its programs' end.
 *  - flush: completes when every page taken into the cache has programmed.
 *
 * Pure computation: no clocks, no locks.
 */
#ifndef SCATTERFS_SSD_H
#define SCATTERFS_SSD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The drive's parameters (its keys fill this struct). */
struct ssd_params {
	uint32_t channels;	  /* 1 .. SSD_CHANNELS_MAX */
	uint32_t ways;		  /* dies per channel, 1 .. SSD_WAYS_MAX */
	uint32_t page_size;	  /* bytes, a multiple of 512 up to 1 MiB */
	uint32_t pages_per_block; /* 2 .. 65535 */
	double over_provisioning; /* spare flash / user capacity, > 0, <= 10 */
	double read_us;		  /* tR: one page from the array to the die's register */
	double program_us;	  /* tPROG */
	double erase_us;	  /* tERASE */
	double command_us;	  /* the controller's cost per command, >= 0 */
	double channel_mb_s;	  /* one channel's transfer rate */
	double interface_mb_s;	  /* the host interface's */
	uint32_t queue_depth;	  /* 1 .. 65535 */
	uint32_t gc_free_blocks;  /* per die: GC runs below this many free blocks, >= 1 */
	bool prefill;		  /* starts with every user page written once, in order */
	bool write_cache;	  /* a DRAM write buffer (the WCE bit) */
	uint64_t cache_size;	  /* its bytes, at least one page */
};

#define SSD_CHANNELS_MAX 256
#define SSD_WAYS_MAX	 256

/** What a request does. */
enum ssd_op {
	SSD_READ,
	SSD_WRITE,
	SSD_WRITE_FUA, /* completes when programmed, with the write cache or without */
};

/** One request's cost. */
struct ssd_io {
	uint64_t start_ns;    /* when the controller took it (after any wait for a queue slot) */
	uint64_t complete_ns; /* its last byte across the interface, or its last program */
	uint32_t pages;	      /* flash pages it touched */
	uint32_t dies;	      /* distinct dies those pages are on */
	uint32_t collisions;  /* its pages that waited on a busy die */
	/*
	 * A read's longest wait of one page on a busy die (from the end of
	 * the command to the die's free time), 0 without a collision: what
	 * collisions added to it, as gc_wait_ns is for garbage collection.
	 */
	uint64_t collision_wait_ns;
	uint64_t
	    gc_wait_ns;	 /* the longest time one of its pages waited behind garbage collection */
	uint64_t die_ns; /* die time it used: tR or tPROG per page, plus the GC it set off */
	/*
	 * Time it added to the drive's busy time (some request between its
	 * start and its completion), each instant counted once: the part of
	 * [start_ns, complete_ns] after the latest completion before it.
	 */
	uint64_t busy_ns;
};

/** Counters since creation. */
struct ssd_counters {
	uint64_t host_pages;  /* pages the host wrote */
	uint64_t flash_pages; /* pages programmed: host pages plus pages moved by GC */
	uint64_t gc_runs;     /* blocks reclaimed */
	uint64_t pages_moved; /* valid pages GC copied */
	uint64_t erases_min, erases_max, erases_total; /* erases per block over all blocks */
	uint64_t gc_wait_ns;			       /* sum of the requests' gc_wait_ns */
	uint64_t reads, read_pages, collisions;	       /* collisions: read pages that waited */
	uint64_t writes, trims, flushes;
	uint64_t read_dies; /* sum of the reads' dies: / reads = dies touched per read */
	uint64_t collision_wait_ns; /* sum of the reads' collision_wait_ns */
};

struct ssd;

/**
 * ssd_check() - whether @p can model a drive of @capacity user bytes.
 * @return 0, or -EINVAL with one line in @err naming the key, its value and
 * the allowed range (or, for a capacity the geometry cannot hold, what to
 * change).
 */
int ssd_check(const struct ssd_params *p, uint64_t capacity, char *err, size_t errlen);

/**
 * ssd_create() - a new drive (prefilled or every page unwritten), all
 * timelines and counters at 0.
 * @return 0 with *@out set, -EINVAL (ssd_check()'s message in @err) or
 * -ENOMEM.  Release it with ssd_destroy().
 */
int ssd_create(const struct ssd_params *p, uint64_t capacity, struct ssd **out, char *err,
	       size_t errlen);

/** ssd_destroy() - frees @s (NULL is fine). */
void ssd_destroy(struct ssd *s);

/**
 * ssd_submit() - a request of @length bytes (> 0) at byte @offset of the
 * user capacity, arriving at @now_ns; offset + length must not pass the
 * capacity.  Fills @io and returns io->complete_ns.
 */
uint64_t ssd_submit(struct ssd *s, enum ssd_op op, uint64_t offset, uint64_t length,
		    uint64_t now_ns, struct ssd_io *io);

/**
 * ssd_flush() - a flush arriving at @now_ns: completes when every page the
 * write cache took has programmed (at @now_ns when none is pending).
 * Fills @io (start and completion) and returns the completion.
 */
uint64_t ssd_flush(struct ssd *s, uint64_t now_ns, struct ssd_io *io);

/** ssd_trim() - invalidates the pages wholly inside [@offset, @offset + @length); no time. */
void ssd_trim(struct ssd *s, uint64_t offset, uint64_t length);

/** ssd_get_counters() - the counters into @c (erases_* computed over every block). */
void ssd_get_counters(const struct ssd *s, struct ssd_counters *c);

/**
 * ssd_save() - writes the FTL's state that outlives a mount to @fd: the
 * map and reverse map, each block's valid and written pages and erase
 * count, each die's open block and free blocks, the write cursor and the
 * counters (not the timelines: the drive restarts idle), with a header
 * naming the geometry and a checksum (ssd_ftl.c gives the format).
 * @return 0 or -errno (-ENOMEM).
 */
int ssd_save(struct ssd *s, int fd);

/**
 * ssd_load() - reads what ssd_save() wrote into @s, a drive just created
 * with the same parameters and capacity.
 * @return 0; -EINVAL with one line in @err when the file is not that
 * drive's state (another geometry, another version, damaged: short, long
 * or a wrong checksum), or -errno; on any error @s is left part-loaded:
 * destroy it and create a new one.
 */
int ssd_load(struct ssd *s, int fd, char *err, size_t errlen);

/** ssd_die_of() - the die holding the page with byte @offset, -1 when it is unmapped. */
int ssd_die_of(const struct ssd *s, uint64_t offset);

/** ssd_ppn_of() - the physical page number of byte @offset, UINT32_MAX when unmapped. */
uint32_t ssd_ppn_of(const struct ssd *s, uint64_t offset);

/** ssd_dies() - channels x ways. */
uint32_t ssd_dies(const struct ssd *s);

/** ssd_page_size() - the flash page's bytes (the page_size key). */
uint32_t ssd_page_size(const struct ssd *s);

/** ssd_blocks_per_die() - the derived blocks per die. */
uint32_t ssd_blocks_per_die(const struct ssd *s);

/** ssd_flash_bytes() - the derived flash size: dies x blocks_per_die x pages_per_block x page_size.
 */
uint64_t ssd_flash_bytes(const struct ssd *s);

/**
 * ssd_state_bytes() - the FTL's memory: map (4 bytes per user page),
 * reverse map (4 per flash page), per-block state and free lists.
 */
uint64_t ssd_state_bytes(const struct ssd *s);

/** ssd_block_valid() - valid pages of die @die's block @block; ssd_block_erases() its erases. */
uint32_t ssd_block_valid(const struct ssd *s, uint32_t die, uint32_t block);
uint32_t ssd_block_erases(const struct ssd *s, uint32_t die, uint32_t block);

/** ssd_die_free_ns() - when die @die is next free; ssd_channel_free_ns() likewise. */
uint64_t ssd_die_free_ns(const struct ssd *s, uint32_t die);
uint64_t ssd_channel_free_ns(const struct ssd *s, uint32_t channel);

/**
 * ssd_verify() - checks the FTL's invariants: map and reverse map are
 * inverse, each block's valid count is the number of mapped pages in it,
 * no valid page lies past its block's written pages, and each die's free
 * blocks hold no data.  O(flash pages), for tests.
 * @return 0, or -EUCLEAN with what is wrong in @err.
 */
int ssd_verify(const struct ssd *s, char *err, size_t errlen);

/**
 * ssd_lambert_w0() - the principal branch W0 of the Lambert W function
 * (w e^w = @x, w >= -1) for @x >= -1/e, by Halley's iteration (R. M.
 * Corless et al., "On the Lambert W function", Adv. Comput. Math. 5, 1996,
 * eq. 5.9).  NaN below -1/e.
 */
double ssd_lambert_w0(double x);

/**
 * ssd_waf_greedy() - the steady-state write amplification of greedy garbage
 * collection under uniform random page writes over the whole user
 * capacity, with over-provisioning @op (> 0): with a = 1 + op,
 * WAF = a / (a + W0(-a e^-a)) (X.-Y. Hu et al., "Write amplification
 * analysis in flash-based solid state drives", SYSTOR 2009; P. Desnoyers,
 * "Analytic modeling of SSD write performance", SYSTOR 2012; L. Xiang and
 * B. Kurkoski, "An improved analytic expression for write amplification in
 * NAND flash", 2011).  About 2.47 at op 0.28, 1.71 at 0.5.
 */
double ssd_waf_greedy(double op);

#endif
