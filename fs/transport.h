/*
 * How requests reach the daemon and replies leave it (transport.c): the
 * classic /dev/fuse (read and writev) or FUSE over io_uring (Linux 6.14),
 * both behind libfuse 3.14's fuse_session_custom_io(), so that libfuse
 * still decodes every request.  The same callbacks shape the INIT reply:
 * they add what libfuse 3.14 cannot ask for (shared mmap of direct-I/O
 * files, the ring).
 */
#ifndef SFS_TRANSPORT_H
#define SFS_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sfs;

/** What -o transport= asks for. */
enum sfs_transport {
	TRANSPORT_AUTO,	 /* the ring when the kernel offers it, else /dev/fuse */
	TRANSPORT_URING, /* the ring, or the mount is refused */
	TRANSPORT_DEV,	 /* /dev/fuse only */
};

/**
 * transport_parse() - @s ("auto", "uring" or "dev") into *@t.
 * @return 0, or -EINVAL for anything else.
 */
int transport_parse(const char *s, enum sfs_transport *t);

/**
 * transport_check() - before anything is created or mounted: whether the
 * kernel can give @t.  For TRANSPORT_URING, checks that the kernel has FUSE
 * over io_uring (/sys/module/fuse/parameters/enable_uring exists: Linux
 * 6.14 or later), that it is enabled (Y), and that io_uring itself works
 * here (a 128-byte-SQE ring can be set up: kernel.io_uring_disabled).
 * @return 0, or -ENOTSUP with one line in @err saying what is missing and
 * how to get it.  AUTO and DEV always pass.
 */
int transport_check(enum sfs_transport t, char *err, size_t errlen);

/**
 * transport_install() - after fuse_session_mount(): puts the callbacks
 * under @fs->se (fuse_session_custom_io() on the session's /dev/fuse).
 * From then on the INIT exchange decides the transport: the ring when @t
 * allows it and the kernel offers FUSE_OVER_IO_URING; its queues start
 * right after the INIT reply, @max_threads worker threads at most over all
 * queues (at least one a queue: the kernel needs every queue before it
 * uses the ring).  @return 0 or -errno.
 */
int transport_install(struct sfs *fs, enum sfs_transport t, unsigned max_threads);

/**
 * transport_init_offered() - the 64-bit INIT flags the kernel offered
 * (fuse_init_in flags, and flags2 under FUSE_INIT_EXT); 0 before INIT or
 * without transport_install().  Valid in the init handler.
 */
uint64_t transport_init_offered(const struct sfs *fs);

/**
 * transport_uses_ring() - whether requests go through the ring: decided
 * at INIT (before the init handler runs) and kept unless registering the
 * queues fails (auto then falls back to /dev/fuse).
 */
bool transport_uses_ring(const struct sfs *fs);

/** The transport in use as the stats name it: "uring" or "dev". */
const char *transport_name(const struct sfs *fs);

/** Requests that came through the ring and through /dev/fuse (stats). */
void transport_counts(const struct sfs *fs, uint64_t *ring, uint64_t *dev, unsigned *queues,
		      unsigned *threads);

/** transport_on_ring_thread() - whether the calling thread serves a ring queue. */
bool transport_on_ring_thread(void);

/**
 * transport_reply_buffer() - where the handler of a request may build a
 * reply of @size bytes so that it leaves without a copy: on a ring thread,
 * serving a request whose payload is spent (a READ's), its entry's payload
 * buffer (page-aligned); else NULL.  Valid until the reply is sent.
 */
void *transport_reply_buffer(size_t size);

/**
 * transport_drain() - on a ring thread, completes every device read the
 * thread has in flight on its own ring (answering their requests) before
 * returning; requests that arrive meanwhile wait for the thread's loop.
 * A ring thread calls it before anything that may sleep on another
 * thread (an inode's lock, a log barrier): that thread may be waiting for
 * those reads.  Nothing elsewhere.
 */
void transport_drain(void);

/**
 * transport_stop() - after the session loop returned: ends the ring's
 * threads (each finishes the request it holds) and frees the queues.
 * Safe without a ring and without transport_install().
 */
void transport_stop(struct sfs *fs);

/** transport_free() - after fuse_session_destroy(): transport_stop(), then frees the rest. */
void transport_free(struct sfs *fs);

#endif
