#!/bin/bash
# TIMEOUT: 120
# Writes reach an O_DIRECT device without a copy (issue 17): the daemon's
# own request loop (fs/loop.c) reads each request so that a WRITE's data
# starts on a page boundary, so whole-block writes skip the aligned bounce
# buffer.  Counted with .scatterfs/stats writes_bounced, on a mount with
# device.direct = true:
# - 16 O_DIRECT writes of 1 MiB and 16 of 8 KiB at block-aligned offsets:
#   0 bounced, on /dev/fuse and on the ring (libfuse's loop, which
#   -o clone_fd still uses on /dev/fuse, put the data
#   96 bytes into a page: all 32 bounced, checked last);
# - one write of 1,000 bytes at offset 100: 1 bounced (not whole blocks);
# and every byte reads back as written, through a remount.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt
B=$T/backing
opts="size=256M,layout.pattern=contiguous,device.direct=true,cache.mode=none"

# writes PATH: the 32 aligned O_DIRECT writes (1 MiB, then 8 KiB) from a
# page-aligned buffer, each block filled with its own byte
writes() {
	python3 - "$1" <<'EOF'
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY | os.O_DIRECT, 0o644)
buf = mmap.mmap(-1, 1 << 20)
for i in range(16):
    buf[:] = bytes([i + 1]) * (1 << 20)
    assert os.pwritev(fd, [buf], i << 20) == 1 << 20
small = mmap.mmap(-1, 8192)
for i in range(16):
    small[:] = bytes([0x80 + i]) * 8192
    assert os.pwritev(fd, [small], (16 << 20) + i * 8192) == 8192
os.close(fd)
EOF
}

# check PATH: the bytes of writes(), then the unaligned write's
check() {
	python3 - "$1" <<'EOF'
import sys
d = open(sys.argv[1], "rb").read()
want = bytearray()
for i in range(16):
    want += bytes([i + 1]) * (1 << 20)
for i in range(16):
    want += bytes([0x80 + i]) * 8192
want[100:1100] = b"u" * 1000
if d != bytes(want):
    bad = next(i for i in range(min(len(d), len(want))) if d[i] != want[i]) if len(d) == len(want) else -1
    sys.exit("content differs (length %d, want %d; first difference at %d)" % (len(d), len(want), bad))
EOF
}

# bounced_by_writes WHAT: writes() on $M/f; prints how many bounced
bounced_by_writes() {
	local b0 b1
	b0=$(sfs_stats "$M" writes_bounced)
	writes "$M/f" || fail "the aligned O_DIRECT writes ($1)"
	b1=$(sfs_stats "$M" writes_bounced)
	note "32 aligned O_DIRECT writes ($1): $((b1 - b0)) bounced" >&2
	echo $((b1 - b0))
}

sfs_mount "$B" "$M" "$opts"
assert_eq "$(bounced_by_writes "scatterfs's loop")" 0 "writes_bounced after 16 aligned 1 MiB and 16 aligned 8 KiB O_DIRECT writes"
b1=$(sfs_stats "$M" writes_bounced)
python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
assert os.pwrite(fd, b"u" * 1000, 100) == 1000
os.close(fd)' "$M/f" || fail "the unaligned write"
b2=$(sfs_stats "$M" writes_bounced)
assert_eq "$((b2 - b1))" 1 "writes_bounced after one 1,000-byte write at offset 100"
check "$M/f" || fail "content before the remount"
sfs_umount "$M"
sfs_mount "$B" "$M" "$opts"
check "$M/f" || fail "content after the remount"
sfs_umount "$M"

# The cause, shown: libfuse's own loop (-o clone_fd) bounces every write.
# That is /dev/fuse's loop: on the ring (SCATTERFS_TRANSPORT=uring) a
# WRITE's data lands page-aligned whatever the loop.
rm -f "$B" "$B.scatterfs"*
sfs_mount "$B" "$M" "$opts,clone_fd,transport=dev"
assert_eq "$(bounced_by_writes "libfuse's loop, clone_fd")" 32 "writes_bounced under libfuse's loop (clone_fd)"
sfs_umount "$M"
