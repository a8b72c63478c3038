/*
 * The daemon's side of the FUSE transport (transport.h), behind libfuse
 * 3.14's fuse_session_custom_io(): libfuse still reads and decodes every
 * request and builds every reply; these callbacks decide where the bytes
 * go.
 *
 * The INIT exchange.  libfuse 3.14 knows protocol 7.38 and replies to INIT
 * with the flags it knows.  The read callback notes the INIT request (its
 * unique and the 64-bit flags the kernel offers); the writev callback
 * recognizes the reply by that unique and adds, where the kernel offered
 * them, FUSE_DIRECT_IO_ALLOW_MMAP (shared mmap of FOPEN_DIRECT_IO files,
 * Linux 6.6) and FUSE_OVER_IO_URING (Linux 6.14), in flags2 under
 * FUSE_INIT_EXT as libfuse itself writes the high bits.  The protocol
 * minor stays libfuse's: the kernel reads these flags whatever the minor
 * (fs/fuse/inode.c, process_init_reply()).
 *
 * FUSE over io_uring (Documentation/filesystems/fuse-io-uring.rst,
 * fs/fuse/dev_uring.c).  The kernel keeps one queue per possible CPU and
 * uses the ring only once every queue has an entry registered; a request
 * goes to the queue of the CPU its caller runs on.  An entry is two
 * buffers: a header (struct fuse_uring_req_header: the fuse_in_header, the
 * request's first argument when it has a size, and the payload size) and
 * a payload of max_write bytes or more (the rest of the request, and on
 * the way back the reply after its fuse_out_header).  REGISTER hands an
 * entry to the kernel; a request arrives as the completion of that
 * command; COMMIT_AND_FETCH returns the reply and hands the entry back in
 * one submission, so a thread that waits for its next request in the same
 * io_uring_enter makes one system call a request where /dev/fuse takes
 * two (read and writev).  FORGETs and INTERRUPTs keep coming through
 * /dev/fuse, and notifications leave through it: the /dev/fuse loop keeps
 * running beside the ring.
 *
 * Each ring thread owns one io_uring and its entries of one queue.  A
 * thread blocked in a request (a disk model's wait, an fsync) holds the
 * requests of its entries back, so a queue's later threads hold one entry
 * each, as the /dev/fuse workers hold one request; a queue whose threads
 * are all busy starts another (up to max_threads over all queues).  A
 * queue's first thread holds RING_ENTRIES entries where reads can queue
 * (an O_DIRECT backing, device.async_reads, no timing model:
 * dev_may_queue()), and else one.  Its reads go to its own ring
 * (IORING_OP_READ on the backing, dev_thread_set_ring()): the handler
 * returns with the read in flight, the thread takes its next request, and
 * the io_uring_enter that reaps a read's completion also takes the
 * commit of its reply, libfuse having built the reply as for any other
 * (queued_read_finish(), io_queue.c).  So one thread keeps many READs in
 * flight, and at QD 16 a request costs 0.42-0.76 system calls and
 * 0.33-0.56 voluntary context switches where one entry a thread, each
 * reading synchronously, cost 2.08-2.19 and 0.96-1.00 (bench/README.md,
 * third round).  Those reads hold their inodes' pins and log holds,
 * which only this thread releases, so it never sleeps on another thread
 * while they are in flight: it drains them (transport_drain()) before any
 * request other than a READ, and a READ's handler before it would wait for
 * an inode's lock or a log barrier (io.c, dispatch.c).  A lone read
 * (nothing else in flight, no other request waiting for the thread) is
 * still polled as on /dev/fuse.  Threads are not pinned to their queue's
 * CPU (libfuse 3.18 pins them): one submitter, fio at QD 16, sends every
 * request to one queue, and its threads pinned to one CPU made
 * 5,640-8,883 reads a second where unpinned ones made 7,396-15,701 (three
 * alternating rounds, shared machine).  A ring thread does not poll
 * /dev/fuse while it spins (dev_thread_no_yield()).  A request becomes
 * the byte stream fuse_session_process_buf() reads from /dev/fuse: the
 * payload buffer starts a page into the entry's allocation and the
 * fuse_in_header and the first argument are copied right before it, so
 * a WRITE's data stays page-aligned for O_DIRECT backings (as loop.c
 * arranges for /dev/fuse) and nothing else is copied.
 *
 * Replies find their entry by unique: the thread that serves the request
 * replies itself, and its commit waits for the thread's next
 * io_uring_enter; a reply from another thread fills the entry's buffers and wakes the
 * owner through an eventfd the owner polls on its ring, so every command
 * of an entry is submitted by its owner (the kernel runs an entry's
 * request copy-out as task work of the thread that submitted its command).
 * Replies with no ring entry (INIT, an INTERRUPT's, notifications) go to
 * /dev/fuse.  On unmount the kernel completes every entry with ENOTCONN;
 * on a signal or daemon exit transport_stop() wakes each thread through
 * its eventfd; a thread answers the reads it has in flight before it
 * ends, and closing its ring cancels its entries.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "fuse_wire.h"
#include "sfs.h"
#include "transport.h"

#define RING_ENTRIES  16 /* entries of a queue's first thread when reads can queue */
#define RING_SQ_DEPTH 64 /* commits, the eventfd poll, device reads (more are submitted early) */
#define RING_CQ_DEPTH 256
#define TAG_EVENT     1 /* user_data of the eventfd poll (entries use their address) */
#define IN_HEADER     sizeof(struct fuse_in_header)
#define OUT_HEADER    sizeof(struct fuse_out_header)

