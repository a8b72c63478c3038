#!/bin/bash
# The self-test of tests/run: what it adds to `meson test` (the selection
# of tests per pass, the EXCLUSIVE tests after the others, the counting,
# the lines and the summary).  It runs tests/run on meson's fixture suites
# (SCATTERFS_MOUNT_SUITE=selftest-*, tests/selftest/*, defined in
# tests/meson.build) and checks what it counts and prints.  What meson
# itself guarantees (a limit ends a test, N at a time, is_parallel false
# runs alone) is checked only as far as tests/run relies on it.
#   - selftest-counts: one test passes, one fails, one is skipped by
#     lib.sh's sfs_require; the last line is exactly "1 passed, 1 failed,
#     1 skipped", the exit status 1, the skip printed with its reason;
#     each test's line and the pass's end with its wall and CPU time;
#     the summary gives each failure's reason (its first "FAIL: " or
#     "(timed out" line), so a CI log that cuts a long output keeps it;
#   - the skipped one alone: "0 passed, 0 failed, 1 skipped", exit 0; a
#     name that is no test of the suite fails, named;
#   - selftest-timeout: a test that sleeps 60 s under its own
#     "# TIMEOUT: 2" line fails as timed out after 2 s, well before 60 s;
#   - selftest-parallel: a.sh and b.sh run at the same time (each waits
#     for the other to start), each one's output printed in one block;
#     alone.sh, with an EXCLUSIVE line, runs after both and beside
#     neither; SCATTERFS_JOBS=1 runs one test at a time (a.sh waits 5 s
#     for b.sh in vain: exit 4; b.sh, after it, finds a.sh started: exit
#     3), a SCATTERFS_JOBS that is not a whole number of at least 1 is
#     refused (exit 2), and without it the schedule is one test more than
#     the CPUs (at least 2);
#   - selftest-tap: a TAP test (as the criterion binaries) counts each
#     case (one passed, one failed, one skipped), and one that dies of a
#     signal after two of its three cases counts two passed and a failure;
#   - SCATTERFS_TRANSPORT: tests/run sets the kernel's enable_uring for
#     its mount pass and, killed with SIGTERM during it, puts back the
#     value it found (as root where the kernel has the parameter; its
#     value stays off only a moment, while no mount test runs);
#   - meson's test list (SCATTERFS_BUILDDIR, default build) has every
#     tests/mount/*.sh in the suite 'mount', with the limit of its
#     TIMEOUT line (400 s without one), the EXCLUSIVE ones in 'mount-alone'
#     too, and nothing else in 'mount'.
# Exit 0 when all of it holds, 1 otherwise (each difference is printed).
set -uo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
cd "$root" || exit 1
# The limits under test are the fixtures' own.
unset SCATTERFS_TIMEOUT_MULTIPLIER SCATTERFS_SANITIZE SCATTERFS_JOBS
export SCATTERFS_NO_SETUP=1

bad=0
expect() { # ACTUAL EXPECTED WHAT
	if [[ $1 != "$2" ]]; then
		echo "selftest: $3: got '$1', expected '$2'"
		bad=1
	fi
}
has_line() { # OUTPUT REGEX WHAT
	grep -Eqx -- "$2" <<<"$1" || {
		echo "selftest: $3: no line matching '$2' in:"
		sed 's/^/    /' <<<"$1"
		bad=1
	}
}

out=$(SCATTERFS_MOUNT_SUITE=selftest-counts tests/run mount 2>&1)
rc=$?
expect "$(tail -n 1 <<<"$out")" "1 passed, 1 failed, 1 skipped" "last line, one test of each outcome"
expect "$rc" 1 "exit status with one failure"
has_line "$out" 'PASS pass \([0-9]+ s, cpu [0-9]+\.[0-9] s\)' "the passing test, its wall and CPU time"
has_line "$out" 'FAIL fail \(exit 3, [0-9]+ s, cpu [0-9]+\.[0-9] s\):' "the failing test"
has_line "$out" '    FAIL: fixture failure' "the failing test's output"
has_line "$out" 'SKIP skip: missing sfs-selftest-no-such-tool' "the skipped test and its reason"
has_line "$out" 'failed: fail' "the list of failures"
has_line "$out" '  fail: FAIL: fixture failure' "the failure's reason in the summary (its FAIL: line)"
has_line "$out" '== pass mount: [0-9]+ s wall, [0-9]+\.[0-9] s cpu' "the pass's wall and CPU time"

out=$(SCATTERFS_MOUNT_SUITE=selftest-counts tests/run mount skip 2>&1)
rc=$?
expect "$(tail -n 1 <<<"$out")" "0 passed, 0 failed, 1 skipped" "last line, the skipped test alone"
expect "$rc" 0 "exit status with nothing failed"

# The skip itself: exit 77 and one line on stderr, no failure report from
# lib.sh's exit trap.
err=$(bash tests/selftest/counts/skip.sh 2>&1 >/dev/null)
rc=$?
expect "$rc" 77 "exit status of sfs_require with the tool missing"
expect "$err" "SKIP: missing sfs-selftest-no-such-tool" "stderr of sfs_require with the tool missing"

start=$SECONDS
out=$(SCATTERFS_MOUNT_SUITE=selftest-timeout tests/run mount 2>&1)
rc=$?
took=$((SECONDS - start))
# (and the default schedule: one per CPU, at least 2, and one more)
ncpu=$(nproc 2>/dev/null || echo 2)
((ncpu >= 2)) || ncpu=2
has_line "$out" "== 1 tests, $((ncpu + 1)) at a time; then 0 alone" "the default schedule"
expect "$(tail -n 1 <<<"$out")" "0 passed, 1 failed, 0 skipped" "last line, a test past its TIMEOUT"
expect "$rc" 1 "exit status with a test timed out"
has_line "$out" '    \(timed out after 2 s\)' "the timed-out test's note"
has_line "$out" '  slow: \(timed out after 2 s\)' "the timed-out test's reason in the summary"
((took < 30)) || { echo "selftest: the test with TIMEOUT: 2 ran $took s"; bad=1; }

