#!/bin/bash
# The ssd disk model on a mount (layout/models/ssd.h):
#   - bad parameters are refused at mount with the key and the allowed range
#     (zero channels or ways, a page larger than a block can hold, that is
#     pages_per_block below 2, over-provisioning <= 0, queue depth 0) and so
#     is a capacity the geometry cannot hold (conf/ssd-nvme.ini's 96 dies on
#     a 64 MiB backing); nothing is mounted and neither the backing nor its
#     catalog changes;
#   - conf/ssd-sata.ini mounts; 8 MiB written with O_DIRECT in 1 MiB writes
#     and read back (the data intact) shows in the device's stats: the
#     model's name, host_pages_written 2048 (4 KiB pages; metadata_io off), reads with
#     read_dies_milli 32000 (each 1 MiB read spread over all 32 dies:
#     the file was written alone, in order), and the emulation floor's
#     modelled_replies;
#   - removing the file trims its pages: the model's trims counter grows;
#   - the flash layout score (layout/PATH and stats) and the log's dies and
#     collisions columns, with exact values on known write orders (below).
source "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt
B=$T/backing
R=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$M"
sfs_mount "$B" "$M" "size=64M"
echo data >"$M/file"
sfs_umount "$M"

state() { sha256sum "$B" "$B".scatterfs; }
refused() { # NAME REGEX OPTIONS
	local rc=0 before
	before=$(state)
	timeout 30 "$SFS_BIN" "$B" "$M" -o "$3" >/dev/null 2>"$T/$1.stderr" </dev/null || rc=$?
	((rc != 0 && rc != 124)) || fail "$1: exit $rc, expected a refusal"
	grep -Eq -- "$2" "$T/$1.stderr" || fail "$1: message does not match /$2/: $(cat "$T/$1.stderr")"
	! sfs_is_mounted "$M" || fail "$1: mounted"
	assert_eq "$(state)" "$before" "$1: backing and catalog after the refusal"
	note "$1 refused: $(head -c 300 "$T/$1.stderr")"
}
refused channels "channels = 0: allowed: 1 to 256" "disk.model=ssd,disk.channels=0"
refused ways "ways = 0: allowed: 1 to 256" "disk.model=ssd,disk.ways=0"
refused pages "pages_per_block = 1: allowed: 2 to 65535" "disk.model=ssd,disk.pages_per_block=1"
refused op "over_provisioning = 0: must be > 0" "disk.model=ssd,disk.over_provisioning=0"
refused qd "queue_depth = 0: allowed: 1 to 65535" "disk.model=ssd,disk.queue_depth=0"
refused capacity "model = ssd: capacity 67108864 bytes: .* leave .* spare, and garbage collection needs gc_free_blocks \+ 2" "config=$R/conf/ssd-nvme.ini"

rm -f "$B" "$B.scatterfs"
sfs_mount "$B" "$M" "size=256M,config=$R/conf/ssd-sata.ini,cache.mode=none,autoextend.zero_fill=none,disk.metadata_io=false"
head -c 8M /dev/urandom >"$T/data"
dd if="$T/data" of="$M/f" bs=1M oflag=direct status=none
dd if="$M/f" of="$T/back" bs=1M iflag=direct status=none
cmp "$T/data" "$T/back" || fail "the data read back differs"
read -r model host dies reads n < <(python3 -c 'import json, sys
s = json.load(open(sys.argv[1])); d = s["devices"]["main"]; t = d["timing"]
print(d["model"], t["host_pages_written"], t["read_dies_milli"], t["reads"], s["modelled_replies"])' "$M/.scatterfs/stats")
note "model $model: host_pages_written $host, reads $reads, read_dies_milli $dies, modelled_replies $n"
assert_eq "$model" ssd "the device's model"
assert_eq "$host" 2048 "host_pages_written after 8 MiB"
assert_eq "$reads" 8 "the model's reads"
assert_eq "$dies" 32000 "dies touched per 1 MiB read (thousandths)"
((n >= 16)) || fail "modelled_replies $n, expected at least 16"
# the flash layout score: f's 2048 pages were written in order, the k-th
# on die k mod 32, so every one of its 2047 neighbour pairs is on two dies
assert_eq "$(grep -o 'flash_pages=.*' "$M/.scatterfs/layout/f")" \
	"flash_pages=2048 flash_pairs=2047 flash_apart=2047 flash_score=1.000000" "layout/f's flash score"
read -r fs fp fa < <(python3 -c 'import json, sys
s = json.load(open(sys.argv[1])); print(s["flash_score"], s["flash_pairs"], s["flash_pairs_apart"])' "$M/.scatterfs/stats")
assert_eq "$fs $fp $fa" "1.0 2047 2047" "stats: flash_score flash_pairs flash_pairs_apart"
before=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["devices"]["main"]["timing"].get("trims", 0))' "$M/.scatterfs/stats")
rm "$M/f"
sync -f "$M" 2>/dev/null || sync
for _ in $(seq 50); do
	after=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["devices"]["main"]["timing"].get("trims", 0))' "$M/.scatterfs/stats")
	((after > before)) && break
	sleep 0.2
