#!/bin/bash
# bench/run under the disk model with a parallel workload (two dd's, each
# reading its own 8 MiB file in 256 KiB O_DIRECT reads), contiguous with
# --set cache.mode=none,kernel, one run each, CSV and text:
# - the CSV header, exactly: cache_mode and readahead after the --set
#   column, the main device's busy_s, util_pct and aqu_sz after model_s,
#   undersampled before error; cache_mode none (readahead empty) and kernel
#   (readahead 131072, the default, checked against the mount before the
#   run); undersampled median_s (one run);
# - model_s, the model's latency summed over the reads, exceeds the wall
#   time (median_s) of the parallel scan, while util_pct stays within
#   0..100 and aqu_sz, the mean number of device I/Os in flight, is above
#   1; on contiguous every 256 KiB read is one device I/O, so the device
#   I/Os' summed time in flight is the reads' model_us: aqu_sz equals
#   model_s / median_s (within the rounding of the printed figures), and
#   busy_s is at most model_s;
# - the text output says what model_s, util_pct and aqu_sz are; stderr
#   warns that the rows ran with different page-cache settings (the kernel
#   row's baseline is the none row: --baseline cache.mode=none), and a
#   readahead sweep, each row against a baseline of its own settings, gets
#   no such warning;
# - the load ran without the model: its log has no model_us column (the
#   runs' logs have one), its daemon was given disk.model=none and none of
#   the --disk keys, and while it ran (7 s) a progress line said how much
#   it had written.
# TIMEOUT: 300
# EXCLUSIVE: it compares the model's summed latency with a scan's wall time (tests/run runs it alone)
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

RUN=$SFS_ROOT/bench/run
work=$SFS_TMP/work
out=$SFS_TMP/out.csv
err=$SFS_TMP/err.txt
sfs_add_log "$err"
load='for i in 1 2; do dd if=/dev/urandom of="$SCATTERFS_MOUNT/f$i" bs=1M count=8 status=none; done; sleep 7'
workload='dd if="$SCATTERFS_MOUNT/f1" of=/dev/null bs=256K iflag=direct status=none &
dd if="$SCATTERFS_MOUNT/f2" of=/dev/null bs=256K iflag=direct status=none; wait'

SCATTERFS_BUILD=$SFS_BUILD "$RUN" --layouts contiguous --set cache.mode=none,kernel --baseline cache.mode=none \
	--disk hdd-7200 --runs 1 --size 256M --workdir "$work" --keep --format csv --load "$load" --workload "$workload" \
	>"$out" 2>"$err" </dev/null || fail "bench/run exited $?"
sfs_add_log "$out"
cat "$out"
dir=$(echo "$work"/bench-run.*)

assert_eq "$(head -n 1 "$out")" \
	"layout,cache.mode,cache_mode,readahead,runs,min_s,median_s,max_s,reads,bytes_read,device_ios,dominant_read_size,model_s,main_busy_s,main_util_pct,main_aqu_sz,static_score,dynamic_score,vs_baseline,ios_vs_baseline,model_vs_baseline,undersampled,error" \
	"CSV header"
