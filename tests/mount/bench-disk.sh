#!/bin/bash
# TIMEOUT: 300
# bench/disk at a small scale (a 256 MiB backing, runs of 1 to 2 s), both
# models; what does not depend on the machine's speed:
# - stdout is the table alone: progress (the mounts, the model's
#   parameters) goes to stderr (it went to stdout, between the table's
#   lines for a pipe, when bench/disk sourced tests/lib.sh itself);
# - the model column is the model's own figure (scatterfs-plan --expect):
#   conf/hdd-7200.ini 1000 / (8.5 + 4.167 + 4 KiB at 150 MiB/s) ms = 78.8
#   random 4 KiB reads a second and 150.0 MiB/s sequential;
#   conf/ssd-sata.ini 77.2 us a QD 1 read, 98039.2 reads a second at QD
#   32 (the datasheet's 77 and 98000 beside them);
# - the exit status is 0 (every row within 10 %) or 1 (a row outside:
#   timing on a busy machine), nothing else;
# - a bad --runtime or --size, a size too small for the hdd check and a
#   preset of the other model are one line and exit 2 before anything runs.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require fio python3

# run NAME ARGS... - bench/disk ARGS, stdout and stderr to NAME.out and NAME.err
run() {
	local n=$1 rc=0
	shift
	"$SFS_ROOT/bench/disk" "$@" >"$SFS_TMP/$n.out" 2>"$SFS_TMP/$n.err" || rc=$?
	((rc <= 1)) || fail "bench/disk $* exited $rc: $(tail -5 "$SFS_TMP/$n.err")"
	grep -q '^\[disk ' "$SFS_TMP/$n.err" || fail "bench/disk $*: no progress on stderr"
	! grep -q '^\[disk ' "$SFS_TMP/$n.out" || fail "bench/disk $*: progress on stdout: $(grep -m1 '^\[disk ' "$SFS_TMP/$n.out")"
}
# model NAME WORKLOAD N - the N columns after "measured" in WORKLOAD's row
# of NAME.out (model; model and datasheet)
model() {
	awk -v w="$2" -v n="$3" 'index($0, w) == 1 { $0 = substr($0, length(w) + 1); s = $2
		for (i = 3; i <= n + 1; i++) s = s " " $i; print s }' "$SFS_TMP/$1.out"
}

# bad --runtime and --size: one line, exit 2, before anything runs
# (--runtime 0 ran fio for ever; a bad size failed at the mount, exit 1)
for bad in "--runtime 0" "--runtime -1" "--runtime abc" "--size 0" "--size 256MB" "--size -1G"; do
	rc=0
	# shellcheck disable=SC2086 # split on purpose
	out=$(timeout 20 "$SFS_ROOT/bench/disk" $bad 2>&1) || rc=$?
	assert_eq "$rc $(wc -l <<<"$out")" "2 1" "bench/disk $bad: exit status and lines"
	[[ $out == "bench/disk: ${bad%% *} must be "* ]] || fail "bench/disk $bad: $out"
done
# a size too small for the hdd check's file (fallocate failed with
# "invalid length"), and a preset of the other model (its keys missing:
# the same failure) name what to give
for c in "--size 64M|bench/disk: --size must be at least 128M for the hdd model (its file is the backing less one 64 MiB extent), not '64M'" \
	"--disk conf/ssd-sata.ini|bench/disk: --disk conf/ssd-sata.ini is a preset of [disk] model = ssd, not hdd: give --model ssd" \
	"--model ssd --disk conf/hdd-7200.ini|bench/disk: --disk conf/hdd-7200.ini is a preset of [disk] model = hdd, not ssd: give --model hdd"; do
	rc=0
	# shellcheck disable=SC2086 # split on purpose
	(cd "$SFS_ROOT" && SCATTERFS_BUILD=$SFS_BUILD timeout 60 bench/disk ${c%%|*} --runtime 1) >/dev/null 2>"$SFS_TMP/e" || rc=$?
	assert_eq "$rc $(tail -n 1 "$SFS_TMP/e")" "2 ${c#*|}" "bench/disk ${c%%|*}" # (after tools/setup's lines)
done

run hdd --size 256M --runtime 1 --write-cache off
assert_eq "$(sed -n 2p "$SFS_TMP/hdd.out")" \
	"Disk model check, write cache off: rpm 7200, seek_avg 8.5 ms, half a revolution 4.167 ms, transfer 150 MiB/s" "hdd title"
assert_eq "$(model hdd 'random 4 KiB reads, IOPS' 1)" 78.8 "hdd: model of random 4 KiB reads"
assert_eq "$(model hdd 'sequential 1 MiB reads, MiB/s' 1)" 150.0 "hdd: model of sequential reads"

run ssd --model ssd --disk "$SFS_ROOT/conf/ssd-sata.ini" --size 256M --runtime 1
assert_eq "$(model ssd 'QD 1 random 4 KiB read, us' 2)" "77.2 77" "ssd: model and datasheet of a QD 1 read"
assert_eq "$(model ssd 'QD 32 random 4 KiB read, IOPS' 2)" "98039.2 98000" "ssd: model and datasheet at QD 32"
note "pass"
