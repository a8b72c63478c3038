/*
 * Unit tests for the per-file extent map (layout/extmap.h).
 *
 * Fixed-value cases for each documented behaviour, then a random stress run
 * against a per-block model of the file (device offset and state of every
 * 4 KiB logical block).
 */
#undef NDEBUG
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "extmap.h"
#include "splitmix64.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)

#define U EXTENT_UNWRITTEN
#define S EXTENT_START

static void entry_is(const struct extent_map *m, size_t i, uint64_t logical, uint64_t device,
		     uint64_t length, unsigned flags)
{
	cr_assert_lt(i, m->n, "entry %zu of %zu", i, m->n);
	cr_assert_eq(m->v[i].logical, logical, "entry %zu logical", i);
	cr_assert_eq(m->v[i].device, device, "entry %zu device", i);
	cr_assert_eq(m->v[i].length, length, "entry %zu length", i);
	cr_assert_eq(m->v[i].flags, flags, "entry %zu flags", i);
}

static void seg_is(const struct segment *s, uint64_t logical, uint64_t device, uint64_t length,
		   enum segment_kind kind)
{
	cr_assert_eq(s->logical, logical);
	cr_assert_eq(s->device, device);
	cr_assert_eq(s->length, length);
	cr_assert_eq(s->kind, kind);
}

/* Records extmap_remove() callbacks. */
struct freed_log {
	size_t n;
	uint64_t device[64], length[64];
	unsigned dev[64];
};

static void log_freed(void *opaque, unsigned dev, uint64_t device, uint64_t length)
{
	struct freed_log *f = opaque;
	cr_assert_lt(f->n, 64);
	f->device[f->n] = device;
	f->length[f->n] = length;
	f->dev[f->n] = dev;
	f->n++;
}

Test(extmap, empty)
{
	struct extent_map m;
	struct segment s[4];

	extmap_init(&m);
	cr_assert_eq(m.n, 0);
	cr_assert_eq(extmap_end(&m), 0);
	cr_assert_eq(extmap_extent_count(&m), 0);
	cr_assert_eq(extmap_mapped_bytes(&m), 0);
	cr_assert_null(extmap_prev(&m, 12345));
	cr_assert_eq(extmap_find(&m, 0), 0);
	cr_assert_eq(extmap_lookup(&m, 4096, 8192, s, 4), 1);
	seg_is(&s[0], 4096, 0, 8192, SEG_HOLE);
	cr_assert_eq(extmap_lookup(&m, 4096, 0, s, 4), 0);
	cr_assert_eq(extmap_mark_written(&m, 0, MiB), 0);
	cr_assert_eq(extmap_remove(&m, 0, MiB, log_freed, NULL), 0);
	extmap_release(&m);
	extmap_release(&m);
}

Test(extmap, insert_and_overlap)
{
	struct extent_map m;

	extmap_init(&m);
	cr_assert_eq(extmap_insert(&m, 64 * KiB, MiB, 64 * KiB, S), 0);
	cr_assert_eq(extmap_insert(&m, 96 * KiB, 9 * MiB, 64 * KiB, S), -EEXIST);
	cr_assert_eq(extmap_insert(&m, 32 * KiB, 9 * MiB, 64 * KiB, S), -EEXIST);
	cr_assert_eq(extmap_insert(&m, 64 * KiB, 9 * MiB, 4096, S), -EEXIST);
	cr_assert_eq(extmap_insert(&m, 124 * KiB, 9 * MiB, 4096, S), -EEXIST);
	cr_assert_eq(extmap_insert(&m, 0, 9 * MiB, MiB, S), -EEXIST);
	cr_assert_eq(extmap_insert(&m, 0, 9 * MiB, 0, S), -EINVAL);
	cr_assert_eq(extmap_insert(&m, UINT64_MAX - 4095, 9 * MiB, 8192, S), -EINVAL);
	cr_assert_eq(extmap_insert(&m, MiB, 9 * MiB, UINT64_C(1) << 56, S), -EINVAL);
	cr_assert_eq(m.n, 1);

	/* Exactly adjacent on both sides; inserted in the middle stays sorted. */
	cr_assert_eq(extmap_insert(&m, 256 * KiB, 3 * MiB, 64 * KiB, S | U), 0);
	cr_assert_eq(extmap_insert(&m, 0, 5 * MiB, 64 * KiB, S), 0);
	cr_assert_eq(extmap_insert(&m, 128 * KiB, 7 * MiB, 128 * KiB, S), 0);
	cr_assert_eq(m.n, 4);
	entry_is(&m, 0, 0, 5 * MiB, 64 * KiB, S);
	entry_is(&m, 1, 64 * KiB, MiB, 64 * KiB, S);
	entry_is(&m, 2, 128 * KiB, 7 * MiB, 128 * KiB, S);
	entry_is(&m, 3, 256 * KiB, 3 * MiB, 64 * KiB, S | U);
	cr_assert_eq(extmap_end(&m), 320 * KiB);
	cr_assert_eq(extmap_extent_count(&m), 4);
	cr_assert_eq(extmap_mapped_bytes(&m), 320 * KiB);
	extmap_release(&m);
	cr_assert_eq(m.n, 0);
	cr_assert_null(m.v);
}

