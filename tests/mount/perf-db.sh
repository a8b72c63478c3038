#!/bin/bash
# TIMEOUT: 900
# (Not EXCLUSIVE: it asserts what the table holds and how it is computed
# from the rounds' notes, never a figure; the figures are bench/perf's own
# business.  It uses no machine-wide switch: --db runs no sfs-uring.)
# bench/perf --db at a tiny scale (issue 17, item 3): no fio workload, 3
# rounds, pgbench at scale 1 for 2 s, SQLite with 3,000 rows, CSV; checked
# against its own per-round notes:
# - bad --db options exit 2 before anything runs, and so does a --size the
#   daemon would refuse, with the daemon's message (32MiB is accepted);
# - the table's header, and one row per database workload and system (bare,
#   sfs-log, sfs-nolog, sfs-kernel: passthrough_ll is left out of --db), in
#   order; sfs-kernel's mounts are in cache.mode=kernel (the kernel's
#   write-back cache: cache.writeback's default), the others' in none;
# - round 1 runs the systems in the given order, round 2 in reverse;
# - value is the median of the rounds' values; ratio_to_bare and its
#   extremes are the per-round ratios to bare's value of the same round
#   (1.000 for bare); log_vs_nolog only on sfs-log's rows;
# - every pgbench run reported a tps above 0, and the SQLite scan found
#   every row it loaded (bench/perf fails otherwise);
# - with a fio workload too, over 3 rounds: every scatterfs mount for fio
#   has device.direct=true (its O_DIRECT reaches the disk as bare's does)
#   and every one for the databases device.direct=false (bare's databases
#   go through the page cache), in every round (rounds 2 and 3 once ran
#   fio on device.direct=false, after round 1's databases).
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3 fio
PGBIN=/usr/lib/postgresql/15/bin
sfs_require "$PGBIN/initdb" "$PGBIN/pgbench" runuser
id postgres >/dev/null 2>&1 || sfs_skip "no user postgres (the postgresql-15 package creates it)"

PERF=$SFS_ROOT/bench/perf
for bad in "--db --db-runtime 0" "--db --db-scale x" "--db-rows -1 --db" "--workloads none" "--workloads bogus" \
	"--db --db-workloads bogus" "--db --db-workloads sqlite,fio"; do
	rc=0
	# shellcheck disable=SC2086 # split on purpose
	"$PERF" $bad >/dev/null 2>&1 || rc=$?
	assert_eq "$rc" 2 "exit status of bench/perf $bad"
done
# --size is read as the daemon reads a size (the run below gives 32MiB);
# anything else is refused with the daemon's own message, before a mount
for pair in "1GB|write 1G or 1GiB (powers of 1024); KB/MB/GB/TB are not accepted" \
	"1.5G|not a size: no fractions (use a smaller unit: 1536M, not 1.5G)"; do
	v=${pair%%|*} rc=0
	SCATTERFS_BUILD=$SFS_BUILD "$PERF" --workloads none --db --size "$v" >/dev/null 2>"$SFS_TMP/size.err" </dev/null || rc=$?
	assert_eq "$rc" 2 "exit status of bench/perf --size $v"
	assert_eq "$(tail -n 1 "$SFS_TMP/size.err")" "bench/perf: --size $v: ${pair#*|}" "message of bench/perf --size $v"
done

out=$SFS_TMP/perf.csv
err=$SFS_TMP/perf.err
sfs_add_log "$err"
SCATTERFS_BUILD=$SFS_BUILD "$PERF" --workloads none --db --rounds 3 --db-runtime 2 --db-scale 1 \
	--db-rows 3000 --size 32MiB --format csv >"$out" 2>"$err" </dev/null || fail "bench/perf --db exited $?"
sfs_add_log "$out"
cat "$out"

systems=(bare sfs-log sfs-nolog sfs-kernel)
assert_eq "$(head -n 1 "$out")" \
	"workload,system,metric,value,ratio_to_bare,ratio_min,ratio_max,log_vs_nolog,log_min,log_max,rounds,undersampled" "CSV header"
want=
for w in pgbench,tps sqlite-load,load_s sqlite-scan,scan_s; do
	for s in "${systems[@]}"; do want+="${w%,*},$s,${w#*,} "; done
done
assert_eq "$(tail -n +2 "$out" | cut -d, -f1-3 | tr '\n' ' ')" "$want" "one row per workload and system, in order"

