#!/bin/bash
# TIMEOUT: 300
# (99 s at load 17 on the 2 shared cores, 2026-12-04)
# bench/run --log-stat and --alternate, the hooks bench/autoextend is
# defined with.
# --log-stat NAME=STAT:OP:FIELD: a workload that writes 16 KiB twice to f
# and 4 KiB once to g (log.ops read:write, --runs 2, then 1) gives, from the write
# rows' size: sum 36864 per run, mean 12288, max 16384, min 4096; with
# FIELD offset|size (the larger of the two per row: 16384, 16384, 4096)
# max 16384 and sum 36864; --path f leaves g's row out (sum 32768, min
# 16384); a stat of extend rows, of which there are none, is empty.  Bad
# input (an unknown STAT, a FIELD that is not a name) is refused with exit
# status 2 before anything is mounted.
# --alternate kind with --param n=1,2 --param kind=a,b --runs 3 (--jobs 1), 2 (--jobs 2): every
# command appends its configuration and run to a file, so the file shows
# the order: for each n, the loads of a then b, then run 1 a b, run 2 b a,
# run 3 a b (--jobs 1); n=1's group before n=2's with --jobs 1, and each group in that
# order with --jobs 2 (groups side by side).
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
	--log-stat ext=mean:extend:size)
for path in "" f; do
	"$RUN" --layouts contiguous --runs "$([[ -n $path ]] && echo 1 || echo 2)" --size 64M --format csv --set log.ops=read:write:extend \
		${path:+--path "$path"} "${stats[@]}" --load "$two" --workload "$w" >"$SFS_TMP/st.csv" 2>"$SFS_TMP/st.err" </dev/null ||
		fail "bench/run --log-stat exited $?: $(tail -5 "$SFS_TMP/st.err")"
	cat "$SFS_TMP/st.csv"
	got=$(python3 -c 'import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
print(*(r[c] or "-" for c in ("s", "m", "hi", "lo", "os", "oss", "ext")), r["error"] or "-")' "$SFS_TMP/st.csv")
	if [[ -z $path ]]; then
		assert_eq "$got" "36864 12288 16384 4096 16384 36864 - -" "--log-stat columns"
	else
		assert_eq "$got" "32768 16384 16384 16384 16384 32768 - -" "--log-stat columns with --path f"
	fi
done
for bad in "x=avg:write:size|STAT must be sum, mean, max or min, not 'avg'" \
	"x=sum:write:Size|expected NAME=STAT:OP:FIELD (NAME and FIELD: lower-case letters, digits and _; FIELD may be F1|F2|...)"; do
	rc=0
	"$RUN" --layouts contiguous --log-stat "${bad%%|*}" --load : --workload : >/dev/null 2>"$SFS_TMP/bad.err" </dev/null || rc=$?
	assert_eq "$rc" 2 "exit status of --log-stat ${bad%%|*}"
	grep -qF -- "${bad#*|}" "$SFS_TMP/bad.err" || fail "--log-stat ${bad%%|*}: $(cat "$SFS_TMP/bad.err")"
done

order=$SFS_TMP/order
for jobs in 1 2; do
	: >"$order"
	chmod 666 "$order"
	# shellcheck disable=SC2016
	rec='echo "$SCATTERFS_PARAM_n$SCATTERFS_PARAM_kind$SCATTERFS_RUN" >>'"$order"
	"$RUN" --layouts contiguous --param n=1,2 --param kind=a,b --alternate kind --runs "$((4 - jobs))" --jobs "$jobs" \
		--size 16M --format csv --load "$rec" --workload "$rec" >"$SFS_TMP/alt.csv" 2>"$SFS_TMP/alt.err" </dev/null ||
		fail "bench/run --alternate --jobs $jobs exited $?: $(tail -5 "$SFS_TMP/alt.err")"
	for n in 1 2; do
		want="${n}a0 ${n}b0 ${n}a1 ${n}b1 ${n}b2 ${n}a2 "
		[[ $jobs == 2 ]] || want+="${n}a3 ${n}b3 "
		assert_eq "$(grep "^$n" "$order" | tr '\n' ' ')" "$want" \
			"--alternate kind, --jobs $jobs: the order of n=$n's loads and runs"
	done
	[[ $jobs == 2 ]] || assert_eq "$(head -1 "$order")$(sed -n 9p "$order")" 1a02a0 "--jobs 1: n=1's group first"
	assert_eq "$(tail -n +2 "$SFS_TMP/alt.csv" | cut -d, -f1-3 | tr '\n' ' ')" \
		"contiguous,1,a contiguous,1,b contiguous,2,a contiguous,2,b " "--alternate, --jobs $jobs: rows in configuration order"
done
rc=0
"$RUN" --layouts contiguous --param kind=a,b --alternate size --load : --workload : >/dev/null 2>"$SFS_TMP/bad.err" </dev/null || rc=$?
assert_eq "$rc.$(cat "$SFS_TMP/bad.err")" "2.bench/run: --alternate size: not a --param name or --set key (kind)" "--alternate of no key"
note ok
