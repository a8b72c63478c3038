#!/bin/bash
# The ssd model's FTL outlives a clean unmount, as a real drive's mapping
# table does: the timing layer writes it beside the catalog
# (BACKING.scatterfs.ftl.main) and reads it back at the next mount.  Two
# dies (1 channel x 2 ways), g and h written interleaved one 4 KiB page
# each in turn (g's 8 pages all on die 0, h's on die 1), then i alone
# (its pages alternate), as tests/mount/ssd.sh does; after a remount:
#   - layout/g, layout/h and layout/i give the same flash scores (0, 0, 1);
#   - a 32 KiB read of g touches 1 die with 7 collisions, as before;
#   - the model's counters continue: host_pages_written 24 before, and
#     24 + 8 after writing i again (the map's pages, not a fresh drive's);
#   - a damaged state file (one byte flipped) and one of another geometry
#     (ways = 4) are discarded with one line naming the file and why, the
#     mount goes on with a new drive and the files' bytes are intact;
#   - a new catalog does not read a state file left beside it.
source "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt
B=$T/backing
S=$B.scatterfs.ftl.main
R=$(cd "$(dirname "$0")/../.." && pwd)
opts="size=64M,config=$R/conf/ssd-sata.ini,disk.channels=1,disk.ways=2,cache.mode=none,autoextend.zero_fill=none,disk.metadata_io=false,layout.extent_size=1M"
L=$T/flash.csv

score() { grep -o 'flash_pages=.*' "$M/.scatterfs/layout/$1"; }
hostpages() {
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["devices"]["main"]["timing"]["host_pages_written"])' "$M/.scatterfs/stats"
}
# read32 F - one 32 KiB O_DIRECT read of F: its dies and collisions from the log
read32() {
	dd if="$M/$1" of=/dev/null bs=32K count=1 iflag=direct status=none
	cat "$M/.scatterfs/stats" >/dev/null
	sfs_log_rows "$L" read "$1" 32768 | sfs_log_awk "$L" '{ print $f_dies, $f_collisions }' | tail -n 1
}
apart0="flash_pages=8 flash_pairs=7 flash_apart=0 flash_score=0.000000"
apart7="flash_pages=8 flash_pairs=7 flash_apart=7 flash_score=1.000000"

sfs_mount "$B" "$M" "$opts,log=$L"
head -c 32K /dev/urandom >"$T/page8"
for i in $(seq 0 7); do
	dd if="$T/page8" of="$M/g" bs=4K skip="$i" seek="$i" count=1 conv=notrunc oflag=direct status=none
	dd if="$T/page8" of="$M/h" bs=4K skip="$i" seek="$i" count=1 conv=notrunc oflag=direct status=none
done
dd if="$T/page8" of="$M/i" bs=32K count=1 oflag=direct status=none
assert_eq "$(score g) | $(score h) | $(score i)" "$apart0 | $apart0 | $apart7" "flash scores before the remount"
assert_eq "$(read32 g)" "1 7" "read of g before the remount: dies collisions"
assert_eq "$(hostpages)" 24 "host_pages_written before the remount"
sfs_umount "$M"
[[ -s $S ]] || fail "no FTL state file $S after the unmount"

sfs_mount "$B" "$M" "$opts,log=$L"
grep -q "state" "${SFS_DLOG[$M]}" && fail "the remount wrote a message: $(cat "${SFS_DLOG[$M]}")"
assert_eq "$(score g) | $(score h) | $(score i)" "$apart0 | $apart0 | $apart7" "flash scores after the remount"
assert_eq "$(read32 g)" "1 7" "read of g after the remount: dies collisions"
assert_eq "$(hostpages)" 24 "host_pages_written after the remount"
dd if="$T/page8" of="$M/i" bs=32K count=1 conv=notrunc oflag=direct status=none
assert_eq "$(hostpages)" 32 "host_pages_written after writing i again"
sfs_umount "$M"

# damaged: one byte of the map flipped; the checksum refuses it
python3 -c 'import sys
f = open(sys.argv[1], "r+b"); f.seek(-100, 2); b = f.read(1); f.seek(-100, 2); f.write(bytes([b[0] ^ 0xff]))' "$S"
sfs_mount "$B" "$M" "$opts"
assert_eq "$(grep -c "the disk model's state $S is discarded: checksum" "${SFS_DLOG[$M]}")" 1 \
	"the message for a damaged state file ($(cat "${SFS_DLOG[$M]}"))"
assert_eq "$(hostpages)" 0 "host_pages_written of the new drive"
cmp "$M/g" "$T/page8" && cmp "$M/h" "$T/page8" && cmp "$M/i" "$T/page8" || fail "the files' bytes after the discard"
sfs_umount "$M"
# another geometry: 4 dies
sfs_mount "$B" "$M" "$opts,disk.ways=4"
assert_eq "$(grep -c "the disk model's state $S is discarded: written for another drive" "${SFS_DLOG[$M]}")" 1 \
	"the message for another geometry's state file ($(cat "${SFS_DLOG[$M]}"))"
cmp "$M/g" "$T/page8" || fail "g's bytes after the discard"
sfs_umount "$M"
# a new catalog beside an old state file starts a new drive, silently
rm -f "$B" "$B.scatterfs"
sfs_mount "$B" "$M" "$opts,disk.ways=4"
grep -q "state" "${SFS_DLOG[$M]}" && fail "a new catalog read the old state file: $(cat "${SFS_DLOG[$M]}")"
assert_eq "$(hostpages)" 0 "host_pages_written on a new catalog"
sfs_umount "$M"
note "pass"
