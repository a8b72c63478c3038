#!/bin/bash
# TIMEOUT: 120
# The experiments' bad options: each stops with exit status 2 and one
# line that names the option and the value, before anything is mounted.
# Sizes and lists go through one parser (bench/benchopts.py, from
# bench/lib.sh's bench_options): an empty item of any list option is refused (bench/scan
# and bench/blocksize once skipped it and ran the others), a size takes
# bytes or a K, M or G suffix; a --set of a key the experiment sets itself
# is refused by name; --jobs is a positive integer on all five, and
# --dask with --jobs above 1 gets bench/run's refusal.  No value option
# takes an empty value or another option; a --workdir too deep for
# PostgreSQL's socket is refused before anything is mounted; bench/scan's
# table takes a read size as the parser does (16k), and its text title
# says "1 timed run"; --plot takes .png or .svg in a directory that is
# there (the file's name may hold a quote); --help finds its synopsis
# through a link; --step names one of the script's steps; bench/cache
# checks its configurations before its sizing build.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

# refused WANT SCRIPT ARGS... - bench/SCRIPT ARGS exits 2 with WANT, one
# line, on stderr (the set-up of a built tree says nothing) and nothing on
# stdout
refused() {
	local want=$1 script=$2 rc=0
	shift 2
	SCATTERFS_BUILD=$SFS_BUILD TMPDIR=$SFS_TMP timeout 60 "$SFS_ROOT/bench/$script" "$@" \
		>"$SFS_TMP/out" 2>"$SFS_TMP/err" </dev/null || rc=$?
	assert_eq "$rc" 2 "exit status of bench/$script $*"
	assert_eq "$(tail -n 1 "$SFS_TMP/err")" "$want" "bench/$script $*"
	assert_eq "$(wc -l <"$SFS_TMP/err")" 1 "lines on stderr of bench/$script $*"
	assert_eq "$(cat "$SFS_TMP/out")" "" "stdout of bench/$script $*"
}

refused "bench/scan: --read-sizes: an empty item in '16K,,32K'" scan --read-sizes 16K,,32K
refused "bench/scan: --read-sizes: an empty item in '16K,'" scan --read-sizes 16K,
refused "bench/scan: --read-sizes: '0x' is not a size (bytes, or a K, M or G suffix)" scan --read-sizes 16K,0x
refused "bench/scan: --set cache.mode: the cache mode is --cache" scan --set cache.mode=none
# (it was ignored: the rows read "app" with no word)
refused "bench/scan: --read-sizes goes with --cache kernel (the mount's readahead): under --cache none the reads are the database's own (app)" \
	scan --cache none --read-sizes 16K
refused "bench/blocksize: --page-sizes: an empty item in '8K,,16K'" blocksize --page-sizes 8K,,16K
refused "bench/blocksize: --page-sizes: '3K' is not a SQLite page size (a power of two from 512 to 64K)" \
	blocksize --page-sizes 8K,3K
ra="is not a readahead: a multiple of 4 KiB up to 1M (the kernel's readahead is in pages; FUSE requests stop at 1 MiB)"
refused "bench/blocksize: --readahead: '6K' $ra" blocksize --readahead 6K
# (bench/scan ran bench/run, which named a --set cache.readahead the user never gave)
refused "bench/scan: --read-sizes: '3000' $ra" scan --read-sizes 16K,3000
refused "bench/scan: --read-sizes: '2M' $ra" scan --read-sizes 2M
refused "bench/blocksize: --jobs must be a positive integer (at most 999999999), not '0'" blocksize --jobs 0
refused "bench/cache: --cache-sizes: '1.5M' is neither a percentage (50%) nor a size (bytes, or a K, M or G suffix)" \
	cache --cache-sizes 50%,1.5M
refused "bench/cache: --cache-sizes: an empty value" cache --cache-sizes ''
# (50 was 50 bytes, silently the database's least cache)
refused "bench/cache: --cache-sizes: '50' is 50 bytes, less than one 8192-byte page (a percentage of the working set takes %: 50%)" \
	cache --cache-sizes 50%,50
