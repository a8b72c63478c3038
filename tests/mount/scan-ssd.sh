#!/bin/bash
# TIMEOUT: 300
# bench/scan --disk conf/ssd-nvme.ini at a tiny scale (contiguous and
# equi-fragmented, 96 KiB reads, 2 runs, CSV): FragPicker's question on
# flash.  The CSV has the hdd header plus the drive's own columns
# (busy_ms,busy_vs_baseline,commands,collisions,collision_ms,splitting_ms,
# late_replies,modelled_replies); each row's drive busy time is positive;
# equi-fragmented's scan takes more read commands than contiguous's (its
# reads split at the extents' boundaries); the baseline's own row has
# busy_vs_baseline 1.00 and splitting_ms 0.000; equi-fragmented's
# busy_vs_baseline is its busy_ms over contiguous's and its splitting_ms is
# exactly the extra busy time minus the extra collision wait; late replies
# are at most the modelled ones; stderr has the line that splits the extra
# drive time into collisions and splitting.  Under --cache none (reads
# the database's own, "app") the same table and line (the table step
# failed on "app" as a read size, after every run).
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require sqlite3
sfs_require python3

out=$SFS_TMP/scan.csv
SCATTERFS_BUILD=$SFS_BUILD "$SFS_ROOT/bench/scan" --rows 20000 --runs 2 --read-sizes 96K \
	--layouts contiguous,equi-fragmented --disk conf/ssd-nvme.ini --format csv \
	>"$out" 2>"$SFS_TMP/scan.err" </dev/null || {
	rc=$?
	sfs_add_log "$SFS_TMP/scan.err"
	fail "bench/scan exited $rc"
}
sfs_add_log "$out"
sfs_add_log "$SFS_TMP/scan.err"
cat "$out"
assert_eq "$(head -n 1 "$out")" "layout,read_size,runs,first_s,min_s,avg_s,max_s,device_ios,dominant_read_size,vs_baseline,error,busy_ms,busy_vs_baseline,commands,collisions,collision_ms,splitting_ms,late_replies,modelled_replies" "CSV header"
assert_eq "$(tail -n +2 "$out" | cut -d, -f1 | tr '\n' ' ')" "contiguous equi-fragmented " "rows"
col() { awk -F, -v o="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) n[$i] = i; next } $1 == o { print $n[c] }' "$out"; }
for l in contiguous equi-fragmented; do
	assert_eq "$(col $l error)" "" "$l: error"
	awk -v b="$(col $l busy_ms)" 'BEGIN { exit !(b > 0) }' || fail "$l: busy_ms '$(col $l busy_ms)'"
	(($(col $l late_replies) <= $(col $l modelled_replies) && $(col $l modelled_replies) > 0)) ||
		fail "$l: late $(col $l late_replies) of $(col $l modelled_replies) modelled replies"
done
(($(col equi-fragmented commands) > $(col contiguous commands))) ||
	fail "equi-fragmented took $(col equi-fragmented commands) read commands per scan, contiguous $(col contiguous commands): no splitting"
assert_eq "$(col contiguous busy_vs_baseline)" 1.00 "contiguous: busy_vs_baseline"
assert_eq "$(col contiguous splitting_ms)" 0.000 "contiguous: splitting_ms"
assert_eq "$(col equi-fragmented busy_vs_baseline)" \
	"$(awk -v a="$(col equi-fragmented busy_ms)" -v b="$(col contiguous busy_ms)" 'BEGIN { printf "%.2f", a / b }')" \
	"equi-fragmented: busy_vs_baseline"
assert_eq "$(col equi-fragmented splitting_ms)" \
	"$(awk -v a="$(col equi-fragmented busy_ms)" -v b="$(col contiguous busy_ms)" \
		-v c="$(col equi-fragmented collision_ms)" -v d="$(col contiguous collision_ms)" 'BEGIN { printf "%.3f", (a - b) - (c - d) }')" \
	"equi-fragmented: splitting_ms (extra busy minus extra collision wait)"
grep -q "^  equi-fragmented at 96K reads: .* ms of drive time per scan against contiguous .*: collisions .* ms (.* pages waited on a busy die), splitting .* ms (+$(($(col equi-fragmented commands) - $(col contiguous commands))) read commands)$" "$SFS_TMP/scan.err" ||
	fail "no line splitting equi-fragmented's extra drive time on stderr"
note "pass: equi-fragmented $(col equi-fragmented busy_vs_baseline) times contiguous's drive time, splitting $(col equi-fragmented splitting_ms) ms"

SCATTERFS_BUILD=$SFS_BUILD "$SFS_ROOT/bench/scan" --rows 5000 --runs 2 --cache none \
	--layouts contiguous,equi-fragmented --disk conf/ssd-nvme.ini >"$out" 2>"$SFS_TMP/scan.err" </dev/null ||
	{ rc=$?; sfs_add_log "$SFS_TMP/scan.err"; fail "bench/scan --cache none exited $rc"; }
grep -q "^  equi-fragmented at app reads: .* ms of drive time per scan against contiguous" "$out" ||
	{ sfs_add_log "$out"; fail "bench/scan --cache none: no line splitting equi-fragmented's extra drive time"; }
