/*
 * Device layers as the configuration sees them: the registry of layers
 * (the "sfs_layers" linker section that fs/device.h's DEV_LAYER_REGISTER
 * fills), each layer's slice of a device's layer_data and the [device]
 * layers key.  What config_finish() checks of each device's stack is in
 * config_rules.c (check_layers()).
 *
 * The section's bounds are weak symbols: a program without the device
 * stack (scatterfs-plan, layout's unit tests) has no layer, and then
 * [device] layers is checked for its spelling only.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config_i.h"
#include "registry.h"
#include "units.h"

extern const struct config_layer *const __start_sfs_layers[] __attribute__((weak));
extern const struct config_layer *const __stop_sfs_layers[] __attribute__((weak));

size_t config_layer_count(void)
{
	if (!__start_sfs_layers)
		return 0;
	return (size_t)(__stop_sfs_layers - __start_sfs_layers);
}

const struct config_layer *config_layer_at(size_t i)
{
	return registry_at((const void *const *)__start_sfs_layers, config_layer_count(), i);
}

const struct config_layer *config_layer_find(const char *name)
{
	return registry_find((const void *const *)__start_sfs_layers, config_layer_count(), name);
}

static size_t layer_data_size(const void *l)
{
	return ((const struct config_layer *)l)->data_size;
}

size_t config_layer_data_offset(const struct config_layer *l)
{
	return registry_data_offset((const void *const *)__start_sfs_layers, config_layer_count(), l,
				    layer_data_size);
}

const void *config_layer_data(const struct config_layer *l, const unsigned char *layer_data)
{
	return layer_data + config_layer_data_offset(l);
}

/* "accounting, timing, base": every registered layer, in list order. */
void config_layer_names(char *buf, size_t len)
{
	size_t used = 0, i;

	buf[0] = '\0';
	for (i = 0; i < config_layer_count() && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
					 config_layer_at(i)->name);
}

/* ---- [device] layers ---- */

int config_parse_layers(void *field, const char *value, char sep, char *why, size_t len)
{
	struct config_layers out = {0};
	const struct config_layer *bottom = NULL;
	const char *p = value;
	char item[64], allowed[256], ewhy[128];
	size_t i;

	config_layer_names(allowed, sizeof(allowed));
	do {
		config_next_item(&p, sep, item, sizeof(item));
		if (sep == ':' && strchr(item, ',')) {
			snprintf(why, len, "separate layers with ':' in -o (',' ends the option)");
			return -EINVAL;
		}
		if (config_check_name(item, ewhy, sizeof(ewhy))) {
			snprintf(why, len, "layer '%s': %s", item, ewhy);
			return -EINVAL;
		}
		if (config_layer_count()) {
			const struct config_layer *l = config_layer_find(item);

			if (!l) {
				snprintf(why, len, "unknown layer '%s'; allowed: %s, top first", item,
					 allowed);
				return -EINVAL;
			}
			if (bottom) {
				snprintf(why, len,
					 "layer '%s' after '%s', which is the bottom of every stack "
					 "and must come last",
					 item, bottom->name);
				return -EINVAL;
			}
			if (l->flags & CONFIG_LAYER_BOTTOM)
				bottom = l;
			snprintf(item, sizeof(item), "%s", l->name);
		}
		for (i = 0; i < out.n; i++)
			if (strcasecmp(out.name[i], item) == 0) {
				snprintf(why, len, "layer '%s' named twice", item);
				return -EINVAL;
			}
		if (out.n == CONFIG_LAYERS_MAX) {
			snprintf(why, len, "more than %d layers", CONFIG_LAYERS_MAX);
			return -EINVAL;
		}
		snprintf(out.name[out.n++], CONFIG_NAME_MAX, "%.31s", item);
	} while (*p);
	for (i = 0; i < config_layer_count(); i++) {
		const struct config_layer *l = config_layer_at(i);

		if ((l->flags & CONFIG_LAYER_BOTTOM) && l != bottom) {
			snprintf(why, len, "the stack must end with layer '%s' (allowed: %s, top first)",
				 l->name, allowed);
			return -EINVAL;
		}
	}
	*(struct config_layers *)field = out;
	return 0;
}

void config_format_layers(const void *field, char *buf, size_t len)
{
	const struct config_layers *l = field;
	size_t used = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < l->n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "," : "", l->name[i]);
}

bool config_layers_have(const struct config_layers *l, const char *name)
{
	unsigned i;

	for (i = 0; i < l->n; i++)
		if (strcasecmp(l->name[i], name) == 0)
			return true;
	return false;
}
