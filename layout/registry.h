/*
 * Registries of tables that register themselves in a linker section
 * (placement patterns, disk timing models): the sorted view and the
 * lookup by name that every such registry needs, written once.
 *
 * A registered table begins with struct registry_head's members, in that
 * order (each table's file checks it with a static assertion), so that it
 * can be read through a pointer to the head.
 */
#ifndef SCATTERFS_REGISTRY_H
#define SCATTERFS_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

/** The first members of every registered table. */
struct registry_head {
	const char *name; /* as the configuration names it */
	int order;        /* in lists: lower first; 0 = after those with one, by name */
};

/** registry_before() - whether @a sorts before @b: by order (0 last), then by name. */
bool registry_before(const void *a, const void *b);

/**
 * registry_at() - the @i-th of the @n tables at @v in sorted order, or NULL
 * past the end.  By selection, recomputed on each call: a handful of
 * tables and no sorted copy whose set-up could race a constructor.
 */
const void *registry_at(const void *const *v, size_t n, size_t i);

/** registry_find() - the table of @v (@n of them) named @name, case-insensitive; NULL when none is. */
const void *registry_find(const void *const *v, size_t n, const char *name);

/**
 * registry_data_offset() - where @entry's slice starts in a buffer that
 * holds one slice per table of @v (@n of them), in sorted order, each
 * slice @size(table) bytes rounded up to 16: the sum of the rounded sizes
 * of the tables that sort before @entry.  In bytes.
 */
size_t registry_data_offset(const void *const *v, size_t n, const void *entry,
			    size_t (*size)(const void *table));

#endif
