/*
 * The hdd disk model: what one I/O would cost on a single-actuator rotating
 * disk (see hdd.h for the three terms and their sources).  It plugs into
 * the timing layer through its struct disk_model_ops (disk_model.h), with
 * its own keys (the table at the end), and ignores trims.
 *
 * Data structure.  The model is a handful of derived constants (capacity,
 * bytes per track at the outer rate, one revolution in ns) and two words of
 * state: where the head stopped (the end of the previous I/O) and when it
 * becomes free.  That is all a FIFO queue on one virtual head needs: an I/O
 * submitted while the head is busy simply starts at busy_until_ns, so no list
 * of pending I/Os is kept.  Nothing here reads a clock or takes a lock; the
 * caller passes "now" and serializes calls.
 *
 * Arithmetic and rounding.  Every term is computed in double precision and
 * rounded once, to the nearest nanosecond (halves away from zero, llround),
 * so tests can assert exact integers:
 *   rev_ns      = round(60e9 / rpm)
 *   track_bytes = round(transfer_outer_mib_s * 2^20 / (rpm / 60))
 *   seek        = round(the curve below, in ns)
 *   rotation    = average: round(30e9 / rpm), half a revolution;
 *                 phase: the target angle is first rounded to a whole
 *                 nanosecond of the revolution, round((offset mod
 *                 track_bytes) * rev_ns / track_bytes), and the wait is then
 *                 integer arithmetic modulo rev_ns, so it is exactly 0 when
 *                 the spindle is at the target, never rev_ns.
 *   transfer    = round(length * 1e9 / (rate(offset) * 2^20))
 * The sums in hdd_submit() are integer.
 *
 * Seek curve, for a distance d in bytes, capacity C and track T:
 *   d == 0          0
 *   0 < d <= T      seek_track
 *   T < d <= C/3    seek_track + (seek_avg - seek_track)
 *                                * (sqrt(d) - sqrt(T)) / (sqrt(C/3) - sqrt(T))
 *   C/3 < d         seek_avg + (seek_full - seek_avg) * (d - C/3) / (C - C/3),
 *                   at most seek_full
 * It is continuous and non-decreasing.  When T >= C/3 (a capacity of less
 * than three tracks) there is no room for the square-root part, and the
 * curve is a straight line from (T, seek_track) to (C, seek_full).
 *
 * Weak spots, on purpose:
 * - Distances are bytes, not cylinders: the curve treats the disk as one
 *   surface whose tracks all hold track_bytes, while a zoned disk holds
 *   fewer bytes per track inside.  The three datasheet points still hold at
 *   0, C/3 and C.
 * - A sequential continuation is free whatever time has passed since the
 *   previous I/O ended.  A real disk would have to wait for the sector to
 *   come round again, but its read-ahead segment usually already holds the
 *   data; this model stands for that cache and nothing else.
 * - No command overhead, no head switch or settle difference between reads
 *   and writes.
 * - The write cache is one pool of dirty bytes, not a drive's fixed
 *   segments; its destage policy (C-SCAN between a high and a low water
 *   mark, see hdd.h) is a common one, not any one drive's firmware,
 *   which vendors do not publish.
 *
 * Write cache.  The dirty data is a sorted array of disjoint, non-adjacent
 * byte ranges (merged on insert), searched by bisection: a cache of a few
 * MiB holds at most a few thousand ranges, and a destage takes the first
 * bytes of one range, so it never splits one.  Only a FUA write into the
 * middle of a dirty range splits it, and the array grows by doubling.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_i.h"
#include "hdd.h"

#define MIB_BYTES 1048576.0 /* 2^20 */
#define NS_PER_MS 1e6
#define NS_PER_S  1e9

/*
 * Nearest integer (ns or bytes), halves away from zero; 0 for @x <= 0 and
 * saturated at UINT64_MAX (an absurd transfer time must not wrap).
 */
static uint64_t round_u64(double x)
{
	if (!(x > 0))
		return 0;
	if (x >= 0x1p63)
		return UINT64_MAX;
	return (uint64_t)llround(x);
}

