#!/bin/bash
# TIMEOUT: 300
# bench/run with the ssd-nvme preset (--disk conf/ssd-nvme.ini, a 1 GiB
# device), contiguous, one 10 MiB file written by the load and read back
# in 256 KiB O_DIRECT reads, two runs:
#   - it exits 0; the CSV header has flash_score right after static_score
#     (a device with a flash model) and the main device's columns;
#   - static_score and flash_score are 1.0000: a contiguous file, and the
#     run's mount starts the model prefilled in address order, so page n
#     of the device is on die n mod 96 and no two neighbours share one;
#   - the runs' logs carry model_us, dies and collisions, and every
#     256 KiB read that returned 256 KiB (64 pages over 96 dies) names
#     64 dies;
#   - with --set disk.time_dilation=10 (one run), the header has a
#     time_dilation column after model_s, its value 10, and model_s and
#     main_busy_s are the drive's time: main_busy_s within a factor of 3
#     of the undilated run's, model_s at most 3 times its (printed to the
#     ms; model_s also counts waits behind the write buffer's destage,
#     which vary; the clock's times would be ten times as much);
#   - without an ssd (--disk conf/hdd-7200.ini) the header has no
#     flash_score column.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

RUN=$SFS_ROOT/bench/run
work=$SFS_TMP/work
out=$SFS_TMP/out.csv
err=$SFS_TMP/err.txt
sfs_add_log "$err"
mkdir -p "$work"

# bench_run DISK [ARGS...] - bench/run contiguous with DISK into $out
bench_run() {
	local disk=$1
	shift
	SCATTERFS_BUILD=$SFS_BUILD "$RUN" --layouts contiguous --disk "$disk" \
		--runs 2 --discard 0 --size 1G --workdir "$work" --keep --format csv "$@" \
		--load 'dd if=/dev/urandom of="$SCATTERFS_MOUNT/f" bs=64K count=160 status=none' \
		--workload 'dd if="$SCATTERFS_MOUNT/f" of=/dev/null bs=256K iflag=direct status=none' \
		>"$out" 2>"$err" </dev/null || fail "bench/run --disk $disk $* exited $?"
}

bench_run "$SFS_ROOT/conf/ssd-nvme.ini"
cat "$out"
assert_eq "$(head -n 1 "$out")" \
	"layout,cache_mode,readahead,runs,min_s,median_s,max_s,reads,bytes_read,device_ios,dominant_read_size,model_s,main_busy_s,main_util_pct,main_aqu_sz,static_score,flash_score,dynamic_score,vs_baseline,ios_vs_baseline,model_vs_baseline,undersampled,error" \
	"the CSV header with an ssd"
col() { python3 -c 'import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]; print(r[sys.argv[2]])' "$out" "$1"; }
assert_eq "$(col static_score) $(col flash_score) $(col error)" "1.0000 1.0000 " "contiguous: static_score flash_score error"
dir=$(echo "$work"/bench-run.*)
log=$dir/config1/run1.csv
[[ -f $log ]] || fail "no run log $log"
head -n 1 "$log" | grep -q ',model_us,dies,collisions$' || fail "the run's log header: $(head -n 1 "$log")"
dies=$(sfs_log_rows "$log" read f 262144 | sfs_log_awk "$log" '$f_result == 262144 { print $f_dies }' | sort -u | tr '\n' ' ')
assert_eq "$dies" "64 " "dies of every 256 KiB read (the read at the end of the file returns 0 bytes: left out)"
rm -rf "$dir"
model1=$(col model_s) busy1=$(col main_busy_s)

bench_run "$SFS_ROOT/conf/ssd-nvme.ini" --runs 1 --set disk.time_dilation=10
cat "$out"
head -n 1 "$out" | grep -q ',model_s,time_dilation,main_busy_s,' || fail "the header with time_dilation: $(head -n 1 "$out")"
assert_eq "$(col time_dilation) $(col error)" "10 " "time_dilation error"
python3 -c 'import sys
a, b, c, d = map(float, sys.argv[1:])
sys.exit(0 if c <= 3 * a and 1 / 3 <= d / b <= 3 else 1)' "$model1" "$busy1" "$(col model_s)" "$(col main_busy_s)" ||
	fail "dilated model_s $(col model_s), main_busy_s $(col main_busy_s) against $model1, $busy1 undilated"
rm -rf "$work"/bench-run.*

bench_run "$SFS_ROOT/conf/hdd-7200.ini"
head -n 1 "$out" | grep -q flash_score && fail "flash_score without an ssd: $(head -n 1 "$out")"
note "pass"