struct transport;
struct ring_thread;

struct ring_queue {
	unsigned qid;
	atomic_uint threads; /* started */
	/* Threads waiting for the kernel (in io_uring_enter, or about to be). */
	atomic_int idle;
};

/* One entry of a queue: its buffers with the kernel, and the request it holds. */
struct ring_entry {
	struct ring_thread *t; /* its owner, which submits all its commands */
	struct fuse_uring_req_header *hdr;
	char *payload;		     /* a page past hdr */
	struct iovec iov[2];	     /* REGISTER's buffers */
	atomic_uint_fast64_t unique; /* the request being served; 0 = none */
	uint64_t commit_id;	     /* owner only */
	int last_cmd;		     /* owner only: for a resubmit after EINTR/EAGAIN */
	atomic_bool commit_pending;  /* another thread filled the reply */
	bool live;		     /* owner only: with the kernel (not ended by ENOTCONN...) */
	struct ring_entry *next_ready; /* owner only: a request reaped while draining */
};

/* One thread, its io_uring and its entries of queue q. */
struct ring_thread {
	struct ring_thread *next; /* transport's list; never unlinked before transport_stop() */
	struct transport *tp;
	struct ring_queue *q;
	pthread_t thread;
	struct io_uring ring;
	bool have_ring;
	int efd;    /* other threads' replies and stop; -1 = none */
	char *base; /* per entry: the header page, then the payload */
	unsigned nent, live;
	struct ring_entry *ent;
	struct ring_entry *serving; /* owner only: the entry whose request is in its handler */
	struct ring_entry *ready, **ready_tail; /* owner only: requests reaped while draining */
	bool stop_seen;			       /* owner only */
	int start_err;			       /* -errno of the setup (under tp->lock) */
	bool started;			       /* setup reported (under tp->lock) */
};

struct transport {
	struct sfs *fs;
	enum sfs_transport want;
	int fd;				  /* /dev/fuse */
	atomic_uint_fast64_t init_unique; /* the INIT request's, until its reply */
	uint64_t offered;		  /* 64-bit INIT flags the kernel offered */
	bool ring_chosen;		  /* at INIT: ask for the ring */
	atomic_bool ring_on;		  /* the queues are registered */
	size_t payload_size;
	long page;
	unsigned first_entries; /* a queue's first thread's entries (later threads: one) */
	unsigned nq, per_queue_max;
	struct ring_queue *queues;
	pthread_mutex_t lock; /* starting threads, and the list's head */
	pthread_cond_t cond;
	_Atomic(struct ring_thread *) threads; /* pushed at the head, read without the lock */
	atomic_bool stopping;
	atomic_uint_fast64_t n_ring, n_dev;
};

static __thread struct ring_thread *tl_self; /* the ring thread running here, if any */

static struct ring_thread *ring_thread_new(struct transport *tp, struct ring_queue *q);

int transport_parse(const char *s, enum sfs_transport *t)
{
	if (strcmp(s, "auto") == 0)
		*t = TRANSPORT_AUTO;
	else if (strcmp(s, "uring") == 0)
		*t = TRANSPORT_URING;
	else if (strcmp(s, "dev") == 0)
		*t = TRANSPORT_DEV;
	else
		return -EINVAL;
	return 0;
}

#define ENABLE_URING "/sys/module/fuse/parameters/enable_uring"

int transport_check(enum sfs_transport t, char *err, size_t errlen)
{
	if (t != TRANSPORT_URING)
		return 0;
	/* Opening /dev/fuse loads the fuse module, whose parameters we read. */
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	FILE *f = fopen(ENABLE_URING, "re");
	if (!f) {
		struct utsname u;
		uname(&u);
		snprintf(
		    err, errlen,
		    "-o transport=uring: this kernel (Linux %s) has no FUSE over io_uring (%s "
		    "is missing: it takes Linux 6.14 or later built with CONFIG_FUSE_IO_URING); "
		    "use transport=auto or transport=dev",
		    u.release, ENABLE_URING);
		return -ENOTSUP;
	}
	int c = fgetc(f);
	fclose(f);
	if (c != 'Y') {
		snprintf(err, errlen,
			 "-o transport=uring: FUSE over io_uring is disabled (%s is N); enable it "
			 "as root with: echo Y > %s",
			 ENABLE_URING, ENABLE_URING);
		return -ENOTSUP;
	}
	struct io_uring r;
	struct io_uring_params p = {.flags = IORING_SETUP_SQE128};
	int e = io_uring_queue_init_params(2, &r, &p);
	if (e < 0) {
		snprintf(err, errlen,
			 "-o transport=uring: io_uring is not available to this process (%s; see "
			 "the sysctl kernel.io_uring_disabled)",
			 strerror(-e));
		return -ENOTSUP;
	}
	io_uring_queue_exit(&r);
	return 0;
}

