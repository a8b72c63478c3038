/*
 * Per-file extent map.
 *
 * Data structure.  One sorted array of 24-byte struct extent, binary search
 * for every lookup, memmove() for the rare insert or split in the middle.  A
 * file grows at its end (autoextend appends an extent, sequential writes turn
 * the unwritten head of the last extent into data), so the common operations
 * are an append (amortized O(1): the array grows by 1.5x) and an O(log n)
 * search.  An array is also the densest form: 24 bytes per entry plus at most
 * 50% spare capacity, no pointers, and a lookup touches ~log2(n) cache lines.
 *
 * Canonical form.  Two neighbours that are contiguous both logically and on
 * the device, in the same state, where the right one lacks EXTENT_START, are
 * one piece of one allocation extent and are kept as ONE entry.  Every
 * operation restores that form around what it changed, so a file written
 * piecewise through an unwritten extent ends with few entries, not one per
 * write.  Sequential writes into the unwritten part of an extent take a
 * shortcut: the boundary between the written entry and the unwritten one
 * moves, with no memmove.
 *
 * No locking: the owner of the map (the inode) serializes calls.
 *
 * Failure atomicity: an operation that needs more entries reserves the
 * capacity first, so -ENOMEM leaves the map unchanged.
 *
 * Weak spots:
 * - Splits and removals in the middle of a huge map cost O(n) (memmove):
 *   punching holes all over a file with millions of extents is quadratic.
 *   A B-tree would fix that at the price of density and simplicity.
 * - extmap_extent_count() and extmap_mapped_bytes() scan the array (the
 *   public struct has no room for counters).
 * - The array never shrinks until extmap_release().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "extmap.h"

#define LEN_MAX ((UINT64_C(1) << 48) - 1)

static inline uint64_t ext_end(const struct extent *e)
{
	return e->logical + e->length;
}

static inline int is_unwritten(const struct extent *e)
{
	return (e->flags & EXTENT_UNWRITTEN) != 0;
}

/* @r continues @l as one entry: see "Canonical form" above. */
static int mergeable(const struct extent *l, const struct extent *r)
{
	return !(r->flags & EXTENT_START) && l->dev == r->dev && ext_end(l) == r->logical &&
	       l->device + l->length == r->device && ((l->flags ^ r->flags) & ~EXTENT_START) == 0 &&
	       (uint64_t)l->length + r->length <= LEN_MAX;
}

/* Capacity for @extra more entries.  @return 0 or -ENOMEM (map unchanged). */
static int reserve(struct extent_map *m, size_t extra)
{
	if (m->cap - m->n >= extra)
		return 0;
	if (extra > SIZE_MAX / sizeof(struct extent) - m->n)
		return -ENOMEM;
	size_t need = m->n + extra, ncap = m->cap + m->cap / 2;
	if (ncap < 16)
		ncap = 16;
	if (ncap < need || ncap > SIZE_MAX / sizeof(struct extent))
		ncap = need;
	struct extent *v = realloc(m->v, ncap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	m->v = v;
	m->cap = ncap;
	return 0;
}

/* Opens a slot at @i (capacity must be reserved). */
static void open_slot(struct extent_map *m, size_t i)
{
	memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof(*m->v));
	m->n++;
}

/* Deletes entries [@from, @to). */
static void close_slots(struct extent_map *m, size_t from, size_t to)
{
	if (to == from)
		return;
	memmove(&m->v[from], &m->v[to], (m->n - to) * sizeof(*m->v));
	m->n -= to - from;
}

/*
 * Splits entry @i at logical offset @at (strictly inside it; capacity
 * reserved).  The right part keeps the flags except EXTENT_START.
 */
static void split_at(struct extent_map *m, size_t i, uint64_t at)
{
	open_slot(m, i);
	struct extent *l = &m->v[i], *r = &m->v[i + 1];
	uint64_t head = at - l->logical;
	l->length = head;
	r->logical = at;
	r->device += head;
	r->length -= head;
	r->flags &= ~EXTENT_START;
}

/* Restores the canonical form among entries [@lo, @hi] (hi < n). */
static void merge_range(struct extent_map *m, size_t lo, size_t hi)
{
	struct extent *v = m->v;
	size_t w = lo;

	for (size_t r = lo + 1; r <= hi; r++) {
		if (mergeable(&v[w], &v[r]))
			v[w].length += v[r].length;
		else
			v[++w] = v[r];
	}
	close_slots(m, w + 1, hi + 1);
}

void extmap_init(struct extent_map *m)
{
	m->v = NULL;
	m->n = m->cap = 0;
}