static int positive(double x)
{
	return isfinite(x) && x > 0;
}

int hdd_init(struct hdd *m, const struct hdd_params *p, uint64_t capacity)
{
	double track, rev;

	if (capacity == 0)
		return -EINVAL;
	if (!positive(p->rpm) || !positive(p->transfer_outer_mib_s) ||
	    !positive(p->transfer_inner_mib_s) || p->transfer_inner_mib_s > p->transfer_outer_mib_s)
		return -EINVAL;
	/*
	 * The configuration accepts a track-to-track seek of 0 (a model of
	 * rotation and transfer only), so only negative seek times are refused
	 * here, and the order config_finish() checks is checked again for
	 * callers that fill hdd_params by hand.
	 */
	if (!isfinite(p->seek_track_ms) || !isfinite(p->seek_avg_ms) ||
	    !isfinite(p->seek_full_ms) || p->seek_track_ms < 0 ||
	    p->seek_track_ms > p->seek_avg_ms || p->seek_avg_ms > p->seek_full_ms ||
	    p->seek_full_ms * NS_PER_MS >= 1e18)
		return -EINVAL;
	if (!isfinite(p->prefetch) || p->prefetch < 0 || p->prefetch > HDD_PREFETCH_MAX)
		return -EINVAL;
	if (p->write_cache && (p->cache_size == 0 || !positive(p->interface_mib_s)))
		return -EINVAL;

	rev = 60.0 * NS_PER_S / p->rpm;
	track = p->transfer_outer_mib_s * MIB_BYTES / (p->rpm / 60.0);
	/* Outside what uint64 holds, or a track or revolution of less than one unit. */
	if (!(rev >= 0.5 && rev < 1e18) || !(track >= 0.5 && track < 1e18))
		return -EINVAL;

	*m = (struct hdd){
	    .p = *p,
	    .capacity = capacity,
	    .track_bytes = round_u64(track),
	    .rev_ns = round_u64(rev),
	    .head_pos = 0,
	    .busy_until_ns = 0,
	    .prefetch_end = 0,
	};
	return 0;
}

uint64_t hdd_seek_ns(const struct hdd *m, uint64_t distance)
{
	double d = (double)distance, c = (double)m->capacity, t = (double)m->track_bytes;
	double c3 = c / 3.0;
	double track = m->p.seek_track_ms * NS_PER_MS;
	double avg = m->p.seek_avg_ms * NS_PER_MS;
	double full = m->p.seek_full_ms * NS_PER_MS;
	double ns;

	if (distance == 0)
		return 0;
	if (distance <= m->track_bytes)
		return round_u64(track);
	if (t >= c3) {
		/* Tiny capacity: no square-root part (see the file comment). */
		if (t >= c)
			return round_u64(full);
		ns = track + (full - track) * (d - t) / (c - t);
	} else if (d <= c3) {
		ns = track + (avg - track) * (sqrt(d) - sqrt(t)) / (sqrt(c3) - sqrt(t));
	} else {
		ns = avg + (full - avg) * (d - c3) / (c - c3);
	}
	return round_u64(ns < full ? ns : full);
}

uint64_t hdd_rotation_ns(const struct hdd *m, uint64_t offset, uint64_t t_ns)
{
	uint64_t target, angle;

	if (m->p.rotation == ROTATION_AVERAGE)
		return round_u64(30.0 * NS_PER_S / m->p.rpm);
	target = round_u64((double)(offset % m->track_bytes) * (double)m->rev_ns /
			   (double)m->track_bytes) %
		 m->rev_ns;
	angle = t_ns % m->rev_ns;
	return target >= angle ? target - angle : target + m->rev_ns - angle;
}

uint64_t hdd_transfer_ns(const struct hdd *m, uint64_t offset, uint64_t length)
{
	double outer = m->p.transfer_outer_mib_s, inner = m->p.transfer_inner_mib_s;
	double where = offset < m->capacity ? (double)offset : (double)m->capacity;
	double rate = outer - (outer - inner) * where / (double)m->capacity;

	return round_u64((double)length * NS_PER_S / (rate * MIB_BYTES));
}

