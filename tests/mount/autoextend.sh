#!/bin/bash
# bench/autoextend at a tiny scale (SQLite, 8 MiB of rows, steps of 1 and
# 4 MiB, 2 runs, CSV, with a plot), then its numbers against its own
# request logs (bench/run's, kept: each kind of file on its own mount), in
# every run:
# - the header names the columns in order, one row per step;
# - the growing file's extend rows: as many as the extends column, each of
#   exactly one step, and ceil(file size / step) of them (the file starts
#   empty and grows in whole steps): 9 for 1 MiB and 3 for 4 MiB, since the
#   8 MiB of rows plus the table's interior pages come to just over 8 MiB;
# - the static file: 0 extends during its load, and exactly one extend row
#   in each run's log, its preallocation before the load, of the growing
#   file's allocation;
# - zero_fill_ms, file_mib and the worst writes equal what the log gives,
#   per_extension_ms and per_alloc_ms follow from the other columns;
# - the plot is a PNG.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require sqlite3 gnuplot

AE=$SFS_ROOT/bench/autoextend
[[ -x $AE ]] || fail "bench/autoextend is missing or not executable"

# Bad input is refused before anything is mounted.
rc=0
"$AE" --steps 3K >/dev/null 2>&1 || rc=$?
assert_eq "$rc" 2 "exit status of bench/autoextend --steps 3K"
help=$("$AE" --help) || fail "bench/autoextend --help exited $?"
grep -q -- '--zero-fill' <<<"$help" || fail "bench/autoextend --help does not describe --zero-fill"

W=$SFS_TMP/work
out=$SFS_TMP/autoextend.csv
err=$SFS_TMP/autoextend.err
sfs_add_log "$out"
sfs_add_log "$err"
SCATTERFS_BUILD=$SFS_BUILD "$AE" --steps 1M,4M --volumes 8M --runs 2 --format csv --plot "$SFS_TMP/ae.png" \
	--workdir "$W" --keep >"$out" 2>"$err" </dev/null || fail "bench/autoextend exited $?"
cat "$out"
# bench/run's work directory, kept: configuration 1 is step 1 MiB grow, 2
# step 1 static, 3 step 4 grow, 4 step 4 static; runR.csv their runs' logs.
dir=$(echo "$W"/sfs-autoextend.*/bench-run.*)
[[ -f $dir/config1/run1.csv ]] || fail "bench/autoextend --keep left no request log in $W"
sfs_log_check_header "$dir/config1/run1.csv"
assert_eq "$(head -n 1 "$out")" \
	volume_mib,step_mib,file_mib,grow_s,static_s,extends,extend_mib,static_extends,zero_fill_ms,per_extension_ms,per_alloc_ms,worst_write_grow_ms,worst_write_static_ms \
	"CSV header"
assert_eq "$(wc -l <"$out")" 3 "CSV lines (header and one row per step)"

