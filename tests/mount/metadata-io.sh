#!/bin/bash
# The allocation's metadata write under the disk model: the first write of a
# new file allocates one extent, which also costs one FUA write of one
# block at [disk] metadata_offset (here 512M of a 1 GiB disk, average
# rotation, no read-ahead, no zero-fill, so every term is known):
#   metadata: seek 512M from the head at 0 + half a revolution + 4 KiB;
#   the data write, write cache off: seek back to the extent + half a
#   revolution + 4 KiB; write cache on: into the cache (the FUA write did
#   not wait for it, the request waits for the FUA write).
# A second write into the same extent allocates nothing, and with
# metadata_io = false the first write costs only its own transfer.  The
# write rows' model_us is checked against the model's formula (to 1 us:
# the log truncates to whole microseconds).
source "$(dirname "$0")/../lib.sh"

B=$SFS_TMP/backing
M=$SFS_TMP/mnt
L=$SFS_TMP/log.csv
base="size=1G,cache.mode=none,autoextend.zero_fill=none,layout.extent_size=1M,disk.model=hdd,disk.rotation=average,disk.prefetch=0,disk.metadata_offset=512M,log=$L,log.ops=write"

# model_us FILE N - the model_us and device offset of the Nth write row
row() { sfs_log_awk "$1" -v n="$2" '$f_op == "write" && ++k == n { split($f_device_io, d, "+"); print $f_model_us, d[1] }' "$1"; }

# want_us WHAT DATA_OFFSET - the model's time in us (layout/models/hdd.c's
# formulas: 7,200 rpm, 1.0 / 8.5 / 18 ms, 150 MiB/s, capacity 1 GiB)
want_us() {
	awk -v what="$1" -v data="$2" 'function seek(d,   c, c3, t) {
			c = 1073741824; c3 = c / 3; t = 150 * 1048576 / 120
			if (d == 0) return 0
			if (d <= t) return 1e6
			if (d <= c3) return int(1e6 + 7.5e6 * (sqrt(d) - sqrt(t)) / (sqrt(c3) - sqrt(t)) + 0.5)
			return int(8.5e6 + 9.5e6 * (d - c3) / (c - c3) + 0.5)
		}
		BEGIN {
			half = 4166667; x = 26042; meta = 536870912
			m = seek(meta) + half + x
			back = seek(meta + 4096 - data) + half + x
			if (what == "off") ns = m + back
			else if (what == "on") ns = m
			else ns = (data == 0 ? 0 : seek(data) + half) + x
			print int(ns / 1000)
		}'
}

close_to() { # GOT WANT WHAT
	(($1 >= $2 - 1 && $1 <= $2 + 1)) || fail "$3: model_us $1, the formula gives $2"
	note "$3: model_us $1 (formula $2)"
}

for wc in false true; do
	rm -f "$B" "$B.scatterfs" "$L"
	sfs_mount "$B" "$M" "$base,disk.write_cache=$wc"
	dd if=/dev/zero of="$M/f" bs=4k count=1 oflag=direct status=none
	dd if=/dev/zero of="$M/f" bs=4k count=1 seek=1 oflag=direct conv=notrunc status=none
	sfs_umount "$M"
	read -r got data < <(row "$L" 1)
	[[ -n $got ]] || fail "no write row in the log"
	close_to "$got" "$(want_us "$([[ $wc == true ]] && echo on || echo off)" "$data")" "first write, write cache $wc"
	read -r got2 _ < <(row "$L" 2)
	# No allocation: the head is at the first block's end (cache off: a
	# sequential write) or the write goes to the cache (link time, 13.66 us).
	((got2 < 100)) || fail "second write (no allocation), write cache $wc: model_us $got2"
done

rm -f "$B" "$B.scatterfs" "$L"
sfs_mount "$B" "$M" "$base,disk.write_cache=false,disk.metadata_io=false"
dd if=/dev/zero of="$M/f" bs=4k count=1 oflag=direct status=none
sfs_umount "$M"
read -r got data < <(row "$L" 1)
close_to "$got" "$(want_us none "$data")" "first write, metadata_io = false"
note "pass"