void extmap_release(struct extent_map *m)
{
	free(m->v);
	extmap_init(m);
}

size_t extmap_find(const struct extent_map *m, uint64_t logical)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ext_end(&m->v[mid]) <= logical)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int extmap_insert(struct extent_map *m, uint64_t logical, uint64_t device, uint64_t length,
		  unsigned flags)
{
	if (length == 0 || length > LEN_MAX || logical + length < logical ||
	    device + length < device)
		return -EINVAL;
	size_t i = extmap_find(m, logical);
	if (i < m->n && m->v[i].logical < logical + length)
		return -EEXIST;

	struct extent e = {
	    .logical = logical,
	    .device = device,
	    .length = length,
	    .dev = (flags >> 8) & 0xff,
	    .flags = flags & 0xff};
	if (i > 0 && mergeable(&m->v[i - 1], &e)) {
		m->v[i - 1].length += length;
		if (i < m->n && mergeable(&m->v[i - 1], &m->v[i])) {
			m->v[i - 1].length += m->v[i].length;
			close_slots(m, i, i + 1);
		}
		return 0;
	}
	if (i < m->n && mergeable(&e, &m->v[i])) {
		e.length += m->v[i].length;
		m->v[i] = e;
		return 0;
	}
	if (reserve(m, 1) < 0)
		return -ENOMEM;
	open_slot(m, i);
	m->v[i] = e;
	return 0;
}

size_t extmap_lookup(const struct extent_map *m, uint64_t offset, uint64_t length,
		     struct segment *segs, size_t max)
{
	if (length == 0 || max == 0)
		return 0;
	uint64_t end = offset + length < offset ? UINT64_MAX : offset + length;
	uint64_t pos = offset;
	size_t i = extmap_find(m, offset), k = 0;

	while (pos < end) {
		struct segment s = {.logical = pos, .device = 0, .kind = SEG_HOLE};
		const struct extent *e = i < m->n ? &m->v[i] : NULL;

		if (!e || e->logical >= end) {
			s.length = end - pos;
		} else if (e->logical > pos) {
			s.length = e->logical - pos;
		} else {
			uint64_t stop = ext_end(e) < end ? ext_end(e) : end;
			s.device = e->device + (pos - e->logical);
			s.dev = e->dev;
			s.length = stop - pos;
			s.kind = is_unwritten(e) ? SEG_UNWRITTEN : SEG_DATA;
			i++;
		}
		struct segment *last = k ? &segs[k - 1] : NULL;
		if (last && last->kind == s.kind &&
		    (s.kind == SEG_HOLE ||
		     (last->dev == s.dev && last->device + last->length == s.device))) {
			last->length += s.length;
		} else {
			if (k == max)
				break;
			segs[k++] = s;
		}
		pos += s.length;
	}
	return k;
}

/* Sets or clears EXTENT_UNWRITTEN on [@offset, +@length). */
static int set_state(struct extent_map *m, uint64_t offset, uint64_t length, int unwritten)
{
	if (length == 0)
		return 0;
	uint64_t end = offset + length < offset ? UINT64_MAX : offset + length;

	/* First and last entries in the range whose state changes. */
	size_t f = m->n, l = 0;
	for (size_t j = extmap_find(m, offset); j < m->n && m->v[j].logical < end; j++) {
		if (is_unwritten(&m->v[j]) != unwritten) {
			if (f == m->n)
				f = j;
			l = j;
		}
	}
	if (f == m->n)
		return 0;

	struct extent *v = m->v;
	int split_lo = v[f].logical<offset, split_hi = ext_end(&v[l])> end;

	/*
	 * Shortcut for a write continuing the written head of an extent: the
	 * range is the front of entry f, which continues entry f-1 (already in
	 * the new state); move the boundary between them instead of splitting.
	 */
	if (f == l && !split_lo && split_hi && f > 0 && !(v[f].flags & EXTENT_START) &&
	    is_unwritten(&v[f - 1]) == unwritten && ext_end(&v[f - 1]) == v[f].logical &&
	    v[f - 1].dev == v[f].dev && v[f - 1].device + v[f - 1].length == v[f].device &&
	    ((v[f - 1].flags ^ v[f].flags) & ~(EXTENT_START | EXTENT_UNWRITTEN)) == 0 &&
	    (uint64_t)v[f - 1].length + (end - v[f].logical) <= LEN_MAX) {
		uint64_t moved = end - v[f].logical;
		v[f - 1].length += moved;
		v[f].logical += moved;
		v[f].device += moved;
		v[f].length -= moved;
		return 0;
	}

	if (reserve(m, (size_t)split_lo + (size_t)split_hi) < 0)
		return -ENOMEM;
	if (split_hi)
		split_at(m, l, end);
	if (split_lo) {
		split_at(m, f, offset);
		f++;
		l++;
	}
	v = m->v;
	for (size_t j = f; j <= l; j++) {
		if (unwritten)
			v[j].flags |= EXTENT_UNWRITTEN;
		else
			v[j].flags &= ~EXTENT_UNWRITTEN;
	}
	merge_range(m, f > 0 ? f - 1 : 0, l + 1 < m->n ? l + 1 : l);
	return 0;
}

