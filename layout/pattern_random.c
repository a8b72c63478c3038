/*
 * Random placement (the seed's "random-fragmented" table): with probability
 * layout.contiguous_ratio an extent goes directly after the previous one;
 * otherwise it starts a random distance d after the previous extent's end,
 * d uniform in [block_size, gap_max] in whole blocks.  In both cases the
 * first free run from the wanted offset is taken, wrapping to device
 * offset 0 at the device end.
 *
 * The randomness is placement_random(seed, logical): a hash, not a stream,
 * so the choice for an extent depends only on the seed and where the
 * extent starts in the file.  The same configuration and sequence of
 * growth therefore give the same map on every machine, and refilling a
 * punched hole makes the same choice as the first time.  The coin uses
 * the top 53 bits as an IEEE double in [0, 1), which is exact; the
 * distance uses a 64x64->128 bit multiply (Lemire, "Fast random integer
 * generation in an interval", 2019), integers only.
 *
 * layout.layout_score = S (-1, the default, is off), which replaces
 * contiguous_ratio when set, asks for a static
 * layout score (Smith and Seltzer, SIGMETRICS 1997; layout_score.h) of S
 * for a file written sequentially.  Every block inside an extent of E
 * blocks follows its predecessor; only an extent's first block depends on
 * the placement.  Over N extents the score is
 *     (N (E - 1) + (N - 1) r) / (N E - 1)  ~  1 - (1 - r) / E,
 * r the share of extents placed right after their predecessor, so
 *     r = 1 - E (1 - S),
 * computed per extent from its own length (auto extent sizes), clamped to
 * [0, 1]: S below (E - 1) / E cannot be reached with extents of E blocks
 * (config_finish() refuses it for a fixed extent_size).  To hold the share
 * to r within one extent over any run of extents, which extents follow
 * their predecessor is not a coin toss but a Beatty sequence: extent k
 * (its index in the file's map) follows when floor((k + 1) r + u) >
 * floor(k r + u), u in [0, 1) from the seed; the others jump a random
 * distance as above.  The score of a file of N >= 1,000 extents is then
 * within 1 / N of S when nothing else takes the wanted space.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "config_i.h"
#include "placement.h"
#include "splitmix64.h"

/* gap_max auto = GAP_MAX_EXTENTS x extent_size. */
#define GAP_MAX_EXTENTS 64

/* gap_max 0 = auto: 64 extents (of 1M when auto), at most the device in whole blocks. */
static uint64_t auto_gap_max(const struct layout_params *l, uint64_t device, uint32_t block_size)
{
	uint64_t ext = l->extent_size ? l->extent_size : AUTO_EXTENT_STEP;
	uint64_t g = ext > UINT64_MAX / GAP_MAX_EXTENTS ? UINT64_MAX : GAP_MAX_EXTENTS * ext;

	if (device && g > device / block_size * block_size)
		g = device / block_size * block_size;
	return g;
}

/* The pattern's own keys, in its slice of pattern_data. */
struct random_params {
	double layout_score; /* target static layout score, [0, 1]; -1 = off */
	/*
	 * layout_score >= 0, set by config_finish() (random_check()), so that
	 * a layout_params built without the configuration (zeroed) keeps
	 * contiguous_ratio.
	 */
	bool use_score;
};
_Static_assert(sizeof(struct random_params) <= LAYOUT_PATTERN_DATA_MAX,
	       "random_params must fit pattern_data");

static const struct config_key random_keys[] = {
    {"layout", "gap_max", CONFIG_SIZE, CONFIG_FILE_PARAMS,
     offsetof(struct file_params, layout.gap_max),
     .flags = CONFIG_BLOCK_MULTIPLE | CONFIG_WITHIN_DEVICE | CONFIG_ZERO_UNSET, .def = "0",
     .resolve_auto = auto_gap_max, .help = "largest jump in bytes; 0 = auto"},
    {"layout", "contiguous_ratio", CONFIG_DOUBLE, CONFIG_FILE_PARAMS,
     offsetof(struct file_params, layout.contiguous_ratio),
     .flags = CONFIG_HAS_MIN | CONFIG_HAS_MAX | CONFIG_WHY_ALL, .min = 0, .max = 1,
     .range_why = "must be a number from 0 to 1", .def = "0.5",
     .help = "probability that an extent follows its predecessor"},
    {"layout", "seed", CONFIG_U64, CONFIG_FILE_PARAMS, offsetof(struct file_params, layout.seed),
     .def = "1", .help = "64-bit seed of the pseudo-random sequence"},
    {"layout", "layout_score", CONFIG_DOUBLE, CONFIG_PATTERN_DATA,
     offsetof(struct random_params, layout_score),
     .flags = CONFIG_HAS_MIN | CONFIG_HAS_MAX | CONFIG_WHY_ALL, .min = -1, .max = 1,
     .range_why = "must be a number from 0 to 1, or -1 (off)", .def = "-1",
     .help = "target static layout score of a sequentially written file; replaces "
	     "contiguous_ratio; -1 = off"},
};

