/*
 * The SSD simulator (ssd.h describes the model).  Data structures:
 *  - map[user_pages], rmap[flash_pages]: 32-bit entries holding a page
 *    number plus one, SSD_NONE (all ones) for unmapped / no valid data,
 *    and 0 for "where prefill put it" (with prefill) or unmapped (without):
 *    both arrays come from calloc(), untouched until used, so that a drive
 *    of tens of GiB is created in O(blocks) time, prefilled or not.  An
 *    entry of 0 in rmap is read only for pages of blocks never erased
 *    (garbage collection reads full blocks, whose pages were all written
 *    since their last erase).  A physical page number is
 *    (die * blocks_per_die + block) * pages_per_block + page; prefill puts
 *    user page n at page n / dies of die n mod dies.
 *  - blk[dies * blocks_per_die]: valid and written pages, erase count.
 *  - per die a stack of free blocks (lowest number on top at first), its
 *    open block, when it is next free and its last garbage collection.
 *  - per channel when it is next free; the controller's and the host
 *    interface's free times; a min-heap of the last queue_depth requests'
 *    completions (the command slots); the write cache as a ring of its
 *    pages' program ends.
 * Greedy victim selection scans the die's blocks: O(blocks per die) per
 * reclaimed block, which at steady state is a few hundred ns per written
 * page on the largest drives this models (bench/scale measures it); a
 * bucket list by valid count would make it O(1) at the cost of 8 more
 * bytes per block.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "splitmix64.h"
#include "ssd.h"

#define SSD_NONE UINT32_MAX

/*
 * A shared resource's reservations (a channel, the host interface): sorted,
 * disjoint busy intervals [s, e), touching ones merged.  A transfer takes
 * the earliest gap at or after the time it is ready that fits it, so one
 * reserved late (behind a busy die) does not hold back one ready earlier.
 * Intervals that ended before the latest arrival are dropped.
 */
struct timeline {
	uint64_t *s, *e;
	size_t n, cap;
};

struct ssd_block {
	uint16_t valid, written;
	uint32_t erases;
};

struct ssd_die {
	uint64_t free_ns;
	uint64_t gc_start_ns, gc_end_ns; /* its last garbage collection */
	uint32_t open;			 /* block being written, SSD_NONE before the first */
	uint32_t nfree;
	uint32_t *free; /* stack of free block numbers, nfree of blocks_per_die used */
};

struct ssd {
	struct ssd_params p;
	uint64_t capacity, user_pages, flash_pages;
	uint32_t dies, blocks_per_die, ppb;
	uint64_t t_read, t_prog, t_erase, t_cmd, t_chan_page;
	uint32_t *map, *rmap;
	struct ssd_block *blk;
	struct ssd_die *die;
	uint32_t *free_store;
	struct timeline *chan;
	struct timeline link;
	uint64_t ctrl_free;
	uint64_t *slots; /* min-heap, queue_depth entries */
	uint64_t *wb;	 /* write cache ring: program ends, wb_cap entries */
	uint64_t wb_cap, wb_head, wb_count, prog_end_max;
	uint64_t busy_end; /* the latest completion so far */
	uint64_t cursor;   /* host pages written: the next goes to die cursor % dies */
	uint32_t *stamp, req;
	struct ssd_counters c;
};

static uint64_t us_to_ns(double us)
{
	return (uint64_t)llround(us * 1000.0);
}

