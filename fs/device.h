/*
 * Backing devices and their layer stacks.
 *
 * A mount has one or more backing devices: device 0, "main", is the
 * command line's BACKING ([device] and [disk] sections), devices 1.. are
 * the [device "NAME"] sections in their order (fs/device_open.c opens and
 * checks them).  A file's extents are all on one device, the one its
 * [layout] device names when it gets its first extent.  Each is a struct
 * device: its file descriptor, size, block size, allocator and counters,
 * and a stack of layers through which every device I/O of the I/O path
 * goes, in the manner of nbdkit's filters: each layer implements the same
 * byte-range operations (struct dev_ops) and passes them on to the layer
 * below it.
 *
 *     I/O path (io.c)
 *       -> accounting (dev_account.c): the request's device I/Os for the
 *          log, and the device's counters
 *       -> [a fault layer goes here]
 *       -> timing model (dev_timing.c): what the I/O would cost on the
 *          modelled disk, when [disk] model is not none, with the drive's
 *          write cache; a flush waits for its destage
 *       -> base (dev_base.c): the system calls on the backing's fd
 *          (O_DIRECT, polled and queued aio reads); an I/O past the
 *          backing's end, which someone shrank under the mount, fails
 *          with EIO
 *
 * The I/O path calls only the dev_*() wrappers below, which enter the top
 * of the stack.  Layers register themselves (DEV_LAYER_REGISTER, in the
 * manner of nbdkit's filters and of placement patterns): each with its
 * name, its operations, its own keys ([device] section, its own struct),
 * the size of its private struct, its check() of its keys and its own
 * error messages.  A layer implements only the operations it changes: a
 * NULL operation passes through to the layer below.  [device] layers
 * (and a [device "NAME"] section's) chooses each device's stack, top
 * first; the default is accounting, timing, volatile, base (volatile leaves
 * itself out unless [device] volatile = true).
 *
 * Reads a layer must see: a layer that implements pread but not pread_fd
 * (or not submit_reads) must see the bytes it reads, so its device's
 * replies are read into memory (copied), never spliced from the backing,
 * and never queued past it; the I/O path learns it from the stack
 * (dev_splice_ok(), dev_can_queue()), no layer needs to say more.
 *
 * The file behind each I/O: struct dev_req tells a layer the request's
 * operation, the file's inode number and path (where known), and the
 * logical offset in that file of the device run being issued, so that a
 * layer can target a file's range and say which file a device range was.
 *
 * Timing does not sleep inside an I/O: a layer adds the I/O's modelled
 * completion to the request (struct dev_req), and the I/O path waits once,
 * for the latest completion, before it replies (dev_req_wait()), so the
 * real I/O overlaps the modelled time.
 *
 * Allocation metadata: each new extent is also charged one metadata write
 * (dev_charge_metadata()), as a file system's bitmap or journal update for
 * an allocation costs one I/O.  It is a seam of its own, not a pwrite,
 * because it has no bytes on the backing: only the timing layer implements
 * it, and the layers that do not simply lack the op.
 */
#ifndef SCATTERFS_DEVICE_H
#define SCATTERFS_DEVICE_H

#include <errno.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "autoextend.h" /* struct run_vec */
#include "config.h"
#include "layout_score.h" /* struct layout_extent, struct flash_stats */
#include "disk_model.h"

/** Backing devices a mount can have (struct extent's dev field holds 8 bits). */
#define SFS_MAX_DEVICES 16
_Static_assert(SFS_MAX_DEVICES == CONFIG_MAX_DEVICES + 1,
	       "main and the [device \"NAME\"] sections");

/**
 * The device I/Os of one request: for the request log (the runs, in the
 * order issued) and the timing model (the latest modelled completion).
 * Filled by the layers as I/Os pass; owned by the request's thread.
 */
/** The file-system operation a request's device I/Os serve (struct dev_req's op). */
enum dev_op {
	DEV_OP_NONE,	   /* not a file's request (the syncer's flush, mount-time I/O) */
	DEV_OP_READ,	   /* read(2) */
	DEV_OP_WRITE,	   /* write(2), with the zero-fill and metadata of what it allocates */
	DEV_OP_ALLOCATE,   /* fallocate(2) mode 0 (preallocation) */
	DEV_OP_PUNCH,	   /* fallocate(2) FALLOC_FL_PUNCH_HOLE */
	DEV_OP_ZERO_RANGE, /* fallocate(2) FALLOC_FL_ZERO_RANGE */
	DEV_OP_TRUNCATE,   /* truncate(2), ftruncate(2), open(2) with O_TRUNC */
	DEV_OP_FSYNC,	   /* fsync(2), fdatasync(2) */
	DEV_OP_UNLINK,	   /* the space of a removed file (its last link gone, its last open closed) */
};

