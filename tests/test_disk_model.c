/*
 * Disk timing model: the seek curve at its points and in its shape, the
 * rotational and transfer terms, the free sequential continuation, FIFO
 * queueing on one head, parameter errors, the presets in conf/, and the
 * statistics of random I/O.
 *
 * Expected values are worked out in the comments.  The model rounds every
 * term once to the nearest nanosecond (halves away from zero).
 */
#undef NDEBUG
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "config.h"
#include "disk_model.h"
#include "models/hdd.h"

/* The hdd model's keys in @d (its slice of model_data). */
#define HDD(d) ((const struct hdd_params *)disk_model_params((d), &hdd_model))
#include "splitmix64.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

static struct hdd_params params(double rpm, double track_ms, double avg_ms, double full_ms,
				double outer, double inner, enum hdd_rotation rotation)
{
	return (struct hdd_params){
	    .rpm = rpm,
	    .seek_track_ms = track_ms,
	    .seek_avg_ms = avg_ms,
	    .seek_full_ms = full_ms,
	    .transfer_outer_mib_s = outer,
	    .transfer_inner_mib_s = inner,
	    .rotation = rotation,
	};
}

/*
 * The hdd-7200 figures on a 3 GiB disk, so that C/3 = 1 GiB exactly:
 *   rev_ns      = 60e9 / 7200 = 8,333,333.33  -> 8,333,333
 *   track_bytes = 150 * 2^20 / (7200 / 60) = 157,286,400 / 120 = 1,310,720
 */
static struct hdd hdd7200(enum hdd_rotation rotation)
{
	struct hdd_params p = params(7200, 1.0, 8.5, 18, 150, 150, rotation);
	struct hdd m;

	cr_assert_eq(hdd_init(&m, &p, 3 * GiB), 0);
	return m;
}

/*
 * A disk whose numbers divide evenly: 6000 rpm, 100 MiB/s:
 *   rev_ns      = 60e9 / 6000 = 10,000,000
 *   track_bytes = 100 * 2^20 / 100 = 1 MiB
 */
static struct hdd round_disk(uint64_t capacity, enum hdd_rotation rotation)
{
	struct hdd_params p = params(6000, 1.0, 8.5, 18, 100, 100, rotation);
	struct hdd m;

	cr_assert_eq(hdd_init(&m, &p, capacity), 0);
	return m;
}

Test(disk_model, derived_constants)
{
	struct hdd m = hdd7200(ROTATION_PHASE);
	struct hdd r = round_disk(3 * GiB, ROTATION_PHASE);

	cr_assert_eq(m.capacity, 3 * GiB);
	cr_assert_eq(m.track_bytes, 1310720);
	cr_assert_eq(m.rev_ns, 8333333);
	cr_assert_eq(m.head_pos, 0);
	cr_assert_eq(m.busy_until_ns, 0);
	cr_assert_eq(r.track_bytes, MiB);
	cr_assert_eq(r.rev_ns, 10000000);
}

/* ---- seek curve ---- */

Test(disk_model, seek_points)
{
	struct hdd m = hdd7200(ROTATION_PHASE);
	uint64_t T = m.track_bytes, C = m.capacity;

	cr_assert_eq(hdd_seek_ns(&m, 0), 0);
	/* Anything up to one track is a track-to-track seek. */
	cr_assert_eq(hdd_seek_ns(&m, 1), 1000000);
	cr_assert_eq(hdd_seek_ns(&m, T / 2), 1000000);
	cr_assert_eq(hdd_seek_ns(&m, T), 1000000);
	/*
	 * Just past one track: 1e6 + 7.5e6 * (sqrt(T + 1) - sqrt(T)) /
	 * (sqrt(2^30) - sqrt(T)) = 1e6 + 7.5e6 * 0.000436.../31623.13 =
	 * 1,000,000.10 -> 1,000,000: continuous at T.
	 */
	cr_assert_eq(hdd_seek_ns(&m, T + 1), 1000000);
	/* C/3 = 1 GiB: the average seek exactly. */
	cr_assert_eq(hdd_seek_ns(&m, C / 3), 8500000);
	/* The full stroke. */
	cr_assert_eq(hdd_seek_ns(&m, C), 18000000);
	/* Beyond the capacity (cannot happen on the disk): clamped. */
	cr_assert_eq(hdd_seek_ns(&m, 2 * C), 18000000);
}

Test(disk_model, seek_square_root_part)
{
	struct hdd m = hdd7200(ROTATION_PHASE);
	uint64_t T = m.track_bytes;

	/*
	 * sqrt(T) = sqrt(1,310,720) = 1144.8668, sqrt(C/3) = sqrt(2^30) = 32768,
	 * so the denominator is 31623.1332.
	 * d = 4T: sqrt(4T) - sqrt(T) = sqrt(T) = 1144.8668; 1144.8668 / 31623.1332
	 * = 0.0362034; 1e6 + 7.5e6 * 0.0362034 = 1,271,525.94 -> 1,271,526.
	 */
	cr_assert_eq(hdd_seek_ns(&m, 4 * T), 1271526);
	/*
	 * d = 256 MiB = C/12: sqrt(2^28) = 16384; (16384 - 1144.8668) / 31623.1332
	 * = 0.4818983; 1e6 + 7.5e6 * 0.4818983 = 4,614,237.03 -> 4,614,237.
	 */
	cr_assert_eq(hdd_seek_ns(&m, 256 * MiB), 4614237);
}

Test(disk_model, seek_linear_part)
{
	struct hdd m = hdd7200(ROTATION_PHASE);

	/* d = 2 GiB, the middle of [C/3, C]: 8.5 + 9.5 * 1/2 = 13.25 ms. */
	cr_assert_eq(hdd_seek_ns(&m, 2 * GiB), 13250000);
	/*
	 * d = 1 GiB + 4 KiB: 8.5e6 + 9.5e6 * 4096 / 2^31 = 8.5e6 + 18.12
	 * -> 8,500,018.
	 */
	cr_assert_eq(hdd_seek_ns(&m, GiB + 4 * KiB), 8500018);
}

Test(disk_model, seek_monotonic)
{
	struct hdd m = hdd7200(ROTATION_PHASE);
	uint64_t prev = 0, d;

	/* Every 1/4096 of the capacity, and densely around the two joints. */
	for (d = 0; d <= m.capacity; d += m.capacity / 4096) {
		uint64_t s = hdd_seek_ns(&m, d);

		cr_assert_geq(s, prev, "seek(%llu) = %llu < %llu", (unsigned long long)d,
			      (unsigned long long)s, (unsigned long long)prev);
		prev = s;
	}
	prev = 0;
	for (d = 0; d <= 3 * m.track_bytes; d += 97) {
		uint64_t s = hdd_seek_ns(&m, d);

		cr_assert_geq(s, prev);
		prev = s;
	}
	prev = hdd_seek_ns(&m, GiB - 100000);
	for (d = GiB - 100000; d <= GiB + 100000; d += 61) {
		uint64_t s = hdd_seek_ns(&m, d);

		cr_assert_geq(s, prev);
		prev = s;
	}
}

