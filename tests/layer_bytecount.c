/*
 * A throw-away device layer, built only for the tests (the
 * scatterfs-bytecount daemon of tests/mount/newlayer.sh): it proves that a
 * layer that must see the bytes, with a key of its own, is one source file
 * and one meson line, with no edit anywhere in fs/ or layout/.
 *
 * "bytecount" counts the device reads and writes that pass it, their
 * bytes, and the bytes it read that equal [device] bytecount_byte (so it
 * must see them: it implements pread and not pread_fd, and its device's
 * reads are copied rather than spliced).  It writes its counts to stderr
 * when the device's stack is freed, one line per device:
 *   bytecount: device NAME: R reads, RB bytes read, M equal to BYTE; W writes, WB bytes written
 * Every other operation passes through (NULL).
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

#include "device.h"

/* Its own key, in its slice of the device's layer_data. */
struct bytecount_conf {
	uint32_t byte; /* the byte value whose occurrences it counts */
};

static int bytecount_check(const void *data, char *why, size_t len)
{
	const struct bytecount_conf *c = data;
	if (c->byte > 255) {
		snprintf(why, len,
			 "bytecount_byte = %u is not a byte: the bytecount layer counts the bytes "
			 "equal to it in what it reads; allowed: 0 to 255",
			 c->byte);
		return -1;
	}
	return 0;
}

static const struct config_key bytecount_keys[] = {
    {"device", "bytecount_byte", CONFIG_U32, CONFIG_LAYER_DATA,
     offsetof(struct bytecount_conf, byte), .def = "0",
     .help = "the byte value whose occurrences in reads it counts"},
};

/* Its private struct: the counts. */
struct bytecount {
	atomic_uint_fast64_t reads, bytes_read, matches, writes, bytes_written;
	unsigned byte;
};

static int bytecount_pread(struct dev_layer *l, struct dev_req *r, void *buf, uint64_t len,
			   uint64_t off)
{
	struct bytecount *b = l->priv;
	int err = dev_layer_pread(l->next, r, buf, len, off);
	if (err)
		return err;
	uint64_t n = 0;
	for (const unsigned char *p = buf, *e = p + len; p < e; p++)
		n += *p == b->byte;
	atomic_fetch_add(&b->reads, 1);
	atomic_fetch_add(&b->bytes_read, len);
	atomic_fetch_add(&b->matches, n);
	return 0;
}

static int bytecount_pwrite(struct dev_layer *l, struct dev_req *r, const void *buf, uint64_t len,
			    uint64_t off)
{
	struct bytecount *b = l->priv;
	atomic_fetch_add(&b->writes, 1);
	atomic_fetch_add(&b->bytes_written, len);
	return dev_layer_pwrite(l->next, r, buf, len, off);
}

static void bytecount_close(struct dev_layer *l)
{
	struct bytecount *b = l->priv;
	fprintf(stderr,
		"bytecount: device %s: %llu reads, %llu bytes read, %llu equal to %u; %llu writes, "
		"%llu bytes written\n",
		l->dev->name, (unsigned long long)b->reads, (unsigned long long)b->bytes_read,
		(unsigned long long)b->matches, b->byte, (unsigned long long)b->writes,
		(unsigned long long)b->bytes_written);
}

static int bytecount_open(struct dev_layer *l, struct dev_layer_args *a, char *err, size_t errlen)
{
	const struct bytecount_conf *c = l->conf;
	struct bytecount *b = l->priv;
	b->byte = c->byte;
	return 0;
}

static const struct dev_ops bytecount_ops = {
	.pread = bytecount_pread,
	.pwrite = bytecount_pwrite,
	.close = bytecount_close,
};

static const struct dev_layer_type bytecount_layer = {
	.cfg = {.name = "bytecount",
		.keys = bytecount_keys,
		.nkeys = sizeof(bytecount_keys) / sizeof(bytecount_keys[0]),
		.data_size = sizeof(struct bytecount_conf),
		.check = bytecount_check},
	.ops = &bytecount_ops,
	.priv_size = sizeof(struct bytecount),
	.open = bytecount_open,
};
DEV_LAYER_REGISTER(bytecount_layer);
