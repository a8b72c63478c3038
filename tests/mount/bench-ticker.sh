#!/bin/bash
# A step that runs past a minute says so on stderr, then every 30 s; here
# with the ticker's times shortened to 10 s and 30 s (SCATTERFS_TICKER_S=10:30,
# the same code path) so that the test does not sleep a minute: bench/run
# with a 15-second workload prints "...run 1/1: still running after 10 s"
# once (the next would come at 40 s), and the bash experiments' ticker
# (bench/tools.sh's bench_step_begin/bench_step_end, run at the same time)
# does the same for a 15-second step; neither writes to stdout but the
# table (bench/run) or nothing (the ticker), and the ticker is gone once
# its step ended, and gone when the script exits inside a step.  Without SCATTERFS_TICKER_S the first line comes after
# 1:00 (checked in the code's default, "60:30", by grep below).
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
export SCATTERFS_TICKER_S=10:30
grep -q 'SCATTERFS_TICKER_S", "60:30"' "$SFS_ROOT/bench/run" || fail "bench/run's ticker default is not 60:30"
grep -q 'SCATTERFS_TICKER_S:-60:30' "$SFS_ROOT/bench/tools.sh" || fail "bench/tools.sh's ticker default is not 60:30"
# the bash ticker, in the background while bench/run runs
(
	root=$SFS_ROOT
	# shellcheck source=../../bench/lib.sh
	source "$SFS_ROOT/bench/lib.sh"
	# shellcheck source=../../bench/tools.sh
	source "$SFS_ROOT/bench/tools.sh"
	bench_progress_init 1
	bench_step_begin "the long step"
	sleep 15
	bench_step_end "the long step" 15.000
	echo "$bench_ticker" >"$T/ticker.pid"
) >"$T/lib.out" 2>"$T/lib.err" &
libpid=$!

SCATTERFS_BUILD=$SFS_BUILD "$SFS_ROOT/bench/run" --layouts contiguous --runs 1 --size 64M \
	--load true --workload 'sleep 15' --format csv >"$T/out" 2>"$T/err" </dev/null ||
	{ sfs_add_log "$T/err"; fail "bench/run exited $?"; }
wait "$libpid" || fail "the bash ticker's step exited $?"
sfs_add_log "$T/err"
sfs_add_log "$T/lib.err"

assert_eq "$(grep -c 'still running' "$T/err")" 1 "bench/run: 'still running' lines"
grep -Eq '^bench/run \[[0-9:]{8}\] config 1/1 \(contiguous\), run 1/1: still running after 10 s$' "$T/err" ||
	fail "bench/run: no 'still running after 10 s' line for run 1/1"
assert_eq "$(wc -l <"$T/out")" 2 "bench/run: lines on stdout (the header and one row)"

assert_eq "$(grep -c 'still running' "$T/lib.err")" 1 "ticker: 'still running' lines"
grep -Eq '^bench-ticker\.sh \[[0-9:]{8}\] the long step: still running after 10 s$' "$T/lib.err" ||
	fail "ticker: no 'still running after 10 s' line"
grep -Eq '^bench-ticker\.sh \[[0-9:]{8}\] the long step: 15\.000 s; step 1/1, elapsed (1[5-9]|2[0-9]) s, about 0 s left$' "$T/lib.err" ||
	fail "ticker: no progress line at the end of the step"
assert_eq "$(wc -c <"$T/lib.out")" 0 "ticker: bytes on stdout"
assert_eq "$(cat "$T/ticker.pid")" "" "ticker: left running after its step"

# A script that fails inside a step stops its ticker at exit (bench/dirs
# with a key the daemon refuses: its ticker went on printing "still
# running" for ever, into whatever had the script's stderr).
rc=0
SCATTERFS_TICKER_S=1:1 SCATTERFS_BUILD=$SFS_BUILD "$SFS_ROOT/bench/dirs" --counts 100 --rounds 1 \
	--set cache.bogus=1 >"$T/dirs.out" 2>"$T/dirs.err" </dev/null || rc=$?
sfs_add_log "$T/dirs.err"
assert_eq "$rc" 1 "bench/dirs with a refused key: exit status"
n=$(grep -c 'still running' "$T/dirs.err" || true)
sleep 3
assert_eq "$(grep -c 'still running' "$T/dirs.err" || true)" "$n" "'still running' lines 3 s after bench/dirs exited"

# Ctrl-C (SIGINT to the process group, as a terminal sends it) during a
# mount: one line that says so and what was cleaned up, no FAIL and no
# logs (it said "FAIL: dirs: killed by signal 2 (timeout?)" and dumped
# the daemon's log), nothing left mounted.
# (a background job of a script ignores SIGINT, and so would its
# children: python starts bench/dirs in a session of its own with SIGINT
# at its default, and writes its exit status)
SCATTERFS_BUILD=$SFS_BUILD TMPDIR=$T python3 -c '
import signal, subprocess, sys
p = subprocess.Popen(sys.argv[3:], start_new_session=True, stdin=subprocess.DEVNULL,
                     stdout=open(sys.argv[2] + "/int.out", "w"), stderr=open(sys.argv[2] + "/int.err", "w"),
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
open(sys.argv[1], "w").write(str(p.pid))
open(sys.argv[2] + "/int.rc", "w").write(str(p.wait()))' "$T/int.pid" "$T" "$SFS_ROOT/bench/dirs" --counts 50000 --rounds 1 &
wpid=$!
for ((i = 0; i < 300; i++)); do grep -q 'mounted' "$T/int.err" 2>/dev/null && break; sleep 0.1; done
grep -q 'mounted' "$T/int.err" || fail "bench/dirs did not mount within 30 s: $(cat "$T/int.err")"
kill -INT -- "-$(cat "$T/int.pid")"
wait "$wpid"
rc=$(cat "$T/int.rc")
sfs_add_log "$T/int.err"
assert_eq "$rc" 130 "bench/dirs after SIGINT: exit status"
assert_eq "$(tail -n 1 "$T/int.err")" "dirs: interrupted (SIGINT): unmounted and cleaned up" "bench/dirs after SIGINT: its last line"
assert_eq "$(grep -c 'FAIL' "$T/int.err" || true)" 0 "bench/dirs after SIGINT: FAIL lines"
assert_eq "$(awk -v t="$T/" 'index($5, t) == 1' /proc/self/mountinfo | wc -l)" 0 "mounts left under $T after SIGINT"
note "pass"
