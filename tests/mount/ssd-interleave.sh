#!/bin/bash
# TIMEOUT: 300
# bench/ssd-interleave at a tiny scale (20,000 rows, 2 scans, CSV): FAST
# 2024's direction on conf/ssd-nvme.ini.  It exits 0 and prints exactly
# the header and three rows (alone, interleaved, floor); both orders hold
# the table in the same extents (the script checks the maps match) after
# the same host writes (host_pages_written equal); each cold scan reads
# every flash page of the table once (pages = bytes / 4096) in as many
# read commands in both orders; written alone, every read's pages sit on
# consecutive dies (a 128 KiB read is 32 pages, fewer than the 96 dies):
# dies_per_read = pages / reads exactly, no collision and no collision
# wait; written interleaved, the reads touch fewer dies than pages,
# collide, wait, and take more of the drive's time (vs_alone > 1, the
# direction of the paper's 40 %).  The table's flash layout score
# (layout/PATH) is what the model's write-order rule predicts, exactly:
# alone every neighbouring pair of its pages on different dies
# (flash_apart = flash_pairs = pages - 1), interleaved all but the pairs
# across a boundary after an other write of dies - 1 pages
# (predicted_apart, from the seeded sizes).  The floor row has no model's
# figures.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require sqlite3
sfs_require python3

out=$SFS_TMP/si.csv
SCATTERFS_BUILD=$SFS_BUILD "$SFS_ROOT/bench/ssd-interleave" --rows 20000 --runs 2 --format csv \
	>"$out" 2>"$SFS_TMP/si.err" </dev/null || {
	rc=$?
	sfs_add_log "$SFS_TMP/si.err"
	fail "bench/ssd-interleave exited $rc"
}
sfs_add_log "$out"
sfs_add_log "$SFS_TMP/si.err"
cat "$out"
assert_eq "$(head -n 1 "$out")" "order,rows,bytes,pieces,host_pages,extents,flash_pairs,flash_apart,predicted_apart,runs,wall_s,busy_ms,reads,pages,dies_per_read,collisions,collision_ms,late_replies,modelled_replies,vs_alone" "CSV header"
assert_eq "$("$SFS_ROOT/bench/ssd-interleave" --help | grep -o '^`order,[^`]*`' | tr -d '`')" "$(head -n 1 "$out")" \
	"the CSV header --help gives"
assert_eq "$(tail -n +2 "$out" | cut -d, -f1 | tr '\n' ' ')" "alone interleaved floor " "rows"
col() { awk -F, -v o="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) n[$i] = i; next } $1 == o { print $n[c] }' "$out"; }

bytes=$(col alone bytes)
((bytes > 0 && bytes % 4096 == 0)) || fail "table bytes '$bytes'"
assert_eq "$(col interleaved bytes)" "$bytes" "the table's bytes in both orders"
assert_eq "$(col alone host_pages)" "$(col interleaved host_pages)" "host_pages_written after both orders' writes"
assert_eq "$(col alone extents)" "$(col interleaved extents)" "the table's extents in both orders"
assert_eq "$(col alone runs)" 1 "kept scans"
for o in alone interleaved; do
	assert_eq "$(col $o pages)" $((bytes / 4096)) "$o: flash pages read per cold scan (every page of the table once)"
done
assert_eq "$(col alone flash_pairs)" $((bytes / 4096 - 1)) "alone: flash_pairs (neighbouring pages)"
assert_eq "$(col alone flash_apart)" $((bytes / 4096 - 1)) "alone: flash_apart (every neighbour on another die)"
assert_eq "$(col alone predicted_apart)" $((bytes / 4096 - 1)) "alone: predicted_apart"
assert_eq "$(col interleaved flash_pairs)" $((bytes / 4096 - 1)) "interleaved: flash_pairs"
assert_eq "$(col interleaved flash_apart)" "$(col interleaved predicted_apart)" "interleaved: flash_apart against the write-order rule's prediction"
reads=$(col alone reads)
assert_eq "$(col interleaved reads)" "$reads" "read commands per scan in both orders"
pages=$((bytes / 4096))
assert_eq "$(col alone dies_per_read)" "$(awk -v p="$pages" -v r="$reads" 'BEGIN { printf "%.2f", p / r }')" \
	"alone: dies per read (every page of a read on a die of its own)"
assert_eq "$(col alone collisions)" 0 "alone: collisions"
assert_eq "$(col alone collision_ms)" 0.000 "alone: collision wait"
awk -v d="$(col interleaved dies_per_read)" -v p="$pages" -v r="$reads" 'BEGIN { exit !(d < p / r) }' ||
	fail "interleaved: dies per read $(col interleaved dies_per_read), expected fewer than pages per read"
(($(col interleaved collisions) > 0)) || fail "interleaved: no collision"
awk -v c="$(col interleaved collision_ms)" 'BEGIN { exit !(c > 0) }' || fail "interleaved: no collision wait"
awk -v v="$(col interleaved vs_alone)" 'BEGIN { exit !(v > 1) }' ||
	fail "interleaved: busy time $(col interleaved vs_alone) times alone's, expected more"
assert_eq "$(col floor busy_ms)" "" "floor: no model's busy time"
grep -q "Interleaved against alone, the drive's own time (busy_ms): $(col interleaved vs_alone) times" "$SFS_TMP/si.err" ||
	fail "no summary line with the factor on stderr"
note "pass: interleaved $(col interleaved vs_alone) times alone's busy time, $(col interleaved collisions) collisions per scan"
