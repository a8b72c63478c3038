/*
 * Disk timing model: what one I/O would cost on a single-actuator rotating
 * disk (see disk_model.h for the three terms and their sources).
 *
 * Data structure.  The model is a handful of derived constants (capacity,
 * bytes per track at the outer rate, one revolution in ns) and two words of
 * state: where the head stopped (the end of the previous I/O) and when it
 * becomes free.  That is all a FIFO queue on one virtual head needs: an I/O
 * submitted while the head is busy simply starts at busy_until_ns, so no list
 * of pending I/Os is kept.  Nothing here reads a clock or takes a lock; the
 * caller passes "now" and serializes calls.
 *
 * Arithmetic and rounding.  Every term is computed in double precision and
 * rounded once, to the nearest nanosecond (halves away from zero, llround),
 * so tests can assert exact integers:
 *   rev_ns      = round(60e9 / rpm)
 *   track_bytes = round(transfer_outer_mib_s * 2^20 / (rpm / 60))
 *   seek        = round(the curve below, in ns)
 *   rotation    = average: round(30e9 / rpm), half a revolution;
 *                 phase: the target angle is first rounded to a whole
 *                 nanosecond of the revolution, round((offset mod
 *                 track_bytes) * rev_ns / track_bytes), and the wait is then
 *                 integer arithmetic modulo rev_ns, so it is exactly 0 when
 *                 the spindle is at the target, never rev_ns.
 *   transfer    = round(length * 1e9 / (rate(offset) * 2^20))
 * The sums in disk_model_submit() are integer.
 *
 * Seek curve, for a distance d in bytes, capacity C and track T:
 *   d == 0          0
 *   0 < d <= T      seek_track
 *   T < d <= C/3    seek_track + (seek_avg - seek_track)
 *                                * (sqrt(d) - sqrt(T)) / (sqrt(C/3) - sqrt(T))
 *   C/3 < d         seek_avg + (seek_full - seek_avg) * (d - C/3) / (C - C/3),
 *                   at most seek_full
 * It is continuous and non-decreasing.  When T >= C/3 (a capacity of less
 * than three tracks) there is no room for the square-root part, and the
 * curve is a straight line from (T, seek_track) to (C, seek_full).
 *
 * Weak spots, on purpose:
 * - Distances are bytes, not cylinders: the curve treats the disk as one
 *   surface whose tracks all hold track_bytes, while a zoned disk holds
 *   fewer bytes per track inside.  The three datasheet points still hold at
 *   0, C/3 and C.
 * - A sequential continuation is free whatever time has passed since the
 *   previous I/O ended.  A real disk would have to wait for the sector to
 *   come round again, but its read-ahead segment usually already holds the
 *   data; this model stands for that cache and nothing else.
 * - No command overhead, no write-back cache, no head switch or settle
 *   difference between reads and writes.
 */
#include <errno.h>
#include <math.h>

#include "disk_model.h"

#define MIB_BYTES 1048576.0 /* 2^20 */
#define NS_PER_MS 1e6
#define NS_PER_S  1e9

/*
 * Nearest integer (ns or bytes), halves away from zero; 0 for @x <= 0 and
 * saturated at UINT64_MAX (an absurd transfer time must not wrap).
 */
static uint64_t round_u64(double x)
{
	if (!(x > 0))
		return 0;
	if (x >= 0x1p63)
		return UINT64_MAX;
	return (uint64_t)llround(x);
}

static int positive(double x)
{
	return isfinite(x) && x > 0;
}

int disk_model_init(struct disk_model *m, const struct disk_params *p, uint64_t device_size)
{
	uint64_t capacity = p->capacity ? p->capacity : device_size;
	double track, rev;

	if (capacity == 0 || capacity < device_size)
		return -EINVAL;
	if (!positive(p->rpm) || !positive(p->transfer_outer_mib_s) ||
	    !positive(p->transfer_inner_mib_s) || p->transfer_inner_mib_s > p->transfer_outer_mib_s)
		return -EINVAL;
	/*
	 * The configuration accepts a track-to-track seek of 0 (a model of
	 * rotation and transfer only), so only negative seek times are refused
	 * here, and the order config_finish() checks is checked again for
	 * callers that fill disk_params by hand.
	 */
	if (!isfinite(p->seek_track_ms) || !isfinite(p->seek_avg_ms) ||
	    !isfinite(p->seek_full_ms) || p->seek_track_ms < 0 ||
	    p->seek_track_ms > p->seek_avg_ms || p->seek_avg_ms > p->seek_full_ms ||
	    p->seek_full_ms * NS_PER_MS >= 1e18)
		return -EINVAL;
	if (!isfinite(p->prefetch) || p->prefetch < 0 || p->prefetch > DISK_PREFETCH_MAX)
		return -EINVAL;

	rev = 60.0 * NS_PER_S / p->rpm;
	track = p->transfer_outer_mib_s * MIB_BYTES / (p->rpm / 60.0);
	/* Outside what uint64 holds, or a track or revolution of less than one unit. */
	if (!(rev >= 0.5 && rev < 1e18) || !(track >= 0.5 && track < 1e18))
		return -EINVAL;

	*m = (struct disk_model){
	    .p = *p,
	    .capacity = capacity,
	    .track_bytes = round_u64(track),
	    .rev_ns = round_u64(rev),
	    .head_pos = 0,
	    .busy_until_ns = 0,
	    .prefetch_end = 0,
	};
	return 0;
}