/* The number of possible CPUs, the kernel's number of ring queues. */
static unsigned possible_cpus(void)
{
	unsigned n = 0;
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	char line[256];
	if (f && fgets(line, sizeof line, f)) {
		/* "0-3" or "0,2-5": one past the highest number */
		for (char *s = line; *s;) {
			char *end;
			unsigned long v = strtoul(s, &end, 10);
			if (end == s)
				break;
			if (v + 1 > n)
				n = (unsigned)v + 1;
			s = end;
			while (*s == '-' || *s == ',' || *s == '\n')
				s++;
		}
	}
	if (f)
		fclose(f);
	if (!n) {
		long c = sysconf(_SC_NPROCESSORS_CONF);
		n = c > 0 ? (unsigned)c : 1;
	}
	return n;
}

/* Fills @sqe with FUSE ring command @cmd of entry @e. */
static void prep_cmd(struct io_uring_sqe *sqe, struct ring_entry *e, int cmd, uint64_t commit_id)
{
	/* An SQE128 slot: the command area runs past struct io_uring_sqe. */
	memset(sqe, 0, 2 * sizeof *sqe);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = e->t->tp->fd;
	sqe->cmd_op = (__u32)cmd;
	sqe->user_data = (__u64)(uintptr_t)e;
	if (cmd == FUSE_IO_URING_CMD_REGISTER) {
		sqe->addr = (__u64)(uintptr_t)e->iov;
		sqe->len = 2;
	}
	struct fuse_uring_cmd_req *req = (struct fuse_uring_cmd_req *)sqe->cmd;
	req->qid = (uint16_t)e->t->q->qid;
	req->commit_id = commit_id;
	e->last_cmd = cmd;
}

/* Owner only: an SQE of @t's ring, submitting what it holds when it is full; NULL on failure. */
static struct io_uring_sqe *get_sqe(struct ring_thread *t)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&t->ring);
	if (!sqe && io_uring_submit(&t->ring) >= 0)
		sqe = io_uring_get_sqe(&t->ring);
	return sqe;
}

/* Owner only: queues the commit of the reply in @e's buffers (submitted at its next wait). */
static int queue_commit(struct ring_entry *e)
{
	struct io_uring_sqe *sqe = get_sqe(e->t);
	if (!sqe)
		return -EBUSY;
	prep_cmd(sqe, e, FUSE_IO_URING_CMD_COMMIT_AND_FETCH, e->commit_id);
	return 0;
}

static int arm_event(struct ring_thread *t)
{
	struct io_uring_sqe *sqe = get_sqe(t);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_multishot(sqe, t->efd, POLLIN);
	sqe->user_data = TAG_EVENT;
	return 0;
}

/* Copies @count iovecs, from byte @skip of their concatenation on, to @dst. */
static void gather(char *dst, const struct iovec *iov, int count, size_t skip)
{
	for (int i = 0; i < count; i++) {
		size_t len = iov[i].iov_len;
		const char *src = iov[i].iov_base;
		if (skip >= len) {
			skip -= len;
			continue;
		}
		src += skip;
		len -= skip;
		skip = 0;
		if (src != dst)
			memmove(dst, src, len);
		dst += len;
	}
}

/* The entry of @t serving @unique, claimed (its unique cleared); NULL when none. */
static struct ring_entry *claim_in(struct ring_thread *t, uint64_t unique)
{
	for (unsigned i = 0; i < t->nent; i++) {
		uint_fast64_t want = unique;
		if (atomic_compare_exchange_strong(&t->ent[i].unique, &want, 0))
			return &t->ent[i];
	}
	return NULL;
}

/* The ring entry serving @unique, claimed; this thread's own entries first; NULL when none. */
static struct ring_entry *ring_claim(struct transport *tp, uint64_t unique)
{
	struct ring_entry *e;
	if (tl_self && (e = claim_in(tl_self, unique)))
		return e;
	for (struct ring_thread *t = atomic_load_explicit(&tp->threads, memory_order_acquire); t;
	     t = t->next)
		if (t != tl_self && (e = claim_in(t, unique)))
			return e;
	return NULL;
}

