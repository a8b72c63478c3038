/*
 * Undo log of the bytes a crash must bring back (see undo.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "splitmix64.h"
#include "undo.h"

/* Index of the first entry that ends after @off. */
static size_t first_after(const struct undo *u, uint64_t off)
{
	size_t lo = 0, hi = u->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (u->v[mid].off + u->v[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int insert(struct undo *u, size_t at, const struct undo_ent *e)
{
	if (u->n == u->cap) {
		size_t cap = u->cap ? u->cap * 2 : 64;
		struct undo_ent *v = realloc(u->v, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		u->v = v;
		u->cap = cap;
	}
	memmove(u->v + at + 1, u->v + at, (u->n - at) * sizeof *u->v);
	u->v[at] = *e;
	u->n++;
	u->bytes += e->len;
	return 0;
}

static int piece(const struct undo_ent *e, uint64_t off, uint64_t len, struct undo_ent *out);
static void ent_free(struct undo_ent *e);
static int reserve(struct undo *u, size_t n);

/* Replaces entry @i of @u by its pieces [off, @cut) and [@cut, end). */
static int cut_at(struct undo *u, size_t i, uint64_t cut)
{
	struct undo_ent *e = &u->v[i], a, b;
	if (reserve(u, u->n + 1) || piece(e, e->off, cut - e->off, &a))
		return -ENOMEM;
	if (piece(e, cut, e->off + e->len - cut, &b)) {
		ent_free(&a);
		return -ENOMEM;
	}
	u->bytes -= e->len; /* a's and b's (insert() adds b's) */
	ent_free(e);
	u->v[i] = a;
	u->bytes += a.len;
	return insert(u, i + 1, &b);
}

/*
 * Marks fresh the bytes of [@off, +@len) that entries of @u hold already,
 * cutting an entry at the range's ends: a write into space its file
 * never wrote, over bytes an earlier write of this period changed (the
 * space zeroed by a zero range, or freed and given again, since), leaves
 * the file zeros there once the metadata is durable.
 */
static int mark_fresh(struct undo *u, uint64_t off, uint64_t len)
{
	uint64_t end = off + len;
	for (size_t i = first_after(u, off); i < u->n && u->v[i].off < end; i++) {
		if (u->v[i].fresh)
			continue;
		int err = 0;
		if (u->v[i].off < off && (err = cut_at(u, i, off)) == 0)
			i++;
		if (!err && u->v[i].off + u->v[i].len > end)
			err = cut_at(u, i, end);
		if (err)
			return err;
		u->v[i].fresh = true;
	}
	return 0;
}

int undo_note(struct undo *u, uint64_t off, uint64_t len, undo_read_fn rd, void *ctx,
	      uint64_t ino, uint64_t logical, const char *path, bool fresh)
{
	uint64_t end = off + len, need = 0;
	size_t i = first_after(u, off);
	/* What is new: the gaps between the entries that overlap the range. */
	uint64_t at = off;
	for (size_t j = i; j < u->n && u->v[j].off < end; j++) {
		if (u->v[j].off > at)
			need += u->v[j].off - at;
		at = u->v[j].off + u->v[j].len;
	}
	if (at < end)
		need += end - at;
	if (need && u->max && u->bytes + need > u->max)
		return -ENOSPC;
	int err = fresh ? mark_fresh(u, off, len) : 0;
	if (err || !need)
		return err;
	at = off;
	while (at < end) {
		while (i < u->n && u->v[i].off + u->v[i].len <= at)
			i++;
		uint64_t gap_end = end;
		if (i < u->n && u->v[i].off <= at) {
			at = u->v[i].off + u->v[i].len;
			continue;
		}
		if (i < u->n && u->v[i].off < gap_end)
			gap_end = u->v[i].off;
		struct undo_ent e = {
		    .off = at,
		    .len = gap_end - at,
		    .ino = ino,
		    .logical = logical == UINT64_MAX ? UINT64_MAX : logical + (at - off),
		    .fresh = fresh,
		};
		/* page-aligned: an O_DIRECT backing reads straight into it */
		void *old = NULL;
		if (posix_memalign(&old, 4096, e.len ? e.len : 1))
			return -ENOMEM;
		e.old = old;
		err = rd(ctx, e.old, e.len, e.off);
		if (!err && path && !(e.path = strdup(path)))
			err = -ENOMEM;
		if (!err)
			err = insert(u, i, &e);
		if (err) {
			free(e.old);
			free(e.path);
			return err;
		}
		i++;
		at = gap_end;
	}
	return 0;
}

void undo_clear(struct undo *u)
{
	for (size_t i = 0; i < u->n; i++) {
		free(u->v[i].old);
		free(u->v[i].path);
	}
	u->n = 0;
	u->bytes = 0;
}

uint64_t undo_torn_keep(uint64_t off, uint64_t len, uint32_t sector, uint64_t *rng)
{
	uint64_t s = sector ? sector : 512;
	uint64_t first = (s - off % s) % s; /* bytes to the first boundary */
	if (first > len)
		return 0;
	uint64_t cuts = (len - first) / s + 1; /* boundaries in [off, off+len] */
	return first + (splitmix64_next(rng) % cuts) * s;
}

int undo_apply(struct undo *u, undo_write_fn wr, void *ctx, uint64_t *rng, uint32_t sector,
	       FILE *out, const char *label)
{
	int err = 0;
	for (size_t i = 0; i < u->n; i++) {
		struct undo_ent *e = &u->v[i];
		uint64_t keep = rng ? undo_torn_keep(e->off, e->len, sector, rng) : 0;
		int r = keep < e->len ? wr(ctx, e->old + keep, e->len - keep, e->off + keep) : 0;
		if (r && !err)
			err = r;
		if (out)
			fprintf(out, "crash: %s %" PRIu64 "+%" PRIu64 " kept %" PRIu64 "\n", label,
				e->off, e->len, keep);
	}
	return err;
}

/* A new entry: [@off, +@len) of @e, with its own copy of the old bytes and path. */
static int piece(const struct undo_ent *e, uint64_t off, uint64_t len, struct undo_ent *out)
{
	void *old = NULL;
	if (posix_memalign(&old, 4096, len ? len : 1))
		return -ENOMEM;
	*out = *e;
	out->off = off;
	out->len = len;
	out->old = old;
	memcpy(out->old, e->old + (off - e->off), len);
	if (e->logical != UINT64_MAX)
		out->logical = e->logical + (off - e->off);
	out->path = NULL;
	if (e->path && !(out->path = strdup(e->path))) {
		free(old);
		return -ENOMEM;
	}
	return 0;
}

static void ent_free(struct undo_ent *e)
{
	free(e->old);
	free(e->path);
}

/* Room for @n entries in @u, so that insert() cannot fail. */
static int reserve(struct undo *u, size_t n)
{
	if (n <= u->cap)
		return 0;
	struct undo_ent *v = realloc(u->v, n * sizeof *v);
	if (!v)
		return -ENOMEM;
	u->v = v;
	u->cap = n;
	return 0;
}

int undo_subtract(struct undo *u, const struct undo *b)
{
	if (!u->n || !b->n)
		return 0;
	/* each entry of @b splits at most one of @u in two */
	struct undo out = {.max = u->max};
	if (reserve(&out, u->n + b->n))
		return -ENOMEM;
	int err = 0;
	for (size_t i = 0; i < u->n; i++) {
		struct undo_ent *e = &u->v[i];
		uint64_t at = e->off, end = e->off + e->len;
		size_t j = first_after(b, at);
		if (err || j == b->n || b->v[j].off >= end) {
			insert(&out, out.n, e); /* untouched, or no memory to cut it */
			continue;
		}
		size_t first = out.n;
		/* the pieces of [at, end) between @b's entries */
		for (; at < end; j++) {
			uint64_t cut = j < b->n && b->v[j].off < end ? b->v[j].off : end;
			struct undo_ent p;
			if (cut > at) {
				if ((err = piece(e, at, cut - at, &p)) != 0)
					break;
				insert(&out, out.n, &p);
			}
			if (cut == end)
				break;
			at = b->v[j].off + b->v[j].len;
		}
		if (err) { /* keeps @e whole instead of its pieces */
			while (out.n > first) {
				out.bytes -= out.v[--out.n].len;
				ent_free(&out.v[out.n]);
			}
			insert(&out, out.n, e);
			continue;
		}
		ent_free(e);
	}
	free(u->v);
	*u = out;
	return err;
}

int undo_take(struct undo *dst, struct undo *src, uint64_t ino)
{
	struct undo moved = {0}, kept = {.max = src->max};
	if (reserve(&moved, src->n) || reserve(&kept, src->n) || reserve(dst, 2 * dst->n + src->n)) {
		free(moved.v);
		free(kept.v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < src->n; i++) {
		struct undo *to = !ino || src->v[i].ino == ino ? &moved : &kept;
		insert(to, to->n, &src->v[i]);
	}
	free(src->v);
	*src = kept;
	/* a fresh entry's zeros are newer than what @dst holds of its bytes */
	struct undo fresh = {0};
	int err = reserve(&fresh, moved.n);
	for (size_t i = 0; !err && i < moved.n; i++)
		if (moved.v[i].fresh)
			fresh.v[fresh.n++] = moved.v[i]; /* (a view: undo_subtract() reads off and len) */
	if (!err)
		err = undo_subtract(dst, &fresh);
	free(fresh.v);
	int err2 = undo_subtract(&moved, dst);
	err = err ? err : err2;
	if (reserve(dst, dst->n + moved.n)) { /* (undo_subtract() gave @dst a new array) */
		for (size_t i = 0; i < moved.n; i++)
			insert(src, first_after(src, moved.v[i].off), &moved.v[i]);
		free(moved.v);
		return -ENOMEM;
	}
	/* both sorted and disjoint now; cutting adds at most one entry per entry of @dst */
	size_t at = 0;
	for (size_t i = 0; i < moved.n; i++) {
		struct undo_ent *e = &moved.v[i];
		while (at < dst->n && dst->v[at].off < e->off)
			at++;
		if (err && ((at < dst->n && dst->v[at].off < e->off + e->len) ||
			    (at > 0 && dst->v[at - 1].off + dst->v[at - 1].len > e->off))) {
			/* not cut for want of memory: back where it was, whole */
			size_t k = first_after(src, e->off);
			insert(src, k, e);
			continue;
		}
		if (e->fresh)
			memset(e->old, 0, e->len);
		insert(dst, at++, e);
	}
	free(moved.v);
	return err;
}

void undo_overlay(const struct undo *u, void *buf, uint64_t len, uint64_t off)
{
	uint64_t end = off + len;
	for (size_t j = first_after(u, off); j < u->n && u->v[j].off < end; j++) {
		const struct undo_ent *e = &u->v[j];
		uint64_t lo = e->off > off ? e->off : off;
		uint64_t hi = e->off + e->len < end ? e->off + e->len : end;
		memcpy((unsigned char *)buf + (lo - off), e->old + (lo - e->off), hi - lo);
	}
}

void undo_free(struct undo *u)
{
	undo_clear(u);
	free(u->v);
	u->v = NULL;
	u->cap = 0;
}
