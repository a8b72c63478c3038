#!/bin/bash
# df -i follows the catalog's inodes, exactly (it never moved: f_files and
# f_ffree were constants).  Used = every inode (root, files, directories,
# symlinks, unlinked but open ones too), total = one per 16 KiB of every
# device (ext4's inode_ratio), or the used count when more, and free the
# difference; .scatterfs/stats' inodes and inodes_free say the same.
# Checked on one device, after creates, a removal, an unlinked open file,
# a remount, with a second device, and on a mount too small for its files.
source "$(dirname "$0")/../lib.sh"
sfs_require python3

M=$SFS_TMP/mnt

# df -i's inode columns of MNT as "total used free"
dfi() { df --output=itotal,iused,iavail "$1" | tail -n 1 | awk '{ print $1, $2, $3 }'; }

# expect_inodes WHAT TOTAL USED: df -i and stats, allowing 5 s for the
# kernel's FORGET of a removed file (queued at unlink(2), handled by
# another daemon thread).
expect_inodes() {
	local what=$1 total=$2 used=$3 t got
	for ((t = 0; t < 100; t++)); do
		got=$(dfi "$M")
		[[ $got == "$total $used $((total - used))" ]] && break
		sleep 0.05
	done
	assert_eq "$got" "$total $used $((total - used))" "$what: df -i total, used, free"
	assert_eq "$(sfs_stats "$M" inodes inodes_free)" "$used $((total - used))" \
		"$what: .scatterfs/stats inodes, inodes_free"
}

# --- one device of 64 MiB: 4,096 inodes -------------------------------------
B=$SFS_TMP/backing
sfs_mount "$B" "$M" "size=64M"
expect_inodes "empty" 4096 1
mkdir "$M/d1" "$M/d2" "$M/d1/sub"
for i in $(seq 1 100); do : >"$M/d1/f$i"; done
echo data >"$M/d2/g"
ln -s d2/g "$M/link"
ln "$M/d2/g" "$M/d2/hard" # a second name, no new inode
expect_inodes "3 directories, 101 files, 1 symlink" 4096 106
rm "$M"/d1/f{1..40}
rmdir "$M/d1/sub"
expect_inodes "40 files and a directory removed" 4096 65
# An unlinked file still open keeps its inode, as on ext4, until closed.
out=$(python3 - "$M" <<'PY'
import os, subprocess, sys, time
m = sys.argv[1]
fd = os.open(m + "/open", os.O_CREAT | os.O_WRONLY, 0o644)
os.unlink(m + "/open")
print(subprocess.run(["df", "--output=iused", m], capture_output=True, text=True).stdout.split()[-1])
os.close(fd)
PY
)
assert_eq "$out" 66 "df -i used while an unlinked file is open (65 + 1)"
expect_inodes "the unlinked file closed" 4096 65
sfs_umount "$M"
sfs_mount "$B" "$M" "size=64M"
expect_inodes "after a remount" 4096 65
sfs_umount "$M"

# --- two devices: main 64 MiB and wal 32 MiB, 6,144 inodes ------------------
B2=$SFS_TMP/backing2
printf '[device "wal"]\nbacking = %s\nsize = 32M\n[file "wal/*"]\ndevice = wal\n' "$SFS_TMP/wal.img" \
	>"$SFS_TMP/two.ini"
sfs_mount "$B2" "$M" "size=64M,config=$SFS_TMP/two.ini"
expect_inodes "two devices, empty" 6144 1
mkdir "$M/wal"
for i in $(seq 1 10); do echo "$i" >"$M/wal/seg$i"; done
for i in $(seq 1 5); do echo "$i" >"$M/main$i"; done
expect_inodes "two devices, 16 inodes more" 6144 17
sfs_umount "$M"

# --- 1 MiB: 64 inodes, more used than that ---------------------------------
B3=$SFS_TMP/backing3
sfs_mount "$B3" "$M" "size=1M"
expect_inodes "1 MiB, empty" 64 1
for i in $(seq 1 100); do : >"$M/f$i"; done
# The total follows the count; no create was refused.
expect_inodes "1 MiB, 100 files" 101 101
assert_eq "$(find "$M" -type f | wc -l)" 100 "files created on the 1 MiB mount"
sfs_umount "$M"
note ok