Test(extmap, lookup_with_holes)
{
	struct extent_map m;
	struct segment s[8];

	extmap_init(&m);
	cr_assert_eq(extmap_insert(&m, 64 * KiB, MiB, 64 * KiB, S), 0);
	cr_assert_eq(extmap_insert(&m, 256 * KiB, 2 * MiB, 64 * KiB, S | U), 0);

	cr_assert_eq(extmap_lookup(&m, 0, 512 * KiB, s, 8), 5);
	seg_is(&s[0], 0, 0, 64 * KiB, SEG_HOLE);
	seg_is(&s[1], 64 * KiB, MiB, 64 * KiB, SEG_DATA);
	seg_is(&s[2], 128 * KiB, 0, 128 * KiB, SEG_HOLE);
	seg_is(&s[3], 256 * KiB, 2 * MiB, 64 * KiB, SEG_UNWRITTEN);
	seg_is(&s[4], 320 * KiB, 0, 192 * KiB, SEG_HOLE);

	/* Inside one entry, and straddling an entry's end. */
	cr_assert_eq(extmap_lookup(&m, 80 * KiB, 16 * KiB, s, 8), 1);
	seg_is(&s[0], 80 * KiB, MiB + 16 * KiB, 16 * KiB, SEG_DATA);
	cr_assert_eq(extmap_lookup(&m, 120 * KiB, 16 * KiB, s, 8), 2);
	seg_is(&s[0], 120 * KiB, MiB + 56 * KiB, 8 * KiB, SEG_DATA);
	seg_is(&s[1], 128 * KiB, 0, 8 * KiB, SEG_HOLE);
	cr_assert_eq(extmap_lookup(&m, 300 * KiB, 4 * KiB, s, 8), 1);
	seg_is(&s[0], 300 * KiB, 2 * MiB + 44 * KiB, 4 * KiB, SEG_UNWRITTEN);

	/* Past the last entry: a hole to the end of the range. */
	cr_assert_eq(extmap_lookup(&m, MiB, 4 * KiB, s, 8), 1);
	seg_is(&s[0], MiB, 0, 4 * KiB, SEG_HOLE);
	cr_assert_eq(extmap_lookup(&m, 320 * KiB, 4 * KiB, s, 8), 1);
	seg_is(&s[0], 320 * KiB, 0, 4 * KiB, SEG_HOLE);
	/* A range running to the top of the address space. */
	cr_assert_eq(extmap_lookup(&m, 256 * KiB, UINT64_MAX, s, 8), 2);
	seg_is(&s[1], 320 * KiB, 0, UINT64_MAX - 320 * KiB, SEG_HOLE);
	extmap_release(&m);
}

Test(extmap, lookup_merges_contiguous_same_kind)
{
	struct extent_map m;
	struct segment s[8];

	extmap_init(&m);
	/* Two allocation extents, physically contiguous: one DATA segment. */
	cr_assert_eq(extmap_insert(&m, 0, MiB, 64 * KiB, S), 0);
	cr_assert_eq(extmap_insert(&m, 64 * KiB, MiB + 64 * KiB, 64 * KiB, S), 0);
	/* Logically contiguous but elsewhere on the device. */
	cr_assert_eq(extmap_insert(&m, 128 * KiB, 5 * MiB, 64 * KiB, S), 0);
	/* Physically contiguous but a different kind. */
	cr_assert_eq(extmap_insert(&m, 192 * KiB, 5 * MiB + 64 * KiB, 64 * KiB, S | U), 0);
	/* UNWRITTEN with UNWRITTEN. */
	cr_assert_eq(extmap_insert(&m, 256 * KiB, 5 * MiB + 128 * KiB, 64 * KiB, S | U), 0);
	cr_assert_eq(m.n, 5);
	cr_assert_eq(extmap_extent_count(&m), 5);

	cr_assert_eq(extmap_lookup(&m, 32 * KiB, 320 * KiB, s, 8), 4);
	seg_is(&s[0], 32 * KiB, MiB + 32 * KiB, 96 * KiB, SEG_DATA);
	seg_is(&s[1], 128 * KiB, 5 * MiB, 64 * KiB, SEG_DATA);
	seg_is(&s[2], 192 * KiB, 5 * MiB + 64 * KiB, 128 * KiB, SEG_UNWRITTEN);
	seg_is(&s[3], 320 * KiB, 0, 32 * KiB, SEG_HOLE);

	/* A piece without EXTENT_START that continues an entry is folded into it. */
	cr_assert_eq(extmap_insert(&m, 320 * KiB, 5 * MiB + 192 * KiB, 64 * KiB, U), 0);
	cr_assert_eq(m.n, 5);
	entry_is(&m, 4, 256 * KiB, 5 * MiB + 128 * KiB, 128 * KiB, S | U);
	cr_assert_eq(extmap_extent_count(&m), 5);
	extmap_release(&m);
}