/** dev_op_name() - "read", "write", ... as in messages; "none" for DEV_OP_NONE. */
const char *dev_op_name(enum dev_op op);

/** No logical offset (struct dev_req's logical): an I/O of no file range. */
#define DEV_NO_LOGICAL UINT64_MAX

struct dev_req {
	/*
	 * The file behind the I/Os (set by the I/O path; a layer only reads
	 * them): @op what the request does, @ino the file's inode number (0 =
	 * none), @path its path from the mount's root without a leading '/'
	 * where known (NULL otherwise; valid while the request runs), and
	 * @logical the logical offset in the file of the device run being
	 * issued (DEV_NO_LOGICAL when it is none of the file's bytes: the
	 * allocation metadata write, a flush).  A queued read carries its
	 * runs' logical offsets in struct dev_aio instead.
	 */
	enum dev_op op;
	uint64_t ino;
	const char *path;
	uint64_t logical;
	/*
	 * Set by the I/O path with @logical: the device run being written
	 * lies in space the file was given and never wrote (an unwritten
	 * extent, or a new extent's zero-fill), whose contents for the file
	 * are zeros until this write is durable.  The volatile layer restores
	 * zeros there, not the space's old bytes, when a failed flush forgets
	 * the write (flush = linux), as ext4 leaves an extent whose write
	 * failed unwritten.
	 */
	bool fresh;
	uint64_t arrival_ns;  /* CLOCK_MONOTONIC when the request started */
	uint64_t complete_ns; /* modelled completion; 0 without a model */
	/*
	 * Set by a disk model with dies (struct disk_io): the dies its device
	 * I/Os touched and its pages that waited on a busy die, summed over
	 * them (the log's dies and collisions columns).
	 */
	uint32_t dies, collisions;
	struct run *v;        /* device I/Os issued, in order */
	size_t n, cap;
	atomic_uint_fast64_t *lost; /* counts runs that could not be recorded (ENOMEM) */
	/*
	 * The fault rule that broke one of its I/Os ("" = none), set by the
	 * fault layer (dev_fault.c) for the request log's fault column.
	 */
	char fault[64];
	struct run inline_v[16];
};

/**
 * dev_req_init() - an empty record for a request that arrived at
 * @arrival_ns (monotonic), of no file (op DEV_OP_NONE; see dev_req_file()).
 */
void dev_req_init(struct dev_req *r, uint64_t arrival_ns);

/** dev_req_file() - says that @r is @op on the file @ino at @path (NULL: not known). */
static inline void dev_req_file(struct dev_req *r, enum dev_op op, uint64_t ino, const char *path)
{
	r->op = op;
	r->ino = ino;
	r->path = path;
}
/** dev_req_release() - frees what the record allocated. */
void dev_req_release(struct dev_req *r);
/**
 * dev_req_wait() - sleeps until the request's modelled completion (at once
 * without a model): an absolute-deadline sleep to 200 us before it, then a
 * spin, because a sleeping thread wakes up about 80 us late on a virtual
 * machine and that lateness would be error in the model's timing.
 */
void dev_req_wait(const struct dev_req *r);
/** dev_req_model_us() - modelled latency of the request in microseconds (0 without a model). */
uint64_t dev_req_model_us(const struct dev_req *r);

/** What an asynchronous device read (dev_submit_reads()) calls when it completes. */
struct dev_aio;
typedef void (*dev_aio_done_fn)(struct dev_aio *io, int64_t res);

/**
 * One asynchronous read: logical [@off, @off+@len) of the device into
 * @buf.  The base layer reads the block-aligned range around it, so the
 * caller's buffer must extend to the aligned bounds around @buf (the
 * block containing @off starts at @buf - (@off % block_size)).
 */
struct dev_aio {
	struct iocb cb;       /* the base layer's, not the caller's */
	uint64_t off, len;    /* device offset and bytes the request wants */
	uint64_t logical;     /* the file's logical offset of @off (struct dev_req's logical) */
	char *buf;            /* where @off's byte goes */
	dev_aio_done_fn done; /* res: bytes read (the aligned range) or -errno */
	void *opaque;         /* the caller's */
	void *base;           /* the base layer's, for a read on a thread's own ring */
};

