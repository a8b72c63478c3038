#!/bin/bash
# TIMEOUT: 300
# (62 s at load 5, 105 s at load 11, 172 s at load 14 on the 2 shared cores, 2026-12-03)
# bench/run's hooks for an experiment's definition: --param n=1,2 sweeps a
# dimension of the experiment's own (no -o override: the commands see
# SCATTERFS_PARAM_n, the rows get a column n, and each row's baseline has
# its own n); the load writes n x 64 KiB and the column loaded_n=n to
# SCATTERFS_COLUMNS; --warm reads the file again on the same mount.  Under
# contiguous's cache.mode = none every read reaches the log, so the warm
# read makes exactly the cold one's reads and bytes: warm_reads = reads =
# n x 64 KiB / 16 KiB + 1 (dd's last read, at the end of the file, returns
# 0 bytes), bytes_read n x 64 KiB.  A SCATTERFS_COLUMNS line that is not NAME=VALUE,
# or that names one of bench/run's own columns, fails its row with a
# message naming the line.  --read-size readahead with --set
# cache.readahead=16K,32K in kernel mode: each row's dominant read size is
# its own readahead (dd reads 4 KiB at a time, the readahead makes the
# requests); --counter stats_bytes=bytes_read (a counter of .scatterfs/stats)
# per counted run equals the log's bytes_read, 256 KiB, and a --counter of a
# key the stats lack is 0; --discard 1 of --runs 2: the JSON's times_s has
# both runs' times, the discarded first.  --path f counts only file f's
# rows (of a workload that reads f and g, 64 KiB each, 16 KiB at a time,
# then writes 16 KiB twice to f and 4 KiB to g): reads 5, bytes_read
# 65536, and the --log-count columns r16=read:16384 5, w=write 2,
# w4k=write:4096 0 (g's write is not f's); the same --log-count on a mount
# whose log.ops leaves write out fails its row, saying so.
# --mount-config: with --param place=main,two, a command prints for place
# two a [device "two"] section (backing two.img, relative) and a [file
# "g"] rule, its preset (SCATTERFS_DISK, the --disk file) in the run
# phase only, and nothing for place main; the --after command writes the
# run's number and the device I/Os on two to SCATTERFS_COLUMNS.  With
# --runs 3 --discard 1 the column run is the median of 2 and 3, 2.5 (one
# decimal more than the values'); place two read g's 64 KiB from two in
# 4 device I/Os per run (on_two 4), place main none.  The kept files:
# two.img in configuration 2's directory, its load's configuration
# without a preset and its runs' with the --disk file, no mount-config
# file for configuration 1; the load's log has no model_us column (no
# device was modelled) and the runs' rows of device two have one.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

RUN=$SFS_ROOT/bench/run
export SCATTERFS_BUILD=$SFS_BUILD
read16k='dd if="$SCATTERFS_MOUNT/f" of=/dev/null bs=16K status=none'
"$RUN" --layouts contiguous --param n=1,2 --runs 1 --size 64M --format csv \
	--load 'dd if=/dev/zero of="$SCATTERFS_MOUNT/f" bs=64K count="$SCATTERFS_PARAM_n" status=none && echo "loaded_n=$SCATTERFS_PARAM_n" >>"$SCATTERFS_COLUMNS"' \
	--workload "$read16k" --warm "$read16k" >"$SFS_TMP/out.csv" 2>"$SFS_TMP/err" </dev/null ||
	fail "bench/run --param exited $?: $(tail -5 "$SFS_TMP/err")"
sfs_add_log "$SFS_TMP/err"
cat "$SFS_TMP/out.csv"
assert_eq "$(head -1 "$SFS_TMP/out.csv" | cut -d, -f1-8)" "layout,n,cache_mode,readahead,runs,min_s,median_s,max_s" "first columns"
python3 - "$SFS_TMP/out.csv" >"$SFS_TMP/got" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
head = list(rows[0])
print(head.index("warm_median_s") == head.index("max_s") + 1, head.index("warm_reads") == head.index("max_s") + 2,
      head.index("loaded_n") == head.index("vs_baseline") - 1)