Test(extmap, lookup_max_segments_truncates)
{
	struct extent_map m;
	struct segment s[4];

	extmap_init(&m);
	cr_assert_eq(extmap_insert(&m, 64 * KiB, MiB, 64 * KiB, S), 0);
	cr_assert_eq(extmap_insert(&m, 256 * KiB, 2 * MiB, 64 * KiB, S | U), 0);

	cr_assert_eq(extmap_lookup(&m, 0, 512 * KiB, s, 0), 0);
	cr_assert_eq(extmap_lookup(&m, 0, 512 * KiB, s, 2), 2);
	seg_is(&s[0], 0, 0, 64 * KiB, SEG_HOLE);
	seg_is(&s[1], 64 * KiB, MiB, 64 * KiB, SEG_DATA);
	/* Call again from the end of the last segment. */
	cr_assert_eq(extmap_lookup(&m, 128 * KiB, 384 * KiB, s, 2), 2);
	seg_is(&s[0], 128 * KiB, 0, 128 * KiB, SEG_HOLE);
	seg_is(&s[1], 256 * KiB, 2 * MiB, 64 * KiB, SEG_UNWRITTEN);
	cr_assert_eq(extmap_lookup(&m, 320 * KiB, 192 * KiB, s, 2), 1);
	seg_is(&s[0], 320 * KiB, 0, 192 * KiB, SEG_HOLE);
	cr_assert_eq(extmap_lookup(&m, 64 * KiB, 64 * KiB, s, 1), 1);
	seg_is(&s[0], 64 * KiB, MiB, 64 * KiB, SEG_DATA);

	/* Merged entries count as one segment, so max = 1 covers both. */
	cr_assert_eq(extmap_insert(&m, 128 * KiB, MiB + 64 * KiB, 64 * KiB, S), 0);
	cr_assert_eq(extmap_lookup(&m, 64 * KiB, 256 * KiB, s, 1), 1);
	seg_is(&s[0], 64 * KiB, MiB, 128 * KiB, SEG_DATA);
	extmap_release(&m);
}

Test(extmap, mark_written_splits_and_merges_back)
{
	struct extent_map m;
	struct segment s[8];

	extmap_init(&m);
	cr_assert_eq(extmap_insert(&m, 0, 8 * MiB, MiB, S | U), 0);

	cr_assert_eq(extmap_mark_written(&m, 64 * KiB, 64 * KiB), 0);
	cr_assert_eq(m.n, 3);
	entry_is(&m, 0, 0, 8 * MiB, 64 * KiB, S | U);
	entry_is(&m, 1, 64 * KiB, 8 * MiB + 64 * KiB, 64 * KiB, 0);
	entry_is(&m, 2, 128 * KiB, 8 * MiB + 128 * KiB, MiB - 128 * KiB, U);
	cr_assert_eq(extmap_extent_count(&m), 1);
	cr_assert_eq(extmap_lookup(&m, 0, MiB, s, 8), 3);
	seg_is(&s[0], 0, 8 * MiB, 64 * KiB, SEG_UNWRITTEN);
	seg_is(&s[1], 64 * KiB, 8 * MiB + 64 * KiB, 64 * KiB, SEG_DATA);
	seg_is(&s[2], 128 * KiB, 8 * MiB + 128 * KiB, MiB - 128 * KiB, SEG_UNWRITTEN);

	cr_assert_eq(extmap_mark_written(&m, 0, 64 * KiB), 0);
	cr_assert_eq(m.n, 2);
	entry_is(&m, 0, 0, 8 * MiB, 128 * KiB, S);
	entry_is(&m, 1, 128 * KiB, 8 * MiB + 128 * KiB, MiB - 128 * KiB, U);

	/* Sequential writes move the boundary. */
	for (uint64_t off = 128 * KiB; off < 512 * KiB; off += 4 * KiB)
		cr_assert_eq(extmap_mark_written(&m, off, 4 * KiB), 0);
	cr_assert_eq(m.n, 2);
	entry_is(&m, 0, 0, 8 * MiB, 512 * KiB, S);
	entry_is(&m, 1, 512 * KiB, 8 * MiB + 512 * KiB, 512 * KiB, U);

	/* Writing what is written changes nothing. */
	cr_assert_eq(extmap_mark_written(&m, 4 * KiB, 100 * KiB), 0);
	cr_assert_eq(m.n, 2);

	cr_assert_eq(extmap_mark_written(&m, 512 * KiB, 512 * KiB), 0);
	cr_assert_eq(m.n, 1);
	entry_is(&m, 0, 0, 8 * MiB, MiB, S);
	cr_assert_eq(extmap_lookup(&m, 0, MiB, s, 8), 1);
	seg_is(&s[0], 0, 8 * MiB, MiB, SEG_DATA);
	extmap_release(&m);
}

