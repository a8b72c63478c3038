#!/bin/bash
# TIMEOUT: 240
# bench/scale runs in both modes at a small size (no test ran it before;
# bench/transport-counts, likewise untested, had stopped working): each
# prints its header, one row of the size asked for, and its targets line,
# and exits 0; progress goes to stderr only.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

S=$SFS_ROOT/bench/scale
"$S" --extents 100000 >"$SFS_TMP/e.out" 2>"$SFS_TMP/e.err" || fail "bench/scale --extents exited $?: $(tail -5 "$SFS_TMP/e.err")"
assert_eq "$(head -1 "$SFS_TMP/e.out" | tr -s ' ')" \
	"extents mount_cold_s mount_warm_s open_s bytes_per_extent peak_bytes_per_extent lookup_ns" "extent mode: header"
assert_eq "$(sed -n 2p "$SFS_TMP/e.out" | cut -d' ' -f1)" 100000 "extent mode: the row's extents"
grep -q '^targets: mount < 5 s: ' "$SFS_TMP/e.out" || fail "extent mode: no targets line"
"$S" --model ssd --capacity 4G --ops 5000 >"$SFS_TMP/s.out" 2>"$SFS_TMP/s.err" ||
	fail "bench/scale --model ssd exited $?: $(tail -5 "$SFS_TMP/s.err")"
assert_eq "$(head -1 "$SFS_TMP/s.out" | cut -d' ' -f1-3)" "capacity  model_read_ns_per_page" "ssd mode: header"
assert_eq "$(sed -n 2p "$SFS_TMP/s.out" | cut -d' ' -f1)" 4G "ssd mode: the row's capacity"
grep -q '^targets: model cost per page' "$SFS_TMP/s.out" || fail "ssd mode: no targets line"
for f in e s; do ! grep -q '^\[scale ' "$SFS_TMP/$f.out" || fail "progress on stdout ($f)"; done
note "pass"