col() { awk -F, -v m="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next } $2 == m { print $h[c] }' "$out"; }
grep -q "^bench/run \[[0-9:]*\] the rows ran with different page-cache settings (kernel with readahead 131072, none): the cache decides what reaches the disk" "$err" ||
	fail "no warning that the rows' cache settings differ"
for mode in none kernel; do
	assert_eq "$(col $mode cache_mode)" $mode "$mode: cache_mode"
	assert_eq "$(col $mode readahead)" "$([[ $mode == kernel ]] && echo 131072)" "$mode: readahead"
	assert_eq "$(col $mode undersampled)" median_s "$mode: undersampled (one run)"
	assert_eq "$(col $mode error)" "" "$mode: error"
	assert_eq "$(col $mode device_ios)" 64 "$mode: device I/Os (64 reads of 256 KiB, one extent each)"
	read -r med model busy util aqu <<<"$(for c in median_s model_s main_busy_s main_util_pct main_aqu_sz; do printf '%s ' "$(col $mode $c)"; done)"
	note "$mode: wall $med s, model_s $model, busy $busy s, util $util %, aqu-sz $aqu"
	awk -v m="$model" -v w="$med" 'BEGIN { exit !(m > w) }' ||
		fail "$mode: model_s $model does not exceed the wall time $med of the parallel scan"
	awk -v u="$util" 'BEGIN { exit !(u > 0 && u <= 100) }' || fail "$mode: util_pct $util outside 0..100"
	awk -v q="$aqu" 'BEGIN { exit !(q > 1) }' || fail "$mode: aqu_sz $aqu, not above 1 with two readers"
	awk -v q="$aqu" -v m="$model" -v w="$med" 'BEGIN { d = q - m / w; if (d < 0) d = -d; exit !(d <= 0.011 + 0.002 * q) }' ||
		fail "$mode: aqu_sz $aqu is not model_s / median_s = $(awk -v m="$model" -v w="$med" 'BEGIN { print m / w }')"
	awk -v b="$busy" -v m="$model" 'BEGIN { exit !(b <= m) }' || fail "$mode: busy_s $busy above model_s $model"
done

# A sweep of the readahead, each row its own baseline: like for like, no warning.
SCATTERFS_BUILD=$SFS_BUILD "$RUN" --layouts contiguous --disk hdd-7200 --runs 1 --size 256M \
	--set cache.mode=kernel --set cache.readahead=65536,131072 \
	--load 'dd if=/dev/urandom of="$SCATTERFS_MOUNT/f1" bs=1M count=1 status=none' --workload 'cat "$SCATTERFS_MOUNT/f1" >/dev/null' \
	>"$SFS_TMP/text.out" 2>"$SFS_TMP/text.err" </dev/null || fail "bench/run (text) exited $?"
assert_eq "$(grep -c 'page-cache settings' "$SFS_TMP/text.out" "$SFS_TMP/text.err" | tr '\n' ' ')" \
	"$SFS_TMP/text.out:0 $SFS_TMP/text.err:0 " "a readahead sweep against its own settings: warnings (text, stderr)"
grep -qx "model_s: the disk model's latency (model_us) summed over the workload's reads, per run: time in queue and service, which exceeds the wall time when reads overlap; DEVICE_busy_s: the modelled head's busy time per run; DEVICE_util_pct: busy time over wall time (iostat's %util); DEVICE_aqu_sz: the device I/Os' summed time in flight over wall time, the mean number in flight (iostat's aqu-sz); with time_dilation N (shown when a row has one), min_s, median_s and max_s are the clock's (N times the drive's, the workload's CPU time not stretched), model_s and busy_s the drive's, and util_pct and aqu_sz compare them with the wall time / N" \
	"$SFS_TMP/text.out" || fail "the text output does not say what model_s is: $(cat "$SFS_TMP/text.out")"

for k in 1 2; do
	assert_eq "$(head -n 1 "$dir/config$k/load.csv" | tr ',' '\n' | grep -c '^model_us$')" 0 "config $k: model_us in the load's log"
	assert_eq "$(head -n 1 "$dir/config$k/run1.csv" | tr ',' '\n' | grep -c '^model_us$')" 1 "config $k: model_us in the run's log"
	opts=$(head -n 1 "$dir/config$k/daemon-load.log")
	[[ $opts == *,disk.model=none,* && $opts != *disk.rpm* ]] || fail "config $k: the load's daemon options: $opts"
	grep -Eq "^bench/run \[[0-9:]{8}\] config $k/2 \(contiguous cache\.mode=[a-z]+\): load: 16\.0 MiB written, 2 files, [5-9] s$" "$err" ||
		fail "config $k: no progress line during the load"
done
note "pass"