Test(extmap, mark_unwritten_and_back)
{
	struct extent_map m;

	extmap_init(&m);
	cr_assert_eq(extmap_insert(&m, 0, 8 * MiB, MiB, S), 0);
	cr_assert_eq(extmap_mark_unwritten(&m, 256 * KiB, 64 * KiB), 0);
	cr_assert_eq(m.n, 3);
	entry_is(&m, 0, 0, 8 * MiB, 256 * KiB, S);
	/* Pieces split off by a state change do not start an extent. */
	entry_is(&m, 1, 256 * KiB, 8 * MiB + 256 * KiB, 64 * KiB, U);
	entry_is(&m, 2, 320 * KiB, 8 * MiB + 320 * KiB, MiB - 320 * KiB, 0);
	cr_assert_eq(extmap_extent_count(&m), 1);
	cr_assert_eq(extmap_mapped_bytes(&m), MiB);

	/* Growing the unwritten piece on both sides merges it. */
	cr_assert_eq(extmap_mark_unwritten(&m, 192 * KiB, 192 * KiB), 0);
	cr_assert_eq(m.n, 3);
	entry_is(&m, 1, 192 * KiB, 8 * MiB + 192 * KiB, 192 * KiB, U);
	entry_is(&m, 2, 384 * KiB, 8 * MiB + 384 * KiB, MiB - 384 * KiB, 0);

	cr_assert_eq(extmap_mark_written(&m, 0, MiB), 0);
	cr_assert_eq(m.n, 1);
	entry_is(&m, 0, 0, 8 * MiB, MiB, S);

	/* Over two extents with a hole between: the hole stays a hole. */
	cr_assert_eq(extmap_insert(&m, 2 * MiB, 20 * MiB, MiB, S), 0);
	cr_assert_eq(extmap_mark_unwritten(&m, 512 * KiB, 2 * MiB), 0);
	cr_assert_eq(m.n, 4);
	entry_is(&m, 0, 0, 8 * MiB, 512 * KiB, S);
	entry_is(&m, 1, 512 * KiB, 8 * MiB + 512 * KiB, 512 * KiB, U);
	entry_is(&m, 2, 2 * MiB, 20 * MiB, 512 * KiB, S | U);
	entry_is(&m, 3, 2 * MiB + 512 * KiB, 20 * MiB + 512 * KiB, 512 * KiB, 0);
	cr_assert_eq(extmap_extent_count(&m), 2);
	/* Separate extents stay separate even when the state agrees again. */
	cr_assert_eq(extmap_mark_written(&m, 0, 4 * MiB), 0);
	cr_assert_eq(m.n, 2);
	entry_is(&m, 0, 0, 8 * MiB, MiB, S);
	entry_is(&m, 1, 2 * MiB, 20 * MiB, MiB, S);
	extmap_release(&m);
}

Test(extmap, remove_middle)
{
	struct extent_map m;
	struct freed_log f = {0};
	struct segment s[8];

	extmap_init(&m);
	cr_assert_eq(extmap_insert(&m, 0, 8 * MiB, MiB, S), 0);
	cr_assert_eq(extmap_remove(&m, 256 * KiB, 128 * KiB, log_freed, &f), 0);
	cr_assert_eq(f.n, 1);
	cr_assert_eq(f.device[0], 8 * MiB + 256 * KiB);
	cr_assert_eq(f.length[0], 128 * KiB);
	cr_assert_eq(m.n, 2);
	entry_is(&m, 0, 0, 8 * MiB, 256 * KiB, S);
	entry_is(&m, 1, 384 * KiB, 8 * MiB + 384 * KiB, MiB - 384 * KiB, S);
	cr_assert_eq(extmap_extent_count(&m), 2);
	cr_assert_eq(extmap_mapped_bytes(&m), MiB - 128 * KiB);
	cr_assert_eq(extmap_end(&m), MiB);
	cr_assert_eq(extmap_lookup(&m, 0, MiB, s, 8), 3);
	seg_is(&s[0], 0, 8 * MiB, 256 * KiB, SEG_DATA);
	seg_is(&s[1], 256 * KiB, 0, 128 * KiB, SEG_HOLE);
	seg_is(&s[2], 384 * KiB, 8 * MiB + 384 * KiB, MiB - 384 * KiB, SEG_DATA);

	/* Removing a hole frees nothing. */
	f.n = 0;
	cr_assert_eq(extmap_remove(&m, 256 * KiB, 128 * KiB, log_freed, &f), 0);
	cr_assert_eq(f.n, 0);
	cr_assert_eq(m.n, 2);
	extmap_release(&m);
}