/* Puts the reply in @iov into @e's entry and commits it (now, or through its owner). */
static ssize_t ring_reply(struct transport *tp, struct ring_entry *e, const struct iovec *iov,
			  int count)
{
	size_t total = 0;
	for (int i = 0; i < count; i++)
		total += iov[i].iov_len;
	struct fuse_out_header *out = (struct fuse_out_header *)e->hdr->in_out;
	gather((char *)out, iov, 1, 0); /* libfuse's header is its own iovec */
	size_t payload = total - iov[0].iov_len;
	if (iov[0].iov_len != OUT_HEADER || payload > tp->payload_size) {
		/* Not a reply libfuse builds: the request fails rather than the ring. */
		out->len = OUT_HEADER;
		out->error = -EIO;
		payload = 0;
	} else {
		gather(e->payload, iov, count, OUT_HEADER);
	}
	e->hdr->ring_ent_in_out.payload_sz = (uint32_t)payload;
	if (e->t == tl_self) {
		if (queue_commit(e))
			return -1;
	} else {
		atomic_store_explicit(&e->commit_pending, true, memory_order_release);
		uint64_t one = 1;
		if (write(e->t->efd, &one, sizeof one) != sizeof one)
			return -1;
	}
	return (ssize_t)total;
}

static int ring_start(struct transport *tp);

bool transport_on_ring_thread(void)
{
	return tl_self != NULL;
}

void *transport_reply_buffer(size_t size)
{
	struct ring_thread *t = tl_self;
	if (!t || !t->serving || !atomic_load_explicit(&t->serving->unique, memory_order_relaxed) ||
	    size > t->tp->payload_size)
		return NULL;
	return t->serving->payload;
}

/* The reply to INIT: adds the flags libfuse 3.14 cannot ask for, then starts the ring. */
static ssize_t init_reply(struct transport *tp, int fd, struct iovec *iov, int count)
{
	const struct fuse_out_header *out = iov[0].iov_base;
	struct fuse_init_out o;
	uint64_t add = 0;
	ssize_t n;
	atomic_store(&tp->init_unique, 0);
	if (count == 2 && out->error == 0 &&
	    iov[1].iov_len >= offsetof(struct fuse_init_out, flags2) + sizeof o.flags2 &&
	    iov[1].iov_len <= sizeof o && (tp->offered & FUSE_INIT_EXT)) {
		memset(&o, 0, sizeof o);
		memcpy(&o, iov[1].iov_base, iov[1].iov_len);
		add = tp->offered & FUSE_DIRECT_IO_ALLOW_MMAP;
		if (tp->ring_chosen)
			add |= FUSE_OVER_IO_URING;
		/* With the write-back cache: see sfs_init() (ops.c). */
		if (tp->fs->writeback)
			add |= tp->offered & FUSE_HANDLE_KILLPRIV_V2;
		o.flags |= FUSE_INIT_EXT | (uint32_t)add;
		o.flags2 |= (uint32_t)(add >> 32);
		unsigned pages = (o.flags & FUSE_MAX_PAGES) && o.max_pages ? o.max_pages : 32;
		size_t payload = (size_t)pages * (size_t)tp->page;
		if (payload < o.max_write)
			payload = o.max_write;
		tp->payload_size = payload < 8192 ? 8192 : payload;
		struct iovec v[2] = {iov[0], {.iov_base = &o, .iov_len = iov[1].iov_len}};
		n = writev(fd, v, 2);
	} else {
		n = writev(fd, iov, count);
	}
	if (n < 0 || !(add & FUSE_OVER_IO_URING))
		return n;
	/* The kernel has the reply (fc->initialized): entries may register now. */
	int e = ring_start(tp);
	if (e) {
		if (tp->want == TRANSPORT_URING) {
			fprintf(
			    stderr,
			    "scatterfs: -o transport=uring: cannot register the io_uring queues "
			    "(%s); unmounting\n",
			    strerror(-e));
			fuse_session_exit(tp->fs->se);
		} else {
			fprintf(stderr,
				"scatterfs: cannot register the io_uring queues (%s): using "
				"/dev/fuse\n",
				strerror(-e));
		}
	}
	return n;
}

static ssize_t tp_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct sfs *fs = userdata;
	struct transport *tp = fs->tp;
	const struct fuse_out_header *out = iov[0].iov_base;
	if (iov[0].iov_len >= OUT_HEADER && out->unique) {
		uint64_t iu = atomic_load_explicit(&tp->init_unique, memory_order_acquire);
		if (iu && out->unique == iu)
			return init_reply(tp, fd, iov, count);
		if (atomic_load_explicit(&tp->ring_on, memory_order_acquire)) {
			struct ring_entry *e = ring_claim(tp, out->unique);
			if (e)
				return ring_reply(tp, e, iov, count);
		}
	}
	return writev(fd, iov, count);
}