/* The head serves one I/O on the media: the model without a write cache. */
static uint64_t media_submit(struct hdd *m, uint64_t now_ns, uint64_t offset, uint64_t length,
			     enum disk_op dir, struct hdd_io_cost *cost)
{
	struct hdd_io_cost c = *cost;

	c.start_ns = now_ns > m->busy_until_ns ? now_ns : m->busy_until_ns;
	/* prefetch_end > head_pos: the last I/O was a read, with a window. */
	if (dir == DISK_READ && m->prefetch_end > m->head_pos && offset >= m->head_pos &&
	    offset <= m->prefetch_end) {
		/* On the read-ahead stream: the drive has been reading on from
		 * head_pos since it went idle; done when the stream passes the end. */
		uint64_t reached = m->busy_until_ns +
				   hdd_transfer_ns(m, m->head_pos, offset + length - m->head_pos);
		c.transfer_ns = reached > c.start_ns ? reached - c.start_ns : 0;
		c.prefetch_hit = offset > m->head_pos || reached <= c.start_ns;
	} else {
		if (offset != m->head_pos) {
			c.seek_ns = hdd_seek_ns(m, offset > m->head_pos ? offset - m->head_pos
									: m->head_pos - offset);
			c.rotation_ns = hdd_rotation_ns(m, offset, c.start_ns + c.seek_ns);
		}
		c.transfer_ns = hdd_transfer_ns(m, offset, length);
	}
	c.complete_ns = c.start_ns + c.seek_ns + c.rotation_ns + c.transfer_ns;
	m->busy_until_ns = c.complete_ns;
	m->head_pos = offset + length;
	double ahead = dir == DISK_READ ? m->p.prefetch * (double)length : 0;
	m->prefetch_end =
	    m->head_pos + (ahead < (double)m->p.prefetch_max ? (uint64_t)ahead : m->p.prefetch_max);
	*cost = c;
	return c.complete_ns;
}

/* ---- the write cache ---- */

uint64_t hdd_link_ns(const struct hdd *m, uint64_t length)
{
	return round_u64((double)length * NS_PER_S / (m->p.interface_mib_s * MIB_BYTES));
}

