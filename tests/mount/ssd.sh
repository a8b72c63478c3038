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
#   - removing the file trims its pages: the model's trims counter grows.
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
note "pass"