/* Time for @bytes at @mb_s (10^6 bytes per second), rounded to the ns. */
static uint64_t rate_ns(uint64_t bytes, double mb_s)
{
	return (uint64_t)llround((double)bytes * 1000.0 / mb_s);
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Blocks per die the geometry derives for @up user pages over @dies dies. */
static uint64_t derived_bpd(const struct ssd_params *p, uint64_t dies, uint64_t up)
{
	double flash = ceil((double)up * (1 + p->over_provisioning));
	return (uint64_t)ceil(flash / ((double)dies * p->pages_per_block));
}

/*
 * The fewest user pages whose blocks per die leave gc_free_blocks + 2
 * spare (0 when none up to the FTL's 32-bit page numbers).  Within the
 * k-th row of blocks (user pages in ((k-1) r, k r], r = dies x
 * pages_per_block) the user blocks per die are k and the derived blocks
 * grow with the pages, so a row either fits at its last page or not at
 * all: the first row that fits there, then the least page count in it
 * by bisection.
 */
static uint64_t least_user_pages(const struct ssd_params *p, uint64_t dies)
{
	uint64_t r = dies * p->pages_per_block, need = p->gc_free_blocks + 2;
	for (uint64_t k = 1; k * r <= SSD_NONE - 2; k++) {
		if (derived_bpd(p, dies, k * r) < k + need)
			continue;
		uint64_t lo = (k - 1) * r + 1, hi = k * r;
		while (lo < hi) {
			uint64_t mid = lo + (hi - lo) / 2;
			if (derived_bpd(p, dies, mid) >= k + need)
				hi = mid;
			else
				lo = mid + 1;
		}
		return lo;
	}
	return 0;
}

/* The derived geometry, or an error message.  0 or -EINVAL. */
static int geometry(const struct ssd_params *p, uint64_t capacity, uint64_t *user_pages,
		    uint32_t *blocks_per_die, char *err, size_t len)
{
#define BAD(...) return snprintf(err, len, __VA_ARGS__), -EINVAL
	if (p->channels < 1 || p->channels > SSD_CHANNELS_MAX)
		BAD("channels = %u: allowed 1 to %u", p->channels, SSD_CHANNELS_MAX);
	if (p->ways < 1 || p->ways > SSD_WAYS_MAX)
		BAD("ways = %u: allowed 1 to %u (dies per channel)", p->ways, SSD_WAYS_MAX);
	if (p->page_size < 512 || p->page_size > (1u << 20) || p->page_size % 512)
		BAD("page_size = %u: allowed a multiple of 512 from 512 to 1048576", p->page_size);
	if (p->pages_per_block < 2 || p->pages_per_block > 65535)
		BAD("pages_per_block = %u: allowed 2 to 65535 (a block holds at least two pages)",
		    p->pages_per_block);
	if (!(p->over_provisioning > 0) || p->over_provisioning > 10)
		BAD("over_provisioning = %g: allowed above 0 up to 10 (spare flash as a fraction "
		    "of the user capacity)",
		    p->over_provisioning);
	if (!(p->read_us > 0) || p->read_us > 1e6)
		BAD("read_us = %g: allowed above 0 up to 1000000", p->read_us);
	if (!(p->program_us > 0) || p->program_us > 1e6)
		BAD("program_us = %g: allowed above 0 up to 1000000", p->program_us);
	if (!(p->erase_us > 0) || p->erase_us > 1e7)
		BAD("erase_us = %g: allowed above 0 up to 10000000", p->erase_us);
	if (!(p->command_us >= 0) || p->command_us > 1e6)
		BAD("command_us = %g: allowed 0 to 1000000", p->command_us);
	if (!(p->channel_mb_s > 0) || p->channel_mb_s > 1e6)
		BAD("channel_mb_s = %g: allowed above 0 up to 1000000", p->channel_mb_s);
	if (!(p->interface_mb_s > 0) || p->interface_mb_s > 1e6)
		BAD("interface_mb_s = %g: allowed above 0 up to 1000000", p->interface_mb_s);
	if (p->queue_depth < 1 || p->queue_depth > 65535)
		BAD("queue_depth = %u: allowed 1 to 65535", p->queue_depth);
	if (p->gc_free_blocks < 1 || p->gc_free_blocks > 65535)
		BAD("gc_free_blocks = %u: allowed 1 to 65535", p->gc_free_blocks);
	if (p->write_cache && (p->cache_size < p->page_size || p->cache_size > (UINT64_C(1) << 40)))
		BAD("write_buffer_size = %llu: allowed one page (page_size = %u) to 1 TiB with "
		    "write_buffer = true",
		    (unsigned long long)p->cache_size, p->page_size);
	if (capacity == 0)
		BAD("capacity 0: the device has no bytes to model");

	uint64_t dies = (uint64_t)p->channels * p->ways;
	uint64_t up = (capacity + p->page_size - 1) / p->page_size;
	double flash = ceil((double)up * (1 + p->over_provisioning));
	double per_die_blocks = ceil(flash / ((double)dies * p->pages_per_block));
	double pages = per_die_blocks * (double)dies * p->pages_per_block;
	if (pages > (double)(SSD_NONE - 2) || (double)up > (double)(SSD_NONE - 2))
		BAD("capacity %llu bytes: the geometry needs %.0f flash pages, more than the "
		    "%u the FTL numbers (raise page_size)",
		    (unsigned long long)capacity, pages, SSD_NONE - 2);
	uint32_t bpd = (uint32_t)per_die_blocks;
	/* blocks the user pages fill on one die when spread evenly */
	uint64_t user_blocks = (up + dies * p->pages_per_block - 1) / (dies * p->pages_per_block);
	if (bpd < user_blocks + p->gc_free_blocks + 2) {
		uint64_t least = least_user_pages(p, dies);
		char more[96] = "";
		if (least)
			snprintf(more, sizeof(more), ", or a capacity of at least %llu bytes",
				 (unsigned long long)(least * p->page_size));
		BAD("capacity %llu bytes: %u blocks per die with over_provisioning = %g leave "
		    "%llu spare, and garbage collection needs gc_free_blocks + 2 = %u (raise "
		    "over_provisioning, or lower pages_per_block or gc_free_blocks%s)",
		    (unsigned long long)capacity, bpd, p->over_provisioning,
		    (unsigned long long)(bpd > user_blocks ? bpd - user_blocks : 0),
		    p->gc_free_blocks + 2, more);
	}
#undef BAD
	*user_pages = up;
	*blocks_per_die = bpd;
	return 0;
}

int ssd_check(const struct ssd_params *p, uint64_t capacity, char *err, size_t errlen)
{
	uint64_t up;
	uint32_t bpd;

	return geometry(p, capacity, &up, &bpd, err, errlen);
}

void ssd_destroy(struct ssd *s)
{
	if (!s)
		return;
	free(s->map);
	free(s->rmap);
	free(s->blk);
	free(s->die);
	free(s->free_store);
	for (uint32_t c = 0; s->chan && c < s->p.channels; c++) {
		free(s->chan[c].s);
		free(s->chan[c].e);
	}
	free(s->chan);
	free(s->link.s);
	free(s->link.e);
	free(s->slots);
	free(s->wb);
	free(s->stamp);
	free(s);
}

static void prefill(struct ssd *s);

int ssd_create(const struct ssd_params *p, uint64_t capacity, struct ssd **out, char *err,
	       size_t errlen)
{
	uint64_t up;
	uint32_t bpd;
	int rc = geometry(p, capacity, &up, &bpd, err, errlen);
	if (rc)
		return rc;
	struct ssd *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->p = *p;
	s->capacity = capacity;
	s->user_pages = up;
	s->dies = p->channels * p->ways;
	s->blocks_per_die = bpd;
	s->ppb = p->pages_per_block;
	s->flash_pages = (uint64_t)s->dies * bpd * s->ppb;
	s->t_read = us_to_ns(p->read_us);
	s->t_prog = us_to_ns(p->program_us);
	s->t_erase = us_to_ns(p->erase_us);
	s->t_cmd = us_to_ns(p->command_us);
	s->t_chan_page = rate_ns(p->page_size, p->channel_mb_s);
	uint64_t nblk = (uint64_t)s->dies * bpd;
	s->map = calloc(up, sizeof(*s->map));
	s->rmap = calloc(s->flash_pages, sizeof(*s->rmap));
	s->blk = calloc(nblk, sizeof(*s->blk));
	s->die = calloc(s->dies, sizeof(*s->die));
	s->free_store = malloc(nblk * sizeof(*s->free_store));
	s->chan = calloc(p->channels, sizeof(*s->chan));
	s->slots = calloc(p->queue_depth, sizeof(*s->slots));
	s->stamp = calloc(s->dies, sizeof(*s->stamp));
	if (p->write_cache) {
		s->wb_cap = p->cache_size / p->page_size;
		s->wb = malloc(s->wb_cap * sizeof(*s->wb));
	}
	if (!s->map || !s->rmap || !s->blk || !s->die || !s->free_store || !s->chan || !s->slots ||
	    !s->stamp || (p->write_cache && !s->wb)) {
		ssd_destroy(s);
		return -ENOMEM;
	}
	for (uint32_t d = 0; d < s->dies; d++) {
		struct ssd_die *die = &s->die[d];
		die->open = SSD_NONE;
		die->free = s->free_store + (uint64_t)d * bpd;
		die->nfree = bpd;
		for (uint32_t b = 0; b < bpd; b++)
			die->free[b] = bpd - 1 - b; /* block 0 on top */
	}
	if (p->prefill)
		prefill(s);
	*out = s;
	return 0;
}

static struct ssd_block *block(struct ssd *s, uint32_t d, uint32_t b)
{
	return &s->blk[(uint64_t)d * s->blocks_per_die + b];
}

static uint32_t ppn_die(const struct ssd *s, uint32_t ppn)
{
	return (uint32_t)(ppn / ((uint64_t)s->blocks_per_die * s->ppb));
}

static const struct ssd_block *block_c(const struct ssd *s, uint32_t d, uint32_t b)
{
	return &s->blk[(uint64_t)d * s->blocks_per_die + b];
}

static struct ssd_block *ppn_block(struct ssd *s, uint32_t ppn)
{
	return &s->blk[ppn / s->ppb];
}

/* User pages prefill puts on die @d: those n with n mod dies = d. */
static uint64_t prefill_count(const struct ssd *s, uint32_t d)
{
	return d < s->user_pages ? (s->user_pages - d + s->dies - 1) / s->dies : 0;
}

/* Marks the blocks prefill fills written and valid, the rest free. */
static void prefill(struct ssd *s)
{
	for (uint32_t d = 0; d < s->dies; d++) {
		struct ssd_die *die = &s->die[d];
		uint64_t n = prefill_count(s, d);
		uint32_t used = (uint32_t)((n + s->ppb - 1) / s->ppb);
		for (uint32_t b = 0; b < used; b++) {
			uint64_t k = n - (uint64_t)b * s->ppb;
			block(s, d, b)->written = block(s, d, b)->valid =
			    (uint16_t)(k < s->ppb ? k : s->ppb);
		}
		die->nfree = s->blocks_per_die - used;
		for (uint32_t i = 0; i < die->nfree; i++)
			die->free[i] = s->blocks_per_die - 1 - i;
		die->open = used ? used - 1 : SSD_NONE;
	}
	s->cursor = s->user_pages;
}

/* The physical page of user page @lpn, SSD_NONE when unmapped. */
static uint32_t map_get(const struct ssd *s, uint64_t lpn)
{
	uint32_t v = s->map[lpn];
	if (v == SSD_NONE)
		return SSD_NONE;
	if (v)
		return v - 1;
	if (!s->p.prefill)
		return SSD_NONE;
	uint64_t d = lpn % s->dies, k = lpn / s->dies;
	return (uint32_t)((d * s->blocks_per_die + k / s->ppb) * s->ppb + k % s->ppb);
}

/* The user page whose valid data physical page @ppn holds, SSD_NONE when none. */
static uint32_t rmap_get(const struct ssd *s, uint32_t ppn)
{
	uint32_t v = s->rmap[ppn];
	if (v == SSD_NONE)
		return SSD_NONE;
	if (v)
		return v - 1;
	if (!s->p.prefill)
		return SSD_NONE;
	uint64_t per_die = (uint64_t)s->blocks_per_die * s->ppb;
	uint32_t d = (uint32_t)(ppn / per_die);
	uint64_t k = ppn % per_die;
	return k < prefill_count(s, d) ? (uint32_t)(k * s->dies + d) : SSD_NONE;
}

static void map_set(struct ssd *s, uint64_t lpn, uint32_t ppn)
{
	s->map[lpn] = ppn + 1;
	s->rmap[ppn] = (uint32_t)lpn + 1;
	ppn_block(s, ppn)->valid++;
}

static void invalidate(struct ssd *s, uint64_t lpn)
{
	uint32_t old = map_get(s, lpn);
	if (old == SSD_NONE)
		return;
	ppn_block(s, old)->valid--;
	s->rmap[old] = SSD_NONE;
	s->map[lpn] = SSD_NONE;
}

/* Opens a free block on die @d; false when it has none. */
static bool open_block(struct ssd *s, uint32_t d)
{
	struct ssd_die *die = &s->die[d];
	if (die->nfree == 0)
		return false;
	die->open = die->free[--die->nfree];
	return true;
}

/* The next page of die @d's open block, opening one when needed (no GC); SSD_NONE if full. */
static uint32_t next_page(struct ssd *s, uint32_t d)
{
	struct ssd_die *die = &s->die[d];
	if (die->open == SSD_NONE || block(s, d, die->open)->written == s->ppb)
		if (!open_block(s, d))
			return SSD_NONE;
	struct ssd_block *b = block(s, d, die->open);
	uint64_t g = (uint64_t)d * s->blocks_per_die + die->open;
	return (uint32_t)(g * s->ppb + b->written++);
}

/*
 * One greedy collection on die @d: the full block (not the open one) with
 * the fewest valid pages.  Returns the die time it took, 0 when no block
 * can be reclaimed (none full, the best has no invalid page, or its valid
 * pages would not fit the die's open block and free blocks).
 */
static uint64_t gc_once(struct ssd *s, uint32_t d)
{
	struct ssd_die *die = &s->die[d];
	uint32_t victim = SSD_NONE, best = UINT32_MAX;
	for (uint32_t b = 0; b < s->blocks_per_die; b++) {
		struct ssd_block *k = block(s, d, b);
		if (b != die->open && k->written == s->ppb && k->valid < best) {
			best = k->valid;
			victim = b;
		}
	}
	if (victim == SSD_NONE || best == s->ppb)
		return 0;
	uint64_t room = (uint64_t)die->nfree * s->ppb;
	if (die->open != SSD_NONE)
		room += s->ppb - block(s, d, die->open)->written;
	if (best > room)
		return 0;
	uint64_t g = (uint64_t)d * s->blocks_per_die + victim;
	for (uint32_t i = 0; i < s->ppb && block(s, d, victim)->valid > 0; i++) {
		uint32_t old = (uint32_t)(g * s->ppb + i);
		uint32_t lpn = rmap_get(s, old);
		if (lpn == SSD_NONE)
			continue;
		uint32_t np = next_page(s, d);
		invalidate(s, lpn);
		map_set(s, lpn, np);
	}
	struct ssd_block *v = block(s, d, victim);
	v->written = 0;
	v->erases++;
	die->free[die->nfree++] = victim;
	s->c.gc_runs++;
	s->c.pages_moved += best;
	s->c.flash_pages += best;
	return best * (s->t_read + s->t_prog) + s->t_erase;
}

static bool open_full(struct ssd *s, uint32_t d)
{
	return s->die[d].open == SSD_NONE || block(s, d, s->die[d].open)->written == s->ppb;
}

/*
 * A page for a host write on die @d, whose data is at the die from @ready_ns.
 * When the die's open block is full and it has at most gc_free_blocks free
 * blocks, garbage collection reclaims blocks until it has more or its copies
 * left room in the open block; the host then writes there, or opens a
 * free block.  With gc_free_blocks >= 1 a die always keeps one free block
 * for garbage collection's copies, so it can never be left with only full
 * blocks.  SSD_NONE when the die can take no host page (every full block
 * entirely valid): the write goes to the next die.
 */
static uint32_t host_page(struct ssd *s, uint32_t d, uint64_t ready_ns, uint64_t *gc_ns)
{
	struct ssd_die *die = &s->die[d];
	*gc_ns = 0;
	uint64_t t = 0, one;
	while (open_full(s, d) && die->nfree <= s->p.gc_free_blocks && (one = gc_once(s, d)) > 0)
		t += one;
	if (t) {
		die->gc_start_ns = max64(ready_ns, die->free_ns);
		die->gc_end_ns = die->gc_start_ns + t;
		die->free_ns = die->gc_end_ns;
		*gc_ns = t;
	}
	/* the last free block is garbage collection's, for its copies */
	if (open_full(s, d) && die->nfree <= s->p.gc_free_blocks)
		return SSD_NONE;
	return next_page(s, d);
}

/* The part of a wait [from, to) that die @d spent in its last garbage collection. */
static uint64_t gc_overlap(const struct ssd_die *die, uint64_t from, uint64_t to)
{
	uint64_t a = max64(from, die->gc_start_ns), b = min64(to, die->gc_end_ns);
	return b > a ? b - a : 0;
}

/* Takes the command slot that frees first: when the request may start. */
static uint64_t slot_start(struct ssd *s, uint64_t now_ns)
{
	return max64(now_ns, s->slots[0]);
}

/* Gives the slot taken by slot_start() the completion @t_ns (replaces the heap's top). */
static void slot_done(struct ssd *s, uint64_t t_ns)
{
	uint64_t *h = s->slots;
	size_t n = s->p.queue_depth, i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		uint64_t mv = t_ns;
		if (l < n && h[l] < mv)
			m = l, mv = h[l];
		if (r < n && h[r] < mv)
			m = r, mv = h[r];
		if (m == i) {
			h[i] = t_ns;
			return;
		}
		h[i] = h[m];
		i = m;
	}
}

