/*
 * Device space allocator.
 *
 * Data structure.  The allocator stores the FREE runs of the backing device,
 * not the used ones: a freshly created device is one node, and a device
 * loaded from a catalog has at most (extents + 1) free runs.  The runs live in
 * a treap keyed by device offset (start), and every node also keeps the
 * largest run length in its subtree ("max").  With that augmentation both
 * searches the placement patterns need are one root-to-leaf walk:
 *
 *   at_or_after(want, len): the only run that starts below @want and may
 *     still serve is the one containing @want (the deepest node on the search
 *     path with start <= want).  Every run starting above @want is a path node
 *     where the walk turned left, or lies in that node's right subtree; those
 *     groups are ordered deepest first, so the answer is in the deepest such
 *     group whose node or right subtree has max >= len, found by one more
 *     walk guided by max.
 *   at_or_before(want_end, len): the mirror image (clip the run that contains
 *     want_end, then groups of node + left subtree where the walk turned right).
 *
 * Nodes are 32 bytes (start, len, max: 64-bit bytes; left, right: 32-bit
 * indices) in one growable array, index 0 being a permanent empty sentinel
 * whose max is 0, so child tests need no NULL branch.  Freed nodes go on a
 * free list threaded through .left.  The treap priority is not stored: it is
 * a hash of the node index (a bijective 32-bit mixer), which is independent
 * of the key a node happens to hold, so the expected depth is O(log n) like a
 * random treap.  The array is an anonymous mapping grown by 1.5x with
 * mremap() (no copy), page aligned so that no node straddles two cache lines
 * (malloc's 16-byte header would make every other node do so), and marked
 * for transparent huge pages.  Memory is 32 to 48 bytes per free run plus a
 * page and a small header.
 *
 * No locking: the caller serializes calls (the daemon holds one lock around
 * the allocator).
 *
 * Every operation that may need a new node reserves it before touching the
 * tree, so -ENOMEM (and -ENOSPC, -EEXIST, -EINVAL) leaves the state unchanged.
 *
 * Weak spots:
 * - O(log n) is expected, not worst case.  A caller that could choose which
 *   node index holds which key could in principle build a deep treap; the
 *   indices are handed out by this file, so in practice it cannot.
 * - insert/delete/update recurse to the treap depth (measured with 10
 *   million runs: 31 on average, 59 at most), so stack use is small but not
 *   strictly bounded.
 * - A treap is deeper than a B-tree and each level is a likely cache miss:
 *   a random operation on 10 million runs costs a few microseconds, an
 *   operation near the previous one (mount-time bulk load, appends) ~150 ns.
 * - The node array never shrinks: after a peak of fragmentation the memory
 *   stays held (reused by later runs) until devalloc_destroy().
 * - At most 2^32 - 2 free runs (uint32_t indices); more gives -ENOMEM.
 * - Searches are first fit by offset, which is what placement patterns ask
 *   for; there is no best-fit query.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "alloc.h"

struct dnode {
	uint64_t start;	      /* device offset of the free run, bytes */
	uint64_t len;	      /* bytes, > 0 */
	uint64_t max;	      /* largest len in this subtree; 0 for the sentinel */
	uint32_t left, right; /* child indices, 0 = none; .left links the free list */
};

struct devalloc {
	struct dnode *n;     /* n[0] is the empty sentinel */
	uint32_t cap;	     /* nodes allocated in n[] */
	uint32_t next;	     /* first never-used index */
	uint32_t free_head;  /* free list of released nodes, 0 = empty */
	uint32_t root;	     /* 0 = no free space */
	uint32_t block_size; /* power of two >= 512 */
	size_t runs;	     /* nodes in the tree */
	uint64_t size;	     /* device bytes, multiple of block_size */
	uint64_t free_bytes;
};

#define NODE_MAX UINT32_MAX

/*
 * Treap priority of node @i: the "lowbias32" integer mixer found by Chris
 * Wellons' hash-prospector (a bijection on 32 bits, so no two nodes tie).
 */
static inline uint32_t prio(uint32_t i)
{
	i ^= i >> 16;
	i *= 0x7feb352dU;
	i ^= i >> 15;
	i *= 0x846ca68bU;
	i ^= i >> 16;
	return i;
}

static inline uint64_t max3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t m = a > b ? a : b;
	return m > c ? m : c;
}