struct dev_layer;
struct dev_layer_type;
struct fault_set; /* fault.h */

/**
 * A layer's operations.  Offsets and lengths are bytes on the device; @r
 * may be NULL (an I/O no request owns: nothing to log or model).  All
 * return 0 or -errno.  Each is optional: NULL passes the operation through
 * to the layer below (the base layer implements every one it needs), and
 * a layer calls the layer below with the dev_layer_*() functions below
 * (dev_layer_pread(l->next, ...)), which skip the layers without it.
 */
struct dev_ops {
	/** Reads [off, off+len) into @buf (any alignment). */
	int (*pread)(struct dev_layer *l, struct dev_req *r, void *buf, uint64_t len, uint64_t off);
	/**
	 * Lets the reply splice [off, off+len) straight from the backing:
	 * sets *@fd to a descriptor to read it from.  Called only on a device
	 * whose stack allows splicing (dev_splice_ok()): a layer with pread
	 * and without pread_fd must see the bytes, and its device's reads are
	 * copied instead.  -EOPNOTSUPP makes the I/O path read this run and
	 * the rest of the request into memory (dev_pread()), even after
	 * other runs of the request spliced: those stay spliced, and no run
	 * is issued twice.
	 */
	int (*pread_fd)(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off, int *fd);
	/** Writes @len bytes of @buf at @off (block-aligned buffer and range on an O_DIRECT backing). */
	int (*pwrite)(struct dev_layer *l, struct dev_req *r, const void *buf, uint64_t len,
		      uint64_t off);
	/** Makes [off, off+len) read as zeros as @mode says (zero-fill; ZERO_FILL_NONE does nothing). */
	int (*zero)(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off,
		    enum zero_fill mode);
	/**
	 * Makes every write completed before it durable (fdatasync; a drive's
	 * SYNCHRONIZE CACHE: the timing layer makes @r wait for the modelled
	 * write cache's destage; with @r NULL nothing is charged).
	 */
	int (*flush)(struct dev_layer *l, struct dev_req *r);
	/**
	 * Queued submission: starts the @n reads of @ios and returns at once;
	 * each io's done() is called later from the completion thread (or
	 * before this returns, when it could not be queued).  -EOPNOTSUPP
	 * when this stack cannot queue (the caller reads synchronously).  Not
	 * called past a layer with pread and without submit_reads (see
	 * dev_can_queue()).
	 */
	int (*submit_reads)(struct dev_layer *l, struct dev_req *r, struct dev_aio *ios, size_t n);
	/**
	 * Trim (a drive's DISCARD, UNMAP or Dataset Management deallocate):
	 * [off, off+len) holds nothing a file needs any more.  Issued when
	 * freed space goes back to the allocator, after the catalog that no
	 * longer points at it is durable (punch hole, truncate, unlink and
	 * any freed extent); @r carries the file the run belonged to: op
	 * DEV_OP_PUNCH, DEV_OP_TRUNCATE or DEV_OP_UNLINK, its inode number,
	 * and its path when the run was freed.  The bytes may read as
	 * anything afterwards; no layer must fail a later read of them.
	 * Without a layer that implements it, nothing happens.
	 */
	int (*trim)(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off);
	/**
	 * The file system's metadata update for one new extent of this
	 * device, charged to @r without touching the backing.  The timing
	 * layer charges one block written with FUA at [disk]
	 * metadata_offset (unless metadata_io is false).  Without a layer
	 * that implements it, nothing is charged.
	 */
	int (*charge_metadata)(struct dev_layer *l, struct dev_req *r);
	/**
	 * Optional: the layer's own counters, each through @emit (a name, a
	 * C identifier, and its value), for the device's object in
	 * .scatterfs/stats (under the layer's name).  The timing layer gives
	 * its disk model's.  May be called from any thread.
	 */
	void (*counters)(struct dev_layer *l,
			 void (*emit)(void *ctx, const char *name, uint64_t value), void *ctx);
	/**
	 * Optional: the flash layout score (layout_score.h flash_score()) of
	 * the @n extents at @v of one file on this device, in @out.  The
	 * timing layer gives it when its disk model has dies (an ssd);
	 * -EOPNOTSUPP otherwise.  May be called from any thread.
	 */
	int (*flash_score)(struct dev_layer *l, const struct layout_extent *v, size_t n,
			   struct flash_stats *out);
	/**
	 * Optional: writes the layer's state that outlives the mount (the
	 * timing layer's disk model's, an SSD's FTL) where it reads it at the
	 * next mount; called once, at a clean unmount.  Writes its own error.
	 */
	void (*save_state)(struct dev_layer *l);
	/** Frees what the layer holds besides its private struct (dev_stack_free() frees that). */
	void (*close)(struct dev_layer *l);
};

