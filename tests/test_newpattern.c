/*
 * A placement pattern added in one source file (tests/pattern_stripe.c,
 * linked only into this test and the scatterfs-stripe daemon): it
 * registers itself, its key is parsed, range-checked, inherited by rules
 * and written back like any other, and it places extents where it says.
 */
#undef NDEBUG
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "config_i.h"
#include "extmap.h"
#include "placement.h"
#include "units.h"

extern const struct placement_ops stripe_ops;
extern const struct placement_ops map_ops; /* layout/pattern_map.c */

static char errbuf[1024];

/* The stripes value of @l, read where the key table says it lives. */
static uint32_t stripes_of(const struct layout_params *l)
{
	uint32_t v;

	memcpy(&v, l->pattern_data + placement_data_offset(&stripe_ops), sizeof(v));
	return v;
}

Test(newpattern, registered_with_the_built_in_ones)
{
	cr_assert_eq(placement_count(), 7);
	cr_assert_eq(placement_find("stripe"), &stripe_ops);
	cr_assert_eq(placement_find("STRIPE"), &stripe_ops);
	cr_assert_eq(placement_find("contiguous"), &contiguous_ops);
	cr_assert_null(placement_find("spiral"));
	/* Built-ins in their order whatever the link order; a pattern without one after them. */
	cr_assert_eq(placement_at(0), &contiguous_ops);
	cr_assert_eq(placement_at(4), &reverse_ops);
	cr_assert_eq(placement_at(5), &map_ops);
	cr_assert_eq(placement_at(6), &stripe_ops);
	cr_assert_null(placement_at(7));
}

Test(newpattern, listed_after_the_built_in_ones)
{
	struct sfs_config c;

	config_init(&c);
	cr_assert_eq(config_set(&c, "layout.pattern=spiral", errbuf, sizeof(errbuf)), -EINVAL);
	cr_assert_str_eq(errbuf, "option -o layout.pattern=spiral: [layout] pattern = spiral: "
				 "unknown value; allowed: contiguous, single, interleaved, random, "
				 "reverse, map, stripe");
	cr_assert_eq(config_set(&c, "layout.nope=1", errbuf, sizeof(errbuf)), -EINVAL);
	cr_assert_str_eq(
	    errbuf, "option -o layout.nope=1: [layout] unknown key 'nope'; allowed: "
		    "pattern, extent_size, device, initial_size, gap, gap_max, "
		    "contiguous_ratio, seed, layout_score, map, map_format, map_base, map_then, "
		    "stripes");
	config_free(&c);
}

Test(newpattern, key_default_and_value)
{
	struct sfs_config c;

	config_init(&c);
	cr_assert_eq(stripes_of(&c.defaults.layout), 4);
	cr_assert_eq(config_set(&c, "layout.pattern=stripe", errbuf, sizeof(errbuf)), 0, "%s",
		     errbuf);
	cr_assert_eq(config_set(&c, "layout.stripes=8", errbuf, sizeof(errbuf)), 0, "%s", errbuf);
	cr_assert_eq(config_finish(&c, 64 * MiB, errbuf, sizeof(errbuf)), 0, "%s", errbuf);
	cr_assert_eq(c.defaults.layout.pattern, &stripe_ops);
	cr_assert_eq(stripes_of(&c.defaults.layout), 8);
	cr_assert_eq(*(const uint32_t *)placement_data(&c.defaults.layout), 8);
	config_free(&c);
}

Test(newpattern, key_range_errors)
{
	static const char *const bad[] = {"0", "65", "x", "-1", ""};
	struct sfs_config c;
	char want[256];

	config_init(&c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char opt[64];

		snprintf(opt, sizeof(opt), "layout.stripes=%s", bad[i]);
		cr_assert_eq(config_set(&c, opt, errbuf, sizeof(errbuf)), -EINVAL, "%s", opt);
		snprintf(want, sizeof(want),
			 "option -o %s: [layout] stripes = %s: must be a whole number from 1 to 64",
			 opt, bad[i]);
		cr_assert_str_eq(errbuf, want);
	}
	cr_assert_eq(stripes_of(&c.defaults.layout), 4);
	cr_assert_eq(config_set(&c, "layout.stripes=64", errbuf, sizeof(errbuf)), 0, "%s", errbuf);
	cr_assert_eq(stripes_of(&c.defaults.layout), 64);
	config_free(&c);
}

Test(newpattern, key_refused_for_another_pattern)
{
	struct sfs_config c;

	config_init(&c);
	cr_assert_eq(config_set(&c, "layout.stripes=8", errbuf, sizeof(errbuf)), 0, "%s", errbuf);
	cr_assert_eq(config_finish(&c, 64 * MiB, errbuf, sizeof(errbuf)), -EINVAL);
	cr_assert_str_eq(errbuf, "option -o layout.stripes=8: [layout] stripes = 8: pattern "
				 "contiguous does not use stripes; only stripe does");
	config_free(&c);
}

