/*
 * The daemon's multi-threaded request loop: libfuse's fuse_session_loop_mt()
 * with each request read where a WRITE's data lands on a page boundary, so
 * that an O_DIRECT device takes it without a copy (loop.c).
 */
#ifndef SFS_LOOP_H
#define SFS_LOOP_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

/**
 * sfs_loop_run() - serves @se's requests until the file system is unmounted
 * or the session exits (a signal through fuse_set_signal_handlers(), or
 * fuse_session_exit()).  Workers start as requests find none waiting, up
 * to @max_threads (at least 1); with @max_idle non-zero, a worker that
 * finishes a request while more than @max_idle others wait ends.  Each
 * worker's buffer is FUSE_MAX_MAX_PAGES (256) pages plus a page, libfuse
 * 3.14's largest request, and is touched only as far as requests fill it.
 * @return 0 after an unmount, -EINTR when a signal ended the session,
 * -errno when reading /dev/fuse failed (or a worker could not start).
 */
int sfs_loop_run(struct fuse_session *se, unsigned max_threads, unsigned max_idle);

#endif
