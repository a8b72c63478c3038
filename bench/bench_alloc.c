/*
 * bench-alloc: memory and speed of the device space allocator and of the
 * extent map at scale (not a test: it prints numbers, and one PASS/FAIL line
 * for the 64 bytes per extent memory target).
 *
 * The allocator gets a 16 TiB device with 4 KiB blocks and N extents of
 * 64 KiB, each followed by a 64 KiB free gap, so every extent leaves its own
 * free run: the worst case for a free-run structure.  The extent map gets N
 * appended entries, none physically contiguous with the previous one, so
 * none merge.
 *
 *   bench-alloc [-n EXTENTS]      (default 10000000)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "extmap.h"
#include "splitmix64.h"
#include "units.h"

#define EXTENT (64 * KiB)
#define STEP   (2 * EXTENT) /* extent + gap */
#define TARGET 64	    /* bytes of memory per extent */

static uint64_t rng_state = 42;

static uint64_t rnd(void)
{
	return splitmix64_next(&rng_state);
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(const char *what, uint64_t i, int rc)
{
	fprintf(stderr, "bench-alloc: %s failed at %llu: %s\n", what, (unsigned long long)i,
		strerror(-rc));
	exit(1);
}

static void report(const char *what, uint64_t ops, double ns)
{
	printf("  %-44s %10.0f ns/op  (%llu ops, %.2f s)\n", what, ns / (double)ops,
	       (unsigned long long)ops, ns / 1e9);
}

static int bench_allocator(uint64_t n, uint64_t sample)
{
	const uint64_t size = 16 * TiB;
	struct devalloc *a;
	uint64_t off;
	int rc;
	double t;

	if (n * STEP > size) {
		fprintf(stderr, "bench-alloc: %llu extents do not fit on 16 TiB\n",
			(unsigned long long)n);
		exit(2);
	}
	rc = devalloc_create(size, 4096, &a);
	if (rc)
		die("devalloc_create", 0, rc);

	printf("allocator: 16 TiB device, 4 KiB blocks, %llu extents of 64 KiB + 64 KiB gap\n",
	       (unsigned long long)n);
	t = now_ns();
	for (uint64_t i = 0; i < n; i++) {
		rc = devalloc_alloc_at_or_after(a, i * STEP, EXTENT, &off);
		if (rc || off != i * STEP)
			die("alloc_at_or_after (build)", i, rc ? rc : -EIO);
	}
	report("alloc_at_or_after, device order (build)", n, now_ns() - t);

	size_t mem = devalloc_memory_bytes(a);
	double per_extent = (double)mem / (double)n;
	printf("  free runs %zu, used %llu bytes, memory %zu bytes = %.1f bytes/extent\n",
	       devalloc_free_runs(a), (unsigned long long)devalloc_used_bytes(a), mem, per_extent);

	/* Steady state on a fragmented device: free random extents, then allocate
	 * from random wanted offsets (each lands in a gap or a freed hole). */
	uint64_t *victims = malloc(sample * sizeof(*victims));
	if (!victims)
		die("malloc", 0, -ENOMEM);
	for (uint64_t i = 0; i < sample; i++)
		victims[i] = (rnd() % n) * STEP;
	t = now_ns();
	uint64_t freed = 0;
	for (uint64_t i = 0; i < sample; i++) {
		rc = devalloc_free(a, victims[i], EXTENT);
		if (rc == 0)
			freed++;
		else if (rc != -EINVAL) /* the same extent drawn twice */
			die("free", i, rc);
	}
	report("free, random extents (joins two gaps)", sample, now_ns() - t);
	printf("  (%llu distinct extents freed)\n", (unsigned long long)freed);

	t = now_ns();
	for (uint64_t i = 0; i < sample; i++) {
		rc = devalloc_alloc_at_or_after(a, (rnd() % n) * STEP + EXTENT, EXTENT, &off);
		if (rc)
			die("alloc_at_or_after (random)", i, rc);
	}
	report("alloc_at_or_after, random want", sample, now_ns() - t);

	t = now_ns();
	for (uint64_t i = 0; i < sample; i++) {
		rc = devalloc_alloc_at_or_before(a, (rnd() % n) * STEP, EXTENT, &off);
		if (rc && rc != -ENOSPC)
			die("alloc_at_or_before (random)", i, rc);
	}
	report("alloc_at_or_before, random want_end", sample, now_ns() - t);

	/* A length no gap can hold: the search must skip every small run. */
	t = now_ns();
	for (uint64_t i = 0; i < sample / 10; i++) {
		uint64_t o;
		rc = devalloc_alloc_at_or_after(a, (rnd() % n) * STEP, 4 * EXTENT, &o);
		if (rc)
			die("alloc_at_or_after (large)", i, rc);
		rc = devalloc_free(a, o, 4 * EXTENT);
		if (rc)
			die("free (large)", i, rc);
	}
	report("alloc 256 KiB past all gaps + free", sample / 10, now_ns() - t);
	free(victims);
	devalloc_destroy(a);

	/* What a mount does: reserve every extent of the catalog in device order. */
	rc = devalloc_create(size, 4096, &a);
	if (rc)
		die("devalloc_create", 0, rc);
	t = now_ns();
	for (uint64_t i = 0; i < n; i++) {
		rc = devalloc_reserve(a, i * STEP, EXTENT);
		if (rc)
			die("reserve (bulk load)", i, rc);
	}
	report("reserve, device order (mount bulk load)", n, now_ns() - t);
	devalloc_destroy(a);

	int pass = per_extent <= TARGET;
	printf("  %s: allocator %.1f bytes/extent (target <= %d)\n", pass ? "PASS" : "FAIL",
	       per_extent, TARGET);
	return pass;
}

static void bench_extmap(uint64_t n, uint64_t sample)
{
	struct extent_map m;
	struct segment segs[4];
	int rc;
	double t;

	printf("extent map: %llu entries of 64 KiB\n", (unsigned long long)n);
	extmap_init(&m);
	t = now_ns();
	for (uint64_t i = 0; i < n; i++) {
		rc = extmap_insert(&m, i * EXTENT, i * STEP, EXTENT, EXTENT_START);
		if (rc)
			die("extmap_insert", i, rc);
	}
	report("insert, append", n, now_ns() - t);
	size_t mem = m.cap * sizeof(struct extent);
	printf("  entries %zu, memory %zu bytes = %.1f bytes/extent\n", m.n, mem,
	       (double)mem / (double)n);

	uint64_t sink = 0;
	t = now_ns();
	for (uint64_t i = 0; i < sample; i++) {
		uint64_t off = rnd() % (n * EXTENT);
		size_t k = extmap_lookup(&m, off & ~UINT64_C(4095), EXTENT, segs, 4);
		sink += k + segs[0].device;
	}
	report("lookup 64 KiB, random offset", sample, now_ns() - t);

	t = now_ns();
	for (uint64_t i = 0; i < sample; i++) {
		uint64_t at = (n - 1) * EXTENT + (i % 16) * 4096;
		rc = i % 16 ? extmap_mark_written(&m, at, 4096)
			    : extmap_mark_unwritten(&m, (n - 1) * EXTENT, EXTENT);
		if (rc)
			die("extmap_mark_*", i, rc);
	}
	report("mark_written 4 KiB, last extent (write path)", sample, now_ns() - t);
	if (sink == 42)
		printf(" \n");
	extmap_release(&m);
}

int main(int argc, char **argv)
{
	uint64_t n = 10000000;
	int c;

	while ((c = getopt(argc, argv, "n:h")) != -1) {
		switch (c) {
		case 'n': {
			char *end;
			n = strtoull(optarg, &end, 10);
			if (*end || n == 0) {
				fprintf(stderr, "bench-alloc: -n wants a positive number\n");
				return 2;
			}
			break;
		}
		default:
			fprintf(stderr, "usage: %s [-n EXTENTS]   (default 10000000)\n", argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	uint64_t sample = n < 1000000 ? n : 1000000;

	int pass = bench_allocator(n, sample);
	bench_extmap(n, sample);

	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("peak RSS %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
	printf("%s: allocator memory per extent within %d bytes\n", pass ? "PASS" : "FAIL", TARGET);
	return pass ? 0 : 1;
}
