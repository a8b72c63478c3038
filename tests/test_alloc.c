/*
 * Unit tests for the device space allocator (layout/alloc.h).
 *
 * Fixed-value cases for each documented behaviour, then a random stress run
 * against a bitmap reference model (one byte per block, linear scans), and a
 * 16 TiB device.
 */
#undef NDEBUG
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "alloc.h"
#include "splitmix64.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define TiB (UINT64_C(1) << 40)

/* What must not change when an operation fails. */
struct snap {
	uint64_t used, free;
	size_t runs;
};

static struct snap snap(const struct devalloc *a)
{
	return (struct snap){devalloc_used_bytes(a), devalloc_free_bytes(a), devalloc_free_runs(a)};
}

static void same(const struct devalloc *a, struct snap s)
{
	cr_assert_eq(devalloc_used_bytes(a), s.used);
	cr_assert_eq(devalloc_free_bytes(a), s.free);
	cr_assert_eq(devalloc_free_runs(a), s.runs);
}

static struct devalloc *mk(uint64_t size, uint32_t bs)
{
	struct devalloc *a = NULL;
	cr_assert_eq(devalloc_create(size, bs, &a), 0);
	cr_assert_not_null(a);
	return a;
}

Test(alloc, create_bad_args)
{
	struct devalloc *a = NULL;

	cr_assert_eq(devalloc_create(GiB, 0, &a), -EINVAL);
	cr_assert_eq(devalloc_create(GiB, 256, &a), -EINVAL);
	cr_assert_eq(devalloc_create(GiB, 511, &a), -EINVAL);
	cr_assert_eq(devalloc_create(GiB, 3000, &a), -EINVAL);
	cr_assert_eq(devalloc_create(0, 4096, &a), -EINVAL);
	cr_assert_eq(devalloc_create(4095, 4096, &a), -EINVAL);
	cr_assert_eq(devalloc_create(GiB, 4096, NULL), -EINVAL);
	cr_assert_null(a);
	devalloc_destroy(NULL);
}

Test(alloc, create_rounds_size_down)
{
	struct devalloc *a = mk(MiB + 100, 4096);

	cr_assert_eq(devalloc_size(a), MiB);
	cr_assert_eq(devalloc_block_size(a), 4096);
	cr_assert_eq(devalloc_free_bytes(a), MiB);
	cr_assert_eq(devalloc_used_bytes(a), 0);
	cr_assert_eq(devalloc_free_runs(a), 1);
	cr_assert_gt(devalloc_memory_bytes(a), 0);
	cr_assert_eq(devalloc_is_free(a, 0, MiB), 1);
	devalloc_destroy(a);

	a = mk(4096 + 511, 512);
	cr_assert_eq(devalloc_size(a), 4096);
	devalloc_destroy(a);
}

Test(alloc, at_or_after_empty_returns_want)
{
	struct devalloc *a = mk(GiB, 4096);
	uint64_t off = 1;

	cr_assert_eq(devalloc_alloc_at_or_after(a, 10 * MiB + 123, 64 * KiB, &off), 0);
	cr_assert_eq(off, 10 * MiB);
	cr_assert_eq(devalloc_used_bytes(a), 64 * KiB);
	cr_assert_eq(devalloc_free_runs(a), 2);
	cr_assert_eq(devalloc_is_free(a, 10 * MiB, 4096), 0);
	cr_assert_eq(devalloc_is_free(a, 10 * MiB - 4096, 4096), 1);
	cr_assert_eq(devalloc_is_free(a, 10 * MiB + 64 * KiB, 4096), 1);

	cr_assert_eq(devalloc_alloc_at_or_after(a, 0, 64 * KiB, &off), 0);
	cr_assert_eq(off, 0);
	cr_assert_eq(devalloc_free_runs(a), 2);
	/* The last block of the device. */
	cr_assert_eq(devalloc_alloc_at_or_after(a, GiB - 4096, 4096, &off), 0);
	cr_assert_eq(off, GiB - 4096);
	cr_assert_eq(devalloc_free_runs(a), 2);
	cr_assert_eq(devalloc_used_bytes(a), 128 * KiB + 4096);
	devalloc_destroy(a);
}