Test(extmap, remove_across_entries)
{
	struct extent_map m;
	struct freed_log f = {0};

	extmap_init(&m);
	cr_assert_eq(extmap_insert(&m, 0, MiB, 64 * KiB, S), 0);
	cr_assert_eq(extmap_insert(&m, 64 * KiB, MiB + 64 * KiB, 64 * KiB, S | U), 0);
	cr_assert_eq(extmap_insert(&m, 128 * KiB, 9 * MiB, 64 * KiB, S), 0);
	cr_assert_eq(extmap_insert(&m, 512 * KiB, 3 * MiB, 64 * KiB, S), 0);

	cr_assert_eq(extmap_remove(&m, 32 * KiB, 128 * KiB, log_freed, &f), 0);
	/* The tail of entry 0 and all of entry 1 are contiguous: one call. */
	cr_assert_eq(f.n, 2);
	cr_assert_eq(f.device[0], MiB + 32 * KiB);
	cr_assert_eq(f.length[0], 96 * KiB);
	cr_assert_eq(f.device[1], 9 * MiB);
	cr_assert_eq(f.length[1], 32 * KiB);
	cr_assert_eq(m.n, 3);
	entry_is(&m, 0, 0, MiB, 32 * KiB, S);
	entry_is(&m, 1, 160 * KiB, 9 * MiB + 32 * KiB, 32 * KiB, S);
	entry_is(&m, 2, 512 * KiB, 3 * MiB, 64 * KiB, S);

	/* Truncate: everything from 16 KiB on. */
	f.n = 0;
	cr_assert_eq(extmap_remove(&m, 16 * KiB, UINT64_MAX, log_freed, &f), 0);
	cr_assert_eq(f.n, 3);
	cr_assert_eq(f.device[0], MiB + 16 * KiB);
	cr_assert_eq(f.length[0], 16 * KiB);
	cr_assert_eq(f.device[1], 9 * MiB + 32 * KiB);
	cr_assert_eq(f.length[1], 32 * KiB);
	cr_assert_eq(f.device[2], 3 * MiB);
	cr_assert_eq(f.length[2], 64 * KiB);
	cr_assert_eq(m.n, 1);
	entry_is(&m, 0, 0, MiB, 16 * KiB, S);
	cr_assert_eq(extmap_end(&m), 16 * KiB);

	/* A NULL callback is allowed. */
	cr_assert_eq(extmap_remove(&m, 0, 16 * KiB, NULL, NULL), 0);
	cr_assert_eq(m.n, 0);
	cr_assert_eq(extmap_end(&m), 0);
	extmap_release(&m);
}

Test(extmap, remove_head_of_split_extent_keeps_extent_count)
{
	struct extent_map m;
	struct freed_log f = {0};

	extmap_init(&m);
	cr_assert_eq(extmap_insert(&m, 0, 8 * MiB, MiB, S | U), 0);
	cr_assert_eq(extmap_mark_written(&m, 0, 64 * KiB), 0);
	cr_assert_eq(m.n, 2);
	/* The whole written head goes: what is left of the extent starts one. */
	cr_assert_eq(extmap_remove(&m, 0, 64 * KiB, log_freed, &f), 0);
	cr_assert_eq(f.n, 1);
	cr_assert_eq(f.device[0], 8 * MiB);
	cr_assert_eq(f.length[0], 64 * KiB);
	cr_assert_eq(m.n, 1);
	entry_is(&m, 0, 64 * KiB, 8 * MiB + 64 * KiB, MiB - 64 * KiB, S | U);
	cr_assert_eq(extmap_extent_count(&m), 1);

	/* Cutting an entry's tail makes the next piece of its extent a new extent. */
	cr_assert_eq(extmap_mark_written(&m, 64 * KiB, 64 * KiB), 0);
	cr_assert_eq(m.n, 2);
	cr_assert_eq(extmap_remove(&m, 96 * KiB, 32 * KiB, log_freed, &f), 0);
	cr_assert_eq(m.n, 2);
	entry_is(&m, 0, 64 * KiB, 8 * MiB + 64 * KiB, 32 * KiB, S);
	entry_is(&m, 1, 128 * KiB, 8 * MiB + 128 * KiB, MiB - 128 * KiB, S | U);
	cr_assert_eq(extmap_extent_count(&m), 2);
	extmap_release(&m);
}