static inline void pull(struct dnode *n, uint32_t x)
{
	n[x].max = max3(n[x].len, n[n[x].left].max, n[n[x].right].max);
}

static uint32_t rot_right(struct dnode *n, uint32_t x)
{
	uint32_t l = n[x].left;
	n[x].left = n[l].right;
	n[l].right = x;
	pull(n, x);
	pull(n, l);
	return l;
}

static uint32_t rot_left(struct dnode *n, uint32_t x)
{
	uint32_t r = n[x].right;
	n[x].right = n[r].left;
	n[r].left = x;
	pull(n, x);
	pull(n, r);
	return r;
}

/* Inserts node @z (children 0) into the subtree @x; returns the new subtree root. */
static uint32_t tr_insert(struct dnode *n, uint32_t x, uint32_t z)
{
	if (!x)
		return z;
	if (n[z].start < n[x].start) {
		n[x].left = tr_insert(n, n[x].left, z);
		if (prio(n[x].left) > prio(x))
			return rot_right(n, x);
	} else {
		n[x].right = tr_insert(n, n[x].right, z);
		if (prio(n[x].right) > prio(x))
			return rot_left(n, x);
	}
	pull(n, x);
	return x;
}

/* Joins two treaps where every key of @l is below every key of @r. */
static uint32_t tr_merge(struct dnode *n, uint32_t l, uint32_t r)
{
	if (!l)
		return r;
	if (!r)
		return l;
	if (prio(l) > prio(r)) {
		n[l].right = tr_merge(n, n[l].right, r);
		pull(n, l);
		return l;
	}
	n[r].left = tr_merge(n, l, n[r].left);
	pull(n, r);
	return r;
}

/* Unlinks the node whose start is @key (it must exist) from the subtree @x. */
static uint32_t tr_delete(struct dnode *n, uint32_t x, uint64_t key)
{
	if (key < n[x].start)
		n[x].left = tr_delete(n, n[x].left, key);
	else if (key > n[x].start)
		n[x].right = tr_delete(n, n[x].right, key);
	else
		return tr_merge(n, n[x].left, n[x].right);
	pull(n, x);
	return x;
}

/* Recomputes max on the path to the node whose start is @key (changed in place). */
static void tr_repull(struct dnode *n, uint32_t x, uint64_t key)
{
	if (key < n[x].start)
		tr_repull(n, n[x].left, key);
	else if (key > n[x].start)
		tr_repull(n, n[x].right, key);
	pull(n, x);
}

/* The free run with the highest start <= @off, or 0. */
static uint32_t run_at_or_below(const struct devalloc *a, uint64_t off)
{
	const struct dnode *n = a->n;
	uint32_t x = a->root, found = 0;

	while (x) {
		if (n[x].start <= off) {
			found = x;
			x = n[x].right;
		} else {
			x = n[x].left;
		}
	}
	return found;
}

/* Leftmost node of subtree @x with len >= @len; max of @x must be >= @len. */
static uint32_t leftmost_fit(const struct dnode *n, uint32_t x, uint64_t len)
{
	for (;;) {
		if (n[n[x].left].max >= len)
			x = n[x].left;
		else if (n[x].len >= len)
			return x;
		else
			x = n[x].right;
	}
}

/* Rightmost node of subtree @x with len >= @len; max of @x must be >= @len. */
static uint32_t rightmost_fit(const struct dnode *n, uint32_t x, uint64_t len)
{
	for (;;) {
		if (n[n[x].right].max >= len)
			x = n[x].right;
		else if (n[x].len >= len)
			return x;
		else
			x = n[x].left;
	}
}

/*
 * A tree walk touches one node per level at random places in the array, so
 * TLB misses cost as much as cache misses; transparent huge pages remove most
 * of them.  Only a hint: without THP the allocator works the same.
 */
static void hugepages(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	if (bytes >= (size_t)2 << 20)
		(void)madvise(p, bytes, MADV_HUGEPAGE);
#else
	(void)p;
	(void)bytes;
#endif
}

/* Bytes of the node array for @cap nodes: whole pages, as mapped. */
static size_t array_bytes(uint64_t cap)
{
	const size_t page = 4096;
	return ((size_t)cap * sizeof(struct dnode) + page - 1) & ~(page - 1);
}

/* Grows the node array to hold at least @want nodes (rounded up to whole
 * pages).  @return 0, -ENOMEM (nothing changed). */