for r in rows:
    print(r["layout"], r["n"], r["loaded_n"], r["reads"], r["warm_reads"], r["bytes_read"], r["vs_baseline"], r["error"] or "-")
PY
assert_eq "$(cat "$SFS_TMP/got")" "True True True
contiguous 1 1 5 5 65536 1.00 -
contiguous 2 2 9 9 131072 1.00 -" "columns and rows"

bad() {
	local line=$1 want=$2
	"$RUN" --layouts contiguous --runs 1 --size 64M --format csv --load "echo '$line' >>\"\$SCATTERFS_COLUMNS\"" \
		--workload true >"$SFS_TMP/bad.csv" 2>"$SFS_TMP/bad.err" </dev/null && fail "a SCATTERFS_COLUMNS line '$line' accepted"
	assert_eq "$(python3 -c 'import csv, sys; print(list(csv.DictReader(open(sys.argv[1])))[-1]["error"])' "$SFS_TMP/bad.csv")" \
		"$want" "the row of a SCATTERFS_COLUMNS line '$line'"
}
bad "Index pages" "SCATTERFS_COLUMNS line 1: 'Index pages': expected NAME=VALUE (NAME: lower-case letters, digits and _)"
bad "reads=3" "SCATTERFS_COLUMNS line 1: reads is one of bench/run's own columns"

"$RUN" --layouts contiguous --set cache.mode=kernel --set cache.readahead=16K,32K --read-size readahead \
	--runs 2 --discard 1 --size 64M --format json --counter stats_bytes=bytes_read --counter none_here=no.such.key \
	--load 'dd if=/dev/zero of="$SCATTERFS_MOUNT/f" bs=64K count=4 status=none' \
	--workload 'dd if="$SCATTERFS_MOUNT/f" of=/dev/null bs=4K status=none' >"$SFS_TMP/ra.json" 2>"$SFS_TMP/ra.err" </dev/null ||
	fail "bench/run --read-size readahead exited $?: $(tail -5 "$SFS_TMP/ra.err")"
sfs_add_log "$SFS_TMP/ra.err"
sfs_add_log "$SFS_TMP/ra.json"
python3 - "$SFS_TMP/ra.json" >"$SFS_TMP/got" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    print(r["cache.readahead"], r["readahead"], r["dominant_read_size"], r["bytes_read"], r["stats_bytes"],
          r["none_here"], len(r["times_s"]), r["times_s"][1] == r["min_s"], r["error"] or "-")
PY
assert_eq "$(cat "$SFS_TMP/got")" "16K 16384 16384 262144 262144 0 2 True -
32K 32768 32768 262144 262144 0 2 True -" "--read-size readahead, --counter, times_s"

# --path and --log-count
two='for x in f g; do dd if=/dev/zero of="$SCATTERFS_MOUNT/$x" bs=64K count=1 status=none || exit 1; done'
rw='for x in f g; do dd if="$SCATTERFS_MOUNT/$x" of=/dev/null bs=16K status=none || exit 1; done
dd if=/dev/zero of="$SCATTERFS_MOUNT/f" bs=16K count=2 conv=notrunc status=none &&
dd if=/dev/zero of="$SCATTERFS_MOUNT/g" bs=4K count=1 conv=notrunc status=none'
counts=(--log-count r16=read:16K --log-count w=write --log-count w4k=write:4096)
"$RUN" --layouts contiguous --runs 1 --size 64M --format csv --set log.ops=read:write --path f "${counts[@]}" \
	--load "$two" --workload "$rw" >"$SFS_TMP/path.csv" 2>"$SFS_TMP/path.err" </dev/null ||
	fail "bench/run --path --log-count exited $?: $(tail -5 "$SFS_TMP/path.err")"