/* A write cache slot for a page arriving at @t_ns whose program ends when set: when it enters. */
static uint64_t wb_enter(struct ssd *s, uint64_t t_ns)
{
	if (s->wb_count < s->wb_cap)
		return t_ns;
	uint64_t oldest = s->wb[s->wb_head];
	s->wb_head = (s->wb_head + 1) % s->wb_cap;
	s->wb_count--;
	return max64(t_ns, oldest);
}

static void wb_push(struct ssd *s, uint64_t prog_end_ns)
{
	s->wb[(s->wb_head + s->wb_count) % s->wb_cap] = prog_end_ns;
	s->wb_count++;
}

/* Drops the intervals of @t that ended at or before @now_ns. */
static void tl_prune(struct timeline *t, uint64_t now_ns)
{
	size_t k = 0;
	while (k < t->n && t->e[k] <= now_ns)
		k++;
	if (k) {
		memmove(t->s, t->s + k, (t->n - k) * sizeof(*t->s));
		memmove(t->e, t->e + k, (t->n - k) * sizeof(*t->e));
		t->n -= k;
	}
}

/*
 * Reserves @len ns of @t in the earliest gap at or after @ready_ns; returns
 * its start.  Without memory for one more interval, it goes after the last.
 */
static uint64_t tl_reserve(struct timeline *t, uint64_t ready_ns, uint64_t len)
{
	size_t j = 0;
	uint64_t at = ready_ns;
	/* binary search: the first interval ending after ready_ns */
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->e[mid] <= ready_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (j = lo; j < t->n; j++) {
		if (at + len <= t->s[j])
			break;
		at = max64(at, t->e[j]);
	}
	uint64_t end = at + len;
	bool left = j > 0 && t->e[j - 1] == at, right = j < t->n && t->s[j] == end;
	if (left && right) {
		t->e[j - 1] = t->e[j];
		memmove(t->s + j, t->s + j + 1, (t->n - j - 1) * sizeof(*t->s));
		memmove(t->e + j, t->e + j + 1, (t->n - j - 1) * sizeof(*t->e));
		t->n--;
	} else if (left) {
		t->e[j - 1] = end;
	} else if (right) {
		t->s[j] = at;
	} else {
		if (t->n == t->cap) {
			size_t cap = t->cap ? 2 * t->cap : 16;
			uint64_t *ns = realloc(t->s, cap * sizeof(*ns));
			if (ns)
				t->s = ns;
			uint64_t *ne = ns ? realloc(t->e, cap * sizeof(*ne)) : NULL;
			if (ne)
				t->e = ne;
			if (!ns || !ne) {
				if (t->n == 0)
					return at;
				at = max64(at, t->e[t->n - 1]);
				t->e[t->n - 1] = at + len;
				return at;
			}
			t->cap = cap;
		}
		memmove(t->s + j + 1, t->s + j, (t->n - j) * sizeof(*t->s));
		memmove(t->e + j + 1, t->e + j, (t->n - j) * sizeof(*t->e));
		t->s[j] = at;
		t->e[j] = end;
		t->n++;
	}
	return at;
}