static int node_capacity(struct devalloc *a, uint64_t want)
{
	if (want <= a->cap)
		return 0;
	if (want > NODE_MAX)
		return -ENOMEM;
	size_t bytes = array_bytes(want);
	void *p = mremap(a->n, array_bytes(a->cap), bytes, MREMAP_MAYMOVE);
	if (p == MAP_FAILED)
		return -ENOMEM;
	hugepages(p, bytes);
	a->n = p;
	uint64_t fit = bytes / sizeof(struct dnode);
	a->cap = fit > NODE_MAX ? NODE_MAX : (uint32_t)fit;
	return 0;
}

/* Makes sure node_new() cannot fail.  @return 0 or -ENOMEM (nothing changed). */
static int node_reserve(struct devalloc *a)
{
	if (a->free_head || a->next < a->cap)
		return 0;
	if (a->cap == NODE_MAX)
		return -ENOMEM;
	uint64_t ncap = (uint64_t)a->cap + a->cap / 2;
	return node_capacity(a, ncap > NODE_MAX ? NODE_MAX : ncap);
}

static uint32_t node_new(struct devalloc *a, uint64_t start, uint64_t len)
{
	uint32_t x;

	if (a->free_head) {
		x = a->free_head;
		a->free_head = a->n[x].left;
	} else {
		x = a->next++;
	}
	a->n[x] = (struct dnode){.start = start, .len = len, .max = len};
	return x;
}

static void node_release(struct devalloc *a, uint32_t x)
{
	a->n[x].left = a->free_head;
	a->free_head = x;
}

/*
 * Marks [@s, @s+@len) used; it lies inside free run @x.
 * @return 0, or -ENOMEM when a middle split needs a node (nothing changed).
 */
static int carve(struct devalloc *a, uint32_t x, uint64_t s, uint64_t len)
{
	uint64_t start = a->n[x].start, end = start + a->n[x].len, e = s + len;

	if (s == start && e == end) {
		a->root = tr_delete(a->n, a->root, start);
		node_release(a, x);
		a->runs--;
	} else if (s == start) {
		a->n[x].start = e;
		a->n[x].len -= len;
		tr_repull(a->n, a->root, e);
	} else if (e == end) {
		a->n[x].len -= len;
		tr_repull(a->n, a->root, start);
	} else {
		if (node_reserve(a) < 0)
			return -ENOMEM;
		a->n[x].len = s - start;
		tr_repull(a->n, a->root, start);
		uint32_t z = node_new(a, e, end - e);
		a->root = tr_insert(a->n, a->root, z);
		a->runs++;
	}
	a->free_bytes -= len;
	return 0;
}

static int aligned(const struct devalloc *a, uint64_t v)
{
	return (v & (a->block_size - 1)) == 0;
}

/* [@off, @off+@len) is a non-empty aligned range inside the device. */
static int range_ok(const struct devalloc *a, uint64_t off, uint64_t len)
{
	return len > 0 && aligned(a, off) && aligned(a, len) && len <= a->size &&
	       off <= a->size - len;
}

int devalloc_create(uint64_t device_size, uint32_t block_size, struct devalloc **out)
{
	if (!out || block_size < 512 || (block_size & (block_size - 1)))
		return -EINVAL;
	device_size &= ~(uint64_t)(block_size - 1);
	if (device_size == 0)
		return -EINVAL;

	struct devalloc *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	/* Anonymous memory is zeroed: n[0] is the sentinel from the start. */
	a->n =
	    mmap(NULL, array_bytes(1), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a->n == MAP_FAILED) {
		free(a);
		return -ENOMEM;
	}
	a->cap = (uint32_t)(array_bytes(1) / sizeof(struct dnode));
	a->next = 1;
	a->block_size = block_size;
	a->size = device_size;
	a->root = node_new(a, 0, device_size);
	a->runs = 1;
	a->free_bytes = device_size;
	*out = a;
	return 0;
}

void devalloc_destroy(struct devalloc *a)
{
	if (!a)
		return;
	munmap(a->n, array_bytes(a->cap));
	free(a);
}