Test(alloc, bad_lengths)
{
	struct devalloc *a = mk(GiB, 4096);
	uint64_t off = 7;

	cr_assert_eq(devalloc_alloc_at_or_after(a, 0, 0, &off), -EINVAL);
	cr_assert_eq(devalloc_alloc_at_or_after(a, 0, 1000, &off), -EINVAL);
	cr_assert_eq(devalloc_alloc_at_or_before(a, GiB, 0, &off), -EINVAL);
	cr_assert_eq(devalloc_alloc_at_or_before(a, GiB, 4097, &off), -EINVAL);
	cr_assert_eq(off, 7);
	same(a, (struct snap){0, GiB, 1});
	devalloc_destroy(a);
}

Test(alloc, first_free_after_used_run)
{
	struct devalloc *a = mk(GiB, 4096);
	uint64_t off;

	cr_assert_eq(devalloc_reserve(a, 0, MiB), 0);
	cr_assert_eq(devalloc_alloc_at_or_after(a, 0, 64 * KiB, &off), 0);
	cr_assert_eq(off, MiB);
	cr_assert_eq(devalloc_alloc_at_or_after(a, 512 * KiB, 64 * KiB, &off), 0);
	cr_assert_eq(off, MiB + 64 * KiB);

	/* A 64 KiB hole at 2 MiB, used up to 3 MiB: a 128 KiB request skips the hole. */
	cr_assert_eq(devalloc_reserve(a, MiB + 128 * KiB, MiB - 128 * KiB), 0);
	cr_assert_eq(devalloc_reserve(a, 2 * MiB + 64 * KiB, MiB - 64 * KiB), 0);
	cr_assert_eq(devalloc_free_runs(a), 2);
	cr_assert_eq(devalloc_alloc_at_or_after(a, 0, 128 * KiB, &off), 0);
	cr_assert_eq(off, 3 * MiB);
	cr_assert_eq(devalloc_alloc_at_or_after(a, 0, 64 * KiB, &off), 0);
	cr_assert_eq(off, 2 * MiB);
	cr_assert_eq(devalloc_free_runs(a), 1);

	/* want inside a free run but too close to its end: the next run that fits. */
	cr_assert_eq(devalloc_free(a, 2 * MiB, 64 * KiB), 0);
	cr_assert_eq(devalloc_alloc_at_or_after(a, 2 * MiB + 32 * KiB, 64 * KiB, &off), 0);
	cr_assert_eq(off, 3 * MiB + 128 * KiB);
	cr_assert_eq(devalloc_alloc_at_or_after(a, 2 * MiB + 32 * KiB, 32 * KiB, &off), 0);
	cr_assert_eq(off, 2 * MiB + 32 * KiB);
	devalloc_destroy(a);
}

Test(alloc, full_device_enospc_unchanged)
{
	struct devalloc *a = mk(MiB, 4096);
	uint64_t off = 0;

	cr_assert_eq(devalloc_alloc_at_or_after(a, 0, MiB, &off), 0);
	cr_assert_eq(off, 0);
	same(a, (struct snap){MiB, 0, 0});
	off = 99;
	cr_assert_eq(devalloc_alloc_at_or_after(a, 0, 4096, &off), -ENOSPC);
	cr_assert_eq(devalloc_alloc_at_or_before(a, MiB, 4096, &off), -ENOSPC);
	cr_assert_eq(off, 99);
	same(a, (struct snap){MiB, 0, 0});
	cr_assert_eq(devalloc_is_free(a, 0, 4096), 0);

	/* Fragmented: only 64 KiB runs are free; 128 KiB does not fit anywhere. */
	cr_assert_eq(devalloc_free(a, 128 * KiB, 64 * KiB), 0);
	cr_assert_eq(devalloc_free(a, 512 * KiB, 64 * KiB), 0);
	struct snap s = snap(a);
	cr_assert_eq(s.runs, 2);
	cr_assert_eq(devalloc_alloc_at_or_after(a, 0, 128 * KiB, &off), -ENOSPC);
	cr_assert_eq(devalloc_alloc_at_or_before(a, MiB, 128 * KiB, &off), -ENOSPC);
	/* Free space exists, but not at or after want. */
	cr_assert_eq(devalloc_alloc_at_or_after(a, 576 * KiB, 4096, &off), -ENOSPC);
	/* ... nor at or before want_end. */
	cr_assert_eq(devalloc_alloc_at_or_before(a, 128 * KiB, 4096, &off), -ENOSPC);
	/* Past the end of the device, and longer than the device. */
	cr_assert_eq(devalloc_alloc_at_or_after(a, 2 * MiB, 4096, &off), -ENOSPC);
	cr_assert_eq(devalloc_alloc_at_or_after(a, 0, 2 * MiB, &off), -ENOSPC);
	cr_assert_eq(off, 99);
	same(a, s);
	devalloc_destroy(a);
}

