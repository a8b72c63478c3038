/* The extent map as CSV, shared by scatterfs-plan and .scatterfs/extents/. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "extmap.h"

int extmap_write_csv(const struct extent_map *m, FILE *f)
{
	return extmap_write_csv_devices(m, NULL, 0, f);
}

int extmap_write_csv_devices(const struct extent_map *m, const char *const *names, unsigned n,
			     FILE *f)
{
	if (fputs(n > 1 ? "logical_offset,device_offset,length,device\n"
			: "logical_offset,device_offset,length\n",
		  f) == EOF)
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
		if (fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64, e->logical, e->device, len) < 0)
			return -EIO;
		if (n > 1 && fprintf(f, ",%s", e->dev < n ? names[e->dev] : "?") < 0)
			return -EIO;
		if (fputc('\n', f) == EOF)
			return -EIO;
		i = j;
	}
	return 0;
}