uint64_t disk_seek_ns(const struct disk_model *m, uint64_t distance)
{
	double d = (double)distance, c = (double)m->capacity, t = (double)m->track_bytes;
	double c3 = c / 3.0;
	double track = m->p.seek_track_ms * NS_PER_MS;
	double avg = m->p.seek_avg_ms * NS_PER_MS;
	double full = m->p.seek_full_ms * NS_PER_MS;
	double ns;

	if (distance == 0)
		return 0;
	if (distance <= m->track_bytes)
		return round_u64(track);
	if (t >= c3) {
		/* Tiny capacity: no square-root part (see the file comment). */
		if (t >= c)
			return round_u64(full);
		ns = track + (full - track) * (d - t) / (c - t);
	} else if (d <= c3) {
		ns = track + (avg - track) * (sqrt(d) - sqrt(t)) / (sqrt(c3) - sqrt(t));
	} else {
		ns = avg + (full - avg) * (d - c3) / (c - c3);
	}
	return round_u64(ns < full ? ns : full);
}

uint64_t disk_rotation_ns(const struct disk_model *m, uint64_t offset, uint64_t t_ns)
{
	uint64_t target, angle;

	if (m->p.rotation == ROTATION_AVERAGE)
		return round_u64(30.0 * NS_PER_S / m->p.rpm);
	target = round_u64((double)(offset % m->track_bytes) * (double)m->rev_ns /
			   (double)m->track_bytes) %
		 m->rev_ns;
	angle = t_ns % m->rev_ns;
	return target >= angle ? target - angle : target + m->rev_ns - angle;
}

uint64_t disk_transfer_ns(const struct disk_model *m, uint64_t offset, uint64_t length)
{
	double outer = m->p.transfer_outer_mib_s, inner = m->p.transfer_inner_mib_s;
	double where = offset < m->capacity ? (double)offset : (double)m->capacity;
	double rate = outer - (outer - inner) * where / (double)m->capacity;

	return round_u64((double)length * NS_PER_S / (rate * MIB_BYTES));
}

uint64_t disk_model_submit(struct disk_model *m, uint64_t now_ns, uint64_t offset, uint64_t length,
			   enum disk_dir dir, struct disk_io_cost *cost)
{
	struct disk_io_cost c = {0};

	c.start_ns = now_ns > m->busy_until_ns ? now_ns : m->busy_until_ns;
	/* prefetch_end > head_pos: the last I/O was a read, with a window. */
	if (dir == DISK_READ && m->prefetch_end > m->head_pos && offset >= m->head_pos &&
	    offset <= m->prefetch_end) {
		/* On the read-ahead stream: the drive has been reading on from
		 * head_pos since it went idle; done when the stream passes the end. */
		uint64_t reached = m->busy_until_ns +
				   disk_transfer_ns(m, m->head_pos, offset + length - m->head_pos);
		c.transfer_ns = reached > c.start_ns ? reached - c.start_ns : 0;
		c.prefetch_hit = offset > m->head_pos || reached <= c.start_ns;
	} else {
		if (offset != m->head_pos) {
			c.seek_ns = disk_seek_ns(m, offset > m->head_pos ? offset - m->head_pos
									 : m->head_pos - offset);
			c.rotation_ns = disk_rotation_ns(m, offset, c.start_ns + c.seek_ns);
		}
		c.transfer_ns = disk_transfer_ns(m, offset, length);
	}
	c.complete_ns = c.start_ns + c.seek_ns + c.rotation_ns + c.transfer_ns;
	m->busy_until_ns = c.complete_ns;
	m->head_pos = offset + length;
	double ahead = dir == DISK_READ ? m->p.prefetch * (double)length : 0;
	m->prefetch_end =
	    m->head_pos + (ahead < (double)m->p.prefetch_max ? (uint64_t)ahead : m->p.prefetch_max);
	*cost = c;
	return c.complete_ns;
}