static ssize_t tp_read(int fd, void *buf, size_t len, void *userdata)
{
	struct sfs *fs = userdata;
	struct transport *tp = fs->tp;
	ssize_t n = read(fd, buf, len);
	if (n < (ssize_t)IN_HEADER)
		return n;
	const struct fuse_in_header *in = buf;
	atomic_fetch_add_explicit(&tp->n_dev, 1, memory_order_relaxed);
	if (in->opcode == FUSE_INIT &&
	    (size_t)n >= IN_HEADER + offsetof(struct fuse_init_in, flags2)) {
		const struct fuse_init_in *ii = (const void *)(in + 1);
		uint64_t flags = ii->flags;
		if ((flags & FUSE_INIT_EXT) && (size_t)n >= IN_HEADER + sizeof *ii)
			flags |= (uint64_t)ii->flags2 << 32;
		tp->offered = flags;
		tp->ring_chosen = tp->want != TRANSPORT_DEV && (flags & FUSE_OVER_IO_URING) &&
				  (flags & FUSE_INIT_EXT);
		if (tp->want == TRANSPORT_URING && !tp->ring_chosen) {
			/* transport_check() passed: enable_uring went N since. */
			fprintf(stderr,
				"scatterfs: -o transport=uring: the kernel did not offer FUSE "
				"over io_uring at INIT (is %s N?); unmounting\n",
				ENABLE_URING);
			fuse_session_exit(fs->se);
		}
		atomic_store_explicit(&tp->init_unique, in->unique, memory_order_release);
	}
	return n;
}

/*
 * Without splice_send, libfuse 3.14 would not splice replies at all.  On
 * the ring, replies are not spliced (ops.c's init does not ask): a reply
 * that still arrives here is read out of the pipe and sent as writev.
 */
static ssize_t tp_splice_send(int fdin, off_t *offin, int fdout, off_t *offout, size_t len,
			      unsigned int flags, void *userdata)
{
	struct sfs *fs = userdata;
	if (!atomic_load_explicit(&fs->tp->ring_on, memory_order_acquire))
		return splice(fdin, offin, fdout, offout, len, flags);
	char *b = malloc(len);
	size_t got = 0;
	if (!b)
		return -1;
	while (got < len) {
		ssize_t r = read(fdin, b + got, len - got);
		if (r <= 0) {
			free(b);
			if (r == 0)
				errno = EIO;
			return -1;
		}
		got += (size_t)r;
	}
	struct iovec v[2] = {{.iov_base = b, .iov_len = OUT_HEADER},
			     {.iov_base = b + OUT_HEADER, .iov_len = len - OUT_HEADER}};
	ssize_t n =
	    len >= OUT_HEADER ? tp_writev(fdout, v, len > OUT_HEADER ? 2 : 1, userdata) : -1;
	free(b);
	return n;
}

int transport_install(struct sfs *fs, enum sfs_transport t, unsigned max_threads)
{
	struct transport *tp = calloc(1, sizeof *tp);
	if (!tp)
		return -ENOMEM;
	tp->fs = fs;
	tp->want = t;
	tp->fd = fuse_session_fd(fs->se);
	tp->page = sysconf(_SC_PAGESIZE);
	tp->nq = possible_cpus();
	if (!max_threads)
		max_threads = 1;
	tp->per_queue_max = max_threads / tp->nq ? max_threads / tp->nq : 1;
	pthread_mutex_init(&tp->lock, NULL);
	pthread_cond_init(&tp->cond, NULL);
	fs->tp = tp;
	static const struct fuse_custom_io io = {
	    .writev = tp_writev,
	    .read = tp_read,
	    .splice_send = tp_splice_send,
	};
	int e = fuse_session_custom_io(fs->se, &io, tp->fd);
	if (e) {
		fs->tp = NULL;
		pthread_cond_destroy(&tp->cond);
		pthread_mutex_destroy(&tp->lock);
		free(tp);
	}
	return e;
}

uint64_t transport_init_offered(const struct sfs *fs)
{
	return fs->tp ? fs->tp->offered : 0;
}

bool transport_uses_ring(const struct sfs *fs)
{
	return fs->tp && (fs->tp->ring_chosen || atomic_load(&fs->tp->ring_on));
}

const char *transport_name(const struct sfs *fs)
{
	return fs->tp && atomic_load(&fs->tp->ring_on) ? "uring" : "dev";
}

void transport_counts(const struct sfs *fs, uint64_t *ring, uint64_t *dev, unsigned *queues,
		      unsigned *threads)
{
	struct transport *tp = fs->tp;
	*ring = *dev = 0;
	*queues = *threads = 0;
	if (!tp)
		return;
	*ring = atomic_load(&tp->n_ring);
	*dev = atomic_load(&tp->n_dev);
	if (atomic_load(&tp->ring_on)) {
		*queues = tp->nq;
		for (unsigned i = 0; i < tp->nq; i++)
			*threads += atomic_load(&tp->queues[i].threads);
	}
}