Test(alloc, freed_space_is_reused)
{
	struct devalloc *a = mk(GiB, 4096);
	uint64_t off;

	for (uint64_t i = 0; i < 3; i++) {
		cr_assert_eq(devalloc_alloc_at_or_after(a, 0, 64 * KiB, &off), 0);
		cr_assert_eq(off, i * 64 * KiB);
	}
	cr_assert_eq(devalloc_free(a, 64 * KiB, 64 * KiB), 0);
	cr_assert_eq(devalloc_free_runs(a), 2);
	cr_assert_eq(devalloc_used_bytes(a), 128 * KiB);
	cr_assert_eq(devalloc_alloc_at_or_after(a, 0, 64 * KiB, &off), 0);
	cr_assert_eq(off, 64 * KiB);
	cr_assert_eq(devalloc_free_runs(a), 1);

	/* Freeing everything coalesces back into one run. */
	cr_assert_eq(devalloc_free(a, 0, 64 * KiB), 0);
	cr_assert_eq(devalloc_free(a, 128 * KiB, 64 * KiB), 0);
	cr_assert_eq(devalloc_free_runs(a), 2);
	cr_assert_eq(devalloc_free(a, 64 * KiB, 64 * KiB), 0);
	same(a, (struct snap){0, GiB, 1});
	devalloc_destroy(a);
}

Test(alloc, reserve_overlap_eexist_unchanged)
{
	struct devalloc *a = mk(16 * MiB, 4096);

	cr_assert_eq(devalloc_reserve(a, MiB, MiB), 0);
	struct snap s = snap(a);
	cr_assert_eq(s.used, MiB);
	cr_assert_eq(s.runs, 2);
	cr_assert_eq(devalloc_reserve(a, MiB + 512 * KiB, MiB), -EEXIST);
	same(a, s);
	cr_assert_eq(devalloc_reserve(a, 512 * KiB, 512 * KiB + 4096), -EEXIST);
	same(a, s);
	cr_assert_eq(devalloc_reserve(a, MiB, MiB), -EEXIST);
	same(a, s);
	cr_assert_eq(devalloc_reserve(a, 2 * MiB - 4096, 8192), -EEXIST);
	same(a, s);
	cr_assert_eq(devalloc_reserve(a, 0, 16 * MiB), -EEXIST);
	same(a, s);

	cr_assert_eq(devalloc_reserve(a, 100, 4096), -EINVAL);
	cr_assert_eq(devalloc_reserve(a, 0, 100), -EINVAL);
	cr_assert_eq(devalloc_reserve(a, 0, 0), -EINVAL);
	cr_assert_eq(devalloc_reserve(a, 16 * MiB, 4096), -EINVAL);
	cr_assert_eq(devalloc_reserve(a, 16 * MiB - 4096, 8192), -EINVAL);
	cr_assert_eq(devalloc_reserve(a, UINT64_MAX - 4095, 4096), -EINVAL);
	same(a, s);

	/* Exactly adjacent on both sides is fine. */
	cr_assert_eq(devalloc_reserve(a, MiB - 4096, 4096), 0);
	cr_assert_eq(devalloc_reserve(a, 2 * MiB, 4096), 0);
	cr_assert_eq(devalloc_used_bytes(a), MiB + 8192);
	cr_assert_eq(devalloc_free_runs(a), 2);
	devalloc_destroy(a);
}