refused "bench/autoextend: --steps: '1500K' is not a whole number of MiB" autoextend --steps 1M,1500K
refused "bench/autoextend: --volumes: an empty item in '50M,'" autoextend --volumes 50M,
refused "bench/autoextend: --volumes: 'x' is not a size (bytes, or a K, M or G suffix)" autoextend --volumes 2G,x
refused "bench/wal: --placements: an empty item in 'shared,'" wal --placements shared,
refused "bench/wal: --jobs must be a positive integer (at most 999999999), not 'two'" wal --jobs two
# every value option: no empty value (it once meant the default: --layouts ''
# ran the whole default sweep, --disk '' the default model), no option as
# a value, no number past the shell's arithmetic
refused "bench/autoextend: --layouts: an empty value" autoextend --layouts ''
refused "bench/wal: --layouts: an empty value" wal --layouts ''
refused "bench/scan: --disk: an empty value" scan --disk none --disk ''
refused "bench/scan: --dask: an empty value" scan --dask ''
refused "bench/blocksize: --baseline: an empty value" blocksize --baseline ''
refused "bench/cache: --layouts: an empty item in 'contiguous,,default'" cache --layouts contiguous,,default
refused "bench/scan: --plot needs a value, not the option '--rows' (see --help)" scan --plot --rows 2000
refused "bench/scan: --rows must be a positive integer (at most 999999999), not '99999999999999999999'" \
	scan --rows 99999999999999999999
# the keys an experiment sets itself
refused "bench/cache: --set log.ops: the builds log read, write and extend (the reads and writes columns count them)" \
	cache --set log.ops=read
refused "bench/autoextend: --set autoextend.zero_fill: the zero-fill mode is --zero-fill" \
	autoextend --set autoextend.zero_fill=none
refused "bench/cache: --set cache.mode: the builds run in cache.mode=none, where every read the database issues reaches the log" \
	cache --set cache.mode=kernel
refused "bench/autoextend: --set autoextend.next: the growth step is --steps (each row's extent size and autoextend.next)" \
	autoextend --set autoextend.next=2M
refused "bench/autoextend: --set layout.extent_size: each row's extent size is its step (--steps)" \
	autoextend --set layout.extent_size=2M
# a --workdir that cannot be a directory (it went on in the default one)
: >"$SFS_TMP/afile"
refused "bench/scan: --workdir $SFS_TMP/afile: not a directory this user can create or write" \
	scan --disk none --workdir "$SFS_TMP/afile"
# bench/scale: an option of the other benchmark (it was ignored)
refused "bench/scale: --capacity needs --model ssd" scale --capacity 1G
refused "bench/scale: --ops needs --model ssd" scale --ops 100
refused "bench/scale: --extents is the extent benchmark's (without --model ssd)" scale --model ssd --extents 1000
# a list item given twice (two identical rows, the first with the second as
# its baseline): refused in every list, as --layouts already was
refused "bench/scan: --read-sizes: '16K' given twice in '16K,32K,16K'" scan --read-sizes 16K,32K,16K
refused "bench/autoextend: --steps: '1M' given twice in '1M,1M'" autoextend --steps 1M,1M
refused "bench/cache: --cache-sizes: '50%' given twice in '50%,50%'" cache --cache-sizes 50%,50%
refused "bench/dirs: --counts: 100 given twice" dirs --counts 100,100
refused "bench/run: --set device.block_size: 512 given twice (each value is a row of its own)" \
	scan --set device.block_size=512,512 --disk none
# the steps bench/run runs are not for users
refused "bench/autoextend: --step load: one of the steps bench/run runs (SCATTERFS_MOUNT and SCATTERFS_JOB unset); not for users" \
	autoextend --step load
refused "bench/wal: --socket-dir goes with --step (bench/run's steps; not for users)" wal --socket-dir /tmp
refused "bench/wal: --step: no step 'scan' (one of: config load before workload after)" wal --step scan
# --plot draws PNG or SVG, on all four that plot (bench/scan, bench/cache
# and bench/blocksize once wrote a PNG into a .jpg)
for e in scan cache blocksize autoextend; do
	refused "bench/$e: --plot: the file must end in .png or .svg, not 'x.jpg'" "$e" --plot x.jpg
	# a directory that is not there: refused before the run (gnuplot once
	# failed after it, and wrote the PNG to stdout, into the table)
	refused "bench/$e: --plot: no directory $SFS_TMP/nodir to write $SFS_TMP/nodir/x.png in" "$e" --plot "$SFS_TMP/nodir/x.png"