/* Turns the request in entry @e into /dev/fuse's byte stream and hands it to libfuse. */
static void serve(struct ring_entry *e)
{
	struct ring_thread *t = e->t;
	struct transport *tp = t->tp;
	struct fuse_in_header *in = (struct fuse_in_header *)e->hdr->in_out;
	uint32_t psz = e->hdr->ring_ent_in_out.payload_sz;
	e->commit_id = e->hdr->ring_ent_in_out.commit_id;
	atomic_fetch_add_explicit(&tp->n_ring, 1, memory_order_relaxed);
	size_t hlen = in->len >= IN_HEADER + psz ? in->len - IN_HEADER - psz : SIZE_MAX;
	if (hlen > FUSE_URING_OP_IN_OUT_SZ || psz > tp->payload_size) {
		struct fuse_out_header *out = (struct fuse_out_header *)e->hdr->in_out;
		uint64_t unique = in->unique;
		*out = (struct fuse_out_header){.len = OUT_HEADER, .error = -EIO, .unique = unique};
		e->hdr->ring_ent_in_out.payload_sz = 0;
		queue_commit(e);
		return;
	}
	/*
	 * Only a READ runs beside this thread's device reads in flight (io.c
	 * and dispatch.c make sure its handler never sleeps while they are):
	 * any other request may wait for something they hold (an inode's
	 * pins, a log row), which only this thread can complete.
	 */
	if (in->opcode != FUSE_READ)
		transport_drain();
	char *start = e->payload - IN_HEADER - hlen;
	memcpy(start, in, IN_HEADER);
	memcpy(start + IN_HEADER, e->hdr->op_in, hlen);
	struct fuse_buf buf = {.mem = start, .size = IN_HEADER + hlen + psz};
	atomic_store_explicit(&e->unique, in->unique, memory_order_release);
	t->serving = e;
	fuse_session_process_buf(tp->fs->se, &buf);
	t->serving = NULL;
}

static void report_start(struct ring_thread *t, int err)
{
	struct transport *tp = t->tp;
	pthread_mutex_lock(&tp->lock);
	t->start_err = err;
	t->started = true;
	pthread_cond_broadcast(&tp->cond);
	pthread_mutex_unlock(&tp->lock);
}

/* Sets up @t's ring and registers its entries; 0 or -errno (the kernel's refusal). */
static int ring_setup(struct ring_thread *t)
{
	struct io_uring_params p = {.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQSIZE,
				    .cq_entries = RING_CQ_DEPTH};
	int e = io_uring_queue_init_params(RING_SQ_DEPTH, &t->ring, &p);
	if (e < 0)
		return e;
	t->have_ring = true;
	for (unsigned i = 0; i < t->nent; i++) {
		struct io_uring_sqe *sqe = get_sqe(t);
		if (!sqe)
			return -EBUSY;
		prep_cmd(sqe, &t->ent[i], FUSE_IO_URING_CMD_REGISTER, 0);
		t->ent[i].live = true;
	}
	t->live = t->nent;
	if ((e = arm_event(t)))
		return e;
	e = io_uring_submit(&t->ring);
	if (e < 0)
		return e;
	/*
	 * A refused REGISTER completes at once, within the submission; an
	 * accepted one when a request comes, which may be at once too (left
	 * for the thread's loop).
	 */
	struct io_uring_cqe *cqe;
	unsigned head;
	io_uring_for_each_cqe(&t->ring, head, cqe)
	{
		if (cqe->user_data != TAG_EVENT &&
		    !(cqe->user_data & DEV_RING_TAG_MASK) && cqe->res < 0)
			return cqe->res;
	}
	return 0;
}

/*
 * Owner only: one completion of @t's ring.  A device read completes (its
 * request may be answered, which queues a commit); a request is served,
 * or with @defer put on the ready list (a drain reaps it; the thread's
 * loop serves it); an error ends its entry.
 */
static void complete(struct ring_thread *t, uint64_t data, int res, unsigned flags, bool defer)
{
	struct transport *tp = t->tp;
	if (data == TAG_EVENT) {
		uint64_t v;
		if (read(t->efd, &v, sizeof v) < 0) {
			/* EAGAIN: a wake-up already read */
		}
		if (atomic_load(&tp->stopping))
			t->stop_seen = true;
		for (unsigned i = 0; i < t->nent; i++)
			if (atomic_load_explicit(&t->ent[i].commit_pending, memory_order_relaxed) &&
			    atomic_exchange_explicit(&t->ent[i].commit_pending, false,
						     memory_order_acquire))
				queue_commit(&t->ent[i]);
		if (!(flags & IORING_CQE_F_MORE) && !t->stop_seen)
			arm_event(t);
		return;
	}
	if ((data & DEV_RING_TAG_MASK) == DEV_RING_READ_TAG) {
		dev_ring_read_done(data, res);
		return;
	}
	struct ring_entry *e = (struct ring_entry *)(uintptr_t)data;
	if (res == 0) {
		if (defer) {
			e->next_ready = NULL;
			*t->ready_tail = e;
			t->ready_tail = &e->next_ready;
		} else {
			serve(e);
		}
	} else if (res == -EINTR || res == -EAGAIN) {
		struct io_uring_sqe *sqe = get_sqe(t);
		if (sqe)
			prep_cmd(sqe, e, e->last_cmd, e->commit_id);
	} else {
		/* ENOTCONN: unmounted; ECANCELED: the ring is closing. */
		if (res != -ENOTCONN && res != -ECANCELED)
			fprintf(stderr, "scatterfs: io_uring queue %u: %s\n", t->q->qid,
				strerror(-res));
		if (e->live) {
			e->live = false;
			t->live--;
		}
	}
}