Test(alloc, free_of_free_range_einval_unchanged)
{
	struct devalloc *a = mk(16 * MiB, 4096);

	cr_assert_eq(devalloc_free(a, 0, 4096), -EINVAL);
	same(a, (struct snap){0, 16 * MiB, 1});

	cr_assert_eq(devalloc_reserve(a, MiB, MiB), 0);
	struct snap s = snap(a);
	cr_assert_eq(devalloc_free(a, MiB - 4096, 8192), -EINVAL);
	same(a, s);
	cr_assert_eq(devalloc_free(a, 2 * MiB - 4096, 8192), -EINVAL);
	same(a, s);
	cr_assert_eq(devalloc_free(a, 0, 16 * MiB), -EINVAL);
	same(a, s);
	cr_assert_eq(devalloc_free(a, MiB + 100, 4096), -EINVAL);
	cr_assert_eq(devalloc_free(a, MiB, 0), -EINVAL);
	cr_assert_eq(devalloc_free(a, 16 * MiB, 4096), -EINVAL);
	same(a, s);

	/* A middle piece of a used run splits it; freeing the same twice fails. */
	cr_assert_eq(devalloc_free(a, MiB + 64 * KiB, 64 * KiB), 0);
	cr_assert_eq(devalloc_free_runs(a), 3);
	s = snap(a);
	cr_assert_eq(devalloc_free(a, MiB + 64 * KiB, 64 * KiB), -EINVAL);
	same(a, s);
	cr_assert_eq(devalloc_free(a, MiB, MiB), -EINVAL);
	same(a, s);
	cr_assert_eq(devalloc_free(a, MiB, 64 * KiB), 0);
	cr_assert_eq(devalloc_free(a, MiB + 128 * KiB, MiB - 128 * KiB), 0);
	same(a, (struct snap){0, 16 * MiB, 1});
	devalloc_destroy(a);
}

Test(alloc, at_or_before)
{
	struct devalloc *a = mk(16 * MiB, 4096);
	uint64_t off;

	cr_assert_eq(devalloc_alloc_at_or_before(a, 8 * MiB, 64 * KiB, &off), 0);
	cr_assert_eq(off, 8 * MiB - 64 * KiB);
	cr_assert_eq(devalloc_alloc_at_or_before(a, 8 * MiB, 64 * KiB, &off), 0);
	cr_assert_eq(off, 8 * MiB - 128 * KiB);
	/* want_end is rounded down to a block, and clipped to the device. */
	cr_assert_eq(devalloc_alloc_at_or_before(a, 512 * KiB + 100, 4096, &off), 0);
	cr_assert_eq(off, 508 * KiB);
	cr_assert_eq(devalloc_alloc_at_or_before(a, UINT64_MAX, 4096, &off), 0);
	cr_assert_eq(off, 16 * MiB - 4096);
	devalloc_destroy(a);

	/* Free only [1M, 1M+128K) and [4M, 4M+64K). */
	a = mk(16 * MiB, 4096);
	cr_assert_eq(devalloc_reserve(a, 0, MiB), 0);
	cr_assert_eq(devalloc_reserve(a, MiB + 128 * KiB, 3 * MiB - 128 * KiB), 0);
	cr_assert_eq(devalloc_reserve(a, 4 * MiB + 64 * KiB, 12 * MiB - 64 * KiB), 0);
	cr_assert_eq(devalloc_free_runs(a), 2);
	cr_assert_eq(devalloc_alloc_at_or_before(a, 16 * MiB, 128 * KiB, &off), 0);
	cr_assert_eq(off, MiB);
	cr_assert_eq(devalloc_free(a, MiB, 128 * KiB), 0);
	cr_assert_eq(devalloc_alloc_at_or_before(a, 16 * MiB, 64 * KiB, &off), 0);
	cr_assert_eq(off, 4 * MiB);
	/* A run that contains want_end is used up to want_end. */
	cr_assert_eq(devalloc_alloc_at_or_before(a, MiB + 96 * KiB, 32 * KiB, &off), 0);
	cr_assert_eq(off, MiB + 64 * KiB);
	/* ... unless it is too short below want_end: the next lower run. */
	cr_assert_eq(devalloc_alloc_at_or_before(a, MiB + 128 * KiB, 64 * KiB, &off), 0);
	cr_assert_eq(off, MiB);
	struct snap s = snap(a);
	cr_assert_eq(s.runs, 1);
	cr_assert_eq(devalloc_alloc_at_or_before(a, MiB + 128 * KiB, 64 * KiB, &off), -ENOSPC);
	cr_assert_eq(devalloc_alloc_at_or_before(a, 4096, 8192, &off), -ENOSPC);
	same(a, s);
	devalloc_destroy(a);
}

/* ---- random stress against a bitmap model ---- */

#define NBLK 4096
#define BS   4096u

struct model {
	unsigned char used[NBLK];
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
	return splitmix64_next(&rng_state);
}

