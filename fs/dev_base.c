/*
 * The base layer of a device stack: the system calls on the backing's fd.
 *
 * Reads and writes are pread/pwrite loops; on an O_DIRECT backing an
 * unaligned read goes through an aligned per-thread buffer of its own
 * (the layer depends on nothing of the I/O path).  Two kinds of
 * asynchronous reads cut the cost of a thread sleeping on its I/O:
 *
 * - Polled reads.  A read that is the only device read in flight (a queue
 *   depth of 1) on an O_DIRECT backing is submitted with io_submit on this
 *   thread's aio context and its completion looked for on the context's
 *   completion ring, in user space, for up to poll_us before the thread
 *   sleeps in io_getevents.  With fio at QD 1 on the project's virtual
 *   disk, polling the completions took the bare file from about 20,000 to
 *   24,600-29,900 8 KiB reads a second in the second round; on the same
 *   kind of machine in the third, polling in the daemon made fio's reads
 *   through scatterfs about a quarter slower (10,300-12,700 8 KiB reads
 *   a second at QD 1 against 14,200-16,600 without), so poll_us is 0 by
 *   default.
 * - Queued reads (submit_reads).  Reads submitted while others are in
 *   flight, or while FUSE requests wait for a thread, go to one shared
 *   aio context, and the caller returns at once; one completion thread
 *   reaps them (from the ring while reads are outstanding, for up to
 *   poll_us, then io_getevents) and calls each read's done().  At 16
 *   reads in flight this saved a thread sleep and wake-up per read
 *   (bench/README.md, performance).  A lone read with nothing waiting is
 *   read in the worker: handing it to the completion thread cost one
 *   thread switch more, 5 % of fio's 8 KiB reads at QD 1 and 9 % of its
 *   1 MiB sequential reads in the third round (bench/README.md, "A lone
 *   read in the worker").  async_reads = always queues every read.
 *   On a thread that serves an io_uring queue (transport.c,
 *   dev_thread_set_ring()) they go to that thread's own ring instead, as
 *   IORING_OP_READ, and the thread reaps them itself: its replies then
 *   leave with the io_uring_enter that reaps their reads, where the
 *   completion thread would have to hand each back to the ring's owner.
 *
 * Both need an O_DIRECT backing; queued reads are never started under a
 * timing model, whose replies wait for the modelled time anyway.
 *
 * The backing's end.  The backing may shrink under the mounted file system
 * (truncate(1) of a file, losetup -c of a loop device), and then a device
 * I/O past its end must fail with EIO rather than read zeros or, for a
 * write into a regular file, grow the file again with the rest of it
 * zeros.  What each kind of I/O costs to check:
 *
 * - A read into memory (pread, polled and queued aio) finds the end by
 *   itself, as a short read: nothing to add on the way, and the size is
 *   read only then.
 * - A read spliced from the backing (pread_fd) is read by libfuse, which
 *   turns a short read into a short reply; and a write or zero-fill of a
 *   regular file past its end succeeds.  These look at the size first,
 *   one fstat(2) each (BLKGETSIZE64 for a block device's zero-fill and
 *   spliced read), unless the backing's lease (below) says that no other
 *   process can have changed it.  The fstat was a fourth system call per
 *   8 KiB write (read, pwrite, writev before it) and 1.3 us of this
 *   machine's ~1 us system-call floor.
 * - A write to a block device past its end fails by itself (ENOSPC), and
 *   is turned into EIO.
 *
 * Each I/O found past the end counts in the device's past_end counter, and
 * dev_backing_seen() reports the shrink once.  A shrink between the check
 * and the I/O it guards is not seen by that I/O (a window of one system
 * call); the next I/O past the end, or the sync thread's look at the size
 * every SYNC_INTERVAL_S, sees it.  Such a write grows a regular file back
 * (seen: 1 round in 8 of four O_DIRECT writers against an O_TRUNC open),
 * zeros up to it; so once a shrink is seen, every I/O past the size it was
 * seen at fails with EIO whatever the size is later (dev_past_shrink(), a
 * load, no system call), as the shrink's report says.
 *
 * The lease.  A regular-file backing that no other open file description
 * holds gets a write lease (fcntl(2) F_SETLEASE F_WRLCK) when the device
 * starts.  While it is held, no other process has the file open or has
 * truncated it: the kernel makes another open(2) or truncate(2) of it wait
 * until we release the lease (an O_NONBLOCK open, as truncate(1) and
 * tar(1) make, fails with EAGAIN instead, once) and tells us with
 * LEASE_SIGNAL.  So a write or zero-fill under the lease skips the fstat.
 * The signal's handler clears the guard; the lease thread waits for the
 * I/Os that passed it (lease_enter() .. lease_leave()), then releases: the
 * other process's open or truncate goes on only once every write that
 * skipped the check is done, and every I/O after it looks at the size
 * again, for the rest of the mount (the lease is not taken again).  Not
 * covered: the kernel waits for the release lease-break-time seconds
 * (/proc/sys/fs/lease-break-time, 45 by default) and then revokes the
 * lease, so a guarded write still running by then (a device write of 45 s,
 * or any write of a daemon stopped that long: seen in 3 rounds of 5 with
 * SIGSTOP and lease-break-time 1) could meet the truncate and grow the
 * file back; the release then finds no lease (EAGAIN) and lease_revoked()
 * says so; a spliced read (pread_fd) is read by libfuse
 * after lease_leave(), so it has the fstat's window of one system call.
 * No lease (the fstat, as above) on a block device, a backing another
 * file description has open (a loop device over it, a second open of the
 * file), one the daemon's fsuid does not own without CAP_LEASE, with
 * /proc/sys/fs/leases-enable 0, on a file system without leases, or on
 * one where the file can change without this kernel seeing an open or a
 * truncate (FUSE, network and cluster file systems: lease_covers()).
 *
 * Neither spins while the kernel holds FUSE requests no thread has taken
 * yet (poll(2) of /dev/fuse, dev_set_yield_fd()): a spinning thread then
 * keeps a CPU from the thread that would take the next request, and from
 * the application.  Checked before a spin and every YIELD_CHECK_NS during
 * it.  On the 2-vCPU machine, fio's 8 KiB random reads at QD 16 went from
 * 12,100-15,800 a second with polling to 29,500-32,600 with it off
 * (bench/README.md, performance, second round).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/magic.h>
#include <liburing.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "device.h"
#include "units.h"

#define ZERO_BUF_SIZE MiB
#define QUEUE_EVENTS 256 /* the shared aio context's capacity, in device I/Os */

