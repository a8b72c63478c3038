#!/bin/bash
# EXCLUSIVE: it asserts replies within a millisecond of their modelled end (tests/run runs it alone)
# The emulation floor in .scatterfs/stats: every reply to a request a disk
# model timed counts in modelled_replies; late_replies counts those that
# left after their modelled completion, late_p50_us and late_p99_us say by
# how much.  Ten 4 KiB O_DIRECT writes and ten reads:
#   - no model: nothing counts;
#   - the hdd model as it ships (milliseconds per I/O): all 20 count, and
#     the median reply leaves within a millisecond of its modelled end;
#   - an hdd model that takes nanoseconds (no seek, 10^7 rpm, 10^6 MiB/s):
#     the backing's own read or write takes longer, so every reply is late.
source "$(dirname "$0")/../lib.sh"
sfs_require python3

B=$SFS_TMP/backing
M=$SFS_TMP/mnt
base="size=256M,cache.mode=none,autoextend.zero_fill=none"
fast="disk.model=hdd,disk.rpm=10000000,disk.seek_track_ms=0,disk.seek_avg_ms=0,disk.seek_full_ms=0,disk.transfer_mib_s=1000000,disk.write_cache=false,disk.metadata_io=false"

io20() {
	for i in $(seq 0 9); do
		dd if=/dev/urandom of="$M/f" bs=4k count=1 seek="$i" oflag=direct conv=notrunc status=none
	done
	for i in $(seq 0 9); do
		dd if="$M/f" of=/dev/null bs=4k count=1 skip="$i" iflag=direct status=none
	done
}

for run in none hdd fast; do
	rm -f "$B" "$B.scatterfs"
	case $run in
	none) opts=$base ;;
	hdd) opts="$base,disk.model=hdd" ;;
	fast) opts="$base,$fast" ;;
	esac
	sfs_mount "$B" "$M" "$opts"
	io20
	read -r n late p50 p99 < <(sfs_stats "$M" modelled_replies late_replies late_p50_us late_p99_us)
	sfs_umount "$M"
	note "$run: modelled_replies $n, late_replies $late, late p50 $p50 us, p99 $p99 us"
	case $run in
	none) [[ "$n $late $p50 $p99" == "0 0 0 0" ]] || fail "no model: counted $n $late $p50 $p99" ;;
	hdd)
		((n == 20)) || fail "hdd: modelled_replies $n, expected 20"
		((late <= n && p50 <= p99)) || fail "hdd: late_replies $late, p50 $p50, p99 $p99"
		((p50 < 1000)) || fail "hdd: median reply $p50 us after its modelled end"
		;;
	fast)
		((n == 20 && late == 20)) || fail "fast model: $late of $n replies late, expected 20 of 20"
		((p50 <= p99)) || fail "fast model: p50 $p50 > p99 $p99"
		;;
	esac
done
note "pass"