static uint64_t tl_last(const struct timeline *t)
{
	return t->n ? t->e[t->n - 1] : 0;
}

static void touch(struct ssd *s, uint32_t d, struct ssd_io *io)
{
	if (s->stamp[d] != s->req) {
		s->stamp[d] = s->req;
		io->dies++;
	}
}

static uint64_t do_read(struct ssd *s, uint64_t offset, uint64_t end, uint64_t t0,
			struct ssd_io *io)
{
	uint64_t ps = s->p.page_size, complete = t0;
	for (uint64_t lpn = offset / ps; lpn * ps < end; lpn++) {
		uint64_t bytes = min64(end, (lpn + 1) * ps) - max64(offset, lpn * ps);
		uint64_t ready = t0;
		uint32_t ppn = map_get(s, lpn);
		if (ppn != SSD_NONE) {
			uint32_t d = ppn_die(s, ppn), ch = d % s->p.channels;
			struct ssd_die *die = &s->die[d];
			uint64_t st = max64(t0, die->free_ns);
			if (st > t0) {
				io->collisions++;
				io->collision_wait_ns = max64(io->collision_wait_ns, st - t0);
				io->gc_wait_ns = max64(io->gc_wait_ns, gc_overlap(die, t0, st));
			}
			uint64_t xs = tl_reserve(&s->chan[ch], st + s->t_read, s->t_chan_page);
			ready = xs + s->t_chan_page;
			die->free_ns = ready;
			io->pages++;
			io->die_ns += s->t_read;
			touch(s, d, io);
		}
		uint64_t len = rate_ns(bytes, s->p.interface_mb_s);
		complete = max64(complete, tl_reserve(&s->link, ready, len) + len);
	}
	s->c.reads++;
	s->c.read_pages += io->pages;
	s->c.collisions += io->collisions;
	s->c.read_dies += io->dies;
	s->c.collision_wait_ns += io->collision_wait_ns;
	return complete;
}