Test(extmap, find_prev_end_count)
{
	struct extent_map m;

	extmap_init(&m);
	cr_assert_eq(extmap_insert(&m, 64 * KiB, MiB, 64 * KiB, S), 0);
	cr_assert_eq(extmap_insert(&m, 256 * KiB, 2 * MiB, 64 * KiB, S), 0);
	cr_assert_eq(extmap_insert(&m, 320 * KiB, 7 * MiB, 64 * KiB, 0), 0);

	cr_assert_eq(extmap_find(&m, 0), 0);
	cr_assert_eq(extmap_find(&m, 64 * KiB), 0);
	cr_assert_eq(extmap_find(&m, 128 * KiB - 1), 0);
	cr_assert_eq(extmap_find(&m, 128 * KiB), 1);
	cr_assert_eq(extmap_find(&m, 320 * KiB), 2);
	cr_assert_eq(extmap_find(&m, 384 * KiB), 3);

	cr_assert_null(extmap_prev(&m, 0));
	cr_assert_null(extmap_prev(&m, 64 * KiB));
	cr_assert_null(extmap_prev(&m, 100 * KiB));
	cr_assert_eq(extmap_prev(&m, 128 * KiB), &m.v[0]);
	cr_assert_eq(extmap_prev(&m, 300 * KiB), &m.v[0]);
	cr_assert_eq(extmap_prev(&m, 320 * KiB), &m.v[1]);
	cr_assert_eq(extmap_prev(&m, 384 * KiB), &m.v[2]);
	cr_assert_eq(extmap_prev(&m, UINT64_MAX), &m.v[2]);

	cr_assert_eq(extmap_end(&m), 384 * KiB);
	cr_assert_eq(extmap_extent_count(&m), 2);
	cr_assert_eq(extmap_mapped_bytes(&m), 192 * KiB);
	extmap_release(&m);
}

/* ---- random stress against a per-block model ---- */

#define NB  512	 /* logical blocks */
#define ND  4096 /* device blocks */
#define BLK 4096u

struct blk {
	int mapped, unwritten;
	uint64_t device; /* block number */
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
	return splitmix64_next(&rng_state);
}

struct dev_model {
	unsigned char used[ND];
	uint64_t freed_blocks;
};

static void model_free(void *opaque, unsigned dev, uint64_t device, uint64_t length)
{
	struct dev_model *d = opaque;
	cr_assert_eq(device % BLK, 0);
	cr_assert_eq(length % BLK, 0);
	cr_assert_gt(length, 0);
	for (uint64_t b = device / BLK; b < (device + length) / BLK; b++) {
		cr_assert_eq(d->used[b], 1, "device block %lu freed twice", (unsigned long)b);
		d->used[b] = 0;
		d->freed_blocks++;
	}
}

static void check_against(const struct extent_map *m, const struct blk *model)
{
	/* Sorted, non-overlapping, canonical. */
	for (size_t i = 0; i < m->n; i++) {
		cr_assert_gt(m->v[i].length, 0);
		if (i == 0)
			continue;
		const struct extent *l = &m->v[i - 1], *r = &m->v[i];
		cr_assert_leq(l->logical + l->length, r->logical);
		int contiguous = l->logical + l->length == r->logical &&
				 l->device + l->length == r->device &&
				 (l->flags & U) == (r->flags & U);
		cr_assert(!(contiguous && !(r->flags & S)), "entries %zu and %zu not merged", i - 1,
			  i);
	}
	/* Block by block, through lookups of random ranges. */
	for (int t = 0; t < 8; t++) {
		uint64_t a = rnd() % NB, n = 1 + rnd() % (NB - a);
		struct segment s[NB + 1];
		size_t k = extmap_lookup(m, a * BLK, n * BLK, s, NB + 1);
		uint64_t pos = a * BLK;
		for (size_t j = 0; j < k; j++) {
			cr_assert_eq(s[j].logical, pos);
			if (j > 0) { /* neighbours that could merge were merged */
				cr_assert(s[j].kind != s[j - 1].kind ||
					  (s[j].kind != SEG_HOLE &&
					   s[j - 1].device + s[j - 1].length != s[j].device));
			}
			for (uint64_t o = 0; o < s[j].length; o += BLK) {
				const struct blk *b = &model[(pos + o) / BLK];
				if (!b->mapped) {
					cr_assert_eq(s[j].kind, SEG_HOLE);
					cr_assert_eq(s[j].device, 0);
				} else {
					cr_assert_eq(s[j].kind,
						     b->unwritten ? SEG_UNWRITTEN : SEG_DATA);
					cr_assert_eq(s[j].device + o, b->device * BLK);
				}
			}
			pos += s[j].length;
		}
		cr_assert_eq(pos, (a + n) * BLK);
	}
	uint64_t mapped = 0;
	for (int b = 0; b < NB; b++)
		mapped += model[b].mapped;
	cr_assert_eq(extmap_mapped_bytes(m), mapped * BLK);
}

