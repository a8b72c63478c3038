#!/bin/bash
# Sparse files (issue 16): with autoextend.sparse = true, a 4 KiB write at
# offset 3 GiB of an empty file on a 64 MiB device (1 MiB extents)
# succeeds and stores exactly one extent (logical 3 GiB, device 0, 1 MiB),
# the file is 3 GiB + 4 KiB with 2,048 sectors, the bytes read back, and
# the 3 GiB before them read as zeros (all of them, once); a later write at 1 MiB + 8 KiB fills
# only the hole's extent [1M, 2M).  Everything holds after a remount.  With
# the default (sparse = false, a datafile) the same write must grow the
# file from 0 to the write and fails with ENOSPC, changing nothing.
# TIMEOUT: 300
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

T=$SFS_TMP
M=$T/mnt
B=$T/backing
OPTS=size=64M,device.block_size=4K,layout.extent_size=1M,autoextend.sparse=true
G3=3221225472

# check PHASE [quick] - the file's map, size, sectors and bytes (quick: not
# the 3 GiB of zeros)
check() {
	assert_eq "$(sfs_extents "$M" f | tr '\n' ' ')" \
		"logical_offset,device_offset,length 1048576,1048576,1048576 $G3,0,1048576 " "$1: extents of f"
	assert_eq "$(stat -c '%s %b' "$M/f")" "$((G3 + 4096)) 4096" "$1: size and sectors of f"
	assert_eq "$(sfs_stats "$M" used_bytes)" 2097152 "$1: used_bytes"
	cmp <(tail -c 4096 "$M/f") <(head -c 4096 /dev/zero | tr '\0' s) || fail "$1: the 4 KiB at 3 GiB"
	cmp <(dd if="$M/f" bs=4096 skip=$((1048576 / 4096 + 2)) count=1 status=none) \
		<(head -c 4096 /dev/zero | tr '\0' h) || fail "$1: the 4 KiB at 1 MiB + 8 KiB"
	cmp -n $((1048576 + 8192)) "$M/f" /dev/zero || fail "$1: the bytes before 1 MiB + 8 KiB are not zeros"
	[[ ${2:-} == quick ]] && return
	cmp -n $((G3 - 1048576 - 12288)) <(tail -c +$((1048576 + 12288 + 1)) "$M/f") /dev/zero ||
		fail "$1: the bytes from 1 MiB + 12 KiB to 3 GiB are not zeros"
}

sfs_mount "$B" "$M" "$OPTS"
head -c 4096 /dev/zero | tr '\0' s | dd of="$M/f" bs=4096 seek=$((G3 / 4096)) conv=notrunc status=none
assert_eq "$(sfs_extents "$M" f | tr '\n' ' ')" "logical_offset,device_offset,length $G3,0,1048576 " \
	"extents of f after the write at 3 GiB"
assert_eq "$(sfs_stats "$M" used_bytes)" 1048576 "used_bytes after the write at 3 GiB"
head -c 4096 /dev/zero | tr '\0' h | dd of="$M/f" bs=4096 seek=$((1048576 / 4096 + 2)) conv=notrunc status=none
check "sparse"
sfs_umount "$M"
sfs_mount "$B" "$M" "$OPTS"
check "after a remount" quick
sfs_umount "$M"

# The datafile default: the write needs 3 GiB + 1 MiB of device.
sfs_mount "$T/backing.datafile" "$M" size=64M,device.block_size=4K,layout.extent_size=1M
: >"$M/f"
if err=$(head -c 4096 /dev/zero | dd of="$M/f" bs=4096 seek=$((G3 / 4096)) conv=notrunc status=none 2>&1); then
	fail "datafile: a write at 3 GiB on a 64 MiB device succeeded"
fi
[[ $err == *"No space left on device"* ]] || fail "datafile: the write at 3 GiB failed with '$err', expected ENOSPC"
assert_eq "$(stat -c '%s %b' "$M/f")" "0 0" "datafile: size and sectors of f after the refused write"
assert_eq "$(sfs_stats "$M" used_bytes)" 0 "datafile: used_bytes after the refused write"
sfs_umount "$M"