#define YIELD_CHECK_NS 10000 /* a spin looks for waiting FUSE requests this often */

/* /dev/fuse, polled for requests waiting (dev_set_yield_fd()); -1 = none. */
static atomic_int yield_fd = -1;

void dev_set_yield_fd(int fd)
{
	atomic_store(&yield_fd, fd);
}

static __thread bool no_yield; /* dev_thread_no_yield() */

void dev_thread_no_yield(void)
{
	no_yield = true;
}

/* Whether the kernel holds FUSE requests that no thread has read yet. */
static bool requests_waiting(void)
{
	if (no_yield)
		return false;
	struct pollfd p = {.fd = atomic_load_explicit(&yield_fd, memory_order_relaxed), .events = POLLIN};
	return p.fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/* Never written: the source of zeros for zero-fill. */
static char zero_buf[ZERO_BUF_SIZE] __attribute__((aligned(4096)));

/* A device's lease (see the top of the file); static: its signal may come late. */
struct lease {
	int fd;
	struct device *dev;
	atomic_bool guard; /* held and not being broken: a write may skip the size check */
	atomic_uint users; /* I/Os between lease_enter() and lease_leave() */
	bool taken;        /* on the fd, not yet released (lease_lock) */
};

struct dev_base {
	struct device *dev;
	struct lease *lease; /* NULL: never taken */
	int fd;
	bool direct;
	bool blockdev; /* its size is BLKGETSIZE64's; a write past its end fails by itself */
	uint32_t block_size;
	uint64_t poll_ns; /* a lone O_DIRECT read polls this long before sleeping; 0 = never */
	bool want_queue;  /* async_reads asked for, and possible here */
	bool queue_all;   /* async_reads = always: every read queues */
	/* Device reads in flight: lone reads in pread_polled(), and queued runs. */
	atomic_uint in_flight;
	/* queued reads */
	aio_context_t ctx;          /* 0 until dev_base_start() */
	pthread_t reaper;
	bool reaper_running;
	atomic_uint outstanding;    /* queued runs not yet completed */
	struct iocb stop;           /* an empty read whose completion stops the reaper */
};

/* dev_thread_set_ring(): this thread's own io_uring for queued reads, and its reads on it. */
static __thread struct io_uring *tl_ring;
static __thread unsigned tl_ring_reads;
static __thread bool tl_ring_busy;

void dev_thread_set_ring(struct io_uring *ring)
{
	tl_ring = ring;
}

void dev_thread_ring_busy(bool busy)
{
	tl_ring_busy = busy;
}

unsigned dev_thread_ring_reads(void)
{
	return tl_ring_reads;
}

/* This thread's aio context for polled reads (one thread reaps one context). */
static __thread aio_context_t polled_ctx;
static __thread bool polled_failed; /* io_setup failed: this thread never polls */

static pthread_key_t polled_key;
static pthread_once_t polled_once = PTHREAD_ONCE_INIT;

static void polled_ctx_free(void *p)
{
	syscall(SYS_io_destroy, (aio_context_t)(uintptr_t)p);
}

static void polled_key_init(void)
{
	pthread_key_create(&polled_key, polled_ctx_free);
}

uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * NS_PER_S + (uint64_t)t.tv_nsec;
}

static const struct dev_ops base_ops;

/*
 * This thread's 4096-aligned buffer for unaligned reads of an O_DIRECT
 * backing: the stack's own, kept per thread (no allocation per read once
 * warm) and freed when the thread exits.
 */
