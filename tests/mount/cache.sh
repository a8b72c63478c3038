#!/bin/bash
# TIMEOUT: 240
# (it took 48 s on 2 vCPUs shared with other builds, 2026-12-01)
# bench/cache (seed 003) at a tiny scale, --format csv: the header names
# the columns; one row per cache size and table (heap, iot); every row's
# reads, page_reads, read_bytes and writes are exactly what the build's
# request log (bench/run's configK/run1.csv, kept) holds for t.db from the
# build's process (read rows, rows of one page, bytes returned, write
# rows; the check that follows the build reads t.db from another); cache_bytes
# is a whole number of pages and cache_pct is it against the sizing IOT;
# the IOT has the same size under both caches (same inserts, same splits);
# and the IOT built with the small cache did more physical reads than the
# one built with the large cache (which holds the whole IOT).  Then the
# same with --engine postgres (heap versus a table with a B-tree primary
# key, shared_buffers small and large).
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require sqlite3 "$PGBIN/initdb" "$PGBIN/pg_ctl" "$PGBIN/postgres" "$PGBIN/psql" runuser

CACHE=$SFS_ROOT/bench/cache
ROWS=20000
BATCH=2000
PAGE=8192
[[ -x $CACHE ]] || fail "bench/cache is missing or not executable"

W=$SFS_TMP/work
out=$SFS_TMP/cache.csv
mkdir -p "$W"
SCATTERFS_BUILD=$SFS_BUILD "$CACHE" --rows $ROWS --batch $BATCH --cache-sizes 50%,110% --format csv \
	--workdir "$W" --keep >"$out" 2>"$SFS_TMP/cache.err" </dev/null || {
	rc=$?
	sfs_add_log "$out"
	sfs_add_log "$SFS_TMP/cache.err"
	fail "bench/cache exited $rc"
}
sfs_add_log "$out"
sfs_add_log "$SFS_TMP/cache.err"
cat "$out"

assert_eq "$(head -n 1 "$out")" \
	"engine,table,cache_size,cache_bytes,cache_pct,rows,table_bytes,reads,page_reads,read_bytes,writes,elapsed_s" \
	"bench/cache: CSV header"
assert_eq "$(wc -l <"$out")" 5 "bench/cache: lines (header and 2 cache sizes x 2 tables)"
assert_eq "$(tail -n +2 "$out" | cut -d, -f1-3 | tr '\n' ' ')" \
	"sqlite,heap,50% sqlite,iot,50% sqlite,heap,110% sqlite,iot,110% " "bench/cache: configurations in order"

# The work directory the run kept: bench/run's, one sub-directory per row.
mapfile -t kept < <(find "$W" -mindepth 2 -maxdepth 2 -path '*/sfs-cache.*/bench-run.*' -type d)
assert_eq "${#kept[@]}" 1 "bench/cache: kept work directories"
K=${kept[0]}

declare -a reads ws
n=0
while IFS=, read -r engine table csize cbytes cpct rows tbytes r pr rb w el; do
	n=$((n + 1))
	log=$K/config$n/run1.csv
	sfs_log_check_header "$log"
	assert_eq "$rows" $ROWS "$table/$csize: rows"
	# the build's process: the first to touch t.db on this mount
	pid=$(sfs_log_rows "$log" "" t.db | sfs_log_awk "$log" 'NR == 1 { print $f_pid }')
	build() { sfs_log_rows "$log" "$@" | sfs_log_awk "$log" -v pid="$pid" '$f_pid == pid'; }
	assert_eq "$r" "$(build read t.db | wc -l)" "$table/$csize: reads = read rows of t.db by the build in $log"
	assert_eq "$pr" "$(build read t.db $PAGE | wc -l)" "$table/$csize: page_reads = $PAGE-byte read rows"
	assert_eq "$rb" "$(build read t.db | sfs_log_awk "$log" '{ s += $f_result } END { print s + 0 }')" \
		"$table/$csize: read_bytes = sum of the read rows' results"
	assert_eq "$w" "$(build write t.db | wc -l)" "$table/$csize: writes = write rows of t.db"
	(($(sfs_log_count "$log" read t.db) > r)) || fail "$table/$csize: no read of t.db after the build (the check)"
	assert_eq "$((cbytes % PAGE))" 0 "$table/$csize: cache_bytes is whole pages"
	assert_eq "$((tbytes % PAGE))" 0 "$table/$csize: table_bytes is whole pages"
	[[ $el =~ ^[0-9]+\.[0-9]{3}$ ]] || fail "$table/$csize: elapsed_s '$el' is not seconds with 3 decimals"
	[[ $engine == sqlite ]] || fail "engine '$engine'"
	# row n: 1 heap/50%, 2 iot/50%, 3 heap/110%, 4 iot/110%
	reads[n]=$r
	ws[n]=$tbytes
	if [[ $table == iot ]]; then
		# cache_pct is against the IOT's own size (the sizing build)
		assert_eq "$cpct" "$(awk -v c="$cbytes" -v s="$tbytes" 'BEGIN { printf "%.0f", 100 * c / s }')" \
			"$table/$csize: cache_pct = cache_bytes / IOT bytes"
	fi