Test(disk_model, seek_shape)
{
	struct hdd m = hdd7200(ROTATION_PHASE);
	uint64_t T = m.track_bytes, c3 = m.capacity / 3, C = m.capacity;
	uint64_t a, b;

	/*
	 * Square root below C/3: strictly concave, so the seek at the midpoint
	 * of [a, b] exceeds the mean of the seeks at a and b.
	 */
	for (a = 2 * T; a < c3; a += c3 / 16) {
		for (b = a + c3 / 32; b <= c3; b += c3 / 16) {
			double mean = (hdd_seek_ns(&m, a) + hdd_seek_ns(&m, b)) / 2.0;

			cr_assert_gt((double)hdd_seek_ns(&m, a + (b - a) / 2), mean,
				     "not concave on [%llu, %llu]", (unsigned long long)a,
				     (unsigned long long)b);
		}
	}
	/* Linear above C/3: the midpoint is the mean within 1 ns (rounding). */
	for (a = c3; a < C; a += C / 16) {
		for (b = a + C / 32; b <= C; b += C / 16) {
			double mean = (hdd_seek_ns(&m, a) + hdd_seek_ns(&m, b)) / 2.0;
			double mid = (double)hdd_seek_ns(&m, a + (b - a) / 2);

			cr_assert_leq(fabs(mid - mean), 1.0, "not linear on [%llu, %llu]",
				      (unsigned long long)a, (unsigned long long)b);
		}
	}
}

Test(disk_model, seek_tiny_capacity)
{
	/* C = 2 MiB < 3 tracks of 1 MiB: a line from (T, 1 ms) to (C, 18 ms). */
	struct hdd m = round_disk(2 * MiB, ROTATION_PHASE);
	uint64_t prev = 0, d;

	cr_assert_eq(hdd_seek_ns(&m, MiB), 1000000);
	/* d = 1.5 MiB: 1 + 17 * 0.5 = 9.5 ms. */
	cr_assert_eq(hdd_seek_ns(&m, 3 * MiB / 2), 9500000);
	cr_assert_eq(hdd_seek_ns(&m, 2 * MiB), 18000000);
	for (d = 0; d <= 2 * MiB; d += 4 * KiB) {
		cr_assert_geq(hdd_seek_ns(&m, d), prev);
		prev = hdd_seek_ns(&m, d);
	}

	/* C = one track: every movement is at most track to track... then full. */
	m = round_disk(MiB, ROTATION_PHASE);
	cr_assert_eq(hdd_seek_ns(&m, MiB), 1000000);
	cr_assert_eq(hdd_seek_ns(&m, MiB + 1), 18000000);
}

/* ---- rotation ---- */

Test(disk_model, rotation_average)
{
	struct hdd m = round_disk(3 * GiB, ROTATION_AVERAGE);
	struct hdd h = hdd7200(ROTATION_AVERAGE);

	/* Half of 10,000,000 ns, whatever the offset and time. */
	cr_assert_eq(hdd_rotation_ns(&m, 0, 0), 5000000);
	cr_assert_eq(hdd_rotation_ns(&m, 12345, 987654321), 5000000);
	/* 7,200 rpm: 30e9 / 7200 = 4,166,666.67 -> 4,166,667. */
	cr_assert_eq(hdd_rotation_ns(&h, 0, 0), 4166667);
	cr_assert_eq(hdd_rotation_ns(&h, GiB + 1, 3), 4166667);
}

Test(disk_model, rotation_phase)
{
	struct hdd m = round_disk(3 * GiB, ROTATION_PHASE);
	struct hdd h = hdd7200(ROTATION_PHASE);

	/* Angle equals target: no wait. */
	cr_assert_eq(hdd_rotation_ns(&m, 0, 0), 0);
	cr_assert_eq(hdd_rotation_ns(&m, 0, 30000000), 0); /* 3 whole turns */
	cr_assert_eq(hdd_rotation_ns(&m, 7 * MiB, 0), 0);  /* 7 whole tracks */
	/* Target 256 KiB / 1 MiB = 1/4 turn, spindle at 0: a quarter, 2.5 ms. */
	cr_assert_eq(hdd_rotation_ns(&m, 256 * KiB, 0), 2500000);
	/* Target 1/2, spindle at 1/4 (t = 2.5 ms + 2 turns): a quarter again. */
	cr_assert_eq(hdd_rotation_ns(&m, 5 * MiB + 512 * KiB, 22500000), 2500000);
	/* Target 1/4, spindle at 1/2: three quarters, wrapping round. */
	cr_assert_eq(hdd_rotation_ns(&m, 256 * KiB, 5000000), 7500000);
	/* Spindle 1 ns past the target: almost a whole turn. */
	cr_assert_eq(hdd_rotation_ns(&m, 256 * KiB, 2500001), 9999999);
	/* Target angle equal to the spindle angle at 3/4 turn. */
	cr_assert_eq(hdd_rotation_ns(&m, 768 * KiB, 7500000), 0);

	/*
	 * 7,200 rpm: target T/4 = 327,680 bytes -> round(327,680 * 8,333,333 /
	 * 1,310,720) = round(2,083,333.25) = 2,083,333 ns.
	 */
	cr_assert_eq(hdd_rotation_ns(&h, 327680, 0), 2083333);
	cr_assert_eq(hdd_rotation_ns(&h, 327680, 2083333), 0);
	cr_assert_eq(hdd_rotation_ns(&h, 327680, 2083334), 8333332);
	/* The wait is always below one revolution. */
	for (uint64_t t = 0; t < 3 * h.rev_ns; t += 104729)
		cr_assert_lt(hdd_rotation_ns(&h, t * 7, t), h.rev_ns);
}

/* ---- transfer ---- */

Test(disk_model, transfer_flat)
{
	struct hdd m = hdd7200(ROTATION_PHASE);

	/* 1 MiB at 150 MiB/s: 1e9 / 150 = 6,666,666.67 -> 6,666,667 ns. */
	cr_assert_eq(hdd_transfer_ns(&m, 0, MiB), 6666667);
	cr_assert_eq(hdd_transfer_ns(&m, 2 * GiB, MiB), 6666667);
	/* 4 KiB: 4096e9 / (150 * 2^20) = 26,041.67 -> 26,042 ns. */
	cr_assert_eq(hdd_transfer_ns(&m, 0, 4 * KiB), 26042);
	/* 150 MiB: one second. */
	cr_assert_eq(hdd_transfer_ns(&m, 0, 150 * MiB), 1000000000);
	cr_assert_eq(hdd_transfer_ns(&m, 0, 0), 0);
}

