/*
 * Sorted view and lookup of self-registered tables (registry.h).
 */
#include <limits.h>
#include <string.h>
#include <strings.h>

#include "registry.h"

bool registry_before(const void *a, const void *b)
{
	const struct registry_head *x = a, *y = b;
	unsigned ox = x->order ? (unsigned)x->order : UINT_MAX;
	unsigned oy = y->order ? (unsigned)y->order : UINT_MAX;

	if (ox != oy)
		return ox < oy;
	return strcmp(x->name, y->name) < 0;
}

const void *registry_at(const void *const *v, size_t n, size_t i)
{
	size_t j, k, rank;

	for (j = 0; i < n && j < n; j++) {
		for (rank = 0, k = 0; k < n; k++)
			rank += registry_before(v[k], v[j]);
		if (rank == i)
			return v[j];
	}
	return NULL;
}

const void *registry_find(const void *const *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcasecmp(((const struct registry_head *)v[i])->name, name) == 0)
			return v[i];
	return NULL;
}

size_t registry_data_offset(const void *const *v, size_t n, const void *entry,
			    size_t (*size)(const void *table))
{
	size_t off = 0, i;

	for (i = 0; i < n; i++)
		if (registry_before(v[i], entry))
			off += (size(v[i]) + 15) & ~(size_t)15;
	return off;
}