/** One layer of a device's stack. */
struct dev_layer {
	const struct dev_ops *ops;
	struct dev_layer *next; /* the layer below; NULL for the base */
	struct device *dev;
	const struct dev_layer_type *type;
	void *priv;	  /* its private struct: type->priv_size bytes, zeroed; NULL when 0 */
	const void *conf; /* its keys' values: its struct in the device's layer_data */
	/*
	 * Whether replies of this device may splice from the backing as far
	 * as this layer goes: true unless it has pread without pread_fd;
	 * its open() may clear it (an O_DIRECT base, a timing model).
	 */
	bool splice;
};

/** What a layer's open() is given. */
struct dev_layer_args {
	const struct disk_params *disk; /* the device's [disk] section */
	uint32_t time_dilation;		/* [disk] time_dilation, mount-wide (0: 1) */
	/*
	 * Where the device's model keeps its state between mounts (the
	 * catalog's path + ".ftl." + the device's name), NULL for none;
	 * state_load: read it at open (false when this mount created the
	 * catalog: a file there is another file system's).
	 */
	const char *state_path;
	bool state_load;
	uint32_t poll_us;		/* [device] poll_us */
	enum async_reads async_reads;	/* [device] async_reads */
	/*
	 * Set by a layer whose replies wait for modelled time (the timing
	 * layer): the layers below it see it, and need not poll or queue
	 * for speed the reply will not have.
	 */
	bool timed;
};

/* open()'s return for "nothing to do on this device": left out of its stack. */
#define DEV_LAYER_SKIP 1

/**
 * struct dev_layer_type - a registered layer.  @cfg first: its name, own
 * keys ([device], home CONFIG_LAYER_DATA, offsets into its own struct of
 * cfg.data_size bytes), flags and check() of those keys, which the
 * configuration reads (layout/config.h).
 */
struct dev_layer_type {
	struct config_layer cfg;
	const struct dev_ops *ops;
	size_t priv_size; /* bytes of its private struct (l->priv), zeroed before open() */
	/**
	 * Optional: sets up @l (l->priv, l->conf are there; the layers below
	 * are not open yet: they open after it, top first).  @return 0,
	 * DEV_LAYER_SKIP when it has nothing to do on this device (it is left
	 * out), or -errno with @err set to its own one-line message.
	 */
	int (*open)(struct dev_layer *l, struct dev_layer_args *a, char *err, size_t errlen);
};

/*
 * Registration, as PLACEMENT_REGISTER() (layout/placement.h): a pointer to
 * the type's configuration half in the linker section "sfs_layers"
 * (layout/config_layers.c reads it).  The file that defines a layer is all
 * a new layer needs, and one line in a meson.build.
 */
#define DEV_LAYER_REGISTER(t)                                                                     \
	static const struct config_layer *const sfs_layer_ptr_##t                                  \
	    __attribute__((section("sfs_layers"), used)) = &(t).cfg

/** dev_layer_type_of() - the registered layer whose configuration half is @c. */
static inline const struct dev_layer_type *dev_layer_type_of(const struct config_layer *c)
{
	return (const struct dev_layer_type *)c;
}

/** dev_layer_next() - the layer below @l (never NULL above the base). */
static inline struct dev_layer *dev_layer_next(const struct dev_layer *l)
{
	return l->next;
}

/*
 * Calls of an operation from layer @l down: the first layer from @l with
 * the operation does it.  A layer passes an I/O on with @l = l->next.
 */
static inline int dev_layer_pread(struct dev_layer *l, struct dev_req *r, void *buf, uint64_t len,
				  uint64_t off)
{
	for (; l; l = l->next)
		if (l->ops->pread)
			return l->ops->pread(l, r, buf, len, off);
	return -EOPNOTSUPP;
}

static inline int dev_layer_pread_fd(struct dev_layer *l, struct dev_req *r, uint64_t len,
				     uint64_t off, int *fd)
{
	for (; l; l = l->next)
		if (l->ops->pread_fd)
			return l->ops->pread_fd(l, r, len, off, fd);
	return -EOPNOTSUPP;
}