Test(disk_model, transfer_zoned)
{
	struct hdd_params p = params(7200, 1.0, 8.5, 18, 200, 100, ROTATION_PHASE);
	struct hdd m;

	cr_assert_eq(hdd_init(&m, &p, 3 * GiB), 0);
	/* Outer zone at 200 MiB/s: 1 MiB in 5 ms. */
	cr_assert_eq(hdd_transfer_ns(&m, 0, MiB), 5000000);
	/* Middle, 200 - 100 * 1/2 = 150 MiB/s: 6,666,667 ns. */
	cr_assert_eq(hdd_transfer_ns(&m, 3 * GiB / 2, MiB), 6666667);
	/* Inner edge, 100 MiB/s: 10 ms. */
	cr_assert_eq(hdd_transfer_ns(&m, 3 * GiB, MiB), 10000000);
	/* C/4: 200 - 25 = 175 MiB/s: 1e9 / 175 = 5,714,285.71 -> 5,714,286. */
	cr_assert_eq(hdd_transfer_ns(&m, 3 * GiB / 4, MiB), 5714286);
	/* The rate at the start of the I/O holds for all of it. */
	cr_assert_eq(hdd_transfer_ns(&m, 0, 2 * MiB), 10000000);
	/* Zoned: the track is the outer one, 200 * 2^20 / 120 = 1,747,626.67. */
	cr_assert_eq(m.track_bytes, 1747627);
}

/* ---- submit ---- */

Test(disk_model, first_io_at_zero_is_sequential)
{
	struct hdd m = hdd7200(ROTATION_PHASE);
	struct hdd_io_cost c;

	cr_assert_eq(hdd_submit(&m, 1000, 0, MiB, DISK_READ, &c), 1000 + 6666667);
	cr_assert_eq(c.start_ns, 1000);
	cr_assert_eq(c.seek_ns, 0);
	cr_assert_eq(c.rotation_ns, 0);
	cr_assert_eq(c.transfer_ns, 6666667);
	cr_assert_eq(c.complete_ns, 6667667);
	cr_assert_eq(m.head_pos, MiB);
	cr_assert_eq(m.busy_until_ns, 6667667);
}

Test(disk_model, sequential_continuation_costs_only_transfer)
{
	struct hdd m = hdd7200(ROTATION_AVERAGE);
	struct hdd_io_cost c;
	uint64_t t;

	/* Position somewhere first: that one pays seek and rotation. */
	t = hdd_submit(&m, 0, GiB, 64 * KiB, DISK_READ, &c);
	cr_assert_eq(c.seek_ns, 8500000);
	cr_assert_eq(c.rotation_ns, 4166667);
	/* 65536e9 / (150 * 2^20) = 416,666.67 -> 416,667. */
	cr_assert_eq(c.transfer_ns, 416667);
	cr_assert_eq(t, 8500000 + 4166667 + 416667);
	/* The next 64 KiB, submitted long after: transfer only. */
	t = hdd_submit(&m, 50000000, GiB + 64 * KiB, 64 * KiB, DISK_READ, &c);
	cr_assert_eq(c.start_ns, 50000000);
	cr_assert_eq(c.seek_ns, 0);
	cr_assert_eq(c.rotation_ns, 0);
	cr_assert_eq(c.transfer_ns, 416667);
	cr_assert_eq(t, 50416667);
	cr_assert_eq(m.head_pos, GiB + 128 * KiB);
	/* Going back to the start of the same run is not sequential. */
	hdd_submit(&m, t, GiB, 64 * KiB, DISK_READ, &c);
	cr_assert_eq(c.seek_ns, 1000000); /* 128 KiB back: within one track */
	cr_assert_eq(c.rotation_ns, 4166667);
}

Test(disk_model, queueing_in_arrival_order)
{
	struct hdd m = hdd7200(ROTATION_PHASE);
	struct hdd_io_cost a, b;

	/*
	 * First: 4 KiB at 1 GiB, submitted at t = 1000 ns.
	 *   seek(1 GiB) = 8,500,000 (C/3); the seek ends at 8,501,000.
	 *   target: 1 GiB mod 1,310,720 = 262,144 bytes -> round(262,144 *
	 *   8,333,333 / 1,310,720) = round(1,666,666.6) = 1,666,667 ns;
	 *   spindle: 8,501,000 mod 8,333,333 = 167,667; wait 1,499,000.
	 *   transfer 26,042.  complete = 1,000 + 8,500,000 + 1,499,000 + 26,042
	 *   = 10,026,042.
	 */
	cr_assert_eq(hdd_submit(&m, 1000, GiB, 4 * KiB, DISK_READ, &a), 10026042);
	cr_assert_eq(a.start_ns, 1000);
	cr_assert_eq(a.seek_ns, 8500000);
	cr_assert_eq(a.rotation_ns, 1499000);
	cr_assert_eq(a.transfer_ns, 26042);
	/*
	 * Second: 4 KiB at 0, submitted at the same time; it waits for the head.
	 *   start = 10,026,042.  distance = 1 GiB + 4 KiB: seek 8,500,018.
	 *   the seek ends at 18,526,060; 18,526,060 mod 8,333,333 = 1,859,394;
	 *   target 0, so wait 8,333,333 - 1,859,394 = 6,473,939.
	 *   complete = 18,526,060 + 6,473,939 + 26,042 = 25,026,041.
	 */
	cr_assert_eq(hdd_submit(&m, 1000, 0, 4 * KiB, DISK_READ, &b), 25026041);
	cr_assert_eq(b.start_ns, a.complete_ns);
	cr_assert_eq(b.seek_ns, 8500018);
	cr_assert_eq(b.rotation_ns, 6473939);
	cr_assert_eq(b.transfer_ns, 26042);
	cr_assert_eq(b.complete_ns, b.start_ns + b.seek_ns + b.rotation_ns + b.transfer_ns);
	cr_assert_eq(m.busy_until_ns, 25026041);
	cr_assert_eq(m.head_pos, 4 * KiB);
}

Test(disk_model, queued_sequential_ios)
{
	struct hdd m = hdd7200(ROTATION_PHASE);
	struct hdd_io_cost c;

	/* Two 1 MiB reads from 0, both submitted at 0: back to back. */
	cr_assert_eq(hdd_submit(&m, 0, 0, MiB, DISK_READ, &c), 6666667);
	cr_assert_eq(hdd_submit(&m, 0, MiB, MiB, DISK_READ, &c), 13333334);
	cr_assert_eq(c.start_ns, 6666667);
	cr_assert_eq(c.seek_ns + c.rotation_ns, 0);
	/* An idle head starts a later I/O at its submission time. */
	cr_assert_eq(hdd_submit(&m, 20000000, 2 * MiB, MiB, DISK_READ, &c), 26666667);
	cr_assert_eq(c.start_ns, 20000000);
}

/*
 * Read-ahead.  round_disk: 100 MiB/s, so 64 KiB take 625,000 ns and 1 MiB
 * 10,000,000 ns; rev 10 ms.  prefetch 2: after a 64 KiB read the window
 * reaches 128 KiB past its end.
 */
static struct hdd prefetch_disk(double prefetch, uint64_t prefetch_max)
{
	struct hdd_params p = params(6000, 1.0, 8.5, 18, 100, 100, ROTATION_AVERAGE);
	struct hdd m;

	p.prefetch = prefetch;
	p.prefetch_max = prefetch_max;
	cr_assert_eq(hdd_init(&m, &p, GiB), 0);
	return m;
}

