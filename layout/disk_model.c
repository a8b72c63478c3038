/*
 * The registry of disk timing models (disk_model.h): the models register
 * themselves in the "sfs_disk_models" linker section; this file lists,
 * finds them and places each one's params struct in disk_params.model_data.
 * It names no model.
 */
#include <stddef.h>

#include "disk_model.h"
#include "registry.h"

extern const struct disk_model_ops *const __start_sfs_disk_models[];
extern const struct disk_model_ops *const __stop_sfs_disk_models[];

_Static_assert(offsetof(struct disk_model_ops, name) == offsetof(struct registry_head, name) &&
		   offsetof(struct disk_model_ops, order) == offsetof(struct registry_head, order),
	       "struct disk_model_ops begins as struct registry_head");

size_t disk_model_count(void)
{
	return (size_t)(__stop_sfs_disk_models - __start_sfs_disk_models);
}

const struct disk_model_ops *disk_model_at(size_t i)
{
	return registry_at((const void *const *)__start_sfs_disk_models, disk_model_count(), i);
}

const struct disk_model_ops *disk_model_find(const char *name)
{
	return registry_find((const void *const *)__start_sfs_disk_models, disk_model_count(),
			     name);
}

/* The slices of the models sorted before @ops come first (as placement_data_offset()). */
static size_t model_params_size(const void *ops)
{
	return ((const struct disk_model_ops *)ops)->params_size;
}

size_t disk_model_data_offset(const struct disk_model_ops *ops)
{
	return registry_data_offset((const void *const *)__start_sfs_disk_models, disk_model_count(),
				    ops, model_params_size);
}

const void *disk_model_params(const struct disk_params *p, const struct disk_model_ops *ops)
{
	return p->model_data + disk_model_data_offset(ops);
}

uint64_t disk_clock_submit(const struct disk_clock *c, const struct disk_model_ops *ops,
			   void *model, enum disk_op op, uint64_t off, uint64_t len,
			   uint64_t arrival_ns, struct disk_io *out)
{
	return disk_clock_real(
	    c, ops->submit(model, op, off, len, disk_clock_model(c, arrival_ns), out));
}
