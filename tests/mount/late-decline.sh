#!/bin/bash
# A layer that declines to splice late (issue 25): build/tests/scatterfs-late
# has one more layer, "late" (tests/layer_late.c), which lets the first
# device run of each request splice and answers -EOPNOTSUPP for the others,
# after the I/O path chose to splice the reply.  Stacked as
# accounting,late,base, with 64 KiB extents and two files written in
# turns, so that each 128 KiB read of file a spans two runs that are not
# adjacent on the device; on /dev/fuse (transport=dev: a ring's replies
# are copied into its buffer, never spliced):
# - the 1 MiB read back equals what was written (no read fails);
# - every run is issued once: the device counts exactly 16 reads and
#   1048576 bytes (copying the whole reply again after the decline would
#   count 24 reads and 1572864 bytes: the spliced run twice), the layer let
#   8 runs splice and declined 8, and each read row of the request log
#   names exactly its two runs.
# TIMEOUT: 200
# shellcheck source=SCRIPTDIR/../lib.sh
SCATTERFS_BIN=${SCATTERFS_BUILD:-$(dirname "$0")/../../build}/tests/scatterfs-late
. "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt
L=$T/log.csv
K=65536

sfs_mount "$T/b" "$M" "size=64M,transport=dev,device.layers=accounting:late:base,layout.extent_size=64K,cache.mode=none,log=$L,log.ops=read"
head -c 1M /dev/urandom >"$T/a"
head -c 1M /dev/urandom >"$T/bb"
for ((i = 0; i < 16; i++)); do
	dd if="$T/a" of="$M/a" bs=64K skip=$i seek=$i count=1 conv=notrunc status=none
	dd if="$T/bb" of="$M/b" bs=64K skip=$i seek=$i count=1 conv=notrunc status=none
done
sync "$M/a" "$M/b"
# a's extents: every other 64 KiB of the device.
want=$(for ((i = 0; i < 16; i++)); do echo "$((i * K)),$((2 * i * K)),$K"; done)
assert_eq "$(sfs_extents "$M" a | tail -n +2 | cut -d, -f1-3)" "$want" "a's extents"

# stat - "read_ios read_bytes spliced declined" of device main
stat_main() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["devices"]["main"]
print(d["read_ios"], d["read_bytes"], d["late"]["spliced"], d["late"]["declined"])' "$M/.scatterfs/stats"
}
before=$(stat_main)
dd if="$M/a" of="$T/back" bs=128K status=none || fail "reading a through the late layer failed"
after=$(stat_main)
cmp "$T/a" "$T/back" || fail "a read back differs from what was written"
assert_eq "$(sfs_stats_delta "$before" "$after")" "16 1048576 8 8" \
	"device reads, bytes read, runs spliced and declined for 1 MiB in 128 KiB reads"

# Each read row of a names its two runs, once each (the read at the end of
# the file, which returns 0 bytes, has none).
rows=$(sfs_log_awk "$L" -v k=$K 'NR > 1 && $f_op == "read" && $f_path == "a" && $f_result > 0 {
	off = $f_offset / k
	want = (2 * off * k) "+" k ";" (2 * (off + 1) * k) "+" k
	print ($f_device_io == want ? "ok" : "bad " $f_offset " " $f_device_io) }' "$L" | sort | uniq -c | sed 's/^ *//')
assert_eq "$rows" "8 ok" "the read rows' device runs"
sfs_umount "$M"
note "pass: 16 runs read once each, 8 spliced, 8 copied after a late decline"
