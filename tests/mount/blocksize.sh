#!/bin/bash
# bench/blocksize (seed 004) at a tiny scale, --format csv, one run: the
# header names the columns; one row per page size (8192, 16384); on each
# scan mount's request log (bench/run's, one per run), the cold scan's reads plus the warm scan's are
# exactly the read rows of t.db; read_bytes is the sum of their sizes when
# the warm scan read nothing; the dominant read is the readahead for both
# page sizes; pages_per_read = dominant_read / page_size exactly (8 and 4);
# mean_read = read_bytes / reads; index_bytes = index_pages x page_size,
# and the 16 KiB index has about half the 8 KiB index's pages.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require sqlite3

BS=$SFS_ROOT/bench/blocksize
ROWS=100000
RA=65536
[[ -x $BS ]] || fail "bench/blocksize is missing or not executable"

W=$SFS_TMP/work
out=$SFS_TMP/blocksize.csv
mkdir -p "$W"
SCATTERFS_BUILD=$SFS_BUILD "$BS" --rows $ROWS --runs 1 --readahead 64K --format csv \
	--workdir "$W" --keep >"$out" 2>"$SFS_TMP/blocksize.err" </dev/null || {
	rc=$?
	sfs_add_log "$out"
	sfs_add_log "$SFS_TMP/blocksize.err"
	fail "bench/blocksize exited $rc"
}
sfs_add_log "$out"
sfs_add_log "$SFS_TMP/blocksize.err"
cat "$out"

assert_eq "$(head -n 1 "$out")" \
	"engine,page_size,readahead,rows,index_pages,index_bytes,reads,read_bytes,dominant_read,mean_read,pages_per_read,mean_pages_per_read,cold_s,warm_s,warm_reads" \
	"bench/blocksize: CSV header"
assert_eq "$(tail -n +2 "$out" | cut -d, -f1-4 | tr '\n' ' ')" \
	"sqlite,8192,$RA,$ROWS sqlite,16384,$RA,$ROWS " "bench/blocksize: configurations"

mapfile -t kept < <(find "$W" -maxdepth 1 -name 'sfs-blocksize.*' -type d)
assert_eq "${#kept[@]}" 1 "bench/blocksize: kept work directories"
K=${kept[0]}

# bench/run's work directory in it: configuration N is the Nth page size
mapfile -t runs < <(find "$K" -maxdepth 1 -name 'bench-run.*' -type d)
assert_eq "${#runs[@]}" 1 "bench/run's kept work directories"
declare -A pages
n=0
while IFS=, read -r _ ps _ _ ipages ibytes r rb dom mean ppr mppr cold warm wr; do
	n=$((n + 1))
	log=${runs[0]}/config$n/run1.csv
	sfs_log_check_header "$log"
	assert_eq "$((r + wr))" "$(sfs_log_count "$log" read t.db)" "$ps: reads + warm_reads = read rows of t.db in $log"
	if ((wr == 0)); then
		assert_eq "$rb" "$(sfs_log_rows "$log" read t.db | sfs_log_awk "$log" '{ s += $f_size } END { print s + 0 }')" \
			"$ps: read_bytes = sum of the read rows' sizes"
	else
		note "$ps: the warm scan read $wr times (someone dropped the page cache?): read_bytes not compared"
	fi
	assert_eq "$dom" $RA "$ps: dominant read size = the readahead; sizes:
$(sfs_log_summary "$log")
"
	assert_eq "$ppr" $((dom / ps)) "$ps: pages_per_read = dominant_read / page_size"
	assert_eq "$((dom % ps))" 0 "$ps: the dominant read is whole pages"
	assert_eq "$mean" "$(awk -v b="$rb" -v n="$r" 'BEGIN { printf "%.1f", b / n }')" "$ps: mean_read = read_bytes / reads"
	assert_eq "$mppr" "$(awk -v b="$rb" -v n="$r" -v p="$ps" 'BEGIN { printf "%.2f", b / n / p }')" \
		"$ps: mean_pages_per_read = mean_read / page_size"
	assert_eq "$ibytes" $((ipages * ps)) "$ps: index_bytes = index_pages x page_size"
	# A cold scan reads the whole index: at least its bytes, from the log.
	((rb >= ibytes)) || fail "$ps: the cold scan read $rb bytes, less than the index's $ibytes"
	[[ $cold =~ ^[0-9]+\.[0-9]{3}$ && $warm =~ ^[0-9]+\.[0-9]{3}$ ]] || fail "$ps: times '$cold' '$warm'"
	pages[$ps]=$ipages
done < <(tail -n +2 "$out")

# The 16 KiB index: half the pages (within 2%: page headers and fill differ).
awk -v a="${pages[8192]}" -v b="${pages[16384]}" 'BEGIN { r = b / a; exit !(r > 0.48 && r < 0.52) }' ||
	fail "index pages ${pages[8192]} (8 KiB) versus ${pages[16384]} (16 KiB): not about half"
note "pass: 64 KiB reads of 8 pages (8 KiB) and of 4 pages (16 KiB); index pages ${pages[8192]} -> ${pages[16384]}"