int devalloc_alloc_at_or_after(struct devalloc *a, uint64_t want, uint64_t len, uint64_t *offset)
{
	if (!a || !offset || len == 0 || !aligned(a, len))
		return -EINVAL;
	want &= ~(uint64_t)(a->block_size - 1);
	if (len > a->size || want > a->size - len)
		return -ENOSPC;

	const struct dnode *n = a->n;
	uint32_t x = a->root, cont = 0, best = 0;
	while (x) {
		if (n[x].start <= want) {
			cont = x;
			x = n[x].right;
		} else {
			if (n[x].len >= len || n[n[x].right].max >= len)
				best = x;
			x = n[x].left;
		}
	}

	uint64_t at;
	if (cont && n[cont].start + n[cont].len >= want + len) {
		x = cont;
		at = want;
	} else if (best) {
		x = n[best].len >= len ? best : leftmost_fit(n, n[best].right, len);
		at = n[x].start;
	} else {
		return -ENOSPC;
	}
	int rc = carve(a, x, at, len);
	if (rc < 0)
		return rc;
	*offset = at;
	return 0;
}

int devalloc_alloc_at_or_before(struct devalloc *a, uint64_t want_end, uint64_t len,
				uint64_t *offset)
{
	if (!a || !offset || len == 0 || !aligned(a, len))
		return -EINVAL;
	want_end &= ~(uint64_t)(a->block_size - 1);
	if (want_end > a->size)
		want_end = a->size;
	if (len > want_end)
		return -ENOSPC;

	const struct dnode *n = a->n;
	uint32_t x = a->root, best = 0;
	while (x) {
		if (n[x].start < want_end) {
			uint64_t end = n[x].start + n[x].len;
			if (end > want_end)
				end = want_end;
			if (end - n[x].start >= len || n[n[x].left].max >= len)
				best = x;
			x = n[x].right;
		} else {
			x = n[x].left;
		}
	}
	if (!best)
		return -ENOSPC;

	uint64_t end = n[best].start + n[best].len;
	if (end > want_end)
		end = want_end;
	if (end - n[best].start >= len) {
		x = best;
	} else {
		x = rightmost_fit(n, n[best].left, len);
		end = n[x].start + n[x].len;
	}
	uint64_t at = end - len;
	int rc = carve(a, x, at, len);
	if (rc < 0)
		return rc;
	*offset = at;
	return 0;
}

int devalloc_reserve(struct devalloc *a, uint64_t offset, uint64_t len)
{
	if (!a || !range_ok(a, offset, len))
		return -EINVAL;
	uint32_t x = run_at_or_below(a, offset);
	if (!x || a->n[x].start + a->n[x].len < offset + len)
		return -EEXIST;
	return carve(a, x, offset, len);
}

/* Sorts @v by device offset: LSD radix sort on the block number, 8 bits a
 * pass, skipping the bytes no key has set.  @tmp holds @n runs. */
static void sort_runs(struct run *v, struct run *tmp, size_t n, unsigned shift)
{
	uint64_t all = 0;
	for (size_t i = 0; i < n; i++)
		all |= v[i].device >> shift;
	for (unsigned b = 0; b < 64 && (all >> b); b += 8) {
		size_t count[257] = {0};
		for (size_t i = 0; i < n; i++)
			count[((v[i].device >> shift >> b) & 0xff) + 1]++;
		if (count[1 + ((v[0].device >> shift >> b) & 0xff)] == n)
			continue; /* every key has the same byte here */
		for (int d = 0; d < 256; d++)
			count[d + 1] += count[d];
		for (size_t i = 0; i < n; i++)
			tmp[count[(v[i].device >> shift >> b) & 0xff]++] = v[i];
		memcpy(v, tmp, n * sizeof(*v));
	}
}

/* Sets .max bottom-up in the subtree @x (recursion depth = treap depth). */
static uint64_t pull_all(struct dnode *n, uint32_t x)
{
	if (!x)
		return 0;
	n[x].max = max3(n[x].len, pull_all(n, n[x].left), pull_all(n, n[x].right));
	return n[x].max;
}