#define REAP_BATCH 64

/* Owner only: submits what @t's ring holds, waits for one completion, takes up to REAP_BATCH. */
static unsigned reap(struct ring_thread *t, uint64_t *data, int *res, unsigned *flags)
{
	int r = io_uring_submit_and_wait(&t->ring, 1);
	if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
		fprintf(stderr, "scatterfs: io_uring queue %u: %s\n", t->q->qid, strerror(-r));
		t->stop_seen = true;
		t->live = 0;
		return 0;
	}
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;
	io_uring_for_each_cqe(&t->ring, head, cqe)
	{
		if (n == REAP_BATCH)
			break;
		data[n] = cqe->user_data;
		res[n] = cqe->res;
		flags[n++] = cqe->flags;
	}
	io_uring_cq_advance(&t->ring, n);
	return n;
}

void transport_drain(void)
{
	struct ring_thread *t = tl_self;
	if (!t)
		return;
	while (dev_thread_ring_reads()) {
		uint64_t data[REAP_BATCH];
		int res[REAP_BATCH];
		unsigned flags[REAP_BATCH];
		unsigned n = reap(t, data, res, flags);
		if (!n && !t->live)
			break; /* the ring failed: cannot happen with reads in flight */
		for (unsigned i = 0; i < n; i++)
			complete(t, data[i], res[i], flags[i], true);
	}
}

static void *ring_thread_run(void *arg)
{
	struct ring_thread *t = arg;
	struct transport *tp = t->tp;
	tl_self = t;
	t->ready_tail = &t->ready;
	dev_thread_no_yield();
	int e = ring_setup(t);
	if (!e) {
		atomic_fetch_add_explicit(&t->q->idle, 1, memory_order_relaxed);
		dev_thread_set_ring(&t->ring);
	}
	report_start(t, e);
	if (e)
		return NULL;
	while (t->live && !t->stop_seen) {
		uint64_t data[REAP_BATCH];
		int res[REAP_BATCH];
		unsigned flags[REAP_BATCH];
		unsigned n = reap(t, data, res, flags), requests = 0;
		/* Device reads first: their replies leave with the next enter. */
		for (unsigned i = 0; i < n; i++) {
			if (data[i] == TAG_EVENT || (data[i] & DEV_RING_TAG_MASK))
				complete(t, data[i], res[i], flags[i], false);
			else if (res[i] == 0)
				requests++;
		}
		if (!requests)
			for (unsigned i = 0; i < n; i++)
				if (data[i] != TAG_EVENT && !(data[i] & DEV_RING_TAG_MASK))
					complete(t, data[i], res[i], flags[i], false);
		if (!requests)
			continue;
		/* Busy: a queue whose threads are all busy starts another. */
		if (atomic_fetch_sub_explicit(&t->q->idle, 1, memory_order_relaxed) <= 1 &&
		    atomic_load_explicit(&t->q->threads, memory_order_relaxed) < tp->per_queue_max)
			ring_thread_new(tp, t->q); /* on failure the busy ones serve later */
		for (unsigned i = 0; i < n; i++) {
			if (data[i] == TAG_EVENT || (data[i] & DEV_RING_TAG_MASK))
				continue;
			if (res[i] == 0)
				dev_thread_ring_busy(--requests > 0 || t->ready);
			complete(t, data[i], res[i], flags[i], false);
			while (t->ready) { /* reaped while a request drained */
				struct ring_entry *r = t->ready;
				if (!(t->ready = r->next_ready))
					t->ready_tail = &t->ready;
				dev_thread_ring_busy(requests > 0 || t->ready);
				serve(r);
			}
		}
		dev_thread_ring_busy(false);
		atomic_fetch_add_explicit(&t->q->idle, 1, memory_order_relaxed);
	}
	/* Every read this thread started is answered before it ends. */
	transport_drain();
	dev_thread_set_ring(NULL);
	return NULL;
}

