#!/bin/bash
# A step that runs past a minute says so on stderr: bench/run with a
# 65-second workload prints "...run 1/1: still running after 1:00" once
# (the next would come at 1:30), and the bash experiments' ticker
# (bench/lib.sh's bench_step_begin/bench_step_end, run at the same time)
# does the same for a 65-second step; neither writes to stdout but the
# table (bench/run) or nothing (the ticker), and the ticker is gone once
# its step ended.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
# the bash ticker, in the background while bench/run runs
(
	root=$SFS_ROOT bench_stage=options
	# shellcheck source=../../bench/lib.sh
	source "$SFS_ROOT/bench/lib.sh"
	bench_progress_init 1
	bench_step_begin "the long step"
	sleep 65
	bench_step_end "the long step" 65.000
	echo "$bench_ticker" >"$T/ticker.pid"
) >"$T/lib.out" 2>"$T/lib.err" &
libpid=$!

SCATTERFS_BUILD=$SFS_BUILD "$SFS_ROOT/bench/run" --layouts contiguous --runs 1 --size 64M \
	--load true --workload 'sleep 65' --format csv >"$T/out" 2>"$T/err" </dev/null ||
	{ sfs_add_log "$T/err"; fail "bench/run exited $?"; }
wait "$libpid" || fail "the bash ticker's step exited $?"
sfs_add_log "$T/err"
sfs_add_log "$T/lib.err"

assert_eq "$(grep -c 'still running' "$T/err")" 1 "bench/run: 'still running' lines"
grep -Eq '^bench/run \[[0-9:]{8}\] config 1/1 \(contiguous\), run 1/1: still running after 1:00$' "$T/err" ||
	fail "bench/run: no 'still running after 1:00' line for run 1/1"
assert_eq "$(wc -l <"$T/out")" 2 "bench/run: lines on stdout (the header and one row)"

assert_eq "$(grep -c 'still running' "$T/lib.err")" 1 "ticker: 'still running' lines"
grep -Eq '^bench-ticker\.sh \[[0-9:]{8}\] the long step: still running after 1:00$' "$T/lib.err" ||
	fail "ticker: no 'still running after 1:00' line"
grep -Eq '^bench-ticker\.sh \[[0-9:]{8}\] the long step: 65\.000 s; step 1/1, elapsed 1:0[5-9], about 0 s left$' "$T/lib.err" ||
	fail "ticker: no progress line at the end of the step"
assert_eq "$(wc -c <"$T/lib.out")" 0 "ticker: bytes on stdout"
assert_eq "$(cat "$T/ticker.pid")" "" "ticker: left running after its step"
note "pass"