struct aligned_buf {
	char *p;
	size_t size;
};
static __thread struct aligned_buf *aligned;
static pthread_key_t aligned_key;
static pthread_once_t aligned_once = PTHREAD_ONCE_INIT;

static void aligned_free(void *p)
{
	struct aligned_buf *a = p;
	free(a->p);
	free(a);
}

static void aligned_key_init(void)
{
	pthread_key_create(&aligned_key, aligned_free);
}

/* At least @size bytes, 4096-aligned; NULL on ENOMEM. */
static char *aligned_get(size_t size)
{
	if (!aligned) {
		pthread_once(&aligned_once, aligned_key_init);
		aligned = calloc(1, sizeof *aligned);
		if (!aligned)
			return NULL;
		pthread_setspecific(aligned_key, aligned);
	}
	if (size <= aligned->size)
		return aligned->p;
	void *p;
	size_t want = size < 2 * MiB ? 2 * MiB : size;
	if (posix_memalign(&p, 4096, want))
		return NULL;
	free(aligned->p);
	aligned->p = p;
	aligned->size = want;
	return p;
}

static struct dev_base *base_of(struct dev_layer *l)
{
	return l->priv;
}

/*
 * An I/O found past the backing's end, which is @size bytes now: the
 * shrink reported (once) and the I/O counted.  @return -EIO.
 */
static int past_end(struct dev_base *b, uint64_t size)
{
	dev_backing_seen(b->dev, size);
	atomic_fetch_add(&b->dev->past_end, 1);
	return -EIO;
}

#define LEASE_SIGNAL (SIGRTMIN + 2)

static struct lease leases[SFS_MAX_DEVICES];
static atomic_uint nleases;     /* leases[0 .. nleases) are set up */
static int lease_efd = -1;      /* the handler wakes the lease thread */
static atomic_int lease_tid;    /* the lease thread, which LEASE_SIGNAL is sent to */
static pthread_mutex_t lease_lock = PTHREAD_MUTEX_INITIALIZER; /* taking, releasing */
static pthread_once_t lease_once = PTHREAD_ONCE_INIT;

/* LEASE_SIGNAL: another process opens or truncates si_fd's file (any lease's if none matches). */
static void lease_broken(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	int saved = errno;
	unsigned n = atomic_load(&nleases);
	bool found = false;
	for (unsigned i = 0; i < n; i++)
		found |= leases[i].fd == si->si_fd;
	for (unsigned i = 0; i < n; i++)
		if (!found || leases[i].fd == si->si_fd)
			atomic_store(&leases[i].guard, false);
	uint64_t one = 1;
	if (write(lease_efd, &one, sizeof one) < 0) {
		/* the counter cannot overflow at one a signal */
	}
	errno = saved;
}

/*
 * The kernel revoked @d's lease after lease-break-time seconds (the daemon
 * stopped or starved): the open or truncate it was holding went on while
 * writes that skipped the size check may have been in progress, and such
 * a write may have grown a cut backing back.  Said, as a shrink is.
 */
static void lease_revoked(struct device *d)
{
	char line[512];
	snprintf(line, sizeof line,
		 "scatterfs: device '%s': the kernel revoked the lease on backing %s after "
		 "/proc/sys/fs/lease-break-time (the daemon was stopped or too slow to release "
		 "it): if another process cut the backing then, writes in progress may have "
		 "grown it back; check it",
		 d->name, d->path);
	dev_report(line);
}

/* Releases @l once its guard is down and the I/Os that passed it are done. */
static void lease_release(struct lease *l)
{
	pthread_mutex_lock(&lease_lock);
	if (l->taken && !atomic_load(&l->guard)) {
		while (atomic_load(&l->users))
			nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
		/* EAGAIN: no lease left to release, the kernel took it away */
		if (fcntl(l->fd, F_SETLEASE, F_UNLCK) && errno == EAGAIN)
			lease_revoked(l->dev);
		l->taken = false;
		atomic_store(&l->dev->backing_leased, false);
	}
	pthread_mutex_unlock(&lease_lock);
}

/* The lease thread: LEASE_SIGNAL's target; releases the leases whose guard the handler cleared. */
static void *lease_main(void *p)
{
	(void)p;
	sigset_t only;
	sigfillset(&only);
	sigdelset(&only, LEASE_SIGNAL);
	pthread_sigmask(SIG_SETMASK, &only, NULL);
	prctl(PR_SET_NAME, "sfs-lease", 0, 0, 0);
	atomic_store(&lease_tid, (int)syscall(SYS_gettid));
	for (;;) {
		uint64_t v;
		if (read(lease_efd, &v, sizeof v) < 0 && errno != EINTR)
			return NULL;
		for (unsigned i = 0; i < atomic_load(&nleases); i++)
			lease_release(&leases[i]);
	}
}

