#!/bin/bash
# EXCLUSIVE: it asserts rows in the log file within 50 ms (tests/run runs it alone)
# The log's completeness guarantee: once `cat .scatterfs/stats` has
# returned, every request answered before it is a row in the log file.
# 20 rounds, with no sleep: round i writes i blocks and reads them back
# (cache.mode=none, so each dd read() and write() is one request), reads
# stats, and counts the log's rows at once: exactly the requests so far,
# and exactly the stats' log_rows_written.  Twice: with reads answered by
# the worker thread, and with every read answered by the completion
# thread (device.direct, async_reads=always), which answers before it logs.
# Then without a stats read, on an idle mount: 20 single reads, each
# followed by polling the log file, and each row is in the file within
# 50 ms of the read's return (the writer writes once no row has come for
# 1 ms; it used to wait for its 100 ms period, so 20 rows within 50 ms
# would have been one chance in a million); and README's first example
# (sqlite3, the file's extents, scatterfs-report at once) reports every
# row the log holds at unmount, not "0 rows".
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

T=$SFS_TMP
M=$T/mnt

# rounds NAME OPTS - the 20 rounds on a new backing mounted with OPTS
rounds() {
	local name=$1 opts=$2 L=$T/$1.log want=0 i rows
	sfs_mount "$T/$name.backing" "$M" "size=64M,log=$L,log.ops=read:write,cache.mode=none$opts"
	for ((i = 1; i <= 20; i++)); do
		dd if=/dev/zero of="$M/f" bs=4096 count=$i conv=notrunc status=none || fail "$name: dd write, round $i"
		dd if="$M/f" of=/dev/null bs=4096 count=$i status=none || fail "$name: dd read, round $i"
		want=$((want + 2 * i))
		cat "$M/.scatterfs/stats" >/dev/null
		rows=$(($(wc -l <"$L") - 1))
		assert_eq "$rows" "$want" "$name: rows in the log right after reading stats, round $i"
		assert_eq "$(sfs_stats "$M" log_rows_written)" "$want" "$name: log_rows_written in stats, round $i"
	done
	assert_eq "$(sfs_log_count "$L" write f 4096)" 210 "$name: write rows of 4096 bytes"
	assert_eq "$(sfs_log_count "$L" read f 4096)" 210 "$name: read rows of 4096 bytes"
	ASYNC=$(sfs_stats "$M" async_reads)
	sfs_umount "$M"
	note "$name: 20 rounds, the log held every request's row when stats returned"
}

rounds worker ""
rounds completion ",device.direct=true,device.async_reads=always,transport=dev" # queued reads: /dev/fuse only
assert_eq "$ASYNC" 210 "completion: reads answered by the completion thread (async_reads)"

# idle: one read at a time, then the log file polled every 0.5 ms
sfs_require python3 sqlite3
L=$T/idle.log
sfs_mount "$T/idle.backing" "$M" "size=64M,log=$L,cache.mode=none"
head -c 1M /dev/urandom >"$M/f"
cat "$M/.scatterfs/stats" >/dev/null
python3 - "$M/f" "$L" <<'PY' || fail "idle: a row did not reach the log by itself in time"
import os, sys, time
path, log = sys.argv[1:3]
fd = os.open(path, os.O_RDONLY)
def rows():
    with open(log, "rb") as f:
        return f.read().count(b"\n") - 1
for i in range(20):
    time.sleep(0.02)
    before = rows()
    os.pread(fd, 4096, i * 4096)
    t0 = time.monotonic()
    while rows() == before:
        if time.monotonic() - t0 > 2:
            sys.exit(f"read {i + 1}: its row was not in the log after 2 s")
        time.sleep(0.0005)
    ms = (time.monotonic() - t0) * 1000
    print(f"read {i + 1}: its row in the log after {ms:.1f} ms", file=sys.stderr)
    if ms > 50:
        sys.exit(f"read {i + 1}: its row reached the log after {ms:.1f} ms, more than 50")
PY
sfs_umount "$M"
note "idle: every row in the log file within 50 ms of its read"

# README's first example, as it is written there
B=$T/readme.backing
L=$T/readme.csv
sfs_mount "$B" "$M" "size=1G,config=$SFS_ROOT/conf/equi-fragmented.ini,log=$L"
sqlite3 "$M/test.db" 'create table t(x); insert into t values (1);'
cat "$M/.scatterfs/extents/test.db" >/dev/null
first=$("$SFS_BUILD/bench/scatterfs-report" "$L" | head -n 1)
sfs_umount "$M"
n=$(($(wc -l <"$L") - 1))
((n > 0)) || fail "README's example logged no row"
assert_eq "$first" "scatterfs-report: $L: $n rows, $(sfs_log_awk "$L" 'NR > 1 { f[$f_path] = 1 } END { print length(f) }' "$L") files, ts_us $(sed -n 2p "$L" | cut -d, -f1) to $(sfs_log_awk "$L" 'NR > 1 && $f_ts_us > m { m = $f_ts_us } END { print m }' "$L")" \
	"README's example: the report's first line, right after the commands"
note "README's example: the report saw all $n rows"
