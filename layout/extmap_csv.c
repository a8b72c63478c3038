/* The extent map as CSV, shared by scatterfs-plan and .scatterfs/extents/. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "extmap.h"

int extmap_write_csv(const struct extent_map *m, FILE *f)
{
	if (fputs("logical_offset,device_offset,length\n", f) == EOF)
		return -EIO;
	size_t i = 0;
	while (i < m->n) {
		const struct extent *e = &m->v[i];
		uint64_t len = e->length;
		size_t j = i + 1;
		/* Pieces of one allocation extent (split by state) are one row. */
		while (j < m->n && !(m->v[j].flags & EXTENT_START) &&
		       m->v[j].logical == e->logical + len && m->v[j].dev == e->dev &&
		       m->v[j].device == e->device + len) {
			len += m->v[j].length;
			j++;
		}
		if (fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", e->logical, e->device,
			    len) < 0)
			return -EIO;
		i = j;
	}
	return 0;
}