Test(disk_model, prefetch_forward_skip_reads_through)
{
	struct hdd m = prefetch_disk(2, MiB);
	struct hdd_io_cost c;

	/* 64 KiB at 0 (first I/O: sequential from 0): 625,000. */
	cr_assert_eq(hdd_submit(&m, 0, 0, 64 * KiB, DISK_READ, &c), 625000);
	cr_assert_eq(m.prefetch_end, 64 * KiB + 128 * KiB);
	cr_assert(!c.prefetch_hit);
	/* Submitted at once, 64 KiB skipped: no seek, no rotation; the stream
	 * passes 64 + 64 + 64 KiB at 625,000 + 1,250,000. */
	cr_assert_eq(hdd_submit(&m, 625000, 128 * KiB, 64 * KiB, DISK_READ, &c), 1875000);
	cr_assert_eq(c.seek_ns + c.rotation_ns, 0);
	cr_assert_eq(c.transfer_ns, 1250000);
	cr_assert(c.prefetch_hit);
	cr_assert_eq(m.head_pos, 192 * KiB);
	cr_assert_eq(m.prefetch_end, 320 * KiB);
	/* Submitted 2 ms after the drive went idle: the stream has read 200,000
	 * bytes ahead (204,800 per 2 ms), past 128 KiB skipped + 64 KiB: done at
	 * once. */
	cr_assert_eq(hdd_submit(&m, 3875000, 320 * KiB, 64 * KiB, DISK_READ, &c), 3875000);
	cr_assert_eq(c.transfer_ns, 0);
	cr_assert(c.prefetch_hit);
	/* 64 KiB skipped, 32 KiB read, submitted 625,000 after idle: the stream
	 * is at the start of the read and needs 312,500 more for its 32 KiB. */
	cr_assert_eq(
	    hdd_submit(&m, 3875000 + 625000, 384 * KiB + 64 * KiB, 32 * KiB, DISK_READ, &c),
	    3875000 + 937500);
	cr_assert_eq(c.transfer_ns, 312500);
}

Test(disk_model, prefetch_window_edges)
{
	struct hdd m = prefetch_disk(2, MiB);
	struct hdd_io_cost c;

	hdd_submit(&m, 0, 0, 64 * KiB, DISK_READ, &c);
	/* One block past the window: a repositioning (seek of one track at
	 * most, half a revolution). */
	hdd_submit(&m, 625000, 192 * KiB + 4 * KiB, 4 * KiB, DISK_READ, &c);
	cr_assert(!c.prefetch_hit);
	cr_assert_eq(c.seek_ns, 1000000);
	cr_assert_eq(c.rotation_ns, 5000000);
	/* Backwards is never in the window. */
	hdd_submit(&m, c.complete_ns, 0, 4 * KiB, DISK_READ, &c);
	cr_assert(!c.prefetch_hit);
	cr_assert_eq(c.rotation_ns, 5000000);
	/* prefetch_max caps the window: 2 x 1 MiB would be 2 MiB, capped at 1 MiB. */
	hdd_submit(&m, c.complete_ns, 0, MiB, DISK_READ, &c);
	cr_assert_eq(m.prefetch_end, 2 * MiB);
	/* The window's last byte still starts on the stream. */
	hdd_submit(&m, c.complete_ns, 2 * MiB, 4 * KiB, DISK_READ, &c);
	cr_assert(c.prefetch_hit);
	cr_assert_eq(c.seek_ns + c.rotation_ns, 0);
}

Test(disk_model, prefetch_off_keeps_sequential_rule)
{
	struct hdd m = prefetch_disk(0, MiB);
	struct hdd_io_cost c;

	hdd_submit(&m, 0, 0, 64 * KiB, DISK_READ, &c);
	cr_assert_eq(m.prefetch_end, 64 * KiB);
	/* Sequential, submitted long after: its whole transfer, as without read-ahead. */
	cr_assert_eq(hdd_submit(&m, 5000000, 64 * KiB, 64 * KiB, DISK_READ, &c), 5625000);
	cr_assert(!c.prefetch_hit);
	/* A 4 KiB skip forward repositions. */
	hdd_submit(&m, 5625000, 132 * KiB, 4 * KiB, DISK_READ, &c);
	cr_assert_eq(c.rotation_ns, 5000000);
}

Test(disk_model, prefetch_not_for_writes)
{
	struct hdd m = prefetch_disk(2, MiB);
	struct hdd_io_cost c;

	/* A write leaves no read-ahead window: a sequential read submitted
	 * 5 ms after it pays its whole transfer. */
	hdd_submit(&m, 0, 0, 64 * KiB, DISK_WRITE, &c);
	cr_assert_eq(m.prefetch_end, 64 * KiB);
	cr_assert_eq(hdd_submit(&m, 5625000, 64 * KiB, 64 * KiB, DISK_READ, &c), 6250000);
	cr_assert_eq(c.transfer_ns, 625000);
	cr_assert(!c.prefetch_hit);
	/* And a read 64 KiB past a write repositions (one track, half a turn). */
	hdd_submit(&m, c.complete_ns, 0, 64 * KiB, DISK_WRITE, &c);
	hdd_submit(&m, c.complete_ns, 128 * KiB, 64 * KiB, DISK_READ, &c);
	cr_assert(!c.prefetch_hit);
	cr_assert_eq(c.seek_ns, 1000000);
	cr_assert_eq(c.rotation_ns, 5000000);
	/* A sequential write submitted long after a read pays its whole
	 * transfer: nothing can be written ahead. */
	uint64_t t = c.complete_ns + 5000000;
	cr_assert_eq(hdd_submit(&m, t, 192 * KiB, 64 * KiB, DISK_WRITE, &c), t + 625000);
	cr_assert(!c.prefetch_hit);
	/* A write inside a read's window is not on the stream either. */
	hdd_submit(&m, c.complete_ns, 0, 64 * KiB, DISK_READ, &c);
	hdd_submit(&m, c.complete_ns, 128 * KiB, 4 * KiB, DISK_WRITE, &c);
	cr_assert(!c.prefetch_hit);
	cr_assert_eq(c.rotation_ns, 5000000);
}

/* ---- the write cache ---- */

/*
 * round_disk() on 3 GiB with average rotation and a write cache of
 * @cache_size bytes over a 200 MiB/s link:
 *   link time of 64 KiB = 65536e9 / (200 * 2^20) = 312,500 ns exactly;
 *   media transfer of 64 KiB = 65536e9 / (100 * 2^20) = 625,000 ns;
 *   a positioning within one track (1 MiB) = 1 ms seek + 5 ms rotation,
 * so a 64 KiB media write within a track of the head costs 6,625,000 ns.
 * The high water mark is cache_size / 2, the low one cache_size / 4.
 */
static struct hdd cache_disk(uint64_t cache_size, double prefetch)
{
	struct hdd_params p = params(6000, 1.0, 8.5, 18, 100, 100, ROTATION_AVERAGE);
	struct hdd m;

	p.write_cache = true;
	p.cache_size = cache_size;
	p.interface_mib_s = 200;
	p.prefetch = prefetch;
	p.prefetch_max = MiB;
	cr_assert_eq(hdd_init(&m, &p, 3 * GiB), 0);
	return m;
}