Test(newpattern, rule_inherits_and_ini_round_trip)
{
	char path[] = "/tmp/sfs-newpattern-XXXXXX";
	struct sfs_config c, back;
	const struct file_params *fp;
	char *ini, want[200];
	FILE *f;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	cr_assert_not_null(f);
	fputs("[layout]\npattern = stripe\nstripes = 3\n\n[file \"*.db\"]\nstripes = 2\n\n"
	      "[file \"*.log\"]\npattern = contiguous\n",
	      f);
	fclose(f);
	config_init(&c);
	cr_assert_eq(config_load_file(&c, path, errbuf, sizeof(errbuf)), 0, "%s", errbuf);
	cr_assert_eq(config_finish(&c, 64 * MiB, errbuf, sizeof(errbuf)), 0, "%s", errbuf);
	fp = config_for_path(&c, "a.db");
	cr_assert_eq(fp->layout.pattern, &stripe_ops);
	cr_assert_eq(stripes_of(&fp->layout), 2);
	fp = config_for_path(&c, "a.log");
	cr_assert_eq(fp->layout.pattern, &contiguous_ops);
	cr_assert_eq(stripes_of(&fp->layout), 3);
	cr_assert_eq(stripes_of(&config_for_path(&c, "other")->layout), 3);
	ini = config_write_ini(&c);
	cr_assert_not_null(ini);
	snprintf(want, sizeof(want),
		 "\n[layout]\n# set at %s:2\npattern = stripe\nextent_size = auto\n", path);
	cr_assert_not_null(strstr(ini, want), "%s", ini);
	cr_assert_not_null(strstr(ini, "\nstripes = 3\n"), "%s", ini);
	cr_assert_not_null(strstr(ini, "[file \"*.db\"]\npattern = stripe\n"), "%s", ini);
	cr_assert_not_null(strstr(ini, "\nstripes = 2\n"), "%s", ini);
	cr_assert_not_null(strstr(ini, "# stripes = 3 (only the stripe pattern reads it)\n"), "%s",
			   ini);
	/* The written file loads back to the same values. */
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(ini, f);
	fclose(f);
	config_init(&back);
	cr_assert_eq(config_load_file(&back, path, errbuf, sizeof(errbuf)), 0, "%s", errbuf);
	cr_assert_eq(config_finish(&back, 64 * MiB, errbuf, sizeof(errbuf)), 0, "%s", errbuf);
	cr_assert_eq(stripes_of(&config_for_path(&back, "a.db")->layout), 2);
	cr_assert_eq(stripes_of(&back.defaults.layout), 3);
	free(ini);
	unlink(path);
	config_free(&back);
	config_free(&c);
}

/* 64M device, 1M extents, 4 stripes: zones of 16M, dealt round-robin. */
Test(newpattern, places_round_robin_over_zones)
{
	static const uint64_t want[] = {0,	 16 * MiB, 32 * MiB, 48 * MiB,
					1 * MiB, 17 * MiB, 33 * MiB, 49 * MiB};
	struct sfs_config c;
	struct devalloc *a = NULL;
	struct extent_map map, *m = &map;
	const struct layout_params *p;

	extmap_init(m);
	config_init(&c);
	cr_assert_eq(config_set(&c, "layout.pattern=stripe", errbuf, sizeof(errbuf)), 0, "%s",
		     errbuf);
	cr_assert_eq(config_set(&c, "layout.extent_size=1M", errbuf, sizeof(errbuf)), 0, "%s",
		     errbuf);
	cr_assert_eq(config_finish(&c, 64 * MiB, errbuf, sizeof(errbuf)), 0, "%s", errbuf);
	p = &c.defaults.layout;
	cr_assert_eq(devalloc_create(64 * MiB, 4096, &a), 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint64_t logical = extmap_end(m);
		uint64_t len = extent_size_at(p, logical, 4096);
		struct placement_result r = {0};

		cr_assert_eq(len, 1 * MiB);
		cr_assert_eq(p->pattern->place(p, a, m, logical, len, &r), 0);
		cr_assert_eq(r.device, want[i], "extent %zu at %llu, expected %llu", i,
			     (unsigned long long)r.device, (unsigned long long)want[i]);
		cr_assert_eq(r.gap_length, 0);
		cr_assert_eq(
		    extmap_insert(m, logical, r.device, len, EXTENT_UNWRITTEN | EXTENT_START), 0);
	}
	extmap_release(m);
	devalloc_destroy(a);
	config_free(&c);
}
