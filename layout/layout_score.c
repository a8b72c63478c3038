/*
 * The static layout score (layout_score.h).  One pass over the extents in
 * logical order: every block inside an extent follows its predecessor, so
 * only the first block of each extent needs a device comparison, and the
 * cost is per extent, not per block.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "layout_score.h"

void layout_score(const struct layout_extent *v, size_t n, uint64_t block_size,
		  struct layout_stats *out)
{
	uint64_t prev_end = 0;

	*out = (struct layout_stats){0};
	for (size_t i = 0; i < n; i++) {
		uint64_t blocks = (v[i].length + block_size - 1) / block_size;

		if (blocks == 0)
			continue;
		out->extents++;
		if (out->blocks > 0) {
			/* The extent's first block has a predecessor: is it right behind it? */
			out->scored++;
			if (v[i].device == prev_end) {
				out->contiguous++;
			} else {
				uint64_t jump = v[i].device > prev_end ? v[i].device - prev_end
								       : prev_end - v[i].device;
				out->runs++;
				if (jump > out->largest_jump)
					out->largest_jump = jump;
			}
		} else {
			out->runs = 1;
		}
		out->blocks += blocks;
		out->scored += blocks - 1;
		out->contiguous += blocks - 1;
		prev_end = v[i].device + v[i].length;
	}
}

int layout_extents_of(const struct extent_map *m, int dev, bool written, struct layout_extent **out,
		      size_t *nout)
{
	struct layout_extent *v = malloc((m->n ? m->n : 1) * sizeof(*v));
	size_t n = 0;

	if (v == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		const struct extent *e = &m->v[i];
		struct layout_extent *last = n ? &v[n - 1] : NULL;

		if ((dev >= 0 && e->dev != (unsigned)dev) || (written && (e->flags & EXTENT_UNWRITTEN)))
			continue;
		/* Pieces of one allocation extent, split by state, are one extent. */
		if (last && !(e->flags & EXTENT_START) &&
		    e->logical == last->logical + last->length &&
		    e->device == last->device + last->length) {
			last->length += e->length;
			continue;
		}
		v[n++] = (struct layout_extent){e->logical, e->device, e->length};
	}
	*out = v;
	*nout = n;
	return 0;
}

int layout_score_extmap(const struct extent_map *m, uint64_t block_size, struct layout_stats *out)
{
	struct layout_extent *v;
	size_t n;
	int err = layout_extents_of(m, -1, false, &v, &n);

	if (err)
		return err;
	layout_score(v, n, block_size, out);
	free(v);
	return 0;
}

void layout_stats_add(struct layout_stats *a, const struct layout_stats *b)
{
	a->extents += b->extents;
	a->runs += b->runs;
	a->blocks += b->blocks;
	a->scored += b->scored;
	a->contiguous += b->contiguous;
	if (b->largest_jump > a->largest_jump)
		a->largest_jump = b->largest_jump;
}

double layout_stats_score(const struct layout_stats *s)
{
	return s->scored ? (double)s->contiguous / (double)s->scored : 1.0;
}

int layout_stats_format(const struct layout_stats *s, char *buf, size_t len)
{
	return snprintf(buf, len,
			"extents=%" PRIu64 " runs=%" PRIu64 " blocks=%" PRIu64 " scored=%" PRIu64
			" contiguous=%" PRIu64 " layout_score=%.6f largest_jump=%" PRIu64,
			s->extents, s->runs, s->blocks, s->scored, s->contiguous,
			layout_stats_score(s), s->largest_jump);
}

void flash_score(const struct layout_extent *v, size_t n, uint64_t page_size, flash_die_fn die_of,
		 void *ctx, struct flash_stats *out)
{
	uint64_t prev_page = UINT64_MAX;
	int prev_die = -1;

	*out = (struct flash_stats){0};
	for (size_t i = 0; i < n; i++) {
		if (v[i].length == 0)
			continue;
		uint64_t last = (v[i].device + v[i].length - 1) / page_size;
		for (uint64_t p = v[i].device / page_size; p <= last; p++) {
			if (p == prev_page)
				continue;
			prev_page = p;
			int die = die_of(ctx, p * page_size);
			if (die < 0)
				continue;
			out->pages++;
			if (prev_die >= 0) {
				out->pairs++;
				out->apart += die != prev_die;
			}
			prev_die = die;
		}
	}
}

void flash_stats_add(struct flash_stats *a, const struct flash_stats *b)
{
	a->pages += b->pages;
	a->pairs += b->pairs;
	a->apart += b->apart;
}

double flash_stats_score(const struct flash_stats *s)
{
	return s->pairs ? (double)s->apart / (double)s->pairs : 1.0;
}

int flash_stats_format(const struct flash_stats *s, char *buf, size_t len)
{
	return snprintf(buf, len,
			" flash_pages=%" PRIu64 " flash_pairs=%" PRIu64 " flash_apart=%" PRIu64
			" flash_score=%.6f",
			s->pages, s->pairs, s->apart, flash_stats_score(s));
}
