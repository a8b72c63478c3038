/*
 * The registry of disk timing models (disk_model.h): the models register
 * themselves in the "sfs_disk_models" linker section; this file lists,
 * finds them and places each one's params struct in disk_params.model_data.
 * It names no model.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>

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

int disk_model_fits(const struct disk_params *disk, const char *name, uint64_t device_size,
		    uint64_t *capacity, char *err, size_t errlen)
{
	/* The backing occupies the first bytes of the modelled disk. */
	uint64_t cap = disk->capacity ? disk->capacity : device_size;
	if (capacity)
		*capacity = cap;
	if (disk->model == DISK_NONE)
		return 0;
	if (disk->capacity && disk->capacity < device_size) {
		snprintf(err, errlen,
			 "[disk] capacity = %llu bytes is smaller than the backing device (%llu "
			 "bytes); the backing occupies the first bytes of the emulated disk",
			 (unsigned long long)disk->capacity, (unsigned long long)device_size);
		return -EINVAL;
	}
	if (cap && disk->metadata_io && disk->metadata_offset >= cap) {
		snprintf(err, errlen,
			 "[disk] metadata_offset = %llu is not below the %s disk's size (%llu "
			 "bytes); allowed: 0 to %llu, or metadata_io = false",
			 (unsigned long long)disk->metadata_offset, name, (unsigned long long)cap,
			 (unsigned long long)(cap - 1));
		return -EINVAL;
	}
	if (cap && disk->model->fits)
		return disk->model->fits(disk_model_params(disk, disk->model), cap, err, errlen);
	return 0;
}
