/*
 * The FUSE wire definitions newer than Debian bookworm's <linux/fuse.h>
 * (protocol 7.38), which the daemon needs to shape its own INIT reply and
 * to speak FUSE over io_uring.  Written from the kernel's
 * include/uapi/linux/fuse.h (7.39: FUSE_DIRECT_IO_ALLOW_MMAP; 7.42:
 * FUSE_OVER_IO_URING and the ring's structures), fs/fuse/dev_uring.c (how
 * the kernel reads and writes them) and
 * Documentation/filesystems/fuse-io-uring.rst.  Each definition is guarded,
 * so a newer <linux/fuse.h> wins; the layouts are checked below.
 */
#ifndef SFS_FUSE_WIRE_H
#define SFS_FUSE_WIRE_H

#include <linux/fuse.h>
#include <stddef.h>
#include <stdint.h>

/*
 * 64-bit INIT flags: bits 32 and up travel in fuse_init_in.flags2 and
 * fuse_init_out.flags2, which count only when FUSE_INIT_EXT is set in
 * flags.
 */
#ifndef FUSE_DIRECT_IO_ALLOW_MMAP
/* Shared mmap of a file opened with FOPEN_DIRECT_IO (Linux 6.6, 7.39). */
#define FUSE_DIRECT_IO_ALLOW_MMAP (1ULL << 36)
#endif
#ifndef FUSE_OVER_IO_URING
/* Requests through io_uring queues (Linux 6.14, 7.42). */
#define FUSE_OVER_IO_URING (1ULL << 41)
#endif

#ifndef FUSE_URING_IN_OUT_HEADER_SZ
#define FUSE_URING_IN_OUT_HEADER_SZ 128
#define FUSE_URING_OP_IN_OUT_SZ	    128

/* Written by the kernel with a request, by the daemon with its reply. */
struct fuse_uring_ent_in_out {
	uint64_t flags;
	uint64_t commit_id;  /* the request's unique, echoed in the commit */
	uint32_t payload_sz; /* bytes of the payload buffer in use */
	uint32_t padding;
	uint64_t reserved;
};

/*
 * A ring entry's header buffer (the first iovec of its REGISTER): the
 * fuse_in_header of a request or the fuse_out_header of its reply; the
 * request's first argument, its per-operation header (fuse_write_in...),
 * when that has a size; and the entry's in/out block.  The rest of the
 * request, and the whole reply after its header, are in the payload
 * buffer (the second iovec).
 */
struct fuse_uring_req_header {
	char in_out[FUSE_URING_IN_OUT_HEADER_SZ];
	char op_in[FUSE_URING_OP_IN_OUT_SZ];
	struct fuse_uring_ent_in_out ring_ent_in_out;
};

/* IORING_OP_URING_CMD's cmd_op on /dev/fuse. */
enum fuse_uring_cmd {
	FUSE_IO_URING_CMD_INVALID = 0,
	FUSE_IO_URING_CMD_REGISTER = 1,		/* an entry's buffers; fetch a request */
	FUSE_IO_URING_CMD_COMMIT_AND_FETCH = 2, /* reply to commit_id; fetch the next */
};

/* In the command area of a 128-byte SQE (IORING_SETUP_SQE128). */
struct fuse_uring_cmd_req {
	uint64_t flags;
	uint64_t commit_id; /* 0 for REGISTER */
	uint16_t qid;	    /* the queue: a CPU number */
	uint8_t padding[6];
};
#endif

_Static_assert(sizeof(struct fuse_uring_ent_in_out) == 32, "fuse_uring_ent_in_out is 32 bytes");
_Static_assert(offsetof(struct fuse_uring_req_header, ring_ent_in_out) == 256,
	       "fuse_uring_req_header: in_out and op_in are 128 bytes each");
_Static_assert(sizeof(struct fuse_uring_cmd_req) == 24, "fuse_uring_cmd_req is 24 bytes");

#endif
