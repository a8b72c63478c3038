#!/bin/bash
# Bad input to bench/run: an unknown option, a --set of an unknown key, a
# --set value out of the key's range, --runs 0, --discard as large as
# --runs, a --data directory that does not exist or is a file, a layout
# file that does not exist, an unknown layout name, a --baseline that is
# none of the layouts, a --disk file that does not exist, a --size the
# daemon would refuse (its own message), a --param with a bad name or
# given twice, a --read-size of 0 or a fraction, a --counter with a bad
# name or path or the name of a column bench/run has, a --baseline of a value the --param does not have,
# a --log-count with a bad name, an op the log does not know (the daemon's
# message), a name of bench/run's own or a fraction of a size, --merge,
# --result or --jobs with what they do not go with.  Each exits 2
# with exactly one line on stderr, the expected message (for a --set, the
# daemon's own message for the same -o override, taken from the daemon),
# prints nothing on stdout, mounts nothing (under this test's directory,
# where --workdir points) and does not create --workdir.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

RUN=$SFS_ROOT/bench/run
T=$SFS_TMP
work=$T/work
ok=(--layouts contiguous --load true --workload true --workdir "$work")

# daemon_says OVERRIDE - the daemon's message refusing -o OVERRIDE
daemon_says() {
	local msg
	mkdir -p "$T/m"
	if msg=$("$SFS_BIN" "$T/b" "$T/m" -f -o "size=1M,$1" 2>&1 </dev/null); then
		fusermount3 -u "$T/m"
		fail "the daemon accepted -o $1"
	fi
	rm -f "$T/b" "$T/b.scatterfs"
	echo "${msg#scatterfs: }"
}
nokey=$(daemon_says layout.nokey=1)
range=$(daemon_says layout.contiguous_ratio=1.5)
[[ -n $nokey && -n $range ]] || fail "no message from the daemon"

: >"$T/afile"
check() {
	local want=$1 out err rc=0
	shift
	SCATTERFS_BUILD=$SFS_BUILD "$RUN" "$@" >"$T/out" 2>"$T/err" </dev/null || rc=$?
	err=$(cat "$T/err")
	assert_eq "$rc" 2 "exit status of bench/run $*"
	assert_eq "$err" "bench/run: $want" "message of bench/run $*"
	assert_eq "$(wc -c <"$T/out")" 0 "bytes on stdout from bench/run $*"
	[[ ! -e $work ]] || fail "bench/run $* created $work"
	# other users' mounts come and go on the machine: count only ours
	assert_eq "$(awk -v t="$T/" 'index($5, t) == 1' /proc/self/mountinfo | wc -l)" 0 "mounts under $T after bench/run $*"
}

check "unknown option '--bogus' (see --help)" "${ok[@]}" --bogus
check "--set layout.nokey=1: $nokey" "${ok[@]}" --set layout.nokey=1
check "--set layout.contiguous_ratio=1.5: $range" "${ok[@]}" --set layout.contiguous_ratio=0.5,1.5
check "--runs must be a positive whole number, not '0'" "${ok[@]}" --runs 0
# --size 0 failed at the first mount; -1M (and --runs -2) got argparse's
# "expected one argument", which named no value
check "--size 0: each configuration's backing is created at --size, which must be above 0" "${ok[@]}" --size 0
check "--size -1M: not a size: negative" "${ok[@]}" --size -1M
check "--runs must be a positive whole number, not '-2'" "${ok[@]}" --runs -2
check "--discard 2 leaves no run of --runs 2 to count" "${ok[@]}" --runs 2 --discard 2
check "--data $T/nodir: no such directory" --layouts contiguous --data "$T/nodir" --workload true --workdir "$work"
check "--data $T/afile: not a directory" --layouts contiguous --data "$T/afile" --workload true --workdir "$work"
check "layout file $T/nope.ini: no such file" --layouts "contiguous,$T/nope.ini" --load true --workload true --workdir "$work"
# a name's alternatives: conf/'s layouts for a layout, its disk presets
# for --disk (the layouts' list offered the presets too)
check "no layout 'nope' (conf/nope.ini); give a path to an INI file or one of: contiguous default equi-fragmented postgres random-fragmented single-extent" \
	--layouts nope --load true --workload true --workdir "$work"
check "--baseline single-extent: not one of the layouts (contiguous,equi-fragmented)" \
	--layouts contiguous,equi-fragmented --baseline single-extent --load true --workload true --workdir "$work"