static inline int dev_layer_pwrite(struct dev_layer *l, struct dev_req *r, const void *buf,
				   uint64_t len, uint64_t off)
{
	for (; l; l = l->next)
		if (l->ops->pwrite)
			return l->ops->pwrite(l, r, buf, len, off);
	return -EOPNOTSUPP;
}

static inline int dev_layer_zero(struct dev_layer *l, struct dev_req *r, uint64_t len,
				 uint64_t off, enum zero_fill mode)
{
	for (; l; l = l->next)
		if (l->ops->zero)
			return l->ops->zero(l, r, len, off, mode);
	return -EOPNOTSUPP;
}

static inline int dev_layer_flush(struct dev_layer *l, struct dev_req *r)
{
	for (; l; l = l->next)
		if (l->ops->flush)
			return l->ops->flush(l, r);
	return 0;
}

static inline int dev_layer_submit_reads(struct dev_layer *l, struct dev_req *r,
					 struct dev_aio *ios, size_t n)
{
	for (; l; l = l->next)
		if (l->ops->submit_reads)
			return l->ops->submit_reads(l, r, ios, n);
	return -EOPNOTSUPP;
}

static inline int dev_layer_trim(struct dev_layer *l, struct dev_req *r, uint64_t len,
				 uint64_t off)
{
	for (; l; l = l->next)
		if (l->ops->trim)
			return l->ops->trim(l, r, len, off);
	return 0;
}

static inline int dev_layer_charge_metadata(struct dev_layer *l, struct dev_req *r)
{
	for (; l; l = l->next)
		if (l->ops->charge_metadata)
			return l->ops->charge_metadata(l, r);
	return 0;
}

static inline int dev_layer_flash_score(struct dev_layer *l, const struct layout_extent *v,
					size_t n, struct flash_stats *out)
{
	for (; l; l = l->next)
		if (l->ops->flash_score)
			return l->ops->flash_score(l, v, n, out);
	return -EOPNOTSUPP;
}

/** Counters of one device, kept by the accounting layer. */
struct dev_counters {
	atomic_uint_fast64_t reads, bytes_read;       /* device reads issued */
	atomic_uint_fast64_t writes, bytes_written;   /* device writes and zero-fills */
	atomic_uint_fast64_t flushes;
	atomic_uint_fast64_t trims, bytes_trimmed;    /* trims issued (struct dev_ops trim) */
	atomic_uint_fast64_t busy_ns;                 /* modelled time the head was busy */
	atomic_uint_fast64_t
	    queue_ns; /* modelled arrival-to-completion time of the device I/Os, summed */
	atomic_uint_fast64_t polled_reads, polled_completions; /* base: polled aio reads */
	atomic_uint_fast64_t async_reads;             /* reads answered by the completion thread */
	atomic_uint_fast64_t ring_reads; /* of those, queued on a ring thread's own io_uring */
};

/**
 * The file a freed run belonged to, which the run's trim carries (struct
 * dev_req's op, ino and path) when the catalog no longer points at it.
 * @path is the file's path when the space was freed (a removed file's
 * last one), shared by the runs of one free: struct freed_name, counted
 * under the device's alloc_lock; NULL when not known.
 */
struct freed_name {
	size_t refs; /* pending runs that point at it */
	char s[];
};
struct freed_from {
	enum dev_op op; /* DEV_OP_PUNCH, DEV_OP_TRUNCATE or DEV_OP_UNLINK */
	uint64_t ino;	/* 0 = no file */
	struct freed_name *path;
};
/** A device run waiting in pending_free, and where it came from. */
struct freed_run {
	uint64_t device, length; /* bytes */
	struct freed_from from;
};
struct freed_vec {
	struct freed_run *v;
	size_t n, cap;
};

/** One backing device. */
struct device {
	unsigned index;      /* into sfs.dev[]; the dev field of extents and runs */
	const char *name;    /* "main" for the command line's BACKING, else the section's NAME */
	char *path;          /* the backing, absolute (main's: sfs.backing_path; others own it) */
	bool created;        /* this mount created the backing: removed if the mount is refused */
	int recorded;        /* its number in the catalog at mount; -1 = new to the catalog */
	int fd;              /* backing device (owned by the base layer after dev_stack_build()) */
	bool direct;         /* fd has O_DIRECT */
	uint64_t size;       /* bytes managed by the allocator, a multiple of block_size */
	uint32_t block_size; /* allocation unit, bytes */

