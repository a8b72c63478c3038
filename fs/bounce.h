/*
 * Per-thread aligned bounce buffers, so that the I/O path allocates
 * nothing per request once a thread is warm.  A key's destructor frees
 * them when a worker thread ends.
 */
#ifndef SCATTERFS_BOUNCE_H
#define SCATTERFS_BOUNCE_H

#include <stddef.h>

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

/*
 * BOUNCE_WRITE builds the blocks of an unaligned write; BOUNCE_REPLY holds
 * a read's reply when it is copied (O_DIRECT backing, disk model, a layer
 * that must see the bytes).  The base layer's aligned buffer for O_DIRECT
 * reads is its own (fs/dev_base.c): the device stack uses nothing of the
 * I/O path.
 */
enum bounce_slot { BOUNCE_WRITE, BOUNCE_REPLY, BOUNCE_SLOTS };

/**
 * bounce_get() - this thread's 4096-aligned buffer @slot of at least
 * @size bytes, valid until the next call for @slot on this thread.
 * @return the buffer, or NULL (ENOMEM).
 */
char *bounce_get(enum bounce_slot slot, size_t size);

/**
 * bounce_bufvec() - this thread's reply vector with room for *@cap
 * buffers (at least 16), kept between requests.  NULL on ENOMEM.
 */
struct fuse_bufvec *bounce_bufvec(size_t *cap);

/**
 * bounce_bufvec_grow() - doubles this thread's reply vector, keeping its
 * contents; *@cap gets the new capacity.  NULL on ENOMEM (the old vector
 * stays valid).
 */
struct fuse_bufvec *bounce_bufvec_grow(size_t *cap);

#endif