static int m_all(const struct model *m, uint64_t b, uint64_t n, int used)
{
	for (uint64_t i = b; i < b + n; i++)
		if (m->used[i] != used)
			return 0;
	return 1;
}

static void m_set(struct model *m, uint64_t b, uint64_t n, int used)
{
	memset(&m->used[b], used, n);
}

static long m_after(const struct model *m, uint64_t want, uint64_t n)
{
	uint64_t run = 0;
	for (uint64_t i = want; i < NBLK; i++) {
		run = m->used[i] ? 0 : run + 1;
		if (run == n)
			return (long)(i + 1 - n);
	}
	return -1;
}

static long m_before(const struct model *m, uint64_t want_end, uint64_t n)
{
	uint64_t run = 0;
	for (uint64_t i = want_end; i-- > 0;) {
		run = m->used[i] ? 0 : run + 1;
		if (run == n)
			return (long)i;
	}
	return -1;
}

static void m_check(const struct model *m, const struct devalloc *a)
{
	uint64_t used = 0;
	size_t runs = 0;
	for (uint64_t i = 0; i < NBLK; i++) {
		used += m->used[i];
		if (!m->used[i] && (i == 0 || m->used[i - 1]))
			runs++;
	}
	cr_assert_eq(devalloc_used_bytes(a), used * BS);
	cr_assert_eq(devalloc_free_bytes(a), (NBLK - used) * BS);
	cr_assert_eq(devalloc_free_runs(a), runs);
}

Test(alloc, random_stress_against_bitmap)
{
	static struct model m;
	struct devalloc *a = mk((uint64_t)NBLK * BS, BS);
	uint64_t off;

	rng_state = 12345;
	memset(&m, 0, sizeof(m));
	for (int op = 0; op < 20000; op++) {
		uint64_t kind = rnd() % 6;
		/* Mostly small runs, sometimes large ones. */
		uint64_t n = rnd() % 8 == 0 ? 1 + rnd() % 512 : 1 + rnd() % 16;
		uint64_t b = rnd() % NBLK;
		int rc;
		long want;

		switch (kind) {
		case 0:
		case 1:
			want = m_after(&m, b, n);
			off = UINT64_MAX;
			rc = devalloc_alloc_at_or_after(a, b * BS + rnd() % BS, n * BS, &off);
			if (want < 0) {
				cr_assert_eq(rc, -ENOSPC, "op %d", op);
				cr_assert_eq(off, UINT64_MAX);
			} else {
				cr_assert_eq(rc, 0, "op %d", op);
				cr_assert_eq(off, (uint64_t)want * BS, "op %d", op);
				m_set(&m, (uint64_t)want, n, 1);
			}
			break;
		case 2:
			want = m_before(&m, b + 1, n);
			rc =
			    devalloc_alloc_at_or_before(a, (b + 1) * BS + rnd() % BS, n * BS, &off);
			if (want < 0) {
				cr_assert_eq(rc, -ENOSPC, "op %d", op);
			} else {
				cr_assert_eq(rc, 0, "op %d", op);
				cr_assert_eq(off, (uint64_t)want * BS, "op %d", op);
				m_set(&m, (uint64_t)want, n, 1);
			}
			break;
		case 3:
			if (b + n > NBLK) {
				cr_assert_eq(devalloc_reserve(a, b * BS, n * BS), -EINVAL);
				break;
			}
			rc = devalloc_reserve(a, b * BS, n * BS);
			cr_assert_eq(rc, m_all(&m, b, n, 0) ? 0 : -EEXIST, "op %d", op);
			if (rc == 0)
				m_set(&m, b, n, 1);
			break;
		case 4:
		case 5:
			if (b + n > NBLK) {
				cr_assert_eq(devalloc_free(a, b * BS, n * BS), -EINVAL);
				break;
			}
			/* Half the time shrink the range to a used stretch so frees succeed. */
			if (kind == 5) {
				while (n > 1 && !m_all(&m, b, n, 1))
					n /= 2;
			}
			rc = devalloc_free(a, b * BS, n * BS);
			cr_assert_eq(rc, m_all(&m, b, n, 1) ? 0 : -EINVAL, "op %d", op);
			if (rc == 0)
				m_set(&m, b, n, 0);
			break;
		}
		if (b + n <= NBLK)
			cr_assert_eq(devalloc_is_free(a, b * BS, n * BS), m_all(&m, b, n, 0),
				     "op %d", op);
		m_check(&m, a);
	}
	devalloc_destroy(a);
}