int devalloc_reserve_all(struct devalloc *a, struct run *used, size_t n, struct run *bad)
{
	if (!a || (n && !used))
		return -EINVAL;
	if (a->free_bytes != a->size)
		return -EBUSY;
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!range_ok(a, used[i].device, used[i].length)) {
			if (bad)
				*bad = used[i];
			return -EINVAL;
		}

	struct run *tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	sort_runs(used, tmp, n, (unsigned)__builtin_ctz(a->block_size));
	free(tmp);

	uint64_t used_bytes = 0, runs = 0, end = 0;
	for (size_t i = 0; i < n; i++) {
		if (used[i].device < end) {
			if (bad)
				*bad = used[i];
			return -EEXIST;
		}
		runs += used[i].device > end;
		end = used[i].device + used[i].length;
		used_bytes += used[i].length;
	}
	runs += end < a->size;

	uint32_t *stack = NULL;
	size_t sp = 0, scap = 0;
	if (node_capacity(a, runs + 1))
		return -ENOMEM;

	/* Nodes 1..runs hold the free runs in device order; the treap over them
	 * with priority prio(i) is the Cartesian tree of that sequence. */
	memset(&a->n[1], 0, sizeof(a->n[1]));
	a->next = 1;
	a->free_head = 0;
	end = 0;
	for (size_t i = 0; i <= n; i++) {
		uint64_t start = i < n ? used[i].device : a->size;
		if (start > end)
			node_new(a, end, start - end);
		if (i < n)
			end = used[i].device + used[i].length;
	}
	for (uint32_t x = 1; x <= runs; x++) {
		uint32_t last = 0;
		while (sp && prio(stack[sp - 1]) < prio(x))
			last = stack[--sp];
		a->n[x].left = last;
		if (sp)
			a->n[stack[sp - 1]].right = x;
		if (sp == scap) {
			size_t ncap = scap ? scap * 2 : 64;
			uint32_t *ns = realloc(stack, ncap * sizeof(*ns));
			if (!ns) {
				/* Put the single all-free run back: @a as it was. */
				free(stack);
				a->next = 1;
				a->root = node_new(a, 0, a->size);
				return -ENOMEM;
			}
			stack = ns;
			scap = ncap;
		}
		stack[sp++] = x;
	}
	a->root = runs ? stack[0] : 0;
	free(stack);
	pull_all(a->n, a->root);
	a->runs = runs;
	a->free_bytes = a->size - used_bytes;
	return 0;
}

int devalloc_is_free(const struct devalloc *a, uint64_t offset, uint64_t len)
{
	if (!a || len > a->size || offset > a->size - len)
		return 0;
	if (len == 0)
		return 1;
	uint32_t x = run_at_or_below(a, offset);
	return x && a->n[x].start + a->n[x].len >= offset + len;
}

int devalloc_free(struct devalloc *a, uint64_t offset, uint64_t len)
{
	if (!a || !range_ok(a, offset, len))
		return -EINVAL;

	uint64_t e = offset + len;
	const struct dnode *n = a->n;
	uint32_t x = a->root, pred = 0, succ = 0;
	while (x) {
		if (n[x].start <= offset) {
			pred = x;
			x = n[x].right;
		} else {
			succ = x;
			x = n[x].left;
		}
	}
	if (pred && n[pred].start + n[pred].len > offset)
		return -EINVAL;
	if (succ && n[succ].start < e)
		return -EINVAL;

	int join_left = pred && n[pred].start + n[pred].len == offset;
	int join_right = succ && n[succ].start == e;
	if (join_left && join_right) {
		uint64_t slen = n[succ].len;
		a->root = tr_delete(a->n, a->root, e);
		node_release(a, succ);
		a->n[pred].len += len + slen;
		tr_repull(a->n, a->root, a->n[pred].start);
		a->runs--;
	} else if (join_left) {
		a->n[pred].len += len;
		tr_repull(a->n, a->root, a->n[pred].start);
	} else if (join_right) {
		a->n[succ].start = offset;
		a->n[succ].len += len;
		tr_repull(a->n, a->root, offset);
	} else {
		if (node_reserve(a) < 0)
			return -ENOMEM;
		uint32_t z = node_new(a, offset, len);
		a->root = tr_insert(a->n, a->root, z);
		a->runs++;
	}
	a->free_bytes += len;
	return 0;
}

uint64_t devalloc_used_bytes(const struct devalloc *a)
{
	return a->size - a->free_bytes;
}

uint64_t devalloc_free_bytes(const struct devalloc *a)
{
	return a->free_bytes;
}

uint64_t devalloc_size(const struct devalloc *a)
{
	return a->size;
}

uint32_t devalloc_block_size(const struct devalloc *a)
{
	return a->block_size;
}

size_t devalloc_free_runs(const struct devalloc *a)
{
	return a->runs;
}

size_t devalloc_memory_bytes(const struct devalloc *a)
{
	return sizeof(*a) + array_bytes(a->cap);
}
