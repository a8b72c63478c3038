#!/bin/bash
# TIMEOUT: 600
# bench/wal at a tiny scale (pgbench scale 1, 2 clients, 3 s runs, a fixed
# rate of 10 transactions/s): bad options stop it with exit 2 and a message
# naming them.  --layouts contiguous,equi-fragmented runs it once per
# layout: a layout column first, vs_baseline (tps over contiguous's at the
# same placement and rate) last, 1.00 for contiguous.  A text table with
# --disk conf/ssd-nvme.ini exits 0.  Then both placements in one run
# (--placements shared,own): it prints the CSV header and one row per
# placement and rate case, max then 10, shared then own, each with
# transactions > 0, tps > 0, latencies p50 <= p90 <= p99, the number of
# latency samples, the percentiles those are too few for (undersampled:
# p90 from 10 samples, p99 from 100, exactly as 100/(100-p) gives them),
# and device I/Os of the pg_wal files; with pg_wal on a device of its own,
# bench/wal itself checks from the request log that every pg_wal device
# I/O went to the device wal and every other one to main.  A scatterfs
# without several devices refuses the [device "wal"] section, and
# bench/wal says so before mounting anything: the test then runs pg_wal on
# the data device alone (--placements shared), checks its rows the same
# way, and is skipped.  (pg_wal on the data device alone used to run first
# as well, the same rows as the shared ones here: 30 s of the test.)
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

sfs_pg_setup 54438 # skips without PostgreSQL 15 (bench/wal uses its own port)
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
bench_wal --set layout.pattern=nosuch
assert_eq "$rc" 2 "exit status of a bad --set"
grep -q "^wal: --set layout.pattern=nosuch: .*unknown value; allowed: " "$err" || fail "a bad --set: $(cat "$err")"
bench_wal --layouts nosuch
assert_eq "$rc" 2 "exit status of --layouts nosuch"
grep -q "no layout 'nosuch' (conf/nosuch.ini)" "$err" || fail "--layouts nosuch: $(cat "$err")"
bench_wal --help
assert_eq "$rc" 0 "exit status of --help"
grep -q '^  bench/wal \[--placements shared,own\]' "$out" || fail "--help: no usage line"

# check_rows PLACEMENT... - a row per placement and rate case, in run order
check_rows() {
	local want=placement,rate,transactions,tps,lat_avg_ms,lat_samples,lat_p50_ms,lat_p90_ms,lat_p99_ms,wal_device_ios,wal_far_pct,undersampled
	assert_eq "$(head -n 1 "$out")" "$want" "CSV header"
	local expect='' p r
	for r in max 10; do
		for p in "$@"; do expect+="$p,$r "; done
	done
	assert_eq "$(awk -F, 'NR > 1 { printf "%s,%s ", $1, $2 }' "$out")" "$expect" "rows (placement,rate)"
	awk -F, 'NR > 1 && !($3 > 0 && $4 > 0 && $6 > 0 && $7 <= $8 && $8 <= $9 && $10 > 0) { print; bad = 1 } END { exit bad }' "$out" ||
		fail "a row without transactions, tps, samples, ordered percentiles or pg_wal device I/Os: $(cat "$out")"
	# undersampled: p50 below 2 samples, p90 below 10, p99 below 100
	awk -F, 'NR > 1 { u = ""; if ($6 < 2) u = "p50"; if ($6 < 10) u = u (u == "" ? "" : ";") "p90"
			if ($6 < 100) u = u (u == "" ? "" : ";") "p99"
			if ($12 != u) { print "row " NR - 1 ": " $6 " samples, undersampled \"" $12 "\", expected \"" u "\""; bad = 1 } }
		END { exit bad }' "$out" || fail "undersampled: $(cat "$out")"
}

note "once per layout"
bench_wal --placements shared --layouts contiguous,equi-fragmented --scale 1 --clients 2 --runtime 3 --rate 10 --format csv
((rc == 0)) || fail "bench/wal --layouts exited $rc"
cat "$out"
assert_eq "$(head -n 1 "$out")" \
	"layout,placement,rate,transactions,tps,lat_avg_ms,lat_samples,lat_p50_ms,lat_p90_ms,lat_p99_ms,wal_device_ios,wal_far_pct,undersampled,vs_baseline" \
	"--layouts: CSV header"
assert_eq "$(awk -F, 'NR > 1 { printf "%s,%s,%s ", $1, $2, $3 }' "$out")" \
	"contiguous,shared,max contiguous,shared,10 equi-fragmented,shared,max equi-fragmented,shared,10 " "--layouts: rows"
awk -F, 'NR > 1 { split($0, f, ","); c[$2 "," $3] = $1 == "contiguous" ? $5 : c[$2 "," $3] }
	NR > 1 && $1 == "contiguous" && $14 != "1.00" { bad = 1 }
	NR > 1 && $1 != "contiguous" && $14 != sprintf("%.2f", $5 / c[$2 "," $3]) { bad = 1 }
	END { exit bad }' "$out" || fail "--layouts: vs_baseline is not tps over contiguous's"

# The text table on conf/ssd-nvme.ini: exit 0 and both rows.  4 s as fast
# as it goes and at 60 transactions/s give every percentile its samples
# (p99 needs 100) unless the machine is very slow: bench/wal used to end
# with a false `grep -q ... && echo` then and exit 1 after printing the table.
note "the text table, on the ssd-nvme preset"
bench_wal --placements shared --scale 1 --clients 2 --runtime 4 --rate 60 --format text \
	--disk "$SFS_ROOT/conf/ssd-nvme.ini"
cat "$out"
((rc == 0)) || fail "bench/wal --format text --disk conf/ssd-nvme.ini exited $rc"
grep -q 'disk model ssd-nvme.ini on every device' "$out" || fail "the text table's title names no ssd-nvme.ini"
assert_eq "$(grep -cE '^shared +(max|60) ' "$out")" 2 "rows of the text table"
grep -q '^\* too few samples' "$out" || note "no percentile undersampled: the table's end ran without the footnote"

# Both placements in one run (shared's rows are checked as a run of shared
# alone would be); a scatterfs without [device "NAME"] sections: shared
# alone, then skip.
note "pg_wal on the data device and on a device of its own"
bench_wal --placements shared,own --scale 1 --clients 2 --runtime 3 --rate 10 --format csv
if ((rc == 2)) && grep -q 'refuses the two-device configuration.*unknown section \[device "wal"\]' "$err"; then
	why=$(grep -m 1 '^bench/wal: ' "$err")
	note "pg_wal on the data device"
	bench_wal --placements shared --scale 1 --clients 2 --runtime 3 --rate 10 --format csv
	((rc == 0)) || fail "bench/wal --placements shared exited $rc"
	cat "$out"
	check_rows shared
	sfs_skip "the one-device case passed; this scatterfs has no [device \"NAME\"] sections yet ($why)"
fi
((rc == 0)) || fail "bench/wal --placements shared,own exited $rc"
cat "$out"
check_rows shared own
