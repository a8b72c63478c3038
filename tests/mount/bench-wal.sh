#!/bin/bash
# TIMEOUT: 600
# bench/wal at a tiny scale (pgbench scale 1, 2 clients, 3 or 4 s runs):
# bad options stop it with exit 2 and a message naming them (bench/run's
# for a --set the daemon refuses and a missing layout).  pg_wal on a
# device of its own with --layouts contiguous,equi-fragmented, a fixed
# rate of 10 transactions/s and --jobs 2 (two configurations side by
# side, each PostgreSQL on its own port): the CSV header with the layout
# column first and vs_baseline last, one row per layout, placement and
# rate case (contiguous first, max then 10), each with transactions > 0,
# tps > 0, latencies p50 <= p90 <= p99, the number of latency samples, the
# percentiles those are too few for (undersampled: p90 from 10 samples,
# p99 from 100, exactly as 100/(100-p) gives them), device I/Os of the
# pg_wal files, and vs_baseline, tps over contiguous's at the same
# placement and rate (1.00 for contiguous); bench/wal itself checks from
# each run's request log that every pg_wal device I/O went to the device
# wal and every other one to main.  Then pg_wal on the data device
# (--placements shared) under conf/ssd-nvme.ini, rate auto, as a text
# table: exit 0, the title names the model, a row as fast as it goes and
# one at the fixed rate, which is half its tps (rounded down), as stderr
# says.  A scatterfs without several devices refuses the [device "wal"]
# section, and bench/wal says so before mounting anything: the test then
# runs the layouts on the data device alone, checks their rows the same
# way, and is skipped.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

sfs_pg_setup 54438 # skips without PostgreSQL 15 (bench/wal uses its own ports)
WAL=$SFS_ROOT/bench/wal
out=$SFS_TMP/out.csv
err=$SFS_TMP/err
sfs_add_log "$err"

# bench_wal ARGS... - bench/wal ARGS... into $out and $err; sets rc
bench_wal() {
	rc=0
	SCATTERFS_BUILD=$SFS_BUILD TMPDIR=$SFS_TMP "$WAL" "$@" >"$out" 2>"$err" </dev/null || rc=$?
}

note "bad input"
bench_wal --placements data
assert_eq "$rc" 2 "exit status of --placements data"
assert_eq "$(cat "$err")" "bench/wal: --placements: 'data' is neither shared nor own" "--placements data"
bench_wal --rate fast
assert_eq "$(cat "$err")" "bench/wal: --rate must be auto or a positive number of transactions per second, not 'fast'" "--rate fast"
bench_wal --set log.ops=read
assert_eq "$(cat "$err")" "bench/wal: --set log.ops: the runs log read, write, extend and fsync (wal_device_ios counts them)" "--set log.ops"
bench_wal --set layout.pattern=nosuch
assert_eq "$rc" 2 "exit status of a bad --set"
grep -q "^bench/run: --set layout.pattern=nosuch: .*unknown value; allowed: " "$err" || fail "a bad --set: $(cat "$err")"
bench_wal --layouts nosuch
assert_eq "$rc" 2 "exit status of --layouts nosuch"
grep -q "no layout 'nosuch' (conf/nosuch.ini)" "$err" || fail "--layouts nosuch: $(cat "$err")"
bench_wal --help
assert_eq "$rc" 0 "exit status of --help"
grep -q '^  bench/wal \[--placements shared,own\]' "$out" || fail "--help: no usage line"

# check_rows PLACEMENT - the rows of two layouts at PLACEMENT, max then 10
check_rows() {
	assert_eq "$(head -n 1 "$out")" \
		"layout,placement,rate,transactions,tps,lat_avg_ms,lat_samples,lat_p50_ms,lat_p90_ms,lat_p99_ms,wal_device_ios,wal_far_pct,undersampled,vs_baseline" \
		"CSV header"
	assert_eq "$(awk -F, 'NR > 1 { printf "%s,%s,%s ", $1, $2, $3 }' "$out")" \
		"contiguous,$1,max contiguous,$1,10 equi-fragmented,$1,max equi-fragmented,$1,10 " "rows (layout,placement,rate)"
	awk -F, 'NR > 1 && !($4 > 0 && $5 > 0 && $7 > 0 && $8 <= $9 && $9 <= $10 && $11 > 0) { print; bad = 1 } END { exit bad }' "$out" ||
		fail "a row without transactions, tps, samples, ordered percentiles or pg_wal device I/Os: $(cat "$out")"
	# undersampled: p50 below 2 samples, p90 below 10, p99 below 100
	awk -F, 'NR > 1 { u = ""; if ($7 < 2) u = "p50"; if ($7 < 10) u = u (u == "" ? "" : ";") "p90"
			if ($7 < 100) u = u (u == "" ? "" : ";") "p99"
			if ($13 != u) { print "row " NR - 1 ": " $7 " samples, undersampled \"" $13 "\", expected \"" u "\""; bad = 1 } }
		END { exit bad }' "$out" || fail "undersampled: $(cat "$out")"
	awk -F, 'NR > 1 && $1 == "contiguous" { c[$2 "," $3] = $5 }
		NR > 1 && $14 != sprintf("%.2f", $5 / c[$2 "," $3]) { bad = 1 }
		END { exit bad }' "$out" || fail "vs_baseline is not tps over contiguous's: $(cat "$out")"
}

note "pg_wal on a device of its own, once per layout, two configurations at a time"
layouts=(--layouts contiguous,equi-fragmented --scale 1 --clients 2 --runtime 3 --rate 10 --jobs 2 --format csv)
bench_wal --placements own "${layouts[@]}"
if ((rc == 2)) && grep -q 'refuses the two-device configuration.*unknown section \[device "wal"\]' "$err"; then
	why=$(grep -m 1 '^bench/wal: ' "$err")
	note "pg_wal on the data device"
	bench_wal --placements shared "${layouts[@]}"
	((rc == 0)) || fail "bench/wal --placements shared exited $rc"
	cat "$out"
	check_rows shared
	sfs_skip "the one-device case passed; this scatterfs has no [device \"NAME\"] sections yet ($why)"
fi
((rc == 0)) || fail "bench/wal --placements own --layouts exited $rc"
cat "$out"
check_rows own

# The text table on conf/ssd-nvme.ini at the rate auto: 4 s as fast as it
# goes and at half that give every percentile its samples (p99 needs 100)
# unless the machine is very slow: bench/wal used to end with a false
# `grep -q ... && echo` then and exit 1 after printing the table.
note "the text table, on the ssd-nvme preset, rate auto"
bench_wal --placements shared --scale 1 --clients 2 --runtime 4 --format text --disk "$SFS_ROOT/conf/ssd-nvme.ini"
cat "$out"
((rc == 0)) || fail "bench/wal --format text --disk conf/ssd-nvme.ini exited $rc"
grep -q 'disk model ssd-nvme.ini on every device' "$out" || fail "the text table's title names no ssd-nvme.ini"
tps=$(awk '$1 == "shared" && $2 == "max" { print $4 }' "$out")
rate=$(awk -v t="$tps" 'BEGIN { print int(t / 2) }')
assert_eq "$(grep -cE "^shared +(max|$rate) " "$out")" 2 "rows of the text table (max at $tps tps, then $rate)"
grep -q "fixed rate: $rate transactions/s (half the tps of shared as fast as it goes)" "$err" || fail "no fixed rate $rate on stderr"
grep -q '^\* too few samples' "$out" || note "no percentile undersampled: the table's end ran without the footnote"
note "pass"