Test(extmap, random_stress_against_model)
{
	static struct blk model[NB];
	static struct dev_model dev;
	struct extent_map m;
	uint64_t next_dev = 0;

	rng_state = 777;
	memset(model, 0, sizeof(model));
	memset(&dev, 0, sizeof(dev));
	extmap_init(&m);
	for (int op = 0; op < 5000; op++) {
		uint64_t a = rnd() % NB, n = 1 + rnd() % 24;
		if (a + n > NB)
			n = NB - a;
		int kind = (int)(rnd() % 5), rc;
		switch (kind) {
		case 0: {
			int overlap = 0;
			for (uint64_t b = a; b < a + n; b++)
				overlap |= model[b].mapped;
			/* Device space: usually right after the last extent (so neighbours are
			 * often physically contiguous), sometimes anywhere unused. */
			uint64_t d = next_dev;
			if (rnd() % 3 == 0)
				d = rnd() % (ND - n);
			int dev_ok = d + n <= ND;
			for (uint64_t b = d; dev_ok && b < d + n; b++)
				dev_ok = !dev.used[b];
			if (!dev_ok)
				break;
			unsigned flags = (rnd() % 4 ? S : 0) | (rnd() % 2 ? U : 0);
			rc = extmap_insert(&m, a * BLK, d * BLK, n * BLK, flags);
			cr_assert_eq(rc, overlap ? -EEXIST : 0, "op %d", op);
			if (rc)
				break;
			for (uint64_t b = 0; b < n; b++) {
				model[a + b] = (struct blk){1, !!(flags & U), d + b};
				dev.used[d + b] = 1;
			}
			next_dev = d + n;
			break;
		}
		case 1:
		case 2:
			rc = kind == 1 ? extmap_mark_written(&m, a * BLK, n * BLK)
				       : extmap_mark_unwritten(&m, a * BLK, n * BLK);
			cr_assert_eq(rc, 0);
			for (uint64_t b = a; b < a + n; b++)
				model[b].unwritten = kind == 2;
			break;
		case 3: {
			uint64_t expect = 0, before = dev.freed_blocks;
			for (uint64_t b = a; b < a + n; b++)
				expect += model[b].mapped;
			cr_assert_eq(extmap_remove(&m, a * BLK, n * BLK, model_free, &dev), 0);
			cr_assert_eq(dev.freed_blocks - before, expect, "op %d", op);
			for (uint64_t b = a; b < a + n; b++) {
				if (model[b].mapped)
					cr_assert_eq(dev.used[model[b].device], 0);
				model[b].mapped = 0;
			}
			break;
		}
		case 4: {
			const struct extent *p = extmap_prev(&m, a * BLK);
			const struct extent *next = p ? p + 1 : m.v;
			if (p) {
				uint64_t end = p->logical + p->length;
				cr_assert_leq(end, a * BLK);
				cr_assert_eq(model[end / BLK - 1].mapped, 1);
			}
			if (next < m.v + m.n)
				cr_assert_gt(next->logical + next->length, a * BLK);
			break;
		}
		}
		check_against(&m, model);
	}
	extmap_release(&m);
}