static uint64_t do_write(struct ssd *s, bool fua, uint64_t offset, uint64_t end, uint64_t t0,
			 struct ssd_io *io)
{
	uint64_t ps = s->p.page_size;
	uint64_t hlen = rate_ns(end - offset, s->p.interface_mb_s);
	uint64_t he = tl_reserve(&s->link, t0, hlen) + hlen;
	bool cached = s->p.write_cache && !fua;
	uint64_t complete = he, prog_end = he;
	for (uint64_t lpn = offset / ps; lpn * ps < end; lpn++) {
		uint64_t ready = cached ? wb_enter(s, he) : he;
		uint32_t d = SSD_NONE, ppn = SSD_NONE;
		uint64_t gc_ns = 0;
		for (uint32_t k = 0; k < s->dies && ppn == SSD_NONE; k++) {
			d = (uint32_t)((s->cursor + k) % s->dies);
			ppn = host_page(s, d, ready, &gc_ns);
		}
		if (ppn == SSD_NONE)
			abort(); /* over-provisioning > 0 and ssd_check() leave a page somewhere */
		s->cursor++;
		invalidate(s, lpn);
		map_set(s, lpn, ppn);
		uint32_t ch = d % s->p.channels;
		struct ssd_die *die = &s->die[d];
		uint64_t st = tl_reserve(&s->chan[ch], max64(ready, die->free_ns), s->t_chan_page);
		if (die->free_ns > ready && !cached)
			io->gc_wait_ns = max64(io->gc_wait_ns, gc_overlap(die, ready, st));
		die->free_ns = st + s->t_chan_page + s->t_prog;
		prog_end = max64(prog_end, die->free_ns);
		s->prog_end_max = max64(s->prog_end_max, die->free_ns);
		if (cached) {
			wb_push(s, die->free_ns);
			complete = max64(complete, ready);
		}
		io->pages++;
		io->die_ns += s->t_prog + gc_ns;
		touch(s, d, io);
		s->c.host_pages++;
		s->c.flash_pages++;
	}
	s->c.writes++;
	return cached ? complete : prog_end;
}

/* What [@from, @to] adds to the busy time: the part after the latest completion. */
static uint64_t busy(struct ssd *s, uint64_t from, uint64_t to)
{
	uint64_t b = to > max64(from, s->busy_end) ? to - max64(from, s->busy_end) : 0;
	s->busy_end = max64(s->busy_end, to);
	return b;
}