pdir=$(mktemp -d)
out=$(SFS_SELFTEST_DIR=$pdir SCATTERFS_JOBS=2 SCATTERFS_MOUNT_SUITE=selftest-parallel tests/run mount 2>&1)
rc=$?
expect "$(tail -n 1 <<<"$out")" "1 passed, 2 failed, 0 skipped" "last line, two tests side by side and one alone"
expect "$rc" 1 "exit status, two tests side by side"
has_line "$out" '== 2 tests, 2 at a time; then 1 alone' "the schedule"
has_line "$out" 'FAIL a \(exit 3, [0-9]+ s, cpu [0-9]+\.[0-9] s\):' "a.sh saw b.sh run beside it"
has_line "$out" 'FAIL b \(exit 3, [0-9]+ s, cpu [0-9]+\.[0-9] s\):' "b.sh saw a.sh run beside it"
for t in a b; do
	grep -A3 -x "FAIL $t (.*" <<<"$out" | tail -n 3 | tr '\n' '|' >"$pdir/block"
	expect "$(cat "$pdir/block")" "    $t line 1|    $t line 2|    $t line 3|" "$t.sh's output in one block"
done
expect "$(grep -E '^(PASS|FAIL|SKIP) ' <<<"$out" | tail -n 1 | cut -d ' ' -f 1-2)" "PASS alone" "the EXCLUSIVE test last, alone"
rm -rf "$pdir"
pdir=$(mktemp -d)
out=$(SFS_SELFTEST_DIR=$pdir SCATTERFS_JOBS=1 SCATTERFS_MOUNT_SUITE=selftest-parallel tests/run mount a b 2>&1)
has_line "$out" '== 2 tests, 1 at a time; then 0 alone' "the schedule with SCATTERFS_JOBS=1"
has_line "$out" 'FAIL a \(exit 4, .*' "a.sh alone with SCATTERFS_JOBS=1"
has_line "$out" 'FAIL b \(exit 3, .*' "b.sh after a.sh with SCATTERFS_JOBS=1"
rm -rf "$pdir"
err=$(SCATTERFS_JOBS=0 SCATTERFS_MOUNT_SUITE=selftest-parallel tests/run mount alone 2>&1 >/dev/null)
rc=$?
expect "$rc" 2 "exit status with SCATTERFS_JOBS=0"
expect "$err" "tests/run: SCATTERFS_JOBS=0: expected a whole number of at least 1" "SCATTERFS_JOBS=0"

out=$(SCATTERFS_MOUNT_SUITE=selftest-tap tests/run mount crash cases no-such-test 2>&1)
rc=$?
expect "$(tail -n 1 <<<"$out")" "3 passed, 3 failed, 1 skipped" "last line, the TAP fixtures and a name that is no test"
has_line "$out" "FAIL no-such-test: no such mount test in meson's suite selftest-tap" "the name that is no test"
expect "$rc" 1 "exit status, the TAP fixtures"
has_line "$out" 'FAIL cases: 1 of 2 passed, 1 skipped \([0-9]+ s\)' "a TAP test with a failed case"
has_line "$out" '    # fixture::fails: expected 1, got 2' "the failed case's output"
has_line "$out" 'FAIL crash: error, exit -11 after 2 passed \([0-9]+ s\)' "a TAP test that crashed"

P=/sys/module/fuse/parameters/enable_uring
if [[ -w $P ]]; then
	was=$(cat "$P")
	[[ $was == Y ]] && t=dev flip=N || t=uring flip=Y
	SCATTERFS_TRANSPORT=$t SCATTERFS_MOUNT_SUITE=selftest-timeout tests/run mount >/dev/null 2>&1 &
	pid=$!
	for ((i = 0; i < 200; i++)); do [[ $(cat "$P") == "$flip" ]] && break; sleep 0.05; done
	expect "$(cat "$P")" "$flip" "enable_uring during a mount pass with SCATTERFS_TRANSPORT=$t"
	kill -TERM "$pid"
	wait "$pid"
	expect "$?" 143 "exit status of tests/run after SIGTERM"
	expect "$(cat "$P")" "$was" "enable_uring after SIGTERM to tests/run during its mount pass"
	echo "$was" >"$P"
else
	echo "selftest: $P not writable (not root, or no FUSE over io_uring): its restore on SIGTERM not checked"
fi

build=${SCATTERFS_BUILDDIR:-build}
want=$(for f in tests/mount/*.sh; do
	t=$(sed -n 's/^# TIMEOUT: *\([0-9][0-9]*\) *$/\1/p' "$f" | head -n 1)
	a=$(grep -q '^# EXCLUSIVE:' "$f" && echo ",mount-alone")
	echo "$(basename "$f" .sh) mount$a ${t:-400}"
done | sort)
got=$(meson introspect "$build" --tests | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    suites = sorted(s.rpartition(":")[2] for s in t["suite"])
    if "mount" in suites:
        print(t["name"], ",".join(s for s in suites if s != "nosanitize"), t["timeout"])
' | sort)
expect "$got" "$want" "meson's mount suite (name, suites, timeout) against tests/mount/*.sh"

((bad == 0)) && echo "selftest: tests/run counts, skips and limits as documented"
exit "$bad"
