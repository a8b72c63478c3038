#!/bin/bash
# TIMEOUT: 300
# EXCLUSIVE: it measures throughput (tests/run runs it alone)
# (it took 48 s on 2 vCPUs shared with other builds, 2026-12-01)
# bench/perf at a tiny scale (one workload, 3 rounds of 1 s, a 32 MiB file,
# CSV), checked against its own per-round notes:
# - bad options exit 2 before anything runs;
# - the header names the columns in order, one row per system;
# - round 1 runs the systems in the given order, round 2 in reverse,
#   round 3 in the given order again;
# - mib_s is the median of the rounds' MiB/s (rounds 3; with --rounds 1
#   undersampled says "median"); ratio_to_bare is the median
#   of the per-round ratios to the bare run of the same round, ratio_min and
#   ratio_max the extremes (1.000 for bare itself); log_vs_nolog, log_min and
#   log_max are the same for sfs-log over sfs-nolog, and empty on other rows;
# - each round ends with a paired run (sfs-log and sfs-nolog at the same
#   time); log_paired, paired_min and paired_max are their per-round
#   ratios' median and extremes on sfs-log's row, empty elsewhere, and
#   empty with --no-paired, which runs no paired run;
# - ratio_to_ptll is the median of the per-round ratios to passthrough_ll
#   on scatterfs's rows, empty on bare's and ptll's;
# - sfs-uring (scatterfs on FUSE over io_uring) runs where the kernel has
#   it (enable_uring, set for the run and restored: checked after), and is
#   otherwise skipped with a message naming the parameter;
# - passthrough_ll runs when Debian ships its source, and is otherwise
#   skipped with a message naming the missing file.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require fio python3

PERF=$SFS_ROOT/bench/perf
[[ -x $PERF ]] || fail "bench/perf is missing or not executable"
for bad in "--rounds 0" "--format xml" "--bogus 1"; do
	rc=0
	# shellcheck disable=SC2086 # split on purpose
	"$PERF" $bad >/dev/null 2>&1 || rc=$?
	assert_eq "$rc" 2 "exit status of bench/perf $bad"
done

systems=(bare sfs-log sfs-nolog sfs-uring ptll)
uring_param=/sys/module/fuse/parameters/enable_uring
uring_before=$(cat "$uring_param" 2>/dev/null || echo missing)
out=$SFS_TMP/perf.csv
err=$SFS_TMP/perf.err
SCATTERFS_BUILD=$SFS_BUILD "$PERF" --rounds 3 --runtime 1 --size 32M --workloads randread-8k \
	--systems "$(
		IFS=,
		echo "${systems[*]}"
	)" --format csv >"$out" 2>"$err" </dev/null || {
	rc=$?
	sfs_add_log "$err"
	fail "bench/perf exited $rc"
}
sfs_add_log "$err"
sfs_add_log "$out"
cat "$out"
if grep -q 'passthrough_ll skipped' "$err"; then
	[[ ! -f /usr/share/doc/libfuse3-dev/examples/passthrough_ll.c ]] ||
		fail "passthrough_ll was skipped although its source is installed"
	grep -q '/usr/share/doc/libfuse3-dev/examples/passthrough_ll.c' "$err" ||
		fail "the skip message does not name the missing source"
	systems=("${systems[@]/ptll/}")
fi
if grep -q 'sfs-uring skipped' "$err"; then
	[[ ! -w $uring_param ]] || fail "sfs-uring was skipped although $uring_param is writable"
	grep -q "$uring_param" "$err" || fail "the skip message does not name $uring_param"
	systems=("${systems[@]/sfs-uring/}")
fi
mapfile -t systems < <(printf '%s\n' "${systems[@]}" | grep .)
assert_eq "$(cat "$uring_param" 2>/dev/null || echo missing)" "$uring_before" "enable_uring after bench/perf"

assert_eq "$(head -n 1 "$out")" \
	"workload,system,mib_s,iops,ratio_to_bare,ratio_min,ratio_max,log_vs_nolog,log_min,log_max,log_paired,paired_min,paired_max,rounds,undersampled,ratio_to_ptll" "CSV header"
assert_eq "$(tail -n +2 "$out" | cut -d, -f1,2 | tr '\n' ' ')" \
	"$(printf 'randread-8k,%s ' "${systems[@]}")" "one row per system, in order"