# Notes: "round R: pgbench on S: TPS tps", "round R: sqlite on S: load L s, scan C s"
pg=$(sed -n 's/.*round \([0-9]\): pgbench on \([a-z-]*\): \([0-9.]*\) tps$/\1 \2 \3/p' "$err")
sq=$(sed -n 's/.*round \([0-9]\): sqlite on \([a-z-]*\): load \([0-9.]*\) s, scan \([0-9.]*\) s$/\1 \2 \3 \4/p' "$err")
for r in 1 2 3; do
	order="bare sfs-log sfs-nolog sfs-kernel "
	((r == 2)) && order="sfs-kernel sfs-nolog sfs-log bare "
	assert_eq "$(awk -v r=$r '$1 == r { printf "%s ", $2 }' <<<"$pg")" "$order" "round $r: order of the systems (pgbench)"
	assert_eq "$(awk -v r=$r '$1 == r { printf "%s ", $2 }' <<<"$sq")" "$order" "round $r: order of the systems (sqlite)"
done
awk '!($3 > 0) { exit 1 }' <<<"$pg" || fail "a pgbench run without transactions: $pg"
# The cache mode of each database run: the mount note before its note.
modes=$(awk '/mounted .*options / { m = $0; sub(/.*cache\.mode=/, "", m); sub(/,.*/, "", m) }
	/round 1: [a-z]* on sfs-/ { s = $0; sub(/.* on /, "", s); sub(/:.*/, "", s); printf "%s=%s ", s, m }' "$err")
assert_eq "$modes" "sfs-log=none sfs-nolog=none sfs-kernel=kernel sfs-log=none sfs-nolog=none sfs-kernel=kernel " \
	"round 1: cache.mode of each scatterfs system's database runs"

val() { # WORKLOAD ROUND SYSTEM
	case $1 in
	pgbench) awk -v r="$2" -v s="$3" '$1 == r && $2 == s { print $3 }' <<<"$pg" ;;
	sqlite-load) awk -v r="$2" -v s="$3" '$1 == r && $2 == s { print $3 }' <<<"$sq" ;;
	sqlite-scan) awk -v r="$2" -v s="$3" '$1 == r && $2 == s { print $4 }' <<<"$sq" ;;
	esac
}
mid3() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
low3() { printf '%s\n' "$@" | sort -n | head -1; }
high3() { printf '%s\n' "$@" | sort -n | tail -1; }
ratios() { # WORKLOAD A B -> the 3 per-round ratios of A's value to B's
	for r in 1 2 3; do awk -v a="$(val "$1" $r "$2")" -v b="$(val "$1" $r "$3")" 'BEGIN { printf "%.3f\n", a / b }'; done
}
for w in pgbench sqlite-load sqlite-scan; do
	for s in "${systems[@]}"; do
		IFS=, read -r _ _ _ v rb rlo rhi lv llo lhi nr us < <(awk -F, -v w="$w" -v s="$s" '$1 == w && $2 == s' "$out")
		assert_eq "$nr,$us" "3," "$w on $s: rounds, undersampled"
		assert_eq "$v" "$(mid3 $(val $w 1 $s) $(val $w 2 $s) $(val $w 3 $s))" "$w on $s: value, the median of the rounds"
		mapfile -t rr < <(ratios $w "$s" bare)
		assert_eq "$rb,$rlo,$rhi" "$(mid3 "${rr[@]}"),$(low3 "${rr[@]}"),$(high3 "${rr[@]}")" \
			"$w on $s: ratio_to_bare, ratio_min, ratio_max from the rounds"
		if [[ $s == sfs-log ]]; then
			mapfile -t rr < <(ratios $w sfs-log sfs-nolog)
			assert_eq "$lv,$llo,$lhi" "$(mid3 "${rr[@]}"),$(low3 "${rr[@]}"),$(high3 "${rr[@]}")" \
				"$w: log_vs_nolog, log_min, log_max from the rounds"
		else
			assert_eq "$lv,$llo,$lhi" ",," "$w on $s: no log columns"
		fi
	done
done

# Which device.direct each run had: the mount note before each run's note.
SCATTERFS_BUILD=$SFS_BUILD "$PERF" --workloads randread-8k --systems bare,sfs-nolog --no-paired \
	--rounds 3 --runtime 1 --db --db-runtime 1 --db-scale 1 --db-rows 1000 --size 32M \
	>"$SFS_TMP/perf2.txt" 2>"$err" </dev/null || fail "bench/perf with fio and --db exited $?"
runs=$(awk '/mounted .*options / { d = ($0 ~ /device.direct=true/) ? "true" : ($0 ~ /device.direct=false/) ? "false" : "unset" }
	/round [0-9]: [a-z0-9-]* on sfs-nolog:/ { sub(/.*round /, ""); sub(/ on sfs-nolog:.*/, ""); printf "%s=%s ", $0, d }' "$err")
want=
for r in 1 2 3; do want+="$r: randread-8k=true $r: pgbench=false $r: sqlite=false "; done
assert_eq "$runs" "$want" "device.direct of scatterfs's run of each workload, round by round"
note "pass"