/* Index of the first dirty range whose end is > @off (ranges are sorted and disjoint). */
static size_t dirty_first_after(const struct hdd *m, uint64_t off)
{
	size_t lo = 0, hi = m->ndirty;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->dirty[mid].end <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Bytes of [off, end) already dirty. */
static uint64_t dirty_overlap(const struct hdd *m, uint64_t off, uint64_t end)
{
	uint64_t n = 0;
	for (size_t i = dirty_first_after(m, off); i < m->ndirty && m->dirty[i].off < end; i++) {
		uint64_t a = m->dirty[i].off > off ? m->dirty[i].off : off;
		uint64_t b = m->dirty[i].end < end ? m->dirty[i].end : end;
		n += b - a;
	}
	return n;
}

/* Makes room for one range at index @i of the dirty ranges (moving the rest up).  0 or -ENOMEM. */
static int dirty_open_slot(struct hdd *m, size_t i)
{
	if (m->ndirty == m->capdirty) {
		size_t cap = m->capdirty ? 2 * m->capdirty : 16;
		struct hdd_range *v = realloc(m->dirty, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		m->dirty = v;
		m->capdirty = cap;
	}
	memmove(&m->dirty[i + 1], &m->dirty[i], (m->ndirty - i) * sizeof(m->dirty[0]));
	m->ndirty++;
	return 0;
}

/* Drops [off, end) from the dirty ranges (it may split one: hence -ENOMEM). */
static int dirty_remove(struct hdd *m, uint64_t off, uint64_t end)
{
	if (m->ndirty == 0)
		return 0; /* nothing dirty: m->dirty may be NULL, which memmove() must not see */
	size_t i = dirty_first_after(m, off);
	if (i < m->ndirty && m->dirty[i].off < off && m->dirty[i].end > end) {
		/* Strictly inside one range: split it in two. */
		if (dirty_open_slot(m, i))
			return -ENOMEM;
		m->dirty[i].end = off;
		m->dirty[i + 1].off = end;
		m->dirty_bytes -= end - off;
		return 0;
	}
	size_t j = i, keep_from;
	if (i < m->ndirty && m->dirty[i].off < off) {
		/* The range that begins before @off keeps its head. */
		m->dirty_bytes -= m->dirty[i].end - off;
		m->dirty[i].end = off;
		j = ++i;
	}
	while (j < m->ndirty && m->dirty[j].end <= end) {
		m->dirty_bytes -= m->dirty[j].end - m->dirty[j].off;
		j++;
	}
	if (j < m->ndirty && m->dirty[j].off < end) {
		m->dirty_bytes -= end - m->dirty[j].off;
		m->dirty[j].off = end;
	}
	keep_from = j;
	memmove(&m->dirty[i], &m->dirty[keep_from], (m->ndirty - keep_from) * sizeof(m->dirty[0]));
	m->ndirty -= keep_from - i;
	return 0;
}

/* Adds [off, end) to the dirty ranges, merging what overlaps or touches it. */
static int dirty_add(struct hdd *m, uint64_t off, uint64_t end)
{
	/* The first range that touches or follows [off, end): end >= off. */
	size_t i = off ? dirty_first_after(m, off - 1) : 0;
	size_t j = i;
	uint64_t a = off, b = end;

	while (j < m->ndirty && m->dirty[j].off <= end) {
		if (m->dirty[j].off < a)
			a = m->dirty[j].off;
		if (m->dirty[j].end > b)
			b = m->dirty[j].end;
		m->dirty_bytes -= m->dirty[j].end - m->dirty[j].off;
		j++;
	}
	if (j == i) {
		if (dirty_open_slot(m, i))
			return -ENOMEM;
	} else if (j > i + 1) {
		memmove(&m->dirty[i + 1], &m->dirty[j], (m->ndirty - j) * sizeof(m->dirty[0]));
		m->ndirty -= j - i - 1;
	}
	m->dirty[i] = (struct hdd_range){a, b};
	m->dirty_bytes += b - a;
	return 0;
}

/*
 * Destages one piece at @start_ns: the first dirty range at or after the
 * head (C-SCAN), else the lowest, at most HDD_DESTAGE_MAX bytes of its
 * beginning.  Returns the head time it took.
 */
static uint64_t destage_one(struct hdd *m, uint64_t start_ns)
{
	size_t i = dirty_first_after(m, m->head_pos);
	/* The first range that begins at or after the head; past the last, the lowest. */
	if (i < m->ndirty && m->dirty[i].off < m->head_pos)
		i++;
	if (i == m->ndirty)
		i = 0;
	uint64_t off = m->dirty[i].off;
	uint64_t len = m->dirty[i].end - off;
	struct hdd_io_cost c = {0};

	if (len > HDD_DESTAGE_MAX)
		len = HDD_DESTAGE_MAX;
	/* A write: it leaves no read-ahead window. */
	media_submit(m, start_ns, off, len, DISK_WRITE, &c);
	/* A range's first bytes: removing them never splits it, so cannot fail. */
	(void)dirty_remove(m, off, off + len);
	return c.complete_ns - c.start_ns;
}

/* The background destage of the idle head between busy_until_ns and @now_ns. */
static uint64_t destage_idle(struct hdd *m, uint64_t now_ns)
{
	uint64_t low = m->p.cache_size / 4, ns = 0;

	while (m->destaging && m->ndirty) {
		/* Idle since the head was last busy, but with nothing to do before the high mark
		 * was reached. */
		uint64_t t =
		    m->busy_until_ns > m->destage_from_ns ? m->busy_until_ns : m->destage_from_ns;
		if (t >= now_ns)
			break;
		ns += destage_one(m, t);
		if (m->dirty_bytes <= low)
			m->destaging = false;
	}
	return ns;
}

uint64_t hdd_submit(struct hdd *m, uint64_t now_ns, uint64_t offset, uint64_t length,
		    enum disk_op dir, struct hdd_io_cost *cost)
{
	struct hdd_io_cost c = {0};
	uint64_t end = offset + length;

	if (!m->p.write_cache) {
		*cost = c;
		return media_submit(m, now_ns, offset, length, dir, cost);
	}
	c.destage_ns = destage_idle(m, now_ns);
	if (dir == DISK_READ && length && dirty_overlap(m, offset, end) == length) {
		/* Every byte is dirty in the cache: it only crosses the link. */
		c.start_ns = now_ns > m->link_free_ns ? now_ns : m->link_free_ns;
		c.transfer_ns = hdd_link_ns(m, length);
		c.complete_ns = c.start_ns + c.transfer_ns;
		c.cache_hit = true;
		m->link_free_ns = c.complete_ns;
		*cost = c;
		return c.complete_ns;
	}
	if (dir == DISK_READ) {
		*cost = c; /* media_submit() adds to the destage time */
		return media_submit(m, now_ns, offset, length, dir, cost);
	}
	if (dir == DISK_WRITE && length <= m->p.cache_size) {
		uint64_t ready;

		c.start_ns = now_ns > m->link_free_ns ? now_ns : m->link_free_ns;
		ready = c.start_ns;
		/* Its bytes not yet dirty need room (a destage may take some that are). */
		while (m->dirty_bytes + length - dirty_overlap(m, offset, end) > m->p.cache_size) {
			/* No room: it waits for destages (at once when the head is free). */
			c.destage_ns += destage_one(m, now_ns);
			ready = m->busy_until_ns > ready ? m->busy_until_ns : ready;
		}
		if (dirty_add(m, offset, end) == 0) {
			c.cache_wait_ns = ready - c.start_ns;
			c.transfer_ns = hdd_link_ns(m, length);
			c.complete_ns = ready + c.transfer_ns;
			c.cache_hit = true;
			m->link_free_ns = c.complete_ns;
			if (!m->destaging && m->dirty_bytes >= m->p.cache_size / 2) {
				/* The high water mark: background destage from when these bytes are
				 * in. */
				m->destaging = true;
				m->destage_from_ns = c.complete_ns;
			}
			*cost = c;
			return c.complete_ns;
		}
		c = (struct hdd_io_cost){.destage_ns = c.destage_ns};
	}
	/* FUA, longer than the cache, or no memory: to the media; the newer bytes replace dirty
	 * ones. */
	if (dirty_remove(m, offset, end)) {
		/* Cannot split a range: destage it all first, then write through. */
		while (m->ndirty)
			c.destage_ns += destage_one(m, now_ns);
	}
	*cost = c;
	return media_submit(m, now_ns, offset, length, dir, cost);
}

uint64_t hdd_flush(struct hdd *m, uint64_t now_ns, struct hdd_io_cost *cost)
{
	struct hdd_io_cost c = {.start_ns = now_ns, .complete_ns = now_ns};

	if (m->p.write_cache) {
		c.destage_ns = destage_idle(m, now_ns);
		if (m->ndirty) {
			while (m->ndirty)
				c.destage_ns += destage_one(m, now_ns);
			m->destaging = false;
			c.complete_ns = m->busy_until_ns;
		}
	}
	*cost = c;
	return c.complete_ns;
}

void hdd_release(struct hdd *m)
{
	free(m->dirty);
	m->dirty = NULL;
	m->ndirty = m->capdirty = 0;
	m->dirty_bytes = 0;
}

uint64_t hdd_busy_ns(const struct hdd_io_cost *c)
{
	return c->destage_ns + (c->cache_hit ? 0 : c->complete_ns - c->start_ns);
}

/* ---- registration: the hdd model's keys and table ---- */

#define STR_(x) #x
#define STR(x)	STR_(x)

/* transfer_mib_s: "rate" or "outer,inner" into the two fields of struct hdd_params. */
static int parse_transfer(void *field, const char *value, char sep, char *why, size_t len)
{
	struct hdd_params *d = field;
	const char *p = value;
	char item[64];
	double v[2];
	int n = 0;

	do {
		config_next_item(&p, sep, item, sizeof(item));
		if (n == 2 || config_parse_double(item, &v[n]) || !(v[n] > 0)) {
			snprintf(why, len,
				 "expected one rate in MiB/s, or 'outer%cinner' for a zoned disk, "
				 "each > 0",
				 sep);
			return -EINVAL;
		}
		n++;
	} while (*p);
	if (n == 1)
		v[1] = v[0];
	if (v[0] < v[1]) {
		snprintf(why, len, "the outer zone (first) must be at least as fast as the inner");
		return -EINVAL;
	}
	d->transfer_outer_mib_s = v[0];
	d->transfer_inner_mib_s = v[1];
	return 0;
}

static void format_transfer(const void *field, char *buf, size_t len)
{
	const struct hdd_params *d = field;
	char a[32], b[32];

	config_format_double(d->transfer_outer_mib_s, a, sizeof(a));
	config_format_double(d->transfer_inner_mib_s, b, sizeof(b));
	if (d->transfer_outer_mib_s == d->transfer_inner_mib_s)
		snprintf(buf, len, "%s", a);
	else
		snprintf(buf, len, "%s,%s", a, b);
}

static const char *const rotation_names[] = {"phase", "average", NULL};

#define OWN(field) .home = CONFIG_MODEL_DATA, .offset = offsetof(struct hdd_params, field)
#define OWN_ALL	   .home = CONFIG_MODEL_DATA, .offset = 0

static const struct config_key hdd_keys[] = {
    {"disk", "rpm", CONFIG_DOUBLE, OWN(rpm), .flags = CONFIG_HAS_MIN | CONFIG_MIN_OPEN, .min = 0,
     .def = "7200", .help = "spindle speed in revolutions per minute"},
    {"disk", "seek_track_ms", CONFIG_DOUBLE, OWN(seek_track_ms), .flags = CONFIG_HAS_MIN, .min = 0,
     .def = "1", .help = "track-to-track seek in milliseconds"},
    {"disk", "seek_avg_ms", CONFIG_DOUBLE, OWN(seek_avg_ms), .flags = CONFIG_HAS_MIN, .min = 0,
     .def = "8.5", .help = "average seek in milliseconds"},
    {"disk", "seek_full_ms", CONFIG_DOUBLE, OWN(seek_full_ms), .flags = CONFIG_HAS_MIN, .min = 0,
     .def = "18", .help = "full-stroke seek in milliseconds"},
    {"disk", "transfer_mib_s", CONFIG_CUSTOM, OWN_ALL, .def = "150", .parse = parse_transfer,
     .format = format_transfer, .help = "media rate in MiB/s, or outer,inner for a zoned disk"},
    {"disk", "rotation", CONFIG_ENUM, OWN(rotation), .names = rotation_names, .def = "phase",
     .help = "rotational delay: phase or average"},
    {"disk", "prefetch", CONFIG_DOUBLE, OWN(prefetch), .flags = CONFIG_HAS_MIN | CONFIG_HAS_MAX,
     .min = 0, .max = HDD_PREFETCH_MAX,
     .range_why = "must be at most " STR(HDD_PREFETCH_MAX) " (times the I/O's length)", .def = "0",
     .help = "read-ahead after each I/O, in times its length"},
    {"disk", "prefetch_max", CONFIG_SIZE, OWN(prefetch_max), .def = "512K",
     .help = "bytes the read-ahead goes at most"},
    {"disk", "write_cache", CONFIG_BOOL, OWN(write_cache), .def = "true",
     .help = "the drive's write cache (WCE): writes complete in its buffer"},
    {"disk", "cache_size", CONFIG_SIZE, OWN(cache_size), .flags = CONFIG_HAS_MIN, .min = 1,
     .range_why = "must be > 0", .def = "8M", .help = "bytes of dirty data the write cache holds"},
    {"disk", "interface_mib_s", CONFIG_DOUBLE, OWN(interface_mib_s),
     .flags = CONFIG_HAS_MIN | CONFIG_MIN_OPEN, .min = 0, .def = "286",
     .help = "host link rate in MiB/s (286: SATA 3 Gb/s)"},
};

/* Indexes in hdd_keys[] of the seek times, which must grow. */
enum { HDD_SEEK_TRACK = 1, HDD_SEEK_AVG = 2, HDD_SEEK_FULL = 3 };

static int hdd_check(const struct config_scope *s, const void *params, char *err, size_t errlen)
{
	const struct hdd_params *d = params;
	unsigned track = config_key_id(&hdd_keys[HDD_SEEK_TRACK]);
	unsigned avg = config_key_id(&hdd_keys[HDD_SEEK_AVG]);
	unsigned full = config_key_id(&hdd_keys[HDD_SEEK_FULL]);
	char at[400], lb[300], a[32], b[32], m[32];
	unsigned k;

	if (d->seek_track_ms <= d->seek_avg_ms && d->seek_avg_ms <= d->seek_full_ms)
		return 0;
	if (d->seek_track_ms > d->seek_avg_ms)
		k = (s->set & BIT(track)) ? track : avg;
	else
		k = (s->set & BIT(full)) ? full : avg;
	config_format_double(d->seek_track_ms, a, sizeof(a));
	config_format_double(d->seek_avg_ms, m, sizeof(m));
	config_format_double(d->seek_full_ms, b, sizeof(b));
	config_seterr(err, errlen,
		      "%s%s %s: seek times must grow: seek_track_ms (%s) <= seek_avg_ms (%s) <= "
		      "seek_full_ms (%s)",
		      config_where(s, k, at, sizeof(at)), config_label(s, k, lb, sizeof(lb)),
		      config_key(k)->row->name, a, m, b);
	return -EINVAL;
}

static int hdd_create(const void *params, uint64_t capacity, void **out, char *err, size_t errlen)
{
	const struct hdd_params *p = params;
	struct hdd *m = malloc(sizeof(*m));
	int rc;

	if (!m)
		return -ENOMEM;
	rc = hdd_init(m, p, capacity);
	if (rc) {
		free(m);
		snprintf(err, errlen,
			 "the [disk] parameters (rpm = %g, transfer_mib_s = %g,%g, prefetch = %g) "
			 "give a revolution or a track the model cannot represent (from under one "
			 "unit to 10^18 ns or bytes)",
			 p->rpm, p->transfer_outer_mib_s, p->transfer_inner_mib_s, p->prefetch);
		return rc;
	}
	*out = m;
	return 0;
}

static uint64_t hdd_model_submit(void *model, enum disk_op op, uint64_t off, uint64_t len,
				 uint64_t arrival_ns, struct disk_io *out)
{
	struct hdd *m = model;
	struct hdd_io_cost c;

	hdd_submit(m, arrival_ns, off, len, op, &c);
	m->prefetch_hits += c.prefetch_hit;
	m->cache_hits += c.cache_hit;
	m->destage_ns += c.destage_ns;
	*out = (struct disk_io){
	    .start_ns = c.start_ns, .complete_ns = c.complete_ns, .busy_ns = hdd_busy_ns(&c)};
	return c.complete_ns;
}

static uint64_t hdd_model_flush(void *model, uint64_t now_ns, struct disk_io *out)
{
	struct hdd *m = model;
	struct hdd_io_cost c;

	hdd_flush(m, now_ns, &c);
	m->destage_ns += c.destage_ns;
	/* Only its destages took the head. */
	*out = (struct disk_io){
	    .start_ns = c.start_ns, .complete_ns = c.complete_ns, .busy_ns = c.destage_ns};
	return c.complete_ns;
}

static void hdd_counters(void *model, disk_emit_fn emit, void *ctx)
{
	const struct hdd *m = model;

	emit(ctx, "prefetch_hits", m->prefetch_hits);
	emit(ctx, "cache_hits", m->cache_hits);
	emit(ctx, "destage_ns", m->destage_ns);
	emit(ctx, "dirty_bytes", m->dirty_bytes);
}

static void hdd_destroy(void *model)
{
	hdd_release(model);
	free(model);
}

/*
 * The expected figures of a steady workload (disk_model_ops.expect()):
 *  - a random I/O that reaches the media (reads; writes without the cache,
 *    or with it full, see below): seek_avg_ms (the seek curve at a third
 *    of the stroke, the mean distance between two random positions) + half
 *    a revolution + its transfer at the outer rate; one head serves one
 *    I/O at a time, so @qd requests queue behind each other;
 *  - sequential reads: the outer transfer rate (the head streams);
 *  - random writes into an empty write cache: the link time of the write;
 *  - random writes on a full cache: one destage per write, E[seek] + half
 *    a revolution + the write's transfer, E[seek] the seek curve
 *    (hdd_seek_ns()) averaged over the gaps between the cache's N =
 *    cache_size / size dirty ranges in C-SCAN order, taken as exponential
 *    with mean capacity / N (midpoint rule over 20 means, 20000 steps).
 */
static int hdd_expect(const void *params, uint64_t capacity, const struct disk_workload *w,
		      disk_figure_fn emit, void *ctx, char *err, size_t errlen)
{
	const struct hdd_params *p = params;
	struct hdd m;
	double rev_ms, xfer_ms, t_ms, seek_ms;
	const double mib = 1048576.0;

	if (hdd_init(&m, p, capacity) < 0) {
		snprintf(err, errlen, "the [disk] parameters give no model of a %llu-byte disk",
			 (unsigned long long)capacity);
		return -EINVAL;
	}
	rev_ms = 60000.0 / p->rpm / 2;
	xfer_ms = (double)w->size / (p->transfer_outer_mib_s * mib) * 1000.0;
	if (w->op != DISK_READ && w->op != DISK_WRITE) {
		snprintf(err, errlen, "hdd: no expected figure for that operation");
		return -EINVAL;
	}
	if (w->sequential) {
		if (w->op != DISK_READ) {
			snprintf(err, errlen, "hdd: no expected figure for sequential writes "
					      "(only reads, random or sequential, and random writes)");
			return -EINVAL;
		}
		t_ms = xfer_ms;
		emit(ctx, "transfer_ms", xfer_ms);
	} else if (w->op == DISK_WRITE && p->write_cache && w->size <= p->cache_size &&
		   !w->cache_full) {
		t_ms = (double)hdd_link_ns(&m, w->size) / NS_PER_MS;
		emit(ctx, "link_ms", t_ms);
	} else {
		seek_ms = p->seek_avg_ms;
		if (w->op == DISK_WRITE && p->write_cache && w->size <= p->cache_size) {
			double n = (double)(p->cache_size / w->size);
			double mean_gap = (double)capacity / n, h = 20 * mean_gap / 20000, e = 0;

			for (int i = 0; i < 20000; i++) {
				double d = (i + 0.5) * h;

				e += (double)hdd_seek_ns(&m, (uint64_t)d) / NS_PER_MS * exp(-d / mean_gap) /
				     mean_gap * h;
			}
			seek_ms = e;
			emit(ctx, "mean_gap_bytes", mean_gap);
		}
		t_ms = seek_ms + rev_ms + xfer_ms;
		emit(ctx, "seek_ms", seek_ms);
		emit(ctx, "rotation_ms", rev_ms);
		emit(ctx, "transfer_ms", xfer_ms);
	}
	hdd_release(&m);
	emit(ctx, "latency_us", t_ms * 1000.0 * w->qd);
	emit(ctx, "iops", 1000.0 / t_ms);
	emit(ctx, "mb_s", (double)w->size / (t_ms * 1000.0));
	emit(ctx, "mib_s", (double)w->size / mib * 1000.0 / t_ms);
	return 0;
}

/* No trim: a rotating disk keeps no map of the blocks in use. */
const struct disk_model_ops hdd_model = {
    .name = "hdd",
    .order = 1,
    .keys = hdd_keys,
    .nkeys = sizeof(hdd_keys) / sizeof(hdd_keys[0]),
    .params_size = sizeof(struct hdd_params),
    .check = hdd_check,
    .create = hdd_create,
    .submit = hdd_model_submit,
    .flush = hdd_model_flush,
    .counters = hdd_counters,
    .expect = hdd_expect,
    .destroy = hdd_destroy,
};
DISK_MODEL_REGISTER(hdd_model);