cat "$SFS_TMP/path.csv"
assert_eq "$(python3 -c 'import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
print(*(r[c] for c in ("reads", "bytes_read", "r16", "w", "w4k", "error")))' "$SFS_TMP/path.csv")" "5 65536 5 2 0 " \
	"--path f: reads, bytes_read, r16, w, w4k, error"
"$RUN" --layouts contiguous --runs 1 --size 64M --format csv --path f "${counts[@]}" \
	--load "$two" --workload "$rw" >"$SFS_TMP/path.csv" 2>"$SFS_TMP/path.err" </dev/null &&
	fail "bench/run --log-count w=write accepted on a mount that does not log writes"
assert_eq "$(python3 -c 'import csv, sys; print(list(csv.DictReader(open(sys.argv[1])))[0]["error"])' "$SFS_TMP/path.csv")" \
	"--log-count w=write: the mount does not log write (log.ops = read,extend); add it with --set log.ops=..." \
	"the row of --log-count w=write without writes in the log"

# shellcheck disable=SC2016 # bench/run's sh -c expands them
mcfg='[ "$SCATTERFS_PARAM_place" = two ] || exit 0
echo "[device \"two\"]"
[ "$SCATTERFS_PHASE" = run ] && echo "preset = $SCATTERFS_DISK"
printf "backing = two.img\nsize = 64M\nblock_size = 512\n\n[file \"g\"]\ndevice = two\n"'
work=$SFS_TMP/work
"$RUN" --layouts contiguous --param place=main,two --runs 3 --discard 1 --size 64M --format csv \
	--disk hdd-7200 --mount-config "$mcfg" --workdir "$work" --keep \
	--load 'dd if=/dev/zero of="$SCATTERFS_MOUNT/g" bs=64K count=1 status=none' \
	--workload 'dd if="$SCATTERFS_MOUNT/g" of=/dev/null bs=16K status=none' \
	--after 'cat "$SCATTERFS_MOUNT/.scatterfs/stats" >/dev/null
echo "run=$SCATTERFS_RUN" >>"$SCATTERFS_COLUMNS"
echo "on_two=$(grep -c ",two:[0-9]" "$SCATTERFS_LOG")" >>"$SCATTERFS_COLUMNS"' \
	>"$SFS_TMP/mc.csv" 2>"$SFS_TMP/mc.err" </dev/null || fail "bench/run --mount-config exited $?: $(tail -20 "$SFS_TMP/mc.err")"
cat "$SFS_TMP/mc.csv"
python3 - "$SFS_TMP/mc.csv" >"$SFS_TMP/got" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r["place"], r["run"], r["on_two"], r["reads"], r["error"] or "-")
PY
assert_eq "$(cat "$SFS_TMP/got")" "main 2.5 0 5 -
two 2.5 4 5 -" "--mount-config rows"
d=$(echo "$work"/bench-run.*)
[[ -f $d/config2/two.img && ! -e $d/config1/two.img ]] || fail "two.img not (only) in configuration 2's directory: $(ls "$d"/config*)"
assert_eq "$(ls "$d"/config1 | grep -c mount-config)" 0 "mount-config files of configuration 1"
grep -q preset "$d/config2/mount-config-load.ini" && fail "the load's configuration names a preset"
assert_eq "$(grep preset "$d/config2/mount-config-run3.ini")" "preset = $SFS_ROOT/conf/hdd-7200.ini" "the run's preset"
assert_eq "$(head -1 "$d/config2/load.csv")" "ts_us,op,pid,path,offset,size,result,latency_us,device_io" "the load's log header"
sfs_log_awk "$d/config2/run3.csv" 'NR > 1 && $f_device_io ~ /^two:/ { n++; if ($f_model_us == "") bad++ }
	END { exit !(n == 4 && !bad) }' "$d/config2/run3.csv" || fail "run 3's reads on two without model_us: $(cat "$d/config2/run3.csv")"
note ok
