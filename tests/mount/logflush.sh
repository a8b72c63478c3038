#!/bin/bash
# The log's completeness guarantee: once `cat .scatterfs/stats` has
# returned, every request answered before it is a row in the log file.
# 20 rounds, with no sleep: round i writes i blocks and reads them back
# (cache.mode=none, so each dd read() and write() is one request), reads
# stats, and counts the log's rows at once: exactly the requests so far,
# and exactly the stats' log_rows_written.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

T=$SFS_TMP
M=$T/mnt
L=$T/req.log
sfs_mount "$T/backing" "$M" "size=64M,log=$L,log.ops=read:write,cache.mode=none"

want=0
for ((i = 1; i <= 20; i++)); do
	dd if=/dev/zero of="$M/f" bs=4096 count=$i conv=notrunc status=none || fail "dd write, round $i"
	dd if="$M/f" of=/dev/null bs=4096 count=$i status=none || fail "dd read, round $i"
	want=$((want + 2 * i))
	cat "$M/.scatterfs/stats" >/dev/null
	rows=$(($(wc -l <"$L") - 1))
	assert_eq "$rows" "$want" "rows in the log right after reading stats, round $i"
	assert_eq "$(sfs_stats "$M" log_rows_written)" "$want" "log_rows_written in stats, round $i"
done
assert_eq "$(sfs_log_count "$L" write f 4096)" 210 "write rows of 4096 bytes"
assert_eq "$(sfs_log_count "$L" read f 4096)" 210 "read rows of 4096 bytes"
note "20 rounds: the log held every request's row when stats returned"
sfs_umount "$M"