done < <(tail -n +2 "$out")

assert_eq "${ws[2]}" "${ws[4]}" "IOT size under the small and the large cache"
assert_eq "${ws[1]}" "${ws[3]}" "heap size under the small and the large cache"
((reads[2] > reads[4])) ||
	fail "the IOT built with the small cache did ${reads[2]} physical reads, not more than the large cache's ${reads[4]}"
((reads[2] >= reads[1])) ||
	fail "with the small cache the IOT did ${reads[2]} physical reads, fewer than the heap's ${reads[1]}"
note "pass: IOT physical reads ${reads[2]} (small cache) versus ${reads[4]} (large), heap ${reads[1]}"

# --engine postgres, tiny: the same columns and configurations; each row's
# reads are no more than its log's read rows of the table's relation files
# (in the tablespace ts/, without the _fsm and _vm forks: the row counts
# those of the build, not those of the check after it); the indexed table
# built with the small shared_buffers read more than with the large one,
# and the plain heap read less than it.  Two rows at a time (--jobs 2),
# each with its own server: the counts do not depend on it.
PG=$SFS_TMP/pg.csv
PW=$SFS_TMP/pgwork
mkdir -p "$PW"
SCATTERFS_BUILD=$SFS_BUILD "$CACHE" --engine postgres --rows $ROWS --batch $BATCH --format csv --jobs 2 \
	--workdir "$PW" --keep >"$PG" 2>"$SFS_TMP/pg.err" </dev/null || {
	rc=$?
	sfs_add_log "$SFS_TMP/pg.err"
	fail "bench/cache --engine postgres exited $rc"
}
sfs_add_log "$PG"
sfs_add_log "$SFS_TMP/pg.err"
cat "$PG"
assert_eq "$(head -n 1 "$PG")" "$(head -n 1 "$out")" "bench/cache --engine postgres: CSV header"
assert_eq "$(tail -n +2 "$PG" | cut -d, -f1-3,6 | tr '\n' ' ')" \
	"postgres,heap,50%,$ROWS postgres,iot,50%,$ROWS postgres,heap,110%,$ROWS postgres,iot,110%,$ROWS " \
	"bench/cache --engine postgres: configurations"
mapfile -t kept < <(find "$PW" -mindepth 2 -maxdepth 2 -path '*/sfs-cache.*/bench-run.*' -type d)
assert_eq "${#kept[@]}" 1 "bench/cache --engine postgres: kept work directories"
mapfile -t pr < <(tail -n +2 "$PG" | cut -d, -f8)
mapfile -t pp < <(tail -n +2 "$PG" | cut -d, -f9)
for i in 0 1 2 3; do
	plog=${kept[0]}/config$((i + 1))/run1.csv
	sfs_log_check_header "$plog"
	total=$(sfs_log_rows "$plog" read | sfs_log_awk "$plog" '$f_path ~ /^ts\/.*[0-9]$/ { n++ } END { print n + 0 }')
	((pr[i] <= total)) || fail "postgres row $((i + 1)): ${pr[i]} reads, the log holds only $total reads of the table's files"
	assert_eq "${pp[i]}" "${pr[i]}" "postgres row $((i + 1)): every read is one 8192-byte page"
done
((pr[1] > pr[3])) || fail "postgres: indexed table read ${pr[1]} pages with the small shared_buffers, not more than ${pr[3]} with the large"
((pr[0] < pr[1])) || fail "postgres: the heap read ${pr[0]} pages, not fewer than the indexed table's ${pr[1]}"
note "pass (postgres): indexed table ${pr[1]} reads (small shared_buffers) versus ${pr[3]} (large), heap ${pr[0]}"