	pthread_mutex_t alloc_lock;
	struct devalloc *alloc; /* under alloc_lock */
	/*
	 * Device runs freed in memory whose removal the catalog may not hold
	 * durably yet: handing them to another file before that would let a
	 * crash show one file's bytes in another.  sfs_sync() returns them to
	 * the allocator.  Under alloc_lock.
	 */
	struct freed_vec pending_free;
	uint64_t pending_free_bytes;
	/*
	 * Runs ever taken off the front of pending_free: the run at index i
	 * of pending_free is number pending_released + i since the mount, so
	 * two sfs_sync() calls that overlap each release only what was pending
	 * when it began (under alloc_lock).
	 */
	uint64_t pending_released;
	/*
	 * Ordered data (ext4's data=ordered): new_data_gen counts the writes
	 * of data that catalog rows not yet durable will point at (a new
	 * extent, an unwritten one turned written, a zero-fill), each counted
	 * once it has reached the device (dev_note_new_data()); flushed_gen is
	 * new_data_gen as it was when the last successful flush began.  A
	 * catalog sync first flushes every device where they differ
	 * (sfs_flush_ordered()), so no durable row points at bytes that a
	 * crash can still take back.
	 */
	atomic_uint_fast64_t new_data_gen, flushed_gen;

	struct dev_layer *top;  /* the stack's top: what the I/O path calls */
	struct dev_layer *base; /* the bottom layer */
	bool model_on;          /* a layer of the stack models time (struct dev_layer_args timed) */
	bool splice_ok;         /* every layer lets replies splice from the backing */
	bool queue_ok;          /* no layer must see reads that would be queued past it */
	struct dev_counters counters;
	struct fault_set *faults; /* the mount's fault rules, for a fault layer; NULL = none */
	/*
	 * Called (when set) for each file whose writes a failed flush made
	 * the volatile layer forget (dev_volatile_forget()), with no lock of
	 * the layer held: the mount bumps the file's write-back error.
	 */
	void (*forgot)(void *ctx, uint64_t ino);
	void *forgot_ctx;

	/*
	 * The backing's own size, which someone else may shrink under a
	 * mounted file system (truncate(1), losetup -c): opened_bytes is what
	 * it held when this mount opened it, before size= grew it;
	 * backing_bytes the size last seen (dev_backing_seen()), which the
	 * base layer checks device I/Os against.  shrinks counts the times it
	 * was seen smaller than before (each reported once), past_end the
	 * device I/Os failed with EIO because they reached past its end.
	 * backing_leased: the base layer holds a write lease on the backing,
	 * so no other process can have changed its size (dev_base.c).
	 */
	bool blockdev; /* a block device: its size is BLKGETSIZE64's, not st_size */
	uint64_t opened_bytes;
	atomic_uint_fast64_t backing_bytes;
	atomic_uint_fast64_t shrinks, past_end;
	/* 0: no shrink seen; else 1 + the smallest size a shrink was seen at
	 * (dev_past_shrink(): it stays even if the backing grows back) */
	atomic_uint_fast64_t shrunk_end;
	atomic_bool backing_leased;
	/*
	 * Allocations on this device refused with ENOSPC (one a request), and
	 * whether the first has been reported (one message a mount).
	 */
	atomic_uint_fast64_t enospc;
	atomic_bool enospc_reported;
};

/**
 * dev_stack_build() - builds @d's stack over its open fd: the layers
 * @layers names, top first, each opened with its own keys (its slice of
 * @layer_data) and @a; a layer whose open() skips is left out.
 * @err/@errlen: one line when it fails (the layer's own, after the device's name).
 * @return 0, -EINVAL (a layer refused the device's settings), -ENOENT (a
 * layer no longer registered), -ENOMEM.
 */
int dev_stack_build(struct device *d, const struct config_layers *layers,
		    const unsigned char *layer_data, struct dev_layer_args *a, char *err,
		    size_t errlen);

/**
 * dev_stack_start() - starts the stack's threads (the completion thread of
 * queued reads), once the mount is up.  @return 0, or -errno: queued reads
 * are then off and every read waits for its device I/O.
 */
int dev_stack_start(struct device *d);

/** dev_stack_stop() - answers the queued reads still in flight and stops the threads. */
void dev_stack_stop(struct device *d);

/** dev_stack_save() - each layer's save_state(), top first: at a clean unmount. */
void dev_stack_save(struct device *d);