/* Starts one more thread on queue @q.  Returns it, or NULL (ENOMEM, no thread). */
static struct ring_thread *ring_thread_new(struct transport *tp, struct ring_queue *q)
{
	struct ring_thread *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->tp = tp;
	t->q = q;
	t->nent = atomic_load(&q->threads) ? 1 : tp->first_entries;
	t->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	size_t stride = (size_t)tp->page + tp->payload_size;
	t->ent = calloc(t->nent, sizeof *t->ent);
	if (t->efd < 0 || !t->ent ||
	    posix_memalign((void **)&t->base, (size_t)tp->page, stride * t->nent)) {
		if (t->efd >= 0)
			close(t->efd);
		free(t->ent);
		free(t);
		return NULL;
	}
	for (unsigned i = 0; i < t->nent; i++) {
		struct ring_entry *e = &t->ent[i];
		e->t = t;
		e->hdr = (struct fuse_uring_req_header *)(t->base + i * stride);
		memset(e->hdr, 0, sizeof *e->hdr);
		e->payload = (char *)e->hdr + tp->page;
		e->iov[0] = (struct iovec){.iov_base = e->hdr, .iov_len = sizeof *e->hdr};
		e->iov[1] = (struct iovec){.iov_base = e->payload, .iov_len = tp->payload_size};
	}
	pthread_mutex_lock(&tp->lock);
	if (atomic_load(&tp->stopping) || atomic_load(&q->threads) >= tp->per_queue_max) {
		pthread_mutex_unlock(&tp->lock);
		close(t->efd);
		free(t->base);
		free(t->ent);
		free(t);
		return NULL;
	}
	/* Signals stay with the main thread (fuse_set_signal_handlers()). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int e = pthread_create(&t->thread, NULL, ring_thread_run, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e) {
		pthread_mutex_unlock(&tp->lock);
		close(t->efd);
		free(t->base);
		free(t->ent);
		free(t);
		return NULL;
	}
	atomic_fetch_add(&q->threads, 1);
	t->next = atomic_load(&tp->threads);
	atomic_store_explicit(&tp->threads, t, memory_order_release);
	pthread_mutex_unlock(&tp->lock);
	return t;
}

/* One thread a queue; 0 once every queue has its entry registered, else -errno. */
static int ring_start(struct transport *tp)
{
	tp->queues = calloc(tp->nq, sizeof *tp->queues);
	if (!tp->queues)
		return -ENOMEM;
	struct ring_thread **first = calloc(tp->nq, sizeof *first);
	if (!first)
		return -ENOMEM;
	int err = 0;
	/*
	 * Many entries on a queue's first thread only where its reads can
	 * queue on its own ring: elsewhere every request is served
	 * synchronously (a timing model's wait, an fsync), and entries
	 * behind a busy thread would wait for it.
	 */
	tp->first_entries = 1;
	for (unsigned i = 0; i < tp->fs->ndev; i++)
		if (tp->fs->rq && dev_may_queue(tp->fs->dev[i]))
			tp->first_entries = RING_ENTRIES;
	/*
	 * On before the first REGISTER: the kernel uses the ring as soon as
	 * every queue has an entry, and a reply to a ring request must not
	 * go to /dev/fuse, where the kernel does not know it.
	 */
	atomic_store_explicit(&tp->ring_on, true, memory_order_release);
	for (unsigned i = 0; i < tp->nq; i++) {
		tp->queues[i].qid = i;
		first[i] = ring_thread_new(tp, &tp->queues[i]);
		if (!first[i]) {
			err = -ENOMEM;
			break;
		}
	}
	pthread_mutex_lock(&tp->lock);
	for (unsigned i = 0; i < tp->nq && first[i]; i++) {
		while (!first[i]->started)
			pthread_cond_wait(&tp->cond, &tp->lock);
		if (first[i]->start_err && !err)
			err = first[i]->start_err;
	}
	pthread_mutex_unlock(&tp->lock);
	free(first);
	if (err)
		transport_stop(tp->fs); /* the threads started so far; fs->tp stays for dev */
	return err;
}

/* Ends and frees every ring thread. */
static void ring_threads_end(struct transport *tp)
{
	atomic_store(&tp->stopping, true);
	pthread_mutex_lock(&tp->lock); /* no thread starts past this */
	struct ring_thread *t = atomic_exchange(&tp->threads, NULL);
	pthread_mutex_unlock(&tp->lock);
	for (struct ring_thread *u = t; u; u = u->next) {
		uint64_t one = 1;
		if (write(u->efd, &one, sizeof one) < 0) {
			/* cannot fail on an eventfd below its maximum */
		}
	}
	while (t) {
		struct ring_thread *next = t->next;
		pthread_join(t->thread, NULL);
		if (t->have_ring)
			io_uring_queue_exit(&t->ring);
		close(t->efd);
		free(t->base);
		free(t->ent);
		free(t);
		t = next;
	}
}

void transport_stop(struct sfs *fs)
{
	struct transport *tp = fs->tp;
	if (!tp)
		return;
	atomic_store(&tp->ring_on, false);
	ring_threads_end(tp);
	free(tp->queues);
	tp->queues = NULL;
	tp->ring_chosen = false;
	atomic_store(&tp->stopping, false);
}

void transport_free(struct sfs *fs)
{
	struct transport *tp = fs->tp;
	if (!tp)
		return;
	transport_stop(fs);
	pthread_cond_destroy(&tp->cond);
	pthread_mutex_destroy(&tp->lock);
	free(tp);
	fs->tp = NULL;
}