int extmap_mark_written(struct extent_map *m, uint64_t offset, uint64_t length)
{
	return set_state(m, offset, length, 0);
}

int extmap_mark_unwritten(struct extent_map *m, uint64_t offset, uint64_t length)
{
	return set_state(m, offset, length, 1);
}

/* Collects freed device runs so physically contiguous ones go in one call. */
struct freed {
	extmap_free_fn fn;
	void *opaque;
	unsigned dev;
	uint64_t device, length;
};

static void freed_add(struct freed *f, unsigned dev, uint64_t device, uint64_t length)
{
	if (f->length && f->dev == dev && f->device + f->length == device) {
		f->length += length;
		return;
	}
	if (f->length && f->fn)
		f->fn(f->opaque, f->dev, f->device, f->length);
	f->dev = dev;
	f->device = device;
	f->length = length;
}

static void freed_flush(struct freed *f)
{
	if (f->length && f->fn)
		f->fn(f->opaque, f->dev, f->device, f->length);
	f->length = 0;
}

int extmap_remove(struct extent_map *m, uint64_t offset, uint64_t length, extmap_free_fn fn,
		  void *opaque)
{
	if (length == 0)
		return 0;
	uint64_t end = offset + length < offset ? UINT64_MAX : offset + length;
	size_t i = extmap_find(m, offset);
	if (i >= m->n || m->v[i].logical >= end)
		return 0;

	/* l: the last entry overlapping the range. */
	size_t l = extmap_find(m, end);
	if (l >= m->n || m->v[l].logical >= end)
		l--;

	struct freed fr = {.fn = fn, .opaque = opaque};
	struct extent *v = m->v;

	if (i == l && v[i].logical < offset && ext_end(&v[i]) > end) {
		/* A middle piece: the tail becomes an extent of its own. */
		if (reserve(m, 1) < 0)
			return -ENOMEM;
		split_at(m, i, end);
		v = m->v;
		v[i + 1].flags |= EXTENT_START;
		freed_add(&fr, v[i].dev, v[i].device + (offset - v[i].logical), end - offset);
		v[i].length = offset - v[i].logical;
		freed_flush(&fr);
		return 0;
	}

	size_t del_from = i, del_to = l + 1;
	if (v[i].logical < offset) {
		freed_add(&fr, v[i].dev, v[i].device + (offset - v[i].logical), ext_end(&v[i]) - offset);
		v[i].length = offset - v[i].logical;
		del_from = i + 1;
	}
	for (size_t j = del_from; j <= l; j++) {
		if (ext_end(&v[j]) <= end) {
			freed_add(&fr, v[j].dev, v[j].device, v[j].length);
			continue;
		}
		/* j == l: its head goes, its tail stays as a new allocation extent. */
		uint64_t head = end - v[j].logical;
		freed_add(&fr, v[j].dev, v[j].device, head);
		v[j].logical = end;
		v[j].device += head;
		v[j].length -= head;
		v[j].flags |= EXTENT_START;
		del_to = j;
	}
	freed_flush(&fr);
	close_slots(m, del_from, del_to);
	/* The entry after the removed range continued a piece that is gone. */
	if (del_from < m->n)
		m->v[del_from].flags |= EXTENT_START;
	return 0;
}

uint64_t extmap_end(const struct extent_map *m)
{
	return m->n ? ext_end(&m->v[m->n - 1]) : 0;
}

size_t extmap_extent_count(const struct extent_map *m)
{
	size_t c = 0;

	for (size_t i = 0; i < m->n; i++)
		c += (m->v[i].flags & EXTENT_START) != 0;
	return c;
}

uint64_t extmap_mapped_bytes(const struct extent_map *m)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < m->n; i++)
		sum += m->v[i].length;
	return sum;
}

const struct extent *extmap_prev(const struct extent_map *m, uint64_t logical)
{
	size_t i = extmap_find(m, logical);
	return i ? &m->v[i - 1] : NULL;
}