Test(alloc, device_16tib)
{
	const uint64_t size = 16 * TiB;
	struct devalloc *a = mk(size, 4096);
	uint64_t off;

	cr_assert_eq(devalloc_size(a), size);
	cr_assert_eq(devalloc_alloc_at_or_after(a, size - 64 * KiB, 64 * KiB, &off), 0);
	cr_assert_eq(off, size - 64 * KiB);
	cr_assert_eq(devalloc_alloc_at_or_after(a, 8 * TiB, TiB, &off), 0);
	cr_assert_eq(off, 8 * TiB);
	cr_assert_eq(devalloc_alloc_at_or_before(a, size, 4 * TiB, &off), 0);
	cr_assert_eq(off, 12 * TiB - 64 * KiB);
	/* Free now: [0, 8T) and [9T, 12T - 64K). */
	cr_assert_eq(devalloc_alloc_at_or_after(a, 0, 8 * TiB + 4096, &off), -ENOSPC);
	cr_assert_eq(devalloc_free_runs(a), 2);
	cr_assert_eq(devalloc_used_bytes(a), 5 * TiB + 64 * KiB);

	/* A mount-time bulk load: 1M extents in device order, 64 KiB gaps. */
	devalloc_destroy(a);
	a = mk(size, 4096);
	const uint64_t n = 1000000, step = 16 * MiB;
	for (uint64_t i = 0; i < n; i++)
		cr_assert_eq(devalloc_reserve(a, i * step, 64 * KiB), 0);
	cr_assert_eq(devalloc_free_runs(a), n);
	cr_assert_eq(devalloc_used_bytes(a), n * 64 * KiB);
	cr_assert_leq(devalloc_memory_bytes(a) / n, 64);
	cr_assert_eq(devalloc_alloc_at_or_after(a, 0, 16 * MiB, &off), 0);
	/* Every gap is 16 MiB - 64 KiB: only the run after the last extent fits. */
	cr_assert_eq(off, (n - 1) * step + 64 * KiB);
	cr_assert_eq(devalloc_free(a, off, 16 * MiB), 0);
	cr_assert_eq(devalloc_alloc_at_or_after(a, 5 * step + 100, 4096, &off), 0);
	cr_assert_eq(off, 5 * step + 64 * KiB);
	cr_assert_eq(devalloc_free(a, 5 * step + 64 * KiB, 4096), 0);
	/* Free every other extent, then the rest: back to one run. */
	for (uint64_t i = 0; i < n; i += 2)
		cr_assert_eq(devalloc_free(a, i * step, 64 * KiB), 0);
	/* Freeing extent i > 0 joins the gaps on both sides of it. */
	cr_assert_eq(devalloc_free_runs(a), n - (n / 2 - 1));
	for (uint64_t i = 1; i < n; i += 2)
		cr_assert_eq(devalloc_free(a, i * step, 64 * KiB), 0);
	same(a, (struct snap){0, size, 1});
	devalloc_destroy(a);

	/* 16 TiB of 512-byte blocks: 2^35 blocks. */
	a = mk(size, 512);
	cr_assert_eq(devalloc_alloc_at_or_before(a, size, 512, &off), 0);
	cr_assert_eq(off, size - 512);
	cr_assert_eq(devalloc_free_bytes(a), size - 512);
	devalloc_destroy(a);
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

Test(alloc, enomem_leaves_state_unchanged)
{
	struct devalloc *a = mk(16 * TiB, 4096);
	struct rlimit old, low;
	uint64_t off = 0, i;
	int rc = 0;

	if (vm_size() > TiB) /* a sanitizer's shadow memory: no room for a cap */
		cr_skip_test("address space already huge");
	cr_assert_eq(devalloc_reserve(a, 8 * TiB, 3 * 4096), 0);
	/* Cap the address space a little above what is in use, then fragment the
	 * device until the node array cannot grow. */
	cr_assert_eq(getrlimit(RLIMIT_AS, &old), 0);
	low = old;
	low.rlim_cur = vm_size() + 64 * MiB;
	if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < low.rlim_cur)
		low.rlim_cur = old.rlim_cur;
	cr_assert_eq(setrlimit(RLIMIT_AS, &low), 0);
	for (i = 0; i < 100000000; i++) {
		rc = devalloc_alloc_at_or_after(a, i * 8192 + 4096, 4096, &off);
		if (rc)
			break;
	}
	struct snap s = snap(a);
	uint64_t off2 = 7;
	int rc_after = devalloc_alloc_at_or_after(a, i * 8192 + 4096, 4096, &off2);
	int rc_before = devalloc_alloc_at_or_before(a, i * 8192 + 8192, 4096, &off2);
	int rc_reserve = devalloc_reserve(a, i * 8192 + 4096, 4096);
	/* Freeing a used block between two used blocks needs a new free run. */
	int rc_free = devalloc_free(a, 8 * TiB + 4096, 4096);
	/* Operations that need no new node still work. */
	int rc_whole = devalloc_alloc_at_or_after(a, 0, 4096, &off);
	cr_assert_eq(setrlimit(RLIMIT_AS, &old), 0);

	cr_assert_eq(rc, -ENOMEM);
	cr_assert_gt(i, 1000);
	cr_assert_eq(rc_after, -ENOMEM);
	cr_assert_eq(rc_before, -ENOMEM);
	cr_assert_eq(rc_reserve, -ENOMEM);
	cr_assert_eq(rc_free, -ENOMEM);
	cr_assert_eq(off2, 7);
	cr_assert_eq(rc_whole, 0);
	cr_assert_eq(off, 0);
	same(a, (struct snap){s.used + 4096, s.free - 4096, s.runs - 1});
	cr_assert_eq(devalloc_is_free(a, 8 * TiB + 4096, 4096), 0);
	cr_assert_eq(devalloc_is_free(a, i * 8192 + 4096, 4096), 1);
	/* With memory back, the same calls succeed. */
	cr_assert_eq(devalloc_free(a, 8 * TiB + 4096, 4096), 0);
	cr_assert_eq(devalloc_reserve(a, i * 8192 + 4096, 4096), 0);
	devalloc_destroy(a);
}