static int random_check(const struct config_scope *s, uint64_t device, char *err, size_t errlen)
{
	struct random_params *rp = (struct random_params *)placement_data(&s->fp->layout);
	unsigned ks = config_key_id(&random_keys[3]);
	char at[512], lb[300];

	(void)device;
	if (rp->layout_score < 0 && rp->layout_score != -1) {
		config_seterr(err, errlen,
			      "%s%s layout_score = %g: must be a number from 0 to 1, "
			      "or -1 (off)",
			      config_where(s, ks, at, sizeof(at)),
			      config_label(s, ks, lb, sizeof(lb)), rp->layout_score);
		return -EINVAL;
	}
	rp->use_score = rp->layout_score >= 0;
	uint64_t block = s->c->device.block_size, ext = s->fp->layout.extent_size;
	if (rp->layout_score >= 0 && ext && block && ext > block) {
		double e = (double)ext / (double)block;
		if (rp->layout_score < (e - 1) / e - 1e-12) {
			config_seterr(err, errlen,
				      "%s%s layout_score = %g: below %.6f, the score of extents of "
				      "%.0f blocks that all jump; use a smaller extent_size",
				      config_where(s, ks, at, sizeof(at)),
				      config_label(s, ks, lb, sizeof(lb)), rp->layout_score,
				      (e - 1) / e, e);
			return -EINVAL;
		}
	}
	return config_check_block_floor(s, config_key_id(&random_keys[0]), err, errlen);
}

/* Whether the extent at @logical follows its predecessor under layout_score (see the top). */
static bool score_follows(const struct layout_params *p, const struct random_params *rp,
			  const struct extent_map *map, uint64_t logical, uint64_t length,
			  uint64_t block)
{
	double e = (double)((length + block - 1) / block);
	double r = 1.0 - e * (1.0 - rp->layout_score);
	double u = (double)(placement_random(p->seed, UINT64_MAX) >> 11) * 0x1p-53;
	double k = (double)extmap_find(map, logical);

	if (r <= 0)
		return false;
	if (r >= 1)
		return true;
	return floor((k + 1) * r + u) > floor(k * r + u);
}

/* A second value from the first, one splitmix64 step further. */
static uint64_t next_random(uint64_t r)
{
	return splitmix64_mix(r + SPLITMIX64_GAMMA);
}

static int random_place(const struct layout_params *p, struct devalloc *a,
			const struct extent_map *map, uint64_t logical, uint64_t length,
			struct placement_result *out)
{
	uint64_t block = devalloc_block_size(a);
	uint64_t r = placement_random(p->seed, logical);
	struct placement_prev prev;
	uint64_t want = 0;
	int rc;

	if (placement_prev(map, logical, &prev))
		want = prev.device_end;
	const struct random_params *rp = placement_data(p);
	bool follows = rp->use_score ? score_follows(p, rp, map, logical, length, block)
				     : (double)(r >> 11) * 0x1p-53 < p->contiguous_ratio;
	if (!follows) {
		uint64_t blocks = p->gap_max / block;
		uint64_t pick;

		if (blocks == 0)
			blocks = 1;
		pick = (uint64_t)(((unsigned __int128)next_random(r) * blocks) >> 64);
		want += (pick + 1) * block;
	}
	rc = placement_alloc_after(a, want, length, &out->device);
	if (rc < 0)
		return rc;
	out->gap_device = 0;
	out->gap_length = 0;
	return 0;
}

const struct placement_ops random_ops = {
    .name = "random",
    .order = 4,
    .place = random_place,
    .keys = random_keys,
    .nkeys = sizeof(random_keys) / sizeof(random_keys[0]),
    .check = random_check,
    .data_size = sizeof(struct random_params),
};
PLACEMENT_REGISTER(random_ops);