Test(disk_model, cached_write_completes_at_link_time)
{
	struct hdd m = cache_disk(MiB, 0);
	struct hdd_io_cost c;

	cr_assert_eq(hdd_link_ns(&m, 64 * KiB), 312500);
	/* Idle drive: the bytes cross the link, the head does not move. */
	cr_assert_eq(hdd_submit(&m, 1000, 512 * MiB, 64 * KiB, DISK_WRITE, &c), 313500);
	cr_assert(c.cache_hit);
	cr_assert_eq(c.start_ns, 1000);
	cr_assert_eq(c.cache_wait_ns, 0);
	cr_assert_eq(c.seek_ns + c.rotation_ns + c.destage_ns, 0);
	cr_assert_eq(c.transfer_ns, 312500);
	cr_assert_eq(m.head_pos, 0);
	cr_assert_eq(m.busy_until_ns, 0);
	cr_assert_eq(m.dirty_bytes, 64 * KiB);
	/* A second write submitted at the same time waits for the link. */
	cr_assert_eq(hdd_submit(&m, 1000, 256 * MiB, 64 * KiB, DISK_WRITE, &c), 626000);
	cr_assert_eq(c.start_ns, 313500);
	/* Adjacent and overlapping writes merge into one dirty range. */
	hdd_submit(&m, 1000000, 256 * MiB + 64 * KiB, 64 * KiB, DISK_WRITE, &c);
	hdd_submit(&m, 2000000, 256 * MiB + 96 * KiB, 64 * KiB, DISK_WRITE, &c);
	cr_assert_eq(m.ndirty, 2);
	cr_assert_eq(m.dirty_bytes, 64 * KiB + 160 * KiB);
	cr_assert_eq(m.dirty[0].off, 256 * MiB);
	cr_assert_eq(m.dirty[0].end, 256 * MiB + 160 * KiB);
	hdd_release(&m);
}

Test(disk_model, full_cache_write_waits_for_destage)
{
	struct hdd m = cache_disk(128 * KiB, 0);
	struct hdd_io_cost c;

	/* Two writes fill the 128 KiB cache (no time passes: no idle destage). */
	cr_assert_eq(hdd_submit(&m, 0, MiB, 64 * KiB, DISK_WRITE, &c), 312500);
	cr_assert_eq(hdd_submit(&m, 0, 2 * MiB, 64 * KiB, DISK_WRITE, &c), 625000);
	cr_assert_eq(m.dirty_bytes, 128 * KiB);
	/*
	 * The third needs 64 KiB of room: the head destages [1M, +64K) first
	 * (C-SCAN from the head at 0), 1 MiB away: 1 + 5 + 0.625 ms, done at
	 * 6,625,000; the bytes then cross the link: 6,937,500.
	 */
	cr_assert_eq(hdd_submit(&m, 0, 3 * MiB, 64 * KiB, DISK_WRITE, &c), 6937500);
	cr_assert_eq(c.start_ns, 625000);
	cr_assert_eq(c.cache_wait_ns, 6000000);
	cr_assert_eq(c.destage_ns, 6625000);
	cr_assert_eq(c.transfer_ns, 312500);
	cr_assert_eq(m.head_pos, MiB + 64 * KiB);
	cr_assert_eq(m.busy_until_ns, 6625000);
	cr_assert_eq(m.dirty_bytes, 128 * KiB);
	cr_assert_eq(m.dirty[0].off, 2 * MiB);
	/* Rewriting dirty bytes needs no room: no wait. */
	cr_assert_eq(hdd_submit(&m, 7000000, 2 * MiB, 64 * KiB, DISK_WRITE, &c), 7312500);
	cr_assert_eq(c.cache_wait_ns, 0);
	hdd_release(&m);
}

Test(disk_model, flush_waits_for_all_dirty_data)
{
	struct hdd m = cache_disk(MiB, 0);
	struct hdd_io_cost c;

	/* Below the high water mark (512 KiB): nothing is destaged while idle. */
	hdd_submit(&m, 0, 2 * MiB, 64 * KiB, DISK_WRITE, &c);
	hdd_submit(&m, 0, MiB, 64 * KiB, DISK_WRITE, &c);
	/*
	 * Flush at 1 ms: C-SCAN from the head at 0 takes 1M first (1 MiB away:
	 * 6,625,000, done at 7,625,000), then 2M (960 KiB on: 6,625,000 more).
	 */
	cr_assert_eq(hdd_flush(&m, 1000000, &c), 14250000);
	cr_assert_eq(c.destage_ns, 13250000);
	cr_assert_eq(m.dirty_bytes, 0);
	cr_assert_eq(m.head_pos, 2 * MiB + 64 * KiB);
	/* Nothing dirty: a flush completes at once. */
	cr_assert_eq(hdd_flush(&m, 20000000, &c), 20000000);
	cr_assert_eq(c.destage_ns, 0);
	/*
	 * C-SCAN wraps: with the head at 2M+64K, 3M comes before 1M, then
	 * the head goes back to 1M (a seek of 2 MiB + 64 KiB on the curve).
	 */
	hdd_submit(&m, 30000000, MiB, 64 * KiB, DISK_WRITE, &c);
	hdd_submit(&m, 30000000, 3 * MiB, 64 * KiB, DISK_WRITE, &c);
	uint64_t back = hdd_seek_ns(&m, 2 * MiB + 64 * KiB);
	cr_assert_eq(hdd_flush(&m, 31000000, &c), 31000000 + 6625000 + back + 5000000 + 625000);
	cr_assert_eq(m.head_pos, MiB + 64 * KiB);
	hdd_release(&m);
}

Test(disk_model, read_of_dirty_data_costs_no_media_time)
{
	struct hdd m = cache_disk(MiB, 0);
	struct hdd_io_cost c;

	hdd_submit(&m, 0, MiB, 64 * KiB, DISK_WRITE, &c);
	cr_assert_eq(hdd_submit(&m, 1000000, MiB, 64 * KiB, DISK_READ, &c), 1312500);
	cr_assert(c.cache_hit);
	cr_assert_eq(c.seek_ns + c.rotation_ns, 0);
	cr_assert_eq(c.transfer_ns, 312500);
	cr_assert_eq(m.head_pos, 0);
	cr_assert_eq(m.busy_until_ns, 0);
	/* Part of it dirty: the media (1 MiB - 4 KiB away: 1 + 5 + 0.625 ms). */
	cr_assert_eq(hdd_submit(&m, 2000000, MiB - 4 * KiB, 64 * KiB, DISK_READ, &c), 8625000);
	cr_assert(!c.cache_hit);
	cr_assert_eq(c.seek_ns, 1000000);
	cr_assert_eq(m.head_pos, MiB + 60 * KiB);
	hdd_release(&m);
}