done
# --help through a link of another name: the script's own synopsis
ln -s "$SFS_ROOT/bench/scan" "$SFS_TMP/myscan"
"$SFS_TMP/myscan" --help >"$SFS_TMP/help" || fail "myscan --help exited $?"
grep -q '^  bench/scan \[--rows N\]' "$SFS_TMP/help" || fail "bench/scan --help through a link has no synopsis: $(head -8 "$SFS_TMP/help")"

# past the options, bench/run's own check of --jobs against --dask
refused "bench/run: --jobs does not go with --dask: the cluster's workers decide what runs side by side" \
	blocksize --rows 1000 --dask tcp://127.0.0.1:9 --jobs 2
refused "bench/run: --dask nonsense: not a scheduler's address or file (missing port number in address 'nonsense')" \
	blocksize --rows 1000 --dask nonsense
# bench/cache: a layout bench/run refuses stops it before its sizing build
# (which it once ran first: a minute and more of PostgreSQL for a typo)
refused "bench/run: --set cache.readahead=bogus: option -o cache.readahead=bogus: [cache] readahead = bogus: not a size (use bytes or a K/M/G/T suffix)" \
	cache --engine postgres --set cache.readahead=bogus
! grep -q sizing "$SFS_TMP/err" || fail "bench/cache ran its sizing build before bench/run refused the --set: $(cat "$SFS_TMP/err")"
# a work directory too deep for PostgreSQL's socket: refused before the
# first mount (it failed each row, after initdb, once the server started)
deep=$SFS_TMP/$(printf 'd%.0s' {1..60})
mkdir -p "$deep"
for e in scan cache; do
	SCATTERFS_BUILD=$SFS_BUILD timeout 120 "$SFS_ROOT/bench/$e" --engine postgres --rows 1000 --layouts contiguous \
		--disk none --workdir "$deep" >"$SFS_TMP/out" 2>"$SFS_TMP/err" </dev/null && rc=0 || rc=$?
	assert_eq "$rc" 2 "exit status of bench/$e --engine postgres with a deep --workdir"
	grep -q "^bench/$e: --workdir: PostgreSQL's socket would be $deep/sfs-$e\..*, 1[0-9][0-9] bytes, more than the 107 a Unix socket's path may have: give a shorter --workdir (or TMPDIR)$" \
		"$SFS_TMP/err" || fail "bench/$e with a deep --workdir: $(tail -3 "$SFS_TMP/err")"
done
# a read size with a lower-case suffix, as the parser takes it, through
# the table step (which once parsed --read-sizes again, upper case only)
# (with a plot whose name has a quote: gnuplot once wrote it to the file
# "it", and nothing of gnuplot's may reach stdout, the table's)
SCATTERFS_BUILD=$SFS_BUILD TMPDIR=$SFS_TMP "$SFS_ROOT/bench/scan" --rows 2000 --runs 2 --read-sizes 16k \
	--layouts contiguous --disk none --format csv --plot "$SFS_TMP/it's.PNG" >"$SFS_TMP/out" 2>"$SFS_TMP/err" </dev/null ||
	fail "bench/scan --read-sizes 16k exited $?: $(tail -3 "$SFS_TMP/err")"
assert_eq "$(cut -d, -f1,2 "$SFS_TMP/out" | paste -sd' ')" "layout,read_size contiguous,16384" "bench/scan --read-sizes 16k"
assert_eq "$(head -c 8 "$SFS_TMP/it's.PNG" | od -An -tx1 | tr -d ' \n')" 89504e470d0a1a0a "the PNG signature of bench/scan --plot \"it's.PNG\""
# the text table's title counts the timed runs as English does (it once
# said "1 timed runs")
SCATTERFS_BUILD=$SFS_BUILD TMPDIR=$SFS_TMP "$SFS_ROOT/bench/scan" --rows 2000 --runs 2 --read-sizes 16K \
	--layouts contiguous --disk none >"$SFS_TMP/out" 2>"$SFS_TMP/err" </dev/null ||
	fail "bench/scan (text) exited $?: $(tail -3 "$SFS_TMP/err")"
[[ $(sed -n 2p "$SFS_TMP/out") == *"; 1 timed run after a discarded first; "* ]] ||
	fail "bench/scan --runs 2's title: $(sed -n 2p "$SFS_TMP/out")"
[[ -z $(findmnt -rn -t fuse.scatterfs -o TARGET | grep -F "$SFS_TMP") ]] || fail "a mount was left under $SFS_TMP"
note ok
