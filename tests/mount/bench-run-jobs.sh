#!/bin/bash
# bench/run --jobs: four configurations (two layouts x two extent sizes)
# under the disk model, once with --jobs 1 and once with --jobs 4.  The
# tables have the same header and the same rows in the same order, and
# every figure that does not depend on timing is equal between them:
# reads, bytes_read, device_ios, dominant_read_size, static_score.  With
# --jobs 4 the loads ran side by side (each load logs its SCATTERFS_JOB
# and start/end time: some two overlap), and with --jobs 1 none did; each
# configuration's commands saw its own number, 1 to 4.  --jobs 0 is refused.
# A SIGTERM while groups of configurations (--alternate) run side by side
# stops the sweep: no run starts after it (the groups once went on to
# their next configuration and run, for 15 s), bench/run exits 143 within
# 10 s, and no mount is left.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

RUN=$SFS_ROOT/bench/run
export JOBLOG
for j in 1 4; do
	JOBLOG=$SFS_TMP/jobs$j.log
	: >"$JOBLOG"
	SCATTERFS_BUILD=$SFS_BUILD "$RUN" --layouts contiguous,equi-fragmented \
		--set layout.extent_size=64K,128K --disk "$SFS_ROOT/conf/hdd-7200.ini" \
		--runs 2 --size 256M --jobs $j --format csv \
		--load 'echo "$SCATTERFS_JOB start $(date +%s%N)" >>"$JOBLOG"; dd if=/dev/zero of="$SCATTERFS_MOUNT/f" bs=64K count=40 status=none; sleep 1; echo "$SCATTERFS_JOB end $(date +%s%N)" >>"$JOBLOG"' \
		--workload 'dd if="$SCATTERFS_MOUNT/f" of=/dev/null bs=256K iflag=direct status=none' \
		>"$SFS_TMP/out$j.csv" 2>"$SFS_TMP/err$j.txt" </dev/null || fail "bench/run --jobs $j exited $?: $(tail -5 "$SFS_TMP/err$j.txt")"
	sfs_add_log "$SFS_TMP/out$j.csv"
	sfs_add_log "$SFS_TMP/err$j.txt"
	assert_eq "$(awk '{ print $1 }' "$JOBLOG" | sort -u | paste -sd' ')" "1 2 3 4" "SCATTERFS_JOB values seen with --jobs $j"
done
cat "$SFS_TMP/out1.csv" "$SFS_TMP/out4.csv"

# the columns that do not depend on timing
fixed() {
	python3 - "$1" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(",".join(r[k] for k in ("layout", "layout.extent_size", "runs", "reads", "bytes_read",
                                  "device_ios", "dominant_read_size", "static_score", "error")))
PY
}
assert_eq "$(head -1 "$SFS_TMP/out4.csv")" "$(head -1 "$SFS_TMP/out1.csv")" "header with --jobs 4 against --jobs 1"
assert_eq "$(fixed "$SFS_TMP/out4.csv")" "$(fixed "$SFS_TMP/out1.csv")" "rows' fixed figures with --jobs 4 against --jobs 1"
assert_eq "$(tail -n +2 "$SFS_TMP/out4.csv" | cut -d, -f1,2 | paste -sd' ')" \
	"contiguous,64K contiguous,128K equi-fragmented,64K equi-fragmented,128K" "row labels, in order, with --jobs 4"

# overlapping loads: some load started before another one ended
overlaps() {
	awk '{ t[$1, $2] = $3; j[$1] = 1 }
		END { n = 0; for (a in j) for (b in j) if (a < b && t[a, "start"] < t[b, "end"] && t[b, "start"] < t[a, "end"]) n++; print n }' "$1"
}
assert_eq "$(overlaps "$SFS_TMP/jobs1.log")" 0 "overlapping loads with --jobs 1"
n=$(overlaps "$SFS_TMP/jobs4.log")
((n >= 1)) || fail "no two loads overlapped with --jobs 4: $(cat "$SFS_TMP/jobs4.log")"
note "$n pairs of loads overlapped with --jobs 4"

if out=$(SCATTERFS_BUILD=$SFS_BUILD "$RUN" --layouts contiguous --jobs 0 --load true --workload true 2>&1); then
	fail "--jobs 0 accepted: $out"
fi
[[ $out == *"--jobs must be a positive whole number, not '0'"* ]] || fail "--jobs 0: $out"

# SIGTERM in the middle of two --alternate groups run side by side
err=$SFS_TMP/term.err
SCATTERFS_BUILD=$SFS_BUILD "$RUN" --layouts contiguous,equi-fragmented --disk none --runs 3 --size 64M --jobs 2 \
	--param kind=grow,static --alternate kind --load 'sleep 1' --workload 'sleep 3' --workdir "$SFS_TMP/term" \
	--format csv >/dev/null 2>"$err" </dev/null &
pid=$!
sfs_add_log "$err"
for ((i = 0; i < 600; i++)); do
	(($(grep -c ': loaded: ' "$err") == 4)) && break
	sleep 0.1
done
(($(grep -c ': loaded: ' "$err") == 4)) || fail "the four loads did not end within 60 s"
sleep 1 # the groups' first runs are under way
n=$(wc -l <"$err")
t0=$(date +%s%N)
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
assert_eq "$rc" 143 "bench/run's exit status after SIGTERM"
((ms <= 10000)) || fail "bench/run took $ms ms to end after SIGTERM"
after=$(tail -n +"$((n + 1))" "$err")
! grep -E ': loading|, run [0-9]+/3: [0-9.]+ s' <<<"$after" || fail "a load or run ended after SIGTERM: $after"
[[ -z $(findmnt -rn -t fuse.scatterfs -o TARGET | grep -F "$SFS_TMP/term") ]] || fail "a mount was left after SIGTERM"
note "bench/run ended $ms ms after SIGTERM"
note ok