Test(alloc, reserve_all_builds_the_free_runs)
{
	struct devalloc *a = mk(MiB, 4096);
	struct run used[] = {
	    {64 * KiB, 4 * KiB}, {0, 8 * KiB}, {MiB - 4 * KiB, 4 * KiB}, {8 * KiB, 4 * KiB}};
	uint64_t off;

	cr_assert_eq(devalloc_reserve_all(a, used, 4, NULL), 0);
	/* sorted in place */
	cr_assert_eq(used[0].device, 0);
	cr_assert_eq(used[1].device, 8 * KiB);
	cr_assert_eq(used[2].device, 64 * KiB);
	cr_assert_eq(used[3].device, MiB - 4 * KiB);
	cr_assert_eq(devalloc_used_bytes(a), 20 * KiB);
	cr_assert_eq(devalloc_free_runs(a), 2); /* [12K, 64K) and [68K, 1M-4K) */
	cr_assert_eq(devalloc_is_free(a, 12 * KiB, 52 * KiB), 1);
	cr_assert_eq(devalloc_is_free(a, 68 * KiB, MiB - 72 * KiB), 1);
	cr_assert_eq(devalloc_alloc_at_or_after(a, 0, 4 * KiB, &off), 0);
	cr_assert_eq(off, 12 * KiB);
	cr_assert_eq(devalloc_alloc_at_or_after(a, 0, 64 * KiB, &off), 0);
	cr_assert_eq(off, 68 * KiB);
	cr_assert_eq(devalloc_alloc_at_or_before(a, MiB, 4 * KiB, &off), 0);
	cr_assert_eq(off, MiB - 8 * KiB);
	cr_assert_eq(devalloc_free(a, 0, 16 * KiB), 0);
	cr_assert_eq(devalloc_free_runs(a), 2); /* [0, 64K) and [132K, 1M-8K) */
	devalloc_destroy(a);
}