uint64_t ssd_submit(struct ssd *s, enum ssd_op op, uint64_t offset, uint64_t length,
		    uint64_t now_ns, struct ssd_io *io)
{
	memset(io, 0, sizeof(*io));
	if (length == 0 || offset >= s->capacity)
		return io->start_ns = io->complete_ns = now_ns;
	uint64_t end = min64(offset + length, s->capacity);
	if (++s->req == 0) {
		memset(s->stamp, 0, s->dies * sizeof(*s->stamp));
		s->req = 1;
	}
	tl_prune(&s->link, now_ns);
	for (uint32_t c = 0; c < s->p.channels; c++)
		tl_prune(&s->chan[c], now_ns);
	uint64_t start = max64(slot_start(s, now_ns), s->ctrl_free);
	s->ctrl_free = start + s->t_cmd;
	io->start_ns = start;
	uint64_t t0 = start + s->t_cmd;
	uint64_t done = op == SSD_READ ? do_read(s, offset, end, t0, io)
				       : do_write(s, op == SSD_WRITE_FUA, offset, end, t0, io);
	slot_done(s, done);
	s->c.gc_wait_ns += io->gc_wait_ns;
	io->busy_ns = busy(s, start, done);
	return io->complete_ns = done;
}

uint64_t ssd_flush(struct ssd *s, uint64_t now_ns, struct ssd_io *io)
{
	memset(io, 0, sizeof(*io));
	io->start_ns = now_ns;
	io->complete_ns = max64(now_ns, s->p.write_cache ? s->prog_end_max : now_ns);
	io->busy_ns = busy(s, now_ns, io->complete_ns);
	s->c.flushes++;
	return io->complete_ns;
}

void ssd_trim(struct ssd *s, uint64_t offset, uint64_t length)
{
	uint64_t ps = s->p.page_size;
	uint64_t end = min64(offset + length, s->capacity);
	if (offset >= end)
		return;
	uint64_t first = (offset + ps - 1) / ps;
	/* the last page counts when the range reaches the capacity, its end */
	uint64_t last = end == s->capacity ? s->user_pages : end / ps;
	for (uint64_t lpn = first; lpn < last; lpn++)
		invalidate(s, lpn);
	s->c.trims++;
}

void ssd_get_counters(const struct ssd *s, struct ssd_counters *c)
{
	*c = s->c;
	uint64_t n = (uint64_t)s->dies * s->blocks_per_die;
	c->erases_min = UINT64_MAX;
	c->erases_max = c->erases_total = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t e = s->blk[i].erases;
		c->erases_min = min64(c->erases_min, e);
		c->erases_max = max64(c->erases_max, e);
		c->erases_total += e;
	}
}

uint32_t ssd_ppn_of(const struct ssd *s, uint64_t offset)
{
	if (offset >= s->capacity)
		return SSD_NONE;
	return map_get(s, offset / s->p.page_size);
}

int ssd_die_of(const struct ssd *s, uint64_t offset)
{
	uint32_t ppn = ssd_ppn_of(s, offset);
	return ppn == SSD_NONE ? -1 : (int)ppn_die(s, ppn);
}

uint32_t ssd_dies(const struct ssd *s)
{
	return s->dies;
}

uint32_t ssd_page_size(const struct ssd *s)
{
	return s->p.page_size;
}

uint32_t ssd_blocks_per_die(const struct ssd *s)
{
	return s->blocks_per_die;
}

uint64_t ssd_flash_bytes(const struct ssd *s)
{
	return s->flash_pages * s->p.page_size;
}

uint64_t ssd_state_bytes(const struct ssd *s)
{
	uint64_t nblk = (uint64_t)s->dies * s->blocks_per_die;
	return s->user_pages * sizeof(*s->map) + s->flash_pages * sizeof(*s->rmap) +
	       nblk * (sizeof(*s->blk) + sizeof(*s->free_store));
}

uint32_t ssd_block_valid(const struct ssd *s, uint32_t die, uint32_t blockno)
{
	return s->blk[(uint64_t)die * s->blocks_per_die + blockno].valid;
}

uint32_t ssd_block_erases(const struct ssd *s, uint32_t die, uint32_t blockno)
{
	return s->blk[(uint64_t)die * s->blocks_per_die + blockno].erases;
}

uint64_t ssd_die_free_ns(const struct ssd *s, uint32_t die)
{
	return s->die[die].free_ns;
}

uint64_t ssd_channel_free_ns(const struct ssd *s, uint32_t channel)
{
	return tl_last(&s->chan[channel]);
}

int ssd_verify(const struct ssd *s, char *err, size_t errlen)
{
	uint64_t nblk = (uint64_t)s->dies * s->blocks_per_die;
	uint32_t *count = calloc(nblk, sizeof(*count));
	int rc = 0;
	if (!count)
		return -ENOMEM;
	for (uint64_t lpn = 0; lpn < s->user_pages && !rc; lpn++) {
		uint32_t ppn = map_get(s, lpn);
		if (ppn == SSD_NONE)
			continue;
		if (rmap_get(s, ppn) != lpn)
			rc = snprintf(err, errlen, "page %llu maps to %u, which maps back to %u",
				      (unsigned long long)lpn, ppn, rmap_get(s, ppn));
		else if (ppn % s->ppb >= s->blk[ppn / s->ppb].written)
			rc =
			    snprintf(err, errlen, "page %llu at %u, past its block's written pages",
				     (unsigned long long)lpn, ppn);
		count[ppn / s->ppb]++;
	}
	for (uint64_t b = 0; b < nblk && !rc; b++)
		if (count[b] != s->blk[b].valid)
			rc =
			    snprintf(err, errlen, "block %llu: %u valid pages counted, %u recorded",
				     (unsigned long long)b, count[b], s->blk[b].valid);
	for (uint32_t d = 0; d < s->dies && !rc; d++)
		for (uint32_t i = 0; i < s->die[d].nfree && !rc; i++) {
			uint32_t b = s->die[d].free[i];
			if (b == s->die[d].open || block_c(s, d, b)->written)
				rc = snprintf(err, errlen,
					      "die %u: free block %u is open or written", d, b);
		}
	free(count);
	return rc ? -EUCLEAN : 0;
}