Test(disk_model, idle_destage_between_water_marks)
{
	struct hdd m = cache_disk(256 * KiB, 0);
	struct hdd_io_cost c;

	/* Four 32 KiB writes: 128 KiB dirty, the high water mark. */
	for (uint64_t i = 1; i <= 4; i++)
		hdd_submit(&m, 0, i * MiB, 32 * KiB, DISK_WRITE, &c);
	cr_assert_eq(m.dirty_bytes, 128 * KiB);
	/*
	 * A read at 100 ms: the idle head has destaged 1M (1 + 5 + 0.3125
	 * ms) and 2M (1 MiB - 32 KiB on: the same), down to the low water
	 * mark of 64 KiB, and stopped; the read then goes to 512 MiB.
	 */
	hdd_submit(&m, 100000000, 512 * MiB, 4 * KiB, DISK_READ, &c);
	cr_assert_eq(c.destage_ns, 12625000);
	cr_assert_eq(m.dirty_bytes, 64 * KiB);
	cr_assert_eq(m.ndirty, 2);
	cr_assert_eq(m.dirty[0].off, 3 * MiB);
	cr_assert_eq(c.start_ns, 100000000);
	cr_assert_eq(c.seek_ns, hdd_seek_ns(&m, 510 * MiB - 32 * KiB));
	/* Below the high mark, more idle time destages nothing. */
	hdd_submit(&m, 500000000, 512 * MiB + 4 * KiB, 4 * KiB, DISK_READ, &c);
	cr_assert_eq(c.destage_ns, 0);
	cr_assert_eq(m.dirty_bytes, 64 * KiB);
	hdd_release(&m);
}

/* The head cannot destage bytes before they reached the cache, however long it was idle. */
Test(disk_model, idle_destage_starts_when_the_high_mark_is_reached)
{
	struct hdd m = cache_disk(256 * KiB, 0);
	struct hdd_io_cost c;
	const uint64_t t0 = 1000000000; /* the head has been idle for 1 s */

	for (uint64_t i = 1; i <= 4; i++)
		hdd_submit(&m, t0, i * MiB, 32 * KiB, DISK_WRITE, &c);
	/* The fourth reached the high mark at t0 + 4 * 156,250 = t0 + 625,000. */
	cr_assert_eq(c.complete_ns, t0 + 625000);
	cr_assert_eq(m.destage_from_ns, t0 + 625000);
	/*
	 * A read at t0 + 10 ms: the first destage ran from t0 + 625,000 to
	 * t0 + 6,937,500, the second began before the read came and ends at
	 * t0 + 13,250,000, when the read starts.
	 */
	hdd_submit(&m, t0 + 10000000, 512 * MiB, 4 * KiB, DISK_READ, &c);
	cr_assert_eq(c.destage_ns, 12625000);
	cr_assert_eq(c.start_ns, t0 + 13250000);
	hdd_release(&m);
}

Test(disk_model, cached_write_keeps_the_read_stream)
{
	struct hdd m = cache_disk(MiB, 4);
	struct hdd_io_cost c;

	/* 64 KiB read at 0: 625,000; window to 64K + 256K. */
	cr_assert_eq(hdd_submit(&m, 0, 0, 64 * KiB, DISK_READ, &c), 625000);
	/* A write behind the head goes to the cache: 8 KiB cross the link in 39,062.5 -> 39,063. */
	cr_assert_eq(hdd_submit(&m, 700000, 0, 8 * KiB, DISK_WRITE, &c), 739063);
	cr_assert_eq(m.prefetch_end, 320 * KiB);
	/* The next read is still on the stream: 625,000 + 625,000. */
	cr_assert_eq(hdd_submit(&m, 800000, 64 * KiB, 64 * KiB, DISK_READ, &c), 1250000);
	cr_assert_eq(c.seek_ns + c.rotation_ns, 0);
	hdd_release(&m);
}

Test(disk_model, fua_write_with_nothing_dirty)
{
	/*
	 * The first allocation's metadata write on an idle drive with the
	 * cache on and nothing ever written: to the media, and the empty dirty
	 * list (never allocated) stays empty (UBSan saw a memmove of its NULL
	 * vector here).  Head at 0: 4096e9 / (100 * 2^20) = 39,062.5 -> 39,063.
	 */
	struct hdd m = cache_disk(256 * KiB, 0);
	struct hdd_io_cost c;

	cr_assert_null(m.dirty);
	cr_assert_eq(hdd_submit(&m, 1000000, 0, 4 * KiB, DISK_WRITE_FUA, &c), 1039063);
	cr_assert(!c.cache_hit);
	cr_assert_eq(m.ndirty, 0);
	cr_assert_eq(m.dirty_bytes, 0);
	hdd_release(&m);
}

Test(disk_model, fua_and_long_writes_bypass_the_cache)
{
	struct hdd m = cache_disk(256 * KiB, 0);
	struct hdd_io_cost c;

	/* 64 KiB dirty, under the high water mark of 128 KiB. */
	hdd_submit(&m, 0, MiB, 64 * KiB, DISK_WRITE, &c);
	/*
	 * The metadata write of an allocation: one 4 KiB block at 0 with FUA,
	 * to the media as with the cache off: the head is at 0 already, so
	 * 4096e9 / (100 * 2^20) = 39,062.5 -> 39,063 of transfer.
	 */
	cr_assert_eq(hdd_submit(&m, 1000000, 0, 4 * KiB, DISK_WRITE_FUA, &c), 1039063);
	cr_assert(!c.cache_hit);
	cr_assert_eq(m.head_pos, 4 * KiB);
	/* A FUA write into a dirty range replaces those bytes: the range splits. */
	uint64_t seek = hdd_seek_ns(&m, MiB);
	cr_assert_eq(hdd_submit(&m, 2000000, MiB + 4 * KiB, 4 * KiB, DISK_WRITE_FUA, &c),
		     2000000 + seek + 5000000 + 39063);
	cr_assert_eq(m.ndirty, 2);
	cr_assert_eq(m.dirty_bytes, 60 * KiB);
	/* Longer than the cache: to the media (512 KiB: 5,000,000 of transfer). */
	uint64_t t = c.complete_ns;
	hdd_submit(&m, t, MiB + 8 * KiB, 512 * KiB, DISK_WRITE, &c);
	cr_assert(!c.cache_hit);
	cr_assert_eq(c.complete_ns, t + 5000000);
	/* It replaced the dirty bytes after the FUA block; those before it stay. */
	cr_assert_eq(m.ndirty, 1);
	cr_assert_eq(m.dirty_bytes, 4 * KiB);
	hdd_release(&m);
}

Test(disk_model, cache_off_is_the_media_model)
{
	struct hdd_params p = params(6000, 1.0, 8.5, 18, 100, 100, ROTATION_AVERAGE);
	struct hdd m;
	struct hdd_io_cost c;

	p.write_cache = false;
	p.cache_size = MiB;
	p.interface_mib_s = 200;
	cr_assert_eq(hdd_init(&m, &p, 3 * GiB), 0);
	/* The write of cached_write_completes_at_link_time pays the media. */
	cr_assert_eq(hdd_submit(&m, 0, MiB, 64 * KiB, DISK_WRITE, &c), 6625000);
	cr_assert(!c.cache_hit);
	cr_assert_eq(m.dirty_bytes, 0);
	/* And a flush has nothing to wait for. */
	cr_assert_eq(hdd_flush(&m, 7000000, &c), 7000000);
	cr_assert_eq(c.destage_ns, 0);
	hdd_release(&m);
}

