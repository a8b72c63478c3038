/*
 * Histograms of unsigned 64-bit values (read sizes, device I/Os per read,
 * seek distances).
 *
 * Data structure: an open-addressing hash table with linear probing of
 * (value, count) slots, a power-of-two number of slots kept at most half
 * full, plus 65 power-of-two buckets.  Real logs hold a handful of distinct
 * read sizes (a database's page size and its multiples) but millions of
 * rows, so the table stays tiny and hot in cache and hist_add() is a
 * multiply, a shift and usually one compare.  Weak spot: a value set
 * with millions of distinct values (seek distances) would grow the table
 * by 16 bytes each, so seek distances are kept in buckets only
 * (report_metrics.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

unsigned hist_bucket(uint64_t v)
{
	return v == 0 ? 0 : 64u - (unsigned)__builtin_clzll(v);
}

uint64_t hist_bucket_lo(unsigned b)
{
	return b == 0 ? 0 : UINT64_C(1) << (b - 1);
}

uint64_t hist_bucket_hi(unsigned b)
{
	if (b == 0)
		return 0;
	return b == 64 ? UINT64_MAX : (UINT64_C(1) << b) - 1;
}

/* Fibonacci hashing (Knuth, TAOCP vol. 3, 6.4): the top bits of v * 2^64/phi. */
static inline size_t slot_of(uint64_t v, size_t cap)
{
	return (size_t)((v * UINT64_C(0x9e3779b97f4a7c15)) >> (64 - __builtin_ctzll(cap)));
}

static int rehash(struct hist *h, size_t cap)
{
	struct hist_value *s = calloc(cap, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < h->cap; i++) {
		if (h->slot[i].count == 0)
			continue;
		size_t j = slot_of(h->slot[i].value, cap);
		while (s[j].count != 0)
			j = (j + 1) & (cap - 1);
		s[j] = h->slot[i];
	}
	free(h->slot);
	h->slot = s;
	h->cap = cap;
	return 0;
}

int hist_add(struct hist *h, uint64_t v)
{
	if (h->used * 2 >= h->cap) {
		int rc = rehash(h, h->cap ? h->cap * 2 : 16);
		if (rc < 0)
			return rc;
	}
	size_t j = slot_of(v, h->cap);
	while (h->slot[j].count != 0 && h->slot[j].value != v)
		j = (j + 1) & (h->cap - 1);
	if (h->slot[j].count == 0) {
		h->slot[j].value = v;
		h->used++;
	}
	h->slot[j].count++;
	h->n++;
	h->sum = __builtin_add_overflow(h->sum, v, &h->sum) ? UINT64_MAX : h->sum;
	h->bucket[hist_bucket(v)]++;
	return 0;
}

uint64_t hist_count(const struct hist *h, uint64_t v)
{
	if (h->cap == 0)
		return 0;
	size_t j = slot_of(v, h->cap);
	while (h->slot[j].count != 0) {
		if (h->slot[j].value == v)
			return h->slot[j].count;
		j = (j + 1) & (h->cap - 1);
	}
	return 0;
}

static int by_count(const void *a, const void *b)
{
	const struct hist_value *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return (x->value > y->value) - (x->value < y->value);
}

static int by_value(const void *a, const void *b)
{
	const struct hist_value *x = a, *y = b;
	return (x->value > y->value) - (x->value < y->value);
}

static struct hist_value *collect(const struct hist *h, size_t *n,
				  int (*cmp)(const void *, const void *))
{
	*n = 0;
	if (h->used == 0)
		return NULL;
	struct hist_value *v = malloc(h->used * sizeof(*v));
	if (v == NULL)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < h->cap; i++)
		if (h->slot[i].count != 0)
			v[k++] = h->slot[i];
	qsort(v, k, sizeof(*v), cmp);
	*n = k;
	return v;
}

struct hist_value *hist_values(const struct hist *h, size_t *n)
{
	return collect(h, n, by_count);
}

struct hist_value *hist_values_by_value(const struct hist *h, size_t *n)
{
	return collect(h, n, by_value);
}

void hist_free(struct hist *h)
{
	free(h->slot);
	memset(h, 0, sizeof(*h));
}

int hist_percentiles(const struct hist *h, const unsigned *pm, size_t n, uint64_t *out)
{
	size_t nv;

	memset(out, 0, n * sizeof(*out));
	if (h->n == 0)
		return 0;
	struct hist_value *v = hist_values_by_value(h, &nv);
	if (v == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		/* rank = ceil(pm / 1000 * n), at least 1; in 128 bits so that pm * n cannot
		 * overflow */
		unsigned __int128 r = ((unsigned __int128)pm[i] * h->n + 999) / 1000;
		uint64_t rank = r == 0 ? 1 : (uint64_t)r;
		uint64_t seen = 0;
		size_t k = 0;
		while (k + 1 < nv && (seen += v[k].count) < rank)
			k++;
		out[i] = v[k].value;
	}
	free(v);
	return 0;
}