presets="give a path to an INI file or one of: hdd-1999 hdd-5400 hdd-7200 ssd-nvme ssd-sata"
check "--disk $T/nodisk.ini: no such file; $presets" "${ok[@]}" --disk "$T/nodisk.ini"
check "--disk ssd-nvm: no such file; $presets" "${ok[@]}" --disk ssd-nvm
# conf/ssd-nvme without .ini is the preset, from any directory, as
# ssd-nvme is (it was no such file)
for d in conf/ssd-nvme ssd-nvme "$SFS_ROOT/conf/ssd-nvme"; do
	(cd "$T" && SCATTERFS_BUILD=$SFS_BUILD "$RUN" --layouts contiguous --disk "$d" --load : --workload : --list >/dev/null) ||
		fail "--disk $d refused"
done
check "--param 'Page=1': expected NAME=V1,V2,... (NAME: lower-case letters, digits and _)" "${ok[@]}" --param Page=1
check "--param n given twice" "${ok[@]}" --param n=1 --param n=2,3
badop=$(daemon_says log.ops=bogus)
check "--log-count 'Writes=write': expected NAME=OP or NAME=OP:BYTES (NAME: lower-case letters, digits and _)" "${ok[@]}" --log-count Writes=write
check "--log-count w=bogus: $badop" "${ok[@]}" --log-count w=bogus
check "--log-count reads: a column of that name is in the table already" "${ok[@]}" --log-count reads=read
check "--log-count w=write:1.5K: 1.5K: not a size: no fractions (use a smaller unit: 1536, not 1.5K)" "${ok[@]}" --log-count w=write:1.5K
check "--read-size must be more than 0 bytes, not '0'" "${ok[@]}" --read-size 0
check "--read-size 1.5K: not a size: no fractions (use a smaller unit: 1536, not 1.5K)" "${ok[@]}" --read-size 1.5K
check "--baseline n=4: 4 is not one of 1,2" "${ok[@]}" --param n=1,2 --baseline n=4
check "--counter 'Busy=busy_ms': expected NAME=PATH (NAME: lower-case letters, digits and _; PATH: keys of .scatterfs/stats joined by '.')" "${ok[@]}" --counter Busy=busy_ms
check "--counter 'busy=devices..busy_ms': expected NAME=PATH (NAME: lower-case letters, digits and _; PATH: keys of .scatterfs/stats joined by '.')" "${ok[@]}" --counter busy=devices..busy_ms
check "--counter reads: a column of that name is there already" "${ok[@]}" --counter reads=reads
check "--merge takes the sweep from its result files: --layouts, --load, --workload does not go with it (only --format, --plot, --workdir and --keep do)" "${ok[@]}" --merge "$T/afile"
check "--result FILE goes with --only KEY (the file of that configuration's result)" "${ok[@]}" --result "$T/r.json"
check "--jobs does not go with --dask: the cluster's workers decide what runs side by side" "${ok[@]}" --dask tcp://127.0.0.1:1 --jobs 2
check "give exactly one of --load CMD and --data DIR" --layouts contiguous --workload true --workdir "$work"
check "--param x: 1 given twice (each value is a row of its own)" "${ok[@]}" --param x=1,2,1
# paths checked before the sweep (they ended it in a traceback after: the
# plot's PNG on stdout, FileExistsError)
check "--plot $T/nodir/x.png: no directory $T/nodir to write it in" "${ok[@]}" --plot "$T/nodir/x.png"
: >"$T/plainfile"
check "--workdir $T/plainfile/w: not a directory this user can create or write (Not a directory)" \
	"${ok[@]}" --workdir "$T/plainfile/w"
check "--size 1GB: write 1G or 1GiB (powers of 1024); KB/MB/GB/TB are not accepted" "${ok[@]}" --size 1GB
check "--size 1.5G: not a size: no fractions (use a smaller unit: 1536M, not 1.5G)" "${ok[@]}" --size 1.5G
# and what the daemon accepts, bench/run does: 64MiB is 64 MiB
SCATTERFS_BUILD=$SFS_BUILD "$RUN" "${ok[@]}" --size 64MiB --runs 1 --format csv --keep >"$T/out" 2>"$T/err" </dev/null ||
	fail "bench/run --size 64MiB exited $?: $(cat "$T/err")"
kept=$(sed -n 's|^bench/run: kept ||p' "$T/err")
assert_eq "$(stat -c %s "$kept/config1/backing")" 67108864 "backing bytes of bench/run --size 64MiB"
rm -rf "$work"
note "pass"