double ssd_lambert_w0(double x)
{
	const double e_inv = 0.36787944117144233;
	if (x < -e_inv)
		return NAN;
	if (x == -e_inv)
		return -1;
	/* start: the branch-point series near -1/e, log1p elsewhere (Corless et al., 4.22) */
	double w = x < -0.25 ? -1 + sqrt(2 * (1 + M_E * x)) : log1p(x);
	for (int i = 0; i < 100; i++) {
		double ew = exp(w), f = w * ew - x;
		double step = f / (ew * (w + 1) - (w + 2) * f / (2 * w + 2));
		w -= step;
		if (fabs(step) <= 1e-15 * (1 + fabs(w)))
			break;
	}
	return w;
}

double ssd_waf_greedy(double op)
{
	double a = 1 + op;
	return a / (a + ssd_lambert_w0(-a * exp(-a)));
}

/*
 * The FTL's state file (ssd_save(), ssd_load()): a header, then the
 * arrays as they are in memory (little-endian on the machines this runs
 * on; the header's byte-order mark refuses another), each from a multiple
 * of 8 bytes of the file (zeros between), their 64 KiB chunks that are
 * all zero left as holes (a drive's untouched map costs neither disk nor,
 * read back with SEEK_DATA, memory):
 *   map (u32 x user_pages), rmap (u32 x flash_pages), blk (8 bytes x
 *   blocks), per die its open block and free count (u32, u32), the free
 *   stacks (u32 x blocks).
 * The header names the geometry it was written for; the checksum covers
 * the header (with the checksum field 0) and the arrays: each 8-byte word
 * w of an array (its last one zero-padded) folds into h as
 * h = mix(h ^ w) with splitmix64's output function (splitmix64.h), a
 * check against damage, not against forgery.
 */
#define SSD_STATE_MAGIC	  "SFS-FTL"
#define SSD_STATE_VERSION 1
#define SSD_STATE_BOM	  UINT32_C(0x01020304)

struct ssd_state_header {
	char magic[8];
	uint32_t version, bom;
	uint64_t capacity, user_pages, flash_pages;
	uint32_t dies, blocks_per_die, ppb, page_size;
	uint32_t prefill, channels;
	uint64_t cursor;
	struct ssd_counters c;
	uint64_t checksum;
};

/* Folds @len bytes at @p (a multiple of 8, or the tail zero-padded) into *@h. */
static void state_fold(uint64_t *h, const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, b + i, 8);
		*h = splitmix64_mix(*h ^ w);
	}
	if (i < len) {
		w = 0;
		memcpy(&w, b + i, len - i);
		*h = splitmix64_mix(*h ^ w);
	}
}

/* The arrays, in file order: pointer and bytes of each. */
static size_t state_parts(struct ssd *s, void **ptr, size_t *len, uint32_t *die_words)
{
	uint64_t nblk = (uint64_t)s->dies * s->blocks_per_die;
	size_t n = 0;

	ptr[n] = s->map, len[n++] = s->user_pages * sizeof(*s->map);
	ptr[n] = s->rmap, len[n++] = s->flash_pages * sizeof(*s->rmap);
	ptr[n] = s->blk, len[n++] = nblk * sizeof(*s->blk);
	ptr[n] = die_words, len[n++] = (size_t)s->dies * 2 * sizeof(uint32_t);
	ptr[n] = s->free_store, len[n++] = nblk * sizeof(*s->free_store);
	return n;
}

static void state_header(const struct ssd *s, struct ssd_state_header *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, SSD_STATE_MAGIC, sizeof(SSD_STATE_MAGIC));
	h->version = SSD_STATE_VERSION;
	h->bom = SSD_STATE_BOM;
	h->capacity = s->capacity;
	h->user_pages = s->user_pages;
	h->flash_pages = s->flash_pages;
	h->dies = s->dies;
	h->blocks_per_die = s->blocks_per_die;
	h->ppb = s->ppb;
	h->page_size = s->p.page_size;
	h->prefill = s->p.prefill;
	h->channels = s->p.channels;
	h->cursor = s->cursor;
	h->c = s->c;
}

/* Folds @len zero bytes into *@h, as state_fold() of zeros would, touching no memory. */
static void state_fold_zeros(uint64_t *h, size_t len)
{
	for (size_t i = 0; i < (len + 7) / 8; i++)
		*h = splitmix64_mix(*h);
}

/* Each array starts on a multiple of 8 bytes of the file (state_fold() words). */
static uint64_t pad8(uint64_t n)
{
	return (n + 7) & ~UINT64_C(7);
}

/* Chunks of the arrays that are all zero are left as holes of the file. */
#define STATE_CHUNK 65536

