/*
 * The key table itself: every key, wherever it is declared (the core table
 * or a pattern's keys[]), is documented in conf/default.ini with its
 * default, has a help line, a range where it is a number, and appears in
 * --help.  A key added as one table row is held to all of this.
 */
#undef NDEBUG
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_i.h"
#include "disk_model.h"
#include "placement.h"

/*
 * The value of [@section] @name in conf/default.ini: "key = value", or
 * "#key = value" for a key written commented out (*@commented set).
 * Returns a malloc'd value, NULL when the file has no such line.
 */
static char *ini_value(const char *section, const char *name, bool *commented)
{
	FILE *f = fopen("conf/default.ini", "r");
	char line[512], cur[64] = "";
	char *found = NULL;

	cr_assert_not_null(f, "conf/default.ini (run from the source root)");
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = line, *eq, *end;
		bool hash = false;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "[%63[^]]]", cur) == 1)
			continue;
		if (strcmp(cur, section) != 0)
			continue;
		if (*p == '#') {
			hash = true;
			p++;
		}
		eq = strchr(p, '=');
		if (!eq)
			continue;
		end = eq;
		while (end > p && end[-1] == ' ')
			end--;
		if ((size_t)(end - p) != strlen(name) || strncmp(p, name, (size_t)(end - p)) != 0)
			continue;
		for (eq++; *eq == ' '; eq++)
			;
		found = strdup(eq);
		*commented = hash;
	}
	fclose(f);
	return found;
}

Test(keys, default_ini_documents_every_key_with_its_default)
{
	struct sfs_config dflt, c;
	char why[256], a[128], b[128];

	config_init(&dflt);
	cr_assert_gt(config_key_count(), 0);
	for (unsigned k = 0; k < config_key_count(); k++) {
		const struct placement_ops *pat;
		const struct config_key *r = config_key_at(k, &pat);
		bool commented = false;
		char *v = ini_value(r->section, r->name, &commented);

		cr_assert_not_null(v, "conf/default.ini has no [%s] %s", r->section, r->name);
		/*
		 * Pattern keys are commented out (a conflict with pattern = contiguous), disk
		 * model keys too (refused with model = none); unset keys too.
		 */
		bool own = pat != NULL || config_key(k)->model != NULL;
		cr_assert_eq(commented, own || r->def == NULL, "[%s] %s: commented out %s",
			     r->section, r->name,
			     commented ? "but read whatever the pattern and model" : "expected");
		if (r->def) {
			config_init(&c);
			cr_assert_eq(
			    config_apply_value(&c, &c.defaults, k, v, ',', why, sizeof(why)), 0,
			    "[%s] %s = %s: %s", r->section, r->name, v, why);
			config_format_value(&dflt, &dflt.defaults, k, a, sizeof(a));
			config_format_value(&c, &c.defaults, k, b, sizeof(b));
			cr_assert_str_eq(b, a,
					 "[%s] %s: conf/default.ini says %s, the default is %s",
					 r->section, r->name, v, a);
			config_free(&c);
		}
		free(v);
	}
	config_free(&dflt);
}

Test(keys, every_key_has_help_and_numbers_a_range)
{
	for (unsigned k = 0; k < config_key_count(); k++) {
		const struct config_key *r = config_key_at(k, NULL);

		cr_assert(r->help && strlen(r->help) > 10, "[%s] %s: no help", r->section, r->name);
		/* Integers without a declared range take their type's: seed is any 64-bit value. */
		if (r->type == CONFIG_DOUBLE)
			cr_assert(r->flags & (CONFIG_HAS_MIN | CONFIG_HAS_MAX),
				  "[%s] %s: a number without a range", r->section, r->name);
		if (r->type == CONFIG_ENUM)
			cr_assert_not_null(r->names, "[%s] %s: no names", r->section, r->name);
		if (r->type == CONFIG_CUSTOM)
			cr_assert(r->parse && r->format, "[%s] %s", r->section, r->name);
		for (unsigned j = 0; j < k; j++) {
			const struct config_key *o = config_key_at(j, NULL);

			/* Two disk models may each have a key of that name: each its own. */
			cr_assert(strcmp(o->section, r->section) != 0 ||
				      strcmp(o->name, r->name) != 0 ||
				      (config_key(j)->model && config_key(k)->model &&
				       config_key(j)->model != config_key(k)->model),
				  "[%s] %s declared twice", r->section, r->name);
		}
	}
}

