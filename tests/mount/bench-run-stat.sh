#!/bin/bash
# TIMEOUT: 300
# (55 s at load 17 on the 2 shared cores, 2026-12-04; 99 s at the same load
# before it was cut to three sweeps)
# bench/run --log-stat and --alternate, the hooks bench/autoextend is
# defined with.
# --log-stat NAME=STAT:OP:FIELD: a workload that writes 16 KiB twice to f
# and 4 KiB once to g (log.ops read:write, --runs 2) gives, from the write
# rows' size: sum 36864 per run, mean 12288, max 16384, min 4096; with
# FIELD offset|size (the larger of the two per row: 16384, 16384, 4096)
# max 16384 and sum 36864; with model_us|size (no disk model, so no
# model_us column: the size) max 16384; a stat of extend rows, of which
# there are none, is empty.  An unknown STAT is refused with exit status 2
# before anything is mounted.
# --alternate kind with --param n=1,2 --param kind=a,b --runs 3 --jobs 2:
# every command appends its configuration and run to a file, so the file
# shows the order: for each n (the groups side by side), the loads of a
# then b, then run 1 a b, run 2 b a, run 3 a b; the rows in configuration
# order.  An --alternate of no --param or --set key is refused.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

RUN=$SFS_ROOT/bench/run
export SCATTERFS_BUILD=$SFS_BUILD
# shellcheck disable=SC2016 # bench/run's sh -c expands them
two='for x in f g; do dd if=/dev/zero of="$SCATTERFS_MOUNT/$x" bs=64K count=1 status=none || exit 1; done'
# shellcheck disable=SC2016
w='dd if=/dev/zero of="$SCATTERFS_MOUNT/f" bs=16K count=2 conv=notrunc status=none &&
dd if=/dev/zero of="$SCATTERFS_MOUNT/g" bs=4K count=1 conv=notrunc status=none'
stats=(--log-stat s=sum:write:size --log-stat m=mean:write:size --log-stat hi=max:write:size
	--log-stat lo=min:write:size --log-stat os=max:write:offset\|size --log-stat oss=sum:write:offset\|size
	--log-stat mu=max:write:model_us\|size --log-stat ext=mean:extend:size)
"$RUN" --layouts contiguous --runs 2 --size 64M --format csv --set log.ops=read:write:extend \
	"${stats[@]}" --load "$two" --workload "$w" >"$SFS_TMP/st.csv" 2>"$SFS_TMP/st.err" </dev/null ||
	fail "bench/run --log-stat exited $?: $(tail -5 "$SFS_TMP/st.err")"
cat "$SFS_TMP/st.csv"
assert_eq "$(python3 -c 'import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
print(*(r[c] or "-" for c in ("s", "m", "hi", "lo", "os", "oss", "mu", "ext")), r["error"] or "-")' "$SFS_TMP/st.csv")" \
	"36864 12288 16384 4096 16384 36864 16384 - -" "--log-stat columns"
rc=0
"$RUN" --layouts contiguous --log-stat x=avg:write:size --load : --workload : >/dev/null 2>"$SFS_TMP/bad.err" </dev/null || rc=$?
assert_eq "$rc.$(cat "$SFS_TMP/bad.err")" "2.bench/run: --log-stat x=avg:write:size: STAT must be sum, mean, max or min, not 'avg'" \
	"--log-stat of an unknown STAT"

order=$SFS_TMP/order
# shellcheck disable=SC2016
rec='echo "$SCATTERFS_PARAM_n$SCATTERFS_PARAM_kind$SCATTERFS_RUN" >>'"$order"
: >"$order"
"$RUN" --layouts contiguous --param n=1,2 --param kind=a,b --alternate kind --runs 3 --jobs 2 \
	--size 16M --format csv --load "$rec" --workload "$rec" >"$SFS_TMP/alt.csv" 2>"$SFS_TMP/alt.err" </dev/null ||
	fail "bench/run --alternate exited $?: $(tail -5 "$SFS_TMP/alt.err")"
for n in 1 2; do
	assert_eq "$(grep "^$n" "$order" | tr '\n' ' ')" "${n}a0 ${n}b0 ${n}a1 ${n}b1 ${n}b2 ${n}a2 ${n}a3 ${n}b3 " \
		"--alternate kind: the order of n=$n's loads and runs"
done
assert_eq "$(tail -n +2 "$SFS_TMP/alt.csv" | cut -d, -f1-3 | tr '\n' ' ')" \
	"contiguous,1,a contiguous,1,b contiguous,2,a contiguous,2,b " "--alternate: rows in configuration order"
rc=0
"$RUN" --layouts contiguous --param kind=a,b --alternate size --load : --workload : >/dev/null 2>"$SFS_TMP/bad.err" </dev/null || rc=$?
assert_eq "$rc.$(cat "$SFS_TMP/bad.err")" "2.bench/run: --alternate size: not a --param name or --set key (kind)" "--alternate of no key"
note ok