/* Address space in use now, in bytes (from /proc/self/statm). */
static uint64_t vm_size(void)
{
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	cr_assert_not_null(f);
	cr_assert_eq(fscanf(f, "%lu", &pages), 1);
	fclose(f);
	return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

static uint64_t checksum(const struct extent_map *m)
{
	uint64_t h = m->n;
	for (size_t i = 0; i < m->n; i++) {
		h = h * 31 + m->v[i].logical;
		h = h * 31 + m->v[i].device;
		h = h * 31 + m->v[i].length;
		h = h * 31 + m->v[i].flags;
	}
	return h;
}

Test(extmap, enomem_leaves_map_unchanged)
{
	struct extent_map m;
	struct freed_log f = {0};
	struct rlimit old, low;
	uint64_t i;
	int rc = 0;

	if (vm_size() > (UINT64_C(1) << 40)) /* a sanitizer's shadow memory */
		cr_skip_test("address space already huge");
	extmap_init(&m);
	cr_assert_eq(getrlimit(RLIMIT_AS, &old), 0);
	low = old;
	low.rlim_cur = vm_size() + 64 * MiB;
	if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < low.rlim_cur)
		low.rlim_cur = old.rlim_cur;
	cr_assert_eq(setrlimit(RLIMIT_AS, &low), 0);
	for (i = 0; i < 100000000; i++) {
		rc = extmap_insert(&m, i * 8 * KiB, i * 16 * KiB, 8 * KiB, S | U);
		if (rc)
			break;
	}
	size_t n = m.n;
	uint64_t sum = checksum(&m);
	int rc_insert = extmap_insert(&m, i * 8 * KiB, i * 16 * KiB, 8 * KiB, S | U);
	int rc_written = extmap_mark_written(&m, 4 * KiB, 2 * KiB);
	int rc_unwritten = extmap_mark_unwritten(&m, 4 * KiB, 2 * KiB);
	int rc_remove = extmap_remove(&m, 2 * KiB, 2 * KiB, log_freed, &f);
	uint64_t sum_after = checksum(&m);
	/* What needs no more entries still works: a whole entry, the front of one. */
	int rc_whole = extmap_mark_written(&m, 8 * KiB, 8 * KiB);
	int rc_front = extmap_remove(&m, 16 * KiB, 4 * KiB, log_freed, &f);
	cr_assert_eq(setrlimit(RLIMIT_AS, &old), 0);

	cr_assert_eq(rc, -ENOMEM);
	cr_assert_gt(i, 1000);
	cr_assert_eq(n, i);
	cr_assert_eq(rc_insert, -ENOMEM);
	cr_assert_eq(rc_written, -ENOMEM); /* would split entry 0 in three */
	cr_assert_eq(rc_unwritten, 0);	   /* already unwritten: nothing to do */
	cr_assert_eq(rc_remove, -ENOMEM);  /* a middle piece: one more entry */
	cr_assert_eq(sum_after, sum);
	cr_assert_eq(f.n, 1);
	cr_assert_eq(f.device[0], 32 * KiB);
	cr_assert_eq(f.length[0], 4 * KiB);
	cr_assert_eq(rc_whole, 0);
	cr_assert_eq(rc_front, 0);
	cr_assert_eq(m.n, n);
	entry_is(&m, 0, 0, 0, 8 * KiB, S | U);
	entry_is(&m, 1, 8 * KiB, 16 * KiB, 8 * KiB, S);
	entry_is(&m, 2, 20 * KiB, 36 * KiB, 4 * KiB, S | U);
	extmap_release(&m);
}

/*
 * Extents on different backing devices (EXTENT_DEV) never merge, even when
 * logically and physically adjacent; lookups and removals report each
 * piece's device.
 */
Test(extmap, device_index)
{
	struct extent_map m;
	struct segment s[4];
	struct freed_log f = {0};

	extmap_init(&m);
	cr_assert_eq(extmap_insert(&m, 0, 0, 16 * KiB, EXTENT_START), 0);
	cr_assert_eq(extmap_insert(&m, 16 * KiB, 16 * KiB, 16 * KiB, EXTENT_DEV(1)), 0);
	cr_assert_eq(extmap_insert(&m, 32 * KiB, 32 * KiB, 16 * KiB, EXTENT_DEV(1)), 0);
	cr_assert_eq(m.n, 2, "device 0 and 1 pieces stay apart; the two on device 1 merge");
	cr_assert_eq(m.v[0].dev, 0);
	cr_assert_eq(m.v[1].dev, 1);
	cr_assert_eq(m.v[1].length, 32 * KiB);
	cr_assert_eq(extmap_lookup(&m, 0, 48 * KiB, s, 4), 2);
	cr_assert_eq(s[0].dev, 0);
	cr_assert_eq(s[0].length, 16 * KiB);
	cr_assert_eq(s[1].dev, 1);
	cr_assert_eq(s[1].device, 16 * KiB);
	cr_assert_eq(s[1].length, 32 * KiB);
	cr_assert_eq(extmap_remove(&m, 8 * KiB, 32 * KiB, log_freed, &f), 0);
	cr_assert_eq(f.n, 2);
	cr_assert_eq(f.dev[0], 0);
	cr_assert_eq(f.device[0], 8 * KiB);
	cr_assert_eq(f.length[0], 8 * KiB);
	cr_assert_eq(f.dev[1], 1);
	cr_assert_eq(f.device[1], 16 * KiB);
	cr_assert_eq(f.length[1], 24 * KiB);
	extmap_release(&m);
}