static bool all_zero(const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * Writes @len bytes at @p at offset *@off of @fd, its all-zero chunks as
 * holes, and advances *@off: 0 or -errno.
 */
static int write_sparse(int fd, uint64_t *off, const void *p, size_t len)
{
	const unsigned char *b = p;
	for (size_t done = 0; done < len;) {
		size_t n = len - done < STATE_CHUNK ? len - done : STATE_CHUNK;
		if (!all_zero(b + done, n)) {
			for (size_t w = 0; w < n;) {
				ssize_t k = pwrite(fd, b + done + w, n - w, (off_t)(*off + w));
				if (k < 0 && errno == EINTR)
					continue;
				if (k < 0)
					return -errno;
				w += (size_t)k;
			}
		}
		done += n;
		*off += n;
	}
	return 0;
}

/* Reads @len bytes at @off of @fd into @p: 0, -EIO at the file's end, or -errno. */
static int read_at(int fd, void *p, size_t len, uint64_t off)
{
	char *b = p;
	while (len) {
		ssize_t n = pread(fd, b, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		b += n, len -= (size_t)n, off += (uint64_t)n;
	}
	return 0;
}

/*
 * Reads @len bytes at offset *@off of @fd (of @fsize bytes) into @p,
 * which holds zeros (calloc()'s, untouched): only the file's data
 * regions (SEEK_DATA), so that a hole costs neither I/O nor memory, and
 * folds them into *@h.  Advances *@off.  0, -EIO past the end, or -errno.
 */
static int read_sparse(int fd, uint64_t fsize, uint64_t *off, void *p, size_t len, uint64_t *h)
{
	unsigned char *b = p;
	uint64_t at = *off, end = *off + len;
	int rc;

	if (end > fsize)
		return -EIO;
	while (at < end) {
		off_t d = lseek(fd, (off_t)at, SEEK_DATA);
		uint64_t data = d < 0 ? end : (uint64_t)d; /* ENXIO: a hole to the end */
		if (data > end)
			data = end;
		state_fold_zeros(h, data - at);
		/* the fold works on 8-byte words: holes and data start on 4 KiB */
		if (data >= end)
			break;
		off_t e = lseek(fd, (off_t)data, SEEK_HOLE);
		uint64_t hole = e < 0 || (uint64_t)e > end ? end : (uint64_t)e;
		rc = read_at(fd, b + (data - *off), hole - data, data);
		if (rc)
			return rc;
		state_fold(h, b + (data - *off), hole - data);
		at = hole;
	}
	*off = end;
	return 0;
}

int ssd_save(struct ssd *s, int fd)
{
	struct ssd_state_header h;
	uint32_t *dw = malloc((size_t)s->dies * 2 * sizeof(uint32_t));
	void *ptr[5];
	size_t len[5], n, i;
	uint64_t sum = 0, off = 0;
	int rc = 0;

	if (!dw)
		return -ENOMEM;
	for (uint32_t d = 0; d < s->dies; d++) {
		dw[2 * d] = s->die[d].open;
		dw[2 * d + 1] = s->die[d].nfree;
	}
	state_header(s, &h);
	n = state_parts(s, ptr, len, dw);
	state_fold(&sum, &h, sizeof(h));
	for (i = 0; i < n; i++)
		state_fold(&sum, ptr[i], len[i]);
	h.checksum = sum;
	rc = write_sparse(fd, &off, &h, sizeof(h));
	for (i = 0; i < n && !rc; i++) {
		rc = write_sparse(fd, &off, ptr[i], len[i]);
		off = pad8(off);
	}
	if (!rc && ftruncate(fd, (off_t)off) != 0)
		rc = -errno;
	free(dw);
	return rc;
}

int ssd_load(struct ssd *s, int fd, char *err, size_t errlen)
{
	struct ssd_state_header h, want;
	struct stat st;
	uint32_t *dw = NULL;
	void *ptr[5];
	size_t len[5], n, i;
	uint64_t sum = 0, got, off = sizeof(h), need = sizeof(h);
	int rc;

#define LOAD_BAD(...) (snprintf(err, errlen, __VA_ARGS__), rc = -EINVAL)
	if (fstat(fd, &st) != 0)
		return -errno;
	rc = read_at(fd, &h, sizeof(h), 0);
	if (rc)
		return rc == -EIO ? LOAD_BAD("shorter than its header") : rc;
	state_header(s, &want);
	if (memcmp(h.magic, want.magic, sizeof(h.magic)) != 0)
		return LOAD_BAD("not an ssd model's FTL state");
	if (h.version != SSD_STATE_VERSION || h.bom != SSD_STATE_BOM)
		return LOAD_BAD("version %u or byte order of another build (this one writes "
				"version %u)",
				h.version, SSD_STATE_VERSION);
	if (h.capacity != want.capacity || h.user_pages != want.user_pages ||
	    h.flash_pages != want.flash_pages || h.dies != want.dies ||
	    h.blocks_per_die != want.blocks_per_die || h.ppb != want.ppb ||
	    h.page_size != want.page_size || h.prefill != want.prefill ||
	    h.channels != want.channels)
		return LOAD_BAD("written for another drive (capacity %llu, %u dies on %u channels, "
				"%u blocks of %u pages of %u bytes per die, prefill %u; this one: "
				"%llu, %u on %u, %u of %u of %u, %u)",
				(unsigned long long)h.capacity, h.dies, h.channels,
				h.blocks_per_die, h.ppb, h.page_size, h.prefill,
				(unsigned long long)want.capacity, want.dies, want.channels,
				want.blocks_per_die, want.ppb, want.page_size, want.prefill);
	dw = calloc((size_t)s->dies * 2, sizeof(uint32_t));
	if (!dw)
		return -ENOMEM;
	n = state_parts(s, ptr, len, dw);
	for (i = 0; i < n; i++)
		need += pad8(len[i]);
	if ((uint64_t)st.st_size != need) {
		free(dw);
		return LOAD_BAD("%s than its geometry needs (%llu bytes, not %llu)",
				(uint64_t)st.st_size < need ? "shorter" : "longer",
				(unsigned long long)st.st_size, (unsigned long long)need);
	}
	got = h.checksum;
	h.checksum = 0;
	state_fold(&sum, &h, sizeof(h));
	/* prefill wrote blk and the free stacks: zero them, holes read as zeros */
	memset(s->blk, 0, len[2]);
	memset(s->free_store, 0, len[4]);
	for (i = 0; i < n; i++) {
		rc = read_sparse(fd, (uint64_t)st.st_size, &off, ptr[i], len[i], &sum);
		off = pad8(off);
		if (rc) {
			free(dw);
			return rc == -EIO ? LOAD_BAD("shorter than its geometry needs") : rc;
		}
	}
	if (sum != got) {
		free(dw);
		return LOAD_BAD("checksum %016llx, the contents give %016llx (damaged)",
				(unsigned long long)got, (unsigned long long)sum);
	}
	for (uint32_t d = 0; d < s->dies; d++) {
		s->die[d].open = dw[2 * d];
		s->die[d].nfree = dw[2 * d + 1];
		if ((s->die[d].open != SSD_NONE && s->die[d].open >= s->blocks_per_die) ||
		    s->die[d].nfree > s->blocks_per_die) {
			free(dw);
			return LOAD_BAD("die %u: open block %u or %u free blocks out of range", d,
					s->die[d].open, s->die[d].nfree);
		}
	}
	free(dw);
	s->cursor = h.cursor;
	s->c = h.c;
	return 0;
#undef LOAD_BAD
}