/** dev_stack_free() - frees the layers (after dev_stack_stop()); the fd stays open. */
void dev_stack_free(struct device *d);

/**
 * dev_backing_size() - the current size in bytes of the backing open as
 * @fd: st_size of a regular file, BLKGETSIZE64 of a block device
 * (@blockdev).  @return 0, -errno from fstat(2) or ioctl(2).
 */
int dev_backing_size(int fd, bool blockdev, uint64_t *bytes);

/**
 * dev_backing_seen() - records @bytes, just read with dev_backing_size(),
 * as @d's backing size.  A size smaller than the one last seen is a
 * shrink: counted in @d->shrinks and reported once, as one line on stderr
 * (and to syslog in a daemonized mount, dev_set_syslog()) naming the
 * device, its backing and the old and new sizes.  Thread-safe: of threads
 * that see the same shrink, one reports it.
 */
void dev_backing_seen(struct device *d, uint64_t bytes);

/**
 * dev_past_shrink() - whether [.., @end) reaches past the smallest size a
 * shrink of @d's backing was seen at (dev_backing_seen()).  That end
 * stays: a backing grown back since (by a write that passed its size check
 * just before the truncate, or by hand) has zeros where the data was, so an
 * I/O past it fails with EIO as the shrink's report says.  No system call.
 */
bool dev_past_shrink(struct device *d, uint64_t end);

/**
 * dev_backing_poll() - dev_backing_seen() of @d's backing size now (the
 * background sync thread calls it, so that a shrink is reported on an
 * idle mount too).  @return 0, -errno.
 */
int dev_backing_poll(struct device *d);

/**
 * dev_report() - one line @line (starting "scatterfs: ") about a device, on
 * stderr and, in a daemonized mount, to syslog (without the prefix), as
 * shrinks are reported.
 */
void dev_report(const char *line);

/** dev_set_syslog() - also send device reports (shrinks, the first ENOSPC) to syslog (a daemon whose stderr is gone). */
void dev_set_syslog(bool on);

/**
 * dev_may_queue() - whether dev_submit_reads() can ever queue on @d: its
 * stack passes queued reads down and its base layer's queue is started
 * (an O_DIRECT backing, device.async_reads, no timing model).
 */
bool dev_may_queue(const struct device *d);
/** dev_can_queue() - whether dev_submit_reads() may queue now (see the base layer). */
bool dev_can_queue(const struct device *d);

/* The I/O path's entry points: the top of @d's stack. */
static inline int dev_pread(struct device *d, struct dev_req *r, void *buf, uint64_t len,
			    uint64_t off)
{
	return dev_layer_pread(d->top, r, buf, len, off);
}

/** dev_splice_ok() - whether replies of @d may splice from the backing (dev_pread_fd()). */
static inline bool dev_splice_ok(const struct device *d)
{
	return d->splice_ok;
}

static inline int dev_pread_fd(struct device *d, struct dev_req *r, uint64_t len, uint64_t off,
			       int *fd)
{
	return dev_layer_pread_fd(d->top, r, len, off, fd);
}

static inline int dev_pwrite(struct device *d, struct dev_req *r, const void *buf, uint64_t len,
			     uint64_t off)
{
	return dev_layer_pwrite(d->top, r, buf, len, off);
}

static inline int dev_zero(struct device *d, struct dev_req *r, uint64_t len, uint64_t off,
			   enum zero_fill mode)
{
	return dev_layer_zero(d->top, r, len, off, mode);
}

/**
 * dev_flush() - makes every write on @d that completed before the call
 * durable (the stack's flush, top first), and records that for
 * sfs_flush_ordered() (struct device's new_data_gen).  @r: the request
 * that owns it, or NULL for the daemon's own.  @return 0 or -errno.
 */
static inline int dev_flush(struct device *d, struct dev_req *r)
{
	uint_fast64_t g = atomic_load(&d->new_data_gen);
	int err = dev_layer_flush(d->top, r);
	uint_fast64_t f = atomic_load(&d->flushed_gen);
	while (!err && f < g && !atomic_compare_exchange_weak(&d->flushed_gen, &f, g))
		;
	return err;
}

/**
 * dev_note_new_data() - data that catalog rows will point at anew has
 * reached @d (called after the write, see struct device's new_data_gen).
 */
static inline void dev_note_new_data(struct device *d)
{
	atomic_fetch_add(&d->new_data_gen, 1);
}