Test(disk_model, write_cache_errors)
{
	struct hdd_params p = params(6000, 1.0, 8.5, 18, 100, 100, ROTATION_AVERAGE);
	struct hdd m;

	p.write_cache = true;
	p.cache_size = 0;
	p.interface_mib_s = 200;
	cr_assert_eq(hdd_init(&m, &p, GiB), -EINVAL);
	p.cache_size = MiB;
	p.interface_mib_s = 0;
	cr_assert_eq(hdd_init(&m, &p, GiB), -EINVAL);
	p.interface_mib_s = 200;
	cr_assert_eq(hdd_init(&m, &p, GiB), 0);
}

/* ---- parameters ---- */

Test(disk_model, init_errors)
{
	struct hdd_params good = params(7200, 1.0, 8.5, 18, 150, 150, ROTATION_PHASE);
	struct hdd_params p;
	struct hdd m;

	/* The capacity the timing layer gives (the [disk] capacity or the backing's size). */
	cr_assert_eq(hdd_init(&m, &good, 5 * GiB), 0);
	cr_assert_eq(m.capacity, 5 * GiB);
	/* No capacity at all. */
	cr_assert_eq(hdd_init(&m, &good, 0), -EINVAL);
	/* rpm 0 or negative. */
	p = good;
	p.rpm = 0;
	cr_assert_eq(hdd_init(&m, &p, GiB), -EINVAL);
	p.rpm = -7200;
	cr_assert_eq(hdd_init(&m, &p, GiB), -EINVAL);
	p.rpm = NAN;
	cr_assert_eq(hdd_init(&m, &p, GiB), -EINVAL);
	/* Transfer rates: > 0, inner not faster than outer. */
	p = good;
	p.transfer_outer_mib_s = 0;
	cr_assert_eq(hdd_init(&m, &p, GiB), -EINVAL);
	p = good;
	p.transfer_inner_mib_s = 0;
	cr_assert_eq(hdd_init(&m, &p, GiB), -EINVAL);
	p = good;
	p.transfer_inner_mib_s = 151;
	cr_assert_eq(hdd_init(&m, &p, GiB), -EINVAL);
	/* Seek times: not negative, in order. */
	p = good;
	p.seek_track_ms = -1;
	cr_assert_eq(hdd_init(&m, &p, GiB), -EINVAL);
	p = good;
	p.seek_avg_ms = 20;
	cr_assert_eq(hdd_init(&m, &p, GiB), -EINVAL);
	p = good;
	p.seek_track_ms = 9;
	cr_assert_eq(hdd_init(&m, &p, GiB), -EINVAL);
	/* A zero track-to-track seek is accepted, as the configuration does. */
	p = good;
	p.seek_track_ms = 0;
	cr_assert_eq(hdd_init(&m, &p, GiB), 0);
	cr_assert_eq(hdd_seek_ns(&m, 1), 0);
}

/* The presets in conf/ load through the configuration and give these models. */
static void load_preset(const char *path, struct sfs_config *c)
{
	char err[512];

	config_init(c);
	cr_assert_eq(config_load_file(c, path, err, sizeof(err)), 0, "%s: %s", path, err);
	cr_assert_eq(config_finish(c, 0, err, sizeof(err)), 0, "%s: %s", path, err);
	cr_assert_eq(c->disk.model, &hdd_model, "%s", path);
	cr_assert_eq(HDD(&c->disk)->rotation, ROTATION_PHASE, "%s", path);
}

Test(disk_model, presets)
{
	struct sfs_config c;
	struct hdd m;

	load_preset("conf/hdd-7200.ini", &c);
	cr_assert_eq(HDD(&c.disk)->rpm, 7200);
	cr_assert_eq(HDD(&c.disk)->seek_track_ms, 1.0);
	cr_assert_eq(HDD(&c.disk)->seek_avg_ms, 8.5);
	cr_assert_eq(HDD(&c.disk)->seek_full_ms, 18);
	cr_assert_eq(HDD(&c.disk)->transfer_outer_mib_s, 150);
	cr_assert_eq(HDD(&c.disk)->transfer_inner_mib_s, 150);
	cr_assert_eq(c.disk.capacity, 0);
	cr_assert_eq(HDD(&c.disk)->prefetch, 4);
	cr_assert_eq(HDD(&c.disk)->prefetch_max, 512 * KiB);
	cr_assert(HDD(&c.disk)->write_cache);
	cr_assert_eq(HDD(&c.disk)->cache_size, 8 * MiB);
	cr_assert_eq(HDD(&c.disk)->interface_mib_s, 286);
	cr_assert(c.disk.metadata_io);
	cr_assert_eq(c.disk.metadata_offset, 0);
	cr_assert_eq(hdd_init(&m, HDD(&c.disk), 10 * GiB), 0);
	cr_assert_eq(m.capacity, 10 * GiB);
	cr_assert_eq(m.track_bytes, 1310720);
	cr_assert_eq(m.rev_ns, 8333333);
	config_free(&c);

	load_preset("conf/hdd-5400.ini", &c);
	cr_assert_eq(HDD(&c.disk)->rpm, 5400);
	cr_assert_eq(HDD(&c.disk)->seek_track_ms, 1.0);
	cr_assert_eq(HDD(&c.disk)->seek_avg_ms, 12);
	cr_assert_eq(HDD(&c.disk)->seek_full_ms, 20);
	cr_assert_eq(HDD(&c.disk)->transfer_outer_mib_s, 100);
	cr_assert_eq(HDD(&c.disk)->transfer_inner_mib_s, 100);
	cr_assert_eq(c.disk.capacity, 0);
	cr_assert_eq(hdd_init(&m, HDD(&c.disk), 10 * GiB), 0);
	/* 100 * 2^20 / 90 = 1,165,084.44; 60e9 / 5400 = 11,111,111.1. */
	cr_assert_eq(m.track_bytes, 1165084);
	cr_assert_eq(m.rev_ns, 11111111);
	config_free(&c);

	load_preset("conf/hdd-1999.ini", &c);
	cr_assert_eq(HDD(&c.disk)->rpm, 7200);
	cr_assert_eq(HDD(&c.disk)->seek_track_ms, 1.0);
	cr_assert_eq(HDD(&c.disk)->seek_avg_ms, 8);
	cr_assert_eq(HDD(&c.disk)->seek_full_ms, 17);
	cr_assert_eq(HDD(&c.disk)->transfer_outer_mib_s, 21);
	cr_assert_eq(HDD(&c.disk)->transfer_inner_mib_s, 13.4);
	cr_assert_eq(c.disk.capacity, 8 * GiB);
	cr_assert(!HDD(&c.disk)->write_cache);
	cr_assert_eq(HDD(&c.disk)->cache_size, 512 * KiB);
	cr_assert_eq(HDD(&c.disk)->interface_mib_s, 9.5);
	cr_assert_eq(HDD(&c.disk)->prefetch, 4);
	cr_assert_eq(HDD(&c.disk)->prefetch_max, 512 * KiB);
	/* A 1 GiB backing stands for the first GiB of the 8 GiB disk. */
	cr_assert_eq(hdd_init(&m, HDD(&c.disk), c.disk.capacity), 0);
	cr_assert_eq(m.capacity, 8 * GiB);
	/* 21 * 2^20 / 120 = 183,500.8 bytes per track. */
	cr_assert_eq(m.track_bytes, 183501);
	config_free(&c);
}