declare -A want_extends=([1]=9 [4]=3) grow=([1]=1 [4]=3)
# rows_of OP CONFIG - the log rows OP of ae.db in both runs of configuration CONFIG
rows_of() { cat "$dir/config$2"/run[12].csv | sfs_log_awk "$L" -v op="$1" 'NR > 1 && $f_op == op && $f_path == "ae.db"'; }
L=$dir/config1/run1.csv
for step in 1 4; do
	kg=${grow[$step]}
	ks=$((kg + 1))
	row=$(awk -F, -v s=$step 'NR > 1 && $1 == 8 && $2 == s' "$out")
	[[ -n $row ]] || fail "no CSV row for volume 8, step $step"
	IFS=, read -r _ _ file_mib grow_s static_s extends extend_mib static_extends zf_ms per_ext per_alloc worst_g worst_s <<<"$row"
	bytes=$((step * 1048576))
	n=${want_extends[$step]}
	assert_eq "$extends" "$n" "step $step: extends column"
	for r in 1 2; do
		g=$dir/config$kg/run$r.csv
		s=$dir/config$ks/run$r.csv
		# The growing file (created empty before the load, as the static one).
		assert_eq "$(sfs_log_count "$g" extend ae.db)" "$n" "step $step: extend rows of $g"
		assert_eq "$(sfs_log_count "$g" extend ae.db "$bytes")" "$n" "step $step: extend rows of $g of exactly one step"
		end=$(sfs_log_rows "$g" write ae.db | sfs_log_awk "$g" '$f_offset + $f_size > e { e = $f_offset + $f_size } END { print e }')
		assert_eq "$n" $(((end + bytes - 1) / bytes)) "step $step: extends of $g against ceil(file size $end / step)"
		assert_eq "$file_mib" "$(awk -v e="$end" 'BEGIN { printf "%.2f", e / 1048576 }')" "step $step: file_mib against $g"
		# The static file: its one extend row is the preallocation, before its load.
		assert_eq "$(sfs_log_count "$s" extend ae.db)" 1 "step $step: extend rows of $s (the preallocation only)"
		assert_eq "$(sfs_log_rows "$s" extend ae.db | sfs_log_awk "$s" '{ print $f_offset "," $f_size }')" "0,$((n * bytes))" \
			"step $step: the preallocation in $s covers the growing file's allocation"
		(($(sfs_log_count "$s" write ae.db) > 2000)) || fail "step $step: fewer than 2000 writes of ae.db in $s"
	done
	assert_eq "$extend_mib" $((n * step)) "step $step: extend_mib"
	assert_eq "$static_extends" 0 "step $step: static_extends"
	assert_eq "$zf_ms" "$(rows_of extend "$kg" | sfs_log_awk "$L" '{ t += $f_latency_us } END { printf "%.2f", t / NR / 1000 }')" \
		"step $step: zero_fill_ms against the extend rows' latency_us"
	assert_eq "$worst_g" "$(rows_of write "$kg" | sfs_log_awk "$L" '$f_latency_us > m { m = $f_latency_us } END { printf "%.2f", m / 1000 }')" \
		"step $step: worst_write_grow_ms"
	assert_eq "$worst_s" "$(rows_of write "$ks" | sfs_log_awk "$L" '$f_latency_us > m { m = $f_latency_us } END { printf "%.2f", m / 1000 }')" \
		"step $step: worst_write_static_ms"

	# The derived columns.
	assert_eq "$per_ext" "$(awk -v g="$grow_s" -v s="$static_s" -v n="$n" 'BEGIN { printf "%.2f", (g - s) * 1000 / n }')" \
		"step $step: per_extension_ms = (grow_s - static_s) / extends"
	d=$(awk -v a="$per_ext" -v b="$zf_ms" -v c="$per_alloc" 'BEGIN { d = a - b - c; print (d < 0 ? -d : d) <= 0.011 }')
	assert_eq "$d" 1 "step $step: per_alloc_ms ($per_alloc) = per_extension_ms ($per_ext) - zero_fill_ms ($zf_ms)"
	note "step $step MiB: $n extends per run, zero-fill $zf_ms ms each"
done

assert_eq "$(head -c 8 "$SFS_TMP/ae.png" | od -An -tx1 | tr -d ' \n')" 89504e470d0a1a0a "PNG signature of --plot"

# One run, text: the table says the noise is not measured, and counts the
# rows whose per_alloc_ms came out negative (noise larger than the cost).
SCATTERFS_BUILD=$SFS_BUILD "$AE" --steps 1M,4M --volumes 8M --runs 1 >"$SFS_TMP/one.txt" 2>/dev/null </dev/null ||
	fail "bench/autoextend --runs 1 exited $?"
sfs_add_log "$SFS_TMP/one.txt"
grep -qx "Noise: not measured with one run (--runs 2 or more measures it); per_extension_ms and per_alloc_ms are differences of two timings, so noise alone can make them small or negative." "$SFS_TMP/one.txt" ||
	fail "--runs 1: no line saying the noise is not measured"
neg=$(awk '$1 == "volume_mib" { for (i = 1; i <= NF; i++) if ($i == "per_alloc_ms") c = i; next }
	c && $1 == 8 && $c ~ /^-[0-9]/ { n++ } END { print n + 0 }' "$SFS_TMP/one.txt")
if ((neg)); then
	grep -qx "per_alloc_ms is negative in $neg row(s): the timings' noise is larger than the allocation's cost there; more --runs (the fastest is kept) narrow it." "$SFS_TMP/one.txt" ||
		fail "--runs 1: $neg negative per_alloc_ms, and no line that says so"
else
	assert_eq "$(grep -c 'per_alloc_ms is negative' "$SFS_TMP/one.txt")" 0 "--runs 1: lines about negative per_alloc_ms when none is"
fi
note "--runs 1: the noise line, and $neg negative per_alloc_ms counted"
note "pass"