# The notes: "round R: randread-8k on SYSTEM: MIB IOPS (MiB/s IOPS)".
notes=$(sed -n 's/.*round \([0-9]\): randread-8k on \([a-z-]*\): \([0-9.]*\) \([0-9]*\) .*/\1 \2 \3 \4/p' "$err")
reversed=()
for ((i = ${#systems[@]} - 1; i >= 0; i--)); do reversed+=("${systems[i]}"); done
for r in 1 2 3; do
	want=("${systems[@]}")
	((r == 2)) && want=("${reversed[@]}")
	assert_eq "$(awk -v r=$r '$1 == r { printf "%s ", $2 }' <<<"$notes")" "$(printf '%s ' "${want[@]}")" \
		"round $r: order of the systems"
done
mib() { awk -v r="$1" -v s="$2" '$1 == r && $2 == s { print $3 }' <<<"$notes"; }
mid3() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
low3() { printf '%s\n' "$@" | sort -n | head -1; }
high3() { printf '%s\n' "$@" | sort -n | tail -1; }
ratios() { # A B -> the 3 per-round ratios of A's MiB/s to B's
	for r in 1 2 3; do awk -v a="$(mib $r "$1")" -v b="$(mib $r "$2")" 'BEGIN { printf "%.3f\n", a / b }'; done
}
# "round R: randread-8k paired: sfs-log MIB IOPS, sfs-nolog MIB IOPS (MiB/s IOPS)"
paired=$(sed -n 's/.*round \([0-9]\): randread-8k paired: sfs-log \([0-9.]*\) [0-9]*, sfs-nolog \([0-9.]*\) .*/\1 \2 \3/p' "$err")
assert_eq "$(awk '{ printf "%s ", $1 }' <<<"$paired")" "1 2 3 " "one paired run per round"
mapfile -t pr < <(awk '{ printf "%.3f\n", $2 / $3 }' <<<"$paired")
for s in "${systems[@]}"; do
	IFS=, read -r _ _ m _ rb rlo rhi lv llo lhi pv plo phi nr us rp < <(awk -F, -v s="$s" '$2 == s' "$out")
	assert_eq "$nr,$us" "3," "$s: rounds, undersampled"
	assert_eq "$m" "$(mid3 $(mib 1 "$s") $(mib 2 "$s") $(mib 3 "$s"))" "$s: mib_s, the median of the rounds"
	mapfile -t rr < <(ratios "$s" bare)
	assert_eq "$rb,$rlo,$rhi" "$(mid3 "${rr[@]}"),$(low3 "${rr[@]}"),$(high3 "${rr[@]}")" \
		"$s: ratio_to_bare, ratio_min, ratio_max from the rounds"
	if [[ $s == sfs-log ]]; then
		mapfile -t rr < <(ratios sfs-log sfs-nolog)
		assert_eq "$lv,$llo,$lhi" "$(mid3 "${rr[@]}"),$(low3 "${rr[@]}"),$(high3 "${rr[@]}")" \
			"sfs-log: log_vs_nolog, log_min, log_max from the rounds"
		assert_eq "$pv,$plo,$phi" "$(mid3 "${pr[@]}"),$(low3 "${pr[@]}"),$(high3 "${pr[@]}")" \
			"sfs-log: log_paired, paired_min, paired_max from the paired runs"
	else
		assert_eq "$lv,$llo,$lhi,$pv,$plo,$phi" ",,,,," "$s: no log columns"
	fi
	if [[ $s == sfs-* && " ${systems[*]} " == *" ptll "* ]]; then
		mapfile -t rr < <(ratios "$s" ptll)
		assert_eq "$rp" "$(mid3 "${rr[@]}")" "$s: ratio_to_ptll from the rounds"
	else
		assert_eq "$rp" "" "$s: no ratio_to_ptll"
	fi
done
assert_eq "$(awk -F, '$2 == "bare" { print $5, $6, $7 }' "$out")" "1.000 1.000 1.000" "bare against itself"

SCATTERFS_BUILD=$SFS_BUILD "$PERF" --rounds 1 --runtime 1 --size 32M --workloads randread-8k \
	--systems sfs-log,sfs-nolog --no-paired --format csv >"$out" 2>"$err" </dev/null ||
	fail "bench/perf --no-paired exited $?"
assert_eq "$(grep -c paired "$err")" 0 "paired runs with --no-paired"
assert_eq "$(awk -F, '$2 == "sfs-log" { print $11 "," $12 "," $13 }' "$out")" ",," "paired columns with --no-paired"
assert_eq "$(awk -F, '$2 == "sfs-log" { print $14 "," $15 }' "$out")" "1,median" "rounds and undersampled of one round"
note "pass"
