#!/bin/bash
# TIMEOUT: 240
# EXCLUSIVE: it counts context switches (tests/run runs it alone)
# bench/transport-counts at a tiny scale (one round of 1 s, a 32 MiB file):
# - it runs at all (it once stopped at its first mount: it sourced
#   bench/lib.sh without bench_setup, so tests/lib.sh's functions were
#   missing, and it left enable_uring at Y);
# - its CSV has the header in order and one row a transport and workload,
#   in the order given, each with requests and system calls above 0;
# - a write on /dev/fuse costs the daemon exactly 3 system calls a request
#   (read of /dev/fuse, pwrite64, writev; 3.00 to 3.05 as counted: the
#   daemon's idle threads add a few), and no ring thread; a ring run has
#   ring threads;
# - enable_uring is what it was before the run (set for the run).
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require fio python3 perf
perf stat -e raw_syscalls:sys_enter -o /dev/null true 2>/dev/null ||
	sfs_skip "perf cannot count the raw_syscalls:sys_enter trace point here (no tracefs)"

TC=$SFS_ROOT/bench/transport-counts
param=/sys/module/fuse/parameters/enable_uring
transports=dev
if [[ -e $param ]]; then
	transports=dev,uring
	was=$(cat "$param")
fi
"$TC" --transports "$transports" --workloads wr,qd1 --rounds 1 --runtime 1 --size 32M \
	>"$SFS_TMP/tc.csv" 2>"$SFS_TMP/tc.err" || fail "bench/transport-counts failed: $(tail -5 "$SFS_TMP/tc.err")"
[[ ! -e $param ]] || assert_eq "$(cat "$param")" "$was" "enable_uring after the run"
assert_eq "$(head -1 "$SFS_TMP/tc.csv")" \
	"round,transport,workload,requests,iops,syscalls_per_req,voluntary_cs_per_req,involuntary_cs_per_req,ring_threads,queued_reads,polled_reads" \
	"the header"
want=()
for w in wr qd1; do for t in ${transports//,/ }; do want+=("1,$t,$w"); done; done
assert_eq "$(tail -n +2 "$SFS_TMP/tc.csv" | cut -d, -f1-3 | paste -sd' ')" "${want[*]}" "rows: round, transport, workload"
tail -n +2 "$SFS_TMP/tc.csv" | while IFS=, read -r _ t w req _ sc _ _ th _; do
	((req > 0)) || fail "$t $w: $req requests"
	[[ $sc =~ ^[0-9]+\.[0-9]{2}$ && $sc != 0.00 ]] || fail "$t $w: system calls a request '$sc'"
	if [[ $t == dev ]]; then
		assert_eq "$th" 0 "$t $w: ring threads"
		# the daemon's idle threads add a few calls to perf's count, never fewer
		[[ $w != wr ]] || awk -v s="$sc" 'BEGIN { exit !(s >= 3 && s <= 3.05) }' ||
			fail "$t $w: $sc system calls a request, expected 3 (3.00 to 3.05)"
	else
		((th > 0)) || fail "$t $w: no ring thread on the ring"
	fi
done
note "pass"