static void lease_init(void)
{
	struct sigaction sa = {.sa_sigaction = lease_broken, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigemptyset(&sa.sa_mask);
	pthread_t t;
	lease_efd = eventfd(0, EFD_CLOEXEC);
	if (lease_efd < 0)
		return;
	if (sigaction(LEASE_SIGNAL, &sa, NULL) || pthread_create(&t, NULL, lease_main, NULL)) {
		close(lease_efd);
		lease_efd = -1;
		return;
	}
	pthread_detach(t);
	while (!atomic_load(&lease_tid))
		nanosleep(&(struct timespec){.tv_nsec = 100000}, NULL);
}

/*
 * Whether @fd's file is on a local file system, where every open and
 * truncate of it passes this kernel's break_lease(): ext2/3/4, XFS, Btrfs,
 * F2FS, tmpfs, ramfs.  Not FUSE (virtiofs, sshfs: the server cuts the file
 * without breaking our lease, which the kernel grants all the same), NFS,
 * SMB, 9p, Ceph, GFS2/OCFS2 (another host or node), nor one not known here.
 */
static bool lease_covers(int fd)
{
	struct statfs sf;
	if (fstatfs(fd, &sf))
		return false;
	switch ((unsigned long)sf.f_type) {
	case EXT4_SUPER_MAGIC:
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case F2FS_SUPER_MAGIC:
	case TMPFS_MAGIC:
	case RAMFS_MAGIC:
		return true;
	default:
		return false;
	}
}

/*
 * Takes a write lease on @b's regular-file backing, if it can (see the top
 * of the file) and its file system is local (lease_covers()); else leaves
 * b->lease NULL and every I/O checks the size.
 */
static void lease_take(struct dev_base *b)
{
	if (b->blockdev || !lease_covers(b->fd) || pthread_once(&lease_once, lease_init) ||
	    lease_efd < 0)
		return;
	pthread_mutex_lock(&lease_lock);
	unsigned i = atomic_load(&nleases);
	struct f_owner_ex own = {.type = F_OWNER_TID, .pid = atomic_load(&lease_tid)};
	if (i == SFS_MAX_DEVICES || fcntl(b->fd, F_SETSIG, LEASE_SIGNAL))
		goto out;
	struct lease *l = &leases[i];
	*l = (struct lease){.fd = b->fd, .dev = b->dev};
	atomic_store(&nleases, i + 1); /* the handler knows the fd before the lease exists */
	if (fcntl(b->fd, F_SETLEASE, F_WRLCK))
		goto out; /* EAGAIN (open elsewhere), EACCES (not ours), EINVAL (no leases) */
	/* F_SETLEASE made the whole process the owner: until now a break
	 * signalled any thread (SA_RESTART); from now on the lease thread. */
	fcntl(b->fd, F_SETOWN_EX, &own);
	l->taken = true;
	b->lease = l;
	atomic_store(&l->guard, true);
	/* A break that began before the guard went up: its signal found the
	 * guard down already, and F_GETLEASE shows the lease's target now. */
	if (fcntl(b->fd, F_GETLEASE) != F_WRLCK)
		atomic_store(&l->guard, false);
	else
		atomic_store(&b->dev->backing_leased, true);
out:
	pthread_mutex_unlock(&lease_lock);
	if (b->lease && !atomic_load(&b->lease->guard))
		lease_release(b->lease);
}

/*
 * Whether @b's lease guards the I/O about to be made: then the caller
 * skips check_end() and calls lease_leave() once the I/O is done.
 */
static bool lease_enter(struct dev_base *b)
{
	struct lease *l = b->lease;
	if (!l || !atomic_load_explicit(&l->guard, memory_order_relaxed))
		return false;
	atomic_fetch_add(&l->users, 1);
	if (atomic_load(&l->guard))
		return true;
	atomic_fetch_sub(&l->users, 1);
	return false;
}

static void lease_leave(struct dev_base *b, bool entered)
{
	if (entered)
		atomic_fetch_sub(&b->lease->users, 1);
}

/*
 * Before an I/O the backing would not refuse by itself: 0 when [.., @end)
 * is within the backing now (or its size cannot be read: the I/O says
 * what is wrong), else past_end()'s -EIO.
 */
static int check_end(struct dev_base *b, uint64_t end)
{
	uint64_t size;
	if (dev_backing_size(b->fd, b->blockdev, &size))
		return 0;
	if (end > size || dev_past_shrink(b->dev, end))
		return past_end(b, size);
	if (size != atomic_load_explicit(&b->dev->backing_bytes, memory_order_relaxed))
		dev_backing_seen(b->dev, size);
	return 0;
}

static int pwrite_all(int fd, const char *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/*
 * Reads [off, off+len) of the backing into @buf.  The allocator never
 * places an I/O past the end of the backing as it was mounted, so the end
 * of the file (a read of 0 bytes) means it shrank since: -EIO, unless its
 * size says it has grown back in between (then the read is tried again).
 */
static int pread_all(struct dev_base *b, char *buf, size_t len, uint64_t off)
{
	bool retried = false;
	while (len) {
		ssize_t n = pread(b->fd, buf, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) {
			uint64_t size;
			if (dev_backing_size(b->fd, b->blockdev, &size)) {
				atomic_fetch_add(&b->dev->past_end, 1);
				return -EIO;
			}
			if (size < off + len || retried)
				return past_end(b, size);
			retried = true;
			continue;
		}
		buf += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/*
 * The completion ring the kernel maps at an aio context's address (fs/aio.c,
 * struct aio_ring): events are added at tail in interrupt context and taken
 * from head, so a thread can see its read complete without sleeping.
 */
struct aio_ring_hdr {
	unsigned id, nr, head, tail, magic, compat_features, incompat_features, header_length;
	struct io_event events[];
};
#define AIO_RING_MAGIC_VALUE 0xa10a10a1u

/* Whether the completion ring of @ctx has the layout struct aio_ring_hdr describes. */
static bool ring_usable(aio_context_t ctx)
{
	const struct aio_ring_hdr *ring = (const struct aio_ring_hdr *)ctx;
	return ring->magic == AIO_RING_MAGIC_VALUE && ring->incompat_features == 0;
}

/*
 * Takes up to @max completions from the ring of @ctx into @ev without a
 * system call (ring_usable() contexts only; one thread reaps a context).
 * @return how many were taken.
 */
static long ring_take(aio_context_t ctx, struct io_event *ev, long max)
{
	struct aio_ring_hdr *ring = (struct aio_ring_hdr *)ctx;
	unsigned head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
	unsigned tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
	long n = 0;
	for (; head != tail && n < max; head = (head + 1) % ring->nr)
		ev[n++] = ring->events[head % ring->nr];
	if (n)
		__atomic_store_n(&ring->head, head, __ATOMIC_RELEASE);
	return n;
}

/* An aio read of [off, off+len) of the backing into @buf; @data comes back in its io_event. */
static struct iocb read_iocb(int fd, void *buf, uint64_t len, uint64_t off, void *data)
{
	return (struct iocb){.aio_data = (uint64_t)(uintptr_t)data,
			     .aio_lio_opcode = IOCB_CMD_PREAD,
			     .aio_fildes = (uint32_t)fd,
			     .aio_buf = (uint64_t)(uintptr_t)buf,
			     .aio_nbytes = len,
			     .aio_offset = (int64_t)off};
}

/* A spin-wait hint to the CPU (x86 PAUSE); nothing elsewhere. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/*
 * Reads [off, off+len) of the O_DIRECT backing into @buf with io_submit on
 * this thread's aio context, then looks for the completion on the ring for
 * up to poll_ns, or until another device read is in flight, before
 * sleeping in io_getevents.  Returns 0, -errno from the read, or 1 when
 * nothing was submitted (no aio here): the caller reads it another way.
 */
static int aio_read_polled(struct dev_base *b, char *buf, size_t len, uint64_t off)
{
	if (!polled_ctx) {
		if (syscall(SYS_io_setup, 1, &polled_ctx) != 0) {
			polled_ctx = 0;
			polled_failed = true;
			return 1;
		}
		pthread_once(&polled_once, polled_key_init);
		pthread_setspecific(polled_key, (void *)(uintptr_t)polled_ctx);
	}
	struct iocb cb = read_iocb(b->fd, buf, len, off, NULL);
	struct iocb *cbs[1] = {&cb};
	if (syscall(SYS_io_submit, polled_ctx, 1, cbs) != 1)
		return 1;
	atomic_fetch_add(&b->dev->counters.polled_reads, 1);

	struct io_event ev;
	bool got = false;
	if (ring_usable(polled_ctx) && !requests_waiting()) {
		uint64_t now = mono_ns(), until = now + b->poll_ns, check = now + YIELD_CHECK_NS;
		do {
			if (ring_take(polled_ctx, &ev, 1)) {
				atomic_fetch_add(&b->dev->counters.polled_completions, 1);
				got = true;
				break;
			}
			cpu_relax();
			now = mono_ns();
			if (now >= check) {
				if (requests_waiting())
					break;
				check = now + YIELD_CHECK_NS;
			}
			/* another read now waits too: leave the CPU to it */
		} while (atomic_load_explicit(&b->in_flight, memory_order_relaxed) == 1 && now < until);
	}
	while (!got) {
		long n = syscall(SYS_io_getevents, polled_ctx, 1, 1, &ev, NULL);
		if (n < 0 && errno != EINTR)
			return -errno;
		got = n == 1;
	}
	if (ev.res < 0)
		return (int)ev.res;
	if ((size_t)ev.res < len) /* short (at the backing's end): the rest as pread_all() */
		return pread_all(b, buf + ev.res, len - (size_t)ev.res, off + (uint64_t)ev.res);
	return 0;
}

/*
 * pread_all() of [off, off+len) of the O_DIRECT backing into @buf, polled
 * (aio_read_polled) when it is the only device read in flight.  With
 * polling off, while other reads are in flight, or without aio, it is
 * pread_all().  Returns 0 or -errno.
 */
static int pread_polled(struct dev_base *b, char *buf, size_t len, uint64_t off)
{
	int err = 1;
	/* Counted in flight either way: a read that comes meanwhile queues
	 * (dev_base_can_queue()) rather than wait for a worker. */
	if (atomic_fetch_add(&b->in_flight, 1) == 0 && b->poll_ns && !polled_failed)
		err = aio_read_polled(b, buf, len, off);
	if (err == 1)
		err = pread_all(b, buf, len, off);
	atomic_fetch_sub(&b->in_flight, 1);
	return err;
}

static int base_pread(struct dev_layer *l, struct dev_req *r, void *dst, uint64_t len,
		      uint64_t off)
{
	struct dev_base *b = base_of(l);
	/* A read stops at the end by itself, unless the backing grew back. */
	if (dev_past_shrink(b->dev, off + len))
		return past_end(b, atomic_load(&b->dev->backing_bytes));
	if (!b->direct)
		return pread_all(b, dst, len, off);
	/* O_DIRECT: straight into @dst when aligned, else through an aligned buffer. */
	uint64_t bs = b->block_size;
	if (off % bs == 0 && len % bs == 0 && (uintptr_t)dst % 4096 == 0)
		return pread_polled(b, dst, len, off);
	uint64_t a = round_down(off, bs), e = round_up(off + len, bs);
	char *buf = aligned_get(e - a);
	if (!buf)
		return -ENOMEM;
	int err = pread_polled(b, buf, e - a, a);
	if (!err)
		memcpy(dst, buf + (off - a), len);
	return err;
}

static int base_pread_fd(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off,
			 int *fd)
{
	struct dev_base *b = base_of(l);
	if (b->direct)
		return -EOPNOTSUPP; /* a spliced O_DIRECT read would need aligned pipe pages */
	/* libfuse would send a short reply at the end: look first. */
	bool leased = lease_enter(b);
	int err = leased ? 0 : check_end(b, off + len);
	lease_leave(b, leased);
	if (err)
		return err;
	*fd = b->fd;
	return 0;
}

static int base_pwrite(struct dev_layer *l, struct dev_req *r, const void *buf, uint64_t len,
		       uint64_t off)
{
	struct dev_base *b = base_of(l);
	/* A block device grown back (losetup -c) has no check_end() below. */
	if (dev_past_shrink(b->dev, off + len))
		return past_end(b, atomic_load(&b->dev->backing_bytes));
	bool leased = lease_enter(b);
	int err = b->blockdev || leased ? 0 : check_end(b, off + len);
	if (!err)
		err = pwrite_all(b->fd, buf, len, off);
	lease_leave(b, leased);
	/* A block device refuses a write past its end by itself. */
	if (err == -ENOSPC && b->blockdev && check_end(b, off + len))
		err = -EIO;
	return err;
}

/* base_zero() under the lease, or after the size check. */
static int zero_range(struct dev_base *b, uint64_t len, uint64_t off, enum zero_fill mode)
{
	int err;
	if (mode == ZERO_FILL_FALLOCATE) {
		if (fallocate(b->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, (off_t)off,
			      (off_t)len) == 0)
			return 0;
		if (errno != EOPNOTSUPP && errno != ENOSYS)
			return -errno;
		/* The backing cannot do it (a block device without write-zeroes). */
	}
	while (len) {
		size_t n = len < ZERO_BUF_SIZE ? (size_t)len : ZERO_BUF_SIZE;
		err = pwrite_all(b->fd, zero_buf, n, off);
		if (err == -ENOSPC && b->blockdev && check_end(b, off + n))
			err = -EIO;
		if (err)
			return err;
		off += n;
		len -= n;
	}
	return 0;
}

static int base_zero(struct dev_layer *l, struct dev_req *r, uint64_t len, uint64_t off,
		     enum zero_fill mode)
{
	struct dev_base *b = base_of(l);
	if (mode == ZERO_FILL_NONE)
		return 0;
	/* Past a regular file's end, both ways succeed (and a block device's
	 * ZERO_RANGE stops at its end with KEEP_SIZE): look first. */
	bool leased = lease_enter(b);
	int err = leased ? 0 : check_end(b, off + len);
	if (!err)
		err = zero_range(b, len, off, mode);
	lease_leave(b, leased);
	return err;
}

static int base_flush(struct dev_layer *l, struct dev_req *r)
{
	return fdatasync(base_of(l)->fd) ? -errno : 0;
}

/* One completed run (res: bytes or -errno): finish a short read, then tell its owner. */
static void queued_done(struct dev_base *b, struct dev_aio *io, int64_t res)
{
	if (res >= 0 && (uint64_t)res < io->cb.aio_nbytes) { /* short: at the backing's end */
		int e = pread_all(b, (char *)(uintptr_t)io->cb.aio_buf + res,
				  io->cb.aio_nbytes - (uint64_t)res,
				  (uint64_t)io->cb.aio_offset + (uint64_t)res);
		res = e ? e : (int64_t)io->cb.aio_nbytes;
	}
	atomic_fetch_sub(&b->in_flight, 1);
	atomic_fetch_sub(&b->outstanding, 1);
	io->done(io, res);
}

/*
 * Queued reads on the calling thread's own ring (dev_thread_set_ring()):
 * prepared now, submitted with the ring's next io_uring_enter.  They
 * count in in_flight (the queueing rule) but not in outstanding (the
 * reaper's): the thread reaps them itself.  An SQE the ring cannot give,
 * even after submitting what it holds, is read here.
 */
static void ring_submit_reads(struct dev_base *b, struct dev_aio *ios, size_t n)
{
	uint64_t bs = b->block_size;
	for (size_t i = 0; i < n; i++) {
		struct dev_aio *io = &ios[i];
		uint64_t a = round_down(io->off, bs), e = round_up(io->off + io->len, bs);
		io->cb = read_iocb(b->fd, io->buf - (io->off - a), e - a, a, io);
		io->base = b;
		atomic_fetch_add(&b->in_flight, 1);
		struct io_uring_sqe *sqe = io_uring_get_sqe(tl_ring);
		if (!sqe && io_uring_submit(tl_ring) >= 0)
			sqe = io_uring_get_sqe(tl_ring);
		if (!sqe) {
			int err = pread_all(b, (char *)(uintptr_t)io->cb.aio_buf, e - a, a);
			atomic_fetch_sub(&b->in_flight, 1);
			io->done(io, err ? err : (int64_t)(e - a));
			continue;
		}
		io_uring_prep_read(sqe, b->fd, (void *)(uintptr_t)io->cb.aio_buf, (unsigned)(e - a),
				   a);
		io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)io | DEV_RING_READ_TAG);
		tl_ring_reads++;
	}
}

void dev_ring_read_done(uint64_t user_data, int res)
{
	struct dev_aio *io = (struct dev_aio *)(uintptr_t)(user_data & ~(uint64_t)DEV_RING_TAG_MASK);
	struct dev_base *b = io->base;
	int64_t r = res;
	tl_ring_reads--;
	if (r >= 0 && (uint64_t)r < io->cb.aio_nbytes) { /* short: at the backing's end */
		int e = pread_all(b, (char *)(uintptr_t)io->cb.aio_buf + r,
				  io->cb.aio_nbytes - (uint64_t)r,
				  (uint64_t)io->cb.aio_offset + (uint64_t)r);
		r = e ? e : (int64_t)io->cb.aio_nbytes;
	}
	atomic_fetch_sub(&b->in_flight, 1);
	io->done(io, r);
}

static int base_submit_reads(struct dev_layer *l, struct dev_req *r, struct dev_aio *ios,
			     size_t n)
{
	struct dev_base *b = base_of(l);
	if (!b->ctx)
		return -EOPNOTSUPP;
	struct iocb *cbp[64];
	if (n > 64)
		return -EOPNOTSUPP;
	for (size_t i = 0; i < n; i++)
		if (dev_past_shrink(b->dev, ios[i].off + ios[i].len))
			return -EOPNOTSUPP; /* base_pread() says EIO */
	if (tl_ring) {
		ring_submit_reads(b, ios, n);
		return 0;
	}
	uint64_t bs = b->block_size;
	for (size_t i = 0; i < n; i++) {
		struct dev_aio *io = &ios[i];
		uint64_t a = round_down(io->off, bs), e = round_up(io->off + io->len, bs);
		io->cb = read_iocb(b->fd, io->buf - (io->off - a), e - a, a, io);
		cbp[i] = &io->cb;
	}
	atomic_fetch_add(&b->in_flight, (unsigned)n);
	atomic_fetch_add(&b->outstanding, (unsigned)n);
	long k = n ? syscall(SYS_io_submit, b->ctx, (long)n, cbp) : 0;
	/* What io_submit did not take (queue full, an error) is read here. */
	for (size_t i = k < 0 ? 0 : (size_t)k; i < n; i++) {
		struct iocb *cb = &ios[i].cb;
		int e = pread_all(b, (char *)(uintptr_t)cb->aio_buf, cb->aio_nbytes,
				  (uint64_t)cb->aio_offset);
		queued_done(b, &ios[i], e ? e : (int64_t)cb->aio_nbytes);
	}
	return 0;
}

/* The completion thread: reaps until the stop read has completed and nothing is outstanding. */
static void *reaper_main(void *p)
{
	struct dev_base *b = p;
	struct io_event ev[64];
	bool stop = false, spin = b->poll_ns && ring_usable(b->ctx);
	prctl(PR_SET_NAME, "sfs-reads", 0, 0, 0);
	while (!stop || atomic_load(&b->outstanding)) {
		long n = 0;
		if (spin && !requests_waiting()) {
			uint64_t now = mono_ns(), until = now + b->poll_ns, check = now + YIELD_CHECK_NS;
			while (!(n = ring_take(b->ctx, ev, 64)) && atomic_load(&b->outstanding) &&
			       (now = mono_ns()) < until) {
				cpu_relax();
				if (now >= check) {
					if (requests_waiting())
						break;
					check = now + YIELD_CHECK_NS;
				}
			}
		}
		if (!n)
			n = syscall(SYS_io_getevents, b->ctx, 1, 64, ev, NULL);
		if (n < 0 && errno != EINTR) {
			perror("scatterfs: io_getevents");
			abort(); /* reads would never be answered */
		}
		for (long i = 0; i < n; i++) {
			struct iocb *cb = (struct iocb *)(uintptr_t)ev[i].obj;
			if (cb == &b->stop)
				stop = true;
			else
				queued_done(b, (struct dev_aio *)(uintptr_t)cb->aio_data, ev[i].res);
		}
	}
	return NULL;
}

int dev_base_start(struct dev_layer *l)
{
	if (l->ops != &base_ops)
		return 0;
	struct dev_base *b = base_of(l);
	lease_take(b);
	if (!b->want_queue)
		return 0;
	if (syscall(SYS_io_setup, QUEUE_EVENTS, &b->ctx) != 0) {
		b->ctx = 0;
		return -errno;
	}
	int err = -pthread_create(&b->reaper, NULL, reaper_main, b);
	if (err) {
		syscall(SYS_io_destroy, b->ctx);
		b->ctx = 0;
		return err;
	}
	b->reaper_running = true;
	return 0;
}

void dev_base_stop(struct dev_layer *l)
{
	if (l->ops != &base_ops)
		return;
	struct dev_base *b = base_of(l);
	if (b->lease) {
		atomic_store(&b->lease->guard, false);
		lease_release(b->lease);
	}
	if (!b->reaper_running)
		return;
	/* An empty read completes at once; the reaper stops once it has seen
	 * it and every read submitted before is answered. */
	b->stop = read_iocb(b->fd, zero_buf, 0, 0, NULL);
	struct iocb *cbs[1] = {&b->stop};
	while (syscall(SYS_io_submit, b->ctx, 1, cbs) != 1) {
		if (errno != EAGAIN && errno != EINTR) {
			/* Cannot happen with a live context; leave the thread (the process exits). */
			perror("scatterfs: stopping queued reads: io_submit");
			return;
		}
		usleep(1000);
	}
	pthread_join(b->reaper, NULL);
	b->reaper_running = false;
	syscall(SYS_io_destroy, b->ctx);
	b->ctx = 0;
}

bool dev_base_queue_started(const struct dev_layer *l)
{
	return l->ops == &base_ops && ((const struct dev_base *)l->priv)->ctx;
}

bool dev_base_can_queue(const struct dev_layer *l)
{
	if (l->ops != &base_ops)
		return false;
	const struct dev_base *b = l->priv;
	if (!b->ctx)
		return false;
	/* async_reads = always, or another device read in flight: queue, so
	 * both wait at once. */
	if (b->queue_all || atomic_load(&((struct dev_base *)b)->in_flight))
		return true;
	/* A ring thread's queued read costs it nothing (its own io_uring
	 * answers); with polling on, a lone read polls unless the ring is busy. */
	if (tl_ring)
		return !b->poll_ns || tl_ring_busy;
	/* On /dev/fuse a queued read is answered by the completion thread: one
	 * hand-off more than reading in the worker.  A lone read is read in the
	 * worker (polled if poll_us says so) unless requests wait for a worker:
	 * bench/README.md, "A lone read in the worker". */
	return !b->poll_ns && requests_waiting();
}

static const struct dev_ops base_ops = {
	.pread = base_pread,
	.pread_fd = base_pread_fd,
	.pwrite = base_pwrite,
	.zero = base_zero,
	.flush = base_flush,
	.submit_reads = base_submit_reads,
};

/*
 * Over @l->dev's fd.  Under a timing model (a->timed) a reply waits for the
 * modelled time anyway: polling and queueing would only spend CPU.
 */
static int base_open(struct dev_layer *l, struct dev_layer_args *a, char *err, size_t errlen)
{
	struct dev_base *b = base_of(l);
	struct device *d = l->dev;
	uint32_t poll_us = a->timed ? 0 : a->poll_us;

	b->dev = d;
	b->fd = d->fd;
	b->direct = d->direct;
	b->blockdev = d->blockdev;
	b->block_size = d->block_size;
	b->poll_ns = d->direct ? (uint64_t)poll_us * NS_PER_US : 0;
	b->want_queue = d->direct && a->async_reads != ASYNC_READS_OFF && !a->timed;
	b->queue_all = a->async_reads == ASYNC_READS_ALWAYS;
	/* A spliced O_DIRECT read would need aligned pipe pages. */
	l->splice = !d->direct;
	return 0;
}

static const struct dev_layer_type base_layer = {
	.cfg = {.name = "base", .order = 4, .flags = CONFIG_LAYER_BOTTOM},
	.ops = &base_ops,
	.priv_size = sizeof(struct dev_base),
	.open = base_open,
};
DEV_LAYER_REGISTER(base_layer);
