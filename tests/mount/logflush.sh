#!/bin/bash
# The log's completeness guarantee: once `cat .scatterfs/stats` has
# returned, every request answered before it is a row in the log file.
# 20 rounds, with no sleep: round i writes i blocks and reads them back
# (cache.mode=none, so each dd read() and write() is one request), reads
# stats, and counts the log's rows at once: exactly the requests so far,
# and exactly the stats' log_rows_written.  Twice: with reads answered by
# the worker thread, and with every read answered by the completion
# thread (device.direct, poll_us=0), which answers before it logs.
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
rounds completion ",device.direct=true,device.poll_us=0"
assert_eq "$ASYNC" 210 "completion: reads answered by the completion thread (async_reads)"