/**
 * dev_trim() - trims [@off, +@len) of @d (struct dev_ops trim): space
 * freed and no longer pointed at by the durable catalog.  @return 0 or -errno.
 */
static inline int dev_trim(struct device *d, struct dev_req *r, uint64_t len, uint64_t off)
{
	return dev_layer_trim(d->top, r, len, off);
}

/**
 * dev_charge_metadata() - charges @r the metadata write of one extent newly
 * allocated on @d: the first layer from the top with a charge_metadata op
 * does it (the timing model: one block, a forced-unit-access write at
 * [disk] metadata_offset, so it bypasses the drive's write cache, as a
 * journaling file system's commit of its allocation update does: ext4's
 * jbd2 and XFS write their commit records with REQ_PREFLUSH | REQ_FUA, see
 * the Linux kernel's Documentation/block/writeback_cache_control.rst).  Nothing is
 * written to the backing and nothing is logged as a device I/O; without a
 * timing model nothing happens.  @return 0 or -errno.
 */
static inline int dev_charge_metadata(struct device *d, struct dev_req *r)
{
	return dev_layer_charge_metadata(d->top, r);
}

/**
 * dev_flash_score() - the flash layout score of one file's @n extents at
 * @v (sorted by logical offset) on @d, in @out: 0, or -EOPNOTSUPP when
 * @d's disk model has no dies (none, hdd).
 */
static inline int dev_flash_score(struct device *d, const struct layout_extent *v, size_t n,
				  struct flash_stats *out)
{
	return dev_layer_flash_score(d->top, v, n, out);
}

static inline int dev_submit_reads(struct device *d, struct dev_req *r, struct dev_aio *ios,
				   size_t n)
{
	return dev_layer_submit_reads(d->top, r, ios, n);
}

/* Base layer internals the stack needs (dev_base.c). */
int dev_base_start(struct dev_layer *base);
void dev_base_stop(struct dev_layer *base);
bool dev_base_can_queue(const struct dev_layer *base);
bool dev_base_queue_started(const struct dev_layer *base);

/**
 * dev_set_yield_fd() - the /dev/fuse descriptor whose waiting requests
 * stop the base layers' polling spins (-1: never stop early).  Set once
 * the session is mounted; for every device.
 */
void dev_set_yield_fd(int fd);

/**
 * dev_thread_no_yield() - the calling thread's polling spins no longer look
 * at /dev/fuse: a thread serving an io_uring queue (transport.c), whose
 * requests never show there, so that each check would be a poll(2) for
 * nothing (1,761 of them for 1,407 reads at QD 1, strace -c).
 */
void dev_thread_no_yield(void);

struct io_uring;

/*
 * The low bits a thread's own-ring read carries in its CQE's user_data
 * (the rest is its struct dev_aio's address): what the ring's owner
 * passes to dev_ring_read_done().
 */
#define DEV_RING_READ_TAG 2u
#define DEV_RING_TAG_MASK 7u

/**
 * dev_thread_set_ring() - the calling thread's queued reads
 * (dev_submit_reads()) go to @ring, an io_uring this thread owns, as
 * IORING_OP_READ on the backing, instead of the shared aio context and
 * its completion thread: the thread submits them with its ring's next
 * io_uring_enter and passes each completion (user_data tagged
 * DEV_RING_READ_TAG) to dev_ring_read_done().  @ring NULL stops it.  The
 * queueing rules stay the base layer's (an O_DIRECT backing,
 * device.async_reads, no timing model, and with polling on another read
 * in flight or dev_thread_ring_busy()).
 */
void dev_thread_set_ring(struct io_uring *ring);

/**
 * dev_thread_ring_busy() - whether the calling thread has other requests
 * waiting for it: then a lone read goes to its ring too rather than being
 * polled (a spin would hold those requests back).
 */
void dev_thread_ring_busy(bool busy);

/** dev_thread_ring_reads() - the calling thread's reads in flight on its ring. */
unsigned dev_thread_ring_reads(void);

/**
 * dev_ring_read_done() - the completion of a read dev_thread_set_ring()'s
 * ring carried: @user_data as the CQE has it, @res its result (bytes or
 * -errno).  Finishes a short read (the backing's end) with pread, then
 * calls the read's done().  Called by the thread that submitted it.
 */
void dev_ring_read_done(uint64_t user_data, int res);

/** mono_ns() - CLOCK_MONOTONIC in nanoseconds. */
uint64_t mono_ns(void);

#endif