done
((after > before)) || fail "unlink: the model's trims stayed at $before"
note "unlink: the model's trims $before -> $after"
sfs_umount "$M"

# Two dies (1 channel x 2 ways), files g and h written interleaved one
# 4 KiB page each in turn (O_DIRECT, no page cache): the k-th page written
# goes to die k mod 2, so g's 8 pages are all on die 0 and h's on die 1:
# 7 pairs each, none apart, score 0; written alone afterwards, i's 8 pages
# alternate (writes 16-23: dies 0, 1, ...): 7 pairs, all apart.  The
# mount's score adds them up: 7 of 21.
rm -f "$B" "$B.scatterfs"
L=$T/flash.csv
sfs_mount "$B" "$M" "size=64M,config=$R/conf/ssd-sata.ini,disk.channels=1,disk.ways=2,cache.mode=none,autoextend.zero_fill=none,disk.metadata_io=false,layout.extent_size=1M,log=$L"
head -c 32K /dev/urandom >"$T/page8"
for i in $(seq 0 7); do
	dd if="$T/page8" of="$M/g" bs=4K skip="$i" seek="$i" count=1 conv=notrunc oflag=direct status=none
	dd if="$T/page8" of="$M/h" bs=4K skip="$i" seek="$i" count=1 conv=notrunc oflag=direct status=none
done
dd if="$T/page8" of="$M/i" bs=32K count=1 oflag=direct status=none
for f in g h; do
	assert_eq "$(grep -o 'flash_pages=.*' "$M/.scatterfs/layout/$f")" \
		"flash_pages=8 flash_pairs=7 flash_apart=0 flash_score=0.000000" "layout/$f (written interleaved)"
done
assert_eq "$(grep -o 'flash_pages=.*' "$M/.scatterfs/layout/i")" \
	"flash_pages=8 flash_pairs=7 flash_apart=7 flash_score=1.000000" "layout/i (written alone)"
read -r fp fa < <(python3 -c 'import json, sys
s = json.load(open(sys.argv[1])); print(s["flash_pairs"], s["flash_pairs_apart"])' "$M/.scatterfs/stats")
assert_eq "$fp $fa" "21 7" "stats: flash_pairs flash_pairs_apart of g, h and i"
note "interleaved: $(cat "$M/.scatterfs/layout/g")"
# The log's dies and collisions columns, one 32 KiB read (one device I/O
# of 8 pages) of each file: g's pages all on die 0, so 1 die and the 7
# pages after the first wait on it; i's alternate, so 2 dies, and pages
# 2-7 wait for the page two before them on their die: 6 collisions.
for f in g i; do dd if="$M/$f" of=/dev/null bs=32K count=1 iflag=direct status=none; done
cat "$M/.scatterfs/stats" >/dev/null
assert_eq "$(head -n 1 "$L" | grep -o 'model_us,dies,collisions$')" "model_us,dies,collisions" "the log's header"
for want in "g 1 7" "i 2 6"; do
	set -- $want
	assert_eq "$(sfs_log_rows "$L" read "$1" 32768 | sfs_log_awk "$L" '{ print $f_dies, $f_collisions }')" \
		"$2 $3" "read of $1: dies collisions"
done
sfs_umount "$M"
# without a model with dies, the layout line has no flash figures
sfs_mount "$B" "$M" "size=64M"
if grep -q flash "$M/.scatterfs/layout/g"; then fail "layout/g without a model: $(cat "$M/.scatterfs/layout/g")"; fi
if grep -q flash_score "$M/.scatterfs/stats"; then fail "stats without a model has flash_score"; fi
sfs_umount "$M"
note "pass"