/* ---- statistics of random I/O ---- */

Test(disk_model, random_io_statistics)
{
	/*
	 * 100,000 random 4 KiB reads over a whole 1 TiB hdd-7200 disk at queue
	 * depth 1 (each submitted when the previous completes).  The mean seek
	 * over the distance distribution of two uniform positions is 0.983 of
	 * seek_avg for this curve (by numerical integration); the spindle angle
	 * at each seek's end is unrelated to the target, so the mean rotational
	 * wait is half a revolution.
	 */
	struct hdd_params p = params(7200, 1.0, 8.5, 18, 150, 150, ROTATION_PHASE);
	struct hdd m;
	struct hdd_io_cost c;
	uint64_t state = 42, now = 0, blocks;
	double seek = 0, rot = 0, service = 0;
	const int n = 100000;

	cr_assert_eq(hdd_init(&m, &p, 1024 * GiB), 0);
	blocks = m.capacity / (4 * KiB);
	for (int i = 0; i < n; i++) {
		uint64_t offset = (splitmix64_next(&state) % blocks) * 4 * KiB;

		now = hdd_submit(&m, now, offset, 4 * KiB, DISK_READ, &c);
		cr_assert_lt(c.rotation_ns, m.rev_ns);
		seek += (double)c.seek_ns;
		rot += (double)c.rotation_ns;
		service += (double)(c.complete_ns - c.start_ns);
	}
	seek /= n;
	rot /= n;
	service /= n;
	cr_assert_leq(fabs(seek - 8500000.0) / 8500000.0, 0.03, "mean seek %.0f ns", seek);
	cr_assert_leq(fabs(rot - m.rev_ns / 2.0) / (m.rev_ns / 2.0), 0.02, "mean rotation %.0f ns",
		      rot);
	/* Service time = seek + rotation + 26,042 ns of transfer. */
	cr_assert_leq(fabs(service - (seek + rot + 26042)), 1.0);
}

/* ---- the registry: the daemon can reach the model by its name ---- */

Test(disk_model, registry_runs_the_hdd_model)
{
	struct hdd_params p = params(7200, 1.0, 8.5, 18, 150, 150, ROTATION_PHASE);
	const struct disk_model_ops *ops = disk_model_find("hdd");
	struct hdd_io_cost b;
	struct disk_io a;
	struct hdd direct;
	void *m = NULL;
	char err[256];

	/* hdd sorts first (order 1); every registered model is found by its name. */
	cr_assert_geq(disk_model_count(), 1);
	cr_assert_eq(ops, &hdd_model);
	cr_assert_eq(disk_model_find("HDD"), &hdd_model);
	cr_assert_null(disk_model_find("none"));
	cr_assert_eq(disk_model_at(0), &hdd_model);
	for (size_t i = 0; i < disk_model_count(); i++)
		cr_assert_eq(disk_model_find(disk_model_at(i)->name), disk_model_at(i));
	cr_assert_null(disk_model_at(disk_model_count()));
	cr_assert_eq(ops->nkeys, 11); /* 6, and 2 of the read-ahead, 3 of the write cache */
	cr_assert_eq(ops->params_size, sizeof(struct hdd_params));
	cr_assert_null(ops->trim, "a rotating disk ignores trims");
	cr_assert_eq(ops->create(&p, 1 * GiB, &m, err, sizeof(err)), 0);
	cr_assert_eq(hdd_init(&direct, &p, 1 * GiB), 0);
	/* The same I/Os cost the same through the table as through hdd_submit(). */
	for (uint64_t i = 0, t = 0; i < 16; i++) {
		uint64_t off = (i * 7919 % 16) * 64 * MiB;
		enum disk_op op = i % 3 ? DISK_READ : DISK_WRITE;
		uint64_t ta = ops->submit(m, op, off, 64 * KiB, t, &a);
		uint64_t tb = hdd_submit(&direct, t, off, 64 * KiB, op, &b);

		cr_assert_eq(ta, tb, "I/O %llu", (unsigned long long)i);
		cr_assert_eq(a.start_ns, b.start_ns);
		cr_assert_eq(a.complete_ns, b.complete_ns);
		cr_assert_eq(a.busy_ns, hdd_busy_ns(&b));
		t = ta;
	}
	hdd_release(&direct);
	ops->destroy(m);
	p.rpm = 0;
	cr_assert_eq(ops->create(&p, 1 * GiB, &m, err, sizeof(err)), -EINVAL);
}

/*
 * The busy time the timing layer adds for each I/O: the head's service,
 * nothing for a write taken into the cache (link time only) but the
 * destages it forced, and a flush's destages.
 */
Test(disk_model, busy_time_is_head_time)
{
	struct hdd_params p = params(6000, 1.0, 8.5, 18, 100, 100, ROTATION_AVERAGE);
	void *m = NULL;
	struct disk_io io;
	char err[256];

	p.write_cache = true;
	p.cache_size = MiB;
	p.interface_mib_s = 200;
	cr_assert_eq(hdd_model.create(&p, 3 * GiB, &m, err, sizeof(err)), 0);
	/* A cached 64 KiB write: 312,500 ns on the link, the head untouched. */
	cr_assert_eq(hdd_model.submit(m, DISK_WRITE, MiB, 64 * KiB, 0, &io), 312500);
	cr_assert_eq(io.busy_ns, 0);
	/*
	 * A flush destages it: seek from 0 to 1 MiB (track 1 ms + the curve),
	 * half a revolution (5 ms) and 625,000 ns of transfer; all head time.
	 */
	uint64_t done = hdd_model.flush(m, 1000000, &io);
	cr_assert_eq(io.busy_ns, done - 1000000);
	cr_assert_gt(io.busy_ns, 5000000 + 625000);
	/* A read from the media: its whole service. */
	cr_assert_eq(hdd_model.submit(m, DISK_READ, 2 * GiB, 4 * KiB, done, &io), io.complete_ns);
	cr_assert_eq(io.busy_ns, io.complete_ns - io.start_ns);
	hdd_model.destroy(m);
}

/*
 * A model says itself why it cannot be built (the daemon prints it when
 * create() refuses): the hdd model names its own parameters, so a message
 * about rpm and transfer rates is never printed for another model.
 */
Test(disk_model, hdd_explains_a_refusal)
{
	struct hdd_params p = params(1e-12, 1.0, 8.5, 18, 150, 150, ROTATION_PHASE);
	void *m = NULL;
	char why[256];

	cr_assert_eq(hdd_model.create(&p, 1 * GiB, &m, why, sizeof(why)), -EINVAL);
	cr_assert_str_eq(why, "the [disk] parameters (rpm = 1e-12, transfer_mib_s = 150,150, "
			      "prefetch = 0) give a revolution or a track the model cannot "
			      "represent (from under one unit to 10^18 ns or bytes)");
}