Test(alloc, reserve_all_refusals_leave_state_unchanged)
{
	struct devalloc *a = mk(MiB, 4096);
	struct run bad = {0};
	struct snap s = snap(a);
	struct run overlap[] = {{16 * KiB, 8 * KiB}, {0, 8 * KiB}, {20 * KiB, 4 * KiB}};
	struct run outside[] = {{0, 4 * KiB}, {MiB - 4 * KiB, 8 * KiB}};
	struct run unaligned[] = {{512, 4 * KiB}};
	struct run empty[] = {{8 * KiB, 0}};

	cr_assert_eq(devalloc_reserve_all(a, overlap, 3, &bad), -EEXIST);
	cr_assert_eq(bad.device, 20 * KiB);
	cr_assert_eq(bad.length, 4 * KiB);
	same(a, s);
	cr_assert_eq(devalloc_reserve_all(a, outside, 2, &bad), -EINVAL);
	cr_assert_eq(bad.device, MiB - 4 * KiB);
	same(a, s);
	cr_assert_eq(devalloc_reserve_all(a, unaligned, 1, &bad), -EINVAL);
	cr_assert_eq(bad.device, 512);
	same(a, s);
	cr_assert_eq(devalloc_reserve_all(a, empty, 1, NULL), -EINVAL);
	same(a, s);
	cr_assert_eq(devalloc_reserve_all(a, NULL, 0, NULL), 0);
	same(a, s);
	/* Only on an allocator with nothing in use. */
	cr_assert_eq(devalloc_reserve(a, 0, 4 * KiB), 0);
	s = snap(a);
	cr_assert_eq(devalloc_reserve_all(a, empty, 1, NULL), -EBUSY);
	same(a, s);
	devalloc_destroy(a);
}

Test(alloc, reserve_all_whole_device)
{
	struct devalloc *a = mk(64 * KiB, 4096);
	struct run used[] = {{32 * KiB, 32 * KiB}, {0, 32 * KiB}};
	uint64_t off;

	cr_assert_eq(devalloc_reserve_all(a, used, 2, NULL), 0);
	cr_assert_eq(devalloc_free_bytes(a), 0);
	cr_assert_eq(devalloc_free_runs(a), 0);
	cr_assert_eq(devalloc_alloc_at_or_after(a, 0, 4 * KiB, &off), -ENOSPC);
	cr_assert_eq(devalloc_free(a, 8 * KiB, 4 * KiB), 0);
	cr_assert_eq(devalloc_alloc_at_or_after(a, 0, 4 * KiB, &off), 0);
	cr_assert_eq(off, 8 * KiB);
	devalloc_destroy(a);
}

/* A bulk load of random runs (shuffled) answers every query as the bitmap
 * model does, and as single reserves of the same runs would. */
Test(alloc, reserve_all_against_bitmap)
{
	static struct model m;
	static struct run used[NBLK];
	struct devalloc *a = mk((uint64_t)NBLK * BS, BS);
	size_t n = 0;
	uint64_t off;

	rng_state = 777;
	memset(&m, 0, sizeof(m));
	for (uint64_t b = rnd() % 8; b < NBLK;) {
		uint64_t len = 1 + rnd() % 12;
		if (b + len > NBLK)
			len = NBLK - b;
		used[n++] = (struct run){b * BS, len * BS};
		m_set(&m, b, len, 1);
		b += len + rnd() % 3 * (1 + rnd() % 10); /* a third adjacent */
	}
	for (size_t i = n; i > 1; i--) { /* Fisher-Yates shuffle */
		size_t j = rnd() % i;
		struct run t = used[i - 1];
		used[i - 1] = used[j];
		used[j] = t;
	}
	cr_assert_eq(devalloc_reserve_all(a, used, n, NULL), 0);
	for (size_t i = 1; i < n; i++)
		cr_assert_lt(used[i - 1].device, used[i].device);
	m_check(&m, a);
	for (int op = 0; op < 5000; op++) {
		uint64_t len = 1 + rnd() % 24, b = rnd() % NBLK;
		long want = op % 2 ? m_after(&m, b, len) : m_before(&m, b + 1, len);
		int rc = op % 2 ? devalloc_alloc_at_or_after(a, b * BS, len * BS, &off)
				: devalloc_alloc_at_or_before(a, (b + 1) * BS, len * BS, &off);
		if (want < 0) {
			cr_assert_eq(rc, -ENOSPC, "op %d", op);
			continue;
		}
		cr_assert_eq(rc, 0, "op %d", op);
		cr_assert_eq(off, (uint64_t)want * BS, "op %d", op);
		m_set(&m, (uint64_t)want, len, 1);
		if (op % 7 == 0) {
			cr_assert_eq(devalloc_free(a, off, len * BS), 0);
			m_set(&m, (uint64_t)want, len, 0);
		}
		m_check(&m, a);
	}
	devalloc_destroy(a);
}
