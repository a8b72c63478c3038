/*
 * pattern = random with layout_score = S (layout/pattern_random.c): a file
 * of 2,000 extents written sequentially gets a static layout score
 * (layout/layout_score.h) within 0.02 of S, and the configuration refuses
 * what cannot be reached.
 */
#undef NDEBUG
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "autoextend.h"
#include "config.h"
#include "extmap.h"
#include "layout_score.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)

static char dir[] = "/tmp/test_layout_target.XXXXXX";

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(target, .init = setup, .fini = teardown);

static int load(struct sfs_config *c, const char *text, uint64_t device, char *err)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/t.ini", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	config_init(c);
	int rc = config_load_file(c, path, err, 1024);
	if (rc == 0)
		rc = config_finish(c, device, err, 1024);
	return rc;
}

/* The static layout of a file of @extents extents of @ext bytes written sequentially. */
static void written(const char *ini, uint64_t ext, size_t extents, struct layout_stats *st)
{
	const uint64_t device = 2048 * MiB;
	struct sfs_config c;
	struct devalloc *a;
	struct extent_map m;
	struct run_vec gaps = {0};
	struct alloc_plan plan = {0};
	char err[1024] = "";
	uint64_t end;

	cr_assert_eq(load(&c, ini, device, err), 0, "%s", err);
	cr_assert_eq(devalloc_create(device, 4096, &a), 0);
	extmap_init(&m);
	const struct file_params *fp = config_for_path(&c, "f");
	while ((end = extmap_end(&m)) < extents * ext)
		cr_assert_eq(layout_allocate(fp, a, &m, &gaps, end, 4096, &plan), 0);
	cr_assert_eq(extmap_extent_count(&m), extents);
	cr_assert_eq(layout_score_extmap(&m, 4096, st), 0);
	alloc_plan_release(&plan);
	run_vec_release(&gaps);
	extmap_release(&m);
	devalloc_destroy(a);
	config_free(&c);
}

static void scores(const char *ini, uint64_t ext, double want)
{
	struct layout_stats st;

	written(ini, ext, 2000, &st);
	double got = layout_stats_score(&st);
	cr_assert(got >= want - 0.02 && got <= want + 0.02, "%s: score %.6f, want %.2f +- 0.02",
		  ini, got, want);
}

Test(target, half_with_one_block_extents)
{
	scores("[layout]\npattern = random\nextent_size = 4K\nlayout_score = 0.5\n", 4 * KiB, 0.5);
}

Test(target, nine_tenths_with_one_block_extents)
{
	scores("[layout]\npattern = random\nextent_size = 4K\nlayout_score = 0.9\n", 4 * KiB, 0.9);
}

/* 4-block extents: 3 of 4 blocks follow inside each extent; r = 1 - 4 x 0.1 = 0.6. */
Test(target, nine_tenths_with_four_block_extents)
{
	scores("[layout]\npattern = random\nextent_size = 16K\nlayout_score = 0.9\nseed = 7\n",
	       16 * KiB, 0.9);
}

/* Another seed, the same score: the share of followers does not depend on luck. */
Test(target, half_with_another_seed)
{
	scores("[layout]\npattern = random\nextent_size = 4K\nlayout_score = 0.5\nseed = 12345\n",
	       4 * KiB, 0.5);
}

Test(target, refused_below_what_extents_allow)
{
	struct sfs_config c;
	char err[1024] = "", want[1024];

	cr_assert_eq(load(&c, "[layout]\npattern = random\nextent_size = 16K\nlayout_score = 0.5\n",
			  64 * MiB, err),
		     -EINVAL);
	snprintf(want, sizeof(want),
		 "%s/t.ini:4: [layout] layout_score = 0.5: below 0.750000, the score of extents of "
		 "4 blocks that all jump; use a smaller extent_size",
		 dir);
	cr_assert_str_eq(err, want);
	config_free(&c);
}

/* Set, it replaces contiguous_ratio: the same score whatever the ratio says. */
Test(target, replaces_contiguous_ratio)
{
	scores("[layout]\npattern = random\nextent_size = 4K\ncontiguous_ratio = 0.1\n"
	       "layout_score = 0.9\n",
	       4 * KiB, 0.9);
}

Test(target, off_or_in_range)
{
	struct sfs_config c;
	char err[1024] = "", want[1024];

	cr_assert_eq(load(&c, "[layout]\npattern = random\nlayout_score = -0.5\n", 64 * MiB, err),
		     -EINVAL);
	snprintf(want, sizeof(want),
		 "%s/t.ini:3: [layout] layout_score = -0.5: must be a number from 0 to 1, or -1 "
		 "(off)",
		 dir);
	cr_assert_str_eq(err, want);
	config_free(&c);
}
