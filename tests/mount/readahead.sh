#!/bin/bash
# cache.mode=kernel: the readahead size reaches the daemon.  A sequential
# dd of a 20 MiB file, cold, with cache.readahead=96K and 1M, gives read
# rows whose most common size is exactly the readahead size, also when the
# backing is O_DIRECT and when the disk model is on (both reply from a copy
# rather than from the backing's file descriptor: a reply that gifted its
# pages used to make the kernel read two pages at a time).
source "$(dirname "$0")/../lib.sh"

B=$SFS_TMP/backing
M=$SFS_TMP/mnt
# Written once per layout: the plain file, and one on 70 KiB random extents.
sfs_mount "$B" "$M" "size=256M"
head -c 20M /dev/urandom >"$M/f"
sfs_umount "$M"
sfs_mount "$B.frag" "$M" "size=256M,device.block_size=2K,layout.pattern=random,layout.extent_size=70K,autoextend.next=70K"
head -c 20M /dev/urandom >"$M/f"
sfs_umount "$M"

# dominant_read LOG - the most common size of the read rows of f
dominant_read() {
	sfs_log_awk "$1" 'NR > 1 && $f_op == "read" && $f_path == "f" { n[$f_size]++ } END { for (s in n) if (n[s] > c) { c = n[s]; d = s } print d }' "$1"
}

for variant in plain fragmented direct model; do
	for ra in 96K 1M; do
		case $variant in
		plain) extra= ;;
		# 70 KiB extents: replies of several device runs that end mid-page
		fragmented) extra=,layout.pattern=random,layout.extent_size=70K,autoextend.next=70K ;;
		direct) extra=,device.direct=true ;;
		model) extra=,disk.model=hdd,disk.transfer_mib_s=100000,disk.seek_track_ms=0,disk.seek_avg_ms=0,disk.seek_full_ms=0 ;;
		esac
		L=$SFS_TMP/$variant-$ra.csv
		backing=$B
		[[ $variant == fragmented ]] && backing=$B.frag extra=,device.block_size=2K$extra
		sfs_mount "$backing" "$M" "cache.mode=kernel,cache.readahead=$ra,log=$L$extra"
		sync
		echo 3 >/proc/sys/vm/drop_caches
		dd if="$M/f" of=/dev/null bs=2k status=none
		sfs_umount "$M"
		want=$((${ra%[KM]} * $([[ $ra == *M ]] && echo 1048576 || echo 1024)))
		assert_eq "$(dominant_read "$L")" "$want" "$variant, readahead $ra: most common read size; sizes:
$(sfs_log_summary "$L")
"
		note "$variant, readahead $ra: reads of $want"
	done
done
