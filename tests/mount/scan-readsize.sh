#!/bin/bash
# An experiment refuses to print a row measured at another read size than
# the one it asked for.  A layout whose [file] rule turns the page cache
# off for the table's file (mode = none) makes SQLite's 2 KiB page reads
# reach the log whatever the readahead: bench/scan --read-sizes 16K on
# contiguous and on that layout exits 1; contiguous's row is as always
# (dominant read size 16384); the other row is run twice (stderr says it
# redoes it, then that it failed, naming the row and both sizes each time) and its CSV row
# has no figures, only the error "dominant read size 2048 bytes where 16384
# was asked for (twice): the row is not printed" (bench/run --read-size
# readahead, which bench/scan is a definition over).  bench/blocksize on the
# same kind of layout (its table t.db) redoes the page size once
# (bench/run --read-size says so), then stops with exit status 1 and a
# message naming the page size and both read sizes.  A --set of
# cache.readahead or cache.mode, which would fight --read-sizes and --cache
# (or --readahead), is refused with exit status 2 before anything runs, as
# is bench/scan --plot (avg_s against the read size) with --cache none.
# TIMEOUT: 400
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require sqlite3

T=$SFS_TMP
printf 'include = %s\n\n[file "scan.db"]\nmode = none\n' "$SFS_ROOT/conf/contiguous.ini" >"$T/nocache.ini"
printf '[file "t.db"]\nmode = none\n' >"$T/nocache-t.ini"

out=$T/scan.csv
err=$T/scan.err
rc=0
SCATTERFS_BUILD=$SFS_BUILD "$SFS_ROOT/bench/scan" --rows 20000 --runs 2 --read-sizes 16K \
	--layouts "contiguous,$T/nocache.ini" --format csv >"$out" 2>"$err" </dev/null || rc=$?
sfs_add_log "$out"
sfs_add_log "$err"
cat "$out"
assert_eq "$rc" 1 "bench/scan's exit status with a row at the wrong read size"
assert_eq "$(head -n 1 "$out")" "layout,read_size,runs,first_s,min_s,avg_s,max_s,device_ios,dominant_read_size,vs_baseline,error" "CSV header"
assert_eq "$(wc -l <"$out")" 3 "lines (header and two rows)"
IFS=, read -r l rs runs _ _ _ _ _ dom ratio e <<<"$(sed -n 2p "$out")"
assert_eq "$l,$rs,$runs,$dom,$ratio,$e" "contiguous,16384,1,16384,1.00," "contiguous's row"
assert_eq "$(sed -n 3p "$out")" \
	"nocache,16384,,,,,,,,,dominant read size 2048 bytes where 16384 was asked for (twice): the row is not printed" \
	"the refused row"
grep -q '^bench/run \[..:..:..\] config 2/2 (nocache cache.readahead=16384 cache.mode=kernel): dominant read size 2048 bytes, asked for 16384; redoing its 2 runs once$' "$err" ||
	fail "stderr does not say the row is redone, naming the row and both sizes"
grep -q '^bench/run \[..:..:..\] config 2/2 (nocache cache.readahead=16384 cache.mode=kernel) FAILED: dominant read size 2048 bytes where 16384 was asked for (twice): the row is not printed$' "$err" ||
	fail "stderr does not say the row failed, naming the row and both sizes"
note "bench/scan: the row at 2048 bytes redone once, then refused"

out=$T/blocksize.csv
err=$T/blocksize.err
rc=0
SCATTERFS_BUILD=$SFS_BUILD "$SFS_ROOT/bench/blocksize" --rows 20000 --runs 1 --page-sizes 8192 \
	--layouts "$T/nocache-t.ini" --format csv >"$out" 2>"$err" </dev/null || rc=$?
sfs_add_log "$err"
assert_eq "$rc" 1 "bench/blocksize's exit status with a page size at the wrong read size"
# the table, its failed row in it (the table was dropped at a failed row,
# the good ones with it: only a FAIL line on stderr)
assert_eq "$(sed -n 2p "$out")" \
	"sqlite,8192,65536,20000,,,,,,,,,,,FAILED: dominant read size 8192 bytes where 65536 was asked for (twice): the row is not printed" \
	"bench/blocksize's failed row: the page size, the read size and why"
assert_eq "$(wc -l <"$out")" 2 "bench/blocksize's table: header and the row"
grep -q '^bench/run \[..:..:..\] config 1/1 (nocache-t .*page_size=8192): dominant read size 8192 bytes, asked for 65536; redoing its 1 runs once$' "$err" ||
	fail "bench/blocksize (bench/run --read-size) does not say the page size is redone: $(cat "$err")"
note "bench/blocksize: the page size at 8192-byte reads redone once, then refused"

for x in "scan --set cache.readahead=32K|--set cache.readahead: the read sizes are --read-sizes" \
	"scan --set cache.mode=none|--set cache.mode: the cache mode is --cache" \
	"scan --cache none --plot x.png|--plot draws avg_s against the read size: --cache none has one, app" \
	"blocksize --set cache.readahead=32K|--set cache.readahead: the read size is --readahead"; do
	cmd=${x%%|*} want=${x#*|}
	rc=0
	# shellcheck disable=SC2086 # the command line
	msg=$(SCATTERFS_BUILD=$SFS_BUILD "$SFS_ROOT"/bench/$cmd 2>&1 >/dev/null) || rc=$?
	assert_eq "$rc:$msg" "2:bench/${cmd%% *}: $want" "bench/$cmd"
done
note "pass"
