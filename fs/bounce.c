/*
 * Per-thread aligned bounce buffers (bounce.h).  Each buffer grows to the
 * largest size asked of it (at least 2 MiB, so one 1 MiB request never
 * reallocates) and is kept until the thread ends.
 */
#include <pthread.h>
#include <stdlib.h>

#include "bounce.h"
#include "units.h"

struct bounce {
	char *buf[BOUNCE_SLOTS];
	size_t size[BOUNCE_SLOTS];
	struct fuse_bufvec *bv; /* a read's reply vector, bv_cap buffers */
	size_t bv_cap;
};

static __thread struct bounce *bounce;
static pthread_key_t bounce_key;
static pthread_once_t bounce_once = PTHREAD_ONCE_INIT;

static void bounce_free(void *p)
{
	struct bounce *b = p;
	for (int i = 0; i < BOUNCE_SLOTS; i++)
		free(b->buf[i]);
	free(b->bv);
	free(b);
}

static void bounce_key_init(void)
{
	pthread_key_create(&bounce_key, bounce_free);
}

static struct bounce *bounce_self(void)
{
	if (!bounce) {
		pthread_once(&bounce_once, bounce_key_init);
		bounce = calloc(1, sizeof *bounce);
		if (!bounce)
			return NULL;
		pthread_setspecific(bounce_key, bounce);
	}
	return bounce;
}

char *bounce_get(enum bounce_slot slot, size_t size)
{
	if (!bounce_self())
		return NULL;
	if (size <= bounce->size[slot])
		return bounce->buf[slot];
	void *p;
	size_t want = size < 2 * MiB ? 2 * MiB : size;
	if (posix_memalign(&p, 4096, want))
		return NULL;
	free(bounce->buf[slot]);
	bounce->buf[slot] = p;
	bounce->size[slot] = want;
	return p;
}

struct fuse_bufvec *bounce_bufvec(size_t *cap)
{
	struct bounce *b = bounce_self();
	if (b && !b->bv) {
		b->bv = malloc(sizeof *b->bv + 15 * sizeof(struct fuse_buf));
		b->bv_cap = b->bv ? 16 : 0;
	}
	if (!b || !b->bv)
		return NULL;
	*cap = b->bv_cap;
	return b->bv;
}

struct fuse_bufvec *bounce_bufvec_grow(size_t *cap)
{
	struct bounce *b = bounce_self();
	if (!b || !b->bv)
		return NULL;
	size_t n = b->bv_cap * 2;
	struct fuse_bufvec *bv = realloc(b->bv, sizeof *bv + (n - 1) * sizeof(struct fuse_buf));
	if (!bv)
		return NULL;
	b->bv = bv;
	b->bv_cap = n;
	*cap = n;
	return bv;
}
