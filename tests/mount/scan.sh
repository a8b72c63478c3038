#!/bin/bash
# bench/scan, the main job of README, at a tiny scale: it runs, exits 0 and
# prints its table: a header naming the columns, then one row for each of the
# four seed layouts with the row count asked for.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

SCAN=$SFS_ROOT/bench/scan
ROWS=20000
[[ -f $SCAN ]] || fail "bench/scan does not exist yet (issue 3, item 8: the main job in README)"
[[ -x $SCAN ]] || fail "bench/scan is not executable"

out=$SFS_TMP/scan.out
SCATTERFS_BUILD=$SFS_BUILD "$SCAN" --rows $ROWS >"$out" 2>"$SFS_TMP/scan.err" </dev/null || {
	rc=$?
	sfs_add_log "$out"
	sfs_add_log "$SFS_TMP/scan.err"
	fail "bench/scan --rows $ROWS exited $rc"
}
sfs_add_log "$out"
sfs_add_log "$SFS_TMP/scan.err"
cat "$out"

# The header: layout, rows, extents, min/avg/max scan seconds, reads and the
# read sizes, in that order.
grep -Eiq '^[^a-z]*layout\b.*\brows\b.*\bextents\b.*\bmin.*\bavg.*\bmax.*\breads' "$out" ||
	fail "bench/scan: no table header naming layout, rows, extents, min, avg, max, reads"
for layout in equi-fragmented random-fragmented contiguous single-extent; do
	n=$(grep -Ec "^[^a-z]*$layout\b.*\b$ROWS\b" "$out" || true)
	assert_eq "$n" 1 "bench/scan: table rows for layout $layout with $ROWS rows"
done
note "pass"
