/*
 * The daemon's multi-threaded request loop (loop.h), in place of libfuse's
 * fuse_session_loop_mt() for one reason: where the request lands.
 *
 * libfuse's loop reads each request into a buffer that malloc() places
 * (for 1 MiB that is an mmap'd chunk, 16 bytes past a page boundary), so a
 * WRITE's data, which follows the 40-byte fuse_in_header and the 40-byte
 * fuse_write_in, starts 96 bytes into a page.  An O_DIRECT backing cannot
 * take it there, and io.c copied every such write into an aligned bounce
 * buffer first: 22 % of the daemon's CPU for fio's 1 MiB sequential writes
 * (bench/README.md, second round).  Here each worker reads into a buffer
 * placed so that the data of a WRITE begins on a page boundary; io.c then
 * writes it straight to the device.  fuse_session_receive_buf() reads into
 * a caller's buffer when buf->mem is set (libfuse 3.14; at most the
 * session's bufsize, which never exceeds FUSE_MAX_MAX_PAGES pages plus a
 * page of headers).
 *
 * What it keeps of libfuse's loop: a worker reads with cancellation
 * enabled only while it waits, and handles the request with
 * fuse_session_process_buf(); when no worker is left waiting, another
 * starts, up to max_threads; FORGETs do not count as work (a burst of them
 * would start threads for nothing); above max_idle waiting workers (when
 * set), a worker that finishes ends; signals go to the main thread, which
 * waits for the session to end and then cancels and joins the workers.
 */
#include <errno.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loop.h"

/* Where a WRITE's data starts in the buffer a request is read into. */
#define WRITE_DATA_OFFSET (sizeof(struct fuse_in_header) + sizeof(struct fuse_write_in))

struct worker {
	struct worker *next, *prev; /* the loop's list, for cancel and join */
	struct sfs_loop *loop;
	pthread_t thread;
	char *base;	     /* the allocation */
	struct fuse_buf buf; /* buf.mem inside base */
	bool detached;	     /* ended on its own (max_idle): freed by itself */
};

struct sfs_loop {
	struct fuse_session *se;
	unsigned max_threads, max_idle; /* max_idle 0: never end a worker */
	size_t buf_bytes;
	pthread_mutex_t lock;
	struct worker head; /* list head */
	unsigned workers, waiting;
	bool exiting;
	bool ended; /* a worker saw the session end (not a signal) */
	int error;
	sem_t finish; /* posted by a worker when the session ends */
};

static void *worker_run(void *arg);

/* Starts one more worker; caller holds l->lock.  0 or -errno. */
static int worker_start(struct sfs_loop *l)
{
	struct worker *w = calloc(1, sizeof *w);
	if (!w)
		return -ENOMEM;
	long page = sysconf(_SC_PAGESIZE);
	if (posix_memalign((void **)&w->base, (size_t)page, l->buf_bytes + (size_t)page)) {
		free(w);
		return -ENOMEM;
	}
	w->loop = l;
	w->buf.mem = w->base + page - WRITE_DATA_OFFSET;
	w->buf.size = l->buf_bytes;
	/* The worker inherits a full signal mask: signals stay with the main thread. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int e = pthread_create(&w->thread, NULL, worker_run, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e) {
		free(w->base);
		free(w);
		return -e;
	}
	w->next = &l->head;
	w->prev = l->head.prev;
	l->head.prev->next = w;
	l->head.prev = w;
	l->workers++;
	l->waiting++;
	return 0;
}

static void worker_unlink(struct worker *w)
{
	w->prev->next = w->next;
	w->next->prev = w->prev;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct sfs_loop *l = w->loop;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	while (!fuse_session_exited(l->se)) {
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		int res = fuse_session_receive_buf(l->se, &w->buf);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (res == -EINTR || res == -EAGAIN)
			continue;
		if (res <= 0) { /* 0: unmounted or exited; < 0: the device failed */
			if (res < 0) {
				pthread_mutex_lock(&l->lock);
				l->error = res;
				pthread_mutex_unlock(&l->lock);
				fuse_session_exit(l->se);
			}
			pthread_mutex_lock(&l->lock);
			l->ended = true;
			pthread_mutex_unlock(&l->lock);
			break;
		}
		const struct fuse_in_header *in = w->buf.mem;
		bool forget = in->opcode == FUSE_FORGET || in->opcode == FUSE_BATCH_FORGET;
		pthread_mutex_lock(&l->lock);
		if (l->exiting) {
			pthread_mutex_unlock(&l->lock);
			break;
		}
		if (!forget && --l->waiting == 0 && l->workers < l->max_threads)
			worker_start(l); /* on failure the busy ones serve later */
		pthread_mutex_unlock(&l->lock);

		fuse_session_process_buf(l->se, &w->buf);

		pthread_mutex_lock(&l->lock);
		if (!forget)
			l->waiting++;
		if (l->max_idle && l->waiting > l->max_idle && l->workers > 1 && !l->exiting) {
			worker_unlink(w);
			l->workers--;
			l->waiting--;
			pthread_mutex_unlock(&l->lock);
			pthread_detach(w->thread);
			free(w->base);
			free(w);
			return NULL;
		}
		pthread_mutex_unlock(&l->lock);
	}
	sem_post(&l->finish);
	return NULL;
}

int sfs_loop_run(struct fuse_session *se, unsigned max_threads, unsigned max_idle)
{
	struct sfs_loop l = {
		.se = se,
		.max_threads = max_threads ? max_threads : 1,
		.max_idle = max_idle,
		.buf_bytes = 256 * (size_t)sysconf(_SC_PAGESIZE) + 4096,
	};
	l.head.next = l.head.prev = &l.head;
	pthread_mutex_init(&l.lock, NULL);
	sem_init(&l.finish, 0, 0);
	pthread_mutex_lock(&l.lock);
	int err = worker_start(&l);
	pthread_mutex_unlock(&l.lock);
	if (!err) {
		/* A signal (fuse_set_signal_handlers()) interrupts the wait. */
		while (!fuse_session_exited(se))
			sem_wait(&l.finish);
		pthread_mutex_lock(&l.lock);
		/* No worker saw the session end: a signal ended it (libfuse's loop
		 * returns the signal's number then). */
		bool signalled = !l.ended;
		l.exiting = true;
		for (struct worker *w = l.head.next; w != &l.head; w = w->next)
			pthread_cancel(w->thread);
		pthread_mutex_unlock(&l.lock);
		/* Workers no longer end on their own (exiting): the list is stable. */
		while (l.head.next != &l.head) {
			struct worker *w = l.head.next;
			pthread_join(w->thread, NULL);
			worker_unlink(w);
			free(w->base);
			free(w);
		}
		err = l.error ? l.error : signalled ? -EINTR : 0;
	}
	sem_destroy(&l.finish);
	pthread_mutex_destroy(&l.lock);
	fuse_session_reset(se);
	return err;
}