/*
 * The order of the "allowed" lists and of config_write_ini(): by section,
 * then the core table's keys, then each pattern's, then each disk model's.
 * (test_config pins today's lists word for word.)
 */
Test(keys, order_of_the_merged_list)
{
	static const char *const sections[] = {"device", "layout", "autoextend",
					       "cache",	 "log",	   "disk"};
	int prev_sec = 0, prev_kind = 0;

	cr_assert_eq(config_key_count(), config_nkeys());
	for (unsigned k = 0; k < config_key_count(); k++) {
		const struct key_entry *e = config_key(k);
		int sec = -1, kind = e->pattern ? 1 : e->model ? 2 : 0;

		for (int i = 0; i < 6; i++)
			if (strcmp(sections[i], e->row->section) == 0)
				sec = i;
		cr_assert_geq(sec, prev_sec, "[%s] %s after a later section", e->row->section,
			      e->row->name);
		if (sec == prev_sec)
			cr_assert_geq(kind, prev_kind, "[%s] %s out of order", e->row->section,
				      e->row->name);
		cr_assert_eq((int)e->sec, sec);
		prev_sec = sec;
		prev_kind = kind;
		if (e->pattern)
			cr_assert_eq(config_key_id(e->row), k);
	}
	cr_assert_str_eq(config_key(config_core_id(CK_PATTERN))->row->name, "pattern");
	cr_assert_str_eq(config_key(config_core_id(CK_DISK_MODEL))->row->name, "model");
}

/*
 * --help lists the values of layout.pattern and disk.model from the
 * registries, in their order (map included, and "none" first for the
 * models), so that a new pattern or model shows without an edit there.
 */
Test(keys, help_lists_the_registered_patterns_and_models)
{
	char *out = NULL, want[1024];
	size_t len = 0, used;
	FILE *f = open_memstream(&out, &len);

	cr_assert_not_null(f);
	config_write_help(f);
	fclose(f);
	used = (size_t)snprintf(want, sizeof(want),
				"    layout.pattern              placement pattern: where each new "
				"extent of a file goes; one of ");
	for (size_t i = 0; i < placement_count(); i++)
		used += (size_t)snprintf(want + used, sizeof(want) - used, "%s%s", i ? ", " : "",
					 placement_at(i)->name);
	snprintf(want + used, sizeof(want) - used, " (default contiguous)\n");
	cr_assert_not_null(strstr(out, want), "want: %s\n%s", want, out);
	cr_assert_not_null(strstr(want, ", map"), "%s", want);
	used = (size_t)snprintf(want, sizeof(want),
				"    disk.model                  disk timing model; one of none");
	for (size_t i = 0; i < disk_model_count(); i++)
		used += (size_t)snprintf(want + used, sizeof(want) - used, ", %s",
					 disk_model_at(i)->name);
	snprintf(want + used, sizeof(want) - used, " (default none)\n");
	cr_assert_not_null(strstr(out, want), "want: %s\n%s", want, out);
	free(out);
}

Test(keys, help_lists_every_key_with_its_default)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	cr_assert_not_null(f);
	config_write_help(f);
	fclose(f);
	cr_assert_not_null(strstr(out, "    layout.extent_size          bytes per extent, or auto "
				       "(Oracle AUTOALLOCATE sizes) (default auto)\n"),
			   "%s", out);
	cr_assert_not_null(strstr(out, "    layout.gap                  bytes kept free after each "
				       "extent; 0 = auto (interleaved pattern; default 0)\n"),
			   "%s", out);
	cr_assert_not_null(strstr(out,
				  "    log.path                    the request log (CSV); unset "
				  "= no log (default unset)\n"),
			   "%s", out);
	for (unsigned k = 0; k < config_key_count(); k++) {
		const struct config_key *r = config_key_at(k, NULL);
		char name[80];

		snprintf(name, sizeof(name), "    %s.%s ", r->section, r->name);
		cr_assert_not_null(strstr(out, name), "--help lacks %s", name);
	}
	free(out);
}
